//! Heap properties: random insert/update/delete/get/scan sequences against a model,
//! forwarding (RIDs stay valid, one hop, no orphans), reopen, and concurrent use.

use proptest::prelude::*;
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;
use storage::file::{FileGrowth, FileSpec};
use storage::heap::Heap;
use storage::io::MemFs;
use storage::record::{encode_record, ColumnLayout, ColumnValue, RecordType, Rid, RowLayout};
use storage::{BufferPool, Database};

/// Each test gets its own database id: file statistics are registered per (db, file).
static NEXT_DB: AtomicU16 = AtomicU16::new(100);

const PATH: &str = "/data/heap.mdf";

fn create_db(fs: &MemFs, pool_pages: usize) -> Arc<Database> {
    let spec = FileSpec {
        file_id: 1,
        name: "heap".into(),
        path: PATH.into(),
        size_pages: 256,
        growth: FileGrowth::Pages(256),
        max_pages: None,
    };
    let id = NEXT_DB.fetch_add(1, Ordering::Relaxed);
    Database::create(BufferPool::new(pool_pages), fs, id, "heap", vec![spec]).expect("create database")
}

/// Rows of a table (id int NOT NULL, payload varbinary(8000) NULL).
fn layout() -> RowLayout {
    RowLayout::new(vec![ColumnLayout::fixed(4), ColumnLayout::variable().with_nullable()]).expect("layout")
}

/// Rows of a table (flag tinyint NOT NULL): 7-byte records, shorter than a stub.
fn tiny_layout() -> RowLayout {
    RowLayout::new(vec![ColumnLayout::fixed(1)]).expect("layout")
}

/// A row whose payload is `len` copies of one byte derived from `id` and `version`, so
/// a reader can tell a whole row from a torn one. `len == usize::MAX` means NULL.
fn make_row(layout: &RowLayout, id: u32, version: u32, len: usize) -> Vec<u8> {
    let payload = vec![(id ^ version.wrapping_mul(31)) as u8; if len == usize::MAX { 0 } else { len }];
    let id_bytes = id.to_le_bytes();
    let values = [
        ColumnValue::Inline(&id_bytes),
        if len == usize::MAX { ColumnValue::Null } else { ColumnValue::Inline(&payload) },
    ];
    let mut out = Vec::new();
    encode_record(layout, RecordType::Primary, &values, &mut out).expect("encode");
    out
}

fn make_tiny(flag: u8) -> Vec<u8> {
    let mut out = Vec::new();
    encode_record(&tiny_layout(), RecordType::Primary, &[ColumnValue::Inline(&[flag])], &mut out).expect("encode");
    out
}

/// Checks the heap against the model: structure, scan (each row exactly once), get.
fn verify(heap: &Heap, model: &HashMap<Rid, Vec<u8>>) -> Result<(), TestCaseError> {
    let stats = heap.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
    prop_assert_eq!(stats.rows as usize, model.len());
    prop_assert_eq!(stats.forwarded_records, heap.forwarded_count().expect("forwarded_count"));
    prop_assert_eq!(stats.empty_pages, 0, "emptied pages are freed");
    let mut seen: HashMap<Rid, Vec<u8>> = HashMap::new();
    let mut dup = None;
    heap.scan(|rid, row| {
        if seen.insert(rid, row.to_vec()).is_some() {
            dup = Some(rid);
        }
        true
    })
    .expect("scan");
    prop_assert_eq!(dup, None, "scan returned a row twice");
    prop_assert_eq!(&seen, model);
    for (rid, row) in model {
        let got = heap.get(*rid).expect("get");
        prop_assert_eq!(got.as_ref(), Some(row), "get {}", rid);
        let len = heap.with_row(*rid, |r| r.len()).expect("with_row");
        prop_assert_eq!(len, Some(row.len()));
    }
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    /// Insert a row with a payload of this length (`tiny`: a 7-byte row instead).
    Insert {
        len: usize,
        tiny: bool,
    },
    /// Update the `i`-th live row (modulo) to a payload of this length.
    Update {
        i: usize,
        len: usize,
    },
    Delete {
        i: usize,
    },
    Get {
        i: usize,
    },
    /// Remove one ghost (as after the deleting transaction commits).
    RemoveGhost {
        i: usize,
    },
    /// Remove every ghost.
    Cleanup,
    Verify,
}

