//! Bound expressions: the binder's output, typed, with names resolved to row positions,
//! variable slots and plans; and their evaluation against a row.
//!
//! Predicates evaluate to `Value::Bit` or `Value::Null` (SQL's UNKNOWN): three-valued
//! logic lives in [`BExpr::And`], [`BExpr::Or`] and [`BExpr::Not`].

use std::cmp::Ordering;
use std::sync::Arc;

use types::{Collation, SqlError, SqlType, Value};

use super::context::Cx;
use super::plan::Plan;
use crate::ast::{BinaryOp, UnaryOp};
use crate::scalar::{convert, functions, ops, xml};

pub type Row = Vec<Value>;

/// Session and catalog functions the binder resolves (they read state, not arguments).
#[derive(Debug, Clone, PartialEq)]
pub enum SysFn {
    RowCount,
    TranCount,
    Error,
    Identity,
    ScopeIdentity,
    Spid,
    XactState,
    FetchStatus,
    CursorRows,
    /// CURSOR_STATUS('local' | 'global' | 'variable', name), its arguments evaluated
    /// when bound.
    CursorStatus {
        kind: String,
        name: String,
    },
    ErrorNumber,
    ErrorMessage,
    ErrorSeverity,
    ErrorState,
    ErrorLine,
    ErrorProcedure,
}

