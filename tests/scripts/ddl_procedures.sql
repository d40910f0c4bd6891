-- Stored procedures: parameters by position and by name, defaults, OUTPUT parameters, return codes, ALTER, DROP.
SET NOCOUNT ON;
CREATE TABLE dbo.stock (item varchar(10) NOT NULL PRIMARY KEY, qty int NOT NULL);
INSERT INTO dbo.stock VALUES ('apple', 5), ('pear', 0);
GO
CREATE PROCEDURE dbo.take @item varchar(10), @n int = 1, @left int = NULL OUTPUT
AS
BEGIN
    IF NOT EXISTS (SELECT 1 FROM dbo.stock WHERE item = @item)
        RETURN -1;
    UPDATE dbo.stock SET qty = qty - @n WHERE item = @item AND qty >= @n;
    IF @@ROWCOUNT = 0
        RETURN 1;
    SELECT @left = qty FROM dbo.stock WHERE item = @item;
    RETURN 0;
END
GO
DECLARE @rc int, @left int;
EXEC @rc = dbo.take 'apple', 2, @left OUTPUT;
SELECT @rc AS rc, @left AS qty_left;
EXEC @rc = dbo.take @item = 'apple', @left = @left OUTPUT;
SELECT @rc AS rc, @left AS qty_left;
EXEC @rc = dbo.take 'pear';
SELECT @rc AS rc;
EXEC @rc = dbo.take 'plum';
SELECT @rc AS rc;
GO
ALTER PROCEDURE dbo.take @item varchar(10) AS SELECT item, qty FROM dbo.stock WHERE item = @item;
GO
EXEC dbo.take 'apple';
GO
DROP PROCEDURE dbo.take;
GO
EXEC dbo.take 'apple';
GO
