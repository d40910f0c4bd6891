//! The network server: a tokio runtime accepts connections and runs their login. After
//! login a plain TCP connection (no TLS, or TLS for LOGIN7 only) moves to a thread of its
//! own ([`crate::conn_thread`]) that reads, runs and answers its requests with blocking
//! socket calls. A TLS connection stays on its tokio task: requests run inline
//! (`block_in_place`) and write their packets to the socket from the request's thread, or,
//! on a current-thread runtime, run on `spawn_blocking` workers that hand packet groups to
//! the connection's task through a bounded channel. On every path at most `workers`
//! requests run at once (like SQLOS workers), and a write that waits for a slow client is
//! recorded as ASYNC_NETWORK_IO.
//!
//! Life of a connection:
//! 1. PRELOGIN (or, when the first byte is 0x16, a TDS 8.0 TLS handshake with ALPN
//!    "tds/8.0" and then PRELOGIN inside TLS); the answer carries the negotiated
//!    encryption ([`crate::prelogin::negotiate`]).
//! 2. For TDS 7.x with encryption, the TLS handshake inside PRELOGIN packets.
//! 3. LOGIN7 → [`Backend::login`] on a worker → the login response (ENVCHANGE database,
//!    INFO 5701, ENVCHANGE collation, ENVCHANGE language, INFO 5703, LOGINACK,
//!    FEATUREEXTACK when asked for, ENVCHANGE packet size, DONE) or ERROR + DONE(ERROR)
//!    and close. The whole of steps 1-3 must finish within [`LOGIN_TIMEOUT`].
//! 4. Requests, one at a time (no MARS): SQL batch, RPC, transaction manager. While a
//!    request runs, a reader task (TLS) or the attention watcher (connection threads)
//!    notices anything the client sends, so an attention (type 6) sets the session's
//!    cancel flag at once; the response then ends and a message of its own, DONE(ATTN),
//!    acknowledges the attention (so does one that arrives after the response ended).
//!
//! A framing error (bad header, wrong packet type, oversized message), a client that
//! disconnects mid-request, or a fatal error (severity >= 20) ends that connection only,
//! with a line in the error log.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use diag::errorlog;
use diag::waits::{begin_wait, record_wait, WaitType};
use sql::results::{ColumnInfo, Done, DoneKind, ResultSink};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadHalf, WriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_rustls::TlsAcceptor;
use types::{SqlError, SqlType};

use crate::attention::AttentionWatcher;
use crate::backend::{Backend, BackendSession};
use crate::conn_thread;
use crate::error::TdsError;
use crate::login::{self, Login7};
use crate::packet::{self, Message, PacketHeader, PacketType, Reassembler, HEADER_LEN};
use crate::prelogin::{self, EncryptionMode, PreLogin};
use crate::rpc::{self, TmRequest};
use crate::sink::{ClientGone, PacketOut, ResponseTail, TokenSink};
use crate::tls::{self, PreloginWrapped};
use crate::token::{self, env_type, token_type};

/// Time a client has from connecting to the end of LOGIN7.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(60);
/// Default limit on one request message (SQL Server accepts 65,536 x packet size; this
/// bounds the memory one connection can make the server hold).
pub const DEFAULT_MAX_MESSAGE_SIZE: usize = 64 * 1024 * 1024;
/// At shutdown, how long connection threads have to end their cancelled responses before
/// their sockets are closed under them (a client that does not read would block them).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);
/// Packet groups a worker may queue ahead of the socket before it waits
/// (ASYNC_NETWORK_IO): with [`PACKET_GROUP_BYTES`], at most 128 KB per connection.
const RESPONSE_QUEUE: usize = 4;
/// A worker hands packets to the connection task in groups of about this many bytes:
/// one channel message, one wake-up and one socket write per group instead of per
/// 4 KB packet.
pub(crate) const PACKET_GROUP_BYTES: usize = 32 * 1024;

#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub addr: SocketAddr,
    /// PEM certificate chain and private key; None to use the generated one.
    pub cert: Option<(PathBuf, PathBuf)>,
    /// Where a generated self-signed certificate is kept.
    pub cert_dir: PathBuf,
    /// Refuse clients that cannot encrypt, and encrypt everything for those that offer
    /// login-only encryption.
    pub require_encryption: bool,
    /// The largest packet size granted to a client (512..=32767).
    pub max_packet_size: u32,
    /// Requests (and logins) running at once.
    pub workers: usize,
    /// The largest request message accepted; larger ones close the connection.
    pub max_message_size: usize,
    /// Run plain TCP connections on a thread each after login; false keeps every
    /// connection on the tokio request loop.
    pub connection_threads: bool,
    /// The dedicated admin connection's listener (SQL Server: port 1434 on the loopback
    /// address only); None turns it off. A DAC login must be a sysadmin, at most one is
    /// connected, and its login and requests take a worker of their own, so a DBA can
    /// always get in when every worker is taken.
    pub dac_addr: Option<SocketAddr>,
}

impl ServerConfig {
    /// SQL Server's defaults: plain or encrypted at the client's choice, packets up to
    /// 32767 bytes, SQL Server's default max worker threads for the machine's CPUs.
    pub fn new(addr: SocketAddr, cert_dir: PathBuf) -> ServerConfig {
        let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
        ServerConfig {
            addr,
            cert: None,
            cert_dir,
            require_encryption: false,
            max_packet_size: 32767,
            workers: default_max_workers(cores),
            max_message_size: DEFAULT_MAX_MESSAGE_SIZE,
            connection_threads: true,
            dac_addr: Some(SocketAddr::from(([127, 0, 0, 1], DAC_PORT))),
        }
    }
}

/// The dedicated admin connection's default port.
pub const DAC_PORT: u16 = 1434;

/// SQL Server's default `max worker threads` (64-bit, 2016 and later): 512 up to 4
/// logical CPUs, 512 + 16 per CPU over 4 up to 64 CPUs, 512 + 32 per CPU over 4 beyond. A request holds its
/// worker while it waits (on a lock, WAITFOR, a client that does not read), as in SQL
/// Server, so the pool must be large enough that a pile-up of waiting requests never
/// keeps out the one that would end it (the dedicated admin connection bypasses it).
pub fn default_max_workers(cpus: usize) -> usize {
    match cpus {
        0..=4 => 512,
        5..=64 => 512 + (cpus - 4) * 16,
        _ => 512 + (cpus - 4) * 32,
    }
}

