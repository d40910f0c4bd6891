//! Group commit, delayed durability, the flush triggers, and LOGBUFFER waits.

mod common;

use common::*;
use diag::{SessionScope, WaitStats, WaitType};
use std::sync::Arc;
use std::time::{Duration, Instant};
use storage::file::FileGrowth;
use storage::io::{FaultFs, FileSystem, MemFs, TornPolicy};
use txn::log::{LogConfig, LogManager, Lsn};

fn slow_mem(delay_ms: u64) -> Arc<SlowSyncFs> {
    Arc::new(SlowSyncFs::new(Arc::new(MemFs::new()), Duration::from_millis(delay_ms)))
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if f() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    None
}

#[test]
fn concurrent_commits_share_flushes() {
    let fs = slow_mem(1);
    let db = db_id();
    let name = db_name("group");
    let log = create(fs.clone(), db, &name, 16 * MB, FileGrowth::None, None);
    let waits = Arc::new(WaitStats::new());
    const THREADS: u32 = 16;
    const COMMITS: u32 = 200;
    let files_before = diag::file_stats(Some(db), Some(2))[0];
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let log = &log;
            let waits = waits.clone();
            s.spawn(move || {
                let _session = SessionScope::enter(waits);
                for i in 0..COMMITS {
                    let lsn = log.append(&payload(t, i, 120)).unwrap();
                    log.flush_to(lsn).unwrap();
                    assert!(log.flushed_lsn() >= lsn);
                }
            });
        }
    });
    let s = log.stats();
    let commits = u64::from(THREADS * COMMITS);
    eprintln!(
        "group commit: {commits} commits, {} flushes ({:.1} commits per flush), {} WRITELOG waits",
        s.flushes,
        s.commits_per_flush(),
        s.flush_waits
    );
    assert_eq!(s.commits_flushed, commits);
    assert!(
        s.commits_per_flush() > 4.0,
        "{} flushes for {commits} commits ({:.1} per flush)",
        s.flushes,
        s.commits_per_flush()
    );
    let w = waits.get(WaitType::WRITELOG);
    assert!(w.waiting_tasks_count > 0 && w.waiting_tasks_count <= commits);
    assert_eq!(w.waiting_tasks_count, s.flush_waits);
    assert!(w.wait_time_us > 0);
    let files = diag::file_stats(Some(db), Some(2))[0];
    assert_eq!(files.num_of_writes - files_before.num_of_writes, s.flush_writes);
    assert!(files.io_stall_write_us - files_before.io_stall_write_us >= s.flushes * 1000);
    let c = diag::database_counters(&name);
    assert_eq!(c.log_flushes.get() as u64, s.flushes);
    assert!(c.log_flush_wait_time.get() > 0);
    // Everything is there, in order.
    assert_eq!(read_all(&log).len() as u64, commits);
}

#[test]
fn delayed_commits_harden_within_the_flush_interval() {
    let fs = FaultFs::new(3);
    fs.set_torn_write_policy(TornPolicy::DropAllUnsynced);
    let db = db_id();
    let name = db_name("delayed");
    let log = LogManager::create_with(
        Arc::new(fs.clone()),
        &log_path(),
        db,
        &name,
        MB,
        FileGrowth::None,
        None,
        LogConfig::default(),
    )
    .unwrap();
    let mut recs = Vec::new();
    for i in 0..20u32 {
        let rec = payload(8, i, 150);
        recs.push((log.append(&rec).unwrap(), rec));
    }
    let end = log.end_lsn();
    let took =
        wait_until(Duration::from_secs(5), || log.flushed_lsn() >= end).expect("the timer flushed the delayed commits");
    // flush_interval is 10 ms; leave room for a loaded machine.
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert_eq!(log.stats().flush_waits, 0);
    // A crash now loses nothing: the timer made them durable.
    let fs2 = fs.restart();
    drop(log);
    let log = open(Arc::new(fs2), db, &name);
    assert_eq!(read_all(&log), recs);
}

#[test]
fn a_full_block_is_flushed_without_being_asked() {
    let log = create(Arc::new(MemFs::new()), db_id(), &db_name("fullblock"), 4 * MB, FileGrowth::None, None);
    log.set_flush_interval(Duration::from_secs(3600));
    let a = log.append(&[1u8; 30_000]).unwrap();
    let _b = log.append(&[2u8; 30_000]).unwrap();
    assert_eq!(log.flushed_lsn(), Lsn::NULL);
    // The third does not fit: the block is sealed and the writer flushes it on its own.
    let c = log.append(&[3u8; 30_000]).unwrap();
    assert!(c.block() > a.block());
    wait_until(Duration::from_secs(5), || log.flushed_lsn() >= a).expect("full block flushed");
    // request_flush (sp_flush_log without waiting) hardens the rest.
    log.request_flush();
    wait_until(Duration::from_secs(5), || log.flushed_lsn() >= c).expect("requested flush");
}

#[test]
fn small_log_buffer_makes_appenders_wait() {
    let fs = slow_mem(15);
    let name = db_name("logbuffer");
    let log = LogManager::create_with(
        fs,
        &log_path(),
        db_id(),
        &name,
        8 * MB,
        FileGrowth::None,
        None,
        LogConfig { buffer_blocks: 1, flush_interval: Duration::from_secs(3600), ..LogConfig::default() },
    )
    .unwrap();
    let waits = Arc::new(WaitStats::new());
    let mut recs = Vec::new();
    {
        let _session = SessionScope::enter(waits.clone());
        for i in 0..30u32 {
            let rec = payload(4, i, 40_000);
            recs.push((log.append(&rec).unwrap(), rec));
        }
    }
    let w = waits.get(WaitType::LOGBUFFER);
    assert!(w.waiting_tasks_count > 0, "no LOGBUFFER waits");
    assert_eq!(w.waiting_tasks_count, log.stats().log_buffer_waits);
    // Each 40 KB record needs its own block; with one block of buffer and a 15 ms sync,
    // appending waits for the writer most of the time.
    assert!(w.wait_time_ms >= 100, "waited only {} ms", w.wait_time_ms);
    log.flush_to(log.end_lsn()).unwrap();
    assert_eq!(read_all(&log), recs);
}

