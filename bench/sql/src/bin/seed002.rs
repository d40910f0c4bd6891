//! bench/sql seed002: the delayed-durability article's workload (seeds/002) in process.
//!
//! `dbo.TheTable (TheID int IDENTITY PRIMARY KEY, TheDate datetime DEFAULT
//! CURRENT_TIMESTAMP, RowGuid uniqueidentifier DEFAULT NEWID())`, filled by
//! `dbo.AddSomeData` (BEGIN TRAN; INSERT ... SELECT TOP (1000) sysdatetime() FROM a
//! 1000-row table; COMMIT) and emptied by `dbo.DeleteSomeData` (BEGIN TRAN; DELETE TOP
//! (1000); COMMIT), run by N sessions at once on one embedded instance, on disk, in a
//! database with DELAYED_DURABILITY DISABLED (durable commits) and one with FORCED.
//! Prints inserted and deleted rows/s for each session count.
//!
//! Usage: seed002 [--rows N] [--sessions 1,2,8,16] [--dd off|on|both] [--dir DIR] [--insert-only] [--waits]
//!                [--source all_columns|numbers] [--schedulers N]
//! `--schedulers`: how many session workers run at once (default: one per CPU; 0: all).
//! `--source`: the 1000 rows AddSomeData selects come from `sys.all_columns`, as the
//! article has it (the default), or from a 1000-row user table `dbo.Numbers`.
//! `--rows` is the total per measurement (split evenly over the sessions, rounded to
//! whole 1000-row iterations).

/// The allocator the `mesquite` binary runs on (docs/architecture.md, "Memory allocator").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::{Arc, Barrier};
use std::time::Instant;

use sql::results::CollectSink;
use types::Value;

const PASSWORD: &str = "bench-Password-1";

fn run(s: &mut engine::Session, sql: &str) {
    let mut c = CollectSink::default();
    s.execute_batch(sql, &mut c);
    let errors = c.errors();
    if !errors.is_empty() {
        panic!("{}: {:?}", &sql[..sql.len().min(80)], errors);
    }
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn setup(s: &mut engine::Session, db: &str, delayed: bool, source: &str) {
    run(s, &format!("CREATE DATABASE {db}"));
    if delayed {
        run(s, &format!("ALTER DATABASE {db} SET DELAYED_DURABILITY = FORCED"));
    }
    run(s, &format!("USE {db}"));
    run(
        s,
        "CREATE TABLE dbo.TheTable (TheID int IDENTITY(1,1) PRIMARY KEY, \
         TheDate datetime NOT NULL DEFAULT CURRENT_TIMESTAMP, \
         RowGuid uniqueidentifier NOT NULL DEFAULT NEWID())",
    );
    run(s, "CREATE TABLE dbo.Numbers (n int PRIMARY KEY)");
    let values: Vec<String> = (1..=1000).map(|i| format!("({i})")).collect();
    run(s, &format!("INSERT dbo.Numbers (n) VALUES {}", values.join(",")));
    run(
        s,
        "CREATE PROCEDURE dbo.AddSomeData @Iterations int = 1000 AS
         BEGIN
           SET NOCOUNT ON; DECLARE @i int = 1;
           WHILE @i <= @Iterations
           BEGIN
             BEGIN TRANSACTION;
             INSERT dbo.TheTable(TheDate) SELECT TOP (1000) sysdatetime() FROM SOURCE AS s;
             COMMIT TRANSACTION;
             SET @i += 1;
           END
         END"
        .replace("SOURCE", source)
        .as_str(),
    );
    run(
        s,
        "CREATE PROCEDURE dbo.DeleteSomeData @Iterations int = 1000 AS
         BEGIN
           SET NOCOUNT ON; DECLARE @i int = 1;
           WHILE @i <= @Iterations
           BEGIN
             BEGIN TRANSACTION;
             DELETE TOP (1000) dbo.TheTable;
             COMMIT TRANSACTION;
             SET @i += 1;
           END
         END",
    );
}

/// The measured part, a function of its own so that profilers can single it out
/// (`valgrind --tool=callgrind --toggle-collect='*workload*'`).
#[inline(never)]
fn workload(s: &mut engine::Session, sql: &str) {
    run(s, sql);
}

/// Runs `proc` with `iterations` in each of `n` sessions at once; returns seconds.
fn concurrent(inst: &Arc<engine::Instance>, db: &str, n: usize, proc_: &str, iterations: u64) -> f64 {
    let barrier = Arc::new(Barrier::new(n + 1));
    let mut handles = Vec::new();
    for _ in 0..n {
        let inst = inst.clone();
        let barrier = barrier.clone();
        let db = db.to_string();
        let proc_ = proc_.to_string();
        handles.push(std::thread::spawn(move || {
            let mut s = inst.open_session("sa", PASSWORD, Some(&db)).expect("login");
            barrier.wait();
            workload(&mut s, &format!("EXEC dbo.{proc_} @Iterations = {iterations}"));
        }));
    }
    barrier.wait();
    let t0 = Instant::now();
    for h in handles {
        h.join().expect("session thread");
    }
    t0.elapsed().as_secs_f64()
}

/// Prints a query's rows (diagnostics: `--waits`).
fn print_rows(s: &mut engine::Session, sql: &str) {
    let mut c = CollectSink::default();
    s.execute_batch(sql, &mut c);
    for (_, rows) in c.result_sets() {
        for r in rows {
            let cells: Vec<String> = r.iter().map(|v| v.to_string()).collect();
            println!("  {}", cells.join("  "));
        }
    }
}

/// Rows in the table (after the delete phase: 0 when every DELETE TOP deleted what it
/// reported).
fn count(s: &mut engine::Session, db: &str) -> u64 {
    let mut c = CollectSink::default();
    s.execute_batch(&format!("SELECT COUNT(*) FROM {db}.dbo.TheTable"), &mut c);
    match c.result_sets().first().and_then(|(_, rows)| rows.first()).and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n as u64,
        _ => 0,
    }
}

