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

use super::errors;
use super::expr::{BExpr, CollationLabel, SysFn};
use super::plan::*;
use super::Cx;
use crate::ast::*;
use crate::lexer::TokenKind;
use crate::scalar::aggregate::{self, AggKind};
use crate::scalar::{convert, functions, ops};

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
    walk_expr(e, &mut |x| {
        if let ExprKind::Function(f) = &x.kind {
            if f.over.is_some() {
                found = true;
            }
        }
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
    let int = |i: usize| -> Option<i64> { vals.get(i).and_then(super::table::int_of).map(|v| v as i64) };
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
            (property_variant(super::server_property(&text(0).unwrap_or_default(), cx))?, SqlType::Variant)
        }
        "DATABASEPROPERTYEX" => {
            let db = text(0).and_then(|n| cx.db_id_by_name(&n));
            let v = match db {
                Some(db) => super::database_property(db, &text(1).unwrap_or_default(), cx),
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
                            super::sysviews::type_info(&ty).1
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
                (property_variant(super::catalog_views::collation_property(&c, &p))?, SqlType::Variant)
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
        v => super::plan::value_type(v),
    };
    Value::variant(v, &ty)
}

/// Visits an expression tree, not descending into subqueries.
pub fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { expr, .. } | ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => {
            walk_expr(expr, f)
        }
        ExprKind::Cast { expr, .. } | ExprKind::Parse { expr, .. } => walk_expr(expr, f),
        ExprKind::Convert { expr, style, .. } => {
            walk_expr(expr, f);
            if let Some(s) = style {
                walk_expr(s, f);
            }
        }
        ExprKind::Binary { left, right, .. } => {
            walk_expr(left, f);
            walk_expr(right, f);
        }
        ExprKind::AtTimeZone { expr, zone } => {
            walk_expr(expr, f);
            walk_expr(zone, f);
        }
        ExprKind::Like { expr, pattern, escape, .. } => {
            walk_expr(expr, f);
            walk_expr(pattern, f);
            if let Some(e) = escape {
                walk_expr(e, f);
            }
        }
        ExprKind::Between { expr, low, high, .. } => {
            walk_expr(expr, f);
            walk_expr(low, f);
            walk_expr(high, f);
        }
        ExprKind::InList { expr, list, .. } => {
            walk_expr(expr, f);
            list.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::InSubquery { expr, .. } => walk_expr(expr, f),
        ExprKind::Quantified { left, .. } => walk_expr(left, f),
        ExprKind::Case(c) => {
            if let Some(o) = &c.operand {
                walk_expr(o, f);
            }
            for (w, t) in &c.branches {
                walk_expr(w, f);
                walk_expr(t, f);
            }
            if let Some(e) = &c.else_result {
                walk_expr(e, f);
            }
        }
        ExprKind::Function(call) => {
            // Arguments of aggregates are visited too (nested aggregates are an error
            // the binder reports).
            call.args.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::MethodCall { target, args, .. } => {
            walk_expr(target, f);
            args.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::StaticMethodCall { args, .. } => args.iter().for_each(|e| walk_expr(e, f)),
        _ => {}
    }
}

/// Like [`walk_expr`], with mutable access (used to rewrite column references).
pub fn walk_expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    match &mut e.kind {
        ExprKind::Unary { expr, .. } | ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => {
            walk_expr_mut(expr, f)
        }
        ExprKind::Cast { expr, .. } | ExprKind::Parse { expr, .. } => walk_expr_mut(expr, f),
        ExprKind::Convert { expr, style, .. } => {
            walk_expr_mut(expr, f);
            if let Some(s) = style {
                walk_expr_mut(s, f);
            }
        }
        ExprKind::Binary { left, right, .. } => {
            walk_expr_mut(left, f);
            walk_expr_mut(right, f);
        }
        ExprKind::AtTimeZone { expr, zone } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(zone, f);
        }
        ExprKind::Like { expr, pattern, escape, .. } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(pattern, f);
            if let Some(e) = escape {
                walk_expr_mut(e, f);
            }
        }
        ExprKind::Between { expr, low, high, .. } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(low, f);
            walk_expr_mut(high, f);
        }
        ExprKind::InList { expr, list, .. } => {
            walk_expr_mut(expr, f);
            list.iter_mut().for_each(|e| walk_expr_mut(e, f));
        }
        ExprKind::InSubquery { expr, .. } => walk_expr_mut(expr, f),
        ExprKind::Quantified { left, .. } => walk_expr_mut(left, f),
        ExprKind::Case(c) => {
            if let Some(o) = &mut c.operand {
                walk_expr_mut(o, f);
            }
            for (w, t) in &mut c.branches {
                walk_expr_mut(w, f);
                walk_expr_mut(t, f);
            }
            if let Some(e) = &mut c.else_result {
                walk_expr_mut(e, f);
            }
        }
        ExprKind::Function(call) => call.args.iter_mut().for_each(|e| walk_expr_mut(e, f)),
        ExprKind::MethodCall { target, args, .. } => {
            walk_expr_mut(target, f);
            args.iter_mut().for_each(|e| walk_expr_mut(e, f));
        }
        ExprKind::StaticMethodCall { args, .. } => args.iter_mut().for_each(|e| walk_expr_mut(e, f)),
        _ => {}
    }
}

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
            ExprKind::NextValueFor(name) => {
                return Err(SqlError::new(208, 16, 1, format!("Invalid object name '{}'.", name.name().value)))
            }
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
            "@@VERSION" => BExpr::Const(Value::String(super::version_string()), nv(300)),
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
                let on = super::trigger::column_updated(self.cx, &col)?;
                return Ok(BExpr::Const(Value::Bit(on), SqlType::Bit));
            }
            "COLUMNS_UPDATED" => {
                let v = super::trigger::columns_updated(self.cx);
                return Ok(BExpr::Const(v, SqlType::VarBinary { len: types::Length::Bounded(8000) }));
            }
            "TRIGGER_NESTLEVEL" => {
                return Ok(BExpr::Const(Value::Int(super::trigger::nest_level(self.cx)), SqlType::Int));
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
        let def = super::parse_module(&m.definition)?;
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

    // ---------------------------------------------------------------------------------
    // Queries
    // ---------------------------------------------------------------------------------

    /// Makes a statement's WITH clause visible to everything this binder plans next
    /// (MERGE binds its source, ON and clauses with one binder).
    pub fn push_ctes(&mut self, ctes: &[Cte]) {
        let map = ctes.iter().map(|c| (c.name.value.to_ascii_lowercase(), CteDef::Query(c.clone()))).collect();
        self.ctes.push(map);
    }

    /// Plans a query; returns the plan and its output columns.
    pub fn plan_query(&mut self, q: &Query) -> Result<(Plan, Vec<OutCol>), SqlError> {
        crate::stack::check()?;
        let pushed = !q.with.is_empty();
        if pushed {
            let mut map = HashMap::new();
            for c in &q.with {
                map.insert(c.name.value.to_ascii_lowercase(), CteDef::Query(c.clone()));
            }
            self.ctes.push(map);
        }
        let r = self.plan_query_body(q);
        if pushed {
            self.ctes.pop();
        }
        match &q.for_clause {
            Some(fc) if fc.kind != ForKind::Browse => {
                let select = match &q.body {
                    SetExpr::Select(s) => Some(&**s),
                    _ => None,
                };
                super::forclause::plan_for(self, fc, select, r?.0)
            }
            _ => r,
        }
    }

    fn plan_query_body(&mut self, q: &Query) -> Result<(Plan, Vec<OutCol>), SqlError> {
        let max_recursion = q
            .hints
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case("MAXRECURSION"))
            .and_then(|h| h.value.as_ref().and_then(is_literal_int))
            .unwrap_or(100) as u32;
        self.cx.max_recursion = max_recursion;
        match &q.body {
            SetExpr::Select(s) => {
                let plan = self.plan_select(s, &q.order_by, q.offset.as_ref(), q.fetch.as_ref())?;
                let cols = plan.columns();
                Ok((plan, cols))
            }
            body => {
                let mut plan = self.plan_set_expr(body)?;
                let cols = plan.columns();
                if !q.order_by.is_empty() {
                    let scope = Scope::from_cols(None, &cols);
                    let mut keys = Vec::new();
                    for o in &q.order_by {
                        let e = match is_literal_int(&o.expr) {
                            Some(n) if n >= 1 && (n as usize) <= cols.len() => BExpr::Col(n as usize - 1, cols[n as usize - 1].ty),
                            Some(_) => return Err(errors::order_by_position(cols.len())),
                            None => self.bind_expr(&o.expr, &scope).map_err(|_| {
                                SqlError::new(
                                    104,
                                    16,
                                    1,
                                    "ORDER BY items must appear in the select list if the statement contains a UNION, INTERSECT or EXCEPT operator.",
                                )
                            })?,
                        };
                        errors::check_sortable(&e.ty(), "ORDER BY")?;
                        keys.push(SortKey { expr: e, desc: o.direction == Some(SortDirection::Desc) });
                    }
                    plan = Plan::Sort { input: Box::new(plan), keys };
                }
                if q.offset.is_some() || q.fetch.is_some() {
                    let count = match &q.fetch {
                        Some(e) => Some(self.bind_expr(e, &Scope::default())?),
                        None => None,
                    };
                    let offset = match &q.offset {
                        Some(e) => Some(self.bind_expr(e, &Scope::default())?),
                        None => None,
                    };
                    plan = Plan::Top { input: Box::new(plan), count, percent: false, ties: None, offset };
                }
                Ok((plan, cols))
            }
        }
    }

    fn plan_set_expr(&mut self, s: &SetExpr) -> Result<Plan, SqlError> {
        crate::stack::check()?;
        match s {
            SetExpr::Select(sel) => self.plan_select(sel, &[], None, None),
            SetExpr::Query(q) => Ok(self.plan_query(q)?.0),
            SetExpr::SetOp { op, left, right } => {
                let l = self.plan_set_expr(left)?;
                let r = self.plan_set_expr(right)?;
                let lc = l.columns();
                let rc = r.columns();
                if lc.len() != rc.len() {
                    return Err(SqlError::new(
                        205,
                        16,
                        1,
                        "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.",
                    ));
                }
                let (ln, rn) = (null_literal_columns(left), null_literal_columns(right));
                let mut cols = Vec::with_capacity(lc.len());
                for (i, (a, b)) in lc.iter().zip(&rc).enumerate() {
                    let ty = match (ln.get(i).copied().unwrap_or(false), rn.get(i).copied().unwrap_or(false)) {
                        (true, false) => b.ty,
                        (false, true) => a.ty,
                        _ => union_type(&a.ty, &b.ty)?,
                    };
                    if *op != SetOperator::UnionAll {
                        errors::check_set_operand(&ty)?;
                    }
                    let col = OutCol::new(a.name.clone(), ty, a.nullable || b.nullable);
                    let col = match (a.label, b.label) {
                        (Some(la), Some(lb)) if ty.is_character() => {
                            let label = set_op_label(*op, i, la, lb)?;
                            let db = self.database_collation();
                            col.with_collation(label.collation(db)).with_label(label)
                        }
                        // A branch whose columns no select list made: either side's
                        // collation labels the column.
                        _ if ty.is_character() => col.with_collation(a.collation.or(b.collation)),
                        _ => col,
                    };
                    cols.push(col);
                }
                Ok(Plan::SetOp { op: *op, left: Box::new(l), right: Box::new(r), cols })
            }
        }
    }

    pub fn plan_select(
        &mut self,
        s: &Select,
        order_by: &[OrderByItem],
        offset: Option<&Expr>,
        fetch: Option<&Expr>,
    ) -> Result<Plan, SqlError> {
        // FROM
        let leaves = if s.from.is_empty() { Vec::new() } else { self.plan_from_items(&s.from)? };
        // Three or more FROM items with a WHERE clause get a join order (reorder_joins),
        // built once the conjuncts are bound over the written column order.
        let mut unordered: Option<Vec<Plan>> = None;
        let (mut plan, scope) = if leaves.is_empty() {
            (Plan::Unit, Scope::default())
        } else if leaves.len() >= 3 && s.where_clause.is_some() {
            let mut scope = Scope::default();
            let mut plans = Vec::with_capacity(leaves.len());
            for (p, sc) in leaves {
                scope.append(sc);
                plans.push(p);
            }
            unordered = Some(plans);
            (Plan::Unit, scope)
        } else {
            cross_all(leaves)?
        };
        // WHERE
        if let Some(w) = &s.where_clause {
            if contains_aggregate(w) {
                return Err(SqlError::new(
                    147,
                    15,
                    1,
                    "An aggregate may not appear in the WHERE clause unless it is in a subquery contained in a HAVING clause or a select list, and the column being aggregated is an outer reference.",
                ));
            }
            let pred = self.bind_expr(w, &scope)?;
            let mut cs = Vec::new();
            conjuncts(pred, &mut cs);
            plan = match unordered.take() {
                Some(leaves) => reorder_joins(leaves, cs, self.cx)?,
                None => push_down(plan, cs, self.cx)?,
            };
        }
        // GROUP BY / aggregates
        let has_agg = s.items.iter().any(|i| match i {
            SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => contains_aggregate(expr),
            _ => false,
        }) || s.having.as_ref().is_some_and(contains_aggregate)
            || order_by.iter().any(|o| contains_aggregate(&o.expr));
        let grouped = !s.group_by.is_empty() || has_agg;
        let mut cur_scope = scope.clone();
        let mut agg_built = false;
        if grouped {
            let mut key_asts: Vec<Expr> = Vec::new();
            let mut sets: Option<Vec<Vec<bool>>> = None;
            for g in &s.group_by {
                match g {
                    GroupByItem::Expr(e) => key_asts.push(e.clone()),
                    GroupByItem::Rollup(v) | GroupByItem::Cube(v) => {
                        let base = key_asts.len();
                        key_asts.extend(v.iter().cloned());
                        let n = v.len();
                        let mut ss = Vec::new();
                        if matches!(g, GroupByItem::Rollup(_)) {
                            for k in (0..=n).rev() {
                                ss.push((0..n).map(|i| i < k).collect::<Vec<bool>>());
                            }
                        } else {
                            for mask in (0..(1u32 << n)).rev() {
                                ss.push((0..n).map(|i| mask & (1 << (n - 1 - i)) != 0).collect());
                            }
                        }
                        let prev: Vec<Vec<bool>> = sets.take().unwrap_or_else(|| vec![vec![true; base]]);
                        let mut combined = Vec::new();
                        for p in &prev {
                            for s2 in &ss {
                                let mut v = p.clone();
                                v.resize(base, true);
                                v.extend(s2);
                                combined.push(v);
                            }
                        }
                        sets = Some(combined);
                    }
                    GroupByItem::GroupingSets(list) => {
                        let base = key_asts.len();
                        let mut all: Vec<Expr> = Vec::new();
                        for set in list {
                            for e in set {
                                if !all.iter().any(|x| x.to_string() == e.to_string()) {
                                    all.push(e.clone());
                                }
                            }
                        }
                        key_asts.extend(all.iter().cloned());
                        let ss: Vec<Vec<bool>> = list
                            .iter()
                            .map(|set| {
                                let mut v = vec![true; base];
                                v.extend(all.iter().map(|x| set.iter().any(|e| e.to_string() == x.to_string())));
                                v
                            })
                            .collect();
                        sets = Some(ss);
                    }
                }
            }
            if let Some(ss) = &mut sets {
                for v in ss.iter_mut() {
                    v.resize(key_asts.len(), true);
                }
            }
            let mut key_exprs = Vec::new();
            for k in &key_asts {
                let e = self.bind_expr(k, &scope)?;
                errors::check_sortable(&e.ty(), "GROUP BY")?;
                key_exprs.push(e);
            }
            self.agg = Some(AggState {
                keys: key_asts.iter().map(|k| k.to_string().to_ascii_lowercase()).collect(),
                key_exprs: key_exprs.clone(),
                aggs: Vec::new(),
                agg_sources: Vec::new(),
                input: scope.clone(),
            });
            // Post-aggregate scope: grouping keys keep their names for ORDER BY/select.
            let mut sc = Scope::default();
            for (i, k) in key_asts.iter().enumerate() {
                let (table, name) = match &k.kind {
                    ExprKind::Column(n) => (n.qualifier(1).map(|q| q.value.clone()), n.name().value.clone()),
                    _ => (None, String::new()),
                };
                sc.cols.push(ScopeCol {
                    table,
                    name,
                    ty: key_exprs[i].ty(),
                    nullable: true,
                    exposed: None,
                    collation: key_exprs[i].collation(self.database_collation()),
                });
            }
            cur_scope = sc;
            agg_built = true;
            let _ = sets.as_ref();
            self.cx.pending_sets = sets;
        }
        // Bind the select list, HAVING and ORDER BY against the (grouped) scope. Window
        // functions are collected as extra columns.
        let base_width = if agg_built { usize::MAX } else { cur_scope.cols.len() };
        let _ = base_width;
        let mut items: Vec<(BExpr, String, bool)> = Vec::new();
        let mut assigns: Vec<(String, AssignOp)> = Vec::new();
        // Having first so that aggregates referenced there get their columns.
        let r = self.bind_select_parts(s, &scope, &cur_scope, &mut items, &mut assigns, order_by);
        let (having, order_keys, window_fns) = match r {
            Ok(v) => v,
            Err(e) => {
                self.agg = None;
                self.windows = None;
                return Err(e);
            }
        };
        if agg_built {
            let agg = self.agg.take().ok_or_else(|| SqlError::new(8120, 16, 1, "grouping"))?;
            let mut cols = Vec::new();
            let db = self.database_collation();
            for (i, k) in agg.key_exprs.iter().enumerate() {
                cols.push(OutCol::new(cur_scope.cols[i].name.clone(), k.ty(), true).with_collation(k.collation(db)));
            }
            for a in &agg.aggs {
                cols.push(OutCol::new("", a.result_type, true));
            }
            let sets = self.cx.pending_sets.take();
            plan = Plan::Aggregate {
                input: Box::new(plan),
                keys: agg.key_exprs,
                aggs: agg.aggs,
                sets,
                scalar: s.group_by.is_empty(),
                cols,
            };
        }
        if let Some(h) = having {
            plan = Plan::Filter { input: Box::new(plan), pred: h };
        }
        if !window_fns.is_empty() {
            let mut cols = plan.columns();
            for w in &window_fns {
                cols.push(OutCol::new("", w.ty, true));
            }
            plan = Plan::Window { input: Box::new(plan), funcs: window_fns, cols };
        }
        // Variable assignment SELECT: the caller handles it (assigns non-empty).
        if !assigns.is_empty() {
            self.cx.pending_assigns = assigns;
        }
        // Projection with hidden sort columns.
        let visible = items.len();
        let mut exprs: Vec<BExpr> = items.iter().map(|i| i.0.clone()).collect();
        let db = self.database_collation();
        let mut cols: Vec<OutCol> = items
            .iter()
            .map(|i| {
                OutCol::new(i.1.clone(), i.0.ty(), i.2)
                    .with_collation(i.0.collation(db))
                    .with_label(i.0.collation_label())
            })
            .collect();
        let mut sort_keys = Vec::new();
        for (e, desc) in order_keys {
            let pos =
                match &e {
                    OrderKey::Position(p) => *p,
                    OrderKey::Expr(x) => {
                        if s.distinct {
                            // Must match a select item.
                            match exprs.iter().position(|y| format!("{y:?}") == format!("{x:?}")) {
                                Some(p) => p,
                                None => return Err(SqlError::new(
                                    145,
                                    15,
                                    1,
                                    "ORDER BY items must appear in the select list if SELECT DISTINCT is specified.",
                                )),
                            }
                        } else {
                            exprs.push(x.clone());
                            cols.push(OutCol::new("", x.ty(), true));
                            exprs.len() - 1
                        }
                    }
                };
            errors::check_sortable(&cols[pos].ty, "ORDER BY")?;
            // The projected column keeps its expression's collation label.
            let expr = relabel(BExpr::Col(pos, cols[pos].ty), &exprs[pos], db);
            sort_keys.push(SortKey { expr, desc });
        }
        if s.distinct {
            for c in &cols[..visible] {
                errors::check_distinct(&c.ty)?;
            }
        }
        plan = Plan::Project { input: Box::new(plan), exprs, cols };
        if s.distinct {
            plan = Plan::Distinct { input: Box::new(plan) };
        }
        if !sort_keys.is_empty() {
            plan = Plan::Sort { input: Box::new(plan), keys: sort_keys.clone() };
        }
        if let Some(top) = &s.top {
            let count = self.bind_expr(&top.quantity, &Scope::default())?;
            let ties = if top.with_ties {
                if sort_keys.is_empty() {
                    return Err(SqlError::new(
                        1062,
                        16,
                        1,
                        "The TOP N WITH TIES clause is not allowed without a corresponding ORDER BY clause.",
                    ));
                }
                Some(sort_keys.clone())
            } else {
                None
            };
            plan = Plan::Top { input: Box::new(plan), count: Some(count), percent: top.percent, ties, offset: None };
        }
        if offset.is_some() || fetch.is_some() {
            if sort_keys.is_empty() {
                return Err(SqlError::new(
                    10743,
                    15,
                    1,
                    "The number of rows provided for a TOP or FETCH clauses row count parameter must be an integer.",
                ));
            }
            let count = match fetch {
                Some(e) => Some(self.bind_expr(e, &Scope::default())?),
                None => None,
            };
            let offset = match offset {
                Some(e) => Some(self.bind_expr(e, &Scope::default())?),
                None => None,
            };
            plan = Plan::Top { input: Box::new(plan), count, percent: false, ties: None, offset };
        }
        if plan.width() > visible {
            plan = Plan::Trim { input: Box::new(plan), keep: visible };
        }
        Ok(plan)
    }

    #[allow(clippy::type_complexity)]
    fn bind_select_parts(
        &mut self,
        s: &Select,
        from_scope: &Scope,
        scope: &Scope,
        items: &mut Vec<(BExpr, String, bool)>,
        assigns: &mut Vec<(String, AssignOp)>,
        order_by: &[OrderByItem],
    ) -> Result<(Option<BExpr>, Vec<(OrderKey, bool)>, Vec<WindowFn>), SqlError> {
        let having = match &s.having {
            Some(h) => Some(self.bind_expr(h, scope)?),
            None => None,
        };
        // Widths are known after all aggregates are collected; window columns go after
        // the (grouped) row. Bind windows with a provisional base and fix up after.
        let any_window = s.items.iter().any(|i| match i {
            SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => contains_window(expr),
            _ => false,
        }) || order_by.iter().any(|o| contains_window(&o.expr));
        const WBASE: usize = 1 << 30;
        if any_window {
            self.windows = Some((WBASE, Vec::new()));
        }
        for item in &s.items {
            match item {
                SelectItem::Wildcard(q) => {
                    let mut any = false;
                    for (i, c) in from_scope.cols.iter().enumerate() {
                        if let Some(q) = q {
                            let t = &q.name().value;
                            if !c.table.as_deref().is_some_and(|ct| ct.eq_ignore_ascii_case(t)) {
                                continue;
                            }
                        }
                        if c.name == "%%physloc%%" {
                            continue;
                        }
                        any = true;
                        // After GROUP BY, * may only name grouping columns.
                        let e = match &self.agg {
                            Some(agg) => {
                                match agg.key_exprs.iter().position(|k| matches!(k, BExpr::Col(j, _) if *j == i)) {
                                    Some(k) => BExpr::Col(k, c.ty),
                                    None => {
                                        let mut parts: Vec<Ident> = c
                                            .exposed
                                            .as_ref()
                                            .or(c.table.as_ref())
                                            .map(|t| t.split('.').map(Ident::plain).collect())
                                            .unwrap_or_default();
                                        parts.push(Ident::plain(c.name.clone()));
                                        return Err(errors::not_in_group_by(&parts));
                                    }
                                }
                            }
                            None => BExpr::Col(i, c.ty),
                        };
                        items.push((e, c.name.clone(), c.nullable));
                    }
                    if !any {
                        if let Some(q) = q {
                            return Err(errors::multipart_not_bound(&q.parts));
                        }
                        return Err(SqlError::new(263, 16, 1, "Must specify table to select from."));
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let b = self.bind_expr(expr, scope)?;
                    let name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| derived_name(expr));
                    let nullable = !matches!(&b, BExpr::Const(v, _) if !v.is_null());
                    items.push((b, name, nullable));
                }
                SelectItem::Assign { variable, op, expr } => {
                    let b = self.bind_expr(expr, scope)?;
                    items.push((b, String::new(), true));
                    assigns.push((variable.clone(), *op));
                }
            }
        }
        if !assigns.is_empty() && assigns.len() != items.len() {
            return Err(SqlError::new(
                141,
                15,
                1,
                "A SELECT statement that assigns a value to a variable must not be combined with data-retrieval operations.",
            ));
        }
        let mut keys = Vec::new();
        for o in order_by {
            let desc = o.direction == Some(SortDirection::Desc);
            if let Some(n) = is_literal_int(&o.expr) {
                if n < 1 || n as usize > items.len() {
                    return Err(errors::order_by_position(items.len()));
                }
                keys.push((OrderKey::Position(n as usize - 1), desc));
                continue;
            }
            // A select-list alias.
            if let ExprKind::Column(name) = &o.expr.kind {
                if name.parts.len() == 1 {
                    let matches: Vec<usize> = s
                        .items
                        .iter()
                        .enumerate()
                        .filter(|(_, it)| matches!(it, SelectItem::Expr { alias: Some(a), .. } if a.value.eq_ignore_ascii_case(&name.parts[0].value)))
                        .map(|(i, _)| i)
                        .collect();
                    if let Some(&i) = matches.first() {
                        // Positions in `items` match `s.items` unless a wildcard came first.
                        let pos =
                            items.iter().position(|it| it.1.eq_ignore_ascii_case(&name.parts[0].value)).unwrap_or(i);
                        keys.push((OrderKey::Position(pos), desc));
                        continue;
                    }
                }
            }
            let b = self.bind_expr(&o.expr, scope)?;
            // Same expression as a select item: sort by that column.
            if let Some(p) = items.iter().position(|it| format!("{:?}", it.0) == format!("{b:?}")) {
                keys.push((OrderKey::Position(p), desc));
            } else {
                keys.push((OrderKey::Expr(b), desc));
            }
        }
        let mut windows = Vec::new();
        if let Some((_, list)) = self.windows.take() {
            windows = list;
        }
        if !windows.is_empty() {
            // Window columns come right after the grouped/base row.
            let base = match &self.agg {
                Some(a) => a.keys.len() + a.aggs.len(),
                None => from_scope.cols.len(),
            };
            let fix = |e: &BExpr| {
                e.remap(&|i, t| if i >= WBASE { BExpr::Col(i - WBASE + base, t) } else { BExpr::Col(i, t) })
            };
            for it in items.iter_mut() {
                it.0 = fix(&it.0);
            }
            for (k, _) in keys.iter_mut() {
                if let OrderKey::Expr(e) = k {
                    *e = fix(e);
                }
            }
        }
        Ok((having, keys, windows))
    }

    // ---------------------------------------------------------------------------------
    // FROM
    // ---------------------------------------------------------------------------------

    pub fn plan_from(&mut self, from: &[TableWithJoins]) -> Result<(Plan, Scope), SqlError> {
        let leaves = self.plan_from_items(from)?;
        cross_all(leaves)
    }

    /// Plans each comma-separated FROM item on its own (an item keeps its JOINs).
    fn plan_from_items(&mut self, from: &[TableWithJoins]) -> Result<Vec<(Plan, Scope)>, SqlError> {
        from.iter().map(|twj| self.plan_table_with_joins(twj, None)).collect()
    }

    pub(super) fn plan_table_with_joins(
        &mut self,
        twj: &TableWithJoins,
        _left: Option<&Scope>,
    ) -> Result<(Plan, Scope), SqlError> {
        let (mut plan, mut scope) = self.plan_factor(&twj.relation, None)?;
        for j in &twj.joins {
            let apply = matches!(j.kind, JoinKind::CrossApply | JoinKind::OuterApply);
            let (rp, rs) = if apply {
                // The right side runs once per left row, reading it as its outer row.
                let (rp, rs) = self.plan_factor(&j.relation, Some(&scope))?;
                (super::index_spool::decorrelate(rp), rs)
            } else {
                self.plan_factor(&j.relation, None)?
            };
            let mut combined = scope.clone();
            combined.append(rs);
            let mut cols = plan.columns();
            cols.extend(rp.columns());
            let on = match &j.on {
                Some(e) => Some(self.bind_expr(e, &combined)?),
                None => None,
            };
            let left_width = plan.width();
            plan = make_join(plan, rp, j.kind, on, cols, left_width, j.hint.as_deref())?;
            scope = combined;
        }
        Ok((plan, scope))
    }

    /// Plans one table source. `apply_left`: the left scope of an APPLY (pushed as an
    /// outer scope while binding the right side).
    fn plan_factor(&mut self, f: &TableFactor, apply_left: Option<&Scope>) -> Result<(Plan, Scope), SqlError> {
        if let Some(l) = apply_left {
            self.outer.push(l.clone());
            let r = self.plan_factor(f, None);
            self.outer.pop();
            return r;
        }
        match f {
            TableFactor::Table { name, alias, hints } => {
                let alias_name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| name.name().value.clone());
                // CTEs
                if name.parts.len() == 1 {
                    let key = name.name().value.to_ascii_lowercase();
                    if let Some(def) = self.ctes.iter().rev().find_map(|m| m.get(&key).cloned()) {
                        return self.plan_cte(def, &alias_name);
                    }
                }
                // A trigger body's `inserted` / `deleted`.
                if let Some((rows, cols)) = super::trigger::pseudo_table(self.cx, name) {
                    let scope = Scope::from_cols(Some(&alias_name), &cols);
                    return Ok((Plan::Rows { rows, cols }, scope));
                }
                let (mut plan, cols) = self.table_source(name)?;
                if let Plan::Scan(node) = &mut plan {
                    // Locking hints on a table (on a view they are not passed down yet).
                    node.hints = crate::host::LockHints::from_table_hints(hints);
                }
                let mut scope = Scope::from_cols(Some(&alias_name), &cols);
                if alias.is_none() && name.parts.len() > 1 {
                    let written = name.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".");
                    for c in &mut scope.cols {
                        c.exposed = Some(written.clone());
                    }
                }
                Ok((plan, scope))
            }
            TableFactor::Variable { name, alias } => {
                let t = self.cx.table_variable(name)?;
                let alias_name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| name.clone());
                // The target of UPDATE/DELETE ... FROM @t: its scan carries the locator.
                let with_locator = self.cx.dml_target == Some((t.db, t.object_id));
                let mut cols = t.out_cols();
                if with_locator {
                    cols.push(OutCol::new(
                        "%%physloc%%",
                        SqlType::VarBinary { len: types::Length::Bounded(900) },
                        false,
                    ));
                }
                Ok((Plan::Scan(ScanNode::all(t, with_locator)), Scope::from_cols(Some(&alias_name), &cols)))
            }
            TableFactor::Derived { query, alias } => {
                let saved_agg = self.agg.take();
                let saved_win = self.windows.take();
                let r = self.plan_query(query);
                self.agg = saved_agg;
                self.windows = saved_win;
                let (plan, mut cols) = r?;
                let alias_name = alias.as_ref().map(|a| a.name.value.clone());
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns)?;
                }
                for (i, c) in cols.iter().enumerate() {
                    if c.name.is_empty() {
                        return Err(SqlError::new(
                            8155,
                            16,
                            2,
                            format!(
                                "No column name was specified for column {} of '{}'.",
                                i + 1,
                                alias_name.clone().unwrap_or_default()
                            ),
                        ));
                    }
                }
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(alias_name.as_deref(), &cols)))
            }
            TableFactor::Values { rows, alias } => {
                let mut bound = Vec::new();
                let mut types: Vec<Option<SqlType>> = Vec::new();
                for r in rows {
                    let mut br = Vec::new();
                    for (i, e) in r.iter().enumerate() {
                        let b = self.bind_expr(e, &Scope::default())?;
                        if types.len() <= i {
                            types.push(None);
                        }
                        types[i] = result_type_of(types[i], &b)?;
                        br.push(b);
                    }
                    bound.push(br);
                }
                let width = types.len();
                if bound.iter().any(|r| r.len() != width) {
                    return Err(SqlError::new(
                        10709,
                        16,
                        1,
                        "The number of columns for each row in a table value constructor must be the same.",
                    ));
                }
                let types: Vec<SqlType> = types.into_iter().map(|t| t.unwrap_or(SqlType::Int)).collect();
                for r in bound.iter_mut() {
                    for (i, e) in r.iter_mut().enumerate() {
                        if e.ty() != types[i] {
                            *e = BExpr::Convert {
                                expr: Box::new(e.clone()),
                                to: types[i],
                                style: None,
                                try_: false,
                                code_page: types::CodePage::CP1252,
                            };
                        }
                    }
                }
                // A column's collation combines its rows' labels (literals: the database's).
                let db = self.database_collation();
                let mut cols: Vec<OutCol> = types
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let label =
                            bound.iter().fold(CollationLabel::Default, |l, r| l.combine(r[i].collation_label()));
                        OutCol::new("", *t, true).with_collation(if t.is_character() {
                            label.collation(db)
                        } else {
                            None
                        })
                    })
                    .collect();
                let alias_name = alias.as_ref().map(|a| a.name.value.clone());
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns)?;
                }
                Ok((Plan::Values { rows: bound, cols: cols.clone() }, Scope::from_cols(alias_name.as_deref(), &cols)))
            }
            TableFactor::Function { name, args, alias } => {
                let alias_name =
                    alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| name.name().value.clone());
                let (plan, mut cols) = self.plan_table_function(name, args)?;
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns)?;
                }
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(&alias_name), &cols)))
            }
            TableFactor::OpenJson { args, schema, alias } => {
                let alias_name = alias.as_ref().map_or_else(|| "OPENJSON".to_string(), |a| a.name.value.clone());
                let (plan, mut cols) = super::openjson::plan(self, args, schema.as_deref())?;
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns)?;
                }
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(&alias_name), &cols)))
            }
            TableFactor::XmlNodes { target, args, alias } => super::xml::plan_nodes(self, target, args, alias),
            TableFactor::NestedJoin(t) => self.plan_table_with_joins(t, None),
            TableFactor::Pivot { source, aggregate, value, column, values, alias } => {
                super::pivot::plan_pivot(self, source, aggregate, value, column, values, alias)
            }
            TableFactor::Unpivot { source, value, name, columns, alias } => {
                super::pivot::plan_unpivot(self, source, value, name, columns, alias)
            }
        }
    }

    fn plan_cte(&mut self, def: CteDef, alias: &str) -> Result<(Plan, Scope), SqlError> {
        match def {
            CteDef::WorkTable { id, cols } => {
                Ok((Plan::WorkTable { id, cols: cols.clone() }, Scope::from_cols(Some(alias), &cols)))
            }
            CteDef::Query(cte) => {
                let name = cte.name.value.to_ascii_lowercase();
                // Recursive: the body is anchor UNION ALL recursive, where the recursive
                // member references the CTE.
                let recursive = query_references(&cte.query, &name);
                let saved_agg = self.agg.take();
                let saved_win = self.windows.take();
                let saved_outer = std::mem::take(&mut self.outer);
                // A CTE is bound where it is defined: no outer scopes of the referencing query.
                self.outer = saved_outer.clone();
                let r = if recursive { self.plan_recursive_cte(&cte, &name) } else { self.plan_query(&cte.query) };
                self.outer = saved_outer;
                self.agg = saved_agg;
                self.windows = saved_win;
                let (plan, mut cols) = r?;
                rename_columns(&mut cols, &cte.columns)?;
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(alias), &cols)))
            }
        }
    }

    fn plan_recursive_cte(&mut self, cte: &Cte, name: &str) -> Result<(Plan, Vec<OutCol>), SqlError> {
        let SetExpr::SetOp { op: SetOperator::UnionAll, left, right } = &cte.query.body else {
            return Err(SqlError::new(
                252,
                16,
                1,
                format!(
                    "Recursive common table expression '{}' does not contain a top-level UNION ALL operator.",
                    cte.name.value
                ),
            ));
        };
        // Hide the CTE name while planning the anchor.
        self.ctes.push(HashMap::new());
        let anchor = self.plan_set_expr(left);
        self.ctes.pop();
        let anchor = anchor?;
        let mut cols = anchor.columns();
        rename_columns(&mut cols, &cte.columns)?;
        let id = self.next_work_table;
        self.next_work_table += 1;
        let mut map = HashMap::new();
        map.insert(name.to_string(), CteDef::WorkTable { id, cols: cols.clone() });
        self.ctes.push(map);
        let rec = self.plan_set_expr(right);
        self.ctes.pop();
        let rec = rec?;
        if rec.width() != cols.len() {
            return Err(SqlError::new(
                205,
                16,
                1,
                "All queries combined using a UNION, INTERSECT or EXCEPT operator must have an equal number of expressions in their target lists.",
            ));
        }
        let max = self.cx.max_recursion;
        Ok((
            Plan::RecursiveCte {
                id,
                anchor: Box::new(anchor),
                recursive: Box::new(rec),
                max_recursion: max,
                cols: cols.clone(),
            },
            cols,
        ))
    }

    fn plan_table_function(&mut self, name: &ObjectName, args: &[Expr]) -> Result<(Plan, Vec<OutCol>), SqlError> {
        let fname = name.name().value.to_ascii_lowercase();
        // Built-in table functions.
        if name.parts.len() == 1 || name.schema().is_some_and(|s| s.eq_ignore_case("sys")) {
            if let Some(r) = super::sysviews::table_function(&fname, args, self)? {
                return Ok(r);
            }
        }
        let (db, obj) = self.cx.resolve_object(name)?.ok_or_else(|| errors::invalid_object(&errors::written(name)))?;
        if let crate::catalog::ObjectBody::TableFunction(_) = &obj.body {
            return super::tvf::plan_call(self, db, &obj, name, args);
        }
        let crate::catalog::ObjectBody::InlineFunction(m) = &obj.body else {
            return Err(SqlError::new(
                215,
                16,
                1,
                format!("Parameters supplied for object '{}' which is not a function.", name.name().value),
            ));
        };
        let def = super::parse_module(&m.definition)?;
        let StatementKind::CreateFunction(cf) = &def.kind else {
            return Err(errors::invalid_object(&errors::written(name)));
        };
        let FunctionBody::InlineTable { query } = &cf.returns else {
            return Err(errors::invalid_object(&errors::written(name)));
        };
        if args.len() != cf.params.len() {
            return Err(SqlError::new(
                216,
                16,
                1,
                format!("Parameters were not supplied for the function '{}'.", name.name().value),
            ));
        }
        let mut map = HashMap::new();
        for (p, a) in cf.params.iter().zip(args) {
            let ty = resolve_type(&p.data_type)?;
            // DEFAULT: the parameter's default value.
            let a = match (&a.kind, &p.default) {
                (ExprKind::Default, Some(d)) => d,
                _ => a,
            };
            let arg = Expr::new(ExprKind::Cast {
                expr: Box::new(a.clone()),
                data_type: p.data_type.clone(),
                try_cast: false,
            });
            let _ = ty;
            map.insert(p.name.clone(), (arg, self.outer.len()));
        }
        self.params.push(map);
        let saved_db = self.cx.state.database;
        self.cx.state.database = db;
        let saved_agg = self.agg.take();
        let r = self.plan_query(query);
        self.agg = saved_agg;
        self.cx.state.database = saved_db;
        self.params.pop();
        r
    }
}

