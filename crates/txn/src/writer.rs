//! The database's background checkpoint task: automatic checkpoints, or the recovery
//! writer of indirect checkpoints, depending on TARGET_RECOVERY_TIME.
//!
//! One thread per database, started by [`TxnDb::start_background_checkpoints`] once the
//! database is open (never during recovery, whose undo must not be checkpointed half
//! way) and stopped by [`TxnDb::stop_background_checkpoints`] or [`TxnDb::close`]. It
//! holds the database only weakly, so dropping the last handle also ends it. Every
//! `poll` (100 ms by default) it wakes — its sleep is recorded as CHECKPOINT_QUEUE in
//! automatic mode and DIRTY_PAGE_POLL as a recovery writer, as in SQL Server — and:
//!
//! **Automatic** (TARGET_RECOVERY_TIME = 0). Runs a checkpoint (which writes every dirty
//! page) when
//! - the log written since the last checkpoint began would take longer than the
//!   recovery interval to redo, at the estimated replay rate
//!   ([`RedoEstimate::log_bytes_per_sec`]): with the defaults, 64 MB/s x 60 s = 3.75 GB
//!   of log; or
//! - the log file is at least 70% full and 5% of it has been written since the last
//!   checkpoint (SQL Server's SIMPLE-model trigger; the 5% keeps a log that a long
//!   transaction holds from triggering a checkpoint every poll).
//!
//! **Recovery writer** (TARGET_RECOVERY_TIME = T > 0). Estimates the redo time a crash
//! would cause as *dirty pages x page cost + log bytes from the oldest recLSN / replay
//! rate* ([`RedoEstimate`]). Above half of T it writes the oldest dirty pages
//! (`flush_oldest`, 64 at a time) until the estimate is at 40% of T. Then, since recovery
//! starts from the last *checkpoint's* redo start, not from today's oldest recLSN, it
//! writes a light checkpoint (CheckpointKind::Indirect) when the estimate from the last
//! checkpoint passes 75% of T and a new redo start would cut it by at least 25% of T, or
//! when the log is 70% full as above. So the redo time of a crash stays under T while the writer keeps
//! up with the workload.
//!
//! Errors (a failing disk) are written to the error log once per run of failures; the
//! task backs off and keeps trying, as SQL Server's does.

use crate::checkpoint::{effective_recovery_interval, CheckpointKind};
use crate::log::{LogManager, Lsn};
use crate::xact::TxnDb;
use diag::counters::objects::BUFFER_MANAGER;
use diag::{Counter, CounterType, WaitType};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use storage::Result;

/// The recovery writer starts writing above this share of the target...
const WRITER_START: f64 = 0.5;
/// ...and stops once the estimate is down to this share.
const WRITER_GOAL: f64 = 0.4;
/// A light checkpoint when the redo from the last checkpoint passes this share.
const LIGHT_CHECKPOINT_AT: f64 = 0.75;
/// ...if that wins back at least this share of the target.
const LIGHT_CHECKPOINT_GAIN: f64 = 0.25;
/// Pages per `flush_oldest` call: the estimate is re-read between batches.
const WRITER_BATCH: usize = 64;
/// Log fullness that triggers a checkpoint (SIMPLE recovery model).
const LOG_FULL_PERCENT: f64 = 70.0;
/// Default poll interval of the background task.
const DEFAULT_POLL: Duration = Duration::from_millis(100);

/// Buffer Manager / Background writer pages/sec: pages the recovery writer wrote.
fn background_writer_pages() -> &'static Counter {
    static C: OnceLock<Counter> = OnceLock::new();
    C.get_or_init(|| {
        diag::registry().counter(
            BUFFER_MANAGER,
            "Background writer pages/sec",
            "",
            CounterType::PERF_COUNTER_BULK_COUNT,
        )
    })
}

/// The background task's shared state (the thread holds this, not the database).
pub(crate) struct Background {
    handle: Mutex<Option<JoinHandle<()>>>,
    stop: AtomicBool,
    /// Set by `wake`; the condvar ends the task's sleep early.
    woken: Mutex<bool>,
    cv: Condvar,
    poll_us: AtomicU64,
    pages_written: AtomicU64,
    checkpoints: AtomicU64,
    /// Set when the log asks for a checkpoint (it is 70% full): the task runs one as
    /// soon as it wakes.
    log_request: AtomicBool,
}

impl Default for Background {
    fn default() -> Self {
        Background {
            handle: Mutex::new(None),
            stop: AtomicBool::new(false),
            woken: Mutex::new(false),
            cv: Condvar::new(),
            poll_us: AtomicU64::new(DEFAULT_POLL.as_micros() as u64),
            pages_written: AtomicU64::new(0),
            checkpoints: AtomicU64::new(0),
            log_request: AtomicBool::new(false),
        }
    }
}

impl Background {
    pub(crate) fn wake(&self) {
        *self.woken.lock() = true;
        self.cv.notify_all();
    }

