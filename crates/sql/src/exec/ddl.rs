//! DDL: CREATE/ALTER/DROP of tables, indexes, views, procedures, functions and schemas;
//! TRUNCATE TABLE; temp tables and table variables (tables in tempdb with session-private
//! names). Catalog rows are written through the session's transaction (see
//! [`crate::catalog`]), so DDL rolls back with it.

use std::collections::HashSet;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::base::{host_err, TEMPDB};
use super::context::Cx;
use super::errors;
use super::expr::BExpr;
use super::query::{resolve_type, Binder, Scope};
use super::table::{
    for_each_stored_row, key_length_limit, nc_index_columns, nc_stored_columns, stored_columns, ForeignKeyInfo,
    IndexInfo, TableInfo,
};
use crate::ast::*;
use crate::catalog::{self, codec, Catalog, IndexKind, Object, ObjectBody, SharedCatalog};
use crate::host::{DbId, IndexRef};
use crate::lexer::TokenKind;
use types::sqltype::type_info;

/// Every constraint of a table with its object id.
pub fn constraint_names(t: &catalog::Table) -> Vec<(i32, String)> {
    let mut v = Vec::new();
    for c in &t.columns {
        if let Some(d) = &c.default {
            v.push((d.object_id, d.name.clone()));
        }
    }
    for c in &t.checks {
        v.push((c.object_id, c.name.clone()));
    }
    for f in &t.foreign_keys {
        v.push((f.object_id, f.name.clone()));
    }
    for i in &t.indexes {
        if let Some(id) = i.primary_key.or(i.unique_constraint) {
            v.push((id, i.name.clone().unwrap_or_default()));
        }
    }
    v
}

pub(super) fn now_datetime() -> Value {
    let (days, ticks) = super::base::now_utc();
    // days since 0001-01-01 -> since 1900-01-01; ticks (100 ns) -> 1/300 s.
    let d1900 = days as i64 - 693_595;
    let t300 = (ticks as u128 * 300 / 10_000_000) as u32;
    Value::DateTime { days: d1900 as i32, ticks: t300 }
}

/// Writes an object's catalog row (insert or replace).
pub fn write_object(cx: &mut Cx, db: DbId, o: &Object) -> Result<(), SqlError> {
    let index = cx.catalog_index(db)?;
    let key = catalog::object_key(o.id);
    let row = vec![Value::Binary(codec::encode_object(o))];
    if !cx.host.update(&index, &key, &row).map_err(host_err)? {
        cx.host.insert(&index, &key, &row).map_err(host_err)?;
    }
    let cat = cx.catalog(db)?;
    cat.inner.write().objects.insert(o.id, o.clone());
    cx.catalog_changed(db);
    Ok(())
}

pub(super) fn delete_object(cx: &mut Cx, db: DbId, id: i32) -> Result<(), SqlError> {
    let index = cx.catalog_index(db)?;
    cx.host.delete(&index, &catalog::object_key(id)).map_err(host_err)?;
    let cat = cx.catalog(db)?;
    cat.inner.write().objects.remove(&id);
    cx.catalog_changed(db);
    Ok(())
}

pub(super) fn allocate_id(cx: &mut Cx, db: DbId) -> Result<i32, SqlError> {
    let cat = cx.catalog(db)?;
    let id = cat.inner.write().allocate_object_id();
    Ok(id)
}

/// A table's indexes as the executor reaches them (storage references, key positions),
/// from the catalog alone: nothing bound, so DROP TABLE works whatever its expressions
/// name.
pub(super) fn index_infos(db: DbId, object_id: i32, t: &catalog::Table) -> Result<Vec<IndexInfo>, SqlError> {
    let cols = stored_columns(&t.columns);
    let mut indexes = Vec::new();
    for ix in &t.indexes {
        let key_cols = t.column_positions(ix.key_columns.iter().map(|(c, _)| *c))?;
        let desc: Vec<bool> = ix.key_columns.iter().map(|(_, d)| *d).collect();
        let included = t.column_positions(ix.included.iter().copied())?;
        let columns: Arc<[crate::host::StoredColumn]> = if ix.index_id <= 1 {
            cols.clone().into()
        } else {
            nc_stored_columns(&t.columns, &key_cols, &included).into()
        };
        let iref = IndexRef { db, hints: Default::default(), hobt: ix.hobt, object_id, index_id: ix.index_id, columns };
        let constraint = if ix.primary_key.is_some() {
            Some((ix.name.clone().unwrap_or_default(), "PRIMARY KEY"))
        } else if ix.unique_constraint.is_some() {
            Some((ix.name.clone().unwrap_or_default(), "UNIQUE KEY"))
        } else {
            None
        };
        let declared: usize =
            key_cols.iter().map(|&c| usize::try_from(type_info(&t.columns[c].ty).1).unwrap_or(usize::MAX / 64)).sum();
        let key_size = key_length_limit(ix.kind).map(|(limit, _)| (declared, limit)).filter(|(d, l)| d > l);
        indexes.push(IndexInfo {
            meta: ix.clone(),
            iref,
            key_cols,
            desc,
            included,
            filter: None,
            constraint,
            key_size,
        });
    }
    Ok(indexes)
}

