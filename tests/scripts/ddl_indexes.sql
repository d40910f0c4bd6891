-- Nonclustered and unique indexes: lookups, duplicate keys in a unique index (2601), DROP INDEX, duplicate names.
SET NOCOUNT ON;
CREATE TABLE dbo.people (id int NOT NULL CONSTRAINT PK_people PRIMARY KEY, email varchar(30) NOT NULL, city varchar(12) NULL);
CREATE INDEX IX_people_city ON dbo.people (city);
CREATE UNIQUE INDEX UX_people_email ON dbo.people (email);
INSERT INTO dbo.people VALUES (1, 'ann@example.com', 'Oslo'), (2, 'bob@example.com', 'Lima'), (3, 'cy@example.com', NULL);
GO
INSERT INTO dbo.people VALUES (4, 'bob@example.com', 'Rome');
GO
SELECT id, email FROM dbo.people WHERE city = 'Lima';
SELECT id FROM dbo.people WHERE city IS NULL;
GO
DROP INDEX UX_people_email ON dbo.people;
INSERT INTO dbo.people VALUES (4, 'bob@example.com', 'Rome');
SELECT COUNT(*) AS bobs FROM dbo.people WHERE email = 'BOB@example.com';
GO
CREATE INDEX IX_people_city ON dbo.people (city);
GO
