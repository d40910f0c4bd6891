-- Permission boundaries a login without rights must not cross.
-- SELECT INTO creates a table, so it needs CREATE TABLE in the target's database, as
-- CREATE TABLE does: a login with no user in a database, or without the permission,
-- creates nothing there.
CREATE LOGIN intouser WITH PASSWORD = 'Into-pw-1';
CREATE DATABASE intodb;
GO
EXECUTE AS LOGIN = 'intouser';
SELECT 1 AS a INTO intodb.dbo.stolen;
REVERT;
GO
EXECUTE AS LOGIN = 'intouser';
SELECT 1 AS a INTO master.dbo.y;
REVERT;
GO
EXECUTE AS LOGIN = 'intouser';
CREATE TABLE master.dbo.z (a int);
REVERT;
GO
SELECT OBJECT_ID('intodb.dbo.stolen') AS stolen, OBJECT_ID('master.dbo.y') AS y, OBJECT_ID('master.dbo.z') AS z;
-- With a user and CREATE TABLE (and ALTER on its schema), SELECT INTO works.
USE intodb;
CREATE USER intouser FOR LOGIN intouser;
GRANT CREATE TABLE TO intouser;
GRANT ALTER ON SCHEMA::dbo TO intouser;
GO
EXECUTE AS LOGIN = 'intouser';
SELECT 1 AS a INTO intodb.dbo.allowed;
REVERT;
GO
SELECT COUNT(*) AS allowed_rows FROM intodb.dbo.allowed;
-- Metadata visibility: a login that is not a sysadmin sees itself and sa among the
-- logins, and no file paths in sys.master_files.
CREATE LOGIN otheruser WITH PASSWORD = 'Other-pw-1';
GO
EXECUTE AS LOGIN = 'intouser';
SELECT name FROM sys.sql_logins ORDER BY name;
SELECT name FROM sys.server_principals WHERE type = 'S' ORDER BY name;
SELECT COUNT(*) AS master_files_seen FROM sys.master_files;
-- A denied CHECKDB of another database names that database.
DBCC CHECKDB (intodb) WITH NO_INFOMSGS;
REVERT;
SELECT COUNT(*) AS logins_sa_sees FROM sys.sql_logins WHERE name IN ('sa', 'intouser', 'otheruser');
DROP LOGIN otheruser;
USE master;
DROP DATABASE intodb;
DROP LOGIN intouser;
