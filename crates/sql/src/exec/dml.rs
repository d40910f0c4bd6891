//! INSERT, UPDATE, DELETE (with TOP, FROM/JOIN and OUTPUT) and SELECT INTO; the row writers,
//! SET binding and OUTPUT handling here are shared with MERGE (`merge.rs`).
//!
//! UPDATE and DELETE read every qualifying row first and change them afterwards
//! (Halloween protection by materialisation), each row once even when a join produces it
//! several times. Constraints are checked per row: NOT NULL (515), CHECK (547), FOREIGN
//! KEY (547, both directions), keys (2627/2601 from the table layer). A FOREIGN KEY
//! cascade writes the rows it changes the same way (`check_referenced`), each checked
//! and going on to the rows referencing it.

use std::collections::HashSet;
use std::sync::Arc;

use types::{SqlError, SqlType, Value};

use super::expr::{is_true, BExpr, Row};
use super::plan::{open, OutCol, Plan, ScanNode};
use super::query::{Binder, Scope, ScopeCol};
use super::table::{identity_value, int_of, TableInfo};
use super::{errors, trigger, Cx};
use crate::ast::*;
use crate::catalog::ReferentialAction;
use crate::host::HostError;
use crate::results::ColumnInfo;
use crate::scalar::convert;

/// The table a DML statement targets.
/// `perm` is the permission the statement needs on it (INSERT, UPDATE, DELETE).
pub(super) fn target_table(cx: &mut Cx, target: &DmlTarget, perm: &str) -> Result<Arc<TableInfo>, SqlError> {
    match target {
        DmlTarget::Variable(v) => cx.table_variable_for_dml(v),
        DmlTarget::Table { name, .. } => {
            if let Some(t) = cx.resolve_table_cached(name)? {
                super::security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, perm)?;
                return Ok(t.info.clone());
            }
            let (db, o) = cx.resolve_object(name)?.ok_or_else(|| errors::invalid_object(&errors::written(name)))?;
            super::security::check_object(cx, db, &o, perm)?;
            match &o.body {
                crate::catalog::ObjectBody::Table(_) => cx.table_info(db, &o),
                crate::catalog::ObjectBody::View(_) => Err(errors::not_supported("Modifying data through a view")),
                _ => Err(errors::invalid_object(&errors::written(name))),
            }
        }
    }
}

/// An updatable view or CTE as a DML target: one base table, columns that are bare
/// (possibly renamed) base columns or derived ones (which cannot be assigned), and the
/// query that shows the rows (SQL Server's rules for updatable views; WITH CHECK OPTION
/// is not enforced).
struct ViewBase {
    base: DmlTarget,
    /// The base table's name in the query's FROM (its alias, if it has one).
    exposed: String,
    /// (view column, base column; empty when the view computes it).
    columns: Vec<(String, String)>,
    /// The query's WHERE over base columns, when the query is a plain filter of its base
    /// table (`query` is then not needed to find the rows).
    filter: Option<Expr>,
    /// Whether the rows must be found by running `query` (TOP, ORDER BY, window
    /// functions: the query is more than a filter); always for a CTE.
    needs_rows: bool,
    query: Query,
    view: String,
    /// The query's one source is a view whose rows it runs (a CTE over a view): that
    /// view as a DML target, whose rows query stands in for it in `query`'s FROM.
    inner: Option<Box<ViewBase>>,
}

/// The view `target` names, when it is a view (errors 4403/4405 when it cannot be
/// changed). `rows`: its rows will be found by running its query (it stands in a CTE's
/// or another view's rows query).
fn updatable_view(
    cx: &mut Cx,
    target: &DmlTarget,
    perm: &str,
    touched: Option<&[String]>,
    rows: bool,
) -> Result<Option<ViewBase>, SqlError> {
    let DmlTarget::Table { name, .. } = target else {
        return Ok(None);
    };
    if cx.resolve_table_cached(name)?.is_some() {
        return Ok(None);
    }
    let Some((db, o)) = cx.resolve_object(name)? else {
        return Ok(None);
    };
    let crate::catalog::ObjectBody::View(m) = &o.body else {
        return Ok(None);
    };
    super::security::check_object(cx, db, &o, perm)?;
    let def = super::parse_module(&m.definition)?;
    let StatementKind::CreateView(v) = def.kind else {
        return Ok(None);
    };
    if db != cx.state.database {
        return Err(errors::not_supported("Modifying data through a view in another database"));
    }
    updatable_query(cx, &o.name, &v.query, &v.columns, touched, perm, rows).map(Some)
}

/// The CTE of `with` that a DML target names: the target itself (`WITH d AS (...) DELETE
/// FROM d`), or an alias in FROM of a CTE (`UPDATE x ... FROM d AS x JOIN ...`). A CTE
/// hides a table of the same one-part name. Returns the CTE and its exposed name.
fn cte_target<'a>(with: &'a [Cte], target: &DmlTarget, from: &[TableWithJoins]) -> Option<(&'a Cte, String)> {
    let DmlTarget::Table { name, .. } = target else {
        return None;
    };
    if with.is_empty() || name.parts.len() != 1 {
        return None;
    }
    let exposed = &name.name().value;
    let named = |n: &ObjectName| -> Option<&'a Cte> {
        if n.parts.len() != 1 {
            return None;
        }
        with.iter().rev().find(|c| c.name.value.eq_ignore_ascii_case(&n.name().value))
    };
    if from.is_empty() {
        return named(name).map(|c| (c, exposed.clone()));
    }
    let mut found = None;
    for_each_factor(from, &mut |f| {
        if let TableFactor::Table { name: n, alias, .. } = f {
            let shown = alias.as_ref().map(|a| &a.value).unwrap_or(&n.name().value);
            if found.is_none() && shown.eq_ignore_ascii_case(exposed) {
                found = Some(named(n).map(|c| (c, shown.clone())));
            }
        }
    });
    found.flatten()
}

/// Calls `f` on each table source of a FROM list (nested joins included).
fn for_each_factor<'a>(from: &'a [TableWithJoins], f: &mut dyn FnMut(&'a TableFactor)) {
    fn visit<'a>(t: &'a TableFactor, f: &mut dyn FnMut(&'a TableFactor)) {
        f(t);
        if let TableFactor::NestedJoin(n) = t {
            visit(&n.relation, f);
            for j in &n.joins {
                visit(&j.relation, f);
            }
        }
    }
    for twj in from {
        visit(&twj.relation, f);
        for j in &twj.joins {
            visit(&j.relation, f);
        }
    }
}

/// The CTE `cte` as a DML target (4403/4405/4406 as for a view, which SQL Server also
/// names them).
fn updatable_cte(cx: &mut Cx, cte: &Cte, touched: Option<&[String]>, perm: &str) -> Result<ViewBase, SqlError> {
    updatable_query(cx, &cte.name.value, &cte.query, &cte.columns, touched, perm, true)
}

/// Whether the view or CTE `name` defined by `query` (with the column names `names`, if
/// any) can be the target of DML, and how its columns map to its base table's. Its
/// FROM may join several tables when the statement changes columns of one of them:
/// `touched` names the columns an UPDATE or INSERT changes (empty: all of them), None
/// for DELETE (which needs a single table). `cte`: the rows are always found by running
/// the query (`needs_rows`); `perm` is checked on a view the query reads from.
fn updatable_query(
    cx: &mut Cx,
    name: &str,
    query: &Query,
    names: &[Ident],
    touched: Option<&[String]>,
    perm: &str,
    cte: bool,
) -> Result<ViewBase, SqlError> {
    let multi = || {
        SqlError::new(
            4405,
            16,
            1,
            format!(
                "View or function '{name}' is not updatable because the modification affects multiple base tables."
            ),
        )
    };
    let SetExpr::Select(sel) = &query.body else {
        return Err(multi());
    };
    let aggregate = sel.items.iter().any(|i| match i {
        SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => super::query::contains_aggregate(expr),
        SelectItem::Wildcard(_) => false,
    });
    if sel.distinct || aggregate || !sel.group_by.is_empty() || sel.having.is_some() {
        return Err(SqlError::new(
            4403,
            16,
            1,
            format!("Cannot update the view or function '{name}' because it contains aggregates, or a DISTINCT or GROUP BY clause, or PIVOT or UNPIVOT operator."),
        ));
    }
    // The tables of the FROM clause: (exposed name, target, its definition).
    let mut sources: Vec<(String, DmlTarget, Option<Arc<TableInfo>>)> = Vec::new();
    let mut unsupported = false;
    for_each_factor(&sel.from, &mut |f| match f {
        TableFactor::Table { name, alias, .. } => {
            let shown = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| name.name().value.clone());
            sources.push((shown, DmlTarget::Table { name: name.clone(), hints: Vec::new() }, None));
        }
        TableFactor::Variable { name, alias } => {
            let shown = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| name.clone());
            sources.push((shown, DmlTarget::Variable(name.clone()), None));
        }
        TableFactor::NestedJoin(_) => {}
        _ => unsupported = true,
    });
    if unsupported || sources.is_empty() {
        return Err(multi());
    }
    for (_, target, info) in &mut sources {
        if let DmlTarget::Table { name, .. } = target {
            if name.database().is_some() {
                return Err(errors::not_supported("Modifying data through a view in another database"));
            }
        }
        *info = match target {
            DmlTarget::Table { name, .. } => match cx.resolve_table_cached(name)? {
                Some(t) => Some(t.info.clone()),
                // A view or other object under this one: only the single-table rewrite
                // (which recurses into it) can go through it.
                None if sel.from.len() == 1 && sel.from[0].joins.is_empty() => None,
                None => return Err(multi()),
            },
            DmlTarget::Variable(v) => Some(cx.table_variable_for_dml(v)?),
        };
    }
    let windowed = sel.items.iter().any(|i| match i {
        SelectItem::Expr { expr, .. } => super::query::contains_window(expr),
        _ => false,
    });
    let needs_rows = cte
        || sources.len() > 1
        || windowed
        || sel.top.is_some()
        || !query.order_by.is_empty()
        || query.offset.is_some()
        || !query.with.is_empty();
    // A query over one view that must run to find its rows goes through that view as a
    // DML target of its own (a filter-only one is rewritten as DML on the view instead).
    let inner = match &sources[..] {
        [(_, target, None)] if needs_rows => {
            let inner_touched = touched.map(|ts| view_columns_named(sel, names, ts));
            let vb = updatable_view(cx, target, perm, inner_touched.as_deref(), true)?
                .ok_or_else(|| errors::invalid_object(&target_alias(target)))?;
            Some(Box::new(vb))
        }
        _ => None,
    };
    // (shown name, base column, source index; None when computed).
    let mut columns: Vec<(String, String, Option<usize>)> = Vec::new();
    for item in &sel.items {
        match item {
            SelectItem::Wildcard(q) => {
                for (k, (shown, _, info)) in sources.iter().enumerate() {
                    if q.as_ref().is_some_and(|q| !q.name().value.eq_ignore_ascii_case(shown)) {
                        continue;
                    }
                    if let (None, Some(inner)) = (info, &inner) {
                        for (v, _) in &inner.columns {
                            columns.push((v.clone(), v.clone(), Some(k)));
                        }
                        continue;
                    }
                    let info = info
                        .as_ref()
                        .ok_or_else(|| errors::not_supported("* in a view over a view as a DML target"))?;
                    for c in info.out_cols() {
                        columns.push((c.name.clone(), c.name.clone(), Some(k)));
                    }
                }
            }
            SelectItem::Expr { expr, alias } => {
                let (base_col, source) = match &expr.kind {
                    ExprKind::Column(n) => {
                        let col = n.name().value.clone();
                        let source = if sources.len() == 1 {
                            Some(0)
                        } else if n.parts.len() > 1 {
                            let q = &n.parts[n.parts.len() - 2].value;
                            sources.iter().position(|(s, _, _)| s.eq_ignore_ascii_case(q))
                        } else {
                            sources
                                .iter()
                                .position(|(_, _, t)| t.as_ref().is_some_and(|t| t.column_index(&col).is_some()))
                        };
                        (col, source)
                    }
                    _ => (String::new(), None),
                };
                let shown = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| base_col.clone());
                columns.push((shown, base_col, source));
            }
            SelectItem::Assign { .. } => return Err(multi()),
        }
    }
    for (c, n) in columns.iter_mut().zip(names) {
        c.0 = n.value.clone();
    }
    // The one table the statement changes.
    let base = if sources.len() == 1 {
        0
    } else {
        let touched = touched.ok_or_else(multi)?;
        let mut found: Option<usize> = None;
        for (shown, _, source) in &columns {
            if !touched.is_empty() && !touched.iter().any(|t| t.eq_ignore_ascii_case(shown)) {
                continue;
            }
            // A computed column is 4406 when it is assigned (`base_column`).
            let Some(k) = source else { continue };
            if found.is_some_and(|f| f != *k) {
                return Err(multi());
            }
            found = Some(*k);
        }
        // Only computed columns assigned: `base_column` answers 4406 whatever the base.
        found.unwrap_or(0)
    };
    // Columns of the other tables cannot be changed through this statement; through a
    // view, a column is the base column behind the view's (derived if the view's is).
    let columns = columns
        .into_iter()
        .map(|(shown, col, source)| {
            let col = match &inner {
                _ if source != Some(base) => String::new(),
                Some(inner) => inner
                    .columns
                    .iter()
                    .find(|(v, _)| v.eq_ignore_ascii_case(&col))
                    .map(|(_, b)| b.clone())
                    .unwrap_or_default(),
                None => col,
            };
            (shown, col)
        })
        .collect();
    // The query's WHERE reads base columns: drop qualifiers (one table, no ambiguity).
    let mut filter = sel.where_clause.clone();
    if let Some(f) = &mut filter {
        super::query::walk_expr_mut(f, &mut |e| {
            if let ExprKind::Column(n) = &mut e.kind {
                let last = n.name().clone();
                n.parts = vec![last];
            }
        });
    }
    let (exposed, mut base, _) = sources.swap_remove(base);
    if let Some(inner) = &inner {
        base = inner.base.clone();
    }
    Ok(ViewBase { base, exposed, columns, filter, needs_rows, query: query.clone(), view: name.to_string(), inner })
}

