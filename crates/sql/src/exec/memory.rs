//! Query memory: the grants of running requests, as SQL Server's resource semaphore
//! keeps them (sys.dm_exec_query_memory_grants).
//!
//! Operators that hold rows (a sort's input, a hash join's build side, an aggregate's
//! groups, DISTINCT, materialized inputs) charge what they hold to their request's
//! [`Grant`]. A grant takes memory from the process-wide pool in 1 MB steps, up to
//! [`REQUEST_MAX_PERCENT`] of the pool per request (SQL Server's
//! REQUEST_MAX_MEMORY_GRANT_PERCENT); what an operator holds goes back when the operator
//! is dropped ([`Charge`]), and the whole grant when the request ends. When a charge
//! does not fit, a sort spills sorted runs to a file and merges them, hash operators
//! write partition files (`exec/spill.rs`, `exec/plan/hash_spill.rs`); what cannot spill
//! fails the statement with Msg 701 rather than grow without bound.
//! Why: a cross join sorted by NEWID() grew the process past 13 GB and kept going.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, Weak};
use std::time::SystemTime;

use types::{SqlError, Value};

/// A request may hold at most this share of the pool (SQL Server's default
/// REQUEST_MAX_MEMORY_GRANT_PERCENT).
pub const REQUEST_MAX_PERCENT: u64 = 25;
/// Grants grow in steps of this many bytes.
const STEP: u64 = 1 << 20;
/// What every request may take even when the pool is spent.
const SMALL_QUERY: u64 = 4 * STEP;
/// How long an operator that cannot spill waits for memory before Msg 8645.
const GRANT_WAIT: std::time::Duration = std::time::Duration::from_secs(10);
/// The pool when nothing configured it (an embedded instance sets its own).
const DEFAULT_POOL: u64 = 1 << 30;

/// The process-wide pool of query memory.
struct Pool {
    total: AtomicU64,
    granted: AtomicU64,
    /// The grants of running requests, for the DMV.
    grants: Mutex<Vec<Weak<GrantState>>>,
}

fn pool() -> &'static Pool {
    static POOL: Pool =
        Pool { total: AtomicU64::new(DEFAULT_POOL), granted: AtomicU64::new(0), grants: Mutex::new(Vec::new()) };
    &POOL
}

/// Sets the size of the query memory pool (the instance's memory limit).
pub fn set_pool_bytes(bytes: u64) {
    pool().total.store(bytes.max(16 * STEP), Relaxed);
}

/// The most one request may be granted.
pub fn request_max_bytes() -> u64 {
    pool().total.load(Relaxed) / 100 * REQUEST_MAX_PERCENT
}

#[derive(Debug)]
struct GrantState {
    session_id: i32,
    request_time: SystemTime,
    granted: AtomicU64,
    used: AtomicU64,
    max_used: AtomicU64,
    /// Set once the grant is listed in the pool's registry.
    listed: std::sync::atomic::AtomicBool,
}

impl Drop for GrantState {
    fn drop(&mut self) {
        pool().granted.fetch_sub(self.granted.load(Relaxed), Relaxed);
    }
}

/// Why a grant could not grow.
enum Refused {
    /// Past the request's share of the pool (Msg 701).
    OverShare,
    /// The pool is spent (Msg 8645 after the wait).
    PoolSpent,
}

/// One request's memory grant (on `Cx`): empty until an operator charges it.
#[derive(Clone, Debug)]
pub struct Grant(Arc<GrantState>);

/// A row of sys.dm_exec_query_memory_grants.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub session_id: i32,
    pub request_time: SystemTime,
    pub granted_kb: u64,
    pub used_kb: u64,
    pub max_used_kb: u64,
    pub ideal_kb: u64,
}

/// The grants of running requests that hold memory.
pub fn grants() -> Vec<GrantRow> {
    let mut list = pool().grants.lock().unwrap_or_else(|e| e.into_inner());
    list.retain(|w| w.strong_count() > 0);
    list.iter()
        .filter_map(Weak::upgrade)
        .filter(|g| g.granted.load(Relaxed) > 0)
        .map(|g| GrantRow {
            session_id: g.session_id,
            request_time: g.request_time,
            granted_kb: g.granted.load(Relaxed) / 1024,
            used_kb: g.used.load(Relaxed) / 1024,
            max_used_kb: g.max_used.load(Relaxed) / 1024,
            ideal_kb: request_max_bytes() / 1024,
        })
        .collect()
}

/// Msg 701: the request cannot have the memory an operator needs (SQL Server raises it
/// at severity 17 for a query out of grant memory).
pub fn insufficient_memory() -> SqlError {
    SqlError::new(701, 17, 123, "There is insufficient system memory in resource pool 'default' to run this query.")
}

impl Grant {
    pub fn new(session_id: i32) -> Grant {
        Grant(Arc::new(GrantState {
            session_id,
            request_time: SystemTime::now(),
            granted: AtomicU64::new(0),
            used: AtomicU64::new(0),
            max_used: AtomicU64::new(0),
            listed: std::sync::atomic::AtomicBool::new(false),
        }))
    }

