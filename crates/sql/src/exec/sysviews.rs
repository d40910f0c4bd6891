//! Catalog views (sys.databases, sys.schemas, sys.objects, sys.all_objects,
//! sys.system_objects, sys.tables, sys.views, sys.procedures, sys.columns,
//! sys.all_columns, sys.system_columns, sys.indexes, sys.types,
//! sys.master_files, sys.database_files, INFORMATION_SCHEMA.TABLES, COLUMNS and VIEWS) and
//! built-in table functions (STRING_SPLIT, GENERATE_SERIES), computed from the catalog
//! when a query opens them. Column names and types are SQL Server's (a subset of the
//! columns of the wide views).

use std::sync::Arc;

use types::SqlError;
use types::{Length, SqlType, Value};

use super::expr::Row;
use super::plan::{OutCol, Plan, ScanNode};
use super::query::Binder;
use super::{errors, Cx};
use crate::ast::*;
use crate::catalog::{IndexKind, ObjectBody};
use crate::host::DbId;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    Databases,
    Schemas,
    Objects,
    /// sys.all_objects: user objects and the system objects of [`system_objects`].
    AllObjects,
    /// sys.system_objects: the system objects only.
    SystemObjects,
    Tables,
    Views,
    Procedures,
    Columns,
    /// sys.all_columns: user columns and the columns of the system views.
    AllColumns,
    /// sys.system_columns: the columns of the system views only.
    SystemColumns,
    Indexes,
    Types,
    MasterFiles,
    DatabaseFiles,
    IsTables,
    IsColumns,
    IsViews,
    /// A dynamic management view or function (see [`super::dmv`]).
    Dmv(super::dmv::DmvKind),
    /// A principal or permission view (see [`super::security`]).
    Security(super::security::SecurityView),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub kind: ViewKind,
    /// The database whose catalog the view reads.
    pub db: DbId,
    /// A table function's arguments (NULL = None); unused by views.
    pub args: [Option<i32>; 2],
}

fn sysname() -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(128) }
}

fn nv(n: u16) -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(n) }
}

fn cols(spec: &[(&str, SqlType, bool)]) -> Vec<OutCol> {
    spec.iter().map(|(n, t, null)| OutCol::new(*n, *t, *null)).collect()
}

