-- DML triggers: AFTER triggers with inserted/deleted, UPDATE(), COLUMNS_UPDATED(),
-- @@ROWCOUNT, ROLLBACK in a trigger (3609), RAISERROR/THROW, OUTPUT (334), INSTEAD OF
-- on a table and a view, nesting and recursion, SCOPE_IDENTITY() vs @@IDENTITY,
-- ENABLE/DISABLE, catalog views, DROP.
SET NOCOUNT ON;
CREATE TABLE items (id int IDENTITY PRIMARY KEY, name varchar(20) NOT NULL, qty int NOT NULL DEFAULT 0);
CREATE TABLE audit (n int IDENTITY(100, 1) PRIMARY KEY, op varchar(10), item_id int, old_qty int, new_qty int, rc int);
GO
-- An audit trigger for all three actions.
CREATE TRIGGER trg_items_audit ON items
AFTER INSERT, UPDATE, DELETE
AS
BEGIN
  DECLARE @rc int = @@ROWCOUNT;
  SET NOCOUNT ON;
  INSERT INTO audit (op, item_id, old_qty, new_qty, rc)
  SELECT CASE WHEN d.id IS NULL THEN 'INSERT' WHEN i.id IS NULL THEN 'DELETE' ELSE 'UPDATE' END,
         COALESCE(i.id, d.id), d.qty, i.qty, @rc
  FROM inserted i FULL JOIN deleted d ON i.id = d.id;
END
GO
INSERT INTO items (name, qty) VALUES ('apple', 5), ('pear', 7);
UPDATE items SET qty = qty + 1 WHERE name = 'apple';
DELETE FROM items WHERE name = 'pear';
UPDATE items SET qty = 0 WHERE 1 = 0;
SELECT op, item_id, old_qty, new_qty, rc FROM audit ORDER BY n;
GO
-- @@ROWCOUNT after the statement is the statement's own count.
UPDATE items SET qty = 1;
SELECT @@ROWCOUNT AS after_update;
GO
-- SCOPE_IDENTITY() is the statement's identity, @@IDENTITY the trigger's last insert.
INSERT INTO items (name) VALUES ('plum');
SELECT SCOPE_IDENTITY() AS scope_id, @@IDENTITY AS last_identity;
GO
-- UPDATE(col) and COLUMNS_UPDATED().
CREATE TRIGGER trg_items_cols ON items FOR UPDATE
AS
  IF UPDATE(qty) PRINT 'qty changed';
  IF UPDATE(name) PRINT 'name changed';
  PRINT 'columns_updated = ' + CONVERT(varchar(10), COLUMNS_UPDATED(), 1);
GO
UPDATE items SET qty = 3 WHERE name = 'plum';
UPDATE items SET name = 'PLUM', qty = 4 WHERE name = 'plum';
GO
DROP TRIGGER trg_items_cols;
GO
-- A trigger's error: RAISERROR goes on, the statement stays.
CREATE TRIGGER trg_items_check ON items AFTER INSERT
AS
  IF EXISTS (SELECT 1 FROM inserted WHERE qty < 0)
    RAISERROR('negative quantity', 16, 1);
GO
INSERT INTO items (name, qty) VALUES ('bad', -1);
SELECT name, qty FROM items WHERE name = 'bad';
GO
-- ROLLBACK in a trigger: everything is undone and the batch ends with 3609.
ALTER TRIGGER trg_items_check ON items AFTER INSERT
AS
  IF EXISTS (SELECT 1 FROM inserted WHERE qty < 0)
  BEGIN
    ROLLBACK TRANSACTION;
    PRINT 'rolled back in the trigger';
  END
