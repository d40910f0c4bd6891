-- Seed 004 re-created: backups to the NUL device to measure read throughput, of a
-- database spread over several data files, plus the restore forms.
CREATE DATABASE Warehouse
ON PRIMARY
  (NAME = Warehouse_1, FILENAME = 'G:\WH\Warehouse_1.mdf', SIZE = 100GB, FILEGROWTH = 10GB),
  (NAME = Warehouse_2, FILENAME = 'H:\WH\Warehouse_2.ndf', SIZE = 100GB, FILEGROWTH = 10GB),
FILEGROUP Facts DEFAULT
  (NAME = Warehouse_3, FILENAME = 'I:\WH\Warehouse_3.ndf', SIZE = 100GB),
  (NAME = Warehouse_4, FILENAME = 'J:\WH\Warehouse_4.ndf', SIZE = 100GB, MAXSIZE = 2TB)
LOG ON
  (NAME = Warehouse_log, FILENAME = 'L:\WH\Warehouse_log.ldf', SIZE = 32GB, FILEGROWTH = 8GB)
COLLATE SQL_Latin1_General_CP1_CI_AS;
GO
BACKUP DATABASE Warehouse TO DISK = N'NUL'
WITH COPY_ONLY, CHECKSUM, COMPRESSION, STATS = 5, BUFFERCOUNT = 64, MAXTRANSFERSIZE = 4194304;
GO
BACKUP DATABASE [Warehouse]
TO DISK = N'K:\Backup\WH_1.bak', DISK = N'K:\Backup\WH_2.bak', DISK = N'K:\Backup\WH_3.bak'
WITH INIT, FORMAT, NAME = N'Warehouse full', DESCRIPTION = N'nightly', STATS, NO_COMPRESSION, BLOCKSIZE = 65536;
GO
BACKUP LOG Warehouse TO DISK = 'K:\Backup\WH_log.trn' WITH NOINIT, NOFORMAT, CONTINUE_AFTER_ERROR, RETAINDAYS = 7;
GO
DECLARE @target nvarchar(260) = N'K:\Backup\WH_diff.bak', @db sysname = N'Warehouse';
BACKUP DATABASE @db TO DISK = @target WITH DIFFERENTIAL, STOP_ON_ERROR, NO_CHECKSUM;
GO
RESTORE VERIFYONLY FROM DISK = N'K:\Backup\WH_1.bak', DISK = N'K:\Backup\WH_2.bak', DISK = N'K:\Backup\WH_3.bak' WITH CHECKSUM;
GO
RESTORE HEADERONLY FROM DISK = N'K:\Backup\WH_1.bak';
RESTORE FILELISTONLY FROM DISK = N'K:\Backup\WH_1.bak' WITH FILE = 1;
RESTORE LABELONLY FROM DISK = N'K:\Backup\WH_1.bak';
GO
RESTORE DATABASE Warehouse_Copy
FROM DISK = N'K:\Backup\WH_1.bak', DISK = N'K:\Backup\WH_2.bak', DISK = N'K:\Backup\WH_3.bak'
WITH MOVE 'Warehouse_1' TO 'M:\Copy\WH_1.mdf',
     MOVE 'Warehouse_2' TO 'M:\Copy\WH_2.ndf',
     MOVE N'Warehouse_log' TO N'M:\Copy\WH_log.ldf',
     REPLACE, NORECOVERY, STATS = 10;
GO
RESTORE LOG Warehouse_Copy FROM DISK = 'K:\Backup\WH_log.trn'
WITH STOPAT = '2024-03-01T12:00:00', RECOVERY, CONTINUE_AFTER_ERROR;
GO
RESTORE DATABASE Warehouse_Copy WITH RECOVERY;
GO
SELECT TOP (20) database_name, backup_start_date, backup_finish_date,
  mb = backup_size / 1048576.0,
  mb_per_s = backup_size / 1048576.0 / NULLIF(DATEDIFF(SECOND, backup_start_date, backup_finish_date), 0)
FROM msdb.dbo.backupset
ORDER BY backup_finish_date DESC;
GO
SELECT DB_NAME(vfs.database_id) AS db, mf.physical_name, vfs.num_of_reads, vfs.num_of_bytes_read,
  vfs.io_stall_read_ms, avg_read_ms = vfs.io_stall_read_ms * 1.0 / NULLIF(vfs.num_of_reads, 0)
FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS vfs
JOIN sys.master_files AS mf ON mf.database_id = vfs.database_id AND mf.file_id = vfs.file_id
WHERE vfs.database_id = DB_ID(N'Warehouse');
