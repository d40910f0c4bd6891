//! What running any statement needs, below the statements themselves: atomicity (its
//! own transaction in autocommit mode, else a savepoint), reporting an error with its
//! DONE, evaluating an expression outside a query, assigning a variable, rolling back
//! everything, and the arguments a procedure receives.

use std::sync::atomic::Ordering as AtomicOrdering;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::base::host_err;
use super::context::Cx;
use super::expr::BExpr;
use super::query::{Binder, Scope};
use super::table::TableInfo;
use crate::ast::{AssignOp, Expr};
use crate::host::DbId;
use crate::request::TableArg;
use crate::results::{Done, EnvChange, Message};
use crate::scalar::convert;

/// A parameter value on its way into a procedure.
pub struct ArgValue {
    pub name: Option<String>,
    pub value: Value,
    pub ty: SqlType,
    /// OUTPUT: the caller's variable to write back (batch EXEC) or the RPC ordinal.
    pub output: Option<OutputTarget>,
    pub is_default: bool,
    /// A table-valued argument (then `value` is NULL).
    pub table: Option<TableSource>,
}

pub enum OutputTarget {
    Variable(String),
    Rpc(u16),
}

/// A table-valued argument: the rows of an RPC parameter, or the caller's table variable.
#[derive(Clone)]
pub enum TableSource {
    Rows(TableArg),
    Variable(Arc<TableInfo>),
}

pub fn report(cx: &mut Cx, e: &SqlError) {
    cx.set_error(e.number);
    let mut e = e.clone();
    if e.procedure.is_none() {
        if let Some(p) = cx.frames.last().and_then(|f| f.proc_name.clone()) {
            e.procedure = Some(p);
        }
    }
    for mut p in std::mem::take(&mut cx.preceding) {
        if p.line == 0 {
            p.line = e.line;
        }
        p.procedure = p.procedure.or_else(|| e.procedure.clone());
        let _ = cx.sink.message(&Message { info: p.severity <= 10, error: p });
    }
    let sent = cx.sink.message(&Message { info: e.severity <= 10, error: e });
    let kind = cx.done_kind();
    cx.sink.command(cx.cur_cmd);
    let done = cx.sink.done(Done { kind, row_count: None, error: true, in_xact: cx.state.trancount > 0 });
    if sent.is_err() || done.is_err() {
        cx.state.cancel.store(true, AtomicOrdering::Relaxed);
    }
}

/// Runs `f` as one atomic statement: its own transaction in autocommit mode, else
/// under a savepoint.
pub fn atomic<T>(cx: &mut Cx, f: impl FnOnce(&mut Cx) -> Result<T, SqlError>) -> Result<T, SqlError> {
    if cx.state.trancount == 0 && !cx.host.in_transaction() {
        cx.host.begin("autocommit").map_err(host_err)?;
        match f(cx) {
            Ok(v) => {
                if let Err(e) = cx.host.commit(None) {
                    let _ = cx.host.rollback();
                    cx.reload_dirty_catalogs();
                    return Err(host_err(e));
                }
                cx.state.catalog_dirty.clear();
                Ok(v)
            }
            Err(e) => {
                let _ = cx.host.rollback();
                cx.reload_dirty_catalogs();
                Err(e)
            }
        }
    } else {
        let sp = "__mesquite_stmt";
        let saved = cx.host.save(sp).is_ok();
        match f(cx) {
            Ok(v) => Ok(v),
            Err(e) => {
                if e.number == 1205 {
                    return Err(e);
                }
                if saved && cx.host.in_transaction() {
                    let _ = cx.host.rollback_to(sp);
                    if !cx.state.catalog_dirty.is_empty() {
                        let dirty: Vec<DbId> = cx.state.catalog_dirty.iter().copied().collect();
                        cx.reload_dirty_catalogs();
                        cx.state.catalog_dirty.extend(dirty);
                    }
                }
                if cx.state.xact_abort {
                    cx.state.doomed = true;
                }
                Err(e)
            }
        }
    }
}