/// Builds the executor's view of a table from its catalog row.
pub fn build_table_info(cx: &mut Cx, db: DbId, obj: &Object, cat: &Arc<SharedCatalog>) -> Result<TableInfo, SqlError> {
    let ObjectBody::Table(t) = &obj.body else {
        return Err(errors::invalid_object(&obj.name));
    };
    let db_name = cx.db_name(db).unwrap_or_default();
    let schema = cx.schema_name(db, obj.schema_id).unwrap_or_else(|| "dbo".into());
    let indexes = index_infos(db, obj.id, t)?;
    let display_name = if db == TEMPDB && obj.name.starts_with('#') {
        obj.name.split("___").next().unwrap_or(&obj.name).trim_end_matches('_').to_string()
    } else {
        obj.name.clone()
    };
    let mut info = TableInfo {
        db,
        db_name,
        object_id: obj.id,
        schema,
        name: obj.name.clone(),
        columns: t.columns.clone(),
        indexes,
        computed: vec![None; t.columns.len()],
        checks: Vec::new(),
        defaults: vec![None; t.columns.len()],
        foreign_keys: Vec::new(),
        referenced_by: Vec::new(),
        identity: t.identity.clone(),
        counters: cat.counters(obj.id),
        display_name,
        triggers: super::table::triggers_of(&cat.inner.read(), db, obj.id).into(),
    };
    // Bind computed columns, defaults, checks and filters over the table's row.
    let scope = Scope::from_cols(Some(&obj.name), &info.out_cols());
    let saved_db = cx.state.database;
    cx.state.database = db;
    let r = (|| -> Result<(), SqlError> {
        let mut b = Binder::new(cx);
        for (i, c) in t.columns.iter().enumerate() {
            if let Some(comp) = &c.computed {
                let e = crate::parse_expression(&comp.definition)?;
                info.computed[i] = Some(b.bind_expr(&e, &scope)?);
            }
            if let Some(d) = &c.default {
                let e = crate::parse_expression(&d.definition)?;
                info.defaults[i] = Some(b.bind_expr(&e, &Scope::default())?);
            }
        }
        for ck in &t.checks {
            let e = crate::parse_expression(&ck.definition)?;
            info.checks.push((ck.name.clone(), b.bind_expr(&e, &scope)?));
        }
        for (k, ix) in t.indexes.iter().enumerate() {
            if let Some(f) = &ix.filter {
                let e = crate::parse_expression(f)?;
                info.indexes[k].filter = Some(b.bind_expr(&e, &scope)?);
            }
        }
        Ok(())
    })();
    cx.state.database = saved_db;
    r?;
    // Foreign keys (one level: the referenced table's info without its own references).
    for fk in &t.foreign_keys {
        let g = cat.inner.read();
        let Some(parent) = g.objects.get(&fk.referenced_object_id).cloned() else {
            continue;
        };
        drop(g);
        let pinfo = if parent.id == obj.id { None } else { Some(shallow_table_info(cx, db, &parent, cat)?) };
        let pinfo = match pinfo {
            Some(p) => Arc::new(p),
            None => Arc::new(TableInfo { foreign_keys: Vec::new(), referenced_by: Vec::new(), ..info.clone() }),
        };
        let Some(pt) = parent.table() else { continue };
        info.foreign_keys.push(ForeignKeyInfo {
            name: fk.name.clone(),
            columns: t.column_positions(fk.columns.iter().copied())?,
            referenced: pinfo,
            referenced_columns: pt.column_positions(fk.referenced_columns.iter().copied())?,
        });
    }
    // Tables referencing this one.
    let children: Vec<Object> = {
        let g = cat.inner.read();
        g.objects
            .values()
            .filter(|o| o.table().is_some_and(|ct| ct.foreign_keys.iter().any(|f| f.referenced_object_id == obj.id)))
            .cloned()
            .collect()
    };
    for child in children {
        let cinfo = if child.id == obj.id {
            Arc::new(TableInfo { foreign_keys: Vec::new(), referenced_by: Vec::new(), ..info.clone() })
        } else {
            Arc::new(shallow_table_info(cx, db, &child, cat)?)
        };
        if let Some(ct) = child.table() {
            for f in ct.foreign_keys.iter().filter(|f| f.referenced_object_id == obj.id) {
                info.referenced_by.push((
                    f.name.clone(),
                    cinfo.clone(),
                    ct.column_positions(f.columns.iter().copied())?,
                    t.column_positions(f.referenced_columns.iter().copied())?,
                ));
            }
        }
    }
    Ok(info)
}

/// A table's info without foreign-key links (to break cycles).
fn shallow_table_info(cx: &mut Cx, db: DbId, obj: &Object, cat: &Arc<SharedCatalog>) -> Result<TableInfo, SqlError> {
    let ObjectBody::Table(t) = &obj.body else {
        return Err(errors::invalid_object(&obj.name));
    };
    let stripped =
        Object { body: ObjectBody::Table(catalog::Table { foreign_keys: Vec::new(), ..t.clone() }), ..obj.clone() };
    // Avoid scanning for children: build directly.
    let mut info = build_table_info_no_refs(cx, db, &stripped, cat)?;
    info.referenced_by.clear();
    Ok(info)
}

fn build_table_info_no_refs(
    cx: &mut Cx,
    db: DbId,
    obj: &Object,
    cat: &Arc<SharedCatalog>,
) -> Result<TableInfo, SqlError> {
    // A copy of the catalog without other objects, so no child lookup happens.
    let mut c = Catalog::new();
    c.schemas = cat.inner.read().schemas.clone();
    c.objects.insert(obj.id, obj.clone());
    let tmp = Arc::new(SharedCatalog::new(c));
    let mut info = build_table_info(cx, db, obj, &tmp)?;
    info.counters = cat.counters(obj.id);
    Ok(info)
}

pub(super) fn check_name_free(cx: &mut Cx, db: DbId, schema: i32, name: &str) -> Result<(), SqlError> {
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    if g.object_by_name(schema, name).is_some() {
        return Err(errors::object_exists(name));
    }
    for o in g.objects.values() {
        if let ObjectBody::Table(t) = &o.body {
            if o.schema_id == schema && constraint_names(t).iter().any(|(_, n)| n.eq_ignore_ascii_case(name)) {
                return Err(errors::object_exists(name));
            }
        }
    }
    Ok(())
}

pub(super) fn create_module(
    cx: &mut Cx,
    name: &ObjectName,
    mode: CreateMode,
    stmt: &Statement,
    body: impl FnOnce(catalog::Module) -> ObjectBody,
) -> Result<(), SqlError> {
    let (db, schema, n) = cx.resolve_name(name)?;
    if schema < 0 {
        return Err(errors::schema_not_found(name.schema()));
    }
    let definition = module_definition(&cx.source, stmt, mode);
    let existing = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.object_by_name(schema, &n).cloned()
    };
    let now = now_datetime();
    let obj = match (existing, mode) {
        (Some(_), CreateMode::Create) => return Err(errors::object_exists(&n)),
        (None, CreateMode::Alter) => return Err(errors::invalid_object(&n)),
        (Some(o), _) => Object { modify_date: now, body: body(catalog::Module { definition }), ..o },
        (None, _) => {
            check_name_free(cx, db, schema, &n)?;
            let id = allocate_id(cx, db)?;
            Object {
                id,
                schema_id: schema,
                name: n,
                create_date: now.clone(),
                modify_date: now,
                body: body(catalog::Module { definition }),
            }
        }
    };
    write_object(cx, db, &obj)
}

/// The text SQL Server keeps as sys.sql_modules.definition: the whole batch, comments
/// before and after the statement included, so that line numbers inside the module
/// (ERROR_LINE(), error messages) count from the start of the batch. A CREATE that shares
/// its batch with other statements (SQL Server refuses that batch with 111) keeps only its
/// own text. ALTER is stored as `CREATE` and CREATE OR ALTER without `OR ALTER`, as SQL
/// Server stores them, so the text re-parses as a CREATE.
pub(super) fn module_definition(source: &str, stmt: &Statement, mode: CreateMode) -> String {
    let span = stmt.span;
    let own = span.text(source);
    if own.is_empty() {
        // A statement built without source text (not from a batch).
        return stmt.to_string();
    }
    // Only comments, white space (and, after it, semicolons) around the statement.
    let trivia = |text: &str, semicolons: bool| {
        crate::lexer::tokenize(text).is_ok_and(|tokens| {
            tokens.iter().all(|t| t.kind == TokenKind::Eof || (semicolons && t.kind == TokenKind::Semicolon))
        })
    };
    let (start, end) = (span.start as usize, span.end as usize);
    let from = if trivia(&source[..start], false) { 0 } else { start };
    let to = if trivia(&source[end..], true) { source.len() } else { end };
    let text = &source[from..to];
    let at = start - from;
    if mode == CreateMode::Create {
        return text.to_string();
    }
    let Ok(tokens) = crate::lexer::tokenize(&text[at..]) else { return text.to_string() };
    let piece = |i: usize| tokens.get(i).map(|t| (at + t.span.start as usize, at + t.span.end as usize));
    match (mode, piece(0), piece(1), piece(2)) {
        (CreateMode::Alter, Some((s0, e0)), ..) => format!("{}CREATE{}", &text[..s0], &text[e0..]),
        (CreateMode::CreateOrAlter, _, Some((s1, e1)), Some((s2, e2))) => {
            format!("{}{}{}", &text[..s1], &text[e1..s2], &text[e2..])
        }
        _ => text.to_string(),
    }
}

