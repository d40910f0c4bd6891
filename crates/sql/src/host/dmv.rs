//! What the dynamic management views read from the host: one snapshot type per DMV,
//! filled by the engine from `diag` and the instance when a query opens the view (see
//! [`crate::exec::dmv`] for the views themselves and [`super::Host`]'s DMV methods).
//! Values are in SQL Server's units; times of day are `SystemTime`s (the executor turns
//! them into datetime values).

use std::net::SocketAddr;
use std::time::SystemTime;

use super::{DbId, Isolation};

/// One row of a wait table: sys.dm_os_wait_stats (`session_id` 0) and
/// sys.dm_exec_session_wait_stats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitStatRow {
    pub session_id: i32,
    /// SQL Server's wait type name (WRITELOG, PAGEIOLATCH_SH, LCK_M_X, ...).
    pub wait_type: &'static str,
    pub waiting_tasks_count: i64,
    pub wait_time_ms: i64,
    pub max_wait_time_ms: i64,
    pub signal_wait_time_ms: i64,
}

/// One row of sys.dm_io_virtual_file_stats.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileStatRow {
    pub database_id: DbId,
    pub file_id: i32,
    /// Milliseconds since the instance started; only differences mean anything.
    pub sample_ms: i64,
    pub num_of_reads: i64,
    pub num_of_bytes_read: i64,
    pub io_stall_read_ms: i64,
    pub num_of_writes: i64,
    pub num_of_bytes_written: i64,
    pub io_stall_write_ms: i64,
    pub io_stall: i64,
    pub size_on_disk_bytes: i64,
}

/// A session as sys.dm_exec_sessions shows it, with its running request
/// (sys.dm_exec_requests) if it has one.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRow {
    pub session_id: i32,
    pub login_time: SystemTime,
    pub host_name: String,
    pub program_name: String,
    pub login_name: String,
    /// "running" while a request executes, else "sleeping".
    pub status: &'static str,
    pub database_id: DbId,
    /// CPU time of the session's requests, in milliseconds.
    pub cpu_time_ms: i64,
    /// Wall-clock time of the session's requests, in milliseconds.
    pub total_scheduled_time_ms: i64,
    pub last_request_start_time: SystemTime,
    pub last_request_end_time: Option<SystemTime>,
    pub reads: i64,
    pub writes: i64,
    pub logical_reads: i64,
    pub is_user_process: bool,
    pub isolation: Isolation,
    /// SET LOCK_TIMEOUT, milliseconds (-1: wait for ever).
    pub lock_timeout: i64,
    pub date_first: u8,
    /// The ON/OFF SET options as @@OPTIONS bits (`exec::opt`).
    pub options: u32,
    pub deadlock_priority: i32,
    /// @@ROWCOUNT after the last statement.
    pub row_count: i64,
    /// @@ERROR after the last statement.
    pub prev_error: i32,
    /// @@TRANCOUNT.
    pub open_transaction_count: i32,
    /// The open user transaction (@@TRANCOUNT > 0), if any.
    pub transaction: Option<TransactionInfo>,
    /// SET LANGUAGE: the language's name (us_english, Deutsch, ...).
    pub language: String,
    pub connection: ConnectionInfo,
    pub request: Option<RequestRow>,
}

/// How a session's client is connected (sys.dm_exec_connections).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectionInfo {
    /// The client's TCP address; None for a session inside the process (`mesquite sql`),
    /// which the view shows as a shared-memory connection.
    pub client_addr: Option<SocketAddr>,
    /// The server's end of the TCP connection.
    pub local_addr: Option<SocketAddr>,
    /// The whole connection is encrypted (TLS after PRELOGIN, or TDS 8.0), not only
    /// LOGIN7.
    pub encrypted: bool,
    /// The TDS version of LOGIN7 (0x74000004 for TDS 7.4); 0 inside the process.
    pub protocol_version: u32,
    /// The negotiated packet size; 0 inside the process.
    pub packet_size: u32,
    /// connection_id: a GUID in SQL Server's byte order, new for each connection.
    pub connection_id: [u8; 16],
}

/// A session's open transaction (sys.dm_tran_session_transactions,
/// sys.dm_tran_active_transactions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionInfo {
    /// Unique in the instance.
    pub transaction_id: u64,
    /// BEGIN TRANSACTION's name; user_transaction when it has none.
    pub name: String,
    pub begin_time: SystemTime,
    /// The descriptor the client was sent in the ENVCHANGE (0 when not known).
    pub descriptor: u64,
}

