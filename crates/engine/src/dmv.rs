//! What the DMVs read from the instance: each session's activity (kept in its
//! `SessionSlot`, published at the start and end of every request), its wait table, and
//! the instance's file statistics, counters and logs. `EngineHost`'s DMV methods (the
//! `sql` crate's `Host`) call the functions here; the views themselves are in
//! `sql::exec::LiveRequest`.
//!
//! # Where the numbers come from
//!
//! - Waits: every session has a `diag::WaitStats`, installed on the worker thread for the
//!   length of each request (`diag::SessionScope`), so a WRITELOG wait in the log
//!   manager is charged to the session that committed as well as to the instance.
//! - Requests: the executor publishes the statement it runs (`LiveRequest`); the current
//!   wait comes from the session's wait table; lock waits add the blocking session and
//!   the resource from the database's lock manager.
//! - CPU: the worker thread's CPU clock, read at the start and end of each request.
//! - Counters: Batch Requests/sec (one per batch or RPC) and User Connections are
//!   counted here; Transactions/sec and the log counters by `txn`.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use sql::exec::LiveRequest;
use sql::exec::SessionState;
use sql::host::{
    AllocationUnitRow, ClearStats, ConnectionInfo, CounterRow, DbId, FileStatRow, Isolation, LockRow, LogSpaceRow,
    RequestRow, SessionRow, SysInfo, TransactionInfo, WaitStatRow,
};

use crate::instance::Instance;

/// Milliseconds on the monotonic clock (since the machine started, on Linux).
pub(crate) fn ms_ticks() -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime only writes the timespec it is given.
    if unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec.max(0) * 1000 + ts.tv_nsec.max(0) / 1_000_000
}

/// The machine's physical memory and the process's address space, in KB.
fn memory_kb() -> (i64, i64) {
    // SAFETY: sysconf and getrlimit only read system values (getrlimit writes the struct
    // it is given).
    let (pages, page_size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
    let physical = if pages > 0 && page_size > 0 { (pages as i64).saturating_mul(page_size as i64) / 1024 } else { 0 };
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut lim) };
    // Without a limit: the 128 TB user address space of x86-64 and arm64 Linux, which is
    // also what SQL Server shows on 64-bit Windows.
    let virt = if rc == 0 && lim.rlim_cur != libc::RLIM_INFINITY {
        (lim.rlim_cur / 1024).min(i64::MAX as u64) as i64
    } else {
        (1i64 << 47) / 1024
    };
    (physical, virt)
}

/// The process's CPU time so far: (kernel, user) milliseconds.
fn process_cpu_ms() -> (i64, i64) {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return (0, 0);
    }
    let ms = |t: libc::timeval| t.tv_sec.max(0) * 1000 + t.tv_usec.max(0) / 1000;
    (ms(u.ru_stime), ms(u.ru_utime))
}

/// A request in progress.
struct Running {
    start_time: SystemTime,
    start: Instant,
    /// The session's total wait time when the request started.
    waits_start: Duration,
}

impl Running {
    /// The request's CPU time so far: its elapsed time less the time it spent waiting
    /// (recorded waits and the one in progress), as SQLOS counts a worker's time on its
    /// scheduler. The thread CPU clock would be a system call (about 0.6 us) at the start
    /// and end of every request, as much as the rest of a point lookup's statement path.
    fn cpu(&self, waits: &diag::WaitStats) -> Duration {
        let waited = waits.total_wait().saturating_sub(self.waits_start);
        let current = waits.current_wait().map(|(_, d)| d).unwrap_or_default();
        self.start.elapsed().saturating_sub(waited).saturating_sub(current)
    }
}

/// What the last request left behind, and the session's totals.
struct Activity {
    host_name: String,
    program_name: String,
    live: Option<Arc<LiveRequest>>,
    running: Option<Running>,
    last_request_start: SystemTime,
    last_request_end: Option<SystemTime>,
    cpu: Duration,
    scheduled: Duration,
    isolation: Isolation,
    lock_timeout: i64,
    date_first: u8,
    /// @@OPTIONS (`SessionState::options_bits`).
    options: u32,
    row_count: i64,
    prev_error: i32,
    trancount: u32,
    transaction: Option<TransactionInfo>,
    language: String,
    connection: ConnectionInfo,
}

/// A session's activity as the DMVs see it (one per `SessionSlot`).
pub(crate) struct SessionActivity {
    /// sys.dm_exec_session_wait_stats: reset when the session opens, as SQL Server does.
    pub waits: Arc<diag::WaitStats>,
    pub login_time: SystemTime,
    inner: Mutex<Activity>,
}