struct PendingIndex {
    name: Option<String>,
    clustered: Option<bool>,
    unique: bool,
    primary: bool,
    constraint: bool,
    columns: Vec<(String, bool)>,
    filter: Option<String>,
}

/// CREATE TABLE (also SELECT INTO and table variables).
pub fn create_table(cx: &mut Cx, ct: &CreateTable) -> Result<Arc<TableInfo>, SqlError> {
    let user_name = ct.name.name().value.clone();
    let is_temp = user_name.starts_with('#');
    let (db, schema, name) = if is_temp {
        let internal = if user_name.starts_with("##") { user_name.clone() } else { cx.new_temp_name(&user_name) };
        (TEMPDB, catalog::SCHEMA_DBO, internal)
    } else {
        cx.resolve_name(&ct.name)?
    };
    if schema < 0 {
        return Err(errors::schema_not_found(ct.name.schema()));
    }
    if is_temp && cx.state.temp_tables.created_at(&user_name, cx.frames.len()) {
        return Err(errors::object_exists(&user_name));
    }
    check_name_free(cx, db, schema, &name)?;
    // New character columns take the collation of the table's database (tempdb's, the
    // instance's, for #temp tables).
    let collation = cx.collation_of(db);
    let t = create_table_in(cx, db, schema, &name, &ct.elements, &user_name, collation)?;
    warn_key_lengths(cx, &t, None);
    if user_name.starts_with("##") {
        cx.state.temp_tables.created_global(&name);
    } else if is_temp {
        cx.state.temp_tables.insert(&user_name, cx.frames.len(), name);
    }
    Ok(t)
}

/// Warning 1945 (severity 10) for each index of `t` (or the one named `only`) whose key
/// may be longer than SQL Server's limit: such a row is refused (1946) when written.
pub(super) fn warn_key_lengths(cx: &mut Cx, t: &TableInfo, only: Option<&str>) {
    for ix in &t.indexes {
        let name = ix.meta.name.as_deref().unwrap_or_default();
        let (Some((declared, limit)), Some((_, kind))) = (ix.key_size, key_length_limit(ix.meta.kind)) else {
            continue;
        };
        if only.is_some_and(|o| !o.eq_ignore_ascii_case(name)) {
            continue;
        }
        let e = SqlError::new(
            1945,
            10,
            1,
            format!("Warning! The maximum key length for a {kind} index is {limit} bytes. The index '{name}' has maximum length of {declared} bytes. For some combination of large values, the insert/update operation will fail."),
        );
        let _ = cx.sink.message(&crate::results::Message { error: e, info: true });
    }
}

/// DECLARE @t TABLE (...): a table in tempdb that lives as long as the batch.
pub fn create_table_variable(cx: &mut Cx, var: &str, elements: &[TableElement]) -> Result<Arc<TableInfo>, SqlError> {
    let name = cx.new_temp_name(&format!("#{}", var.trim_start_matches('@')));
    // Unlike a #temp table, a table variable's columns take the current database's
    // collation.
    let collation = cx.db_collation();
    let t =
        super::run::atomic(cx, |cx| create_table_in(cx, TEMPDB, catalog::SCHEMA_DBO, &name, elements, var, collation))?;
    Ok(t)
}

pub(super) fn default_constraint_name(table: &str, col: &str, id: i32, prefix: &str) -> String {
    let t: String = table.trim_start_matches('#').chars().take(9).collect();
    let c: String = col.chars().take(9).collect();
    if c.is_empty() {
        format!("{prefix}__{t}__{id:08X}")
    } else {
        format!("{prefix}__{t}__{c}__{id:08X}")
    }
}

