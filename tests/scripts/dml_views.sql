-- INSERT, UPDATE and DELETE through simple views: one base table, renamed columns, the
-- view's WHERE limiting UPDATE and DELETE to the rows the view shows.
CREATE TABLE dbo.staff (id int PRIMARY KEY, name varchar(20) NOT NULL, dept varchar(10) NOT NULL, salary int NULL);
INSERT INTO dbo.staff VALUES (1, 'Ann', 'ops', 100), (2, 'Bob', 'dev', 200), (3, 'Cy', 'dev', 300);
GO
CREATE VIEW dbo.devs AS SELECT id AS staff_id, name, salary FROM dbo.staff AS s WHERE s.dept = 'dev';
GO
CREATE VIEW dbo.payroll (who, yearly) AS SELECT name, salary * 12 FROM dbo.staff;
GO
CREATE VIEW dbo.by_dept AS SELECT dept, COUNT(*) AS n FROM dbo.staff GROUP BY dept;
GO
UPDATE dbo.devs SET salary = salary + 1;
SELECT id, salary FROM dbo.staff ORDER BY id;
UPDATE dbo.devs SET name = 'Bobby' WHERE staff_id = 2;
DELETE FROM dbo.devs WHERE salary > 300;
DELETE FROM dbo.devs WHERE name = 'Ann';
SELECT * FROM dbo.staff ORDER BY id;
INSERT INTO dbo.devs (staff_id, name, salary) VALUES (4, 'Di', 50);
SELECT * FROM dbo.staff ORDER BY id;
GO
UPDATE dbo.payroll SET yearly = 0;
GO
UPDATE dbo.payroll SET who = 'X' WHERE who = 'Di';
SELECT name FROM dbo.staff ORDER BY id;
GO
DELETE FROM dbo.by_dept;
GO
