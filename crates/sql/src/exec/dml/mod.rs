//! INSERT, UPDATE, DELETE (with TOP, FROM/JOIN and OUTPUT) and SELECT INTO; the row writers,
//! SET binding and OUTPUT handling here are shared with MERGE (`merge.rs`).
//!
//! UPDATE and DELETE read every qualifying row first and change them afterwards
//! (Halloween protection by materialisation), each row once even when a join produces it
//! several times. Constraints are checked per row: NOT NULL (515), CHECK (547), FOREIGN
//! KEY (547, both directions), keys (2627/2601 from the table layer). A FOREIGN KEY
//! cascade writes the rows it changes the same way (`check_referenced`), each checked
//! and going on to the rows referencing it.

use std::collections::HashSet;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{is_true, BExpr, Row};
use super::plan::{open, OutCol, Plan, ScanNode};
use super::query::{Binder, Scope, ScopeCol};
use super::table::{identity_value, TableInfo};
use super::{errors, trigger};
use crate::ast::*;
use crate::catalog::ReferentialAction;
use crate::host::HostError;
use crate::results::ColumnInfo;
use crate::scalar::convert;

mod checks;
pub(crate) mod views;

pub use checks::*;
use views::*;

/// The table a DML statement targets.
/// `perm` is the permission the statement needs on it (INSERT, UPDATE, DELETE).
pub(super) fn target_table(cx: &mut Cx, target: &DmlTarget, perm: &str) -> Result<Arc<TableInfo>, SqlError> {
    match target {
        DmlTarget::Variable(v) => cx.table_variable_for_dml(v),
        DmlTarget::Table { name, .. } => {
            if let Some(t) = cx.resolve_table_cached(name)? {
                super::security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, perm)?;
                return Ok(t.info.clone());
            }
            let (db, o) = cx.resolve_object(name)?.ok_or_else(|| errors::invalid_object(&errors::written(name)))?;
            super::security::check_object(cx, db, &o, perm)?;
            match &o.body {
                crate::catalog::ObjectBody::Table(_) => cx.table_info(db, &o),
                crate::catalog::ObjectBody::View(_) => Err(errors::not_supported("Modifying data through a view")),
                _ => Err(errors::invalid_object(&errors::written(name))),
            }
        }
    }
}

/// `extra`: columns the OUTPUT row carries after the inserted ones (MERGE's `$action`
/// and its source columns).
pub(super) fn bind_output(
    cx: &mut Cx,
    t: &TableInfo,
    clauses: &[OutputClause],
    extra: &Scope,
) -> Result<Vec<Output>, SqlError> {
    if clauses.is_empty() {
        return Ok(Vec::new());
    }
    let mut scope = Scope::default();
    for prefix in ["deleted", "inserted"] {
        for c in &t.columns {
            scope.cols.push(ScopeCol {
                table: Some(prefix.into()),
                name: c.name.clone(),
                ty: c.ty,
                nullable: true,
                exposed: None,
                collation: c.collation,
            });
        }
    }
    scope.cols.extend(extra.cols.iter().cloned());
    let mut outs = Vec::new();
    for oc in clauses {
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in &oc.items {
            match item {
                SelectItem::Wildcard(q) => {
                    let prefix =
                        q.as_ref().map(|q| q.name().value.to_ascii_lowercase()).unwrap_or_else(|| "inserted".into());
                    // `source.*` in MERGE: the extra columns of that table.
                    let base = 2 * t.columns.len();
                    let before = exprs.len();
                    for (i, c) in extra.cols.iter().enumerate() {
                        if prefix != "deleted"
                            && prefix != "inserted"
                            && c.table.as_deref().is_some_and(|tn| tn.eq_ignore_ascii_case(&prefix))
                        {
                            exprs.push(BExpr::Col(base + i, c.ty));
                            cols.push(OutCol::new(c.name.clone(), c.ty, true));
                        }
                    }
                    if exprs.len() > before {
                        continue;
                    }
                    let base = if prefix == "deleted" { 0 } else { t.columns.len() };
                    for (i, c) in t.columns.iter().enumerate() {
                        exprs.push(BExpr::Col(base + i, c.ty));
                        cols.push(OutCol::new(c.name.clone(), c.ty, true));
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let b = Binder::new(cx).bind_expr(expr, &scope)?;
                    let name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| match &expr.kind {
                        ExprKind::Column(n) => n.name().value.clone(),
                        _ => String::new(),
                    });
                    cols.push(OutCol::new(name, b.ty(), true));
                    exprs.push(b);
                }
                SelectItem::Assign { .. } => return Err(errors::not_supported("Variable assignment in OUTPUT")),
            }
        }
        let into = match &oc.into {
            Some(i) => {
                let tt = target_table(cx, &i.target, "INSERT")?;
                let positions = if i.columns.is_empty() {
                    (0..tt.columns.len())
                        .filter(|&k| !tt.columns[k].is_identity && tt.columns[k].computed.is_none())
                        .collect()
                } else {
                    let mut v = Vec::new();
                    for c in &i.columns {
                        v.push(tt.column_index(&c.value).ok_or_else(|| errors::invalid_column(&c.value))?);
                    }
                    v
                };
                if positions.len() != exprs.len() {
                    return Err(errors::column_count_mismatch());
                }
                Some((tt, positions))
            }
            None => None,
        };
        outs.push(Output { exprs, cols, into, rows: Vec::new() });
    }
    Ok(outs)
}

pub(super) fn collect_output(
    outs: &mut [Output],
    deleted: Option<&Row>,
    inserted: Option<&Row>,
    width: usize,
    extra: &[Value],
    cx: &mut Cx,
) -> Result<(), SqlError> {
    if outs.is_empty() {
        return Ok(());
    }
    let mut row = Vec::with_capacity(width * 2 + extra.len());
    match deleted {
        Some(d) => row.extend(d.iter().cloned()),
        None => row.extend(std::iter::repeat_n(Value::Null, width)),
    }
    match inserted {
        Some(i) => row.extend(i.iter().cloned()),
        None => row.extend(std::iter::repeat_n(Value::Null, width)),
    }
    row.extend(extra.iter().cloned());
    for o in outs.iter_mut() {
        let mut r = Vec::with_capacity(o.exprs.len());
        for e in &o.exprs {
            r.push(e.eval(&row, cx)?);
        }
        o.rows.push(r);
    }
    Ok(())
}

pub(super) fn flush_output(outs: Vec<Output>, cx: &mut Cx) -> Result<(), SqlError> {
    for o in outs {
        match o.into {
            Some((t, positions)) => {
                for r in o.rows {
                    let types_: Vec<SqlType> = o.exprs.iter().map(|e| e.ty()).collect();
                    insert_values(cx, &t, &positions, r, &types_)?;
                }
            }
            None => {
                let info: Vec<ColumnInfo> =
                    o.cols.iter().map(|c| ColumnInfo::new(c.name.clone(), c.ty, true)).collect();
                cx.sink.columns(&info).map_err(|_| super::base::cancelled())?;
                for r in &o.rows {
                    cx.sink.row(r).map_err(|_| super::base::cancelled())?;
                }
            }
        }
    }
    Ok(())
}

/// Inserts one row given values for some columns (others: default, identity, NULL).
/// Returns the complete row.
pub fn insert_values(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
) -> Result<Row, SqlError> {
    insert_values_as(cx, t, positions, values, types_, "INSERT")
}

