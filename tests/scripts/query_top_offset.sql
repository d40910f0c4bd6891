-- TOP (n), TOP with a variable, TOP PERCENT, TOP WITH TIES, OFFSET ... FETCH.
SET NOCOUNT ON;
CREATE TABLE dbo.nums (n int NOT NULL);
INSERT INTO dbo.nums VALUES (5), (3), (9), (1), (7), (3), (8), (2), (6), (4);
GO
SELECT TOP (3) n FROM dbo.nums ORDER BY n DESC;
DECLARE @k int = 2;
SELECT TOP (@k) n FROM dbo.nums ORDER BY n;
SELECT TOP (20) PERCENT n FROM dbo.nums ORDER BY n;
SELECT TOP (2) WITH TIES n FROM dbo.nums ORDER BY n DESC;
SELECT TOP (3) WITH TIES n FROM dbo.nums ORDER BY n;
SELECT n FROM dbo.nums ORDER BY n OFFSET 7 ROWS;
SELECT n FROM dbo.nums ORDER BY n DESC OFFSET 2 ROWS FETCH NEXT 3 ROWS ONLY;
GO
-- TOP (0), TOP (@n) with @n = 0 and TOP (0) PERCENT return no row without running their
-- input (the division by zero is never evaluated), yet keep their columns; the query is
-- still bound, so a wrong column is an error.
SELECT TOP (0) n, n / 0 AS never FROM dbo.nums ORDER BY n;
DECLARE @zero int = 0;
SELECT TOP (@zero) n / 0 AS never FROM dbo.nums;
SELECT TOP (0) PERCENT a.n / 0 AS never FROM dbo.nums AS a CROSS JOIN dbo.nums AS b;
SELECT TOP (0) WITH TIES n / 0 AS never FROM dbo.nums ORDER BY n;
SELECT * FROM (SELECT TOP (0) n / 0 AS never FROM dbo.nums) AS d;
GO
SELECT TOP (0) nosuch FROM dbo.nums;
GO
