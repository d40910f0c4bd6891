-- A batch of INSERT ... VALUES statements whose shape the session saw before (the same text but for its literals) is not parsed again: its statements take the new batch's literals. Each batch below marked "shape A" has one text but for its literals; the first one is parsed, the others are matched by shape. Values of other literal types than the first batch's convert as written, errors keep their lines.
SET NOCOUNT ON;
CREATE TABLE dbo.s (id int NOT NULL CONSTRAINT PK_s PRIMARY KEY, grp int NOT NULL, val varchar(5) NULL, n nvarchar(5) NULL, d decimal(6, 2) NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (1, 1, 'a', N'x', 1.5);
INSERT INTO dbo.s VALUES (2, 2, 'b', N'y', 2);
GO
-- shape A
INSERT INTO dbo.s VALUES (3, 2.5, N'c', 'z', $4.25);
INSERT INTO dbo.s VALUES (4, 1e1, NULL, NULL, NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (1, 5, 'dup', NULL, NULL);
INSERT INTO dbo.s VALUES (5, NULL, 'e', NULL, NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (6, 6, 'long!!', NULL, NULL);
INSERT INTO dbo.s VALUES (7, 7, 'g', N'h', 12345.678);
GO
-- shape A
INSERT INTO dbo.s VALUES (8, 'abc', 'h', NULL, NULL);
INSERT INTO dbo.s VALUES (9, 9, 'i', NULL, NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (10, 0x0B, 'it''s', N'é''ü', 0.005);
INSERT INTO dbo.s VALUES (11, 2147483647, '', N'', 9999.99);
GO
-- shape A
INSERT INTO dbo.s VALUES (12, 2147483648, 'j', NULL, NULL);
INSERT INTO dbo.s VALUES (13, 13, 'k', NULL, 123456.5);
GO
-- The same two statements in a batch of another shape (parsed): the same errors.
INSERT INTO dbo.s VALUES (12, 2147483648, 'j', NULL, NULL);
INSERT INTO dbo.s VALUES (13, 13, 'k', NULL, 123456.5);
GO
-- Not the shape: a sign, an expression and a string over two lines are parsed.
INSERT INTO dbo.s VALUES (-14, -1, 'l', NULL, NULL);
INSERT INTO dbo.s VALUES (15, 1 + 1, 'm
n', NULL, NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (-16, -2, 'o', NULL, -0.5);
INSERT INTO dbo.s VALUES (17, 17, 'p', NULL, NULL);
GO
SELECT id, grp, val, n, d FROM dbo.s ORDER BY id;
GO
CREATE VIEW dbo.sv AS SELECT id, grp, val FROM dbo.s;
GO
CREATE TABLE dbo.lg (id int IDENTITY PRIMARY KEY, msg varchar(20) NOT NULL);
GO
CREATE TRIGGER trs ON dbo.s AFTER INSERT AS INSERT INTO dbo.lg VALUES ('fired');
GO
-- Shape B: through a view, a multi-row VALUES and a table with a trigger that inserts literals of its own, in a transaction.
BEGIN TRANSACTION;
INSERT INTO dbo.sv VALUES (20, 1, 'v1');
INSERT INTO dbo.s VALUES (21, 1, 'm1', NULL, NULL), (22, 2, 'm2', NULL, NULL);
COMMIT;
GO
-- Shape B: through a view, a multi-row VALUES and a table with a trigger that inserts literals of its own, in a transaction.
BEGIN TRANSACTION;
INSERT INTO dbo.sv VALUES (30, 3, 'v3');
INSERT INTO dbo.s VALUES (31, 3, 'm3', NULL, NULL), (32, 4, 'm4', NULL, NULL);
COMMIT;
GO
-- Shape B: through a view, a multi-row VALUES and a table with a trigger that inserts literals of its own, in a transaction.
BEGIN TRANSACTION;
INSERT INTO dbo.sv VALUES (40, 4, 'v4');
INSERT INTO dbo.s VALUES (41, 4, 'm5', NULL, NULL), (41, 5, 'm6', NULL, NULL);
COMMIT;
GO
SELECT id, grp, val FROM dbo.s WHERE id >= 20 ORDER BY id;
SELECT msg, COUNT(*) AS n FROM dbo.lg GROUP BY msg;
GO
-- The table changes under a kept shape: each statement resolves it again.
DROP TRIGGER trs;
ALTER TABLE dbo.s ADD CONSTRAINT CK_s_id CHECK (id < 51);
GO
-- shape A
INSERT INTO dbo.s VALUES (50, 5, 'q', NULL, NULL);
INSERT INTO dbo.s VALUES (51, 5, 'r', NULL, NULL);
GO
ALTER TABLE dbo.s DROP CONSTRAINT CK_s_id;
DELETE FROM dbo.s WHERE LEN(val) > 2;
ALTER TABLE dbo.s ALTER COLUMN val varchar(2) NULL;
GO
-- shape A
INSERT INTO dbo.s VALUES (52, 5, 'sss', NULL, NULL);
INSERT INTO dbo.s VALUES (53, 5, 'tt', NULL, NULL);
GO
SELECT id, val FROM dbo.s WHERE id >= 50 ORDER BY id;
DROP VIEW dbo.sv;
DROP TABLE dbo.s;
GO
-- shape A
INSERT INTO dbo.s VALUES (54, 5, 'u', NULL, NULL);
INSERT INTO dbo.s VALUES (55, 5, 'v', NULL, NULL);
GO
CREATE TABLE dbo.s (id bigint NOT NULL PRIMARY KEY, grp varchar(10) NOT NULL, val nvarchar(10) NULL, n int NULL, d float NULL);
GO
-- shape A
INSERT INTO dbo.s VALUES (56, 5, 'w', NULL, NULL);
INSERT INTO dbo.s VALUES (57, 'five', N'x', 7, 1e1);
GO
SELECT id, grp, val, n, d FROM dbo.s ORDER BY id;
GO
-- Shape C: a table whose values are all its columns in order (taken as the row), DEFAULT among them, and a duplicate key.
CREATE TABLE dbo.sd (id int NOT NULL CONSTRAINT PK_sd PRIMARY KEY, grp int NOT NULL CONSTRAINT DF_sd_grp DEFAULT 7, val varchar(5) NULL);
GO
-- shape C
INSERT INTO dbo.sd VALUES (1, DEFAULT, 'a');
INSERT INTO dbo.sd VALUES (2, 2, DEFAULT);
GO
-- shape C
INSERT INTO dbo.sd VALUES (3, DEFAULT, 'c');
INSERT INTO dbo.sd VALUES (3, 4, DEFAULT);
GO
-- shape C
INSERT INTO dbo.sd VALUES (4, DEFAULT, NULL);
INSERT INTO dbo.sd VALUES (5, 5, DEFAULT);
GO
SELECT id, grp, val FROM dbo.sd ORDER BY id;
DROP TABLE dbo.sd;
GO
