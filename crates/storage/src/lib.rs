//! The storage engine: I/O backends, data files, 8 KB pages, extent allocation (GAM, PFS,
//! IAM), the buffer pool with its latches, heaps, B+trees and the row format.
//!
//! Storage knows nothing about SQL. Every page change goes through one place
//! (`PageOp` applied by the database's page-change context), which is where the
//! transaction layer attaches its log records. Changes are grouped in system
//! transactions, and every row operation ends with a logical undo record: see [`undo`].

pub mod alloc;
pub mod btree;
pub mod buffer;
pub mod database;
pub mod error;
pub mod file;
pub mod heap;
pub mod io;
pub mod lob;
pub mod page;
pub mod record;
pub mod undo;

pub use alloc::{AllocUnit, AllocUnitKind};
pub use buffer::{BufferPool, NoWal, PageReadGuard, PageUpdateGuard, PageWriteGuard, WalGate};
pub use database::{in_system_txn, CompletionTag, Database, LogHook, NullLog, PageChange, SystemTxn};
pub use error::{Result, StorageError};
pub use page::{Page, PageId, PageOp, PageType, PAGE_SIZE};
pub use undo::{apply_physical_undo, apply_row_undo, undo_material, RowUndo};
