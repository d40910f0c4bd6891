//! Catalog views over constraints, modules, parameters and storage, and the
//! INFORMATION_SCHEMA views beyond TABLES, COLUMNS and VIEWS, with SQL Server's column
//! lists (names, types, nullability and order as SQL Server 2022 documents them).
//! Rows are computed from the database's catalog when a query opens the view; columns
//! for features Mesquite does not have hold SQL Server's value for an object without
//! them (docs/compatibility.md lists them). Views of features Mesquite does not have at
//! all (synonyms, statistics) have their columns and no rows.

use std::ops::Bound;

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::Row;
use super::plan::OutCol;
use super::sysviews::{
    b, cols, column_spec, column_values, constraint_object_values, is_facets, nv, object_spec, opt, s, sysname,
    ColumnFacts, PRIMARY_DATA_SPACE_ID,
};
use crate::ast::{FunctionBody, ModuleOption, Parameter, StatementKind};
use crate::catalog::{Catalog, IndexKind, Object, ObjectBody, ReferentialAction, Table};
use crate::host::{DbId, IndexRef, Isolation};
use types::sqltype::type_info;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogView {
    IndexColumns,
    KeyConstraints,
    ForeignKeys,
    ForeignKeyColumns,
    CheckConstraints,
    DefaultConstraints,
    IdentityColumns,
    ComputedColumns,
    SqlModules,
    /// sys.all_sql_modules: the same rows (Mesquite's system objects have no SQL text).
    AllSqlModules,
    Parameters,
    /// sys.all_parameters: sys.parameters and the system table functions' parameters.
    AllParameters,
    Partitions,
    DataSpaces,
    Filegroups,
    Stats,
    StatsColumns,
    Triggers,
    TriggerEvents,
    Synonyms,
    AllocationUnits,
    /// sys.sequences: columns only (Mesquite has no sequences yet).
    Sequences,
    Configurations,
    IsSchemata,
    IsRoutines,
    IsParameters,
    IsTableConstraints,
    IsKeyColumnUsage,
    IsReferentialConstraints,
    IsCheckConstraints,
    IsConstraintColumnUsage,
    IsConstraintTableUsage,
}

fn vc(n: u16) -> SqlType {
    SqlType::VarChar { len: Length::Bounded(n) }
}

fn nvmax() -> SqlType {
    SqlType::NVarChar { len: Length::Max }
}

/// Columns whose SQL Server type is sql_variant (which Mesquite does not have) hold the
/// values of an identity column or a parameter default: numeric(38, 0) holds every
/// identity value.
const VARIANT_NUMBER: SqlType = SqlType::Numeric { precision: 38, scale: 0 };

/// Three-part name columns of INFORMATION_SCHEMA: (catalog, schema, name) with a prefix.
fn is_name3(prefix: &'static str) -> [(&'static str, SqlType, bool); 3] {
    let (c, sch, n) = match prefix {
        "CONSTRAINT" => ("CONSTRAINT_CATALOG", "CONSTRAINT_SCHEMA", "CONSTRAINT_NAME"),
        "TABLE" => ("TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME"),
        "UNIQUE_CONSTRAINT" => ("UNIQUE_CONSTRAINT_CATALOG", "UNIQUE_CONSTRAINT_SCHEMA", "UNIQUE_CONSTRAINT_NAME"),
        "SPECIFIC" => ("SPECIFIC_CATALOG", "SPECIFIC_SCHEMA", "SPECIFIC_NAME"),
        _ => ("ROUTINE_CATALOG", "ROUTINE_SCHEMA", "ROUTINE_NAME"),
    };
    [(c, nv(128), true), (sch, nv(128), true), (n, sysname(), false)]
}