    /// Takes `bytes` for an operator; nothing is taken when the request would go past
    /// its share of the pool, or the pool has no more and `wait` is false or the wait
    /// (RESOURCE_SEMAPHORE) ran out. The first [`SMALL_QUERY`] bytes of a request
    /// are always granted, as SQL Server's small-query semaphore lets a cheap query run
    /// beside the big ones.
    fn take(&self, bytes: u64, wait: bool) -> Result<(), Refused> {
        let g = &self.0;
        let used = g.used.fetch_add(bytes, Relaxed) + bytes;
        let granted = g.granted.load(Relaxed);
        if used > granted {
            let want = (used - granted).div_ceil(STEP) * STEP;
            let p = pool();
            if granted + want > request_max_bytes().max(SMALL_QUERY) {
                g.used.fetch_sub(bytes, Relaxed);
                return Err(Refused::OverShare);
            }
            let small = granted + want <= SMALL_QUERY;
            let mut timer = None;
            let started = std::time::Instant::now();
            loop {
                if small || p.granted.fetch_add(want, Relaxed) + want <= p.total.load(Relaxed) {
                    if small {
                        p.granted.fetch_add(want, Relaxed);
                    }
                    break;
                }
                p.granted.fetch_sub(want, Relaxed);
                if !wait || started.elapsed() >= GRANT_WAIT || diag::cancelled() {
                    g.used.fetch_sub(bytes, Relaxed);
                    return Err(Refused::PoolSpent);
                }
                // Sorts give memory back as they spill, requests end: wait for some.
                timer.get_or_insert_with(|| diag::begin_wait(diag::WaitType::RESOURCE_SEMAPHORE));
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            drop(timer);
            g.granted.fetch_add(want, Relaxed);
            if !g.listed.swap(true, Relaxed) {
                pool().grants.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::downgrade(g));
            }
        }
        g.max_used.fetch_max(used, Relaxed);
        Ok(())
    }

    /// Gives `bytes` back, and to the pool the whole steps no longer used (a batch's
    /// grant does not stay at its largest sort's size for the statements after it).
    fn give(&self, bytes: u64) {
        let g = &self.0;
        let prev = g.used.fetch_update(Relaxed, Relaxed, |u| Some(u.saturating_sub(bytes))).unwrap_or_else(|u| u);
        let used = prev.saturating_sub(bytes);
        let keep = used.div_ceil(STEP) * STEP;
        let granted = g.granted.load(Relaxed);
        if granted > keep {
            g.granted.store(keep, Relaxed);
            pool().granted.fetch_sub(granted - keep, Relaxed);
        }
    }

    /// An empty charge against this grant, for an operator to grow.
    pub fn charge(&self) -> Charge {
        Charge { grant: self.clone(), bytes: 0 }
    }
}

/// What one operator holds of its request's grant; given back on drop.
#[derive(Debug)]
pub struct Charge {
    grant: Grant,
    bytes: u64,
}

impl Charge {
    /// Holds `bytes` more; false (nothing held) when the grant cannot grow now (a sort
    /// then spills).
    pub fn try_add(&mut self, bytes: u64) -> bool {
        let ok = self.grant.take(bytes, false).is_ok();
        if ok {
            self.bytes += bytes;
        }
        ok
    }

    /// Holds `bytes` more, waiting for the pool (RESOURCE_SEMAPHORE) if it is spent; Msg
    /// 701 past the request's share, 8645 when the wait runs out.
    pub fn add(&mut self, bytes: u64) -> Result<(), SqlError> {
        match self.grant.take(bytes, true) {
            Ok(()) => {
                self.bytes += bytes;
                Ok(())
            }
            Err(Refused::OverShare) => Err(insufficient_memory()),
            Err(Refused::PoolSpent) => Err(SqlError::new(
                8645,
                17,
                1,
                "A timeout occurred while waiting for memory resources to execute the query in resource pool 'default' (2). Rerun the query.",
            )),
        }
    }

    /// Gives everything held back (a sort that wrote its rows to a run).
    pub fn clear(&mut self) {
        self.grant.give(self.bytes);
        self.bytes = 0;
    }

    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.clear();
    }
}

/// About how much memory a row holds (the vector, each value, and string and binary
/// contents): what operators charge.
pub fn row_bytes(row: &[Value]) -> u64 {
    let mut n = 24 + std::mem::size_of_val(row) as u64;
    for v in row {
        n += match v {
            Value::String(s) => s.capacity() as u64,
            Value::Binary(b) => b.capacity() as u64,
            Value::Variant(_) => 64,
            _ => 0,
        };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_gets_at_most_its_share_and_gives_it_back() {
        set_pool_bytes(400 << 20);
        let g = Grant::new(51);
        let mut c = g.charge();
        // 25% of 400 MB: 100 MB.
        assert!(c.try_add(60 << 20));
        assert!(c.try_add(39 << 20));
        assert!(!c.try_add(2 << 20), "past the request's share");
        assert_eq!(c.bytes(), 99 << 20);
        assert!(grants().iter().any(|r| r.session_id == 51 && r.granted_kb >= 99 * 1024));
        c.clear();
        assert!(c.try_add(90 << 20), "given back, usable again");
        drop(c);
        drop(g);
        assert!(!grants().iter().any(|r| r.session_id == 51));
    }
}
