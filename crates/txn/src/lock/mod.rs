//! The lock manager: SQL Server's lock resources and modes, lock waits (LCK_M_*),
//! SET LOCK_TIMEOUT, conversions, deadlock detection with SQL Server's victim rules and
//! deadlock graph, and the rows of the locks DMV's
//!
//! # Using it
//!
//! One [`LockManager`] per instance. Each transaction gets a [`LockOwner`] (transaction
//! id, session id, DEADLOCK_PRIORITY, log bytes used, isolation level, name):
//!
//! ```
//! use txn::lock::{LockManager, LockMode, LockOwner, LockResource, LockTimeout};
//!
//! let locks = LockManager::new();
//! let t = LockOwner::new(1001, 52);
//! let table = LockResource::object(5, 245575913);
//! let row = LockResource::key(5, 72057594038779904, 0x8194443284a0);
//! locks.lock(&t, table, LockMode::IX, LockTimeout::Infinite)?;
//! locks.lock(&t, row, LockMode::X, LockTimeout::Infinite)?;
//! // ... COMMIT or ROLLBACK:
//! locks.release_all(&t);
//! # Ok::<(), txn::lock::LockError>(())
//! ```
//!
//! - [`LockManager::lock`] grants, converts (S + IX = SIX, ...) or waits; it is
//!   re-entrant and counts requests. [`LockManager::unlock`] undoes one request,
//!   [`LockManager::release_all`] everything (end of transaction),
//!   [`LockManager::release_matching`] a subset (READ COMMITTED's S locks at the end
//!   of a statement).
//! - Failures are [`LockError`]s: 1222 on time-out, 1205 for a deadlock victim
//!   ([`LockError::to_sql_error`]).
//! - [`LockManager::snapshot`] gives the locks DMV, [`LockManager::waiting`]
//!   the lock waits of sys.dm_os_waiting_tasks, [`LockManager::stats`] the
//!   SQLServer:Locks counters, [`LockManager::set_deadlock_observer`] each deadlock's
//!   report and xml_deadlock_report graph.
//!
//! Isolation levels are the callers' business; [`isolation`] documents which locks
//! each one takes and for how long.
//!
//! # Modules
//!
//! | module      | what                                                               |
//! |-------------|--------------------------------------------------------------------|
//! | `mode`      | [`LockMode`], the compatibility matrix, conversions, wait types   |
//! | `resource`  | [`LockResource`] and its three SQL Server spellings                |
//! | `owner`     | [`LockOwner`], [`LockTimeout`]                                     |
//! | `manager`   | the sharded lock table, FIFO granting, waiting, release            |
//! | `deadlock`  | wait-for graph search, victim choice, deadlock XML, lock monitor   |
//! | `isolation` | [`IsolationLevel`] and the locking plan of each level              |
//!
//! # Not here (yet)
//!
//! Lock escalation (5,000 locks per object, memory pressure), lock partitioning of hot
//! resources on many-core machines, APPLICATION (sp_getapplock), METADATA, FILE and
//! ALLOCATION_UNIT resources, resource subtypes, low-priority waits
//! (WAIT_AT_LOW_PRIORITY), and cursor / session lock owners: owners are transactions.

pub mod deadlock;
pub mod error;
pub mod isolation;
pub mod manager;
pub mod mode;
pub mod owner;
pub mod resource;

pub use deadlock::{DeadlockProcess, DeadlockReport, DeadlockRequest, DeadlockResource};
pub use error::LockError;
pub use isolation::IsolationLevel;
pub use manager::{
    HeldLock, LockGrant, LockManager, LockManagerConfig, LockRow, LockStats, LockWait, RequestStatus, SHARD_COUNT,
};
pub use mode::{Compatibility, LockMode, MATRIX, MODE_COUNT};
pub use owner::{LockOwner, LockTimeout, DEADLOCK_PRIORITY_HIGH, DEADLOCK_PRIORITY_LOW, DEADLOCK_PRIORITY_NORMAL};
pub use resource::{key_hash, LockResource, KEY_HASH_MASK};
