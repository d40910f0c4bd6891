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

use super::expr::{is_true, BExpr, Row};
use super::table::TableInfo;
use super::Cx;
use crate::ast::{JoinKind, SetOperator};
use crate::host::{IndexRef, KeyRow, RowDecoder, StoredBatch};
use crate::scalar::aggregate::{Accumulator, AggKind};
use crate::scalar::{convert, ops};

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
        view: super::sysviews::View,
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
            let rows = super::sysviews::rows_needing(view, cx, need.as_deref())?;
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
            match op {
                SetOperator::UnionAll | SetOperator::Union => {
                    let r = Box::new(ConformOp {
                        input: Box::new(LazyOp { plan: Some((**right).clone()), op: None }),
                        from: rt,
                        to: types.clone(),
                    });
                    let both: Box<dyn Op> = Box::new(ConcatOp { first: Some(l), rest: r });
                    if *op == SetOperator::Union {
                        Box::new(DistinctOp::new(both, colls, 0, cx))
                    } else {
                        both
                    }
                }
                _ => {
                    let r = Box::new(ConformOp { input: open(right, cx)?, from: rt, to: types.clone() });
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
                last,
                pos: 0,
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
            Box::new(VecOp::new(super::tvf::open(cx, *db, *object_id, args)?))
        }
        Plan::XmlNodes { target, query, outside, .. } => {
            Box::new(VecOp::new(super::xml::open_nodes(cx, target, query, outside)?))
        }
    })
}

/// The columns each side of a join must produce for a consumer reading `need` of the
/// joined rows, besides the keys and the residual.
fn join_needs(need: Needed, lw: usize, rw: usize, residual: Option<&BExpr>) -> (Needed, Needed) {
    match need {
        None => (None, None),
        Some(mut n) => {
            n.resize(lw + rw, true);
            if let Some(r) = residual {
                mark_needed(r, &mut n);
            }
            let r = n.split_off(lw);
            (Some(n), Some(r))
        }
    }
}

/// Opens a [`Plan::HashJoin`] or [`Plan::MergeJoin`]; with `out`, its rows are those
/// positions of the joined row (a projection of plain columns above it, see
/// `open_needing`'s `Plan::Project`).
fn open_join(plan: &Plan, cx: &mut Cx, need: Needed, out: Option<Vec<usize>>) -> Result<Box<dyn Op>, SqlError> {
    if let Plan::MergeJoin { left, right, kind, left_key, right_key, residual, .. } = plan {
        let (lw, rw) = (left.width(), right.width());
        let (mut left_need, mut right_need) = join_needs(need, lw, rw, residual.as_ref());
        if let Some(n) = left_need.as_mut().and_then(|n| n.get_mut(*left_key)) {
            *n = true;
        }
        if let Some(n) = right_need.as_mut().and_then(|n| n.get_mut(*right_key)) {
            *n = true;
        }
        return Ok(Box::new(MergeJoinOp {
            left: open_needing(left, cx, left_need)?,
            right: open_needing(right, cx, right_need)?,
            widths: (lw, rw),
            kind: *kind,
            keys: (*left_key, *right_key),
            residual: residual.clone(),
            out,
            state: MergeState::NeedLeft,
            left_row: None,
            probe: (0, false),
            last_keys: (None, None),
            group: Vec::new(),
            group_matched: Vec::new(),
            group_key: None,
            flushed: 0,
            peek: None,
            right_done: false,
            spare: None,
        }));
    }
    let Plan::HashJoin { left, right, kind, left_keys, right_keys, key_types, residual, .. } = plan else {
        return open_needing(plan, cx, need);
    };
    let (lw, rw) = (left.width(), right.width());
    let (mut left_need, mut right_need) = join_needs(need, lw, rw, residual.as_ref());
    // The build side keeps only the columns read after the join (its keys are computed
    // as it is read): each in a slot of the kept row.
    let right_slots = right_need.as_ref().filter(|n| n.iter().any(|k| !k)).map(|n| {
        let mut next = 0;
        n.iter()
            .map(|&k| {
                next += usize::from(k);
                if k {
                    next - 1
                } else {
                    NOT_KEPT
                }
            })
            .collect::<Vec<usize>>()
    });
    let kept_types = right
        .columns()
        .iter()
        .enumerate()
        .filter(|(c, _)| right_slots.as_ref().is_none_or(|s| s.get(*c) != Some(&NOT_KEPT)))
        .map(|(_, col)| col.ty)
        .collect();
    if let Some(l) = left_need.as_mut() {
        left_keys.iter().for_each(|e| mark_needed(e, l));
    }
    if let Some(r) = right_need.as_mut() {
        right_keys.iter().for_each(|e| mark_needed(e, r));
    }
    Ok(Box::new(HashJoinOp {
        left: open_needing(left, cx, left_need)?,
        right: Some(open_needing(right, cx, right_need)?),
        left_width: lw,
        right_width: rw,
        kept_width: right_slots.as_ref().map_or(rw, |s| s.iter().filter(|&&k| k != NOT_KEPT).count()),
        right_slots,
        kind: *kind,
        left_key: KeyReader::new(left_keys, key_types),
        right_key: KeyReader::new(right_keys, key_types),
        left_keys: left_keys.clone(),
        right_keys: right_keys.clone(),
        key_types: key_types.clone(),
        residual: residual.clone(),
        out,
        table: JoinTable::for_types(key_types),
        build_vals: BuildVals::for_types(kept_types),
        build_count: 0,
        build_charge: None,
        next_same: Vec::new(),
        matched: Vec::new(),
        current: Row::new(),
        probing: false,
        probe_next: END,
        probe_matched: false,
        unmatched_out: None,
        key_buf: Vec::new(),
        spare: None,
        spilled: None,
    }))
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
    let mut out = Vec::with_capacity(rows.len());
    for r in rows {
        let mut row = Vec::with_capacity(r.len());
        for (i, v) in r.into_iter().enumerate() {
            let (f, t) = (from.get(i).copied().unwrap_or(SqlType::Int), to.get(i).copied().unwrap_or(SqlType::Int));
            row.push(if f == t { v } else { convert::convert(&v, &f, &t, None)? });
        }
        out.push(row);
    }
    Ok(out)
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

/// Rows of an input converted to a set operation's column types.
struct ConformOp {
    input: Box<dyn Op>,
    from: Vec<SqlType>,
    to: Vec<SqlType>,
}

impl Op for ConformOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let Some(r) = self.input.next(cx)? else { return Ok(None) };
        if self.from == self.to {
            return Ok(Some(r));
        }
        Ok(conform(vec![r], &self.from, &self.to)?.pop())
    }
}

/// A plan opened when its first row is wanted (the second input of a UNION: its sorts
/// and hash tables are not built while the first input's rows are still read).
struct LazyOp {
    plan: Option<Plan>,
    op: Option<Box<dyn Op>>,
}

impl Op for LazyOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if let Some(plan) = self.plan.take() {
            self.op = Some(open(&plan, cx)?);
        }
        match &mut self.op {
            Some(op) => op.next(cx),
            None => Ok(None),
        }
    }
}

/// The rows of one input, then of the other (UNION ALL).
struct ConcatOp {
    first: Option<Box<dyn Op>>,
    rest: Box<dyn Op>,
}

impl Op for ConcatOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if let Some(op) = &mut self.first {
            if let Some(r) = op.next(cx)? {
                return Ok(Some(r));
            }
            self.first = None;
        }
        self.rest.next(cx)
    }
}

/// INTERSECT (`keep` true) or EXCEPT: the distinct rows of `left` whose key is (is not)
/// among `right`'s. The right side's keys are held within the grant; past it both sides
/// go to partition files by the hash of their key (a Hash Warning), and each pair of
/// partitions is compared on its own (`right_keys`: the right rows are those files' keys,
/// one binary value each).
fn intersect_except(
    keep: bool,
    mut left: Box<dyn Op>,
    mut right: Box<dyn Op>,
    right_keys: bool,
    (types, colls): (&[SqlType], &[Option<types::Collation>]),
    level: u32,
    cx: &mut Cx,
) -> Result<Box<dyn Op>, SqlError> {
    let key_of = |row: &[Value], keyed: bool| match (keyed, row.first()) {
        (true, Some(Value::Binary(k))) => k.clone(),
        _ => row_key(row, types, colls),
    };
    let mut set = std::collections::HashSet::new();
    let mut charge = cx.memory.charge();
    while let Some(r) = right.next(cx)? {
        cx.check_cancel()?;
        let k = key_of(&r, right_keys);
        if set.contains(&k) {
            continue;
        }
        let bytes = k.len() as u64 + 48;
        if charge.try_add(bytes) {
            set.insert(k);
            continue;
        }
        if level + 1 >= super::spill::MAX_SPILL_LEVEL {
            charge.add(bytes)?;
            set.insert(k);
            continue;
        }
        let dir = cx.host.spill_dir();
        let (mut lp, mut rp) = (super::spill::Partitions::new(&dir, level), super::spill::Partitions::new(&dir, level));
        for k in set.drain().chain(std::iter::once(k)) {
            rp.push(rp.of(&k), &[Value::Binary(k)])?;
        }
        drop(charge);
        while let Some(r) = right.next(cx)? {
            cx.check_cancel()?;
            let k = key_of(&r, right_keys);
            rp.push(rp.of(&k), &[Value::Binary(k)])?;
        }
        while let Some(r) = left.next(cx)? {
            cx.check_cancel()?;
            let k = row_key(&r, types, colls);
            lp.push(lp.of(&k), &r)?;
        }
        super::spill::HASH_SPILLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut pairs: Vec<_> = lp.finish()?.into_iter().zip(rp.finish()?).filter_map(|(l, r)| Some((l?, r))).collect();
        pairs.reverse();
        return Ok(Box::new(SpilledSetOp {
            keep,
            pairs,
            types: types.to_vec(),
            colls: colls.to_vec(),
            level,
            current: None,
        }));
    }
    let filtered =
        Box::new(KeyFilterOp { input: left, set, keep, types: types.to_vec(), colls: colls.to_vec(), _charge: charge });
    Ok(Box::new(DistinctOp::new(filtered, colls.to_vec(), 0, cx)))
}

/// The rows whose key is (`keep`) or is not in `set`.
struct KeyFilterOp {
    input: Box<dyn Op>,
    set: std::collections::HashSet<Vec<u8>>,
    keep: bool,
    types: Vec<SqlType>,
    colls: Vec<Option<types::Collation>>,
    _charge: super::memory::Charge,
}

