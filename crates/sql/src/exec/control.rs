//! Control-of-flow and session statements: IF, WHILE, BEGIN/END, TRY/CATCH, GOTO,
//! RETURN, transactions, USE, SET, DECLARE and assignment, PRINT/RAISERROR/THROW,
//! CREATE/ALTER/DROP DATABASE, DBCC and cursor statements (`exec_control`).

use std::sync::atomic::Ordering as AtomicOrdering;

use types::{SqlError, SqlType, Value};

use crate::ast::*;
use crate::catalog::ObjectBody;
use crate::host::{DbId, Isolation};
use crate::results::{EnvChange, Message};
use crate::scalar::convert;

use super::base::*;
use super::batch::*;
use super::context::*;
use super::run::*;
use super::session::*;
use super::{bulk, catalog_views, cursor, ddl, errors, expr, language, procs, query, security, user_types};

pub(super) fn exec_control(cx: &mut Cx, stmt: &Statement) -> Result<Flow, SqlError> {
    match &stmt.kind {
        StatementKind::Declare(decls) => {
            for d in decls {
                match d {
                    Declaration::Variable { name, data_type, value }
                        if data_type.name.parts.len() == 1
                            && data_type.name.parts[0].value.eq_ignore_ascii_case("CURSOR") =>
                    {
                        // Reached again (a loop, GOTO back): the batch's compile check
                        // allowed one declaration, so this is it.
                        if cx.frame().cursors.has_variable(name) {
                            continue;
                        }
                        if cx.lookup_var(name).is_some() {
                            return Err(errors::variable_declared(name));
                        }
                        if value.is_some() {
                            return Err(errors::not_supported("a cursor variable's initial value"));
                        }
                        cx.frame().cursors.declare_variable(name);
                    }
                    Declaration::Variable { name, data_type, value } => {
                        // Declared already (the scope declares its scalar variables before
                        // it runs, and a loop or GOTO reaches a DECLARE again): the same
                        // variable, given its initial value; without one it keeps its
                        // value, as in SQL Server, where DECLARE is not an executed
                        // statement.
                        let (slot, ty) = match cx.lookup_var(name) {
                            Some(declared) => declared,
                            None => {
                                let ty = match user_types::resolve(cx, data_type)? {
                                    user_types::DeclaredType::Scalar(ty) => ty,
                                    // DECLARE @t dbo.TableType: a table variable of the type.
                                    user_types::DeclaredType::Table(tt) => {
                                        let (var, owned) = user_types::table_param(cx, name, &tt, None, false)?;
                                        cx.frame().table_vars.extend(owned);
                                        cx.frame().vars.push(var);
                                        continue;
                                    }
                                };
                                errors::check_variable_type(&ty)?;
                                if cx.frame().cursors.has_variable(name) {
                                    return Err(errors::variable_declared(name));
                                }
                                let var =
                                    Var { name: name.clone(), ty, value: Value::Null, table: None, readonly: false };
                                cx.frame().vars.push(var);
                                (cx.frame().vars.len() - 1, ty)
                            }
                        };
                        if let Some(e) = value {
                            let (v, vty) = eval_standalone(cx, e)?;
                            let v = assign_value(cx, slot, ty, AssignOp::Assign, v, &vty)?;
                            cx.set_var(slot, v);
                        }
                    }
                    Declaration::Table { name, elements } => {
                        // Reached again: the table variable stays, rows and all.
                        if cx.lookup_var(name).is_some() {
                            continue;
                        }
                        let t = ddl::create_table_variable(cx, name, elements)?;
                        cx.frame().table_vars.push(t.clone());
                        cx.frame().vars.push(Var {
                            name: name.clone(),
                            ty: SqlType::Int,
                            value: Value::Null,
                            table: Some(t),
                            readonly: false,
                        });
                    }
                    Declaration::Cursor { name, definition } => {
                        cursor::declare(cx, name, definition)?;
                        cx.done(None)?;
                    }
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::SetVariable { name, op, value } => {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let (v, vty) = eval_standalone(cx, value)?;
            let v = assign_value(cx, slot, ty, *op, v, &vty)?;
            cx.set_var(slot, v);
            Ok(Flow::Normal)
        }
        StatementKind::SetCursor { name, definition } => cursor::set_variable(cx, name, definition),
        // Cursor statements end with a DONE of their own, as in SQL Server (a FETCH
        // without INTO sends its row and count itself).
        StatementKind::OpenCursor(c) => cursor::open(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::CloseCursor(c) => cursor::close(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::DeallocateCursor(c) => cursor::deallocate(cx, c).and_then(|f| cx.done(None).map(|_| f)),
        StatementKind::Fetch(f) => {
            let flow = cursor::fetch(cx, f)?;
            if !f.into.is_empty() {
                cx.done(None)?;
            }
            Ok(flow)
        }
        StatementKind::SetOption(o) => {
            set_option(cx, o)?;
            Ok(Flow::Normal)
        }
        StatementKind::Block(stmts) => exec_block(cx, stmts).map_err(|a| reraise(cx, a)),
        StatementKind::If { condition, then_branch, else_branch } => {
            let (v, _) = eval_standalone(cx, condition)?;
            cx.state.error = 0;
            // SQL Server ends the evaluation of a condition with a DONE (no count).
            cx.done(None)?;
            let branch = if expr::is_true(&v) { Some(&**then_branch) } else { else_branch.as_deref() };
            match branch {
                Some(s) => exec_block(cx, std::slice::from_ref(s)).map_err(|a| reraise(cx, a)),
                None => Ok(Flow::Normal),
            }
        }
        StatementKind::While { condition, body } => {
            loop {
                cx.check_cancel()?;
                // The condition runs again after the body without a statement of its own:
                // a COMMIT at the end of the body is settled first (see `exec_statement`).
                cx.host.settle_commit().map_err(host_err)?;
                let (v, _) = eval_standalone(cx, condition)?;
                cx.state.error = 0;
                cx.done(None)?;
                if !expr::is_true(&v) {
                    break;
                }
                match exec_block(cx, std::slice::from_ref(&**body)).map_err(|a| reraise(cx, a))? {
                    Flow::Break => break,
                    Flow::Normal | Flow::Continue => {}
                    other => return Ok(other),
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::Break => Ok(Flow::Break),
        StatementKind::Continue => Ok(Flow::Continue),
        StatementKind::Goto(l) => Ok(Flow::Goto(l.value.clone())),
        StatementKind::Label(_) => Ok(Flow::Normal),
        StatementKind::Return(e) => {
            if let (Some(ret), Some(e)) = (cx.frames.last().and_then(|f| f.function_returns), e) {
                let (v, ty) = eval_standalone(cx, e)?;
                let v = if v.is_null() { Value::Null } else { convert::convert(&v, &ty, &ret, None)? };
                cx.function_result = Some(v);
                return Ok(Flow::Return(None));
            }
            let v = match e {
                Some(e) => {
                    let (v, ty) = eval_standalone(cx, e)?;
                    match convert::convert(&v, &ty, &SqlType::Int, None)? {
                        Value::Int(n) => Some(n),
                        _ => Some(0),
                    }
                }
                None => None,
            };
            Ok(Flow::Return(v))
        }
        StatementKind::TryCatch { try_block, catch_block } => {
            cx.try_depth += 1;
            cx.try_frames.push(cx.frames.len());
            let r = exec_block(cx, try_block);
            cx.try_frames.pop();
            cx.try_depth -= 1;
            match r {
                Ok(f) => Ok(f),
                Err(a) if a.reported => Err(reraise(cx, a)),
                Err(a) => {
                    if a.error.number == 3617 {
                        return Err(a.error);
                    }
                    if cx.state.trancount > 0 && (cx.state.xact_abort || aborts_transaction(&a.error)) {
                        cx.state.doomed = true;
                    }
                    // The CATCH block's first statement still sees the error in @@ERROR.
                    cx.set_error(a.error.number);
                    cx.catch_errors.push(a.error);
                    let r = exec_block(cx, catch_block);
                    cx.catch_errors.pop();
                    r.map_err(|a| reraise(cx, a))
                }
            }
        }
        StatementKind::Throw(args) => {
            let e = match args {
                None => match cx.catch_errors.last() {
                    Some(e) => e.clone(),
                    None => {
                        return Err(SqlError::new(
                            10704,
                            15,
                            1,
                            "To rethrow an error, a THROW statement must be used inside a CATCH block. Insert the THROW statement inside a CATCH block, or add error parameters to the THROW statement.",
                        ))
                    }
                },
                Some(a) => {
                    let (n, nt) = eval_standalone(cx, &a.number)?;
                    let (m, mt) = eval_standalone(cx, &a.message)?;
                    let (s, st) = eval_standalone(cx, &a.state)?;
                    let n = int_value(&n, &nt)?;
                    if n < 50000 {
                        return Err(SqlError::new(
                            35100,
                            16,
                            10,
                            "Error number in THROW statement is outside the valid range. Specify an error number in the valid range of 50000 to 2147483647.",
                        ));
                    }
                    let m = expr::as_text(&m, &mt).unwrap_or_default();
                    let s = int_value(&s, &st)?.clamp(0, 255) as u8;
                    SqlError::new(n as i32, 16, s, m)
                }
            };
            let mut e = e;
            e.line = stmt.line();
            if cx.state.trancount > 0 && cx.state.xact_abort {
                cx.state.doomed = true;
            }
            // THROW always aborts the batch when not caught.
            if cx.try_depth == 0 {
                e.procedure = cx.frames.last().and_then(|f| f.proc_name.clone());
                report(cx, &e);
                return Err(SqlError { number: 3617, ..e });
            }
            Err(e)
        }
        StatementKind::Raiserror(r) => procs::raiserror(cx, r, stmt.line()),
        StatementKind::Print(e) => {
            let (v, ty) = eval_standalone(cx, e)?;
            let text = match v {
                Value::Null => String::new(),
                v => expr::as_text(&v, &ty).unwrap_or_default(),
            };
            if cx
                .sink
                .message(&Message { error: SqlError::new(0, 0, 1, text).at_line(stmt.line()), info: true })
                .is_err()
            {
                // The client is gone or cancelled: stop at the next check.
                cx.state.cancel.store(true, AtomicOrdering::Relaxed);
            }
            // PRINT ends with a DONE of its own (no count), as in SQL Server: drivers
            // that surface messages between result sets rely on it.
            cx.done(None)?;
            Ok(Flow::Normal)
        }
        StatementKind::WaitFor { kind, value } => {
            let (v, ty) = eval_standalone(cx, value)?;
            let text = expr::as_text(&v, &ty).unwrap_or_default();
            let t = types::parse(&text, &SqlType::Time { scale: 3 })
                .map_err(|_| SqlError::new(148, 15, 1, "Incorrect time syntax in time string used with WAITFOR."))?;
            let Value::Time { ticks, .. } = t else {
                return Ok(Flow::Normal);
            };
            let dur = match kind {
                WaitForKind::Delay => std::time::Duration::from_nanos(ticks * 100),
                WaitForKind::Time => {
                    let now = now_utc().1;
                    let wait = if ticks >= now { ticks - now } else { ticks + 864_000_000_000 - now };
                    std::time::Duration::from_nanos(wait * 100)
                }
            };
            let end = std::time::Instant::now() + dur;
            let _w = diag::waits::begin_wait(diag::waits::WaitType::WAITFOR);
            while std::time::Instant::now() < end {
                cx.check_cancel()?;
                let left = end.saturating_duration_since(std::time::Instant::now());
                std::thread::sleep(left.min(std::time::Duration::from_millis(10)));
            }
            Ok(Flow::Normal)
        }
        StatementKind::Kill { target, status_only } => {
            // ALTER ANY CONNECTION: sysadmin (and processadmin, which Mesquite has not).
            if !cx.host.is_sysadmin() {
                return Err(SqlError::new(6102, 14, 1, "User does not have permission to use the KILL statement."));
            }
            if cx.host.in_transaction() {
                return Err(SqlError::new(6115, 16, 1, "KILL command cannot be used inside user transactions."));
            }
            let (v, ty) = eval_standalone(cx, target)?;
            let spid = match crate::scalar::convert::convert(&v, &ty, &SqlType::Int, None) {
                Ok(Value::Int(n)) if n >= 1 => n,
                _ => {
                    let shown = expr::as_text(&v, &ty).unwrap_or_default();
                    return Err(SqlError::new(
                        6101,
                        16,
                        1,
                        format!("Process ID {shown} is not a valid process ID. Choose a number between 1 and 32767."),
                    ));
                }
            };
            if let Some(report) = cx.host.kill_session(spid, *status_only)? {
                cx.info(report);
            }
            Ok(Flow::Normal)
        }
        StatementKind::Exec(e) => procs::exec_procedure(cx, e, stmt.line()),
        StatementKind::ExecString(e) => {
            let (v, ty) = eval_standalone(cx, &e.sql)?;
            let text = expr::as_text(&v, &ty).unwrap_or_default();
            procs::exec_dynamic(cx, &text, Vec::new())?;
            Ok(Flow::Normal)
        }
        StatementKind::Use(db) => {
            let id = cx.db_id_by_name(&db.value).ok_or_else(|| {
                SqlError::new(
                    911,
                    16,
                    1,
                    format!("Database '{}' does not exist. Make sure that the name is entered correctly.", db.value),
                )
            })?;
            security::check_use(cx, id)?;
            let old = cx.current_db_name();
            let old_collation = cx.db_collation();
            cx.state.database = id;
            let new = cx.current_db_name();
            let _ = cx.sink.env_change(&EnvChange::Database { old, new: new.clone() });
            let _ = cx.sink.message(&Message {
                error: SqlError::new(5701, 0, 1, format!("Changed database context to '{new}'.")),
                info: true,
            });
            // A database of another collation: the client learns it as at login.
            let new_collation = cx.db_collation();
            if new_collation != old_collation {
                let _ = cx.sink.env_change(&EnvChange::Collation { old: old_collation, new: new_collation });
            }
            Ok(Flow::Normal)
        }
        StatementKind::BeginTransaction { name, .. } => {
            if cx.state.trancount == 0 {
                let n = name_of(cx, name.as_ref())?.unwrap_or_else(|| "user_transaction".into());
                begin_user_transaction(cx, &n)?;
            } else {
                cx.state.trancount += 1;
            }
            Ok(Flow::Normal)
        }
        StatementKind::Commit { delayed_durability, .. } => {
            match cx.state.trancount {
                0 => {
                    return Err(SqlError::new(
                        3902,
                        16,
                        1,
                        "The COMMIT TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                    ))
                }
                _ if cx.state.doomed => return Err(uncommittable()),
                1 => {
                    let r = cx.host.commit(*delayed_durability);
                    cx.state.trancount = 0;
                    let d = cx.state.descriptor;
                    cx.state.descriptor = 0;
                    if let Err(e) = r {
                        let _ = cx.host.rollback();
                        cx.reload_dirty_catalogs();
                        let _ = cx.sink.env_change(&EnvChange::RollbackTransaction { descriptor: d });
                        return Err(host_err(e));
                    }
                    cx.state.catalog_dirty.clear();
                    let _ = cx.sink.env_change(&EnvChange::CommitTransaction { descriptor: d });
                }
                _ => cx.state.trancount -= 1,
            }
            Ok(Flow::Normal)
        }
        StatementKind::Rollback { name } => {
            let n = name_of(cx, name.as_ref())?;
            if cx.state.trancount == 0 {
                return Err(SqlError::new(
                    3903,
                    16,
                    1,
                    "The ROLLBACK TRANSACTION request has no corresponding BEGIN TRANSACTION.",
                ));
            }
            // A savepoint name rolls back to it; the transaction's own name (or none)
            // rolls back everything.
            if let Some(n) = n.filter(|n| *n != cx.state.transaction_name) {
                if cx.host.rollback_to(&n).is_err() {
                    return Err(SqlError::new(
                        6401,
                        16,
                        1,
                        format!("Cannot roll back {n}. No transaction or savepoint of that name was found."),
                    ));
                }
                cx.reload_dirty_catalogs_keep();
                return Ok(Flow::Normal);
            }
            rollback_all(cx)?;
            Ok(Flow::Normal)
        }
        StatementKind::SaveTransaction { name } => {
            if cx.state.trancount == 0 {
                return Err(SqlError::new(
                    628,
                    16,
                    0,
                    "Cannot issue SAVE TRANSACTION when there is no active transaction.",
                ));
            }
            let n = name_of(cx, Some(name))?.unwrap_or_default();
            cx.host.save(&n).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::Checkpoint(d) => {
            let secs = match d {
                Some(e) => {
                    let (v, ty) = eval_standalone(cx, e)?;
                    Some(int_value(&v, &ty)? as i32)
                }
                None => None,
            };
            let db = cx.state.database;
            security::check_checkpoint(cx, db)?;
            cx.host.checkpoint(db, secs).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::CreateDatabase(c) => {
            security::check_create_database(cx)?;
            no_user_transaction(cx, "CREATE DATABASE")?;
            cx.host.create_database(c).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::AlterDatabase(a) => {
            no_user_transaction(cx, "ALTER DATABASE")?;
            let db = match &a.database {
                DatabaseRef::Current => cx.state.database,
                DatabaseRef::Name(n) => cx.db_id_by_name(&n.value).ok_or_else(|| {
                    SqlError::new(
                        911,
                        16,
                        1,
                        format!("Database '{}' does not exist. Make sure that the name is entered correctly.", n.value),
                    )
                })?,
            };
            security::check_database_owner(cx, db, false)?;
            if let AlterDatabaseAction::Set { options, .. } = &a.action {
                // RECURSIVE_TRIGGERS is the executor's (kept in memory: see catalog).
                let recursive = |o: &DatabaseOption| match o {
                    DatabaseOption::Other(item) if item.is("RECURSIVE_TRIGGERS") => Some(matches!(
                        &item.value,
                        Some(OptionValue::Name(n)) if n.name().value.eq_ignore_ascii_case("ON")
                    )),
                    _ => None,
                };
                if !options.is_empty() && options.iter().all(|o| recursive(o).is_some()) {
                    let on = options.iter().rev().find_map(recursive).unwrap_or(false);
                    cx.catalog(db)?.recursive_triggers.store(on, AtomicOrdering::Relaxed);
                    return Ok(Flow::Normal);
                }
            }
            if let AlterDatabaseAction::Collate(name) = &a.action {
                alter_database_collation(cx, db, a, &name.value)?;
                return Ok(Flow::Normal);
            }
            cx.host.alter_database(db, a).map_err(host_err)?;
            Ok(Flow::Normal)
        }
        StatementKind::Drop { kind: DropKind::Database, if_exists, names } => {
            no_user_transaction(cx, "DROP DATABASE")?;
            for n in names {
                let name = &n.name().value;
                match cx.db_id_by_name(name) {
                    Some(id) => {
                        security::check_database_owner(cx, id, true)?;
                        if id == cx.state.database {
                            return Err(SqlError::new(
                                3702,
                                16,
                                4,
                                format!("Cannot drop database \"{name}\" because it is currently in use."),
                            ));
                        }
                        if id <= 4 {
                            return Err(SqlError::new(
                                3708,
                                16,
                                1,
                                format!("Cannot drop the database '{name}' because it is a system database."),
                            ));
                        }
                        cx.host.drop_database(id).map_err(host_err)?;
                    }
                    None if *if_exists => {}
                    None => return Err(errors::cannot_drop("database", name)),
                }
            }
            Ok(Flow::Normal)
        }
        StatementKind::Dbcc(d) => procs::dbcc(cx, d),
        StatementKind::ExecuteAs(ctx) => {
            security::execute_as(cx, ctx)?;
            Ok(Flow::Normal)
        }
        StatementKind::Revert => {
            cx.state.impersonation.pop();
            Ok(Flow::Normal)
        }
        StatementKind::CreateLogin(_)
        | StatementKind::AlterLogin(_)
        | StatementKind::AlterRole { server: true, .. }
        | StatementKind::Drop { kind: DropKind::Login, .. } => {
            security::execute_server(cx, &stmt.kind)?;
            Ok(Flow::Normal)
        }
        StatementKind::InsertBulk(ib) => bulk::insert_bulk(cx, ib).map(|_| Flow::Normal),
        StatementKind::Other { keyword, .. } => Err(errors::not_supported(keyword)),
        _ => Err(errors::not_supported("This statement")),
    }
}

/// Msg 226: statements that run their own transaction in master.
pub(super) fn no_user_transaction(cx: &Cx, what: &str) -> Result<(), SqlError> {
    if cx.state.trancount > 0 {
        return Err(SqlError::new(
            226,
            16,
            6,
            format!("{what} statement not allowed within multi-statement transaction."),
        ));
    }
    Ok(())
}

/// Turns a nested block's abort into the error its parent sees.
pub(super) fn reraise(_cx: &mut Cx, a: Abort) -> SqlError {
    if a.reported {
        // Already sent: the batch must stop without sending it again.
        SqlError { number: 3617, ..a.error }
    } else {
        a.error
    }
}

pub(super) fn name_of(cx: &mut Cx, n: Option<&NameRef>) -> Result<Option<String>, SqlError> {
    Ok(match n {
        None => None,
        Some(NameRef::Name(i)) => Some(i.value.clone()),
        Some(NameRef::Variable(v)) => {
            let (slot, _) = cx.lookup_var(v).ok_or_else(|| errors::must_declare(v))?;
            match cx.var(slot) {
                Value::String(s) => Some(s),
                _ => None,
            }
        }
    })
}

/// Gives back the SET options a procedure, trigger or dynamic SQL found when it began
/// (its own SET statements end with it), telling the host of a changed isolation level
/// or lock timeout.
pub(crate) fn restore_set_options(cx: &mut Cx, saved: ScopedSetOptions) {
    let now = cx.state.scoped_set_options();
    if now.isolation != saved.isolation {
        let _ = cx.host.set_isolation(saved.isolation);
    }
    if now.lock_timeout != saved.lock_timeout {
        cx.host.set_lock_timeout(saved.lock_timeout);
    }
    cx.fcx.datefirst = saved.datefirst;
    cx.state.restore_set_options(saved);
}

pub(super) fn set_option(cx: &mut Cx, o: &SetOption) -> Result<(), SqlError> {
    match o {
        SetOption::Flags { names, on } => {
            for n in names {
                let upper = n.to_ascii_uppercase();
                match upper.as_str() {
                    "NOCOUNT" => cx.state.nocount = *on,
                    "XACT_ABORT" => cx.state.xact_abort = *on,
                    "IMPLICIT_TRANSACTIONS" => cx.state.implicit_transactions = *on,
                    "SHOWPLAN_TEXT" | "SHOWPLAN_ALL" | "SHOWPLAN_XML" => cx.state.showplan = *on,
                    "FMTONLY" => cx.state.fmtonly = *on,
                    // ANSI_DEFAULTS also sets IMPLICIT_TRANSACTIONS (SQL Server's list).
                    "ANSI_DEFAULTS" => cx.state.implicit_transactions = *on,
                    // Accepted for compatibility with what clients send at login.
                    _ => {}
                }
                // Only recorded for @@OPTIONS, sys.dm_exec_sessions and DBCC USEROPTIONS:
                // the executor behaves as with SQL Server's defaults whatever they say.
                let bits = opt::of(&upper);
                if *on {
                    cx.state.options |= bits;
                    // ANSI_NULL_DFLT_ON and _OFF exclude each other.
                    if bits & opt::ANSI_NULL_DFLT_ON != 0 {
                        cx.state.options &= !opt::ANSI_NULL_DFLT_OFF;
                    } else if bits & opt::ANSI_NULL_DFLT_OFF != 0 {
                        cx.state.options &= !opt::ANSI_NULL_DFLT_ON;
                    }
                } else {
                    cx.state.options &= !bits;
                }
            }
        }
        SetOption::IsolationLevel(l) => {
            let level = match l {
                IsolationLevel::ReadUncommitted => Isolation::ReadUncommitted,
                IsolationLevel::ReadCommitted => Isolation::ReadCommitted,
                IsolationLevel::RepeatableRead => Isolation::RepeatableRead,
                IsolationLevel::Serializable => Isolation::Serializable,
                IsolationLevel::Snapshot => Isolation::Snapshot,
            };
            cx.host.set_isolation(level).map_err(host_err)?;
            cx.state.isolation = level;
        }
        SetOption::IdentityInsert { table, on } => {
            let (db, o) = cx.resolve_object(table)?.ok_or_else(|| errors::invalid_object(&errors::written(table)))?;
            let t = cx.table_info(db, &o)?;
            if t.identity.is_none() {
                return Err(SqlError::new(
                    8106,
                    16,
                    1,
                    format!(
                        "Table '{}' does not have the identity property. Cannot perform SET operation.",
                        t.qualified_name()
                    ),
                ));
            }
            if let Some((odb, oid)) = cx.state.identity_insert.filter(|&(d, i)| *on && (d, i) != (db, o.id)) {
                let other = cx.catalog(odb)?.inner.read().objects.get(&oid).map(|x| (x.schema_id, x.name.clone()));
                if let Some((schema_id, name)) = other {
                    let db_name = cx.db_name(odb).unwrap_or_default();
                    let schema = cx.schema_name(odb, schema_id).unwrap_or_else(|| "dbo".into());
                    return Err(SqlError::new(
                        8107,
                        16,
                        1,
                        format!(
                            "IDENTITY_INSERT is already ON for table '{db_name}.{schema}.{name}'. Cannot perform SET operation for table '{}'.",
                            errors::written(table)
                        ),
                    ));
                }
            }
            cx.state.identity_insert = match cx.state.identity_insert {
                _ if *on => Some((db, o.id)),
                Some(cur) if cur == (db, o.id) => None,
                // OFF for a table that is not the one ON changes nothing.
                cur => cur,
            };
        }
        SetOption::Value { name, value } => {
            let upper = name.to_ascii_uppercase();
            let num = |cx: &mut Cx, v: &SetValue| -> Result<i64, SqlError> {
                match v {
                    SetValue::Expr(e) => {
                        let (v, ty) = eval_standalone(cx, e)?;
                        int_value(&v, &ty)
                    }
                    SetValue::Word(w) => w
                        .value
                        .parse()
                        .map_err(|_| SqlError::new(102, 15, 1, format!("Incorrect syntax near '{}'.", w.value))),
                }
            };
            match upper.as_str() {
                "LOCK_TIMEOUT" => {
                    let ms = num(cx, value)?;
                    cx.state.lock_timeout = ms;
                    cx.host.set_lock_timeout(ms);
                }
                "DATEFIRST" => {
                    let d = num(cx, value)?;
                    if !(1..=7).contains(&d) {
                        return Err(SqlError::new(
                            1005,
                            15,
                            1,
                            format!("The value {d} is outside the range for SET DATEFIRST."),
                        ));
                    }
                    cx.state.datefirst = d as u8;
                    cx.fcx.datefirst = d as u8;
                }
                "LANGUAGE" => {
                    let name = match value {
                        SetValue::Word(w) => w.value.clone(),
                        SetValue::Expr(e) => {
                            let (v, ty) = eval_standalone(cx, e)?;
                            expr::as_text(&v, &ty).unwrap_or_default()
                        }
                    };
                    language::set_language(cx, &name)?;
                }
                // Accepted: DATEFORMAT, TEXTSIZE, DEADLOCK_PRIORITY, ROWCOUNT 0, ...
                _ => {}
            }
        }
    }
    Ok(())
}

/// ALTER DATABASE ... COLLATE: refused for a system database (3708) and an unknown name
/// (448); then each schema-bound object that depends on the database collation (CHECK
/// constraints, computed columns, modules WITH SCHEMABINDING) is a 5075, and other
/// sessions in the database (the host's 5030) are refused, both followed by 5072. Existing
/// columns keep their collations.
fn alter_database_collation(cx: &mut Cx, db: DbId, a: &AlterDatabase, name: &str) -> Result<(), SqlError> {
    let db_name = cx.db_name(db).unwrap_or_default();
    if db <= 4 {
        // The number and text follow 3708's template ("Cannot %S_MSG the %S_MSG '%.*ls'
        // because it is a system %S_MSG."); the state is not checked against a server.
        return Err(SqlError::new(
            3708,
            16,
            5,
            format!("Cannot alter the database '{db_name}' because it is a system database."),
        ));
    }
    let collation = query::collation_named(name)?;
    let failed = |name: &str| {
        SqlError::new(
            5072,
            16,
            1,
            format!("ALTER DATABASE failed. The default collation of database '{db_name}' cannot be set to {name}."),
        )
    };
    if collation == cx.collation_of(db) {
        return Ok(());
    }
    // What depends on the collation, in object id order (a computed column under its
    // table's id). A check constraint is "object" and a computed column "column
    // 'table.column'", as SQL Server names them; "object" for a schema-bound module is
    // assumed, not checked against a server.
    let mut deps: Vec<(i32, String)> = Vec::new();
    {
        let cat = cx.catalog(db)?;
        let g = cat.inner.read();
        for o in g.objects.values() {
            match &o.body {
                ObjectBody::Table(t) => {
                    for c in t.columns.iter().filter(|c| c.computed.is_some()) {
                        deps.push((o.id, format!("column '{}.{}'", o.name, c.name)));
                    }
                    for ck in &t.checks {
                        deps.push((ck.object_id, format!("object '{}'", ck.name)));
                    }
                }
                _ => {
                    let bound = catalog_views::module_signature(o).is_some_and(|(_, _, opts)| {
                        opts.iter().any(|x| matches!(x, crate::ast::ModuleOption::SchemaBinding))
                    });
                    if bound {
                        deps.push((o.id, format!("object '{}'", o.name)));
                    }
                }
            }
        }
    }
    deps.sort_by_key(|d| d.0);
    if !deps.is_empty() {
        for (_, what) in deps {
            cx.preceding.push(SqlError::new(
                5075,
                16,
                1,
                format!("The {what} is dependent on database collation. The database collation cannot be changed if a schema-bound object depends on it. Remove the dependencies on the database collation and then retry the operation."),
            ));
        }
        return Err(failed(name));
    }
    match cx.host.alter_database(db, a) {
        Ok(()) => Ok(()),
        Err(crate::host::HostError::Sql(e)) if e.number == 5030 => {
            cx.preceding.push(e);
            Err(failed(name))
        }
        Err(e) => Err(host_err(e)),
    }
}