fn columns_of(kind: ViewKind) -> Vec<OutCol> {
    if let ViewKind::Dmv(d) = kind {
        return super::dmv::columns(d);
    }
    if let ViewKind::Security(v) = kind {
        return super::security::columns(v);
    }
    let int = SqlType::Int;
    let bit = SqlType::Bit;
    let dt = SqlType::DateTime;
    let ch2 = SqlType::Char { len: 2 };
    let ti = SqlType::TinyInt;
    let si = SqlType::SmallInt;
    match kind {
        ViewKind::Databases => cols(&[
            ("name", sysname(), false),
            ("database_id", int, false),
            ("create_date", dt, false),
            ("compatibility_level", ti, false),
            ("collation_name", sysname(), true),
            ("is_read_only", bit, true),
            ("state", ti, true),
            ("state_desc", nv(60), true),
            ("recovery_model", ti, true),
            ("recovery_model_desc", nv(60), true),
            ("page_verify_option", ti, true),
            ("page_verify_option_desc", nv(60), true),
            ("target_recovery_time_in_seconds", int, true),
            ("delayed_durability", int, true),
            ("delayed_durability_desc", nv(60), true),
        ]),
        ViewKind::Schemas => {
            cols(&[("name", sysname(), false), ("schema_id", int, false), ("principal_id", int, true)])
        }
        ViewKind::Objects
        | ViewKind::AllObjects
        | ViewKind::SystemObjects
        | ViewKind::Tables
        | ViewKind::Views
        | ViewKind::Procedures => cols(&[
            ("name", sysname(), false),
            ("object_id", int, false),
            ("principal_id", int, true),
            ("schema_id", int, false),
            ("parent_object_id", int, false),
            ("type", ch2, true),
            ("type_desc", nv(60), true),
            ("create_date", dt, false),
            ("modify_date", dt, false),
            ("is_ms_shipped", bit, false),
        ]),
        ViewKind::Columns | ViewKind::AllColumns | ViewKind::SystemColumns => cols(&[
            ("object_id", int, false),
            ("name", sysname(), true),
            ("column_id", int, false),
            ("system_type_id", ti, false),
            ("user_type_id", int, false),
            ("max_length", si, false),
            ("precision", ti, false),
            ("scale", ti, false),
            ("collation_name", sysname(), true),
            ("is_nullable", bit, true),
            ("is_identity", bit, false),
            ("is_computed", bit, false),
            ("is_sparse", bit, false),
        ]),
        ViewKind::Indexes => cols(&[
            ("object_id", int, false),
            ("name", sysname(), true),
            ("index_id", int, false),
            ("type", ti, false),
            ("type_desc", nv(60), true),
            ("is_unique", bit, true),
            ("is_primary_key", bit, true),
            ("is_unique_constraint", bit, true),
            ("has_filter", bit, true),
            ("filter_definition", SqlType::NVarChar { len: Length::Max }, true),
        ]),
        ViewKind::Types => cols(&[
            ("name", sysname(), false),
            ("system_type_id", ti, false),
            ("user_type_id", int, false),
            ("schema_id", int, false),
            ("max_length", si, false),
            ("precision", ti, false),
            ("scale", ti, false),
            ("is_nullable", bit, true),
            ("is_user_defined", bit, false),
        ]),
        ViewKind::MasterFiles | ViewKind::DatabaseFiles => cols(&[
            ("database_id", int, false),
            ("file_id", int, false),
            ("type", ti, false),
            ("type_desc", nv(60), true),
            ("name", sysname(), false),
            ("physical_name", nv(260), false),
            ("state_desc", nv(60), true),
            ("size", int, false),
            ("max_size", int, false),
            ("growth", int, false),
            ("is_percent_growth", bit, false),
        ]),
        ViewKind::IsTables => cols(&[
            ("TABLE_CATALOG", sysname(), true),
            ("TABLE_SCHEMA", sysname(), true),
            ("TABLE_NAME", sysname(), false),
            ("TABLE_TYPE", SqlType::VarChar { len: Length::Bounded(10) }, true),
        ]),
        ViewKind::IsViews => cols(&[
            ("TABLE_CATALOG", sysname(), true),
            ("TABLE_SCHEMA", sysname(), true),
            ("TABLE_NAME", sysname(), false),
            ("VIEW_DEFINITION", SqlType::NVarChar { len: Length::Bounded(4000) }, true),
            ("CHECK_OPTION", SqlType::VarChar { len: Length::Bounded(7) }, true),
            ("IS_UPDATABLE", SqlType::VarChar { len: Length::Bounded(2) }, true),
        ]),
        ViewKind::IsColumns => cols(&[
            ("TABLE_CATALOG", sysname(), true),
            ("TABLE_SCHEMA", sysname(), true),
            ("TABLE_NAME", sysname(), false),
            ("COLUMN_NAME", sysname(), true),
            ("ORDINAL_POSITION", int, true),
            ("COLUMN_DEFAULT", SqlType::NVarChar { len: Length::Bounded(4000) }, true),
            ("IS_NULLABLE", SqlType::VarChar { len: Length::Bounded(3) }, true),
            ("DATA_TYPE", sysname(), true),
            ("CHARACTER_MAXIMUM_LENGTH", int, true),
            ("NUMERIC_PRECISION", ti, true),
            ("NUMERIC_SCALE", int, true),
            ("DATETIME_PRECISION", si, true),
        ]),
        ViewKind::Dmv(_) | ViewKind::Security(_) => Vec::new(),
    }
}

fn view_kind(schema: &str, name: &str) -> Option<ViewKind> {
    let n = name.to_ascii_lowercase();
    if schema.eq_ignore_ascii_case("INFORMATION_SCHEMA") {
        return match n.as_str() {
            "tables" => Some(ViewKind::IsTables),
            "columns" => Some(ViewKind::IsColumns),
            "views" => Some(ViewKind::IsViews),
            _ => None,
        };
    }
    if !schema.eq_ignore_ascii_case("sys") {
        return None;
    }
    Some(match n.as_str() {
        "databases" => ViewKind::Databases,
        "schemas" => ViewKind::Schemas,
        "objects" => ViewKind::Objects,
        "all_objects" => ViewKind::AllObjects,
        "system_objects" => ViewKind::SystemObjects,
        "tables" => ViewKind::Tables,
        "views" => ViewKind::Views,
        "procedures" => ViewKind::Procedures,
        "columns" => ViewKind::Columns,
        "all_columns" => ViewKind::AllColumns,
        "system_columns" => ViewKind::SystemColumns,
        "indexes" => ViewKind::Indexes,
        "types" => ViewKind::Types,
        "master_files" => ViewKind::MasterFiles,
        "database_files" => ViewKind::DatabaseFiles,
        other => match super::security::view_kind(other) {
            Some(v) => ViewKind::Security(v),
            None => ViewKind::Dmv(super::dmv::view_kind(other)?),
        },
    })
}

