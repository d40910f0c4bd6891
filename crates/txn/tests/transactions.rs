//! Transaction behaviour: rollback and savepoints restore exactly the earlier state, a
//! dropped transaction rolls back, heap deletes ghost until commit, delayed durability
//! follows the database option, durable commits wait on WRITELOG and share flushes
//! (group commit), recovery reports to the error log, checkpoints truncate the log.

use std::collections::BTreeMap;
use std::ops::Bound::Unbounded;
use std::path::PathBuf;
use std::sync::Arc;
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::heap::Heap;
use storage::io::{FileSystem, MemFs};
use storage::record::{encode_record, ColumnLayout, ColumnValue, RecordType, RowLayout};
use storage::BufferPool;
use txn::checkpoint::CheckpointKind;
use txn::recovery::LogSpec;
use txn::xact::{DelayedDurability, TxnDb};
use txn::LogConfig;

fn new_db(fs: &Arc<MemFs>, id: u16, name: &str) -> Arc<TxnDb> {
    let data = FileSpec {
        file_id: 1,
        name: name.into(),
        path: PathBuf::from(format!("/d/{name}.mdf")),
        size_pages: 128,
        growth: FileGrowth::Pages(128),
        max_pages: None,
    };
    let log = LogSpec {
        path: PathBuf::from(format!("/d/{name}.ldf")),
        size_bytes: 2 << 20,
        growth: FileGrowth::Pages(128),
        max_bytes: None,
    };
    let fs: Arc<dyn FileSystem> = fs.clone();
    TxnDb::create(BufferPool::new(256), fs, id, name, vec![data], log, LogConfig::default()).expect("create")
}

fn contents(tree: &BTree) -> BTreeMap<Vec<u8>, Vec<u8>> {
    let mut m = BTreeMap::new();
    tree.scan(Unbounded, Unbounded, |k, v| {
        m.insert(k.to_vec(), v.to_vec());
        true
    })
    .unwrap();
    m
}

fn k(i: u32) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

#[test]
fn rollback_and_savepoints_restore_exact_state() {
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 5, "rb");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    {
        let t = db.begin("load", 1).unwrap();
        let _in = t.enter();
        for i in 0..500 {
            tree.insert(&k(i), &vec![i as u8; 40]).unwrap();
        }
        drop(_in);
        t.commit(false).unwrap();
    }
    let before = contents(&tree);
    // A transaction with splits, updates and deletes, rolled back.
    {
        let t = db.begin("x", 1).unwrap();
        let _in = t.enter();
        for i in 500..1500 {
            tree.insert(&k(i), &vec![7; 300]).unwrap();
        }
        for i in (0..500).step_by(3) {
            tree.update(&k(i), &vec![9; 200]).unwrap();
        }
        for i in (1..500).step_by(3) {
            assert!(tree.delete(&k(i)).unwrap());
        }
        drop(_in);
        t.rollback().unwrap();
    }
    assert_eq!(contents(&tree), before);
    tree.check().unwrap();

    // Savepoints: changes after the savepoint go, changes before stay.
    let mut t = db.begin("sp", 1).unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(10_000), b"before savepoint").unwrap();
    }
    t.save("s1").unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(10_001), b"after savepoint").unwrap();
        tree.delete(&k(0)).unwrap();
    }
    t.rollback_to("s1").unwrap();
    assert!(t.rollback_to("nosuch").is_err());
    t.commit(false).unwrap();
    let after = contents(&tree);
    assert_eq!(after.get(&k(10_000)).map(|v| v.as_slice()), Some(&b"before savepoint"[..]));
    assert!(!after.contains_key(&k(10_001)));
    assert!(after.contains_key(&k(0)));

    // Dropping an open transaction rolls it back.
    {
        let t = db.begin("dropped", 1).unwrap();
        let _in = t.enter();
        tree.insert(&k(20_000), b"never committed").unwrap();
    }
    assert!(!contents(&tree).contains_key(&k(20_000)));
    assert!(db.active_transactions().is_empty());
    assert!(db.db.check_allocation().unwrap().is_empty());
}