/// Payload lengths: mostly small, some medium, some near the maximum (forcing
/// forwarding), some NULL.
fn len_strategy() -> impl Strategy<Value = usize> {
    prop_oneof![
        4 => 0usize..64,
        3 => 64usize..1500,
        2 => 1500usize..=8000,
        1 => Just(usize::MAX),
    ]
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (len_strategy(), prop::bool::weighted(0.1)).prop_map(|(len, tiny)| Op::Insert { len, tiny }),
        5 => (any::<usize>(), len_strategy()).prop_map(|(i, len)| Op::Update { i, len }),
        2 => any::<usize>().prop_map(|i| Op::Delete { i }),
        1 => any::<usize>().prop_map(|i| Op::Get { i }),
        1 => any::<usize>().prop_map(|i| Op::RemoveGhost { i }),
        1 => Just(Op::Cleanup),
        1 => Just(Op::Verify),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// The heap behaves like a map from RID to row: RIDs never change, forwarding is
    /// invisible to callers, deleted rows stay ghosts (their slots are not reused) until
    /// their ghosts are removed, and the structure checks out after every step.
    #[test]
    fn heap_matches_model(ops in prop::collection::vec(op_strategy(), 1..120)) {
        let fs = MemFs::new();
        let db = create_db(&fs, 1024);
        let heap = Heap::create(&db, 77).expect("heap");
        let layout = layout();
        let mut model: HashMap<Rid, Vec<u8>> = HashMap::new();
        let mut deleted: Vec<Rid> = Vec::new();
        // Deleted rows whose ghosts are still there.
        let mut ghosts: Vec<Rid> = Vec::new();
        let mut version = 0u32;
        let pick = |model: &HashMap<Rid, Vec<u8>>, i: usize| -> Option<Rid> {
            let mut keys: Vec<Rid> = model.keys().copied().collect();
            keys.sort();
            (!keys.is_empty()).then(|| keys[i % keys.len()])
        };
        for op in ops {
            version += 1;
            match op {
                Op::Insert { len, tiny } => {
                    let row = if tiny { make_tiny(version as u8) } else { make_row(&layout, version, version, len) };
                    let rid = heap.insert(&row).expect("insert");
                    prop_assert!(!model.contains_key(&rid), "insert reused a live RID {}", rid);
                    prop_assert!(!ghosts.contains(&rid), "insert reused a ghost's RID {}", rid);
                    model.insert(rid, row);
                    deleted.retain(|r| *r != rid);
                }
                Op::Update { i, len } => {
                    if let Some(rid) = pick(&model, i) {
                        let row = make_row(&layout, version, version, len);
                        prop_assert!(heap.update(rid, &row).expect("update"));
                        model.insert(rid, row);
                    }
                }
                Op::Delete { i } => {
                    if let Some(rid) = pick(&model, i) {
                        prop_assert!(heap.delete(rid).expect("delete"));
                        model.remove(&rid);
                        deleted.push(rid);
                        ghosts.push(rid);
                    }
                }
                Op::RemoveGhost { i } => {
                    if !ghosts.is_empty() {
                        let rid = ghosts.remove(i % ghosts.len());
                        prop_assert!(heap.remove_ghost(rid).expect("remove ghost"));
                        prop_assert!(!heap.remove_ghost(rid).expect("remove ghost again"));
                    }
                }
                Op::Cleanup => {
                    let n = heap.cleanup_ghosts().expect("cleanup");
                    prop_assert_eq!(n as usize, ghosts.len());
                    ghosts.clear();
                }
                Op::Get { i } => {
                    if let Some(rid) = pick(&model, i) {
                        let got = heap.get(rid).expect("get");
                        prop_assert_eq!(got.as_ref(), model.get(&rid));
                    }
                    // Deleted RIDs (not reused since) read as no row and cannot be changed.
                    for rid in &deleted {
                        prop_assert_eq!(heap.get(*rid).expect("get deleted"), None);
                    }
                    if let Some(rid) = deleted.first() {
                        prop_assert!(!heap.update(*rid, &make_tiny(1)).expect("update deleted"));
                        prop_assert!(!heap.delete(*rid).expect("delete deleted"));
                    }
                }
                Op::Verify => verify(&heap, &model)?,
            }
            let st = heap.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
            prop_assert_eq!(st.ghost_records as usize, ghosts.len());
        }
        verify(&heap, &model)?;
        // Deleting everything and removing the ghosts frees every page.
        let rids: Vec<Rid> = model.keys().copied().collect();
        for rid in rids {
            prop_assert!(heap.delete(rid).expect("delete all"));
        }
        heap.cleanup_ghosts().expect("cleanup");
        prop_assert_eq!(heap.page_count().expect("pages"), 0);
        let mut n = 0;
        heap.scan(|_, _| { n += 1; true }).expect("scan");
        prop_assert_eq!(n, 0);
    }
}

