-- Msg 8134: divide by zero ends the statement, not the batch; a failed UPDATE changes no row.
SET NOCOUNT ON;
DECLARE @zero int = 0, @r int = 7;
SET @r = 10 / @zero;
PRINT CONCAT('batch continues, @r is still ', @r);
SET @r = 10 % @zero;
DECLARE @f float = 1.0 / 0;
PRINT 'end of batch';
GO
CREATE TABLE dbo.d (a int NOT NULL, b int NOT NULL);
INSERT INTO dbo.d VALUES (10, 2), (2, 0);
UPDATE dbo.d SET a = a / b;
SELECT a, b FROM dbo.d ORDER BY a;
GO