/// The value [`insert_values_as`] takes as "this column's DEFAULT" (VALUES (DEFAULT) and
/// MERGE's INSERT ... DEFAULT): a string no client value is expected to be.
const DEFAULT_MARKER: &str = "\u{0}__DEFAULT__";

pub(super) fn default_marker() -> Value {
    Value::String(DEFAULT_MARKER.into())
}

fn is_default_marker(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == DEFAULT_MARKER)
}

/// [`insert_values`] for a statement named `stmt` in constraint messages (MERGE).
pub(super) fn insert_values_as(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
) -> Result<Row, SqlError> {
    insert_row_as(cx, t, positions, values, types_, stmt, true)
}

/// The row an INSERT would write, for an INSTEAD OF trigger's `inserted`: defaults and
/// computed columns filled in, an identity not given is 0 (its value is used up all the
/// same), nothing checked or written.
pub(super) fn would_insert(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
) -> Result<Row, SqlError> {
    insert_row_as(cx, t, positions, values, types_, "INSERT", false)
}

fn insert_row_as(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
    write: bool,
) -> Result<Row, SqlError> {
    let (row, new_identity) = make_row(cx, t, positions, values, types_, stmt, write, None)?;
    if !write {
        return Ok(row);
    }
    t.insert_row(&row, cx)?;
    note_identity(cx, &[new_identity]);
    Ok(row)
}

/// The row an INSERT writes (checked when `write`), and the identity value it takes:
/// `identity` when the caller drew it (a batch's range), else drawn here.
#[allow(clippy::too_many_arguments)]
fn make_row(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
    write: bool,
    identity: Option<i128>,
) -> Result<(Row, Option<i128>), SqlError> {
    let n = t.columns.len();
    // Which columns have a value: on the stack for up to 64 columns (one allocation less
    // per inserted row).
    let (mut small, mut large) = ([false; 64], Vec::new());
    let given: &mut [bool] = if n <= small.len() {
        &mut small[..n]
    } else {
        large.resize(n, false);
        &mut large
    };
    let identity_insert = cx.state.identity_insert == Some((t.db, t.object_id));
    let mut new_identity = None;
    let mut row: Row;
    if values.len() == n && positions.len() == n && positions.iter().enumerate().all(|(k, &p)| p == k) {
        // A value for each column in order: the values become the row, converted in
        // place (no second vector).
        row = values;
        for (k, slot) in row.iter_mut().enumerate() {
            let v = std::mem::replace(slot, Value::Null);
            if is_default_marker(&v) {
                continue;
            }
            *slot = to_column(t, k, v, &types_[k])?;
            given[k] = true;
        }
    } else {
        // (`vec![Value::Null; n]` clones through Value's Clone, per column.)
        row = Vec::with_capacity(n);
        row.resize_with(n, || Value::Null);
        for (k, v) in values.into_iter().enumerate() {
            let col = positions[k];
            if is_default_marker(&v) {
                continue;
            }
            row[col] = to_column(t, col, v, &types_[k])?;
            given[col] = true;
        }
    }
    for (i, c) in t.columns.iter().enumerate() {
        if c.is_identity {
            if given[i] {
                if !identity_insert {
                    return Err(SqlError::new(
                        544,
                        16,
                        1,
                        format!(
                            "Cannot insert explicit value for identity column in table '{}' when IDENTITY_INSERT is set to OFF.",
                            t.display_name
                        ),
                    ));
                }
                if let Some(v) = Value::integer_part(&row[i]).filter(|_| write) {
                    t.observe_identity(v, cx)?;
                    new_identity = Some(v);
                }
            } else if !write {
                // An INSTEAD OF INSERT trigger's row: the identity reads 0 in `inserted`,
                // but the value is used up as SQL Server uses it up (the next row
                // inserted gets the one after).
                t.next_identity(cx)?;
                row[i] = identity_value(0, &c.ty)?;
            } else {
                // A failed insert still uses up its value (a gap), as in SQL Server, but
                // @@IDENTITY and SCOPE_IDENTITY() change only when the row is inserted.
                // Waiting for a scheduler (taking one back after a latch wait, or
                // yielding at quantum end) comes before the value is drawn, not between
                // it and the insert's own safe point: a value held through other
                // sessions' quanta arrives far behind the index's right edge, where it
                // splits a full page in exclusive mode.
                let v = match identity {
                    Some(v) => v,
                    None => {
                        diag::sched::safe_point();
                        t.next_identity(cx)?.unwrap_or(1)
                    }
                };
                row[i] = identity_value(v, &c.ty)?;
                new_identity = Some(v);
            }
            continue;
        }
        if !given[i] && c.computed.is_none() {
            if let Some(d) = &t.defaults[i] {
                let v = d.eval(&[], cx)?;
                row[i] = to_column(t, i, v, &d.ty())?;
            }
        }
    }
    if identity_insert && t.identity_pos().is_some_and(|i| !given[i]) {
        return Err(SqlError::new(
            545,
            16,
            1,
            format!(
                "Explicit value must be specified for identity column in table '{}' either when IDENTITY_INSERT is set to ON or when a replication user is inserting into a NOT FOR REPLICATION identity column.",
                t.display_name
            ),
        ));
    }
    // Computed columns (persisted ones are stored; all are checked).
    for (i, c) in t.computed.iter().enumerate() {
        if let Some(e) = c {
            let v = e.eval(&row, cx)?;
            row[i] = convert::convert(&v, &e.ty(), &t.columns[i].ty, None)?;
        }
    }
    if write {
        check_row(t, &row, stmt, cx)?;
    }
    Ok((row, new_identity))
}

/// Rows per batch of a batched insert.
const INSERT_BATCH: usize = 32;

/// Batched inserts: when nothing can observe an INSERT's rows one at a time, the rows
/// are built and checked a batch at a time and written with one `Host::insert_many`
/// (one latch per leaf instead of one per row), the statement's IDENTITY values drawn
/// as one contiguous range. Nothing may observe the difference: no triggers, OUTPUT or
/// foreign keys, one index (a second index's errors would come in another order), a
/// unique clustered key (no row id), not IDENTITY_INSERT, and no default, computed
/// column or check that reads the database or session state. The rows are materialised
/// first (the source cannot see the batch). Errors come in the same order as row by
/// row: a row that fails to build ends the batch, whose rows before it are written
/// first.
fn batchable(cx: &Cx, t: &TableInfo, ins: &Insert, triggered: bool) -> bool {
    !triggered
        && ins.output.is_empty()
        && t.foreign_keys.is_empty()
        && t.indexes.len() == 1
        && !t.needs_row_id()
        && cx.state.identity_insert != Some((t.db, t.object_id))
        && !t.defaults.iter().flatten().any(|e| e.reads_state())
        && !t.computed.iter().flatten().any(|e| e.reads_state())
        && !t.checks.iter().any(|(_, e)| e.reads_state())
}

