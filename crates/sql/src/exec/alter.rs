//! ALTER TABLE: ADD columns and constraints, DROP COLUMN / CONSTRAINT, ALTER COLUMN.
//!
//! Each action edits a working copy of the table's catalog definition. Changes that
//! only add or remove constraints rewrite the catalog row, after checking the existing
//! rows against the new definition (a new CHECK or FOREIGN KEY, unless WITH NOCHECK).
//! Changes to the columns or to the set of indexes rebuild the table: every row is read
//! in the old layout and mapped to the new one (see [`Source`]: a new column's default,
//! identity or computed value, a converted value, a dropped column left out), checked
//! against the new definition, and written into new storage for every index; the old
//! storage is dropped. All of it runs in the statement's transaction, so an error leaves
//! the table as it was.
//!
//! Column ids are stable, as in SQL Server: dropping a column leaves a gap in column_id
//! (sys.columns), and an added column gets max_column_id_used + 1, so a dropped id is
//! never reused. Indexes, keys and foreign keys name columns by id; the executor's row
//! positions come from `catalog::Table::column_positions`.

use std::collections::HashSet;
use std::sync::Arc;

use types::{Length, SqlError, SqlType, Value};

use super::base::host_err;
use super::context::Cx;
use super::ddl::{self, allocate_id, default_constraint_name, now_datetime, write_object};
use super::errors;
use super::query::resolve_type;
use super::table::{identity_value, nc_index_columns, stored_columns, TableInfo};
use crate::ast::*;
use crate::catalog::{self, IndexKind, Object, ObjectBody};
use crate::host::{DbId, IndexRef};

/// Where a column of the new layout takes its values from, per existing row.
#[derive(Clone, Debug)]
enum Source {
    /// The old row's column at this position, unchanged.
    Old(usize),
    /// The old row's column, converted from its old type (ALTER COLUMN).
    Convert(usize, SqlType),
    /// A new column filled with its default (NOT NULL, or WITH VALUES).
    Default,
    /// A new column left NULL.
    Null,
    /// A new IDENTITY column: seed, seed + increment, ... in the table's row order.
    Identity,
    /// A new computed column (a persisted one is computed for each row).
    Computed,
}

/// The statement's working state.
struct Work {
    db: DbId,
    obj: Object,
    /// The table as it is before the statement (old layout).
    info: Arc<TableInfo>,
    /// The new definition.
    t: catalog::Table,
    /// One per column of `t`.
    sources: Vec<Source>,
    /// Columns or indexes change: the table is rebuilt.
    rebuild: bool,
    /// Existing rows are checked against new constraints.
    check_constraints: bool,
    /// Names of the unique indexes this statement adds (a duplicate is 1505).
    new_unique: Vec<String>,
    /// Nonclustered index storage to free when the table is not rebuilt.
    freed: Vec<IndexRef>,
}

pub fn alter_table(cx: &mut Cx, at: &AlterTable) -> Result<(), SqlError> {
    let (db, o) = cx.resolve_object(&at.name)?.ok_or_else(|| errors::invalid_object(&errors::written(&at.name)))?;
    let ObjectBody::Table(t) = &o.body else {
        return Err(errors::invalid_object(&errors::written(&at.name)));
    };
    let info = cx.table_info(db, &o)?;
    let mut w = Work {
        db,
        t: t.clone(),
        sources: (0..t.columns.len()).map(Source::Old).collect(),
        obj: o.clone(),
        info,
        rebuild: false,
        check_constraints: true,
        new_unique: Vec::new(),
        freed: Vec::new(),
    };
    match &at.action {
        AlterTableAction::Add { with_check, elements } => {
            w.check_constraints = *with_check != Some(false);
            for el in elements {
                add_element(cx, &mut w, el)?;
            }
        }
        AlterTableAction::Drop(items) => {
            for it in items {
                if it.column {
                    drop_column(cx, &mut w, it)?;
                } else {
                    drop_constraint(cx, &mut w, it)?;
                }
            }
            w.check_constraints = false;
        }
        AlterTableAction::AlterColumn { name, data_type, nullable, collation, .. } => {
            alter_column(cx, &mut w, name, data_type, *nullable, collation.as_ref())?;
            w.check_constraints = false;
        }
        AlterTableAction::AlterColumnProperty { .. } => {
            return Err(errors::not_supported("ALTER COLUMN ADD/DROP of a column property"))
        }
        // Constraint checking on/off, table options and REBUILD change nothing
        // Mesquite stores.
        AlterTableAction::Trigger { enable, names } => {
            let names: Option<Vec<String>> = names.as_ref().map(|ns| ns.iter().map(|n| n.value.clone()).collect());
            return super::trigger::enable_triggers(cx, *enable, names.as_deref(), &at.name, true);
        }
        AlterTableAction::CheckConstraints { .. } | AlterTableAction::Set(_) | AlterTableAction::Rebuild(_) => {
            return Ok(())
        }
    }
    finish(cx, w)
}

