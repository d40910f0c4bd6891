-- KEYSET and DYNAMIC cursors see the table as it is at each FETCH (here the session's
-- own changes): a keyset row deleted since OPEN is @@FETCH_STATUS -2, a dynamic cursor
-- sees rows inserted ahead of it; implicit conversions and TYPE_WARNING (16956).
SET NOCOUNT ON;
CREATE TABLE dbo.k (id int NOT NULL PRIMARY KEY, v varchar(10) NOT NULL, n int NULL);
INSERT INTO dbo.k VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40);
CREATE TABLE dbo.heap (n int);
INSERT INTO dbo.heap VALUES (3), (1), (2);
GO
-- KEYSET: updated values show, a deleted row is -2 (INTO variables unchanged), a row
-- whose key changed is deleted for the cursor, inserted rows are not seen, and
-- @@CURSOR_ROWS stays the keyset's size.
DECLARE @id int, @v varchar(10), @log varchar(200) = '';
DECLARE c CURSOR LOCAL KEYSET FOR SELECT id, v FROM dbo.k WHERE n >= 20 ORDER BY v DESC;
OPEN c;
SELECT @@CURSOR_ROWS AS keyset_rows;
UPDATE dbo.k SET v = 'D!' WHERE id = 4;
UPDATE dbo.k SET n = 0 WHERE id = 2;
DELETE FROM dbo.k WHERE id = 3;
INSERT INTO dbo.k VALUES (5, 'z', 50);
FETCH NEXT FROM c INTO @id, @v;
WHILE @@FETCH_STATUS <> -1
BEGIN
    SET @log = @log + CONCAT(@@FETCH_STATUS, ':', @id, '=', @v, ' ');
    FETCH NEXT FROM c INTO @id, @v;
END
SELECT @log AS fetched, @@CURSOR_ROWS AS cursor_rows;
FETCH ABSOLUTE 2 FROM c;
SELECT @@FETCH_STATUS AS missing_row;
UPDATE dbo.k SET id = 40 WHERE id = 4;
FETCH FIRST FROM c INTO @id, @v;
SELECT @@FETCH_STATUS AS key_changed, @id AS id_unchanged;
CLOSE c;
DEALLOCATE c;
GO
-- DYNAMIC: rows inserted after OPEN in the range ahead appear, deleted ones disappear,
-- the WHERE clause is evaluated at each FETCH; PRIOR, FIRST, LAST and RELATIVE move
-- from the current row; ABSOLUTE is 16925.
DELETE FROM dbo.k;
INSERT INTO dbo.k VALUES (10, 'a', 1), (20, 'b', 1), (30, 'c', 1), (40, 'd', 1);
DECLARE @id int, @log varchar(200) = '';
DECLARE d CURSOR LOCAL SCROLL DYNAMIC FOR SELECT id FROM dbo.k WHERE n = 1;
OPEN d;
SELECT @@CURSOR_ROWS AS dynamic_rows, CURSOR_STATUS('local', 'd') AS status;
FETCH NEXT FROM d INTO @id;
SET @log = CONCAT(@id, ' ');
INSERT INTO dbo.k VALUES (15, 'x', 1), (25, 'y', 1), (5, 'w', 1), (35, 'q', 0);
DELETE FROM dbo.k WHERE id = 30;
UPDATE dbo.k SET n = 0 WHERE id = 40;
FETCH NEXT FROM d INTO @id;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @log = @log + CONCAT(@id, ' ');
    FETCH NEXT FROM d INTO @id;
END
SELECT @log AS forward, @@FETCH_STATUS AS at_end;
FETCH PRIOR FROM d INTO @id;  SELECT 'prior from after' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH PRIOR FROM d INTO @id;  SELECT 'prior' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH RELATIVE -2 FROM d INTO @id;  SELECT 'relative -2' AS f, @id AS id, @@FETCH_STATUS AS st;
DELETE FROM dbo.k WHERE id = 20;
FETCH NEXT FROM d INTO @id;  SELECT 'next after a delete' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH FIRST FROM d INTO @id;  SELECT 'first' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH LAST FROM d INTO @id;   SELECT 'last' AS f, @id AS id, @@FETCH_STATUS AS st;
FETCH RELATIVE 0 FROM d;
FETCH ABSOLUTE 1 FROM d;
CLOSE d;
DEALLOCATE d;
GO
-- DYNAMIC with ORDER BY the clustered key descending; the default cursor type (forward
-- only, dynamic) sees a row inserted ahead of it; updated values show.
DECLARE @id int, @log varchar(200) = '';
DECLARE r CURSOR LOCAL FOR SELECT id FROM dbo.k ORDER BY id DESC;
OPEN r;
SELECT @@CURSOR_ROWS AS default_rows;
FETCH NEXT FROM r INTO @id;
INSERT INTO dbo.k VALUES (1, 'first', 1);
UPDATE dbo.k SET id = 2 WHERE id = 5;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @log = @log + CONCAT(@id, ' ');
    FETCH NEXT FROM r INTO @id;
