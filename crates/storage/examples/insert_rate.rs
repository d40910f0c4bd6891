//! Sequential insert rate of one B-tree, set up as bench/storage sets up its insert phase
//! (real files, the lazy writer): a profiling aid. `cargo run --release -p storage
//! --example insert_rate -- [rows] [dir]`.
use std::time::Instant;
use storage::btree::{BTree, BTreeOptions};
use storage::file::{FileGrowth, FileSpec};
use storage::io::OsFs;
use storage::{BufferPool, Database};

fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(1_000_000);
    let dir = std::env::args().nth(2).unwrap_or_else(|| format!("/tmp/mesquite-insert-rate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("dir");
    if std::env::var_os("WARM").is_some() {
        // Touch and free memory first, as the storage benchmark does by running SQLite.
        let v: Vec<Vec<u8>> = (0..4000).map(|i| vec![i as u8; 64 << 10]).collect();
        std::hint::black_box(&v);
    }
    let data_bytes = n * 116;
    let pool = BufferPool::with_memory_limit((data_bytes * 3 / 2).max(256 << 20));
    pool.start_lazy_writer();
    let spec = FileSpec {
        file_id: 1,
        name: "rate".into(),
        path: std::path::Path::new(&dir).join("rate.mdf"),
        size_pages: ((data_bytes / 8192) as u32).max(1024) + 1024,
        growth: FileGrowth::Percent(25),
        max_pages: None,
    };
    let db = Database::create(pool, &OsFs, 1, "rate", vec![spec]).expect("create");
    let t = BTree::create(&db, 17, 1, BTreeOptions { unique: true }).expect("create tree");
    let row = vec![0x5Au8; 100];
    let start = Instant::now();
    for i in 0..n {
        t.insert(&i.to_be_bytes(), &row).expect("insert");
    }
    let el = start.elapsed();
    println!("{n} sequential inserts: {:.0} rows/s", n as f64 / el.as_secs_f64());
    if std::env::var_os("STATS").is_some() {
        let s = t.check().expect("check");
        println!("{s:?} fill {:.3} dirty {}", s.leaf_fill(), db.pool().dirty_count(db.id));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
