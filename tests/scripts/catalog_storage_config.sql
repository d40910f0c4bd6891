-- sys.allocation_units (with sys.partitions), sys.sequences (no sequences yet: columns
-- only), sys.configurations and sys.dm_os_sys_info.
SET NOCOUNT ON;
CREATE TABLE dbo.Doc (DocID int PRIMARY KEY, Body varchar(max), Title nvarchar(100));
CREATE INDEX IX_Doc_Title ON dbo.Doc (Title);
CREATE TABLE dbo.Note (Line int);
INSERT dbo.Doc (DocID, Body, Title)
SELECT TOP (40) ROW_NUMBER() OVER (ORDER BY (SELECT 1)), REPLICATE(CAST('x' AS varchar(max)), 9000), N'title'
  FROM sys.all_columns;
INSERT dbo.Note VALUES (1), (2);
GO
-- One IN_ROW_DATA unit per index (its id is the partition's hobt_id), a LOB_DATA unit for
-- the off-row MAX values; pages come in uniform 8-page extents.
SELECT OBJECT_NAME(p.object_id) AS table_name, p.index_id, au.type, au.type_desc, au.data_space_id,
       CASE WHEN au.container_id = p.partition_id THEN 'partition' END AS container,
       CASE WHEN au.type = 1 AND au.allocation_unit_id = p.hobt_id THEN 'hobt' END AS in_row_id,
       CASE WHEN au.total_pages % 8 = 0 AND au.total_pages >= au.used_pages AND au.used_pages >= 1 THEN 'ok' END AS pages,
       CASE WHEN au.type = 2 AND au.used_pages >= 80 THEN 'two pages a value' END AS lob_pages
  FROM sys.allocation_units AS au
  JOIN sys.partitions AS p ON p.partition_id = au.container_id
 ORDER BY table_name, p.index_id, au.type;
SELECT COUNT(*) AS units_without_partition
  FROM sys.allocation_units AS au
 WHERE NOT EXISTS (SELECT * FROM sys.partitions AS p WHERE p.partition_id = au.container_id);
GO
SELECT COUNT(*) AS sequences FROM sys.sequences;
SELECT c.column_id, c.name, t.name AS type_name
  FROM sys.all_columns AS c JOIN sys.types AS t ON t.user_type_id = c.user_type_id
 WHERE c.object_id = OBJECT_ID('sys.sequences') AND c.column_id > 12
 ORDER BY c.column_id;
GO
SELECT configuration_id, name, value, minimum, maximum, value_in_use, is_dynamic, is_advanced
  FROM sys.configurations
 WHERE name IN ('show advanced options', 'max degree of parallelism', 'network packet size (B)', 'two digit year cutoff',
                'user connections', 'cost threshold for parallelism')
 ORDER BY configuration_id;
SELECT CASE WHEN value > 0 AND value = value_in_use THEN 'the buffer pool' END AS max_server_memory
  FROM sys.configurations WHERE configuration_id = 1544;
GO
SELECT CASE WHEN cpu_count >= 1 AND scheduler_count = cpu_count THEN 'ok' END AS cpus,
       CASE WHEN physical_memory_kb > committed_kb AND committed_kb = committed_target_kb THEN 'ok' END AS memory,
       CASE WHEN sqlserver_start_time <= GETDATE() AND ms_ticks >= sqlserver_start_time_ms_ticks THEN 'ok' END AS started,
       affinity_type_desc, sql_memory_model_desc, virtual_machine_type_desc, socket_count, numa_node_count
  FROM sys.dm_os_sys_info;
