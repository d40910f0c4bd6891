//! Log flush rate on real files: why log files are preallocated (and zeroed).
//!
//! Each case appends 4 KB and makes it durable before the next, one at a time, for a
//! fixed time, in a temporary directory:
//!
//! - (a) the log manager on a preallocated, zero-filled log file (SQL Server's way):
//!   `append` + `flush_to`, i.e. a write into allocated, initialized blocks + fdatasync;
//! - (a') the same log manager with a preallocated but not zeroed file (fallocate only:
//!   the file system still has to convert the "unwritten" extents on the first write);
//! - (b) a plain file that grows with each write (append at the end + fdatasync), which
//!   makes every sync also commit the file's new size and block allocation;
//! - (c) raw writes into a preallocated, zeroed file + fdatasync, without the log
//!   manager, to show what the log manager itself adds;
//! - (d) 8 committing threads on the log manager (group commit): commits/s and commits
//!   per flush.
//!
//! Run: `cargo run --release -p txn --example log_flush [seconds per case]`
//! (`MESQUITE_BENCH_DIR` picks the directory; the default is the system temp dir).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::file::FileGrowth;
use storage::io::{FileSystem, OsFs};
use txn::log::{LogConfig, LogManager};

const RECORD: usize = 4096;
const LOG_SIZE: u64 = 256 * 1024 * 1024;

fn dir() -> PathBuf {
    let base = std::env::var_os("MESQUITE_BENCH_DIR").map(PathBuf::from).unwrap_or_else(std::env::temp_dir);
    let d = base.join(format!("mesquite-log-flush-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("create the benchmark directory");
    d
}

struct Result {
    ops: u64,
    secs: f64,
    /// Commits per log flush (group commit case only).
    per_flush: f64,
}

impl Result {
    fn rate(&self) -> f64 {
        self.ops as f64 / self.secs
    }
}

fn log_manager_case(path: &Path, zero_fill: bool, secs: f64) -> Result {
    let fs: Arc<dyn FileSystem> = Arc::new(OsFs);
    let config = LogConfig { zero_fill, ..LogConfig::default() };
    let log =
        LogManager::create_with(fs, path, 1, "bench", LOG_SIZE, FileGrowth::None, None, config).expect("create log");
    let rec = vec![0x5Au8; RECORD];
    let start = Instant::now();
    let mut ops = 0;
    while start.elapsed().as_secs_f64() < secs {
        let lsn = log.append(&rec).expect("append");
        log.flush_to(lsn).expect("flush");
        ops += 1;
        if ops % 4096 == 0 {
            // What a checkpoint does in SIMPLE recovery: lets the log wrap around.
            log.truncate(lsn).expect("truncate");
        }
    }
    let secs = start.elapsed().as_secs_f64();
    log.shutdown();
    drop(log);
    let _ = std::fs::remove_file(path);
    Result { ops, secs, per_flush: 0.0 }
}

fn growing_file_case(path: &Path, secs: f64) -> Result {
    let f = OsFs.open(path, true).expect("create file");
    let rec = vec![0x5Au8; RECORD];
    let start = Instant::now();
    let mut ops = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        f.write_at(ops * RECORD as u64, &rec).expect("write");
        f.sync().expect("fdatasync");
        ops += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    drop(f);
    let _ = std::fs::remove_file(path);
    Result { ops, secs, per_flush: 0.0 }
}

fn raw_preallocated_case(path: &Path, secs: f64) -> Result {
    let f = OsFs.open(path, true).expect("create file");
    let size = 256 * 1024 * 1024u64;
    f.set_len(size).expect("preallocate");
    let zeros = vec![0u8; 1 << 20];
    let mut at = 0;
    while at < size {
        f.write_at(at, &zeros).expect("zero");
        at += zeros.len() as u64;
    }
    f.sync().expect("sync");
    let rec = vec![0x5Au8; RECORD];
    let start = Instant::now();
    let mut ops = 0u64;
    while start.elapsed().as_secs_f64() < secs {
        f.write_at((ops * RECORD as u64) % size, &rec).expect("write");
        f.sync().expect("fdatasync");
        ops += 1;
    }
    let secs = start.elapsed().as_secs_f64();
    drop(f);
    let _ = std::fs::remove_file(path);
    Result { ops, secs, per_flush: 0.0 }
}

fn group_commit_case(path: &Path, threads: u32, secs: f64) -> Result {
    let fs: Arc<dyn FileSystem> = Arc::new(OsFs);
    let log = LogManager::create(fs, path, 1, "bench_group", LOG_SIZE, FileGrowth::None, None).expect("create log");
    let start = Instant::now();
    let deadline = Duration::from_secs_f64(secs);
    let total: u64 = std::thread::scope(|s| {
        // A checkpoint every 100 ms (SIMPLE recovery) lets the log wrap around.
        s.spawn(|| {
            while start.elapsed() < deadline {
                std::thread::sleep(Duration::from_millis(100));
                log.truncate(log.flushed_lsn()).expect("truncate");
            }
        });
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let log = &log;
                s.spawn(move || {
                    let rec = vec![0xA5u8; RECORD];
                    let mut n = 0u64;
                    while start.elapsed() < deadline {
                        let lsn = log.append(&rec).expect("append");
                        log.flush_to(lsn).expect("flush");
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or(0)).sum()
    });
    let secs = start.elapsed().as_secs_f64();
    let per_flush = log.stats().commits_per_flush();
    log.shutdown();
    drop(log);
    let _ = std::fs::remove_file(path);
    Result { ops: total, secs, per_flush }
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(2.0);
    let rounds = 3;
    let d = dir();
    println!(
        "log flush benchmark: {RECORD}-byte records, best of {rounds} rounds of {secs} s per case, in {}",
        d.display()
    );
    const NAMES: [&str; 5] = [
        "(a)  log manager, preallocated + zeroed log: ",
        "(a') log manager, fallocate only (unwritten):",
        "(b)  growing file, append + fdatasync:       ",
        "(c)  raw pwrite + fdatasync, zeroed file:    ",
        "(d)  log manager, 8 committing threads:      ",
    ];
    // Rounds outside, cases inside: load from other processes comes and goes, and this
    // way it hits every case alike. Each case keeps its best round (noise only ever
    // slows a run down).
    let mut best: Vec<Option<Result>> = (0..NAMES.len()).map(|_| None).collect();
    for r in 0..rounds {
        for (case, slot) in best.iter_mut().enumerate() {
            let path = d.join(format!("case{case}-{r}"));
            let x = match case {
                0 => log_manager_case(&path, true, secs),
                1 => log_manager_case(&path, false, secs),
                2 => growing_file_case(&path, secs),
                3 => raw_preallocated_case(&path, secs),
                _ => group_commit_case(&path, 8, secs),
            };
            match slot {
                Some(o) if o.rate() >= x.rate() => {}
                _ => *slot = Some(x),
            }
        }
    }
    let rate = |i: usize| best[i].as_ref().map_or(0.0, Result::rate);
    for (i, name) in NAMES.iter().enumerate() {
        let Some(x) = &best[i] else { continue };
        if i == 4 {
            println!("{name} {:>8.0} commits/s  ({:.1} commits per flush)", x.rate(), x.per_flush);
        } else {
            println!("{name} {:>8.0} flushes/s  ({} flushes)", x.rate(), x.ops);
        }
    }
    println!("preallocated log (a) vs growing file (b): {:.1}x the flushes per second", rate(0) / rate(2));
    let _ = std::fs::remove_dir_all(&d);
}
