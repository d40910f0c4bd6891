//! Index spools for subqueries: a subquery run once per outer row (EXISTS, IN, a scalar
//! subquery) whose rows are matched to the outer row by equalities the planner could
//! not turn into an index seek reads its whole input for every outer row. SQL Server
//! puts an "Index Spool (Eager Spool)" there (a worktable indexed on the correlated
//! columns) or turns the subquery into a hash semi join; Mesquite builds a hash table of
//! the subquery's uncorrelated part, keyed on the inner side of those equalities, once
//! per statement, and each outer row then reads only its matching rows.
//!
//! - [`decorrelate`] rewrites a subquery's plan: a filter whose conjuncts include
//!   `inner = outer` equalities becomes the rows of a [`Plan::IndexSpool`] built from the
//!   filter's input and its uncorrelated conjuncts, the other correlated conjuncts
//!   staying as a filter above it.
//! - [`in_subquery_spool`] keys an uncorrelated `x [NOT] IN (subquery)` on its column:
//!   each probe returns the rows equal to `x` and those whose value is NULL (what IN's
//!   UNKNOWN needs), so IN's evaluation is unchanged and reads a few rows instead of all.
//!
//! Like the lazy spool (`Plan::Spool`), the first execution streams the subquery as
//! written (a subquery run once reads no more than it needs); the second builds the
//! table. A build side that raises an error (a conversion of a key) or has more than
//! [`MAX_BUILD_ROWS`] rows is not kept: the subquery then runs as written every time.

use std::collections::HashMap;
use std::sync::Arc;

use types::hash::FxBuild;
use types::{SqlError, SqlType};

use super::context::Cx;
use super::expr::{BExpr, Row};
use super::plan::{expr_vars_read, map_row_input, open, vars_read, Op, OpResult, Plan, Spooled};
use super::query::{and_all, conjuncts, equality};
use crate::ast::JoinKind;
use crate::scalar::convert;

/// The most rows an index spool keeps in memory; a larger build side is not spooled.
pub const MAX_BUILD_ROWS: usize = 2_000_000;

#[derive(Debug, Clone)]
pub struct IndexSpoolNode {
    /// The plan as written: run by the first execution, and every time when the build
    /// side could not be kept. Returns a superset of what a probe returns that the
    /// consumer filters the same way (the correlated conjuncts stay above the spool).
    pub original: Plan,
    /// The rows to index: the original without the correlated equalities.
    pub build: Plan,
    /// Per key: the inner side (over a build row), the outer side (read at each
    /// execution; reads the enclosing row as outer depth 1), and the comparison type.
    pub inner_keys: Vec<BExpr>,
    pub outer_keys: Vec<BExpr>,
    pub key_types: Vec<SqlType>,
    /// The key is IN's value (one key): a NULL outer value reads every row, and rows
    /// whose inner value is NULL are returned by every probe.
    pub in_value: bool,
    pub id: usize,
    /// The variables the build side reads: it is built again when one has changed.
    pub vars: Vec<usize>,
}

/// A statement's built index spool.
pub struct SpoolTable {
    rows: Vec<Row>,
    /// Row numbers grouped by key, each group in build order; then (`in_value`) the rows
    /// whose value is NULL.
    postings: Vec<u32>,
    /// Each key's group in `postings`, by the keys' concatenated sort keys.
    by_key: HashMap<Vec<u8>, (u32, u32), FxBuild>,
    /// `in_value`: the NULL rows' part of `postings`.
    nulls: (u32, u32),
    /// The rows' share of the request's memory grant.
    _charge: super::memory::Charge,
}

fn next_id() -> usize {
    super::plan::next_spool_id()
}

/// Rewrites the plan of a subquery (run once per outer row) so that filters matching its
/// rows to the outer row by equality read an index spool instead of their whole input.
pub fn decorrelate(plan: Plan) -> Plan {
    // An index spool returns exactly the rows the subtree it replaces would (for the outer
    // row at hand), so the operators above it may be anything that reads its rows.
    let d = |b: Box<Plan>| Box::new(decorrelate(*b));
    match plan {
        Plan::Filter { input, pred } => {
            if vars_read(&input).is_none() {
                return Plan::Filter { input: d(input), pred };
            }
            let original = Plan::Filter { input: input.clone(), pred: pred.clone() };
            match split(pred) {
                Some(s) => spool(original, *input, s),
                None => original,
            }
        }
        Plan::Scan(s) => {
            let seek_reads_outer = s.range.as_ref().is_some_and(|r| {
                r.eq.iter().any(|e| expr_vars_read(e).is_none())
                    || [&r.lower, &r.upper].into_iter().flatten().any(|(b, _)| expr_vars_read(b).is_none())
            });
            let Some(filter) = s.filter.clone().filter(|_| !seek_reads_outer) else { return Plan::Scan(s) };
            match split(filter) {
                Some(parts) => {
                    let mut input = s.clone();
                    input.filter = None;
                    spool(Plan::Scan(s), Plan::Scan(input), parts)
                }
                None => Plan::Scan(s),
            }
        }
        join @ (Plan::HashJoin { .. } | Plan::MergeJoin { .. } | Plan::NestedLoop { .. } | Plan::IndexJoin { .. }) => {
            let (pulled, correlated) = pull_correlated(join.clone());
            let Some(pred) = and_all(correlated).filter(|_| vars_read(&pulled).is_some()) else { return join };
            match split(pred) {
                Some(parts) => spool(join, pulled, parts),
                None => join,
            }
        }
        other => map_row_input(other, &mut |b| d(b)).unwrap_or_else(|p| p),
    }
}

