//! `mesquite serve`: starts the instance and the TDS listener, and shuts both down
//! cleanly (checkpoint, close files) on SIGTERM or Ctrl-C.
//!
//! Settings, later sources overriding earlier ones: defaults (127.0.0.1:1433, the default
//! data directory), a config file (`--config FILE`, or `mesquite.conf` in the data
//! directory if present: `key = value` lines, `#` comments), environment variables
//! (`MESQUITE_DATA_DIR`, `MESQUITE_ADDR`, `MESQUITE_PORT`, `MESQUITE_CERT`,
//! `MESQUITE_KEY`, `MESQUITE_MEMORY_LIMIT_MB`, `MESQUITE_WORKERS`,
//! `MESQUITE_REQUIRE_ENCRYPTION`, `MESQUITE_CONNECTION_THREADS`), then command-line
//! options.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use engine::{Instance, InstanceConfig, Session};
use sql::request::RpcCall;
use sql::results::ResultSink;
use tds::{Backend, BackendSession, LoginRequest, ServerConfig};

pub const USAGE: &str = "usage: mesquite serve [--data-dir DIR] [--addr IP] [--port N] [--cert PEM --key PEM]
                      [--memory-limit-mb N] [--workers N] [--require-encryption]
                      [--connection-threads on|off] [--schedulers N] [--dac-port N]
                      [--config FILE]";

/// The engine as the TDS server sees it.
struct EngineBackend {
    instance: Arc<Instance>,
}

struct EngineSession(Session);

impl Backend for EngineBackend {
    type Session = EngineSession;

    fn login(&self, req: &LoginRequest) -> Result<EngineSession, types::SqlError> {
        let db = req.database.as_deref().filter(|d| !d.is_empty());
        let password = match &req.new_password {
            Some(new) => {
                self.instance.change_password(&req.user, &req.password, new)?;
                new
            }
            None => &req.password,
        };
        let mut s = self.instance.open_session_with(&req.user, password, db, req.dedicated_admin)?;
        s.set_client_info(&req.host_name, &req.app_name);
        s.set_connection(sql::host::ConnectionInfo {
            client_addr: req.client_addr,
            local_addr: req.local_addr,
            encrypted: req.encrypted,
            protocol_version: req.tds_version,
            packet_size: req.packet_size,
            ..Default::default()
        });
        Ok(EngineSession(s))
    }

    fn server_name(&self) -> String {
        "MESQUITE".to_string()
    }
}

impl BackendSession for EngineSession {
    fn database_name(&self) -> String {
        self.0.database_name()
    }
    fn database_collation(&self) -> types::Collation {
        self.0.database_collation()
    }
    fn spid(&self) -> i32 {
        self.0.spid()
    }
    fn execute_batch(&mut self, sql: &str, sink: &mut dyn ResultSink) {
        self.0.execute_batch(sql, sink)
    }
    fn execute_rpc(&mut self, call: &RpcCall, sink: &mut dyn ResultSink) {
        self.0.execute_rpc(call, sink)
    }
    fn execute_bulk_load(&mut self, load: &sql::request::BulkLoad, sink: &mut dyn ResultSink) {
        self.0.execute_bulk_load(load, sink)
    }
    fn cancel_handle(&self) -> Arc<AtomicBool> {
        self.0.cancel_handle()
    }
    fn transaction_descriptor(&self) -> u64 {
        self.0.transaction_descriptor()
    }
    fn reset_connection(&mut self) {
        self.0.reset_connection()
    }
    fn defer_commits(&mut self, gate: Arc<sql::host::CommitGate>) {
        self.0.defer_commits(gate)
    }
    fn set_kill_hook(&mut self, wake: Box<dyn Fn() + Send + Sync>) {
        self.0.set_kill_hook(wake)
    }
    fn is_killed(&self) -> bool {
        self.0.is_killed()
    }
}

struct Settings {
    data_dir: PathBuf,
    addr: IpAddr,
    port: u16,
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
    memory_mb: u64,
    workers: Option<usize>,
    require_encryption: bool,
    /// Plain TCP connections get a thread each after login (the default); off keeps
    /// every connection on the async request loop.
    connection_threads: bool,
    /// Session workers that run at once (SQLOS-style schedulers); None: one per CPU.
    schedulers: Option<usize>,
    /// The dedicated admin connection's port on the loopback address; 0 turns it off.
    dac_port: u16,
}

