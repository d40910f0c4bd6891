-- Catalog views over constraints, indexes, modules, parameters and storage, the
-- INFORMATION_SCHEMA views and the lock and wait DMVs: SQL Server's columns, rows
-- computed from the catalog and the engine. Values that depend on the session or on
-- generated names are projected away or tested with predicates.
SET NOCOUNT ON;
CREATE DATABASE CatalogViews;
GO
USE CatalogViews;
GO
-- A fresh user database: sys.all_columns lists the columns of every system view, enough
-- rows for the TOP (1000) numbers idiom (SQL Server has thousands).
SELECT CASE WHEN COUNT(*) >= 1000 THEN 'at least 1000' ELSE 'fewer' END AS all_columns FROM sys.all_columns;
SELECT COUNT(*) AS top_1000 FROM (SELECT TOP (1000) object_id FROM sys.all_columns) AS x;
GO
CREATE TABLE dbo.Customer (
  CustomerID int IDENTITY(10, 5) CONSTRAINT PK_Customer PRIMARY KEY,
  Email nvarchar(100) NOT NULL CONSTRAINT UQ_Customer_Email UNIQUE,
  Region char(2) NOT NULL DEFAULT 'TX',
  Credit decimal(9, 2) NOT NULL CONSTRAINT CK_Customer_Credit CHECK (Credit >= 0)
);
CREATE TABLE dbo.Orders (
  OrderID int NOT NULL,
  LineNum smallint NOT NULL,
  CustomerID int NOT NULL,
  Qty int NOT NULL,
  Price money NOT NULL,
  Total AS (Qty * Price) PERSISTED,
  Note varchar(max) NULL,
  CONSTRAINT PK_Orders PRIMARY KEY (OrderID, LineNum),
  CONSTRAINT FK_Orders_Customer FOREIGN KEY (CustomerID) REFERENCES dbo.Customer (CustomerID) ON DELETE CASCADE,
  CHECK (Qty > 0)
);
CREATE INDEX IX_Orders_Customer ON dbo.Orders (CustomerID DESC) INCLUDE (Qty, Price);
GO
CREATE VIEW dbo.BigOrders AS SELECT OrderID, Total FROM dbo.Orders WHERE Total > 100;
GO
CREATE PROCEDURE dbo.AddOrder @OrderID int, @CustomerID int, @Qty int = 1, @Price money, @Total money OUTPUT
AS
BEGIN
  INSERT dbo.Orders (OrderID, LineNum, CustomerID, Qty, Price) VALUES (@OrderID, 1, @CustomerID, @Qty, @Price);
  SELECT @Total = Total FROM dbo.Orders WHERE OrderID = @OrderID;
END;
GO
CREATE FUNCTION dbo.Discount (@Amount decimal(10, 2), @Pct tinyint) RETURNS decimal(10, 2)
AS BEGIN RETURN @Amount * (100 - @Pct) / 100; END;
GO
CREATE FUNCTION dbo.OrdersOf (@CustomerID int) RETURNS TABLE
AS RETURN (SELECT OrderID, Total FROM dbo.Orders WHERE CustomerID = @CustomerID);
GO
INSERT dbo.Customer (Email, Credit) VALUES (N'a@x', 10), (N'b@x', 20), (N'c@x', 0);
DECLARE @t money;
EXEC dbo.AddOrder 1, 10, 3, 50, @t OUTPUT;
EXEC dbo.AddOrder 2, 15, 1, 20, @t OUTPUT;
GO
-- PRIMARY KEY and UNIQUE constraints, with the index that enforces each.
SELECT OBJECT_NAME(parent_object_id) AS table_name, name, type, type_desc, unique_index_id,
       is_system_named, is_enforced
  FROM sys.key_constraints ORDER BY table_name, name;
-- Index columns: keys in order (DESC marked), then INCLUDE columns.
SELECT OBJECT_NAME(ic.object_id) AS table_name, i.name AS index_name, ic.index_column_id,
       c.name AS column_name, ic.key_ordinal, ic.is_descending_key, ic.is_included_column
  FROM sys.index_columns AS ic
  JOIN sys.indexes AS i ON i.object_id = ic.object_id AND i.index_id = ic.index_id
  JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
 ORDER BY table_name, ic.index_id, ic.index_column_id;