/// The name SQL Server's messages use for the table.
fn table_name(w: &Work) -> String {
    w.info.display_name.clone()
}

fn has_rows(cx: &mut Cx, w: &Work) -> Result<bool, SqlError> {
    let mut out = Vec::new();
    cx.host
        .scan(&w.info.indexes[0].iref, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded, false, 1, &mut out)
        .map_err(host_err)?;
    Ok(!out.is_empty())
}

fn column_pos(t: &catalog::Table, name: &str) -> Option<usize> {
    t.columns.iter().position(|c| c.name.eq_ignore_ascii_case(name))
}

// ---------------------------------------------------------------------------------------
// ADD

fn add_element(cx: &mut Cx, w: &mut Work, el: &TableElement) -> Result<(), SqlError> {
    match el {
        TableElement::Column(cd) => add_column(cx, w, cd),
        TableElement::Constraint(tc) => {
            let name = tc.name.as_ref().map(|n| n.value.clone());
            match &tc.kind {
                ConstraintKind::Check { expr, .. } => add_check(cx, w, name, expr),
                ConstraintKind::ForeignKey { columns, reference } => {
                    let cols: Vec<String> = columns.iter().map(|c| c.value.clone()).collect();
                    add_foreign_key(cx, w, name, &cols, reference)
                }
                ConstraintKind::Default { expr, column } => {
                    let pos = column_pos(&w.t, &column.value).filter(|&p| w.t.columns[p].computed.is_none());
                    let Some(pos) = pos else {
                        let e = SqlError::new(
                            1752,
                            16,
                            0,
                            format!(
                                "Column '{}' in table '{}' is invalid for creating a default constraint.",
                                column.value, w.obj.name
                            ),
                        );
                        return Err(ddl::constraint_failed(cx, e));
                    };
                    if w.t.columns[pos].is_identity {
                        let e = SqlError::new(
                            1754,
                            16,
                            0,
                            format!(
                                "Defaults cannot be created on columns with an IDENTITY attribute. Table '{}', column '{}'.",
                                w.obj.name, w.t.columns[pos].name
                            ),
                        );
                        return Err(ddl::constraint_failed(cx, e));
                    }
                    if w.t.columns[pos].default.is_some() {
                        let e = SqlError::new(1781, 16, 1, "Column already has a DEFAULT bound to it.");
                        return Err(ddl::constraint_failed(cx, e));
                    }
                    let id = allocate_id(cx, w.db)?;
                    let name = name.unwrap_or_else(|| default_constraint_name(&w.obj.name, &column.value, id, "DF"));
                    w.t.columns[pos].default =
                        Some(catalog::DefaultConstraint { object_id: id, name, definition: format!("({expr})") });
                    Ok(())
                }
                ConstraintKind::PrimaryKey { clustered, columns, .. }
                | ConstraintKind::Unique { clustered, columns, .. } => {
                    let primary = matches!(tc.kind, ConstraintKind::PrimaryKey { .. });
                    let cols: Vec<(String, bool)> = columns
                        .iter()
                        .map(|c| (c.name.value.clone(), c.direction == Some(SortDirection::Desc)))
                        .collect();
                    add_key(cx, w, name, primary, *clustered, &cols)
                }
            }
        }
        TableElement::Index(_) => Err(errors::not_supported("ALTER TABLE ADD INDEX")),
    }
}

