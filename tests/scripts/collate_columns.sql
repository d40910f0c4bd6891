-- Column collations: a column's COLLATE is stored in the catalog and shown by
-- sys.columns and INFORMATION_SCHEMA.COLUMNS; the column's values compare, sort and
-- group under it (its implicit label: an explicit COLLATE beats it, a literal or
-- variable takes it, two different column collations in one comparison are 468); its
-- index keys follow it (a case-sensitive unique index holds 'a' and 'A').
SET NOCOUNT ON;
CREATE TABLE dbo.cc (id int PRIMARY KEY, ci varchar(10), cs varchar(10) COLLATE Latin1_General_CS_AS,
    bin nvarchar(10) COLLATE Latin1_General_BIN2, dflt varchar(10) COLLATE SQL_Latin1_General_CP1_CI_AS);
INSERT dbo.cc VALUES (1, 'a', 'a', N'a', 'a'), (2, 'A', 'A', N'A', 'A'), (3, 'b', 'b', N'b', 'b'),
    (4, 'B', 'B', N'B', 'B');
GO
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.cc') ORDER BY column_id;
SELECT COLUMN_NAME, COLLATION_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'cc' ORDER BY ORDINAL_POSITION;
-- A literal or variable compared with the column takes the column's collation.
SELECT id FROM dbo.cc WHERE ci = 'a' ORDER BY id;
SELECT id FROM dbo.cc WHERE cs = 'a' ORDER BY id;
DECLARE @v varchar(10) = 'A';
SELECT id FROM dbo.cc WHERE cs = @v ORDER BY id;
SELECT id FROM dbo.cc WHERE cs IN ('a', 'b') ORDER BY id;
SELECT id FROM dbo.cc WHERE cs LIKE 'a%' ORDER BY id;
-- Explicit beats implicit.
SELECT id FROM dbo.cc WHERE cs = 'a' COLLATE Latin1_General_CI_AS ORDER BY id;
-- Sorting and grouping follow the column.
SELECT id, cs FROM dbo.cc ORDER BY cs, id;
SELECT id, bin FROM dbo.cc ORDER BY bin, id;
SELECT COUNT(DISTINCT ci) AS ci, COUNT(DISTINCT cs) AS cs, COUNT(DISTINCT bin) AS bin FROM dbo.cc;
SELECT cs, COUNT(*) AS n FROM dbo.cc GROUP BY cs ORDER BY cs;
GO
-- Two columns of different collations: 468.
SELECT id FROM dbo.cc WHERE ci = cs;
GO
SELECT id FROM dbo.cc WHERE cs = bin;
GO
-- An explicit COLLATE resolves it.
SELECT id FROM dbo.cc WHERE ci = cs COLLATE Latin1_General_CS_AS ORDER BY id;
-- The same collation on both sides is fine.
SELECT COUNT(*) AS n FROM dbo.cc a JOIN dbo.cc b ON a.cs = b.cs;
GO
-- Unknown collation in a column definition: 448.
CREATE TABLE dbo.bad (c varchar(10) COLLATE No_Such_Collation);
GO
-- Index keys follow the column's collation: a case-sensitive unique index accepts 'x'
-- and 'X' but not 'x' twice; a case-insensitive one refuses 'X' after 'x'.
CREATE TABLE dbo.u (k varchar(10) COLLATE Latin1_General_CS_AS PRIMARY KEY, v int);
INSERT dbo.u VALUES ('x', 1), ('X', 2);
SELECT k, v FROM dbo.u ORDER BY k;
SELECT v FROM dbo.u WHERE k = 'X';
GO
INSERT dbo.u VALUES ('x', 3);
GO
CREATE TABLE dbo.u2 (k varchar(10) COLLATE Latin1_General_CI_AS, CONSTRAINT uq_k UNIQUE (k));
INSERT dbo.u2 VALUES ('x');
INSERT dbo.u2 VALUES ('X');
GO
CREATE TABLE dbo.u3 (id int, k nvarchar(10) COLLATE Latin1_General_BIN2);
CREATE UNIQUE INDEX ix_k ON dbo.u3 (k);
INSERT dbo.u3 VALUES (1, N'b'), (2, N'B'), (3, N'a'), (4, N'A');
SELECT id FROM dbo.u3 WITH (INDEX(ix_k)) ORDER BY k;
SELECT id FROM dbo.u3 WHERE k = N'a';
GO
-- ALTER TABLE ADD and ALTER COLUMN; SELECT INTO keeps the source column's collation;
-- table variables and #temp tables take COLLATE too.
ALTER TABLE dbo.cc ADD extra varchar(10) COLLATE Latin1_General_100_CI_AI NULL;
ALTER TABLE dbo.cc ALTER COLUMN ci varchar(10) COLLATE Latin1_General_CS_AS;
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.cc') AND name IN ('ci', 'extra') ORDER BY name;
SELECT id FROM dbo.cc WHERE ci = 'a' ORDER BY id;
ALTER TABLE dbo.cc ALTER COLUMN ci varchar(10);
SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.cc') AND name = 'ci';
SELECT id, cs INTO dbo.cc_copy FROM dbo.cc;
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.cc_copy') ORDER BY column_id;
SELECT id FROM dbo.cc_copy WHERE cs = 'a';
DECLARE @t TABLE (c varchar(10) COLLATE Latin1_General_CS_AS);
INSERT @t VALUES ('q'), ('Q');
SELECT COUNT(*) AS n FROM @t WHERE c = 'q';
CREATE TABLE #tmp (c varchar(10) COLLATE Latin1_General_CS_AS);
INSERT #tmp VALUES ('q'), ('Q');
SELECT COUNT(*) AS n FROM #tmp WHERE c = 'Q';
GO
-- A collation change on a key column is blocked like a type change.
ALTER TABLE dbo.u ALTER COLUMN k varchar(10) COLLATE Latin1_General_BIN2 NOT NULL;
GO
SELECT collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.u') AND name = 'k';
GO