/// Inserts `rows` (each with its value types) in batches; returns how many were
/// inserted.
///
/// The statement's IDENTITY values are drawn at once, before its first row is built:
/// concurrent statements then fill disjoint key ranges of the index, each appending at
/// a position of its own (a leaf that is not the rightmost splits at the insert
/// position when keys ascend there: storage's `smo`), where per-batch draws made every
/// session's rows interleave in the index's last leaf and wait for its latch. SQL
/// Server promises no contiguity either way. What the statement does not use (a row
/// failed) is given back when no other session drew meanwhile.
fn insert_batched(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    rows: Vec<(Row, std::borrow::Cow<'_, [SqlType]>)>,
) -> Result<u64, SqlError> {
    let total = rows.len();
    // As for one row: a scheduler wait comes before the draw, not between it and the
    // writes.
    diag::sched::safe_point();
    let drawn = t.next_identity_range(total, cx)?;
    let mut used = 0usize;
    let r = insert_batches(cx, t, positions, rows, drawn, &mut used);
    if let Some(range) = drawn {
        t.give_back_identity(range, total, used);
    }
    r
}

/// The batches of [`insert_batched`], with values of the `drawn` IDENTITY range;
/// `used` counts the values handed to rows.
fn insert_batches(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    rows: Vec<(Row, std::borrow::Cow<'_, [SqlType]>)>,
    drawn: Option<(i128, i128)>,
    used: &mut usize,
) -> Result<u64, SqlError> {
    let total = rows.len();
    let mut rows = rows.into_iter();
    let mut batch: Vec<(Vec<u8>, Row)> = Vec::with_capacity(total.min(INSERT_BATCH));
    let mut identities: Vec<Option<i128>> = Vec::with_capacity(total.min(INSERT_BATCH));
    let mut next = drawn;
    let mut count = 0u64;
    let mut left = total;
    while left > 0 {
        let n = left.min(INSERT_BATCH);
        left -= n;
        batch.clear();
        identities.clear();
        let mut build_err = None;
        for (vals, tys) in rows.by_ref().take(n) {
            let reserved = next.map(|(v, _)| v);
            if let Some((v, inc)) = &mut next {
                *v += *inc;
                *used += 1;
            }
            match make_row(cx, t, positions, vals, &tys, "INSERT", true, reserved) {
                Ok((row, id)) => {
                    let row = match t.stored_row(&row) {
                        std::borrow::Cow::Borrowed(_) => row,
                        std::borrow::Cow::Owned(stored) => stored,
                    };
                    batch.push((Vec::new(), row));
                    identities.push(id);
                }
                Err(e) => {
                    build_err = Some(e);
                    break;
                }
            }
        }
        for (i, (key, row)) in batch.iter_mut().enumerate() {
            match t.primary_key(row, 0) {
                Ok(k) => *key = k,
                Err(e) => {
                    build_err = Some(e);
                    identities.truncate(i);
                    break;
                }
            }
        }
        batch.truncate(identities.len());
        if let Err((i, e)) = cx.host.insert_many(&t.indexes[0].iref, &batch) {
            let i = i.min(batch.len());
            note_identity(cx, &identities[..i]);
            return Err(match (e, batch.get(i)) {
                (HostError::Duplicate, Some((_, row))) => t.duplicate_error(&t.indexes[0], row),
                (e, _) => super::base::host_err(e),
            });
        }
        note_identity(cx, &identities);
        count += batch.len() as u64;
        if let Some(e) = build_err {
            return Err(e);
        }
    }
    Ok(count)
}

/// @@IDENTITY and SCOPE_IDENTITY() after rows were inserted: the last one's value.
fn note_identity(cx: &mut Cx, inserted: &[Option<i128>]) {
    if let Some(&Some(v)) = inserted.last() {
        cx.state.last_identity = Some(v);
        cx.frame().scope_identity = Some(v);
    }
}

pub fn insert(cx: &mut Cx, ins: &Insert) -> Result<(), SqlError> {
    // A statement of a batch the parse cache matched by shape takes the batch's own
    // literals (see parse_cache.rs); only the batch's own statements can be one.
    let given = if cx.frames.len() == 1 { cx.literals.as_mut().and_then(|l| l.find(ins)) } else { None };
    // A table (not a view) named as before: resolved once, from the name cache.
    if let DmlTarget::Table { name, .. } = &ins.target {
        if let Some(t) = cx.resolve_table_cached(name)? {
            super::security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, "INSERT")?;
            return insert_into(cx, ins, &t.info, given.map(|r| r.start));
        }
    }
    if let Some(given) = given {
        // Any other target (a view, a CTE, a table not created yet) goes the general
        // way, with the statement as written.
        let mut own = ins.clone();
        if let (InsertSource::Values(rows), Some(lits)) = (&mut own.source, &cx.literals) {
            let mut i = given.start;
            for e in rows.iter_mut().flatten() {
                if let ExprKind::Literal(l) = &mut e.kind {
                    if let Some(written) = lits.literal(i, &cx.source) {
                        *l = written;
                    }
                    i += 1;
                }
            }
        }
        return insert(cx, &own);
    }
    if let DmlTarget::Table { name, .. } = &ins.target {
        if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Insert)? {
            super::security::check_object(cx, db, &view, "INSERT")?;
            return trigger::insert_view(cx, ins, name, &view, &tr);
        }
    }
    let touched: Vec<String> = ins.columns.iter().map(|c| c.value.clone()).collect();
    if let Some((cte, _)) = cte_target(&ins.with, &ins.target, &[]) {
        let vb = updatable_cte(cx, cte, Some(&touched), "INSERT")?;
        return insert_through(cx, ins, &vb);
    }
    if let Some(vb) = updatable_view(cx, &ins.target, "INSERT", Some(&touched), false)? {
        return through_view(cx, |cx| views::with_check_option(cx, &vb, |cx| insert_through(cx, ins, &vb)));
    }
    let t = target_table(cx, &ins.target, "INSERT")?;
    insert_into(cx, ins, &t, None)
}

/// INSERT into a view or CTE: into its base table, its columns renamed.
fn insert_through(cx: &mut Cx, ins: &Insert, vb: &ViewBase) -> Result<(), SqlError> {
    {
        let mut i = ins.clone();
        i.target = vb.target(&ins.target);
        i.output = vb.base_output(&ins.output);
        let view_cols: Vec<String> = if ins.columns.is_empty() {
            vb.columns.iter().map(|(v, _)| v.clone()).collect()
        } else {
            ins.columns.iter().map(|c| c.value.clone()).collect()
        };
        i.columns = Vec::with_capacity(view_cols.len());
        for c in &view_cols {
            let b = vb.base_column(c)?.ok_or_else(|| errors::invalid_column(c))?;
            i.columns.push(Ident::new(b));
        }
        insert(cx, &i)
    }
}

/// A VALUES literal's value and type: when the statement was matched by shape
/// (`given`: the index of its next literal among the batch's), the batch's own literal,
/// else the one in the statement.
fn values_literal(cx: &mut Cx, l: &Literal, given: &mut Option<usize>) -> Result<(Value, SqlType), SqlError> {
    if let (Some(i), Some(lits)) = (given.as_mut(), cx.literals.as_mut()) {
        let r = lits.value(*i, &cx.source);
        *i += 1;
        return r;
    }
    super::query::literal_type_value(l)
}

