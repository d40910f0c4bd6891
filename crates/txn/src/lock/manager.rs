//! The lock table and the request protocol: granting, waiting, conversion, release.
//!
//! # Layout
//!
//! The table is split into [`SHARD_COUNT`] shards by a hash of the resource; each shard
//! is a parking_lot mutex over a hash map from resource to its request queue (requests,
//! one per owner). Nearly every queue holds one request (a row lock nobody else wants),
//! kept inline in the map's entry: taking and releasing it allocate nothing and follow
//! no pointer out of the table. A request is granted, converting (granted, waiting for a
//! stronger mode), or waiting. Each owner keeps the list of resources it holds, for
//! `release_all`.
//!
//! # Granting (fair FIFO)
//!
//! - A new request is granted at once when its mode is compatible with every granted
//!   mode *and* with every request already waiting (including the target modes of
//!   pending conversions). Otherwise it queues behind them: a compatible newcomer
//!   never overtakes an incompatible earlier waiter, so writers aren't starved by a
//!   stream of readers.
//! - A conversion (the owner already holds the resource) waits only on the granted
//!   modes of *other* owners, and pending conversions are granted before any waiting
//!   new request.
//! - Whenever a lock is released or a waiter leaves, the queue is rescanned:
//!   conversions oldest first, then waiters in arrival order, each granted when the
//!   rule above allows.
//!
//! # Waiting
//!
//! A request that must wait is registered in the table of waits (read by deadlock
//! detection), searches for a deadlock from itself, and sleeps on its owner's condition
//! variable. Whoever decides its fate (a releaser granting it, the deadlock detector
//! choosing it as victim) does so under the shard lock and hands it the outcome. On
//! time-out the waiter withdraws its request itself. The wait is recorded as the
//! mode's LCK_M_* wait type in the instance's and the session's wait statistics.
//!
//! Lock order: shard (several only in ascending index order, by the deadlock detector)
//! → table of waits → an owner's held list / outcome slot. The deadlock search lock is
//! taken only while holding nothing else.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};

use super::deadlock::{self, DeadlockReport};
use super::owner::{Outcome, OwnerShared};
use super::{LockError, LockMode, LockOwner, LockResource, LockTimeout};

/// How often a lock waiter checks whether its request was cancelled.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Number of lock table shards (a power of two).
pub const SHARD_COUNT: usize = 64;

/// The lock table's hasher (resources are a few machine words).
pub(crate) use types::hash::FxBuild;

/// State of one request in a resource's queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    Granted,
    /// Granted in `mode`, waiting to convert to the target.
    Convert(LockMode),
    /// Waiting for `mode`.
    Wait,
}

/// One owner's request on one resource.
pub(crate) struct Request {
    pub(crate) txn_id: u64,
    pub(crate) session_id: i32,
    /// Granted mode (Granted, Convert) or the mode waited for (Wait).
    pub(crate) mode: LockMode,
    pub(crate) status: Status,
    /// Number of times granted and not yet unlocked (0 while waiting).
    pub(crate) count: u32,
    /// Wait sequence number while Convert or Wait (unique, increasing; 0 otherwise).
    pub(crate) seq: u64,
    /// The waiting owner, while Convert or Wait.
    pub(crate) waiter: Option<Arc<OwnerShared>>,
}

impl Request {
    /// The mode this request waits for (target of a conversion), if it waits.
    pub(crate) fn wait_mode(&self) -> Option<LockMode> {
        match self.status {
            Status::Granted => None,
            Status::Convert(t) => Some(t),
            Status::Wait => Some(self.mode),
        }
    }
}

pub(crate) type Queue = smallvec::SmallVec<[Request; 1]>;

pub(crate) struct ShardInner {
    pub(crate) map: HashMap<LockResource, Queue, FxBuild>,
    lock_requests: u64,
    /// Queues of key resources in all shards (shared by the shards; see
    /// [`LockManager::key_locks_exist`]). Changed with the map, under the shard's lock.
    key_queues: Arc<AtomicUsize>,
}

/// One shard, on its own cache line.
#[repr(align(64))]
pub(crate) struct Shard(pub(crate) Mutex<ShardInner>);

/// A waiting request, as the deadlock detector and sys.dm_os_waiting_tasks see it.
pub(crate) struct WaitEntry {
    pub(crate) seq: u64,
    pub(crate) resource: LockResource,
    /// The mode waited for (a conversion's target).
    pub(crate) mode: LockMode,
    pub(crate) started: Instant,
    pub(crate) timeout: LockTimeout,
}

#[derive(Default)]
pub(crate) struct Stats {
    pub(crate) lock_waits: AtomicU64,
    pub(crate) lock_wait_us: AtomicU64,
    pub(crate) lock_timeouts: AtomicU64,
    pub(crate) lock_timeouts_nonzero: AtomicU64,
    pub(crate) deadlocks: AtomicU64,
}

