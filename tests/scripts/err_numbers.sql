-- SQL Server's error numbers and texts for mistakes that other engines report in a
-- generic way.
SET NOCOUNT ON;
CREATE TABLE dbo.base (c1 int, c2 int);
GO
CREATE VIEW dbo.base_view AS SELECT c1, c2 FROM dbo.base;
GO
-- Indexes and TRUNCATE on a view.
CREATE INDEX filtered ON dbo.base_view (c1) WHERE c2 = 1;
GO
CREATE INDEX plain ON dbo.base_view (c1);
GO
TRUNCATE TABLE dbo.base_view;
GO
-- CONSTRAINT with a name and nothing after it.
CREATE TABLE dbo.bad_constraint (a int, CONSTRAINT dangling);
GO
CREATE TABLE dbo.bad_constraint (a int CONSTRAINT dangling);
GO
-- Implicit conversions (assignment) never allowed are 206, not CAST's 529.
DECLARE @x xml = 1;
GO
SELECT CAST(1 AS xml);
GO
DECLARE @b varbinary(10) = 'abc';
GO
-- smallmoney's own message.
SELECT CAST('abc' AS smallmoney);
GO
-- ROLLBACK to a savepoint that does not exist leaves the transaction as it was.
BEGIN TRANSACTION;
SAVE TRANSACTION known;
ROLLBACK TRANSACTION unknown;
SELECT @@TRANCOUNT AS trancount;
ROLLBACK TRANSACTION known;
SELECT @@TRANCOUNT AS trancount_after_savepoint;
ROLLBACK;
GO
-- RAISERROR's own checks.
RAISERROR ('%z', 16, 1);
GO
RAISERROR (50, 16, 1);
GO
RAISERROR (60000, 16, 1);
GO
RAISERROR ('%d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d %d', 16, 1,
    1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21);
GO
-- CONVERT styles.
SELECT CONVERT(date, '10-10-10', 140);
GO
SELECT CONVERT(date, '10-10-10', 110) AS mdy;
GO
-- IDENTITY_INSERT is ON for one table at a time.
CREATE TABLE dbo.ident1 (a int IDENTITY, b int);
CREATE TABLE dbo.ident2 (a int IDENTITY, b int);
SET IDENTITY_INSERT dbo.ident1 ON;
SET IDENTITY_INSERT dbo.ident2 ON;
SET IDENTITY_INSERT dbo.ident2 OFF;
INSERT dbo.ident1 (a, b) VALUES (10, 1);
SET IDENTITY_INSERT dbo.ident1 OFF;
SELECT a, b FROM dbo.ident1;
GO
-- Procedure arguments.
CREATE PROCEDURE dbo.no_params AS SELECT 1 AS one;
GO
EXEC dbo.no_params 1;
GO
-- ALTER TABLE: triggers and defaults.
CREATE TABLE dbo.defaults (a int IDENTITY, b int, c AS b + 1);
GO
ALTER TABLE dbo.defaults DISABLE TRIGGER no_such_trigger;
GO
ALTER TABLE dbo.defaults ADD DEFAULT 1 FOR a;
GO
ALTER TABLE dbo.defaults ADD DEFAULT 1 FOR c;
GO
ALTER TABLE dbo.defaults ADD DEFAULT 1 FOR no_such_column;
GO
ALTER TABLE dbo.defaults ADD DEFAULT 7 FOR b;
INSERT dbo.defaults DEFAULT VALUES;
SELECT b, c FROM dbo.defaults;
GO
ALTER TABLE dbo.defaults ADD CONSTRAINT second_default DEFAULT 8 FOR b;
GO
-- Cursor variables and cursor syntax.
DECLARE @not_a_cursor int;
OPEN @not_a_cursor;
GO
DECLARE mixed SCROLL CURSOR LOCAL FOR SELECT 1;
GO
DROP PROCEDURE dbo.no_params;
DROP VIEW dbo.base_view;
DROP TABLE dbo.base, dbo.ident1, dbo.ident2, dbo.defaults;
GO
-- Index keys: 900 bytes for a clustered index, 1,700 for a nonclustered one (1946),
-- with the 1945 warning when the declared columns allow more.
CREATE TABLE dbo.long_keys (a varchar(1000), b varchar(1000));
CREATE CLUSTERED INDEX long_ix ON dbo.long_keys (a, b);
GO
INSERT dbo.long_keys VALUES (REPLICATE('x', 500), REPLICATE('y', 400));
INSERT dbo.long_keys VALUES (REPLICATE('x', 500), REPLICATE('y', 401));
UPDATE dbo.long_keys SET b = b + 'z';
SELECT COUNT(*) AS long_rows, MAX(LEN(b)) AS longest_b FROM dbo.long_keys;
GO
CREATE TABLE dbo.long_nc (id int PRIMARY KEY, s varchar(2000));
INSERT dbo.long_nc VALUES (1, REPLICATE('s', 1800));
GO
CREATE INDEX long_nc_ix ON dbo.long_nc (s);
SELECT COUNT(*) AS long_nc_indexes FROM sys.indexes WHERE name = 'long_nc_ix';
GO
DROP TABLE dbo.long_keys, dbo.long_nc;
GO
-- A foreign key on a computed column: NO ACTION and CASCADE only (1765).
CREATE TABLE dbo.fk_parent (id int PRIMARY KEY);
GO
CREATE TABLE dbo.fk_child (a int, b AS a + 1 PERSISTED,
    CONSTRAINT fk_computed FOREIGN KEY (b) REFERENCES dbo.fk_parent (id) ON DELETE SET NULL);
GO
-- INSERT ... EXEC whose procedure changes the target table (556).
CREATE TABLE dbo.filled (a int);
GO
CREATE PROCEDURE dbo.changes_filled AS BEGIN ALTER TABLE dbo.filled ADD b int; SELECT 1; END;
GO
INSERT dbo.filled (a) EXEC dbo.changes_filled;
SELECT COUNT(*) AS filled_rows FROM dbo.filled;
GO
DROP PROCEDURE dbo.changes_filled;
DROP TABLE dbo.filled, dbo.fk_parent;
GO
