//! Physical plans and their operators.
//!
//! A [`Plan`] is an immutable tree the planner builds once per statement; running it
//! opens an operator tree ([`open`]) whose `next` pulls one row at a time (the Volcano
//! model). Blocking operators (sort, hash aggregate, the build side of a hash join,
//! window functions, distinct) read their input on the first `next`. Scans read the host
//! in batches of [`SCAN_BATCH`] rows and resume after the last key, so no latch is held
//! between rows.
//!
//! Correlation: an operator that evaluates a subquery or the inner side of an APPLY
//! pushes the outer row on [`Cx::outer`] around the call; `BExpr::Outer { depth }` reads
//! it back.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;

use types::hash::FxBuild;
use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::{is_true, BExpr, Row};
use super::table::TableInfo;
use crate::ast::{JoinKind, SetOperator};
use crate::host::{IndexRef, KeyRow, RowDecoder, StoredBatch};
use crate::scalar::aggregate::{Accumulator, AggKind};
use crate::scalar::{convert, ops};

mod aggregate;
mod hash_spill;
mod join;
mod scan;
mod set_ops;

use aggregate::*;
use join::*;
use scan::*;
use set_ops::*;

pub const SCAN_BATCH: usize = 512;

/// One output column of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct OutCol {
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    /// The collation the column's strings compare, group and sort under when it is not
    /// the default: from an explicit COLLATE in its select item (DISTINCT, UNION and an
    /// outer query read it here).
    pub collation: Option<types::Collation>,
    /// The collation label of a select list's column (None where no select item made
    /// it): a set operator combines its branches' labels (`query.rs`, 451).
    pub label: Option<super::expr::CollationLabel>,
}

impl OutCol {
    pub fn new(name: impl Into<String>, ty: SqlType, nullable: bool) -> OutCol {
        OutCol { name: name.into(), ty, nullable, collation: None, label: None }
    }

    /// The column with `collation` (None: the default).
    pub fn with_collation(mut self, collation: Option<types::Collation>) -> OutCol {
        self.collation = collation;
        self
    }

    pub fn with_label(mut self, label: super::expr::CollationLabel) -> OutCol {
        self.label = Some(label);
        self
    }
}

#[derive(Debug, Clone)]
pub struct SortKey {
    pub expr: BExpr,
    pub desc: bool,
}

#[derive(Debug, Clone)]
pub struct AggSpec {
    pub kind: AggKind,
    /// None for COUNT(*).
    pub arg: Option<BExpr>,
    pub distinct: bool,
    /// STRING_AGG's separator.
    pub extra: Option<BExpr>,
    /// STRING_AGG ... WITHIN GROUP (ORDER BY ...).
    pub order: Vec<SortKey>,
    pub result_type: SqlType,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowKind {
    /// NEXT VALUE FOR a sequence OVER (ORDER BY ...).
    NextValue {
        db: i16,
        object_id: i32,
    },
    RowNumber,
    Rank,
    DenseRank,
    Ntile,
    Lag,
    Lead,
    FirstValue,
    LastValue,
    Agg(AggKind),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameEdge {
    UnboundedPreceding,
    Preceding(i64),
    CurrentRow,
    Following(i64),
    UnboundedFollowing,
}

#[derive(Debug, Clone)]
pub struct WindowFn {
    pub kind: WindowKind,
    pub args: Vec<BExpr>,
    pub partition: Vec<BExpr>,
    pub order: Vec<SortKey>,
    /// ROWS frame (start, end); RANGE frames with CURRENT ROW are treated as peers.
    pub frame: Option<(bool, FrameEdge, FrameEdge)>,
    pub ty: SqlType,
}

/// A seek range over an index's leading key columns: values for a prefix of the key.
#[derive(Debug, Clone, Default)]
pub struct SeekRange {
    /// Equality values for the first `eq.len()` key columns.
    pub eq: Vec<BExpr>,
    /// Then an optional range on the next key column: (value, inclusive).
    pub lower: Option<(BExpr, bool)>,
    pub upper: Option<(BExpr, bool)>,
}

#[derive(Debug, Clone)]
pub struct ScanNode {
    pub table: Arc<TableInfo>,
    /// Position in `table.indexes`.
    pub index: usize,
    pub range: Option<SeekRange>,
    /// Residual predicate on the table's row.
    pub filter: Option<BExpr>,
    pub reverse: bool,
    /// Append the row's primary-index key as a last varbinary column (%%physloc%%): the
    /// locator UPDATE and DELETE change rows by.
    pub with_locator: bool,
    /// The table reference's locking hints (`WITH (NOLOCK)`, ...).
    pub hints: crate::host::LockHints,
}

impl ScanNode {
    /// Every row of `table` in its primary index's order, each with its locator: the
    /// target scan of a MERGE or of a positioned change.
    pub fn all_with_locator(table: &Arc<TableInfo>) -> ScanNode {
        ScanNode::all(table.clone(), true)
    }

    /// Every row of `table` in its primary index's order, with the locator if asked.
    pub fn all(table: Arc<TableInfo>, with_locator: bool) -> ScanNode {
        ScanNode { table, index: 0, range: None, filter: None, reverse: false, with_locator, hints: Default::default() }
    }
}

#[derive(Debug, Clone)]
pub enum Plan {
    /// One empty row: SELECT without FROM.
    Unit,
    Values {
        rows: Vec<Vec<BExpr>>,
        cols: Vec<OutCol>,
    },
    /// Rows computed before the statement runs (catalog views, worktables).
    Rows {
        rows: Arc<Vec<Row>>,
        cols: Vec<OutCol>,
    },
    /// A catalog view or DMV, computed when opened.
    Virtual {
        view: crate::system::view::View,
        cols: Vec<OutCol>,
    },
    Scan(ScanNode),
    Filter {
        input: Box<Plan>,
        pred: BExpr,
    },
    Project {
        input: Box<Plan>,
        exprs: Vec<BExpr>,
        cols: Vec<OutCol>,
    },
    /// Nested loops (also APPLY, where `right` reads the left row as outer depth 1).
    NestedLoop {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<BExpr>,
        cols: Vec<OutCol>,
    },
    HashJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        left_keys: Vec<BExpr>,
        right_keys: Vec<BExpr>,
        /// The comparison type of each key pair.
        key_types: Vec<SqlType>,
        residual: Option<BExpr>,
        cols: Vec<OutCol>,
        /// Written with the HASH hint: kept when the planner chooses again.
        hinted: bool,
    },
    /// A join of two inputs both in ascending order of one integer key column each
    /// (clustered index scans by that key): no table is built.
    MergeJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        /// The key's position in each side's rows.
        left_key: usize,
        right_key: usize,
        residual: Option<BExpr>,
        cols: Vec<OutCol>,
    },
    /// Index nested loops: for each left row, `right` (a scan whose seek range reads
    /// the left row as outer row 1) is opened again. Chosen for a small left input.
    IndexJoin {
        left: Box<Plan>,
        right: Box<Plan>,
        kind: JoinKind,
        on: Option<BExpr>,
        cols: Vec<OutCol>,
    },
    Aggregate {
        input: Box<Plan>,
        keys: Vec<BExpr>,
        aggs: Vec<AggSpec>,
        /// GROUPING SETS / ROLLUP / CUBE: for each set, which keys are grouped.
        sets: Option<Vec<Vec<bool>>>,
        /// A scalar aggregate (no GROUP BY) returns one row even over no input.
        scalar: bool,
        cols: Vec<OutCol>,
    },
    Sort {
        input: Box<Plan>,
        keys: Vec<SortKey>,
    },
    Top {
        input: Box<Plan>,
        count: Option<BExpr>,
        percent: bool,
        /// WITH TIES: the ORDER BY keys.
        ties: Option<Vec<SortKey>>,
        offset: Option<BExpr>,
    },
    Distinct {
        input: Box<Plan>,
    },
    SetOp {
        op: SetOperator,
        left: Box<Plan>,
        right: Box<Plan>,
        cols: Vec<OutCol>,
    },
    Window {
        input: Box<Plan>,
        funcs: Vec<WindowFn>,
        cols: Vec<OutCol>,
    },
    /// The working table of a recursive CTE (rows of the previous iteration).
    WorkTable {
        id: usize,
        cols: Vec<OutCol>,
    },
    RecursiveCte {
        id: usize,
        anchor: Box<Plan>,
        recursive: Box<Plan>,
        max_recursion: u32,
        cols: Vec<OutCol>,
    },
    /// A multi-statement table-valued function, run when opened (see `exec/tvf.rs`).
    TableFunction {
        db: crate::host::DbId,
        object_id: i32,
        name: String,
        args: Vec<BExpr>,
        cols: Vec<OutCol>,
    },
    /// `x.nodes('xquery') AS t(c)` (see `exec/xml.rs`): `target` and `outside` read no
    /// row of their own (outer references only, as under APPLY).
    XmlNodes {
        target: BExpr,
        query: Arc<crate::scalar::xml::XQuery>,
        outside: Vec<BExpr>,
        cols: Vec<OutCol>,
    },
    /// PIVOT / UNPIVOT (see `exec/pivot.rs`).
    Pivot(Box<super::pivot::PivotNode>),
    /// FOR JSON / FOR XML over the input (see `exec/forclause.rs`).
    ForClause(Box<super::forclause::ForNode>),
    /// OPENJSON in FROM (see `exec/openjson.rs`).
    OpenJson(Box<super::openjson::OpenJsonNode>),
    /// Drops trailing columns (hidden sort keys).
    Trim {
        input: Box<Plan>,
        keep: usize,
    },
    /// A part of a subquery that reads nothing of the enclosing query's row, computed
    /// once per statement and kept (SQL Server's lazy table spool): a correlated
    /// subquery over a CTE or a view no longer recomputes it for every outer row. See
    /// [`spool_uncorrelated`].
    Spool {
        input: Box<Plan>,
        id: usize,
        /// The variables it reads: its rows are computed again when one has changed.
        vars: Vec<usize>,
    },
    /// A subquery's rows indexed on the columns its correlated equalities compare (SQL
    /// Server's Index Spool): see `exec/index_spool.rs`.
    IndexSpool(Box<super::index_spool::IndexSpoolNode>),
}