pub(crate) struct MonitorState {
    pub(crate) shutdown: bool,
    pub(crate) interval: Duration,
}

pub(crate) type Observer = dyn Fn(&DeadlockReport) + Send + Sync;

pub(crate) struct Inner {
    pub(crate) shards: Box<[Shard]>,
    /// Waiting requests by owner transaction id. Changed only under the lock of the
    /// shard holding the request, so it always agrees with the queues.
    pub(crate) waits: Mutex<HashMap<u64, Vec<WaitEntry>, FxBuild>>,
    next_seq: AtomicU64,
    /// Serializes deadlock searches, so that one cycle gets one victim.
    pub(crate) search_lock: Mutex<()>,
    pub(crate) observer: RwLock<Option<Arc<Observer>>>,
    pub(crate) stats: Stats,
    pub(crate) monitor: Mutex<MonitorState>,
    pub(crate) monitor_cv: Condvar,
    pub(crate) config: LockManagerConfig,
    /// See `ShardInner::key_queues`.
    key_queues: Arc<AtomicUsize>,
}

impl Inner {
    #[inline]
    pub(crate) fn shard_index(&self, resource: &LockResource) -> usize {
        // Bits 40.. pick the shard: the map inside the shard uses the low bits for the
        // bucket and the top 7 for its control bytes, so taking the top bits here would
        // leave every entry of a shard with nearly the same control byte (long probes).
        ((FxBuild.hash_one(resource) >> 40) as usize) & (SHARD_COUNT - 1)
    }

    #[inline]
    pub(crate) fn shard(&self, resource: &LockResource) -> &Shard {
        &self.shards[self.shard_index(resource)]
    }

    fn next_seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Relaxed) + 1
    }

    /// Removes a wait from the table of waits.
    pub(crate) fn remove_wait(&self, txn_id: u64, seq: u64) {
        let mut waits = self.waits.lock();
        if let Some(v) = waits.get_mut(&txn_id) {
            v.retain(|w| w.seq != seq);
            if v.is_empty() {
                waits.remove(&txn_id);
            }
        }
    }
}

/// Tells a waiting thread how its wait ended.
pub(crate) fn deliver(owner: &OwnerShared, seq: u64, outcome: Outcome) {
    owner.outcomes.lock().push((seq, outcome));
    owner.wake.notify_all();
}

/// Whether request `j` keeps waiting request `idx` from being granted (so `idx`'s
/// owner waits for `j`'s owner: an edge of the wait-for graph).
pub(crate) fn blocks(q: &[Request], idx: usize, j: usize) -> bool {
    if j == idx {
        return false;
    }
    let (w, o) = (&q[idx], &q[j]);
    if o.txn_id == w.txn_id {
        return false;
    }
    match w.status {
        Status::Granted => false,
        // A conversion waits only on other owners' granted modes.
        Status::Convert(target) => match o.status {
            Status::Granted | Status::Convert(_) => !target.compatible(o.mode),
            Status::Wait => false,
        },
        // A new request waits on granted modes, on pending conversions' targets and on
        // incompatible requests queued before it.
        Status::Wait => match o.status {
            Status::Granted => !w.mode.compatible(o.mode),
            Status::Convert(t) => !w.mode.compatible(o.mode) || !w.mode.compatible(t),
            Status::Wait => j < idx && !w.mode.compatible(o.mode),
        },
    }
}

fn is_blocked(q: &[Request], idx: usize) -> bool {
    (0..q.len()).any(|j| blocks(q, idx, j))
}

/// Whether a new request for `mode` (by an owner with no request here) can be granted.
#[inline]
fn new_request_grantable(q: &[Request], mode: LockMode) -> bool {
    q.iter().all(|o| match o.status {
        Status::Granted | Status::Wait => mode.compatible(o.mode),
        Status::Convert(t) => mode.compatible(o.mode) && mode.compatible(t),
    })
}

/// Whether the holder at `idx` can convert to `target` now.
#[inline]
fn conversion_grantable(q: &[Request], idx: usize, target: LockMode) -> bool {
    q.iter().enumerate().all(|(j, o)| j == idx || o.status == Status::Wait || target.compatible(o.mode))
}

/// Grants whatever the queue now allows (conversions oldest first, then waiters in
/// order) and wakes the owners.
pub(crate) fn grant_waiters(inner: &Inner, q: &mut Queue, resource: &LockResource) {
    if q.iter().all(|r| r.status == Status::Granted) {
        return;
    }
    let mut conversions: Vec<(u64, usize)> =
        q.iter().enumerate().filter(|(_, r)| matches!(r.status, Status::Convert(_))).map(|(i, r)| (r.seq, i)).collect();
    conversions.sort_unstable();
    for (_, i) in conversions {
        if !is_blocked(q, i) {
            grant_at(inner, q, i, resource);
        }
    }
    for i in 0..q.len() {
        if q[i].status == Status::Wait && !is_blocked(q, i) {
            grant_at(inner, q, i, resource);
        }
    }
}

