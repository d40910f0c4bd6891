//! Undo: system transaction brackets and row undo records as the log sees them (through a
//! recording log hook), logical rollback of random user transactions over B-trees and
//! heaps (with splits, merges, forwarding and ghosts), idempotence of every row undo,
//! physical undo of structure modifications and allocations, and the rule that no other
//! system transaction touches a page between a system transaction's first change to it
//! and its end (4 threads inserting into one B-tree).

mod support;

use proptest::prelude::*;
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound::Unbounded;
use std::sync::Arc;
use storage::btree::{stored_key, BTree, BTreeOptions};
use storage::heap::Heap;
use storage::lob;
use storage::page::PageOp;
use storage::record::{encode_record, ColumnLayout, ColumnValue, RecordType, Rid, RowLayout};
use storage::{apply_row_undo, Database, PageId, RowUndo};
use support::{content, hooked_db, txns, Kind, RecordingHook, Txn};

fn layout() -> RowLayout {
    RowLayout::new(vec![ColumnLayout::fixed(4), ColumnLayout::variable().with_nullable()]).expect("layout")
}

fn row(id: u32, len: usize) -> Vec<u8> {
    let payload = vec![(id as u8).wrapping_mul(7) ^ (len as u8); len];
    let idb = id.to_le_bytes();
    let mut out = Vec::new();
    encode_record(
        &layout(),
        RecordType::Primary,
        &[ColumnValue::Inline(&idb), ColumnValue::Inline(&payload)],
        &mut out,
    )
    .expect("encode");
    out
}

fn value(seed: u32, len: usize) -> Vec<u8> {
    (0..len).map(|i| (i as u32 ^ seed.wrapping_mul(2654435761)) as u8).collect()
}

fn key(i: u32) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

fn tree_contents(t: &BTree) -> Vec<(Vec<u8>, Vec<u8>)> {
    t.range(Unbounded, Unbounded).collect::<Result<Vec<_>, _>>().expect("scan")
}

fn heap_contents(h: &Heap) -> HashMap<Rid, Vec<u8>> {
    let mut m = HashMap::new();
    h.scan(|rid, r| {
        m.insert(rid, r.to_vec());
        true
    })
    .expect("scan");
    m
}

/// The system transactions since `mark` must be: any number without a row undo, then
/// exactly one whose last record is the only row undo record, all committed. Returns
/// the row undo (decoded tag name) for the caller to check.
fn one_row_op(hook: &RecordingHook, mark: usize, what: &str) -> String {
    let recs = hook.since(mark);
    let ts = txns(&recs);
    assert!(!ts.is_empty(), "{what}: no system transaction");
    let with: Vec<&Txn> = ts.iter().filter(|t| !t.row_undos().is_empty()).collect();
    assert_eq!(with.len(), 1, "{what}: {} system transactions carry row undo: {ts:#?}", with.len());
    let t = with[0];
    assert_eq!(t.row_undos().len(), 1, "{what}: more than one row undo");
    assert!(matches!(t.body.last().map(|r| &r.kind), Some(Kind::RowUndo(_))), "{what}: the row undo is not last");
    assert!(t.page_ops() > 0, "{what}: a row undo without a page change");
    for t in &ts {
        assert!(t.committed && t.end_lsn.is_some(), "{what}: system transaction {} not committed", t.id);
    }
    // Nothing outside system transactions but free-space notes (PFS body writes).
    for r in &recs {
        if r.txn == 0 {
            if let Kind::Page { op, .. } = &r.kind {
                let (op, _) = PageOp::decode(op).expect("op");
                assert!(matches!(op, PageOp::WriteBody { .. }), "{what}: {op:?} outside a system transaction");
            }
        }
    }
    let u = t.row_undos().remove(0);
    RowUndo::decode(&u).expect("decode").kind_name().to_string()
}