/// The columns of the one view a query reads that the query's columns `wanted` show
/// (names as the query shows them, `names` its column list if any): what an UPDATE or
/// INSERT through the query changes in the view. A name `*` passes on as it is.
fn view_columns_named(sel: &Select, names: &[Ident], wanted: &[String]) -> Vec<String> {
    let mut shown: Vec<(String, String)> = Vec::new();
    for (i, item) in sel.items.iter().enumerate() {
        if let SelectItem::Expr { expr: Expr { kind: ExprKind::Column(n), .. }, alias } = item {
            let col = n.name().value.clone();
            let s = names.get(i).or(alias.as_ref()).map(|a| a.value.clone()).unwrap_or_else(|| col.clone());
            shown.push((s, col));
        }
    }
    wanted
        .iter()
        .map(|w| {
            shown.iter().find(|(s, _)| s.eq_ignore_ascii_case(w)).map(|(_, c)| c.clone()).unwrap_or_else(|| w.clone())
        })
        .collect()
}

impl ViewBase {
    fn base_column(&self, view_col: &str) -> Result<Option<String>, SqlError> {
        match self.columns.iter().find(|(v, _)| v.eq_ignore_ascii_case(view_col)) {
            Some((_, b)) if b.is_empty() => Err(SqlError::new(
                4406,
                16,
                1,
                format!(
                    "Update or insert of view or function '{}' failed because it contains a derived or constant field.",
                    self.view
                ),
            )),
            Some((_, b)) => Ok(Some(b.clone())),
            None => Ok(None),
        }
    }

    /// Rewrites references to view columns as references to base columns.
    fn rename(&self, e: &mut Expr) -> Result<(), SqlError> {
        let mut err = None;
        super::query::walk_expr_mut(e, &mut |x| {
            if let ExprKind::Column(n) = &mut x.kind {
                let qualified_by_view =
                    n.parts.len() == 1 || n.parts[n.parts.len() - 2].value.eq_ignore_ascii_case(&self.view);
                if !qualified_by_view {
                    return;
                }
                match self.base_column(&n.name().value) {
                    Ok(Some(b)) => n.parts = vec![Ident::new(b)],
                    Ok(None) => {}
                    Err(e) => err = Some(e),
                }
            }
        });
        err.map_or(Ok(()), Err)
    }

    fn target(&self, old: &DmlTarget) -> DmlTarget {
        match (&self.base, old) {
            (DmlTarget::Table { name, .. }, DmlTarget::Table { hints, .. }) => {
                DmlTarget::Table { name: name.clone(), hints: hints.clone() }
            }
            (base, _) => base.clone(),
        }
    }

    /// The query as a derived table named `alias` that finds the target rows: its own
    /// columns, then the base table's columns and locator, where the UPDATE/DELETE row
    /// path expects the target (`plan_target_rows`). The base table must be a table
    /// (not a view) for its scan to carry the locator.
    fn rows_factor(&self, t: &TableInfo, alias: &str) -> Result<TableFactor, SqlError> {
        let mut q = self.query.clone();
        let SetExpr::Select(sel) = &mut q.body else {
            return Err(errors::not_supported("Modifying data through this query"));
        };
        // Base columns qualified by the table's name in the query (it may join others);
        // a table variable without an alias is the only table (no qualifier needed).
        let qualifier = match &self.base {
            DmlTarget::Variable(v) if v.eq_ignore_ascii_case(&self.exposed) => None,
            _ => Some(Ident::new(self.exposed.clone())),
        };
        let column = |n: &str| {
            let parts = qualifier.iter().cloned().chain(std::iter::once(Ident::new(n))).collect();
            Expr::new(ExprKind::Column(ObjectName { parts }))
        };
        // Over a view: the view's own rows query, which carries the base table's columns
        // and locator under the hidden names, stands in for the view.
        if let Some(inner) = &self.inner {
            let factor = inner.rows_factor(t, &self.exposed)?;
            let mut replaced = false;
            for twj in &mut sel.from {
                if let TableFactor::Table { .. } = twj.relation {
                    twj.relation = factor.clone();
                    replaced = true;
                }
            }
            if !replaced {
                return Err(errors::not_supported("Modifying data through this query"));
            }
            // `*` means the view's columns, not the hidden ones its rows query adds.
            let items = std::mem::take(&mut sel.items);
            for item in items {
                match item {
                    SelectItem::Wildcard(_) => {
                        for (v, _) in &inner.columns {
                            sel.items.push(SelectItem::Expr { expr: column(v), alias: None });
                        }
                    }
                    other => sel.items.push(other),
                }
            }
        }
        let mut names: Vec<Ident> = Vec::new();
        if !self.columns.is_empty() {
            names = self.columns.iter().map(|(v, _)| Ident::new(v.clone())).collect();
        }
        for (i, c) in t.columns.iter().enumerate() {
            let hidden = Ident::new(format!("%%base{i}%%"));
            let source = if self.inner.is_some() { column(&hidden.value) } else { column(&c.name) };
            sel.items.push(SelectItem::Expr { expr: source, alias: Some(hidden.clone()) });
            names.push(hidden);
        }
        // Only the base table's scan has a locator (it is the DML target being planned).
        let locator = if self.inner.is_some() {
            column("%%physloc%%")
        } else {
            Expr::new(ExprKind::Column(ObjectName::from_ident(Ident::new("%%physloc%%"))))
        };
        sel.items.push(SelectItem::Expr { expr: locator, alias: None });
        names.push(Ident::new("%%physloc%%"));
        Ok(TableFactor::Derived {
            query: Box::new(q),
            alias: Some(TableAlias { name: Ident::new(alias), columns: names }),
        })
    }

    /// The base table, checked for `perm` (not inside a view's ownership chain).
    fn base_table(&self, cx: &mut Cx, perm: &str) -> Result<Arc<TableInfo>, SqlError> {
        if let DmlTarget::Table { name, .. } = &self.base {
            if cx.resolve_table_cached(name)?.is_none()
                && cx.resolve_object(name)?.is_some_and(|(_, o)| matches!(o.body, crate::catalog::ObjectBody::View(_)))
            {
                return Err(errors::not_supported(
                    "Modifying data through a view or CTE over a view with TOP, ORDER BY or window functions",
                ));
            }
        }
        target_table(cx, &self.base, perm)
    }

    /// `from` with the table source `alias` names replaced by the rows query (or the
    /// rows query alone when `from` is empty).
    fn with_rows_in_from(
        &self,
        t: &TableInfo,
        from: &[TableWithJoins],
        alias: &str,
    ) -> Result<Vec<TableWithJoins>, SqlError> {
        let factor = self.rows_factor(t, alias)?;
        if from.is_empty() {
            return Ok(vec![TableWithJoins { relation: factor, joins: Vec::new() }]);
        }
        fn swap(f: &mut TableFactor, alias: &str, factor: &TableFactor) -> bool {
            match f {
                TableFactor::Table { name, alias: a, .. } => {
                    let shown = a.as_ref().map(|a| &a.value).unwrap_or(&name.name().value);
                    if shown.eq_ignore_ascii_case(alias) {
                        *f = factor.clone();
                        return true;
                    }
                    false
                }
                TableFactor::NestedJoin(n) => {
                    swap(&mut n.relation, alias, factor)
                        || n.joins.iter_mut().any(|j| swap(&mut j.relation, alias, factor))
                }
                _ => false,
            }
        }
        let mut from = from.to_vec();
        let done = from.iter_mut().any(|twj| {
            swap(&mut twj.relation, alias, &factor)
                || twj.joins.iter_mut().any(|j| swap(&mut j.relation, alias, &factor))
        });
        if !done {
            return Err(errors::invalid_object(alias));
        }
        Ok(from)
    }

    /// OUTPUT clauses with `inserted.c` / `deleted.c` of a view or CTE column `c` read
    /// from its base column (the output column keeps the name written), and
    /// `inserted.*` / `deleted.*` as the view's or CTE's columns, by its names: those
    /// that show a column of the table changed (one it computes or takes from another
    /// table is not in `inserted`/`deleted`, as naming it is 4104).
    fn base_output(&self, clauses: &[OutputClause]) -> Vec<OutputClause> {
        let mut clauses = clauses.to_vec();
        for oc in &mut clauses {
            let items = std::mem::take(&mut oc.items);
            for item in items {
                match item {
                    SelectItem::Wildcard(Some(q))
                        if q.parts.len() == 1
                            && (q.name().value.eq_ignore_ascii_case("inserted")
                                || q.name().value.eq_ignore_ascii_case("deleted")) =>
                    {
                        // `inserted.v AS v`: the renaming below reads it from v's base column.
                        for (v, _) in self.columns.iter().filter(|(_, b)| !b.is_empty()) {
                            let parts = vec![q.name().clone(), Ident::new(v.clone())];
                            oc.items.push(SelectItem::Expr {
                                expr: Expr::new(ExprKind::Column(ObjectName { parts })),
                                alias: Some(Ident::new(v.clone())),
                            });
                        }
                    }
                    other => oc.items.push(other),
                }
            }
            for item in &mut oc.items {
                let SelectItem::Expr { expr, alias } = item else { continue };
                if alias.is_none() {
                    if let ExprKind::Column(n) = &expr.kind {
                        *alias = Some(n.name().clone());
                    }
                }
                super::query::walk_expr_mut(expr, &mut |x| {
                    let ExprKind::Column(n) = &mut x.kind else { return };
                    let [prefix, col] = &mut n.parts[..] else { return };
                    if !(prefix.value.eq_ignore_ascii_case("inserted") || prefix.value.eq_ignore_ascii_case("deleted"))
                    {
                        return;
                    }
                    if let Some((_, b)) =
                        self.columns.iter().find(|(v, b)| !b.is_empty() && v.eq_ignore_ascii_case(&col.value))
                    {
                        *col = Ident::new(b.clone());
                    }
                });
            }
        }
        clauses
    }

