//! Data files: the file header page, page reads and writes with checksums and I/O
//! statistics, and growth by FILEGROWTH.
//!
//! A database has one primary data file (file id 1), the log file (file id 2, owned by
//! the log manager), and optional secondary data files (3, 4, ...), as in SQL Server.
//! Page 0 of every data file is its file header page; the fixed pages after it (PFS,
//! GAM, SGAM, boot page) are described in docs/formats.md and managed by `alloc`.

use crate::error::{Result, StorageError};
use crate::io::{FileSystem, IoFile};
use crate::page::{Page, PageId, PAGE_SIZE};
use diag::FileIoStats;
use parking_lot::{Mutex, RwLock};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// How a file grows when it is full (CREATE DATABASE ... FILEGROWTH).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileGrowth {
    /// No automatic growth (FILEGROWTH = 0).
    None,
    /// Grow by this many pages.
    Pages(u32),
    /// Grow by a percentage of the current size.
    Percent(u32),
}

impl FileGrowth {
    /// SQL Server's default for data files since 2016: 64 MB.
    pub const DEFAULT_DATA: FileGrowth = FileGrowth::Pages(64 * 128);

    /// Pages to add to a file of `current` pages, at least one extent.
    pub fn increment(self, current: u32) -> u32 {
        match self {
            FileGrowth::None => 0,
            FileGrowth::Pages(p) => p.max(8),
            FileGrowth::Percent(pct) => ((current as u64 * pct as u64 / 100) as u32).max(8),
        }
    }
}

/// What a database file is created with.
#[derive(Debug, Clone)]
pub struct FileSpec {
    pub file_id: u16,
    /// Logical name (sys.database_files.name).
    pub name: String,
    pub path: PathBuf,
    pub size_pages: u32,
    pub growth: FileGrowth,
    /// Maximum size in pages; `None` = UNLIMITED.
    pub max_pages: Option<u32>,
}

/// One open data file.
pub struct DataFile {
    pub spec: RwLock<FileSpec>,
    io: Arc<dyn IoFile>,
    size_pages: AtomicU32,
    grow_lock: Mutex<()>,
    pub stats: Arc<FileIoStats>,
    db_id: u16,
}

impl DataFile {
    pub fn open(fs: &dyn FileSystem, db_id: u16, spec: FileSpec, create: bool) -> Result<DataFile> {
        let path_s = spec.path.display().to_string();
        let io =
            fs.open(&spec.path, create).map_err(|e| StorageError::Io { file: path_s.clone(), offset: 0, source: e })?;
        let mut len = io.len().map_err(|e| StorageError::Io { file: path_s.clone(), offset: 0, source: e })?;
        if create && len < spec.size_pages as u64 * PAGE_SIZE as u64 {
            io.set_len(spec.size_pages as u64 * PAGE_SIZE as u64).map_err(|e| StorageError::Io {
                file: path_s.clone(),
                offset: 0,
                source: e,
            })?;
            len = spec.size_pages as u64 * PAGE_SIZE as u64;
        }
        let stats = diag::register_file(db_id, spec.file_id);
        stats.set_size(len);
        Ok(DataFile {
            size_pages: AtomicU32::new((len / PAGE_SIZE as u64) as u32),
            spec: RwLock::new(spec),
            io,
            grow_lock: Mutex::new(()),
            stats,
            db_id,
        })
    }

    pub fn file_id(&self) -> u16 {
        self.spec.read().file_id
    }

    pub fn path(&self) -> String {
        self.spec.read().path.display().to_string()
    }

    pub fn size_pages(&self) -> u32 {
        self.size_pages.load(Ordering::Acquire)
    }

    fn io_err(&self, offset: u64, e: std::io::Error) -> StorageError {
        StorageError::Io { file: self.path(), offset, source: e }
    }

    /// Reads a page and verifies its checksum and page id: damage is error 824 and the
    /// damaged bytes are never handed out as data.
    pub fn read_page(&self, id: PageId, page: &mut Page) -> Result<()> {
        let offset = id.file_offset();
        let t = Instant::now();
        let r = self.io.read_at(offset, page.as_bytes_mut());
        self.stats.record_read(PAGE_SIZE as u64, t.elapsed());
        r.map_err(|e| self.io_err(offset, e))?;
        if let Err((expected, actual)) = page.verify_checksum() {
            return Err(StorageError::Checksum {
                db: self.db_id,
                page: id,
                offset,
                file: self.path(),
                expected,
                actual,
            });
        }
        if !page.is_zeroed() && page.page_id() != id {
            return Err(StorageError::WrongPageId {
                db: self.db_id,
                expected: id,
                actual: page.page_id(),
                file: self.path(),
            });
        }
        Ok(())
    }

    /// Writes a page image that already carries its checksum.
    pub fn write_page(&self, id: PageId, page: &Page) -> Result<()> {
        let offset = id.file_offset();
        let t = Instant::now();
        let r = self.io.write_at(offset, page.as_bytes());
        self.stats.record_write(PAGE_SIZE as u64, t.elapsed());
        r.map_err(|e| self.io_err(offset, e))
    }

