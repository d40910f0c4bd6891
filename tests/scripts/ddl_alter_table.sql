-- ALTER TABLE: ADD columns and constraints, DROP COLUMN / CONSTRAINT, ALTER COLUMN; existing rows rewritten, dependency and data errors.
SET NOCOUNT ON;
CREATE TABLE dbo.emp (id int NOT NULL CONSTRAINT PK_emp PRIMARY KEY, name varchar(10) NOT NULL, salary int NULL);
INSERT INTO dbo.emp VALUES (1, 'ann', 100), (2, 'bob', NULL), (3, 'cid', 300);
GO
ALTER TABLE dbo.emp ADD dept varchar(5) NULL;
ALTER TABLE dbo.emp ADD active bit NOT NULL CONSTRAINT DF_emp_active DEFAULT (1),
    grade int NULL CONSTRAINT DF_emp_grade DEFAULT (7) WITH VALUES,
    note varchar(5) NULL CONSTRAINT DF_emp_note DEFAULT ('x');
ALTER TABLE dbo.emp ADD seq int IDENTITY(10, 5);
ALTER TABLE dbo.emp ADD double_salary AS salary * 2;
SELECT id, name, salary, dept, active, grade, note, seq, double_salary FROM dbo.emp ORDER BY id;
INSERT INTO dbo.emp (id, name) VALUES (4, 'dee');
SELECT id, active, grade, note, seq FROM dbo.emp WHERE id = 4;
GO
ALTER TABLE dbo.emp ADD name int;
GO
ALTER TABLE dbo.emp ADD must int NOT NULL;
GO
ALTER TABLE dbo.emp ADD CONSTRAINT CK_emp_salary CHECK (salary > 150);
GO
ALTER TABLE dbo.emp WITH NOCHECK ADD CONSTRAINT CK_emp_salary CHECK (salary > 150);
INSERT INTO dbo.emp (id, name, salary) VALUES (5, 'eve', 10);
ALTER TABLE dbo.emp DROP CONSTRAINT CK_emp_salary;
INSERT INTO dbo.emp (id, name, salary) VALUES (5, 'eve', 10);
GO
ALTER TABLE dbo.emp DROP CONSTRAINT CK_nope;
GO
ALTER TABLE dbo.emp ADD CONSTRAINT UQ_emp_grade UNIQUE (grade);
GO
ALTER TABLE dbo.emp ADD CONSTRAINT UQ_emp_name UNIQUE (name);
INSERT INTO dbo.emp (id, name) VALUES (6, 'ann');
GO
ALTER TABLE dbo.emp DROP COLUMN note;
GO
ALTER TABLE dbo.emp DROP CONSTRAINT DF_emp_note, COLUMN note;
ALTER TABLE dbo.emp DROP COLUMN name;
GO
ALTER TABLE dbo.emp DROP COLUMN salary;
GO
ALTER TABLE dbo.emp DROP COLUMN double_salary, dept;
ALTER TABLE dbo.emp DROP COLUMN nope;
GO
ALTER TABLE dbo.emp DROP COLUMN IF EXISTS nope;
SELECT * FROM dbo.emp ORDER BY id;
SELECT name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('dbo.emp') ORDER BY column_id;
GO
CREATE TABLE dbo.codes (code varchar(10) NULL, amount varchar(12) NULL, flag int NULL);
CREATE INDEX ix_codes_code ON dbo.codes (code);
INSERT INTO dbo.codes VALUES ('aa', '12', 1), ('bbbbbb', '7.5', NULL), (NULL, NULL, 0);
ALTER TABLE dbo.codes ALTER COLUMN code varchar(20) NULL;
ALTER TABLE dbo.codes ALTER COLUMN amount decimal(6, 2);
ALTER TABLE dbo.codes ALTER COLUMN flag bigint;
SELECT code, amount, flag FROM dbo.codes ORDER BY code;
SELECT c.name, t.name AS type_name, c.max_length, c.precision, c.scale, c.is_nullable
FROM sys.columns AS c JOIN sys.types AS t ON t.user_type_id = c.user_type_id
WHERE c.object_id = OBJECT_ID('dbo.codes') ORDER BY c.column_id;
GO
ALTER TABLE dbo.codes ALTER COLUMN code varchar(4);
GO
ALTER TABLE dbo.codes ALTER COLUMN code int;
GO
DROP INDEX ix_codes_code ON dbo.codes;
ALTER TABLE dbo.codes ALTER COLUMN code varchar(4);
GO
ALTER TABLE dbo.codes ALTER COLUMN code int;
GO
ALTER TABLE dbo.codes ALTER COLUMN flag bigint NOT NULL;
GO
UPDATE dbo.codes SET flag = 5 WHERE flag IS NULL;
ALTER TABLE dbo.codes ALTER COLUMN flag bigint NOT NULL;
INSERT INTO dbo.codes (code, amount) VALUES ('z', 1);
ALTER TABLE dbo.codes ALTER COLUMN nope int;
GO
SELECT code, amount, flag FROM dbo.codes ORDER BY code;
BEGIN TRAN;
ALTER TABLE dbo.codes ADD extra int NULL;
ALTER TABLE dbo.codes DROP COLUMN amount;
ROLLBACK;
SELECT name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.codes') ORDER BY column_id;
SELECT code, amount, flag FROM dbo.codes ORDER BY code;
GO
CREATE TABLE dbo.parent (note varchar(5) NULL, pid int NOT NULL CONSTRAINT PK_parent PRIMARY KEY, label varchar(5) NULL);
CREATE TABLE dbo.child (cid int NOT NULL, pid int NULL);
INSERT INTO dbo.parent VALUES ('n', 1, 'one'), ('n', 2, 'two');
INSERT INTO dbo.child VALUES (10, 1), (11, 3);
GO
ALTER TABLE dbo.child ADD CONSTRAINT FK_child_parent FOREIGN KEY (pid) REFERENCES dbo.parent (pid);
GO
DELETE FROM dbo.child WHERE cid = 11;
ALTER TABLE dbo.child ADD CONSTRAINT FK_child_parent FOREIGN KEY (pid) REFERENCES dbo.parent (pid);
ALTER TABLE dbo.parent DROP CONSTRAINT PK_parent;
GO
ALTER TABLE dbo.parent DROP COLUMN pid;
GO
ALTER TABLE dbo.child ALTER COLUMN pid bigint;
GO
ALTER TABLE dbo.parent DROP COLUMN note;
SELECT c.name AS referenced FROM sys.foreign_key_columns AS f
JOIN sys.columns AS c ON c.object_id = f.referenced_object_id AND c.column_id = f.referenced_column_id;
INSERT INTO dbo.child VALUES (12, 2);
INSERT INTO dbo.child VALUES (13, 9);
SELECT p.pid, p.label, c.cid FROM dbo.parent AS p JOIN dbo.child AS c ON c.pid = p.pid ORDER BY c.cid;
GO
CREATE TABLE dbo.h (a int NOT NULL, b int NULL);
INSERT INTO dbo.h VALUES (2, 20), (1, 10);
ALTER TABLE dbo.h ADD CONSTRAINT PK_h PRIMARY KEY (b);
GO
ALTER TABLE dbo.h ADD CONSTRAINT PK_h PRIMARY KEY (a);
SELECT index_id, name, type_desc FROM sys.indexes WHERE object_id = OBJECT_ID('dbo.h');
SELECT a, b FROM dbo.h;
INSERT INTO dbo.h VALUES (1, 5);
ALTER TABLE dbo.h ADD CONSTRAINT DF_h_b DEFAULT (0) FOR b;
INSERT INTO dbo.h (a) VALUES (3);
GO
ALTER TABLE dbo.h ADD CONSTRAINT PK_h2 PRIMARY KEY (a);
GO
ALTER TABLE dbo.h ADD CONSTRAINT DF_h_b2 DEFAULT (1) FOR b;
GO
ALTER TABLE dbo.h DROP CONSTRAINT PK_h;
SELECT index_id, type_desc FROM sys.indexes WHERE object_id = OBJECT_ID('dbo.h');
SELECT a, b FROM dbo.h ORDER BY a;
GO
DROP TABLE dbo.child, dbo.parent, dbo.h, dbo.codes, dbo.emp;
GO
