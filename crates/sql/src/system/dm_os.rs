//! sys.dm_os_*: waits, performance counters, waiting tasks, the system and its
//! schedulers.

use types::{SqlError, SqlType, Value};

use super::object::{
    big, col, datetime_of, nv, s, vb, vc, Access, Body, Call, Col, Columns, ObjectKind, Schema, SystemObject,
};
use super::object::{BIGINT as BIG, BIT, DATETIME as DT, INT, SMALLINT as SI};
use crate::exec::context::Cx;
use crate::exec::expr::Row;

pub(super) const OBJECTS: &[SystemObject] = &[
    SystemObject {
        id: -121,
        schema: Schema::Sys,
        name: "dm_os_wait_stats",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[WAIT_STATS]),
        params: &[],
        body: Body::Rows(wait_stats),
    },
    SystemObject {
        id: -125,
        schema: Schema::Sys,
        name: "dm_os_performance_counters",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("object_name", NC128, false),
            col("counter_name", NC128, false),
            col("instance_name", NC128, true),
            col("cntr_value", BIG, false),
            col("cntr_type", INT, false),
        ]]),
        params: &[],
        body: Body::Rows(performance_counters),
    },
    SystemObject {
        id: -171,
        schema: Schema::Sys,
        name: "dm_os_waiting_tasks",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("waiting_task_address", vb(8), false),
            col("session_id", SI, true),
            col("exec_context_id", INT, true),
            col("wait_duration_ms", BIG, true),
            col("wait_type", nv(60), true),
            col("resource_address", vb(8), true),
            col("blocking_task_address", vb(8), true),
            col("blocking_session_id", SI, true),
            col("blocking_exec_context_id", INT, true),
            col("resource_description", nv(3072), true),
        ]]),
        params: &[],
        body: Body::Rows(waiting_tasks),
    },
    SystemObject {
        id: -186,
        schema: Schema::Sys,
        name: "dm_os_sys_info",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("cpu_ticks", BIG, false),
            col("ms_ticks", BIG, false),
            col("cpu_count", INT, false),
            col("hyperthread_ratio", INT, false),
            col("physical_memory_kb", BIG, false),
            col("virtual_memory_kb", BIG, false),
            col("committed_kb", INT, false),
            col("committed_target_kb", INT, false),
            col("visible_target_kb", INT, false),
            col("stack_size_in_bytes", INT, false),
            col("os_quantum", BIG, false),
            col("os_error_mode", INT, false),
            col("os_priority_class", INT, true),
            col("max_workers_count", INT, false),
            col("scheduler_count", INT, false),
            col("scheduler_total_count", INT, false),
            col("deadlock_monitor_serial_number", INT, false),
            col("sqlserver_start_time_ms_ticks", BIG, false),
            col("sqlserver_start_time", DT, false),
            col("affinity_type", INT, false),
            col("affinity_type_desc", vc(60), false),
            col("process_kernel_time_ms", BIG, false),
            col("process_user_time_ms", BIG, false),
            col("time_source", INT, false),
            col("time_source_desc", nv(60), false),
            col("virtual_machine_type", INT, false),
            col("virtual_machine_type_desc", nv(60), false),
            col("softnuma_configuration", INT, false),
            col("softnuma_configuration_desc", nv(60), false),
            col("process_physical_affinity", nv(3072), true),
            col("sql_memory_model", INT, false),
            col("sql_memory_model_desc", nv(120), false),
            col("socket_count", INT, false),
            col("cores_per_socket", INT, false),
            col("numa_node_count", INT, false),
            col("container_type", INT, false),
            col("container_type_desc", nv(60), false),
        ]]),
        params: &[],
        body: Body::Rows(sys_info),
    },
    SystemObject {
        id: -187,
        schema: Schema::Sys,
        name: "dm_os_schedulers",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("scheduler_address", vb(8), false),
            col("parent_node_id", INT, false),
            col("scheduler_id", INT, false),
            col("cpu_id", SI, false),
            col("status", nv(60), false),
            col("is_online", BIT, false),
            col("is_idle", BIT, false),
            col("preemptive_switches_count", INT, false),
            col("context_switches_count", INT, false),
            col("idle_switches_count", INT, false),
            col("current_tasks_count", INT, false),
            col("runnable_tasks_count", INT, false),
            col("current_workers_count", INT, false),
            col("active_workers_count", INT, false),
            col("work_queue_count", BIG, false),
            col("pending_disk_io_count", INT, false),
            col("load_factor", INT, false),
            col("yield_count", INT, false),
            col("last_timer_activity", BIG, false),
            col("failed_to_create_worker", BIT, true),
            col("active_worker_address", vb(8), true),
            col("memory_object_address", vb(8), false),
            col("task_memory_object_address", vb(8), false),
            col("quantum_length_us", BIG, false),
            col("total_cpu_usage_ms", BIG, false),
            col("total_cpu_idle_capped_ms", BIG, true),
            col("total_scheduler_delay_ms", BIG, false),
            col("ideal_workers_limit", INT, false),
        ]]),
        params: &[],
        body: Body::Rows(schedulers),
    },
];

