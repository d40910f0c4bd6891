//! The system-object registry: the system views, table-valued functions and procedures
//! Mesquite implements, each defined once, with its schema, name, object id, kind,
//! columns (SQL Server's names, types and order), who may read it, and the function that
//! produces its rows. One file per family:
//!
//! | file | objects |
//! |---|---|
//! | `catalog.rs` | sys.objects, sys.columns and their kin, sys.tables, views, procedures, indexes, types, databases, schemas, the file views, the views over constraints, modules, parameters, triggers, storage and configuration, fn_helpcollations |
//! | `information_schema.rs` | the INFORMATION_SCHEMA views |
//! | `dm_os.rs` | sys.dm_os_wait_stats, dm_os_performance_counters, dm_os_waiting_tasks, dm_os_sys_info, dm_os_schedulers |
//! | `dm_exec.rs` | sys.dm_exec_sessions, dm_exec_requests, dm_exec_session_wait_stats, dm_exec_connections, dm_exec_query_memory_grants |
//! | `dm_tran.rs` | the sys.dm_tran_* views: locks, session and active transactions |
//! | `dm_io.rs` | sys.dm_io_virtual_file_stats(db, file) |
//! | `dm_db.rs` | sys.dm_db_log_space_usage |
//! | `procs.rs` | the system procedures (sp_executesql, sp_prepare, ..., the ODBC catalog procedures) |
//! | `security.rs` | sys.server_principals, sql_logins, server_role_members, database_principals, database_role_members, database_permissions |
//!
//! Name resolution (`sys.x` in a FROM clause), OBJECT_ID and OBJECT_NAME of system
//! objects, sys.system_objects, sys.all_objects, sys.all_columns, sys.system_columns,
//! sys.all_parameters and docs/system-objects.md read this registry, and EXECUTE finds
//! system procedures in it.
//!
//! Adding a DMV: one [`SystemObject`] in its family's `OBJECTS` (a new, unused id), its
//! columns and its rows function; engine state comes through one `Host` method. Adding
//! a system procedure: one entry in `procs.rs` whose [`Body::Proc`] runs it.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::exec::plan::OutCol;

mod catalog;
mod dm_db;
mod dm_exec;
mod dm_io;
mod dm_os;
mod dm_tran;
mod information_schema;
pub(crate) mod object;
mod procs;
mod security;
pub(crate) mod view;

pub use object::*;

impl SystemObject {
    pub fn out_cols(&self) -> Vec<OutCol> {
        self.columns().to_vec()
    }

    /// The columns, built once per object (sys.all_columns lists them per query, and
    /// seed 002 reads it once per transaction).
    pub fn columns(&self) -> &'static [OutCol] {
        index().columns.get(&self.id).map_or(&[], Vec::as_slice)
    }
}

/// Every family's objects.
const FAMILIES: &[&[SystemObject]] = &[
    dm_os::OBJECTS,
    dm_exec::OBJECTS,
    dm_tran::OBJECTS,
    dm_io::OBJECTS,
    dm_db::OBJECTS,
    security::OBJECTS,
    procs::OBJECTS,
    catalog::OBJECTS,
    information_schema::OBJECTS,
];

struct Index {
    by_name: HashMap<(i32, String), &'static SystemObject>,
    by_id: HashMap<i32, &'static SystemObject>,
    /// Every object, in id order (-100 first): sys.system_objects' order.
    in_id_order: Vec<&'static SystemObject>,
    columns: HashMap<i32, Vec<OutCol>>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut by_name = HashMap::new();
        let mut by_id = HashMap::new();
        let mut columns = HashMap::new();
        for o in FAMILIES.iter().flat_map(|f| f.iter()) {
            by_name.insert((o.schema.id(), o.name.to_ascii_lowercase()), o);
            by_id.insert(o.id, o);
            columns.insert(o.id, o.build_columns());
        }
        let mut in_id_order: Vec<&'static SystemObject> = FAMILIES.iter().flat_map(|f| f.iter()).collect();
        in_id_order.sort_by_key(|o| std::cmp::Reverse(o.id));
        Index { by_name, by_id, in_id_order, columns }
    })
}