#[derive(Debug, Clone)]
pub enum BExpr {
    Const(Value, SqlType),
    /// A column of the current row.
    Col(usize, SqlType),
    /// A column of an enclosing query's row: `depth` 1 is the nearest outer row.
    Outer {
        depth: usize,
        index: usize,
        ty: SqlType,
    },
    /// A variable of the current frame.
    Var(usize, SqlType),
    Unary(UnaryOp, Box<BExpr>, SqlType),
    Arith(BinaryOp, Box<BExpr>, Box<BExpr>, SqlType),
    /// A comparison, both sides converted to `ty` first.
    Cmp(BinaryOp, Box<BExpr>, Box<BExpr>, SqlType),
    /// A comparison of strings under an explicit collation other than the default
    /// (`a COLLATE Latin1_General_CS_AS = b`). A variant of its own, so that seeks, hash
    /// joins and other plans keyed on the default collation never take it for a `Cmp`.
    CollCmp(BinaryOp, Box<BExpr>, Box<BExpr>, SqlType, Collation),
    /// `expr COLLATE name`: the value of `expr`, labelled with an explicit collation
    /// (collation precedence, docs/architecture.md "Collations").
    Collated(Box<BExpr>, Collation),
    /// The sort key of a string under a collation other than the default, after
    /// converting it to `ty`: equal exactly when the strings compare equal under it. The
    /// hash keys of a join (or an index spool) on a collated equality.
    CollationKey(Box<BExpr>, SqlType, Collation),
    /// A reference to a column whose collation is not the default: the column's value
    /// with its *implicit* label (explicit beats it; two different implicit ones in one
    /// comparison are 468).
    ImplicitColl(Box<BExpr>, Collation),
    And(Vec<BExpr>),
    Or(Vec<BExpr>),
    Not(Box<BExpr>),
    IsNull(Box<BExpr>, bool),
    Like {
        expr: Box<BExpr>,
        pattern: Box<BExpr>,
        escape: Option<Box<BExpr>>,
        negated: bool,
        /// An explicit collation other than the default, for the character matches.
        collation: Option<Collation>,
    },
    InList {
        expr: Box<BExpr>,
        list: Vec<BExpr>,
        negated: bool,
        ty: SqlType,
    },
    Case {
        branches: Vec<(BExpr, BExpr)>,
        else_result: Option<Box<BExpr>>,
        ty: SqlType,
    },
    Convert {
        expr: Box<BExpr>,
        to: SqlType,
        style: Option<i32>,
        try_: bool,
        /// The code page text becomes in when `to` is char or varchar: that of the
        /// collation of `expr` (explicit, a column's, or the database's).
        code_page: types::CodePage,
    },
    Func {
        f: functions::Builtin,
        args: Vec<BExpr>,
        ty: SqlType,
    },
    /// COALESCE / ISNULL: the first non-NULL argument, converted to `ty`.
    Coalesce(Vec<BExpr>, SqlType),
    Sys(SysFn, SqlType),
    /// A scalar subquery: its first column of its only row (NULL if none; Msg 512 if
    /// more than one).
    Subquery(Arc<Plan>, SqlType),
    Exists(Arc<Plan>, bool),
    /// `expr [NOT] IN (subquery)`, compared in `ty`.
    InSubquery {
        expr: Box<BExpr>,
        plan: Arc<Plan>,
        negated: bool,
        ty: SqlType,
    },
    /// `expr op ALL|ANY (subquery)`.
    Quantified {
        expr: Box<BExpr>,
        op: BinaryOp,
        all: bool,
        plan: Arc<Plan>,
        ty: SqlType,
    },
    AtTimeZone(Box<BExpr>, Box<BExpr>, SqlType),
    /// A catalog function (DB_NAME, OBJECT_NAME, ...) of a per-row argument, looked up
    /// as each row is evaluated (constant arguments are folded when binding).
    CatalogFn {
        name: Arc<str>,
        args: Vec<BExpr>,
        ty: SqlType,
    },
    /// NEXT VALUE FOR a sequence: the next value, drawn when evaluated.
    NextValue {
        db: i16,
        object_id: i32,
        ty: SqlType,
    },
    /// A scalar user-defined function call.
    Udf {
        db: i16,
        object_id: i32,
        args: Vec<BExpr>,
        ty: SqlType,
    },
    /// An xml method (`x.value(...)`, `x.query(...)`, `x.exist(...)`) on `target`, the
    /// XQuery compiled when bound; `outside` are its sql:variable / sql:column values.
    Xml {
        method: XmlMethod,
        target: Box<BExpr>,
        query: Arc<xml::XQuery>,
        outside: Vec<BExpr>,
        ty: SqlType,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum XmlMethod {
    Value,
    Query,
    Exist,
}

pub fn bit(b: bool) -> Value {
    Value::Bit(b)
}

impl BExpr {
    pub fn ty(&self) -> SqlType {
        match self {
            BExpr::Const(_, t)
            | BExpr::Col(_, t)
            | BExpr::Outer { ty: t, .. }
            | BExpr::Var(_, t)
            | BExpr::Unary(_, _, t)
            | BExpr::Arith(_, _, _, t)
            | BExpr::Case { ty: t, .. }
            | BExpr::Func { ty: t, .. }
            | BExpr::Coalesce(_, t)
            | BExpr::Sys(_, t)
            | BExpr::Subquery(_, t)
            | BExpr::AtTimeZone(_, _, t)
            | BExpr::Udf { ty: t, .. }
            | BExpr::NextValue { ty: t, .. }
            | BExpr::Xml { ty: t, .. }
            | BExpr::CatalogFn { ty: t, .. } => *t,
            BExpr::Convert { to, .. } => *to,
            BExpr::Collated(e, _) | BExpr::ImplicitColl(e, _) => e.ty(),
            BExpr::CollationKey(..) => SqlType::VarBinary { len: types::Length::Max },
            BExpr::Cmp(..)
            | BExpr::CollCmp(..)
            | BExpr::And(_)
            | BExpr::Or(_)
            | BExpr::Not(_)
            | BExpr::IsNull(..)
            | BExpr::Like { .. }
            | BExpr::InList { .. }
            | BExpr::Exists(..)
            | BExpr::InSubquery { .. }
            | BExpr::Quantified { .. } => SqlType::Bit,
        }
    }

    /// The collation label of a string expression (SQL Server's collation precedence):
    /// explicit from a COLLATE clause, implicit from a column reference (a plain column
    /// has the default collation), coercible-default for literals, variables and the
    /// rest; concatenation, CASE, COALESCE/ISNULL, CAST/CONVERT and a string function's
    /// first argument pass their operands' labels on, combined by precedence.
    pub fn collation_label(&self) -> CollationLabel {
        if !self.ty().is_character() {
            return CollationLabel::Default;
        }
        match self {
            BExpr::Collated(_, c) => CollationLabel::Explicit(*c),
            BExpr::ImplicitColl(_, c) => CollationLabel::Implicit(*c),
            BExpr::Col(..) | BExpr::Outer { .. } => CollationLabel::Implicit(Collation::DEFAULT),
            BExpr::Arith(_, a, b, _) => a.collation_label().combine(b.collation_label()),
            BExpr::Coalesce(v, _) => v.iter().fold(CollationLabel::Default, |acc, e| acc.combine(e.collation_label())),
            BExpr::Case { branches, else_result, .. } => branches
                .iter()
                .map(|(_, t)| t)
                .chain(else_result.as_deref())
                .fold(CollationLabel::Default, |acc, e| acc.combine(e.collation_label())),
            BExpr::Func { args, .. } => args.first().map_or(CollationLabel::Default, BExpr::collation_label),
            BExpr::Convert { expr, .. } => expr.collation_label(),
            _ => CollationLabel::Default,
        }
    }

    /// The collation the expression's strings compare, sort and group under when it is
    /// not the default: its explicit or implicit label's, or for a coercible-default one
    /// (literals, variables) `database`'s, the current database's collation.
    pub fn collation(&self, database: Collation) -> Option<Collation> {
        if !self.ty().is_character() {
            return None;
        }
        self.collation_label().collation(database)
    }

    pub fn null() -> BExpr {
        BExpr::Const(Value::Null, SqlType::Int)
    }

    /// Does the expression read the current row (as opposed to only constants,
    /// variables and outer rows)?
    pub fn uses_row(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            if matches!(e, BExpr::Col(..)) {
                found = true;
            }
        });
        found
    }