/// Column names and types, in SQL Server's order.
pub fn columns(v: CatalogView) -> Vec<OutCol> {
    use CatalogView::*;
    let (int, bit, ti, big, si, dt) =
        (SqlType::Int, SqlType::Bit, SqlType::TinyInt, SqlType::BigInt, SqlType::SmallInt, SqlType::DateTime);
    let with_objects = |extra: &[(&'static str, SqlType, bool)]| {
        let mut v = object_spec();
        v.extend_from_slice(extra);
        cols(&v)
    };
    match v {
        IndexColumns => cols(&[
            ("object_id", int, false),
            ("index_id", int, false),
            ("index_column_id", int, false),
            ("column_id", int, false),
            ("key_ordinal", ti, false),
            ("partition_ordinal", ti, false),
            ("is_descending_key", bit, true),
            ("is_included_column", bit, true),
            ("column_store_order_ordinal", ti, false),
        ]),
        KeyConstraints => {
            with_objects(&[("unique_index_id", int, true), ("is_system_named", bit, false), ("is_enforced", bit, true)])
        }
        ForeignKeys => with_objects(&[
            ("referenced_object_id", int, true),
            ("key_index_id", int, true),
            ("is_disabled", bit, false),
            ("is_not_for_replication", bit, false),
            ("is_not_trusted", bit, false),
            ("delete_referential_action", ti, true),
            ("delete_referential_action_desc", nv(60), true),
            ("update_referential_action", ti, true),
            ("update_referential_action_desc", nv(60), true),
            ("is_system_named", bit, false),
        ]),
        ForeignKeyColumns => cols(&[
            ("constraint_object_id", int, false),
            ("constraint_column_id", int, false),
            ("parent_object_id", int, false),
            ("parent_column_id", int, false),
            ("referenced_object_id", int, false),
            ("referenced_column_id", int, false),
        ]),
        CheckConstraints => with_objects(&[
            ("is_disabled", bit, false),
            ("is_not_for_replication", bit, false),
            ("is_not_trusted", bit, false),
            ("parent_column_id", int, false),
            ("definition", nvmax(), true),
            ("uses_database_collation", bit, true),
            ("is_system_named", bit, false),
        ]),
        DefaultConstraints => with_objects(&[
            ("parent_column_id", int, false),
            ("definition", nvmax(), true),
            ("is_system_named", bit, false),
        ]),
        IdentityColumns => {
            let mut v = column_spec();
            v.extend([
                ("seed_value", VARIANT_NUMBER, true),
                ("increment_value", VARIANT_NUMBER, true),
                ("last_value", VARIANT_NUMBER, true),
                ("is_not_for_replication", bit, true),
            ]);
            cols(&v)
        }
        ComputedColumns => {
            let mut v = column_spec();
            v.extend([
                ("definition", nvmax(), true),
                ("uses_database_collation", bit, false),
                ("is_persisted", bit, false),
            ]);
            cols(&v)
        }
        SqlModules | AllSqlModules => cols(&[
            ("object_id", int, false),
            ("definition", nvmax(), true),
            ("uses_ansi_nulls", bit, true),
            ("uses_quoted_identifier", bit, true),
            ("is_schema_bound", bit, true),
            ("uses_database_collation", bit, true),
            ("is_recompiled", bit, true),
            ("null_on_null_input", bit, true),
            ("execute_as_principal_id", int, true),
            ("uses_native_compilation", bit, true),
            ("is_inlineable", bit, true),
            ("inline_type", bit, true),
        ]),
        Parameters | AllParameters => cols(&[
            ("object_id", int, false),
            ("name", sysname(), true),
            ("parameter_id", int, false),
            ("system_type_id", ti, false),
            ("user_type_id", int, false),
            ("max_length", si, false),
            ("precision", ti, false),
            ("scale", ti, false),
            ("is_output", bit, false),
            ("is_cursor_ref", bit, false),
            ("has_default_value", bit, false),
            ("is_xml_document", bit, false),
            ("default_value", nv(4000), true),
            ("xml_collection_id", int, false),
            ("is_readonly", bit, false),
            ("is_nullable", bit, true),
            ("encryption_type", int, true),
            ("encryption_type_desc", nv(64), true),
            ("encryption_algorithm_name", sysname(), true),
            ("column_encryption_key_id", int, true),
            ("column_encryption_key_database_name", sysname(), true),
        ]),
        Partitions => cols(&[
            ("partition_id", big, false),
            ("object_id", int, false),
            ("index_id", int, false),
            ("partition_number", int, false),
            ("hobt_id", big, false),
            ("rows", big, true),
            ("filestream_filegroup_id", si, false),
            ("data_compression", ti, false),
            ("data_compression_desc", nv(60), true),
            ("xml_compression", bit, true),
            ("xml_compression_desc", vc(3), true),
        ]),
        DataSpaces | Filegroups => {
            let mut spec = vec![
                ("name", sysname(), false),
                ("data_space_id", int, false),
                ("type", SqlType::Char { len: 2 }, false),
                ("type_desc", nv(60), true),
                ("is_default", bit, true),
                ("is_system", bit, true),
            ];
            if v == Filegroups {
                spec.extend([
                    ("filegroup_guid", SqlType::UniqueIdentifier, true),
                    ("log_filegroup_id", int, true),
                    ("is_read_only", bit, true),
                    ("is_autogrow_all_files", bit, true),
                ]);
            }
            cols(&spec)
        }
        Stats => cols(&[
            ("object_id", int, false),
            ("name", sysname(), true),
            ("stats_id", int, false),
            ("auto_created", bit, true),
            ("user_created", bit, true),
            ("no_recompute", bit, true),
            ("has_filter", bit, true),
            ("filter_definition", nvmax(), true),
            ("is_temporary", bit, true),
            ("is_incremental", bit, true),
            ("has_persisted_sample", bit, true),
            ("stats_generation_method", int, false),
            ("stats_generation_method_desc", vc(255), false),
            ("auto_drop", bit, true),
        ]),
        StatsColumns => cols(&[
            ("object_id", int, false),
            ("stats_id", int, false),
            ("stats_column_id", int, false),
            ("column_id", int, false),
        ]),
        Triggers => cols(&[
            ("name", sysname(), false),
            ("object_id", int, false),
            ("parent_class", ti, false),
            ("parent_class_desc", nv(60), true),
            ("parent_id", int, false),
            ("type", SqlType::Char { len: 2 }, false),
            ("type_desc", nv(60), true),
            ("create_date", dt, false),
            ("modify_date", dt, false),
            ("is_ms_shipped", bit, false),
            ("is_disabled", bit, false),
            ("is_not_for_replication", bit, false),
            ("is_instead_of_trigger", bit, false),
        ]),
        TriggerEvents => cols(&[
            ("object_id", int, false),
            ("type", int, false),
            ("type_desc", nv(60), false),
            ("is_first", bit, true),
            ("is_last", bit, true),
            ("event_group_type", int, true),
            ("event_group_type_desc", nv(60), true),
            ("is_trigger_event", bit, true),
        ]),
        Synonyms => with_objects(&[("base_object_name", nv(1035), true)]),
        AllocationUnits => cols(&[
            ("allocation_unit_id", big, false),
            ("type", ti, false),
            ("type_desc", nv(60), true),
            ("container_id", big, false),
            ("data_space_id", int, true),
            ("total_pages", big, false),
            ("used_pages", big, false),
            ("data_pages", big, false),
        ]),
        Sequences => with_objects(&[
            ("start_value", VARIANT_NUMBER, false),
            ("increment", VARIANT_NUMBER, false),
            ("minimum_value", VARIANT_NUMBER, true),
            ("maximum_value", VARIANT_NUMBER, true),
            ("is_cycling", bit, true),
            ("is_cached", bit, true),
            ("cache_size", int, true),
            ("system_type_id", ti, false),
            ("user_type_id", int, false),
            ("precision", ti, false),
            ("scale", ti, false),
            ("current_value", VARIANT_NUMBER, false),
            ("is_exhausted", bit, false),
            ("last_used_value", VARIANT_NUMBER, true),
        ]),
        Configurations => cols(&[
            ("configuration_id", int, false),
            ("name", nv(35), false),
            ("value", int, true),
            ("minimum", int, true),
            ("maximum", int, true),
            ("value_in_use", int, true),
            ("description", nv(255), false),
            ("is_dynamic", bit, false),
            ("is_advanced", bit, false),
        ]),
        IsSchemata => cols(&[
            ("CATALOG_NAME", sysname(), true),
            ("SCHEMA_NAME", sysname(), false),
            ("SCHEMA_OWNER", sysname(), true),
            ("DEFAULT_CHARACTER_SET_CATALOG", vc(6), true),
            ("DEFAULT_CHARACTER_SET_SCHEMA", vc(3), true),
            ("DEFAULT_CHARACTER_SET_NAME", sysname(), true),
        ]),
        IsRoutines => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("SPECIFIC"));
            v.extend(is_name3("ROUTINE"));
            v.push(("ROUTINE_TYPE", nv(20), true));
            for n in ["MODULE_CATALOG", "MODULE_SCHEMA", "MODULE_NAME", "UDT_CATALOG", "UDT_SCHEMA", "UDT_NAME"] {
                v.push((n, sysname(), true));
            }
            v.push(("DATA_TYPE", sysname(), true));
            v.extend(routine_type_spec(si));
            v.extend([
                ("INTERVAL_TYPE", nv(30), true),
                ("INTERVAL_PRECISION", si, true),
                ("TYPE_UDT_CATALOG", sysname(), true),
                ("TYPE_UDT_SCHEMA", sysname(), true),
                ("TYPE_UDT_NAME", sysname(), true),
                ("SCOPE_CATALOG", sysname(), true),
                ("SCOPE_SCHEMA", sysname(), true),
                ("SCOPE_NAME", sysname(), true),
                ("MAXIMUM_CARDINALITY", big, true),
                ("DTD_IDENTIFIER", sysname(), true),
                ("ROUTINE_BODY", nv(30), true),
                ("ROUTINE_DEFINITION", nv(4000), true),
                ("EXTERNAL_NAME", sysname(), true),
                ("EXTERNAL_LANGUAGE", nv(30), true),
                ("PARAMETER_STYLE", nv(30), true),
                ("IS_DETERMINISTIC", nv(10), true),
                ("SQL_DATA_ACCESS", nv(30), true),
                ("IS_NULL_CALL", nv(10), true),
                ("SQL_PATH", sysname(), true),
                ("SCHEMA_LEVEL_ROUTINE", nv(10), true),
                ("MAX_DYNAMIC_RESULT_SETS", si, true),
                ("IS_USER_DEFINED_CAST", nv(10), true),
                ("IS_IMPLICITLY_INVOCABLE", nv(10), true),
                ("CREATED", dt, false),
                ("LAST_ALTERED", dt, false),
            ]);
            cols(&v)
        }
        IsParameters => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("SPECIFIC"));
            v.extend([
                ("ORDINAL_POSITION", int, false),
                ("PARAMETER_MODE", nv(10), true),
                ("IS_RESULT", nv(10), true),
                ("AS_LOCATOR", nv(10), true),
                ("PARAMETER_NAME", sysname(), true),
                ("DATA_TYPE", sysname(), true),
            ]);
            v.extend(routine_type_spec(ti));
            v.extend([
                ("INTERVAL_TYPE", nv(30), true),
                ("INTERVAL_PRECISION", si, true),
                ("USER_DEFINED_TYPE_CATALOG", sysname(), true),
                ("USER_DEFINED_TYPE_SCHEMA", sysname(), true),
                ("USER_DEFINED_TYPE_NAME", sysname(), true),
                ("SCOPE_CATALOG", sysname(), true),
                ("SCOPE_SCHEMA", sysname(), true),
                ("SCOPE_NAME", sysname(), true),
            ]);
            cols(&v)
        }
        IsTableConstraints => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("CONSTRAINT"));
            v.extend(is_name3("TABLE"));
            v.extend([
                ("CONSTRAINT_TYPE", vc(11), true),
                ("IS_DEFERRABLE", vc(2), false),
                ("INITIALLY_DEFERRED", vc(2), false),
            ]);
            cols(&v)
        }
        IsKeyColumnUsage => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("CONSTRAINT"));
            v.extend(is_name3("TABLE"));
            v.extend([("COLUMN_NAME", sysname(), true), ("ORDINAL_POSITION", int, false)]);
            cols(&v)
        }
        IsReferentialConstraints => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("CONSTRAINT"));
            v.extend(is_name3("UNIQUE_CONSTRAINT"));
            v.extend([("MATCH_OPTION", vc(7), true), ("UPDATE_RULE", vc(11), true), ("DELETE_RULE", vc(11), true)]);
            cols(&v)
        }
        IsCheckConstraints => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("CONSTRAINT"));
            v.push(("CHECK_CLAUSE", nv(4000), true));
            cols(&v)
        }
        IsConstraintColumnUsage => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("TABLE"));
            v.push(("COLUMN_NAME", sysname(), true));
            v.extend(is_name3("CONSTRAINT"));
            cols(&v)
        }
        IsConstraintTableUsage => {
            let mut v: Vec<(&'static str, SqlType, bool)> = Vec::new();
            v.extend(is_name3("TABLE"));
            v.extend(is_name3("CONSTRAINT"));
            cols(&v)
        }
    }
}