impl SessionActivity {
    pub fn new() -> SessionActivity {
        let now = SystemTime::now();
        SessionActivity {
            waits: Arc::new(diag::WaitStats::new()),
            login_time: now,
            inner: Mutex::new(Activity {
                host_name: String::new(),
                program_name: String::new(),
                live: None,
                running: None,
                last_request_start: now,
                last_request_end: None,
                cpu: Duration::ZERO,
                scheduled: Duration::ZERO,
                isolation: Isolation::ReadCommitted,
                lock_timeout: -1,
                date_first: 7,
                options: sql::exec::opt::DEFAULT,
                row_count: 0,
                prev_error: 0,
                trancount: 0,
                transaction: None,
                language: "us_english".into(),
                connection: ConnectionInfo {
                    connection_id: sql::scalar::functions::newid(),
                    ..ConnectionInfo::default()
                },
            }),
        }
    }

    /// The client's HOST_NAME() and APP_NAME() from its login.
    pub fn set_client(&self, host_name: &str, program_name: &str) {
        let mut a = self.inner.lock();
        a.host_name = host_name.to_string();
        a.program_name = program_name.to_string();
    }

    /// How the client is connected (the TDS server's view of the connection); sessions
    /// inside the process keep the default (no address: shared memory).
    pub fn set_connection(&self, info: ConnectionInfo) {
        let mut a = self.inner.lock();
        let id = a.connection.connection_id;
        a.connection = ConnectionInfo { connection_id: id, ..info };
    }

    /// A request (batch or RPC) starts on this thread: counts it (Batch Requests/sec),
    /// notes its start and installs the session's wait table on the thread until the
    /// returned scope is dropped.
    pub fn begin_request(&self, state: &SessionState) -> diag::SessionScope {
        diag::counters().batch_requests.inc();
        state.live.start();
        let now = SystemTime::now();
        {
            let mut a = self.inner.lock();
            if a.live.is_none() {
                a.live = Some(state.live.clone());
            }
            a.last_request_start = now;
            a.running = Some(Running { start_time: now, start: Instant::now(), waits_start: self.waits.total_wait() });
        }
        diag::SessionScope::enter(self.waits.clone()).with_cancel(state.cancel.clone())
    }

    /// The request ended (or the session was just opened): publishes the session's
    /// settings and open transaction and adds the request's times to the session's
    /// totals.
    pub fn end_request(&self, state: &SessionState, transaction: Option<TransactionInfo>) {
        let mut a = self.inner.lock();
        if let Some(r) = a.running.take() {
            a.cpu += r.cpu(&self.waits);
            a.scheduled += r.start.elapsed();
            a.last_request_end = Some(SystemTime::now());
        }
        a.isolation = state.isolation;
        a.lock_timeout = state.lock_timeout;
        a.date_first = state.datefirst;
        a.options = state.options_bits();
        a.row_count = state.rowcount;
        a.prev_error = state.error;
        a.trancount = state.trancount;
        a.transaction = transaction;
        // Compared first: the language rarely changes, and this runs after every request.
        if a.language != state.language {
            a.language = state.language.clone();
        }
    }
}

impl Instance {
    /// sys.dm_exec_session_wait_stats.
    pub(crate) fn dmv_session_waits(&self) -> Vec<WaitStatRow> {
        let mut out = Vec::new();
        for (spid, slot) in self.session_slots() {
            for w in slot.activity.waits.snapshot() {
                out.push(wait_row(spid, &w));
            }
        }
        out
    }

