-- Sequence objects: CREATE/ALTER/DROP SEQUENCE with their options, NEXT VALUE FOR in
-- queries, variables and column defaults, sp_sequence_get_range, sys.sequences, and the
-- 117xx errors.
SET NOCOUNT ON;
GO
CREATE SEQUENCE dbo.order_no AS int START WITH 100 INCREMENT BY 10 MINVALUE 100 MAXVALUE 130 NO CYCLE CACHE 5;
GO
SELECT NEXT VALUE FOR dbo.order_no AS first_value;
DECLARE @n int = NEXT VALUE FOR order_no;
SELECT @n AS into_variable;
GO
-- A default draws one value per row.
CREATE TABLE dbo.orders (id int PRIMARY KEY DEFAULT NEXT VALUE FOR dbo.order_no, item varchar(10));
INSERT dbo.orders (item) VALUES ('a'), ('b');
SELECT id, item FROM dbo.orders ORDER BY id;
GO
-- Exhausted: 11728; a value drawn is never given back, even by a rollback.
SELECT NEXT VALUE FOR dbo.order_no AS past_the_end;
GO
SELECT name, start_value, increment, minimum_value, maximum_value, is_cycling, is_cached, cache_size,
    current_value, is_exhausted, last_used_value
FROM sys.sequences WHERE name = 'order_no';
GO
ALTER SEQUENCE dbo.order_no RESTART WITH 110 MAXVALUE 1000;
BEGIN TRANSACTION;
SELECT NEXT VALUE FOR dbo.order_no AS in_transaction;
ROLLBACK;
SELECT NEXT VALUE FOR dbo.order_no AS after_rollback;
GO
-- A sequence a default uses cannot be dropped (3729).
DROP SEQUENCE dbo.order_no;
GO
DROP TABLE dbo.orders;
DROP SEQUENCE dbo.order_no;
SELECT COUNT(*) AS sequences_left FROM sys.sequences;
GO
-- Defaults: bigint from its minimum; a negative increment starts at the maximum; CYCLE
-- goes round.
CREATE SEQUENCE dbo.plain;
CREATE SEQUENCE dbo.countdown AS smallint INCREMENT BY -1 MINVALUE 1 MAXVALUE 2 CYCLE NO CACHE;
GO
SELECT NEXT VALUE FOR dbo.plain AS plain_first;
SELECT NEXT VALUE FOR dbo.countdown AS c1;
SELECT NEXT VALUE FOR dbo.countdown AS c2;
SELECT NEXT VALUE FOR dbo.countdown AS c3;
SELECT name, TYPE_NAME(system_type_id) AS type_name, precision, is_cached, cache_size
FROM sys.sequences ORDER BY name;
GO
-- sp_sequence_get_range reserves several values at once.
CREATE SEQUENCE dbo.ranged AS smallint START WITH 1;
GO
DECLARE @first sql_variant, @last sql_variant, @cycles int;
EXEC sp_sequence_get_range @sequence_name = N'dbo.ranged', @range_size = 5,
    @range_first_value = @first OUTPUT, @range_last_value = @last OUTPUT, @range_cycle_count = @cycles OUTPUT;
SELECT CAST(@first AS int) AS range_first, CAST(@last AS int) AS range_last, @cycles AS cycles,
    NEXT VALUE FOR dbo.ranged AS next_after_range;
