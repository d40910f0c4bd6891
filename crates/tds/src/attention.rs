//! The attention watcher of connection threads ([`crate::conn_thread`]): one thread per
//! server waits on an epoll instance for the sockets of connections whose request is
//! running, and sets that session's cancel flag as soon as anything arrives (an
//! attention, a second request, the end of the stream), since the connection's own
//! thread is busy running the request and cannot read.
//!
//! A connection arms its socket (EPOLLIN | EPOLLONESHOT) before a request and disarms it
//! after, so an idle connection costs the watcher nothing and a fired socket stays quiet
//! until the next arm. The epoll token is the connection's id (never reused, unlike file
//! descriptors) and the arm's generation: the watcher acts on an event only while that
//! very arm is current, so a late event can neither cancel a later request of the same
//! connection nor reach another connection that got the same descriptor.

use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use diag::errorlog;

/// The token of the watcher's own wake-up eventfd (connection ids stay below 2^40).
const WAKE_TOKEN: u64 = u64::MAX;
/// The low bits of a token hold the arm's generation, the high bits the connection id.
const GEN_BITS: u32 = 24;
const GEN_MASK: u64 = (1 << GEN_BITS) - 1;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // The data under these locks stays consistent at every step, so a panic elsewhere
    // while holding one leaves nothing half-done.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

struct Inner {
    epoll: OwnedFd,
    wake: OwnedFd,
    stop: AtomicBool,
    conns: Mutex<HashMap<u64, Arc<WatchState>>>,
    next_id: AtomicU64,
}

impl Inner {
    fn ctl(&self, op: libc::c_int, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: both descriptors are open (the epoll instance lives as long as `self`,
        // `fd` as long as the registration that calls this), `ev` is a valid event.
        cvt(unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut ev) }).map(drop)
    }
}

/// What the watcher and the connection's thread share about one connection.
struct WatchState {
    cancel: Arc<AtomicBool>,
    arm: Mutex<Arm>,
}

#[derive(Default)]
struct Arm {
    generation: u64,
    armed: bool,
    fired: bool,
}

impl WatchState {
    /// An event of the arm `generation` came in. The cancel flag is set under the lock,
    /// so once `disarm` has returned no event of that arm can set it any more (it would
    /// cancel the next request).
    fn fire(&self, generation: u64) {
        let mut a = lock(&self.arm);
        if a.armed && !a.fired && a.generation == generation {
            a.fired = true;
            self.cancel.store(true, Ordering::Release);
        }
    }
}

/// The watcher thread of one server.
pub(crate) struct AttentionWatcher {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl AttentionWatcher {
    pub(crate) fn start() -> io::Result<AttentionWatcher> {
        // SAFETY: plain system calls; the descriptors they return are owned right away.
        let epoll = unsafe { OwnedFd::from_raw_fd(cvt(libc::epoll_create1(libc::EPOLL_CLOEXEC))?) };
        let wake = unsafe { OwnedFd::from_raw_fd(cvt(libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK))?) };
        let inner = Arc::new(Inner {
            epoll,
            wake,
            stop: AtomicBool::new(false),
            conns: Mutex::new(HashMap::new()),
            next_id: AtomicU64::new(1),
        });
        inner.ctl(libc::EPOLL_CTL_ADD, inner.wake.as_raw_fd(), libc::EPOLLIN as u32, WAKE_TOKEN)?;
        let for_thread = inner.clone();
        let thread = std::thread::Builder::new().name("tds-attention".into()).spawn(move || watch(&for_thread))?;
        Ok(AttentionWatcher { inner, thread: Mutex::new(Some(thread)) })
    }

    /// Watches `fd` (disarmed until [`Registration::arm`]); the registration must be
    /// dropped before the descriptor is closed.
    pub(crate) fn register(&self, fd: RawFd, cancel: Arc<AtomicBool>) -> io::Result<Registration> {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let state = Arc::new(WatchState { cancel, arm: Mutex::new(Arm::default()) });
        // No poll event in the mask: registered but disabled.
        self.inner.ctl(libc::EPOLL_CTL_ADD, fd, libc::EPOLLONESHOT as u32, id << GEN_BITS)?;
        lock(&self.inner.conns).insert(id, state.clone());
        Ok(Registration { inner: self.inner.clone(), fd, id, state })
    }

    /// Ends the watcher thread (at server shutdown, after the connection threads).
    pub(crate) fn stop(&self) {
        self.inner.stop.store(true, Ordering::Release);
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to the eventfd this struct owns.
        let _ = unsafe { libc::write(self.inner.wake.as_raw_fd(), (&one as *const u64).cast(), 8) };
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
    }
}

