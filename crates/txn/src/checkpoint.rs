//! Checkpoints: writing dirty pages so recovery has less to redo, recording where redo
//! starts, and letting the log be truncated.
//!
//! # The kinds, as in SQL Server
//!
//! - **Automatic** (`TARGET_RECOVERY_TIME = 0`): the database's background task (see
//!   [`crate::writer`]) runs one when the log written since the last checkpoint would take
//!   longer than the instance's `recovery interval` to redo, or when the log is 70% full
//!   (the SIMPLE recovery model's trigger). It writes every dirty page.
//! - **Indirect** (`TARGET_RECOVERY_TIME > 0`, the default for new databases: 60 s): the
//!   *recovery writer* keeps the estimated redo time under the target by writing the
//!   oldest dirty pages continuously, and writes light checkpoint records so the redo
//!   start and log truncation follow it. A light checkpoint writes only the pages still
//!   dirty since before the previous checkpoint began (SQL Server's "force catch-up");
//!   its redo start is the dirty page list's oldest recLSN.
//! - **Manual**: `CHECKPOINT [checkpoint_duration]`. With a duration the writes are paced
//!   to take about that long (the checkpoint_duration semantics: less I/O pressure);
//!   without, as fast as possible.
//! - **Internal**: at database creation, at the end of recovery, at shutdown
//!   ([`TxnDb::close`]).
//!
//! # One checkpoint
//!
//! 1. appends CKPT_BEGIN (LSN *B*) and notes the user transactions active at that point
//!    (no transaction begins or ends meanwhile), and reports `Begin` to the observer
//!    (checkpoint_begin);
//! 2. writes dirty pages in page order (sequential I/O): all of them, or for an indirect
//!    checkpoint those whose recLSN is older than the previous checkpoint's *B*; a manual
//!    checkpoint with a duration sleeps between writes to spread them over it; a large
//!    unpaced checkpoint splits the pages into contiguous ranges, one writer thread per
//!    core (up to 4), because the buffer pool writes one 8 KB page per call and a single
//!    writer is bound by that per-call cost, not by the disk;
//! 3. waits for page changes logged before *B* that have not reached the dirty page list
//!    yet (see [`ChangeSlots`]), then takes the redo start: the oldest recLSN on the dirty
//!    page list, or *B*. A page stays on the list until its write has completed, so no page
//!    that is not yet on disk is skipped;
//! 4. syncs the data files: everything written before step 3, by this checkpoint, the
//!    recovery writer or the lazy writer, is durable now;
//! 5. appends CKPT_END (redo start, active user transactions, open system transactions,
//!    next transaction id), flushes the log to it, and records *B* and the end LSN in the
//!    log file header's master record;
//! 6. truncates the log (SIMPLE recovery model) before the oldest LSN still needed: the
//!    redo start, the first LSN of the oldest active transaction, or *B*;
//! 7. counts the pages in Buffer Manager / Checkpoint pages/sec, reports `End` with the
//!    figures (checkpoint_end: Mesquite's carries the duration and page counts), and, if
//!    the checkpoint took longer than its target, writes SQL Server's FlushCache lines to
//!    the error log.
//!
//! # Targets (when FlushCache is written)
//!
//! Automatic: the recovery interval. Indirect: TARGET_RECOVERY_TIME. Manual with a
//! duration: that duration. Manual without one and internal: the database's target
//! (TARGET_RECOVERY_TIME if set, else the recovery interval).

use crate::log::{LogReuseWait, Lsn};
use crate::record::{self, CheckpointEnd, Header, RecordKind};
use crate::recovery::{MasterRecord, RecoveryReport};
use crate::xact::{log_err, TxnDb};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};
use storage::{BufferPool, PageId, Result};

/// TARGET_RECOVERY_TIME of a new database, in seconds (SQL Server 2016 and later).
pub const DEFAULT_TARGET_RECOVERY_TIME: u32 = 60;

/// What `recovery interval (min) = 0` means: SQL Server documents "about one minute".
pub const DEFAULT_RECOVERY_INTERVAL: Duration = Duration::from_secs(60);

/// A write slower than this counts as I/O saturation in the FlushCache message: SQL
/// Server's checkpoint throttles itself when its write latency goes above 20 ms.
const SATURATION_LATENCY: Duration = Duration::from_millis(20);

