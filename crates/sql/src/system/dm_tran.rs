//! sys.dm_tran_*: locks and open transactions.

use types::{SqlError, Value};

use super::dm_exec::sessions;
use super::object::{
    big, big_u, col, datetime_of, nv, s, vb, Access, Body, Call, Columns, ObjectKind, Schema, SystemObject,
};
use super::object::{BIGINT as BIG, BIT, DATETIME as DT, GUID, INT, SMALLINT as SI};
use crate::exec::context::Cx;
use crate::exec::expr::Row;

pub(super) const OBJECTS: &[SystemObject] = &[
    SystemObject {
        id: -170,
        schema: Schema::Sys,
        name: "dm_tran_locks",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("resource_type", nv(60), false),
            col("resource_subtype", nv(60), false),
            col("resource_database_id", INT, false),
            col("resource_description", nv(256), false),
            col("resource_associated_entity_id", BIG, true),
            col("resource_lock_partition", INT, true),
            col("request_mode", nv(60), false),
            col("request_type", nv(60), false),
            col("request_status", nv(60), false),
            col("request_reference_count", SI, false),
            col("request_lifetime", INT, false),
            col("request_session_id", INT, false),
            col("request_exec_context_id", INT, false),
            col("request_request_id", INT, false),
            col("request_owner_type", nv(60), false),
            col("request_owner_id", BIG, true),
            col("request_owner_guid", GUID, true),
            col("request_owner_lockspace_id", nv(32), false),
            col("lock_owner_address", vb(8), false),
        ]]),
        params: &[],
        body: Body::Rows(locks),
    },
    SystemObject {
        id: -180,
        schema: Schema::Sys,
        name: "dm_tran_session_transactions",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("session_id", INT, false),
            col("transaction_id", BIG, false),
            col("transaction_descriptor", types::SqlType::Binary { len: 8 }, false),
            col("enlist_count", INT, false),
            col("is_user_transaction", BIT, false),
            col("is_local", BIT, false),
            col("is_enlisted", BIT, false),
            col("is_bound", BIT, false),
            col("open_transaction_count", INT, false),
        ]]),
        params: &[],
        body: Body::Rows(session_transactions),
    },
    SystemObject {
        id: -181,
        schema: Schema::Sys,
        name: "dm_tran_active_transactions",
        kind: ObjectKind::View,
        access: Access::ServerState,
        columns: Columns::Runs(&[&[
            col("transaction_id", BIG, false),
            col("name", nv(32), false),
            col("transaction_begin_time", DT, false),
            col("transaction_type", INT, false),
            col("transaction_uow", GUID, true),
            col("transaction_state", INT, false),
            col("transaction_status", INT, false),
            col("transaction_status2", INT, false),
            col("dtc_state", INT, false),
            col("dtc_status", INT, false),
            col("dtc_isolation_level", INT, false),
            col("filestream_transaction_id", vb(128), true),
        ]]),
        params: &[],
        body: Body::Rows(active_transactions),
    },
];

fn locks(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    Ok(cx
        .host
        .locks()
        .iter()
        .map(|l| {
            // Mesquite's lock owner is the transaction: its id stands in for the owner's
            // memory address and lock space (which only identify it).
            let owner = l.request_owner_id.to_be_bytes();
            vec![
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
                big_u(l.request_owner_id),
                Value::Guid([0; 16]),
                s(&format!("0x{:016X}:0:0", l.request_owner_id)),
                Value::Binary(owner.to_vec()),
            ]
        })
        .collect())
}

fn session_transactions(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
    for r in sessions(cx) {
        let Some(t) = &r.transaction else { continue };
        out.push(vec![
            Value::Int(r.session_id),
            big_u(t.transaction_id),
            Value::Binary(t.descriptor.to_le_bytes().to_vec()),
            Value::Int(1),
            Value::Bit(true),
            Value::Bit(true),
            Value::Bit(false),
            Value::Bit(false),
            Value::Int(r.open_transaction_count),
        ]);
    }
    Ok(out)
}

fn active_transactions(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
    for r in sessions(cx) {
        let Some(t) = &r.transaction else { continue };
        let name: String = t.name.chars().take(32).collect();
        // A read/write (1), active (2) local transaction: no DTC.
        out.push(vec![
            big_u(t.transaction_id),
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
    Ok(out)
}
