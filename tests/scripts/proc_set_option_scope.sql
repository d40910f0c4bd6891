-- SET options set inside a procedure, trigger or dynamic SQL end with it; IDENTITY
-- values by scope; IMPLICIT_TRANSACTIONS begins a transaction at OPEN and FETCH too.
SET NOCOUNT ON;
GO
CREATE PROCEDURE dbo.sets_options AS
BEGIN
    SET NOCOUNT OFF;
    SET XACT_ABORT ON;
    SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
    SET DATEFIRST 1;
    SELECT @@OPTIONS & 512 AS nocount_inside, @@OPTIONS & 16384 AS xact_abort_inside, @@DATEFIRST AS datefirst_inside;
END;
GO
EXEC dbo.sets_options;
SELECT @@OPTIONS & 512 AS nocount_after, @@OPTIONS & 16384 AS xact_abort_after, @@DATEFIRST AS datefirst_after,
    (SELECT transaction_isolation_level FROM sys.dm_exec_sessions WHERE session_id = @@SPID) AS isolation_after;
GO
EXEC sp_executesql N'SET XACT_ABORT ON; SELECT @@OPTIONS & 16384 AS xact_abort_in_dynamic_sql;';
SELECT @@OPTIONS & 16384 AS xact_abort_after_dynamic_sql;
GO
-- A SET in the batch itself lasts.
SET XACT_ABORT ON;
SELECT @@OPTIONS & 16384 AS xact_abort_set_by_batch;
SET XACT_ABORT OFF;
GO
-- SCOPE_IDENTITY() is the scope's own, @@IDENTITY the session's last; an INSTEAD OF
-- INSERT trigger that inserts nothing still uses up the values.
CREATE TABLE dbo.numbered (id int IDENTITY(1, 1), v int);
CREATE TABLE dbo.audit_log (id int IDENTITY(100, 1), v int);
GO
CREATE TRIGGER dbo.numbered_audit ON dbo.numbered AFTER INSERT AS INSERT dbo.audit_log (v) SELECT v FROM inserted;
GO
INSERT dbo.numbered (v) VALUES (7);
SELECT SCOPE_IDENTITY() AS scope_identity, @@IDENTITY AS last_identity;
GO
DROP TRIGGER dbo.numbered_audit;
GO
CREATE TRIGGER dbo.numbered_instead ON dbo.numbered INSTEAD OF INSERT AS SELECT id AS id_in_inserted, v FROM inserted;
GO
INSERT dbo.numbered (v) VALUES (8), (9);
GO
DROP TRIGGER dbo.numbered_instead;
INSERT dbo.numbered (v) VALUES (10);
SELECT id, v FROM dbo.numbered ORDER BY id;
GO
-- IMPLICIT_TRANSACTIONS: OPEN begins a transaction.
SET IMPLICIT_TRANSACTIONS ON;
DECLARE walk CURSOR LOCAL FOR SELECT id FROM dbo.numbered;
SELECT @@TRANCOUNT AS trancount_after_declare;
OPEN walk;
SELECT @@TRANCOUNT AS trancount_after_open;
CLOSE walk;
DEALLOCATE walk;
ROLLBACK;
SET IMPLICIT_TRANSACTIONS OFF;
GO
DROP TABLE dbo.numbered, dbo.audit_log;
DROP PROCEDURE dbo.sets_options;
GO