fn grant_at(inner: &Inner, q: &mut Queue, i: usize, resource: &LockResource) {
    let r = &mut q[i];
    let was_waiting = r.status == Status::Wait;
    match r.status {
        Status::Convert(t) => r.mode = t,
        Status::Wait => {}
        Status::Granted => return,
    }
    r.status = Status::Granted;
    r.count += 1;
    let seq = std::mem::take(&mut r.seq);
    if let Some(owner) = r.waiter.take() {
        if was_waiting {
            owner.held.lock().push(*resource);
        }
        inner.remove_wait(owner.txn_id, seq);
        deliver(&owner, seq, Outcome::Granted);
    }
}

impl ShardInner {
    /// Removes a resource's (emptied) queue.
    fn drop_queue(&mut self, resource: &LockResource) {
        if self.map.remove(resource).is_some() {
            self.dropped(resource);
        }
    }

    /// Accounts for a queue just removed from the map.
    fn dropped(&mut self, resource: &LockResource) {
        if matches!(resource, LockResource::Key { .. }) {
            self.key_queues.fetch_sub(1, Release);
        }
    }
}

/// Drops a resource's queue once it is empty, keeping the buffer for reuse.
pub(crate) fn drop_if_empty(sh: &mut ShardInner, resource: &LockResource) {
    if sh.map.get(resource).is_some_and(|q| q.is_empty()) {
        sh.drop_queue(resource);
    }
}

/// Withdraws a waiting request (time-out, deadlock victim, owner released): a
/// conversion goes back to its granted mode, a new request leaves the queue; then the
/// queue is rescanned, since the leaver may have been holding others back.
pub(crate) fn withdraw(inner: &Inner, sh: &mut ShardInner, resource: &LockResource, seq: u64) -> bool {
    let Some(q) = sh.map.get_mut(resource) else { return false };
    let Some(i) = q.iter().position(|r| r.seq == seq && r.status != Status::Granted) else { return false };
    let txn = q[i].txn_id;
    match q[i].status {
        Status::Convert(_) => {
            q[i].status = Status::Granted;
            q[i].seq = 0;
            q[i].waiter = None;
        }
        _ => {
            q.remove(i);
        }
    }
    inner.remove_wait(txn, seq);
    grant_waiters(inner, q, resource);
    drop_if_empty(sh, resource);
    true
}

/// What a successful `lock` call got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LockGrant {
    /// The mode now held (after conversion, the converted mode).
    pub mode: LockMode,
    /// The mode held before, when this request converted the lock.
    pub converted_from: Option<LockMode>,
    /// How long the request waited (zero when granted at once).
    pub waited: Duration,
}

/// A request's status, as the locks DMV's request_status shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequestStatus {
    Grant,
    Wait,
    Convert,
}

impl RequestStatus {
    pub const fn as_str(self) -> &'static str {
        match self {
            RequestStatus::Grant => "GRANT",
            RequestStatus::Wait => "WAIT",
            RequestStatus::Convert => "CONVERT",
        }
    }
}

impl std::fmt::Display for RequestStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One row of the locks DMV (`crate::system`'s registry in sql names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockRow {
    pub resource: LockResource,
    pub resource_type: &'static str,
    pub resource_database_id: u16,
    pub resource_description: String,
    pub resource_associated_entity_id: i64,
    /// The granted mode for GRANT rows, the mode requested for WAIT and CONVERT rows.
    pub request_mode: LockMode,
    /// For CONVERT rows, the mode held while the conversion waits.
    pub granted_mode: Option<LockMode>,
    /// Always "LOCK".
    pub request_type: &'static str,
    pub request_status: RequestStatus,
    pub request_reference_count: u32,
    pub request_session_id: i32,
    pub request_owner_id: u64,
    /// Always "TRANSACTION".
    pub request_owner_type: &'static str,
}

/// A lock an owner holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeldLock {
    pub resource: LockResource,
    pub mode: LockMode,
    pub count: u32,
}

/// A waiting request, for sys.dm_os_waiting_tasks and blocking reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockWait {
    pub session_id: i32,
    pub txn_id: u64,
    pub resource: LockResource,
    /// The mode waited for (a conversion's target).
    pub mode: LockMode,
    pub conversion: bool,
    pub wait_duration: Duration,
    /// Sessions of the requests it waits behind (blocking_session_id is the first).
    pub blocking_session_ids: Vec<i32>,
}

/// Counters for sys.dm_os_performance_counters (SQLServer:Locks).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LockStats {
    /// Lock Requests/sec (cumulative).
    pub lock_requests: u64,
    /// Lock Waits/sec.
    pub lock_waits: u64,
    /// Lock Wait Time (ms).
    pub lock_wait_time_ms: u64,
    /// Lock Timeouts/sec (including SET LOCK_TIMEOUT 0 failures).
    pub lock_timeouts: u64,
    /// Lock Timeouts (timeout > 0)/sec.
    pub lock_timeouts_nonzero: u64,
    /// Number of Deadlocks/sec.
    pub deadlocks: u64,
}

