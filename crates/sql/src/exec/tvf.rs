//! User-defined functions beyond the inline ones: multi-statement table-valued functions
//! (`RETURNS @t TABLE (...) AS BEGIN ... RETURN END`) and the rules every function body
//! follows (checked at CREATE / ALTER FUNCTION, as SQL Server does).
//!
//! A multi-statement TVF in FROM binds to [`Plan::TableFunction`]: its arguments are
//! bound where the call is written (so under APPLY they may reference the left side),
//! and each time the plan is opened (once per left row under APPLY) the body runs in a
//! frame of its own with the return table as a table variable, whose rows are the
//! result. An error inside the body ends the function and the calling statement.

use std::collections::HashSet;

use types::{SqlError, SqlType, Value};

use super::base::Flow;
use super::context::Cx;
use super::errors;
use super::expr::BExpr;
use super::plan::{OutCol, Plan};
use super::query::{resolve_type, Binder, Scope};
use super::session::{Frame, Var};
use crate::ast::*;
use crate::catalog::Object;
use crate::host::DbId;

/// SQL Server's limit on nested module calls (217).
const MAX_NESTING: usize = 32;

/// The CREATE FUNCTION statement a function object was created with.
pub(super) fn definition(obj: &Object) -> Result<Box<CreateFunction>, SqlError> {
    let m = obj.body.module().ok_or_else(|| errors::invalid_object(&obj.name))?;
    match super::base::parse_module(&m.definition)?.kind {
        StatementKind::CreateFunction(f) => Ok(f),
        _ => Err(errors::invalid_object(&obj.name)),
    }
}

/// The columns of a multi-statement function's return table.
pub(super) fn return_columns(elements: &[TableElement]) -> Result<Vec<OutCol>, SqlError> {
    let mut cols = Vec::new();
    let mut key_columns: HashSet<String> = HashSet::new();
    for el in elements {
        match el {
            TableElement::Constraint(TableConstraint { kind: ConstraintKind::PrimaryKey { columns, .. }, .. }) => {
                key_columns.extend(columns.iter().map(|c| c.name.value.to_ascii_lowercase()));
            }
            TableElement::Column(cd) if cd.options.iter().any(|o| matches!(o, ColumnOption::PrimaryKey { .. })) => {
                key_columns.insert(cd.name.value.to_ascii_lowercase());
            }
            _ => {}
        }
    }
    for el in elements {
        let TableElement::Column(cd) = el else { continue };
        let Some(dt) = &cd.data_type else {
            return Err(errors::not_supported("A computed column in a function's return table"));
        };
        let identity = cd.options.iter().any(|o| matches!(o, ColumnOption::Identity { .. }));
        let nullable = cd.nullable().unwrap_or(!identity)
            && !identity
            && !key_columns.contains(&cd.name.value.to_ascii_lowercase());
        cols.push(OutCol::new(cd.name.value.clone(), resolve_type(dt)?, nullable));
    }
    Ok(cols)
}

impl Binder<'_, '_> {
    /// Binds a call of the multi-statement function `obj` in FROM.
    pub(crate) fn plan_function_call(
        &mut self,
        db: DbId,
        obj: &Object,
        name: &ObjectName,
        args: &[Expr],
    ) -> Result<(Plan, Vec<OutCol>), SqlError> {
        let b = self;
        let cf = definition(obj)?;
        let FunctionBody::MultiStatement { elements, .. } = &cf.returns else {
            return Err(errors::invalid_object(&errors::written(name)));
        };
        let bound = bind_args(b, &cf, args, &errors::written(name))?;
        let cols = return_columns(elements)?;
        Ok((
            Plan::TableFunction { db, object_id: obj.id, name: obj.name.clone(), args: bound, cols: cols.clone() },
            cols,
        ))
    }
}

