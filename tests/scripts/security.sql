-- Logins, users, roles and permissions; EXECUTE AS LOGIN switches the security context
-- so one script can act as a plain login (the context lasts until REVERT, across
-- batches, as in SQL Server).
CREATE LOGIN weak WITH PASSWORD = 'short';
GO
CREATE LOGIN app_reader WITH PASSWORD = 'Reader#2024', DEFAULT_DATABASE = master;
CREATE LOGIN app_writer WITH PASSWORD = 'Writer#2024';
CREATE LOGIN app_reader WITH PASSWORD = 'Reader#2024';
GO
SELECT name, type, type_desc, is_disabled, default_database_name FROM sys.server_principals ORDER BY principal_id;
SELECT name, is_policy_checked FROM sys.sql_logins WHERE name LIKE 'app%' ORDER BY name;
GO
CREATE DATABASE Sales;
GO
USE Sales;
CREATE TABLE dbo.Orders (id int PRIMARY KEY, amount decimal(10, 2));
INSERT INTO dbo.Orders VALUES (1, 10.50), (2, 20.00);
GO
CREATE PROCEDURE dbo.OrderTotal @total decimal(10, 2) OUTPUT AS SELECT @total = SUM(amount) FROM dbo.Orders;
GO
CREATE VIEW dbo.BigOrders AS SELECT id, amount FROM dbo.Orders WHERE amount > 15;
GO
CREATE USER app_reader FOR LOGIN app_reader;
CREATE USER app_writer;
CREATE USER nobody FOR LOGIN no_such_login;
GO
CREATE ROLE order_entry;
ALTER ROLE order_entry ADD MEMBER app_writer;
ALTER ROLE db_datareader ADD MEMBER app_reader;
GRANT INSERT, UPDATE ON dbo.Orders TO order_entry;
GRANT EXECUTE ON dbo.OrderTotal TO app_writer;
DENY SELECT ON dbo.BigOrders TO app_reader;
GO
SELECT name, type, type_desc, default_schema_name FROM sys.database_principals WHERE principal_id BETWEEN 5 AND 16383 ORDER BY principal_id;
SELECT r.name AS role_name, m.name AS member_name
FROM sys.database_role_members AS rm
JOIN sys.database_principals AS r ON r.principal_id = rm.role_principal_id
JOIN sys.database_principals AS m ON m.principal_id = rm.member_principal_id
ORDER BY r.name, m.name;
SELECT p.name, dp.class_desc, o.name AS object_name, dp.permission_name, dp.state_desc
FROM sys.database_permissions AS dp
JOIN sys.database_principals AS p ON p.principal_id = dp.grantee_principal_id
JOIN sys.objects AS o ON o.object_id = dp.major_id
ORDER BY p.name, dp.permission_name;
GO
-- The reader: SELECT through db_datareader, no writes, DENY on the view wins.
EXECUTE AS LOGIN = 'app_reader';
SELECT SUSER_SNAME() AS login, IS_SRVROLEMEMBER('sysadmin') AS is_sysadmin;
SELECT COUNT(*) AS orders FROM dbo.Orders;
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
INSERT INTO dbo.Orders VALUES (3, 1.00);
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
SELECT * FROM dbo.BigOrders;
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
CREATE TABLE dbo.Mine (x int);
REVERT;
GO
-- RAISERROR: severity 19 and up, and WITH LOG, are for sysadmin only.
EXECUTE AS LOGIN = 'app_reader';
RAISERROR ('high', 19, 1) WITH LOG;
RAISERROR ('logged', 16, 1) WITH LOG;
RAISERROR ('plain', 16, 1);
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
DROP TABLE dbo.Orders;
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
CREATE DATABASE Nope;
ALTER DATABASE Sales SET DELAYED_DURABILITY = FORCED;
DROP DATABASE Sales;
REVERT;
GO
EXECUTE AS LOGIN = 'app_reader';
CREATE LOGIN sneaky WITH PASSWORD = 'Sneaky#2024';
REVERT;
GO
-- The writer: INSERT/UPDATE through its role, EXECUTE on the procedure (which reads the
-- table through the ownership chain), no SELECT of its own, no DELETE.
EXECUTE AS LOGIN = 'app_writer';
INSERT INTO dbo.Orders VALUES (3, 5.25);
UPDATE dbo.Orders SET amount = amount + 1 WHERE id = 3;
DECLARE @t decimal(10, 2);
EXEC dbo.OrderTotal @total = @t OUTPUT;
SELECT @t AS total;
REVERT;
GO
EXECUTE AS LOGIN = 'app_writer';
DELETE FROM dbo.Orders WHERE id = 3;
REVERT;
GO
EXECUTE AS LOGIN = 'app_writer';
SELECT * FROM dbo.Orders;
REVERT;
GO
REVOKE INSERT ON dbo.Orders FROM order_entry;
GO
EXECUTE AS LOGIN = 'app_writer';
INSERT INTO dbo.Orders VALUES (4, 1.00);
REVERT;
GO
-- Database access: a login without a user in Sales cannot USE it.
CREATE LOGIN outsider WITH PASSWORD = 'Outsider#2024';
GO
EXECUTE AS LOGIN = 'outsider';
USE master;
USE Sales;
REVERT;
GO
-- Disabling, renaming and dropping logins; sysadmin membership.
USE Sales;
ALTER LOGIN outsider DISABLE;
ALTER LOGIN outsider WITH NAME = stranger;
ALTER SERVER ROLE sysadmin ADD MEMBER app_writer;
SELECT p.name, p.is_disabled FROM sys.server_principals AS p WHERE p.name IN ('stranger', 'outsider');
SELECT p.name FROM sys.server_role_members AS m JOIN sys.server_principals AS p ON p.principal_id = m.member_principal_id ORDER BY p.name;
DROP LOGIN stranger;
DROP LOGIN stranger;
DROP LOGIN sa;
GO
ALTER ROLE order_entry DROP MEMBER app_writer;
DROP ROLE order_entry;
DROP USER app_writer;
DROP USER app_writer;
SELECT COUNT(*) AS users_left FROM sys.database_principals WHERE principal_id BETWEEN 5 AND 16383;
GO
