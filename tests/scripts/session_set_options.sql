-- SET options as @@OPTIONS reports them (bit values of SQL Server's "user options"):
-- a driver's session starts at 5432 (ANSI_WARNINGS, ANSI_PADDING, ANSI_NULLS,
-- QUOTED_IDENTIFIER, ANSI_NULL_DFLT_ON, CONCAT_NULL_YIELDS_NULL; ARITHABORT OFF).
SELECT @@OPTIONS AS options;
SET XACT_ABORT ON;
SET ARITHIGNORE ON;
SET NOCOUNT ON;
SELECT @@OPTIONS AS options, @@OPTIONS & (16384 | 128 | 32) AS masked;
SET NOCOUNT OFF;
SET XACT_ABORT OFF;
SET ARITHIGNORE OFF;
-- Several options at once, and ANSI_NULL_DFLT_ON / _OFF exclude each other.
SET ANSI_NULLS, QUOTED_IDENTIFIER OFF;
SET ANSI_NULL_DFLT_OFF ON;
SELECT @@OPTIONS AS options;
GO
-- The session views read the options as the last request left them.
DBCC USEROPTIONS WITH NO_INFOMSGS;
SELECT quoted_identifier, ansi_nulls, ansi_null_dflt_on, ansi_defaults, arithabort
FROM sys.dm_exec_sessions WHERE session_id = @@SPID;
SET ANSI_NULL_DFLT_ON ON;
SET ANSI_NULLS, QUOTED_IDENTIFIER ON;
SELECT @@OPTIONS AS options;
-- ANSI_DEFAULTS sets seven options, IMPLICIT_TRANSACTIONS among them.
SET ANSI_DEFAULTS ON;
SELECT @@OPTIONS AS options, @@TRANCOUNT AS trancount;
SET ANSI_DEFAULTS OFF;
SELECT @@OPTIONS AS options;
SET ARITHABORT ON;
SET CONCAT_NULL_YIELDS_NULL ON;
SET ANSI_NULLS, ANSI_PADDING, ANSI_WARNINGS, QUOTED_IDENTIFIER, ANSI_NULL_DFLT_ON ON;
SELECT @@OPTIONS AS options;
GO
-- SET LANGUAGE: dates are read with the language's month names (full or short, any
-- case) as well as English ones, and DATENAME writes them.
SET LANGUAGE Russian;
SELECT CAST(N'июл 19 2021  8:12PM' AS datetime) AS d, CAST(N'19 ИЮЛЬ 2021' AS date) AS d2,
    CAST('Jul 19 2021' AS date) AS d3, DATENAME(month, '2021-07-19') AS m,
    DATENAME(weekday, '2021-07-19') AS w;
SET LANGUAGE Deutsch;
SELECT CAST(N'1 März 2020' AS date) AS d, CAST('Okt 3, 2020' AS date) AS d2,
    DATENAME(month, '2020-03-01') AS m, DATENAME(weekday, '2020-03-01') AS w;
SET LANGUAGE us_english;
SELECT DATENAME(month, '2020-03-01') AS m;
SELECT CAST(N'июл 19 2021' AS datetime) AS d;
GO
-- SET FMTONLY ON: a query sends its columns and no rows; data changes are skipped.
SET NOCOUNT ON;
CREATE TABLE dbo.fmt (id int, name varchar(5));
INSERT INTO dbo.fmt VALUES (1, 'a');
SET FMTONLY ON;
SELECT * FROM dbo.fmt;
INSERT INTO dbo.fmt VALUES (2, 'b');
DELETE FROM dbo.fmt;
SET FMTONLY OFF;
SELECT * FROM dbo.fmt;
GO