impl Plan {
    pub fn columns(&self) -> Vec<OutCol> {
        match self {
            Plan::Unit => Vec::new(),
            Plan::Values { cols, .. }
            | Plan::Rows { cols, .. }
            | Plan::Virtual { cols, .. }
            | Plan::Project { cols, .. }
            | Plan::NestedLoop { cols, .. }
            | Plan::HashJoin { cols, .. }
            | Plan::MergeJoin { cols, .. }
            | Plan::IndexJoin { cols, .. }
            | Plan::Aggregate { cols, .. }
            | Plan::SetOp { cols, .. }
            | Plan::Window { cols, .. }
            | Plan::WorkTable { cols, .. }
            | Plan::TableFunction { cols, .. }
            | Plan::XmlNodes { cols, .. }
            | Plan::RecursiveCte { cols, .. } => cols.clone(),
            Plan::Scan(s) => {
                let mut c = s.table.out_cols();
                if s.with_locator {
                    c.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: types::Length::Bounded(900) }, false));
                }
                c
            }
            Plan::Filter { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Top { input, .. }
            | Plan::Spool { input, .. }
            | Plan::Distinct { input } => input.columns(),
            Plan::Trim { input, keep } => input.columns().into_iter().take(*keep).collect(),
            Plan::Pivot(p) => p.columns(),
            Plan::IndexSpool(n) => n.original.columns(),
            Plan::ForClause(n) => n.cols.clone(),
            Plan::OpenJson(n) => n.cols.clone(),
        }
    }

    pub fn width(&self) -> usize {
        self.columns().len()
    }

    /// An EXPLAIN-style description (SET SHOWPLAN_TEXT ON), one operator per line.
    pub fn explain(&self, depth: usize, out: &mut Vec<String>) {
        let pad = "  ".repeat(depth);
        let line = match self {
            Plan::Unit => "Constant Scan".to_string(),
            Plan::Values { rows, .. } => format!("Constant Scan ({} rows)", rows.len()),
            Plan::Rows { rows, .. } => format!("Table Spool ({} rows)", rows.len()),
            Plan::Virtual { view, .. } => format!("Catalog View Scan ({view:?})"),
            Plan::Scan(s) => {
                let ix = &s.table.indexes[s.index];
                let what = match (&s.range, ix.meta.index_id) {
                    (Some(_), 0 | 1) => "Clustered Index Seek",
                    (Some(_), _) => "Index Seek",
                    (None, 0) => "Table Scan",
                    (None, 1) => "Clustered Index Scan",
                    (None, _) => "Index Scan",
                };
                let name = ix.meta.name.clone().unwrap_or_default();
                let filter = if s.filter.is_some() { " WHERE:(residual)" } else { "" };
                if ix.meta.index_id >= 2 {
                    format!("{what} (OBJECT:([{}].[{}]), LOOKUP){filter}", s.table.name, name)
                } else if name.is_empty() {
                    format!("{what} (OBJECT:([{}])){filter}", s.table.name)
                } else {
                    format!("{what} (OBJECT:([{}].[{}])){filter}", s.table.name, name)
                }
            }
            Plan::Filter { .. } => "Filter".to_string(),
            Plan::Project { .. } => "Compute Scalar".to_string(),
            Plan::NestedLoop { kind, .. } => format!("Nested Loops ({})", join_name(*kind)),
            Plan::HashJoin { kind, .. } => format!("Hash Match ({})", join_name(*kind)),
            Plan::MergeJoin { kind, .. } => format!("Merge Join ({})", join_name(*kind)),
            Plan::IndexJoin { kind, .. } => format!("Nested Loops ({}, OUTER REFERENCES)", join_name(*kind)),
            Plan::Aggregate { keys, .. } => {
                if keys.is_empty() {
                    "Stream Aggregate".to_string()
                } else {
                    "Hash Match (Aggregate)".to_string()
                }
            }
            Plan::Sort { .. } => "Sort".to_string(),
            Plan::Top { .. } => "Top".to_string(),
            Plan::Distinct { .. } => "Hash Match (Distinct)".to_string(),
            Plan::SetOp { op, .. } => format!("{op:?}"),
            Plan::Window { .. } => "Window Aggregate".to_string(),
            Plan::WorkTable { .. } => "Table Spool (recursive)".to_string(),
            Plan::RecursiveCte { .. } => "Recursive Union".to_string(),
            Plan::TableFunction { name, .. } => format!("Table-valued function ([{name}])"),
            Plan::XmlNodes { .. } => "Table-valued function (XML Reader with XPath filter)".to_string(),
            Plan::Pivot(p) => p.describe(),
            Plan::ForClause(n) => n.describe(),
            Plan::OpenJson(_) => "Table-valued function ([OPENJSON])".to_string(),
            Plan::Trim { .. } => return self.children().into_iter().for_each(|c| c.explain(depth, out)),
            Plan::Spool { .. } => "Table Spool (Lazy Spool)".to_string(),
            Plan::IndexSpool(_) => "Index Spool (Eager Spool)".to_string(),
        };
        out.push(format!("{pad}|--{line}"));
        for c in self.children() {
            c.explain(depth + 1, out);
        }
        // The subqueries its expressions run, after its input (where SQL Server shows
        // the inner side of the join a subquery becomes).
        let exprs: Vec<&BExpr> = match self {
            Plan::Filter { pred, .. } => vec![pred],
            Plan::Project { exprs, .. } => exprs.iter().collect(),
            Plan::Scan(s) => s.filter.iter().collect(),
            _ => Vec::new(),
        };
        for e in exprs {
            let mut plans = Vec::new();
            e.visit(&mut |x| match x {
                BExpr::Subquery(p, _) | BExpr::Exists(p, _) => plans.push(p.clone()),
                BExpr::InSubquery { plan, .. } | BExpr::Quantified { plan, .. } => plans.push(plan.clone()),
                _ => {}
            });
            for p in plans {
                p.explain(depth + 1, out);
            }
        }
    }

    fn children(&self) -> Vec<&Plan> {
        match self {
            Plan::Filter { input, .. }
            | Plan::Project { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Top { input, .. }
            | Plan::Distinct { input }
            | Plan::Window { input, .. }
            | Plan::Spool { input, .. }
            | Plan::Trim { input, .. } => vec![input],
            Plan::NestedLoop { left, right, .. }
            | Plan::HashJoin { left, right, .. }
            | Plan::MergeJoin { left, right, .. }
            | Plan::IndexJoin { left, right, .. }
            | Plan::SetOp { left, right, .. } => vec![left, right],
            Plan::RecursiveCte { anchor, recursive, .. } => vec![anchor, recursive],
            Plan::Pivot(p) => vec![p.child()],
            Plan::ForClause(n) => vec![&n.input],
            Plan::IndexSpool(n) => vec![&n.build],
            _ => Vec::new(),
        }
    }
}

