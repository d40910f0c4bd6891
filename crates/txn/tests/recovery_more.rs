//! More crash recovery: a crash inside a checkpoint's writes, a crash during recovery
//! (recovery is idempotent), many crashes under four concurrent writers with background
//! checkpoints running, and delayed durability (what survives is a prefix of the commit
//! order, and everything acknowledged long enough before the crash).
//!
//! `MESQUITE_LONG=1` runs more crash points.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Bound::Unbounded;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::heap::Heap;
use storage::io::{FaultFs, FileSystem};
use storage::record::{encode_record, ColumnLayout, ColumnValue, RecordType, RowLayout};
use storage::BufferPool;
use txn::checkpoint::{CheckpointKind, RedoEstimate};
use txn::recovery::LogSpec;
use txn::xact::{DelayedDurability, TxnDb};
use txn::LogConfig;

fn long() -> bool {
    std::env::var("MESQUITE_LONG").is_ok_and(|v| v == "1")
}

const LOG: &str = "/rm/db.ldf";

fn specs() -> (Vec<FileSpec>, LogSpec) {
    let data = FileSpec {
        file_id: 1,
        name: "rm".into(),
        path: PathBuf::from("/rm/db.mdf"),
        // Big enough that no workload here grows it: a crash right after a data file
        // growth is not recoverable yet (storage does not sync the new size before the
        // header change that records it is logged; reported).
        size_pages: 1024,
        growth: FileGrowth::Pages(128),
        max_pages: None,
    };
    let log =
        LogSpec { path: PathBuf::from(LOG), size_bytes: 8 << 20, growth: FileGrowth::Pages(1024), max_bytes: None };
    (vec![data], log)
}

fn config() -> LogConfig {
    LogConfig { flush_interval: Duration::from_millis(2), ..LogConfig::default() }
}

fn policy(i: u64) -> storage::io::TornPolicy {
    match i % 3 {
        0 => FaultFs::TORN_RANDOM,
        1 => FaultFs::TEAR_ALL,
        _ => FaultFs::DROP_ALL_UNSYNCED,
    }
}

/// xorshift: workloads are functions of their seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

fn k(i: u64) -> Vec<u8> {
    i.to_be_bytes().to_vec()
}

fn contents(tree: &BTree) -> Model {
    let mut m = Model::new();
    tree.scan(Unbounded, Unbounded, |k, v| {
        m.insert(k.to_vec(), v.to_vec());
        true
    })
    .expect("scan");
    m
}

/// Opens the database (recovery runs) and returns the tree's contents after checking the
/// tree and the allocation structures.
fn recover(fs: &FaultFs, id: u16, au: u64, what: &str) -> Model {
    let fs_arc: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let (db, _) = TxnDb::open(BufferPool::new(256), fs_arc, id, &PathBuf::from(LOG), config())
        .unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    let problems = db.db.check_allocation().expect("check_allocation");
    assert!(problems.is_empty(), "{what}: allocation problems {problems:?}");
    let tree = BTree::open(&db.db, au, BTreeOptions { unique: true }).unwrap_or_else(|e| panic!("{what}: {e}"));
    tree.check().unwrap_or_else(|e| panic!("{what}: tree check: {e}"));
    let m = contents(&tree);
    db.log.shutdown();
    m
}

// ---------------------------------------------------------------------------------------
// A crash inside a checkpoint
// ---------------------------------------------------------------------------------------

/// Committed work on many pages, then an open transaction with uncommitted changes
/// spread over the same pages (the checkpoint writes them: steal). Returns the database,
/// the committed model and the tree's allocation unit.
fn before_checkpoint(fs: &FaultFs, seed: u64) -> (Arc<TxnDb>, Model, u64, txn::xact::Transaction) {
    let (files, log) = specs();
    let db =
        TxnDb::create(BufferPool::new(1024), Arc::new(fs.clone()), 21, "rm", files, log, config()).expect("create");
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    db.checkpoint(CheckpointKind::Manual).unwrap();
    let mut rng = Rng(seed | 1);
    let mut model = Model::new();
    for round in 0..12 {
        let t = db.begin("c", 1).unwrap();
        {
            let _in = t.enter();
            for _ in 0..150 {
                let key = k(rng.below(3000));
                let v = vec![round as u8; 20 + rng.below(200) as usize];
                let exists = model.contains_key(&key);
                if exists && rng.below(4) == 0 {
                    tree.delete(&key).unwrap();
                    model.remove(&key);
                    continue;
                }
                if exists {
                    tree.update(&key, &v).unwrap();
                } else {
                    tree.insert(&key, &v).unwrap();
                }
                model.insert(key, v);
            }
        }
        t.commit(false).unwrap();
    }
    let loser = db.begin("loser", 1).unwrap();
    {
        let _in = loser.enter();
        let mut mine = BTreeSet::new();
        for i in 0..200 {
            let key = k(rng.below(3000));
            if model.contains_key(&key) || !mine.insert(key.clone()) {
                tree.update(&key, &[0xEE; 150]).unwrap();
            } else {
                tree.insert(&key, &[0xEE; 150]).unwrap();
            }
            if i % 50 == 0 {
                tree.insert(&k(10_000 + i), &[0xEF; 30]).unwrap();
            }
        }
    }
    let au = tree.alloc_unit_id();
    (db, model, au, loser)
}

