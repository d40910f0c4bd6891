//! The I/O backend: how the storage engine reaches bytes on a device.
//!
//! Three implementations share one trait so every structure can be tested for crashes:
//! - [`OsFs`]: real files (pread/pwrite, fdatasync, preallocation with fallocate);
//! - [`MemFs`]: memory only, for fast tests;
//! - [`FaultFs`]: fault injection. Each file keeps a *volatile* image (what reads see)
//!   and a *durable* image (what survives a crash). Writes land in the volatile image and
//!   in a list of unsynced writes; `sync` moves them to the durable image. A crash can be
//!   triggered after any write; `restart` then builds the post-crash files from the
//!   durable image plus a random subset of the unsynced writes, each possibly torn at
//!   512-byte sector boundaries.
//!
//! Statistics (sys.dm_io_virtual_file_stats) are kept one layer up, by the data file,
//! so every backend is measured the same way.

use std::io;
use std::path::Path;
use std::sync::Arc;

mod fault;
mod mem;
mod os;

pub use fault::{FaultFs, TornPolicy};
pub use mem::{MemFile, MemFs};
pub use os::OsFs;

/// Disk sector size: the unit a power loss can tear a write at.
pub const SECTOR_SIZE: usize = 512;

/// One open file.
pub trait IoFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`; reading past the end is an
    /// `UnexpectedEof` error.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// Writes all of `data` at `offset`, extending the file if needed.
    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()>;
    /// Makes every completed write durable (fdatasync).
    fn sync(&self) -> io::Result<()>;
    /// Asks the device to start writing `len` bytes at `offset` back now rather than
    /// when the page cache decides to, without waiting and without making anything
    /// durable (that is still `sync`'s job). A hint: backends without a page cache do
    /// nothing.
    fn start_writeback(&self, _offset: u64, _len: u64) {}
    /// Current size in bytes.
    fn len(&self) -> io::Result<u64>;
    /// Grows (preallocating the space, zero-filled) or shrinks the file. Size changes
    /// become durable at the next `sync`.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

/// A namespace of files: a directory tree on disk, or its simulation.
pub trait FileSystem: Send + Sync {
    /// Opens a file; with `create` it is created (empty) when missing.
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn IoFile>>;
    fn exists(&self, path: &Path) -> bool;
    fn remove(&self, path: &Path) -> io::Result<()>;
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
}
