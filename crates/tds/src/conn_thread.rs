//! A thread per connection for plain TCP after login: the connection's own OS thread
//! reads each request with a blocking read, runs it and writes its packets straight to
//! the socket, so a round trip costs no hand-off between tasks and threads. TLS
//! connections stay on the tokio request loop (`server::request_loop`).
//!
//! While a request runs the thread cannot read, so the [`AttentionWatcher`] watches the
//! socket and sets the session's cancel flag when anything arrives, as the tokio path's
//! reader task does. After the request the thread reads what arrived: an attention is
//! acknowledged after the response (DONE with the ATTN bit, a message of its own), a
//! second request (no MARS) or the end of the stream closes the connection.
//!
//! Shutdown (through `Shared::live`) sets the cancel flag and shuts the socket down for
//! reading, which wakes a thread blocked in a read; a cancelled request still ends its
//! response. Sockets still open after a grace period are shut down for writing too, which
//! fails a write blocked on a client that does not read.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake};
use std::time::{Duration, Instant};

use diag::waits::{record_wait, WaitType};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::attention::{AttentionWatcher, Registration};
use crate::backend::{Backend, BackendSession};
use crate::packet::{Message, PacketHeader, PacketType, Reassembler, HEADER_LEN};
use crate::server::{
    decode_request, log_connection_end, run_request, too_large_response, ConnError, GroupedWrites, Live, Shared,
};
use crate::sink::{attention_ack, ClientGone, PacketOut, TokenSink};
use crate::TdsError;
use sql::host::{CommitGate, DeferredCommit};

/// The stack of a connection thread, as `tds::REQUEST_STACK_SIZE` says.
const STACK_SIZE: usize = crate::REQUEST_STACK_SIZE;
/// Bytes read from the socket at once: a small request and its header in one read.
const READ_BUFFER: usize = 16 * 1024;

/// A logged-in plain connection on its way to a thread of its own.
pub(crate) struct PlainConnection<S> {
    pub tcp: tokio::net::TcpStream,
    pub session: S,
    pub packet_size: u32,
    pub tds_version: u32,
    pub column_encryption: bool,
    pub peer: SocketAddr,
    /// The worker pool its requests take a worker from (the DAC has its own).
    pub workers: Arc<Semaphore>,
}

/// Moves the connection onto a thread of its own. Errors leave the connection closed.
pub(crate) fn start<B: Backend>(
    shared: &Arc<Shared<B>>,
    watcher: &AttentionWatcher,
    conn: PlainConnection<B::Session>,
) -> Result<(), ConnError> {
    let PlainConnection { tcp, session, packet_size, tds_version, column_encryption, peer, workers } = conn;
    let tcp = tcp.into_std()?;
    tcp.set_nonblocking(false)?;
    let sock = Arc::new(tcp);
    let cancel = session.cancel_handle();
    let watch = watcher.register(sock.as_raw_fd(), cancel.clone())?;
    // Registered before the thread exists, so a shutdown from now on reaches it.
    let Some(id) = shared.register_live(Live { cancel: cancel.clone(), socket: Some(sock.clone()) }) else {
        return Ok(()); // The server is stopping.
    };
    let mut session = session;
    // KILL from another session: shutting the socket down ends an idle read, a write
    // blocked on a client that does not read, and the reply of a cancelled request.
    let kill_sock = Arc::downgrade(&sock);
    session.set_kill_hook(Box::new(move || {
        if let Some(s) = kill_sock.upgrade() {
            let _ = s.shutdown(std::net::Shutdown::Both);
        }
    }));
    let gate = Arc::new(CommitGate::default());
    session.defer_commits(gate.clone());
    let label = format!("spid{}", session.spid());
    let thread_shared = shared.clone();
    let conn = ThreadConn {
        spid: session.spid().clamp(0, i32::from(u16::MAX)) as u16,
        input: Input::new(sock.clone()),
        sock,
        watch,
        session,
        cancel,
        packet_size,
        tds_version,
        column_encryption,
        out_buf: Vec::new(),
        gate,
        reply: Arc::new(ReplyInFlight::default()),
        workers,
    };
    let spawned = std::thread::Builder::new().name(label.clone()).stack_size(STACK_SIZE).spawn(move || {
        let shared = thread_shared;
        // Unregisters even if the request panicked (an engine bug), so that shutdown
        // does not wait for this connection forever.
        struct Unregister<'a, B: Backend>(&'a Shared<B>, u64);
        impl<B: Backend> Drop for Unregister<'_, B> {
            fn drop(&mut self) {
                self.0.unregister_live(self.1);
            }
        }
        let _unregister = Unregister(&shared, id);
        let r = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| conn.run(&shared))) {
            Ok(r) => r,
            Err(_) => Err(ConnError::Other("The thread running the connection's requests failed.".into())),
        };
        // At shutdown the server closed the socket itself: nothing worth logging.
        if !shared.stopping.load(Ordering::Acquire) {
            log_connection_end(&label, peer, r);
        }
    });
    match spawned {
        Ok(_) => Ok(()),
        Err(e) => {
            // The closure (with the session and the socket) is gone already.
            shared.unregister_live(id);
            Err(ConnError::Other(format!("Could not start a thread for the connection: {e}.")))
        }
    }
}

