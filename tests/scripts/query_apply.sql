-- CROSS APPLY and OUTER APPLY over correlated derived tables and VALUES.
SET NOCOUNT ON;
CREATE TABLE dbo.cust (id int NOT NULL PRIMARY KEY, name varchar(8) NOT NULL);
CREATE TABLE dbo.ord (id int NOT NULL PRIMARY KEY, cust int NOT NULL, amount int NOT NULL);
INSERT INTO dbo.cust VALUES (1, 'ann'), (2, 'bob'), (3, 'cy');
INSERT INTO dbo.ord VALUES (10, 1, 5), (11, 1, 50), (12, 1, 20), (13, 2, 7);
GO
SELECT c.name, o.id, o.amount
FROM dbo.cust AS c
CROSS APPLY (SELECT TOP (2) id, amount FROM dbo.ord WHERE cust = c.id ORDER BY amount DESC) AS o
ORDER BY c.name, o.amount DESC;
SELECT c.name, o.n, o.total
FROM dbo.cust AS c
OUTER APPLY (SELECT COUNT(*) AS n, SUM(amount) AS total FROM dbo.ord WHERE cust = c.id) AS o
ORDER BY c.id;
SELECT c.name, last.id AS last_order
FROM dbo.cust AS c
OUTER APPLY (SELECT TOP (1) id FROM dbo.ord WHERE cust = c.id ORDER BY id DESC) AS last
ORDER BY c.id;
SELECT c.name, v.k FROM dbo.cust AS c CROSS APPLY (VALUES (c.id * 10), (c.id * 10 + 1)) AS v(k) WHERE c.id = 2 ORDER BY v.k;
GO
