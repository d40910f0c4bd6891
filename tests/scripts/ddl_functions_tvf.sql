-- Multi-statement table-valued functions: calls in FROM (alias, join, APPLY with outer references), DEFAULT arguments, ALTER/DROP, the catalog, body rules and runtime errors.
SET NOCOUNT ON;
GO
CREATE TABLE dbo.orders (id int NOT NULL PRIMARY KEY, customer varchar(10) NOT NULL, qty int NOT NULL);
INSERT INTO dbo.orders VALUES (1, 'ann', 3), (2, 'bob', 0), (3, 'ann', 2), (4, 'cid', 1);
GO
CREATE FUNCTION dbo.series (@from int, @to int = 3)
RETURNS @out TABLE (n int NOT NULL PRIMARY KEY, label varchar(12) NULL)
AS
BEGIN
    DECLARE @i int = @from;
    WHILE @i <= @to
    BEGIN
        INSERT @out (n, label) VALUES (@i, CONCAT('item ', @i));
        SET @i += 1;
    END
    UPDATE x SET label = UPPER(label) FROM @out AS x WHERE x.n % 2 = 0;
    DELETE FROM @out WHERE n = 99;
    RETURN;
END
GO
CREATE FUNCTION dbo.orders_of (@customer varchar(10))
RETURNS @r TABLE (id int, qty int, doubled int)
AS
BEGIN
    INSERT INTO @r (id, qty, doubled)
    SELECT id, qty, qty * 2 FROM dbo.orders WHERE customer = @customer;
    IF NOT EXISTS (SELECT 1 FROM @r)
        RETURN;
    INSERT INTO @r VALUES (0, NULL, NULL);
    RETURN;
END
GO
SELECT n, label FROM dbo.series(1, 4) ORDER BY n;
SELECT s.n AS num FROM dbo.series(2, DEFAULT) AS s;
SELECT t.n, t.label FROM dbo.series(5, 6) AS t;
GO
-- In a join and under APPLY: the function runs once per outer row.
SELECT o.id, s.label FROM dbo.orders AS o JOIN dbo.series(1, 3) AS s ON s.n = o.id ORDER BY o.id;
SELECT o.id, o.qty, s.n FROM dbo.orders AS o CROSS APPLY dbo.series(1, o.qty) AS s ORDER BY o.id, s.n;
SELECT o.id, s.n FROM dbo.orders AS o OUTER APPLY dbo.series(1, o.qty - 1) AS s ORDER BY o.id, s.n;
SELECT c.name, r.id, r.doubled
FROM (VALUES ('ann'), ('bob'), ('zed')) AS c(name)
CROSS APPLY dbo.orders_of(c.name) AS r
ORDER BY c.name, r.id;
GO
SELECT name, type, type_desc FROM sys.objects WHERE name IN ('series', 'orders_of') ORDER BY name;
SELECT OBJECT_ID('dbo.series', 'TF') - OBJECT_ID('dbo.series') AS same_object;
SELECT ROUTINE_NAME, DATA_TYPE FROM INFORMATION_SCHEMA.ROUTINES WHERE ROUTINE_NAME = 'series';
GO
ALTER FUNCTION dbo.series (@from int, @to int = 3)
RETURNS @out TABLE (n int NOT NULL, label varchar(12) NULL)
AS
BEGIN
    INSERT @out VALUES (@to, 'last'), (@from, 'first');
    RETURN;
END
GO
SELECT n, label FROM dbo.series(7, 8);
GO
-- Wrong uses and argument counts.
SELECT dbo.series(1, 2) AS scalar_use;
GO
SELECT * FROM dbo.series(1);
GO
SELECT * FROM dbo.series(1, 2, 3);
-- A runtime error inside the body ends the calling statement.
GO
CREATE FUNCTION dbo.ratios (@d int)
RETURNS @r TABLE (v int)
AS
BEGIN
    INSERT @r VALUES (10 / @d);
    RETURN;
END
GO
DECLARE @n int = -1;
SELECT v FROM dbo.ratios(5);
SELECT @n = COUNT(*) FROM dbo.ratios(0);
SELECT @n AS unchanged;
-- Body rules, checked by CREATE FUNCTION.
GO
CREATE FUNCTION dbo.bad_insert ()
RETURNS @r TABLE (v int)
AS
BEGIN
    INSERT INTO dbo.orders VALUES (9, 'x', 1);
    RETURN;
END
GO
CREATE FUNCTION dbo.bad_select ()
RETURNS @r TABLE (v int)
AS
BEGIN
    SELECT id FROM dbo.orders;
    RETURN;
END
GO
CREATE FUNCTION dbo.bad_print ()
RETURNS @r TABLE (v int)
AS
BEGIN
    PRINT 'hello';
    RETURN;
END
GO
CREATE FUNCTION dbo.bad_end ()
RETURNS @r TABLE (v int)
AS
BEGIN
    INSERT @r VALUES (1);
END
GO
CREATE FUNCTION dbo.bad_rand ()
RETURNS @r TABLE (v float)
AS
BEGIN
    INSERT @r VALUES (RAND());
    RETURN;
END
GO
SELECT COUNT(*) AS created FROM sys.objects WHERE name LIKE 'bad[_]%';
GO
DROP FUNCTION dbo.series;
DROP FUNCTION IF EXISTS dbo.series;
GO
SELECT * FROM dbo.series(1, 2);
GO
DROP FUNCTION dbo.orders_of, dbo.ratios;
DROP TABLE dbo.orders;
GO
