//! bench/sql: the same T-SQL workload on Mesquite (embedded engine, on disk, durable
//! commits) and on SQLite (WAL, synchronous=FULL), in alternating runs, printing the medians
//! of rows/s, their ratios, and each run's ratios.
//!
//! Both sides receive SQL text: INSERT statements in 1000-row transactions (one batch
//! per transaction), a loop of point lookups by primary key (one statement per lookup,
//! parsed each time on both sides), a GROUP BY over the whole table, and a join of two
//! tables. Results are consumed and counted, not printed.

/// The allocator the `mesquite` binary runs on (docs/architecture.md, "Memory allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::time::Instant;

mod count;
use count::Count;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn insert_batches(rows: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut id = 1;
    while id <= rows {
        let mut s = String::from("BEGIN TRANSACTION;\n");
        for _ in 0..1000 {
            if id > rows {
                break;
            }
            s.push_str(&format!("INSERT INTO t VALUES ({id}, {}, 'value {id}');\n", id % 1000));
            id += 1;
        }
        s.push_str("COMMIT;\n");
        out.push(s);
    }
    out
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    *seed >> 33
}

struct Results {
    insert: f64,
    lookup: f64,
    group: f64,
    join: f64,
}

fn mesquite(rows: u64, lookups: u64, join_rows: u64, dir: &std::path::Path) -> Results {
    let mut cfg = engine::InstanceConfig::on_disk(dir);
    cfg.sa_password = Some("bench-Password-1".into());
    let inst = engine::Instance::start(cfg).expect("start");
    let mut s = inst.open_session("sa", "bench-Password-1", None).expect("login");
    let mut run = |sql: &str| -> u64 {
        let mut c = Count { rows: 0, errors: Vec::new() };
        s.execute_batch(sql, &mut c);
        if !c.errors.is_empty() {
            panic!("{}: {:?}", &sql[..sql.len().min(80)], c.errors);
        }
        c.rows
    };
    run("CREATE DATABASE benchdb");
    run("USE benchdb");
    run("CREATE TABLE t (id int PRIMARY KEY, grp int NOT NULL, val varchar(20))");
    let batches = insert_batches(rows);
    let t0 = Instant::now();
    for b in &batches {
        run(b);
    }
    let insert = rows as f64 / t0.elapsed().as_secs_f64();
    let mut seed = 42;
    let t0 = Instant::now();
    let mut found = 0;
    for _ in 0..lookups {
        let k = lcg(&mut seed) % rows + 1;
        found += run(&format!("SELECT val FROM t WHERE id = {k}"));
    }
    assert_eq!(found, lookups);
    let lookup = lookups as f64 / t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let groups = run("SELECT grp, COUNT(*), SUM(id) FROM t GROUP BY grp");
    assert_eq!(groups, 1000.min(rows));
    let group = rows as f64 / t0.elapsed().as_secs_f64();
    run("CREATE TABLE a (id int PRIMARY KEY, x int); CREATE TABLE b (id int PRIMARY KEY, aid int)");
    run("INSERT INTO a SELECT id, grp FROM t WHERE id <= 100000");
    run(&format!("INSERT INTO a SELECT id, grp FROM t WHERE id > 100000 AND id <= {join_rows}"));
    run(&format!("INSERT INTO b SELECT id, {join_rows} + 1 - id FROM t WHERE id <= {join_rows}"));
    let t0 = Instant::now();
    let n = run("SELECT a.x, b.id FROM a JOIN b ON a.id = b.aid");
    assert_eq!(n, join_rows);
    let join = (2 * join_rows) as f64 / t0.elapsed().as_secs_f64();
    drop(s);
    inst.shutdown().expect("shutdown");
    Results { insert, lookup, group, join }
}

