//! Transactions over one database: the page-change hook that logs every change, system
//! transactions, user transactions with commit (durable or delayed), rollback and
//! savepoints.
//!
//! ## How a change is logged
//!
//! `storage` changes pages only through `Database::change`, which hands each change to
//! [`DbLog`] (this module's `storage::LogHook`). DbLog writes a PAGE_OP record
//! (physiological redo, physical undo material, a full page image when the page was clean
//! before this change) and returns its LSN, which becomes the page LSN.
//!
//! Storage brackets every multi-page structure change and every row operation in a
//! *system transaction*; a row operation's system transaction ends with a ROW_UNDO record
//! that also joins the *user* transaction's undo chain. The current user transaction is a
//! thread-local set by [`Transaction::enter`] (a worker runs one request at a time).
//!
//! ## Commit and rollback
//!
//! COMMIT_XACT is appended to the log buffer; a durable commit then waits for the log to
//! be flushed up to it (WRITELOG, shared with concurrent commits by the log writer: group
//! commit). A delayed-durable commit returns at once; the log writer flushes it within its
//! flush interval (see `log` module: the loss window). The database option decides:
//! DISABLED forces every commit durable, FORCED makes every commit delayed, ALLOWED lets
//! `COMMIT ... WITH (DELAYED_DURABILITY = ON)` choose.
//!
//! Rollback applies the transaction's row-undo records newest first (logical,
//! idempotent undo through `storage::undo::apply_row_undo`), writing a CLR after each so a
//! crash during rollback never undoes the same change twice; then ABORT_XACT. Runtime
//! rollback keeps the transaction's undo records in memory, so it never has to read back
//! log that may not be flushed yet; recovery reads them from the log.

use crate::lock::{LockManager, LockOwner};
use crate::log::{LogError, LogManager, Lsn};
pub use crate::record::DeferredFree;
use crate::record::{self, flags, Header, RecordKind};
use parking_lot::{Mutex, RwLock};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use storage::undo::{self, RowUndo};
use storage::{Database, LogHook, PageChange, PageId, PageOp, Result, StorageError};

/// ALTER DATABASE ... SET DELAYED_DURABILITY.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedDurability {
    Disabled,
    Allowed,
    Forced,
}

impl DelayedDurability {
    /// sys.databases.delayed_durability_desc
    pub fn desc(self) -> &'static str {
        match self {
            DelayedDurability::Disabled => "DISABLED",
            DelayedDurability::Allowed => "ALLOWED",
            DelayedDurability::Forced => "FORCED",
        }
    }

    /// Whether a commit that asked for `requested` is delayed under this setting.
    pub fn effective(self, requested: bool) -> bool {
        match self {
            DelayedDurability::Disabled => false,
            DelayedDurability::Allowed => requested,
            DelayedDurability::Forced => true,
        }
    }
}

pub(crate) fn log_err(e: crate::log::LogError) -> StorageError {
    e.into()
}

/// The state of one user transaction shared between its handle and the logging hook.
pub struct XactState {
    pub xact_id: u64,
    pub name: String,
    db_id: u16,
    pub first_lsn: AtomicU64,
    /// Last record of the user chain (BEGIN, ROW_UNDO, ROW_OP, CLR).
    pub last_lsn: AtomicU64,
    /// BEGIN_XACT has been written (see [`DbLog::ensure_begun`]).
    begun: AtomicBool,
    /// Bytes of log this transaction wrote (deadlock victim choice, like SQL Server).
    pub log_used: Arc<AtomicU64>,
    /// Log space reserved for rolling this transaction back (see
    /// `LogManager::append_reserving`), given back when it ends.
    pub log_reserved: AtomicU64,
    /// Pages this transaction changed, for the page-image part of that reservation.
    changed_pages: Mutex<ChangedPages>,
    /// In-memory copy of the undo chain for runtime rollback, oldest first.
    undo: Mutex<Vec<UndoEntry>>,
    /// Heap rows this transaction ghosted: removed for good after commit.
    ghosts: Mutex<Vec<(u64, storage::record::Rid)>>,
}

/// The pages a transaction changed. Its rollback changes them again, and the first change
/// of a page since it was last written logs a full page image, so each one may cost a
/// page image on top of the compensation records.
#[derive(Default)]
struct ChangedPages {
    last: Option<PageId>,
    seen: std::collections::HashSet<PageId, crate::lock::manager::FxBuild>,
}

impl ChangedPages {
    /// At most this many pages are remembered; past it every change of another page than
    /// the last reserves an image (more than needed, never less).
    const MAX: usize = 100_000;

    /// Whether `page` is one this transaction had not changed yet.
    fn first_change(&mut self, page: PageId) -> bool {
        if self.last == Some(page) {
            return false;
        }
        self.last = Some(page);
        if self.seen.len() >= Self::MAX {
            return !self.seen.contains(&page);
        }
        self.seen.insert(page)
    }
}

enum UndoEntry {
    /// A row-undo record: the chain LSN before it, and its encoded RowUndo.
    Row {
        prev: u64,
        undo: Vec<u8>,
    },
    Savepoint {
        name: String,
    },
}

impl XactState {
    fn new(xact_id: u64, name: &str, db_id: u16, last_lsn: u64, begun: bool, log_used: Arc<AtomicU64>) -> Arc<Self> {
        Arc::new(XactState {
            xact_id,
            name: name.to_string(),
            db_id,
            first_lsn: AtomicU64::new(0),
            last_lsn: AtomicU64::new(last_lsn),
            begun: AtomicBool::new(begun),
            log_used,
            log_reserved: AtomicU64::new(0),
            changed_pages: Mutex::new(ChangedPages::default()),
            undo: Mutex::new(Vec::new()),
            ghosts: Mutex::new(Vec::new()),
        })
    }

    /// The state of a loser transaction that recovery rolls back.
    pub(crate) fn for_recovery(xact_id: u64, db_id: u16, last_lsn: u64) -> Arc<XactState> {
        XactState::new(xact_id, "", db_id, last_lsn, true, Arc::new(AtomicU64::new(0)))
    }

    /// Makes this the current transaction of the thread until the scope is dropped.
    pub fn enter(self: &Arc<Self>) -> XactScope {
        let previous = CTX.with(|ctx| ctx.borrow_mut().xact.replace(self.clone()));
        XactScope { previous }
    }