/// A connection on its thread.
struct ThreadConn<S> {
    sock: Arc<TcpStream>,
    input: Input,
    watch: Registration,
    session: S,
    cancel: Arc<AtomicBool>,
    spid: u16,
    packet_size: u32,
    tds_version: u32,
    /// Always Encrypted was acknowledged at login.
    column_encryption: bool,
    /// Reused for writes of several packets at once.
    out_buf: Vec<u8>,
    /// Where the session leaves a durable commit's flush wait (`sql::host::CommitGate`).
    gate: Arc<CommitGate>,
    /// A reply the log writer sends once its commit is durable.
    reply: Arc<ReplyInFlight>,
    workers: Arc<Semaphore>,
}

impl<S: BackendSession> ThreadConn<S> {
    /// The request loop. On return the watch ends before the socket can be closed and
    /// the session is dropped (its per-connection cleanup) before the caller
    /// unregisters the connection, which shutdown waits for.
    fn run<B: Backend<Session = S>>(mut self, shared: &Shared<B>) -> Result<(), ConnError> {
        let r = self.serve(shared);
        let ThreadConn { watch, session, .. } = self;
        drop(watch);
        drop(session);
        r
    }

    fn serve<B: Backend<Session = S>>(&mut self, shared: &Shared<B>) -> Result<(), ConnError> {
        let mut reasm = Reassembler::new(shared.max_message);
        loop {
            let next = self.input.read_packet();
            // Nothing goes out before the last reply (normally written long before the
            // client could send again; an early attention waits for it here).
            self.reply.wait_written();
            let Some((h, payload)) = next? else {
                if reasm.in_progress() {
                    return Err(ConnError::Io(io::ErrorKind::UnexpectedEof.into()));
                }
                return Ok(());
            };
            if h.ty == PacketType::Attention as u8 {
                // Nothing is running: acknowledge at once.
                self.cancel.store(false, Ordering::Release);
                write_all(&self.sock, &[attention_ack(self.spid, self.packet_size)], &mut self.out_buf)?;
                continue;
            }
            let msg = match reasm.push(&h, &payload) {
                Ok(Some(m)) => m,
                Ok(None) => continue,
                Err(e @ TdsError::TooLarge { .. }) => {
                    // Read the rest of the message (discarded, for at most 30 s) so that
                    // the client, still sending, gets to read the error.
                    let until = Instant::now() + Duration::from_secs(30);
                    let _ = self.sock.set_read_timeout(Some(Duration::from_secs(5)));
                    let mut at_end = h.is_eom();
                    while !at_end && Instant::now() < until {
                        match self.input.read_packet() {
                            Ok(Some((h, _))) => at_end = h.is_eom(),
                            _ => break,
                        }
                    }
                    let resp = too_large_response(self.spid, self.packet_size, &shared.server_name);
                    let _ = write_all(&self.sock, &[resp], &mut self.out_buf);
                    let _ = self.sock.shutdown(std::net::Shutdown::Write);
                    return Err(e.into());
                }
                Err(e) => return Err(e.into()),
            };
            if !self.request(shared, msg)? || self.session.is_killed() {
                return Err(ConnError::Quiet);
            }
        }
    }

