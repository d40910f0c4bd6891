//! B+tree properties: random operation sequences against a `BTreeMap` model (unique and
//! non-unique trees, keys of 1-300 bytes, values of 0-3000 bytes so pages split and merge
//! at varied fill), sequential fill, concurrent writers and scanners, reopen, and damaged
//! pages (reported as corruption, never a panic).

use proptest::prelude::*;
use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU16, Ordering};
use std::sync::Arc;
use std::time::Instant;
use storage::btree::{split_uniquifier, stored_key, BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, MemFs};
use storage::{BufferPool, Database, PageId, StorageError};

/// Each test gets its own database id: file statistics are registered per (db, file).
static NEXT_DB: AtomicU16 = AtomicU16::new(30_000);

const PATH: &str = "/data/btree.mdf";

fn create_db(fs: &dyn FileSystem, pool_pages: usize) -> Arc<Database> {
    let spec = FileSpec {
        file_id: 1,
        name: "btree".into(),
        path: PATH.into(),
        size_pages: 256,
        growth: FileGrowth::Pages(2048),
        max_pages: None,
    };
    let id = NEXT_DB.fetch_add(1, Ordering::Relaxed);
    Database::create(BufferPool::new(pool_pages), fs, id, "btree", vec![spec]).expect("create database")
}

fn value(seed: u8, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31) ^ seed).collect()
}

fn contents(t: &BTree) -> Vec<(Vec<u8>, Vec<u8>)> {
    t.range(Unbounded, Unbounded).collect::<Result<Vec<_>, _>>().expect("scan")
}

fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    b.as_ref().map(|v| &v[..])
}

