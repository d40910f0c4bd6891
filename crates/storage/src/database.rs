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

use crate::alloc::{self, Allocator};
use crate::buffer::{BufferPool, NoWal, PageReadGuard, PageUpdateGuard, PageWriteGuard, WalGate};
use crate::error::{Result, StorageError};
use crate::file::{DataFile, DataFiles, FileSpec};
use crate::io::FileSystem;
use crate::page::{apply, check, Page, PageId, PageOp};
use parking_lot::RwLock;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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

/// Receives every page change before it is applied. The transaction layer implements it
/// with the log manager; it returns the LSN of the log record it wrote.
pub trait LogHook: Send + Sync {
    fn log_page_op(&self, change: &PageChange<'_>) -> Result<u64>;

    /// Begins a system transaction on this thread: the page changes until the matching
    /// `end_system_txn` are atomic across a crash (structure modifications such as page
    /// splits, allocation, moving a heap row). Calls nest; only the outermost counts.
    fn begin_system_txn(&self) -> Result<()> {
        Ok(())
    }

    /// Ends the innermost system transaction. With `committed == false` (the work
    /// failed part-way) the hook undoes its page changes before returning.
    fn end_system_txn(&self, _committed: bool) -> Result<()> {
        Ok(())
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
        NullLog {
            next: AtomicU64::new(lsn),
        }
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
    log: RwLock<Arc<dyn LogHook>>,
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
            log: RwLock::new(Arc::new(NullLog::default())),
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
    pub fn open(
        pool: Arc<BufferPool>,
        fs: &dyn FileSystem,
        id: u16,
        primary: &Path,
    ) -> Result<Arc<Database>> {
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
                log: RwLock::new(Arc::new(NullLog::default())),
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
            log: RwLock::new(Arc::new(NullLog::default())),
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
    pub fn set_log(&self, hook: Arc<dyn LogHook>, wal: Arc<dyn WalGate>) -> Result<()> {
        *self.log.write() = hook;
        self.pool.set_wal(self.id, wal)
    }

    pub fn read(&self, id: PageId) -> Result<PageReadGuard<'_>> {
        self.pool.read(self.id, id)
    }

    pub fn write(&self, id: PageId) -> Result<PageWriteGuard<'_>> {
        self.pool.write(self.id, id)
    }

    pub fn update(&self, id: PageId) -> Result<PageUpdateGuard<'_>> {
        self.pool.update(self.id, id)
    }

    /// The page-change context: logs `op`, applies it, stamps the page LSN and marks the
    /// buffer dirty. A refused op (no space, bad slot) is not logged and changes nothing.
    pub fn change(&self, g: &mut PageWriteGuard<'_>, op: &PageOp) -> Result<()> {
        let id = g.page_id();
        check(g, op).map_err(|e| StorageError::Page {
            page: id,
            source: e,
        })?;
        let was_clean = !g.is_dirty();
        let lsn = self.log.read().log_page_op(&PageChange { db: self.id, page: id, before: g, was_clean, op })?;
        apply(g.page_mut(), id, op).map_err(|e| StorageError::Page {
            page: id,
            source: e,
        })?;
        g.mark_dirty(lsn);
        Ok(())
    }

    /// Runs `f` as a system transaction (see [`LogHook::begin_system_txn`]): its page
    /// changes survive a crash all together or not at all, and are undone now if `f`
    /// fails.
    pub fn system_txn<R>(&self, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let hook = self.log.read().clone();
        hook.begin_system_txn()?;
        let r = f();
        let ended = hook.end_system_txn(r.is_ok());
        match (r, ended) {
            (Ok(v), Ok(())) => Ok(v),
            (Err(e), _) => Err(e),
            (Ok(_), Err(e)) => Err(e),
        }
    }

    /// The log hook in force (the transaction layer's, or `NullLog`).
    pub fn log_hook(&self) -> Arc<dyn LogHook> {
        self.log.read().clone()
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
            let mut g = if resident { self.pool.write(self.id, page)? } else { self.pool.write_fresh(self.id, page)? };
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
