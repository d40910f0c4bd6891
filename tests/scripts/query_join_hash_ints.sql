-- A hash join keeps integer build columns as plain integers (docs/architecture.md,
-- "Hash join"): every integer type, NULLs, the extremes of each type, a build side kept
-- whole (SELECT *) or in part (the projected columns), outer joins that output unmatched
-- build rows, and a residual reading a kept column. The build side is the right input.
CREATE TABLE l (id int PRIMARY KEY, k int, tag varchar(10));
CREATE TABLE r (id int PRIMARY KEY, k int, ti tinyint, si smallint, bi bigint, v varchar(10));
INSERT INTO l VALUES (1, 10, 'a'), (2, 20, 'b'), (3, 30, 'c'), (4, NULL, 'd'), (5, 10, 'e');
INSERT INTO r VALUES
    (100, 10, 0, -32768, -9223372036854775808, 'x'),
    (101, 10, 255, 32767, 9223372036854775807, NULL),
    (102, 30, NULL, NULL, NULL, 'z'),
    (103, 40, 7, -1, 0, 'w'),
    (104, NULL, 1, 2, 3, 'n');
GO
SET SHOWPLAN_TEXT ON;
GO
SELECT l.tag, r.ti, r.si, r.bi FROM l INNER HASH JOIN r ON l.k = r.k;
GO
SET SHOWPLAN_TEXT OFF;
GO
SELECT l.tag, r.id, r.ti, r.si, r.bi FROM l INNER HASH JOIN r ON l.k = r.k ORDER BY l.tag, r.id;
SELECT * FROM l INNER HASH JOIN r ON l.k = r.k ORDER BY l.id, r.id;
SELECT l.tag, r.bi FROM l LEFT HASH JOIN r ON l.k = r.k ORDER BY l.tag, r.bi;
SELECT l.tag, r.id, r.si FROM l RIGHT HASH JOIN r ON l.k = r.k ORDER BY r.id, l.tag;
SELECT l.id, r.id, r.ti FROM l FULL HASH JOIN r ON l.k = r.k ORDER BY r.id, l.id;
SELECT l.tag, r.bi FROM l INNER HASH JOIN r ON l.k = r.k AND r.bi > 0 ORDER BY l.tag;
SELECT l.tag, r.bi + 1 AS next FROM l INNER HASH JOIN r ON l.k = r.k AND r.bi < 0 ORDER BY l.tag;
GO
-- An integer key of another type than the kept columns, built from an expression.
SELECT l.tag, x.s FROM l INNER HASH JOIN (SELECT CAST(k AS bigint) AS k, si + 1 AS s FROM r) x ON l.k = x.k
ORDER BY l.tag, x.s;
GO