fn join_name(kind: JoinKind) -> &'static str {
    match kind {
        JoinKind::Inner => "Inner Join",
        JoinKind::LeftOuter => "Left Outer Join",
        JoinKind::RightOuter => "Right Outer Join",
        JoinKind::FullOuter => "Full Outer Join",
        JoinKind::Cross => "Inner Join",
        JoinKind::CrossApply => "Cross Apply",
        JoinKind::OuterApply => "Outer Apply",
    }
}

// ---------------------------------------------------------------------------------------
// Operators
// ---------------------------------------------------------------------------------------

pub type OpResult = Result<Option<Row>, SqlError>;

pub trait Op {
    fn next(&mut self, cx: &mut Cx) -> OpResult;
    /// Takes back a row this operator returned, once its consumer is done with it, so
    /// the next row can be built in its vector and buffers (a scan streaming to the
    /// client then allocates nothing per row). Operators that build rows of their own
    /// drop it, or pass it to their input when they handed the input's row on.
    fn recycle(&mut self, row: Row) {
        let _ = row;
    }
    /// The next row into `row`, whose vector and buffers are reused (it holds this
    /// operator's previous row, or nothing); false at the end. Operators on the streaming
    /// path (scans, the hash join) build the row in place: a row returned by value moves
    /// through a few `Option`s per operator, and those moves stalled on store forwarding
    /// (a 16-byte load of a vector just written as 8-byte words) several times per row.
    fn next_into(&mut self, cx: &mut Cx, row: &mut Row) -> Result<bool, SqlError> {
        match self.next(cx)? {
            Some(r) => {
                let old = std::mem::replace(row, r);
                self.recycle(old);
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

/// Opens an operator tree for `plan`.
pub fn open(plan: &Plan, cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    crate::stack::check()?;
    open_needing(plan, cx, None)
}

/// The columns of a plan's rows its consumer reads (None: all of them). Passed down the
/// operators that know which of their input's columns they read, so that a scan under
/// them decodes only those (the others read as NULL): a `GROUP BY` over two columns of
/// a wide table decodes two columns per row.
type Needed = Option<Vec<bool>>;

/// Marks the columns `e` reads in `need`; all of them when `e` holds a subquery (which
/// may read the whole row as its outer row) or reads past the row.
fn mark_needed(e: &BExpr, need: &mut [bool]) {
    let mut all = false;
    e.visit(&mut |x| match x {
        BExpr::Col(i, _) => match need.get_mut(*i) {
            Some(n) => *n = true,
            None => all = true,
        },
        BExpr::Subquery(..) | BExpr::Exists(..) | BExpr::InSubquery { .. } | BExpr::Quantified { .. } => all = true,
        _ => {}
    });
    if all {
        need.fill(true);
    }
}

/// The columns of a `width`-column row that `exprs` read.
fn needed_by<'e>(width: usize, exprs: impl IntoIterator<Item = &'e BExpr>) -> Vec<bool> {
    let mut need = vec![false; width];
    for e in exprs {
        mark_needed(e, &mut need);
    }
    need
}

/// [`open`] for a consumer that reads only the `need` columns of the rows.
fn open_needing(plan: &Plan, cx: &mut Cx, need: Needed) -> Result<Box<dyn Op>, SqlError> {
    Ok(match plan {
        Plan::Unit => Box::new(VecOp::new(vec![Vec::new()])),
        Plan::Values { rows, .. } => {
            let mut out = Vec::with_capacity(rows.len());
            for r in rows {
                let mut row = Vec::with_capacity(r.len());
                for e in r {
                    row.push(e.eval(&[], cx)?);
                }
                out.push(row);
            }
            Box::new(VecOp::new(out))
        }
        Plan::Rows { rows, .. } => Box::new(VecOp::new(rows.as_ref().clone())),
        Plan::Virtual { view, cols } => {
            let rows = view.rows(cx, need.as_deref())?;
            // Rows of which nothing is read may come short (see `rows_needing`).
            Box::new(PadOp { input: VecOp::new(rows), width: cols.len(), spare: None })
        }
        Plan::Scan(s) => {
            let mut op = ScanOp::new(s.clone(), cx)?;
            op.prune(need);
            Box::new(op)
        }
        Plan::Filter { input, pred } => {
            let need = need.map(|mut n| {
                mark_needed(pred, &mut n);
                n
            });
            Box::new(FilterOp { input: open_needing(input, cx, need)?, pred: pred.clone() })
        }
        Plan::Project { input, exprs, .. } => {
            let moves = column_moves(exprs);
            let in_order = moves.as_ref().is_some_and(|m| m.iter().enumerate().all(|(k, &i)| k == i));
            // `SELECT` of every column of a scan, in order: the scan's rows (always of its
            // width) are the result, with no operator in between.
            if in_order && matches!(**input, Plan::Scan(_)) && exprs.len() == input.width() {
                return open_needing(input, cx, need);
            }
            // Every expression is evaluated (an unused one may still raise an error), so
            // the input's columns are those any expression reads.
            let need = Some(needed_by(input.width(), exprs));
            // Plain columns of a hash join without a residual: the join builds the
            // projected rows itself (no full joined row per match).
            if let (Some(moves), Plan::HashJoin { residual: None, .. } | Plan::MergeJoin { residual: None, .. }) =
                (&moves, &**input)
            {
                return open_join(input, cx, need, Some(moves.clone()));
            }
            Box::new(ProjectOp {
                input: open_needing(input, cx, need)?,
                moves,
                in_order,
                exprs: exprs.clone(),
                spare: None,
                in_row: Row::new(),
            })
        }
        Plan::NestedLoop { left, right, kind, on, .. } => Box::new(NestedLoopOp {
            left: open(left, cx)?,
            right_plan: (**right).clone(),
            right_width: right.width(),
            left_width: left.width(),
            kind: *kind,
            on: on.clone(),
            state: NlState::NeedLeft,
            right_rows: None,
            right_matched: Vec::new(),
            pending_right_unmatched: None,
        }),
        Plan::HashJoin { .. } | Plan::MergeJoin { .. } => open_join(plan, cx, need, None)?,
        Plan::IndexJoin { left, right, kind, on, .. } => Box::new(NestedLoopOp {
            left: open(left, cx)?,
            right_plan: (**right).clone(),
            right_width: right.width(),
            left_width: left.width(),
            // The right side reads the left row as its outer row, as under APPLY.
            kind: if *kind == JoinKind::LeftOuter { JoinKind::OuterApply } else { JoinKind::CrossApply },
            on: on.clone(),
            state: NlState::NeedLeft,
            right_rows: None,
            right_matched: Vec::new(),
            pending_right_unmatched: None,
        }),
        Plan::Aggregate { input, keys, aggs, sets, scalar, .. } => {
            let mut need = needed_by(input.width(), keys);
            for a in aggs {
                for e in a.arg.iter().chain(&a.extra).chain(a.order.iter().map(|o| &o.expr)) {
                    mark_needed(e, &mut need);
                }
            }
            aggregate(open_needing(input, cx, Some(need))?, keys, aggs, sets.as_ref(), *scalar, 0, cx)?
        }
        Plan::Sort { input, keys } => {
            let need = need.map(|mut n| {
                keys.iter().for_each(|k| mark_needed(&k.expr, &mut n));
                n
            });
            let input = open_needing(input, cx, need)?;
            let dir = cx.host.spill_dir();
            super::spill::sort(input, keys, cx, &dir)?
        }
        Plan::Top { input, count, percent, ties, offset } => {
            let offset = match offset {
                Some(e) => non_negative(e.eval(&[], cx)?, "OFFSET")?,
                None => 0,
            };
            let count = match count {
                Some(e) => {
                    let v = e.eval(&[], cx)?;
                    if *percent {
                        let p = match convert::convert(&v, &e.ty(), &SqlType::Float, None)? {
                            Value::Float(f) => f,
                            _ => 100.0,
                        };
                        if !(0.0..=100.0).contains(&p) {
                            return Err(SqlError::new(
                                1031,
                                16,
                                1,
                                "Percent values must be between 0 and 100.".to_string(),
                            ));
                        }
                        if p == 0.0 {
                            // TOP (0) PERCENT: no row whatever the input's size, so the
                            // input is not run.
                            return Ok(Box::new(VecOp::new(Vec::new())));
                        }
                        let rows = drain(open(input, cx)?, cx)?;
                        let n = ((rows.len() as f64) * p / 100.0).ceil() as u64;
                        let op = TopOp {
                            input: Box::new(VecOp::new(rows)),
                            remaining: Some(n),
                            skip: offset,
                            ties: ties.clone(),
                            last: None,
                        };
                        return Ok(Box::new(op));
                    }
                    Some(non_negative(v, "TOP")?)
                }
                None => None,
            };
            if count == Some(0) {
                // TOP (0) and FETCH NEXT 0 ROWS: nothing to read (an input may do all its
                // work when it opens: a sort, a hash join's build).
                return Ok(Box::new(VecOp::new(Vec::new())));
            }
            Box::new(TopOp { input: open(input, cx)?, remaining: count, skip: offset, ties: ties.clone(), last: None })
        }
        Plan::IndexSpool(n) => super::index_spool::open_index_spool(n, cx)?,
        Plan::Spool { input, id, vars } => {
            cx.check_spool_vars(*id, vars);
            match cx.spools.get(id) {
                Some(Spooled::Rows(rows, _)) => return Ok(Box::new(VecOp::new(rows.as_ref().clone()))),
                Some(Spooled::TooMany) => return open(input, cx),
                // The first time the input streams as it would without a spool: a
                // subquery run once (IF EXISTS) reads no more than it needs.
                None => {
                    cx.spools.insert(*id, Spooled::OpenedOnce);
                    return open(input, cx);
                }
                Some(Spooled::OpenedOnce) => {}
                Some(Spooled::Indexed(_)) => return open(input, cx),
            }
            let mut op = open(input, cx)?;
            let mut rows = Vec::new();
            let mut charge = cx.memory.charge();
            while let Some(r) = op.next(cx)? {
                let fits = charge.try_add(super::memory::row_bytes(&r));
                rows.push(r);
                if rows.len() > SPOOL_MAX_ROWS || !fits {
                    // Too many to keep: this time and every time, the input streams.
                    cx.spools.insert(*id, Spooled::TooMany);
                    return Ok(Box::new(ChainOp { first: VecOp::new(rows), rest: op }));
                }
            }
            let rows = Arc::new(rows);
            cx.spools.insert(*id, Spooled::Rows(rows.clone(), Arc::new(charge)));
            Box::new(VecOp::new(rows.as_ref().clone()))
        }
        Plan::Distinct { input } => {
            let colls = input.columns().iter().map(|c| c.collation).collect();
            Box::new(DistinctOp::new(open(input, cx)?, colls, 0, cx))
        }
        Plan::SetOp { op, left, right, cols } => {
            let types: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
            let colls: Vec<Option<types::Collation>> = cols.iter().map(|c| c.collation).collect();
            let lt: Vec<SqlType> = left.columns().iter().map(|c| c.ty).collect();
            let rt: Vec<SqlType> = right.columns().iter().map(|c| c.ty).collect();
            // Each side streams: UNION ALL holds nothing, UNION and INTERSECT/EXCEPT
            // hold keys within the grant and spill past it.
            let l: Box<dyn Op> = Box::new(ConformOp { input: open(left, cx)?, from: lt, to: types.clone() });
            let r: Box<dyn Op> = Box::new(ConformOp { input: open(right, cx)?, from: rt, to: types.clone() });
            match op {
                SetOperator::UnionAll => Box::new(ConcatOp { first: Some(l), rest: r }),
                SetOperator::Union => {
                    Box::new(DistinctOp::new(Box::new(ConcatOp { first: Some(l), rest: r }), colls, 0, cx))
                }
                _ => {
                    let keep = *op == SetOperator::Intersect;
                    intersect_except(keep, l, r, false, (&types, &colls), 0, cx)?
                }
            }
        }
        Plan::Window { input, funcs, .. } => super::window::open(open(input, cx)?, funcs, cx)?,
        Plan::WorkTable { id, .. } => {
            let rows = cx.work_tables.get(id).cloned().unwrap_or_default();
            Box::new(VecOp::new(rows))
        }
        Plan::RecursiveCte { id, anchor, recursive, max_recursion, cols } => {
            let types: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
            let at: Vec<SqlType> = anchor.columns().iter().map(|c| c.ty).collect();
            let rt: Vec<SqlType> = recursive.columns().iter().map(|c| c.ty).collect();
            let mut charge = cx.memory.charge();
            let last = conform(drain(open(anchor, cx)?, cx)?, &at, &types)?;
            charge.add(last.iter().map(|r| super::memory::row_bytes(r)).sum())?;
            Box::new(RecursiveCteOp {
                id: *id,
                recursive: (**recursive).clone(),
                max_recursion: *max_recursion,
                types,
                rt,
                out: Vec::new().into_iter(),
                pending: Some(last),
                level: 0,
                charge,
            })
        }
        Plan::Trim { input, keep } => {
            let need = need.map(|mut n| {
                n.resize(input.width(), false);
                n
            });
            Box::new(TrimOp { input: open_needing(input, cx, need)?, keep: *keep })
        }
        Plan::Pivot(p) => super::pivot::open(p, cx)?,
        Plan::ForClause(n) => super::forclause::open(n, cx)?,
        Plan::OpenJson(n) => super::openjson::open(n, cx)?,
        Plan::TableFunction { db, object_id, args, .. } => {
            Box::new(VecOp::new(cx.table_function_rows(*db, *object_id, args)?))
        }
        Plan::XmlNodes { target, query, outside, .. } => {
            Box::new(VecOp::new(super::xml::open_nodes(cx, target, query, outside)?))
        }
    })
}

fn non_negative(v: Value, what: &str) -> Result<u64, SqlError> {
    let n = match v {
        Value::TinyInt(n) => i64::from(n),
        Value::SmallInt(n) => i64::from(n),
        Value::Int(n) => i64::from(n),
        Value::BigInt(n) => n,
        Value::Decimal { value, scale, .. } => (value / types::decimal::pow10(scale)) as i64,
        Value::Float(f) => f as i64,
        Value::Null => 0,
        _ => 0,
    };
    if n < 0 {
        return Err(if what == "OFFSET" {
            SqlError::new(10742, 16, 1, "The offset specified in a OFFSET clause may not be negative.")
        } else {
            SqlError::new(1014, 16, 1, "A TOP or FETCH clause contains an invalid value.")
        });
    }
    Ok(n as u64)
}

/// Converts each column of each row to the set operation's column type.
fn conform(rows: Vec<Row>, from: &[SqlType], to: &[SqlType]) -> Result<Vec<Row>, SqlError> {
    if from == to {
        return Ok(rows);
    }
    rows.into_iter().map(|r| conform_row(r, from, to)).collect()
}

/// Converts each column of one row to the set operation's column type.
fn conform_row(r: Row, from: &[SqlType], to: &[SqlType]) -> Result<Row, SqlError> {
    let mut row = Vec::with_capacity(r.len());
    for (i, v) in r.into_iter().enumerate() {
        let (f, t) = (from.get(i).copied().unwrap_or(SqlType::Int), to.get(i).copied().unwrap_or(SqlType::Int));
        row.push(if f == t { v } else { convert::convert(&v, &f, &t, None)? });
    }
    Ok(row)
}

/// A row's identity: the concatenated sort keys, strings under each column's collation
/// (`colls[i]`, None or missing: the default).
pub fn row_key(row: &[Value], types: &[SqlType], colls: &[Option<types::Collation>]) -> Vec<u8> {
    let mut k = Vec::new();
    for (i, (v, t)) in row.iter().zip(types).enumerate() {
        push_key(v, t, colls.get(i).copied().flatten().as_ref(), &mut k);
    }
    k
}

/// Appends one value's part of a [`row_key`].
fn push_key(v: &Value, ty: &SqlType, coll: Option<&types::Collation>, out: &mut Vec<u8>) {
    if types::sort_key_in(v, ty, coll, out).is_err() {
        // A value that does not fit its column type (cannot happen for rows the
        // executor built); fall back to its display form so it still groups.
        out.extend_from_slice(format!("{v:?}").as_bytes());
    }
}

/// Every row of `op`, within the request's memory grant (Msg 701 past it) and stopping
/// at an attention or KILL. The rows' memory is held only while they are read: the
/// caller's structure is bounded by the same grant (see [`super::memory`]).
pub fn drain(mut op: Box<dyn Op>, cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let mut out = Vec::new();
    let mut charge = cx.memory.charge();
    while let Some(r) = op.next(cx)? {
        cx.check_cancel()?;
        charge.add(super::memory::row_bytes(&r))?;
        out.push(r);
    }
    Ok(out)
}

/// Compares two values of one type for ORDER BY: NULL first, strings under `collation`
/// (None: the default; an ORDER BY item's [`BExpr::collation`]).
pub fn order_values_in(a: &Value, b: &Value, ty: &SqlType, collation: Option<&types::Collation>) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => ops::compare_in(a, b, ty, collation).unwrap_or(Ordering::Equal),
    }
}

pub struct VecOp {
    rows: std::vec::IntoIter<Row>,
}

impl VecOp {
    pub fn new(rows: Vec<Row>) -> VecOp {
        VecOp { rows: rows.into_iter() }
    }
}

impl Op for VecOp {
    fn next(&mut self, _cx: &mut Cx) -> OpResult {
        Ok(self.rows.next())
    }
}

/// Rows an operator built in memory (sorted, aggregated, computed), with the share of
/// the request's grant they hold until they are read.
pub struct HeldRows {
    rows: VecOp,
    _charge: super::memory::Charge,
}

impl HeldRows {
    pub fn new(rows: Vec<Row>, charge: super::memory::Charge) -> HeldRows {
        HeldRows { rows: VecOp::new(rows), _charge: charge }
    }
}

impl Op for HeldRows {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        self.rows.next(cx)
    }
}

