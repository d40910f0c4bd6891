//! The instance (issue 4, not built yet): system databases, the catalog, sessions,
//! DMVs, DBCC, backup/restore and the error log. It implements the `sql` traits on top of
//! `storage` and `txn`, and maps every layer's error to a `SqlError` at the session
//! boundary.
