-- Catalog functions of a per-row argument (DB_NAME(database_id) over a catalog view or
-- DMV, OBJECT_NAME(object_id), SCHEMA_NAME(schema_id)) are looked up for each row.
CREATE TABLE dbo.alpha (a int);
CREATE TABLE dbo.beta (b int);
GO
SELECT OBJECT_NAME(object_id) AS object_name, SCHEMA_NAME(schema_id) AS schema_name FROM sys.tables ORDER BY 1;
SELECT DB_NAME(database_id) AS db FROM sys.databases WHERE database_id <= 4 ORDER BY database_id;
SELECT COUNT(*) AS found FROM sys.tables WHERE OBJECT_ID(name) = object_id;
SELECT DB_NAME(NULL) AS null_name, OBJECT_NAME(-1) AS no_object;
GO
