//! Procedures and everything that runs T-SQL in a new scope: EXEC of stored procedures
//! (positional, named, default and OUTPUT parameters, return codes), the system
//! procedures (sp_executesql, sp_flush_log, sp_prepare/sp_execute/sp_unprepare, ...),
//! dynamic SQL, scalar user-defined functions, RAISERROR, DBCC, and the RPC entry point.

use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::base::{host_err, Flow};
use super::context::Cx;
use super::errors;
use super::expr::as_text;
use super::query::resolve_type;
use super::run::{eval_standalone, report};
use super::run::{ArgValue, OutputTarget, TableSource};
use super::session::{Frame, Var};
use super::user_types::{self, DeclaredType};
use crate::ast::*;
use crate::catalog::ObjectBody;
use crate::request::{RpcCall, RpcParam};
use crate::results::{ColumnInfo, Done, DoneKind, Message, ResultSink, ReturnValue, SinkResult};

pub fn exec_procedure(cx: &mut Cx, e: &ExecProcedure, line: u32) -> Result<Flow, SqlError> {
    let name = match &e.procedure {
        ProcedureRef::Name(n) => n.clone(),
        ProcedureRef::Variable(v) => {
            let (slot, _) = cx.lookup_var(v).ok_or_else(|| errors::must_declare(v))?;
            match cx.var(slot) {
                Value::String(s) => super::base::parse_object_name(&s)?,
                _ => return Err(errors::proc_not_found(v)),
            }
        }
    };
    // CREATE FUNCTION lets EXEC of a procedure through (it could be an extended
    // procedure); running one is refused, before its arguments are evaluated.
    if cx.frames.last().is_some_and(|f| f.in_function) && !name.name().value.to_ascii_lowercase().starts_with("xp_") {
        return Err(SqlError::new(
            557,
            16,
            2,
            "Only functions and some extended stored procedures can be executed from within a function.",
        ));
    }
    let mut args = Vec::new();
    for a in &e.args {
        // A table variable passed to a table-valued parameter.
        if let ExprKind::Variable(v) = &a.value.kind {
            if let Some(t) = cx.lookup_var(v).and_then(|(slot, _)| cx.var_table(slot)) {
                let table = Some(TableSource::Variable(t));
                args.push(ArgValue {
                    name: a.name.clone(),
                    value: Value::Null,
                    ty: SqlType::Int,
                    output: None,
                    is_default: false,
                    table,
                });
                continue;
            }
        }
        let is_default = matches!(a.value.kind, ExprKind::Default);
        let (value, ty) = if is_default {
            (Value::Null, SqlType::Int)
        } else if let (Some(word), false) = (a.value.as_name(), matches!(a.value.kind, ExprKind::Literal(_))) {
            // A bare word argument is a string (EXEC sp_help t).
            if let ExprKind::Column(n) = &a.value.kind {
                if n.parts.len() == 1 {
                    (Value::String(word.to_string()), SqlType::NVarChar { len: types::Length::Bounded(4000) })
                } else {
                    eval_standalone(cx, &a.value)?
                }
            } else {
                eval_standalone(cx, &a.value)?
            }
        } else {
            eval_standalone(cx, &a.value)?
        };
        let output = if a.output {
            match &a.value.kind {
                ExprKind::Variable(v) => Some(OutputTarget::Variable(v.clone())),
                _ => None,
            }
        } else {
            None
        };
        args.push(ArgValue { name: a.name.clone(), value, ty, output, is_default, table: None });
    }
    let status = call_procedure(cx, &name, args, line)?;
    if let Some(var) = &e.return_status {
        let (slot, ty) = cx.lookup_var(var).ok_or_else(|| errors::must_declare(var))?;
        let v = super::run::assign_value(cx, slot, ty, AssignOp::Assign, Value::Int(status), &SqlType::Int)?;
        cx.set_var(slot, v);
    }
    if cx.frames.len() == 1 {
        // A procedure EXECuted by the SQL batch itself: as from SQL Server (MS-TDS 2.2.2.5,
        // 2.2.7.8), its RETURNSTATUS, then a DONEPROC (FreeTDS's dbretstatus, tsql's
        // "(return status = N)").
        let _ = cx.sink.return_status(status);
        cx.sink.command(cx.cur_cmd);
        let done = Done { kind: DoneKind::Proc, row_count: None, error: false, in_xact: cx.state.trancount > 0 };
        if cx.sink.done(done).is_err() {
            return Err(SqlError::new(3617, 25, 1, "The query was cancelled by the client (attention)."));
        }
    }
    Ok(Flow::Normal)
}

