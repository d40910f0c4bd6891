-- COLLATE in expressions: an explicit collation decides comparisons, LIKE, IN and
-- ORDER BY (collation precedence: explicit beats a column's and a literal's); two
-- different explicit collations in one comparison are 468; an unknown name is 448.
SET NOCOUNT ON;
CREATE TABLE dbo.words (id int PRIMARY KEY, w varchar(20), nw nvarchar(20));
CREATE INDEX ix_w ON dbo.words (w);
INSERT dbo.words VALUES (1, 'apple', N'apple'), (2, 'Apple', N'Apple'), (3, 'APPLE', N'APPLE'),
    (4, 'résumé', N'résumé'), (5, 'resume', N'resume'), (6, 'Zebra', N'Zebra'), (7, 'zebra', N'zebra'),
    (8, 'banana', N'banana');
GO
-- The default collation (SQL_Latin1_General_CP1_CI_AS) is case-insensitive.
SELECT CASE WHEN 'abc' = 'ABC' THEN 'equal' ELSE 'different' END AS ci,
       CASE WHEN 'abc' COLLATE Latin1_General_CS_AS = 'ABC' THEN 'equal' ELSE 'different' END AS cs,
       CASE WHEN 'abc' = 'ABC' COLLATE Latin1_General_BIN2 THEN 'equal' ELSE 'different' END AS bin2,
       CASE WHEN 'abc  ' COLLATE Latin1_General_BIN2 = 'abc' THEN 'equal' ELSE 'different' END AS trailing,
       CASE WHEN 'resume' COLLATE Latin1_General_CI_AI = 'RÉSUMÉ' THEN 'equal' ELSE 'different' END AS ai,
       CASE WHEN 'abc' COLLATE DATABASE_DEFAULT = 'ABC' THEN 'equal' ELSE 'different' END AS db_default;
-- A column compared under an explicit collation (the index on w is not used for it).
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS = 'Apple' ORDER BY id;
SELECT id FROM dbo.words WHERE w = 'Apple' COLLATE SQL_Latin1_General_CP1_CS_AS ORDER BY id;
SELECT id FROM dbo.words WHERE w = 'apple' ORDER BY id;
SELECT id FROM dbo.words WHERE nw COLLATE Latin1_General_100_CI_AI = N'resume' ORDER BY id;
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS <> 'apple' AND w LIKE 'a%' ORDER BY id;
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS BETWEEN 'a' AND 'b' ORDER BY id;
-- LIKE and IN under the explicit collation.
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS LIKE 'A%' ORDER BY id;
SELECT id FROM dbo.words WHERE w LIKE '[A-Z]%' COLLATE Latin1_General_BIN2 ORDER BY id;
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS IN ('apple', 'zebra') ORDER BY id;
SELECT id FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS NOT IN ('apple', 'zebra', 'banana') ORDER BY id;
-- ORDER BY: case-insensitive ties in id order, then case-sensitive (lower case first),
-- then code point order (upper case before lower case).
SELECT id, w FROM dbo.words ORDER BY w, id;
SELECT id, w FROM dbo.words ORDER BY w COLLATE Latin1_General_CS_AS, id;
SELECT id, w FROM dbo.words ORDER BY w COLLATE Latin1_General_BIN2, id;
SELECT id, ROW_NUMBER() OVER (ORDER BY nw COLLATE Latin1_General_BIN2 DESC) AS rn FROM dbo.words ORDER BY id;
-- The label passes through string functions and concatenation.
SELECT CASE WHEN UPPER('x' COLLATE Latin1_General_CS_AS) = 'x' THEN 'equal' ELSE 'different' END AS upper_cs,
       CASE WHEN 'a' COLLATE Latin1_General_CS_AS + 'b' = 'AB' THEN 'equal' ELSE 'different' END AS concat_cs;
GO
-- Two different explicit collations: 468.
SELECT 1 WHERE 'a' COLLATE Latin1_General_CS_AS = 'A' COLLATE Latin1_General_BIN2;
GO
SELECT 1 WHERE 'a' COLLATE Latin1_General_CS_AS LIKE 'A' COLLATE Latin1_General_CI_AS;
GO
-- The same explicit collation on both sides is fine.
SELECT COUNT(*) AS n FROM dbo.words WHERE w COLLATE Latin1_General_CS_AS = 'apple' COLLATE Latin1_General_CS_AS;
GO
-- Unknown names and non-string expressions.
SELECT 'a' COLLATE No_Such_Collation;
GO
SELECT 1 COLLATE Latin1_General_CS_AS;
GO
SELECT 'still serving' AS after_errors;
-- ORDER BY a select item's alias or position keeps the item's collation.
SELECT TOP (3) w COLLATE Latin1_General_BIN2 AS bw FROM dbo.words ORDER BY bw;
SELECT TOP (3) w COLLATE Latin1_General_BIN2 AS bw FROM dbo.words ORDER BY 1 DESC;