    /// Appends a record to this transaction's chain (prev_lsn = the chain's last LSN).
    pub(crate) fn append_chain(
        self: &Arc<Self>,
        db: &TxnDb,
        kind: RecordKind,
        body: impl FnOnce(&Header, &mut Vec<u8>),
    ) -> Result<u64> {
        db.hook.ensure_begun(self)?;
        let h = Header { xact_id: self.xact_id, prev_lsn: self.last_lsn.load(Ordering::Acquire), ..Header::new(kind) };
        let mut rec = Vec::with_capacity(record::HEADER_LEN + 64);
        body(&h, &mut rec);
        // Compensation and ABORT_XACT use the space reserved for them; the rest reserves.
        let lsn = if matches!(kind, RecordKind::Clr | RecordKind::AbortXact) {
            db.hook.append_undo(&rec)?
        } else {
            db.hook.append_forward(&rec, Some(self), None)?
        };
        self.last_lsn.store(lsn, Ordering::Release);
        self.log_used.fetch_add(rec.len() as u64, Ordering::Relaxed);
        Ok(lsn)
    }
}

/// An open system transaction on this thread.
struct SysFrame {
    db_id: u16,
    sys_id: u64,
    depth: u32,
    last_lsn: u64,
    ended: bool,
    /// (lsn, page, undo material) of each logged op, to roll back at runtime if the
    /// work fails.
    undo: Vec<(u64, PageId, Vec<u8>)>,
    /// Log space reserved up front for this system transaction's records
    /// (`LogHook::reserve_system_txn`): they append into it, and it is given back at
    /// the end.
    reserved: u64,
}

/// What this thread is compensating, if anything.
#[derive(Clone, Copy)]
pub(crate) enum Compensating {
    /// Applying a user transaction's logical undo: structure code logs no ROW_UNDO.
    Logical,
    /// Undoing system transaction `sys_id` physically: page ops are compensation
    /// records whose sys_prev_lsn is this undo-next LSN.
    Physical { sys_id: u64, undo_next: u64 },
}

#[derive(Default)]
struct ThreadCtx {
    xact: Option<Arc<XactState>>,
    sys: Vec<SysFrame>,
    comp: Option<Compensating>,
}

thread_local! {
    static CTX: RefCell<ThreadCtx> = RefCell::new(ThreadCtx::default());
    /// Scratch buffer for encoding PAGE_OP records (see `DbLog::log_page_op`).
    static REC_BUF: RefCell<Vec<u8>> = RefCell::new(Vec::with_capacity(16 * 1024));
}

/// The logging hook of one database: implements `storage::LogHook` over the log manager.
pub struct DbLog {
    db_id: u16,
    log: Arc<LogManager>,
    next_id: Arc<AtomicU64>,
    db: RwLock<Weak<Database>>,
    /// System transactions that have logged something and not ended: id -> first LSN.
    /// A checkpoint records them, so analysis starts early enough to see every record
    /// of one cut short by a crash.
    open_sys: Mutex<std::collections::HashMap<u64, u64, crate::lock::manager::FxBuild>>,
    /// Page changes being logged, so a checkpoint can wait for those not yet on the
    /// dirty page list (see `checkpoint::ChangeSlots`).
    pub(crate) changes: crate::checkpoint::ChangeSlots,
    /// User transactions that have written their BEGIN_XACT and not ended.
    active: ActiveXacts,
    /// Deferred frees of committed transactions not done yet: (xact id, index) -> what
    /// to free. Changed only inside an `active` step (with the COMMIT_XACT or the
    /// tagged SYS_END that makes the change), so a checkpoint's CKPT_BEGIN, appended
    /// while no step runs, sees it exactly as of its LSN.
    pending_frees: Mutex<BTreeMap<storage::CompletionTag, DeferredFree>>,
}

/// Shards of the active transaction list: sessions that begin and end transactions at
/// once each lock one (by transaction id) instead of queueing on one mutex.
const ACTIVE_SHARDS: usize = 16;

/// The user transactions that have written their BEGIN_XACT and not ended, and the
/// step gate that orders their BEGIN_XACT, COMMIT_XACT and ABORT_XACT (and the changes
/// of the deferred-free list) against a checkpoint's CKPT_BEGIN: each appends its record
/// and changes the list inside one step (the gate shared), CKPT_BEGIN is appended and
/// the list read while no step runs (the gate exclusive). Steps run side by side; with
/// one mutex for all, at 16 sessions committing one-row transactions most of their
/// context switches were waits for it.
struct ActiveXacts {
    gate: RwLock<()>,
    shards: [Mutex<BTreeMap<u64, Arc<XactState>>>; ACTIVE_SHARDS],
}

impl Default for ActiveXacts {
    fn default() -> Self {
        ActiveXacts { gate: RwLock::new(()), shards: std::array::from_fn(|_| Mutex::new(BTreeMap::new())) }
    }
}

impl ActiveXacts {
    /// A begin, an end, or a change of the deferred-free list: its record and its
    /// change of the lists are one step with respect to CKPT_BEGIN. Not reentrant.
    fn step(&self) -> parking_lot::RwLockReadGuard<'_, ()> {
        self.gate.read()
    }

    /// No step runs while the guard is held (CKPT_BEGIN).
    fn alone(&self) -> parking_lot::RwLockWriteGuard<'_, ()> {
        self.gate.write()
    }

    fn shard(&self, xact_id: u64) -> &Mutex<BTreeMap<u64, Arc<XactState>>> {
        &self.shards[(xact_id % ACTIVE_SHARDS as u64) as usize]
    }

    fn insert(&self, x: &Arc<XactState>) {
        self.shard(x.xact_id).lock().insert(x.xact_id, x.clone());
    }

    fn remove(&self, xact_id: u64) {
        self.shard(xact_id).lock().remove(&xact_id);
    }

    /// (id, first LSN, last LSN) of each, in id order.
    fn list(&self) -> Vec<record::ActiveXact> {
        let mut out: Vec<record::ActiveXact> = Vec::new();
        for shard in &self.shards {
            out.extend(shard.lock().values().map(|x| record::ActiveXact {
                xact_id: x.xact_id,
                first_lsn: x.first_lsn.load(Ordering::Acquire),
                last_lsn: x.last_lsn.load(Ordering::Acquire),
            }));
        }
        out.sort_by_key(|a| a.xact_id);
        out
    }
}