impl Op for KeyFilterOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        while let Some(r) = self.input.next(cx)? {
            if self.set.contains(&row_key(&r, &self.types, &self.colls)) == self.keep {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

/// INTERSECT or EXCEPT over partition files, one pair at a time.
struct SpilledSetOp {
    keep: bool,
    /// Left partition, right partition (None: no right row hashed there), last first.
    pairs: Vec<(super::spill::SpoolReader, Option<super::spill::SpoolReader>)>,
    types: Vec<SqlType>,
    colls: Vec<Option<types::Collation>>,
    level: u32,
    current: Option<Box<dyn Op>>,
}

impl Op for SpilledSetOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some(op) = &mut self.current {
                if let Some(r) = op.next(cx)? {
                    return Ok(Some(r));
                }
            }
            let Some((l, r)) = self.pairs.pop() else { return Ok(None) };
            let r: Box<dyn Op> = match r {
                Some(r) => Box::new(r),
                None => Box::new(VecOp::new(Vec::new())),
            };
            let types = (self.types.as_slice(), self.colls.as_slice());
            self.current = Some(intersect_except(self.keep, Box::new(l), r, true, types, self.level + 1, cx)?);
        }
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

/// Compares two values of one type for ORDER BY: NULL first, strings by collation.
pub fn order_values(a: &Value, b: &Value, ty: &SqlType) -> Ordering {
    order_values_in(a, b, ty, None)
}

/// [`order_values`] with strings under `collation` (None: the default; an ORDER BY
/// item's [`BExpr::collation`]).
pub fn order_values_in(a: &Value, b: &Value, ty: &SqlType, collation: Option<&types::Collation>) -> Ordering {
    match (a.is_null(), b.is_null()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        _ => ops::compare_in(a, b, ty, collation).unwrap_or(Ordering::Equal),
    }
}

pub fn sort_rows(rows: &mut Vec<Row>, keys: &[SortKey], cx: &mut Cx) -> Result<(), SqlError> {
    // Evaluate the keys once per row, then sort indexes.
    let mut keyed: Vec<(Vec<Value>, Row)> = Vec::with_capacity(rows.len());
    for r in rows.drain(..) {
        let mut k = Vec::with_capacity(keys.len());
        for key in keys {
            k.push(key.expr.eval(&r, cx)?);
        }
        keyed.push((k, r));
    }
    let types: Vec<SqlType> = keys.iter().map(|k| k.expr.ty()).collect();
    let db = cx.db_collation();
    let colls: Vec<Option<types::Collation>> = keys.iter().map(|k| k.expr.collation(db)).collect();
    keyed.sort_by(|a, b| {
        for (i, key) in keys.iter().enumerate() {
            let o = order_values_in(&a.0[i], &b.0[i], &types[i], colls[i].as_ref());
            let o = if key.desc { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    });
    rows.extend(keyed.into_iter().map(|(_, r)| r));
    Ok(())
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

/// DISTINCT (and UNION): each row the first time its key is seen. The keys seen are
/// charged to the request's grant; past it, rows of keys not seen yet go to partition
/// files by the hash of their key (a Hash Warning), each made distinct on its own once
/// the input is read.
struct DistinctOp {
    input: Box<dyn Op>,
    /// The columns' collations (SELECT DISTINCT x COLLATE ...).
    colls: Vec<Option<types::Collation>>,
    seen: std::collections::HashSet<Vec<u8>>,
    /// The keys seen, charged to the request's grant.
    charge: super::memory::Charge,
    /// How many times the rows were partitioned already.
    level: u32,
    spill: Option<super::spill::Partitions>,
    /// Once the input is read: the partitions still to read, and the one being read.
    later: Vec<super::spill::SpoolReader>,
    current: Option<Box<DistinctOp>>,
    input_done: bool,
}

impl DistinctOp {
    fn new(input: Box<dyn Op>, colls: Vec<Option<types::Collation>>, level: u32, cx: &Cx) -> DistinctOp {
        DistinctOp {
            input,
            colls,
            seen: std::collections::HashSet::new(),
            charge: cx.memory.charge(),
            level,
            spill: None,
            later: Vec::new(),
            current: None,
            input_done: false,
        }
    }
}

impl Op for DistinctOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if !self.input_done {
            while let Some(r) = self.input.next(cx)? {
                let types: Vec<SqlType> = r.iter().map(value_type).collect();
                let key = row_key(&r, &types, &self.colls);
                if self.seen.contains(&key) {
                    continue;
                }
                cx.check_cancel()?;
                if let Some(p) = &mut self.spill {
                    p.push(p.of(&key), &r)?;
                    continue;
                }
                let bytes = key.len() as u64 + 48;
                if !self.charge.try_add(bytes) {
                    if self.level + 1 < super::spill::MAX_SPILL_LEVEL {
                        let mut p = super::spill::Partitions::new(&cx.host.spill_dir(), self.level);
                        p.push(p.of(&key), &r)?;
                        self.spill = Some(p);
                        continue;
                    }
                    self.charge.add(bytes)?;
                }
                self.seen.insert(key);
                return Ok(Some(r));
            }
            self.input_done = true;
            if let Some(p) = self.spill.take() {
                super::spill::HASH_SPILLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.seen = Default::default();
                self.charge.clear();
                self.later = p.finish()?.into_iter().flatten().collect();
                self.later.reverse();
            }
        }
        loop {
            if let Some(op) = &mut self.current {
                if let Some(r) = op.next(cx)? {
                    return Ok(Some(r));
                }
            }
            let Some(reader) = self.later.pop() else { return Ok(None) };
            self.current = Some(Box::new(DistinctOp::new(Box::new(reader), self.colls.clone(), self.level + 1, cx)));
        }
    }
}

/// A type that can key a value of any kind (for DISTINCT over rows whose column types
/// the operator does not carry).
pub fn value_type(v: &Value) -> SqlType {
    match v {
        Value::Null => SqlType::Int,
        Value::Bit(_) => SqlType::Bit,
        Value::TinyInt(_) => SqlType::TinyInt,
        Value::SmallInt(_) => SqlType::SmallInt,
        Value::Int(_) => SqlType::Int,
        Value::BigInt(_) => SqlType::BigInt,
        Value::Decimal { precision, scale, .. } => SqlType::Decimal { precision: *precision, scale: *scale },
        Value::Money(_) => SqlType::Money,
        Value::Float(_) => SqlType::Float,
        Value::Real(_) => SqlType::Real,
        Value::Date(_) => SqlType::Date,
        Value::Time { scale, .. } => SqlType::Time { scale: *scale },
        Value::DateTime { .. } => SqlType::DateTime,
        Value::SmallDateTime { .. } => SqlType::SmallDateTime,
        Value::DateTime2 { scale, .. } => SqlType::DateTime2 { scale: *scale },
        Value::DateTimeOffset { scale, .. } => SqlType::DateTimeOffset { scale: *scale },
        Value::String(_) => SqlType::NVarChar { len: types::Length::Max },
        Value::Binary(_) => SqlType::VarBinary { len: types::Length::Max },
        Value::Guid(_) => SqlType::UniqueIdentifier,
        Value::Variant(_) => SqlType::Variant,
    }
}

// --- scans -------------------------------------------------------------------------------

struct ScanOp {
    node: ScanNode,
    lower: Option<Vec<u8>>,
    lower_inclusive: bool,
    upper: Option<Vec<u8>>,
    upper_inclusive: bool,
    /// The current batch in reverse order (the next row is the last): popped row by row,
    /// its allocation refilled by every batch.
    buf: Vec<KeyRow>,
    /// The same when the host hands rows over undecoded (`Host::scan_stored`), in order
    /// from `pos`: each is decoded by `decoder` when it is reached.
    stored: StoredBatch,
    pos: usize,
    decoder: Option<Arc<dyn RowDecoder>>,
    /// A row handed back by the consumer ([`Op::recycle`]) or dropped by the filter: the
    /// next row is decoded into it, reusing its vector and its strings' buffers.
    spare: Option<Row>,
    /// The columns the consumer and the filter read, when not all: the others are not
    /// decoded (see `open_needing`).
    needed: Option<Vec<bool>>,
    /// The host has no stored form for this index: batches come from `Host::scan`.
    decoded_only: bool,
    /// The index's rows are the table's rows as they are (the primary index of a table
    /// without computed-on-read columns): `TableInfo::row_from_index` has nothing to do.
    stored_is_row: bool,
    last_key: Option<Vec<u8>>,
    exhausted: bool,
    empty: bool,
    /// The one key an equality on every key column of a unique index names: read with
    /// `Host::get` (a point lookup: no range, batch or resume protocol).
    point: Option<Vec<u8>>,
}

impl ScanOp {
    fn new(node: ScanNode, cx: &mut Cx) -> Result<ScanOp, SqlError> {
        let stored_is_row = node.index == 0 && !node.table.computes_on_read();
        let mut op = ScanOp {
            node,
            lower: None,
            lower_inclusive: true,
            upper: None,
            upper_inclusive: true,
            buf: Vec::new(),
            stored: StoredBatch::default(),
            pos: 0,
            decoder: None,
            spare: None,
            needed: None,
            decoded_only: false,
            stored_is_row,
            last_key: None,
            exhausted: false,
            empty: false,
            point: None,
        };
        if let Some(range) = op.node.range.clone() {
            let ix = &op.node.table.indexes[op.node.index];
            let mut prefix = Vec::new();
            for (i, e) in range.eq.iter().enumerate() {
                let col = ix.key_cols[i];
                let v = e.eval(&[], cx)?;
                let ty = op.node.table.columns[col].ty;
                // The seek is only chosen when the comparison is typed as the column, so
                // the comparison itself would convert the value the same way: a value
                // that does not convert is that conversion's error (245 for 'x' against
                // an int key), not an empty result. NULL never equals anything.
                let v = convert::convert(&v, &e.ty(), &ty, None)?;
                if v.is_null() {
                    op.empty = true;
                    return Ok(op);
                }
                let coll = op.node.table.columns[col].collation;
                if types::sort_key_in(&v, &ty, coll.as_ref(), &mut prefix).is_err() {
                    op.empty = true;
                    return Ok(op);
                }
            }
            let next_col = range.eq.len();
            // Every key column of a unique index (no row id or locator after them) equal
            // to a value, ascending (the prefix is the plain sort keys): one key.
            if next_col == ix.key_cols.len()
                && range.lower.is_none()
                && range.upper.is_none()
                && ix.meta.unique
                && ix.meta.kind != crate::catalog::IndexKind::Heap
                && ix.desc.iter().all(|d| !d)
            {
                op.point = Some(prefix);
                return Ok(op);
            }
            let bound =
                |b: &Option<(BExpr, bool)>, cx: &mut Cx, prefix: &[u8]| -> Result<Option<(Vec<u8>, bool)>, SqlError> {
                    let Some((e, inclusive)) = b else {
                        return Ok(None);
                    };
                    let col = ix.key_cols[next_col];
                    let ty = op.node.table.columns[col].ty;
                    let v = e.eval(&[], cx)?;
                    let v = convert::convert(&v, &e.ty(), &ty, None)?;
                    if v.is_null() {
                        return Ok(Some((Vec::new(), false)));
                    }
                    let mut k = prefix.to_vec();
                    let coll = op.node.table.columns[col].collation;
                    types::sort_key_in(&v, &ty, coll.as_ref(), &mut k)
                        .map_err(|_| SqlError::new(8115, 16, 2, "Arithmetic overflow"))?;
                    Ok(Some((k, *inclusive)))
                };
            let lower = bound(&range.lower, cx, &prefix)?;
            let upper = bound(&range.upper, cx, &prefix)?;
            if matches!(&lower, Some((k, false)) if k.is_empty()) || matches!(&upper, Some((k, false)) if k.is_empty())
            {
                op.empty = true;
                return Ok(op);
            }
            // Key prefixes: everything starting with `prefix` lies in [prefix, prefix ++ 0xFF...).
            match lower {
                Some((k, inc)) => {
                    op.lower = Some(k);
                    op.lower_inclusive = inc;
                }
                None if !prefix.is_empty() => {
                    // A NULL in the next column sorts first (0x00): skip NULLs for ranges.
                    let mut k = prefix.clone();
                    if range.upper.is_some() {
                        k.push(0);
                        op.lower_inclusive = false;
                        // Excluding exactly prefix+NULL-marker would keep NULL rows whose
                        // key continues; use prefix+0x01 inclusive instead.
                        k.pop();
                        k.push(1);
                        op.lower_inclusive = true;
                    }
                    op.lower = Some(k);
                }
                None if range.upper.is_some() => {
                    op.lower = Some(vec![1]);
                    op.lower_inclusive = true;
                }
                None => {}
            }
            match upper {
                Some((k, inc)) => {
                    // An inclusive upper bound on a key column must also include longer
                    // keys that start with it (later key columns, uniquifiers).
                    if inc {
                        op.upper = prefix_successor(&k);
                        op.upper_inclusive = false;
                    } else {
                        op.upper = Some(k);
                        op.upper_inclusive = false;
                    }
                }
                None if !prefix.is_empty() => {
                    op.upper = prefix_successor(&prefix);
                    op.upper_inclusive = false;
                }
                None => {}
            }
            if let Some(k) = op.lower.take() {
                // An exclusive lower bound on a key column must skip longer keys that
                // start with it too.
                if !op.lower_inclusive {
                    op.lower = prefix_successor(&k);
                    op.lower_inclusive = true;
                    if op.lower.is_none() {
                        op.empty = true;
                    }
                } else {
                    op.lower = Some(k);
                }
            }
        }
        Ok(op)
    }

    /// Decodes only the columns in `need` (and those the filter reads) of a scan whose
    /// stored rows are the table's rows.
    fn prune(&mut self, need: Needed) {
        let Some(mut need) = need else { return };
        if !self.stored_is_row || self.node.with_locator {
            return;
        }
        need.resize(self.node.table.columns.len(), true);
        if let Some(f) = &self.node.filter {
            mark_needed(f, &mut need);
        }
        if need.iter().any(|n| !n) {
            self.needed = Some(need);
        }
    }

    fn refill(&mut self, cx: &mut Cx) -> Result<(), SqlError> {
        // Every batch: a scan whose rows a residual filter rejects still stops.
        cx.check_cancel()?;
        self.buf.clear();
        self.stored.clear();
        self.pos = 0;
        let plain = &self.node.table.indexes[self.node.index].iref;
        let hinted;
        let index = if self.node.hints.is_none() {
            plain
        } else {
            hinted = IndexRef { hints: self.node.hints, ..plain.clone() };
            &hinted
        };
        if let Some(key) = self.point.take() {
            self.exhausted = true;
            if let Some(row) = cx.host.get(index, &key).map_err(super::host_err)? {
                self.buf.push((key, row));
            }
            return cx.check_cancel();
        }
        let (lower, upper) = if self.node.reverse {
            let upper = match &self.last_key {
                Some(k) => Bound::Excluded(k.as_slice()),
                None => bound_of(&self.upper, self.upper_inclusive),
            };
            (bound_of(&self.lower, self.lower_inclusive), upper)
        } else {
            let lower = match &self.last_key {
                Some(k) => Bound::Excluded(k.as_slice()),
                None => bound_of(&self.lower, self.lower_inclusive),
            };
            (lower, bound_of(&self.upper, self.upper_inclusive))
        };
        let reverse = self.node.reverse;
        let stored = if self.decoded_only {
            None
        } else {
            cx.host.scan_stored(index, lower, upper, reverse, SCAN_BATCH, &mut self.stored).map_err(super::host_err)?
        };
        let more = match stored {
            Some((more, decoder)) => {
                self.decoder = Some(decoder);
                more
            }
            None => {
                self.decoded_only = true;
                cx.host.scan(index, lower, upper, reverse, SCAN_BATCH, &mut self.buf).map_err(super::host_err)?
            }
        };
        if !more {
            self.exhausted = true;
        }
        let last = match self.buf.last() {
            Some((k, _)) => Some(k.as_slice()),
            None if !self.stored.is_empty() => Some(self.stored.key(self.stored.len() - 1)),
            None => None,
        };
        if let Some(k) = last {
            let kept = self.last_key.get_or_insert_with(Vec::new);
            kept.clear();
            kept.extend_from_slice(k);
        }
        self.buf.reverse();
        cx.check_cancel()
    }

    /// The next row of the batch as the index stores it (decoding a stored one into the
    /// spare row), with its key when `want_key`; None at the batch's end.
    fn pop(&mut self, cx: &mut Cx, want_key: bool) -> Result<Option<Popped>, SqlError> {
        if let Some((k, row)) = self.buf.pop() {
            return Ok(Some((Some(k), row)));
        }
        let Some(decoder) = &self.decoder else { return Ok(None) };
        let iref = &self.node.table.indexes[self.node.index].iref;
        while self.pos < self.stored.len() {
            let i = self.pos;
            self.pos += 1;
            // One spare slot for the locator UPDATE and DELETE append.
            let mut row = self.spare.take().unwrap_or_else(|| Vec::with_capacity(iref.columns.len() + 1));
            let key = self.stored.key(i);
            let record = self.stored.record(i);
            let whole = match &self.needed {
                Some(need) => decoder.decode_columns(record, need, &mut row),
                None => decoder.decode_row(record, &mut row),
            };
            if whole.map_err(super::host_err)? {
                return Ok(Some((want_key.then(|| key.to_vec()), row)));
            }
            self.spare = Some(row);
            // A value stored off-row: read through the transaction; a row deleted
            // meanwhile is skipped, as `Host::scan` does.
            if let Some(row) = cx.host.get(iref, key).map_err(super::host_err)? {
                return Ok(Some((want_key.then(|| key.to_vec()), row)));
            }
        }
        Ok(None)
    }
}

/// A row as an index stores it, with its key when asked for.
type Popped = (Option<Vec<u8>>, Row);

fn bound_of(k: &Option<Vec<u8>>, inclusive: bool) -> Bound<&[u8]> {
    match k {
        Some(k) if inclusive => Bound::Included(k.as_slice()),
        Some(k) => Bound::Excluded(k.as_slice()),
        None => Bound::Unbounded,
    }
}

/// The smallest key greater than every key starting with `prefix`; None if there is none.
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut k = prefix.to_vec();
    while let Some(last) = k.pop() {
        if last < 0xFF {
            k.push(last + 1);
            return Some(k);
        }
    }
    None
}

impl Op for ScanOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if self.empty {
            return Ok(None);
        }
        // The common case first: a stored row of the batch that is the table's row as it
        // is (no locator to add), decoded straight into the spare row and returned. The
        // general path below moves each row through a few `Option`s, which stalled on
        // store forwarding.
        if self.stored_is_row && !self.node.with_locator && self.buf.is_empty() {
            if let Some(decoder) = &self.decoder {
                while self.pos < self.stored.len() {
                    let mut row = match self.spare.take() {
                        Some(row) => row,
                        None => Vec::with_capacity(self.node.table.indexes[self.node.index].iref.columns.len() + 1),
                    };
                    let record = self.stored.record(self.pos);
                    let whole = match &self.needed {
                        Some(need) => decoder.decode_columns(record, need, &mut row),
                        None => decoder.decode_row(record, &mut row),
                    };
                    if !whole.map_err(super::host_err)? {
                        // A value stored off-row: the general path reads the row by key.
                        self.spare = Some(row);
                        break;
                    }
                    self.pos += 1;
                    if let Some(f) = &self.node.filter {
                        if !is_true(&cx.eval_with_outer(f, &row)?) {
                            self.spare = Some(row);
                            continue;
                        }
                    }
                    return Ok(Some(row));
                }
            }
        }
        let want_key = self.node.with_locator && self.node.index == 0;
        loop {
            let Some((key, stored)) = self.pop(cx, want_key)? else {
                if self.exhausted {
                    return Ok(None);
                }
                self.refill(cx)?;
                continue;
            };
            let locator = if self.node.with_locator {
                Some(match key.filter(|_| self.node.index == 0) {
                    Some(k) => k,
                    None => match stored.first() {
                        Some(Value::Binary(b)) => b.clone(),
                        _ => continue,
                    },
                })
            } else {
                None
            };
            let mut row = if self.stored_is_row {
                stored
            } else {
                match self.node.table.row_from_index(self.node.index, stored, cx)? {
                    Some(row) => row,
                    None => continue,
                }
            };
            if let Some(f) = &self.node.filter {
                if !is_true(&cx.eval_with_outer(f, &row)?) {
                    self.spare = Some(row);
                    continue;
                }
            }
            if let Some(l) = locator {
                row.push(Value::Binary(l));
            }
            return Ok(Some(row));
        }
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }

    fn next_into(&mut self, cx: &mut Cx, row: &mut Row) -> Result<bool, SqlError> {
        // As the fast path of `next`, decoding into the caller's row.
        if !self.empty && self.stored_is_row && !self.node.with_locator && self.buf.is_empty() {
            if let Some(decoder) = &self.decoder {
                while self.pos < self.stored.len() {
                    let record = self.stored.record(self.pos);
                    let whole = match &self.needed {
                        Some(need) => decoder.decode_columns(record, need, row),
                        None => decoder.decode_row(record, row),
                    };
                    if !whole.map_err(super::host_err)? {
                        break; // a value stored off-row: `next` reads the row by key
                    }
                    self.pos += 1;
                    if let Some(f) = &self.node.filter {
                        if !is_true(&cx.eval_with_outer(f, &row[..])?) {
                            continue;
                        }
                    }
                    return Ok(true);
                }
            }
        }
        match self.next(cx)? {
            Some(r) => {
                self.spare = Some(std::mem::replace(row, r));
                Ok(true)
            }
            None => Ok(false),
        }
    }
}

