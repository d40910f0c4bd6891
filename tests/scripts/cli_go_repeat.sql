-- GO n runs the batch n times; GO is a separator only alone on its line (any case, optional count and comment).
SET NOCOUNT ON;
CREATE TABLE dbo.c (n int NOT NULL);
GO
INSERT INTO dbo.c VALUES (1);
GO 3
INSERT INTO dbo.c VALUES (10)
go -- lower case, with a comment
SELECT COUNT(*) AS cnt, SUM(n) AS total FROM dbo.c;
GO
PRINT 'GO inside a string: GO';
GO
