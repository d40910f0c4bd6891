//! The log manager: the log buffer, `append` and `flush_to`, and the DMV views. The
//! rest is split by concern:
//! - `open`: creating a log file, and opening one (end-of-log scan, repairs, restart);
//! - `space`: moving to the next VLF, growth, truncation;
//! - `writer`: the log writer thread (group commit, timer flushes).
//!
//! See the parent module for the file format and the durability guarantees.

mod open;
mod space;
mod writer;

use super::error::{LogError, LogResult, LogReuseWait};
use super::file::LogFile;
use super::format::{
    self, next_block_in_vlf, FileHeader, VlfHeader, VlfState, BLOCK_HEADER, MAX_BLOCK_BYTES, MAX_RECORD, MAX_SLOTS,
    RECORD_PREFIX, SECTOR,
};
use super::lsn::Lsn;
use super::scan::{ChainVlf, LogReader};
use diag::{DatabaseCounters, WaitTimer, WaitType};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The log's file id in its database, as in SQL Server.
pub const LOG_FILE_ID: u16 = 2;

/// Tunables of one log manager.
#[derive(Clone, Debug)]
pub struct LogConfig {
    /// The log writer flushes buffered records at the latest this long after the first
    /// of them was appended, even if no one asks (delayed durable commits). Default 10 ms.
    pub flush_interval: Duration,
    /// Size of the log buffer in 60 KB blocks (at least 1). Appenders wait (LOGBUFFER)
    /// when it is full. Default 8 (480 KB).
    pub buffer_blocks: usize,
    /// Write zeros over new log space when the file is created or grown, as SQL Server
    /// does (log files never use instant file initialization). Log flushes then
    /// overwrite allocated, initialized blocks, which makes them cheaper to sync than
    /// writes into space the file system still has to convert or allocate. Default true.
    pub zero_fill: bool,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig { flush_interval: Duration::from_millis(10), buffer_blocks: 8, zero_fill: true }
    }
}

/// A VLF's status as DBCC LOGINFO shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VlfStatus {
    /// Reusable (DBCC LOGINFO status 0): never used, or truncated.
    Inactive,
    /// Part of the active log (status 2).
    Active,
}

impl VlfStatus {
    /// The number DBCC LOGINFO shows in its Status column.
    pub fn code(self) -> u8 {
        match self {
            VlfStatus::Inactive => 0,
            VlfStatus::Active => 2,
        }
    }
}

/// One row of DBCC LOGINFO / sys.dm_db_log_info.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VlfInfo {
    pub file_id: u16,
    /// Offset of the VLF in the log file (StartOffset / vlf_begin_offset).
    pub offset: u64,
    /// Size in bytes (FileSize / vlf_size_mb), including the VLF header sector.
    pub size: u64,
    /// FSeqNo: the sequence number the VLF carries (0 if never used).
    pub fseq_no: u32,
    pub status: VlfStatus,
    /// CreateLSN: NULL for the VLFs the file was created with.
    pub create_lsn: Lsn,
}

/// DBCC SQLPERF(LOGSPACE) for one database.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogSpace {
    pub size_bytes: u64,
    pub used_bytes: u64,
    pub used_percent: f64,
}

/// Counters of one log manager since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LogStats {
    /// Log flushes: a batch of blocks written and synced.
    pub flushes: u64,
    /// `write_at` calls those flushes made (contiguous blocks go in one call).
    pub flush_writes: u64,
    pub blocks_flushed: u64,
    pub bytes_flushed: u64,
    /// `flush_to` calls that returned Ok: the durable commits the log served.
    pub commits_flushed: u64,
    /// `flush_to` calls that had to wait for a flush (WRITELOG waits).
    pub flush_waits: u64,
    /// Total time those waits took, in microseconds.
    pub flush_wait_us: u64,
    /// Appends that waited for log buffer space (LOGBUFFER waits).
    pub log_buffer_waits: u64,
    pub records_appended: u64,
    pub bytes_appended: u64,
    pub growths: u64,
}

impl LogStats {
    /// Commits hardened per log flush: the group commit factor.
    pub fn commits_per_flush(&self) -> f64 {
        if self.flushes == 0 {
            0.0
        } else {
            self.commits_flushed as f64 / self.flushes as f64
        }
    }
}

#[derive(Default)]
struct StatCells {
    flushes: AtomicU64,
    flush_writes: AtomicU64,
    blocks_flushed: AtomicU64,
    bytes_flushed: AtomicU64,
    commits_flushed: AtomicU64,
    flush_waits: AtomicU64,
    flush_wait_us: AtomicU64,
    log_buffer_waits: AtomicU64,
    growths: AtomicU64,
}

fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// A VLF in memory.
#[derive(Clone, Copy, Debug)]
struct Vlf {
    offset: u64,
    size_sectors: u32,
    seq: u32,
    prev_seq: u32,
    state: VlfState,
    /// Being marked inactive by `truncate`: not reusable until that write is durable.
    truncating: bool,
    activation_gen: u32,
    create_lsn: Lsn,
}

