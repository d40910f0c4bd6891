//! Crashes: torn tails, and a crash at every write of a concurrent workload. After each
//! restart the log must hold every record whose `flush_to` returned, intact, the records
//! present must be a contiguous run of the append order (a prefix, unless truncation
//! dropped the oldest), and the reopened log must take new records.

mod common;

use common::*;
use parking_lot::Mutex;
use std::sync::Arc;
use storage::file::FileGrowth;
use storage::io::{FaultFs, TornPolicy};
use txn::log::{LogManager, Lsn};

/// What a workload did before the crash.
#[derive(Default)]
struct Outcome {
    /// Every record `append` accepted.
    appended: Vec<(Lsn, Vec<u8>)>,
    /// The highest LSN a `flush_to` returned Ok for.
    acked: Lsn,
    /// The highest `keep_from` passed to `truncate` (whether or not it returned).
    keep_from: Lsn,
}

struct Workload {
    threads: u32,
    per_thread: u32,
    /// Record sizes cycle through these.
    sizes: &'static [usize],
    truncate: bool,
}

fn run(log: &Arc<LogManager>, w: &Workload) -> Outcome {
    let out = Mutex::new(Outcome::default());
    std::thread::scope(|s| {
        for t in 0..w.threads {
            let out = &out;
            s.spawn(move || {
                for i in 0..w.per_thread {
                    let len = w.sizes[(i as usize * 7 + t as usize * 3) % w.sizes.len()];
                    let rec = payload(t, i, len);
                    let Ok(lsn) = log.append(&rec) else { return };
                    out.lock().appended.push((lsn, rec));
                    // Even threads commit durably every other record; odd ones are
                    // delayed durable (the writer's timer or others' flushes harden
                    // their records).
                    if t % 2 == 0 && i % 2 == 0 {
                        if log.flush_to(lsn).is_err() {
                            return;
                        }
                        let mut o = out.lock();
                        o.acked = o.acked.max(lsn);
                    }
                    if w.truncate && t == 0 && i % 6 == 5 {
                        // Keep everything from a record that is durable already.
                        let keep = out.lock().acked;
                        {
                            let mut o = out.lock();
                            o.keep_from = o.keep_from.max(keep);
                        }
                        if log.truncate(keep).is_err() {
                            return;
                        }
                    }
                }
            });
        }
    });
    let mut o = out.into_inner();
    o.appended.sort_by_key(|(l, _)| *l);
    o
}

/// Checks the restarted log against what the workload did, then that it takes new
/// records and reopens with them.
fn check_after_crash(fs: FaultFs, db: u16, name: &str, o: &Outcome, what: &str) {
    let log = match LogManager::open_with(Arc::new(fs.clone()), &log_path(), db, name, config_fast()) {
        Ok(l) => l,
        Err(e) => panic!("{what}: reopen failed: {e}"),
    };
    let got = read_all(&log);
    if let Some((first, _)) = got.first() {
        let Some(s) = o.appended.iter().position(|(l, _)| l == first) else {
            panic!("{what}: first record {first} was never appended");
        };
        let run = &o.appended[s..];
        assert!(got.len() <= run.len(), "{what}: more records than appended");
        for (i, (g, want)) in got.iter().zip(run).enumerate() {
            assert_eq!(g.0, want.0, "{what}: record {i} is out of order");
            assert!(g.1 == want.1, "{what}: record {} is damaged", g.0);
        }
        // Only truncation drops records, and only records before keep_from (with no
        // truncation the log is a prefix of the append order).
        assert!(
            s == 0 || o.appended[s - 1].0 < o.keep_from,
            "{what}: records before {first} lost (keep_from {})",
            o.keep_from
        );
    }
    let last = got.last().map_or(Lsn::NULL, |(l, _)| *l);
    assert!(last >= o.acked, "{what}: acknowledged {} but the log ends at {last}", o.acked);
    // The reopened log works and keeps what it found.
    let l = log.append(b"after the crash").unwrap_or_else(|e| panic!("{what}: {e}"));
    log.flush_to(l).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(l > last);
    log.shutdown();
    drop(log);
    let log = open(Arc::new(fs), db, name);
    let again = read_all(&log);
    assert_eq!(again.len(), got.len() + 1, "{what}: reopen after the new record");
    assert_eq!(&again[..got.len()], &got[..], "{what}");
    assert_eq!(again.last().unwrap().1, b"after the crash");
}

/// One crash run: create, arm the crash after `crash_after` writes (0 = no crash),
/// run, restart, check.
fn crash_run(seed: u64, policy: TornPolicy, crash_after: u64, w: &Workload) -> u64 {
    let fs = FaultFs::new(seed);
    fs.set_torn_write_policy(policy);
    let db = db_id();
    let name = db_name("crash");
    let log = create(Arc::new(fs.clone()), db, &name, 264 * KB, FileGrowth::Pages(32), None);
    let before = fs.writes_done();
    if crash_after > 0 {
        fs.crash_after_writes(crash_after);
    }
    let o = run(&log, w);
    let writes = fs.writes_done() - before;
    let fs2 = fs.restart();
    drop(log);
    let what = format!("seed {seed}, {policy:?}, crash after {crash_after} of {writes} writes");
    check_after_crash(fs2, db, &name, &o, &what);
    writes
}

const SIZES: &[usize] = &[1, 40, 300, 511, 700, 2000, 5000, 12_000, 100, 33_000];

#[test]
fn torn_tail_keeps_a_prefix_with_every_durable_record() {
    let w = Workload { threads: 1, per_thread: 40, sizes: SIZES, truncate: false };
    let rounds = if std::env::var("MESQUITE_LONG").is_ok() { 400 } else { 60 };
    for seed in 0..rounds {
        let policy = if seed % 2 == 0 { TornPolicy::TearAll } else { TornPolicy::Random };
        crash_run(seed, policy, 1 + seed % 30, &w);
    }
}