    /// Runs one request and writes its response. Ok(false) when the connection is to be
    /// closed after it (a fatal error).
    fn request<B: Backend<Session = S>>(&mut self, shared: &Shared<B>, msg: Message) -> Result<bool, ConnError> {
        let req = decode_request(&msg, self.tds_version, self.column_encryption)?;
        let reset = msg.reset_connection();
        drop(msg);
        self.cancel.store(false, Ordering::Release);
        let permit = acquire_worker(&self.workers, &shared.stopping, &self.cancel);
        // The server is stopping, or KILL ended the session while it waited for a worker.
        if shared.stopping.load(Ordering::Acquire) || self.session.is_killed() {
            return Err(ConnError::Quiet);
        }
        // Bytes already read past the request (a client that sent its attention right
        // behind it): the tokio path's reader would have seen them at once, so cancel
        // at once.
        let early = self.input.has_buffered();
        if early {
            self.cancel.store(true, Ordering::Release);
        } else {
            self.watch.arm()?;
        }
        let out = ThreadOut {
            sock: &self.sock,
            gate: &self.gate,
            out: GroupedWrites::new(),
            buf: std::mem::take(&mut self.out_buf),
        };
        let mut sink =
            TokenSink::new(out, self.spid, self.packet_size, self.cancel.clone(), shared.server_name.clone())
                .with_column_encryption(self.column_encryption);
        let default_done = run_request(&mut self.session, req, reset, &mut sink);
        let (tail, out) = sink.finish(default_done);
        // A durable commit that ended the request and is not on disk yet: its reply
        // waits for it (below). Taken before anything can return early: dropping it
        // waits for the flush.
        let mut commit = Settle(self.gate.take());
        let fired = if early { true } else { self.watch.disarm()? };
        drop(permit);
        let ThreadOut { out: GroupedWrites { group: mut packets, failed, .. }, buf, .. } = out;
        self.out_buf = buf;
        if let Some(e) = failed {
            return Err(e.into());
        }
        // What arrived while the request ran (the watcher set the cancel flag for it).
        let mut attention = false;
        if fired {
            match self.input.read_packet()? {
                Some((h, _)) if h.ty == PacketType::Attention as u8 => attention = true,
                Some((h, _)) => {
                    return Err(ConnError::Other(format!(
                        "The client sent a request (packet type {:#04x}) while another was running (MARS is not supported); the connection has been closed.",
                        h.ty
                    )))
                }
                None if shared.stopping.load(Ordering::Acquire) => {
                    // Shutdown closed the reading side; the client still gets the end of
                    // its cancelled response.
                    packets.extend(tail.finish(false));
                    let _ = write_all(&self.sock, &packets, &mut self.out_buf);
                    return Err(ConnError::Quiet);
                }
                None => return Err(ConnError::Other("The client disconnected while a request was running.".into())),
            }
        }
        let fatal = tail.fatal;
        packets.extend(tail.finish(attention));
        match commit.0.take() {
            // The log writer sends the reply once the commit is durable, and this
            // thread goes back to reading: it does not sleep until the flush and wake to
            // send (architecture.md, "Commit replies from the log writer").
            Some(c) if !attention && !fatal => {
                self.reply.start();
                let (sock, reply) = (self.sock.clone(), self.reply.clone());
                c.when_durable(Box::new(move |r| send_reply(sock, reply, packets, r.is_ok())));
            }
            Some(c) => {
                if c.wait().is_err() {
                    // The log failed (9001): the commit is not acknowledged.
                    return Err(ConnError::Quiet);
                }
                write_all(&self.sock, &packets, &mut self.out_buf)?;
            }
            None => write_all(&self.sock, &packets, &mut self.out_buf)?,
        }
        Ok(!fatal)
    }
}

/// Waits for a deferred commit when dropped (a request that ends in an error path).
struct Settle(Option<Box<dyn DeferredCommit>>);

