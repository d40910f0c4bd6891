//! Buffer pool behaviour: eviction under a small memory limit keeps every change,
//! checksums catch damaged pages (error 824) without ever returning them as data, the WAL
//! gate is honoured before a page is written, the dirty page list is ordered by recLSN,
//! and concurrent latching keeps pages consistent.

use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use storage::file::{DataFile, DataFiles, FileGrowth, FileSpec};
use storage::io::{FileSystem, MemFs};
use storage::page::{apply, PageOp, PageType};
use storage::{BufferPool, NoWal, PageId, Result, WalGate};

const DB: u16 = 7;

fn files(fs: &dyn FileSystem, pages: u32) -> Arc<DataFiles> {
    let df = Arc::new(DataFiles::new(DB));
    let spec = FileSpec {
        file_id: 1,
        name: "t".into(),
        path: PathBuf::from("/db/t.mdf"),
        size_pages: pages,
        growth: FileGrowth::None,
        max_pages: None,
    };
    df.add(DataFile::open(fs, DB, spec, true).unwrap());
    df
}

/// Formats page `n` with one record holding `value`, as a change logged at `lsn`.
fn put(pool: &BufferPool, n: u32, value: u64, lsn: u64) {
    let id = PageId::new(1, n);
    let mut g = pool.write_fresh(DB, id).unwrap();
    let fmt = PageOp::Format { page_type: PageType::Data, level: 0, index_id: 0, object_id: 1, alloc_unit_id: 1 };
    apply(g.page_mut(), id, &fmt).unwrap();
    apply(g.page_mut(), id, &PageOp::InsertSlot { slot: 0, record: &value.to_le_bytes() }).unwrap();
    g.mark_dirty(lsn);
}

fn get(pool: &BufferPool, n: u32) -> Result<u64> {
    let g = pool.read(DB, PageId::new(1, n))?;
    let r = g.record(0).expect("record 0");
    Ok(u64::from_le_bytes(r.try_into().unwrap()))
}

#[test]
fn eviction_keeps_every_change() {
    let fs = MemFs::new();
    let pool = BufferPool::new(16);
    pool.attach(DB, files(&fs, 400), Arc::new(NoWal));
    for n in 0..300 {
        put(&pool, n, n as u64 * 3, n as u64 + 1);
    }
    assert!(pool.stats.evictions.load(Ordering::Relaxed) > 0, "16 frames cannot hold 300 pages");
    for n in 0..300 {
        assert_eq!(get(&pool, n).unwrap(), n as u64 * 3);
    }
    // Updating through an UP latch upgraded to EX works too.
    {
        let id = PageId::new(1, 5);
        let g = pool.update(DB, id).unwrap();
        let mut w = g.upgrade();
        apply(w.page_mut(), id, &PageOp::ReplaceSlot { slot: 0, record: &99u64.to_le_bytes() }).unwrap();
        w.mark_dirty(1000);
    }
    pool.flush_all(DB).unwrap();
    pool.discard(DB);
    assert_eq!(get(&pool, 5).unwrap(), 99);
    assert_eq!(get(&pool, 299).unwrap(), 897);
}

#[test]
fn damaged_page_is_error_824_and_never_data() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    let df = files(&fs, 64);
    pool.attach(DB, df.clone(), Arc::new(NoWal));
    put(&pool, 20, 1234, 1);
    put(&pool, 21, 5678, 2);
    pool.flush_all(DB).unwrap();
    pool.discard(DB);
    // Flip one bit in the middle of page 20 on "disk".
    let f = fs.open(&PathBuf::from("/db/t.mdf"), false).unwrap();
    let mut b = [0u8; 1];
    let at = 20 * 8192 + 4000;
    f.read_at(at, &mut b).unwrap();
    b[0] ^= 0x10;
    f.write_at(at, &b).unwrap();

    for _ in 0..3 {
        let err = pool.read(DB, PageId::new(1, 20)).err().expect("damaged page must not be returned");
        assert_eq!(err.number(), 824);
        let sql = err.to_sql_error();
        assert_eq!((sql.number, sql.severity), (824, 24));
        assert!(sql.message.contains("(1:20)"), "message names the page: {}", sql.message);
        assert!(!pool.is_resident(DB, PageId::new(1, 20)));
    }
    assert!(pool.write(DB, PageId::new(1, 20)).is_err());
    // Its neighbour is fine, and the pool keeps serving.
    assert_eq!(get(&pool, 21).unwrap(), 5678);
}

#[test]
fn page_with_wrong_id_is_824() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    pool.attach(DB, files(&fs, 64), Arc::new(NoWal));
    put(&pool, 30, 1, 1);
    pool.flush_all(DB).unwrap();
    pool.discard(DB);
    // Copy page 30's bytes over page 31: valid checksum, wrong place (a misdirected write).
    let f = fs.open(&PathBuf::from("/db/t.mdf"), false).unwrap();
    let mut page = vec![0u8; 8192];
    f.read_at(30 * 8192, &mut page).unwrap();
    f.write_at(31 * 8192, &page).unwrap();
    let err = pool.read(DB, PageId::new(1, 31)).err().expect("misplaced page must be refused");
    assert_eq!(err.number(), 824);
}

/// A WAL gate that records what was asked of it.
struct RecordingWal {
    flushed: AtomicU64,
    calls: Mutex<Vec<u64>>,
}

impl WalGate for RecordingWal {
    fn flushed_lsn(&self) -> u64 {
        self.flushed.load(Ordering::SeqCst)
    }
    fn flush_to(&self, lsn: u64) -> Result<()> {
        self.calls.lock().push(lsn);
        self.flushed.fetch_max(lsn, Ordering::SeqCst);
        Ok(())
    }
}

