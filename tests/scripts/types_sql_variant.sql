-- sql_variant: columns, variables, CAST/CONVERT, comparison across base type families,
-- SQL_VARIANT_PROPERTY, TYPE_NAME/TYPE_ID.
CREATE TABLE v (id int PRIMARY KEY, x sql_variant NULL);
INSERT INTO v VALUES (1, 42), (2, N'héllo'), (3, CAST('2024-05-06 07:08:09.1234567' AS datetime2)),
  (4, CAST(123.45 AS decimal(10, 2))), (5, CAST('6F9619FF-8B86-D011-B42D-00C04FD430C8' AS uniqueidentifier)),
  (6, NULL), (7, CAST(1.5 AS float)), (8, 'abc'), (9, 0x0102), (10, CAST(7 AS bigint));
SELECT id, x, SQL_VARIANT_PROPERTY(x, 'BaseType') AS base, SQL_VARIANT_PROPERTY(x, 'Precision') AS p,
  SQL_VARIANT_PROPERTY(x, 'Scale') AS s, SQL_VARIANT_PROPERTY(x, 'MaxLength') AS ml,
  SQL_VARIANT_PROPERTY(x, 'TotalBytes') AS tb, SQL_VARIANT_PROPERTY(x, 'Collation') AS coll
FROM v ORDER BY id;
GO
-- Ordering: families (date and time > approximate numeric > exact numeric > character
-- > binary > uniqueidentifier), then value within a family.
SELECT id FROM v ORDER BY x, id;
SELECT id FROM v WHERE x = 42;
SELECT id FROM v WHERE x = CAST(42 AS decimal(5, 1));
SELECT id FROM v WHERE x > 100 ORDER BY id;
SELECT id FROM v WHERE x = 'HELLO' OR x = N'ABC' ORDER BY id;
GO
CREATE INDEX ix_v_x ON v (x);
SELECT id FROM v WITH (INDEX (ix_v_x)) WHERE x = CAST(7 AS int);
GO
-- Back to the base type and to others.
SELECT CAST(x AS int) + 1 AS plus_one FROM v WHERE id = 1;
SELECT CONVERT(varchar(30), x, 120) AS txt FROM v WHERE id = 3;
SELECT CAST(x AS nvarchar(20)) AS n FROM v WHERE id = 4;
DECLARE @v sql_variant = CAST(N'text' AS nvarchar(10));
SELECT @v AS v, SQL_VARIANT_PROPERTY(@v, 'BaseType') AS base, SQL_VARIANT_PROPERTY(@v, 'MaxLength') AS ml;
SET @v = 5;
SELECT @v AS v, SQL_VARIANT_PROPERTY(@v, 'BaseType') AS base, DATALENGTH(@v) AS dl;
GO
-- Errors: no arithmetic on sql_variant, no MAX base types.
DECLARE @v sql_variant = 1;
SELECT @v + 1;
GO
SELECT CAST(CAST(N'x' AS nvarchar(max)) AS sql_variant);
GO
SELECT SQL_VARIANT_PROPERTY(SERVERPROPERTY('ProductVersion'), 'BaseType') AS sp,
  SQL_VARIANT_PROPERTY(SERVERPROPERTY('EngineEdition'), 'BaseType') AS ee,
  SQL_VARIANT_PROPERTY(DATABASEPROPERTYEX('master', 'Status'), 'BaseType') AS st;
SELECT TYPE_NAME(56) AS int_name, TYPE_NAME(98) AS variant_name, TYPE_NAME(231) AS nv, TYPE_NAME(9999) AS none,
  TYPE_ID('int') AS int_id, TYPE_ID('sql_variant') AS v_id, TYPE_ID('nosuch') AS no_id;
SELECT name, system_type_id, max_length FROM sys.types WHERE name = 'sql_variant';
SELECT c.name, TYPE_NAME(c.system_type_id) AS t, c.max_length FROM sys.columns c WHERE c.object_id = OBJECT_ID('v') ORDER BY c.column_id;
GO
DROP TABLE v;
