//! Wait statistics: what sys.dm_os_wait_stats and sys.dm_exec_session_wait_stats show.
//!
//! A wait is recorded once, when it ends, into the instance table and into the table of
//! the session whose request runs on this thread (if any). Times are kept in microseconds
//! and shown in milliseconds, so many short waits still add up correctly.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

macro_rules! wait_types {
    ($($name:ident),* $(,)?) => {
        /// SQL Server wait types that Mesquite records. The variant name is the wait type
        /// name exactly as SQL Server spells it.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[repr(u16)]
        pub enum WaitType { $($name),* }

        impl WaitType {
            pub const ALL: &'static [WaitType] = &[$(WaitType::$name),*];
            pub const COUNT: usize = [$(WaitType::$name),*].len();
            pub fn name(self) -> &'static str {
                match self { $(WaitType::$name => stringify!($name)),* }
            }
        }
    };
}

wait_types!(
    // Log
    WRITELOG, LOGBUFFER, LOGMGR_QUEUE, LOG_RATE_GOVERNOR,
    // Buffer latches (page in memory) and buffer I/O latches (page being read or written)
    PAGELATCH_NL, PAGELATCH_KP, PAGELATCH_SH, PAGELATCH_UP, PAGELATCH_EX, PAGELATCH_DT,
    PAGEIOLATCH_NL, PAGEIOLATCH_KP, PAGEIOLATCH_SH, PAGEIOLATCH_UP, PAGEIOLATCH_EX, PAGEIOLATCH_DT,
    // Non-buffer latches
    LATCH_NL, LATCH_KP, LATCH_SH, LATCH_UP, LATCH_EX, LATCH_DT,
    // Locks
    LCK_M_SCH_S, LCK_M_SCH_M, LCK_M_S, LCK_M_U, LCK_M_X, LCK_M_IS, LCK_M_IU, LCK_M_IX,
    LCK_M_SIU, LCK_M_SIX, LCK_M_UIX, LCK_M_BU, LCK_M_RS_S, LCK_M_RS_U, LCK_M_RIn_NL,
    LCK_M_RIn_S, LCK_M_RIn_U, LCK_M_RIn_X, LCK_M_RX_S, LCK_M_RX_U, LCK_M_RX_X,
    // Background tasks and scheduling
    CHECKPOINT_QUEUE, LAZYWRITER_SLEEP, DIRTY_PAGE_POLL, SOS_SCHEDULER_YIELD, SLEEP_TASK,
    IO_COMPLETION, WRITE_COMPLETION, ASYNC_IO_COMPLETION, BACKUPIO, BACKUPBUFFER,
    // Network, clients, statements
    ASYNC_NETWORK_IO, WAITFOR, XE_DISPATCHER_WAIT, XE_TIMER_EVENT, SQLTRACE_INCREMENTAL_FLUSH_SLEEP,
    DBCC_OBJECT_METADATA, CXPACKET, THREADPOOL, RESOURCE_SEMAPHORE, PREEMPTIVE_OS_FLUSHFILEBUFFERS,
);

/// One row of a wait table, kept in microseconds.
#[derive(Default)]
struct WaitCounter {
    waiting_tasks: AtomicU64,
    wait_us: AtomicU64,
    max_wait_us: AtomicU64,
    signal_wait_us: AtomicU64,
}

/// A wait table: one counter per wait type. Used for the instance and for each session.
pub struct WaitStats {
    counters: Box<[WaitCounter]>,
}

/// A copy of one wait type's row, in SQL Server's units (milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitSnapshot {
    pub wait_type: WaitType,
    pub waiting_tasks_count: u64,
    pub wait_time_ms: u64,
    pub max_wait_time_ms: u64,
    pub signal_wait_time_ms: u64,
    /// Total wait in microseconds, for callers that want more resolution than the DMV.
    pub wait_time_us: u64,
}

impl Default for WaitStats {
    fn default() -> Self {
        WaitStats { counters: (0..WaitType::COUNT).map(|_| WaitCounter::default()).collect() }
    }
}

impl WaitStats {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one finished wait. `signal` is the part spent runnable but not running.
    #[inline]
    pub fn add(&self, wt: WaitType, wait: Duration, signal: Duration) {
        let c = &self.counters[wt as usize];
        let us = wait.as_micros() as u64;
        c.waiting_tasks.fetch_add(1, Relaxed);
        c.wait_us.fetch_add(us, Relaxed);
        if us > c.max_wait_us.load(Relaxed) {
            c.max_wait_us.fetch_max(us, Relaxed);
        }
        let sus = signal.as_micros() as u64;
        if sus != 0 {
            c.signal_wait_us.fetch_add(sus, Relaxed);
        }
    }

