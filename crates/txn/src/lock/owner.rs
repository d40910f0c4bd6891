//! Lock owners (transactions) and lock time-outs.

use std::sync::atomic::{AtomicI32, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use super::{IsolationLevel, LockMode, LockResource};

/// SET LOCK_TIMEOUT: how long a request waits for an incompatible lock to go away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum LockTimeout {
    /// `SET LOCK_TIMEOUT -1`, the default: wait until granted (or chosen as a deadlock
    /// victim).
    #[default]
    Infinite,
    /// `SET LOCK_TIMEOUT 0` (and the NOWAIT hint): fail at once with 1222 when the
    /// lock can't be granted immediately.
    NoWait,
    /// `SET LOCK_TIMEOUT n`: wait at most n milliseconds, then fail with 1222.
    Millis(u32),
}

impl LockTimeout {
    /// From the SET LOCK_TIMEOUT value: -1 (or any negative) = infinite, 0 = no wait.
    pub fn from_setting(ms: i64) -> LockTimeout {
        match ms {
            i64::MIN..=-1 => LockTimeout::Infinite,
            0 => LockTimeout::NoWait,
            n => LockTimeout::Millis(n.min(u32::MAX as i64) as u32),
        }
    }

    /// @@LOCK_TIMEOUT.
    pub fn setting(self) -> i64 {
        match self {
            LockTimeout::Infinite => -1,
            LockTimeout::NoWait => 0,
            LockTimeout::Millis(n) => n as i64,
        }
    }

    /// As the deadlock graph's `lockTimeout` attribute shows it (infinite = 4294967295).
    pub fn deadlock_graph_value(self) -> u32 {
        match self {
            LockTimeout::Infinite => u32::MAX,
            LockTimeout::NoWait => 0,
            LockTimeout::Millis(n) => n,
        }
    }

    pub(crate) fn duration(self) -> Option<Duration> {
        match self {
            LockTimeout::Infinite => None,
            LockTimeout::NoWait => Some(Duration::ZERO),
            LockTimeout::Millis(n) => Some(Duration::from_millis(n as u64)),
        }
    }
}

/// SET DEADLOCK_PRIORITY LOW.
pub const DEADLOCK_PRIORITY_LOW: i32 = -5;
/// SET DEADLOCK_PRIORITY NORMAL (the default).
pub const DEADLOCK_PRIORITY_NORMAL: i32 = 0;
/// SET DEADLOCK_PRIORITY HIGH.
pub const DEADLOCK_PRIORITY_HIGH: i32 = 5;

/// How a wait ended, delivered by whoever decided it to the waiting thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Granted,
    Victim,
    /// The request was withdrawn under it (its owner's locks were released while it
    /// waited); reported as a time-out.
    Cancelled,
}

/// The part of an owner the lock manager keeps references to (in waiting requests and
/// in the table of waits the deadlock monitor reads).
pub(crate) struct OwnerShared {
    pub(crate) txn_id: u64,
    pub(crate) session_id: i32,
    pub(crate) deadlock_priority: AtomicI32,
    pub(crate) log_used: Arc<AtomicU64>,
    pub(crate) isolation: AtomicU8,
    pub(crate) transaction_name: Mutex<String>,
    pub(crate) input_buffer: Mutex<String>,
    /// Resources this owner holds a granted lock on, in acquisition order. Changed
    /// only under the lock of the shard that holds the resource (lock order: shard,
    /// then this), so it always agrees with the lock table.
    pub(crate) held: Mutex<Vec<LockResource>>,
    /// Locks taken through `LockManager::lock_kept` (kept until `release_all`), with the
    /// mode granted: a repeated request they cover is answered here, without the shard.
    pub(crate) kept: Mutex<Vec<(LockResource, LockMode)>>,
    /// Finished waits not yet collected by their waiting thread, by request sequence
    /// number (an owner may have more than one thread waiting, e.g. a parallel plan).
    pub(crate) outcomes: Mutex<Vec<(u64, Outcome)>>,
    pub(crate) wake: Condvar,
}

/// A lock owner: one transaction of one session. Cheap to clone (clones share the
/// owner). Carries what deadlock victim selection and the deadlock graph need: the
/// session's DEADLOCK_PRIORITY, the transaction's log use (the cost of rolling it
/// back), its isolation level and name.
///
/// An owner's requests are meant to come from one thread at a time (a session runs
/// one request at a time); several threads may wait at once, but `release_all` and
/// `release_matching` must not run while the owner has requests in flight.
#[derive(Clone)]
pub struct LockOwner {
    pub(crate) shared: Arc<OwnerShared>,
}

impl LockOwner {
    /// A transaction `txn_id` (the locks DMV's request_owner_id, the transaction_id
    /// of sys.dm_tran_active_transactions) of session `session_id` (the spid). The
    /// lock manager tells owners apart by `txn_id`: it must be unique among the owners
    /// alive at one time.
    pub fn new(txn_id: u64, session_id: i32) -> LockOwner {
        Self::with_log_used_counter(txn_id, session_id, Arc::new(AtomicU64::new(0)))
    }

