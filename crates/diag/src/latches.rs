//! Latch statistics per latch class: what sys.dm_os_latch_stats shows.
//!
//! SQL Server reports one latch wait in two places: as a wait type in sys.dm_os_wait_stats
//! (PAGELATCH_xx / PAGEIOLATCH_xx for buffer latches, LATCH_xx for all others, where xx is
//! the requested mode) and under its latch class here (every buffer latch wait, I/O or not,
//! is class BUFFER). `record_page_latch_wait` and `record_nonbuffer_latch_wait` do both, so
//! the two DMVs always agree; `record_latch_wait` touches only this table.
//!
//! Like the wait tables, times are kept in microseconds and shown in milliseconds. Waits
//! are counted when they end (SQL Server counts waiting_requests_count at the start), which
//! only differs while a wait is in progress.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::waits::{record_wait, WaitType};

macro_rules! latch_classes {
    ($($name:ident),* $(,)?) => {
        /// SQL Server latch classes that Mesquite components can wait on. The variant name is
        /// the latch_class value exactly as sys.dm_os_latch_stats spells it.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum LatchClass { $($name),* }

        impl LatchClass {
            pub const ALL: &'static [LatchClass] = &[$(LatchClass::$name),*];
            pub const COUNT: usize = [$(LatchClass::$name),*].len();
            pub fn name(self) -> &'static str {
                match self { $(LatchClass::$name => stringify!($name)),* }
            }
            /// The class with this exact name (case-insensitive, as T-SQL compares it).
            pub fn from_name(name: &str) -> Option<LatchClass> {
                LatchClass::ALL.iter().copied().find(|c| c.name().eq_ignore_ascii_case(name))
            }
        }
    };
}

// The subset of the documented classes that has a counterpart in Mesquite's design (buffer
// pool, allocation, access methods, backup, DBCC, files, log, recovery, trace, transactions,
// versioning). Full-text, CLR, mirroring, FILESTREAM and Service Broker classes are left out
// until those features exist.
#[rustfmt::skip]
latch_classes!(
    // Buffer pool
    BUFFER, BUFFER_POOL_GROW, DATABASE_CHECKPOINT,
    // Allocation
    ALLOC_CREATE_RINGBUF, ALLOC_CREATE_FREESPACE_CACHE, ALLOC_CACHE_MANAGER,
    ALLOC_FREESPACE_CACHE, ALLOC_EXTENT_CACHE,
    // Access methods (heaps and B-trees)
    ACCESS_METHODS_DATASET_PARENT, ACCESS_METHODS_HOBT_FACTORY, ACCESS_METHODS_HOBT,
    ACCESS_METHODS_HOBT_COUNT, ACCESS_METHODS_HOBT_VIRTUAL_ROOT,
    ACCESS_METHODS_CACHE_ONLY_HOBT_ALLOC, ACCESS_METHODS_BULK_ALLOC,
    ACCESS_METHODS_SCAN_RANGE_GENERATOR, ACCESS_METHODS_KEY_RANGE_GENERATOR,
    // Backup and restore
    BACKUP_RESULT_SET, BACKUP_LOG_REDO, BACKUP_MANAGER, BACKUP_MANAGER_DIFFERENTIAL,
    BACKUP_OPERATION, BACKUP_FILE_HANDLE,
    // DBCC
    DBCC_CHECK_AGGREGATE, DBCC_CHECK_RESULTSET, DBCC_CHECK_TABLE, DBCC_CHECK_TABLE_INIT,
    DBCC_CHECK_TRACE_LIST, DBCC_FILE_CHECK_OBJECT, DBCC_PERF, DBCC_PFS_STATUS,
    DBCC_OBJECT_METADATA, DBCC_HASH_DLL,
    // Files, filegroups, log, recovery
    FCB, FCB_REPLICA, FGCB_ALLOC, FGCB_ADD_REMOVE, FILEGROUP_MANAGER, FILE_MANAGER,
    LOG_MANAGER, RECOVERY_BAD_PAGE_TABLE, RECOVERY_MANAGER,
    // Eventing and trace
    EVENTING_CACHE, TRACE_ID, TRACE_AUDIT_ID, TRACE, TRACE_CONTROLLER, TRACE_EVENT_QUEUE,
    // Transactions and row versioning
    TRANSACTION_DISTRIBUTED_MARK, TRANSACTION_OUTCOME, NESTING_TRANSACTION_READONLY,
    NESTING_TRANSACTION_FULL, MSQL_TRANSACTION_MANAGER, VERSIONING_TRANSACTION,
    VERSIONING_TRANSACTION_LIST, VERSIONING_TRANSACTION_CHAIN, VERSIONING_STATE,
    VERSIONING_STATE_CHANGE,
    // Catalog, security, utilities
    DATABASE_AUTONAME_MANAGER, SECURITY_OBJPERM_CACHE, UTILITY_DYNAMIC_VECTOR,
    UTILITY_SPARSE_BITMAP, UTILITY_DATABASE_DROP, UTILITY_DYNAMIC_MANAGER_VIEW,
    UTILITY_LOCK_INFORMATION,
);