/// Calls a procedure (system or user) with evaluated arguments; returns its status.
pub fn call_procedure(cx: &mut Cx, name: &ObjectName, args: Vec<ArgValue>, line: u32) -> Result<i32, SqlError> {
    let pname = name.name().value.to_ascii_lowercase();
    // System procedures answer to sp_who, ..sp_who, sys.sp_who, master.dbo.sp_who.
    let system_schema = name.schema().is_none_or(|s| s.eq_ignore_case("sys") || s.eq_ignore_case("dbo"));
    if system_schema && name.qualifier(3).is_none() && !cx.names_missing_database(name) {
        if let Some(run) = crate::system::lookup("sys", &pname).and_then(|o| o.procedure()) {
            return run(cx, &args, line);
        }
    }
    let (db, obj) = cx.resolve_object(name)?.ok_or_else(|| errors::proc_not_found(&errors::written(name)))?;
    let ObjectBody::Procedure(m) = &obj.body else {
        return Err(errors::proc_not_found(&errors::written(name)));
    };
    super::security::check_object(cx, db, &obj, "EXECUTE")?;
    let def = super::base::parse_module(&m.definition)?;
    let StatementKind::CreateProcedure(p) = def.kind else {
        return Err(errors::proc_not_found(&errors::written(name)));
    };
    if cx.frames.len() > 32 {
        return Err(errors::nesting_exceeded());
    }
    crate::stack::check()?;
    // Bind arguments to parameters.
    let mut frame = Frame { proc_name: Some(obj.name.clone()), proc_id: obj.id, ..Default::default() };
    let mut outputs: Vec<(usize, OutputTarget)> = Vec::new();
    let mut positional = true;
    let mut assigned = vec![false; p.params.len()];
    for (k, a) in args.into_iter().enumerate() {
        let idx = match &a.name {
            Some(n) => {
                positional = false;
                p.params.iter().position(|x| x.name.eq_ignore_ascii_case(n)).ok_or_else(|| {
                    SqlError::new(8145, 16, 2, format!("{n} is not a parameter for procedure {}.", obj.name))
                })?
            }
            None => {
                if !positional {
                    return Err(SqlError::new(
                        119,
                        15,
                        1,
                        "Must pass parameter number 2 and subsequent parameters as '@name = value'. After the form '@name = value' has been used, all subsequent parameters must be passed in the form '@name = value'.",
                    ));
                }
                if p.params.is_empty() {
                    return Err(SqlError::new(
                        8146,
                        16,
                        2,
                        format!("Procedure {} has no parameters and arguments were supplied.", obj.name),
                    ));
                }
                if k >= p.params.len() {
                    return Err(SqlError::new(
                        8144,
                        16,
                        2,
                        format!("Procedure or function {} has too many arguments specified.", obj.name),
                    ));
                }
                k
            }
        };
        let param = &p.params[idx];
        let ty = match user_types::resolve(cx, &param.data_type)? {
            DeclaredType::Scalar(ty) => ty,
            DeclaredType::Table(tt) => {
                if a.is_default {
                    continue;
                }
                let (var, owned) = user_types::table_param(cx, &param.name, &tt, a.table.as_ref(), true)?;
                frame.table_vars.extend(owned);
                assigned[idx] = true;
                frame.vars.push(var);
                continue;
            }
        };
        if a.is_default {
            continue;
        }
        let v =
            if a.value.is_null() { Value::Null } else { crate::scalar::convert::convert(&a.value, &a.ty, &ty, None)? };
        assigned[idx] = true;
        if let Some(t) = a.output {
            if param.output {
                outputs.push((idx, t));
            }
        }
        frame.vars.push(Var { name: param.name.clone(), ty, value: v, table: None, readonly: false });
    }
    // Defaults and missing parameters, in declaration order.
    let mut ordered = Vec::with_capacity(p.params.len());
    for (i, param) in p.params.iter().enumerate() {
        let ty = match user_types::resolve(cx, &param.data_type)? {
            DeclaredType::Scalar(ty) => ty,
            // A table-valued parameter not passed is an empty table.
            DeclaredType::Table(tt) if !assigned[i] => {
                let (var, owned) = user_types::table_param(cx, &param.name, &tt, None, true)?;
                frame.table_vars.extend(owned);
                ordered.push(var);
                continue;
            }
            DeclaredType::Table(_) => SqlType::Int,
        };
        if assigned[i] {
            let v = frame.vars.iter().find(|v| v.name.eq_ignore_ascii_case(&param.name)).cloned();
            ordered.push(v.unwrap_or(Var {
                name: param.name.clone(),
                ty,
                value: Value::Null,
                table: None,
                readonly: false,
            }));
            continue;
        }
        match &param.default {
            Some(d) => {
                let (v, vty) = eval_standalone(cx, d)?;
                let v = if v.is_null() { Value::Null } else { crate::scalar::convert::convert(&v, &vty, &ty, None)? };
                ordered.push(Var { name: param.name.clone(), ty, value: v, table: None, readonly: false });
            }
            None => {
                return Err(SqlError::new(
                    201,
                    16,
                    4,
                    format!(
                        "Procedure or function '{}' expects parameter '{}', which was not supplied.",
                        obj.name, param.name
                    ),
                ))
            }
        }
    }
    frame.vars = ordered;
    frame.in_module = true;
    let saved_db = cx.state.database;
    cx.state.database = db;
    cx.frames.push(frame);
    let saved_source = std::mem::replace(&mut cx.source, Arc::from(m.definition.as_str()));
    let trancount_before = cx.state.trancount;
    let level = cx.frames.len();
    let set_options = cx.state.scoped_set_options();
    let r = cx.run_block(&p.body);
    super::control::restore_set_options(cx, set_options);
    drop_scope_temp_tables(cx, level);
    cx.source = saved_source;
    cx.drop_frame_tables();
    let frame = cx.frames.pop().unwrap_or_default();
    cx.state.database = saved_db;
    // 266 names line 0 after a procedure that ran to its end, the failing line after one
    // that an error ended.
    let mut mismatch_line = 0;
    let status = match r {
        Ok(Flow::Return(Some(s))) => s,
        Ok(_) => 0,
        // The procedure's scope ended; its caller goes on (SQL Server returns a negative
        // status after an error).
        Err(a) if a.reported && std::mem::take(&mut cx.scope_abort) => {
            mismatch_line = a.error.line;
            -6
        }
        Err(a) => {
            if a.reported {
                return Err(SqlError { number: 3617, ..a.error });
            }
            return Err(a.error);
        }
    };
    if cx.state.trancount != trancount_before {
        let msg = SqlError::new(
            266,
            16,
            2,
            format!(
                "Transaction count after EXECUTE indicates a mismatching number of BEGIN and COMMIT statements. Previous count = {trancount_before}, current count = {}.",
                cx.state.trancount
            ),
        )
        .in_procedure(obj.name.clone())
        .at_line(mismatch_line);
        // Inside TRY it is an error like any other: CATCH gets it.
        if cx.try_depth > 0 {
            return Err(msg);
        }
        let _ = cx.sink.message(&Message { error: msg, info: false });
    }
    // OUTPUT parameters.
    for (idx, target) in outputs {
        let pname = &p.params[idx].name;
        let Some(var) = frame.vars.iter().find(|v| v.name.eq_ignore_ascii_case(pname)) else { continue };
        match target {
            OutputTarget::Variable(name) => {
                let (slot, ty) = cx.lookup_var(&name).ok_or_else(|| errors::must_declare(&name))?;
                let v = super::run::assign_value(cx, slot, ty, AssignOp::Assign, var.value.clone(), &var.ty)?;
                cx.set_var(slot, v);
            }
            OutputTarget::Rpc(ordinal) => {
                cx.rpc_outputs.push(ReturnValue { name: pname.clone(), ordinal, ty: var.ty, value: var.value.clone() });
            }
        }
    }
    Ok(status)
}

