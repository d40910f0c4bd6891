-- Msg 547 (CHECK and FOREIGN KEY constraints) and 515 (NULL into a NOT NULL column); each ends only its statement.
SET NOCOUNT ON;
CREATE TABLE dbo.cat (id int NOT NULL CONSTRAINT PK_cat PRIMARY KEY);
CREATE TABLE dbo.prod (
    id int NOT NULL CONSTRAINT PK_prod PRIMARY KEY,
    cat int NOT NULL CONSTRAINT FK_prod_cat REFERENCES dbo.cat (id),
    price int NOT NULL CONSTRAINT CK_prod_price CHECK (price > 0),
    name varchar(10) NOT NULL
);
INSERT INTO dbo.cat VALUES (1);
GO
INSERT INTO dbo.prod VALUES (1, 1, 0, 'free');
INSERT INTO dbo.prod VALUES (2, 9, 5, 'orphan');
INSERT INTO dbo.prod VALUES (3, 1, 5, NULL);
INSERT INTO dbo.prod (id, cat, price) VALUES (4, 1, 5);
INSERT INTO dbo.prod VALUES (5, 1, 5, 'ok');
UPDATE dbo.prod SET price = -1 WHERE id = 5;
SELECT id, price, name FROM dbo.prod;
GO
