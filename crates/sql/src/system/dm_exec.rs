//! sys.dm_exec_*: sessions, requests, connections, per-session waits and query memory
//! grants.

use std::time::SystemTime;

use types::{SqlError, SqlType, Value};

use super::object::{
    big, big_u, col, datetime_of, int_ms, nv, s, vb, vc, visible, Access, Body, Call, Col, Columns, ObjectKind, Schema,
};
use super::object::{SystemObject, BIGINT as BIG, BIT, DATETIME as DT, GUID, INT, SMALLINT as SI};
use crate::exec::context::Cx;
use crate::exec::expr::Row;
use crate::exec::session::opt;
use crate::host::{Isolation, SessionRow};

pub(super) const OBJECTS: &[SystemObject] = &[
    SystemObject {
        id: -122,
        schema: Schema::Sys,
        name: "dm_exec_session_wait_stats",
        kind: ObjectKind::View,
        access: Access::Public,
        columns: Columns::Runs(&[&[col("session_id", SI, false)], super::dm_os::WAIT_STATS]),
        params: &[],
        body: Body::Rows(session_wait_stats),
    },
    SystemObject {
        id: -123,
        schema: Schema::Sys,
        name: "dm_exec_sessions",
        kind: ObjectKind::View,
        access: Access::Public,
        columns: Columns::Runs(&[
            &[
                col("session_id", SI, false),
                col("login_time", DT, false),
                col("host_name", nv(128), true),
                col("program_name", nv(128), true),
                col("host_process_id", INT, true),
                col("client_version", INT, true),
                col("client_interface_name", nv(32), true),
                col("security_id", vb(85), false),
                col("login_name", nv(128), false),
                col("nt_domain", nv(128), true),
                col("nt_user_name", nv(128), true),
                col("status", nv(30), false),
                col("context_info", vb(128), true),
                col("cpu_time", INT, false),
                col("memory_usage", INT, false),
                col("total_scheduled_time", INT, false),
                col("total_elapsed_time", INT, false),
                col("endpoint_id", INT, false),
                col("last_request_start_time", DT, false),
                col("last_request_end_time", DT, true),
                col("reads", BIG, false),
                col("writes", BIG, false),
                col("logical_reads", BIG, false),
                col("is_user_process", BIT, false),
            ],
            SETTINGS,
            &[
                col("original_security_id", vb(85), false),
                col("original_login_name", nv(128), false),
                col("last_successful_logon", DT, true),
                col("last_unsuccessful_logon", DT, true),
                col("unsuccessful_logons", BIG, true),
                col("group_id", INT, false),
                col("database_id", SI, false),
                col("authenticating_database_id", INT, true),
                col("open_transaction_count", INT, false),
            ],
        ]),
        params: &[],
        body: Body::Rows(sessions_view),
    },
    SystemObject {
        id: -124,
        schema: Schema::Sys,
        name: "dm_exec_requests",
        kind: ObjectKind::View,
        access: Access::Public,
        columns: Columns::Runs(&[
            &[
                col("session_id", SI, false),
                col("request_id", INT, false),
                col("start_time", DT, false),
                col("status", nv(30), false),
                col("command", nv(32), false),
                col("sql_handle", vb(64), true),
                col("statement_start_offset", INT, true),
                col("statement_end_offset", INT, true),
                col("plan_handle", vb(64), true),
                col("database_id", SI, false),
                col("user_id", INT, false),
                col("connection_id", GUID, true),
                col("blocking_session_id", SI, true),
                col("wait_type", nv(60), true),
                col("wait_time", INT, false),
                col("last_wait_type", nv(60), false),
                col("wait_resource", nv(256), false),
                col("open_transaction_count", INT, false),
                col("open_resultset_count", INT, false),
                col("transaction_id", BIG, false),
                col("context_info", vb(128), true),
                col("percent_complete", SqlType::Real, false),
                col("estimated_completion_time", BIG, false),
                col("cpu_time", INT, false),
                col("total_elapsed_time", INT, false),
                col("scheduler_id", INT, true),
                col("task_address", vb(8), true),
                col("reads", BIG, false),
                col("writes", BIG, false),
                col("logical_reads", BIG, false),
            ],
            SETTINGS,
            &[
                col("nest_level", INT, false),
                col("granted_query_memory", INT, false),
                col("executing_managed_code", BIT, false),
                col("group_id", INT, false),
                col("query_hash", SqlType::Binary { len: 8 }, true),
                col("query_plan_hash", SqlType::Binary { len: 8 }, true),
                col("statement_sql_handle", vb(64), true),
                col("statement_context_id", BIG, true),
                col("dop", INT, false),
                col("parallel_worker_count", INT, true),
                col("external_script_request_id", GUID, true),
                col("is_resumable", BIT, false),
            ],
        ]),
        params: &[],
        body: Body::Rows(requests),
    },
    SystemObject {
        id: -179,
        schema: Schema::Sys,
        name: "dm_exec_connections",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("session_id", INT, true),
            col("most_recent_session_id", INT, true),
            col("connect_time", DT, false),
            col("net_transport", nv(40), false),
            col("protocol_type", nv(40), true),
            col("protocol_version", INT, true),
            col("endpoint_id", INT, true),
            col("encrypt_option", nv(40), false),
            col("auth_scheme", nv(40), false),
            col("node_affinity", SI, false),
            col("num_reads", INT, true),
            col("num_writes", INT, true),
            col("last_read", DT, true),
            col("last_write", DT, true),
            col("net_packet_size", INT, true),
            col("client_net_address", vc(48), true),
            col("client_tcp_port", INT, true),
            col("local_net_address", vc(48), true),
            col("local_tcp_port", INT, true),
            col("connection_id", GUID, false),
            col("parent_connection_id", GUID, true),
            col("most_recent_sql_handle", vb(64), true),
        ]]),
        params: &[],
        body: Body::Rows(connections),
    },
    SystemObject {
        id: -189,
        schema: Schema::Sys,
        name: "dm_exec_query_memory_grants",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("session_id", SI, false),
            col("request_id", INT, false),
            col("scheduler_id", INT, true),
            col("dop", SI, false),
            col("request_time", DT, false),
            col("grant_time", DT, true),
            col("requested_memory_kb", BIG, false),
            col("granted_memory_kb", BIG, true),
            col("required_memory_kb", BIG, false),
            col("used_memory_kb", BIG, true),
            col("max_used_memory_kb", BIG, true),
            col("query_cost", SqlType::Float, false),
            col("timeout_sec", INT, false),
            col("resource_semaphore_id", SI, false),
            col("queue_id", SI, true),
            col("wait_order", INT, true),
            col("is_next_candidate", BIT, true),
            col("wait_time_ms", BIG, true),
            col("plan_handle", vb(64), true),
            col("sql_handle", vb(64), true),
            col("group_id", INT, false),
            col("pool_id", INT, false),
            col("is_small", BIT, false),
            col("ideal_memory_kb", BIG, false),
            col("reserved_worker_count", INT, false),
            col("used_worker_count", INT, false),
            col("max_used_worker_count", INT, false),
            col("reserved_node_bitmap", BIG, false),
        ]]),
        params: &[],
        body: Body::Rows(query_memory_grants),
    },
];

