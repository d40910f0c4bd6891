//! A minimal PostgreSQL client (frontend/backend protocol 3.0, simple query protocol, text
//! values) and a [`Connector`](crate::Connector) for it: the peer the benchmarks drive with
//! the same runner as Mesquite. [`PgCluster`] starts a private, throwaway PostgreSQL cluster
//! on loopback for a benchmark run.
//!
//! Written by hand rather than with a driver crate: the benchmarks need only startup,
//! trust/cleartext/MD5 authentication and the 'Q' message, and a driver would bring an
//! async runtime or TLS stack into every benchmark build.

use std::fmt;
use std::io::{self, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::{Connection, Connector, WaitDelta};

/// Protocol version 3.0 (major 3, minor 0).
const PROTOCOL_3_0: i32 = 196_608;

/// A message larger than this is treated as a broken stream rather than allocated.
const MAX_MESSAGE: usize = 1 << 30;

#[derive(Debug)]
pub enum PgError {
    Io(io::Error),
    /// The server sent something this client does not understand (or a message too short).
    Protocol(String),
    /// The server asked for an authentication method this client does not implement.
    Auth(String),
    /// An ErrorResponse: SQLSTATE code and message (plus detail/hint when sent).
    Server {
        severity: String,
        code: String,
        message: String,
        detail: Option<String>,
    },
    /// Starting or stopping a cluster failed (the command and its output).
    Cluster(String),
}

impl PgError {
    /// The SQLSTATE of a server error.
    pub fn sqlstate(&self) -> Option<&str> {
        match self {
            PgError::Server { code, .. } => Some(code),
            _ => None,
        }
    }
}

impl fmt::Display for PgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PgError::Io(e) => write!(f, "postgresql i/o: {e}"),
            PgError::Protocol(m) => write!(f, "postgresql protocol: {m}"),
            PgError::Auth(m) => write!(f, "postgresql authentication: {m}"),
            PgError::Server { severity, code, message, detail } => {
                write!(f, "{severity} {code}: {message}")?;
                if let Some(d) = detail {
                    write!(f, " ({d})")?;
                }
                Ok(())
            }
            PgError::Cluster(m) => write!(f, "postgresql cluster: {m}"),
        }
    }
}

impl std::error::Error for PgError {}

impl From<io::Error> for PgError {
    fn from(e: io::Error) -> Self {
        PgError::Io(e)
    }
}

/// Where and as whom to connect.
#[derive(Clone, Debug)]
pub struct PgConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
    /// Needed only for cleartext or MD5 authentication.
    pub password: Option<String>,
    pub application_name: String,
}

impl PgConfig {
    pub fn new(host: &str, port: u16, user: &str, database: &str) -> PgConfig {
        PgConfig {
            host: host.to_string(),
            port,
            user: user.to_string(),
            database: database.to_string(),
            password: None,
            application_name: "mesquite-stress".to_string(),
        }
    }
}

/// One statement's result from [`PgConnection::query`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgResult {
    /// Empty for statements that return no rows.
    pub columns: Vec<String>,
    /// Text-format values; None is SQL NULL.
    pub rows: Vec<Vec<Option<String>>>,
    /// The CommandComplete tag ("INSERT 0 1000", "SELECT 3", "CALL").
    pub tag: String,
}

impl PgResult {
    /// The row count in the tag (the last number of "INSERT 0 5", "DELETE 5", "SELECT 5").
    pub fn rows_affected(&self) -> Option<u64> {
        tag_rows(&self.tag)
    }
}

/// What a streamed query ([`PgConnection::query_rows`]) ended with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PgCompletion {
    /// One CommandComplete tag per statement, in order.
    pub tags: Vec<String>,
    /// Rows handed to the callback.
    pub rows: u64,
    /// NoticeResponse messages ("NOTICE 00000: ...").
    pub notices: Vec<String>,
}

impl PgCompletion {
    /// Rows affected summed over the statements (CommandComplete counts).
    pub fn rows_affected(&self) -> u64 {
        self.tags.iter().filter_map(|t| tag_rows(t)).sum()
    }
}

fn tag_rows(tag: &str) -> Option<u64> {
    let mut words = tag.split(' ');
    let verb = words.next()?;
    match verb {
        "INSERT" | "DELETE" | "UPDATE" | "SELECT" | "MERGE" | "MOVE" | "FETCH" | "COPY" => {
            tag.rsplit(' ').next()?.parse().ok()
        }
        _ => None,
    }
}