    /// SET targets renamed to base columns (4406 for a derived one).
    fn base_assignments(&self, assignments: &[Assignment]) -> Result<Vec<Assignment>, SqlError> {
        let mut v = assignments.to_vec();
        for a in &mut v {
            if let AssignTarget::Column(n) = &mut a.target {
                let b = self.base_column(&n.name().value)?.ok_or_else(|| errors::invalid_column(&n.name().value))?;
                n.parts = vec![Ident::new(b)];
            }
        }
        Ok(v)
    }

    fn where_with_filter(&self, w: Option<&Expr>) -> Result<Option<Expr>, SqlError> {
        let mut w = w.cloned();
        if let Some(e) = &mut w {
            self.rename(e)?;
        }
        Ok(match (self.filter.clone(), w) {
            (Some(f), Some(w)) => Some(Expr {
                span: w.span,
                kind: ExprKind::Binary { op: BinaryOp::And, left: Box::new(f), right: Box::new(w) },
            }),
            (f, w) => f.or(w),
        })
    }
}

/// Converts a value for a column: implicit conversion, then the column's length and
/// precision (2628 truncation, 8115 overflow).
pub fn to_column(t: &TableInfo, col: usize, v: Value, from: &SqlType) -> Result<Value, SqlError> {
    let c = &t.columns[col];
    // NULL, and an int of an int column (a literal key): nothing to convert or fit.
    if v.is_exactly(&c.ty) && (*from == c.ty || v.is_null()) {
        return Ok(v);
    }
    // Text stored into xml is parsed and normalized (CONVERT does it).
    let to_xml = c.ty == SqlType::Xml && *from != SqlType::Xml;
    if !to_xml && fits_unchanged(&v, from, &c.ty) {
        return Ok(v);
    }
    // Between strings (or between binaries) the value is only fitted: CAST would cut a
    // long value silently, where assignment to a column is 2628.
    let same_family =
        !to_xml && ((from.is_character() && c.ty.is_character()) || (from.is_binary() && c.ty.is_binary()));
    let v = if *from == c.ty || same_family { v } else { convert::convert(&v, from, &c.ty, None)? };
    if !matches!(v, Value::String(_) | Value::Binary(_)) {
        // Only strings and binaries are truncated (2628, whose message shows the value).
        return v.fit_into(&c.ty);
    }
    v.fit_to_in(&c.ty, c.code_page()).map_err(|e| {
        if e.number == 8152 || e.number == 2628 {
            // The value as far as it fits the column.
            let fits = match c.ty {
                SqlType::Char { len } | SqlType::NChar { len } => usize::from(len),
                SqlType::VarChar { len: types::Length::Bounded(len) }
                | SqlType::NVarChar { len: types::Length::Bounded(len) } => usize::from(len),
                _ => 40,
            };
            let shown: String = match &v {
                Value::String(s) if c.code_page().is_double_byte() => {
                    match types::fit_code_page(
                        s,
                        &SqlType::VarChar { len: types::Length::Bounded(fits as u16) },
                        c.code_page(),
                    ) {
                        Value::String(t) => t,
                        _ => s.clone(),
                    }
                }
                Value::String(s) => s.chars().take(fits).collect(),
                other => other.to_string(),
            };
            SqlError::new(
                2628,
                16,
                1,
                format!(
                    "String or binary data would be truncated in table '{}.{}.{}', column '{}'. Truncated value: '{}'.",
                    t.db_name, t.schema, t.display_name, c.name, shown
                ),
            )
        } else {
            e
        }
    })
}

/// Whether [`to_column`] would return `v` as it is: an ASCII string of a variable-length
/// character type going into a variable-length character column it fits (conversion
/// between code page 1252 and Unicode changes no ASCII character, and nothing is cut or
/// padded). The common case of an INSERT of string literals, without the conversion's
/// copies.
fn fits_unchanged(v: &Value, from: &SqlType, to: &SqlType) -> bool {
    use types::Length;
    let Value::String(s) = v else {
        return false;
    };
    if !matches!(from, SqlType::VarChar { .. } | SqlType::NVarChar { .. }) || !s.is_ascii() {
        return false;
    }
    match to {
        SqlType::VarChar { len: Length::Bounded(n) } | SqlType::NVarChar { len: Length::Bounded(n) } => {
            s.len() <= usize::from(*n)
        }
        _ => false,
    }
}

pub(crate) fn null_error(t: &TableInfo, col: usize, stmt: &str) -> SqlError {
    SqlError::new(
        515,
        16,
        2,
        format!(
            "Cannot insert the value NULL into column '{}', table '{}.{}.{}'; column does not allow nulls. {} fails.",
            t.columns[col].name, t.db_name, t.schema, t.display_name, stmt
        ),
    )
}

/// Checks NOT NULL, CHECK and FOREIGN KEY constraints of a new row.
pub(crate) fn check_row(t: &TableInfo, row: &Row, stmt: &str, cx: &mut Cx) -> Result<(), SqlError> {
    check_row_changed(t, None, row, stmt, cx)
}

/// [`check_row`] for a row that replaces `old` (an UPDATE, or a row a FOREIGN KEY
/// cascade changes): only the FOREIGN KEYs whose columns changed or were assigned
/// (`assigned`: a cascade's SET DEFAULT may set the value a column has) are checked
/// against their referenced tables.
fn check_row_changed(
    t: &TableInfo,
    old: Option<(&Row, &[usize])>,
    row: &Row,
    stmt: &str,
    cx: &mut Cx,
) -> Result<(), SqlError> {
    for (i, c) in t.columns.iter().enumerate() {
        if !c.nullable && row[i].is_null() && c.computed.is_none() {
            return Err(null_error(t, i, if matches!(stmt, "INSERT" | "MERGE") { stmt } else { "UPDATE" }));
        }
    }
    if cx.bulk_unchecked {
        return Ok(());
    }
    for (name, e) in &t.checks {
        let v = e.eval(row, cx)?;
        if matches!(v, Value::Bit(false)) {
            let mut cols = Vec::new();
            e.columns(&mut cols);
            let col = cols.first().map(|&c| format!(", column '{}'", t.columns[c].name)).unwrap_or_default();
            return Err(SqlError::new(
                547,
                16,
                0,
                format!(
                    "The {stmt} statement conflicted with the CHECK constraint \"{name}\". The conflict occurred in database \"{}\", table \"{}.{}\"{col}.",
                    t.db_name, t.schema, t.display_name
                ),
            ));
        }
    }
    for fk in &t.foreign_keys {
        let unchanged = |(o, assigned): (&Row, &[usize])| {
            fk.columns.iter().all(|&c| !assigned.contains(&c) && same_value(&o[c], &row[c]))
        };
        if old.is_some_and(unchanged) {
            continue;
        }
        let vals: Vec<Value> = fk.columns.iter().map(|&c| row[c].clone()).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        // A row that references itself is its own referenced row (SQL Server checks the
        // reference once the row is written).
        let own = fk.referenced.db == t.db && fk.referenced.object_id == t.object_id;
        if own && fk.referenced_columns.iter().zip(&vals).all(|(&c, v)| same_value(&row[c], v)) {
            continue;
        }
        if !exists_row(
            cx,
            &fk.referenced,
            &fk.referenced_columns,
            &vals,
            &fk.columns.iter().map(|&c| t.columns[c].ty).collect::<Vec<_>>(),
        )? {
            return Err(SqlError::new(
                547,
                16,
                0,
                format!(
                    "The {stmt} statement conflicted with the FOREIGN KEY constraint \"{}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                    fk.name,
                    fk.referenced.db_name,
                    fk.referenced.schema,
                    fk.referenced.display_name,
                    fk.referenced_columns.first().map(|&c| fk.referenced.columns[c].name.clone()).unwrap_or_default()
                ),
            ));
        }
    }
    Ok(())
}

/// Does `t` have a row whose `cols` equal `vals`? Uses an index on those columns when
/// there is one, else scans.
fn exists_row(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
) -> Result<bool, SqlError> {
    let plan = key_match_plan(cx, t, cols, vals, from, false)?;
    let mut op = open(&plan, cx)?;
    Ok(op.next(cx)?.is_some())
}

/// A plan for the rows of `t` whose `cols` equal `vals` (typed `from`): a scan with the
/// equalities pushed down, so an index on those columns is used when there is one.
fn key_match_plan(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
    with_locator: bool,
) -> Result<Plan, SqlError> {
    let mut eq = Vec::new();
    for (i, v) in vals.iter().enumerate() {
        eq.push(BExpr::Cmp(
            BinaryOp::Eq,
            Box::new(BExpr::Col(cols[i], t.columns[cols[i]].ty)),
            Box::new(BExpr::Const(v.clone(), from[i])),
            t.columns[cols[i]].ty,
        ));
    }
    let scan = Plan::Scan(ScanNode::all(t.clone(), with_locator));
    super::query::push_down(scan, eq, cx)
}

/// The rows of the tables referencing `t` through a FOREIGN KEY, once `t`'s row `old`
/// was deleted (`new` None) or replaced by `new`: NO ACTION is 547 when one still
/// references the old key; CASCADE, SET NULL and SET DEFAULT change them as statements
/// of their own would (`write_update`, `write_delete`), so a cascaded row is checked
/// and goes on down to the tables referencing it.
fn check_referenced(t: &TableInfo, old: &Row, new: Option<&Row>, stmt: &str, cx: &mut Cx) -> Result<(), SqlError> {
    // Cascades recurse (8631 rather than overflow on cyclic references).
    crate::stack::check()?;
    for (name, child, child_cols, our_cols) in &t.referenced_by {
        let vals: Vec<Value> = our_cols.iter().map(|&c| old[c].clone()).collect();
        if vals.iter().any(|v| v.is_null()) {
            continue;
        }
        if let Some(n) = new {
            // The referenced key did not change: nothing to check.
            if our_cols.iter().all(|&c| same_value(&old[c], &n[c])) {
                continue;
            }
        }
        let action = {
            let cat = cx.catalog(child.db)?;
            let g = cat.inner.read();
            g.objects
                .get(&child.object_id)
                .and_then(|o| o.table())
                .and_then(|ct| {
                    ct.foreign_keys.iter().find(|f| &f.name == name).map(|f| {
                        if new.is_some() {
                            f.on_update
                        } else {
                            f.on_delete
                        }
                    })
                })
                .unwrap_or(ReferentialAction::NoAction)
        };
        let types_: Vec<SqlType> = our_cols.iter().map(|&c| t.columns[c].ty).collect();
        match action {
            ReferentialAction::NoAction => {
                if exists_row(cx, child, child_cols, &vals, &types_)? {
                    return Err(SqlError::new(
                        547,
                        16,
                        0,
                        format!(
                            "The {stmt} statement conflicted with the REFERENCE constraint \"{name}\". The conflict occurred in database \"{}\", table \"{}.{}\", column '{}'.",
                            child.db_name,
                            child.schema,
                            child.display_name,
                            child_cols.first().map(|&c| child.columns[c].name.clone()).unwrap_or_default()
                        ),
                    ));
                }
            }
            ReferentialAction::Cascade | ReferentialAction::SetNull | ReferentialAction::SetDefault => {
                // `referenced_by` holds the referencing table without its own links and
                // triggers (built one level deep): a cascade needs the whole table, to
                // check its rows against its own foreign keys, to go on to the tables
                // referencing it and to fire its triggers.
                let full =
                    if child.object_id != t.object_id { cx.table_info_by_id(child.db, child.object_id)? } else { None };
                let child = full.as_ref().unwrap_or(child);
                let rows = matching_rows(cx, child, child_cols, &vals, &types_)?;
                // The referencing table's AFTER triggers get the rows once the statement
                // has written all of its own (trigger::fire_cascades).
                let deletes = action == ReferentialAction::Cascade && new.is_none();
                let event = if deletes { trigger::Event::Delete } else { trigger::Event::Update };
                let slot = if rows.is_empty() { None } else { trigger::cascade_slot(cx, child, event, child_cols) };
                for (pk, crow) in rows {
                    let nr = if deletes {
                        if !write_delete(cx, child, &pk, &crow, stmt)? {
                            continue;
                        }
                        None
                    } else {
                        let mut nr = crow.clone();
                        for (k, &cc) in child_cols.iter().enumerate() {
                            nr[cc] = match (action, new) {
                                (ReferentialAction::Cascade, Some(n)) => n[our_cols[k]].clone(),
                                (ReferentialAction::SetDefault, _) => match &child.defaults[cc] {
                                    Some(d) => {
                                        let v = d.eval(&[], cx)?;
                                        to_column(child, cc, v, &d.ty())?
                                    }
                                    None => Value::Null,
                                },
                                _ => Value::Null,
                            };
                        }
                        Some(write_update_of(cx, child, &pk, &crow, nr, stmt, child_cols)?)
                    };
                    if let Some(s) = slot {
                        trigger::cascade_row(cx, s, crow, nr);
                    }
                }
            }
        }
    }
    Ok(())
}

