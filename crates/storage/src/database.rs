//! A database as the storage engine sees it: its data files, its pages in the shared
//! buffer pool, its allocation units, and the page-change context.
//!
//! **The page-change context** is [`Database::change`]: the one place where a page
//! changes. It hands the [`PageOp`] to the database's [`LogHook`] (which returns the LSN
//! of the log record describing it), applies the op, stamps the page LSN and marks the
//! buffer dirty with its recLSN. Heaps, B+trees and allocation all change pages only
//! through it, so the transaction layer logs every change by installing a hook.
//!
//! The allocation methods of `Database` (allocation units, pages, free space, the boot
//! page's fields, `check_allocation`) are implemented in [`crate::alloc`], next to the
//! structures they maintain.
//!
//! **System transactions** ([`Database::begin_system_txn`], [`Database::system_txn`]) group
//! page changes that must survive a crash together or not at all (a row operation, a page
//! split, an allocation). Storage opens them; the hook logs their brackets and, when one is
//! cut short, undoes its page changes physically (see [`crate::undo`] for the whole undo
//! design and the rule that makes physical undo correct: a system transaction ends while
//! the latches protecting its pages are still held). Storage tracks the nesting depth per
//! thread so that the allocation mutex, once taken inside a system transaction, stays held
//! until the outermost one ends.

use crate::alloc::{self, Allocator};
use crate::buffer::{BufferPool, NoWal, PageReadGuard, PageUpdateGuard, PageWriteGuard, WalGate};
use crate::error::{Result, StorageError};
use crate::file::{DataFile, DataFiles, FileSpec};
use crate::io::FileSystem;
use crate::page::{apply, check, Page, PageId, PageOp};
use crate::undo::RowUndo;
use parking_lot::{Condvar, Mutex, RwLock};
use std::cell::{Cell, RefCell};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::ThreadId;

/// One page change, as the log hook sees it before it is applied.
pub struct PageChange<'a> {
    pub db: u16,
    pub page: PageId,
    /// The page image the op applies to (latched EX, not changed yet), so the log can
    /// record what undoing the op needs (the record a DeleteSlot removes, the old bytes a
    /// WriteBody overwrites) without the structure code knowing about undo.
    pub before: &'a Page,
    /// The buffer was clean before this change: this is the first change since the page
    /// was last written, so the log records a full page image (unless the op formats the
    /// page) and redo can rebuild the page even if its last write was torn.
    pub was_clean: bool,
    pub op: &'a PageOp<'a>,
}

/// A system transaction's completion tag (see [`LogHook::end_system_txn_tagged`]): opaque
/// to storage.
pub type CompletionTag = (u64, u32);

