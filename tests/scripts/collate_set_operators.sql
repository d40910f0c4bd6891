-- Set operators combine their branches' collation labels: explicit beats implicit beats
-- the coercible default; two different implicit (or explicit) collations are 451, for
-- UNION ALL too.
CREATE TABLE dbo.cs_t (s varchar(10) COLLATE Latin1_General_CS_AS);
CREATE TABLE dbo.ci_t (s varchar(10) COLLATE Latin1_General_CI_AS);
INSERT dbo.cs_t VALUES ('x'), ('Y');
INSERT dbo.ci_t VALUES ('X'), ('y');
GO
SELECT s FROM dbo.cs_t UNION SELECT s FROM dbo.ci_t;
GO
SELECT s FROM dbo.cs_t UNION ALL SELECT s FROM dbo.ci_t;
GO
SELECT s FROM dbo.cs_t INTERSECT SELECT s FROM dbo.ci_t;
GO
SELECT s FROM dbo.cs_t EXCEPT SELECT s FROM dbo.ci_t;
GO
-- The column's position is the one reported.
SELECT 1, s FROM dbo.cs_t UNION SELECT 2, s FROM dbo.ci_t;
GO
-- An explicit label on either side decides: case-sensitive keeps x and X apart.
SELECT s FROM dbo.cs_t UNION SELECT s COLLATE Latin1_General_CS_AS FROM dbo.ci_t ORDER BY s;
GO
-- Case-insensitive merges them.
SELECT s COLLATE Latin1_General_CI_AS AS s FROM dbo.cs_t UNION SELECT s FROM dbo.ci_t ORDER BY s;
GO
-- Two different explicit labels.
SELECT 'a' COLLATE Latin1_General_CS_AS UNION SELECT 'A' COLLATE Latin1_General_CI_AS;
GO
-- A literal takes the column's collation: case-sensitive, so 'X' stays apart from 'x'.
SELECT s FROM dbo.cs_t UNION SELECT 'X' ORDER BY s;
GO
-- Three branches: the conflict is found when the third joins.
SELECT s FROM dbo.cs_t UNION ALL SELECT 'z' UNION ALL SELECT s FROM dbo.ci_t;
GO
-- The classic case: a case-sensitive database's column beside a #temp table's (tempdb's
-- collation), and the COLLATE DATABASE_DEFAULT that resolves it.
CREATE DATABASE cs_db COLLATE Latin1_General_CS_AS;
GO
USE cs_db;
CREATE TABLE dbo.names (n varchar(20));
INSERT dbo.names VALUES ('Anna'), ('anna');
CREATE TABLE #tmp (n varchar(20));
INSERT #tmp VALUES ('ANNA');
GO
SELECT n FROM dbo.names UNION ALL SELECT n FROM #tmp;
GO
SELECT n FROM dbo.names UNION SELECT n COLLATE DATABASE_DEFAULT FROM #tmp ORDER BY n;
GO
USE master;
DROP DATABASE cs_db;
GO