fn arg_text(args: &[ArgValue], i: usize) -> Option<String> {
    args.get(i).and_then(|a| as_text(&a.value, &a.ty))
}

/// sp_executesql @stmt, @params, @p1, ...: the statement run as a module with its declared parameters; OUTPUT parameters written back.
pub(crate) fn sp_executesql(cx: &mut Cx, args: &[ArgValue], _line: u32) -> Result<i32, SqlError> {
    let stmt = arg_text(args, 0).unwrap_or_default();
    let decl = arg_text(args, 1).unwrap_or_default();
    let params = declare_params(cx, &decl)?;
    let mut vars = Vec::new();
    let mut tables = Vec::new();
    let mut outputs = Vec::new();
    let mut positional = 0usize;
    for (pname, declared, is_output) in &params {
        // Arguments after the first two: positional or named.
        let arg = args.iter().skip(2).find(|a| a.name.as_ref().is_some_and(|n| n.eq_ignore_ascii_case(pname)));
        let arg = match arg {
            Some(a) => Some(a),
            None => {
                let a = args.iter().skip(2).filter(|a| a.name.is_none()).nth(positional);
                positional += 1;
                a
            }
        };
        let ty = match declared {
            DeclaredType::Scalar(ty) => ty,
            DeclaredType::Table(tt) => {
                let (var, owned) = user_types::table_param(cx, pname, tt, arg.and_then(|a| a.table.as_ref()), true)?;
                tables.extend(owned);
                vars.push(var);
                continue;
            }
        };
        let v = match arg {
            Some(a) if !a.value.is_null() => crate::scalar::convert::convert(&a.value, &a.ty, ty, None)?,
            Some(_) => Value::Null,
            None => {
                return Err(SqlError::new(
                    8178,
                    16,
                    1,
                    format!(
                        "The parameterized query '({decl})' expects the parameter '{pname}', which was not supplied."
                    ),
                ))
            }
        };
        if *is_output {
            if let Some(a) = arg {
                if let Some(t) = &a.output {
                    outputs.push((
                        pname.clone(),
                        match t {
                            OutputTarget::Variable(v) => OutputTarget::Variable(v.clone()),
                            OutputTarget::Rpc(o) => OutputTarget::Rpc(*o),
                        },
                    ));
                }
            }
        }
        vars.push(Var { name: pname.clone(), ty: *ty, value: v, table: None, readonly: false });
    }
    let r = exec_dynamic(cx, &stmt, vars);
    for t in tables {
        let _ = super::ddl::drop_storage(cx, &t);
    }
    let frame_vars = r?;
    for (pname, target) in outputs {
        let Some(var) = frame_vars.iter().find(|v| v.name.eq_ignore_ascii_case(&pname)) else { continue };
        match target {
            OutputTarget::Variable(n) => {
                let (slot, ty) = cx.lookup_var(&n).ok_or_else(|| errors::must_declare(&n))?;
                let v = super::run::assign_value(cx, slot, ty, AssignOp::Assign, var.value.clone(), &var.ty)?;
                cx.set_var(slot, v);
            }
            OutputTarget::Rpc(ordinal) => {
                cx.rpc_outputs.push(ReturnValue { name: pname.clone(), ordinal, ty: var.ty, value: var.value.clone() });
            }
        }
    }
    Ok(0)
}

