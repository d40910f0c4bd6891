-- Which errors end the statement, the scope, the batch or the transaction, and what is
-- left of an open transaction afterwards (XACT_STATE, @@TRANCOUNT, the rows).
SET NOCOUNT ON;
CREATE TABLE dbo.ledger (id int PRIMARY KEY, note varchar(20));
GO
-- A conversion failure ends the batch and rolls back the open transaction.
BEGIN TRANSACTION;
INSERT dbo.ledger VALUES (1, 'kept?');
DECLARE @n int = 'not a number';
PRINT 'not reached';
GO
SELECT @@TRANCOUNT AS trancount, (SELECT COUNT(*) FROM dbo.ledger) AS ledger_rows;
GO
-- A duplicate key ends only the statement; the transaction and the batch go on.
BEGIN TRANSACTION;
INSERT dbo.ledger VALUES (1, 'one');
INSERT dbo.ledger VALUES (1, 'again');
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state, @@ERROR AS error_after_select;
COMMIT;
GO
-- A missing table ends the batch but leaves the transaction open and committable.
BEGIN TRANSACTION;
INSERT dbo.ledger VALUES (2, 'two');
SELECT * FROM dbo.no_such_table;
PRINT 'not reached';
GO
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state;
COMMIT;
SELECT id, note FROM dbo.ledger ORDER BY id;
GO
-- Inside a procedure a missing table ends only the procedure: the caller goes on.
CREATE PROCEDURE dbo.reads_missing AS
BEGIN
    SELECT * FROM dbo.no_such_table;
    PRINT 'rest of the procedure: not reached';
END;
GO
DECLARE @rc int;
EXEC @rc = dbo.reads_missing;
SELECT @@ERROR AS error_after_exec, CASE WHEN @rc < 0 THEN 'negative' ELSE 'zero or more' END AS return_status;
EXEC sp_executesql N'SELECT * FROM dbo.no_such_table';
PRINT 'the batch goes on after dynamic SQL too';
GO
-- A conversion failure inside a nested procedure ends the whole batch and rolls back.
CREATE PROCEDURE dbo.inner_converts AS
BEGIN
    INSERT dbo.ledger VALUES (3, 'three');
    DECLARE @n int = 'x';
    PRINT 'inner: not reached';
END;
GO
CREATE PROCEDURE dbo.outer_calls AS
BEGIN
    EXEC dbo.inner_converts;
    PRINT 'outer: not reached';
END;
GO
BEGIN TRANSACTION;
EXEC dbo.outer_calls;
PRINT 'batch: not reached';
GO
SELECT @@TRANCOUNT AS trancount, (SELECT COUNT(*) FROM dbo.ledger WHERE id = 3) AS row_3;
GO
-- In TRY the same error dooms the transaction: CATCH sees XACT_STATE() -1, a write
-- fails with 3930, COMMIT fails with 3930, ROLLBACK works.
BEGIN TRANSACTION;
BEGIN TRY
    EXEC dbo.outer_calls;
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS error_number, ERROR_PROCEDURE() AS error_procedure, XACT_STATE() AS xact_state;
    BEGIN TRY
        INSERT dbo.ledger VALUES (4, 'four');
    END TRY
    BEGIN CATCH
        SELECT ERROR_NUMBER() AS write_error;
    END CATCH;
    BEGIN TRY
        COMMIT;
    END TRY
    BEGIN CATCH
        SELECT ERROR_NUMBER() AS commit_error, @@TRANCOUNT AS trancount;
    END CATCH;
    SELECT COUNT(*) AS reads_still_work FROM dbo.ledger;
    ROLLBACK;
END CATCH;
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state;
GO
-- A doomed transaction that CATCH leaves open is rolled back at the end of the batch (3998).
BEGIN TRANSACTION;
BEGIN TRY
    DECLARE @d date = 'not a date';
END TRY
BEGIN CATCH
    PRINT 'caught, transaction left open';
END CATCH;
GO
SELECT @@TRANCOUNT AS trancount;
GO
-- A statement error in TRY without XACT_ABORT leaves the transaction committable.
BEGIN TRANSACTION;
BEGIN TRY
    INSERT dbo.ledger VALUES (1, 'duplicate');
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS error_number, XACT_STATE() AS xact_state;
END CATCH;
COMMIT;
GO
-- Under XACT_ABORT ON the same statement error dooms it.
SET XACT_ABORT ON;
BEGIN TRANSACTION;
BEGIN TRY
    INSERT dbo.ledger VALUES (1, 'duplicate');
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS error_number, XACT_STATE() AS xact_state;
    ROLLBACK;
END CATCH;
GO
-- ... and outside TRY it ends the batch and rolls back.
BEGIN TRANSACTION;
INSERT dbo.ledger VALUES (5, 'five');
INSERT dbo.ledger VALUES (1, 'duplicate');
PRINT 'not reached';
GO
SET XACT_ABORT OFF;
SELECT @@TRANCOUNT AS trancount, (SELECT COUNT(*) FROM dbo.ledger WHERE id = 5) AS row_5;
GO
-- ROLLBACK in a trigger ends the batch with 3609.
CREATE TRIGGER dbo.ledger_refuses ON dbo.ledger AFTER INSERT AS
BEGIN
    IF EXISTS (SELECT * FROM inserted WHERE note = 'refused') ROLLBACK;
END;
GO
BEGIN TRANSACTION;
INSERT dbo.ledger VALUES (6, 'six');
INSERT dbo.ledger VALUES (7, 'refused');
PRINT 'not reached';
GO
SELECT @@TRANCOUNT AS trancount, (SELECT COUNT(*) FROM dbo.ledger WHERE id IN (6, 7)) AS rows_6_7;
DROP TRIGGER dbo.ledger_refuses;
GO
-- 266: a procedure that changes @@TRANCOUNT, reported after it returns; the batch goes on.
CREATE PROCEDURE dbo.begins_only AS BEGIN TRANSACTION;
GO
CREATE PROCEDURE dbo.commits_only AS COMMIT;
GO
EXEC dbo.begins_only;
SELECT @@TRANCOUNT AS trancount_after_begins_only;
EXEC dbo.commits_only;
SELECT @@TRANCOUNT AS trancount_after_commits_only;
GO
-- Inside TRY, 266 is an error CATCH gets.
BEGIN TRY
    EXEC dbo.begins_only;
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS error_number, @@TRANCOUNT AS trancount;
    ROLLBACK;
END CATCH;
GO
-- Balanced nesting raises nothing.
CREATE PROCEDURE dbo.balanced AS BEGIN BEGIN TRANSACTION; COMMIT; END;
GO
BEGIN TRANSACTION;
EXEC dbo.balanced;
COMMIT;
SELECT @@TRANCOUNT AS trancount;
GO
DROP PROCEDURE dbo.reads_missing, dbo.inner_converts, dbo.outer_calls, dbo.begins_only, dbo.commits_only, dbo.balanced;
DROP TABLE dbo.ledger;
GO
