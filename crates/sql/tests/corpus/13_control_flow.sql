-- Variables, control flow, errors, EXEC, transactions, cursors.
DECLARE @i int = 0, @name nvarchar(128), @when datetime2(3) = SYSDATETIME(), @d AS decimal(18, 2) = 1.5;
DECLARE @t TABLE (id int NOT NULL PRIMARY KEY, label varchar(20) NULL DEFAULT 'none', INDEX ix_label (label));
DECLARE @x xml, @c CURSOR;
SET @i = @i + 1;
SET @i += 1; SET @i -= 1; SET @i *= 2; SET @i /= 2; SET @i %= 7; SET @i &= 3; SET @i |= 4; SET @i ^= 1;
SET @name = (SELECT TOP (1) name FROM sys.databases ORDER BY database_id);
SET @x = N'<r><i k="1"/></r>';
IF @i > 0
    PRINT 'positive';
ELSE IF @i < 0
    PRINT 'negative'
ELSE
BEGIN
    PRINT 'zero';
    PRINT 'really';
END
IF EXISTS (SELECT 1 FROM @t) SELECT 'rows' ELSE SELECT 'empty';
IF (@i = 1) BEGIN SELECT 1; END
WHILE @i < 10
BEGIN
    SET @i += 1;
    IF @i = 5 CONTINUE;
    IF @i = 8 BREAK;
    INSERT @t (id) VALUES (@i);
END;
WHILE 1 = 1 BREAK
retry:
SET @i = 0;
IF @i > 100 GOTO done;
GOTO retry;
done:
BEGIN TRY
    SELECT 1 / 0;
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS num, ERROR_MESSAGE() AS msg, ERROR_LINE() AS line, ERROR_SEVERITY(), ERROR_STATE(), XACT_STATE();
    IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION;
    THROW;
END CATCH
BEGIN TRY
    BEGIN TRY
        RAISERROR('inner %s %d', 16, 1, N'text', 42) WITH NOWAIT;
    END TRY
    BEGIN CATCH
        ;THROW 50001, N'rethrown', 1;
    END CATCH
END TRY
BEGIN CATCH
END CATCH
RAISERROR(50005, 10, 1);
RAISERROR(@msg, @sev, @state) WITH LOG, SETERROR;
THROW 51000, 'The record does not exist.', 1;
PRINT N'done at ' + CONVERT(varchar(30), SYSDATETIME(), 121);
WAITFOR DELAY '00:00:01';
WAITFOR TIME @at;
RETURN;
GO
CREATE PROCEDURE dbo.Demo
    @id int,
    @out int OUTPUT
AS
    IF @id IS NULL RETURN -1
    SELECT @out = @id * 2
    RETURN (0)
GO
DECLARE @rc int, @o int;
EXEC @rc = dbo.Demo @id = 1, @out = @o OUTPUT;
EXEC dbo.Demo 1, @o OUT;
EXECUTE dbo.Demo @id = DEFAULT, @out = @o OUTPUT WITH RECOMPILE;
EXEC sp_helpdb master;
EXEC sp_configure 'show advanced options', 1;
RECONFIGURE WITH OVERRIDE;
EXEC sp_executesql N'SELECT @p + 1', N'@p int', @p = 41;
EXEC (N'SELECT ' + @cols + N' FROM t');
EXEC ('SELECT 1') AS USER = 'app_user';
EXEC ('SELECT 1') AT LinkedSrv;
EXECUTE (@sql);
DECLARE @proc sysname = N'sp_who';
EXEC @proc;
EXEC [master].dbo.[sp_who] 'active';
EXECUTE AS LOGIN = 'app_login';
REVERT;
EXECUTE AS USER = N'app_user';
REVERT;
EXECUTE AS CALLER;
GO
sp_who2 active
GO
dbo.Demo 1, NULL
GO
[dbo].[Demo] @id = 3, @out = NULL
GO
BEGIN TRAN;
BEGIN TRANSACTION outer_tx WITH MARK 'before bulk load';
BEGIN TRAN @txname;
BEGIN DISTRIBUTED TRANSACTION;
SAVE TRAN sp1;
SAVE TRANSACTION @sp;
ROLLBACK TRAN sp1;
ROLLBACK TRANSACTION;
ROLLBACK;
ROLLBACK WORK;
COMMIT;
COMMIT WORK;
COMMIT TRAN;
COMMIT TRANSACTION outer_tx;
COMMIT TRANSACTION WITH (DELAYED_DURABILITY = ON);
COMMIT WITH (DELAYED_DURABILITY = OFF);
CHECKPOINT;
CHECKPOINT 30;
GO
DECLARE dbs CURSOR LOCAL FAST_FORWARD FOR SELECT name FROM sys.databases WHERE database_id > 4;
DECLARE @db sysname;
OPEN dbs;
FETCH NEXT FROM dbs INTO @db;
WHILE @@FETCH_STATUS = 0
BEGIN
    PRINT @db;
    FETCH NEXT FROM dbs INTO @db;
END
CLOSE dbs;
DEALLOCATE dbs;
DECLARE legacy INSENSITIVE SCROLL CURSOR FOR SELECT id FROM t FOR READ ONLY;
DECLARE @cv CURSOR;
SET @cv = CURSOR LOCAL FORWARD_ONLY STATIC FOR SELECT id FROM t;
OPEN @cv;
DECLARE upd CURSOR GLOBAL DYNAMIC FOR SELECT id, v FROM t FOR UPDATE OF v;
OPEN GLOBAL upd;
FETCH ABSOLUTE 5 FROM GLOBAL upd;
FETCH RELATIVE -1 FROM upd INTO @a;
FETCH PRIOR FROM upd;
FETCH FIRST FROM upd;
FETCH LAST FROM upd;
FETCH upd INTO @a;
CLOSE GLOBAL upd;
DEALLOCATE @c;
GO
USE master;
USE [Shop];
KILL 53;
KILL 54 WITH STATUSONLY;
SHUTDOWN WITH NOWAIT;
