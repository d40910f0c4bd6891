-- A transaction that fills a log that may not grow gets 9002 (severity 17, state 2: the
-- statement fails, the transaction stays open) and can still roll back: forward work
-- reserves the log space its rollback needs (and page splits under way when the log
-- fills roll back too), so the rollback never fails for want of log and the database is
-- consistent at once, without a restart. A checkpoint then frees the log for new work.
CREATE DATABASE logfull ON (NAME = logfull, FILENAME = 'C:\logfull.mdf', SIZE = 8MB)
  LOG ON (NAME = logfull_log, FILENAME = 'C:\logfull.ldf', SIZE = 1MB, FILEGROWTH = 0);
GO
USE logfull;
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY, pad char(800) NOT NULL DEFAULT 'x');
CREATE TABLE dbo.kept (id int PRIMARY KEY);
INSERT dbo.kept VALUES (1), (2), (3);
GO
SET NOCOUNT ON;
BEGIN TRANSACTION;
DECLARE @i int = 1, @err int = 0, @sev int, @msg nvarchar(400);
WHILE @i <= 20000 AND @err = 0
BEGIN
  BEGIN TRY
    INSERT dbo.t (id) VALUES (@i);
  END TRY
  BEGIN CATCH
    SELECT @err = ERROR_NUMBER(), @sev = ERROR_SEVERITY(), @msg = ERROR_MESSAGE();
  END CATCH
  SET @i += 1;
END
SELECT @err AS error_number, @sev AS severity,
       CASE WHEN @i > 100 THEN 'yes' END AS many_rows_first, @@TRANCOUNT AS trancount;
-- After a checkpoint, what holds the log is this open transaction, and 9002 says so.
CHECKPOINT;
BEGIN TRY
  INSERT dbo.t (id) VALUES (@i);
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS error_number, ERROR_MESSAGE() AS message;
END CATCH
SELECT log_reuse_wait, log_reuse_wait_desc FROM sys.databases WHERE name = 'logfull';
ROLLBACK;
SELECT COUNT(*) AS rows_after_rollback FROM dbo.t;
SELECT COUNT(*) AS kept FROM dbo.kept;
DBCC CHECKDB (logfull) WITH NO_INFOMSGS;
CHECKPOINT;
SELECT log_reuse_wait, log_reuse_wait_desc FROM sys.databases WHERE name = 'logfull';
INSERT dbo.t (id) VALUES (1), (2);
SELECT COUNT(*) AS rows_after_checkpoint FROM dbo.t;
GO
USE master;
DROP DATABASE logfull;
