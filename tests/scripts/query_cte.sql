-- Common table expressions: one, several, one referenced twice, recursive (with MAXRECURSION and its limit).
SET NOCOUNT ON;
CREATE TABLE dbo.org (id int NOT NULL PRIMARY KEY, boss int NULL, name varchar(8) NOT NULL);
INSERT INTO dbo.org VALUES (1, NULL, 'ceo'), (2, 1, 'cto'), (3, 1, 'cfo'), (4, 2, 'dev'), (5, 4, 'intern');
GO
WITH top3 AS (SELECT id, name FROM dbo.org WHERE id <= 3)
SELECT id, name FROM top3 ORDER BY id DESC;
WITH a AS (SELECT id FROM dbo.org WHERE boss = 1), b AS (SELECT id FROM dbo.org WHERE boss IN (SELECT id FROM a))
SELECT (SELECT COUNT(*) FROM a) AS level2, (SELECT COUNT(*) FROM b) AS level3;
WITH chain AS (
    SELECT id, name, 0 AS depth, CAST(name AS varchar(40)) AS path FROM dbo.org WHERE boss IS NULL
    UNION ALL
    SELECT o.id, o.name, c.depth + 1, CAST(c.path + '/' + o.name AS varchar(40)) FROM dbo.org AS o JOIN chain AS c ON o.boss = c.id
)
SELECT id, depth, path FROM chain ORDER BY id;
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 200)
SELECT COUNT(*) AS cnt, MAX(i) AS top_i FROM n OPTION (MAXRECURSION 500);
GO
DECLARE @c int;
WITH n AS (SELECT 1 AS i UNION ALL SELECT i + 1 FROM n WHERE i < 200)
SELECT @c = COUNT(*) FROM n;
PRINT 'the batch goes on';
GO