/// Durable against delayed-durable commits from several sessions, as the study this
/// log serves measures them: delayed commits need far fewer log writes and no WRITELOG
/// waits. Prints the numbers.
#[test]
fn delayed_durability_cuts_log_writes_and_writelog_waits() {
    let run = |delayed: bool| {
        let fs: Arc<dyn FileSystem> = slow_mem(1);
        let db = db_id();
        let log = create(fs, db, &db_name("dd"), 16 * MB, FileGrowth::None, None);
        log.set_flush_interval(Duration::from_millis(10));
        let waits = Arc::new(WaitStats::new());
        let start = Instant::now();
        std::thread::scope(|s| {
            for t in 0..8u32 {
                let log = &log;
                let waits = waits.clone();
                s.spawn(move || {
                    let _session = SessionScope::enter(waits);
                    for i in 0..100u32 {
                        let lsn = log.append(&payload(t, i, 1000)).unwrap();
                        if !delayed {
                            log.flush_to(lsn).unwrap();
                        }
                    }
                });
            }
        });
        let elapsed = start.elapsed();
        log.flush_to(log.end_lsn()).unwrap();
        let files = diag::file_stats(Some(db), Some(2))[0];
        let w = waits.get(WaitType::WRITELOG);
        (files.num_of_writes, files.io_stall_write_ms, w.waiting_tasks_count, elapsed)
    };
    let (dw, ds, dwait, dt) = run(false);
    let (yw, ys, ywait, yt) = run(true);
    eprintln!("DD off: {dw} log writes, {ds} ms write stall, {dwait} WRITELOG waits, {dt:?}");
    eprintln!("DD on:  {yw} log writes, {ys} ms write stall, {ywait} WRITELOG waits, {yt:?}");
    assert_eq!(ywait, 0, "delayed commits never wait for the log");
    assert!(yw * 2 < dw, "delayed durability should need far fewer writes ({yw} vs {dw})");
}

/// `when_durable`: at once when the LSN is durable already, else on the log writer's
/// thread after the flush, with the wait counted as WRITELOG of the given session; with
/// the error when the flush fails.
#[test]
fn when_durable_runs_after_the_flush_or_with_its_failure() {
    use std::sync::mpsc;
    let fs = slow_mem(20);
    let log = create(fs, db_id(), &db_name("whendurable"), 4 * MB, FileGrowth::None, None);
    log.set_flush_interval(Duration::from_secs(3600));
    let waits = Arc::new(WaitStats::new());
    let lsn = log.append(&payload(1, 1, 100)).unwrap();
    let (tx, rx) = mpsc::channel();
    let (log2, tx2) = (log.clone(), tx.clone());
    log.when_durable(
        lsn,
        Some(waits.clone()),
        Box::new(move |r| {
            let _ = tx2.send((r.is_ok(), log2.flushed_lsn(), std::thread::current().id()));
        }),
    );
    let (ok, flushed, thread) = rx.recv_timeout(Duration::from_secs(10)).expect("completed");
    assert!(ok && flushed >= lsn);
    assert_ne!(thread, std::thread::current().id());
    let w = waits.get(WaitType::WRITELOG);
    assert_eq!(w.waiting_tasks_count, 1);
    assert!(w.wait_time_ms >= 15, "waited {} ms for a 20 ms sync", w.wait_time_ms);
    assert_eq!(log.stats().flush_waits, 1);
    // Durable already: runs before when_durable returns, on this thread.
    let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ran2 = ran.clone();
    log.when_durable(lsn, None, Box::new(move |r| ran2.store(r.is_ok(), std::sync::atomic::Ordering::SeqCst)));
    assert!(ran.load(std::sync::atomic::Ordering::SeqCst));

    // A failed flush: the callback hears of it (9001), and so does any later one.
    let fs = FaultFs::new(11);
    let log = LogManager::create_with(
        Arc::new(fs.clone()),
        &log_path(),
        db_id(),
        &db_name("whenfailed"),
        MB,
        FileGrowth::None,
        None,
        LogConfig { flush_interval: Duration::from_secs(3600), ..LogConfig::default() },
    )
    .unwrap();
    fs.fail_writes_after(0, std::io::ErrorKind::Other);
    let lsn = log.append(&payload(2, 1, 100)).unwrap();
    let tx2 = tx.clone();
    log.when_durable(
        lsn,
        None,
        Box::new(move |r| {
            let _ = tx2.send((r.is_ok(), Lsn::NULL, std::thread::current().id()));
        }),
    );
    let (ok, _, _) = rx.recv_timeout(Duration::from_secs(10)).expect("completed with the failure");
    assert!(!ok);
    let failed = Arc::new(std::sync::Mutex::new(None));
    let f2 = failed.clone();
    log.when_durable(lsn, None, Box::new(move |r| *f2.lock().unwrap() = r.err().map(|e| e.number())));
    assert_eq!(*failed.lock().unwrap(), Some(9001));
}
