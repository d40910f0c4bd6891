-- Grouping and duplicate elimination under an explicit collation: GROUP BY, DISTINCT,
-- UNION/INTERSECT/EXCEPT, COUNT(DISTINCT ...) and PARTITION BY keep 'apple' and 'Apple'
-- apart under a case-sensitive or binary collation, together under the default.
SET NOCOUNT ON;
CREATE TABLE dbo.g (id int PRIMARY KEY, w varchar(20), nw nvarchar(20));
INSERT dbo.g VALUES (1, 'apple', N'apple'), (2, 'Apple', N'Apple'), (3, 'APPLE', N'APPLE'),
    (4, 'apple  ', N'apple'), (5, 'résumé', N'résumé'), (6, 'resume', N'RESUME'), (7, NULL, NULL);
GO
-- The default collation: case-insensitive, accent-sensitive.
SELECT COUNT(*) AS n FROM (SELECT DISTINCT w FROM dbo.g) AS d;
SELECT COUNT(*) AS n FROM (SELECT w FROM dbo.g GROUP BY w) AS d;
-- Case-sensitive: apple, Apple, APPLE stay apart; trailing spaces still do not count.
SELECT COUNT(*) AS n FROM (SELECT DISTINCT w COLLATE Latin1_General_CS_AS AS w FROM dbo.g) AS d;
SELECT w COLLATE Latin1_General_CS_AS AS w, COUNT(*) AS n
FROM dbo.g GROUP BY w COLLATE Latin1_General_CS_AS ORDER BY w COLLATE Latin1_General_CS_AS;
SELECT w COLLATE Latin1_General_BIN2 AS w, COUNT(*) AS n
FROM dbo.g GROUP BY w COLLATE Latin1_General_BIN2 ORDER BY 1;
-- Accent-insensitive: résumé and resume group together.
SELECT COUNT(*) AS n FROM (SELECT DISTINCT nw COLLATE Latin1_General_CI_AI AS nw FROM dbo.g) AS d;
SELECT COUNT(DISTINCT w) AS ci, COUNT(DISTINCT w COLLATE Latin1_General_CS_AS) AS cs,
       COUNT(DISTINCT nw COLLATE Latin1_General_100_CI_AI) AS ai FROM dbo.g;
-- UNION, INTERSECT and EXCEPT compare rows under the columns' collations.
SELECT COUNT(*) AS n FROM (SELECT 'x' AS v UNION SELECT 'X') AS u;
SELECT COUNT(*) AS n FROM (SELECT 'x' COLLATE Latin1_General_CS_AS AS v UNION SELECT 'X') AS u;
SELECT COUNT(*) AS n FROM (SELECT 'x' AS v UNION SELECT 'X' COLLATE Latin1_General_BIN2) AS u;
SELECT COUNT(*) AS n FROM (SELECT 'x' COLLATE Latin1_General_CS_AS AS v INTERSECT SELECT 'X') AS u;
SELECT COUNT(*) AS n FROM (SELECT 'x' COLLATE Latin1_General_CS_AS AS v EXCEPT SELECT 'X') AS u;
SELECT COUNT(*) AS n FROM (SELECT 'x' AS v EXCEPT SELECT 'X') AS u;
-- PARTITION BY under a collation.
SELECT id, ROW_NUMBER() OVER (PARTITION BY w COLLATE Latin1_General_CS_AS ORDER BY id) AS rn
FROM dbo.g WHERE id <= 4 ORDER BY id;
SELECT id, ROW_NUMBER() OVER (PARTITION BY w ORDER BY id) AS rn FROM dbo.g WHERE id <= 4 ORDER BY id;
GO