/// One open session.
pub struct PgConnection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    /// Reused body buffer of the message being read.
    buf: Vec<u8>,
    backend_pid: i32,
    server_version: String,
}

impl fmt::Debug for PgConnection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgConnection").field("backend_pid", &self.backend_pid).finish()
    }
}

impl PgConnection {
    pub fn connect(cfg: &PgConfig) -> Result<PgConnection, PgError> {
        let addrs: Vec<_> = (cfg.host.as_str(), cfg.port).to_socket_addrs()?.collect();
        let mut last = None;
        let mut stream = None;
        for a in addrs {
            match TcpStream::connect_timeout(&a, Duration::from_secs(10)) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = Some(e),
            }
        }
        let stream = match stream {
            Some(s) => s,
            None => {
                return Err(PgError::Io(
                    last.unwrap_or_else(|| io::Error::new(io::ErrorKind::NotFound, "host resolved to no address")),
                ))
            }
        };
        // One small message per round trip: Nagle would add delay to every query.
        stream.set_nodelay(true)?;
        let writer = stream.try_clone()?;
        let mut conn = PgConnection {
            reader: BufReader::with_capacity(64 * 1024, stream),
            writer,
            buf: Vec::with_capacity(8192),
            backend_pid: 0,
            server_version: String::new(),
        };
        conn.startup(cfg)?;
        Ok(conn)
    }

    /// The backend's process id (BackendKeyData): PostgreSQL's session id.
    pub fn backend_pid(&self) -> i32 {
        self.backend_pid
    }

    /// The server_version parameter the server reported at startup ("15.6 (Debian ...)").
    pub fn server_version(&self) -> &str {
        &self.server_version
    }

    fn startup(&mut self, cfg: &PgConfig) -> Result<(), PgError> {
        let mut body = Vec::new();
        body.extend_from_slice(&PROTOCOL_3_0.to_be_bytes());
        for (k, v) in [
            ("user", cfg.user.as_str()),
            ("database", cfg.database.as_str()),
            ("client_encoding", "UTF8"),
            ("application_name", cfg.application_name.as_str()),
        ] {
            put_cstr(&mut body, k)?;
            put_cstr(&mut body, v)?;
        }
        body.push(0);
        let mut msg = Vec::with_capacity(body.len() + 4);
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(&body);
        self.writer.write_all(&msg)?;

        loop {
            let tag = self.read_message()?;
            match tag {
                b'R' => self.authenticate(cfg)?,
                b'K' => {
                    let mut r = Cursor::new(&self.buf);
                    self.backend_pid = r.i32()?;
                }
                b'S' => {
                    let mut r = Cursor::new(&self.buf);
                    let name = r.cstr()?;
                    let value = r.cstr()?;
                    if name == "server_version" {
                        self.server_version = value.to_string();
                    }
                }
                b'N' => {}
                b'E' => return Err(parse_error(&self.buf)),
                b'Z' => return Ok(()),
                other => {
                    return Err(PgError::Protocol(format!("unexpected message '{}' during startup", other as char)))
                }
            }
        }
    }

    fn authenticate(&mut self, cfg: &PgConfig) -> Result<(), PgError> {
        let mut r = Cursor::new(&self.buf);
        let code = r.i32()?;
        let password = || {
            cfg.password
                .clone()
                .ok_or_else(|| PgError::Auth("the server asks for a password and none was given".into()))
        };
        match code {
            0 => Ok(()),
            3 => {
                let p = password()?;
                self.send_password(p.as_bytes())
            }
            5 => {
                let salt = r.bytes(4)?.to_vec();
                let p = password()?;
                // md5(md5(password || user) hex || salt) hex, prefixed "md5".
                let inner = md5::hex(&[p.as_bytes(), cfg.user.as_bytes()].concat());
                let outer = md5::hex(&[inner.as_bytes(), &salt].concat());
                self.send_password(format!("md5{outer}").as_bytes())
            }
            10 => Err(PgError::Auth("SCRAM-SHA-256 is not implemented; use trust or md5 authentication".into())),
            other => Err(PgError::Auth(format!("authentication method {other} is not implemented"))),
        }
    }

    fn send_password(&mut self, p: &[u8]) -> Result<(), PgError> {
        let mut body = p.to_vec();
        body.push(0);
        self.send(b'p', &body)
    }

    fn send(&mut self, tag: u8, body: &[u8]) -> Result<(), PgError> {
        let mut msg = Vec::with_capacity(body.len() + 5);
        msg.push(tag);
        msg.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
        msg.extend_from_slice(body);
        self.writer.write_all(&msg)?;
        Ok(())
    }

    /// Reads one message into `self.buf` and returns its type byte.
    fn read_message(&mut self) -> Result<u8, PgError> {
        let mut head = [0u8; 5];
        self.reader.read_exact(&mut head)?;
        let len = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
        if len < 4 || len as usize > MAX_MESSAGE {
            return Err(PgError::Protocol(format!("message '{}' with bad length {len}", head[0] as char)));
        }
        let n = len as usize - 4;
        self.buf.clear();
        self.buf.resize(n, 0);
        self.reader.read_exact(&mut self.buf)?;
        Ok(head[0])
    }

    /// Runs `sql` (one or more statements) with the simple query protocol and returns one
    /// result per statement. The first error ends the batch (PostgreSQL runs a multi-statement
    /// simple query as one transaction unless it contains its own COMMITs) and is returned
    /// once the server is ready again.
    pub fn query(&mut self, sql: &str) -> Result<Vec<PgResult>, PgError> {
        let mut results = Vec::new();
        let mut current = PgResult::default();
        self.send_query(sql)?;
        let mut error = None;
        loop {
            match self.read_message()? {
                b'T' => {
                    current.columns = parse_row_description(&self.buf)?;
                }
                b'D' => {
                    let mut row = Vec::with_capacity(current.columns.len());
                    for_each_value(&self.buf, |v| row.push(v.map(|b| String::from_utf8_lossy(b).into_owned())))?;
                    current.rows.push(row);
                }
                b'C' => {
                    current.tag = Cursor::new(&self.buf).cstr()?.to_string();
                    results.push(std::mem::take(&mut current));
                }
                b'I' => results.push(std::mem::take(&mut current)),
                b'E' => error = Some(parse_error(&self.buf)),
                b'Z' => break,
                other => self.common_message(other)?,
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(results),
        }
    }

    /// Runs `sql` and hands each row to `on_row` without keeping it: values are the text
    /// bytes as received (None for NULL), borrowed from the receive buffer.
    pub fn query_rows(&mut self, sql: &str, on_row: &mut dyn FnMut(&[Option<&[u8]>])) -> Result<PgCompletion, PgError> {
        let mut done = PgCompletion::default();
        self.send_query(sql)?;
        let mut error = None;
        // Reused across rows; re-borrowed per message (see `recycle`).
        let mut spare: Vec<Option<&[u8]>> = Vec::new();
        loop {
            match self.read_message()? {
                b'T' => {}
                b'D' => {
                    let mut values = recycle(std::mem::take(&mut spare));
                    for_each_value(&self.buf, |v| values.push(v))?;
                    on_row(&values);
                    done.rows += 1;
                    spare = recycle(values);
                }
                b'C' => done.tags.push(Cursor::new(&self.buf).cstr()?.to_string()),
                b'I' => {}
                b'E' => error = Some(parse_error(&self.buf)),
                b'N' => done.notices.push(parse_error(&self.buf).to_string()),
                b'Z' => break,
                other => self.common_message(other)?,
            }
        }
        match error {
            Some(e) => Err(e),
            None => Ok(done),
        }
    }

    fn send_query(&mut self, sql: &str) -> Result<(), PgError> {
        let mut body = Vec::with_capacity(sql.len() + 1);
        put_cstr(&mut body, sql)?;
        self.send(b'Q', &body)
    }

    /// Messages any query may see besides its results.
    fn common_message(&mut self, tag: u8) -> Result<(), PgError> {
        match tag {
            // Notices, parameter changes, notifications: nothing to do.
            b'N' | b'S' | b'A' => Ok(()),
            // COPY FROM STDIN: this client has nothing to send; refuse so the server errors.
            b'G' => self.send(b'f', b"COPY FROM STDIN is not supported by this client\0"),
            // COPY TO STDOUT: data ('d') and done ('c') messages are read and dropped.
            b'H' | b'd' | b'c' => Ok(()),
            other => Err(PgError::Protocol(format!("unexpected message '{}'", other as char))),
        }
    }
}

