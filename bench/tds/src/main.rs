//! TDS beside PostgreSQL's wire protocol: Mesquite (`mesquite serve`, release build) and a
//! private PostgreSQL cluster, started by this program on loopback in one run on one
//! machine, driven by Rust clients of the same shape (blocking std sockets, one thread per
//! connection: `tds::client` and `stress::pg`) through the same runner (`stress`).
//!
//! What it measures:
//! 1. **Round trips** from 1 connection: `SELECT 1` as fast as one client can send it, for
//!    S seconds. Reported: round trips per second, the mean latency and the server's CPU
//!    time per round trip (user+system from /proc/<pid>/stat over the measured pass).
//! 2. The same from **16 connections**, all released together (16 threads).
//! 3. **Streaming** an N-row result (default 1,000,000): `SELECT id, name, ts` over a
//!    table of (int primary key, varchar(20), datetime2 / timestamp) loaded in the setup,
//!    read row by row without keeping rows (`Client::batch_rows`, `PgConnection::query_rows`).
//!    The TDS client decodes every value into `types::Value`; the PostgreSQL client gets
//!    text, so its callback parses the id and copies the name into a String (what a
//!    driver does to hand values to an application), and both check the count and the
//!    sum of ids. One unmeasured pass first on each side (PostgreSQL sets hint bits on the
//!    first read of fresh rows; both fill their caches). Reported: seconds and rows/s.
//!
//! Ratios are Mesquite / PostgreSQL for throughput (higher is better; the target is
//! 1.0x or more). Also the peak resident memory of each server (VmHWM): Mesquite's one
//! process; PostgreSQL's largest process (the streaming backend) and the sum over the
//! cluster's processes (an upper bound: each counts the shared buffers it touched).
//!
//! Settings: the same memory on both sides (`--memory-mb`, default 256: Mesquite's buffer
//! pool, PostgreSQL's shared_buffers), TDS packets of 4096 bytes (SQL Server's and most
//! drivers' default; `--packet-size`), PostgreSQL's simple query protocol, no TLS on
//! either side.
//!
//! **Through drivers** (issue 5 names them): then, against the same two servers and the
//! same table, the Go program in `bench/tds/go` (`bench-tds-go`, built by `bash
//! bench/tds/run` next to this binary) makes the same three measures through go-mssqldb
//! (the version `tests/clients/go/go.mod` pins, through database/sql) and pgx v5, the same
//! language on both sides; it runs once per server and measure and prints JSON. Each
//! round trip is `SELECT 1` scanned into an int64; streaming scans every row into
//! (int64, string, time.Time) after one unmeasured pass. Query shapes: a plain text query
//! without parameters on both sides, each driver with its defaults: go-mssqldb's
//! `db.Query("SELECT 1")` sends a SQL batch, and through database/sql's pool every query
//! but a connection's first carries RESETCONNECTION; pgx's `conn.Query(ctx, "SELECT 1")`
//! uses the extended protocol (its default QueryExecModeCacheStatement: a statement
//! prepared once per connection, then Bind/Execute/Sync, binary results), also one round
//! trip per query. `--pgx-mode simple` (simple query protocol, text results) and
//! `--mssql-conn pinned` (one sql.Conn per goroutine: no reset) show what those choices
//! cost. The table adds the server's CPU time per round trip and per streaming pass: its
//! user+system time over the whole Go invocation (connects and warm-up included) divided
//! by every round trip or pass it served, from /proc/<pid>/stat (PostgreSQL: the
//! postmaster with its reaped children plus the live backends). Without the Go program
//! (`--go-skip REASON` from the run script, or no `bench-tds-go`) that part prints why it
//! was skipped, and `-cpuprofile FILE` on bench-tds-go itself writes a Go CPU profile.
//!
//! Usage: bench-tds [--quick] [--seconds S] [--rows N] [--stream-runs R] [--memory-mb M]
//!        [--packet-size B] [--mesquite PATH] [--go PATH | --go-skip REASON | --no-go]
//!        [--pgx-mode cache|simple] [--mssql-conn pool|pinned]
//! Defaults: 5 s per round-trip measure, 1,000,000 rows, one measured streaming pass per
//! side, the `mesquite` binary next to this one. `--quick`: 0.5 s and 100,000 rows.
//! `--stream-runs R`: R measured passes per side, alternating (the machine is noisy); every
//! pass is printed and the table shows the median. The CPU time of each pass is printed
//! too (server processes and the client's thread, from /proc schedstat), which varies
//! much less than elapsed time when other work shares the cores.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use stress::json::Json;
use stress::pg::{PgCluster, PgConnector};
use stress::server::MesquiteServer;
use stress::tds_conn::TdsConnector;
use stress::{Connector, Progress, StressOptions};
use tds::client::{message_text, Client, ClientConfig};
use types::Value;