impl DbLog {
    /// Writes the transaction's BEGIN_XACT and lists it as active, unless done already:
    /// called before its first record of any kind. A transaction that never writes one
    /// (a SELECT's autocommit transaction) logs nothing at all, not even its COMMIT, as
    /// SQL Server logs no read-only transaction; the log of one that writes has the same
    /// shape as if BEGIN_XACT had been written at BEGIN TRANSACTION.
    pub(crate) fn ensure_begun(&self, x: &Arc<XactState>) -> Result<()> {
        // Only the transaction's own thread logs for it: no race on the flag.
        if x.begun.load(Ordering::Acquire) {
            return Ok(());
        }
        let h = Header { xact_id: x.xact_id, ..Header::new(RecordKind::BeginXact) };
        let mut rec = Vec::with_capacity(record::HEADER_LEN + 64);
        record::encode_named(&h, &x.name, &mut rec);
        // BEGIN_XACT is appended and the transaction listed as one step with respect to a
        // checkpoint's CKPT_BEGIN (see `append_checkpoint_begin`).
        let _step = self.active.step();
        let lsn = self.append(&rec)?;
        x.first_lsn.store(lsn, Ordering::Release);
        x.last_lsn.store(lsn, Ordering::Release);
        self.active.insert(x);
        x.begun.store(true, Ordering::Release);
        Ok(())
    }

    /// The transaction of this thread in this database, begun in the log (see
    /// [`DbLog::ensure_begun`]).
    fn current_xact(&self) -> Result<Option<Arc<XactState>>> {
        let xact = CTX.with(|ctx| ctx.borrow().xact.as_ref().filter(|x| x.db_id == self.db_id).cloned());
        if let Some(x) = &xact {
            self.ensure_begun(x)?;
        }
        Ok(xact)
    }

    fn close_sys(&self, sys_id: u64) {
        self.open_sys.lock().remove(&sys_id);
    }

    /// Open system transactions (id, first LSN), for CKPT_END.
    pub fn open_system_transactions(&self) -> Vec<(u64, u64)> {
        self.open_sys.lock().iter().map(|(&k, &v)| (k, v)).collect()
    }

    /// Appends a record that may use the log space held back for rollbacks:
    /// compensation records, the end of a system transaction, ABORT_XACT.
    pub(crate) fn append(&self, rec: &[u8]) -> Result<u64> {
        if CTX.with(|ctx| ctx.borrow().comp.is_some()) {
            return self.append_undo(rec);
        }
        Ok(self.log.append(rec).map_err(log_err)?.as_u64())
    }

    /// Appends a record of a rollback, which must not fail for want of log (see
    /// `LogManager::append_essential`).
    pub(crate) fn append_undo(&self, rec: &[u8]) -> Result<u64> {
        Ok(self.log.append_essential(rec).map_err(log_err)?.as_u64())
    }

    /// Appends a record of forward work, reserving the log space its rollback would
    /// need (charged to `xact`, given back when it ends); without a user transaction
    /// (a system transaction on its own) it reserves nothing but still leaves the
    /// reserved space alone. Fails with 9002 rather than eat into that space.
    /// `page`: the page the record changes, if any.
    pub(crate) fn append_forward(&self, rec: &[u8], xact: Option<&XactState>, page: Option<PageId>) -> Result<u64> {
        let reserve = xact.map_or(0, |x| {
            let image = page.is_some_and(|p| x.changed_pages.lock().first_change(p));
            undo_reserve(rec.len()) + if image { PAGE_IMAGE_RESERVE } else { 0 }
        });
        let lsn = self.log.append_reserving(rec, reserve).map_err(log_err)?;
        if let Some(x) = xact {
            x.log_reserved.fetch_add(reserve, Ordering::Relaxed);
        }
        Ok(lsn.as_u64())
    }

    /// Ends the innermost system transaction of this thread (see `LogHook`); `tag` marks
    /// a deferred free done (`TxnDb::run_deferred_frees`).
    fn end_frame(&self, committed: bool, tag: Option<storage::CompletionTag>) -> Result<()> {
        let frame = CTX.with(|ctx| {
            let mut ctx = ctx.borrow_mut();
            match ctx.sys.last_mut() {
                Some(f) if f.db_id == self.db_id && f.depth > 1 => {
                    f.depth -= 1;
                    None
                }
                Some(f) if f.db_id == self.db_id => ctx.sys.pop(),
                _ => None,
            }
        });
        let Some(frame) = frame else { return Ok(()) };
        // Given back however the frame ends (its records are in the log by now).
        let _reservation = Reservation { log: &self.log, bytes: frame.reserved };
        if frame.last_lsn == 0 || frame.ended {
            return Ok(()); // nothing logged, or already ended by its ROW_UNDO
        }
        if !committed {
            return self.roll_back_frame(&frame);
        }
        let h = Header {
            sys_id: frame.sys_id,
            sys_prev_lsn: frame.last_lsn,
            flags: flags::ENDS_SYS,
            ..Header::new(RecordKind::SysEnd)
        };
        let mut rec = Vec::with_capacity(record::HEADER_LEN + 12);
        match tag {
            None => {
                record::encode_bare(&h, &mut rec);
                self.append(&rec)?;
            }
            Some(tag) => {
                // The tagged end and the pending list's removal are one step with
                // respect to a checkpoint's CKPT_BEGIN (appended under the same lock): a
                // checkpoint never lists as pending a free whose end record precedes it.
                record::encode_sys_end_tagged(&h, tag, &mut rec);
                let _step = self.active.step();
                self.append(&rec)?;
                self.pending_frees.lock().remove(&tag);
            }
        }
        self.close_sys(frame.sys_id);
        Ok(())
    }

    fn new_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Undoes the page ops of a system transaction that failed at runtime.
    fn roll_back_frame(&self, frame: &SysFrame) -> Result<()> {
        let db = self.db.read().upgrade().ok_or_else(|| StorageError::Invalid("database closed".into()))?;
        // Undo newest first. Each compensation record's undo-next is the op before the one
        // it undoes, so a crash half-way through resumes exactly where this stopped.
        for i in (0..frame.undo.len()).rev() {
            let (_, page, material) = &frame.undo[i];
            let undo_next = if i == 0 { 0 } else { frame.undo[i - 1].0 };
            set_comp(Some(Compensating::Physical { sys_id: frame.sys_id, undo_next }));
            let r = undo::apply_physical_undo(&db, *page, material);
            set_comp(None);
            r?;
        }
        self.close_sys(frame.sys_id);
        let h =
            Header { sys_id: frame.sys_id, sys_prev_lsn: 0, flags: flags::ENDS_SYS, ..Header::new(RecordKind::SysEnd) };
        let mut rec = Vec::with_capacity(record::HEADER_LEN);
        record::encode_bare(&h, &mut rec);
        self.append(&rec)?;
        Ok(())
    }
}

/// Gives a system transaction's up-front log reservation back when dropped.
struct Reservation<'a> {
    log: &'a LogManager,
    bytes: u64,
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        self.log.release_reservation(self.bytes);
    }
}