enum OrderKey {
    Position(usize),
    Expr(BExpr),
}

/// Renames a plan's output columns (derived table and CTE column lists).
/// Joins FROM items left to right with cross joins (the written order).
fn cross_all(leaves: Vec<(Plan, Scope)>) -> Result<(Plan, Scope), SqlError> {
    let mut acc: Option<(Plan, Scope)> = None;
    for (p, s) in leaves {
        acc = Some(match acc {
            None => (p, s),
            Some((lp, mut ls)) => {
                let mut cols = lp.columns();
                cols.extend(p.columns());
                ls.append(s);
                (Plan::NestedLoop { left: Box::new(lp), right: Box::new(p), kind: JoinKind::Cross, on: None, cols }, ls)
            }
        });
    }
    acc.ok_or_else(|| SqlError::new(102, 15, 1, "Incorrect syntax near 'FROM'."))
}

/// Join order for a FROM list of three or more items with WHERE conjuncts. Without
/// statistics the order is chosen greedily: start from the item with the most selective
/// local filter (an equality with a constant, then any filter), then repeatedly add an
/// item linked to the joined ones by an equality (filtered items first), so that cross
/// products only happen when the query asks for them. Each step is a hash join on the
/// linking equalities (built on the new item). The result is projected back to the
/// written column order, so the scope and every bound expression stay valid.
fn reorder_joins(leaves: Vec<Plan>, cs: Vec<BExpr>, cx: &mut Cx) -> Result<Plan, SqlError> {
    let n = leaves.len();
    let widths: Vec<usize> = leaves.iter().map(|p| p.width()).collect();
    let mut offsets = Vec::with_capacity(n);
    let mut total = 0;
    for w in &widths {
        offsets.push(total);
        total += w;
    }
    let leaf_of = |col: usize| offsets.iter().rposition(|&o| o <= col).unwrap_or(0);
    let mut original_cols = Vec::with_capacity(total);
    for p in &leaves {
        original_cols.extend(p.columns());
    }
    // Classify the conjuncts: local to one item, joining several, or kept on top
    // (subqueries and constants, evaluated over the written column order).
    let mut local: Vec<Vec<BExpr>> = vec![Vec::new(); n];
    let mut joining: Vec<(Vec<usize>, BExpr)> = Vec::new();
    let mut top = Vec::new();
    for c in cs {
        let mut used = Vec::new();
        c.columns(&mut used);
        let mut ls: Vec<usize> = used.iter().map(|&i| leaf_of(i)).collect();
        ls.sort_unstable();
        ls.dedup();
        if has_subquery(&c) || ls.is_empty() {
            top.push(c);
        } else if ls.len() == 1 {
            local[ls[0]].push(shift(&c, -(offsets[ls[0]] as isize)));
        } else {
            joining.push((ls, c));
        }
    }
    let rank = |i: usize| -> u8 {
        let eq_const = local[i].iter().any(|c| match c {
            BExpr::Cmp(BinaryOp::Eq, a, b, _) => a.is_constant() != b.is_constant(),
            _ => false,
        });
        if eq_const {
            2
        } else if local[i].is_empty() {
            0
        } else {
            1
        }
    };
    let ranks: Vec<u8> = (0..n).map(rank).collect();
    let mut plans: Vec<Option<Plan>> = Vec::with_capacity(n);
    for (p, l) in leaves.into_iter().zip(local) {
        plans.push(Some(push_down(p, l, cx)?));
    }
    // Greedy order.
    let mut order: Vec<usize> = Vec::with_capacity(n);
    let mut joined = vec![false; n];
    let best = |cands: &mut dyn Iterator<Item = usize>| -> Option<usize> {
        cands.fold(None, |b: Option<usize>, i| match b {
            Some(j) if ranks[j] >= ranks[i] => Some(j),
            _ => Some(i),
        })
    };
    let first = best(&mut (0..n)).unwrap_or(0);
    order.push(first);
    joined[first] = true;
    while order.len() < n {
        let linked = |i: usize| {
            joining.iter().any(|(ls, c)| {
                ls.contains(&i) && ls.iter().all(|&l| l == i || joined[l]) && matches!(c, BExpr::Cmp(BinaryOp::Eq, ..))
            })
        };
        let next = best(&mut (0..n).filter(|&i| !joined[i] && linked(i)))
            .or_else(|| best(&mut (0..n).filter(|&i| !joined[i])))
            .unwrap_or(0);
        order.push(next);
        joined[next] = true;
    }
    // New position of each written column.
    let mut new_pos = vec![0usize; total];
    let mut at = 0;
    for &l in &order {
        for k in 0..widths[l] {
            new_pos[offsets[l] + k] = at + k;
        }
        at += widths[l];
    }
    let mut done = vec![false; n];
    let mut applied = vec![false; joining.len()];
    let mut acc: Option<Plan> = None;
    for &l in &order {
        done[l] = true;
        let right = plans[l].take().unwrap_or(Plan::Unit);
        acc = Some(match acc {
            None => right,
            Some(left) => {
                let mut cols = left.columns();
                cols.extend(right.columns());
                let mut now = Vec::new();
                for (k, (ls, c)) in joining.iter().enumerate() {
                    if !applied[k] && ls.iter().all(|&x| done[x]) {
                        applied[k] = true;
                        now.push(c.remap(&|i, t| BExpr::Col(new_pos[i], t)));
                    }
                }
                let cross = Plan::NestedLoop {
                    left: Box::new(left),
                    right: Box::new(right),
                    kind: JoinKind::Cross,
                    on: None,
                    cols,
                };
                push_down(cross, now, cx)?
            }
        });
    }
    let joined_plan = acc.unwrap_or(Plan::Unit);
    let exprs = original_cols.iter().enumerate().map(|(i, c)| BExpr::Col(new_pos[i], c.ty)).collect();
    let projected = Plan::Project { input: Box::new(joined_plan), exprs, cols: original_cols };
    Ok(match and_all(top) {
        Some(p) => Plan::Filter { input: Box::new(projected), pred: p },
        None => projected,
    })
}