/// The type columns ROUTINES and PARAMETERS share, CHARACTER_MAXIMUM_LENGTH to
/// DATETIME_PRECISION (`num` is the type of NUMERIC_PRECISION and NUMERIC_SCALE: smallint
/// in ROUTINES, tinyint in PARAMETERS).
fn routine_type_spec(num: SqlType) -> Vec<(&'static str, SqlType, bool)> {
    vec![
        ("CHARACTER_MAXIMUM_LENGTH", SqlType::Int, true),
        ("CHARACTER_OCTET_LENGTH", SqlType::Int, true),
        ("COLLATION_CATALOG", sysname(), true),
        ("COLLATION_SCHEMA", sysname(), true),
        ("COLLATION_NAME", sysname(), true),
        ("CHARACTER_SET_CATALOG", sysname(), true),
        ("CHARACTER_SET_SCHEMA", sysname(), true),
        ("CHARACTER_SET_NAME", sysname(), true),
        ("NUMERIC_PRECISION", num, true),
        ("NUMERIC_PRECISION_RADIX", SqlType::SmallInt, true),
        ("NUMERIC_SCALE", num, true),
        ("DATETIME_PRECISION", SqlType::SmallInt, true),
    ]
}

/// The values of [`routine_type_spec`]; all NULL without a type (a procedure's return).
fn routine_type_values(ty: Option<&SqlType>, small: bool) -> Vec<Value> {
    let Some(ty) = ty else { return vec![Value::Null; 12] };
    let f = is_facets(ty);
    let num = |v: Option<u8>| match v {
        Some(v) if small => Value::SmallInt(i16::from(v)),
        Some(v) => Value::TinyInt(v),
        None => Value::Null,
    };
    vec![
        opt(f.char_max.map(Value::Int)),
        opt(f.char_octets.map(Value::Int)),
        Value::Null,
        Value::Null,
        opt(f.collation.map(s)),
        Value::Null,
        Value::Null,
        opt(f.charset.map(s)),
        num(f.precision),
        opt(f.radix.map(Value::SmallInt)),
        num(f.scale),
        opt(f.datetime_precision.map(Value::SmallInt)),
    ]
}

/// Whether a constraint's name is the one CREATE/ALTER TABLE generated for it
/// (`PK__table__0000ABCD`, ending in the constraint's object id).
fn is_system_named(name: &str, prefix: &str, id: i32) -> bool {
    name.starts_with(&format!("{prefix}__")) && name.ends_with(&format!("__{id:08X}"))
}

