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
-- Inside IF/ELSE/WHILE/BEGIN...END/TRY or a procedure's body there is no place for them
-- in SQL Server's grammar: 156 at the object's keyword, as written (not 111); the batch
-- does not run.
IF 1 = 1 CREATE VIEW dbo.v2 AS SELECT 1 AS a;
GO
IF 1 = 0 PRINT 'no'; ELSE create procedure dbo.p2 AS SELECT 1;
GO
WHILE 1 = 0 CREATE FUNCTION dbo.f2() RETURNS int AS BEGIN RETURN 1 END;
GO
BEGIN
    CREATE TRIGGER dbo.tr2 ON dbo.t AFTER INSERT AS SELECT 1;
END
GO
BEGIN TRY
    ALTER VIEW dbo.v AS SELECT a FROM dbo.t;
END TRY
BEGIN CATCH
END CATCH
GO
IF OBJECT_ID('dbo.v2') IS NULL CREATE OR ALTER PROC dbo.p2 AS SELECT 1;
GO
IF SCHEMA_ID('s3') IS NULL CREATE SCHEMA s3;
GO
CREATE PROCEDURE dbo.p3 AS
BEGIN
    CREATE VIEW dbo.v3 AS SELECT 1 AS a;
END
GO
SELECT COUNT(*) AS none_created FROM sys.objects WHERE name IN ('v2', 'p2', 'f2', 'tr2', 'p3', 'v3');
SELECT COUNT(*) AS no_schema FROM sys.schemas WHERE name = 's3';
GO