GO
INSERT INTO items (name, qty) VALUES ('worse', -2);
PRINT 'not reached';
GO
SELECT COUNT(*) AS worse_rows FROM items WHERE name = 'worse';
SELECT @@TRANCOUNT AS trancount;
GO
BEGIN TRANSACTION;
INSERT INTO items (name, qty) VALUES ('fine', 1);
INSERT INTO items (name, qty) VALUES ('worst', -3);
PRINT 'not reached';
GO
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS fine_rows FROM items WHERE name IN ('fine', 'worst');
GO
-- THROW in a trigger ends the batch; CATCH sees it.
ALTER TRIGGER trg_items_check ON items AFTER INSERT
AS
  IF EXISTS (SELECT 1 FROM inserted WHERE qty < 0)
    THROW 50001, 'no negative quantities', 1;
GO
BEGIN TRY
  INSERT INTO items (name, qty) VALUES ('neg', -4);
END TRY
BEGIN CATCH
  SELECT ERROR_NUMBER() AS num, CAST(ERROR_MESSAGE() AS varchar(30)) AS msg, CAST(ERROR_PROCEDURE() AS varchar(20)) AS proc_name;
END CATCH;
SELECT COUNT(*) AS neg_rows FROM items WHERE name = 'neg';
GO
-- OUTPUT without INTO on a table with an enabled trigger: 334.
INSERT INTO items (name) OUTPUT inserted.id VALUES ('x');
GO
DECLARE @ids TABLE (id int);
INSERT INTO items (name) OUTPUT inserted.id INTO @ids VALUES ('y');
SELECT COUNT(*) AS captured FROM @ids;
GO
-- DISABLE / ENABLE.
DISABLE TRIGGER trg_items_check ON items;
INSERT INTO items (name, qty) VALUES ('disabled', -5);
SELECT COUNT(*) AS disabled_rows FROM items WHERE name = 'disabled';
GO
ALTER TABLE items DISABLE TRIGGER ALL;
SELECT CAST(name AS varchar(20)) AS name, is_disabled FROM sys.triggers ORDER BY name;
ALTER TABLE items ENABLE TRIGGER ALL;
GO
-- INSTEAD OF on a table: the statement changes nothing itself.
CREATE TABLE soft (id int PRIMARY KEY, name varchar(10), deleted bit NOT NULL DEFAULT 0);
INSERT INTO soft (id, name) VALUES (1, 'a'), (2, 'b');
GO
CREATE TRIGGER trg_soft_delete ON soft INSTEAD OF DELETE
AS
  UPDATE soft SET deleted = 1 WHERE id IN (SELECT id FROM deleted);
GO
DELETE FROM soft WHERE id = 1;
SELECT @@ROWCOUNT AS rc;
SELECT id, name, deleted FROM soft ORDER BY id;
GO
-- A second INSTEAD OF DELETE trigger: 2111.
CREATE TRIGGER trg_soft_delete2 ON soft INSTEAD OF DELETE AS PRINT 'no';
GO
-- Inside an INSTEAD OF trigger, DML on its table does not fire it again.
CREATE TRIGGER trg_soft_insert ON soft INSTEAD OF INSERT
AS
  INSERT INTO soft (id, name) SELECT id + 100, UPPER(name) FROM inserted;
GO
INSERT INTO soft (id, name) VALUES (3, 'c');
SELECT id, name FROM soft ORDER BY id;
GO
-- INSTEAD OF on a view makes it updatable.
CREATE TABLE people (id int PRIMARY KEY, first varchar(10), last varchar(10));
GO
CREATE VIEW people_v AS SELECT id, first + ' ' + last AS full_name FROM people;
GO
CREATE TRIGGER trg_people_v ON people_v INSTEAD OF INSERT, UPDATE, DELETE
AS
BEGIN
  DELETE FROM people WHERE id IN (SELECT id FROM deleted);
  INSERT INTO people (id, first, last)
  SELECT id, LEFT(full_name, CHARINDEX(' ', full_name) - 1), SUBSTRING(full_name, CHARINDEX(' ', full_name) + 1, 10)
  FROM inserted;
