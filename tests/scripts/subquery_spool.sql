-- Subqueries run once per outer row; the parts of them that read nothing of the outer
-- row are computed once per statement and kept (a lazy table spool, docs/architecture.md
-- "Subquery spools"). Results must be those of running every subquery in full each time.
CREATE TABLE dbo.s (id int PRIMARY KEY, grp int NOT NULL, v varchar(10) NOT NULL);
CREATE TABLE dbo.digits (n int PRIMARY KEY);
INSERT dbo.s VALUES (1, 1, 'a'), (2, 1, 'b'), (3, 2, 'c'), (4, 2, 'd'), (5, 3, 'e');
INSERT dbo.digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
GO
-- NOT EXISTS over a CTE with a window function, correlated through expressions: rows
-- that are not the greatest of their group.
WITH m (grp, top_v) AS (SELECT DISTINCT grp, MAX(v) OVER (PARTITION BY grp) FROM dbo.s)
SELECT id, v FROM dbo.s x WHERE NOT EXISTS (SELECT * FROM m WHERE m.grp = x.grp AND m.top_v = x.v) ORDER BY id;
-- IN over an uncorrelated subquery, asked for every outer row.
SELECT id FROM dbo.s WHERE grp IN (SELECT grp FROM dbo.s WHERE v >= 'c') ORDER BY id;
-- An uncorrelated scalar subquery inside a correlated one.
SELECT id, (SELECT COUNT(*) FROM dbo.s y WHERE y.grp = x.grp AND y.id <= (SELECT MAX(id) FROM dbo.s WHERE grp = 1)) AS n
FROM dbo.s x ORDER BY id;
-- The next statement sees the new row: a spool lasts one statement.
INSERT dbo.s VALUES (6, 3, 'f');
SELECT id FROM dbo.s WHERE grp IN (SELECT grp FROM dbo.s WHERE v >= 'c') ORDER BY id;
-- A subquery that reads a variable is computed again when the variable changes.
DECLARE @g int = 1;
WHILE @g <= 3
BEGIN
  SELECT @g AS g, COUNT(*) AS n FROM dbo.s WHERE id IN (SELECT id FROM dbo.s WHERE grp = @g);
  SET @g += 1;
END;
-- An uncorrelated input larger than a spool keeps (100,000 rows) streams each time.
SELECT id FROM dbo.s
WHERE id + 99990 IN (SELECT a.n + b.n * 10 + c.n * 100 + d.n * 1000 + e.n * 10000
                     FROM dbo.digits a, dbo.digits b, dbo.digits c, dbo.digits d, dbo.digits e)
ORDER BY id;
-- A correlated subquery over an APPLY whose right side reads the APPLY's left row.
SELECT x.id, (SELECT SUM(t.k) FROM dbo.digits d CROSS APPLY (SELECT d.n * x.grp AS k) t WHERE d.n < 3) AS k
FROM dbo.s x ORDER BY x.id;
GO