/// Grow a row again and again: it stays one hop away, its RID never changes, and the old
/// forwarded copies do not pile up.
#[test]
fn repeated_growth_keeps_one_hop() {
    let fs = MemFs::new();
    let db = create_db(&fs, 512);
    let heap = Heap::create(&db, 5).expect("heap");
    let layout = layout();
    // Fill pages with medium rows so growth has to move rows around.
    let rids: Vec<Rid> = (0..200).map(|i| heap.insert(&make_row(&layout, i, 0, 300)).expect("insert")).collect();
    let target = rids[17];
    for v in 1..60u32 {
        let len = [500, 2000, 7000, 8000, 100, 4000][v as usize % 6];
        let row = make_row(&layout, 17, v, len);
        assert!(heap.update(target, &row).expect("update"));
        assert_eq!(heap.get(target).expect("get"), Some(row));
        let st = heap.check().expect("check");
        assert!(st.forwarded_records <= 1, "one row has at most one forwarded record");
        assert_eq!(st.rows, 200);
    }
    // Early stop of a scan.
    let mut n = 0;
    assert!(!heap
        .scan(|_, _| {
            n += 1;
            n < 10
        })
        .expect("scan"));
    assert_eq!(n, 10);
}

/// Rows written, the database closed and opened again: the same rows at the same RIDs.
#[test]
fn reopen_keeps_rows() {
    let fs = MemFs::new();
    let db = create_db(&fs, 512);
    let pool = Arc::clone(db.pool());
    let heap = Heap::create(&db, 9).expect("heap");
    let layout = layout();
    let mut model = HashMap::new();
    for i in 0..300u32 {
        let row = make_row(&layout, i, 0, (i as usize * 37) % 900);
        model.insert(heap.insert(&row).expect("insert"), row);
    }
    // Forward some rows and delete some.
    let rids: Vec<Rid> = {
        let mut k: Vec<Rid> = model.keys().copied().collect();
        k.sort();
        k
    };
    for (n, rid) in rids.iter().enumerate() {
        if n % 7 == 0 {
            let row = make_row(&layout, n as u32, 1, 6000);
            heap.update(*rid, &row).expect("update");
            model.insert(*rid, row);
        } else if n % 11 == 0 {
            heap.delete(*rid).expect("delete");
            model.remove(rid);
        }
    }
    let forwarded = heap.forwarded_count().expect("forwarded");
    assert!(forwarded > 0);
    let au = heap.au_id();
    let db_id = db.id;
    drop(heap);
    db.close().expect("close");
    drop(db);
    let db = Database::open(pool, &fs, db_id, Path::new(PATH)).expect("open");
    let heap = Heap::open(&db, au).expect("open heap");
    let st = heap.check().expect("check");
    assert_eq!(st.rows as usize, model.len());
    assert_eq!(st.forwarded_records, forwarded);
    let mut seen = HashMap::new();
    heap.scan(|rid, row| seen.insert(rid, row.to_vec()).is_none()).expect("scan");
    assert_eq!(seen, model);
    // Still writable after the reopen.
    let rid = heap.insert(&make_row(&layout, 999, 0, 10)).expect("insert after reopen");
    assert!(!model.contains_key(&rid));
    heap.check().expect("check");
}

