-- A log that is full and may not grow is repaired by giving it room: MODIFY FILE's
-- MAXSIZE and SIZE apply to the running log at once, and the work that got 9002 then
-- fits.
CREATE DATABASE logfix ON (NAME = logfix, FILENAME = 'C:\logfix.mdf', SIZE = 8MB)
  LOG ON (NAME = logfix_log, FILENAME = 'C:\logfix.ldf', SIZE = 1MB, MAXSIZE = 1MB);
GO
USE logfix;
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY, pad char(2000) NOT NULL DEFAULT 'x');
GO
USE logfix;
SET NOCOUNT ON;
BEGIN TRY
  BEGIN TRANSACTION;
  INSERT dbo.t (id) SELECT TOP 1000 ROW_NUMBER() OVER (ORDER BY (SELECT 1)) FROM sys.all_columns;
  COMMIT;
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS error_number;
  IF @@TRANCOUNT > 0 ROLLBACK;
END CATCH
SELECT COUNT(*) AS rows_after_9002 FROM dbo.t;
GO
ALTER DATABASE logfix MODIFY FILE (NAME = logfix_log, MAXSIZE = 64MB);
ALTER DATABASE logfix MODIFY FILE (NAME = logfix_log, SIZE = 16MB);
GO
USE logfix;
SET NOCOUNT ON;
SELECT name, size * 8 / 1024 AS size_mb, max_size * 8 / 1024 AS max_size_mb FROM sys.database_files WHERE type = 1;
BEGIN TRANSACTION;
INSERT dbo.t (id) SELECT TOP 1000 ROW_NUMBER() OVER (ORDER BY (SELECT 1)) FROM sys.all_columns;
COMMIT;
SELECT COUNT(*) AS rows_after_repair FROM dbo.t;
DBCC CHECKDB (logfix) WITH NO_INFOMSGS;
GO
USE master;
DROP DATABASE logfix;
