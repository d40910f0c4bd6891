-- OUTPUT: inserted and deleted values from INSERT, UPDATE and DELETE, and OUTPUT INTO a table variable.
SET NOCOUNT ON;
CREATE TABLE dbo.acct (id int IDENTITY(1, 1) NOT NULL PRIMARY KEY, owner varchar(10) NOT NULL, balance int NOT NULL);
GO
INSERT INTO dbo.acct (owner, balance) OUTPUT inserted.id, inserted.owner VALUES ('ann', 100), ('bob', 50);
GO
UPDATE dbo.acct SET balance = balance - 30 OUTPUT deleted.balance AS old_balance, inserted.balance AS new_balance WHERE owner = 'ann';
GO
DECLARE @gone TABLE (id int NOT NULL, owner varchar(10) NOT NULL);
DELETE FROM dbo.acct OUTPUT deleted.id, deleted.owner INTO @gone WHERE balance < 60;
SELECT id, owner FROM @gone;
SELECT COUNT(*) AS remaining FROM dbo.acct;
GO