/// Whether a column's value is the same before and after a change (NULL is NULL).
fn same_value(a: &Value, b: &Value) -> bool {
    match (a.is_null(), b.is_null()) {
        (true, true) => true,
        (false, false) => types::compare(a, b) == Some(std::cmp::Ordering::Equal),
        _ => false,
    }
}

fn matching_rows(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    cols: &[usize],
    vals: &[Value],
    from: &[SqlType],
) -> Result<Vec<(Vec<u8>, Row)>, SqlError> {
    let plan = key_match_plan(cx, t, cols, vals, from, true)?;
    let mut op = open(&plan, cx)?;
    let mut out = Vec::new();
    let w = t.columns.len();
    while let Some(mut r) = op.next(cx)? {
        let Some(Value::Binary(pk)) = r.pop() else { continue };
        r.truncate(w);
        out.push((pk, r));
    }
    Ok(out)
}

/// OUTPUT clause: items bound over `[deleted columns..., inserted columns...]`.
pub(super) struct Output {
    exprs: Vec<BExpr>,
    cols: Vec<OutCol>,
    into: Option<(Arc<TableInfo>, Vec<usize>)>,
    rows: Vec<Row>,
}

/// `extra`: columns the OUTPUT row carries after the inserted ones (MERGE's `$action`
/// and its source columns).
pub(super) fn bind_output(
    cx: &mut Cx,
    t: &TableInfo,
    clauses: &[OutputClause],
    extra: &Scope,
) -> Result<Vec<Output>, SqlError> {
    if clauses.is_empty() {
        return Ok(Vec::new());
    }
    let mut scope = Scope::default();
    for prefix in ["deleted", "inserted"] {
        for c in &t.columns {
            scope.cols.push(ScopeCol {
                table: Some(prefix.into()),
                name: c.name.clone(),
                ty: c.ty,
                nullable: true,
                exposed: None,
                collation: c.collation,
            });
        }
    }
    scope.cols.extend(extra.cols.iter().cloned());
    let mut outs = Vec::new();
    for oc in clauses {
        let mut exprs = Vec::new();
        let mut cols = Vec::new();
        for item in &oc.items {
            match item {
                SelectItem::Wildcard(q) => {
                    let prefix =
                        q.as_ref().map(|q| q.name().value.to_ascii_lowercase()).unwrap_or_else(|| "inserted".into());
                    // `source.*` in MERGE: the extra columns of that table.
                    let base = 2 * t.columns.len();
                    let before = exprs.len();
                    for (i, c) in extra.cols.iter().enumerate() {
                        if prefix != "deleted"
                            && prefix != "inserted"
                            && c.table.as_deref().is_some_and(|tn| tn.eq_ignore_ascii_case(&prefix))
                        {
                            exprs.push(BExpr::Col(base + i, c.ty));
                            cols.push(OutCol::new(c.name.clone(), c.ty, true));
                        }
                    }
                    if exprs.len() > before {
                        continue;
                    }
                    let base = if prefix == "deleted" { 0 } else { t.columns.len() };
                    for (i, c) in t.columns.iter().enumerate() {
                        exprs.push(BExpr::Col(base + i, c.ty));
                        cols.push(OutCol::new(c.name.clone(), c.ty, true));
                    }
                }
                SelectItem::Expr { expr, alias } => {
                    let b = Binder::new(cx).bind_expr(expr, &scope)?;
                    let name = alias.as_ref().map(|a| a.value.clone()).unwrap_or_else(|| match &expr.kind {
                        ExprKind::Column(n) => n.name().value.clone(),
                        _ => String::new(),
                    });
                    cols.push(OutCol::new(name, b.ty(), true));
                    exprs.push(b);
                }
                SelectItem::Assign { .. } => return Err(errors::not_supported("Variable assignment in OUTPUT")),
            }
        }
        let into = match &oc.into {
            Some(i) => {
                let tt = target_table(cx, &i.target, "INSERT")?;
                let positions = if i.columns.is_empty() {
                    (0..tt.columns.len())
                        .filter(|&k| !tt.columns[k].is_identity && tt.columns[k].computed.is_none())
                        .collect()
                } else {
                    let mut v = Vec::new();
                    for c in &i.columns {
                        v.push(tt.column_index(&c.value).ok_or_else(|| errors::invalid_column(&c.value))?);
                    }
                    v
                };
                if positions.len() != exprs.len() {
                    return Err(errors::column_count_mismatch());
                }
                Some((tt, positions))
            }
            None => None,
        };
        outs.push(Output { exprs, cols, into, rows: Vec::new() });
    }
    Ok(outs)
}

pub(super) fn collect_output(
    outs: &mut [Output],
    deleted: Option<&Row>,
    inserted: Option<&Row>,
    width: usize,
    extra: &[Value],
    cx: &mut Cx,
) -> Result<(), SqlError> {
    if outs.is_empty() {
        return Ok(());
    }
    let mut row = Vec::with_capacity(width * 2 + extra.len());
    match deleted {
        Some(d) => row.extend(d.iter().cloned()),
        None => row.extend(std::iter::repeat_n(Value::Null, width)),
    }
    match inserted {
        Some(i) => row.extend(i.iter().cloned()),
        None => row.extend(std::iter::repeat_n(Value::Null, width)),
    }
    row.extend(extra.iter().cloned());
    for o in outs.iter_mut() {
        let mut r = Vec::with_capacity(o.exprs.len());
        for e in &o.exprs {
            r.push(e.eval(&row, cx)?);
        }
        o.rows.push(r);
    }
    Ok(())
}

pub(super) fn flush_output(outs: Vec<Output>, cx: &mut Cx) -> Result<(), SqlError> {
    for o in outs {
        match o.into {
            Some((t, positions)) => {
                for r in o.rows {
                    let types_: Vec<SqlType> = o.exprs.iter().map(|e| e.ty()).collect();
                    insert_values(cx, &t, &positions, r, &types_)?;
                }
            }
            None => {
                let info: Vec<ColumnInfo> =
                    o.cols.iter().map(|c| ColumnInfo::new(c.name.clone(), c.ty, true)).collect();
                cx.sink.columns(&info).map_err(|_| super::cancelled())?;
                for r in &o.rows {
                    cx.sink.row(r).map_err(|_| super::cancelled())?;
                }
            }
        }
    }
    Ok(())
}

/// Inserts one row given values for some columns (others: default, identity, NULL).
/// Returns the complete row.
pub fn insert_values(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
) -> Result<Row, SqlError> {
    insert_values_as(cx, t, positions, values, types_, "INSERT")
}

/// The value [`insert_values_as`] takes as "this column's DEFAULT" (VALUES (DEFAULT) and
/// MERGE's INSERT ... DEFAULT): a string no client value is expected to be.
const DEFAULT_MARKER: &str = "\u{0}__DEFAULT__";

pub(super) fn default_marker() -> Value {
    Value::String(DEFAULT_MARKER.into())
}

fn is_default_marker(v: &Value) -> bool {
    matches!(v, Value::String(s) if s == DEFAULT_MARKER)
}

/// [`insert_values`] for a statement named `stmt` in constraint messages (MERGE).
pub(super) fn insert_values_as(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
) -> Result<Row, SqlError> {
    insert_row_as(cx, t, positions, values, types_, stmt, true)
}

/// The row an INSERT would write, for an INSTEAD OF trigger's `inserted`: defaults and
/// computed columns filled in, an identity not given is 0 (no value is used up), nothing
/// checked or written.
pub(super) fn would_insert(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
) -> Result<Row, SqlError> {
    insert_row_as(cx, t, positions, values, types_, "INSERT", false)
}

fn insert_row_as(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
    write: bool,
) -> Result<Row, SqlError> {
    let (row, new_identity) = make_row(cx, t, positions, values, types_, stmt, write, None)?;
    if !write {
        return Ok(row);
    }
    t.insert_row(&row, cx)?;
    note_identity(cx, &[new_identity]);
    Ok(row)
}

/// The row an INSERT writes (checked when `write`), and the identity value it takes:
/// `identity` when the caller drew it (a batch's range), else drawn here.
#[allow(clippy::too_many_arguments)]
fn make_row(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    values: Row,
    types_: &[SqlType],
    stmt: &str,
    write: bool,
    identity: Option<i128>,
) -> Result<(Row, Option<i128>), SqlError> {
    let n = t.columns.len();
    // Which columns have a value: on the stack for up to 64 columns (one allocation less
    // per inserted row).
    let (mut small, mut large) = ([false; 64], Vec::new());
    let given: &mut [bool] = if n <= small.len() {
        &mut small[..n]
    } else {
        large.resize(n, false);
        &mut large
    };
    let identity_insert = cx.state.identity_insert == Some((t.db, t.object_id));
    let mut new_identity = None;
    let mut row: Row;
    if values.len() == n && positions.len() == n && positions.iter().enumerate().all(|(k, &p)| p == k) {
        // A value for each column in order: the values become the row, converted in
        // place (no second vector).
        row = values;
        for (k, slot) in row.iter_mut().enumerate() {
            let v = std::mem::replace(slot, Value::Null);
            if is_default_marker(&v) {
                continue;
            }
            *slot = to_column(t, k, v, &types_[k])?;
            given[k] = true;
        }
    } else {
        // (`vec![Value::Null; n]` clones through Value's Clone, per column.)
        row = Vec::with_capacity(n);
        row.resize_with(n, || Value::Null);
        for (k, v) in values.into_iter().enumerate() {
            let col = positions[k];
            if is_default_marker(&v) {
                continue;
            }
            row[col] = to_column(t, col, v, &types_[k])?;
            given[col] = true;
        }
    }
    for (i, c) in t.columns.iter().enumerate() {
        if c.is_identity {
            if given[i] {
                if !identity_insert {
                    return Err(SqlError::new(
                        544,
                        16,
                        1,
                        format!(
                            "Cannot insert explicit value for identity column in table '{}' when IDENTITY_INSERT is set to OFF.",
                            t.display_name
                        ),
                    ));
                }
                if let Some(v) = int_of(&row[i]).filter(|_| write) {
                    t.observe_identity(v, cx)?;
                    new_identity = Some(v);
                }
            } else if !write {
                row[i] = identity_value(0, &c.ty)?;
            } else {
                // A failed insert still uses up its value (a gap), as in SQL Server, but
                // @@IDENTITY and SCOPE_IDENTITY() change only when the row is inserted.
                // Waiting for a scheduler (taking one back after a latch wait, or
                // yielding at quantum end) comes before the value is drawn, not between
                // it and the insert's own safe point: a value held through other
                // sessions' quanta arrives far behind the index's right edge, where it
                // splits a full page in exclusive mode.
                let v = match identity {
                    Some(v) => v,
                    None => {
                        diag::sched::safe_point();
                        t.next_identity(cx)?.unwrap_or(1)
                    }
                };
                row[i] = identity_value(v, &c.ty)?;
                new_identity = Some(v);
            }
            continue;
        }
        if !given[i] && c.computed.is_none() {
            if let Some(d) = &t.defaults[i] {
                let v = d.eval(&[], cx)?;
                row[i] = to_column(t, i, v, &d.ty())?;
            }
        }
    }
    if identity_insert && t.identity_pos().is_some_and(|i| !given[i]) {
        return Err(SqlError::new(
            545,
            16,
            1,
            format!(
                "Explicit value must be specified for identity column in table '{}' either when IDENTITY_INSERT is set to ON or when a replication user is inserting into a NOT FOR REPLICATION identity column.",
                t.display_name
            ),
        ));
    }
    // Computed columns (persisted ones are stored; all are checked).
    for (i, c) in t.computed.iter().enumerate() {
        if let Some(e) = c {
            let v = e.eval(&row, cx)?;
            row[i] = convert::convert(&v, &e.ty(), &t.columns[i].ty, None)?;
        }
    }
    if write {
        check_row(t, &row, stmt, cx)?;
    }
    Ok((row, new_identity))
}