/// Receives every page change before it is applied. The transaction layer implements it
/// with the log manager; it returns the LSN of the log record it wrote.
///
/// Storage calls the bracket methods only through [`Database::begin_system_txn`] (and
/// [`Database::system_txn`]); code outside storage must open system transactions the same
/// way, not by calling the hook directly, because storage keeps per-thread state with
/// them (the allocation mutex is held until the outermost system transaction ends).
pub trait LogHook: Send + Sync {
    fn log_page_op(&self, change: &PageChange<'_>) -> Result<u64>;

    /// Begins a system transaction on this thread: the page changes until the matching
    /// `end_system_txn` are atomic across a crash (a row operation, a structure
    /// modification such as a page split, an allocation). Calls nest; nested system
    /// transactions flatten into the outermost one.
    fn begin_system_txn(&self) -> Result<()> {
        Ok(())
    }

    /// Ends the innermost system transaction. With `committed == false` (the work failed
    /// part-way) the hook undoes, before returning, the page changes of the failed work,
    /// applying the undo material of each change in reverse with
    /// [`crate::undo::apply_physical_undo`]. When nested, the hook may undo just the
    /// changes since the matching begin, or leave it to the outermost end: storage never
    /// commits an outer system transaction after a nested one failed (the error goes up
    /// to it). It is called after the failing code released its page latches, while its
    /// tree latch and the allocation mutex are still held.
    fn end_system_txn(&self, _committed: bool) -> Result<()> {
        Ok(())
    }

    /// Ends the innermost system transaction as committed, like `end_system_txn(true)`,
    /// with a completion tag that the end record carries: whoever asked for the work
    /// (the transaction layer's deferred frees) learns from the log that it was done,
    /// atomically with it. Storage calls it only for an outermost system transaction.
    fn end_system_txn_tagged(&self, _tag: CompletionTag) -> Result<()> {
        self.end_system_txn(true)
    }

    /// Reserves `bytes` of log for the records of the system transaction open on this
    /// thread, so that none of them can fail for want of log space; given back when it
    /// ends. `Ok(false)` when the log has no such room (the caller then takes a path
    /// that can roll back safely). Used by the one structure change made without the
    /// exclusive tree latch (see `btree`, "Concurrency").
    fn reserve_system_txn(&self, _bytes: u64) -> Result<bool> {
        Ok(true)
    }

    /// Logs the logical undo of a row operation (see [`crate::undo`]). Storage calls it as
    /// the last record of the row operation's system transaction, while the page latches
    /// are held; the record ends the system transaction's physical part and joins the
    /// current user transaction's undo chain. Returns the record's LSN.
    fn log_row_undo(&self, _db: u16, _undo: &RowUndo<'_>) -> Result<u64> {
        Ok(0)
    }

    /// Logs a whole row operation that changes one page as a single record carrying
    /// both the page op (redo) and the row's logical undo, and returns its LSN. Such a
    /// record is atomic by itself, so the row operation needs no system transaction (no
    /// physical undo material, no end record). Returns `None`, having logged nothing,
    /// when the hook cannot do it in the current state (it is compensating, or a system
    /// transaction is open on this thread): storage then uses the system-transaction
    /// form ([`Self::log_page_op`] inside a system transaction ended by
    /// [`Self::log_row_undo`]).
    fn log_row_op(&self, _change: &PageChange<'_>, _undo: &RowUndo<'_>) -> Result<Option<u64>> {
        Ok(None)
    }

    /// True while this thread applies logical undo ([`crate::undo::apply_row_undo`]):
    /// the structure code then logs no `RowUndo` (the compensation is the transaction
    /// layer's record).
    fn compensating(&self) -> bool {
        false
    }
}

/// The hook used before a log exists: hands out increasing LSNs and keeps nothing, so
/// page LSNs, recLSNs and the dirty page list still behave as they will with a log.
#[derive(Default)]
pub struct NullLog {
    next: AtomicU64,
}

impl NullLog {
    pub fn starting_at(lsn: u64) -> NullLog {
        NullLog { next: AtomicU64::new(lsn) }
    }
}

impl LogHook for NullLog {
    fn log_page_op(&self, _change: &PageChange<'_>) -> Result<u64> {
        Ok(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// An open database.
pub struct Database {
    pub id: u16,
    name: RwLock<String>,
    pool: Arc<BufferPool>,
    files: Arc<DataFiles>,
    /// The transaction layer's hook, installed once by [`Database::set_log`]; until then
    /// `null_log`. Read on every page change by every thread: a `OnceLock` read is a
    /// plain load, where a lock's read side would bounce its cache line between cores.
    log: OnceLock<Arc<dyn LogHook>>,
    null_log: Arc<NullLog>,
    /// A hook was installed with [`Database::set_log`]. Until then system transactions
    /// and row undo records cost nothing (`NullLog` would ignore them).
    hooked: AtomicBool,
    pub(crate) alloc: Allocator,
}

impl Database {
    /// Creates the files of a new database and formats its system pages. `files[0]` is
    /// the primary data file (file id 1); further entries are secondary data files
    /// (file ids 3, 4, ...; id 2 belongs to the log). Files smaller than 32 pages (two
    /// extents of system pages, one for the allocation-unit directory, one for data) are
    /// rounded up; files that already exist are refused.
    pub fn create(
        pool: Arc<BufferPool>,
        fs: &dyn FileSystem,
        id: u16,
        name: &str,
        files: Vec<FileSpec>,
    ) -> Result<Arc<Database>> {
        let specs = alloc::prepare_specs(name, files)?;
        for spec in &specs {
            if fs.exists(&spec.path) {
                return Err(StorageError::Invalid(format!(
                    "cannot create file '{}' because it already exists",
                    spec.path.display()
                )));
            }
            if let Some(dir) = spec.path.parent() {
                fs.create_dir_all(dir).map_err(|e| StorageError::Io {
                    file: dir.display().to_string(),
                    offset: 0,
                    source: e,
                })?;
            }
        }
        let df = Arc::new(DataFiles::new(id));
        for spec in &specs {
            df.add(DataFile::open(fs, id, spec.clone(), true)?);
        }
        pool.attach(id, df.clone(), Arc::new(NoWal));
        let db = Arc::new(Database {
            id,
            name: RwLock::new(name.to_string()),
            pool: pool.clone(),
            files: df,
            log: OnceLock::new(),
            null_log: Arc::new(NullLog::default()),
            hooked: AtomicBool::new(false),
            alloc: Allocator::new(),
        });
        if let Err(e) = db.format_new(&specs) {
            // Leave nothing of the half-made database in the pool.
            pool.discard(id);
            let _ = pool.detach(id);
            return Err(e);
        }
        Ok(db)
    }

    /// Opens an existing database from its primary data file: the primary's header lists
    /// the other files, the boot page holds the name and the allocation-unit directory,
    /// and the allocation caches are rebuilt from the IAM chains and PFS pages.
    pub fn open(pool: Arc<BufferPool>, fs: &dyn FileSystem, id: u16, primary: &Path) -> Result<Arc<Database>> {
        let df = Arc::new(DataFiles::new(id));
        let primary_spec = FileSpec {
            file_id: 1,
            name: String::new(),
            path: primary.to_path_buf(),
            size_pages: 0,
            growth: crate::file::FileGrowth::None,
            max_pages: None,
        };
        df.add(DataFile::open(fs, id, primary_spec, false)?);
        pool.attach(id, df.clone(), Arc::new(NoWal));
        let r = (|| {
            let (boot, sizes) = alloc::attach_files(&pool, fs, id, &df, primary)?;
            let db = Arc::new(Database {
                id,
                name: RwLock::new(boot.name.clone()),
                pool: pool.clone(),
                files: df.clone(),
                log: OnceLock::new(),
                null_log: Arc::new(NullLog::default()),
                hooked: AtomicBool::new(false),
                alloc: Allocator::new(),
            });
            db.load_allocation(&boot, &sizes)?;
            Ok(db)
        })();
        if r.is_err() {
            pool.discard(id);
            let _ = pool.detach(id);
        }
        r
    }

    /// Recovery, step 1: attaches the data files named by the log (file id, path) without
    /// reading any of their pages, so that redo can repair even a torn file header or
    /// boot page. Allocation is not usable until [`Database::finish_open`].
    pub fn attach_for_recovery(
        pool: Arc<BufferPool>,
        fs: &dyn FileSystem,
        id: u16,
        files: &[(u16, std::path::PathBuf)],
    ) -> Result<Arc<Database>> {
        let df = Arc::new(DataFiles::new(id));
        for (file_id, path) in files {
            let spec = FileSpec {
                file_id: *file_id,
                name: String::new(),
                path: path.clone(),
                size_pages: 0,
                growth: crate::file::FileGrowth::None,
                max_pages: None,
            };
            df.add(DataFile::open(fs, id, spec, false)?);
        }
        pool.attach(id, df.clone(), Arc::new(NoWal));
        Ok(Arc::new(Database {
            id,
            name: RwLock::new(String::new()),
            pool,
            files: df,
            log: OnceLock::new(),
            null_log: Arc::new(NullLog::default()),
            hooked: AtomicBool::new(false),
            alloc: Allocator::new(),
        }))
    }

    /// Recovery, step 3 (after redo): reads the file headers and boot page and rebuilds
    /// the allocation caches, as [`Database::open`] does. Files already attached by
    /// `attach_for_recovery` are kept.
    pub fn finish_open(&self, fs: &dyn FileSystem, primary: &Path) -> Result<()> {
        let (boot, sizes) = alloc::attach_files(&self.pool, fs, self.id, &self.files, primary)?;
        *self.name.write() = boot.name.clone();
        self.load_allocation(&boot, &sizes)
    }

    /// The database name (from the boot page).
    pub fn name(&self) -> String {
        self.name.read().clone()
    }

    pub fn pool(&self) -> &Arc<BufferPool> {
        &self.pool
    }

    pub fn files(&self) -> &Arc<DataFiles> {
        &self.files
    }

    /// Installs the transaction layer's log hook and WAL gate.
    /// Install it while no system transaction is open (at open or after recovery).
    pub fn set_log(&self, hook: Arc<dyn LogHook>, wal: Arc<dyn WalGate>) -> Result<()> {
        if self.log.set(hook).is_err() {
            return Err(StorageError::Invalid(format!("database {} already has a log hook", self.id)));
        }
        self.hooked.store(true, Ordering::Release);
        self.pool.set_wal(self.id, wal)
    }

    pub fn read(&self, id: PageId) -> Result<PageReadGuard<'_>> {
        self.pool.read(self.id, id)
    }

    pub fn write(&self, id: PageId) -> Result<PageWriteGuard<'_>> {
        self.pool.write(self.id, id)
    }

    /// [`Database::write`] without waiting: `None` when the latch is held.
    pub fn try_write(&self, id: PageId) -> Result<Option<PageWriteGuard<'_>>> {
        self.pool.try_write(self.id, id)
    }