/// sp_flush_log: hardens the current database's delayed-durable commits.
pub(crate) fn sp_flush_log(cx: &mut Cx, _args: &[ArgValue], _line: u32) -> Result<i32, SqlError> {
    let db = cx.state.database;
    cx.host.flush_log(db).map_err(host_err)?;
    Ok(0)
}

/// sp_prepare @handle OUTPUT, @params, @stmt: a handle for sp_execute.
pub(crate) fn sp_prepare(cx: &mut Cx, args: &[ArgValue], _line: u32) -> Result<i32, SqlError> {
    // @handle OUTPUT, @params, @stmt
    let decl = arg_text(args, 1).unwrap_or_default();
    let stmt = arg_text(args, 2).unwrap_or_default();
    crate::parse_batch(&stmt)?;
    let h = cx.state.next_handle;
    cx.state.next_handle += 1;
    cx.state.prepared.insert(h, (decl, stmt));
    return_handle(cx, args, h);
    Ok(0)
}

/// sp_prepexec @handle OUTPUT, @params, @stmt, @p1, ...: prepares and runs.
pub(crate) fn sp_prepexec(cx: &mut Cx, args: &[ArgValue], line: u32) -> Result<i32, SqlError> {
    let decl = arg_text(args, 1).unwrap_or_default();
    let stmt = arg_text(args, 2).unwrap_or_default();
    let h = cx.state.next_handle;
    cx.state.next_handle += 1;
    cx.state.prepared.insert(h, (decl.clone(), stmt.clone()));
    return_handle(cx, args, h);
    execute_prepared(cx, stmt, decl, &args[3.min(args.len())..], line)?;
    Ok(0)
}

/// sp_execute @handle, @p1, ...: runs a prepared statement (8179 for an unknown handle).
pub(crate) fn sp_execute(cx: &mut Cx, args: &[ArgValue], line: u32) -> Result<i32, SqlError> {
    let h = args.first().and_then(|a| Value::integer_part(&a.value)).unwrap_or(0) as i32;
    let Some((decl, stmt)) = cx.state.prepared.get(&h).cloned() else {
        return Err(SqlError::new(8179, 16, 2, format!("Could not find prepared statement with handle {h}.")));
    };
    execute_prepared(cx, stmt, decl, &args[1.min(args.len())..], line)?;
    Ok(0)
}

/// sp_unprepare @handle.
pub(crate) fn sp_unprepare(cx: &mut Cx, args: &[ArgValue], _line: u32) -> Result<i32, SqlError> {
    let h = args.first().and_then(|a| Value::integer_part(&a.value)).unwrap_or(0) as i32;
    cx.state.prepared.remove(&h);
    Ok(0)
}

/// A system procedure Mesquite lists but does not run yet (sp_help, sp_who, ...).
pub(crate) fn not_yet(name: &str) -> SqlError {
    errors::not_supported(name)
}

/// The @handle OUTPUT parameter of sp_prepare/sp_prepexec: a RETURNVALUE for an RPC,
/// the caller's variable for EXEC.
fn return_handle(cx: &mut Cx, args: &[ArgValue], h: i32) {
    if let Some(a) = args.first() {
        let _ = write_output(cx, a, "@handle", SqlType::Int, Value::Int(h));
    }
}

/// Writes a system procedure's OUTPUT parameter `name`: a RETURNVALUE for an RPC, the
/// caller's variable (converted to its type) for EXEC; nothing when not passed OUTPUT.
pub(crate) fn write_output(cx: &mut Cx, arg: &ArgValue, name: &str, ty: SqlType, value: Value) -> Result<(), SqlError> {
    match &arg.output {
        Some(OutputTarget::Rpc(o)) => {
            cx.rpc_outputs.push(ReturnValue { name: name.into(), ordinal: *o, ty, value });
        }
        Some(OutputTarget::Variable(v)) => {
            if let Some((slot, vty)) = cx.lookup_var(v) {
                let value = super::run::assign_value(cx, slot, vty, AssignOp::Assign, value, &ty)?;
                cx.set_var(slot, value);
            }
        }
        None => {}
    }
    Ok(())
}