/// BTreeMap::range panics on inverted bounds; the tree yields nothing.
fn model_range(m: &BTreeMap<Vec<u8>, Vec<u8>>, lo: &Bound<Vec<u8>>, hi: &Bound<Vec<u8>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    if let (Included(a) | Excluded(a), Included(b) | Excluded(b)) = (lo, hi) {
        if a > b || (a == b && !(matches!(lo, Included(_)) && matches!(hi, Included(_)))) {
            return Vec::new();
        }
    }
    m.range((lo.clone(), hi.clone())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[derive(Debug, Clone)]
enum Op {
    /// Insert a new random key.
    Insert(Vec<u8>, usize, u8),
    /// Insert a key that exists (by index into the model; a duplicate for unique trees).
    InsertExisting(usize, usize, u8),
    Update(usize, usize, u8),
    Delete(usize),
    DeleteMissing(Vec<u8>),
    Get(Vec<u8>),
    Range(Vec<u8>, Vec<u8>, u8),
    /// Insert `count` keys `prefix || i` (deep trees: long prefixes make long separators).
    Bulk(Vec<u8>, u16, usize),
    /// Delete every entry in a key range (cascading merges).
    DeleteRange(Vec<u8>, Vec<u8>),
}

fn key_strategy(max_len: usize) -> impl Strategy<Value = Vec<u8>> {
    // A small alphabet gives shared prefixes (suffix truncation, non-prefix-free keys).
    prop_oneof![
        2 => prop::collection::vec(0u8..3, 1..max_len),
        1 => prop::collection::vec(any::<u8>(), 1..max_len),
    ]
}

fn value_len() -> impl Strategy<Value = usize> {
    prop_oneof![3 => 0usize..200, 2 => 0usize..3000]
}

fn op_strategy(max_key: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (key_strategy(max_key), value_len(), any::<u8>()).prop_map(|(k, l, s)| Op::Insert(k, l, s)),
        1 => (any::<usize>(), value_len(), any::<u8>()).prop_map(|(i, l, s)| Op::InsertExisting(i, l, s)),
        2 => (any::<usize>(), value_len(), any::<u8>()).prop_map(|(i, l, s)| Op::Update(i, l, s)),
        3 => any::<usize>().prop_map(Op::Delete),
        1 => key_strategy(max_key).prop_map(Op::DeleteMissing),
        1 => key_strategy(max_key).prop_map(Op::Get),
        1 => (key_strategy(max_key), key_strategy(max_key), any::<u8>()).prop_map(|(a, b, s)| Op::Range(a, b, s)),
        1 => (key_strategy(max_key), 1u16..400, 0usize..120).prop_map(|(k, n, l)| Op::Bulk(k, n, l)),
        1 => (key_strategy(max_key), key_strategy(max_key)).prop_map(|(a, b)| Op::DeleteRange(a, b)),
    ]
}

fn bound(sel: u8, k: Vec<u8>) -> Bound<Vec<u8>> {
    match sel % 3 {
        0 => Unbounded,
        1 => Included(k),
        _ => Excluded(k),
    }
}

/// Checks the tree against the model: structure, contents, both scan directions.
fn verify(t: &BTree, model: &BTreeMap<Vec<u8>, Vec<u8>>) -> Result<(), TestCaseError> {
    let stats = t.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
    prop_assert_eq!(stats.entries as usize, model.len());
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    prop_assert_eq!(&contents(t), &want);
    let mut rev = t.range_rev(Unbounded, Unbounded).collect::<Result<Vec<_>, _>>().expect("reverse scan");
    rev.reverse();
    prop_assert_eq!(&rev, &want);
    prop_assert_eq!(t.count().expect("count") as usize, model.len());
    Ok(())
}

/// Runs `ops` on a unique tree or a non-unique one (where the model holds stored keys).
fn run_ops(unique: bool, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let db = create_db(&MemFs::new(), 1024);
    let t = BTree::create(&db, 11, if unique { 2 } else { 1 }, BTreeOptions { unique }).expect("create");
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let nth = |m: &BTreeMap<Vec<u8>, Vec<u8>>, i: usize| m.keys().nth(i % m.len().max(1)).cloned();
    for (n, op) in ops.into_iter().enumerate() {
        match op {
            Op::Insert(k, len, seed) => {
                let v = value(seed, len);
                match t.insert(&k, &v) {
                    Ok(None) if unique => {
                        prop_assert!(model.insert(k, v).is_none());
                    }
                    Err(StorageError::DuplicateKey) if unique => {
                        prop_assert!(model.contains_key(&k))
                    }
                    Ok(Some(u)) if !unique => {
                        // max + 1 over this key's duplicates, or 0.
                        let lo = stored_key(&k, 0);
                        let hi = stored_key(&k, u32::MAX);
                        let expect = model
                            .range(lo..=hi)
                            .filter_map(|(s, _)| split_uniquifier(s).filter(|(b, _)| *b == &k[..]).map(|(_, u)| u + 1))
                            .max()
                            .unwrap_or(0);
                        prop_assert_eq!(u, expect);
                        prop_assert!(model.insert(stored_key(&k, u), v).is_none());
                    }
                    other => return Err(TestCaseError::fail(format!("insert: {other:?}"))),
                }
            }
            Op::InsertExisting(i, len, seed) => {
                let Some(stored) = nth(&model, i) else {
                    continue;
                };
                let v = value(seed, len);
                if unique {
                    prop_assert!(matches!(t.insert(&stored, &v), Err(StorageError::DuplicateKey)));
                } else {
                    let (base, _) = split_uniquifier(&stored).expect("stored key");
                    let base = base.to_vec();
                    let u = t.insert(&base, &v).expect("insert duplicate").expect("uniquifier");
                    prop_assert!(model.insert(stored_key(&base, u), v).is_none());
                }
            }
            Op::Update(i, len, seed) => {
                let Some(k) = nth(&model, i) else { continue };
                let v = value(seed, len);
                prop_assert!(t.update(&k, &v).expect("update"));
                model.insert(k, v);
            }
            Op::Delete(i) => {
                let Some(k) = nth(&model, i) else { continue };
                prop_assert!(t.delete(&k).expect("delete"));
                model.remove(&k);
            }
            Op::DeleteMissing(k) => {
                let existed = model.remove(&k).is_some();
                prop_assert_eq!(t.delete(&k).expect("delete"), existed);
            }
            Op::Get(k) => {
                prop_assert_eq!(t.get(&k).expect("get"), model.get(&k).cloned());
            }
            Op::Range(a, b, sel) => {
                let lo = bound(sel, a);
                let hi = bound(sel / 3, b);
                let want = model_range(&model, &lo, &hi);
                let got = t.range(as_ref(&lo), as_ref(&hi)).collect::<Result<Vec<_>, _>>().expect("range");
                prop_assert_eq!(&got, &want);
                let mut rev = t.range_rev(as_ref(&lo), as_ref(&hi)).collect::<Result<Vec<_>, _>>().expect("range_rev");
                rev.reverse();
                prop_assert_eq!(&rev, &want);
                let mut scanned = 0usize;
                t.scan(as_ref(&lo), as_ref(&hi), |k, v| {
                    scanned += (want.get(scanned).is_some_and(|(wk, wv)| wk == k && wv == v)) as usize;
                    true
                })
                .expect("scan");
                prop_assert_eq!(scanned, want.len());
            }
            Op::Bulk(prefix, count, len) => {
                for i in 0..count {
                    let mut k = prefix.clone();
                    k.extend_from_slice(&i.to_be_bytes());
                    let v = value(i as u8, len);
                    match t.insert(&k, &v) {
                        Ok(None) => prop_assert!(model.insert(k, v).is_none()),
                        Ok(Some(u)) => prop_assert!(model.insert(stored_key(&k, u), v).is_none()),
                        Err(StorageError::DuplicateKey) => {
                            prop_assert!(unique && model.contains_key(&k))
                        }
                        Err(e) => return Err(TestCaseError::fail(format!("bulk insert: {e}"))),
                    }
                }
            }
            Op::DeleteRange(a, b) => {
                let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                let doomed: Vec<Vec<u8>> = model.range(lo..=hi).map(|(k, _)| k.clone()).collect();
                for k in doomed {
                    prop_assert!(t.delete(&k).expect("delete"));
                    model.remove(&k);
                }
            }
        }
        if n % 25 == 24 {
            verify(&t, &model)?;
        }
    }
    verify(&t, &model)?;
    // Deleting everything leaves a single empty root leaf.
    for k in model.keys() {
        prop_assert!(t.delete(k).expect("delete"));
    }
    let s = t.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
    prop_assert_eq!((s.levels, s.entries, s.pages()), (1, 0, 1));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn btree_unique_tree_matches_model(ops in prop::collection::vec(op_strategy(300), 1..400)) {
        run_ops(true, ops)?;
    }

    #[test]
    fn btree_non_unique_tree_matches_model(ops in prop::collection::vec(op_strategy(6), 1..400)) {
        run_ops(false, ops)?;
    }

    #[test]
    fn btree_non_unique_long_keys_match_model(ops in prop::collection::vec(op_strategy(300), 1..300)) {
        run_ops(false, ops)?;
    }
}

#[test]
fn btree_sequential_inserts_leave_pages_full() {
    let db = create_db(&MemFs::new(), 8192);
    let t = BTree::create(&db, 12, 1, BTreeOptions { unique: true }).expect("create");
    for i in 0..200_000u64 {
        t.insert(&i.to_be_bytes(), &value(i as u8, 60)).expect("insert");
    }
    let s = t.check().expect("check");
    assert_eq!(s.entries, 200_000);
    assert!(s.leaf_fill() > 0.9, "leaf fill {:.3} ({s:?})", s.leaf_fill());
    // Descending inserts split in the middle: still a valid, if emptier, tree.
    let t2 = BTree::create(&db, 13, 2, BTreeOptions { unique: true }).expect("create");
    for i in (0..20_000u64).rev() {
        t2.insert(&i.to_be_bytes(), &value(i as u8, 60)).expect("insert");
    }
    let s2 = t2.check().expect("check");
    assert!(s2.leaf_fill() > 0.45, "leaf fill {:.3}", s2.leaf_fill());
}

/// Is `k` after the previous key `last` (if any)?
fn in_order(last: &Option<Vec<u8>>, k: &[u8]) -> bool {
    match last {
        Some(l) => &l[..] < k,
        None => true,
    }
}

/// Is `k` before the previous key `last` (if any)?
fn in_reverse_order(last: &Option<Vec<u8>>, k: &[u8]) -> bool {
    match last {
        Some(l) => k < &l[..],
        None => true,
    }
}

/// Writer `w`'s keys (`k % 4 == w`) in its scrambled insert order.
fn scrambled_keys(w: u64, per_thread: u64) -> Vec<u64> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ w;
    let mut keys: Vec<u64> = (0..per_thread).map(|i| i * 4 + w).collect();
    for i in (1..keys.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        keys.swap(i, (x % (i as u64 + 1)) as usize);
    }
    keys
}

