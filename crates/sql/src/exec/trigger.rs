//! DML triggers: CREATE/ALTER TRIGGER, ENABLE/DISABLE TRIGGER, and running them.
//!
//! A trigger is a catalog module (sys.objects type TR) whose row also records its parent
//! table or view, its events, AFTER or INSTEAD OF, and whether it is disabled, so a DML
//! statement knows which triggers to run without parsing them; a table's triggers are
//! part of its [`TableInfo`] (`triggers`), rebuilt with it on any catalog change.
//!
//! The statements call [`fire_after`] once their rows are written and checked (also for
//! zero rows), inside the statement's transaction, or [`instead_of`] / [`fire_instead`]
//! in place of changing anything. A trigger's body runs in a frame of its own (like a
//! procedure) that carries a [`TriggerContext`]: the `inserted` and `deleted` rows, which
//! the binder turns into in-memory row sources (`Plan::Rows`) when a FROM names them,
//! and the columns UPDATE() and COLUMNS_UPDATED() report.
//!
//! As in SQL Server: @@TRANCOUNT is at least 1 inside a trigger (an autocommit
//! statement's own transaction counts); a trigger runs with XACT_ABORT ON unless it sets
//! it OFF (an error ends the batch and rolls back, RAISERROR does not); a trigger that
//! ends its transaction (ROLLBACK) aborts the batch with 3609 once it finishes; triggers
//! nest up to 32 levels (217); a trigger's DML on its own table does not fire the same
//! trigger again unless RECURSIVE_TRIGGERS is ON; an INSTEAD OF trigger's DML on its own
//! table or view does not fire it again.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::ddl::{now_datetime, write_object};
use super::errors;
use super::expr::Row;
pub(crate) use super::firing::{Cascaded, Fired, TriggerContext};
use super::plan::OutCol;
use super::session::Frame;
pub(crate) use super::table::{triggers_of, Event, TableInfo, TriggerInfo};
use crate::ast::*;
use crate::catalog::{self, Object, ObjectBody};
use crate::host::DbId;

/// Does `t` have an enabled trigger for `e` (OUTPUT without INTO is then 334)?
pub fn check_output(t: &TableInfo, e: Event, clauses: &[OutputClause]) -> Result<(), SqlError> {
    if clauses.iter().any(|c| c.into.is_none()) && t.triggers.iter().any(|tr| tr.fires_on(e)) {
        return Err(SqlError::new(
            334,
            16,
            1,
            format!(
                "The target table '{}' of the DML statement cannot have any enabled triggers if the statement contains an OUTPUT clause without INTO clause.",
                t.display_name
            ),
        ));
    }
    Ok(())
}

/// Does any enabled AFTER trigger of `t` fire on `e`? (Statements keep the rows they
/// change only then.)
pub fn has_after(t: &TableInfo, e: Event) -> bool {
    t.triggers.iter().any(|tr| !tr.def.instead_of && tr.fires_on(e))
}

/// The INSTEAD OF trigger that replaces `e` on this table or view, unless that trigger is
/// the one running (its own DML on its table is then done as written).
pub fn instead_of<'a>(cx: &Cx, triggers: &'a [TriggerInfo], e: Event) -> Option<&'a TriggerInfo> {
    let tr = triggers.iter().find(|tr| tr.def.instead_of && tr.fires_on(e))?;
    let running = cx.frames.iter().any(|f| f.trigger.as_ref().is_some_and(|c| c.trigger_id == tr.object_id));
    (!running).then_some(tr)
}

fn context(trigger_id: i32, parent_id: i32, cols: Vec<OutCol>, column_ids: Vec<i32>, f: Fired) -> TriggerContext {
    let n = cols.len();
    TriggerContext {
        trigger_id,
        parent_id,
        inserted: Arc::new(f.inserted),
        deleted: Arc::new(f.deleted),
        cols,
        updated: f.updated.unwrap_or_else(|| vec![true; n]),
        column_ids,
    }
}

fn table_columns(t: &TableInfo) -> (Vec<OutCol>, Vec<i32>) {
    // The pseudo-tables' columns are nullable whatever the table says (a view's
    // would-be rows and INSTEAD OF rows may hold NULLs).
    let cols = t.columns.iter().map(|c| OutCol::new(c.name.clone(), c.ty, true)).collect();
    (cols, t.columns.iter().map(|c| c.column_id).collect())
}

