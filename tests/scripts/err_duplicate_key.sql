-- Msg 2627 (PRIMARY KEY and UNIQUE constraints) and 2601 (unique index): the statement fails whole, the batch goes on.
SET NOCOUNT ON;
CREATE TABLE dbo.u (id int NOT NULL CONSTRAINT PK_u PRIMARY KEY, code char(3) NOT NULL CONSTRAINT UQ_u_code UNIQUE, tag varchar(10) NOT NULL);
CREATE UNIQUE INDEX UX_u_tag ON dbo.u (tag);
INSERT INTO dbo.u VALUES (1, 'AAA', 'red'), (2, 'BBB', 'green');
GO
INSERT INTO dbo.u VALUES (1, 'CCC', 'blue');
PRINT 'the batch continues';
INSERT INTO dbo.u VALUES (3, 'aaa', 'blue');
INSERT INTO dbo.u VALUES (4, 'DDD', 'RED');
INSERT INTO dbo.u VALUES (5, 'EEE', 'white');
UPDATE dbo.u SET id = 2 WHERE id = 5;
INSERT INTO dbo.u VALUES (6, 'FFF', 'blue'), (7, 'GGG', 'blue');
SELECT id, code, tag FROM dbo.u ORDER BY id;
GO