    pub fn get(&self, wt: WaitType) -> WaitSnapshot {
        let c = &self.counters[wt as usize];
        let wait_us = c.wait_us.load(Relaxed);
        WaitSnapshot {
            wait_type: wt,
            waiting_tasks_count: c.waiting_tasks.load(Relaxed),
            wait_time_ms: wait_us / 1000,
            max_wait_time_ms: c.max_wait_us.load(Relaxed) / 1000,
            signal_wait_time_ms: c.signal_wait_us.load(Relaxed) / 1000,
            wait_time_us: wait_us,
        }
    }

    /// Rows with at least one wait, as the DMVs list them.
    pub fn snapshot(&self) -> Vec<WaitSnapshot> {
        WaitType::ALL.iter().map(|&w| self.get(w)).filter(|s| s.waiting_tasks_count > 0).collect()
    }

    /// DBCC SQLPERF('sys.dm_os_wait_stats', CLEAR).
    pub fn clear(&self) {
        for c in self.counters.iter() {
            c.waiting_tasks.store(0, Relaxed);
            c.wait_us.store(0, Relaxed);
            c.max_wait_us.store(0, Relaxed);
            c.signal_wait_us.store(0, Relaxed);
        }
    }
}

/// The instance-wide table (sys.dm_os_wait_stats).
pub fn instance_waits() -> &'static WaitStats {
    static INSTANCE: OnceLock<WaitStats> = OnceLock::new();
    INSTANCE.get_or_init(WaitStats::new)
}

thread_local! {
    static CURRENT_SESSION: RefCell<Option<Arc<WaitStats>>> = const { RefCell::new(None) };
}

/// Records a finished wait in the instance table and the current session's table.
#[inline]
pub fn record_wait(wt: WaitType, wait: Duration, signal: Duration) {
    instance_waits().add(wt, wait, signal);
    CURRENT_SESSION.with(|s| {
        if let Some(s) = &*s.borrow() {
            s.add(wt, wait, signal);
        }
    });
}

/// Installs a session's wait table on this thread for the life of the scope (a worker
/// runs one request at a time; the scope restores whatever was there before).
pub struct SessionScope {
    previous: Option<Arc<WaitStats>>,
}

impl SessionScope {
    pub fn enter(stats: Arc<WaitStats>) -> SessionScope {
        let previous = CURRENT_SESSION.with(|s| s.borrow_mut().replace(stats));
        SessionScope { previous }
    }
}

impl Drop for SessionScope {
    fn drop(&mut self) {
        let prev = self.previous.take();
        CURRENT_SESSION.with(|s| *s.borrow_mut() = prev);
    }
}

/// Measures a wait from its start; `finish` (or drop) records it.
pub struct WaitTimer {
    wt: WaitType,
    start: Instant,
    done: bool,
}

#[inline]
pub fn begin_wait(wt: WaitType) -> WaitTimer {
    WaitTimer { wt, start: Instant::now(), done: false }
}

impl WaitTimer {
    #[inline]
    pub fn finish(mut self) {
        self.record();
    }

    #[inline]
    fn record(&mut self) {
        if !self.done {
            self.done = true;
            record_wait(self.wt, self.start.elapsed(), Duration::ZERO);
        }
    }
}

impl Drop for WaitTimer {
    fn drop(&mut self) {
        self.record();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_and_instance_tables() {
        let s = Arc::new(WaitStats::new());
        let before = instance_waits().get(WaitType::WRITELOG).waiting_tasks_count;
        {
            let _scope = SessionScope::enter(s.clone());
            record_wait(WaitType::WRITELOG, Duration::from_micros(2500), Duration::ZERO);
            record_wait(WaitType::WRITELOG, Duration::from_micros(1500), Duration::from_micros(100));
        }
        // Outside the scope the session table is untouched.
        record_wait(WaitType::WRITELOG, Duration::from_millis(1), Duration::ZERO);
        let w = s.get(WaitType::WRITELOG);
        assert_eq!(w.waiting_tasks_count, 2);
        assert_eq!(w.wait_time_ms, 4);
        assert_eq!(w.max_wait_time_ms, 2);
        assert_eq!(w.wait_time_us, 4000);
        assert!(instance_waits().get(WaitType::WRITELOG).waiting_tasks_count >= before + 3);
        assert_eq!(WaitType::WRITELOG.name(), "WRITELOG");
        s.clear();
        assert!(s.snapshot().is_empty());
    }
}