/// Runs the enabled AFTER triggers of `t` for `e` (after the statement's rows are
/// written and checked).
pub fn fire_after(cx: &mut Cx, t: &TableInfo, e: Event, f: Fired) -> Result<(), SqlError> {
    let list: Vec<TriggerInfo> = t.triggers.iter().filter(|tr| !tr.def.instead_of && tr.fires_on(e)).cloned().collect();
    if list.is_empty() {
        return Ok(());
    }
    let (cols, ids) = table_columns(t);
    let row_count = f.row_count;
    let ctx = Arc::new(context(0, t.object_id, cols, ids, f));
    for tr in &list {
        // Direct recursion: the innermost running trigger firing itself again.
        let innermost = cx.frames.iter().rev().find_map(|f| f.trigger.as_ref().map(|c| c.trigger_id));
        if innermost == Some(tr.object_id) && !recursive_triggers(cx, tr.db) {
            continue;
        }
        let ctx = Arc::new(TriggerContext {
            trigger_id: tr.object_id,
            parent_id: ctx.parent_id,
            inserted: ctx.inserted.clone(),
            deleted: ctx.deleted.clone(),
            cols: ctx.cols.clone(),
            updated: ctx.updated.clone(),
            column_ids: ctx.column_ids.clone(),
        });
        run(cx, tr, ctx, row_count)?;
    }
    Ok(())
}

/// The slot in `cx.cascades` for rows a cascade changes in `t` (`e`: DELETE for ON
/// DELETE CASCADE, else UPDATE, setting `columns`), or None when no AFTER trigger of
/// `t` wants them. Slots are made in the order the cascades reach their tables, before
/// a cascade goes further down, so a referencing table's slot follows its parent's.
pub fn cascade_slot(cx: &mut Cx, t: &Arc<TableInfo>, e: Event, columns: &[usize]) -> Option<usize> {
    if !has_after(t, e) {
        return None;
    }
    let i =
        match cx.cascades.iter().position(|c| c.event == e && c.table.db == t.db && c.table.object_id == t.object_id) {
            Some(i) => i,
            None => {
                let updated = (e == Event::Update).then(|| vec![false; t.columns.len()]);
                let fired = Fired { inserted: Vec::new(), deleted: Vec::new(), updated, row_count: 0 };
                cx.cascades.push(Cascaded { table: t.clone(), event: e, fired });
                cx.cascades.len() - 1
            }
        };
    if let Some(u) = &mut cx.cascades[i].fired.updated {
        for &c in columns {
            u[c] = true;
        }
    }
    Some(i)
}

/// Keeps a row a cascade changed (`new` None for a delete) in its slot.
pub fn cascade_row(cx: &mut Cx, slot: usize, old: Row, new: Option<Row>) {
    let f = &mut cx.cascades[slot].fired;
    f.deleted.push(old);
    f.inserted.extend(new);
    f.row_count += 1;
}

/// Runs what [`begin_cascades`] collected since it was called (restoring the
/// collection of an enclosing statement): the AFTER triggers of each table a cascade
/// changed, once per table and action with all its rows, the deepest tables first. SQL
/// Server fires them after all cascading actions, in the opposite order of the
/// cascades, before the AFTER triggers of the statement's own table.
pub fn fire_cascades(cx: &mut Cx, outer: Vec<Cascaded>) -> Result<(), SqlError> {
    let mine = std::mem::replace(&mut cx.cascades, outer);
    for c in mine.into_iter().rev() {
        fire_after(cx, &c.table, c.event, c.fired)?;
    }
    Ok(())
}

/// Starts collecting the rows a statement's cascades change; hand the result to
/// [`fire_cascades`] once the statement's rows are written.
pub fn begin_cascades(cx: &mut Cx) -> Vec<Cascaded> {
    std::mem::take(&mut cx.cascades)
}

/// Runs the INSTEAD OF trigger `tr` of table `t` with the rows the statement would
/// have changed.
pub fn fire_instead(cx: &mut Cx, t: &TableInfo, tr: &TriggerInfo, f: Fired) -> Result<(), SqlError> {
    let (cols, ids) = table_columns(t);
    let row_count = f.row_count;
    let ctx = Arc::new(context(tr.object_id, t.object_id, cols, ids, f));
    run(cx, tr, ctx, row_count)
}