/// Empties a vector of borrowed slices so it can hold slices of another lifetime, keeping
/// its allocation (the in-place collect reuses the buffer because the element layout is the
/// same).
fn recycle<'a, 'b>(mut v: Vec<Option<&'a [u8]>>) -> Vec<Option<&'b [u8]>> {
    v.clear();
    v.into_iter().map(|_| None).collect()
}

fn put_cstr(out: &mut Vec<u8>, s: &str) -> Result<(), PgError> {
    if s.as_bytes().contains(&0) {
        return Err(PgError::Protocol("a string sent to the server contains a NUL byte".into()));
    }
    out.extend_from_slice(s.as_bytes());
    out.push(0);
    Ok(())
}

/// A bounds-checked reader over a message body.
struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn new(b: &'a [u8]) -> Self {
        Cursor { b, pos: 0 }
    }
    fn bytes(&mut self, n: usize) -> Result<&'a [u8], PgError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| PgError::Protocol("message shorter than its contents".into()))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn i16(&mut self) -> Result<i16, PgError> {
        let b = self.bytes(2)?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }
    fn i32(&mut self) -> Result<i32, PgError> {
        let b = self.bytes(4)?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn cstr(&mut self) -> Result<&'a str, PgError> {
        let rest = &self.b[self.pos..];
        let n = rest.iter().position(|&c| c == 0).ok_or_else(|| PgError::Protocol("unterminated string".into()))?;
        self.pos += n + 1;
        std::str::from_utf8(&rest[..n]).map_err(|_| PgError::Protocol("string is not UTF-8".into()))
    }
}