/// INSERT into the table `t` its target names; `given` as in [`values_literal`].
fn insert_into(cx: &mut Cx, ins: &Insert, t: &Arc<TableInfo>, mut given: Option<usize>) -> Result<(), SqlError> {
    let t = t.clone();
    let positions = insert_positions(cx, &t, &ins.columns)?;
    // Triggers: an INSTEAD OF INSERT trigger gets the rows instead of the table; AFTER
    // triggers get them once they are written.
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Insert, &ins.output)?;
    let mut kept: Vec<Row> = Vec::new();
    let put = |cx: &mut Cx, vals: Row, tys: &[SqlType], kept: &mut Vec<Row>| -> Result<Row, SqlError> {
        let row = if instead.is_some() {
            would_insert(cx, &t, &positions, vals, tys)?
        } else {
            insert_values(cx, &t, &positions, vals, tys)?
        };
        if keep {
            kept.push(row.clone());
        }
        Ok(row)
    };
    let mut outs = bind_output(cx, &t, &ins.output, &Scope::default())?;
    let limit = top_limit(cx, ins.top.as_ref())?;
    let width = t.columns.len();
    let mut count = 0u64;
    match &ins.source {
        InsertSource::Values(rows)
            if rows.len() > 1
                && batchable(cx, &t, ins, instead.is_some() || keep)
                && rows.iter().flatten().all(|e| matches!(e.kind, ExprKind::Literal(_) | ExprKind::Default)) =>
        {
            // Literals only: nothing to evaluate between the rows.
            if let Some(r) = rows.iter().find(|r| r.len() != positions.len()) {
                return Err(if ins.columns.is_empty() {
                    errors::column_count_mismatch()
                } else {
                    errors::insert_count_mismatch(positions.len() > r.len())
                });
            }
            let take = limit.map_or(rows.len(), |l| rows.len().min(usize::try_from(l).unwrap_or(usize::MAX)));
            let mut built = Vec::with_capacity(take);
            for r in &rows[..take] {
                let mut vals = Vec::with_capacity(r.len());
                let mut tys = Vec::with_capacity(r.len());
                for e in r {
                    if let ExprKind::Literal(l) = &e.kind {
                        let (v, ty) = values_literal(cx, l, &mut given)?;
                        vals.push(v);
                        tys.push(ty);
                    } else {
                        vals.push(default_marker());
                        tys.push(SqlType::Int);
                    }
                }
                built.push((vals, std::borrow::Cow::Owned(tys)));
            }
            count = insert_batched(cx, &t, &positions, built)?;
        }
        InsertSource::Values(rows) => {
            for r in rows {
                if r.len() != positions.len() {
                    return Err(if ins.columns.is_empty() {
                        errors::column_count_mismatch()
                    } else {
                        errors::insert_count_mismatch(positions.len() > r.len())
                    });
                }
                if limit.is_some_and(|l| count >= l) {
                    break;
                }
                // The buffers of the batch's last row (a loading script's INSERTs are
                // one row each).
                let mut vals = std::mem::take(&mut cx.spare_row);
                let mut tys = std::mem::take(&mut cx.spare_types);
                vals.clear();
                tys.clear();
                for e in r {
                    if matches!(e.kind, ExprKind::Default) {
                        vals.push(default_marker());
                        tys.push(SqlType::Int);
                        continue;
                    }
                    // A literal is its value (what binding and evaluating it gives).
                    if let ExprKind::Literal(l) = &e.kind {
                        let (v, ty) = values_literal(cx, l, &mut given)?;
                        vals.push(v);
                        tys.push(ty);
                        continue;
                    }
                    let b = Binder::new(cx).bind_expr(e, &Scope::default())?;
                    vals.push(b.eval(&[], cx)?);
                    tys.push(b.ty());
                }
                let mut row = put(cx, vals, &tys, &mut kept)?;
                collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                count += 1;
                row.clear();
                cx.spare_row = row;
                cx.spare_types = tys;
            }
        }
        InsertSource::DefaultValues => {
            let row = if instead.is_some() {
                would_insert(cx, &t, &[], Vec::new(), &[])?
            } else {
                insert_values(cx, &t, &[], Vec::new(), &[])?
            };
            if keep {
                kept.push(row.clone());
            }
            collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
            count = 1;
        }
        InsertSource::Query(q) => {
            let plan = {
                let mut b = Binder::new(cx);
                b.push_ctes(&ins.with);
                b.plan_query(q)?.0
            };
            let tys: Vec<SqlType> = plan.columns().iter().map(|c| c.ty).collect();
            if tys.len() != positions.len() {
                return Err(if ins.columns.is_empty() {
                    errors::column_count_mismatch()
                } else {
                    errors::insert_count_mismatch(positions.len() > tys.len())
                });
            }
            // Materialise first: the source may read the target. Past the request's
            // memory grant the rows go to a spool file (SQL Server's eager spool in
            // tempdb) and are inserted one by one as they are read back.
            let dir = cx.host.spill_dir();
            let (rows, _held) = match super::spill::spool(open(&plan, cx)?, cx, &dir)? {
                super::spill::Spooled::Memory(rows, held) => (rows, held),
                super::spill::Spooled::Disk(mut rest) => {
                    while let Some(r) = rest.next_row()? {
                        if limit.is_some_and(|l| count >= l) {
                            break;
                        }
                        let row = put(cx, r, &tys, &mut kept)?;
                        collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                        count += 1;
                    }
                    (Vec::new(), None)
                }
            };
            if batchable(cx, &t, ins, instead.is_some() || keep) && rows.len() > 1 {
                let take = limit.map_or(rows.len(), |l| rows.len().min(usize::try_from(l).unwrap_or(usize::MAX)));
                let built = rows.into_iter().take(take).map(|r| (r, std::borrow::Cow::Borrowed(&tys[..]))).collect();
                count = insert_batched(cx, &t, &positions, built)?;
            } else {
                for r in rows {
                    if limit.is_some_and(|l| count >= l) {
                        break;
                    }
                    let row = put(cx, r, &tys, &mut kept)?;
                    collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                    count += 1;
                }
            }
        }
        InsertSource::ExecProcedure(_) | InsertSource::ExecString(_) => {
            let sets = cx.capture_results(&ins.source)?;
            // The procedure may not change the table it fills (556).
            let unchanged = {
                let cat = cx.catalog(t.db)?;
                let g = cat.inner.read();
                g.objects.get(&t.object_id).and_then(|o| o.table()).is_some_and(|now| now.columns == t.columns)
            };
            if !unchanged {
                return Err(SqlError::new(
                    556,
                    16,
                    2,
                    "INSERT EXEC failed because the stored procedure altered the schema of the target table.",
                ));
            }
            for (cols, rows) in sets {
                let tys: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
                if tys.len() != positions.len() {
                    return Err(errors::column_count_mismatch());
                }
                for r in rows {
                    let row = put(cx, r, &tys, &mut kept)?;
                    collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                    count += 1;
                }
            }
        }
    }
    flush_output(outs, cx)?;
    if keep {
        let f = trigger::Fired { inserted: kept, deleted: Vec::new(), updated: None, row_count: count };
        match &instead {
            Some(tr) => trigger::fire_instead(cx, &t, tr, f)?,
            None => trigger::fire_after(cx, &t, trigger::Event::Insert, f)?,
        }
    }
    cx.state.rowcount = count as i64;
    cx.done(Some(count))
}

/// The name a DML target's rows go by (its one-part name or the variable).
fn target_alias(target: &DmlTarget) -> String {
    match target {
        DmlTarget::Table { name, .. } => name.name().value.clone(),
        DmlTarget::Variable(v) => v.clone(),
    }
}

