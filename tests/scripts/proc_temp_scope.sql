-- #temp tables and nesting: a procedure's own #temp table shadows its caller's of the
-- same name and is dropped when the procedure returns; a procedure sees its caller's
-- #temp tables; dynamic SQL's #temp tables go when it ends.
SET NOCOUNT ON;
GO
CREATE PROCEDURE dbo.makes_own_t AS
BEGIN
    CREATE TABLE #t (inner_col int);
    INSERT #t VALUES (2);
    SELECT 'inner' AS scope, inner_col FROM #t;
END;
GO
CREATE TABLE #t (outer_col int, other int);
INSERT #t VALUES (1, 1);
EXEC dbo.makes_own_t;
SELECT 'outer' AS scope, outer_col, other FROM #t;
GO
CREATE PROCEDURE dbo.uses_callers_t AS
BEGIN
    INSERT #t VALUES (5, 5);
    SELECT COUNT(*) AS rows_in_callers_t FROM #t;
END;
GO
EXEC dbo.uses_callers_t;
GO
CREATE PROCEDURE dbo.makes_u AS
BEGIN
    CREATE TABLE #u (a int);
    INSERT #u VALUES (1);
    EXEC dbo.uses_callers_t;
END;
GO
EXEC dbo.makes_u;
SELECT * FROM #u;
GO
EXEC sp_executesql N'CREATE TABLE #d (a int); INSERT #d VALUES (3); SELECT a AS in_dynamic_sql FROM #d;';
SELECT * FROM #d;
GO
-- The same scope may not create it twice.
CREATE TABLE #t (a int);
GO
DROP TABLE #t;
DROP PROCEDURE dbo.makes_own_t, dbo.uses_callers_t, dbo.makes_u;
GO
