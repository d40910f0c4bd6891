//! Off-row LOB storage: sizes around the fragment boundaries up to several MB, ranges
//! across fragments, sharing of text pages, space reuse after delete, reopen, a model
//! property test, and concurrent writers.

use proptest::prelude::*;
use std::path::Path;
use std::sync::atomic::{AtomicU16, Ordering};
use std::sync::Arc;
use storage::file::{FileGrowth, FileSpec};
use storage::io::MemFs;
use storage::lob::{self, MAX_FRAGMENT};
use storage::record::LobPointer;
use storage::{BufferPool, Database, PageType};

static NEXT_DB: AtomicU16 = AtomicU16::new(200);

const PATH: &str = "/data/lob.mdf";

fn create_db(fs: &MemFs, pool_pages: usize) -> Arc<Database> {
    let spec = FileSpec {
        file_id: 1,
        name: "lob".into(),
        path: PATH.into(),
        size_pages: 256,
        growth: FileGrowth::Pages(512),
        max_pages: None,
    };
    let id = NEXT_DB.fetch_add(1, Ordering::Relaxed);
    Database::create(BufferPool::new(pool_pages), fs, id, "lob", vec![spec]).expect("create database")
}

/// Deterministic bytes that differ from position to position and value to value.
fn value(len: usize, seed: u32) -> Vec<u8> {
    (0..len as u32).map(|i| (i.wrapping_add(seed).wrapping_mul(2_654_435_761) >> 13) as u8).collect()
}

const SIZES: [usize; 10] =
    [0, 1, 100, 8000, 8001, MAX_FRAGMENT, MAX_FRAGMENT + 1, 2 * MAX_FRAGMENT, 100 * 1024, 5 * 1024 * 1024];

#[test]
fn values_of_many_sizes_round_trip() {
    let fs = MemFs::new();
    let db = create_db(&fs, 4096);
    let au = lob::create_unit(&db, 50, 1).expect("unit").id;
    let mut ptrs = Vec::new();
    for (k, &n) in SIZES.iter().enumerate() {
        let v = value(n, k as u32);
        let p = lob::write(&db, au, &v).expect("write");
        assert_eq!(p.total_len, n as u64);
        assert_eq!(lob::read(&db, p).expect("read"), v, "size {n}");
        let st = lob::check(&db, p).expect("check");
        assert_eq!(st.total_len, n as u64);
        let fragments = n.div_ceil(MAX_FRAGMENT).max(1) as u64;
        assert_eq!(st.data_records, fragments, "size {n}");
        assert_eq!(st.levels, if n <= MAX_FRAGMENT { 1 } else { 2 }, "size {n}");
        ptrs.push((p, v));
    }
    // Ranges across fragment boundaries, at the ends, and past the end.
    for (p, v) in &ptrs {
        let n = v.len() as u64;
        let mut cases = vec![(0, 1), (0, n), (n.saturating_sub(1), 10), (n, 5), (n + 100, 5), (3, 0)];
        for b in (1..=4).map(|k| k * MAX_FRAGMENT as u64) {
            cases.push((b.saturating_sub(7), 14));
            cases.push((b.saturating_sub(1), 2 * MAX_FRAGMENT as u64 + 3));
        }
        for (off, len) in cases {
            let lo = off.min(n) as usize;
            let hi = off.saturating_add(len).min(n) as usize;
            let got = lob::read_range(&db, *p, off, len).expect("read_range");
            assert_eq!(got, &v[lo..hi], "len {n} range {off}+{len}");
        }
        let mut streamed = Vec::new();
        let count = lob::read_range_with(&db, *p, 0, n, |b| streamed.extend_from_slice(b)).expect("stream");
        assert_eq!(count, n);
        assert_eq!(&streamed, v);
    }
    let st = lob::check_unit(&db, au, ptrs.iter().map(|(p, _)| *p)).expect("check_unit");
    assert_eq!(st.values, SIZES.len() as u64);
    assert_eq!(st.data_bytes, SIZES.iter().sum::<usize>() as u64);
}

