//! Crash recovery against a model.
//!
//! A deterministic workload (transactions of B+tree and heap inserts, updates and
//! deletes, some rolled back, some savepoints, checkpoints) runs on the fault-injecting
//! file system. A first run counts its writes; then the same workload is crashed after
//! the n-th write for many n, the "machine" restarts (unsynced writes dropped, kept or
//! torn at 512-byte sectors), the database is opened (recovery runs), and its contents
//! must equal the model after the last acknowledged commit — or after the commit that
//! was in flight, whose record may have reached the disk before the crash. Every
//! structure must pass its own check and the allocation cross-check.
//!
//! `MESQUITE_LONG=1` runs more seeds and every crash point.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FaultFs, FileSystem, TornPolicy};
use storage::BufferPool;
use txn::checkpoint::CheckpointKind;
use txn::recovery::LogSpec;
use txn::xact::TxnDb;
use txn::LogConfig;

const DB: u16 = 5;
/// Transactions per workload run.
const TXNS: usize = 150;

fn long() -> bool {
    std::env::var("MESQUITE_LONG").is_ok_and(|v| v == "1")
}

fn specs() -> (Vec<FileSpec>, LogSpec) {
    let data = FileSpec {
        file_id: 1,
        name: "crash".into(),
        path: PathBuf::from("/data/crash.mdf"),
        size_pages: 64,
        growth: FileGrowth::Pages(64),
        max_pages: None,
    };
    let log = LogSpec {
        path: PathBuf::from("/data/crash.ldf"),
        size_bytes: 4 << 20,
        growth: FileGrowth::Pages(256),
        max_bytes: None,
    };
    (vec![data], log)
}

fn config() -> LogConfig {
    LogConfig { flush_interval: std::time::Duration::from_millis(2), ..LogConfig::default() }
}

/// xorshift: the workload is a pure function of its seed.
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

/// What a (possibly crashed) run established.
struct Outcome {
    /// Model after the last commit that returned success.
    acked: Model,
    /// Model if the commit in flight at the crash made it to disk.
    in_flight: Option<Model>,
    tree_au: u64,
    completed: bool,
}

fn key(k: u64) -> Vec<u8> {
    k.to_be_bytes().to_vec()
}

fn value(rng: &mut Rng) -> Vec<u8> {
    let len = 10 + rng.below(600) as usize;
    let b = rng.next() as u8;
    (0..len).map(|i| b.wrapping_add(i as u8)).collect()
}

/// Runs the workload until it finishes or the first error (the crash).
fn run(fs: &FaultFs, seed: u64, txns: usize) -> Outcome {
    let pool = BufferPool::new(48); // small: pages are evicted and written mid-transaction
    let fs_arc: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let (files, log) = specs();
    let mut out = Outcome { acked: Model::new(), in_flight: None, tree_au: 0, completed: false };
    let Ok(db) = TxnDb::create(pool.clone(), fs_arc, DB, "crash", files, log, config()) else { return out };
    let Ok(tree) = BTree::create(&db.db, 100, 1, BTreeOptions { unique: true }) else { return out };
    // The tree exists durably once the checkpoint has flushed the log past its creation.
    if db.checkpoint(CheckpointKind::Manual).is_err() {
        return out;
    }
    out.tree_au = tree.alloc_unit_id();
    let mut rng = Rng(seed | 1);
    let mut model = Model::new();
    for _ in 0..txns {
        let Ok(mut t) = db.begin("t", 51) else { return out };
        let mut work = model.clone();
        let mut saved: Option<Model> = None;
        let n_ops = 1 + rng.below(12);
        for _ in 0..n_ops {
            let k = rng.below(300);
            let r = {
                let _in = t.enter();
                match rng.below(10) {
                    0..=4 => {
                        let v = value(&mut rng);
                        if work.contains_key(&key(k)) {
                            tree.update(&key(k), &v).map(|_| {
                                work.insert(key(k), v);
                            })
                        } else {
                            tree.insert(&key(k), &v).map(|_| {
                                work.insert(key(k), v);
                            })
                        }
                    }
                    5..=7 => tree.delete(&key(k)).map(|_| {
                        work.remove(&key(k));
                    }),
                    _ => Ok(()),
                }
            };
            if r.is_err() {
                return out; // crashed mid-transaction: nothing of it may survive
            }
            if saved.is_none() && rng.below(8) == 0 {
                if t.save("sp").is_err() {
                    return out;
                }
                saved = Some(work.clone());
            }
        }
        match rng.below(10) {
            0 => {
                if t.rollback().is_err() {
                    return out;
                }
            }
            1 if saved.is_some() => {
                if t.rollback_to("sp").is_err() {
                    return out;
                }
                work = saved.take().unwrap_or_default();
                out.in_flight = Some(work.clone());
                if t.commit(false).is_err() {
                    return out;
                }
                model = work;
                out.acked = model.clone();
                out.in_flight = None;
            }
            _ => {
                out.in_flight = Some(work.clone());
                if t.commit(false).is_err() {
                    return out;
                }
                model = work;
                out.acked = model.clone();
                out.in_flight = None;
            }
        }
        if rng.below(15) == 0 && db.checkpoint(CheckpointKind::Manual).is_err() {
            return out;
        }
    }
    out.completed = true;
    out
}