#[test]
fn a_crash_inside_a_checkpoint_recovers() {
    // How many writes one checkpoint makes here.
    let total = {
        let fs = FaultFs::new(1);
        let (db, model, au, loser) = before_checkpoint(&fs, 5);
        let before = fs.writes_done();
        let st = db.checkpoint(CheckpointKind::Manual).unwrap();
        assert!(st.pages_written > 20, "{st:?}");
        let total = fs.writes_done() - before;
        std::mem::forget(loser); // the process dies with it open
        fs.crash_now();
        drop(db);
        assert_eq!(recover(&fs.restart(), 21, au, "no crash"), model);
        total
    };
    let points: Vec<u64> = if long() {
        (1..=total + 1).collect()
    } else {
        (1..=total + 1).step_by(((total / 40) as usize).max(1)).collect()
    };
    for (i, p) in points.into_iter().enumerate() {
        let fs = FaultFs::new(100 + p);
        fs.set_torn_write_policy(policy(i as u64));
        let (db, model, au, loser) = before_checkpoint(&fs, 5);
        fs.crash_after_writes(p);
        let done = db.checkpoint(CheckpointKind::Manual).is_ok();
        std::mem::forget(loser);
        fs.crash_now();
        drop(db);
        let got =
            recover(&fs.restart(), 21, au, &format!("crash after checkpoint write {p} of {total} (completed: {done})"));
        assert!(
            got == model,
            "crash after checkpoint write {p} of {total}: {} rows, expected {}",
            got.len(),
            model.len()
        );
    }
}

// ---------------------------------------------------------------------------------------
// A crash during recovery
// ---------------------------------------------------------------------------------------

