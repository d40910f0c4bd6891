//! Catalog views (sys.databases, sys.schemas, sys.objects, sys.all_objects,
//! sys.system_objects, sys.tables, sys.views, sys.procedures, sys.columns,
//! sys.all_columns, sys.system_columns, sys.indexes, sys.types,
//! sys.master_files, sys.database_files, INFORMATION_SCHEMA.TABLES, COLUMNS and VIEWS) and
//! built-in table functions (STRING_SPLIT, GENERATE_SERIES), computed from the catalog
//! when a query opens them (each view is an entry of the registry, `crate::system`, whose
//! functions call [`columns_of`] and [`rows_needing`]); the other catalog views are in
//! [`super::catalog_views`]. Name resolution of a FROM source (`Binder::table_source`) is
//! here too.
//! Column names and types are SQL Server's: the full lists for sys.objects, sys.columns,
//! sys.indexes and the INFORMATION_SCHEMA views, a subset of the columns of the other wide
//! views.

use std::sync::Arc;

use types::sqltype::{type_info, user_type_id, SYSTEM_TYPES};
use types::SqlError;
use types::{Length, SqlType, Value};

use super::context::Cx;
use super::errors;
use super::expr::Row;
use super::plan::{OutCol, Plan, ScanNode};
use super::query::Binder;
use crate::ast::*;
use crate::catalog::{IndexKind, ObjectBody};
use crate::host::DbId;

/// The views computed here, each registered in `crate::system` (`catalog.rs`,
/// `information_schema.rs`), whose entries call [`columns_of`] and [`rows_needing`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    Databases,
    Schemas,
    Objects,
    /// sys.all_objects: user objects and the system objects of the registry.
    AllObjects,
    /// sys.system_objects: the system objects only.
    SystemObjects,
    Tables,
    Views,
    /// sys.all_views: user views and the system views.
    AllViews,
    /// sys.system_views: the system views only.
    SystemViews,
    Procedures,
    Columns,
    /// sys.all_columns: user columns and the columns of the system views.
    AllColumns,
    /// sys.system_columns: the columns of the system views only.
    SystemColumns,
    Indexes,
    Types,
    /// sys.table_types: the table types of sys.types with their table's object id.
    TableTypes,
    MasterFiles,
    DatabaseFiles,
    IsTables,
    IsColumns,
    IsViews,
}

pub(super) fn sysname() -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(128) }
}

pub(super) fn nv(n: u16) -> SqlType {
    SqlType::NVarChar { len: Length::Bounded(n) }
}

pub(super) fn cols(spec: &[(&str, SqlType, bool)]) -> Vec<OutCol> {
    spec.iter().map(|(n, t, null)| OutCol::new(*n, *t, *null)).collect()
}

/// A view's columns.
pub fn columns_of(kind: ViewKind) -> Vec<OutCol> {
    let int = SqlType::Int;
    let bit = SqlType::Bit;
    let dt = SqlType::DateTime;
    let ti = SqlType::TinyInt;
    let si = SqlType::SmallInt;
    let mut out = match kind {
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
            ("log_reuse_wait", ti, true),
            ("log_reuse_wait_desc", nv(60), true),
        ]),
        ViewKind::Schemas => {
            cols(&[("name", sysname(), false), ("schema_id", int, false), ("principal_id", int, true)])
        }
        ViewKind::Objects
        | ViewKind::AllObjects
        | ViewKind::SystemObjects
        | ViewKind::Tables
        | ViewKind::Views
        | ViewKind::AllViews
        | ViewKind::SystemViews
        | ViewKind::Procedures => {
            let mut v = object_spec();
            v.extend(object_extra_spec(kind));
            cols(&v)
        }
        ViewKind::Columns | ViewKind::AllColumns | ViewKind::SystemColumns => cols(&column_spec()),
        ViewKind::Indexes => cols(&[
            ("object_id", int, false),
            ("name", sysname(), true),
            ("index_id", int, false),
            ("type", ti, false),
            ("type_desc", nv(60), true),
            ("is_unique", bit, true),
            ("data_space_id", int, true),
            ("ignore_dup_key", bit, true),
            ("is_primary_key", bit, true),
            ("is_unique_constraint", bit, true),
            ("fill_factor", ti, false),
            ("is_padded", bit, true),
            ("is_disabled", bit, true),
            ("is_hypothetical", bit, true),
            ("is_ignored_in_optimization", bit, true),
            ("allow_row_locks", bit, true),
            ("allow_page_locks", bit, true),
            ("has_filter", bit, true),
            ("filter_definition", SqlType::NVarChar { len: Length::Max }, true),
            ("compression_delay", int, true),
            ("suppress_dup_key_messages", bit, true),
            ("auto_created", bit, true),
            ("optimize_for_sequential_key", bit, true),
        ]),
        ViewKind::Types | ViewKind::TableTypes => {
            let mut v = vec![
                ("name", sysname(), false),
                ("system_type_id", ti, false),
                ("user_type_id", int, false),
                ("schema_id", int, false),
                ("max_length", si, false),
                ("precision", ti, false),
                ("scale", ti, false),
                ("is_nullable", bit, true),
                ("is_user_defined", bit, false),
                ("is_table_type", bit, false),
            ];
            if kind == ViewKind::TableTypes {
                v.extend([("type_table_object_id", int, false), ("is_memory_optimized", bit, true)]);
            }
            cols(&v)
        }
        ViewKind::MasterFiles | ViewKind::DatabaseFiles => cols(&[
            ("database_id", int, false),
            // (sys.database_files has no database_id: removed below)
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
        ViewKind::IsColumns => {
            let mut v = vec![
                ("TABLE_CATALOG", sysname(), true),
                ("TABLE_SCHEMA", sysname(), true),
                ("TABLE_NAME", sysname(), false),
                ("COLUMN_NAME", sysname(), true),
                ("ORDINAL_POSITION", int, true),
                ("COLUMN_DEFAULT", SqlType::NVarChar { len: Length::Bounded(4000) }, true),
                ("IS_NULLABLE", SqlType::VarChar { len: Length::Bounded(3) }, true),
                ("DATA_TYPE", sysname(), true),
            ];
            v.extend(is_type_spec(ti, int));
            v.extend([
                ("DOMAIN_CATALOG", sysname(), true),
                ("DOMAIN_SCHEMA", sysname(), true),
                ("DOMAIN_NAME", sysname(), true),
            ]);
            cols(&v)
        }
    };
    if kind == ViewKind::DatabaseFiles {
        out.remove(0);
    }
    out
}

