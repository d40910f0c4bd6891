//! The diagnostics substrate every layer reports to: wait statistics (per instance and per
//! session, SQL Server wait type names), latch statistics per latch class, per-file I/O
//! statistics and performance counters. Everything is lock-free atomics so it can stay on
//! always; the DMVs read these structures live:
//!
//! | module     | DMV                                                            |
//! |------------|----------------------------------------------------------------|
//! | `waits`    | sys.dm_os_wait_stats, sys.dm_exec_session_wait_stats           |
//! | `latches`  | sys.dm_os_latch_stats                                          |
//! | `files`    | sys.dm_io_virtual_file_stats                                   |
//! | `counters` | sys.dm_os_performance_counters                                 |
//! | `sched`    | sys.dm_os_schedulers (and SOS_SCHEDULER_YIELD)                 |
//! | `xe`       | Extended Events (not built yet: the module says where it goes)  |
//!
//! There is one instance per process, as with SQL Server: the instance-wide tables are
//! process globals. Per-session tables are `Arc`s that the session installs on the worker
//! thread running its request (`SessionScope`), so code deep in storage records a wait
//! without being handed a session. Registries (files, counters) take a lock only to add,
//! remove or list entries; updates go through handles the owner keeps.
//!
//! Times are kept in microseconds and shown in milliseconds, so that many sub-millisecond
//! waits and I/Os still add up. DBCC SQLPERF(..., CLEAR) maps to `WaitStats::clear` and
//! `LatchStats::clear`.

pub mod counters;
pub mod errorlog;
pub mod files;
pub mod latches;
pub mod sched;
pub mod waits;
pub mod xe;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub use counters::{
    counters, database_counters, drop_database_counters, registry, Counter, CounterRegistry, CounterSnapshot,
    CounterType, DatabaseCounters, InstanceCounters, OBJECT_PREFIX, TOTAL_INSTANCE,
};
pub use files::{file_registry, file_stats, register_file, unregister_file, FileIoSnapshot, FileIoStats, FileRegistry};
pub use latches::{
    begin_latch_wait, begin_page_latch_wait, instance_latches, record_latch_wait, record_nonbuffer_latch_wait,
    record_page_latch_wait, LatchClass, LatchMode, LatchSnapshot, LatchStats, LatchWaitTimer,
};
pub use waits::{
    begin_wait, cancelled, instance_waits, record_wait, SessionScope, WaitSnapshot, WaitStats, WaitTimer, WaitType,
};

/// Time since the diagnostics clock started, which is the first call of this function:
/// the instance calls it at startup so that it measures instance uptime. Used for the
/// DMVs' sample times (sys.dm_io_virtual_file_stats.sample_ms).
pub fn uptime() -> Duration {
    epoch().elapsed()
}

/// The instant `uptime` counts from.
pub fn epoch() -> Instant {
    static START: OnceLock<Instant> = OnceLock::new();
    *START.get_or_init(Instant::now)
}