/// Runs the INSTEAD OF trigger of a view (columns: the view's).
pub fn fire_instead_view(
    cx: &mut Cx,
    view_id: i32,
    cols: Vec<OutCol>,
    tr: &TriggerInfo,
    f: Fired,
) -> Result<(), SqlError> {
    let ids = (1..=cols.len() as i32).collect();
    let row_count = f.row_count;
    let ctx = Arc::new(context(tr.object_id, view_id, cols, ids, f));
    run(cx, tr, ctx, row_count)
}

fn recursive_triggers(cx: &Cx, db: DbId) -> bool {
    cx.catalog(db).is_ok_and(|c| c.recursive_triggers.load(AtomicOrdering::Relaxed))
}

/// Runs one trigger's body in a frame of its own.
fn run(cx: &mut Cx, tr: &TriggerInfo, ctx: Arc<TriggerContext>, row_count: u64) -> Result<(), SqlError> {
    let ct = match tr.body.get() {
        Some(ct) => ct.clone(),
        None => {
            let def = super::base::parse_module(&tr.def.module.definition)?;
            let StatementKind::CreateTrigger(ct) = def.kind else {
                return Err(errors::invalid_object(&tr.name));
            };
            let ct = Arc::new(*ct);
            let _ = tr.body.set(ct.clone());
            ct
        }
    };
    if cx.frames.len() > 32 {
        return Err(errors::nesting_exceeded());
    }
    crate::stack::check()?;
    let frame = Frame {
        proc_name: Some(tr.name.clone()),
        proc_id: tr.object_id,
        in_module: true,
        trigger: Some(ctx),
        ..Default::default()
    };
    let saved_db = cx.state.database;
    let set_options = cx.state.scoped_set_options();
    // The statement's own (autocommit) transaction counts inside the trigger.
    let implicit = cx.state.trancount == 0;
    if implicit {
        cx.state.trancount = 1;
    }
    let trancount_before = cx.state.trancount;
    cx.state.database = tr.db;
    cx.state.xact_abort = true;
    cx.state.rowcount = row_count as i64;
    cx.frames.push(frame);
    let saved_source = std::mem::replace(&mut cx.source, Arc::from(tr.def.module.definition.as_str()));
    let saved_cmd = cx.cur_cmd;
    let r = cx.run_block(&ct.body);
    cx.cur_cmd = saved_cmd;
    cx.source = saved_source;
    cx.drop_frame_tables();
    cx.frames.pop();
    cx.state.database = saved_db;
    super::control::restore_set_options(cx, set_options);
    let ended = cx.state.trancount == 0;
    if implicit && cx.state.trancount == trancount_before {
        cx.state.trancount = 0;
    }
    cx.state.rowcount = row_count as i64;
    if cx.state.trancount == 0 {
        // The statement's own transaction: whatever doomed it ends with it.
        cx.state.doomed = false;
    }
    match r {
        Ok(_) => {}
        Err(a) => {
            // An error ends an explicit transaction's usefulness (XACT_ABORT ON).
            if cx.state.trancount > 0 {
                cx.state.doomed = true;
            }
            if a.reported {
                return Err(SqlError { number: 3617, ..a.error });
            }
            return Err(a.error);
        }
    }
    if ended {
        return Err(SqlError::new(3609, 16, 1, "The transaction ended in the trigger. The batch has been aborted."));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// What a trigger body reads

// ---------------------------------------------------------------------------------------
// DDL

fn no_such_target(name: &ObjectName) -> SqlError {
    SqlError::new(
        8197,
        16,
        4,
        format!("The object '{}' does not exist or is invalid for this operation.", errors::written(name)),
    )
}

/// CREATE / ALTER / CREATE OR ALTER TRIGGER.
pub fn create_trigger(cx: &mut Cx, ct: &CreateTrigger, stmt: &Statement) -> Result<(), SqlError> {
    let (db, parent) = cx.resolve_object(&ct.table)?.ok_or_else(|| no_such_target(&ct.table))?;
    let is_view = matches!(parent.body, ObjectBody::View(_));
    if !(matches!(parent.body, ObjectBody::Table(_)) || is_view) || parent.name.starts_with('#') {
        return Err(no_such_target(&ct.table));
    }
    if is_view && ct.timing == TriggerTiming::After {
        return Err(no_such_target(&ct.table));
    }
    // A trigger lives in its table's schema.
    let mut name = ct.name.clone();
    if let Some(s) = ct.name.schema() {
        if cx.schema_id(db, &s.value) != Some(parent.schema_id) {
            return Err(SqlError::new(
                2108,
                16,
                1,
                format!(
                    "Cannot create trigger on '{}' as the target is not in the same schema.",
                    errors::written(&ct.table)
                ),
            ));
        }
    } else {
        let schema = cx.catalog(db)?.inner.read().schemas.get(&parent.schema_id).map(|s| s.name.clone());
        if let Some(s) = schema {
            name.parts.insert(0, Ident::new(s));
        }
    }
    let instead_of = ct.timing == TriggerTiming::InsteadOf;
    let n = name.name().value.clone();
    let (existing, clash) = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        let existing = g.object_by_name(parent.schema_id, &n).cloned();
        let clash = if instead_of {
            g.triggers_of(parent.id).filter(|(o, t)| t.instead_of && !o.name.eq_ignore_ascii_case(&n)).find_map(
                |(_, t)| {
                    [
                        (ct.insert && t.insert, "INSERT"),
                        (ct.update && t.update, "UPDATE"),
                        (ct.delete && t.delete, "DELETE"),
                    ]
                    .into_iter()
                    .find(|(c, _)| *c)
                    .map(|(_, e)| e)
                },
            )
        } else {
            None
        };
        (existing, clash)
    };
    // A cascade changes the table's rows itself, so it cannot have an INSTEAD OF
    // trigger for the action a FOREIGN KEY of it cascades (1787 is the other order).
    let cascading = instead_of
        && parent.table().is_some_and(|t| {
            t.foreign_keys.iter().any(|fk| {
                (ct.delete && fk.on_delete != catalog::ReferentialAction::NoAction)
                    || (ct.update && fk.on_update != catalog::ReferentialAction::NoAction)
            })
        });
    if cascading {
        return Err(SqlError::new(
            2113,
            16,
            1,
            format!(
                "Cannot {} INSTEAD OF DELETE or INSTEAD OF UPDATE TRIGGER '{}' on table '{}'. This is because the table has a FOREIGN KEY with cascading DELETE or UPDATE.",
                if ct.mode == CreateMode::Alter { "ALTER" } else { "CREATE" },
                n,
                errors::written(&ct.table)
            ),
        ));
    }
    if let Some(ev) = clash {
        return Err(SqlError::new(
            2111,
            16,
            1,
            format!(
                "Cannot {} trigger '{}' on {} '{}' because an INSTEAD OF {ev} trigger already exists on this object.",
                if ct.mode == CreateMode::Alter { "ALTER" } else { "CREATE" },
                n,
                if is_view { "view" } else { "table" },
                errors::written(&ct.table)
            ),
        ));
    }
    let definition = super::ddl::module_definition(&cx.source, stmt, ct.mode);
    let body = ObjectBody::Trigger(catalog::Trigger {
        module: catalog::Module { definition },
        parent_id: parent.id,
        insert: ct.insert,
        update: ct.update,
        delete: ct.delete,
        instead_of,
        disabled: false,
        not_for_replication: ct.not_for_replication,
    });
    let now = now_datetime();
    let obj = match (existing, ct.mode) {
        (Some(_), CreateMode::Create) => return Err(errors::object_exists(&n)),
        (None, CreateMode::Alter) => return Err(errors::invalid_object(&n)),
        (Some(o), _) => {
            if o.body.parent_id() != Some(parent.id) {
                return Err(errors::object_exists(&n));
            }
            Object { modify_date: now, body, ..o }
        }
        (None, _) => {
            let id = super::ddl::allocate_id(cx, db)?;
            Object { id, schema_id: parent.schema_id, name: n, create_date: now.clone(), modify_date: now, body }
        }
    };
    write_object(cx, db, &obj)
}

/// {ENABLE | DISABLE} TRIGGER {ALL | names} ON table, and ALTER TABLE's form.
pub fn enable_triggers(
    cx: &mut Cx,
    enable: bool,
    names: Option<&[String]>,
    table: &ObjectName,
    alter_table: bool,
) -> Result<(), SqlError> {
    let (db, parent) = cx.resolve_object(table)?.ok_or_else(|| no_such_target(table))?;
    let list: Vec<Object> = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.triggers_of(parent.id).map(|(o, _)| o.clone()).collect()
    };
    if let Some(names) = names {
        for n in names {
            if !list.iter().any(|o| o.name.eq_ignore_ascii_case(n)) {
                if alter_table {
                    return Err(SqlError::new(
                        4920,
                        16,
                        1,
                        format!("ALTER TABLE failed because trigger '{n}' on table '{}' does not exist.", parent.name),
                    ));
                }
                return Err(SqlError::new(
                    3701,
                    11,
                    5,
                    format!(
                        "Cannot {} the trigger '{n}', because it does not exist or you do not have permission.",
                        if enable { "enable" } else { "disable" }
                    ),
                ));
            }
        }
    }
    for mut o in list {
        if names.is_some_and(|ns| !ns.iter().any(|n| o.name.eq_ignore_ascii_case(n))) {
            continue;
        }
        if let ObjectBody::Trigger(t) = &mut o.body {
            if t.disabled != enable {
                continue;
            }
            t.disabled = !enable;
        }
        write_object(cx, db, &o)?;
    }
    Ok(())
}

