-- TRY/CATCH: the ERROR_* functions, an error raised inside a procedure, nested TRY, THROW to rethrow.
SET NOCOUNT ON;
GO
CREATE PROCEDURE dbo.fail AS
BEGIN
    DECLARE @z int;
    SET @z = CAST('abc' AS int);
END
GO
BEGIN TRY
    PRINT 'before';
    DECLARE @x int = 1 / 0;
    PRINT 'not reached';
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS num, ERROR_SEVERITY() AS sev, ERROR_STATE() AS st, ERROR_LINE() AS line,
        CAST(ERROR_MESSAGE() AS varchar(40)) AS msg;
END CATCH
PRINT 'after';
GO
BEGIN TRY
    EXEC dbo.fail;
END TRY
BEGIN CATCH
    PRINT CONCAT('caught ', ERROR_NUMBER(), ' in ', ERROR_PROCEDURE(), ' at line ', ERROR_LINE());
    PRINT ERROR_MESSAGE();
END CATCH
GO
BEGIN TRY
    BEGIN TRY
        THROW 50001, 'inner problem', 3;
    END TRY
    BEGIN CATCH
        PRINT 'inner catch: ' + ERROR_MESSAGE();
        THROW;
    END CATCH
END TRY
BEGIN CATCH
    PRINT CONCAT('outer catch: ', ERROR_NUMBER(), ' state ', ERROR_STATE());
END CATCH
SELECT ERROR_NUMBER() AS outside_catch;
GO
BEGIN TRY
    SELECT 1 AS one;
END TRY
BEGIN CATCH
    PRINT 'no error, not printed';
END CATCH
GO
