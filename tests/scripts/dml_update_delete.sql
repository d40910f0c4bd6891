-- UPDATE and DELETE: plain, with a join in FROM, with TOP, with subqueries; the row counts each reports.
CREATE TABLE dbo.emp (id int NOT NULL PRIMARY KEY, dept int NOT NULL, salary int NOT NULL);
CREATE TABLE dbo.dept (id int NOT NULL PRIMARY KEY, name varchar(10) NOT NULL, raise int NOT NULL);
GO
INSERT INTO dbo.dept VALUES (1, 'eng', 10), (2, 'ops', 5), (3, 'hr', 0);
INSERT INTO dbo.emp VALUES (1, 1, 100), (2, 1, 120), (3, 2, 90), (4, 3, 80), (5, 2, 95);
GO
UPDATE dbo.emp SET salary = salary + 1 WHERE id = 1;
UPDATE e SET salary = e.salary + d.raise FROM dbo.emp AS e JOIN dbo.dept AS d ON d.id = e.dept WHERE d.raise > 0;
UPDATE TOP (1) dbo.emp SET salary = 0 WHERE dept = 3;
UPDATE dbo.emp SET salary = salary WHERE 1 = 0;
GO
SELECT id, dept, salary FROM dbo.emp ORDER BY id;
GO
DELETE e FROM dbo.emp AS e JOIN dbo.dept AS d ON d.id = e.dept WHERE d.name = 'ops';
DELETE TOP (1) FROM dbo.emp WHERE salary = 0;
DELETE FROM dbo.emp WHERE salary > (SELECT AVG(salary) FROM dbo.emp);
GO
SELECT id, dept, salary FROM dbo.emp ORDER BY id;
GO