fn crash_points(total: u64) -> Vec<u64> {
    let cap = if std::env::var("MESQUITE_LONG").is_ok() { u64::MAX } else { 300 };
    if total <= cap {
        (1..=total).collect()
    } else {
        (0..cap).map(|i| 1 + i * total / cap).collect()
    }
}

/// Runs the workload once to count its writes, then once per crash point. The
/// workload's threads interleave differently each run, so a crash point is "the k-th
/// write" of that run, whatever it happens to be. MESQUITE_LONG=1 repeats the sweep
/// with more seeds.
fn every_write_point(w: &Workload, base_seed: u64) {
    let sweeps = if std::env::var("MESQUITE_LONG").is_ok() { 5 } else { 1 };
    for sweep in 0..sweeps {
        let base_seed = base_seed + sweep * 100_000;
        let total = crash_run(base_seed, TornPolicy::Random, 0, w);
        assert!(total > 20, "the workload should write more ({total})");
        for k in crash_points(total) {
            let policy = match (k + sweep) % 3 {
                0 => TornPolicy::Random,
                1 => TornPolicy::TearAll,
                _ => TornPolicy::KeepAllUnsynced,
            };
            crash_run(base_seed + k, policy, k, w);
        }
    }
}

#[test]
fn crash_at_every_write_point() {
    every_write_point(&Workload { threads: 4, per_thread: 60, sizes: SIZES, truncate: false }, 1000);
}

#[test]
fn crash_at_every_write_point_with_truncation() {
    every_write_point(&Workload { threads: 3, per_thread: 70, sizes: SIZES, truncate: true }, 5000);
}

#[test]
fn crash_right_after_appends_loses_only_unflushed_records() {
    let fs = FaultFs::new(77);
    fs.set_torn_write_policy(TornPolicy::DropAllUnsynced);
    let db = db_id();
    let name = db_name("delayed_crash");
    let log = create(Arc::new(fs.clone()), db, &name, MB, FileGrowth::None, None);
    log.set_flush_interval(std::time::Duration::from_secs(3600));
    let mut durable = Vec::new();
    for i in 0..10u32 {
        let rec = payload(5, i, 200);
        let l = log.append(&rec).unwrap();
        durable.push((l, rec));
    }
    log.flush_to(log.end_lsn()).unwrap();
    // Delayed-durable commits: acknowledged, still in the log buffer.
    for i in 10..20u32 {
        log.append(&payload(5, i, 200)).unwrap();
    }
    let fs2 = fs.restart();
    drop(log);
    let log = open(Arc::new(fs2), db, &name);
    assert_eq!(read_all(&log), durable);
}

/// Crash after crash on the same log: each incarnation appends after what the previous
/// restart found, and crashes part way. Stale blocks an incarnation leaves past the end
/// of the log (a torn write lost an earlier block but kept a later one) must never be
/// spliced into the log when a later incarnation's blocks reach them.
///
/// The records are sized so this happens: two 30,600-byte records fill a block of
/// exactly 120 sectors and a 300-byte one takes a 1-sector block after it. Pattern A
/// appends all three and flushes them in one write, which the crash tears (the small
/// block often survives whole, past the torn big one: a stale block). Pattern B flushes
/// the two big records first (a durable 120-sector block that ends exactly where the
/// stale block starts), then crashes while writing the small one.
#[test]
fn repeated_crashes_never_resurrect_stale_blocks() {
    let rounds = if std::env::var("MESQUITE_LONG").is_ok() { 60 } else { 12 };
    let config =
        txn::log::LogConfig { flush_interval: std::time::Duration::from_secs(3600), ..txn::log::LogConfig::default() };
    for seed in 0..rounds {
        let mut fs = FaultFs::new(seed * 7919);
        fs.set_torn_write_policy(TornPolicy::TearAll);
        let db = db_id();
        let name = db_name("recrash");
        drop(create(Arc::new(fs.clone()), db, &name, 8 * MB, FileGrowth::Pages(256), None));
        let mut log_now: Vec<(Lsn, Vec<u8>)> = Vec::new();
        for cycle in 0..30u32 {
            let what = format!("seed {seed} cycle {cycle}");
            let log = LogManager::open_with(Arc::new(fs.clone()), &log_path(), db, &name, config.clone())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!(read_all(&log), log_now, "{what}: the log changed across a clean open");
            let pattern_a = cycle % 2 == 0;
            fs.crash_after_writes(if pattern_a { 1 } else { 2 });
            let mut appended = Vec::new();
            let mut acked = Lsn::NULL;
            for (i, len) in [30_600usize, 30_600, 300].into_iter().enumerate() {
                let rec = payload(cycle, i as u32, len);
                let Ok(l) = log.append(&rec) else { break };
                appended.push((l, rec));
                if i == 2 || (!pattern_a && i == 1) {
                    if log.flush_to(l).is_err() {
                        break;
                    }
                    acked = l;
                }
            }
            let next = fs.restart();
            drop(log);
            fs = next;
            let log = open(Arc::new(fs.clone()), db, &name);
            let got = read_all(&log);
            assert!(got.len() >= log_now.len(), "{what}: lost records");
            assert_eq!(&got[..log_now.len()], &log_now[..], "{what}");
            let new = &got[log_now.len()..];
            assert!(new.len() <= appended.len(), "{what}: records nobody appended");
            assert!(new == &appended[..new.len()], "{what}: not a prefix of this cycle's records");
            assert!(got.last().map_or(Lsn::NULL, |r| r.0) >= acked, "{what}");
            log_now = got;
            log.shutdown();
        }
    }
}