// --- joins -------------------------------------------------------------------------------

enum NlState {
    NeedLeft,
    Right { left: Row, op: Box<dyn Op>, matched: bool },
    Done,
}

struct NestedLoopOp {
    left: Box<dyn Op>,
    right_plan: Plan,
    right_width: usize,
    left_width: usize,
    kind: JoinKind,
    on: Option<BExpr>,
    state: NlState,
    /// For RIGHT/FULL joins: the right side materialized once, and which rows matched.
    right_rows: Option<Vec<Row>>,
    right_matched: Vec<bool>,
    pending_right_unmatched: Option<usize>,
}

impl NestedLoopOp {
    fn is_apply(&self) -> bool {
        matches!(self.kind, JoinKind::CrossApply | JoinKind::OuterApply)
    }
}

impl Op for NestedLoopOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let needs_right_rows = matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter);
        if needs_right_rows && self.right_rows.is_none() {
            let rows = drain(open(&self.right_plan, cx)?, cx)?;
            self.right_matched = vec![false; rows.len()];
            self.right_rows = Some(rows);
        }
        loop {
            match std::mem::replace(&mut self.state, NlState::Done) {
                NlState::Done => {
                    // Unmatched right rows of RIGHT/FULL joins.
                    if let Some(rows) = &self.right_rows {
                        let i = self.pending_right_unmatched.get_or_insert(0);
                        while *i < rows.len() {
                            let j = *i;
                            *i += 1;
                            if !self.right_matched[j] {
                                let mut out = vec![Value::Null; self.left_width];
                                out.extend(rows[j].iter().cloned());
                                return Ok(Some(out));
                            }
                        }
                    }
                    return Ok(None);
                }
                NlState::NeedLeft => {
                    cx.check_cancel()?;
                    let Some(left) = self.left.next(cx)? else {
                        self.state = NlState::Done;
                        continue;
                    };
                    let op: Box<dyn Op> = if let Some(rows) = &self.right_rows {
                        Box::new(IndexedVecOp { rows: rows.clone(), pos: 0 })
                    } else if self.is_apply() {
                        cx.outer.push(left.clone());
                        let op = open(&self.right_plan, cx);
                        cx.outer.pop();
                        op?
                    } else {
                        open(&self.right_plan, cx)?
                    };
                    self.state = NlState::Right { left, op, matched: false };
                }
                NlState::Right { left, mut op, mut matched } => {
                    let apply = self.is_apply();
                    if apply {
                        cx.outer.push(left.clone());
                    }
                    let r = op.next(cx);
                    if apply {
                        cx.outer.pop();
                    }
                    match r? {
                        Some(right) => {
                            let right_index = if self.right_rows.is_some() {
                                right
                                    .last()
                                    .and_then(|v| if let Value::BigInt(i) = v { Some(*i as usize) } else { None })
                            } else {
                                None
                            };
                            let right = if right_index.is_some() {
                                let mut r = right;
                                r.pop();
                                r
                            } else {
                                right
                            };
                            let mut row = left.clone();
                            row.extend(right);
                            let ok = match &self.on {
                                Some(p) => is_true(&cx.eval_with_outer(p, &row)?),
                                None => true,
                            };
                            if ok {
                                matched = true;
                                if let Some(i) = right_index {
                                    if let Some(m) = self.right_matched.get_mut(i) {
                                        *m = true;
                                    }
                                }
                                self.state = NlState::Right { left, op, matched };
                                return Ok(Some(row));
                            }
                            self.state = NlState::Right { left, op, matched };
                        }
                        None => {
                            self.state = NlState::NeedLeft;
                            let keep_left =
                                matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter | JoinKind::OuterApply);
                            if !matched && keep_left {
                                let mut row = left;
                                row.extend(std::iter::repeat_n(Value::Null, self.right_width));
                                return Ok(Some(row));
                            }
                        }
                    }
                }
            }
        }
    }
}