#[test]
fn heap_deletes_ghost_until_commit() {
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 6, "heap");
    let heap = Heap::create(&db.db, 20).unwrap();
    let t = db.begin("ins", 1).unwrap();
    let rids: Vec<_> = {
        let _in = t.enter();
        let layout = RowLayout::new(vec![ColumnLayout::fixed(4)]).unwrap();
        (0..50u32)
            .map(|i| {
                let mut rec = Vec::new();
                let v = i.to_le_bytes();
                encode_record(&layout, RecordType::Primary, &[ColumnValue::Inline(&v)], &mut rec).unwrap();
                heap.insert(&rec).unwrap()
            })
            .collect()
    };
    t.commit(false).unwrap();
    let count = |h: &Heap| {
        let mut n = 0;
        h.scan(|_, _| {
            n += 1;
            true
        })
        .unwrap();
        n
    };
    assert_eq!(count(&heap), 50);
    let t = db.begin("del", 1).unwrap();
    {
        let _in = t.enter();
        for r in &rids[..10] {
            assert!(heap.delete(*r).unwrap());
        }
    }
    assert_eq!(count(&heap), 40, "ghosts are invisible to scans");
    t.rollback().unwrap();
    assert_eq!(count(&heap), 50, "rollback un-ghosts");
    let t = db.begin("del2", 1).unwrap();
    {
        let _in = t.enter();
        for r in &rids[..10] {
            assert!(heap.delete(*r).unwrap());
        }
    }
    t.commit(false).unwrap();
    assert_eq!(count(&heap), 40);
    assert_eq!(heap.check().unwrap().rows, 40, "committed deletes are cleaned up");
    // A rolled-back insert leaves no ghost behind either.
    let t = db.begin("ins-rb", 1).unwrap();
    {
        let _in = t.enter();
        let layout = RowLayout::new(vec![ColumnLayout::fixed(4)]).unwrap();
        let mut rec = Vec::new();
        encode_record(&layout, RecordType::Primary, &[ColumnValue::Inline(&[9, 9, 9, 9])], &mut rec).unwrap();
        heap.insert(&rec).unwrap();
    }
    t.rollback().unwrap();
    let st = heap.check().unwrap();
    assert_eq!((st.rows, st.ghost_records), (40, 0));
}

#[test]
fn delayed_durability_follows_the_database_option() {
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 7, "dd");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let commit = |delayed: bool, i: u32| {
        let t = db.begin("c", 1).unwrap();
        {
            let _in = t.enter();
            tree.insert(&k(i), b"v").unwrap();
        }
        t.commit(delayed).unwrap().delayed
    };
    assert_eq!(db.delayed_durability(), DelayedDurability::Disabled);
    assert!(!commit(true, 1), "DISABLED ignores WITH (DELAYED_DURABILITY = ON)");
    db.set_delayed_durability(DelayedDurability::Allowed);
    assert!(commit(true, 2), "ALLOWED honours the request");
    assert!(!commit(false, 3));
    db.set_delayed_durability(DelayedDurability::Forced);
    assert!(commit(false, 4), "FORCED delays every commit");
    assert_eq!(DelayedDurability::Forced.desc(), "FORCED");
}

#[test]
fn durable_commits_wait_on_writelog_and_share_flushes() {
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 8, "gc");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let before = db.log.stats();
    let threads: Vec<_> = (0..16u32)
        .map(|th| {
            let db = db.clone();
            let tree = tree.clone();
            std::thread::spawn(move || {
                let waits = Arc::new(diag::WaitStats::new());
                let _s = diag::SessionScope::enter(waits.clone());
                for i in 0..40 {
                    let t = db.begin("w", th as i32).unwrap();
                    {
                        let _in = t.enter();
                        tree.insert(&k(th * 1000 + i), &[1u8; 20]).unwrap();
                    }
                    t.commit(false).unwrap();
                }
                waits.get(diag::WaitType::WRITELOG).waiting_tasks_count
            })
        })
        .collect();
    let writelog: u64 = threads.into_iter().map(|h| h.join().unwrap()).sum();
    let after = db.log.stats();
    let flushes = after.flushes - before.flushes;
    assert_eq!(contents(&tree).len(), 640);
    assert!(writelog > 0, "durable commits record WRITELOG in their session");
    assert!(flushes < 640, "group commit: {flushes} flushes for 640 commits");
}

