//! Checkpoints: indirect checkpoints keep redo bounded where automatic ones let it grow
//! until their checkpoint, and recovery after a crash redoes less with them; a manual
//! checkpoint with a duration takes about that long; a checkpoint over its target writes
//! the FlushCache lines; observers see checkpoint_begin / checkpoint_end; the 70%-full
//! log trigger; close() leaves nothing to redo.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::{FaultFs, FileSystem, IoFile, MemFs};
use storage::BufferPool;
use txn::checkpoint::{CheckpointEvent, CheckpointKind, RedoEstimate};
use txn::recovery::LogSpec;
use txn::xact::TxnDb;
use txn::LogConfig;

/// A unique database id per test database (file statistics and error log lines are
/// keyed by it, and tests run in parallel).
fn db_id() -> u16 {
    static N: AtomicU64 = AtomicU64::new(300);
    N.fetch_add(1, Ordering::Relaxed) as u16
}

fn specs(name: &str, log_bytes: u64, log_growth: FileGrowth) -> (Vec<FileSpec>, LogSpec) {
    let data = FileSpec {
        file_id: 1,
        name: name.into(),
        path: PathBuf::from(format!("/ck/{name}.mdf")),
        // Sized so the workloads never grow it: a crash right after a data file growth
        // is not recoverable yet (storage does not sync the new size before the header
        // change that records it is logged; reported).
        size_pages: 2048,
        growth: FileGrowth::Pages(256),
        max_pages: None,
    };
    let log = LogSpec {
        path: PathBuf::from(format!("/ck/{name}.ldf")),
        size_bytes: log_bytes,
        growth: log_growth,
        max_bytes: None,
    };
    (vec![data], log)
}

fn config() -> LogConfig {
    LogConfig { flush_interval: Duration::from_millis(2), ..LogConfig::default() }
}

fn create(fs: Arc<dyn FileSystem>, pool: Arc<BufferPool>, id: u16, name: &str, log_bytes: u64) -> Arc<TxnDb> {
    let (files, log) = specs(name, log_bytes, FileGrowth::Pages(1024));
    TxnDb::create(pool, fs, id, name, files, log, config()).expect("create")
}

fn key(i: u64) -> [u8; 8] {
    i.to_be_bytes()
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
}

/// Loads `rows` rows of 100 bytes in transactions of 500, then checkpoints.
fn load(db: &Arc<TxnDb>, rows: u64) -> BTree {
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let mut i = 0;
    while i < rows {
        let t = db.begin("load", 1).unwrap();
        {
            let _in = t.enter();
            for k in i..(i + 500).min(rows) {
                tree.insert(&key(k), &[1u8; 100]).unwrap();
            }
        }
        t.commit(false).unwrap();
        i += 500;
    }
    db.checkpoint(CheckpointKind::Manual).unwrap();
    tree
}

/// `txns` transactions of a steady OLTP-like load: 8 inserts at the end of the key
/// range (new pages that soon go cold) and 2 updates of a hot set of `HOT` keys, durable
/// commits. Samples the redo estimate after each transaction and returns (max dirty
/// pages, max estimated recovery time) over the second half, once the background task
/// has settled.
fn steady_load(db: &Arc<TxnDb>, tree: &BTree, txns: usize, seed: u64) -> (u64, Duration) {
    let mut rng = Rng(seed | 1);
    let (mut max_dirty, mut max_redo) = (0u64, Duration::ZERO);
    for n in 0..txns as u64 {
        let t = db.begin("oltp", 1).unwrap();
        {
            let _in = t.enter();
            for j in 0..8 {
                tree.insert(&key(ROWS + n * 8 + j), &[(n % 251) as u8; 100]).unwrap();
            }
            for _ in 0..2 {
                tree.update(&key(rng.next() % HOT), &[(n % 251) as u8; 100]).unwrap();
            }
        }
        t.commit(false).unwrap();
        // A steady load, not a burst: clients think between requests.
        if n % 20 == 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        if n >= txns as u64 / 2 {
            let w = db.estimated_redo();
            max_dirty = max_dirty.max(w.dirty_pages);
            max_redo = max_redo.max(w.recovery_time);
        }
    }
    (max_dirty, max_redo)
}

/// The same cost model for both databases: 1 ms per dirty page, 2 MB/s of log replay.
fn test_estimate() -> RedoEstimate {
    RedoEstimate { log_bytes_per_sec: 2.0 * 1_048_576.0, page_cost: Duration::from_millis(1), measured: false }
}

