//! Lock manager tests: the documented compatibility matrix, conversions, FIFO
//! granting, time-outs and their wait statistics, deadlocks (2- and 3-way, conversion
//! deadlocks, DEADLOCK_PRIORITY, log-used costs, the graph XML, the lock monitor),
//! release, sys.dm_tran_locks rows, and a multi-threaded stress test that checks the
//! granted groups from snapshots.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use diag::{SessionScope, WaitStats, WaitType};
use txn::lock::*;

const DB: u16 = 5;
const HOBT: i64 = 72057594038779904;

fn key(n: u64) -> LockResource {
    LockResource::key(DB, HOBT, 0x8194443284a0 + n)
}

fn quiet_manager() -> LockManager {
    LockManager::with_config(LockManagerConfig { deadlock_monitor: false, ..Default::default() })
}

fn m(name: &str) -> LockMode {
    match LockMode::from_name(name) {
        Some(m) => m,
        None => panic!("no mode {name}"),
    }
}

/// Checks a documented Yes/No table against the matrix: rows requested, columns
/// granted; "Yes" = compatible, "No" = a conflict (these tables only cover legal pairs).
fn check_table(modes: &[&str], rows: &[&str]) {
    assert_eq!(modes.len(), rows.len());
    for (r, row) in rows.iter().enumerate() {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), modes.len(), "row {}", modes[r]);
        for (g, cell) in cells.iter().enumerate() {
            let (req, granted) = (m(modes[r]), m(modes[g]));
            let want = match *cell {
                "Yes" => Compatibility::NoConflict,
                "No" => Compatibility::Conflict,
                other => panic!("bad cell {other}"),
            };
            assert_eq!(req.compatibility(granted), want, "requested {req} vs granted {granted}");
        }
    }
}

#[test]
fn lock_matrix_matches_the_documented_tables() {
    // "Lock compatibility": the most commonly encountered lock modes.
    check_table(
        &["IS", "S", "U", "IX", "SIX", "X"],
        &[
            "Yes Yes Yes Yes Yes No",
            "Yes Yes Yes No  No  No",
            "Yes Yes No  No  No  No",
            "Yes No  No  Yes No  No",
            "Yes No  No  No  No  No",
            "No  No  No  No  No  No",
        ],
    );
    // "Key-range locking": the key-range compatibility matrix.
    check_table(
        &["S", "U", "X", "RangeS-S", "RangeS-U", "RangeI-N", "RangeX-X"],
        &[
            "Yes Yes No  Yes Yes Yes No",
            "Yes No  No  Yes No  Yes No",
            "No  No  No  No  No  Yes No",
            "Yes Yes No  Yes Yes No  No",
            "Yes No  No  Yes No  No  No",
            "Yes Yes Yes No  No  Yes No",
            "No  No  No  No  No  No  No",
        ],
    );
    // Schema and bulk update locks: "Sch-S is compatible with all lock modes except
    // Sch-M", "Sch-M is incompatible with all lock modes", "BU is compatible only with
    // Sch-S and other BU locks".
    check_table(
        &["IS", "S", "U", "IX", "SIX", "X", "Sch-S", "Sch-M", "BU"],
        &[
            "Yes Yes Yes Yes Yes No  Yes No  No",
            "Yes Yes Yes No  No  No  Yes No  No",
            "Yes Yes No  No  No  No  Yes No  No",
            "Yes No  No  Yes No  No  Yes No  No",
            "Yes No  No  No  No  No  Yes No  No",
            "No  No  No  No  No  No  Yes No  No",
            "Yes Yes Yes Yes Yes Yes Yes No  Yes",
            "No  No  No  No  No  No  No  No  No",
            "No  No  No  No  No  No  Yes No  Yes",
        ],
    );
    // The complete matrix (the figure), row "Shared (S)", N = no conflict, C = conflict.
    let all = [
        "Sch-S", "Sch-M", "S", "U", "X", "IS", "IU", "IX", "SIU", "SIX", "UIX", "BU", "RangeS-S", "RangeS-U",
        "RangeI-N", "RangeI-S", "RangeI-U", "RangeI-X", "RangeX-S", "RangeX-U", "RangeX-X",
    ];
    let s_row = "N C N N C N N C N C C C N N N N N C N N C";
    for (g, cell) in s_row.split_whitespace().enumerate() {
        let want = if cell == "N" { Compatibility::NoConflict } else { Compatibility::Conflict };
        assert_eq!(LockMode::S.compatibility(m(all[g])), want, "S vs {}", all[g]);
    }
    // The mode order is SQL Server's mode numbering.
    for (i, name) in all.iter().enumerate() {
        assert_eq!(LockMode::ALL[i], m(name));
        assert_eq!(LockMode::ALL[i].number() as usize, i + 1);
    }
}

/// The construction the figure follows, written independently of the library: table
/// modes are a coarse part and an intent part, key modes a range part and a key part
/// (0 none, 1 S, 2 U, 3 X; ranges 1 RangeS, 2 RangeI, 3 RangeX); two modes are
/// compatible when every pair of parts is.
fn model(req: LockMode, granted: LockMode) -> Compatibility {
    use Compatibility::*;
    use LockMode::*;
    let table = |x: LockMode| -> Option<(u8, u8)> {
        Some(match x {
            S => (1, 0),
            U => (2, 0),
            X => (3, 0),
            IS => (0, 1),
            IU => (0, 2),
            IX => (0, 3),
            SIU => (1, 2),
            SIX => (1, 3),
            UIX => (2, 3),
            _ => return None,
        })
    };
    let keyp = |x: LockMode| -> Option<(u8, u8)> {
        Some(match x {
            S => (0, 1),
            U => (0, 2),
            X => (0, 3),
            RangeS_S => (1, 1),
            RangeS_U => (1, 2),
            RangeI_N => (2, 0),
            RangeI_S => (2, 1),
            RangeI_U => (2, 2),
            RangeI_X => (2, 3),
            RangeX_S => (3, 1),
            RangeX_U => (3, 2),
            RangeX_X => (3, 3),
            _ => return None,
        })
    };
    let base = |a: u8, b: u8| a == 0 || b == 0 || (a == 1 && b <= 2) || (a == 2 && b == 1);
    let range = |a: u8, b: u8| a == 0 || b == 0 || (a == b && a != 3);
    let yes = |c: bool| if c { NoConflict } else { Conflict };
    let not_on_keys = |x: LockMode| matches!(x, Sch_S | Sch_M | IS | IU | IX | SIU | SIX | UIX | BU);
    if (req.is_key_range() && not_on_keys(granted)) || (granted.is_key_range() && not_on_keys(req)) {
        return Illegal;
    }
    if req == Sch_M || granted == Sch_M {
        return Conflict;
    }
    if req == Sch_S || granted == Sch_S {
        return NoConflict;
    }
    if req == BU || granted == BU {
        return yes(req == granted);
    }
    if let (Some((ca, ia)), Some((cb, ib))) = (table(req), table(granted)) {
        return yes(base(ca, cb) && base(ca, ib) && base(ia, cb));
    }
    match (keyp(req), keyp(granted)) {
        (Some((ra, ka)), Some((rb, kb))) => yes(range(ra, rb) && base(ka, kb)),
        _ => Illegal,
    }
}