    /// The current-row columns the expression reads.
    pub fn columns(&self, out: &mut Vec<usize>) {
        self.visit(&mut |e| {
            if let BExpr::Col(i, _) = e {
                out.push(*i);
            }
        });
    }

    /// Is it free of subqueries and volatile functions (safe to evaluate once)?
    pub fn is_constant(&self) -> bool {
        let mut ok = true;
        self.visit(&mut |e| match e {
            BExpr::Col(..)
            | BExpr::Outer { .. }
            | BExpr::Subquery(..)
            | BExpr::Exists(..)
            | BExpr::InSubquery { .. }
            | BExpr::Quantified { .. }
            | BExpr::Sys(..)
            | BExpr::Udf { .. }
            | BExpr::NextValue { .. }
            | BExpr::CatalogFn { .. } => ok = false,
            BExpr::Func { f, .. } if functions::is_volatile(*f) => ok = false,
            _ => {}
        });
        ok
    }

    /// Could evaluating it observe the database or the session's last statements
    /// (subqueries, user and catalog functions, @@ functions)? A batched insert
    /// evaluates a batch's defaults, computed columns and checks before it writes the
    /// batch, which such an expression could tell from row-at-a-time.
    pub fn reads_state(&self) -> bool {
        let mut found = false;
        self.visit(&mut |e| {
            if matches!(
                e,
                BExpr::Subquery(..)
                    | BExpr::Exists(..)
                    | BExpr::InSubquery { .. }
                    | BExpr::Quantified { .. }
                    | BExpr::Sys(..)
                    | BExpr::Udf { .. }
                    | BExpr::NextValue { .. }
                    | BExpr::CatalogFn { .. }
                    | BExpr::Xml { .. }
            ) {
                found = true;
            }
        });
        found
    }

    /// Calls `f` on this node and every sub-expression (not into subquery plans).
    pub fn visit(&self, f: &mut dyn FnMut(&BExpr)) {
        f(self);
        match self {
            BExpr::Unary(_, a, _)
            | BExpr::Not(a)
            | BExpr::IsNull(a, _)
            | BExpr::Convert { expr: a, .. }
            | BExpr::Collated(a, _)
            | BExpr::CollationKey(a, _, _)
            | BExpr::ImplicitColl(a, _) => a.visit(f),
            BExpr::Arith(_, a, b, _)
            | BExpr::Cmp(_, a, b, _)
            | BExpr::CollCmp(_, a, b, _, _)
            | BExpr::AtTimeZone(a, b, _) => {
                a.visit(f);
                b.visit(f);
            }
            BExpr::And(v) | BExpr::Or(v) | BExpr::Coalesce(v, _) => v.iter().for_each(|e| e.visit(f)),
            BExpr::Func { args, .. } | BExpr::Udf { args, .. } | BExpr::CatalogFn { args, .. } => {
                args.iter().for_each(|e| e.visit(f))
            }
            BExpr::Like { expr, pattern, escape, .. } => {
                expr.visit(f);
                pattern.visit(f);
                if let Some(e) = escape {
                    e.visit(f);
                }
            }
            BExpr::InList { expr, list, .. } => {
                expr.visit(f);
                list.iter().for_each(|e| e.visit(f));
            }
            BExpr::Case { branches, else_result, .. } => {
                for (w, t) in branches {
                    w.visit(f);
                    t.visit(f);
                }
                if let Some(e) = else_result {
                    e.visit(f);
                }
            }
            BExpr::InSubquery { expr, .. } | BExpr::Quantified { expr, .. } => expr.visit(f),
            BExpr::Xml { target, outside, .. } => {
                target.visit(f);
                outside.iter().for_each(|e| e.visit(f));
            }
            _ => {}
        }
    }

