-- Cursors: WHILE @@FETCH_STATUS = 0 loops, SCROLL fetches, cursor variables, LOCAL vs GLOBAL, procedures, CURSOR_STATUS, @@CURSOR_ROWS and the misuse errors.
SET NOCOUNT ON;
CREATE TABLE dbo.items (id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL, qty int NULL);
INSERT INTO dbo.items VALUES (1, 'bolt', 10), (2, 'nut', 20), (3, 'washer', NULL), (4, 'screw', 40);
GO
-- The DBA loop: every database, names gathered into one string.
DECLARE @name sysname, @list nvarchar(60) = N'';
DECLARE dbs CURSOR LOCAL FAST_FORWARD FOR
    SELECT name FROM sys.databases WHERE database_id <= 4 ORDER BY database_id;
OPEN dbs;
FETCH NEXT FROM dbs INTO @name;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @list = @list + @name + N';';
    FETCH NEXT FROM dbs INTO @name;
END
SELECT @list AS databases, @@FETCH_STATUS AS fetch_status;
CLOSE dbs;
DEALLOCATE dbs;
GO
-- A user table; the INTO variables convert (int into varchar) and NULL comes through.
DECLARE @id int, @n varchar(20), @q varchar(10), @out varchar(200) = '';
DECLARE c CURSOR FOR SELECT id, name, qty FROM dbo.items ORDER BY id;
OPEN c;
FETCH c INTO @id, @n, @q;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @out = @out + CONCAT(@id, ':', @n, '=', ISNULL(@q, 'null'), ' ');
    FETCH NEXT FROM c INTO @id, @n, @q;
END
SELECT @out AS rows_seen;
CLOSE c;
DEALLOCATE c;
GO
-- Without INTO each FETCH is a result set; past the end it is empty.
DECLARE c CURSOR STATIC FOR SELECT id, name FROM dbo.items WHERE id <= 2 ORDER BY id;
OPEN c;
SELECT @@CURSOR_ROWS AS cursor_rows;
FETCH NEXT FROM c;
FETCH NEXT FROM c;
FETCH NEXT FROM c;
SELECT @@FETCH_STATUS AS after_end;
CLOSE c;
SELECT @@CURSOR_ROWS AS closed_rows;
DEALLOCATE c;
GO
-- SCROLL: every direction, and the ends.
DECLARE @id int;
DECLARE s SCROLL CURSOR FOR SELECT id FROM dbo.items ORDER BY id;
OPEN s;
FETCH LAST FROM s INTO @id;      SELECT 'last' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH PRIOR FROM s INTO @id;     SELECT 'prior' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH FIRST FROM s INTO @id;     SELECT 'first' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH PRIOR FROM s INTO @id;     SELECT 'prior at start' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH NEXT FROM s INTO @id;      SELECT 'next from before' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH ABSOLUTE 3 FROM s INTO @id; SELECT 'absolute 3' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH ABSOLUTE -1 FROM s INTO @id; SELECT 'absolute -1' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH RELATIVE -2 FROM s INTO @id; SELECT 'relative -2' AS f, @id AS id, @@FETCH_STATUS AS st;
DECLARE @k int = 1;
FETCH RELATIVE @k FROM s INTO @id; SELECT 'relative @k' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH ABSOLUTE 9 FROM s INTO @id; SELECT 'absolute 9' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH PRIOR FROM s INTO @id;     SELECT 'prior from after' AS f, @id AS id, @@FETCH_STATUS AS st;
CLOSE s;
DEALLOCATE s;
GO
-- STATIC: rows are those of OPEN time.
DECLARE @id int, @seen int = 0;
DECLARE st CURSOR LOCAL STATIC FOR SELECT id FROM dbo.items;
OPEN st;
DELETE FROM dbo.items WHERE id = 4;
FETCH NEXT FROM st INTO @id;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @seen += 1;
    FETCH NEXT FROM st INTO @id;