/// Pads the rows of its input to `width` with NULLs, in the vectors its consumer hands
/// back (a catalog view's rows of which nothing is read are empty: one row's vector
/// serves them all).
struct PadOp {
    input: VecOp,
    width: usize,
    spare: Option<Row>,
}

impl Op for PadOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let Some(row) = self.input.next(cx)? else { return Ok(None) };
        if row.len() >= self.width {
            return Ok(Some(row));
        }
        let mut out = match self.spare.take() {
            // A row of NULLs handed back as it was given (its consumer read nothing).
            Some(r) if row.is_empty() && r.len() == self.width && r.iter().all(Value::is_null) => return Ok(Some(r)),
            Some(mut r) => {
                r.clear();
                r.extend(row);
                r
            }
            None => row,
        };
        out.resize_with(self.width, || Value::Null);
        Ok(Some(out))
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }
}

struct TrimOp {
    input: Box<dyn Op>,
    keep: usize,
}

impl Op for TrimOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        Ok(self.input.next(cx)?.map(|mut r| {
            r.truncate(self.keep);
            r
        }))
    }

    fn recycle(&mut self, row: Row) {
        self.input.recycle(row);
    }
}

struct FilterOp {
    input: Box<dyn Op>,
    pred: BExpr,
}

impl Op for FilterOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        while let Some(r) = self.input.next(cx)? {
            if is_true(&cx.eval_with_outer(&self.pred, &r)?) {
                return Ok(Some(r));
            }
            self.input.recycle(r);
            // A filter that rejects every row returns nothing to anyone who would check.
            cx.check_cancel()?;
        }
        Ok(None)
    }

    fn recycle(&mut self, row: Row) {
        self.input.recycle(row);
    }
}