#[test]
fn lock_matrix_is_exhaustively_consistent() {
    let mut legal = 0;
    for req in LockMode::ALL {
        for granted in LockMode::ALL {
            assert_eq!(req.compatibility(granted), model(req, granted), "requested {req} vs granted {granted}");
            assert_eq!(req.compatibility(granted), granted.compatibility(req), "symmetry {req}/{granted}");
            assert_eq!(req.compatible(granted), req.compatibility(granted) == Compatibility::NoConflict);
            if req.compatibility(granted) != Compatibility::Illegal {
                legal += 1;
            }
        }
    }
    // 12 x 12 table-level pairs, 12 x 12 key pairs, minus S/U/X counted twice.
    assert_eq!(legal, 144 + 144 - 9);
}

#[test]
fn lock_reentrant_requests_and_conversions() {
    let lm = quiet_manager();
    let t = LockOwner::new(1, 51);
    let obj = LockResource::object(DB, 245575913);
    let g = lm.lock(&t, obj, LockMode::S, LockTimeout::NoWait).unwrap();
    assert_eq!((g.mode, g.converted_from), (LockMode::S, None));
    // Weaker or equal: counted, mode unchanged.
    let g = lm.lock(&t, obj, LockMode::IS, LockTimeout::NoWait).unwrap();
    assert_eq!((g.mode, g.converted_from), (LockMode::S, None));
    // S + IX = SIX.
    let g = lm.lock(&t, obj, LockMode::IX, LockTimeout::NoWait).unwrap();
    assert_eq!((g.mode, g.converted_from), (LockMode::SIX, Some(LockMode::S)));
    assert_eq!(lm.held(&t), vec![HeldLock { resource: obj, mode: LockMode::SIX, count: 3 }]);
    // Unlock counts down without lowering the mode.
    assert!(lm.unlock(&t, obj));
    assert!(lm.unlock(&t, obj));
    assert_eq!(lm.held_mode(&t, &obj), Some(LockMode::SIX));
    assert!(lm.unlock(&t, obj));
    assert_eq!(lm.held_mode(&t, &obj), None);
    assert!(!lm.unlock(&t, obj));
    assert!(lm.snapshot().is_empty());

    // Key-range conversions from the guide.
    let k = key(1);
    lm.lock(&t, k, LockMode::S, LockTimeout::NoWait).unwrap();
    assert_eq!(lm.lock(&t, k, LockMode::RangeI_N, LockTimeout::NoWait).unwrap().mode, LockMode::RangeI_S);
    let k2 = key(2);
    lm.lock(&t, k2, LockMode::RangeI_N, LockTimeout::NoWait).unwrap();
    assert_eq!(lm.lock(&t, k2, LockMode::RangeS_S, LockTimeout::NoWait).unwrap().mode, LockMode::RangeX_S);
    assert_eq!(lm.release_all(&t), 2);
    assert!(lm.snapshot().is_empty());
}