impl Drop for Settle {
    fn drop(&mut self) {
        if let Some(c) = self.0.take() {
            let _ = c.wait();
        }
    }
}

/// Whether a reply handed to the log writer is still to be written. The writer's
/// `done` costs one atomic swap unless the connection thread is waiting (rare: the client
/// sends again only once it has the reply), so it wakes no one for nothing.
#[derive(Default)]
struct ReplyInFlight {
    /// IDLE, PENDING, or WAITED (pending, and the connection thread waits for it).
    state: std::sync::atomic::AtomicU8,
    lock: std::sync::Mutex<()>,
    written: std::sync::Condvar,
}

const IDLE: u8 = 0;
const PENDING: u8 = 1;
const WAITED: u8 = 2;

impl ReplyInFlight {
    fn start(&self) {
        self.state.store(PENDING, Ordering::Release);
    }

    fn done(&self) {
        if self.state.swap(IDLE, Ordering::AcqRel) == WAITED {
            // The waiter set WAITED under the lock and sleeps only after releasing it.
            let _g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
            self.written.notify_all();
        }
    }

    fn wait_written(&self) {
        if self.state.load(Ordering::Acquire) == IDLE {
            return;
        }
        let mut g = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        if self.state.compare_exchange(PENDING, WAITED, Ordering::AcqRel, Ordering::Acquire).is_err() {
            return; // written meanwhile
        }
        while self.state.load(Ordering::Acquire) != IDLE {
            g = self.written.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Sends a durable commit's reply from the log writer's thread. The write must not
/// block the log writer (a client that stopped reading would stall every commit of the
/// database): what the socket does not take at once is written by a thread of its own.
/// A failed commit is not acknowledged: the connection is shut down instead.
fn send_reply(sock: Arc<TcpStream>, reply: Arc<ReplyInFlight>, packets: Vec<Vec<u8>>, durable: bool) {
    if !durable {
        let _ = sock.shutdown(std::net::Shutdown::Both);
        reply.done();
        return;
    }
    let bytes = if packets.len() == 1 { packets.into_iter().next().unwrap_or_default() } else { packets.concat() };
    let mut sent = 0;
    while sent < bytes.len() {
        // SAFETY: a valid buffer and length; MSG_DONTWAIT makes this one call
        // non-blocking without changing the socket's mode.
        let n = unsafe {
            libc::send(
                sock.as_raw_fd(),
                bytes[sent..].as_ptr().cast(),
                bytes.len() - sent,
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if n > 0 {
            sent += n as usize;
            continue;
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::Interrupted => continue,
            io::ErrorKind::WouldBlock => {
                let spawned = std::thread::Builder::new().name("reply-writer".into()).spawn({
                    let (sock, reply) = (sock.clone(), reply.clone());
                    let rest = bytes[sent..].to_vec();
                    move || {
                        let _ = (&*sock).write_all(&rest);
                        reply.done();
                    }
                });
                if spawned.is_ok() {
                    return;
                }
                // No thread: the client gets nothing rather than a stalled log.
                let _ = sock.shutdown(std::net::Shutdown::Both);
                break;
            }
            // The client is gone; its connection thread sees that on its next read.
            _ => break,
        }
    }
    reply.done();
}

/// A worker slot (`ServerConfig::workers` requests at once over all connections, as on
/// the tokio path); waiting for one is a THREADPOOL wait. None when the server began to
/// shut down or the session was killed (`cancel`) while this request waited.
fn acquire_worker(sem: &Arc<Semaphore>, stopping: &AtomicBool, cancel: &AtomicBool) -> Option<OwnedSemaphorePermit> {
    if let Ok(p) = sem.clone().try_acquire_owned() {
        return Some(p);
    }
    let start = Instant::now();
    let p = block_on_unless(sem.clone().acquire_owned(), || {
        stopping.load(Ordering::Acquire) || cancel.load(Ordering::Acquire)
    })
    .and_then(Result::ok);
    record_wait(WaitType::THREADPOOL, start.elapsed(), Duration::ZERO);
    p
}

/// Polls a future to completion on this (non-runtime) thread, parking between polls;
/// None once `stop` says so (checked every few milliseconds while parked).
fn block_on_unless<F: std::future::Future>(f: F, stop: impl Fn() -> bool) -> Option<F::Output> {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Arc::new(Unpark(std::thread::current())).into();
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return Some(v);
        }
        if stop() {
            return None;
        }
        std::thread::park_timeout(Duration::from_millis(20));
    }
}

/// Writes packets in one system call (copied into `buf`, kept for the next write).
fn write_all(mut sock: &TcpStream, packets: &[Vec<u8>], buf: &mut Vec<u8>) -> io::Result<()> {
    match packets {
        [] => Ok(()),
        [p] => sock.write_all(p),
        _ => {
            buf.clear();
            for p in packets {
                buf.extend_from_slice(p);
            }
            sock.write_all(buf)
        }
    }
}

/// The packets of a request on a connection thread, written straight to its socket (see
/// [`GroupedWrites`]).
struct ThreadOut<'a> {
    sock: &'a TcpStream,
    /// Settled before any packet goes out: nothing after a COMMIT reaches the client
    /// before the commit is durable.
    gate: &'a CommitGate,
    out: GroupedWrites,
    buf: Vec<u8>,
}

/// `write_all` once the session's deferred commit, if any, is durable.
fn write_settled(gate: &CommitGate, sock: &TcpStream, packets: &[Vec<u8>], buf: &mut Vec<u8>) -> io::Result<()> {
    gate.settle().map_err(|e| io::Error::other(e.message))?;
    write_all(sock, packets, buf)
}

impl PacketOut for ThreadOut<'_> {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        let (sock, gate, buf) = (self.sock, self.gate, &mut self.buf);
        self.out.send(packet, |g| write_settled(gate, sock, g, buf))
    }