#[test]
fn every_row_operation_logs_exactly_one_row_undo_last() {
    let (db, hook) = hooked_db(2048, 256);
    for unique in [true, false] {
        let t = BTree::create(&db, 1, 2, BTreeOptions { unique }).expect("create");
        let stored = |i: u32| if unique { key(i) } else { stored_key(&key(i), 0) };
        // Inserts: in place, then enough to split leaves (appends and middle splits).
        for i in 0..400u32 {
            let k = if i % 2 == 0 { i } else { 1_000_000 - i };
            let m = hook.mark();
            t.insert(&key(k), &value(k, 300)).expect("insert");
            assert_eq!(one_row_op(&hook, m, "insert"), "BTREE_REMOVE");
        }
        assert!(t.check().expect("check").levels >= 2);
        // Updates: in place, and growing past the leaf (split first).
        for (i, len) in [(2u32, 10usize), (4, 3000), (6, 3000), (8, 3000)] {
            let m = hook.mark();
            assert!(t.update(&stored(i), &value(i, len)).expect("update"));
            assert_eq!(one_row_op(&hook, m, "update"), "BTREE_REVALUE");
        }
        // Deletes: in place, and with rebalancing.
        for i in (0..400u32).step_by(2) {
            let m = hook.mark();
            assert!(t.delete(&stored(i)).expect("delete"));
            assert_eq!(one_row_op(&hook, m, "delete"), "BTREE_RESTORE");
        }
        // The *_row variants.
        let m = hook.mark();
        assert!(t.insert_row(&key(5), b"v", b"row").expect("insert_row"));
        one_row_op(&hook, m, "insert_row");
        let m = hook.mark();
        t.update_row(&stored(5), b"row", &stored(5), b"w", b"row").expect("update_row");
        one_row_op(&hook, m, "update_row");
        let m = hook.mark();
        assert!(t.delete_row(&stored(5), b"row").expect("delete_row"));
        one_row_op(&hook, m, "delete_row");
        t.check().expect("check");
    }

    let heap = Heap::create(&db, 3).expect("heap");
    let mut rids = Vec::new();
    for i in 0..60u32 {
        let m = hook.mark();
        rids.push(heap.insert(&row(i, 400)).expect("insert"));
        assert_eq!(one_row_op(&hook, m, "heap insert"), "HEAP_CLEAR");
    }
    // In place, forwarded, moved again, in place where forwarded, back home.
    for len in [100usize, 7000, 7900, 7800, 50] {
        let m = hook.mark();
        assert!(heap.update(rids[3], &row(3, len)).expect("update"));
        assert_eq!(one_row_op(&hook, m, "heap update"), "HEAP_REVERT");
    }
    assert!(heap.update(rids[4], &row(4, 7000)).expect("forward"));
    for rid in [rids[4], rids[5]] {
        let m = hook.mark();
        assert!(heap.delete(rid).expect("delete"));
        assert_eq!(one_row_op(&hook, m, "heap delete"), "HEAP_UNGHOST");
    }
    heap.check().expect("check");

    let au = lob::create_unit(&db, 4, 1).expect("lob unit").id;
    for len in [10usize, 8040, 20_000, 100_000] {
        let m = hook.mark();
        lob::write(&db, au, &value(len as u32, len)).expect("lob write");
        assert_eq!(one_row_op(&hook, m, "lob write"), "LOB_REMOVE");
    }
}

/// A unique tree's insert that splits: the split is a system transaction without row
/// undo that does not write the new entry; the insert follows as its own row operation.
/// Appends leave the new right page empty until the insert.
#[test]
fn a_split_is_its_own_system_transaction_before_the_insert() {
    let (db, hook) = hooked_db(1024, 256);
    let t = BTree::create(&db, 1, 1, BTreeOptions { unique: true }).expect("create");
    let mut splits = 0;
    for i in 0..2000u32 {
        let (before_root, _) = t.root();
        let m = hook.mark();
        let v = value(i, 100);
        t.insert(&key(i), &v).expect("insert");
        let ts = txns(&hook.since(m));
        if ts.len() == 1 {
            continue;
        }
        splits += 1;
        let (smo, row_op) = (&ts[0], &ts[ts.len() - 1]);
        assert!(smo.row_undos().is_empty(), "the split logs no row undo");
        let mut entry = Vec::new();
        entry.extend_from_slice(&(4u16).to_le_bytes());
        entry.extend_from_slice(&key(i));
        entry.extend_from_slice(&v);
        for r in &smo.body {
            if let Kind::Page { op, .. } = &r.kind {
                let (op, _) = PageOp::decode(op).expect("op");
                if let PageOp::InsertSlot { record, .. } | PageOp::PlaceSlot { record, .. } = op {
                    assert_ne!(record, &entry[..], "the split wrote the new entry");
                }
                if let PageOp::Format { .. } = op {}
            }
        }
        // The row operation: one InsertSlot of the entry, alone on a fresh right page
        // (rightmost append), then the row undo.
        let ops: Vec<PageOp> = row_op
            .body
            .iter()
            .filter_map(|r| match &r.kind {
                Kind::Page { op, .. } => Some(PageOp::decode(op).expect("op").0),
                _ => None,
            })
            .collect();
        assert_eq!(ops, vec![PageOp::InsertSlot { slot: 0, record: &entry }], "insert {i}");
        assert_eq!(row_op.row_undos().len(), 1);
        let _ = before_root;
    }
    assert!(splits > 10);
    let s = t.check().expect("check");
    assert!(s.leaf_fill() > 0.9, "leaf fill {:.3}", s.leaf_fill());
}