/// Checkpoints with at least this many pages to write use several writer threads.
const PARALLEL_WRITE_MIN: usize = 2048;
/// At most this many checkpoint writer threads.
const MAX_CHECKPOINT_WRITERS: usize = 4;

/// The instance's `recovery interval (min)` (sp_configure), 0 = default.
static RECOVERY_INTERVAL_MINUTES: AtomicU32 = AtomicU32::new(0);

/// sp_configure 'recovery interval (min)': the recovery time automatic checkpoints aim
/// for, for every database of the instance whose TARGET_RECOVERY_TIME is 0. 0 (the
/// default) means about one minute. SQL Server accepts 0 to 32767.
pub fn set_recovery_interval(minutes: u32) {
    RECOVERY_INTERVAL_MINUTES.store(minutes.min(32_767), Ordering::Relaxed);
}

/// The configured `recovery interval (min)` (0 = default).
pub fn recovery_interval() -> u32 {
    RECOVERY_INTERVAL_MINUTES.load(Ordering::Relaxed)
}

/// The recovery interval in force: the configured minutes, or one minute for 0.
pub fn effective_recovery_interval() -> Duration {
    match recovery_interval() {
        0 => DEFAULT_RECOVERY_INTERVAL,
        m => Duration::from_secs(u64::from(m) * 60),
    }
}

/// Why a checkpoint runs (checkpoint_begin's `reason`-like field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointKind {
    /// Triggered by log volume against the recovery interval, or a 70% full log.
    Automatic,
    /// TARGET_RECOVERY_TIME > 0: pages are written continuously by the recovery writer;
    /// the checkpoint itself only catches up on pages older than the previous one.
    Indirect,
    /// The CHECKPOINT statement.
    Manual,
    /// Shutdown, backup, database creation, end of recovery.
    Internal,
}

impl CheckpointKind {
    /// The name SQL Server's trace flag 3502 output and the DMVs use.
    pub fn desc(self) -> &'static str {
        match self {
            CheckpointKind::Automatic => "AUTOMATIC",
            CheckpointKind::Indirect => "INDIRECT",
            CheckpointKind::Manual => "MANUAL",
            CheckpointKind::Internal => "INTERNAL",
        }
    }
}

/// What a checkpoint did (for checkpoint_end, counters and the error log).
#[derive(Debug, Clone, Copy)]
pub struct CheckpointStats {
    pub kind: CheckpointKind,
    pub database_id: u16,
    pub started_at: SystemTime,
    pub ended_at: SystemTime,
    pub begin_lsn: Lsn,
    pub end_lsn: Lsn,
    pub redo_start_lsn: Lsn,
    /// Buffers cleaned: dirty pages this checkpoint wrote.
    pub pages_written: u64,
    pub bytes_written: u64,
    /// Write calls issued (one per page: the buffer pool writes pages one by one).
    pub writes: u64,
    /// Wall time from CKPT_BEGIN to the end of truncation.
    pub duration: Duration,
    /// Time spent inside write calls, and in the final data file sync.
    pub write_time: Duration,
    pub sync_time: Duration,
    /// Threads that wrote pages, each with one write outstanding at a time (FlushCache's
    /// "last target outstanding").
    pub writer_threads: usize,
    /// Writes slower than 20 ms (FlushCache's "I/O saturation").
    pub io_saturation: u64,
    /// Pages dirtied after the checkpoint began that it left for later (FlushCache's
    /// "avoided new dirty bufs").
    pub avoided_dirty: u64,
    /// Context switches of the checkpointing thread while it ran (Linux; 0 elsewhere).
    pub context_switches: u64,
    /// The duration above which the FlushCache lines are written.
    pub target: Duration,
    pub over_target: bool,
    pub vlfs_truncated: usize,
}

impl CheckpointStats {
    /// Write throughput over the whole checkpoint, in MB/s (FlushCache's figure).
    pub fn mb_per_sec(&self) -> f64 {
        self.bytes_written as f64 / 1_048_576.0 / self.duration.as_secs_f64().max(1e-9)
    }

    pub fn writes_per_sec(&self) -> f64 {
        self.writes as f64 / self.duration.as_secs_f64().max(1e-9)
    }