    /// sys.dm_exec_sessions and sys.dm_exec_requests.
    pub(crate) fn dmv_sessions(&self) -> Vec<SessionRow> {
        // Each session's current wait is read before the lock managers' wait tables: a
        // lock request enters its table before its wait starts, so a lock wait seen here
        // is found there (read the other way round, a wait that began in between showed
        // no blocker).
        let slots: Vec<_> = self
            .session_slots()
            .into_iter()
            .map(|(spid, slot)| (spid, slot.activity.waits.current_wait(), slot))
            .collect();
        // Lock waits: who blocks whom, on what (every database has its lock manager).
        let mut lock_waits: std::collections::HashMap<i32, (i32, String)> = std::collections::HashMap::new();
        for d in self.databases() {
            if let Some(t) = self.txn_database(d.id) {
                for w in t.locks.waiting() {
                    let blocker = w.blocking_session_ids.first().copied().unwrap_or(0);
                    lock_waits.insert(w.session_id, (blocker, w.resource.description()));
                }
            }
        }
        let mut out = Vec::new();
        for (spid, current, slot) in slots {
            let act = &slot.activity;
            let a = act.inner.lock();
            let request = a.running.as_ref().map(|r| {
                let (blocking, resource) = match (&current, lock_waits.get(&spid)) {
                    (Some((wt, _)), Some((b, res))) if wt.name().starts_with("LCK_M_") => (*b, res.clone()),
                    _ => (0, String::new()),
                };
                let cpu = r.cpu(&act.waits);
                RequestRow {
                    request_id: 0,
                    start_time: r.start_time,
                    status: if current.is_some() { "suspended" } else { "running" },
                    command: a.live.as_ref().map(|l| l.command()).unwrap_or("SELECT"),
                    database_id: slot.database.load(std::sync::atomic::Ordering::Acquire),
                    blocking_session_id: blocking,
                    wait_type: current.map(|(wt, _)| wt.name()),
                    wait_time_ms: current.map(|(_, d)| d.as_millis() as i64).unwrap_or(0),
                    last_wait_type: act.waits.last_wait().map(|w| w.name()).unwrap_or("MISCELLANEOUS"),
                    wait_resource: resource,
                    cpu_time_ms: cpu.as_millis() as i64,
                    total_elapsed_time_ms: r.start.elapsed().as_millis() as i64,
                    nest_level: a.live.as_ref().map(|l| l.nest_level()).unwrap_or(0),
                }
            });
            let (running_cpu, running_time) = match &a.running {
                Some(r) => (r.cpu(&act.waits), r.start.elapsed()),
                None => (Duration::ZERO, Duration::ZERO),
            };
            out.push(SessionRow {
                session_id: spid,
                login_time: act.login_time,
                host_name: a.host_name.clone(),
                program_name: a.program_name.clone(),
                login_name: slot.login.clone(),
                status: if a.running.is_some() { "running" } else { "sleeping" },
                database_id: slot.database.load(std::sync::atomic::Ordering::Acquire),
                cpu_time_ms: (a.cpu + running_cpu).as_millis() as i64,
                total_scheduled_time_ms: (a.scheduled + running_time).as_millis() as i64,
                last_request_start_time: a.last_request_start,
                last_request_end_time: a.last_request_end,
                reads: 0,
                writes: 0,
                logical_reads: 0,
                is_user_process: true,
                isolation: a.isolation,
                lock_timeout: a.lock_timeout,
                date_first: a.date_first,
                options: a.options,
                deadlock_priority: 0,
                row_count: a.row_count,
                prev_error: a.prev_error,
                open_transaction_count: a.trancount as i32,
                transaction: a.transaction.clone(),
                language: a.language.clone(),
                connection: a.connection.clone(),
                request,
            });
        }
        out
    }

    /// sys.dm_io_virtual_file_stats for this instance's databases.
    pub(crate) fn dmv_file_stats(&self, db: Option<DbId>, file_id: Option<i32>) -> Vec<FileStatRow> {
        let dbs: Vec<DbId> = self.databases().iter().map(|d| d.id).collect();
        let db = match db {
            Some(d) if !dbs.contains(&d) => return Vec::new(),
            Some(d) => Some(d as u16),
            None => None,
        };
        let file = match file_id {
            Some(f) => match u16::try_from(f) {
                Ok(f) => Some(f),
                Err(_) => return Vec::new(),
            },
            None => None,
        };
        let ms = |v: u64| v.min(i64::MAX as u64) as i64;
        diag::file_registry()
            .stats(db, file)
            .into_iter()
            .filter(|f| dbs.contains(&(f.database_id as DbId)))
            .map(|f| FileStatRow {
                database_id: f.database_id as DbId,
                file_id: i32::from(f.file_id),
                sample_ms: ms(f.sample_ms),
                num_of_reads: ms(f.num_of_reads),
                num_of_bytes_read: ms(f.num_of_bytes_read),
                io_stall_read_ms: ms(f.io_stall_read_ms),
                num_of_writes: ms(f.num_of_writes),
                num_of_bytes_written: ms(f.num_of_bytes_written),
                io_stall_write_ms: ms(f.io_stall_write_ms),
                io_stall: ms(f.io_stall),
                size_on_disk_bytes: ms(f.size_on_disk_bytes),
            })
            .collect()
    }

