-- Subqueries matched to the outer row by equalities no index can seek are answered from
-- an index spool built once per statement (docs/architecture.md "Subquery spools"), and
-- an uncorrelated IN from one keyed on its column. Results must be those of running
-- each subquery in full for every outer row, NULLs and conversions included.
CREATE TABLE dbo.o (id int PRIMARY KEY, k int NULL, s varchar(10) NULL, d decimal(5, 1) NULL);
CREATE TABLE dbo.i (id int PRIMARY KEY, k int NULL, s varchar(10) NULL, w int NOT NULL);
INSERT dbo.o VALUES (1, 1, 'a', 1.0), (2, 2, 'B', 2.5), (3, 3, 'c', NULL), (4, NULL, NULL, 4.0), (5, 5, 'e', 5.0), (6, 1, 'A', 1.0);
INSERT dbo.i VALUES (10, 1, 'A', 1), (11, 1, 'x', 2), (12, 2, 'b', 3), (13, NULL, 'c', 4), (14, 4, NULL, 5), (15, 5, 'E', 6), (16, 5, 'e', 7);
GO
-- EXISTS / NOT EXISTS on one key; NULL keys match nothing on either side.
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k) ORDER BY id;
SELECT id FROM dbo.o WHERE NOT EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k) ORDER BY id;
-- Two keys, one of them a string compared case-insensitively (the default collation).
SELECT id FROM dbo.o WHERE EXISTS (SELECT * FROM dbo.i WHERE o.k = i.k AND i.s = o.s) ORDER BY id;
-- An uncorrelated conjunct (on the build side) and a correlated non-equality (above it).
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k AND i.w > 1 AND i.w > o.id) ORDER BY id;
-- Keys of different types: int against decimal, compared as decimal.
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.d) ORDER BY id;
-- A key computed on both sides.
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k + 1 = o.k * 2) ORDER BY id;
-- Scalar subqueries: an aggregate over the matching rows, and TOP over them.
SELECT id, (SELECT SUM(w) FROM dbo.i WHERE i.k = o.k) AS total, (SELECT COUNT(*) FROM dbo.i WHERE i.k = o.k) AS n
FROM dbo.o ORDER BY id;
SELECT id, (SELECT TOP (1) w FROM dbo.i WHERE i.k = o.k ORDER BY w DESC) AS top_w FROM dbo.o ORDER BY id;
-- Nested: the innermost subquery keys on a column of each enclosing query.
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k
  AND EXISTS (SELECT 1 FROM dbo.i AS i2 WHERE i2.k = o.k AND i2.w = i.w + 1)) ORDER BY id;
-- IN over a correlated subquery: the spool answers the correlation, IN its value.
SELECT id FROM dbo.o WHERE s IN (SELECT s FROM dbo.i WHERE i.k = o.k) ORDER BY id;
SELECT id FROM dbo.o WHERE s NOT IN (SELECT s FROM dbo.i WHERE i.k = o.k) ORDER BY id;
-- More than one matching row for a scalar subquery is still 512.
SELECT id, (SELECT w FROM dbo.i WHERE i.k = o.k) AS w FROM dbo.o ORDER BY id;
GO
-- IN and NOT IN over an uncorrelated subquery, without and with a NULL in its rows.
SELECT id FROM dbo.o WHERE k IN (SELECT k FROM dbo.i WHERE w > 2) ORDER BY id;
SELECT id FROM dbo.o WHERE k NOT IN (SELECT k FROM dbo.i WHERE w <> 4) ORDER BY id;
SELECT id FROM dbo.o WHERE k NOT IN (SELECT k FROM dbo.i) ORDER BY id;
SELECT id, CASE WHEN k IN (SELECT k FROM dbo.i) THEN 'in' WHEN k NOT IN (SELECT k FROM dbo.i) THEN 'not in' ELSE 'unknown' END AS r
FROM dbo.o ORDER BY id;
-- A NULL value: UNKNOWN against rows, FALSE for IN and TRUE for NOT IN against none.
SELECT id, CASE WHEN k IN (SELECT k FROM dbo.i WHERE w > 100) THEN 'in' WHEN k NOT IN (SELECT k FROM dbo.i WHERE w > 100) THEN 'not in' ELSE 'unknown' END AS r
FROM dbo.o WHERE id IN (1, 4) ORDER BY id;
-- Strings compare case-insensitively; an int probe against varchar rows converts them.
SELECT id FROM dbo.o WHERE s IN (SELECT s FROM dbo.i) ORDER BY id;
SELECT id FROM dbo.o WHERE id IN (SELECT CAST(w + 9 AS varchar(10)) FROM dbo.i) ORDER BY id;
GO
-- A row that cannot be converted to the comparison type raises 245, as without a spool.
INSERT dbo.i VALUES (20, 9, 'zz', 9);
SELECT id FROM dbo.o WHERE id IN (SELECT s FROM dbo.i WHERE w >= 9);
GO
-- A spool lasts one statement: the next statement sees changed rows.
DELETE dbo.i WHERE id = 20;
DECLARE @n int = 0;
WHILE @n < 2
BEGIN
  SELECT @n AS pass, COUNT(*) AS n FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k);
  INSERT dbo.i VALUES (30 + @n, 3, 'c', 8);
  SET @n += 1;
