-- The DMVs as seed 002 (measuring delayed durability) uses them, in one session:
-- databases with explicit files, capture tables made with SELECT TOP (0) ... * INTO
-- from sys.dm_io_virtual_file_stats and sys.dm_exec_session_wait_stats, procedures that
-- log them before and after a workload, and the analysis over the captures. Only
-- deterministic facts are printed (column lists, counts compared with 0).
SET NOCOUNT ON;
CREATE DATABASE DDTest_Off
    ON (    name = N'DDTest_Off_data', size = 8MB, filegrowth = 8MB,
        filename = N'K:\SQL\Data\DD\DDTest_Off.mdf')
LOG ON (    name = N'DDTest_Off_log',  size = 8MB, filegrowth = 8MB,
        filename = N'J:\SQL\Data\DD\DDTest_Off.ldf');
GO
CREATE DATABASE DDTest_On
    ON (    name = N'DDTest_On_data',  size = 8MB, filegrowth = 8MB,
        filename = N'K:\SQL\Data\DD\DDTest_On.mdf')
LOG ON (    name = N'DDTest_On_log',   size = 8MB, filegrowth = 8MB,
        filename = N'J:\SQL\Data\DD\DDTest_On.ldf');
GO
ALTER DATABASE DDTest_On SET DELAYED_DURABILITY = ALLOWED;
CREATE DATABASE Utility;
GO
-- The files as sys.master_files shows them.
SELECT d.name AS db, f.file_id, f.name, f.type_desc, f.size, f.max_size, f.growth, f.is_percent_growth,
       RIGHT(f.physical_name, 14) AS physical_name_end
FROM sys.master_files AS f JOIN sys.databases AS d ON d.database_id = f.database_id
WHERE f.database_id = DB_ID('DDTest_Off') ORDER BY f.file_id;
USE DDTest_Off;
SELECT file_id, name, type_desc, size, growth FROM sys.database_files ORDER BY file_id;
GO
USE DDTest_Off;
GO
CREATE TABLE dbo.TheTable
(
  TheID   int              IDENTITY(1,1) PRIMARY KEY,
  TheDate datetime         NOT NULL DEFAULT CURRENT_TIMESTAMP,
  RowGuid uniqueidentifier NOT NULL DEFAULT NEWID() );
GO
CREATE PROCEDURE dbo.AddSomeData
  @Iterations int = 1000
AS
BEGIN
  SET NOCOUNT ON;   DECLARE @i int = 1;
  WHILE @i <= @Iterations
  BEGIN
    BEGIN TRANSACTION;     INSERT dbo.TheTable(TheDate) VALUES (sysdatetime()), (sysdatetime());
    COMMIT TRANSACTION;
    SET @i += 1;
  END
END
GO
USE Utility;
GO
CREATE SCHEMA DD AUTHORIZATION dbo;
GO
SELECT TOP (0)
  TestID     = CONVERT(tinyint, 1),
  StepID     = CONVERT(tinyint, 1),
  EventTime  = sysdatetime(),
  *
INTO DD.FileStats
FROM sys.dm_io_virtual_file_stats(DB_ID('model'), 2);
GO
CREATE PROCEDURE DD.LogFileStats
  @TestID tinyint,
  @StepID tinyint
AS
BEGIN
  INSERT DD.FileStats
    SELECT @TestID, @StepID, sysdatetime(), *
    FROM sys.dm_io_virtual_file_stats
    (DB_ID(CASE WHEN @TestID IN (1,3) THEN 'DDTest_Off' ELSE 'DDTest_On' END), 2);
END
GO
SELECT TOP (0)
  TestID     = CONVERT(tinyint, 1),
  EventTime  = sysdatetime(),
  *
INTO DD.WaitStats
FROM sys.dm_exec_session_wait_stats;
GO
CREATE TABLE DD.RunningSPIDs
(
  TestID     tinyint,
  SessionID  int,
  StartTime  datetime2 NOT NULL DEFAULT sysdatetime(),
  EndTime    datetime2
);
GO
CREATE PROCEDURE DD.RegisterSPID
  @TestID tinyint
