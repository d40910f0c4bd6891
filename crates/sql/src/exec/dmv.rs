//! Dynamic management views: live views over engine state, computed from the host's
//! snapshots ([`crate::host::Host`]'s DMV methods) each time a query opens them, with
//! SQL Server's column names, types and order. Also DBCC SQLPERF.
//!
//! | view | host method |
//! |---|---|
//! | sys.dm_os_wait_stats | `os_wait_stats` |
//! | sys.dm_exec_session_wait_stats | `session_wait_stats` |
//! | sys.dm_io_virtual_file_stats(db, file) (table function) | `virtual_file_stats` |
//! | sys.dm_exec_sessions, sys.dm_exec_requests | `sessions` |
//! | sys.dm_os_performance_counters | `performance_counters` |
//! | sys.dm_tran_locks | `locks` |
//! | sys.dm_os_waiting_tasks | `sessions` (the requests waiting now) |
//! | sys.dm_db_log_space_usage | `log_space` |
//! | sys.dm_exec_connections | `sessions` (each session's connection) |
//! | sys.dm_tran_session_transactions, sys.dm_tran_active_transactions | `sessions` (open transactions) |
//! | sys.dm_os_sys_info | `sys_info` |
//! | sys.dm_os_schedulers | none: `diag::sched`, the process's schedulers |
//! | sys.dm_exec_query_memory_grants | none: `super::memory`, the process's query memory pool |
//! | DBCC SQLPERF(LOGSPACE) | `log_space` |
//! | DBCC SQLPERF('sys.dm_os_wait_stats' / 'sys.dm_os_latch_stats', CLEAR) | `clear_stats` |
//!
//! Columns Mesquite has no value for hold SQL Server's neutral value (0, NULL, or the
//! default of a setting); docs/compatibility.md lists them.

use std::sync::atomic::{AtomicU8, Ordering::Relaxed};
use std::time::{SystemTime, UNIX_EPOCH};

use types::{Length, SqlError, SqlType, Value};

use super::expr::Row;
use super::opt;
use super::plan::{OutCol, Plan};
use super::query::{Binder, Scope};
use super::sysviews::{View, ViewKind};
use super::{Cx, Flow};
use crate::ast::{Dbcc, Expr, ExprKind, Literal, StatementKind};
use crate::host::{ClearStats, Isolation, SessionRow};
use crate::results::{ColumnInfo, Message};

/// The DMVs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DmvKind {
    OsWaitStats,
    SessionWaitStats,
    VirtualFileStats,
    Sessions,
    Requests,
    PerformanceCounters,
    TranLocks,
    OsWaitingTasks,
    DbLogSpaceUsage,
    Connections,
    SessionTransactions,
    ActiveTransactions,
    OsSysInfo,
    OsSchedulers,
    QueryMemoryGrants,
}

/// The DMV a `sys.` name denotes (views only: dm_io_virtual_file_stats is a function).
pub fn view_kind(name: &str) -> Option<DmvKind> {
    Some(match name.to_ascii_lowercase().as_str() {
        "dm_os_wait_stats" => DmvKind::OsWaitStats,
        "dm_exec_session_wait_stats" => DmvKind::SessionWaitStats,
        "dm_exec_sessions" => DmvKind::Sessions,
        "dm_exec_requests" => DmvKind::Requests,
        "dm_os_performance_counters" => DmvKind::PerformanceCounters,
        "dm_tran_locks" => DmvKind::TranLocks,
        "dm_os_waiting_tasks" => DmvKind::OsWaitingTasks,
        "dm_db_log_space_usage" => DmvKind::DbLogSpaceUsage,
        "dm_exec_connections" => DmvKind::Connections,
        "dm_tran_session_transactions" => DmvKind::SessionTransactions,
        "dm_tran_active_transactions" => DmvKind::ActiveTransactions,
        "dm_os_sys_info" => DmvKind::OsSysInfo,
        "dm_os_schedulers" => DmvKind::OsSchedulers,
        "dm_exec_query_memory_grants" => DmvKind::QueryMemoryGrants,
        _ => return None,
    })
}

fn nv(n: u16) -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(n) }
}

fn vb(n: u16) -> SqlType {
    SqlType::VarBinary { len: Length::Bounded(n) }
}

fn vc(n: u16) -> SqlType {
    SqlType::VarChar { len: Length::Bounded(n) }
}

fn cols(spec: &[(&str, SqlType, bool)]) -> Vec<OutCol> {
    spec.iter().map(|(n, t, null)| OutCol::new(*n, *t, *null)).collect()
}

/// The session settings columns sys.dm_exec_sessions and sys.dm_exec_requests share,
/// from text_size to concat_null_yields_null.
fn settings_cols() -> Vec<(&'static str, SqlType, bool)> {
    let bit = SqlType::Bit;
    vec![
        ("text_size", SqlType::Int, false),
        ("language", nv(128), true),
        ("date_format", nv(3), true),
        ("date_first", SqlType::SmallInt, false),
        ("quoted_identifier", bit, false),
        ("arithabort", bit, false),
        ("ansi_null_dflt_on", bit, false),
        ("ansi_defaults", bit, false),
        ("ansi_warnings", bit, false),
        ("ansi_padding", bit, false),
        ("ansi_nulls", bit, false),
        ("concat_null_yields_null", bit, false),
        ("transaction_isolation_level", SqlType::SmallInt, false),
        ("lock_timeout", SqlType::Int, false),
        ("deadlock_priority", SqlType::Int, false),
        ("row_count", SqlType::BigInt, false),
        ("prev_error", SqlType::Int, false),
    ]
}