#[test]
fn recovery_reports_and_checkpoints_truncate() {
    let fs = Arc::new(MemFs::new());
    let tree_au;
    {
        let db = new_db(&fs, 9, "rec");
        let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
        tree_au = tree.alloc_unit_id();
        for round in 0..30u32 {
            let t = db.begin("r", 1).unwrap();
            {
                let _in = t.enter();
                for i in 0..100 {
                    tree.insert(&k(round * 100 + i), &[3u8; 100]).unwrap();
                }
            }
            t.commit(false).unwrap();
        }
        let vlfs_before = db.log.vlf_info().iter().filter(|v| format!("{:?}", v.status).contains("Active")).count();
        let st = db.checkpoint(CheckpointKind::Manual).unwrap();
        assert!(st.pages_written > 0);
        let vlfs_after = db.log.vlf_info().iter().filter(|v| format!("{:?}", v.status).contains("Active")).count();
        assert!(vlfs_after <= vlfs_before, "truncation frees VLFs ({vlfs_before} -> {vlfs_after})");
        // A loser: open when the "crash" happens.
        let t = db.begin("loser", 1).unwrap();
        {
            let _in = t.enter();
            tree.insert(&k(999_999), b"loser").unwrap();
        }
        db.log.flush_to(db.log.end_lsn()).unwrap();
        std::mem::forget(t); // the process dies: no rollback
        db.log.shutdown();
        // The buffer pool is dropped without writing: a crash.
    }
    let fsd: Arc<dyn FileSystem> = fs.clone();
    let (db, report) =
        TxnDb::open(BufferPool::new(256), fsd, 9, &PathBuf::from("/d/rec.ldf"), LogConfig::default()).unwrap();
    assert_eq!(report.losers_rolled_back, 1);
    let tree = BTree::open(&db.db, tree_au, BTreeOptions { unique: true }).unwrap();
    let c = contents(&tree);
    assert_eq!(c.len(), 3000);
    assert!(!c.contains_key(&k(999_999)));
    let log = diag::errorlog::recent(50);
    assert!(log.iter().any(|e| e.text.starts_with("Recovery completed for database rec (database ID 9)")), "{log:?}");
    assert!(log.iter().any(|e| e.text.starts_with("1 transactions rolled back in database 'rec' (9:0)")));
}

/// Kinds and sizes of the records appended after `from` (flushed first).
fn records_after(db: &TxnDb, from: txn::Lsn) -> Vec<(txn::record::Header, usize)> {
    db.log.flush_to(db.log.end_lsn()).unwrap();
    db.log
        .reader(from)
        .map(|r| r.unwrap())
        .filter(|(lsn, _)| *lsn > from)
        .map(|(_, b)| (txn::record::Header::decode(&b).unwrap(), b.len()))
        .collect()
}

#[test]
fn a_row_operation_is_one_log_record() {
    use txn::record::{flags, RecordKind};
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 7, "rowop");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let value = vec![5u8; 100];
    let per_kind = |recs: &[(txn::record::Header, usize)], kind: RecordKind| {
        let of_kind: Vec<_> = recs.iter().filter(|(h, _)| h.kind() == Some(kind)).collect();
        // Records carrying a full page image (first change after a write) aside.
        let plain: Vec<_> = of_kind.iter().filter(|(h, _)| !h.has(flags::FULL_PAGE_IMAGE)).collect();
        let avg = plain.iter().map(|(_, n)| *n).sum::<usize>() / plain.len().max(1);
        (of_kind.len(), avg)
    };

    let start = db.log.end_lsn();
    let t = db.begin("ins", 1).unwrap();
    {
        let _in = t.enter();
        for i in 0..1000 {
            tree.insert(&k(i), &value).unwrap();
        }
    }
    t.commit(false).unwrap();
    let recs = records_after(&db, start);
    let (n, avg) = per_kind(&recs, RecordKind::RowOp);
    assert_eq!(n, 1000, "one ROW_OP per inserted row");
    assert_eq!(per_kind(&recs, RecordKind::RowUndo).0, 0, "no separate ROW_UNDO");
    // Header 40 + page 6 + undo (u16 length, tag, unit, key) + InsertSlot with the
    // 106-byte entry: about 180 bytes, against 220+ as PAGE_OP + ROW_UNDO.
    eprintln!("ROW_OP: {avg} bytes per inserted row");
    assert!(avg < 190, "{avg} bytes per inserted row");
    // Page splits stay system transactions of their own (PAGE_OPs ended by SYS_END).
    assert!(per_kind(&recs, RecordKind::PageOp).0 > 0);
    assert!(recs.iter().all(|(h, _)| h.kind() != Some(RecordKind::RowOp) || h.sys_id == 0));

    // Deletes: the record carries the deleted entry once (in the row undo).
    let start = db.log.end_lsn();
    let t = db.begin("del", 1).unwrap();
    {
        let _in = t.enter();
        for i in (0..1000).step_by(2) {
            assert!(tree.delete(&k(i)).unwrap());
        }
    }
    t.commit(false).unwrap();
    let recs = records_after(&db, start);
    let (n, avg) = per_kind(&recs, RecordKind::RowOp);
    assert_eq!(n, 500);
    eprintln!("ROW_OP: {avg} bytes per deleted row");
    assert!(avg < 190, "{avg} bytes per deleted row");

    // Rolled back and recovered through the same records.
    let t = db.begin("rb", 1).unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(5000), &value).unwrap();
        assert!(tree.delete(&k(1)).unwrap());
        tree.update(&k(3), b"changed").unwrap();
    }
    t.rollback().unwrap();
    assert_eq!(tree.get(&k(5000)).unwrap(), None);
    assert_eq!(tree.get(&k(1)).unwrap(), Some(value.clone()));
    assert_eq!(tree.get(&k(3)).unwrap(), Some(value.clone()));
    tree.check().unwrap();
}

