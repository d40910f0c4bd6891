-- THROW and RAISERROR outside TRY: severities, printf-style arguments; RAISERROR lets the batch go on, THROW ends it.
PRINT 'start';
RAISERROR ('info only %d', 10, 1, 5);
RAISERROR ('error-level %s and %d', 16, 2, 'text', 42);
PRINT 'RAISERROR does not stop the batch';
THROW 50010, 'thrown', 1;
PRINT 'THROW stops the batch';
GO
RAISERROR (N'%5s|%-5s|%05d', 10, 1, 'ab', 'cd', 42);
RAISERROR ('severity 0', 0, 1) WITH NOWAIT;
GO
DECLARE @msg nvarchar(100) = FORMATMESSAGE('%s has %d items', 'cart', 3);
PRINT @msg;
THROW 50100, 'too small', 255;
GO
-- Severity 19 and up needs WITH LOG (2754 without it); 20 and up ends the batch, past
-- any CATCH (over TDS it closes the connection: tests/clients).
RAISERROR ('needs WITH LOG', 19, 1);
RAISERROR ('severity 19 logged', 19, 1) WITH LOG;
PRINT 'severity 19 lets the batch go on';
GO
BEGIN TRY
    RAISERROR ('fatal', 20, 1) WITH LOG;
END TRY
BEGIN CATCH
    PRINT 'not caught';
END CATCH;
PRINT 'not reached';
GO