impl Settings {
    /// What `mesquite serve` uses when nothing sets otherwise (see the --help text).
    fn defaults(data_dir: PathBuf) -> Settings {
        Settings {
            data_dir,
            addr: IpAddr::from([127, 0, 0, 1]),
            port: 1433,
            cert: None,
            key: None,
            memory_mb: 1024,
            workers: None,
            require_encryption: false,
            connection_threads: true,
            schedulers: None,
            dac_port: tds::DAC_PORT,
        }
    }
}

/// A yes/no setting: 1/true/yes/on or 0/false/no/off, any case.
fn parse_bool(value: &str) -> Option<bool> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" => Some(false),
        _ => None,
    }
}

fn apply(s: &mut Settings, key: &str, value: &str) -> Result<(), String> {
    let bad = || format!("invalid value for {key}: {value}");
    match key {
        "data-dir" | "data_dir" => s.data_dir = PathBuf::from(value),
        "addr" => s.addr = value.parse().map_err(|_| bad())?,
        "port" => s.port = value.parse().map_err(|_| bad())?,
        "cert" => s.cert = Some(PathBuf::from(value)),
        "key" => s.key = Some(PathBuf::from(value)),
        "memory-limit-mb" | "memory_limit_mb" => s.memory_mb = value.parse().map_err(|_| bad())?,
        "workers" => s.workers = Some(value.parse().map_err(|_| bad())?),
        "require-encryption" | "require_encryption" => s.require_encryption = parse_bool(value).ok_or_else(bad)?,
        "connection-threads" | "connection_threads" => s.connection_threads = parse_bool(value).ok_or_else(bad)?,
        "schedulers" => s.schedulers = Some(value.parse().map_err(|_| bad())?),
        "dac-port" | "dac_port" => s.dac_port = value.parse().map_err(|_| bad())?,
        _ => return Err(format!("unknown setting {key}\n{USAGE}")),
    }
    Ok(())
}

