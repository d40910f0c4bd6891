-- SELECT ... FOR XML RAW | AUTO | PATH, ROOT, ELEMENTS, TYPE, and the STUFF(... FOR XML
-- PATH('')) concatenation idiom.
CREATE TABLE item (id int PRIMARY KEY, name nvarchar(20), qty int NULL, price decimal(6, 2), added datetime);
INSERT INTO item VALUES (1, N'nuts & bolts', 10, 1.50, '2024-01-02T03:04:05'), (2, N'<gear>', NULL, 20.00, '2024-02-03'),
                        (3, N'"wheel"', 4, 7.25, '2024-03-04T10:00:00.5');
PRINT (SELECT id, name, qty FROM item ORDER BY id FOR XML RAW);
PRINT (SELECT id, name FROM item ORDER BY id FOR XML RAW('part'), ROOT('parts'));
PRINT (SELECT id, qty FROM item ORDER BY id FOR XML RAW, ELEMENTS);
PRINT (SELECT id, name FROM item ORDER BY id FOR XML AUTO);
PRINT (SELECT i.id FROM item AS i WHERE i.id < 3 ORDER BY i.id FOR XML AUTO, ROOT);
PRINT (SELECT id, name, price, added FROM item ORDER BY id FOR XML PATH);
PRINT (SELECT id AS [@id], name AS [info/name], qty AS [info/qty], price AS [cost] FROM item ORDER BY id FOR XML PATH('item'), ROOT('items'));
PRINT (SELECT name AS [text()] FROM item ORDER BY id FOR XML PATH(''));
PRINT (SELECT name AS [data()] FROM item ORDER BY id FOR XML PATH(''));
-- the DBA idiom: a comma list, with XML escaping of & < >
SELECT STUFF((SELECT ',' + name FROM item ORDER BY id FOR XML PATH('')), 1, 1, '') AS names;
-- ... and with TYPE and .value, as scripts write it: not supported yet (xml methods)
-- correlated: one list per group
CREATE TABLE tag (item_id int, tag varchar(10));
INSERT INTO tag VALUES (1, 'metal'), (1, 'small'), (2, 'metal'), (3, 'round');
SELECT i.id, STUFF((SELECT ', ' + t.tag FROM tag AS t WHERE t.item_id = i.id ORDER BY t.tag FOR XML PATH('')), 1, 2, '') AS tags
FROM item AS i ORDER BY i.id;
-- TYPE gives xml; a TYPE subquery is embedded as xml, not escaped text
DECLARE @x xml = (SELECT id FROM item WHERE id = 1 FOR XML RAW, TYPE);
SELECT CAST(@x AS nvarchar(100)) AS typed;
PRINT (SELECT i.id AS [@id], (SELECT t.tag FROM tag AS t WHERE t.item_id = i.id ORDER BY t.tag FOR XML PATH(''), TYPE) AS tags
       FROM item AS i ORDER BY i.id FOR XML PATH('item'));
-- no rows: a subquery reads NULL
SELECT CASE WHEN (SELECT id FROM item WHERE id = 99 FOR XML PATH) IS NULL THEN 'null' END AS empty_result;
-- the result column's name
SELECT id FROM item WHERE id = 1 FOR XML RAW;
-- errors
SELECT id FROM item FOR XML EXPLICIT;
SELECT 1 AS a FOR XML AUTO;
GO
-- FOR XML EXPLICIT: a universal table (Tag, Parent, ElementName!Tag!Attribute!Directive)
-- ordered so each parent row comes right before its children.
CREATE TABLE #cust (cid varchar(5), name nvarchar(20));
CREATE TABLE #ord (oid varchar(5), cid varchar(5), odate date, note nvarchar(30));
INSERT #cust VALUES ('C1', N'Janine'), ('C2', N'Ann & Bo');
INSERT #ord VALUES ('O1', 'C1', '1996-01-20', N'first <rush>'), ('O2', 'C1', '1997-03-29', NULL), ('O3', 'C2', '1998-02-01', N'x');
SELECT 1 AS Tag, NULL AS Parent,
       c.cid AS [Customer!1!cid], c.name AS [Customer!1!name],
       NULL AS [Order!2!id], NULL AS [Order!2!date], NULL AS [Order!2!note!element], NULL AS [Order!2!sort!hide]
FROM #cust AS c
UNION ALL
SELECT 2, 1, o.cid, NULL, o.oid, o.odate, o.note, o.oid
FROM #ord AS o
ORDER BY [Customer!1!cid], [Order!2!sort!hide]
FOR XML EXPLICIT;
-- Text content (no attribute name), CDATA, xml and ROOT.
SELECT 1 AS Tag, NULL AS Parent, N'a < b' AS [Note!1], N'<raw/>' AS [Note!1!!xml], N'x]y' AS [Note!1!!cdata]
FOR XML EXPLICIT, ROOT('notes');
-- Errors: too few columns, a bad column name, an undeclared tag, a parent not open.
SELECT 1 AS Tag, NULL AS Parent FOR XML EXPLICIT;
GO
SELECT 1 AS Tag, NULL AS Parent, 1 AS [a] FOR XML EXPLICIT;
GO
SELECT 1 AS Tag, NULL AS Parent, 1 AS [a!1!x!bogus] FOR XML EXPLICIT;
GO
SELECT 2 AS Tag, NULL AS Parent, 1 AS [a!1!x] FOR XML EXPLICIT;
GO
SELECT 2 AS Tag, 1 AS Parent, 1 AS [a!1!x], 2 AS [b!2!y] FOR XML EXPLICIT;
GO
SELECT 1 AS T, NULL AS Parent, 1 AS [a!1!x] FOR XML EXPLICIT;
GO
DROP TABLE #cust;
DROP TABLE #ord;
