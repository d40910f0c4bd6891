-- JSON_OBJECT (SQL Server 2022) and JSON_ARRAY's ON NULL clause: values are written as
-- FOR JSON writes them; nested JSON_OBJECT / JSON_ARRAY / JSON_QUERY values are embedded
-- as JSON, not as strings; keys are expressions.
PRINT JSON_OBJECT();
PRINT JSON_OBJECT('a':1, 'b':N'x', 'c':NULL);
PRINT JSON_OBJECT('name':'value', 'type':NULL ABSENT ON NULL);
PRINT JSON_OBJECT('name':'value', 'type':NULL NULL ON NULL);
PRINT JSON_OBJECT('a':NULL, 'b':NULL ABSENT ON NULL);
PRINT JSON_OBJECT(ABSENT ON NULL);
PRINT JSON_OBJECT('name':'value', 'type':JSON_ARRAY(1, 2));
PRINT JSON_OBJECT('o':JSON_OBJECT('x':1, 'y':JSON_OBJECT()), 'q':JSON_QUERY(N'{"z":[1]}'));
PRINT JSON_OBJECT('bit':CAST(1 AS bit), 'dec':2.50, 'date':CAST('2024-01-02' AS date), 'esc':N'a"b/c');
PRINT JSON_ARRAY(1, NULL, 'x' NULL ON NULL);
PRINT JSON_ARRAY(1, NULL, 'x' ABSENT ON NULL);
PRINT JSON_ARRAY(JSON_OBJECT('a':1), JSON_ARRAY(), JSON_ARRAY(NULL NULL ON NULL));
-- keys and values from expressions and columns
DECLARE @k nvarchar(10) = N'key';
PRINT JSON_OBJECT(@k + N'1':LEN(@k), CONCAT('k', 2):UPPER(@k));
CREATE TABLE #people (id int, name nvarchar(20), town nvarchar(20) NULL);
INSERT INTO #people VALUES (1, N'Ann', N'Bristol'), (2, N'Bob', NULL);
SELECT id, JSON_OBJECT('id':id, 'name':name, 'town':town) AS j,
       JSON_OBJECT('name':name, 'town':town ABSENT ON NULL) AS a
FROM #people ORDER BY id;
-- the result is nvarchar(max) JSON: JSON functions and FOR JSON read it as JSON
SELECT JSON_OBJECT('a':1) AS j INTO #jt;
SELECT TYPE_NAME(system_type_id) AS t, max_length FROM tempdb.sys.columns WHERE object_id = OBJECT_ID('tempdb..#jt');
SELECT ISJSON(JSON_OBJECT('a':JSON_ARRAY(1))) AS ok,
       JSON_VALUE(JSON_OBJECT('a':JSON_OBJECT('b':42)), '$.a.b') AS b;
PRINT JSON_MODIFY(N'{"x":1}', '$.y', JSON_OBJECT('z':2));
SELECT JSON_OBJECT('id':id) AS o FROM #people ORDER BY id FOR JSON PATH;
-- a nested call inside a non-constant expression
SELECT JSON_OBJECT('p':JSON_OBJECT('id':id, 'tags':JSON_ARRAY(name, town))) AS j FROM #people ORDER BY id;
GO
-- syntax errors: a pair without its colon, a clause in the wrong place
PRINT JSON_OBJECT('a', 1);
GO
PRINT JSON_OBJECT('a':1 ABSENT ON NULL, 'b':2);
GO
-- A NULL key is 13638, also with ABSENT ON NULL and a NULL value, also from a column.
PRINT JSON_OBJECT(NULL:1);
GO
PRINT JSON_OBJECT('a':1, NULL:NULL ABSENT ON NULL);
GO
SELECT JSON_OBJECT(town:id) AS j FROM #people ORDER BY id;
GO
SELECT JSON_OBJECT(ISNULL(town, 'none'):id) AS j FROM #people ORDER BY id;
GO
DROP TABLE #people;