/// Rows per batch of a batched insert.
const INSERT_BATCH: usize = 32;

/// Batched inserts: when nothing can observe an INSERT's rows one at a time, the rows
/// are built and checked a batch at a time and written with one `Host::insert_many`
/// (one latch per leaf instead of one per row), the statement's IDENTITY values drawn
/// as one contiguous range. Nothing may observe the difference: no triggers, OUTPUT or
/// foreign keys, one index (a second index's errors would come in another order), a
/// unique clustered key (no row id), not IDENTITY_INSERT, and no default, computed
/// column or check that reads the database or session state. The rows are materialised
/// first (the source cannot see the batch). Errors come in the same order as row by
/// row: a row that fails to build ends the batch, whose rows before it are written
/// first.
fn batchable(cx: &Cx, t: &TableInfo, ins: &Insert, triggered: bool) -> bool {
    !triggered
        && ins.output.is_empty()
        && t.foreign_keys.is_empty()
        && t.indexes.len() == 1
        && !t.needs_row_id()
        && cx.state.identity_insert != Some((t.db, t.object_id))
        && !t.defaults.iter().flatten().any(|e| e.reads_state())
        && !t.computed.iter().flatten().any(|e| e.reads_state())
        && !t.checks.iter().any(|(_, e)| e.reads_state())
}

/// Inserts `rows` (each with its value types) in batches; returns how many were
/// inserted.
///
/// The statement's IDENTITY values are drawn at once, before its first row is built:
/// concurrent statements then fill disjoint key ranges of the index, each appending at
/// a position of its own (a leaf that is not the rightmost splits at the insert
/// position when keys ascend there: storage's `smo`), where per-batch draws made every
/// session's rows interleave in the index's last leaf and wait for its latch. SQL
/// Server promises no contiguity either way. What the statement does not use (a row
/// failed) is given back when no other session drew meanwhile.
fn insert_batched(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    rows: Vec<(Row, std::borrow::Cow<'_, [SqlType]>)>,
) -> Result<u64, SqlError> {
    let total = rows.len();
    // As for one row: a scheduler wait comes before the draw, not between it and the
    // writes.
    diag::sched::safe_point();
    let drawn = t.next_identity_range(total, cx)?;
    let mut used = 0usize;
    let r = insert_batches(cx, t, positions, rows, drawn, &mut used);
    if let Some(range) = drawn {
        t.give_back_identity(range, total, used);
    }
    r
}

/// The batches of [`insert_batched`], with values of the `drawn` IDENTITY range;
/// `used` counts the values handed to rows.
fn insert_batches(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    positions: &[usize],
    rows: Vec<(Row, std::borrow::Cow<'_, [SqlType]>)>,
    drawn: Option<(i128, i128)>,
    used: &mut usize,
) -> Result<u64, SqlError> {
    let total = rows.len();
    let mut rows = rows.into_iter();
    let mut batch: Vec<(Vec<u8>, Row)> = Vec::with_capacity(total.min(INSERT_BATCH));
    let mut identities: Vec<Option<i128>> = Vec::with_capacity(total.min(INSERT_BATCH));
    let mut next = drawn;
    let mut count = 0u64;
    let mut left = total;
    while left > 0 {
        let n = left.min(INSERT_BATCH);
        left -= n;
        batch.clear();
        identities.clear();
        let mut build_err = None;
        for (vals, tys) in rows.by_ref().take(n) {
            let reserved = next.map(|(v, _)| v);
            if let Some((v, inc)) = &mut next {
                *v += *inc;
                *used += 1;
            }
            match make_row(cx, t, positions, vals, &tys, "INSERT", true, reserved) {
                Ok((row, id)) => {
                    let row = match t.stored_row(&row) {
                        std::borrow::Cow::Borrowed(_) => row,
                        std::borrow::Cow::Owned(stored) => stored,
                    };
                    batch.push((Vec::new(), row));
                    identities.push(id);
                }
                Err(e) => {
                    build_err = Some(e);
                    break;
                }
            }
        }
        for (i, (key, row)) in batch.iter_mut().enumerate() {
            match t.primary_key(row, 0) {
                Ok(k) => *key = k,
                Err(e) => {
                    build_err = Some(e);
                    identities.truncate(i);
                    break;
                }
            }
        }
        batch.truncate(identities.len());
        if let Err((i, e)) = cx.host.insert_many(&t.indexes[0].iref, &batch) {
            let i = i.min(batch.len());
            note_identity(cx, &identities[..i]);
            return Err(match (e, batch.get(i)) {
                (HostError::Duplicate, Some((_, row))) => t.duplicate_error(&t.indexes[0], row),
                (e, _) => super::host_err(e),
            });
        }
        note_identity(cx, &identities);
        count += batch.len() as u64;
        if let Some(e) = build_err {
            return Err(e);
        }
    }
    Ok(count)
}

/// @@IDENTITY and SCOPE_IDENTITY() after rows were inserted: the last one's value.
fn note_identity(cx: &mut Cx, inserted: &[Option<i128>]) {
    if let Some(&Some(v)) = inserted.last() {
        cx.state.last_identity = Some(v);
        cx.frame().scope_identity = Some(v);
    }
}

pub fn insert(cx: &mut Cx, ins: &Insert) -> Result<(), SqlError> {
    // A statement of a batch the parse cache matched by shape takes the batch's own
    // literals (see parse_cache.rs); only the batch's own statements can be one.
    let given = if cx.frames.len() == 1 { cx.literals.as_mut().and_then(|l| l.find(ins)) } else { None };
    // A table (not a view) named as before: resolved once, from the name cache.
    if let DmlTarget::Table { name, .. } = &ins.target {
        if let Some(t) = cx.resolve_table_cached(name)? {
            super::security::check_object_id(cx, t.db, t.object_id, t.schema_id, &t.name, "INSERT")?;
            return insert_into(cx, ins, &t.info, given.map(|r| r.start));
        }
    }
    if let Some(given) = given {
        // Any other target (a view, a CTE, a table not created yet) goes the general
        // way, with the statement as written.
        let mut own = ins.clone();
        if let (InsertSource::Values(rows), Some(lits)) = (&mut own.source, &cx.literals) {
            let mut i = given.start;
            for e in rows.iter_mut().flatten() {
                if let ExprKind::Literal(l) = &mut e.kind {
                    if let Some(written) = lits.literal(i, &cx.source) {
                        *l = written;
                    }
                    i += 1;
                }
            }
        }
        return insert(cx, &own);
    }
    if let DmlTarget::Table { name, .. } = &ins.target {
        if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Insert)? {
            super::security::check_object(cx, db, &view, "INSERT")?;
            return trigger::insert_view(cx, ins, name, &view, &tr);
        }
    }
    let touched: Vec<String> = ins.columns.iter().map(|c| c.value.clone()).collect();
    if let Some((cte, _)) = cte_target(&ins.with, &ins.target, &[]) {
        let vb = updatable_cte(cx, cte, Some(&touched), "INSERT")?;
        return insert_through(cx, ins, &vb);
    }
    if let Some(vb) = updatable_view(cx, &ins.target, "INSERT", Some(&touched), false)? {
        return through_view(cx, |cx| insert_through(cx, ins, &vb));
    }
    let t = target_table(cx, &ins.target, "INSERT")?;
    insert_into(cx, ins, &t, None)
}

/// INSERT into a view or CTE: into its base table, its columns renamed.
fn insert_through(cx: &mut Cx, ins: &Insert, vb: &ViewBase) -> Result<(), SqlError> {
    {
        let mut i = ins.clone();
        i.target = vb.target(&ins.target);
        i.output = vb.base_output(&ins.output);
        let view_cols: Vec<String> = if ins.columns.is_empty() {
            vb.columns.iter().map(|(v, _)| v.clone()).collect()
        } else {
            ins.columns.iter().map(|c| c.value.clone()).collect()
        };
        i.columns = Vec::with_capacity(view_cols.len());
        for c in &view_cols {
            let b = vb.base_column(c)?.ok_or_else(|| errors::invalid_column(c))?;
            i.columns.push(Ident::new(b));
        }
        insert(cx, &i)
    }
}

/// A VALUES literal's value and type: when the statement was matched by shape
/// (`given`: the index of its next literal among the batch's), the batch's own literal,
/// else the one in the statement.
fn values_literal(cx: &mut Cx, l: &Literal, given: &mut Option<usize>) -> Result<(Value, SqlType), SqlError> {
    if let (Some(i), Some(lits)) = (given.as_mut(), cx.literals.as_mut()) {
        let r = lits.value(*i, &cx.source);
        *i += 1;
        return r;
    }
    super::query::literal_type_value(l)
}

/// INSERT into the table `t` its target names; `given` as in [`values_literal`].
fn insert_into(cx: &mut Cx, ins: &Insert, t: &Arc<TableInfo>, mut given: Option<usize>) -> Result<(), SqlError> {
    let t = t.clone();
    let positions = insert_positions(cx, &t, &ins.columns)?;
    // Triggers: an INSTEAD OF INSERT trigger gets the rows instead of the table; AFTER
    // triggers get them once they are written.
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Insert, &ins.output)?;
    let mut kept: Vec<Row> = Vec::new();
    let put = |cx: &mut Cx, vals: Row, tys: &[SqlType], kept: &mut Vec<Row>| -> Result<Row, SqlError> {
        let row = if instead.is_some() {
            would_insert(cx, &t, &positions, vals, tys)?
        } else {
            insert_values(cx, &t, &positions, vals, tys)?
        };
        if keep {
            kept.push(row.clone());
        }
        Ok(row)
    };
    let mut outs = bind_output(cx, &t, &ins.output, &Scope::default())?;
    let limit = top_limit(cx, ins.top.as_ref())?;
    let width = t.columns.len();
    let mut count = 0u64;
    match &ins.source {
        InsertSource::Values(rows)
            if rows.len() > 1
                && batchable(cx, &t, ins, instead.is_some() || keep)
                && rows.iter().flatten().all(|e| matches!(e.kind, ExprKind::Literal(_) | ExprKind::Default)) =>
        {
            // Literals only: nothing to evaluate between the rows.
            if let Some(r) = rows.iter().find(|r| r.len() != positions.len()) {
                return Err(if ins.columns.is_empty() {
                    errors::column_count_mismatch()
                } else {
                    errors::insert_count_mismatch(positions.len() > r.len())
                });
            }
            let take = limit.map_or(rows.len(), |l| rows.len().min(usize::try_from(l).unwrap_or(usize::MAX)));
            let mut built = Vec::with_capacity(take);
            for r in &rows[..take] {
                let mut vals = Vec::with_capacity(r.len());
                let mut tys = Vec::with_capacity(r.len());
                for e in r {
                    if let ExprKind::Literal(l) = &e.kind {
                        let (v, ty) = values_literal(cx, l, &mut given)?;
                        vals.push(v);
                        tys.push(ty);
                    } else {
                        vals.push(default_marker());
                        tys.push(SqlType::Int);
                    }
                }
                built.push((vals, std::borrow::Cow::Owned(tys)));
            }
            count = insert_batched(cx, &t, &positions, built)?;
        }
        InsertSource::Values(rows) => {
            for r in rows {
                if r.len() != positions.len() {
                    return Err(if ins.columns.is_empty() {
                        errors::column_count_mismatch()
                    } else {
                        errors::insert_count_mismatch(positions.len() > r.len())
                    });
                }
                if limit.is_some_and(|l| count >= l) {
                    break;
                }
                // The buffers of the batch's last row (a loading script's INSERTs are
                // one row each).
                let mut vals = std::mem::take(&mut cx.spare_row);
                let mut tys = std::mem::take(&mut cx.spare_types);
                vals.clear();
                tys.clear();
                for e in r {
                    if matches!(e.kind, ExprKind::Default) {
                        vals.push(default_marker());
                        tys.push(SqlType::Int);
                        continue;
                    }
                    // A literal is its value (what binding and evaluating it gives).
                    if let ExprKind::Literal(l) = &e.kind {
                        let (v, ty) = values_literal(cx, l, &mut given)?;
                        vals.push(v);
                        tys.push(ty);
                        continue;
                    }
                    let b = Binder::new(cx).bind_expr(e, &Scope::default())?;
                    vals.push(b.eval(&[], cx)?);
                    tys.push(b.ty());
                }
                let mut row = put(cx, vals, &tys, &mut kept)?;
                collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                count += 1;
                row.clear();
                cx.spare_row = row;
                cx.spare_types = tys;
            }
        }
        InsertSource::DefaultValues => {
            let row = if instead.is_some() {
                would_insert(cx, &t, &[], Vec::new(), &[])?
            } else {
                insert_values(cx, &t, &[], Vec::new(), &[])?
            };
            if keep {
                kept.push(row.clone());
            }
            collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
            count = 1;
        }
        InsertSource::Query(q) => {
            let plan = {
                let mut b = Binder::new(cx);
                b.push_ctes(&ins.with);
                b.plan_query(q)?.0
            };
            let tys: Vec<SqlType> = plan.columns().iter().map(|c| c.ty).collect();
            if tys.len() != positions.len() {
                return Err(if ins.columns.is_empty() {
                    errors::column_count_mismatch()
                } else {
                    errors::insert_count_mismatch(positions.len() > tys.len())
                });
            }
            // Materialise first: the source may read the target. Past the request's
            // memory grant the rows go to a spool file (SQL Server's eager spool in
            // tempdb) and are inserted one by one as they are read back.
            let dir = cx.host.spill_dir();
            let (rows, _held) = match super::spill::spool(open(&plan, cx)?, cx, &dir)? {
                super::spill::Spooled::Memory(rows, held) => (rows, held),
                super::spill::Spooled::Disk(mut rest) => {
                    while let Some(r) = rest.next_row()? {
                        if limit.is_some_and(|l| count >= l) {
                            break;
                        }
                        let row = put(cx, r, &tys, &mut kept)?;
                        collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                        count += 1;
                    }
                    (Vec::new(), None)
                }
            };
            if batchable(cx, &t, ins, instead.is_some() || keep) && rows.len() > 1 {
                let take = limit.map_or(rows.len(), |l| rows.len().min(usize::try_from(l).unwrap_or(usize::MAX)));
                let built = rows.into_iter().take(take).map(|r| (r, std::borrow::Cow::Borrowed(&tys[..]))).collect();
                count = insert_batched(cx, &t, &positions, built)?;
            } else {
                for r in rows {
                    if limit.is_some_and(|l| count >= l) {
                        break;
                    }
                    let row = put(cx, r, &tys, &mut kept)?;
                    collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                    count += 1;
                }
            }
        }
        InsertSource::ExecProcedure(_) | InsertSource::ExecString(_) => {
            let sets = super::procs::capture_results(cx, &ins.source)?;
            for (cols, rows) in sets {
                let tys: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
                if tys.len() != positions.len() {
                    return Err(errors::column_count_mismatch());
                }
                for r in rows {
                    let row = put(cx, r, &tys, &mut kept)?;
                    collect_output(&mut outs, None, Some(&row), width, &[], cx)?;
                    count += 1;
                }
            }
        }
    }
    flush_output(outs, cx)?;
    if keep {
        let f = trigger::Fired { inserted: kept, deleted: Vec::new(), updated: None, row_count: count };
        match &instead {
            Some(tr) => trigger::fire_instead(cx, &t, tr, f)?,
            None => trigger::fire_after(cx, &t, trigger::Event::Insert, f)?,
        }
    }
    cx.state.rowcount = count as i64;
    cx.done(Some(count))
}

