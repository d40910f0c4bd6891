-- A WITH clause before INSERT, UPDATE and DELETE is visible to the statement's source
-- query, FROM clause, WHERE subqueries and SET expressions (recursive CTEs included).
SET NOCOUNT ON;
CREATE TABLE #t (n int);
WITH n AS (SELECT 1 AS v UNION ALL SELECT 2) INSERT INTO #t SELECT v FROM n;
SELECT COUNT(*) AS after_plain_cte FROM #t;
WITH r AS (SELECT 1 AS v UNION ALL SELECT v + 1 FROM r WHERE v < 5) INSERT INTO #t (n) SELECT v FROM r;
SELECT COUNT(*) AS after_recursive_cte, SUM(n) AS total FROM #t;
CREATE TABLE #u (id int PRIMARY KEY, v int);
INSERT #u VALUES (1, 0), (2, 0), (3, 0);
WITH s AS (SELECT 2 AS id, 20 AS v UNION ALL SELECT 3, 30)
UPDATE u SET v = s.v FROM #u AS u JOIN s ON s.id = u.id;
WITH s AS (SELECT 100 AS x) UPDATE #u SET v = (SELECT x FROM s) WHERE id = 1;
WITH s AS (SELECT 3 AS id) DELETE u FROM #u AS u WHERE u.id IN (SELECT id FROM s);
SELECT id, v FROM #u ORDER BY id;