#[test]
fn small_values_share_text_pages() {
    let fs = MemFs::new();
    let db = create_db(&fs, 256);
    let au = lob::create_unit(&db, 51, 1).expect("unit").id;
    let ptrs: Vec<LobPointer> = (0..30).map(|k| lob::write(&db, au, &value(200, k)).expect("write")).collect();
    assert_eq!(db.alloc_unit_pages(au).expect("pages").len(), 1, "30 values of 200 bytes fit one TEXT_MIX page");
    let page = db.read(ptrs[0].root.page_id()).expect("read page");
    assert_eq!(page.page_type(), Some(PageType::TextMix));
    drop(page);
    for (k, p) in ptrs.iter().enumerate() {
        assert_eq!(lob::read(&db, *p).expect("read"), value(200, k as u32));
    }
    // The tail of a large value shares a page with small values too.
    let big = lob::write(&db, au, &value(3 * MAX_FRAGMENT + 100, 9)).expect("write big");
    assert_eq!(lob::read(&db, big).expect("read big"), value(3 * MAX_FRAGMENT + 100, 9));
    lob::check_unit(&db, au, ptrs.iter().copied().chain([big])).expect("check_unit");
}

#[test]
fn delete_frees_pages_for_reuse() {
    let fs = MemFs::new();
    let db = create_db(&fs, 2048);
    let au = lob::create_unit(&db, 52, 1).expect("unit").id;
    let keep = lob::write(&db, au, b"a small value that stays").expect("write");
    let v = value(5 * 1024 * 1024, 1);
    let p = lob::write(&db, au, &v).expect("write");
    let pages_with = db.alloc_unit_pages(au).expect("pages").len();
    assert!(pages_with > 600);
    let file_pages = db.files().get(1).expect("file").size_pages();
    lob::delete(&db, p).expect("delete");
    assert_eq!(db.alloc_unit_pages(au).expect("pages").len(), 1, "only the small value's page is left");
    assert_eq!(lob::read(&db, keep).expect("read kept"), b"a small value that stays");
    lob::check_unit(&db, au, [keep]).expect("check_unit after delete");
    // Writing the same amount again reuses the freed pages: the file does not grow.
    for round in 0..3 {
        let p = lob::write(&db, au, &v).expect("rewrite");
        assert_eq!(lob::read_range(&db, p, 4_000_000, 10).expect("read"), &v[4_000_000..4_000_010]);
        lob::delete(&db, p).expect("delete again");
        assert_eq!(db.files().get(1).expect("file").size_pages(), file_pages, "round {round}");
    }
    // Deleting small values frees their shared page once the last one goes.
    let smalls: Vec<LobPointer> = (0..5).map(|k| lob::write(&db, au, &value(50, k)).expect("write")).collect();
    for s in &smalls {
        lob::delete(&db, *s).expect("delete small");
    }
    lob::delete(&db, keep).expect("delete kept");
    assert_eq!(db.alloc_unit_pages(au).expect("pages").len(), 0);
    lob::check_unit(&db, au, []).expect("empty unit");
}

#[test]
fn rejects_wrong_units_and_bad_pointers() {
    let fs = MemFs::new();
    let db = create_db(&fs, 256);
    let data_au = db.create_alloc_unit(storage::AllocUnitKind::InRowData, 53, 0).expect("unit").id;
    assert!(matches!(lob::write(&db, data_au, b"x"), Err(storage::StorageError::Invalid(_))));
    let au = lob::create_unit(&db, 53, 1).expect("unit").id;
    let p = lob::write(&db, au, &value(20_000, 3)).expect("write");
    // A pointer at the wrong slot or with the wrong length is damage, never a panic.
    let wrong_slot = LobPointer { root: storage::record::Rid { slot: p.root.slot + 40, ..p.root }, ..p };
    assert!(matches!(lob::read(&db, wrong_slot), Err(storage::StorageError::Corrupt { .. })));
    let wrong_len = LobPointer { total_len: 19_999, ..p };
    assert!(matches!(lob::read(&db, wrong_len), Err(storage::StorageError::Corrupt { .. })));
    assert!(matches!(lob::read_range(&db, wrong_len, 0, 10), Err(storage::StorageError::Corrupt { .. })));
    assert!(matches!(
        lob::check(&db, LobPointer { total_len: u32::MAX as u64, ..p }),
        Err(storage::StorageError::Corrupt { .. })
    ));
    let far = LobPointer { root: storage::record::Rid { file_id: 1, page_no: 40_000_000, slot: 0 }, ..p };
    assert!(matches!(lob::read(&db, far), Err(storage::StorageError::Corrupt { .. })));
    assert!(matches!(lob::delete(&db, far), Err(storage::StorageError::Corrupt { .. })));
    let system_page = LobPointer { root: storage::record::Rid { file_id: 1, page_no: 1, slot: 0 }, ..p };
    assert!(matches!(lob::read(&db, system_page), Err(storage::StorageError::Corrupt { .. })));
    assert_eq!(lob::read(&db, p).expect("read"), value(20_000, 3));
}

