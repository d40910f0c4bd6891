//! The server end to end over TCP, with a fake backend and a minimal client written here:
//! login (plain, TLS inside PRELOGIN with full or login-only encryption, TDS 8.0 strict),
//! batches with result sets, errors with lines, PRINT, RPC with OUTPUT parameters,
//! attention, transaction-manager requests, slow readers (ASYNC_NETWORK_IO), and bad
//! clients that must only lose their own connection. Plain connections run on connection
//! threads after login, TLS ones on the tokio request loop; the tests at the end check
//! which path a request took, attention timing and races, the worker limit, and that
//! shutdown ends every connection.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};
use sql::request::RpcCall;
use sql::results::{ColumnInfo, Done, DoneKind, EnvChange, Message, ResultSink};
use tds::login::{self, Login7};
use tds::packet::{self, PacketHeader, PacketType, HEADER_LEN};
use tds::prelogin::{self, PreLogin};
use tds::rpc;
use tds::tls::PreloginWrapped;
use tds::token::{decode_tokens, done_status, token_type, Token};
use tds::{Backend, BackendSession, LoginRequest, ServerConfig};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use types::{Length, SqlError, SqlType, Value};

// ---------------------------------------------------------------- fake backend

#[derive(Default)]
struct Stats {
    slow_finished: AtomicUsize,
    batches: Mutex<Vec<String>>,
    /// The name of the thread each batch ran on.
    threads: Mutex<Vec<String>>,
    sessions_opened: AtomicUsize,
    sessions_closed: AtomicUsize,
    /// Rows handed to the sink by `rows N`.
    rows_sent: AtomicUsize,
}

struct MockBackend {
    stats: Arc<Stats>,
    next_spid: AtomicUsize,
}

struct MockSession {
    spid: i32,
    cancel: Arc<AtomicBool>,
    stats: Arc<Stats>,
    tran: u64,
    db: String,
}

impl Backend for MockBackend {
    type Session = MockSession;
    fn login(&self, req: &LoginRequest) -> Result<MockSession, SqlError> {
        if req.password != "secret" {
            return Err(SqlError::new(18456, 14, 1, format!("Login failed for user '{}'.", req.user)));
        }
        self.stats.sessions_opened.fetch_add(1, Ordering::SeqCst);
        Ok(MockSession {
            spid: 51 + self.next_spid.fetch_add(1, Ordering::SeqCst) as i32,
            cancel: Arc::new(AtomicBool::new(false)),
            stats: self.stats.clone(),
            tran: 0,
            db: req.database.clone().unwrap_or_else(|| "master".into()),
        })
    }
    fn server_name(&self) -> String {
        "MOCK".into()
    }
}

fn stmt_done(rows: Option<u64>, error: bool) -> Done {
    Done { kind: DoneKind::Statement, row_count: rows, error, in_xact: false }
}

impl MockSession {
    /// A tiny command language: statements separated by ';'.
    fn run(&mut self, stmt: &str, sink: &mut dyn ResultSink) -> Result<(), sql::results::SinkError> {
        let words: Vec<&str> = stmt.split_whitespace().collect();
        match words.as_slice() {
            ["rows", n] => {
                let n: i32 = n.parse().unwrap_or(0);
                sink.columns(&[
                    ColumnInfo::new("id", SqlType::Int, false),
                    ColumnInfo::new("name", SqlType::NVarChar { len: Length::Bounded(40) }, true),
                    ColumnInfo::new("amount", SqlType::Decimal { precision: 10, scale: 2 }, true),
                ])?;
                for i in 0..n {
                    let name = if i % 2 == 1 { Value::Null } else { Value::String(format!("name {i}")) };
                    sink.row(&[
                        Value::Int(i),
                        name,
                        Value::Decimal { value: i128::from(i) * 100 + 5, precision: 10, scale: 2 },
                    ])?;
                    self.stats.rows_sent.fetch_add(1, Ordering::Relaxed);
                }
                sink.done(stmt_done(Some(n as u64), false))
            }
            ["print", rest @ ..] => {
                sink.message(&Message { error: SqlError::new(0, 0, 1, rest.join(" ")).at_line(1), info: true })?;
                sink.done(stmt_done(None, false))
            }
            ["error"] => {
                let e = SqlError::new(8134, 16, 1, "Divide by zero error encountered.").at_line(3).in_procedure("p");
                sink.message(&Message { error: e, info: false })?;
                sink.done(stmt_done(None, true))
            }
            ["fatal"] => {
                sink.message(&Message { error: SqlError::new(823, 24, 2, "I/O error."), info: false })?;
                sink.done(stmt_done(None, true))
            }
            ["slow"] => {
                // Runs until cancelled (attention or disconnect), at most 20 s.
                for _ in 0..2000 {
                    if self.cancel.load(Ordering::SeqCst) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(10));
                }
                self.stats.slow_finished.fetch_add(1, Ordering::SeqCst);
                Ok(())
            }
            ["slowrows"] => {
                sink.columns(&[ColumnInfo::new("i", SqlType::BigInt, false)])?;
                for i in 0..20_000 {
                    sink.row(&[Value::BigInt(i)])?;
                    std::thread::sleep(Duration::from_millis(1));
                }
                sink.done(stmt_done(Some(20_000), false))
            }
            ["BEGIN", "TRANSACTION", ..] => {
                self.tran = 0x1122_3344_5566_7788;
                sink.env_change(&EnvChange::BeginTransaction { descriptor: self.tran })?;
                sink.done(stmt_done(None, false))
            }
            ["COMMIT", "TRANSACTION", ..] => {
                sink.env_change(&EnvChange::CommitTransaction { descriptor: self.tran })?;
                self.tran = 0;
                sink.done(stmt_done(None, false))
            }
            [] => Ok(()),
            _ => {
                sink.message(&Message {
                    error: SqlError::new(2812, 16, 62, format!("Could not find stored procedure '{}'.", words[0]))
                        .at_line(1),
                    info: false,
                })?;
                sink.done(stmt_done(None, true))
            }
        }
    }
}

impl Drop for MockSession {
    fn drop(&mut self) {
        self.stats.sessions_closed.fetch_add(1, Ordering::SeqCst);
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
        self.stats.batches.lock().unwrap().push(sql.to_string());
        self.stats.threads.lock().unwrap().push(std::thread::current().name().unwrap_or("").to_string());
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

// ---------------------------------------------------------------- server under test

struct TestServer {
    addr: SocketAddr,
    stats: Arc<Stats>,
    cert_dir: PathBuf,
    _stop: tokio::sync::oneshot::Sender<()>,
    /// Ends when `serve_on` has returned.
    served: tokio::task::JoinHandle<()>,
}

fn temp_dir(tag: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "mesquite-tds-test-{}-{}-{}",
        std::process::id(),
        tag,
        N.fetch_add(1, Ordering::SeqCst)
    ));
    let _ = std::fs::remove_dir_all(&d);
    d
}

