//! Commit, checkpoint and recovery benchmark, Mesquite beside SQLite in one run on one
//! machine (embedded, no network, files on the real disk through `OsFs`).
//!
//! What it measures:
//! 1. **Commits.** One-row transactions (insert one 100-byte row into a clustered B+tree,
//!    commit) from 1, 8 and 16 threads, fully durable (every commit waits for its log
//!    flush: group commit is what makes this scale) and with DELAYED_DURABILITY = FORCED;
//!    then 1000-row transactions from 8 and 16 threads, durable. Reported: transactions/s,
//!    transactions per log flush (LogManager::stats; for durable runs this is the group
//!    commit factor) and the WRITELOG wait per commit, summed from each worker's own
//!    session wait table (sys.dm_exec_session_wait_stats, as the seed measured it).
//!    Keys are (run, thread, sequence), so each thread appends to its own part of the tree.
//!    SQLite runs the same transactions (BEGIN IMMEDIATE; INSERT ...; COMMIT, a connection
//!    per thread, WAL mode, synchronous=FULL and synchronous=OFF); it serialises writers,
//!    so its threads wait in busy_timeout.
//! 2. **Checkpoints** of G GB of dirty pages: an automatic checkpoint (every dirty page, in
//!    page order, then one sync) and the indirect checkpoint's primitive (a loop of
//!    `flush_oldest` 64 pages at a time, oldest recLSN first, then one sync), beside the
//!    raw sequential write bandwidth of the same disk measured in the same run (G GB in
//!    1 MB writes over a file written once before, then fdatasync).
//! 3. **Recovery** after a crash with about G GB of log to redo: G GB of rows inserted with
//!    no checkpoint, the buffer pool dropped without writing a page, then `TxnDb::open`.
//!    Reported: redo seconds and MB/s of log replayed, and the whole open (analysis, redo,
//!    undo and the internal checkpoint that writes the redone pages).
//!
//! Usage: bench-commit [--quick] [--seconds S] [--gb G] [--dir DIR] [--only commits|checkpoints|delayed|bulk]
//!        [--threads N] [--no-sqlite]
//! `--only delayed` runs only the delayed-durability commit cases, `--only bulk` only the
//! 1000-row ones, `--threads N` only the commit cases with N threads, and `--no-sqlite`
//! leaves SQLite out (for profiling one case). Each commit case also reports on stderr the
//! page splits it made per 1000 rows, and the end the table's leaf pages and fill.
//! Defaults: 3 s per commit run, 1 GB, a fresh directory under the system temp directory
//! (removed at the end). `--quick` is a smoke run: 0.3 s runs and 64 MB.

/// The allocator the `mesquite` binary runs on (docs/architecture.md, "Memory allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FileSystem, OsFs};
use storage::BufferPool;
use txn::checkpoint::CheckpointKind;
use txn::recovery::LogSpec;
use txn::xact::{DelayedDurability, TxnDb};
use txn::LogConfig;

const MB: f64 = 1_048_576.0;
const PAGE: u64 = 8192;

struct Args {
    only: Option<String>,
    threads: Option<usize>,
    sqlite: bool,
    seconds: f64,
    bytes: u64,
    dir: PathBuf,
}

