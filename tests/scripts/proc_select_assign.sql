-- SELECT @v = expr FROM ...: assigned once per row, in order; each item is computed just
-- before its assignment, so it sees what earlier rows and earlier items of the same row
-- assigned (the list-building idiom), with ORDER BY and TOP too.
CREATE TABLE dbo.names (id int PRIMARY KEY, name varchar(10) NOT NULL, grp int NOT NULL);
INSERT dbo.names VALUES (1, 'delta', 1), (2, 'alpha', 2), (3, 'charlie', 1), (4, 'bravo', 2);
GO
DECLARE @list varchar(100) = '', @n int = 0;
SELECT @list = @list + name + ',', @n = @n + 1 FROM dbo.names;
SELECT @list AS in_key_order, @n AS n;
SET @list = ''; SET @n = 0;
SELECT @list = @list + name + ',', @n = @n + 1 FROM dbo.names ORDER BY name;
SELECT @list AS by_name, @n AS n;
SET @list = '';
SELECT @list = @list + name + ',' FROM dbo.names ORDER BY grp DESC, id;
SELECT @list AS by_grp_then_id;
SET @list = '';
SELECT TOP (2) @list = @list + name + ',' FROM dbo.names ORDER BY name DESC;
SELECT @list AS top_two;
-- Items of one row assign left to right.
DECLARE @a int = 0, @b int = 0;
SELECT @a = @a + id, @b = @a * 10 FROM dbo.names ORDER BY id;
SELECT @a AS a, @b AS b;
-- No rows: the variables keep their values; @@ROWCOUNT counts the rows assigned from.
SET @list = 'kept';
SELECT @list = name FROM dbo.names WHERE id > 10 ORDER BY name;
SELECT @list AS unchanged, @@ROWCOUNT AS rc;
SELECT @list = name FROM dbo.names ORDER BY name;
SELECT @list AS last_by_name, @@ROWCOUNT AS rc;
GO
