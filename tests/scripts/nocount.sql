-- Row counts: "(n rows affected)" after each statement with a count; SET NOCOUNT ON hides them, @@ROWCOUNT still counts.
CREATE TABLE dbo.r (v int NOT NULL);
INSERT INTO dbo.r VALUES (1), (2), (3);
SELECT v FROM dbo.r WHERE v > 1 ORDER BY v;
UPDATE dbo.r SET v = v WHERE v = 3;
DELETE FROM dbo.r WHERE v > 5;
SET NOCOUNT ON;
INSERT INTO dbo.r VALUES (4);
SELECT v FROM dbo.r WHERE v = 4;
SELECT @@ROWCOUNT AS last_count;
SET NOCOUNT OFF;
DECLARE @x int = 1;
SELECT COUNT(*) AS total FROM dbo.r;
GO
