//! The binder and planner for queries: resolves names against scopes and the catalog,
//! types every expression, and builds a [`Plan`].
//!
//! Scopes: the row a query's expressions see (the FROM clause's columns, or after GROUP
//! BY the grouping keys and aggregates). `Binder::outer` holds the scopes of enclosing
//! queries, each matching a row the executor pushes at run time (the row a subquery is
//! evaluated for, the left row of an APPLY); a name found there becomes
//! `BExpr::Outer { depth }`.
//!
//! Planning, in SQL's logical order: FROM (left-deep joins in written order), WHERE
//! (conjuncts pushed into scans, equi-joins turned into hash joins, index seeks on
//! leading key columns), GROUP BY/aggregates (hash aggregate), HAVING, window functions,
//! the select list (with hidden ORDER BY columns), DISTINCT, ORDER BY, TOP/OFFSET.

use std::collections::HashMap;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::errors;
use super::expr::{BExpr, CollationLabel, SysFn};
use super::plan::*;

mod joins;
mod select;

use crate::ast::*;
use crate::lexer::TokenKind;
use crate::scalar::aggregate::{self, AggKind};
use crate::scalar::{convert, functions, ops};
pub use joins::*;
pub use select::*;

#[derive(Debug, Clone)]
pub struct ScopeCol {
    /// The table alias or name the column can be qualified with (None: unqualifiable).
    pub table: Option<String>,
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    /// How messages name the column's table when it differs from `table`: the name as
    /// written for an unaliased multi-part name (`dbo.sales` in Msg 8120).
    pub exposed: Option<String>,
    /// The column's collation when not the default: a reference to it carries it as
    /// its implicit label ([`BExpr::ImplicitColl`]).
    pub collation: Option<types::Collation>,
}

#[derive(Debug, Clone, Default)]
pub struct Scope {
    pub cols: Vec<ScopeCol>,
}

impl Scope {
    pub fn from_cols(table: Option<&str>, cols: &[OutCol]) -> Scope {
        Scope {
            cols: cols
                .iter()
                .map(|c| ScopeCol {
                    table: table.map(str::to_string),
                    name: c.name.clone(),
                    ty: c.ty,
                    nullable: c.nullable,
                    exposed: None,
                    collation: c.collation,
                })
                .collect(),
        }
    }

    fn append(&mut self, other: Scope) {
        self.cols.extend(other.cols);
    }

    /// Finds a column by its name parts (`[col]`, `[t, col]`, `[s, t, col]`, ...).
    fn find(&self, parts: &[Ident]) -> Result<Option<usize>, SqlError> {
        let Some(col) = parts.last() else {
            return Ok(None);
        };
        let table = if parts.len() >= 2 { Some(&parts[parts.len() - 2].value) } else { None };
        let mut found = None;
        for (i, c) in self.cols.iter().enumerate() {
            if !c.name.eq_ignore_ascii_case(&col.value) {
                continue;
            }
            if let Some(t) = table {
                if !c.table.as_deref().is_some_and(|ct| ct.eq_ignore_ascii_case(t)) {
                    continue;
                }
            }
            if found.is_some() {
                return Err(errors::ambiguous_column(&col.value));
            }
            found = Some(i);
        }
        Ok(found)
    }
}

/// A CTE visible to the query being bound.
#[derive(Clone)]
enum CteDef {
    Query(Cte),
    /// The CTE itself, inside its recursive member.
    WorkTable {
        id: usize,
        cols: Vec<OutCol>,
    },
}

/// Post-GROUP BY binding state.
struct AggState {
    /// GROUP BY expressions (printed, for matching) and their positions.
    keys: Vec<String>,
    key_exprs: Vec<BExpr>,
    aggs: Vec<AggSpec>,
    agg_sources: Vec<String>,
    input: Scope,
}

pub struct Binder<'b, 'c> {
    pub cx: &'b mut Cx<'c>,
    pub outer: Vec<Scope>,
    ctes: Vec<HashMap<String, CteDef>>,
    agg: Option<AggState>,
    /// Window functions collected while binding a select list.
    windows: Option<(usize, Vec<WindowFn>)>,
    /// Inline TVF parameters: name -> (argument, outer chain length at the call).
    params: Vec<HashMap<String, (Expr, usize)>>,
    next_work_table: usize,
    /// The current database's collation, once asked ([`Binder::database_collation`]).
    db_collation: Option<types::Collation>,
}

fn is_aggregate_call(f: &FunctionCall) -> bool {
    f.over.is_none() && f.name.parts.len() == 1 && AggKind::from_name(&f.name.name().value).is_some()
}

/// Does the expression contain an aggregate (not inside a subquery)?
pub fn contains_aggregate(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if let ExprKind::Function(f) = &x.kind {
            if is_aggregate_call(f) {
                found = true;
            }
        }
    });
    found
}

fn contains_subquery(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| {
        if matches!(
            x.kind,
            ExprKind::Subquery(_) | ExprKind::Exists(_) | ExprKind::InSubquery { .. } | ExprKind::Quantified { .. }
        ) {
            found = true;
        }
    });
    found
}

pub(super) fn contains_window(e: &Expr) -> bool {
    let mut found = false;
    walk_expr(e, &mut |x| match &x.kind {
        ExprKind::Function(f) if f.over.is_some() => found = true,
        ExprKind::NextValueFor { over: Some(_), .. } => found = true,
        _ => {}
    });
    found
}

/// The value of a catalog function (DB_ID, DB_NAME, OBJECT_ID, OBJECT_NAME, SCHEMA_NAME,
/// SERVERPROPERTY, ...) for argument values (strings for names, integers for ids).
pub fn catalog_function(cx: &mut Cx, name: &str, vals: &[Value]) -> Result<(Value, SqlType), SqlError> {
    let nv = |n: u16| SqlType::NVarChar { len: types::Length::Bounded(n) };
    let text = |i: usize| -> Option<String> {
        match vals.get(i) {
            Some(Value::String(s)) => Some(s.clone()),
            _ => None,
        }
    };
    let int = |i: usize| -> Option<i64> { vals.get(i).and_then(Value::integer_part).map(|v| v as i64) };
    let v: (Value, SqlType) = match name {
        "DB_ID" => match text(0) {
            Some(n) => (cx.db_id_by_name(&n).map(|i| Value::SmallInt(i)).unwrap_or(Value::Null), SqlType::SmallInt),
            None if vals.is_empty() => (Value::SmallInt(cx.state.database), SqlType::SmallInt),
            None => (Value::Null, SqlType::SmallInt),
        },
        "DB_NAME" => {
            let id = if vals.is_empty() { Some(i64::from(cx.state.database)) } else { int(0) };
            let n = id.and_then(|i| cx.db_name(i as i16));
            (n.map(Value::String).unwrap_or(Value::Null), nv(128))
        }
        "OBJECT_ID" => {
            let id = match text(0) {
                Some(n) => cx.object_id_by_name(&n)?,
                None => None,
            };
            (id.map(Value::Int).unwrap_or(Value::Null), SqlType::Int)
        }
        "OBJECT_NAME" => {
            let db = int(1).map(|d| d as i16).unwrap_or(cx.state.database);
            let n = int(0).and_then(|id| cx.object_name(db, id as i32));
            (n.map(Value::String).unwrap_or(Value::Null), nv(128))
        }
        "SCHEMA_NAME" => {
            let id = if vals.is_empty() { Some(1) } else { int(0) };
            let n = id.and_then(|id| cx.schema_name(cx.state.database, id as i32));
            (n.map(Value::String).unwrap_or(Value::Null), nv(128))
        }
        "SCHEMA_ID" => {
            let n = text(0).unwrap_or_else(|| "dbo".into());
            let id = cx.schema_id(cx.state.database, &n);
            (id.map(Value::Int).unwrap_or(Value::Null), SqlType::Int)
        }
        "SERVERPROPERTY" => {
            (property_variant(super::context::server_property(&text(0).unwrap_or_default(), cx))?, SqlType::Variant)
        }
        "DATABASEPROPERTYEX" => {
            let db = text(0).and_then(|n| cx.db_id_by_name(&n));
            let v = match db {
                Some(db) => super::context::database_property(db, &text(1).unwrap_or_default(), cx),
                None => Value::Null,
            };
            (property_variant(v)?, SqlType::Variant)
        }
        "SUSER_SNAME" | "SUSER_NAME" | "ORIGINAL_LOGIN" => (Value::String(cx.login_name()), nv(128)),
        "USER_NAME" => (Value::String("dbo".into()), nv(128)),
        "HOST_NAME" => (Value::String(cx.state.host_name.clone()), nv(128)),
        "APP_NAME" => (Value::String(cx.state.app_name.clone()), nv(128)),
        "IS_SRVROLEMEMBER" => (Value::Int(i32::from(cx.is_sysadmin())), SqlType::Int),
        "HAS_DBACCESS" => (Value::Int(1), SqlType::Int),
        "IDENT_CURRENT" | "IDENT_SEED" | "IDENT_INCR" => {
            let t = match text(0) {
                Some(n) => cx.resolve_table_by_text(&n).ok().flatten(),
                None => None,
            };
            let v = match t.and_then(|t| t.identity.clone().map(|i| (t, i))) {
                Some((t, i)) => match name {
                    "IDENT_SEED" => Value::decimal(i.seed, 38, 0)?,
                    "IDENT_INCR" => Value::decimal(i.increment, 38, 0)?,
                    _ => {
                        let cur = *t.counters.identity.lock();
                        match cur {
                            Some(Some(v)) => Value::decimal(v, 38, 0)?,
                            _ => Value::decimal(i.last.unwrap_or(i.seed), 38, 0)?,
                        }
                    }
                },
                None => Value::Null,
            };
            (v, SqlType::Numeric { precision: 38, scale: 0 })
        }
        "COL_LENGTH" => {
            let t = match text(0) {
                Some(n) => cx.resolve_table_by_text(&n).ok().flatten(),
                None => None,
            };
            let v = match (t, text(1)) {
                (Some(t), Some(c)) => match t.column_index(&c) {
                    Some(i) => {
                        let ty = t.columns[i].ty;
                        Value::SmallInt(ty.fixed_storage_len().map(|n| n as i16).unwrap_or(if ty.is_max() {
                            -1
                        } else if ty.is_legacy_lob() {
                            // The text pointer's 16 bytes, as sys.columns.max_length.
                            types::sqltype::type_info(&ty).1
                        } else {
                            ty.max_len() as i16
                        }))
                    }
                    None => Value::Null,
                },
                _ => Value::Null,
            };
            (v, SqlType::SmallInt)
        }
        "OBJECTPROPERTY" => (Value::Null, SqlType::Int),
        "OBJECT_DEFINITION" => {
            let def = int(0).and_then(|id| {
                let c = cx.catalog(cx.state.database).ok()?;
                let g = c.inner.read();
                g.objects.get(&(id as i32)).and_then(|o| o.body.module()).map(|m| m.definition.clone())
            });
            (def.map(Value::String).unwrap_or(Value::Null), SqlType::NVarChar { len: types::Length::Max })
        }
        "COLLATIONPROPERTY" => match (text(0), text(1)) {
            (Some(c), Some(p)) => {
                (property_variant(crate::scalar::functions::collation_property(&c, &p))?, SqlType::Variant)
            }
            _ => (Value::Null, SqlType::Variant),
        },
        _ => return Err(errors::unknown_function(name)),
    };
    Ok(v)
}

