-- text, ntext and image: columns stored like the MAX types, their catalog entries, the
-- operations they allow (LIKE, IS NULL, DATALENGTH, CAST/CONVERT to and from the MAX
-- types, ISNULL/COALESCE) and SQL Server's errors for the rest.
CREATE TABLE lob (id int PRIMARY KEY, t text NULL, nt ntext NULL, im image NULL);
INSERT INTO lob VALUES (1, 'hello', N'wörld', 0x0102),
  (2, NULL, NULL, NULL),
  (3, REPLICATE(CAST('x' AS varchar(max)), 10000), REPLICATE(CAST(N'é' AS nvarchar(max)), 5000), CAST(REPLICATE(CAST('ab' AS varchar(max)), 6000) AS varbinary(max))),
  (4, '', N'', 0x);
SELECT id, DATALENGTH(t) AS dt, DATALENGTH(nt) AS dnt, DATALENGTH(im) AS dim FROM lob ORDER BY id;
SELECT CAST(t AS varchar(20)) AS t, CAST(nt AS nvarchar(20)) AS nt, CAST(im AS varbinary(10)) AS im,
  CONVERT(varchar(max), t) AS t2 FROM lob WHERE id = 1;
SELECT id, LEFT(CAST(t AS varchar(max)), 3) AS head, RIGHT(CAST(nt AS nvarchar(max)), 2) AS tail,
  SUBSTRING(CAST(im AS varbinary(max)), 11999, 2) AS last2 FROM lob WHERE id = 3;
GO
-- LIKE and IS NULL are the comparisons they take.
SELECT id FROM lob WHERE t LIKE 'hel%' OR nt LIKE N'%éé%' ORDER BY id;
SELECT id FROM lob WHERE t IS NULL AND im IS NULL;
SELECT CAST(ISNULL(t, 'none') AS varchar(10)) AS t, CAST(COALESCE(nt, N'none') AS nvarchar(10)) AS nt FROM lob WHERE id = 2;
SELECT COUNT(*) AS n, SUM(DATALENGTH(t)) AS bytes FROM lob;
GO
-- Catalog: SQL Server's type ids, max_length 16 (the text pointer), INFORMATION_SCHEMA.
SELECT c.name, c.system_type_id, c.user_type_id, c.max_length, TYPE_NAME(c.system_type_id) AS type_name
FROM sys.columns c WHERE c.object_id = OBJECT_ID('lob') ORDER BY c.column_id;
SELECT name, system_type_id, max_length FROM sys.types WHERE name IN ('text', 'ntext', 'image') ORDER BY name;
SELECT CAST(COLUMN_NAME AS varchar(5)) AS col, CAST(DATA_TYPE AS varchar(8)) AS type, CHARACTER_MAXIMUM_LENGTH AS max_chars,
  CHARACTER_OCTET_LENGTH AS octets, CAST(COLLATION_NAME AS varchar(30)) AS coll
FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_NAME = 'lob' ORDER BY ORDINAL_POSITION;
SELECT COL_LENGTH('lob', 't') AS t, COL_LENGTH('lob', 'nt') AS nt, COL_LENGTH('lob', 'im') AS im, TYPE_ID('ntext') AS ntext_id;
GO
-- Changing them, in other kinds of tables, through SELECT INTO and procedure parameters.
UPDATE lob SET t = 'changed', nt = N'ö', im = 0xFF WHERE id = 1;
SELECT CAST(t AS varchar(10)) AS t, CAST(nt AS nvarchar(10)) AS nt, CAST(im AS varbinary(4)) AS im FROM lob WHERE id = 1;
ALTER TABLE lob ADD extra ntext NULL;
UPDATE lob SET extra = nt WHERE id = 1;
SELECT CAST(extra AS nvarchar(10)) AS extra FROM lob WHERE id = 1;
DECLARE @tv TABLE (a text, b image);
INSERT INTO @tv VALUES ('abc', 0x01);
SELECT DATALENGTH(a) AS a, DATALENGTH(b) AS b FROM @tv;
CREATE TABLE #tt (a ntext);
INSERT INTO #tt SELECT nt FROM lob WHERE id = 3;
SELECT DATALENGTH(a) AS a FROM #tt;
SELECT id, t INTO lob_copy FROM lob;
SELECT TYPE_NAME(system_type_id) AS copied FROM sys.columns WHERE object_id = OBJECT_ID('lob_copy') AND name = 't';
GO
CREATE PROCEDURE put_text @id int, @t text, @im image AS
  INSERT INTO lob (id, t, im) VALUES (@id, @t, @im);