const USAGE: &str = "usage: bench-tds [--quick] [--seconds S] [--rows N] [--stream-runs R] [--memory-mb M] \
     [--packet-size B] [--mesquite PATH] [--go PATH | --go-skip REASON | --no-go] [--pgx-mode cache|simple] \
     [--mssql-conn pool|pinned]";

struct Args {
    seconds: f64,
    rows: u64,
    stream_runs: usize,
    memory_mb: u64,
    packet_size: u32,
    mesquite: PathBuf,
    /// The Go driver program, or why it does not run.
    go: Result<PathBuf, String>,
    pgx_mode: String,
    mssql_conn: String,
}

fn parse_args() -> Result<Args, String> {
    let sibling = |name: &str| {
        std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(|d| d.join(name)))
            .unwrap_or_else(|| PathBuf::from(name))
    };
    let go = sibling("bench-tds-go");
    let go = if go.exists() { Ok(go) } else { Err(format!("no {} (bash bench/tds/run builds it)", go.display())) };
    let mut a = Args {
        seconds: 5.0,
        rows: 1_000_000,
        stream_runs: 1,
        memory_mb: 256,
        packet_size: 4096,
        mesquite: sibling("mesquite"),
        go,
        pgx_mode: "cache".to_string(),
        mssql_conn: "pool".to_string(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(k) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{k} needs a value\n{USAGE}"));
        let bad = |v: &str| format!("invalid value {v} for {k}\n{USAGE}");
        match k.as_str() {
            "--quick" => {
                a.seconds = 0.5;
                a.rows = 100_000;
            }
            "--seconds" => {
                let v = value()?;
                a.seconds = v.parse().ok().filter(|s: &f64| *s > 0.0 && s.is_finite()).ok_or_else(|| bad(&v))?;
            }
            "--rows" => {
                let v = value()?;
                a.rows = v.parse().ok().filter(|&n| n > 0 && n <= 2_000_000_000).ok_or_else(|| bad(&v))?;
            }
            "--stream-runs" => {
                let v = value()?;
                a.stream_runs = v.parse().ok().filter(|n| (1..=100).contains(n)).ok_or_else(|| bad(&v))?;
            }
            "--memory-mb" => {
                let v = value()?;
                a.memory_mb = v.parse().ok().filter(|&n| n >= 32).ok_or_else(|| bad(&v))?;
            }
            "--packet-size" => {
                let v = value()?;
                a.packet_size = v.parse().ok().filter(|n| (512..=32767).contains(n)).ok_or_else(|| bad(&v))?;
            }
            "--mesquite" => a.mesquite = PathBuf::from(value()?),
            "--go" => a.go = Ok(PathBuf::from(value()?)),
            "--go-skip" => a.go = Err(value()?),
            "--no-go" => a.go = Err("--no-go".to_string()),
            "--pgx-mode" => {
                let v = value()?;
                a.pgx_mode = ["cache", "simple"].contains(&v.as_str()).then_some(v.clone()).ok_or_else(|| bad(&v))?;
            }
            "--mssql-conn" => {
                let v = value()?;
                a.mssql_conn = ["pool", "pinned"].contains(&v.as_str()).then_some(v.clone()).ok_or_else(|| bad(&v))?;
            }
            "-h" | "--help" => return Err(USAGE.to_string()),
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    Ok(a)
}

fn tds_config(server: &MesquiteServer, packet_size: u32) -> ClientConfig {
    let mut c = server.config(None);
    c.packet_size = packet_size;
    c
}

// ------------------------------------------------------------------ memory

/// A process's peak resident set (VmHWM), in KiB.
fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The postmaster and its children (backends and background processes).
fn cluster_pids(cluster: &PgCluster) -> Vec<u32> {
    let Ok(text) = std::fs::read_to_string(cluster.data_dir().join("postmaster.pid")) else { return Vec::new() };
    let Some(master) = text.lines().next().and_then(|l| l.trim().parse::<u32>().ok()) else { return Vec::new() };
    let mut pids = vec![master];
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for e in dir.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { continue };
            // "pid (comm) state ppid ...": comm may hold spaces, so split after its ')'.
            let ppid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1));
            if ppid.and_then(|p| p.parse::<u32>().ok()) == Some(master) {
                pids.push(pid);
            }
        }
    }
    pids
}