    fn poll(&self) -> Duration {
        Duration::from_micros(self.poll_us.load(Ordering::Relaxed))
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Sleeps up to `d` (recording `wait` as an instance wait), or until woken or
    /// stopped. Returns false when the task must end.
    fn sleep(&self, d: Duration, wait: WaitType) -> bool {
        let t = Instant::now();
        {
            let mut woken = self.woken.lock();
            if !*woken && !self.stopping() {
                self.cv.wait_for(&mut woken, d);
            }
            *woken = false;
        }
        diag::instance_waits().add(wait, t.elapsed(), Duration::ZERO);
        !self.stopping()
    }
}

/// Log bytes from the record at `from` to the record at `to`: what redo between them
/// reads. Computed from the VLF layout (a VLF's FSeqNo and size), counting the partly
/// used first and last VLFs by their block offsets; VLFs between them that are no longer
/// listed (cannot happen while `from` is still needed) count as the average VLF size.
pub fn log_bytes_between(log: &LogManager, from: Lsn, to: Lsn) -> u64 {
    if from.is_null() || to <= from {
        return 0;
    }
    let sector = crate::log::SECTOR as u64;
    let at = |l: Lsn| u64::from(l.block()) * sector;
    if from.vlf_seq() == to.vlf_seq() {
        return at(to).saturating_sub(at(from));
    }
    let vlfs = log.vlf_info();
    let sizes: HashMap<u32, u64> = vlfs.iter().filter(|v| v.fseq_no != 0).map(|v| (v.fseq_no, v.size)).collect();
    let avg = if vlfs.is_empty() { 0 } else { vlfs.iter().map(|v| v.size).sum::<u64>() / vlfs.len() as u64 };
    let size = |seq: u32| sizes.get(&seq).copied().unwrap_or(avg);
    let mut total = size(from.vlf_seq()).saturating_sub(at(from)) + at(to);
    for seq in from.vlf_seq() + 1..to.vlf_seq() {
        total += size(seq);
    }
    total
}

impl TxnDb {
    /// Starts the background checkpoint task (automatic checkpoints or the recovery
    /// writer, following TARGET_RECOVERY_TIME). Call it once the database is open and
    /// recovered; calling it again while it runs does nothing.
    pub fn start_background_checkpoints(self: &Arc<Self>) {
        let bg = self.ckpt.background.clone();
        let mut handle = bg.handle.lock();
        if handle.as_ref().is_some_and(|h| !h.is_finished()) {
            return;
        }
        bg.stop.store(false, Ordering::Release);
        let weak = Arc::downgrade(self);
        // A log 70% full (or refusing a reservation) asks for a checkpoint at the next
        // safe point of any request: the 100 ms poll below can be too slow for a
        // statement that writes megabytes of log.
        let relief = weak.clone();
        self.log.set_pressure_relief(Some(Arc::new(move |urgent: bool| {
            if let Some(db) = relief.upgrade() {
                if !urgent {
                    // 70% full: this task checkpoints at once, beside the requests.
                    db.ckpt.background.log_request.store(true, Ordering::Release);
                    db.ckpt.background.wake();
                    return;
                }
                // A reservation was refused: the request that needs the space runs the
                // checkpoint itself, at its next safe point.
                if !checkpoint_frees_log(&db) {
                    return;
                }
                if let Err(e) = db.checkpoint(CheckpointKind::Automatic) {
                    diag::errorlog::log(
                        "spid15s",
                        &format!("The checkpoint of database ID {} that its log asked for failed: {e}", db.db.id),
                    );
                }
            }
        })));
        let task = bg.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("checkpoint db {}", self.db.id))
            .spawn(move || background_loop(weak, task));
        match spawned {
            Ok(h) => *handle = Some(h),
            Err(e) => diag::errorlog::log(
                "spid15s",
                &format!("Could not start the checkpoint task for database ID {}: {e}", self.db.id),
            ),
        }
    }

