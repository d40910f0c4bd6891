//! Helpers shared by the log manager tests.
#![allow(dead_code)]

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use storage::file::FileGrowth;
use storage::io::{FileSystem, IoFile};
use txn::log::{LogConfig, LogManager, Lsn};

pub const KB: u64 = 1024;
pub const MB: u64 = 1024 * 1024;

pub fn log_path() -> PathBuf {
    PathBuf::from("/data/db.ldf")
}

/// A unique database name per call, so tests running in parallel do not share
/// performance counters.
pub fn db_name(prefix: &str) -> String {
    static N: AtomicU64 = AtomicU64::new(0);
    format!("{prefix}_{}", N.fetch_add(1, Ordering::Relaxed))
}

/// A unique database id per call (file statistics are keyed by it).
pub fn db_id() -> u16 {
    static N: AtomicU64 = AtomicU64::new(100);
    N.fetch_add(1, Ordering::Relaxed) as u16
}

pub fn config_fast() -> LogConfig {
    LogConfig { flush_interval: Duration::from_millis(5), ..LogConfig::default() }
}

pub fn create(
    fs: Arc<dyn FileSystem>,
    db: u16,
    name: &str,
    size: u64,
    growth: FileGrowth,
    max: Option<u64>,
) -> Arc<LogManager> {
    LogManager::create_with(fs, &log_path(), db, name, size, growth, max, config_fast()).expect("create log")
}

pub fn open(fs: Arc<dyn FileSystem>, db: u16, name: &str) -> Arc<LogManager> {
    LogManager::open_with(fs, &log_path(), db, name, config_fast()).expect("open log")
}

/// A record whose bytes say who wrote it: `len` bytes (at least 1) derived from
/// (`writer`, `n`), so a reader can tell a damaged or misplaced record.
pub fn payload(writer: u32, n: u32, len: usize) -> Vec<u8> {
    let mut seed = (u64::from(writer) << 32 | u64::from(n)).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len.max(1))
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect()
}

/// Every record of the log from its start, panicking on a read error.
pub fn read_all(log: &LogManager) -> Vec<(Lsn, Vec<u8>)> {
    log.reader(Lsn::NULL).collect::<Result<Vec<_>, _>>().expect("read log")
}

/// A file system whose files sleep in `sync`, like a disk with a real flush latency.
pub struct SlowSyncFs {
    pub inner: Arc<dyn FileSystem>,
    pub delay: Duration,
    pub syncs: Arc<AtomicU64>,
}

impl SlowSyncFs {
    pub fn new(inner: Arc<dyn FileSystem>, delay: Duration) -> Self {
        SlowSyncFs { inner, delay, syncs: Arc::new(AtomicU64::new(0)) }
    }
}

struct SlowSyncFile {
    inner: Arc<dyn IoFile>,
    delay: Duration,
    syncs: Arc<AtomicU64>,
}

impl IoFile for SlowSyncFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.inner.write_at(offset, data)
    }
    fn sync(&self) -> io::Result<()> {
        std::thread::sleep(self.delay);
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.inner.sync()
    }
    fn len(&self) -> io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.inner.set_len(len)
    }
}

impl FileSystem for SlowSyncFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn IoFile>> {
        Ok(Arc::new(SlowSyncFile {
            inner: self.inner.open(path, create)?,
            delay: self.delay,
            syncs: self.syncs.clone(),
        }))
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
    fn remove(&self, path: &Path) -> io::Result<()> {
        self.inner.remove(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
}
