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
//! | `dm_tran.rs` | sys.dm_tran_locks, dm_tran_session_transactions, dm_tran_active_transactions |
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

use types::{Length, SqlError, SqlType, Value};

use crate::exec::expr::Row;
use crate::exec::plan::OutCol;
use crate::exec::Cx;
use crate::host::DbId;

mod catalog;
mod dm_db;
mod dm_exec;
mod dm_io;
mod dm_os;
mod dm_tran;
mod information_schema;
mod procs;
mod security;

/// A column of a system view or table function.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub name: &'static str,
    pub ty: SqlType,
    pub nullable: bool,
}

/// A column (`nullable` as sys.all_columns shows it).
pub const fn col(name: &'static str, ty: SqlType, nullable: bool) -> Col {
    Col { name, ty, nullable }
}

pub const INT: SqlType = SqlType::Int;
pub const BIGINT: SqlType = SqlType::BigInt;
pub const SMALLINT: SqlType = SqlType::SmallInt;
pub const TINYINT: SqlType = SqlType::TinyInt;
pub const BIT: SqlType = SqlType::Bit;
pub const DATETIME: SqlType = SqlType::DateTime;
pub const GUID: SqlType = SqlType::UniqueIdentifier;

pub const fn nv(n: u16) -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(n) }
}

pub const fn vc(n: u16) -> SqlType {
    SqlType::VarChar { len: Length::Bounded(n) }
}

pub const fn vb(n: u16) -> SqlType {
    SqlType::VarBinary { len: Length::Bounded(n) }
}

/// The schema a system object belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schema {
    Sys,
    InformationSchema,
}

impl Schema {
    pub fn id(self) -> i32 {
        match self {
            Schema::Sys => 4,
            Schema::InformationSchema => 3,
        }
    }

    /// The schema's name as SQL Server spells it.
    pub fn name(self) -> &'static str {
        match self {
            Schema::Sys => "sys",
            Schema::InformationSchema => "INFORMATION_SCHEMA",
        }
    }

    pub fn of(name: &str) -> Option<Schema> {
        if name.eq_ignore_ascii_case("sys") {
            Some(Schema::Sys)
        } else if name.eq_ignore_ascii_case("INFORMATION_SCHEMA") {
            Some(Schema::InformationSchema)
        } else {
            None
        }
    }
}

/// What kind of object it is (sys.objects' type and type_desc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    View,
    TableFunction,
    Procedure,
    ExtendedProcedure,
}

impl ObjectKind {
    pub fn type_code(self) -> &'static str {
        match self {
            ObjectKind::View => "V",
            ObjectKind::TableFunction => "IF",
            ObjectKind::Procedure => "P",
            ObjectKind::ExtendedProcedure => "X",
        }
    }

    pub fn type_desc(self) -> &'static str {
        match self {
            ObjectKind::View => "VIEW",
            ObjectKind::TableFunction => "SQL_INLINE_TABLE_VALUED_FUNCTION",
            ObjectKind::Procedure => "SQL_STORED_PROCEDURE",
            ObjectKind::ExtendedProcedure => "EXTENDED_STORED_PROCEDURE",
        }
    }
}

/// Who may read an object's rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Everyone (the rows function may still filter by session, see [`visible`]).
    Public,
    /// VIEW SERVER STATE, which only sysadmin logins hold in Mesquite: Msg 300 otherwise.
    ServerState,
}

/// What a rows function is called with: the database the statement runs in, a table
/// function's arguments (NULL = None) and the columns its consumer reads.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub db: DbId,
    pub args: [Option<i32>; 2],
    /// The columns read (None: all). A rows function may leave the others NULL, and when
    /// none is read may return empty rows (the caller pads them): seed 002 inserts
    /// `TOP (1000) sysdatetime() FROM sys.all_columns`, a thousand rows of which nothing
    /// is read.
    pub need: Option<&'a [bool]>,
}

/// Produces an object's rows (each of its columns' width, or empty, see [`Call::need`])
/// when a query opens it.
pub type RowsFn = fn(&mut Cx, &Call<'_>) -> Result<Vec<Row>, SqlError>;

/// A system view or table function as a plan reads it: the object, the database whose
/// catalog it reads, and a table function's arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub object: ObjectRef,
    pub db: DbId,
    pub args: [Option<i32>; 2],
}

impl View {
    /// The view's rows for a consumer reading the `need` columns.
    pub fn rows(&self, cx: &mut Cx, need: Option<&[bool]>) -> Result<Vec<Row>, SqlError> {
        self.object.0.rows(cx, &Call { db: self.db, args: self.args, need })
    }
}