    /// Rewrites column references through `map` (old index -> new expression).
    pub fn remap(&self, map: &dyn Fn(usize, SqlType) -> BExpr) -> BExpr {
        self.map_leaves(&|e| match e {
            BExpr::Col(i, t) => Some(map(*i, *t)),
            _ => None,
        })
    }

    /// Rebuilds the tree, replacing each node for which `leaf` returns Some.
    pub fn map_leaves(&self, leaf: &dyn Fn(&BExpr) -> Option<BExpr>) -> BExpr {
        if let Some(e) = leaf(self) {
            return e;
        }
        let map = leaf;
        let r = |e: &BExpr| Box::new(e.map_leaves(map));
        match self {
            BExpr::Unary(op, a, t) => BExpr::Unary(*op, r(a), *t),
            BExpr::Not(a) => BExpr::Not(r(a)),
            BExpr::IsNull(a, n) => BExpr::IsNull(r(a), *n),
            BExpr::Convert { expr, to, style, try_, code_page } => {
                BExpr::Convert { expr: r(expr), to: *to, style: *style, try_: *try_, code_page: *code_page }
            }
            BExpr::Arith(op, a, b, t) => BExpr::Arith(*op, r(a), r(b), *t),
            BExpr::Cmp(op, a, b, t) => BExpr::Cmp(*op, r(a), r(b), *t),
            BExpr::CollCmp(op, a, b, t, c) => BExpr::CollCmp(*op, r(a), r(b), *t, *c),
            BExpr::Collated(a, c) => BExpr::Collated(r(a), *c),
            BExpr::CollationKey(a, t, c) => BExpr::CollationKey(r(a), *t, *c),
            BExpr::ImplicitColl(a, c) => BExpr::ImplicitColl(r(a), *c),
            BExpr::AtTimeZone(a, b, t) => BExpr::AtTimeZone(r(a), r(b), *t),
            BExpr::And(v) => BExpr::And(v.iter().map(|e| e.map_leaves(map)).collect()),
            BExpr::Or(v) => BExpr::Or(v.iter().map(|e| e.map_leaves(map)).collect()),
            BExpr::Coalesce(v, t) => BExpr::Coalesce(v.iter().map(|e| e.map_leaves(map)).collect(), *t),
            BExpr::Func { f, args, ty } => {
                BExpr::Func { f: *f, args: args.iter().map(|e| e.map_leaves(map)).collect(), ty: *ty }
            }
            BExpr::Udf { db, object_id, args, ty } => BExpr::Udf {
                db: *db,
                object_id: *object_id,
                args: args.iter().map(|e| e.map_leaves(map)).collect(),
                ty: *ty,
            },
            BExpr::CatalogFn { name, args, ty } => {
                BExpr::CatalogFn { name: name.clone(), args: args.iter().map(|e| e.map_leaves(map)).collect(), ty: *ty }
            }
            BExpr::Like { expr, pattern, escape, negated, collation } => BExpr::Like {
                expr: r(expr),
                pattern: r(pattern),
                escape: escape.as_ref().map(|e| r(e)),
                negated: *negated,
                collation: *collation,
            },
            BExpr::InList { expr, list, negated, ty } => BExpr::InList {
                expr: r(expr),
                list: list.iter().map(|e| e.map_leaves(map)).collect(),
                negated: *negated,
                ty: *ty,
            },
            BExpr::Case { branches, else_result, ty } => BExpr::Case {
                branches: branches.iter().map(|(w, t)| (w.map_leaves(map), t.map_leaves(map))).collect(),
                else_result: else_result.as_ref().map(|e| r(e)),
                ty: *ty,
            },
            BExpr::InSubquery { expr, plan, negated, ty } => {
                BExpr::InSubquery { expr: r(expr), plan: plan.clone(), negated: *negated, ty: *ty }
            }
            BExpr::Quantified { expr, op, all, plan, ty } => {
                BExpr::Quantified { expr: r(expr), op: *op, all: *all, plan: plan.clone(), ty: *ty }
            }
            BExpr::Xml { method, target, query, outside, ty } => BExpr::Xml {
                method: *method,
                target: r(target),
                query: query.clone(),
                outside: outside.iter().map(|e| e.map_leaves(map)).collect(),
                ty: *ty,
            },
            other => other.clone(),
        }
    }

