-- Equi-joins and correlated subqueries on strings compared under a collation other than
-- the default run as hash joins (and index spools) keyed on the collation's sort keys:
-- rows match exactly when the strings compare equal under it.
CREATE TABLE dbo.l (id int PRIMARY KEY, cs varchar(10) COLLATE Latin1_General_CS_AS NULL, ai nvarchar(10) COLLATE Latin1_General_CI_AI NULL);
CREATE TABLE dbo.r (id int PRIMARY KEY, cs varchar(10) COLLATE Latin1_General_CS_AS NULL, ai nvarchar(10) COLLATE Latin1_General_CI_AI NULL, plain varchar(10) NULL);
INSERT dbo.l VALUES (1, 'abc', N'café'), (2, 'ABC', N'CAFE'), (3, 'Abc', N'naïve'), (4, NULL, NULL), (5, 'xyz', N'résumé');
INSERT dbo.r VALUES (10, 'abc', N'cafe', 'ABC'), (11, 'ABC', N'Naive', 'abc'), (12, 'aBc', N'resume', 'XYZ'), (13, NULL, NULL, NULL), (14, 'abc', N'CAFÉ', 'zzz');
GO
-- Case-sensitive: only equal case matches.
SELECT l.id, r.id AS rid FROM dbo.l JOIN dbo.r ON l.cs = r.cs ORDER BY l.id, r.id;
-- Accent- and case-insensitive.
SELECT l.id, r.id AS rid FROM dbo.l JOIN dbo.r ON l.ai = r.ai ORDER BY l.id, r.id;
-- LEFT JOIN keeps the rows without a match (and the NULL key).
SELECT l.id, r.id AS rid FROM dbo.l LEFT JOIN dbo.r ON l.cs = r.cs ORDER BY l.id, r.id;
-- An explicit COLLATE in the ON clause: the default-collated column compared case-sensitively.
SELECT l.id, r.id AS rid FROM dbo.l JOIN dbo.r ON r.plain = l.cs COLLATE Latin1_General_CS_AS ORDER BY l.id, r.id;
-- Both keys: the collated one and an integer one.
SELECT l.id, r.id AS rid FROM dbo.l JOIN dbo.r ON l.cs = r.cs AND r.id - 9 = l.id ORDER BY l.id;
-- A correlated EXISTS on a collated equality (an index spool keyed the same way).
SELECT id FROM dbo.l WHERE EXISTS (SELECT 1 FROM dbo.r WHERE r.cs = l.cs) ORDER BY id;
SELECT id FROM dbo.l WHERE NOT EXISTS (SELECT 1 FROM dbo.r WHERE r.ai = l.ai) ORDER BY id;
GO
-- Two different implicit collations in one equality are still 468.
SELECT COUNT(*) FROM dbo.l JOIN dbo.r ON l.cs = r.ai;
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT l.id FROM dbo.l JOIN dbo.r ON l.cs = r.cs;
GO
SET SHOWPLAN_TEXT OFF;
GO