AS
BEGIN
    INSERT DD.RunningSPIDs(SessionID, TestID)
      SELECT @@SPID, @TestID
      WHERE NOT EXISTS
      (
        SELECT 1 FROM DD.RunningSPIDs
        WHERE TestID    = @TestID
          AND SessionID = @@SPID
          AND EndTime   IS NULL
      );
END
GO
CREATE PROCEDURE DD.DeregisterSPID
  @TestID tinyint
AS
BEGIN
    UPDATE DD.RunningSPIDs
       SET EndTime   = sysdatetime()
     WHERE TestID    = @TestID
       AND SessionID = @@SPID
       AND EndTime   IS NULL;
END
GO
-- The capture tables have the DMVs' columns.
SELECT c.name, t.name AS type_name, c.max_length
FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('DD.FileStats') ORDER BY c.column_id;
SELECT c.name, t.name AS type_name
FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('DD.WaitStats') ORDER BY c.column_id;
GO
-- Test 1: durable inserts, with the file stats before and after and the session's waits.
EXEC Utility.DD.LogFileStats @TestID = 1, @StepID = 10;
EXEC Utility.DD.RegisterSPID @TestID = 1;
EXEC DDTest_Off.dbo.AddSomeData @iterations = 50;
INSERT DD.WaitStats
  SELECT 1, sysdatetime(), *
    FROM sys.dm_exec_session_wait_stats
   WHERE session_id IN
   (
     SELECT SessionID
       FROM DD.RunningSPIDs
      WHERE EndTime IS NULL
   );
EXEC Utility.DD.DeregisterSPID @TestID = 1;
EXEC Utility.DD.LogFileStats @TestID = 1, @StepID = 20;
GO
SELECT TestID, StepID, database_id, file_id FROM DD.FileStats ORDER BY TestID, StepID;
-- The seed's analysis: log writes between the two samples, and the WRITELOG waits.
WITH LogFileStats AS
(
  SELECT TestID, TotalWrites, TotalWriteStall_ms FROM
  (
    SELECT TestID, StepID,
        TotalWrites = num_of_writes - LAG(num_of_writes, 1)
          OVER (PARTITION BY TestID ORDER BY StepID),
        TotalWriteStall_ms = io_stall_write_ms - LAG(io_stall_write_ms, 1)
          OVER (PARTITION BY TestID ORDER BY StepID)
      FROM DD.FileStats
  ) AS x WHERE StepID = 20
),
WritelogWaitStats (TestID, AvgWritelogWaits_ms, Waits) AS
(
  SELECT TestID, CONVERT(decimal(10,2), AVG(1.0 * HighestWait)), MAX(HighestCount) FROM
  (
    SELECT session_id, TestID, HighestWait = MAX(wait_time_ms), HighestCount = MAX(waiting_tasks_count)
      FROM DD.WaitStats WHERE wait_type = 'WRITELOG'
      GROUP BY session_id, TestID
  ) AS y GROUP BY TestID
)
SELECT l.TestID,
  log_writes_counted = CASE WHEN l.TotalWrites > 0 THEN 'yes' ELSE 'no' END,
  stall_not_negative = CASE WHEN l.TotalWriteStall_ms >= 0 THEN 'yes' ELSE 'no' END,
  writelog_waits_counted = CASE WHEN w.Waits > 0 THEN 'yes' ELSE 'no' END,
  avg_wait_not_negative = CASE WHEN w.AvgWritelogWaits_ms >= 0 THEN 'yes' ELSE 'no' END
FROM LogFileStats AS l
INNER JOIN WritelogWaitStats AS w ON l.TestID = w.TestID
ORDER BY l.TestID;
GO
-- File stats for every file, joined to sys.master_files and sys.databases.
SELECT d.name, f.type_desc, CASE WHEN v.num_of_writes > 0 THEN 'written' ELSE 'not written' END AS writes,
       CASE WHEN v.size_on_disk_bytes = f.size * 8192 THEN 'size matches' ELSE 'size differs' END AS size
