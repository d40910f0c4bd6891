//! The system procedures: sp_executesql and the prepared-statement procedures that
//! drivers call over RPC, sp_flush_log, the ODBC catalog procedures (sp_tables,
//! sp_columns, sp_pkeys, sp_fkeys, sp_databases), sp_helptext, and the ones listed but
//! not run yet (sp_help, sp_helpdb, sp_who, sp_readerrorlog: Msg 40000-style "not
//! supported"). Their code is in `exec/procs.rs` and `exec/catalog_procs.rs`.

use super::object::{Access, Body, Columns, ObjectKind, Schema, SystemObject};
use crate::exec::catalog_procs as catalog;
use crate::exec::procs;

/// A procedure of sys.
const fn proc(id: i32, name: &'static str, kind: ObjectKind, run: super::object::ProcFn) -> SystemObject {
    SystemObject {
        id,
        schema: Schema::Sys,
        name,
        kind,
        access: Access::Public,
        columns: Columns::Runs(&[]),
        params: &[],
        body: Body::Proc(run),
    }
}

const X: ObjectKind = ObjectKind::ExtendedProcedure;
const P: ObjectKind = ObjectKind::Procedure;

pub(super) const OBJECTS: &[SystemObject] = &[
    proc(-130, "sp_executesql", X, procs::sp_executesql),
    proc(-131, "sp_prepare", X, procs::sp_prepare),
    proc(-132, "sp_execute", X, procs::sp_execute),
    proc(-133, "sp_prepexec", X, procs::sp_prepexec),
    proc(-134, "sp_unprepare", X, procs::sp_unprepare),
    proc(-135, "sp_flush_log", P, procs::sp_flush_log),
    proc(-136, "sp_describe_parameter_encryption", X, |cx, args, _| {
        catalog::sp_describe_parameter_encryption(cx, args).map(|_| 0)
    }),
    proc(-137, "sp_readerrorlog", P, |_, _, _| Err(procs::not_yet("sp_readerrorlog"))),
    proc(-138, "sp_who", P, |_, _, _| Err(procs::not_yet("sp_who"))),
    proc(-139, "sp_help", P, |_, _, _| Err(procs::not_yet("sp_help"))),
    proc(-140, "sp_helpdb", P, |_, _, _| Err(procs::not_yet("sp_helpdb"))),
    proc(-141, "sp_tables", P, |cx, args, _| catalog::sp_tables(cx, args).map(|_| 0)),
    proc(-142, "sp_columns", P, |cx, args, _| catalog::sp_columns(cx, "sp_columns", args).map(|_| 0)),
    proc(-175, "sp_columns_100", P, |cx, args, _| catalog::sp_columns(cx, "sp_columns_100", args).map(|_| 0)),
    proc(-176, "sp_databases", P, |cx, args, _| catalog::sp_databases(cx, args).map(|_| 0)),
    proc(-177, "sp_pkeys", P, |cx, args, _| catalog::sp_pkeys(cx, args).map(|_| 0)),
    proc(-178, "sp_fkeys", P, |cx, args, _| catalog::sp_fkeys(cx, args).map(|_| 0)),
    // Run before the registry existed, not listed then: listed now, with new ids.
    proc(-190, "sp_helptext", P, |cx, args, _| catalog::sp_helptext(cx, args).map(|_| 0)),
    proc(-191, "sp_reset_connection", X, |_, _, _| Ok(0)),
    proc(-192, "sp_who2", P, |_, _, _| Err(procs::not_yet("sp_who2"))),
    proc(-193, "sp_server_info", P, |_, _, _| Err(procs::not_yet("sp_server_info"))),
    proc(-194, "sp_datatype_info", P, |_, _, _| Err(procs::not_yet("sp_datatype_info"))),
    proc(-197, "sp_sequence_get_range", P, crate::exec::sequence::sp_sequence_get_range),
];