    /// Like [`LockOwner::new`], reading the transaction's log bytes used from a
    /// counter the transaction layer keeps up to date.
    pub fn with_log_used_counter(txn_id: u64, session_id: i32, log_used: Arc<AtomicU64>) -> LockOwner {
        LockOwner {
            shared: Arc::new(OwnerShared {
                txn_id,
                session_id,
                deadlock_priority: AtomicI32::new(DEADLOCK_PRIORITY_NORMAL),
                log_used,
                isolation: AtomicU8::new(IsolationLevel::ReadCommitted.number()),
                transaction_name: Mutex::new("user_transaction".to_owned()),
                input_buffer: Mutex::new(String::new()),
                held: Mutex::new(Vec::with_capacity(16)),
                kept: Mutex::new(Vec::new()),
                outcomes: Mutex::new(Vec::new()),
                wake: Condvar::new(),
            }),
        }
    }

    pub fn txn_id(&self) -> u64 {
        self.shared.txn_id
    }

    pub fn session_id(&self) -> i32 {
        self.shared.session_id
    }

    /// SET DEADLOCK_PRIORITY: -10 ..= 10 (LOW = -5, NORMAL = 0, HIGH = 5); values
    /// outside are clamped. Takes effect for deadlocks detected from now on.
    pub fn set_deadlock_priority(&self, priority: i32) {
        self.shared.deadlock_priority.store(priority.clamp(-10, 10), Relaxed);
    }

    pub fn deadlock_priority(&self) -> i32 {
        self.shared.deadlock_priority.load(Relaxed)
    }

    /// The transaction's log bytes used (database_transaction_log_bytes_used): the cost
    /// of rolling it back, for deadlock victim selection.
    pub fn set_log_used(&self, bytes: u64) {
        self.shared.log_used.store(bytes, Relaxed);
    }

    pub fn add_log_used(&self, bytes: u64) {
        self.shared.log_used.fetch_add(bytes, Relaxed);
    }

    pub fn log_used(&self) -> u64 {
        self.shared.log_used.load(Relaxed)
    }

    pub fn set_isolation_level(&self, level: IsolationLevel) {
        self.shared.isolation.store(level.number(), Relaxed);
    }

    pub fn isolation_level(&self) -> IsolationLevel {
        IsolationLevel::from_number(self.shared.isolation.load(Relaxed)).unwrap_or_default()
    }

    /// The transaction name the deadlock graph shows (`BEGIN TRAN name`; SQL Server
    /// shows "user_transaction" for unnamed explicit transactions, the statement
    /// name, e.g. "UPDATE", for autocommit ones). Default "user_transaction".
    pub fn set_transaction_name(&self, name: &str) {
        let mut n = self.shared.transaction_name.lock();
        n.clear();
        n.push_str(name);
    }

    pub fn transaction_name(&self) -> String {
        self.shared.transaction_name.lock().clone()
    }

    /// The batch text the deadlock graph shows in `<inputbuf>` (DBCC INPUTBUFFER).
    pub fn set_input_buffer(&self, text: &str) {
        let mut b = self.shared.input_buffer.lock();
        b.clear();
        b.push_str(text);
    }

    /// Number of resources this owner holds granted locks on.
    pub fn lock_count(&self) -> usize {
        self.shared.held.lock().len()
    }

    /// The `process` id the deadlock graph gives this owner ("process" + hex, unique
    /// while the owner lives, like SQL Server's task addresses).
    pub fn process_id(&self) -> String {
        process_id(&self.shared)
    }
}

pub(crate) fn process_id(o: &Arc<OwnerShared>) -> String {
    format!("process{:x}", Arc::as_ptr(o) as usize)
}

impl std::fmt::Debug for LockOwner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockOwner")
            .field("txn_id", &self.shared.txn_id)
            .field("session_id", &self.shared.session_id)
            .field("deadlock_priority", &self.deadlock_priority())
            .field("log_used", &self.log_used())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_timeout_settings() {
        assert_eq!(LockTimeout::from_setting(-1), LockTimeout::Infinite);
        assert_eq!(LockTimeout::from_setting(0), LockTimeout::NoWait);
        assert_eq!(LockTimeout::from_setting(50), LockTimeout::Millis(50));
        assert_eq!(LockTimeout::Millis(50).setting(), 50);
        assert_eq!(LockTimeout::Infinite.deadlock_graph_value(), 4294967295);
    }

    #[test]
    fn owner_settings() {
        let o = LockOwner::new(9, 57);
        assert_eq!(o.deadlock_priority(), 0);
        o.set_deadlock_priority(100);
        assert_eq!(o.deadlock_priority(), 10);
        o.add_log_used(10);
        o.add_log_used(5);
        assert_eq!(o.log_used(), 15);
        o.set_isolation_level(IsolationLevel::Serializable);
        assert_eq!(o.clone().isolation_level(), IsolationLevel::Serializable);
        assert!(o.process_id().starts_with("process"));
    }
}
