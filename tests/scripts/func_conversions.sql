-- CAST, CONVERT with styles, TRY_CAST/TRY_CONVERT, implicit conversions and the result types of arithmetic.
SET NOCOUNT ON;
SELECT CAST('42' AS int) AS int_from_text, CAST(3.99 AS int) AS truncated, CAST(-3.99 AS int) AS neg_trunc;
SELECT CAST(2.5 AS decimal(5, 2)) AS dec_val, CAST(1 AS bit) AS bit1, CAST(0 AS bit) AS bit0, CAST(-7 AS bit) AS bit_nonzero;
SELECT CONVERT(varchar(10), CAST('2024-03-05' AS date), 101) AS us_style, CONVERT(varchar(10), CAST('2024-03-05' AS date), 103) AS uk_style, CONVERT(varchar(8), CAST('13:45:10' AS time), 108) AS time_style;
SELECT TRY_CAST('abc' AS int) AS bad_int, TRY_CONVERT(date, '2024-02-30') AS bad_date, TRY_CAST('12' AS int) AS good_int;
SELECT 1 + '2' AS int_plus_text, '1' + '2' AS text_plus_text, 5 / 2 AS int_div, 5 / 2.0 AS dec_div, 5 % 3 AS modulo;
SELECT CAST(123.456 AS decimal(6, 2)) AS rounded, CAST(1.5 AS float) * 2 AS float_val, CAST(10 AS money) / 4 AS money_val;
SELECT CAST(CAST('2024-01-02 03:04:05.123' AS datetime2(3)) AS varchar(30)) AS dt2_text, CAST(CAST('20240102' AS date) AS datetime) AS as_datetime;
GO
