-- Foreign keys: checked on INSERT, UPDATE and DELETE; ON DELETE CASCADE removes the referencing rows.
CREATE TABLE dbo.parent (id int NOT NULL CONSTRAINT PK_parent PRIMARY KEY, name varchar(20) NOT NULL);
CREATE TABLE dbo.child (
    id int NOT NULL CONSTRAINT PK_child PRIMARY KEY,
    parent_id int NULL CONSTRAINT FK_child_parent REFERENCES dbo.parent (id),
    note varchar(20) NULL
);
CREATE TABLE dbo.line (
    id int NOT NULL CONSTRAINT PK_line PRIMARY KEY,
    parent_id int NOT NULL CONSTRAINT FK_line_parent FOREIGN KEY REFERENCES dbo.parent (id) ON DELETE CASCADE
);
GO
SET NOCOUNT ON;
INSERT INTO dbo.parent VALUES (1, 'one'), (2, 'two');
INSERT INTO dbo.child VALUES (10, 1, 'ok'), (11, NULL, 'no parent is fine');
INSERT INTO dbo.line VALUES (100, 1), (101, 2), (102, 2);
GO
INSERT INTO dbo.child VALUES (12, 3, 'bad');
GO
UPDATE dbo.child SET parent_id = 9 WHERE id = 10;
GO
DELETE FROM dbo.parent WHERE id = 1;
GO
DELETE FROM dbo.parent WHERE id = 2;
SELECT id, parent_id FROM dbo.line ORDER BY id;
SELECT COUNT(*) AS parents FROM dbo.parent;
GO