pub(crate) fn set_comp(c: Option<Compensating>) {
    CTX.with(|ctx| ctx.borrow_mut().comp = c);
}

impl LogHook for DbLog {
    fn log_page_op(&self, ch: &PageChange<'_>) -> Result<u64> {
        let (comp, sys, prereserved) = CTX.with(|ctx| {
            let ctx = ctx.borrow();
            let frame = ctx.sys.last().filter(|f| f.db_id == self.db_id);
            let sys = frame.map(|f| (f.sys_id, f.last_lsn));
            (ctx.comp, sys, frame.is_some_and(|f| f.reserved > 0))
        });
        let xact = self.current_xact()?;
        let mut h = Header::new(RecordKind::PageOp);
        h.xact_id = xact.as_ref().map(|x| x.xact_id).unwrap_or(0);
        let mut material = Vec::new();
        match comp {
            Some(Compensating::Physical { sys_id, undo_next }) => {
                h.flags |= flags::COMPENSATION;
                h.sys_id = sys_id;
                h.sys_prev_lsn = undo_next;
            }
            _ => {
                if let Some((sys_id, last)) = sys {
                    h.sys_id = sys_id;
                    h.sys_prev_lsn = last;
                    // A row op's material is a slot's old record or a few fields.
                    material.reserve(128);
                    undo::undo_material(ch.before, ch.op, &mut material);
                }
            }
        }
        // A full page image on the first change after the page was last written, so redo
        // can rebuild the page even if that write was torn. Formatting needs no base.
        let image = (ch.was_clean && !matches!(ch.op, PageOp::Format { .. }) && !ch.before.is_zeroed())
            .then(|| &ch.before.as_bytes()[..]);
        // The record is encoded into a per-thread buffer (the log manager copies it into
        // its block), so logging a page change allocates nothing for the record itself.
        let (lsn, rec_len) = REC_BUF.with(|buf| {
            let mut rec = buf.borrow_mut();
            rec.clear();
            record::encode_page_op(&h, ch.page, &material, image, ch.op, &mut rec);
            let append = || match comp {
                // Undo (logical or physical) writes into the space reserved for it, and
                // so does a system transaction that reserved its space up front.
                Some(_) => self.append(&rec),
                None if prereserved => self.append(&rec),
                None => self.append_forward(&rec, xact.as_deref(), Some(ch.page)),
            };
            self.changes.logging(ch.page, append).map(|lsn| (lsn, rec.len()))
        })?;
        if let Some(x) = xact {
            x.log_used.fetch_add(rec_len as u64, Ordering::Relaxed);
        }
        if sys.is_some() && !matches!(comp, Some(Compensating::Physical { .. })) {
            CTX.with(|ctx| {
                if let Some(f) = ctx.borrow_mut().sys.last_mut() {
                    if f.last_lsn == 0 {
                        self.open_sys.lock().insert(f.sys_id, lsn);
                    }
                    f.last_lsn = lsn;
                    f.undo.push((lsn, ch.page, material));
                }
            });
        }
        Ok(lsn)
    }

    fn begin_system_txn(&self) -> Result<()> {
        CTX.with(|ctx| {
            let mut ctx = ctx.borrow_mut();
            match ctx.sys.last_mut() {
                Some(f) if f.db_id == self.db_id && !f.ended => f.depth += 1,
                _ => {
                    let sys_id = self.new_id();
                    ctx.sys.push(SysFrame {
                        db_id: self.db_id,
                        sys_id,
                        depth: 1,
                        last_lsn: 0,
                        ended: false,
                        undo: Vec::new(),
                        reserved: 0,
                    })
                }
            }
        });
        Ok(())
    }

    fn end_system_txn(&self, committed: bool) -> Result<()> {
        self.end_frame(committed, None)
    }

    fn end_system_txn_tagged(&self, tag: storage::CompletionTag) -> Result<()> {
        self.end_frame(true, Some(tag))
    }

    fn reserve_system_txn(&self, bytes: u64) -> Result<bool> {
        if CTX.with(|ctx| ctx.borrow().comp.is_some()) {
            return Ok(true); // undo writes into space reserved for it already
        }
        match self.log.reserve(bytes) {
            Ok(()) => {}
            Err(LogError::Full { .. }) => return Ok(false),
            Err(e) => return Err(log_err(e)),
        }
        let held = CTX.with(|ctx| match ctx.borrow_mut().sys.last_mut() {
            Some(f) if f.db_id == self.db_id => {
                f.reserved += bytes;
                true
            }
            _ => false,
        });
        if !held {
            // No system transaction open to carry it: nothing may rely on it.
            self.log.release_reservation(bytes);
        }
        Ok(held)
    }

    fn log_row_undo(&self, _db: u16, u: &RowUndo) -> Result<u64> {
        let xact = self.current_xact()?;
        let sys = CTX.with(|ctx| {
            let ctx = ctx.borrow();
            ctx.sys.last().filter(|f| f.db_id == self.db_id).map(|f| (f.sys_id, f.last_lsn, f.depth))
        });
        let mut h = Header::new(RecordKind::RowUndo);
        if let Some((sys_id, last, depth)) = sys {
            h.sys_id = sys_id;
            h.sys_prev_lsn = last;
            if depth == 1 {
                h.flags |= flags::ENDS_SYS;
            }
        }
        let prev = xact.as_ref().map(|x| x.last_lsn.load(Ordering::Acquire)).unwrap_or(0);
        if let Some(x) = &xact {
            h.xact_id = x.xact_id;
            h.prev_lsn = prev;
        }
        // Sized up front: the encoder appends field by field.
        let mut body = Vec::with_capacity(row_undo_len_hint(u));
        u.encode(&mut body);
        let mut rec = Vec::with_capacity(record::HEADER_LEN + body.len());
        record::encode_row_undo(&h, &body, &mut rec);
        let lsn = self.append_forward(&rec, xact.as_deref(), None)?;
        let ended = CTX.with(|ctx| {
            if let Some(f) = ctx.borrow_mut().sys.last_mut() {
                if f.db_id == self.db_id && f.depth == 1 {
                    f.ended = true;
                    return Some(f.sys_id);
                }
            }
            None
        });
        if let Some(id) = ended {
            self.close_sys(id);
        }
        if let Some(x) = xact {
            x.last_lsn.store(lsn, Ordering::Release);
            let _ = x.first_lsn.compare_exchange(0, lsn, Ordering::AcqRel, Ordering::Acquire);
            x.log_used.fetch_add(rec.len() as u64, Ordering::Relaxed);
            if let RowUndo::HeapUnghost { au, rid } = u {
                x.ghosts.lock().push((*au, *rid));
            }
            x.undo.lock().push(UndoEntry::Row { prev, undo: body });
        }
        Ok(lsn)
    }