fn with_names(plan: Plan, cols: &[OutCol]) -> Plan {
    let width = cols.len();
    let exprs: Vec<BExpr> = (0..width).map(|i| BExpr::Col(i, cols[i].ty)).collect();
    if plan.columns().iter().map(|c| &c.name).eq(cols.iter().map(|c| &c.name)) {
        return plan;
    }
    Plan::Project { input: Box::new(plan), exprs, cols: cols.to_vec() }
}

fn rename_columns(cols: &mut [OutCol], names: &[Ident]) -> Result<(), SqlError> {
    if names.is_empty() {
        return Ok(());
    }
    if names.len() != cols.len() {
        return Err(SqlError::new(
            8158,
            16,
            1,
            "The number of columns specified does not match the number of columns of the query.",
        ));
    }
    for (c, n) in cols.iter_mut().zip(names) {
        c.name = n.value.clone();
    }
    Ok(())
}

fn query_references(q: &Query, name: &str) -> bool {
    // Textual check: does the query mention the name as a table source?
    let text = q.to_string().to_ascii_lowercase();
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '#' || c == '@')).any(|w| w == name)
}

/// Folds one more branch (CASE, COALESCE, IIF, VALUES rows) into the result type: the
/// higher precedence; for strings the longer length. A NULL literal has no type of its
/// own to contribute (SQL Server types it int only when every branch is NULL), so `None`
/// means "only NULLs so far"; callers default it to int.
pub fn result_type_of(acc: Option<SqlType>, e: &BExpr) -> Result<Option<SqlType>, SqlError> {
    if matches!(e, BExpr::Const(Value::Null, _)) {
        return Ok(acc);
    }
    let t = e.ty();
    Ok(Some(match acc {
        None => t,
        Some(a) => union_type(&a, &t)?,
    }))
}