/// The registered object `schema.name` (case-insensitive).
pub fn lookup(schema: &str, name: &str) -> Option<&'static SystemObject> {
    let schema = Schema::of(schema)?;
    index().by_name.get(&(schema.id(), name.to_ascii_lowercase())).copied()
}

/// The registered object with this id.
pub fn by_id(id: i32) -> Option<&'static SystemObject> {
    index().by_id.get(&id).copied()
}

/// Every registered object, in id order (-100 first).
pub fn all() -> impl Iterator<Item = &'static SystemObject> {
    index().in_id_order.iter().copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_names_are_unique_and_views_have_columns() {
        let mut ids = std::collections::HashSet::new();
        let mut names = std::collections::HashSet::new();
        for o in all() {
            assert!(o.id < 0, "{o:?}: system object ids are negative");
            assert!(ids.insert(o.id), "{o:?}: id used twice");
            assert!(names.insert((o.schema, o.name.to_ascii_lowercase())), "{o:?}: name used twice");
            let procedure = matches!(o.kind, ObjectKind::Procedure | ObjectKind::ExtendedProcedure);
            assert_eq!(procedure, o.procedure().is_some(), "{o:?}: procedures run, views have rows");
            assert!(procedure || !o.out_cols().is_empty(), "{o:?}: no columns");
            assert!(o.params.is_empty() || o.kind == ObjectKind::TableFunction, "{o:?}: parameters");
            assert!(lookup(if o.schema == Schema::Sys { "SYS" } else { "information_schema" }, &o.name.to_uppercase())
                .is_some_and(|f| f.id == o.id));
            assert_eq!(by_id(o.id).map(|f| f.name), Some(o.name));
        }
    }
}

/// docs/system-objects.md: every system object with its type and columns, generated
/// from the registry (the test below
/// keeps the file current; `MESQUITE_BLESS=1` rewrites it).
pub fn system_objects_markdown() -> String {
    let mut out = String::from(
        "# System objects\n\nEvery system view, table-valued function and procedure sys.system_objects lists, with\nits object id and columns (SQL Server's names, in SQL Server's order); compatibility.md\nsays which procedures run (sp_help, sp_helpdb, sp_who, sp_who2, sp_readerrorlog,\nsp_server_info and sp_datatype_info are listed but not yet implemented). Generated from the code by `MESQUITE_BLESS=1 cargo test -p sql\nsystem_objects_doc`; do not edit.\n\n| object | id | type | columns |\n|---|---|---|---|\n",
    );
    let mut all: Vec<_> = all().collect();
    all.sort_by(|a, b| (a.schema.id(), a.name.to_ascii_lowercase()).cmp(&(b.schema.id(), b.name.to_ascii_lowercase())));
    for o in all {
        let schema = o.schema.name();
        let cols: Vec<&str> = o.columns().iter().map(|c| c.name.as_str()).collect();
        out.push_str(&format!(
            "| {schema}.{} | {} | {} | {} |\n",
            o.name,
            o.id,
            o.kind.type_desc(),
            if cols.is_empty() { "-".to_string() } else { cols.join(", ") }
        ));
    }
    out
}

#[cfg(test)]
mod doc_tests {
    #[test]
    fn system_objects_doc_is_current() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/system-objects.md");
        let want = super::system_objects_markdown();
        if std::env::var("MESQUITE_BLESS").is_ok_and(|v| !v.is_empty()) {
            std::fs::write(&path, &want).unwrap();
            return;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            have == want,
            "docs/system-objects.md is out of date: run MESQUITE_BLESS=1 cargo test -p sql system_objects_doc"
        );
    }
}