/// Writers inserting in random order (leaf splits at every point, in shared mode) and
/// deleting (merges) while scanners walk the tree three ways: every walk is in order,
/// and returns every key that was in the tree for good before it started.
#[test]
fn btree_concurrent_writers_and_scanners() {
    let db = create_db(&MemFs::new(), 4096);
    let t = BTree::create(&db, 14, 2, BTreeOptions { unique: true }).expect("create");
    const PER_THREAD: u64 = 15_000;
    let done = Arc::new(AtomicBool::new(false));
    // Steps each writer has finished: its keys at positions below that, other than
    // those at `i % 3 == 1` (deleted one step later), are in the tree for good.
    let progress: Arc<Vec<std::sync::atomic::AtomicUsize>> =
        Arc::new((0..4).map(|_| std::sync::atomic::AtomicUsize::new(0)).collect());
    let orders: Arc<Vec<Vec<u64>>> = Arc::new((0..4).map(|w| scrambled_keys(w, PER_THREAD)).collect());
    let mut scanners = Vec::new();
    for s in 0..2 {
        let t = t.clone();
        let done = done.clone();
        let (progress, orders) = (progress.clone(), orders.clone());
        scanners.push(std::thread::spawn(move || {
            let mut scans = 0u64;
            let mut missed = Vec::new();
            while !done.load(Ordering::Acquire) || scans < 3 {
                let before: Vec<usize> = progress.iter().map(|p| p.load(Ordering::Acquire)).collect();
                let mut seen = std::collections::HashSet::new();
                let mut last: Option<Vec<u8>> = None;
                if matches!((scans + s) % 3, 0) {
                    t.scan(Unbounded, Unbounded, |k, v| {
                        assert!(in_order(&last, k), "scan out of order");
                        assert_eq!(v.first(), k.last(), "value belongs to its key");
                        last = Some(k.to_vec());
                        seen.insert(k.to_vec());
                        true
                    })
                    .expect("scan");
                } else if (scans + s) % 3 == 1 {
                    let mut c = t.range(Unbounded, Unbounded);
                    while let Some((k, v)) = c.next_entry().expect("cursor") {
                        assert!(in_order(&last, k), "cursor out of order");
                        assert_eq!(v.first(), k.last());
                        last = Some(k.to_vec());
                        seen.insert(k.to_vec());
                    }
                } else {
                    for r in t.range_rev(Unbounded, Unbounded) {
                        let (k, _) = r.expect("reverse cursor");
                        assert!(in_reverse_order(&last, &k), "reverse cursor out of order");
                        seen.insert(k.clone());
                        last = Some(k);
                    }
                }
                for (w, &d) in before.iter().enumerate() {
                    for (i, k) in orders[w][..d].iter().enumerate() {
                        if i % 3 != 1 && !seen.contains(&k.to_be_bytes()[..]) {
                            missed.push((scans, *k));
                        }
                    }
                }
                scans += 1;
            }
            (scans, missed)
        }));
    }
    let mut writers = Vec::new();
    for w in 0..4u64 {
        let t = t.clone();
        let (progress, orders) = (progress.clone(), orders.clone());
        writers.push(std::thread::spawn(move || {
            // Disjoint keys (k % 4 == w), in a scrambled order, with varied value sizes.
            let keys = &orders[w as usize];
            for (n, k) in keys.iter().enumerate() {
                let kb = k.to_be_bytes();
                let len = 1 + (k % 7) as usize * (k % 97) as usize;
                t.insert(&kb, &vec![kb[7]; len]).expect("insert");
                // Delete a third again, so merges run concurrently too.
                if n % 3 == 2 {
                    let old = keys[n - 1].to_be_bytes();
                    assert!(t.delete(&old).expect("delete"));
                }
                if n % 1000 == 0 {
                    assert!(t.get(&kb).expect("get").is_some());
                }
                progress[w as usize].store(n + 1, Ordering::Release);
            }
        }));
    }
    for w in writers {
        w.join().expect("writer");
    }
    done.store(true, Ordering::Release);
    for s in scanners {
        let (scans, missed) = s.join().expect("scanner");
        assert!(scans >= 3);
        assert!(missed.is_empty(), "walks missed keys that were in the tree: {:?}", &missed[..missed.len().min(10)]);
    }
    let s = t.check().expect("check");
    assert_eq!(s.entries, 4 * (PER_THREAD - PER_THREAD / 3));
}