#[test]
fn a_crash_during_recovery_recovers_to_the_same_state() {
    // A crashed database with work to redo and a loser to undo; a small pool so that
    // pages of the loser were written (stolen) before the crash.
    let fs0 = FaultFs::new(7);
    fs0.set_torn_write_policy(FaultFs::DROP_ALL_UNSYNCED);
    let (model, au) = {
        let (files, log) = specs();
        let db = TxnDb::create(BufferPool::new(48), Arc::new(fs0.clone()), 22, "rm", files, log, config()).unwrap();
        let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
        db.checkpoint(CheckpointKind::Manual).unwrap();
        let mut model = Model::new();
        for round in 0..20u64 {
            let t = db.begin("c", 1).unwrap();
            {
                let _in = t.enter();
                for i in 0..100 {
                    let key = k((round * 7919 + i * 13) % 2500);
                    let v = vec![round as u8; 60 + (i % 90) as usize];
                    if model.contains_key(&key) {
                        tree.update(&key, &v).unwrap();
                    } else {
                        tree.insert(&key, &v).unwrap();
                    }
                    model.insert(key, v);
                }
            }
            t.commit(false).unwrap();
        }
        let loser = db.begin("loser", 1).unwrap();
        {
            let _in = loser.enter();
            for i in 0..300 {
                tree.insert(&k(5_000 + i), &[0xAB; 120]).unwrap();
            }
            for key in model.keys().take(100) {
                tree.delete(key).unwrap();
            }
        }
        db.log.flush_to(db.log.end_lsn()).unwrap();
        std::mem::forget(loser);
        fs0.crash_now();
        (model, tree.alloc_unit_id())
    };
    // The reference: one undisturbed recovery, and how many writes it makes.
    let reference = fs0.restart();
    let got = recover(&reference, 22, au, "reference recovery");
    assert_eq!(got, model);
    let total = reference.writes_done();
    // Enough writes to crash between: recovery writes its pages in gathered writes, so a
    // run makes about ten (log flushes, master record, end-of-recovery checkpoint).
    assert!(total >= 8, "recovery writes: {total}");

    let step = if long() { 1 } else { (total / 30).max(1) as usize };
    for (i, p) in (1..=total).step_by(step).enumerate() {
        // First recovery crashes after its p-th write...
        let fs1 = fs0.restart();
        fs1.set_torn_write_policy(policy(i as u64));
        fs1.crash_after_writes(p);
        let fs1_arc: Arc<dyn FileSystem> = Arc::new(fs1.clone());
        let first = TxnDb::open(BufferPool::new(48), fs1_arc, 22, &PathBuf::from(LOG), config());
        if let Ok((db, _)) = first {
            db.log.shutdown();
        }
        let fs2 = fs1.restart();
        // ...sometimes the second one too...
        if i % 4 == 1 {
            fs2.set_torn_write_policy(policy(i as u64 + 1));
            fs2.crash_after_writes(p / 2 + 1);
            let fs2_arc: Arc<dyn FileSystem> = Arc::new(fs2.clone());
            if let Ok((db, _)) = TxnDb::open(BufferPool::new(48), fs2_arc, 22, &PathBuf::from(LOG), config()) {
                db.log.shutdown();
            }
            let fs3 = fs2.restart();
            let got = recover(&fs3, 22, au, &format!("third recovery after crashes at writes {p} and {}", p / 2 + 1));
            assert!(got == model, "recovery after two crashed recoveries differs ({p})");
            continue;
        }
        // ...and the next recovery ends in the same state.
        let got = recover(&fs2, 22, au, &format!("second recovery after a crash at recovery write {p} of {total}"));
        assert!(
            got == model,
            "recovery after a crashed recovery (write {p} of {total}) differs: {} rows vs {}",
            got.len(),
            model.len()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Four writers, background checkpoints, random crashes
// ---------------------------------------------------------------------------------------

const THREADS: u64 = 4;
const KEYS_PER_TXN: u64 = 4;
/// Transactions per writer in one run.
const TXNS: u64 = 120;
/// The per-thread key holding the thread's last committed transaction number.
const COUNTER: u64 = 0xFFFF_FFFF;
/// A counter's value before the thread's first commit.
const NONE: u64 = u64::MAX;

fn mt_key(th: u64, txn: u64, j: u64) -> Vec<u8> {
    [th.to_be_bytes(), (txn << 8 | j).to_be_bytes()].concat()
}

fn counter_key(th: u64) -> Vec<u8> {
    [th.to_be_bytes(), COUNTER.to_be_bytes()].concat()
}

fn heap_row(th: u64, txn: u64) -> Vec<u8> {
    let layout = RowLayout::new(vec![ColumnLayout::fixed(8), ColumnLayout::fixed(8)]).expect("layout");
    let mut rec = Vec::new();
    let (a, b) = (th.to_le_bytes(), txn.to_le_bytes());
    encode_record(&layout, RecordType::Primary, &[ColumnValue::Inline(&a), ColumnValue::Inline(&b)], &mut rec)
        .expect("record");
    rec
}

/// What one writer thread saw.
#[derive(Default, Clone)]
struct WriterLog {
    /// Transactions whose commit returned Ok.
    acked: Vec<u64>,
    /// Transactions rolled back on purpose.
    rolled_back: Vec<u64>,
    /// The transaction whose commit was in progress when the thread stopped.
    in_flight: Option<u64>,
}

/// The writer logs, the tree's and the heap's allocation units, and (background
/// checkpoints, recovery writer pages).
type RunOutcome = (Vec<WriterLog>, u64, u64, (u64, u64));

/// One crash run: four threads until the crash (or `max_txns` each). Returns the writer
/// logs and the allocation units of the tree and the heap.
fn mt_run(fs: &FaultFs, seed: u64, crash_after: Option<u64>, max_txns: u64) -> Option<RunOutcome> {
    let (files, log) = specs();
    let db = TxnDb::create(BufferPool::new(160), Arc::new(fs.clone()), 23, "rm", files, log, config()).ok()?;
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).ok()?;
    let heap = Arc::new(Heap::create(&db.db, 11).ok()?);
    {
        // Each thread's counter starts at "none".
        let t = db.begin("counters", 1).ok()?;
        let _in = t.enter();
        for th in 0..THREADS {
            tree.insert(&counter_key(th), &NONE.to_be_bytes()).ok()?;
        }
        drop(_in);
        t.commit(false).ok()?;
    }
    db.checkpoint(CheckpointKind::Manual).ok()?;
    let (tree_au, heap_au) = (tree.alloc_unit_id(), heap.au_id());
    // Indirect checkpoints that really run: a recovery writer and light checkpoints
    // racing the writers.
    db.set_target_recovery_time(1);
    db.set_redo_estimate(RedoEstimate {
        log_bytes_per_sec: 200_000.0,
        page_cost: Duration::from_millis(5),
        measured: false,
    });
    db.set_background_poll(Duration::from_millis(2));
    db.start_background_checkpoints();
    if let Some(n) = crash_after {
        fs.crash_after_writes(n);
    }
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..THREADS)
        .map(|th| {
            let (db, tree, heap, stop) = (db.clone(), tree.clone(), heap.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(seed * 31 + th + 1);
                let mut out = WriterLog::default();
                for n in 0..max_txns {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(t) = db.begin("w", th as i32 + 1) else { break };
                    let ok = {
                        let _in = t.enter();
                        (0..KEYS_PER_TXN).all(|j| {
                            tree.insert(&mt_key(th, n, j), &vec![n as u8; 40 + rng.below(300) as usize]).is_ok()
                        }) && heap.insert(&heap_row(th, n)).is_ok()
                            && tree.update(&counter_key(th), &n.to_be_bytes()).is_ok_and(|found| found)
                    };
                    if !ok {
                        std::mem::forget(t); // crashed mid-transaction: nothing of it may survive
                        break;
                    }
                    if rng.below(7) == 0 {
                        if t.rollback().is_err() {
                            break;
                        }
                        // The rollback restored the counter too.
                        out.rolled_back.push(n);
                        continue;
                    }
                    out.in_flight = Some(n);
                    if t.commit(false).is_err() {
                        break;
                    }
                    out.in_flight = None;
                    out.acked.push(n);
                }
                out
            })
        })
        .collect();
    let logs: Vec<WriterLog> = handles.into_iter().map(|h| h.join().expect("writer thread")).collect();
    if crash_after.is_none() {
        // The clean run checks that the background checkpoints ran; on a busy machine the
        // writers can finish before the poller's first turn.
        let t0 = std::time::Instant::now();
        while (db.background_checkpoints() == 0 || db.recovery_writer_pages() == 0)
            && t0.elapsed() < Duration::from_secs(5)
        {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    stop.store(true, Ordering::Relaxed);
    fs.crash_now();
    db.stop_background_checkpoints();
    let background = (db.background_checkpoints(), db.recovery_writer_pages());
    Some((logs, tree_au, heap_au, background))
}

fn mt_verify(fs: &FaultFs, logs: &[WriterLog], tree_au: u64, heap_au: u64, what: &str) {
    let fs_arc: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let (db, _) = TxnDb::open(BufferPool::new(256), fs_arc, 23, &PathBuf::from(LOG), config())
        .unwrap_or_else(|e| panic!("{what}: recovery failed: {e}"));
    let problems = db.db.check_allocation().expect("check_allocation");
    assert!(problems.is_empty(), "{what}: allocation problems {problems:?}");
    let tree = BTree::open(&db.db, tree_au, BTreeOptions { unique: true }).unwrap();
    tree.check().unwrap_or_else(|e| panic!("{what}: tree check: {e}"));
    let heap = Heap::open(&db.db, heap_au).unwrap();
    heap.check().unwrap_or_else(|e| panic!("{what}: heap check: {e}"));
    // (thread, txn) -> keys present; counters.
    let mut keys: BTreeMap<(u64, u64), u64> = BTreeMap::new();
    let mut counters: BTreeMap<u64, u64> = BTreeMap::new();
    for (key, v) in contents(&tree) {
        let th = u64::from_be_bytes(key[..8].try_into().unwrap());
        let rest = u64::from_be_bytes(key[8..16].try_into().unwrap());
        if rest == COUNTER {
            counters.insert(th, u64::from_be_bytes(v[..8].try_into().unwrap()));
        } else {
            *keys.entry((th, rest >> 8)).or_default() += 1;
        }
    }
    let mut rows: BTreeSet<(u64, u64)> = BTreeSet::new();
    heap.scan(|_, rec| {
        // Fixed columns start after the 4-byte record header.
        let th = u64::from_le_bytes(rec[4..12].try_into().unwrap());
        let n = u64::from_le_bytes(rec[12..20].try_into().unwrap());
        assert!(rows.insert((th, n)), "{what}: heap row ({th}, {n}) twice");
        true
    })
    .unwrap();
    for (&(th, n), &count) in &keys {
        assert_eq!(count, KEYS_PER_TXN, "{what}: transaction ({th}, {n}) is partly present");
        assert!(rows.contains(&(th, n)), "{what}: transaction ({th}, {n}) has its keys but not its heap row");
    }
    for &(th, n) in &rows {
        assert!(keys.contains_key(&(th, n)), "{what}: transaction ({th}, {n}) has its heap row but not its keys");
    }
    for (th, log) in logs.iter().enumerate() {
        let th = th as u64;
        let present: BTreeSet<u64> = keys.keys().filter(|(t, _)| *t == th).map(|(_, n)| *n).collect();
        for n in &log.acked {
            assert!(present.contains(n), "{what}: acknowledged commit ({th}, {n}) is missing");
        }
        for n in &present {
            assert!(
                log.acked.contains(n) || log.in_flight == Some(*n),
                "{what}: ({th}, {n}) is present but never committed"
            );
        }
        // The counter names the newest committed transaction of the thread.
        let last = present.iter().next_back().copied().unwrap_or(NONE);
        assert_eq!(counters.get(&th).copied(), Some(last), "{what}: thread {th}'s counter");
    }
    db.log.shutdown();
}

#[test]
fn concurrent_writers_survive_random_crashes() {
    // A clean run gives the scale of the write counter.
    let fs = FaultFs::new(1);
    let (logs, tree_au, heap_au, (checkpoints, writer_pages)) = mt_run(&fs, 1, None, TXNS).expect("clean run");
    let total = fs.writes_done();
    assert!(logs.iter().all(|l| l.acked.len() as u64 > TXNS / 2), "every writer committed");
    assert!(checkpoints > 0 && writer_pages > 0, "background checkpoints ran: {checkpoints}, {writer_pages} pages");
    mt_verify(&fs.restart(), &logs, tree_au, heap_au, "clean run");

    let runs = if long() { 200 } else { 36 };
    let mut rng = Rng(0x5EED);
    let mut crashed_mid_run = 0;
    for run in 0..runs {
        let fs = FaultFs::new(1000 + run);
        fs.set_torn_write_policy(policy(run));
        let at = 20 + rng.below(total.max(40));
        let Some((logs, tree_au, heap_au, _)) = mt_run(&fs, run + 2, Some(at), TXNS) else { continue };
        if logs.iter().any(|l| ((l.rolled_back.len() + l.acked.len()) as u64) < TXNS) {
            crashed_mid_run += 1;
        }
        mt_verify(&fs.restart(), &logs, tree_au, heap_au, &format!("run {run}, crash after write {at} of ~{total}"));
    }
    assert!(crashed_mid_run >= runs / 3, "only {crashed_mid_run} of {runs} runs crashed while the writers ran");
}

// ---------------------------------------------------------------------------------------
// Delayed durability
// ---------------------------------------------------------------------------------------

/// (thread, txn) -> (commit LSN, acknowledged at).
type Acks = BTreeMap<(u64, u64), (u64, Instant)>;

#[test]
fn delayed_durability_loses_only_a_recent_suffix() {
    let flush_interval = Duration::from_millis(5);
    // The documented window is the flush interval plus one flush (about a millisecond
    // here). The slack covers a log writer thread that a loaded two-core test machine
    // does not schedule at once (the other tests of this file run beside this one); the
    // exact check below, against the flushed LSN, needs no slack.
    let window = flush_interval + Duration::from_millis(250);
    let runs = if long() { 40 } else { 10 };
    for run in 0..runs {
        let fs = FaultFs::new(50 + run);
        fs.set_torn_write_policy(policy(run));
        let (files, log) = specs();
        let cfg = LogConfig { flush_interval, ..LogConfig::default() };
        let db = TxnDb::create(BufferPool::new(512), Arc::new(fs.clone()), 24, "rm", files, log, cfg.clone()).unwrap();
        let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
        db.checkpoint(CheckpointKind::Manual).unwrap();
        let au = tree.alloc_unit_id();
        db.set_delayed_durability(DelayedDurability::Forced);
        let acks: Arc<Mutex<Acks>> = Arc::default();
        let crashed = Arc::new(AtomicBool::new(false));
        let committed = Arc::new(AtomicU64::new(0));
        let writers: Vec<_> = (0..3u64)
            .map(|th| {
                let (db, tree, acks, crashed, committed) =
                    (db.clone(), tree.clone(), acks.clone(), crashed.clone(), committed.clone());
                std::thread::spawn(move || {
                    // Bounded so the data file never grows (see `specs`).
                    for n in 0..4000 {
                        if crashed.load(Ordering::Relaxed) {
                            return;
                        }
                        let Ok(t) = db.begin("dd", th as i32 + 1) else { return };
                        let ok = {
                            let _in = t.enter();
                            tree.insert(&mt_key(th, n, 0), &[n as u8; 64]).is_ok()
                                && tree.insert(&mt_key(th, n, 1), &[n as u8; 64]).is_ok()
                        };
                        if !ok {
                            std::mem::forget(t);
                            return;
                        }
                        match t.commit(false) {
                            Ok(info) => {
                                assert!(info.delayed, "FORCED delays every commit");
                                acks.lock().unwrap().insert((th, n), (info.lsn.as_u64(), Instant::now()));
                                committed.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(_) => return,
                        }
                        // A steady stream rather than a burst, so the crash falls in it.
                        if n % 10 == 9 {
                            std::thread::sleep(Duration::from_millis(1));
                        }
                    }
                })
            })
            .collect();
        // Crash once the writers have been going for a while.
        let mut rng = Rng(run + 3);
        std::thread::sleep(Duration::from_millis(300 + rng.below(100)));
        // What the log says is durable (a flush completing in between only adds to it).
        let flushed = db.log.flushed_lsn().as_u64();
        fs.crash_now();
        let crash_at = Instant::now();
        crashed.store(true, Ordering::Relaxed);
        for w in writers {
            w.join().expect("writer");
        }
        let n = committed.load(Ordering::Relaxed);
        assert!(n > 0 && n < 3 * 4000, "{n} commits: the crash must fall inside the run");
        drop(tree);
        drop(db);

        let fs2: Arc<dyn FileSystem> = Arc::new(fs.restart());
        let (db, _) = TxnDb::open(BufferPool::new(512), fs2, 24, &PathBuf::from(LOG), cfg).expect("recovery");
        let tree = BTree::open(&db.db, au, BTreeOptions { unique: true }).unwrap();
        tree.check().unwrap();
        let mut present: BTreeMap<(u64, u64), u64> = BTreeMap::new();
        for (key, _) in contents(&tree) {
            let th = u64::from_be_bytes(key[..8].try_into().unwrap());
            let rest = u64::from_be_bytes(key[8..16].try_into().unwrap());
            *present.entry((th, rest >> 8)).or_default() += 1;
        }
        let acks = acks.lock().unwrap();
        let what = format!("run {run}");
        for (tx, n) in &present {
            assert_eq!(*n, 2, "{what}: transaction {tx:?} is partly present");
        }
        // A prefix of the commit order: nothing committed before a surviving commit is
        // missing.
        let newest = present.keys().filter_map(|tx| acks.get(tx).map(|a| a.0)).max().unwrap_or(0);
        for (tx, (lsn, _)) in acks.iter() {
            if *lsn <= newest {
                assert!(
                    present.contains_key(tx),
                    "{what}: {tx:?} (commit LSN {lsn}) lost although a later commit ({newest}) survived"
                );
            }
        }
        // Every commit the log had flushed survived.
        for (tx, (lsn, _)) in acks.iter() {
            if *lsn <= flushed {
                assert!(present.contains_key(tx), "{what}: {tx:?} (commit LSN {lsn}) was flushed but is lost");
            }
        }
        // Everything acknowledged well before the crash survived.
        let mut old_enough = 0;
        for (tx, (_, at)) in acks.iter() {
            if crash_at.duration_since(*at) > window {
                old_enough += 1;
                assert!(
                    present.contains_key(tx),
                    "{what}: {tx:?} acknowledged {:?} before the crash is lost",
                    crash_at.duration_since(*at)
                );
            }
        }
        assert!(old_enough > 0 || acks.is_empty(), "{what}: nothing was acknowledged early enough to check");
        db.log.shutdown();
    }
}