const ROWS: u64 = 40_000;
const HOT: u64 = 4_000;
const TXNS: usize = 3_000;

/// Runs the update workload on a new database with the given TARGET_RECOVERY_TIME,
/// crashes, recovers, and returns (max dirty, max estimated redo, redo bytes, pages
/// redone, recovery writer pages).
fn run_and_crash(target: u32, seed: u64) -> (u64, Duration, u64, u64, u64) {
    let fs = FaultFs::new(seed);
    fs.set_torn_write_policy(FaultFs::DROP_ALL_UNSYNCED);
    let id = db_id();
    let name = format!("ind{id}");
    let db = create(Arc::new(fs.clone()), BufferPool::new(4096), id, &name, 64 << 20);
    db.set_redo_estimate(test_estimate());
    let tree = load(&db, ROWS);
    db.set_target_recovery_time(target);
    db.set_background_poll(Duration::from_millis(5));
    db.start_background_checkpoints();
    let au = tree.alloc_unit_id();
    let (max_dirty, max_redo) = steady_load(&db, &tree, TXNS, seed);
    let writer_pages = db.recovery_writer_pages();
    fs.crash_now();
    db.stop_background_checkpoints();
    drop(tree);
    drop(db);
    let fs2: Arc<dyn FileSystem> = Arc::new(fs.restart());
    let (db2, report) =
        TxnDb::open(BufferPool::new(4096), fs2, id, &PathBuf::from(format!("/ck/{name}.ldf")), config())
            .expect("recovery");
    let tree = BTree::open(&db2.db, au, BTreeOptions { unique: true }).unwrap();
    assert_eq!(tree.count().unwrap(), ROWS + TXNS as u64 * 8, "target {target}: {report:?}");
    tree.check().unwrap();
    db2.log.shutdown();
    (max_dirty, max_redo, report.redo_bytes, report.pages_redone, writer_pages)
}

#[test]
fn indirect_checkpoints_bound_redo_and_recover_faster_than_automatic() {
    // Automatic: 60 s x 2 MB/s = 120 MB of log before its checkpoint, more than the
    // workload writes, so its redo grows all along.
    let auto = run_and_crash(0, 7);
    // Indirect with a 2 second target.
    let ind = run_and_crash(2, 7);
    eprintln!("automatic: {auto:?}\nindirect:  {ind:?}");
    let (a_dirty, a_redo, a_bytes, a_pages, a_writer) = auto;
    let (i_dirty, i_redo, i_bytes, i_pages, i_writer) = ind;
    assert_eq!(a_writer, 0, "automatic mode has no recovery writer");
    assert!(i_writer > 0, "the recovery writer wrote pages");
    assert!(i_dirty < a_dirty, "dirty pages: indirect {i_dirty}, automatic {a_dirty}");
    assert!(a_redo > Duration::from_secs(4), "automatic redo estimate grows: {a_redo:?}");
    // The writer keeps the estimate near its goal; light checkpoints follow it. Allow for
    // the poll interval and a busy test machine.
    assert!(i_redo < Duration::from_secs(3), "indirect redo estimate stays near the 2 s target: {i_redo:?}");
    assert!(i_bytes * 2 < a_bytes, "redo bytes: indirect {i_bytes}, automatic {a_bytes}");
    assert!(i_pages < a_pages, "pages redone: indirect {i_pages}, automatic {a_pages}");
}

