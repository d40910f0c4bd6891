//! Schedulers in the manner of SQLOS: at most N session workers run at once (N defaults
//! to the number of CPUs), as each of SQL Server's non-preemptive schedulers runs one
//! worker at a time.
//!
//! Why: with 16 sessions on 2 cores the OS preempts whichever thread it likes, including
//! one that holds a hot latch (the last leaf page of an ever-increasing key, the tree
//! latch during a split); every other session then waits for that thread's next time
//! slice. With a scheduler per core, the threads that run are the ones that hold
//! schedulers, so a latch holder is not pushed off its core by another session.
//!
//! The protocol:
//! - A request takes a scheduler at a safe point ([`safe_point`], the start of a row
//!   operation) once it has run [`GRACE_ROW_OPS`] row operations, not when it starts
//!   ([`enter`]), and gives it back when it ends; nested requests on the same thread
//!   (dynamic SQL, internal sessions) share it. A request that writes no row or only a
//!   few (a lookup, `SELECT 1`, a one-row transaction) runs unscheduled: taking a
//!   scheduler at every request start cost each trivial request a hand-off (a park and
//!   an unpark when all schedulers were busy), and 16 connections sending one-row
//!   queries on 2 cores lost a third of their round trips (bench/tds: 0.83x PostgreSQL
//!   with schedulers taken at request start, 1.18x without schedulers). The hot-spot
//!   latches the schedulers protect are the ones row writers hold.
//! - A worker gives its scheduler up when it starts to wait (latch, lock, log, network,
//!   I/O: [`release`], called by [`crate::begin_wait`] and the latch wait paths), and
//!   takes one again only at a safe point ([`safe_point`]): the start of a row
//!   operation, where it holds no latch and no mutex. Taking a scheduler
//!   where a latch is held could deadlock (a scheduler holder waiting for that latch
//!   without giving its scheduler up); at a safe point it cannot.
//! - A worker that has run a quantum (4 ms, SQL Server's) while others wait for a
//!   scheduler yields at its next safe point (SOS_SCHEDULER_YIELD).
//! - Waiting for a scheduler is recorded as SOS_SCHEDULER_YIELD, all of it signal wait
//!   time (runnable, waiting for a CPU), as SQL Server reports runnable time.
//! - A worker waits at most [`MAX_SCHEDULER_WAIT`] for a scheduler; then it runs anyway
//!   (counted in [`Schedulers::overruns`]). Code that blocks without saying so (a plain
//!   mutex held across a safe point) can therefore only slow things down, never hang.
//!
//! Background threads (log writer, lazy writer, checkpoints) run outside the schedulers,
//! as SQL Server's preemptive system tasks do.

use std::cell::Cell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::*};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::Thread;
use std::time::{Duration, Instant};

use crate::waits::{record_wait, WaitType};

/// Row operations a request runs before it takes a scheduler: a short transaction (a
/// one-row insert and its commit) then never waits for one. Why: each hand-off is a park
/// and an unpark, and a request that takes a scheduler at its first row and gives it up
/// at its commit's WRITELOG wait paid one per transaction (bench/durability's one-row
/// transactions from 16 clients: 1.36x PostgreSQL with, 1.82x without schedulers). The
/// hot latches the schedulers protect are held by requests that write many rows, and
/// those take a scheduler after their first few.
pub const GRACE_ROW_OPS: u32 = 16;

/// SQL Server's scheduler quantum.
pub const QUANTUM: Duration = Duration::from_millis(4);
/// The longest a worker waits for a scheduler before it runs anyway.
pub const MAX_SCHEDULER_WAIT: Duration = Duration::from_millis(50);
/// The most schedulers an instance can have.
pub const MAX_SCHEDULERS: usize = 64;
/// `Waiter::granted` before a scheduler is handed over.
const NOT_GRANTED: usize = usize::MAX;