/// Takes the conjuncts that read the enclosing row out of an inner join tree's scans,
/// filters and join conditions, in the coordinates of the tree's output row: the tree
/// left behind is the subquery's uncorrelated part (when nothing else in it is
/// correlated). Only where they apply to the joined rows alike: the sides of inner
/// joins, not the inner side of an APPLY or an index join (which read their left row
/// as an outer row).
fn pull_correlated(plan: Plan) -> (Plan, Vec<BExpr>) {
    let take = |e: Option<BExpr>, out: &mut Vec<BExpr>| -> Option<BExpr> {
        let mut keep = Vec::new();
        if let Some(e) = e {
            let mut all = Vec::new();
            conjuncts(e, &mut all);
            for c in all {
                if expr_vars_read(&c).is_some() {
                    keep.push(c);
                } else {
                    out.push(c);
                }
            }
        }
        and_all(keep)
    };
    // Both inputs of an inner join: their conjuncts, the right's shifted past the left.
    let sides = |left: Box<Plan>, right: Box<Plan>, out: &mut Vec<BExpr>| -> (Box<Plan>, Box<Plan>) {
        let lw = left.width();
        let (left, mut l) = pull_correlated(*left);
        let (right, r) = pull_correlated(*right);
        out.append(&mut l);
        out.extend(r.into_iter().map(|e| e.remap(&|i, t| BExpr::Col(i + lw, t))));
        (Box::new(left), Box::new(right))
    };
    let mut out = Vec::new();
    let plan = match plan {
        Plan::Scan(mut s) => {
            s.filter = take(s.filter.take(), &mut out);
            Plan::Scan(s)
        }
        Plan::Filter { input, pred } => {
            let (input, mut pulled) = pull_correlated(*input);
            out.append(&mut pulled);
            match take(Some(pred), &mut out) {
                Some(pred) => Plan::Filter { input: Box::new(input), pred },
                None => input,
            }
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
            let (left, right) = sides(left, right, &mut out);
            let residual = take(residual, &mut out);
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
            }
        }
        Plan::MergeJoin { left, right, kind: JoinKind::Inner, left_key, right_key, residual, cols } => {
            let (left, right) = sides(left, right, &mut out);
            let residual = take(residual, &mut out);
            Plan::MergeJoin { left, right, kind: JoinKind::Inner, left_key, right_key, residual, cols }
        }
        Plan::NestedLoop { left, right, kind: kind @ (JoinKind::Inner | JoinKind::Cross), on, cols } => {
            let (left, right) = sides(left, right, &mut out);
            let on = take(on, &mut out);
            Plan::NestedLoop { left, right, kind, on, cols }
        }
        Plan::IndexJoin { left, right, kind: JoinKind::Inner, on, cols } => {
            let (left, mut l) = pull_correlated(*left);
            out.append(&mut l);
            let on = take(on, &mut out);
            Plan::IndexJoin { left: Box::new(left), right, kind: JoinKind::Inner, on, cols }
        }
        other => other,
    };
    (plan, out)
}

/// A filter's conjuncts, sorted for an index spool.
struct Parts {
    inner: Vec<BExpr>,
    outer: Vec<BExpr>,
    types: Vec<SqlType>,
    /// Conjuncts of the build side's rows alone.
    uncorrelated: Vec<BExpr>,
    /// The other conjuncts that read the outer row: applied above the spool.
    residual: Vec<BExpr>,
}

