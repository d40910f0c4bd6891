-- A function that a table's computed column calls cannot be dropped (3729), and the
-- failed DROP leaves nothing half done: the table still works and can be dropped.
SET NOCOUNT ON;
GO
CREATE FUNCTION dbo.twice (@x int) RETURNS int AS BEGIN RETURN @x * 2; END;
GO
CREATE TABLE dbo.uses_twice (a int, b AS dbo.twice(a));
INSERT dbo.uses_twice (a) VALUES (21);
GO
DROP FUNCTION dbo.twice;
GO
SELECT a, b FROM dbo.uses_twice;
SELECT dbo.twice(5) AS still_there;
GO
DROP TABLE dbo.uses_twice;
DROP FUNCTION dbo.twice;
SELECT OBJECT_ID('dbo.uses_twice') AS table_id, OBJECT_ID('dbo.twice') AS function_id;
GO
