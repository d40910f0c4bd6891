-- Msg 207 and 209: a bad column of a table that exists is found when the batch compiles, so nothing in it runs.
SET NOCOUNT ON;
CREATE TABLE dbo.t (a int NOT NULL, b varchar(5) NULL);
INSERT INTO dbo.t VALUES (1, 'x');
GO
PRINT 'not printed: the batch fails to compile';
SELECT c FROM dbo.t;
GO
SELECT a, b FROM dbo.t WHERE nope = 1;
GO
UPDATE dbo.t SET missing = 1;
GO
SELECT a FROM dbo.t ORDER BY zz;
GO
SELECT t.a, u.a FROM dbo.t AS t JOIN dbo.t AS u ON u.a = t.a WHERE a = 1;
GO
