-- Rows a FOREIGN KEY cascade changes are checked as the rows of a statement of their own:
-- NOT NULL (515), the referencing table's CHECK constraints and its other FOREIGN KEYs
-- (547), a SET DEFAULT value against the referenced table as the statement leaves it
-- (547), keys (2627), and a cascaded change of a key other tables reference goes on to
-- them (NO ACTION: 547 REFERENCE; CASCADE: on down). A failing cascade fails the whole
-- statement: nothing it changed stays, its transaction stays open (XACT_STATE 1) unless
-- XACT_ABORT is ON, and the referencing tables' triggers do not fire.
SET NOCOUNT ON;
CREATE TABLE dbo.log (seq int IDENTITY PRIMARY KEY, what varchar(100));
CREATE TABLE dbo.parent (id int PRIMARY KEY, name varchar(10));
CREATE TABLE dbo.pair (a int, b int, PRIMARY KEY (a, b));
-- pid: NOT NULL with DEFAULT NULL (the default exists, so 1762 does not apply).
CREATE TABLE dbo.child (
    id int PRIMARY KEY,
    pid int NOT NULL CONSTRAINT df_child_pid DEFAULT NULL
        CONSTRAINT fk_child_parent REFERENCES dbo.parent (id) ON DELETE SET DEFAULT ON UPDATE CASCADE,
    k int,
    CONSTRAINT ck_child_pid CHECK (pid < 100),
    CONSTRAINT fk_child_pair FOREIGN KEY (pid, k) REFERENCES dbo.pair (a, b));
INSERT INTO dbo.parent VALUES (1, 'one'), (2, 'two'), (3, 'three');
INSERT INTO dbo.pair VALUES (1, 7), (2, 7), (3, 7), (5, 7), (6, 7), (200, 7);
INSERT INTO dbo.child VALUES (10, 1, 7), (11, 1, 7), (20, 2, 7), (30, 3, NULL);
GO
CREATE TRIGGER dbo.child_upd ON dbo.child AFTER UPDATE AS
    INSERT INTO dbo.log (what) SELECT 'child update: ' + CAST(COUNT(*) AS varchar(10)) + ' rows' FROM inserted;
