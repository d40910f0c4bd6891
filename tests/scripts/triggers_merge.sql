-- MERGE fires the target's triggers once per action written in its WHEN clauses, after
-- all rows are written, each with that action's rows in inserted/deleted (also when the
-- action changed no row); OUTPUT without INTO on a table with such triggers is 334.
SET NOCOUNT ON;
CREATE TABLE dbo.stock (id int PRIMARY KEY, qty int NOT NULL);
CREATE TABLE dbo.log (seq int IDENTITY, action varchar(10), ins int, del int, ids varchar(100), rc int);
INSERT INTO dbo.stock VALUES (1, 10), (2, 20), (3, 30);
GO
CREATE TRIGGER dbo.stock_ins ON dbo.stock AFTER INSERT AS
    INSERT INTO dbo.log (action, ins, del, ids, rc)
    SELECT 'insert', (SELECT COUNT(*) FROM inserted), (SELECT COUNT(*) FROM deleted),
           (SELECT STRING_AGG(CAST(id AS varchar(10)), ',') WITHIN GROUP (ORDER BY id) FROM inserted), @@ROWCOUNT;
GO
CREATE TRIGGER dbo.stock_upd ON dbo.stock AFTER UPDATE AS
    INSERT INTO dbo.log (action, ins, del, ids, rc)
    SELECT CASE WHEN UPDATE(qty) THEN 'update qty' ELSE 'update' END,
           (SELECT COUNT(*) FROM inserted), (SELECT COUNT(*) FROM deleted),
           (SELECT STRING_AGG(CAST(id AS varchar(10)) + ':' + CAST(qty AS varchar(10)), ',') WITHIN GROUP (ORDER BY id) FROM inserted), NULL;
GO
CREATE TRIGGER dbo.stock_del ON dbo.stock AFTER DELETE AS
    INSERT INTO dbo.log (action, ins, del, ids, rc)
    SELECT 'delete', (SELECT COUNT(*) FROM inserted), (SELECT COUNT(*) FROM deleted),
           (SELECT STRING_AGG(CAST(id AS varchar(10)), ',') WITHIN GROUP (ORDER BY id) FROM deleted), NULL;
GO
MERGE dbo.stock AS t
USING (VALUES (2, 25), (3, 0), (4, 40), (5, 50)) AS s (id, qty) ON t.id = s.id
WHEN MATCHED AND s.qty = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET qty = s.qty
WHEN NOT MATCHED THEN INSERT (id, qty) VALUES (s.id, s.qty);
SELECT @@ROWCOUNT AS merged;
SELECT action, ins, del, ids, rc FROM dbo.log ORDER BY seq;
SELECT id, qty FROM dbo.stock ORDER BY id;
GO
-- Only the actions written fire; an action written but matching no row still fires.
DELETE FROM dbo.log;
MERGE dbo.stock AS t USING (SELECT 99 AS id) AS s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = 0;
SELECT action, ins, del, ids FROM dbo.log ORDER BY seq;
GO
-- OUTPUT without INTO: 334.
MERGE dbo.stock AS t USING (SELECT 1 AS id) AS s ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = 11 OUTPUT $action, inserted.id;
GO
-- An error in a trigger rolls the whole MERGE back.
CREATE TRIGGER dbo.stock_guard ON dbo.stock AFTER INSERT AS
    IF EXISTS (SELECT 1 FROM inserted WHERE qty < 0) THROW 50000, 'negative stock', 1;
GO
MERGE dbo.stock AS t USING (VALUES (1, 1), (7, -1)) AS s (id, qty) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET qty = s.qty
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.qty);
GO
SELECT id, qty FROM dbo.stock ORDER BY id;
GO
-- INSTEAD OF triggers: one for every action written (5316 otherwise), and then the
-- MERGE changes nothing itself.
CREATE TABLE dbo.t2 (id int PRIMARY KEY, v int);
INSERT INTO dbo.t2 VALUES (1, 1);
GO
CREATE TRIGGER dbo.t2_ii ON dbo.t2 INSTEAD OF INSERT AS
    SELECT 'instead of insert' AS what, id, v FROM inserted;
GO
MERGE dbo.t2 AS t USING (VALUES (1, 5), (2, 6)) AS s (id, v) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET v = s.v
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v);
GO
CREATE TRIGGER dbo.t2_iu ON dbo.t2 INSTEAD OF UPDATE AS
    SELECT 'instead of update' AS what, i.id, d.v AS old_v, i.v AS new_v FROM inserted AS i JOIN deleted AS d ON d.id = i.id;
GO
MERGE dbo.t2 AS t USING (VALUES (1, 5), (2, 6)) AS s (id, v) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET v = s.v
WHEN NOT MATCHED THEN INSERT VALUES (s.id, s.v);
SELECT id, v FROM dbo.t2;
GO