fn parse_row_description(b: &[u8]) -> Result<Vec<String>, PgError> {
    let mut r = Cursor::new(b);
    let n = r.i16()?.max(0) as usize;
    let mut cols = Vec::with_capacity(n);
    for _ in 0..n {
        cols.push(r.cstr()?.to_string());
        // table oid, column number, type oid, type size, type modifier, format code
        r.bytes(4 + 2 + 4 + 2 + 4 + 2)?;
    }
    Ok(cols)
}

fn for_each_value<'a>(b: &'a [u8], mut f: impl FnMut(Option<&'a [u8]>)) -> Result<(), PgError> {
    let mut r = Cursor::new(b);
    let n = r.i16()?.max(0);
    for _ in 0..n {
        let len = r.i32()?;
        if len < 0 {
            f(None);
        } else {
            f(Some(r.bytes(len as usize)?));
        }
    }
    Ok(())
}

/// ErrorResponse / NoticeResponse: (field type byte, C string)* then a 0.
fn parse_error(b: &[u8]) -> PgError {
    let mut severity = String::new();
    let mut code = String::new();
    let mut message = String::new();
    let mut detail = None;
    let mut r = Cursor::new(b);
    while let Ok(kind) = r.bytes(1) {
        if kind[0] == 0 {
            break;
        }
        let Ok(value) = r.cstr() else { break };
        match kind[0] {
            // 'V' is the untranslated severity (9.6+); 'S' may be localized.
            b'V' => severity = value.to_string(),
            b'S' if severity.is_empty() => severity = value.to_string(),
            b'C' => code = value.to_string(),
            b'M' => message = value.to_string(),
            b'D' => detail = Some(value.to_string()),
            _ => {}
        }
    }
    PgError::Server { severity, code, message, detail }
}

/// Opens [`PgConnection`]s for the stress runner (trust authentication: the benchmark's
/// cluster accepts loopback connections without a password).
#[derive(Clone, Debug)]
pub struct PgConnector {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub database: String,
}

impl PgConnector {
    pub fn config(&self) -> PgConfig {
        PgConfig::new(&self.host, self.port, &self.user, &self.database)
    }
}

impl Connector for PgConnector {
    type Conn = PgConnection;
    fn connect(&self) -> Result<PgConnection, String> {
        PgConnection::connect(&self.config()).map_err(|e| e.to_string())
    }
    fn describe(&self) -> String {
        format!("postgresql {}:{}/{}", self.host, self.port, self.database)
    }
}

