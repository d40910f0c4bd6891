-- GROUP BY and HAVING; COUNT, SUM, AVG (integer AVG truncates), MIN, MAX, COUNT(DISTINCT); grouping by an expression.
SET NOCOUNT ON;
CREATE TABLE dbo.sales (region varchar(6) NOT NULL, yr int NOT NULL, amount int NOT NULL);
INSERT INTO dbo.sales VALUES ('north', 2023, 10), ('north', 2023, 15), ('north', 2024, 20), ('south', 2023, 7), ('south', 2024, 8), ('west', 2024, 3);
GO
SELECT region, COUNT(*) AS n, SUM(amount) AS total, AVG(amount) AS avg_amount, MIN(amount) AS lo, MAX(amount) AS hi
FROM dbo.sales GROUP BY region ORDER BY region;
SELECT yr, SUM(amount) AS total FROM dbo.sales GROUP BY yr HAVING SUM(amount) > 31 ORDER BY yr;
SELECT COUNT(DISTINCT yr) AS years, COUNT(DISTINCT region) AS regions, AVG(CAST(amount AS decimal(10, 2))) AS avg_dec FROM dbo.sales;
SELECT amount % 2 AS parity, COUNT(*) AS n FROM dbo.sales GROUP BY amount % 2 ORDER BY parity;
SELECT SUM(amount) AS none, COUNT(*) AS zero FROM dbo.sales WHERE 1 = 0;
GO
SELECT region, yr FROM dbo.sales GROUP BY region;
GO