fn main() {
    let rows: u64 = arg("--rows").and_then(|v| v.parse().ok()).unwrap_or(200_000);
    let sessions: Vec<usize> = arg("--sessions")
        .unwrap_or_else(|| "1,2,8,16".into())
        .split(',')
        .filter_map(|s| s.trim().parse().ok())
        .collect();
    let dd = arg("--dd").unwrap_or_else(|| "both".into());
    let source = match arg("--source").as_deref() {
        Some("numbers") => "dbo.Numbers",
        _ => "sys.all_columns",
    };
    let modes: Vec<bool> = match dd.as_str() {
        "off" => vec![false],
        "on" => vec![true],
        _ => vec![false, true],
    };
    let base = match arg("--dir") {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir().join(format!("mesquite-seed002-{}", std::process::id())),
    };
    std::fs::create_dir_all(&base).expect("dir");
    let mut cfg = engine::InstanceConfig::on_disk(&base);
    cfg.sa_password = Some(PASSWORD.into());
    cfg.schedulers = arg("--schedulers").and_then(|v| v.parse().ok());
    let inst = engine::Instance::start(cfg).expect("start");
    let mut admin = inst.open_session("sa", PASSWORD, None).expect("login");
    println!("seed002: {rows} rows inserted then deleted per measurement, 1000 rows per transaction (from {source}), on disk");
    println!("{:<26} {:>8} {:>14} {:>14}", "database", "sessions", "insert rows/s", "delete rows/s");
    for &delayed in &modes {
        let db = if delayed { "DDTest_On" } else { "DDTest_Off" };
        setup(&mut admin, db, delayed, source);
        run(&mut admin, "USE master");
        for &n in &sessions {
            let iterations = (rows / 1000 / n as u64).max(1);
            let total = (iterations * 1000 * n as u64) as f64;
            let ins = concurrent(&inst, db, n, "AddSomeData", iterations);
            if std::env::args().any(|a| a == "--insert-only") {
                println!("{n:>35} {:>14.0}", total / ins);
                continue;
            }
            let del = concurrent(&inst, db, n, "DeleteSomeData", iterations);
            let label = if delayed { "DELAYED_DURABILITY=FORCED" } else { "durable" };
            let left = count(&mut admin, db);
            println!(
                "{label:<26} {n:>8} {:>14.0} {:>14.0}{}",
                total / ins,
                total / del,
                if left == 0 {
                    String::new()
                } else {
                    format!("   ({left} rows left: deletes reported rows they did not delete)")
                }
            );
            if left != 0 {
                run(&mut admin, &format!("DELETE {db}.dbo.TheTable"));
            }
        }
    }
    if std::env::args().any(|a| a == "--waits") {
        print_rows(
            &mut admin,
            "SELECT TOP (12) wait_type, waiting_tasks_count, wait_time_ms FROM sys.dm_os_wait_stats \
             WHERE waiting_tasks_count > 0 ORDER BY wait_time_ms DESC",
        );
        print_rows(
            &mut admin,
            "SELECT counter_name, cntr_value FROM sys.dm_os_performance_counters \
             WHERE counter_name LIKE 'Page Splits%'",
        );
    }
    drop(admin);
    inst.shutdown().expect("shutdown");
    if arg("--dir").is_none() {
        let _ = std::fs::remove_dir_all(&base);
    }
}
