-- @@ERROR: the number of the last statement's error, 0 after a statement that succeeds.
-- Every statement executed clears it (SELECT, SET, PRINT, IF after its condition, WHILE,
-- RETURN, EXEC), a DECLARE without initial values does not (it is not executed), it
-- lives from batch to batch, and the first statement of a CATCH block still sees it.
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY, n int CHECK (n > 0));
INSERT INTO dbo.t VALUES (1, 1);
GO
-- statement; SELECT @@ERROR after a failure, then after a success.
INSERT INTO dbo.t VALUES (1, 1);
SELECT @@ERROR AS after_dup_key;
SELECT @@ERROR AS after_select;
UPDATE dbo.t SET n = 0 WHERE id = 1;
SELECT @@ERROR AS after_check;
UPDATE dbo.t SET n = 2 WHERE id = 1;
SELECT @@ERROR AS after_update;
GO
-- IF @@ERROR <> 0 after a failure and after a success; the IF itself clears it, so the
-- branch sees 0.
SELECT 1 / 0 AS q;
IF @@ERROR <> 0 PRINT 'failed, branch sees ' + CAST(@@ERROR AS varchar(10));
ELSE PRINT 'succeeded';
SELECT 1 AS q;
IF @@ERROR <> 0 PRINT 'failed'; ELSE PRINT 'succeeded, branch sees ' + CAST(@@ERROR AS varchar(10));
GO
-- SET and PRINT clear it: only the first read sees the error.
DECLARE @e int, @f int;
SELECT 1 / 0 AS q;
SET @e = @@ERROR;
SET @f = @@ERROR;
SELECT @e AS first_read, @f AS second_read;
RAISERROR('boom', 16, 1);
PRINT @@ERROR;
PRINT @@ERROR;
GO
-- A DECLARE without a value keeps it; one with a value is executed and clears it.
SELECT 1 / 0 AS q;
DECLARE @x int;
SELECT @@ERROR AS after_plain_declare;
SELECT 1 / 0 AS q;
DECLARE @y int = 5;
SELECT @@ERROR AS after_declare_with_value;
GO
-- Across batches: the error of the last statement of one batch is seen by the next.
SELECT * FROM dbo.missing;
GO
SELECT @@ERROR AS next_batch;
GO
DECLARE @z int;
SELECT @@ERROR AS next_batch_cleared;
GO
-- RAISERROR: severity 16 sets 50000, severity 10 clears it unless WITH SETERROR.
RAISERROR('severe', 16, 1);
SELECT @@ERROR AS sev16;
RAISERROR('info', 10, 1);
SELECT @@ERROR AS sev10;
RAISERROR('info', 10, 1) WITH SETERROR;
SELECT @@ERROR AS sev10_seterror;
GO
-- In a procedure: the documented pattern, and the caller sees the error of the
-- procedure's last statement.
CREATE PROCEDURE dbo.del_or_fail @id int AS
    INSERT INTO dbo.t VALUES (@id, 1);
    IF @@ERROR <> 0
    BEGIN
        PRINT 'insert failed';
        RETURN 99;
    END
    PRINT 'inserted';
    RETURN 0;
GO
CREATE PROCEDURE dbo.ends_in_error AS
    INSERT INTO dbo.t VALUES (1, 1);
GO
DECLARE @r int;
EXEC @r = dbo.del_or_fail 1;
SELECT @r AS rc_dup, @@ERROR AS err_after_return;
EXEC @r = dbo.del_or_fail 2;
SELECT @r AS rc_new;
EXEC dbo.ends_in_error;
SELECT @@ERROR AS after_proc_error;
EXEC dbo.del_or_fail 3;
SELECT @@ERROR AS after_proc_success;
GO
-- TRY/CATCH: the CATCH block's first statement sees the error, the next one does not
-- (ERROR_NUMBER() keeps it).
BEGIN TRY
    INSERT INTO dbo.t VALUES (1, 1);
END TRY
BEGIN CATCH
    SELECT @@ERROR AS first_in_catch, ERROR_NUMBER() AS error_number;
    SELECT @@ERROR AS second_in_catch, ERROR_NUMBER() AS error_number;
END CATCH;
SELECT @@ERROR AS after_catch;
BEGIN TRY
    SELECT 1 AS ok;
END TRY
BEGIN CATCH
    SELECT 'not reached' AS q;
END CATCH;
SELECT @@ERROR AS after_try_ok;
GO
-- WHILE clears it at each test of its condition.
DECLARE @i int = 0;
SELECT 1 / 0 AS q;
WHILE @i < 1
BEGIN
    SELECT @@ERROR AS in_loop;
    SET @i += 1;
END;
GO
-- Dynamic SQL: the error of its last statement is the caller's @@ERROR.
EXEC ('SELECT 1 / 0 AS q');
SELECT @@ERROR AS after_exec_string;
EXEC sp_executesql N'SELECT 1 AS q';
SELECT @@ERROR AS after_sp_executesql;
GO
DROP PROCEDURE dbo.del_or_fail;
DROP PROCEDURE dbo.ends_in_error;
DROP TABLE dbo.t;
GO