fn parse_args() -> Args {
    let mut a = Args {
        only: None,
        threads: None,
        sqlite: true,
        seconds: 3.0,
        bytes: 1 << 30,
        dir: std::env::temp_dir().join(format!("mesquite-bench-commit-{}", std::process::id())),
    };
    let usage = || -> ! {
        eprintln!(
            "usage: bench-commit [--quick] [--seconds S] [--gb G] [--dir DIR] [--only commits|checkpoints|delayed|bulk] \
             [--threads N] [--no-sqlite]"
        );
        std::process::exit(2)
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        match k.as_str() {
            "--quick" => {
                a.seconds = 0.3;
                a.bytes = 64 << 20;
            }
            "--seconds" => a.seconds = it.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage()),
            "--gb" => {
                a.bytes = it
                    .next()
                    .and_then(|v| v.parse::<f64>().ok())
                    .map(|g| (g * 1024.0 * MB) as u64)
                    .unwrap_or_else(|| usage())
            }
            "--threads" => a.threads = Some(it.next().and_then(|v| v.parse().ok()).unwrap_or_else(|| usage())),
            "--no-sqlite" => a.sqlite = false,
            "--dir" => a.dir = it.next().map(PathBuf::from).unwrap_or_else(|| usage()),
            "--only" => {
                a.only = Some(
                    it.next()
                        .filter(|v| v == "commits" || v == "checkpoints" || v == "delayed" || v == "bulk")
                        .unwrap_or_else(|| usage()),
                )
            }
            _ => usage(),
        }
    }
    a
}