/// The name a DML target's rows go by (its one-part name or the variable).
fn target_alias(target: &DmlTarget) -> String {
    match target {
        DmlTarget::Table { name, .. } => name.name().value.clone(),
        DmlTarget::Variable(v) => v.clone(),
    }
}

/// Plans the rows an UPDATE/DELETE changes: the combined FROM row, with the target's
/// locator column; returns the plan and the target's column offset in it.
fn plan_target_rows(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    target: &DmlTarget,
    from: &[TableWithJoins],
    where_clause: Option<&Expr>,
    with: &[Cte],
    current: Option<&[u8]>,
) -> Result<(Plan, usize, Scope, Option<BExpr>), SqlError> {
    cx.dml_target = Some((t.db, t.object_id));
    let r = (|| {
        let mut b = Binder::new(cx);
        b.push_ctes(with);
        let (mut plan, scope) = if from.is_empty() {
            let alias = target_alias(target);
            let mut cols = t.out_cols();
            cols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: types::Length::Bounded(900) }, false));
            let plan = match current {
                // WHERE CURRENT OF: the one row the cursor stands on (none if it is gone).
                Some(pk) => {
                    let mut rows = Vec::new();
                    if let Some(stored) = b.cx.host.get(&t.indexes[0].iref, pk).map_err(super::host_err)? {
                        if let Some(mut row) = t.row_from_index(0, stored, b.cx)? {
                            row.push(Value::Binary(pk.to_vec()));
                            rows.push(row);
                        }
                    }
                    Plan::Rows { rows: Arc::new(rows), cols: cols.clone() }
                }
                None => {
                    let mut scan = ScanNode::all_with_locator(t);
                    if let DmlTarget::Table { hints, .. } = target {
                        // READPAST and NOWAIT on the target's scan; its rows are U-locked
                        // and read again before they change whatever the hints say.
                        let h = crate::host::LockHints::from_table_hints(hints);
                        scan.hints = crate::host::LockHints { isolation: None, ..h };
                    }
                    Plan::Scan(scan)
                }
            };
            (plan, Scope::from_cols(Some(&alias), &cols))
        } else {
            b.plan_from(from)?
        };
        let mut recheck = None;
        if let Some(w) = where_clause {
            let pred = b.bind_expr(w, &scope)?;
            recheck = Some(pred.clone());
            let mut cs = Vec::new();
            super::query::conjuncts(pred, &mut cs);
            plan = super::query::push_down(plan, cs, b.cx)?;
        }
        // Where is the target in the combined row? Find its locator column.
        let target_name = target_alias(target);
        let loc = scope
            .cols
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name == "%%physloc%%")
            .find(|(_, c)| c.table.as_deref().is_some_and(|tn| tn.eq_ignore_ascii_case(&target_name)))
            .or_else(|| scope.cols.iter().enumerate().find(|(_, c)| c.name == "%%physloc%%"))
            .map(|(i, _)| i)
            .ok_or_else(|| errors::invalid_object(&target_name))?;
        let offset = loc - t.columns.len();
        Ok((plan, offset, scope, recheck))
    })();
    cx.dml_target = None;
    r
}

/// The lock step of UPDATE and DELETE, SQL Server's update (U) lock on each row they
/// read. The scan read `row` at READ COMMITTED without keeping a lock, so another
/// transaction may have changed or deleted it since; it is read again under a U lock
/// (held to the end of the transaction, waiting for a writer to end first). Returns false
/// if it is gone. If it changed, the target's columns in `row` become the current ones
/// and the WHERE (`recheck`) is evaluated again: without this, two sessions running
/// `UPDATE ... SET n = n + 1` would both write the value they read (a lost update), and two
/// running `DELETE TOP (n)` would both count the same rows.
pub(super) fn lock_current(
    cx: &mut Cx,
    t: &TableInfo,
    pk: &[u8],
    row: &mut Row,
    offset: usize,
    recheck: Option<&BExpr>,
) -> Result<bool, SqlError> {
    let width = t.columns.len();
    let Some(stored) = cx.host.get_for_update(&t.indexes[0].iref, pk).map_err(super::host_err)? else {
        return Ok(false);
    };
    let Some(current) = t.row_from_index(0, stored, cx)? else {
        return Ok(false);
    };
    if row.get(offset..offset + width) == Some(&current[..]) {
        return Ok(true);
    }
    row.splice(offset..offset + width, current);
    match recheck {
        Some(p) => Ok(is_true(&p.eval(row, cx)?)),
        None => Ok(true),
    }
}

/// Runs DML rewritten from a view on its base table, which is reached through the
/// view's ownership chain (not checked again).
fn through_view<T>(cx: &mut Cx, f: impl FnOnce(&mut Cx) -> Result<T, SqlError>) -> Result<T, SqlError> {
    cx.view_depth += 1;
    let r = f(cx);
    cx.view_depth -= 1;
    r
}

/// The target of UPDATE/DELETE: with a FROM clause, a one-part name may be an alias
/// defined there.
fn target_with_from(
    cx: &mut Cx,
    target: &DmlTarget,
    from: &[TableWithJoins],
    perm: &str,
) -> Result<Arc<TableInfo>, SqlError> {
    match target {
        DmlTarget::Table { name, .. } if !from.is_empty() && name.parts.len() == 1 => {
            match find_alias_table(cx, from, &name.name().value, perm)? {
                Some(t) => Ok(t),
                None => target_table(cx, target, perm),
            }
        }
        _ => target_table(cx, target, perm),
    }
}

/// The TOP (n) of INSERT/UPDATE/DELETE: a row count (PERCENT is not applied here).
pub(super) fn top_limit(cx: &mut Cx, top: Option<&Top>) -> Result<Option<u64>, SqlError> {
    match top {
        Some(top) => {
            let (v, ty) = super::eval_standalone(cx, &top.quantity)?;
            Ok(Some(super::int_value(&v, &ty)?.max(0) as u64))
        }
        None => Ok(None),
    }
}

/// `0, 1, 2, ...`: the positions of a table's columns when all of them are inserted in
/// order (see [`insert_positions`]).
const IN_ORDER: [usize; 64] = {
    let mut a = [0; 64];
    let mut i = 0;
    while i < a.len() {
        a[i] = i;
        i += 1;
    }
    a
};

