//! PIVOT and UNPIVOT in FROM.
//!
//! PIVOT is a grouped aggregate: the source's columns other than the aggregated one and
//! the pivot column are the grouping columns (in source order), and each IN value `v`
//! becomes the column `agg(CASE WHEN column = v THEN value END)`, so a combination with
//! no row is NULL (0 for COUNT). The IN values are names converted to the pivot column's
//! type when the query is bound (8114 then 473 when one does not convert), compared with
//! the column's collation. Rows come out ordered by the grouping columns, and no 8153
//! warning is sent for the NULLs the CASE produces.
//!
//! UNPIVOT turns each source row into one row per IN column whose value is not NULL (in
//! IN-list order): the other source columns, the value (all IN columns must have one
//! type, 8167), and the column's name as the source spells it (nvarchar(128)).
//!
//! The source's alias is not visible outside; the result is known by the PIVOT/UNPIVOT
//! alias only.

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::errors;
use super::expr::{BExpr, Row};
use super::plan::{open as open_plan, AggSpec, Op, OpResult, OutCol, Plan, SortKey};
use super::query::{Binder, Scope};
use crate::ast::*;
use crate::scalar::aggregate::{self, AggKind};

/// What `Plan::Pivot` runs.
#[derive(Debug, Clone)]
pub enum PivotNode {
    /// The grouped aggregate (and sort) that computes a PIVOT.
    Pivot { plan: Plan },
    Unpivot {
        input: Plan,
        /// Source columns passed through.
        keep: Vec<usize>,
        /// The IN columns: position in the source row and the name the output shows.
        columns: Vec<(usize, String)>,
        cols: Vec<OutCol>,
    },
}

impl PivotNode {
    pub fn columns(&self) -> Vec<OutCol> {
        match self {
            PivotNode::Pivot { plan } => plan.columns(),
            PivotNode::Unpivot { cols, .. } => cols.clone(),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            PivotNode::Pivot { .. } => "Pivot".to_string(),
            PivotNode::Unpivot { .. } => "Unpivot".to_string(),
        }
    }

    pub fn child(&self) -> &Plan {
        match self {
            PivotNode::Pivot { plan } => plan,
            PivotNode::Unpivot { input, .. } => input,
        }
    }
}

pub fn open(node: &PivotNode, cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    match node {
        PivotNode::Pivot { plan } => {
            // The aggregate runs while it is opened; the NULLs of the CASE arms it skips
            // are PIVOT's own and SQL Server sends no 8153 for them.
            let warned = cx.null_warned;
            cx.null_warned = true;
            let r = open_plan(plan, cx);
            cx.null_warned = warned;
            r
        }
        PivotNode::Unpivot { input, keep, columns, .. } => Ok(Box::new(UnpivotOp {
            input: open_plan(input, cx)?,
            keep: keep.clone(),
            columns: columns.clone(),
            row: None,
            next: 0,
        })),
    }
}

struct UnpivotOp {
    input: Box<dyn Op>,
    keep: Vec<usize>,
    columns: Vec<(usize, String)>,
    /// The source row being unpivoted and the next IN column to look at.
    row: Option<Row>,
    next: usize,
}