GO
-- ON DELETE SET DEFAULT of a NOT NULL column whose default is NULL: 515 names the
-- referencing table and column. The DELETE had already deleted parent 0 (nothing
-- references it): it stays, and the transaction is still open.
INSERT INTO dbo.parent VALUES (0, 'zero');
BEGIN TRAN;
DELETE FROM dbo.parent WHERE id IN (0, 1);
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state;
COMMIT;
SELECT id, name FROM dbo.parent ORDER BY id;
SELECT id, pid, k FROM dbo.child ORDER BY id;
GO
-- One UPDATE: parent 1's new key cascades to its two rows, then parent 2's breaks the
-- referencing table's CHECK constraint: both stay as they were, no trigger fires.
UPDATE dbo.parent SET id = CASE id WHEN 1 THEN 5 ELSE 200 END WHERE id IN (1, 2);
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, pid FROM dbo.child ORDER BY id;
SELECT what FROM dbo.log ORDER BY seq;
GO
-- ON UPDATE CASCADE: the new key breaks the referencing table's CHECK constraint.
UPDATE dbo.parent SET id = 200 WHERE id = 2;
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, pid FROM dbo.child ORDER BY id;
GO
-- ... or its other FOREIGN KEY, which shares the column (no pair (4, 7)).
UPDATE dbo.parent SET id = 4 WHERE id = 2;
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, pid FROM dbo.child ORDER BY id;
GO
-- A new key both accept goes through, the referencing table's trigger fires once.
UPDATE dbo.parent SET id = 6 WHERE id = 2;
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, pid, k FROM dbo.child ORDER BY id;
SELECT what FROM dbo.log ORDER BY seq;
DELETE FROM dbo.log;
GO
-- ON DELETE SET DEFAULT: the default must be a key of the referenced table once the
-- statement has changed it. Deleting the row the default names is 547 (the DELETE
-- statement, the referencing table's FOREIGN KEY, the referenced table).
CREATE TABLE dbo.holder (id int PRIMARY KEY);
CREATE TABLE dbo.item (
    id int PRIMARY KEY,
    holder int CONSTRAINT df_item_holder DEFAULT 9
        CONSTRAINT fk_item_holder REFERENCES dbo.holder (id) ON DELETE SET DEFAULT ON UPDATE SET DEFAULT);
INSERT INTO dbo.holder VALUES (1), (2), (9);
INSERT INTO dbo.item VALUES (1, 1), (2, 2), (3, 9);
DELETE FROM dbo.holder WHERE id = 9;
SELECT id FROM dbo.holder ORDER BY id;
SELECT id, holder FROM dbo.item ORDER BY id;
GO
-- The default is there: the rows take it. An UPDATE of the key takes it too.
DELETE FROM dbo.holder WHERE id = 1;
UPDATE dbo.holder SET id = 20 WHERE id = 2;
SELECT id FROM dbo.holder ORDER BY id;
SELECT id, holder FROM dbo.item ORDER BY id;
GO
-- ... and with the default gone from the referenced table, the next one fails.
INSERT INTO dbo.holder VALUES (3);
UPDATE dbo.item SET holder = 3 WHERE id = 1;
ALTER TABLE dbo.item DROP CONSTRAINT df_item_holder;
ALTER TABLE dbo.item ADD CONSTRAINT df_item_holder DEFAULT 42 FOR holder;
DELETE FROM dbo.holder WHERE id = 3;
SELECT id FROM dbo.holder ORDER BY id;
SELECT id, holder FROM dbo.item ORDER BY id;
GO
-- ON DELETE SET NULL against the referencing table's CHECK constraint.
CREATE TABLE dbo.owner (id int PRIMARY KEY);
CREATE TABLE dbo.pet (
    id int PRIMARY KEY,
    owner int NULL CONSTRAINT fk_pet_owner REFERENCES dbo.owner (id) ON DELETE SET NULL,
    CONSTRAINT ck_pet_owner CHECK (owner IS NOT NULL OR id > 100));
INSERT INTO dbo.owner VALUES (1), (2);
INSERT INTO dbo.pet VALUES (1, 1), (101, 2);
DELETE FROM dbo.owner WHERE id = 1;
DELETE FROM dbo.owner WHERE id = 2;
SELECT id FROM dbo.owner ORDER BY id;
SELECT id, owner FROM dbo.pet ORDER BY id;
GO
-- ON DELETE SET NULL into a UNIQUE column that already holds a NULL: 2627.
CREATE TABLE dbo.seat (id int PRIMARY KEY);
CREATE TABLE dbo.guest (
    id int PRIMARY KEY,
    seat int NULL CONSTRAINT uq_guest_seat UNIQUE
        CONSTRAINT fk_guest_seat REFERENCES dbo.seat (id) ON DELETE SET NULL);
INSERT INTO dbo.seat VALUES (1), (2);
INSERT INTO dbo.guest VALUES (1, 1), (2, NULL);
DELETE FROM dbo.seat WHERE id = 1;
SELECT id FROM dbo.seat ORDER BY id;
SELECT id, seat FROM dbo.guest ORDER BY id;
GO
-- A cascaded key change of a table other tables reference: NO ACTION refuses it (547
-- REFERENCE, naming the UPDATE statement), CASCADE carries it on down, SET NULL ends it.
CREATE TABLE dbo.g1 (id int PRIMARY KEY);
CREATE TABLE dbo.g2 (id int PRIMARY KEY CONSTRAINT fk_g2_g1 REFERENCES dbo.g1 (id) ON UPDATE CASCADE ON DELETE CASCADE);
CREATE TABLE dbo.g3 (id int PRIMARY KEY, g2 int CONSTRAINT fk_g3_g2 REFERENCES dbo.g2 (id));
CREATE TABLE dbo.g4 (id int PRIMARY KEY CONSTRAINT fk_g4_g2 REFERENCES dbo.g2 (id) ON UPDATE CASCADE);
CREATE TABLE dbo.g5 (id int PRIMARY KEY, g4 int NULL CONSTRAINT fk_g5_g4 REFERENCES dbo.g4 (id) ON UPDATE SET NULL);
INSERT INTO dbo.g1 VALUES (1), (2);
INSERT INTO dbo.g2 VALUES (1), (2);
INSERT INTO dbo.g3 VALUES (1, 1);
INSERT INTO dbo.g4 VALUES (2);
INSERT INTO dbo.g5 VALUES (1, 2);
UPDATE dbo.g1 SET id = 11 WHERE id = 1;
UPDATE dbo.g1 SET id = 12 WHERE id = 2;
SELECT id FROM dbo.g1 ORDER BY id;
SELECT id FROM dbo.g2 ORDER BY id;
SELECT id FROM dbo.g4 ORDER BY id;
SELECT id, g4 FROM dbo.g5 ORDER BY id;
GO
-- A cascaded DELETE that reaches a NO ACTION reference: 547 REFERENCE for the DELETE.
DELETE FROM dbo.g1 WHERE id = 1;
SELECT id FROM dbo.g1 ORDER BY id;
SELECT id FROM dbo.g2 ORDER BY id;
GO
-- With XACT_ABORT ON the failing cascade ends the transaction.
SET XACT_ABORT ON;
BEGIN TRAN;
UPDATE dbo.parent SET id = 200 WHERE id = 6;
GO
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state;
SET XACT_ABORT OFF;
SELECT id FROM dbo.parent ORDER BY id;
GO
-- In TRY ... CATCH: the error of the cascade, the statement undone.
BEGIN TRY
    UPDATE dbo.parent SET id = 4 WHERE id = 6;
END TRY
BEGIN CATCH
    SELECT ERROR_NUMBER() AS number, CAST(ERROR_MESSAGE() AS varchar(160)) AS message;
END CATCH;
SELECT id FROM dbo.parent ORDER BY id;
SELECT id, pid FROM dbo.child ORDER BY id;
GO
-- A row that references itself (NO ACTION) is its own referenced row: it may be inserted,
-- change its key with its reference, and be deleted; another row referencing it holds
-- up its DELETE.
CREATE TABLE dbo.emp (id int PRIMARY KEY, boss int CONSTRAINT fk_emp_boss REFERENCES dbo.emp (id));
INSERT INTO dbo.emp VALUES (1, 1);
INSERT INTO dbo.emp VALUES (2, 3);
UPDATE dbo.emp SET id = 5, boss = 5 WHERE id = 1;
UPDATE dbo.emp SET boss = 7 WHERE id = 5;
INSERT INTO dbo.emp VALUES (2, 5);
SELECT id, boss FROM dbo.emp ORDER BY id;
DELETE FROM dbo.emp WHERE id = 5;
DELETE FROM dbo.emp WHERE id = 2;
DELETE FROM dbo.emp WHERE id = 5;
SELECT COUNT(*) AS emp_rows FROM dbo.emp;
GO
