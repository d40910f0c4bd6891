-- The ODBC catalog procedures drivers call for metadata: sp_columns / sp_columns_100
-- (mssql-jdbc's getColumns runs `INSERT INTO @table_variable EXEC sp_columns_100 ...`
-- into a table variable with a PRECISION column), sp_tables, sp_databases, sp_pkeys,
-- sp_fkeys.
SET NOCOUNT ON;
CREATE TABLE dbo.Part (
    PartID int IDENTITY PRIMARY KEY,
    Code char(4) NOT NULL,
    Name nvarchar(40) NOT NULL DEFAULT N'?',
    Notes varchar(max) NULL,
    Price decimal(9, 2) NULL,
    Cost money NULL,
    Weight float NULL,
    Ratio real NULL,
    Flag bit NULL,
    Small smallint NULL,
    Tiny tinyint NULL,
    Big bigint NULL,
    Added date NULL,
    AddedAt datetime NULL,
    Stamp datetime2(3) NULL,
    Zoned datetimeoffset NULL,
    Clock time(0) NULL,
    Guid uniqueidentifier NULL,
    Raw varbinary(16) NULL,
    Total AS Price * 2
);
CREATE TABLE dbo.PartLink (LinkID int NOT NULL, PartID int NOT NULL,
    CONSTRAINT PK_PartLink PRIMARY KEY (LinkID, PartID),
    CONSTRAINT FK_PartLink_Part FOREIGN KEY (PartID) REFERENCES dbo.Part (PartID) ON DELETE CASCADE);
GO
CREATE VIEW dbo.PartNames AS SELECT PartID, Name FROM dbo.Part;
GO
-- What mssql-jdbc's DatabaseMetaData.getColumns sends (ODBC 3).
DECLARE @mssqljdbc_temp_sp_columns_result TABLE(TABLE_QUALIFIER SYSNAME, TABLE_OWNER SYSNAME,TABLE_NAME SYSNAME,
    COLUMN_NAME SYSNAME, DATA_TYPE SMALLINT, TYPE_NAME SYSNAME, PRECISION INT,LENGTH INT, SCALE SMALLINT,
    RADIX SMALLINT, NULLABLE SMALLINT, REMARKS VARCHAR(254), COLUMN_DEF NVARCHAR(4000),SQL_DATA_TYPE SMALLINT,
    SQL_DATETIME_SUB SMALLINT, CHAR_OCTET_LENGTH INT, ORDINAL_POSITION INT,IS_NULLABLE VARCHAR(254),
    SS_IS_SPARSE SMALLINT, SS_IS_COLUMN_SET SMALLINT, SS_IS_COMPUTED SMALLINT,SS_IS_IDENTITY SMALLINT,
    SS_UDT_CATALOG_NAME NVARCHAR(128), SS_UDT_SCHEMA_NAME NVARCHAR(128),SS_UDT_ASSEMBLY_TYPE_NAME NVARCHAR(max),
    SS_XML_SCHEMACOLLECTION_CATALOG_NAME NVARCHAR(128),SS_XML_SCHEMACOLLECTION_SCHEMA_NAME NVARCHAR(128),
    SS_XML_SCHEMACOLLECTION_NAME NVARCHAR(128),SS_DATA_TYPE TINYINT);
INSERT INTO @mssqljdbc_temp_sp_columns_result EXEC sp_columns_100 N'Part', N'dbo', N'master', N'%', 2, 3;
SELECT CAST(COLUMN_NAME AS varchar(8)) AS col, DATA_TYPE AS dt, CAST(TYPE_NAME AS varchar(16)) AS type_name,
       PRECISION AS COLUMN_SIZE, LENGTH AS len, SCALE AS sc, RADIX AS rx, NULLABLE AS n,
       CAST(COLUMN_DEF AS varchar(8)) AS def, SQL_DATA_TYPE AS sdt, SQL_DATETIME_SUB AS sub,
       CHAR_OCTET_LENGTH AS octets, ORDINAL_POSITION AS pos, CAST(IS_NULLABLE AS varchar(3)) AS is_n,
       CASE SS_IS_IDENTITY WHEN 0 THEN 'NO' WHEN 1 THEN 'YES' WHEN '' THEN '' END AS IS_AUTOINCREMENT,
       SS_IS_COMPUTED AS computed, SS_DATA_TYPE AS ss
  FROM @mssqljdbc_temp_sp_columns_result ORDER BY ORDINAL_POSITION;
GO
-- sp_columns (ODBC 2 by default: datetime is type 11), a column pattern, a view's columns.
DECLARE @c TABLE(TABLE_QUALIFIER sysname, TABLE_OWNER sysname, TABLE_NAME sysname, COLUMN_NAME sysname,
    DATA_TYPE smallint, TYPE_NAME sysname, PRECISION int, LENGTH int, SCALE smallint, RADIX smallint,
    NULLABLE smallint, REMARKS varchar(254), COLUMN_DEF nvarchar(4000), SQL_DATA_TYPE smallint,
    SQL_DATETIME_SUB smallint, CHAR_OCTET_LENGTH int, ORDINAL_POSITION int, IS_NULLABLE varchar(254),
    SS_DATA_TYPE tinyint);