GO
EXEC sp_sequence_get_range @sequence_name = N'dbo.ranged', @range_size = 0;
GO
EXEC sp_sequence_get_range @sequence_name = N'dbo.ranged', @range_size = 40000;
GO
-- OVER (ORDER BY ...): the rows take their values in that order, whatever order they
-- come out in.
CREATE SEQUENCE dbo.ordered START WITH 1;
CREATE TABLE dbo.letters (letter char(1));
INSERT dbo.letters VALUES ('c'), ('a'), ('b');
GO
SELECT letter, NEXT VALUE FOR dbo.ordered OVER (ORDER BY letter) AS n FROM dbo.letters ORDER BY letter DESC;
SELECT letter, NEXT VALUE FOR dbo.ordered OVER (ORDER BY letter DESC) AS n FROM dbo.letters ORDER BY letter;
GO
SELECT NEXT VALUE FOR dbo.ordered OVER (PARTITION BY letter ORDER BY letter) FROM dbo.letters;
GO
SELECT letter FROM dbo.letters WHERE NEXT VALUE FOR dbo.ordered OVER (ORDER BY letter) > 0;
GO
DROP TABLE dbo.letters;
DROP SEQUENCE dbo.ordered;
GO
-- Where NEXT VALUE FOR may not stand (11717, 11719, 11720, 11721, 11723).
CREATE SEQUENCE dbo.placed START WITH 1;
CREATE TABLE dbo.placed_rows (a int);
INSERT dbo.placed_rows VALUES (1), (2);
GO
SELECT a FROM dbo.placed_rows WHERE a < NEXT VALUE FOR dbo.placed;
GO
SELECT DISTINCT NEXT VALUE FOR dbo.placed FROM dbo.placed_rows;
GO
SELECT NEXT VALUE FOR dbo.placed UNION SELECT 1;
GO
SELECT NEXT VALUE FOR dbo.placed AS n, a FROM dbo.placed_rows ORDER BY a;
GO
SELECT (SELECT NEXT VALUE FOR dbo.placed) AS in_subquery;
GO
SELECT n FROM (SELECT NEXT VALUE FOR dbo.placed AS n) AS d;
GO
CREATE VIEW dbo.placed_view AS SELECT NEXT VALUE FOR dbo.placed AS n;
GO
CREATE FUNCTION dbo.placed_function () RETURNS bigint AS BEGIN RETURN NEXT VALUE FOR dbo.placed; END;
GO
CREATE TABLE dbo.placed_check (a int CHECK (a > NEXT VALUE FOR dbo.placed));
GO
CREATE TABLE dbo.placed_computed (a int, b AS NEXT VALUE FOR dbo.placed);
GO
UPDATE dbo.placed_rows SET a = NEXT VALUE FOR dbo.placed OVER (ORDER BY a);
GO
-- None of those drew a value.
UPDATE dbo.placed_rows SET a = NEXT VALUE FOR dbo.placed;
SELECT a FROM dbo.placed_rows ORDER BY a;
GO
DROP TABLE dbo.placed_rows;
DROP SEQUENCE dbo.placed;
GO
-- decimal(38, 0)'s whole range, wider than an i128 spans, and a range request whose
-- length overflows: errors or values, never a crash.
CREATE SEQUENCE dbo.widest AS decimal(38, 0) INCREMENT BY 99999999999999999999999999999999999999;
GO
SELECT NEXT VALUE FOR dbo.widest AS widest_first;
EXEC sp_sequence_get_range @sequence_name = N'dbo.widest', @range_size = 9223372036854775807;
DROP SEQUENCE dbo.widest;
GO
-- Definition errors.
CREATE SEQUENCE dbo.bad AS varchar(10);
GO
CREATE SEQUENCE dbo.bad INCREMENT BY 0;
GO
CREATE SEQUENCE dbo.bad MINVALUE 10 MAXVALUE 5;
GO
CREATE SEQUENCE dbo.bad MINVALUE 1 MAXVALUE 5 INCREMENT BY 10;
GO
CREATE SEQUENCE dbo.bad START WITH 50 MINVALUE 1 MAXVALUE 5;
GO
CREATE SEQUENCE dbo.bad AS tinyint START WITH 300;
GO
CREATE SEQUENCE dbo.bad CACHE 0;
GO
CREATE SEQUENCE dbo.bad CYCLE NO CYCLE;
GO
CREATE SEQUENCE dbo.bad RESTART WITH 1;
GO
ALTER SEQUENCE dbo.plain START WITH 5;
GO
ALTER SEQUENCE dbo.plain AS int;
GO
ALTER SEQUENCE dbo.plain;
GO
-- The value handed out last must stay within the new range (11704).
CREATE SEQUENCE dbo.narrowed START WITH 1 MINVALUE 1 MAXVALUE 100;
GO
DECLARE @i int = 0, @v bigint;
WHILE @i < 50 BEGIN SET @v = NEXT VALUE FOR dbo.narrowed; SET @i += 1; END;
SELECT @v AS last_drawn;
GO
ALTER SEQUENCE dbo.narrowed MAXVALUE 40;
GO
ALTER SEQUENCE dbo.narrowed RESTART MAXVALUE 40;
SELECT NEXT VALUE FOR dbo.narrowed AS after_restart;
GO
CREATE TABLE dbo.not_a_sequence (a int);
GO
SELECT NEXT VALUE FOR dbo.not_a_sequence;
GO
SELECT NEXT VALUE FOR dbo.no_such_sequence;
GO
DROP TABLE dbo.not_a_sequence;
DROP SEQUENCE dbo.plain, dbo.countdown, dbo.ranged, dbo.narrowed;
GO
