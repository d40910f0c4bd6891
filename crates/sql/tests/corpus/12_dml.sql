-- INSERT, UPDATE, DELETE, MERGE.
INSERT INTO t (a, b) VALUES (1, 'x');
INSERT t VALUES (1, 'x'), (2, 'y'), (3, DEFAULT);
INSERT INTO dbo.t DEFAULT VALUES;
INSERT dbo.Log (Msg) SELECT TOP (1000) name FROM sys.all_columns AS ac;
INSERT INTO t (a) SELECT a FROM u UNION ALL SELECT a FROM v;
INSERT INTO #who EXEC sp_who2;
INSERT INTO @t (a, b) EXEC dbo.GetPairs @x = 1;
INSERT INTO t EXEC ('SELECT 1, 2');
INSERT TOP (10) PERCENT INTO t (a) SELECT a FROM u;
INSERT INTO t WITH (TABLOCK) (a) VALUES (1);
INSERT INTO t (a, b) OUTPUT inserted.id, inserted.a INTO @ids (id, a) VALUES (1, 2);
INSERT INTO t (a) OUTPUT inserted.* SELECT a FROM u;
INSERT INTO t (a) (SELECT 1);
WITH src AS (SELECT a FROM u) INSERT INTO t (a) SELECT a FROM src;
UPDATE t SET a = 1;
UPDATE dbo.t SET a = a + 1, b = DEFAULT, @v = a, c += 5 WHERE id = @id;
UPDATE TOP (100) t SET flag = 1 OUTPUT deleted.flag AS old, inserted.flag AS new WHERE flag = 0;
UPDATE t SET t.total = s.total FROM dbo.Totals AS t INNER JOIN (SELECT id, SUM(x) AS total FROM d GROUP BY id) AS s ON s.id = t.id WHERE t.total <> s.total OPTION (MAXDOP 2);
UPDATE @tv SET v = NULL;
UPDATE t WITH (ROWLOCK) SET a = 1;
WITH dupes AS (SELECT id, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM t) UPDATE dupes SET rn = 0 WHERE rn > 1;
DELETE FROM t WHERE id = 1;
DELETE t;
DELETE TOP (1000) dbo.Queue;
DELETE TOP (5) PERCENT FROM dbo.Queue WHERE processed = 1;
DELETE FROM t OUTPUT deleted.* INTO dbo.Archive WHERE created < '2020-01-01';
DELETE t FROM dbo.Orders AS t JOIN dbo.Cancelled AS c ON c.id = t.id;
DELETE FROM @tv WHERE v IS NULL;
WITH old AS (SELECT TOP (10) * FROM t ORDER BY d) DELETE FROM old;
DELETE FROM t WHERE id IN (SELECT id FROM u) OPTION (RECOMPILE);
MERGE dbo.Target AS tgt
USING dbo.Source AS src ON tgt.id = src.id
WHEN MATCHED THEN UPDATE SET tgt.v = src.v
WHEN NOT MATCHED THEN INSERT (id, v) VALUES (src.id, src.v)
OUTPUT $action, inserted.id;
WITH s AS (SELECT 1 AS id) MERGE t USING s ON t.id = s.id WHEN NOT MATCHED THEN INSERT (id) VALUES (s.id);
MERGE TOP (10) PERCENT INTO dbo.Target WITH (HOLDLOCK) tgt
USING (VALUES (1, 'a'), (2, DEFAULT)) AS src (id, v) ON tgt.id = src.id AND tgt.v IS NOT NULL
WHEN MATCHED AND src.v IS NULL THEN DELETE
WHEN MATCHED THEN UPDATE SET v = src.v, @n += 1, n *= 2
WHEN NOT MATCHED BY TARGET AND src.id > 0 THEN INSERT DEFAULT VALUES
WHEN NOT MATCHED BY SOURCE AND tgt.id < 0 THEN UPDATE SET v = NULL
WHEN NOT MATCHED BY SOURCE THEN DELETE
OUTPUT $action, deleted.*, inserted.id, src.v INTO @log
OUTPUT $action AS act
OPTION (RECOMPILE);
MERGE @tv AS t USING (SELECT id, SUM(v) AS v FROM s GROUP BY id) s ON t.id = s.id
WHEN NOT MATCHED THEN INSERT VALUES (s.id, DEFAULT);
