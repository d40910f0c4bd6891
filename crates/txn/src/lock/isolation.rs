//! Transaction isolation levels and the locks each one takes.
//!
//! The lock manager doesn't know isolation levels: callers (the table and index access
//! code) decide which locks to take and how long to keep them. This is the plan they
//! follow, which is SQL Server's (Transaction Locking and Row Versioning Guide).
//!
//! Every level, always:
//!
//! - Sch-S on the table for the life of the statement (compilation and execution),
//!   Sch-M for DDL until the transaction ends.
//! - Intent locks before row locks, top down: IS (readers) / IU (update scans) / IX
//!   (writers) on the OBJECT, then on the PAGE, then S / U / X on the KEY or RID.
//!   Intent locks are held as long as the longest lock below them.
//! - Writes: X on every key or RID inserted, updated or deleted (and IX above it),
//!   held until the transaction ends. An UPDATE or DELETE scan takes U on each row it
//!   reads and converts U to X for rows it changes; U on rows it doesn't change is
//!   released when the scan moves on (at READ COMMITTED) or kept (higher levels).
//!
//! What differs is how readers lock:
//!
//! | level            | locks taken by reads                     | held until                     | key-range locks |
//! |------------------|------------------------------------------|--------------------------------|-----------------|
//! | READ UNCOMMITTED | none (Sch-S only): dirty reads           | -                              | no              |
//! | READ COMMITTED   | S on each row (IS on page and table)     | the row has been read; at the latest the end of the statement ([`release_matching`]) | no |
//! | REPEATABLE READ  | S on each row read                       | end of transaction             | no              |
//! | SERIALIZABLE     | RangeS-S on each key read and on the next key after the range (RangeS-U for update scans); without a usable index, S on the table | end of transaction | yes |
//! | SNAPSHOT         | none: reads row versions (Sch-S only)    | -                              | no              |
//!
//! At SERIALIZABLE, writers also test ranges: an INSERT takes RangeI-N on the next key
//! (instant: released as soon as granted) before X on the new key, and a DELETE or an
//! UPDATE of a key takes RangeX-X on it. Conversions then give the documented modes
//! (S + RangeI-N = RangeI-S, RangeI-N + RangeS-S = RangeX-S, ...; see [`LockMode::join`]).
//!
//! READ COMMITTED SNAPSHOT (the database option) turns READ COMMITTED reads into
//! statement-level row-version reads: no S locks, like SNAPSHOT but per statement.
//! Row versioning isn't built yet: the row access layer (`crate::access`) refuses
//! SNAPSHOT and READ COMMITTED with READ_COMMITTED_SNAPSHOT on with error 3952.
//!
//! Lock hints map onto the same plan: NOLOCK = READ UNCOMMITTED, HOLDLOCK =
//! SERIALIZABLE, REPEATABLEREAD, READCOMMITTEDLOCK, UPDLOCK (U instead of S, held to
//! the end of the transaction), XLOCK, TABLOCK / TABLOCKX (S / X on the OBJECT instead
//! of row locks), PAGLOCK, ROWLOCK, READPAST (skip rows whose lock isn't free: request
//! with [`LockTimeout::NoWait`] and move on), NOWAIT (= `SET LOCK_TIMEOUT 0` for the
//! table).
//!
//! [`release_matching`]: super::LockManager::release_matching
//! [`LockMode::join`]: super::LockMode::join
//! [`LockTimeout::NoWait`]: super::LockTimeout::NoWait

use std::fmt;

/// SET TRANSACTION ISOLATION LEVEL. The discriminant is SQL Server's number
/// (sys.dm_exec_sessions.transaction_isolation_level; 0 = unspecified isn't a level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum IsolationLevel {
    ReadUncommitted = 1,
    /// The default.
    #[default]
    ReadCommitted = 2,
    RepeatableRead = 3,
    Serializable = 4,
    Snapshot = 5,
}

impl IsolationLevel {
    pub const ALL: [IsolationLevel; 5] = [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
        IsolationLevel::RepeatableRead,
        IsolationLevel::Serializable,
        IsolationLevel::Snapshot,
    ];

    /// sys.dm_exec_sessions.transaction_isolation_level.
    pub const fn number(self) -> u8 {
        self as u8
    }

    pub fn from_number(n: u8) -> Option<IsolationLevel> {
        IsolationLevel::ALL.into_iter().find(|l| l.number() == n)
    }

    /// As SET TRANSACTION ISOLATION LEVEL spells it: "READ COMMITTED".
    pub const fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "READ UNCOMMITTED",
            IsolationLevel::ReadCommitted => "READ COMMITTED",
            IsolationLevel::RepeatableRead => "REPEATABLE READ",
            IsolationLevel::Serializable => "SERIALIZABLE",
            IsolationLevel::Snapshot => "SNAPSHOT",
        }
    }

    /// As DBCC USEROPTIONS shows it ("isolation level" row): "read committed".
    pub const fn useroptions_name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read uncommitted",
            IsolationLevel::ReadCommitted => "read committed",
            IsolationLevel::RepeatableRead => "repeatable read",
            IsolationLevel::Serializable => "serializable",
            IsolationLevel::Snapshot => "snapshot",
        }
    }

    /// As the deadlock graph's `isolationlevel` attribute shows it:
    /// "read committed (2)".
    pub fn deadlock_graph_name(self) -> String {
        format!("{} ({})", self.useroptions_name(), self.number())
    }

    /// Parses the SET TRANSACTION ISOLATION LEVEL spelling (any case, any spacing).
    pub fn from_name(name: &str) -> Option<IsolationLevel> {
        let norm: Vec<&str> = name.split_whitespace().collect();
        let norm = norm.join(" ");
        IsolationLevel::ALL.into_iter().find(|l| l.name().eq_ignore_ascii_case(&norm))
    }

    /// Whether reads keep their S locks to the end of the transaction.
    pub const fn holds_read_locks(self) -> bool {
        matches!(self, IsolationLevel::RepeatableRead | IsolationLevel::Serializable)
    }

    /// Whether reads take S locks at all.
    pub const fn reads_take_locks(self) -> bool {
        matches!(self, IsolationLevel::ReadCommitted | IsolationLevel::RepeatableRead | IsolationLevel::Serializable)
    }

    /// Whether scans take key-range locks.
    pub const fn uses_key_range_locks(self) -> bool {
        matches!(self, IsolationLevel::Serializable)
    }
}

impl fmt::Display for IsolationLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(IsolationLevel::default(), IsolationLevel::ReadCommitted);
        assert_eq!(IsolationLevel::RepeatableRead.to_string(), "REPEATABLE READ");
        assert_eq!(IsolationLevel::ReadCommitted.deadlock_graph_name(), "read committed (2)");
        assert_eq!(IsolationLevel::Serializable.deadlock_graph_name(), "serializable (4)");
        for l in IsolationLevel::ALL {
            assert_eq!(IsolationLevel::from_number(l.number()), Some(l));
            assert_eq!(IsolationLevel::from_name(l.name()), Some(l));
        }
        assert_eq!(IsolationLevel::from_name("read   uncommitted"), Some(IsolationLevel::ReadUncommitted));
        assert!(IsolationLevel::Serializable.uses_key_range_locks());
        assert!(!IsolationLevel::Snapshot.reads_take_locks());
    }
}