fn read_config(s: &mut Settings, path: &std::path::Path) -> Result<(), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    for (n, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let (k, v) =
            line.split_once('=').ok_or_else(|| format!("{}:{}: expected key = value", path.display(), n + 1))?;
        apply(s, k.trim(), v.trim())?;
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        println!("{USAGE}\n\nDefaults: --addr 127.0.0.1 --port 1433, the default data directory, 1024 MB of buffer pool.\nSettings also come from mesquite.conf in the data directory (or --config FILE: key = value\nlines) and MESQUITE_ADDR, MESQUITE_PORT, MESQUITE_CERT, MESQUITE_KEY, MESQUITE_MEMORY_LIMIT_MB,\nMESQUITE_WORKERS, MESQUITE_REQUIRE_ENCRYPTION, MESQUITE_CONNECTION_THREADS, MESQUITE_SCHEDULERS,\nMESQUITE_DAC_PORT; the command line wins.\n--workers N: requests that run at once (default SQL Server's max worker threads: 512 up to 4 CPUs).\n--dac-port N: the dedicated admin connection's port on 127.0.0.1 (default 1434; 0: off).\n--connection-threads off serves plain TCP connections from the async request loop instead of\na thread each (TLS connections always use the request loop).\n--schedulers N: how many session workers run at once (default one per CPU; 0: no limit).");
        return Ok(());
    }
    let mut s = Settings::defaults(engine::default_data_dir());
    // The config file named on the command line, or the data directory's.
    let config_arg = args.iter().position(|a| a == "--config").and_then(|i| args.get(i + 1)).map(PathBuf::from);
    let data_dir_arg = args.iter().position(|a| a == "--data-dir").and_then(|i| args.get(i + 1)).map(PathBuf::from);
    if let Some(d) = &data_dir_arg {
        s.data_dir = d.clone();
    }
    let config_file = config_arg.or_else(|| Some(s.data_dir.join("mesquite.conf")).filter(|p| p.exists()));
    if let Some(p) = config_file {
        read_config(&mut s, &p)?;
    }
    for (env, key) in [
        ("MESQUITE_ADDR", "addr"),
        ("MESQUITE_PORT", "port"),
        ("MESQUITE_CERT", "cert"),
        ("MESQUITE_KEY", "key"),
        ("MESQUITE_MEMORY_LIMIT_MB", "memory-limit-mb"),
        ("MESQUITE_WORKERS", "workers"),
        ("MESQUITE_REQUIRE_ENCRYPTION", "require-encryption"),
        ("MESQUITE_CONNECTION_THREADS", "connection-threads"),
        ("MESQUITE_SCHEDULERS", "schedulers"),
        ("MESQUITE_DAC_PORT", "dac-port"),
    ] {
        if let Ok(v) = std::env::var(env) {
            apply(&mut s, key, &v)?;
        }
    }
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--require-encryption" => s.require_encryption = true,
            "--config" => {
                it.next();
            }
            opt if opt.starts_with("--") => {
                let v = it.next().ok_or_else(|| format!("{opt} needs a value\n{USAGE}"))?;
                apply(&mut s, &opt[2..], v)?;
            }
            other => return Err(format!("unknown argument {other}\n{USAGE}")),
        }
    }
    let server = server_config(&s)?;
    let addr = server.addr;
    let started = std::time::Instant::now();
    let mut config = InstanceConfig::on_disk(&s.data_dir);
    config.memory_limit_bytes = Some(s.memory_mb * 1024 * 1024);
    config.schedulers = s.schedulers;
    let instance = Instance::start(config).map_err(|e| e.message)?;
    if let Some(p) = instance.first_start_sa_password() {
        println!("A new instance: the sa password is {p}");
        println!("It is shown only this once (set MESQUITE_SA_PASSWORD before the first start to choose it).");
    }
    let backend = Arc::new(EngineBackend { instance: instance.clone() });
    // Bind before announcing readiness so a client that reads the line can connect.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("tds-io")
        .thread_stack_size(tds::REQUEST_STACK_SIZE)
        .max_blocking_threads(server.workers + 8)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let result = rt.block_on(async {
        let listener =
            tokio::net::TcpListener::bind(addr).await.map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        println!(
            "Mesquite {} listening on {} (data directory {}), ready in {:.1} ms.",
            env!("CARGO_PKG_VERSION"),
            listener.local_addr().map(|a| a.to_string()).unwrap_or_else(|_| addr.to_string()),
            s.data_dir.display(),
            started.elapsed().as_secs_f64() * 1000.0
        );
        tds::serve_on(listener, server, backend, shutdown_signal()).await.map_err(|e| e.to_string())
    });
    rt.shutdown_timeout(std::time::Duration::from_secs(5));
    println!("Shutting down: checkpointing and closing the databases.");
    instance.shutdown().map_err(|e| e.message)?;
    result
}

/// The TDS server's configuration from the settings.
fn server_config(s: &Settings) -> Result<ServerConfig, String> {
    let addr = SocketAddr::new(s.addr, s.port);
    let mut server = ServerConfig::new(addr, s.data_dir.join("certs"));
    server.require_encryption = s.require_encryption;
    server.connection_threads = s.connection_threads;
    if let Some(w) = s.workers {
        server.workers = w.max(1);
    }
    server.dac_addr = (s.dac_port != 0).then(|| SocketAddr::new(IpAddr::from([127, 0, 0, 1]), s.dac_port));
    match (&s.cert, &s.key) {
        (Some(c), Some(k)) => server.cert = Some((c.clone(), k.clone())),
        (None, None) => {}
        _ => return Err("--cert and --key go together".to_string()),
    }
    Ok(server)
}