fn split(pred: BExpr) -> Option<Parts> {
    let mut all = Vec::new();
    conjuncts(pred, &mut all);
    let mut p = Parts { inner: vec![], outer: vec![], types: vec![], uncorrelated: vec![], residual: vec![] };
    for c in all {
        if expr_vars_read(&c).is_some() {
            p.uncorrelated.push(c);
            continue;
        }
        if let Some((l, r, ty, coll)) = equality(&c) {
            let pair = if is_inner(l) && is_outer(r) {
                Some((l, r))
            } else if is_inner(r) && is_outer(l) {
                Some((r, l))
            } else {
                None
            };
            if let Some((i, o)) = pair {
                let (i, o) = (i.clone(), o.clone());
                match coll {
                    // Under a collation other than the default the keys are its sort keys.
                    Some(coll) => {
                        p.inner.push(BExpr::CollationKey(Box::new(i), ty, coll));
                        p.outer.push(BExpr::CollationKey(Box::new(o), ty, coll));
                        p.types.push(SqlType::VarBinary { len: types::Length::Max });
                    }
                    None => {
                        p.inner.push(i);
                        p.outer.push(o);
                        p.types.push(ty);
                    }
                }
                continue;
            }
        }
        p.residual.push(c);
    }
    (!p.inner.is_empty()).then_some(p)
}

/// Reads only the subquery's own row (the build side) and variables.
fn is_inner(e: &BExpr) -> bool {
    expr_vars_read(e).is_some() && !has_subquery(e)
}

/// Reads the enclosing rows and constants only: no column of the subquery's own row.
fn is_outer(e: &BExpr) -> bool {
    let mut own = false;
    let mut outer = false;
    e.visit(&mut |x| match x {
        BExpr::Col(..) => own = true,
        BExpr::Outer { .. } => outer = true,
        _ => {}
    });
    outer && !own && !has_subquery(e)
}

fn has_subquery(e: &BExpr) -> bool {
    let mut found = false;
    e.visit(&mut |x| {
        found |= matches!(
            x,
            BExpr::Subquery(..)
                | BExpr::Exists(..)
                | BExpr::InSubquery { .. }
                | BExpr::Quantified { .. }
                | BExpr::Udf { .. }
                | BExpr::Sys(..)
        )
    });
    found
}

fn spool(original: Plan, input: Plan, p: Parts) -> Plan {
    let build = match and_all(p.uncorrelated) {
        Some(pred) => Plan::Filter { input: Box::new(input), pred },
        None => input,
    };
    let vars = vars_read(&build).unwrap_or_default();
    let node = IndexSpoolNode {
        original,
        build,
        inner_keys: p.inner,
        outer_keys: p.outer,
        key_types: p.types,
        in_value: false,
        id: next_id(),
        vars,
    };
    let spool = Plan::IndexSpool(Box::new(node));
    match and_all(p.residual) {
        Some(pred) => Plan::Filter { input: Box::new(spool), pred },
        None => spool,
    }
}

/// The plan for `x [NOT] IN (plan)` compared in `ty`: an index spool on the subquery's
/// column when the subquery reads nothing outside itself and `x` can be read from inside
/// it; else the plan unchanged.
pub fn in_subquery_spool(x: &BExpr, plan: Plan, ty: SqlType) -> Plan {
    let Some(vars) = vars_read(&plan) else { return plan };
    if has_subquery(x) || plan.width() != 1 {
        return plan;
    }
    let sub_ty = plan.columns()[0].ty;
    // `x` as the subquery sees it: the enclosing row is its outer row 1.
    let outer = x.map_leaves(&|e| match e {
        BExpr::Col(i, t) => Some(BExpr::Outer { depth: 1, index: *i, ty: *t }),
        BExpr::Outer { depth, index, ty } => Some(BExpr::Outer { depth: depth + 1, index: *index, ty: *ty }),
        _ => None,
    });
    let node = IndexSpoolNode {
        original: plan.clone(),
        build: plan,
        inner_keys: vec![BExpr::Col(0, sub_ty)],
        outer_keys: vec![outer],
        key_types: vec![ty],
        in_value: true,
        id: next_id(),
        vars,
    };
    Plan::IndexSpool(Box::new(node))
}