fn create_table_in(
    cx: &mut Cx,
    db: DbId,
    schema: i32,
    name: &str,
    elements: &[TableElement],
    display: &str,
    collation: types::Collation,
) -> Result<Arc<TableInfo>, SqlError> {
    let object_id = allocate_id(cx, db)?;
    let mut columns: Vec<catalog::Column> = Vec::new();
    let mut identity = None;
    let mut pending: Vec<PendingIndex> = Vec::new();
    let mut checks: Vec<(Option<String>, String)> = Vec::new();
    let mut fks: Vec<(Option<String>, Vec<String>, Reference)> = Vec::new();
    // Columns written NULL: a PRIMARY KEY on one is an error, not a NOT NULL column.
    let mut declared_null: Vec<String> = Vec::new();
    for el in elements {
        match el {
            TableElement::Column(cd) => {
                let cname = cd.name.value.clone();
                if columns.iter().any(|c| c.name.eq_ignore_ascii_case(&cname)) {
                    return Err(SqlError::new(
                        2705,
                        16,
                        3,
                        format!("Column names in each table must be unique. Column name '{cname}' in table '{display}' is specified more than once."),
                    ));
                }
                let column_id = columns.len() as i32 + 1;
                if cd.nullable() == Some(true) {
                    declared_null.push(cname.clone());
                }
                let (col, col_identity, declared) =
                    define_column(cx, db, display, display, cd, column_id, identity.is_some(), collation)?;
                if col_identity.is_some() {
                    identity = col_identity;
                }
                for (name, primary, clustered) in declared.keys {
                    pending.push(PendingIndex {
                        name,
                        clustered,
                        unique: true,
                        primary,
                        constraint: true,
                        columns: vec![(cname.clone(), false)],
                        filter: None,
                    });
                }
                for (name, clustered) in declared.indexes {
                    pending.push(PendingIndex {
                        name: Some(name),
                        clustered,
                        unique: false,
                        primary: false,
                        constraint: false,
                        columns: vec![(cname.clone(), false)],
                        filter: None,
                    });
                }
                checks.extend(declared.checks.into_iter().map(|(name, expr)| (name, format!("({expr})"))));
                fks.extend(declared.references.into_iter().map(|(name, r)| (name, vec![cname.clone()], r.clone())));
                columns.push(col);
            }
            TableElement::Constraint(tc) => {
                let cname = tc.name.as_ref().map(|n| n.value.clone());
                match &tc.kind {
                    ConstraintKind::PrimaryKey { clustered, columns: cols, .. }
                    | ConstraintKind::Unique { clustered, columns: cols, .. } => {
                        let primary = matches!(tc.kind, ConstraintKind::PrimaryKey { .. });
                        pending.push(PendingIndex {
                            name: cname,
                            clustered: *clustered,
                            unique: true,
                            primary,
                            constraint: true,
                            columns: cols
                                .iter()
                                .map(|c| (c.name.value.clone(), c.direction == Some(SortDirection::Desc)))
                                .collect(),
                            filter: None,
                        });
                    }
                    ConstraintKind::Check { expr, .. } => checks.push((cname, format!("({expr})"))),
                    ConstraintKind::ForeignKey { columns: cols, reference } => {
                        fks.push((cname, cols.iter().map(|c| c.value.clone()).collect(), reference.clone()))
                    }
                    ConstraintKind::Default { .. } => {
                        return Err(errors::not_supported("A DEFAULT constraint in CREATE TABLE"))
                    }
                }
            }
            TableElement::Index(ti) => pending.push(PendingIndex {
                name: Some(ti.name.value.clone()),
                clustered: ti.clustered,
                unique: ti.unique,
                primary: false,
                constraint: false,
                columns: ti
                    .columns
                    .iter()
                    .map(|c| (c.name.value.clone(), c.direction == Some(SortDirection::Desc)))
                    .collect(),
                filter: None,
            }),
        }
    }
    if columns.is_empty() {
        return Err(SqlError::new(4901, 16, 1, "A table must have at least one column.".to_string()));
    }
    // Computed column types come from their expressions.
    resolve_computed_types(cx, db, &mut columns, display)?;
    if pending.iter().filter(|p| p.primary).count() > 1 {
        return Err(SqlError::new(
            8110,
            16,
            0,
            format!("Cannot add multiple PRIMARY KEY constraints to table '{display}'."),
        ));
    }
    // PRIMARY KEY columns become NOT NULL, unless declared NULL (8111, 1750).
    for p in pending.iter().filter(|p| p.primary) {
        for (c, _) in &p.columns {
            if let Some(col) = columns.iter_mut().find(|x| x.name.eq_ignore_ascii_case(c)) {
                if declared_null.iter().any(|n| n.eq_ignore_ascii_case(c)) {
                    return Err(constraint_failed(cx, pk_on_nullable(display)));
                }
                if col.nullable && col.computed.is_none() {
                    col.nullable = false;
                }
            }
        }
    }
    let mut obj_table = catalog::Table {
        columns,
        indexes: Vec::new(),
        checks: Vec::new(),
        foreign_keys: Vec::new(),
        identity,
        max_column_id_used: 0,
        next_row_id: 1,
    };
    obj_table.max_column_id_used = obj_table.next_column_id() - 1;
    // The clustered index: an explicit CLUSTERED, else the PRIMARY KEY unless it says
    // NONCLUSTERED; otherwise a heap.
    let clustered_pos = pending
        .iter()
        .position(|p| p.clustered == Some(true))
        .or_else(|| pending.iter().position(|p| p.primary && p.clustered.is_none()));
    if pending.iter().filter(|p| p.clustered == Some(true)).count() > 1 {
        return Err(SqlError::new(
            8112,
            16,
            0,
            format!("Cannot add more than one clustered index for constraints on table '{display}'."),
        ));
    }
    let mut order: Vec<usize> = Vec::new();
    if let Some(c) = clustered_pos {
        order.push(c);
    }
    order.extend((0..pending.len()).filter(|i| Some(*i) != clustered_pos));
    let stored = stored_columns(&obj_table.columns);
    if clustered_pos.is_none() {
        let hobt = cx.host.create_index(db, object_id, 0, &stored).map_err(host_err)?;
        obj_table.indexes.push(catalog::Index::heap(hobt));
    }
    let mut next_index_id = 2;
    for (k, &pi) in order.iter().enumerate() {
        let p = &pending[pi];
        let clustered = clustered_pos == Some(pi) && k == 0;
        let index_id = if clustered {
            1
        } else {
            let id = next_index_id;
            next_index_id += 1;
            id
        };
        let mut key_columns = Vec::new();
        for (c, desc) in &p.columns {
            let pos = obj_table.columns.iter().position(|x| x.name.eq_ignore_ascii_case(c)).ok_or_else(|| {
                SqlError::new(1911, 16, 1, format!("Column name '{c}' does not exist in the target table or view."))
            })?;
            if obj_table.columns[pos].ty.is_lob() {
                return Err(errors::invalid_key_column(c, display));
            }
            key_columns.push((obj_table.column_id_at(pos), *desc));
        }
        let constraint_id = if p.constraint { Some(allocate_id(cx, db)?) } else { None };
        let name = match (&p.name, constraint_id) {
            (Some(n), _) => n.clone(),
            (None, Some(id)) => default_constraint_name(display, "", id, if p.primary { "PK" } else { "UQ" }),
            (None, None) => format!("IX_{index_id}"),
        };
        let key_cols = obj_table.column_positions(key_columns.iter().map(|(c, _)| *c))?;
        let cols = if clustered { stored.clone() } else { nc_stored_columns(&obj_table.columns, &key_cols, &[]) };
        let hobt = cx.host.create_index(db, object_id, index_id, &cols).map_err(host_err)?;
        obj_table.indexes.push(catalog::Index {
            index_id,
            name: Some(name),
            kind: if clustered { IndexKind::Clustered } else { IndexKind::Nonclustered },
            unique: p.unique,
            primary_key: if p.primary { constraint_id } else { None },
            unique_constraint: if !p.primary && p.constraint { constraint_id } else { None },
            key_columns,
            included: Vec::new(),
            filter: p.filter.clone(),
            hobt,
        });
    }
    for (n, def) in checks {
        let id = allocate_id(cx, db)?;
        let name = n.unwrap_or_else(|| default_constraint_name(display, "", id, "CK"));
        obj_table.checks.push(catalog::CheckConstraint { object_id: id, name, definition: def });
    }
    for (n, cols, r) in fks {
        let id = allocate_id(cx, db)?;
        let fk_name = n.unwrap_or_else(|| default_constraint_name(display, "", id, "FK"));
        let owner = FkOwner { object_id, schema, name, display, table: &obj_table };
        let fk = resolve_fk(cx, db, &owner, fk_name, id, &cols, &r)?;
        obj_table.foreign_keys.push(fk);
    }
    let now = now_datetime();
    let obj = Object {
        id: object_id,
        schema_id: schema,
        name: name.to_string(),
        create_date: now.clone(),
        modify_date: now,
        body: ObjectBody::Table(obj_table),
    };
    write_object(cx, db, &obj)?;
    // Validate the bound parts (checks, computed columns) now.
    let info = cx.table_info(db, &obj)?;
    Ok(info)
}