const NC128: SqlType = SqlType::NChar { len: 128 };

/// The columns of a wait-statistics row (sys.dm_exec_session_wait_stats adds session_id
/// in front).
pub(super) const WAIT_STATS: &[Col] = &[
    col("wait_type", nv(60), false),
    col("waiting_tasks_count", BIG, false),
    col("wait_time_ms", BIG, false),
    col("max_wait_time_ms", BIG, false),
    col("signal_wait_time_ms", BIG, false),
];

/// A wait-statistics row's values.
pub(super) fn wait_values(w: &crate::host::WaitStatRow) -> [Value; 5] {
    [
        s(w.wait_type),
        big(w.waiting_tasks_count),
        big(w.wait_time_ms),
        big(w.max_wait_time_ms),
        big(w.signal_wait_time_ms),
    ]
}

fn wait_stats(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    Ok(cx.host.os_wait_stats().iter().map(|w| wait_values(w).to_vec()).collect())
}

fn nchar128(v: &str) -> Value {
    let mut t: String = v.chars().take(128).collect();
    let n = t.chars().count();
    t.push_str(&" ".repeat(128 - n));
    Value::String(t)
}

fn performance_counters(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    Ok(cx
        .host
        .performance_counters()
        .iter()
        .map(|c| {
            vec![
                nchar128(&c.object_name),
                nchar128(&c.counter_name),
                nchar128(&c.instance_name),
                big(c.cntr_value),
                Value::Int(c.cntr_type),
            ]
        })
        .collect())
}

fn waiting_tasks(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    // One task per session: a session's id stands in for its task's address.
    let task = |session_id: i32| Value::Binary(i64::from(session_id).to_be_bytes().to_vec());
    let mut out = Vec::new();
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
    Ok(out)
}

/// The instance's schedulers (sys.dm_os_schedulers' rows); with scheduling turned off
/// (`InstanceConfig::schedulers` = 0) every CPU still counts as one.
fn scheduler_count(cpu_count: i32) -> i32 {
    match diag::sched::schedulers().count() {
        0 => cpu_count,
        n => n as i32,
    }
}

fn sys_info(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let Some(i) = cx.host.sys_info() else { return Ok(Vec::new()) };
    let kb = Value::Int(i.buffer_pool_kb.min(i64::from(i32::MAX)) as i32);
    Ok(vec![vec![
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
    ]])
}

fn schedulers(_cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    // The schedulers are the process's (diag::sched), as SQL Server's are the
    // instance's. One runnable queue feeds them all: each row shows its share.
    let int = |v: u64| Value::Int(v.min(i32::MAX as u64) as i32);
    let sched = diag::sched::schedulers();
    let mut out = Vec::new();
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
    Ok(out)
}