/// CPU time a process's threads have run, from each thread's schedstat (nanoseconds).
fn process_cpu(pid: u32) -> Duration {
    let mut ns = 0u64;
    if let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for e in dir.flatten() {
            ns += schedstat_ns(&e.path().join("schedstat")).unwrap_or(0);
        }
    }
    Duration::from_nanos(ns)
}

/// CPU time of the PostgreSQL cluster's processes (the streaming backend and the rest).
fn cluster_cpu(cluster: &PgCluster) -> Duration {
    cluster_pids(cluster).into_iter().map(process_cpu).sum()
}

/// CPU time of the calling thread (the client: one thread streams).
fn thread_cpu() -> Duration {
    Duration::from_nanos(schedstat_ns(std::path::Path::new("/proc/thread-self/schedstat")).unwrap_or(0))
}

fn schedstat_ns(path: &std::path::Path) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.split_whitespace().next()?.parse().ok()
}

/// User+system CPU from /proc/<pid>/stat, in clock ticks (USER_HZ, 100 on Linux): the
/// process's own (every thread, also threads that have ended) and its reaped children's.
fn stat_ticks(pid: u32) -> Option<(u64, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after "(comm)": state is the first, utime the 12th, then stime, cutime, cstime.
    let f: Vec<u64> =
        s.rsplit_once(')')?.1.split_whitespace().skip(11).take(4).filter_map(|v| v.parse().ok()).collect();
    match f[..] {
        [ut, st, cut, cst] => Some((ut + st, cut + cst)),
        _ => None,
    }
}

fn ticks(t: u64) -> Duration {
    Duration::from_millis(t * 10)
}

/// Mesquite's CPU time so far, connections that have ended included.
fn mesquite_cpu_total(pid: Option<u32>) -> Duration {
    ticks(pid.and_then(stat_ticks).map_or(0, |(own, _)| own))
}

/// The PostgreSQL cluster's CPU time so far: the postmaster with its reaped children
/// (backends that have ended) and the live children.
fn cluster_cpu_total(cluster: &PgCluster) -> Duration {
    let mut total = 0;
    for (i, pid) in cluster_pids(cluster).into_iter().enumerate() {
        if let Some((own, reaped)) = stat_ticks(pid) {
            total += own + if i == 0 { reaped } else { 0 };
        }
    }
    ticks(total)
}

fn mib(kib: u64) -> String {
    format!("{:.0} MB", kib as f64 / 1024.0)
}

// ------------------------------------------------------------------ measures

/// Round trips per second from `threads` connections for `seconds`, after a short warm-up,
/// and the server's CPU time per round trip (`server_cpu`: its total so far; the measured
/// pass's connects included).
fn round_trips<C: Connector>(
    connector: &C,
    threads: usize,
    seconds: f64,
    server_cpu: &dyn Fn() -> Duration,
) -> Result<(f64, Duration), String> {
    let opts = StressOptions { threads, iterations: u64::MAX, batch: "SELECT 1".to_string(), progress: Progress::None };
    stress::run_limited(connector, &opts, Some(Duration::from_secs_f64((seconds / 10.0).min(0.5))))?;
    let c0 = server_cpu();
    let r = stress::run_limited(connector, &opts, Some(Duration::from_secs_f64(seconds)))?;
    let cpu = server_cpu().saturating_sub(c0);
    if r.errors() > 0 {
        let first = r.threads.iter().flat_map(|t| t.first_errors.first()).next().cloned().unwrap_or_default();
        return Err(format!("{}: {} errors in SELECT 1: {first}", connector.describe(), r.errors()));
    }
    Ok((r.iterations_per_sec(), cpu / r.executions().max(1) as u32))
}

/// Rows, sum of ids and total name length of a streamed result.
#[derive(Debug, Default, PartialEq, Eq, Clone, Copy)]
struct Checksum {
    rows: u64,
    id_sum: u64,
    name_len: u64,
}

fn expected(n: u64) -> (u64, u64) {
    (n, n * (n - 1) / 2)
}