/// Inserters, updaters growing and shrinking their own rows (forwarding and moving back),
/// and a scanner, all at once. The scanner never errors, never sees a RID twice in one
/// scan, and never sees a torn row; at the end the heap holds exactly the expected rows.
#[test]
fn concurrent_inserts_updates_and_scans() {
    const INSERTERS: u32 = 3;
    const PER_INSERTER: u32 = 1500;
    const UPDATERS: u32 = 2;
    const OWNED: u32 = 40;
    let fs = MemFs::new();
    let db = create_db(&fs, 2048);
    let heap = Arc::new(Heap::create(&db, 11).expect("heap"));
    let layout = Arc::new(layout());
    // Rows the updaters own, inserted up front; ids from 1_000_000 up.
    let mut owned: Vec<Vec<Rid>> = Vec::new();
    for u in 0..UPDATERS {
        owned.push(
            (0..OWNED)
                .map(|k| {
                    let id = 1_000_000 + u * OWNED + k;
                    heap.insert(&make_row(&layout, id, 0, 200)).expect("insert")
                })
                .collect(),
        );
    }
    let done = Arc::new(AtomicBool::new(false));
    let row_ok = |row: &[u8]| -> bool {
        // id (4 bytes at offset 4), then a payload of one repeated byte.
        let payload_ok = row.len() < 15 || row[15..].windows(2).all(|w| w[0] == w[1]);
        row.len() >= 8 && payload_ok
    };
    let scanner = {
        let heap = Arc::clone(&heap);
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut scans = 0;
            while !done.load(Ordering::Acquire) || scans < 2 {
                let mut seen = HashSet::new();
                heap.scan(|rid, row| {
                    assert!(seen.insert(rid), "RID {rid} returned twice in one scan");
                    assert!(row_ok(row), "torn row at {rid}");
                    true
                })
                .expect("concurrent scan");
                scans += 1;
            }
            scans
        })
    };
    let mut workers = Vec::new();
    for t in 0..INSERTERS {
        let heap = Arc::clone(&heap);
        let layout = Arc::clone(&layout);
        workers.push(std::thread::spawn(move || {
            let mut mine = HashMap::new();
            for k in 0..PER_INSERTER {
                let id = t * PER_INSERTER + k;
                let row = make_row(&layout, id, 0, (id as usize * 13) % 700);
                let rid = heap.insert(&row).expect("concurrent insert");
                mine.insert(rid, row);
            }
            mine
        }));
    }
    for (u, rids) in owned.into_iter().enumerate() {
        let heap = Arc::clone(&heap);
        let layout = Arc::clone(&layout);
        workers.push(std::thread::spawn(move || {
            let mut mine = HashMap::new();
            for v in 1..=25u32 {
                for (k, rid) in rids.iter().enumerate() {
                    let id = 1_000_000 + u as u32 * OWNED + k as u32;
                    let len = [3000, 50, 7800, 400, 6000][(v as usize + k) % 5];
                    let row = make_row(&layout, id, v, len);
                    assert!(heap.update(*rid, &row).expect("concurrent update"));
                    assert_eq!(heap.get(*rid).expect("concurrent get").as_ref(), Some(&row));
                    mine.insert(*rid, row);
                }
            }
            mine
        }));
    }
    let mut expected = HashMap::new();
    for w in workers {
        expected.extend(w.join().expect("worker"));
    }
    done.store(true, Ordering::Release);
    let scans = scanner.join().expect("scanner");
    assert!(scans >= 2);
    let st = heap.check().expect("check");
    assert_eq!(st.rows as usize, expected.len());
    let mut seen = HashMap::new();
    heap.scan(|rid, row| seen.insert(rid, row.to_vec()).is_none()).expect("scan");
    assert_eq!(seen.len(), expected.len());
    assert!(seen == expected, "final contents differ");
}
