//! The diagnostics substrate every layer reports to: wait statistics (per instance and per
//! session, SQL Server wait type names), latch statistics per latch class, per-file I/O
//! statistics and performance counters. Everything is lock-free atomics so it can stay on
//! always; the DMVs (sys.dm_os_wait_stats, sys.dm_exec_session_wait_stats,
//! sys.dm_io_virtual_file_stats, ...) read these structures live.
//!
//! There is one instance per process, as with SQL Server: the instance-wide tables are
//! process globals. Per-session tables are `Arc`s that the session installs on the worker
//! thread running its request (`SessionScope`), so code deep in storage records a wait
//! without being handed a session.

pub mod waits;

pub use waits::{
    begin_wait, instance_waits, record_wait, SessionScope, WaitSnapshot, WaitStats, WaitTimer,
    WaitType,
};