impl Connection for PgConnection {
    fn execute(&mut self, batch: &str) -> Result<u64, String> {
        self.query_rows(batch, &mut |_| {}).map(|done| done.rows_affected()).map_err(|e| e.to_string())
    }
    fn session_id(&self) -> Option<i32> {
        Some(self.backend_pid)
    }
    /// PostgreSQL keeps no cumulative per-session waits (pg_stat_activity shows only the
    /// current wait event), so there is nothing to diff.
    fn session_waits(&mut self) -> Option<Vec<WaitDelta>> {
        None
    }
}

/// A private PostgreSQL cluster for one benchmark run: `initdb` into a directory, started
/// with `pg_ctl` on a loopback port, stopped (`pg_ctl stop -m fast`) by [`PgCluster::stop`]
/// or on drop.
pub struct PgCluster {
    bindir: PathBuf,
    /// Holds `data/` (PGDATA), the server log and the Unix socket.
    dir: PathBuf,
    port: u16,
    /// Some("postgres") when we are root: PostgreSQL refuses to run as root.
    run_as: Option<String>,
    running: bool,
    /// Remove `dir` after stopping (the cluster was started in a directory we created).
    remove_dir: bool,
    /// A shell that waits for this process to end and then stops the cluster (and
    /// removes its directory), so a run killed by Ctrl-C or SIGKILL, which skips `Drop`,
    /// leaves no server behind. Killed by `stop`.
    guardian: Option<std::process::Child>,
}

