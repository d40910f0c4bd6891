-- Math functions (ABS, CEILING, FLOOR, ROUND, POWER, SIGN) and date functions (DATEADD, DATEDIFF, DATEPART, EOMONTH, ...).
SET NOCOUNT ON;
SELECT ABS(-5) AS abs_val, CEILING(2.1) AS ceil_val, FLOOR(-2.1) AS floor_val, ROUND(2.567, 2) AS round_val, POWER(2, 10) AS pow_val, SIGN(-3) AS sign_val;
DECLARE @d date = '2024-01-31';
SELECT DATEADD(day, 1, @d) AS next_day, DATEADD(month, 1, @d) AS next_month, EOMONTH('2024-02-10') AS eom, DATEFROMPARTS(2024, 12, 25) AS xmas;
SELECT DATEDIFF(day, '2024-01-01', '2024-03-01') AS days_between, DATEDIFF(year, '2023-12-31', '2024-01-01') AS year_edges, DATEPART(weekday, '2024-01-07') AS dow, YEAR(@d) AS y, MONTH(@d) AS m, DAY(@d) AS d;
SELECT CAST(DATENAME(month, @d) AS varchar(12)) AS month_name, DATEADD(hour, 36, CAST('2024-01-01' AS datetime)) AS plus_36h;
GO
