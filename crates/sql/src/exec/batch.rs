//! Running a batch: parsing, compiling and executing its statements in order under
//! SQL Server's error and abort rules, the statement properties (data statement,
//! implicit transaction, @@ERROR reset, DONE command), atomic statements, queries and
//! their results.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use crate::ast::*;
use crate::host::Host;
use crate::results::{ColumnInfo, Done, DoneKind, EnvChange, Message, ResultSink};

use super::base::*;
use super::context::*;
use super::control::*;
use super::expr::BExpr;
use super::plan::{column_info, open, Plan};
use super::query::Binder;
use super::run::*;
use super::session::*;
use super::{ddl, ddl_dispatch, dml, errors, merge, plan, plan_cache, procs, query, security};

/// Parses and runs one batch. Errors go to the sink as messages (the batch goes on or
/// stops as SQL Server's abort rules say); this never fails itself.
pub fn execute_batch(state: &mut SessionState, host: &mut dyn Host, text: &str, sink: &mut dyn ResultSink) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    state.bulk_target = None;
    if !state.showplan {
        if let Some(p) = plan_cache::parameterize(text, state.database) {
            if execute_parameterized(state, host, text, sink, p) {
                return;
            }
        }
    }
    let (batch, literals) = match state.parse_cache.parse_shaped(text) {
        Ok(b) => b,
        Err(e) => {
            let _ = sink.message(&Message { error: e, info: false });
            let _ = sink.done(Done {
                kind: DoneKind::Statement,
                row_count: None,
                error: true,
                in_xact: state.trancount > 0,
            });
            return;
        }
    };
    let mut cx = Cx::new(host, state, sink);
    cx.source = Arc::from(text);
    cx.literals = literals;
    let compile_error =
        super::compile::check_body(text, &batch.statements, &[]).or_else(|| compile_check(&mut cx, &batch.statements));
    if let Some(e) = compile_error {
        // Nothing of the batch runs, as when SQL Server fails to compile it.
        report(&mut cx, &e);
    } else {
        run_top_level(&mut cx, &batch.statements);
    }
    if let Some(l) = cx.literals.take() {
        drop(cx);
        state.parse_cache.recycle(l);
    }
}

/// Runs a batch that [`plan_cache::parameterize`] took apart: its template with the
/// literals' values as parameters, with the kept plan when there is a current one (else
/// binding it and keeping it). False when the template does not parse (the caller then
/// runs the batch as it is, for its own error).
pub(super) fn execute_parameterized(
    state: &mut SessionState,
    host: &mut dyn Host,
    text: &str,
    sink: &mut dyn ResultSink,
    p: plan_cache::Parameterized,
) -> bool {
    let plan_cache::Parameterized { key, values } = p;
    let kept = state.plan_cache.get(&key);
    let (batch, reuse, version) = match kept {
        Some(e) if host.catalog(e.table.db).is_ok_and(|c| c.version() == e.version) => {
            (e.batch.clone(), Some((e.plan.clone(), e.table.clone())), e.version)
        }
        stale => {
            if stale.is_some() {
                state.plan_cache.remove(&key);
            }
            let Ok(batch) = crate::parse_batch(key.template()) else {
                return false;
            };
            let version = host.catalog(state.database).map(|c| c.version()).unwrap_or(0);
            (Arc::new(batch), None, version)
        }
    };
    let Some(Statement { kind: StatementKind::Query(q), .. }) = batch.statements.first() else {
        return false;
    };
    let reusing = reuse.is_some();
    let mut cx = Cx::new(host, state, sink);
    cx.source = Arc::from(text);
    cx.frames[0].vars = values
        .into_iter()
        .enumerate()
        .map(|(i, (value, ty))| Var { name: plan_cache::param_name(i), ty, value, table: None, readonly: false })
        .collect();
    cx.plan_slot = Some(plan_cache::PlanSlot { query: &**q, reuse, captured: None });
    run_top_level(&mut cx, &batch.statements);
    let captured = cx.plan_slot.take().and_then(|s| s.captured);
    // Keep a plan bound now when its table's catalog did not change meanwhile.
    if let (false, Some(plan)) = (reusing, captured) {
        let SetExpr::Select(s) = &q.body else {
            return true;
        };
        let Some(TableFactor::Table { name, .. }) = s.from.first().map(|f| &f.relation) else {
            return true;
        };
        if let Ok(Some(table)) = cx.resolve_table_cached(name) {
            let current = cx.catalog(table.db).map(|c| c.version()).unwrap_or(0);
            if table.db == key.database() && current == version {
                drop(cx);
                state.plan_cache.insert(key, plan_cache::Entry { batch, plan, table, version });
            }
        }
    }
    true
}