    /// Mean latency of one write call.
    pub fn avg_write_latency(&self) -> Duration {
        if self.writes == 0 {
            Duration::ZERO
        } else {
            self.write_time / self.writes as u32
        }
    }
}

/// What checkpoint observers receive: the checkpoint_begin and checkpoint_end Extended
/// Events of SQL Server, with the duration SQL Server's checkpoint_end lacks in `stats`.
/// A checkpoint that fails (an I/O error) reports `Begin` and no `End`, as in SQL Server.
#[derive(Debug, Clone)]
pub enum CheckpointEvent {
    Begin { kind: CheckpointKind, database_id: u16 },
    End { stats: CheckpointStats },
}

/// A checkpoint observer (the Extended Events firing point). Called on the checkpointing
/// thread, so it must be quick.
pub type CheckpointObserver = Box<dyn Fn(CheckpointEvent) + Send + Sync>;

/// The figures the redo-time estimates use. SQL Server estimates recovery time the same
/// way: a log replay rate for automatic checkpoints, and dirty pages (each one a random
/// read at redo) for indirect checkpoints.
///
/// Estimated redo time = dirty pages x `page_cost` + log bytes to replay /
/// `log_bytes_per_sec`.
///
/// The defaults are conservative figures for an SSD: replaying 64 MB of log a second
/// (`bench/commit` measures our redo at several times that when the pages are cached)
/// and 100 us per dirty page (one random 8 KB read at queue depth 1). A measured rate can
/// replace the log figure: [`TxnDb::learn_redo_rate`] takes it from a recovery report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RedoEstimate {
    /// Log replayed per second at redo.
    pub log_bytes_per_sec: f64,
    /// Redo cost of one dirty page: reading it back before the first record applies.
    pub page_cost: Duration,
    /// `log_bytes_per_sec` was measured by a recovery rather than configured.
    pub measured: bool,
}

impl Default for RedoEstimate {
    fn default() -> Self {
        RedoEstimate { log_bytes_per_sec: 64.0 * 1_048_576.0, page_cost: Duration::from_micros(100), measured: false }
    }
}

impl RedoEstimate {
    /// The estimated redo time of `dirty_pages` pages and `log_bytes` of log.
    pub fn redo_time(&self, dirty_pages: u64, log_bytes: u64) -> Duration {
        let secs =
            dirty_pages as f64 * self.page_cost.as_secs_f64() + log_bytes as f64 / self.log_bytes_per_sec.max(1.0);
        Duration::from_secs_f64(secs.min(1e9))
    }

    /// The estimate with the log replay rate a recovery achieved, if it replayed enough
    /// log to be a meaningful sample (4 MB; smaller redo is dominated by fixed costs).
    pub fn measured_from(&self, report: &RecoveryReport) -> Option<RedoEstimate> {
        let secs = report.redo.as_secs_f64();
        (report.redo_bytes >= 4 << 20 && secs > 0.0).then(|| RedoEstimate {
            log_bytes_per_sec: report.redo_bytes as f64 / secs,
            measured: true,
            ..*self
        })
    }
}

/// The redo work a crash would leave now (see [`TxnDb::estimated_redo`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct RedoWork {
    pub dirty_pages: u64,
    /// Log from the oldest recLSN of the dirty pages to the end: what the recovery
    /// writer controls.
    pub log_bytes_from_min_rec_lsn: u64,
    /// Log from the last checkpoint's redo start to the end: what recovery would replay
    /// after a crash now.
    pub log_bytes_from_checkpoint: u64,
    /// Estimated redo time from the oldest recLSN (the recovery writer's measure).
    pub redo_time: Duration,
    /// Estimated redo time from the last checkpoint's redo start.
    pub recovery_time: Duration,
}

/// An installed observer, shared so it can be called outside the lock.
type SharedObserver = Arc<dyn Fn(CheckpointEvent) + Send + Sync>;

/// Per-database checkpoint state, kept in [`TxnDb`].
pub(crate) struct CheckpointState {
    target_recovery_secs: AtomicU32,
    estimate: RwLock<RedoEstimate>,
    observer: RwLock<Option<SharedObserver>>,
    last: Mutex<Option<CheckpointStats>>,
    count: AtomicU64,
    /// Where the last checkpoint's truncation stopped (the log kept from this LSN).
    pub(crate) kept_from: AtomicU64,
    pub(crate) background: Arc<crate::writer::Background>,
}

