-- System objects: sys.all_objects and sys.system_objects list the system views, the
-- table function and the system procedures (schema sys = 4, INFORMATION_SCHEMA = 3,
-- negative object ids, is_ms_shipped = 1); sys.all_columns and sys.system_columns list
-- their columns, which match what the views return.
SET NOCOUNT ON;
CREATE TABLE dbo.Gadget (GadgetID int IDENTITY PRIMARY KEY, Name nvarchar(40) NOT NULL);
GO
-- sys.objects stays user-only; sys.all_objects adds the system ones.
SELECT COUNT(*) AS user_objects FROM sys.objects WHERE is_ms_shipped = 1;
SELECT type, type_desc, COUNT(*) AS n FROM sys.system_objects GROUP BY type, type_desc ORDER BY type;
SELECT COUNT(*) AS negative_ids FROM sys.system_objects WHERE object_id >= 0;
SELECT s.name AS schema_name, o.name, o.type FROM sys.all_objects AS o
  JOIN sys.schemas AS s ON s.schema_id = o.schema_id
 WHERE o.name IN ('dm_io_virtual_file_stats', 'COLUMNS', 'sp_executesql', 'Gadget')
 ORDER BY o.name;
GO
-- The columns of a DMV, in order, with SQL Server's names and types.
SELECT c.column_id, c.name, t.name AS type_name, c.max_length, c.is_nullable
  FROM sys.all_columns AS c
  JOIN sys.all_objects AS o ON o.object_id = c.object_id
  JOIN sys.types AS t ON t.user_type_id = c.user_type_id
 WHERE o.name = 'dm_exec_session_wait_stats'
 ORDER BY c.column_id;
GO
-- User columns are in sys.all_columns too; sys.system_columns has none of them.
SELECT COUNT(*) AS gadget_columns FROM sys.all_columns WHERE object_id = OBJECT_ID('dbo.Gadget');
SELECT COUNT(*) AS gadget_in_system FROM sys.system_columns WHERE object_id = OBJECT_ID('dbo.Gadget');
SELECT CASE WHEN (SELECT COUNT(*) FROM sys.all_columns)
               = (SELECT COUNT(*) FROM sys.system_columns) + 2 THEN 'all = system + user' END AS total;
GO
-- Every view's column count in sys.all_columns equals the columns SELECT * returns.
SELECT o.name, COUNT(*) AS columns_listed
  FROM sys.all_columns AS c JOIN sys.all_objects AS o ON o.object_id = c.object_id
 WHERE o.name IN ('databases', 'master_files', 'database_files')
 GROUP BY o.name ORDER BY o.name;
SELECT TOP (0) * FROM sys.database_files;
GO
-- OBJECT_ID and OBJECT_NAME know the system objects.
SELECT OBJECT_NAME(OBJECT_ID('sys.dm_exec_session_wait_stats')) AS by_id,
       OBJECT_NAME(OBJECT_ID('INFORMATION_SCHEMA.COLUMNS')) AS is_view,
       CASE WHEN OBJECT_ID('sys.objects') < 0 THEN 'negative' END AS sys_objects_id,
       OBJECT_ID('sys.no_such_view') AS missing;
SELECT TOP (3) OBJECT_NAME(c.object_id) AS view_name, c.name
  FROM sys.system_columns AS c WHERE c.object_id = OBJECT_ID('sys.schemas') ORDER BY c.column_id;
GO
-- sys.all_parameters: the system table functions' parameters beside the user modules'.
CREATE PROCEDURE dbo.GadgetByName @Name nvarchar(40), @Found int OUTPUT AS SELECT @Found = COUNT(*) FROM dbo.Gadget WHERE Name = @Name;
GO
SELECT OBJECT_NAME(p.object_id) AS module, p.parameter_id, p.name, TYPE_NAME(p.user_type_id) AS type_name, p.is_output
  FROM sys.all_parameters AS p
 WHERE p.object_id IN (OBJECT_ID('sys.dm_io_virtual_file_stats'), OBJECT_ID('dbo.GadgetByName'))
 ORDER BY module, p.parameter_id;
SELECT COUNT(*) AS system_in_parameters FROM sys.parameters WHERE object_id < 0;
SELECT COUNT(*) AS fn_helpcollations_params FROM sys.all_parameters WHERE object_id = OBJECT_ID('sys.fn_helpcollations');
SELECT TOP (1) name FROM sys.fn_helpcollations() WHERE name = 'Latin1_General_CI_AS';
SELECT * FROM sys.fn_helpcollations(1);
GO