/// Runs a prepared statement through sp_executesql with the call's remaining arguments.
fn execute_prepared(cx: &mut Cx, stmt: String, decl: String, params: &[ArgValue], line: u32) -> Result<(), SqlError> {
    let text = |v: String| ArgValue {
        name: None,
        value: Value::String(v),
        ty: SqlType::NVarChar { len: types::Length::Max },
        output: None,
        is_default: false,
        table: None,
    };
    let mut args = vec![text(stmt), text(decl)];
    args.extend(params.iter().map(clone_arg));
    sp_executesql(cx, &args, line).map(|_| ())
}

fn clone_arg(a: &ArgValue) -> ArgValue {
    ArgValue {
        name: a.name.clone(),
        value: a.value.clone(),
        ty: a.ty,
        output: a.output.as_ref().map(|t| match t {
            OutputTarget::Variable(v) => OutputTarget::Variable(v.clone()),
            OutputTarget::Rpc(o) => OutputTarget::Rpc(*o),
        }),
        is_default: a.is_default,
        table: a.table.clone(),
    }
}

/// Parses an sp_executesql parameter list: `@a int, @b nvarchar(10) OUTPUT`,
/// `@t dbo.TableType READONLY`.
pub(super) fn declare_params(cx: &mut Cx, decl: &str) -> Result<Vec<(String, DeclaredType, bool)>, SqlError> {
    if decl.trim().is_empty() {
        return Ok(Vec::new());
    }
    // Reuse the procedure parameter grammar.
    let text = format!("CREATE PROCEDURE __p {decl} AS RETURN");
    let b = crate::parse_batch(&text)?;
    let Some(StatementKind::CreateProcedure(p)) = b.statements.into_iter().next().map(|s| s.kind) else {
        return Err(SqlError::new(102, 15, 1, format!("Incorrect syntax near '{decl}'.")));
    };
    user_types::check_params(cx, &p.params)?;
    p.params.iter().map(|x| Ok((x.name.clone(), user_types::resolve(cx, &x.data_type)?, x.output))).collect()
}

/// Runs dynamic SQL in a new scope with `vars` as its parameters; returns the frame's
/// variables at the end (for OUTPUT parameters).
pub fn exec_dynamic(cx: &mut Cx, text: &str, vars: Vec<Var>) -> Result<Vec<Var>, SqlError> {
    // Dynamic SQL is a nesting level, as a procedure call is (SQL Server: 217 past 32).
    if cx.frames.len() > 32 {
        return Err(errors::nesting_exceeded());
    }
    crate::stack::check()?;
    let batch = crate::parse_batch(text)?;
    let names: Vec<&str> = vars.iter().map(|v| v.name.as_str()).collect();
    if let Some(e) = super::compile::check_body(text, &batch.statements, &names) {
        return Err(e);
    }
    let frame = Frame { vars, ..Default::default() };
    cx.frames.push(frame);
    let saved_source = std::mem::replace(&mut cx.source, Arc::from(text));
    let saved_db = cx.state.database;
    let level = cx.frames.len();
    let set_options = cx.state.scoped_set_options();
    let r = cx.run_block(&batch.statements);
    super::control::restore_set_options(cx, set_options);
    drop_scope_temp_tables(cx, level);
    cx.source = saved_source;
    // USE inside dynamic SQL does not outlive it.
    cx.state.database = saved_db;
    cx.drop_frame_tables();
    let frame = cx.frames.pop().unwrap_or_default();
    match r {
        Ok(_) => Ok(frame.vars),
        Err(a) if a.reported && std::mem::take(&mut cx.scope_abort) => Ok(frame.vars),
        Err(a) if a.reported => Err(SqlError { number: 3617, ..a.error }),
        Err(a) => Err(a.error),
    }
}

/// A sink that keeps result sets (INSERT ... EXEC) and messages (passed on afterwards).
#[derive(Default)]
struct Capture {
    sets: Vec<(Vec<ColumnInfo>, Vec<Vec<Value>>)>,
    messages: Vec<Message>,
}

impl ResultSink for Capture {
    fn columns(&mut self, columns: &[ColumnInfo]) -> SinkResult {
        self.sets.push((columns.to_vec(), Vec::new()));
        Ok(())
    }
    fn row(&mut self, row: &[Value]) -> SinkResult {
        if let Some(s) = self.sets.last_mut() {
            s.1.push(row.to_vec());
        }
        Ok(())
    }
    fn done(&mut self, _done: Done) -> SinkResult {
        Ok(())
    }
    fn message(&mut self, m: &Message) -> SinkResult {
        self.messages.push(m.clone());
        Ok(())
    }
    fn env_change(&mut self, _c: &crate::results::EnvChange) -> SinkResult {
        Ok(())
    }
    fn return_status(&mut self, _s: i32) -> SinkResult {
        Ok(())
    }
    fn return_value(&mut self, _v: &ReturnValue) -> SinkResult {
        Ok(())
    }
}