/// Column names and types, in SQL Server's order.
pub fn columns(kind: DmvKind) -> Vec<OutCol> {
    let int = SqlType::Int;
    let big = SqlType::BigInt;
    let si = SqlType::SmallInt;
    let bit = SqlType::Bit;
    let dt = SqlType::DateTime;
    let nc128 = SqlType::NChar { len: 128 };
    let waits = [
        ("wait_type", nv(60), false),
        ("waiting_tasks_count", big, false),
        ("wait_time_ms", big, false),
        ("max_wait_time_ms", big, false),
        ("signal_wait_time_ms", big, false),
    ];
    match kind {
        DmvKind::OsWaitStats => cols(&waits),
        DmvKind::SessionWaitStats => {
            let mut v = vec![("session_id", si, false)];
            v.extend(waits);
            cols(&v)
        }
        DmvKind::VirtualFileStats => cols(&[
            ("database_id", si, false),
            ("file_id", si, false),
            ("sample_ms", big, false),
            ("num_of_reads", big, false),
            ("num_of_bytes_read", big, false),
            ("io_stall_read_ms", big, false),
            ("num_of_writes", big, false),
            ("num_of_bytes_written", big, false),
            ("io_stall_write_ms", big, false),
            ("io_stall", big, false),
            ("size_on_disk_bytes", big, false),
            ("file_handle", vb(8), true),
            ("io_stall_queued_read_ms", big, false),
            ("io_stall_queued_write_ms", big, false),
        ]),
        DmvKind::Sessions => {
            let mut v = vec![
                ("session_id", si, false),
                ("login_time", dt, false),
                ("host_name", nv(128), true),
                ("program_name", nv(128), true),
                ("host_process_id", int, true),
                ("client_version", int, true),
                ("client_interface_name", nv(32), true),
                ("security_id", vb(85), false),
                ("login_name", nv(128), false),
                ("nt_domain", nv(128), true),
                ("nt_user_name", nv(128), true),
                ("status", nv(30), false),
                ("context_info", vb(128), true),
                ("cpu_time", int, false),
                ("memory_usage", int, false),
                ("total_scheduled_time", int, false),
                ("total_elapsed_time", int, false),
                ("endpoint_id", int, false),
                ("last_request_start_time", dt, false),
                ("last_request_end_time", dt, true),
                ("reads", big, false),
                ("writes", big, false),
                ("logical_reads", big, false),
                ("is_user_process", bit, false),
            ];
            v.extend(settings_cols());
            v.extend([
                ("original_security_id", vb(85), false),
                ("original_login_name", nv(128), false),
                ("last_successful_logon", dt, true),
                ("last_unsuccessful_logon", dt, true),
                ("unsuccessful_logons", big, true),
                ("group_id", int, false),
                ("database_id", si, false),
                ("authenticating_database_id", int, true),
                ("open_transaction_count", int, false),
            ]);
            cols(&v)
        }
        DmvKind::Requests => {
            let mut v = vec![
                ("session_id", si, false),
                ("request_id", int, false),
                ("start_time", dt, false),
                ("status", nv(30), false),
                ("command", nv(32), false),
                ("sql_handle", vb(64), true),
                ("statement_start_offset", int, true),
                ("statement_end_offset", int, true),
                ("plan_handle", vb(64), true),
                ("database_id", si, false),
                ("user_id", int, false),
                ("connection_id", SqlType::UniqueIdentifier, true),
                ("blocking_session_id", si, true),
                ("wait_type", nv(60), true),
                ("wait_time", int, false),
                ("last_wait_type", nv(60), false),
                ("wait_resource", nv(256), false),
                ("open_transaction_count", int, false),
                ("open_resultset_count", int, false),
                ("transaction_id", big, false),
                ("context_info", vb(128), true),
                ("percent_complete", SqlType::Real, false),
                ("estimated_completion_time", big, false),
                ("cpu_time", int, false),
                ("total_elapsed_time", int, false),
                ("scheduler_id", int, true),
                ("task_address", vb(8), true),
                ("reads", big, false),
                ("writes", big, false),
                ("logical_reads", big, false),
            ];
            v.extend(settings_cols());
            v.extend([
                ("nest_level", int, false),
                ("granted_query_memory", int, false),
                ("executing_managed_code", bit, false),
                ("group_id", int, false),
                ("query_hash", SqlType::Binary { len: 8 }, true),
                ("query_plan_hash", SqlType::Binary { len: 8 }, true),
                ("statement_sql_handle", vb(64), true),
                ("statement_context_id", big, true),
                ("dop", int, false),
                ("parallel_worker_count", int, true),
                ("external_script_request_id", SqlType::UniqueIdentifier, true),
                ("is_resumable", bit, false),
            ]);
            cols(&v)
        }
        DmvKind::PerformanceCounters => cols(&[
            ("object_name", nc128, false),
            ("counter_name", nc128, false),
            ("instance_name", nc128, true),
            ("cntr_value", big, false),
            ("cntr_type", int, false),
        ]),
        DmvKind::TranLocks => cols(&[
            ("resource_type", nv(60), false),
            ("resource_subtype", nv(60), false),
            ("resource_database_id", int, false),
            ("resource_description", nv(256), false),
            ("resource_associated_entity_id", big, true),
            ("resource_lock_partition", int, true),
            ("request_mode", nv(60), false),
            ("request_type", nv(60), false),
            ("request_status", nv(60), false),
            ("request_reference_count", si, false),
            ("request_lifetime", int, false),
            ("request_session_id", int, false),
            ("request_exec_context_id", int, false),
            ("request_request_id", int, false),
            ("request_owner_type", nv(60), false),
            ("request_owner_id", big, true),
            ("request_owner_guid", SqlType::UniqueIdentifier, true),
            ("request_owner_lockspace_id", nv(32), false),
            ("lock_owner_address", vb(8), false),
        ]),
        DmvKind::OsWaitingTasks => cols(&[
            ("waiting_task_address", vb(8), false),
            ("session_id", si, true),
            ("exec_context_id", int, true),
            ("wait_duration_ms", big, true),
            ("wait_type", nv(60), true),
            ("resource_address", vb(8), true),
            ("blocking_task_address", vb(8), true),
            ("blocking_session_id", si, true),
            ("blocking_exec_context_id", int, true),
            ("resource_description", nv(3072), true),
        ]),
        DmvKind::DbLogSpaceUsage => cols(&[
            ("database_id", int, true),
            ("total_log_size_in_bytes", big, true),
            ("used_log_space_in_bytes", big, true),
            ("used_log_space_in_percent", SqlType::Real, true),
            ("log_space_in_bytes_since_last_backup", big, true),
        ]),
        DmvKind::Connections => cols(&[
            ("session_id", int, true),
            ("most_recent_session_id", int, true),
            ("connect_time", dt, false),
            ("net_transport", nv(40), false),
            ("protocol_type", nv(40), true),
            ("protocol_version", int, true),
            ("endpoint_id", int, true),
            ("encrypt_option", nv(40), false),
            ("auth_scheme", nv(40), false),
            ("node_affinity", si, false),
            ("num_reads", int, true),
            ("num_writes", int, true),
            ("last_read", dt, true),
            ("last_write", dt, true),
            ("net_packet_size", int, true),
            ("client_net_address", vc(48), true),
            ("client_tcp_port", int, true),
            ("local_net_address", vc(48), true),
            ("local_tcp_port", int, true),
            ("connection_id", SqlType::UniqueIdentifier, false),
            ("parent_connection_id", SqlType::UniqueIdentifier, true),
            ("most_recent_sql_handle", vb(64), true),
        ]),
        DmvKind::SessionTransactions => cols(&[
            ("session_id", int, false),
            ("transaction_id", big, false),
            ("transaction_descriptor", SqlType::Binary { len: 8 }, false),
            ("enlist_count", int, false),
            ("is_user_transaction", bit, false),
            ("is_local", bit, false),
            ("is_enlisted", bit, false),
            ("is_bound", bit, false),
            ("open_transaction_count", int, false),
        ]),
        DmvKind::QueryMemoryGrants => cols(&[
            ("session_id", si, false),
            ("request_id", int, false),
            ("scheduler_id", int, true),
            ("dop", si, false),
            ("request_time", dt, false),
            ("grant_time", dt, true),
            ("requested_memory_kb", big, false),
            ("granted_memory_kb", big, true),
            ("required_memory_kb", big, false),
            ("used_memory_kb", big, true),
            ("max_used_memory_kb", big, true),
            ("query_cost", SqlType::Float, false),
            ("timeout_sec", int, false),
            ("resource_semaphore_id", si, false),
            ("queue_id", si, true),
            ("wait_order", int, true),
            ("is_next_candidate", bit, true),
            ("wait_time_ms", big, true),
            ("plan_handle", vb(64), true),
            ("sql_handle", vb(64), true),
            ("group_id", int, false),
            ("pool_id", int, false),
            ("is_small", bit, false),
            ("ideal_memory_kb", big, false),
            ("reserved_worker_count", int, false),
            ("used_worker_count", int, false),
            ("max_used_worker_count", int, false),
            ("reserved_node_bitmap", big, false),
        ]),
        DmvKind::OsSchedulers => cols(&[
            ("scheduler_address", vb(8), false),
            ("parent_node_id", int, false),
            ("scheduler_id", int, false),
            ("cpu_id", si, false),
            ("status", nv(60), false),
            ("is_online", bit, false),
            ("is_idle", bit, false),
            ("preemptive_switches_count", int, false),
            ("context_switches_count", int, false),
            ("idle_switches_count", int, false),
            ("current_tasks_count", int, false),
            ("runnable_tasks_count", int, false),
            ("current_workers_count", int, false),
            ("active_workers_count", int, false),
            ("work_queue_count", big, false),
            ("pending_disk_io_count", int, false),
            ("load_factor", int, false),
            ("yield_count", int, false),
            ("last_timer_activity", big, false),
            ("failed_to_create_worker", bit, true),
            ("active_worker_address", vb(8), true),
            ("memory_object_address", vb(8), false),
            ("task_memory_object_address", vb(8), false),
            ("quantum_length_us", big, false),
            ("total_cpu_usage_ms", big, false),
            ("total_cpu_idle_capped_ms", big, true),
            ("total_scheduler_delay_ms", big, false),
            ("ideal_workers_limit", int, false),
        ]),
        DmvKind::OsSysInfo => cols(&[
            ("cpu_ticks", big, false),
            ("ms_ticks", big, false),
            ("cpu_count", int, false),
            ("hyperthread_ratio", int, false),
            ("physical_memory_kb", big, false),
            ("virtual_memory_kb", big, false),
            ("committed_kb", int, false),
            ("committed_target_kb", int, false),
            ("visible_target_kb", int, false),
            ("stack_size_in_bytes", int, false),
            ("os_quantum", big, false),
            ("os_error_mode", int, false),
            ("os_priority_class", int, true),
            ("max_workers_count", int, false),
            ("scheduler_count", int, false),
            ("scheduler_total_count", int, false),
            ("deadlock_monitor_serial_number", int, false),
            ("sqlserver_start_time_ms_ticks", big, false),
            ("sqlserver_start_time", dt, false),
            ("affinity_type", int, false),
            ("affinity_type_desc", vc(60), false),
            ("process_kernel_time_ms", big, false),
            ("process_user_time_ms", big, false),
            ("time_source", int, false),
            ("time_source_desc", nv(60), false),
            ("virtual_machine_type", int, false),
            ("virtual_machine_type_desc", nv(60), false),
            ("softnuma_configuration", int, false),
            ("softnuma_configuration_desc", nv(60), false),
            ("process_physical_affinity", nv(3072), true),
            ("sql_memory_model", int, false),
            ("sql_memory_model_desc", nv(120), false),
            ("socket_count", int, false),
            ("cores_per_socket", int, false),
            ("numa_node_count", int, false),
            ("container_type", int, false),
            ("container_type_desc", nv(60), false),
        ]),
        DmvKind::ActiveTransactions => cols(&[
            ("transaction_id", big, false),
            ("name", nv(32), false),
            ("transaction_begin_time", dt, false),
            ("transaction_type", int, false),
            ("transaction_uow", SqlType::UniqueIdentifier, true),
            ("transaction_state", int, false),
            ("transaction_status", int, false),
            ("transaction_status2", int, false),
            ("dtc_state", int, false),
            ("dtc_status", int, false),
            ("dtc_isolation_level", int, false),
            ("filestream_transaction_id", vb(128), true),
        ]),
    }
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

/// The instance's schedulers (sys.dm_os_schedulers' rows); with scheduling turned off
/// (`InstanceConfig::schedulers` = 0) every CPU still counts as one.
fn scheduler_count(cpu_count: i32) -> i32 {
    match diag::sched::schedulers().count() {
        0 => cpu_count,
        n => n as i32,
    }
}

fn big(v: i64) -> Value {
    Value::BigInt(v)
}

/// An int column from a millisecond count (saturating, as SQL Server's int columns do
/// not wrap).
fn int_ms(v: i64) -> Value {
    Value::Int(v.clamp(0, i64::from(i32::MAX)) as i32)
}

fn nchar128(v: &str) -> Value {
    let mut t: String = v.chars().take(128).collect();
    let n = t.chars().count();
    t.push_str(&" ".repeat(128 - n));
    Value::String(t)
}

/// A point in time as a datetime value (the executor's clock is UTC, as GETDATE()).
pub fn datetime_of(t: SystemTime) -> Value {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    // 1970-01-01 is day 25,567 after 1900-01-01; datetime ticks are 1/300 s.
    let days = (d.as_secs() / 86_400) as i32 + 25_567;
    let ms_of_day = (d.as_millis() % 86_400_000) as u64;
    Value::DateTime { days, ticks: (ms_of_day * 300 / 1000) as u32 }
}

fn isolation_code(i: Isolation) -> i16 {
    match i {
        Isolation::ReadUncommitted => 1,
        Isolation::ReadCommitted => 2,
        Isolation::RepeatableRead => 3,
        Isolation::Serializable => 4,
        Isolation::Snapshot => 5,
    }
}

/// The settings columns (see `settings_cols`).
fn settings_values(r: &SessionRow) -> Vec<Value> {
    let b = |bit: u32| Value::Bit(r.options & bit != 0);
    // ANSI_DEFAULTS reads as ON when every option it sets is ON.
    let ansi_defaults = opt::of("ANSI_DEFAULTS") | opt::IMPLICIT_TRANSACTIONS;
    vec![
        Value::Int(i32::MAX),
        s(if r.language.is_empty() { "us_english" } else { &r.language }),
        s("mdy"),
        Value::SmallInt(i16::from(r.date_first)),
        b(opt::QUOTED_IDENTIFIER),
        b(opt::ARITHABORT),
        b(opt::ANSI_NULL_DFLT_ON),
        Value::Bit(r.options & ansi_defaults == ansi_defaults),
        b(opt::ANSI_WARNINGS),
        b(opt::ANSI_PADDING),
        b(opt::ANSI_NULLS),
        b(opt::CONCAT_NULL_YIELDS_NULL),
        Value::SmallInt(isolation_code(r.isolation)),
        Value::Int(r.lock_timeout.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32),
        Value::Int(r.deadlock_priority),
        big(r.row_count),
        Value::Int(r.prev_error),
    ]
}

fn security_id(login: &str) -> Value {
    // sa's SID is 0x01 in SQL Server; other SQL logins get a generated 16-byte SID,
    // which Mesquite does not keep.
    if login.eq_ignore_ascii_case("sa") {
        Value::Binary(vec![1])
    } else {
        Value::Binary(Vec::new())
    }
}

/// Msg 300: a server-level DMV without VIEW SERVER STATE (only sysadmin has it).
fn view_server_state_denied() -> SqlError {
    SqlError::new(300, 14, 1, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
}

/// The rows of a DMV; `args` are the table function's arguments (NULL = None).
///
/// Without VIEW SERVER STATE (which only sysadmin logins have in Mesquite) the session
/// views show the caller's own session, and the server-wide ones raise 300, as in SQL
/// Server.
pub fn rows(kind: DmvKind, args: [Option<i32>; 2], cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
    let server_state = cx.is_sysadmin();
    let own = cx.state.spid;
    let visible = |session_id: i32| server_state || session_id == own;
    if !server_state
        && matches!(
            kind,
            DmvKind::OsWaitStats
                | DmvKind::VirtualFileStats
                | DmvKind::PerformanceCounters
                | DmvKind::TranLocks
                | DmvKind::OsWaitingTasks
                | DmvKind::Connections
                | DmvKind::SessionTransactions
                | DmvKind::ActiveTransactions
                | DmvKind::OsSysInfo
                | DmvKind::OsSchedulers
                | DmvKind::QueryMemoryGrants
        )
    {
        return Err(view_server_state_denied());
    }
    match kind {
        DmvKind::OsWaitStats | DmvKind::SessionWaitStats => {
            let waits =
                if kind == DmvKind::OsWaitStats { cx.host.os_wait_stats() } else { cx.host.session_wait_stats() };
            for w in waits.into_iter().filter(|w| kind == DmvKind::OsWaitStats || visible(w.session_id)) {
                let mut r = Vec::with_capacity(6);
                if kind == DmvKind::SessionWaitStats {
                    r.push(Value::SmallInt(w.session_id as i16));
                }
                r.extend([
                    s(w.wait_type),
                    big(w.waiting_tasks_count),
                    big(w.wait_time_ms),
                    big(w.max_wait_time_ms),
                    big(w.signal_wait_time_ms),
                ]);
                out.push(r);
            }
        }
        DmvKind::VirtualFileStats => {
            let db = match args[0] {
                Some(d) => match i16::try_from(d) {
                    Ok(d) => Some(d),
                    Err(_) => return Ok(out),
                },
                None => None,
            };
            for f in cx.host.virtual_file_stats(db, args[1]) {
                out.push(vec![
                    Value::SmallInt(f.database_id),
                    Value::SmallInt(f.file_id as i16),
                    big(f.sample_ms),
                    big(f.num_of_reads),
                    big(f.num_of_bytes_read),
                    big(f.io_stall_read_ms),
                    big(f.num_of_writes),
                    big(f.num_of_bytes_written),
                    big(f.io_stall_write_ms),
                    big(f.io_stall),
                    big(f.size_on_disk_bytes),
                    Value::Null,
                    big(0),
                    big(0),
                ]);
            }
        }
        DmvKind::Sessions => {
            let now = SystemTime::now();
            for r in sessions(cx).into_iter().filter(|r| visible(r.session_id)) {
                let elapsed = now.duration_since(r.login_time).unwrap_or_default().as_millis() as i64;
                let opt = |v: &str| if r.is_user_process { s(v) } else { Value::Null };
                let mut row = vec![
                    Value::SmallInt(r.session_id as i16),
                    datetime_of(r.login_time),
                    opt(&r.host_name),
                    opt(&r.program_name),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    security_id(&r.login_name),
                    s(&r.login_name),
                    Value::Null,
                    Value::Null,
                    s(r.status),
                    Value::Null,
                    int_ms(r.cpu_time_ms),
                    Value::Int(0),
                    int_ms(r.total_scheduled_time_ms),
                    int_ms(elapsed),
                    Value::Int(0),
                    datetime_of(r.last_request_start_time),
                    r.last_request_end_time.map(datetime_of).unwrap_or(Value::Null),
                    big(r.reads),
                    big(r.writes),
                    big(r.logical_reads),
                    Value::Bit(r.is_user_process),
                ];
                row.extend(settings_values(&r));
                row.extend([
                    security_id(&r.login_name),
                    s(&r.login_name),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Int(if r.is_user_process { 2 } else { 1 }),
                    Value::SmallInt(r.database_id),
                    Value::Int(0),
                    Value::Int(r.open_transaction_count),
                ]);
                out.push(row);
            }
        }
        DmvKind::Requests => {
            for r in sessions(cx).into_iter().filter(|r| visible(r.session_id)) {
                let Some(q) = &r.request else { continue };
                let mut row = vec![
                    Value::SmallInt(r.session_id as i16),
                    Value::Int(q.request_id),
                    datetime_of(q.start_time),
                    s(q.status),
                    s(q.command),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::SmallInt(q.database_id),
                    Value::Int(1),
                    Value::Guid(r.connection.connection_id),
                    Value::SmallInt(q.blocking_session_id as i16),
                    q.wait_type.map(s).unwrap_or(Value::Null),
                    int_ms(q.wait_time_ms),
                    s(q.last_wait_type),
                    s(&q.wait_resource),
                    Value::Int(r.open_transaction_count),
                    Value::Int(1),
                    big(r.transaction.as_ref().map_or(0, |t| t.transaction_id.min(i64::MAX as u64) as i64)),
                    Value::Null,
                    Value::Real(0.0),
                    big(0),
                    int_ms(q.cpu_time_ms),
                    int_ms(q.total_elapsed_time_ms),
                    Value::Null,
                    Value::Null,
                    big(r.reads),
                    big(r.writes),
                    big(r.logical_reads),
                ];
                row.extend(settings_values(&r));
                row.extend([
                    Value::Int(q.nest_level),
                    Value::Int(0),
                    Value::Bit(false),
                    Value::Int(2),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Int(1),
                    Value::Null,
                    Value::Null,
                    Value::Bit(false),
                ]);
                out.push(row);
            }
        }
        DmvKind::PerformanceCounters => {
            for c in cx.host.performance_counters() {
                out.push(vec![
                    nchar128(&c.object_name),
                    nchar128(&c.counter_name),
                    nchar128(&c.instance_name),
                    big(c.cntr_value),
                    Value::Int(c.cntr_type),
                ]);
            }
        }
        DmvKind::TranLocks => {
            for l in cx.host.locks() {
                // Mesquite's lock owner is the transaction: its id stands in for the
                // owner's memory address and lock space (which only identify it).
                let owner = l.request_owner_id.to_be_bytes();
                out.push(vec![
                    s(l.resource_type),
                    s(""),
                    Value::Int(i32::from(l.resource_database_id)),
                    s(&l.resource_description),
                    big(l.resource_associated_entity_id),
                    Value::Int(0),
                    s(l.request_mode),
                    s("LOCK"),
                    s(l.request_status),
                    Value::SmallInt(l.request_reference_count.min(i16::MAX as u32) as i16),
                    Value::Int(0),
                    Value::Int(l.request_session_id),
                    Value::Int(0),
                    Value::Int(0),
                    s("TRANSACTION"),
                    big(l.request_owner_id.min(i64::MAX as u64) as i64),
                    Value::Guid([0; 16]),
                    s(&format!("0x{:016X}:0:0", l.request_owner_id)),
                    Value::Binary(owner.to_vec()),
                ]);
            }
        }
        DmvKind::OsWaitingTasks => {
            // One task per session: a session's id stands in for its task's address.
            let task = |session_id: i32| Value::Binary(i64::from(session_id).to_be_bytes().to_vec());
            for r in cx.host.sessions() {
                let Some(q) = &r.request else { continue };
                let Some(wait_type) = q.wait_type else { continue };
                let blocked = q.blocking_session_id != 0;
                out.push(vec![
                    task(r.session_id),
                    Value::SmallInt(r.session_id as i16),
                    Value::Int(0),
                    big(q.wait_time_ms),
                    s(wait_type),
                    Value::Null,
                    if blocked { task(q.blocking_session_id) } else { Value::Null },
                    if blocked { Value::SmallInt(q.blocking_session_id as i16) } else { Value::Null },
                    if blocked { Value::Int(0) } else { Value::Null },
                    if q.wait_resource.is_empty() { Value::Null } else { s(&q.wait_resource) },
                ]);
            }
        }
        DmvKind::Connections => {
            for r in sessions(cx) {
                let c = &r.connection;
                let tcp = c.client_addr.is_some();
                let addr = |a: Option<std::net::SocketAddr>| a.map_or(Value::Null, |a| s(&a.ip().to_string()));
                let port = |a: Option<std::net::SocketAddr>| a.map_or(Value::Null, |a| Value::Int(i32::from(a.port())));
                let nonzero = |v: u32| if v == 0 { Value::Null } else { Value::Int(v as i32) };
                out.push(vec![
                    Value::Int(r.session_id),
                    Value::Int(r.session_id),
                    datetime_of(r.login_time),
                    s(if tcp { "TCP" } else { "Shared memory" }),
                    s("TSQL"),
                    nonzero(c.protocol_version),
                    // SQL Server's endpoints: 2 TSQL Local Machine, 4 TSQL Default TCP.
                    Value::Int(if tcp { 4 } else { 2 }),
                    s(if c.encrypted { "TRUE" } else { "FALSE" }),
                    s("SQL"),
                    Value::SmallInt(0),
                    Value::Int(0),
                    Value::Int(0),
                    datetime_of(r.last_request_start_time),
                    datetime_of(r.last_request_end_time.unwrap_or(r.login_time)),
                    nonzero(c.packet_size),
                    if tcp { addr(c.client_addr) } else { s("<local machine>") },
                    port(c.client_addr),
                    addr(c.local_addr),
                    port(c.local_addr),
                    Value::Guid(c.connection_id),
                    Value::Null,
                    Value::Null,
                ]);
            }
        }
        DmvKind::SessionTransactions | DmvKind::ActiveTransactions => {
            for r in sessions(cx) {
                let Some(t) = &r.transaction else { continue };
                let id = big(t.transaction_id.min(i64::MAX as u64) as i64);
                if kind == DmvKind::SessionTransactions {
                    out.push(vec![
                        Value::Int(r.session_id),
                        id,
                        Value::Binary(t.descriptor.to_le_bytes().to_vec()),
                        Value::Int(1),
                        Value::Bit(true),
                        Value::Bit(true),
                        Value::Bit(false),
                        Value::Bit(false),
                        Value::Int(r.open_transaction_count),
                    ]);
                } else {
                    let name: String = t.name.chars().take(32).collect();
                    // A read/write (1), active (2) local transaction: no DTC.
                    out.push(vec![
                        id,
                        s(&name),
                        datetime_of(t.begin_time),
                        Value::Int(1),
                        Value::Guid([0; 16]),
                        Value::Int(2),
                        Value::Int(0),
                        Value::Int(0),
                        Value::Int(0),
                        Value::Int(0),
                        Value::Int(0),
                        Value::Null,
                    ]);
                }
            }
        }
        DmvKind::QueryMemoryGrants => {
            // Grants grow as operators need memory (no estimate up front): requested,
            // granted and required show what is granted now; ideal is the request's
            // share of the pool.
            let kb = |v: u64| Value::BigInt(v.min(i64::MAX as u64) as i64);
            for g in super::memory::grants() {
                out.push(vec![
                    Value::SmallInt(g.session_id as i16),
                    Value::Int(0),
                    Value::Null,
                    Value::SmallInt(1),
                    datetime_of(g.request_time),
                    datetime_of(g.request_time),
                    kb(g.granted_kb),
                    kb(g.granted_kb),
                    kb(g.granted_kb.min(4096)),
                    kb(g.used_kb),
                    kb(g.max_used_kb),
                    Value::Float(0.0),
                    Value::Int(86400),
                    Value::SmallInt(0),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Int(2),
                    Value::Int(2),
                    Value::Bit(g.granted_kb <= 4096),
                    kb(g.ideal_kb),
                    Value::Int(0),
                    Value::Int(0),
                    Value::Int(0),
                    Value::BigInt(0),
                ]);
            }
        }
        DmvKind::OsSchedulers => {
            // The schedulers are the process's (diag::sched), as SQL Server's are the
            // instance's. One runnable queue feeds them all: each row shows its share.
            let int = |v: u64| Value::Int(v.min(i32::MAX as u64) as i32);
            let sched = diag::sched::schedulers();
            for r in sched.rows() {
                let id = r.scheduler_id as i64;
                let addr = |base: i64| Value::Binary((base + id * 0x40).to_be_bytes().to_vec());
                let active = usize::from(!r.is_idle);
                out.push(vec![
                    addr(0x0000_0100_0000),
                    Value::Int(0),
                    Value::Int(r.scheduler_id as i32),
                    Value::SmallInt(r.scheduler_id as i16),
                    s("VISIBLE ONLINE"),
                    Value::Bit(true),
                    Value::Bit(r.is_idle),
                    Value::Int(0),
                    int(r.context_switches),
                    Value::Int(0),
                    int((active + r.runnable) as u64),
                    int(r.runnable as u64),
                    int((active + r.runnable) as u64),
                    int((active + r.runnable) as u64),
                    big(0),
                    Value::Int(0),
                    int((active + r.runnable) as u64),
                    int(r.yields),
                    big(diag::uptime().as_millis() as i64),
                    Value::Bit(false),
                    if r.is_idle { Value::Null } else { addr(0x0000_0200_0000) },
                    addr(0x0000_0300_0000),
                    addr(0x0000_0400_0000),
                    big(diag::sched::QUANTUM.as_micros() as i64),
                    big(r.held_ms as i64),
                    big(0),
                    big(r.delay_ms as i64),
                    Value::Int(1),
                ]);
            }
        }
        DmvKind::OsSysInfo => {
            if let Some(i) = cx.host.sys_info() {
                let kb = Value::Int(i.buffer_pool_kb.min(i64::from(i32::MAX)) as i32);
                out.push(vec![
                    big(i.ms_ticks.saturating_mul(1_000_000)),
                    big(i.ms_ticks),
                    Value::Int(i.cpu_count),
                    Value::Int(i.cpu_count),
                    big(i.physical_memory_kb),
                    big(i.virtual_memory_kb),
                    kb.clone(),
                    kb.clone(),
                    kb,
                    Value::Int(2 * 1024 * 1024),
                    big(4),
                    Value::Int(5),
                    Value::Int(32),
                    Value::Int(0),
                    Value::Int(scheduler_count(i.cpu_count)),
                    Value::Int(scheduler_count(i.cpu_count)),
                    Value::Int(0),
                    big(i.start_ms_ticks),
                    datetime_of(i.start_time),
                    Value::Int(2),
                    s("AUTO"),
                    big(i.process_kernel_time_ms),
                    big(i.process_user_time_ms),
                    Value::Int(0),
                    s("QUERY_PERFORMANCE_COUNTER"),
                    Value::Int(0),
                    s("NONE"),
                    Value::Int(0),
                    s("OFF"),
                    Value::Null,
                    Value::Int(1),
                    s("CONVENTIONAL"),
                    Value::Int(1),
                    Value::Int(i.cpu_count),
                    Value::Int(1),
                    Value::Int(0),
                    s("NONE"),
                ]);
            }
        }
        DmvKind::DbLogSpaceUsage => {
            // The current database's log; the log truncates as under SIMPLE recovery, so
            // the log written since the last backup is the active log.
            let name = cx.db_name(cx.state.database).unwrap_or_default();
            for l in cx.host.log_space().into_iter().filter(|l| l.database_name.eq_ignore_ascii_case(&name)) {
                let total = (l.log_size_mb * 1024.0 * 1024.0).round() as i64;
                let used = (total as f64 * l.log_space_used_percent / 100.0).round() as i64;
                out.push(vec![
                    Value::Int(i32::from(cx.state.database)),
                    big(total),
                    big(used),
                    Value::Real(l.log_space_used_percent as f32),
                    big(used),
                ]);
            }
        }
    }
    Ok(out)
}

/// The host's sessions, the caller's own with its language and transaction as the
/// executor knows them now: only a user transaction (@@TRANCOUNT > 0) is listed, not the autocommit
/// transaction of the statement reading the view.
fn sessions(cx: &mut Cx) -> Vec<SessionRow> {
    let mut rows = cx.host.sessions();
    if let Some(own) = rows.iter_mut().find(|r| r.session_id == cx.state.spid) {
        own.open_transaction_count = cx.state.trancount as i32;
        own.language = cx.state.language.clone();
        if cx.state.trancount == 0 {
            own.transaction = None;
        } else if let Some(t) = &mut own.transaction {
            t.descriptor = cx.state.descriptor;
        }
    }
    rows
}

/// Built-in DMV table functions; None when `name` is not one.
pub fn table_function(name: &str, args: &[Expr], b: &mut Binder) -> Result<Option<(Plan, Vec<OutCol>)>, SqlError> {
    if name == "fn_helpcollations" {
        return super::catalog_views::fn_helpcollations(args.len()).map(Some);
    }
    if name != "dm_io_virtual_file_stats" {
        return Ok(None);
    }
    if args.len() < 2 {
        return Err(SqlError::new(
            216,
            16,
            1,
            "Parameters were not supplied for the function 'sys.dm_io_virtual_file_stats'.",
        ));
    }
    if args.len() > 2 {
        return Err(SqlError::new(
            8144,
            16,
            2,
            "Procedure or function dm_io_virtual_file_stats has too many arguments specified.",
        ));
    }
    let mut vals = [None, None];
    for (i, a) in args.iter().enumerate() {
        let e = b.bind_expr(a, &Scope::default())?;
        let v = e.eval(&[], b.cx)?;
        vals[i] = match &v {
            Value::Null => None,
            other => match super::table::int_of(other).and_then(|n| i32::try_from(n).ok()) {
                Some(n) => Some(n),
                None => {
                    return Err(SqlError::new(
                        8116,
                        16,
                        1,
                        format!(
                            "Argument data type {} is invalid for argument {} of dm_io_virtual_file_stats function.",
                            e.ty().name(),
                            i + 1
                        ),
                    ))
                }
            },
        };
    }
    let cols = columns(DmvKind::VirtualFileStats);
    let view = View { kind: ViewKind::Dmv(DmvKind::VirtualFileStats), db: b.cx.state.database, args: vals };
    Ok(Some((Plan::Virtual { view, cols: cols.clone() }, cols)))
}

// ---------------------------------------------------------------------------------------
// What a running request is doing, for sys.dm_exec_requests
// ---------------------------------------------------------------------------------------

const COMMANDS: &[&str] = &[
    "AWAITING COMMAND",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "EXECUTE",
    "WAITFOR",
    "BEGIN TRANSACTION",
    "COMMIT TRANSACTION",
    "ROLLBACK TRANSACTION",
    "SAVE TRANSACTION",
    "CHECKPOINT",
    "DBCC",
    "BACKUP DATABASE",
    "RESTORE DATABASE",
    "CREATE DATABASE",
    "ALTER DATABASE",
    "DROP DATABASE",
    "CREATE TABLE",
    "ALTER TABLE",
    "DROP TABLE",
    "CREATE INDEX",
    "DROP INDEX",
    "TRUNCATE TABLE",
    "CREATE PROCEDURE",
    "CREATE VIEW",
    "CREATE FUNCTION",
    "USE",
];

/// The position of `command` in [`COMMANDS`], found when compiling (a statement notes its
/// command by position, without comparing strings at run time).
const fn command_index(command: &str) -> u8 {
    let mut i = 0;
    while i < COMMANDS.len() {
        let (a, b) = (COMMANDS[i].as_bytes(), command.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i as u8;
            }
        }
        i += 1;
    }
    panic!("a command missing from COMMANDS")
}

/// The statement a session's request is executing and how deeply nested, shared between
/// the executor (which sets it per statement: one relaxed store) and the host (which
/// shows it in sys.dm_exec_requests for any session).
#[derive(Debug, Default)]
pub struct LiveRequest {
    command: AtomicU8,
    nest_level: AtomicU8,
}

impl LiveRequest {
    /// Notes the statement about to run. Control-flow statements (IF, WHILE, SET, ...)
    /// keep the previous command (so does MERGE, which has no entry in [`COMMANDS`]).
    pub fn statement(&self, kind: &StatementKind, nest_level: usize) {
        use crate::ast::DropKind;
        let c = match kind {
            StatementKind::Query(_) => const { command_index("SELECT") },
            StatementKind::Insert(_) => const { command_index("INSERT") },
            StatementKind::Update(_) => const { command_index("UPDATE") },
            StatementKind::Delete(_) => const { command_index("DELETE") },
            StatementKind::Exec(_) | StatementKind::ExecString(_) => const { command_index("EXECUTE") },
            StatementKind::WaitFor { .. } => const { command_index("WAITFOR") },
            StatementKind::BeginTransaction { .. } => const { command_index("BEGIN TRANSACTION") },
            StatementKind::Commit { .. } => const { command_index("COMMIT TRANSACTION") },
            StatementKind::Rollback { .. } => const { command_index("ROLLBACK TRANSACTION") },
            StatementKind::SaveTransaction { .. } => const { command_index("SAVE TRANSACTION") },
            StatementKind::Checkpoint(_) => const { command_index("CHECKPOINT") },
            StatementKind::Dbcc(_) => const { command_index("DBCC") },
            StatementKind::Backup(_) => const { command_index("BACKUP DATABASE") },
            StatementKind::Restore(_) => const { command_index("RESTORE DATABASE") },
            StatementKind::CreateDatabase(_) => const { command_index("CREATE DATABASE") },
            StatementKind::AlterDatabase(_) => const { command_index("ALTER DATABASE") },
            StatementKind::Drop { kind: DropKind::Database, .. } => const { command_index("DROP DATABASE") },
            StatementKind::Drop { .. } => const { command_index("DROP TABLE") },
            StatementKind::CreateTable(_) => const { command_index("CREATE TABLE") },
            StatementKind::AlterTable(_) => const { command_index("ALTER TABLE") },
            StatementKind::CreateIndex(_) => const { command_index("CREATE INDEX") },
            StatementKind::DropIndex { .. } => const { command_index("DROP INDEX") },
            StatementKind::Truncate { .. } => const { command_index("TRUNCATE TABLE") },
            StatementKind::CreateProcedure(_) => const { command_index("CREATE PROCEDURE") },
            StatementKind::CreateView(_) => const { command_index("CREATE VIEW") },
            StatementKind::CreateFunction(_) => const { command_index("CREATE FUNCTION") },
            StatementKind::Use(_) => const { command_index("USE") },
            _ => return,
        };
        self.command.store(c, Relaxed);
        self.nest_level.store(nest_level.min(255) as u8, Relaxed);
    }

    /// A new request starts (before its first statement).
    pub fn start(&self) {
        self.command.store(0, Relaxed);
        self.nest_level.store(0, Relaxed);
    }

    pub fn command(&self) -> &'static str {
        COMMANDS.get(usize::from(self.command.load(Relaxed))).copied().unwrap_or("SELECT")
    }

    /// @@NESTLEVEL of the statement running.
    pub fn nest_level(&self) -> i32 {
        i32::from(self.nest_level.load(Relaxed))
    }
}