/// Plans the rows an UPDATE/DELETE changes: the combined FROM row, with the target's
/// locator column; returns the plan and the target's column offset in it.
fn plan_target_rows(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    target: &DmlTarget,
    from: &[TableWithJoins],
    where_clause: Option<&Expr>,
    with: &[Cte],
    current: Option<&[u8]>,
) -> Result<(Plan, usize, Scope, Option<BExpr>), SqlError> {
    cx.dml_target = Some((t.db, t.object_id));
    let r = (|| {
        let mut b = Binder::new(cx);
        b.push_ctes(with);
        let (mut plan, scope) = if from.is_empty() {
            let alias = target_alias(target);
            let mut cols = t.out_cols();
            cols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: types::Length::Bounded(900) }, false));
            let plan = match current {
                // WHERE CURRENT OF: the one row the cursor stands on (none if it is gone).
                Some(pk) => {
                    let mut rows = Vec::new();
                    if let Some(stored) = b.cx.host.get(&t.indexes[0].iref, pk).map_err(super::base::host_err)? {
                        if let Some(mut row) = t.row_from_index(0, stored, b.cx)? {
                            row.push(Value::Binary(pk.to_vec()));
                            rows.push(row);
                        }
                    }
                    Plan::Rows { rows: Arc::new(rows), cols: cols.clone() }
                }
                None => {
                    let mut scan = ScanNode::all_with_locator(t);
                    if let DmlTarget::Table { hints, .. } = target {
                        // READPAST and NOWAIT on the target's scan; its rows are U-locked
                        // and read again before they change whatever the hints say.
                        let h = crate::host::LockHints::from_table_hints(hints);
                        scan.hints = crate::host::LockHints { isolation: None, ..h };
                    }
                    Plan::Scan(scan)
                }
            };
            (plan, Scope::from_cols(Some(&alias), &cols))
        } else {
            b.plan_from(from)?
        };
        let mut recheck = None;
        if let Some(w) = where_clause {
            let pred = b.bind_expr(w, &scope)?;
            recheck = Some(pred.clone());
            let mut cs = Vec::new();
            super::query::conjuncts(pred, &mut cs);
            plan = super::query::push_down(plan, cs, b.cx)?;
        }
        // Where is the target in the combined row? Find its locator column.
        let target_name = target_alias(target);
        let loc = scope
            .cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name == "%%physloc%%")
            .find(|(_, c)| c.table.as_deref().is_some_and(|tn| tn.eq_ignore_ascii_case(&target_name)))
            .or_else(|| scope.cols.iter().enumerate().find(|(_, c)| c.name == "%%physloc%%"))
            .map(|(i, _)| i)
            .ok_or_else(|| errors::invalid_object(&target_name))?;
        let offset = loc - t.columns.len();
        Ok((plan, offset, scope, recheck))
    })();
    cx.dml_target = None;
    r
}

/// The lock step of UPDATE and DELETE, SQL Server's update (U) lock on each row they
/// read. The scan read `row` at READ COMMITTED without keeping a lock, so another
/// transaction may have changed or deleted it since; it is read again under a U lock
/// (held to the end of the transaction, waiting for a writer to end first). Returns false
/// if it is gone. If it changed, the target's columns in `row` become the current ones
/// and the WHERE (`recheck`) is evaluated again: without this, two sessions running
/// `UPDATE ... SET n = n + 1` would both write the value they read (a lost update), and two
/// running `DELETE TOP (n)` would both count the same rows.
pub(super) fn lock_current(
    cx: &mut Cx,
    t: &TableInfo,
    pk: &[u8],
    row: &mut Row,
    offset: usize,
    recheck: Option<&BExpr>,
) -> Result<bool, SqlError> {
    let width = t.columns.len();
    let Some(stored) = cx.host.get_for_update(&t.indexes[0].iref, pk).map_err(super::base::host_err)? else {
        return Ok(false);
    };
    let Some(current) = t.row_from_index(0, stored, cx)? else {
        return Ok(false);
    };
    if row.get(offset..offset + width) == Some(&current[..]) {
        return Ok(true);
    }
    row.splice(offset..offset + width, current);
    match recheck {
        Some(p) => Ok(is_true(&p.eval(row, cx)?)),
        None => Ok(true),
    }
}

/// Runs DML rewritten from a view on its base table, which is reached through the
/// view's ownership chain (not checked again).
fn through_view<T>(cx: &mut Cx, f: impl FnOnce(&mut Cx) -> Result<T, SqlError>) -> Result<T, SqlError> {
    cx.view_depth += 1;
    let r = f(cx);
    cx.view_depth -= 1;
    r
}

/// The target of UPDATE/DELETE: with a FROM clause, a one-part name may be an alias
/// defined there.
fn target_with_from(
    cx: &mut Cx,
    target: &DmlTarget,
    from: &[TableWithJoins],
    perm: &str,
) -> Result<Arc<TableInfo>, SqlError> {
    match target {
        DmlTarget::Table { name, .. } if !from.is_empty() && name.parts.len() == 1 => {
            match find_alias_table(cx, from, &name.name().value, perm)? {
                Some(t) => Ok(t),
                None => target_table(cx, target, perm),
            }
        }
        _ => target_table(cx, target, perm),
    }
}

/// The TOP (n) of INSERT/UPDATE/DELETE: a row count (PERCENT is not applied here).
pub(super) fn top_limit(cx: &mut Cx, top: Option<&Top>) -> Result<Option<u64>, SqlError> {
    match top {
        Some(top) => {
            let (v, ty) = super::run::eval_standalone(cx, &top.quantity)?;
            Ok(Some(super::run::int_value(&v, &ty)?.max(0) as u64))
        }
        None => Ok(None),
    }
}

/// `0, 1, 2, ...`: the positions of a table's columns when all of them are inserted in
/// order (see [`insert_positions`]).
const IN_ORDER: [usize; 64] = {
    let mut a = [0; 64];
    let mut i = 0;
    while i < a.len() {
        a[i] = i;
        i += 1;
    }
    a
};

/// The columns an INSERT column list names (all insertable ones when empty), as
/// positions in the table (271 for a computed column). All the columns of a table with
/// no identity or computed column are borrowed, not built (each INSERT of a loading
/// script asks).
pub(super) fn insert_positions(
    cx: &Cx,
    t: &TableInfo,
    columns: &[Ident],
) -> Result<std::borrow::Cow<'static, [usize]>, SqlError> {
    if columns.is_empty() {
        let identity_insert = cx.state.identity_insert == Some((t.db, t.object_id));
        let insertable =
            |k: &usize| (!t.columns[*k].is_identity || identity_insert) && t.columns[*k].computed.is_none();
        let n = t.columns.len();
        if n <= IN_ORDER.len() && (0..n).all(|k| insertable(&k)) {
            return Ok(std::borrow::Cow::Borrowed(&IN_ORDER[..n]));
        }
        return Ok((0..n).filter(insertable).collect::<Vec<_>>().into());
    }
    let mut v = Vec::new();
    for c in columns {
        let p = t.column_index(&c.value).ok_or_else(|| errors::invalid_column(&c.value))?;
        if t.columns[p].computed.is_some() {
            return Err(SqlError::new(
                271,
                16,
                1,
                format!("The column \"{}\" cannot be modified because it is either a computed column or is the result of a UNION operator.", c.value),
            ));
        }
        v.push(p);
    }
    Ok(v.into())
}