    pub fn update(&self, id: PageId) -> Result<PageUpdateGuard<'_>> {
        self.pool.update(self.id, id)
    }

    /// The page-change context: logs `op`, applies it, stamps the page LSN and marks the
    /// buffer dirty. A refused op (no space, bad slot) is not logged and changes nothing.
    pub fn change(&self, g: &mut PageWriteGuard<'_>, op: &PageOp) -> Result<()> {
        let id = g.page_id();
        check(g, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        let was_clean = !g.is_dirty();
        let lsn = self.hook().log_page_op(&PageChange { db: self.id, page: id, before: g, was_clean, op })?;
        apply(g.page_mut(), id, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        g.mark_dirty(lsn);
        Ok(())
    }

    /// Applies `op` to the latched page `g` as a complete row operation whose logical
    /// undo is `undo`, logged as one record (see [`LogHook::log_row_op`]). Returns false,
    /// having changed nothing, when that form does not apply (no hook, a system
    /// transaction open on this thread, the hook compensating): the caller then runs the
    /// row operation as a system transaction.
    pub fn change_row(&self, g: &mut PageWriteGuard<'_>, op: &PageOp, undo: &RowUndo<'_>) -> Result<bool> {
        if !self.hooked.load(Ordering::Acquire) || in_system_txn() {
            return Ok(false);
        }
        let id = g.page_id();
        check(g, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        let was_clean = !g.is_dirty();
        let logged = self.hook().log_row_op(&PageChange { db: self.id, page: id, before: g, was_clean, op }, undo)?;
        let Some(lsn) = logged else { return Ok(false) };
        apply(g.page_mut(), id, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        g.mark_dirty(lsn);
        Ok(true)
    }

    /// Begins a system transaction (see [`LogHook::begin_system_txn`] and [`crate::undo`]).
    /// It ends with [`SystemTxn::commit`], which must be called while the latches that
    /// protect its pages are still held; dropped without commit it rolls back (the hook
    /// undoes its page changes). Declare the guard *before* latching pages, so that on an
    /// error path the latches are released first and the rollback can latch the pages.
    pub fn begin_system_txn(&self) -> Result<SystemTxn<'_>> {
        if !self.hooked.load(Ordering::Acquire) {
            return Ok(SystemTxn { db: self, active: false, done: false });
        }
        self.hook().begin_system_txn()?;
        SYS_DEPTH.with(|d| d.set(d.get() + 1));
        Ok(SystemTxn { db: self, active: true, done: false })
    }

    /// Reserves log space for the records of the system transaction open on this thread
    /// (see [`LogHook::reserve_system_txn`]).
    pub(crate) fn reserve_system_log(&self, bytes: u64) -> Result<bool> {
        if !self.hooked.load(Ordering::Acquire) {
            return Ok(true);
        }
        self.hook().reserve_system_txn(bytes)
    }

    /// Runs `f` as a system transaction: its page changes survive a crash all together or
    /// not at all, and are undone now if `f` fails. The transaction ends after `f`
    /// returns, so the latches `f` takes are released before the end: use it for work
    /// protected by something `f`'s caller holds (a tree latch), and
    /// [`Database::begin_system_txn`] when page latches must be held to the end.
    pub fn system_txn<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let stx = self.begin_system_txn()?;
        let v = f()?;
        stx.commit()?;
        Ok(v)
    }

    /// Logs the logical undo of a row operation (the last record of its system
    /// transaction, while its page latches are held). Nothing is logged while the hook
    /// is compensating (applying undo) or when no hook is installed; returns the LSN, or
    /// 0 when nothing was logged.
    pub fn log_row_undo(&self, undo: &RowUndo<'_>) -> Result<u64> {
        if !self.hooked.load(Ordering::Acquire) {
            return Ok(0);
        }
        let hook = self.hook();
        if hook.compensating() {
            return Ok(0);
        }
        hook.log_row_undo(self.id, undo)
    }

    /// Whether a log hook is installed (then a failed system transaction is rolled back
    /// by it; without one, structure code cleans up after itself as best it can).
    pub(crate) fn has_log_hook(&self) -> bool {
        self.hooked.load(Ordering::Acquire)
    }

    /// Whether a row operation should build its `RowUndo` at all: false without a hook
    /// and while compensating, so the fast paths copy no old values for nothing.
    pub(crate) fn row_undo_wanted(&self) -> bool {
        self.hooked.load(Ordering::Acquire) && !self.hook().compensating()
    }

    /// Takes the allocation mutex. Inside a system transaction (with a hook installed) it
    /// stays held until the outermost system transaction of this thread ends, whatever
    /// the returned guard does: allocation changes (GAM, IAM, PFS allocated bits, the
    /// directory, file growth) are shared by every unit, so physical undo of a system
    /// transaction that made some is only correct if nobody else allocated meanwhile.
    /// Outside one, the guard releases it. Reentrant on one thread.
    pub(crate) fn lock_allocation(&self) -> AllocLock<'_> {
        let gate = &self.alloc.gate;
        if SYS_DEPTH.with(|d| d.get()) > 0 {
            let held = HELD.with(|h| h.borrow().iter().any(|g| Arc::ptr_eq(g, gate)));
            if !held {
                gate.acquire();
                HELD.with(|h| h.borrow_mut().push(gate.clone()));
            }
            AllocLock { gate: None }
        } else {
            gate.acquire();
            AllocLock { gate: Some(gate) }
        }
    }
    /// The log hook in force (the transaction layer's, or `NullLog`).
    pub fn log_hook(&self) -> Arc<dyn LogHook> {
        match self.log.get() {
            Some(h) => h.clone(),
            None => self.null_log.clone(),
        }
    }

    /// The hook in force, borrowed (the per-change path).
    #[inline]
    fn hook(&self) -> &dyn LogHook {
        match self.log.get() {
            Some(h) => &**h,
            None => &*self.null_log,
        }
    }

    /// Recovery, redo phase: applies a logged op to a page unless the page already has
    /// it (page LSN >= `lsn`). `image`, when the record carries a full page image, is
    /// installed first without reading the page from disk, which is how a torn page is
    /// rebuilt. Nothing is logged. Returns whether the op was applied.
    pub fn redo(&self, page: PageId, lsn: u64, image: Option<&[u8]>, op: &PageOp) -> Result<bool> {
        let formats = matches!(op, PageOp::Format { .. });
        let mut g = if image.is_some() || formats {
            // The disk image is not needed (and may be torn): start from the logged
            // image, or from the page as the buffer pool has it if it is resident.
            let resident = self.pool.is_resident(self.id, page);
            let mut g =
                if resident { self.pool.write(self.id, page)? } else { self.pool.write_fresh(self.id, page)? };
            if !resident || g.lsn() < lsn {
                if let Some(img) = image {
                    g.page_mut().as_bytes_mut().copy_from_slice(&Page::from_slice(img).as_bytes()[..]);
                }
            }
            g
        } else {
            self.pool.write(self.id, page)?
        };
        if g.lsn() >= lsn {
            return Ok(false);
        }
        apply(g.page_mut(), page, op).map_err(|e| StorageError::Page { page, source: e })?;
        g.mark_dirty(lsn);
        g.page_mut().set_lsn(lsn);
        Ok(true)
    }

    /// Writes every dirty page and syncs the files (the data side of a checkpoint).
    pub fn flush(&self) -> Result<usize> {
        self.pool.flush_all(self.id)
    }

    /// Flushes and detaches from the buffer pool.
    pub fn close(&self) -> Result<()> {
        self.pool.detach(self.id)
    }
}

thread_local! {
    /// Open system transactions of this thread (with a hook installed), nested ones
    /// counted.
    static SYS_DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Allocation mutexes this thread holds until its outermost system transaction ends.
    static HELD: RefCell<Vec<Arc<AllocGate>>> = const { RefCell::new(Vec::new()) };
}

/// Whether this thread has a system transaction open (on any database with a hook).
pub fn in_system_txn() -> bool {
    SYS_DEPTH.with(|d| d.get()) > 0
}

/// An open system transaction (see [`Database::begin_system_txn`]).
#[must_use = "a system transaction rolls back when dropped without commit"]
pub struct SystemTxn<'a> {
    db: &'a Database,
    /// False without a hook: there is nothing to bracket.
    active: bool,
    done: bool,
}