    /// Evaluates against `row`.
    pub fn eval(&self, row: &[Value], cx: &mut Cx) -> Result<Value, SqlError> {
        Ok(match self {
            BExpr::Const(v, _) => v.clone(),
            BExpr::Col(i, _) => row.get(*i).cloned().unwrap_or(Value::Null),
            BExpr::Outer { depth, index, .. } => {
                let n = cx.outer.len();
                cx.outer.get(n.wrapping_sub(*depth)).and_then(|r| r.get(*index)).cloned().unwrap_or(Value::Null)
            }
            BExpr::Var(slot, _) => cx.var(*slot),
            BExpr::Unary(op, a, t) => {
                let v = a.eval(row, cx)?;
                if matches!(op, UnaryOp::Not) {
                    return Ok(not(&v));
                }
                ops::unary(*op, &v, t)?
            }
            BExpr::Arith(op, a, b, t) => {
                let l = a.eval(row, cx)?;
                let r = b.eval(row, cx)?;
                ops::binary(*op, &l, &a.ty(), &r, &b.ty(), t)?
            }
            BExpr::Cmp(op, a, b, t) => {
                let l = a.eval(row, cx)?;
                if l.is_null() {
                    return Ok(Value::Null);
                }
                let r = b.eval(row, cx)?;
                compare_op(*op, &l, &a.ty(), &r, &b.ty(), t)?
            }
            BExpr::CollCmp(op, a, b, t, c) => {
                let l = a.eval(row, cx)?;
                if l.is_null() {
                    return Ok(Value::Null);
                }
                let r = b.eval(row, cx)?;
                compare_op_in(*op, &l, &a.ty(), &r, &b.ty(), t, Some(c))?
            }
            BExpr::Collated(a, _) | BExpr::ImplicitColl(a, _) => a.eval(row, cx)?,
            BExpr::CollationKey(a, ty, c) => {
                let v = a.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let v = if a.ty() == *ty { v } else { convert::convert(&v, &a.ty(), ty, None)? };
                let mut key = Vec::new();
                types::sort_key_in(&v, ty, Some(c), &mut key)?;
                Value::Binary(key)
            }
            BExpr::And(v) => {
                let mut unknown = false;
                for e in v {
                    match e.eval(row, cx)? {
                        Value::Bit(false) => return Ok(bit(false)),
                        Value::Null => unknown = true,
                        _ => {}
                    }
                }
                if unknown {
                    Value::Null
                } else {
                    bit(true)
                }
            }
            BExpr::Or(v) => {
                let mut unknown = false;
                for e in v {
                    match e.eval(row, cx)? {
                        Value::Bit(true) => return Ok(bit(true)),
                        Value::Null => unknown = true,
                        _ => {}
                    }
                }
                if unknown {
                    Value::Null
                } else {
                    bit(false)
                }
            }
            BExpr::Not(a) => not(&a.eval(row, cx)?),
            BExpr::IsNull(a, negated) => bit(a.eval(row, cx)?.is_null() != *negated),
            BExpr::Like { expr, pattern, escape, negated, collation } => {
                let s = expr.eval(row, cx)?;
                let p = pattern.eval(row, cx)?;
                let esc = match escape {
                    Some(e) => match e.eval(row, cx)? {
                        Value::Null => return Ok(Value::Null),
                        v => as_text(&v, &e.ty()).and_then(|s| s.chars().next()),
                    },
                    None => None,
                };
                if s.is_null() || p.is_null() {
                    return Ok(Value::Null);
                }
                let (Some(s), Some(p)) = (as_text(&s, &expr.ty()), as_text(&p, &pattern.ty())) else {
                    return Ok(Value::Null);
                };
                bit(ops::like_in(&s, &p, esc, collation.as_ref(), expr.ty().is_unicode())? != *negated)
            }
            BExpr::InList { expr, list, negated, ty } => {
                let v = expr.eval(row, cx)?;
                if v.is_null() {
                    return Ok(Value::Null);
                }
                let v = convert::convert(&v, &expr.ty(), ty, None)?;
                let mut unknown = false;
                for e in list {
                    let w = e.eval(row, cx)?;
                    if w.is_null() {
                        unknown = true;
                        continue;
                    }
                    let w = convert::convert(&w, &e.ty(), ty, None)?;
                    if ops::compare(&v, &w, ty) == Some(Ordering::Equal) {
                        return Ok(bit(!*negated));
                    }
                }
                if unknown {
                    Value::Null
                } else {
                    bit(*negated)
                }
            }
            BExpr::Case { branches, else_result, ty } => {
                for (w, t) in branches {
                    if is_true(&w.eval(row, cx)?) {
                        let v = t.eval(row, cx)?;
                        return convert::convert(&v, &t.ty(), ty, None);
                    }
                }
                match else_result {
                    Some(e) => {
                        let v = e.eval(row, cx)?;
                        convert::convert(&v, &e.ty(), ty, None)?
                    }
                    None => Value::Null,
                }
            }
            BExpr::Convert { expr, to, style, try_, code_page } => {
                let v = expr.eval(row, cx)?;
                if *try_ {
                    convert::try_convert_in(&v, &expr.ty(), to, *style, *code_page)?
                } else {
                    convert::convert_in(&v, &expr.ty(), to, *style, *code_page)?
                }
            }
            BExpr::Func { f, args, ty } => {
                let mut vals = Vec::with_capacity(args.len());
                let mut tys = Vec::with_capacity(args.len());
                for a in args {
                    vals.push(a.eval(row, cx)?);
                    tys.push(a.ty());
                }
                functions::call(*f, &vals, &tys, ty, &cx.fcx)?
            }
            BExpr::Coalesce(args, ty) => {
                for a in args {
                    let v = a.eval(row, cx)?;
                    if !v.is_null() {
                        return convert::convert(&v, &a.ty(), ty, None);
                    }
                }
                Value::Null
            }
            BExpr::Sys(f, _) => cx.sys_fn(f),
            BExpr::Subquery(plan, _) => {
                let rows = cx.run_subquery(plan, row, Some(2))?;
                match rows.len() {
                    0 => Value::Null,
                    1 => rows.into_iter().next().and_then(|r| r.into_iter().next()).unwrap_or(Value::Null),
                    _ => return Err(super::errors::subquery_multiple_rows()),
                }
            }
            BExpr::Exists(plan, negated) => {
                let rows = cx.run_subquery(plan, row, Some(1))?;
                bit(rows.is_empty() == *negated)
            }
            BExpr::InSubquery { expr, plan, negated, ty } => {
                let v = expr.eval(row, cx)?;
                if v.is_null() {
                    // NULL is in no empty set (and NOT IN an empty one): UNKNOWN only when
                    // there are rows.
                    let any = !cx.run_subquery(plan, row, Some(1))?.is_empty();
                    return Ok(if any { Value::Null } else { bit(*negated) });
                }
                let v = convert::convert(&v, &expr.ty(), ty, None)?;
                let sub_ty = plan.columns().first().map(|c| c.ty).unwrap_or(*ty);
                let rows = cx.run_subquery(plan, row, None)?;
                let mut unknown = false;
                for r in rows {
                    let w = r.into_iter().next().unwrap_or(Value::Null);
                    if w.is_null() {
                        unknown = true;
                        continue;
                    }
                    let w = convert::convert(&w, &sub_ty, ty, None)?;
                    if ops::compare(&v, &w, ty) == Some(Ordering::Equal) {
                        return Ok(bit(!*negated));
                    }
                }
                if unknown {
                    Value::Null
                } else {
                    bit(*negated)
                }
            }
            BExpr::Quantified { expr, op, all, plan, ty } => {
                let v = expr.eval(row, cx)?;
                let sub_ty = plan.columns().first().map(|c| c.ty).unwrap_or(*ty);
                let rows = cx.run_subquery(plan, row, None)?;
                let mut unknown = false;
                for r in rows {
                    let w = r.into_iter().next().unwrap_or(Value::Null);
                    let res = if v.is_null() || w.is_null() {
                        Value::Null
                    } else {
                        compare_op(*op, &v, &expr.ty(), &w, &sub_ty, ty)?
                    };
                    match (res, *all) {
                        (Value::Bit(false), true) => return Ok(bit(false)),
                        (Value::Bit(true), false) => return Ok(bit(true)),
                        (Value::Null, _) => unknown = true,
                        _ => {}
                    }
                }
                if unknown {
                    Value::Null
                } else {
                    bit(*all)
                }
            }
            BExpr::AtTimeZone(a, z, ty) => {
                let v = a.eval(row, cx)?;
                let zone = z.eval(row, cx)?;
                if v.is_null() || zone.is_null() {
                    return Ok(Value::Null);
                }
                let zone = as_text(&zone, &z.ty()).unwrap_or_default();
                let _ = ty;
                at_time_zone(&v, &a.ty(), &zone)?
            }
            BExpr::NextValue { db, object_id, .. } => cx.next_sequence_value(*db, *object_id)?,
            BExpr::Udf { db, object_id, args, ty } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    vals.push((a.eval(row, cx)?, a.ty()));
                }
                let v = cx.call_udf(*db, *object_id, vals)?;
                convert::convert(&v, &v_type(&v, ty), ty, None)?
            }
            BExpr::CatalogFn { name, args, .. } => {
                let mut vals = Vec::with_capacity(args.len());
                for a in args {
                    let v = a.eval(row, cx)?;
                    // The lookups take ids as integers and names as strings.
                    vals.push(match (&v, a.ty()) {
                        (Value::Null, _) => Value::Null,
                        (_, t) if t.is_character() => Value::String(as_text(&v, &t).unwrap_or_default()),
                        _ => v,
                    });
                }
                super::query::catalog_function(cx, name, &vals)?.0
            }
            BExpr::Xml { method, target, query, outside, ty } => {
                let v = target.eval(row, cx)?;
                let Some(text) = as_text(&v, &target.ty()) else { return Ok(Value::Null) };
                let mut vals = Vec::with_capacity(outside.len());
                for o in outside {
                    let v = o.eval(row, cx)?;
                    vals.push(as_text(&v, &o.ty()));
                }
                xml_method(*method, &text, query, &vals, ty)?
            }
        })
    }
}