SELECT OBJECT_NAME(object_id) AS table_name, name, index_id, type_desc, is_unique, data_space_id,
       fill_factor, allow_row_locks, allow_page_locks
  FROM sys.indexes ORDER BY table_name, index_id;
GO
-- Foreign keys: referenced table and its key index, actions, and the column pairs.
SELECT fk.name, OBJECT_NAME(fk.parent_object_id) AS parent, OBJECT_NAME(fk.referenced_object_id) AS referenced,
       i.name AS key_index, fk.delete_referential_action, fk.delete_referential_action_desc,
       fk.update_referential_action_desc, fk.is_disabled, fk.is_not_trusted, fk.is_system_named, fk.type
  FROM sys.foreign_keys AS fk
  JOIN sys.indexes AS i ON i.object_id = fk.referenced_object_id AND i.index_id = fk.key_index_id;
SELECT fk.name, fkc.constraint_column_id, pc.name AS parent_column, rc.name AS referenced_column
  FROM sys.foreign_key_columns AS fkc
  JOIN sys.foreign_keys AS fk ON fk.object_id = fkc.constraint_object_id
  JOIN sys.columns AS pc ON pc.object_id = fkc.parent_object_id AND pc.column_id = fkc.parent_column_id
  JOIN sys.columns AS rc ON rc.object_id = fkc.referenced_object_id AND rc.column_id = fkc.referenced_column_id;
GO
-- CHECK and DEFAULT constraints (generated names end in the object id: shown as such).
SELECT OBJECT_NAME(parent_object_id) AS table_name,
       CASE WHEN is_system_named = 1 AND name LIKE 'CK[_][_]Orders[_][_]%' THEN 'CK__Orders__...' ELSE name END AS name,
       definition, is_disabled, is_not_trusted, is_system_named
  FROM sys.check_constraints ORDER BY table_name;
SELECT OBJECT_NAME(d.parent_object_id) AS table_name, c.name AS column_name, d.definition, d.is_system_named,
       CASE WHEN d.name LIKE 'DF[_][_]Customer[_][_]Region[_][_]%' THEN 'DF__Customer__Region__...' END AS name,
       CASE WHEN c.default_object_id = d.object_id THEN 'yes' END AS column_knows_it
  FROM sys.default_constraints AS d
  JOIN sys.columns AS c ON c.object_id = d.parent_object_id AND c.column_id = d.parent_column_id;
-- Every constraint is an object of its table.
SELECT o.type, COUNT(*) AS n FROM sys.objects AS o WHERE o.parent_object_id <> 0 GROUP BY o.type ORDER BY o.type;
GO
-- Identity and computed columns, with sys.columns' columns first.
SELECT OBJECT_NAME(object_id) AS table_name, name, column_id, is_identity, seed_value, increment_value, last_value,
       is_not_for_replication
  FROM sys.identity_columns;
SELECT OBJECT_NAME(object_id) AS table_name, name, column_id, is_computed, definition, is_persisted
  FROM sys.computed_columns;
SELECT name, is_ansi_padded, is_rowguidcol, is_filestream, xml_collection_id, is_sparse, is_column_set,
       generated_always_type, generated_always_type_desc, is_hidden, is_masked
  FROM sys.columns WHERE object_id = OBJECT_ID('dbo.Customer') ORDER BY column_id;
GO
-- sys.tables, sys.views and sys.procedures add their columns to sys.objects'; sys.all_views
-- and sys.system_views add the system views.
SELECT name, lob_data_space_id, max_column_id_used, lock_escalation_desc, durability_desc, temporal_type_desc,
       ledger_type_desc
  FROM sys.tables ORDER BY name;
SELECT name, with_check_option, has_opaque_metadata, is_ms_shipped FROM sys.all_views WHERE is_ms_shipped = 0;
SELECT CASE WHEN (SELECT COUNT(*) FROM sys.system_views) + 1 = (SELECT COUNT(*) FROM sys.all_views)
            THEN 'all = system + user' END AS all_views,
       (SELECT COUNT(*) FROM sys.system_views WHERE is_ms_shipped = 1 AND type = 'V') AS system_views;