/// Binds a function call's arguments; `DEFAULT` takes the parameter's default.
pub(super) fn bind_args(
    b: &mut Binder,
    cf: &CreateFunction,
    args: &[Expr],
    name: &str,
) -> Result<Vec<BExpr>, SqlError> {
    if args.len() < cf.params.len() {
        return Err(SqlError::new(
            313,
            16,
            3,
            format!("An insufficient number of arguments were supplied for the procedure or function {name}."),
        ));
    }
    if args.len() > cf.params.len() {
        return Err(SqlError::new(
            8144,
            16,
            2,
            format!("Procedure or function {name} has too many arguments specified."),
        ));
    }
    let mut out = Vec::with_capacity(args.len());
    for (p, a) in cf.params.iter().zip(args) {
        let e = match (&a.kind, &p.default) {
            (ExprKind::Default, Some(d)) => b.bind_expr(d, &Scope::default())?,
            (ExprKind::Default, None) => BExpr::Const(Value::Null, resolve_type(&p.data_type)?),
            _ => b.bind_expr(a, &Scope::default())?,
        };
        out.push(e);
    }
    Ok(out)
}

impl Cx<'_> {
    /// Runs a multi-statement function with bound arguments; returns the rows of its
    /// return table (what `Plan::TableFunction` produces when opened).
    pub fn table_function_rows(
        &mut self,
        db: DbId,
        object_id: i32,
        args: &[BExpr],
    ) -> Result<Vec<Vec<Value>>, SqlError> {
        let cx = self;
        let mut values = Vec::with_capacity(args.len());
        for a in args {
            values.push((a.eval(&[], cx)?, a.ty()));
        }
        let obj = {
            let cat = cx.catalog(db)?;
            let g = cat.inner.read();
            g.objects.get(&object_id).cloned()
        };
        let Some(obj) = obj else {
            return Err(errors::invalid_object(&object_id.to_string()));
        };
        let cf = definition(&obj)?;
        let FunctionBody::MultiStatement { variable, elements, body } = &cf.returns else {
            return Err(errors::invalid_object(&obj.name));
        };
        let frame = function_frame(&obj, &cf, values, None)?;
        in_function_frame(cx, db, frame, |cx| {
            let t = super::ddl::create_table_variable(cx, variable, elements)?;
            cx.frame().table_vars.push(t.clone());
            cx.frame().vars.push(Var {
                name: variable.clone(),
                ty: SqlType::Int,
                value: Value::Null,
                table: Some(t.clone()),
                readonly: false,
            });
            run_body(cx, body)?;
            super::ddl::scan_all_rows(cx, &t)
        })
    }
}

/// A function's frame with its parameters set from the call's values.
pub(super) fn function_frame(
    obj: &Object,
    cf: &CreateFunction,
    args: Vec<(Value, SqlType)>,
    returns: Option<SqlType>,
) -> Result<Frame, SqlError> {
    let mut frame = Frame {
        proc_name: Some(obj.name.clone()),
        proc_id: obj.id,
        function_returns: returns,
        in_function: true,
        in_module: true,
        ..Default::default()
    };
    for (p, (v, ty)) in cf.params.iter().zip(args) {
        let pty = resolve_type(&p.data_type)?;
        let v = if v.is_null() { Value::Null } else { crate::scalar::convert::convert(&v, &ty, &pty, None)? };
        frame.vars.push(Var { name: p.name.clone(), ty: pty, value: v, table: None, readonly: false });
    }
    Ok(frame)
}

/// Runs `f` inside a function's frame, in the function's database, without the caller's
/// outer rows; the frame's table variables are dropped when it ends.
pub(super) fn in_function_frame<T>(
    cx: &mut Cx,
    db: DbId,
    frame: Frame,
    f: impl FnOnce(&mut Cx) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    if cx.frames.len() > MAX_NESTING {
        return Err(super::errors::nesting_exceeded());
    }
    crate::stack::check()?;
    cx.frames.push(frame);
    let saved_db = cx.state.database;
    cx.state.database = db;
    let saved_outer = std::mem::take(&mut cx.outer);
    let saved_target = cx.dml_target.take();
    let r = f(cx);
    cx.dml_target = saved_target;
    cx.outer = saved_outer;
    cx.state.database = saved_db;
    cx.drop_frame_tables();
    cx.frames.pop();
    r
}

/// Runs a function body. An error ends the function (and the statement that called it)
/// instead of moving on to the next statement as a batch would, so the body runs as if
/// inside TRY: errors come back unreported and the caller reports them.
pub(super) fn run_body(cx: &mut Cx, body: &[Statement]) -> Result<Flow, SqlError> {
    cx.try_depth += 1;
    let r = cx.run_block(body);
    cx.try_depth -= 1;
    r.map_err(|a| a.error)
}

// ---------------------------------------------------------------------------------------
// Body rules (CREATE / ALTER FUNCTION)