/// Replays materialized rows, appending each row's position (for RIGHT/FULL joins).
struct IndexedVecOp {
    rows: Vec<Row>,
    pos: usize,
}

impl Op for IndexedVecOp {
    fn next(&mut self, _cx: &mut Cx) -> OpResult {
        let Some(r) = self.rows.get(self.pos) else {
            return Ok(None);
        };
        let mut r = r.clone();
        r.push(Value::BigInt(self.pos as i64));
        self.pos += 1;
        Ok(Some(r))
    }
}

struct HashJoinOp {
    left: Box<dyn Op>,
    right: Option<Box<dyn Op>>,
    left_width: usize,
    right_width: usize,
    /// Per right column, its slot in a kept build row ([`NOT_KEPT`]: not read after the
    /// join); None: build rows are kept whole.
    right_slots: Option<Vec<usize>>,
    /// Values per kept build row.
    kept_width: usize,
    kind: JoinKind,
    left_keys: Vec<BExpr>,
    right_keys: Vec<BExpr>,
    /// How each side's key is read (a plain integer column in place).
    left_key: KeyReader,
    right_key: KeyReader,
    key_types: Vec<SqlType>,
    residual: Option<BExpr>,
    /// The positions of the joined row to output (a projection fused into the join,
    /// see `open_hash_join`); None: the whole joined row.
    out: Option<Vec<usize>>,
    /// Build side: the right input's rows, by key.
    table: JoinTable,
    /// The build rows' kept values, `kept_width` per row (no allocation per row; the
    /// right input gets each of its rows back to refill).
    build_vals: BuildVals,
    build_count: usize,
    /// The build side's share of the request's memory grant.
    build_charge: Option<super::memory::Charge>,
    /// Per build row, the next build row with the same key ([`END`] ends the chain):
    /// each key's rows in build order without a vector per key.
    next_same: Vec<usize>,
    matched: Vec<bool>,
    /// The probe row being joined, its next candidate build row (`probe_next`), and
    /// whether it matched. The row stays in place while its matches go out: moving a
    /// row through an `Option` per output row stalled on store forwarding.
    current: Row,
    /// `current` holds a probe row being joined.
    probing: bool,
    probe_next: usize,
    probe_matched: bool,
    unmatched_out: Option<usize>,
    /// Scratch for encoded keys.
    key_buf: Vec<u8>,
    /// An output row handed back by the consumer, refilled for the next one.
    spare: Option<Row>,
    /// Past the grant: the join of both sides' partition files (`exec/hash_spill.rs`).
    spilled: Option<Box<super::hash_spill::SpilledJoin>>,
}

/// The end of a chain of build rows.
const END: usize = usize::MAX;

/// A right column a hash join does not keep (see `HashJoinOp::right_slots`).
const NOT_KEPT: usize = usize::MAX;

/// The values a hash join keeps of its build rows, `kept_width` per row, in build order.
enum BuildVals {
    Values(Vec<Value>),
    /// Every kept column is of an integer type: 8 bytes per value rather than a
    /// `Value`'s 32, so a large build side touches a quarter of the fresh memory.
    Ints(IntVals),
}

/// Integer values of known types (see [`BuildVals::Ints`]).
pub(super) struct IntVals {
    /// The type of each kept column, in slot order.
    types: Vec<SqlType>,
    vals: Vec<i64>,
    /// Bit `i` set: value `i` is NULL. Empty until the first NULL is kept.
    nulls: Vec<u64>,
}

impl IntVals {
    /// Keeps `v` as the next value (slot `k` of its row); false when it is not a value of
    /// the slot's integer type (the caller then keeps `Value`s).
    #[inline]
    fn push(&mut self, k: usize, v: &Value) -> bool {
        let n = match (v, self.types.get(k)) {
            (Value::Int(n), Some(SqlType::Int)) => i64::from(*n),
            (Value::BigInt(n), Some(SqlType::BigInt)) => *n,
            (Value::SmallInt(n), Some(SqlType::SmallInt)) => i64::from(*n),
            (Value::TinyInt(n), Some(SqlType::TinyInt)) => i64::from(*n),
            (Value::Null, Some(_)) => {
                let at = self.vals.len();
                if self.nulls.len() <= at / 64 {
                    self.nulls.resize(at / 64 + 1, 0);
                }
                self.nulls[at / 64] |= 1 << (at % 64);
                0
            }
            _ => return false,
        };
        self.vals.push(n);
        true
    }

    /// Value `at` (of slot `k`) into `slot`.
    #[inline]
    fn put(&self, at: usize, k: usize, slot: &mut Value) {
        let null = self.nulls.get(at / 64).is_some_and(|w| w >> (at % 64) & 1 == 1);
        if let (Some(&n), Some(SqlType::Int), Value::Int(s)) = (self.vals.get(at), self.types.get(k), &mut *slot) {
            if !null {
                *s = n as i32;
                return;
            }
        }
        *slot = match (self.vals.get(at), self.types.get(k)) {
            (Some(&n), Some(SqlType::Int)) if !null => Value::Int(n as i32),
            (Some(&n), Some(SqlType::BigInt)) if !null => Value::BigInt(n),
            (Some(&n), Some(SqlType::SmallInt)) if !null => Value::SmallInt(n as i16),
            (Some(&n), Some(SqlType::TinyInt)) if !null => Value::TinyInt(n as u8),
            _ => Value::Null,
        };
    }

    /// The same values as `Value`s.
    fn to_values(&self) -> Vec<Value> {
        let w = self.types.len().max(1);
        (0..self.vals.len())
            .map(|at| {
                let mut v = Value::Null;
                self.put(at, at % w, &mut v);
                v
            })
            .collect()
    }
}

impl BuildVals {
    /// `Ints` when every kept column (of these types) is of an integer type.
    fn for_types(kept: Vec<SqlType>) -> BuildVals {
        let int = |t: &SqlType| matches!(t, SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt);
        if !kept.is_empty() && kept.iter().all(int) {
            BuildVals::Ints(IntVals { types: kept, vals: Vec::new(), nulls: Vec::new() })
        } else {
            BuildVals::Values(Vec::new())
        }
    }

    /// Keeps one build row's kept values (moved out of the row, NULLs left behind).
    fn push<'a>(&mut self, kept: impl Iterator<Item = &'a mut Value>) {
        match self {
            BuildVals::Values(vals) => vals.extend(kept.map(|v| std::mem::replace(v, Value::Null))),
            BuildVals::Ints(ints) => {
                let mut kept = kept.enumerate();
                for (k, v) in kept.by_ref() {
                    if !ints.push(k, v) {
                        // A value not of its column's type: `Value`s from here on (those
                        // kept so far, this row's first ones too, turned back).
                        let mut vals = ints.to_values();
                        vals.push(std::mem::replace(v, Value::Null));
                        vals.extend(kept.map(|(_, v)| std::mem::replace(v, Value::Null)));
                        *self = BuildVals::Values(vals);
                        return;
                    }
                }
            }
        }
    }

    /// Build row `i`'s `w` kept values.
    fn kept(&self, i: usize, w: usize) -> Vec<Value> {
        match self {
            BuildVals::Values(vals) => vals[i * w..(i + 1) * w].to_vec(),
            BuildVals::Ints(ints) => (0..w)
                .map(|k| {
                    let mut v = Value::Null;
                    ints.put(i * w + k, k, &mut v);
                    v
                })
                .collect(),
        }
    }

    /// Build row `i` (of `w` kept values each) as `joined` reads it.
    #[inline]
    fn row<'a>(&'a self, i: usize, w: usize, slots: Option<&'a [usize]>) -> RightRow<'a> {
        match self {
            BuildVals::Values(vals) => RightRow::Values(&vals[i * w..(i + 1) * w], slots),
            BuildVals::Ints(ints) => RightRow::Ints(ints, i * w, slots),
        }
    }
}