/// The session settings columns sys.dm_exec_sessions and sys.dm_exec_requests share,
/// from text_size to prev_error.
const SETTINGS: &[Col] = &[
    col("text_size", INT, false),
    col("language", nv(128), true),
    col("date_format", nv(3), true),
    col("date_first", SI, false),
    col("quoted_identifier", BIT, false),
    col("arithabort", BIT, false),
    col("ansi_null_dflt_on", BIT, false),
    col("ansi_defaults", BIT, false),
    col("ansi_warnings", BIT, false),
    col("ansi_padding", BIT, false),
    col("ansi_nulls", BIT, false),
    col("concat_null_yields_null", BIT, false),
    col("transaction_isolation_level", SI, false),
    col("lock_timeout", INT, false),
    col("deadlock_priority", INT, false),
    col("row_count", BIG, false),
    col("prev_error", INT, false),
];

fn isolation_code(i: Isolation) -> i16 {
    match i {
        Isolation::ReadUncommitted => 1,
        Isolation::ReadCommitted => 2,
        Isolation::RepeatableRead => 3,
        Isolation::Serializable => 4,
        Isolation::Snapshot => 5,
    }
}

/// The [`SETTINGS`] values of a session.
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

/// The host's sessions, the caller's own with its language and transaction as the
/// executor knows them now: only a user transaction (@@TRANCOUNT > 0) is listed, not
/// the autocommit transaction of the statement reading the view.
pub(super) fn sessions(cx: &mut Cx) -> Vec<SessionRow> {
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

fn session_wait_stats(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let waits = cx.host.session_wait_stats();
    Ok(waits
        .iter()
        .filter(|w| visible(cx, w.session_id))
        .map(|w| {
            let mut r = vec![Value::SmallInt(w.session_id as i16)];
            r.extend(super::dm_os::wait_values(w));
            r
        })
        .collect())
}

fn sessions_view(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let now = SystemTime::now();
    let mut out = Vec::new();
    for r in sessions(cx).into_iter().filter(|r| visible(cx, r.session_id)) {
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
    Ok(out)
}

fn requests(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
    for r in sessions(cx).into_iter().filter(|r| visible(cx, r.session_id)) {
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
            big_u(r.transaction.as_ref().map_or(0, |t| t.transaction_id)),
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
    Ok(out)
}

fn connections(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
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
    Ok(out)
}

fn query_memory_grants(_cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    // Grants grow as operators need memory (no estimate up front): requested, granted
    // and required show what is granted now; ideal is the request's share of the pool.
    let kb = big_u;
    Ok(crate::exec::memory::grants()
        .into_iter()
        .map(|g| {
            vec![
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
            ]
        })
        .collect())
}