/// A system object as sys.all_objects and sys.system_objects list it.
pub struct SystemObject {
    pub name: &'static str,
    pub schema_id: i32,
    /// Negative, as SQL Server's system object ids are; stable because new names are only
    /// ever appended to [`SYSTEM_OBJECT_NAMES`].
    pub object_id: i32,
    pub type_code: &'static str,
    pub type_desc: &'static str,
    /// The view's or table function's columns; empty for procedures.
    pub columns: Vec<OutCol>,
}

const SYS_SCHEMA_ID: i32 = 4;
const INFORMATION_SCHEMA_ID: i32 = 3;

/// Every system object Mesquite implements, in id order: (schema id, name, type).
/// V = view, IF = inline table-valued function, P = procedure, X = extended procedure.
const SYSTEM_OBJECT_NAMES: &[(i32, &str, &str)] = &[
    (SYS_SCHEMA_ID, "databases", "V"),
    (SYS_SCHEMA_ID, "schemas", "V"),
    (SYS_SCHEMA_ID, "objects", "V"),
    (SYS_SCHEMA_ID, "all_objects", "V"),
    (SYS_SCHEMA_ID, "system_objects", "V"),
    (SYS_SCHEMA_ID, "tables", "V"),
    (SYS_SCHEMA_ID, "views", "V"),
    (SYS_SCHEMA_ID, "procedures", "V"),
    (SYS_SCHEMA_ID, "columns", "V"),
    (SYS_SCHEMA_ID, "all_columns", "V"),
    (SYS_SCHEMA_ID, "system_columns", "V"),
    (SYS_SCHEMA_ID, "indexes", "V"),
    (SYS_SCHEMA_ID, "types", "V"),
    (SYS_SCHEMA_ID, "master_files", "V"),
    (SYS_SCHEMA_ID, "database_files", "V"),
    (SYS_SCHEMA_ID, "server_principals", "V"),
    (SYS_SCHEMA_ID, "sql_logins", "V"),
    (SYS_SCHEMA_ID, "server_role_members", "V"),
    (SYS_SCHEMA_ID, "database_principals", "V"),
    (SYS_SCHEMA_ID, "database_role_members", "V"),
    (SYS_SCHEMA_ID, "database_permissions", "V"),
    (SYS_SCHEMA_ID, "dm_os_wait_stats", "V"),
    (SYS_SCHEMA_ID, "dm_exec_session_wait_stats", "V"),
    (SYS_SCHEMA_ID, "dm_exec_sessions", "V"),
    (SYS_SCHEMA_ID, "dm_exec_requests", "V"),
    (SYS_SCHEMA_ID, "dm_os_performance_counters", "V"),
    (SYS_SCHEMA_ID, "dm_io_virtual_file_stats", "IF"),
    (INFORMATION_SCHEMA_ID, "TABLES", "V"),
    (INFORMATION_SCHEMA_ID, "COLUMNS", "V"),
    (INFORMATION_SCHEMA_ID, "VIEWS", "V"),
    (SYS_SCHEMA_ID, "sp_executesql", "X"),
    (SYS_SCHEMA_ID, "sp_prepare", "X"),
    (SYS_SCHEMA_ID, "sp_execute", "X"),
    (SYS_SCHEMA_ID, "sp_prepexec", "X"),
    (SYS_SCHEMA_ID, "sp_unprepare", "X"),
    (SYS_SCHEMA_ID, "sp_flush_log", "P"),
    (SYS_SCHEMA_ID, "sp_readerrorlog", "P"),
    (SYS_SCHEMA_ID, "sp_who", "P"),
    (SYS_SCHEMA_ID, "sp_help", "P"),
    (SYS_SCHEMA_ID, "sp_helpdb", "P"),
    (SYS_SCHEMA_ID, "sp_tables", "P"),
    (SYS_SCHEMA_ID, "sp_columns", "P"),
];

/// The id of system object `schema.name` (OBJECT_ID('sys.objects')).
pub fn system_object_id(schema: &str, name: &str) -> Option<i32> {
    let schema_id = if schema.eq_ignore_ascii_case("sys") {
        SYS_SCHEMA_ID
    } else if schema.eq_ignore_ascii_case("INFORMATION_SCHEMA") {
        INFORMATION_SCHEMA_ID
    } else {
        return None;
    };
    SYSTEM_OBJECT_NAMES
        .iter()
        .position(|&(sid, n, _)| sid == schema_id && n.eq_ignore_ascii_case(name))
        .map(|i| -100 - i as i32)
}

/// The name of the system object with this (negative) id (OBJECT_NAME(-102)).
pub fn system_object_name(id: i32) -> Option<&'static str> {
    let i = usize::try_from(-100i64 - i64::from(id)).ok()?;
    SYSTEM_OBJECT_NAMES.get(i).map(|&(_, n, _)| n)
}