fn action_code(a: ReferentialAction) -> (u8, &'static str, &'static str) {
    match a {
        ReferentialAction::NoAction => (0, "NO_ACTION", "NO ACTION"),
        ReferentialAction::Cascade => (1, "CASCADE", "CASCADE"),
        ReferentialAction::SetNull => (2, "SET_NULL", "SET NULL"),
        ReferentialAction::SetDefault => (3, "SET_DEFAULT", "SET DEFAULT"),
    }
}

/// The unique index of `table` whose key columns are exactly `columns` (the index a
/// foreign key references: sys.foreign_keys.key_index_id).
fn key_index<'a>(table: &'a Table, columns: &[i32]) -> Option<&'a crate::catalog::Index> {
    table.indexes.iter().find(|ix| {
        ix.unique
            && ix.filter.is_none()
            && ix.key_columns.len() == columns.len()
            && ix.key_columns.iter().all(|(c, _)| columns.contains(c))
    })
}

fn column_name(t: &Table, id: i32) -> String {
    t.columns.iter().find(|c| c.column_id == id).map(|c| c.name.clone()).unwrap_or_default()
}

/// A module's parsed CREATE statement, or None if its text no longer parses (it is then
/// left out of the views that need its parameters or options).
fn parsed(def: &str) -> Option<StatementKind> {
    super::base::parse_module(def).ok().map(|st| st.kind)
}

/// The parameters of a procedure or function module and, for a scalar function, its
/// return type (the executor resolves the same types when it binds a call).
pub(super) fn module_signature(o: &Object) -> Option<(Vec<Parameter>, Option<SqlType>, Vec<ModuleOption>)> {
    match parsed(module_of(o)?.definition.as_str())? {
        StatementKind::CreateProcedure(p) => Some((p.params, None, p.options)),
        StatementKind::CreateFunction(f) => {
            let ret = match &f.returns {
                FunctionBody::Scalar { data_type, .. } => super::query::resolve_type(data_type).ok(),
                _ => None,
            };
            Some((f.params, ret, f.options))
        }
        StatementKind::CreateView(v) => Some((Vec::new(), None, v.options)),
        _ => None,
    }
}

fn module_of(o: &Object) -> Option<&crate::catalog::Module> {
    o.body.module()
}

fn schema_name(g: &Catalog, id: i32) -> String {
    g.schemas.get(&id).map(|x| x.name.clone()).unwrap_or_default()
}

/// Tables a view lists: temp tables (#t) of other sessions are not visible by name.
fn visible(db: DbId, o: &Object) -> bool {
    !(db == super::base::TEMPDB && o.name.starts_with('#'))
}