/// One waiting worker, woken when a scheduler is handed to it.
struct Waiter {
    thread: Thread,
    /// The scheduler id handed over, or NOT_GRANTED.
    granted: AtomicUsize,
    /// When it was handed over (microseconds since the diag epoch), for the delay.
    handed_at_us: AtomicU64,
}

struct Queue {
    /// Ids of the schedulers nobody holds.
    free: Vec<usize>,
    waiters: VecDeque<Arc<Waiter>>,
}

/// What one scheduler has done (sys.dm_os_schedulers).
#[derive(Default)]
struct Slot {
    busy: AtomicBool,
    /// Workers switched in.
    switches: AtomicU64,
    /// Quantum-end yields.
    yields: AtomicU64,
    /// Time workers held it, microseconds.
    held_us: AtomicU64,
    /// Time between a worker handing it over and the next one running, microseconds.
    delay_us: AtomicU64,
}

/// The instance's schedulers.
pub struct Schedulers {
    /// How many schedulers there are; 0 turns scheduling off.
    count: AtomicUsize,
    queue: Mutex<Queue>,
    slots: Vec<Slot>,
    /// Workers waiting for a scheduler (read without the mutex on the fast path).
    waiting: AtomicUsize,
    overruns: AtomicU64,
}

/// One row of sys.dm_os_schedulers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerRow {
    pub scheduler_id: usize,
    pub is_idle: bool,
    pub context_switches: u64,
    pub yields: u64,
    /// This scheduler's share of the one runnable queue (the shares add up to it).
    pub runnable: usize,
    pub held_ms: u64,
    pub delay_ms: u64,
}

/// What one scheduler-using thread knows about itself.
#[derive(Clone, Copy)]
struct Worker {
    /// Nesting depth of [`enter`]; 0 outside any request.
    depth: u32,
    /// The scheduler it holds now.
    holding: Option<usize>,
    /// When it last took its scheduler (the quantum counts from here).
    since: Option<Instant>,
    /// Row operations the request may still run before it takes a scheduler.
    grace: u32,
}

thread_local! {
    static WORKER: Cell<Worker> = const { Cell::new(Worker { depth: 0, holding: None, since: None, grace: 0 }) };
}

/// The process's schedulers (one instance per process, as with the other diag tables).
pub fn schedulers() -> &'static Schedulers {
    static S: OnceLock<Schedulers> = OnceLock::new();
    S.get_or_init(|| {
        let n = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1).min(MAX_SCHEDULERS);
        Schedulers {
            count: AtomicUsize::new(n),
            queue: Mutex::new(Queue { free: (0..n).rev().collect(), waiters: VecDeque::new() }),
            slots: (0..MAX_SCHEDULERS).map(|_| Slot::default()).collect(),
            waiting: AtomicUsize::new(0),
            overruns: AtomicU64::new(0),
        }
    })
}

fn now_us() -> u64 {
    crate::epoch().elapsed().as_micros() as u64
}

impl Schedulers {
    /// Sets the number of schedulers (0: no scheduling, every worker runs at once; at
    /// most [`MAX_SCHEDULERS`]). Workers holding a scheduler keep it until they give it
    /// back.
    pub fn configure(&self, count: usize) {
        let count = count.min(MAX_SCHEDULERS);
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        self.count.store(count, Release);
        q.free = (0..count).rev().filter(|&i| !self.slots[i].busy.load(Acquire)).collect();
        // Newly free schedulers go to waiters; with scheduling off, everyone runs.
        while !q.waiters.is_empty() && (!q.free.is_empty() || count == 0) {
            let id = if count == 0 { NOT_GRANTED - 1 } else { q.free.pop().unwrap_or(0) };
            if let Some(w) = q.waiters.pop_front() {
                self.hand_over(w, id);
            }
        }
    }

    /// The number of schedulers.
    pub fn count(&self) -> usize {
        self.count.load(Acquire)
    }

    /// Workers waiting for a scheduler now (the runnable queue).
    pub fn runnable(&self) -> usize {
        self.waiting.load(Acquire)
    }

