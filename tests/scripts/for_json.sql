-- OPENJSON (default and explicit schema, CROSS APPLY) and SELECT ... FOR JSON.
DECLARE @j nvarchar(max) = N'{"name":"John","age":45,"ok":true,"none":null,"tags":["a","b"],"addr":{"town":"Bristol"}}';
SELECT CAST([key] AS nvarchar(10)) AS [key], CAST(value AS nvarchar(30)) AS value, type FROM OPENJSON(@j);
SELECT CAST([key] AS nvarchar(10)) AS [key], CAST(value AS nvarchar(10)) AS value, type FROM OPENJSON(@j, '$.tags');
SELECT COUNT(*) AS missing_lax FROM OPENJSON(@j, '$.nothing');
SELECT COUNT(*) AS null_input FROM OPENJSON(NULL);
DECLARE @orders nvarchar(max) = N'[
  {"id": 1, "customer": "Ann", "total": 12.50, "paid": true, "items": [{"sku": "x"}], "ship": {"town": "Leeds"}},
  {"id": 2, "customer": "Bob", "total": 7, "paid": false, "ship": {"town": "York"}}
]';
SELECT id, customer, total, paid, town, CAST(items AS nvarchar(30)) AS items
FROM OPENJSON(@orders)
WITH (id int '$.id', customer nvarchar(20), total decimal(9, 2), paid bit, town varchar(10) '$.ship.town',
      items nvarchar(max) '$.items' AS JSON);
CREATE TABLE people (id int PRIMARY KEY, name nvarchar(20), skills nvarchar(max));
INSERT INTO people VALUES (1, N'Ann', N'["SQL","C#"]'), (2, N'Bob', N'[]'), (3, N'Cy', NULL);
SELECT p.name, CAST(s.value AS nvarchar(10)) AS skill
FROM people AS p CROSS APPLY OPENJSON(p.skills) AS s ORDER BY p.id, s.[key];
SELECT p.name, CAST(s.value AS nvarchar(10)) AS skill
FROM people AS p OUTER APPLY OPENJSON(p.skills) AS s ORDER BY p.id, s.[key];
SELECT SUM(x) AS total FROM OPENJSON(N'[1, 2, 3.5]') WITH (x decimal(5, 1) '$');
-- errors: OPENJSON of a scalar, bad text, strict missing path
SELECT * FROM OPENJSON(N'{"a":1}', '$.a');
SELECT * FROM OPENJSON(N'[1,');
SELECT * FROM OPENJSON(N'{"a":1}', 'strict $.b');
SELECT * FROM OPENJSON(N'[{"a":1}]') WITH (a int '$.a' AS JSON);

-- FOR JSON PATH: dotted aliases nest, NULLs left out unless INCLUDE_NULL_VALUES
CREATE TABLE emp (id int PRIMARY KEY, first nvarchar(20), last nvarchar(20), dept varchar(10) NULL,
                  hired date, salary decimal(9, 2), active bit, photo varbinary(10) NULL, note nvarchar(30) NULL);
INSERT INTO emp VALUES (1, N'Ann', N'Lee', 'eng', '2020-01-15', 5000.00, 1, 0x01FF, N'says "hi"/bye'),
                       (2, N'Bob', N'Ray', NULL, '2021-06-01', 4200.50, 0, NULL, NULL);
PRINT (SELECT id, first AS [name.first], last AS [name.last], dept FROM emp ORDER BY id FOR JSON PATH);
PRINT (SELECT id, dept FROM emp ORDER BY id FOR JSON PATH, INCLUDE_NULL_VALUES);
PRINT (SELECT id, hired, salary, active, photo, note FROM emp ORDER BY id FOR JSON AUTO);
PRINT (SELECT id, first FROM emp WHERE id = 1 FOR JSON PATH, WITHOUT_ARRAY_WRAPPER);
PRINT (SELECT id FROM emp ORDER BY id FOR JSON PATH, ROOT('people'));
PRINT (SELECT 2015 AS [date.year], 12 AS [date.month], 'x' AS other, 1 AS [b.c.d] FOR JSON PATH);
PRINT (SELECT CAST('2021-02-03 04:05:06.789' AS datetime) AS dt, CAST('2021-02-03 04:05:06.1234567' AS datetime2) AS dt2,
              CAST('12:30:00' AS time(0)) AS t, CAST(1.5E0 AS float) AS f, CAST(3 AS money) AS m,
              CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier) AS g FOR JSON PATH);
-- nested FOR JSON subqueries and JSON_QUERY embed JSON instead of a string
PRINT (SELECT d.dept,
              (SELECT e.first FROM emp AS e WHERE e.dept = d.dept FOR JSON PATH) AS people,
              JSON_QUERY('{"k":1}') AS extra
       FROM (SELECT DISTINCT dept FROM emp WHERE dept IS NOT NULL) AS d FOR JSON PATH);
-- no rows: no result row (a subquery reads NULL)
SELECT CASE WHEN (SELECT id FROM emp WHERE id = 99 FOR JSON PATH) IS NULL THEN 'null' END AS empty_result;
-- into a variable, then back through OPENJSON
DECLARE @out nvarchar(max) = (SELECT id, first FROM emp ORDER BY id FOR JSON PATH);
SELECT id, first FROM OPENJSON(@out) WITH (id int, first nvarchar(20));
-- the result column's name and type
SELECT id FROM emp WHERE id = 1 FOR JSON PATH;
-- errors: unnamed column (13605), ROOT with WITHOUT_ARRAY_WRAPPER (13620)
SELECT id + 1 FROM emp FOR JSON PATH;
SELECT id FROM emp FOR JSON PATH, ROOT('x'), WITHOUT_ARRAY_WRAPPER;
