-- SET XACT_ABORT: OFF, a failed statement leaves the transaction open; ON, the error rolls back and ends the batch.
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int NOT NULL CONSTRAINT PK_t PRIMARY KEY);
GO
SET XACT_ABORT OFF;
BEGIN TRAN;
INSERT INTO dbo.t VALUES (1);
INSERT INTO dbo.t VALUES (1);
PRINT CONCAT('still running, trancount ', @@TRANCOUNT);
COMMIT;
GO
SELECT COUNT(*) AS rows_kept FROM dbo.t;
GO
SET XACT_ABORT ON;
BEGIN TRAN;
INSERT INTO dbo.t VALUES (2);
INSERT INTO dbo.t VALUES (1);
PRINT 'not reached';
GO
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS rows_kept FROM dbo.t;
GO
SET XACT_ABORT ON;
BEGIN TRY
    BEGIN TRAN;
    INSERT INTO dbo.t VALUES (1);
END TRY
BEGIN CATCH
    PRINT CONCAT('xact_state in catch: ', XACT_STATE());
    IF XACT_STATE() <> 0 ROLLBACK;
END CATCH
PRINT CONCAT('trancount: ', @@TRANCOUNT);
GO