    fn log_row_op(&self, ch: &PageChange<'_>, u: &RowUndo<'_>) -> Result<Option<u64>> {
        let (xact, busy) = CTX.with(|ctx| {
            let ctx = ctx.borrow();
            let xact = ctx.xact.as_ref().filter(|x| x.db_id == self.db_id).cloned();
            // Inside a system transaction the op must join its chain; while compensating,
            // undo logs no row undo: both keep the system-transaction form.
            let busy = ctx.comp.is_some() || ctx.sys.last().is_some_and(|f| f.db_id == self.db_id && !f.ended);
            (xact, busy)
        });
        if busy {
            return Ok(None);
        }
        if let Some(x) = &xact {
            self.ensure_begun(x)?;
        }
        let mut h = Header::new(RecordKind::RowOp);
        let prev = xact.as_ref().map(|x| x.last_lsn.load(Ordering::Acquire)).unwrap_or(0);
        if let Some(x) = &xact {
            h.xact_id = x.xact_id;
            h.prev_lsn = prev;
        }
        let image = (ch.was_clean && !matches!(ch.op, PageOp::Format { .. }) && !ch.before.is_zeroed())
            .then(|| &ch.before.as_bytes()[..]);
        let (lsn, rec_len, undo) = REC_BUF.with(|buf| {
            let mut rec = buf.borrow_mut();
            rec.clear();
            let mut span = (0, 0);
            record::encode_row_op(
                &h,
                ch.page,
                image,
                ch.op,
                |out| {
                    span.0 = out.len();
                    u.encode(out);
                    span.1 = out.len();
                },
                &mut rec,
            )
            .map_err(|e| StorageError::Invalid(e.to_string()))?;
            // The transaction keeps its undo in memory too (rollback without reading the log).
            let undo = xact.as_ref().map(|_| rec[span.0..span.1].to_vec());
            let lsn = self.changes.logging(ch.page, || self.append_forward(&rec, xact.as_deref(), Some(ch.page)))?;
            Ok::<_, StorageError>((lsn, rec.len(), undo))
        })?;
        if let (Some(x), Some(body)) = (xact, undo) {
            x.last_lsn.store(lsn, Ordering::Release);
            let _ = x.first_lsn.compare_exchange(0, lsn, Ordering::AcqRel, Ordering::Acquire);
            x.log_used.fetch_add(rec_len as u64, Ordering::Relaxed);
            if let RowUndo::HeapUnghost { au, rid } = u {
                x.ghosts.lock().push((*au, *rid));
            }
            x.undo.lock().push(UndoEntry::Row { prev, undo: body });
        }
        Ok(Some(lsn))
    }

    fn compensating(&self) -> bool {
        CTX.with(|ctx| matches!(ctx.borrow().comp, Some(Compensating::Logical)))
    }
}

/// Log space to reserve for rolling back a record of `len` bytes: the compensation
/// page change is about the size of what it undoes, plus a CLR (header and undo-next).
fn undo_reserve(len: usize) -> u64 {
    (len + record::HEADER_LEN + 64) as u64
}

/// Log space to reserve for a page the transaction changes for the first time: the full
/// page image its rollback's first change of that page may log.
const PAGE_IMAGE_RESERVE: u64 = (storage::page::PAGE_SIZE + record::HEADER_LEN + 64) as u64;

/// About the encoded size of a row undo record (tag, unit, length-prefixed fields).
fn row_undo_len_hint(u: &RowUndo) -> usize {
    32 + match u {
        RowUndo::BTreeRemove { stored_key, .. } => stored_key.len(),
        RowUndo::BTreeRestore { stored_key, value, .. } => stored_key.len() + value.len(),
        RowUndo::BTreeRevalue { stored_key, old_value, .. } => stored_key.len() + old_value.len(),
        RowUndo::HeapRevert { old_record, .. } => old_record.len(),
        _ => 0,
    }
}

/// Entries per DEFERRED_FREE record (16 bytes each: well under a log block).
const DEFERRED_FREES_PER_RECORD: usize = 1024;

/// What `append_checkpoint_begin` returns: CKPT_BEGIN's LSN and what was in progress
/// then.
pub(crate) struct CheckpointBegin {
    pub lsn: Lsn,
    pub active: Vec<record::ActiveXact>,
    pub pending_frees: Vec<record::PendingFree>,
}

/// A database with its log, locks and transactions.
pub struct TxnDb {
    pub db: Arc<Database>,
    pub log: Arc<LogManager>,
    pub locks: Arc<LockManager>,
    pub hook: Arc<DbLog>,
    next_id: Arc<AtomicU64>,
    delayed: RwLock<DelayedDurability>,
    pub(crate) checkpoint_lock: Mutex<()>,
    /// `pause_deferred_frees` (crash tests).
    frees_paused: AtomicBool,
    /// Recovery options, the background checkpoint task, checkpoint history and
    /// observers (see `checkpoint` and `writer`).
    pub(crate) ckpt: crate::checkpoint::CheckpointState,
}

impl TxnDb {
    /// Wires a database to its log: installs the logging hook and the WAL gate.
    pub fn attach(
        db: Arc<Database>,
        log: Arc<LogManager>,
        locks: Arc<LockManager>,
        next_id: u64,
    ) -> Result<Arc<TxnDb>> {
        let next_id = Arc::new(AtomicU64::new(next_id.max(1)));
        let hook = Arc::new(DbLog {
            db_id: db.id,
            log: log.clone(),
            next_id: next_id.clone(),
            db: RwLock::new(Arc::downgrade(&db)),
            open_sys: Mutex::new(std::collections::HashMap::with_hasher(Default::default())),
            changes: Default::default(),
            active: ActiveXacts::default(),
            pending_frees: Mutex::new(BTreeMap::new()),
        });
        db.set_log(hook.clone(), log.clone())?;
        Ok(Arc::new(TxnDb {
            db,
            log,
            locks,
            hook,
            next_id,
            delayed: RwLock::new(DelayedDurability::Disabled),
            checkpoint_lock: Mutex::new(()),
            frees_paused: AtomicBool::new(false),
            ckpt: Default::default(),
        }))
    }

    pub fn set_delayed_durability(&self, d: DelayedDurability) {
        *self.delayed.write() = d;
    }

    pub fn delayed_durability(&self) -> DelayedDurability {
        *self.delayed.read()
    }

    /// The next transaction id that will be handed out (checkpoints record it).
    pub fn next_xact_id(&self) -> u64 {
        self.next_id.load(Ordering::Relaxed)
    }

