//! Isolation levels over locked B-tree access (`txn::access`): dirty reads, non-repeatable
//! reads and phantoms allowed or prevented level by level, LOCK_TIMEOUT (1222), deadlocks
//! (1205), writers blocking writers, uncommitted deletes seen by scans, the locks each
//! level leaves in sys.dm_tran_locks, and that every lock is gone once all transactions
//! have ended.
//!
//! Every test runs two or three transactions on their own threads and synchronizes them
//! explicitly: a blocked request is detected through the lock manager's table of waits
//! (sys.dm_os_waiting_tasks), never by sleeping and hoping.

use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, MemFs};
use storage::BufferPool;
use txn::access::{AccessError, LockedIndex, LockingOptions, SessionContext};
use txn::lock::{IsolationLevel, LockMode, LockTimeout, LockWait, RequestStatus};
use txn::recovery::LogSpec;
use txn::xact::{Transaction, TxnDb};
use txn::LogConfig;

use IsolationLevel::{ReadCommitted, ReadUncommitted, RepeatableRead, Serializable};

const OBJECT_ID: u32 = 245575913;

struct Fixture {
    db: Arc<TxnDb>,
    index: LockedIndex,
}

/// A fresh database (its own lock manager) with one unique tree holding `rows`.
fn setup(rows: &[(u32, &str)]) -> Fixture {
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let name = format!("iso_{n}");
    let fs: Arc<dyn FileSystem> = Arc::new(MemFs::new());
    let data = FileSpec {
        file_id: 1,
        name: name.clone(),
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
    let db = TxnDb::create(BufferPool::new(256), fs, 300 + n as u16, &name, vec![data], log, LogConfig::default())
        .expect("create database");
    let tree = BTree::create(&db.db, OBJECT_ID, 1, BTreeOptions { unique: true }).expect("create tree");
    let index = LockedIndex::new(&db, tree).expect("locked index");
    let t = db.begin("load", 50).expect("begin");
    let ctx = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    for (k, v) in rows {
        index.insert(&ctx, &key(*k), v.as_bytes()).expect("load");
    }
    t.commit(false).expect("commit load");
    assert_no_locks(&db);
    Fixture { db, index }
}

fn key(i: u32) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

fn ctx(t: &Transaction, isolation: IsolationLevel, lock_timeout: LockTimeout) -> SessionContext<'_> {
    SessionContext::new(t, LockingOptions { isolation, lock_timeout, ..Default::default() })
}

fn get(f: &Fixture, c: &SessionContext<'_>, k: u32) -> Result<Option<String>, AccessError> {
    Ok(f.index.get(c, &key(k))?.map(|v| String::from_utf8_lossy(&v).into_owned()))
}

/// The keys (as numbers) a scan returns.
fn scan_keys(
    f: &Fixture,
    c: &SessionContext<'_>,
    lower: Bound<u32>,
    upper: Bound<u32>,
) -> Result<Vec<u32>, AccessError> {
    let lo = lower.map(key);
    let hi = upper.map(key);
    let mut out = Vec::new();
    f.index.scan(c, lo.as_ref().map(|k| k.as_slice()), hi.as_ref().map(|k| k.as_slice()), |k, _| {
        out.push(u32::from_be_bytes([k[0], k[1], k[2], k[3]]));
        true
    })?;
    Ok(out)
}

/// Waits until `session` has a lock request waiting (sys.dm_os_waiting_tasks), at most
/// 5 s, and returns the wait.
fn wait_until_blocked(db: &TxnDb, session: i32) -> LockWait {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(w) = db.locks.waiting().into_iter().find(|w| w.session_id == session) {
            return w;
        }
        assert!(Instant::now() < deadline, "session {session} never blocked");
        thread::sleep(Duration::from_millis(1));
    }
}

fn assert_no_locks(db: &TxnDb) {
    let rows = db.locks.snapshot();
    assert!(rows.is_empty(), "locks left behind: {rows:?}");
}

fn err_number<T: std::fmt::Debug>(r: Result<T, AccessError>) -> i32 {
    match r {
        Ok(v) => panic!("expected an error, got {v:?}"),
        Err(e) => e.to_sql_error().number,
    }
}

/// The (resource, mode) pairs `t` holds, excluding nothing.
fn held(db: &TxnDb, t: &Transaction) -> Vec<(txn::lock::LockResource, LockMode)> {
    db.locks.held(t.owner()).into_iter().map(|h| (h.resource, h.mode)).collect()
}

// ---- dirty reads ----

