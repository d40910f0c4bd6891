//! The transaction layer. Built so far:
//! - [`log`]: the write-ahead log manager: LSNs, log blocks in VLFs inside a
//!   preallocated, recycled log file, group commit by a log writer thread, delayed
//!   durability, growth, truncation (9002 when full), and the end-of-log scan. It is
//!   the buffer pool's WAL gate (`storage::WalGate` for [`log::LogManager`]).
//! - [`lock`]: the lock manager (see its module documentation).
//! - [`record`]: the log record formats.
//! - [`checkpoint`]: automatic, indirect, manual and internal checkpoints, the recovery
//!   options (TARGET_RECOVERY_TIME, the recovery interval), the redo-time estimate,
//!   checkpoint_begin/checkpoint_end observers and the FlushCache message.
//! - [`writer`]: the background checkpoint task (automatic checkpoints or the recovery
//!   writer of indirect checkpoints) and `TxnDb::close`.
//!
//! In progress (issue 3): transactions, ARIES recovery, and the page-change hook
//! (`storage::LogHook`) that logs every page change.

pub mod access;
pub mod checkpoint;
pub mod lock;
pub mod log;
pub mod record;
pub mod recovery;
pub mod writer;
pub mod xact;

pub use log::{LogConfig, LogError, LogManager, Lsn};
