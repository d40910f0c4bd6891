//! Real files: pread/pwrite, fdatasync, and preallocation with fallocate so that growing
//! a data or log file reserves its blocks up front (appends into preallocated space flush
//! much faster than appends that change the file size).

use super::{FileSystem, IoFile};
use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::os::unix::io::AsRawFd;
use std::path::Path;
use std::sync::Arc;

pub struct OsFile {
    file: File,
}

impl IoFile for OsFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.file.read_exact_at(buf, offset)
    }

    fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.file.write_all_at(data, offset)
    }

    fn sync(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    /// sync_file_range(SYNC_FILE_RANGE_WRITE): starts the writeback of the range and
    /// returns (as PostgreSQL's checkpoint_flush_after does). Without it a checkpoint's
    /// gigabyte of writes sits dirty in the page cache until the final fdatasync, which
    /// then writes all of it while the checkpoint waits; with it the device writes while
    /// the checkpoint copies and checksums the next pages.
    fn start_writeback(&self, offset: u64, len: u64) {
        #[cfg(target_os = "linux")]
        // SAFETY: sync_file_range on a valid, open descriptor; the range is only a hint
        // and an error (ignored) changes nothing.
        unsafe {
            libc::sync_file_range(
                self.file.as_raw_fd(),
                offset as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
        #[cfg(not(target_os = "linux"))]
        let _ = (offset, len);
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        let cur = self.len()?;
        if len > cur {
            // SAFETY: fallocate on a valid, open descriptor with a non-negative range.
            let rc =
                unsafe { libc::fallocate(self.file.as_raw_fd(), 0, cur as libc::off_t, (len - cur) as libc::off_t) };
            if rc == 0 {
                return Ok(());
            }
            // Filesystems without fallocate (tmpfs on old kernels, some overlays): fall
            // back to a sparse extension.
        }
        self.file.set_len(len)
    }
}

/// The machine's file system.
#[derive(Default, Clone, Copy)]
pub struct OsFs;

impl FileSystem for OsFs {
    fn open(&self, path: &Path, create: bool) -> io::Result<Arc<dyn IoFile>> {
        let file = OpenOptions::new().read(true).write(true).create(create).truncate(false).open(path)?;
        Ok(Arc::new(OsFile { file }))
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn remove(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }
}