/// SQL Server compiles a whole batch before running it: a SELECT naming a column that a
/// table existing at that time lacks (207, 209, 4104) fails the batch before its first
/// statement runs. Statements whose tables do not exist yet are compiled when reached
/// (deferred name resolution). Only SELECTs after the first statement are checked (the
/// first one fails the same way when it runs), and only up to the first statement that
/// may change what names mean (DDL, USE, EXEC), so a schema changed by the batch itself
/// is never judged by its old definition.
pub(super) fn compile_check(cx: &mut Cx, statements: &[Statement]) -> Option<SqlError> {
    for stmt in statements.iter().skip(1) {
        match &stmt.kind {
            StatementKind::Query(q) => {
                if matches!(&q.body, SetExpr::Select(s) if s.into.is_some()) {
                    continue;
                }
                let r = {
                    let mut b = query::Binder::new(cx);
                    b.plan_query(q).map(|_| ())
                };
                if let Err(mut e) = r {
                    // What a failed bind queued goes with its error, reported when the
                    // statement runs.
                    if !matches!(e.number, 207 | 209 | 4104) {
                        cx.preceding.clear();
                    }
                    if matches!(e.number, 207 | 209 | 4104) {
                        if e.line == 0 {
                            e.line = stmt.line();
                        }
                        return Some(e);
                    }
                }
            }
            StatementKind::Declare(_)
            | StatementKind::SetVariable { .. }
            | StatementKind::SetOption(_)
            | StatementKind::Print(_)
            | StatementKind::Insert(_)
            | StatementKind::Update(_)
            | StatementKind::Delete(_)
            | StatementKind::Merge(_)
            | StatementKind::BeginTransaction { .. }
            | StatementKind::Commit { .. }
            | StatementKind::Rollback { .. }
            | StatementKind::SaveTransaction { .. } => {}
            _ => return None,
        }
    }
    None
}

/// Ends a session: rolls back its open transaction (reloading the catalogs it changed)
/// and drops its #temp tables, which live as long as the session (a later session that
/// gets the same spid would otherwise find them under the same internal names).
pub fn end_session(state: &mut SessionState, host: &mut dyn Host) {
    state.cancel.store(false, AtomicOrdering::Relaxed);
    // Nothing to end, the usual case when a pool resets a reused connection.
    if state.trancount == 0 && state.temp_tables.is_empty() && !host.in_transaction() {
        return;
    }
    let mut sink = crate::results::CollectSink::default();
    let mut cx = Cx::new(host, state, &mut sink);
    if cx.state.trancount > 0 || cx.host.in_transaction() {
        let _ = rollback_all(&mut cx);
    }
    procs::drop_scope_temp_tables(&mut cx, 0);
}

/// Runs statements as a batch: errors reported, autocommit, XACT_ABORT handling.
pub fn run_top_level(cx: &mut Cx, statements: &[Statement]) {
    declare_variables(cx, statements);
    match exec_block(cx, statements) {
        Ok(Flow::Goto(label)) => {
            let e = SqlError::new(
                133,
                15,
                1,
                format!("A GOTO statement references the label '{label}' but the label has not been declared."),
            );
            report(cx, &e);
        }
        Ok(_) => {}
        Err(a) => {
            if !a.reported {
                report(cx, &a.error);
            }
        }
    }
    end_uncommittable(cx);
    // Table variables of the batch go away with it.
    cx.drop_frame_tables();
}

/// SQL Server declares a scope's variables when it compiles it: one whose DECLARE sits in
/// a branch that does not run still exists, NULL. Each scalar variable of the scope is
/// declared here before the first statement runs; its DECLARE, when reached, gives it
/// its initial value (`control`'s DECLARE). Table and cursor variables are created when
/// their DECLARE runs, and a type that does not resolve is left for the DECLARE to report.
fn declare_variables(cx: &mut Cx, statements: &[Statement]) {
    crate::ast::find_statement(statements, &mut |s| {
        let StatementKind::Declare(decls) = &s.kind else { return None::<()> };
        for d in decls {
            let Declaration::Variable { name, data_type, .. } = d else { continue };
            let cursor =
                data_type.name.parts.len() == 1 && data_type.name.parts[0].value.eq_ignore_ascii_case("CURSOR");
            if cursor || cx.lookup_var(name).is_some() {
                continue;
            }
            let Ok(super::user_types::DeclaredType::Scalar(ty)) = super::user_types::resolve(cx, data_type) else {
                continue;
            };
            if errors::check_variable_type(&ty).is_ok() {
                cx.frame().vars.push(Var { name: name.clone(), ty, value: Value::Null, table: None, readonly: false });
            }
        }
        None
    });
}