impl Default for CheckpointState {
    fn default() -> Self {
        CheckpointState {
            target_recovery_secs: AtomicU32::new(DEFAULT_TARGET_RECOVERY_TIME),
            estimate: RwLock::new(RedoEstimate::default()),
            observer: RwLock::new(None),
            last: Mutex::new(None),
            count: AtomicU64::new(0),
            kept_from: AtomicU64::new(0),
            background: Arc::new(crate::writer::Background::default()),
        }
    }
}

/// What writing a list of pages did.
#[derive(Default)]
struct WriteRun {
    /// Writer threads (each has one write outstanding at a time).
    writers: usize,
    pages: u64,
    writes: u64,
    write_time: Duration,
    saturation: u64,
}

impl TxnDb {
    /// ALTER DATABASE ... SET TARGET_RECOVERY_TIME = n SECONDS. 0 switches the database
    /// to automatic checkpoints; more makes the background task a recovery writer
    /// (indirect checkpoints). Takes effect at the background task's next poll. Not yet
    /// persisted in the database (sys.databases belongs to the catalog).
    pub fn set_target_recovery_time(&self, seconds: u32) {
        self.ckpt.target_recovery_secs.store(seconds, Ordering::Relaxed);
        self.ckpt.background.wake();
    }

    /// sys.databases.target_recovery_time_in_seconds.
    pub fn target_recovery_time(&self) -> u32 {
        self.ckpt.target_recovery_secs.load(Ordering::Relaxed)
    }

    /// The instance recovery interval in force (see [`set_recovery_interval`]).
    pub fn recovery_interval(&self) -> Duration {
        effective_recovery_interval()
    }

    /// The duration above which a checkpoint of this kind writes FlushCache.
    pub fn checkpoint_target(&self, kind: CheckpointKind) -> Duration {
        let trt = Duration::from_secs(u64::from(self.target_recovery_time()));
        match kind {
            CheckpointKind::Automatic => effective_recovery_interval(),
            _ if trt > Duration::ZERO => trt,
            _ => effective_recovery_interval(),
        }
    }

    pub fn redo_estimate(&self) -> RedoEstimate {
        *self.ckpt.estimate.read()
    }

    /// Replaces the figures the redo-time estimates use (a configured redo rate).
    pub fn set_redo_estimate(&self, e: RedoEstimate) {
        *self.ckpt.estimate.write() = e;
    }

    /// Takes the log replay rate from a recovery of this database, if it replayed enough
    /// log to be meaningful. Returns whether the estimate changed.
    pub fn learn_redo_rate(&self, report: &RecoveryReport) -> bool {
        let mut e = self.ckpt.estimate.write();
        match e.measured_from(report) {
            Some(m) => {
                *e = m;
                true
            }
            None => false,
        }
    }

    /// The redo work a crash now would leave, with the estimated times.
    pub fn estimated_redo(&self) -> RedoWork {
        let pool = self.db.pool();
        let end = self.log.end_lsn();
        let dirty = pool.dirty_count(self.db.id) as u64;
        let min_rec = pool.min_rec_lsn(self.db.id).map(Lsn);
        let from_min = min_rec.map_or(0, |m| crate::writer::log_bytes_between(&self.log, m, end));
        let ckpt_start = self.ckpt.last.lock().map(|s| s.redo_start_lsn);
        let from_ckpt = ckpt_start.map_or(from_min, |s| crate::writer::log_bytes_between(&self.log, s, end));
        let e = self.redo_estimate();
        RedoWork {
            dirty_pages: dirty,
            log_bytes_from_min_rec_lsn: from_min,
            log_bytes_from_checkpoint: from_ckpt,
            redo_time: e.redo_time(dirty, from_min),
            recovery_time: e.redo_time(dirty, from_ckpt),
        }
    }

    /// Installs the observer of checkpoint_begin / checkpoint_end (replacing any).
    pub fn set_checkpoint_observer(&self, observer: CheckpointObserver) {
        *self.ckpt.observer.write() = Some(Arc::from(observer));
    }

    pub fn clear_checkpoint_observer(&self) {
        *self.ckpt.observer.write() = None;
    }