#[test]
fn automatic_checkpoints_let_dirty_pages_grow_until_the_checkpoint() {
    let fs = Arc::new(MemFs::new());
    let id = db_id();
    let db = create(fs, BufferPool::new(4096), id, &format!("auto{id}"), 64 << 20);
    let tree = load(&db, ROWS);
    db.set_target_recovery_time(0);
    // 60 s of redo at 64 KB/s: a checkpoint every 3.75 MB of log.
    db.set_redo_estimate(RedoEstimate { log_bytes_per_sec: 65_536.0, ..test_estimate() });
    let seen = Arc::new(Mutex::new(Vec::new()));
    // Set when the first checkpoint begins: pages dirtied after that are the next
    // checkpoint's (it counts them as avoided), so the peak is sampled only before.
    let begun = Arc::new(std::sync::atomic::AtomicBool::new(false));
    {
        let seen = seen.clone();
        let begun = begun.clone();
        db.set_checkpoint_observer(Box::new(move |e| match e {
            CheckpointEvent::Begin { .. } => begun.store(true, std::sync::atomic::Ordering::SeqCst),
            CheckpointEvent::End { stats } => seen.lock().unwrap().push(stats),
        }));
    }
    let before = db.checkpoints_completed();
    db.set_background_poll(Duration::from_millis(5));
    db.start_background_checkpoints();
    let mut rng = Rng(99);
    let mut peak_before_first = 0u64;
    for n in 0..TXNS {
        let t = db.begin("upd", 1).unwrap();
        {
            let _in = t.enter();
            for _ in 0..8 {
                tree.update(&key(rng.next() % ROWS), &[(n % 251) as u8; 100]).unwrap();
            }
        }
        t.commit(false).unwrap();
        if !begun.load(std::sync::atomic::Ordering::SeqCst) {
            peak_before_first = peak_before_first.max(db.estimated_redo().dirty_pages);
        }
    }
    db.stop_background_checkpoints();
    let seen = seen.lock().unwrap().clone();
    let autos: Vec<_> = seen.iter().filter(|s| s.kind == CheckpointKind::Automatic).collect();
    assert!(!autos.is_empty(), "an automatic checkpoint ran ({} checkpoints)", db.checkpoints_completed() - before);
    assert_eq!(db.recovery_writer_pages(), 0);
    // Nothing wrote pages before the first automatic checkpoint, which wrote them all.
    assert!(peak_before_first > 200, "dirty pages grew to {peak_before_first}");
    assert!(autos[0].pages_written as f64 >= peak_before_first as f64 * 0.9, "{:?} vs {peak_before_first}", autos[0]);
    assert!(autos[0].redo_start_lsn >= autos[0].begin_lsn || autos[0].redo_start_lsn.as_u64() > 0);
    db.close().unwrap();
}

#[test]
fn manual_checkpoint_with_a_duration_takes_about_that_long() {
    let fs = Arc::new(MemFs::new());
    let id = db_id();
    let db = create(fs, BufferPool::new(2048), id, &format!("dur{id}"), 16 << 20);
    let tree = load(&db, 5_000);
    let t = db.begin("dirty", 1).unwrap();
    {
        let _in = t.enter();
        for k in 0..5_000 {
            tree.update(&key(k), &[9u8; 100]).unwrap();
        }
    }
    t.commit(false).unwrap();
    let dirty = db.db.pool().dirty_count(id) as u64;
    assert!(dirty > 50, "{dirty}");
    let started = Instant::now();
    let st = db.checkpoint_manual(Some(Duration::from_millis(800))).unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(400), "CHECKPOINT 0.8 s took {took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert!(st.pages_written >= dirty, "wrote {} of {dirty}", st.pages_written);
    assert_eq!(db.db.pool().dirty_count(id), 0, "every dirty page is written");
    assert_eq!(st.kind, CheckpointKind::Manual);
    // Without a duration: as fast as possible.
    let t = db.begin("dirty", 1).unwrap();
    {
        let _in = t.enter();
        for k in 0..5_000 {
            tree.update(&key(k), &[8u8; 100]).unwrap();
        }
    }
    t.commit(false).unwrap();
    let st = db.checkpoint_manual(None).unwrap();
    assert!(st.duration < Duration::from_millis(400), "{:?}", st.duration);
    db.close().unwrap();
}

/// A file system whose data file writes take `delay` each (a slow disk).
struct SlowWrites {
    inner: Arc<dyn FileSystem>,
    delay: Duration,
}

struct SlowFile {
    inner: Arc<dyn IoFile>,
    delay: Duration,
    data: bool,
}

impl IoFile for SlowFile {
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        self.inner.read_at(offset, buf)
    }
    fn write_at(&self, offset: u64, data: &[u8]) -> std::io::Result<()> {
        if self.data {
            std::thread::sleep(self.delay);
        }
        self.inner.write_at(offset, data)
    }
    fn sync(&self) -> std::io::Result<()> {
        self.inner.sync()
    }
    fn len(&self) -> std::io::Result<u64> {
        self.inner.len()
    }
    fn set_len(&self, len: u64) -> std::io::Result<()> {
        self.inner.set_len(len)
    }
}

impl FileSystem for SlowWrites {
    fn open(&self, path: &std::path::Path, create: bool) -> std::io::Result<Arc<dyn IoFile>> {
        let data = path.extension().is_some_and(|e| e == "mdf");
        Ok(Arc::new(SlowFile { inner: self.inner.open(path, create)?, delay: self.delay, data }))
    }
    fn exists(&self, path: &std::path::Path) -> bool {
        self.inner.exists(path)
    }
    fn remove(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.remove(path)
    }
    fn create_dir_all(&self, path: &std::path::Path) -> std::io::Result<()> {
        self.inner.create_dir_all(path)
    }
}

