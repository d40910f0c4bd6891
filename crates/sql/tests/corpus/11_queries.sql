-- SELECT in its forms.
SELECT 1;
SELECT 1 AS one, 'two' AS [two], N'três' "three", 4 four, 'x' AS 'quoted alias', five = 5, 'six' = 6, [seven] = 7;
SELECT ALL a FROM t;
SELECT DISTINCT TOP 10 a, b FROM t ORDER BY a;
SELECT TOP (10) PERCENT WITH TIES a FROM t ORDER BY a DESC, b ASC;
SELECT TOP (@n) * FROM dbo.t;
SELECT t.*, s.x, dbo.t.y, db.dbo.t.z, srv.db.dbo.t.w FROM dbo.t AS t, other.s s;
SELECT * FROM tempdb..sysobjects;
SELECT @a = a, @b += b, @c = COUNT(*) FROM t WHERE id = @id;
SELECT $12.50 + -$1, 0x, 0xDEADBEEF, 1e10, 1.5E-3, .5, 12., -2147483648, ~1, +3, - -1, NULL;
SELECT 1 + 2 * 3 - 4 / 2 % 3, (1 + 2) * 3, 1 - (2 - 3), 1 - 2 - 3, a & b | c ^ d, 'a' + 'b' + c;
SELECT * FROM t WHERE a = 1 AND b <> 2 AND c != 3 AND d < 4 AND e > 5 AND f <= 6 AND g >= 7 AND h !< 8 AND i !> 9;
SELECT * FROM t WHERE NOT a = 1 OR b = 2 AND NOT (c = 3 OR d = 4);
SELECT * FROM t WHERE name LIKE 'a%' AND name NOT LIKE '%[_]x' ESCAPE '\' AND code LIKE @pattern;
SELECT * FROM t WHERE a BETWEEN 1 AND 10 AND b NOT BETWEEN @lo AND @hi + 1;
SELECT * FROM t WHERE a IN (1, 2, 3) AND b NOT IN ('x', 'y') AND c IN (SELECT c FROM u) AND d NOT IN (SELECT d FROM v WHERE v.k = t.k);
SELECT * FROM t WHERE EXISTS (SELECT 1 FROM u WHERE u.id = t.id) AND NOT EXISTS (SELECT * FROM v);
SELECT * FROM t WHERE a IS NULL OR b IS NOT NULL;
SELECT * FROM t WHERE a > ALL (SELECT a FROM u) AND b = ANY (SELECT b FROM u) AND c < SOME (SELECT c FROM u);
SELECT CASE WHEN a > 0 THEN 'pos' WHEN a < 0 THEN 'neg' ELSE 'zero' END, CASE b WHEN 1 THEN 'one' WHEN 2 THEN 'two' END FROM t;
SELECT CAST(a AS varchar(10)), CAST(b AS nvarchar(max)), TRY_CAST('x' AS int), CAST(c AS decimal(18, 4)), CAST(d AS dbo.MyType) FROM t;
SELECT CONVERT(varchar(30), GETDATE(), 126), CONVERT(int, '12'), TRY_CONVERT(datetime2(7), @s, 121), CONVERT(xml, event_data) FROM t;
SELECT PARSE('1,5' AS decimal(5, 2) USING 'de-DE'), TRY_PARSE(@v AS int), PARSE(N'2024-01-02' AS date);
SELECT COUNT(*), COUNT(DISTINCT a), COUNT(ALL b), COUNT_BIG(*), SUM(x), AVG(1.0 * y), MIN(z), MAX(z), CHECKSUM(*), STDEV(v) FROM t;
SELECT STRING_AGG(name, ', ') WITHIN GROUP (ORDER BY name DESC) FROM t GROUP BY k;
SELECT ROW_NUMBER() OVER (ORDER BY a), RANK() OVER (PARTITION BY b ORDER BY c DESC), COUNT(*) OVER (),
       SUM(x) OVER (PARTITION BY g ORDER BY d ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
       AVG(x) OVER (ORDER BY d ROWS BETWEEN 3 PRECEDING AND 1 FOLLOWING),
       MAX(x) OVER (ORDER BY d RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING),
       MIN(x) OVER (ORDER BY d ROWS 5 PRECEDING),
       LAG(x, 1, 0) OVER (PARTITION BY g ORDER BY d), LEAD(x) OVER (ORDER BY d), NTILE(4) OVER (ORDER BY x)
FROM t;
SELECT LEFT(name, 3), RIGHT(name, 2), COALESCE(a, b, 0), NULLIF(a, 0), IIF(a > b, a, b), CHOOSE(2, 'a', 'b'), DATEADD(day, -1, GETDATE()), DATEDIFF(MILLISECOND, s, e), DATEPART(yy, d) FROM t;
SELECT CURRENT_TIMESTAMP, CURRENT_USER, SESSION_USER, SYSTEM_USER, USER, USER_NAME(), @@SPID, @@ROWCOUNT, @@ERROR, @@IDENTITY, @@TRANCOUNT, @@VERSION, @@SERVERNAME;
SELECT (SELECT MAX(id) FROM u) AS max_id, (SELECT COUNT(*) FROM v WHERE v.t = t.id) + 1 FROM t;
SELECT d AT TIME ZONE 'UTC' AT TIME ZONE 'Pacific Standard Time', name COLLATE Latin1_General_CS_AS, NEXT VALUE FOR dbo.Seq FROM t;
SELECT x.value('(/a/b)[1]', 'int'), x.query('/a'), x.exist('/a[@k="1"]'), t.doc.value('@id', 'bigint'), @xml.value('.', 'nvarchar(max)') FROM t;
SELECT CONVERT(xml, c).value('(/r/@v)[1]', 'int'), CAST(c AS xml).query('.'), (SELECT name + ',' FROM t FOR XML PATH(''), TYPE).value('.', 'nvarchar(max)') FROM t;
SELECT a, b INTO #copy FROM t WHERE 1 = 0;
SELECT * INTO dbo.Archive FROM dbo.Live OPTION (MAXDOP 1);
SELECT a FROM t UNION SELECT a FROM u UNION ALL SELECT a FROM v EXCEPT SELECT a FROM w INTERSECT SELECT a FROM x;
(SELECT a FROM t) UNION ALL (SELECT a FROM u ORDER BY a OFFSET 0 ROWS) ORDER BY a;
SELECT a FROM t ORDER BY a OFFSET 10 ROWS FETCH NEXT 20 ROWS ONLY;
SELECT a FROM t ORDER BY a OFFSET @skip ROW FETCH FIRST @take ROW ONLY;
SELECT a, COUNT(*) FROM t GROUP BY a HAVING COUNT(*) > 1 AND SUM(b) < 100;
SELECT a, b, SUM(c) FROM t GROUP BY ROLLUP (a, b);
SELECT a, b, SUM(c) FROM t GROUP BY CUBE (a, b);
SELECT a, b, SUM(c) FROM t GROUP BY GROUPING SETS ((a, b), (a), ());
SELECT a, GROUPING(a) FROM t GROUP BY a, b;
SELECT * FROM a JOIN b ON a.id = b.id INNER JOIN c ON c.id = b.id LEFT JOIN d ON d.id = c.id LEFT OUTER JOIN e ON 1 = 1
  RIGHT JOIN f ON f.id = e.id RIGHT OUTER JOIN g ON g.id = f.id FULL JOIN h ON h.id = g.id FULL OUTER JOIN i ON i.id = h.id
  CROSS JOIN j CROSS APPLY dbo.fn(j.id) AS k OUTER APPLY (SELECT TOP (1) * FROM l WHERE l.id = j.id ORDER BY l.d DESC) AS m;
SELECT * FROM a INNER HASH JOIN b ON a.id = b.id LEFT OUTER LOOP JOIN c ON c.id = b.id INNER MERGE JOIN d ON d.id = c.id;
SELECT * FROM (a JOIN b ON a.id = b.id) LEFT JOIN (c CROSS JOIN d) ON c.id = a.id;
SELECT * FROM t WITH (NOLOCK) JOIN u AS x WITH (INDEX(ix_u), FORCESEEK) ON x.id = t.id JOIN v (NOLOCK) ON 1 = 1 JOIN w WITH (INDEX = ix_w, TABLOCK, HOLDLOCK) ON 1 = 1;
SELECT * FROM (SELECT a, b FROM t) AS d (x, y) JOIN (VALUES (1, 'a'), (2, 'b')) AS v (n, s) ON v.n = d.x;
SELECT * FROM @tableVar AS tv JOIN #temp t ON t.id = tv.id JOIN ##global g ON g.id = t.id;
SELECT * FROM sys.dm_io_virtual_file_stats(DB_ID('x'), 2) AS vfs CROSS APPLY sys.dm_exec_sql_text(vfs.handle) st;
SELECT n.c.value('@k', 'int') FROM @doc.nodes('/r/i') AS n(c) CROSS APPLY t.payload.nodes('/x') x(y);
SELECT * FROM STRING_SPLIT(@list, ',') AS s WHERE s.value <> '';
SELECT dbo.ScalarFn(a, DEFAULT), schema1.fn() FROM t;
SELECT a FROM t FOR XML RAW('row'), ROOT('rows'), ELEMENTS XSINIL;
SELECT a FROM t FOR XML AUTO, BINARY BASE64;
SELECT a FROM t FOR JSON PATH, INCLUDE_NULL_VALUES, WITHOUT_ARRAY_WRAPPER;
SELECT a FROM t OPTION (RECOMPILE, HASH JOIN, MAXRECURSION 0, OPTIMIZE FOR UNKNOWN, USE HINT ('DISABLE_OPTIMIZED_NESTED_LOOP'), LABEL = 'q1', QUERYTRACEON 8649);
WITH Numbers (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM Numbers WHERE n < 100) SELECT n FROM Numbers OPTION (MAXRECURSION 100);
WITH a AS (SELECT 1 AS x), b AS (SELECT x FROM a) SELECT * FROM b;
SELECT [object_name], [rows] = COUNT(*) OVER(), "quoted col" FROM t;
SELECT éclair, 日本 FROM t;
SELECT -x * y, -(x * y), ~a & b, IIF(NOT 1 = 1, 0, 1);
SELECT 1 WHERE (1 = 1) AND ((2 = 2));
SELECT ((SELECT 1) + 1), ((1));
SELECT a FROM t WHERE b = 1 SELECT c FROM u; SELECT 3