// ---------------------------------------------------------------------------------------
// DBCC SQLPERF
// ---------------------------------------------------------------------------------------

fn incorrect_dbcc() -> SqlError {
    SqlError::new(
        2526,
        16,
        3,
        "Incorrect DBCC statement. Check the documentation for the correct DBCC syntax and options.",
    )
}

/// A DBCC argument as text: a bare word, a quoted name or a string literal.
fn word(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Column(n) => Some(n.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".")),
        ExprKind::Literal(Literal::String { value, .. }) => Some(value.clone()),
        _ => None,
    }
}

/// DBCC SQLPERF(LOGSPACE) and DBCC SQLPERF('sys.dm_os_wait_stats' | 'sys.dm_os_latch_stats', CLEAR).
pub fn dbcc_sqlperf(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    let mut no_infomsgs = false;
    for o in &d.options {
        if o.is("NO_INFOMSGS") {
            no_infomsgs = true;
        } else if !o.is("TABLERESULTS") {
            return Err(incorrect_dbcc());
        }
    }
    let words: Vec<String> = d.args.iter().map(word).collect::<Option<_>>().ok_or_else(incorrect_dbcc)?;
    let lower: Vec<String> = words.iter().map(|w| w.to_ascii_lowercase()).collect();
    let lower: Vec<&str> = lower.iter().map(String::as_str).collect();
    if !cx.is_sysadmin() {
        return Err(SqlError::new(
            300,
            14,
            1,
            if lower.len() == 2 {
                "ALTER SERVER STATE permission was denied on object 'server', database 'master'."
            } else {
                "VIEW SERVER STATE permission was denied on object 'server', database 'master'."
            },
        ));
    }
    match lower.as_slice() {
        ["logspace"] => {
            let rows = cx.host.log_space();
            let info = [
                ColumnInfo::new("Database Name", nv(128), true),
                ColumnInfo::new("Log Size (MB)", SqlType::Real, true),
                ColumnInfo::new("Log Space Used (%)", SqlType::Real, true),
                ColumnInfo::new("Status", SqlType::Int, true),
            ];
            cx.sink.columns(&info).map_err(|_| super::cancelled())?;
            for r in &rows {
                let row = [
                    s(&r.database_name),
                    Value::Real(r.log_size_mb as f32),
                    Value::Real(r.log_space_used_percent as f32),
                    Value::Int(0),
                ];
                cx.sink.row(&row).map_err(|_| super::cancelled())?;
            }
            cx.state.rowcount = rows.len() as i64;
            dbcc_done(cx, no_infomsgs, Some(rows.len() as u64))?;
        }
        [stats, "clear"] => {
            let what = match *stats {
                "sys.dm_os_wait_stats" => ClearStats::WaitStats,
                "sys.dm_os_latch_stats" => ClearStats::LatchStats,
                _ => return Err(incorrect_dbcc()),
            };
            cx.host.clear_stats(what).map_err(super::host_err)?;
            dbcc_done(cx, no_infomsgs, None)?;
        }
        _ => return Err(incorrect_dbcc()),
    }
    Ok(Flow::Normal)
}