impl Vlf {
    fn from_header(h: &VlfHeader) -> Vlf {
        Vlf {
            offset: h.offset,
            size_sectors: h.size_sectors,
            seq: h.seq,
            prev_seq: h.prev_seq,
            state: h.state,
            truncating: false,
            activation_gen: h.activation_gen,
            create_lsn: h.create_lsn,
        }
    }

    fn header(&self, db_id: u16) -> VlfHeader {
        VlfHeader {
            db_id,
            seq: self.seq,
            offset: self.offset,
            size_sectors: self.size_sectors,
            state: self.state,
            prev_seq: self.prev_seq,
            activation_gen: self.activation_gen,
            create_lsn: self.create_lsn,
        }
    }

    fn bytes(&self) -> u64 {
        u64::from(self.size_sectors) * SECTOR as u64
    }

    fn reusable(&self) -> bool {
        self.state != VlfState::Active && !self.truncating
    }

    fn chain(&self) -> ChainVlf {
        ChainVlf {
            seq: self.seq,
            offset: self.offset,
            size_sectors: self.size_sectors,
            activation_gen: self.activation_gen,
        }
    }
}

/// The block appenders are filling.
struct OpenBlock {
    vlf: usize,
    seq: u32,
    sector: u32,
    /// Header space, then the records; padded to whole sectors when sealed.
    buf: Vec<u8>,
    count: u16,
    last_lsn: Lsn,
}

/// A block closed for appends, waiting for (or in) a flush.
struct SealedBlock {
    vlf: usize,
    seq: u32,
    sector: u32,
    offset: u64,
    buf: Vec<u8>,
    count: u16,
    last_lsn: Lsn,
}

impl SealedBlock {
    fn sectors(&self) -> u32 {
        (self.buf.len() / SECTOR) as u32
    }
}

struct State {
    header: FileHeader,
    /// The file header slot the next rewrite goes to (the other holds the current copy).
    next_header_slot: usize,
    vlfs: Vec<Vlf>,
    /// Index in `vlfs` of the VLF the log is being written to.
    tail: usize,
    /// Sector of the tail VLF where the next block starts (meaningful when no block is
    /// open).
    next_sector: u32,
    next_seq: u32,
    open: Option<OpenBlock>,
    sealed: Vec<SealedBlock>,
    sealed_bytes: usize,
    in_flight_bytes: usize,
    /// The last LSN of the batch the writer is writing (NULL when none is in flight),
    /// and that batch's number: a committer whose LSN it covers waits on that batch's
    /// condvar, any other on the next one's (`Inner::flush_done`).
    in_flight_end: Lsn,
    flush_gen: u64,
    end_lsn: Lsn,
    flushed_lsn: Lsn,
    flush_requested: bool,
    /// When the oldest record the writer has not taken yet was appended.
    oldest_unflushed: Option<Instant>,
    /// The writer sleeps with nothing buffered (no timer running): the append that
    /// starts the delayed-durability timer wakes it.
    writer_idle: bool,
    failed: Option<String>,
    shutdown: bool,
    reuse_wait: LogReuseWait,
    flush_interval: Duration,
    buffer_limit: usize,
    /// Block buffers returned by the writer, reused so appends do not allocate.
    spare: Vec<Vec<u8>>,
    /// Counted here rather than in `StatCells`: the lock is held anyway, and every
    /// appender bumping shared atomics made their cache lines bounce between cores.
    records_appended: u64,
    bytes_appended: u64,
    /// `when_durable` callers waiting for a flush (roughly in LSN order).
    completions: Vec<Completion>,
}

impl State {
    /// A fresh writer state: nothing buffered, the log durable up to `end_lsn` (created
    /// logs start at NULL; an opened log at its last record).
    #[allow(clippy::too_many_arguments)]
    fn new(
        header: FileHeader,
        next_header_slot: usize,
        vlfs: Vec<Vlf>,
        tail: usize,
        next_sector: u32,
        next_seq: u32,
        end_lsn: Lsn,
        config: &LogConfig,
    ) -> State {
        State {
            header,
            next_header_slot,
            vlfs,
            tail,
            next_sector,
            next_seq,
            open: None,
            sealed: Vec::new(),
            sealed_bytes: 0,
            in_flight_bytes: 0,
            in_flight_end: Lsn::NULL,
            flush_gen: 0,
            end_lsn,
            flushed_lsn: end_lsn,
            flush_requested: false,
            oldest_unflushed: None,
            writer_idle: false,
            failed: None,
            shutdown: false,
            reuse_wait: LogReuseWait::default(),
            flush_interval: config.flush_interval,
            buffer_limit: config.buffer_blocks.max(1) * MAX_BLOCK_BYTES,
            spare: Vec::new(),
            records_appended: 0,
            bytes_appended: 0,
            completions: Vec::new(),
        }
    }

    fn has_unflushed(&self) -> bool {
        self.open.as_ref().is_some_and(|b| b.count > 0) || !self.sealed.is_empty()
    }
}