/// Runs an xml method over a document's text.
fn xml_method(
    method: XmlMethod,
    text: &str,
    query: &xml::XQuery,
    outside: &[Option<String>],
    ty: &SqlType,
) -> Result<Value, SqlError> {
    let doc = xml::parse(text)?;
    let ev = xml::Eval { doc: &doc, outside };
    let items = ev.eval(&query.expr, &xml::Item::Node(doc.context), 1, 1);
    Ok(match method {
        XmlMethod::Exist => bit(!items.is_empty()),
        XmlMethod::Query => Value::String(ev.serialize(&items)),
        XmlMethod::Value => match items.first() {
            None => Value::Null,
            Some(it) => {
                let s = ev.string_of(it);
                convert::convert(
                    &Value::String(xml::cast_text(&s, ty)),
                    &SqlType::NVarChar { len: types::Length::Max },
                    ty,
                    None,
                )?
            }
        },
    })
}

fn v_type(_v: &Value, ty: &SqlType) -> SqlType {
    *ty
}

pub fn is_true(v: &Value) -> bool {
    matches!(v, Value::Bit(true))
}

fn not(v: &Value) -> Value {
    match v {
        Value::Bit(b) => bit(!b),
        _ => Value::Null,
    }
}

/// A value's text when it is a string (or converts to one).
pub fn as_text(v: &Value, ty: &SqlType) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => match convert::convert(other, ty, &SqlType::NVarChar { len: types::Length::Max }, None) {
            Ok(Value::String(s)) => Some(s),
            _ => None,
        },
    }
}