/// A right row as [`joined`] reads it.
#[derive(Clone, Copy)]
pub(super) enum RightRow<'a> {
    /// The row's values; with slots, right column `c` is in `slots[c]` of a kept build row.
    Values(&'a [Value], Option<&'a [usize]>),
    /// A kept build row of integers starting at value `start`; slots as for `Values`.
    Ints(&'a IntVals, usize, Option<&'a [usize]>),
}

impl RightRow<'_> {
    /// Right column `c` into `slot` (NULL when the row has none: not kept, or past its end).
    #[inline]
    fn put(self, c: usize, slot: &mut Value) {
        let slot_of = |slots: Option<&[usize]>| match slots {
            Some(s) => s.get(c).copied().filter(|&k| k != NOT_KEPT),
            None => Some(c),
        };
        match self {
            RightRow::Values(vals, slots) => assign(slot, slot_of(slots).and_then(|k| vals.get(k))),
            RightRow::Ints(ints, start, slots) => match slot_of(slots) {
                Some(k) if k < ints.types.len() => ints.put(start + k, k, slot),
                _ => *slot = Value::Null,
            },
        }
    }
}

/// The build rows by join key: the first row of each key's chain (see `next_same`).
enum JoinTable {
    /// One key of an integer type, while the build side is read (see `build`).
    Int(HashMap<i64, usize, FxBuild>),
    /// Integer keys that span a range at most a few times their number: the chains'
    /// heads in an array indexed by key - `min`. No hashing, and probes in key order
    /// (a scan by the probe side's primary key) read the array in order too, where a
    /// hash table would miss the cache on nearly every probe.
    Dense { min: i64, heads: Vec<usize> },
    /// Any other keys: keyed by their concatenated memcmp sort keys (`types::sort_key`),
    /// which are equal exactly when the values compare equal in the key type.
    Bytes(HashMap<Vec<u8>, usize, FxBuild>),
}

/// A probe or build row's join key.
enum JoinKey {
    /// A NULL key (or one that cannot be a value of the key type): matches nothing.
    None,
    Int(i64),
    /// In the operator's `key_buf`.
    Bytes,
}

/// The value of an integer-typed key as an i64.
#[inline]
fn int_key(v: &Value) -> Option<i64> {
    match *v {
        Value::TinyInt(n) => Some(i64::from(n)),
        Value::SmallInt(n) => Some(i64::from(n)),
        Value::Int(n) => Some(i64::from(n)),
        Value::BigInt(n) => Some(n),
        _ => None,
    }
}

impl JoinTable {
    fn for_types(types: &[SqlType]) -> JoinTable {
        match types {
            [SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt] => {
                JoinTable::Int(HashMap::default())
            }
            _ => JoinTable::Bytes(HashMap::with_hasher(FxBuild)),
        }
    }
}

/// How a side's join key is read from its rows.
#[derive(Debug, Clone, Copy)]
enum KeyReader {
    /// One column of the key's integer type: read in place, nothing evaluated.
    IntCol(usize),
    /// Evaluated and converted (`join_key`).
    General,
}

impl KeyReader {
    fn new(keys: &[BExpr], types: &[SqlType]) -> KeyReader {
        match (keys, types) {
            ([BExpr::Col(i, t)], [ty @ (SqlType::TinyInt | SqlType::SmallInt | SqlType::Int | SqlType::BigInt)])
                if t == ty =>
            {
                KeyReader::IntCol(*i)
            }
            _ => KeyReader::General,
        }
    }
}

/// Evaluates a row's join key: `keys` converted to `types`; bytes go to `buf`.
fn join_key(
    reader: KeyReader,
    table: &JoinTable,
    keys: &[BExpr],
    types: &[SqlType],
    row: &[Value],
    buf: &mut Vec<u8>,
    cx: &mut Cx,
) -> Result<JoinKey, SqlError> {
    static NULL: Value = Value::Null;
    if let KeyReader::IntCol(i) = reader {
        return Ok(row.get(i).and_then(int_key).map_or(JoinKey::None, JoinKey::Int));
    }
    buf.clear();
    for (e, ty) in keys.iter().zip(types) {
        let computed;
        let v = match e {
            // A column of the key's type (the common case) is read in place.
            BExpr::Col(i, t) if t == ty => row.get(*i).unwrap_or(&NULL),
            _ => {
                let v = cx.eval_with_outer(e, row)?;
                computed = if e.ty() == *ty || v.is_null() { v } else { convert::convert(&v, &e.ty(), ty, None)? };
                &computed
            }
        };
        if v.is_null() {
            return Ok(JoinKey::None);
        }
        if let JoinTable::Int(_) | JoinTable::Dense { .. } = table {
            return Ok(int_key(v).map_or(JoinKey::None, JoinKey::Int));
        }
        if types::sort_key(v, ty, buf).is_err() {
            return Ok(JoinKey::None);
        }
    }
    Ok(JoinKey::Bytes)
}

impl HashJoinOp {
    /// Reads the build side into the table. Each key's rows are chained through
    /// `next_same` in build order: rows are linked in reverse, each in front of the
    /// rows after it.
    fn build(&mut self, mut right: Box<dyn Op>, cx: &mut Cx) -> Result<(), SqlError> {
        let w = self.right_width;
        // The keys of the build rows, linked once all are read (an integer table then
        // knows its keys' range). Integer keys become the chain links in place (no
        // second vector of fresh pages); the rows with a NULL key are listed apart.
        let mut int_keys: Vec<i64> = Vec::new();
        let mut null_rows: Vec<usize> = Vec::new();
        let mut byte_keys: Vec<Option<(usize, usize)>> = Vec::new();
        let mut key_bytes: Vec<u8> = Vec::new();
        let mut r = Row::new();
        // Charged to the grant (and the cancel flag read) every 1,024 rows.
        let mut charge = cx.memory.charge();
        let mut pending = 0u64;
        while right.next_into(cx, &mut r)? {
            pending += super::memory::row_bytes(&r);
            if self.build_count % 1024 == 1023 {
                cx.check_cancel()?;
                if !charge.try_add(pending) {
                    // Past the grant: both sides go to partition files (a Hash Warning).
                    let built = Built {
                        int_keys: &int_keys,
                        null_rows: &null_rows,
                        byte_keys: &byte_keys,
                        key_bytes: &key_bytes,
                    };
                    let spilled = self.spill(built, r, right, cx)?;
                    self.spilled = Some(Box::new(spilled));
                    return Ok(());
                }
                pending = 0;
            }
            let key = match self.right_key {
                KeyReader::IntCol(i) => r.get(i).and_then(int_key).map_or(JoinKey::None, JoinKey::Int),
                KeyReader::General => {
                    join_key(self.right_key, &self.table, &self.right_keys, &self.key_types, &r, &mut self.key_buf, cx)?
                }
            };
            match key {
                JoinKey::Int(k) => int_keys.push(k),
                JoinKey::Bytes => {
                    byte_keys.push(Some((key_bytes.len(), key_bytes.len() + self.key_buf.len())));
                    key_bytes.extend_from_slice(&self.key_buf);
                }
                JoinKey::None => match self.table {
                    JoinTable::Bytes(_) => byte_keys.push(None),
                    _ => {
                        null_rows.push(int_keys.len());
                        int_keys.push(0);
                    }
                },
            }
            // The values kept move out (NULLs stay): the row keeps its width for the
            // next one to be decoded into.
            if r.len() != w {
                r.resize(w, Value::Null);
            }
            match &self.right_slots {
                None => self.build_vals.push(r.iter_mut()),
                Some(slots) => {
                    self.build_vals.push(r.iter_mut().zip(slots).filter(|(_, &s)| s != NOT_KEPT).map(|(v, _)| v))
                }
            }
            self.build_count += 1;
        }
        charge.add(pending)?;
        self.build_charge = Some(charge);
        if let JoinTable::Bytes(m) = &mut self.table {
            self.next_same = vec![END; self.build_count];
            for (i, k) in byte_keys.iter().enumerate().rev() {
                let Some((a, b)) = *k else { continue };
                let key = &key_bytes[a..b];
                match m.get_mut(key) {
                    Some(head) => self.next_same[i] = std::mem::replace(head, i),
                    None => {
                        m.insert(key.to_vec(), i);
                    }
                }
            }
        } else {
            let (mut min, mut max) = (i64::MAX, i64::MIN);
            let mut nulls = null_rows.iter().peekable();
            for (i, &k) in int_keys.iter().enumerate() {
                if nulls.next_if_eq(&&i).is_none() {
                    min = min.min(k);
                    max = max.max(k);
                }
            }
            let n = int_keys.len() - null_rows.len();
            // Each key (as bits) is replaced by its row's link, last row first.
            let mut links: Vec<usize> = int_keys.into_iter().map(|k| k as u64 as usize).collect();
            let mut nulls = null_rows.iter().rev().peekable();
            let span = (i128::from(max) - i128::from(min) + 1).max(0);
            if n > 0 && span <= 4 * n as i128 + 64 {
                let mut heads = vec![END; span as usize];
                for i in (0..links.len()).rev() {
                    if nulls.next_if_eq(&&i).is_some() {
                        links[i] = END;
                        continue;
                    }
                    let k = links[i] as u64 as i64;
                    let head = &mut heads[(i128::from(k) - i128::from(min)) as usize];
                    links[i] = std::mem::replace(head, i);
                }
                self.table = JoinTable::Dense { min, heads };
            } else {
                let mut m = HashMap::with_capacity_and_hasher(n, FxBuild);
                for i in (0..links.len()).rev() {
                    if nulls.next_if_eq(&&i).is_some() {
                        links[i] = END;
                        continue;
                    }
                    let head = m.entry(links[i] as u64 as i64).or_insert(END);
                    links[i] = std::mem::replace(head, i);
                }
                self.table = JoinTable::Int(m);
            }
            self.next_same = links;
        }
        if matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter) {
            self.matched = vec![false; self.build_count];
        }
        Ok(())
    }
}

/// The keys of the build rows read so far (see `HashJoinOp::build`).
struct Built<'a> {
    int_keys: &'a [i64],
    null_rows: &'a [usize],
    byte_keys: &'a [Option<(usize, usize)>],
    key_bytes: &'a [u8],
}

