//! The engine's errors and their SQL Server messages. Everything that leaves the engine
//! (the `Host` boundary, `Instance::start`, `open_session`) is a `types::SqlError`.

use storage::StorageError;
use txn::access::AccessError;
use types::SqlError;

/// What can go wrong in the instance layer.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Storage(#[from] StorageError),
    #[error(transparent)]
    Access(#[from] AccessError),
    /// Already a client error.
    #[error("{0}")]
    Sql(SqlError),
    #[error("Database '{0}' already exists. Choose a different database name.")]
    DatabaseExists(String),
    #[error("Database '{0}' does not exist. Make sure that the name is entered correctly.")]
    NoSuchDatabase(String),
    #[error("Cannot drop database \"{0}\" because it is currently in use.")]
    DatabaseInUse(String),
    #[error("Cannot drop the database '{0}' because it is a system database.")]
    SystemDatabase(String),
    #[error("Failed to update database \"{0}\" because the database is read-only.")]
    ReadOnly(String),
    #[error(
        "Cannot create file '{0}' because it already exists. Change the file path or the file name, and retry the operation."
    )]
    FileExists(String),
    #[error("The logical file name \"{0}\" is already in use. Choose a different name.")]
    LogicalNameInUse(String),
    #[error("MODIFY FILE failed. File '{0}' does not exist.")]
    NoSuchFile(String),
    #[error("Login failed for user '{0}'.")]
    LoginFailed(String),
    /// The data directory is held by another instance, or cannot be prepared.
    #[error("{0}")]
    DataDirectory(String),
    /// A persisted engine structure (database directory, login row) does not decode.
    #[error("The system table of database ID {db} is damaged: {detail}. Run DBCC CHECKDB.")]
    CorruptSystemTable { db: i16, detail: String },
    #[error("{0} is not supported by Mesquite yet.")]
    NotSupported(String),
    #[error("SHUTDOWN is in progress.")]
    ShuttingDown,
}

impl From<SqlError> for EngineError {
    fn from(e: SqlError) -> Self {
        EngineError::Sql(e)
    }
}

impl From<txn::LogError> for EngineError {
    fn from(e: txn::LogError) -> Self {
        EngineError::Storage(e.into())
    }
}

impl EngineError {
    /// The error as a client sees it, with SQL Server's number, severity and state.
    pub fn to_sql_error(&self) -> SqlError {
        let (number, severity, state) = match self {
            EngineError::Storage(e) => return e.to_sql_error(),
            EngineError::Access(e) => return e.to_sql_error(),
            EngineError::Sql(e) => return e.clone(),
            EngineError::DatabaseExists(_) => (1801, 16, 3),
            EngineError::NoSuchDatabase(_) => (911, 16, 1),
            EngineError::DatabaseInUse(_) => (3702, 16, 4),
            EngineError::SystemDatabase(_) => (3708, 16, 1),
            EngineError::ReadOnly(_) => (3906, 16, 1),
            EngineError::FileExists(_) => (5170, 16, 1),
            EngineError::LogicalNameInUse(_) => (1828, 16, 3),
            EngineError::NoSuchFile(_) => (5041, 16, 1),
            EngineError::LoginFailed(_) => (18456, 14, 1),
            // Severity 21: the instance cannot start on this directory.
            EngineError::DataDirectory(_) => (17204, 21, 1),
            EngineError::CorruptSystemTable { .. } => (8992, 16, 1),
            // The project's number for a known, not yet built feature (see sql's errors).
            EngineError::NotSupported(_) => (40000, 16, 1),
            EngineError::ShuttingDown => (6005, 14, 1),
        };
        SqlError::new(number, severity, state, self.to_string())
    }
}

impl From<EngineError> for SqlError {
    fn from(e: EngineError) -> SqlError {
        e.to_sql_error()
    }
}

impl From<EngineError> for sql::host::HostError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Storage(StorageError::DuplicateKey)
            | EngineError::Access(AccessError::Storage(StorageError::DuplicateKey)) => sql::host::HostError::Duplicate,
            e => sql::host::HostError::Sql(e.to_sql_error()),
        }
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_read_like_sql_server() {
        let e = EngineError::DatabaseExists("Sales".into()).to_sql_error();
        assert_eq!((e.number, e.severity, e.state), (1801, 16, 3));
        assert_eq!(e.message, "Database 'Sales' already exists. Choose a different database name.");
        let e = EngineError::DatabaseInUse("Sales".into()).to_sql_error();
        assert_eq!(e.message, "Cannot drop database \"Sales\" because it is currently in use.");
        let e = EngineError::LoginFailed("sa".into()).to_sql_error();
        assert_eq!((e.number, e.severity, e.state, e.message.as_str()), (18456, 14, 1, "Login failed for user 'sa'."));
        assert_eq!(
            sql::host::HostError::from(EngineError::Storage(StorageError::DuplicateKey)),
            sql::host::HostError::Duplicate
        );
    }
}
