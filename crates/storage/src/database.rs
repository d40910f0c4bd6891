//! A database as the storage engine sees it: its data files, its pages in the shared
//! buffer pool, its allocation units, and the page-change context.
//!
//! **The page-change context** is [`Database::change`]: the one place where a page
//! changes. It hands the [`PageOp`] to the database's [`LogHook`] (which returns the LSN
//! of the log record describing it), applies the op, stamps the page LSN and marks the
//! buffer dirty with its recLSN. Heaps, B+trees and allocation all change pages only
//! through it, so the transaction layer logs every change by installing a hook.

use crate::alloc::{AllocUnit, AllocUnitKind, Allocator};
use crate::buffer::{BufferPool, NoWal, PageReadGuard, PageUpdateGuard, PageWriteGuard, WalGate};
use crate::error::{Result, StorageError};
use crate::file::{DataFile, DataFiles, FileSpec};
use crate::io::FileSystem;
use crate::page::{apply, check, PageId, PageOp};
use parking_lot::RwLock;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Receives every page change before it is applied. The transaction layer implements it
/// with the log manager; it returns the LSN of the log record it wrote.
pub trait LogHook: Send + Sync {
    fn log_page_op(&self, db: u16, page: PageId, op: &PageOp) -> Result<u64>;
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
    fn log_page_op(&self, _db: u16, _page: PageId, _op: &PageOp) -> Result<u64> {
        Ok(self.next.fetch_add(1, Ordering::Relaxed) + 1)
    }
}

/// An open database.
pub struct Database {
    pub id: u16,
    pub name: String,
    pool: Arc<BufferPool>,
    files: Arc<DataFiles>,
    log: RwLock<Arc<dyn LogHook>>,
    pub(crate) alloc: Allocator,
}

impl Database {
    /// Creates the files of a new database and formats its system pages. `files[0]` is
    /// the primary data file (file id 1); further entries are secondary data files
    /// (file ids 3, 4, ...; id 2 belongs to the log).
    pub fn create(pool: Arc<BufferPool>, fs: &dyn FileSystem, id: u16, name: &str, files: Vec<FileSpec>) -> Result<Arc<Database>> {
        if files.is_empty() {
            return Err(StorageError::Invalid("a database needs a primary data file".into()));
        }
        let df = Arc::new(DataFiles::new(id));
        for spec in files {
            if let Some(dir) = spec.path.parent() {
                fs.create_dir_all(dir).map_err(|e| StorageError::Io { file: dir.display().to_string(), offset: 0, source: e })?;
            }
            df.add(DataFile::open(fs, id, spec, true)?);
        }
        pool.attach(id, df.clone(), Arc::new(NoWal));
        let db = Arc::new(Database {
            id,
            name: name.to_string(),
            pool,
            files: df,
            log: RwLock::new(Arc::new(NullLog::default())),
            alloc: Allocator::new(),
        });
        Allocator::format_new_database(&db)?;
        Ok(db)
    }

    /// Opens an existing database from its primary data file; the file header page lists
    /// the other files.
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
        let db = Arc::new(Database {
            id,
            name: String::new(),
            pool,
            files: df,
            log: RwLock::new(Arc::new(NullLog::default())),
            alloc: Allocator::new(),
        });
        let name = Allocator::open_existing(&db, fs)?;
        // Safe to set after open: nothing else holds the Arc yet.
        let mut db = db;
        if let Some(d) = Arc::get_mut(&mut db) {
            d.name = name;
        }
        Ok(db)
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
        check(g, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        let lsn = self.log.read().log_page_op(self.id, id, op)?;
        apply(g.page_mut(), id, op).map_err(|e| StorageError::Page { page: id, source: e })?;
        g.mark_dirty(lsn);
        Ok(())
    }

    /// Creates an allocation unit (the storage of one heap, index or LOB column).
    pub fn create_alloc_unit(&self, kind: AllocUnitKind, object_id: u32, index_id: u16) -> Result<AllocUnit> {
        Allocator::create_alloc_unit(self, kind, object_id, index_id)
    }

    /// Looks up an allocation unit by id.
    pub fn alloc_unit(&self, au_id: u64) -> Result<AllocUnit> {
        self.alloc.get(au_id).ok_or_else(|| StorageError::Invalid(format!("allocation unit {au_id} does not exist")))
    }

    /// Records a new root / first page for an allocation unit (B+tree root split).
    pub fn set_alloc_unit_root(&self, au_id: u64, root: PageId, first_page: PageId) -> Result<()> {
        Allocator::set_root(self, au_id, root, first_page)
    }

    /// Allocates a page for `au` (near `near` when possible) and returns it latched EX,
    /// not yet formatted: the caller's first change is a `PageOp::Format`.
    pub fn allocate_page(&self, au: u64, near: Option<PageId>) -> Result<PageWriteGuard<'_>> {
        let id = Allocator::allocate_page(self, au, near)?;
        self.pool.write_fresh(self.id, id)
    }

    /// Returns a page to free space.
    pub fn free_page(&self, au: u64, id: PageId) -> Result<()> {
        Allocator::free_page(self, au, id)
    }

    /// Drops an allocation unit and frees all its pages.
    pub fn drop_alloc_unit(&self, au: u64) -> Result<()> {
        Allocator::drop_alloc_unit(self, au)
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