/// Runs a list of statements (a batch, a block, a procedure body), handling GOTO.
pub fn exec_block(cx: &mut Cx, statements: &[Statement]) -> ExecResult {
    let mut i = 0;
    while i < statements.len() {
        let stmt = &statements[i];
        i += 1;
        if let Err(e) = cx.check_cancel() {
            return Err(Abort { error: e, reported: false });
        }
        let sets = cx.error_sets;
        let flow = match exec_statement(cx, stmt) {
            Ok(f) => {
                if cx.error_sets == sets && super::statements::props(&stmt.kind).resets_error {
                    cx.state.error = 0;
                }
                f
            }
            Err(mut e) => {
                if e.line == 0 {
                    e.line = stmt.line();
                }
                if e.procedure.is_none() {
                    e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
                }
                if e.number == 3617 {
                    return Err(Abort { error: e, reported: true });
                }
                // Name-resolution errors are compile errors of the TRY block's own scope
                // in SQL Server: CATCH does not see them (it does from a nested scope).
                let same_scope = cx.try_frames.last() == Some(&cx.frames.len());
                let uncatchable = same_scope && matches!(e.number, 207 | 208 | 4104);
                // Severity 20 and up ends the connection: no CATCH block sees it.
                if cx.try_depth > 0 && e.severity > 10 && !e.is_fatal() && !uncatchable {
                    return Err(Abort { error: e, reported: false });
                }
                report(cx, &e);
                if uncatchable {
                    cx.scope_abort = true;
                    return Err(Abort { error: e, reported: true });
                }
                let terminated = match stmt.kind {
                    StatementKind::Insert(_)
                    | StatementKind::Update(_)
                    | StatementKind::Delete(_)
                    | StatementKind::Merge(_) => {
                        matches!(e.number, 2627 | 2601 | 547 | 550 | 515 | 2628 | 8152 | 8115 | 8134 | 220 | 232 | 512)
                    }
                    // Rows rewritten by ALTER TABLE, keys built by CREATE INDEX.
                    StatementKind::AlterTable(_) | StatementKind::CreateIndex(_) => {
                        matches!(e.number, 515 | 2628 | 8152 | 1505 | 1750)
                    }
                    _ => false,
                };
                if terminated && !cx.state.xact_abort {
                    let _ = cx.sink.message(&Message {
                        error: SqlError::new(3621, 0, 0, "The statement has been terminated.").at_line(e.line),
                        info: true,
                    });
                }
                // RAISERROR does not honour XACT_ABORT (THROW does).
                let xact_abort = cx.state.xact_abort && !matches!(stmt.kind, StatementKind::Raiserror(_));
                let abort = aborts_batch(&e) || xact_abort;
                if (xact_abort || aborts_transaction(&e)) && cx.state.trancount > 0 {
                    let _ = rollback_all(cx);
                }
                if abort {
                    cx.scope_abort = aborts_scope(&e) && !xact_abort;
                    return Err(Abort { error: e, reported: true });
                }
                continue;
            }
        };
        match flow {
            Flow::Normal => {}
            Flow::Goto(label) => {
                match statements
                    .iter()
                    .position(|s| matches!(&s.kind, StatementKind::Label(l) if l.value.eq_ignore_ascii_case(&label)))
                {
                    Some(p) => i = p + 1,
                    None => return Ok(Flow::Goto(label)),
                }
            }
            other => return Ok(other),
        }
    }
    Ok(Flow::Normal)
}

/// BEGIN TRANSACTION at @@TRANCOUNT 0: the host transaction, the descriptor, ENVCHANGE.
pub(super) fn begin_user_transaction(cx: &mut Cx, name: &str) -> Result<(), SqlError> {
    cx.host.begin(name).map_err(host_err)?;
    cx.state.trancount = 1;
    cx.state.doomed = false;
    cx.state.transaction_name = name.to_string();
    cx.state.descriptor = cx.state.next_descriptor;
    cx.state.next_descriptor += 1;
    let d = cx.state.descriptor;
    let _ = cx.sink.env_change(&EnvChange::BeginTransaction { descriptor: d });
    Ok(())
}