struct Inner {
    db_id: u16,
    db_name: String,
    file: Arc<LogFile>,
    /// Open generation stamped into every block this incarnation writes.
    generation: u32,
    zero_fill: bool,
    state: Mutex<State>,
    /// Wakes the log writer.
    writer_cv: Condvar,
    /// Signalled after every flush (and on failure or shutdown): appenders waiting for
    /// log buffer space.
    done_cv: Condvar,
    /// Committers waiting in `flush_to`, by the parity of the flush that makes them
    /// durable: a flush wakes only those it covers, not those whose records wait for the
    /// next one (each needless wake-up costs two context switches).
    flush_done: [Condvar; 2],
    /// `State::flushed_lsn`, readable without the lock (the fast path of `flush_to` and
    /// the WAL gate).
    flushed: AtomicU64,
    truncate_lock: Mutex<()>,
    /// Set once the log has failed or shut down (`State::failed`, `State::shutdown`),
    /// so that `check_usable` needs no lock while the log is fine (every BEGIN asks).
    closed: AtomicBool,
    /// Log space held back for rolling back what open transactions logged (see
    /// [`LogManager::append_reserving`]). Added to only under the state lock, together
    /// with the room check; given back without it (a transaction's end), which can only
    /// make a concurrent room check see less room than there is.
    reserved: AtomicU64,
    counters: DatabaseCounters,
    stats: StatCells,
    /// Set while a checkpoint asked for by a refused reservation waits for the next safe
    /// point (`diag::sched::run_at_safe_point`); cleared once it ran. See
    /// [`LogManager::set_pressure_relief`].
    pressure: Arc<AtomicBool>,
    /// What relieves the pressure: the database's checkpoint (set by `TxnDb`).
    relief: Mutex<Option<PressureRelief>>,
}

/// Asks for a checkpoint of the log's database (see [`LogManager::set_pressure_relief`]):
/// `urgent` when a reservation was refused (run it now, on the caller's thread), else the
/// log is 70% full (a background checkpoint soon; called under the log's lock, so it
/// must only signal).
pub type PressureRelief = Arc<dyn Fn(bool) + Send + Sync>;

/// The share of the log in use at which a checkpoint is asked for, as SQL Server's
/// automatic checkpoint does in SIMPLE recovery.
const PRESSURE_PERCENT: u64 = 70;

/// What [`LogManager::when_durable`] runs: Ok once the records are durable, Err when
/// the log failed or shut down before they were.
pub type Durable = Box<dyn FnOnce(LogResult<()>) + Send>;

/// A `when_durable` waiting for its flush.
struct Completion {
    lsn: Lsn,
    started: Instant,
    session: Option<Arc<diag::WaitStats>>,
    then: Durable,
}

/// The write-ahead log of one database. See the module documentation of `crate::log`.
pub struct LogManager {
    inner: Arc<Inner>,
    writer: Mutex<Option<JoinHandle<()>>>,
}

impl LogManager {
    pub fn db_id(&self) -> u16 {
        self.inner.db_id
    }

    /// The transaction layer's master record kept in the file header (None if never set).
    pub fn master_record(&self) -> Option<Vec<u8>> {
        let st = self.inner.state.lock();
        (!st.header.master.is_empty()).then(|| st.header.master.clone())
    }

    /// Replaces the master record: the header is rewritten into the other copy slot and
    /// synced before this returns, so a crash leaves either the old or the new record.
    pub fn set_master_record(&self, master: &[u8]) -> LogResult<()> {
        if master.len() > crate::log::format::MAX_MASTER_RECORD {
            return Err(LogError::Corrupt {
                db: self.inner.db_name.clone(),
                detail: format!("master record of {} bytes is too large", master.len()),
            });
        }
        let inner = &self.inner;
        let mut st = inner.state.lock();
        let header_seq = st.header.header_seq.checked_add(1).ok_or_else(|| LogError::Corrupt {
            db: self.inner.db_name.clone(),
            detail: "header sequence exhausted".into(),
        })?;
        let header = FileHeader { header_seq, master: master.to_vec(), ..st.header.clone() };
        let slot = st.next_header_slot;
        let at = crate::log::format::FILE_HEADER_SLOTS[slot];
        inner.file.write_durable(at, &header.encode()).map_err(|e| inner.file.err(at, e))?;
        st.header = header;
        st.next_header_slot = 1 - slot;
        Ok(())
    }

    pub fn db_name(&self) -> &str {
        &self.inner.db_name
    }

    /// This incarnation's open generation (1 for a new file, +1 at every open).
    pub fn generation(&self) -> u32 {
        self.inner.generation
    }

    /// Copies `record` into the log buffer and returns its LSN. Waits (LOGBUFFER) if the
    /// buffer is full. Returns 9002 if the log needs a new VLF and none is free and the
    /// file cannot grow; nothing already appended is affected, and appends work again
    /// once `truncate` frees a VLF. The record is durable only after `flush_to`.
    ///
    /// This append may use every byte of the log, including the space held back for
    /// rollbacks: it is for the records that use that space (compensation records,
    /// ABORT_XACT, COMMIT_XACT, checkpoints), and for callers that do not reserve.
    pub fn append(&self, record: &[u8]) -> LogResult<Lsn> {
        self.inner.append(record, None, false)
    }

