-- mesquite-sql: -e
SET NOCOUNT ON;
PRINT 'echoed first';
GO
SELECT 2 AS two;
GO 2