/// `l op r` for a comparison operator, both sides converted to `ty`.
pub fn compare_op(
    op: BinaryOp,
    l: &Value,
    lt: &SqlType,
    r: &Value,
    rt: &SqlType,
    ty: &SqlType,
) -> Result<Value, SqlError> {
    compare_op_in(op, l, lt, r, rt, ty, None)
}

/// [`compare_op`] under a collation (None: the default).
pub fn compare_op_in(
    op: BinaryOp,
    l: &Value,
    lt: &SqlType,
    r: &Value,
    rt: &SqlType,
    ty: &SqlType,
    collation: Option<&Collation>,
) -> Result<Value, SqlError> {
    if l.is_null() || r.is_null() {
        return Ok(Value::Null);
    }
    let l = if lt == ty {
        std::borrow::Cow::Borrowed(l)
    } else {
        std::borrow::Cow::Owned(convert::convert(l, lt, ty, None)?)
    };
    let r = if rt == ty {
        std::borrow::Cow::Borrowed(r)
    } else {
        std::borrow::Cow::Owned(convert::convert(r, rt, ty, None)?)
    };
    let Some(ord) = ops::compare_in(&l, &r, ty, collation) else {
        return Ok(Value::Null);
    };
    Ok(bit(match op {
        BinaryOp::Eq => ord == Ordering::Equal,
        BinaryOp::NotEq => ord != Ordering::Equal,
        BinaryOp::Lt => ord == Ordering::Less,
        BinaryOp::Gt => ord == Ordering::Greater,
        BinaryOp::LtEq => ord != Ordering::Greater,
        BinaryOp::GtEq => ord != Ordering::Less,
        BinaryOp::NotLt => ord != Ordering::Less,
        BinaryOp::NotGt => ord != Ordering::Greater,
        _ => return Err(SqlError::new(102, 15, 1, "Incorrect syntax near the comparison.")),
    }))
}

