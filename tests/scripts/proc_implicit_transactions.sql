-- SET IMPLICIT_TRANSACTIONS ON (what JDBC's setAutoCommit(false) sends): a data statement
-- outside a transaction begins one; SELECT without a table does not.
SET NOCOUNT ON;
CREATE TABLE dbo.t (v int NOT NULL);
GO
SET IMPLICIT_TRANSACTIONS ON;
SELECT @@TRANCOUNT AS after_set;
INSERT INTO dbo.t VALUES (1);
SELECT @@TRANCOUNT AS after_insert;
ROLLBACK;
SELECT @@TRANCOUNT AS after_rollback;
SELECT COUNT(*) AS rows_after_rollback FROM dbo.t;
SELECT @@TRANCOUNT AS after_select_from_table;
COMMIT;
INSERT INTO dbo.t VALUES (2);
IF @@TRANCOUNT > 0 COMMIT TRAN;
SELECT @@TRANCOUNT AS after_commit;
GO
-- BEGIN TRANSACTION in implicit mode outside a transaction nests inside the implicit one.
BEGIN TRANSACTION;
SELECT @@TRANCOUNT AS begin_tran;
COMMIT;
COMMIT;
SET IMPLICIT_TRANSACTIONS OFF;
INSERT INTO dbo.t VALUES (3);
SELECT @@TRANCOUNT AS implicit_off;
SELECT v FROM dbo.t ORDER BY v;