/// Completes on SIGTERM or Ctrl-C (SIGINT).
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(t) => t,
            Err(_) => return ctrl_c.await,
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defaults() -> Settings {
        Settings::defaults(PathBuf::from("data"))
    }

    #[test]
    fn connection_threads_reach_the_server_config() {
        let mut s = defaults();
        assert!(server_config(&s).unwrap().connection_threads);
        apply(&mut s, "connection-threads", "off").unwrap();
        assert!(!server_config(&s).unwrap().connection_threads);
        apply(&mut s, "connection_threads", "ON").unwrap();
        assert!(server_config(&s).unwrap().connection_threads);
        assert!(apply(&mut s, "connection-threads", "sometimes").unwrap_err().contains("invalid value"));
    }

    /// A durable commit's reply comes from the log writer once the commit is durable
    /// (architecture.md, "Commit replies from the log writer"): over TCP, the reply, the
    /// statements after a COMMIT in the same batch and the session's WRITELOG waits are
    /// as without the hand-off, and a commit whose log write fails is never acknowledged.
    #[test]
    fn commit_replies_from_the_log_writer() {
        use storage::io::FaultFs;
        use tds::client::{Client, ClientConfig};
        let fs = FaultFs::new(7);
        let mut config = InstanceConfig::in_memory("Deferred-1x");
        config.filesystem = Some(Arc::new(fs.clone()));
        let instance = Instance::start(config).unwrap();
        let backend = Arc::new(EngineBackend { instance: instance.clone() });
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        let listener = rt.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let dir = std::env::temp_dir().join(format!("mesquite-deferred-{}", std::process::id()));
        let server = ServerConfig::new(SocketAddr::from(([127, 0, 0, 1], port)), dir.join("certs"));
        let serving = rt.spawn(tds::serve_on(listener, server, backend, async {
            let _ = stop_rx.await;
        }));
        let mut c = Client::connect(&ClientConfig::new("127.0.0.1", port, "sa", "Deferred-1x")).unwrap();
        let ok = |c: &mut Client, q: &str| {
            let r = c.batch(q).unwrap();
            assert!(r.errors.is_empty(), "{q}: {:?}", r.errors);
            r
        };
        ok(&mut c, "CREATE DATABASE d; ");
        ok(&mut c, "USE d; CREATE TABLE t (id int IDENTITY PRIMARY KEY, v varchar(10));");
        for i in 0..50 {
            ok(&mut c, &format!("BEGIN TRAN; INSERT t (v) VALUES ('{i}'); COMMIT;"));
            ok(&mut c, "INSERT t (v) VALUES ('auto')");
        }
        // Statements after the COMMIT run once it is durable, in the same reply.
        let r = ok(&mut c, "BEGIN TRAN; INSERT t (v) VALUES ('x'); COMMIT; SELECT COUNT(*) FROM t;");
        assert_eq!(r.result_sets[0].rows, vec![vec![types::Value::Int(101)]]);
        // A WHILE condition runs again after a COMMIT that ended the loop's body, without
        // a statement of its own; under REPEATABLE READ it locks what the commit changed,
        // so it must not run before the commit is complete (it waited forever).
        ok(&mut c, "CREATE TABLE w (id int PRIMARY KEY, v int); INSERT w VALUES (1, 0), (2, 0), (3, 0);");
        let r = ok(
            &mut c,
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ;
             WHILE EXISTS (SELECT 1 FROM w WHERE v = 0)
             BEGIN BEGIN TRAN; UPDATE TOP (1) w SET v = 1 WHERE v = 0; COMMIT; END;
             SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
             SELECT COUNT(*) FROM w WHERE v = 1;",
        );
        assert_eq!(r.result_sets[0].rows, vec![vec![types::Value::Int(3)]]);
        let r = ok(
            &mut c,
            "SELECT waiting_tasks_count FROM sys.dm_exec_session_wait_stats WHERE session_id = @@SPID AND wait_type = 'WRITELOG'",
        );
        let types::Value::BigInt(writelog) = r.result_sets[0].rows[0][0] else { panic!("{r:?}") };
        assert!(writelog >= 100, "every durable commit waited for its flush: {writelog}");
        // The log can no longer be written: the commit is not acknowledged, the client
        // loses its connection instead.
        fs.fail_writes_after(0, std::io::ErrorKind::Other);
        let r = c.batch("BEGIN TRAN; INSERT t (v) VALUES ('lost'); COMMIT;");
        match r {
            Err(_) => {}
            Ok(r) => assert!(!r.errors.is_empty(), "a commit that could not be logged was acknowledged: {r:?}"),
        }
        let _ = stop_tx.send(());
        let _ = rt.block_on(serving);
        drop(c);
        let _ = instance.shutdown();
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn config_file_and_yes_no_values() {
        let dir = std::env::temp_dir().join(format!("mesquite-serve-conf-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let conf = dir.join("mesquite.conf");
        std::fs::write(&conf, "# test\nworkers = 3\nconnection-threads = no\nrequire-encryption = yes\n").unwrap();
        let mut s = defaults();
        read_config(&mut s, &conf).unwrap();
        let c = server_config(&s).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.workers, 3);
        assert!(!c.connection_threads);
        assert!(c.require_encryption);
        assert!(apply(&mut s, "require-encryption", "maybe").is_err());
    }
}
