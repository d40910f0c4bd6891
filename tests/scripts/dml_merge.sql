-- MERGE: every WHEN clause, OUTPUT with $action, sources (table, VALUES, derived table, CTE, table variable, temp table), TOP, errors 8672/10713/10714, atomicity and rollback, an upsert procedure.
SET NOCOUNT ON;
CREATE TABLE dbo.stock (
    sku int NOT NULL PRIMARY KEY,
    qty int NOT NULL CONSTRAINT CK_stock_qty CHECK (qty >= 0),
    note varchar(20) NULL CONSTRAINT DF_stock_note DEFAULT ('new'),
    value AS qty * 10
);
CREATE TABLE dbo.delivery (sku int NOT NULL, qty int NOT NULL);
INSERT INTO dbo.stock (sku, qty, note) VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, 0, 'd');
INSERT INTO dbo.delivery VALUES (1, 5), (2, -20), (5, 7), (6, 8);
GO
-- All three kinds of clause; the log shows what happened to each row.
DECLARE @log TABLE (act nvarchar(10), old_sku int, new_sku int, new_qty int, note varchar(20));
MERGE INTO dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN MATCHED AND t.qty + s.qty = 0 THEN DELETE
WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty, note = 'restocked'
WHEN NOT MATCHED BY TARGET THEN INSERT (sku, qty) VALUES (s.sku, s.qty)
WHEN NOT MATCHED BY SOURCE AND t.qty = 0 THEN DELETE
WHEN NOT MATCHED BY SOURCE THEN UPDATE SET note = 'no delivery'
OUTPUT $action, deleted.sku, inserted.sku, inserted.qty, inserted.note INTO @log;
SELECT @@ROWCOUNT AS merged;
SELECT act, old_sku, new_sku, new_qty, note FROM @log ORDER BY COALESCE(old_sku, new_sku);
SELECT sku, qty, note, value FROM dbo.stock ORDER BY sku;
GO
-- Row counts as sqlcmd shows them, and OUTPUT straight to the client with a source column.
SET NOCOUNT OFF;
MERGE dbo.stock t
USING (VALUES (5, 1, 'five')) AS s (sku, qty, label) ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET qty += s.qty
OUTPUT $action, deleted.qty AS old_qty, inserted.qty AS new_qty, s.label;
MERGE dbo.stock t
USING (VALUES (9, 2)) AS s (sku, qty) ON t.sku = s.sku
WHEN NOT MATCHED THEN INSERT VALUES (s.sku, s.qty, DEFAULT)
OUTPUT $action, inserted.*;
SET NOCOUNT ON;
GO
-- A derived-table source with GROUP BY (two deliveries of one sku), and a CTE source.
INSERT INTO dbo.delivery VALUES (1, 1), (1, 2);
MERGE dbo.stock AS t
USING (SELECT sku, SUM(qty) AS qty FROM dbo.delivery WHERE sku = 1 GROUP BY sku) AS s ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty;
SELECT sku, qty FROM dbo.stock WHERE sku = 1;
WITH big AS (SELECT sku, qty FROM dbo.stock WHERE qty >= 10)
MERGE dbo.stock AS t
USING big AS s ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET note = 'big';
SELECT sku, note FROM dbo.stock ORDER BY sku;
GO
-- The same target row matched by two source rows: Msg 8672, nothing changes.
SELECT SUM(qty) AS before_qty FROM dbo.stock;
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty;
SELECT SUM(qty) AS after_qty FROM dbo.stock;
GO
-- Two source rows for one target row are fine when the clause does not apply to one.
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN MATCHED AND s.qty = 5 THEN UPDATE SET note = 'five';
SELECT @@ROWCOUNT AS merged;
GO
-- A constraint violation on one row undoes the whole statement.
MERGE dbo.stock AS t
USING (VALUES (1, -100), (2, 1)) AS s (sku, qty) ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET qty = t.qty + s.qty
WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, s.qty);
SELECT sku, qty FROM dbo.stock ORDER BY sku;
GO
-- Inside a transaction: the MERGE's work rolls back with it.
BEGIN TRANSACTION;
MERGE dbo.stock AS t
USING (VALUES (1), (100), (101)) AS s (sku) ON t.sku = s.sku
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, 1);
SELECT COUNT(*) AS in_tran FROM dbo.stock;
ROLLBACK;
SELECT COUNT(*) AS after_rollback FROM dbo.stock;
GO
-- TOP limits the rows acted on.
CREATE TABLE #src (sku int NOT NULL);
INSERT INTO #src VALUES (11), (12), (13), (14);
MERGE TOP (2) dbo.stock AS t
USING #src AS s ON t.sku = s.sku
WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, 0);
SELECT @@ROWCOUNT AS top_two;
MERGE TOP (50) PERCENT dbo.stock AS t
USING #src AS s ON t.sku = s.sku
WHEN MATCHED THEN DELETE
WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, 0);
SELECT @@ROWCOUNT AS half_of_four;
SELECT sku FROM dbo.stock WHERE sku > 10 ORDER BY sku;
GO
-- A table variable as the target, DEFAULT VALUES, an identity column.
DECLARE @t TABLE (id int IDENTITY(1, 1) NOT NULL, k int NULL, tag varchar(5) NOT NULL DEFAULT ('dflt'));
MERGE @t AS t
USING (VALUES (1), (2)) AS s (k) ON t.k = s.k
WHEN NOT MATCHED THEN INSERT DEFAULT VALUES;
MERGE @t AS t
USING (VALUES (1, 'one')) AS s (id, tag) ON t.id = s.id
WHEN MATCHED THEN UPDATE SET tag = s.tag, k = 10;
SELECT id, k, tag FROM @t ORDER BY id;
GO
-- Upsert through a procedure.
CREATE PROCEDURE dbo.upsert_stock @sku int, @qty int
AS
MERGE dbo.stock WITH (HOLDLOCK) AS t
USING (SELECT @sku AS sku, @qty AS qty) AS s ON t.sku = s.sku
WHEN MATCHED THEN UPDATE SET qty = s.qty, note = 'upserted'
WHEN NOT MATCHED THEN INSERT (sku, qty, note) VALUES (s.sku, s.qty, 'upserted');
GO
EXEC dbo.upsert_stock 2, 99;
EXEC dbo.upsert_stock 42, 1;
EXEC dbo.upsert_stock 42, 2;
SELECT sku, qty, note FROM dbo.stock WHERE note = 'upserted' ORDER BY sku;
GO
-- WHEN NOT MATCHED sees only the source, WHEN NOT MATCHED BY SOURCE only the target (Msgs 5333, 5334).
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN NOT MATCHED THEN INSERT (sku, qty) VALUES (s.sku, t.qty);
GO
-- Syntax: the mandatory semicolon (Msg 10713) and one action per clause kind (Msg 10714).
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN MATCHED THEN DELETE
SELECT 1 AS not_reached;
GO
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN MATCHED AND s.qty > 0 THEN UPDATE SET qty = 1
WHEN MATCHED THEN UPDATE SET qty = 2;
GO
MERGE dbo.stock AS t
USING dbo.delivery AS s ON t.sku = s.sku
WHEN NOT MATCHED BY SOURCE AND s.qty > 0 THEN DELETE;
GO
SELECT sku, qty, note FROM dbo.stock ORDER BY sku;
GO