fn sqlite(rows: u64, lookups: u64, join_rows: u64, dir: &std::path::Path) -> Results {
    let c = rusqlite::Connection::open(dir.join("bench.db")).expect("open");
    c.execute_batch("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;").expect("pragma");
    c.execute_batch("CREATE TABLE t (id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, val VARCHAR(20))").expect("create");
    let batches = insert_batches(rows);
    let t0 = Instant::now();
    for b in &batches {
        c.execute_batch(b).expect("insert");
    }
    let insert = rows as f64 / t0.elapsed().as_secs_f64();
    let mut seed = 42;
    let t0 = Instant::now();
    let mut found = 0u64;
    for _ in 0..lookups {
        let k = lcg(&mut seed) % rows + 1;
        let mut st = c.prepare(&format!("SELECT val FROM t WHERE id = {k}")).expect("prepare");
        let mut q = st.query([]).expect("query");
        while q.next().expect("row").is_some() {
            found += 1;
        }
    }
    assert_eq!(found, lookups);
    let lookup = lookups as f64 / t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    let mut st = c.prepare("SELECT grp, COUNT(*), SUM(id) FROM t GROUP BY grp").expect("prepare");
    let mut q = st.query([]).expect("query");
    let mut groups = 0;
    while q.next().expect("row").is_some() {
        groups += 1;
    }
    assert_eq!(groups, 1000.min(rows));
    let group = rows as f64 / t0.elapsed().as_secs_f64();
    drop(q);
    drop(st);
    c.execute_batch(
        "CREATE TABLE a (id INTEGER PRIMARY KEY, x INTEGER); CREATE TABLE b (id INTEGER PRIMARY KEY, aid INTEGER)",
    )
    .expect("create");
    c.execute_batch(&format!("INSERT INTO a SELECT id, grp FROM t WHERE id <= {join_rows}; INSERT INTO b SELECT id, {join_rows} + 1 - id FROM t WHERE id <= {join_rows}")).expect("fill");
    let t0 = Instant::now();
    let mut st = c.prepare("SELECT a.x, b.id FROM a JOIN b ON a.id = b.aid").expect("prepare");
    let mut q = st.query([]).expect("query");
    let mut n = 0;
    while q.next().expect("row").is_some() {
        n += 1;
    }
    assert_eq!(n, join_rows);
    let join = (2 * join_rows) as f64 / t0.elapsed().as_secs_f64();
    Results { insert, lookup, group, join }
}

fn main() {
    let rows = arg("--rows", 1_000_000);
    let lookups = arg("--lookups", 100_000);
    let join_rows = arg("--join-rows", 100_000).min(rows);
    let runs = arg("--runs", 3).max(1);
    let base = std::env::temp_dir().join(format!("mesquite-bench-sql-{}", std::process::id()));
    println!("bench/sql: {rows} rows inserted in 1000-row transactions, {lookups} point lookups, GROUP BY over {rows} rows, join of two {join_rows}-row tables");
    println!("Mesquite: embedded, on disk, durable commits. SQLite {}: WAL, synchronous=FULL.", rusqlite::version());
    println!("{runs} runs, each engine in turn on a fresh directory; the table shows each measure's median.");
    // Each run in fresh directories, the engines alternating, so that a slow moment of
    // the machine (another process, a slow fsync) weighs on one run of one engine, and
    // the median leaves it out.
    let (mut ms, mut ss) = (Vec::new(), Vec::new());
    for r in 0..runs {
        let (md, sd) = (base.join(format!("m{r}")), base.join(format!("s{r}")));
        std::fs::create_dir_all(&md).expect("dir");
        std::fs::create_dir_all(&sd).expect("dir");
        ms.push(mesquite(rows, lookups, join_rows, &md));
        ss.push(sqlite(rows, lookups, join_rows, &sd));
        let _ = std::fs::remove_dir_all(&base);
    }
    println!();
    println!("{:<34} {:>14} {:>14} {:>8}", "operation", "Mesquite", "SQLite", "ratio");
    let median = |v: &[Results], f: fn(&Results) -> f64| -> (f64, Vec<f64>) {
        let mut x: Vec<f64> = v.iter().map(f).collect();
        let each = x.clone();
        x.sort_by(f64::total_cmp);
        (x[x.len() / 2], each)
    };
    let measures: [(&str, fn(&Results) -> f64); 4] = [
        ("INSERT statements (rows/s)", |r| r.insert),
        ("point lookups (queries/s)", |r| r.lookup),
        ("GROUP BY (input rows/s)", |r| r.group),
        ("join (input rows/s)", |r| r.join),
    ];
    let mut each_run = Vec::new();
    for (name, f) in measures {
        let (a, ea) = median(&ms, f);
        let (b, eb) = median(&ss, f);
        println!("{name:<34} {a:>14.0} {b:>14.0} {:>7.2}x", a / b);
        let ratios: Vec<String> = ea.iter().zip(&eb).map(|(x, y)| format!("{:.2}x", x / y)).collect();
        each_run.push(format!("  {name}: {}", ratios.join(" ")));
    }
    if runs > 1 {
        println!("\nratio of each run (Mesquite / SQLite):");
        for l in each_run {
            println!("{l}");
        }
    }
}
