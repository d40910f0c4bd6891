-- String functions: LEN/DATALENGTH, SUBSTRING, LEFT/RIGHT, CHARINDEX, REPLACE, UPPER/LOWER, trims, REPLICATE, STUFF, CONCAT, +.
-- Results are cast to varchar(12) so that column widths do not depend on each function's result length.
SET NOCOUNT ON;
DECLARE @s varchar(20) = '  Hello World  ';
SELECT LEN(@s) AS len_val, DATALENGTH(@s) AS bytes, LEN(LTRIM(RTRIM(@s))) AS trimmed_len;
SELECT CAST(SUBSTRING('abcdef', 2, 3) AS varchar(12)) AS sub, CAST(LEFT('abcdef', 2) AS varchar(12)) AS l, CAST(RIGHT('abcdef', 2) AS varchar(12)) AS r;
SELECT CHARINDEX('lo', 'hello hello') AS first_pos, CHARINDEX('lo', 'hello hello', 5) AS second_pos, CHARINDEX('zz', 'hello') AS missing;
SELECT CAST(REPLACE('a-b-c', '-', '+') AS varchar(12)) AS replaced, CAST(UPPER('MiXeD') AS varchar(12)) AS up, CAST(LOWER('MiXeD') AS varchar(12)) AS low;
SELECT CAST(REPLICATE('ab', 3) AS varchar(12)) AS rep, CAST(STUFF('abcdef', 2, 3, 'XY') AS varchar(12)) AS stuffed, CAST(REVERSE('abc') AS varchar(12)) AS rev;
SELECT CAST(CONCAT('a', NULL, 1, 'b') AS varchar(12)) AS concat_val, CAST('a' + NULL AS varchar(12)) AS plus_null, CAST(LTRIM('  x') + '|' AS varchar(12)) AS ltrimmed;
SELECT CASE WHEN 'abc' = 'ABC' THEN 'equal' ELSE 'different' END AS ci_compare, CASE WHEN 'a ' = 'a' THEN 'equal' ELSE 'different' END AS trailing_spaces;
SELECT ASCII('A') AS ascii_a, CHAR(66) AS char_66;
GO
