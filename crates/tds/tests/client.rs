//! `tds::client` against the crate's own server over TCP, with a fake backend: login and
//! refused logins, multi-result batches, errors with their number and line, row counts,
//! transactions, RPC with OUTPUT parameters, a result streamed in many packets, and a
//! server that requires encryption.
//!
//! (The client against the real engine is tested by `mesquite stress`'s tests.)

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use sql::request::RpcCall;
use sql::results::{ColumnInfo, Done, DoneKind, EnvChange, Message, ResultSink, SinkError};
use tds::client::{message_text, Client, ClientConfig, ClientError, RpcParam};
use tds::{Backend, BackendSession, LoginRequest, ServerConfig};
use types::{Length, SqlError, SqlType, Value};

struct Mock {
    next_spid: AtomicUsize,
}

struct MockSession {
    spid: i32,
    db: String,
    tran: u64,
    cancel: Arc<AtomicBool>,
}

impl Backend for Mock {
    type Session = MockSession;
    fn login(&self, req: &LoginRequest) -> Result<MockSession, SqlError> {
        if req.password != "secret" {
            return Err(SqlError::new(18456, 14, 1, format!("Login failed for user '{}'.", req.user)));
        }
        Ok(MockSession {
            spid: 51 + self.next_spid.fetch_add(1, Ordering::SeqCst) as i32,
            db: req.database.clone().unwrap_or_else(|| "master".into()),
            tran: 0,
            cancel: Arc::new(AtomicBool::new(false)),
        })
    }
    fn server_name(&self) -> String {
        "MOCK".into()
    }
}

fn done(rows: Option<u64>, error: bool) -> Done {
    Done { kind: DoneKind::Statement, row_count: rows, error, in_xact: false }
}

impl MockSession {
    /// Statements separated by ';': `rows N` (id int, name nvarchar(40) NULL on odd
    /// ids, big varchar(max)), `insert N`, `error`, `print text`, `use db`, `begin`,
    /// `commit`.
    fn run(&mut self, stmt: &str, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        match words.as_slice() {
            ["rows", n] => {
                let n: i64 = n.parse().unwrap_or(0);
                sink.columns(&[
                    ColumnInfo::new("id", SqlType::BigInt, false),
                    ColumnInfo::new("name", SqlType::NVarChar { len: Length::Bounded(40) }, true),
                    ColumnInfo::new("note", SqlType::VarChar { len: Length::Max }, true),
                ])?;
                for i in 0..n {
                    let name = if i % 2 == 1 { Value::Null } else { Value::String(format!("name {i}")) };
                    sink.row(&[Value::BigInt(i), name, Value::String("x".repeat((i % 50) as usize))])?;
                }
                sink.done(done(Some(n as u64), false))
            }
            ["insert", n] => sink.done(done(Some(n.parse().unwrap_or(0)), false)),
            ["error"] => {
                let e = SqlError::new(8134, 16, 1, "Divide by zero error encountered.").at_line(3);
                sink.message(&Message { error: e, info: false })?;
                sink.done(done(None, true))
            }
            ["print", rest @ ..] => {
                sink.message(&Message { error: SqlError::new(0, 0, 1, rest.join(" ")).at_line(1), info: true })?;
                sink.done(done(None, false))
            }
            ["use", db] => {
                let old = std::mem::replace(&mut self.db, db.to_string());
                sink.env_change(&EnvChange::Database { old, new: self.db.clone() })?;
                sink.done(done(None, false))
            }
            ["begin"] => {
                self.tran = 0x0102_0304_0506_0708;
                sink.env_change(&EnvChange::BeginTransaction { descriptor: self.tran })?;
                sink.done(done(None, false))
            }
            ["commit"] => {
                sink.env_change(&EnvChange::CommitTransaction { descriptor: self.tran })?;
                self.tran = 0;
                sink.done(done(None, false))
            }
            [] => Ok(()),
            _ => {
                let e = SqlError::new(2812, 16, 62, format!("Could not find stored procedure '{}'.", words[0]));
                sink.message(&Message { error: e.at_line(1), info: false })?;
                sink.done(done(None, true))
            }
        }
    }
}

