-- EXEC inside a function: a string is refused at CREATE (443), a procedure when the
-- function runs (557); the statement that called the function fails.
CREATE PROCEDURE p AS SELECT 1 AS one;
GO
CREATE FUNCTION f_str() RETURNS int AS BEGIN EXEC ('SELECT 1'); RETURN 1; END;
GO
CREATE FUNCTION f_proc() RETURNS int AS BEGIN EXEC p; RETURN 1; END;
GO
CREATE FUNCTION f_sql() RETURNS int AS BEGIN EXEC sp_executesql N'SELECT 1'; RETURN 1; END;
GO
CREATE FUNCTION f_tvf() RETURNS @r TABLE (a int) AS
BEGIN
  INSERT @r VALUES (1);
  EXEC dbo.p;
  RETURN;
END;
GO
SELECT name FROM sys.objects WHERE name LIKE 'f[_]%' ORDER BY name;
GO
SELECT dbo.f_proc() AS r;
PRINT 'after f_proc';
GO
SELECT dbo.f_sql() AS r;
GO
SELECT * FROM dbo.f_tvf();
GO
BEGIN TRY
  DECLARE @v int = dbo.f_proc();
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS num, ERROR_PROCEDURE() AS proc_name, ERROR_MESSAGE() AS msg;
END CATCH;
GO