/// Lock manager settings.
#[derive(Debug, Clone)]
pub struct LockManagerConfig {
    /// Run the background lock monitor (deadlock search on a timer).
    pub deadlock_monitor: bool,
    /// The monitor's interval while no deadlocks are found (SQL Server: 5 s).
    pub monitor_interval: Duration,
    /// The interval it drops to after finding deadlocks (SQL Server: 100 ms).
    pub monitor_min_interval: Duration,
    /// Search for a deadlock from every request as it starts to wait.
    pub search_on_wait: bool,
}

impl Default for LockManagerConfig {
    fn default() -> Self {
        LockManagerConfig {
            deadlock_monitor: true,
            monitor_interval: Duration::from_secs(5),
            monitor_min_interval: Duration::from_millis(100),
            search_on_wait: true,
        }
    }
}

/// The lock manager: one per instance. See the module documentation.
pub struct LockManager {
    pub(crate) inner: Arc<Inner>,
    monitor: Option<JoinHandle<()>>,
}

impl Default for LockManager {
    fn default() -> Self {
        Self::new()
    }
}

impl LockManager {
    /// A lock manager with SQL Server's defaults and its lock monitor thread running.
    pub fn new() -> LockManager {
        Self::with_config(LockManagerConfig::default())
    }

    pub fn with_config(config: LockManagerConfig) -> LockManager {
        let key_queues = Arc::new(AtomicUsize::new(0));
        let shards = (0..SHARD_COUNT)
            .map(|_| {
                Shard(Mutex::new(ShardInner {
                    map: HashMap::with_capacity_and_hasher(64, FxBuild),
                    lock_requests: 0,
                    key_queues: key_queues.clone(),
                }))
            })
            .collect();
        let inner = Arc::new(Inner {
            shards,
            key_queues,
            waits: Mutex::new(HashMap::with_hasher(FxBuild)),
            next_seq: AtomicU64::new(0),
            search_lock: Mutex::new(()),
            observer: RwLock::new(None),
            stats: Stats::default(),
            monitor: Mutex::new(MonitorState { shutdown: false, interval: config.monitor_interval }),
            monitor_cv: Condvar::new(),
            config: config.clone(),
        });
        let monitor = if config.deadlock_monitor {
            let inner = inner.clone();
            std::thread::Builder::new().name("LOCK MONITOR".into()).spawn(move || deadlock::monitor_loop(inner)).ok()
        } else {
            None
        };
        LockManager { inner, monitor }
    }

    /// Requests `mode` on `resource` for `owner`, waiting up to `timeout`.
    ///
    /// Re-entrant: an owner that already holds the resource in a mode covering `mode`
    /// just counts one more request; a stronger or different mode converts the lock to
    /// [`LockMode::join`] of both (waiting only on other owners). Every successful
    /// call is matched by one [`unlock`](Self::unlock), or by `release_all`.
    pub fn lock(
        &self,
        owner: &LockOwner,
        resource: LockResource,
        mode: LockMode,
        timeout: LockTimeout,
    ) -> Result<LockGrant, LockError> {
        let inner = &*self.inner;
        let o = &owner.shared;
        let mut guard = inner.shard(&resource).0.lock();
        let sh = &mut *guard;
        sh.lock_requests += 1;
        let q = match sh.map.entry(resource) {
            Entry::Occupied(e) => e.into_mut(),
            Entry::Vacant(e) => {
                if matches!(resource, LockResource::Key { .. }) {
                    sh.key_queues.fetch_add(1, Release);
                }
                e.insert(Queue::new())
            }
        };
        let (seq, wait_mode, held_before);
        if let Some(i) = q.iter().position(|r| r.txn_id == o.txn_id) {
            if q[i].status != Status::Granted {
                // Another thread of this owner is already waiting on this resource;
                // one owner can't queue twice on one resource.
                return Err(self.timed_out(resource, mode, timeout));
            }
            let held = q[i].mode;
            let target = held.join(mode);
            if target == held {
                q[i].count += 1;
                return Ok(LockGrant { mode: held, converted_from: None, waited: Duration::ZERO });
            }
            if conversion_grantable(q, i, target) {
                q[i].mode = target;
                q[i].count += 1;
                return Ok(LockGrant { mode: target, converted_from: Some(held), waited: Duration::ZERO });
            }
            if timeout == LockTimeout::NoWait {
                return Err(self.timed_out(resource, mode, timeout));
            }
            seq = inner.next_seq();
            let r = &mut q[i];
            r.status = Status::Convert(target);
            r.seq = seq;
            r.waiter = Some(o.clone());
            wait_mode = target;
            held_before = Some(held);
        } else {
            if new_request_grantable(q, mode) {
                q.push(Request {
                    txn_id: o.txn_id,
                    session_id: o.session_id,
                    mode,
                    status: Status::Granted,
                    count: 1,
                    seq: 0,
                    waiter: None,
                });
                o.held.lock().push(resource);
                return Ok(LockGrant { mode, converted_from: None, waited: Duration::ZERO });
            }
            // Not grantable means the queue has someone else in it: nothing to tidy.
            if timeout == LockTimeout::NoWait {
                return Err(self.timed_out(resource, mode, timeout));
            }
            seq = inner.next_seq();
            q.push(Request {
                txn_id: o.txn_id,
                session_id: o.session_id,
                mode,
                status: Status::Wait,
                count: 0,
                seq,
                waiter: Some(o.clone()),
            });
            wait_mode = mode;
            held_before = None;
        }
        let started = Instant::now();
        inner.waits.lock().entry(o.txn_id).or_default().push(WaitEntry {
            seq,
            resource,
            mode: wait_mode,
            started,
            timeout,
        });
        drop(guard);
        self.wait(o, resource, mode, wait_mode, held_before, seq, started, timeout)
    }

