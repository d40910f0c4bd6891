-- A CTE as the target of UPDATE, DELETE and INSERT: the CTE must be updatable as a view
-- is (one base table; a column it computes cannot be assigned). The rows changed are
-- the base table's rows behind the rows the CTE shows (TOP, ORDER BY and window
-- functions included).
SET NOCOUNT ON;
CREATE TABLE dbo.dup (id int PRIMARY KEY, k varchar(10) NOT NULL, x int NULL);
INSERT INTO dbo.dup VALUES (1, 'a', 0), (2, 'b', 0), (3, 'a', 0), (4, 'c', 0), (5, 'b', 0), (6, 'a', 0);
GO
-- The classic dedupe: keep the first row of each key.
WITH d AS (SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM dbo.dup)
DELETE FROM d WHERE rn > 1;
SELECT @@ROWCOUNT AS deleted;
SELECT id, k FROM dbo.dup ORDER BY id;
GO
INSERT INTO dbo.dup VALUES (10, 'd', 0), (11, 'e', 0), (12, 'f', 0);
-- TOP with ORDER BY: the first rows by id.
WITH c AS (SELECT TOP (2) * FROM dbo.dup ORDER BY id DESC) UPDATE c SET x = 1;
SELECT id, x FROM dbo.dup ORDER BY id;
WITH c AS (SELECT TOP (3) * FROM dbo.dup ORDER BY id) UPDATE c SET x = x + 10 WHERE k <> 'b';
SELECT id, x FROM dbo.dup ORDER BY id;
GO
-- Renamed columns (a column list and aliases), a filter, SET from another column.
WITH r (ident, val) AS (SELECT id, x FROM dbo.dup WHERE id > 3) UPDATE r SET val = ident * 100 WHERE ident < 11;
SELECT id, x FROM dbo.dup ORDER BY id;
WITH r AS (SELECT id AS ident, x AS val FROM dbo.dup) DELETE r WHERE val >= 400;
SELECT id, x FROM dbo.dup ORDER BY id;
GO
-- UPDATE of the CTE joined to another source, and DELETE with OUTPUT.
WITH s AS (SELECT 1 AS id, 77 AS v UNION ALL SELECT 2, 88),
     c AS (SELECT id, x FROM dbo.dup)
UPDATE c SET x = s.v FROM c JOIN s ON s.id = c.id;
SELECT id, x FROM dbo.dup ORDER BY id;
WITH c AS (SELECT TOP (1) id, x FROM dbo.dup ORDER BY x DESC) DELETE FROM c OUTPUT deleted.id, deleted.x;
GO
-- INSERT into a CTE goes to its base table.
WITH c AS (SELECT id, k FROM dbo.dup) INSERT INTO c VALUES (20, 'z');
WITH c (a, b) AS (SELECT id, k FROM dbo.dup) INSERT INTO c (b, a) SELECT 'y', 21;
SELECT id, k, x FROM dbo.dup WHERE id >= 20 ORDER BY id;
GO
-- A table variable and a temp table as the base.
DECLARE @t TABLE (n int, g int);
INSERT INTO @t VALUES (1, 1), (2, 1), (3, 2);
WITH v AS (SELECT n, ROW_NUMBER() OVER (PARTITION BY g ORDER BY n DESC) AS rn FROM @t) DELETE v WHERE rn = 1;
SELECT n FROM @t;
CREATE TABLE #tmp (n int);
INSERT INTO #tmp VALUES (5), (6);
WITH v AS (SELECT TOP (1) n FROM #tmp ORDER BY n) UPDATE v SET n = 50;
SELECT n FROM #tmp ORDER BY n;
GO
-- A CTE hides a table of the same name.
CREATE TABLE dbo.shadow (n int);
INSERT INTO dbo.shadow VALUES (1), (2);
WITH shadow AS (SELECT id FROM dbo.dup WHERE 1 = 0) DELETE FROM shadow;
SELECT COUNT(*) AS still_two FROM dbo.shadow;
GO
-- Not updatable: a derived column (4406), aggregates / DISTINCT / GROUP BY (4403),
-- two base tables (4405).
WITH d AS (SELECT id, x * 2 AS twice FROM dbo.dup) UPDATE d SET twice = 1;
GO
WITH d AS (SELECT k, COUNT(*) AS n FROM dbo.dup GROUP BY k) DELETE FROM d;
GO
WITH d AS (SELECT DISTINCT k FROM dbo.dup) UPDATE d SET k = 'q';
GO
WITH d AS (SELECT MAX(id) AS m FROM dbo.dup) DELETE FROM d;
GO
WITH d AS (SELECT a.id FROM dbo.dup AS a JOIN dbo.shadow AS b ON a.id = b.n) DELETE FROM d;
GO
WITH d AS (SELECT id FROM dbo.dup UNION ALL SELECT n FROM dbo.shadow) DELETE FROM d;
GO
SELECT COUNT(*) AS rows_left FROM dbo.dup;
GO
-- Views with TOP or window functions are updatable the same way.
CREATE VIEW dbo.top2 AS SELECT TOP (2) id, x FROM dbo.dup ORDER BY id;
GO
UPDATE dbo.top2 SET x = -1;
DELETE FROM dbo.top2 WHERE id = 2;
SELECT id, x FROM dbo.dup ORDER BY id;
GO
-- A CTE or view joining tables: UPDATE and INSERT may change the columns of one of
-- them (4405 for two, or for DELETE).
CREATE TABLE dbo.o (id int PRIMARY KEY, cust int, total int);
CREATE TABLE dbo.c (id int PRIMARY KEY, name varchar(10), vip bit);
INSERT INTO dbo.c VALUES (1, 'ann', 1), (2, 'bob', 0);
INSERT INTO dbo.o VALUES (10, 1, 100), (11, 2, 200), (12, 1, 300);
GO
WITH x AS (SELECT o.id, o.total, c.name, c.vip FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust)
UPDATE x SET total = total + 1 WHERE vip = 1;
SELECT * FROM dbo.o;
WITH x AS (SELECT o.id, o.total, c.name, c.vip FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust)
UPDATE x SET name = UPPER(name) WHERE total > 250;
SELECT * FROM dbo.c;
WITH x AS (SELECT o.id AS oid, total, name FROM dbo.o AS o, dbo.c WHERE c.id = o.cust)
UPDATE x SET total = 0 WHERE name = 'bob';
SELECT * FROM dbo.o;
GO
WITH x AS (SELECT o.id, o.total, c.name FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust)
UPDATE x SET total = 1, name = 'z';
GO
WITH x AS (SELECT o.id, o.total, c.name FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust)
DELETE FROM x;
GO
WITH x AS (SELECT o.id, o.total * 2 AS t2, c.name FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust)
UPDATE x SET t2 = 1;
GO
CREATE VIEW dbo.oc AS SELECT o.id, o.total, c.name FROM dbo.o AS o JOIN dbo.c AS c ON c.id = o.cust;
GO
UPDATE dbo.oc SET total = 7 WHERE name = 'ann';
INSERT INTO dbo.oc (id, total) VALUES (20, 5);
SELECT * FROM dbo.o;
GO
INSERT INTO dbo.oc VALUES (21, 5, 'q');
GO
