//! Torn and corrupted pages through the fault-injecting backend: after a crash in the
//! middle of writing pages, every page reads back as a complete old image, a complete new
//! image, or error 824. A torn mix is never returned as data.

use std::path::PathBuf;
use std::sync::Arc;
use storage::file::{DataFile, DataFiles, FileGrowth, FileSpec};
use storage::io::{FaultFs, TornPolicy};
use storage::page::{apply, PageOp, PageType};
use storage::{BufferPool, NoWal, PageId};

const DB: u16 = 3;
const PAGES: u32 = 24;

fn open(fs: &FaultFs, create: bool) -> Arc<BufferPool> {
    let df = Arc::new(DataFiles::new(DB));
    let spec = FileSpec {
        file_id: 1,
        name: "t".into(),
        path: PathBuf::from("/d/t.mdf"),
        size_pages: 64,
        growth: FileGrowth::None,
        max_pages: None,
    };
    df.add(DataFile::open(fs, DB, spec, create).unwrap());
    let pool = BufferPool::new(128);
    pool.attach(DB, df, Arc::new(NoWal));
    pool
}

/// Fills page `n` with records all carrying `version`, so a page mixing two versions is
/// recognisable (if it ever got past the checksum).
fn write_version(pool: &BufferPool, n: u32, version: u8) {
    let id = PageId::new(1, n);
    let mut g = pool.write_fresh(DB, id).unwrap();
    let fmt = PageOp::Format { page_type: PageType::Data, level: 0, index_id: 0, object_id: 9, alloc_unit_id: 9 };
    apply(g.page_mut(), id, &fmt).unwrap();
    let rec = [version; 400];
    for s in 0..19 {
        apply(g.page_mut(), id, &PageOp::InsertSlot { slot: s, record: &rec }).unwrap();
    }
    g.mark_dirty(version as u64);
}

/// What a page reads as after restart: Some(version), or None for "never written".
fn read_version(pool: &BufferPool, n: u32) -> Result<Option<u8>, i32> {
    match pool.read(DB, PageId::new(1, n)) {
        Err(e) => Err(e.number()),
        Ok(g) => {
            if g.page_type() == Some(PageType::Unformatted) {
                return Ok(None);
            }
            let versions: Vec<u8> = g.records().flat_map(|(_, r)| r.iter().copied()).collect();
            let v = versions[0];
            assert!(versions.iter().all(|&b| b == v), "page {n} returned a torn mix as data");
            assert_eq!(g.slot_count(), 19);
            Ok(Some(v))
        }
    }
}

#[test]
fn crash_while_flushing_never_returns_a_torn_page() {
    let mut saw_824 = 0;
    let mut saw_new = 0;
    // Count the writes of one full run to choose crash points inside it.
    let total_writes = {
        let fs = FaultFs::new(1);
        let pool = open(&fs, true);
        for n in 16..16 + PAGES {
            write_version(&pool, n, 1);
        }
        pool.flush_all(DB).unwrap();
        let before = fs.writes_done();
        for n in 16..16 + PAGES {
            write_version(&pool, n, 2);
        }
        pool.flush_all(DB).unwrap();
        fs.writes_done() - before
    };
    // flush_all gathers contiguous dirty pages into large writes (a checkpoint's
    // gathered write), so the 24 pages go in one or a few writes; a crash tears them
    // at 512-byte sectors across page boundaries.
    assert!((1..=PAGES as u64).contains(&total_writes), "{total_writes} writes");
    for seed in 0..60u64 {
        let fs = FaultFs::new(seed);
        fs.set_torn_write_policy(if seed % 2 == 0 { TornPolicy::TearAll } else { TornPolicy::Random });
        let pool = open(&fs, true);
        for n in 16..16 + PAGES {
            write_version(&pool, n, 1);
        }
        pool.flush_all(DB).unwrap(); // version 1 is durable
        for n in 16..16 + PAGES {
            write_version(&pool, n, 2);
        }
        fs.crash_after_writes(1 + seed % total_writes);
        assert!(pool.flush_all(DB).is_err(), "the crash interrupts the flush");
        drop(pool);
        let fs2 = fs.restart();
        let pool = open(&fs2, false);
        for n in 16..16 + PAGES {
            match read_version(&pool, n) {
                Ok(Some(1)) => {}
                Ok(Some(2)) => saw_new += 1,
                Ok(other) => panic!("page {n}: unexpected {other:?}"),
                Err(824) => saw_824 += 1,
                Err(e) => panic!("page {n}: unexpected error {e}"),
            }
        }
    }
    assert!(saw_824 > 0, "tearing must have produced detectable damage");
    assert!(saw_new > 0, "some unsynced writes survive whole");
}

#[test]
fn bit_rot_is_824_and_other_pages_still_serve() {
    let fs = FaultFs::new(7);
    let pool = open(&fs, true);
    for n in 16..20 {
        write_version(&pool, n, 5);
    }
    pool.flush_all(DB).unwrap();
    drop(pool);
    fs.corrupt(&PathBuf::from("/d/t.mdf"), 17 * 8192 + 3000, &[0x01]).unwrap();
    let pool = open(&fs, false);
    assert_eq!(read_version(&pool, 17), Err(824));
    assert_eq!(read_version(&pool, 17), Err(824), "still refused on a second read");
    assert_eq!(read_version(&pool, 16), Ok(Some(5)));
    assert_eq!(read_version(&pool, 18), Ok(Some(5)));
}

#[test]
fn read_error_is_823_and_page_is_not_cached() {
    let fs = FaultFs::new(8);
    let pool = open(&fs, true);
    write_version(&pool, 16, 4);
    pool.flush_all(DB).unwrap();
    drop(pool);
    let pool = open(&fs, false);
    fs.fail_reads_at(&PathBuf::from("/d/t.mdf"), 16 * 8192..17 * 8192);
    assert_eq!(read_version(&pool, 16), Err(823));
    fs.clear_faults();
    assert_eq!(read_version(&pool, 16), Ok(Some(4)), "a transient read error is not remembered as data");
}