    #[allow(clippy::too_many_arguments)]
    fn wait(
        &self,
        o: &Arc<OwnerShared>,
        resource: LockResource,
        requested: LockMode,
        wait_mode: LockMode,
        held_before: Option<LockMode>,
        seq: u64,
        started: Instant,
        timeout: LockTimeout,
    ) -> Result<LockGrant, LockError> {
        let inner = &*self.inner;
        inner.stats.lock_waits.fetch_add(1, Relaxed);
        let timer = diag::begin_wait(wait_mode.wait_type());
        if inner.config.search_on_wait {
            deadlock::search_from(inner, o.txn_id);
        }
        let deadline = timeout.duration().map(|d| started + d);
        let mut cancelled = false;
        let decided = {
            let mut out = o.outcomes.lock();
            loop {
                if let Some(p) = out.iter().position(|(s, _)| *s == seq) {
                    break Some(out.swap_remove(p).1);
                }
                // The request is cancelled (attention, KILL, shutdown): withdraw. Polled,
                // because whoever cancels does not know which condvar the waiter is on.
                if diag::cancelled() {
                    cancelled = true;
                    break None;
                }
                let poll = Instant::now() + CANCEL_POLL;
                let until = deadline.map_or(poll, |d| d.min(poll));
                if o.wake.wait_until(&mut out, until).timed_out() && deadline.is_some_and(|d| Instant::now() >= d) {
                    break out.iter().position(|(s, _)| *s == seq).map(|p| out.swap_remove(p).1);
                }
            }
        };
        let outcome = match decided {
            Some(x) => x,
            None => self.cancel_wait(o, resource, seq),
        };
        if cancelled && outcome == Outcome::Cancelled {
            timer.finish();
            return Err(LockError::Cancelled { resource, mode: requested });
        }
        timer.finish();
        let waited = started.elapsed();
        inner.stats.lock_wait_us.fetch_add(waited.as_micros() as u64, Relaxed);
        match outcome {
            Outcome::Granted => Ok(LockGrant { mode: wait_mode, converted_from: held_before, waited }),
            Outcome::Victim => Err(LockError::DeadlockVictim { session_id: o.session_id, resource, mode: requested }),
            Outcome::Cancelled => Err(self.timed_out(resource, requested, timeout)),
        }
    }

    /// The waiter's own withdrawal after its time-out; a decision that raced with the
    /// time-out wins.
    fn cancel_wait(&self, o: &Arc<OwnerShared>, resource: LockResource, seq: u64) -> Outcome {
        let inner = &*self.inner;
        let mut guard = inner.shard(&resource).0.lock();
        {
            let mut out = o.outcomes.lock();
            if let Some(p) = out.iter().position(|(s, _)| *s == seq) {
                return out.swap_remove(p).1;
            }
        }
        withdraw(inner, &mut guard, &resource, seq);
        Outcome::Cancelled
    }

    fn timed_out(&self, resource: LockResource, mode: LockMode, timeout: LockTimeout) -> LockError {
        self.inner.stats.lock_timeouts.fetch_add(1, Relaxed);
        if timeout != LockTimeout::NoWait {
            self.inner.stats.lock_timeouts_nonzero.fetch_add(1, Relaxed);
        }
        LockError::Timeout { resource, mode }
    }

    /// Undoes one successful `lock` call: decrements the request count and releases
    /// the lock when it reaches zero (the mode is never lowered, as in SQL Server).
    /// Returns false when the owner holds no lock on the resource.
    pub fn unlock(&self, owner: &LockOwner, resource: LockResource) -> bool {
        let inner = &*self.inner;
        let o = &owner.shared;
        let mut guard = inner.shard(&resource).0.lock();
        let sh = &mut *guard;
        let Some(q) = sh.map.get_mut(&resource) else { return false };
        let Some(i) = q.iter().position(|r| r.txn_id == o.txn_id) else { return false };
        let r = &mut q[i];
        match r.status {
            Status::Wait => return false,
            // The last count of a lock being converted stays until the conversion ends.
            Status::Convert(_) if r.count <= 1 => return false,
            _ => {}
        }
        if r.count > 1 {
            r.count -= 1;
            return true;
        }
        q.remove(i);
        if q.is_empty() {
            sh.drop_queue(&resource);
        } else {
            grant_waiters(inner, q, &resource);
        }
        let mut held = o.held.lock();
        if let Some(p) = held.iter().rposition(|h| *h == resource) {
            held.remove(p);
        }
        drop(held);
        // Gone for good: a `lock_kept` entry on it must not answer for it any more.
        o.kept.lock().retain(|(r, _)| *r != resource);
        true
    }