    /// The figures of the last checkpoint that completed.
    pub fn last_checkpoint(&self) -> Option<CheckpointStats> {
        *self.ckpt.last.lock()
    }

    /// Checkpoints completed since the database was attached.
    pub fn checkpoints_completed(&self) -> u64 {
        self.ckpt.count.load(Ordering::Relaxed)
    }

    fn notify(&self, event: CheckpointEvent) {
        // Cloned out of the lock so an observer may replace itself.
        let observer = self.ckpt.observer.read().clone();
        if let Some(o) = observer {
            o(event);
        }
    }

    /// Runs one checkpoint of `kind` as fast as possible, with the database's target for
    /// that kind (see [`TxnDb::checkpoint_target`]).
    pub fn checkpoint(&self, kind: CheckpointKind) -> Result<CheckpointStats> {
        self.run_checkpoint(kind, None, self.checkpoint_target(kind))
    }

    /// Runs one checkpoint; `target` is the duration above which the FlushCache message
    /// is written.
    pub fn checkpoint_with_target(&self, kind: CheckpointKind, target: Duration) -> Result<CheckpointStats> {
        self.run_checkpoint(kind, None, target)
    }

    /// `CHECKPOINT [checkpoint_duration]`. With a duration the page writes are spread to
    /// finish in about 90% of it (the rest is left for the final sync), and the duration
    /// is the FlushCache target; a checkpoint with more to write than the duration allows
    /// goes as fast as it can.
    pub fn checkpoint_manual(&self, duration: Option<Duration>) -> Result<CheckpointStats> {
        let target = duration.unwrap_or_else(|| self.checkpoint_target(CheckpointKind::Manual));
        self.run_checkpoint(CheckpointKind::Manual, duration, target)
    }