impl Cx<'_> {
    /// INSERT ... EXEC: the result sets of the procedure or dynamic batch (a method, so
    /// that the DML statements need not import this module).
    #[allow(clippy::type_complexity)]
    pub fn capture_results(
        &mut self,
        source: &InsertSource,
    ) -> Result<Vec<(Vec<ColumnInfo>, Vec<Vec<Value>>)>, SqlError> {
        let cx = self;
        let mut cap = Capture::default();
        let r = with_sink(cx, &mut cap, |cx| match source {
            InsertSource::ExecProcedure(e) => exec_procedure(cx, e, 0).map(|_| ()),
            InsertSource::ExecString(e) => {
                let (v, ty) = eval_standalone(cx, &e.sql)?;
                let text = as_text(&v, &ty).unwrap_or_default();
                exec_dynamic(cx, &text, Vec::new()).map(|_| ())
            }
            _ => Ok(()),
        });
        for m in &cap.messages {
            let _ = cx.sink.message(m);
        }
        r?;
        let sets = cap.sets;
        Ok(sets)
    }
}

/// Runs `f` with a different sink.
fn with_sink<'x, T>(
    cx: &mut Cx,
    sink: &'x mut dyn ResultSink,
    f: impl FnOnce(&mut Cx) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    // Cx's sink has the context's lifetime; a shorter-lived sink needs a new context that
    // shares everything else.
    let mut frames = std::mem::take(&mut cx.frames);
    let mut catch_errors = std::mem::take(&mut cx.catch_errors);
    let source = cx.source.clone();
    let try_depth = cx.try_depth;
    let r = {
        let mut inner = Cx::new(&mut *cx.host, &mut *cx.state, sink);
        std::mem::swap(&mut inner.frames, &mut frames);
        std::mem::swap(&mut inner.catch_errors, &mut catch_errors);
        inner.source = source;
        inner.try_depth = try_depth;
        let r = f(&mut inner);
        std::mem::swap(&mut inner.frames, &mut frames);
        std::mem::swap(&mut inner.catch_errors, &mut catch_errors);
        r
    };
    cx.frames = frames;
    cx.catch_errors = catch_errors;
    r
}

pub fn call_scalar_function(
    cx: &mut Cx,
    db: i16,
    object_id: i32,
    args: Vec<(Value, SqlType)>,
) -> Result<Value, SqlError> {
    let obj = {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        g.objects.get(&object_id).cloned()
    };
    let Some(obj) = obj else {
        return Err(errors::unknown_function(&object_id.to_string()));
    };
    let ObjectBody::ScalarFunction(m) = &obj.body else {
        return Err(errors::unknown_function(&obj.name));
    };
    let def = super::base::parse_module(&m.definition)?;
    let StatementKind::CreateFunction(f) = def.kind else {
        return Err(errors::unknown_function(&obj.name));
    };
    let FunctionBody::Scalar { data_type, body } = &f.returns else {
        return Err(errors::unknown_function(&obj.name));
    };
    let ret = resolve_type(data_type)?;
    let frame = super::tvf::function_frame(&obj, &f, args, Some(ret))?;
    super::tvf::in_function_frame(cx, db, frame, |cx| super::tvf::run_body(cx, body))?;
    // A scalar function ends with RETURN expr, which leaves its value here.
    Ok(cx.function_result.take().unwrap_or(Value::Null))
}

/// #temp tables live as long as the scope (procedure, dynamic SQL, session) that created
/// them: drops those created at nesting level `level` or deeper (a procedure or dynamic
/// SQL returning; 0 when the session ends, with its ##global ones).
pub(crate) fn drop_scope_temp_tables(cx: &mut Cx, level: usize) {
    let mut names = cx.state.temp_tables.take_from(level);
    if level == 0 {
        names.extend(cx.state.temp_tables.take_globals());
    }
    for internal in names {
        let name = ObjectName::from_ident(Ident::new(internal));
        if let Ok(Some((db, obj))) = cx.resolve_object(&name) {
            if let Ok(t) = cx.table_info(db, &obj) {
                let _ = super::ddl::drop_storage(cx, &t);
            }
        }
    }
}

