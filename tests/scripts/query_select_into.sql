-- SELECT INTO: a new permanent table and a temp table, their column types; an existing target fails.
CREATE TABLE dbo.src (id int NOT NULL, name varchar(10) NOT NULL, price decimal(6, 2) NULL);
INSERT INTO dbo.src VALUES (1, 'pen', 1.50), (2, 'ink', NULL), (3, 'pad', 4.25);
GO
SELECT id, name INTO dbo.copy FROM dbo.src WHERE id > 1;
SELECT id, name FROM dbo.copy ORDER BY id;
GO
SELECT name, price * 2 AS double_price INTO #tmp FROM dbo.src;
SELECT name, double_price FROM #tmp ORDER BY name;
GO
SELECT id INTO dbo.copy FROM dbo.src;
GO
DROP TABLE #tmp;
SELECT OBJECT_ID('tempdb..#tmp') AS tmp_id;
GO