#[test]
fn btree_concurrent_duplicates_get_distinct_uniquifiers() {
    // A small pool: pages are evicted and re-read while other threads work.
    let db = create_db(&MemFs::new(), 200);
    let t = BTree::create(&db, 18, 1, BTreeOptions { unique: false }).expect("create");
    let threads: Vec<_> = (0..4u8)
        .map(|w| {
            let t = t.clone();
            std::thread::spawn(move || {
                let mut mine = Vec::new();
                for i in 0..1500u32 {
                    // Everybody hammers the same two keys, with rows big enough to split.
                    let key: &[u8] = if i % 2 == 0 { b"dup" } else { b"dup\0\0\0\0" };
                    let u = t.insert(key, &value(w, 200 + (i % 50) as usize)).expect("insert").expect("uniquifier");
                    mine.push((key.to_vec(), u));
                    if i % 5 == 4 {
                        let (k, u) = mine.swap_remove(mine.len() / 2);
                        assert!(t.delete(&stored_key(&k, u)).expect("delete"));
                    }
                }
                mine
            })
        })
        .collect();
    let mut all: Vec<Vec<u8>> = Vec::new();
    for h in threads {
        all.extend(h.join().expect("thread").into_iter().map(|(k, u)| stored_key(&k, u)));
    }
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(all.len(), n, "uniquifiers are distinct per key");
    let s = t.check().expect("check");
    assert_eq!(s.entries as usize, n);
    let stored: Vec<Vec<u8>> = contents(&t).into_iter().map(|(k, _)| k).collect();
    assert_eq!(stored, all);
}