impl SystemTxn<'_> {
    /// Ends the system transaction (its end record is logged): call it while the latches
    /// protecting its pages are held.
    pub fn commit(mut self) -> Result<()> {
        self.done = true;
        self.finish(true, None)
    }

    /// [`commit`](Self::commit) with a completion tag in the end record (see
    /// [`LogHook::end_system_txn_tagged`]). Refused inside another system transaction,
    /// whose end would decide whether the work survives.
    pub fn commit_tagged(mut self, tag: CompletionTag) -> Result<()> {
        if SYS_DEPTH.with(|d| d.get()) > 1 {
            return Err(StorageError::Invalid("a tagged system transaction cannot be nested".into()));
        }
        self.done = true;
        self.finish(true, Some(tag))
    }

    fn finish(&mut self, committed: bool, tag: Option<CompletionTag>) -> Result<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        let db = self.db;
        let r = match tag {
            Some(t) => db.hook().end_system_txn_tagged(t),
            None => db.hook().end_system_txn(committed),
        };
        let depth = SYS_DEPTH.with(|d| {
            let v = d.get().saturating_sub(1);
            d.set(v);
            v
        });
        let reloaded = if !committed && db.alloc.gate.held_by_current() {
            // The hook undid page changes under the allocator's in-memory caches (units,
            // IAM chains, free-extent and free-space hints): rebuild them from the pages
            // while the allocation mutex still keeps everyone else out.
            db.reload_allocation()
        } else {
            Ok(())
        };
        if depth == 0 {
            let held = HELD.with(|h| std::mem::take(&mut *h.borrow_mut()));
            for g in held {
                g.release();
            }
        }
        r.and(reloaded)
    }
}

