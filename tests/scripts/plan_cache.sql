-- Simple parameterization: a batch that is one simple SELECT (columns of one table,
-- comparisons of columns with literals joined by AND) is planned once per shape and run
-- again with other literal values. Each batch below must give what the same text gives
-- when planned afresh.
CREATE TABLE pc (id int PRIMARY KEY, name varchar(10), amount decimal(5, 2));
INSERT INTO pc VALUES (1, 'one', 1.50), (2, 'two', 2.25), (3, 'three', 3.00);
GO
SELECT name FROM pc WHERE id = 1
GO
SELECT name FROM pc WHERE id = 2
GO
SELECT name FROM pc WHERE id = 4
GO
-- A bigint literal has another type: another plan.
SELECT name FROM pc WHERE id = 3000000000
GO
SELECT id FROM pc WHERE name = 'two'
GO
SELECT id FROM pc WHERE name = N'three'
GO
SELECT id, name FROM pc WHERE 2.25 <= amount AND id <> 3
GO
SELECT id, name FROM pc WHERE 1.5 <= amount AND id <> 2
GO
-- Run-time conversion errors are those of the literal form, every time.
CREATE TABLE pcn (id int PRIMARY KEY, n int);
INSERT INTO pcn VALUES (1, 10), (2, 20);
GO
SELECT id FROM pcn WHERE n = 'x'
GO
SELECT id FROM pcn WHERE n = 'y'
GO
SELECT id FROM pcn WHERE n = '20'
GO
-- A parameter keeps the text's lines.
SELECT id
FROM pcn
WHERE n = 'z' AND id = 2
GO
-- A schema change retires the kept plans of the table.
ALTER TABLE pc ADD extra int NULL
GO
SELECT * FROM pc WHERE id = 1
GO
DROP TABLE pc
GO
SELECT name FROM pc WHERE id = 1
GO
CREATE TABLE pc (id varchar(5) PRIMARY KEY, name int);
INSERT INTO pc VALUES ('1', 10), ('2', 20);
GO
SELECT name FROM pc WHERE id = 1
GO
SELECT name FROM pc WHERE id = '2'
GO
SELECT * FROM pc WHERE id = '1'
GO
-- Another database: the same text names another table.
CREATE DATABASE pcdb
GO
USE pcdb
CREATE TABLE pc (id varchar(5) PRIMARY KEY, name int);
INSERT INTO pc VALUES ('2', 200);
GO
SELECT name FROM pc WHERE id = '2'
GO
USE master
GO
SELECT name FROM pc WHERE id = '2'
GO
-- Permissions are checked on every run: a kept plan does not let a login without
-- SELECT read the table.
CREATE LOGIN pc_writer WITH PASSWORD = 'Writer#2024';
CREATE USER pc_writer;
GRANT INSERT ON dbo.pc TO pc_writer;
GO
SELECT name FROM pc WHERE id = '1'
GO
EXECUTE AS LOGIN = 'pc_writer';
GO
SELECT name FROM pc WHERE id = '2'
GO
REVERT;
GO
SELECT name FROM pc WHERE id = '2'
GO
DROP USER pc_writer;
DROP LOGIN pc_writer;
DROP TABLE pc;
DROP TABLE pcn;
DROP DATABASE pcdb;
