-- A seek on an int key with a string that does not convert raises the conversion
-- error the comparison raises (245), as SQL Server does, instead of finding nothing.
CREATE TABLE t (id int PRIMARY KEY, k int, v varchar(10));
CREATE INDEX ix_k ON t (k);
INSERT t VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c');
GO
SELECT v FROM t WHERE id = 'x';
GO
SELECT v FROM t WHERE id = '2';
GO
-- The same shapes again, through the kept (parameterized) plan.
SELECT v FROM t WHERE id = 'y';
GO
SELECT v FROM t WHERE id = '3';
GO
SELECT v FROM t WHERE id > 'x';
GO
SELECT v FROM t WHERE id BETWEEN 1 AND 'z';
GO
SELECT v FROM t WHERE k = 'x';
GO
SELECT v FROM t WHERE id = 1 AND k = 'x';
GO
DECLARE @s varchar(10) = 'abc';
SELECT v FROM t WHERE id = @s;
GO
UPDATE t SET v = 'z' WHERE id = 'x';
GO
DELETE t WHERE id = 'x';
GO
-- NULL still matches nothing, quietly.
SELECT v FROM t WHERE id = NULL;
SELECT COUNT(*) AS n FROM t WHERE v = 'z';
GO