/// The mode a latch was requested in; it picks the wait type suffix (PAGELATCH_SH, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LatchMode {
    /// Null: not used by SQL Server's callers, present for completeness.
    NL,
    /// Keep: keeps the page from being destroyed, compatible with everything but DT.
    KP,
    /// Shared.
    SH,
    /// Update: compatible with SH and KP, not with another UP or EX.
    UP,
    /// Exclusive.
    EX,
    /// Destroy: taken to evict or free the buffer.
    DT,
}

impl LatchMode {
    /// The wait type of a buffer latch wait in this mode: PAGEIOLATCH_xx while the page is
    /// being read or written (`io`), PAGELATCH_xx otherwise.
    pub fn page_wait_type(self, io: bool) -> WaitType {
        use WaitType::*;
        match (self, io) {
            (LatchMode::NL, false) => PAGELATCH_NL,
            (LatchMode::KP, false) => PAGELATCH_KP,
            (LatchMode::SH, false) => PAGELATCH_SH,
            (LatchMode::UP, false) => PAGELATCH_UP,
            (LatchMode::EX, false) => PAGELATCH_EX,
            (LatchMode::DT, false) => PAGELATCH_DT,
            (LatchMode::NL, true) => PAGEIOLATCH_NL,
            (LatchMode::KP, true) => PAGEIOLATCH_KP,
            (LatchMode::SH, true) => PAGEIOLATCH_SH,
            (LatchMode::UP, true) => PAGEIOLATCH_UP,
            (LatchMode::EX, true) => PAGEIOLATCH_EX,
            (LatchMode::DT, true) => PAGEIOLATCH_DT,
        }
    }

    /// The wait type of a non-buffer latch wait in this mode (LATCH_xx).
    pub fn latch_wait_type(self) -> WaitType {
        match self {
            LatchMode::NL => WaitType::LATCH_NL,
            LatchMode::KP => WaitType::LATCH_KP,
            LatchMode::SH => WaitType::LATCH_SH,
            LatchMode::UP => WaitType::LATCH_UP,
            LatchMode::EX => WaitType::LATCH_EX,
            LatchMode::DT => WaitType::LATCH_DT,
        }
    }
}

/// One row of the latch table, kept in microseconds. A cache line each, so that waits on
/// two different classes on two cores do not slow each other down (false sharing).
#[derive(Default)]
#[repr(align(64))]
struct LatchCounter {
    waiting_requests: AtomicU64,
    wait_us: AtomicU64,
    max_wait_us: AtomicU64,
}

/// A latch table: one row per latch class. The instance has one (`instance_latches`).
pub struct LatchStats {
    // A fixed-size array indexed by the enum discriminant: the bounds check is provably
    // true, so it compiles away and cannot panic.
    rows: [LatchCounter; LatchClass::COUNT],
}

/// A copy of one latch class's row, in SQL Server's units (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LatchSnapshot {
    pub latch_class: LatchClass,
    pub waiting_requests_count: u64,
    pub wait_time_ms: u64,
    pub max_wait_time_ms: u64,
    /// Total wait in microseconds, for callers that want more resolution than the DMV.
    pub wait_time_us: u64,
}

impl Default for LatchStats {
    fn default() -> Self {
        LatchStats { rows: std::array::from_fn(|_| LatchCounter::default()) }
    }
}