/// The user-defined types of `db` as sys.types (or, for `TableTypes`, sys.table_types)
/// rows: an alias type has its base type's id and sizes, a table type is type 243.
fn user_types(cx: &mut Cx, db: DbId, kind: ViewKind, out: &mut Vec<Row>) -> Result<(), SqlError> {
    let types: Vec<crate::catalog::UserType> = cx.catalog(db)?.inner.read().types.values().cloned().collect();
    for t in types {
        let table = t.table_object_id != 0;
        if kind == ViewKind::TableTypes && !table {
            continue;
        }
        let (id, len, p, sc, nullable) = match super::base::parse_module(&t.definition).map(|s| s.kind) {
            Ok(StatementKind::CreateType(ct)) => match &ct.definition {
                TypeDefinition::Alias { base, nullable } => {
                    let (id, len, p, sc) =
                        super::query::resolve_type(base).map(|ty| type_info(&ty)).unwrap_or((0, 0, 0, 0));
                    (id, len, p, sc, nullable.unwrap_or(true))
                }
                TypeDefinition::Table(_) => (243, -1, 0, 0, false),
            },
            _ => continue,
        };
        let mut row = vec![
            Value::String(t.name.clone()),
            Value::TinyInt(id),
            Value::Int(t.id),
            Value::Int(t.schema_id),
            Value::SmallInt(len),
            Value::TinyInt(p),
            Value::TinyInt(sc),
            Value::Bit(nullable),
            Value::Bit(true),
            Value::Bit(table),
        ];
        if kind == ViewKind::TableTypes {
            row.extend([Value::Int(t.table_object_id), Value::Bit(false)]);
        }
        out.push(row);
    }
    Ok(())
}

pub(super) fn s(v: &str) -> Value {
    Value::String(v.to_string())
}

pub(super) fn b(v: bool) -> Value {
    Value::Bit(v)
}