struct ProjectOp {
    input: Box<dyn Op>,
    exprs: Vec<BExpr>,
    /// Set when every expression is a plain column and no column is used twice: the
    /// values are moved out of the input row instead of evaluated and cloned (a
    /// `SELECT a, b, c` streaming many rows allocates nothing here).
    moves: Option<Vec<usize>>,
    /// `moves` is 0, 1, 2, ...: a row of exactly that width passes through unchanged.
    in_order: bool,
    /// An output row handed back by the consumer, refilled for the next one.
    spare: Option<Row>,
    /// The input row `next_into` reads into (the input's vector for the whole scan).
    in_row: Row,
}

/// The input positions of a projection made only of distinct plain columns.
fn column_moves(exprs: &[BExpr]) -> Option<Vec<usize>> {
    let mut out = Vec::with_capacity(exprs.len());
    for e in exprs {
        let BExpr::Col(i, _) = e else { return None };
        if out.contains(i) {
            return None;
        }
        out.push(*i);
    }
    Some(out)
}

impl Op for ProjectOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let Some(mut r) = self.input.next(cx)? else {
            return Ok(None);
        };
        if let Some(moves) = &self.moves {
            if self.in_order && moves.len() == r.len() {
                return Ok(Some(r));
            }
            if moves.iter().all(|&i| i < r.len()) {
                // Swapped rather than moved out: the input row gets the previous output
                // row's values back, whose buffers it reuses when it is refilled.
                let mut out = self.spare.take().unwrap_or_default();
                out.resize(moves.len(), Value::Null);
                for (slot, &i) in out.iter_mut().zip(moves) {
                    std::mem::swap(slot, &mut r[i]);
                }
                self.input.recycle(r);
                return Ok(Some(out));
            }
        }
        let mut out = self.spare.take().unwrap_or_default();
        out.clear();
        for e in &self.exprs {
            out.push(cx.eval_with_outer(e, &r)?);
        }
        self.input.recycle(r);
        Ok(Some(out))
    }

    fn recycle(&mut self, row: Row) {
        if self.in_order {
            // Rows of the input's width passed through unchanged.
            self.input.recycle(row);
        } else {
            self.spare = Some(row);
        }
    }

    fn next_into(&mut self, cx: &mut Cx, row: &mut Row) -> Result<bool, SqlError> {
        if let Some(moves) = &self.moves {
            if self.in_order {
                // The input's leading columns: read straight into the output row.
                if !self.input.next_into(cx, row)? {
                    return Ok(false);
                }
                if row.len() >= moves.len() {
                    row.truncate(moves.len());
                    return Ok(true);
                }
                // A row narrower than the projection: evaluated below, as `next` does.
                std::mem::swap(row, &mut self.in_row);
            } else if !self.input.next_into(cx, &mut self.in_row)? {
                return Ok(false);
            }
            if moves.iter().all(|&i| i < self.in_row.len()) {
                // Swapped, as in `next`: the input row is refilled over the previous
                // output row's values, reusing their buffers.
                row.resize(moves.len(), Value::Null);
                for (slot, &i) in row.iter_mut().zip(moves) {
                    std::mem::swap(slot, &mut self.in_row[i]);
                }
                return Ok(true);
            }
        } else if !self.input.next_into(cx, &mut self.in_row)? {
            return Ok(false);
        }
        row.clear();
        for e in &self.exprs {
            row.push(cx.eval_with_outer(e, &self.in_row)?);
        }
        Ok(true)
    }
}

