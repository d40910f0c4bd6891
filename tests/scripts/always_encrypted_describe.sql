-- sp_describe_parameter_encryption: no column is encrypted, so no key is listed and every
-- declared parameter is plaintext (column_encryption_type 0).
CREATE TABLE dbo.ae_t (id int PRIMARY KEY, name nvarchar(50));
GO
EXEC sp_describe_parameter_encryption N'INSERT dbo.ae_t VALUES (@id, @name)', N'@id int, @name nvarchar(50)';
GO
EXEC sys.sp_describe_parameter_encryption @tsql = N'SELECT 1';
GO
-- A syntax error in the batch is reported as compiling it would.
EXEC sp_describe_parameter_encryption N'SELECT FROM WHERE', N'';
GO
-- @tsql is required.
EXEC sp_describe_parameter_encryption;
GO
SELECT name, type FROM sys.all_objects WHERE name = 'sp_describe_parameter_encryption';
GO