async fn start(configure: impl FnOnce(&mut ServerConfig)) -> TestServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let cert_dir = temp_dir("certs");
    let mut config = ServerConfig::new(addr, cert_dir.clone());
    config.workers = 4;
    configure(&mut config);
    let stats = Arc::new(Stats::default());
    let backend = Arc::new(MockBackend { stats: stats.clone(), next_spid: AtomicUsize::new(0) });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(async move {
        let r = tds::serve_on(listener, config, backend, async {
            let _ = stopped.await;
        })
        .await;
        assert!(r.is_ok(), "{r:?}");
    });
    TestServer { addr, stats, cert_dir, _stop: stop, served }
}

// ---------------------------------------------------------------- test client

trait Stream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> Stream for T {}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    Plain,
    /// PRELOGIN ENCRYPT_ON: TLS inside PRELOGIN packets, then everything encrypted.
    Tls,
    /// Same, over TLS 1.2 only.
    Tls12,
    /// PRELOGIN ENCRYPT_OFF: only the LOGIN7 packet is encrypted.
    LoginOnly,
    /// TDS 8.0: TLS first (ALPN tds/8.0).
    Strict,
}

#[derive(Debug)]
struct AcceptAny(Arc<rustls::crypto::CryptoProvider>, Arc<Mutex<Option<Vec<u8>>>>);

impl ServerCertVerifier for AcceptAny {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        *self.1.lock().unwrap() = Some(end_entity.to_vec());
        Ok(ServerCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn tls_connector(mode: Mode, seen_cert: Arc<Mutex<Option<Vec<u8>>>>) -> tokio_rustls::TlsConnector {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] =
        if mode == Mode::Tls12 { &[&rustls::version::TLS12] } else { rustls::DEFAULT_VERSIONS };
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(versions)
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AcceptAny(provider, seen_cert)))
        .with_no_client_auth();
    if mode == Mode::Strict {
        cfg.alpn_protocols = vec![b"tds/8.0".to_vec()];
    }
    tokio_rustls::TlsConnector::from(Arc::new(cfg))
}

struct Client {
    stream: Box<dyn Stream>,
    seen_cert: Option<Vec<u8>>,
}

async fn send_message(w: &mut (impl AsyncWrite + Unpin + ?Sized), ty: PacketType, payload: &[u8]) {
    w.write_all(&packet::encode_message(ty, 0, 4096, payload)).await.unwrap();
    w.flush().await.unwrap();
}

/// Reads one whole message; None at end of stream.
async fn read_message(r: &mut (impl AsyncRead + Unpin + ?Sized)) -> Option<(u8, Vec<u8>)> {
    let mut data = Vec::new();
    loop {
        let mut h = [0u8; HEADER_LEN];
        if r.read_exact(&mut h).await.is_err() {
            return None;
        }
        let h = PacketHeader::decode(&h).unwrap();
        let mut p = vec![0u8; h.payload_len()];
        r.read_exact(&mut p).await.ok()?;
        data.extend(p);
        if h.is_eom() {
            return Some((h.ty, data));
        }
    }
}

fn login7(user: &str, password: &str, mode: Mode) -> Vec<u8> {
    Login7 {
        tds_version: if mode == Mode::Strict { login::TDS_8_0 } else { login::TDS_7_4 },
        packet_size: 4096,
        option_flags1: login::FLAG1_USE_DB | login::FLAG1_SET_LANG,
        option_flags2: login::FLAG2_ODBC,
        option_flags3: login::FLAG3_EXTENSION,
        features: vec![0x0A], // UTF8_SUPPORT: expect an (empty) FEATUREEXTACK
        host_name: "testhost".into(),
        user_name: user.into(),
        password: password.into(),
        app_name: "tds-tests".into(),
        server_name: "localhost".into(),
        library_name: "test-client".into(),
        database: "appdb".into(),
        ..Login7::default()
    }
    .encode()
}