/// A transaction that fills a log that may not grow gets 9002 (whether the failing record
/// is a row's or one of a page split's) and still rolls back at once, with no restart:
/// its forward records reserved the log space of their compensation records and of the
/// page images the rollback logs (here every page was written by a checkpoint first).
/// Afterwards the tree and the allocation structures are intact, the committed rows are
/// all there, and a checkpoint makes room for new work.
#[test]
fn a_transaction_that_fills_the_log_rolls_back_without_a_restart() {
    for (round, value_len) in [3_000usize, 1_200, 300].into_iter().enumerate() {
        let fs = Arc::new(MemFs::new());
        let name = format!("full{round}");
        let data = FileSpec {
            file_id: 1,
            name: name.clone(),
            path: PathBuf::from(format!("/d/{name}.mdf")),
            size_pages: 512,
            growth: FileGrowth::Pages(128),
            max_pages: None,
        };
        let log = LogSpec {
            path: PathBuf::from(format!("/d/{name}.ldf")),
            size_bytes: 1 << 20,
            growth: FileGrowth::None,
            max_bytes: None,
        };
        let dyn_fs: Arc<dyn FileSystem> = fs.clone();
        let db = TxnDb::create(
            BufferPool::new(512),
            dyn_fs,
            40 + round as u16,
            &name,
            vec![data],
            log,
            LogConfig::default(),
        )
        .expect("create");
        let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
        let key = |i: u64| i.to_be_bytes().to_vec();
        {
            let t = db.begin("base", 1).unwrap();
            let _in = t.enter();
            for i in 0..20u64 {
                tree.insert(&key(i * 1_000_000), b"committed").unwrap();
            }
            drop(_in);
            t.commit(false).unwrap();
        }
        let base = contents(&tree);
        db.checkpoint(CheckpointKind::Manual).unwrap();

        let t = db.begin("filler", 1).unwrap();
        let mut inserted = 0u64;
        let err = {
            let _in = t.enter();
            let mut i = 0u64;
            loop {
                // Keys spread between the committed ones: splits in the middle of pages.
                let k = (i * 7_919) % 19_000_000 + 1;
                i += 1;
                match tree.insert(&key(k), &vec![i as u8; value_len]) {
                    Ok(_) => inserted += 1,
                    Err(storage::StorageError::DuplicateKey) => {}
                    Err(e) => break e,
                }
                assert!(i < 100_000, "round {round}: the log never filled");
            }
        };
        assert_eq!(err.to_sql_error().number, 9002, "round {round}: {err}");
        assert!(inserted > 10, "round {round}: only {inserted} rows before the log filled");
        tree.check().unwrap_or_else(|e| panic!("round {round}: tree after 9002: {e}"));
        // Write every page, so the rollback's first change of each logs a page image.
        db.checkpoint(CheckpointKind::Manual).unwrap();
        t.rollback().unwrap_or_else(|e| panic!("round {round}: rollback after 9002 ({inserted} rows): {e}"));
        tree.check().unwrap_or_else(|e| panic!("round {round}: tree after rollback: {e}"));
        assert!(db.db.check_allocation().unwrap().is_empty(), "round {round}: allocation");
        assert_eq!(contents(&tree), base, "round {round}: exactly the committed rows are left");
        assert_eq!(db.log.reserved_bytes(), 0, "round {round}: reservations given back");
        db.checkpoint(CheckpointKind::Manual).unwrap();
        let t = db.begin("after", 1).unwrap();
        {
            let _in = t.enter();
            tree.insert(&key(5), &vec![1; value_len]).unwrap();
        }
        t.commit(false).unwrap();
        assert_eq!(contents(&tree).len(), base.len() + 1);
        db.log.shutdown();
    }
}

