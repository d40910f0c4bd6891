-- seeds/002 (delayed durability) single session, as `mesquite sql -i` runs it:
-- 200 transactions of 1000 inserted rows, then 200 of 1000 deleted rows.
-- Run with bench/sql/seed002 (prints rows/s), or by hand against a fresh data directory.
SET NOCOUNT ON;
CREATE DATABASE DDTest_Off;
GO
SET NOCOUNT ON;
USE DDTest_Off;
GO
CREATE TABLE dbo.TheTable
(
  TheID   int              IDENTITY(1,1) PRIMARY KEY,
  TheDate datetime         NOT NULL DEFAULT CURRENT_TIMESTAMP,
  RowGuid uniqueidentifier NOT NULL DEFAULT NEWID()
);
CREATE TABLE dbo.Numbers (n int PRIMARY KEY);
DECLARE @i int = 1;
WHILE @i <= 1000
BEGIN
  INSERT dbo.Numbers (n) VALUES (@i);
  SET @i += 1;
END
GO
CREATE PROCEDURE dbo.AddSomeData
  @Iterations int = 1000
AS
BEGIN
  SET NOCOUNT ON;   DECLARE @i int = 1;
  WHILE @i <= @Iterations
  BEGIN
    BEGIN TRANSACTION;     INSERT dbo.TheTable(TheDate)
      SELECT TOP (1000) sysdatetime()
      FROM dbo.Numbers AS s;     COMMIT TRANSACTION;
    SET @i += 1;
  END
END
GO
CREATE PROCEDURE dbo.DeleteSomeData
  @Iterations int = 1000
AS
BEGIN
  SET NOCOUNT ON;   DECLARE @i int = 1;
  WHILE @i <= @Iterations
  BEGIN
    BEGIN TRANSACTION;     DELETE TOP (1000) dbo.TheTable;     COMMIT TRANSACTION;
    SET @i += 1;
  END
END
GO
SET NOCOUNT ON;
DECLARE @t0 datetime2 = SYSDATETIME();
EXEC dbo.AddSomeData @Iterations = 200;
DECLARE @t1 datetime2 = SYSDATETIME();
DECLARE @n int = (SELECT COUNT(*) FROM dbo.TheTable);
EXEC dbo.DeleteSomeData @Iterations = 200;
DECLARE @t2 datetime2 = SYSDATETIME();
DECLARE @ins_ms int = DATEDIFF(millisecond, @t0, @t1), @del_ms int = DATEDIFF(millisecond, @t1, @t2);
PRINT CONCAT('insert: ', @n, ' rows in ', @ins_ms, ' ms = ', @n * 1000 / NULLIF(@ins_ms, 0), ' rows/s');
PRINT CONCAT('delete: ', @n, ' rows in ', @del_ms, ' ms = ', @n * 1000 / NULLIF(@del_ms, 0), ' rows/s');
PRINT CONCAT('left: ', (SELECT COUNT(*) FROM dbo.TheTable), ' rows');
GO