impl PgCluster {
    /// The directory holding initdb, pg_ctl and postgres: `pg_config --bindir`, else the
    /// newest of Debian's /usr/lib/postgresql/<major>/bin.
    pub fn find_bindir() -> Option<PathBuf> {
        if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
            if out.status.success() {
                let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
                if p.join("initdb").exists() && p.join("pg_ctl").exists() {
                    return Some(p);
                }
            }
        }
        let mut best: Option<(u32, PathBuf)> = None;
        for e in std::fs::read_dir("/usr/lib/postgresql").ok()?.flatten() {
            let Some(major) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            let bin = e.path().join("bin");
            if bin.join("initdb").exists() && best.as_ref().map_or(true, |(m, _)| major > *m) {
                best = Some((major, bin));
            }
        }
        best.map(|(_, p)| p)
    }

    /// Settings for a durability benchmark, passed on the postgres command line (see
    /// docs/durability-study.md for the reasons): durable commits exactly as shipped
    /// (fsync, synchronous_commit on, fdatasync), no checkpoint forced by WAL volume, WAL
    /// I/O timed so pg_stat_wal reports write and sync time.
    pub fn benchmark_settings(shared_buffers_mb: u64) -> Vec<(String, String)> {
        [
            // A commit is on disk when it returns: the default, stated so it is visible.
            ("fsync", "on".to_string()),
            ("synchronous_commit", "on".to_string()),
            // The same page cache size as Mesquite's buffer pool in the same run.
            ("shared_buffers", format!("{shared_buffers_mb}MB")),
            // WAL volume never forces a checkpoint inside a test (the default 1GB would, with
            // a burst of full-page images after each); the 5 min timer stays as shipped.
            ("max_wal_size", "16GB".to_string()),
            // pg_stat_wal.wal_write_time / wal_sync_time are zero without it.
            ("track_wal_io_timing", "on".to_string()),
            ("max_connections", "64".to_string()),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect()
    }

    /// Creates a fresh directory under the system temp directory and starts a cluster in it
    /// on a free loopback port; the directory is removed when the cluster is stopped.
    pub fn start_temp(settings: &[(String, String)]) -> Result<PgCluster, PgError> {
        let stamp =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("mesquite-pg-{}-{stamp}", std::process::id()));
        std::fs::create_dir_all(&dir)?;
        let port = free_port()?;
        match PgCluster::start_in(&dir, port, settings, true) {
            Ok(c) => Ok(c),
            Err(e) => {
                let _ = std::fs::remove_dir_all(&dir);
                Err(e)
            }
        }
    }

    /// `initdb -A trust -U postgres` into `dir/data` (unless it already exists) and starts
    /// the server on 127.0.0.1:`port` with its socket in `dir`.
    pub fn start(dir: &Path, port: u16, settings: &[(String, String)]) -> Result<PgCluster, PgError> {
        PgCluster::start_in(dir, port, settings, false)
    }

    fn start_in(dir: &Path, port: u16, settings: &[(String, String)], remove_dir: bool) -> Result<PgCluster, PgError> {
        let bindir = PgCluster::find_bindir()
            .ok_or_else(|| PgError::Cluster("PostgreSQL binaries not found (pg_config, /usr/lib/postgresql)".into()))?;
        std::fs::create_dir_all(dir)?;
        let dir = dir.canonicalize()?;
        let run_as = if is_root() { Some("postgres".to_string()) } else { None };
        if let Some(user) = &run_as {
            run(Command::new("chown").arg("-R").arg(format!("{user}:")).arg(&dir))?;
        }
        let mut cluster = PgCluster { bindir, dir, port, run_as, running: false, remove_dir, guardian: None };
        let data = cluster.data_dir();
        if !data.join("PG_VERSION").exists() {
            // --no-sync: the template catalog need not survive a crash of this machine; it
            // saves seconds per run and changes nothing about commits measured later.
            let mut initdb = cluster.command("initdb");
            initdb.arg("-D").arg(&data).args([
                "-A",
                "trust",
                "-U",
                "postgres",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ]);
            run(&mut initdb)?;
        }
        let mut opts = format!(
            "-c port={port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='{}'",
            cluster.dir.display()
        );
        for (k, v) in settings {
            if !k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                || v.chars().any(|c| c == '\'' || c == '\\' || c.is_whitespace())
            {
                return Err(PgError::Cluster(format!("unsupported setting {k}={v}")));
            }
            opts.push_str(&format!(" -c {k}={v}"));
        }
        let mut start = cluster.command("pg_ctl");
        start
            .arg("-D")
            .arg(&data)
            .arg("-l")
            .arg(cluster.dir.join("server.log"))
            .args(["-w", "-t", "60", "-o", &opts, "start"]);
        if let Err(e) = run(&mut start) {
            let log = std::fs::read_to_string(cluster.dir.join("server.log")).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(PgError::Cluster(format!("{e}\nserver log:\n{}", tail.join("\n"))));
        }
        cluster.running = true;
        cluster.guardian = cluster.spawn_guardian().ok();
        Ok(cluster)
    }

    /// Starts the guardian shell (see the field). It ignores the terminal's signals, polls
    /// this process once a second, then runs `pg_ctl stop -m immediate`.
    fn spawn_guardian(&self) -> std::io::Result<std::process::Child> {
        let mut stop = self.command("pg_ctl");
        stop.arg("-D").arg(self.data_dir()).args(["-m", "immediate", "-w", "stop"]);
        let script = "trap '' INT TERM HUP; p=$1; d=$2; shift 2; \
                      while kill -0 \"$p\" 2>/dev/null; do sleep 1; done; \
                      \"$@\" >/dev/null 2>&1; if [ -n \"$d\" ]; then rm -rf \"$d\"; fi";
        let remove = if self.remove_dir { self.dir.as_os_str().to_owned() } else { Default::default() };
        Command::new("sh")
            .args(["-c", script, "guardian"])
            .arg(std::process::id().to_string())
            .arg(remove)
            .arg(stop.get_program())
            .args(stop.get_args())
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
    }

    /// A command from the cluster's bin directory, run as the postgres user when we are root.
    fn command(&self, program: &str) -> Command {
        let exe = self.bindir.join(program);
        match &self.run_as {
            Some(user) if Path::new("/usr/sbin/runuser").exists() || Path::new("/sbin/runuser").exists() => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(exe);
                c
            }
            Some(user) => {
                // `su -c` takes one shell string; arguments after the user name reach that
                // shell as $0, $1, ..., so no quoting of paths is needed.
                let mut c = Command::new("su");
                c.args(["-s", "/bin/sh", "-c", "exec \"$0\" \"$@\"", user.as_str()]).arg(exe);
                c
            }
            None => Command::new(exe),
        }
    }

    /// Where initdb, pg_ctl, postgres (and pgbench, from Debian's server package) are.
    pub fn bindir(&self) -> &Path {
        &self.bindir
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.join("data")
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn host(&self) -> &str {
        "127.0.0.1"
    }

    /// A connector for `database` as the superuser postgres.
    pub fn connector(&self, database: &str) -> PgConnector {
        PgConnector {
            host: self.host().to_string(),
            port: self.port,
            user: "postgres".to_string(),
            database: database.to_string(),
        }
    }

    pub fn connect(&self, database: &str) -> Result<PgConnection, PgError> {
        PgConnection::connect(&self.connector(database).config())
    }

    /// The server's version ("PostgreSQL 15.6 (Debian 15.6-0+deb12u1) on x86_64...").
    pub fn version(&self) -> Result<String, PgError> {
        let mut c = self.connect("postgres")?;
        let r = c.query("SELECT version()")?;
        r.first()
            .and_then(|r| r.rows.first())
            .and_then(|row| row.first().cloned().flatten())
            .ok_or_else(|| PgError::Protocol("SELECT version() returned no row".into()))
    }

    /// `pg_ctl stop -m fast` (idempotent); removes the directory if we created it.
    pub fn stop(&mut self) -> Result<(), PgError> {
        if let Some(mut g) = self.guardian.take() {
            let _ = g.kill();
            let _ = g.wait();
        }
        if self.running {
            let mut stop = self.command("pg_ctl");
            stop.arg("-D").arg(self.data_dir()).args(["-m", "fast", "-w", "-t", "60", "stop"]);
            run(&mut stop)?;
            self.running = false;
        }
        if self.remove_dir {
            std::fs::remove_dir_all(&self.dir)?;
            self.remove_dir = false;
        }
        Ok(())
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        if let Err(e) = self.stop() {
            eprintln!("stopping the PostgreSQL cluster: {e}");
        }
    }
}

