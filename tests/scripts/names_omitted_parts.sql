-- Multipart names with omitted parts: `..t` and `.dbo.t` (current database, default
-- schema), `db..t`, `...t`; and names in a database that does not exist, which name no
-- object: 208 for a table, 2812 for a procedure, 3701 for DROP, NULL from OBJECT_ID
-- (only USE answers 911).
SET NOCOUNT ON;
CREATE TABLE dbo.t (id int);
INSERT INTO ..t VALUES (1);
INSERT INTO .dbo.t VALUES (2);
UPDATE ..[t] SET id = id + 10 WHERE id = 2;
SELECT id FROM ..t ORDER BY id;
SELECT COUNT(*) AS n FROM .dbo.t;
SELECT COUNT(*) AS n FROM master..t;
SELECT COUNT(*) AS n FROM ...t;
SELECT x.id FROM ..t AS x JOIN master.dbo.t AS y ON y.id = x.id ORDER BY x.id;
DELETE FROM master..t WHERE id = 1;
SELECT OBJECT_ID('..t') - OBJECT_ID('dbo.t') AS same, OBJECT_ID('nodb.dbo.t') AS missing_db;
GO
CREATE PROCEDURE dbo.p AS SELECT COUNT(*) AS n FROM ..t;
GO
EXEC ..p;
EXEC .dbo.p;
EXEC master..p;
GO
SELECT * FROM nodb.dbo.t;
GO
SELECT * FROM nodb..t;
GO
INSERT INTO nodb.dbo.t VALUES (3);
GO
EXEC nodb.dbo.p;
GO
DROP TABLE nodb.dbo.t;
GO
USE nodb;
GO