#[test]
fn a_checkpoint_over_its_target_writes_flushcache_and_reports_events() {
    let fs: Arc<dyn FileSystem> =
        Arc::new(SlowWrites { inner: Arc::new(MemFs::new()), delay: Duration::from_micros(300) });
    let id = db_id();
    let db = create(fs, BufferPool::new(2048), id, &format!("fc{id}"), 16 << 20);
    let tree = load(&db, 3_000);
    let events = Arc::new(Mutex::new(Vec::new()));
    {
        let events = events.clone();
        db.set_checkpoint_observer(Box::new(move |e| events.lock().unwrap().push(e)));
    }
    let t = db.begin("dirty", 1).unwrap();
    {
        let _in = t.enter();
        for k in 0..3_000 {
            tree.update(&key(k), &[5u8; 100]).unwrap();
        }
    }
    t.commit(false).unwrap();
    let counter_before = diag::counters().checkpoint_pages.get();
    // Within its target: no FlushCache.
    let quick = db.checkpoint_with_target(CheckpointKind::Manual, Duration::from_secs(30)).unwrap();
    assert!(!quick.over_target);
    let mine = |text: &str| text.ends_with(&format!("for db {id}:0"));
    assert!(!diag::errorlog::recent(1000).iter().any(|e| e.text.starts_with("FlushCache") && mine(&e.text)));

    let t = db.begin("dirty", 1).unwrap();
    {
        let _in = t.enter();
        for k in 0..3_000 {
            tree.update(&key(k), &[6u8; 100]).unwrap();
        }
    }
    t.commit(false).unwrap();
    // A 1 µs target cannot be met by writing ~40 pages, however they are gathered.
    let st = db.checkpoint_manual(Some(Duration::from_micros(1))).unwrap();
    assert!(st.over_target && st.pages_written > 10, "{st:?}");
    assert!(
        diag::counters().checkpoint_pages.get() - counter_before >= (quick.pages_written + st.pages_written) as i64
    );
    let log = diag::errorlog::recent(1000);
    let at = log
        .iter()
        .position(|e| {
            e.text
                .starts_with(&format!("FlushCache: cleaned up {} bufs with {} writes in ", st.pages_written, st.writes))
                && mine(&e.text)
        })
        .unwrap_or_else(|| panic!("no FlushCache line for db {id}: {log:?}"));
    let lines: Vec<&str> =
        log[at..].iter().filter(|e| e.process_info == log[at].process_info).map(|e| e.text.as_str()).collect();
    assert!(lines[0].contains("(avoided 0 new dirty bufs)"), "{}", lines[0]);
    assert!(lines
        .iter()
        .any(|l| l.trim_start().starts_with("average writes per second: ") && l.ends_with(" writes/sec")));
    assert!(lines
        .iter()
        .any(|l| l.trim_start().starts_with("average throughput: ") && l.contains(" MB/sec, I/O saturation: ")));
    assert!(lines.iter().any(|l| l.trim_start().starts_with("last target outstanding: 1, avgWriteLatency ")));

    // The observer saw begin/end pairs with the same figures.
    let events = events.lock().unwrap();
    let kinds: Vec<&str> =
        events.iter().map(|e| if matches!(e, CheckpointEvent::Begin { .. }) { "begin" } else { "end" }).collect();
    assert_eq!(kinds, ["begin", "end", "begin", "end"]);
    match (&events[2], &events[3]) {
        (CheckpointEvent::Begin { kind, database_id }, CheckpointEvent::End { stats }) => {
            assert_eq!((*kind, *database_id), (CheckpointKind::Manual, id));
            assert_eq!(stats.pages_written, st.pages_written);
            assert!(stats.duration > Duration::ZERO && stats.ended_at >= stats.started_at);
            assert!(stats.end_lsn > stats.begin_lsn);
        }
        other => panic!("{other:?}"),
    }
    drop(events);
    db.close().unwrap();
}