/// A loopback port nobody listens on right now.
pub fn free_port() -> Result<u16, PgError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn is_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    // /proc/self belongs to the effective user of this process.
    match std::fs::metadata("/proc/self") {
        Ok(m) => m.uid() == 0,
        Err(_) => Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false),
    }
}

fn run(c: &mut Command) -> Result<(), PgError> {
    let out = c.stdin(std::process::Stdio::null()).output().map_err(|e| PgError::Cluster(format!("{c:?}: {e}")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(PgError::Cluster(format!(
            "{c:?} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

/// MD5 (RFC 1321), only for PostgreSQL's md5 password exchange.
mod md5 {
    const S: [u32; 64] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14,
        20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6,
        10, 15, 21,
    ];

    fn k(i: usize) -> u32 {
        // floor(|sin(i + 1)| * 2^32), computed rather than tabulated; exact in f64.
        ((i as f64 + 1.0).sin().abs() * 4_294_967_296.0) as u32
    }

    pub fn digest(input: &[u8]) -> [u8; 16] {
        let mut msg = input.to_vec();
        let bit_len = (input.len() as u64).wrapping_mul(8);
        msg.push(0x80);
        while msg.len() % 64 != 56 {
            msg.push(0);
        }
        msg.extend_from_slice(&bit_len.to_le_bytes());
        let (mut a0, mut b0, mut c0, mut d0) = (0x67452301u32, 0xefcdab89u32, 0x98badcfeu32, 0x10325476u32);
        for chunk in msg.chunks_exact(64) {
            let m: Vec<u32> = chunk.chunks_exact(4).map(|w| u32::from_le_bytes([w[0], w[1], w[2], w[3]])).collect();
            let (mut a, mut b, mut c, mut d) = (a0, b0, c0, d0);
            for i in 0..64 {
                let (f, g) = match i / 16 {
                    0 => ((b & c) | (!b & d), i),
                    1 => ((d & b) | (!d & c), (5 * i + 1) % 16),
                    2 => (b ^ c ^ d, (3 * i + 5) % 16),
                    _ => (c ^ (b | !d), (7 * i) % 16),
                };
                let f = f.wrapping_add(a).wrapping_add(k(i)).wrapping_add(m[g]);
                a = d;
                d = c;
                c = b;
                b = b.wrapping_add(f.rotate_left(S[i]));
            }
            a0 = a0.wrapping_add(a);
            b0 = b0.wrapping_add(b);
            c0 = c0.wrapping_add(c);
            d0 = d0.wrapping_add(d);
        }
        let mut out = [0u8; 16];
        for (i, v) in [a0, b0, c0, d0].iter().enumerate() {
            out[i * 4..i * 4 + 4].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    pub fn hex(input: &[u8]) -> String {
        digest(input).iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_vectors() {
        assert_eq!(md5::hex(b""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(md5::hex(b"abc"), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            md5::hex(b"12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a"
        );
    }

    #[test]
    fn tags() {
        assert_eq!(tag_rows("INSERT 0 1000"), Some(1000));
        assert_eq!(tag_rows("DELETE 7"), Some(7));
        assert_eq!(tag_rows("CALL"), None);
        assert_eq!(tag_rows("CREATE TABLE"), None);
    }

    #[test]
    fn malformed_messages_are_errors() {
        assert!(parse_row_description(&[0, 1, b'a']).is_err());
        assert!(for_each_value(&[0, 1, 0, 0, 0, 9, 1], |_| {}).is_err());
        // A truncated ErrorResponse still yields an error value, not a panic.
        assert!(matches!(parse_error(&[b'C', b'4']), PgError::Server { .. }));
    }

    /// One cluster for all the live tests (starting one takes a second or two).
    fn with_cluster(f: impl FnOnce(&PgCluster)) {
        if PgCluster::find_bindir().is_none() {
            println!("skipped: no PostgreSQL");
            return;
        }
        let mut settings = PgCluster::benchmark_settings(32);
        settings.retain(|(k, _)| k != "max_wal_size");
        let mut cluster = PgCluster::start_temp(&settings).expect("start cluster");
        f(&cluster);
        cluster.stop().expect("stop cluster");
    }

    #[test]
    fn live_cluster() {
        with_cluster(|cluster| {
            let version = cluster.version().unwrap();
            assert!(version.starts_with("PostgreSQL "), "{version}");

            let mut c = cluster.connect("postgres").unwrap();
            assert!(c.backend_pid() > 0);
            assert!(!c.server_version().is_empty());

            // query: several statements, NULLs, tags.
            let r = c
                .query("CREATE TEMP TABLE t(a int, b text); INSERT INTO t VALUES (1,'x'),(2,NULL); SELECT a, b FROM t ORDER BY a")
                .unwrap();
            assert_eq!(r.len(), 3);
            assert_eq!(r[1].tag, "INSERT 0 2");
            assert_eq!(r[2].columns, vec!["a", "b"]);
            assert_eq!(
                r[2].rows,
                vec![vec![Some("1".to_string()), Some("x".to_string())], vec![Some("2".to_string()), None]]
            );
            assert_eq!(c.query("").unwrap().len(), 1);

            // errors carry the SQLSTATE and leave the session usable.
            let e = c.query("SELECT * FROM no_such_table").unwrap_err();
            assert_eq!(e.sqlstate(), Some("42P01"), "{e}");
            let e = c.query("SELECT 1/0").unwrap_err();
            assert_eq!(e.sqlstate(), Some("22012"));
            assert!(e.to_string().contains("22012"), "{e}");
            assert_eq!(c.query("SELECT 1").unwrap()[0].rows, vec![vec![Some("1".to_string())]]);

            // streaming: rows are counted, not kept.
            let mut sum = 0u64;
            let done = c
                .query_rows("SELECT g, NULL::text FROM generate_series(1, 100000) g", &mut |row| {
                    assert_eq!(row.len(), 2);
                    assert!(row[1].is_none());
                    sum += std::str::from_utf8(row[0].unwrap()).unwrap().parse::<u64>().unwrap();
                })
                .unwrap();
            assert_eq!(done.rows, 100_000);
            assert_eq!(sum, 100_000 * 100_001 / 2);
            assert_eq!(done.tags, vec!["SELECT 100000"]);

            // the Connector / Connection the stress runner uses.
            let connector = cluster.connector("postgres");
            assert!(connector.describe().starts_with("postgresql 127.0.0.1:"));
            let mut conn = connector.connect().unwrap();
            assert!(conn.session_id().unwrap() > 0);
            assert!(conn.session_waits().is_none());
            conn.execute("CREATE TABLE s(a int)").unwrap();
            assert_eq!(
                conn.execute("INSERT INTO s SELECT generate_series(1,10); DELETE FROM s WHERE a <= 3").unwrap(),
                13
            );
            let err = conn.execute("INSERT INTO s VALUES ('x')").unwrap_err();
            assert!(err.contains("22P02"), "{err}");
            assert!(PgConnector { database: "nope".into(), ..connector.clone() }
                .connect()
                .unwrap_err()
                .contains("3D000"));
        });
    }
}
