//! The transaction layer. Built so far:
//! - [`lock`]: the lock manager (see its module documentation).
//! - [`record`]: the log record formats.
//!
//! In progress (issue 3): the log manager, transactions, ARIES recovery, checkpoints,
//! and the page-change hook (`storage::LogHook`) that logs every page change.

pub mod lock;
pub mod record;
