-- Database collations: CREATE DATABASE ... COLLATE and ALTER DATABASE ... COLLATE.
-- The database collation is the collation of new character columns created in the
-- database and of literals and variables in batches run in it; #temp tables take
-- tempdb's (the instance's), table variables the current database's. Existing columns
-- keep theirs when the database collation changes.
SET NOCOUNT ON;
CREATE DATABASE coll_cs COLLATE Latin1_General_CS_AS;
CREATE DATABASE coll_ci;
GO
SELECT name, collation_name FROM sys.databases WHERE name IN ('master', 'tempdb', 'coll_cs', 'coll_ci') ORDER BY name;
SELECT DATABASEPROPERTYEX('coll_cs', 'Collation') AS cs, DATABASEPROPERTYEX('coll_ci', 'Collation') AS ci,
    SERVERPROPERTY('Collation') AS server;
GO
-- Unknown collation: 448, and no database.
CREATE DATABASE coll_bad COLLATE No_Such_Collation;
GO
SELECT COUNT(*) AS n FROM sys.databases WHERE name = 'coll_bad';
GO
-- Literals and variables compare under the current database's collation.
USE coll_cs;
SELECT CASE WHEN 'a' = 'A' THEN 'equal' ELSE 'different' END AS literals;
DECLARE @v varchar(10) = 'abc';
SELECT CASE WHEN @v = 'ABC' THEN 'equal' ELSE 'different' END AS variable;
SELECT CASE WHEN 'abc' LIKE 'A%' THEN 'like' ELSE 'not like' END AS pattern;
SELECT CASE WHEN 'b' IN ('A', 'B') THEN 'in' ELSE 'not in' END AS list;
-- An explicit COLLATE still decides, and DATABASE_DEFAULT names the database's.
SELECT CASE WHEN 'a' = 'A' COLLATE Latin1_General_CI_AS THEN 'equal' ELSE 'different' END AS explicit_ci;
SELECT CASE WHEN 'a' COLLATE DATABASE_DEFAULT = 'A' THEN 'equal' ELSE 'different' END AS database_default;
GO
-- Grouping and DISTINCT of literals follow it too.
SELECT COUNT(*) AS n FROM (SELECT 'a' AS x UNION SELECT 'A') u;
SELECT x, COUNT(*) AS n FROM (VALUES ('a'), ('A'), ('a')) v(x) GROUP BY x ORDER BY x;
GO
-- New columns take the database collation; an explicit COLLATE still wins.
CREATE TABLE dbo.t (id int PRIMARY KEY, c varchar(10), n nvarchar(10), ci varchar(10) COLLATE SQL_Latin1_General_CP1_CI_AS,
    x int);
INSERT dbo.t VALUES (1, 'a', N'a', 'a', 1), (2, 'A', N'A', 'A', 2);
ALTER TABLE dbo.t ADD added varchar(10);
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t') ORDER BY column_id;
SELECT COLUMN_NAME, COLLATION_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 't' ORDER BY ORDINAL_POSITION;
SELECT id FROM dbo.t WHERE c = 'a' ORDER BY id;
SELECT id FROM dbo.t WHERE ci = 'a' ORDER BY id;
GO
-- ALTER COLUMN without COLLATE returns the column to the database collation.
ALTER TABLE dbo.t ALTER COLUMN ci varchar(20);
SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t') AND name = 'ci';
GO
-- SELECT INTO keeps each source column's collation; a literal takes the database's.
SELECT c, ci, 'lit' AS lit INTO dbo.copied FROM dbo.t;
CREATE TABLE #src (tc varchar(10));
SELECT tc INTO dbo.copied_tmp FROM #src;
SELECT OBJECT_NAME(object_id) AS tab, name, collation_name FROM sys.columns
WHERE object_id IN (OBJECT_ID('dbo.copied'), OBJECT_ID('dbo.copied_tmp')) ORDER BY tab, column_id;
GO
-- Table variables take the current database's collation.
DECLARE @tv TABLE (c varchar(10));
INSERT @tv VALUES ('a'), ('A');
SELECT COUNT(*) AS cs_matches FROM @tv WHERE c = 'a';
GO
-- #temp tables take tempdb's: SQL Server's collation conflict when a case-sensitive
-- database joins a #temp table.
CREATE TABLE #tmp (c varchar(10));
INSERT #tmp VALUES ('a');
SELECT collation_name FROM tempdb.sys.columns WHERE object_id = OBJECT_ID('tempdb..#tmp');
GO
SELECT t.id FROM dbo.t t JOIN #tmp ON t.c = #tmp.c;
GO
-- COLLATE DATABASE_DEFAULT in the #temp table avoids it.
CREATE TABLE #tmp2 (c varchar(10) COLLATE DATABASE_DEFAULT);
INSERT #tmp2 VALUES ('a');
SELECT t.id FROM dbo.t t JOIN #tmp2 ON t.c = #tmp2.c;
GO
-- ALTER DATABASE ... COLLATE: new columns and literals follow; existing columns keep theirs.
USE master;
ALTER DATABASE coll_cs COLLATE Latin1_General_CI_AS;
SELECT collation_name FROM sys.databases WHERE name = 'coll_cs';
GO
USE coll_cs;
SELECT CASE WHEN 'a' = 'A' THEN 'equal' ELSE 'different' END AS literals;
CREATE TABLE dbo.t2 (c varchar(10));
SELECT OBJECT_NAME(object_id) AS tab, name, collation_name FROM sys.columns
WHERE object_id IN (OBJECT_ID('dbo.t'), OBJECT_ID('dbo.t2')) AND name = 'c' ORDER BY tab;
SELECT id FROM dbo.t WHERE c = 'a' ORDER BY id;
GO
-- Refused while a CHECK constraint or a computed column depends on the collation:
-- 5075 for each, then 5072.
CREATE TABLE dbo.dep (id int CONSTRAINT ck_dep_id CHECK (id > 0), s varchar(10), l AS LEN(s));
GO
ALTER DATABASE CURRENT COLLATE Latin1_General_BIN2;
GO
SELECT collation_name FROM sys.databases WHERE name = 'coll_cs';
DROP TABLE dbo.dep;
ALTER DATABASE CURRENT COLLATE Latin1_General_BIN2;
SELECT collation_name FROM sys.databases WHERE name = 'coll_cs';
GO
-- Unknown collation and system databases.
ALTER DATABASE coll_cs COLLATE No_Such_Collation;
GO
ALTER DATABASE master COLLATE Latin1_General_CS_AS;
GO
ALTER DATABASE tempdb COLLATE Latin1_General_CS_AS;
GO
USE master;
DROP DATABASE coll_cs;
DROP DATABASE coll_ci;
GO