/// The columns an INSERT column list names (all insertable ones when empty), as
/// positions in the table (271 for a computed column). All the columns of a table with
/// no identity or computed column are borrowed, not built (each INSERT of a loading
/// script asks).
pub(super) fn insert_positions(
    cx: &Cx,
    t: &TableInfo,
    columns: &[Ident],
) -> Result<std::borrow::Cow<'static, [usize]>, SqlError> {
    if columns.is_empty() {
        let identity_insert = cx.state.identity_insert == Some((t.db, t.object_id));
        let insertable =
            |k: &usize| (!t.columns[*k].is_identity || identity_insert) && t.columns[*k].computed.is_none();
        let n = t.columns.len();
        if n <= IN_ORDER.len() && (0..n).all(|k| insertable(&k)) {
            return Ok(std::borrow::Cow::Borrowed(&IN_ORDER[..n]));
        }
        return Ok((0..n).filter(insertable).collect::<Vec<_>>().into());
    }
    let mut v = Vec::new();
    for c in columns {
        let p = t.column_index(&c.value).ok_or_else(|| errors::invalid_column(&c.value))?;
        if t.columns[p].computed.is_some() {
            return Err(SqlError::new(
                271,
                16,
                1,
                format!("The column \"{}\" cannot be modified because it is either a computed column or is the result of a UNION operator.", c.value),
            ));
        }
        v.push(p);
    }
    Ok(v.into())
}

/// The bound SET list of an UPDATE (or of MERGE's UPDATE action): target columns and
/// variables.
pub(super) struct Sets {
    columns: Vec<(usize, AssignOp, BExpr)>,
    variables: Vec<(String, AssignOp, BExpr)>,
}

/// Binds SET assignments over `scope` (8102 for an identity column, 271 for a computed one).
pub(super) fn bind_assignments(
    b: &mut Binder,
    t: &TableInfo,
    assignments: &[Assignment],
    scope: &Scope,
) -> Result<Sets, SqlError> {
    let mut sets = Sets { columns: Vec::new(), variables: Vec::new() };
    for a in assignments {
        let e = b.bind_expr(&a.value, scope)?;
        match &a.target {
            AssignTarget::Column(c) => {
                let p = t.column_index(&c.name().value).ok_or_else(|| errors::invalid_column(&c.name().value))?;
                if t.columns[p].is_identity {
                    return Err(SqlError::new(
                        8102,
                        16,
                        1,
                        format!("Cannot update identity column '{}'.", t.columns[p].name),
                    ));
                }
                if t.columns[p].computed.is_some() {
                    return Err(SqlError::new(
                        271,
                        16,
                        1,
                        format!("The column \"{}\" cannot be modified because it is either a computed column or is the result of a UNION operator.", t.columns[p].name),
                    ));
                }
                sets.columns.push((p, a.op, e));
            }
            AssignTarget::Variable(v) => sets.variables.push((v.clone(), a.op, e)),
        }
    }
    Ok(sets)
}

impl Sets {
    /// The target columns the SET list assigns.
    pub(super) fn column_positions(&self) -> impl Iterator<Item = usize> + '_ {
        self.columns.iter().map(|(p, _, _)| *p)
    }

    /// The new target row for the combined row `r` whose target columns are `old`;
    /// variables are assigned as a side effect.
    pub(super) fn apply(&self, cx: &mut Cx, t: &TableInfo, r: &Row, old: &Row) -> Result<Row, SqlError> {
        let mut new = old.clone();
        for (p, aop, e) in &self.columns {
            let v = e.eval(r, cx)?;
            let v = match aop.binary_op() {
                None => to_column(t, *p, v, &e.ty())?,
                Some(bop) => {
                    let cty = t.columns[*p].ty;
                    let rty = crate::scalar::ops::binary_type(bop, &cty, &e.ty())?;
                    let x = crate::scalar::ops::binary(bop, &old[*p], &cty, &v, &e.ty(), &rty)?;
                    to_column(t, *p, x, &rty)?
                }
            };
            new[*p] = v;
        }
        for (name, aop, e) in &self.variables {
            let (slot, ty) = cx.lookup_var(name).ok_or_else(|| errors::must_declare(name))?;
            let v = e.eval(r, cx)?;
            let v = super::assign_value(cx, slot, ty, *aop, v, &e.ty())?;
            cx.set_var(slot, v);
        }
        Ok(new)
    }
}

/// Fills in the computed columns of an updated row.
pub(super) fn compute_columns(cx: &mut Cx, t: &TableInfo, new: &mut Row) -> Result<(), SqlError> {
    for (i, c) in t.computed.iter().enumerate() {
        if let Some(e) = c {
            let v = e.eval(new, cx)?;
            new[i] = convert::convert(&v, &e.ty(), &t.columns[i].ty, None)?;
        }
    }
    Ok(())
}

/// Writes an updated row (also one a FOREIGN KEY cascade changes): computed columns,
/// constraints (`stmt` names the statement in their messages), the row, then the rows
/// referencing its old key. As in SQL Server the referencing rows are checked against the
/// table as changed: a cascaded row's own key is there, a SET DEFAULT value must be in
/// the table after the change, and a row referencing itself does not hold up its own
/// change. Returns the row written.
pub(super) fn write_update(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    old: &Row,
    new: Row,
    stmt: &str,
) -> Result<Row, SqlError> {
    write_update_of(cx, t, pk, old, new, stmt, &[])
}

/// [`write_update`] of a row whose columns `assigned` are checked against their foreign
/// keys even when their values did not change.
fn write_update_of(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    old: &Row,
    mut new: Row,
    stmt: &str,
    assigned: &[usize],
) -> Result<Row, SqlError> {
    compute_columns(cx, t, &mut new)?;
    check_row_changed(t, Some((old, assigned)), &new, stmt, cx)?;
    t.update_row(pk, old, &new, cx)?;
    check_referenced(t, old, Some(&new), stmt, cx)?;
    Ok(new)
}

/// Deletes a row, then checks (or cascades to) the rows referencing it; false if it was
/// already gone.
pub(super) fn write_delete(
    cx: &mut Cx,
    t: &Arc<TableInfo>,
    pk: &[u8],
    row: &Row,
    stmt: &str,
) -> Result<bool, SqlError> {
    if !t.delete_row(pk, row, cx)? {
        return Ok(false);
    }
    check_referenced(t, row, None, stmt, cx)?;
    Ok(true)
}

pub fn update(cx: &mut Cx, u: &Update) -> Result<(), SqlError> {
    let touched: Vec<String> = u
        .assignments
        .iter()
        .filter_map(|a| match &a.target {
            AssignTarget::Column(n) => Some(n.name().value.clone()),
            AssignTarget::Variable(_) => None,
        })
        .collect();
    if let Some((cte, alias)) = cte_target(&u.with, &u.target, &u.from) {
        let vb = updatable_cte(cx, cte, Some(&touched), "UPDATE")?;
        return update_through(cx, u, &vb, &alias);
    }
    if u.from.is_empty() {
        if let DmlTarget::Table { name, .. } = &u.target {
            if cx.resolve_table_cached(name)?.is_none() {
                if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Update)? {
                    super::security::check_object(cx, db, &view, "UPDATE")?;
                    return trigger::update_view(cx, u, name, &view, &tr);
                }
            }
        }
        if let Some(vb) = updatable_view(cx, &u.target, "UPDATE", Some(&touched), false)? {
            if vb.needs_rows {
                let alias = target_alias(&u.target);
                return through_view(cx, |cx| update_through(cx, u, &vb, &alias));
            }
            let mut r = u.clone();
            r.target = vb.target(&u.target);
            r.where_clause = vb.where_with_filter(u.where_clause.as_ref())?;
            r.output = vb.base_output(&u.output);
            for a in &mut r.assignments {
                if let AssignTarget::Column(n) = &mut a.target {
                    let b = vb.base_column(&n.name().value)?.ok_or_else(|| errors::invalid_column(&n.name().value))?;
                    n.parts = vec![Ident::new(b)];
                }
                vb.rename(&mut a.value)?;
            }
            return through_view(cx, |cx| update(cx, &r));
        }
    }
    let t = target_with_from(cx, &u.target, &u.from, "UPDATE")?;
    match &u.current_of {
        Some(c) => {
            let pk = positioned(cx, c, &t, &u.from)?;
            update_rows(cx, u, &t, Some(&pk))
        }
        None => update_rows(cx, u, &t, None),
    }
}

/// The locator of the row a positioned UPDATE/DELETE (WHERE CURRENT OF) changes.
fn positioned(cx: &mut Cx, c: &CursorRef, t: &TableInfo, from: &[TableWithJoins]) -> Result<Vec<u8>, SqlError> {
    if !from.is_empty() {
        return Err(errors::not_supported("WHERE CURRENT OF with a FROM clause"));
    }
    super::cursor::current_row(cx, c, t)
}

/// UPDATE of a view or CTE whose rows its query finds (`ViewBase::rows_factor`): the
/// base table's rows behind the rows the query shows under `alias`.
fn update_through(cx: &mut Cx, u: &Update, vb: &ViewBase, alias: &str) -> Result<(), SqlError> {
    let t = vb.base_table(cx, "UPDATE")?;
    let mut r = u.clone();
    r.from = vb.with_rows_in_from(&t, &u.from, alias)?;
    r.target = DmlTarget::Table { name: ObjectName::from_ident(Ident::new(alias)), hints: Vec::new() };
    r.assignments = vb.base_assignments(&u.assignments)?;
    r.output = vb.base_output(&u.output);
    update_rows(cx, &r, &t, None)
}

/// UPDATE of the table `t`, which `u.target` names (or aliases in `u.from`).
fn update_rows(cx: &mut Cx, u: &Update, t: &Arc<TableInfo>, current: Option<&[u8]>) -> Result<(), SqlError> {
    let t = t.clone();
    let (plan, offset, scope, recheck) =
        plan_target_rows(cx, &t, &u.target, &u.from, u.where_clause.as_ref(), &u.with, current)?;
    let width = t.columns.len();
    let sets = {
        let mut b = Binder::new(cx);
        b.push_ctes(&u.with);
        bind_assignments(&mut b, &t, &u.assignments, &scope)?
    };
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Update, &u.output)?;
    let mut outs = bind_output(cx, &t, &u.output, &Scope::default())?;
    let limit = top_limit(cx, u.top.as_ref())?;
    // Read phase.
    let mut op = open(&plan, cx)?;
    let mut seen = HashSet::new();
    let mut changes: Vec<(Vec<u8>, Row, Row)> = Vec::new();
    while let Some(mut r) = op.next(cx)? {
        if limit.is_some_and(|l| changes.len() as u64 >= l) {
            break;
        }
        let Some(Value::Binary(pk)) = r.get(offset + width).cloned() else {
            continue;
        };
        if !seen.insert(pk.clone()) {
            continue;
        }
        if !lock_current(cx, &t, &pk, &mut r, offset, recheck.as_ref())? {
            continue;
        }
        let old: Row = r[offset..offset + width].to_vec();
        let new = sets.apply(cx, &t, &r, &old)?;
        changes.push((pk, old, new));
    }
    drop(op);
    let n = changes.len() as u64;
    let mut kept = trigger::Fired { inserted: Vec::new(), deleted: Vec::new(), updated: None, row_count: n };
    if keep {
        let mut updated = vec![false; width];
        for p in sets.column_positions() {
            updated[p] = true;
        }
        kept.updated = Some(updated);
    }
    if let Some(tr) = &instead {
        // INSTEAD OF: the rows as they would be (computed columns included), unwritten.
        for (_, old, mut new) in changes {
            compute_columns(cx, &t, &mut new)?;
            collect_output(&mut outs, Some(&old), Some(&new), width, &[], cx)?;
            kept.deleted.push(old);
            kept.inserted.push(new);
        }
        flush_output(outs, cx)?;
        trigger::fire_instead(cx, &t, tr, kept)?;
        cx.state.rowcount = n as i64;
        return cx.done(Some(n));
    }
    // Write phase.
    let outer = trigger::begin_cascades(cx);
    for (pk, old, new) in changes {
        let new = write_update(cx, &t, &pk, &old, new, "UPDATE")?;
        collect_output(&mut outs, Some(&old), Some(&new), width, &[], cx)?;
        if keep {
            kept.deleted.push(old);
            kept.inserted.push(new);
        }
    }
    flush_output(outs, cx)?;
    trigger::fire_cascades(cx, outer)?;
    if keep {
        trigger::fire_after(cx, &t, trigger::Event::Update, kept)?;
    }
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

