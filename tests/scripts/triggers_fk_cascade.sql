-- FOREIGN KEY cascades fire the AFTER triggers of the referencing tables: ON DELETE
-- CASCADE its DELETE triggers, ON UPDATE CASCADE, SET NULL and SET DEFAULT its UPDATE
-- triggers, once per table with every cascaded row in deleted/inserted, after all the
-- cascades, deepest table first, before the triggers of the statement's own table.
-- INSTEAD OF DELETE/UPDATE triggers and cascading foreign keys exclude each other
-- (2113, 1787).
SET NOCOUNT ON;
CREATE TABLE dbo.log (seq int IDENTITY PRIMARY KEY, what varchar(200));
CREATE TABLE dbo.parent (id int PRIMARY KEY, name varchar(10));
CREATE TABLE dbo.child (
    id int PRIMARY KEY,
    parent_id int REFERENCES dbo.parent (id) ON DELETE CASCADE ON UPDATE CASCADE,
    n int);
CREATE TABLE dbo.grandchild (
    id int PRIMARY KEY,
    child_id int REFERENCES dbo.child (id) ON DELETE CASCADE);
CREATE TABLE dbo.note (
    id int PRIMARY KEY,
    parent_id int NULL DEFAULT 2 REFERENCES dbo.parent (id) ON DELETE SET DEFAULT ON UPDATE SET NULL);
INSERT INTO dbo.parent VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO dbo.child VALUES (10, 1, 0), (11, 1, 0), (20, 2, 0);
INSERT INTO dbo.grandchild VALUES (100, 10), (101, 10), (110, 11);
INSERT INTO dbo.note VALUES (1, 1), (2, 3);
GO
CREATE TRIGGER dbo.parent_del ON dbo.parent AFTER DELETE AS
    INSERT INTO dbo.log (what) SELECT 'parent delete: ' + CAST(COUNT(*) AS varchar(10)) + ' rows' FROM deleted;
GO
CREATE TRIGGER dbo.parent_upd ON dbo.parent AFTER UPDATE AS
    INSERT INTO dbo.log (what) SELECT 'parent update: ' + CAST(COUNT(*) AS varchar(10)) + ' rows' FROM deleted;
GO
CREATE TRIGGER dbo.child_del ON dbo.child AFTER DELETE AS
    INSERT INTO dbo.log (what)
    SELECT 'child delete: @@ROWCOUNT ' + CAST(@@ROWCOUNT AS varchar(10)) + ', ids '
        + STRING_AGG(CAST(id AS varchar(10)), ',') WITHIN GROUP (ORDER BY id)
    FROM deleted;
GO
CREATE TRIGGER dbo.child_upd ON dbo.child AFTER UPDATE AS
    INSERT INTO dbo.log (what)
    SELECT 'child update: ' + CAST(d.id AS varchar(10)) + ' parent ' + CAST(d.parent_id AS varchar(10))
        + ' -> ' + CAST(i.parent_id AS varchar(10))
        + IIF(UPDATE(parent_id), ', parent_id updated', '') + IIF(UPDATE(n), ', n updated', '')
    FROM deleted AS d JOIN inserted AS i ON i.id = d.id;
GO
CREATE TRIGGER dbo.grandchild_del ON dbo.grandchild AFTER DELETE AS
    INSERT INTO dbo.log (what)
    SELECT 'grandchild delete: ids ' + STRING_AGG(CAST(id AS varchar(10)), ',') WITHIN GROUP (ORDER BY id)
    FROM deleted;
GO
CREATE TRIGGER dbo.note_upd ON dbo.note AFTER UPDATE AS
    INSERT INTO dbo.log (what)
    SELECT 'note update: ' + CAST(d.id AS varchar(10)) + ' parent ' + ISNULL(CAST(d.parent_id AS varchar(10)), 'NULL')
        + ' -> ' + ISNULL(CAST(i.parent_id AS varchar(10)), 'NULL')
    FROM deleted AS d JOIN inserted AS i ON i.id = d.id;