struct TopOp {
    input: Box<dyn Op>,
    remaining: Option<u64>,
    skip: u64,
    ties: Option<Vec<SortKey>>,
    last: Option<Vec<Value>>,
}

impl Op for TopOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        while self.skip > 0 {
            if self.input.next(cx)?.is_none() {
                return Ok(None);
            }
            self.skip -= 1;
        }
        match self.remaining {
            Some(0) => {
                // WITH TIES: keep returning rows equal to the last one on the keys.
                let (Some(keys), Some(last)) = (&self.ties, &self.last) else {
                    return Ok(None);
                };
                let Some(r) = self.input.next(cx)? else {
                    return Ok(None);
                };
                let mut k = Vec::with_capacity(keys.len());
                for key in keys {
                    k.push(key.expr.eval(&r, cx)?);
                }
                let db = cx.db_collation();
                let same = k.iter().zip(last).zip(keys).all(|((a, b), key)| {
                    order_values_in(a, b, &key.expr.ty(), key.expr.collation(db).as_ref()) == Ordering::Equal
                });
                if same {
                    Ok(Some(r))
                } else {
                    self.ties = None;
                    Ok(None)
                }
            }
            _ => {
                let Some(r) = self.input.next(cx)? else {
                    return Ok(None);
                };
                if let Some(n) = self.remaining.as_mut() {
                    *n -= 1;
                    if *n == 0 {
                        if let Some(keys) = &self.ties {
                            let mut k = Vec::with_capacity(keys.len());
                            for key in keys {
                                k.push(key.expr.eval(&r, cx)?);
                            }
                            self.last = Some(k);
                        }
                    }
                }
                Ok(Some(r))
            }
        }
    }
}

