-- The referential actions a FOREIGN KEY may have, checked at CREATE TABLE and ALTER TABLE
-- ADD as SQL Server does, each error followed by 1750 and nothing created:
-- SET NULL needs nullable referencing columns (1761), SET DEFAULT a default for each one
-- that is not nullable (1762), and the cascades (CASCADE, SET NULL, SET DEFAULT) one
-- DELETE or one UPDATE starts must form a tree: no cycle, a table referencing itself
-- included, and no second path to a table (1785).
SET NOCOUNT ON;
CREATE TABLE dbo.p (id int PRIMARY KEY);
CREATE TABLE dbo.q (id int PRIMARY KEY);
GO
-- 1761 / 1762.
CREATE TABLE dbo.c1 (id int PRIMARY KEY, pid int NOT NULL CONSTRAINT fk_c1 REFERENCES dbo.p (id) ON DELETE SET NULL);
GO
CREATE TABLE dbo.c1 (id int PRIMARY KEY, pid int NOT NULL CONSTRAINT fk_c1 REFERENCES dbo.p (id) ON UPDATE SET DEFAULT);
GO
SELECT OBJECT_ID('dbo.c1') AS c1;
-- A nullable column, or one with a default, is fine.
CREATE TABLE dbo.c1 (
    id int PRIMARY KEY,
    a int NULL CONSTRAINT fk_c1_a REFERENCES dbo.p (id) ON DELETE SET NULL ON UPDATE SET DEFAULT,
    b int NOT NULL CONSTRAINT df_c1_b DEFAULT 0);
ALTER TABLE dbo.c1 ADD CONSTRAINT fk_c1_b FOREIGN KEY (b) REFERENCES dbo.q (id) ON DELETE SET NULL;
GO
ALTER TABLE dbo.c1 ADD CONSTRAINT fk_c1_b FOREIGN KEY (b) REFERENCES dbo.q (id) ON UPDATE SET DEFAULT;
SELECT name, delete_referential_action_desc, update_referential_action_desc
FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('dbo.c1') ORDER BY name;
GO
-- A table referencing itself with a cascading action: 1785, whatever the action.
CREATE TABLE dbo.tree (id int PRIMARY KEY, parent int CONSTRAINT fk_tree REFERENCES dbo.tree (id) ON DELETE CASCADE);
GO
CREATE TABLE dbo.tree (id int PRIMARY KEY, parent int CONSTRAINT fk_tree REFERENCES dbo.tree (id) ON UPDATE SET NULL);
GO
SELECT OBJECT_ID('dbo.tree') AS tree;
-- NO ACTION is fine (and then ALTER TABLE cannot add a cascading one either).
CREATE TABLE dbo.tree (id int PRIMARY KEY, parent int CONSTRAINT fk_tree REFERENCES dbo.tree (id));
GO
ALTER TABLE dbo.tree ADD CONSTRAINT fk_tree_2 FOREIGN KEY (parent) REFERENCES dbo.tree (id) ON DELETE SET DEFAULT;
GO
SELECT name FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('dbo.tree') ORDER BY name;
GO
-- Two cascading foreign keys from one table to another: two paths. One of them NO
-- ACTION is fine.
CREATE TABLE dbo.route (
    id int PRIMARY KEY,
    from_p int CONSTRAINT fk_route_from REFERENCES dbo.p (id) ON DELETE CASCADE,
    to_p int CONSTRAINT fk_route_to REFERENCES dbo.p (id) ON DELETE SET NULL);
GO
CREATE TABLE dbo.route (
    id int PRIMARY KEY,
    from_p int CONSTRAINT fk_route_from REFERENCES dbo.p (id) ON DELETE CASCADE,
    to_p int CONSTRAINT fk_route_to REFERENCES dbo.p (id));
SELECT name FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('dbo.route') ORDER BY name;
GO
-- A diamond: p -> a -> d and p -> b -> d. The second path to d is refused, in CREATE
-- TABLE or in ALTER TABLE.
CREATE TABLE dbo.a (id int PRIMARY KEY, p int CONSTRAINT fk_a_p REFERENCES dbo.p (id) ON DELETE CASCADE);
CREATE TABLE dbo.b (id int PRIMARY KEY, p int CONSTRAINT fk_b_p REFERENCES dbo.p (id) ON DELETE CASCADE);
CREATE TABLE dbo.d (
    id int PRIMARY KEY,
    a int CONSTRAINT fk_d_a REFERENCES dbo.a (id) ON DELETE CASCADE,
    b int CONSTRAINT fk_d_b REFERENCES dbo.b (id) ON DELETE CASCADE);
GO
SELECT OBJECT_ID('dbo.d') AS d;
CREATE TABLE dbo.d (
    id int PRIMARY KEY,
    a int CONSTRAINT fk_d_a REFERENCES dbo.a (id) ON DELETE CASCADE,
    b int CONSTRAINT fk_d_b REFERENCES dbo.b (id));
GO
ALTER TABLE dbo.d DROP CONSTRAINT fk_d_b;
ALTER TABLE dbo.d ADD CONSTRAINT fk_d_b FOREIGN KEY (b) REFERENCES dbo.b (id) ON DELETE SET NULL;
GO
-- A path further up counts too: e under d, reached again from b.
CREATE TABLE dbo.e (
    id int PRIMARY KEY,
    d int CONSTRAINT fk_e_d REFERENCES dbo.d (id) ON DELETE CASCADE,
    b int CONSTRAINT fk_e_b REFERENCES dbo.b (id) ON DELETE CASCADE);
GO
SELECT OBJECT_ID('dbo.e') AS e;
-- The DELETE and the UPDATE trees are separate: ON UPDATE CASCADE from b to d does not
-- add a second path to d for a DELETE of p (nothing cascades an UPDATE of b).
ALTER TABLE dbo.d ADD CONSTRAINT fk_d_b FOREIGN KEY (b) REFERENCES dbo.b (id) ON UPDATE CASCADE;
SELECT name, delete_referential_action_desc, update_referential_action_desc
FROM sys.foreign_keys WHERE parent_object_id = OBJECT_ID('dbo.d') ORDER BY name;
GO
-- A cycle of two tables, closed by ALTER TABLE. Closed by an UPDATE action instead, it
-- is no cycle: y's foreign key cascades only a DELETE of x.
CREATE TABLE dbo.x (id int PRIMARY KEY, y int);
CREATE TABLE dbo.y (id int PRIMARY KEY, x int CONSTRAINT fk_y_x REFERENCES dbo.x (id) ON DELETE CASCADE);
ALTER TABLE dbo.x ADD CONSTRAINT fk_x_y FOREIGN KEY (y) REFERENCES dbo.y (id) ON DELETE CASCADE;
GO
ALTER TABLE dbo.x ADD CONSTRAINT fk_x_y FOREIGN KEY (y) REFERENCES dbo.y (id) ON UPDATE CASCADE;
SELECT name, delete_referential_action_desc, update_referential_action_desc
FROM sys.foreign_keys WHERE name IN ('fk_x_y', 'fk_y_x') ORDER BY name;
GO
-- Inside a transaction the failed ALTER TABLE leaves the transaction open.
BEGIN TRAN;
ALTER TABLE dbo.a ADD CONSTRAINT fk_a_self FOREIGN KEY (p) REFERENCES dbo.a (id) ON DELETE CASCADE;
SELECT @@TRANCOUNT AS trancount, XACT_STATE() AS xact_state;
ROLLBACK;
GO
