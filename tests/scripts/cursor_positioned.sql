-- UPDATE and DELETE ... WHERE CURRENT OF: the row the cursor last fetched, for cursors
-- over one base table that are not read-only (KEYSET, DYNAMIC, the default type, FOR
-- UPDATE). STATIC, INSENSITIVE, FAST_FORWARD and READ_ONLY cursors are read-only
-- (16929), as is a cursor whose query is not of one table; 16930 when no row is fetched.
SET NOCOUNT ON;
CREATE TABLE dbo.items (id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL, qty int NULL);
INSERT INTO dbo.items VALUES (1, 'bolt', 10), (2, 'nut', 20), (3, 'washer', NULL), (4, 'screw', 40);
CREATE TABLE dbo.other (id int);
GO
-- The classic loop: double every quantity, delete the rows without one.
DECLARE @id int, @qty int;
DECLARE c CURSOR LOCAL KEYSET FOR SELECT id, qty FROM dbo.items ORDER BY id FOR UPDATE OF qty;
OPEN c;
FETCH NEXT FROM c INTO @id, @qty;
WHILE @@FETCH_STATUS = 0
BEGIN
    IF @qty IS NULL
        DELETE FROM dbo.items WHERE CURRENT OF c;
    ELSE
        UPDATE dbo.items SET qty = qty * 2 WHERE CURRENT OF c;
    SELECT @@ROWCOUNT AS changed;
    FETCH NEXT FROM c INTO @id, @qty;
END
CLOSE c;
DEALLOCATE c;
SELECT id, name, qty FROM dbo.items ORDER BY id;
GO
-- Scrolling back, a cursor variable, a GLOBAL cursor named with GLOBAL, OUTPUT.
DECLARE @c CURSOR;
SET @c = CURSOR SCROLL DYNAMIC FOR SELECT name FROM dbo.items WHERE qty > 20;
OPEN @c;
FETCH LAST FROM @c;
UPDATE dbo.items SET name = UPPER(name) OUTPUT deleted.name, inserted.name WHERE CURRENT OF @c;
FETCH FIRST FROM @c;
UPDATE items SET name = name + '!' WHERE CURRENT OF @c;
DEALLOCATE @c;
DECLARE g CURSOR GLOBAL FOR SELECT * FROM dbo.items WHERE id = 1;
OPEN GLOBAL g;
FETCH NEXT FROM GLOBAL g;
DELETE dbo.items WHERE CURRENT OF GLOBAL g;
CLOSE GLOBAL g;
DEALLOCATE GLOBAL g;
SELECT id, name, qty FROM dbo.items ORDER BY id;
GO
-- Inside a transaction that rolls back.
DECLARE r CURSOR LOCAL FOR SELECT id FROM dbo.items;
OPEN r;
FETCH NEXT FROM r;
BEGIN TRAN;
DELETE FROM dbo.items WHERE CURRENT OF r;
ROLLBACK;
SELECT COUNT(*) AS still_there FROM dbo.items;
GO
-- A table variable as the base.
DECLARE @t TABLE (n int PRIMARY KEY);
INSERT INTO @t VALUES (1), (2);
DECLARE v CURSOR LOCAL FOR SELECT n FROM @t ORDER BY n;
OPEN v;
FETCH NEXT FROM v;
UPDATE @t SET n = 10 WHERE CURRENT OF v;
SELECT n FROM @t ORDER BY n;
GO
-- Over a heap, ORDER BY needs a worktable (the cursor becomes KEYSET) and a keyset
-- needs a unique index (it becomes STATIC): read-only, as in SQL Server. Without the
-- ORDER BY it stays dynamic and updatable.
DECLARE @t TABLE (n int);
INSERT INTO @t VALUES (1), (2);
DECLARE v CURSOR LOCAL FOR SELECT n FROM @t ORDER BY n;
OPEN v;
FETCH NEXT FROM v;
UPDATE @t SET n = 10 WHERE CURRENT OF v;
DECLARE w CURSOR LOCAL FOR SELECT n FROM @t WHERE n = 2;
OPEN w;
FETCH NEXT FROM w;
UPDATE @t SET n = 20 WHERE CURRENT OF w;
SELECT n FROM @t ORDER BY n;
GO
-- Errors.
DECLARE s CURSOR LOCAL STATIC FOR SELECT id FROM dbo.items;
OPEN s;
FETCH NEXT FROM s;
UPDATE dbo.items SET qty = 0 WHERE CURRENT OF s;
GO
DECLARE f CURSOR LOCAL FAST_FORWARD FOR SELECT id FROM dbo.items;
OPEN f;
FETCH NEXT FROM f;
DELETE FROM dbo.items WHERE CURRENT OF f;
GO
DECLARE ro CURSOR LOCAL FOR SELECT id FROM dbo.items FOR READ ONLY;
OPEN ro;
FETCH NEXT FROM ro;
DELETE FROM dbo.items WHERE CURRENT OF ro;
GO
DECLARE j CURSOR LOCAL FOR SELECT a.id FROM dbo.items AS a JOIN dbo.other AS b ON a.id = b.id;
OPEN j;
DELETE FROM dbo.items WHERE CURRENT OF j;
GO
DECLARE n CURSOR LOCAL FOR SELECT id FROM dbo.items;
OPEN n;
DELETE FROM dbo.items WHERE CURRENT OF n;
GO
DECLARE e CURSOR LOCAL FOR SELECT id FROM dbo.items;
OPEN e;
FETCH NEXT FROM e;
FETCH NEXT FROM e;
FETCH NEXT FROM e;
FETCH NEXT FROM e;
UPDATE dbo.items SET qty = 1 WHERE CURRENT OF e;
GO
DECLARE w CURSOR LOCAL FOR SELECT id FROM dbo.items;
OPEN w;
FETCH NEXT FROM w;
UPDATE dbo.other SET id = 1 WHERE CURRENT OF w;
GO
DECLARE x CURSOR LOCAL FOR SELECT id FROM dbo.items;
UPDATE dbo.items SET qty = 1 WHERE CURRENT OF x;
GO
UPDATE dbo.items SET qty = 1 WHERE CURRENT OF nosuch;
GO
-- The fetched row deleted since OPEN (by another statement): message 16934 (severity 10,
-- so TRY does not catch it) and no row is changed.
INSERT INTO dbo.items (id, name, qty) VALUES (90, 'gone', 9);
DECLARE g CURSOR LOCAL FOR SELECT id FROM dbo.items WHERE id = 90;
OPEN g;
FETCH NEXT FROM g;
DELETE FROM dbo.items WHERE id = 90;
BEGIN TRY
    UPDATE dbo.items SET qty = 1 WHERE CURRENT OF g;
    SELECT @@ROWCOUNT AS updated;
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS caught;
END CATCH;
DELETE FROM dbo.items WHERE CURRENT OF g;
SELECT @@ROWCOUNT AS deleted;
SELECT COUNT(*) AS left_90 FROM dbo.items WHERE id = 90;
GO
SELECT id, name, qty FROM dbo.items ORDER BY id;
GO