impl HashJoinOp {
    /// A key's bytes in a partition record: an integer key big-endian, others their
    /// sort key; None for a NULL key.
    fn spill_key(&mut self, side_right: bool, row: &[Value], cx: &mut Cx) -> Result<Option<Vec<u8>>, SqlError> {
        let (reader, keys) =
            if side_right { (self.right_key, &self.right_keys) } else { (self.left_key, &self.left_keys) };
        let key = match reader {
            KeyReader::IntCol(i) => row.get(i).and_then(int_key).map_or(JoinKey::None, JoinKey::Int),
            KeyReader::General => join_key(reader, &self.table, keys, &self.key_types, row, &mut self.key_buf, cx)?,
        };
        Ok(match key {
            JoinKey::None => None,
            JoinKey::Int(k) => Some(k.to_be_bytes().to_vec()),
            JoinKey::Bytes => Some(self.key_buf.clone()),
        })
    }

    /// Writes the build rows read so far (`built`), the row `r` and the rest of `right`,
    /// then every probe row, to partition files, and frees the build side's memory.
    fn spill(
        &mut self,
        built: Built<'_>,
        mut r: Row,
        mut right: Box<dyn Op>,
        cx: &mut Cx,
    ) -> Result<super::hash_spill::SpilledJoin, SqlError> {
        use super::hash_spill::{key_value, SpillWriter};
        let mut w = SpillWriter::new(cx, 0);
        let keep_build_nulls = matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter);
        let keep_probe_nulls = matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter);
        let int_table = !matches!(self.table, JoinTable::Bytes(_));
        let mut nulls = built.null_rows.iter().peekable();
        for i in 0..self.build_count {
            let key: Option<Vec<u8>> = if int_table {
                match nulls.next_if_eq(&&i) {
                    Some(_) => None,
                    None => built.int_keys.get(i).map(|k| k.to_be_bytes().to_vec()),
                }
            } else {
                built.byte_keys.get(i).copied().flatten().map(|(a, b)| built.key_bytes[a..b].to_vec())
            };
            if key.is_none() && !keep_build_nulls {
                continue;
            }
            let mut rec = vec![key_value(key.as_deref())];
            rec.extend(self.build_vals.kept(i, self.kept_width));
            w.build.push(w.build.of(key.as_deref().unwrap_or(&[])), &rec)?;
        }
        self.build_vals = BuildVals::Values(Vec::new());
        self.build_count = 0;
        let width = self.right_width;
        loop {
            cx.check_cancel()?;
            let key = self.spill_key(true, &r, cx)?;
            if key.is_some() || keep_build_nulls {
                if r.len() != width {
                    r.resize(width, Value::Null);
                }
                let mut rec = vec![key_value(key.as_deref())];
                match &self.right_slots {
                    None => rec.extend(r.iter().cloned()),
                    Some(slots) => {
                        rec.extend(r.iter().zip(slots).filter(|(_, &s)| s != NOT_KEPT).map(|(v, _)| v.clone()))
                    }
                }
                w.build.push(w.build.of(key.as_deref().unwrap_or(&[])), &rec)?;
            }
            if !right.next_into(cx, &mut r)? {
                break;
            }
        }
        drop(right);
        while let Some(l) = self.left.next(cx)? {
            cx.check_cancel()?;
            let key = self.spill_key(false, &l, cx)?;
            if key.is_none() && !keep_probe_nulls {
                continue;
            }
            let mut rec = Vec::with_capacity(l.len() + 1);
            rec.push(key_value(key.as_deref()));
            rec.extend(l);
            w.probe.push(w.probe.of(key.as_deref().unwrap_or(&[])), &rec)?;
        }
        super::hash_spill::SpilledJoin::new(
            w,
            self.kind,
            self.residual.clone(),
            self.out.clone(),
            (self.left_width, self.right_width),
            self.right_slots.clone(),
            cx,
        )
    }
}

/// The first build row of `table` whose key equals the probe row's, or END; the probe
/// side's key is read by `reader` (`keys` converted to `types`), bytes going to `buf`.
fn first_match(
    table: &JoinTable,
    (reader, keys, types): (KeyReader, &[BExpr], &[SqlType]),
    left: &[Value],
    buf: &mut Vec<u8>,
    cx: &mut Cx,
) -> Result<usize, SqlError> {
    let key = match reader {
        // Inline: the call cost as much as the lookup.
        KeyReader::IntCol(i) => left.get(i).and_then(int_key).map_or(JoinKey::None, JoinKey::Int),
        KeyReader::General => join_key(reader, table, keys, types, left, buf, cx)?,
    };
    Ok(match (table, key) {
        (JoinTable::Int(m), JoinKey::Int(k)) => m.get(&k).copied().unwrap_or(END),
        (JoinTable::Dense { min, heads }, JoinKey::Int(k)) => {
            let at = i128::from(k) - i128::from(*min);
            usize::try_from(at).ok().and_then(|at| heads.get(at)).copied().unwrap_or(END)
        }
        (JoinTable::Bytes(m), JoinKey::Bytes) => m.get(buf.as_slice()).copied().unwrap_or(END),
        _ => END,
    })
}

/// Sets `slot` to `v` (NULL for None): integers inline, other values by `clone_from`.
#[inline]
fn assign(slot: &mut Value, v: Option<&Value>) {
    match (v, slot) {
        // An integer over an integer: in place (an assignment drops the old value
        // through a call first).
        (Some(Value::Int(n)), Value::Int(s)) => *s = *n,
        (v, slot) => assign_any(slot, v),
    }
}

fn assign_any(slot: &mut Value, v: Option<&Value>) {
    match v {
        None | Some(Value::Null) => *slot = Value::Null,
        Some(Value::Int(n)) => *slot = Value::Int(*n),
        Some(Value::BigInt(n)) => *slot = Value::BigInt(*n),
        Some(v) => slot.clone_from(v),
    }
}

/// A join's output row: `left` then `right` (NULLs for a missing side), or the `out`
/// positions of that row; in the spare row's vector when there is one.
fn joined(
    spare: &mut Option<Row>,
    out: Option<&[usize]>,
    left: Option<&[Value]>,
    (lw, rw): (usize, usize),
    right: Option<RightRow<'_>>,
) -> Row {
    let mut row = spare.take().unwrap_or_default();
    fill_joined(&mut row, out, left, (lw, rw), right);
    row
}

/// [`joined`] into `row`, over its values.
pub(super) fn fill_joined(
    row: &mut Row,
    out: Option<&[usize]>,
    left: Option<&[Value]>,
    (lw, rw): (usize, usize),
    right: Option<RightRow<'_>>,
) {
    match out {
        Some(out) => {
            // Over the spare row's values: a string reuses its buffer.
            if row.len() != out.len() {
                row.resize(out.len(), Value::Null);
            }
            for (slot, &p) in row.iter_mut().zip(out) {
                if p < lw {
                    assign(slot, left.and_then(|l| l.get(p)));
                } else {
                    match right {
                        Some(r) => r.put(p - lw, slot),
                        None => *slot = Value::Null,
                    }
                }
            }
        }
        None => {
            row.clear();
            row.reserve(lw + rw);
            match left {
                Some(l) => row.extend_from_slice(l),
                None => row.resize(lw, Value::Null),
            }
            match right {
                Some(RightRow::Values(r, None)) => row.extend_from_slice(r),
                Some(r) => {
                    row.resize(lw + rw, Value::Null);
                    for (c, slot) in row[lw..].iter_mut().enumerate() {
                        r.put(c, slot);
                    }
                }
                None => row.resize(lw + rw, Value::Null),
            }
        }
    }
}

impl Op for HashJoinOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let mut row = self.spare.take().unwrap_or_default();
        if self.next_into(cx, &mut row)? {
            return Ok(Some(row));
        }
        self.spare = Some(row);
        Ok(None)
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }

    fn next_into(&mut self, cx: &mut Cx, row: &mut Row) -> Result<bool, SqlError> {
        if let Some(right) = self.right.take() {
            self.build(right, cx)?;
        }
        if let Some(s) = &mut self.spilled {
            return s.next_into(cx, row);
        }
        let widths = (self.left_width, self.right_width);
        loop {
            if self.probing {
                let mut i = self.probe_next;
                while i != END {
                    let after = self.next_same[i];
                    let right = Some(self.build_vals.row(i, self.kept_width, self.right_slots.as_deref()));
                    fill_joined(row, self.out.as_deref(), Some(self.current.as_slice()), widths, right);
                    let ok = match &self.residual {
                        Some(p) => is_true(&cx.eval_with_outer(p, &row[..])?),
                        None => true,
                    };
                    if ok {
                        if let Some(m) = self.matched.get_mut(i) {
                            *m = true;
                        }
                        self.probe_next = after;
                        self.probe_matched = true;
                        return Ok(true);
                    }
                    i = after;
                }
                self.probing = false;
                if !self.probe_matched && matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter) {
                    fill_joined(row, self.out.as_deref(), Some(self.current.as_slice()), widths, None);
                    return Ok(true);
                }
            }
            if self.unmatched_out.is_none() {
                // The probe row is read into the previous one's vector.
                if self.left.next_into(cx, &mut self.current)? {
                    self.probe_next = first_match(
                        &self.table,
                        (self.left_key, &self.left_keys, &self.key_types),
                        &self.current,
                        &mut self.key_buf,
                        cx,
                    )?;
                    self.probe_matched = false;
                    self.probing = true;
                    continue;
                }
                self.unmatched_out = Some(0);
            }
            if matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter) {
                let i = self.unmatched_out.get_or_insert(0);
                while *i < self.build_count {
                    let j = *i;
                    *i += 1;
                    if !self.matched.get(j).copied().unwrap_or(false) {
                        let right = Some(self.build_vals.row(j, self.kept_width, self.right_slots.as_deref()));
                        fill_joined(row, self.out.as_deref(), None, widths, right);
                        return Ok(true);
                    }
                }
            }
            return Ok(false);
        }
    }
}

/// Where a merge join is (see `MergeJoinOp::next`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MergeState {
    /// The next left row is to be read.
    NeedLeft,
    /// Joining `left_row` with the group, from `probe.0`.
    Probe,
    /// Moving the right side up to this key: the group's unmatched rows, then right
    /// rows before the key (right-keeping joins output them), then the key's rows.
    Advance(i64),
    /// The left side has ended: what remains of the right side (right-keeping joins).
    Tail,
    Done,
}

/// A merge join of inputs in ascending order of one integer key each. The right rows
/// of the current key (the group) are kept, so each left row with that key meets all
/// of them (many-to-many). NULL keys match nothing.
struct MergeJoinOp {
    left: Box<dyn Op>,
    right: Box<dyn Op>,
    widths: (usize, usize),
    kind: JoinKind,
    /// The key's position in a left and a right row.
    keys: (usize, usize),
    residual: Option<BExpr>,
    /// See `HashJoinOp::out`.
    out: Option<Vec<usize>>,
    state: MergeState,
    left_row: Option<Row>,
    /// The next group row to try with `left_row`, and whether it matched one.
    probe: (usize, bool),
    /// The last key read on each side: an input out of order is an error, never a
    /// wrong result.
    last_keys: (Option<i64>, Option<i64>),
    group: Vec<Row>,
    group_matched: Vec<bool>,
    /// The key of the group, once it is complete.
    group_key: Option<i64>,
    /// Group rows already checked for being unmatched.
    flushed: usize,
    /// The next right row, read but not yet placed.
    peek: Option<Row>,
    right_done: bool,
    spare: Option<Row>,
}

