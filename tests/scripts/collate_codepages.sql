-- Collations of code pages other than 1252: varchar and char values under a Thai,
-- Cyrillic, Greek... collation hold the characters of its code page (one byte each),
-- '?' for the others, whether the collation is explicit, a column's or the database's.
SET NOCOUNT ON;
SELECT CAST(N'สวัสดี' COLLATE Thai_CI_AI AS varchar(20)) AS thai,
    CAST(N'Привет' COLLATE Cyrillic_General_CI_AS AS varchar(20)) AS cyrillic,
    CAST(N'Γεια σας' COLLATE Greek_CI_AS AS varchar(20)) AS greek,
    CAST(N'cześć' COLLATE Polish_CI_AS AS varchar(20)) AS polish;
-- Characters outside the code page become '?': Thai under Cyrillic, Cyrillic under the default.
SELECT CAST(N'สวัสดี' COLLATE Cyrillic_General_CI_AS AS varchar(20)) AS thai_in_1251,
    CAST(N'Привет' AS varchar(20)) AS cyrillic_in_1252,
    CONVERT(varchar(3), N'Привет' COLLATE Ukrainian_CS_AS) AS cut_to_3;
-- One byte per character.
SELECT DATALENGTH(CAST(N'สวัสดี' COLLATE Thai_CI_AI AS varchar(20))) AS thai_bytes,
    DATALENGTH(N'สวัสดี') AS thai_nvarchar_bytes,
    DATALENGTH(CAST(N'Привет' COLLATE Cyrillic_General_CI_AS AS char(8))) AS cyrillic_char_bytes;
GO
SELECT name, COLLATIONPROPERTY(name, 'CodePage') AS code_page, COLLATIONPROPERTY(name, 'LCID') AS lcid,
    COLLATIONPROPERTY(name, 'ComparisonStyle') AS style
FROM (VALUES ('Thai_CI_AI'), ('Cyrillic_General_CS_AS'), ('Ukrainian_100_CI_AS'), ('Czech_BIN2'), ('Greek_CI_AS'),
    ('Turkish_CI_AS'), ('Hebrew_CI_AS'), ('Arabic_100_CS_AS_KS_WS'), ('Lithuanian_CI_AI'), ('Vietnamese_CI_AS'),
    ('Thai_100_CI_AS_SC_UTF8')) v(name)
ORDER BY name;
SELECT name, description FROM sys.fn_helpcollations() WHERE name IN ('Thai_CI_AI', 'Cyrillic_General_100_BIN2', 'Estonian_CS_AS_KS')
ORDER BY name;
SELECT COUNT(*) AS thai_collations FROM sys.fn_helpcollations() WHERE name LIKE 'Thai[_]%';
GO
-- A Cyrillic_General_CS_AS column stores its code page and compares case-sensitively.
CREATE TABLE dbo.cyr (id int PRIMARY KEY, v varchar(10) COLLATE Cyrillic_General_CS_AS, c char(4) COLLATE Cyrillic_General_CS_AS);
INSERT dbo.cyr VALUES (1, N'Привет', N'Да'), (2, N'привет', N'нет'), (3, N'สวัสดี', N'é');
SELECT id, v, c, DATALENGTH(v) AS bytes FROM dbo.cyr ORDER BY id;
SELECT id FROM dbo.cyr WHERE v = N'Привет';
SELECT id FROM dbo.cyr WHERE v = N'ПРИВЕТ' COLLATE Cyrillic_General_CI_AS ORDER BY id;
SELECT v, COUNT(*) AS n FROM dbo.cyr GROUP BY v ORDER BY v;
UPDATE dbo.cyr SET v = N'Ёлка' WHERE id = 3;
SELECT v, CAST(v AS varbinary(10)) AS bytes FROM dbo.cyr WHERE id = 3;
DROP TABLE dbo.cyr;
GO
-- A Thai database: literals cast to varchar take its code page, and so do its columns.
CREATE DATABASE coll_thai COLLATE Thai_CI_AS;
GO
USE coll_thai;
SELECT CAST(N'สวัสดี' AS varchar(10)) AS literal;
CREATE TABLE dbo.t (v varchar(10));
INSERT dbo.t VALUES (N'ภาษาไทย');
SELECT v, DATALENGTH(v) AS bytes, CAST(v AS varbinary(10)) AS raw FROM dbo.t;
SELECT name, collation_name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.t');
USE master;
DROP DATABASE coll_thai;
GO