/// The system objects with their columns, built from the same column lists the views
/// themselves return, so sys.all_columns can never disagree with a `SELECT *`.
pub fn system_objects() -> Vec<SystemObject> {
    SYSTEM_OBJECT_NAMES
        .iter()
        .enumerate()
        .map(|(i, &(schema_id, name, type_code))| {
            let schema = if schema_id == SYS_SCHEMA_ID { "sys" } else { "INFORMATION_SCHEMA" };
            let columns = match type_code {
                "V" => view_kind(schema, name).map(columns_of).unwrap_or_default(),
                "IF" => super::dmv::columns(super::dmv::DmvKind::VirtualFileStats),
                _ => Vec::new(),
            };
            let mut columns = columns;
            if name == "database_files" {
                columns.remove(0);
            }
            let type_desc = match type_code {
                "V" => "VIEW",
                "IF" => "SQL_INLINE_TABLE_VALUED_FUNCTION",
                "X" => "EXTENDED_STORED_PROCEDURE",
                _ => "SQL_STORED_PROCEDURE",
            };
            SystemObject { name, schema_id, object_id: -100 - i as i32, type_code, type_desc, columns }
        })
        .collect()
}

/// (system_type_id, max_length, precision, scale) as sys.columns reports a type.
pub fn type_info(ty: &SqlType) -> (u8, i16, u8, u8) {
    match *ty {
        SqlType::Bit => (104, 1, 1, 0),
        SqlType::TinyInt => (48, 1, 3, 0),
        SqlType::SmallInt => (52, 2, 5, 0),
        SqlType::Int => (56, 4, 10, 0),
        SqlType::BigInt => (127, 8, 19, 0),
        SqlType::Decimal { precision, scale } => {
            (106, types::sqltype::decimal_magnitude_len(precision) as i16 + 1, precision, scale)
        }
        SqlType::Numeric { precision, scale } => {
            (108, types::sqltype::decimal_magnitude_len(precision) as i16 + 1, precision, scale)
        }
        SqlType::Money => (60, 8, 19, 4),
        SqlType::SmallMoney => (122, 4, 10, 4),
        SqlType::Real => (59, 4, 24, 0),
        SqlType::Float => (62, 8, 53, 0),
        SqlType::Date => (40, 3, 10, 0),
        SqlType::Time { scale } => (41, 5, 16, scale),
        SqlType::DateTime => (61, 8, 23, 3),
        SqlType::SmallDateTime => (58, 4, 16, 0),
        SqlType::DateTime2 { scale } => (42, 8, 27, scale),
        SqlType::DateTimeOffset { scale } => (43, 10, 34, scale),
        SqlType::Char { len } => (175, len as i16, 0, 0),
        SqlType::VarChar { len } => (
            167,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => n as i16,
            },
            0,
            0,
        ),
        SqlType::NChar { len } => (239, (len as i16).saturating_mul(2), 0, 0),
        SqlType::NVarChar { len } => (
            231,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => (n as i16).saturating_mul(2),
            },
            0,
            0,
        ),
        SqlType::Binary { len } => (173, len as i16, 0, 0),
        SqlType::VarBinary { len } => (
            165,
            match len {
                Length::Max => -1,
                Length::Bounded(n) => n as i16,
            },
            0,
            0,
        ),
        SqlType::UniqueIdentifier => (36, 16, 0, 0),
        SqlType::Xml => (241, -1, 0, 0),
    }
}

fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

fn b(v: bool) -> Value {
    Value::Bit(v)
}

