-- Msg 102 / 156: a syntax error stops the whole batch before it runs; the line is the offending token's.
PRINT 'not printed';
SELECT 1 +;
GO
SELECT *
FROM
WHERE 1 = 1;
GO
SELECT 'ok' AS fine;
GO
IF 1 = 1
BEGIN
    PRINT 'x'
GO
SELECT 1 AS a,, 2 AS b;
GO
CREATE TABLE (id int);
GO
