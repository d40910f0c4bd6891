-- mesquite-sql: -b
-- With -b the command stops after the first batch that raised an error (informational messages do not count)
-- and exits with code 1; the failing batch itself runs to its end.
PRINT 'batch 1';
RAISERROR ('just information', 10, 1);
GO
PRINT 'batch 2 starts';
RAISERROR ('fails', 16, 1);
PRINT 'batch 2 goes on to its end';
GO
PRINT 'batch 3 never runs';
GO
