-- Subqueries: scalar, IN, NOT IN over a NULL, EXISTS / NOT EXISTS, correlated, ALL and ANY.
SET NOCOUNT ON;
CREATE TABLE dbo.p (id int NOT NULL, cat varchar(5) NOT NULL, price int NOT NULL);
CREATE TABLE dbo.bad (id int NULL);
INSERT INTO dbo.p VALUES (1, 'x', 10), (2, 'x', 30), (3, 'y', 20), (4, 'z', 5);
INSERT INTO dbo.bad VALUES (4), (NULL);
GO
SELECT id, price FROM dbo.p WHERE price > (SELECT AVG(price) FROM dbo.p) ORDER BY id;
SELECT id FROM dbo.p WHERE cat IN (SELECT cat FROM dbo.p WHERE price >= 20) ORDER BY id;
SELECT COUNT(*) AS not_in_with_null FROM dbo.p WHERE id NOT IN (SELECT id FROM dbo.bad);
SELECT COUNT(*) AS not_exists FROM dbo.p AS p WHERE NOT EXISTS (SELECT 1 FROM dbo.bad AS b WHERE b.id = p.id);
SELECT id, (SELECT MAX(price) FROM dbo.p AS q WHERE q.cat = p.cat) AS cat_max FROM dbo.p AS p ORDER BY id;
SELECT id FROM dbo.p WHERE price >= ALL (SELECT price FROM dbo.p);
SELECT id FROM dbo.p WHERE price < ANY (SELECT price FROM dbo.p WHERE cat = 'y') ORDER BY id;
GO
DECLARE @v int;
SET @v = (SELECT price FROM dbo.p);
GO