    /// Active user transactions: (id, first LSN, last LSN) — for checkpoints, truncation
    /// and DMVs.
    pub fn active_transactions(&self) -> Vec<record::ActiveXact> {
        self.hook.active.list()
    }

    /// Appends a checkpoint's CKPT_BEGIN while no transaction begins or ends (their
    /// BEGIN_XACT, COMMIT_XACT and ABORT_XACT are appended under the same lock), and
    /// returns its LSN with the user transactions active at that point: exactly those
    /// that began before it and had not ended. Analysis starts at CKPT_BEGIN and learns
    /// about everything later from the log.
    /// The deferred frees not done at that point come with them (they change under the
    /// same lock).
    pub(crate) fn append_checkpoint_begin(&self, rec: &[u8]) -> Result<CheckpointBegin> {
        let _alone = self.hook.active.alone();
        let lsn = self.log.append_essential(rec).map_err(log_err)?;
        let list = self.hook.active.list();
        let pending_frees = self
            .hook
            .pending_frees
            .lock()
            .iter()
            .map(|(&(xact_id, index), &what)| record::PendingFree { xact_id, index, what })
            .collect();
        Ok(CheckpointBegin { lsn, active: list, pending_frees })
    }

    /// Does the deferred frees of committed transactions, each in a system transaction
    /// whose end record carries its (xact id, index) tag, and drops them from the
    /// pending list as that record is appended. A free that fails stays pending (the
    /// next checkpoint records it, the next start retries it); the error log says why.
    pub fn run_deferred_frees(&self, frees: impl IntoIterator<Item = (storage::CompletionTag, DeferredFree)>) {
        if self.frees_paused.load(Ordering::Relaxed) {
            return;
        }
        for (tag, what) in frees {
            let r = match what {
                DeferredFree::Lob(ptr) => storage::lob::delete_tagged(&self.db, ptr, tag),
                // Unit ids are never reused: a unit that is gone was dropped already.
                DeferredFree::AllocUnit(au) if self.db.alloc_unit(au).is_err() => {
                    let _step = self.hook.active.step();
                    self.hook.pending_frees.lock().remove(&tag);
                    Ok(())
                }
                DeferredFree::AllocUnit(au) => self.db.drop_alloc_unit_tagged(au, tag),
            };
            if let Err(e) = r {
                let what = match what {
                    DeferredFree::Lob(ptr) => format!("an off-row value ({} bytes)", ptr.total_len),
                    DeferredFree::AllocUnit(au) => format!("allocation unit {au}"),
                };
                diag::errorlog::log(
                    "spid0s",
                    &format!(
                        "Could not free {what} dropped by transaction {} in database ID {}: {e}. It stays pending until the next start.",
                        tag.0, self.db.id
                    ),
                );
            }
        }
    }

    /// Deferred frees not done yet: (xact id, index) and what to free.
    pub fn pending_frees(&self) -> Vec<(storage::CompletionTag, DeferredFree)> {
        self.hook.pending_frees.lock().iter().map(|(&t, &p)| (t, p)).collect()
    }

    /// For crash tests: while paused, committed transactions leave their deferred frees
    /// pending (as a crash right after the commit would).
    #[doc(hidden)]
    pub fn pause_deferred_frees(&self, paused: bool) {
        self.frees_paused.store(paused, Ordering::Relaxed);
    }

    /// Recovery: lists the frees the log shows pending, as their commit did at run time.
    pub(crate) fn add_pending_frees(&self, frees: &[(storage::CompletionTag, DeferredFree)]) {
        let _step = self.hook.active.step();
        self.hook.pending_frees.lock().extend(frees.iter().copied());
    }

    /// BEGIN TRANSACTION. As in SQL Server, the BEGIN_XACT record is written with the
    /// transaction's first record, not now (`DbLog::ensure_begun`).
    pub fn begin(self: &Arc<Self>, name: &str, session_id: i32) -> Result<Transaction> {
        // A log that could not take the BEGIN_XACT refuses the transaction now, as when
        // BEGIN_XACT was written here.
        self.log.check_usable().map_err(log_err)?;
        let xact_id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let log_used = Arc::new(AtomicU64::new(0));
        // Nothing is logged yet: BEGIN_XACT waits for the first record (`ensure_begun`).
        let state = XactState::new(xact_id, name, self.db.id, 0, false, log_used.clone());
        let owner = LockOwner::with_log_used_counter(xact_id, session_id, log_used);
        Ok(Transaction { db: self.clone(), state, owner, done: false })
    }
}

/// A user transaction. Dropping it without commit rolls it back.
pub struct Transaction {
    db: Arc<TxnDb>,
    state: Arc<XactState>,
    owner: LockOwner,
    done: bool,
}

/// While alive, storage changes made on this thread belong to the transaction.
pub struct XactScope {
    previous: Option<Arc<XactState>>,
}

impl Drop for XactScope {
    fn drop(&mut self) {
        let prev = self.previous.take();
        CTX.with(|ctx| ctx.borrow_mut().xact = prev);
    }
}

/// How far `Transaction::append_commit` got.
enum Appended {
    /// Nothing was logged: the transaction is over.
    Nothing(CommitInfo),
    /// COMMIT_XACT is in the log buffer; `wait` if it must be flushed before the
    /// transaction's locks go and the commit is acknowledged.
    Commit { lsn: Lsn, delayed: bool, wait: bool },
}

/// What [`Transaction::commit_deferrable`] did.
pub enum CommitOutcome {
    Done(CommitInfo),
    Pending(PendingCommit),
}

/// A durable commit whose COMMIT_XACT is in the log buffer but may not be on disk yet.
/// Its transaction keeps its locks until the commit is durable, so no one can read what
/// it changed before a crash could no longer undo it. Dropping it waits for the flush.
pub struct PendingCommit {
    txn: Transaction,
    lsn: Lsn,
    /// The committing session's waits table: the wait counts there as WRITELOG even
    /// when it ends on the log writer's thread.
    session: Option<Arc<diag::WaitStats>>,
}

impl PendingCommit {
    pub fn lsn(&self) -> Lsn {
        self.lsn
    }

    /// Waits for the flush (WRITELOG) on this thread and completes the commit. On a log
    /// failure the transaction is rolled back as far as the log allows (as a failed
    /// `commit`).
    pub fn wait(self) -> Result<CommitInfo> {
        let r = self.txn.db.log.flush_to(self.lsn).map_err(log_err);
        self.finish(r)
    }

