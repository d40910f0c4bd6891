//! The transaction layer. Built so far:
//! - [`log`]: the write-ahead log manager: LSNs, log blocks in VLFs inside a
//!   preallocated, recycled log file, group commit by a log writer thread, delayed
//!   durability, growth, truncation (9002 when full), and the end-of-log scan. It is
//!   the buffer pool's WAL gate (`storage::WalGate` for [`log::LogManager`]).
//! - [`lock`]: the lock manager (see its module documentation).
//! - [`record`]: the log record formats.
//!
//! In progress (issue 3): transactions, ARIES recovery, checkpoints, and the
//! page-change hook (`storage::LogHook`) that logs every page change.

pub mod access;
pub mod lock;
pub mod log;
pub mod record;
pub mod recovery;
pub mod xact;
pub mod checkpoint;
pub mod writer;

pub use log::{LogConfig, LogError, LogManager, Lsn};
