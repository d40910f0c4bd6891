-- NULL handling: ISNULL, COALESCE, NULLIF, = NULL versus IS NULL, NOT over UNKNOWN; CASE (simple and searched) and IIF.
SET NOCOUNT ON;
CREATE TABLE dbo.n (id int NOT NULL, v int NULL, s varchar(5) NULL);
INSERT INTO dbo.n VALUES (1, 10, 'a'), (2, NULL, NULL), (3, 0, 'c');
GO
SELECT id, ISNULL(v, -1) AS isnull_v, COALESCE(s, CAST(v AS varchar(5)), 'none') AS coalesced, NULLIF(v, 0) AS nullif_v FROM dbo.n ORDER BY id;
SELECT COUNT(*) AS eq_null FROM dbo.n WHERE v = NULL;
SELECT COUNT(*) AS is_null FROM dbo.n WHERE v IS NULL;
SELECT COUNT(*) AS not_ten FROM dbo.n WHERE NOT (v = 10);
SELECT id, CASE v WHEN 10 THEN 'ten' WHEN 0 THEN 'zero' ELSE 'other' END AS simple_case,
    CASE WHEN v > 5 THEN 'big' WHEN v IS NULL THEN 'unknown' END AS searched, IIF(id % 2 = 1, 'odd', 'even') AS parity
FROM dbo.n ORDER BY id;
GO