/// A transaction writes BEGIN_XACT with its first record: one that logs nothing (a
/// SELECT's autocommit transaction, savepoints included) writes no record at all, and is
/// not listed as active; one that changes something is logged as before.
#[test]
fn a_transaction_that_logs_nothing_writes_no_record() {
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 6, "ro");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let end = db.log.end_lsn();
    let mut t = db.begin("reader", 1).unwrap();
    t.save("sp").unwrap();
    assert!(db.active_transactions().is_empty());
    t.rollback_to("sp").unwrap();
    t.commit(false).unwrap();
    let t = db.begin("reader 2", 1).unwrap();
    t.rollback().unwrap();
    assert_eq!(db.log.end_lsn(), end, "nothing was logged");
    let t = db.begin("writer", 1).unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(1), b"one").unwrap();
    }
    let active = db.active_transactions();
    assert_eq!(active.len(), 1);
    assert!(active[0].first_lsn >= end.as_u64() && active[0].first_lsn < active[0].last_lsn);
    t.commit(false).unwrap();
    assert!(db.active_transactions().is_empty());
    assert!(db.log.end_lsn() > end);
    assert_eq!(contents(&tree).len(), 1);
}

/// A durable commit whose flush wait is put off (the TDS connection hands its reply to
/// the log writer) keeps its locks until the commit is durable, then lets them go on the
/// log writer's thread, counting the wait as the session's WRITELOG.
#[test]
fn a_deferred_commit_keeps_its_locks_until_it_is_durable() {
    use std::time::Duration;
    use txn::lock::{LockMode, LockResource, LockTimeout};
    use txn::xact::CommitOutcome;
    let fs = Arc::new(MemFs::new());
    let db = new_db(&fs, 12, "deferred");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    // Nothing is flushed unless asked for.
    db.log.set_flush_interval(Duration::from_secs(3600));
    let key = LockResource::key(12, 10, 42);
    let waits = Arc::new(diag::WaitStats::new());
    let session = diag::SessionScope::enter(waits.clone());
    let t = db.begin("w", 1).unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(1), &[1u8; 20]).unwrap();
    }
    db.locks.lock(t.owner(), key, LockMode::X, LockTimeout::NoWait).unwrap();
    let CommitOutcome::Pending(p) = t.commit_deferrable(false).unwrap() else {
        panic!("a durable commit with changes waits for its flush")
    };
    drop(session);
    let lsn = p.lsn();
    assert!(db.log.flushed_lsn() < lsn, "nothing asked for the flush yet");
    let other = db.begin("r", 2).unwrap();
    assert!(
        db.locks.lock(other.owner(), key, LockMode::S, LockTimeout::NoWait).is_err(),
        "the committed change is not readable before it is durable"
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let log = db.log.clone();
    p.when_durable(move |r| {
        let _ = tx.send((r.is_ok(), log.flushed_lsn(), std::thread::current().id()));
    });
    let (ok, flushed, thread) = rx.recv_timeout(Duration::from_secs(10)).expect("the commit completed");
    assert!(ok);
    assert!(flushed >= lsn, "completed only once durable");
    assert_ne!(thread, std::thread::current().id(), "completed by the log writer");
    db.locks.lock(other.owner(), key, LockMode::S, LockTimeout::NoWait).expect("locks released");
    let w = waits.get(diag::WaitType::WRITELOG);
    assert_eq!(w.waiting_tasks_count, 1, "the wait is the committing session's WRITELOG");
    other.commit(false).unwrap();

    // Waiting on the session's own thread, and dropping without waiting, release the
    // locks only after the flush too.
    for wait in [true, false] {
        let t = db.begin("w", 1).unwrap();
        {
            let _in = t.enter();
            tree.insert(&k(if wait { 2 } else { 3 }), &[1u8; 20]).unwrap();
        }
        db.locks.lock(t.owner(), key, LockMode::X, LockTimeout::NoWait).unwrap();
        let CommitOutcome::Pending(p) = t.commit_deferrable(false).unwrap() else { panic!("pending") };
        let lsn = p.lsn();
        if wait {
            assert_eq!(p.wait().unwrap().lsn, lsn);
        } else {
            drop(p);
        }
        assert!(db.log.flushed_lsn() >= lsn);
        let r = db.begin("r", 2).unwrap();
        db.locks.lock(r.owner(), key, LockMode::S, LockTimeout::NoWait).expect("locks released");
        r.commit(false).unwrap();
    }
    assert_eq!(contents(&tree).len(), 3);

    // Delayed durability and read-only transactions have nothing to wait for.
    db.set_delayed_durability(DelayedDurability::Forced);
    let t = db.begin("d", 1).unwrap();
    {
        let _in = t.enter();
        tree.insert(&k(4), &[1u8; 20]).unwrap();
    }
    assert!(matches!(t.commit_deferrable(false).unwrap(), CommitOutcome::Done(i) if i.delayed));
    db.set_delayed_durability(DelayedDurability::Disabled);
    let t = db.begin("ro", 1).unwrap();
    assert!(matches!(t.commit_deferrable(false).unwrap(), CommitOutcome::Done(_)));
}