END
SELECT @log AS descending;
DEALLOCATE r;
GO
-- A FAST_FORWARD cursor reads like a dynamic one; a positioned DELETE through a
-- default cursor leaves the loop going.
DECLARE @id int, @v varchar(10), @log varchar(200) = '';
DECLARE f CURSOR LOCAL FAST_FORWARD FOR SELECT id, v FROM dbo.k;
OPEN f;
FETCH NEXT FROM f INTO @id, @v;
UPDATE dbo.k SET v = 'new' WHERE id = 10;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @log = @log + CONCAT(@id, '=', @v, ' ');
    FETCH NEXT FROM f INTO @id, @v;
END
SELECT @log AS fast_forward, @@CURSOR_ROWS AS cursor_rows;
DEALLOCATE f;
DECLARE p CURSOR LOCAL FOR SELECT id FROM dbo.k;
OPEN p;
FETCH NEXT FROM p INTO @id;
WHILE @@FETCH_STATUS = 0
BEGIN
    IF @id % 10 <> 0 DELETE FROM dbo.k WHERE CURRENT OF p;
    FETCH NEXT FROM p INTO @id;
END
SELECT id FROM dbo.k ORDER BY id;
GO
-- Conversions: DYNAMIC with an ORDER BY off the clustered key becomes KEYSET (a row
-- count, rows inserted later unseen); an aggregate or DISTINCT makes STATIC; over a
-- heap with ORDER BY, KEYSET becomes STATIC (no unique index). TYPE_WARNING says so.
DECLARE c1 CURSOR LOCAL DYNAMIC TYPE_WARNING FOR SELECT id FROM dbo.k ORDER BY v;
OPEN c1;
SELECT @@CURSOR_ROWS AS became_keyset;
INSERT INTO dbo.k VALUES (50, 'e', 1);
DECLARE @id int, @seen int = 0;
FETCH NEXT FROM c1 INTO @id;
WHILE @@FETCH_STATUS = 0
BEGIN
    SET @seen += 1;
    FETCH NEXT FROM c1 INTO @id;
END
SELECT @seen AS rows_seen;
DECLARE c2 CURSOR LOCAL KEYSET TYPE_WARNING FOR SELECT COUNT(*) FROM dbo.k;
OPEN c2;
DECLARE c3 CURSOR LOCAL DYNAMIC TYPE_WARNING FOR SELECT DISTINCT n FROM dbo.k;
OPEN c3;
DECLARE c4 CURSOR LOCAL KEYSET TYPE_WARNING FOR SELECT n FROM dbo.heap ORDER BY n;
OPEN c4;
SELECT @@CURSOR_ROWS AS static_rows;
DELETE FROM dbo.heap WHERE n = 1;
FETCH FIRST FROM c4;
DECLARE c5 CURSOR LOCAL KEYSET TYPE_WARNING FOR SELECT id FROM dbo.k;
OPEN c5;
SELECT 'no warning for a keyset that stays one' AS c5;
GO
-- Variables in the query take their OPEN-time values; a GLOBAL keyset cursor fetched in
-- a later batch.
DECLARE @min int = 20;
DECLARE g CURSOR GLOBAL KEYSET FOR SELECT id, @min AS floor FROM dbo.k WHERE id >= @min;
OPEN g;
SET @min = 1000;
FETCH NEXT FROM g;
GO
UPDATE dbo.k SET id = 51 WHERE id = 50;
FETCH NEXT FROM GLOBAL g;
SELECT @@FETCH_STATUS AS after_key_update;
FETCH NEXT FROM GLOBAL g;
DEALLOCATE GLOBAL g;
GO