    /// Quantum-end yields so far, all schedulers.
    pub fn yields(&self) -> u64 {
        self.slots.iter().map(|s| s.yields.load(Relaxed)).sum()
    }

    /// Times a worker gave up waiting for a scheduler and ran anyway.
    pub fn overruns(&self) -> u64 {
        self.overruns.load(Relaxed)
    }

    /// sys.dm_os_schedulers: one row per scheduler.
    pub fn rows(&self) -> Vec<SchedulerRow> {
        let n = self.count();
        let runnable = self.runnable();
        (0..n)
            .map(|i| {
                let s = &self.slots[i];
                SchedulerRow {
                    scheduler_id: i,
                    is_idle: !s.busy.load(Acquire),
                    context_switches: s.switches.load(Relaxed),
                    yields: s.yields.load(Relaxed),
                    runnable: runnable / n + usize::from(i < runnable % n),
                    held_ms: s.held_us.load(Relaxed) / 1000,
                    delay_ms: s.delay_us.load(Relaxed) / 1000,
                }
            })
            .collect()
    }

    fn hand_over(&self, w: Arc<Waiter>, id: usize) {
        self.waiting.fetch_sub(1, AcqRel);
        if let Some(s) = self.slots.get(id) {
            s.busy.store(true, Release);
        }
        w.handed_at_us.store(now_us(), Release);
        w.granted.store(id, Release);
        w.thread.unpark();
    }

    /// Takes a scheduler, waiting in line if none is free: its id, or None when the wait
    /// timed out or scheduling is off (the worker runs without one).
    fn acquire(&self) -> Option<usize> {
        let waiter = {
            let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
            if self.count.load(Acquire) == 0 {
                return None;
            }
            if q.waiters.is_empty() {
                if let Some(id) = q.free.pop() {
                    drop(q);
                    let s = &self.slots[id];
                    s.busy.store(true, Release);
                    s.switches.fetch_add(1, Relaxed);
                    return Some(id);
                }
            }
            let w = Arc::new(Waiter {
                thread: std::thread::current(),
                granted: AtomicUsize::new(NOT_GRANTED),
                handed_at_us: AtomicU64::new(0),
            });
            q.waiters.push_back(w.clone());
            self.waiting.fetch_add(1, AcqRel);
            w
        };
        let start = Instant::now();
        let deadline = start + MAX_SCHEDULER_WAIT;
        let granted = loop {
            let g = waiter.granted.load(Acquire);
            if g != NOT_GRANTED {
                break Some(g);
            }
            let now = Instant::now();
            if now >= deadline {
                let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
                let g = waiter.granted.load(Acquire);
                if g != NOT_GRANTED {
                    break Some(g);
                }
                if let Some(i) = q.waiters.iter().position(|w| Arc::ptr_eq(w, &waiter)) {
                    q.waiters.remove(i);
                    self.waiting.fetch_sub(1, AcqRel);
                }
                self.overruns.fetch_add(1, Relaxed);
                break None;
            }
            std::thread::park_timeout(deadline - now);
        };
        let waited = start.elapsed();
        record_wait(WaitType::SOS_SCHEDULER_YIELD, waited, waited);
        // Scheduling turned off while this worker waited: it runs without one.
        let granted = granted.filter(|&id| id < MAX_SCHEDULERS);
        if let Some(s) = granted.map(|id| &self.slots[id]) {
            s.switches.fetch_add(1, Relaxed);
            let handed = waiter.handed_at_us.load(Acquire);
            s.delay_us.fetch_add(now_us().saturating_sub(handed), Relaxed);
        }
        granted
    }