/// 2749 unless `ty` can be an IDENTITY column's type.
pub(super) fn check_identity_type(ty: &SqlType, column: &str) -> Result<(), SqlError> {
    let integral = ty.is_exact_numeric() && !matches!(ty, SqlType::Money | SqlType::SmallMoney | SqlType::Bit);
    if !integral || ty.decimal_params().is_some_and(|(_, s)| s > 0) {
        return Err(SqlError::new(
            2749,
            16,
            2,
            format!("Identity column '{column}' must be of data type int, bigint, smallint, tinyint, or decimal or numeric with a scale of 0, and constrained to be nonnullable."),
        ));
    }
    Ok(())
}

/// A column definition's column before its options (CREATE TABLE and ALTER TABLE ADD):
/// its type or computed definition, nullability, sparseness and collation (`default`
/// without COLLATE); 173 with neither.
pub(super) fn column_from_def(
    cx: &Cx,
    cd: &ColumnDef,
    column_id: i32,
    default: types::Collation,
) -> Result<catalog::Column, SqlError> {
    let cname = &cd.name.value;
    let (ty, computed) = match (&cd.data_type, &cd.computed) {
        (Some(dt), _) => (resolve_type(dt)?, None),
        (None, Some(c)) => {
            (SqlType::Int, Some(catalog::ComputedColumn { definition: c.expr.to_string(), persisted: c.persisted }))
        }
        (None, None) => {
            return Err(SqlError::new(
                173,
                15,
                1,
                format!("The definition for column '{cname}' must include a data type."),
            ))
        }
    };
    Ok(catalog::Column {
        column_id,
        name: cname.clone(),
        ty,
        nullable: cd.nullable().unwrap_or(true),
        is_identity: false,
        sparse: cd.is_sparse(),
        default: None,
        computed,
        collation: column_collation(cx, cd, &ty, default)?,
    })
}

/// A column definition's collation: its COLLATE (DATABASE_DEFAULT is the current
/// database's collation, which for a #temp table differs from tempdb's), else `default`
/// (the collation of the table's database; the current database's for a table
/// variable). 448 for an unknown name. None for the default collation and for a column
/// that is not of a character type (SQL Server refuses COLLATE there; the error is not
/// modelled).
pub(super) fn column_collation(
    cx: &Cx,
    cd: &ColumnDef,
    ty: &SqlType,
    default: types::Collation,
) -> Result<Option<types::Collation>, SqlError> {
    let name = cd.options.iter().rev().find_map(|o| match o {
        crate::ast::ColumnOption::Collate(n) => Some(n),
        _ => None,
    });
    let c = match name {
        Some(n) => super::query::resolve_collation(&n.value, cx.db_collation())?,
        None => default,
    };
    Ok((c != types::Collation::DEFAULT && ty.is_character()).then_some(c))
}

/// The constraints a column definition declares inline, for the caller to add once the
/// column exists (CREATE TABLE with the table's own constraints, ALTER TABLE ADD through
/// its ADD CONSTRAINT paths).
#[derive(Default)]
pub(super) struct DeclaredConstraints<'a> {
    /// PRIMARY KEY / UNIQUE: (name, primary, clustered).
    pub keys: Vec<(Option<String>, bool, Option<bool>)>,
    pub checks: Vec<(Option<String>, &'a Expr)>,
    pub references: Vec<(Option<String>, &'a Reference)>,
    /// `INDEX name [CLUSTERED | NONCLUSTERED]`.
    pub indexes: Vec<(String, Option<bool>)>,
}

/// A column definition as CREATE TABLE and ALTER TABLE ADD both read it: the catalog
/// column with its IDENTITY (2744 when the table already has one) and DEFAULT (a new
/// constraint id; the name from `name_base` unless given) applied, NOT NULL when it is
/// an identity or a PRIMARY KEY, SPARSE checked (1731); the identity it declares; and
/// the constraints it declares. `default_collation` is the collation of a character
/// column without COLLATE (its table's database's; the current database's for a table
/// variable, whose table lives in tempdb).
#[allow(clippy::too_many_arguments)]
pub(super) fn define_column<'a>(
    cx: &mut Cx,
    db: DbId,
    display: &str,
    name_base: &str,
    cd: &'a ColumnDef,
    column_id: i32,
    table_has_identity: bool,
    default_collation: types::Collation,
) -> Result<(catalog::Column, Option<catalog::Identity>, DeclaredConstraints<'a>), SqlError> {
    let cname = cd.name.value.clone();
    let mut col = column_from_def(cx, cd, column_id, default_collation)?;
    let mut identity = None;
    let mut declared = DeclaredConstraints::default();
    let name_of = |n: &Option<Ident>| n.as_ref().map(|n| n.value.clone());
    for o in &cd.options {
        match o {
            ColumnOption::Identity { seed_increment, .. } => {
                if table_has_identity || identity.is_some() {
                    return Err(SqlError::new(
                        2744,
                        16,
                        2,
                        format!("Multiple identity columns specified for table '{display}'. Only one identity column per table is allowed."),
                    ));
                }
                check_identity_type(&col.ty, &cname)?;
                let (seed, increment) = match seed_increment {
                    Some((s, i)) => (const_int(cx, s)?, const_int(cx, i)?),
                    None => (1, 1),
                };
                col.is_identity = true;
                col.nullable = false;
                identity = Some(catalog::Identity { column_id, seed, increment, last: None });
            }
            ColumnOption::Default { name, expr } => {
                let id = allocate_id(cx, db)?;
                let name = name_of(name).unwrap_or_else(|| default_constraint_name(name_base, &cname, id, "DF"));
                col.default = Some(catalog::DefaultConstraint { object_id: id, name, definition: format!("({expr})") });
            }
            ColumnOption::PrimaryKey { name, clustered, .. } => {
                // A column declared NULL stays nullable, and cannot be a key (8111, 1750).
                if cd.nullable() == Some(true) {
                    return Err(constraint_failed(cx, pk_on_nullable(display)));
                }
                col.nullable = false;
                declared.keys.push((name_of(name), true, *clustered));
            }
            ColumnOption::Unique { name, clustered, .. } => declared.keys.push((name_of(name), false, *clustered)),
            ColumnOption::Check { name, expr, .. } => declared.checks.push((name_of(name), expr)),
            ColumnOption::References { name, reference } => declared.references.push((name_of(name), reference)),
            ColumnOption::Index { name, clustered } => declared.indexes.push((name.value.clone(), *clustered)),
            _ => {}
        }
    }
    if col.sparse && !col.nullable {
        return Err(SqlError::new(1731, 16, 1, format!("Cannot create the sparse column '{cname}' in the table '{display}' because an option or data type specified is not valid. A sparse column must be nullable and cannot have the ROWGUIDCOL, IDENTITY, or FILESTREAM properties. A sparse column cannot be of the following data types: text, ntext, image, geometry, geography, or user-defined type with default value.")));
    }
    Ok((col, identity, declared))
}