/// Which select-list items of a set operation's branch are bare NULL literals (they do
/// not type the column; see `result_type_of`). A nested set operation's column counts as
/// NULL only when it is NULL on both sides.
fn null_literal_columns(s: &SetExpr) -> Vec<bool> {
    match s {
        SetExpr::Select(sel) => sel
            .items
            .iter()
            .map(|i| matches!(i, SelectItem::Expr { expr: Expr { kind: ExprKind::Literal(Literal::Null), .. }, .. }))
            .collect(),
        SetExpr::Query(q) => null_literal_columns(&q.body),
        SetExpr::SetOp { left, right, .. } => {
            null_literal_columns(left).iter().zip(null_literal_columns(right)).map(|(a, b)| *a && b).collect()
        }
    }
}

pub fn union_type(a: &SqlType, b: &SqlType) -> Result<SqlType, SqlError> {
    use types::Length;
    if a == b {
        return Ok(*a);
    }
    // text, ntext and image combine with what converts to them implicitly, compared
    // with nothing: the higher-precedence type.
    if a.is_legacy_lob() || b.is_legacy_lob() {
        let (hi, lo) = if b.has_higher_precedence_than(a) { (b, a) } else { (a, b) };
        return if convert::implicit_allowed(lo, hi) { Ok(*hi) } else { Err(convert::implicit_error(lo, hi)) };
    }
    let len = |t: &SqlType| -> Option<Length> {
        match t {
            SqlType::Char { len } | SqlType::NChar { len } => Some(Length::Bounded(*len)),
            SqlType::VarChar { len } | SqlType::NVarChar { len } => Some(*len),
            _ => None,
        }
    };
    if a.is_character() && b.is_character() {
        let unicode = a.is_unicode() || b.is_unicode();
        let l = match (len(a), len(b)) {
            (Some(Length::Max), _) | (_, Some(Length::Max)) => Length::Max,
            (Some(Length::Bounded(x)), Some(Length::Bounded(y))) => Length::Bounded(x.max(y)),
            _ => Length::Max,
        };
        return Ok(if unicode { SqlType::NVarChar { len: l } } else { SqlType::VarChar { len: l } });
    }
    if let (Some((p1, s1)), Some((p2, s2))) = (a.decimal_params(), b.decimal_params()) {
        if a.is_exact_numeric()
            && b.is_exact_numeric()
            && !matches!(a, SqlType::Money | SqlType::SmallMoney)
            && !matches!(b, SqlType::Money | SqlType::SmallMoney)
        {
            let s = s1.max(s2);
            let p = ((p1 - s1).max(p2 - s2) + s).min(38);
            return Ok(SqlType::Decimal { precision: p.max(1), scale: s });
        }
    }
    let t = if a.has_higher_precedence_than(b) { *a } else { *b };
    if (a.is_numeric() && b.is_character()) || (a.is_character() && b.is_numeric()) {
        return Ok(t);
    }
    ops::comparison_type(a, b)?;
    Ok(t)
}