    /// Appends a record that must not fail for want of log: a rollback's (a compensating
    /// page change, a CLR, ABORT_XACT, the end of a system transaction run by an undo)
    /// and a checkpoint's (CKPT_BEGIN, CKPT_END: the checkpoint is what frees the log).
    /// Like [`append`](Self::append), and when no VLF is free and the file is at its
    /// MAXSIZE, the file grows past MAXSIZE (by its FILEGROWTH, at least 1 MB) rather
    /// than fail: a rollback cut short would leave a statement half done or a B-tree
    /// broken. Forward work reserves the space its rollback needs, so this happens only
    /// when a rollback needs more than was reserved (undoing a page merge may split pages
    /// again); the error log says so. Recovery's undo grows the log the same way, as SQL
    /// Server's does.
    pub fn append_essential(&self, record: &[u8]) -> LogResult<Lsn> {
        self.inner.append(record, None, true)
    }

    /// ALTER DATABASE ... MODIFY FILE on the log: FILEGROWTH and MAXSIZE (None =
    /// UNLIMITED) now, and growth to `size` bytes if given and larger than the file.
    pub fn modify_file(
        &self,
        growth: storage::file::FileGrowth,
        max_bytes: Option<u64>,
        size: Option<u64>,
    ) -> LogResult<()> {
        let mut st = self.inner.state.lock();
        self.inner.check_usable(&st)?;
        self.inner.modify(&mut st, growth, max_bytes, size)
    }

    /// What to run when the log comes under pressure (see `Inner::pressure`): the
    /// database's checkpoint, on the thread of the next request to reach a safe point,
    /// so that a nearly full log is truncated before it fills rather than after.
    pub fn set_pressure_relief(&self, relief: Option<PressureRelief>) {
        *self.inner.relief.lock() = relief;
    }

    /// Appends a record of forward work and holds back `reserve` more bytes of log for
    /// the records that would roll it back, as SQL Server reserves log space for a
    /// transaction's compensation records: a rollback must never fail for want of log,
    /// or the database would be left with half-undone changes. Fails with 9002 unless the
    /// log (its current VLF, the reusable VLFs and what it may still grow by) has room
    /// for the record, every reservation held, this one, and a fixed system reserve for
    /// the page images and structure changes of rollbacks. Give the reservation back
    /// with [`release_reservation`](Self::release_reservation) when the transaction ends.
    pub fn append_reserving(&self, record: &[u8], reserve: u64) -> LogResult<Lsn> {
        self.inner.append(record, Some(reserve), false)
    }