/// Opens the crashed database and compares it with the model.
fn verify(fs: &FaultFs, o: &Outcome, what: &str) {
    let pool = BufferPool::new(64);
    let fs_arc: Arc<dyn FileSystem> = Arc::new(fs.clone());
    let (db, _report) = match TxnDb::open(pool, fs_arc, DB, &specs().1.path, config()) {
        Ok(x) => x,
        Err(e) => panic!("{what}: recovery failed: {e}"),
    };
    let problems = db.db.check_allocation().expect("check_allocation");
    assert!(problems.is_empty(), "{what}: allocation problems {problems:?}");
    let tree = BTree::open(&db.db, o.tree_au, BTreeOptions { unique: true }).unwrap_or_else(|e| panic!("{what}: {e}"));
    tree.check().unwrap_or_else(|e| panic!("{what}: tree check: {e}"));
    let mut got = Model::new();
    tree.scan(std::ops::Bound::Unbounded, std::ops::Bound::Unbounded, |k, v| {
        got.insert(k.to_vec(), v.to_vec());
        true
    })
    .unwrap();
    let ok = got == o.acked || o.in_flight.as_ref() == Some(&got);
    assert!(
        ok,
        "{what}: recovered {} rows; acknowledged state has {}; in-flight state has {:?}",
        got.len(),
        o.acked.len(),
        o.in_flight.as_ref().map(|m| m.len())
    );
    db.log.shutdown();
}

fn crash_points(total: u64, want: usize) -> Vec<u64> {
    if long() || (total as usize) <= want {
        return (1..=total).collect();
    }
    let step = total as f64 / want as f64;
    (0..want).map(|i| 1 + (i as f64 * step) as u64).collect()
}

#[test]
fn recovery_after_a_crash_at_many_write_points() {
    let seeds: Vec<u64> = if long() { (1..=12).collect() } else { vec![11, 23, 37, 41, 53, 67, 79] };
    let mut points_run = 0usize;
    for seed in seeds {
        let total = {
            let fs = FaultFs::new(seed);
            let o = run(&fs, seed, TXNS);
            assert!(o.completed, "seed {seed}: the workload must run to completion without faults");
            verify(&fs, &o, &format!("seed {seed}, clean shutdown-less reopen"));
            fs.writes_done()
        };
        for (i, p) in crash_points(total, 260).into_iter().enumerate() {
            let fs = FaultFs::new(seed * 1000 + p);
            fs.set_torn_write_policy(match i % 3 {
                0 => TornPolicy::Random,
                1 => TornPolicy::TearAll,
                _ => TornPolicy::DropAllUnsynced,
            });
            fs.crash_after_writes(p);
            let o = run(&fs, seed, TXNS);
            if o.tree_au == 0 {
                continue; // crashed before the tree existed durably
            }
            let restarted = fs.restart();
            verify(&restarted, &o, &format!("seed {seed}, crash after write {p} of {total}"));
            points_run += 1;
        }
    }
    assert!(points_run >= 1000 || long(), "ran {points_run} crash points, fewer than 1,000");
}