    /// Completes the commit once it is durable and then runs `then` with the outcome, on
    /// the log writer's thread (or on this one if the commit is durable already). See
    /// [`LogManager::when_durable`] for what `then` may do.
    pub fn when_durable(self, then: impl FnOnce(Result<CommitInfo>) + Send + 'static) {
        let log = self.txn.db.log.clone();
        let (lsn, session) = (self.lsn, self.session.clone());
        log.when_durable(lsn, session, Box::new(move |r| then(self.finish(r.map_err(log_err)))));
    }

    fn finish(mut self, durable: Result<()>) -> Result<CommitInfo> {
        let lsn = self.lsn;
        // Marks the commit complete for Drop (NULL: nothing left to wait for).
        self.lsn = Lsn::NULL;
        durable?;
        self.txn.complete_commit(&[]);
        Ok(CommitInfo { lsn, delayed: false })
    }
}

impl Drop for PendingCommit {
    fn drop(&mut self) {
        // Never let the locks go before the commit is durable. (A failed flush leaves
        // the transaction not done: its own Drop rolls back what it can.)
        if !self.lsn.is_null() && self.txn.db.log.flush_to(self.lsn).is_ok() {
            self.lsn = Lsn::NULL;
            self.txn.complete_commit(&[]);
        }
    }
}

/// What a commit did, for counters and tests.
#[derive(Debug, Clone, Copy)]
pub struct CommitInfo {
    pub lsn: Lsn,
    pub delayed: bool,
}

impl Transaction {
    pub fn id(&self) -> u64 {
        self.state.xact_id
    }

    pub fn owner(&self) -> &LockOwner {
        &self.owner
    }

    pub fn state(&self) -> &Arc<XactState> {
        &self.state
    }

    /// Makes this the current transaction of the thread until the scope is dropped.
    pub fn enter(&self) -> XactScope {
        self.state.enter()
    }

    fn append_chain(&self, kind: RecordKind, body: impl FnOnce(&Header, &mut Vec<u8>)) -> Result<u64> {
        self.state.append_chain(&self.db, kind, body)
    }

    /// SAVE TRANSACTION name. A marker in the in-memory undo chain, not logged: rolling
    /// back to a savepoint happens only at run time (recovery rolls whole transactions
    /// back), and the executor takes one before every statement inside a transaction.
    /// A savepoint named as the newest one, with no other savepoint after it, replaces
    /// it: the older one could never be rolled back to (the newest of a name is found
    /// first, and it goes only with a rollback to an earlier savepoint, which takes the
    /// older one too).
    pub fn save(&mut self, name: &str) -> Result<()> {
        let mut undo = self.state.undo.lock();
        let newest = undo.iter().rposition(|e| matches!(e, UndoEntry::Savepoint { .. }));
        if let Some(i) = newest {
            // An exact match first: the executor saves under one name before every statement.
            if matches!(&undo[i], UndoEntry::Savepoint { name: n } if n == name || n.eq_ignore_ascii_case(name)) {
                let entry = undo.remove(i);
                undo.push(entry);
                return Ok(());
            }
        }
        undo.push(UndoEntry::Savepoint { name: name.to_string() });
        Ok(())
    }

    /// ROLLBACK TRANSACTION savepoint_name: undoes back to the latest savepoint of that
    /// name (SQL Server error 6401 if there is none). The transaction stays open.
    pub fn rollback_to(&mut self, name: &str) -> Result<()> {
        let found = self
            .state
            .undo
            .lock()
            .iter()
            .any(|e| matches!(e, UndoEntry::Savepoint { name: n } if n.eq_ignore_ascii_case(name)));
        if !found {
            return Err(StorageError::Invalid(format!(
                "Cannot roll back {name}. No transaction or savepoint of that name was found."
            )));
        }
        self.undo_until(Some(name))
    }

    /// Applies the in-memory undo chain newest first, down to the named savepoint (kept)
    /// or to the beginning.
    fn undo_until(&mut self, savepoint: Option<&str>) -> Result<()> {
        loop {
            let entry = {
                let mut undo = self.state.undo.lock();
                match undo.last() {
                    None => return Ok(()),
                    Some(UndoEntry::Savepoint { name }) => {
                        if savepoint.is_some_and(|s| s.eq_ignore_ascii_case(name)) {
                            return Ok(());
                        }
                        undo.pop();
                        continue;
                    }
                    Some(UndoEntry::Row { .. }) => undo.pop(),
                }
            };
            let Some(UndoEntry::Row { prev, undo: bytes, .. }) = entry else { continue };
            let u = RowUndo::decode(&bytes)?;
            {
                let _scope = self.enter();
                set_comp(Some(Compensating::Logical));
                let r = undo::apply_row_undo(&self.db.db, &u);
                set_comp(None);
                r?;
            }
            self.append_chain(RecordKind::Clr, |h, out| record::encode_u64(h, prev, out))?;
            match u {
                RowUndo::HeapUnghost { rid, .. } => self.state.ghosts.lock().retain(|(_, r)| *r != rid),
                // Undoing our own insert left a ghost nobody else can see: free the slot.
                RowUndo::HeapClear { au, rid } => {
                    storage::heap::Heap::open(&self.db.db, au)?.remove_ghost(rid)?;
                }
                _ => {}
            }
        }
    }

    /// COMMIT. `delayed_requested` is `WITH (DELAYED_DURABILITY = ON)`; the database
    /// option decides whether it applies.
    pub fn commit(self, delayed_requested: bool) -> Result<CommitInfo> {
        self.commit_freeing(delayed_requested, &[])
    }

    /// COMMIT of a transaction that dropped storage (off-row values its deletes and
    /// updates replaced, the allocation units of indexes it dropped): it is freed once
    /// the transaction has committed. Storage cannot undo a free (another transaction
    /// may take the pages at once), so a free must wait for the commit; and a crash
    /// between the commit and the frees must not leak them. So the values are listed in
    /// DEFERRED_FREE records just before COMMIT_XACT (durable with it), each free's end
    /// record carries its (xact id, index) tag, checkpoints record those still pending,
    /// and recovery does the ones the log does not show done.
    pub fn commit_freeing(mut self, delayed_requested: bool, frees: &[DeferredFree]) -> Result<CommitInfo> {
        let (lsn, delayed, wait) = match self.append_commit(delayed_requested, frees)? {
            Appended::Nothing(info) => return Ok(info),
            Appended::Commit { lsn, delayed, wait } => (lsn, delayed, wait),
        };
        if wait {
            self.db.log.flush_to(lsn).map_err(log_err)?;
        }
        self.complete_commit(frees);
        Ok(CommitInfo { lsn, delayed })
    }