GO
EXEC put_text 5, 'from a parameter', 0x0A0B;
SELECT CAST(t AS varchar(20)) AS t, CAST(im AS varbinary(4)) AS im FROM lob WHERE id = 5;
GO
-- Conversions: to and from the character types (text, ntext) and the binary types
-- (image); nothing else.
SELECT CAST(CAST('abc' AS text) AS varchar(10)) AS a, CAST(CAST(N'ü' AS ntext) AS nvarchar(5)) AS b,
  CAST(CAST('abc' AS image) AS varbinary(5)) AS c, CAST(CAST(0x41 AS image) AS varbinary(5)) AS d;
GO
SELECT CAST(CAST(N'abc' AS nvarchar(10)) AS image);
GO
SELECT CAST(1 AS text);
GO
SELECT CAST(t AS int) FROM lob;
GO
SELECT CAST(im AS varchar(10)) FROM lob;
GO
-- Comparison: 402 against strings, binaries and these types, 206 against the rest.
SELECT id FROM lob WHERE t = 'hello';
GO
SELECT id FROM lob WHERE nt <> nt;
GO
SELECT id FROM lob WHERE im = 0x01;
GO
SELECT id FROM lob WHERE t = 1;
GO
SELECT t + 'a' FROM lob;
GO
-- Sorting, grouping, DISTINCT, set operators, aggregates, index keys, variables.
SELECT id FROM lob ORDER BY t;
GO
SELECT COUNT(*) FROM lob GROUP BY nt;
GO
SELECT ROW_NUMBER() OVER (PARTITION BY im ORDER BY id) FROM lob;
GO
SELECT DISTINCT id, nt FROM lob;
GO
SELECT t FROM lob UNION SELECT t FROM lob;
GO
SELECT COUNT(*) AS union_all FROM (SELECT t FROM lob UNION ALL SELECT 'x') u;
SELECT CAST(CASE WHEN id = 1 THEN nt ELSE N'other' END AS nvarchar(10)) AS case_nt FROM lob WHERE id IN (1, 2) ORDER BY id;
GO
SELECT MAX(t) FROM lob;
GO
SELECT COUNT(im) FROM lob;
GO
CREATE INDEX ix_lob_t ON lob (t);
GO
CREATE TABLE lob_pk (k ntext PRIMARY KEY);
GO
ALTER TABLE lob ADD CONSTRAINT uq_lob_im UNIQUE (im);
GO
DECLARE @x text;
GO
DECLARE @y ntext = N'a';
GO
-- String functions: SUBSTRING, CHARINDEX, PATINDEX take them; LEN, LEFT, UPPER, ... do not.
SELECT CAST(SUBSTRING(t, 2, 3) AS varchar(5)) AS sub, CHARINDEX('para', t) AS ci, PATINDEX('%eter', t) AS pi FROM lob WHERE id = 5;
GO
SELECT LEN(t) FROM lob;
GO
SELECT UPPER(nt) FROM lob;
GO
SELECT REPLACE(N'a', N'b', nt) FROM lob;
GO
-- ALTER COLUMN to the MAX type (which sorts) and back.
ALTER TABLE lob_copy ALTER COLUMN t varchar(max);
SELECT TOP 1 id FROM lob_copy ORDER BY t DESC;
ALTER TABLE lob_copy ALTER COLUMN t text;
SELECT TYPE_NAME(system_type_id) AS back_to FROM sys.columns WHERE object_id = OBJECT_ID('lob_copy') AND name = 't';
GO
DROP TABLE lob, lob_copy;
GO