GO
-- ON DELETE CASCADE two levels down and ON DELETE SET DEFAULT: each chain fires its
-- triggers deepest first (grandchild, then child; the note's chain on its own), then the
-- parent's own trigger fires.
DELETE FROM dbo.parent WHERE id = 1;
SELECT what FROM dbo.log ORDER BY seq;
SELECT id, parent_id FROM dbo.note ORDER BY id;
DELETE FROM dbo.log;
GO
-- ON UPDATE CASCADE and ON UPDATE SET NULL: the referencing tables' UPDATE triggers,
-- UPDATE() true for the foreign key's columns only.
UPDATE dbo.parent SET id = 30 WHERE id = 3;
UPDATE dbo.parent SET id = 22 WHERE id = 2;
SELECT what FROM dbo.log ORDER BY seq;
SELECT id, parent_id FROM dbo.child ORDER BY id;
SELECT id, parent_id FROM dbo.note ORDER BY id;
DELETE FROM dbo.log;
GO
-- A cascade that reaches no row fires no trigger of the referencing table; the
-- statement's own trigger fires anyway.
DELETE FROM dbo.parent WHERE id = 99;
INSERT INTO dbo.parent VALUES (4, 'four');
DELETE FROM dbo.parent WHERE id = 4;
SELECT what FROM dbo.log ORDER BY seq;
DELETE FROM dbo.log;
GO
-- A disabled trigger does not fire on a cascade; a trigger error rolls the whole
-- statement back, the parent's row and the cascaded rows with it.
DISABLE TRIGGER dbo.grandchild_del ON dbo.grandchild;
GO
CREATE OR ALTER TRIGGER dbo.child_del ON dbo.child AFTER DELETE AS
    IF EXISTS (SELECT * FROM deleted WHERE id = 20)
        THROW 50001, 'child 20 is protected', 1;
    INSERT INTO dbo.log (what) SELECT 'child delete: ' + CAST(COUNT(*) AS varchar(10)) + ' rows' FROM deleted;
GO
DELETE FROM dbo.parent WHERE id = 22;
GO
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, parent_id FROM dbo.child ORDER BY id;
SELECT what FROM dbo.log ORDER BY seq;
GO
-- MERGE's deletes cascade too (the grandchild's trigger is disabled).
INSERT INTO dbo.parent VALUES (5, 'five');
INSERT INTO dbo.child VALUES (50, 5, 0), (51, 5, 0);
INSERT INTO dbo.grandchild VALUES (500, 50);
MERGE dbo.parent AS p USING (VALUES (5)) AS s (id) ON p.id = s.id
WHEN MATCHED THEN DELETE;
SELECT what FROM dbo.log ORDER BY seq;
SELECT COUNT(*) AS grandchildren_left FROM dbo.grandchild;
DELETE FROM dbo.log;
GO
-- 2113: an INSTEAD OF DELETE / UPDATE trigger on a table whose foreign key cascades
-- that action; INSTEAD OF INSERT is allowed, as is INSTEAD OF UPDATE when only the
-- deletes cascade.
CREATE TRIGGER dbo.child_instead ON dbo.child INSTEAD OF DELETE AS PRINT 'no';
GO
CREATE TRIGGER dbo.child_instead ON dbo.child INSTEAD OF UPDATE AS PRINT 'no';
GO
CREATE TRIGGER dbo.child_instead ON dbo.child INSTEAD OF INSERT AS PRINT 'instead of insert';
GO
CREATE TRIGGER dbo.grandchild_instead ON dbo.grandchild INSTEAD OF UPDATE AS PRINT 'instead of update';
GO
ALTER TRIGGER dbo.grandchild_instead ON dbo.grandchild INSTEAD OF UPDATE, DELETE AS PRINT 'no';
GO
-- 1787 (then 1750): a cascading foreign key on a table with such a trigger; a foreign
-- key without that action is fine.
CREATE TABLE dbo.other (id int PRIMARY KEY, parent_id int);
GO
CREATE TRIGGER dbo.other_instead ON dbo.other INSTEAD OF DELETE AS PRINT 'instead of delete';
GO
ALTER TABLE dbo.other ADD CONSTRAINT fk_other FOREIGN KEY (parent_id) REFERENCES dbo.parent (id) ON DELETE CASCADE;
GO
ALTER TABLE dbo.other ADD CONSTRAINT fk_other FOREIGN KEY (parent_id) REFERENCES dbo.parent (id) ON UPDATE CASCADE;
GO
SELECT name, delete_referential_action_desc, update_referential_action_desc
FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('dbo.other');
GO
DROP TABLE dbo.other;
DROP TABLE dbo.grandchild;
DROP TABLE dbo.note;
DROP TABLE dbo.child;
DROP TABLE dbo.parent;
DROP TABLE dbo.log;
GO