/// A view's rows for a consumer that reads only the `call.need` columns (the others may
/// be NULL; only the column views use it; see [`crate::system::Call::need`]).
pub fn rows_needing(kind: ViewKind, call: &crate::system::Call<'_>, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let need = call.need;
    let nothing = need.is_some_and(|n| n.iter().all(|&b| !b));
    let db = call.db;
    let mut out = Vec::new();
    match kind {
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
                    s(&d.collation.name()),
                    b(d.read_only),
                    Value::TinyInt(0),
                    s(d.state),
                    Value::TinyInt(rm),
                    s(d.recovery_model),
                    Value::TinyInt(match d.page_verify {
                        "NONE" => 0,
                        "TORN_PAGE_DETECTION" => 1,
                        _ => 2,
                    }),
                    s(d.page_verify),
                    Value::Int(d.target_recovery_time_seconds),
                    Value::Int(dd),
                    s(d.delayed_durability),
                    Value::TinyInt(match d.log_reuse_wait {
                        "CHECKPOINT" => 1,
                        "LOG_BACKUP" => 2,
                        "ACTIVE_TRANSACTION" => 4,
                        _ => 0,
                    }),
                    s(d.log_reuse_wait),
                ]);
            }
        }
        ViewKind::MasterFiles | ViewKind::DatabaseFiles => {
            let dbs: Vec<DbId> = if kind == ViewKind::MasterFiles {
                // Metadata visibility: sys.master_files needs CREATE DATABASE, ALTER ANY
                // DATABASE or VIEW ANY DEFINITION, which only sysadmin holds here.
                if cx.is_sysadmin() {
                    cx.host.databases().iter().map(|d| d.id).collect()
                } else {
                    Vec::new()
                }
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
            if kind == ViewKind::DatabaseFiles {
                for r in &mut out {
                    r.remove(0);
                }
            }
        }
        ViewKind::Types => {
            for &(name, ty) in SYSTEM_TYPES {
                let (id, len, p, sc) = type_info(&ty);
                out.push(vec![
                    s(name),
                    Value::TinyInt(id),
                    Value::Int(user_type_id(&ty)),
                    Value::Int(4),
                    Value::SmallInt(len),
                    Value::TinyInt(p),
                    Value::TinyInt(sc),
                    b(true),
                    b(false),
                    b(false),
                ]);
            }
            user_types(cx, db, kind, &mut out)?;
        }
        ViewKind::TableTypes => user_types(cx, db, kind, &mut out)?,
        _ => {
            let cat = cx.catalog(db)?;
            let g = cat.inner.read();
            let db_name = cx.db_name(db).unwrap_or_default();
            match kind {
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
                | ViewKind::AllViews
                | ViewKind::SystemViews
                | ViewKind::Procedures => {
                    let system_only = matches!(kind, ViewKind::SystemObjects | ViewKind::SystemViews);
                    let user = if system_only { None } else { Some(&g.objects) };
                    for o in user.into_iter().flat_map(|m| m.values()) {
                        if db == super::base::TEMPDB
                            && o.name.starts_with('#')
                            && !o.name.starts_with("##")
                            && kind != ViewKind::Objects
                            && kind != ViewKind::Tables
                        {
                            continue;
                        }
                        let keep = match kind {
                            ViewKind::Tables => matches!(o.body, ObjectBody::Table(_)),
                            ViewKind::Views | ViewKind::AllViews => matches!(o.body, ObjectBody::View(_)),
                            ViewKind::Procedures => matches!(o.body, ObjectBody::Procedure(_)),
                            _ => true,
                        };
                        if keep {
                            let mut row = user_object_values(o);
                            row.extend(object_extra_values(kind, Some(o)));
                            out.push(row);
                        }
                        if matches!(kind, ViewKind::Objects | ViewKind::AllObjects) {
                            if let ObjectBody::Table(t) = &o.body {
                                for (id, name, code, desc) in constraint_rows(t) {
                                    out.push(constraint_object_values(o, id, &name, code, desc));
                                }
                            }
                        }
                    }
                }
                ViewKind::Columns | ViewKind::AllColumns | ViewKind::SystemColumns => {
                    let user = if kind == ViewKind::SystemColumns { None } else { Some(&g.objects) };
                    for o in user.into_iter().flat_map(|m| m.values()) {
                        let ObjectBody::Table(t) = &o.body else { continue };
                        for c in &t.columns {
                            out.push(if nothing {
                                Vec::new()
                            } else {
                                column_values_needing(o.id, &ColumnFacts::of(c), need)
                            });
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
                            // The storage options Mesquite does not have show SQL Server's
                            // defaults (no padding or fill factor, row and page locks allowed).
                            out.push(vec![
                                Value::Int(o.id),
                                ix.name.as_ref().map(|n| s(n)).unwrap_or(Value::Null),
                                Value::Int(ix.index_id),
                                Value::TinyInt(ty),
                                s(ix.type_desc()),
                                b(ix.unique),
                                Value::Int(PRIMARY_DATA_SPACE_ID),
                                b(false),
                                b(ix.primary_key.is_some()),
                                b(ix.unique_constraint.is_some()),
                                Value::TinyInt(0),
                                b(false),
                                b(false),
                                b(false),
                                b(false),
                                b(true),
                                b(true),
                                b(ix.filter.is_some()),
                                ix.filter.as_ref().map(|f| s(f)).unwrap_or(Value::Null),
                                Value::Null,
                                b(false),
                                b(false),
                                b(false),
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
                        if kind == ViewKind::IsTables {
                            out.push(vec![s(&db_name), s(&schema), s(&o.name), s(table_type)]);
                            continue;
                        }
                        let ObjectBody::Table(t) = &o.body else { continue };
                        for c in &t.columns {
                            let mut row = vec![
                                s(&db_name),
                                s(&schema),
                                s(&o.name),
                                s(&c.name),
                                Value::Int(c.column_id),
                                c.default.as_ref().map(|d| s(&d.definition)).unwrap_or(Value::Null),
                                s(if c.nullable { "YES" } else { "NO" }),
                                s(c.ty.name()),
                            ];
                            row.extend(is_type_values(&c.ty));
                            if let (Some(coll), Some(name)) = (c.collation, row.last_mut()) {
                                *name = s(&coll.name());
                            }
                            row.extend([Value::Null, Value::Null, Value::Null]);
                            out.push(row);
                        }
                    }
                }
                _ => {}
            }
            if matches!(
                kind,
                ViewKind::AllObjects | ViewKind::SystemObjects | ViewKind::AllViews | ViewKind::SystemViews
            ) {
                let created = cx.host.databases().first().map(|d| d.create_date.clone()).unwrap_or(Value::Null);
                let views_only = matches!(kind, ViewKind::AllViews | ViewKind::SystemViews);
                for o in crate::system::all().filter(|o| !views_only || o.kind == crate::system::ObjectKind::View) {
                    let mut row = object_values(
                        o.name,
                        o.id,
                        o.schema.id(),
                        0,
                        o.kind.type_code(),
                        o.kind.type_desc(),
                        &created,
                        &created,
                        true,
                    );
                    row.extend(object_extra_values(kind, None));
                    out.push(row);
                }
            }
            if matches!(kind, ViewKind::AllColumns | ViewKind::SystemColumns) {
                for o in crate::system::all() {
                    for (i, c) in o.columns().iter().enumerate() {
                        let facts = ColumnFacts {
                            name: &c.name,
                            column_id: i as i32 + 1,
                            ty: c.ty,
                            nullable: c.nullable,
                            identity: false,
                            computed: false,
                            sparse: false,
                            default_object_id: 0,
                            collation: None,
                        };
                        out.push(if nothing { Vec::new() } else { column_values_needing(o.id, &facts, need) });
                    }
                }
            }
        }
    }
    Ok(out)
}

/// What INFORMATION_SCHEMA says of a type (COLUMNS, PARAMETERS, ROUTINES each list these
/// facts, in their own orders and integer types).
pub(super) struct IsFacets {
    pub char_max: Option<i32>,
    pub char_octets: Option<i32>,
    pub precision: Option<u8>,
    pub radix: Option<i16>,
    pub scale: Option<u8>,
    pub datetime_precision: Option<i16>,
    pub charset: Option<&'static str>,
    pub collation: Option<&'static str>,
}

pub(super) fn is_facets(ty: &SqlType) -> IsFacets {
    let mut f = IsFacets {
        char_max: None,
        char_octets: None,
        precision: None,
        radix: None,
        scale: None,
        datetime_precision: None,
        charset: None,
        collation: None,
    };
    let bounded = |len: Length| match len {
        Length::Max => -1,
        Length::Bounded(n) => i32::from(n),
    };
    let (max, unicode) = match *ty {
        SqlType::Char { len } | SqlType::Binary { len } => (Some(i32::from(len)), false),
        SqlType::NChar { len } => (Some(i32::from(len)), true),
        SqlType::VarChar { len } | SqlType::VarBinary { len } => (Some(bounded(len)), false),
        SqlType::NVarChar { len } => (Some(bounded(len)), true),
        SqlType::Xml => (Some(-1), true),
        SqlType::Text | SqlType::Image => (Some(i32::MAX), false),
        SqlType::NText => (Some(i32::MAX / 2), true),
        _ => (None, false),
    };
    if let Some(m) = max {
        f.char_max = Some(m);
        f.char_octets = Some(if unicode && m > 0 { m.saturating_mul(2) } else { m });
        if ty.is_character() {
            f.charset = Some(if unicode { "UNICODE" } else { "iso_1" });
            f.collation = Some("SQL_Latin1_General_CP1_CI_AS");
        }
        return f;
    }
    match *ty {
        SqlType::Date | SqlType::SmallDateTime => f.datetime_precision = Some(0),
        SqlType::DateTime => f.datetime_precision = Some(3),
        SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
            f.datetime_precision = Some(i16::from(scale))
        }
        SqlType::Real | SqlType::Float => {
            f.precision = Some(type_info(ty).2);
            f.radix = Some(2);
        }
        _ if ty.is_numeric() => {
            let (_, _, p, sc) = type_info(ty);
            f.precision = Some(p);
            f.radix = Some(10);
            f.scale = Some(sc);
        }
        _ => {}
    }
    f
}

/// INFORMATION_SCHEMA.COLUMNS' type columns, CHARACTER_MAXIMUM_LENGTH to COLLATION_NAME.
fn is_type_spec(ti: SqlType, int: SqlType) -> Vec<(&'static str, SqlType, bool)> {
    vec![
        ("CHARACTER_MAXIMUM_LENGTH", int, true),
        ("CHARACTER_OCTET_LENGTH", int, true),
        ("NUMERIC_PRECISION", ti, true),
        ("NUMERIC_PRECISION_RADIX", SqlType::SmallInt, true),
        ("NUMERIC_SCALE", int, true),
        ("DATETIME_PRECISION", SqlType::SmallInt, true),
        ("CHARACTER_SET_CATALOG", sysname(), true),
        ("CHARACTER_SET_SCHEMA", sysname(), true),
        ("CHARACTER_SET_NAME", sysname(), true),
        ("COLLATION_CATALOG", sysname(), true),
        ("COLLATION_SCHEMA", sysname(), true),
        ("COLLATION_NAME", sysname(), true),
    ]
}

fn is_type_values(ty: &SqlType) -> Vec<Value> {
    let f = is_facets(ty);
    vec![
        opt(f.char_max.map(Value::Int)),
        opt(f.char_octets.map(Value::Int)),
        opt(f.precision.map(Value::TinyInt)),
        opt(f.radix.map(Value::SmallInt)),
        opt(f.scale.map(|v| Value::Int(i32::from(v)))),
        opt(f.datetime_precision.map(Value::SmallInt)),
        Value::Null,
        Value::Null,
        opt(f.charset.map(s)),
        Value::Null,
        Value::Null,
        opt(f.collation.map(s)),
    ]
}

pub(super) fn opt(v: Option<Value>) -> Value {
    v.unwrap_or(Value::Null)
}

/// The data space every table and index is on: the PRIMARY filegroup (Mesquite has one
/// data file per database).
pub(super) const PRIMARY_DATA_SPACE_ID: i32 = 1;

/// sys.objects' columns; the views of one kind of object (sys.key_constraints,
/// sys.foreign_keys, ...) start with them.
pub(super) fn object_spec() -> Vec<(&'static str, SqlType, bool)> {
    let bit = SqlType::Bit;
    vec![
        ("name", sysname(), false),
        ("object_id", SqlType::Int, false),
        ("principal_id", SqlType::Int, true),
        ("schema_id", SqlType::Int, false),
        ("parent_object_id", SqlType::Int, false),
        ("type", SqlType::Char { len: 2 }, true),
        ("type_desc", nv(60), true),
        ("create_date", SqlType::DateTime, false),
        ("modify_date", SqlType::DateTime, false),
        ("is_ms_shipped", bit, false),
        ("is_published", bit, false),
        ("is_schema_published", bit, false),
    ]
}

/// A row of [`object_spec`]. principal_id is NULL (objects are owned by their schema's
/// owner); nothing is published for replication.
#[allow(clippy::too_many_arguments)]
pub(super) fn object_values(
    name: &str,
    id: i32,
    schema_id: i32,
    parent: i32,
    type_code: &str,
    type_desc: &str,
    create: &Value,
    modify: &Value,
    ms_shipped: bool,
) -> Vec<Value> {
    vec![
        s(name),
        Value::Int(id),
        Value::Null,
        Value::Int(schema_id),
        Value::Int(parent),
        s(&format!("{type_code:<2}")),
        s(type_desc),
        create.clone(),
        modify.clone(),
        b(ms_shipped),
        b(false),
        b(false),
    ]
}

/// The columns sys.tables, sys.views (sys.all_views, sys.system_views) and
/// sys.procedures add to sys.objects' (SQL Server 2022's lists).
fn object_extra_spec(kind: ViewKind) -> Vec<(&'static str, SqlType, bool)> {
    let (int, bit, ti) = (SqlType::Int, SqlType::Bit, SqlType::TinyInt);
    match kind {
        ViewKind::Tables => vec![
            ("lob_data_space_id", int, false),
            ("filestream_data_space_id", int, true),
            ("max_column_id_used", int, false),
            ("lock_on_bulk_load", bit, false),
            ("uses_ansi_nulls", bit, true),
            ("is_replicated", bit, true),
            ("has_replication_filter", bit, true),
            ("is_merge_published", bit, true),
            ("is_sync_tran_subscribed", bit, true),
            ("has_unchecked_assembly_data", bit, false),
            ("text_in_row_limit", int, true),
            ("large_value_types_out_of_row", bit, true),
            ("is_tracked_by_cdc", bit, true),
            ("lock_escalation", ti, true),
            ("lock_escalation_desc", nv(60), true),
            ("is_filetable", bit, true),
            ("is_memory_optimized", bit, true),
            ("durability", ti, true),
            ("durability_desc", nv(60), true),
            ("temporal_type", ti, true),
            ("temporal_type_desc", nv(60), true),
            ("history_table_id", int, true),
            ("is_remote_data_archive_enabled", bit, true),
            ("is_external", bit, false),
            ("history_retention_period", int, true),
            ("history_retention_period_unit", int, true),
            ("history_retention_period_unit_desc", nv(10), true),
            ("is_node", bit, true),
            ("is_edge", bit, true),
            ("data_retention_period", int, true),
            ("data_retention_period_unit", int, true),
            ("data_retention_period_unit_desc", nv(10), true),
            ("ledger_type", ti, true),
            ("ledger_type_desc", nv(60), true),
            ("ledger_view_id", int, true),
            ("is_dropped_ledger_table", bit, true),
        ],
        ViewKind::Views | ViewKind::AllViews | ViewKind::SystemViews => vec![
            ("is_replicated", bit, true),
            ("has_replication_filter", bit, true),
            ("has_opaque_metadata", bit, false),
            ("has_unchecked_assembly_data", bit, false),
            ("with_check_option", bit, false),
            ("is_date_correlation_view", bit, false),
            ("is_tracked_by_cdc", bit, true),
            ("has_snapshot", bit, true),
            ("ledger_view_type", ti, true),
            ("ledger_view_type_desc", nv(60), true),
            ("is_dropped_ledger_view", bit, true),
        ],
        ViewKind::Procedures => vec![
            ("is_auto_executed", bit, false),
            ("is_execution_replicated", bit, true),
            ("is_repl_serializable_skip", bit, true),
            ("skips_repl_constraints", bit, true),
        ],
        _ => Vec::new(),
    }
}

/// The values of [`object_extra_spec`] for a user object (None: a system view).
/// Features Mesquite does not have (replication, CDC, FILESTREAM, memory-optimized,
/// temporal, graph and ledger tables) show SQL Server's values for a table without them.
fn object_extra_values(kind: ViewKind, o: Option<&crate::catalog::Object>) -> Vec<Value> {
    let null = || Value::Null;
    match kind {
        ViewKind::Tables => {
            let Some(ObjectBody::Table(t)) = o.map(|o| &o.body) else { return Vec::new() };
            // LOB data (MAX types, xml) is kept with the table's other data, on PRIMARY.
            let lob = t.columns.iter().any(|c| {
                matches!(
                    c.ty,
                    SqlType::VarChar { len: Length::Max }
                        | SqlType::NVarChar { len: Length::Max }
                        | SqlType::VarBinary { len: Length::Max }
                        | SqlType::Xml
                )
            });
            let max_column = t.next_column_id() - 1;
            vec![
                Value::Int(if lob { PRIMARY_DATA_SPACE_ID } else { 0 }),
                null(),
                Value::Int(max_column),
                b(false),
                b(true),
                b(false),
                b(false),
                b(false),
                b(false),
                b(false),
                Value::Int(0),
                b(false),
                b(false),
                Value::TinyInt(0),
                s("TABLE"),
                b(false),
                b(false),
                Value::TinyInt(0),
                s("SCHEMA_AND_DATA"),
                Value::TinyInt(0),
                s("NON_TEMPORAL_TABLE"),
                null(),
                b(false),
                b(false),
                null(),
                null(),
                null(),
                b(false),
                b(false),
                null(),
                null(),
                null(),
                Value::TinyInt(0),
                s("NON_LEDGER_TABLE"),
                null(),
                b(false),
            ]
        }
        ViewKind::Views | ViewKind::AllViews | ViewKind::SystemViews => {
            let (metadata, check) = match o.map(|o| &o.body) {
                Some(ObjectBody::View(m)) => match super::base::parse_module(&m.definition).map(|st| st.kind) {
                    Ok(StatementKind::CreateView(v)) => {
                        (v.options.iter().any(|x| matches!(x, ModuleOption::ViewMetadata)), v.check_option)
                    }
                    _ => (false, false),
                },
                _ => (false, false),
            };
            vec![
                b(false),
                b(false),
                b(metadata),
                b(false),
                b(check),
                b(false),
                b(false),
                b(false),
                Value::TinyInt(0),
                s("NON_LEDGER_VIEW"),
                b(false),
            ]
        }
        ViewKind::Procedures => vec![b(false), b(false), b(false), b(false)],
        _ => Vec::new(),
    }
}

pub(super) fn user_object_values(o: &crate::catalog::Object) -> Vec<Value> {
    object_values(
        &o.name,
        o.id,
        o.schema_id,
        o.body.parent_id().unwrap_or(0),
        o.body.type_code(),
        o.body.type_desc(),
        &o.create_date,
        &o.modify_date,
        false,
    )
}

/// A constraint as an object: its table is the parent and lends it its dates.
pub(super) fn constraint_object_values(
    table: &crate::catalog::Object,
    id: i32,
    name: &str,
    type_code: &str,
    type_desc: &str,
) -> Vec<Value> {
    object_values(
        name,
        id,
        table.schema_id,
        table.id,
        type_code,
        type_desc,
        &table.create_date,
        &table.modify_date,
        false,
    )
}

/// sys.columns' columns (also sys.all_columns, sys.system_columns, and the start of
/// sys.identity_columns and sys.computed_columns).
pub(super) fn column_spec() -> Vec<(&'static str, SqlType, bool)> {
    let (int, bit, ti) = (SqlType::Int, SqlType::Bit, SqlType::TinyInt);
    vec![
        ("object_id", int, false),
        ("name", sysname(), true),
        ("column_id", int, false),
        ("system_type_id", ti, false),
        ("user_type_id", int, false),
        ("max_length", SqlType::SmallInt, false),
        ("precision", ti, false),
        ("scale", ti, false),
        ("collation_name", sysname(), true),
        ("is_nullable", bit, true),
        ("is_ansi_padded", bit, false),
        ("is_rowguidcol", bit, false),
        ("is_identity", bit, false),
        ("is_computed", bit, false),
        ("is_filestream", bit, false),
        ("is_replicated", bit, true),
        ("is_non_sql_subscribed", bit, true),
        ("is_merge_published", bit, true),
        ("is_dts_replicated", bit, true),
        ("is_xml_document", bit, false),
        ("xml_collection_id", int, false),
        ("default_object_id", int, false),
        ("rule_object_id", int, false),
        ("is_sparse", bit, true),
        ("is_column_set", bit, true),
        ("generated_always_type", ti, true),
        ("generated_always_type_desc", nv(60), true),
        ("encryption_type", int, true),
        ("encryption_type_desc", nv(64), true),
        ("encryption_algorithm_name", sysname(), true),
        ("column_encryption_key_id", int, true),
        ("column_encryption_key_database_name", sysname(), true),
        ("is_hidden", bit, true),
        ("is_masked", bit, true),
        ("graph_type", int, true),
        ("graph_type_desc", nv(60), true),
        ("is_data_deletion_filter_column", bit, true),
        ("ledger_view_column_type", int, true),
        ("ledger_view_column_type_desc", nv(60), true),
        ("is_dropped_ledger_column", bit, true),
    ]
}

/// What sys.columns shows of one column.
pub(super) struct ColumnFacts<'a> {
    pub name: &'a str,
    pub column_id: i32,
    pub ty: SqlType,
    pub nullable: bool,
    pub identity: bool,
    pub computed: bool,
    pub sparse: bool,
    pub default_object_id: i32,
    /// A character column's collation when not the default.
    pub collation: Option<types::Collation>,
}