/// Checks a scalar or multi-statement function's body as SQL Server does when the
/// function is created: no side-effecting statement (443), no SELECT returning rows to
/// the client (444), a RETURN last (455), RETURN with a value in a scalar function
/// (1075). Inline functions are a single query and have no body to check.
pub fn check_body(f: &CreateFunction) -> Result<(), SqlError> {
    let (body, scalar) = match &f.returns {
        FunctionBody::Scalar { body, .. } => (body, true),
        FunctionBody::MultiStatement { body, elements, .. } => {
            return_columns(elements)?;
            (body, false)
        }
        FunctionBody::InlineTable { .. } => return Ok(()),
    };
    let name = f.name.name().value.clone();
    let with_name = |mut e: SqlError| {
        e.procedure = Some(name.clone());
        e
    };
    if scalar {
        if let Some(line) = bare_return(body) {
            return Err(with_name(
                SqlError::new(1075, 15, 1, "RETURN statements in scalar valued functions must include an argument.")
                    .at_line(line),
            ));
        }
    }
    for s in body {
        check_statement(s).map_err(&with_name)?;
    }
    // The last statement at the top level (through BEGIN ... END) must be RETURN.
    let mut last = body.last();
    while let Some(Statement { kind: StatementKind::Block(inner), .. }) = last {
        last = inner.last();
    }
    match last {
        Some(Statement { kind: StatementKind::Return(_), .. }) => Ok(()),
        other => Err(with_name(
            SqlError::new(455, 16, 2, "The last statement included within a function must be a return statement.")
                .at_line(other.map(|s| s.line()).unwrap_or(0)),
        )),
    }
}

/// The line of a RETURN without a value, anywhere in the body.
fn bare_return(body: &[Statement]) -> Option<u32> {
    crate::ast::find_statement(body, &mut |s| matches!(s.kind, StatementKind::Return(None)).then(|| s.line()))
}

fn side_effect(op: &str, state: u8) -> SqlError {
    SqlError::new(443, 16, state, format!("Invalid use of a side-effecting operator '{op}' within a function."))
}

