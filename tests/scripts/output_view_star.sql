-- OUTPUT inserted.* / deleted.* of an INSERT, UPDATE or DELETE through a view or a CTE
-- gives the view's (or CTE's) columns, in its order and by its names, not the base
-- table's: those that show a column of the table changed (a column the view computes,
-- or takes from another table, is not in inserted/deleted).
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY, x int, y varchar(10), hidden int DEFAULT 0);
INSERT INTO dbo.t (id, x, y) VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
CREATE TABLE dbo.u (id int PRIMARY KEY, label varchar(10));
INSERT INTO dbo.u VALUES (1, 'one'), (2, 'two'), (3, 'three');
GO
CREATE VIEW dbo.v AS SELECT y AS yy, id AS ident, x, x * 2 AS twice FROM dbo.t;
GO
-- Columns whose names are swapped: each view column still reads its own base column.
CREATE VIEW dbo.swapped (x, id) AS SELECT id, x FROM dbo.t;
GO
CREATE VIEW dbo.joined AS SELECT t.id, t.x, u.label FROM dbo.t AS t JOIN dbo.u AS u ON u.id = t.id;
GO
UPDATE dbo.v SET x = 11 OUTPUT inserted.*, deleted.* WHERE ident = 1;
INSERT INTO dbo.v (ident, x, yy) OUTPUT inserted.* VALUES (4, 40, 'd');
DELETE FROM dbo.v OUTPUT deleted.* WHERE ident = 4;
GO
UPDATE dbo.swapped SET id = 12 OUTPUT deleted.*, inserted.* WHERE x = 1;
GO
-- A view over a join, changing one of its tables.
UPDATE dbo.joined SET x = 21 OUTPUT inserted.*, deleted.x AS old_x WHERE id = 2;
GO
-- CTEs: with a column list, over a view, with TOP.
WITH c (a, b) AS (SELECT id, x FROM dbo.t) UPDATE c SET b = b + 1 OUTPUT inserted.*, deleted.b AS old_b WHERE a = 3;
WITH c AS (SELECT TOP (1) ident, x FROM dbo.v ORDER BY ident) UPDATE c SET x = 0 OUTPUT deleted.*, inserted.*;
WITH c (n, v) AS (SELECT id, y FROM dbo.t) DELETE FROM c OUTPUT deleted.* WHERE n = 3;
GO
-- OUTPUT INTO a table variable with the view's columns.
DECLARE @log TABLE (yy varchar(10), ident int, x int);
UPDATE dbo.v SET x = x + 100 OUTPUT inserted.* INTO @log WHERE ident <= 2;
SELECT yy, ident, x FROM @log ORDER BY ident;
GO
SELECT id, x, y, hidden FROM dbo.t ORDER BY id;
GO