/// A SERVERPROPERTY, DATABASEPROPERTYEX or COLLATIONPROPERTY answer as the sql_variant
/// SQL Server returns: text as nvarchar(128) (nvarchar(4000) when longer), numbers as
/// their own type.
fn property_variant(v: Value) -> Result<Value, SqlError> {
    let ty = match &v {
        Value::String(s) if types::ucs2::len(&s) <= 128 => SqlType::NVarChar { len: types::Length::Bounded(128) },
        Value::String(_) => SqlType::NVarChar { len: types::Length::Bounded(4000) },
        v => crate::scalar::value_type(v),
    };
    Value::variant(v, &ty)
}

pub use crate::ast::{walk_expr, walk_expr_mut};

pub fn literal_type_value(l: &Literal) -> Result<(Value, SqlType), SqlError> {
    match l {
        Literal::Null => Ok((Value::Null, SqlType::Int)),
        Literal::Integer(s) => integer_literal(s),
        Literal::Decimal(s) => decimal_literal(s),
        Literal::Float(s) => Ok((types::parse(s, &SqlType::Float)?, SqlType::Float)),
        Literal::Money(s) => Ok((types::parse(s, &SqlType::Money)?, SqlType::Money)),
        Literal::String { value, unicode } => Ok(string_literal(value.clone(), *unicode)),
        Literal::Binary(b) => Ok(binary_literal(b.clone())),
    }
}

/// [`literal_type_value`] of a literal token (the token the parser makes that literal
/// of, NULL included: see `parser::literal_of_token`), taking its string or bytes
/// without copying them. `text` is the token's text. None for a token that is no
/// literal.
pub(crate) fn token_type_value(kind: TokenKind, text: &str) -> Option<Result<(Value, SqlType), SqlError>> {
    Some(match kind {
        TokenKind::Integer => integer_literal(text),
        TokenKind::Decimal => decimal_literal(text),
        TokenKind::Float => types::parse(text, &SqlType::Float).map(|v| (v, SqlType::Float)),
        // A money token is `$` (one byte) followed by the number.
        TokenKind::Money => types::parse(text.get(1..).unwrap_or(""), &SqlType::Money).map(|v| (v, SqlType::Money)),
        TokenKind::String { value, unicode } => Ok(string_literal(value, unicode)),
        TokenKind::Binary(b) => Ok(binary_literal(b)),
        TokenKind::Keyword if text.eq_ignore_ascii_case("NULL") => Ok((Value::Null, SqlType::Int)),
        _ => return None,
    })
}

/// Digits: int, else bigint, else numeric of their count.
pub(super) fn integer_literal(s: &str) -> Result<(Value, SqlType), SqlError> {
    // Up to nine digits always make an int: summed at once (a loading script's keys).
    if (1..=9).contains(&s.len()) {
        let mut n = 0i32;
        for b in s.bytes() {
            let d = b.wrapping_sub(b'0');
            if d > 9 {
                n = -1;
                break;
            }
            n = n * 10 + i32::from(d);
        }
        if n >= 0 {
            return Ok((Value::Int(n), SqlType::Int));
        }
    }
    if let Ok(n) = s.parse::<i32>() {
        Ok((Value::Int(n), SqlType::Int))
    } else if let Ok(n) = s.parse::<i64>() {
        Ok((Value::BigInt(n), SqlType::BigInt))
    } else {
        let p = s.trim_start_matches('0').len().clamp(1, 38) as u8;
        let ty = SqlType::Decimal { precision: p, scale: 0 };
        Ok((types::parse(s, &ty)?, ty))
    }
}

/// A number with a point: numeric of its digits.
fn decimal_literal(s: &str) -> Result<(Value, SqlType), SqlError> {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let int = int.trim_start_matches('0');
    let scale = frac.len().min(38) as u8;
    let p = (int.len() + frac.len()).clamp(1, 38) as u8;
    let p = p.max(scale).max(1);
    let ty = SqlType::Decimal { precision: p, scale };
    Ok((types::parse(s, &ty)?, ty))
}

/// A string: varchar or nvarchar of its length (max past 8000 bytes / 4000 characters).
pub(super) fn string_literal(value: String, unicode: bool) -> (Value, SqlType) {
    let n = types::value::text_len(&value, unicode);
    let len = if n > if unicode { 4000 } else { 8000 } {
        types::Length::Max
    } else {
        types::Length::Bounded(n.max(1) as u16)
    };
    let ty = if unicode { SqlType::NVarChar { len } } else { SqlType::VarChar { len } };
    (Value::String(value), ty)
}

fn binary_literal(b: Vec<u8>) -> (Value, SqlType) {
    let n = b.len().clamp(1, 8000) as u16;
    let len = if b.len() > 8000 { types::Length::Max } else { types::Length::Bounded(n) };
    (Value::Binary(b), SqlType::VarBinary { len })
}

pub fn resolve_type(dt: &DataType) -> Result<SqlType, SqlError> {
    let name = &dt.name.name().value;
    if dt.name.parts.len() > 1 && !dt.name.schema().is_some_and(|s| s.eq_ignore_case("sys")) {
        return Err(SqlError::new(
            2715,
            16,
            6,
            format!("Column, parameter, or variable #1: Cannot find data type {name}."),
        ));
    }
    match name.to_ascii_lowercase().as_str() {
        "sysname" => Ok(SqlType::NVarChar { len: types::Length::Bounded(128) }),
        "rowversion" | "timestamp" => Ok(SqlType::Binary { len: 8 }),
        _ => SqlType::from_name(name, &dt.args),
    }
}