/// Statements that change something outside the function: 443 with the operator's name
/// and state as SQL Server reports them (15 for data, transaction and SET statements,
/// 14 for the others).
fn check_statement(s: &Statement) -> Result<(), SqlError> {
    let line = s.line();
    let at = |e: SqlError| e.at_line(line);
    match &s.kind {
        StatementKind::Block(b) => b.iter().try_for_each(check_statement),
        StatementKind::If { condition, then_branch, else_branch } => {
            check_expr(condition).map_err(at)?;
            check_statement(then_branch)?;
            else_branch.as_deref().map_or(Ok(()), check_statement)
        }
        StatementKind::While { condition, body } => {
            check_expr(condition).map_err(at)?;
            check_statement(body)
        }
        StatementKind::TryCatch { .. } => Err(at(side_effect("BEGIN TRY", 14))),
        StatementKind::Query(q) => {
            check_query(q).map_err(at)?;
            if let SetExpr::Select(sel) = &q.body {
                if sel.into.is_some() {
                    return Err(at(side_effect("SELECT INTO", 15)));
                }
                if sel.items.iter().all(|i| matches!(i, SelectItem::Assign { .. })) {
                    return Ok(());
                }
            }
            // State 2 when the query reads a rowset, 3 for a computed row.
            let state = if reads_rowset(&q.body) { 2 } else { 3 };
            Err(at(SqlError::new(
                444,
                16,
                state,
                "Select statements included within a function cannot return data to a client.",
            )))
        }
        StatementKind::Insert(i) => {
            let local = matches!(i.target, DmlTarget::Variable(_));
            if matches!(i.source, InsertSource::ExecProcedure(_) | InsertSource::ExecString(_)) {
                return Err(at(side_effect("INSERT EXEC", 14)));
            }
            if !local || !output_is_local(&i.output) {
                return Err(at(side_effect("INSERT", 15)));
            }
            if let InsertSource::Values(rows) = &i.source {
                rows.iter().flatten().try_for_each(check_expr).map_err(at)?;
            }
            Ok(())
        }
        StatementKind::Update(u) => {
            if !targets_variable(&u.target, &u.from) || !output_is_local(&u.output) {
                return Err(at(side_effect("UPDATE", 15)));
            }
            u.assignments.iter().try_for_each(|a| check_expr(&a.value)).map_err(at)
        }
        StatementKind::Delete(d) => {
            if !targets_variable(&d.target, &d.from) || !output_is_local(&d.output) {
                return Err(at(side_effect("DELETE", 15)));
            }
            Ok(())
        }
        StatementKind::Merge(m) => {
            if !matches!(m.target, DmlTarget::Variable(_)) || !output_is_local(&m.output) {
                return Err(at(side_effect("MERGE", 15)));
            }
            Ok(())
        }
        StatementKind::Truncate { .. } => Err(at(side_effect("TRUNCATE TABLE", 15))),
        StatementKind::BeginTransaction { .. } => Err(at(side_effect("BEGIN TRANSACTION", 15))),
        StatementKind::Commit { .. } => Err(at(side_effect("COMMIT TRANSACTION", 15))),
        StatementKind::Rollback { .. } => Err(at(side_effect("ROLLBACK TRANSACTION", 15))),
        StatementKind::SaveTransaction { .. } => Err(at(side_effect("SAVEPOINT", 15))),
        StatementKind::SetOption(o) => {
            let op = match o {
                SetOption::Flags { names, on } => {
                    let stats = names.iter().all(|n| n.starts_with("STATISTICS"));
                    match (stats, on) {
                        (true, true) => "SET STATISTICS ON",
                        (true, false) => "SET STATISTICS OFF",
                        (false, true) => "SET OPTION ON",
                        (false, false) => "SET OPTION OFF",
                    }
                }
                SetOption::IsolationLevel(_) => "SET TRANSACTION ISOLATION LEVEL",
                SetOption::IdentityInsert { on: true, .. } => "SET IDENTITY_INSERT ON",
                SetOption::IdentityInsert { on: false, .. } => "SET IDENTITY_INSERT OFF",
                SetOption::Value { name, .. } if name == "ROWCOUNT" => "SET ROW COUNT",
                SetOption::Value { name, .. } if name == "TEXTSIZE" => "SET TEXTSIZE",
                SetOption::Value { .. } => "SET COMMAND",
            };
            Err(at(side_effect(op, 15)))
        }
        StatementKind::Print(_) => Err(at(side_effect("PRINT", 14))),
        StatementKind::Raiserror(_) => Err(at(side_effect("RAISERROR", 14))),
        StatementKind::Throw(_) => Err(at(side_effect("THROW", 14))),
        StatementKind::WaitFor { .. } => Err(at(side_effect("WAITFOR", 14))),
        StatementKind::ExecString(_) => Err(at(side_effect("EXECUTE STRING", 14))),
        StatementKind::CreateTable(_) => Err(at(side_effect("CREATE TABLE", 15))),
        StatementKind::AlterTable(_) => Err(at(side_effect("ALTER TABLE", 15))),
        StatementKind::CreateIndex(_) => Err(at(side_effect("CREATE INDEX", 15))),
        StatementKind::DropIndex { .. } => Err(at(side_effect("DROP INDEX", 15))),
        StatementKind::Drop { .. } => Err(at(side_effect("DROP", 15))),
        StatementKind::Declare(decls) => {
            for d in decls {
                if let Declaration::Variable { value: Some(e), .. } = d {
                    check_expr(e).map_err(at)?;
                }
            }
            Ok(())
        }
        StatementKind::SetVariable { value, .. } => check_expr(value).map_err(at),
        StatementKind::Return(Some(e)) => check_expr(e).map_err(at),
        _ => Ok(()),
    }
}

/// Side-effecting built-ins (their state is 1).
fn check_expr(e: &Expr) -> Result<(), SqlError> {
    let mut found = None;
    super::query::walk_expr(e, &mut |x| {
        if let ExprKind::Function(f) = &x.kind {
            if f.name.parts.len() == 1 && found.is_none() {
                let n = f.name.name().value.to_ascii_lowercase();
                if matches!(n.as_str(), "rand" | "newid" | "newsequentialid") {
                    found = Some(n);
                }
            }
        }
    });
    match found {
        Some(n) => Err(side_effect(&n, 1)),
        None => Ok(()),
    }
}