/// A crash between an append split and the insert that follows it leaves an empty
/// rightmost leaf (the split committed, the insert did not): the tree is valid, scans in
/// both directions pass over the empty leaf, and later inserts fill it.
#[test]
fn an_empty_leaf_left_between_a_split_and_its_insert_is_valid() {
    let (db, hook) = hooked_db(1024, 256);
    let t = BTree::create(&db, 1, 1, BTreeOptions { unique: true }).expect("create");
    let mut model = BTreeMap::new();
    let mut cut = None;
    for i in 0..3000u32 {
        let m = hook.mark();
        t.insert(&key(i), &value(i, 100)).expect("insert");
        let ts = txns(&hook.since(m));
        if ts.len() > 1 && i > 1000 {
            // Undo only the row operation, as recovery would after a crash before its end.
            hook.undo_txn(ts[ts.len() - 1].id).expect("undo the insert");
            cut = Some(i);
            break;
        }
        model.insert(key(i), value(i, 100));
    }
    let cut = cut.expect("an append split");
    t.reload().expect("reload");
    let s = t.check().expect("check with an empty leaf");
    assert!(s.leaf_pages > 2);
    assert_eq!(tree_contents(&t), model.clone().into_iter().collect::<Vec<_>>());
    let back: Vec<_> = t.range_rev(Unbounded, Unbounded).collect::<Result<Vec<_>, _>>().expect("reverse scan");
    assert_eq!(back.len(), model.len());
    assert_eq!(back.first().map(|e| e.0.clone()), model.keys().next_back().cloned());
    // Cursors that cross the empty leaf while the structure changes re-seek correctly.
    let mut c = t.range(Unbounded, Unbounded);
    let mut seen = 0;
    while let Some((k, _)) = c.next_entry().expect("cursor") {
        let k = k.to_vec();
        seen += 1;
        if seen % 200 == 0 {
            t.insert(&key(100_000 + seen), b"x").expect("insert while scanning");
            model.insert(key(100_000 + seen), b"x".to_vec());
        }
        assert!(model.contains_key(&k));
    }
    for i in cut..cut + 500 {
        t.insert(&key(i), &value(i, 100)).expect("insert after");
        model.insert(key(i), value(i, 100));
    }
    t.check().expect("check");
    assert_eq!(tree_contents(&t), model.into_iter().collect::<Vec<_>>());
}

