//! Wait statistics: what sys.dm_os_wait_stats and sys.dm_exec_session_wait_stats show.
//!
//! A wait is recorded once, when it ends, into the instance table and into the table of
//! the session whose request runs on this thread (if any). Times are kept in microseconds
//! and shown in milliseconds, so many short waits still add up correctly.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering::Relaxed};
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

// Kept as grouped lines rather than rustfmt's one name per line, which hides the groups.
#[rustfmt::skip]
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

/// One row of a wait table, kept in microseconds. Each row has a cache line to itself:
/// the instance table is updated by every core, and two wait types sharing a line made
/// unrelated waits on two cores 3-4x slower (false sharing, measured by
/// examples/wait_cost.rs). The price is ~4.5 KB per session table.
#[derive(Default)]
#[repr(align(64))]
struct WaitCounter {
    waiting_tasks: AtomicU64,
    wait_us: AtomicU64,
    max_wait_us: AtomicU64,
    signal_wait_us: AtomicU64,
}

/// A wait table: one counter per wait type. Used for the instance and for each session.
pub struct WaitStats {
    counters: Box<[WaitCounter]>,
    // What sys.dm_exec_requests shows of a session: the wait in progress on the thread
    // running its request (wait type + 1, 0 = none) since when (microseconds after the
    // diagnostics epoch), and the last wait recorded. Only session tables use them; the
    // three values are read without a common lock, so a reader may pair one wait's type
    // with another's start, as SQL Server's DMV may.
    current: AtomicU16,
    current_since_us: AtomicU64,
    last: AtomicU16,
    /// All waits, in microseconds (a request's CPU time is its elapsed time less this).
    total_wait_us: AtomicU64,
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
        WaitStats {
            counters: (0..WaitType::COUNT).map(|_| WaitCounter::default()).collect(),
            current: AtomicU16::new(0),
            current_since_us: AtomicU64::new(0),
            last: AtomicU16::new(0),
            total_wait_us: AtomicU64::new(0),
        }
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
        self.total_wait_us.fetch_add(us, Relaxed);
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

    /// The time of all waits recorded in this table (not cleared by [`WaitStats::clear`],
    /// so differences of two readings are the waits in between).
    pub fn total_wait(&self) -> Duration {
        Duration::from_micros(self.total_wait_us.load(Relaxed))
    }

    /// Rows with at least one wait, as sys.dm_exec_session_wait_stats lists them.
    pub fn snapshot(&self) -> Vec<WaitSnapshot> {
        WaitType::ALL.iter().map(|&w| self.get(w)).filter(|s| s.waiting_tasks_count > 0).collect()
    }

    /// Every wait type, including those never waited on: sys.dm_os_wait_stats lists all of
    /// them (tools filter the zero rows themselves), so the instance DMV reads this.
    pub fn snapshot_all(&self) -> Vec<WaitSnapshot> {
        WaitType::ALL.iter().map(|&w| self.get(w)).collect()
    }

    /// The wait in progress on the session's thread and how long it has lasted (waits
    /// timed with `begin_wait`; waits recorded after the fact never show as current).
    pub fn current_wait(&self) -> Option<(WaitType, Duration)> {
        let c = self.current.load(Relaxed);
        let wt = *WaitType::ALL.get(usize::from(c).checked_sub(1)?)?;
        let since = Duration::from_micros(self.current_since_us.load(Relaxed));
        Some((wt, crate::uptime().saturating_sub(since)))
    }

    /// The last wait recorded in this table, or the current one.
    pub fn last_wait(&self) -> Option<WaitType> {
        let c = self.current.load(Relaxed);
        let c = if c != 0 { c } else { self.last.load(Relaxed) };
        WaitType::ALL.get(usize::from(c).checked_sub(1)?).copied()
    }

    #[inline]
    fn enter_wait(&self, wt: WaitType, start: Instant) {
        let since = start.saturating_duration_since(crate::epoch()).as_micros() as u64;
        self.current_since_us.store(since, Relaxed);
        self.current.store(wt as u16 + 1, Relaxed);
    }