END
GO
INSERT INTO people_v (id, full_name) VALUES (1, 'Ada Lovelace'), (2, 'Alan Turing');
UPDATE people_v SET full_name = 'Grace Hopper' WHERE id = 2;
SELECT id, first, last FROM people ORDER BY id;
DELETE FROM people_v WHERE id = 1;
SELECT id, first, last FROM people ORDER BY id;
GO
-- An AFTER trigger on a view: 8197.
CREATE TRIGGER trg_people_v_after ON people_v AFTER INSERT AS PRINT 'no';
GO
-- Nesting: a trigger fires another table's trigger; TRIGGER_NESTLEVEL().
CREATE TABLE t1 (n int);
CREATE TABLE t2 (n int);
GO
CREATE TRIGGER trg_t1 ON t1 AFTER INSERT
AS
  -- Triggers fire for zero rows too: stop when there is nothing to pass on.
  IF NOT EXISTS (SELECT * FROM inserted) RETURN;
  PRINT 't1 level ' + CAST(TRIGGER_NESTLEVEL() AS varchar(10)) + ', @@NESTLEVEL ' + CAST(@@NESTLEVEL AS varchar(10));
  INSERT INTO t2 SELECT n + 1 FROM inserted WHERE n < 3;
GO
CREATE TRIGGER trg_t2 ON t2 AFTER INSERT
AS
  IF NOT EXISTS (SELECT * FROM inserted) RETURN;
  PRINT 't2 level ' + CAST(TRIGGER_NESTLEVEL() AS varchar(10));
  INSERT INTO t1 SELECT n + 1 FROM inserted WHERE n < 3;
GO
INSERT INTO t1 VALUES (0);
SELECT (SELECT COUNT(*) FROM t1) AS t1_rows, (SELECT COUNT(*) FROM t2) AS t2_rows;
GO
-- Direct recursion: off by default, on with RECURSIVE_TRIGGERS.
CREATE TABLE counter (n int);
GO
CREATE TRIGGER trg_counter ON counter AFTER INSERT
AS
  IF NOT EXISTS (SELECT * FROM inserted) RETURN;
  INSERT INTO counter SELECT n + 1 FROM inserted WHERE n < 5;
GO
INSERT INTO counter VALUES (1);
SELECT COUNT(*) AS rows_without_recursion FROM counter;
GO
ALTER DATABASE CURRENT SET RECURSIVE_TRIGGERS ON;
DELETE FROM counter;
INSERT INTO counter VALUES (1);
SELECT COUNT(*) AS rows_with_recursion FROM counter;
GO
-- Unbounded recursion stops at 32 levels (217).
ALTER TRIGGER trg_counter ON counter AFTER INSERT
AS
  INSERT INTO counter SELECT n + 1 FROM inserted;
GO
INSERT INTO counter VALUES (1);
GO
ALTER DATABASE CURRENT SET RECURSIVE_TRIGGERS OFF;
SELECT @@TRANCOUNT AS trancount;
GO
-- Catalog views.
SELECT CAST(t.name AS varchar(20)) AS name, CAST(OBJECT_NAME(t.parent_id) AS varchar(10)) AS parent,
  t.is_instead_of_trigger, t.is_disabled, CAST(t.type_desc AS varchar(12)) AS type_desc
FROM sys.triggers t ORDER BY t.name;
SELECT CAST(OBJECT_NAME(object_id) AS varchar(20)) AS trigger_name, CAST(type_desc AS varchar(10)) AS type_desc
FROM sys.trigger_events ORDER BY 1, type;
SELECT CAST(name AS varchar(20)) AS name, type, CAST(OBJECT_NAME(parent_object_id) AS varchar(10)) AS parent
FROM sys.objects WHERE type = 'TR' ORDER BY name;
SELECT OBJECT_DEFINITION(OBJECT_ID('trg_soft_delete')) AS def;
GO
-- DROP TRIGGER [IF EXISTS]; dropping a table drops its triggers.
DROP TRIGGER IF EXISTS no_such_trigger;
DROP TRIGGER trg_soft_insert;
DROP TABLE soft;
SELECT COUNT(*) AS soft_triggers FROM sys.triggers WHERE name LIKE 'trg_soft%';
DROP TRIGGER trg_soft_delete;
GO