pub(super) fn resolve_computed_types(
    cx: &mut Cx,
    db: DbId,
    columns: &mut [catalog::Column],
    table: &str,
) -> Result<(), SqlError> {
    if !columns.iter().any(|c| c.computed.is_some()) {
        return Ok(());
    }
    let scope = Scope::from_cols(
        Some(table),
        &columns.iter().map(|c| super::plan::OutCol::new(c.name.clone(), c.ty, true)).collect::<Vec<_>>(),
    );
    let saved = cx.state.database;
    cx.state.database = db;
    let r = (|| {
        let mut b = Binder::new(cx);
        for c in columns.iter_mut() {
            if let Some(comp) = &c.computed {
                let e = crate::parse_expression(&comp.definition)?;
                let bound = b.bind_expr(&e, &scope)?;
                c.ty = bound.ty();
                c.nullable = true;
            }
        }
        Ok(())
    })();
    cx.state.database = saved;
    r
}

/// The table a FOREIGN KEY is being defined on: its definition so far (with the foreign
/// keys added before this one), which may not be in the catalog yet (CREATE TABLE).
pub(super) struct FkOwner<'a> {
    pub object_id: i32,
    pub schema: i32,
    pub name: &'a str,
    /// The name messages show.
    pub display: &'a str,
    pub table: &'a catalog::Table,
}

/// The FOREIGN KEY `r` of `owner`, checked as SQL Server checks it when it is created
/// (`check_actions`). It may reference its own table.
pub(super) fn resolve_fk(
    cx: &mut Cx,
    db: DbId,
    owner: &FkOwner,
    name: String,
    id: i32,
    cols: &[String],
    r: &Reference,
) -> Result<catalog::ForeignKey, SqlError> {
    let table = owner.table;
    let (rdb, rschema, rname) = cx.resolve_name(&r.table)?;
    if rdb != db {
        return Err(SqlError::new(1763, 16, 0, "Cross-database foreign key references are not supported.".to_string()));
    }
    let own = rschema == owner.schema && rname.eq_ignore_ascii_case(owner.name);
    let (ref_id, ref_cols_def): (i32, Vec<catalog::Column>) = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        match g.object_by_name(rschema, &rname) {
            _ if own => (owner.object_id, table.columns.clone()),
            Some(o) => match o.table() {
                Some(t) => (o.id, t.columns.clone()),
                None => return Err(errors::invalid_object(&rname)),
            },
            None => {
                return Err(SqlError::new(
                    1767,
                    16,
                    0,
                    format!("Foreign key '{name}' references invalid table '{rname}'."),
                ))
            }
        }
    };
    let mut columns = Vec::new();
    for c in cols {
        let pos = table.columns.iter().position(|x| x.name.eq_ignore_ascii_case(c)).ok_or_else(|| {
            SqlError::new(
                1769,
                16,
                1,
                format!("Foreign key '{name}' references invalid column '{c}' in referencing table."),
            )
        })?;
        columns.push(table.columns[pos].column_id);
    }
    let mut referenced_columns = Vec::new();
    if r.columns.is_empty() {
        // The referenced table's primary key.
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        let referenced = if own { Some(table) } else { g.objects.get(&ref_id).and_then(|o| o.table()) };
        let pk = referenced.and_then(|t| t.indexes.iter().find(|i| i.primary_key.is_some()).cloned());
        match pk {
            Some(ix) => referenced_columns = ix.key_columns.iter().map(|(c, _)| *c).collect(),
            None => {
                return Err(SqlError::new(
                    1773,
                    16,
                    0,
                    format!("Foreign key '{name}' has implicit reference to object '{rname}' which does not have a primary key defined on it."),
                ))
            }
        }
    } else {
        for c in &r.columns {
            let pos = ref_cols_def.iter().position(|x| x.name.eq_ignore_ascii_case(&c.value)).ok_or_else(|| {
                SqlError::new(
                    1770,
                    16,
                    0,
                    format!(
                        "Foreign key '{name}' references invalid column '{}' in referenced table '{rname}'.",
                        c.value
                    ),
                )
            })?;
            referenced_columns.push(ref_cols_def[pos].column_id);
        }
    }
    if referenced_columns.len() != columns.len() {
        return Err(SqlError::new(
            8140,
            16,
            0,
            format!("More than one key specified in column level FOREIGN KEY constraint, table '{rname}'."),
        ));
    }
    let act = |a: Option<ReferentialAction>| match a {
        Some(ReferentialAction::Cascade) => catalog::ReferentialAction::Cascade,
        Some(ReferentialAction::SetNull) => catalog::ReferentialAction::SetNull,
        Some(ReferentialAction::SetDefault) => catalog::ReferentialAction::SetDefault,
        _ => catalog::ReferentialAction::NoAction,
    };
    let fk = catalog::ForeignKey {
        object_id: id,
        name,
        columns,
        referenced_object_id: ref_id,
        referenced_columns,
        on_delete: act(r.on_delete),
        on_update: act(r.on_update),
    };
    if let Err(e) = check_actions(cx, db, owner.object_id, owner.display, table, &fk) {
        return Err(constraint_failed(cx, e));
    }
    Ok(fk)
}

