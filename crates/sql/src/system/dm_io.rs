//! sys.dm_io_*: file I/O statistics.

use types::{SqlError, Value};

use super::object::{
    big, col, Access, Body, Call, Columns, ObjectKind, Schema, SystemObject, BIGINT as BIG, SMALLINT as SI,
};
use crate::exec::context::Cx;
use crate::exec::expr::Row;

pub(super) const OBJECTS: &[SystemObject] = &[SystemObject {
    id: -126,
    schema: Schema::Sys,
    name: "dm_io_virtual_file_stats",
    kind: ObjectKind::TableFunction,
    access: Access::ServerState,
    columns: Columns::Runs(&[&[
        col("database_id", SI, false),
        col("file_id", SI, false),
        col("sample_ms", BIG, false),
        col("num_of_reads", BIG, false),
        col("num_of_bytes_read", BIG, false),
        col("io_stall_read_ms", BIG, false),
        col("num_of_writes", BIG, false),
        col("num_of_bytes_written", BIG, false),
        col("io_stall_write_ms", BIG, false),
        col("io_stall", BIG, false),
        col("size_on_disk_bytes", BIG, false),
        col("file_handle", super::object::vb(8), true),
        col("io_stall_queued_read_ms", BIG, false),
        col("io_stall_queued_write_ms", BIG, false),
    ]]),
    params: &["database_id", "file_id"],
    body: Body::Rows(virtual_file_stats),
}];

/// sys.dm_io_virtual_file_stats(database_id, file_id): NULL for every database or file.
fn virtual_file_stats(cx: &mut Cx, call: &Call) -> Result<Vec<Row>, SqlError> {
    let db = match call.args[0] {
        Some(d) => match i16::try_from(d) {
            Ok(d) => Some(d),
            Err(_) => return Ok(Vec::new()),
        },
        None => None,
    };
    Ok(cx
        .host
        .virtual_file_stats(db, call.args[1])
        .iter()
        .map(|f| {
            vec![
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
            ]
        })
        .collect())
}
