-- Seed 003 re-created: the tracing stack compared. A server-side SQL Trace to file in
-- the shape Profiler's "export script" produces, then Extended Events sessions with each
-- target, and the queries that read them back.
declare @rc int
declare @TraceID int
declare @maxfilesize bigint
set @maxfilesize = 500

exec @rc = sp_trace_create @TraceID output, 2, N'D:\Traces\replay_capture', @maxfilesize, NULL
if (@rc != 0) goto error

declare @on bit
set @on = 1
exec sp_trace_setevent @TraceID, 14, 1, @on
exec sp_trace_setevent @TraceID, 14, 9, @on
exec sp_trace_setevent @TraceID, 15, 12, @on
exec sp_trace_setevent @TraceID, 10, 2, @on
exec sp_trace_setevent @TraceID, 13, 1, @on
exec sp_trace_setevent @TraceID, 45, 16, @on

declare @intfilter int
declare @bigintfilter bigint
exec sp_trace_setfilter @TraceID, 10, 0, 7, N'SQL Server Profiler - 4b1d'
set @intfilter = 6
exec sp_trace_setfilter @TraceID, 3, 0, 0, @intfilter

exec sp_trace_setstatus @TraceID, 1

select TraceID=@TraceID
goto finish

error:
select ErrorCode=@rc

finish:
GO
SELECT TextData, Duration, CPU, Reads, Writes, StartTime
FROM fn_trace_gettable(N'D:\Traces\replay_capture.trc', DEFAULT)
WHERE EventClass IN (10, 12, 45);
GO
EXEC sp_trace_setstatus @traceid = 2, @status = 0;
EXEC sp_trace_setstatus 2, 2;
GO
CREATE EVENT SESSION ReplayToFile ON SERVER
ADD EVENT sqlserver.login (ACTION (sqlserver.session_id)),
ADD EVENT sqlserver.logout (ACTION (sqlserver.session_id)),
ADD EVENT sqlserver.rpc_starting (ACTION (sqlserver.session_id, sqlserver.database_id)),
ADD EVENT sqlserver.module_end (SET collect_statement = (1) ACTION (sqlserver.session_id)),
ADD EVENT sqlserver.module_start,
ADD EVENT sqlserver.sp_statement_starting (
    ACTION (sqlserver.session_id, package0.event_sequence)
    WHERE sqlserver.is_system = 0 AND [package0].[greater_than_uint64]([sqlserver].[database_id], (4))),
ADD EVENT sqlserver.sql_batch_starting (
    ACTION (sqlserver.session_id, sqlserver.client_app_name)
    WHERE NOT [sqlserver].[like_i_sql_unicode_string]([sqlserver].[client_app_name], N'%Profiler%'))
ADD TARGET package0.event_file (SET filename = N'D:\Traces\replay_xe.xel', max_file_size = (500), max_rollover_files = 10)
WITH (MAX_MEMORY = 4096 KB, EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = 30 SECONDS,
      MAX_EVENT_SIZE = 0 KB, MEMORY_PARTITION_MODE = NONE, TRACK_CAUSALITY = OFF, STARTUP_STATE = OFF);
GO
CREATE EVENT SESSION ReplayToRing ON SERVER
ADD EVENT sqlserver.sql_batch_starting (ACTION (sqlserver.session_id))
ADD TARGET package0.ring_buffer (SET max_memory = 65536)
WITH (EVENT_RETENTION_MODE = NO_EVENT_LOSS, MAX_DISPATCH_LATENCY = INFINITE);
GO
ALTER EVENT SESSION ReplayToRing ON SERVER STATE = START;
GO
ALTER EVENT SESSION ReplayToRing ON SERVER
DROP EVENT sqlserver.sql_batch_starting
ADD EVENT sqlserver.sql_batch_completed (SET collect_batch_text = 1 ACTION (sqlserver.sql_text) WHERE duration > 1000000),
ADD EVENT sqlserver.error_reported (WHERE severity >= 16)
DROP TARGET package0.ring_buffer
ADD TARGET package0.histogram (SET filtering_event_name = N'sqlserver.error_reported', source = N'error_number', source_type = 0)
WITH (MAX_MEMORY = 8 MB);
GO
SELECT
  xed.value(N'@timestamp', N'datetime2') AS fired_at,
  xed.value(N'(data[@name="batch_text"]/value)[1]', N'nvarchar(max)') AS batch_text,
  xed.query(N'.') AS raw_event
FROM
(
  SELECT CAST(t.target_data AS xml) AS target_xml
  FROM sys.dm_xe_session_targets AS t
  INNER JOIN sys.dm_xe_sessions AS s ON s.address = t.event_session_address
  WHERE s.name = N'ReplayToRing' AND t.target_name = N'ring_buffer'
) AS src
CROSS APPLY src.target_xml.nodes(N'RingBufferTarget/event') AS q(xed)
WHERE xed.exist(N'data[@name="batch_text"]') = 1;
GO
DECLARE @doc xml = (SELECT CAST(target_data AS xml) FROM sys.dm_xe_session_targets WHERE target_name = N'histogram');
SELECT slot.value(N'@count', N'bigint') AS hits, slot.value(N'(value)[1]', N'int') AS error_number
FROM @doc.nodes(N'/HistogramTarget/Slot') AS h(slot)
ORDER BY hits DESC;
GO
SELECT counter_name, cntr_value
FROM sys.dm_os_performance_counters
WHERE counter_name IN (N'Batch Requests/sec', N'Transactions/sec')
   OR (object_name LIKE N'%SQL Statistics%' AND counter_name = N'SQL Compilations/sec');
GO
ALTER EVENT SESSION ReplayToRing ON SERVER STATE = STOP;
DROP EVENT SESSION ReplayToRing ON SERVER;
