-- Seeks on string columns of a collation other than the instance's (docs/architecture.md,
-- "Collations"): the index keys a column under its own collation, so a comparison under
-- that collation (the column's, in a case-sensitive database every string column's and
-- every literal's) seeks the index; a comparison under another collation (an explicit
-- COLLATE) cannot use its order and stays a scan with a filter, as in SQL Server. Plans
-- first, then the rows, which must be the same either way.
CREATE DATABASE SeekCs COLLATE Latin1_General_CS_AS;
GO
USE SeekCs;
CREATE TABLE dbo.w (name varchar(20) NOT NULL PRIMARY KEY, n int NOT NULL);
CREATE TABLE dbo.u (id int PRIMARY KEY, tag nvarchar(20) NOT NULL);
CREATE INDEX ix_tag ON dbo.u (tag);
INSERT dbo.w VALUES ('abc', 1), ('ABC', 2), ('Abc', 3), ('abd', 4), ('b', 5), ('B', 6);
INSERT dbo.u VALUES (1, N'red'), (2, N'Red'), (3, N'RED'), (4, N'green'), (5, N'blue');
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT n FROM dbo.w WHERE name = 'abc';
SELECT n FROM dbo.w WHERE name >= 'a' AND name < 'b';
SELECT id FROM dbo.u WHERE tag = N'Red';
SELECT n FROM dbo.w WHERE name = 'abc' COLLATE Latin1_General_CS_AS;
SELECT n FROM dbo.w WHERE name = 'abc' COLLATE Latin1_General_CI_AS;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT n FROM dbo.w WHERE name = 'abc';
SELECT n FROM dbo.w WHERE name = 'ABC';
SELECT n FROM dbo.w WHERE name = 'abc ';
SELECT name, n FROM dbo.w WHERE name >= 'a' AND name < 'b' ORDER BY name;
SELECT id FROM dbo.u WHERE tag = N'Red';
SELECT n FROM dbo.w WHERE name = 'abc' COLLATE Latin1_General_CS_AS;
SELECT n FROM dbo.w WHERE name = 'abc' COLLATE Latin1_General_CI_AS ORDER BY n;
GO
-- A case- and accent-insensitive column: the seek finds every spelling.
CREATE TABLE dbo.ci (word nvarchar(20) COLLATE Latin1_General_CI_AI NOT NULL PRIMARY KEY, n int);
INSERT dbo.ci VALUES (N'Résumé', 1), (N'resumes', 2), (N'other', 3);
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT n FROM dbo.ci WHERE word = N'RESUME';
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT n FROM dbo.ci WHERE word = N'RESUME';
SELECT n FROM dbo.ci WHERE word > N'resume' ORDER BY n;
GO
USE master;
DROP DATABASE SeekCs;
GO
