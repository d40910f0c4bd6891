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