fn add_column(cx: &mut Cx, w: &mut Work, cd: &ColumnDef) -> Result<(), SqlError> {
    let cname = cd.name.value.clone();
    let display = table_name(w);
    if column_pos(&w.t, &cname).is_some() {
        return Err(SqlError::new(
            2705,
            16,
            4,
            format!("Column names in each table must be unique. Column name '{cname}' in table '{display}' is specified more than once."),
        ));
    }
    let column_id = w.t.next_column_id();
    w.t.max_column_id_used = column_id;
    let name_base = w.obj.name.clone();
    let (col, identity, declared) = ddl::define_column(
        cx,
        w.db,
        &display,
        &name_base,
        cd,
        column_id,
        w.t.identity.is_some(),
        cx.collation_of(w.db),
    )?;
    if !declared.indexes.is_empty() {
        // An inline INDEX is CREATE TABLE syntax.
        return Err(errors::not_supported("An inline INDEX in ALTER TABLE ADD"));
    }
    if identity.is_some() {
        w.t.identity = identity;
    }
    let with_values = cd.options.iter().any(|o| matches!(o, ColumnOption::WithValues));
    let source = if col.computed.is_some() {
        Source::Computed
    } else if col.is_identity {
        Source::Identity
    } else if col.default.is_some() && (!col.nullable || with_values) {
        Source::Default
    } else {
        Source::Null
    };
    if matches!(source, Source::Null) && !col.nullable && has_rows(cx, w)? {
        return Err(SqlError::new(
            4901,
            16,
            1,
            format!("ALTER TABLE only allows columns to be added that can contain nulls, or have a DEFAULT definition specified, or the column being added is an identity or timestamp column, or alternatively if none of the previous conditions are satisfied the table must be empty to allow addition of this column. Column '{cname}' cannot be added to non-empty table '{display}' because it does not satisfy these conditions."),
        ));
    }
    w.t.columns.push(col);
    w.sources.push(source);
    w.rebuild = true;
    ddl::resolve_computed_types(cx, w.db, &mut w.t.columns, &display)?;
    // Column constraints, once the column exists.
    for (name, expr) in declared.checks {
        add_check(cx, w, name, expr)?;
    }
    for (name, reference) in declared.references {
        add_foreign_key(cx, w, name, std::slice::from_ref(&cname), reference)?;
    }
    for (name, primary, clustered) in declared.keys {
        add_key(cx, w, name, primary, clustered, &[(cname.clone(), false)])?;
    }
    Ok(())
}

fn add_check(cx: &mut Cx, w: &mut Work, name: Option<String>, expr: &Expr) -> Result<(), SqlError> {
    let id = allocate_id(cx, w.db)?;
    let name = name.unwrap_or_else(|| default_constraint_name(&w.obj.name, "", id, "CK"));
    w.t.checks.push(catalog::CheckConstraint { object_id: id, name, definition: format!("({expr})") });
    Ok(())
}

fn add_foreign_key(
    cx: &mut Cx,
    w: &mut Work,
    name: Option<String>,
    cols: &[String],
    reference: &Reference,
) -> Result<(), SqlError> {
    let id = allocate_id(cx, w.db)?;
    let name = name.unwrap_or_else(|| default_constraint_name(&w.obj.name, "", id, "FK"));
    let display = table_name(w);
    let owner = ddl::FkOwner {
        object_id: w.obj.id,
        schema: w.obj.schema_id,
        name: &w.obj.name,
        display: &display,
        table: &w.t,
    };
    let fk = ddl::resolve_fk(cx, w.db, &owner, name, id, cols, reference)?;
    // The other order of 2113: a cascade cannot reach a table whose INSTEAD OF trigger
    // replaces the action it cascades.
    let blocked = w.info.triggers.iter().any(|tr| {
        tr.def.instead_of
            && ((tr.def.delete && fk.on_delete != catalog::ReferentialAction::NoAction)
                || (tr.def.update && fk.on_update != catalog::ReferentialAction::NoAction))
    });
    if blocked {
        let e = SqlError::new(
            1787,
            16,
            0,
            format!(
                "Cannot define foreign key constraint '{}' with cascaded DELETE or UPDATE on table '{}' because the table has an INSTEAD OF DELETE or UPDATE TRIGGER defined on it.",
                fk.name,
                table_name(w)
            ),
        );
        return Err(ddl::constraint_failed(cx, e));
    }
    w.t.foreign_keys.push(fk);
    Ok(())
}

