-- CREATE/ALTER PROCEDURE, VIEW, FUNCTION, TRIGGER, CREATE SCHEMA, RULE and DEFAULT must
-- start their batch: otherwise the batch fails when it is parsed (111) and nothing of it
-- runs, not even the statements before.
SET NOCOUNT ON;
CREATE TABLE dbo.t (a int);
GO
INSERT INTO dbo.t VALUES (1);
CREATE VIEW dbo.v AS SELECT a FROM dbo.t;
GO
SELECT COUNT(*) AS nothing_ran FROM dbo.t;
GO
PRINT 'before';
CREATE PROCEDURE dbo.p AS SELECT 1;
GO
DECLARE @x int = 1;
ALTER PROCEDURE dbo.p AS SELECT 2;
GO
SELECT 1 AS a;
CREATE OR ALTER FUNCTION dbo.f() RETURNS int AS BEGIN RETURN 1 END;
GO
SELECT 1 AS a;
ALTER FUNCTION dbo.f() RETURNS int AS BEGIN RETURN 1 END;
GO
SELECT 1 AS a;
CREATE TRIGGER dbo.tr ON dbo.t AFTER INSERT AS SELECT 1;
GO
SELECT 1 AS a;
ALTER VIEW dbo.v AS SELECT a FROM dbo.t;
GO
SELECT 1 AS a;
CREATE SCHEMA s2;
GO
SELECT 1 AS a;
CREATE DEFAULT d1 AS 0;
GO
-- First in its batch, they work; a batch may start with comments.
/* a comment */ CREATE SCHEMA s2;
GO
CREATE VIEW dbo.v AS SELECT a FROM dbo.t;
GO
SELECT name FROM sys.objects WHERE name IN ('v', 'p', 'f', 'tr') UNION ALL SELECT name FROM sys.schemas WHERE name = 's2';
GO
