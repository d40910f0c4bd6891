//! Per-file I/O statistics: what sys.dm_io_virtual_file_stats shows.
//!
//! The storage layer registers each data and log file when it opens it and records every
//! physical read and write with its byte count and stall (the time the caller waited for
//! the I/O). Stalls are kept in microseconds because the log issues many sub-millisecond
//! flushes that must still add up; the DMV shows milliseconds.
//!
//! The registry is keyed by (database_id, file_id) and outlives the file handle: like
//! SQL Server, whose numbers run from instance start, closing and reopening a database
//! continues its counters. Unregister only when the file stops existing (DROP DATABASE,
//! ALTER DATABASE ... REMOVE FILE), so a later database reusing the id starts from zero.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::RwLock;

/// The I/O counters of one database file. Cheap to update from any thread.
#[derive(Debug)]
pub struct FileIoStats {
    database_id: u16,
    file_id: u16,
    // Reads (workers missing the buffer pool) and writes (lazy writer, checkpoint, log
    // writer) come from different threads at the same time, so each side has its own
    // cache line and they do not slow each other down.
    read: IoSide,
    write: IoSide,
    size_on_disk_bytes: AtomicU64,
    // The total stall (the DMV's io_stall) is derived from the read and write stalls at
    // snapshot time rather than kept, saving an atomic add on every I/O.
}

/// The counters of one direction of I/O, on a cache line of their own.
#[derive(Debug, Default)]
#[repr(align(64))]
struct IoSide {
    count: AtomicU64,
    bytes: AtomicU64,
    stall_us: AtomicU64,
}

impl IoSide {
    #[inline]
    fn record(&self, bytes: u64, stall: Duration) {
        self.count.fetch_add(1, Relaxed);
        self.bytes.fetch_add(bytes, Relaxed);
        self.stall_us.fetch_add(stall.as_micros() as u64, Relaxed);
    }
}

/// A copy of one file's row, in SQL Server's units. Each counter is read atomically, the
/// row as a whole is not (a read may be counted before its bytes), as in SQL Server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileIoSnapshot {
    pub database_id: u16,
    pub file_id: u16,
    /// Milliseconds since the instance started (`crate::uptime`); SQL Server uses the
    /// machine's uptime. Only differences between two samples mean anything.
    pub sample_ms: u64,
    pub num_of_reads: u64,
    pub num_of_bytes_read: u64,
    pub io_stall_read_ms: u64,
    pub num_of_writes: u64,
    pub num_of_bytes_written: u64,
    pub io_stall_write_ms: u64,
    /// Total stall in milliseconds: io_stall_read_ms + io_stall_write_ms, so the row adds
    /// up the way tools expect.
    pub io_stall: u64,
    pub size_on_disk_bytes: u64,
    /// Read and write stalls in microseconds, for callers that want more resolution.
    pub io_stall_read_us: u64,
    pub io_stall_write_us: u64,
}

impl FileIoStats {
    /// Stats for one file that are not in any registry (tests, scratch files). Files that
    /// the DMV should show come from `register_file`.
    pub fn new(database_id: u16, file_id: u16) -> FileIoStats {
        FileIoStats {
            database_id,
            file_id,
            read: IoSide::default(),
            write: IoSide::default(),
            size_on_disk_bytes: AtomicU64::new(0),
        }
    }

    pub fn database_id(&self) -> u16 {
        self.database_id
    }

    pub fn file_id(&self) -> u16 {
        self.file_id
    }

    /// One physical read of `bytes`, which kept its caller waiting `stall`.
    #[inline]
    pub fn record_read(&self, bytes: u64, stall: Duration) {
        self.read.record(bytes, stall);
    }

    /// One physical write (or flush of a write) of `bytes`, which took `stall`.
    #[inline]
    pub fn record_write(&self, bytes: u64, stall: Duration) {
        self.write.record(bytes, stall);
    }

    /// The file's current size on disk, after it is created, grown or shrunk.
    #[inline]
    pub fn set_size(&self, bytes: u64) {
        self.size_on_disk_bytes.store(bytes, Relaxed);
    }