/// The trigger objects of a table or view being dropped.
pub fn triggers_to_drop(cx: &Cx, db: DbId, parent_id: i32) -> Result<Vec<i32>, SqlError> {
    let cat = cx.catalog(db)?;
    let g = cat.inner.read();
    Ok(g.triggers_of(parent_id).map(|(o, _)| o.id).collect())
}

// ---------------------------------------------------------------------------------------
// INSTEAD OF triggers on views

/// The view `name` names and its INSTEAD OF trigger for `e`, if it has one.
pub fn view_instead_of(
    cx: &mut Cx,
    name: &ObjectName,
    e: Event,
) -> Result<Option<(DbId, Object, TriggerInfo)>, SqlError> {
    let Some((db, o)) = cx.resolve_object(name)? else { return Ok(None) };
    if !matches!(o.body, ObjectBody::View(_)) {
        return Ok(None);
    }
    let list = cx.view_triggers(db, o.id)?;
    Ok(instead_of(cx, &list, e).cloned().map(|t| (db, o, t)))
}

/// The rows of view `name` a WHERE selects, with the view's columns (only the columns
/// when `rows` is false).
fn view_rows(
    cx: &mut Cx,
    name: &ObjectName,
    where_clause: Option<&Expr>,
    rows: bool,
) -> Result<(Vec<OutCol>, Vec<Row>), SqlError> {
    let b = crate::parse_batch(&format!("SELECT * FROM {name}"))?;
    let Some(StatementKind::Query(mut q)) = b.statements.into_iter().next().map(|s| s.kind) else {
        return Err(errors::invalid_object(&errors::written(name)));
    };
    if let SetExpr::Select(s) = &mut q.body {
        s.where_clause = where_clause.cloned();
    }
    let (plan, cols) = super::query::Binder::new(cx).plan_query(&q)?;
    if !rows {
        return Ok((cols, Vec::new()));
    }
    let rows = super::plan::drain(super::plan::open(&plan, cx)?, cx)?;
    Ok((cols, rows))
}