impl Client {
    /// Connects and sends PRELOGIN; returns the client before LOGIN7.
    async fn prelogin(addr: SocketAddr, mode: Mode) -> Client {
        let tcp = TcpStream::connect(addr).await.unwrap();
        tcp.set_nodelay(true).unwrap();
        let seen = Arc::new(Mutex::new(None));
        let enc = match mode {
            Mode::Plain => prelogin::ENCRYPT_NOT_SUP,
            Mode::Tls | Mode::Tls12 => prelogin::ENCRYPT_ON,
            Mode::LoginOnly => prelogin::ENCRYPT_OFF,
            Mode::Strict => prelogin::ENCRYPT_STRICT,
        };
        let pre = PreLogin {
            version: Some([1, 0, 0, 0, 0, 0]),
            encryption: Some(enc),
            instance: Some(vec![]),
            thread_id: Some(1),
            mars: Some(0),
            ..PreLogin::default()
        };
        let mut stream: Box<dyn Stream> = if mode == Mode::Strict {
            let tls = tls_connector(mode, seen.clone())
                .connect(ServerName::try_from("localhost").unwrap(), tcp)
                .await
                .unwrap();
            assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"tds/8.0"[..]));
            Box::new(tls)
        } else {
            Box::new(tcp)
        };
        send_message(&mut stream, PacketType::PreLogin, &pre.encode()).await;
        let (ty, data) = read_message(&mut stream).await.unwrap();
        assert_eq!(ty, PacketType::TabularResult as u8);
        let resp = PreLogin::decode(&data).unwrap();
        assert_eq!(resp.version.unwrap()[0], 16);
        match mode {
            Mode::Plain => assert_eq!(resp.encryption, Some(prelogin::ENCRYPT_NOT_SUP)),
            Mode::Tls | Mode::Tls12 => assert_eq!(resp.encryption, Some(prelogin::ENCRYPT_ON)),
            Mode::LoginOnly => assert_eq!(resp.encryption, Some(prelogin::ENCRYPT_OFF)),
            Mode::Strict => {}
        }
        let seen_cert = seen.lock().unwrap().clone();
        Client { stream, seen_cert }
    }

    /// PRELOGIN, TLS as the mode says, LOGIN7; returns the client and the login tokens.
    async fn login_tokens(addr: SocketAddr, mode: Mode, password: &str) -> (Client, Vec<Token>) {
        let mut c = Client::prelogin(addr, mode).await;
        let login = login7("app", password, mode);
        match mode {
            Mode::Plain | Mode::Strict => send_message(&mut c.stream, PacketType::Login7, &login).await,
            Mode::Tls | Mode::Tls12 | Mode::LoginOnly => {
                // Take the plain TCP stream back out of the box for the handshake.
                let seen = Arc::new(Mutex::new(None));
                let tcp = std::mem::replace(&mut c.stream, Box::new(tokio::io::duplex(1).0));
                let tcp: Box<dyn Stream> = tcp;
                let wrapped = PreloginWrapped::new(tcp);
                let mut tls = tls_connector(mode, seen.clone())
                    .connect(ServerName::try_from("localhost").unwrap(), wrapped)
                    .await
                    .unwrap();
                tls.get_mut().0.set_passthrough();
                let seen_cert = seen.lock().unwrap().clone();
                c.seen_cert = seen_cert;
                send_message(&mut tls, PacketType::Login7, &login).await;
                if mode == Mode::LoginOnly {
                    let (wrapped, _) = tls.into_inner();
                    c.stream = wrapped.into_inner();
                } else {
                    c.stream = Box::new(tls);
                }
            }
        }
        let (ty, data) = c.read().await.expect("login response");
        assert_eq!(ty, PacketType::TabularResult as u8);
        (c, decode_tokens(&data).unwrap())
    }

    async fn login(addr: SocketAddr, mode: Mode) -> Client {
        let (c, tokens) = Client::login_tokens(addr, mode, "secret").await;
        assert!(tokens.iter().any(|t| matches!(t, Token::LoginAck { .. })), "{tokens:?}");
        c
    }

    async fn send(&mut self, ty: PacketType, payload: &[u8]) {
        send_message(&mut self.stream, ty, payload).await;
    }

    async fn read(&mut self) -> Option<(u8, Vec<u8>)> {
        let r = tokio::time::timeout(Duration::from_secs(20), read_message(&mut self.stream))
            .await
            .expect("response in time");
        if r.is_none() {
            for e in diag::errorlog::recent(50) {
                eprintln!("errorlog: {} {}", e.process_info, e.text);
            }
        }
        r
    }

    async fn batch(&mut self, sql: &str) -> Vec<Token> {
        let mut b = rpc::encode_all_headers(0, 1);
        b.extend(sql.encode_utf16().flat_map(|u| u.to_le_bytes()));
        self.send(PacketType::SqlBatch, &b).await;
        let (_, data) = self.read().await.expect("batch response");
        decode_tokens(&data).unwrap()
    }

    /// Whether the server closed the connection (read sees end of stream).
    async fn is_closed(&mut self) -> bool {
        let mut b = [0u8; 1];
        matches!(tokio::time::timeout(Duration::from_secs(10), self.stream.read(&mut b)).await, Ok(Ok(0)) | Ok(Err(_)))
    }
}

fn dones(tokens: &[Token]) -> Vec<tds::token::DoneToken> {
    tokens.iter().filter_map(|t| if let Token::Done(d) = t { Some(*d) } else { None }).collect()
}

fn rows(tokens: &[Token]) -> Vec<Vec<Value>> {
    tokens.iter().filter_map(|t| if let Token::Row(r) = t { Some(r.clone()) } else { None }).collect()
}

/// The checks every successful login response must pass.
fn check_login_response(tokens: &[Token]) {
    let envs: Vec<_> = tokens.iter().filter_map(|t| t.env_strings()).collect();
    assert!(envs.contains(&(1, "appdb".into(), "master".into())), "{envs:?}");
    assert!(envs.contains(&(2, "us_english".into(), "".into())));
    assert!(envs.contains(&(4, "4096".into(), "4096".into())));
    assert!(tokens.contains(&Token::EnvChange { ty: 7, new: vec![0x09, 0x04, 0xD0, 0x00, 0x34], old: vec![] }));
    let infos: Vec<_> =
        tokens.iter().filter_map(|t| if let Token::Info(m) = t { Some(m.clone()) } else { None }).collect();
    assert_eq!(infos[0].number, 5701);
    assert_eq!(infos[0].message, "Changed database context to 'appdb'.");
    assert_eq!(infos[1].number, 5703);
    assert_eq!(infos[1].message, "Changed language setting to us_english.");
    let ack = tokens.iter().find(|t| matches!(t, Token::LoginAck { .. })).unwrap();
    assert_eq!(
        ack,
        &Token::LoginAck {
            interface: 1,
            tds_version: 0x7400_0004,
            prog_name: "Microsoft SQL Server".into(),
            version: [16, 0, 3, 0xE8]
        }
    );
    assert!(tokens.contains(&Token::FeatureExtAck(vec![])));
    let d = dones(tokens);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].status, 0);
}

// ---------------------------------------------------------------- tests

