-- INSERT: VALUES with one and many rows, column lists, DEFAULT VALUES, DEFAULT, INSERT ... SELECT, identity values.
CREATE TABLE dbo.t (id int IDENTITY(10, 5) NOT NULL PRIMARY KEY, name varchar(10) NOT NULL DEFAULT 'none', n int NULL);
CREATE TABLE dbo.src (name varchar(10) NOT NULL, n int NOT NULL);
GO
INSERT INTO dbo.t (name, n) VALUES ('a', 1);
INSERT dbo.t (name, n) VALUES ('b', 2), ('c', 3);
INSERT INTO dbo.t DEFAULT VALUES;
INSERT INTO dbo.t (name, n) VALUES (DEFAULT, 4);
INSERT INTO dbo.t (n) VALUES (NULL);
GO
INSERT INTO dbo.src VALUES ('x', 100), ('y', 200), ('z', 300);
INSERT INTO dbo.t (name, n) SELECT name, n FROM dbo.src WHERE n > 100 ORDER BY n;
INSERT INTO dbo.t (name, n) SELECT name, n FROM dbo.src WHERE n > 1000;
GO
SELECT id, name, n FROM dbo.t ORDER BY id;
SELECT @@ROWCOUNT AS last_count;
GO
INSERT INTO dbo.t (id, name) VALUES (1, 'x');
GO
INSERT INTO dbo.t (name, n) VALUES ('d');
GO