FROM sys.dm_io_virtual_file_stats(NULL, NULL) AS v
JOIN sys.master_files AS f ON f.database_id = v.database_id AND f.file_id = v.file_id
JOIN sys.databases AS d ON d.database_id = v.database_id
WHERE d.name LIKE 'DDTest%'
ORDER BY v.database_id, v.file_id;
SELECT COUNT(*) AS log_files FROM sys.dm_io_virtual_file_stats(NULL, 2);
SELECT COUNT(*) AS no_such_database FROM sys.dm_io_virtual_file_stats(32000, NULL);
GO
-- The other DMVs: sessions, requests, performance counters, instance waits.
SELECT s.session_id - @@SPID AS own, s.status, s.login_name, d.name AS db, s.is_user_process,
       s.transaction_isolation_level, s.open_transaction_count
FROM sys.dm_exec_sessions AS s JOIN sys.databases AS d ON d.database_id = s.database_id
WHERE s.session_id = @@SPID;
SELECT r.status, r.command, r.wait_type, r.blocking_session_id, d.name AS db
FROM sys.dm_exec_requests AS r JOIN sys.databases AS d ON d.database_id = r.database_id
WHERE r.session_id = @@SPID;
SELECT RTRIM(object_name) AS object_name, RTRIM(counter_name) AS counter_name, cntr_type,
       CASE WHEN cntr_value > 0 THEN 'counted' ELSE 'zero' END AS value
FROM sys.dm_os_performance_counters
WHERE (object_name = 'SQLServer:Databases' AND instance_name = 'DDTest_Off'
       AND counter_name IN ('Transactions/sec', 'Log Flushes/sec', 'Log Bytes Flushed/sec'))
   OR counter_name IN ('Batch Requests/sec', 'User Connections')
ORDER BY object_name, counter_name;
SELECT RTRIM(counter_name) AS counter_name, cntr_type FROM sys.dm_os_performance_counters
WHERE instance_name = 'DDTest_Off' AND counter_name = 'Log Flush Wait Time';
SELECT CASE WHEN waiting_tasks_count > 0 THEN 'waited' ELSE 'none' END AS writelog
FROM sys.dm_os_wait_stats WHERE wait_type = 'WRITELOG';
DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR);
SELECT SUM(waiting_tasks_count) AS after_clear FROM sys.dm_os_wait_stats;
SELECT COUNT(*) AS session_waits_kept FROM sys.dm_exec_session_wait_stats
WHERE session_id = @@SPID AND wait_type = 'WRITELOG';
GO
-- DBCC SQLPERF(LOGSPACE): one row per database.
CREATE TABLE #logspace (db sysname, size_mb real, used_pct real, status int);
INSERT #logspace EXEC ('DBCC SQLPERF(LOGSPACE) WITH NO_INFOMSGS');
SELECT db, CASE WHEN size_mb > 0 THEN 'sized' ELSE 'empty' END AS size,
       CASE WHEN used_pct > 0 AND used_pct <= 100 THEN 'in range' ELSE 'out of range' END AS used, status
FROM #logspace ORDER BY db;
-- TABLERESULTS gives the same columns. The used percentage moves with background
-- checkpoints (on disk), so it is shown as a range.
CREATE TABLE #logspace2 ([Database Name] sysname, [Log Size (MB)] real, [Log Space Used (%)] real, Status int);
INSERT #logspace2 EXEC ('DBCC SQLPERF(LOGSPACE) WITH NO_INFOMSGS, TABLERESULTS');
SELECT [Database Name], [Log Size (MB)],
       CASE WHEN [Log Space Used (%)] > 0 AND [Log Space Used (%)] <= 100 THEN 'in range' ELSE 'out of range' END
           AS [Log Space Used (%)],
       Status
FROM #logspace2;
DBCC SQLPERF(NOSUCHTHING);
GO
-- The views' columns.
SELECT TOP (0) * FROM sys.dm_os_wait_stats;
SELECT TOP (0) * FROM sys.dm_exec_session_wait_stats;
SELECT TOP (0) * FROM sys.dm_io_virtual_file_stats(NULL, NULL);
SELECT TOP (0) * FROM sys.dm_os_performance_counters;
SELECT TOP (0) session_id, login_time, host_name, program_name, login_name, status, cpu_time,
       reads, writes, logical_reads, is_user_process, transaction_isolation_level, database_id
FROM sys.dm_exec_sessions;
SELECT TOP (0) session_id, request_id, start_time, status, command, database_id, blocking_session_id,
       wait_type, wait_time, last_wait_type, wait_resource, cpu_time, total_elapsed_time
FROM sys.dm_exec_requests;