/// Builds a join, turning equality predicates between the sides into hash keys.
pub(super) fn make_join(
    left: Plan,
    right: Plan,
    kind: JoinKind,
    on: Option<BExpr>,
    cols: Vec<OutCol>,
    left_width: usize,
    hint: Option<&str>,
) -> Result<Plan, SqlError> {
    let apply = matches!(kind, JoinKind::CrossApply | JoinKind::OuterApply);
    if apply || hint.is_some_and(|h| h.eq_ignore_ascii_case("LOOP")) {
        return Ok(Plan::NestedLoop { left: Box::new(left), right: Box::new(right), kind, on, cols });
    }
    let Some(on) = on else {
        return Ok(Plan::NestedLoop { left: Box::new(left), right: Box::new(right), kind, on: None, cols });
    };
    let mut cs = Vec::new();
    conjuncts(on, &mut cs);
    // Inner join: conjuncts on one side only are pushed into that side.
    let (mut left, mut right) = (left, right);
    let mut rest = Vec::new();
    for c in cs {
        let mut used = Vec::new();
        c.columns(&mut used);
        let only_left = !used.is_empty() && used.iter().all(|&i| i < left_width) && !has_subquery(&c);
        let only_right = !used.is_empty() && used.iter().all(|&i| i >= left_width) && !has_subquery(&c);
        if kind == JoinKind::Inner && only_left {
            left = Plan::Filter { input: Box::new(left), pred: c };
        } else if matches!(kind, JoinKind::Inner | JoinKind::LeftOuter) && only_right {
            right = Plan::Filter { input: Box::new(right), pred: shift(&c, -(left_width as isize)) };
        } else {
            rest.push(c);
        }
    }
    let (lk, rk, kt, residual) = split_equi(rest, left_width);
    if lk.is_empty() {
        return Ok(Plan::NestedLoop {
            left: Box::new(left),
            right: Box::new(right),
            kind,
            on: and_all(residual),
            cols,
        });
    }
    let hash_only = hint.is_some_and(|h| h.eq_ignore_ascii_case("HASH"));
    Ok(equi_join(EquiJoin {
        left,
        right,
        kind,
        left_keys: lk,
        right_keys: rk,
        key_types: kt,
        residual,
        cols,
        hash_only,
    }))
}

