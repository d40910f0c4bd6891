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
