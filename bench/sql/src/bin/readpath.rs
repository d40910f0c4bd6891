//! bench/sql readpath: the read-path queries of bench/sql and bench/tds on a database
//! built once, for instruction counts (callgrind) and profiles of one query at a time.
//!
//! ```text
//! readpath --dir DIR --setup [--rows N] [--join-rows M]
//! readpath --dir DIR --query group|join|seekjoin|stream [--iters K]
//! readpath --dir DIR --sql 'SELECT ...'        (prints the results)
//! readpath --dir DIR --sqlite [--setup] [--query group|join]   (the same on SQLite)
//! valgrind --tool=callgrind --toggle-collect='*readpath*measured*' readpath --dir DIR --query join
//! ```
//!
//! `--setup` creates the tables on disk in DIR (natively: fast). `--query` reopens them,
//! runs the query once to warm the buffer pool, then runs it `--iters` times (default 1)
//! inside `measured`, the function to collect: the instruction count of the query alone,
//! without setup, recovery or cold page reads.
//! - group: `SELECT grp, COUNT(*), SUM(id) FROM t GROUP BY grp` (bench/sql);
//! - join: `SELECT a.x, b.id FROM a JOIN b ON a.id = b.aid` (bench/sql);
//! - seekjoin: the same rows by a seek into `a` per row of `b` (a correlated subquery);
//! - stream: `SELECT id, name, ts FROM stream_t` (bench/tds), encoded into TDS packets by
//!   the server's `TokenSink` (the packets are dropped, not sent);
//! - lookup: 1,000 point lookups `SELECT val FROM t WHERE id = k` (bench/sql), one batch
//!   each, keys spread over the table;
//! - insert: 1,000 INSERT statements in one transaction (bench/sql's batch) into a table
//!   emptied before each run (`ins`, created on first use). Collect `*readpath*timed*`
//!   for these two: the statements alone.

/// The allocator the `mesquite` binary runs on (docs/architecture.md, "Memory allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use tds::sink::{ClientGone, PacketOut, TokenSink};

const PASSWORD: &str = "bench-Password-1";

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

#[path = "../count.rs"]
mod count;
use count::Count;

fn run(s: &mut engine::Session, sql: &str) -> u64 {
    let mut c = Count::default();
    s.execute_batch(sql, &mut c);
    if !c.errors.is_empty() {
        panic!("{}: {:?}", &sql[..sql.len().min(80)], c.errors);
    }
    c.rows
}

/// Packets counted and dropped.
struct Discard(u64);

impl PacketOut for Discard {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        self.0 += packet.len() as u64;
        Ok(())
    }
}

fn setup(s: &mut engine::Session, rows: u64, join_rows: u64) {
    run(s, "CREATE DATABASE benchdb");
    run(s, "USE benchdb");
    run(
        s,
        "CREATE TABLE digits (i int NOT NULL);
         INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
         CREATE TABLE t (id int PRIMARY KEY, grp int NOT NULL, val varchar(20));
         CREATE TABLE a (id int PRIMARY KEY, x int);
         CREATE TABLE b (id int PRIMARY KEY, aid int);
         CREATE TABLE stream_t (id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL, ts datetime2 NOT NULL);",
    );
    let numbers = |start: u64, n: u64| {
        format!(
            "(SELECT {start} + a.i + 10*b.i + 100*c.i + 1000*d.i + 10000*e.i AS id
              FROM digits a CROSS JOIN digits b CROSS JOIN digits c CROSS JOIN digits d CROSS JOIN digits e) x
             WHERE id < {n}"
        )
    };
    let mut start = 0;
    while start < rows {
        let nums = numbers(start, rows);
        run(
            s,
            &format!(
                "INSERT INTO t SELECT id + 1, (id + 1) % 1000, 'value ' + CAST(id + 1 AS varchar(10)) FROM {nums}"
            ),
        );
        run(
            s,
            &format!(
                "INSERT INTO stream_t (id, name, ts) SELECT id, 'name ' + CAST(id AS varchar(10)),
                 DATEADD(second, id, CAST('2024-01-01' AS datetime2)) FROM {nums}"
            ),
        );
        start += 100_000;
    }
    run(s, &format!("INSERT INTO a SELECT id, grp FROM t WHERE id <= {join_rows}"));
    run(s, &format!("INSERT INTO b SELECT id, {join_rows} + 1 - id FROM t WHERE id <= {join_rows}"));
    run(s, "CHECKPOINT");
}

fn query_text(q: &str) -> &'static str {
    match q {
        "group" => "SELECT grp, COUNT(*), SUM(id) FROM t GROUP BY grp",
        "join" => "SELECT a.x, b.id FROM a JOIN b ON a.id = b.aid",
        "stream" => "SELECT id, name, ts FROM stream_t",
        // The join as index seeks: a correlated subquery seeking `a` by its key per row
        // of `b` (what an index nested-loop join would do through the same machinery).
        "seekjoin" => "SELECT (SELECT a.x FROM a WHERE a.id = b.aid), b.id FROM b",
        "lookup" | "insert" => "",
        other => panic!("unknown query {other}: group, join, seekjoin, stream, lookup or insert"),
    }
}

/// The statements of `lookup` and `insert` alone, without their preparation
/// (`--toggle-collect='*readpath*timed*'`).
/// Not while warming up (`WARMING`).
#[inline(never)]
fn timed(s: &mut engine::Session, sql: &str) -> u64 {
    run(s, sql)
}

static WARMING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn dispatch(s: &mut engine::Session, sql: &str) -> u64 {
    if WARMING.load(std::sync::atomic::Ordering::Relaxed) {
        run(s, sql)
    } else {
        timed(s, sql)
    }
}