fn int_literal_as_decimal(e: BExpr, other: &BExpr) -> BExpr {
    match (&e, other.ty()) {
        (BExpr::Const(Value::Int(n), SqlType::Int), SqlType::Decimal { .. } | SqlType::Numeric { .. }) => {
            let digits = n.unsigned_abs().to_string().len().max(1) as u8;
            BExpr::Const(
                Value::Decimal { value: i128::from(*n), precision: digits, scale: 0 },
                SqlType::Numeric { precision: digits, scale: 0 },
            )
        }
        _ => e,
    }
}

fn is_literal_int(e: &Expr) -> Option<i64> {
    match &e.kind {
        ExprKind::Literal(Literal::Integer(s)) => s.parse().ok(),
        _ => None,
    }
}

/// The conjuncts of an AND tree.
pub fn conjuncts(e: BExpr, out: &mut Vec<BExpr>) {
    match e {
        BExpr::And(v) => v.into_iter().for_each(|x| conjuncts(x, out)),
        other => out.push(other),
    }
}

pub fn and_all(mut v: Vec<BExpr>) -> Option<BExpr> {
    match v.len() {
        0 => None,
        1 => v.pop(),
        _ => Some(BExpr::And(v)),
    }
}

fn has_subquery(e: &BExpr) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        if matches!(x, BExpr::Subquery(..) | BExpr::Exists(..) | BExpr::InSubquery { .. } | BExpr::Quantified { .. }) {
            found = true;
        }
    });
    found
}

fn shift(e: &BExpr, by: isize) -> BExpr {
    e.remap(&|i, t| BExpr::Col((i as isize + by) as usize, t))
}

/// The name SQL Server gives an expression column: the column's own name for a bare
/// column reference, else none.
fn derived_name(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Column(n) => n.name().value.clone(),
        _ => String::new(),
    }
}

impl<'b, 'c> Binder<'b, 'c> {
    pub fn new(cx: &'b mut Cx<'c>) -> Binder<'b, 'c> {
        Binder {
            cx,
            outer: Vec::new(),
            ctes: Vec::new(),
            agg: None,
            windows: None,
            params: Vec::new(),
            next_work_table: 1,
            db_collation: None,
        }
    }

    /// The current database's collation (coercible-default strings compare under it),
    /// looked up once per binder.
    pub fn database_collation(&mut self) -> types::Collation {
        *self.db_collation.get_or_insert_with(|| self.cx.db_collation())
    }

    // ---------------------------------------------------------------------------------
    // Expressions
    // ---------------------------------------------------------------------------------

    pub fn bind_expr(&mut self, e: &Expr, scope: &Scope) -> Result<BExpr, SqlError> {
        crate::stack::check()?;
        // After GROUP BY: grouping keys and aggregates become columns of the grouped row.
        if self.agg.is_some() {
            let text = e.to_string().to_ascii_lowercase();
            let db = self.database_collation();
            if let Some(agg) = &self.agg {
                if let Some(i) = agg.keys.iter().position(|k| *k == text) {
                    return Ok(grouped_key(i, &agg.key_exprs[i], db));
                }
            }
            if let ExprKind::Function(f) = &e.kind {
                if is_aggregate_call(f) {
                    return self.bind_aggregate(f, &text);
                }
            }
            // The same grouping key written differently (`t.c` for `c`): compare the
            // bound forms over the input rows.
            if !contains_aggregate(e) && !contains_subquery(e) {
                let agg = self.agg.take();
                let input = agg.as_ref().map(|a| a.input.clone()).unwrap_or_default();
                let bound = self.bind_expr(e, &input);
                self.agg = agg;
                if let (Ok(b), Some(agg)) = (bound, &self.agg) {
                    if b.uses_row() {
                        let key = format!("{b:?}");
                        if let Some(i) = agg.key_exprs.iter().position(|k| format!("{k:?}") == key) {
                            return Ok(grouped_key(i, &agg.key_exprs[i], db));
                        }
                    }
                }
            }
            if let ExprKind::Column(name) = &e.kind {
                // Not a grouping key: legal only as an outer reference.
                let agg = self.agg.as_ref().map(|a| a.input.clone()).unwrap_or_default();
                if let Some(i) = agg.find(&name.parts)? {
                    // Named by its table's exposed name, as SQL Server does.
                    let c = &agg.cols[i];
                    let mut parts: Vec<Ident> = c
                        .exposed
                        .as_ref()
                        .or(c.table.as_ref())
                        .map(|t| t.split('.').map(Ident::plain).collect())
                        .unwrap_or_default();
                    parts.push(name.name().clone());
                    return Err(errors::not_in_group_by(&parts));
                }
            }
        }
        Ok(match &e.kind {
            ExprKind::Literal(l) => {
                let (v, t) = literal_type_value(l)?;
                BExpr::Const(v, t)
            }
            ExprKind::Column(name) => match self.bind_column(name, scope) {
                Ok(x) => x,
                // `g.STX`, `t.g.STSrid`: a property of a geometry or geography column.
                Err(err) if name.parts.len() >= 2 && super::clr::is_property(&name.name().value) => {
                    let mut parts = name.parts.clone();
                    let prop = parts.pop().unwrap_or_else(|| Ident::plain(""));
                    let target = Expr { kind: ExprKind::Column(ObjectName { parts }), span: e.span };
                    match self.bind_expr(&target, scope) {
                        Ok(t) if t.ty().is_spatial() => super::clr::bind_property(t, &prop)?,
                        _ => return Err(err),
                    }
                }
                Err(err) => return Err(err),
            },
            ExprKind::Variable(name) => self.bind_variable(name, scope)?,
            ExprKind::SystemVariable(name) => self.bind_system_variable(name)?,
            ExprKind::Niladic(n) => match n {
                Niladic::CurrentTimestamp => self.call_builtin("GETDATE", Vec::new(), &[])?,
                _ => BExpr::Const(
                    Value::String(if matches!(n, Niladic::SystemUser) { self.cx.login_name() } else { "dbo".into() }),
                    SqlType::NVarChar { len: types::Length::Bounded(128) },
                ),
            },
            ExprKind::Default => return Err(SqlError::new(102, 15, 1, "Incorrect syntax near the keyword 'DEFAULT'.")),
            ExprKind::Unary { op, expr } => {
                let a = self.bind_expr(expr, scope)?;
                match op {
                    UnaryOp::Not => BExpr::Not(Box::new(a)),
                    UnaryOp::Plus => a,
                    _ => {
                        // -2147483648 is an int literal in SQL Server.
                        if let (UnaryOp::Minus, BExpr::Const(Value::BigInt(2_147_483_648), _)) = (op, &a) {
                            return Ok(BExpr::Const(Value::Int(i32::MIN), SqlType::Int));
                        }
                        let t = ops::unary_type(*op, &a.ty())?;
                        if let (UnaryOp::Minus, BExpr::Const(v, _)) = (op, &a) {
                            if !v.is_null() {
                                if let Ok(v) = ops::unary(*op, v, &t) {
                                    return Ok(BExpr::Const(v, t));
                                }
                            }
                        }
                        BExpr::Unary(*op, Box::new(a), t)
                    }
                }
            }
            ExprKind::Binary { op, left, right } => {
                let l = self.bind_expr(left, scope)?;
                let r = self.bind_expr(right, scope)?;
                self.binary(*op, l, r)?
            }
            ExprKind::Like { expr, pattern, escape, negated } => {
                let expr = self.bind_expr(expr, scope)?;
                let pattern = self.bind_expr(pattern, scope)?;
                let db = self.database_collation();
                let collation = operation_collation(&expr, &pattern, "like", db)?;
                BExpr::Like {
                    expr: Box::new(expr),
                    pattern: Box::new(pattern),
                    escape: match escape {
                        Some(e) => Some(Box::new(self.bind_expr(e, scope)?)),
                        None => None,
                    },
                    negated: *negated,
                    collation,
                }
            }
            ExprKind::Between { expr, low, high, negated } => {
                let x = self.bind_expr(expr, scope)?;
                let lo = self.bind_expr(low, scope)?;
                let hi = self.bind_expr(high, scope)?;
                let a = self.binary(BinaryOp::GtEq, x.clone(), lo)?;
                let b = self.binary(BinaryOp::LtEq, x, hi)?;
                let both = BExpr::And(vec![a, b]);
                if *negated {
                    BExpr::Not(Box::new(both))
                } else {
                    both
                }
            }
            ExprKind::InList { expr, list, negated } => {
                let x = self.bind_expr(expr, scope)?;
                let mut ty = x.ty();
                let mut items = Vec::with_capacity(list.len());
                for i in list {
                    let b = self.bind_expr(i, scope)?;
                    ty = ops::comparison_type(&ty, &b.ty())?;
                    items.push(b);
                }
                if ty.is_character() && {
                    let db = self.database_collation();
                    items.iter().chain([&x]).any(|e| e.collation(db).is_some())
                } {
                    // Under a collation other than the default: one collated comparison
                    // per item.
                    let mut eqs = Vec::with_capacity(items.len());
                    for i in items {
                        eqs.push(self.binary(BinaryOp::Eq, x.clone(), i)?);
                    }
                    let any = BExpr::Or(eqs);
                    return Ok(if *negated { BExpr::Not(Box::new(any)) } else { any });
                }
                BExpr::InList { expr: Box::new(x), list: items, negated: *negated, ty }
            }
            ExprKind::InSubquery { expr, query, negated } => {
                let x = self.bind_expr(expr, scope)?;
                let plan = self.subquery(query, scope)?;
                let cols = plan.columns();
                if cols.len() != 1 {
                    return Err(errors::subquery_one_column());
                }
                let ty = ops::comparison_type(&x.ty(), &cols[0].ty)?;
                let plan = super::index_spool::in_subquery_spool(&x, plan, ty);
                BExpr::InSubquery { expr: Box::new(x), plan: Arc::new(plan), negated: *negated, ty }
            }
            ExprKind::Quantified { left, op, quantifier, query } => {
                let x = self.bind_expr(left, scope)?;
                let plan = self.subquery(query, scope)?;
                let cols = plan.columns();
                if cols.len() != 1 {
                    return Err(errors::subquery_one_column());
                }
                let ty = ops::comparison_type(&x.ty(), &cols[0].ty)?;
                BExpr::Quantified {
                    expr: Box::new(x),
                    op: *op,
                    all: matches!(quantifier, Quantifier::All),
                    plan: Arc::new(plan),
                    ty,
                }
            }
            ExprKind::Exists(q) => {
                let plan = self.subquery(q, scope)?;
                BExpr::Exists(Arc::new(plan), false)
            }
            ExprKind::IsNull { expr, negated } => BExpr::IsNull(Box::new(self.bind_expr(expr, scope)?), *negated),
            ExprKind::Case(c) => self.bind_case(c, scope)?,
            ExprKind::Cast { expr, data_type, try_cast } => {
                let x = self.bind_expr(expr, scope)?;
                let to = resolve_type(data_type)?;
                self.convert(x, to, None, *try_cast)?
            }
            ExprKind::Convert { data_type, expr, style, try_convert } => {
                let x = self.bind_expr(expr, scope)?;
                let to = resolve_type(data_type)?;
                let style = match style {
                    Some(s) => match self.bind_expr(s, scope)? {
                        BExpr::Const(Value::Int(n), _) => Some(n),
                        BExpr::Const(Value::Null, _) => None,
                        _ => {
                            return Err(SqlError::new(
                                8116,
                                16,
                                1,
                                "Argument data type is invalid for argument 3 of convert function.",
                            ))
                        }
                    },
                    None => None,
                };
                self.convert(x, to, style, *try_convert)?
            }
            ExprKind::Parse { expr, data_type, try_parse, .. } => {
                let x = self.bind_expr(expr, scope)?;
                let to = resolve_type(data_type)?;
                self.convert(x, to, None, *try_parse)?
            }
            ExprKind::Function(f) => self.bind_function(f, scope, e)?,
            ExprKind::Subquery(q) => {
                let plan = self.subquery(q, scope)?;
                let cols = plan.columns();
                if cols.len() != 1 {
                    return Err(errors::subquery_one_column());
                }
                BExpr::Subquery(Arc::new(plan), cols[0].ty)
            }
            ExprKind::AtTimeZone { expr, zone } => {
                let x = self.bind_expr(expr, scope)?;
                let z = self.bind_expr(zone, scope)?;
                let ty = match x.ty() {
                    SqlType::DateTimeOffset { scale } | SqlType::DateTime2 { scale } => {
                        SqlType::DateTimeOffset { scale }
                    }
                    SqlType::DateTime | SqlType::SmallDateTime => SqlType::DateTimeOffset { scale: 3 },
                    other => {
                        return Err(SqlError::new(
                            8116,
                            16,
                            1,
                            format!(
                                "Argument data type {} is invalid for argument 1 of AT TIME ZONE function.",
                                other.name()
                            ),
                        ))
                    }
                };
                BExpr::AtTimeZone(Box::new(x), Box::new(z), ty)
            }
            ExprKind::Collate { expr, collation } => {
                let x = self.bind_expr(expr, scope)?;
                let ty = x.ty();
                if !ty.is_character() || ty == SqlType::Xml {
                    return Err(SqlError::new(
                        447,
                        16,
                        1,
                        format!("Expression type {} is invalid for COLLATE clause.", ty.name()),
                    ));
                }
                BExpr::Collated(Box::new(x), resolve_collation(&collation.value, self.database_collation())?)
            }
            ExprKind::MethodCall { target, method, args } if super::clr::is_method(&method.value) => {
                super::clr::bind_method(self, target, method, args, scope)?
            }
            ExprKind::MethodCall { target, method, args } => {
                super::xml::bind_method(self, target, method, args, scope)?
            }
            ExprKind::StaticMethodCall { type_name, method, args } => {
                super::clr::bind_static(self, type_name, method, args, scope)?
            }
            ExprKind::NextValueFor { name, over: None } => {
                let (db, object_id, ty) = self.cx.sequence_named(name)?;
                BExpr::NextValue { db, object_id, ty }
            }
            ExprKind::NextValueFor { name, over: Some(over) } => self.bind_next_value_over(name, over, scope)?,
        })
    }

