-- A view WITH CHECK OPTION refuses INSERTs and UPDATEs through it whose rows it would
-- not show (550); a view without it accepts them.
SET NOCOUNT ON;
CREATE TABLE dbo.staff (id int PRIMARY KEY, dept varchar(10), salary int);
GO
CREATE VIEW dbo.sales_staff AS SELECT id, dept, salary FROM dbo.staff WHERE dept = 'sales' WITH CHECK OPTION;
GO
CREATE VIEW dbo.paid_staff AS SELECT s.id, s.dept, s.salary FROM dbo.staff AS s WHERE s.salary > 0;
GO
INSERT dbo.sales_staff VALUES (1, 'sales', 10);
INSERT dbo.sales_staff VALUES (2, 'hr', 10);
INSERT dbo.sales_staff VALUES (3, NULL, 10);
GO
UPDATE dbo.sales_staff SET dept = 'hr' WHERE id = 1;
UPDATE dbo.sales_staff SET salary = 20 WHERE id = 1;
GO
-- Several rows: one that fails fails the statement, which changes nothing.
INSERT dbo.sales_staff SELECT 10, 'sales', 1 UNION ALL SELECT 11, 'hr', 1;
GO
INSERT dbo.paid_staff VALUES (4, 'hr', -5);
SELECT id, dept, salary FROM dbo.staff ORDER BY id;
SELECT name, with_check_option
FROM sys.views WHERE name = 'sales_staff';
GO
DROP VIEW dbo.sales_staff, dbo.paid_staff;
DROP TABLE dbo.staff;
GO