pub fn raiserror(cx: &mut Cx, r: &Raiserror, line: u32) -> Result<Flow, SqlError> {
    let (m, mt) = eval_standalone(cx, &r.message)?;
    let (s, st) = eval_standalone(cx, &r.severity)?;
    let (state, stt) = eval_standalone(cx, &r.state)?;
    let severity = super::run::int_value(&s, &st)?.clamp(0, 25) as u8;
    let state = super::run::int_value(&state, &stt)?.clamp(0, 255) as u8;
    if r.args.len() > 20 {
        return Err(SqlError::new(
            2747,
            16,
            1,
            "Too many substitution parameters for RAISERROR. Cannot exceed 20 substitution parameters.",
        ));
    }
    let mut vals = Vec::new();
    for a in &r.args {
        vals.push(eval_standalone(cx, a)?);
    }
    let (number, text) = match &m {
        Value::Int(n) if *n < 13000 || *n == 50000 => {
            return Err(SqlError::new(
                2732,
                16,
                1,
                format!(
                "Error number {n} is invalid. The number must be from 13000 through 2147483647 and it cannot be 50000."
            ),
            ))
        }
        // No user-defined messages (sp_addmessage) exist: SQL Server's 18054 for a number
        // sys.messages lacks.
        Value::Int(n) => {
            let e = SqlError::new(
                18054,
                16,
                1,
                format!("Error {n}, severity {severity}, state {state} was raised, but no message with that error number was found in sys.messages. If error is larger than 50000, make sure the user-defined message is added using sp_addmessage."),
            );
            return Err(e);
        }
        _ => {
            let fmt = as_text(&m, &mt).unwrap_or_default();
            if let Some(spec) = crate::scalar::functions::printf_bad_spec(&fmt) {
                return Err(SqlError::new(2787, 16, 1, format!("Invalid format specification: '{spec}'.")));
            }
            (50000, format_message(&fmt, &vals))
        }
    };
    let log = r.options.contains(&RaiserrorOption::Log);
    if severity > 18 && !(log && cx.is_sysadmin()) {
        return Err(SqlError::new(2754, 16, 1, "Error severity levels greater than 18 can only be specified by members of the sysadmin role, using the WITH LOG option."));
    }
    if log && !cx.is_sysadmin() {
        return Err(SqlError::new(
            2778,
            16,
            2,
            "Only System Administrator can specify WITH LOG option for RAISERROR command.",
        ));
    }
    let e = SqlError::new(number, severity, state, text).at_line(line);
    if r.options.contains(&RaiserrorOption::SetError) {
        cx.set_error(number);
    }
    if severity <= 10 {
        let mut e = e;
        e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
        let _ = cx.sink.message(&Message { error: e, info: true });
        if r.options.contains(&RaiserrorOption::NoWait) {
            let _ = cx.sink.flush();
        }
        return Ok(Flow::Normal);
    }
    if r.options.contains(&RaiserrorOption::NoWait) {
        let _ = cx.sink.flush();
    }
    // RAISERROR does not abort the batch (unlike THROW) unless severity >= 20, which ends
    // the connection too (the statement loop reports it, past any CATCH).
    if cx.try_depth == 0 && !e.is_fatal() {
        let mut e = e;
        e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
        report(cx, &e);
        return Ok(Flow::Normal);
    }
    Err(e)
}

/// RAISERROR's printf-style formatting (shared with FORMATMESSAGE).
pub fn format_message(fmt: &str, args: &[(Value, SqlType)]) -> String {
    crate::scalar::functions::printf_message(fmt, args)
}

pub fn dbcc(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    match d.command.as_str() {
        "SQLPERF" => super::dmv::dbcc_sqlperf(cx, d),
        "USEROPTIONS" => super::dmv::dbcc_useroptions(cx, d),
        "CHECKDB" => dbcc_checkdb(cx, d),
        _ => Err(errors::not_supported("DBCC")),
    }
}

fn no_such_database(name: &str) -> SqlError {
    SqlError::new(
        2520,
        16,
        1,
        format!("Could not find database '{name}'. The database either does not exist, or was dropped before a statement tried to use it. Verify if the name is correct."),
    )
}

/// DBCC CHECKDB [(db | 0)] [WITH NO_INFOMSGS, ALL_ERRORMSGS]: the structural checks of
/// the host (allocation and every B-tree). Each problem is a Msg 8939 error; the summary
/// line (Msg 8989) is informational and NO_INFOMSGS hides it when the database is clean.
/// Logical checks (catalog against rows, index against base table) are not done yet.
fn dbcc_checkdb(cx: &mut Cx, d: &Dbcc) -> Result<Flow, SqlError> {
    let db = match d.args.first() {
        None => cx.state.database,
        // DBCC CHECKDB (name) and ('name'): a bare name is the database's, not a column.
        Some(e) if e.as_name().is_some() => {
            let name = e.as_name().unwrap_or_default();
            cx.db_id_by_name(name).ok_or_else(|| no_such_database(name))?
        }
        Some(e) => {
            let (v, ty) = super::run::eval_standalone(cx, e)?;
            match v {
                Value::Int(0) | Value::SmallInt(0) | Value::TinyInt(0) | Value::BigInt(0) => cx.state.database,
                Value::Int(n) => n as crate::host::DbId,
                Value::SmallInt(n) => n as crate::host::DbId,
                v => {
                    let name = super::expr::as_text(&v, &ty).unwrap_or_default();
                    cx.db_id_by_name(&name).ok_or_else(|| no_such_database(&name))?
                }
            }
        }
    };
    let no_info = d.options.iter().any(|o| o.is("NO_INFOMSGS"));
    let name = cx.db_name(db).unwrap_or_default();
    // sysadmin or the checked database's db_owner; 7983 names that database (its state
    // here is not confirmed from SQL Server).
    if !cx.is_sysadmin() && super::security::check_database_owner(cx, db, false).is_err() {
        let login = cx.login_name();
        let name = cx.db_name(db).unwrap_or_default();
        return Err(SqlError::new(
            7983,
            14,
            36,
            format!("User '{login}' does not have permission to run DBCC checkdb for database '{name}'."),
        ));
    }
    let problems = cx.host.check_database(db).map_err(super::base::host_err)?;
    for p in &problems {
        let e = SqlError::new(8939, 16, 98, format!("Table error: {p}"));
        let _ = cx.sink.message(&Message { error: e, info: false });
    }
    if !problems.is_empty() || !no_info {
        let e = SqlError::new(
            8989,
            0,
            1,
            format!(
                "CHECKDB found 0 allocation errors and {} consistency errors in database '{name}'.",
                problems.len()
            ),
        );
        let _ = cx.sink.message(&Message { error: e, info: true });
    }
    if !problems.is_empty() {
        cx.set_error(8939);
    }
    Ok(Flow::Normal)
}

