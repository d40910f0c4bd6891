//! Storage engine benchmark, Mesquite beside SQLite in one run on one machine.
//!
//! What it measures (both sides store an 8-byte integer key and a 100-byte row):
//! 1. bulk insert of N rows in key order into a clustered index (SQLite: a rowid table,
//!    one transaction, prepared statement; Mesquite: a clustered B+tree);
//! 2. M random point lookups by key;
//! 3. a full scan (rows/s and MB/s of row data, warm cache);
//! 4. Mesquite's buffer pool cost per access to a resident page.
//!
//! SQLite runs in WAL mode with synchronous=OFF and a cache big enough for the data, so
//! neither side waits for the disk: this compares storage engines, not fsync. SQLite pays
//! for its SQL layer (prepared statements, VDBE); Mesquite has none yet.
//!
//! Usage: bench-storage [--rows N] [--lookups M] [--dir DIR]
//! Defaults: 10,000,000 rows, 1,000,000 lookups, a fresh directory under the system temp.

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::time::Instant;
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::OsFs;
use storage::{BufferPool, Database, PageId};

const ROW: usize = 100;

struct Args {
    rows: u64,
    lookups: u64,
    dir: PathBuf,
}

fn parse_args() -> Args {
    let mut a = Args {
        rows: 10_000_000,
        lookups: 1_000_000,
        dir: std::env::temp_dir().join(format!("mesquite-bench-storage-{}", std::process::id())),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let v = it.next().unwrap_or_default();
        match k.as_str() {
            "--rows" => a.rows = v.parse().expect("--rows N"),
            "--lookups" => a.lookups = v.parse().expect("--lookups M"),
            "--dir" => a.dir = PathBuf::from(v),
            _ => {
                eprintln!("usage: bench-storage [--rows N] [--lookups M] [--dir DIR]");
                std::process::exit(2);
            }
        }
    }
    a
}

fn row_for(k: u64) -> [u8; ROW] {
    let mut r = [0u8; ROW];
    let mut x = k.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for chunk in r.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        chunk.copy_from_slice(&b[..chunk.len()]);
    }
    r
}

/// Keys for lookups: a fixed pseudo-random sequence over [0, rows).
fn lookup_keys(rows: u64, n: u64) -> Vec<u64> {
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % rows
        })
        .collect()
}

#[derive(Default, Clone, Copy)]
struct Result3 {
    insert_rps: f64,
    lookup_rps: f64,
    scan_rps: f64,
    scan_mbps: f64,
}

fn run_sqlite(dir: &Path, rows: u64, keys: &[u64]) -> Result3 {
    let path = dir.join("sqlite.db");
    let conn = rusqlite::Connection::open(&path).expect("open sqlite");
    conn.execute_batch(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=OFF; PRAGMA cache_size=-4000000; \
         CREATE TABLE t(id INTEGER PRIMARY KEY, v BLOB NOT NULL);",
    )
    .expect("sqlite setup");
    let mut out = Result3::default();

    let t = Instant::now();
    conn.execute_batch("BEGIN").unwrap();
    {
        let mut st = conn.prepare_cached("INSERT INTO t(id, v) VALUES (?1, ?2)").unwrap();
        for k in 0..rows {
            st.execute(rusqlite::params![k as i64, &row_for(k)[..]]).unwrap();
        }
    }
    conn.execute_batch("COMMIT").unwrap();
    out.insert_rps = rows as f64 / t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut found = 0u64;
    {
        let mut st = conn.prepare_cached("SELECT v FROM t WHERE id = ?1").unwrap();
        for &k in keys {
            let n: usize =
                st.query_row([k as i64], |r| r.get_ref(0).map(|v| v.as_blob().map(|b| b.len()).unwrap_or(0))).unwrap();
            found += (n == ROW) as u64;
        }
    }
    assert_eq!(found, keys.len() as u64);
    out.lookup_rps = keys.len() as f64 / t.elapsed().as_secs_f64();

    // Warm scan: once to warm the cache, then measured.
    let scan = |conn: &rusqlite::Connection| {
        let mut st = conn.prepare_cached("SELECT id, v FROM t").unwrap();
        let mut q = st.query([]).unwrap();
        let (mut n, mut bytes) = (0u64, 0u64);
        while let Some(r) = q.next().unwrap() {
            let _id: i64 = r.get(0).unwrap();
            bytes += r.get_ref(1).unwrap().as_blob().unwrap().len() as u64;
            n += 1;
        }
        (n, bytes)
    };
    scan(&conn);
    let t = Instant::now();
    let (n, bytes) = scan(&conn);
    let s = t.elapsed().as_secs_f64();
    assert_eq!(n, rows);
    out.scan_rps = n as f64 / s;
    out.scan_mbps = (bytes + 8 * n) as f64 / s / 1e6;
    out
}

