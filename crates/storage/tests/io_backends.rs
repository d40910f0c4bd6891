//! The I/O backends: one conformance suite run against `MemFs`, `OsFs` and `FaultFs`, then
//! the fault-injection semantics that crash tests elsewhere rely on.

use proptest::prelude::*;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use storage::io::{FaultFs, FileSystem, IoFile, MemFs, OsFs, SECTOR_SIZE};

// ---------------------------------------------------------------------------------------
// Helpers

fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

/// Bytes that differ from position to position, so a misplaced copy is caught.
/// Never zero, so a zero-filled hole is told apart from data; no short period, so a
/// sector copied to the wrong place is caught.
fn pattern(seed: u8, len: usize) -> Vec<u8> {
    let salt = (seed as u64 + 1).wrapping_mul(0xD6E8_FEB8_6659_FD93);
    (0..len)
        .map(|i| {
            let x = ((i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            (x >> 56) as u8 | 1
        })
        .collect()
}

fn read(f: &dyn IoFile, offset: u64, len: usize) -> Vec<u8> {
    let mut buf = vec![0u8; len];
    f.read_at(offset, &mut buf).unwrap();
    buf
}

fn read_all(f: &dyn IoFile) -> Vec<u8> {
    let len = f.len().unwrap() as usize;
    read(f, 0, len)
}

fn assert_crash_err<T>(what: &str, r: io::Result<T>) {
    match r {
        Ok(_) => panic!("{what}: succeeded after the crash"),
        Err(e) => {
            assert_eq!(e.kind(), io::ErrorKind::Other, "{what}: {e}");
            assert!(e.to_string().contains("simulated crash"), "{what}: {e}");
        }
    }
}

fn expect_err<T>(r: io::Result<T>) -> io::Error {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => e,
    }
}

/// A directory under the system temp dir, removed on drop (no tempfile crate).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("mesquite-io-backends-{tag}-{}-{nanos}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

// ---------------------------------------------------------------------------------------
// Conformance: what every backend must do the same way.

fn conformance(fs: &dyn FileSystem, dir: &Path) {
    let sub = dir.join("sub").join("deeper");
    fs.create_dir_all(&sub).unwrap();
    let a = sub.join("a.mdf");
    let b = sub.join("b.ldf");

    // Missing file.
    assert!(!fs.exists(&a));
    assert_eq!(expect_err(fs.open(&a, false)).kind(), io::ErrorKind::NotFound);
    assert!(!fs.exists(&a), "a failed open must not create the file");

    // Create: empty.
    let f = fs.open(&a, true).unwrap();
    assert!(fs.exists(&a));
    assert_eq!(f.len().unwrap(), 0);
    let mut one = [0u8; 1];
    assert_eq!(expect_err(f.read_at(0, &mut one)).kind(), io::ErrorKind::UnexpectedEof);

    // Write and read back.
    let s0 = pattern(1, SECTOR_SIZE);
    f.write_at(0, &s0).unwrap();
    assert_eq!(f.len().unwrap(), SECTOR_SIZE as u64);
    assert_eq!(read(&*f, 0, SECTOR_SIZE), s0);
    assert_eq!(read(&*f, 10, 5), s0[10..15].to_vec());
    // Starting writeback (a hint; real files issue it) changes neither contents nor
    // size, even for a range past the end.
    f.start_writeback(0, SECTOR_SIZE as u64);
    f.start_writeback(0, 1 << 20);
    assert_eq!(f.len().unwrap(), SECTOR_SIZE as u64);
    assert_eq!(read(&*f, 0, SECTOR_SIZE), s0);

    // Writing past the end extends the file and zero-fills the gap.
    let s2 = pattern(2, SECTOR_SIZE);
    f.write_at(8192, &s2).unwrap();
    assert_eq!(f.len().unwrap(), 8192 + SECTOR_SIZE as u64);
    assert_eq!(read(&*f, 8192, SECTOR_SIZE), s2);
    assert!(read(&*f, SECTOR_SIZE as u64, 8192 - SECTOR_SIZE).iter().all(|&x| x == 0));

    // Unaligned overwrite in the middle.
    f.write_at(100, b"hello").unwrap();
    let mut expect = s0.clone();
    expect[100..105].copy_from_slice(b"hello");
    assert_eq!(read(&*f, 0, SECTOR_SIZE), expect);

    // Reads that reach past the end fail, whatever their start.
    let len = f.len().unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(expect_err(f.read_at(len - 8, &mut buf)).kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(expect_err(f.read_at(len, &mut buf)).kind(), io::ErrorKind::UnexpectedEof);
    assert_eq!(expect_err(f.read_at(len + 4096, &mut buf)).kind(), io::ErrorKind::UnexpectedEof);
    f.read_at(len - 16, &mut buf).unwrap();

    // set_len grows with zeros and keeps the data.
    f.set_len(20_000).unwrap();
    assert_eq!(f.len().unwrap(), 20_000);
    assert_eq!(read(&*f, 0, SECTOR_SIZE), expect);
    assert_eq!(read(&*f, 8192, SECTOR_SIZE), s2);
    assert!(read(&*f, 8192 + SECTOR_SIZE as u64, 20_000 - 8192 - SECTOR_SIZE).iter().all(|&x| x == 0));

    // set_len shrinks; growing again brings back zeros, not the old bytes.
    f.set_len(300).unwrap();
    assert_eq!(f.len().unwrap(), 300);
    assert_eq!(read(&*f, 0, 300), expect[..300].to_vec());
    assert_eq!(expect_err(f.read_at(299, &mut [0u8; 2])).kind(), io::ErrorKind::UnexpectedEof);
    f.set_len(SECTOR_SIZE as u64).unwrap();
    assert_eq!(read(&*f, 0, 300), expect[..300].to_vec());
    assert!(read(&*f, 300, SECTOR_SIZE - 300).iter().all(|&x| x == 0));
    f.sync().unwrap();

    // Every handle of a path sees the same file; open(create) never truncates.
    let f2 = fs.open(&a, false).unwrap();
    assert_eq!(read_all(&*f2), read_all(&*f));
    f2.write_at(0, b"XY").unwrap();
    assert_eq!(read(&*f, 0, 2), b"XY".to_vec());
    let f3 = fs.open(&a, true).unwrap();
    assert_eq!(f3.len().unwrap(), SECTOR_SIZE as u64);

    // Files are independent.
    let g = fs.open(&b, true).unwrap();
    assert_eq!(g.len().unwrap(), 0);
    g.write_at(0, &pattern(9, 1000)).unwrap();
    g.sync().unwrap();
    assert_eq!(f.len().unwrap(), SECTOR_SIZE as u64);
    assert_eq!(read(&*f, 0, 2), b"XY".to_vec());

    // Remove.
    drop((f, f2, f3));
    fs.remove(&a).unwrap();
    assert!(!fs.exists(&a));
    assert!(fs.exists(&b));
    assert_eq!(expect_err(fs.open(&a, false)).kind(), io::ErrorKind::NotFound);
    let fresh = fs.open(&a, true).unwrap();
    assert_eq!(fresh.len().unwrap(), 0, "a file created after remove starts empty");
    assert_eq!(read_all(&*g), pattern(9, 1000));
}

#[test]
fn conformance_memfs() {
    conformance(&MemFs::new(), Path::new("/mem/data"));
}

#[test]
fn conformance_osfs() {
    let dir = TempDir::new("conformance");
    conformance(&OsFs, &dir.0);
}

#[test]
fn conformance_faultfs() {
    let fs = FaultFs::new(1);
    conformance(&fs, Path::new("/fault/data"));
    assert!(!fs.is_crashed());
}

#[test]
fn conformance_restarted_faultfs() {
    // A restarted FaultFs is a full backend too.
    let fs = FaultFs::new(2).restart();
    conformance(&fs, Path::new("/fault/data"));
}

// ---------------------------------------------------------------------------------------
// FaultFs: durability and restart policies

#[test]
fn unsynced_writes_are_lost_with_drop_all() {
    let fs = FaultFs::new(3);
    fs.set_torn_write_policy(FaultFs::DROP_ALL_UNSYNCED);
    let path = p("/db/a.mdf");
    let f = fs.open(&path, true).unwrap();
    let old = pattern(1, 4 * SECTOR_SIZE);
    f.write_at(0, &old).unwrap();
    f.sync().unwrap();
    assert_eq!(fs.unsynced_write_count(&path), 0);

    f.write_at(0, &pattern(2, SECTOR_SIZE)).unwrap();
    f.write_at(8 * SECTOR_SIZE as u64, &pattern(3, SECTOR_SIZE)).unwrap();
    f.set_len(SECTOR_SIZE as u64).unwrap();
    assert_eq!(fs.unsynced_write_count(&path), 3);
    assert_eq!(fs.durable_bytes(&path).unwrap(), old);
    assert_eq!(fs.volatile_bytes(&path).unwrap(), pattern(2, SECTOR_SIZE));

    let fs2 = fs.restart();
    assert_eq!(fs2.volatile_bytes(&path).unwrap(), old);
    assert_eq!(fs2.durable_bytes(&path).unwrap(), old);
    assert_eq!(fs2.unsynced_write_count(&path), 0);
    let f2 = fs2.open(&path, false).unwrap();
    assert_eq!(read_all(&*f2), old);
}

#[test]
fn unsynced_writes_are_kept_with_keep_all() {
    let fs = FaultFs::new(4);
    fs.set_torn_write_policy(FaultFs::KEEP_ALL_UNSYNCED);
    let path = p("/db/a.mdf");
    let f = fs.open(&path, true).unwrap();
    f.write_at(0, &pattern(1, 4 * SECTOR_SIZE)).unwrap();
    f.sync().unwrap();
    f.write_at(100, &pattern(2, 700)).unwrap();
    f.set_len(3 * SECTOR_SIZE as u64).unwrap();
    f.write_at(10 * SECTOR_SIZE as u64, &pattern(3, 2 * SECTOR_SIZE)).unwrap();
    let volatile = fs.volatile_bytes(&path).unwrap();
    assert_eq!(volatile.len(), 12 * SECTOR_SIZE);

    let fs2 = fs.restart();
    assert_eq!(fs2.volatile_bytes(&path).unwrap(), volatile);
    assert_eq!(read_all(&*fs2.open(&path, false).unwrap()), volatile);
    assert_eq!(fs2.torn_write_policy(), FaultFs::KEEP_ALL_UNSYNCED, "the policy carries over");
}

#[test]
fn synced_writes_always_survive() {
    let policies = [FaultFs::TORN_RANDOM, FaultFs::DROP_ALL_UNSYNCED, FaultFs::KEEP_ALL_UNSYNCED, FaultFs::TEAR_ALL];
    for policy in policies {
        for seed in 0..40 {
            let fs = FaultFs::new(seed);
            fs.set_torn_write_policy(policy);
            let (a, b) = (p("/db/a.mdf"), p("/db/b.ldf"));
            let fa = fs.open(&a, true).unwrap();
            let fb = fs.open(&b, true).unwrap();
            let synced = pattern(seed as u8, 8 * SECTOR_SIZE);
            fa.write_at(0, &synced).unwrap();
            fb.write_at(0, &pattern(7, SECTOR_SIZE)).unwrap();
            fa.sync().unwrap(); // syncs a only
            fa.write_at(8 * SECTOR_SIZE as u64, &pattern(5, 8 * SECTOR_SIZE)).unwrap();
            fa.set_len(12 * SECTOR_SIZE as u64).unwrap();
            fs.crash_now();

            let fs2 = fs.restart();
            let after = fs2.volatile_bytes(&a).unwrap();
            assert!(after.len() >= synced.len(), "{policy:?} seed {seed}");
            assert_eq!(&after[..synced.len()], &synced[..], "{policy:?} seed {seed}");
            // Syncing a did not make b's write durable.
            assert_eq!(fs.durable_bytes(&b).unwrap(), Vec::<u8>::new());
            if policy == FaultFs::DROP_ALL_UNSYNCED {
                assert_eq!(fs2.volatile_bytes(&b).unwrap(), Vec::<u8>::new());
            }
        }
    }
}

/// `FaultFs::new(seed)` with a torn-write policy. A macro, not a function, because
/// `storage::io` does not re-export `TornPolicy` (yet), so its type cannot be named here.
macro_rules! fault_fs {
    ($seed:expr, $policy:expr) => {{
        let fs = FaultFs::new($seed);
        fs.set_torn_write_policy($policy);
        fs
    }};
}

/// `old` durable, then one unsynced write of `new` at `offset`; returns the image after a
/// restart.
fn one_torn_write(fs: FaultFs, old: &[u8], offset: u64, new: &[u8]) -> Vec<u8> {
    let path = p("/db/torn.mdf");
    let f = fs.open(&path, true).unwrap();
    f.write_at(0, old).unwrap();
    f.sync().unwrap();
    f.write_at(offset, new).unwrap();
    fs.restart().volatile_bytes(&path).unwrap()
}

#[test]
fn torn_writes_are_sector_granular() {
    const SECTORS: usize = 16;
    let old = pattern(1, SECTORS * SECTOR_SIZE);
    let new = pattern(2, SECTORS * SECTOR_SIZE);
    let mut mixed_runs = 0;
    let mut sectors_new = 0;
    let mut sectors_old = 0;
    for policy in [FaultFs::TEAR_ALL, FaultFs::TORN_RANDOM] {
        for seed in 0..64 {
            let after = one_torn_write(fault_fs!(seed, policy), &old, 0, &new);
            assert_eq!(after.len(), old.len());
            let (mut n_old, mut n_new) = (0, 0);
            for s in 0..SECTORS {
                let r = s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE;
                if after[r.clone()] == old[r.clone()] {
                    n_old += 1;
                } else if after[r.clone()] == new[r.clone()] {
                    n_new += 1;
                } else {
                    panic!("{policy:?} seed {seed}: sector {s} is neither old nor new");
                }
            }
            sectors_old += n_old;
            sectors_new += n_new;
            if n_old > 0 && n_new > 0 {
                mixed_runs += 1;
            }
        }
    }
    // Tearing really happens, in both directions.
    assert!(mixed_runs > 32, "{mixed_runs}");
    assert!(sectors_old > 300 && sectors_new > 300, "{sectors_old} {sectors_new}");
}

#[test]
fn unaligned_writes_tear_at_file_sector_boundaries() {
    let old = pattern(1, 4 * SECTOR_SIZE);
    let new = pattern(2, 1500);
    let offset = 100u64;
    // Pieces of the write, in file offsets: [100,512) [512,1024) [1024,1536) [1536,1600).
    let pieces = [100..512usize, 512..1024, 1024..1536, 1536..1600];
    let mut seen_partial = false;
    for seed in 0..64 {
        let after = one_torn_write(fault_fs!(seed, FaultFs::TEAR_ALL), &old, offset, &new);
        assert_eq!(after.len(), old.len());
        assert_eq!(&after[..100], &old[..100]);
        assert_eq!(&after[1600..], &old[1600..]);
        let mut kinds = Vec::new();
        for r in &pieces {
            let new_piece = &new[r.start - 100..r.end - 100];
            if after[r.clone()] == old[r.clone()] {
                kinds.push(false);
            } else if &after[r.clone()] == new_piece {
                kinds.push(true);
            } else {
                panic!("seed {seed}: piece {r:?} is a mix of old and new bytes");
            }
        }
        seen_partial |= kinds.contains(&true) && kinds.contains(&false);
    }
    assert!(seen_partial);
}

#[test]
fn torn_extending_write_leaves_new_sectors_or_zeros() {
    // Durable: 2 sectors. Unsynced: 4 sectors written at sector 2, growing the file.
    let old = pattern(1, 2 * SECTOR_SIZE);
    let new = pattern(2, 4 * SECTOR_SIZE);
    let mut lengths = std::collections::BTreeSet::new();
    for seed in 0..64 {
        let after = one_torn_write(fault_fs!(seed, FaultFs::TEAR_ALL), &old, old.len() as u64, &new);
        assert_eq!(&after[..old.len()], &old[..]);
        assert_eq!(after.len() % SECTOR_SIZE, 0);
        lengths.insert(after.len());
        for s in 2..after.len() / SECTOR_SIZE {
            let r = s * SECTOR_SIZE..(s + 1) * SECTOR_SIZE;
            let n = &new[r.start - old.len()..r.end - old.len()];
            assert!(after[r.clone()] == *n || after[r.clone()].iter().all(|&x| x == 0), "seed {seed} sector {s}");
        }
        if after.len() > old.len() {
            // The length comes from a surviving piece, so the last sector is new data.
            let last = after.len() - SECTOR_SIZE;
            assert_eq!(&after[last..], &new[last - old.len()..last - old.len() + SECTOR_SIZE]);
        }
    }
    assert!(lengths.contains(&old.len()) && lengths.contains(&(6 * SECTOR_SIZE)), "{lengths:?}");
}

// ---------------------------------------------------------------------------------------
// FaultFs: crashes

#[test]
fn crash_after_nth_write_stops_everything() {
    let fs = FaultFs::new(5);
    let (a, b) = (p("/db/a.mdf"), p("/db/b.ldf"));
    let fa = fs.open(&a, true).unwrap();
    let fb = fs.open(&b, true).unwrap();
    fa.write_at(0, &pattern(1, SECTOR_SIZE)).unwrap();
    fa.sync().unwrap();
    assert_eq!(fs.writes_done(), 1);

    fs.crash_after_writes(3);
    fa.write_at(512, &pattern(2, SECTOR_SIZE)).unwrap();
    fb.write_at(0, &pattern(3, SECTOR_SIZE)).unwrap();
    assert!(!fs.is_crashed());
    fa.write_at(1024, &pattern(4, SECTOR_SIZE)).unwrap(); // the 3rd: completes, then crash
    assert!(fs.is_crashed());
    assert_eq!(fs.writes_done(), 4);

    let vol_a = fs.volatile_bytes(&a).unwrap();
    let vol_b = fs.volatile_bytes(&b).unwrap();
    assert_eq!(&vol_a[1024..], &pattern(4, SECTOR_SIZE)[..], "the n-th write is in the volatile image");
    assert_eq!(fs.unsynced_write_count(&a), 2);

    assert_crash_err("write", fa.write_at(2048, &pattern(5, SECTOR_SIZE)));
    assert_crash_err("write other file", fb.write_at(0, &pattern(6, SECTOR_SIZE)));
    assert_crash_err("read", fa.read_at(0, &mut [0u8; 16]));
    assert_crash_err("sync", fa.sync());
    assert_crash_err("len", fa.len());
    assert_crash_err("set_len", fa.set_len(0));
    assert_crash_err("open", fs.open(&a, false));
    assert_crash_err("open create", fs.open(&p("/db/c"), true));
    assert_crash_err("remove", fs.remove(&b));
    assert_crash_err("create_dir_all", fs.create_dir_all(Path::new("/x")));
    assert!(fs.exists(&a) && fs.exists(&b) && !fs.exists(&p("/db/c")));

    // Nothing after the crash landed; the failed sync made nothing durable.
    assert_eq!(fs.volatile_bytes(&a).unwrap(), vol_a);
    assert_eq!(fs.volatile_bytes(&b).unwrap(), vol_b);
    assert_eq!(fs.durable_bytes(&a).unwrap(), pattern(1, SECTOR_SIZE));
    assert_eq!(fs.writes_done(), 4);

    // After a restart the engine can run again.
    fs.set_torn_write_policy(FaultFs::DROP_ALL_UNSYNCED);
    let fs2 = fs.restart();
    assert!(!fs2.is_crashed());
    assert_eq!(fs2.writes_done(), 0);
    let fa2 = fs2.open(&a, false).unwrap();
    assert_eq!(read_all(&*fa2), pattern(1, SECTOR_SIZE));
    fa2.write_at(512, b"again").unwrap();
    fa2.sync().unwrap();
    assert!(fs.is_crashed(), "the old file system stays dead");
    assert_crash_err("old handle after restart", fa.read_at(0, &mut [0u8; 1]));
}

#[test]
fn crash_now_and_restart_of_a_live_fs() {
    let fs = FaultFs::new(6);
    let f = fs.open(&p("a"), true).unwrap();
    f.write_at(0, b"abc").unwrap();
    fs.crash_now();
    assert!(fs.is_crashed());
    assert_crash_err("write", f.write_at(0, b"x"));

    // restart() on a live file system is a power cut at that moment.
    let live = FaultFs::new(6);
    let g = live.open(&p("a"), true).unwrap();
    g.write_at(0, b"abc").unwrap();
    let after = live.restart();
    assert!(live.is_crashed());
    assert_crash_err("write after restart", g.write_at(0, b"x"));
    assert!(after.exists(&p("a")));
}

#[test]
fn crash_arming_details() {
    let fs = FaultFs::new(7);
    let f = fs.open(&p("a"), true).unwrap();
    fs.crash_after_writes(2);
    fs.crash_after_writes(3); // re-arming replaces
    for i in 0..3 {
        f.write_at(i * 10, b"x").unwrap();
    }
    assert!(fs.is_crashed());

    let fs = FaultFs::new(7);
    let f = fs.open(&p("a"), true).unwrap();
    fs.crash_after_writes(1);
    fs.disarm_crash();
    f.write_at(0, b"x").unwrap();
    f.write_at(0, b"y").unwrap();
    assert!(!fs.is_crashed());
    fs.crash_after_writes(0);
    assert!(fs.is_crashed());
}

#[test]
fn created_and_removed_files_are_durable_at_once() {
    let fs = FaultFs::new(8);
    fs.set_torn_write_policy(FaultFs::DROP_ALL_UNSYNCED);
    let f = fs.open(&p("new"), true).unwrap();
    f.write_at(0, b"unsynced").unwrap();
    fs.open(&p("gone"), true).unwrap().write_at(0, b"x").unwrap();
    fs.open(&p("gone"), false).unwrap().sync().unwrap();
    fs.remove(&p("gone")).unwrap();
    let fs2 = fs.restart();
    assert!(fs2.exists(&p("new")));
    assert_eq!(fs2.volatile_bytes(&p("new")).unwrap(), Vec::<u8>::new());
    assert!(!fs2.exists(&p("gone")));
    assert_eq!(expect_err(fs2.remove(&p("gone"))).kind(), io::ErrorKind::NotFound);
}

/// A small deterministic workload over two files: writes, syncs, a size change. Stops
/// at the first error (as an engine would after an I/O error).
fn workload(fs: &FaultFs) -> io::Result<()> {
    let a = fs.open(Path::new("/db/data.mdf"), true)?;
    let log = fs.open(Path::new("/db/log.ldf"), true)?;
    log.set_len(64 * SECTOR_SIZE as u64)?;
    for i in 0..20u64 {
        log.write_at(i * SECTOR_SIZE as u64, &pattern(i as u8, SECTOR_SIZE))?;
        log.sync()?;
        a.write_at((i % 6) * 2 * SECTOR_SIZE as u64, &pattern(100 + i as u8, 2 * SECTOR_SIZE))?;
        if i % 5 == 4 {
            a.sync()?;
        }
    }
    Ok(())
}

#[test]
fn crash_at_every_write_of_a_workload() {
    let counter = FaultFs::new(9);
    workload(&counter).unwrap();
    let total = counter.writes_done();
    assert_eq!(total, 40);

    for k in 1..=total {
        let fs = FaultFs::new(9);
        fs.crash_after_writes(k);
        let r = workload(&fs);
        assert!(fs.is_crashed());
        assert_eq!(fs.writes_done(), k);
        if k < total {
            assert_crash_err("workload", r);
        }
        // Log sector j is synced iff the crash came after its write's sync, i.e. the
        // (2j+1)-th write is not the last one; it must survive every policy.
        let fs2 = fs.restart();
        let log = fs2.open(Path::new("/db/log.ldf"), false).unwrap();
        for j in 0..20u64 {
            if 2 * j + 1 < k {
                assert_eq!(
                    read(&*log, j * SECTOR_SIZE as u64, SECTOR_SIZE),
                    pattern(j as u8, SECTOR_SIZE),
                    "k={k} j={j}"
                );
            }
        }
    }
}

#[test]
fn crash_is_atomic_under_concurrent_writers() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 200;
    const CRASH_AT: u64 = 517;
    let fs = FaultFs::new(10);
    let paths = [p("/db/a.mdf"), p("/db/b.mdf")];
    let files: Vec<Arc<dyn IoFile>> = paths.iter().map(|p| fs.open(p, true).unwrap()).collect();
    fs.crash_after_writes(CRASH_AT);

    let results: Vec<Vec<bool>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let file = files[t % 2].clone();
                s.spawn(move || {
                    let mut ok = Vec::new();
                    let mut buf = [0u8; 16];
                    for i in 0..PER_THREAD {
                        let slot = (t / 2) * PER_THREAD + i;
                        let mut data = vec![(t + 1) as u8; SECTOR_SIZE];
                        data[..8].copy_from_slice(&(i as u64).to_le_bytes());
                        ok.push(file.write_at((slot * SECTOR_SIZE) as u64, &data).is_ok());
                        // Concurrent readers too; they may fail only because of the crash.
                        if let Err(e) = file.read_at(0, &mut buf) {
                            assert!(
                                e.kind() == io::ErrorKind::UnexpectedEof || e.to_string().contains("simulated crash"),
                                "{e}"
                            );
                        }
                    }
                    ok
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    assert!(fs.is_crashed());
    assert_eq!(fs.writes_done(), CRASH_AT);
    let succeeded: usize = results.iter().map(|r| r.iter().filter(|&&x| x).count()).sum();
    assert_eq!(succeeded as u64, CRASH_AT, "exactly n writes succeed");
    for (t, r) in results.iter().enumerate() {
        // Once a thread saw the crash, all its later writes failed too.
        let first_fail = r.iter().position(|&x| !x).unwrap_or(r.len());
        assert!(r[first_fail..].iter().all(|&x| !x), "thread {t}");
        // Exactly the successful writes are in the image.
        let image = fs.volatile_bytes(&paths[t % 2]).unwrap();
        for (i, &ok) in r.iter().enumerate() {
            let off = ((t / 2) * PER_THREAD + i) * SECTOR_SIZE;
            let landed = image.get(off + 8).is_some_and(|&x| x == (t + 1) as u8);
            assert_eq!(landed, ok, "thread {t} write {i}");
        }
    }
}

#[test]
fn restart_is_deterministic_for_a_seed() {
    fn images(fs: &FaultFs, out: &mut Vec<Vec<u8>>) {
        for name in ["/db/data.mdf", "/db/log.ldf"] {
            out.push(fs.durable_bytes(Path::new(name)).unwrap_or_default());
            out.push(fs.volatile_bytes(Path::new(name)).unwrap_or_default());
        }
    }
    fn run(seed: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let fs = FaultFs::new(seed);
        fs.crash_after_writes(33);
        let _ = workload(&fs);
        let fs2 = fs.restart();
        images(&fs2, &mut out);
        // A second crash cycle on the restarted file system continues the stream.
        fs2.crash_after_writes(15);
        let _ = workload(&fs2);
        let fs3 = fs2.restart();
        images(&fs3, &mut out);
        out
    }
    for seed in [0, 1, 42, u64::MAX] {
        assert_eq!(run(seed), run(seed), "seed {seed}");
    }
    let first = run(0);
    assert!((1..20).any(|s| run(s) != first), "different seeds should give different crashes");
}

// ---------------------------------------------------------------------------------------
// FaultFs: injected errors and bit rot

#[test]
fn write_failure_injection_is_a_full_disk_not_a_crash() {
    let fs = FaultFs::new(11);
    let path = p("/db/a.mdf");
    let f = fs.open(&path, true).unwrap();
    fs.fail_writes_after(2, io::ErrorKind::Other);
    f.write_at(0, b"one").unwrap();
    f.write_at(3, b"two").unwrap();
    let e = expect_err(f.write_at(6, b"three"));
    assert_eq!(e.kind(), io::ErrorKind::Other);
    assert!(e.to_string().contains("No space left on device"), "{e}");
    assert!(!e.to_string().contains("simulated crash"));
    assert!(!fs.is_crashed());
    assert_eq!(fs.writes_done(), 2);
    assert_eq!(fs.volatile_bytes(&path).unwrap(), b"onetwo".to_vec());

    // Growing needs space; shrinking, reading and syncing do not.
    assert!(expect_err(f.set_len(4096)).to_string().contains("No space left"));
    f.set_len(5).unwrap();
    assert_eq!(read_all(&*f), b"onetw".to_vec());
    f.sync().unwrap();
    assert_eq!(fs.durable_bytes(&path).unwrap(), b"onetw".to_vec());

    fs.clear_faults();
    f.write_at(5, b"o!").unwrap();
    assert_eq!(read_all(&*f), b"onetwo!".to_vec());

    // The error kind is the caller's choice.
    fs.fail_writes_after(0, io::ErrorKind::WriteZero);
    assert_eq!(expect_err(f.write_at(0, b"x")).kind(), io::ErrorKind::WriteZero);
}

#[test]
fn read_failure_injection_hits_only_the_bad_range() {
    let fs = FaultFs::new(12);
    let (a, b) = (p("/db/a.mdf"), p("/db/b.mdf"));
    let fa = fs.open(&a, true).unwrap();
    let fb = fs.open(&b, true).unwrap();
    fa.write_at(0, &pattern(1, 16 * SECTOR_SIZE)).unwrap();
    fb.write_at(0, &pattern(1, 16 * SECTOR_SIZE)).unwrap();
    fs.fail_reads_at(&a, 4096..4608);

    let mut buf = vec![0u8; SECTOR_SIZE];
    fa.read_at(0, &mut buf).unwrap();
    fa.read_at(4608, &mut buf).unwrap();
    fa.read_at(4096 - 512, &mut buf).unwrap(); // ends exactly where the bad range starts
    let e = expect_err(fa.read_at(4000, &mut buf));
    assert!(e.to_string().contains("bad sector"), "{e}");
    assert!(!e.to_string().contains("simulated crash"));
    expect_err(fa.read_at(4607, &mut [0u8; 1]));
    fb.read_at(4096, &mut buf).unwrap(); // other file unaffected
    fa.write_at(4096, &pattern(2, SECTOR_SIZE)).unwrap(); // writes unaffected
    assert!(!fs.is_crashed());

    fs.clear_faults();
    fa.read_at(4096, &mut buf).unwrap();
    assert_eq!(buf, pattern(2, SECTOR_SIZE));
}

#[test]
fn corruption_is_visible_and_survives_restart() {
    let fs = FaultFs::new(13);
    let path = p("/db/a.mdf");
    let f = fs.open(&path, true).unwrap();
    let data = pattern(1, 2 * SECTOR_SIZE);
    f.write_at(0, &data).unwrap();
    f.sync().unwrap();

    fs.corrupt(&path, 10, &[0xFF, 0x01]).unwrap();
    let mut expect = data.clone();
    expect[10] ^= 0xFF;
    expect[11] ^= 0x01;
    assert_eq!(read(&*f, 0, 2 * SECTOR_SIZE), expect);
    assert_eq!(fs.durable_bytes(&path).unwrap(), expect);
    for policy in [FaultFs::DROP_ALL_UNSYNCED, FaultFs::KEEP_ALL_UNSYNCED] {
        fs.set_torn_write_policy(policy);
        assert_eq!(fs.restart().volatile_bytes(&path).unwrap(), expect);
    }

    let fs = FaultFs::new(13);
    fs.open(&path, true).unwrap().write_at(0, &data).unwrap();
    assert_eq!(expect_err(fs.corrupt(&p("/nope"), 0, &[1])).kind(), io::ErrorKind::NotFound);
    expect_err(fs.corrupt(&path, data.len() as u64, &[1]));
    // A mask running past the end is refused and flips nothing.
    expect_err(fs.corrupt(&path, data.len() as u64 - 1, &[0x80, 0x80]));
    assert_eq!(fs.volatile_bytes(&path).unwrap(), data);
    // Bit rot under an unsynced write: reads see it, and so does the image the next
    // sync makes durable.
    fs.corrupt(&path, 0, &[0x0F]).unwrap();
    let f = fs.open(&path, false).unwrap();
    assert_eq!(read(&*f, 0, 1), vec![data[0] ^ 0x0F]);
    f.sync().unwrap();
    assert_eq!(fs.durable_bytes(&path).unwrap()[0], data[0] ^ 0x0F);
}

// ---------------------------------------------------------------------------------------
// Property: synced bytes not overwritten afterwards survive any crash.

#[derive(Clone, Debug)]
enum Op {
    Write { file: usize, offset: u64, len: usize, seed: u8 },
    Sync { file: usize },
    SetLen { file: usize, len: u64 },
}

fn write_strategy() -> impl Strategy<Value = Op> {
    let sector = SECTOR_SIZE as u64;
    let aligned = (0..24u64, 1..4usize).prop_map(move |(s, n)| (s * sector, n * SECTOR_SIZE));
    let unaligned = (0..24 * sector, 1..700usize);
    // Mostly whole sectors, as the engine writes; sometimes arbitrary ranges.
    let range = prop_oneof![3 => aligned, 1 => unaligned];
    (0..2usize, range, any::<u8>()).prop_map(|(file, (offset, len), seed)| Op::Write { file, offset, len, seed })
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let max_len = 28 * SECTOR_SIZE as u64;
    prop_oneof![
        6 => write_strategy(),
        3 => (0..2usize).prop_map(|file| Op::Sync { file }),
        1 => (0..2usize, 0..max_len).prop_map(|(file, len)| Op::SetLen { file, len }),
    ]
}

/// What the test knows about one file.
#[derive(Default)]
struct Model {
    volatile: Vec<u8>,
    /// Durable image as of the last sync.
    durable: Vec<u8>,
    /// Bytes of `durable` that an operation since the last sync may have changed.
    touched: Vec<bool>,
}

impl Model {
    fn touch(&mut self, from: usize, to: usize) {
        let to = to.min(self.touched.len());
        for t in self.touched.iter_mut().take(to).skip(from) {
            *t = true;
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn synced_untouched_bytes_survive_restart(
        ops in prop::collection::vec(op_strategy(), 1..60),
        crash_at in 1..50u64,
        seed in any::<u64>(),
        policy in 0..4u8,
    ) {
        let policies = [
            FaultFs::TORN_RANDOM,
            FaultFs::DROP_ALL_UNSYNCED,
            FaultFs::KEEP_ALL_UNSYNCED,
            FaultFs::TEAR_ALL,
        ];
        let policy = policies[policy as usize];
        let fs = fault_fs!(seed, policy);
        let paths = [p("/db/a.mdf"), p("/db/b.ldf")];
        let files: Vec<Arc<dyn IoFile>> =
            paths.iter().map(|p| fs.open(p, true).unwrap()).collect();
        let mut models = [Model::default(), Model::default()];
        fs.crash_after_writes(crash_at);
        let mut writes = 0u64;

        for op in &ops {
            let crashed = fs.is_crashed();
            let result = match *op {
                Op::Write { file, offset, len, seed } => {
                    files[file].write_at(offset, &pattern(seed, len))
                }
                Op::Sync { file } => files[file].sync(),
                Op::SetLen { file, len } => files[file].set_len(len),
            };
            if crashed {
                let msg = result.as_ref().err().map(|e| e.to_string()).unwrap_or_default();
                prop_assert!(msg.contains("simulated crash"), "after the crash: {:?}", op);
                continue;
            }
            prop_assert!(result.is_ok(), "{:?}", result);
            match *op {
                Op::Write { file, offset, len, seed } => {
                    writes += 1;
                    let m = &mut models[file];
                    let (start, end) = (offset as usize, offset as usize + len);
                    if m.volatile.len() < end {
                        m.volatile.resize(end, 0);
                    }
                    m.volatile[start..end].copy_from_slice(&pattern(seed, len));
                    m.touch(start, end);
                }
                Op::Sync { file } => {
                    let m = &mut models[file];
                    m.durable = m.volatile.clone();
                    m.touched = vec![false; m.durable.len()];
                }
                Op::SetLen { file, len } => {
                    let m = &mut models[file];
                    m.volatile.resize(len as usize, 0);
                    m.touch(len as usize, usize::MAX);
                }
            }
        }
        prop_assert_eq!(fs.writes_done(), writes);
        prop_assert_eq!(fs.is_crashed(), writes >= crash_at);

        // Before the restart the images are exactly what the model says.
        for (path, m) in paths.iter().zip(&models) {
            prop_assert_eq!(&fs.volatile_bytes(path).unwrap(), &m.volatile);
            prop_assert_eq!(&fs.durable_bytes(path).unwrap(), &m.durable);
        }

        let fs2 = fs.restart();
        prop_assert!(fs.is_crashed() && !fs2.is_crashed());
        for (path, m) in paths.iter().zip(&models) {
            let after = read_all(&*fs2.open(path, false).unwrap());
            for (i, (&byte, &touched)) in m.durable.iter().zip(&m.touched).enumerate() {
                if !touched {
                    prop_assert!(i < after.len(), "{:?}: synced byte {} lost", path, i);
                    prop_assert_eq!(after[i], byte, "{:?}: synced byte {} changed", path, i);
                }
            }
            if policy == FaultFs::DROP_ALL_UNSYNCED {
                prop_assert_eq!(&after, &m.durable);
            }
            if policy == FaultFs::KEEP_ALL_UNSYNCED {
                prop_assert_eq!(&after, &m.volatile);
            }
        }
    }
}