    /// Releases every lock the owner holds, whatever its count (COMMIT, ROLLBACK),
    /// and wakes the waiters that can now go. Returns the number of locks released.
    pub fn release_all(&self, owner: &LockOwner) -> usize {
        let o = &owner.shared;
        o.kept.lock().clear();
        let mut list = std::mem::take(&mut *o.held.lock());
        let n = list.len();
        for resource in list.drain(..) {
            let mut guard = self.inner.shard(&resource).0.lock();
            self.release_entry(&mut guard, o, &resource);
        }
        // Give the buffer back so the next transaction of this owner doesn't allocate.
        let mut held = o.held.lock();
        if held.is_empty() {
            std::mem::swap(&mut *held, &mut list);
        }
        n
    }

    /// Like [`lock`](Self::lock), for a lock the owner keeps until
    /// [`release_all`](Self::release_all) (a write's table IX, say): never matched by an
    /// `unlock`. A repeated request that the mode already granted this way covers returns
    /// at once from the owner's own list, without touching the lock table, which is what
    /// makes taking the table's IX once per row cheap.
    pub fn lock_kept(
        &self,
        owner: &LockOwner,
        resource: LockResource,
        mode: LockMode,
        timeout: LockTimeout,
    ) -> Result<(), LockError> {
        {
            let kept = owner.shared.kept.lock();
            if kept.iter().any(|(r, m)| *r == resource && m.join(mode) == *m) {
                return Ok(());
            }
        }
        let grant = self.lock(owner, resource, mode, timeout)?;
        let mut kept = owner.shared.kept.lock();
        match kept.iter_mut().find(|(r, _)| *r == resource) {
            Some(e) => e.1 = grant.mode,
            None => kept.push((resource, grant.mode)),
        }
        Ok(())
    }

    /// Whether `owner` could be granted `mode` on `resource` right now, as far as the
    /// locks of *other* owners go (granted modes and pending conversions; waiters are not
    /// counted). Takes nothing. A READ COMMITTED read that would lock a row and release it
    /// at once asks this instead, while the row's page is latched: no other owner holding
    /// an incompatible lock means the row as latched is committed.
    pub fn grantable_now(&self, owner: &LockOwner, resource: &LockResource, mode: LockMode) -> bool {
        if matches!(resource, LockResource::Key { .. }) && !self.key_locks_exist() {
            return true;
        }
        let guard = self.inner.shard(resource).0.lock();
        let Some(q) = guard.map.get(resource) else { return true };
        let me = owner.shared.txn_id;
        q.iter().all(|r| {
            r.txn_id == me
                || match r.status {
                    Status::Granted => mode.compatible(r.mode),
                    Status::Convert(t) => mode.compatible(r.mode) && mode.compatible(t),
                    Status::Wait => true,
                }
        })
    }

    /// Whether any owner holds or waits for a lock on any key. False means every key is
    /// free ([`grantable_now`](Self::grantable_now) is true for all of them): a READ
    /// COMMITTED scan checks this once per row instead of looking each key up. A
    /// writer's key lock is in the table before it latches the page to change the row
    /// and stays until the change commits or rolls back, so a reader that latched the
    /// page after the change sees it counted here.
    #[inline]
    pub fn key_locks_exist(&self) -> bool {
        self.inner.key_queues.load(Acquire) != 0
    }

    /// Releases (whatever their count) the owner's granted locks for which
    /// `predicate(resource, mode)` is true; returns how many. READ COMMITTED uses this
    /// at the end of a statement to drop the S locks it still has on rows and pages:
    /// `release_matching(owner, |r, m| m == LockMode::S && !matches!(r, LockResource::Object { .. }))`.
    pub fn release_matching(
        &self,
        owner: &LockOwner,
        mut predicate: impl FnMut(&LockResource, LockMode) -> bool,
    ) -> usize {
        let o = &owner.shared;
        let list: Vec<LockResource> = o.held.lock().clone();
        let mut released: Vec<LockResource> = Vec::new();
        for resource in list {
            let mut guard = self.inner.shard(&resource).0.lock();
            let mode = guard
                .map
                .get(&resource)
                .and_then(|q| q.iter().find(|r| r.txn_id == o.txn_id && r.status == Status::Granted))
                .map(|r| r.mode);
            if let Some(mode) = mode {
                if predicate(&resource, mode) {
                    self.release_entry(&mut guard, o, &resource);
                    released.push(resource);
                }
            }
        }
        if !released.is_empty() {
            o.kept.lock().retain(|(r, _)| !released.contains(r));
            let mut held = o.held.lock();
            if released.len() <= 8 {
                for r in &released {
                    if let Some(p) = held.iter().rposition(|h| h == r) {
                        held.remove(p);
                    }
                }
            } else {
                let set: std::collections::HashSet<LockResource, FxBuild> = released.iter().copied().collect();
                held.retain(|h| !set.contains(h));
            }
        }
        released.len()
    }