END;
-- UPDATE and DELETE through a correlated EXISTS on another table and on their own.
UPDATE dbo.o SET d = 0 WHERE NOT EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k);
SELECT id, d FROM dbo.o ORDER BY id;
DELETE dbo.i WHERE EXISTS (SELECT 1 FROM dbo.i AS j WHERE j.k = i.k AND j.id < i.id);
SELECT id, k FROM dbo.i ORDER BY id;
GO
-- Subqueries that read variables are spooled too, and built again when a variable they
-- read changes while the statement runs (an assignment in the select list).
DECLARE @w int = 2;
SELECT id FROM dbo.o WHERE k IN (SELECT k FROM dbo.i WHERE w > @w) ORDER BY id;
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k AND i.w > @w) ORDER BY id;
DECLARE @acc int = 0, @trace varchar(100) = '';
SELECT @acc = @acc + (SELECT COUNT(*) FROM dbo.i WHERE i.k = o.k AND i.w > @acc),
       @trace = @trace + CAST(@acc AS varchar(10)) + ','
FROM dbo.o ORDER BY id;
SELECT @acc AS acc, @trace AS trace;
GO
-- The plans: an index spool under the subquery; a seekable correlation keeps its seek.
SET SHOWPLAN_TEXT ON;
GO
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.k = o.k AND i.w > 1);
SELECT id FROM dbo.o WHERE k IN (SELECT k FROM dbo.i);
SELECT id FROM dbo.o WHERE EXISTS (SELECT 1 FROM dbo.i WHERE i.id = o.id + 9);
GO
SET SHOWPLAN_TEXT OFF;
GO
-- Many rows on both sides: 20,000 x 20,000 (a minute a query before the spool).
CREATE TABLE dbo.big_o (id int PRIMARY KEY, x int NOT NULL);
CREATE TABLE dbo.big_i (id int PRIMARY KEY, x int NOT NULL);
WITH d (n) AS (SELECT 0 UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4
               UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)
INSERT dbo.big_o SELECT a.n + b.n * 10 + c.n * 100 + e.n * 1000 + 1, (a.n + b.n * 10 + c.n * 100 + e.n * 1000) % 5000
FROM d a CROSS JOIN d b CROSS JOIN d c CROSS JOIN d e CROSS JOIN (SELECT 0 AS z UNION ALL SELECT 1) two
WHERE two.z = 0;
INSERT dbo.big_o SELECT id + 10000, x FROM dbo.big_o;
INSERT dbo.big_i SELECT id, x * 2 FROM dbo.big_o;
SELECT COUNT(*) AS semi FROM dbo.big_o o WHERE EXISTS (SELECT 1 FROM dbo.big_i i WHERE i.x = o.x);
SELECT COUNT(*) AS anti FROM dbo.big_o o WHERE NOT EXISTS (SELECT 1 FROM dbo.big_i i WHERE i.x = o.x);
SELECT COUNT(*) AS in_ FROM dbo.big_o WHERE x IN (SELECT x FROM dbo.big_i);
SELECT COUNT(*) AS not_in FROM dbo.big_o WHERE x NOT IN (SELECT x FROM dbo.big_i);
-- Correlated subqueries over joins: the correlated conjuncts come out of the join's
-- inputs, the join is built once.
CREATE TABLE dbo.big_l (id int PRIMARY KEY, big_i_id int NOT NULL, tag int NOT NULL);
INSERT dbo.big_l SELECT id, id, id % 7 FROM dbo.big_i WHERE id % 3 = 0;
SELECT COUNT(*) AS semi_join FROM dbo.big_o o
WHERE EXISTS (SELECT 1 FROM dbo.big_i i JOIN dbo.big_l l ON l.big_i_id = i.id WHERE i.x = o.x AND l.tag = 1);
SELECT COUNT(*) AS anti_join FROM dbo.big_o o
WHERE NOT EXISTS (SELECT 1 FROM dbo.big_i i JOIN dbo.big_l l ON l.big_i_id = i.id AND i.x = o.x);
SELECT SUM(c) AS total FROM (SELECT (SELECT COUNT(*) FROM dbo.big_i i, dbo.big_l l WHERE l.big_i_id = i.id AND l.tag = o.x % 7 AND i.x = o.x) AS c FROM dbo.big_o o) t;
-- APPLY: the right side runs once per left row; the greatest id per x, and OUTER APPLY's
-- rows without a match.
SELECT COUNT(*) AS applied, SUM(CAST(t.id AS bigint)) AS ids
FROM dbo.big_o o CROSS APPLY (SELECT TOP (1) i.id FROM dbo.big_i i WHERE i.x = o.x ORDER BY i.id DESC) t;
SELECT COUNT(*) AS rows_, COUNT(t.id) AS matched
FROM dbo.big_o o OUTER APPLY (SELECT i.id FROM dbo.big_i i WHERE i.x = o.x AND i.id > 15000) t;
GO
