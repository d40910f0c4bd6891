-- Window functions: ROW_NUMBER, RANK, DENSE_RANK, NTILE, aggregates OVER (PARTITION BY), running sums, LAG and LEAD.
SET NOCOUNT ON;
CREATE TABLE dbo.score (name varchar(6) NOT NULL, team char(1) NOT NULL, pts int NOT NULL);
INSERT INTO dbo.score VALUES ('ann', 'a', 30), ('bob', 'a', 20), ('cy', 'a', 20), ('dee', 'b', 50), ('eve', 'b', 10);
GO
SELECT name, pts,
    ROW_NUMBER() OVER (ORDER BY pts DESC, name) AS rn,
    RANK() OVER (ORDER BY pts DESC) AS rnk,
    DENSE_RANK() OVER (ORDER BY pts DESC) AS drnk
FROM dbo.score ORDER BY rn;
SELECT name, team, pts, SUM(pts) OVER (PARTITION BY team) AS team_total, COUNT(*) OVER () AS everyone
FROM dbo.score ORDER BY team, name;
SELECT name, pts, SUM(pts) OVER (ORDER BY name ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
FROM dbo.score ORDER BY name;
SELECT name, LAG(pts) OVER (PARTITION BY team ORDER BY name) AS prev_pts, LEAD(pts, 1, 0) OVER (PARTITION BY team ORDER BY name) AS next_pts
FROM dbo.score ORDER BY team, name;
SELECT name, NTILE(2) OVER (ORDER BY name) AS half FROM dbo.score ORDER BY name;
GO