    /// Removes the owner's request on `resource` entirely (any count). A conversion
    /// still pending on it (another thread of the owner) is cancelled.
    fn release_entry(&self, sh: &mut ShardInner, o: &Arc<OwnerShared>, resource: &LockResource) {
        let inner = &*self.inner;
        // One hash lookup for the common case, the owner's request alone in its queue:
        // the entry found is also the one removed.
        let Entry::Occupied(mut e) = sh.map.entry(*resource) else { return };
        let q = e.get_mut();
        let Some(i) = q.iter().position(|r| r.txn_id == o.txn_id && r.status != Status::Wait) else { return };
        let r = q.remove(i);
        if let (Status::Convert(_), Some(w)) = (r.status, r.waiter) {
            inner.remove_wait(w.txn_id, r.seq);
            deliver(&w, r.seq, Outcome::Cancelled);
        }
        if q.is_empty() {
            e.remove();
            sh.dropped(resource);
        } else {
            grant_waiters(inner, q, resource);
        }
    }

    /// The locks the owner holds, in acquisition order.
    pub fn held(&self, owner: &LockOwner) -> Vec<HeldLock> {
        let o = &owner.shared;
        let list: Vec<LockResource> = o.held.lock().clone();
        list.into_iter()
            .filter_map(|resource| {
                let guard = self.inner.shard(&resource).0.lock();
                let r = guard.map.get(&resource)?.iter().find(|r| r.txn_id == o.txn_id && r.status != Status::Wait)?;
                Some(HeldLock { resource, mode: r.mode, count: r.count })
            })
            .collect()
    }

    /// The mode the owner holds on `resource`, if any.
    pub fn held_mode(&self, owner: &LockOwner, resource: &LockResource) -> Option<LockMode> {
        let guard = self.inner.shard(resource).0.lock();
        let q = guard.map.get(resource)?;
        q.iter().find(|r| r.txn_id == owner.shared.txn_id && r.status != Status::Wait).map(|r| r.mode)
    }

    /// Every request, granted or waiting: the rows of the locks DMV. Each
    /// resource's rows are read under one lock, so they are consistent with each other.
    pub fn snapshot(&self) -> Vec<LockRow> {
        let mut rows = Vec::new();
        for shard in self.inner.shards.iter() {
            let guard = shard.0.lock();
            for (resource, q) in guard.map.iter() {
                for r in q {
                    let (request_status, request_mode, granted_mode) = match r.status {
                        Status::Granted => (RequestStatus::Grant, r.mode, None),
                        Status::Convert(t) => (RequestStatus::Convert, t, Some(r.mode)),
                        Status::Wait => (RequestStatus::Wait, r.mode, None),
                    };
                    rows.push(LockRow {
                        resource: *resource,
                        resource_type: resource.resource_type(),
                        resource_database_id: resource.database_id(),
                        resource_description: resource.description(),
                        resource_associated_entity_id: resource.associated_entity_id(),
                        request_mode,
                        granted_mode,
                        request_type: "LOCK",
                        request_status,
                        request_reference_count: r.count.max(1),
                        request_session_id: r.session_id,
                        request_owner_id: r.txn_id,
                        request_owner_type: "TRANSACTION",
                    });
                }
            }
        }
        rows
    }

    /// The requests waiting now and whom they wait for (sys.dm_os_waiting_tasks,
    /// blocking_session_id).
    pub fn waiting(&self) -> Vec<LockWait> {
        let entries: Vec<(u64, LockResource, LockMode, Instant)> = {
            let waits = self.inner.waits.lock();
            waits.values().flatten().map(|w| (w.seq, w.resource, w.mode, w.started)).collect()
        };
        let mut out = Vec::new();
        for (seq, resource, mode, started) in entries {
            let guard = self.inner.shard(&resource).0.lock();
            let Some(q) = guard.map.get(&resource) else { continue };
            let Some(i) = q.iter().position(|r| r.seq == seq && r.status != Status::Granted) else { continue };
            let mut blocking: Vec<i32> = Vec::new();
            for j in 0..q.len() {
                if blocks(q, i, j) && !blocking.contains(&q[j].session_id) {
                    blocking.push(q[j].session_id);
                }
            }
            out.push(LockWait {
                session_id: q[i].session_id,
                txn_id: q[i].txn_id,
                resource,
                mode,
                conversion: matches!(q[i].status, Status::Convert(_)),
                wait_duration: started.elapsed(),
                blocking_session_ids: blocking,
            });
        }
        out
    }

