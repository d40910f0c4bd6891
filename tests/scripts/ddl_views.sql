-- Views: create, query (with filters and aggregates), ALTER VIEW, DROP VIEW.
SET NOCOUNT ON;
CREATE TABLE dbo.orders (id int NOT NULL PRIMARY KEY, customer varchar(10) NOT NULL, amount int NOT NULL);
INSERT INTO dbo.orders VALUES (1, 'ann', 10), (2, 'bob', 25), (3, 'ann', 5), (4, 'cy', 40);
GO
CREATE VIEW dbo.big_orders AS SELECT id, customer, amount FROM dbo.orders WHERE amount >= 10;
GO
SELECT id, customer, amount FROM dbo.big_orders ORDER BY id;
SELECT customer, SUM(amount) AS total FROM dbo.big_orders GROUP BY customer ORDER BY customer;
GO
ALTER VIEW dbo.big_orders AS SELECT id, amount * 2 AS doubled FROM dbo.orders WHERE amount > 20;
GO
SELECT * FROM dbo.big_orders ORDER BY id;
GO
DROP VIEW dbo.big_orders;
GO
SELECT * FROM dbo.big_orders;
GO
