//! Updatable views and CTEs as INSERT, UPDATE and DELETE targets: SQL Server's rules for
//! which views can be changed, and the base table rows behind the view's rows.

use super::*;

/// An updatable view or CTE as a DML target: one base table, columns that are bare
/// (possibly renamed) base columns or derived ones (which cannot be assigned), and the
/// query that shows the rows (SQL Server's rules for updatable views; WITH CHECK OPTION
/// is enforced by [`with_check_option`]).
pub(super) struct ViewBase {
    pub(super) base: DmlTarget,
    /// The base table's name in the query's FROM (its alias, if it has one).
    pub(super) exposed: String,
    /// (view column, base column; empty when the view computes it).
    pub(super) columns: Vec<(String, String)>,
    /// The query's WHERE over base columns, when the query is a plain filter of its base
    /// table (`query` is then not needed to find the rows).
    pub(super) filter: Option<Expr>,
    /// Whether the rows must be found by running `query` (TOP, ORDER BY, window
    /// functions: the query is more than a filter); always for a CTE.
    pub(super) needs_rows: bool,
    pub(super) query: Query,
    pub(super) view: String,
    /// The view was created WITH CHECK OPTION: rows it writes must satisfy `filter`.
    pub(super) check_option: bool,
    /// The query's one source is a view whose rows it runs (a CTE over a view): that
    /// view as a DML target, whose rows query stands in for it in `query`'s FROM.
    pub(super) inner: Option<Box<ViewBase>>,
}

/// The view `target` names, when it is a view (errors 4403/4405 when it cannot be
/// changed). `rows`: its rows will be found by running its query (it stands in a CTE's
/// or another view's rows query).
pub(super) fn updatable_view(
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
    super::super::security::check_object(cx, db, &o, perm)?;
    let def = super::super::base::parse_module(&m.definition)?;
    let StatementKind::CreateView(v) = def.kind else {
        return Ok(None);
    };
    if db != cx.state.database {
        return Err(errors::not_supported("Modifying data through a view in another database"));
    }
    let mut vb = updatable_query(cx, &o.name, &v.query, &v.columns, touched, perm, rows)?;
    vb.check_option = v.check_option;
    Ok(Some(vb))
}

/// Runs INSERT or UPDATE through `vb`: for a view WITH CHECK OPTION, every row written to
/// its base table must satisfy the view's WHERE (550, checked with the base table's
/// CHECK constraints). A view whose rows come from more than a filter (TOP, ORDER BY)
/// is not checked.
pub(super) fn with_check_option<T>(
    cx: &mut Cx,
    vb: &ViewBase,
    f: impl FnOnce(&mut Cx) -> Result<T, SqlError>,
) -> Result<T, SqlError> {
    let (true, Some(filter), DmlTarget::Table { name, .. }) = (vb.check_option, &vb.filter, &vb.base) else {
        return f(cx);
    };
    let Some(base) = cx.resolve_table_cached(name)? else {
        return f(cx);
    };
    let t = base.info.clone();
    let check = {
        let mut b = Binder::new(cx);
        b.bind_expr(filter, &Scope::from_cols(Some(&vb.exposed), &t.out_cols()))?
    };
    cx.view_checks.push(ViewCheck { db: t.db, object_id: t.object_id, check });
    let r = f(cx);
    cx.view_checks.pop();
    r
}

/// A view's WHERE that rows written to its base table must satisfy (WITH CHECK OPTION).
pub struct ViewCheck {
    pub db: i16,
    pub object_id: i32,
    pub check: BExpr,
}

/// The CTE of `with` that a DML target names: the target itself (`WITH d AS (...) DELETE
/// FROM d`), or an alias in FROM of a CTE (`UPDATE x ... FROM d AS x JOIN ...`). A CTE
/// hides a table of the same one-part name. Returns the CTE and its exposed name.
pub(super) fn cte_target<'a>(
    with: &'a [Cte],
    target: &DmlTarget,
    from: &[TableWithJoins],
) -> Option<(&'a Cte, String)> {
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

/// The CTE `cte` as a DML target (4403/4405/4406 as for a view, which SQL Server also
/// names them).
pub(super) fn updatable_cte(
    cx: &mut Cx,
    cte: &Cte,
    touched: Option<&[String]>,
    perm: &str,
) -> Result<ViewBase, SqlError> {
    updatable_query(cx, &cte.name.value, &cte.query, &cte.columns, touched, perm, true)
}

/// Whether the view or CTE `name` defined by `query` (with the column names `names`, if
/// any) can be the target of DML, and how its columns map to its base table's. Its
/// FROM may join several tables when the statement changes columns of one of them:
/// `touched` names the columns an UPDATE or INSERT changes (empty: all of them), None
/// for DELETE (which needs a single table). `cte`: the rows are always found by running
/// the query (`needs_rows`); `perm` is checked on a view the query reads from.
pub(super) fn updatable_query(
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
        SelectItem::Expr { expr, .. } | SelectItem::Assign { expr, .. } => {
            super::super::query::contains_aggregate(expr)
        }
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
        SelectItem::Expr { expr, .. } => super::super::query::contains_window(expr),
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
        super::super::query::walk_expr_mut(f, &mut |e| {
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
    Ok(ViewBase {
        base,
        exposed,
        columns,
        filter,
        needs_rows,
        query: query.clone(),
        view: name.to_string(),
        inner,
        check_option: false,
    })
}

/// The columns of the one view a query reads that the query's columns `wanted` show
/// (names as the query shows them, `names` its column list if any): what an UPDATE or
/// INSERT through the query changes in the view. A name `*` passes on as it is.
pub(super) fn view_columns_named(sel: &Select, names: &[Ident], wanted: &[String]) -> Vec<String> {
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
    pub(super) fn base_column(&self, view_col: &str) -> Result<Option<String>, SqlError> {
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
    pub(super) fn rename(&self, e: &mut Expr) -> Result<(), SqlError> {
        let mut err = None;
        super::super::query::walk_expr_mut(e, &mut |x| {
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

    pub(super) fn target(&self, old: &DmlTarget) -> DmlTarget {
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
    pub(super) fn rows_factor(&self, t: &TableInfo, alias: &str) -> Result<TableFactor, SqlError> {
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
    pub(super) fn base_table(&self, cx: &mut Cx, perm: &str) -> Result<Arc<TableInfo>, SqlError> {
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
    pub(super) fn with_rows_in_from(
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
    pub(super) fn base_output(&self, clauses: &[OutputClause]) -> Vec<OutputClause> {
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
                super::super::query::walk_expr_mut(expr, &mut |x| {
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
    pub(super) fn base_assignments(&self, assignments: &[Assignment]) -> Result<Vec<Assignment>, SqlError> {
        let mut v = assignments.to_vec();
        for a in &mut v {
            if let AssignTarget::Column(n) = &mut a.target {
                let b = self.base_column(&n.name().value)?.ok_or_else(|| errors::invalid_column(&n.name().value))?;
                n.parts = vec![Ident::new(b)];
            }
        }
        Ok(v)
    }

    pub(super) fn where_with_filter(&self, w: Option<&Expr>) -> Result<Option<Expr>, SqlError> {
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