/// The rows of a catalog view.
pub fn rows(v: CatalogView, db: DbId, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    use CatalogView::*;
    match v {
        Partitions => return partitions(db, cx),
        AllocationUnits => return allocation_units(db, cx),
        Configurations => return Ok(configurations(cx)),
        Sequences => return sequences(db, cx),
        _ => {}
    }
    let cat = cx.catalog(db)?;
    let db_name = cx.db_name(db).unwrap_or_default();
    let g = cat.inner.read();
    let mut out: Vec<Row> = Vec::new();
    let tables = || {
        g.objects.values().filter(|o| visible(db, o)).filter_map(|o| match &o.body {
            ObjectBody::Table(t) => Some((o, t)),
            _ => None,
        })
    };
    match v {
        IndexColumns => {
            for (o, t) in tables() {
                for ix in t.indexes.iter().filter(|ix| ix.kind != IndexKind::Heap) {
                    let keys = ix.key_columns.iter().enumerate().map(|(i, (c, desc))| (*c, i + 1, *desc, false));
                    let incl = ix.included.iter().map(|c| (*c, 0, false, true));
                    for (n, (column, key_ordinal, desc, included)) in keys.chain(incl).enumerate() {
                        out.push(vec![
                            Value::Int(o.id),
                            Value::Int(ix.index_id),
                            Value::Int(n as i32 + 1),
                            Value::Int(column),
                            Value::TinyInt(key_ordinal.min(255) as u8),
                            Value::TinyInt(0),
                            b(desc),
                            b(included),
                            Value::TinyInt(0),
                        ]);
                    }
                }
            }
        }
        KeyConstraints => {
            for (o, t) in tables() {
                for ix in &t.indexes {
                    let (id, code, desc, prefix) = match (ix.primary_key, ix.unique_constraint) {
                        (Some(id), _) => (id, "PK", "PRIMARY_KEY_CONSTRAINT", "PK"),
                        (None, Some(id)) => (id, "UQ", "UNIQUE_CONSTRAINT", "UQ"),
                        (None, None) => continue,
                    };
                    let name = ix.name.clone().unwrap_or_default();
                    let mut row = constraint_object_values(o, id, &name, code, desc);
                    row.extend([Value::Int(ix.index_id), b(is_system_named(&name, prefix, id)), b(true)]);
                    out.push(row);
                }
            }
        }
        ForeignKeys => {
            for (o, t) in tables() {
                for f in &t.foreign_keys {
                    let key_index_id = match g.objects.get(&f.referenced_object_id).map(|r| &r.body) {
                        Some(ObjectBody::Table(rt)) => key_index(rt, &f.referenced_columns).map(|ix| ix.index_id),
                        _ => None,
                    };
                    let (del, del_desc, _) = action_code(f.on_delete);
                    let (upd, upd_desc, _) = action_code(f.on_update);
                    let mut row = constraint_object_values(o, f.object_id, &f.name, "F", "FOREIGN_KEY_CONSTRAINT");
                    row.extend([
                        Value::Int(f.referenced_object_id),
                        opt(key_index_id.map(Value::Int)),
                        b(false),
                        b(false),
                        b(false),
                        Value::TinyInt(del),
                        s(del_desc),
                        Value::TinyInt(upd),
                        s(upd_desc),
                        b(is_system_named(&f.name, "FK", f.object_id)),
                    ]);
                    out.push(row);
                }
            }
        }
        ForeignKeyColumns => {
            for (o, t) in tables() {
                for f in &t.foreign_keys {
                    for (i, (c, r)) in f.columns.iter().zip(&f.referenced_columns).enumerate() {
                        out.push(vec![
                            Value::Int(f.object_id),
                            Value::Int(i as i32 + 1),
                            Value::Int(o.id),
                            Value::Int(*c),
                            Value::Int(f.referenced_object_id),
                            Value::Int(*r),
                        ]);
                    }
                }
            }
        }
        CheckConstraints => {
            for (o, t) in tables() {
                for c in &t.checks {
                    let mut row = constraint_object_values(o, c.object_id, &c.name, "C", "CHECK_CONSTRAINT");
                    row.extend([
                        b(false),
                        b(false),
                        b(false),
                        Value::Int(0),
                        s(&c.definition),
                        b(false),
                        b(is_system_named(&c.name, "CK", c.object_id)),
                    ]);
                    out.push(row);
                }
            }
        }
        DefaultConstraints => {
            for (o, t) in tables() {
                for c in &t.columns {
                    let Some(d) = &c.default else { continue };
                    let mut row = constraint_object_values(o, d.object_id, &d.name, "D", "DEFAULT_CONSTRAINT");
                    row.extend([
                        Value::Int(c.column_id),
                        s(&d.definition),
                        b(is_system_named(&d.name, "DF", d.object_id)),
                    ]);
                    out.push(row);
                }
            }
        }
        IdentityColumns => {
            for (o, t) in tables() {
                let Some(idn) = &t.identity else { continue };
                let Some(c) = t.columns.iter().find(|c| c.column_id == idn.column_id) else { continue };
                // The last value handed out lives in the table's shared counters once
                // loaded (the catalog copy is only the value at load).
                let last = match *cat.counters(o.id).identity.lock() {
                    Some(v) => v,
                    None => idn.last,
                };
                let num = |v: i128| Value::Decimal { value: v, precision: 38, scale: 0 };
                let mut row = column_values(o.id, &ColumnFacts::of(c));
                row.extend([num(idn.seed), num(idn.increment), opt(last.map(num)), b(false)]);
                out.push(row);
            }
        }
        ComputedColumns => {
            for (o, t) in tables() {
                for c in &t.columns {
                    let Some(cc) = &c.computed else { continue };
                    let mut row = column_values(o.id, &ColumnFacts::of(c));
                    row.extend([s(&cc.definition), b(false), b(cc.persisted)]);
                    out.push(row);
                }
            }
        }
        SqlModules | AllSqlModules => {
            for o in g.objects.values() {
                let Some(m) = module_of(o) else { continue };
                let options = module_signature(o).map(|(_, _, opts)| opts).unwrap_or_default();
                let has = |f: &dyn Fn(&ModuleOption) -> bool| options.iter().any(f);
                let execute_as = options.iter().find_map(|x| match x {
                    ModuleOption::ExecuteAs(p) => Some(execute_as_id(&g, o, p)),
                    _ => None,
                });
                // Inline table-valued functions are inlined; Mesquite never inlines
                // scalar functions.
                let inline = matches!(o.body, ObjectBody::InlineFunction(_));
                out.push(vec![
                    Value::Int(o.id),
                    s(&m.definition),
                    b(true),
                    b(true),
                    b(has(&|x| matches!(x, ModuleOption::SchemaBinding))),
                    b(false),
                    b(has(&|x| matches!(x, ModuleOption::Recompile))),
                    b(has(&|x| matches!(x, ModuleOption::ReturnsNullOnNullInput))),
                    opt(execute_as.flatten().map(Value::Int)),
                    b(has(&|x| matches!(x, ModuleOption::NativeCompilation))),
                    b(inline),
                    b(inline),
                ]);
            }
        }
        Parameters | AllParameters => {
            if v == AllParameters {
                // The registry's table functions take integer arguments.
                for o in crate::system::all() {
                    for (i, p) in o.params.iter().enumerate() {
                        out.push(parameter_row(o.id, &format!("@{p}"), i as i32 + 1, &SqlType::Int, false, false));
                    }
                }
            }
            for o in g.objects.values() {
                let Some((params, ret, _)) = module_signature(o) else { continue };
                if let Some(ty) = ret {
                    out.push(parameter_row(o.id, "", 0, &ty, true, false));
                }
                for (i, p) in params.iter().enumerate() {
                    let Ok(ty) = super::query::resolve_type(&p.data_type) else { continue };
                    out.push(parameter_row(o.id, &p.name, i as i32 + 1, &ty, p.output, p.readonly));
                }
            }
        }
        DataSpaces | Filegroups => {
            let mut row =
                vec![s("PRIMARY"), Value::Int(PRIMARY_DATA_SPACE_ID), s("FG"), s("ROWS_FILEGROUP"), b(true), b(false)];
            if v == Filegroups {
                row.extend([Value::Null, Value::Null, b(false), b(false)]);
            }
            out.push(row);
        }
        Triggers => {
            for o in g.objects.values() {
                let ObjectBody::Trigger(t) = &o.body else { continue };
                out.push(vec![
                    s(&o.name),
                    Value::Int(o.id),
                    Value::TinyInt(1),
                    s("OBJECT_OR_COLUMN"),
                    Value::Int(t.parent_id),
                    s("TR"),
                    s("SQL_TRIGGER"),
                    o.create_date.clone(),
                    o.modify_date.clone(),
                    b(false),
                    b(t.disabled),
                    b(t.not_for_replication),
                    b(t.instead_of),
                ]);
            }
        }
        TriggerEvents => {
            for o in g.objects.values() {
                let ObjectBody::Trigger(t) = &o.body else { continue };
                for (on, ty, desc) in [(t.insert, 1, "INSERT"), (t.update, 2, "UPDATE"), (t.delete, 3, "DELETE")] {
                    if on {
                        out.push(vec![
                            Value::Int(o.id),
                            Value::Int(ty),
                            s(desc),
                            b(false),
                            b(false),
                            Value::Null,
                            Value::Null,
                            b(true),
                        ]);
                    }
                }
            }
        }
        Stats | StatsColumns | Synonyms | Sequences => {}
        IsSchemata => {
            for sc in g.schemas.values() {
                let owner = g.principals.get(&sc.principal_id).map(|p| s(&p.name)).unwrap_or(Value::Null);
                out.push(vec![s(&db_name), s(&sc.name), owner, Value::Null, Value::Null, s("iso_1")]);
            }
        }
        IsRoutines => {
            for o in g.objects.values() {
                let (routine_type, ret): (&str, Option<SqlType>) = match &o.body {
                    ObjectBody::Procedure(_) => ("PROCEDURE", None),
                    ObjectBody::ScalarFunction(_) => ("FUNCTION", module_signature(o).and_then(|(_, r, _)| r)),
                    ObjectBody::InlineFunction(_) | ObjectBody::TableFunction(_) => ("FUNCTION", None),
                    _ => continue,
                };
                let Some(m) = module_of(o) else { continue };
                let schema = schema_name(&g, o.schema_id);
                let is_function = routine_type == "FUNCTION";
                let data_type = match (&o.body, &ret) {
                    (ObjectBody::InlineFunction(_) | ObjectBody::TableFunction(_), _) => s("TABLE"),
                    (_, Some(t)) => s(t.name()),
                    _ => Value::Null,
                };
                let def: String = m.definition.chars().take(4000).collect();
                let mut row = vec![s(&db_name), s(&schema), s(&o.name), s(&db_name), s(&schema), s(&o.name)];
                row.push(s(routine_type));
                row.extend(std::iter::repeat(Value::Null).take(6));
                row.push(data_type);
                row.extend(routine_type_values(ret.as_ref(), true));
                row.extend(std::iter::repeat(Value::Null).take(10));
                row.extend([
                    s("SQL"),
                    s(&def),
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    s("NO"),
                    s(if is_function { "READS" } else { "MODIFIES" }),
                    s(if is_function { "YES" } else { "NO" }),
                    Value::Null,
                    s("YES"),
                    Value::SmallInt(if is_function { 0 } else { -1 }),
                    s("NO"),
                    s("NO"),
                    o.create_date.clone(),
                    o.modify_date.clone(),
                ]);
                out.push(row);
            }
        }
        IsParameters => {
            for o in g.objects.values() {
                let Some((params, ret, _)) = module_signature(o) else { continue };
                if !(matches!(o.body, ObjectBody::Procedure(_)) || o.body.is_function()) {
                    continue;
                }
                let schema = schema_name(&g, o.schema_id);
                let mut push = |ordinal: i32, mode: &str, result: bool, name: Value, ty: &SqlType| {
                    let mut row = vec![
                        s(&db_name),
                        s(&schema),
                        s(&o.name),
                        Value::Int(ordinal),
                        s(mode),
                        s(if result { "YES" } else { "NO" }),
                        s("NO"),
                        name,
                        s(ty.name()),
                    ];
                    row.extend(routine_type_values(Some(ty), false));
                    row.extend(std::iter::repeat(Value::Null).take(8));
                    out.push(row);
                };
                if let Some(ty) = &ret {
                    push(0, "OUT", true, Value::Null, ty);
                }
                for (i, p) in params.iter().enumerate() {
                    let Ok(ty) = super::query::resolve_type(&p.data_type) else { continue };
                    push(i as i32 + 1, if p.output { "INOUT" } else { "IN" }, false, s(&p.name), &ty);
                }
            }
        }
        IsTableConstraints | IsConstraintTableUsage => {
            for (o, t) in tables() {
                let schema = schema_name(&g, o.schema_id);
                for (_, name, code, _) in super::sysviews::constraint_rows(t) {
                    let kind = match code {
                        "PK" => "PRIMARY KEY",
                        "UQ" => "UNIQUE",
                        "C " => "CHECK",
                        "F " => "FOREIGN KEY",
                        _ => continue,
                    };
                    let constraint = [s(&db_name), s(&schema), s(&name)];
                    let table = [s(&db_name), s(&schema), s(&o.name)];
                    out.push(if v == IsTableConstraints {
                        let mut row = constraint.to_vec();
                        row.extend(table);
                        row.extend([s(kind), s("NO"), s("NO")]);
                        row
                    } else {
                        let mut row = table.to_vec();
                        row.extend(constraint);
                        row
                    });
                }
            }
        }
        IsKeyColumnUsage | IsConstraintColumnUsage => {
            for (o, t) in tables() {
                let schema = schema_name(&g, o.schema_id);
                // (constraint name, column ids in key order)
                let mut keys: Vec<(String, Vec<i32>)> = Vec::new();
                for ix in t.indexes.iter().filter(|ix| ix.primary_key.is_some() || ix.unique_constraint.is_some()) {
                    keys.push((ix.name.clone().unwrap_or_default(), ix.key_columns.iter().map(|(c, _)| *c).collect()));
                }
                for f in &t.foreign_keys {
                    keys.push((f.name.clone(), f.columns.clone()));
                }
                if v == IsConstraintColumnUsage {
                    // CHECK constraints use the columns their expression names.
                    for c in &t.checks {
                        let used = columns_named_in(t, &c.definition);
                        keys.push((c.name.clone(), used));
                    }
                }
                for (name, columns) in keys {
                    for (i, c) in columns.iter().enumerate() {
                        let constraint = [s(&db_name), s(&schema), s(&name)];
                        let table = [s(&db_name), s(&schema), s(&o.name)];
                        out.push(if v == IsKeyColumnUsage {
                            let mut row = constraint.to_vec();
                            row.extend(table);
                            row.extend([s(&column_name(t, *c)), Value::Int(i as i32 + 1)]);
                            row
                        } else {
                            let mut row = table.to_vec();
                            row.push(s(&column_name(t, *c)));
                            row.extend(constraint);
                            row
                        });
                    }
                }
            }
        }
        IsReferentialConstraints => {
            for (o, t) in tables() {
                let schema = schema_name(&g, o.schema_id);
                for f in &t.foreign_keys {
                    let (uq_schema, uq_name) = match g.objects.get(&f.referenced_object_id) {
                        Some(r) => match &r.body {
                            ObjectBody::Table(rt) => (
                                s(&schema_name(&g, r.schema_id)),
                                opt(key_index(rt, &f.referenced_columns).and_then(|ix| ix.name.as_deref()).map(s)),
                            ),
                            _ => (Value::Null, Value::Null),
                        },
                        None => (Value::Null, Value::Null),
                    };
                    let (_, _, del) = action_code(f.on_delete);
                    let (_, _, upd) = action_code(f.on_update);
                    out.push(vec![
                        s(&db_name),
                        s(&schema),
                        s(&f.name),
                        s(&db_name),
                        uq_schema,
                        uq_name,
                        s("SIMPLE"),
                        s(upd),
                        s(del),
                    ]);
                }
            }
        }
        IsCheckConstraints => {
            for (o, t) in tables() {
                let schema = schema_name(&g, o.schema_id);
                for c in &t.checks {
                    let clause: String = c.definition.chars().take(4000).collect();
                    out.push(vec![s(&db_name), s(&schema), s(&c.name), s(&clause)]);
                }
            }
        }
        Partitions | AllocationUnits | Configurations => {}
    }
    Ok(out)
}

