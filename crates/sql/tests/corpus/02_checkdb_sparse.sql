-- Seed 001 re-created: a heap with a sparse column, a filtered index on it, and
-- consistency checks before and after; the latch DMVs a DBA looks at meanwhile.
CREATE DATABASE SparseProbe;
GO
USE SparseProbe;
GO
CREATE TABLE dbo.Readings (taken_at smalldatetime SPARSE NULL);
GO
INSERT INTO dbo.Readings (taken_at)
    VALUES (NULL);
GO 50000
DBCC CHECKDB('SparseProbe') WITH NO_INFOMSGS, ALL_ERRORMSGS;
GO
CREATE NONCLUSTERED INDEX [ix_readings_taken]
    ON dbo.Readings (taken_at)
    WHERE taken_at IS NOT NULL;
GO
DBCC CHECKDB(SparseProbe) WITH NO_INFOMSGS, ALL_ERRORMSGS, PHYSICAL_ONLY;
GO
SELECT wt.session_id, wt.wait_type, wt.wait_duration_ms, wt.resource_description
FROM sys.dm_os_waiting_tasks AS wt
WHERE wt.wait_type LIKE N'LATCH[_]%' ESCAPE '\'
ORDER BY wt.wait_duration_ms DESC;
GO
SELECT TOP (10) latch_class, waiting_requests_count, wait_time_ms, max_wait_time_ms
FROM sys.dm_os_latch_stats
WHERE latch_class <> N'BUFFER'
ORDER BY wait_time_ms DESC;
GO
ALTER DATABASE SparseProbe SET READ_ONLY WITH ROLLBACK IMMEDIATE;
GO
DBCC CHECKTABLE('dbo.Readings') WITH NO_INFOMSGS;
GO
ALTER DATABASE SparseProbe SET READ_WRITE;
GO
SELECT i.name, i.has_filter, i.filter_definition, c.is_sparse
FROM sys.indexes AS i
JOIN sys.index_columns AS ic ON ic.object_id = i.object_id AND ic.index_id = i.index_id
JOIN sys.columns AS c ON c.object_id = ic.object_id AND c.column_id = ic.column_id
WHERE i.has_filter = 1 AND c.is_sparse = 1;
GO
DROP INDEX ix_readings_taken ON dbo.Readings;
