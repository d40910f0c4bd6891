//! The log file as the log manager reaches it: an `IoFile` whose reads and writes are
//! counted in the file's sys.dm_io_virtual_file_stats row (database id, file id 2).

use super::error::LogError;
use diag::FileIoStats;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::io::IoFile;

pub(crate) struct LogFile {
    pub io: Arc<dyn IoFile>,
    pub path: String,
    pub stats: Arc<FileIoStats>,
}

impl LogFile {
    /// Reads exactly `buf.len()` bytes (an `UnexpectedEof` error past the end).
    pub fn read(&self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        let t = Instant::now();
        let r = self.io.read_at(offset, buf);
        self.stats.record_read(buf.len() as u64, t.elapsed());
        r
    }

    /// One write, counted with its own stall.
    pub fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let t = Instant::now();
        let r = self.io.write_at(offset, data);
        self.stats.record_write(data.len() as u64, t.elapsed());
        r
    }

    /// One write whose stall is recorded by the caller (a log flush charges the sync
    /// to its last write). Returns how long the write took.
    pub fn write_uncounted(&self, offset: u64, data: &[u8]) -> io::Result<Duration> {
        let t = Instant::now();
        self.io.write_at(offset, data)?;
        Ok(t.elapsed())
    }

    /// A write followed by a sync, counted as one write whose stall covers both (a VLF
    /// header that must be durable before anything relies on it).
    pub fn write_durable(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        let t = Instant::now();
        let r = self.io.write_at(offset, data).and_then(|()| self.io.sync());
        self.stats.record_write(data.len() as u64, t.elapsed());
        r
    }

    pub fn sync(&self) -> io::Result<()> {
        self.io.sync()
    }

    pub fn set_len(&self, len: u64) -> io::Result<()> {
        self.io.set_len(len)?;
        self.stats.set_size(len);
        Ok(())
    }

    pub fn len(&self) -> io::Result<u64> {
        self.io.len()
    }

    pub fn err(&self, offset: u64, source: io::Error) -> LogError {
        LogError::Io { file: self.path.clone(), offset, source }
    }

    /// Writes zeros over `from..to` in 1 MB pieces (new log space, as SQL Server
    /// initializes it).
    pub fn zero_fill(&self, from: u64, to: u64) -> io::Result<()> {
        const CHUNK: u64 = 1 << 20;
        let zeros = vec![0u8; CHUNK.min(to.saturating_sub(from)) as usize];
        let mut at = from;
        while at < to {
            let n = (to - at).min(CHUNK) as usize;
            self.write(at, &zeros[..n])?;
            at += n as u64;
        }
        Ok(())
    }
}