/// What a statement's spool holds so far (`Cx::spools`).
pub enum Spooled {
    /// Opened once, streamed: the second opening fills the spool.
    OpenedOnce,
    /// The rows, with their share of the request's grant.
    Rows(Arc<Vec<Row>>, Arc<super::memory::Charge>),
    /// An index spool's table (`exec/index_spool.rs`).
    Indexed(Arc<super::index_spool::SpoolTable>),
    /// More than [`SPOOL_MAX_ROWS`] (an index spool: not kept): streamed every time.
    TooMany,
}

/// A new id for a statement's spool (`Cx::spools`).
pub fn next_spool_id() -> usize {
    static NEXT_ID: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(1);
    NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The most rows a spool keeps; a larger input streams through it instead.
const SPOOL_MAX_ROWS: usize = 10_000;

/// A recursive CTE's rows, one level at a time: the anchor's rows, then each level the
/// recursive member computes from the previous one (its work table). A level is computed
/// before the previous level's rows go out, which then move out of the work table; only
/// those two levels are held, within the request's grant.
struct RecursiveCteOp {
    id: usize,
    recursive: Plan,
    max_recursion: u32,
    types: Vec<SqlType>,
    rt: Vec<SqlType>,
    /// The level going out.
    out: std::vec::IntoIter<Row>,
    /// The next level, whose own successor is not computed yet (None: done).
    pending: Option<Vec<Row>>,
    level: u32,
    charge: super::memory::Charge,
}

impl Op for RecursiveCteOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if let Some(r) = self.out.next() {
            return Ok(Some(r));
        }
        let Some(rows) = self.pending.take().filter(|rows| !rows.is_empty()) else { return Ok(None) };
        if self.max_recursion > 0 && self.level >= self.max_recursion {
            return Err(SqlError::new(
                530,
                16,
                1,
                format!(
                    "The statement terminated. The maximum recursion {} has been exhausted before statement completion.",
                    self.max_recursion
                ),
            ));
        }
        cx.check_cancel()?;
        cx.work_tables.insert(self.id, rows);
        let next = drain(open(&self.recursive, cx)?, cx);
        let rows = cx.work_tables.remove(&self.id).unwrap_or_default();
        let next = conform(next?, &self.rt, &self.types)?;
        self.charge.clear();
        self.charge.add(rows.iter().chain(&next).map(|r| super::memory::row_bytes(r)).sum())?;
        self.level += 1;
        self.out = rows.into_iter();
        self.pending = Some(next);
        Ok(self.out.next())
    }
}

/// Rows already read, then the rest of the operator they came from.
pub(super) struct ChainOp {
    pub(super) first: VecOp,
    pub(super) rest: Box<dyn Op>,
}

impl Op for ChainOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        match self.first.next(cx)? {
            Some(r) => Ok(Some(r)),
            None => self.rest.next(cx),
        }
    }
}

/// A node with one input whose rows it passes on transformed (Project, Aggregate, Sort,
/// Top, Distinct, Window, Trim), rebuilt with `f` applied to its input; any other node
/// (Filter too, which callers treat themselves) comes back as `Err`.
pub fn map_row_input(plan: Plan, f: &mut dyn FnMut(Box<Plan>) -> Box<Plan>) -> Result<Plan, Plan> {
    Ok(match plan {
        Plan::Project { input, exprs, cols } => Plan::Project { input: f(input), exprs, cols },
        Plan::Aggregate { input, keys, aggs, sets, scalar, cols } => {
            Plan::Aggregate { input: f(input), keys, aggs, sets, scalar, cols }
        }
        Plan::Sort { input, keys } => Plan::Sort { input: f(input), keys },
        Plan::Top { input, count, percent, ties, offset } => {
            Plan::Top { input: f(input), count, percent, ties, offset }
        }
        Plan::Distinct { input } => Plan::Distinct { input: f(input) },
        Plan::Window { input, funcs, cols } => Plan::Window { input: f(input), funcs, cols },
        Plan::Trim { input, keep } => Plan::Trim { input: f(input), keep },
        other => return Err(other),
    })
}