fn find_alias_table(
    cx: &mut Cx,
    from: &[TableWithJoins],
    alias: &str,
    perm: &str,
) -> Result<Option<Arc<TableInfo>>, SqlError> {
    fn visit(f: &TableFactor, alias: &str) -> Option<DmlTarget> {
        match f {
            TableFactor::Table { name, alias: a, .. } => {
                let n = a.as_ref().map(|a| a.value.as_str()).unwrap_or(&name.name().value);
                if n.eq_ignore_ascii_case(alias) {
                    Some(DmlTarget::Table { name: name.clone(), hints: Vec::new() })
                } else {
                    None
                }
            }
            TableFactor::Variable { name, alias: Some(a) } if a.value.eq_ignore_ascii_case(alias) => {
                Some(DmlTarget::Variable(name.clone()))
            }
            TableFactor::NestedJoin(t) => {
                visit(&t.relation, alias).or_else(|| t.joins.iter().find_map(|j| visit(&j.relation, alias)))
            }
            _ => None,
        }
    }
    for twj in from {
        let found = visit(&twj.relation, alias).or_else(|| twj.joins.iter().find_map(|j| visit(&j.relation, alias)));
        if let Some(target) = found {
            return target_table(cx, &target, perm).map(Some);
        }
    }
    Ok(None)
}

pub fn delete(cx: &mut Cx, d: &Delete) -> Result<(), SqlError> {
    if let Some((cte, alias)) = cte_target(&d.with, &d.target, &d.from) {
        let vb = updatable_cte(cx, cte, None, "DELETE")?;
        return delete_through(cx, d, &vb, &alias);
    }
    if d.from.is_empty() {
        if let DmlTarget::Table { name, .. } = &d.target {
            if cx.resolve_table_cached(name)?.is_none() {
                if let Some((db, view, tr)) = trigger::view_instead_of(cx, name, trigger::Event::Delete)? {
                    super::security::check_object(cx, db, &view, "DELETE")?;
                    return trigger::delete_view(cx, d, name, &view, &tr);
                }
            }
        }
        if let Some(vb) = updatable_view(cx, &d.target, "DELETE", None, false)? {
            if vb.needs_rows {
                let alias = target_alias(&d.target);
                return through_view(cx, |cx| delete_through(cx, d, &vb, &alias));
            }
            let mut r = d.clone();
            r.target = vb.target(&d.target);
            r.where_clause = vb.where_with_filter(d.where_clause.as_ref())?;
            r.output = vb.base_output(&d.output);
            return through_view(cx, |cx| delete(cx, &r));
        }
    }
    let t = target_with_from(cx, &d.target, &d.from, "DELETE")?;
    match &d.current_of {
        Some(c) => {
            let pk = positioned(cx, c, &t, &d.from)?;
            delete_rows(cx, d, &t, Some(&pk))
        }
        None => delete_rows(cx, d, &t, None),
    }
}

/// DELETE through a view or CTE whose rows its query finds (see `update_through`).
fn delete_through(cx: &mut Cx, d: &Delete, vb: &ViewBase, alias: &str) -> Result<(), SqlError> {
    let t = vb.base_table(cx, "DELETE")?;
    let mut r = d.clone();
    r.from = vb.with_rows_in_from(&t, &d.from, alias)?;
    r.target = DmlTarget::Table { name: ObjectName::from_ident(Ident::new(alias)), hints: Vec::new() };
    r.output = vb.base_output(&d.output);
    delete_rows(cx, &r, &t, None)
}

/// DELETE from the table `t`, which `d.target` names (or aliases in `d.from`).
fn delete_rows(cx: &mut Cx, d: &Delete, t: &Arc<TableInfo>, current: Option<&[u8]>) -> Result<(), SqlError> {
    let t = t.clone();
    let (plan, offset, _, recheck) =
        plan_target_rows(cx, &t, &d.target, &d.from, d.where_clause.as_ref(), &d.with, current)?;
    let width = t.columns.len();
    let (instead, keep) = statement_triggers(cx, &t, trigger::Event::Delete, &d.output)?;
    let mut kept: Vec<Row> = Vec::new();
    let mut outs = bind_output(cx, &t, &d.output, &Scope::default())?;
    let limit = top_limit(cx, d.top.as_ref())?;
    // Without FROM the plan is a scan of the target itself: each row comes once, and the
    // row is the target's columns followed by the locator, taken as they are.
    let single = d.from.is_empty() && offset == 0;
    // When nothing reads the row's values (no WHERE to evaluate again, no other index
    // whose entry they locate, no foreign key referencing the table, no OUTPUT), the
    // read under a U lock only tells whether the row is still there: the delete's own X
    // lock (waiting for a writer to end first) and its presence check tell the same, and
    // a row gone by then is not counted (seed 002's `DELETE TOP (1000)`: one lock and
    // one lookup per row fewer).
    let values_unread =
        single && recheck.is_none() && t.indexes.len() == 1 && t.referenced_by.is_empty() && outs.is_empty() && !keep;
    let mut deleted = 0u64;
    let outer = trigger::begin_cascades(cx);
    // Each row read is locked and checked again (`lock_current`): one another
    // transaction deleted meanwhile is skipped, and with TOP the scan goes on for the
    // rows still missing, so concurrent DELETE TOP sessions each delete their n rows.
    // A row that still vanishes before our delete reaches it (it cannot while we hold
    // its U lock; kept as a safety net) is not counted, and TOP reads again.
    loop {
        let want = limit.map(|l| l - deleted);
        let mut op = open(&plan, cx)?;
        let mut seen = HashSet::new();
        let mut victims: Vec<(Vec<u8>, Row)> = Vec::new();
        // The limit is checked before asking for a row: the next row may cost a read.
        while !want.is_some_and(|w| victims.len() as u64 >= w) {
            let Some(mut r) = op.next(cx)? else { break };
            if single {
                r.truncate(width + 1);
                let Some(Value::Binary(pk)) = r.pop() else {
                    continue;
                };
                if values_unread || lock_current(cx, &t, &pk, &mut r, 0, recheck.as_ref())? {
                    victims.push((pk, r));
                }
                continue;
            }
            let Some(Value::Binary(pk)) = r.get(offset + width).cloned() else {
                continue;
            };
            if seen.insert(pk.clone()) && lock_current(cx, &t, &pk, &mut r, offset, recheck.as_ref())? {
                victims.push((pk, r[offset..offset + width].to_vec()));
            }
        }
        drop(op);
        let read = victims.len() as u64;
        let mut vanished = 0u64;
        for (pk, row) in &victims {
            if instead.is_some() {
                deleted += 1;
                collect_output(&mut outs, Some(row), None, width, &[], cx)?;
                kept.push(row.clone());
                continue;
            }
            if write_delete(cx, &t, pk, row, "DELETE")? {
                if keep {
                    kept.push(row.clone());
                }
                deleted += 1;
                collect_output(&mut outs, Some(row), None, width, &[], cx)?;
            } else {
                vanished += 1;
            }
        }
        // Again only for TOP, only when rows vanished and the read filled its quota.
        if vanished == 0 || want.map_or(true, |w| read < w) {
            break;
        }
    }
    flush_output(outs, cx)?;
    trigger::fire_cascades(cx, outer)?;
    if keep {
        let f = trigger::Fired { inserted: Vec::new(), deleted: kept, updated: None, row_count: deleted };
        match &instead {
            Some(tr) => trigger::fire_instead(cx, &t, tr, f)?,
            None => trigger::fire_after(cx, &t, trigger::Event::Delete, f)?,
        }
    }
    cx.state.rowcount = deleted as i64;
    cx.done(Some(deleted))
}

/// The triggers a statement on `t` runs: its INSTEAD OF trigger, and whether it must
/// keep the rows it changes (for that trigger or for AFTER triggers). 334 for OUTPUT
/// without INTO on a table with an enabled trigger for `e`.
pub(super) fn statement_triggers(
    cx: &Cx,
    t: &TableInfo,
    e: trigger::Event,
    output: &[OutputClause],
) -> Result<(Option<trigger::TriggerInfo>, bool), SqlError> {
    if t.triggers.is_empty() {
        return Ok((None, false));
    }
    trigger::check_output(t, e, output)?;
    let instead = trigger::instead_of(cx, &t.triggers, e).cloned();
    let keep = instead.is_some() || trigger::has_after(t, e);
    Ok((instead, keep))
}

/// SELECT ... INTO new_table: creates a heap with the query's columns and fills it.
pub fn select_into(cx: &mut Cx, q: &Query, into: &ObjectName) -> Result<(), SqlError> {
    // SELECT INTO creates a table: CREATE TABLE permission in the target's database.
    super::security::check_create(cx, "CREATE TABLE", Some(into))?;
    let mut q2 = q.clone();
    if let SetExpr::Select(s) = &mut q2.body {
        s.into = None;
    }
    let plan = {
        let mut b = Binder::new(cx);
        b.plan_query(&q2)?.0
    };
    let cols = plan.columns();
    let mut elements = Vec::new();
    for (i, c) in cols.iter().enumerate() {
        if c.name.is_empty() {
            return Err(SqlError::new(
                1038,
                15,
                5,
                format!("An object or column name is missing or empty. For SELECT INTO statements, verify each column has a name. For other statements, look for empty alias names. Aliases defined as \"\" or [] are not allowed. Change the alias to a valid name. (column {})", i + 1),
            ));
        }
        let dt = DataType { name: ObjectName::from_ident(Ident::plain(c.ty.name())), args: type_args(&c.ty) };
        elements.push(TableElement::Column(ColumnDef {
            name: Ident::new(c.name.clone()),
            data_type: Some(dt),
            computed: None,
            options: [if c.nullable { ColumnOption::Null } else { ColumnOption::NotNull }]
                .into_iter()
                // The new column keeps the source column's (or expression's) collation,
                // also the default one in a database of another collation (None is
                // SQL_Latin1_General_CP1_CI_AS, not "the database's").
                .chain(
                    c.ty.is_character()
                        .then(|| ColumnOption::Collate(Ident::new(c.collation.unwrap_or_default().name()))),
                )
                .collect(),
        }));
    }
    let ct = CreateTable { name: into.clone(), elements, on: None, textimage_on: None, options: Vec::new() };
    let t = super::ddl::create_table(cx, &ct)?;
    // Streamed: the query cannot read the table it creates, so nothing is held in memory.
    let mut op = open(&plan, cx)?;
    let positions: Vec<usize> = (0..cols.len()).collect();
    let tys: Vec<SqlType> = cols.iter().map(|c| c.ty).collect();
    let mut n = 0u64;
    while let Some(r) = op.next(cx)? {
        insert_values(cx, &t, &positions, r, &tys)?;
        n += 1;
    }
    cx.state.rowcount = n as i64;
    cx.done(Some(n))
}

fn type_args(ty: &SqlType) -> Vec<types::TypeArg> {
    use types::{Length, TypeArg};
    match *ty {
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            vec![TypeArg::Num(i64::from(precision)), TypeArg::Num(i64::from(scale))]
        }
        SqlType::Char { len } | SqlType::NChar { len } | SqlType::Binary { len } => vec![TypeArg::Num(i64::from(len))],
        SqlType::VarChar { len } | SqlType::NVarChar { len } | SqlType::VarBinary { len } => match len {
            Length::Max => vec![TypeArg::Max],
            Length::Bounded(n) => vec![TypeArg::Num(i64::from(n))],
        },
        SqlType::Time { scale } | SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => {
            vec![TypeArg::Num(i64::from(scale))]
        }
        _ => Vec::new(),
    }
}

#[allow(dead_code)]
fn _unused(_: &dyn Fn(&Row) -> bool) -> bool {
    is_true(&Value::Null)
}