impl<'a> ColumnFacts<'a> {
    pub fn of(c: &'a crate::catalog::Column) -> ColumnFacts<'a> {
        ColumnFacts {
            name: &c.name,
            column_id: c.column_id,
            ty: c.ty,
            nullable: c.nullable,
            identity: c.is_identity,
            computed: c.computed.is_some(),
            sparse: c.sparse,
            default_object_id: c.default.as_ref().map_or(0, |d| d.object_id),
            collation: c.collation,
        }
    }
}

/// A row of [`column_spec`]. Features Mesquite does not have (replication, FILESTREAM,
/// Always Encrypted, temporal and ledger tables, graph tables, masking) show SQL
/// Server's values for a column without them.
pub(super) fn column_values(object_id: i32, c: &ColumnFacts) -> Vec<Value> {
    column_values_needing(object_id, c, None)
}

/// [`column_values`] for a consumer that reads only the `need` columns: the others are
/// NULL (no string is built for them).
fn column_values_needing(object_id: i32, c: &ColumnFacts, need: Option<&[bool]>) -> Vec<Value> {
    const WIDTH: usize = 40;
    let wanted = |i: usize| need.is_none_or(|n| n.get(i).copied().unwrap_or(true));
    let text = |i: usize, v: &str| if wanted(i) { s(v) } else { Value::Null };
    let (id, len, p, sc) = type_info(&c.ty);
    // Mesquite stores char/binary values as ANSI_PADDING ON does (SQL Server's default).
    let padded = matches!(
        c.ty,
        SqlType::Char { .. }
            | SqlType::VarChar { .. }
            | SqlType::NChar { .. }
            | SqlType::NVarChar { .. }
            | SqlType::Binary { .. }
            | SqlType::VarBinary { .. }
    );
    let row = vec![
        Value::Int(object_id),
        text(1, c.name),
        Value::Int(c.column_id),
        Value::TinyInt(id),
        Value::Int(user_type_id(&c.ty)),
        Value::SmallInt(len),
        Value::TinyInt(p),
        Value::TinyInt(sc),
        if c.ty.is_character() { text(8, &c.collation.unwrap_or_default().name()) } else { Value::Null },
        b(c.nullable),
        b(padded),
        b(false),
        b(c.identity),
        b(c.computed),
        b(false),
        b(false),
        b(false),
        b(false),
        b(false),
        b(false),
        Value::Int(0),
        Value::Int(c.default_object_id),
        Value::Int(0),
        b(c.sparse),
        b(false),
        Value::TinyInt(0),
        text(26, "NOT_APPLICABLE"),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        b(false),
        b(false),
        Value::Null,
        Value::Null,
        b(false),
        Value::Null,
        Value::Null,
        b(false),
    ];
    debug_assert_eq!(row.len(), WIDTH);
    row
}

pub(super) fn constraint_rows(t: &crate::catalog::Table) -> Vec<(i32, String, &'static str, &'static str)> {
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

impl Binder<'_, '_> {
    /// A built-in table-valued function (STRING_SPLIT, GENERATE_SERIES, the registry's);
    /// None when `name` is not one.
    pub(crate) fn builtin_table_function(
        &mut self,
        name: &str,
        args: &[Expr],
    ) -> Result<Option<(Plan, Vec<OutCol>)>, SqlError> {
        let b = self;
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
                    vals.push(Value::integer_part(&v).unwrap_or(0) as i64);
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
}

impl Binder<'_, '_> {
    /// A named table source: a table, a view, or a catalog view.
    pub fn table_source(&mut self, name: &ObjectName) -> Result<(Plan, Vec<OutCol>), SqlError> {
        // System views.
        if let Some(schema) = name.schema() {
            let object = crate::system::lookup(&schema.value, &name.name().value)
                .filter(|o| o.kind == crate::system::ObjectKind::View);
            if let Some(object) = object {
                let db = match name.database() {
                    Some(d) => self.cx.db_id_by_name(&d.value).ok_or_else(|| errors::invalid_object(&d.value))?,
                    None => self.cx.state.database,
                };
                let cols = object.out_cols();
                let Some(view) = object.view(db, [None, None]) else {
                    return Err(errors::invalid_object(&display(name)));
                };
                return Ok((Plan::Virtual { view, cols: cols.clone() }, cols));
            }
        }
        if let Some(t) = self.cx.resolve_table_cached(name)? {
            super::security::check_object_id(self.cx, t.db, t.object_id, t.schema_id, &t.name, "SELECT")?;
            return Ok(self.table_scan_source(t.db, t.object_id, t.info.clone()));
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
                Ok(self.table_scan_source(db, obj.id, t))
            }
            ObjectBody::View(m) => {
                let def = super::base::parse_module(&m.definition)?;
                let StatementKind::CreateView(v) = def.kind else {
                    return Err(errors::invalid_object(&obj.name));
                };
                if self.cx.view_depth >= 32 {
                    return Err(super::errors::nesting_exceeded());
                }
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

    /// A scan of table `object_id` as a FROM source.
    fn table_scan_source(&self, db: DbId, object_id: i32, t: Arc<super::table::TableInfo>) -> (Plan, Vec<OutCol>) {
        let with_locator = self.cx.dml_target == Some((db, object_id));
        let mut cols = t.out_cols();
        if with_locator {
            cols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: Length::Bounded(900) }, false));
        }
        (Plan::Scan(ScanNode::all(t, with_locator)), cols)
    }
}

fn display(name: &ObjectName) -> String {
    name.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".")
}

// Object names and ids, system objects included (OBJECT_ID, OBJECT_NAME).
impl Cx<'_> {
    pub fn object_name(&self, db: DbId, id: i32) -> Option<String> {
        if id < 0 {
            return crate::system::by_id(id).map(|o| o.name.to_string());
        }
        let c = self.catalog(db).ok()?;
        let g = c.inner.read();
        g.objects.get(&id).map(|o| o.name.clone())
    }

    /// OBJECT_ID('name'): tables, views, procedures, functions, constraints.
    pub fn object_id_by_name(&mut self, text: &str) -> Result<Option<i32>, SqlError> {
        let Ok(name) = super::base::parse_object_name(text) else {
            return Ok(None);
        };
        if let Some(schema) = name.schema() {
            if let Some(o) = crate::system::lookup(&schema.value, &name.name().value) {
                return Ok(Some(o.id));
            }
        }
        Ok(self.resolve_object(&name)?.map(|(_, o)| o.id).or_else(|| {
            // Constraints are objects too.
            let (db, schema, n) = self.resolve_name(&name).ok()?;
            let c = self.catalog(db).ok()?;
            let g = c.inner.read();
            for o in g.objects.values() {
                if o.schema_id != schema {
                    continue;
                }
                if let ObjectBody::Table(t) = &o.body {
                    for (id, cname) in super::ddl::constraint_names(t) {
                        if cname.eq_ignore_ascii_case(&n) {
                            return Some(id);
                        }
                    }
                }
            }
            None
        }))
    }
}
