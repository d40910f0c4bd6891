//! The instance: system and user databases, the database directory, sessions and
//! logins. It implements the `sql` crate's `Host` over `storage` and `txn`, and maps
//! every layer's error to a `SqlError` at the session boundary. It feeds the DMVs (the
//! views themselves are in `sql`), and runs DBCC's checks.
//!
//! - [`config`]: [`InstanceConfig`], the default data directory, the data-directory lock.
//! - [`instance`]: [`Instance`] — start (recovery of every database, tempdb recreated),
//!   shutdown, CREATE / ALTER / DROP DATABASE, logins.
//! - [`session`]: [`Session`] — a login's batches and RPCs.
//! - `dbcc`: DBCC CHECKDB's checks over storage.
//! - [`backup`]: BACKUP and RESTORE (to come).
//! - [`host`]: [`EngineHost`] — a session's indexes and transactions.
//! - `dmv`: what the DMVs read — each session's activity and waits, file statistics,
//!   counters, log space.
//! - [`rows`]: rows of values as FixedVar records, off-row values.
//! - [`directory`]: the database directory and the system table's layout.
//! - [`login`]: password hashes (PBKDF2-HMAC-SHA256).
//! - [`error`]: [`EngineError`] and SQL Server's messages.
//!
//! ```no_run
//! use engine::{Instance, InstanceConfig};
//! use sql::results::CollectSink;
//!
//! let inst = Instance::start(InstanceConfig::in_memory("Str0ng!Passw0rd")).unwrap();
//! let mut session = inst.open_session("sa", "Str0ng!Passw0rd", None).unwrap();
//! let mut sink = CollectSink::default();
//! session.execute_batch("SELECT 1", &mut sink);
//! inst.shutdown().unwrap();
//! ```

pub mod backup;
pub mod config;
mod dbcc;
pub mod directory;
mod dmv;
pub mod error;
pub mod host;
pub mod instance;
pub mod login;
pub mod rows;
pub mod session;

pub use config::{default_data_dir, InstanceConfig};
pub use error::EngineError;
pub use host::EngineHost;
pub use instance::{Instance, MASTER, MODEL, MSDB, TEMPDB};
pub use session::Session;