    /// Gives scheduler `id` back: to the first waiter if there is one.
    fn give_back(&self, id: usize, held: Duration) {
        let s = &self.slots[id];
        s.held_us.fetch_add(held.as_micros() as u64, Relaxed);
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        if id >= self.count.load(Acquire) {
            // The instance has fewer schedulers now: this one retires.
            s.busy.store(false, Release);
            return;
        }
        if let Some(w) = q.waiters.pop_front() {
            self.hand_over(w, id);
        } else {
            s.busy.store(false, Release);
            q.free.push(id);
        }
    }
}

/// A request's hold on the schedulers; dropping it ends the request's turn.
pub struct RequestGuard {
    _not_send: std::marker::PhantomData<*const ()>,
}

/// Starts a request on this thread (nested requests share the outermost one's turn). It
/// takes no scheduler yet: the first [`safe_point`] does.
pub fn enter() -> RequestGuard {
    let mut w = WORKER.with(Cell::get);
    if w.depth == 0 {
        w.grace = GRACE_ROW_OPS;
    }
    w.depth += 1;
    WORKER.with(|c| c.set(w));
    RequestGuard { _not_send: std::marker::PhantomData }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let mut w = WORKER.with(Cell::get);
        w.depth = w.depth.saturating_sub(1);
        WORKER.with(|c| c.set(w));
        if w.depth == 0 {
            release();
        }
    }
}

/// Takes a scheduler for this thread (it holds none).
fn take() {
    let held = schedulers().acquire();
    WORKER.with(|c| {
        let mut w = c.get();
        w.holding = held;
        w.since = Some(Instant::now());
        c.set(w);
    });
}

/// Gives this thread's scheduler up before a wait (no-op when it holds none). It takes
/// one again at its next [`safe_point`].
#[inline]
pub fn release() {
    let held = WORKER.with(|c| {
        let mut w = c.get();
        let held = w.holding.take().map(|id| (id, w.since.map(|t| t.elapsed()).unwrap_or_default()));
        if held.is_some() {
            c.set(w);
        }
        held
    });
    if let Some((id, time)) = held {
        schedulers().give_back(id, time);
    }
}

/// Tries `try_take` again for up to [`SPIN_LIMIT`] before the caller gives its
/// scheduler up and blocks. Why: a hot page latch (the last leaf of an ever-increasing
/// key) is held for a microsecond or two by a worker running on the other CPU; blocking
/// at once hands the scheduler to another session, which then meets the same latch, and
/// each such hand-off is a park and an unpark (SQL Server's latches spin briefly before
/// they suspend, for the same reason). Bounded in time, not in tries: a spin-loop hint
/// costs from a few cycles to over a hundred depending on the CPU.
#[inline]
pub fn spin_try<G>(mut try_take: impl FnMut() -> Option<G>) -> Option<G> {
    let start = Instant::now();
    loop {
        for _ in 0..32 {
            std::hint::spin_loop();
        }
        if let Some(g) = try_take() {
            return Some(g);
        }
        if start.elapsed() >= SPIN_LIMIT {
            return None;
        }
    }
}

/// How long [`spin_try`] keeps trying: a few times a typical hold of a hot page latch.
pub const SPIN_LIMIT: Duration = Duration::from_micros(8);

/// Work queued for the next safe point of a request in its database (see
/// [`run_at_safe_point`]).
static SAFE_POINT_PENDING: AtomicBool = AtomicBool::new(false);
type SafePointJob = Box<dyn FnOnce() + Send>;
static SAFE_POINT_JOBS: Mutex<Vec<(u16, SafePointJob)>> = Mutex::new(Vec::new());

/// Queues work that must run on a request's thread where it holds no latch and no
/// mutex: the next request to reach [`safe_point_in`] database `db` (the start of a row
/// operation there) runs it first. A log that refused a reservation asks for its
/// checkpoint this way, so that a request writing to that database (not one of another
/// database's) waits for it.
pub fn run_at_safe_point(db: u16, job: SafePointJob) {
    SAFE_POINT_JOBS.lock().unwrap_or_else(|e| e.into_inner()).push((db, job));
    SAFE_POINT_PENDING.store(true, Release);
}