impl LatchStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one finished latch wait.
    #[inline]
    pub fn add(&self, class: LatchClass, wait: Duration) {
        let c = &self.rows[class as usize];
        let us = wait.as_micros() as u64;
        c.waiting_requests.fetch_add(1, Relaxed);
        c.wait_us.fetch_add(us, Relaxed);
        // Read first: the maximum rarely changes, and a plain load keeps the cache line
        // shared instead of taking it exclusive for every wait.
        if us > c.max_wait_us.load(Relaxed) {
            c.max_wait_us.fetch_max(us, Relaxed);
        }
    }

    pub fn get(&self, class: LatchClass) -> LatchSnapshot {
        let c = &self.rows[class as usize];
        let wait_us = c.wait_us.load(Relaxed);
        LatchSnapshot {
            latch_class: class,
            waiting_requests_count: c.waiting_requests.load(Relaxed),
            wait_time_ms: wait_us / 1000,
            max_wait_time_ms: c.max_wait_us.load(Relaxed) / 1000,
            wait_time_us: wait_us,
        }
    }

    /// Every latch class, including those never waited on, as sys.dm_os_latch_stats lists
    /// them.
    pub fn snapshot(&self) -> Vec<LatchSnapshot> {
        LatchClass::ALL.iter().map(|&c| self.get(c)).collect()
    }

    /// DBCC SQLPERF('sys.dm_os_latch_stats', CLEAR). Waits that end while the table is
    /// being cleared may survive in part; SQL Server gives no stronger promise either.
    pub fn clear(&self) {
        for c in self.rows.iter() {
            c.waiting_requests.store(0, Relaxed);
            c.wait_us.store(0, Relaxed);
            c.max_wait_us.store(0, Relaxed);
        }
    }
}

/// The instance-wide latch table (sys.dm_os_latch_stats).
pub fn instance_latches() -> &'static LatchStats {
    static INSTANCE: OnceLock<LatchStats> = OnceLock::new();
    INSTANCE.get_or_init(LatchStats::new)
}

/// Records a finished latch wait in the latch table only (no wait type). Callers that
/// want the wait tables too use `record_page_latch_wait` or `record_nonbuffer_latch_wait`.
#[inline]
pub fn record_latch_wait(class: LatchClass, wait: Duration) {
    instance_latches().add(class, wait);
}

/// Records a finished buffer (page) latch wait: PAGELATCH_xx, or PAGEIOLATCH_xx when the
/// page was being read or written (`io`), in the instance and session wait tables, and
/// latch class BUFFER.
#[inline]
pub fn record_page_latch_wait(mode: LatchMode, io: bool, wait: Duration) {
    record_wait(mode.page_wait_type(io), wait, Duration::ZERO);
    record_latch_wait(LatchClass::BUFFER, wait);
}

/// Records a finished non-buffer latch wait: LATCH_xx in the wait tables and `class` in
/// the latch table.
#[inline]
pub fn record_nonbuffer_latch_wait(class: LatchClass, mode: LatchMode, wait: Duration) {
    record_wait(mode.latch_wait_type(), wait, Duration::ZERO);
    record_latch_wait(class, wait);
}

/// Measures a latch wait from its start; `finish` (or drop) records it in both the wait
/// tables and the latch table. Start it only once the latch could not be granted at once:
/// SQL Server does not count immediate grants.
pub struct LatchWaitTimer {
    wait_type: WaitType,
    class: LatchClass,
    start: Instant,
    done: bool,
}

/// Starts timing a buffer latch wait (see `record_page_latch_wait`).
#[inline]
pub fn begin_page_latch_wait(mode: LatchMode, io: bool) -> LatchWaitTimer {
    crate::sched::release();
    LatchWaitTimer { wait_type: mode.page_wait_type(io), class: LatchClass::BUFFER, start: Instant::now(), done: false }
}

/// Starts timing a non-buffer latch wait (see `record_nonbuffer_latch_wait`).
#[inline]
pub fn begin_latch_wait(class: LatchClass, mode: LatchMode) -> LatchWaitTimer {
    crate::sched::release();
    LatchWaitTimer { wait_type: mode.latch_wait_type(), class, start: Instant::now(), done: false }
}

impl LatchWaitTimer {
    #[inline]
    pub fn finish(mut self) {
        self.record();
    }

    #[inline]
    fn record(&mut self) {
        if !self.done {
            self.done = true;
            let wait = self.start.elapsed();
            record_wait(self.wait_type, wait, Duration::ZERO);
            record_latch_wait(self.class, wait);
        }
    }
}