/// The bound SET list of an UPDATE (or of MERGE's UPDATE action): target columns and
/// variables.
pub(super) struct Sets {
    columns: Vec<(usize, AssignOp, BExpr)>,
    variables: Vec<(String, AssignOp, BExpr)>,
}

/// Binds SET assignments over `scope` (8102 for an identity column, 271 for a computed one).
pub(super) fn bind_assignments(
    b: &mut Binder,
    t: &TableInfo,
    assignments: &[Assignment],
    scope: &Scope,
) -> Result<Sets, SqlError> {
    let mut sets = Sets { columns: Vec::new(), variables: Vec::new() };
    for a in assignments {
        let e = b.bind_expr(&a.value, scope)?;
        match &a.target {
            AssignTarget::Column(c) => {
                let p = t.column_index(&c.name().value).ok_or_else(|| errors::invalid_column(&c.name().value))?;
                if t.columns[p].is_identity {
                    return Err(SqlError::new(
                        8102,
                        16,
                        1,
                        format!("Cannot update identity column '{}'.", t.columns[p].name),
                    ));
                }
                if t.columns[p].computed.is_some() {
                    return Err(SqlError::new(
                        271,
                        16,
                        1,
                        format!("The column \"{}\" cannot be modified because it is either a computed column or is the result of a UNION operator.", t.columns[p].name),
                    ));
                }
                sets.columns.push((p, a.op, e));
            }
            AssignTarget::Variable(v) => sets.variables.push((v.clone(), a.op, e)),
        }
    }
    Ok(sets)
}

impl Sets {
    /// The target columns the SET list assigns.
    pub(super) fn column_positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().map(|(p, _, _)| *p)
    }

    /// The new target row for the combined row `r` whose target columns are `old`;
    /// variables are assigned as a side effect.
    pub(super) fn apply(&self, cx: &mut Cx, t: &TableInfo, r: &Row, old: &Row) -> Result<Row, SqlError> {
        let mut new = old.clone();
        for (p, aop, e) in &self.columns {
            let v = e.eval(r, cx)?;
            let v = match aop.binary_op() {
                None => to_column(t, *p, v, &e.ty())?,
                Some(bop) => {
                    let cty = t.columns[*p].ty;
                    let rty = crate::scalar::ops::binary_type(bop, &cty, &e.ty())?;
                    let x = crate::scalar::ops::binary(bop, &old[*p], &cty, &v, &e.ty(), &rty)?;
                    to_column(t, *p, x, &rty)?
                }
            };
            new[*p] = v;
        }
        for (name, aop, e) in &self.variables {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let v = e.eval(r, cx)?;
            let v = super::run::assign_value(cx, slot, ty, *aop, v, &e.ty())?;
            cx.set_var(slot, v);
        }
        Ok(new)
    }
}

/// Fills in the computed columns of an updated row.
pub(super) fn compute_columns(cx: &mut Cx, t: &TableInfo, new: &mut Row) -> Result<(), SqlError> {
    for (i, c) in t.computed.iter().enumerate() {
        if let Some(e) = c {
            let v = e.eval(new, cx)?;
            new[i] = convert::convert(&v, &e.ty(), &t.columns[i].ty, None)?;
        }
    }
    Ok(())
}

/// Writes an updated row (also one a FOREIGN KEY cascade changes): computed columns,
/// constraints (`stmt` names the statement in their messages), the row, then the rows
/// referencing its old key. As in SQL Server the referencing rows are checked against the
/// table as changed: a cascaded row's own key is there, a SET DEFAULT value must be in
/// the table after the change, and a row referencing itself does not hold up its own
/// change. Returns the row written.
pub(super) fn write_update(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    old: &Row,
    new: Row,
    stmt: &str,
) -> Result<Row, SqlError> {
    write_update_of(cx, t, pk, old, new, stmt, &[])
}

/// [`write_update`] of a row whose columns `assigned` are checked against their foreign
/// keys even when their values did not change.
fn write_update_of(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    old: &Row,
    mut new: Row,
    stmt: &str,
    assigned: &[usize],
) -> Result<Row, SqlError> {
    compute_columns(cx, t, &mut new)?;
    check_row_changed(t, Some((old, assigned)), &new, stmt, cx)?;
    t.update_row(pk, old, &new, cx)?;
    check_referenced(t, old, Some(&new), stmt, cx)?;
    Ok(new)
}

/// Deletes a row, then checks (or cascades to) the rows referencing it; false if it was
/// already gone.
pub(super) fn write_delete(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    row: &Row,
    stmt: &str,
) -> Result<bool, SqlError> {
    if !t.delete_row(pk, row, cx)? {
        return Ok(false);
    }
    check_referenced(t, row, None, stmt, cx)?;
    Ok(true)
}

pub fn update(cx: &mut Cx, u: &Update) -> Result<(), SqlError> {
    let touched: Vec<String> = u
        .assignments
        .iter()
        .filter_map(|a| match &a.target {
            AssignTarget::Column(n) => Some(n.name().value.clone()),
            AssignTarget::Variable(_) => None,
        })
        .collect();
    if let Some((cte, alias)) = cte_target(&u.with, &u.target, &u.from) {
        let vb = updatable_cte(cx, cte, Some(&touched), "UPDATE")?;
        return update_through(cx, u, &vb, &alias);
    }
    if u.from.is_empty() {
        if let DmlTarget::Table { name, .. } = &u.target {
            if cx.resolve_table_cached(name)?.is_none() {
                if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Update)? {
                    super::security::check_object(cx, db, &view, "UPDATE")?;
                    return trigger::update_view(cx, u, name, &view, &tr);
                }
            }
        }
        if let Some(vb) = updatable_view(cx, &u.target, "UPDATE", Some(&touched), false)? {
            if vb.needs_rows {
                let alias = target_alias(&u.target);
                return through_view(cx, |cx| {
                    views::with_check_option(cx, &vb, |cx| update_through(cx, u, &vb, &alias))
                });
            }
            let mut r = u.clone();
            r.target = vb.target(&u.target);
            r.where_clause = vb.where_with_filter(u.where_clause.as_ref())?;
            r.output = vb.base_output(&u.output);
            for a in &mut r.assignments {
                if let AssignTarget::Column(n) = &mut a.target {
                    let b = vb.base_column(&n.name().value)?.ok_or_else(|| errors::invalid_column(&n.name().value))?;
                    n.parts = vec![Ident::new(b)];
                }
                vb.rename(&mut a.value)?;
            }
            return through_view(cx, |cx| views::with_check_option(cx, &vb, |cx| update(cx, &r)));
        }
    }
    let t = target_with_from(cx, &u.target, &u.from, "UPDATE")?;
    match &u.current_of {
        Some(c) => {
            let pk = positioned(cx, c, &t, &u.from)?;
            update_rows(cx, u, &t, Some(&pk))
        }
        None => update_rows(cx, u, &t, None),
    }
}

/// The locator of the row a positioned UPDATE/DELETE (WHERE CURRENT OF) changes.
fn positioned(cx: &mut Cx, c: &CursorRef, t: &TableInfo, from: &[TableWithJoins]) -> Result<Vec<u8>, SqlError> {
    if !from.is_empty() {
        return Err(errors::not_supported("WHERE CURRENT OF with a FROM clause"));
    }
    super::cursor::current_row(cx, c, t)
}

