-- Seed 002 re-created: two databases with explicit files, one allowing delayed
-- durability; insert and delete workloads in procedures; file and wait statistics
-- captured around the runs; the aggregation that compares them.
CREATE DATABASE Ledger_Durable
    ON (    name = N'Ledger_Durable_data', size = 8192MB, filegrowth = 512MB,
        filename = N'E:\Data\Ledger_Durable.mdf')
LOG ON (    name = N'Ledger_Durable_log',  size = 4096MB, filegrowth = 512MB,
        filename = N'F:\Logs\Ledger_Durable.ldf');
GO
CREATE DATABASE Ledger_Lazy
    ON PRIMARY ( name = N'Ledger_Lazy_data', size = 8192MB, maxsize = UNLIMITED, filegrowth = 10%,
        filename = N'E:\Data\Ledger_Lazy.mdf')
LOG ON (    name = N'Ledger_Lazy_log',   size = 4096MB, maxsize = 64GB, filegrowth = 1024KB,
        filename = N'F:\Logs\Ledger_Lazy.ldf');
GO
ALTER DATABASE Ledger_Lazy SET DELAYED_DURABILITY = ALLOWED;
GO
ALTER DATABASE Ledger_Durable SET DELAYED_DURABILITY = DISABLED, RECOVERY SIMPLE;
GO
ALTER DATABASE Ledger_Lazy SET RECOVERY FULL, PAGE_VERIFY CHECKSUM;
GO
USE Ledger_Lazy;
GO
CREATE TABLE dbo.Entries
(
  EntryID   int              IDENTITY(1,1) PRIMARY KEY,
  PostedAt  datetime         NOT NULL DEFAULT CURRENT_TIMESTAMP,
  Token     uniqueidentifier NOT NULL DEFAULT NEWID() );
GO
CREATE PROCEDURE dbo.PostEntries
  @Batches int = 1000
AS
BEGIN
  SET NOCOUNT ON;   DECLARE @n int = 1;
  WHILE @n <= @Batches
  BEGIN
    BEGIN TRANSACTION;     INSERT dbo.Entries(PostedAt)
      SELECT TOP (1000) sysdatetime()
      FROM sys.all_columns AS ac;     COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);
    SET @n += 1;
  END
END
GO
CREATE PROCEDURE dbo.PurgeEntries
  @Batches int = 1000
AS
BEGIN
  SET NOCOUNT ON;   DECLARE @n int = 1;
  WHILE @n <= @Batches
  BEGIN
    BEGIN TRANSACTION;     DELETE TOP (1000) dbo.Entries;     COMMIT TRANSACTION -- WITH (DELAYED_DURABILITY = ON);
    SET @n += 1;
  END
END
GO
USE Toolbox;
GO
CREATE SCHEMA Perf AUTHORIZATION dbo;
GO
SELECT TOP (0)
  RunID      = CONVERT(tinyint, 1),
  PhaseID    = CONVERT(tinyint, 1),
  CapturedAt = sysdatetime(),
  *
INTO Perf.LogFileIO
FROM sys.dm_io_virtual_file_stats(DB_ID('model'), 2);
GO
CREATE PROCEDURE Perf.CaptureLogFileIO
  @RunID tinyint,
  @PhaseID tinyint
AS
BEGIN
  INSERT Perf.LogFileIO
    SELECT @RunID, @PhaseID, sysdatetime(), *
    FROM sys.dm_io_virtual_file_stats
    (DB_ID(CASE WHEN @RunID IN (1,3) THEN 'Ledger_Durable' ELSE 'Ledger_Lazy' END), 2);
END
GO
SELECT TOP (0)
  RunID      = CONVERT(tinyint, 1),
  CapturedAt = sysdatetime(),
  *
INTO Perf.SessionWaits
FROM sys.dm_exec_session_wait_stats;
GO
CREATE PROCEDURE Perf.CaptureWaits
  @RunID tinyint
AS
BEGIN
  WHILE 1 = 1
  BEGIN
    INSERT Perf.SessionWaits
      SELECT @RunID, sysdatetime(), *
        FROM sys.dm_exec_session_wait_stats
       WHERE session_id IN
       (
         SELECT SessionID
           FROM Perf.Workers
          WHERE FinishedAt IS NULL
       );     WAITFOR DELAY '00:00:05';
  END
