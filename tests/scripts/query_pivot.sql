-- PIVOT and UNPIVOT: implicit grouping by the columns not mentioned, NULL (0 for COUNT) for missing cells, UNPIVOT dropping NULLs, joined and chained sources, errors.
SET NOCOUNT ON;
CREATE TABLE dbo.sales (region varchar(10) NOT NULL, quarter char(2) NOT NULL, amount decimal(8, 2) NULL, units int NULL);
INSERT INTO dbo.sales VALUES
    ('east', 'Q1', 100.00, 1), ('east', 'Q1', 50.50, 2), ('east', 'Q2', 20.00, 3),
    ('west', 'Q1', 10.00, 4), ('west', 'Q3', NULL, 5), ('north', 'Q4', 7.25, 6);
CREATE TABLE dbo.managers (region varchar(10) NOT NULL, manager varchar(10) NOT NULL);
INSERT INTO dbo.managers VALUES ('east', 'eve'), ('west', 'will'), ('north', 'nia');
GO
SELECT region, Q1, Q2, Q3, Q4
FROM (SELECT region, quarter, amount FROM dbo.sales) AS s
PIVOT (SUM(amount) FOR quarter IN (Q1, Q2, Q3, Q4)) AS p
ORDER BY region;
SELECT region, [Q1], [Q3]
FROM (SELECT region, quarter, units FROM dbo.sales) AS s
PIVOT (COUNT(units) FOR quarter IN ([Q1], [Q3])) AS p
ORDER BY region;
SELECT * FROM dbo.sales PIVOT (MAX(amount) FOR quarter IN ([Q1], [Q2])) AS p ORDER BY region, units;
SELECT * FROM (SELECT quarter, units FROM dbo.sales) AS s PIVOT (SUM(units) FOR quarter IN (Q1, Q2, Q3, Q4, Q5)) AS p;
SELECT * FROM (SELECT quarter, units FROM dbo.sales WHERE 1 = 0) AS s PIVOT (SUM(units) FOR quarter IN (Q1)) AS p;
SELECT quarter, [0] AS even_units, [1] AS odd_units
FROM (SELECT quarter, units % 2 AS odd, units AS u FROM dbo.sales) AS s
PIVOT (SUM(u) FOR odd IN ([0], [1])) AS p
ORDER BY quarter;
SELECT [EAST], [West] FROM (SELECT region, units FROM dbo.sales) AS s PIVOT (SUM(units) FOR region IN ([EAST], [West])) AS p;
GO
SELECT p.manager, p.Q1, p.Q2
FROM (SELECT m.manager, s.quarter, s.units FROM dbo.sales AS s JOIN dbo.managers AS m ON m.region = s.region) AS src
PIVOT (SUM(units) FOR quarter IN (Q1, Q2)) AS p
JOIN dbo.managers AS m2 ON m2.manager = p.manager
WHERE m2.region <> 'north'
ORDER BY p.manager;
GO
CREATE TABLE dbo.scores (student varchar(5) NOT NULL, math int NULL, art int NULL, music int NULL, note varchar(10) NULL);
INSERT INTO dbo.scores VALUES ('amy', 90, NULL, 70, 'x'), ('bo', NULL, NULL, NULL, 'y'), ('cy', 60, 80, NULL, NULL);
SELECT * FROM dbo.scores UNPIVOT (score FOR subject IN (math, ART, music)) AS u ORDER BY student, subject;
SELECT u.student, COUNT(*) AS n, SUM(u.score) AS total
FROM dbo.scores UNPIVOT (score FOR subject IN (math, art, music)) AS u
GROUP BY u.student ORDER BY u.student;
SELECT region, quarter, total
FROM (SELECT region, quarter, amount FROM dbo.sales) AS s
PIVOT (SUM(amount) FOR quarter IN (Q1, Q3)) AS p
UNPIVOT (total FOR quarter IN (Q1, Q3)) AS u
ORDER BY region, quarter;
GO
SELECT * FROM dbo.sales PIVOT (SUM(nope) FOR quarter IN (Q1)) AS p;
GO
SELECT * FROM dbo.sales PIVOT (SUM(amount) FOR quarter IN (Q1, [q1])) AS p;
GO
SELECT * FROM dbo.sales PIVOT (SUM(amount) FOR quarter IN (Q1, region)) AS p;
GO
SELECT * FROM dbo.sales PIVOT (SUM(amount) FOR units IN ([1], [abc])) AS p;
GO
SELECT * FROM dbo.sales PIVOT (COUNT(*) FOR quarter IN (Q1)) AS p;
GO
SELECT * FROM dbo.sales PIVOT (CHECKSUM_AGG(units) FOR quarter IN (Q1)) AS p;
GO
SELECT * FROM dbo.sales AS s JOIN dbo.managers AS m ON m.region = s.region PIVOT (SUM(units) FOR quarter IN (Q1)) AS p;
GO
SELECT s.region FROM dbo.sales AS s PIVOT (SUM(units) FOR quarter IN (Q1)) AS p;
GO
SELECT * FROM dbo.scores UNPIVOT (score FOR subject IN (math, art, MATH)) AS u;
GO
SELECT * FROM dbo.scores UNPIVOT (score FOR subject IN (math, nope)) AS u;
GO
SELECT * FROM dbo.scores UNPIVOT (score FOR subject IN (math, note)) AS u;
GO
SELECT * FROM dbo.scores UNPIVOT (note FOR subject IN (math, art)) AS u;
GO
SELECT * FROM dbo.scores UNPIVOT (score FOR score IN (math, art)) AS u;
GO
DROP TABLE dbo.sales, dbo.managers, dbo.scores;
GO