SELECT name, is_auto_executed FROM sys.procedures;
GO
-- Modules and their parameters (a scalar function's return value is parameter 0).
SELECT OBJECT_NAME(m.object_id) AS name, o.type, LEFT(m.definition, 28) AS definition_start, m.uses_ansi_nulls,
       m.uses_quoted_identifier, m.is_schema_bound, m.execute_as_principal_id, m.is_inlineable, m.inline_type
  FROM sys.sql_modules AS m JOIN sys.objects AS o ON o.object_id = m.object_id ORDER BY name;
SELECT COUNT(*) AS all_sql_modules FROM sys.all_sql_modules;
SELECT OBJECT_NAME(p.object_id) AS routine, p.parameter_id, p.name, t.name AS type_name, p.max_length,
       p.precision, p.scale, p.is_output, p.has_default_value, p.default_value, p.is_readonly
  FROM sys.parameters AS p JOIN sys.types AS t ON t.user_type_id = p.user_type_id
 ORDER BY routine, p.parameter_id;
GO
-- Storage: one partition per index with its row count, on the PRIMARY filegroup.
SELECT OBJECT_NAME(p.object_id) AS table_name, i.name AS index_name, p.index_id, p.partition_number, p.rows,
       p.data_compression_desc, p.xml_compression_desc,
       CASE WHEN p.partition_id = p.hobt_id THEN 'hobt' END AS partition_id
  FROM sys.partitions AS p JOIN sys.indexes AS i ON i.object_id = p.object_id AND i.index_id = p.index_id
 ORDER BY table_name, p.index_id;
SELECT * FROM sys.data_spaces;
SELECT name, data_space_id, type, type_desc, is_default, is_system, filegroup_guid, is_read_only FROM sys.filegroups;
-- Features Mesquite does not have: the views exist, with no rows.
SELECT (SELECT COUNT(*) FROM sys.triggers) AS triggers, (SELECT COUNT(*) FROM sys.synonyms) AS synonyms,
       (SELECT COUNT(*) FROM sys.stats) AS stats, (SELECT COUNT(*) FROM sys.stats_columns) AS stats_columns;
GO
-- INFORMATION_SCHEMA.
SELECT CATALOG_NAME, SCHEMA_NAME, SCHEMA_OWNER, DEFAULT_CHARACTER_SET_NAME
  FROM INFORMATION_SCHEMA.SCHEMATA ORDER BY SCHEMA_NAME;
SELECT TABLE_NAME, CONSTRAINT_TYPE,
       CASE WHEN CONSTRAINT_NAME LIKE 'CK[_][_]%' THEN 'CK__...' ELSE CONSTRAINT_NAME END AS CONSTRAINT_NAME,
       IS_DEFERRABLE, INITIALLY_DEFERRED
  FROM INFORMATION_SCHEMA.TABLE_CONSTRAINTS ORDER BY TABLE_NAME, CONSTRAINT_TYPE, CONSTRAINT_NAME;
SELECT CONSTRAINT_NAME, TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION
  FROM INFORMATION_SCHEMA.KEY_COLUMN_USAGE ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION;
SELECT CONSTRAINT_NAME, UNIQUE_CONSTRAINT_SCHEMA, UNIQUE_CONSTRAINT_NAME, MATCH_OPTION, UPDATE_RULE, DELETE_RULE
  FROM INFORMATION_SCHEMA.REFERENTIAL_CONSTRAINTS;
SELECT CASE WHEN CONSTRAINT_NAME LIKE 'CK[_][_]%' THEN 'CK__...' ELSE CONSTRAINT_NAME END AS CONSTRAINT_NAME, CHECK_CLAUSE
  FROM INFORMATION_SCHEMA.CHECK_CONSTRAINTS ORDER BY CHECK_CLAUSE;
SELECT TABLE_NAME, COLUMN_NAME,
       CASE WHEN CONSTRAINT_NAME LIKE 'CK[_][_]%' THEN 'CK__...' ELSE CONSTRAINT_NAME END AS CONSTRAINT_NAME
  FROM INFORMATION_SCHEMA.CONSTRAINT_COLUMN_USAGE ORDER BY TABLE_NAME, COLUMN_NAME, CONSTRAINT_NAME;
SELECT TABLE_NAME, COUNT(*) AS constraints FROM INFORMATION_SCHEMA.CONSTRAINT_TABLE_USAGE GROUP BY TABLE_NAME ORDER BY TABLE_NAME;
GO
SELECT ROUTINE_NAME, ROUTINE_TYPE, DATA_TYPE, NUMERIC_PRECISION, NUMERIC_SCALE, ROUTINE_BODY, SQL_DATA_ACCESS,
       LEFT(ROUTINE_DEFINITION, 22) AS definition_start
  FROM INFORMATION_SCHEMA.ROUTINES ORDER BY ROUTINE_NAME;
SELECT SPECIFIC_NAME, ORDINAL_POSITION, PARAMETER_MODE, IS_RESULT, PARAMETER_NAME, DATA_TYPE,
       NUMERIC_PRECISION, NUMERIC_SCALE
  FROM INFORMATION_SCHEMA.PARAMETERS ORDER BY SPECIFIC_NAME, ORDINAL_POSITION;
SELECT COLUMN_NAME, DATA_TYPE, CHARACTER_MAXIMUM_LENGTH, CHARACTER_OCTET_LENGTH, NUMERIC_PRECISION,
       NUMERIC_PRECISION_RADIX, NUMERIC_SCALE, DATETIME_PRECISION, CHARACTER_SET_NAME, COLLATION_NAME
  FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME IN ('Customer', 'Orders') ORDER BY TABLE_NAME, ORDINAL_POSITION;
GO
-- Locks held by an open transaction, as sys.dm_tran_locks shows them.
BEGIN TRANSACTION;
UPDATE dbo.Customer SET Credit = Credit + 1 WHERE CustomerID = 15;
SELECT resource_type, request_mode, request_type, request_status, request_owner_type,
       CASE WHEN request_session_id = @@SPID THEN 'own' END AS session,
       CASE WHEN resource_type = 'KEY' AND resource_description LIKE '(%)' THEN 'key hash' END AS resource
  FROM sys.dm_tran_locks
 WHERE resource_database_id = DB_ID() AND resource_type <> 'DATABASE'
 ORDER BY resource_type, request_mode;
ROLLBACK;
SELECT COUNT(*) AS locks_after_rollback FROM sys.dm_tran_locks
 WHERE resource_database_id = DB_ID() AND request_session_id = @@SPID AND resource_type <> 'DATABASE';
-- Nothing waits in a single session.
SELECT COUNT(*) AS waiting FROM sys.dm_os_waiting_tasks WHERE session_id = @@SPID;
SELECT CASE WHEN database_id = DB_ID() THEN 'current' END AS db,
       CASE WHEN total_log_size_in_bytes > 0 AND used_log_space_in_bytes BETWEEN 0 AND total_log_size_in_bytes
            THEN 'ok' END AS log_space
  FROM sys.dm_db_log_space_usage;
GO
-- OBJECT_ID knows every system view; each lists SQL Server's number of columns.
SELECT o.name, COUNT(*) AS columns_listed
  FROM sys.all_columns AS c JOIN sys.all_objects AS o ON o.object_id = c.object_id
 WHERE o.object_id = OBJECT_ID(SCHEMA_NAME(o.schema_id) + '.' + o.name) AND o.object_id <= -142
 GROUP BY o.schema_id, o.name ORDER BY o.schema_id, o.name;
SELECT COUNT(*) AS columns_columns FROM sys.all_columns WHERE object_id = OBJECT_ID('sys.columns');
SELECT COUNT(*) AS objects_columns FROM sys.all_columns WHERE object_id = OBJECT_ID('sys.objects');
GO
USE master;
DROP DATABASE CatalogViews;
GO