/// The benchmark's directory, removed when the run ends (or panics).
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn row(n: u64, len: usize) -> Vec<u8> {
    let mut x = n.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Commits
// ---------------------------------------------------------------------------------------

#[derive(Clone, Copy, Default)]
struct RunResult {
    threads: usize,

    txns: u64,
    secs: f64,
    /// Log flushes during the run (Mesquite), None for SQLite.
    flushes: Option<u64>,
    /// WRITELOG wait summed over the workers' sessions, in microseconds.
    writelog_us: Option<u64>,
    /// CPU time (user + system) and context switches of the whole process during the
    /// run (Mesquite only): per-transaction costs that stay readable when other work
    /// shares the machine, unlike transactions/s.
    cpu: Option<Rusage>,
}

#[derive(Clone, Copy, Default)]
struct Rusage {
    cpu_us: u64,
    switches: u64,
}

impl Rusage {
    fn now() -> Rusage {
        // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF cannot fail.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut r) };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Rusage { cpu_us: us(r.ru_utime) + us(r.ru_stime), switches: (r.ru_nvcsw + r.ru_nivcsw) as u64 }
    }

    fn since(self, before: Rusage) -> Rusage {
        Rusage { cpu_us: self.cpu_us - before.cpu_us, switches: self.switches - before.switches }
    }
}

impl RunResult {
    fn tps(&self) -> f64 {
        self.txns as f64 / self.secs
    }
}

fn commit_db(dir: &Path) -> (Arc<TxnDb>, BTree) {
    let fs: Arc<dyn FileSystem> = Arc::new(OsFs);
    let data = FileSpec {
        file_id: 1,
        name: "commits".into(),
        path: dir.join("commits.mdf"),
        size_pages: 32_768, // 256 MB: no growth during the runs
        growth: FileGrowth::Pages(8192),
        max_pages: None,
    };
    let log = LogSpec {
        path: dir.join("commits.ldf"),
        size_bytes: 256 << 20,
        growth: FileGrowth::Pages(32_768),
        max_bytes: None,
    };
    let db =
        TxnDb::create(BufferPool::with_memory_limit(1 << 30), fs, 10, "commits", vec![data], log, LogConfig::default())
            .expect("create the commit database");
    // As a server runs it: TARGET_RECOVERY_TIME = 60 s and its recovery writer.
    db.start_background_checkpoints();
    let tree = BTree::create(&db.db, 100, 1, BTreeOptions { unique: true }).expect("create the table");
    (db, tree)
}

fn run_ours(
    db: &Arc<TxnDb>,
    tree: &BTree,
    run: u64,
    threads: usize,
    rows: usize,
    delayed: bool,
    secs: f64,
) -> RunResult {
    db.set_delayed_durability(if delayed { DelayedDurability::Forced } else { DelayedDurability::Disabled });
    let before = db.log.stats();
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads as u64)
        .map(|th| {
            let (db, tree, stop, start) = (db.clone(), tree.clone(), stop.clone(), start.clone());
            std::thread::spawn(move || {
                let waits = Arc::new(diag::WaitStats::new());
                let _session = diag::SessionScope::enter(waits.clone());
                let value = row(th, 100);
                let mut seq = 0u64;
                let mut txns = 0u64;
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    let t = db.begin("bench", th as i32 + 51).expect("begin");
                    {
                        let _in = t.enter();
                        for _ in 0..rows {
                            let key = (run << 56 | th << 40 | seq).to_be_bytes();
                            tree.insert(&key, &value).expect("insert");
                            seq += 1;
                        }
                    }
                    t.commit(false).expect("commit");
                    txns += 1;
                }
                (txns, waits.get(diag::WaitType::WRITELOG).wait_time_us)
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    let r0 = Rusage::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let mut out = RunResult { threads, ..Default::default() };
    let mut wl = 0;
    for h in handles {
        let (n, w) = h.join().expect("worker");
        out.txns += n;
        wl += w;
    }
    out.secs = t0.elapsed().as_secs_f64();
    out.cpu = Some(Rusage::now().since(r0));
    out.flushes = Some(db.log.stats().flushes - before.flushes);
    out.writelog_us = Some(wl);
    // Harden delayed commits before the next run (not timed): sys.sp_flush_log.
    db.log.flush_to(db.log.end_lsn()).expect("sp_flush_log");
    out
}

fn sqlite_db(path: &Path) {
    let conn = rusqlite::Connection::open(path).expect("open sqlite");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; CREATE TABLE IF NOT EXISTS t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);",
    )
    .expect("sqlite setup");
}

fn run_sqlite(path: &Path, synchronous: &str, run: u64, threads: usize, rows: usize, secs: f64) -> RunResult {
    let stop = Arc::new(AtomicBool::new(false));
    let start = Arc::new(Barrier::new(threads + 1));
    let handles: Vec<_> = (0..threads as u64)
        .map(|th| {
            let (stop, start, path, synchronous) =
                (stop.clone(), start.clone(), path.to_path_buf(), synchronous.to_string());
            std::thread::spawn(move || {
                let conn = rusqlite::Connection::open(&path).expect("open sqlite");
                conn.busy_timeout(Duration::from_secs(60)).expect("busy_timeout");
                conn.execute_batch(&format!("PRAGMA synchronous={synchronous};")).expect("pragma");
                let value = row(th, 100);
                let mut begin = conn.prepare("BEGIN IMMEDIATE").expect("prepare");
                let mut insert = conn.prepare("INSERT INTO t(id, v) VALUES (?1, ?2)").expect("prepare");
                let mut commit = conn.prepare("COMMIT").expect("prepare");
                let mut seq = 0u64;
                let mut txns = 0u64;
                start.wait();
                while !stop.load(Ordering::Relaxed) {
                    begin.execute([]).expect("BEGIN IMMEDIATE");
                    for _ in 0..rows {
                        let id = (run << 56 | th << 40 | seq) as i64;
                        insert.execute(rusqlite::params![id, &value]).expect("INSERT");
                        seq += 1;
                    }
                    commit.execute([]).expect("COMMIT");
                    txns += 1;
                }
                txns
            })
        })
        .collect();
    start.wait();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let txns = handles.into_iter().map(|h| h.join().expect("sqlite worker")).sum();
    RunResult { threads, txns, secs: t0.elapsed().as_secs_f64(), flushes: None, writelog_us: None, cpu: None }
}

fn commits(dir: &Path, args: &Args) -> Vec<(String, RunResult, RunResult, RunResult)> {
    let secs = args.seconds;
    let (db, tree) = commit_db(dir);
    let full = dir.join("sqlite-full.db");
    let off = dir.join("sqlite-off.db");
    sqlite_db(&full);
    sqlite_db(&off);
    let mut out = Vec::new();
    let mut run = 0u64;
    let cases: [(&str, usize, usize, bool); 8] = [
        ("1-row, durable", 1, 1, false),
        ("1-row, durable", 8, 1, false),
        ("1-row, durable", 16, 1, false),
        ("1-row, delayed (FORCED)", 1, 1, true),
        ("1-row, delayed (FORCED)", 8, 1, true),
        ("1-row, delayed (FORCED)", 16, 1, true),
        ("1000-row, durable", 8, 1000, false),
        ("1000-row, durable", 16, 1000, false),
    ];
    for (label, threads, rows, delayed) in cases {
        run += 1;
        if args.threads.is_some_and(|n| n != threads)
            || (args.only.as_deref() == Some("delayed") && !delayed)
            || (args.only.as_deref() == Some("bulk") && rows == 1)
        {
            continue;
        }
        let splits = diag::counters().page_splits.get();
        let ours = run_ours(&db, &tree, run, threads, rows, delayed, secs);
        let splits = diag::counters().page_splits.get() - splits;
        let none = RunResult { threads, txns: 0, secs, flushes: None, writelog_us: None, cpu: None };
        let sq_full = if args.sqlite { run_sqlite(&full, "FULL", run, threads, rows, secs) } else { none };
        let sq_off = if args.sqlite { run_sqlite(&off, "OFF", run, threads, rows, secs) } else { none };
        eprintln!(
            "  done: {label}, {threads} threads ({:.1} page splits per 1000 rows)",
            splits as f64 * 1000.0 / (ours.txns.max(1) * rows as u64) as f64
        );
        out.push((label.to_string(), ours, sq_full, sq_off));
    }
    if let Ok(stats) = tree.check() {
        eprintln!("  table: {} leaf pages, {:.0}% full", stats.leaf_pages, stats.leaf_fill() * 100.0);
    }
    drop(tree);
    db.close().expect("close the commit database");
    out
}

fn print_commits(rows: &[(String, RunResult, RunResult, RunResult)]) {
    println!();
    println!("Commits (transactions/s; txn/flush = transactions per log flush; WRITELOG = wait per commit;");
    println!("CPU/txn and csw/txn = the process's CPU time and context switches per transaction)");
    println!(
        "{:<24} {:>7} | {:>11} {:>9} {:>10} {:>8} {:>7} | {:>12} {:>12} | {:>8} {:>8}",
        "workload",
        "threads",
        "Mesquite",
        "txn/flush",
        "WRITELOG",
        "CPU/txn",
        "csw/txn",
        "SQLite FULL",
        "SQLite OFF",
        "vs FULL",
        "vs OFF"
    );
    println!("{}", "-".repeat(136));
    for (label, o, f, n) in rows {
        let per_flush = o.flushes.map_or(0.0, |fl| o.txns as f64 / fl.max(1) as f64);
        let wl = o.writelog_us.map_or(0.0, |w| w as f64 / o.txns.max(1) as f64);
        let cpu = o.cpu.unwrap_or_default();
        println!(
            "{:<24} {:>7} | {:>11.0} {:>9.1} {:>8.0}us {:>6.2}us {:>7.3} | {:>12.0} {:>12.0} | {:>7.2}x {:>7.2}x",
            label,
            o.threads,
            o.tps(),
            per_flush,
            wl,
            cpu.cpu_us as f64 / o.txns.max(1) as f64,
            cpu.switches as f64 / o.txns.max(1) as f64,
            f.tps(),
            n.tps(),
            // Without SQLite (--no-sqlite) the ratios are 0.
            if f.txns == 0 { 0.0 } else { o.tps() / f.tps() },
            if n.txns == 0 { 0.0 } else { o.tps() / n.tps() }
        );
    }
    let find = |label: &str, threads: usize| rows.iter().find(|r| r.0 == label && r.1.threads == threads);
    if let (Some(d16), Some(x16)) = (find("1-row, durable", 16), find("1-row, delayed (FORCED)", 16)) {
        let per_flush = d16.1.txns as f64 / d16.1.flushes.unwrap_or(1).max(1) as f64;
        let vs_full = d16.1.tps() / d16.2.tps().max(1e-9);
        let delayed_gain = x16.1.tps() / d16.1.tps().max(1e-9);
        println!();
        println!("Targets (reported, not asserted):");
        if d16.2.txns == 0 {
            println!("  16 threads durable >= 3x SQLite FULL: not measured (--no-sqlite)");
        } else {
            println!(
                "  16 threads durable >= 3x SQLite FULL: {vs_full:.2}x  [{}]",
                if vs_full >= 3.0 { "met" } else { "NOT met" }
            );
        }
        println!(
            "  >= 8 commits per flush at 16 threads: {per_flush:.1}  [{}]",
            if per_flush >= 8.0 { "met" } else { "NOT met" }
        );
        println!(
            "  delayed >= 10x our durable (16 threads): {delayed_gain:.1}x  [{}]",
            if delayed_gain >= 10.0 { "met" } else { "NOT met" }
        );
    }
}

// ---------------------------------------------------------------------------------------
// Checkpoints and recovery
// ---------------------------------------------------------------------------------------

/// Bytes of value per row in the checkpoint table: 8 rows fill an 8 KB page.
const WIDE: usize = 900;
const ROWS_PER_PAGE: u64 = 8;

struct CkptResults {
    data_bytes: u64,
    load_secs: f64,
    log_bytes: u64,
    redo_bytes: u64,
    redo_secs: f64,
    open_secs: f64,
    recovery_ckpt_mbps: f64,
    automatic_pages: u64,
    automatic_secs: f64,
    indirect_pages: u64,
    indirect_secs: f64,
    raw_secs: f64,
    /// CPU time (process, user + system) of the automatic, indirect and raw phases.
    cpu_us: [u64; 3],
}

fn key8(i: u64) -> [u8; 8] {
    i.to_be_bytes()
}

/// Updates the first row of every group of 8: one change on (almost) every page, which
/// dirties it (and logs its full image, the first change since it was written).
fn redirty(db: &Arc<TxnDb>, tree: &BTree, rows: u64, round: u8) {
    let value = vec![round; WIDE];
    let mut i = 0;
    while i < rows {
        let t = db.begin("redirty", 51).expect("begin");
        {
            let _in = t.enter();
            for k in (i..(i + 1000 * ROWS_PER_PAGE).min(rows)).step_by(ROWS_PER_PAGE as usize) {
                tree.update(&key8(k), &value).expect("update");
            }
        }
        t.commit(true).expect("commit");
        i += 1000 * ROWS_PER_PAGE;
    }
    db.log.flush_to(db.log.end_lsn()).expect("flush");
}

fn checkpoints_and_recovery(dir: &Path, bytes: u64) -> CkptResults {
    let fs: Arc<dyn FileSystem> = Arc::new(OsFs);
    let pages = bytes / PAGE;
    let rows = pages * ROWS_PER_PAGE;
    let pool_bytes = bytes + bytes / 3 + (64 << 20);
    let data = FileSpec {
        file_id: 1,
        name: "ckpt".into(),
        path: dir.join("ckpt.mdf"),
        size_pages: (pages + pages / 5 + 1024) as u32,
        growth: FileGrowth::Pages(16_384),
        max_pages: None,
    };
    let log_path = dir.join("ckpt.ldf");
    let log = LogSpec {
        path: log_path.clone(),
        size_bytes: bytes + bytes / 2,
        growth: FileGrowth::Pages(65_536),
        max_bytes: None,
    };
    let cfg = LogConfig::default();
    let id = 11;

    // Load: `bytes` of rows, no checkpoint (no background task, no lazy writer, a pool
    // big enough that nothing is evicted): every page stays dirty, only the log is written.
    let db =
        TxnDb::create(BufferPool::with_memory_limit(pool_bytes), fs.clone(), id, "ckpt", vec![data], log, cfg.clone())
            .expect("create the checkpoint database");
    let tree = BTree::create(&db.db, 200, 1, BTreeOptions { unique: true }).expect("table");
    let tree_au = tree.alloc_unit_id();
    let t0 = Instant::now();
    let log_before = db.log.stats().bytes_appended;
    let mut i = 0;
    while i < rows {
        let t = db.begin("load", 51).expect("begin");
        {
            let _in = t.enter();
            for k in i..(i + 1000).min(rows) {
                tree.insert(&key8(k), &row(k, WIDE)).expect("insert");
            }
        }
        t.commit(false).expect("commit");
        i += 1000;
    }
    let load_secs = t0.elapsed().as_secs_f64();
    let log_bytes = db.log.stats().bytes_appended - log_before;
    eprintln!("  loaded {} MB of rows ({} MB of log) in {load_secs:.1} s", (pages * PAGE) >> 20, log_bytes >> 20);

    // Crash: the log is durable up to the last commit; no data page was written since
    // the table was created.
    drop(tree);
    db.stop_background_checkpoints();
    db.log.shutdown();
    drop(db); // the buffer pool goes with it, unwritten

    // Recovery.
    let t0 = Instant::now();
    let (db, report) =
        TxnDb::open(BufferPool::with_memory_limit(pool_bytes), fs.clone(), id, &log_path, cfg).expect("recovery");
    let open_secs = t0.elapsed().as_secs_f64();
    let recovery_ckpt = db.last_checkpoint().expect("the end-of-recovery checkpoint");
    eprintln!(
        "  recovered: redo {} MB in {:.2} s, open {open_secs:.2} s (its checkpoint wrote {} pages)",
        report.redo_bytes >> 20,
        report.redo.as_secs_f64(),
        recovery_ckpt.pages_written
    );
    let tree = BTree::open(&db.db, tree_au, BTreeOptions { unique: true }).expect("open table");

    // Automatic checkpoint: every dirty page in page order, then one sync.
    redirty(&db, &tree, rows, 1);
    let dirty = db.db.pool().dirty_count(id) as u64;
    let r0 = Rusage::now();
    let st = db.checkpoint(CheckpointKind::Automatic).expect("checkpoint");
    let automatic_cpu = Rusage::now().since(r0).cpu_us;
    eprintln!(
        "  automatic checkpoint: {} of {dirty} dirty pages in {:.2} s",
        st.pages_written,
        st.duration.as_secs_f64()
    );
    let (automatic_pages, automatic_secs) = (st.pages_written, st.duration.as_secs_f64());

    // The recovery writer's primitive: oldest recLSN first, 64 pages a call, then a sync.
    redirty(&db, &tree, rows, 2);
    let pool = db.db.pool().clone();
    let r0 = Rusage::now();
    let t0 = Instant::now();
    let mut indirect_pages = 0u64;
    loop {
        let n = pool.flush_oldest(id, u64::MAX, 64).expect("flush_oldest");
        if n == 0 {
            break;
        }
        indirect_pages += n as u64;
    }
    db.db.files().sync_all().expect("sync");
    let indirect_secs = t0.elapsed().as_secs_f64();
    let indirect_cpu = Rusage::now().since(r0).cpu_us;
    eprintln!("  flush_oldest loop: {indirect_pages} pages in {indirect_secs:.2} s");
    drop(tree);
    db.close().expect("close");

    // Raw sequential bandwidth: the same amount in 1 MB writes, then fdatasync, over a
    // file already written once (as the data file's pages were by the recovery
    // checkpoint), so both sides overwrite allocated, initialized blocks.
    let raw_path = dir.join("raw.bin");
    let f = OsFs.open(&raw_path, true).expect("raw file");
    f.set_len(bytes).expect("preallocate");
    let chunk = row(7, 1 << 20);
    let pass = || {
        let mut off = 0;
        while off < bytes {
            f.write_at(off, &chunk).expect("raw write");
            off += chunk.len() as u64;
        }
        f.sync().expect("fdatasync");
    };
    pass();
    let r0 = Rusage::now();
    let t0 = Instant::now();
    pass();
    let raw_secs = t0.elapsed().as_secs_f64();
    let raw_cpu = Rusage::now().since(r0).cpu_us;
    drop(f);
    let _ = std::fs::remove_file(&raw_path);

    CkptResults {
        data_bytes: pages * PAGE,
        load_secs,
        log_bytes,
        redo_bytes: report.redo_bytes,
        redo_secs: report.redo.as_secs_f64(),
        open_secs,
        recovery_ckpt_mbps: recovery_ckpt.mb_per_sec(),
        automatic_pages,
        automatic_secs,
        indirect_pages,
        indirect_secs,
        raw_secs,
        cpu_us: [automatic_cpu, indirect_cpu, raw_cpu],
    }
}

fn print_checkpoints(r: &CkptResults) {
    let mbps = |pages: u64, secs: f64| (pages * PAGE) as f64 / MB / secs.max(1e-9);
    let raw = r.data_bytes as f64 / MB / r.raw_secs.max(1e-9);
    println!();
    println!(
        "Checkpoints ({} MB of dirty pages; MB/s includes the final sync; CPU = the process's CPU time per page)",
        r.data_bytes >> 20
    );
    println!("{:<46} {:>9} {:>9} {:>10} {:>8} {:>9}", "", "pages", "seconds", "MB/s", "vs raw", "CPU/page");
    println!("{}", "-".repeat(96));
    let line = |name: &str, pages: u64, secs: f64, cpu_us: u64| {
        let m = mbps(pages, secs);
        let per_page = cpu_us as f64 / pages.max(1) as f64;
        println!("{name:<46} {pages:>9} {secs:>9.2} {m:>10.0} {:>7.0}% {per_page:>7.2}us", m * 100.0 / raw);
    };
    line("automatic checkpoint (page order, one sync)", r.automatic_pages, r.automatic_secs, r.cpu_us[0]);
    line("indirect: flush_oldest x64 loop + sync", r.indirect_pages, r.indirect_secs, r.cpu_us[1]);
    line("raw sequential write (1 MB writes + fdatasync)", r.data_bytes / PAGE, r.raw_secs, r.cpu_us[2]);
    println!();
    println!(
        "Recovery after a crash (load: {} MB of log in {:.1} s, no checkpoint, pool dropped unwritten)",
        r.log_bytes >> 20,
        r.load_secs
    );
    println!(
        "  redo: {} MB of log records in {:.2} s = {:.0} MB/s",
        r.redo_bytes >> 20,
        r.redo_secs,
        r.redo_bytes as f64 / MB / r.redo_secs.max(1e-9)
    );
    println!(
        "  whole open (analysis, redo, undo, end-of-recovery checkpoint at {:.0} MB/s): {:.2} s",
        r.recovery_ckpt_mbps, r.open_secs
    );
}

fn main() {
    let args = parse_args();
    std::fs::create_dir_all(&args.dir).expect("create the benchmark directory");
    let dir = TempDir(args.dir.clone());
    println!("bench-commit: Mesquite beside SQLite {} (bundled), files in {}", rusqlite::version(), dir.0.display());
    println!(
        "{} CPUs; {:.1} s per commit run; checkpoint and recovery over {} MB",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        args.seconds,
        args.bytes >> 20
    );
    if args.only.as_deref() != Some("checkpoints") {
        let runs = commits(&dir.0, &args);
        print_commits(&runs);
    }
    if args.only.is_none() || args.only.as_deref() == Some("checkpoints") {
        let c = checkpoints_and_recovery(&dir.0, args.bytes);
        print_checkpoints(&c);
    }
    drop(dir);
}