#[test]
fn a_log_seventy_percent_full_triggers_an_automatic_checkpoint() {
    let fs = Arc::new(MemFs::new());
    let id = db_id();
    let name = format!("full{id}");
    // A 2 MB log that may not grow: without checkpoints the workload below hits 9002.
    let (files, log) = specs(&name, 2 << 20, FileGrowth::Pages(0));
    let db = TxnDb::create(BufferPool::new(2048), fs, id, &name, files, log, config()).unwrap();
    db.set_target_recovery_time(0);
    // The recovery interval alone would never trigger (1 TB of log).
    db.set_redo_estimate(RedoEstimate { log_bytes_per_sec: 1e12, ..RedoEstimate::default() });
    db.set_background_poll(Duration::from_millis(2));
    db.start_background_checkpoints();
    let tree = BTree::create(&db.db, 10, 1, BTreeOptions { unique: true }).unwrap();
    let mut max_used = 0f64;
    for round in 0..400u64 {
        // Back off while the log is nearly full, as a throttled client would.
        while db.log.space().used_percent > 90.0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        let t = db.begin("w", 1).unwrap();
        {
            let _in = t.enter();
            for i in 0..20 {
                tree.insert(&key(round * 20 + i), &[3u8; 200]).unwrap();
            }
        }
        t.commit(false).unwrap();
        max_used = max_used.max(db.log.space().used_percent);
    }
    db.stop_background_checkpoints();
    assert!(db.background_checkpoints() >= 1, "log-full checkpoints ran");
    assert_eq!(db.last_checkpoint().map(|s| s.kind), Some(CheckpointKind::Automatic));
    assert_eq!(db.log.stats().growths, 0);
    assert!(max_used < 100.0, "{max_used}");
    db.close().unwrap();
}

#[test]
fn close_leaves_nothing_to_redo() {
    let fs = Arc::new(MemFs::new());
    let id = db_id();
    let name = format!("close{id}");
    let db = create(fs.clone(), BufferPool::new(1024), id, &name, 8 << 20);
    db.start_background_checkpoints();
    let tree = load(&db, 2_000);
    let au = tree.alloc_unit_id();
    let t = db.begin("x", 1).unwrap();
    {
        let _in = t.enter();
        tree.update(&key(5), b"closed").unwrap();
    }
    t.commit(false).unwrap();
    drop(tree);
    db.close().unwrap();
    assert!(db.begin("after close", 1).is_err(), "the log is shut down");
    drop(db);
    let fsd: Arc<dyn FileSystem> = fs;
    let (db, report) =
        TxnDb::open(BufferPool::new(1024), fsd, id, &PathBuf::from(format!("/ck/{name}.ldf")), config()).unwrap();
    assert_eq!(report.pages_redone, 0, "{report:?}");
    assert_eq!(report.losers_rolled_back, 0);
    let tree = BTree::open(&db.db, au, BTreeOptions { unique: true }).unwrap();
    assert_eq!(tree.get(&key(5)).unwrap().as_deref(), Some(&b"closed"[..]));
    assert_eq!(tree.count().unwrap(), 2_000);
    db.close().unwrap();
}

#[test]
fn recovery_options_have_sql_server_defaults() {
    let fs = Arc::new(MemFs::new());
    let id = db_id();
    let db = create(fs, BufferPool::new(256), id, &format!("opt{id}"), 4 << 20);
    assert_eq!(db.target_recovery_time(), 60, "new databases use indirect checkpoints");
    assert_eq!(txn::checkpoint::recovery_interval(), 0);
    assert_eq!(db.recovery_interval(), Duration::from_secs(60));
    assert_eq!(db.checkpoint_target(CheckpointKind::Automatic), Duration::from_secs(60));
    db.set_target_recovery_time(120);
    assert_eq!(db.checkpoint_target(CheckpointKind::Indirect), Duration::from_secs(120));
    assert_eq!(db.checkpoint_target(CheckpointKind::Internal), Duration::from_secs(120));
    let e = db.redo_estimate();
    assert!(!e.measured);
    assert_eq!(e.redo_time(1000, 0), Duration::from_millis(100));
    let report =
        txn::recovery::RecoveryReport { redo_bytes: 64 << 20, redo: Duration::from_millis(500), ..Default::default() };
    assert!(db.learn_redo_rate(&report));
    assert!(db.redo_estimate().measured);
    assert_eq!(db.redo_estimate().log_bytes_per_sec as u64, 128 << 20);
    let small =
        txn::recovery::RecoveryReport { redo_bytes: 1000, redo: Duration::from_millis(1), ..Default::default() };
    assert!(!db.learn_redo_rate(&small), "too little redo to measure");
    db.close().unwrap();
}