#[test]
fn btree_reopen_after_close() {
    let dir =
        std::env::temp_dir().join(format!("mesquite-btree-{}-{}", std::process::id(), NEXT_DB.load(Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&dir);
    let fs = storage::io::OsFs;
    let path = dir.join("reopen.mdf");
    let spec = FileSpec {
        file_id: 1,
        name: "reopen".into(),
        path: path.clone(),
        size_pages: 256,
        growth: FileGrowth::Pages(1024),
        max_pages: None,
    };
    let id = NEXT_DB.fetch_add(1, Ordering::Relaxed);
    let mut model = BTreeMap::new();
    let (au_u, au_n) = {
        let db = Database::create(BufferPool::new(1024), &fs, id, "reopen", vec![spec]).expect("create database");
        let u = BTree::create(&db, 15, 2, BTreeOptions { unique: true }).expect("create");
        let n = BTree::create(&db, 15, 1, BTreeOptions { unique: false }).expect("create");
        for i in 0..20_000u32 {
            let k = (i.wrapping_mul(2_654_435_761)).to_be_bytes();
            u.insert(&k, &value(i as u8, (i % 300) as usize)).expect("insert");
            n.insert(&k[..2], &i.to_le_bytes()).expect("insert");
            model.insert(k.to_vec(), value(i as u8, (i % 300) as usize));
        }
        for i in (0..20_000u32).step_by(3) {
            let k = (i.wrapping_mul(2_654_435_761)).to_be_bytes();
            assert!(u.delete(&k).expect("delete"));
            model.remove(&k[..]);
        }
        db.close().expect("close");
        (u.alloc_unit_id(), n.alloc_unit_id())
    };
    let db = match Database::open(BufferPool::new(1024), &fs, id, Path::new(&path)) {
        Ok(db) => db,
        Err(e) => panic!("reopen failed: {e}"),
    };
    let u = BTree::open(&db, au_u, BTreeOptions { unique: true }).expect("open");
    let n = BTree::open(&db, au_n, BTreeOptions { unique: false }).expect("open");
    u.check().expect("check");
    assert_eq!(contents(&u), model.into_iter().collect::<Vec<_>>());
    assert_eq!(n.check().expect("check").entries, 20_000);
    // Still writable after reopen.
    u.insert(b"after", b"reopen").expect("insert");
    assert_eq!(u.get(b"after").expect("get"), Some(b"reopen".to_vec()));
    u.check().expect("check");
    db.close().expect("close");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Damaged bytes in any page of a tree make operations fail with `Corrupt` (or go
/// unnoticed when they hit unused space), never panic or loop.
mod btree_damage {
    use super::*;

    fn build() -> (Arc<Database>, BTree, Vec<PageId>) {
        let db = create_db(&MemFs::new(), 512);
        let t = BTree::create(&db, 16, 2, BTreeOptions { unique: true }).expect("create");
        for i in 0..3000u32 {
            t.insert(&(i * 7).to_be_bytes(), &value(i as u8, (i % 50) as usize)).expect("insert");
        }
        let pages = db.alloc_unit_pages(t.alloc_unit_id()).expect("pages");
        (db, t, pages)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        #[test]
        fn btree_damaged_pages_do_not_panic(
            page_pick in any::<usize>(),
            // Biased toward the header and the slot array, where damage matters most.
            hits in prop::collection::vec((prop_oneof![0usize..96, 7800usize..8192, 0usize..8192], any::<u8>()), 1..12),
            probes in prop::collection::vec(0u32..25_000, 1..40),
        ) {
            let (db, t, pages) = build();
            let victim = pages[page_pick % pages.len()];
            {
                let mut g = db.write(victim).expect("latch");
                for (at, b) in &hits {
                    g.page_mut().as_bytes_mut()[*at] = *b;
                }
            }
            let _ = t.check();
            let _ = t.count();
            let _ = t.range(Unbounded, Unbounded).take(10_000).count();
            let _ = t.range_rev(Unbounded, Unbounded).take(10_000).count();
            for p in probes {
                let k = p.to_be_bytes();
                let _ = t.get(&k);
                let _ = t.insert(&k, &value(p as u8, (p % 400) as usize));
                let _ = t.update(&k, &value(p as u8, (p % 900) as usize));
                let _ = t.delete(&(p * 7).to_be_bytes());
            }
            let _ = t.check();
        }
    }
}

/// Single-thread rates, for the record: `cargo test --release -p storage --test btree_props
/// btree_single_thread_rates -- --ignored --nocapture`.
#[test]
#[ignore = "benchmark; run in release with --ignored --nocapture"]
fn btree_single_thread_rates() {
    const N: u64 = 2_000_000;
    let db = create_db(&MemFs::new(), 80_000);
    let t = BTree::create(&db, 17, 1, BTreeOptions { unique: true }).expect("create");
    let row = vec![0x5Au8; 100];
    let start = Instant::now();
    for i in 0..N {
        t.insert(&i.to_be_bytes(), &row).expect("insert");
    }
    let ins = start.elapsed();
    let mut x = 88172645463325252u64;
    let start = Instant::now();
    let mut found = 0u64;
    for _ in 0..N {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let k = (x % N).to_be_bytes();
        found += t.get_with(&k, |v| v.len() as u64).expect("get").unwrap_or(0);
    }
    let look = start.elapsed();
    assert_eq!(found, N * 100);
    let start = Instant::now();
    let mut bytes = 0u64;
    let mut rows = 0u64;
    for _ in 0..5 {
        t.scan(Unbounded, Unbounded, |k, v| {
            bytes += (k.len() + v.len()) as u64;
            rows += 1;
            true
        })
        .expect("scan");
    }
    let scan = start.elapsed();
    let start = Instant::now();
    let mut c = t.range(Unbounded, Unbounded);
    let mut crow = 0u64;
    while let Some((_, _)) = c.next_entry().expect("cursor") {
        crow += 1;
    }
    let cur = start.elapsed();
    let s = t.check().expect("check");
    println!(
        "sequential insert: {:.0} rows/s; random lookup: {:.0} /s; scan: {:.0} rows/s, {:.2} GB/s of entries ({:.2} GB/s of pages); cursor: {:.0} rows/s; leaf fill {:.3}, levels {}",
        N as f64 / ins.as_secs_f64(),
        N as f64 / look.as_secs_f64(),
        rows as f64 / scan.as_secs_f64(),
        bytes as f64 / scan.as_secs_f64() / 1e9,
        5.0 * s.leaf_pages as f64 * 8192.0 / scan.as_secs_f64() / 1e9,
        crow as f64 / cur.as_secs_f64(),
        s.leaf_fill(),
        s.levels,
    );
}