/// Runs a system procedure with its arguments (and the line of the EXEC, for messages);
/// returns its status.
pub type ProcFn = fn(&mut Cx, &[crate::exec::procs::ArgValue], u32) -> Result<i32, SqlError>;

/// An object's columns.
#[derive(Clone, Copy)]
pub enum Columns {
    /// As consecutive runs (views that share runs of columns list them once).
    Runs(&'static [&'static [Col]]),
    /// Built by a function (views whose column lists are assembled from shared parts in
    /// `exec/catalog_views.rs`).
    Built(fn() -> Vec<OutCol>),
}

/// What an object does.
#[derive(Clone, Copy)]
pub enum Body {
    /// A view's or table function's rows.
    Rows(RowsFn),
    /// A procedure.
    Proc(ProcFn),
}

/// A system view or table function.
pub struct SystemObject {
    /// Negative and stable: existing ids never change, a new object takes an unused one.
    pub id: i32,
    pub schema: Schema,
    pub name: &'static str,
    pub kind: ObjectKind,
    pub access: Access,
    pub columns: Columns,
    /// A table function's parameters (integer arguments, evaluated when the statement is
    /// bound).
    pub params: &'static [&'static str],
    pub body: Body,
}

impl SystemObject {
    /// The columns as the executor's output columns.
    pub fn out_cols(&self) -> Vec<OutCol> {
        self.columns().to_vec()
    }

    /// The columns, built once per object (sys.all_columns lists them per query, and
    /// seed 002 reads it once per transaction).
    pub fn columns(&self) -> &'static [OutCol] {
        index().columns.get(&self.id).map_or(&[], Vec::as_slice)
    }

    fn build_columns(&self) -> Vec<OutCol> {
        match self.columns {
            Columns::Runs(runs) => {
                runs.iter().flat_map(|run| run.iter()).map(|c| OutCol::new(c.name, c.ty, c.nullable)).collect()
            }
            Columns::Built(build) => build(),
        }
    }

    /// The object's rows, after its access check (none for a procedure).
    pub fn rows(&self, cx: &mut Cx, call: &Call<'_>) -> Result<Vec<Row>, SqlError> {
        if self.access == Access::ServerState && !cx.is_sysadmin() {
            return Err(view_server_state_denied());
        }
        match self.body {
            Body::Rows(rows) => rows(cx, call),
            Body::Proc(_) => Ok(Vec::new()),
        }
    }

    /// The procedure this object is, if it is one.
    pub fn procedure(&self) -> Option<ProcFn> {
        match self.body {
            Body::Proc(f) => Some(f),
            Body::Rows(_) => None,
        }
    }
}

impl std::fmt::Debug for SystemObject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}.{} ({})", self.schema, self.name, self.id)
    }
}

/// A registered object, compared by id (plans hold it).
#[derive(Clone, Copy)]
pub struct ObjectRef(pub &'static SystemObject);

impl PartialEq for ObjectRef {
    fn eq(&self, other: &ObjectRef) -> bool {
        self.0.id == other.0.id
    }
}

impl Eq for ObjectRef {}

impl std::fmt::Debug for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
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

/// Msg 300: a server-level object without VIEW SERVER STATE.
pub fn view_server_state_denied() -> SqlError {
    SqlError::new(300, 14, 1, "VIEW SERVER STATE permission was denied on object 'server', database 'master'.")
}

/// Whether the caller may see session `session_id`'s rows: its own, or every session
/// with VIEW SERVER STATE (sysadmin), as the session DMVs filter in SQL Server.
pub fn visible(cx: &Cx, session_id: i32) -> bool {
    session_id == cx.state.spid || cx.is_sysadmin()
}

// Values as the DMVs show them.

pub fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

pub fn big(v: i64) -> Value {
    Value::BigInt(v)
}

/// An unsigned count as bigint (saturating).
pub fn big_u(v: u64) -> Value {
    Value::BigInt(v.min(i64::MAX as u64) as i64)
}

/// An int column from a millisecond count (saturating, as SQL Server's int columns do
/// not wrap).
pub fn int_ms(v: i64) -> Value {
    Value::Int(v.clamp(0, i64::from(i32::MAX)) as i32)
}

/// A point in time as a datetime value (the executor's clock is UTC, as GETDATE()).
pub fn datetime_of(t: std::time::SystemTime) -> Value {
    let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    // 1970-01-01 is day 25,567 after 1900-01-01; datetime ticks are 1/300 s.
    let days = (d.as_secs() / 86_400) as i32 + 25_567;
    let ms_of_day = (d.as_millis() % 86_400_000) as u64;
    Value::DateTime { days, ticks: (ms_of_day * 300 / 1000) as u32 }
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