    /// Writes several consecutive page images (each already carrying its checksum) in
    /// one I/O starting at `first`: a checkpoint's gathered write. Counted as one write.
    pub fn write_pages(&self, first: PageId, images: &[u8]) -> Result<()> {
        let offset = first.file_offset();
        let t = Instant::now();
        let r = self.io.write_at(offset, images);
        self.stats.record_write(images.len() as u64, t.elapsed());
        r.map_err(|e| self.io_err(offset, e))
    }

    /// Starts writing back pages just written from `first` on (`bytes` of them) without
    /// waiting: see `IoFile::start_writeback`.
    pub fn start_writeback(&self, first: PageId, bytes: usize) {
        self.io.start_writeback(first.file_offset(), bytes as u64);
    }

    /// Makes the file's completed writes durable (checkpoints end with it). Not counted
    /// as a write stall: data-file writes are measured by `write_page` itself.
    pub fn sync(&self) -> Result<()> {
        self.io.sync().map_err(|e| self.io_err(0, e))
    }

    /// Grows the file by its FILEGROWTH (at least `min_pages`). Returns the new size, or
    /// `None` when the file may not grow.
    pub fn grow(&self, min_pages: u32) -> Result<Option<u32>> {
        let _g = self.grow_lock.lock();
        let cur = self.size_pages();
        let spec = self.spec.read().clone();
        let mut add = spec.growth.increment(cur);
        if add == 0 {
            return Ok(None);
        }
        add = add.max(min_pages);
        let mut new = cur.saturating_add(add);
        if let Some(max) = spec.max_pages {
            if cur >= max {
                return Ok(None);
            }
            new = new.min(max);
        }
        let bytes = new as u64 * PAGE_SIZE as u64;
        self.io.set_len(bytes).map_err(|e| self.io_err(bytes, e))?;
        // The new size must be durable before any logged change records it (the file
        // header's size): otherwise a crash leaves a header describing pages the file
        // does not have.
        self.io.sync().map_err(|e| self.io_err(bytes, e))?;
        self.size_pages.store(new, Ordering::Release);
        self.spec.write().size_pages = new;
        self.stats.set_size(bytes);
        Ok(Some(new))
    }
}

/// The data files of one database, by file id.
pub struct DataFiles {
    pub db_id: u16,
    files: RwLock<Vec<Option<Arc<DataFile>>>>,
}

impl DataFiles {
    pub fn new(db_id: u16) -> DataFiles {
        DataFiles { db_id, files: RwLock::new(Vec::new()) }
    }

    pub fn add(&self, f: DataFile) -> Arc<DataFile> {
        let id = f.file_id() as usize;
        let f = Arc::new(f);
        let mut v = self.files.write();
        if v.len() <= id {
            v.resize(id + 1, None);
        }
        v[id] = Some(f.clone());
        f
    }

    pub fn get(&self, file_id: u16) -> Result<Arc<DataFile>> {
        self.files
            .read()
            .get(file_id as usize)
            .and_then(|f| f.clone())
            .ok_or(StorageError::NoSuchFile { db: self.db_id, file_id })
    }

    /// Data files in file-id order.
    pub fn all(&self) -> Vec<Arc<DataFile>> {
        self.files.read().iter().flatten().cloned().collect()
    }

    pub fn sync_all(&self) -> Result<()> {
        for f in self.all() {
            f.sync()?;
        }
        Ok(())
    }
}

/// Maps a path written for Windows (`K:\SQL\Data\x.mdf`) under the instance's data
/// directory (`<data>/K/SQL/Data/x.mdf`), so scripts written for SQL Server run unchanged.
/// Relative and Unix paths are taken relative to the data directory.
pub fn map_windows_path(data_dir: &Path, path: &str) -> PathBuf {
    let mut out = data_dir.to_path_buf();
    let mut rest = path;
    let b = path.as_bytes();
    if b.len() >= 2 && b[1] == b':' && b[0].is_ascii_alphabetic() {
        out.push(&path[..1].to_ascii_uppercase());
        rest = &path[2..];
    }
    for part in rest.split(['\\', '/']) {
        if part.is_empty() || part == "." || part == ".." {
            continue; // never escape the data directory
        }
        out.push(part);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_paths_map_under_data_dir() {
        let d = Path::new("/data");
        assert_eq!(map_windows_path(d, r"K:\SQL\Data\DD\x.mdf"), PathBuf::from("/data/K/SQL/Data/DD/x.mdf"));
        assert_eq!(map_windows_path(d, r"c:\..\..\etc\passwd"), PathBuf::from("/data/C/etc/passwd"));
        assert_eq!(map_windows_path(d, "sub/y.ndf"), PathBuf::from("/data/sub/y.ndf"));
    }

    #[test]
    fn growth_increments() {
        assert_eq!(FileGrowth::Pages(128).increment(1000), 128);
        assert_eq!(FileGrowth::Percent(10).increment(1000), 100);
        assert_eq!(FileGrowth::Percent(10).increment(10), 8);
        assert_eq!(FileGrowth::None.increment(10), 0);
    }
}
