-- Conversion errors: 245 (text to int), 241 (text to date), 220 and 8115 (overflow), 8114 (text to decimal).
-- Conversion errors end the batch, so each case has its own.
DECLARE @i int;
SET @i = CAST('abc' AS int);
PRINT 'not reached: 245 ends the batch';
GO
DECLARE @i int = 'x1';
GO
DECLARE @d date;
SET @d = '2024-13-01';
GO
DECLARE @t tinyint;
SET @t = 300;
GO
DECLARE @n decimal(5, 2) = CAST('12a' AS decimal(5, 2));
GO
DECLARE @n decimal(5, 2) = 12345.6;
GO
DECLARE @i int = 2147483647 + 1;
GO
PRINT 'the next batch runs';
GO
