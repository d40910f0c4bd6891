-- Values of the MAX types stop at 2^31 - 1 bytes (Msg 7119) in every function that can
-- build a larger one, before or as it passes the limit. nvarchar stores 2 bytes per
-- character: two 540-million-character values join to 2.16 GB.
DECLARE @a nvarchar(max) = REPLICATE(CAST(N'x' AS nvarchar(max)), 540000000);
SELECT LEN(@a) AS len_a, DATALENGTH(@a) AS bytes_a;
SELECT LEN(REPLICATE(CAST(N'x' AS nvarchar(max)), 1100000000)) AS replicate_past;
SELECT LEN(@a + @a) AS plus_past;
SELECT LEN(CONCAT(@a, @a)) AS concat_past;
SELECT LEN(CONCAT_WS(N',', @a, @a)) AS concat_ws_past;
SELECT LEN(STUFF(@a, 1, 0, @a)) AS stuff_past;
SELECT LEN(STRING_AGG(@a, N',')) AS string_agg_past FROM (VALUES (1), (2)) AS v(n);
SELECT LEN((SELECT @a AS x FROM (VALUES (1), (2)) AS v(n) FOR XML PATH(''))) AS for_xml_past;
-- Under the limit, the same functions work.
SELECT LEN(CONCAT(@a, N'y')) AS concat_under, LEN(STUFF(@a, 1, 1, N'yy')) AS stuff_under;
