-- A module keeps its whole batch as its definition (comments above CREATE and after
-- the body included), and line numbers inside it count from the start of the batch.
PRINT 'module definitions';
GO
/* Header comment:
   two lines */
-- and a line comment
CREATE PROCEDURE p_lines
AS
BEGIN
  SELECT 1 AS one;
  SELECT 1 / 0 AS boom;
END
-- trailing comment
GO
SELECT OBJECT_DEFINITION(OBJECT_ID('p_lines')) AS def;
GO
EXEC p_lines;
GO
BEGIN TRY
  EXEC p_lines;
END TRY
BEGIN CATCH
  SELECT ERROR_LINE() AS line, ERROR_PROCEDURE() AS proc_name;
END CATCH;
GO

-- ALTER is stored as CREATE
ALTER PROCEDURE p_lines AS SELECT 2 AS two;
GO
SELECT definition FROM sys.sql_modules WHERE object_id = OBJECT_ID('p_lines');
GO
/*X*/ CREATE OR /*Y*/ ALTER PROCEDURE p_lines AS SELECT 3 AS three /*Z*/
GO
SELECT definition FROM sys.sql_modules WHERE object_id = OBJECT_ID('p_lines');
EXEC p_lines;
GO
-- comment before a function
CREATE FUNCTION f_lines (@d int)
RETURNS int
AS
BEGIN
  RETURN 10 / @d;
END;
GO
EXEC sp_helptext 'f_lines';
EXEC sp_helptext 'nope';
GO
CREATE TABLE t_no_text (a int);
EXEC sp_helptext 't_no_text';
GO
SELECT dbo.f_lines(0) AS r;
GO

-- comment before a view
CREATE VIEW v_lines AS SELECT 1 AS a;
GO
SELECT OBJECT_DEFINITION(OBJECT_ID('v_lines')) AS def;
SELECT a FROM v_lines;
GO
-- Created by dynamic SQL: the definition is the dynamic batch's text.
EXEC ('-- dynamic
CREATE PROCEDURE p_dyn AS SELECT 4 AS four');
GO
SELECT OBJECT_DEFINITION(OBJECT_ID('p_dyn')) AS def;
EXEC p_dyn;
GO