fn run_mesquite(dir: &Path, rows: u64, keys: &[u64]) -> (Result3, f64) {
    // Room for the whole data set: this compares warm engines, as SQLite's cache above.
    let data_bytes = rows * (ROW as u64 + 16);
    let pool = BufferPool::with_memory_limit((data_bytes * 3 / 2).max(256 << 20));
    pool.start_lazy_writer();
    let fs = OsFs;
    let spec = FileSpec {
        file_id: 1,
        name: "bench".into(),
        path: dir.join("bench.mdf"),
        size_pages: ((data_bytes / 8192) as u32).max(1024) + 1024,
        growth: FileGrowth::Percent(25),
        max_pages: None,
    };
    let db = Database::create(pool.clone(), &fs, 5, "bench", vec![spec]).expect("create database");
    let tree = BTree::create(&db, 100, 1, BTreeOptions { unique: true }).expect("create tree");
    let mut out = Result3::default();

    let t = Instant::now();
    for k in 0..rows {
        tree.insert(&k.to_be_bytes(), &row_for(k)).expect("insert");
    }
    out.insert_rps = rows as f64 / t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut found = 0u64;
    for &k in keys {
        found += tree.get_with(&k.to_be_bytes(), |v| (v.len() == ROW) as u64).expect("get").unwrap_or(0);
    }
    assert_eq!(found, keys.len() as u64);
    out.lookup_rps = keys.len() as f64 / t.elapsed().as_secs_f64();

    let scan = || {
        let (mut n, mut bytes) = (0u64, 0u64);
        tree.scan(Bound::Unbounded, Bound::Unbounded, |k, v| {
            n += 1;
            bytes += (k.len() + v.len()) as u64;
            true
        })
        .expect("scan");
        (n, bytes)
    };
    scan();
    let t = Instant::now();
    let (n, bytes) = scan();
    let s = t.elapsed().as_secs_f64();
    assert_eq!(n, rows);
    out.scan_rps = n as f64 / s;
    out.scan_mbps = bytes as f64 / s / 1e6;

    // Buffer pool cost per access to a resident page: latch SH + pin + unpin.
    let au = db.alloc_unit(tree.alloc_unit_id()).expect("alloc unit");
    let pages: Vec<PageId> = db.alloc_unit_pages(au.id).expect("pages").into_iter().take(4096).collect();
    let accesses = 5_000_000u64;
    let t = Instant::now();
    let mut sum = 0u64;
    for i in 0..accesses {
        let id = pages[(i.wrapping_mul(2654435761) % pages.len() as u64) as usize];
        sum += db.read(id).expect("read").slot_count() as u64;
    }
    let ns_per_access = t.elapsed().as_nanos() as f64 / accesses as f64;
    std::hint::black_box(sum);
    db.close().expect("close");
    (out, ns_per_access)
}

fn main() {
    let a = parse_args();
    std::fs::create_dir_all(&a.dir).expect("bench dir");
    let keys = lookup_keys(a.rows, a.lookups);
    println!(
        "bench/storage: {} rows of 8-byte key + {ROW}-byte row, {} random lookups, dir {}",
        a.rows,
        a.lookups,
        a.dir.display()
    );
    println!("(SQLite {} in WAL mode, synchronous=OFF; both warm, neither waits for fsync)\n", rusqlite::version());

    let sq = run_sqlite(&a.dir, a.rows, &keys);
    let (mq, ns) = run_mesquite(&a.dir, a.rows, &keys);

    println!("{:<28} {:>16} {:>16} {:>8}", "operation", "Mesquite", "SQLite", "ratio");
    let line = |name: &str, m: f64, s: f64, unit: &str| {
        println!("{:<28} {:>12.0} {unit:<3} {:>12.0} {unit:<3} {:>7.2}x", name, m, s, m / s);
    };
    line("bulk insert (rows/s)", mq.insert_rps, sq.insert_rps, "");
    line("point lookup (rows/s)", mq.lookup_rps, sq.lookup_rps, "");
    line("full scan (rows/s)", mq.scan_rps, sq.scan_rps, "");
    line("full scan (MB/s)", mq.scan_mbps, sq.scan_mbps, "");
    println!("\nbuffer pool: {ns:.1} ns per access to a resident page (latch SH, pin, unpin)");
    println!("targets: insert and lookup >= 1.5x SQLite; scan >= 1000 MB/s; resident access < 100 ns");
    let _ = std::fs::remove_dir_all(&a.dir);
}