    pub fn binary(&mut self, op: BinaryOp, l: BExpr, r: BExpr) -> Result<BExpr, SqlError> {
        Ok(match op {
            BinaryOp::And => BExpr::And(vec![l, r]),
            BinaryOp::Or => BExpr::Or(vec![l, r]),
            op if op.is_comparison() => {
                let ty = ops::comparison_type_for(op, &l.ty(), &r.ty())?;
                if !ty.is_character() {
                    return Ok(BExpr::Cmp(op, Box::new(l), Box::new(r), ty));
                }
                let db = self.database_collation();
                match operation_collation(&l, &r, comparison_name(op), db)? {
                    Some(c) => BExpr::CollCmp(op, Box::new(l), Box::new(r), ty, c),
                    None => BExpr::Cmp(op, Box::new(l), Box::new(r), ty),
                }
            }
            op => {
                // An integer constant next to a decimal is typed numeric(digits, 0), as
                // SQL Server types literals (so 1.0 / 3 is 0.333333, not 12 places).
                let l2 = int_literal_as_decimal(l, &r);
                let r = int_literal_as_decimal(r, &l2);
                let l = l2;
                let ty = ops::binary_type(op, &l.ty(), &r.ty())?;
                // Fold constant arithmetic (errors surface at run time, not here).
                if let (BExpr::Const(a, at), BExpr::Const(b, bt)) = (&l, &r) {
                    if let Ok(v) = ops::binary(op, a, at, b, bt, &ty) {
                        return Ok(BExpr::Const(v, ty));
                    }
                }
                BExpr::Arith(op, Box::new(l), Box::new(r), ty)
            }
        })
    }

    pub(super) fn convert(&mut self, x: BExpr, to: SqlType, style: Option<i32>, try_: bool) -> Result<BExpr, SqlError> {
        // Text becoming char or varchar takes the code page of its collation, and so do
        // char and varchar becoming binary.
        let to_text = matches!(to, SqlType::Char { .. } | SqlType::VarChar { .. } | SqlType::Text);
        let from_text = matches!(x.ty(), SqlType::Char { .. } | SqlType::VarChar { .. } | SqlType::Text);
        let code_page = if to_text || (from_text && to.is_binary()) {
            let db = self.database_collation();
            x.collation(db).map_or(types::CodePage::CP1252, |c| c.char_code_page())
        } else {
            types::CodePage::CP1252
        };
        if let BExpr::Const(v, from) = &x {
            if !try_ {
                if let Ok(v) = convert::convert_in(v, from, &to, style, code_page) {
                    return Ok(BExpr::Const(v, to));
                }
            }
        }
        Ok(BExpr::Convert { expr: Box::new(x), to, style, try_, code_page })
    }