/// Puts a spool over each largest part of a subquery's plan that reads nothing outside
/// itself (no outer row, variable or session function), so the subquery, run once per
/// outer row, computes that part once per statement. Parts too cheap to gain anything
/// (constant rows, or a bare table seek) are left alone.
pub fn spool_uncorrelated(plan: Plan) -> Plan {
    if let Some(vars) = vars_read(&plan) {
        if matches!(plan, Plan::Unit | Plan::Values { .. } | Plan::Rows { .. } | Plan::Spool { .. }) {
            return plan;
        }
        return Plan::Spool { input: Box::new(plan), id: next_spool_id(), vars };
    }
    let sp = |b: Box<Plan>| Box::new(spool_uncorrelated(*b));
    let plan = match plan {
        Plan::Filter { input, pred } => return Plan::Filter { input: sp(input), pred },
        other => match map_row_input(other, &mut |b| sp(b)) {
            Ok(p) => return p,
            Err(p) => p,
        },
    };
    match plan {
        Plan::SetOp { op, left, right, cols } => Plan::SetOp { op, left: sp(left), right: sp(right), cols },
        Plan::HashJoin { left, right, kind, left_keys, right_keys, key_types, residual, cols, hinted } => {
            Plan::HashJoin {
                left: sp(left),
                right: sp(right),
                kind,
                left_keys,
                right_keys,
                key_types,
                residual,
                cols,
                hinted,
            }
        }
        // The right side of an APPLY reads the left row; a plain join's right side is
        // read once anyway.
        Plan::NestedLoop { left, right, kind, on, cols } => Plan::NestedLoop { left: sp(left), right, kind, on, cols },
        other => other,
    }
}

/// The variables `plan` reads (each once) when nothing else outside it: a spool of it
/// stays valid while they keep their values. None when it reads an outer row or a
/// session function.
pub(super) fn vars_read(plan: &Plan) -> Option<Vec<usize>> {
    let vars = std::cell::RefCell::new(Vec::new());
    (!reads_outside_in(plan, 0, Some(&vars))).then(|| dedup(vars.into_inner()))
}

/// [`vars_read`] of an expression.
pub(super) fn expr_vars_read(e: &BExpr) -> Option<Vec<usize>> {
    let vars = std::cell::RefCell::new(Vec::new());
    (!expr_reads_outside_in(e, 0, Some(&vars))).then(|| dedup(vars.into_inner()))
}

fn dedup(mut v: Vec<usize>) -> Vec<usize> {
    v.sort_unstable();
    v.dedup();
    v
}

/// Whether `plan` reads anything from outside itself: an outer row more than `levels`
/// deep (the levels its own APPLYs and subqueries add are its own), a session function,
/// or a variable (with `vars`: listed there instead). Node kinds not listed count as
/// reading outside (never spooled).
fn reads_outside_in(plan: &Plan, levels: usize, vars: Option<&std::cell::RefCell<Vec<usize>>>) -> bool {
    let reads_outside = |p: &Plan, levels: usize| reads_outside_in(p, levels, vars);
    let e = |x: &BExpr| expr_reads_outside_in(x, levels, vars);
    let keys = |k: &[SortKey]| k.iter().any(|k| e(&k.expr));
    match plan {
        Plan::Unit | Plan::Rows { .. } | Plan::Virtual { .. } => false,
        Plan::Values { rows, .. } => rows.iter().flatten().any(e),
        Plan::Scan(s) => {
            s.filter.as_ref().is_some_and(e)
                || s.range.as_ref().is_some_and(|r| {
                    r.eq.iter().any(e) || [&r.lower, &r.upper].into_iter().flatten().any(|(b, _)| e(b))
                })
        }
        Plan::Window { input, funcs, .. } => {
            funcs.iter().any(|f| f.args.iter().chain(&f.partition).any(e) || keys(&f.order))
                || reads_outside(input, levels)
        }
        Plan::Filter { input, pred } => e(pred) || reads_outside(input, levels),
        Plan::Project { input, exprs, .. } => exprs.iter().any(e) || reads_outside(input, levels),
        Plan::Aggregate { input, keys: k, aggs, .. } => {
            k.iter().any(e)
                || aggs
                    .iter()
                    .any(|a| a.arg.as_ref().is_some_and(e) || a.extra.as_ref().is_some_and(e) || keys(&a.order))
                || reads_outside(input, levels)
        }
        Plan::Sort { input, keys: k } => keys(k) || reads_outside(input, levels),
        Plan::Top { input, count, ties, offset, .. } => {
            count.as_ref().is_some_and(e)
                || offset.as_ref().is_some_and(e)
                || ties.as_deref().is_some_and(keys)
                || reads_outside(input, levels)
        }
        Plan::Distinct { input } | Plan::Trim { input, .. } | Plan::Spool { input, .. } => reads_outside(input, levels),
        Plan::SetOp { left, right, .. } => reads_outside(left, levels) || reads_outside(right, levels),
        Plan::HashJoin { left, right, left_keys, right_keys, residual, .. } => {
            left_keys.iter().chain(right_keys).any(e)
                || residual.as_ref().is_some_and(e)
                || reads_outside(left, levels)
                || reads_outside(right, levels)
        }
        Plan::MergeJoin { left, right, residual, .. } => {
            residual.as_ref().is_some_and(e) || reads_outside(left, levels) || reads_outside(right, levels)
        }
        // An index join's inner side seeks by the left row, its outer row 1.
        Plan::IndexJoin { left, right, on, .. } => {
            on.as_ref().is_some_and(e) || reads_outside(left, levels) || reads_outside(right, levels + 1)
        }
        Plan::NestedLoop { left, right, kind, on, .. } => {
            let apply = matches!(kind, JoinKind::CrossApply | JoinKind::OuterApply);
            on.as_ref().is_some_and(e)
                || reads_outside(left, levels)
                || reads_outside(right, if apply { levels + 1 } else { levels })
        }
        _ => true,
    }
}

fn expr_reads_outside_in(e: &BExpr, levels: usize, vars: Option<&std::cell::RefCell<Vec<usize>>>) -> bool {
    let mut outside = false;
    e.visit(&mut |x| match x {
        BExpr::Outer { depth, .. } if *depth > levels => outside = true,
        BExpr::Var(slot, _) => match vars {
            Some(v) => v.borrow_mut().push(*slot),
            None => outside = true,
        },
        BExpr::Sys(..) => outside = true,
        BExpr::Subquery(p, _) | BExpr::Exists(p, _) => outside |= reads_outside_in(p, levels + 1, vars),
        BExpr::InSubquery { plan, .. } | BExpr::Quantified { plan, .. } => {
            outside |= reads_outside_in(plan, levels + 1, vars)
        }
        _ => {}
    });
    outside
}

/// The column descriptions of a plan's result set.
pub fn column_info(plan: &Plan) -> Vec<crate::results::ColumnInfo> {
    use crate::results::ColumnInfo;
    plan.columns()
        .iter()
        .map(|c| ColumnInfo { collation: c.collation, ..ColumnInfo::new(c.name.clone(), c.ty, c.nullable) })
        .collect()
}