impl BackendSession for MockSession {
    fn database_name(&self) -> String {
        self.db.clone()
    }
    fn spid(&self) -> i32 {
        self.spid
    }
    fn execute_batch(&mut self, sql: &str, sink: &mut dyn ResultSink) {
        for stmt in sql.split(';') {
            if self.run(stmt, sink).is_err() {
                return;
            }
        }
    }
    fn execute_rpc(&mut self, call: &RpcCall, sink: &mut dyn ResultSink) {
        let _ = common::echo_rpc(call, sink);
    }
    fn cancel_handle(&self) -> Arc<AtomicBool> {
        self.cancel.clone()
    }
    fn transaction_descriptor(&self) -> u64 {
        self.tran
    }
}

/// A server on its own runtime; it stops when dropped.
struct TestServer {
    addr: SocketAddr,
    cert_dir: PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
    _rt: tokio::runtime::Runtime,
}

fn cert_dir() -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    std::env::temp_dir().join(format!(
        "mesquite-tds-client-test-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ))
}

fn start(require_encryption: bool) -> TestServer {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
    let addr = listener.local_addr().unwrap();
    let certs = cert_dir();
    let mut config = ServerConfig::new(addr, certs.clone());
    config.workers = 4;
    config.require_encryption = require_encryption;
    let backend = Arc::new(Mock { next_spid: AtomicUsize::new(0) });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    rt.spawn(async move {
        let _ = tds::serve_on(listener, config, backend, async {
            let _ = stopped.await;
        })
        .await;
    });
    TestServer { addr, cert_dir: certs, _stop: stop, _rt: rt }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.cert_dir);
    }
}

fn config(s: &TestServer, password: &str) -> ClientConfig {
    ClientConfig::new("127.0.0.1", s.addr.port(), "app", password)
}

#[test]
fn login_reports_spid_and_database() {
    let s = start(false);
    let mut cfg = config(&s, "secret");
    cfg.database = Some("appdb".into());
    let a = Client::connect(&cfg).unwrap();
    let b = Client::connect(&cfg).unwrap();
    assert!(a.spid() >= 51, "{}", a.spid());
    assert_ne!(a.spid(), b.spid());
    assert_eq!(a.database(), "appdb");
    assert_eq!(a.packet_size(), 4096);
    let (tds, version) = a.server_version();
    assert_eq!(tds, tds::login::TDS_7_4);
    assert_eq!(version[0], 16);
}

#[test]
fn refused_login_is_a_login_error() {
    let s = start(false);
    match Client::connect(&config(&s, "wrong")) {
        Err(ClientError::Login(m)) => {
            assert_eq!(m.number, 18456);
            assert_eq!(m.class, 14);
            assert_eq!(m.message, "Login failed for user 'app'.");
        }
        other => panic!("expected a login error, got {other:?}"),
    }
}

#[test]
fn required_encryption_is_a_clear_error() {
    let s = start(true);
    let e = Client::connect(&config(&s, "secret")).unwrap_err();
    assert!(matches!(e, ClientError::EncryptionRequired), "{e:?}");
    assert!(e.to_string().contains("requires encryption"), "{e}");
}

#[test]
fn refused_connection_is_an_io_error() {
    // A port nothing listens on: bind one, note it, close it.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let e = Client::connect(&ClientConfig::new("127.0.0.1", port, "sa", "x")).unwrap_err();
    assert!(matches!(e, ClientError::Io(_)), "{e:?}");
}

