-- Dynamic SQL: EXEC (string), sp_executesql with typed parameters and OUTPUT; the scope of variables and temp tables.
SET NOCOUNT ON;
CREATE TABLE dbo.kv (k varchar(10) NOT NULL, v int NOT NULL);
INSERT INTO dbo.kv VALUES ('a', 1), ('b', 2), ('c', 3);
GO
DECLARE @table sysname = N'kv';
EXEC ('SELECT COUNT(*) AS n FROM dbo.' + @table);
DECLARE @sql nvarchar(200) = N'SELECT k, v FROM dbo.kv WHERE v >= @min ORDER BY k';
EXEC sp_executesql @sql, N'@min int', @min = 2;
DECLARE @total int;
EXEC sp_executesql N'SELECT @t = SUM(v) FROM dbo.kv WHERE k <> @skip', N'@skip varchar(10), @t int OUTPUT', 'b', @t = @total OUTPUT;
PRINT CONCAT('total without b: ', @total);
GO
DECLARE @outer int = 5;
EXEC ('PRINT @outer');
GO
EXEC ('CREATE TABLE #inner (x int); INSERT INTO #inner VALUES (1);');
SELECT * FROM #inner;
GO
CREATE TABLE #outer (x int);
EXEC ('INSERT INTO #outer VALUES (7), (8)');
SELECT SUM(x) AS from_dynamic FROM #outer;
GO