/// INSERT into a view with an INSTEAD OF INSERT trigger: the trigger gets the rows.
pub fn insert_view(
    cx: &mut Cx,
    ins: &Insert,
    name: &ObjectName,
    view: &Object,
    tr: &TriggerInfo,
) -> Result<(), SqlError> {
    let (cols, _) = view_rows(cx, name, None, false)?;
    let positions: Vec<usize> = if ins.columns.is_empty() {
        (0..cols.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                cols.iter()
                    .position(|x| x.name.eq_ignore_ascii_case(&c.value))
                    .ok_or_else(|| errors::invalid_column(&c.value))
            })
            .collect::<Result<_, _>>()?
    };
    let sources: Vec<(Vec<SqlType>, Vec<Row>)> = match &ins.source {
        InsertSource::Values(rows) => {
            let mut out = Vec::new();
            let mut tys = Vec::new();
            for r in rows {
                let mut vals = Vec::with_capacity(r.len());
                tys.clear();
                for e in r {
                    let (v, ty) = super::run::eval_standalone(cx, e)?;
                    vals.push(v);
                    tys.push(ty);
                }
                out.push((tys.clone(), vec![vals]));
            }
            out
        }
        InsertSource::Query(q) => {
            let (plan, qcols) = super::query::Binder::new(cx).plan_query(q)?;
            let rows = super::plan::drain(super::plan::open(&plan, cx)?, cx)?;
            vec![(qcols.iter().map(|c| c.ty).collect(), rows)]
        }
        InsertSource::DefaultValues => vec![(Vec::new(), vec![Vec::new()])],
        _ => return Err(errors::not_supported("INSERT EXEC into a view with an INSTEAD OF trigger")),
    };
    let mut inserted = Vec::new();
    for (tys, rows) in sources {
        for r in rows {
            if r.len() != positions.len() {
                return Err(errors::column_count_mismatch());
            }
            let mut row = vec![Value::Null; cols.len()];
            for (k, v) in r.into_iter().enumerate() {
                let p = positions[k];
                row[p] = if v.is_null() {
                    Value::Null
                } else {
                    crate::scalar::convert::convert(&v, &tys[k], &cols[p].ty, None)?
                };
            }
            inserted.push(row);
        }
    }
    let n = inserted.len() as u64;
    let mut updated = vec![false; cols.len()];
    for p in &positions {
        updated[*p] = true;
    }
    let f = Fired { inserted, deleted: Vec::new(), updated: Some(updated), row_count: n };
    fire_instead_view(cx, view.id, cols, tr, f)?;
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