impl Drop for AttentionWatcher {
    fn drop(&mut self) {
        self.stop();
    }
}

fn watch(inner: &Inner) {
    const MAX_EVENTS: usize = 64;
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
    while !inner.stop.load(Ordering::Acquire) {
        // SAFETY: `events` has room for MAX_EVENTS entries.
        let n = unsafe { libc::epoll_wait(inner.epoll.as_raw_fd(), events.as_mut_ptr(), MAX_EVENTS as i32, -1) };
        let n = match cvt(n) {
            Ok(n) => n as usize,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                // Not expected on a valid epoll descriptor; running requests can then be
                // cancelled only by closing their connections.
                errorlog::log("Server", &format!("The attention watcher stopped: {e}"));
                return;
            }
        };
        for ev in &events[..n] {
            let token = ev.u64;
            if token == WAKE_TOKEN {
                continue;
            }
            let state = lock(&inner.conns).get(&(token >> GEN_BITS)).cloned();
            if let Some(state) = state {
                state.fire(token & GEN_MASK);
            }
        }
    }
}

/// One connection's place in the watcher; dropping it stops watching the descriptor.
pub(crate) struct Registration {
    inner: Arc<Inner>,
    fd: RawFd,
    id: u64,
    state: Arc<WatchState>,
}

impl Registration {
    /// Before a request: anything readable on the socket from now on (including what is
    /// there already) sets the cancel flag.
    pub(crate) fn arm(&self) -> io::Result<()> {
        let generation = {
            let mut a = lock(&self.state.arm);
            a.generation = (a.generation + 1) & GEN_MASK;
            a.armed = true;
            a.fired = false;
            a.generation
        };
        let events = (libc::EPOLLIN | libc::EPOLLONESHOT) as u32;
        self.inner.ctl(libc::EPOLL_CTL_MOD, self.fd, events, self.id << GEN_BITS | generation)
    }

    /// After a request: returns whether the socket became readable while armed (the
    /// cancel flag was then set).
    pub(crate) fn disarm(&self) -> io::Result<bool> {
        let fired = {
            let mut a = lock(&self.state.arm);
            a.armed = false;
            a.fired
        };
        if !fired {
            // A fired one-shot registration is disabled already; otherwise disable it so
            // the next request's arrival does not wake the watcher for nothing.
            self.inner.ctl(libc::EPOLL_CTL_MOD, self.fd, libc::EPOLLONESHOT as u32, self.id << GEN_BITS)?;
        }
        Ok(fired)
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let _ = self.inner.ctl(libc::EPOLL_CTL_DEL, self.fd, 0, 0);
        lock(&self.inner.conns).remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    use super::*;

    fn wait_for(flag: &AtomicBool) -> bool {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(5) {
            if flag.load(Ordering::Acquire) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        false
    }

    #[test]
    fn fires_only_while_armed_and_only_for_the_current_arm() {
        let w = AttentionWatcher::start().unwrap();
        let (mut client, mut server) = UnixStream::pair().unwrap();
        let cancel = Arc::new(AtomicBool::new(false));
        let reg = w.register(server.as_raw_fd(), cancel.clone()).unwrap();

        // Armed: a byte from the client sets the flag.
        reg.arm().unwrap();
        client.write_all(&[6]).unwrap();
        assert!(wait_for(&cancel));
        assert!(reg.disarm().unwrap());
        let mut b = [0u8; 1];
        server.read_exact(&mut b).unwrap();

        // Armed without data, then disarmed: nothing; data while disarmed: nothing.
        cancel.store(false, Ordering::Release);
        reg.arm().unwrap();
        std::thread::sleep(Duration::from_millis(20));
        assert!(!reg.disarm().unwrap());
        client.write_all(&[1]).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        assert!(!cancel.load(Ordering::Acquire));

        // Arming with data already waiting fires at once.
        reg.arm().unwrap();
        assert!(wait_for(&cancel));
        assert!(reg.disarm().unwrap());
        server.read_exact(&mut b).unwrap();

        // A late event of an earlier arm does not touch a later one.
        cancel.store(false, Ordering::Release);
        reg.arm().unwrap();
        let current = lock(&reg.state.arm).generation;
        reg.state.fire((current + GEN_MASK) & GEN_MASK);
        assert!(!cancel.load(Ordering::Acquire));
        assert!(!reg.disarm().unwrap());

        // After the registration is dropped the watcher forgets the connection.
        drop(reg);
        assert!(lock(&w.inner.conns).is_empty());
        w.stop();
    }
}