/// The RPC entry point.
pub fn rpc(cx: &mut Cx, call: &RpcCall) {
    let name = match call.procedure.name() {
        Some(n) => n.to_string(),
        None => {
            report(cx, &SqlError::new(2812, 16, 62, "Could not find stored procedure (unknown procedure id)."));
            return;
        }
    };
    let args: Vec<ArgValue> = call
        .params
        .iter()
        .enumerate()
        .map(|(i, p): (usize, &RpcParam)| ArgValue {
            name: p.name.clone(),
            value: p.value.clone(),
            ty: p.ty,
            output: if p.output { Some(OutputTarget::Rpc(i as u16)) } else { None },
            is_default: false,
            table: p.table.as_ref().map(|t| TableSource::Rows((**t).clone())),
        })
        .collect();
    let oname = match super::base::parse_object_name(&name) {
        Ok(n) => n,
        Err(e) => {
            report(cx, &e);
            return;
        }
    };
    cx.frames[0].done_kind = Some(DoneKind::InProc);
    // Statements inside the call report DONEINPROC.
    cx.frames.push(Frame::default());
    cx.rpc_outputs.clear();
    let r = call_procedure(cx, &oname, args, 1);
    cx.frames.pop();
    // As from SQL Server: RETURNSTATUS, then the OUTPUT parameters' RETURNVALUEs, then
    // DONEPROC (mssql-jdbc reads the OUTPUT parameters after the return status), each in
    // the type the caller declared for it (go-mssqldb passes a bit OUTPUT as bigint) and
    // under the name the caller gave it: empty for a parameter passed by position (FreeTDS
    // db-lib, so pymssql's callproc, files a named RETURNVALUE under its name as well).
    let (status, error) = match r {
        Ok(s) => (s, false),
        Err(e) => {
            if e.number != 3617 {
                report(cx, &e);
            }
            // SQL Server returns status 0 or a negative value after an error; clients
            // only need the DONEPROC with the error bit.
            (if e.number == 3617 { 0 } else { -6 }, true)
        }
    };
    let error = super::run::end_uncommittable(cx) || error;
    let _ = cx.sink.return_status(status);
    for mut v in std::mem::take(&mut cx.rpc_outputs) {
        if let Some(p) = call.params.get(usize::from(v.ordinal)) {
            v.name = p.name.clone().unwrap_or_default();
            if p.ty != v.ty {
                if let Ok(value) = crate::scalar::convert::convert(&v.value, &v.ty, &p.ty, None) {
                    v.value = value;
                    v.ty = p.ty;
                }
            }
        }
        let _ = cx.sink.return_value(&v);
    }
    let _ = cx.sink.done(Done { kind: DoneKind::Proc, row_count: None, error, in_xact: cx.state.trancount > 0 });
}

/// Runs an RPC request (sp_executesql, sp_prepare/sp_execute/sp_prepexec/sp_unprepare,
/// or a procedure by name) with typed parameters; OUTPUT parameters come back as
/// RETURNVALUE events, the return code as RETURNSTATUS, then DONEPROC.
pub fn execute_rpc(
    state: &mut super::session::SessionState,
    host: &mut dyn crate::host::Host,
    call: &RpcCall,
    sink: &mut dyn ResultSink,
) {
    state.cancel.store(false, std::sync::atomic::Ordering::Relaxed);
    state.bulk_target = None;
    let mut cx = Cx::new(host, state, sink);
    rpc(&mut cx, call);
}

// Scalar user-defined functions, as expressions call them.
impl Cx<'_> {
    pub fn call_udf(
        &mut self,
        db: crate::host::DbId,
        object_id: i32,
        args: Vec<(Value, SqlType)>,
    ) -> Result<Value, SqlError> {
        call_scalar_function(self, db, object_id, args)
    }
}