/// The rows of a catalog view.
pub fn rows(view: &View, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let db = view.db;
    let mut out = Vec::new();
    match view.kind {
        ViewKind::Dmv(kind) => return super::dmv::rows(kind, view.args, cx),
        ViewKind::Security(kind) => return super::security::rows(kind, db, cx),
        ViewKind::Databases => {
            for d in cx.host.databases() {
                let rm = match d.recovery_model {
                    "FULL" => 1,
                    "BULK_LOGGED" => 2,
                    _ => 3,
                };
                let dd = match d.delayed_durability {
                    "ALLOWED" => 1,
                    "FORCED" => 2,
                    _ => 0,
                };
                out.push(vec![
                    s(&d.name),
                    Value::Int(i32::from(d.id)),
                    d.create_date.clone(),
                    Value::TinyInt(160),
                    s("SQL_Latin1_General_CP1_CI_AS"),
                    b(d.read_only),
                    Value::TinyInt(0),
                    s(d.state),
                    Value::TinyInt(rm),
                    s(d.recovery_model),
                    Value::TinyInt(2),
                    s(d.page_verify),
                    Value::Int(d.target_recovery_time_seconds),
                    Value::Int(dd),
                    s(d.delayed_durability),
                ]);
            }
        }
        ViewKind::MasterFiles | ViewKind::DatabaseFiles => {
            let dbs: Vec<DbId> = if view.kind == ViewKind::MasterFiles {
                cx.host.databases().iter().map(|d| d.id).collect()
            } else {
                vec![db]
            };
            for d in dbs {
                for f in cx.host.database_files(d) {
                    out.push(vec![
                        Value::Int(i32::from(f.db)),
                        Value::Int(f.file_id),
                        Value::TinyInt(f.type_code),
                        s(if f.type_code == 1 { "LOG" } else { "ROWS" }),
                        s(&f.logical_name),
                        s(&f.physical_name),
                        s("ONLINE"),
                        Value::Int(f.size_pages as i32),
                        Value::Int(f.max_size_pages as i32),
                        Value::Int(f.growth as i32),
                        b(f.growth_is_percent),
                    ]);
                }
            }
            if view.kind == ViewKind::DatabaseFiles {
                for r in &mut out {
                    r.remove(0);
                }
            }
        }
        ViewKind::Types => {
            for (name, ty) in [
                ("bigint", SqlType::BigInt),
                ("binary", SqlType::Binary { len: 8000 }),
                ("bit", SqlType::Bit),
                ("char", SqlType::Char { len: 8000 }),
                ("date", SqlType::Date),
                ("datetime", SqlType::DateTime),
                ("datetime2", SqlType::DateTime2 { scale: 7 }),
                ("datetimeoffset", SqlType::DateTimeOffset { scale: 7 }),
                ("decimal", SqlType::Decimal { precision: 38, scale: 38 }),
                ("float", SqlType::Float),
                ("int", SqlType::Int),
                ("money", SqlType::Money),
                ("nchar", SqlType::NChar { len: 4000 }),
                ("numeric", SqlType::Numeric { precision: 38, scale: 38 }),
                ("nvarchar", SqlType::NVarChar { len: Length::Bounded(4000) }),
                ("real", SqlType::Real),
                ("smalldatetime", SqlType::SmallDateTime),
                ("smallint", SqlType::SmallInt),
                ("smallmoney", SqlType::SmallMoney),
                ("time", SqlType::Time { scale: 7 }),
                ("tinyint", SqlType::TinyInt),
                ("uniqueidentifier", SqlType::UniqueIdentifier),
                ("varbinary", SqlType::VarBinary { len: Length::Bounded(8000) }),
                ("varchar", SqlType::VarChar { len: Length::Bounded(8000) }),
                ("xml", SqlType::Xml),
            ] {
                let (id, len, p, sc) = type_info(&ty);
                out.push(vec![
                    s(name),
                    Value::TinyInt(id),
                    Value::Int(i32::from(id)),
                    Value::Int(4),
                    Value::SmallInt(len),
                    Value::TinyInt(p),
                    Value::TinyInt(sc),
                    b(true),
                    b(false),
                ]);
            }
        }
        _ => {
            let cat = cx.catalog(db)?;
            let g = cat.inner.read();
            let db_name = cx.db_name(db).unwrap_or_default();
            match view.kind {
                ViewKind::Schemas => {
                    for sc in g.schemas.values() {
                        out.push(vec![s(&sc.name), Value::Int(sc.id), Value::Int(sc.principal_id)]);
                    }
                }
                ViewKind::Objects
                | ViewKind::AllObjects
                | ViewKind::SystemObjects
                | ViewKind::Tables
                | ViewKind::Views
                | ViewKind::Procedures => {
                    let user = if view.kind == ViewKind::SystemObjects { None } else { Some(&g.objects) };
                    for o in user.into_iter().flat_map(|m| m.values()) {
                        if db == super::TEMPDB
                            && o.name.starts_with('#')
                            && !o.name.starts_with("##")
                            && view.kind != ViewKind::Objects
                            && view.kind != ViewKind::Tables
                        {
                            continue;
                        }
                        let keep = match view.kind {
                            ViewKind::Tables => matches!(o.body, ObjectBody::Table(_)),
                            ViewKind::Views => matches!(o.body, ObjectBody::View(_)),
                            ViewKind::Procedures => matches!(o.body, ObjectBody::Procedure(_)),
                            _ => true,
                        };
                        if keep {
                            out.push(vec![
                                s(&o.name),
                                Value::Int(o.id),
                                Value::Null,
                                Value::Int(o.schema_id),
                                Value::Int(0),
                                s(&format!("{:<2}", o.body.type_code())),
                                s(o.body.type_desc()),
                                o.create_date.clone(),
                                o.modify_date.clone(),
                                b(false),
                            ]);
                        }
                        if matches!(view.kind, ViewKind::Objects | ViewKind::AllObjects) {
                            if let ObjectBody::Table(t) = &o.body {
                                for (id, name, code, desc) in constraint_rows(t) {
                                    out.push(vec![
                                        s(&name),
                                        Value::Int(id),
                                        Value::Null,
                                        Value::Int(o.schema_id),
                                        Value::Int(o.id),
                                        s(code),
                                        s(desc),
                                        o.create_date.clone(),
                                        o.modify_date.clone(),
                                        b(false),
                                    ]);
                                }
                            }
                        }
                    }
                }
                ViewKind::Columns | ViewKind::AllColumns | ViewKind::SystemColumns => {
                    let user = if view.kind == ViewKind::SystemColumns { None } else { Some(&g.objects) };
                    for o in user.into_iter().flat_map(|m| m.values()) {
                        let ObjectBody::Table(t) = &o.body else { continue };
                        for c in &t.columns {
                            let (id, len, p, sc) = type_info(&c.ty);
                            out.push(vec![
                                Value::Int(o.id),
                                s(&c.name),
                                Value::Int(c.column_id),
                                Value::TinyInt(id),
                                Value::Int(i32::from(id)),
                                Value::SmallInt(len),
                                Value::TinyInt(p),
                                Value::TinyInt(sc),
                                if c.ty.is_character() { s("SQL_Latin1_General_CP1_CI_AS") } else { Value::Null },
                                b(c.nullable),
                                b(c.is_identity),
                                b(c.computed.is_some()),
                                b(c.sparse),
                            ]);
                        }
                    }
                }
                ViewKind::Indexes => {
                    for o in g.objects.values() {
                        let ObjectBody::Table(t) = &o.body else { continue };
                        for ix in &t.indexes {
                            let ty = match ix.kind {
                                IndexKind::Heap => 0,
                                IndexKind::Clustered => 1,
                                IndexKind::Nonclustered => 2,
                            };
                            out.push(vec![
                                Value::Int(o.id),
                                ix.name.as_ref().map(|n| s(n)).unwrap_or(Value::Null),
                                Value::Int(ix.index_id),
                                Value::TinyInt(ty),
                                s(ix.type_desc()),
                                b(ix.unique),
                                b(ix.primary_key.is_some()),
                                b(ix.unique_constraint.is_some()),
                                b(ix.filter.is_some()),
                                ix.filter.as_ref().map(|f| s(f)).unwrap_or(Value::Null),
                            ]);
                        }
                    }
                }
                ViewKind::IsViews => {
                    for o in g.objects.values() {
                        let ObjectBody::View(m) = &o.body else { continue };
                        let schema = g.schemas.get(&o.schema_id).map(|x| x.name.clone()).unwrap_or_default();
                        let def: String = m.definition.chars().take(4000).collect();
                        out.push(vec![s(&db_name), s(&schema), s(&o.name), s(&def), s("NONE"), s("NO")]);
                    }
                }
                ViewKind::IsTables | ViewKind::IsColumns => {
                    for o in g.objects.values() {
                        let table_type = match &o.body {
                            ObjectBody::Table(_) => "BASE TABLE",
                            ObjectBody::View(_) => "VIEW",
                            _ => continue,
                        };
                        let schema = g.schemas.get(&o.schema_id).map(|x| x.name.clone()).unwrap_or_default();
                        if view.kind == ViewKind::IsTables {
                            out.push(vec![s(&db_name), s(&schema), s(&o.name), s(table_type)]);
                            continue;
                        }
                        let ObjectBody::Table(t) = &o.body else { continue };
                        for c in &t.columns {
                            let (char_len, num_p, num_s, dt_p) = is_type_facets(&c.ty);
                            out.push(vec![
                                s(&db_name),
                                s(&schema),
                                s(&o.name),
                                s(&c.name),
                                Value::Int(c.column_id),
                                c.default.as_ref().map(|d| s(&d.definition)).unwrap_or(Value::Null),
                                s(if c.nullable { "YES" } else { "NO" }),
                                s(c.ty.name()),
                                char_len,
                                num_p,
                                num_s,
                                dt_p,
                            ]);
                        }
                    }
                }
                _ => {}
            }
            if matches!(view.kind, ViewKind::AllObjects | ViewKind::SystemObjects) {
                let created = cx.host.databases().first().map(|d| d.create_date.clone()).unwrap_or(Value::Null);
                for o in system_objects() {
                    out.push(vec![
                        s(o.name),
                        Value::Int(o.object_id),
                        Value::Null,
                        Value::Int(o.schema_id),
                        Value::Int(0),
                        s(&format!("{:<2}", o.type_code)),
                        s(o.type_desc),
                        created.clone(),
                        created.clone(),
                        b(true),
                    ]);
                }
            }
            if matches!(view.kind, ViewKind::AllColumns | ViewKind::SystemColumns) {
                for o in system_objects() {
                    for (i, c) in o.columns.iter().enumerate() {
                        let (id, len, p, sc) = type_info(&c.ty);
                        out.push(vec![
                            Value::Int(o.object_id),
                            s(&c.name),
                            Value::Int(i as i32 + 1),
                            Value::TinyInt(id),
                            Value::Int(i32::from(id)),
                            Value::SmallInt(len),
                            Value::TinyInt(p),
                            Value::TinyInt(sc),
                            if c.ty.is_character() { s("SQL_Latin1_General_CP1_CI_AS") } else { Value::Null },
                            b(c.nullable),
                            b(false),
                            b(false),
                            b(false),
                        ]);
                    }
                }
            }
        }
    }
    Ok(out)
}