    pub(crate) fn run_checkpoint(
        &self,
        kind: CheckpointKind,
        pace: Option<Duration>,
        target: Duration,
    ) -> Result<CheckpointStats> {
        let _one = self.checkpoint_lock.lock();
        let started_at = SystemTime::now();
        let t0 = Instant::now();
        let switches_before = thread_context_switches();
        self.notify(CheckpointEvent::Begin { kind, database_id: self.db.id });
        let pool = self.db.pool();
        let previous_begin = self.ckpt.last.lock().map(|s| s.begin_lsn.as_u64());

        let mut rec = Vec::new();
        record::encode_bare(&Header::new(RecordKind::CkptBegin), &mut rec);
        let crate::xact::CheckpointBegin { lsn: begin, active, pending_frees } = self.append_checkpoint_begin(&rec)?;

        // 2. Write pages.
        let dirty = pool.dirty_pages(self.db.id);
        let pages: Vec<PageId> = match kind {
            // Catch up only: what is still dirty from before the previous checkpoint.
            // The recovery writer has written the rest as the target required.
            CheckpointKind::Indirect => {
                let before = previous_begin.unwrap_or(0);
                dirty.iter().take_while(|(l, _)| *l < before).map(|&(_, p)| p).collect()
            }
            _ => dirty.iter().map(|&(_, p)| p).collect(),
        };
        drop(dirty);
        let run = self.write_pages(pages, pace.map(|d| d.mul_f64(0.9)))?;

        // 3. Redo start: every page change logged before B is on the dirty page list (or
        // written) once the changes in flight have finished.
        self.hook.changes.settle_before(pool, self.db.id, begin.as_u64());
        let redo_start = pool.min_rec_lsn(self.db.id).map_or(begin.as_u64(), |l| l.min(begin.as_u64()));

        // 4. Everything written so far (by anyone) is durable before CKPT_END says so.
        let ts = Instant::now();
        self.db.files().sync_all()?;
        let sync_time = ts.elapsed();

        // 5. CKPT_END and the master record.
        // System transactions are listed from their first page change on, which has
        // completed for every change before B (step 3).
        let open_sys = self.hook.open_system_transactions();
        let end = CheckpointEnd {
            begin_lsn: begin.as_u64(),
            redo_start_lsn: redo_start,
            next_xact_id: self.next_xact_id(),
            active: active.clone(),
            open_sys: open_sys.clone(),
            pending_frees,
        };
        rec.clear();
        record::encode_ckpt_end(&Header::new(RecordKind::CkptEnd), &end, &mut rec);
        let end_lsn = self.log.append_essential(&rec).map_err(log_err)?;
        self.log.flush_to(end_lsn).map_err(log_err)?;
        let files = self.db.files().all().iter().map(|f| (f.file_id(), std::path::PathBuf::from(f.path()))).collect();
        let master = MasterRecord { checkpoint_begin: begin.as_u64(), checkpoint_end: end_lsn.as_u64(), files };
        self.log.set_master_record(&master.encode()).map_err(log_err)?;

        // 6. Truncation.
        let keep_from = active
            .iter()
            .map(|a| a.first_lsn)
            .chain(open_sys.iter().map(|s| s.1))
            .chain([redo_start, begin.as_u64()])
            .filter(|&l| l != 0)
            .min()
            .unwrap_or(redo_start);
        let vlfs_truncated = self.log.truncate(Lsn(keep_from)).map_err(log_err)?;
        self.ckpt.kept_from.store(keep_from, Ordering::Release);
        // What holds the log now (log_reuse_wait_desc, and the reason 9002 gives): the
        // oldest active transaction when it is what truncation stopped at.
        let oldest_xact = active.iter().map(|a| a.first_lsn).filter(|&l| l != 0).min();
        let held_by_xact = oldest_xact.is_some_and(|x| x == keep_from && x < redo_start.min(begin.as_u64()));
        self.log.set_log_reuse_wait(if held_by_xact { LogReuseWait::ActiveTransaction } else { LogReuseWait::Nothing });

        // 7. Figures, counters, events.
        let avoided = pool.dirty_pages(self.db.id).iter().filter(|(l, _)| *l > begin.as_u64()).count() as u64;
        let duration = t0.elapsed();
        let stats = CheckpointStats {
            kind,
            database_id: self.db.id,
            started_at,
            ended_at: started_at + duration,
            begin_lsn: begin,
            end_lsn,
            redo_start_lsn: Lsn(redo_start),
            pages_written: run.pages,
            bytes_written: run.pages * storage::PAGE_SIZE as u64,
            writes: run.writes,
            duration,
            write_time: run.write_time,
            sync_time,
            writer_threads: run.writers,
            io_saturation: run.saturation,
            avoided_dirty: avoided,
            context_switches: thread_context_switches().saturating_sub(switches_before),
            target,
            over_target: duration > target,
            vlfs_truncated,
        };
        diag::counters().checkpoint_pages.add(run.pages as i64);
        *self.ckpt.last.lock() = Some(stats);
        self.ckpt.count.fetch_add(1, Ordering::Relaxed);
        if stats.over_target {
            log_flush_cache(self.db.id, &stats);
        }
        self.notify(CheckpointEvent::End { stats });
        Ok(stats)
    }

