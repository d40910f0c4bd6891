//! `mesquite stress` against a real `mesquite serve` (the built binary, on a free port with
//! a fresh data directory): a durable insert workload from four threads, read back through
//! `tds::client`, and a batch that fails every time.

use std::process::{Command, Output};

use stress::json::{self, Json};
use tds::client::{Client, ClientConfig, ClientError};

mod common;

use common::{Server, PASSWORD};

/// `mesquite stress` against the server.
fn stress(server: &Server, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mesquite"))
        .arg("stress")
        .args(["-S", &format!("127.0.0.1,{}", server.port), "-U", "sa", "-P", PASSWORD, "--progress", "none"])
        .args(args)
        .output()
        .expect("run mesquite stress")
}

fn num(j: &Json, key: &str) -> u64 {
    j.get(key).and_then(Json::as_u64).unwrap_or_else(|| panic!("{key} in {j:?}"))
}

/// Four threads of 25 durable one-row transactions: every insert lands, each thread has its
/// own session, and the sessions waited for the log flush (WRITELOG).
#[test]
fn inserts_from_four_threads() {
    let server = Server::start("inserts");
    let mut c = Client::connect(&server.config()).unwrap();
    let r = c.batch("CREATE TABLE dbo.stress_t (id int IDENTITY PRIMARY KEY, v varchar(20) NOT NULL)").unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);

    let out = stress(
        &server,
        &["-n", "4", "-i", "25", "-Q", "BEGIN TRAN; INSERT INTO dbo.stress_t (v) VALUES ('x'); COMMIT;", "--json", "-"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let j = json::parse(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(num(&j, "threads"), 4);
    assert_eq!(num(&j, "executions"), 100);
    assert_eq!(num(&j, "errors"), 0, "{stdout}");
    assert_eq!(num(&j, "rows_affected"), 100);
    let per = j.get("per_thread").and_then(Json::as_array).unwrap();
    let mut sessions: Vec<u64> = per.iter().map(|t| num(t, "session_id")).collect();
    sessions.sort();
    sessions.dedup();
    assert_eq!(sessions.len(), 4, "{sessions:?}");
    assert!(!sessions.contains(&u64::from(c.spid() as u32)), "the setup session is not a stress session");
    let waits = j.get("waits").and_then(Json::as_array).expect("waits");
    let writelog = waits
        .iter()
        .find(|w| w.get("wait_type").and_then(Json::as_str) == Some("WRITELOG"))
        .unwrap_or_else(|| panic!("no WRITELOG in {waits:?}"));
    assert!(num(writelog, "waiting_tasks_count") > 0);

    let r = c.batch("SELECT COUNT(*) FROM dbo.stress_t").unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.result_sets[0].rows[0][0], types::Value::Int(100));
}

/// A batch that always fails: the errors are reported (Msg 8134 with its line), the run
/// completes and exits 0, or 2 with --fail-on-error; the table names the errors.
#[test]
fn failing_batch_is_reported() {
    let server = Server::start("errors");
    let out = stress(&server, &["-n", "2", "-i", "5", "-Q", "DECLARE @z int = 0;\nSELECT 1 / @z;", "--json", "-"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", out.status);
    let j = json::parse(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(num(&j, "executions"), 10);
    assert_eq!(num(&j, "errors"), 10);
    let first = j.get("first_errors").and_then(Json::as_array).unwrap();
    assert_eq!(first.len(), 6, "three per thread");
    let msg = first[0].get("message").and_then(Json::as_str).unwrap();
    assert!(msg.starts_with("Msg 8134, Level 16,"), "{msg}");
    assert!(msg.contains("Line 2: Divide by zero error encountered."), "{msg}");

    let out = stress(&server, &["-i", "3", "-Q", "SELECT 1 / 0", "--fail-on-error"]);
    assert_eq!(out.status.code(), Some(2));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("Errors:                 3"), "{table}");
    assert!(table.contains("First errors:\n  thread 1: Msg 8134"), "{table}");
}

/// A wrong password fails the run before any iteration: exit 1, the login error on stderr.
#[test]
fn failed_login_fails_the_run() {
    let server = Server::start("login");
    let out = Command::new(env!("CARGO_BIN_EXE_mesquite"))
        .args(["stress", "-S", &format!("127.0.0.1,{}", server.port), "-P", "wrong", "-n", "3", "-Q", "SELECT 1"])
        .args(["--progress", "none"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot connect") && err.contains("18456"), "{err}");
    assert!(out.stdout.is_empty());
    match Client::connect(&ClientConfig::new("127.0.0.1", server.port, "sa", "wrong")) {
        Err(ClientError::Login(m)) => assert_eq!(m.number, 18456),
        other => panic!("{other:?}"),
    }
}

/// The client against the engine: several result sets, row counts, an error with its line
/// inside the batch, the database from ENVCHANGE, and a large result streamed row by row.
#[test]
fn client_against_the_engine() {
    let server = Server::start("client");
    let mut c = Client::connect(&server.config()).unwrap();
    assert!(c.spid() > 0);
    assert_eq!(c.database(), "master");
    let r = c
        .batch(
            "CREATE TABLE dbo.t (a int, b varchar(10));
             INSERT INTO dbo.t VALUES (1, 'one'), (2, NULL);
             SELECT a, b FROM dbo.t ORDER BY a;
             SELECT 1 / 0;
             SELECT COUNT(*) AS n FROM dbo.t;",
        )
        .unwrap();
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert_eq!((r.errors[0].number, r.errors[0].line), (8134, 4));
    let sets: Vec<&tds::client::ResultSet> = r.result_sets.iter().filter(|s| !s.rows.is_empty()).collect();
    assert_eq!(sets[0].columns, ["a", "b"]);
    assert_eq!(sets[0].rows[1], [types::Value::Int(2), types::Value::Null]);
    assert_eq!(sets.last().unwrap().columns, ["n"]);
    assert!(r.row_counts.contains(&2), "{:?}", r.row_counts);

    c.batch("CREATE DATABASE streamdb").unwrap();
    let r = c.batch("USE streamdb").unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(c.database(), "streamdb");

    // 2^16 rows from a cross join, counted as they arrive.
    c.batch("CREATE TABLE d (i int); INSERT INTO d VALUES (0),(1),(2),(3),(4),(5),(6),(7)").unwrap();
    let mut rows = 0u64;
    let r = c
        .batch_rows(
            "SELECT a.i, b.i, 'row' FROM d a, d b, d c, d e, d f CROSS JOIN (VALUES (1),(2)) x(v)",
            &mut |row| {
                assert_eq!(row.len(), 3);
                rows += 1;
            },
        )
        .unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(rows, 1 << 16);
    assert!(r.result_sets[0].rows.is_empty());
}

/// A 1,000-branch UNION ALL (go-mssqldb's own suite sends one) runs on a connection
/// thread: it recursed past a 2 MB stack in debug builds, and a stack overflow aborts the
/// whole server.
#[test]
fn a_deep_union_does_not_overflow_a_connection_thread() {
    let server = Server::start("union");
    let mut c = Client::connect(&server.config()).unwrap();
    let query = vec!["SELECT 1"; 1000].join(" UNION ALL ");
    let r = c.batch(&query).unwrap();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.result_sets.iter().map(|s| s.rows.len()).sum::<usize>(), 1000);
    // The server is still there for the next connection.
    let mut again = Client::connect(&server.config()).unwrap();
    assert!(again.batch("SELECT 1").unwrap().errors.is_empty());
}