impl Op for UnpivotOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some(row) = &self.row {
                while let Some((pos, name)) = self.columns.get(self.next) {
                    self.next += 1;
                    let v = row.get(*pos).cloned().unwrap_or(Value::Null);
                    if v.is_null() {
                        continue;
                    }
                    let mut out: Row = self.keep.iter().map(|&k| row.get(k).cloned().unwrap_or(Value::Null)).collect();
                    out.push(v);
                    out.push(Value::String(name.clone()));
                    return Ok(Some(out));
                }
            }
            match self.input.next(cx)? {
                Some(r) => {
                    self.row = Some(r);
                    self.next = 0;
                }
                None => return Ok(None),
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Binding

fn specified_twice(column: &str, alias: &str) -> SqlError {
    SqlError::new(8156, 15, 1, format!("The column '{column}' was specified multiple times for '{alias}'."))
}

fn conflicts(cx: &mut Cx, column: &str, operator: &str, alias: &str) -> SqlError {
    let e = SqlError::new(
        265,
        16,
        1,
        format!(
            "The column name \"{column}\" specified in the {operator} operator conflicts with the existing column name in the {operator} argument."
        ),
    );
    cx.preceding.push(e);
    specified_twice(column, alias)
}

/// Names compare as identifiers do: case-insensitively, trailing spaces ignored.
fn same_name(a: &str, b: &str) -> bool {
    a.trim_end_matches(' ').eq_ignore_ascii_case(b.trim_end_matches(' '))
}

/// A column of the source, by name (207 when there is none).
fn source_column(b: &mut Binder, scope: &Scope, name: &ObjectName) -> Result<(usize, SqlType), SqlError> {
    match b.bind_expr(&Expr::new(ExprKind::Column(name.clone())), scope)? {
        BExpr::Col(i, ty) => Ok((i, ty)),
        _ => Err(errors::invalid_column(&name.name().value)),
    }
}

/// 488 for a type PIVOT cannot group or compare.
fn comparable(what: &str, name: &str, ty: &SqlType) -> Result<(), SqlError> {
    if matches!(ty, SqlType::Xml) {
        return Err(SqlError::new(
            488,
            16,
            1,
            format!(
                "{what} columns must be comparable. The type of column \"{name}\" is \"{}\", which is not comparable.",
                ty.name()
            ),
        ));
    }
    Ok(())
}

/// Binds `source PIVOT (...)`.
pub(super) fn plan_pivot(
    b: &mut Binder,
    source: &TableWithJoins,
    aggregate: &Ident,
    value: &ObjectName,
    column: &ObjectName,
    values: &[Ident],
    alias: &Ident,
) -> Result<(Plan, Scope), SqlError> {
    let kind = match AggKind::from_name(&aggregate.value) {
        Some(AggKind::ChecksumAgg) => {
            return Err(SqlError::new(
                406,
                16,
                1,
                "CHECKSUM_AGG cannot be used in the PIVOT operator because it is not invariant to NULLs.",
            ))
        }
        Some(AggKind::StringAgg | AggKind::Grouping) | None => return Err(errors::unknown_function(&aggregate.value)),
        Some(k) => k,
    };
    let (input, scope) = b.plan_table_with_joins(source, None)?;
    let (vpos, vty) = source_column(b, &scope, value)?;
    let (ppos, pty) = source_column(b, &scope, column)?;
    let alias_name = alias.value.as_str();
    let group: Vec<usize> = (0..scope.cols.len()).filter(|&i| i != vpos && i != ppos).collect();
    for (k, &i) in group.iter().enumerate() {
        let name = &scope.cols[i].name;
        comparable("Pivot grouping", name, &scope.cols[i].ty)?;
        if group[..k].iter().any(|&j| same_name(&scope.cols[j].name, name)) {
            return Err(specified_twice(name, alias_name));
        }
    }
    comparable("Pivot", &scope.cols[ppos].name, &pty)?;
    for (k, v) in values.iter().enumerate() {
        if group.iter().any(|&i| same_name(&scope.cols[i].name, &v.value)) {
            return Err(conflicts(b.cx, &v.value, "PIVOT", alias_name));
        }
        if values[..k].iter().any(|w| same_name(&w.value, &v.value)) {
            return Err(specified_twice(&v.value, alias_name));
        }
    }
    let result_type = aggregate::return_type(kind, Some(&vty))?;
    let mut aggs = Vec::with_capacity(values.len());
    for v in values {
        let text = Value::String(v.value.clone());
        let key = crate::scalar::convert::convert(&text, &SqlType::NVarChar { len: Length::Bounded(128) }, &pty, None)
            .map_err(|_| {
                let e = SqlError::new(8114, 16, 1, format!("Error converting data type nvarchar to {}.", pty.name()));
                b.cx.preceding.push(e);
                SqlError::new(
                    473,
                    16,
                    1,
                    format!("The incorrect value \"{}\" is supplied in the PIVOT operator.", v.value),
                )
            })?;
        let matches = BExpr::Cmp(BinaryOp::Eq, Box::new(BExpr::Col(ppos, pty)), Box::new(BExpr::Const(key, pty)), pty);
        let arg = BExpr::Case { branches: vec![(matches, BExpr::Col(vpos, vty))], else_result: None, ty: vty };
        aggs.push(AggSpec { kind, arg: Some(arg), distinct: false, extra: None, order: Vec::new(), result_type });
    }
    let mut cols: Vec<OutCol> = group
        .iter()
        .map(|&i| OutCol::new(scope.cols[i].name.clone(), scope.cols[i].ty, scope.cols[i].nullable))
        .collect();
    cols.extend(values.iter().map(|v| OutCol::new(v.value.clone(), result_type, true)));
    let keys: Vec<BExpr> = group.iter().map(|&i| BExpr::Col(i, scope.cols[i].ty)).collect();
    let sort: Vec<SortKey> = cols
        .iter()
        .take(keys.len())
        .enumerate()
        .map(|(i, c)| SortKey { expr: BExpr::Col(i, c.ty), desc: false })
        .collect();
    let mut plan =
        Plan::Aggregate { input: Box::new(input), keys, aggs, sets: None, scalar: false, cols: cols.clone() };
    if !sort.is_empty() {
        plan = Plan::Sort { input: Box::new(plan), keys: sort };
    }
    Ok((Plan::Pivot(Box::new(PivotNode::Pivot { plan })), Scope::from_cols(Some(alias_name), &cols)))
}

/// Binds `source UNPIVOT (...)`.
pub(super) fn plan_unpivot(
    b: &mut Binder,
    source: &TableWithJoins,
    value: &Ident,
    name: &Ident,
    columns: &[Ident],
    alias: &Ident,
) -> Result<(Plan, Scope), SqlError> {
    // Checked before the names are resolved, as SQL Server does.
    for (k, c) in columns.iter().enumerate() {
        if columns[..k].iter().any(|d| same_name(&d.value, &c.value)) {
            return Err(SqlError::new(
                277,
                16,
                1,
                format!(
                    "The column \"{}\" is specified multiple times in the column list of the UNPIVOT operator.",
                    c.value
                ),
            ));
        }
    }
    let (input, scope) = b.plan_table_with_joins(source, None)?;
    let alias_name = alias.value.as_str();
    let mut unpivoted = Vec::with_capacity(columns.len());
    let mut value_type: Option<SqlType> = None;
    let mut nullable = false;
    for c in columns {
        let (pos, ty) = source_column(b, &scope, &ObjectName::from_ident(c.clone()))?;
        let shown = scope.cols[pos].name.clone();
        match value_type {
            Some(t) if t != ty => {
                return Err(SqlError::new(
                    8167,
                    16,
                    1,
                    format!("The type of column \"{shown}\" conflicts with the type of other columns specified in the UNPIVOT list."),
                ))
            }
            _ => value_type = Some(ty),
        }
        nullable |= scope.cols[pos].nullable;
        unpivoted.push((pos, shown));
    }
    let keep: Vec<usize> = (0..scope.cols.len()).filter(|i| !unpivoted.iter().any(|(p, _)| p == i)).collect();
    for out in [value, name] {
        if keep.iter().any(|&i| same_name(&scope.cols[i].name, &out.value)) {
            return Err(conflicts(b.cx, &out.value, "UNPIVOT", alias_name));
        }
    }
    if same_name(&value.value, &name.value) {
        return Err(specified_twice(&name.value, alias_name));
    }
    let mut cols: Vec<OutCol> = keep
        .iter()
        .map(|&i| OutCol::new(scope.cols[i].name.clone(), scope.cols[i].ty, scope.cols[i].nullable))
        .collect();
    cols.push(OutCol::new(value.value.clone(), value_type.unwrap_or(SqlType::Int), nullable));
    cols.push(OutCol::new(name.value.clone(), SqlType::NVarChar { len: Length::Bounded(128) }, true));
    let node = PivotNode::Unpivot { input, keep, columns: unpivoted, cols: cols.clone() };
    Ok((Plan::Pivot(Box::new(node)), Scope::from_cols(Some(alias_name), &cols)))
}

#[cfg(test)]
mod tests {
    use crate::ast::*;

    fn from_of(sql: &str) -> Vec<TableWithJoins> {
        let b = crate::parse_batch(sql).expect("parses");
        let StatementKind::Query(q) = &b.statements[0].kind else { panic!("not a query") };
        let SetExpr::Select(s) = &q.body else { panic!("not a select") };
        s.from.clone()
    }

    #[test]
    fn pivot_takes_everything_written_before_it_and_prints_back() {
        let sql = "SELECT * FROM a JOIN b ON a.x = b.x PIVOT (SUM(v) FOR k IN ([1], x)) AS p \
                   JOIN c PIVOT (MAX(w) FOR j IN (y)) AS q ON q.y = p.x UNPIVOT (v2 FOR k2 IN (m, n)) u";
        let from = from_of(sql);
        let TableFactor::Unpivot { source, alias, .. } = &from[0].relation else { panic!("{from:?}") };
        assert_eq!(alias.value, "u");
        // The UNPIVOT's source is the join of the first PIVOT with the second.
        let TableFactor::Pivot { source: first, values, .. } = &source.relation else { panic!() };
        assert_eq!(first.joins.len(), 1, "the first PIVOT pivots the join a-b");
        assert_eq!(values.iter().map(|v| v.value.as_str()).collect::<Vec<_>>(), ["1", "x"]);
        assert!(matches!(source.joins[0].relation, TableFactor::Pivot { .. }), "the second PIVOT belongs to c");
        let printed = format!("SELECT * FROM {}", from[0]);
        assert_eq!(from_of(&printed), from, "{printed}");
    }

    #[test]
    fn pivot_needs_one_column_and_an_alias() {
        assert!(crate::parse_batch("SELECT * FROM t PIVOT (COUNT(*) FOR k IN (a)) AS p").is_err());
        assert!(crate::parse_batch("SELECT * FROM t PIVOT (SUM(v) FOR k IN (a))").is_err());
        assert!(crate::parse_batch("SELECT * FROM t UNPIVOT (v FOR k IN (a, b)) AS u").is_ok());
    }
}
