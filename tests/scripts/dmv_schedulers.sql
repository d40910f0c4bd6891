-- sys.dm_os_schedulers: one VISIBLE ONLINE row per scheduler (as many as
-- sys.dm_os_sys_info's scheduler_count; by default one per CPU), and the scheduler this
-- request runs on is busy. A request takes its scheduler after its first few row
-- operations (a request that writes fewer rows runs unscheduled), so the second query
-- follows inserts of 40 rows in an open transaction (no commit wait in between gives the
-- scheduler up). Waiting for a scheduler is the SOS_SCHEDULER_YIELD wait type.
SET NOCOUNT ON;
CREATE TABLE #rows (id int PRIMARY KEY);
SELECT CASE WHEN COUNT(*) = (SELECT scheduler_count FROM sys.dm_os_sys_info) THEN 'one per scheduler' END AS schedulers,
       MIN(status) AS status, MIN(CAST(is_online AS int)) AS is_online, MIN(parent_node_id) AS node,
       MIN(quantum_length_us) AS quantum_length_us, MIN(scheduler_id) AS first_id,
       CASE WHEN MAX(scheduler_id) = COUNT(*) - 1 THEN 'dense' END AS ids
  FROM sys.dm_os_schedulers;
BEGIN TRANSACTION;
DECLARE @i int = 1;
WHILE @i <= 40 BEGIN INSERT #rows VALUES (@i); SET @i += 1; END;
SELECT CASE WHEN SUM(CASE WHEN is_idle = 0 THEN 1 ELSE 0 END) >= 1 THEN 'yes' END AS this_request_runs_on_one,
       CASE WHEN SUM(context_switches_count) >= 1 THEN 'yes' END AS switched_in,
       CASE WHEN MIN(runnable_tasks_count) >= 0 AND MIN(yield_count) >= 0 THEN 'yes' END AS counts
  FROM sys.dm_os_schedulers;
COMMIT;
SELECT name, type_desc FROM sys.system_objects WHERE name = 'dm_os_schedulers';
SELECT COUNT(*) AS columns FROM sys.system_columns WHERE object_id = OBJECT_ID('sys.dm_os_schedulers');
SELECT wait_type FROM sys.dm_os_wait_stats WHERE wait_type = 'SOS_SCHEDULER_YIELD';
