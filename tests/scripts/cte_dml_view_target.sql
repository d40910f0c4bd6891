-- A CTE over a view as the target of UPDATE, DELETE and INSERT: the rows changed are
-- the base table's rows behind the rows the CTE shows through the view (the view's
-- filter, TOP and window functions applied); columns map through both. OUTPUT may name
-- the CTE's or view's columns as inserted.<column> / deleted.<column>.
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY, k varchar(10) NULL, x int NULL);
INSERT INTO dbo.t VALUES (1, 'a', 0), (2, 'b', 0), (3, 'a', 0), (4, 'c', 0), (5, 'a', 0), (6, 'b', 0);
GO
CREATE VIEW dbo.v AS SELECT id, k, x AS val FROM dbo.t WHERE id > 1;
GO
CREATE VIEW dbo.vv AS SELECT id AS ident, val FROM dbo.v;
GO
CREATE VIEW dbo.top3 AS SELECT TOP (3) id, x FROM dbo.t ORDER BY id DESC;
GO
-- The dedupe through a view: row 1 is outside the view, so key 'a' keeps row 3.
WITH d AS (SELECT id, k, ROW_NUMBER() OVER (PARTITION BY k ORDER BY id) AS rn FROM dbo.v)
DELETE FROM d WHERE rn > 1;
SELECT @@ROWCOUNT AS deleted;
SELECT id, k, x FROM dbo.t ORDER BY id;
GO
-- SELECT * of the view, TOP with ORDER BY; a view over a view with renamed columns.
WITH c AS (SELECT TOP (2) * FROM dbo.v ORDER BY id) UPDATE c SET val = 7;
SELECT id, x FROM dbo.t ORDER BY id;
WITH c (a, b) AS (SELECT ident, val FROM dbo.vv) UPDATE c SET b = a * 10 WHERE a > 3;
SELECT id, x FROM dbo.t ORDER BY id;
GO
-- A view with TOP under the CTE: its rows are the view's three, of which the CTE
-- takes the first.
WITH c AS (SELECT TOP (1) id, x FROM dbo.top3 ORDER BY id) UPDATE c SET x = -1;
SELECT id, x FROM dbo.t ORDER BY id;
GO
-- INSERT through the CTE and the view into the table.
WITH c AS (SELECT id, k FROM dbo.v) INSERT INTO c VALUES (9, 'z');
WITH c (a, b) AS (SELECT ident, val FROM dbo.vv) INSERT INTO c (a) VALUES (8);
GO
-- 4406 for a column the CTE computes or the view computes.
WITH c AS (SELECT id, val * 2 AS twice FROM dbo.v) UPDATE c SET twice = 1;
GO
CREATE VIEW dbo.vcalc AS SELECT id, x + 1 AS x1 FROM dbo.t;
GO
WITH c AS (SELECT TOP (1) id, x1 FROM dbo.vcalc ORDER BY id) UPDATE c SET x1 = 0;
GO
-- OUTPUT naming the CTE's own column names and the view's.
WITH c (a, b) AS (SELECT ident, val FROM dbo.vv)
UPDATE c SET b = 5 OUTPUT inserted.a, deleted.b AS old_b, inserted.b WHERE a = 9;
WITH c AS (SELECT id, k, val FROM dbo.v)
UPDATE c SET val = val + 1 OUTPUT deleted.val, inserted.val, inserted.k WHERE id = 9;
WITH c (a, b) AS (SELECT id, x FROM dbo.t)
DELETE c OUTPUT deleted.a, deleted.b WHERE a = 8;
WITH c (a, b) AS (SELECT id, k FROM dbo.v)
INSERT INTO c OUTPUT inserted.a, inserted.b VALUES (10, 'n');
GO
-- OUTPUT INTO with the CTE's names.
DECLARE @log TABLE (a int, b int);
WITH c (a, b) AS (SELECT TOP (2) ident, val FROM dbo.vv ORDER BY ident)
UPDATE c SET b = 0 OUTPUT inserted.a, deleted.b INTO @log;
SELECT a, b FROM @log ORDER BY a;
GO
-- A simple view (no CTE) renames in OUTPUT too.
UPDATE dbo.v SET val = 3 OUTPUT inserted.val, deleted.id WHERE id = 10;
GO
SELECT id, k, x FROM dbo.t ORDER BY id;
GO
DROP VIEW dbo.vcalc;
DROP VIEW dbo.top3;
DROP VIEW dbo.vv;
DROP VIEW dbo.v;
DROP TABLE dbo.t;
GO