/// Waits until `pred` holds for the lock table, or fails after 5 s.
fn wait_until(lm: &LockManager, what: &str, pred: impl Fn(&[LockRow]) -> bool) {
    let start = Instant::now();
    while !pred(&lm.snapshot()) {
        assert!(start.elapsed() < Duration::from_secs(5), "timed out waiting for: {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

fn has_row(rows: &[LockRow], owner: u64, status: RequestStatus) -> bool {
    rows.iter().any(|r| r.request_owner_id == owner && r.request_status == status)
}

type Pending = mpsc::Receiver<Result<LockGrant, LockError>>;

/// Requests a lock on another thread; the result arrives on the channel.
fn lock_async(
    lm: &Arc<LockManager>,
    owner: &LockOwner,
    res: LockResource,
    mode: LockMode,
    timeout: LockTimeout,
) -> Pending {
    let (tx, rx) = mpsc::channel();
    let (lm, owner) = (lm.clone(), owner.clone());
    thread::spawn(move || {
        let _ = tx.send(lm.lock(&owner, res, mode, timeout));
    });
    rx
}

fn recv(rx: &Pending) -> Result<LockGrant, LockError> {
    match rx.recv_timeout(Duration::from_secs(10)) {
        Ok(r) => r,
        Err(e) => panic!("lock request never finished: {e}"),
    }
}

#[test]
fn lock_conversion_waits_only_on_other_owners_and_goes_first() {
    let lm = Arc::new(quiet_manager());
    let (t1, t2, t3) = (LockOwner::new(1, 51), LockOwner::new(2, 52), LockOwner::new(3, 53));
    let k = key(7);
    lm.lock(&t1, k, LockMode::S, LockTimeout::NoWait).unwrap();
    lm.lock(&t2, k, LockMode::S, LockTimeout::NoWait).unwrap();
    // T3 queues for X behind both S holders.
    let x3 = lock_async(&lm, &t3, k, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T3 waits", |r| has_row(r, 3, RequestStatus::Wait));
    // T1 converts S -> U although T3 waits: conversions don't queue behind waiters.
    assert_eq!(lm.lock(&t1, k, LockMode::U, LockTimeout::NoWait).unwrap().mode, LockMode::U);
    // T1 to X must wait for T2's S (NoWait fails at once) ...
    let e = lm.lock(&t1, k, LockMode::X, LockTimeout::NoWait).unwrap_err();
    assert_eq!(e.number(), 1222);
    let x1 = lock_async(&lm, &t1, k, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T1 converts", |r| has_row(r, 1, RequestStatus::Convert));
    let rows = lm.snapshot();
    let conv = rows.iter().find(|r| r.request_owner_id == 1).unwrap();
    assert_eq!((conv.request_mode, conv.granted_mode), (LockMode::X, Some(LockMode::U)));
    // ... and is granted before T3, which has waited longer, when T2 leaves.
    lm.release_all(&t2);
    let g = recv(&x1).unwrap();
    assert_eq!((g.mode, g.converted_from), (LockMode::X, Some(LockMode::U)));
    assert!(x3.try_recv().is_err());
    assert!(has_row(&lm.snapshot(), 3, RequestStatus::Wait));
    lm.release_all(&t1);
    assert_eq!(recv(&x3).unwrap().mode, LockMode::X);
    lm.release_all(&t3);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_fifo_no_overtaking_of_incompatible_waiters() {
    let lm = Arc::new(quiet_manager());
    let (t1, t2, t3, t4) = (LockOwner::new(1, 51), LockOwner::new(2, 52), LockOwner::new(3, 53), LockOwner::new(4, 54));
    let obj = LockResource::object(DB, 99);
    lm.lock(&t1, obj, LockMode::S, LockTimeout::NoWait).unwrap();
    let x2 = lock_async(&lm, &t2, obj, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T2 waits", |r| has_row(r, 2, RequestStatus::Wait));
    // S is compatible with T1's S but not with the waiting X: it must not overtake.
    assert_eq!(lm.lock(&t3, obj, LockMode::S, LockTimeout::NoWait).unwrap_err().number(), 1222);
    let s3 = lock_async(&lm, &t3, obj, LockMode::S, LockTimeout::Infinite);
    wait_until(&lm, "T3 waits", |r| has_row(r, 3, RequestStatus::Wait));
    // Sch-S is compatible with everything granted and waiting: granted at once.
    lm.lock(&t4, obj, LockMode::Sch_S, LockTimeout::NoWait).unwrap();
    // Release T1: T2 (first in line) gets X; T3 keeps waiting behind it.
    lm.release_all(&t1);
    assert_eq!(recv(&x2).unwrap().mode, LockMode::X);
    thread::sleep(Duration::from_millis(20));
    assert!(s3.try_recv().is_err());
    lm.release_all(&t2);
    assert_eq!(recv(&s3).unwrap().mode, LockMode::S);
    let w = lm.waiting();
    assert!(w.is_empty(), "{w:?}");
    lm.release_all(&t3);
    lm.release_all(&t4);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_timeouts_and_their_waits() {
    let lm = Arc::new(quiet_manager());
    let (t1, t2, t3) = (LockOwner::new(1, 51), LockOwner::new(2, 52), LockOwner::new(3, 53));
    let k = key(3);
    lm.lock(&t1, k, LockMode::S, LockTimeout::NoWait).unwrap();

    // SET LOCK_TIMEOUT 0: immediate 1222, no wait recorded.
    let session = Arc::new(WaitStats::new());
    {
        let _scope = SessionScope::enter(session.clone());
        let start = Instant::now();
        let e = lm.lock(&t2, k, LockMode::X, LockTimeout::NoWait).unwrap_err();
        assert!(start.elapsed() < Duration::from_millis(20));
        assert_eq!(e, LockError::Timeout { resource: k, mode: LockMode::X });
        let sql = e.to_sql_error();
        assert_eq!((sql.number, sql.severity), (1222, 16));
        assert_eq!(sql.message, "Lock request time out period exceeded.");
    }
    assert_eq!(session.get(WaitType::LCK_M_X).waiting_tasks_count, 0);

    // A waiter queued behind the request that will time out: T3 asks for U (compatible
    // with T1's S) only once T2's X waits, so it queues behind X instead of being granted.
    let s3 = {
        let (tx, rx) = mpsc::channel();
        let (lm, t3) = (lm.clone(), t3.clone());
        thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline
                && !lm.snapshot().iter().any(|r| r.request_owner_id == 2 && r.request_status == RequestStatus::Wait)
            {
                thread::sleep(Duration::from_micros(200));
            }
            let _ = tx.send(lm.lock(&t3, k, LockMode::U, LockTimeout::Infinite));
        });
        rx
    };
    // SET LOCK_TIMEOUT 300: waits about 300 ms, then 1222; the wait is LCK_M_X in the
    // session's and the instance's wait statistics.
    let instance_before = diag::instance_waits().get(WaitType::LCK_M_X).waiting_tasks_count;
    {
        let _scope = SessionScope::enter(session.clone());
        let start = Instant::now();
        let e = lm.lock(&t2, k, LockMode::X, LockTimeout::Millis(300)).unwrap_err();
        let took = start.elapsed();
        assert_eq!(e.number(), 1222);
        assert!(took >= Duration::from_millis(300) && took < Duration::from_millis(3000), "{took:?}");
    }
    let w = session.get(WaitType::LCK_M_X);
    assert_eq!(w.waiting_tasks_count, 1);
    assert!(w.wait_time_us >= 299_000 && w.wait_time_us < 3_000_000, "{w:?}");
    assert!(diag::instance_waits().get(WaitType::LCK_M_X).waiting_tasks_count > instance_before);
    assert_eq!(session.get(WaitType::LCK_M_U).waiting_tasks_count, 0);

    // The timed-out request left the queue: T3's U (compatible with T1's S), which
    // was queued behind it, is granted now.
    assert_eq!(recv(&s3).unwrap().mode, LockMode::U);
    assert!(!lm.snapshot().iter().any(|r| r.request_owner_id == 2));
    let stats = lm.stats();
    assert_eq!((stats.lock_timeouts, stats.lock_timeouts_nonzero), (2, 1));
    assert!(stats.lock_waits >= 2 && stats.lock_requests >= 4, "{stats:?}");

    // A conversion that times out goes back to its granted mode.
    let e = lm.lock(&t1, k, LockMode::X, LockTimeout::Millis(20)).unwrap_err();
    assert_eq!(e.number(), 1222);
    assert_eq!(lm.held_mode(&t1, &k), Some(LockMode::S));
    assert!(lm.snapshot().iter().all(|r| r.request_status == RequestStatus::Grant));
    lm.release_all(&t1);
    lm.release_all(&t3);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn dm_tran_locks_rows() {
    let lm = Arc::new(quiet_manager());
    let (t1, t2) = (LockOwner::new(1001, 51), LockOwner::new(1002, 52));
    let obj = LockResource::object(DB, 245575913);
    let page = LockResource::page(DB, 1, 264);
    let k = LockResource::key(DB, HOBT, 0x8194443284a0);
    for (r, md) in [(obj, LockMode::IX), (page, LockMode::IX), (k, LockMode::X)] {
        lm.lock(&t1, r, md, LockTimeout::NoWait).unwrap();
    }
    lm.lock(&t1, k, LockMode::X, LockTimeout::NoWait).unwrap();
    let w = lock_async(&lm, &t2, k, LockMode::S, LockTimeout::Infinite);
    wait_until(&lm, "T2 waits", |r| has_row(r, 1002, RequestStatus::Wait));
    let rows = lm.snapshot();
    assert_eq!(rows.len(), 4);
    let row =
        |owner: u64, ty: &str| rows.iter().find(|r| r.request_owner_id == owner && r.resource_type == ty).unwrap();
    let o = row(1001, "OBJECT");
    assert_eq!((o.resource_description.as_str(), o.resource_associated_entity_id), ("", 245575913));
    assert_eq!((o.request_mode, o.request_status.as_str()), (LockMode::IX, "GRANT"));
    assert_eq!(row(1001, "PAGE").resource_description, "1:264");
    let kx = row(1001, "KEY");
    assert_eq!(kx.resource_description, "(8194443284a0)");
    assert_eq!((kx.request_reference_count, kx.request_session_id, kx.resource_database_id), (2, 51, DB));
    assert_eq!((kx.request_type, kx.request_owner_type), ("LOCK", "TRANSACTION"));
    let ks = row(1002, "KEY");
    assert_eq!((ks.request_mode, ks.request_status.to_string().as_str()), (LockMode::S, "WAIT"));
    let waiting = lm.waiting();
    assert_eq!(waiting.len(), 1);
    assert_eq!((waiting[0].session_id, waiting[0].blocking_session_ids.clone()), (52, vec![51]));
    lm.release_all(&t1);
    recv(&w).unwrap();
    lm.release_all(&t2);
}

#[test]
fn release_matching_drops_read_committed_s_locks() {
    let lm = quiet_manager();
    let t = LockOwner::new(1, 51);
    let obj = LockResource::object(DB, 7);
    lm.lock(&t, obj, LockMode::IS, LockTimeout::NoWait).unwrap();
    lm.lock(&t, obj, LockMode::IX, LockTimeout::NoWait).unwrap();
    for i in 0..20 {
        lm.lock(&t, key(i), LockMode::S, LockTimeout::NoWait).unwrap();
    }
    lm.lock(&t, key(100), LockMode::X, LockTimeout::NoWait).unwrap();
    lm.lock(&t, key(0), LockMode::S, LockTimeout::NoWait).unwrap(); // count 2: still released
    let n = lm.release_matching(&t, |r, md| md == LockMode::S && matches!(r, LockResource::Key { .. }));
    assert_eq!(n, 20);
    let held = lm.held(&t);
    assert_eq!(held.len(), 2);
    assert_eq!(held[0], HeldLock { resource: obj, mode: LockMode::IX, count: 2 });
    assert_eq!(held[1].mode, LockMode::X);
    assert_eq!(t.lock_count(), 2);
    assert_eq!(lm.snapshot().len(), 2);
    assert_eq!(lm.release_all(&t), 2);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_release_all_wakes_every_waiter() {
    let lm = Arc::new(quiet_manager());
    let holder = LockOwner::new(1, 51);
    for i in 0..3 {
        lm.lock(&holder, key(i), LockMode::X, LockTimeout::NoWait).unwrap();
    }
    let owners: Vec<LockOwner> = (0..6).map(|i| LockOwner::new(10 + i, 60 + i as i32)).collect();
    let pending: Vec<Pending> = owners
        .iter()
        .enumerate()
        .map(|(i, o)| lock_async(&lm, o, key(i as u64 % 3), LockMode::S, LockTimeout::Infinite))
        .collect();
    wait_until(&lm, "six waiters", |r| r.iter().filter(|r| r.request_status == RequestStatus::Wait).count() == 6);
    assert_eq!(lm.release_all(&holder), 3);
    for p in &pending {
        assert_eq!(recv(p).unwrap().mode, LockMode::S);
    }
    for o in &owners {
        lm.release_all(o);
    }
    assert!(lm.snapshot().is_empty());
}

/// Collects deadlock reports from the observer.
fn observe(lm: &LockManager) -> Arc<Mutex<Vec<DeadlockReport>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s = seen.clone();
    lm.set_deadlock_observer(Box::new(move |r: &DeadlockReport| s.lock().unwrap().push(r.clone())));
    seen
}

/// Runs a deadlock: owner i holds `first[i]` in X, then (all together) requests
/// `second[i]` in X. A victim rolls back (release_all); the survivors finish and
/// release. Returns each owner's result for the second request and the time from the
/// start of the requests to the victim's error.
fn run_cycle(
    lm: &Arc<LockManager>,
    owners: &[LockOwner],
    first: &[LockResource],
    second: &[LockResource],
    session: &Arc<WaitStats>,
) -> (Vec<Result<LockGrant, LockError>>, Duration) {
    let barrier = Arc::new(Barrier::new(owners.len()));
    let victim_after = Arc::new(Mutex::new(None));
    let handles: Vec<_> = owners
        .iter()
        .enumerate()
        .map(|(i, o)| {
            let (lm, o, b, va) = (lm.clone(), o.clone(), barrier.clone(), victim_after.clone());
            let (r1, r2, session) = (first[i], second[i], session.clone());
            thread::spawn(move || {
                let _scope = SessionScope::enter(session);
                lm.lock(&o, r1, LockMode::X, LockTimeout::NoWait).unwrap();
                b.wait();
                let start = Instant::now();
                let res = lm.lock(&o, r2, LockMode::X, LockTimeout::Millis(20_000));
                if res.is_err() {
                    *va.lock().unwrap() = Some(start.elapsed());
                }
                // Roll back (victim) or commit (survivor).
                lm.release_all(&o);
                res
            })
        })
        .collect();
    let results: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let after = victim_after.lock().unwrap().unwrap_or(Duration::MAX);
    (results, after)
}

#[test]
fn lock_deadlock_two_way_one_victim_the_other_proceeds() {
    let lm = Arc::new(quiet_manager());
    let seen = observe(&lm);
    let owners = [LockOwner::new(101, 51), LockOwner::new(102, 52)];
    owners[0].set_transaction_name("transfer");
    owners[1].set_isolation_level(IsolationLevel::Serializable);
    owners[1].set_input_buffer("UPDATE t SET c = 1 WHERE k = 1");
    let session = Arc::new(WaitStats::new());
    let (a, b) = (key(1), key(2));
    let (results, after) = run_cycle(&lm, &owners, &[a, b], &[b, a], &session);
    let victims: Vec<_> = results.iter().filter(|r| r.is_err()).collect();
    assert_eq!(victims.len(), 1, "{results:?}");
    assert!(after < Duration::from_secs(1), "detected after {after:?}");
    let e = victims[0].as_ref().unwrap_err();
    assert_eq!(e.number(), 1205);
    let sql = e.to_sql_error();
    assert_eq!(sql.severity, 13);
    let LockError::DeadlockVictim { session_id, .. } = e else { panic!("{e:?}") };
    assert_eq!(
        sql.message,
        format!("Transaction (Process ID {session_id}) was deadlocked on lock resources with another process and has been chosen as the deadlock victim. Rerun the transaction.")
    );
    assert!(results.iter().filter(|r| r.is_ok()).all(|r| r.as_ref().unwrap().mode == LockMode::X));
    assert_eq!(lm.deadlock_count(), 1);
    assert_eq!(lm.stats().deadlocks, 1);

    let reports = seen.lock().unwrap();
    assert_eq!(reports.len(), 1);
    let r = &reports[0];
    assert_eq!(r.processes.len(), 2);
    assert_eq!(r.resources.len(), 2);
    assert_eq!(r.victim_process().unwrap().session_id, *session_id);
    for o in &owners {
        let p = r.processes.iter().find(|p| p.session_id == o.session_id()).unwrap();
        assert_eq!((p.txn_id, p.lock_mode), (o.txn_id(), LockMode::X));
        assert!(r.xml.contains(&format!("<process id=\"{}\"", o.process_id())), "{}", r.xml);
        assert!(r.xml.contains(&format!("spid=\"{}\"", o.session_id())));
    }
    let x = &r.xml;
    assert!(x.starts_with("<deadlock>") && x.ends_with("</deadlock>"));
    assert!(x.contains(&format!("<victimProcess id=\"{}\" />", r.victim_process().unwrap().id)));
    assert!(x.contains(&format!("waitresource=\"{a}\"")) && x.contains(&format!("waitresource=\"{b}\"")));
    assert_eq!(x.matches("<keylock ").count(), 2);
    assert_eq!(x.matches("<owner id=").count(), 2);
    assert_eq!(x.matches("requestType=\"wait\"").count(), 2);
    assert!(x.contains("transactionname=\"transfer\""));
    assert!(x.contains("isolationlevel=\"serializable (4)\""));
    assert!(x.contains("<inputbuf>UPDATE t SET c = 1 WHERE k = 1</inputbuf>"));
    // Both sides waited (LCK_M_X) in the sessions' wait table.
    assert_eq!(session.get(WaitType::LCK_M_X).waiting_tasks_count, 2);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_deadlock_three_way() {
    let lm = Arc::new(quiet_manager());
    let seen = observe(&lm);
    let owners = [LockOwner::new(1, 51), LockOwner::new(2, 52), LockOwner::new(3, 53)];
    let r = [LockResource::rid(DB, 1, 300, 0), LockResource::page(DB, 1, 301), LockResource::object(DB, 302)];
    let (results, after) = run_cycle(&lm, &owners, &r, &[r[1], r[2], r[0]], &Arc::new(WaitStats::new()));
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 1, "{results:?}");
    assert!(results.iter().filter_map(|r| r.as_ref().err()).all(|e| e.number() == 1205));
    assert!(after < Duration::from_secs(1), "detected after {after:?}");
    let reports = seen.lock().unwrap();
    assert_eq!(reports.len(), 1);
    assert_eq!(reports[0].processes.len(), 3);
    let x = &reports[0].xml;
    assert!(x.contains("<ridlock ") && x.contains("<pagelock ") && x.contains("<objectlock "), "{x}");
    assert_eq!(lm.deadlock_count(), 1);
    assert!(lm.snapshot().is_empty());
}

/// Two owners in a deadlock where `closer` (the second to wait, which closes the
/// cycle) has the given priority and log use; returns the victim's session id.
fn victim_of(first: (i32, u64), closer: (i32, u64)) -> i32 {
    let lm = Arc::new(quiet_manager());
    let (t1, t2) = (LockOwner::new(1, 51), LockOwner::new(2, 52));
    t1.set_deadlock_priority(first.0);
    t1.set_log_used(first.1);
    t2.set_deadlock_priority(closer.0);
    t2.set_log_used(closer.1);
    let (a, b) = (key(1), key(2));
    lm.lock(&t1, a, LockMode::X, LockTimeout::NoWait).unwrap();
    lm.lock(&t2, b, LockMode::X, LockTimeout::NoWait).unwrap();
    let w1 = lock_async(&lm, &t1, b, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T1 waits", |r| has_row(r, 1, RequestStatus::Wait));
    let w2 = lock_async(&lm, &t2, a, LockMode::X, LockTimeout::Infinite);
    finish_pair(&lm, (&w1, &t1), (&w2, &t2))
}

#[test]
fn lock_deadlock_victim_priority_then_cost_then_closer() {
    use txn::lock::{DEADLOCK_PRIORITY_HIGH as HIGH, DEADLOCK_PRIORITY_LOW as LOW};
    // Equal: the request that closed the cycle is the victim.
    assert_eq!(victim_of((0, 0), (0, 0)), 52);
    // DEADLOCK_PRIORITY decides first.
    assert_eq!(victim_of((0, 0), (HIGH, 0)), 51);
    assert_eq!(victim_of((LOW, 0), (0, 0)), 51);
    assert_eq!(victim_of((0, 1_000_000), (HIGH, 0)), 51);
    assert_eq!(victim_of((-10, 0), (-9, 0)), 51);
    // Same priority: the cheaper rollback (less log used) is the victim.
    assert_eq!(victim_of((0, 100), (0, 5_000)), 51);
    assert_eq!(victim_of((0, 5_000), (0, 100)), 52);
    // The log-used counter can be the transaction layer's own.
    let counter = Arc::new(AtomicU64::new(7));
    let o = LockOwner::with_log_used_counter(9, 59, counter.clone());
    counter.store(4242, Ordering::Relaxed);
    assert_eq!(o.log_used(), 4242);
}

#[test]
fn lock_deadlock_on_conversion() {
    // Two readers holding S both try to convert to X: the classic conversion deadlock.
    let lm = Arc::new(quiet_manager());
    let seen = observe(&lm);
    let (t1, t2) = (LockOwner::new(1, 51), LockOwner::new(2, 52));
    let k = key(9);
    lm.lock(&t1, k, LockMode::S, LockTimeout::NoWait).unwrap();
    lm.lock(&t2, k, LockMode::S, LockTimeout::NoWait).unwrap();
    let c1 = lock_async(&lm, &t1, k, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T1 converts", |r| has_row(r, 1, RequestStatus::Convert));
    // T2 closes the cycle and is the victim; its lock goes back to S.
    let e = lm.lock(&t2, k, LockMode::X, LockTimeout::Infinite).unwrap_err();
    assert_eq!(e.number(), 1205);
    assert_eq!(lm.held_mode(&t2, &k), Some(LockMode::S));
    {
        let reports = seen.lock().unwrap();
        assert_eq!(reports.len(), 1);
        let x = &reports[0].xml;
        assert_eq!(x.matches("requestType=\"convert\"").count(), 2, "{x}");
        assert_eq!(reports[0].resources.len(), 1);
    }
    lm.release_all(&t2);
    let g = recv(&c1).unwrap();
    assert_eq!((g.mode, g.converted_from), (LockMode::X, Some(LockMode::S)));
    lm.release_all(&t1);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_deadlock_through_a_queued_waiter() {
    // T3's S on R is compatible with T1's granted S but queued behind T2's waiting X
    // (FIFO), so T3 waits for T2, which waits for T1, which waits for T3.
    let lm = Arc::new(quiet_manager());
    let seen = observe(&lm);
    let (t1, t2, t3) = (LockOwner::new(1, 51), LockOwner::new(2, 52), LockOwner::new(3, 53));
    let (r, q) = (key(20), key(21));
    lm.lock(&t1, r, LockMode::S, LockTimeout::NoWait).unwrap();
    lm.lock(&t3, q, LockMode::X, LockTimeout::NoWait).unwrap();
    let w2 = lock_async(&lm, &t2, r, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T2 waits", |rows| has_row(rows, 2, RequestStatus::Wait));
    let w1 = lock_async(&lm, &t1, q, LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "T1 waits", |rows| has_row(rows, 1, RequestStatus::Wait));
    let e = lm.lock(&t3, r, LockMode::S, LockTimeout::Infinite).unwrap_err();
    assert_eq!(e.number(), 1205);
    {
        let reports = seen.lock().unwrap();
        assert_eq!(reports.len(), 1);
        let rep = &reports[0];
        assert_eq!(rep.processes.len(), 3);
        assert_eq!(rep.victim_process().unwrap().session_id, 53);
        let on_r = rep.resources.iter().find(|x| x.resource == r).unwrap();
        // T2 is listed as an owner of R although it only waits: it is ahead of T3.
        assert!(on_r.owners.iter().any(|o| o.process_id == t2.process_id() && o.request_type == Some("wait")));
        assert!(rep.xml.contains(&format!("<owner id=\"{}\" mode=\"X\" requestType=\"wait\" />", t2.process_id())));
    }
    lm.release_all(&t3);
    assert!(recv(&w1).is_ok());
    lm.release_all(&t1);
    assert!(recv(&w2).is_ok());
    lm.release_all(&t2);
    assert!(lm.snapshot().is_empty());
}

#[test]
fn lock_monitor_finds_deadlocks_and_speeds_up() {
    // No search on wait: only the monitor (or check_deadlocks_now) can find it.
    let lm = Arc::new(LockManager::with_config(LockManagerConfig {
        deadlock_monitor: true,
        monitor_interval: Duration::from_millis(400),
        monitor_min_interval: Duration::from_millis(100),
        search_on_wait: false,
    }));
    assert_eq!(lm.monitor_interval(), Duration::from_millis(400));
    let owners = [LockOwner::new(1, 51), LockOwner::new(2, 52)];
    let (results, after) = run_cycle(&lm, &owners, &[key(1), key(2)], &[key(2), key(1)], &Arc::new(WaitStats::new()));
    assert_eq!(results.iter().filter(|r| r.is_err()).count(), 1);
    assert!(after < Duration::from_secs(3), "{after:?}");
    assert_eq!(lm.deadlock_count(), 1);
    // After finding one, the monitor searches every 100 ms ...
    let start = Instant::now();
    while lm.monitor_interval() != Duration::from_millis(100) {
        assert!(start.elapsed() < Duration::from_secs(3));
        thread::sleep(Duration::from_millis(5));
    }
    // ... and backs off to its full interval while it finds none.
    while lm.monitor_interval() != Duration::from_millis(400) {
        assert!(start.elapsed() < Duration::from_secs(5));
        thread::sleep(Duration::from_millis(5));
    }

    // check_deadlocks_now resolves a deadlock on demand.
    let lm = Arc::new(LockManager::with_config(LockManagerConfig {
        deadlock_monitor: false,
        search_on_wait: false,
        ..Default::default()
    }));
    let (t1, t2) = (LockOwner::new(1, 51), LockOwner::new(2, 52));
    lm.lock(&t1, key(1), LockMode::X, LockTimeout::NoWait).unwrap();
    lm.lock(&t2, key(2), LockMode::X, LockTimeout::NoWait).unwrap();
    let w1 = lock_async(&lm, &t1, key(2), LockMode::X, LockTimeout::Infinite);
    let w2 = lock_async(&lm, &t2, key(1), LockMode::X, LockTimeout::Infinite);
    wait_until(&lm, "both wait", |r| r.iter().filter(|r| r.request_status == RequestStatus::Wait).count() == 2);
    assert_eq!(lm.check_deadlocks_now(), 1);
    assert_eq!(lm.check_deadlocks_now(), 0);
    // Whichever was chosen, the other proceeds once the victim rolls back.
    finish_pair(&lm, (&w1, &t1), (&w2, &t2));
    assert!(lm.snapshot().is_empty());
}

/// The aftermath of a two-waiter deadlock: the victim (1205) rolls back, the survivor
/// then gets its lock and releases. Returns the victim's session id.
fn finish_pair(lm: &LockManager, a: (&Pending, &LockOwner), b: (&Pending, &LockOwner)) -> i32 {
    let start = Instant::now();
    loop {
        for (me, other) in [(a, b), (b, a)] {
            if let Ok(r) = me.0.recv_timeout(Duration::from_millis(5)) {
                assert_eq!(r.unwrap_err().number(), 1205);
                lm.release_all(me.1);
                assert!(recv(other.0).is_ok());
                lm.release_all(other.1);
                return me.1.session_id();
            }
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no victim");
    }
}

#[test]
fn lock_stress_granted_groups_stay_compatible() {
    const THREADS: usize = 8;
    const OPS: usize = 5_000;
    let lm = Arc::new(LockManager::with_config(LockManagerConfig {
        deadlock_monitor: true,
        monitor_interval: Duration::from_millis(200),
        monitor_min_interval: Duration::from_millis(50),
        search_on_wait: true,
    }));
    let objects: Vec<LockResource> = (0..2).map(|i| LockResource::object(DB, 500 + i)).collect();
    let keys: Vec<LockResource> = (0..6).map(key).collect();
    let table_modes = [
        LockMode::Sch_S,
        LockMode::IS,
        LockMode::IS,
        LockMode::IX,
        LockMode::IX,
        LockMode::IU,
        LockMode::S,
        LockMode::U,
        LockMode::SIX,
        LockMode::SIU,
        LockMode::UIX,
        LockMode::X,
        LockMode::BU,
        LockMode::Sch_M,
    ];
    let key_modes = [
        LockMode::S,
        LockMode::S,
        LockMode::U,
        LockMode::X,
        LockMode::RangeS_S,
        LockMode::RangeS_U,
        LockMode::RangeI_N,
        LockMode::RangeX_X,
    ];
    let stop = Arc::new(AtomicBool::new(false));
    let violations = Arc::new(Mutex::new(Vec::<String>::new()));

    // The checker: every snapshot's granted groups must be pairwise compatible.
    let checker = {
        let (lm, stop, violations) = (lm.clone(), stop.clone(), violations.clone());
        thread::spawn(move || {
            let mut snapshots = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let rows = lm.snapshot();
                let mut by_res: std::collections::HashMap<LockResource, Vec<&LockRow>> = Default::default();
                for r in &rows {
                    by_res.entry(r.resource).or_default().push(r);
                }
                for (res, rs) in by_res {
                    let granted: Vec<(u64, LockMode)> = rs
                        .iter()
                        .filter_map(|r| match r.request_status {
                            RequestStatus::Grant => Some((r.request_owner_id, r.request_mode)),
                            RequestStatus::Convert => r.granted_mode.map(|g| (r.request_owner_id, g)),
                            RequestStatus::Wait => None,
                        })
                        .collect();
                    let mut owners: Vec<u64> = rs.iter().map(|r| r.request_owner_id).collect();
                    owners.sort_unstable();
                    owners.dedup();
                    if owners.len() != rs.len() {
                        violations.lock().unwrap().push(format!("{res}: two requests by one owner"));
                    }
                    for (i, a) in granted.iter().enumerate() {
                        for b in &granted[i + 1..] {
                            if !a.1.compatible(b.1) || !b.1.compatible(a.1) {
                                violations.lock().unwrap().push(format!("{res}: {} and {} granted together", a.1, b.1));
                            }
                        }
                    }
                }
                snapshots += 1;
            }
            snapshots
        })
    };

    let (done_tx, done_rx) = mpsc::channel();
    let start = Arc::new(Barrier::new(THREADS));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (lm, objects, keys, done) = (lm.clone(), objects.clone(), keys.clone(), done_tx.clone());
            let start = start.clone();
            thread::spawn(move || {
                start.wait();
                // xorshift
                let mut s: u64 = 0x9e37_79b9_7f4a_7c15 ^ (t as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d);
                let mut rnd = move |n: usize| {
                    s ^= s << 13;
                    s ^= s >> 7;
                    s ^= s << 17;
                    (s % n as u64) as usize
                };
                let mut txn = (t as u64 + 1) << 32;
                let mut owner = LockOwner::new(txn, 51 + t as i32);
                let mut counts = [0u64; 5]; // granted, 1222, 1205, unlock, release_all
                let mut held: Vec<LockResource> = Vec::new();
                for _ in 0..OPS {
                    // Hold locks across reschedules so that the 8 threads overlap.
                    match rnd(16) {
                        0 => thread::sleep(Duration::from_micros(50)),
                        1..=4 => thread::yield_now(),
                        _ => {}
                    }
                    match rnd(10) {
                        0..=5 => {
                            let (res, mode) = if rnd(3) == 0 {
                                (objects[rnd(objects.len())], table_modes[rnd(table_modes.len())])
                            } else {
                                (keys[rnd(keys.len())], key_modes[rnd(key_modes.len())])
                            };
                            let timeout = match rnd(4) {
                                0 => LockTimeout::NoWait,
                                1 => LockTimeout::Infinite,
                                _ => LockTimeout::Millis(1 + rnd(10) as u32),
                            };
                            match lm.lock(&owner, res, mode, timeout) {
                                Ok(_) => {
                                    counts[0] += 1;
                                    held.push(res);
                                }
                                Err(e) if e.number() == 1222 => counts[1] += 1,
                                Err(_) => {
                                    // Deadlock victim: roll back.
                                    counts[2] += 1;
                                    lm.release_all(&owner);
                                    held.clear();
                                }
                            }
                        }
                        6..=7 => {
                            if !held.is_empty() {
                                let res = held.swap_remove(rnd(held.len()));
                                assert!(lm.unlock(&owner, res));
                                counts[3] += 1;
                            }
                        }
                        _ => {
                            lm.release_all(&owner);
                            held.clear();
                            counts[4] += 1;
                            txn += 1;
                            owner = LockOwner::new(txn, 51 + t as i32);
                            owner.set_deadlock_priority(rnd(3) as i32 - 1);
                        }
                    }
                }
                lm.release_all(&owner);
                let _ = done.send(t);
                counts
            })
        })
        .collect();
    drop(done_tx);
    // No hang: every worker finishes well within the limit.
    let deadline = Instant::now() + Duration::from_secs(120);
    for _ in 0..THREADS {
        let left = deadline.saturating_duration_since(Instant::now());
        assert!(done_rx.recv_timeout(left).is_ok(), "a worker hung; waits: {:?}", lm.waiting());
    }
    let mut totals = [0u64; 5];
    for w in workers {
        let c = w.join().unwrap();
        for i in 0..5 {
            totals[i] += c[i];
        }
    }
    stop.store(true, Ordering::Relaxed);
    let snapshots = checker.join().unwrap();
    let v = violations.lock().unwrap();
    assert!(v.is_empty(), "{} violations, first: {:?}", v.len(), v.first());
    assert!(lm.snapshot().is_empty(), "{:?}", lm.snapshot());
    assert!(lm.waiting().is_empty());
    println!(
        "stress: {} granted, {} timeouts (1222), {} deadlock victims (1205; counter {}), {} unlocks, {} release_all, {} snapshots checked",
        totals[0],
        totals[1],
        totals[2],
        lm.deadlock_count(),
        totals[3],
        totals[4],
        snapshots
    );
    assert_eq!(totals[2], lm.deadlock_count());
    // There was contention: some requests timed out or deadlocked.
    assert!(totals[0] > 1000 && totals[1] + totals[2] > 0, "{totals:?}");
}

/// Uncontended lock + unlock cost. Run with
/// `cargo test --release -p txn --test locks -- --ignored --nocapture lock_cost`.
#[test]
#[ignore]
fn lock_cost() {
    let lm = quiet_manager();
    let o = LockOwner::new(1, 51);
    let n = 2_000_000u64;
    // Warm up (pool buffers, map capacity).
    for i in 0..10_000 {
        let r = LockResource::key(DB, HOBT, i);
        let _ = lm.lock(&o, r, LockMode::X, LockTimeout::Infinite);
        lm.unlock(&o, r);
    }
    let start = Instant::now();
    for i in 0..n {
        let r = LockResource::key(DB, HOBT, i);
        let _ = lm.lock(&o, r, LockMode::X, LockTimeout::Infinite);
        lm.unlock(&o, r);
    }
    let per = start.elapsed().as_nanos() as f64 / n as f64;
    println!("uncontended KEY lock X + unlock: {per:.1} ns");

    let start = Instant::now();
    for i in 0..n {
        let r = LockResource::key(DB, HOBT, i % 64);
        let _ = lm.lock(&o, r, LockMode::S, LockTimeout::Infinite);
    }
    let per = start.elapsed().as_nanos() as f64 / n as f64;
    println!("re-entrant KEY lock S (already held): {per:.1} ns");
    lm.release_all(&o);

    let batch = 1000u64;
    let start = Instant::now();
    for b in 0..n / batch {
        for i in 0..batch {
            let _ = lm.lock(&o, LockResource::key(DB, HOBT, b * batch + i), LockMode::X, LockTimeout::Infinite);
        }
        lm.release_all(&o);
    }
    let per = start.elapsed().as_nanos() as f64 / n as f64;
    println!("KEY lock X, then release_all per 1000 locks: {per:.1} ns per lock");

    // Two threads on disjoint resources (shared lock table, no shared owner).
    let lm = Arc::new(lm);
    let start = Instant::now();
    let hs: Vec<_> = (0..2)
        .map(|t| {
            let lm = lm.clone();
            thread::spawn(move || {
                let o = LockOwner::new(100 + t, 60);
                for i in 0..n / 2 {
                    let r = LockResource::key(DB, HOBT + t as i64, i);
                    let _ = lm.lock(&o, r, LockMode::X, LockTimeout::Infinite);
                    lm.unlock(&o, r);
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let per = start.elapsed().as_nanos() as f64 / n as f64;
    println!("2 threads, disjoint KEY lock X + unlock: {per:.1} ns per pair (wall / total)");
}