    fn bind_case(&mut self, c: &Case, scope: &Scope) -> Result<BExpr, SqlError> {
        let operand = match &c.operand {
            Some(o) => Some(self.bind_expr(o, scope)?),
            None => None,
        };
        let mut branches = Vec::with_capacity(c.branches.len());
        let mut ty: Option<SqlType> = None;
        for (w, t) in &c.branches {
            let cond = match &operand {
                Some(o) => {
                    let v = self.bind_expr(w, scope)?;
                    self.binary(BinaryOp::Eq, o.clone(), v)?
                }
                None => self.bind_expr(w, scope)?,
            };
            let then = self.bind_expr(t, scope)?;
            ty = result_type_of(ty, &then)?;
            branches.push((cond, then));
        }
        let else_result = match &c.else_result {
            Some(e) => {
                let b = self.bind_expr(e, scope)?;
                ty = result_type_of(ty, &b)?;
                Some(Box::new(b))
            }
            None => None,
        };
        Ok(BExpr::Case { branches, else_result, ty: ty.unwrap_or(SqlType::Int) })
    }

    fn bind_column(&mut self, name: &ObjectName, scope: &Scope) -> Result<BExpr, SqlError> {
        let implicit = |e: BExpr, c: &ScopeCol| match c.collation {
            Some(coll) => BExpr::ImplicitColl(Box::new(e), coll),
            None => e,
        };
        if let Some(i) = scope.find(&name.parts)? {
            return Ok(implicit(BExpr::Col(i, scope.cols[i].ty), &scope.cols[i]));
        }
        for (k, s) in self.outer.iter().rev().enumerate() {
            if let Some(i) = s.find(&name.parts)? {
                return Ok(implicit(BExpr::Outer { depth: k + 1, index: i, ty: s.cols[i].ty }, &s.cols[i]));
            }
        }
        Err(if name.parts.len() > 1 {
            errors::multipart_not_bound(&name.parts)
        } else {
            errors::invalid_column(&name.name().value)
        })
    }