    /// Holds back `bytes` of log for records about to be appended with
    /// [`append`](Self::append), so that they cannot fail with 9002 part-way: a structure
    /// change made without the exclusive tree latch cannot be rolled back while others
    /// may see its pages (`storage::btree`, "Concurrency"), so it reserves first and
    /// falls back to the exclusive path when this fails. Same room test as
    /// [`append_reserving`](Self::append_reserving); give it back with
    /// [`release_reservation`](Self::release_reservation).
    pub fn reserve(&self, bytes: u64) -> LogResult<()> {
        let st = self.inner.state.lock();
        self.inner.check_usable(&st)?;
        let wanted = bytes + self.inner.reserved.load(Ordering::Relaxed) + system_reserve(&st);
        if !room_for(&st, wanted) {
            return Err(LogError::Full { db: self.inner.db_name.clone(), reason: full_reason(&st) });
        }
        self.inner.reserved.fetch_add(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// Gives back log space reserved by [`append_reserving`](Self::append_reserving).
    pub fn release_reservation(&self, bytes: u64) {
        if bytes > 0 {
            self.inner.release(bytes);
        }
    }

    /// Log space reserved for rollbacks now (sys.dm_tran_database_transactions'
    /// database_transaction_log_bytes_reserved, summed).
    pub fn reserved_bytes(&self) -> u64 {
        self.inner.reserved.load(Ordering::Relaxed)
    }

    /// Returns once every record up to `lsn` is on disk (a durable commit; the WAL rule
    /// before a page write). Waits for the log writer, recording a WRITELOG wait, unless
    /// `lsn` is already durable. An `lsn` past the end of the log means the end of the
    /// log.
    pub fn flush_to(&self, lsn: Lsn) -> LogResult<()> {
        self.inner.flush_to(lsn)
    }

    /// Runs `then` once every record up to `lsn` is on disk, without waiting: at once on
    /// this thread if it already is, else on the log writer thread right after the flush
    /// that makes it durable (or with the error when the log fails or shuts down first).
    /// The time until then counts as a WRITELOG wait of `session` (the waits table of
    /// the session that committed) and in Log Flush Wait Time, as a `flush_to` would.
    /// This is how a connection thread hands its durable commit's reply to the log
    /// writer instead of sleeping until the flush (architecture.md, "Commit replies
    /// from the log writer"). `then` runs on the writer's thread: it must be short and
    /// must never wait for the log itself.
    pub fn when_durable(&self, lsn: Lsn, session: Option<Arc<diag::WaitStats>>, then: Durable) {
        self.inner.when_durable(lsn, session, then)
    }

    /// The database's performance counters (Transactions/sec, Log Flushes/sec, ...),
    /// looked up once when the log was opened rather than by name per use.
    pub fn counters(&self) -> &DatabaseCounters {
        &self.inner.counters
    }

    /// Asks the log writer to flush what is buffered, without waiting.
    pub fn request_flush(&self) {
        let mut st = self.inner.state.lock();
        if st.has_unflushed() {
            st.flush_requested = true;
            self.inner.writer_cv.notify_one();
        }
    }

    /// LSN of the last durable record (NULL if none).
    pub fn flushed_lsn(&self) -> Lsn {
        Lsn(self.inner.flushed.load(Ordering::Acquire))
    }

    /// LSN of the last appended record (NULL if none).
    pub fn end_lsn(&self) -> Lsn {
        self.inner.state.lock().end_lsn
    }

    /// The records from `from` (NULL = the oldest active VLF) to the last record
    /// flushed now, in LSN order. An LSN that is neither a record of the active log nor
    /// past its end gives error 9003.
    pub fn reader(&self, from: Lsn) -> LogReader {
        let st = self.inner.state.lock();
        let mut chain: Vec<(u32, ChainVlf)> =
            st.vlfs.iter().filter(|v| v.state == VlfState::Active).map(|v| (v.seq, v.chain())).collect();
        chain.sort_by_key(|(seq, _)| *seq);
        let chain = chain.into_iter().map(|(_, c)| c).collect();
        LogReader::new(
            self.inner.file.clone(),
            self.inner.db_name.clone(),
            chain,
            self.inner.generation,
            from,
            st.flushed_lsn,
        )
    }

    /// Makes the VLFs wholly before `keep_from` inactive and reusable (SIMPLE recovery
    /// after a checkpoint; FULL after a log backup). The caller computes `keep_from`
    /// (the oldest LSN still needed). VLFs holding records not yet flushed, and the VLF
    /// being written, are never truncated. Returns how many VLFs were freed.
    pub fn truncate(&self, keep_from: Lsn) -> LogResult<usize> {
        self.inner.truncate(keep_from)
    }

    /// Sets the reason error 9002 gives (log_reuse_wait_desc). Default CHECKPOINT.
    pub fn set_log_reuse_wait(&self, reason: LogReuseWait) {
        self.inner.state.lock().reuse_wait = reason;
    }

    pub fn log_reuse_wait(&self) -> LogReuseWait {
        self.inner.state.lock().reuse_wait
    }

    /// Changes the delayed-durability flush timer.
    pub fn set_flush_interval(&self, interval: Duration) {
        self.inner.state.lock().flush_interval = interval;
        self.inner.writer_cv.notify_one();
    }

    /// DBCC LOGINFO: the VLFs in file order.
    pub fn vlf_info(&self) -> Vec<VlfInfo> {
        let st = self.inner.state.lock();
        st.vlfs
            .iter()
            .map(|v| VlfInfo {
                file_id: LOG_FILE_ID,
                offset: v.offset,
                size: v.bytes(),
                fseq_no: v.seq,
                status: if v.state == VlfState::Active { VlfStatus::Active } else { VlfStatus::Inactive },
                create_lsn: v.create_lsn,
            })
            .collect()
    }

    /// DBCC SQLPERF(LOGSPACE): the file size and the part of it the active log holds
    /// (whole active VLFs, and the tail VLF up to the end of the log).
    pub fn space(&self) -> LogSpace {
        let st = self.inner.state.lock();
        let mut used = 0u64;
        for (i, v) in st.vlfs.iter().enumerate() {
            if v.state != VlfState::Active {
                continue;
            }
            if i == st.tail {
                let end = match &st.open {
                    Some(b) => u64::from(b.sector) * SECTOR as u64 + b.buf.len() as u64,
                    // Past the switch point the rest of the VLF cannot be used.
                    None if next_block_in_vlf(st.next_sector, v.size_sectors).is_none() => v.bytes(),
                    None => u64::from(st.next_sector) * SECTOR as u64,
                };
                used += end.min(v.bytes());
            } else {
                used += v.bytes();
            }
        }
        let size = st.header.log_end;
        LogSpace { size_bytes: size, used_bytes: used, used_percent: used as f64 * 100.0 / size as f64 }
    }

    pub fn stats(&self) -> LogStats {
        let s = &self.inner.stats;
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let (records_appended, bytes_appended) = {
            let st = self.inner.state.lock();
            (st.records_appended, st.bytes_appended)
        };
        LogStats {
            flushes: get(&s.flushes),
            flush_writes: get(&s.flush_writes),
            blocks_flushed: get(&s.blocks_flushed),
            bytes_flushed: get(&s.bytes_flushed),
            commits_flushed: get(&s.commits_flushed),
            flush_waits: get(&s.flush_waits),
            flush_wait_us: get(&s.flush_wait_us),
            log_buffer_waits: get(&s.log_buffer_waits),
            records_appended,
            bytes_appended,
            growths: get(&s.growths),
        }
    }

    /// An error if the log has failed or shut down (what an append would answer).
    pub fn check_usable(&self) -> LogResult<()> {
        if !self.inner.closed.load(Ordering::Acquire) {
            return Ok(());
        }
        let st = self.inner.state.lock();
        self.inner.check_usable(&st)
    }

    /// Flushes everything appended and stops the log writer. Later appends fail; the
    /// log can be reopened with [`open`](Self::open). Called by `Drop` too.
    pub fn shutdown(&self) {
        {
            let mut st = self.inner.state.lock();
            st.shutdown = true;
            self.inner.closed.store(true, Ordering::Release);
            self.inner.writer_cv.notify_one();
        }
        if let Some(h) = self.writer.lock().take() {
            // A panicking writer has nothing left to flush; the log is as it was after
            // its last successful flush. A `when_durable` callback on the writer's own
            // thread may drop the last reference to the log: it cannot wait for itself
            // (the loop ends, having nothing left to flush).
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
        // Wake appenders waiting for buffer space so they see the shutdown.
        let mut st = self.inner.state.lock();
        self.inner.wake_all();
        // Completions the writer did not run (it failed, or panicked) hear of it.
        let mut left = std::mem::take(&mut st.completions);
        drop(st);
        let db = self.inner.db_name.clone();
        self.inner.complete(&mut left, Some(&|| LogError::ShutDown(db.clone())));
    }
}

impl Drop for LogManager {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl storage::WalGate for LogManager {
    fn flushed_lsn(&self) -> u64 {
        self.inner.flushed.load(Ordering::Acquire)
    }

    fn flush_to(&self, lsn: u64) -> storage::Result<()> {
        self.inner.flush_to(Lsn(lsn)).map_err(Into::into)
    }
}

impl Inner {
    /// Wakes every waiter: buffer-space waiters and committers (failure, shutdown).
    fn wake_all(&self) {
        self.done_cv.notify_all();
        self.flush_done.iter().for_each(|cv| {
            cv.notify_all();
        });
    }

    fn unavailable(&self, cause: &str) -> LogError {
        LogError::Unavailable { db: self.db_name.clone(), cause: cause.to_string() }
    }

    /// Refuses work once the log has failed or shut down.
    fn check_usable(&self, st: &State) -> LogResult<()> {
        if let Some(cause) = &st.failed {
            return Err(self.unavailable(cause));
        }
        if st.shutdown {
            return Err(LogError::ShutDown(self.db_name.clone()));
        }
        Ok(())
    }

    /// Marks the log failed: every waiter and every later call gets 9001.
    fn fail(&self, st: &mut State, cause: String) -> LogError {
        if st.failed.is_none() {
            st.failed = Some(cause);
        }
        self.closed.store(true, Ordering::Release);
        self.wake_all();
        self.writer_cv.notify_one();
        self.unavailable(st.failed.as_deref().unwrap_or_default())
    }

    fn append(&self, record: &[u8], reserve: Option<u64>, past_max: bool) -> LogResult<Lsn> {
        if record.len() > MAX_RECORD {
            return Err(LogError::RecordTooLarge { len: record.len(), max: MAX_RECORD });
        }
        let need = RECORD_PREFIX + record.len();
        let st = self.state.lock();
        if let Some(extra) = reserve {
            self.check_usable(&st)?;
            let reserved = self.reserved.load(Ordering::Relaxed);
            let wanted = (need as u64 + BLOCK_HEADER as u64) + reserved + extra + system_reserve(&st);
            if !room_for(&st, wanted) {
                self.raise_pressure(&st, true);
                return Err(LogError::Full { db: self.db_name.clone(), reason: full_reason(&st) });
            }
            // Held from here; given back below if the append fails after all.
            self.reserved.fetch_add(extra, Ordering::Relaxed);
        }
        let r = self.append_locked(st, record, need, past_max);
        if let (Err(_), Some(extra)) = (&r, reserve) {
            self.release(extra);
        }
        r
    }

    /// Asks for a checkpoint when one could free log space: at 70% the database's
    /// background task is woken to run one beside the requests; when a reservation was
    /// refused (`urgent`) the next request to reach a safe point runs it (once at a
    /// time), so that the statement after the refused one finds the log truncated.
    pub(super) fn raise_pressure(&self, st: &State, urgent: bool) {
        // A checkpoint cannot help a log that waits for a log backup (and the like); one
        // held by a transaction may have been freed since (the relief checks).
        if !matches!(st.reuse_wait, LogReuseWait::Nothing | LogReuseWait::Checkpoint | LogReuseWait::ActiveTransaction)
        {
            return;
        }
        let Some(relief) = self.relief.lock().clone() else { return };
        if !urgent {
            relief(false);
            return;
        }
        if self.pressure.swap(true, Ordering::AcqRel) {
            return;
        }
        let flag = self.pressure.clone();
        diag::sched::run_at_safe_point(
            self.db_id,
            Box::new(move || {
                relief(true);
                flag.store(false, Ordering::Release);
            }),
        );
    }

    /// Whether the active part of the log has reached [`PRESSURE_PERCENT`] of what the
    /// log may hold (MAXSIZE, or the file's size when it may grow without limit).
    pub(super) fn under_pressure(st: &State) -> bool {
        let active: u64 = st.vlfs.iter().filter(|v| v.state == VlfState::Active).map(|v| v.bytes()).sum();
        let limit = st.header.max_bytes.unwrap_or(st.header.log_end).max(1);
        active.saturating_mul(100) >= limit.saturating_mul(PRESSURE_PERCENT)
    }

    /// Gives back reserved log space (never below zero).
    fn release(&self, bytes: u64) {
        let _ = self.reserved.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |r| Some(r.saturating_sub(bytes)));
    }

    fn append_locked(
        &self,
        mut st: parking_lot::MutexGuard<'_, State>,
        record: &[u8],
        need: usize,
        past_max: bool,
    ) -> LogResult<Lsn> {
        // Dropped (recording LOGBUFFER) when this append returns.
        let mut buffer_wait: Option<WaitTimer> = None;
        loop {
            self.check_usable(&st)?;
            if let Some(b) = st.open.as_mut() {
                if b.buf.len() + need <= MAX_BLOCK_BYTES && b.count < MAX_SLOTS {
                    let slot = b.count + 1;
                    let lsn = Lsn::new(b.seq, b.sector, slot).ok_or_else(|| {
                        // Blocks start inside VLFs of at most 2^20 sectors and slots
                        // stop at MAX_SLOTS, so this cannot happen.
                        LogError::Invalid(format!("block {} outside the LSN range", b.sector))
                    })?;
                    b.count = slot;
                    b.buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
                    b.buf.extend_from_slice(record);
                    b.last_lsn = lsn;
                    st.end_lsn = lsn;
                    if st.oldest_unflushed.is_none() {
                        st.oldest_unflushed = Some(Instant::now());
                        if st.writer_idle {
                            self.writer_cv.notify_one();
                        }
                    }
                    st.records_appended += 1;
                    st.bytes_appended += record.len() as u64;
                    return Ok(lsn);
                }
                // The block is full: hand it to the writer, which flushes full blocks
                // on its own, and start a new one.
                self.seal_open(&mut st);
                self.writer_cv.notify_one();
            }
            // A new block needs log buffer space.
            if st.sealed_bytes + st.in_flight_bytes + MAX_BLOCK_BYTES > st.buffer_limit {
                if buffer_wait.is_none() {
                    buffer_wait = Some(diag::begin_wait(WaitType::LOGBUFFER));
                    bump(&self.stats.log_buffer_waits, 1);
                }
                st.flush_requested = true;
                self.writer_cv.notify_one();
                self.done_cv.wait(&mut st);
                continue;
            }
            let tail = st.vlfs[st.tail];
            if next_block_in_vlf(st.next_sector, tail.size_sectors).is_none() {
                self.switch_vlf(&mut st, past_max)?;
            }
            let mut buf = st.spare.pop().unwrap_or_else(|| Vec::with_capacity(MAX_BLOCK_BYTES));
            buf.clear();
            buf.resize(BLOCK_HEADER, 0);
            st.open = Some(OpenBlock {
                vlf: st.tail,
                seq: st.vlfs[st.tail].seq,
                sector: st.next_sector,
                buf,
                count: 0,
                last_lsn: Lsn::NULL,
            });
        }
    }

    /// Closes the open block: pads it to whole sectors and queues it for the writer.
    /// The next block starts right after it, so a flushed sector is never rewritten.
    fn seal_open(&self, st: &mut State) {
        let Some(mut b) = st.open.take() else {
            return;
        };
        if b.count == 0 {
            st.spare.push(b.buf);
            return;
        }
        let sectors = b.buf.len().div_ceil(SECTOR);
        b.buf.resize(sectors * SECTOR, 0);
        st.next_sector = b.sector + sectors as u32;
        st.sealed_bytes += b.buf.len();
        let offset = st.vlfs[b.vlf].offset + u64::from(b.sector) * SECTOR as u64;
        st.sealed.push(SealedBlock {
            vlf: b.vlf,
            seq: b.seq,
            sector: b.sector,
            offset,
            buf: b.buf,
            count: b.count,
            last_lsn: b.last_lsn,
        });
    }

    fn flush_to(&self, lsn: Lsn) -> LogResult<()> {
        if lsn.is_null() {
            return Ok(());
        }
        if self.flushed.load(Ordering::Acquire) >= lsn.0 {
            bump(&self.stats.commits_flushed, 1);
            return Ok(());
        }
        let mut st = self.state.lock();
        let target = lsn.min(st.end_lsn);
        if let Some(r) = self.settled(&st, target) {
            drop(st);
            if r.is_ok() {
                bump(&self.stats.commits_flushed, 1);
            }
            return r;
        }
        st.flush_requested = true;
        self.writer_cv.notify_one();
        let started = Instant::now();
        let wait = diag::begin_wait(WaitType::WRITELOG);
        let r = loop {
            // The flush in flight covers `target`, or the next one will.
            let gen = if st.in_flight_end >= target { st.flush_gen } else { st.flush_gen + 1 };
            self.flush_done[(gen % 2) as usize].wait(&mut st);
            if let Some(r) = self.settled(&st, target) {
                break r;
            }
        };
        drop(st);
        wait.finish();
        r?;
        self.count_flush_wait(started.elapsed());
        Ok(())
    }

    /// What waiting for `target` comes to, when known without waiting: durable already,
    /// or never (the log failed; or it shut down with nothing left to flush, which
    /// cannot happen with records still unflushed, but no one must wait for ever on it).
    fn settled(&self, st: &State, target: Lsn) -> Option<LogResult<()>> {
        if st.flushed_lsn >= target {
            return Some(Ok(()));
        }
        if let Some(cause) = &st.failed {
            return Some(Err(self.unavailable(cause)));
        }
        if st.shutdown && !st.has_unflushed() && st.in_flight_bytes == 0 {
            return Some(Err(LogError::ShutDown(self.db_name.clone())));
        }
        None
    }

    /// A finished wait for a flush, in the log's statistics and Log Flush Wait Time.
    fn count_flush_wait(&self, waited: Duration) {
        let us = waited.as_micros() as u64;
        let before = self.stats.flush_wait_us.fetch_add(us, Ordering::Relaxed);
        // Log Flush Wait Time is in milliseconds: add whole milliseconds as the
        // microsecond total crosses them, so sub-millisecond waits still add up.
        let ms = (before + us) / 1000 - before / 1000;
        if ms > 0 {
            self.counters.log_flush_wait_time.add(ms as i64);
        }
        bump(&self.stats.flush_waits, 1);
        bump(&self.stats.commits_flushed, 1);
    }

    fn when_durable(&self, lsn: Lsn, session: Option<Arc<diag::WaitStats>>, then: Durable) {
        if lsn.is_null() || self.flushed.load(Ordering::Acquire) >= lsn.0 {
            bump(&self.stats.commits_flushed, 1);
            return then(Ok(()));
        }
        let mut st = self.state.lock();
        let target = lsn.min(st.end_lsn);
        if let Some(r) = self.settled(&st, target) {
            drop(st);
            if r.is_ok() {
                bump(&self.stats.commits_flushed, 1);
            }
            return then(r);
        }
        st.completions.push(Completion { lsn: target, started: Instant::now(), session, then });
        st.flush_requested = true;
        self.writer_cv.notify_one();
    }

    /// Runs completions taken from `State::completions` (outside the state lock): with
    /// Ok after the flush that made them durable, with the log's error otherwise. A
    /// panicking callback must not take the log writer down with it.
    fn complete(&self, ready: &mut Vec<Completion>, error: Option<&dyn Fn() -> LogError>) {
        for c in ready.drain(..) {
            let r = match error {
                None => {
                    let waited = c.started.elapsed();
                    diag::waits::record_wait_for(c.session.as_deref(), WaitType::WRITELOG, waited);
                    self.count_flush_wait(waited);
                    Ok(())
                }
                Some(e) => Err(e()),
            };
            let then = c.then;
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || then(r)));
        }
    }
}

/// The reason 9002 gives: what holds the log, or, when nothing did at the last
/// truncation, the checkpoint that would free it now (as SQL Server reports a full
/// SIMPLE-model log).
fn full_reason(st: &State) -> LogReuseWait {
    match st.reuse_wait {
        LogReuseWait::Nothing => LogReuseWait::Checkpoint,
        r => r,
    }
}

/// Log space no forward work may use: it is kept for the page images and structure
/// changes a rollback writes beyond the reservations of the records it undoes (a full
/// page image when the undo is a page's first change since it was written). 64 KB, at
/// most an eighth of the log.
fn system_reserve(st: &State) -> u64 {
    (64 * 1024).min(st.header.log_end / 8)
}

/// Whether `bytes` more of log fit: in the rest of the tail VLF, the reusable VLFs, and
/// what the file may still grow by (FILEGROWTH up to MAXSIZE; without MAXSIZE, without
/// limit). Counted low: a VLF's last block starts only where a full-size block fits
/// (`next_block_in_vlf`), so up to a block's worth at the end of each VLF may go unused.
/// Checked before every reserving append, so the common case (room in the tail VLF) is
/// the first test.
fn room_for(st: &State, bytes: u64) -> bool {
    let max_block = MAX_BLOCK_BYTES as u64;
    // Room from `from` to the end of a VLF of `vlf_bytes`: blocks keep starting while a
    // full one fits, so at most one block's worth short of the end is used for sure.
    let usable = |vlf_bytes: u64, from: u64| (vlf_bytes.saturating_sub(from) + SECTOR as u64).saturating_sub(max_block);
    let tail = &st.vlfs[st.tail];
    let mut room = match &st.open {
        Some(b) => {
            let start = u64::from(b.sector) * SECTOR as u64;
            (max_block - b.buf.len() as u64) + usable(tail.bytes(), start + max_block)
        }
        None => usable(tail.bytes(), u64::from(st.next_sector) * SECTOR as u64),
    };
    if room >= bytes {
        return true;
    }
    room += st
        .vlfs
        .iter()
        .enumerate()
        .filter(|&(i, v)| i != st.tail && v.reusable())
        .map(|(_, v)| usable(v.bytes(), SECTOR as u64))
        .sum::<u64>();
    if room >= bytes {
        return true;
    }
    let cur_pages = u32::try_from(st.header.log_end / 8192).unwrap_or(u32::MAX);
    if st.header.growth.increment(cur_pages) > 0 {
        match st.header.max_bytes {
            None => return true,
            Some(max) => room += max.saturating_sub(st.header.log_end),
        }
    }
    room >= bytes
}

// Keep the format constants this module relies on honest.
const _: () = assert!(format::MAX_RECORD + BLOCK_HEADER + RECORD_PREFIX == MAX_BLOCK_BYTES);