    /// sys.dm_tran_locks: every database's lock manager, each resource's requests read
    /// consistently (see `LockManager::snapshot`).
    pub(crate) fn dmv_locks(&self) -> Vec<LockRow> {
        let mut out = Vec::new();
        for d in self.databases() {
            if let Some(t) = self.txn_database(d.id) {
                for l in t.locks.snapshot() {
                    out.push(LockRow {
                        resource_type: l.resource_type,
                        resource_database_id: l.resource_database_id as DbId,
                        resource_description: l.resource_description,
                        resource_associated_entity_id: l.resource_associated_entity_id,
                        request_mode: l.request_mode.name(),
                        request_status: l.request_status.as_str(),
                        request_reference_count: l.request_reference_count,
                        request_session_id: l.request_session_id,
                        request_owner_id: l.request_owner_id,
                    });
                }
            }
        }
        out
    }

    /// sys.dm_os_sys_info.
    pub(crate) fn dmv_sys_info(&self) -> SysInfo {
        let (physical_memory_kb, virtual_memory_kb) = memory_kb();
        let (process_kernel_time_ms, process_user_time_ms) = process_cpu_ms();
        SysInfo {
            cpu_count: std::thread::available_parallelism().map_or(1, |n| n.get().min(i32::MAX as usize) as i32),
            physical_memory_kb,
            virtual_memory_kb,
            buffer_pool_kb: (self.buffer_pool().capacity() * storage::page::PAGE_SIZE / 1024) as i64,
            start_time: self.started_at.0,
            ms_ticks: ms_ticks(),
            start_ms_ticks: self.started_at.1,
            process_kernel_time_ms,
            process_user_time_ms,
        }
    }

    /// sys.allocation_units: every allocation unit of the database, with its pages
    /// counted from its IAM chain (reading the IAM pages, not the unit's pages).
    pub(crate) fn dmv_allocation_units(&self, db: DbId) -> Vec<AllocationUnitRow> {
        let Some(t) = self.txn_database(db) else { return Vec::new() };
        let mut out = Vec::new();
        for u in t.db.alloc_units() {
            let pages = t.db.alloc_unit_pages(u.id).unwrap_or_default();
            let extents: std::collections::BTreeSet<(u16, u32)> =
                pages.iter().map(|p| (p.file_id, p.page_no / 8)).collect();
            out.push(AllocationUnitRow {
                allocation_unit_id: u.id,
                type_code: u.kind as u8,
                object_id: u.object_id as i32,
                index_id: i32::from(u.index_id),
                total_pages: extents.len() as i64 * 8,
                used_pages: pages.len() as i64,
            });
        }
        out
    }

    /// DBCC SQLPERF(LOGSPACE).
    pub(crate) fn dmv_log_space(&self) -> Vec<LogSpaceRow> {
        let mut out = Vec::new();
        for d in self.databases() {
            if let Some(t) = self.txn_database(d.id) {
                let s = t.log.space();
                out.push(LogSpaceRow {
                    database_name: d.name.clone(),
                    log_size_mb: s.size_bytes as f64 / (1024.0 * 1024.0),
                    log_space_used_percent: if s.used_percent.is_finite() { s.used_percent } else { 0.0 },
                });
            }
        }
        out
    }
}

fn wait_row(session_id: i32, w: &diag::WaitSnapshot) -> WaitStatRow {
    let c = |v: u64| v.min(i64::MAX as u64) as i64;
    WaitStatRow {
        session_id,
        wait_type: w.wait_type.name(),
        waiting_tasks_count: c(w.waiting_tasks_count),
        wait_time_ms: c(w.wait_time_ms),
        max_wait_time_ms: c(w.max_wait_time_ms),
        signal_wait_time_ms: c(w.signal_wait_time_ms),
    }
}

/// sys.dm_os_wait_stats: the instance table, every wait type.
pub(crate) fn os_wait_stats() -> Vec<WaitStatRow> {
    diag::instance_waits().snapshot_all().iter().map(|w| wait_row(0, w)).collect()
}

/// sys.dm_os_performance_counters.
pub(crate) fn performance_counters() -> Vec<CounterRow> {
    diag::registry()
        .snapshot()
        .into_iter()
        .map(|c| CounterRow {
            object_name: c.object_name,
            counter_name: c.counter_name,
            instance_name: c.instance_name,
            cntr_value: c.cntr_value,
            cntr_type: c.cntr_type,
        })
        .collect()
}

/// DBCC SQLPERF(..., CLEAR).
pub(crate) fn clear_stats(what: ClearStats) {
    match what {
        ClearStats::WaitStats => diag::instance_waits().clear(),
        ClearStats::LatchStats => diag::instance_latches().clear(),
    }
}