INSERT INTO @c EXEC sp_columns @table_name = 'Part', @column_name = 'Added%';
INSERT INTO @c EXEC sp_columns 'PartNames';
INSERT INTO @c EXEC sp_columns 'Part%', @column_name = 'PartID';
SELECT CAST(TABLE_QUALIFIER AS varchar(8)) AS q, CAST(TABLE_OWNER AS varchar(5)) AS o,
       CAST(TABLE_NAME AS varchar(10)) AS t, CAST(COLUMN_NAME AS varchar(8)) AS c, DATA_TYPE,
       CAST(TYPE_NAME AS varchar(14)) AS type_name, PRECISION, SQL_DATA_TYPE, SQL_DATETIME_SUB, ORDINAL_POSITION
  FROM @c;
GO
-- sp_tables: by type list, by pattern; the system views are VIEWs of sys and INFORMATION_SCHEMA.
DECLARE @t TABLE(q sysname NULL, o sysname NULL, n sysname NULL, ty varchar(32) NULL, r varchar(254) NULL);
INSERT INTO @t EXEC sp_tables @table_name = 'Part%', @table_type = '''TABLE'',''VIEW''';
INSERT INTO @t EXEC sp_tables 'COLUMNS', 'INFORMATION_SCHEMA';
INSERT INTO @t EXEC sp_tables @table_name = 'Part%', @table_type = '''VIEW''';
SELECT CAST(q AS varchar(8)) AS q, CAST(o AS varchar(18)) AS o, CAST(n AS varchar(10)) AS n, ty, r FROM @t;
DELETE @t;
-- The ODBC enumerations: databases, then table types.
INSERT INTO @t EXEC sp_tables '', '', '%';
INSERT INTO @t EXEC sp_tables '', '', '', '%';
SELECT CAST(q AS varchar(8)) AS q, o, n, ty FROM @t;
GO
DECLARE @d TABLE(name sysname, size_kb int, remarks varchar(254));
INSERT INTO @d EXEC sp_databases;
SELECT CAST(name AS varchar(8)) AS name, CASE WHEN size_kb > 0 THEN 'sized' END AS size, remarks FROM @d;
GO
-- sp_pkeys: the key's columns in key order; sp_fkeys from either side.
DECLARE @k TABLE(q sysname, o sysname, t sysname, c sysname, seq smallint, pk sysname);
INSERT INTO @k EXEC sp_pkeys 'PartLink';
INSERT INTO @k EXEC sp_pkeys @table_name = 'Part', @table_owner = 'dbo';
SELECT CAST(t AS varchar(8)) AS t, CAST(c AS varchar(6)) AS c, seq,
       CASE WHEN pk LIKE 'PK[_][_]Part[_][_]%' THEN 'PK__Part__...' ELSE CAST(pk AS varchar(12)) END AS pk FROM @k;
DECLARE @f TABLE(pq sysname, po sysname, pt sysname, pc sysname, fq sysname, fo sysname, ft sysname, fc sysname,
    seq smallint, upd smallint, del smallint, fk sysname, pk sysname, defer smallint);
INSERT INTO @f EXEC sp_fkeys @pktable_name = 'Part';
INSERT INTO @f EXEC sp_fkeys @fktable_name = 'PartLink', @fktable_owner = 'dbo';
INSERT INTO @f EXEC sp_fkeys 'Part', NULL, NULL, 'PartLink';
INSERT INTO @f EXEC sp_fkeys 'PartLink';
SELECT CAST(pt AS varchar(8)) AS pt, CAST(pc AS varchar(6)) AS pc, CAST(ft AS varchar(8)) AS ft,
       CAST(fc AS varchar(6)) AS fc, seq, upd, del, CAST(fk AS varchar(16)) AS fk,
       CASE WHEN pk LIKE 'PK[_][_]Part[_][_]%' THEN 'PK__Part__...' ELSE pk END AS pk, defer FROM @f;
GO
-- Errors: the qualifier must be the current database; sp_fkeys needs a table name;
-- sp_columns needs @table_name; unknown parameter names.
EXEC sp_columns 'Part', 'dbo', 'tempdb';
GO
EXEC sp_fkeys;
GO
EXEC sp_columns @column_name = 'x';
GO
EXEC sp_pkeys @table = 'Part';
GO
-- The procedures read the current database.
USE tempdb;
DECLARE @k TABLE(q sysname, o sysname, t sysname, c sysname, seq smallint, pk sysname);
INSERT INTO @k EXEC sp_pkeys 'Part';
SELECT COUNT(*) AS part_keys_in_tempdb FROM @k;
GO