    fn bind_variable(&mut self, name: &str, scope: &Scope) -> Result<BExpr, SqlError> {
        let _ = scope;
        // Parameters of an inline table-valued function being expanded.
        if let Some((arg, chain)) = self
            .params
            .iter()
            .rev()
            .find_map(|p| p.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.clone()))
        {
            let saved = std::mem::take(&mut self.outer);
            let levels = saved.len() - chain;
            self.outer = saved[..chain].to_vec();
            let r = self.bind_expr(&arg, &Scope::default());
            self.outer = saved;
            let b = r?;
            return Ok(lift(&b, levels));
        }
        match self.cx.lookup_var(name) {
            Some((slot, ty)) => Ok(BExpr::Var(slot, ty)),
            None => Err(errors::must_declare(name)),
        }
    }

    fn bind_system_variable(&mut self, name: &str) -> Result<BExpr, SqlError> {
        let upper = name.to_ascii_uppercase();
        let int = SqlType::Int;
        let nv = |n: u16| SqlType::NVarChar { len: types::Length::Bounded(n) };
        Ok(match upper.as_str() {
            "@@ROWCOUNT" => BExpr::Sys(SysFn::RowCount, int),
            "@@TRANCOUNT" => BExpr::Sys(SysFn::TranCount, int),
            "@@ERROR" => BExpr::Sys(SysFn::Error, int),
            "@@IDENTITY" => BExpr::Sys(SysFn::Identity, SqlType::Numeric { precision: 38, scale: 0 }),
            "@@SPID" => BExpr::Sys(SysFn::Spid, SqlType::SmallInt),
            "@@FETCH_STATUS" => BExpr::Sys(SysFn::FetchStatus, int),
            "@@CURSOR_ROWS" => BExpr::Sys(SysFn::CursorRows, int),
            "@@VERSION" => BExpr::Const(Value::String(super::base::version_string()), nv(300)),
            "@@SERVERNAME" => BExpr::Const(Value::String(self.cx.host.server_name()), nv(128)),
            "@@SERVICENAME" => BExpr::Const(Value::String("MSSQLSERVER".into()), nv(128)),
            "@@LANGUAGE" => BExpr::Const(Value::String(self.cx.state.language.clone()), nv(128)),
            "@@DATEFIRST" => BExpr::Const(Value::TinyInt(self.cx.fcx.datefirst), SqlType::TinyInt),
            "@@MAX_PRECISION" => BExpr::Const(Value::TinyInt(38), SqlType::TinyInt),
            "@@TEXTSIZE" => BExpr::Const(Value::Int(-1), int),
            "@@LOCK_TIMEOUT" => BExpr::Const(Value::Int(self.cx.state.lock_timeout as i32), int),
            "@@NESTLEVEL" => BExpr::Const(Value::Int(self.cx.nest_level() as i32), int),
            "@@OPTIONS" => BExpr::Const(Value::Int(self.cx.state.options_bits() as i32), int),
            "@@PROCID" => BExpr::Const(Value::Int(self.cx.current_proc_id()), int),
            "@@DBTS" => BExpr::Const(
                Value::Binary(vec![0, 0, 0, 0, 0, 0, 0x07, 0xD0]),
                SqlType::VarBinary { len: types::Length::Bounded(8) },
            ),
            "@@MAX_CONNECTIONS" => BExpr::Const(Value::Int(32767), int),
            "@@MICROSOFTVERSION" => BExpr::Const(Value::Int(0x1000_0FA0), int),
            _ => return Err(errors::must_declare(name)),
        })
    }

    fn call_builtin(&mut self, name: &str, args: Vec<BExpr>, literals: &[Option<Value>]) -> Result<BExpr, SqlError> {
        let Some(f) = functions::lookup(name) else {
            return Err(errors::unknown_function(name));
        };
        let mut args = args;
        if name.eq_ignore_ascii_case("DATALENGTH") {
            // char/varchar text of a double-byte code page: the length of its bytes in
            // that code page (the function alone counts one byte per character).
            if let Some(a) = args.first_mut() {
                let ty = a.ty();
                let cp = a.collation(self.database_collation()).map(|c| c.char_code_page());
                if ty.is_character() && !ty.is_unicode() && cp.is_some_and(|cp| cp.is_double_byte()) {
                    let inner = std::mem::replace(a, BExpr::Const(Value::Null, SqlType::Int));
                    *a = BExpr::Convert {
                        expr: Box::new(inner),
                        // Bounded unless the text is max: DATALENGTH stays int then.
                        to: SqlType::VarBinary {
                            len: if ty.is_max() { types::Length::Max } else { types::Length::Bounded(8000) },
                        },
                        style: None,
                        try_: false,
                        code_page: cp.unwrap_or(types::CodePage::CP1252),
                    };
                }
            }
        }
        let types: Vec<SqlType> = args.iter().map(|a| a.ty()).collect();
        let ty = functions::return_type(f, &types, literals)?;
        Ok(BExpr::Func { f, args, ty })
    }

    fn bind_aggregate(&mut self, f: &FunctionCall, text: &str) -> Result<BExpr, SqlError> {
        let kind =
            AggKind::from_name(&f.name.name().value).ok_or_else(|| errors::unknown_function(&f.name.name().value))?;
        let Some(mut agg) = self.agg.take() else {
            return Err(errors::aggregate_not_allowed());
        };
        if let Some(i) = agg.agg_sources.iter().position(|s| s == text) {
            let idx = agg.keys.len() + i;
            let ty = agg.aggs[i].result_type;
            self.agg = Some(agg);
            return Ok(BExpr::Col(idx, ty));
        }
        let input = agg.input.clone();
        // The argument is bound over the input rows, without the grouping context.
        let r = (|| -> Result<AggSpec, SqlError> {
            for a in &f.args {
                if contains_aggregate(a) {
                    return Err(SqlError::new(
                        130,
                        16,
                        1,
                        "Cannot perform an aggregate function on an expression containing an aggregate or a subquery.",
                    ));
                }
            }
            let arg = if f.star || f.args.is_empty() { None } else { Some(self.bind_expr(&f.args[0], &input)?) };
            let extra = match f.args.get(1) {
                Some(e) if kind == AggKind::StringAgg => Some(self.bind_expr(e, &input)?),
                _ => None,
            };
            let mut order = Vec::new();
            for o in &f.within_group {
                let expr = self.bind_expr(&o.expr, &input)?;
                errors::check_sortable(&expr.ty(), "ORDER BY")?;
                order.push(SortKey { expr, desc: o.direction == Some(SortDirection::Desc) });
            }
            let result_type = aggregate::return_type(kind, arg.as_ref().map(|a| a.ty()).as_ref())?;
            Ok(AggSpec { kind, arg, distinct: f.distinct, extra, order, result_type })
        })();
        let spec = match r {
            Ok(s) => s,
            Err(e) => {
                self.agg = Some(agg);
                return Err(e);
            }
        };
        let ty = spec.result_type;
        agg.aggs.push(spec);
        agg.agg_sources.push(text.to_string());
        let idx = agg.keys.len() + agg.aggs.len() - 1;
        self.agg = Some(agg);
        Ok(BExpr::Col(idx, ty))
    }

    fn bind_function(&mut self, f: &FunctionCall, scope: &Scope, whole: &Expr) -> Result<BExpr, SqlError> {
        let name = f.name.name().value.to_ascii_uppercase();
        if f.over.is_some() {
            return self.bind_window(f, scope);
        }
        if is_aggregate_call(f) {
            return Err(errors::aggregate_not_allowed());
        }
        // User-defined scalar functions are schema-qualified.
        if f.name.parts.len() > 1 {
            return self.bind_udf(f, scope);
        }
        let _ = whole;
        // Functions the binder owns: they read the session or the catalog, or need
        // special typing.
        match name.as_str() {
            "ISNULL" | "COALESCE" => {
                if name == "ISNULL" && f.args.len() != 2 {
                    return Err(errors::arg_count("isnull", 2));
                }
                if f.args.len() < 2 {
                    return Err(SqlError::new(
                        189,
                        15,
                        1,
                        "The coalesce function requires 2 to 2147483647 arguments.".to_string(),
                    ));
                }
                let mut args = Vec::new();
                for a in &f.args {
                    args.push(self.bind_expr(a, scope)?);
                }
                let ty = if name == "ISNULL" {
                    if matches!(args[0], BExpr::Const(Value::Null, _)) {
                        args[1].ty()
                    } else {
                        args[0].ty()
                    }
                } else {
                    args.iter().try_fold(None, result_type_of)?.unwrap_or(SqlType::Int)
                };
                return Ok(BExpr::Coalesce(args, ty));
            }
            "IIF" => {
                if f.args.len() != 3 {
                    return Err(errors::arg_count("iif", 3));
                }
                let c = self.bind_expr(&f.args[0], scope)?;
                let t = self.bind_expr(&f.args[1], scope)?;
                let e = self.bind_expr(&f.args[2], scope)?;
                let ty = result_type_of(result_type_of(None, &t)?, &e)?.unwrap_or(SqlType::Int);
                return Ok(BExpr::Case { branches: vec![(c, t)], else_result: Some(Box::new(e)), ty });
            }
            "NULLIF" => {
                if f.args.len() != 2 {
                    return Err(errors::arg_count("nullif", 2));
                }
                let a = self.bind_expr(&f.args[0], scope)?;
                let b = self.bind_expr(&f.args[1], scope)?;
                let ty = a.ty();
                let eq = self.binary(BinaryOp::Eq, a.clone(), b)?;
                return Ok(BExpr::Case {
                    branches: vec![(eq, BExpr::Const(Value::Null, ty))],
                    else_result: Some(Box::new(a)),
                    ty,
                });
            }
            "UPDATE" => {
                let col = match f.args.as_slice() {
                    [a] => a.as_name().map(str::to_string),
                    _ => None,
                }
                .ok_or_else(|| errors::arg_count("update", f.args.len()))?;
                let Some(firing) = self.cx.frames.last().and_then(|f| f.trigger.as_ref()) else {
                    return Err(SqlError::new(
                        102,
                        15,
                        1,
                        "Incorrect syntax near 'UPDATE'. UPDATE() can only be used inside a trigger.",
                    ));
                };
                let on = firing.column_updated(&col)?;
                return Ok(BExpr::Const(Value::Bit(on), SqlType::Bit));
            }
            "COLUMNS_UPDATED" => {
                let firing = self.cx.frames.last().and_then(|f| f.trigger.as_ref());
                let v = firing.map_or(Value::Null, |t| t.columns_updated());
                return Ok(BExpr::Const(v, SqlType::VarBinary { len: types::Length::Bounded(8000) }));
            }
            "TRIGGER_NESTLEVEL" => {
                // How many triggers are running.
                let n = self.cx.frames.iter().filter(|f| f.trigger.is_some()).count() as i32;
                return Ok(BExpr::Const(Value::Int(n), SqlType::Int));
            }
            "SCOPE_IDENTITY" => {
                return Ok(BExpr::Sys(SysFn::ScopeIdentity, SqlType::Numeric { precision: 38, scale: 0 }))
            }
            "XACT_STATE" => return Ok(BExpr::Sys(SysFn::XactState, SqlType::SmallInt)),
            "CURSOR_STATUS" => {
                if f.args.len() != 2 {
                    return Err(errors::arg_count("cursor_status", f.args.len()));
                }
                let mut text = Vec::with_capacity(2);
                for a in &f.args {
                    let b = self.bind_expr(a, scope)?;
                    let v = b.eval(&[], self.cx)?;
                    text.push(if v.is_null() { String::new() } else { v.to_string() });
                }
                let name = text.pop().unwrap_or_default();
                let kind = text.pop().unwrap_or_default();
                return Ok(BExpr::Sys(SysFn::CursorStatus { kind, name }, SqlType::SmallInt));
            }
            "ERROR_NUMBER" => return Ok(BExpr::Sys(SysFn::ErrorNumber, SqlType::Int)),
            "ERROR_SEVERITY" => return Ok(BExpr::Sys(SysFn::ErrorSeverity, SqlType::Int)),
            "ERROR_STATE" => return Ok(BExpr::Sys(SysFn::ErrorState, SqlType::Int)),
            "ERROR_LINE" => return Ok(BExpr::Sys(SysFn::ErrorLine, SqlType::Int)),
            "ERROR_MESSAGE" => {
                return Ok(BExpr::Sys(SysFn::ErrorMessage, SqlType::NVarChar { len: types::Length::Bounded(4000) }))
            }
            "ERROR_PROCEDURE" => {
                return Ok(BExpr::Sys(SysFn::ErrorProcedure, SqlType::NVarChar { len: types::Length::Bounded(128) }))
            }
            _ => {}
        }
        if let Some(e) = self.bind_catalog_function(&name, f, scope)? {
            return Ok(e);
        }
        // Built-ins: datepart words arrive as strings.
        let datepart_first =
            matches!(name.as_str(), "DATEADD" | "DATEDIFF" | "DATEDIFF_BIG" | "DATEPART" | "DATENAME" | "DATETRUNC");
        let mut args = Vec::with_capacity(f.args.len());
        let mut literals = Vec::with_capacity(f.args.len());
        for (i, a) in f.args.iter().enumerate() {
            // ISJSON(x, VALUE | ARRAY | OBJECT | SCALAR): the type is a bare word too.
            let word_arg = i == 0 && datepart_first || i == 1 && name == "ISJSON";
            let b = if word_arg {
                match a.as_name() {
                    Some(word) => BExpr::Const(
                        Value::String(word.to_ascii_lowercase()),
                        SqlType::VarChar { len: types::Length::Bounded(30) },
                    ),
                    None => self.bind_expr(a, scope)?,
                }
            } else {
                self.bind_expr(a, scope)?
            };
            literals.push(match &b {
                BExpr::Const(v, _) => Some(v.clone()),
                _ => None,
            });
            args.push(b);
        }
        if functions::lookup(&name).is_none() {
            return Err(errors::unknown_function(&f.name.name().value));
        }
        let mut e = self.call_builtin(&name, args, &literals)?;
        // JSON_MODIFY writes a new value that already is JSON as it is.
        if let BExpr::Func { f: func, args, .. } = &mut e {
            let json_arg = f.args.get(2).is_some_and(super::forclause::is_json_ast)
                || args.get(2).is_some_and(super::forclause::is_json_expr);
            if func.0 == "JSON_MODIFY" && json_arg {
                *func = functions::Builtin("JSON_MODIFY JSON");
            }
            // JSON_OBJECT and JSON_ARRAY: the parser's hidden first argument (the NULL
            // clause) gets a flag per argument, whether it already is JSON.
            if matches!(func.0, "JSON_OBJECT" | "JSON_ARRAY") {
                if let Some(BExpr::Const(Value::String(spec), _)) = args.first() {
                    let mut spec = spec.clone();
                    spec.push(':');
                    for (i, b) in args.iter().enumerate().skip(1) {
                        let json = f.args.get(i).is_some_and(super::forclause::is_json_ast)
                            || super::forclause::is_json_expr(b);
                        spec.push(if json { '1' } else { '0' });
                    }
                    args[0] = BExpr::Const(Value::String(spec), SqlType::VarChar { len: types::Length::Max });
                }
            }
        }
        // Fold deterministic functions of constants.
        if let BExpr::Func { f: func, args, ty } = &e {
            if !functions::is_volatile(*func) && !args.is_empty() && args.iter().all(|a| matches!(a, BExpr::Const(..)))
            {
                let vals: Vec<Value> =
                    args.iter().map(|a| if let BExpr::Const(v, _) = a { v.clone() } else { Value::Null }).collect();
                let tys: Vec<SqlType> = args.iter().map(|a| a.ty()).collect();
                if let Ok(v) = functions::call(*func, &vals, &tys, ty, &self.cx.fcx) {
                    return Ok(BExpr::Const(v, *ty));
                }
            }
        }
        Ok(e)
    }

    /// DB_ID, DB_NAME, OBJECT_ID, OBJECT_NAME, SCHEMA_NAME, SCHEMA_ID, SERVERPROPERTY,
    /// DATABASEPROPERTYEX, SUSER_SNAME, USER_NAME, HOST_NAME, APP_NAME, IDENT_CURRENT,
    /// COL_LENGTH, OBJECTPROPERTY: evaluated now (their arguments are constants in
    /// practice; a non-constant argument is evaluated once per statement).
    fn bind_catalog_function(
        &mut self,
        name: &str,
        f: &FunctionCall,
        scope: &Scope,
    ) -> Result<Option<BExpr>, SqlError> {
        if !matches!(
            name,
            "DB_ID"
                | "DB_NAME"
                | "OBJECT_ID"
                | "OBJECT_NAME"
                | "SCHEMA_NAME"
                | "SCHEMA_ID"
                | "SERVERPROPERTY"
                | "DATABASEPROPERTYEX"
                | "SUSER_SNAME"
                | "SUSER_NAME"
                | "USER_NAME"
                | "HOST_NAME"
                | "APP_NAME"
                | "ORIGINAL_LOGIN"
                | "IDENT_CURRENT"
                | "IDENT_SEED"
                | "IDENT_INCR"
                | "COL_LENGTH"
                | "OBJECTPROPERTY"
                | "OBJECT_DEFINITION"
                | "IS_SRVROLEMEMBER"
                | "HAS_DBACCESS"
                | "DB_ID_FOR"
                | "COLLATIONPROPERTY"
        ) {
            return Ok(None);
        }
        let mut args = Vec::with_capacity(f.args.len());
        for a in &f.args {
            args.push(self.bind_expr(a, scope)?);
        }
        if args.iter().all(|b| b.is_constant()) {
            let mut vals = Vec::with_capacity(args.len());
            for b in &args {
                let v = b.eval(&[], self.cx)?;
                vals.push(match (&v, b.ty()) {
                    (Value::Null, _) => Value::Null,
                    (_, t) if t.is_character() => Value::String(super::expr::as_text(&v, &t).unwrap_or_default()),
                    _ => v,
                });
            }
            let (v, ty) = catalog_function(self.cx, name, &vals)?;
            return Ok(Some(BExpr::Const(v, ty)));
        }
        // A per-row argument (DB_NAME(database_id) over a DMV): looked up per row. The
        // result type does not depend on the values.
        let (_, ty) = catalog_function(self.cx, name, &vec![Value::Null; args.len()])?;
        Ok(Some(BExpr::CatalogFn { name: Arc::from(name), args, ty }))
    }

    fn bind_udf(&mut self, f: &FunctionCall, scope: &Scope) -> Result<BExpr, SqlError> {
        let (db, obj) = self.cx.resolve_object(&f.name)?.ok_or_else(|| errors::unknown_udf(&f.name))?;
        let crate::catalog::ObjectBody::ScalarFunction(m) = &obj.body else {
            return Err(errors::unknown_udf(&f.name));
        };
        let def = super::base::parse_module(&m.definition)?;
        let StatementKind::CreateFunction(cf) = &def.kind else {
            return Err(errors::unknown_function(&f.name.name().value));
        };
        let FunctionBody::Scalar { data_type, .. } = &cf.returns else {
            return Err(errors::unknown_function(&f.name.name().value));
        };
        let ty = resolve_type(data_type)?;
        let mut args = Vec::new();
        for (i, a) in f.args.iter().enumerate() {
            // DEFAULT: the parameter's default value.
            let default = cf.params.get(i).and_then(|p| p.default.as_ref());
            match (&a.kind, default) {
                (ExprKind::Default, Some(d)) => args.push(self.bind_expr(d, &Scope::default())?),
                _ => args.push(self.bind_expr(a, scope)?),
            }
        }
        if args.len() != cf.params.len() {
            return Err(SqlError::new(
                313,
                16,
                2,
                format!(
                    "An insufficient number of arguments were supplied for the procedure or function {}.",
                    f.name.name().value
                ),
            ));
        }
        Ok(BExpr::Udf { db, object_id: obj.id, args, ty })
    }

    fn bind_window(&mut self, f: &FunctionCall, scope: &Scope) -> Result<BExpr, SqlError> {
        let Some((base, mut list)) = self.windows.take() else {
            return Err(SqlError::new(
                4108,
                16,
                1,
                "Windowed functions can only appear in the SELECT or ORDER BY clauses.",
            ));
        };
        let r = (|| -> Result<WindowFn, SqlError> {
            let over = f.over.as_ref().ok_or_else(|| errors::unknown_function("OVER"))?;
            let name = f.name.name().value.to_ascii_uppercase();
            let kind = match name.as_str() {
                "ROW_NUMBER" => WindowKind::RowNumber,
                "RANK" => WindowKind::Rank,
                "DENSE_RANK" => WindowKind::DenseRank,
                "NTILE" => WindowKind::Ntile,
                "LAG" => WindowKind::Lag,
                "LEAD" => WindowKind::Lead,
                "FIRST_VALUE" => WindowKind::FirstValue,
                "LAST_VALUE" => WindowKind::LastValue,
                other => match AggKind::from_name(other) {
                    Some(k) => WindowKind::Agg(k),
                    None => return Err(errors::unknown_function(&f.name.name().value)),
                },
            };
            if matches!(
                kind,
                WindowKind::RowNumber
                    | WindowKind::Rank
                    | WindowKind::DenseRank
                    | WindowKind::Ntile
                    | WindowKind::Lag
                    | WindowKind::Lead
            ) && over.order_by.is_empty()
            {
                return Err(SqlError::new(
                    4112,
                    16,
                    1,
                    format!("The function '{}' must have an OVER clause with ORDER BY.", name.to_ascii_lowercase()),
                ));
            }
            let mut args = Vec::new();
            for a in &f.args {
                args.push(self.bind_expr(a, scope)?);
            }
            let mut partition = Vec::new();
            for p in &over.partition_by {
                let e = self.bind_expr(p, scope)?;
                errors::check_sortable(&e.ty(), "PARTITION BY")?;
                partition.push(e);
            }
            let mut order = Vec::new();
            for o in &over.order_by {
                let expr = self.bind_expr(&o.expr, scope)?;
                errors::check_sortable(&expr.ty(), "ORDER BY")?;
                order.push(SortKey { expr, desc: o.direction == Some(SortDirection::Desc) });
            }
            let ty = match kind {
                WindowKind::RowNumber | WindowKind::Rank | WindowKind::DenseRank | WindowKind::Ntile => SqlType::BigInt,
                WindowKind::Lag | WindowKind::Lead | WindowKind::FirstValue | WindowKind::LastValue => {
                    args.first().map(|a| a.ty()).unwrap_or(SqlType::Int)
                }
                WindowKind::Agg(k) => aggregate::return_type(k, args.first().map(|a| a.ty()).as_ref())?,
                // Bound by `bind_next_value_over`, never by name.
                WindowKind::NextValue { .. } => SqlType::BigInt,
            };
            let frame = match &over.frame {
                None => None,
                Some(fr) => {
                    let edge = |b: &FrameBound| -> Result<FrameEdge, SqlError> {
                        Ok(match b {
                            FrameBound::UnboundedPreceding => FrameEdge::UnboundedPreceding,
                            FrameBound::UnboundedFollowing => FrameEdge::UnboundedFollowing,
                            FrameBound::CurrentRow => FrameEdge::CurrentRow,
                            FrameBound::Preceding(e) => FrameEdge::Preceding(is_literal_int(e).unwrap_or(0)),
                            FrameBound::Following(e) => FrameEdge::Following(is_literal_int(e).unwrap_or(0)),
                        })
                    };
                    let start = edge(&fr.start)?;
                    let end = match &fr.end {
                        Some(e) => edge(e)?,
                        None => FrameEdge::CurrentRow,
                    };
                    Some((fr.units == FrameUnits::Rows, start, end))
                }
            };
            // Aggregates OVER without ORDER BY cover the whole partition.
            Ok(WindowFn { kind, args, partition, order, frame, ty })
        })();
        let w = match r {
            Ok(w) => w,
            Err(e) => {
                self.windows = Some((base, list));
                return Err(e);
            }
        };
        let ty = w.ty;
        list.push(w);
        let idx = base + list.len() - 1;
        self.windows = Some((base, list));
        Ok(BExpr::Col(idx, ty))
    }

    /// NEXT VALUE FOR s OVER (ORDER BY ...): a window function that draws the rows'
    /// values in the OVER clause's order (11716 for PARTITION BY, 11718 for an empty
    /// OVER).
    fn bind_next_value_over(&mut self, name: &ObjectName, over: &WindowSpec, scope: &Scope) -> Result<BExpr, SqlError> {
        if !over.partition_by.is_empty() {
            return Err(SqlError::new(
                11716,
                15,
                1,
                "NEXT VALUE FOR function does not support the PARTITION BY clause.",
            ));
        }
        if over.order_by.is_empty() {
            return Err(SqlError::new(11718, 15, 1, "NEXT VALUE FOR function does not support an empty OVER clause."));
        }
        let (db, object_id, ty) = self.cx.sequence_named(name)?;
        let Some((base, mut list)) = self.windows.take() else {
            return Err(SqlError::new(
                11720,
                15,
                1,
                "NEXT VALUE FOR function is not allowed in the TOP, OVER, OUTPUT, ON, WHERE, GROUP BY, HAVING, or ORDER BY clauses.",
            ));
        };
        let mut order = Vec::new();
        for o in &over.order_by {
            match self.bind_expr(&o.expr, scope) {
                Ok(expr) => order.push(SortKey { expr, desc: o.direction == Some(SortDirection::Desc) }),
                Err(e) => {
                    self.windows = Some((base, list));
                    return Err(e);
                }
            }
        }
        list.push(WindowFn {
            kind: WindowKind::NextValue { db, object_id },
            args: Vec::new(),
            partition: Vec::new(),
            order,
            frame: None,
            ty,
        });
        let idx = base + list.len() - 1;
        self.windows = Some((base, list));
        Ok(BExpr::Col(idx, ty))
    }

    fn subquery(&mut self, q: &Query, scope: &Scope) -> Result<Plan, SqlError> {
        self.outer.push(scope.clone());
        let saved_agg = self.agg.take();
        let saved_win = self.windows.take();
        let r = self.plan_query(q);
        self.agg = saved_agg;
        self.windows = saved_win;
        self.outer.pop();
        Ok(super::plan::spool_uncorrelated(super::index_spool::decorrelate(r?.0)))
    }
}

