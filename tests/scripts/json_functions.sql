-- JSON scalar functions: ISJSON, JSON_VALUE, JSON_QUERY, JSON_MODIFY, JSON_ARRAY.
-- Long results are printed (sqlcmd-style output pads nvarchar(4000) columns).
DECLARE @j nvarchar(max) = N'{"id": 7, "name": "Ann \"A\" Lee", "tags": ["x", "y"], "addr": {"town": "Bristol", "zip": null}, "ok": true, "n": 1.50}';
SELECT ISJSON(@j) AS obj, ISJSON('[1,2]') AS arr, ISJSON('abc') AS bad, ISJSON('123') AS scalar_default,
       ISJSON('123', SCALAR) AS scalar, ISJSON('true', VALUE) AS val, ISJSON('{"a":1}', ARRAY) AS not_array, ISJSON(NULL) AS nul;
PRINT CONCAT('id=', JSON_VALUE(@j, '$.id'), ' name=', JSON_VALUE(@j, '$.name'), ' tag1=', JSON_VALUE(@j, '$.tags[1]'),
             ' town=', JSON_VALUE(@j, 'lax $.addr.town'), ' ok=', JSON_VALUE(@j, '$.ok'), ' n=', JSON_VALUE(@j, '$.n'));
SELECT CASE WHEN JSON_VALUE(@j, '$.addr.zip') IS NULL THEN 'null' END AS zip,
       CASE WHEN JSON_VALUE(@j, '$.missing') IS NULL THEN 'null' END AS missing,
       CASE WHEN JSON_VALUE(@j, '$.addr') IS NULL THEN 'null' END AS addr_object,
       CASE WHEN JSON_QUERY(@j, '$.id') IS NULL THEN 'null' END AS query_scalar;
PRINT JSON_QUERY(@j, '$.tags');
PRINT JSON_QUERY(@j, '$.addr');
PRINT JSON_QUERY('[1, {"a": 2}]');
PRINT JSON_VALUE(N'{"a b": {"c": [10, 20]}}', '$."a b".c[1]');
PRINT JSON_VALUE(N'{"s": "tab\there \u00e9 \ud83d\ude00"}', '$.s');
-- a variable path (SQL Server 2017+)
DECLARE @p nvarchar(100) = N'$.addr.town';
PRINT JSON_VALUE(@j, @p);
-- JSON in a table
CREATE TABLE docs (id int PRIMARY KEY, doc nvarchar(max));
INSERT INTO docs VALUES (1, N'{"kind":"a","qty":3}'), (2, N'{"kind":"b","qty":5}'), (3, N'not json');
SELECT id, CAST(JSON_VALUE(doc, '$.kind') AS varchar(5)) AS kind, CAST(JSON_VALUE(doc, '$.qty') AS int) * 2 AS qty2
FROM docs WHERE ISJSON(doc) = 1 ORDER BY id;
-- JSON_MODIFY: update, insert, delete (NULL in lax mode), append, strict NULL, JSON_QUERY value
DECLARE @m nvarchar(max) = N'{"name":"John","skills":["C#","SQL"]}';
PRINT JSON_MODIFY(@m, '$.name', 'Mike');
PRINT JSON_MODIFY(@m, '$.surname', 'Smith');
PRINT JSON_MODIFY(@m, '$.name', NULL);
PRINT JSON_MODIFY(@m, '$.skills', NULL);
PRINT JSON_MODIFY(@m, 'append $.skills', 'Azure');
PRINT JSON_MODIFY(@m, 'append $.langs', 'en');
PRINT JSON_MODIFY(@m, 'strict $.name', NULL);
PRINT JSON_MODIFY(@m, '$.skills', JSON_QUERY('["C++","Rust"]'));
PRINT JSON_MODIFY(@m, '$.skills', '["C++"]');
PRINT JSON_MODIFY(JSON_MODIFY(@m, '$.age', 30), '$.active', CAST(1 AS bit));
PRINT JSON_MODIFY(@m, '$.skills[0]', 'F#');
PRINT JSON_ARRAY(1, 'two', NULL, CAST(0 AS bit), 2.50);
PRINT STRING_ESCAPE(N'a"b/c' + CHAR(10), 'json');
-- errors: bad text (13609, even in lax mode), strict paths (13608, 13623, 13624), bad
-- paths (13607)
PRINT JSON_VALUE(N'{"a":}', '$.a');
PRINT JSON_VALUE(N'{"a":1}', 'strict $.b');
PRINT JSON_VALUE(N'{"a":{"b":1}}', 'strict $.a');
PRINT JSON_QUERY(N'{"a":1}', 'strict $.a');
PRINT JSON_VALUE(N'{"a":1}', '$.a b');
PRINT JSON_VALUE(N'{"a":1}', 'a');
PRINT JSON_MODIFY(N'{"a":1}', 'strict $.b', 1);
PRINT JSON_VALUE(N'[1,2', '$[0]');
PRINT JSON_VALUE(N'{"a":1} x', '$.a');
SELECT COUNT(*) AS n FROM docs WHERE JSON_VALUE(doc, '$.kind') = 'a';