/// Does this statement write to the log (refused with 3930 in an uncommittable
/// transaction)? DML, DDL and permission changes do; a SELECT without INTO does not.
fn writes_log(stmt: &Statement, props: super::statements::StatementProps) -> bool {
    match &stmt.kind {
        StatementKind::Query(q) => matches!(&q.body, SetExpr::Select(s) if s.into.is_some()),
        StatementKind::BeginTransaction { .. } => false,
        _ => props.implicit_transaction,
    }
}

/// Runs one statement with its DONE command code set (kept after an error, for the
/// error's DONE; restored for the enclosing statement otherwise).
pub(super) fn exec_statement(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    crate::stack::check()?;
    cx.host.settle_commit().map_err(host_err)?;
    if !cx.spool_vars.is_empty() {
        cx.spool_vars.clear();
    }
    if !cx.spools.is_empty() {
        cx.spools.clear();
    }
    cx.preceding.clear();
    let props = super::statements::props(&stmt.kind);
    let outer = std::mem::replace(&mut cx.cur_cmd, props.done_command);
    let r = exec_statement_inner(cx, stmt, props);
    if r.is_ok() {
        cx.cur_cmd = outer;
    }
    r
}

pub(super) fn exec_statement_inner(
    cx: &mut Cx,
    stmt: &Statement,
    props: super::statements::StatementProps,
) -> Result<Flow, SqlError> {
    cx.fcx.now_utc = now_utc();
    cx.state.live.statement(props.request_command, cx.nest_level());
    if cx.state.implicit_transactions
        && cx.state.trancount == 0
        && !cx.host.in_transaction()
        && props.implicit_transaction
    {
        begin_user_transaction(cx, "implicit_transaction")?;
    }
    if cx.state.fmtonly
        && matches!(
            stmt.kind,
            StatementKind::Insert(_) | StatementKind::Update(_) | StatementKind::Delete(_) | StatementKind::Merge(_)
        )
    {
        return Ok(Flow::Normal);
    }
    if cx.state.doomed && cx.state.trancount > 0 && writes_log(stmt, props) {
        return Err(uncommittable());
    }
    if props.data {
        return atomic(cx, |cx| exec_data_statement(cx, stmt));
    }
    exec_control(cx, stmt)
}

pub(super) fn exec_data_statement(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    match &stmt.kind {
        StatementKind::Query(q) => {
            exec_query(cx, q)?;
        }
        StatementKind::Insert(i) => dml::insert(cx, i)?,
        StatementKind::Update(u) => dml::update(cx, u)?,
        StatementKind::Delete(d) => dml::delete(cx, d)?,
        StatementKind::Merge(m) => merge::merge(cx, m)?,
        k if super::statements::is_database_security(k) => security::execute_database(cx, k)?,
        other => {
            security::check_ddl(cx, other)?;
            ddl_dispatch::execute(cx, other, stmt)?
        }
    }
    Ok(Flow::Normal)
}

