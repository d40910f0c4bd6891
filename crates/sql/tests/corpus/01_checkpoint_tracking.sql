-- Seed 000 re-created: watch checkpoints with an Extended Events session, read the
-- event files back, pair begin/end events and time them, then switch a database to
-- indirect checkpoints and compare.
CREATE EVENT SESSION WatchCheckpoints ON SERVER
ADD EVENT sqlserver.checkpoint_begin
(
  WHERE
  ( sqlserver.database_id = 7   -- sales
    OR sqlserver.database_id = 42 -- billing
    OR sqlserver.database_id = 311 /* archive */
  )
),
ADD EVENT sqlserver.checkpoint_end
(
  WHERE
  ( sqlserver.database_id = 7
    OR sqlserver.database_id = 42
    OR sqlserver.database_id = 311
  )
)
ADD TARGET package0.event_file
(
  SET filename = N'D:\Traces\ckpt_watch.xel',
      max_file_size = 256 /* MB */, max_rollover_files = 20
)
WITH
(
  TRACK_CAUSALITY = ON, STARTUP_STATE = ON
);
GO
ALTER EVENT SESSION WatchCheckpoints ON SERVER STATE = START;
GO
SELECT
  kind = SUBSTRING([object_name], 12, 5),
  payload = CONVERT(xml, event_data),
  total = COUNT(*) OVER()
FROM sys.fn_xe_file_target_read_file('D:\Traces\ckpt_watch*.xel', NULL, NULL, NULL);
GO
DROP TABLE IF EXISTS #raw;
GO
SELECT kind = SUBSTRING([object_name], 12, 5), doc = CONVERT(xml, event_data)
INTO #raw
FROM sys.fn_xe_file_target_read_file('D:\Traces\ckpt_watch*.xel', NULL, NULL, NULL);

;WITH Parsed(kind, at_time, dbid, activity) AS
(
  SELECT kind,
    doc.value(N'(event/@timestamp)[1]', N'datetime'),
    doc.value(N'(event/data[@name="database_id"]/value)[1]', N'int'),
    doc.value(N'(event/action[@name="attach_activity_id"]/value)[1]', N'uniqueidentifier')
  FROM #raw
),
Paired AS
(
  SELECT dbid, kind,
    ended_at = at_time,
    began_at = LAG(at_time, 1) OVER (PARTITION BY activity, dbid ORDER BY at_time)
  FROM Parsed
),
Durations AS
(
  SELECT
    db_name = DB_NAME(dbid),
    began_at,
    ended_at,
    elapsed_ms = DATEDIFF(MILLISECOND, began_at, ended_at)
  FROM Paired WHERE kind = 'end' AND began_at IS NOT NULL
)
SELECT
  db_name,
  checkpoints = COUNT(*),
  avg_s = CONVERT(decimal(18,2), AVG(1.0*elapsed_ms)/1000),
  max_s = CONVERT(decimal(18,2), MAX(1.0*elapsed_ms)/1000),
  total_s = CONVERT(decimal(18,2), SUM(1.0*elapsed_ms)/1000)
FROM Durations
GROUP BY db_name
ORDER BY total_s DESC;
GO
ALTER DATABASE Sales SET TARGET_RECOVERY_TIME = 60 SECONDS; SELECT db = DB_ID(N'Sales'), switched_at = sysutcdatetime() INTO #switched;
GO
;WITH Parsed(kind, at_time, dbid, activity) AS
(
  SELECT kind,
    doc.value(N'(event/@timestamp)[1]', N'datetime'),
    doc.value(N'(event/data[@name="database_id"]/value)[1]', N'int'),
    doc.value(N'(event/action[@name="attach_activity_id"]/value)[1]', N'uniqueidentifier')
  FROM #raw
),
Paired AS
(
  SELECT dbid, kind, ended_at = at_time,
    began_at = LAG(at_time, 1) OVER (PARTITION BY activity, dbid ORDER BY at_time)
  FROM Parsed
),
Durations AS
(
  SELECT
    db_name = DB_NAME(p.dbid)
      + CASE WHEN p.began_at < s.switched_at THEN ' (automatic)' ELSE ' (indirect)' END,
    p.began_at,
    p.ended_at,
    elapsed_ms = DATEDIFF(MILLISECOND, p.began_at, p.ended_at)
  FROM Paired AS p
  INNER JOIN #switched AS s ON s.db = p.dbid
  WHERE p.kind = 'end' AND p.began_at IS NOT NULL
)
SELECT db_name, COUNT(*) AS checkpoints, SUM(elapsed_ms) AS total_ms
FROM Durations
GROUP BY db_name;
GO
SELECT name, target_recovery_time_in_seconds FROM sys.databases WHERE target_recovery_time_in_seconds = 0;
GO
DROP EVENT SESSION WatchCheckpoints ON SERVER;