/// Opens an index spool: the original plan the first time, then the built table's rows
/// matching the keys read from the outer row.
pub fn open_index_spool(n: &IndexSpoolNode, cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    cx.check_spool_vars(n.id, &n.vars);
    let table = match cx.spools.get(&n.id) {
        None => {
            cx.spools.insert(n.id, Spooled::OpenedOnce);
            return open(&n.original, cx);
        }
        Some(Spooled::Indexed(t)) => t.clone(),
        Some(Spooled::TooMany) => return open(&n.original, cx),
        Some(Spooled::OpenedOnce) => match build(n, cx)? {
            Some(t) => {
                let t = Arc::new(t);
                cx.spools.insert(n.id, Spooled::Indexed(t.clone()));
                t
            }
            None => {
                cx.spools.insert(n.id, Spooled::TooMany);
                return open(&n.original, cx);
            }
        },
        Some(Spooled::Rows(..)) => return open(&n.original, cx),
    };
    let mut key = Vec::new();
    let mut null_probe = false;
    for (e, ty) in n.outer_keys.iter().zip(&n.key_types) {
        let v = e.eval(&[], cx)?;
        if v.is_null() {
            null_probe = true;
            break;
        }
        let v = if e.ty() == *ty { v } else { convert::convert(&v, &e.ty(), ty, None)? };
        if types::sort_key(&v, ty, &mut key).is_err() {
            return Ok(Box::new(SpoolOp { table, parts: Vec::new(), pos: 0 }));
        }
    }
    let mut parts = Vec::with_capacity(2);
    if null_probe {
        // `=` never matches NULL; IN of a NULL value asks only whether there are rows.
        if n.in_value {
            parts.push(Part::Rows(0, table.rows.len() as u32));
        }
    } else {
        if let Some(&(a, b)) = table.by_key.get(&key) {
            parts.push(Part::Postings(a, b));
        }
        if n.in_value && table.nulls.0 < table.nulls.1 {
            parts.push(Part::Postings(table.nulls.0, table.nulls.1));
        }
    }
    parts.reverse();
    Ok(Box::new(SpoolOp { table, parts, pos: 0 }))
}

/// Reads the build side into a table; None when it is not to be kept (too many rows, or
/// an error computing a key: the original plan then raises it if it must).
fn build(n: &IndexSpoolNode, cx: &mut Cx) -> Result<Option<SpoolTable>, SqlError> {
    let mut op = open(&n.build, cx)?;
    let mut rows = Vec::new();
    let mut groups: HashMap<Vec<u8>, Vec<u32>, FxBuild> = HashMap::with_hasher(FxBuild);
    let mut nulls = Vec::new();
    let mut key = Vec::new();
    // Within the request's grant: a build side that does not fit is not kept.
    let mut charge = cx.memory.charge();
    'rows: while let Some(r) = op.next(cx)? {
        if rows.len() >= MAX_BUILD_ROWS || !charge.try_add(super::memory::row_bytes(&r) + 16) {
            return Ok(None);
        }
        let at = rows.len() as u32;
        key.clear();
        for (e, ty) in n.inner_keys.iter().zip(&n.key_types) {
            let Ok(v) = e.eval(&r, cx) else { return Ok(None) };
            if v.is_null() {
                if n.in_value {
                    nulls.push(at);
                    rows.push(r);
                }
                // Otherwise the row equals nothing: no probe can read it.
                continue 'rows;
            }
            let v = if e.ty() == *ty {
                v
            } else {
                match convert::convert(&v, &e.ty(), ty, None) {
                    Ok(v) => v,
                    Err(_) => return Ok(None),
                }
            };
            if types::sort_key(&v, ty, &mut key).is_err() {
                continue 'rows;
            }
        }
        match groups.get_mut(key.as_slice()) {
            Some(g) => g.push(at),
            None => {
                groups.insert(key.clone(), vec![at]);
            }
        }
        rows.push(r);
    }
    let mut postings = Vec::with_capacity(rows.len());
    let mut by_key = HashMap::with_capacity_and_hasher(groups.len(), FxBuild);
    for (k, g) in groups {
        let a = postings.len() as u32;
        postings.extend_from_slice(&g);
        by_key.insert(k, (a, postings.len() as u32));
    }
    let a = postings.len() as u32;
    postings.extend_from_slice(&nulls);
    let nulls = (a, postings.len() as u32);
    Ok(Some(SpoolTable { rows, postings, by_key, nulls, _charge: charge }))
}

/// What a probe reads: row numbers from `postings[a..b]`, or rows `a..b` themselves.
enum Part {
    Postings(u32, u32),
    Rows(u32, u32),
}

/// The rows of one probe: its parts (in reverse, the next one last), in order.
struct SpoolOp {
    table: Arc<SpoolTable>,
    parts: Vec<Part>,
    pos: u32,
}

impl Op for SpoolOp {
    fn next(&mut self, _cx: &mut Cx) -> OpResult {
        while let Some(p) = self.parts.last() {
            let (a, b, through_postings) = match *p {
                Part::Postings(a, b) => (a, b, true),
                Part::Rows(a, b) => (a, b, false),
            };
            let i = a + self.pos;
            if i < b {
                self.pos += 1;
                let row = if through_postings { self.table.postings.get(i as usize).copied() } else { Some(i) };
                return Ok(row.and_then(|r| self.table.rows.get(r as usize)).cloned());
            }
            self.parts.pop();
            self.pos = 0;
        }
        Ok(None)
    }
}