/// UPDATE of a view or CTE whose rows its query finds (`ViewBase::rows_factor`): the
/// base table's rows behind the rows the query shows under `alias`.
fn update_through(cx: &mut Cx, u: &Update, vb: &ViewBase, alias: &str) -> Result<(), SqlError> {
    let t = vb.base_table(cx, "UPDATE")?;
    let mut r = u.clone();
    r.from = vb.with_rows_in_from(&t, &u.from, alias)?;
    r.target = DmlTarget::Table { name: ObjectName::from_ident(Ident::new(alias)), hints: Vec::new() };
    r.assignments = vb.base_assignments(&u.assignments)?;
    r.output = vb.base_output(&u.output);
    update_rows(cx, &r, &t, None)
}

/// UPDATE of the table `t`, which `u.target` names (or aliases in `u.from`).
fn update_rows(cx: &mut Cx, u: &Update, t: &Arc<TableInfo>, current: Option<&[u8]>) -> Result<(), SqlError> {
    let t = t.clone();
    let (plan, offset, scope, recheck) =
        plan_target_rows(cx, &t, &u.target, &u.from, u.where_clause.as_ref(), &u.with, current)?;
    let width = t.columns.len();
    let sets = {
        let mut b = Binder::new(cx);
        b.push_ctes(&u.with);
        bind_assignments(&mut b, &t, &u.assignments, &scope)?
    };
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Update, &u.output)?;
    let mut outs = bind_output(cx, &t, &u.output, &Scope::default())?;
    let limit = top_limit(cx, u.top.as_ref())?;
    // Read phase.
    let mut op = open(&plan, cx)?;
    let mut seen = HashSet::new();
    let mut changes: Vec<(Vec<u8>, Row, Row)> = Vec::new();
    while let Some(mut r) = op.next(cx)? {
        if limit.is_some_and(|l| changes.len() as u64 >= l) {
            break;
        }
        let Some(Value::Binary(pk)) = r.get(offset + width).cloned() else {
            continue;
        };
        if !seen.insert(pk.clone()) {
            continue;
        }
        if !lock_current(cx, &t, &pk, &mut r, offset, recheck.as_ref())? {
            continue;
        }
        let old: Row = r[offset..offset + width].to_vec();
        let new = sets.apply(cx, &t, &r, &old)?;
        changes.push((pk, old, new));
    }
    drop(op);
    let n = changes.len() as u64;
    let mut kept = trigger::Fired { inserted: Vec::new(), deleted: Vec::new(), updated: None, row_count: n };
    if keep {
        let mut updated = vec![false; width];
        for p in sets.column_positions() {
            updated[p] = true;
        }
        kept.updated = Some(updated);
    }
    if let Some(tr) = &instead {
        // INSTEAD OF: the rows as they would be (computed columns included), unwritten.
        for (_, old, mut new) in changes {
            compute_columns(cx, &t, &mut new)?;
            collect_output(&mut outs, Some(&old), Some(&new), width, &[], cx)?;
            kept.deleted.push(old);
            kept.inserted.push(new);
        }
        flush_output(outs, cx)?;
        trigger::fire_instead(cx, &t, tr, kept)?;
        cx.state.rowcount = n as i64;
        return cx.done(Some(n));
    }
    // Write phase.
    let outer = trigger::begin_cascades(cx);
    for (pk, old, new) in changes {
        let new = write_update(cx, &t, &pk, &old, new, "UPDATE")?;
        collect_output(&mut outs, Some(&old), Some(&new), width, &[], cx)?;
        if keep {
            kept.deleted.push(old);
            kept.inserted.push(new);
        }
    }
    flush_output(outs, cx)?;
    trigger::fire_cascades(cx, outer)?;
    if keep {
        trigger::fire_after(cx, &t, trigger::Event::Update, kept)?;
    }
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

fn find_alias_table(
    cx: &mut Cx,
    from: &[TableWithJoins],
    alias: &str,
    perm: &str,
) -> Result<Option<Arc<TableInfo>>, SqlError> {
    fn visit(f: &TableFactor, alias: &str) -> Option<DmlTarget> {
        match f {
            TableFactor::Table { name, alias: a, .. } => {
                let n = a.as_ref().map(|a| a.value.as_str()).unwrap_or(&name.name().value);
                if n.eq_ignore_ascii_case(alias) {
                    Some(DmlTarget::Table { name: name.clone(), hints: Vec::new() })
                } else {
                    None
                }
            }
            TableFactor::Variable { name, alias: Some(a) } if a.value.eq_ignore_ascii_case(alias) => {
                Some(DmlTarget::Variable(name.clone()))
            }
            TableFactor::NestedJoin(t) => {
                visit(&t.relation, alias).or_else(|| t.joins.iter().find_map(|j| visit(&j.relation, alias)))
            }
            _ => None,
        }
    }
    for twj in from {
        let found = visit(&twj.relation, alias).or_else(|| twj.joins.iter().find_map(|j| visit(&j.relation, alias)));
        if let Some(target) = found {
            return target_table(cx, &target, perm).map(Some);
        }
    }
    Ok(None)
}

pub fn delete(cx: &mut Cx, d: &Delete) -> Result<(), SqlError> {
    if let Some((cte, alias)) = cte_target(&d.with, &d.target, &d.from) {
        let vb = updatable_cte(cx, cte, None, "DELETE")?;
        return delete_through(cx, d, &vb, &alias);
    }
    if d.from.is_empty() {
        if let DmlTarget::Table { name, .. } = &d.target {
            if cx.resolve_table_cached(name)?.is_none() {
                if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Delete)? {
                    super::security::check_object(cx, db, &view, "DELETE")?;
                    return trigger::delete_view(cx, d, name, &view, &tr);
                }
            }
        }
        if let Some(vb) = updatable_view(cx, &d.target, "DELETE", None, false)? {
            if vb.needs_rows {
                let alias = target_alias(&d.target);
                return through_view(cx, |cx| delete_through(cx, d, &vb, &alias));
            }
            let mut r = d.clone();
            r.target = vb.target(&d.target);
            r.where_clause = vb.where_with_filter(d.where_clause.as_ref())?;
            r.output = vb.base_output(&d.output);
            return through_view(cx, |cx| delete(cx, &r));
        }
    }
    let t = target_with_from(cx, &d.target, &d.from, "DELETE")?;
    match &d.current_of {
        Some(c) => {
            let pk = positioned(cx, c, &t, &d.from)?;
            delete_rows(cx, d, &t, Some(&pk))
        }
        None => delete_rows(cx, d, &t, None),
    }
}

/// DELETE through a view or CTE whose rows its query finds (see `update_through`).
fn delete_through(cx: &mut Cx, d: &Delete, vb: &ViewBase, alias: &str) -> Result<(), SqlError> {
    let t = vb.base_table(cx, "DELETE")?;
    let mut r = d.clone();
    r.from = vb.with_rows_in_from(&t, &d.from, alias)?;
    r.target = DmlTarget::Table { name: ObjectName::from_ident(Ident::new(alias)), hints: Vec::new() };
    r.output = vb.base_output(&d.output);
    delete_rows(cx, &r, &t, None)
}