#[test]
fn wal_is_flushed_before_the_page() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    let wal = Arc::new(RecordingWal { flushed: AtomicU64::new(10), calls: Mutex::new(vec![]) });
    pool.attach(DB, files(&fs, 64), wal.clone());
    put(&pool, 16, 1, 5); // already covered by the flushed log
    put(&pool, 17, 2, 50);
    assert!(pool.flush_page(DB, PageId::new(1, 16)).unwrap());
    assert!(wal.calls.lock().is_empty(), "LSN 5 <= flushed 10: no log flush needed");
    assert!(pool.flush_page(DB, PageId::new(1, 17)).unwrap());
    assert_eq!(*wal.calls.lock(), vec![50], "log forced to the page LSN before the write");
    assert!(!pool.flush_page(DB, PageId::new(1, 17)).unwrap(), "clean page is not written twice");
}

#[test]
fn dirty_page_list_is_ordered_by_rec_lsn() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    pool.attach(DB, files(&fs, 64), Arc::new(NoWal));
    put(&pool, 40, 0, 30);
    put(&pool, 41, 0, 10);
    put(&pool, 42, 0, 20);
    // A second change to page 41 keeps its recLSN (the first change's LSN).
    {
        let id = PageId::new(1, 41);
        let mut g = pool.write(DB, id).unwrap();
        apply(g.page_mut(), id, &PageOp::ReplaceSlot { slot: 0, record: &7u64.to_le_bytes() }).unwrap();
        g.mark_dirty(60);
        assert_eq!(g.lsn(), 60, "page LSN follows the latest change");
    }
    let list: Vec<(u64, u32)> = pool.dirty_pages(DB).into_iter().map(|(l, p)| (l, p.page_no)).collect();
    assert_eq!(list, vec![(10, 41), (20, 42), (30, 40)]);
    assert_eq!(pool.min_rec_lsn(DB), Some(10));
    // The indirect checkpoint primitive writes oldest first and stops at the bound.
    assert_eq!(pool.flush_oldest(DB, 25, 100).unwrap(), 2);
    assert_eq!(pool.dirty_pages(DB).into_iter().map(|(l, _)| l).collect::<Vec<_>>(), vec![30]);
    assert_eq!(pool.min_rec_lsn(DB), Some(30));
}

#[test]
fn lazy_writer_frees_frames() {
    let fs = MemFs::new();
    let pool = BufferPool::new(64);
    pool.attach(DB, files(&fs, 200), Arc::new(NoWal));
    for n in 0..64 {
        put(&pool, n, n as u64, n as u64 + 1);
    }
    // Everything is dirty and unreferenced after two passes of the clock.
    pool.lazy_writer_pass();
    let written = pool.lazy_writer_pass();
    assert!(written > 0 || pool.stats.lazy_writes.load(Ordering::Relaxed) > 0);
    for n in 0..64 {
        assert_eq!(get(&pool, n).unwrap(), n as u64);
    }
}

#[test]
fn concurrent_latching_loses_no_update() {
    let fs = MemFs::new();
    let pool = BufferPool::new(24);
    pool.attach(DB, files(&fs, 100), Arc::new(NoWal));
    const PAGES: u32 = 40;
    for n in 0..PAGES {
        put(&pool, n, 0, 1);
    }
    let lsn = Arc::new(AtomicU64::new(10));
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let pool = pool.clone();
            let lsn = lsn.clone();
            std::thread::spawn(move || {
                let mut x: u64 = 0x9E37_79B9 ^ t;
                for _ in 0..2000 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let n = (x % PAGES as u64) as u32;
                    let id = PageId::new(1, n);
                    if x % 3 == 0 {
                        let _ = get(&pool, n).unwrap();
                    } else {
                        let mut g = pool.write(DB, id).unwrap();
                        let v = u64::from_le_bytes(g.record(0).unwrap().try_into().unwrap());
                        apply(g.page_mut(), id, &PageOp::ReplaceSlot { slot: 0, record: &(v + 1).to_le_bytes() })
                            .unwrap();
                        g.mark_dirty(lsn.fetch_add(1, Ordering::SeqCst));
                    }
                }
            })
        })
        .collect();
    let mut expected = 0u64;
    for (t, h) in threads.into_iter().enumerate() {
        h.join().unwrap();
        let mut x: u64 = 0x9E37_79B9 ^ t as u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x % 3 != 0 {
                expected += 1;
            }
        }
    }
    let total: u64 = (0..PAGES).map(|n| get(&pool, n).unwrap()).sum();
    assert_eq!(total, expected);
}

/// `try_write` latches a free page (resident or not), returns `None` while another
/// guard holds the page, and leaves no pin behind either way (the page can be evicted
/// afterwards, so every change survives a small pool).
#[test]
fn try_write_never_waits() {
    let fs = MemFs::new();
    let pool = BufferPool::new(16);
    pool.attach(DB, files(&fs, 100), Arc::new(NoWal));
    put(&pool, 3, 30, 1);
    {
        let held = pool.read(DB, PageId::new(1, 3)).unwrap();
        assert!(pool.try_write(DB, PageId::new(1, 3)).unwrap().is_none(), "SH latch held");
        drop(held);
    }
    let mut g = pool.try_write(DB, PageId::new(1, 3)).unwrap().expect("free page");
    apply(g.page_mut(), PageId::new(1, 3), &PageOp::ReplaceSlot { slot: 0, record: &31u64.to_le_bytes() }).unwrap();
    g.mark_dirty(2);
    drop(g);
    for n in 10..60 {
        put(&pool, n, n as u64, n as u64);
    }
    assert!(!pool.is_resident(DB, PageId::new(1, 3)), "a pin was left behind");
    assert_eq!(get(&pool, 3).unwrap(), 31);
}