const STREAM_TDS: &str = "SELECT id, name, ts FROM dbo.stream_t";
const STREAM_PG: &str = "SELECT id, name, ts FROM stream_t";

fn stream_mesquite(c: &mut Client) -> Result<(Checksum, Duration), String> {
    let mut sum = Checksum::default();
    let mut bad = 0u64;
    let t = Instant::now();
    let r = c
        .batch_rows(STREAM_TDS, &mut |row| {
            sum.rows += 1;
            match (row.first(), row.get(1), row.get(2)) {
                (Some(Value::Int(id)), Some(Value::String(name)), Some(Value::DateTime2 { .. })) => {
                    sum.id_sum += *id as u64;
                    sum.name_len += name.len() as u64;
                }
                _ => bad += 1,
            }
        })
        .map_err(|e| format!("mesquite: {e}"))?;
    let elapsed = t.elapsed();
    if let Some(e) = r.errors.first() {
        return Err(format!("mesquite: {}", message_text(e)));
    }
    if bad > 0 {
        return Err(format!("mesquite: {bad} rows of unexpected types"));
    }
    Ok((sum, elapsed))
}

fn stream_pg(c: &mut stress::pg::PgConnection) -> Result<(Checksum, Duration), String> {
    let mut sum = Checksum::default();
    let mut bad = 0u64;
    let t = Instant::now();
    c.query_rows(STREAM_PG, &mut |row| {
        sum.rows += 1;
        let id = row.first().copied().flatten().and_then(|b| std::str::from_utf8(b).ok()?.parse::<i64>().ok());
        let name = row.get(1).copied().flatten().and_then(|b| String::from_utf8(b.to_vec()).ok());
        match (id, name, row.get(2).copied().flatten()) {
            (Some(id), Some(name), Some(_ts)) => {
                sum.id_sum += id as u64;
                sum.name_len += name.len() as u64;
            }
            _ => bad += 1,
        }
    })
    .map_err(|e| format!("postgresql: {e}"))?;
    let elapsed = t.elapsed();
    if bad > 0 {
        return Err(format!("postgresql: {bad} rows of unexpected values"));
    }
    Ok((sum, elapsed))
}

fn check(side: &str, sum: Checksum, n: u64) -> Result<(), String> {
    let (rows, ids) = expected(n);
    if (sum.rows, sum.id_sum) != (rows, ids) {
        return Err(format!(
            "{side}: streamed {} rows with id sum {}, expected {rows} and {ids}",
            sum.rows, sum.id_sum
        ));
    }
    Ok(())
}

// ------------------------------------------------------------------ setup

fn tds_ok(c: &mut Client, sql: &str) -> Result<(), String> {
    let r = c.batch(sql).map_err(|e| format!("mesquite: {e}"))?;
    match r.errors.first() {
        Some(e) => Err(format!("mesquite: {}\n  in: {sql}", message_text(e))),
        None => Ok(()),
    }
}

/// The stream table with ids 0..n: 100,000-row INSERT ... SELECTs over a cross join of
/// digits, each its own transaction.
fn setup_mesquite(c: &mut Client, n: u64) -> Result<(), String> {
    tds_ok(
        c,
        "CREATE TABLE dbo.stream_t (id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL, ts datetime2 NOT NULL);
         CREATE TABLE dbo.digits (i int NOT NULL);
         INSERT INTO dbo.digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);",
    )?;
    let mut start = 0u64;
    while start < n {
        tds_ok(
            c,
            &format!(
                "INSERT INTO dbo.stream_t (id, name, ts)
                 SELECT id, 'name ' + CAST(id AS varchar(10)), DATEADD(second, id, CAST('2024-01-01' AS datetime2))
                 FROM (SELECT {start} + a.i + 10*b.i + 100*c.i + 1000*d.i + 10000*e.i AS id
                       FROM dbo.digits a CROSS JOIN dbo.digits b CROSS JOIN dbo.digits c
                            CROSS JOIN dbo.digits d CROSS JOIN dbo.digits e) x
                 WHERE id < {n}"
            ),
        )?;
        start += 100_000;
    }
    tds_ok(c, "CHECKPOINT")
}