/// UPDATE of a view with an INSTEAD OF UPDATE trigger.
pub fn update_view(
    cx: &mut Cx,
    u: &Update,
    name: &ObjectName,
    view: &Object,
    tr: &TriggerInfo,
) -> Result<(), SqlError> {
    let (cols, rows) = view_rows(cx, name, u.where_clause.as_ref(), true)?;
    let scope = super::query::Scope::from_cols(Some(&name.name().value), &cols);
    let mut sets = Vec::new();
    let mut updated = vec![false; cols.len()];
    for a in &u.assignments {
        let AssignTarget::Column(c) = &a.target else {
            return Err(errors::not_supported("Variable assignment in an UPDATE of a view with an INSTEAD OF trigger"));
        };
        let p = cols
            .iter()
            .position(|x| x.name.eq_ignore_ascii_case(&c.name().value))
            .ok_or_else(|| errors::invalid_column(&c.name().value))?;
        let e = super::query::Binder::new(cx).bind_expr(&a.value, &scope)?;
        updated[p] = true;
        sets.push((p, e));
    }
    let mut inserted = Vec::with_capacity(rows.len());
    for r in &rows {
        let mut new = r.clone();
        for (p, e) in &sets {
            let v = e.eval(r, cx)?;
            new[*p] = if v.is_null() {
                Value::Null
            } else {
                crate::scalar::convert::convert(&v, &e.ty(), &cols[*p].ty, None)?
            };
        }
        inserted.push(new);
    }
    let n = rows.len() as u64;
    let f = Fired { inserted, deleted: rows, updated: Some(updated), row_count: n };
    fire_instead_view(cx, view.id, cols, tr, f)?;
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

/// DELETE from a view with an INSTEAD OF DELETE trigger.
pub fn delete_view(
    cx: &mut Cx,
    d: &Delete,
    name: &ObjectName,
    view: &Object,
    tr: &TriggerInfo,
) -> Result<(), SqlError> {
    let (cols, rows) = view_rows(cx, name, d.where_clause.as_ref(), true)?;
    let n = rows.len() as u64;
    let f = Fired { inserted: Vec::new(), deleted: rows, updated: Some(vec![false; cols.len()]), row_count: n };
    fire_instead_view(cx, view.id, cols, tr, f)?;
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

// The INSTEAD OF triggers of a view, cached per session.
impl Cx<'_> {
    /// The triggers of view `view_id` (cached per catalog version, so a trigger's body
    /// is parsed at its first firing only, until the catalog changes).
    pub fn view_triggers(&mut self, db: DbId, view_id: i32) -> Result<super::session::ViewTriggers, SqlError> {
        let cat = self.catalog(db)?;
        let version = cat.version();
        if let Some((v, t)) = self.state.view_triggers.get(&(db, view_id)) {
            if *v == version {
                return Ok(t.clone());
            }
        }
        let list: super::session::ViewTriggers = triggers_of(&cat.inner.read(), db, view_id).into();
        self.state.view_triggers.insert((db, view_id), (version, list.clone()));
        Ok(list)
    }
}