    /// Runs a full deadlock search now (what the lock monitor does on its timer),
    /// resolving every deadlock found. Returns the number of deadlocks resolved.
    pub fn check_deadlocks_now(&self) -> usize {
        deadlock::check_all(&self.inner)
    }

    /// Registers the function called with every deadlock's report (the Extended Events
    /// engine fires xml_deadlock_report from it). It runs on the thread that detected
    /// the deadlock, after the victim has been chosen and with no lock manager locks
    /// held. Replaces any earlier observer.
    pub fn set_deadlock_observer(&self, observer: Box<dyn Fn(&DeadlockReport) + Send + Sync>) {
        *self.inner.observer.write() = Some(Arc::from(observer));
    }

    pub fn clear_deadlock_observer(&self) {
        *self.inner.observer.write() = None;
    }

    /// Deadlocks resolved so far (the Number of Deadlocks/sec counter).
    pub fn deadlock_count(&self) -> u64 {
        self.inner.stats.deadlocks.load(Relaxed)
    }

    /// The lock monitor's current search interval (5 s normally, down to 100 ms while
    /// deadlocks are being found).
    pub fn monitor_interval(&self) -> Duration {
        self.inner.monitor.lock().interval
    }

    /// The SQLServer:Locks counters.
    pub fn stats(&self) -> LockStats {
        let s = &self.inner.stats;
        let lock_requests = self.inner.shards.iter().map(|sh| sh.0.lock().lock_requests).sum();
        LockStats {
            lock_requests,
            lock_waits: s.lock_waits.load(Relaxed),
            lock_wait_time_ms: s.lock_wait_us.load(Relaxed) / 1000,
            lock_timeouts: s.lock_timeouts.load(Relaxed),
            lock_timeouts_nonzero: s.lock_timeouts_nonzero.load(Relaxed),
            deadlocks: s.deadlocks.load(Relaxed),
        }
    }
}

impl Drop for LockManager {
    fn drop(&mut self) {
        self.inner.monitor.lock().shutdown = true;
        self.inner.monitor_cv.notify_all();
        if let Some(h) = self.monitor.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mgr() -> LockManager {
        LockManager::with_config(LockManagerConfig { deadlock_monitor: false, ..Default::default() })
    }

    #[test]
    fn shards_are_spread() {
        let m = mgr();
        let mut counts = [0usize; SHARD_COUNT];
        for i in 0..6400u32 {
            counts[m.inner.shard_index(&LockResource::page(1, 1, i))] += 1;
            counts[m.inner.shard_index(&LockResource::key(1, 72057594038779904, i as u64 * 7919))] += 1;
        }
        let (min, max) = (counts.iter().min().copied().unwrap_or(0), counts.iter().max().copied().unwrap_or(0));
        assert!(min > 100 && max < 320, "min {min} max {max}");
    }

    /// `key_locks_exist` counts key queues only, through every way a queue goes:
    /// unlock, release_all, and a waiter that times out.
    #[test]
    fn key_locks_are_counted_while_they_exist() {
        let m = mgr();
        let (a, b) = (LockOwner::new(1, 51), LockOwner::new(2, 52));
        let k = LockResource::key(1, 1, 7);
        assert!(!m.key_locks_exist());
        assert!(m.lock(&a, LockResource::page(1, 1, 9), LockMode::X, LockTimeout::NoWait).is_ok());
        assert!(!m.key_locks_exist(), "a page lock is not a key lock");
        assert!(m.lock(&a, k, LockMode::X, LockTimeout::NoWait).is_ok());
        assert!(m.key_locks_exist());
        assert!(!m.grantable_now(&b, &k, LockMode::S));
        assert!(m.grantable_now(&b, &LockResource::key(1, 1, 8), LockMode::S));
        assert!(m.unlock(&a, k));
        assert!(!m.key_locks_exist());
        assert!(m.lock(&a, k, LockMode::X, LockTimeout::NoWait).is_ok());
        assert!(m.lock(&b, k, LockMode::S, LockTimeout::Millis(10)).is_err());
        assert!(m.key_locks_exist());
        assert_eq!(m.release_all(&a), 2);
        assert!(!m.key_locks_exist());
    }

    #[test]
    fn emptied_queues_are_dropped() {
        let m = mgr();
        let o = LockOwner::new(1, 51);
        for i in 0..100 {
            let r = LockResource::key(1, 1, i);
            assert!(m.lock(&o, r, LockMode::X, LockTimeout::NoWait).is_ok());
            assert!(m.unlock(&o, r));
        }
        let total: usize = m.inner.shards.iter().map(|s| s.0.lock().map.len()).sum();
        assert_eq!(total, 0);
        assert_eq!(o.lock_count(), 0);
    }
}