fn is_type_facets(ty: &SqlType) -> (Value, Value, Value, Value) {
    let int = |n: i64| Value::Int(n as i32);
    match *ty {
        SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => {
            (int(i64::from(len)), Value::Null, Value::Null, Value::Null)
        }
        SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => (
            match len {
                Length::Max => int(-1),
                Length::Bounded(n) => int(i64::from(n)),
            },
            Value::Null,
            Value::Null,
            Value::Null,
        ),
        SqlType::Date => (Value::Null, Value::Null, Value::Null, Value::SmallInt(0)),
        SqlType::DateTime => (Value::Null, Value::Null, Value::Null, Value::SmallInt(3)),
        SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
            (Value::Null, Value::Null, Value::Null, Value::SmallInt(i16::from(scale)))
        }
        _ => {
            let (_, _, p, sc) = type_info(ty);
            if ty.is_numeric() {
                (Value::Null, Value::TinyInt(p), Value::Int(i32::from(sc)), Value::Null)
            } else {
                (Value::Null, Value::Null, Value::Null, Value::Null)
            }
        }
    }
}

fn constraint_rows(t: &crate::catalog::Table) -> Vec<(i32, String, &'static str, &'static str)> {
    let mut v = Vec::new();
    for ix in &t.indexes {
        if let Some(id) = ix.primary_key {
            v.push((id, ix.name.clone().unwrap_or_default(), "PK", "PRIMARY_KEY_CONSTRAINT"));
        }
        if let Some(id) = ix.unique_constraint {
            v.push((id, ix.name.clone().unwrap_or_default(), "UQ", "UNIQUE_CONSTRAINT"));
        }
    }
    for c in &t.columns {
        if let Some(d) = &c.default {
            v.push((d.object_id, d.name.clone(), "D ", "DEFAULT_CONSTRAINT"));
        }
    }
    for c in &t.checks {
        v.push((c.object_id, c.name.clone(), "C ", "CHECK_CONSTRAINT"));
    }
    for f in &t.foreign_keys {
        v.push((f.object_id, f.name.clone(), "F ", "FOREIGN_KEY_CONSTRAINT"));
    }
    v
}

