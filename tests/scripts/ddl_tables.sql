-- Tables with IDENTITY, DEFAULT, PRIMARY KEY, UNIQUE and CHECK constraints; duplicate and missing tables.
CREATE TABLE dbo.items (
    id int IDENTITY(1, 1) NOT NULL CONSTRAINT PK_items PRIMARY KEY,
    code varchar(10) NOT NULL CONSTRAINT UQ_items_code UNIQUE,
    qty int NOT NULL CONSTRAINT DF_items_qty DEFAULT (0) CONSTRAINT CK_items_qty CHECK (qty >= 0),
    price decimal(8, 2) NULL,
    added date NOT NULL CONSTRAINT DF_items_added DEFAULT ('2024-01-15')
);
GO
INSERT INTO dbo.items (code, price) VALUES ('A1', 9.50);
INSERT INTO dbo.items (code, qty, price) VALUES ('B2', 3, NULL);
INSERT INTO dbo.items (code, qty) VALUES ('C3', 7);
GO
SELECT id, code, qty, price, added FROM dbo.items ORDER BY id;
SELECT @@IDENTITY AS last_id, IDENT_CURRENT('dbo.items') AS current_id;
GO
CREATE TABLE dbo.items (x int);
GO
DROP TABLE dbo.items;
GO
SELECT OBJECT_ID('dbo.items') AS gone;
GO
DROP TABLE dbo.items;
GO
-- A PRIMARY KEY makes its columns NOT NULL, but not a column written NULL: 8111, then
-- 1750, and no table (inline or table constraint, temp table or ALTER TABLE ADD).
CREATE TABLE #bad (bad int NULL PRIMARY KEY);
GO
CREATE TABLE dbo.bad2 (a int NOT NULL, b int NULL, CONSTRAINT PK_bad2 PRIMARY KEY (a, b));
GO
CREATE TABLE dbo.good (a int, b int, CONSTRAINT PK_good PRIMARY KEY (a, b));
CREATE TABLE dbo.heap (a int);
ALTER TABLE dbo.heap ADD c int NULL CONSTRAINT PK_c PRIMARY KEY;
GO
SELECT OBJECT_ID('tempdb..#bad') AS bad, OBJECT_ID('dbo.bad2') AS bad2, name, is_nullable
FROM sys.columns WHERE object_id = OBJECT_ID('dbo.good') ORDER BY column_id;
GO
