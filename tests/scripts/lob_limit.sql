-- Values of the MAX types stop at 2^31 - 1 bytes (Msg 7119) in every function that can
-- build a larger one, before or as it passes the limit. nvarchar stores 2 bytes per
-- character: two 540-million-character values join to 2.16 GB. (Assignments rather than
-- SELECTs keep the script fast: a SELECT of a 1 GB value copies it more.)
DECLARE @a nvarchar(max) = REPLICATE(CAST(N'x' AS nvarchar(max)), 540000000), @b nvarchar(max);
SELECT LEN(@a) AS len_a, DATALENGTH(@a) AS bytes_a;
SET @b = REPLICATE(CAST(N'x' AS nvarchar(max)), 1100000000);
SET @b = @a + @a;
SET @b = CONCAT(@a, @a);
SET @b = CONCAT_WS(N',', @a, @a);
SET @b = STUFF(@a, 1, 0, @a);
SET @b = (SELECT STRING_AGG(@a, N',') FROM (VALUES (1), (2)) AS v(n));
SET @b = (SELECT @a AS x FROM (VALUES (1), (2)) AS v(n) FOR XML PATH(''));
SELECT @b AS still_null;
-- Under the limit, the same functions work.
SET @b = CONCAT(@a, N'y');
SELECT LEN(@b) AS concat_under;
SET @b = STUFF(@a, 1, 1, N'yy');
SELECT LEN(@b) AS stuff_under;
