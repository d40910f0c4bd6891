-- What SQL Server rejects when it compiles a batch or a module, before any statement
-- runs: a batch with such an error runs nothing, a CREATE of a module fails.
SET NOCOUNT ON;
GO
SELECT 'not run: duplicate label' AS never;
here:
here:
GO
SELECT 'not run: GOTO to a missing label' AS never;
GOTO nowhere;
GO
SELECT 'not run: variable declared twice' AS never;
DECLARE @v int;
IF 1 = 1 BEGIN DECLARE @V varchar(10); END;
GO
SELECT 'not run: BREAK outside WHILE' AS never;
IF 1 = 1 BREAK;
GO
BEGIN TRY CONTINUE; END TRY BEGIN CATCH END CATCH;
GO
-- A variable used before (or without) its DECLARE in the text: 137, or 1087 where a
-- table belongs; the batch runs nothing.
SELECT 'not run: undeclared variable' AS never;
SELECT @nowhere;
GO
SELECT 'not run: undeclared table variable' AS never;
SELECT * FROM @no_table;
GO
SET @later = 1;
DECLARE @later int;
GO
-- A DECLARE earlier in the text declares the variable even in a branch that does not
-- run (NULL until assigned).
IF 1 = 0 BEGIN DECLARE @declared_in_skipped_branch int = 9; END;
SELECT @declared_in_skipped_branch AS still_null;
SET @declared_in_skipped_branch = 5;
SELECT @declared_in_skipped_branch AS declared_earlier_in_the_text;
GO
-- Named arguments of a call are parameter names, not variables.
DECLARE @value int = 41, @proc sysname = N'sp_executesql';
EXEC sp_executesql N'SELECT @p + 1 AS named_argument', N'@p int', @p = @value;
EXEC @proc @stmt = N'SELECT 2 AS called_through_a_variable';
GO
sp_executesql N'SELECT @q AS call_without_exec', N'@q int', @q = 3;
GO
CREATE PROCEDURE dbo.uses_undeclared AS SELECT @not_a_parameter;
GO
-- Inside a WHILE they are fine, at any depth of IF and BEGIN ... END.
DECLARE @i int = 0;
WHILE 1 = 1
BEGIN
    SET @i += 1;
    IF @i < 3 BEGIN CONTINUE; END;
    IF @i >= 3 BREAK;
END;
SELECT @i AS loops;
GO
-- A DECLARE reached again in a loop is the same variable: its initial value is
-- assigned again, a table variable keeps its rows.
DECLARE @n int = 0;
WHILE @n < 3
BEGIN
    DECLARE @each int = @n * 10;
    DECLARE @rows TABLE (v int);
    INSERT @rows VALUES (@each);
    SET @n += 1;
END;
SELECT COUNT(*) AS table_variable_rows, MAX(v) AS last_each FROM @rows;
GO
-- Modules: the CREATE fails, nothing is created.
CREATE PROCEDURE dbo.twice_declared @p int AS DECLARE @p int;
GO
CREATE PROCEDURE dbo.stray_break AS BEGIN SELECT 1 AS one; BREAK; END;
GO
CREATE FUNCTION dbo.bad_label () RETURNS int AS BEGIN GOTO missing; RETURN 1; END;
GO
CREATE TABLE dbo.watched (a int);
GO
CREATE TRIGGER dbo.watched_ins ON dbo.watched AFTER INSERT AS BEGIN x: x: RETURN; END;
GO
SELECT COUNT(*) AS modules_created FROM sys.objects WHERE name IN ('twice_declared', 'stray_break', 'bad_label', 'watched_ins', 'uses_undeclared');
GO
-- Dynamic SQL is compiled when it runs: its error ends it, the caller goes on.
EXEC sp_executesql N'DECLARE @d int; DECLARE @d int;';
EXEC sp_executesql N'DECLARE @p int;', N'@p int', 1;
SELECT 'the caller goes on' AS after_dynamic_sql;
GO
-- Shapes SQL Server refuses when it compiles: assignment mixed with retrieval (141), a
-- column list longer (8159) or shorter (8158) than the query, a trigger action named
-- twice (1034), a type a scalar function cannot return (2733).
DECLARE @a int;
SELECT @a = 1, 2;
GO
WITH c (x, y) AS (SELECT 1) SELECT * FROM c;
GO
SELECT * FROM (SELECT 1, 2) AS d (a);
GO
CREATE TRIGGER dbo.watched_twice ON dbo.watched AFTER INSERT, INSERT AS RETURN;
GO
CREATE FUNCTION dbo.returns_text () RETURNS text AS BEGIN RETURN 'a'; END;
GO
-- More than 2,100 parameters: 180.
DECLARE @sql nvarchar(max) = N'CREATE PROCEDURE dbo.too_many ', @i int = 0;
WHILE @i < 2101
BEGIN
    SET @sql += CASE WHEN @i > 0 THEN N', ' ELSE N'' END + N'@p' + CAST(@i AS nvarchar(10)) + N' int';
    SET @i += 1;
END;
SET @sql += N' AS SELECT 1;';
EXEC (@sql);
SELECT OBJECT_ID('dbo.too_many') AS too_many_id;
GO
-- A missing table in a procedure body is not a compile error (deferred name resolution).
CREATE PROCEDURE dbo.reads_later AS SELECT * FROM dbo.created_later;
GO
CREATE TABLE dbo.created_later (x int);
INSERT dbo.created_later VALUES (7);
EXEC dbo.reads_later;
GO
DROP PROCEDURE dbo.reads_later;
DROP TABLE dbo.created_later, dbo.watched;
GO