impl Drop for SystemTxn<'_> {
    fn drop(&mut self) {
        if !self.done {
            // Rollback: the error that caused it is already on its way to the caller.
            let _ = self.finish(false, None);
        }
    }
}

/// The allocation mutex: reentrant on its owning thread, and held across function
/// returns until the owner's outermost system transaction ends (see
/// [`Database::lock_allocation`]). A plain `Mutex` guard cannot outlive the function that
/// took it, hence the owner/count pair under a condition variable.
#[derive(Default)]
pub(crate) struct AllocGate {
    state: Mutex<(Option<ThreadId>, u32)>,
    freed: Condvar,
}

impl AllocGate {
    fn acquire(&self) {
        let me = std::thread::current().id();
        let mut s = self.state.lock();
        loop {
            match s.0 {
                None => {
                    *s = (Some(me), 1);
                    return;
                }
                Some(owner) if owner == me => {
                    s.1 += 1;
                    return;
                }
                Some(_) => self.freed.wait(&mut s),
            }
        }
    }

    fn release(&self) {
        let mut s = self.state.lock();
        s.1 = s.1.saturating_sub(1);
        if s.1 == 0 {
            s.0 = None;
            self.freed.notify_one();
        }
    }

    pub(crate) fn held_by_current(&self) -> bool {
        self.state.lock().0 == Some(std::thread::current().id())
    }
}

/// Guard of [`Database::lock_allocation`]: releases the mutex on drop unless it is held
/// until the end of the thread's system transaction.
pub(crate) struct AllocLock<'a> {
    gate: Option<&'a AllocGate>,
}

impl Drop for AllocLock<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.gate {
            g.release();
        }
    }
}