/// SELECT: a result set, a variable assignment, or SELECT INTO.
pub fn exec_query(cx: &mut Cx, q: &Query) -> Result<(), SqlError> {
    if let SetExpr::Select(s) = &q.body {
        if let Some(into) = &s.into {
            return dml::select_into(cx, q, into);
        }
    }
    cx.pending_assigns.clear();
    // The plan cache's query: run its kept plan, or keep the plan bound now.
    let cached = cx.plan_slot.as_mut().filter(|s| std::ptr::eq(s.query, q));
    let kept = match cached {
        Some(slot) => match slot.reuse.take() {
            Some((kept, t)) => {
                security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, "SELECT")?;
                Some(kept)
            }
            None => {
                let plan = Binder::new(cx).plan_query(q)?.0;
                let kept = plan_cache::KeptPlan { columns: column_info(&plan).into(), plan: Arc::new(plan) };
                if let Some(slot) = cx.plan_slot.as_mut() {
                    slot.captured = Some(kept.clone());
                }
                Some(kept)
            }
        },
        None => None,
    };
    let bound;
    let plan: &Plan = match &kept {
        Some(k) => &k.plan,
        None => {
            bound = Binder::new(cx).plan_query(q)?.0;
            &bound
        }
    };
    let assigns = std::mem::take(&mut cx.pending_assigns);
    if cx.state.showplan {
        return show_plan(cx, plan);
    }
    if !assigns.is_empty() {
        // SELECT @a = x, @b = y FROM ...: assign from every row, in order; the last row
        // wins. Each value is computed just before its assignment, so it sees what the
        // previous rows and items assigned (`SELECT @s = @s + name FROM t ORDER BY name`).
        let cols = plan.columns();
        let split = assignment_source(plan);
        let (source, exprs) = match &split {
            Some((source, exprs)) => (source, Some(exprs)),
            None => (plan, None),
        };
        let mut op = open(source, cx)?;
        let mut n = 0u64;
        while let Some(row) = op.next(cx)? {
            n += 1;
            for (i, (name, aop)) in assigns.iter().enumerate() {
                let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
                let v = match exprs.and_then(|e| e.get(i)) {
                    Some(e) => e.eval(&row, cx)?,
                    None => row.get(i).cloned().unwrap_or(Value::Null),
                };
                let v = assign_value(cx, slot, ty, *aop, v, &cols[i].ty)?;
                cx.set_var(slot, v);
            }
        }
        cx.state.rowcount = n as i64;
        cx.done(Some(n))?;
        return Ok(());
    }
    let n = match &kept {
        Some(k) => cx.send_rows(plan, &k.columns)?,
        None => cx.send_result(plan)?,
    };
    cx.state.rowcount = n as i64;
    cx.done(Some(n))?;
    Ok(())
}

/// An assignment SELECT's plan as the rows to assign from and the select items to
/// compute for each of them: its projection moved above its sort (and TOP), whose keys
/// then compute the projected expressions they read. None for other shapes (a DISTINCT,
/// a GROUP BY's projection is above its aggregate already): the items are then computed
/// by the plan.
pub(super) fn assignment_source(plan: &Plan) -> Option<(Plan, Vec<BExpr>)> {
    match plan {
        Plan::Project { input, exprs, .. } => Some(((**input).clone(), exprs.clone())),
        Plan::Trim { input, .. } => assignment_source(input),
        Plan::Sort { input, keys } => {
            let Plan::Project { input: source, exprs, .. } = &**input else { return None };
            let mut moved = Vec::with_capacity(keys.len());
            for k in keys {
                let in_range = std::cell::Cell::new(true);
                let expr = k.expr.remap(&|i, t| {
                    exprs.get(i).cloned().unwrap_or_else(|| {
                        in_range.set(false);
                        BExpr::Col(i, t)
                    })
                });
                if !in_range.get() {
                    return None;
                }
                moved.push(plan::SortKey { expr, desc: k.desc });
            }
            Some((Plan::Sort { input: source.clone(), keys: moved }, exprs.clone()))
        }
        Plan::Top { input, count, percent, ties: None, offset } => {
            let (source, exprs) = assignment_source(input)?;
            let top = Plan::Top {
                input: Box::new(source),
                count: count.clone(),
                percent: *percent,
                ties: None,
                offset: offset.clone(),
            };
            Some((top, exprs))
        }
        _ => None,
    }
}

pub(super) fn show_plan(cx: &mut Cx, plan: &Plan) -> Result<(), SqlError> {
    let mut lines = Vec::new();
    plan.explain(0, &mut lines);
    let ty = SqlType::NVarChar { len: types::Length::Max };
    cx.sink.columns(&[ColumnInfo::new("StmtText", ty, true)]).map_err(|_| cancelled())?;
    for l in &lines {
        cx.sink.row(&[Value::String(l.clone())]).map_err(|_| cancelled())?;
    }
    cx.done(Some(lines.len() as u64))?;
    Ok(())
}

/// The statement runner as the statements that run others reach it (procedure, trigger
/// and function bodies), so that they need not import the batch driver.
impl Cx<'_> {
    /// Runs a scope's statements (a procedure, trigger or function body, dynamic SQL):
    /// its variables declared first (see [`declare_variables`]), then [`exec_block`].
    pub fn run_block(&mut self, statements: &[Statement]) -> ExecResult {
        declare_variables(self, statements);
        exec_block(self, statements)
    }

    /// Drops the current frame's table variables.
    pub fn drop_frame_tables(&mut self) {
        let tables = std::mem::take(&mut self.frame().table_vars);
        for t in tables {
            let _ = ddl::drop_storage(self, &t);
        }
    }
}