    #[inline]
    fn leave_wait(&self, wt: WaitType, timed: bool) {
        if timed {
            self.current.store(0, Relaxed);
        }
        self.last.store(wt as u16 + 1, Relaxed);
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
    /// The cancel flag of the request this thread runs (attention, KILL, shutdown): waits
    /// that could last indefinitely (locks) poll it, see [`cancelled`].
    static CURRENT_CANCEL: RefCell<Option<Arc<AtomicBool>>> = const { RefCell::new(None) };
}

/// Whether the request this thread runs has been cancelled (an attention, KILL, or the
/// server shutting down). Waits with no bound of their own poll this so that a waiting
/// request always ends when asked to.
#[inline]
pub fn cancelled() -> bool {
    CURRENT_CANCEL.with(|c| c.borrow().as_ref().is_some_and(|f| f.load(Relaxed)))
}

/// Records a finished wait in the instance table and the current session's table.
#[inline]
pub fn record_wait(wt: WaitType, wait: Duration, signal: Duration) {
    record(wt, wait, signal, false);
}

#[inline]
fn record(wt: WaitType, wait: Duration, signal: Duration, timed: bool) {
    CURRENT_SESSION.with(|s| record_in(s.borrow().as_deref(), wt, wait, signal, timed));
}

/// A finished wait in the instance table and `session`'s (`timed`: it was the
/// session's current wait, which it leaves).
#[inline]
fn record_in(session: Option<&WaitStats>, wt: WaitType, wait: Duration, signal: Duration, timed: bool) {
    instance_waits().add(wt, wait, signal);
    if let Some(s) = session {
        s.add(wt, wait, signal);
        s.leave_wait(wt, timed);
    }
}

/// The wait table of the session this thread works for, if any: for a wait that ends
/// on another thread (a commit whose WRITELOG wait the log writer completes).
pub fn current_session() -> Option<Arc<WaitStats>> {
    CURRENT_SESSION.with(|s| s.borrow().clone())
}

/// Records a finished wait in the instance table and in `session`'s table (a wait that
/// ended on a thread other than the session's, see [`current_session`]).
pub fn record_wait_for(session: Option<&WaitStats>, wt: WaitType, wait: Duration) {
    record_in(session, wt, wait, Duration::ZERO, false);
}

/// Installs a session's wait table on this thread for the life of the scope (a worker
/// runs one request at a time; the scope restores whatever was there before).
pub struct SessionScope {
    previous: Option<Arc<WaitStats>>,
    previous_cancel: Option<Option<Arc<AtomicBool>>>,
}

impl SessionScope {
    pub fn enter(stats: Arc<WaitStats>) -> SessionScope {
        let previous = CURRENT_SESSION.with(|s| s.borrow_mut().replace(stats));
        SessionScope { previous, previous_cancel: None }
    }

    /// Also installs the request's cancel flag (see [`cancelled`]) for the scope.
    pub fn with_cancel(mut self, cancel: Arc<AtomicBool>) -> SessionScope {
        let prev = CURRENT_CANCEL.with(|c| c.borrow_mut().replace(cancel));
        if self.previous_cancel.is_none() {
            self.previous_cancel = Some(prev);
        }
        self
    }
}

impl Drop for SessionScope {
    fn drop(&mut self) {
        let prev = self.previous.take();
        CURRENT_SESSION.with(|s| *s.borrow_mut() = prev);
        if let Some(c) = self.previous_cancel.take() {
            CURRENT_CANCEL.with(|s| *s.borrow_mut() = c);
        }
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
    // A waiting worker gives its scheduler up (see `sched`).
    crate::sched::release();
    let start = Instant::now();
    CURRENT_SESSION.with(|s| {
        if let Some(s) = &*s.borrow() {
            s.enter_wait(wt, start);
        }
    });
    WaitTimer { wt, start, done: false }
}

impl WaitTimer {
    #[inline]
    pub fn finish(mut self) {
        self.record();
    }