END
GO
CREATE TABLE Perf.Workers
(
  RunID      tinyint,
  SessionID  int,
  StartedAt  datetime2 NOT NULL DEFAULT sysdatetime(),
  FinishedAt datetime2
);
GO
CREATE PROCEDURE Perf.Enlist
  @RunID tinyint
AS
BEGIN
    INSERT Perf.Workers(SessionID, RunID)
      SELECT @@SPID, @RunID
      WHERE NOT EXISTS
      (
        SELECT 1 FROM Perf.Workers
        WHERE RunID      = @RunID
          AND SessionID  = @@SPID
          AND FinishedAt IS NULL
      );
END
GO
CREATE PROCEDURE Perf.Retire
  @RunID tinyint
AS
BEGIN
    UPDATE Perf.Workers
       SET FinishedAt = sysdatetime()
     WHERE RunID      = @RunID
       AND SessionID  = @@SPID
       AND FinishedAt IS NULL;
END
GO
EXEC Toolbox.Perf.CaptureLogFileIO @RunID = 1, @PhaseID = 10;
EXEC Toolbox.Perf.CaptureWaits @RunID = 1;
-- EXEC Toolbox.Perf.CaptureLogFileIO @RunID = 1, @PhaseID = 20;
GO
EXEC Toolbox.Perf.Enlist @RunID = 2;
EXEC Ledger_Lazy.dbo.PostEntries @batches = 1000;
EXEC Toolbox.Perf.Retire @RunID = 2;
GO
;WITH FileIO AS
(
  SELECT Workers, RunID, LogWrites, LogStall_ms FROM
  (
    SELECT Workers = 16, RunID, PhaseID,
        LogWrites = num_of_writes - LAG(num_of_writes, 1)
          OVER (PARTITION BY RunID ORDER BY PhaseID),
        LogStall_ms = io_stall_write_ms - LAG(io_stall_write_ms, 1)
          OVER (PARTITION BY RunID ORDER BY PhaseID)
      FROM Perf.LogFileIO16
    UNION ALL
    SELECT Workers = 8,  RunID, PhaseID,
        num_of_writes - LAG(num_of_writes, 1)
          OVER (PARTITION BY RunID ORDER BY PhaseID),
        io_stall_write_ms - LAG(io_stall_write_ms, 1)
          OVER (PARTITION BY RunID ORDER BY PhaseID)
      FROM Perf.LogFileIO8
  ) AS x WHERE PhaseID = 20
),
LogWaits (Workers, RunID, AvgWritelog_ms) AS
(
  SELECT Workers, RunID, CONVERT(decimal(10,2),AVG(1.0 * Worst)) FROM
  (
    SELECT Workers = 16, session_id, RunID, Worst = MAX(wait_time_ms)
      FROM Perf.SessionWaits16 WHERE wait_type = 'WRITELOG'
      GROUP BY session_id, RunID
    UNION ALL
    SELECT Workers = 8,  session_id, RunID, Worst = MAX(wait_time_ms)
      FROM Perf.SessionWaits8 WHERE wait_type = 'WRITELOG'
      GROUP BY session_id, RunID
  ) AS y GROUP BY Workers, RunID
),
Elapsed (Workers, RunID, Avg_s) AS
(
  SELECT Workers = 16, RunID, AVG(1.0*DATEDIFF(SECOND, StartedAt, FinishedAt))
    FROM Perf.Workers16 GROUP BY RunID
  UNION ALL
  SELECT Workers = 8, RunID, AVG(1.0*DATEDIFF(SECOND, StartedAt, FinishedAt))
    FROM Perf.Workers8  GROUP BY RunID
)
SELECT Scenario = CASE WHEN f.RunID < 3 THEN 'Post' ELSE 'Purge' END
    + ', ' + RTRIM(f.Workers) + ' workers, delayed = '
    + CASE f.RunID % 2 WHEN 1 THEN 'OFF' ELSE 'ON' END,
  f.LogWrites, f.LogStall_ms, w.AvgWritelog_ms,
  Avg_s = CONVERT(decimal(10,2), e.Avg_s)
FROM FileIO AS f
INNER JOIN LogWaits AS w
  ON  f.Workers = w.Workers AND f.RunID  = w.RunID
INNER JOIN Elapsed AS e
  ON  f.Workers = e.Workers AND f.RunID  = e.RunID
ORDER BY f.Workers, f.RunID;
