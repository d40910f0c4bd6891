-- DROP COLUMN leaves a gap in sys.columns.column_id (SQL Server never renumbers); an
-- added column gets max_column_id_used + 1, even when the dropped column was the last.
CREATE TABLE p (id int PRIMARY KEY, junk int NULL, code varchar(10) NOT NULL UNIQUE);
CREATE TABLE t (
  a int NOT NULL,
  b int NULL,
  c int IDENTITY(1, 1),
  d varchar(10) NULL,
  e varchar(10) NULL,
  pid int NULL,
  CONSTRAINT pk_t PRIMARY KEY (a),
  CONSTRAINT fk_t_p FOREIGN KEY (pid) REFERENCES p (id)
);
CREATE INDEX ix_d ON t (d) INCLUDE (e);
INSERT p (id, code) VALUES (1, 'one'), (2, 'two');
INSERT t (a, b, d, e, pid) VALUES (1, 10, 'x', 'ex', 1), (2, 20, 'y', 'ey', 2);
GO
ALTER TABLE t DROP COLUMN b;
GO
SELECT CAST(name AS varchar(10)) AS name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id;
SELECT max_column_id_used FROM sys.tables WHERE name = 't';
GO
-- Keys, indexes, the identity and the foreign key still find their columns.
INSERT t (a, d, e, pid) VALUES (3, 'z', 'ez', 1);
SELECT a, c, d, e, pid FROM t ORDER BY a;
SELECT a FROM t WHERE d = 'z';
SELECT CAST(i.name AS varchar(10)) AS ix, ic.key_ordinal, ic.is_included_column, ic.column_id
FROM sys.indexes AS i JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
WHERE i.object_id = OBJECT_ID('t') ORDER BY i.index_id, ic.index_column_id;
SELECT CAST(name AS varchar(10)) AS fk FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('t');
SELECT parent_column_id, referenced_column_id FROM sys.foreign_key_columns WHERE parent_object_id = OBJECT_ID('t');
GO
INSERT t (a, d, pid) VALUES (4, 'w', 99);
GO
-- Drop the last column, then add one: the new column does not reuse its id.
ALTER TABLE t DROP CONSTRAINT fk_t_p;
ALTER TABLE t DROP COLUMN pid;
ALTER TABLE t ADD f int NULL;
GO
SELECT CAST(name AS varchar(10)) AS name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('t') ORDER BY column_id;
SELECT max_column_id_used FROM sys.tables WHERE name = 't';
SELECT a, c, d, e, f FROM t ORDER BY a;
GO
-- A column referenced by another table's foreign key keeps working after a column
-- before it is dropped.
CREATE TABLE ch (id int PRIMARY KEY, code varchar(10) REFERENCES p (code));
INSERT ch VALUES (1, 'one');
ALTER TABLE p DROP COLUMN junk;
GO
INSERT ch VALUES (2, 'two');
INSERT ch VALUES (3, 'three');
GO
SELECT id, code FROM ch ORDER BY id;
SELECT CAST(name AS varchar(10)) AS name, column_id FROM sys.columns WHERE object_id = OBJECT_ID('p') ORDER BY column_id;
GO
-- ALTER TABLE ADD reads column options as CREATE TABLE does: IDENTITY, DEFAULT, CHECK,
-- and a column-level PRIMARY KEY makes the column NOT NULL.
CREATE TABLE k (a int NULL);
ALTER TABLE k ADD id int IDENTITY(5, 5) CONSTRAINT pk_k PRIMARY KEY, tag varchar(5) NULL CONSTRAINT ck_k CHECK (tag <> 'bad');
GO
INSERT k (a, tag) VALUES (1, 'ok');
INSERT k (a, tag) VALUES (2, 'bad');
SELECT a, id, tag FROM k;
SELECT CAST(name AS varchar(10)) AS name, column_id, is_nullable, is_identity FROM sys.columns WHERE object_id = OBJECT_ID('k') ORDER BY column_id;
GO
CREATE TABLE k2 (a int NULL);
ALTER TABLE k2 ADD id int CONSTRAINT pk_k2 PRIMARY KEY;
GO
SELECT CAST(name AS varchar(10)) AS name, is_nullable FROM sys.columns WHERE object_id = OBJECT_ID('k2') ORDER BY column_id;
GO