/// The value a variable gets from `SET @v op= value` (converted to its type).
pub fn assign_value(
    cx: &mut Cx,
    slot: usize,
    ty: SqlType,
    op: AssignOp,
    v: Value,
    vty: &SqlType,
) -> Result<Value, SqlError> {
    let v = match op.binary_op() {
        None => v,
        Some(bop) => {
            let cur = cx.var(slot);
            let rty = crate::scalar::ops::binary_type(bop, &ty, vty)?;
            let r = crate::scalar::ops::binary(bop, &cur, &ty, &v, vty, &rty)?;
            return convert::convert(&r, &rty, &ty, None).and_then(|x| fit_variable(x, &ty));
        }
    };
    if vty != &ty && !v.is_null() && *vty != SqlType::Variant && !convert::implicit_allowed(vty, &ty) {
        // Assignment converts implicitly: 206 or 257, never CAST's 529.
        return Err(convert::implicit_error(vty, &ty));
    }
    let v = if vty == &ty { v } else { convert::convert(&v, vty, &ty, None)? };
    fit_variable(v, &ty)
}

/// Variables truncate strings silently (unlike columns).
pub(crate) fn fit_variable(v: Value, ty: &SqlType) -> Result<Value, SqlError> {
    match (&v, ty) {
        (
            Value::String(s),
            SqlType::VarChar { len: types::Length::Bounded(n) }
            | SqlType::NVarChar { len: types::Length::Bounded(n) }
            | SqlType::Char { len: n }
            | SqlType::NChar { len: n },
        ) => {
            let truncated: String = if ty.is_unicode() {
                types::ucs2::decode(types::ucs2::units(s).take(usize::from(*n)))
            } else {
                s.chars().take(usize::from(*n)).collect()
            };
            Value::String(truncated).fit_to(ty)
        }
        _ => Ok(v),
    }
}

pub(crate) fn bind_standalone(cx: &mut Cx, e: &Expr) -> Result<BExpr, SqlError> {
    let mut b = Binder::new(cx);
    b.bind_expr(e, &Scope::default())
}

/// Evaluates an expression outside any query (SET, IF, PRINT, ...).
pub fn eval_standalone(cx: &mut Cx, e: &Expr) -> Result<(Value, SqlType), SqlError> {
    let b = bind_standalone(cx, e)?;
    let ty = b.ty();
    let needs_txn = !b.is_constant() && !cx.host.in_transaction();
    let v = if needs_txn { atomic(cx, |cx| b.eval(&[], cx))? } else { b.eval(&[], cx)? };
    Ok((v, ty))
}

pub fn int_value(v: &Value, ty: &SqlType) -> Result<i64, SqlError> {
    match convert::convert(v, ty, &SqlType::BigInt, None)? {
        Value::BigInt(n) => Ok(n),
        _ => Ok(0),
    }
}

/// The end of a batch or RPC: an uncommittable transaction still open is rolled back,
/// with error 3998 (SQL Server's behaviour when CATCH swallowed the error that doomed
/// it). True when it did.
pub(crate) fn end_uncommittable(cx: &mut Cx) -> bool {
    if !(cx.state.doomed && cx.state.trancount > 0) {
        return false;
    }
    let _ = rollback_all(cx);
    let e = SqlError::new(
        3998,
        16,
        1,
        "Uncommittable transaction is detected at the end of the batch. The transaction is rolled back.",
    )
    .at_line(1);
    report(cx, &e);
    true
}

pub fn rollback_all(cx: &mut Cx) -> Result<(), SqlError> {
    let r = cx.host.rollback();
    cx.state.trancount = 0;
    cx.state.doomed = false;
    cx.reload_dirty_catalogs();
    let d = cx.state.descriptor;
    cx.state.descriptor = 0;
    let _ = cx.sink.env_change(&EnvChange::RollbackTransaction { descriptor: d });
    r.map_err(host_err)
}
