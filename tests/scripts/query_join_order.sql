-- Join order for comma-separated FROM lists: the planner starts from the item with an
-- equality to a constant (t3) and follows equality links (t3-t1, t1-t2, t2-t4), so no
-- cross product is formed; the results keep the written column order.
CREATE TABLE t1 (a1 int PRIMARY KEY, b1 int, x1 varchar(10));
CREATE TABLE t2 (a2 int PRIMARY KEY, b2 int, x2 varchar(10));
CREATE TABLE t3 (a3 int PRIMARY KEY, b3 int, x3 varchar(10));
CREATE TABLE t4 (a4 int PRIMARY KEY, b4 int, x4 varchar(10));
INSERT INTO t1 VALUES (1, 10, 'one'), (2, 20, 'two'), (3, 30, 'three');
INSERT INTO t2 VALUES (10, 100, 'ten'), (20, 200, 'twenty'), (30, 300, 'thirty');
INSERT INTO t3 VALUES (1, 1, 'c1'), (2, 2, 'c2'), (3, 3, 'c3');
INSERT INTO t4 VALUES (100, 0, 'd100'), (200, 0, 'd200'), (300, 0, 'd300');
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT x1, x2, x3, x4 FROM t1, t2, t3, t4 WHERE a4 = b2 AND a3 = 2 AND b3 = a1 AND b1 = a2;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT x1, x2, x3, x4 FROM t1, t2, t3, t4 WHERE a4 = b2 AND a3 = 2 AND b3 = a1 AND b1 = a2;
SELECT * FROM t4, t3, t2 WHERE a3 = 3 AND b2 = a4 AND a2 = 30 ORDER BY 1;
-- A subquery conjunct is applied over the written column order.
SELECT x1, x3 FROM t1, t2, t3 WHERE a1 = b3 AND b1 = a2 AND x1 IN (SELECT x1 FROM t1 WHERE a1 > 1) ORDER BY x1;
GO