/// The columns of `t` a CHECK expression names (bracketed or bare identifiers), in
/// column order.
fn columns_named_in(t: &Table, definition: &str) -> Vec<i32> {
    let mut words: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut in_bracket = false;
    let mut in_string = false;
    for ch in definition.chars() {
        if in_string {
            in_string = ch != '\'';
            continue;
        }
        match ch {
            '\'' if !in_bracket => in_string = true,
            '[' if !in_bracket => in_bracket = true,
            ']' if in_bracket => {
                in_bracket = false;
                words.push(std::mem::take(&mut cur));
            }
            c if in_bracket || c.is_alphanumeric() || c == '_' || c == '@' || c == '#' => cur.push(c),
            _ => {
                if !cur.is_empty() {
                    words.push(std::mem::take(&mut cur));
                }
            }
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    t.columns.iter().filter(|c| words.iter().any(|w| w.eq_ignore_ascii_case(&c.name))).map(|c| c.column_id).collect()
}

/// sys.sql_modules.execute_as_principal_id: NULL for CALLER, -2 for OWNER, else the
/// principal's id (SELF: the schema's owner, as Mesquite does not record who created a
/// module).
fn execute_as_id(g: &Catalog, o: &Object, p: &crate::ast::ExecuteAsPrincipal) -> Option<i32> {
    use crate::ast::{ExecuteAsPrincipal, ExprKind, Literal};
    match p {
        ExecuteAsPrincipal::Caller => None,
        ExecuteAsPrincipal::Owner => Some(-2),
        ExecuteAsPrincipal::SelfPrincipal => g.schemas.get(&o.schema_id).map(|sc| sc.principal_id),
        ExecuteAsPrincipal::User(e) => match &e.kind {
            ExprKind::Literal(Literal::String { value, .. }) => g.principal_by_name(value).map(|p| p.id),
            _ => None,
        },
    }
}

/// A row of sys.parameters. T-SQL parameter defaults are not kept there (SQL Server:
/// has_default_value 0, default_value NULL; the text is in sys.sql_modules).
fn parameter_row(object_id: i32, name: &str, id: i32, ty: &SqlType, output: bool, readonly: bool) -> Row {
    let (tid, len, p, sc) = type_info(ty);
    vec![
        Value::Int(object_id),
        s(name),
        Value::Int(id),
        Value::TinyInt(tid),
        Value::Int(types::sqltype::user_type_id(ty)),
        Value::SmallInt(len),
        Value::TinyInt(p),
        Value::TinyInt(sc),
        b(output),
        b(false),
        b(false),
        b(false),
        Value::Null,
        Value::Int(0),
        b(readonly),
        b(true),
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
        Value::Null,
    ]
}

/// sys.partitions: one partition per index (Mesquite does not partition tables). The
/// row counts are counted, reading without locks as SQL Server's metadata reads do, so
/// the view never waits behind a writer.
fn partitions(db: DbId, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let objects: Vec<Object> = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects.values().filter(|o| visible(db, o) && matches!(o.body, ObjectBody::Table(_))).cloned().collect()
    };
    let mut out = Vec::new();
    let restore = cx.state.isolation;
    cx.host.set_isolation(Isolation::ReadUncommitted).map_err(super::base::host_err)?;
    let mut result = Ok(());
    'tables: for o in &objects {
        let info = match cx.table_info(db, o) {
            Ok(t) => t,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        for ix in &info.indexes {
            let rows = match count_rows(cx, &ix.iref) {
                Ok(n) => n,
                Err(e) => {
                    result = Err(e);
                    break 'tables;
                }
            };
            let hobt = ix.iref.hobt.min(i64::MAX as u64) as i64;
            out.push(vec![
                Value::BigInt(hobt),
                Value::Int(o.id),
                Value::Int(ix.meta.index_id),
                Value::Int(1),
                Value::BigInt(hobt),
                Value::BigInt(rows),
                Value::SmallInt(0),
                Value::TinyInt(0),
                s("NONE"),
                b(false),
                s("OFF"),
            ]);
        }
    }
    let reset = cx.host.set_isolation(restore).map_err(super::base::host_err);
    result?;
    reset?;
    Ok(out)
}

/// sys.allocation_units: each index's IN_ROW_DATA unit (whose id is the partition's
/// hobt_id) and the LOB_DATA unit of its off-row MAX values, with the host's page counts.
/// The container is the partition (partition_id = hobt_id in Mesquite).
fn allocation_units(db: DbId, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let objects: Vec<Object> = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects.values().filter(|o| visible(db, o) && matches!(o.body, ObjectBody::Table(_))).cloned().collect()
    };
    let units = cx.host.allocation_units(db);
    let mut out = Vec::new();
    for o in &objects {
        let info = cx.table_info(db, o)?;
        for ix in &info.indexes {
            let hobt = ix.iref.hobt;
            // Storage numbers a heap's units like a clustered index's.
            let storage_index = ix.iref.index_id.max(1);
            let mine = units.iter().filter(|u| {
                u.allocation_unit_id == hobt
                    || (u.type_code != 1 && u.object_id == ix.iref.object_id && u.index_id == storage_index)
            });
            for u in mine {
                let desc = match u.type_code {
                    1 => "IN_ROW_DATA",
                    2 => "LOB_DATA",
                    _ => "ROW_OVERFLOW_DATA",
                };
                let id = |v: u64| Value::BigInt(v.min(i64::MAX as u64) as i64);
                out.push(vec![
                    id(u.allocation_unit_id),
                    Value::TinyInt(u.type_code),
                    s(desc),
                    id(hobt),
                    Value::Int(PRIMARY_DATA_SPACE_ID),
                    Value::BigInt(u.total_pages),
                    Value::BigInt(u.used_pages),
                    Value::BigInt(u.used_pages),
                ]);
            }
        }
    }
    Ok(out)
}