/// A client asking for Always Encrypted (COLUMNENCRYPTION, version 2) gets version 1
/// acknowledged, and from then on every COLMETADATA has an empty CEK table after its
/// column count; a client that does not ask gets neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn column_encryption_is_acknowledged_and_colmetadata_carries_a_cek_table() {
    let srv = start(|_| {}).await;
    for asked in [true, false] {
        let mut c = Client::prelogin(srv.addr, Mode::Plain).await;
        let login = Login7 {
            tds_version: login::TDS_7_4,
            packet_size: 4096,
            option_flags3: login::FLAG3_EXTENSION,
            features: if asked { vec![login::FEATURE_COLUMN_ENCRYPTION, 0x0A] } else { vec![0x0A] },
            column_encryption: asked.then_some(2),
            user_name: "app".into(),
            password: "secret".into(),
            database: "appdb".into(),
            ..Login7::default()
        };
        c.send(PacketType::Login7, &login.encode()).await;
        let (_, data) = c.read().await.expect("login response");
        let tokens = decode_tokens(&data).unwrap();
        let want: Vec<u8> = if asked { vec![login::FEATURE_COLUMN_ENCRYPTION] } else { vec![] };
        assert!(tokens.contains(&Token::FeatureExtAck(want)), "{tokens:?}");
        // The acknowledged version is 1: FeatureId 04, length 1, data 01.
        let ack = data.windows(2).position(|w| w == [0xAE, 0x04]);
        if asked {
            let at = ack.expect("FEATUREEXTACK with COLUMNENCRYPTION");
            assert_eq!(&data[at + 2..at + 8], &[1, 0, 0, 0, 1, 0xFF]);
        }
        // "rows 1": COLMETADATA 81, count 3, then (with AE) the CEK count 0, then the
        // first column's UserType (u32 0).
        let mut b = rpc::encode_all_headers(0, 1);
        b.extend("rows 1".encode_utf16().flat_map(|u| u.to_le_bytes()));
        c.send(PacketType::SqlBatch, &b).await;
        let (_, data) = c.read().await.expect("batch response");
        assert_eq!(data[0], 0x81);
        assert_eq!(&data[1..3], &[3, 0]);
        let flags_at = if asked {
            assert_eq!(&data[3..5], &[0, 0], "CEK table count");
            9
        } else {
            7
        };
        assert_eq!(&data[flags_at - 4..flags_at], &[0, 0, 0, 0], "UserType");
        if !asked {
            let t = decode_tokens(&data).unwrap();
            assert!(matches!(&t[0], Token::ColMetadata(cols) if cols.len() == 3), "{t:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_login_batch_errors_and_rpc() {
    let srv = start(|_| {}).await;
    let (mut c, tokens) = Client::login_tokens(srv.addr, Mode::Plain, "secret").await;
    check_login_response(&tokens);

    // A result set: NULLs come as NBCROW and decode back to NULL.
    let t = c.batch("rows 5").await;
    let Token::ColMetadata(cols) = &t[0] else { panic!("{t:?}") };
    assert_eq!(cols.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["id", "name", "amount"]);
    let r = rows(&t);
    assert_eq!(r.len(), 5);
    assert_eq!(r[1], vec![Value::Int(1), Value::Null, Value::Decimal { value: 105, precision: 10, scale: 2 }]);
    assert_eq!(r[2][1], Value::String("name 2".into()));
    let d = dones(&t);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].status, done_status::COUNT);
    assert_eq!(d[0].row_count, 5);

    // PRINT, an error with its line and procedure, MORE on all DONEs but the last.
    let t = c.batch("print hello world; error; rows 1").await;
    let info = t.iter().find_map(|t| if let Token::Info(m) = t { Some(m.clone()) } else { None }).unwrap();
    assert_eq!(info.message, "hello world");
    let err = t.iter().find_map(|t| if let Token::Error(m) = t { Some(m.clone()) } else { None }).unwrap();
    assert_eq!((err.number, err.class, err.state, err.line), (8134, 16, 1, 3));
    assert_eq!((err.server.as_str(), err.procedure.as_str()), ("MOCK", "p"));
    assert_eq!(err.message, "Divide by zero error encountered.");
    let d = dones(&t);
    assert_eq!(
        d.iter().map(|d| d.status).collect::<Vec<_>>(),
        [done_status::MORE, done_status::MORE | done_status::ERROR, done_status::COUNT]
    );

    // A large result set spans many packets.
    let t = c.batch("rows 3000").await;
    assert_eq!(rows(&t).len(), 3000);

    // RPC: sp_executesql by id with an OUTPUT parameter.
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend([0xFF, 0xFF, 10, 0, 0, 0]);
    let param = |b: &mut Vec<u8>, name: &str, status: u8, ti: &[u8], v: &[u8]| {
        b.push(name.encode_utf16().count() as u8);
        b.extend(name.encode_utf16().flat_map(|u| u.to_le_bytes()));
        b.push(status);
        b.extend_from_slice(ti);
        b.extend_from_slice(v);
    };
    param(&mut b, "@a", 0, &[0x26, 4], &[4, 7, 0, 0, 0]);
    param(
        &mut b,
        "@s",
        0,
        &[0xE7, 0xFF, 0xFF, 0x09, 0x04, 0xD0, 0x00, 0x34],
        &[4, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, b'o', 0, b'k', 0, 0, 0, 0, 0],
    );
    param(&mut b, "@out", 1, &[0x26, 4], &[0]);
    c.send(PacketType::Rpc, &b).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert_eq!(rows(&t), vec![vec![Value::Int(7), Value::String("ok".into())]]);
    assert!(t.contains(&Token::ReturnStatus(0)));
    let rv = t.iter().find(|t| matches!(t, Token::ReturnValue { .. })).unwrap();
    assert!(matches!(rv, Token::ReturnValue { name, value: Value::Int(42), status: 1, .. } if name == "@out"));
    let d = dones(&t);
    assert_eq!(d[0].token, token_type::DONEINPROC);
    assert_eq!(d[0].status & done_status::MORE, done_status::MORE);
    assert_eq!(d.last().unwrap().token, token_type::DONEPROC);
    assert_eq!(d.last().unwrap().status, 0);

    // A malformed RPC body is answered with an error; the connection stays.
    let mut bad = rpc::encode_all_headers(0, 1);
    bad.extend([0xFF, 0xFF, 10, 0, 0, 0, 2, b'@', 0]);
    c.send(PacketType::Rpc, &bad).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    let err = t.iter().find_map(|t| if let Token::Error(m) = t { Some(m.clone()) } else { None }).unwrap();
    assert_eq!(err.number, 8016);
    assert_eq!(dones(&t).last().unwrap().status, done_status::ERROR);
    assert_eq!(rows(&c.batch("rows 2").await).len(), 2);

    // A malformed bulk-load message is answered with 4002 the same way.
    c.send(PacketType::BulkLoad, &[1, 2, 3]).await;
    let (_, data) = c.read().await.unwrap();
    assert!(decode_tokens(&data).unwrap().iter().any(|t| matches!(t, Token::Error(m) if m.number == 4002)));
    assert_eq!(rows(&c.batch("rows 1").await).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login_failure_sends_18456_and_closes() {
    let srv = start(|_| {}).await;
    let (mut c, tokens) = Client::login_tokens(srv.addr, Mode::Plain, "wrong").await;
    let err = tokens.iter().find_map(|t| if let Token::Error(m) = t { Some(m.clone()) } else { None }).unwrap();
    assert_eq!((err.number, err.class), (18456, 14));
    assert_eq!(err.message, "Login failed for user 'app'.");
    assert_eq!(dones(&tokens)[0].status, done_status::ERROR);
    assert!(!tokens.iter().any(|t| matches!(t, Token::LoginAck { .. })));
    assert!(c.is_closed().await);
    assert!(diag::errorlog::recent(200).iter().any(|e| e.text.contains("Login failed for user 'app'.")));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_inside_prelogin_full_and_login_only() {
    let srv = start(|_| {}).await;
    let cert_pem = std::fs::read(srv.cert_dir.join(tds::tls::GENERATED_CERT_FILE)).ok();
    for mode in [Mode::Tls, Mode::Tls12, Mode::LoginOnly] {
        let (mut c, tokens) = Client::login_tokens(srv.addr, mode, "secret").await;
        check_login_response(&tokens);
        // The certificate generated into cert_dir is the one presented.
        let pem =
            cert_pem.clone().or_else(|| std::fs::read(srv.cert_dir.join(tds::tls::GENERATED_CERT_FILE)).ok()).unwrap();
        let der = rustls::pki_types::pem::PemObject::from_pem_slice(&pem).map(|c: CertificateDer| c.to_vec()).unwrap();
        assert_eq!(c.seen_cert.as_deref(), Some(&der[..]), "{mode:?}");
        let t = c.batch("rows 2000").await;
        assert_eq!(rows(&t).len(), 2000, "{mode:?}");
        assert_eq!(rows(&c.batch("rows 3").await).len(), 3);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tds8_strict() {
    let srv = start(|c| c.require_encryption = true).await;
    let (mut c, tokens) = Client::login_tokens(srv.addr, Mode::Strict, "secret").await;
    check_login_response(&tokens);
    assert!(c.seen_cert.is_some());
    assert_eq!(rows(&c.batch("rows 10").await).len(), 10);
    // With require_encryption, a client that cannot encrypt is refused at PRELOGIN.
    let tcp = TcpStream::connect(srv.addr).await.unwrap();
    let mut c2 = Client { stream: Box::new(tcp), seen_cert: None };
    let pre = PreLogin {
        version: Some([1, 0, 0, 0, 0, 0]),
        encryption: Some(prelogin::ENCRYPT_NOT_SUP),
        ..PreLogin::default()
    };
    c2.send(PacketType::PreLogin, &pre.encode()).await;
    let (_, data) = c2.read().await.unwrap();
    assert_eq!(PreLogin::decode(&data).unwrap().encryption, Some(prelogin::ENCRYPT_REQ));
    assert!(c2.is_closed().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attention_cancels_a_running_batch() {
    let srv = start(|_| {}).await;
    // Plain: on a connection thread; TLS: on the tokio request loop.
    for mode in [Mode::Plain, Mode::Tls] {
        attention_scenario(&srv, mode).await;
    }
}

async fn attention_scenario(srv: &TestServer, mode: Mode) {
    let mut c = Client::login(srv.addr, mode).await;
    let finished = srv.stats.slow_finished.load(Ordering::SeqCst);
    c.send(PacketType::SqlBatch, &batch_payload("slow")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    c.send(PacketType::Attention, &[]).await;
    // The cancelled request's response ends (no DONE(ATTN) in it), then the
    // acknowledgement comes as a message of its own, as from SQL Server (tedious reads it
    // as the message after the response).
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    let d = dones(&t);
    assert!(d.iter().all(|d| d.status & done_status::ATTN == 0), "{mode:?} {t:?}");
    assert_eq!(d.last().unwrap().status & done_status::MORE, 0, "{mode:?} {t:?}");
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert_eq!(dones(&t).iter().map(|d| d.status).collect::<Vec<_>>(), [done_status::ATTN], "{mode:?} {t:?}");
    assert_eq!(t.len(), 1, "{mode:?} {t:?}");
    assert_eq!(srv.stats.slow_finished.load(Ordering::SeqCst), finished + 1, "{mode:?}");

    // Streaming rows: cancelled mid-stream, the response ends, then the acknowledgement.
    c.send(PacketType::SqlBatch, &batch_payload("slowrows")).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    c.send(PacketType::Attention, &[]).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    let n = rows(&t).len();
    assert!(n > 0 && n < 20_000, "{mode:?}: {n} rows");
    assert!(dones(&t).iter().all(|d| d.status & done_status::ATTN == 0), "{mode:?} {t:?}");
    let (_, data) = c.read().await.unwrap();
    assert_eq!(dones(&decode_tokens(&data).unwrap())[0].status, done_status::ATTN, "{mode:?}");

    // The connection keeps working, and an attention with nothing running is
    // acknowledged on its own.
    assert_eq!(rows(&c.batch("rows 4").await).len(), 4);
    c.send(PacketType::Attention, &[]).await;
    let (_, data) = c.read().await.unwrap();
    assert_eq!(dones(&decode_tokens(&data).unwrap())[0].status, done_status::ATTN, "{mode:?}");
    assert_eq!(rows(&c.batch("rows 1").await).len(), 1, "{mode:?}");
}

fn batch_payload(sql: &str) -> Vec<u8> {
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend(sql.encode_utf16().flat_map(|u| u.to_le_bytes()));
    b
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transaction_manager_requests_run_as_tsql() {
    let srv = start(|_| {}).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    let tm = |payload: &[u8]| {
        let mut b = rpc::encode_all_headers(0, 1);
        b.extend_from_slice(payload);
        b
    };
    c.send(PacketType::TransactionManager, &tm(&[5, 0, 0, 0])).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert!(
        t.contains(&Token::EnvChange { ty: 8, new: 0x1122_3344_5566_7788u64.to_le_bytes().to_vec(), old: vec![] }),
        "{t:?}"
    );
    assert_eq!(dones(&t).last().unwrap().status, 0);

    let mut b = rpc::encode_all_headers(0x1122_3344_5566_7788, 1);
    b.extend([7, 0, 0, 0]);
    c.send(PacketType::TransactionManager, &b).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert!(t.contains(&Token::EnvChange { ty: 9, new: vec![], old: 0x1122_3344_5566_7788u64.to_le_bytes().to_vec() }));

    // Isolation level and name travel as T-SQL.
    // The name's length is a count of bytes (B_VARBYTE), as tedious and SqlClient send it.
    c.send(PacketType::TransactionManager, &tm(&[5, 0, 4, 4, b't', 0, b'x', 0])).await;
    c.read().await.unwrap();
    // TM_GET_DTC_ADDRESS: an empty result set.
    c.send(PacketType::TransactionManager, &tm(&[0, 0, 0, 0])).await;
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert!(matches!(&t[0], Token::ColMetadata(cols) if cols.len() == 1));
    assert!(rows(&t).is_empty());
    // Promote is refused with an error, the connection stays.
    c.send(PacketType::TransactionManager, &tm(&[6, 0])).await;
    let (_, data) = c.read().await.unwrap();
    assert!(decode_tokens(&data).unwrap().iter().any(|t| matches!(t, Token::Error(_))));
    let batches = srv.stats.batches.lock().unwrap().clone();
    assert_eq!(
        batches,
        [
            "BEGIN TRANSACTION",
            "COMMIT TRANSACTION",
            "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE; BEGIN TRANSACTION [tx]"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_clients_lose_only_their_own_connection() {
    let srv = start(|c| c.max_message_size = 64 * 1024).await;
    let mut good = Client::login(srv.addr, Mode::Plain).await;

    // Garbage instead of PRELOGIN.
    let mut s = TcpStream::connect(srv.addr).await.unwrap();
    s.write_all(&[0x55, 0x01, 0x00, 0x10, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]).await.unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf)).await.unwrap().unwrap_or(0), 0);

    // A packet whose length is below the header size, after login.
    let mut bad = Client::login(srv.addr, Mode::Plain).await;
    bad.stream.write_all(&[0x01, 0x01, 0x00, 0x04, 0, 0, 0, 0]).await.unwrap();
    assert!(bad.is_closed().await);

    // A message over the size limit.
    let mut big = Client::login(srv.addr, Mode::Plain).await;
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend(vec![b'x'; 100 * 1024]);
    let _ = big.stream.write_all(&packet::encode_message(PacketType::SqlBatch, 0, 4096, &b)).await;
    // SQL Server's 7836 (severity 20) comes before the connection closes.
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), big.stream.read_to_end(&mut got)).await.unwrap();
    assert!(got.windows(4).any(|w| w == 7836u32.to_le_bytes()), "no 7836 in {got:?}");

    // A truncated packet, then the client goes away.
    let mut trunc = Client::login(srv.addr, Mode::Plain).await;
    trunc.stream.write_all(&[0x01, 0x01, 0x00, 0x64, 0, 0, 0, 0, 1, 2, 3]).await.unwrap();
    drop(trunc);

    // A second request while one is running (no MARS).
    let mut mars = Client::login(srv.addr, Mode::Plain).await;
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend("slow".encode_utf16().flat_map(|u| u.to_le_bytes()));
    mars.send(PacketType::SqlBatch, &b).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    mars.send(PacketType::SqlBatch, &b).await;
    assert!(mars.is_closed().await);

    // A LOGIN7 with bad offsets.
    let mut l = Client::prelogin(srv.addr, Mode::Plain).await;
    let mut login = login7("app", "secret", Mode::Plain);
    login[40..42].copy_from_slice(&5000u16.to_le_bytes());
    l.send(PacketType::Login7, &login).await;
    assert!(l.is_closed().await);

    // A client that disconnects mid-request: its batch is cancelled.
    let before = srv.stats.slow_finished.load(Ordering::SeqCst);
    let mut gone = Client::login(srv.addr, Mode::Plain).await;
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend("slow".encode_utf16().flat_map(|u| u.to_le_bytes()));
    gone.send(PacketType::SqlBatch, &b).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    drop(gone);
    for _ in 0..500 {
        if srv.stats.slow_finished.load(Ordering::SeqCst) > before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // (The MARS client's batch ended before its connection was closed, so before `before`.)
    assert_eq!(srv.stats.slow_finished.load(Ordering::SeqCst), before + 1);

    // Through all of it the good connection kept working.
    assert_eq!(rows(&good.batch("rows 7").await).len(), 7);
    let log = diag::errorlog::recent(500);
    assert!(log.iter().any(|e| e.text.contains("17836")), "{log:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_reader_waits_on_async_network_io() {
    let srv = start(|_| {}).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    let before = diag::waits::instance_waits().get(diag::waits::WaitType::ASYNC_NETWORK_IO).waiting_tasks_count;
    let mut b = rpc::encode_all_headers(0, 1);
    // About 12 MB of rows: more than loopback socket buffers can hold once autotuned
    // (60,000 rows sometimes fit, and then the worker never waited).
    b.extend("rows 600000".encode_utf16().flat_map(|u| u.to_le_bytes()));
    c.send(PacketType::SqlBatch, &b).await;
    // Do not read for a while: socket buffers and the response queue fill up.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (_, data) = c.read().await.unwrap();
    assert_eq!(rows(&decode_tokens(&data).unwrap()).len(), 600000);
    let after = diag::waits::instance_waits().get(diag::waits::WaitType::ASYNC_NETWORK_IO).waiting_tasks_count;
    assert!(after > before, "ASYNC_NETWORK_IO {before} -> {after}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fatal_error_closes_the_connection() {
    let srv = start(|_| {}).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    let t = c.batch("fatal").await;
    assert!(t.iter().any(|t| matches!(t, Token::Error(m) if m.class == 24)));
    // The last DONE says SRVERROR: drivers report the error as the server's, and drop
    // the connection from their pools.
    let last = dones(&t).last().copied().expect("a DONE");
    assert_ne!(last.status & done_status::SRVERROR, 0, "{last:?}");
    assert!(c.is_closed().await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_connection_is_acknowledged() {
    let srv = start(|_| {}).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    let mut b = rpc::encode_all_headers(0, 1);
    b.extend("rows 1".encode_utf16().flat_map(|u| u.to_le_bytes()));
    let mut p = packet::encode_message(PacketType::SqlBatch, 0, 4096, &b);
    p[1] |= packet::status::RESET_CONNECTION;
    c.stream.write_all(&p).await.unwrap();
    let (_, data) = c.read().await.unwrap();
    let t = decode_tokens(&data).unwrap();
    assert_eq!(t[0], Token::EnvChange { ty: 18, new: vec![], old: vec![] });
    assert_eq!(rows(&t).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn login7_without_prelogin_and_shutdown() {
    let srv = start(|_| {}).await;
    let tcp = TcpStream::connect(srv.addr).await.unwrap();
    let mut c = Client { stream: Box::new(tcp), seen_cert: None };
    c.send(PacketType::Login7, &login7("app", "secret", Mode::Plain)).await;
    let (_, data) = c.read().await.unwrap();
    check_login_response(&decode_tokens(&data).unwrap());
    assert_eq!(rows(&c.batch("rows 2").await).len(), 2);
    // Shutting the server down closes its connections and stops listening.
    let addr = srv.addr;
    drop(srv);
    assert!(c.is_closed().await);
    let mut refused = false;
    for _ in 0..100 {
        if TcpStream::connect(addr).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused);
}

#[test]
fn run_blocking_serves_until_shutdown() {
    // A free port: bind, read, release (a small window another process could take it).
    let addr = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let stats = Arc::new(Stats::default());
    let backend = Arc::new(MockBackend { stats, next_spid: AtomicUsize::new(0) });
    let mut config = ServerConfig::new(addr, temp_dir("blocking"));
    config.workers = 2;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = std::thread::spawn(move || {
        tds::run_blocking(config, backend, async {
            let _ = stopped.await;
        })
    });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let mut c = None;
        for _ in 0..200 {
            if TcpStream::connect(addr).await.is_ok() {
                c = Some(Client::login(addr, Mode::Tls).await);
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let mut c = c.expect("server started");
        assert_eq!(rows(&c.batch("rows 3").await).len(), 3);
    });
    stop.send(()).unwrap();
    assert!(server.join().unwrap().is_ok());
}

/// TLS inside PRELOGIN is TLS 1.2 even for a client that offers 1.3 (SQL Server has TLS
/// 1.3 only with TDS 8.0; mssql-jdbc's 1.3 handshake inside PRELOGIN fails); TDS 8.0
/// negotiates 1.3.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_versions_7x_is_1_2_and_strict_is_1_3() {
    let srv = start(|_| {}).await;
    let c = Client::prelogin(srv.addr, Mode::Tls).await;
    let tls = tls_connector(Mode::Tls, Arc::new(Mutex::new(None)))
        .connect(ServerName::try_from("localhost").unwrap(), PreloginWrapped::new(c.stream))
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_2));

    let tcp = TcpStream::connect(srv.addr).await.unwrap();
    let tls = tls_connector(Mode::Strict, Arc::new(Mutex::new(None)))
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.protocol_version(), Some(rustls::ProtocolVersion::TLSv1_3));
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"tds/8.0"[..]));
}

// ---------------------------------------------------------------- connection threads

/// The names of the threads the batches so far ran on.
fn batch_threads(srv: &TestServer) -> Vec<String> {
    srv.stats.threads.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_connections_run_on_threads_of_their_own_tls_ones_do_not() {
    let srv = start(|_| {}).await;
    for (mode, threaded) in [(Mode::Plain, true), (Mode::LoginOnly, true), (Mode::Tls, false), (Mode::Strict, false)] {
        let mut c = Client::login(srv.addr, mode).await;
        assert_eq!(rows(&c.batch("rows 2500").await).len(), 2500, "{mode:?}");
        let name = batch_threads(&srv).last().cloned().unwrap();
        // A connection thread is named after its session (spid51, ...).
        assert_eq!(name.starts_with("spid"), threaded, "{mode:?} ran on {name:?}");
        // Two requests in a row on the same thread.
        assert_eq!(rows(&c.batch("rows 1").await).len(), 1);
        assert_eq!(batch_threads(&srv).last(), Some(&name), "{mode:?}");
    }
    // A request of large packets (32 KB, read straight into the packet buffer) and
    // several of them (100 KB), on a connection thread.
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    let text = format!("rows 2;{}", " ".repeat(50_000));
    c.stream.write_all(&packet::encode_message(PacketType::SqlBatch, 0, 32767, &batch_payload(&text))).await.unwrap();
    let (_, data) = c.read().await.unwrap();
    assert_eq!(rows(&decode_tokens(&data).unwrap()).len(), 2);
    assert_eq!(srv.stats.batches.lock().unwrap().last(), Some(&text));
    assert!(batch_threads(&srv).last().unwrap().starts_with("spid"));

    // The switch: every connection on the tokio request loop.
    let srv = start(|c| c.connection_threads = false).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    assert_eq!(rows(&c.batch("rows 3").await).len(), 3);
    let name = batch_threads(&srv).last().cloned().unwrap();
    assert!(!name.starts_with("spid"), "{name:?}");
    attention_scenario(&srv, Mode::Plain).await;
}

/// A long request (like WAITFOR DELAY '00:00:10') is cancelled within a second of the
/// attention, the attention is acknowledged, and the connection is reusable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attention_on_a_connection_thread_is_prompt() {
    let srv = start(|_| {}).await;
    let mut c = Client::login(srv.addr, Mode::Plain).await;
    for round in 1..=3 {
        c.send(PacketType::SqlBatch, &batch_payload("slow")).await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let sent = Instant::now();
        c.send(PacketType::Attention, &[]).await;
        let (_, data) = c.read().await.unwrap();
        assert!(dones(&decode_tokens(&data).unwrap()).iter().all(|d| d.status & done_status::ATTN == 0));
        let (_, data) = c.read().await.unwrap();
        assert_eq!(dones(&decode_tokens(&data).unwrap())[0].status, done_status::ATTN);
        let took = sent.elapsed();
        assert!(took < Duration::from_secs(1), "round {round}: acknowledged after {took:?}");
        assert_eq!(srv.stats.slow_finished.load(Ordering::SeqCst), round);
        assert_eq!(rows(&c.batch("rows 3").await).len(), 3);
    }
}

/// Attentions that arrive right behind short requests (in the same write, or as the
/// request finishes): each is acknowledged exactly once, after the request's response,
/// and never cancels a later request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attention_racing_the_end_of_a_request() {
    let srv = start(|_| {}).await;
    for mode in [Mode::Plain, Mode::Tls] {
        let mut c = Client::login(srv.addr, mode).await;
        for i in 0..150u32 {
            let batch = packet::encode_message(PacketType::SqlBatch, 0, 4096, &batch_payload("rows 50"));
            let attn = packet::encode_message(PacketType::Attention, 0, 4096, &[]);
            if i % 3 == 0 {
                let mut both = batch;
                both.extend(attn);
                c.stream.write_all(&both).await.unwrap();
            } else {
                c.stream.write_all(&batch).await.unwrap();
                c.stream.flush().await.unwrap();
                if i % 3 == 2 {
                    tokio::time::sleep(Duration::from_micros(u64::from(i) * 10)).await;
                }
                c.stream.write_all(&attn).await.unwrap();
            }
            c.stream.flush().await.unwrap();
            // The response (whole or cut short), then the acknowledgement on its own.
            let (_, data) = c.read().await.unwrap();
            let t = decode_tokens(&data).unwrap();
            assert!(rows(&t).len() <= 50);
            assert!(dones(&t).iter().all(|d| d.status & done_status::ATTN == 0), "{mode:?} {i}: {t:?}");
            let (_, data) = c.read().await.unwrap();
            assert_eq!(
                dones(&decode_tokens(&data).unwrap()).iter().map(|d| d.status).collect::<Vec<_>>(),
                [done_status::ATTN],
                "{mode:?} {i}"
            );
            // Nothing left over cancels the next request.
            assert_eq!(rows(&c.batch("rows 5").await).len(), 5, "{mode:?} {i}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_disconnecting_mid_request_on_a_connection_thread() {
    let srv = start(|_| {}).await;
    let mut good = Client::login(srv.addr, Mode::Plain).await;
    let mut gone = Client::login(srv.addr, Mode::Plain).await;
    gone.send(PacketType::SqlBatch, &batch_payload("slow")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let closed = srv.stats.sessions_closed.load(Ordering::SeqCst);
    let dropped = Instant::now();
    drop(gone);
    while srv.stats.slow_finished.load(Ordering::SeqCst) == 0 && dropped.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Cancelled at once, not after its 20 s, and the session is closed.
    assert!(dropped.elapsed() < Duration::from_secs(1), "{:?}", dropped.elapsed());
    while srv.stats.sessions_closed.load(Ordering::SeqCst) == closed && dropped.elapsed() < Duration::from_secs(5) {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(srv.stats.sessions_closed.load(Ordering::SeqCst), closed + 1);
    assert!(diag::errorlog::recent(500).iter().any(|e| e.text.contains("disconnected while a request was running")));
    assert_eq!(rows(&good.batch("rows 2").await).len(), 2);
}

/// With one worker, a second connection's request waits (THREADPOOL) until the first
/// one's ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn worker_limit_holds_on_connection_threads() {
    let srv = start(|c| c.workers = 1).await;
    let mut a = Client::login(srv.addr, Mode::Plain).await;
    let mut b = Client::login(srv.addr, Mode::Plain).await;
    let before = diag::waits::instance_waits().get(diag::waits::WaitType::THREADPOOL).waiting_tasks_count;
    a.send(PacketType::SqlBatch, &batch_payload("slow")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    b.send(PacketType::SqlBatch, &batch_payload("rows 1")).await;
    let mut byte = [0u8; 1];
    // Nothing arrives while `a` holds the only worker (no bytes are lost on timeout).
    assert!(tokio::time::timeout(Duration::from_millis(400), b.stream.read(&mut byte)).await.is_err());
    a.send(PacketType::Attention, &[]).await;
    a.read().await.unwrap();
    a.read().await.unwrap();
    let (_, data) = b.read().await.unwrap();
    assert_eq!(rows(&decode_tokens(&data).unwrap()).len(), 1);
    let after = diag::waits::instance_waits().get(diag::waits::WaitType::THREADPOOL).waiting_tasks_count;
    assert!(after > before, "THREADPOOL {before} -> {after}");
}

/// Shutdown cancels running requests (whose responses still end), wakes idle connection
/// threads, and returns only once every session is closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_connection_threads() {
    let srv = start(|_| {}).await;
    let mut idle = Client::login(srv.addr, Mode::Plain).await;
    let mut busy = Client::login(srv.addr, Mode::Plain).await;
    let mut tls = Client::login(srv.addr, Mode::Tls).await;
    assert_eq!(rows(&idle.batch("rows 1").await).len(), 1);
    assert_eq!(rows(&tls.batch("rows 1").await).len(), 1);
    busy.send(PacketType::SqlBatch, &batch_payload("slow")).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let TestServer { stats, _stop, served, .. } = srv;
    let stopping = Instant::now();
    drop(_stop);
    tokio::time::timeout(Duration::from_secs(5), served).await.expect("serve_on returned").unwrap();
    assert!(stopping.elapsed() < Duration::from_secs(2), "{:?}", stopping.elapsed());
    assert_eq!(stats.slow_finished.load(Ordering::SeqCst), 1);
    assert_eq!(stats.sessions_opened.load(Ordering::SeqCst), 3);
    assert_eq!(stats.sessions_closed.load(Ordering::SeqCst), 3);
    assert!(idle.is_closed().await);
    // The cancelled request's response still ends, then the connection closes.
    let (_, data) = busy.read().await.unwrap();
    let d = dones(&decode_tokens(&data).unwrap());
    assert_eq!(d.last().unwrap().status & (done_status::MORE | done_status::ATTN), 0, "{d:?}");
    assert!(busy.is_closed().await);
    assert!(tls.is_closed().await);
}

/// On a current-thread runtime plain connections still get threads, and TLS ones run
/// their requests on blocking workers that hand packets over a channel.
#[tokio::test]
async fn current_thread_runtime_serves_both_paths() {
    let srv = start(|_| {}).await;
    let mut plain = Client::login(srv.addr, Mode::Plain).await;
    assert_eq!(rows(&plain.batch("rows 3000").await).len(), 3000);
    assert!(batch_threads(&srv).last().unwrap().starts_with("spid"));
    for mode in [Mode::Plain, Mode::Tls] {
        attention_scenario(&srv, mode).await;
    }
    let mut tls = Client::login(srv.addr, Mode::Tls).await;
    assert_eq!(rows(&tls.batch("rows 3000").await).len(), 3000);
    assert!(!batch_threads(&srv).last().unwrap().starts_with("spid"));
    let TestServer { stats, _stop, served, .. } = srv;
    drop(_stop);
    tokio::time::timeout(Duration::from_secs(5), served).await.expect("serve_on returned").unwrap();
    assert_eq!(stats.sessions_closed.load(Ordering::SeqCst), stats.sessions_opened.load(Ordering::SeqCst));
}

/// A connection thread blocked writing to a client that does not read is ended too,
/// after the shutdown grace period.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_a_thread_blocked_on_a_client_that_does_not_read() {
    let srv = start(|_| {}).await;
    let mut stuck = Client::login(srv.addr, Mode::Plain).await;
    stuck.send(PacketType::SqlBatch, &batch_payload("rows 3000000")).await;
    // Wait until the rows stop coming for a second: the thread is blocked in a write
    // (the client's kernel makes room in bursts for a while before it is full).
    let (mut last, mut still) = (0, 0);
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = srv.stats.rows_sent.load(Ordering::Relaxed);
        still = if now > 0 && now == last { still + 1 } else { 0 };
        if still == 10 {
            break;
        }
        last = now;
    }
    assert!(last > 0 && last < 3_000_000, "{last}");
    let TestServer { stats, _stop, served, .. } = srv;
    drop(_stop);
    tokio::time::timeout(Duration::from_secs(10), served).await.expect("serve_on returned").unwrap();
    assert_eq!(stats.sessions_closed.load(Ordering::SeqCst), 1);
    drop(stuck);
}