fn out_of_order() -> SqlError {
    SqlError::new(
        8624,
        16,
        1,
        "Internal Query Processor Error: The query processor could not produce a query plan. For more information, contact Customer Support Services.",
    )
}

impl MergeJoinOp {
    fn keep_left(&self) -> bool {
        matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter)
    }

    fn keep_right(&self) -> bool {
        matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter)
    }

    /// The next right row (the peeked one first), its key checked for order.
    fn next_right(&mut self, cx: &mut Cx) -> Result<Option<(Row, Option<i64>)>, SqlError> {
        let row = match self.peek.take() {
            Some(r) => r,
            None if self.right_done => return Ok(None),
            None => match self.right.next(cx)? {
                Some(r) => r,
                None => {
                    self.right_done = true;
                    return Ok(None);
                }
            },
        };
        let key = row.get(self.keys.1).and_then(int_key);
        if let Some(k) = key {
            if self.last_keys.1.is_some_and(|last| k < last) {
                return Err(out_of_order());
            }
            self.last_keys.1 = Some(k);
        }
        Ok(Some((row, key)))
    }

    /// Right-keeping joins: the next row of the finished group no left row matched.
    /// None once the group is done with; it is then emptied.
    fn unmatched_in_group(&mut self) -> Option<Row> {
        if self.keep_right() {
            while self.flushed < self.group.len() {
                let j = self.flushed;
                self.flushed += 1;
                if !self.group_matched[j] {
                    return Some(joined(
                        &mut self.spare,
                        self.out.as_deref(),
                        None,
                        self.widths,
                        Some(RightRow::Values(&self.group[j], None)),
                    ));
                }
            }
        }
        if let Some(r) = self.group.pop() {
            self.right.recycle(r);
        }
        self.group.clear();
        self.group_matched.clear();
        self.group_key = None;
        self.flushed = 0;
        None
    }

    /// A row of `right` alone (NULLs on the left), the row handed back to its input.
    fn right_only(&mut self, r: Row) -> Row {
        let row = joined(&mut self.spare, self.out.as_deref(), None, self.widths, Some(RightRow::Values(&r, None)));
        self.right.recycle(r);
        row
    }
}

impl Op for MergeJoinOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            match self.state {
                MergeState::Done => return Ok(None),
                MergeState::NeedLeft => {
                    let Some(left) = self.left.next(cx)? else {
                        self.state = MergeState::Tail;
                        continue;
                    };
                    let Some(k) = left.get(self.keys.0).and_then(int_key) else {
                        // A NULL key matches nothing.
                        if self.keep_left() {
                            let row = joined(&mut self.spare, self.out.as_deref(), Some(&left), self.widths, None);
                            self.left.recycle(left);
                            return Ok(Some(row));
                        }
                        self.left.recycle(left);
                        continue;
                    };
                    if self.last_keys.0.is_some_and(|last| k < last) {
                        return Err(out_of_order());
                    }
                    self.last_keys.0 = Some(k);
                    self.left_row = Some(left);
                    self.probe = (0, false);
                    self.state = if self.group_key == Some(k) { MergeState::Probe } else { MergeState::Advance(k) };
                }
                MergeState::Probe => {
                    let Some(left) = self.left_row.take() else {
                        self.state = MergeState::NeedLeft;
                        continue;
                    };
                    while self.probe.0 < self.group.len() {
                        let j = self.probe.0;
                        self.probe.0 += 1;
                        let right = Some(RightRow::Values(self.group[j].as_slice(), None));
                        let row = joined(&mut self.spare, self.out.as_deref(), Some(&left), self.widths, right);
                        let ok = match &self.residual {
                            Some(p) => is_true(&cx.eval_with_outer(p, &row)?),
                            None => true,
                        };
                        if ok {
                            self.probe.1 = true;
                            self.group_matched[j] = true;
                            self.left_row = Some(left);
                            return Ok(Some(row));
                        }
                        self.spare = Some(row);
                    }
                    self.state = MergeState::NeedLeft;
                    if !self.probe.1 && self.keep_left() {
                        let row = joined(&mut self.spare, self.out.as_deref(), Some(&left), self.widths, None);
                        self.left.recycle(left);
                        return Ok(Some(row));
                    }
                    self.left.recycle(left);
                }
                MergeState::Advance(k) => {
                    // The group of an earlier key is finished (left keys ascend).
                    if self.group_key.is_some() {
                        if let Some(row) = self.unmatched_in_group() {
                            return Ok(Some(row));
                        }
                    }
                    match self.next_right(cx)? {
                        Some((r, rk)) if rk.is_none_or(|rk| rk < k) => {
                            if self.keep_right() {
                                return Ok(Some(self.right_only(r)));
                            }
                            self.right.recycle(r);
                        }
                        Some((r, Some(rk))) if rk == k => {
                            self.group.push(r);
                            self.group_matched.push(false);
                        }
                        other => {
                            // Past the key (kept for later) or the right side's end: the
                            // group is complete.
                            self.peek = other.map(|(r, _)| r);
                            self.group_key = Some(k);
                            self.state = MergeState::Probe;
                        }
                    }
                }
                MergeState::Tail => {
                    if !self.keep_right() {
                        self.state = MergeState::Done;
                        continue;
                    }
                    if self.group_key.is_some() {
                        if let Some(row) = self.unmatched_in_group() {
                            return Ok(Some(row));
                        }
                    }
                    match self.next_right(cx)? {
                        Some((r, _)) => return Ok(Some(self.right_only(r))),
                        None => self.state = MergeState::Done,
                    }
                }
            }
        }
    }

    fn recycle(&mut self, row: Row) {
        self.spare = Some(row);
    }
}

// --- aggregation -------------------------------------------------------------------------

struct Group {
    keys: Row,
    accs: Vec<Accumulator>,
    distinct: Vec<std::collections::HashSet<Vec<u8>>>,
    /// For aggregates with WITHIN GROUP ordering: the inputs, sorted at the end.
    ordered: Vec<Vec<(Vec<Value>, Value, Option<Value>)>>,
}

/// One grouping set's groups, in first-seen order, and their index by encoded key.
type GroupTable = (HashMap<Vec<u8>, usize, FxBuild>, Vec<Group>);

fn new_group(keys: Row, aggs: &[AggSpec]) -> Group {
    Group {
        keys,
        accs: aggs.iter().map(|a| Accumulator::new(a.kind, a.arg.as_ref().map(|e| e.ty()), a.result_type)).collect(),
        distinct: aggs.iter().map(|_| Default::default()).collect(),
        ordered: aggs.iter().map(|_| Vec::new()).collect(),
    }
}

