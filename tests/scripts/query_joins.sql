-- Joins: INNER, LEFT, RIGHT, FULL OUTER, CROSS and a self join; duplicates and NULLs on the outer side.
SET NOCOUNT ON;
CREATE TABLE dbo.a (id int NOT NULL, av varchar(5) NOT NULL);
CREATE TABLE dbo.b (id int NOT NULL, bv varchar(5) NOT NULL);
INSERT INTO dbo.a VALUES (1, 'a1'), (2, 'a2'), (3, 'a3');
INSERT INTO dbo.b VALUES (2, 'b2'), (3, 'b3'), (3, 'b3x'), (4, 'b4');
GO
SELECT a.id, a.av, b.bv FROM dbo.a AS a INNER JOIN dbo.b AS b ON b.id = a.id ORDER BY a.id, b.bv;
SELECT a.id, a.av, b.bv FROM dbo.a AS a LEFT JOIN dbo.b AS b ON b.id = a.id ORDER BY a.id, b.bv;
SELECT b.id, a.av, b.bv FROM dbo.a AS a RIGHT OUTER JOIN dbo.b AS b ON b.id = a.id ORDER BY b.id, b.bv;
SELECT a.id AS aid, b.id AS bid FROM dbo.a AS a FULL JOIN dbo.b AS b ON b.id = a.id ORDER BY COALESCE(a.id, b.id), b.bv;
SELECT COUNT(*) AS pairs FROM dbo.a CROSS JOIN dbo.b;
SELECT x.id AS x, y.id AS y FROM dbo.a AS x JOIN dbo.a AS y ON y.id = x.id + 1 ORDER BY x.id;
GO
