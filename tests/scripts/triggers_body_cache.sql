-- A trigger's parsed body is kept between firings; ALTER TRIGGER, DROP TRIGGER and
-- ALTER TABLE make the next firing use the trigger and table as they are now.
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int PRIMARY KEY);
CREATE TABLE dbo.seen (what varchar(40));
GO
CREATE TRIGGER dbo.t_ins ON dbo.t AFTER INSERT AS
    INSERT INTO dbo.seen SELECT 'v1 ' + CAST(id AS varchar(10)) FROM inserted;
GO
INSERT INTO dbo.t VALUES (1);
INSERT INTO dbo.t VALUES (2);
GO
ALTER TRIGGER dbo.t_ins ON dbo.t AFTER INSERT AS
    INSERT INTO dbo.seen SELECT 'v2 ' + CAST(id AS varchar(10)) FROM inserted;
GO
INSERT INTO dbo.t VALUES (3);
-- In one batch: the ALTER runs between two firings.
INSERT INTO dbo.t VALUES (4);
EXEC ('ALTER TRIGGER dbo.t_ins ON dbo.t AFTER INSERT AS
    INSERT INTO dbo.seen SELECT ''v3 '' + CAST(id AS varchar(10)) FROM inserted;');
INSERT INTO dbo.t VALUES (5);
GO
-- A new column shows in inserted.* at the next firing.
ALTER TRIGGER dbo.t_ins ON dbo.t AFTER INSERT AS
    INSERT INTO dbo.seen SELECT (SELECT * FROM inserted FOR JSON PATH, WITHOUT_ARRAY_WRAPPER);
GO
INSERT INTO dbo.t VALUES (6);
ALTER TABLE dbo.t ADD note varchar(10) NULL;
GO
INSERT INTO dbo.t VALUES (7, 'x');
DROP TRIGGER dbo.t_ins;
INSERT INTO dbo.t VALUES (8, 'y');
SELECT what FROM dbo.seen;
GO
-- A view's INSTEAD OF trigger is kept the same way: ALTER, DISABLE, ALTER VIEW and DROP
-- TRIGGER take effect at the next statement, also inside one batch.
DELETE FROM dbo.seen;
GO
CREATE VIEW dbo.tv AS SELECT id FROM dbo.t;
GO
CREATE TRIGGER dbo.tv_ins ON dbo.tv INSTEAD OF INSERT AS
    INSERT INTO dbo.seen SELECT 'view v1 ' + CAST(id AS varchar(10)) FROM inserted;
GO
INSERT INTO dbo.tv VALUES (10);
INSERT INTO dbo.tv VALUES (11);
EXEC ('ALTER TRIGGER dbo.tv_ins ON dbo.tv INSTEAD OF INSERT AS
    INSERT INTO dbo.seen SELECT ''view v2 '' + CAST(id AS varchar(10)) FROM inserted;');
INSERT INTO dbo.tv VALUES (12);
GO
-- A column added to the view shows in inserted at the next firing.
ALTER VIEW dbo.tv AS SELECT id, note FROM dbo.t;
GO
ALTER TRIGGER dbo.tv_ins ON dbo.tv INSTEAD OF INSERT AS
    INSERT INTO dbo.seen SELECT (SELECT * FROM inserted FOR JSON PATH, WITHOUT_ARRAY_WRAPPER);
GO
INSERT INTO dbo.tv VALUES (13, 'n');
DISABLE TRIGGER dbo.tv_ins ON dbo.tv;
GO
-- Disabled: the view is updatable on its own, so the row goes to the table.
INSERT INTO dbo.tv VALUES (14, 'direct');
ENABLE TRIGGER dbo.tv_ins ON dbo.tv;
INSERT INTO dbo.tv VALUES (15, 'again');
DROP TRIGGER dbo.tv_ins;
INSERT INTO dbo.tv VALUES (16, 'dropped');
SELECT what FROM dbo.seen;
SELECT id, note FROM dbo.t WHERE id >= 10 ORDER BY id;
GO