/// No page op of another system transaction lands on a page between a system
/// transaction's first change to that page and its end (4 threads, one B-tree).
#[test]
fn concurrent_system_transactions_never_interleave_on_a_page() {
    let (db, hook) = hooked_db(4096, 512);
    let t = BTree::create(&db, 1, 2, BTreeOptions { unique: true }).expect("create");
    let m = hook.mark();
    std::thread::scope(|s| {
        for th in 0..4u32 {
            let t = t.clone();
            s.spawn(move || {
                let mut x = 0x9E37_79B9u32.wrapping_mul(th + 1);
                for i in 0..2500u32 {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    // Random and ascending keys: middle splits and append splits.
                    let k = if i % 3 == 0 { (th << 28) | i } else { x };
                    let _ = t.insert(&key(k), &value(k, 40 + (k as usize % 200)));
                    if i % 7 == 0 {
                        let _ = t.delete(&key(x.rotate_left(3)));
                    }
                }
            });
        }
    });
    t.check().expect("check");
    let recs = hook.since(m);
    let ts = txns(&recs);
    assert!(ts.len() > 10_000);
    // page -> (lsn, txn) of every change, in LSN order.
    let mut by_page: HashMap<PageId, Vec<(u64, u64)>> = HashMap::new();
    for r in &recs {
        if let Kind::Page { page, .. } = &r.kind {
            by_page.entry(*page).or_default().push((r.lsn, r.txn));
        }
    }
    let mut checked = 0;
    for tx in &ts {
        let end = tx.end_lsn.expect("ended");
        assert!(tx.committed);
        for p in tx.pages() {
            let changes = &by_page[&p];
            let first = changes.iter().find(|c| c.1 == tx.id).expect("own change").0;
            for &(lsn, other) in changes {
                assert!(
                    !(lsn > first && lsn < end && other != tx.id),
                    "page ({p}): change {lsn} of system transaction {other} inside transaction {} ({first}..{end})",
                    tx.id
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 10_000);
}

/// The same rule with heaps (forwarding moves over three pages, ghosts, their removal),
/// LOB values and B-tree splits running at once; bitmap writes (free-space notes, undone
/// by XOR) are exempt. Also a deadlock test for the multi-page latching and the
/// allocation mutex held to the end of system transactions.
#[test]
fn mixed_concurrent_work_keeps_pages_to_one_system_transaction() {
    let (db, hook) = hooked_db(4096, 512);
    let heap = Arc::new(Heap::create(&db, 1).expect("heap"));
    let t = BTree::create(&db, 2, 1, BTreeOptions { unique: true }).expect("create");
    let lob_au = lob::create_unit(&db, 3, 1).expect("lob unit").id;
    let m = hook.mark();
    std::thread::scope(|s| {
        for th in 0..2u32 {
            let heap = heap.clone();
            s.spawn(move || {
                let mut rids = Vec::new();
                for i in 0..600u32 {
                    let len = [30usize, 700, 3000, 7600][(i as usize * 7 + th as usize) % 4];
                    match i % 5 {
                        0 | 1 => rids.push(heap.insert(&row(i, len)).expect("insert")),
                        2 | 3 if !rids.is_empty() => {
                            let rid = rids[(i as usize * 31) % rids.len()];
                            assert!(heap.update(rid, &row(i, len)).expect("update"));
                        }
                        _ if rids.len() > 3 => {
                            let rid = rids.swap_remove((i as usize * 17) % rids.len());
                            assert!(heap.delete(rid).expect("delete"));
                            if i % 2 == 0 {
                                assert!(heap.remove_ghost(rid).expect("remove ghost"));
                            }
                        }
                        _ => {}
                    }
                }
            });
        }
        let t = t.clone();
        s.spawn(move || {
            for i in 0..3000u32 {
                t.insert(&key(i.wrapping_mul(2654435761)), &value(i, 150)).expect("insert");
                if i % 4 == 0 {
                    t.delete(&key((i / 2).wrapping_mul(2654435761))).expect("delete");
                }
            }
        });
        let db = db.clone();
        s.spawn(move || {
            let mut kept = Vec::new();
            for i in 0..120u32 {
                let len = [20usize, 3000, 9000, 40_000][i as usize % 4];
                let p = lob::write(&db, lob_au, &value(i, len)).expect("lob write");
                if i % 3 == 0 {
                    lob::delete(&db, p).expect("lob delete");
                } else {
                    kept.push(p);
                }
            }
            lob::check_unit(&db, lob_au, kept).expect("lob check");
        });
    });
    heap.check().expect("heap check");
    heap.cleanup_ghosts().expect("cleanup");
    assert_eq!(heap.check().expect("heap check").ghost_records, 0);
    t.check().expect("tree check");
    assert!(db.check_allocation().expect("checkalloc").is_empty());
    let recs = hook.since(m);
    let mut by_page: HashMap<PageId, Vec<(u64, u64)>> = HashMap::new();
    for r in &recs {
        if let Kind::Page { page, op, .. } = &r.kind {
            if !matches!(PageOp::decode(op).expect("op").0, PageOp::WriteBody { .. }) {
                by_page.entry(*page).or_default().push((r.lsn, r.txn));
            }
        }
    }
    for tx in txns(&recs) {
        let end = tx.end_lsn.expect("ended");
        assert!(tx.committed);
        for p in tx.pages() {
            let Some(changes) = by_page.get(&p) else { continue };
            let Some(first) = changes.iter().find(|c| c.1 == tx.id).map(|c| c.0) else { continue };
            for &(lsn, other) in changes {
                assert!(
                    !(lsn > first && lsn < end && other != tx.id),
                    "page ({p}): change {lsn} of system transaction {other} inside transaction {} ({first}..{end})",
                    tx.id
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Logical rollback

#[derive(Debug, Clone)]
enum Op {
    TInsert(u32, usize),
    TUpdate(u32, usize),
    TDelete(u32),
    NInsert(u32, usize),
    NDelete(u32),
    HInsert(usize),
    HUpdate(u32, usize),
    HDelete(u32),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    // Values of up to 3.5 KB: a leaf holds 2 to 30 entries, so splits and merges are
    // frequent; rows of up to 7.8 KB: forwarding.
    let vlen = prop_oneof![2 => 1usize..300, 3 => 300usize..2000, 1 => 2000usize..3500];
    let rlen = prop_oneof![3 => 1usize..400, 1 => 400usize..3000, 1 => 5000usize..7800];
    prop_oneof![
        6 => (0u32..400, vlen.clone()).prop_map(|(k, l)| Op::TInsert(k, l)),
        2 => (any::<u32>(), vlen.clone()).prop_map(|(k, l)| Op::TUpdate(k, l)),
        2 => any::<u32>().prop_map(Op::TDelete),
        3 => (0u32..40, vlen).prop_map(|(k, l)| Op::NInsert(k, l)),
        1 => any::<u32>().prop_map(Op::NDelete),
        3 => rlen.clone().prop_map(Op::HInsert),
        3 => (any::<u32>(), rlen).prop_map(|(i, l)| Op::HUpdate(i, l)),
        1 => any::<u32>().prop_map(Op::HDelete),
    ]
}

struct World {
    db: Arc<Database>,
    hook: Arc<RecordingHook>,
    t: BTree,
    n: BTree,
    heap: Heap,
    tm: BTreeMap<Vec<u8>, Vec<u8>>,
    nm: BTreeMap<Vec<u8>, Vec<u8>>,
    hm: HashMap<Rid, Vec<u8>>,
    ver: u32,
}

impl World {
    fn pick<K: Clone + Ord, V>(m: &BTreeMap<K, V>, i: u32) -> Option<K> {
        (!m.is_empty()).then(|| m.keys().nth(i as usize % m.len()).cloned().expect("key"))
    }

    fn pick_rid(&self, i: u32) -> Option<Rid> {
        let mut v: Vec<Rid> = self.hm.keys().copied().collect();
        v.sort();
        (!v.is_empty()).then(|| v[i as usize % v.len()])
    }

    fn apply(&mut self, op: &Op) {
        self.ver += 1;
        let ver = self.ver;
        match *op {
            Op::TInsert(k, l) => {
                let v = value(ver, l);
                match self.t.insert(&key(k), &v) {
                    Ok(_) => assert!(self.tm.insert(key(k), v).is_none()),
                    Err(storage::StorageError::DuplicateKey) => assert!(self.tm.contains_key(&key(k))),
                    Err(e) => panic!("insert: {e}"),
                }
            }
            Op::TUpdate(i, l) => {
                if let Some(k) = Self::pick(&self.tm, i) {
                    let v = value(ver, l);
                    assert!(self.t.update(&k, &v).expect("update"));
                    self.tm.insert(k, v);
                }
            }
            Op::TDelete(i) => {
                if let Some(k) = Self::pick(&self.tm, i) {
                    assert!(self.t.delete(&k).expect("delete"));
                    self.tm.remove(&k);
                }
            }
            Op::NInsert(k, l) => {
                let v = value(ver, l);
                let u = self.n.insert(&key(k), &v).expect("insert").expect("uniquifier");
                self.nm.insert(stored_key(&key(k), u), v);
            }
            Op::NDelete(i) => {
                if let Some(k) = Self::pick(&self.nm, i) {
                    assert!(self.n.delete(&k).expect("delete"));
                    self.nm.remove(&k);
                }
            }
            Op::HInsert(l) => {
                let r = row(ver, l);
                let rid = self.heap.insert(&r).expect("heap insert");
                assert!(self.hm.insert(rid, r).is_none());
            }
            Op::HUpdate(i, l) => {
                if let Some(rid) = self.pick_rid(i) {
                    let r = row(ver, l);
                    assert!(self.heap.update(rid, &r).expect("heap update"));
                    self.hm.insert(rid, r);
                }
            }
            Op::HDelete(i) => {
                if let Some(rid) = self.pick_rid(i) {
                    assert!(self.heap.delete(rid).expect("heap delete"));
                    self.hm.remove(&rid);
                }
            }
        }
    }

    fn verify(&self) -> Result<(), TestCaseError> {
        self.t.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
        self.n.check().map_err(|e| TestCaseError::fail(format!("check: {e}")))?;
        self.heap.check().map_err(|e| TestCaseError::fail(format!("heap check: {e}")))?;
        prop_assert_eq!(tree_contents(&self.t), self.tm.clone().into_iter().collect::<Vec<_>>());
        prop_assert_eq!(tree_contents(&self.n), self.nm.clone().into_iter().collect::<Vec<_>>());
        prop_assert_eq!(&heap_contents(&self.heap), &self.hm);
        prop_assert!(self.db.check_allocation().expect("checkalloc").is_empty());
        Ok(())
    }

    /// Removes the ghosts the row undo records of a finished user transaction leave for
    /// the transaction layer: deleted rows after commit, undone inserts after rollback.
    fn remove_ghosts(&self, undos: &[Vec<u8>], committed: bool) {
        for u in undos {
            match RowUndo::decode(u).expect("decode") {
                RowUndo::HeapUnghost { rid, .. } if committed => {
                    self.heap.remove_ghost(rid).expect("remove ghost");
                }
                RowUndo::HeapClear { rid, .. } if !committed => {
                    self.heap.remove_ghost(rid).expect("remove ghost");
                }
                _ => {}
            }
        }
    }
}

fn run_transactions(txs: Vec<(Vec<Op>, bool)>) -> Result<(), TestCaseError> {
    let (db, hook) = hooked_db(2048, 256);
    let t = BTree::create(&db, 1, 2, BTreeOptions { unique: true }).expect("create");
    let n = BTree::create(&db, 1, 1, BTreeOptions { unique: false }).expect("create");
    let heap = Heap::create(&db, 2).expect("heap");
    let mut w = World { db, hook, t, n, heap, tm: BTreeMap::new(), nm: BTreeMap::new(), hm: HashMap::new(), ver: 0 };
    for (ops, commit) in txs {
        let snapshot = (w.tm.clone(), w.nm.clone(), w.hm.clone());
        let mark = w.hook.mark();
        for op in &ops {
            w.apply(op);
        }
        let undos = w.hook.row_undos_since(mark);
        if commit {
            w.remove_ghosts(&undos, true);
        } else {
            // Roll back: each row undo in reverse, each applied twice (as recovery may,
            // after a crash between a compensation and its log record).
            w.hook.compensating(|| {
                for u in undos.iter().rev() {
                    let u = RowUndo::decode(u).expect("decode");
                    apply_row_undo(&w.db, &u).expect("undo");
                    apply_row_undo(&w.db, &u).expect("undo again");
                }
            });
            (w.tm, w.nm, w.hm) = snapshot;
            w.verify()?;
            // No row undo was logged while compensating.
            prop_assert_eq!(w.hook.row_undos_since(mark).len(), undos.len());
            w.remove_ghosts(&undos, false);
        }
        w.verify()?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Random user transactions over a unique B-tree, a non-unique one and a heap,
    /// committed or rolled back: a rollback through the row undo records (each applied
    /// twice) gives back exactly the state before the transaction, and every structure
    /// checks out.
    #[test]
    fn rollback_restores_the_state_before_the_transaction(
        txs in prop::collection::vec((prop::collection::vec(op_strategy(), 1..40), prop::bool::weighted(0.6)), 1..16)
    ) {
        run_transactions(txs)?;
    }
}

/// A longer deterministic run of the same property: deeper trees, more forwarding.
#[test]
fn rollback_over_a_long_history() {
    let mut x = 0x2545_F491u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut txs = Vec::new();
    for _ in 0..40 {
        let ops = (0..80)
            .map(|_| {
                let (a, b) = (next(), next());
                let vlen = [40usize, 200, 900, 2500][(b % 4) as usize] + (b as usize % 37);
                let rlen = [20usize, 300, 2000, 7000][(b % 4) as usize] + (b as usize % 53);
                match a % 16 {
                    0..=5 => Op::TInsert(b % 2000, vlen),
                    6 | 7 => Op::TUpdate(b, vlen),
                    8 => Op::TDelete(b),
                    9 => Op::NInsert(b % 50, vlen),
                    10 => Op::NDelete(b),
                    11 | 12 => Op::HInsert(rlen),
                    13 | 14 => Op::HUpdate(b, rlen),
                    _ => Op::HDelete(b),
                }
            })
            .collect();
        txs.push((ops, next() % 3 != 0));
    }
    run_transactions(txs).expect("rollback property");
}

/// A LOB write rolled back: its records are gone, applying the undo again changes
/// nothing, and a value that reused the freed root slot is left alone.
#[test]
fn lob_write_undo_is_idempotent() {
    let (db, hook) = hooked_db(2048, 256);
    let au = lob::create_unit(&db, 9, 1).expect("unit").id;
    let keep = lob::write(&db, au, &value(1, 5000)).expect("write");
    for len in [100usize, 30_000] {
        let m = hook.mark();
        let v = value(len as u32, len);
        let p = lob::write(&db, au, &v).expect("write");
        let undos = hook.row_undos_since(m);
        assert_eq!(undos.len(), 1);
        let u = RowUndo::decode(&undos[0]).expect("decode");
        hook.compensating(|| apply_row_undo(&db, &u)).expect("undo");
        lob::check_unit(&db, au, [keep]).expect("only the kept value is left");
        // Another value of the same length may take the freed root slot; undoing the
        // first write again must not remove it.
        let other = lob::write(&db, au, &value(7, len)).expect("write");
        hook.compensating(|| apply_row_undo(&db, &u)).expect("undo again");
        assert_eq!(lob::read(&db, other).expect("read"), value(7, len));
        lob::check_unit(&db, au, [keep, other]).expect("check");
        lob::delete(&db, other).expect("delete");
        let _ = p;
    }
}

// ---------------------------------------------------------------------------------------
// Physical undo

/// Undoes the system transactions since `mark` physically, newest first (and the
/// free-space notes made between them, as if a crash had come before them), and checks
/// that every page they changed has its content from before (pages they allocated and
/// formatted are exempt: they are free again).
fn undo_all_since(db: &Arc<Database>, hook: &RecordingHook, mark: usize) {
    let recs = hook.since(mark);
    // First image of each page before the first change of these transactions, unless
    // that change formatted a page being allocated.
    let mut before: BTreeMap<PageId, Option<String>> = BTreeMap::new();
    for r in &recs {
        if let Kind::Page { page, undo, before: Some(img), compensation: false, op } = &r.kind {
            let fresh = matches!(PageOp::decode(op).expect("op").0, PageOp::Format { alloc_unit_id, .. } if alloc_unit_id != 0)
                && undo == &[0u8];
            before.entry(*page).or_insert_with(|| (!fresh).then(|| content(img)));
        }
    }
    hook.undo_since(mark).expect("physical undo");
    for (page, img) in before {
        if let Some(img) = img {
            let g = db.read(page).expect("read");
            assert_eq!(content(&g), img, "page ({page}) differs after physical undo");
        }
    }
    db.reload_allocation().expect("reload");
    assert_eq!(db.check_allocation().expect("checkalloc"), Vec::<String>::new());
}

#[test]
fn physical_undo_of_splits_merges_and_allocations_restores_every_page() {
    let (db, hook) = hooked_db(4096, 64);
    hook.set_capture(true);
    let t = BTree::create(&db, 1, 2, BTreeOptions { unique: true }).expect("create");
    let mut model = BTreeMap::new();
    let mut x = 12345u32;
    let mut undone = 0;
    for round in 0..600u32 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let delete = round % 3 == 2 && !model.is_empty();
        let k = if delete { model.keys().nth(x as usize % model.len()).cloned().expect("key") } else { key(x % 5000) };
        let v = value(x, 200 + (x as usize % 1800));
        let m = hook.mark();
        let done = if delete { t.delete(&k).expect("delete") } else { t.insert(&k, &v).is_ok() };
        let ts = txns(&hook.since(m));
        // Undo every third structure modification (and its row operation), physically.
        if ts.len() > 1 && round % 3 == 0 {
            undo_all_since(&db, &hook, m);
            t.reload().expect("reload");
            t.check().expect("check after undo");
            assert_eq!(tree_contents(&t), model.clone().into_iter().collect::<Vec<_>>());
            undone += 1;
            continue;
        }
        if done {
            if delete {
                model.remove(&k);
            } else {
                model.insert(k, v);
            }
        }
    }
    assert!(undone > 5, "{undone} structure modifications undone");
    // Allocation alone, and heap work that allocates and forwards.
    let heap = Heap::create(&db, 5).expect("heap");
    let mut rows = HashMap::new();
    for i in 0..40u32 {
        rows.insert(heap.insert(&row(i, 1500)).expect("insert"), row(i, 1500));
    }
    for i in 0..30u32 {
        let m = hook.mark();
        let rid = *rows.keys().nth(i as usize % rows.len()).expect("rid");
        match i % 3 {
            0 => drop(db.allocate_page(heap.au_id(), None).expect("allocate")),
            1 => assert!(heap.update(rid, &row(i, 7000)).expect("forward")),
            _ => drop(heap.insert(&row(i, 7500)).expect("insert on a new page")),
        }
        undo_all_since(&db, &hook, m);
        heap.check().expect("heap check");
        assert_eq!(heap_contents(&heap), rows);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// Garbage undo material and row undo records are errors (or harmless changes to a
    /// scratch page), never panics.
    #[test]
    fn garbage_undo_never_panics(material in prop::collection::vec(any::<u8>(), 0..80), tag in 0u8..12) {
        let (db, hook) = hooked_db(256, 64);
        let heap = Heap::create(&db, 1).expect("heap");
        let rid = heap.insert(&row(1, 100)).expect("insert");
        let mut m = material.clone();
        if let Some(b) = m.first_mut() {
            *b = tag;
        }
        let _ = storage::apply_physical_undo(&db, rid.page_id(), &m);
        if let Ok(u) = RowUndo::decode(&material) {
            let _ = hook.compensating(|| apply_row_undo(&db, &u));
        }
        // Well-formed records pointing at the wrong things: errors, not panics.
        let t = BTree::create(&db, 2, 1, BTreeOptions { unique: true }).expect("tree");
        t.insert(b"k", b"v").expect("insert");
        let lob_au = lob::create_unit(&db, 3, 1).expect("lob").id;
        let r = |i: usize| material.get(i).copied().unwrap_or(0);
        let odd = Rid { file_id: 1 + (r(0) % 2) as u16, page_no: u32::from(r(1)) * 3, slot: u16::from(r(2) % 8) };
        let au = [heap.au_id(), t.alloc_unit_id(), lob_au, 7][(tag % 4) as usize];
        let undos = [
            RowUndo::BTreeRemove { au, stored_key: &material },
            RowUndo::BTreeRestore { au, stored_key: b"k", value: &material },
            RowUndo::BTreeRevalue { au, stored_key: &material, old_value: b"" },
            RowUndo::HeapClear { au, rid: odd },
            RowUndo::HeapUnghost { au, rid: odd },
            RowUndo::HeapRevert { au, rid: odd, old_record: &material },
            RowUndo::LobRemove { au, ptr: storage::record::LobPointer { total_len: u64::from(r(3)) * 1000, root: odd }, crc: 0 },
        ];
        for u in undos {
            let _ = hook.compensating(|| apply_row_undo(&db, &u));
        }
    }
}

/// A system transaction opened by the caller and dropped without commit rolls back the
/// row operations inside it, allocation included (the caches are rebuilt).
#[test]
fn a_system_transaction_dropped_without_commit_rolls_back() {
    let (db, hook) = hooked_db(2048, 64);
    let t = BTree::create(&db, 1, 2, BTreeOptions { unique: true }).expect("create");
    let heap = Heap::create(&db, 2).expect("heap");
    for i in 0..50u32 {
        t.insert(&key(i), &value(i, 500)).expect("insert");
    }
    let before = tree_contents(&t);
    let pages_before = db.alloc_unit_pages(heap.au_id()).expect("pages");
    {
        let stx = db.begin_system_txn().expect("begin");
        for i in 0..40u32 {
            heap.insert(&row(i, 3000)).expect("heap insert");
        }
        let _ = stx; // dropped: rolled back
    }
    assert!(heap_contents(&heap).is_empty());
    assert_eq!(db.alloc_unit_pages(heap.au_id()).expect("pages"), pages_before);
    assert!(db.check_allocation().expect("checkalloc").is_empty());
    // Still usable.
    let rid = heap.insert(&row(1, 10)).expect("insert after rollback");
    assert_eq!(heap.get(rid).expect("get"), Some(row(1, 10)));
    assert_eq!(tree_contents(&t), before);
    let _ = hook;
}
