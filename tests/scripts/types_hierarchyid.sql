-- hierarchyid: SQL Server's binary form ([MS-SSCLRT]), depth-first order by its bytes,
-- CAST to and from text and varbinary, and the methods (case-sensitive, as in SQL Server).
SELECT CAST(CAST('/' AS hierarchyid) AS varbinary(10)) AS root, CAST(CAST('/1/' AS hierarchyid) AS varbinary(10)) AS one,
       CAST(CAST('/1/-2.18/' AS hierarchyid) AS varbinary(10)) AS spec_example, CAST(CAST('/0.3.-7/' AS hierarchyid) AS varbinary(10)) AS dotted;
SELECT CAST(CAST('/1/2.5/' AS hierarchyid) AS nvarchar(20)) AS text_form, CAST(CAST(0x58 AS hierarchyid).ToString() AS varchar(10)) AS from_bytes,
       CAST(CAST('/3/' AS hierarchyid) AS varbinary(10)) AS as_bytes;
GO
CREATE TABLE dbo.org (node hierarchyid PRIMARY KEY, name varchar(20) NOT NULL, lvl AS node.GetLevel());
INSERT dbo.org (node, name) VALUES ('/', 'ceo'), ('/2/', 'b'), ('/1/', 'a'), ('/1/2/', 'ab'), ('/2/1/', 'ba'), ('/1/1/', 'aa'), ('/1/1.1/', 'aa2');
-- Depth-first order: a node, then its subtree, then its next sibling.
SELECT CAST(node.ToString() AS varchar(10)) AS path, lvl, CAST(node.GetAncestor(1).ToString() AS varchar(10)) AS parent, name
FROM dbo.org ORDER BY node;
SELECT name FROM dbo.org WHERE node > '/1/2/' ORDER BY node;
DECLARE @a hierarchyid = '/1/';
SELECT name FROM dbo.org WHERE node.IsDescendantOf(@a) = 1 ORDER BY node;
SELECT name, CAST(node.GetReparentedValue(@a, '/9/').ToString() AS varchar(10)) AS moved FROM dbo.org WHERE node.IsDescendantOf(@a) = 1 ORDER BY node;
SELECT COUNT(*) AS n, MAX(lvl) AS deepest FROM dbo.org;
GO
-- Static methods and GetDescendant: new children after, before and between siblings.
DECLARE @p hierarchyid = hierarchyid::Parse('/1/');
SELECT CAST(hierarchyid::GetRoot().ToString() AS varchar(10)) AS root, hierarchyid::GetRoot().GetLevel() AS root_level,
       CAST(@p.GetDescendant(NULL, NULL).ToString() AS varchar(10)) AS first_child,
       CAST(@p.GetDescendant('/1/3/', NULL).ToString() AS varchar(10)) AS after_3,
       CAST(@p.GetDescendant(NULL, '/1/3/').ToString() AS varchar(10)) AS before_3;
SELECT CAST(@p.GetDescendant('/1/1/', '/1/3/').ToString() AS varchar(10)) AS between_1_3,
       CAST(@p.GetDescendant('/1/1/', '/1/2/').ToString() AS varchar(10)) AS between_1_2,
       CAST(@p.GetDescendant('/1/1/', '/1/1.1/').ToString() AS varchar(10)) AS between_1_11,
       CAST(@p.GetAncestor(1).ToString() AS varchar(10)) AS up_one, CAST(@p.GetAncestor(2) AS varbinary(10)) AS past_root;
DECLARE @none hierarchyid;
SELECT @none.GetLevel() AS null_level, CAST(@none.ToString() AS varchar(10)) AS null_text;
GO
-- Errors: bad text, bad bytes, a method of the wrong case or type, arithmetic, conversions.
SELECT CAST('1/2' AS hierarchyid);
GO
SELECT CAST(0xFF AS hierarchyid);
GO
SELECT hierarchyid::GetRoot().getlevel();
GO
DECLARE @n int = 5;
SELECT @n.GetLevel();
GO
SELECT CAST('/1/' AS hierarchyid) + 1;
GO
SELECT CAST(CAST('/1/' AS hierarchyid) AS int);
GO
SELECT hierarchyid::Parse('/1/').GetDescendant('/1/3/', '/1/2/');
GO
SELECT hierarchyid::Parse('/1/').GetDescendant('/2/1/', NULL);
GO
SELECT name, user_type_id, system_type_id, max_length FROM sys.types WHERE name = 'hierarchyid';
SELECT c.name, TYPE_NAME(c.user_type_id) AS type_name, c.max_length FROM sys.columns c WHERE c.object_id = OBJECT_ID('dbo.org') AND c.name = 'node';
GO