impl Drop for LatchWaitTimer {
    fn drop(&mut self) {
        self.record();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::waits::{instance_waits, SessionScope, WaitStats};
    use std::sync::Arc;

    #[test]
    fn names_are_sql_server_names() {
        assert_eq!(LatchClass::BUFFER.name(), "BUFFER");
        assert_eq!(LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT.name(), "ACCESS_METHODS_HOBT_VIRTUAL_ROOT");
        assert_eq!(LatchClass::from_name("log_manager"), Some(LatchClass::LOG_MANAGER));
        assert_eq!(LatchClass::from_name("NO_SUCH_CLASS"), None);
        assert_eq!(LatchClass::ALL.len(), LatchClass::COUNT);
        assert_eq!(LatchMode::SH.page_wait_type(false), WaitType::PAGELATCH_SH);
        assert_eq!(LatchMode::EX.page_wait_type(true), WaitType::PAGEIOLATCH_EX);
        assert_eq!(LatchMode::UP.latch_wait_type(), WaitType::LATCH_UP);
    }

    #[test]
    fn concurrent_adds_are_exact_and_max_holds() {
        let t = Arc::new(LatchStats::new());
        // Thread 3's last wait is the longest of all; the others are 1-3 µs.
        let wait_us = |i: u64, j: u64| {
            if i == 3 && j == 9_999 {
                50_000
            } else {
                1 + (j % 3)
            }
        };
        let threads: Vec<_> = (0..4u64)
            .map(|i| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for j in 0..10_000u64 {
                        t.add(LatchClass::FGCB_ALLOC, Duration::from_micros(wait_us(i, j)));
                    }
                })
            })
            .collect();
        for h in threads {
            assert!(h.join().is_ok());
        }
        let expected_us: u64 = (0..4u64).flat_map(|i| (0..10_000u64).map(move |j| wait_us(i, j))).sum();
        let s = t.get(LatchClass::FGCB_ALLOC);
        assert_eq!(s.waiting_requests_count, 40_000);
        assert_eq!(s.wait_time_us, expected_us);
        assert_eq!(s.wait_time_ms, expected_us / 1000);
        assert_eq!(s.max_wait_time_ms, 50);
        // Other classes untouched; the snapshot lists every class.
        assert_eq!(t.get(LatchClass::BUFFER).waiting_requests_count, 0);
        assert_eq!(t.snapshot().len(), LatchClass::COUNT);

        t.clear();
        assert!(t
            .snapshot()
            .iter()
            .all(|r| r.waiting_requests_count == 0 && r.wait_time_us == 0 && r.max_wait_time_ms == 0));
    }

    #[test]
    fn buffer_and_nonbuffer_waits_reach_both_tables() {
        let session = Arc::new(WaitStats::new());
        let latch_before = instance_latches().get(LatchClass::BUFFER).waiting_requests_count;
        let root_before = instance_latches().get(LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT).waiting_requests_count;
        {
            let _scope = SessionScope::enter(session.clone());
            record_page_latch_wait(LatchMode::SH, false, Duration::from_micros(300));
            record_page_latch_wait(LatchMode::SH, true, Duration::from_micros(2_000));
            begin_page_latch_wait(LatchMode::EX, false).finish();
            record_nonbuffer_latch_wait(
                LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT,
                LatchMode::EX,
                Duration::from_micros(700),
            );
            // Dropped without finish: still recorded once.
            drop(begin_latch_wait(LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT, LatchMode::SH));
        }
        assert_eq!(session.get(WaitType::PAGELATCH_SH).waiting_tasks_count, 1);
        assert_eq!(session.get(WaitType::PAGEIOLATCH_SH).waiting_tasks_count, 1);
        assert_eq!(session.get(WaitType::PAGEIOLATCH_SH).wait_time_ms, 2);
        assert_eq!(session.get(WaitType::PAGELATCH_EX).waiting_tasks_count, 1);
        assert_eq!(session.get(WaitType::LATCH_EX).waiting_tasks_count, 1);
        assert_eq!(session.get(WaitType::LATCH_SH).waiting_tasks_count, 1);
        // Other tests may record into the instance tables concurrently, hence `>=`.
        assert!(instance_latches().get(LatchClass::BUFFER).waiting_requests_count >= latch_before + 3);
        assert!(
            instance_latches().get(LatchClass::ACCESS_METHODS_HOBT_VIRTUAL_ROOT).waiting_requests_count
                >= root_before + 2
        );
        assert!(instance_waits().get(WaitType::PAGEIOLATCH_SH).waiting_tasks_count >= 1);
    }
}