    /// Ends the wait, counting it only if it lasted `min` or longer: for a call that
    /// usually returns at once (a socket write) but must show as the session's current
    /// wait while it blocks.
    #[inline]
    pub fn finish_if_longer(mut self, min: Duration) -> Duration {
        let took = self.start.elapsed();
        self.done = true;
        if took >= min {
            record(self.wt, took, Duration::ZERO, true);
        } else {
            CURRENT_SESSION.with(|s| {
                if let Some(s) = &*s.borrow() {
                    s.current.store(0, Relaxed);
                }
            });
        }
        took
    }

    #[inline]
    fn record(&mut self) {
        if !self.done {
            self.done = true;
            record(self.wt, self.start.elapsed(), Duration::ZERO, true);
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

    #[test]
    fn concurrent_waits_add_up_exactly() {
        let t = Arc::new(WaitStats::new());
        let threads: Vec<_> = (0..4u64)
            .map(|i| {
                let t = t.clone();
                std::thread::spawn(move || {
                    for j in 0..10_000u64 {
                        let us = if i == 2 && j == 5_000 { 7_500 } else { 250 };
                        t.add(WaitType::PAGEIOLATCH_SH, Duration::from_micros(us), Duration::from_micros(10));
                        // A neighbour in the table, to catch rows bleeding into each other.
                        t.add(WaitType::PAGEIOLATCH_UP, Duration::from_micros(1), Duration::ZERO);
                    }
                })
            })
            .collect();
        for h in threads {
            assert!(h.join().is_ok());
        }
        let w = t.get(WaitType::PAGEIOLATCH_SH);
        assert_eq!(w.waiting_tasks_count, 40_000);
        assert_eq!(w.wait_time_us, 39_999 * 250 + 7_500);
        assert_eq!(w.wait_time_ms, (39_999 * 250 + 7_500) / 1000);
        assert_eq!(w.max_wait_time_ms, 7);
        assert_eq!(w.signal_wait_time_ms, 400);
        let u = t.get(WaitType::PAGEIOLATCH_UP);
        assert_eq!((u.waiting_tasks_count, u.wait_time_us, u.max_wait_time_ms), (40_000, 40_000, 0));
        assert_eq!(t.snapshot().len(), 2);
        assert_eq!(t.snapshot_all().len(), WaitType::COUNT);
        t.clear();
        assert!(t.snapshot().is_empty());
        assert!(t.snapshot_all().iter().all(|r| r.waiting_tasks_count == 0 && r.max_wait_time_ms == 0));
    }

    #[test]
    fn current_and_last_wait() {
        let s = Arc::new(WaitStats::new());
        let _scope = SessionScope::enter(s.clone());
        assert_eq!(s.current_wait(), None);
        assert_eq!(s.last_wait(), None);
        let t = begin_wait(WaitType::WRITELOG);
        std::thread::sleep(Duration::from_millis(2));
        let (wt, d) = s.current_wait().unwrap_or((WaitType::WAITFOR, Duration::ZERO));
        assert_eq!(wt, WaitType::WRITELOG);
        assert!(d >= Duration::from_millis(1), "{d:?}");
        assert_eq!(s.last_wait(), Some(WaitType::WRITELOG));
        t.finish();
        assert_eq!(s.current_wait(), None);
        record_wait(WaitType::PAGEIOLATCH_SH, Duration::from_micros(10), Duration::ZERO);
        assert_eq!(s.last_wait(), Some(WaitType::PAGEIOLATCH_SH));
        assert_eq!(s.current_wait(), None);
    }

    #[test]
    fn timer_records_once() {
        let s = Arc::new(WaitStats::new());
        let _scope = SessionScope::enter(s.clone());
        begin_wait(WaitType::WAITFOR).finish();
        drop(begin_wait(WaitType::WAITFOR));
        {
            // Nested scopes restore the outer session's table.
            let inner = Arc::new(WaitStats::new());
            let _inner_scope = SessionScope::enter(inner.clone());
            record_wait(WaitType::WAITFOR, Duration::ZERO, Duration::ZERO);
            assert_eq!(inner.get(WaitType::WAITFOR).waiting_tasks_count, 1);
        }
        record_wait(WaitType::WAITFOR, Duration::ZERO, Duration::ZERO);
        assert_eq!(s.get(WaitType::WAITFOR).waiting_tasks_count, 3);
    }
}