/// An equi-join whose strategy is still to be chosen (see [`equi_join`]).
struct EquiJoin {
    left: Plan,
    right: Plan,
    kind: JoinKind,
    left_keys: Vec<BExpr>,
    right_keys: Vec<BExpr>,
    key_types: Vec<SqlType>,
    residual: Vec<BExpr>,
    cols: Vec<OutCol>,
    /// The HASH join hint.
    hash_only: bool,
}

/// At most this many estimated outer rows make index nested loops the choice: a seek
/// through the host costs about 6,300 instructions, the hash join's build about 1,000
/// per row of the other input, whose size the planner does not know.
const INDEX_JOIN_MAX_OUTER: u64 = 16;

/// Chooses how an equi-join runs (docs/architecture.md, "Join strategy"): index nested
/// loops when one input is estimated at a few rows and the other is a table seekable by
/// its join key; a merge join when both inputs come in order of one integer key; else a
/// hash join, building on the input estimated smaller. An inner join may swap its
/// inputs (a projection puts the columns back in the written order).
fn equi_join(j: EquiJoin) -> Plan {
    let few = |p: &Plan| estimated_rows(p).is_some_and(|n| n <= INDEX_JOIN_MAX_OUTER);
    if !j.hash_only {
        if matches!(j.kind, JoinKind::Inner | JoinKind::LeftOuter) && few(&j.left) {
            if let Some(seek) = seek_by_outer(&j.right, &j.right_keys, &j.left_keys, &j.key_types) {
                return index_join(j, seek);
            }
        }
        if j.kind == JoinKind::Inner && few(&j.right) {
            if let Some(seek) = seek_by_outer(&j.left, &j.left_keys, &j.right_keys, &j.key_types) {
                let (lw, rw, cols) = (j.left.width(), j.right.width(), j.cols.clone());
                return in_written_order(index_join(swapped(j), seek), lw, rw, cols);
            }
        }
        if let ([BExpr::Col(l, lt)], [BExpr::Col(r, rt)], [kt]) =
            (&j.left_keys[..], &j.right_keys[..], &j.key_types[..])
        {
            let int = matches!(kt, SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt);
            if int && lt == kt && rt == kt && ordered_on(&j.left, *l) && ordered_on(&j.right, *r) {
                return Plan::MergeJoin {
                    left_key: *l,
                    right_key: *r,
                    left: Box::new(j.left),
                    right: Box::new(j.right),
                    kind: j.kind,
                    residual: and_all(j.residual),
                    cols: j.cols,
                };
            }
        }
    }
    // The hash join builds its right input: the smaller one when only the left's size
    // is known.
    if j.kind == JoinKind::Inner && estimated_rows(&j.left).is_some() && estimated_rows(&j.right).is_none() {
        let (lw, rw, cols) = (j.left.width(), j.right.width(), j.cols.clone());
        return in_written_order(hash_join(swapped(j)), lw, rw, cols);
    }
    hash_join(j)
}

