//! sys.dm_db_*: database state.

use types::{SqlError, SqlType, Value};

use super::object::{big, col, Access, Body, Call, Columns, ObjectKind, Schema, SystemObject, BIGINT as BIG, INT};
use crate::exec::context::Cx;
use crate::exec::expr::Row;

pub(super) const OBJECTS: &[SystemObject] = &[SystemObject {
    id: -172,
    schema: Schema::Sys,
    name: "dm_db_log_space_usage",
    kind: ObjectKind::View,
    access: Access::Public,
    columns: Columns::Runs(&[&[
        col("database_id", INT, true),
        col("total_log_size_in_bytes", BIG, true),
        col("used_log_space_in_bytes", BIG, true),
        col("used_log_space_in_percent", SqlType::Real, true),
        col("log_space_in_bytes_since_last_backup", BIG, true),
    ]]),
    params: &[],
    body: Body::Rows(log_space_usage),
}];

fn log_space_usage(cx: &mut Cx, _: &Call) -> Result<Vec<Row>, SqlError> {
    // The current database's log; the log truncates as under SIMPLE recovery, so the log
    // written since the last backup is the active log.
    let name = cx.db_name(cx.state.database).unwrap_or_default();
    let mut out = Vec::new();
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
    Ok(out)
}