/// Built-in table-valued functions; None when `name` is not one.
pub fn table_function(name: &str, args: &[Expr], b: &mut Binder) -> Result<Option<(Plan, Vec<OutCol>)>, SqlError> {
    match name {
        "string_split" => {
            if args.len() < 2 {
                return Err(SqlError::new(174, 15, 1, "The string_split function requires 2 argument(s)."));
            }
            let s0 = b.bind_expr(&args[0], &super::query::Scope::default())?;
            let s1 = b.bind_expr(&args[1], &super::query::Scope::default())?;
            let v0 = s0.eval(&[], b.cx)?;
            let v1 = s1.eval(&[], b.cx)?;
            let text = super::expr::as_text(&v0, &s0.ty());
            let sep = super::expr::as_text(&v1, &s1.ty()).unwrap_or_default();
            if sep.chars().count() != 1 {
                return Err(SqlError::new(
                    214,
                    16,
                    1,
                    "Procedure expects parameter 'separator' of type 'nchar(1)/nvarchar(1)'.",
                ));
            }
            let ty = if s0.ty().is_unicode() {
                SqlType::NVarChar { len: Length::Bounded(4000) }
            } else {
                SqlType::VarChar { len: Length::Bounded(8000) }
            };
            let rows: Vec<Row> = match text {
                Some(t) => t.split(sep.as_str()).map(|p| vec![Value::String(p.to_string())]).collect(),
                None => Vec::new(),
            };
            let cols = vec![OutCol::new("value", ty, false)];
            Ok(Some((Plan::Rows { rows: Arc::new(rows), cols: cols.clone() }, cols)))
        }
        "generate_series" => {
            let mut vals = Vec::new();
            for a in args {
                let e = b.bind_expr(a, &super::query::Scope::default())?;
                let v = e.eval(&[], b.cx)?;
                vals.push(super::table::int_of(&v).unwrap_or(0) as i64);
            }
            let (start, stop, step) = (
                vals.first().copied().unwrap_or(0),
                vals.get(1).copied().unwrap_or(0),
                vals.get(2).copied().unwrap_or(1),
            );
            if step == 0 {
                return Err(SqlError::new(
                    4199,
                    16,
                    1,
                    "Argument value 0 is invalid for argument 3 of generate_series function.",
                ));
            }
            let mut rows = Vec::new();
            let mut x = start;
            while (step > 0 && x <= stop) || (step < 0 && x >= stop) {
                rows.push(vec![Value::Int(x as i32)]);
                x += step;
                if rows.len() > 100_000_000 {
                    break;
                }
            }
            let cols = vec![OutCol::new("value", SqlType::Int, false)];
            Ok(Some((Plan::Rows { rows: Arc::new(rows), cols: cols.clone() }, cols)))
        }
        _ => super::dmv::table_function(name, args, b),
    }
}