fn hash_join(j: EquiJoin) -> Plan {
    Plan::HashJoin {
        left: Box::new(j.left),
        right: Box::new(j.right),
        kind: j.kind,
        left_keys: j.left_keys,
        right_keys: j.right_keys,
        key_types: j.key_types,
        residual: and_all(j.residual),
        cols: j.cols,
        hinted: j.hash_only,
    }
}

/// Index nested loops: `seek` (the right input seeking by the left row's keys) opened
/// for each left row; the key equalities are checked again with the residual.
fn index_join(j: EquiJoin, seek: Plan) -> Plan {
    let lw = j.left.width();
    let mut on: Vec<BExpr> = j
        .left_keys
        .into_iter()
        .zip(&j.right_keys)
        .zip(j.key_types)
        .map(|((l, r), t)| BExpr::Cmp(BinaryOp::Eq, Box::new(l), Box::new(shift(r, lw as isize)), t))
        .collect();
    on.extend(j.residual);
    Plan::IndexJoin { left: Box::new(j.left), right: Box::new(seek), kind: j.kind, on: and_all(on), cols: j.cols }
}

/// The same inner join with its inputs exchanged.
fn swapped(j: EquiJoin) -> EquiJoin {
    let (lw, rw) = (j.left.width(), j.right.width());
    let mut cols = j.cols[lw..].to_vec();
    cols.extend_from_slice(&j.cols[..lw]);
    let residual =
        j.residual.iter().map(|e| e.remap(&|i, t| BExpr::Col(if i < lw { i + rw } else { i - lw }, t))).collect();
    EquiJoin {
        left: j.right,
        right: j.left,
        kind: j.kind,
        left_keys: j.right_keys,
        right_keys: j.left_keys,
        key_types: j.key_types,
        residual,
        cols,
        hash_only: j.hash_only,
    }
}

/// The rows of a swapped join (right columns, then left) in the written order.
fn in_written_order(plan: Plan, lw: usize, rw: usize, cols: Vec<OutCol>) -> Plan {
    let exprs = (0..lw).map(|i| BExpr::Col(rw + i, cols[i].ty)).chain((0..rw).map(|i| BExpr::Col(i, cols[lw + i].ty)));
    Plan::Project { input: Box::new(plan), exprs: exprs.collect(), cols }
}

/// Rows a plan produces when the planner can tell without statistics: a seek by every
/// key column of a unique index (1), constant rows, and what keeps or multiplies those.
fn estimated_rows(plan: &Plan) -> Option<u64> {
    match plan {
        Plan::Unit => Some(1),
        Plan::Values { rows, .. } => Some(rows.len() as u64),
        Plan::Scan(s) => {
            let ix = &s.table.indexes[s.index];
            let r = s.range.as_ref()?;
            (ix.meta.unique && r.eq.len() >= ix.key_cols.len()).then_some(1)
        }
        Plan::Aggregate { keys, sets: None, .. } if keys.is_empty() => Some(1),
        Plan::Filter { input, .. }
        | Plan::Project { input, .. }
        | Plan::Sort { input, .. }
        | Plan::Trim { input, .. } => estimated_rows(input),
        Plan::IndexJoin { left, right, .. } => estimated_rows(left)?.checked_mul(estimated_rows(right)?),
        _ => None,
    }
}

/// Whether a plan's rows come in ascending order of column `col`: a scan of a
/// clustered index whose first key column it is (ascending), filtered or not.
fn ordered_on(plan: &Plan, col: usize) -> bool {
    match plan {
        Plan::Scan(s) => {
            let ix = &s.table.indexes[s.index];
            ix.meta.kind == crate::catalog::IndexKind::Clustered
                && !s.reverse
                && ix.key_cols.first() == Some(&col)
                && ix.desc.first() == Some(&false)
        }
        Plan::Filter { input, .. } => ordered_on(input, col),
        _ => false,
    }
}

/// Whether an expression reads an enclosing query's row (directly or in a subquery).
fn reads_outer(e: &BExpr) -> bool {
    let mut found = has_subquery(e);
    e.visit(&mut |x| found |= matches!(x, BExpr::Outer { .. }));
    found
}

/// `plan` (a table scan, filtered or not) seeking by `keys` = `outer_keys`, the latter
/// read from the outer row of index nested loops; None when no index seeks by them.
fn seek_by_outer(plan: &Plan, keys: &[BExpr], outer_keys: &[BExpr], types: &[SqlType]) -> Option<Plan> {
    match plan {
        Plan::Filter { input, pred } if !reads_outer(pred) => {
            Some(Plan::Filter { input: Box::new(seek_by_outer(input, keys, outer_keys, types)?), pred: pred.clone() })
        }
        // Expressions of the scan itself would have to be lifted past the outer row.
        Plan::Scan(s) if s.range.is_none() && !s.with_locator && !s.filter.as_ref().is_some_and(reads_outer) => {
            let cs: Vec<BExpr> = keys
                .iter()
                .zip(outer_keys)
                .zip(types)
                .filter(|((_, o), _)| !reads_outer(o))
                .map(|((k, o), t)| BExpr::Cmp(BinaryOp::Eq, Box::new(k.clone()), Box::new(lift(o, 1)), *t))
                .collect();
            let mut s = s.clone();
            choose_index(&mut s, &cs);
            if s.range.as_ref().is_none_or(|r| r.eq.is_empty()) {
                return None;
            }
            Some(Plan::Scan(s))
        }
        _ => None,
    }
}

/// The sides of an equality, its comparison type and its collation when not the default.
pub(super) fn equality(c: &BExpr) -> Option<(&BExpr, &BExpr, SqlType, Option<types::Collation>)> {
    match c {
        BExpr::Cmp(BinaryOp::Eq, a, b, ty) => Some((a, b, *ty, None)),
        BExpr::CollCmp(BinaryOp::Eq, a, b, ty, coll) => Some((a, b, *ty, Some(*coll))),
        _ => None,
    }
}

#[allow(clippy::type_complexity)]
fn split_equi(cs: Vec<BExpr>, left_width: usize) -> (Vec<BExpr>, Vec<BExpr>, Vec<SqlType>, Vec<BExpr>) {
    let mut lk = Vec::new();
    let mut rk = Vec::new();
    let mut kt = Vec::new();
    let mut residual = Vec::new();
    for c in cs {
        if let Some((a, b, ty, coll)) = equality(&c).filter(|_| !has_subquery(&c)) {
            let side = |e: &BExpr| -> Option<bool> {
                let mut used = Vec::new();
                e.columns(&mut used);
                if used.is_empty() {
                    None
                } else if used.iter().all(|&i| i < left_width) {
                    Some(true)
                } else if used.iter().all(|&i| i >= left_width) {
                    Some(false)
                } else {
                    None
                }
            };
            let (l, r) = match (side(a), side(b)) {
                (Some(true), Some(false)) => (a, b),
                (Some(false), Some(true)) => (b, a),
                _ => {
                    residual.push(c);
                    continue;
                }
            };
            let (l, r) = (l.clone(), shift(r, -(left_width as isize)));
            match coll {
                // Under a collation other than the default the keys are its sort keys.
                Some(coll) => {
                    lk.push(BExpr::CollationKey(Box::new(l), ty, coll));
                    rk.push(BExpr::CollationKey(Box::new(r), ty, coll));
                    kt.push(SqlType::VarBinary { len: types::Length::Max });
                }
                None => {
                    lk.push(l);
                    rk.push(r);
                    kt.push(ty);
                }
            }
            continue;
        }
        residual.push(c);
    }
    (lk, rk, kt, residual)
}