/// A running request (sys.dm_exec_requests).
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRow {
    pub request_id: i32,
    pub start_time: SystemTime,
    /// "running", or "suspended" while it waits.
    pub status: &'static str,
    /// The statement being executed: SELECT, INSERT, EXECUTE, WAITFOR, ...
    pub command: &'static str,
    pub database_id: DbId,
    /// The session holding the lock the request waits for; 0 when not blocked.
    pub blocking_session_id: i32,
    /// The wait in progress, if any.
    pub wait_type: Option<&'static str>,
    pub wait_time_ms: i64,
    /// The last wait that ended (or the current one).
    pub last_wait_type: &'static str,
    /// The lock resource waited for ("KEY: 5:72057594043236352 (8194443284a0)"), or "".
    pub wait_resource: String,
    pub cpu_time_ms: i64,
    pub total_elapsed_time_ms: i64,
    /// @@NESTLEVEL of the statement running.
    pub nest_level: i32,
}

/// One row of sys.dm_os_performance_counters. Strings are unpadded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CounterRow {
    /// With the instance prefix: "SQLServer:Databases".
    pub object_name: String,
    pub counter_name: String,
    /// The database name for per-database counters, "" for single-instance objects.
    pub instance_name: String,
    pub cntr_value: i64,
    /// The Windows counter type (65792, 272696576, ...).
    pub cntr_type: i32,
}

/// One lock request, granted or waiting (a row of the locks DMV).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LockRow {
    /// OBJECT, PAGE, KEY, RID, HOBT, DATABASE, ...
    pub resource_type: &'static str,
    pub resource_database_id: DbId,
    /// "(8194443284a0)" for a key, "1:153" for a page, ... as SQL Server shows them.
    pub resource_description: String,
    /// The object id or HoBT id the resource belongs to.
    pub resource_associated_entity_id: i64,
    /// The mode granted (GRANT) or requested (WAIT, CONVERT): S, X, IX, RangeS-S, ...
    pub request_mode: &'static str,
    /// GRANT, WAIT or CONVERT.
    pub request_status: &'static str,
    pub request_reference_count: u32,
    pub request_session_id: i32,
    /// The owning transaction's id.
    pub request_owner_id: u64,
}

/// One database's log (DBCC SQLPERF(LOGSPACE)).
#[derive(Debug, Clone, PartialEq)]
pub struct LogSpaceRow {
    pub database_name: String,
    pub log_size_mb: f64,
    pub log_space_used_percent: f64,
}

/// What DBCC SQLPERF(..., CLEAR) resets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClearStats {
    /// 'sys.dm_os_wait_stats': the instance's wait statistics.
    WaitStats,
    /// 'sys.dm_os_latch_stats': the instance's latch statistics.
    LatchStats,
}

/// One allocation unit (sys.allocation_units): the pages of one index's rows
/// (IN_ROW_DATA) or of its off-row MAX values (LOB_DATA).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocationUnitRow {
    pub allocation_unit_id: u64,
    /// 1 IN_ROW_DATA, 2 LOB_DATA, 3 ROW_OVERFLOW_DATA.
    pub type_code: u8,
    pub object_id: i32,
    pub index_id: i32,
    /// Pages of the extents the unit owns (uniform extents: 8 per extent).
    pub total_pages: i64,
    /// Pages allocated to the unit (data, index and LOB pages; IAM pages not included).
    pub used_pages: i64,
}

/// The machine and the instance (sys.dm_os_sys_info, sys.configurations).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysInfo {
    /// Logical CPUs the process may use.
    pub cpu_count: i32,
    pub physical_memory_kb: i64,
    /// The virtual address space of the process.
    pub virtual_memory_kb: i64,
    /// The buffer pool's size (its frames are allocated when the instance starts).
    pub buffer_pool_kb: i64,
    pub start_time: SystemTime,
    /// Milliseconds since the machine started: now, and when the instance started.
    pub ms_ticks: i64,
    pub start_ms_ticks: i64,
    /// CPU time of the process so far.
    pub process_kernel_time_ms: i64,
    pub process_user_time_ms: i64,
}
