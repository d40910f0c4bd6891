-- Variables, SET and SELECT assignment, IF/ELSE, WHILE with BREAK and CONTINUE, BEGIN/END, PRINT.
SET NOCOUNT ON;
DECLARE @i int = 0, @sum int = 0, @s varchar(20);
WHILE @i < 10
BEGIN
    SET @i = @i + 1;
    IF @i % 2 = 0 CONTINUE;
    IF @i > 7 BREAK;
    SET @sum += @i;
END
PRINT 'i = ' + CAST(@i AS varchar(10)) + ', sum = ' + CAST(@sum AS varchar(10));
IF @sum > 100
    PRINT 'big';
ELSE IF @sum > 10
BEGIN
    PRINT 'medium';
    SET @s = 'set in block';
END
ELSE
    PRINT 'small';
PRINT @s;
SELECT @s = 'from select', @i = 42;
SELECT @s AS s, @i AS i;
DECLARE @n int;
PRINT ISNULL(CAST(@n AS varchar(10)), 'n is null');
SELECT @n = 5 WHERE 1 = 0;
SELECT @n AS unchanged;
GO
PRINT @i;
GO