/// The rules for a foreign key's referential actions (each error is followed by 1750):
/// SET NULL needs every referencing column nullable (1761), SET DEFAULT a default for
/// each one that is not (1762), and a cascading action (CASCADE, SET NULL, SET DEFAULT)
/// may not give a DELETE or an UPDATE of any table a second path to a table it cascades
/// to, nor a cycle, a self-reference included (1785): the cascades one DELETE or UPDATE
/// starts form a tree.
fn check_actions(
    cx: &mut Cx,
    db: DbId,
    object_id: i32,
    display: &str,
    table: &catalog::Table,
    fk: &catalog::ForeignKey,
) -> Result<(), SqlError> {
    use catalog::ReferentialAction as A;
    let actions = [fk.on_delete, fk.on_update];
    let referencing = || fk.columns.iter().filter_map(|&c| table.columns.iter().find(|x| x.column_id == c));
    // A computed column cannot be set: only NO ACTION and CASCADE.
    if let Some(c) = referencing().find(|c| c.computed.is_some()) {
        let (kind, action) = if matches!(fk.on_delete, A::SetNull | A::SetDefault) {
            ("delete", fk.on_delete)
        } else {
            ("update", fk.on_update)
        };
        if matches!(action, A::SetNull | A::SetDefault) {
            return Err(SqlError::new(
                1765,
                16,
                0,
                format!(
                    "Foreign key '{}' creation failed. Only NO ACTION and CASCADE referential {kind} actions are allowed for referencing computed column '{}'.",
                    fk.name, c.name
                ),
            ));
        }
    }
    if actions.contains(&A::SetNull) && referencing().any(|c| !c.nullable) {
        return Err(SqlError::new(
            1761,
            16,
            0,
            format!("Cannot create the foreign key \"{}\" with the SET NULL referential action, because one or more referencing columns are not nullable.", fk.name),
        ));
    }
    if actions.contains(&A::SetDefault) && referencing().any(|c| !c.nullable && c.default.is_none()) {
        return Err(SqlError::new(
            1762,
            16,
            0,
            format!("Cannot create the foreign key \"{}\" with the SET DEFAULT referential action, because one or more referencing not-nullable columns lack a default constraint.", fk.name),
        ));
    }
    if actions.iter().all(|a| *a == A::NoAction) {
        return Ok(());
    }
    // Every foreign key of the database as (referenced, referencing, on delete, on
    // update): this table's as defined so far, the others' from the catalog.
    let mut edges: Vec<(i32, i32, A, A)> = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects
            .values()
            .filter(|o| o.id != object_id)
            .filter_map(|o| o.table().map(|t| (o.id, t)))
            .flat_map(|(id, t)| {
                t.foreign_keys.iter().map(move |f| (f.referenced_object_id, id, f.on_delete, f.on_update))
            })
            .collect()
    };
    edges.extend(table.foreign_keys.iter().map(|f| (f.referenced_object_id, object_id, f.on_delete, f.on_update)));
    let (parent, child) = (fk.referenced_object_id, object_id);
    // The DELETE tree, then the UPDATE tree.
    for (event, own) in actions.into_iter().enumerate() {
        let action = |e: &(i32, i32, A, A)| if event == 0 { e.2 } else { e.3 };
        if own == A::NoAction {
            continue;
        }
        let cascading: Vec<(i32, i32)> =
            edges.iter().filter(|e| action(e) != A::NoAction).map(|e| (e.0, e.1)).collect();
        // The tables whose DELETE/UPDATE reaches the parent (the parent too), all they
        // reach already, and the child with all it reaches: one table in both is a
        // second path (or a cycle) through the new foreign key.
        let reach = |from: Vec<i32>, forward: bool| -> HashSet<i32> {
            let mut seen: HashSet<i32> = from.iter().copied().collect();
            let mut todo = from;
            while let Some(x) = todo.pop() {
                for &(p, c) in &cascading {
                    let (a, b) = if forward { (p, c) } else { (c, p) };
                    if a == x && seen.insert(b) {
                        todo.push(b);
                    }
                }
            }
            seen
        };
        let above = reach(vec![parent], false);
        let reached = reach(above.into_iter().collect(), true);
        let below = reach(vec![child], true);
        if below.iter().any(|t| reached.contains(t)) {
            return Err(SqlError::new(
                1785,
                16,
                0,
                format!("Introducing FOREIGN KEY constraint '{}' on table '{display}' may cause cycles or multiple cascade paths. Specify ON DELETE NO ACTION or ON UPDATE NO ACTION, or modify other FOREIGN KEY constraints.", fk.name),
            ));
        }
    }
    Ok(())
}

pub(super) fn const_int(cx: &mut Cx, e: &Expr) -> Result<i128, SqlError> {
    let (v, ty) = super::run::eval_standalone(cx, e)?;
    Ok(i128::from(super::run::int_value(&v, &ty)?))
}

pub(super) fn create_index(cx: &mut Cx, ci: &CreateIndex) -> Result<(), SqlError> {
    if ci.columnstore {
        return Err(errors::not_supported("COLUMNSTORE indexes"));
    }
    let (db, o) = cx.resolve_object(&ci.table)?.ok_or_else(|| errors::invalid_object(&errors::written(&ci.table)))?;
    let t = match &o.body {
        ObjectBody::Table(t) => t,
        ObjectBody::View(_) if ci.filter.is_some() => {
            return Err(SqlError::new(
                10610,
                16,
                1,
                format!(
                    "Filtered index '{}' cannot be created on object '{}' because it is not a user table. Filtered indexes are only supported on tables. If you are trying to create a filtered index on a view, consider creating an indexed view with the filter expression incorporated in the view definition.",
                    ci.name.value,
                    errors::written(&ci.table)
                ),
            ))
        }
        ObjectBody::View(m) if !m.definition.to_ascii_uppercase().contains("SCHEMABINDING") => {
            return Err(SqlError::new(
                1939,
                16,
                1,
                format!("Cannot create index on view '{}' because the view is not schema bound.", errors::written(&ci.table)),
            ))
        }
        ObjectBody::View(_) => return Err(errors::not_supported("Indexed views")),
        _ => return Err(errors::invalid_object(&errors::written(&ci.table))),
    };
    if t.indexes.iter().any(|i| i.name.as_ref().is_some_and(|n| n.eq_ignore_ascii_case(&ci.name.value))) {
        return Err(SqlError::new(
            1913,
            16,
            1,
            format!(
                "The operation failed because an index or statistics with name '{}' already exists on table '{}'.",
                ci.name.value,
                errors::written(&ci.table)
            ),
        ));
    }
    let info = cx.table_info(db, &o)?;
    let clustered = ci.clustered == Some(true);
    if clustered && !info.is_heap() {
        return Err(SqlError::new(
            1902,
            16,
            3,
            format!("Cannot create more than one clustered index on table '{}'. Drop the existing clustered index '{}' before creating another.", o.name, info.indexes[0].meta.name.clone().unwrap_or_default()),
        ));
    }
    let col_id = |name: &str| -> Result<i32, SqlError> {
        t.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)).map(|c| c.column_id).ok_or_else(|| {
            SqlError::new(1911, 16, 1, format!("Column name '{name}' does not exist in the target table or view."))
        })
    };
    let mut key_columns = Vec::new();
    for c in &ci.columns {
        let id = col_id(&c.name.value)?;
        if t.columns.iter().any(|x| x.column_id == id && x.ty.is_lob()) {
            return Err(errors::invalid_key_column(&c.name.value, &o.name));
        }
        key_columns.push((id, c.direction == Some(SortDirection::Desc)));
    }
    let mut included = Vec::new();
    for c in &ci.include {
        included.push(col_id(&c.value)?);
    }
    let mut t = t.clone();
    let filter = ci.filter.as_ref().map(|f| format!("({f})"));
    if clustered {
        // Rebuild the heap as a clustered index: a new primary index, every row moved,
        // nonclustered indexes rebuilt with the new locators.
        let stored = stored_columns(&t.columns);
        let hobt = cx.host.create_index(db, o.id, 1, &stored).map_err(host_err)?;
        let old_primary = info.indexes[0].iref.clone();
        t.indexes[0] = catalog::Index {
            index_id: 1,
            name: Some(ci.name.value.clone()),
            kind: IndexKind::Clustered,
            unique: ci.unique,
            primary_key: None,
            unique_constraint: None,
            key_columns,
            included: Vec::new(),
            filter: None,
            hobt,
        };
        let mut new_ncs = Vec::new();
        for k in 1..t.indexes.len() {
            let cols = nc_index_columns(&t, &t.indexes[k])?;
            let index_id = t.indexes[k].index_id;
            t.indexes[k].hobt = cx.host.create_index(db, o.id, index_id, &cols).map_err(host_err)?;
            new_ncs.push(t.indexes[k].hobt);
        }
        let rows = scan_all_rows(cx, &info)?;
        for ix in &info.indexes {
            cx.host.drop_index(&ix.iref).map_err(host_err)?;
        }
        let _ = old_primary;
        let obj = Object { modify_date: now_datetime(), body: ObjectBody::Table(t), ..o };
        write_object(cx, db, &obj)?;
        let new_info = cx.table_info(db, &obj)?;
        warn_key_lengths(cx, &new_info, Some(&ci.name.value));
        for r in rows {
            new_info.insert_row(&r, cx)?;
        }
        return Ok(());
    }
    let index_id = t.indexes.iter().map(|i| i.index_id).max().unwrap_or(1).max(1) + 1;
    let key_cols = t.column_positions(key_columns.iter().map(|(c, _)| *c))?;
    let inc = t.column_positions(included.iter().copied())?;
    let hobt =
        cx.host.create_index(db, o.id, index_id, &nc_stored_columns(&t.columns, &key_cols, &inc)).map_err(host_err)?;
    t.indexes.push(catalog::Index {
        index_id,
        name: Some(ci.name.value.clone()),
        kind: IndexKind::Nonclustered,
        unique: ci.unique,
        primary_key: None,
        unique_constraint: None,
        key_columns,
        included,
        filter,
        hobt,
    });
    let obj = Object { modify_date: now_datetime(), body: ObjectBody::Table(t), ..o };
    write_object(cx, db, &obj)?;
    // Fill the new index from the table's rows.
    let new_info = cx.table_info(db, &obj)?;
    let ix = new_info.indexes.last().cloned().ok_or_else(|| errors::invalid_object("index"))?;
    warn_key_lengths(cx, &new_info, Some(&ci.name.value));
    for_each_stored_row(cx, &new_info.indexes[0].iref, |cx, pk, mut row| {
        new_info.fill_computed(&mut row, cx)?;
        if !new_info.in_filter(&ix, &row, cx)? {
            return Ok(());
        }
        new_info.check_key_size(&ix, &row)?;
        let (k, r) = new_info.nc_entry(&ix, &row, &pk)?;
        match cx.host.insert(&ix.iref, &k, &r) {
            Ok(()) => Ok(()),
            Err(crate::host::HostError::Duplicate) => {
                let vals: Vec<String> = ix.key_cols.iter().map(|&c| row[c].to_string()).collect();
                Err(SqlError::new(
                    1505,
                    16,
                    1,
                    format!(
                        "The CREATE UNIQUE INDEX statement terminated because a duplicate key was found for the object name '{}' and the index name '{}'. The duplicate key value is ({}).",
                        new_info.qualified_name(),
                        ci.name.value,
                        vals.join(", ")
                    ),
                ))
            }
            Err(crate::host::HostError::Sql(e)) => Err(e),
        }
    })
}