#[test]
fn read_uncommitted_reads_dirty_data() {
    let f = setup(&[(1, "v1")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    assert!(f.index.update(&ctx(&t1, ReadCommitted, LockTimeout::Infinite), &key(1), b"dirty").unwrap());
    let (to_t2, from_t1) = mpsc::channel::<()>();
    let (to_t1, from_t2) = mpsc::channel::<()>();
    let f = &f;
    thread::scope(|s| {
        s.spawn(move || {
            let t2 = f.db.begin("t2", 52).unwrap();
            let c = ctx(&t2, ReadUncommitted, LockTimeout::NoWait);
            // No S lock: the uncommitted value, at once, even with LOCK_TIMEOUT 0.
            assert_eq!(get(f, &c, 1).unwrap().as_deref(), Some("dirty"));
            assert_eq!(scan_keys(f, &c, Unbounded, Unbounded).unwrap(), vec![1]);
            assert!(held(&f.db, &t2).is_empty(), "READ UNCOMMITTED takes no locks");
            to_t1.send(()).unwrap();
            from_t1.recv().unwrap();
            assert_eq!(get(f, &c, 1).unwrap().as_deref(), Some("v1"), "the rolled-back value is gone");
            t2.commit(false).unwrap();
        });
        from_t2.recv().unwrap();
        t1.rollback().unwrap();
        to_t2.send(()).unwrap();
    });
    assert_no_locks(&f.db);
}

#[test]
fn read_committed_waits_for_uncommitted_update() {
    for commit in [true, false] {
        let f = setup(&[(1, "v1")]);
        let t1 = f.db.begin("t1", 51).unwrap();
        assert!(f.index.update(&ctx(&t1, ReadCommitted, LockTimeout::Infinite), &key(1), b"new").unwrap());
        let waits = Arc::new(diag::WaitStats::new());
        let (timed_out, timed_out_rx) = mpsc::channel::<()>();
        let (f, session_waits) = (&f, waits.clone());
        thread::scope(|s| {
            let reader = s.spawn(move || {
                let _session = diag::SessionScope::enter(session_waits);
                let t2 = f.db.begin("t2", 52).unwrap();
                // LOCK_TIMEOUT 100: the S request waits 100 ms, then 1222.
                let started = Instant::now();
                let r = get(f, &ctx(&t2, ReadCommitted, LockTimeout::Millis(100)), 1);
                assert_eq!(err_number(r), 1222);
                assert!(started.elapsed() >= Duration::from_millis(100));
                timed_out.send(()).unwrap();
                // Infinite: waits until t1 ends, then reads the committed value.
                let v = get(f, &ctx(&t2, ReadCommitted, LockTimeout::Infinite), 1).unwrap();
                assert!(held(&f.db, &t2).is_empty(), "READ COMMITTED releases its locks after the read");
                t2.commit(false).unwrap();
                v
            });
            // The first wait is over: the wait seen now is the second, unbounded one.
            timed_out_rx.recv().unwrap();
            let w = wait_until_blocked(&f.db, 52);
            assert_eq!(w.mode, LockMode::S);
            assert_eq!(w.resource, f.index.key_resource(&key(1)));
            assert_eq!(w.blocking_session_ids, vec![51]);
            if commit {
                t1.commit(false).unwrap();
            } else {
                t1.rollback().unwrap();
            }
            let seen = reader.join().unwrap();
            assert_eq!(seen.as_deref(), Some(if commit { "new" } else { "v1" }));
        });
        let lck_m_s = waits.get(diag::WaitType::LCK_M_S);
        assert_eq!(lck_m_s.waiting_tasks_count, 2, "both S waits are in the session's wait table");
        assert!(lck_m_s.wait_time_ms >= 100);
        assert_no_locks(&f.db);
    }
}

// ---- non-repeatable reads ----

#[test]
fn read_committed_allows_non_repeatable_reads() {
    let f = setup(&[(1, "v1")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    let c1 = ctx(&t1, ReadCommitted, LockTimeout::Infinite);
    assert_eq!(get(&f, &c1, 1).unwrap().as_deref(), Some("v1"));
    thread::scope(|s| {
        s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            // NOWAIT: t1 holds no lock on the row any more, so this can't wait.
            assert!(f.index.update(&ctx(&t2, ReadCommitted, LockTimeout::NoWait), &key(1), b"v2").unwrap());
            t2.commit(false).unwrap();
        })
        .join()
        .unwrap();
    });
    assert_eq!(get(&f, &c1, 1).unwrap().as_deref(), Some("v2"), "the second read sees the other update");
    t1.commit(false).unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn repeatable_read_blocks_the_updater_until_the_reader_ends() {
    let f = setup(&[(1, "v1")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    assert_eq!(get(&f, &ctx(&t1, RepeatableRead, LockTimeout::Infinite), 1).unwrap().as_deref(), Some("v1"));
    thread::scope(|s| {
        let writer = s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            assert_eq!(err_number(f.index.update(&ctx(&t2, ReadCommitted, LockTimeout::NoWait), &key(1), b"v2")), 1222);
            let started = Instant::now();
            assert!(f.index.update(&ctx(&t2, ReadCommitted, LockTimeout::Infinite), &key(1), b"v2").unwrap());
            let waited = started.elapsed();
            t2.commit(false).unwrap();
            waited
        });
        let w = wait_until_blocked(&f.db, 52);
        assert_eq!(w.mode, LockMode::X);
        // The writer waits; t1's second read sees the same value.
        assert_eq!(get(&f, &ctx(&t1, RepeatableRead, LockTimeout::Infinite), 1).unwrap().as_deref(), Some("v1"));
        thread::sleep(Duration::from_millis(20));
        assert!(!writer.is_finished(), "the update must wait for the REPEATABLE READ transaction");
        t1.commit(false).unwrap();
        assert!(writer.join().unwrap() >= Duration::from_millis(20));
    });
    let t3 = f.db.begin("t3", 53).unwrap();
    assert_eq!(get(&f, &ctx(&t3, ReadCommitted, LockTimeout::NoWait), 1).unwrap().as_deref(), Some("v2"));
    t3.commit(false).unwrap();
    assert_no_locks(&f.db);
}

// ---- phantoms ----

#[test]
fn repeatable_read_allows_phantoms() {
    let f = setup(&[(10, "a"), (20, "b"), (30, "c"), (40, "d")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    let c1 = ctx(&t1, RepeatableRead, LockTimeout::Infinite);
    assert_eq!(scan_keys(&f, &c1, Included(10), Included(30)).unwrap(), vec![10, 20, 30]);
    thread::scope(|s| {
        s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            // No range locks: the insert into the scanned range doesn't wait.
            f.index.insert(&ctx(&t2, ReadCommitted, LockTimeout::NoWait), &key(25), b"new").unwrap();
            t2.commit(false).unwrap();
        })
        .join()
        .unwrap();
    });
    assert_eq!(scan_keys(&f, &c1, Included(10), Included(30)).unwrap(), vec![10, 20, 25, 30], "a phantom");
    t1.commit(false).unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn serializable_makes_inserts_into_the_scanned_range_wait() {
    let f = setup(&[(10, "a"), (20, "b"), (30, "c"), (40, "d")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    let c1 = ctx(&t1, Serializable, LockTimeout::Infinite);
    assert_eq!(scan_keys(&f, &c1, Included(10), Included(30)).unwrap(), vec![10, 20, 30]);
    // RangeS-S on every key read and on the next key after the range.
    let mut range_locked: Vec<_> =
        held(&f.db, &t1).into_iter().filter(|(_, m)| *m == LockMode::RangeS_S).map(|(r, _)| r).collect();
    range_locked.sort();
    let mut expected: Vec<_> = [10, 20, 30, 40].iter().map(|&k| f.index.key_resource(&key(k))).collect();
    expected.sort();
    assert_eq!(range_locked, expected);
    assert!(held(&f.db, &t1).contains(&(f.index.object_resource(), LockMode::IS)));
    thread::scope(|s| {
        let inserter = s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            let now = ctx(&t2, ReadCommitted, LockTimeout::NoWait);
            // Inside the range, in the gap after it, before its first key: all locked.
            for k in [25, 35, 5] {
                assert_eq!(err_number(f.index.insert(&now, &key(k), b"x")), 1222, "insert {k}");
            }
            // Past the next key: free.
            f.index.insert(&now, &key(45), b"x").unwrap();
            f.index.insert(&ctx(&t2, ReadCommitted, LockTimeout::Infinite), &key(25), b"new").unwrap();
            t2.commit(false).unwrap();
        });
        let w = wait_until_blocked(&f.db, 52);
        assert_eq!(w.mode, LockMode::RangeI_N);
        assert_eq!(w.resource, f.index.key_resource(&key(30)), "RangeI-N on the key after the new one");
        // The scans agree while the insert waits.
        let c1 = ctx(&t1, Serializable, LockTimeout::Infinite);
        assert_eq!(scan_keys(&f, &c1, Included(10), Included(30)).unwrap(), vec![10, 20, 30]);
        assert!(!inserter.is_finished());
        t1.commit(false).unwrap();
        inserter.join().unwrap();
    });
    let t3 = f.db.begin("t3", 53).unwrap();
    assert_eq!(
        scan_keys(&f, &ctx(&t3, Serializable, LockTimeout::NoWait), Unbounded, Unbounded).unwrap(),
        vec![10, 20, 25, 30, 40, 45]
    );
    // A scan to the end of the index locks the end-of-index resource.
    assert!(held(&f.db, &t3).contains(&(f.index.end_of_index_resource(), LockMode::RangeS_S)));
    t3.commit(false).unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn serializable_locks_the_gap_of_a_missing_key() {
    let f = setup(&[(10, "a"), (20, "b")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    let c1 = ctx(&t1, Serializable, LockTimeout::Infinite);
    assert_eq!(get(&f, &c1, 15).unwrap(), None);
    // Only the next key's range lock remains (no lock on the missing key's hash).
    let mut locks = held(&f.db, &t1);
    locks.sort();
    let mut expected =
        vec![(f.index.object_resource(), LockMode::IS), (f.index.key_resource(&key(20)), LockMode::RangeS_S)];
    expected.sort();
    assert_eq!(locks, expected);
    thread::scope(|s| {
        s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            let c2 = ctx(&t2, ReadCommitted, LockTimeout::Millis(50));
            assert_eq!(err_number(f.index.insert(&c2, &key(15), b"x")), 1222);
            assert_eq!(err_number(f.index.insert(&c2, &key(12), b"x")), 1222);
            f.index.insert(&c2, &key(25), b"x").unwrap(); // after the locked range
            t2.commit(false).unwrap();
        })
        .join()
        .unwrap();
    });
    assert_eq!(get(&f, &c1, 15).unwrap(), None, "still missing");
    t1.commit(false).unwrap();
    assert_no_locks(&f.db);
}

// ---- LOCK_TIMEOUT ----

#[test]
fn lock_timeout_nowait_and_millis() {
    let f = setup(&[(1, "v1"), (2, "v2")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    assert!(f.index.update(&ctx(&t1, ReadCommitted, LockTimeout::Infinite), &key(1), b"x").unwrap());
    thread::scope(|s| {
        s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            let started = Instant::now();
            let e = f.index.get(&ctx(&t2, ReadCommitted, LockTimeout::NoWait), &key(1)).unwrap_err();
            assert!(started.elapsed() < Duration::from_millis(50), "NOWAIT fails at once");
            let sql = e.to_sql_error();
            assert_eq!(
                (sql.number, sql.severity, sql.message.as_str()),
                (1222, 16, "Lock request time out period exceeded.")
            );
            assert!(!e.requires_rollback());

            let started = Instant::now();
            assert_eq!(
                err_number(f.index.update(&ctx(&t2, ReadCommitted, LockTimeout::Millis(50)), &key(1), b"y")),
                1222
            );
            let waited = started.elapsed();
            assert!(waited >= Duration::from_millis(50) && waited < Duration::from_secs(2), "waited {waited:?}");

            // 1222 fails the statement only: the transaction goes on.
            assert!(f.index.update(&ctx(&t2, ReadCommitted, LockTimeout::NoWait), &key(2), b"t2").unwrap());
            t2.commit(false).unwrap();
        })
        .join()
        .unwrap();
    });
    t1.commit(false).unwrap();
    let t3 = f.db.begin("t3", 53).unwrap();
    let c3 = ctx(&t3, ReadCommitted, LockTimeout::NoWait);
    assert_eq!((get(&f, &c3, 1).unwrap(), get(&f, &c3, 2).unwrap()), (Some("x".into()), Some("t2".into())));
    t3.commit(false).unwrap();
    assert_eq!(f.db.locks.stats().lock_timeouts, 2);
    assert_no_locks(&f.db);
}

// ---- deadlocks ----

#[test]
fn deadlock_picks_one_victim_and_the_survivor_completes() {
    let f = setup(&[(1, "a0"), (2, "b0")]);
    let barrier = Barrier::new(2);
    // Each side: (first key, second key, session). Returns whether it was the victim.
    let side = |first: u32, second: u32, session: i32, value: &'static [u8]| {
        let t = f.db.begin("user_transaction", session).unwrap();
        let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
        assert!(f.index.update(&c, &key(first), value).unwrap());
        barrier.wait();
        let started = Instant::now();
        match f.index.update(&c, &key(second), value) {
            Ok(found) => {
                assert!(found);
                t.commit(false).unwrap();
                false
            }
            Err(e) => {
                assert_eq!(e.to_sql_error().number, 1205);
                assert!(e.requires_rollback());
                assert!(started.elapsed() < Duration::from_secs(1), "deadlock found at the wait");
                // The victim's locks stay until it rolls back.
                assert!(!f.db.locks.held(t.owner()).is_empty());
                t.rollback().unwrap();
                true
            }
        }
    };
    let (v1, v2) = thread::scope(|s| {
        let a = s.spawn(|| side(1, 2, 51, b"t1"));
        let b = s.spawn(|| side(2, 1, 52, b"t2"));
        (a.join().unwrap(), b.join().unwrap())
    });
    assert!(v1 ^ v2, "exactly one victim (t1 victim: {v1}, t2 victim: {v2})");
    assert_eq!(f.db.locks.deadlock_count(), 1);
    let survivor = if v1 { "t2" } else { "t1" };
    let t = f.db.begin("check", 53).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::NoWait);
    assert_eq!(get(&f, &c, 1).unwrap().as_deref(), Some(survivor));
    assert_eq!(get(&f, &c, 2).unwrap().as_deref(), Some(survivor));
    t.commit(false).unwrap();
    assert_no_locks(&f.db);
}

// ---- writers ----

#[test]
fn writers_block_writers() {
    let f = setup(&[(1, "v0")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    let c1 = ctx(&t1, ReadCommitted, LockTimeout::Infinite);
    assert!(f.index.update(&c1, &key(1), b"t1").unwrap());
    thread::scope(|s| {
        let second = s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            let c2 = ctx(&t2, ReadCommitted, LockTimeout::Infinite);
            // Read-modify-write with UPDLOCK: waits for t1, then sees its committed value.
            let seen = f.index.get_for_update(&c2, &key(1)).unwrap();
            let mut next = seen.clone().unwrap_or_default();
            next.extend_from_slice(b"+t2");
            assert!(f.index.update(&c2, &key(1), &next).unwrap());
            t2.commit(false).unwrap();
            seen
        });
        let w = wait_until_blocked(&f.db, 52);
        assert_eq!(w.mode, LockMode::U);
        // A plain second writer waits too.
        let t3 = f.db.begin("t3", 53).unwrap();
        assert_eq!(err_number(f.index.update(&ctx(&t3, ReadCommitted, LockTimeout::NoWait), &key(1), b"t3")), 1222);
        t3.rollback().unwrap();
        t1.commit(false).unwrap();
        assert_eq!(second.join().unwrap().as_deref(), Some(&b"t1"[..]));
    });
    let t = f.db.begin("check", 54).unwrap();
    assert_eq!(get(&f, &ctx(&t, ReadCommitted, LockTimeout::NoWait), 1).unwrap().as_deref(), Some("t1+t2"));
    t.commit(false).unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn updlock_read_modify_write_loses_no_updates() {
    let f = setup(&[(1, "0")]);
    thread::scope(|s| {
        for session in [51, 52, 53] {
            let f = &f;
            s.spawn(move || {
                for _ in 0..20 {
                    let t = f.db.begin("increment", session).unwrap();
                    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
                    let v: u32 = String::from_utf8(f.index.get_for_update(&c, &key(1)).unwrap().unwrap())
                        .unwrap()
                        .parse()
                        .unwrap();
                    assert!(f.index.update(&c, &key(1), (v + 1).to_string().as_bytes()).unwrap());
                    t.commit(false).unwrap();
                }
            });
        }
    });
    let t = f.db.begin("check", 54).unwrap();
    assert_eq!(get(&f, &ctx(&t, ReadCommitted, LockTimeout::NoWait), 1).unwrap().as_deref(), Some("60"));
    t.commit(false).unwrap();
    assert_eq!(f.db.locks.deadlock_count(), 0, "U locks serialize read-modify-write without deadlocks");
    assert_no_locks(&f.db);
}

// ---- deletes (ghosts) ----

#[test]
fn scans_wait_for_uncommitted_deletes() {
    let f = setup(&[(10, "a"), (20, "b"), (30, "c")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    assert!(f.index.delete(&ctx(&t1, ReadCommitted, LockTimeout::Infinite), &key(20)).unwrap());
    thread::scope(|s| {
        let reader = s.spawn(|| {
            let t2 = f.db.begin("t2", 52).unwrap();
            // READ UNCOMMITTED sees the delete; READ COMMITTED waits on the deleted key.
            assert_eq!(
                scan_keys(&f, &ctx(&t2, ReadUncommitted, LockTimeout::NoWait), Unbounded, Unbounded).unwrap(),
                vec![10, 30]
            );
            assert_eq!(
                err_number(scan_keys(&f, &ctx(&t2, ReadCommitted, LockTimeout::NoWait), Unbounded, Unbounded)),
                1222
            );
            let keys = scan_keys(&f, &ctx(&t2, ReadCommitted, LockTimeout::Infinite), Unbounded, Unbounded).unwrap();
            t2.commit(false).unwrap();
            keys
        });
        let w = wait_until_blocked(&f.db, 52);
        assert_eq!(w.resource, f.index.key_resource(&key(20)));
        t1.rollback().unwrap();
        assert_eq!(reader.join().unwrap(), vec![10, 20, 30], "the delete was rolled back");
    });
    // Committed this time: the scan skips the key for good, and the ghost can go.
    let t3 = f.db.begin("t3", 53).unwrap();
    assert!(f.index.delete(&ctx(&t3, Serializable, LockTimeout::Infinite), &key(20)).unwrap());
    assert_eq!(f.index.cleanup_ghosts(), 0, "the deleter hasn't committed");
    t3.commit(false).unwrap();
    let t4 = f.db.begin("t4", 54).unwrap();
    assert_eq!(
        scan_keys(&f, &ctx(&t4, RepeatableRead, LockTimeout::NoWait), Unbounded, Unbounded).unwrap(),
        vec![10, 30]
    );
    t4.commit(false).unwrap();
    // One ghost entry per key: the second delete took over the first one's.
    assert_eq!(f.index.cleanup_ghosts(), 1);
    assert_eq!(f.index.ghost_count(), 0);
    assert_no_locks(&f.db);
}

#[test]
fn serializable_scan_keeps_out_an_insert_next_to_an_uncommitted_delete() {
    // The ghost of a deleted key is a range boundary: inserting below it while a
    // SERIALIZABLE scan covers it waits.
    let f = setup(&[(10, "a"), (20, "b"), (30, "c")]);
    let t1 = f.db.begin("t1", 51).unwrap();
    assert!(f.index.delete(&ctx(&t1, ReadCommitted, LockTimeout::Infinite), &key(20)).unwrap());
    let t2 = f.db.begin("t2", 52).unwrap();
    let c2 = ctx(&t2, Serializable, LockTimeout::Millis(50));
    assert_eq!(err_number(scan_keys(&f, &c2, Included(10), Included(25))), 1222, "waits on the ghost");
    t1.commit(false).unwrap();
    assert_eq!(scan_keys(&f, &c2, Included(10), Included(25)).unwrap(), vec![10]);
    let t3 = f.db.begin("t3", 53).unwrap();
    let c3 = ctx(&t3, ReadCommitted, LockTimeout::NoWait);
    assert_eq!(err_number(f.index.insert(&c3, &key(15), b"x")), 1222);
    assert_eq!(err_number(f.index.insert(&c3, &key(22), b"x")), 1222);
    assert_eq!(f.index.cleanup_ghosts(), 0, "the ghost is a locked range boundary");
    t2.commit(false).unwrap();
    f.index.insert(&c3, &key(15), b"x").unwrap();
    t3.commit(false).unwrap();
    assert_eq!(f.index.cleanup_ghosts(), 1);
    assert_no_locks(&f.db);
}

// ---- the locks each level takes ----

#[test]
fn locks_left_by_each_isolation_level() {
    let f = setup(&[(1, "a"), (2, "b")]);
    let obj = f.index.object_resource();
    let k1 = f.index.key_resource(&key(1));
    let k2 = f.index.key_resource(&key(2));
    let sorted = |mut v: Vec<(txn::lock::LockResource, LockMode)>| {
        v.sort();
        v
    };
    for (level, after_get) in [
        (ReadUncommitted, vec![]),
        (ReadCommitted, vec![]),
        (RepeatableRead, vec![(obj, LockMode::IS), (k1, LockMode::S)]),
        (Serializable, vec![(obj, LockMode::IS), (k1, LockMode::RangeS_S)]),
    ] {
        let t = f.db.begin("t", 51).unwrap();
        let c = ctx(&t, level, LockTimeout::NoWait);
        assert_eq!(get(&f, &c, 1).unwrap().as_deref(), Some("a"));
        assert_eq!(sorted(held(&f.db, &t)), sorted(after_get), "{level}");
        // Writes: IX on the table, X on the key (RangeX-X at SERIALIZABLE).
        assert!(f.index.update(&c, &key(2), b"b").unwrap());
        let x = if level == Serializable { LockMode::RangeX_X } else { LockMode::X };
        let locks = held(&f.db, &t);
        assert!(locks.contains(&(k2, x)), "{level}: {locks:?}");
        assert!(locks.contains(&(obj, LockMode::IX)), "{level}: {locks:?}");
        assert!(f.db.locks.snapshot().iter().all(|r| r.request_status == RequestStatus::Grant));
        t.commit(false).unwrap();
    }
    assert_no_locks(&f.db);
}

#[test]
fn snapshot_isolation_and_rcsi_are_refused() {
    let f = setup(&[(1, "a")]);
    let t = f.db.begin("t", 51).unwrap();
    let snap = SessionContext::new(&t, LockingOptions { isolation: IsolationLevel::Snapshot, ..Default::default() });
    assert_eq!(t.owner().isolation_level(), IsolationLevel::Snapshot);
    let e = f.index.get(&snap, &key(1)).unwrap_err();
    let sql = e.to_sql_error();
    assert_eq!((sql.number, sql.severity), (3952, 16));
    assert!(sql.message.contains("snapshot isolation is not allowed"), "{}", sql.message);
    assert_eq!(err_number(f.index.insert(&snap, &key(2), b"x")), 3952);
    let rcsi = LockingOptions { read_committed_snapshot: true, ..Default::default() };
    assert_eq!(err_number(f.index.get(&SessionContext::new(&t, rcsi), &key(1))), 3952);
    // RCSI changes READ COMMITTED only.
    let rr = SessionContext::new(&t, LockingOptions { isolation: RepeatableRead, ..rcsi });
    assert_eq!(get(&f, &rr, 1).unwrap().as_deref(), Some("a"));
    t.rollback().unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn scan_bounds_and_early_stop() {
    let f = setup(&[(10, "a"), (20, "b"), (30, "c"), (40, "d")]);
    for level in [ReadUncommitted, ReadCommitted, RepeatableRead, Serializable] {
        let t = f.db.begin("t", 51).unwrap();
        let c = ctx(&t, level, LockTimeout::NoWait);
        assert_eq!(scan_keys(&f, &c, Excluded(10), Excluded(40)).unwrap(), vec![20, 30], "{level}");
        assert_eq!(scan_keys(&f, &c, Included(15), Unbounded).unwrap(), vec![20, 30, 40], "{level}");
        assert_eq!(scan_keys(&f, &c, Unbounded, Included(10)).unwrap(), vec![10], "{level}");
        assert_eq!(scan_keys(&f, &c, Included(41), Unbounded).unwrap(), Vec::<u32>::new(), "{level}");
        let mut first = Vec::new();
        let done = f
            .index
            .scan(&c, Unbounded, Unbounded, |k, _| {
                first.push(k.to_vec());
                false
            })
            .unwrap();
        assert!(!done);
        assert_eq!(first, vec![key(10)]);
        t.commit(false).unwrap();
    }
    assert_no_locks(&f.db);
}

// ---- the next-key protocol under contention ----

/// A small deterministic generator (xorshift), one per thread.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u32) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as u32
    }
}

#[test]
fn serializable_scans_repeat_under_concurrent_inserts_and_deletes() {
    let rows: Vec<(u32, &str)> = (0..40).map(|i| (i * 10, "r")).collect();
    let f = setup(&rows);
    let f = &f;
    let deadline = Instant::now() + Duration::from_millis(1500);
    let (scans, victims) = thread::scope(|s| {
        for (session, seed) in [(61, 0x9e37_79b9_u64), (62, 0x7f4a_7c15)] {
            s.spawn(move || {
                let mut rng = Rng(seed);
                while Instant::now() < deadline {
                    let t = f.db.begin("writer", session).unwrap();
                    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
                    let mut victim = false;
                    for _ in 0..3 {
                        let k = key(rng.below(400));
                        let r = if rng.below(2) == 0 {
                            f.index.insert(&c, &k, b"w")
                        } else {
                            f.index.delete(&c, &k).map(drop)
                        };
                        match r {
                            Ok(()) => {}
                            Err(e) if e.number() == 2601 => {}
                            Err(e) if e.requires_rollback() => {
                                victim = true;
                                break;
                            }
                            Err(e) => panic!("writer: {e}"),
                        }
                    }
                    if victim || rng.below(4) == 0 {
                        t.rollback().unwrap();
                    } else {
                        t.commit(false).unwrap();
                    }
                }
            });
        }
        let reader = s.spawn(move || {
            let (mut scans, mut victims) = (0, 0);
            let mut rng = Rng(0x2545_f491);
            while Instant::now() < deadline {
                let t = f.db.begin("reader", 63).unwrap();
                let c = ctx(&t, Serializable, LockTimeout::Infinite);
                let lo = rng.below(300);
                let hi = lo + rng.below(100);
                let attempt = || -> Result<(), AccessError> {
                    let first = scan_keys(f, &c, Included(lo), Included(hi))?;
                    thread::yield_now();
                    let missing = get(f, &c, lo + 1)?;
                    thread::sleep(Duration::from_micros(200));
                    assert_eq!(scan_keys(f, &c, Included(lo), Included(hi))?, first, "phantom in [{lo}, {hi}]");
                    assert_eq!(get(f, &c, lo + 1)?, missing, "key {} changed", lo + 1);
                    Ok(())
                };
                match attempt() {
                    Ok(()) => {
                        scans += 1;
                        t.commit(false).unwrap();
                    }
                    Err(e) if e.requires_rollback() => {
                        victims += 1;
                        t.rollback().unwrap();
                    }
                    Err(e) => panic!("reader: {e}"),
                }
            }
            (scans, victims)
        });
        reader.join().unwrap()
    });
    assert!(scans > 10, "only {scans} scans ({victims} deadlock victims)");
    assert_no_locks(&f.db);
    assert_eq!(f.index.tree().check().unwrap().entries as usize, f.index.tree().count().unwrap() as usize);
}

/// A delete of a key that is not there must not look, even for an instant, like a ghost
/// an insert could take for its next key: RangeI-N on it would not meet the range lock
/// a SERIALIZABLE scan holds on the key after it, and the insert would be a phantom.
#[test]
fn deleting_an_absent_key_opens_no_gap_in_a_serializable_range() {
    let f = setup(&[(0, "a"), (60, "b")]);
    let f = &f;
    let reader = f.db.begin("reader", 71).unwrap();
    let rc = ctx(&reader, Serializable, LockTimeout::Infinite);
    // [0, 50] is locked up to the first key after it: RangeS-S on 0 and on 60.
    assert_eq!(scan_keys(f, &rc, Included(0), Included(50)).unwrap(), vec![0]);
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (inserted, refused) = thread::scope(|s| {
        s.spawn(|| {
            // Deletes of the absent key 50, between 45 and 60, as fast as they go.
            while !stop.load(Ordering::Relaxed) {
                let t = f.db.begin("deleter", 72).unwrap();
                let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
                for _ in 0..100 {
                    assert!(!f.index.delete(&c, &key(50)).unwrap());
                }
                t.commit(false).unwrap();
            }
        });
        let (mut inserted, mut refused) = (0, 0);
        let deadline = Instant::now() + Duration::from_millis(400);
        while Instant::now() < deadline {
            let t = f.db.begin("inserter", 73).unwrap();
            let c = ctx(&t, ReadCommitted, LockTimeout::NoWait);
            match f.index.insert(&c, &key(45), b"phantom") {
                Ok(()) => inserted += 1,
                Err(e) if e.number() == 1222 => refused += 1,
                Err(e) => panic!("insert: {e}"),
            }
            t.rollback().unwrap();
        }
        stop.store(true, Ordering::Relaxed);
        (inserted, refused)
    });
    assert_eq!(inserted, 0, "an insert got into the locked range ({refused} refused)");
    assert!(refused > 0);
    assert_eq!(scan_keys(f, &rc, Included(0), Included(50)).unwrap(), vec![0]);
    reader.commit(false).unwrap();
    assert_no_locks(&f.db);
}

fn run(rows: &[(Vec<u8>, Vec<u8>)]) -> Vec<(&[u8], &[u8])> {
    rows.iter().map(|(k, v)| (k.as_slice(), v.as_slice())).collect()
}

fn count(f: &Fixture) -> usize {
    let t = f.db.begin("count", 59).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    let mut n = 0;
    f.index
        .scan(&c, Unbounded, Unbounded, |_, _| {
            n += 1;
            true
        })
        .unwrap();
    t.commit(false).unwrap();
    n
}

#[test]
fn insert_run_locks_every_key_and_rolls_back_with_its_transaction() {
    let f = setup(&[(5, "five")]);
    let t = f.db.begin("run", 52).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    // A duplicate in the middle: the rows before it are in, each X-locked.
    let rows: Vec<_> = [1u32, 2, 3, 4, 5, 6].iter().map(|&i| (key(i), b"new".to_vec())).collect();
    let (n, r) = f.index.insert_run(&c, &run(&rows));
    assert_eq!(n, 4);
    assert_eq!(err_number(r), 2601);
    let other = f.db.begin("reader", 53).unwrap();
    let oc = ctx(&other, ReadCommitted, LockTimeout::NoWait);
    assert_eq!(err_number(get(&f, &oc, 2)), 1222);
    // The duplicate's X lock stays too, as a failed single insert's does.
    assert_eq!(err_number(get(&f, &oc, 5)), 1222);
    other.commit(false).unwrap();
    t.rollback().unwrap();
    assert_eq!(count(&f), 1);
    assert_no_locks(&f.db);

    // Runs spanning many leaves, with the log: committed, and rolled back.
    let t = f.db.begin("run", 52).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    for chunk in (100..1_300u32).collect::<Vec<_>>().chunks(256) {
        let rows: Vec<_> = chunk.iter().map(|&i| (key(i), vec![i as u8; 80])).collect();
        let (n, r) = f.index.insert_run(&c, &run(&rows));
        r.unwrap();
        assert_eq!(n, rows.len());
    }
    t.commit(false).unwrap();
    assert_eq!(count(&f), 1_201);
    let t = f.db.begin("run", 52).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    let rows: Vec<_> = (2_000..2_500u32).map(|i| (key(i), vec![1u8; 80])).collect();
    let (n, r) = f.index.insert_run(&c, &run(&rows));
    r.unwrap();
    assert_eq!(n, 500);
    t.rollback().unwrap();
    assert_eq!(count(&f), 1_201);
    f.index.tree().check().unwrap();
    assert_no_locks(&f.db);
}

#[test]
fn insert_run_after_a_serializable_scan_takes_the_next_key_protocol() {
    let f = setup(&[(10, "ten"), (20, "twenty")]);
    // A SERIALIZABLE reader touched the HoBT: runs go row by row with RangeI-N.
    let s = f.db.begin("ser", 54).unwrap();
    let sc = ctx(&s, Serializable, LockTimeout::Infinite);
    assert_eq!(get(&f, &sc, 10).unwrap().as_deref(), Some("ten"));
    s.commit(false).unwrap();
    let t = f.db.begin("run", 52).unwrap();
    let c = ctx(&t, ReadCommitted, LockTimeout::Infinite);
    let rows: Vec<_> = [11u32, 12, 25, 20, 30].iter().map(|&i| (key(i), b"r".to_vec())).collect();
    let (n, r) = f.index.insert_run(&c, &run(&rows));
    assert_eq!(n, 3);
    assert_eq!(err_number(r), 2601);
    t.commit(false).unwrap();
    assert_eq!(count(&f), 5);
    assert_no_locks(&f.db);
}