impl Binder<'_, '_> {
    /// A named table source: a table, a view, or a catalog view.
    pub fn table_source(&mut self, name: &ObjectName) -> Result<(Plan, Vec<OutCol>), SqlError> {
        // Catalog views.
        if let Some(schema) = name.schema() {
            if let Some(kind) = view_kind(&schema.value, &name.name().value) {
                let db = match name.database() {
                    Some(d) => self.cx.db_id_by_name(&d.value).ok_or_else(|| errors::invalid_object(&d.value))?,
                    None => self.cx.state.database,
                };
                let cols = columns_of(kind);
                let mut cols = cols;
                if kind == ViewKind::DatabaseFiles {
                    cols.remove(0);
                }
                return Ok((Plan::Virtual { view: View { kind, db, args: [None, None] }, cols: cols.clone() }, cols));
            }
        }
        let Some((db, obj)) = self.cx.resolve_object(name)? else {
            return Err(errors::invalid_object(&display(name)));
        };
        if matches!(obj.body, ObjectBody::Table(_) | ObjectBody::View(_)) {
            super::security::check_object(self.cx, db, &obj, "SELECT")?;
        }
        match &obj.body {
            ObjectBody::Table(_) => {
                let t = self.cx.table_info(db, &obj)?;
                let with_locator = self.cx.dml_target == Some((db, obj.id));
                let mut cols = t.out_cols();
                if with_locator {
                    cols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: Length::Bounded(900) }, false));
                }
                Ok((
                    Plan::Scan(ScanNode {
                        table: t,
                        index: 0,
                        range: None,
                        filter: None,
                        reverse: false,
                        with_locator,
                    }),
                    cols,
                ))
            }
            ObjectBody::View(m) => {
                let def = super::parse_module(&m.definition)?;
                let StatementKind::CreateView(v) = def.kind else {
                    return Err(errors::invalid_object(&obj.name));
                };
                let saved_outer = std::mem::take(&mut self.outer);
                let saved_db = self.cx.state.database;
                self.cx.state.database = db;
                self.cx.view_depth += 1;
                let r = self.plan_query(&v.query);
                self.cx.view_depth -= 1;
                self.cx.state.database = saved_db;
                self.outer = saved_outer;
                let (plan, mut cols) = r?;
                if !v.columns.is_empty() {
                    if v.columns.len() != cols.len() {
                        return Err(SqlError::new(
                            8158,
                            16,
                            1,
                            format!("'{}' has more columns than were specified in the column list.", obj.name),
                        ));
                    }
                    for (c, n) in cols.iter_mut().zip(&v.columns) {
                        c.name = n.value.clone();
                    }
                }
                let exprs = (0..cols.len()).map(|i| super::expr::BExpr::Col(i, cols[i].ty)).collect();
                Ok((Plan::Project { input: Box::new(plan), exprs, cols: cols.clone() }, cols))
            }
            _ => Err(errors::invalid_object(&display(name))),
        }
    }
}

fn display(name: &ObjectName) -> String {
    name.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".")
}