    /// COMMIT that does not wait for the log flush: a durable commit comes back as a
    /// [`PendingCommit`], which holds the transaction's locks until the commit is durable
    /// and then releases them, either on this thread ([`PendingCommit::wait`]) or on the
    /// log writer's ([`PendingCommit::when_durable`]). What needs no flush (delayed
    /// durability, nothing logged, nothing changed) commits at once.
    pub fn commit_deferrable(mut self, delayed_requested: bool) -> Result<CommitOutcome> {
        match self.append_commit(delayed_requested, &[])? {
            Appended::Nothing(info) => Ok(CommitOutcome::Done(info)),
            Appended::Commit { lsn, wait: true, .. } => {
                Ok(CommitOutcome::Pending(PendingCommit { txn: self, lsn, session: diag::waits::current_session() }))
            }
            Appended::Commit { lsn, delayed, wait: false } => {
                self.complete_commit(&[]);
                Ok(CommitOutcome::Done(CommitInfo { lsn, delayed }))
            }
        }
    }

    /// The first half of a commit: COMMIT_XACT (and the DEFERRED_FREE records) appended,
    /// and whether the commit must wait for the flush.
    fn append_commit(&mut self, delayed_requested: bool, frees: &[DeferredFree]) -> Result<Appended> {
        let delayed = self.db.delayed_durability().effective(delayed_requested);
        if !frees.is_empty() {
            // A transaction whose only work is to drop storage (DROP INDEX of an index
            // without off-row values) logged nothing yet: its frees must be logged.
            self.db.hook.ensure_begun(&self.state)?;
        }
        if !self.state.begun.load(Ordering::Acquire) {
            // Nothing logged, so nothing to commit but the locks.
            self.finish(false);
            self.db.log.counters().transactions.inc();
            return Ok(Appended::Nothing(CommitInfo { lsn: Lsn::NULL, delayed }));
        }
        let xact_id = self.state.xact_id;
        let mut rec = Vec::with_capacity(record::HEADER_LEN + 64);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_micros() as u64)
            .unwrap_or(0);
        let lsn = {
            // Unlisted as the COMMIT_XACT is appended, as one step with respect to a
            // checkpoint's CKPT_BEGIN: a checkpoint never lists as active a transaction
            // whose commit precedes it (analysis, which starts there, would never see the
            // commit and roll it back). Unlisting before the flush is safe: a CKPT_END
            // that omits it follows the commit in the log, so it survives only with it.
            // The DEFERRED_FREE records and the pending list's new entries belong to the
            // same step: no CKPT_BEGIN falls between them and the commit.
            let _step = self.db.hook.active.step();
            let mut prev = self.state.last_lsn.load(Ordering::Acquire);
            for (i, chunk) in frees.chunks(DEFERRED_FREES_PER_RECORD).enumerate() {
                let h = Header { xact_id, prev_lsn: prev, ..Header::new(RecordKind::DeferredFree) };
                rec.clear();
                record::encode_deferred_free(&h, (i * DEFERRED_FREES_PER_RECORD) as u32, chunk, &mut rec);
                prev = self.db.log.append(&rec).map_err(log_err)?.as_u64();
            }
            let h = Header {
                xact_id,
                prev_lsn: prev,
                flags: if delayed { flags::DELAYED } else { 0 },
                ..Header::new(RecordKind::CommitXact)
            };
            rec.clear();
            record::encode_u64(&h, now, &mut rec);
            let lsn = self.db.log.append(&rec).map_err(log_err)?;
            self.db.hook.active.remove(xact_id);
            if !frees.is_empty() {
                let mut pending = self.db.hook.pending_frees.lock();
                for (i, p) in frees.iter().enumerate() {
                    pending.insert((xact_id, i as u32), *p);
                }
            }
            lsn
        };
        // A transaction that logged nothing but its BEGIN_XACT (no page change or row
        // undo: `log_used` counts them all) changed nothing, so there is nothing to make
        // durable and it does not wait for the flush.
        let read_only = self.state.log_used.load(Ordering::Relaxed) == 0 && frees.is_empty();
        Ok(Appended::Commit { lsn, delayed, wait: !delayed && !read_only })
    }

    /// The second half of a commit, once it is durable (or needs not be): the locks go,
    /// then the ghosts and the deferred frees.
    fn complete_commit(&mut self, frees: &[DeferredFree]) {
        let xact_id = self.state.xact_id;
        self.finish(false);
        // Ghosted heap rows of a committed delete are removed for good (ghost cleanup).
        let ghosts = std::mem::take(&mut *self.state.ghosts.lock());
        for (au, rid) in ghosts {
            if let Ok(h) = storage::heap::Heap::open(&self.db.db, au) {
                let _ = h.remove_ghost(rid);
            }
        }
        self.db.log.counters().transactions.inc();
        if !frees.is_empty() {
            self.db.run_deferred_frees(frees.iter().enumerate().map(|(i, p)| ((xact_id, i as u32), *p)));
        }
    }

    /// ROLLBACK.
    pub fn rollback(mut self) -> Result<()> {
        self.rollback_inner()
    }

    fn rollback_inner(&mut self) -> Result<()> {
        let r = self.undo_until(None);
        if !self.state.begun.load(Ordering::Acquire) {
            // Nothing was logged (undoing something would have logged a CLR).
            self.finish(false);
            return r;
        }
        let h = Header {
            xact_id: self.state.xact_id,
            prev_lsn: self.state.last_lsn.load(Ordering::Acquire),
            ..Header::new(RecordKind::AbortXact)
        };
        let mut rec = Vec::with_capacity(record::HEADER_LEN + 64);
        record::encode_bare(&h, &mut rec);
        let a = {
            // As for COMMIT_XACT: unlisted in the same step as ABORT_XACT is appended.
            let _step = self.db.hook.active.step();
            let a = self.db.hook.append_undo(&rec);
            if a.is_ok() {
                self.db.hook.active.remove(self.state.xact_id);
            }
            a
        };
        // Still listed only if ABORT_XACT could not be appended.
        self.finish(a.is_err());
        r.and(a.map(|_| ()))
    }

    /// Ends the transaction: unlists it if `listed` (a commit or rollback unlists it as
    /// it appends COMMIT_XACT or ABORT_XACT, and one that never began was never listed),
    /// gives its log reservation back and releases its locks.
    fn finish(&mut self, listed: bool) {
        self.done = true;
        if listed && self.state.begun.load(Ordering::Acquire) {
            self.db.hook.active.remove(self.state.xact_id);
        }
        self.db.log.release_reservation(self.state.log_reserved.swap(0, Ordering::Relaxed));
        self.db.locks.release_all(&self.owner);
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.rollback_inner();
        }
    }
}