/// Pushes WHERE conjuncts down the FROM tree: into scans (with index seeks), into the
/// sides of inner joins, and turns cross joins with equalities into hash joins.
// The context is unused since index choice needs none; kept for the callers.
#[allow(clippy::only_used_in_recursion)]
pub fn push_down(plan: Plan, cs: Vec<BExpr>, cx: &mut Cx) -> Result<Plan, SqlError> {
    if cs.is_empty() {
        return Ok(plan);
    }
    match plan {
        Plan::Scan(mut s) => {
            let (pushable, keep): (Vec<BExpr>, Vec<BExpr>) = cs.into_iter().partition(|c| !has_subquery(c));
            choose_index(&mut s, &pushable);
            let mut all: Vec<BExpr> = s.filter.take().into_iter().collect();
            all.extend(pushable);
            s.filter = and_all(all);
            let p = Plan::Scan(s);
            Ok(match and_all(keep) {
                Some(k) => Plan::Filter { input: Box::new(p), pred: k },
                None => p,
            })
        }
        Plan::NestedLoop { left, right, kind: kind @ (JoinKind::Cross | JoinKind::Inner), on, cols } => {
            let lw = left.width();
            let mut lcs = Vec::new();
            let mut rcs = Vec::new();
            let mut both = Vec::new();
            for c in cs {
                let mut used = Vec::new();
                c.columns(&mut used);
                if has_subquery(&c) {
                    both.push(c);
                } else if used.iter().all(|&i| i < lw) {
                    lcs.push(c);
                } else if used.iter().all(|&i| i >= lw) {
                    rcs.push(shift(&c, -(lw as isize)));
                } else {
                    both.push(c);
                }
            }
            let left = push_down(*left, lcs, cx)?;
            let right = push_down(*right, rcs, cx)?;
            let mut rest: Vec<BExpr> = Vec::new();
            if let Some(o) = on {
                conjuncts(o, &mut rest);
            }
            let (with_sub, plain): (Vec<BExpr>, Vec<BExpr>) = both.into_iter().partition(has_subquery);
            rest.extend(plain);
            let (lk, rk, kt, residual) = split_equi(rest, lw);
            let joined = if lk.is_empty() {
                Plan::NestedLoop { left: Box::new(left), right: Box::new(right), kind, on: and_all(residual), cols }
            } else {
                equi_join(EquiJoin {
                    left,
                    right,
                    kind: JoinKind::Inner,
                    left_keys: lk,
                    right_keys: rk,
                    key_types: kt,
                    residual,
                    cols,
                    hash_only: false,
                })
            };
            Ok(match and_all(with_sub) {
                Some(p) => Plan::Filter { input: Box::new(joined), pred: p },
                None => joined,
            })
        }
        Plan::MergeJoin { left, right, kind: JoinKind::Inner, left_key, right_key, residual, cols } => {
            // As the hash join it may become (see below).
            let ty = cols[left_key].ty;
            let j = Plan::HashJoin {
                left,
                right,
                kind: JoinKind::Inner,
                left_keys: vec![BExpr::Col(left_key, ty)],
                right_keys: vec![BExpr::Col(right_key, ty)],
                key_types: vec![ty],
                residual,
                cols,
                hinted: false,
            };
            push_down(j, cs, cx)
        }
        Plan::HashJoin {
            left,
            right,
            kind: JoinKind::Inner,
            left_keys,
            right_keys,
            key_types,
            residual,
            cols,
            hinted,
        } => {
            let lw = left.width();
            let mut lcs = Vec::new();
            let mut rcs = Vec::new();
            let mut both = Vec::new();
            for c in cs {
                let mut used = Vec::new();
                c.columns(&mut used);
                if has_subquery(&c) || used.is_empty() {
                    both.push(c);
                } else if used.iter().all(|&i| i < lw) {
                    lcs.push(c);
                } else if used.iter().all(|&i| i >= lw) {
                    rcs.push(shift(&c, -(lw as isize)));
                } else {
                    both.push(c);
                }
            }
            let left = push_down(*left, lcs, cx)?;
            let right = push_down(*right, rcs, cx)?;
            // Chosen again: the pushed conjuncts may have made a side small.
            let mut rest = Vec::new();
            if let Some(r) = residual {
                conjuncts(r, &mut rest);
            }
            let j = equi_join(EquiJoin {
                left,
                right,
                kind: JoinKind::Inner,
                left_keys,
                right_keys,
                key_types,
                residual: rest,
                cols,
                hash_only: hinted,
            });
            Ok(match and_all(both) {
                Some(p) => Plan::Filter { input: Box::new(j), pred: p },
                None => j,
            })
        }
        Plan::Filter { input, pred } => {
            let mut all = Vec::new();
            conjuncts(pred, &mut all);
            all.extend(cs);
            push_down(*input, all, cx)
        }
        other => Ok(match and_all(cs) {
            Some(p) => Plan::Filter { input: Box::new(other), pred: p },
            None => other,
        }),
    }
}

/// Picks an index seek for a scan from its conjuncts: equality on a prefix of the key,
/// then a range on the next key column. All conjuncts stay as the residual filter, so a
/// loose seek range is never wrong.
fn choose_index(s: &mut ScanNode, cs: &[BExpr]) {
    let t = s.table.clone();
    let mut best: Option<(usize, SeekRange, usize)> = None;
    for (ix_pos, ix) in t.indexes.iter().enumerate() {
        if ix.meta.kind == crate::catalog::IndexKind::Heap || ix.filter.is_some() {
            continue;
        }
        let mut range = SeekRange::default();
        for (k, &col) in ix.key_cols.iter().enumerate() {
            if ix.desc.get(k).copied().unwrap_or(false) {
                break;
            }
            let col_ty = t.columns[col].ty;
            let mut found_eq = None;
            let mut lower = None;
            let mut upper = None;
            // The index keys this column under its own collation: a comparison under
            // that collation (the column's implicit label, or an explicit COLLATE naming
            // it) can seek; under another one it stays a filter, as in SQL Server.
            let col_coll = t.columns[col].collation.unwrap_or(types::Collation::DEFAULT);
            for c in cs {
                let (op, a, b, ty) = match c {
                    BExpr::Cmp(op, a, b, ty) => (op, a, b, ty),
                    BExpr::CollCmp(op, a, b, ty, coll) if *coll == col_coll => (op, a, b, ty),
                    _ => continue,
                };
                if *ty != col_ty {
                    continue;
                }
                let (op, other) = match (column_of(a), column_of(b)) {
                    (Some(i), _) if i == col && !b.uses_row() && !has_subquery(b) => (*op, &**b),
                    (_, Some(i)) if i == col && !a.uses_row() && !has_subquery(a) => (flip(*op), &**a),
                    _ => continue,
                };
                match op {
                    BinaryOp::Eq => found_eq = Some(other.clone()),
                    BinaryOp::Gt => lower = Some((other.clone(), false)),
                    BinaryOp::GtEq | BinaryOp::NotLt => lower = Some((other.clone(), true)),
                    BinaryOp::Lt => upper = Some((other.clone(), false)),
                    BinaryOp::LtEq | BinaryOp::NotGt => upper = Some((other.clone(), true)),
                    _ => {}
                }
            }
            if let Some(e) = found_eq {
                range.eq.push(e);
                continue;
            }
            range.lower = lower;
            range.upper = upper;
            break;
        }
        let score = range.eq.len() * 4 + usize::from(range.lower.is_some()) + usize::from(range.upper.is_some());
        if score == 0 {
            continue;
        }
        // Prefer the primary index on ties (no lookup).
        let score = score * 2 + usize::from(ix_pos == 0);
        if best.as_ref().is_none_or(|b| score > b.2) {
            best = Some((ix_pos, range, score));
        }
    }
    if let Some((ix, range, _)) = best {
        s.index = ix;
        s.range = Some(range);
    }
}

/// The table column an operand of a comparison is, through a collation label.
fn column_of(e: &BExpr) -> Option<usize> {
    match e {
        BExpr::Col(i, _) => Some(*i),
        BExpr::ImplicitColl(inner, _) | BExpr::Collated(inner, _) => column_of(inner),
        _ => None,
    }
}

fn flip(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Lt => BinaryOp::Gt,
        BinaryOp::Gt => BinaryOp::Lt,
        BinaryOp::LtEq => BinaryOp::GtEq,
        BinaryOp::GtEq => BinaryOp::LtEq,
        BinaryOp::NotLt => BinaryOp::NotGt,
        BinaryOp::NotGt => BinaryOp::NotLt,
        o => o,
    }
}

/// An expression bound in an enclosing scope, seen from `levels` scopes deeper.
pub fn lift(e: &BExpr, levels: usize) -> BExpr {
    if levels == 0 {
        return e.clone();
    }
    e.map_leaves(&|x| match x {
        BExpr::Outer { depth, index, ty } => Some(BExpr::Outer { depth: depth + levels, index: *index, ty: *ty }),
        BExpr::Col(i, t) => Some(BExpr::Outer { depth: levels, index: *i, ty: *t }),
        _ => None,
    })
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