#[test]
fn batch_with_results_errors_infos_and_counts() {
    let s = start(false);
    let mut c = Client::connect(&config(&s, "secret")).unwrap();
    let r = c.batch("rows 3; insert 5; error; print hello there; rows 0").unwrap();
    assert_eq!(r.result_sets.len(), 2);
    assert_eq!(r.result_sets[0].columns, ["id", "name", "note"]);
    assert_eq!(r.result_sets[0].rows.len(), 3);
    assert_eq!(r.result_sets[0].rows[0], [Value::BigInt(0), Value::String("name 0".into()), Value::String("".into())]);
    assert_eq!(r.result_sets[0].rows[1], [Value::BigInt(1), Value::Null, Value::String("x".into())]);
    assert!(r.result_sets[1].rows.is_empty());
    assert_eq!(r.row_counts, [3, 5, 0]);
    assert_eq!(r.total_rows(), 8);
    assert_eq!(r.errors.len(), 1);
    let e = &r.errors[0];
    assert_eq!((e.number, e.class, e.state, e.line), (8134, 16, 1, 3));
    assert_eq!(message_text(e), "Msg 8134, Level 16, State 1, Line 3: Divide by zero error encountered.");
    assert_eq!(r.infos.len(), 1);
    assert_eq!(r.infos[0].message, "hello there");
    // The connection is still in step.
    let r = c.batch("insert 1").unwrap();
    assert_eq!(r.row_counts, [1]);
    assert!(r.errors.is_empty());
}

#[test]
fn database_and_transaction_follow_envchange() {
    let s = start(false);
    let mut c = Client::connect(&config(&s, "secret")).unwrap();
    assert_eq!(c.database(), "master");
    c.batch("use other").unwrap();
    assert_eq!(c.database(), "other");
    c.batch("begin").unwrap();
    assert_eq!(c.transaction_descriptor(), 0x0102_0304_0506_0708);
    c.batch("commit").unwrap();
    assert_eq!(c.transaction_descriptor(), 0);
}

#[test]
fn large_result_streams_row_by_row() {
    let s = start(false);
    let mut c = Client::connect(&config(&s, "secret")).unwrap();
    let n = 200_000i64;
    let mut seen = 0i64;
    let mut nulls = 0;
    let mut ids_in_order = true;
    let r = c
        .batch_rows(&format!("rows {n}"), &mut |row| {
            if row[0] != Value::BigInt(seen) {
                ids_in_order = false;
            }
            if row[1].is_null() {
                nulls += 1;
            }
            seen += 1;
        })
        .unwrap();
    assert_eq!(seen, n);
    assert!(ids_in_order);
    assert_eq!(nulls, n / 2);
    assert_eq!(r.result_sets.len(), 1);
    assert!(r.result_sets[0].rows.is_empty(), "batch_rows keeps no rows");
    assert_eq!(r.row_counts, [n as u64]);
}

#[test]
fn bigger_packets_carry_the_same_rows() {
    let s = start(false);
    let mut cfg = config(&s, "secret");
    cfg.packet_size = 32767;
    let mut c = Client::connect(&cfg).unwrap();
    assert_eq!(c.packet_size(), 32767);
    let r = c.batch("rows 20000").unwrap();
    assert_eq!(r.result_sets[0].rows.len(), 20000);
    assert_eq!(r.result_sets[0].rows[19998][1], Value::String("name 19998".into()));
}

#[test]
fn rpc_with_output_parameters() {
    let s = start(false);
    let mut c = Client::connect(&config(&s, "secret")).unwrap();
    let r = c
        .rpc(
            "dbo.echo",
            &[
                RpcParam::new("@a", SqlType::Int, Value::Int(7)),
                RpcParam::new("@b", SqlType::NVarChar { len: Length::Bounded(10) }, Value::String("hé".into())),
                RpcParam { output: true, ..RpcParam::new("@out", SqlType::Int, Value::Null) },
            ],
        )
        .unwrap();
    assert_eq!(r.result_sets[0].columns, ["@a", "@b"]);
    assert_eq!(r.result_sets[0].rows, [vec![Value::Int(7), Value::String("hé".into())]]);
    assert_eq!(r.return_status, Some(0));
    assert_eq!(r.return_values, [("@out".to_string(), Value::Int(42))]);
    let r = c.execute_sql("SELECT @x", &[RpcParam::new("@x", SqlType::BigInt, Value::BigInt(5))]).unwrap();
    assert_eq!(r.result_sets[0].columns, ["@stmt", "@params", "@x"]);
    assert_eq!(r.result_sets[0].rows[0][1], Value::String("@x bigint".into()));
}