/// The grouped row's column `i` for grouping key `key`: keeps the key's explicit
/// collation (`GROUP BY w COLLATE c` selects, sorts and compares `w` under c).
fn grouped_key(i: usize, key: &BExpr, database: types::Collation) -> BExpr {
    relabel(BExpr::Col(i, key.ty()), key, database)
}

/// `col`, a column computed from `from`, with `from`'s collation label (a
/// coercible-default one as the current database's collation, `database`, which a
/// column reference cannot carry otherwise).
fn relabel(col: BExpr, from: &BExpr, database: types::Collation) -> BExpr {
    match from.collation_label() {
        CollationLabel::Explicit(c) => BExpr::Collated(Box::new(col), c),
        CollationLabel::Implicit(c) if c != types::Collation::DEFAULT => BExpr::ImplicitColl(Box::new(col), c),
        CollationLabel::Default if database != types::Collation::DEFAULT && from.ty().is_character() => {
            BExpr::ImplicitColl(Box::new(col), database)
        }
        _ => col,
    }
}

/// The collation a COLLATE clause names: DATABASE_DEFAULT and CATALOG_DEFAULT are
/// `database`'s, the current database's collation; a name Mesquite does not know is 448.
pub fn resolve_collation(name: &str, database: types::Collation) -> Result<types::Collation, SqlError> {
    if name.eq_ignore_ascii_case("DATABASE_DEFAULT") || name.eq_ignore_ascii_case("CATALOG_DEFAULT") {
        return Ok(database);
    }
    collation_named(name)
}

