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
use crate::server::{decode_request, log_connection_end, run_request, ConnError, GroupedWrites, Live, Shared};
use crate::sink::{attention_ack, ClientGone, PacketOut, TokenSink};

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
}

/// Moves the connection onto a thread of its own. Errors leave the connection closed.
pub(crate) fn start<B: Backend>(
    shared: &Arc<Shared<B>>,
    watcher: &AttentionWatcher,
    conn: PlainConnection<B::Session>,
) -> Result<(), ConnError> {
    let PlainConnection { tcp, session, packet_size, tds_version, column_encryption, peer } = conn;
    let tcp = tcp.into_std()?;
    tcp.set_nonblocking(false)?;
    let sock = Arc::new(tcp);
    let cancel = session.cancel_handle();
    let watch = watcher.register(sock.as_raw_fd(), cancel.clone())?;
    // Registered before the thread exists, so a shutdown from now on reaches it.
    let Some(id) = shared.register_live(Live { cancel: cancel.clone(), socket: Some(sock.clone()) }) else {
        return Ok(()); // The server is stopping.
    };
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
            let Some((h, payload)) = self.input.read_packet()? else {
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
            let Some(msg) = reasm.push(&h, &payload)? else { continue };
            if !self.request(shared, msg)? {
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
        let permit = acquire_worker(&shared.workers);
        if shared.stopping.load(Ordering::Acquire) {
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
        let out = ThreadOut { sock: &self.sock, out: GroupedWrites::new(), buf: std::mem::take(&mut self.out_buf) };
        let mut sink =
            TokenSink::new(out, self.spid, self.packet_size, self.cancel.clone(), shared.server_name.clone())
                .with_column_encryption(self.column_encryption);
        let default_done = run_request(&mut self.session, req, reset, &mut sink);
        let (tail, out) = sink.finish(default_done);
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
        write_all(&self.sock, &packets, &mut self.out_buf)?;
        Ok(!fatal)
    }
}

/// A worker slot (`ServerConfig::workers` requests at once over all connections, as on
/// the tokio path); waiting for one is a THREADPOOL wait.
fn acquire_worker(sem: &Arc<Semaphore>) -> Option<OwnedSemaphorePermit> {
    if let Ok(p) = sem.clone().try_acquire_owned() {
        return Some(p);
    }
    let start = Instant::now();
    // The semaphore is never closed; should that change, run without a slot.
    let p = block_on(sem.clone().acquire_owned()).ok();
    record_wait(WaitType::THREADPOOL, start.elapsed(), Duration::ZERO);
    p
}

/// Polls a future to completion on this (non-runtime) thread, parking between polls.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
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
            return v;
        }
        std::thread::park();
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
    out: GroupedWrites,
    buf: Vec<u8>,
}

impl PacketOut for ThreadOut<'_> {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        let (sock, buf) = (self.sock, &mut self.buf);
        self.out.send(packet, |g| write_all(sock, g, buf))
    }

    fn flush(&mut self) -> Result<(), ClientGone> {
        let (sock, buf) = (self.sock, &mut self.buf);
        self.out.write_group(|g| write_all(sock, g, buf))
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