#[test]
fn reopen_keeps_values() {
    let fs = MemFs::new();
    let db = create_db(&fs, 2048);
    let pool = Arc::clone(db.pool());
    let au = lob::create_unit(&db, 54, 1).expect("unit").id;
    let mut ptrs = Vec::new();
    for (k, &n) in SIZES.iter().enumerate() {
        ptrs.push((lob::write(&db, au, &value(n, k as u32)).expect("write"), k, n));
    }
    let db_id = db.id;
    db.close().expect("close");
    drop(db);
    let db = Database::open(pool, &fs, db_id, Path::new(PATH)).expect("open");
    for &(p, k, n) in &ptrs {
        assert_eq!(lob::read(&db, p).expect("read after reopen"), value(n, k as u32));
    }
    lob::check_unit(&db, au, ptrs.iter().map(|x| x.0)).expect("check_unit after reopen");
    for &(p, _, _) in &ptrs {
        lob::delete(&db, p).expect("delete after reopen");
    }
    assert_eq!(db.alloc_unit_pages(au).expect("pages").len(), 0);
}

#[test]
fn concurrent_writers_readers_and_deleters() {
    let fs = MemFs::new();
    let db = create_db(&fs, 4096);
    let au = lob::create_unit(&db, 55, 1).expect("unit").id;
    let threads: Vec<_> = (0..4u32)
        .map(|t| {
            let db = Arc::clone(&db);
            std::thread::spawn(move || {
                let mut kept = Vec::new();
                for k in 0..150u32 {
                    let seed = t * 1000 + k;
                    let n = [10, 700, 3000, 9000, 20_000][(seed % 5) as usize];
                    let v = value(n, seed);
                    let p = lob::write(&db, au, &v).expect("concurrent write");
                    assert_eq!(lob::read(&db, p).expect("concurrent read"), v);
                    if k % 3 == 0 {
                        lob::delete(&db, p).expect("concurrent delete");
                    } else {
                        kept.push((p, v));
                    }
                }
                kept
            })
        })
        .collect();
    let mut all = Vec::new();
    for t in threads {
        all.extend(t.join().expect("thread"));
    }
    for (p, v) in &all {
        assert_eq!(&lob::read(&db, *p).expect("read"), v);
    }
    let st = lob::check_unit(&db, au, all.iter().map(|x| x.0)).expect("check_unit");
    assert_eq!(st.values as usize, all.len());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random writes, deletes and range reads against a list of live values; the unit
    /// checks out at the end and emptied pages are gone.
    #[test]
    fn lob_matches_model(ops in prop::collection::vec((0usize..40_000, any::<u16>(), any::<u32>(), 0u8..4), 1..40)) {
        let fs = MemFs::new();
        let db = create_db(&fs, 1024);
        let au = lob::create_unit(&db, 56, 1).expect("unit").id;
        let mut live: Vec<(LobPointer, Vec<u8>)> = Vec::new();
        for (k, (len, pick, off, action)) in ops.into_iter().enumerate() {
            match action {
                0 | 1 => {
                    let v = value(len, k as u32);
                    let p = lob::write(&db, au, &v).expect("write");
                    live.push((p, v));
                }
                2 if !live.is_empty() => {
                    let (p, _) = live.swap_remove(pick as usize % live.len());
                    lob::delete(&db, p).expect("delete");
                }
                _ if !live.is_empty() => {
                    let (p, v) = &live[pick as usize % live.len()];
                    let off = off as u64 % (v.len() as u64 + 10);
                    let want = len as u64;
                    let lo = off.min(v.len() as u64) as usize;
                    let hi = (off + want).min(v.len() as u64) as usize;
                    prop_assert_eq!(lob::read_range(&db, *p, off, want).expect("read_range"), &v[lo..hi]);
                }
                _ => {}
            }
        }
        lob::check_unit(&db, au, live.iter().map(|x| x.0)).expect("check_unit");
        for (p, v) in &live {
            prop_assert_eq!(&lob::read(&db, *p).expect("read"), v);
            lob::delete(&db, *p).expect("delete");
        }
        prop_assert_eq!(db.alloc_unit_pages(au).expect("pages").len(), 0);
    }
}