    pub fn snapshot(&self) -> FileIoSnapshot {
        let read_us = self.read.stall_us.load(Relaxed);
        let write_us = self.write.stall_us.load(Relaxed);
        let read_ms = read_us / 1000;
        let write_ms = write_us / 1000;
        FileIoSnapshot {
            database_id: self.database_id,
            file_id: self.file_id,
            sample_ms: crate::uptime().as_millis() as u64,
            num_of_reads: self.read.count.load(Relaxed),
            num_of_bytes_read: self.read.bytes.load(Relaxed),
            io_stall_read_ms: read_ms,
            num_of_writes: self.write.count.load(Relaxed),
            num_of_bytes_written: self.write.bytes.load(Relaxed),
            io_stall_write_ms: write_ms,
            io_stall: read_ms.saturating_add(write_ms),
            size_on_disk_bytes: self.size_on_disk_bytes.load(Relaxed),
            io_stall_read_us: read_us,
            io_stall_write_us: write_us,
        }
    }
}

/// A set of registered files. The instance has one (the free functions below); tests make
/// their own so they see exactly their files.
#[derive(Debug, Default)]
pub struct FileRegistry {
    // Ordered so that listings come out by database_id, file_id, as SQL Server returns
    // them. Registration is rare and listing is a DMV query, so a lock is fine here; the
    // hot path (record_read/record_write) goes through the Arc and never touches it.
    files: RwLock<BTreeMap<(u16, u16), Arc<FileIoStats>>>,
}

impl FileRegistry {
    pub const fn new() -> FileRegistry {
        FileRegistry { files: RwLock::new(BTreeMap::new()) }
    }

    /// The stats of (database_id, file_id), created on first registration. Registering
    /// again returns the same stats, so a reopened database continues its counters.
    pub fn register(&self, database_id: u16, file_id: u16) -> Arc<FileIoStats> {
        if let Some(s) = self.files.read().get(&(database_id, file_id)) {
            return s.clone();
        }
        self.files
            .write()
            .entry((database_id, file_id))
            .or_insert_with(|| Arc::new(FileIoStats::new(database_id, file_id)))
            .clone()
    }

    /// Forgets one file; returns whether it was registered. Holders of its `Arc` can keep
    /// recording, but nothing lists it any more.
    pub fn unregister(&self, database_id: u16, file_id: u16) -> bool {
        self.files.write().remove(&(database_id, file_id)).is_some()
    }

    /// Forgets every file of a database (DROP DATABASE); returns how many there were.
    pub fn unregister_database(&self, database_id: u16) -> usize {
        let mut files = self.files.write();
        let before = files.len();
        files.retain(|&(db, _), _| db != database_id);
        before - files.len()
    }

    /// The registered stats of one file, if any.
    pub fn get(&self, database_id: u16, file_id: u16) -> Option<Arc<FileIoStats>> {
        self.files.read().get(&(database_id, file_id)).cloned()
    }

    /// sys.dm_io_virtual_file_stats(database_id, file_id): `None` stands for NULL and
    /// matches every database or every file. Ordered by database_id, file_id.
    pub fn stats(&self, database_id: Option<u16>, file_id: Option<u16>) -> Vec<FileIoSnapshot> {
        let wanted = |f: u16| file_id.is_none() || file_id == Some(f);
        // Copy the Arcs out first so that snapshots are taken without holding the lock.
        let selected: Vec<Arc<FileIoStats>> = {
            let files = self.files.read();
            match database_id {
                Some(db) => files
                    .range((db, 0)..=(db, u16::MAX))
                    .filter(|((_, f), _)| wanted(*f))
                    .map(|(_, s)| s.clone())
                    .collect(),
                None => files.iter().filter(|((_, f), _)| wanted(*f)).map(|(_, s)| s.clone()).collect(),
            }
        };
        selected.iter().map(|s| s.snapshot()).collect()
    }
}

static FILES: FileRegistry = FileRegistry::new();

/// The instance's file registry.
pub fn file_registry() -> &'static FileRegistry {
    &FILES
}

/// Registers a file in the instance registry (see `FileRegistry::register`).
pub fn register_file(database_id: u16, file_id: u16) -> Arc<FileIoStats> {
    FILES.register(database_id, file_id)
}

/// Removes a file from the instance registry (see `FileRegistry::unregister`).
pub fn unregister_file(database_id: u16, file_id: u16) -> bool {
    FILES.unregister(database_id, file_id)
}