/// The server options of sys.configurations Mesquite shows: (configuration_id, name,
/// minimum, maximum, value, is_dynamic, is_advanced, description). Values are SQL
/// Server's defaults; 'max server memory (MB)' is the buffer pool's size.
type ConfigOption = (i32, &'static str, i32, i32, i32, bool, bool, &'static str);
const CONFIGURATIONS: &[ConfigOption] = &[
    (101, "recovery interval (min)", 0, 32767, 0, true, true, "Maximum recovery interval in minutes"),
    (102, "allow updates", 0, 1, 0, true, false, "Allow updates to system tables"),
    (103, "user connections", 0, 32767, 0, false, true, "Number of user connections allowed"),
    (106, "locks", 5000, i32::MAX, 0, false, true, "Number of locks for all users"),
    (107, "open objects", 0, i32::MAX, 0, false, true, "Number of open database objects"),
    (109, "fill factor (%)", 0, 100, 0, false, true, "Default fill factor percentage"),
    (115, "nested triggers", 0, 1, 1, true, false, "Allow triggers to be invoked within triggers"),
    (117, "remote access", 0, 1, 1, false, false, "Allow remote access"),
    (124, "default language", 0, 9999, 0, true, false, "default language"),
    (503, "max worker threads", 128, 65535, 0, true, true, "Maximum worker threads"),
    (505, "network packet size (B)", 512, 32767, 4096, true, true, "Network packet size"),
    (518, "show advanced options", 0, 1, 0, true, false, "show advanced options"),
    (544, "c2 audit mode", 0, 1, 0, false, true, "c2 audit mode"),
    (1126, "default full-text language", 0, i32::MAX, 1033, true, true, "default full-text language"),
    (1127, "two digit year cutoff", 1753, 9999, 2049, true, true, "two digit year cutoff"),
    (1519, "remote login timeout (s)", 0, i32::MAX, 10, true, false, "remote login timeout"),
    (1520, "remote query timeout (s)", 0, i32::MAX, 600, true, false, "remote query timeout"),
    (1534, "user options", 0, 32767, 0, true, false, "user options"),
    (1538, "cost threshold for parallelism", 0, 32767, 5, true, true, "cost threshold for parallelism"),
    (1539, "max degree of parallelism", 0, 32767, 0, true, true, "maximum degree of parallelism"),
    (1540, "min memory per query (KB)", 512, i32::MAX, 1024, true, true, "minimum memory per query (kBytes)"),
    (1543, "min server memory (MB)", 0, i32::MAX, 0, true, true, "Minimum size of server memory (MB)"),
    (1544, "max server memory (MB)", 128, i32::MAX, i32::MAX, true, true, "Maximum size of server memory (MB)"),
    (1562, "clr enabled", 0, 1, 0, true, false, "CLR user code execution enabled in the server"),
    (1568, "default trace enabled", 0, 1, 1, true, true, "Enable or disable the default trace"),
    (
        1576,
        "remote admin connections",
        0,
        1,
        0,
        true,
        false,
        "Dedicated Admin Connections are allowed from remote clients",
    ),
    (1579, "backup compression default", 0, 1, 0, true, false, "Enable compression of backups by default"),
    (
        1581,
        "optimize for ad hoc workloads",
        0,
        1,
        0,
        true,
        true,
        "When this option is set, plan cache size is further reduced for single-use adhoc OLTP workload.",
    ),
    (
        1589,
        "contained database authentication",
        0,
        1,
        0,
        true,
        false,
        "Enables contained databases and contained authentication",
    ),
    (16384, "Agent XPs", 0, 1, 0, true, true, "Enable or disable Agent XPs"),
    (16388, "Database Mail XPs", 0, 1, 0, true, true, "Enable or disable Database Mail XPs"),
    (16390, "xp_cmdshell", 0, 1, 0, true, true, "Enable or disable command shell"),
    (16391, "Ad Hoc Distributed Queries", 0, 1, 0, true, true, "Enable or disable Ad Hoc Distributed Queries"),
];