/// DELETE from the table `t`, which `d.target` names (or aliases in `d.from`).
fn delete_rows(cx: &mut Cx, d: &Delete, t: &Arc<TableInfo>, current: Option<&[u8]>) -> Result<(), SqlError> {
    let t = t.clone();
    let (plan, offset, _, recheck) =
        plan_target_rows(cx, &t, &d.target, &d.from, d.where_clause.as_ref(), &d.with, current)?;
    let width = t.columns.len();
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Delete, &d.output)?;
    let mut kept: Vec<Row> = Vec::new();
    let mut outs = bind_output(cx, &t, &d.output, &Scope::default())?;
    let limit = top_limit(cx, d.top.as_ref())?;
    // Without FROM the plan is a scan of the target itself: each row comes once, and the
    // row is the target's columns followed by the locator, taken as they are.
    let single = d.from.is_empty() && offset == 0;
    // When nothing reads the row's values (no WHERE to evaluate again, no other index
    // whose entry they locate, no foreign key referencing the table, no OUTPUT), the
    // read under a U lock only tells whether the row is still there: the delete's own X
    // lock (waiting for a writer to end first) and its presence check tell the same, and
    // a row gone by then is not counted (seed 002's `DELETE TOP (1000)`: one lock and
    // one lookup per row fewer).
    let values_unread =
        single && recheck.is_none() && t.indexes.len() == 1 && t.referenced_by.is_empty() && outs.is_empty() && !keep;
    let mut deleted = 0u64;
    let outer = trigger::begin_cascades(cx);
    // Each row read is locked and checked again (`lock_current`): one another
    // transaction deleted meanwhile is skipped, and with TOP the scan goes on for the
    // rows still missing, so concurrent DELETE TOP sessions each delete their n rows.
    // A row that still vanishes before our delete reaches it (it cannot while we hold
    // its U lock; kept as a safety net) is not counted, and TOP reads again.
    loop {
        let want = limit.map(|l| l - deleted);
        let mut op = open(&plan, cx)?;
        let mut seen = HashSet::new();
        let mut victims: Vec<(Vec<u8>, Row)> = Vec::new();
        // The limit is checked before asking for a row: the next row may cost a read.
        while !want.is_some_and(|w| victims.len() as u64 >= w) {
            let Some(mut r) = op.next(cx)? else { break };
            if single {
                r.truncate(width + 1);
                let Some(Value::Binary(pk)) = r.pop() else {
                    continue;
                };
                if values_unread || lock_current(cx, &t, &pk, &mut r, 0, recheck.as_ref())? {
                    victims.push((pk, r));
                }
                continue;
            }
            let Some(Value::Binary(pk)) = r.get(offset + width).cloned() else {
                continue;
            };
            if seen.insert(pk.clone()) && lock_current(cx, &t, &pk, &mut r, offset, recheck.as_ref())? {
                victims.push((pk, r[offset..offset + width].to_vec()));
            }
        }
        drop(op);
        let read = victims.len() as u64;
        let mut vanished = 0u64;
        for (pk, row) in &victims {
            if instead.is_some() {
                deleted += 1;
                collect_output(&mut outs, Some(row), None, width, &[], cx)?;
                kept.push(row.clone());
                continue;
            }
            if write_delete(cx, &t, pk, row, "DELETE")? {
                if keep {
                    kept.push(row.clone());
                }
                deleted += 1;
                collect_output(&mut outs, Some(row), None, width, &[], cx)?;
            } else {
                vanished += 1;
            }
        }
        // Again only for TOP, only when rows vanished and the read filled its quota.
        if vanished == 0 || want.map_or(true, |w| read < w) {
            break;
        }
    }
    flush_output(outs, cx)?;
    trigger::fire_cascades(cx, outer)?;
    if keep {
        let f = trigger::Fired { inserted: Vec::new(), deleted: kept, updated: None, row_count: deleted };
        match &instead {
            Some(tr) => trigger::fire_instead(cx, &t, tr, f)?,
            None => trigger::fire_after(cx, &t, trigger::Event::Delete, f)?,
        }
    }
    cx.state.rowcount = deleted as i64;
    cx.done(Some(deleted))
}

/// The triggers a statement on `t` runs: its INSTEAD OF trigger, and whether it must
/// keep the rows it changes (for that trigger or for AFTER triggers). 334 for OUTPUT
/// without INTO on a table with an enabled trigger for `e`.
pub(super) fn statement_triggers(
    cx: &Cx,
    t: &TableInfo,
    e: trigger::Event,
    output: &[OutputClause],
) -> Result<(Option<trigger::TriggerInfo>, bool), SqlError> {
    if t.triggers.is_empty() {
        return Ok((None, false));
    }
    trigger::check_output(t, e, output)?;
    let instead = trigger::instead_of(cx, &t.triggers, e).cloned();
    let keep = instead.is_some() || trigger::has_after(t, e);
    Ok((instead, keep))
}

/// SELECT ... INTO new_table: creates a heap with the query's columns and fills it.
pub fn select_into(cx: &mut Cx, q: &Query, into: &ObjectName) -> Result<(), SqlError> {
    // SELECT INTO creates a table: CREATE TABLE permission in the target's database.
    super::security::check_create(cx, "CREATE TABLE", Some(into))?;
    let mut q2 = q.clone();
    if let SetExpr::Select(s) = &mut q2.body {
        s.into = None;
    }
    let plan = {
        let mut b = Binder::new(cx);
        b.plan_query(&q2)?.0
    };
    let cols = plan.columns();
    let mut elements = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        if c.name.is_empty() {
            return Err(SqlError::new(
                1038,
                15,
                5,
                format!("An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name. (column {})", i + 1),
            ));
        }
        let dt = DataType { name: ObjectName::from_ident(Ident::plain(c.ty.name())), args: type_args(&c.ty) };
        elements.push(TableElement::Column(ColumnDef {
            name: Ident::new(c.name.clone()),
            data_type: Some(dt),
            computed: None,
            options: [if c.nullable { ColumnOption::Null } else { ColumnOption::NotNull }]
                .into_iter()
                // The new column keeps the source column's (or expression's) collation,
                // also the default one in a database of another collation (None is
                // SQL_Latin1_General_CP1_CI_AS, not "the database's").
                .chain(
                    c.ty.is_character()
                        .then(|| ColumnOption::Collate(Ident::new(c.collation.unwrap_or_default().name()))),
                )
                .collect(),
        }));
    }
    let ct = CreateTable { name: into.clone(), elements, on: None, textimage_on: None, options: Vec::new() };
    let t = super::ddl::create_table(cx, &ct)?;
    // Streamed: the query cannot read the table it creates, so nothing is held in memory.
    let mut op = open(&plan, cx)?;
    let positions: Vec<usize> = (0..cols.len()).collect();
    let tys: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
    let mut n = 0u64;
    while let Some(r) = op.next(cx)? {
        insert_values(cx, &t, &positions, r, &tys)?;
        n += 1;
    }
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

fn type_args(ty: &SqlType) -> Vec<types::TypeArg> {
    use types::{Length, TypeArg};
    match *ty {
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            vec![TypeArg::Num(i64::from(precision)), TypeArg::Num(i64::from(scale))]
        }
        SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => vec![TypeArg::Num(i64::from(len))],
        SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => match len {
            Length::Max => vec![TypeArg::Max],
            Length::Bounded(n) => vec![TypeArg::Num(i64::from(n))],
        },
        SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
            vec![TypeArg::Num(i64::from(scale))]
        }
        _ => Vec::new(),
    }
}

#[allow(dead_code)]
fn _unused(_: &dyn Fn(&Row) -> bool) -> bool {
    is_true(&Value::Null)
}
