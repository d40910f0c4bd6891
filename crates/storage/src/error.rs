//! Storage errors, and their SQL Server numbers for the session boundary.

use crate::page::{PageError, PageId};
use types::SqlError;

pub type Result<T, E = StorageError> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system I/O failure on a database file (SQL Server 823).
    #[error("I/O error on file '{file}' at offset {offset:#x}: {source}")]
    Io { file: String, offset: u64, source: std::io::Error },
    /// A page read from disk whose checksum does not match (SQL Server 824).
    #[error("incorrect checksum (expected: {expected:#010x}; actual: {actual:#010x}) reading page ({page}) in database ID {db} at offset {offset:#x} in file '{file}'")]
    Checksum { db: u16, page: PageId, offset: u64, file: String, expected: u32, actual: u32 },
    /// A page read from disk that carries another page's id (SQL Server 824, "incorrect pageid").
    #[error(
        "incorrect pageid (expected {expected}; actual {actual}) reading page in database ID {db} in file '{file}'"
    )]
    WrongPageId { db: u16, expected: PageId, actual: PageId, file: String },
    /// No free extent and the files cannot grow (SQL Server 1105).
    #[error("could not allocate space in database ID {db}: the filegroup is full")]
    FilegroupFull { db: u16 },
    /// Every buffer is pinned: the memory limit is too small for the work (SQL Server 802).
    #[error("there is insufficient memory available in the buffer pool")]
    BufferPoolFull,
    #[error("file id {file_id} does not exist in database ID {db}")]
    NoSuchFile { db: u16, file_id: u16 },
    #[error("database ID {0} is not attached to the buffer pool")]
    NoSuchDatabase(u16),
    #[error("page ({page}): {source}")]
    Page { page: PageId, source: PageError },
    /// A structure failed a consistency check while being read.
    #[error("corruption in {what}: {detail}")]
    Corrupt { what: String, detail: String },
    #[error("{0}")]
    Record(#[from] crate::record::RecordError),
    #[error("a row with the same key already exists")]
    DuplicateKey,
    /// A transaction-log error raised under a storage operation (the log manager lives in
    /// `txn`, above storage): 9002 when the log is full, 9001 when it is unavailable. It
    /// keeps its SQL Server number, severity and state to the session boundary.
    #[error("{}", .0.message)]
    Log(SqlError),
    #[error("{0}")]
    Invalid(String),
}

impl StorageError {
    pub fn corrupt(what: impl Into<String>, detail: impl Into<String>) -> Self {
        StorageError::Corrupt { what: what.into(), detail: detail.into() }
    }

    /// The SQL Server error number this maps to.
    pub fn number(&self) -> i32 {
        match self {
            StorageError::Io { .. } => 823,
            StorageError::Checksum { .. } | StorageError::WrongPageId { .. } => 824,
            StorageError::FilegroupFull { .. } => 1105,
            StorageError::BufferPoolFull => 802,
            StorageError::DuplicateKey => 2601,
            StorageError::Record(e) => e.sql_error_number().unwrap_or(605),
            StorageError::Log(e) => e.number,
            StorageError::Page { .. } | StorageError::Corrupt { .. } => 605,
            _ => 5180,
        }
    }

    /// The error as a client sees it. 823/824 are severity 24 as in SQL Server.
    pub fn to_sql_error(&self) -> SqlError {
        if let StorageError::Log(e) = self {
            return e.clone();
        }
        let n = self.number();
        let (severity, state, text) = match self {
            StorageError::Io { .. } => (24, 2, format!("The operating system returned an error {self} during a read/write.")),
            StorageError::Checksum { .. } | StorageError::WrongPageId { .. } => (
                24,
                2,
                format!(
                    "SQL Server detected a logical consistency-based I/O error: {self}. Additional messages in the error log may provide more detail. This is a severe error condition that threatens database integrity and must be corrected immediately. Complete a full database consistency check (DBCC CHECKDB)."
                ),
            ),
            StorageError::FilegroupFull { db } => (
                17,
                2,
                format!("Could not allocate space in database ID {db} because the 'PRIMARY' filegroup is full. Create disk space by deleting unneeded files, dropping objects in the filegroup, adding additional files to the filegroup, or setting autogrowth on for existing files in the filegroup."),
            ),
            StorageError::BufferPoolFull => (17, 1, "There is insufficient system memory in resource pool 'default' to run this query.".to_string()),
            _ => (16, 1, self.to_string()),
        };
        SqlError::new(n, severity, state, text)
    }
}