/// DBCC USEROPTIONS [WITH NO_INFOMSGS]: the session's SET options, as (Set Option,
/// Value) rows in SQL Server's order; ON options are listed with the value SET, OFF ones
/// not at all. The options Mesquite accepts without tracking show the drivers' login
/// defaults, as in sys.dm_exec_sessions.
pub fn dbcc_useroptions(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    let mut no_infomsgs = false;
    for o in &d.options {
        if o.is("NO_INFOMSGS") {
            no_infomsgs = true;
        } else if !o.is("TABLERESULTS") {
            return Err(incorrect_dbcc());
        }
    }
    if !d.args.is_empty() {
        return Err(incorrect_dbcc());
    }
    let st = &cx.state;
    let isolation = match st.isolation {
        Isolation::ReadUncommitted => "read uncommitted",
        Isolation::ReadCommitted => "read committed",
        Isolation::RepeatableRead => "repeatable read",
        Isolation::Serializable => "serializable",
        Isolation::Snapshot => "snapshot",
    };
    let mut rows: Vec<(&str, String)> = vec![
        ("textsize", i32::MAX.to_string()),
        ("language", st.language.clone()),
        ("dateformat", "mdy".into()),
        ("datefirst", st.datefirst.to_string()),
        ("lock_timeout", st.lock_timeout.to_string()),
    ];
    // The ON options, in the order SQL Server lists them.
    let bits = st.options_bits();
    for (bit, name) in [
        (opt::QUOTED_IDENTIFIER, "quoted_identifier"),
        (opt::ARITHABORT, "arithabort"),
        (opt::ARITHIGNORE, "arithignore"),
        (opt::ANSI_NULL_DFLT_ON, "ansi_null_dflt_on"),
        (opt::ANSI_NULL_DFLT_OFF, "ansi_null_dflt_off"),
        (opt::ANSI_WARNINGS, "ansi_warnings"),
        (opt::ANSI_PADDING, "ansi_padding"),
        (opt::ANSI_NULLS, "ansi_nulls"),
        (opt::CONCAT_NULL_YIELDS_NULL, "concat_null_yields_null"),
        (opt::NUMERIC_ROUNDABORT, "numeric_roundabort"),
        (opt::CURSOR_CLOSE_ON_COMMIT, "cursor_close_on_commit"),
        (opt::NOCOUNT, "nocount"),
        (opt::XACT_ABORT, "xact_abort"),
        (opt::IMPLICIT_TRANSACTIONS, "implicit_transactions"),
    ] {
        if bits & bit != 0 {
            rows.push((name, "SET".into()));
        }
    }
    rows.push(("isolation level", isolation.into()));
    let info = [ColumnInfo::new("Set Option", nv(128), false), ColumnInfo::new("Value", nv(128), true)];
    cx.sink.columns(&info).map_err(|_| super::cancelled())?;
    for (k, v) in &rows {
        cx.sink.row(&[s(k), s(v)]).map_err(|_| super::cancelled())?;
    }
    cx.state.rowcount = rows.len() as i64;
    dbcc_done(cx, no_infomsgs, Some(rows.len() as u64))?;
    Ok(Flow::Normal)
}

/// Msg 2528 (unless WITH NO_INFOMSGS) and the statement's DONE.
fn dbcc_done(cx: &mut Cx, no_infomsgs: bool, count: Option<u64>) -> Result<(), SqlError> {
    if !no_infomsgs {
        let m = SqlError::new(
            2528,
            10,
            1,
            "DBCC execution completed. If DBCC printed error messages, contact your system administrator.",
        );
        cx.sink.message(&Message { error: m, info: true }).map_err(|_| super::cancelled())?;
    }
    cx.done(count)
}
