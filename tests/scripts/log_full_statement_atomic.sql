-- A statement that fills a capped log fails whole (9002) and changes nothing, whatever
-- its rollback must write (undoing deletes from a heap and its nonclustered index can
-- split pages again: the rollback may grow the log past MAXSIZE rather than stop half
-- way). In SIMPLE recovery the log truncates at the checkpoint it asks for when it is
-- 70% full, so autocommit inserts of 20 MB through an 8 MB log all succeed without a
-- manual CHECKPOINT.
CREATE DATABASE logcap ON (NAME = logcap, FILENAME = 'C:\logcap.mdf', SIZE = 16MB)
  LOG ON (NAME = logcap_log, FILENAME = 'C:\logcap.ldf', SIZE = 2MB, MAXSIZE = 8MB);
GO
ALTER DATABASE logcap SET RECOVERY SIMPLE;
GO
USE logcap;
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY NONCLUSTERED, pad char(2000) NOT NULL);
DECLARE @i int = 0, @failed int = 0;
WHILE @i < 100
BEGIN
  BEGIN TRY
    INSERT dbo.t (id, pad)
    SELECT TOP 100 @i * 100 + ROW_NUMBER() OVER (ORDER BY (SELECT 1)), REPLICATE('y', 2000) FROM sys.all_columns;
  END TRY
  BEGIN CATCH
    SET @failed += 1;
  END CATCH
  SET @i += 1;
END
SELECT COUNT(*) AS rows_inserted, @failed AS failed_inserts FROM dbo.t;
GO
USE logcap;
SET NOCOUNT ON;
BEGIN TRY
  DELETE FROM dbo.t WHERE id <= 1000;
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS error_number, ERROR_SEVERITY() AS severity;
END CATCH
SELECT COUNT(*) AS rows_after_failed_delete, MIN(id) AS min_id FROM dbo.t;
DELETE FROM dbo.t WHERE id <= 200;
SELECT COUNT(*) AS rows_after_small_delete FROM dbo.t;
BEGIN TRY
  UPDATE dbo.t SET pad = REPLICATE('z', 2000);
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS error_number;
END CATCH
SELECT COUNT(*) AS rows_with_z FROM dbo.t WHERE pad LIKE 'z%';
DBCC CHECKDB (logcap) WITH NO_INFOMSGS;
CHECKPOINT;
INSERT dbo.t (id, pad) VALUES (1, 'after');
SELECT COUNT(*) AS rows_at_end FROM dbo.t;
GO
USE master;
DROP DATABASE logcap;