/// The collation a name stands for (CREATE/ALTER DATABASE ... COLLATE, and COLLATE
/// clauses through [`resolve_collation`]); 448 for a name Mesquite does not know.
pub fn collation_named(name: &str) -> Result<types::Collation, SqlError> {
    types::Collation::from_name(name).ok_or_else(|| SqlError::new(448, 16, 1, format!("Invalid collation '{name}'.")))
}

/// The collation an operation on two strings uses (collation precedence: explicit beats
/// implicit beats coercible-default, which is `database`'s, the current database's; two
/// different explicit labels, or two different implicit ones without an explicit label,
/// are 468). None: the default collation.
fn operation_collation(
    l: &BExpr,
    r: &BExpr,
    operation: &str,
    database: types::Collation,
) -> Result<Option<types::Collation>, SqlError> {
    use CollationLabel::*;
    let conflict = |a: types::Collation, b: types::Collation| {
        SqlError::new(
            468,
            16,
            9,
            format!(
                "Cannot resolve the collation conflict between \"{}\" and \"{}\" in the {operation} operation.",
                a.name(),
                b.name()
            ),
        )
    };
    let c = match (l.collation_label(), r.collation_label()) {
        (Explicit(a), Explicit(b)) if a != b => return Err(conflict(a, b)),
        (Explicit(a), _) | (_, Explicit(a)) => a,
        (Implicit(a), Implicit(b)) if a != b => return Err(conflict(a, b)),
        (Implicit(a), _) | (_, Implicit(a)) => a,
        (Default, Default) => database,
        // An operand without a collation (two conflicting columns concatenated): SQL
        // Server reports a conflict; not modelled, the default applies.
        _ => return Ok(None),
    };
    Ok((c != types::Collation::DEFAULT).then_some(c))
}

/// The collation label of column `i` of a set operator's result: an explicit label
/// beats an implicit one, which beats the coercible default; two different explicit or
/// implicit ones (a CS database's column beside a #temp table's, the common case) are
/// 451, whether or not the operator compares strings (UNION ALL too, as SQL Server
/// reports it). 451 is the docs' number for a set operator's column conflict; their
/// list gives an older text ("Cannot resolve collation conflict for column %d in %ls
/// statement."), this one is the text public reports of current servers show (not
/// checked against a server).
fn set_op_label(op: SetOperator, i: usize, a: CollationLabel, b: CollationLabel) -> Result<CollationLabel, SqlError> {
    use CollationLabel::*;
    let conflict = |x: types::Collation, y: types::Collation| {
        let name = match op {
            SetOperator::Union => "UNION",
            SetOperator::UnionAll => "UNION ALL",
            SetOperator::Intersect => "INTERSECT",
            SetOperator::Except => "EXCEPT",
        };
        SqlError::new(
            451,
            16,
            1,
            format!(
                "Cannot resolve collation conflict between \"{}\" and \"{}\" in {name} operator occurring in SELECT statement column {}.",
                x.name(),
                y.name(),
                i + 1
            ),
        )
    };
    match (a, b) {
        (Explicit(x), Explicit(y)) | (Implicit(x), Implicit(y)) if x != y => Err(conflict(x, y)),
        // A branch without a collation (`cs_col + ci_col`) leaves the column without
        // one: what uses it later reports the conflict (468).
        _ => Ok(a.combine(b)),
    }
}

/// How SQL Server names a comparison operator in message 468.
fn comparison_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::NotEq => "not equal to",
        BinaryOp::Lt => "less than",
        BinaryOp::LtEq => "less than or equal to",
        BinaryOp::Gt => "greater than",
        BinaryOp::GtEq => "greater than or equal to",
        _ => "equal to",
    }
}
