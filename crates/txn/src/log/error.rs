//! Log manager errors and the SQL Server errors they become.

use super::lsn::Lsn;
use std::fmt;
use storage::StorageError;
use types::SqlError;

/// Why the log cannot be truncated, as sys.databases.log_reuse_wait_desc names it. The
/// transaction layer tells the log manager (`LogManager::set_full_reason`); it is the
/// reason error 9002 gives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum LogReuseWait {
    /// Waiting for a checkpoint (SIMPLE recovery, nothing else holding the log).
    Checkpoint,
    /// An open transaction holds the oldest active VLF.
    ActiveTransaction,
    /// FULL recovery: the log is waiting for a log backup.
    LogBackup,
    /// Nothing holds the log: the last checkpoint truncated all it could.
    #[default]
    Nothing,
}

impl LogReuseWait {
    /// The name SQL Server uses in log_reuse_wait_desc and in error 9002.
    pub fn name(self) -> &'static str {
        match self {
            LogReuseWait::Checkpoint => "CHECKPOINT",
            LogReuseWait::ActiveTransaction => "ACTIVE_TRANSACTION",
            LogReuseWait::LogBackup => "LOG_BACKUP",
            LogReuseWait::Nothing => "NOTHING",
        }
    }
}

impl fmt::Display for LogReuseWait {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// An I/O error while creating, opening, growing or truncating the log (823).
    #[error("I/O error on log file '{file}' at offset {offset:#x}: {source}")]
    Io { file: String, offset: u64, source: std::io::Error },
    /// A log write or flush failed earlier: nothing more can be logged (9001). The log
    /// stays as it was after the last successful flush; reopening it recovers.
    #[error("The log for database '{db}' is not available. Check the operating system error log for related error messages. Resolve any errors and restart the database. ({cause})")]
    Unavailable { db: String, cause: String },
    /// No reusable VLF and the file cannot grow (9002).
    #[error("The transaction log for database '{db}' is full due to '{reason}'.")]
    Full { db: String, reason: LogReuseWait },
    /// The log file's header or VLF chain is damaged (9004).
    #[error("An error occurred while processing the log for database '{db}': {detail}")]
    Corrupt { db: String, detail: String },
    /// A log scan was asked to start at an LSN that is not in the log (9003).
    #[error("The log scan number ({lsn}) passed to log scan in database '{db}' is not valid.")]
    InvalidLsn { db: String, lsn: Lsn },
    #[error("a log record of {len} bytes exceeds the largest log record ({max} bytes)")]
    RecordTooLarge { len: usize, max: usize },
    /// The log manager was shut down.
    #[error("the log of database '{0}' is shut down")]
    ShutDown(String),
    #[error("{0}")]
    Invalid(String),
}

pub type LogResult<T> = std::result::Result<T, LogError>;

impl LogError {
    /// The SQL Server error number.
    pub fn number(&self) -> i32 {
        match self {
            LogError::Io { .. } => 823,
            LogError::Unavailable { .. } | LogError::ShutDown(_) => 9001,
            LogError::Full { .. } => 9002,
            LogError::InvalidLsn { .. } => 9003,
            LogError::Corrupt { .. } => 9004,
            // SQL Server has no user-facing error for these internal misuses; 3624
            // ("A system assertion check has failed") is the closest.
            LogError::RecordTooLarge { .. } | LogError::Invalid(_) => 3624,
        }
    }

    /// The error as a client sees it.
    pub fn to_sql_error(&self) -> SqlError {
        let (severity, state) = match self {
            LogError::Io { .. } => (24, 2),
            LogError::Unavailable { .. } | LogError::ShutDown(_) => (21, 1),
            LogError::Full { .. } => (17, 2),
            LogError::InvalidLsn { .. } => (20, 1),
            LogError::Corrupt { .. } => (21, 1),
            LogError::RecordTooLarge { .. } | LogError::Invalid(_) => (20, 1),
        };
        let text = match self {
            LogError::Io { .. } => {
                format!("The operating system returned an error {self} during a read/write.")
            }
            _ => self.to_string(),
        };
        SqlError::new(self.number(), severity, state, text)
    }
}

impl From<LogError> for StorageError {
    /// For storage operations that log (and the buffer pool's WAL gate): I/O errors
    /// stay I/O errors, damage stays corruption, the rest (9002 full, 9001 unavailable,
    /// ...) keep their SQL Server error.
    fn from(e: LogError) -> StorageError {
        match e {
            LogError::Io { file, offset, source } => StorageError::Io { file, offset, source },
            LogError::Corrupt { db, detail } => {
                StorageError::Corrupt { what: format!("log of database '{db}'"), detail }
            }
            other => StorageError::Log(other.to_sql_error()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_log_is_9002() {
        let e = LogError::Full { db: "DDTest_On".into(), reason: LogReuseWait::ActiveTransaction };
        let s = e.to_sql_error();
        assert_eq!((s.number, s.severity), (9002, 17));
        assert_eq!(s.message, "The transaction log for database 'DDTest_On' is full due to 'ACTIVE_TRANSACTION'.");
        // Through a storage operation it stays 9002 (it was 5180 before).
        let through_storage = StorageError::from(e).to_sql_error();
        assert_eq!((through_storage.number, through_storage.severity, through_storage.state), (9002, 17, 2));
        assert_eq!(through_storage.message, s.message);
    }
}