    /// Stops the background task and waits for it (a checkpoint it is running
    /// completes first).
    pub fn stop_background_checkpoints(&self) {
        let bg = &self.ckpt.background;
        bg.stop.store(true, Ordering::Release);
        bg.wake();
        let h = bg.handle.lock().take();
        if let Some(h) = h {
            // The task never panics by design; if it did, there is nothing to clean up.
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
    }

    /// How often the background task wakes (default 100 ms).
    pub fn set_background_poll(&self, poll: Duration) {
        self.ckpt.background.poll_us.store(poll.as_micros().clamp(1000, 60_000_000) as u64, Ordering::Relaxed);
        self.ckpt.background.wake();
    }

    /// Pages the recovery writer has written for this database.
    pub fn recovery_writer_pages(&self) -> u64 {
        self.ckpt.background.pages_written.load(Ordering::Relaxed)
    }

    /// Checkpoints the background task has run (automatic or indirect).
    pub fn background_checkpoints(&self) -> u64 {
        self.ckpt.background.checkpoints.load(Ordering::Relaxed)
    }

    /// Shuts the database down cleanly: stops the background task, takes an internal
    /// checkpoint (so the next open has nothing to redo), shuts the log down and detaches
    /// the database from the buffer pool. If the checkpoint fails the pages are dropped
    /// unwritten (the log has everything) and the error returned.
    pub fn close(&self) -> Result<()> {
        self.stop_background_checkpoints();
        let ckpt = self.checkpoint(CheckpointKind::Internal);
        self.log.shutdown();
        let pool = self.db.pool();
        match ckpt {
            Ok(_) => pool.detach(self.db.id),
            Err(e) => {
                pool.discard(self.db.id);
                let _ = pool.detach(self.db.id);
                Err(e)
            }
        }
    }
}

fn background_loop(weak: Weak<TxnDb>, bg: Arc<Background>) {
    let mut failures = 0u32;
    let mut indirect = true;
    loop {
        // Back off while failing: 2x the poll per consecutive failure, up to 64x.
        let delay = bg.poll() * (1u32 << failures.min(6));
        let wait = if indirect { WaitType::DIRTY_PAGE_POLL } else { WaitType::CHECKPOINT_QUEUE };
        if !bg.sleep(delay, wait) {
            return;
        }
        let Some(db) = weak.upgrade() else { return };
        let target = db.target_recovery_time();
        indirect = target > 0;
        let r = if bg.log_request.swap(false, Ordering::AcqRel) {
            // The log is filling: truncate it now, whatever the mode.
            if checkpoint_frees_log(&db) {
                run(&db, &bg, CheckpointKind::Automatic, effective_recovery_interval())
            } else {
                Ok(())
            }
        } else if indirect {
            recovery_writer_step(&db, &bg, Duration::from_secs(u64::from(target)))
        } else {
            automatic_step(&db, &bg)
        };
        match r {
            Ok(()) => failures = 0,
            Err(e) => {
                if failures == 0 {
                    diag::errorlog::log(
                        "spid15s",
                        &format!(
                            "The background checkpoint of database ID {} failed and will be retried: {e}",
                            db.db.id
                        ),
                    );
                }
                failures = failures.saturating_add(1);
            }
        }
    }
}

/// Whether a checkpoint can free log now: not when a transaction that began before the
/// last truncation point still holds it (ACTIVE_TRANSACTION); checkpointing again at
/// every new VLF would then only write pages.
fn checkpoint_frees_log(db: &TxnDb) -> bool {
    let oldest = db.active_transactions().iter().map(|a| a.first_lsn).filter(|&l| l != 0).min();
    !oldest.is_some_and(|o| o <= db.ckpt.kept_from.load(Ordering::Acquire))
}

/// The log is 70% full and 5% of it was written since the last checkpoint began.
fn log_nearly_full(db: &TxnDb) -> bool {
    let space = db.log.space();
    if space.used_percent < LOG_FULL_PERCENT {
        return false;
    }
    let since = db.last_checkpoint().map_or(u64::MAX, |s| log_bytes_between(&db.log, s.begin_lsn, db.log.end_lsn()));
    since.saturating_mul(20) >= space.size_bytes
}

fn automatic_step(db: &TxnDb, bg: &Background) -> Result<()> {
    let interval = effective_recovery_interval();
    let end = db.log.end_lsn();
    let Some(last) = db.last_checkpoint() else {
        // No checkpoint yet in this incarnation (attached without one): take one so there
        // is a starting point.
        return run(db, bg, CheckpointKind::Automatic, interval);
    };
    let log_bytes = log_bytes_between(&db.log, last.begin_lsn, end);
    let redo = db.redo_estimate().redo_time(0, log_bytes);
    if redo > interval || log_nearly_full(db) {
        run(db, bg, CheckpointKind::Automatic, interval)?;
    }
    Ok(())
}

fn recovery_writer_step(db: &TxnDb, bg: &Background, target: Duration) -> Result<()> {
    let mut work = db.estimated_redo();
    if work.redo_time > target.mul_f64(WRITER_START) {
        let pool = db.db.pool();
        let started = Instant::now();
        let mut written = 0u64;
        while work.redo_time > target.mul_f64(WRITER_GOAL) && !bg.stopping() {
            let n = pool.flush_oldest(db.db.id, u64::MAX, WRITER_BATCH)? as u64;
            written += n;
            if n == 0 {
                break;
            }
            work = db.estimated_redo();
            // Come up for air: the checkpoint decision below must not starve.
            if started.elapsed() > bg.poll() * 5 {
                break;
            }
        }
        bg.pages_written.fetch_add(written, Ordering::Relaxed);
        background_writer_pages().add(written as i64);
    }
    // Recovery starts from the last checkpoint's redo start: once that costs more than
    // 75% of the target, and moving it to today's oldest recLSN would win back a quarter
    // of the target, record a new one.
    let stale = work.recovery_time > target.mul_f64(LIGHT_CHECKPOINT_AT)
        && work.recovery_time.saturating_sub(work.redo_time) > target.mul_f64(LIGHT_CHECKPOINT_GAIN);
    if stale || log_nearly_full(db) {
        run(db, bg, CheckpointKind::Indirect, target)?;
    }
    Ok(())
}

fn run(db: &TxnDb, bg: &Background, kind: CheckpointKind, target: Duration) -> Result<()> {
    db.run_checkpoint(kind, None, target)?;
    bg.checkpoints.fetch_add(1, Ordering::Relaxed);
    Ok(())
}
