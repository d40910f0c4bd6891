-- INSERT ... SELECT and multi-row VALUES write their rows in batches (of 32) when nothing can see them one at a time: a failure in the middle of a batch still rolls the whole statement back, and @@ROWCOUNT, @@IDENTITY and SCOPE_IDENTITY() are as row by row.
SET NOCOUNT ON;
CREATE TABLE dbo.n (i int NOT NULL PRIMARY KEY);
CREATE TABLE dbo.dg (d int NOT NULL);
INSERT dbo.dg VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9);
INSERT dbo.n (i) SELECT a.d + 10 * b.d + 100 * c.d + 1 FROM dbo.dg a CROSS JOIN dbo.dg b CROSS JOIN dbo.dg c;
SELECT COUNT(*) AS n, MIN(i) AS lo, MAX(i) AS hi FROM dbo.n;
CREATE TABLE dbo.t (id int IDENTITY(1, 1) NOT NULL CONSTRAINT PK_t PRIMARY KEY, v int NOT NULL, d datetime2 NOT NULL DEFAULT sysdatetime(), CONSTRAINT CK_t_v CHECK (v <> 777));
GO
-- 700 rows: 22 batches, the last one partial.
INSERT dbo.t (v) SELECT i FROM dbo.n WHERE i <= 700 ORDER BY i;
SELECT @@ROWCOUNT AS rc, @@IDENTITY AS ident, SCOPE_IDENTITY() AS scope_ident;
SELECT COUNT(*) AS n, MIN(id) AS lo, MAX(id) AS hi, SUM(CASE WHEN id = v THEN 1 ELSE 0 END) AS in_order FROM dbo.t;
GO
-- A CHECK failure at the 777th row, in the middle of its batch: nothing of the statement stays.
-- The statement drew 1000 IDENTITY values at once; the 777 its rows took up to the
-- failure stay used (as row by row), the rest is given back: the next value is 1478.
INSERT dbo.t (v) SELECT i FROM dbo.n ORDER BY i;
SELECT COUNT(*) AS n, MAX(id) AS hi, IDENT_CURRENT('dbo.t') AS ident_current FROM dbo.t;
GO
-- A duplicate key in the middle of a batch (k 500 is there first), inside a transaction
-- that goes on: the statement is rolled back, the transaction is not.
CREATE TABLE dbo.u (k int NOT NULL CONSTRAINT PK_u PRIMARY KEY);
INSERT dbo.u VALUES (500);
BEGIN TRAN;
INSERT dbo.t (v) VALUES (1);
INSERT dbo.u (k) SELECT i FROM dbo.n ORDER BY i;
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS n FROM dbo.u;
INSERT dbo.t (v) SELECT i FROM dbo.n WHERE i BETWEEN 770 AND 800 ORDER BY i;
SELECT @@TRANCOUNT AS trancount, COUNT(*) AS n FROM dbo.t;
COMMIT;
SELECT COUNT(*) AS n FROM dbo.t;
GO
-- Multi-row VALUES of literals, and a key conflict between two rows of one statement.
CREATE TABLE dbo.k (k int NOT NULL CONSTRAINT PK_k PRIMARY KEY, s varchar(10) NULL);
INSERT dbo.k VALUES (3, 'c'), (1, 'a'), (2, DEFAULT);
SELECT @@ROWCOUNT AS rc;
INSERT dbo.k VALUES (10, 'x'), (11, 'y'), (10, 'z');
INSERT dbo.k VALUES (20, 'x'), (21, 'too long a value');
SELECT k, s FROM dbo.k ORDER BY k;
GO
-- TOP limits a batched statement.
INSERT TOP (5) dbo.k (k) SELECT i + 100 FROM dbo.n ORDER BY i;
SELECT @@ROWCOUNT AS rc, COUNT(*) AS n FROM dbo.k;
GO
DROP TABLE dbo.k;
DROP TABLE dbo.t;
DROP TABLE dbo.u;
DROP TABLE dbo.n;
DROP TABLE dbo.dg;
GO