/// bench/sql's INSERT batch: 1,000 statements in one transaction.
fn insert_batch() -> String {
    let mut b = String::from("BEGIN TRANSACTION;\n");
    for id in 1..=1000 {
        b.push_str(&format!("INSERT INTO ins VALUES ({id}, {}, 'value {id}');\n", id % 1000));
    }
    b.push_str("COMMIT;\n");
    b
}

/// One execution; TDS-encoded for `stream`. Returns the rows (or bytes) produced.
fn once(s: &mut engine::Session, q: &str) -> u64 {
    let text = query_text(q);
    if q == "lookup" {
        let mut found = 0;
        for i in 0..1000u64 {
            found += dispatch(s, &format!("SELECT val FROM t WHERE id = {}", i * 7919 % 100_000 + 1));
        }
        return found;
    }
    if q == "insert" {
        run(s, "IF OBJECT_ID('ins') IS NULL CREATE TABLE ins (id int PRIMARY KEY, grp int NOT NULL, val varchar(20))");
        run(s, "TRUNCATE TABLE ins");
        return dispatch(s, &insert_batch());
    }
    if q == "stream" {
        let mut sink = TokenSink::new(Discard(0), 52, 4096, Arc::new(AtomicBool::new(false)), "MESQUITE".into());
        s.execute_batch(text, &mut sink);
        let (tail, out) = sink.finish(tds::token::token_type::DONE);
        out.0 + tail.finish(false).iter().map(|p| p.len() as u64).sum::<u64>()
    } else {
        run(s, text)
    }
}

#[inline(never)]
fn measured(s: &mut engine::Session, q: &str, iters: u64) -> u64 {
    let mut n = 0;
    for _ in 0..iters {
        n += once(s, q);
    }
    n
}

/// The same queries on SQLite (`--sqlite`: DIR/sqlite.db, built by `--setup`), for
/// instruction counts to compare with.
fn sqlite_main(dir: &std::path::Path) {
    let c = rusqlite::Connection::open(dir.join("sqlite.db")).expect("open");
    if flag("--setup") {
        let rows: u64 = arg("--rows").and_then(|v| v.parse().ok()).unwrap_or(200_000);
        let join_rows: u64 = arg("--join-rows").and_then(|v| v.parse().ok()).unwrap_or(100_000).min(rows);
        c.execute_batch(&format!(
            "PRAGMA journal_mode=WAL;
             CREATE TABLE t (id INTEGER PRIMARY KEY, grp INTEGER NOT NULL, val VARCHAR(20));
             WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {rows})
             INSERT INTO t SELECT i, i % 1000, 'value ' || i FROM n;
             CREATE TABLE a (id INTEGER PRIMARY KEY, x INTEGER); CREATE TABLE b (id INTEGER PRIMARY KEY, aid INTEGER);
             INSERT INTO a SELECT id, grp FROM t WHERE id <= {join_rows};
             INSERT INTO b SELECT id, {join_rows} + 1 - id FROM t WHERE id <= {join_rows};"
        ))
        .expect("setup");
    }
    let Some(q) = arg("--query") else { return };
    let text = query_text(&q);
    let once = |c: &rusqlite::Connection| -> u64 {
        let mut st = c.prepare(text).expect("prepare");
        let mut rows = st.query([]).expect("query");
        let mut n = 0;
        while rows.next().expect("row").is_some() {
            n += 1;
        }
        n
    };
    let warm = once(&c);
    #[inline(never)]
    fn measured_sqlite(c: &rusqlite::Connection, once: &dyn Fn(&rusqlite::Connection) -> u64) -> u64 {
        once(c)
    }
    let t0 = Instant::now();
    let n = measured_sqlite(&c, &once);
    println!("sqlite {q}: {warm} per run, {n}, {:.3} s", t0.elapsed().as_secs_f64());
}

fn main() {
    let dir = std::path::PathBuf::from(arg("--dir").expect("--dir DIR"));
    if flag("--sqlite") {
        sqlite_main(&dir);
        return;
    }
    let mut cfg = engine::InstanceConfig::on_disk(&dir);
    cfg.sa_password = Some(PASSWORD.into());
    let inst = engine::Instance::start(cfg).expect("start");
    let mut s = inst.open_session("sa", PASSWORD, None).expect("login");
    if flag("--setup") {
        let rows: u64 = arg("--rows").and_then(|v| v.parse().ok()).unwrap_or(200_000);
        let join_rows: u64 = arg("--join-rows").and_then(|v| v.parse().ok()).unwrap_or(100_000).min(rows);
        let t0 = Instant::now();
        setup(&mut s, rows, join_rows);
        println!("setup: {rows} rows, join of {join_rows}, {:.1} s", t0.elapsed().as_secs_f64());
    }
    if let Some(sql) = arg("--sql") {
        run(&mut s, "USE benchdb");
        let mut c = sql::results::CollectSink::default();
        s.execute_batch(&sql, &mut c);
        println!("{c:?}");
    }
    if let Some(q) = arg("--query") {
        run(&mut s, "USE benchdb");
        let iters: u64 = arg("--iters").and_then(|v| v.parse().ok()).unwrap_or(1);
        WARMING.store(true, std::sync::atomic::Ordering::Relaxed);
        let warm = once(&mut s, &q);
        WARMING.store(false, std::sync::atomic::Ordering::Relaxed);
        let t0 = Instant::now();
        let n = measured(&mut s, &q, iters);
        let secs = t0.elapsed().as_secs_f64();
        println!("{q}: {warm} per run, {n} in {iters} runs, {:.3} s per run", secs / iters as f64);
    }
    drop(s);
    inst.shutdown().expect("shutdown");
}
