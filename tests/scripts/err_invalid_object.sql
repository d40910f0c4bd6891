-- Msg 208: an unknown table ends the batch at that statement (statements before it have run); TRY/CATCH in the
-- same scope does not catch it.
SET NOCOUNT ON;
GO
PRINT 'first';
SELECT * FROM dbo.missing;
PRINT 'not reached';
GO
SELECT name FROM no_such_table WHERE 1 = 0;
GO
BEGIN TRY
    SELECT * FROM dbo.missing;
END TRY
BEGIN CATCH
    PRINT 'a name resolution error in the same scope is not caught';
END CATCH
GO
INSERT INTO dbo.missing VALUES (1);
GO
PRINT 'the next batch runs';
GO
