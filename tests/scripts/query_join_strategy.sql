-- Join strategies (docs/architecture.md, "Join strategy"): index nested loops when one
-- side is estimated at a few rows (a seek by every key column of a unique index,
-- constant rows) and the other is seekable by its join key; a merge join when both
-- inputs come in order of one integer key (clustered scans); otherwise a hash join,
-- building on the side known to be smaller. SHOWPLAN shows the choice; the results
-- follow with the same queries, and agree with the HASH hint's.
CREATE TABLE p (id int PRIMARY KEY, v varchar(10));
CREATE TABLE c (id int PRIMARY KEY, pid int, w int);
CREATE TABLE d (id int PRIMARY KEY, z int);
CREATE TABLE m1 (k int NOT NULL, a int);
CREATE TABLE m2 (k int NOT NULL, b int);
CREATE CLUSTERED INDEX m1k ON m1 (k);
CREATE CLUSTERED INDEX m2k ON m2 (k);
INSERT INTO p VALUES (1, 'one'), (2, 'two'), (3, 'three'), (4, 'four');
INSERT INTO c VALUES (10, 1, 100), (11, 1, 110), (12, 2, 120), (13, 5, 130), (14, NULL, 140);
INSERT INTO d VALUES (1, 7), (3, 9), (4, NULL), (6, 11);
INSERT INTO m1 VALUES (1, 1), (1, 2), (2, 3), (4, 4), (4, 5), (4, 6), (7, 7);
INSERT INTO m2 VALUES (0, 10), (1, 20), (1, 30), (3, 40), (4, 50), (4, 60), (8, 70);
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT p.v, d.z FROM p JOIN d ON p.id = d.id;
GO
SELECT p.v, d.z FROM p FULL JOIN d ON p.id = d.id;
GO
SELECT m1.a, m2.b FROM m1 JOIN m2 ON m1.k = m2.k AND m1.a + m2.b > 25;
GO
SELECT p.v, c.w FROM p JOIN c ON p.id = c.pid;
GO
SELECT p.v, d.z FROM p INNER HASH JOIN d ON p.id = d.id;
GO
SELECT p.v, c.w FROM p JOIN c ON p.id = c.pid WHERE c.id = 12;
GO
SELECT x.w, p.v FROM (SELECT * FROM c WHERE id = 13) x LEFT JOIN p ON p.id = x.pid;
GO
SELECT p.v, c.w FROM p, c WHERE p.id = c.pid AND p.id = 1;
GO
SELECT p.v, v.n FROM p JOIN (VALUES (2, 'b'), (3, 'c')) v (id, n) ON v.id = p.id;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT p.v, d.z FROM p JOIN d ON p.id = d.id;
SELECT p.v, d.z FROM p LEFT JOIN d ON p.id = d.id;
SELECT p.v, d.z FROM p RIGHT JOIN d ON p.id = d.id;
SELECT p.v, d.z FROM p FULL JOIN d ON p.id = d.id;
SELECT p.v, d.z FROM p FULL JOIN d ON p.id = d.id AND d.z > 7;
SELECT m1.k, m1.a, m2.b FROM m1 JOIN m2 ON m1.k = m2.k;
SELECT m1.k, m1.a, m2.k, m2.b FROM m1 FULL JOIN m2 ON m1.k = m2.k AND m1.a + m2.b > 25;
SELECT m1.k, m1.a, m2.k, m2.b FROM m1 FULL HASH JOIN m2 ON m1.k = m2.k AND m1.a + m2.b > 25
ORDER BY m1.k, m1.a, m2.k, m2.b;
SELECT p.v, c.w FROM p JOIN c ON p.id = c.pid WHERE c.id = 12;
SELECT x.w, p.v FROM (SELECT * FROM c WHERE id = 13) x LEFT JOIN p ON p.id = x.pid;
SELECT x.w, p.v FROM (SELECT * FROM c WHERE id = 11) x LEFT JOIN p ON p.id = x.pid;
SELECT p.v, c.w FROM p, c WHERE p.id = c.pid AND p.id = 1 ORDER BY c.w;
SELECT p.v, v.n FROM p JOIN (VALUES (2, 'b'), (3, 'c'), (NULL, 'n')) v (id, n) ON v.id = p.id ORDER BY v.n;
GO
-- The HASH hint holds when a WHERE conjunct makes a side small.
SET SHOWPLAN_TEXT ON;
GO
SELECT p.v, c.w FROM p INNER HASH JOIN c ON p.id = c.pid WHERE c.id = 12;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT p.v, c.w FROM p INNER HASH JOIN c ON p.id = c.pid WHERE c.id = 12;
GO