/// `x AT TIME ZONE 'zone'`: delegates to the scalar library once it provides the zone
/// table; until then only UTC is known.
fn at_time_zone(v: &Value, ty: &SqlType, zone: &str) -> Result<Value, SqlError> {
    if !zone.eq_ignore_ascii_case("UTC") {
        return Err(SqlError::new(
            9820,
            16,
            1,
            format!("The time zone parameter '{zone}' provided to AT TIME ZONE clause is invalid."),
        ));
    }
    let scale = ty.time_scale().unwrap_or(7);
    let to = SqlType::DateTimeOffset { scale };
    convert::convert(v, ty, &to, None)
}

/// SQL Server's collation labels (docs/architecture.md "Collations").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CollationLabel {
    /// Literals, variables, parameters and most function results.
    Default,
    /// A column reference.
    Implicit(Collation),
    /// A COLLATE clause.
    Explicit(Collation),
    /// Two different implicit labels combined (`cs_col + ci_col`): no collation.
    NoCollation,
}

impl CollationLabel {
    /// The collation strings with this label compare, sort and group under, when it is
    /// not the default: the label's, or `database`'s (the current database's) for a
    /// coercible-default one.
    pub fn collation(self, database: Collation) -> Option<Collation> {
        let c = match self {
            CollationLabel::Explicit(c) | CollationLabel::Implicit(c) => c,
            CollationLabel::Default => database,
            CollationLabel::NoCollation => return None,
        };
        (c != Collation::DEFAULT).then_some(c)
    }

    /// The label of an expression combining two strings: explicit beats implicit beats
    /// coercible-default; two different implicit ones give no collation. (Two different
    /// explicit ones are an error the comparison reports; here the first wins.)
    pub fn combine(self, other: CollationLabel) -> CollationLabel {
        use CollationLabel::*;
        match (self, other) {
            (Explicit(a), _) => Explicit(a),
            (_, Explicit(b)) => Explicit(b),
            (NoCollation, _) | (_, NoCollation) => NoCollation,
            (Implicit(a), Implicit(b)) if a != b => NoCollation,
            (Implicit(a), _) | (Default, Implicit(a)) => Implicit(a),
            (Default, Default) => Default,
        }
    }
}