fn setup_pg(c: &mut stress::pg::PgConnection, n: u64) -> Result<(), String> {
    // Separate queries: VACUUM cannot run inside the implicit transaction of a
    // multi-statement query.
    for sql in [
        "CREATE TABLE stream_t (id int NOT NULL PRIMARY KEY, name varchar(20) NOT NULL, ts timestamp NOT NULL)"
            .to_string(),
        format!(
            "INSERT INTO stream_t SELECT g, 'name ' || g, timestamp '2024-01-01' + g * interval '1 second' \
             FROM generate_series(0, {}) g",
            n - 1
        ),
        "VACUUM (ANALYZE) stream_t".to_string(),
        "CHECKPOINT".to_string(),
    ] {
        c.query(&sql).map_err(|e| format!("postgresql: {e}"))?;
    }
    Ok(())
}

// ------------------------------------------------------------------ report

fn thousands(x: f64) -> String {
    let n = x.round() as u64;
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The middle value (the upper one of an even count).
fn median(ts: &mut [Duration]) -> Duration {
    ts.sort();
    ts.get(ts.len() / 2).copied().unwrap_or_default()
}

fn row(name: &str, m: &str, p: &str, ratio: &str) {
    println!("{name:<34} {m:>16} {p:>16} {ratio:>10}");
}

fn ratio(m: f64, p: f64) -> String {
    if p > 0.0 {
        format!("{:.2}x", m / p)
    } else {
        "-".to_string()
    }
}

// ------------------------------------------------------------------ through drivers

/// One run of the Go program: its JSON and the server CPU time it cost.
struct GoRun {
    out: Json,
    server_cpu: Duration,
}

impl GoRun {
    fn num(&self, key: &str) -> f64 {
        self.out.get(key).and_then(Json::as_f64).unwrap_or(0.0)
    }

    fn list(&self, key: &str) -> Vec<f64> {
        self.out.get(key).and_then(Json::as_array).unwrap_or(&[]).iter().filter_map(Json::as_f64).collect()
    }
}

fn go_run(bin: &std::path::Path, args: &[String], server_cpu: &dyn Fn() -> Duration) -> Result<GoRun, String> {
    let c0 = server_cpu();
    let out = std::process::Command::new(bin)
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", bin.display()))?;
    let server_cpu = server_cpu().saturating_sub(c0);
    if !out.status.success() {
        return Err(format!("{} {}: {}", bin.display(), args.join(" "), String::from_utf8_lossy(&out.stderr).trim()));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let out = stress::json::parse(text.trim()).map_err(|e| format!("bench-tds-go printed {text:?}: {e}"))?;
    Ok(GoRun { out, server_cpu })
}

/// A URL query value: the password and names the run makes are letters, digits and '-',
/// but a space (in "packet size") is not.
fn url_escape(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The same three measures through go-mssqldb and pgx (see the module comment), as a
/// second table. Returns the ratios (1 connection, 16 connections, rows/s).
fn through_drivers(
    a: &Args,
    go: &std::path::Path,
    m_pid: Option<u32>,
    tds: &ClientConfig,
    cluster: &PgCluster,
) -> Result<[f64; 3], String> {
    let mssql_dsn = format!(
        "sqlserver://{}:{}@{}:{}?database=master&encrypt=disable&app+name=bench-tds-go&packet+size={}",
        url_escape(&tds.user),
        url_escape(&tds.password),
        tds.host,
        tds.port,
        a.packet_size
    );
    let pg_dsn = format!("postgres://postgres@{}:{}/postgres?sslmode=disable", cluster.host(), cluster.port());
    let m_cpu = || mesquite_cpu_total(m_pid);
    let p_cpu = || cluster_cpu_total(cluster);
    let run = |driver: &str, extra: Vec<String>| -> Result<GoRun, String> {
        let (dsn, cpu): (&str, &dyn Fn() -> Duration) =
            if driver == "mssql" { (&mssql_dsn, &m_cpu) } else { (&pg_dsn, &p_cpu) };
        let mut args: Vec<String> =
            ["-driver", driver, "-dsn", dsn, "-pgx-mode", &a.pgx_mode, "-mssql-conn", &a.mssql_conn]
                .iter()
                .map(|s| s.to_string())
                .collect();
        args.extend(extra);
        go_run(go, &args, cpu)
    };
    let rt = |conns: usize| {
        vec![
            "-measure".into(),
            "roundtrips".into(),
            "-conns".into(),
            conns.to_string(),
            "-seconds".into(),
            a.seconds.to_string(),
        ]
    };
    let stream = || {
        vec![
            "-measure".into(),
            "stream".into(),
            "-rows".into(),
            a.rows.to_string(),
            "-runs".into(),
            a.stream_runs.to_string(),
        ]
    };
    eprintln!("through drivers: round trips, 1 connection ...");
    let m1 = run("mssql", rt(1))?;
    let p1 = run("pgx", rt(1))?;
    eprintln!("through drivers: round trips, 16 connections ...");
    let m16 = run("mssql", rt(16))?;
    let p16 = run("pgx", rt(16))?;
    eprintln!("through drivers: streaming ...");
    let ms = run("mssql", stream())?;
    let ps = run("pgx", stream())?;
    let (m_rows, p_rows) = (ms.num("rows") as u64, ps.num("rows") as u64);
    let (ms_names, ps_names) = (ms.num("name_len"), ps.num("name_len"));
    if m_rows != a.rows || p_rows != a.rows || ms_names != ps_names {
        return Err(format!(
            "through drivers: streamed {m_rows} and {p_rows} rows (name lengths {ms_names} and {ps_names}), expected {}",
            a.rows
        ));
    }

    let name = |r: &GoRun| r.out.get("driver").and_then(Json::as_str).unwrap_or("?").to_string();
    println!(
        "\nthrough drivers ({} vs {}, {}), same servers and table",
        name(&m1),
        name(&p1),
        m1.out.get("go").and_then(Json::as_str).unwrap_or("go")
    );
    println!(
        "  go-mssqldb: {}; pgx: {}",
        if a.mssql_conn == "pool" {
            "db.Query through database/sql's pool (SQL batch, RESETCONNECTION on reuse)"
        } else {
            "one pinned sql.Conn per goroutine (SQL batch, no reset)"
        },
        if a.pgx_mode == "cache" {
            "conn.Query, default exec mode (extended protocol, cached statement, binary results)"
        } else {
            "conn.Query, simple query protocol (text results)"
        }
    );
    if a.stream_runs > 1 {
        let list = |r: &GoRun| r.list("passes_s").iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(" ");
        println!("  streaming passes, s: mesquite {}; postgresql {}", list(&ms), list(&ps));
    }
    let client_cpu = |r: &GoRun| r.list("client_cpu_s").iter().map(|t| format!("{t:.3}")).collect::<Vec<_>>().join(" ");
    println!("  streaming client CPU s: go-mssqldb {}; pgx {}", client_cpu(&ms), client_cpu(&ps));
    println!();
    row("measure", "mesquite", "postgresql", "ratio M/PG");
    // Server CPU per operation over the whole invocation: warm-up and connects included.
    let per_op = |r: &GoRun| r.server_cpu.as_secs_f64() * 1e6 / (r.num("ops") + r.num("warmup_ops")).max(1.0);
    let rt_rows = |label: &str, m: &GoRun, p: &GoRun| {
        let (mr, pr) = (m.num("per_sec"), p.num("per_sec"));
        row(label, &thousands(mr), &thousands(pr), &ratio(mr, pr));
        if m.num("conns") == 1.0 {
            row(
                "  mean latency",
                &format!("{:.1} us", 1e6 / mr.max(1e-9)),
                &format!("{:.1} us", 1e6 / pr.max(1e-9)),
                "",
            );
        }
        row("  server CPU per round trip", &format!("{:.1} us", per_op(m)), &format!("{:.1} us", per_op(p)), "");
        row(
            "  client CPU per round trip",
            &format!("{:.1} us", m.num("client_cpu_s") * 1e6 / m.num("ops").max(1.0)),
            &format!("{:.1} us", p.num("client_cpu_s") * 1e6 / p.num("ops").max(1.0)),
            "",
        );
        mr / pr.max(1e-9)
    };
    let r1 = rt_rows("round trips/s, 1 connection", &m1, &p1);
    let r16 = rt_rows("round trips/s, 16 connections", &m16, &p16);
    let median_s =
        |r: &GoRun| median(&mut r.list("passes_s").into_iter().map(Duration::from_secs_f64).collect::<Vec<_>>());
    let (mt, pt) = (median_s(&ms), median_s(&ps));
    row(
        &format!("stream {} rows, s{}", thousands(a.rows as f64), if a.stream_runs > 1 { " (median)" } else { "" }),
        &format!("{:.3}", mt.as_secs_f64()),
        &format!("{:.3}", pt.as_secs_f64()),
        "",
    );
    let (mr, pr) = (a.rows as f64 / mt.as_secs_f64().max(1e-9), a.rows as f64 / pt.as_secs_f64().max(1e-9));
    row("  rows/s", &thousands(mr), &thousands(pr), &ratio(mr, pr));
    // Every pass the server sent, the unmeasured one included.
    let per_pass = |r: &GoRun| r.server_cpu.as_secs_f64() / (a.stream_runs + 1) as f64;
    row("  server CPU per pass", &format!("{:.3} s", per_pass(&ms)), &format!("{:.3} s", per_pass(&ps)), "");
    Ok([r1, r16, mr / pr.max(1e-9)])
}

/// The targets for one table: each ratio at least 1.0x.
fn print_targets(table: &str, r: [f64; 3]) {
    let one = |name: &str, x: f64| format!("{name} {x:.2}x {}", if x >= 1.0 { "met" } else { "NOT met" });
    println!(
        "targets ({table}; Mesquite / PostgreSQL, higher is better, target >= 1.00x): {}; {}; {}",
        one("round trips 1 conn", r[0]),
        one("16 conns", r[1]),
        one("rows/s", r[2])
    );
}

fn main() {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(&args) {
        eprintln!("bench-tds: {e}");
        std::process::exit(1);
    }
}

fn run(a: &Args) -> Result<(), String> {
    println!(
        "bench/tds: Mesquite (TDS 7.4) beside PostgreSQL (protocol 3.0), one run; {} s per round-trip measure, {} rows streamed",
        a.seconds,
        thousands(a.rows as f64)
    );
    let mut mesquite = MesquiteServer::start(&a.mesquite, a.memory_mb, "bench-tds")?;
    let cluster = PgCluster::start_temp(&PgCluster::benchmark_settings(a.memory_mb)).map_err(|e| e.to_string())?;
    let pg_version = cluster.version().map_err(|e| e.to_string())?;
    let tds_connector = TdsConnector::new(tds_config(&mesquite, a.packet_size));
    let pg_connector: PgConnector = cluster.connector("postgres");

    let mut tds = Client::connect(&tds_connector.config).map_err(|e| format!("mesquite: {e}"))?;
    let mut pg = cluster.connect("postgres").map_err(|e| format!("postgresql: {e}"))?;
    let (_, v) = tds.server_version();
    println!("  mesquite {} (release build), reports SQL Server {}.{}", env!("CARGO_PKG_VERSION"), v[0], v[1]);
    println!("  {pg_version}");
    println!(
        "  {} MB of buffer pool / shared_buffers each; TDS packet size {}; {} cores",
        a.memory_mb,
        tds.packet_size(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0)
    );

    let t = Instant::now();
    setup_mesquite(&mut tds, a.rows)?;
    let m_setup = t.elapsed();
    let t = Instant::now();
    setup_pg(&mut pg, a.rows)?;
    let p_setup = t.elapsed();
    println!(
        "  setup: {} rows loaded in {:.1} s (mesquite), {:.1} s (postgresql)",
        thousands(a.rows as f64),
        m_setup.as_secs_f64(),
        p_setup.as_secs_f64()
    );

    eprintln!("round trips, 1 connection ...");
    let m_pid = mesquite.pid();
    let m_cpu_total = || mesquite_cpu_total(m_pid);
    let p_cpu_total = || cluster_cpu_total(&cluster);
    let (m1, m1_cpu) = round_trips(&tds_connector, 1, a.seconds, &m_cpu_total)?;
    let (p1, p1_cpu) = round_trips(&pg_connector, 1, a.seconds, &p_cpu_total)?;
    eprintln!("round trips, 16 connections ...");
    let (m16, m16_cpu) = round_trips(&tds_connector, 16, a.seconds, &m_cpu_total)?;
    let (p16, p16_cpu) = round_trips(&pg_connector, 16, a.seconds, &p_cpu_total)?;

    eprintln!("streaming ...");
    // Unmeasured passes first, then the measured ones, alternating.
    stream_mesquite(&mut tds)?;
    stream_pg(&mut pg)?;
    let (mut m_times, mut p_times) = (Vec::new(), Vec::new());
    // CPU time per pass (server, client): on a machine shared with other work, elapsed
    // time moves with the load but CPU time much less.
    let (mut m_cpu, mut p_cpu) = (Vec::new(), Vec::new());
    for _ in 0..a.stream_runs {
        let (s0, c0) = (m_pid.map(process_cpu).unwrap_or_default(), thread_cpu());
        let (ms, m_time) = stream_mesquite(&mut tds)?;
        m_cpu.push((m_pid.map(process_cpu).unwrap_or_default().saturating_sub(s0), thread_cpu().saturating_sub(c0)));
        check("mesquite", ms, a.rows)?;
        let (s0, c0) = (cluster_cpu(&cluster), thread_cpu());
        let (ps, p_time) = stream_pg(&mut pg)?;
        p_cpu.push((cluster_cpu(&cluster).saturating_sub(s0), thread_cpu().saturating_sub(c0)));
        check("postgresql", ps, a.rows)?;
        if ms.name_len != ps.name_len {
            return Err(format!("name lengths differ: mesquite {} postgresql {}", ms.name_len, ps.name_len));
        }
        m_times.push(m_time);
        p_times.push(p_time);
    }
    if a.stream_runs > 1 {
        let list = |ts: &[Duration]| ts.iter().map(|t| format!("{:.3}", t.as_secs_f64())).collect::<Vec<_>>().join(" ");
        println!("  streaming passes, s: mesquite {}; postgresql {}", list(&m_times), list(&p_times));
    }
    let cpu = |ts: &[(Duration, Duration)]| {
        ts.iter().map(|(s, c)| format!("{:.3}+{:.3}", s.as_secs_f64(), c.as_secs_f64())).collect::<Vec<_>>().join(" ")
    };
    println!("  streaming CPU s (server+client): mesquite {}; postgresql {}", cpu(&m_cpu), cpu(&p_cpu));
    let (m_time, p_time) = (median(&mut m_times), median(&mut p_times));

    // Peak memory while the streaming sessions are still open.
    let m_rss = mesquite.pid().and_then(vm_hwm_kib);
    let pg_rss: Vec<u64> = cluster_pids(&cluster).into_iter().filter_map(vm_hwm_kib).collect();
    drop(tds);
    drop(pg);

    println!();
    row("measure", "mesquite", "postgresql", "ratio M/PG");
    row("round trips/s, 1 connection", &thousands(m1), &thousands(p1), &ratio(m1, p1));
    row("  mean latency", &format!("{:.1} us", 1e6 / m1.max(1e-9)), &format!("{:.1} us", 1e6 / p1.max(1e-9)), "");
    let us = |d: Duration| format!("{:.1} us", d.as_secs_f64() * 1e6);
    row("  server CPU per round trip", &us(m1_cpu), &us(p1_cpu), "");
    row("round trips/s, 16 connections", &thousands(m16), &thousands(p16), &ratio(m16, p16));
    row("  server CPU per round trip", &us(m16_cpu), &us(p16_cpu), "");
    let m_rows = a.rows as f64 / m_time.as_secs_f64().max(1e-9);
    let p_rows = a.rows as f64 / p_time.as_secs_f64().max(1e-9);
    row(
        &format!("stream {} rows, s{}", thousands(a.rows as f64), if a.stream_runs > 1 { " (median)" } else { "" }),
        &format!("{:.3}", m_time.as_secs_f64()),
        &format!("{:.3}", p_time.as_secs_f64()),
        "",
    );
    row("  rows/s", &thousands(m_rows), &thousands(p_rows), &ratio(m_rows, p_rows));
    let p_max = pg_rss.iter().copied().max();
    row(
        "peak RSS (VmHWM)",
        &m_rss.map(mib).unwrap_or_else(|| "-".into()),
        &p_max.map(|k| format!("{} max", mib(k))).unwrap_or_else(|| "-".into()),
        "",
    );
    if !pg_rss.is_empty() {
        row("", "", &format!("{} sum/{}", mib(pg_rss.iter().sum()), pg_rss.len()), "");
    }
    println!();
    print_targets("own Rust clients", [m1 / p1.max(1e-9), m16 / p16.max(1e-9), m_rows / p_rows.max(1e-9)]);

    let driven = match &a.go {
        Ok(go) => through_drivers(a, go, m_pid, &tds_connector.config, &cluster).map(Some),
        Err(why) => {
            println!("\nthrough drivers (go-mssqldb vs pgx): skipped: {why}");
            Ok(None)
        }
    };
    mesquite.stop();
    if let Some(r) = driven? {
        println!();
        print_targets("through go-mssqldb and pgx", r);
    }
    Ok(())
}