fn check_query(q: &Query) -> Result<(), SqlError> {
    if let SetExpr::Select(sel) = &q.body {
        for item in &sel.items {
            match item {
                SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => check_expr(expr)?,
                SelectItem::Wildcard(_) => {}
            }
        }
        if let Some(w) = &sel.where_clause {
            check_expr(w)?;
        }
    }
    Ok(())
}

/// Does a query read a table source (a FROM anywhere, or a set operator)?
fn reads_rowset(body: &SetExpr) -> bool {
    match body {
        SetExpr::SetOp { .. } => true,
        SetExpr::Query(q) => reads_rowset(&q.body),
        SetExpr::Select(sel) => {
            if !sel.from.is_empty() {
                return true;
            }
            let mut found = false;
            for item in &sel.items {
                if let SelectItem::Expr { expr, .. } = item {
                    super::query::walk_expr(expr, &mut |x| {
                        if matches!(x.kind, ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::InSubquery { .. }) {
                            found = true;
                        }
                    });
                }
            }
            found
        }
    }
}

/// OUTPUT with no INTO returns rows to the client; OUTPUT INTO a table variable stays in
/// the function.
fn output_is_local(output: &[OutputClause]) -> bool {
    output.iter().all(|o| o.into.as_ref().is_some_and(|i| matches!(i.target, DmlTarget::Variable(_))))
}

/// UPDATE / DELETE of a table variable, named directly or through an alias in FROM.
fn targets_variable(target: &DmlTarget, from: &[TableWithJoins]) -> bool {
    let name = match target {
        DmlTarget::Variable(_) => return true,
        DmlTarget::Table { name, .. } if name.parts.len() == 1 => name.name().value.to_ascii_lowercase(),
        DmlTarget::Table { .. } => return false,
    };
    fn factor_is(f: &TableFactor, name: &str) -> bool {
        match f {
            TableFactor::Variable { alias: Some(a), .. } => a.value.eq_ignore_ascii_case(name),
            TableFactor::NestedJoin(t) => {
                factor_is(&t.relation, name) || t.joins.iter().any(|j| factor_is(&j.relation, name))
            }
            _ => false,
        }
    }
    from.iter().any(|t| factor_is(&t.relation, &name) || t.joins.iter().any(|j| factor_is(&j.relation, &name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(sql: &str) -> Result<(), SqlError> {
        let b = crate::parse_batch(sql).expect("parses");
        let StatementKind::CreateFunction(f) = &b.statements[0].kind else { panic!("not a function") };
        check_body(f)
    }

    #[test]
    fn side_effects_are_refused_with_their_operator() {
        let e = check("CREATE FUNCTION f() RETURNS int AS BEGIN INSERT dbo.t VALUES (1); RETURN 1; END").unwrap_err();
        assert_eq!((e.number, e.state), (443, 15));
        assert!(e.message.contains("'INSERT'"), "{}", e.message);
        let e = check("CREATE FUNCTION f() RETURNS int AS BEGIN PRINT 'x'; RETURN 1; END").unwrap_err();
        assert_eq!((e.number, e.state), (443, 14));
        let e = check("CREATE FUNCTION f() RETURNS int AS BEGIN RETURN RAND(); END").unwrap_err();
        assert_eq!((e.number, e.state), (443, 1));
        assert!(e.message.contains("'rand'"));
    }

    #[test]
    fn table_variables_and_assignments_are_allowed() {
        check(
            "CREATE FUNCTION f() RETURNS @r TABLE (a int) AS BEGIN DECLARE @v int; SELECT @v = 1; \
             INSERT @r VALUES (@v); UPDATE x SET a = 2 FROM @r AS x; DELETE @r WHERE a = 3; RETURN; END",
        )
        .unwrap();
    }

    #[test]
    fn select_to_client_and_missing_return() {
        let e = check("CREATE FUNCTION f() RETURNS @r TABLE (a int) AS BEGIN SELECT 1; RETURN; END").unwrap_err();
        assert_eq!((e.number, e.state), (444, 3));
        let e = check("CREATE FUNCTION f() RETURNS @r TABLE (a int) AS BEGIN INSERT @r VALUES (1); END").unwrap_err();
        assert_eq!(e.number, 455);
        let e = check("CREATE FUNCTION f(@x int) RETURNS int AS BEGIN IF @x = 1 RETURN; RETURN 1; END").unwrap_err();
        assert_eq!(e.number, 1075);
    }
}