    /// Writes `pages` (if still dirty) in page order; the caller syncs once the redo
    /// start is taken, which covers these writes and any other completed before it. With
    /// `pace`, sleeps between writes so the writes end about `pace` after the first.
    /// Without, a large list is split into contiguous ranges written by one thread per
    /// core: the buffer pool writes a page per call, so a single writer is bound by the
    /// per-call cost (copy, checksum, system call) well below the disk's bandwidth.
    fn write_pages(&self, mut pages: Vec<PageId>, pace: Option<Duration>) -> Result<WriteRun> {
        // A page re-dirtied while being written is listed twice; write it once.
        pages.sort_unstable();
        pages.dedup();
        let n = pages.len();
        let writers = match pace {
            None if n >= PARALLEL_WRITE_MIN => {
                std::thread::available_parallelism().map_or(1, |c| c.get()).min(MAX_CHECKPOINT_WRITERS)
            }
            _ => 1,
        };
        let run = if writers > 1 {
            let ranges: Vec<&[PageId]> = pages.chunks(n.div_ceil(writers)).collect();
            let results: Vec<Result<WriteRun>> = std::thread::scope(|s| {
                let handles: Vec<_> = ranges.iter().map(|r| s.spawn(|| self.write_range(r, None))).collect();
                handles
                    .into_iter()
                    // A panic in a writer is a bug; report it as an error rather than
                    // taking the checkpointing thread down with it.
                    .map(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(storage::StorageError::Invalid("checkpoint writer panicked".into()))
                        })
                    })
                    .collect()
            });
            let mut total = WriteRun { writers, ..WriteRun::default() };
            for r in results {
                let r = r?;
                total.pages += r.pages;
                total.writes += r.writes;
                total.write_time += r.write_time;
                total.saturation += r.saturation;
            }
            total
        } else {
            WriteRun { writers: usize::from(n > 0), ..self.write_range(&pages, pace)? }
        };
        Ok(run)
    }

    /// Writes one range of pages in order (see `write_pages`), without the sync.
    fn write_range(&self, pages: &[PageId], pace: Option<Duration>) -> Result<WriteRun> {
        let pool = self.db.pool();
        let n = pages.len();
        let mut run = WriteRun::default();
        let t0 = Instant::now();
        // Gathered writes of up to MAX_GATHERED_PAGES contiguous pages; pacing is checked
        // after each chunk.
        let mut done = 0usize;
        for chunk in pages.chunks(storage::buffer::MAX_GATHERED_PAGES) {
            let t = Instant::now();
            let (wrote, writes) = pool.flush_pages(self.db.id, chunk)?;
            let latency = t.elapsed();
            run.pages += wrote as u64;
            run.writes += writes as u64;
            run.write_time += latency;
            if writes > 0 && latency / writes as u32 > SATURATION_LATENCY {
                run.saturation += 1;
            }
            done += chunk.len();
            if let Some(d) = pace {
                // Where the writes should be after this chunk; sleep only when ahead by
                // more than a scheduler tick's worth, so short sleeps do not add up to drift.
                let due = d.mul_f64(done as f64 / n as f64);
                let now = t0.elapsed();
                if due > now + Duration::from_millis(2) {
                    std::thread::sleep(due - now);
                }
            }
        }
        Ok(run)
    }
}

/// Context switches (voluntary and involuntary) of the calling thread so far, from
/// /proc on Linux; 0 where that is not available.
fn thread_context_switches() -> u64 {
    let Ok(s) = std::fs::read_to_string("/proc/thread-self/status") else { return 0 };
    s.lines()
        .filter(|l| l.starts_with("voluntary_ctxt_switches:") || l.starts_with("nonvoluntary_ctxt_switches:"))
        .filter_map(|l| l.split(':').nth(1)?.trim().parse::<u64>().ok())
        .sum()
}

/// The error log lines SQL Server writes for a checkpoint that exceeded its target, in
/// its words. An indirect checkpoint's catch-up reports the way SQL Server's dirty page
/// manager does.
pub fn log_flush_cache(db_id: u16, s: &CheckpointStats) {
    let ms = s.duration.as_millis();
    if s.kind == CheckpointKind::Indirect {
        diag::errorlog::log(
            "spid15s",
            &format!(
                "DirtyPageMgr::ForceCatchupOrFlushCache: cleaned up {} dirty pages in {ms} ms for db {db_id}",
                s.pages_written
            ),
        );
        return;
    }
    diag::errorlog::log(
        "spid15s",
        &format!(
            "FlushCache: cleaned up {} bufs with {} writes in {ms} ms (avoided {} new dirty bufs) for db {db_id}:0",
            s.pages_written, s.writes, s.avoided_dirty
        ),
    );
    diag::errorlog::log(
        "spid15s",
        &format!("            average writes per second: {:.2} writes/sec", s.writes_per_sec()),
    );
    diag::errorlog::log(
        "spid15s",
        &format!(
            "            average throughput: {:.2} MB/sec, I/O saturation: {}, context switches {}",
            s.mb_per_sec(),
            s.io_saturation,
            s.context_switches
        ),
    );
    // The buffer pool writes synchronously: one write outstanding per writer thread.
    diag::errorlog::log(
        "spid15s",
        &format!(
            "            last target outstanding: {}, avgWriteLatency {}",
            s.writer_threads,
            s.avg_write_latency().as_millis()
        ),
    );
}

// ---------------------------------------------------------------------------------------
// Page changes in flight
// ---------------------------------------------------------------------------------------

/// `ChangeSlot::lsn` while the change is being logged (its LSN is not known yet).
const LOGGING: u64 = u64::MAX;