/// Groups `input` by `keys` (per grouping set of `sets`) and computes `aggs`. Groups are
/// charged to the request's grant; past it, the rows of groups not yet in memory go to
/// partition files by the hash of their group (a Hash Warning), and each partition is
/// aggregated on its own after the groups in memory are out (`level`: how many times
/// the rows were partitioned already, see [`super::spill::MAX_SPILL_LEVEL`]).
fn aggregate(
    mut input: Box<dyn Op>,
    keys: &[BExpr],
    aggs: &[AggSpec],
    sets: Option<&Vec<Vec<bool>>>,
    scalar: bool,
    level: u32,
    cx: &mut Cx,
) -> Result<Box<dyn Op>, SqlError> {
    let key_types: Vec<SqlType> = keys.iter().map(|k| k.ty()).collect();
    // GROUP BY x COLLATE c groups x's strings under c.
    let db = cx.db_collation();
    let key_colls: Vec<Option<types::Collation>> = keys.iter().map(|k| k.collation(db)).collect();
    let arg_colls: Vec<Option<types::Collation>> =
        aggs.iter().map(|a| a.arg.as_ref().and_then(|e| e.collation(db))).collect();
    let all_set = vec![vec![true; keys.len()]];
    let sets = sets.unwrap_or(&all_set);
    // One hash table per grouping set, by the group's encoded key; groups keep
    // first-seen order.
    let mut tables: Vec<GroupTable> = sets.iter().map(|_| (HashMap::with_hasher(FxBuild), Vec::new())).collect();
    let mut saw_null = false;
    // Per-row scratch, reused: the values of keys and arguments that are not plain
    // columns (plain columns are read in place), and the encoded group key.
    let mut key_vals: Vec<Value> = vec![Value::Null; keys.len()];
    let mut arg_vals: Vec<(Value, Option<Value>, Vec<Value>)> =
        aggs.iter().map(|_| (Value::Null, None, Vec::new())).collect();
    let mut hk: Vec<u8> = Vec::new();
    static NULL: Value = Value::Null;
    static ONE: Value = Value::Int(1);
    // The groups are charged to the request's grant; the cancel flag is read every
    // 1,024 input rows.
    let mut charge = cx.memory.charge();
    let mut read = 0u64;
    // Past the grant: a partition file set per grouping set.
    let mut spill: Option<Vec<super::spill::Partitions>> = None;
    let mut rec: Row = Vec::new();
    while let Some(row) = input.next(cx)? {
        read += 1;
        if read % 1024 == 0 {
            cx.check_cancel()?;
        }
        for (k, slot) in keys.iter().zip(key_vals.iter_mut()) {
            if !matches!(k, BExpr::Col(..)) {
                *slot = cx.eval_with_outer(k, &row)?;
            }
        }
        for (a, (v, extra, order)) in aggs.iter().zip(arg_vals.iter_mut()) {
            if let Some(e) = a.arg.as_ref().filter(|e| !matches!(e, BExpr::Col(..))) {
                *v = cx.eval_with_outer(e, &row)?;
            }
            if let Some(e) = &a.extra {
                *extra = Some(cx.eval_with_outer(e, &row)?);
            }
            order.clear();
            for o in &a.order {
                order.push(cx.eval_with_outer(&o.expr, &row)?);
            }
        }
        let key_val = |j: usize| -> &Value {
            match &keys[j] {
                BExpr::Col(i, _) => row.get(*i).unwrap_or(&NULL),
                _ => &key_vals[j],
            }
        };
        for (si, set) in sets.iter().enumerate() {
            hk.clear();
            for (j, (on, ty)) in set.iter().zip(&key_types).enumerate() {
                push_key(if *on { key_val(j) } else { &NULL }, ty, key_colls[j].as_ref(), &mut hk);
            }
            let (index, groups) = &mut tables[si];
            let gi = match index.get(hk.as_slice()) {
                Some(&g) => g,
                None => {
                    let gk: Row = set
                        .iter()
                        .enumerate()
                        .map(|(j, on)| if *on { key_val(j).clone() } else { Value::Null })
                        .collect();
                    let bytes = super::memory::row_bytes(&gk) + hk.len() as u64 * 2 + 64 * aggs.len() as u64;
                    if spill.is_none() && !charge.try_add(bytes) {
                        if level + 1 >= super::spill::MAX_SPILL_LEVEL {
                            charge.add(bytes)?;
                        } else {
                            let dir = cx.host.spill_dir();
                            spill = Some(sets.iter().map(|_| super::spill::Partitions::new(&dir, level)).collect());
                        }
                    }
                    if let Some(parts) = &mut spill {
                        // The group's rows go to its partition: its keys, then each
                        // aggregate's argument, separator and WITHIN GROUP values.
                        rec.clear();
                        rec.extend(gk);
                        for (a, (computed, extra, order)) in aggs.iter().zip(&arg_vals) {
                            match &a.arg {
                                Some(BExpr::Col(i, _)) => rec.push(row.get(*i).cloned().unwrap_or(Value::Null)),
                                Some(_) => rec.push(computed.clone()),
                                None => {}
                            }
                            if a.extra.is_some() {
                                rec.push(extra.clone().unwrap_or(Value::Null));
                            }
                            rec.extend(order.iter().cloned());
                        }
                        let p = &mut parts[si];
                        p.push(p.of(&hk), &rec)?;
                        continue;
                    }
                    groups.push(new_group(gk, aggs));
                    index.insert(hk.clone(), groups.len() - 1);
                    groups.len() - 1
                }
            };
            let g = &mut groups[gi];
            for (ai, a) in aggs.iter().enumerate() {
                let (computed, extra, order) = &arg_vals[ai];
                let v = match &a.arg {
                    Some(BExpr::Col(i, _)) => row.get(*i).unwrap_or(&NULL),
                    Some(_) => computed,
                    None => &ONE,
                };
                if v.is_null() {
                    saw_null = true;
                    continue;
                }
                if a.distinct {
                    let t = a.arg.as_ref().map(|e| e.ty()).unwrap_or(SqlType::Int);
                    let k = row_key(std::slice::from_ref(v), &[t], &arg_colls[ai..=ai]);
                    if g.distinct[ai].contains(&k) {
                        continue;
                    }
                    // A group's distinct values and ordered inputs grow with its rows:
                    // charged too (Msg 701 past the grant: partitioning cannot split a group).
                    charge.add(k.len() as u64 + 48)?;
                    g.distinct[ai].insert(k);
                }
                if !a.order.is_empty() {
                    charge.add(super::memory::row_bytes(order) + super::memory::row_bytes(std::slice::from_ref(v)))?;
                    g.ordered[ai].push((order.clone(), v.clone(), extra.clone()));
                    continue;
                }
                g.accs[ai].update(v, extra.as_ref())?;
            }
        }
        input.recycle(row);
        cx.check_cancel()?;
    }
    let mut out = Vec::new();
    for (si, (_, mut groups)) in tables.into_iter().enumerate() {
        if groups.is_empty() && (scalar || sets[si].iter().all(|on| !on)) && (scalar || sets.len() > 1) {
            groups.push(new_group(vec![Value::Null; keys.len()], aggs));
        }
        for mut g in groups {
            let mut row = g.keys;
            for (ai, a) in aggs.iter().enumerate() {
                if !a.order.is_empty() {
                    let mut items = std::mem::take(&mut g.ordered[ai]);
                    let colls: Vec<_> = a.order.iter().map(|o| o.expr.collation(db)).collect();
                    items.sort_by(|x, y| {
                        for (i, o) in a.order.iter().enumerate() {
                            let c = order_values_in(&x.0[i], &y.0[i], &o.expr.ty(), colls[i].as_ref());
                            let c = if o.desc { c.reverse() } else { c };
                            if c != Ordering::Equal {
                                return c;
                            }
                        }
                        Ordering::Equal
                    });
                    for (_, v, extra) in items {
                        g.accs[ai].update(&v, extra.as_ref())?;
                    }
                }
                if a.kind == AggKind::Grouping {
                    // GROUPING(col): 1 when the set aggregates the column away.
                    let col = a.arg.as_ref().and_then(|e| keys.iter().position(|k| same_expr(k, e)));
                    let on = col.map(|c| sets[si][c]).unwrap_or(true);
                    row.push(Value::TinyInt(u8::from(!on)));
                    continue;
                }
                row.push(g.accs[ai].finish()?);
            }
            out.push(row);
        }
    }
    if saw_null && aggs.iter().any(|a| a.arg.is_some() && a.kind != AggKind::Grouping) {
        cx.warn_null_eliminated();
    }
    let mut later = Vec::new();
    if let Some(parts) = spill {
        super::spill::HASH_SPILLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let (rkeys, raggs) = spilled_agg_specs(keys, aggs, db);
        for (si, p) in parts.into_iter().enumerate() {
            for reader in p.finish()?.into_iter().flatten() {
                later.push((reader, si));
            }
        }
        later.reverse();
        return Ok(Box::new(SpilledAggregate {
            held: Some((VecOp::new(out), charge)),
            later,
            keys: rkeys,
            aggs: raggs,
            sets: sets.clone(),
            level,
            current: None,
        }));
    }
    Ok(Box::new(AggregateRows { rows: VecOp::new(out), _charge: charge }))
}

/// An aggregate's output rows, with the grant their groups held.
struct AggregateRows {
    rows: VecOp,
    _charge: super::memory::Charge,
}

impl Op for AggregateRows {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        self.rows.next(cx)
    }
}

/// The keys and aggregates that aggregate a spilled partition's records (see
/// `aggregate`): each reads its column of the record, under its original collation.
fn spilled_agg_specs(keys: &[BExpr], aggs: &[AggSpec], db: types::Collation) -> (Vec<BExpr>, Vec<AggSpec>) {
    let col = |at: usize, e: &BExpr| {
        let c = BExpr::Col(at, e.ty());
        match e.collation(db) {
            Some(coll) => BExpr::Collated(Box::new(c), coll),
            None => c,
        }
    };
    let rkeys: Vec<BExpr> = keys.iter().enumerate().map(|(j, k)| col(j, k)).collect();
    let mut at = keys.len();
    let mut raggs = Vec::with_capacity(aggs.len());
    for a in aggs {
        let mut r = a.clone();
        if let Some(arg) = &a.arg {
            r.arg = Some(match (a.kind, keys.iter().position(|k| same_expr(k, arg))) {
                // GROUPING(col) finds its key by the expression.
                (AggKind::Grouping, Some(j)) => rkeys[j].clone(),
                _ => col(at, arg),
            });
            at += 1;
        }
        if let Some(e) = &a.extra {
            r.extra = Some(col(at, e));
            at += 1;
        }
        for o in &mut r.order {
            o.expr = col(at, &o.expr);
            at += 1;
        }
        raggs.push(r);
    }
    (rkeys, raggs)
}

/// An aggregate that spilled: the groups that were in memory, then each partition's
/// groups, aggregated when the previous ones are out.
struct SpilledAggregate {
    held: Option<(VecOp, super::memory::Charge)>,
    /// Partitions still to aggregate, last first, with their grouping set.
    later: Vec<(super::spill::SpoolReader, usize)>,
    keys: Vec<BExpr>,
    aggs: Vec<AggSpec>,
    sets: Vec<Vec<bool>>,
    level: u32,
    current: Option<Box<dyn Op>>,
}

impl Op for SpilledAggregate {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some((rows, _)) = &mut self.held {
                if let Some(r) = rows.next(cx)? {
                    return Ok(Some(r));
                }
                self.held = None;
            }
            if let Some(op) = &mut self.current {
                if let Some(r) = op.next(cx)? {
                    return Ok(Some(r));
                }
                self.current = None;
            }
            let Some((reader, si)) = self.later.pop() else { return Ok(None) };
            let set = vec![self.sets[si].clone()];
            self.current =
                Some(aggregate(Box::new(reader), &self.keys, &self.aggs, Some(&set), false, self.level + 1, cx)?);
        }
    }
}

fn same_expr(a: &BExpr, b: &BExpr) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kept value of build row `i` (of width `w`), as `joined` reads it.
    fn row_of(b: &BuildVals, i: usize, w: usize) -> Vec<Value> {
        let r = b.row(i, w, None);
        (0..w)
            .map(|c| {
                let mut v = Value::Bit(true);
                r.put(c, &mut v);
                v
            })
            .collect()
    }

    #[test]
    fn int_build_values_keep_types_and_nulls() {
        let mut b = BuildVals::for_types(vec![SqlType::Int, SqlType::BigInt, SqlType::SmallInt, SqlType::TinyInt]);
        let rows = [
            vec![Value::Int(i32::MIN), Value::BigInt(i64::MIN), Value::SmallInt(-1), Value::TinyInt(255)],
            vec![Value::Null, Value::BigInt(i64::MAX), Value::Null, Value::TinyInt(0)],
        ];
        for r in &rows {
            b.push(r.clone().iter_mut());
        }
        assert!(matches!(b, BuildVals::Ints(_)));
        for (i, r) in rows.iter().enumerate() {
            assert_eq!(&row_of(&b, i, 4), r);
        }
    }

    #[test]
    fn a_value_not_of_its_column_type_turns_the_store_into_values() {
        let mut b = BuildVals::for_types(vec![SqlType::Int, SqlType::Int]);
        let first = vec![Value::Int(7), Value::Null];
        b.push(first.clone().iter_mut());
        // A bigint in an int column mid-row: the row's first value was kept as an integer.
        let second = vec![Value::Int(8), Value::BigInt(1 << 40)];
        b.push(second.clone().iter_mut());
        assert!(matches!(b, BuildVals::Values(_)));
        assert_eq!(row_of(&b, 0, 2), first);
        assert_eq!(row_of(&b, 1, 2), second);
        let third = vec![Value::Int(9), Value::Int(10)];
        b.push(third.clone().iter_mut());
        assert_eq!(row_of(&b, 2, 2), third);
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
/// recursive member computes from the previous one (its work table) while the previous
/// level's rows go out. Only the last level is held, within the request's grant.
struct RecursiveCteOp {
    id: usize,
    recursive: Plan,
    max_recursion: u32,
    types: Vec<SqlType>,
    rt: Vec<SqlType>,
    last: Vec<Row>,
    pos: usize,
    level: u32,
    charge: super::memory::Charge,
}

impl Op for RecursiveCteOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some(r) = self.last.get(self.pos) {
                self.pos += 1;
                return Ok(Some(r.clone()));
            }
            if self.last.is_empty() {
                return Ok(None);
            }
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
            cx.work_tables.insert(self.id, std::mem::take(&mut self.last));
            self.charge.clear();
            let next = drain(open(&self.recursive, cx)?, cx);
            cx.work_tables.remove(&self.id);
            self.last = conform(next?, &self.rt, &self.types)?;
            self.charge.add(self.last.iter().map(|r| super::memory::row_bytes(r)).sum())?;
            self.pos = 0;
            self.level += 1;
        }
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