/// A stream the connection can use after login, whatever carries it.
trait AsyncRw: AsyncRead + AsyncWrite + Unpin + Send {}
impl<T: AsyncRead + AsyncWrite + Unpin + Send> AsyncRw for T {}
type BoxStream = Box<dyn AsyncRw>;

/// What the server's connections share.
pub(crate) struct Shared<B> {
    backend: Arc<B>,
    tls_7x: TlsAcceptor,
    tls_strict: TlsAcceptor,
    require_encryption: bool,
    max_packet_size: u32,
    pub(crate) max_message: usize,
    pub(crate) workers: Arc<Semaphore>,
    /// The dedicated admin connection's worker (and one for a second DAC login, which
    /// the engine refuses with 17810).
    dac_workers: Arc<Semaphore>,
    /// Recent failed logins per client address (see [`login_delay`]).
    login_failures: std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, (u32, Instant)>>,
    pub(crate) server_name: String,
    /// The connections in their request loop, so that shutdown can stop requests running
    /// inline on a runtime thread (which aborting the task cannot) and end connection
    /// threads; shutdown waits until it is empty.
    live: std::sync::Mutex<std::collections::HashMap<u64, Live>>,
    next_conn: std::sync::atomic::AtomicU64,
    /// Set (under the `live` lock) when shutdown begins: no connection registers after.
    pub(crate) stopping: AtomicBool,
    /// Watches connection threads' sockets for attention; None when connection threads
    /// are off (`ServerConfig::connection_threads`, or the watcher could not start).
    attention: Option<AttentionWatcher>,
}

/// A connection in its request loop, as shutdown sees it.
pub(crate) struct Live {
    pub(crate) cancel: Arc<AtomicBool>,
    /// A connection thread's socket, shut down to wake the thread.
    pub(crate) socket: Option<Arc<std::net::TcpStream>>,
}

impl<B> Shared<B> {
    /// Registers a connection for shutdown; None when the server is stopping already.
    pub(crate) fn register_live(&self, live: Live) -> Option<u64> {
        let id = self.next_conn.fetch_add(1, Ordering::Relaxed);
        let mut map = self.live.lock().unwrap_or_else(|e| e.into_inner());
        if self.stopping.load(Ordering::Acquire) {
            return None;
        }
        map.insert(id, live);
        Some(id)
    }