    fn flush(&mut self) -> Result<(), ClientGone> {
        let (sock, gate, buf) = (self.sock, self.gate, &mut self.buf);
        self.out.write_group(|g| write_settled(gate, sock, g, buf))
    }

    fn reclaim(&mut self) -> Option<Vec<u8>> {
        self.out.reclaim()
    }
}

/// Blocking reads of whole packets through a small buffer.
struct Input {
    sock: Arc<TcpStream>,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
}

impl Input {
    fn new(sock: Arc<TcpStream>) -> Input {
        Input { sock, buf: vec![0u8; READ_BUFFER].into_boxed_slice(), pos: 0, end: 0 }
    }

    fn has_buffered(&self) -> bool {
        self.pos < self.end
    }

    /// Fills `out`; returns how many bytes it got (fewer only at the end of the stream).
    fn fill(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let mut got = 0;
        while got < out.len() {
            if self.pos < self.end {
                let n = (self.end - self.pos).min(out.len() - got);
                out[got..got + n].copy_from_slice(&self.buf[self.pos..self.pos + n]);
                self.pos += n;
                got += n;
                continue;
            }
            // Large remainders go straight into `out`, small ones through the buffer
            // (which may then hold the start of the next packet).
            let direct = out.len() - got >= self.buf.len();
            let r = if direct { (&*self.sock).read(&mut out[got..]) } else { (&*self.sock).read(&mut self.buf) };
            match r {
                Ok(0) => return Ok(got),
                Ok(n) if direct => got += n,
                Ok(n) => {
                    self.pos = 0;
                    self.end = n;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(got)
    }

    /// The next packet; None at a clean end of stream (between packets).
    fn read_packet(&mut self) -> Result<Option<(PacketHeader, Vec<u8>)>, ConnError> {
        let mut hb = [0u8; HEADER_LEN];
        match self.fill(&mut hb)? {
            0 => return Ok(None),
            HEADER_LEN => {}
            _ => return Err(ConnError::Io(io::ErrorKind::UnexpectedEof.into())),
        }
        let h = PacketHeader::decode(&hb)?;
        let mut payload = vec![0u8; h.payload_len()];
        if self.fill(&mut payload)? < payload.len() {
            return Err(ConnError::Io(io::ErrorKind::UnexpectedEof.into()));
        }
        Ok(Some((h, payload)))
    }
}