/// sys.configurations: every option with value = value_in_use (Mesquite has no
/// sp_configure / RECONFIGURE yet).
/// sys.sequences: each sequence's definition and the value it handed out last.
fn sequences(db: DbId, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let objects: Vec<Object> = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects.values().filter(|o| matches!(o.body, ObjectBody::Sequence(_))).cloned().collect()
    };
    let mut out = Vec::new();
    for o in objects {
        let ObjectBody::Sequence(q) = &o.body else { continue };
        let (current, last_used) = super::sequence::current_values(cx, db, &o);
        let number = |v: i128| Value::Decimal { value: v, precision: 38, scale: 0 };
        let (tid, _, precision, scale) = type_info(&q.ty);
        let exhausted = !q.cycle && last_used != Value::Null && {
            let (c, by) = (current.integer_part().unwrap_or(0), q.increment);
            c.checked_add(by).is_none_or(|n| n < q.minimum || n > q.maximum)
        };
        let mut row = super::sysviews::user_object_values(&o);
        row.extend([
            number(q.start),
            number(q.increment),
            number(q.minimum),
            number(q.maximum),
            Value::Bit(q.cycle),
            Value::Bit(q.cache.is_some()),
            q.cache.flatten().map(Value::Int).unwrap_or(Value::Null),
            Value::TinyInt(tid),
            Value::Int(types::sqltype::user_type_id(&q.ty)),
            Value::TinyInt(precision),
            Value::TinyInt(scale),
            current,
            Value::Bit(exhausted),
            last_used,
        ]);
        out.push(row);
    }
    Ok(out)
}

fn configurations(cx: &mut Cx) -> Vec<Row> {
    let pool_mb = cx.host.sys_info().map(|i| (i.buffer_pool_kb / 1024).min(i64::from(i32::MAX)) as i32);
    CONFIGURATIONS
        .iter()
        .map(|&(id, name, min, max, value, dynamic, advanced, desc)| {
            let value = if id == 1544 { pool_mb.unwrap_or(value) } else { value };
            vec![
                Value::Int(id),
                s(name),
                Value::Int(value),
                Value::Int(min),
                Value::Int(max),
                Value::Int(value),
                s(desc),
                b(dynamic),
                b(advanced),
            ]
        })
        .collect()
}

fn count_rows(cx: &mut Cx, index: &IndexRef) -> Result<i64, SqlError> {
    let mut n = 0i64;
    let mut last: Option<Vec<u8>> = None;
    let mut buf = Vec::new();
    loop {
        buf.clear();
        let lower = match &last {
            Some(k) => Bound::Excluded(k.as_slice()),
            None => Bound::Unbounded,
        };
        let more = cx.host.scan(index, lower, Bound::Unbounded, false, 512, &mut buf).map_err(super::base::host_err)?;
        n += buf.len() as i64;
        match buf.pop() {
            Some((k, _)) if more => last = Some(k),
            _ => return Ok(n),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Collations
// ---------------------------------------------------------------------------------------

/// sys.fn_helpcollations(): the collations Mesquite supports.
pub fn fn_helpcollations() -> Vec<Row> {
    types::Collation::all().iter().map(|c| vec![s(&c.name()), s(&c.description())]).collect()
}

pub fn fn_helpcollations_columns() -> Vec<OutCol> {
    cols(&[("name", sysname(), false), ("description", nv(1000), true)])
}
