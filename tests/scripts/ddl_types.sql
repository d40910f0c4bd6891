-- User-defined types: table types (DECLARE, procedure parameters passed a table
-- variable), alias types, sys.types / sys.table_types, and the errors.
SET NOCOUNT ON;
CREATE TYPE dbo.Pairs AS TABLE (k int NOT NULL PRIMARY KEY, v nvarchar(20) NULL DEFAULT N'none', CHECK (k > 0));
CREATE TYPE dbo.Money2 FROM decimal(10, 2) NOT NULL;
GO
SELECT name, system_type_id, max_length, precision, scale, is_nullable, is_user_defined, is_table_type
  FROM sys.types WHERE is_user_defined = 1 ORDER BY name;
SELECT name, is_table_type, CASE WHEN type_table_object_id > 0 THEN 'yes' END AS has_table FROM sys.table_types;
GO
DECLARE @t dbo.Pairs;
INSERT @t (k) VALUES (2);
INSERT @t VALUES (1, N'one');
SELECT k, v FROM @t ORDER BY k;
DECLARE @m dbo.Money2 = 12.345;
SELECT @m AS m;
GO
-- The type's constraints hold in its table variables.
DECLARE @t dbo.Pairs;
INSERT @t VALUES (0, N'zero');
GO
CREATE PROCEDURE dbo.SumPairs @rows dbo.Pairs READONLY, @scale dbo.Money2 AS
  SELECT COUNT(*) AS n, SUM(k) * @scale AS total FROM @rows;
GO
DECLARE @t dbo.Pairs;
INSERT @t VALUES (1, N'a'), (2, N'b'), (3, NULL);
EXEC dbo.SumPairs @t, 1.5;
-- A table-valued parameter not passed is an empty table.
EXEC dbo.SumPairs @scale = 2;
GO
CREATE PROCEDURE dbo.NoReadonly @rows dbo.Pairs AS SELECT 1;
GO
CREATE PROCEDURE dbo.ScalarReadonly @n int READONLY AS SELECT 1;
GO
CREATE TYPE dbo.Pairs FROM int;
GO
DROP TYPE dbo.NoSuchType;
GO
DROP TYPE IF EXISTS dbo.NoSuchType;
GO
-- A type a procedure's parameter uses cannot be dropped (3732).
DROP TYPE dbo.Pairs;
GO
-- A table-valued parameter is READONLY: a procedure whose body changes one is not
-- created (10700), wherever the statement is.
CREATE PROCEDURE dbo.ChangeParam @rows dbo.Pairs READONLY AS
    INSERT @rows VALUES (9, N'z');
GO
CREATE PROCEDURE dbo.ChangeParam3 @rows dbo.Pairs READONLY AS
BEGIN
    IF EXISTS (SELECT * FROM @rows)
    BEGIN TRY
        DELETE @rows WHERE k = 1;
    END TRY
    BEGIN CATCH
    END CATCH
END
GO
-- A copy of it may be changed.
CREATE PROCEDURE dbo.ChangeParam2 @rows dbo.Pairs READONLY AS
BEGIN
    DECLARE @copy dbo.Pairs;
    INSERT @copy SELECT k, v FROM @rows;
    UPDATE @copy SET v = N'copied';
    SELECT k, v FROM @copy ORDER BY k;
END
GO
DECLARE @t dbo.Pairs;
INSERT @t VALUES (1, N'a'), (2, N'b');
EXEC dbo.ChangeParam2 @t;
SELECT k, v FROM @t ORDER BY k;
GO
SELECT name FROM sys.procedures WHERE name LIKE 'ChangeParam%';
DROP PROCEDURE dbo.ChangeParam2;
DROP PROCEDURE dbo.SumPairs;
DROP TYPE dbo.Pairs;
DROP TYPE dbo.Money2;
SELECT COUNT(*) AS user_types FROM sys.types WHERE is_user_defined = 1;
GO