/// A safe point (see [`safe_point`]) at the start of a row operation in database `db`:
/// runs the work queued for that database, if any.
#[inline]
pub fn safe_point_in(db: u16) {
    if SAFE_POINT_PENDING.load(Relaxed) && WORKER.with(Cell::get).depth > 0 {
        run_safe_point_jobs(db);
    }
}

#[cold]
#[inline(never)]
fn run_safe_point_jobs(db: u16) {
    let jobs: Vec<SafePointJob> = {
        let mut q = SAFE_POINT_JOBS.lock().unwrap_or_else(|e| e.into_inner());
        let (mine, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut *q).into_iter().partition(|(d, _)| *d == db);
        *q = rest;
        SAFE_POINT_PENDING.store(!q.is_empty(), Release);
        mine.into_iter().map(|(_, j)| j).collect()
    };
    for job in jobs {
        job();
    }
}

/// A point where this thread holds no latch and no mutex: a worker inside a request
/// that gave its scheduler up takes one again here, and one that has used up its
/// quantum while others wait yields.
#[inline]
pub fn safe_point() {
    let w = WORKER.with(Cell::get);
    if w.depth == 0 {
        return;
    }
    let Some(id) = w.holding else {
        if schedulers().count() > 0 {
            if w.grace > 0 {
                WORKER.with(|c| c.set(Worker { grace: w.grace - 1, ..w }));
                return;
            }
            take();
        }
        return;
    };
    if schedulers().waiting.load(Relaxed) == 0 {
        return;
    }
    if w.since.is_some_and(|t| t.elapsed() >= QUANTUM) {
        schedulers().slots[id].yields.fetch_add(1, Relaxed);
        release();
        take();
    }
}

/// Does this thread hold a scheduler? (tests)
pub fn holding() -> bool {
    WORKER.with(|c| c.get().holding.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The safe points of a request's first row operations: past them it holds a
    /// scheduler (when one is free).
    fn past_grace() {
        for _ in 0..=GRACE_ROW_OPS {
            safe_point();
        }
    }

    // One test function: the schedulers are process-wide, and tests run in parallel.
    #[test]
    fn schedulers_limit_running_workers_and_waits_give_them_up() {
        let s = schedulers();
        s.configure(1);
        {
            let _r = enter();
            for _ in 0..GRACE_ROW_OPS {
                safe_point();
                assert!(!holding(), "a request's first few row operations run unscheduled");
            }
            safe_point();
            assert!(holding());
            // A second thread cannot take the only scheduler while this one holds it...
            let t0 = Instant::now();
            let h = std::thread::spawn(|| {
                let _r = enter();
                past_grace();
                holding()
            });
            std::thread::sleep(Duration::from_millis(20));
            assert_eq!(s.runnable(), 1);
            // ...until this one starts a wait.
            release();
            assert!(h.join().unwrap(), "the second worker got the scheduler");
            assert!(t0.elapsed() >= Duration::from_millis(20));
            // Back at a safe point, this worker takes it again.
            safe_point();
            assert!(holding());
        }
        assert!(!holding());
        // A worker that cannot get a scheduler in time runs anyway.
        let _r = enter();
        past_grace();
        let before = s.overruns();
        let h = std::thread::spawn(|| {
            let _r = enter();
            past_grace();
            holding()
        });
        assert!(!h.join().unwrap());
        assert_eq!(s.overruns(), before + 1);
        drop(_r);
        // Nested requests share the outer request's scheduler.
        {
            let _a = enter();
            past_grace();
            let _b = enter();
            assert!(holding());
            drop(_b);
            assert!(holding());
        }
        // The view: one row per scheduler, none busy now.
        let rows = s.rows();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].is_idle && rows[0].context_switches >= 4, "{rows:?}");
        s.configure(0);
        let _r = enter();
        safe_point();
        assert!(!holding());
        drop(_r);
        s.configure(std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    }
}