/// Page changes that are logged but may not be on the dirty page list yet.
///
/// `Database::change` logs a change (getting its LSN), applies it and only then marks the
/// buffer dirty, all under the page's EX latch. A checkpoint that read the dirty page list
/// in between would take a redo start past that change although the page is not on disk:
/// after a crash the change would be lost. ARIES avoids this by making "log and mark
/// dirty" atomic with respect to the checkpoint; here each thread publishes the change it
/// is logging in a slot of its own (the page, then the LSN once known), and the checkpoint
/// waits, for every slot holding an LSN before its CKPT_BEGIN, until that page's EX latch
/// is released (by taking it SH), which happens after the page is on the dirty list.
///
/// The slot says "being logged" *before* the append, so a change whose append precedes
/// CKPT_BEGIN in the log cannot be missed: the checkpoint sees either "being logged" (and
/// waits for the LSN) or the LSN. The cost per page change is three stores to a slot only
/// its thread writes.
pub(crate) struct ChangeSlots {
    id: u64,
    slots: Mutex<Vec<Arc<ChangeSlot>>>,
}

#[derive(Default)]
struct ChangeSlot {
    lsn: AtomicU64,
    page: AtomicU64,
}

thread_local! {
    /// This thread's slot in each database it changes: (ChangeSlots id, slot).
    static MY_SLOTS: RefCell<Vec<(u64, Arc<ChangeSlot>)>> = const { RefCell::new(Vec::new()) };
}

fn pack(p: PageId) -> u64 {
    (u64::from(p.file_id) << 32) | u64::from(p.page_no)
}

fn unpack(v: u64) -> PageId {
    PageId { file_id: (v >> 32) as u16, page_no: v as u32 }
}

impl Default for ChangeSlots {
    fn default() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ChangeSlots { id: NEXT.fetch_add(1, Ordering::Relaxed), slots: Mutex::new(Vec::new()) }
    }
}

impl ChangeSlots {
    fn my_slot(&self) -> Arc<ChangeSlot> {
        MY_SLOTS.with(|m| {
            let mut m = m.borrow_mut();
            if let Some((_, s)) = m.iter().find(|(id, _)| *id == self.id) {
                return s.clone();
            }
            // Slots of databases that are gone (only this thread still holds them).
            m.retain(|(_, s)| Arc::strong_count(s) > 1);
            let s = Arc::new(ChangeSlot::default());
            self.slots.lock().push(s.clone());
            m.push((self.id, s.clone()));
            s
        })
    }

    /// Logs a change to `page` with `append` (which returns its LSN), publishing it as in
    /// flight until the checkpoint can rely on the dirty page list for it.
    pub(crate) fn logging(&self, page: PageId, append: impl FnOnce() -> Result<u64>) -> Result<u64> {
        let slot = self.my_slot();
        slot.page.store(pack(page), Ordering::Release);
        slot.lsn.store(LOGGING, Ordering::SeqCst);
        let r = append();
        slot.lsn.store(*r.as_ref().unwrap_or(&0), Ordering::SeqCst);
        r
    }

    /// Returns once every page change logged before `before` is on the dirty page list or
    /// written.
    pub(crate) fn settle_before(&self, pool: &BufferPool, db: u16, before: u64) {
        let slots: Vec<Arc<ChangeSlot>> = {
            let mut s = self.slots.lock();
            // Slots of threads that have exited (only this list holds them).
            s.retain(|x| Arc::strong_count(x) > 1);
            s.clone()
        };
        for slot in slots {
            let mut spins = 0u32;
            loop {
                let lsn = slot.lsn.load(Ordering::SeqCst);
                if lsn == LOGGING {
                    // The append is under way (microseconds, or a LOGBUFFER wait).
                    spins += 1;
                    if spins < 64 {
                        std::thread::yield_now();
                    } else {
                        std::thread::sleep(Duration::from_micros(50));
                    }
                    continue;
                }
                if lsn == 0 || lsn >= before {
                    break;
                }
                let page = unpack(slot.page.load(Ordering::Acquire));
                if slot.lsn.load(Ordering::SeqCst) != lsn {
                    continue; // the thread moved on: that change is complete
                }
                // The changing thread holds the page EX until it is on the dirty list; a
                // page that is not resident cannot be latched, so its change is complete.
                if pool.is_resident(db, page) {
                    drop(pool.read(db, page));
                }
                let _ = slot.lsn.compare_exchange(lsn, 0, Ordering::SeqCst, Ordering::SeqCst);
                break;
            }
        }
    }
}