/// ADD PRIMARY KEY / UNIQUE: a new unique index (the clustered one when asked, or for a
/// PRIMARY KEY on a heap), filled by the rebuild.
fn add_key(
    cx: &mut Cx,
    w: &mut Work,
    name: Option<String>,
    primary: bool,
    clustered: Option<bool>,
    cols: &[(String, bool)],
) -> Result<(), SqlError> {
    let display = table_name(w);
    if primary && w.t.indexes.iter().any(|i| i.primary_key.is_some()) {
        let e = SqlError::new(1779, 16, 0, format!("Table '{display}' already has a primary key defined on it."));
        return Err(ddl::constraint_failed(cx, e));
    }
    let mut key_columns = Vec::new();
    for (c, desc) in cols {
        let pos = column_pos(&w.t, c).ok_or_else(|| {
            SqlError::new(1911, 16, 1, format!("Column name '{c}' does not exist in the target table or view."))
        })?;
        let col = &w.t.columns[pos];
        if primary && col.nullable {
            return Err(ddl::constraint_failed(cx, ddl::pk_on_nullable(&display)));
        }
        if col.ty.is_lob() {
            return Err(ddl::constraint_failed(cx, errors::invalid_key_column(c, &display)));
        }
        key_columns.push((col.column_id, *desc));
    }
    let heap = w.t.indexes[0].kind == IndexKind::Heap;
    let make_clustered = clustered == Some(true) || (primary && clustered.is_none() && heap);
    if make_clustered && !heap {
        let e = SqlError::new(
            1902,
            16,
            3,
            format!(
                "Cannot create more than one clustered index on table '{display}'. Drop the existing clustered index '{}' before creating another.",
                w.t.indexes[0].name.clone().unwrap_or_default()
            ),
        );
        return Err(ddl::constraint_failed(cx, e));
    }
    let constraint_id = allocate_id(cx, w.db)?;
    let name = name
        .unwrap_or_else(|| default_constraint_name(&w.obj.name, "", constraint_id, if primary { "PK" } else { "UQ" }));
    if ddl::constraint_names(&w.t).iter().any(|(_, n)| n.eq_ignore_ascii_case(&name)) {
        return Err(ddl::constraint_failed(cx, errors::object_exists(&name)));
    }
    let index_id =
        if make_clustered { 1 } else { w.t.indexes.iter().map(|i| i.index_id).max().unwrap_or(1).max(1) + 1 };
    let index = catalog::Index {
        index_id,
        name: Some(name.clone()),
        kind: if make_clustered { IndexKind::Clustered } else { IndexKind::Nonclustered },
        unique: true,
        primary_key: if primary { Some(constraint_id) } else { None },
        unique_constraint: if primary { None } else { Some(constraint_id) },
        key_columns,
        included: Vec::new(),
        filter: None,
        // Storage is created by the rebuild.
        hobt: 0,
    };
    if make_clustered {
        w.t.indexes[0] = index;
    } else {
        w.t.indexes.push(index);
    }
    w.new_unique.push(name);
    w.rebuild = true;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// DROP

fn drop_constraint(cx: &mut Cx, w: &mut Work, it: &DropTableItem) -> Result<(), SqlError> {
    let n = &it.name.value;
    let t = &mut w.t;
    if let Some(p) = t.checks.iter().position(|c| c.name.eq_ignore_ascii_case(n)) {
        t.checks.remove(p);
        return Ok(());
    }
    if let Some(p) = t.foreign_keys.iter().position(|c| c.name.eq_ignore_ascii_case(n)) {
        t.foreign_keys.remove(p);
        return Ok(());
    }
    if let Some(c) = t.columns.iter_mut().find(|c| c.default.as_ref().is_some_and(|d| d.name.eq_ignore_ascii_case(n))) {
        c.default = None;
        return Ok(());
    }
    let key = t.indexes.iter().position(|i| {
        (i.primary_key.is_some() || i.unique_constraint.is_some())
            && i.name.as_deref().is_some_and(|x| x.eq_ignore_ascii_case(n))
    });
    let Some(k) = key else {
        if it.if_exists {
            return Ok(());
        }
        cx.preceding.push(SqlError::new(3728, 16, 1, format!("'{n}' is not a constraint.")));
        return Err(SqlError::new(3727, 16, 0, "Could not drop constraint. See previous errors."));
    };
    // A key another table's FOREIGN KEY references stays.
    let key_cols: HashSet<i32> = t.indexes[k].key_columns.iter().map(|(c, _)| *c).collect();
    if let Some((child, fk)) = referencing_foreign_keys(cx, w)?
        .into_iter()
        .find(|(_, fk)| fk.referenced_columns.iter().copied().collect::<HashSet<_>>() == key_cols)
    {
        cx.preceding.push(SqlError::new(
            3725,
            16,
            0,
            format!(
                "The constraint '{n}' is being referenced by table '{child}', foreign key constraint '{}'.",
                fk.name
            ),
        ));
        return Err(SqlError::new(3727, 16, 0, "Could not drop constraint. See previous errors."));
    }
    let t = &mut w.t;
    if t.indexes[k].index_id == 1 {
        // The clustered key goes: the table becomes a heap.
        t.indexes[0] = catalog::Index::heap(0);
        w.rebuild = true;
    } else {
        let removed = t.indexes.remove(k);
        if let Some(ix) = w.info.indexes.iter().find(|i| i.meta.index_id == removed.index_id) {
            w.freed.push(ix.iref.clone());
        }
    }
    Ok(())
}

/// Foreign keys of other tables (and this one) that reference this table: (table name,
/// key).
fn referencing_foreign_keys(cx: &mut Cx, w: &Work) -> Result<Vec<(String, catalog::ForeignKey)>, SqlError> {
    let cat = cx.catalog(w.db)?;
    let g = cat.inner.read();
    let mut out = Vec::new();
    for o in g.objects.values() {
        let fks = if o.id == w.obj.id {
            &w.t.foreign_keys
        } else if let Some(t) = o.table() {
            &t.foreign_keys
        } else {
            continue;
        };
        for fk in fks.iter().filter(|f| f.referenced_object_id == w.obj.id) {
            out.push((o.name.clone(), fk.clone()));
        }
    }
    Ok(out)
}

fn drop_column(cx: &mut Cx, w: &mut Work, it: &DropTableItem) -> Result<(), SqlError> {
    let n = &it.name.value;
    let display = table_name(w);
    let Some(pos) = column_pos(&w.t, n) else {
        if it.if_exists {
            return Ok(());
        }
        return Err(SqlError::new(
            4924,
            16,
            1,
            format!("ALTER TABLE DROP COLUMN failed because column '{n}' does not exist in table '{display}'."),
        ));
    };
    let name = w.t.columns[pos].name.clone();
    let deps = dependents(cx, w, pos)?;
    if !deps.is_empty() {
        return Err(refuse(cx, &deps, "DROP", &name));
    }
    if w.t.columns.len() == 1 {
        return Err(SqlError::new(
            4923,
            16,
            1,
            format!("ALTER TABLE DROP COLUMN failed because '{name}' is the only data column in table '{display}'. A table must have at least one data column."),
        ));
    }
    // The other columns keep their column_id (SQL Server leaves the gap), so indexes,
    // keys and foreign keys, which name columns by id, need no change; nothing that
    // names this column is left (dependents refused it above).
    let t = &mut w.t;
    let id = t.columns[pos].column_id;
    t.max_column_id_used = t.max_column_id_used.max(id);
    t.columns.remove(pos);
    w.sources.remove(pos);
    if t.identity.as_ref().is_some_and(|idn| idn.column_id == id) {
        t.identity = None;
    }
    w.rebuild = true;
    Ok(())
}

/// Something that depends on a column (5074 names it).
struct Dependent {
    /// "object" (a constraint), "index" or "column" (a computed column).
    what: &'static str,
    name: String,
    kind: DepKind,
}

#[derive(PartialEq)]
enum DepKind {
    Default,
    Check,
    Unique,
    PrimaryKey,
    Index,
    ForeignKey,
    Computed,
}

/// Does a constraint or computed column's expression text mention the column?
fn mentions(definition: &str, column: &str) -> bool {
    let Ok(e) = crate::parse_expression(definition) else {
        return false;
    };
    let mut found = false;
    super::query::walk_expr(&e, &mut |x| {
        if let ExprKind::Column(n) = &x.kind {
            if n.name().value.eq_ignore_ascii_case(column) {
                found = true;
            }
        }
    });
    found
}

fn dependents(cx: &mut Cx, w: &Work, pos: usize) -> Result<Vec<Dependent>, SqlError> {
    let t = &w.t;
    let col = &t.columns[pos];
    let id = col.column_id;
    let mut out = Vec::new();
    let dep = |what, name: &str, kind| Dependent { what, name: name.to_string(), kind };
    if let Some(d) = &col.default {
        out.push(dep("object", &d.name, DepKind::Default));
    }
    for c in &t.checks {
        if mentions(&c.definition, &col.name) {
            out.push(dep("object", &c.name, DepKind::Check));
        }
    }
    for ix in &t.indexes {
        if !ix.key_columns.iter().any(|(c, _)| *c == id) && !ix.included.contains(&id) {
            continue;
        }
        let name = ix.name.clone().unwrap_or_default();
        if ix.primary_key.is_some() {
            out.push(dep("object", &name, DepKind::PrimaryKey));
        } else if ix.unique_constraint.is_some() {
            out.push(dep("object", &name, DepKind::Unique));
        } else {
            out.push(dep("index", &name, DepKind::Index));
        }
    }
    for fk in &t.foreign_keys {
        if fk.columns.contains(&id) {
            out.push(dep("object", &fk.name, DepKind::ForeignKey));
        }
    }
    for (_, fk) in referencing_foreign_keys(cx, w)? {
        if fk.referenced_columns.contains(&id) && !out.iter().any(|d| d.name == fk.name) {
            out.push(dep("object", &fk.name, DepKind::ForeignKey));
        }
    }
    for c in &t.columns {
        if let Some(comp) = &c.computed {
            if !c.name.eq_ignore_ascii_case(&col.name) && mentions(&comp.definition, &col.name) {
                out.push(dep("column", &c.name, DepKind::Computed));
            }
        }
    }
    Ok(out)
}

/// 5074 for each dependent, then 4922.
fn refuse(cx: &mut Cx, deps: &[Dependent], verb: &str, column: &str) -> SqlError {
    for d in deps {
        let e = SqlError::new(5074, 16, 1, format!("The {} '{}' is dependent on column '{column}'.", d.what, d.name));
        cx.preceding.push(e);
    }
    SqlError::new(
        4922,
        16,
        9,
        format!("ALTER TABLE {verb} COLUMN {column} failed because one or more objects access this column."),
    )
}

// ---------------------------------------------------------------------------------------
// ALTER COLUMN

fn is_var_length(ty: &SqlType) -> bool {
    matches!(ty, SqlType::VarChar { .. } | SqlType::NVarChar { .. } | SqlType::VarBinary { .. })
}

fn var_length(ty: &SqlType) -> Option<Length> {
    match ty {
        SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => Some(*len),
        _ => None,
    }
}

fn alter_column(
    cx: &mut Cx,
    w: &mut Work,
    name: &Ident,
    data_type: &DataType,
    nullable: Option<bool>,
    collation: Option<&Ident>,
) -> Result<(), SqlError> {
    let display = table_name(w);
    let Some(pos) = column_pos(&w.t, &name.value) else {
        return Err(SqlError::new(
            4924,
            16,
            1,
            format!(
                "ALTER TABLE ALTER COLUMN failed because column '{}' does not exist in table '{display}'.",
                name.value
            ),
        ));
    };
    let old = w.t.columns[pos].clone();
    if old.computed.is_some() {
        return Err(SqlError::new(
            4928,
            16,
            1,
            format!("Cannot alter column '{}' because it is 'COMPUTED'.", old.name),
        ));
    }
    let ty = resolve_type(data_type)?;
    // Without COLLATE the column takes its database's collation, as in SQL Server.
    let new_collation = match collation {
        Some(n) => super::query::resolve_collation(&n.value, cx.db_collation())?,
        None => cx.collation_of(w.db),
    };
    let new_collation = (new_collation != types::Collation::DEFAULT && ty.is_character()).then_some(new_collation);
    // A new collation changes every key and comparison of the column: an index or
    // constraint on it blocks the change as a type change does.
    let same_type = std::mem::discriminant(&ty) == std::mem::discriminant(&old.ty) && new_collation == old.collation;
    // Without NULL / NOT NULL the column becomes nullable (ANSI_NULL_DFLT_ON), except an
    // identity column, which never allows NULL.
    let new_nullable = nullable.unwrap_or(!old.is_identity);
    // SQL Server's rules for what may depend on an altered column.
    let grows = match (var_length(&old.ty), var_length(&ty)) {
        (Some(Length::Bounded(a)), Some(Length::Bounded(b))) => b >= a,
        (Some(_), Some(Length::Max)) => true,
        _ => false,
    };
    let length_only = same_type && is_var_length(&ty);
    let blocking: Vec<Dependent> = dependents(cx, w, pos)?
        .into_iter()
        .filter(|d| match d.kind {
            DepKind::Default => !same_type,
            DepKind::Check | DepKind::Unique => !length_only,
            DepKind::Index => !(length_only && grows),
            DepKind::PrimaryKey | DepKind::ForeignKey | DepKind::Computed => true,
        })
        .collect();
    if !blocking.is_empty() {
        return Err(refuse(cx, &blocking, "ALTER", &old.name));
    }
    let col = &mut w.t.columns[pos];
    col.ty = ty;
    col.nullable = new_nullable;
    col.collation = new_collation;
    if old.ty != ty {
        w.sources[pos] = match &w.sources[pos] {
            Source::Old(p) => Source::Convert(*p, old.ty),
            other => other.clone(),
        };
    }
    // Rows are rewritten in the new layout, and checked for NULLs when the column stops
    // allowing them.
    w.rebuild = true;
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Applying the new definition

fn finish(cx: &mut Cx, mut w: Work) -> Result<(), SqlError> {
    let db = w.db;
    let added_identity = w.sources.iter().any(|s| matches!(s, Source::Identity));
    let validate = w.check_constraints && has_constraint_changes(&w);
    let old_rows = if w.rebuild || validate { ddl::scan_all_rows(cx, &w.info)? } else { Vec::new() };
    if w.rebuild {
        let stored = stored_columns(&w.t.columns);
        for k in 0..w.t.indexes.len() {
            let ix = &w.t.indexes[k];
            let cols = if ix.index_id <= 1 { stored.clone() } else { nc_index_columns(&w.t, ix)? };
            let index_id = ix.index_id;
            w.t.indexes[k].hobt = cx.host.create_index(db, w.obj.id, index_id, &cols).map_err(host_err)?;
        }
    }
    if let Some(id) = &mut w.t.identity {
        if added_identity {
            id.last = None;
        }
    }
    let obj = Object { modify_date: now_datetime(), body: ObjectBody::Table(w.t.clone()), ..w.obj.clone() };
    // Bind the new definition (checks, defaults, computed columns) before storing it.
    let cat = cx.catalog(db)?;
    let new_info = ddl::build_table_info(cx, db, &obj, &cat)?;
    write_object(cx, db, &obj)?;
    let new_info = Arc::new(new_info);
    // Map and check every row.
    let mut rows = Vec::with_capacity(old_rows.len());
    let mut next_identity = w.t.identity.as_ref().map(|i| i.seed).unwrap_or(1);
    let increment = w.t.identity.as_ref().map(|i| i.increment).unwrap_or(1);
    for old in old_rows {
        let mut row = Vec::with_capacity(w.sources.len());
        for (i, s) in w.sources.iter().enumerate() {
            let v = match s {
                Source::Old(p) => old.get(*p).cloned().unwrap_or(Value::Null),
                Source::Convert(p, from) => {
                    let v = old.get(*p).cloned().unwrap_or(Value::Null);
                    super::dml::to_column(&new_info, i, v, from).map_err(|e| {
                        // ALTER COLUMN reports a value too long for the new length as
                        // 8152 naming the table and column, without the value.
                        if e.number == 2628 {
                            SqlError::new(
                                8152,
                                16,
                                2,
                                format!(
                                    "String or binary data would be truncated in table '{}.{}.{}', column '{}'.",
                                    new_info.db_name, new_info.schema, new_info.display_name, new_info.columns[i].name
                                ),
                            )
                        } else {
                            e
                        }
                    })?
                }
                Source::Default => match &new_info.defaults[i] {
                    Some(e) => {
                        let v = e.eval(&[], cx)?;
                        super::dml::to_column(&new_info, i, v, &e.ty())?
                    }
                    None => Value::Null,
                },
                Source::Null | Source::Computed => Value::Null,
                Source::Identity => {
                    let v = identity_value(next_identity, &new_info.columns[i].ty)?;
                    next_identity += increment;
                    v
                }
            };
            row.push(v);
        }
        for (i, s) in w.sources.iter().enumerate() {
            if let (Source::Computed, Some(e), true) =
                (s, &new_info.computed[i], new_info.columns[i].computed.as_ref().is_some_and(|c| c.persisted))
            {
                let v = e.eval(&row, cx)?;
                row[i] = crate::scalar::convert::convert(&v, &e.ty(), &new_info.columns[i].ty, None)?;
            }
        }
        if validate {
            super::dml::check_row(&new_info, &row, "ALTER TABLE", cx)?;
        } else if let Some(i) = (0..row.len()).find(|&i| {
            let c = &new_info.columns[i];
            !c.nullable && c.computed.is_none() && row[i].is_null()
        }) {
            return Err(super::dml::null_error(&new_info, i, "UPDATE"));
        }
        rows.push(row);
    }
    if !w.rebuild {
        for iref in &w.freed {
            cx.host.drop_index(iref).map_err(host_err)?;
        }
        return Ok(());
    }
    check_new_keys(cx, &w, &new_info, &rows)?;
    for r in &rows {
        new_info.insert_row(r, cx)?;
    }
    for ix in &w.info.indexes {
        cx.host.drop_index(&ix.iref).map_err(host_err)?;
    }
    // The identity counter reloads from the stored values, or continues after the
    // values just given to a new identity column.
    *new_info.counters.identity.lock() =
        if added_identity { Some(if rows.is_empty() { None } else { Some(next_identity - increment) }) } else { None };
    Ok(())
}

/// Does the statement add a constraint the existing rows must meet?
fn has_constraint_changes(w: &Work) -> bool {
    let old = match &w.obj.body {
        ObjectBody::Table(t) => t,
        _ => return false,
    };
    w.t.checks.len() > old.checks.len() || w.t.foreign_keys.len() > old.foreign_keys.len()
}

/// 1505 (then 1750) for a duplicate key in a unique index this statement adds.
fn check_new_keys(cx: &mut Cx, w: &Work, info: &TableInfo, rows: &[Vec<Value>]) -> Result<(), SqlError> {
    for name in &w.new_unique {
        let Some(ix) = info.indexes.iter().find(|i| i.meta.name.as_deref() == Some(name.as_str())) else {
            continue;
        };
        let mut seen = HashSet::new();
        for row in rows {
            let key = if ix.meta.index_id <= 1 { info.primary_key(row, 0)? } else { info.nc_entry(ix, row, &[])?.0 };
            if !seen.insert(key) {
                let vals: Vec<String> = ix
                    .key_cols
                    .iter()
                    .map(|&c| if row[c].is_null() { "<NULL>".to_string() } else { row[c].to_string() })
                    .collect();
                let e = SqlError::new(
                    1505,
                    16,
                    1,
                    format!(
                        "The CREATE UNIQUE INDEX statement terminated because a duplicate key was found for the object name '{}' and the index name '{name}'. The duplicate key value is ({}).",
                        info.qualified_name(),
                        vals.join(", ")
                    ),
                );
                return Err(ddl::constraint_failed(cx, e));
            }
        }
    }
    Ok(())
}
