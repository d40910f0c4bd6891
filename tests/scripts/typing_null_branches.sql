-- A NULL literal does not decide the type of CASE, UNION, VALUES, COALESCE, IIF,
-- CHOOSE: the other branches do (data type precedence); all-NULL is int.
DECLARE @x int = 1;
SELECT CASE WHEN @x > 0 THEN NULL ELSE 'text' END AS c1,
       CASE WHEN @x < 0 THEN NULL ELSE 'text' END AS c2;
SELECT CASE @x WHEN 1 THEN NULL WHEN 2 THEN NULL ELSE N'several' END AS c3;
SELECT CASE WHEN @x = 1 THEN NULL END AS all_null;
GO
SELECT 874 AS id, N'Thai' AS lang UNION ALL SELECT 1, NULL;
SELECT NULL AS a UNION ALL SELECT 'b' UNION ALL SELECT NULL;
SELECT NULL AS a UNION SELECT NULL;
GO
SELECT COALESCE(NULL, 'x') AS c, ISNULL(NULL, 'y') AS i, IIF(1 = 1, NULL, 'z') AS f,
       IIF(1 = 0, NULL, 'z') AS g, CHOOSE(2, NULL, 'w') AS h;
SELECT v.a, v.b FROM (VALUES (NULL, 1), ('p', NULL), ('q', 2)) AS v(a, b);
GO
-- The types the branches gave (SELECT INTO keeps them).
SELECT CASE WHEN 1 = 1 THEN NULL ELSE 'text' END AS c, COALESCE(NULL, N'ab') AS n,
       CASE WHEN 1 = 1 THEN NULL END AS i
INTO #typed;
SELECT CAST(c.name AS varchar(10)) AS col, CAST(ty.name AS varchar(10)) AS type, c.max_length
FROM tempdb.sys.columns AS c JOIN sys.types AS ty ON ty.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('tempdb..#typed')
ORDER BY c.column_id;
GO
-- A typed branch still decides: int beats varchar, so 'text' must convert (245).
SELECT CASE WHEN 1 = 0 THEN 1 ELSE 'text' END;
GO
-- Types that do not convert are refused when the statement is bound.
SELECT CASE WHEN 1 = 1 THEN 1 ELSE CAST('2020-01-01' AS date) END;
GO