    pub(crate) fn unregister_live(&self, id: u64) {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).remove(&id);
    }

    /// Cancels every running request and wakes every connection thread blocked in a
    /// read; a cancelled request still ends its response.
    fn begin_shutdown(&self) {
        let map = self.live.lock().unwrap_or_else(|e| e.into_inner());
        self.stopping.store(true, Ordering::Release);
        for live in map.values() {
            live.cancel.store(true, Ordering::Release);
            if let Some(sock) = &live.socket {
                let _ = sock.shutdown(std::net::Shutdown::Read);
            }
        }
    }

    /// Closes the sockets of connection threads still running: a write blocked on a
    /// client that does not read fails.
    fn close_thread_sockets(&self) {
        let map = self.live.lock().unwrap_or_else(|e| e.into_inner());
        for sock in map.values().filter_map(|l| l.socket.as_ref()) {
            let _ = sock.shutdown(std::net::Shutdown::Both);
        }
    }

    fn live_count(&self) -> usize {
        self.live.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// Serves on `config.addr` until `shutdown` completes.
pub async fn serve<B: Backend>(
    config: ServerConfig,
    backend: Arc<B>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let listener = TcpListener::bind(config.addr).await?;
    serve_on(listener, config, backend, shutdown).await
}

/// Serves on an already bound listener (tests bind port 0 and read the address).
pub async fn serve_on<B: Backend>(
    listener: TcpListener,
    config: ServerConfig,
    backend: Arc<B>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let (certs, key) = tls::load_or_generate_cert(config.cert.as_ref(), &config.cert_dir)?;
    let tls_7x = TlsAcceptor::from(tls::server_config(certs.clone(), key.clone_key(), false)?);
    let tls_strict = TlsAcceptor::from(tls::server_config(certs, key, true)?);
    let shared = Arc::new(Shared {
        server_name: backend.server_name(),
        backend,
        tls_7x,
        tls_strict,
        require_encryption: config.require_encryption,
        max_packet_size: config.max_packet_size.clamp(512, 32767),
        max_message: config.max_message_size.max(4096),
        workers: Arc::new(Semaphore::new(config.workers.max(1))),
        dac_workers: Arc::new(Semaphore::new(2)),
        login_failures: std::sync::Mutex::new(std::collections::HashMap::new()),
        live: std::sync::Mutex::new(std::collections::HashMap::new()),
        next_conn: std::sync::atomic::AtomicU64::new(1),
        stopping: AtomicBool::new(false),
        attention: if config.connection_threads { start_watcher() } else { None },
    });
    if let Ok(addr) = listener.local_addr() {
        errorlog::log(
            "Server",
            &format!(
                "Server is listening on [ {} <ipv{}> {} ].",
                addr.ip(),
                if addr.is_ipv4() { 4 } else { 6 },
                addr.port()
            ),
        );
    }
    let dac = match config.dac_addr {
        Some(addr) => match TcpListener::bind(addr).await {
            Ok(l) => {
                let port = l.local_addr().map_or(addr.port(), |a| a.port());
                errorlog::log(
                    "Server",
                    &format!(
                        "Dedicated admin connection support was established for listening locally on port {port}."
                    ),
                );
                Some(l)
            }
            Err(e) => {
                errorlog::log(
                    "Server",
                    &format!("Could not start the dedicated admin connection listener on {addr}: {e}."),
                );
                None
            }
        },
        None => None,
    };
    let mut shutdown = std::pin::pin!(shutdown);
    let mut connections = JoinSet::new();
    loop {
        let endpoint = |dedicated_admin: bool| Endpoint {
            workers: if dedicated_admin { shared.dac_workers.clone() } else { shared.workers.clone() },
            dedicated_admin,
        };
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((tcp, peer)) => {
                    connections.spawn(handle_connection(shared.clone(), tcp, peer, endpoint(false)));
                }
                Err(e) => {
                    // Out of file descriptors and the like: log, back off, keep serving.
                    errorlog::log("Server", &format!("Error accepting a connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            accepted = async { dac.as_ref().expect("guarded").accept().await }, if dac.is_some() => match accepted {
                Ok((tcp, peer)) => {
                    connections.spawn(handle_connection(shared.clone(), tcp, peer, endpoint(true)));
                }
                Err(e) => {
                    errorlog::log("Server", &format!("Error accepting a dedicated admin connection: {e}"));
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    shared.begin_shutdown();
    connections.abort_all();
    while connections.join_next().await.is_some() {}
    // Connection threads end once their request notices the cancel flag (or at once when
    // idle); their sessions are closed by then.
    let waiting = Instant::now();
    let mut closed = false;
    while shared.live_count() > 0 {
        if !closed && waiting.elapsed() >= SHUTDOWN_GRACE {
            shared.close_thread_sockets();
            closed = true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    if let Some(w) = &shared.attention {
        w.stop();
    }
    Ok(())
}

fn start_watcher() -> Option<AttentionWatcher> {
    match AttentionWatcher::start() {
        Ok(w) => Some(w),
        Err(e) => {
            errorlog::log("Server", &format!("Connection threads are off: the attention watcher did not start ({e})."));
            None
        }
    }
}

/// Runs the server on a runtime of its own until `shutdown` completes (e.g.
/// `async { tokio::signal::ctrl_c().await.ok(); }`).
pub fn run_blocking<B: Backend>(
    config: ServerConfig,
    backend: Arc<B>,
    shutdown: impl Future<Output = ()>,
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .thread_name("tds-io")
        .max_blocking_threads(config.workers.max(1) + 8)
        .enable_all()
        .build()?;
    let r = rt.block_on(serve(config, backend, shutdown));
    rt.shutdown_timeout(Duration::from_secs(5));
    r
}

/// Why a connection ended abnormally (logged, never sent).
#[derive(Debug)]
pub(crate) enum ConnError {
    Io(io::Error),
    Protocol(TdsError),
    /// Logged already or not worth logging.
    Quiet,
    Other(String),
}

impl From<io::Error> for ConnError {
    fn from(e: io::Error) -> Self {
        ConnError::Io(e)
    }
}
impl From<TdsError> for ConnError {
    fn from(e: TdsError) -> Self {
        ConnError::Protocol(e)
    }
}

/// Which listener a connection came through: the workers its login and requests take.
pub(crate) struct Endpoint {
    /// The shared pool (`ServerConfig::workers`), or the dedicated admin connection's own
    /// worker: a DAC login and its requests never queue behind the others.
    workers: Arc<Semaphore>,
    dedicated_admin: bool,
}

async fn handle_connection<B: Backend>(shared: Arc<Shared<B>>, tcp: TcpStream, peer: SocketAddr, ep: Endpoint) {
    let _ = tcp.set_nodelay(true);
    let mut spid_label = String::from("Logon");
    let r = connection(&shared, tcp, peer, &mut spid_label, &ep).await;
    log_connection_end(&spid_label, peer, r);
}

/// The error log line for a connection that ended abnormally.
pub(crate) fn log_connection_end(spid_label: &str, peer: SocketAddr, r: Result<(), ConnError>) {
    let text = match r {
        Ok(()) | Err(ConnError::Quiet) => return,
        Err(ConnError::Io(e)) if e.kind() == io::ErrorKind::UnexpectedEof => {
            format!("The client closed the connection in the middle of a message. [CLIENT: {}]", peer.ip())
        }
        Err(ConnError::Io(e)) => format!("Network error: {e}. The connection has been closed. [CLIENT: {}]", peer.ip()),
        Err(ConnError::Protocol(e)) => format!(
            "Error: 17836, Severity: 20. The incoming TDS stream is invalid ({e}); the connection has been closed. [CLIENT: {}]",
            peer.ip()
        ),
        Err(ConnError::Other(s)) => format!("{s} [CLIENT: {}]", peer.ip()),
    };
    errorlog::log(spid_label, &text);
}

async fn read_packet<R: AsyncRead + Unpin + ?Sized>(r: &mut R) -> Result<Option<(PacketHeader, Vec<u8>)>, ConnError> {
    let mut hb = [0u8; HEADER_LEN];
    let mut filled = 0;
    while filled < HEADER_LEN {
        let n = r.read(&mut hb[filled..]).await?;
        if n == 0 {
            if filled == 0 {
                return Ok(None);
            }
            return Err(ConnError::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        filled += n;
    }
    let h = PacketHeader::decode(&hb)?;
    let mut payload = vec![0u8; h.payload_len()];
    r.read_exact(&mut payload).await?;
    Ok(Some((h, payload)))
}

/// Reads packets until a message is complete. None at a clean end of stream.
async fn read_message<R: AsyncRead + Unpin + ?Sized>(
    r: &mut R,
    reasm: &mut Reassembler,
) -> Result<Option<Message>, ConnError> {
    loop {
        let Some((h, payload)) = read_packet(r).await? else {
            if reasm.in_progress() {
                return Err(ConnError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
            return Ok(None);
        };
        if let Some(m) = reasm.push(&h, &payload)? {
            return Ok(Some(m));
        }
    }
}

async fn write_packets<W: AsyncWrite + Unpin + ?Sized>(w: &mut W, packets: &[Vec<u8>]) -> io::Result<()> {
    match packets {
        [] => {}
        [p] => w.write_all(p).await?,
        _ => {
            // One write (one system call on a plain socket) for the whole group.
            let mut all = Vec::with_capacity(packets.iter().map(Vec::len).sum());
            for p in packets {
                all.extend_from_slice(p);
            }
            w.write_all(&all).await?;
        }
    }
    w.flush().await
}

/// What carries a connection after login.
enum Transport {
    /// Plain TCP from here on: may move to a connection thread.
    Plain(TcpStream),
    Tls(BoxStream),
}

impl Transport {
    fn rw(&mut self) -> &mut dyn AsyncRw {
        match self {
            Transport::Plain(t) => t,
            Transport::Tls(b) => &mut **b,
        }
    }

    fn into_box(self) -> BoxStream {
        match self {
            Transport::Plain(t) => Box::new(t),
            Transport::Tls(b) => b,
        }
    }
}

/// The negotiated state at the end of login.
struct LoggedIn<S> {
    stream: Transport,
    session: S,
    packet_size: u32,
    tds_version: u32,
    /// Always Encrypted (COLUMNENCRYPTION) was acknowledged.
    column_encryption: bool,
}

async fn connection<B: Backend>(
    shared: &Arc<Shared<B>>,
    tcp: TcpStream,
    peer: SocketAddr,
    label: &mut String,
    ep: &Endpoint,
) -> Result<(), ConnError> {
    let logged_in = match tokio::time::timeout(LOGIN_TIMEOUT, login_phase(shared, tcp, peer, ep)).await {
        Ok(r) => r?,
        Err(_) => {
            return Err(ConnError::Other("The login did not finish in time; the connection has been closed.".into()))
        }
    };
    let Some(li) = logged_in else { return Ok(()) };
    *label = format!("spid{}", li.session.spid());
    let li = match (li.stream, &shared.attention) {
        (Transport::Plain(tcp), Some(watcher)) => {
            let LoggedIn { session, packet_size, tds_version, column_encryption, .. } = li;
            let conn = conn_thread::PlainConnection {
                tcp,
                session,
                packet_size,
                tds_version,
                column_encryption,
                peer,
                workers: ep.workers.clone(),
            };
            // From here on the thread logs how the connection ended.
            return conn_thread::start(shared, watcher, conn);
        }
        (stream, _) => LoggedIn { stream, ..li },
    };
    request_loop(shared, li, &ep.workers).await
}

/// Steps 1-3. Ok(None) when the client went away or the login was refused (already
/// answered and logged).
async fn login_phase<B: Backend>(
    shared: &Arc<Shared<B>>,
    tcp: TcpStream,
    peer: SocketAddr,
    ep: &Endpoint,
) -> Result<Option<LoggedIn<B::Session>>, ConnError> {
    let local = tcp.local_addr().ok();
    let mut reasm = Reassembler::new(shared.max_message.min(1024 * 1024));
    let mut first = [0u8; 1];
    if tcp.peek(&mut first).await? == 0 {
        return Ok(None);
    }
    if first[0] == 0x16 {
        // TDS 8.0: TLS first, then PRELOGIN and LOGIN7 inside it.
        let mut tls = shared.tls_strict.accept(tcp).await?;
        let Some(msg) = read_message(&mut tls, &mut reasm).await? else { return Ok(None) };
        if msg.ty == PacketType::Login7 {
            return finish_login(shared, Transport::Tls(Box::new(tls)), msg, peer, local, ep).await;
        }
        if msg.ty != PacketType::PreLogin {
            return Err(TdsError::UnexpectedPacket(msg.ty as u8).into());
        }
        PreLogin::decode(&msg.data)?;
        let resp = PreLogin::server_response(prelogin::ENCRYPT_ON).encode();
        write_packets(&mut tls, &[packet::encode_message(PacketType::TabularResult, 0, 4096, &resp)]).await?;
        let Some(msg) = read_message(&mut tls, &mut reasm).await? else { return Ok(None) };
        return finish_login(shared, Transport::Tls(Box::new(tls)), msg, peer, local, ep).await;
    }

    let mut tcp = tcp;
    let Some(msg) = read_message(&mut tcp, &mut reasm).await? else { return Ok(None) };
    if msg.ty == PacketType::Login7 && !shared.require_encryption {
        // Old clients may log in without PRELOGIN: no encryption then.
        return finish_login(shared, Transport::Plain(tcp), msg, peer, local, ep).await;
    }
    if msg.ty != PacketType::PreLogin {
        return Err(TdsError::UnexpectedPacket(msg.ty as u8).into());
    }
    let pre = PreLogin::decode(&msg.data)?;
    let (answer, mode) =
        prelogin::negotiate(pre.encryption.unwrap_or(prelogin::ENCRYPT_NOT_SUP), shared.require_encryption);
    let resp = PreLogin::server_response(answer).encode();
    write_packets(&mut tcp, &[packet::encode_message(PacketType::TabularResult, 0, 4096, &resp)]).await?;
    match mode {
        EncryptionMode::Refuse => Err(ConnError::Other(
            "The client does not support encryption but the server requires it; the connection has been closed.".into(),
        )),
        EncryptionMode::None => {
            let Some(msg) = read_message(&mut tcp, &mut reasm).await? else { return Ok(None) };
            finish_login(shared, Transport::Plain(tcp), msg, peer, local, ep).await
        }
        EncryptionMode::Full => {
            let mut tls = shared.tls_7x.accept(PreloginWrapped::new(tcp)).await?;
            tls.get_mut().0.set_passthrough();
            let Some(msg) = read_message(&mut tls, &mut reasm).await? else { return Ok(None) };
            finish_login(shared, Transport::Tls(Box::new(tls)), msg, peer, local, ep).await
        }
        EncryptionMode::LoginOnly => {
            // Only the first LOGIN7 packet is encrypted; the rest of the connection is
            // plain (what drivers do for ENCRYPT_OFF).
            let mut tls = shared.tls_7x.accept(PreloginWrapped::new(tcp)).await?;
            tls.get_mut().0.set_passthrough();
            let Some((h, payload)) = read_packet(&mut tls).await? else { return Ok(None) };
            let first = reasm.push(&h, &payload)?;
            let (wrapped, _) = tls.into_inner();
            let mut tcp = wrapped.into_inner();
            let msg = match first {
                Some(m) => m,
                None => match read_message(&mut tcp, &mut reasm).await? {
                    Some(m) => m,
                    None => return Ok(None),
                },
            };
            finish_login(shared, Transport::Plain(tcp), msg, peer, local, ep).await
        }
    }
}

async fn finish_login<B: Backend>(
    shared: &Arc<Shared<B>>,
    mut stream: Transport,
    msg: Message,
    peer: SocketAddr,
    local: Option<SocketAddr>,
    ep: &Endpoint,
) -> Result<Option<LoggedIn<B::Session>>, ConnError> {
    match msg.ty {
        PacketType::Login7 => {}
        PacketType::Sspi | PacketType::FedAuthToken => {
            let e = SqlError::new(
                18452,
                14,
                1,
                "Login failed. The login is from an untrusted domain and cannot be used with Integrated authentication.",
            );
            send_login_error(shared, stream.rw(), &e).await;
            return Err(ConnError::Other("Login failed: integrated authentication is not supported.".into()));
        }
        other => return Err(TdsError::UnexpectedPacket(other as u8).into()),
    }
    let login = Login7::decode(&msg.data)?;
    if login.wants_integrated_security() && login.user_name.is_empty() {
        let e = SqlError::new(
            18452,
            14,
            1,
            "Login failed. The login is from an untrusted domain and cannot be used with Integrated authentication.",
        );
        send_login_error(shared, stream.rw(), &e).await;
        errorlog::log(
            "Logon",
            &format!("Login failed. Integrated authentication is not supported. [CLIENT: {}]", peer.ip()),
        );
        return Ok(None);
    }
    let packet_size = match login.packet_size {
        0 => packet::DEFAULT_PACKET_SIZE,
        n => n.clamp(512, shared.max_packet_size),
    };
    let mut req = login.to_request(packet_size);
    req.client_addr = Some(peer);
    req.local_addr = local;
    req.encrypted = matches!(stream, Transport::Tls(_));
    let backend = shared.backend.clone();
    req.dedicated_admin = ep.dedicated_admin;
    // Repeated failures from one address are answered more and more slowly (without
    // holding a worker), so that guessing passwords is slow.
    let delay = login_delay(&shared.login_failures, peer.ip());
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let permit = acquire_worker(&ep.workers).await?;
    let result = tokio::task::spawn_blocking(move || {
        let _permit = permit;
        backend.login(&req)
    })
    .await
    .map_err(|e| ConnError::Other(format!("The login worker failed: {e}")))?;
    let session = match result {
        Ok(s) => {
            shared.login_failures.lock().unwrap_or_else(|e| e.into_inner()).remove(&peer.ip());
            s
        }
        Err(e) => {
            login_failed(&shared.login_failures, peer.ip());
            errorlog::log(
                "Logon",
                &format!(
                    "Error: {}, Severity: {}, State: {}. {} [CLIENT: {}]",
                    e.number,
                    e.severity,
                    e.state,
                    e.message,
                    peer.ip()
                ),
            );
            send_login_error(shared, stream.rw(), &e).await;
            return Ok(None);
        }
    };
    let tds_version = login::negotiated_version(login.tds_version);
    let spid = session.spid().clamp(0, i32::from(u16::MAX)) as u16;
    let db = session.database_name();
    let mut b = Vec::with_capacity(512);
    token::put_env_strings(&mut b, env_type::DATABASE, &db, "master");
    let info = |n: i32, state: u8, text: String| SqlError {
        number: n,
        severity: 0,
        state,
        message: text,
        procedure: None,
        line: 1,
    };
    token::put_message(
        &mut b,
        true,
        &info(5701, 2, format!("Changed database context to '{db}'.")),
        &shared.server_name,
    );
    // The login database's collation, as SQL Server sends it.
    let collation = crate::types::collation_bytes(&session.database_collation());
    token::put_env_bytes(&mut b, env_type::SQL_COLLATION, &collation, &[]);
    token::put_env_strings(&mut b, env_type::LANGUAGE, "us_english", "");
    token::put_message(
        &mut b,
        true,
        &info(5703, 1, "Changed language setting to us_english.".into()),
        &shared.server_name,
    );
    token::put_loginack(&mut b, tds_version);
    // Always Encrypted version 1 (no enclaves): no column is ever encrypted, so drivers
    // that insist on it work, sending parameters in plaintext as
    // sp_describe_parameter_encryption tells them.
    let column_encryption = login.column_encryption.is_some_and(|v| v >= 1);
    if login.option_flags3 & login::FLAG3_EXTENSION != 0 {
        token::put_feature_ext_ack(&mut b, column_encryption.then_some(1));
    }
    let ps = packet_size.to_string();
    token::put_env_strings(&mut b, env_type::PACKET_SIZE, &ps, &ps);
    token::DoneToken { token: token_type::DONE, status: 0, cur_cmd: 0, row_count: 0 }.encode(&mut b);
    // The login response still uses the pre-login packet size.
    let resp = packet::encode_message(PacketType::TabularResult, spid, packet::DEFAULT_PACKET_SIZE, &b);
    write_packets(stream.rw(), &[resp]).await?;
    Ok(Some(LoggedIn { stream, session, packet_size, tds_version: login.tds_version, column_encryption }))
}

/// Failed logins from one address before its logins are slowed down.
const LOGIN_FAILURES_FREE: u32 = 5;
/// Failures older than this are forgotten.
const LOGIN_FAILURE_MEMORY: Duration = Duration::from_secs(60);

type LoginFailures = std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, (u32, Instant)>>;

/// How long to hold a login from `ip` before checking it: nothing for the first
/// [`LOGIN_FAILURES_FREE`] recent failures, then 100 ms doubling per failure, at most 5 s.
fn login_delay(failures: &LoginFailures, ip: std::net::IpAddr) -> Duration {
    let map = failures.lock().unwrap_or_else(|e| e.into_inner());
    match map.get(&ip) {
        Some(&(n, last)) if n > LOGIN_FAILURES_FREE && last.elapsed() < LOGIN_FAILURE_MEMORY => {
            let doublings = (n - LOGIN_FAILURES_FREE - 1).min(6);
            (Duration::from_millis(100) * (1 << doublings)).min(Duration::from_secs(5))
        }
        _ => Duration::ZERO,
    }
}

fn login_failed(failures: &LoginFailures, ip: std::net::IpAddr) {
    let mut map = failures.lock().unwrap_or_else(|e| e.into_inner());
    // Bounded: many addresses at once only forget older failures.
    if map.len() >= 10_000 {
        map.retain(|_, (_, last)| last.elapsed() < LOGIN_FAILURE_MEMORY);
    }
    let e = map.entry(ip).or_insert((0, Instant::now()));
    if e.1.elapsed() >= LOGIN_FAILURE_MEMORY {
        e.0 = 0;
    }
    e.0 += 1;
    e.1 = Instant::now();
}

/// The response to a request larger than the server accepts (`max_message_size`):
/// SQL Server's 7836 at severity 20, which ends the connection, so that the client
/// learns why instead of seeing the connection reset.
pub(crate) fn too_large_response(spid: u16, packet_size: u32, server_name: &str) -> Vec<u8> {
    let e = SqlError::new(
        7836,
        20,
        1,
        "A fatal error occurred while reading the input stream from the network. The maximum number of network packets in one request was exceeded. Try using bulk insert, increasing network packet size, or reducing the size of the request. The session will be terminated.",
    );
    let mut b = Vec::new();
    token::put_message(&mut b, false, &e, server_name);
    token::DoneToken { token: token_type::DONE, status: token::done_status::ERROR, cur_cmd: 0, row_count: 0 }
        .encode(&mut b);
    packet::encode_message(PacketType::TabularResult, spid, packet_size, &b)
}

async fn send_login_error<B>(shared: &Shared<B>, stream: &mut dyn AsyncRw, e: &SqlError) {
    let mut b = Vec::new();
    token::put_message(&mut b, false, e, &shared.server_name);
    token::DoneToken { token: token_type::DONE, status: token::done_status::ERROR, cur_cmd: 0, row_count: 0 }
        .encode(&mut b);
    let resp = packet::encode_message(PacketType::TabularResult, 0, packet::DEFAULT_PACKET_SIZE, &b);
    let _ = write_packets(stream, &[resp]).await;
    let _ = stream.shutdown().await;
}

/// A worker slot; waiting for one is a THREADPOOL wait.
async fn acquire_worker(sem: &Arc<Semaphore>) -> Result<tokio::sync::OwnedSemaphorePermit, ConnError> {
    if let Ok(p) = sem.clone().try_acquire_owned() {
        return Ok(p);
    }
    let start = Instant::now();
    let p = sem.clone().acquire_owned().await.map_err(|_| ConnError::Quiet)?;
    record_wait(WaitType::THREADPOOL, start.elapsed(), Duration::ZERO);
    Ok(p)
}

/// What the reader task reports.
enum ReaderEvent {
    Message(Message),
    Attention,
    Closed,
    Failed(ConnError),
}

/// Reads packets for the whole post-login life of the connection. An attention sets the
/// cancel flag here, before anything else can delay it.
async fn reader_task(
    mut rd: ReadHalf<BoxStream>,
    tx: mpsc::Sender<ReaderEvent>,
    cancel: Arc<AtomicBool>,
    busy: Arc<AtomicBool>,
    max_message: usize,
) {
    let mut reasm = Reassembler::new(max_message);
    loop {
        let ev = match read_packet(&mut rd).await {
            Ok(None) => {
                if reasm.in_progress() {
                    ReaderEvent::Failed(ConnError::Io(io::ErrorKind::UnexpectedEof.into()))
                } else {
                    ReaderEvent::Closed
                }
            }
            Ok(Some((h, _))) if h.ty == PacketType::Attention as u8 => {
                cancel.store(true, Ordering::Release);
                if tx.send(ReaderEvent::Attention).await.is_err() {
                    return;
                }
                continue;
            }
            Ok(Some((h, payload))) => match reasm.push(&h, &payload) {
                Ok(Some(m)) => {
                    if busy.load(Ordering::Acquire) {
                        // A second request while one runs inline (no MARS): stop the
                        // running one; the connection task then closes the connection.
                        cancel.store(true, Ordering::Release);
                    }
                    ReaderEvent::Message(m)
                }
                Ok(None) => continue,
                Err(e) => ReaderEvent::Failed(e.into()),
            },
            Err(e) => ReaderEvent::Failed(e),
        };
        let last = !matches!(ev, ReaderEvent::Message(_));
        if last {
            // The connection is over from the reader's side: stop any running request.
            cancel.store(true, Ordering::Release);
        }
        if tx.send(ev).await.is_err() || last {
            return;
        }
    }
}

/// What a worker sends to its connection.
enum Outbound {
    Packets(Vec<Vec<u8>>),
    /// The end of the response, with the session handed back: the connection task goes
    /// on as soon as this arrives, without a second wake-up to join the worker.
    Final(Vec<Vec<u8>>, ResponseTail, Box<dyn std::any::Any + Send>),
}

/// The worker's end of the response channel: packets are grouped (see
/// [`PACKET_GROUP_BYTES`]); the last group travels with the response's end.
struct ChannelOut {
    tx: mpsc::Sender<Outbound>,
    group: Vec<Vec<u8>>,
    group_bytes: usize,
}

impl ChannelOut {
    fn new(tx: mpsc::Sender<Outbound>) -> ChannelOut {
        ChannelOut { tx, group: Vec::new(), group_bytes: 0 }
    }

    fn send_group(&mut self) -> Result<(), ClientGone> {
        if self.group.is_empty() {
            return Ok(());
        }
        self.group_bytes = 0;
        let group = Outbound::Packets(std::mem::take(&mut self.group));
        match self.tx.try_send(group) {
            Ok(()) => Ok(()),
            Err(mpsc::error::TrySendError::Full(g)) => {
                // The client is not reading fast enough.
                let w = begin_wait(WaitType::ASYNC_NETWORK_IO);
                let r = self.tx.blocking_send(g).map_err(|_| ClientGone);
                w.finish();
                r
            }
            Err(mpsc::error::TrySendError::Closed(_)) => Err(ClientGone),
        }
    }
}

impl PacketOut for ChannelOut {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        self.group_bytes += packet.len();
        self.group.push(packet);
        if self.group_bytes >= PACKET_GROUP_BYTES {
            self.send_group()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), ClientGone> {
        self.send_group()
    }
}

/// A request's packets, grouped into writes of about [`PACKET_GROUP_BYTES`] made from the
/// request's own thread (a connection thread's socket, or an inline tokio request). A
/// write that waits 1 ms or more for the client is ASYNC_NETWORK_IO; the blocked write
/// is the backpressure. The first failed write is kept, and every later send fails.
pub(crate) struct GroupedWrites {
    pub(crate) group: Vec<Vec<u8>>,
    group_bytes: usize,
    pub(crate) failed: Option<io::Error>,
    /// The buffers of the last group written, for the sink to reuse (`PacketOut::reclaim`).
    written: Vec<Vec<u8>>,
}

impl GroupedWrites {
    pub(crate) fn new() -> GroupedWrites {
        GroupedWrites { group: Vec::new(), group_bytes: 0, failed: None, written: Vec::new() }
    }

    /// A buffer of a packet written out.
    pub(crate) fn reclaim(&mut self) -> Option<Vec<u8>> {
        self.written.pop()
    }

    pub(crate) fn send(
        &mut self,
        packet: Vec<u8>,
        write: impl FnOnce(&[Vec<u8>]) -> io::Result<()>,
    ) -> Result<(), ClientGone> {
        if self.failed.is_some() {
            return Err(ClientGone);
        }
        self.group_bytes += packet.len();
        self.group.push(packet);
        if self.group_bytes >= PACKET_GROUP_BYTES {
            self.write_group(write)?;
        }
        Ok(())
    }

    pub(crate) fn write_group(&mut self, write: impl FnOnce(&[Vec<u8>]) -> io::Result<()>) -> Result<(), ClientGone> {
        if self.failed.is_some() {
            return Err(ClientGone);
        }
        if self.group.is_empty() {
            return Ok(());
        }
        // The group's vector and its packets' buffers come back for the next group.
        let group = std::mem::replace(&mut self.group, std::mem::take(&mut self.written));
        self.group.clear();
        self.group_bytes = 0;
        // The write may block on the client: a wait (the scheduler goes first), shown as
        // the request's current wait while it blocks. A socket with room takes a group
        // in microseconds; 1 ms or more means the client's receive window was full and
        // we waited for it to read, and only that is counted.
        let wait = begin_wait(WaitType::ASYNC_NETWORK_IO);
        let r = write(&group);
        self.written = group;
        wait.finish_if_longer(Duration::from_millis(1));
        r.map_err(|e| {
            self.failed = Some(e);
            ClientGone
        })
    }
}

/// The packets of a request running inline on a TLS connection (see `request_loop`),
/// written to the socket from the request's thread through the runtime handle.
struct SocketOut<'a> {
    wr: &'a mut WriteHalf<BoxStream>,
    handle: &'a tokio::runtime::Handle,
    out: GroupedWrites,
}

impl PacketOut for SocketOut<'_> {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        let (wr, handle) = (&mut *self.wr, self.handle);
        self.out.send(packet, |g| handle.block_on(write_packets(wr, g)))
    }

    fn flush(&mut self) -> Result<(), ClientGone> {
        let (wr, handle) = (&mut *self.wr, self.handle);
        self.out.write_group(|g| handle.block_on(write_packets(wr, g)))
    }

    fn reclaim(&mut self) -> Option<Vec<u8>> {
        self.out.reclaim()
    }
}

/// A request, decoded on the connection's task or thread.
pub(crate) enum Request {
    Batch(String),
    Rpc(Vec<sql::request::RpcCall>),
    Tm(TmRequest),
    /// The rows of a bulk copy (after an INSERT BULK batch).
    BulkLoad(sql::request::BulkLoad),
    /// A request whose body could not be decoded, or one that is refused: answered with
    /// this error.
    Refused(SqlError),
}

pub(crate) fn decode_request(msg: &Message, tds_version: u32, column_encryption: bool) -> Result<Request, ConnError> {
    let headers = tds_version >= login::TDS_7_2 || tds_version == login::TDS_8_0;
    let protocol_error = |e: TdsError| {
        Request::Refused(SqlError::new(
            4002,
            16,
            1,
            format!("The incoming tabular data stream (TDS) protocol stream is incorrect: {e}."),
        ))
    };
    Ok(match msg.ty {
        PacketType::SqlBatch => match rpc::decode_sql_batch(&msg.data, headers) {
            Ok(b) => Request::Batch(b.text),
            Err(e) => protocol_error(e),
        },
        PacketType::Rpc => match rpc::decode_rpc(&msg.data, headers) {
            Ok(r) => Request::Rpc(r.calls),
            Err(e) => Request::Refused(SqlError::new(
                8016,
                16,
                1,
                format!("The incoming tabular data stream (TDS) remote procedure call (RPC) protocol stream is incorrect: {e}."),
            )),
        },
        PacketType::TransactionManager => match rpc::decode_tm(&msg.data, headers) {
            Ok((_, TmRequest::Unsupported(t))) => Request::Refused(SqlError::new(
                8509,
                16,
                1,
                format!("Distributed transactions are not supported (transaction manager request {t})."),
            )),
            Ok((_, tm)) => Request::Tm(tm),
            Err(e) => protocol_error(e),
        },
        PacketType::BulkLoad => match crate::bulk::decode_bulk_load_with(&msg.data, tds_version, column_encryption) {
            Ok(load) => Request::BulkLoad(load),
            Err(e) => Request::Refused(e),
        },
        other => return Err(TdsError::UnexpectedPacket(other as u8).into()),
    })
}

/// Runs one request on the session (on a worker or connection thread).
pub(crate) fn run_request<S: BackendSession, O: PacketOut>(
    session: &mut S,
    req: Request,
    reset: bool,
    sink: &mut TokenSink<O>,
) -> u8 {
    if reset {
        session.reset_connection();
        let mut b = Vec::new();
        token::put_env_bytes(&mut b, env_type::RESET_ACK, &[], &[]);
        let _ = sink.raw(&b);
    }
    match req {
        Request::Batch(text) => {
            session.execute_batch(&text, sink);
            token_type::DONE
        }
        Request::Rpc(calls) => {
            for call in &calls {
                if sink.is_stopped() {
                    break;
                }
                session.execute_rpc(call, sink);
            }
            token_type::DONEPROC
        }
        Request::Tm(tm) => {
            match tm.to_sql() {
                Some(sql) => session.execute_batch(&sql, sink),
                None => {
                    // TM_GET_DTC_ADDRESS: an empty result set (no DTC here).
                    let cols = [ColumnInfo::new("", SqlType::VarBinary { len: types::Length::Bounded(8000) }, true)];
                    let _ = sink.columns(&cols);
                    let _ =
                        sink.done(Done { kind: DoneKind::Statement, row_count: Some(0), error: false, in_xact: false });
                }
            }
            token_type::DONE
        }
        Request::BulkLoad(load) => {
            session.execute_bulk_load(&load, sink);
            token_type::DONE
        }
        Request::Refused(e) => {
            let _ = sink.server_error(&e);
            token_type::DONE
        }
    }
}

async fn request_loop<B: Backend>(
    shared: &Arc<Shared<B>>,
    li: LoggedIn<B::Session>,
    workers: &Arc<Semaphore>,
) -> Result<(), ConnError> {
    let LoggedIn { stream, session, packet_size, tds_version, column_encryption } = li;
    let stream = stream.into_box();
    let spid = session.spid().clamp(0, i32::from(u16::MAX)) as u16;
    let cancel = session.cancel_handle();
    // Stops a running request if this task ends (shutdown, connection error).
    struct CancelOnDrop(Arc<AtomicBool>);
    impl Drop for CancelOnDrop {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Release);
        }
    }
    let _guard = CancelOnDrop(cancel.clone());
    // Registered for shutdown while this loop runs.
    struct Registered<'a, B>(&'a Shared<B>, u64);
    impl<B> Drop for Registered<'_, B> {
        fn drop(&mut self) {
            self.0.unregister_live(self.1);
        }
    }
    let Some(conn_id) = shared.register_live(Live { cancel: cancel.clone(), socket: None }) else {
        return Err(ConnError::Quiet);
    };
    let _registered = Registered(&**shared, conn_id);
    // On a multi-threaded runtime a request runs right here (block_in_place) and writes
    // its packets to the socket itself: no hand-off to a blocking worker thread and back
    // per request. A current-thread runtime (some tests) keeps the worker-thread path.
    let inline = tokio::runtime::Handle::current().runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread;
    let (rd, mut wr): (ReadHalf<BoxStream>, WriteHalf<BoxStream>) = tokio::io::split(stream);
    let (ev_tx, mut ev_rx) = mpsc::channel(4);
    // Weak, so that the channel still closes when the reader ends.
    let ev_tx_kill = ev_tx.downgrade();
    let busy = Arc::new(AtomicBool::new(false));
    let reader = tokio::spawn(reader_task(rd, ev_tx, cancel.clone(), busy.clone(), shared.max_message));
    struct AbortOnDrop(tokio::task::JoinHandle<()>);
    impl Drop for AbortOnDrop {
        fn drop(&mut self) {
            self.0.abort();
        }
    }
    let _reader = AbortOnDrop(reader);
    let mut session = session;
    // KILL from another session ends the loop (a running request sees the cancel flag).
    let kill_tx = ev_tx_kill;
    session.set_kill_hook(Box::new(move || {
        if let Some(tx) = kill_tx.upgrade() {
            let _ = tx.try_send(ReaderEvent::Closed);
        }
    }));
    let mut session = Some(session);

    loop {
        let msg = match ev_rx.recv().await {
            Some(ReaderEvent::Message(m)) => m,
            Some(ReaderEvent::Attention) => {
                // Nothing is running: acknowledge at once.
                cancel.store(false, Ordering::Release);
                write_packets(&mut wr, &[crate::sink::attention_ack(spid, packet_size)]).await?;
                continue;
            }
            Some(ReaderEvent::Closed) | None => return Ok(()),
            Some(ReaderEvent::Failed(e)) => {
                if let ConnError::Protocol(TdsError::TooLarge { .. }) = &e {
                    let resp = too_large_response(spid, packet_size, &shared.server_name);
                    let _ = write_packets(&mut wr, &[resp]).await;
                }
                return Err(e);
            }
        };
        let req = decode_request(&msg, tds_version, column_encryption)?;
        let reset = msg.reset_connection();

        cancel.store(false, Ordering::Release);
        let permit = acquire_worker(workers).await?;
        if inline {
            let Some(sess) = session.as_mut() else { return Err(ConnError::Quiet) };
            let handle = tokio::runtime::Handle::current();
            let server_name = shared.server_name.clone();
            busy.store(true, Ordering::Release);
            let (last_group, tail, failed) = tokio::task::block_in_place(|| {
                let out = SocketOut { wr: &mut wr, handle: &handle, out: GroupedWrites::new() };
                let mut sink = TokenSink::new(out, spid, packet_size, cancel.clone(), server_name)
                    .with_column_encryption(column_encryption);
                let default_done = run_request(sess, req, reset, &mut sink);
                let (tail, mut out) = sink.finish(default_done);
                (std::mem::take(&mut out.out.group), tail, out.out.failed.take())
            });
            busy.store(false, Ordering::Release);
            drop(permit);
            if let Some(e) = failed {
                return Err(e.into());
            }
            // What the reader saw while the request ran.
            let mut attention = false;
            loop {
                match ev_rx.try_recv() {
                    Ok(ReaderEvent::Attention) => attention = true,
                    Ok(ReaderEvent::Message(m)) => {
                        return Err(ConnError::Other(format!(
                            "The client sent a request (packet type {:#04x}) while another was running (MARS is not supported); the connection has been closed.",
                            m.ty as u8
                        )));
                    }
                    Ok(ReaderEvent::Closed) => {
                        return Err(ConnError::Other("The client disconnected while a request was running.".into()))
                    }
                    Ok(ReaderEvent::Failed(e)) => return Err(e),
                    Err(_) => break,
                }
            }
            let fatal = tail.fatal;
            let mut packets = last_group;
            packets.extend(tail.finish(attention));
            write_packets(&mut wr, &packets).await?;
            if fatal {
                return Err(ConnError::Quiet);
            }
            continue;
        }
        let (tx, mut rx) = mpsc::channel::<Outbound>(RESPONSE_QUEUE);
        let Some(mut sess) = session.take() else { return Err(ConnError::Quiet) };
        let cancel_w = cancel.clone();
        let server_name = shared.server_name.clone();
        // Detached: the session comes back in Outbound::Final. If the worker panics, its
        // sender is dropped without a Final and the connection ends below.
        drop(tokio::task::spawn_blocking(move || {
            let mut sink = TokenSink::new(ChannelOut::new(tx), spid, packet_size, cancel_w, server_name)
                .with_column_encryption(column_encryption);
            let default_done = run_request(&mut sess, req, reset, &mut sink);
            let (tail, mut out) = sink.finish(default_done);
            // The worker slot is free before the connection task can start the next
            // request on it.
            drop(permit);
            let last_group = std::mem::take(&mut out.group);
            let _ = out.tx.blocking_send(Outbound::Final(last_group, tail, Box::new(sess)));
        }));

        let mut attention = false;
        let mut client_gone: Option<ConnError> = None;
        let mut fatal = false;
        loop {
            tokio::select! {
                out = rx.recv() => match out {
                    Some(Outbound::Packets(group)) => {
                        if client_gone.is_none() {
                            if let Err(e) = write_packets(&mut wr, &group).await {
                                cancel.store(true, Ordering::Release);
                                client_gone = Some(e.into());
                            }
                        }
                    }
                    Some(Outbound::Final(mut packets, tail, sess)) => {
                        fatal = tail.fatal;
                        packets.extend(tail.finish(attention));
                        if client_gone.is_none() {
                            if let Err(e) = write_packets(&mut wr, &packets).await {
                                client_gone = Some(e.into());
                            }
                        }
                        session = sess.downcast::<B::Session>().ok().map(|b| *b);
                        break;
                    }
                    None => break,
                },
                ev = ev_rx.recv(), if client_gone.is_none() => match ev {
                    Some(ReaderEvent::Attention) => attention = true,
                    Some(ReaderEvent::Message(m)) => {
                        cancel.store(true, Ordering::Release);
                        client_gone = Some(ConnError::Other(format!(
                            "The client sent a request (packet type {:#04x}) while another was running (MARS is not supported); the connection has been closed.",
                            m.ty as u8
                        )));
                    }
                    Some(ReaderEvent::Closed) | None => {
                        cancel.store(true, Ordering::Release);
                        client_gone = Some(ConnError::Other(
                            "The client disconnected while a request was running.".into(),
                        ));
                    }
                    Some(ReaderEvent::Failed(e)) => {
                        cancel.store(true, Ordering::Release);
                        client_gone = Some(e);
                    }
                },
            }
        }
        if let Some(e) = client_gone {
            return Err(e);
        }
        if fatal {
            return Err(ConnError::Quiet);
        }
        if session.is_none() {
            return Err(ConnError::Other("The worker running the request failed.".into()));
        }
    }
}