pub fn scan_all_rows(cx: &mut Cx, info: &TableInfo) -> Result<Vec<Vec<Value>>, SqlError> {
    let mut rows = Vec::new();
    for_each_stored_row(cx, &info.indexes[0].iref, |_, _, r| {
        rows.push(r);
        Ok(())
    })?;
    Ok(rows)
}

pub(super) fn drop_index(cx: &mut Cx, item: &DropIndexItem, if_exists: bool) -> Result<(), SqlError> {
    let (table_name, index_name) = match &item.table {
        Some(t) => (t.clone(), item.index.name().value.clone()),
        None => {
            // Legacy `DROP INDEX t.ix`.
            let mut parts = item.index.parts.clone();
            let ix = parts.pop().map(|p| p.value).unwrap_or_default();
            (ObjectName { parts }, ix)
        }
    };
    let Some((db, o)) = cx.resolve_object(&table_name)? else {
        if if_exists {
            return Ok(());
        }
        return Err(errors::invalid_object(&errors::written(&table_name)));
    };
    let ObjectBody::Table(t) = &o.body else {
        return Err(errors::invalid_object(&errors::written(&table_name)));
    };
    let pos = t.indexes.iter().position(|i| i.name.as_ref().is_some_and(|n| n.eq_ignore_ascii_case(&index_name)));
    let Some(pos) = pos else {
        if if_exists {
            return Ok(());
        }
        return Err(SqlError::new(
            3701,
            11,
            7,
            format!(
                "Cannot drop the index '{}.{}', because it does not exist or you do not have permission.",
                o.name, index_name
            ),
        ));
    };
    let ix = &t.indexes[pos];
    if ix.primary_key.is_some() || ix.unique_constraint.is_some() {
        return Err(SqlError::new(
            3723,
            16,
            4,
            format!("An explicit DROP INDEX is not allowed on index '{}.{}'. It is being used for PRIMARY KEY constraint enforcement.", o.name, index_name),
        ));
    }
    if ix.index_id == 1 {
        return Err(errors::not_supported("Dropping a clustered index"));
    }
    let info = cx.table_info(db, &o)?;
    cx.host.drop_index(&info.indexes[pos].iref).map_err(host_err)?;
    let mut t = t.clone();
    t.indexes.remove(pos);
    let obj = Object { modify_date: now_datetime(), body: ObjectBody::Table(t), ..o };
    write_object(cx, db, &obj)
}

/// Frees a table's storage (the catalog row is the caller's business).
pub fn drop_storage(cx: &mut Cx, t: &TableInfo) -> Result<(), SqlError> {
    super::run::atomic(cx, |cx| {
        for ix in &t.indexes {
            cx.host.drop_index(&ix.iref).map_err(host_err)?;
        }
        delete_object(cx, t.db, t.object_id)
    })
}

#[allow(dead_code)]
fn _unused(_: &BExpr) {}

// A table's layout, built from its catalog entry and cached by catalog version.
impl Cx<'_> {
    /// The executor's view of a table (cached per catalog version).
    pub fn table_info(&mut self, db: DbId, obj: &Object) -> Result<Arc<TableInfo>, SqlError> {
        let cat = self.catalog(db)?;
        let version = cat.version();
        if let Some((v, t)) = self.state.table_cache.get(&(db, obj.id)) {
            if *v == version {
                return Ok(t.clone());
            }
        }
        let t = Arc::new(build_table_info(self, db, obj, &cat)?);
        self.state.table_cache.insert((db, obj.id), (version, t.clone()));
        Ok(t)
    }
}

/// 1750 after the error that made a constraint fail (reported first).
pub(super) fn constraint_failed(cx: &mut Cx, e: SqlError) -> SqlError {
    cx.preceding.push(e);
    SqlError::new(1750, 16, 0, "Could not create constraint or index. See previous errors.")
}

/// 8111: a PRIMARY KEY on a column that is (or is declared) NULL.
pub(super) fn pk_on_nullable(display: &str) -> SqlError {
    SqlError::new(8111, 16, 1, format!("Cannot define PRIMARY KEY constraint on nullable column in table '{display}'."))
}