/// sys.dm_io_virtual_file_stats over the instance registry; `None` is NULL.
pub fn file_stats(database_id: Option<u16>, file_id: Option<u16>) -> Vec<FileIoSnapshot> {
    FILES.stats(database_id, file_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_records_add_up_exactly() {
        let f = Arc::new(FileIoStats::new(5, 1));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let f = f.clone();
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        // Sub-millisecond stalls: each rounds to 0 ms on its own.
                        f.record_read(8192, Duration::from_micros(150));
                        f.record_write(512, Duration::from_micros(90));
                    }
                })
            })
            .collect();
        for h in threads {
            assert!(h.join().is_ok());
        }
        f.set_size(1 << 20);
        let s = f.snapshot();
        assert_eq!((s.database_id, s.file_id), (5, 1));
        assert_eq!(s.num_of_reads, 40_000);
        assert_eq!(s.num_of_bytes_read, 40_000 * 8192);
        assert_eq!(s.io_stall_read_us, 40_000 * 150);
        assert_eq!(s.io_stall_read_ms, 6_000);
        assert_eq!(s.num_of_writes, 40_000);
        assert_eq!(s.num_of_bytes_written, 40_000 * 512);
        assert_eq!(s.io_stall_write_ms, 3_600);
        assert_eq!(s.io_stall, 9_600);
        assert_eq!(s.size_on_disk_bytes, 1 << 20);
    }

    #[test]
    fn io_stall_is_the_sum_of_the_shown_parts() {
        let f = FileIoStats::new(1, 1);
        f.record_read(1, Duration::from_micros(1_600));
        f.record_write(1, Duration::from_micros(1_600));
        let s = f.snapshot();
        assert_eq!((s.io_stall_read_ms, s.io_stall_write_ms, s.io_stall), (1, 1, 2));
    }

    #[test]
    fn reregistering_continues_the_counters() {
        let r = FileRegistry::new();
        let a = r.register(7, 2);
        a.record_write(4096, Duration::from_millis(3));
        drop(a); // the database closes
        let b = r.register(7, 2); // and reopens
        b.record_write(4096, Duration::from_millis(1));
        assert!(Arc::ptr_eq(&b, &r.register(7, 2)));
        let s = b.snapshot();
        assert_eq!((s.num_of_writes, s.num_of_bytes_written, s.io_stall_write_ms), (2, 8192, 4));

        // Dropping the file starts a later file with the same ids from zero.
        assert!(r.unregister(7, 2));
        assert!(!r.unregister(7, 2));
        assert!(r.get(7, 2).is_none());
        assert_eq!(r.register(7, 2).snapshot().num_of_writes, 0);
    }

    #[test]
    fn null_filters() {
        let r = FileRegistry::new();
        for (db, file) in [(2, 1), (2, 2), (1, 2), (1, 1), (9, 1), (9, 3)] {
            r.register(db, file).record_read(u64::from(file), Duration::ZERO);
        }
        let ids =
            |v: Vec<FileIoSnapshot>| -> Vec<(u16, u16)> { v.iter().map(|s| (s.database_id, s.file_id)).collect() };
        assert_eq!(ids(r.stats(None, None)), [(1, 1), (1, 2), (2, 1), (2, 2), (9, 1), (9, 3)]);
        assert_eq!(ids(r.stats(Some(9), None)), [(9, 1), (9, 3)]);
        assert_eq!(ids(r.stats(None, Some(2))), [(1, 2), (2, 2)]);
        assert_eq!(ids(r.stats(Some(2), Some(1))), [(2, 1)]);
        assert!(r.stats(Some(4), None).is_empty());
        assert!(r.stats(Some(9), Some(2)).is_empty());

        assert_eq!(r.unregister_database(9), 2);
        assert_eq!(ids(r.stats(None, Some(1))), [(1, 1), (2, 1)]);
    }

    #[test]
    fn instance_registry() {
        // Ids no other test uses: the instance registry is shared by the whole process.
        let a = register_file(65_000, 1);
        a.record_read(100, Duration::from_micros(10));
        assert!(Arc::ptr_eq(&a, &register_file(65_000, 1)));
        assert!(file_registry().get(65_000, 1).is_some());
        let rows = file_stats(Some(65_000), None);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].num_of_bytes_read, 100);
        assert!(file_stats(None, None).iter().any(|s| s.database_id == 65_000));
        assert!(unregister_file(65_000, 1));
        assert!(file_stats(Some(65_000), None).is_empty());
    }
}
