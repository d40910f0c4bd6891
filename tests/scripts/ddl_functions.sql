-- User-defined functions: scalar (with a DEFAULT argument), inline table-valued, multi-statement table-valued.
SET NOCOUNT ON;
GO
CREATE FUNCTION dbo.add_tax (@amount decimal(10, 2), @rate decimal(4, 2) = 0.25)
RETURNS decimal(10, 2)
AS
BEGIN
    RETURN @amount * (1 + @rate);
END
GO
CREATE FUNCTION dbo.numbers (@n int)
RETURNS TABLE
AS
RETURN (SELECT value AS n FROM (VALUES (1), (2), (3), (4), (5)) AS v(value) WHERE value <= @n);
GO
CREATE FUNCTION dbo.squares (@n int)
RETURNS @out TABLE (n int NOT NULL, sq int NOT NULL)
AS
BEGIN
    DECLARE @i int = 1;
    WHILE @i <= @n
    BEGIN
        INSERT INTO @out VALUES (@i, @i * @i);
        SET @i += 1;
    END
    RETURN;
END
GO
SELECT dbo.add_tax(10.00, 0.10) AS with_tax, dbo.add_tax(100, DEFAULT) AS default_rate;
SELECT n FROM dbo.numbers(3) ORDER BY n;
SELECT n, sq FROM dbo.squares(4) WHERE sq > 1 ORDER BY n DESC;
GO
SELECT dbo.nope(1) AS x;
GO