END
SELECT @seen AS rows_from_open, (SELECT COUNT(*) FROM dbo.items) AS rows_now;
INSERT INTO dbo.items VALUES (4, 'screw', 40);
GO
-- Cursor variables.
DECLARE @c CURSOR, @n varchar(20);
SELECT CURSOR_STATUS('variable', '@c') AS unassigned;
SET @c = CURSOR LOCAL SCROLL FOR SELECT name FROM dbo.items WHERE id > 2 ORDER BY id DESC;
SELECT CURSOR_STATUS('variable', '@c') AS assigned;
OPEN @c;
SELECT CURSOR_STATUS('variable', '@c') AS opened;
FETCH LAST FROM @c INTO @n;
SELECT @n AS last_name;
CLOSE @c;
DEALLOCATE @c;
SELECT CURSOR_STATUS('variable', '@c') AS deallocated, CURSOR_STATUS('variable', '@nope') AS undeclared;
GO
-- CURSOR_STATUS for names: -3 missing, -1 closed, 1 rows, 0 empty; a GLOBAL cursor outlives its batch.
SELECT CURSOR_STATUS('global', 'g') AS before_declare;
DECLARE g CURSOR GLOBAL STATIC FOR SELECT id FROM dbo.items WHERE id < 0;
SELECT CURSOR_STATUS('global', 'g') AS declared;
OPEN g;
SELECT CURSOR_STATUS('global', 'g') AS open_empty, @@CURSOR_ROWS AS cursor_rows;
GO
SELECT CURSOR_STATUS('global', 'g') AS next_batch, CURSOR_STATUS('local', 'g') AS as_local;
CLOSE GLOBAL g;
DEALLOCATE GLOBAL g;
SELECT CURSOR_STATUS('global', 'g') AS deallocated;
GO
-- A LOCAL cursor ends with its batch.
DECLARE l CURSOR LOCAL FOR SELECT 1;
OPEN l;
SELECT CURSOR_STATUS('local', 'l') AS in_batch;
GO
SELECT CURSOR_STATUS('local', 'l') AS next_batch;
OPEN l;
GO
-- LOCAL and GLOBAL cursors of one name: the LOCAL one wins unless GLOBAL is said.
DECLARE twin CURSOR GLOBAL FOR SELECT 'global' AS which;
DECLARE twin CURSOR LOCAL FOR SELECT 'local' AS which;
OPEN twin;
OPEN GLOBAL twin;
FETCH NEXT FROM twin;
FETCH NEXT FROM GLOBAL twin;
DEALLOCATE twin;
DEALLOCATE GLOBAL twin;
GO
-- Procedures: a LOCAL cursor of each call, nested calls, @@FETCH_STATUS after the call.
CREATE PROCEDURE dbo.sum_qty @min int, @total int OUTPUT AS
BEGIN
    DECLARE @q int;
    SET @total = 0;
    DECLARE pc CURSOR LOCAL FORWARD_ONLY READ_ONLY FOR SELECT ISNULL(qty, 0) FROM dbo.items WHERE id >= @min;
    OPEN pc;
    FETCH NEXT FROM pc INTO @q;
    WHILE @@FETCH_STATUS = 0
    BEGIN
        SET @total += @q;
        FETCH NEXT FROM pc INTO @q;
    END
    CLOSE pc;
    DEALLOCATE pc;
END
GO
CREATE PROCEDURE dbo.per_item AS
BEGIN
    DECLARE @id int, @t int;
    DECLARE outer_c CURSOR LOCAL FOR SELECT id FROM dbo.items ORDER BY id;
    OPEN outer_c;
    FETCH NEXT FROM outer_c INTO @id;
    WHILE @@FETCH_STATUS = 0
    BEGIN
        EXEC dbo.sum_qty @id, @t OUTPUT;
        PRINT CONCAT('from ', @id, ': ', @t, ' (fetch status after the call ', @@FETCH_STATUS, ')');
        FETCH NEXT FROM outer_c INTO @id;
    END
    DEALLOCATE outer_c;
END
GO
EXEC dbo.per_item;
SELECT CURSOR_STATUS('global', 'outer_c') AS outer_after, CURSOR_STATUS('local', 'pc') AS pc_after;
GO
-- Errors.
DECLARE e CURSOR FOR SELECT id FROM dbo.items;
DECLARE e CURSOR FOR SELECT id FROM dbo.items;
FETCH NEXT FROM e;
OPEN e;
OPEN e;
DECLARE @a int;
FETCH NEXT FROM e INTO @a, @a;
FETCH PRIOR FROM e INTO @a;
FETCH ABSOLUTE 2 FROM e INTO @a;
CLOSE e;
CLOSE e;
DEALLOCATE e;
DEALLOCATE e;
OPEN nosuch;
DECLARE @v CURSOR;
OPEN @v;
GO
-- Conflicting options.
DECLARE bad CURSOR FAST_FORWARD SCROLL FOR SELECT 1;
GO
-- The default cursor is dynamic: no row count.
DECLARE d CURSOR FOR SELECT id FROM dbo.items;
OPEN d;
SELECT @@CURSOR_ROWS AS dynamic_rows, CURSOR_STATUS('global', 'd') AS status;
DEALLOCATE d;
SELECT @@CURSOR_ROWS AS after_deallocate;
GO
-- Positioned changes (WHERE CURRENT OF): cursor_positioned.sql.
