-- How values print: each column as wide as its type's display size, numbers right-aligned, NULL as NULL.
SET NOCOUNT ON;
SELECT CAST(1 AS tinyint) AS tiny, CAST(-2 AS smallint) AS small, CAST(3 AS int) AS i, CAST(4 AS bigint) AS big, CAST(1 AS bit) AS flag;
SELECT CAST(12.5 AS decimal(6, 3)) AS dec6_3, CAST(7.25 AS money) AS mon, CAST(0.5 AS float) AS flt, CAST(2.5 AS real) AS rl;
SELECT CAST('2024-02-29' AS date) AS d, CAST('2024-02-29 13:14:15.997' AS datetime) AS dt, CAST('2024-02-29 13:14:15.1234567' AS datetime2) AS dt2, CAST('13:14:15.5' AS time(1)) AS t;
SELECT CAST('abc' AS char(5)) + '|' AS fixed, CAST(N'ünï' AS nvarchar(6)) AS uni, CAST(0x0A0B AS varbinary(4)) AS bin, CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier) AS guid;
SELECT CAST(NULL AS int) AS null_int, CAST(NULL AS varchar(3)) AS nv, CAST(NULL AS date) AS null_date;
SELECT 'no name', 1;
GO
