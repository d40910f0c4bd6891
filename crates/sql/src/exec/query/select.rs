//! Planning queries: WITH, set operators, SELECT (FROM, WHERE, GROUP BY, HAVING,
//! windows, ORDER BY, TOP, DISTINCT), derived tables, CTEs (recursive too) and table
//! functions, as the binder's second half.

use super::*;

impl<'b, 'c> Binder<'b, 'c> {
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
                super::super::forclause::plan_for(self, fc, select, r?.0)
            }
            _ => r,
        }
    }

    pub(super) fn plan_query_body(&mut self, q: &Query) -> Result<(Plan, Vec<OutCol>), SqlError> {
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

    pub(super) fn plan_set_expr(&mut self, s: &SetExpr) -> Result<Plan, SqlError> {
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
    pub(super) fn bind_select_parts(
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
    pub(super) fn plan_from_items(&mut self, from: &[TableWithJoins]) -> Result<Vec<(Plan, Scope)>, SqlError> {
        from.iter().map(|twj| self.plan_table_with_joins(twj, None)).collect()
    }

    pub(in crate::exec) fn plan_table_with_joins(
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
                (super::super::index_spool::decorrelate(rp), rs)
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
    pub(super) fn plan_factor(
        &mut self,
        f: &TableFactor,
        apply_left: Option<&Scope>,
    ) -> Result<(Plan, Scope), SqlError> {
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
                let firing = self.cx.frames.last().and_then(|f| f.trigger.as_ref());
                if let Some((rows, cols)) = firing.and_then(|t| t.pseudo_table(name)) {
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
                    rename_columns(&mut cols, &a.columns, &a.name.value)?;
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
                    rename_columns(&mut cols, &a.columns, &a.name.value)?;
                }
                Ok((Plan::Values { rows: bound, cols: cols.clone() }, Scope::from_cols(alias_name.as_deref(), &cols)))
            }
            TableFactor::Function { name, args, alias } => {
                let alias_name =
                    alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| name.name().value.clone());
                let (plan, mut cols) = self.plan_table_function(name, args)?;
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns, &a.name.value)?;
                }
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(&alias_name), &cols)))
            }
            TableFactor::OpenJson { args, schema, alias } => {
                let alias_name = alias.as_ref().map_or_else(|| "OPENJSON".to_string(), |a| a.name.value.clone());
                let (plan, mut cols) = super::super::openjson::plan(self, args, schema.as_deref())?;
                if let Some(a) = alias {
                    rename_columns(&mut cols, &a.columns, &a.name.value)?;
                }
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(&alias_name), &cols)))
            }
            TableFactor::XmlNodes { target, args, alias } => super::super::xml::plan_nodes(self, target, args, alias),
            TableFactor::NestedJoin(t) => self.plan_table_with_joins(t, None),
            TableFactor::Pivot { source, aggregate, value, column, values, alias } => {
                super::super::pivot::plan_pivot(self, source, aggregate, value, column, values, alias)
            }
            TableFactor::Unpivot { source, value, name, columns, alias } => {
                super::super::pivot::plan_unpivot(self, source, value, name, columns, alias)
            }
        }
    }

    pub(super) fn plan_cte(&mut self, def: CteDef, alias: &str) -> Result<(Plan, Scope), SqlError> {
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
                rename_columns(&mut cols, &cte.columns, &cte.name.value)?;
                let plan = with_names(plan, &cols);
                Ok((plan, Scope::from_cols(Some(alias), &cols)))
            }
        }
    }

    pub(super) fn plan_recursive_cte(&mut self, cte: &Cte, name: &str) -> Result<(Plan, Vec<OutCol>), SqlError> {
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
        rename_columns(&mut cols, &cte.columns, &cte.name.value)?;
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

    pub(super) fn plan_table_function(
        &mut self,
        name: &ObjectName,
        args: &[Expr],
    ) -> Result<(Plan, Vec<OutCol>), SqlError> {
        let fname = name.name().value.to_ascii_lowercase();
        // Built-in table functions.
        if name.parts.len() == 1 || name.schema().is_some_and(|s| s.eq_ignore_case("sys")) {
            if let Some(r) = self.builtin_table_function(&fname, args)? {
                return Ok(r);
            }
        }
        let (db, obj) = self.cx.resolve_object(name)?.ok_or_else(|| errors::invalid_object(&errors::written(name)))?;
        if let crate::catalog::ObjectBody::TableFunction(_) = &obj.body {
            return self.plan_function_call(db, &obj, name, args);
        }
        let crate::catalog::ObjectBody::InlineFunction(m) = &obj.body else {
            return Err(SqlError::new(
                215,
                16,
                1,
                format!("Parameters supplied for object '{}' which is not a function.", name.name().value),
            ));
        };
        let def = super::super::base::parse_module(&m.definition)?;
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

pub(super) enum OrderKey {
    Position(usize),
    Expr(BExpr),
}

/// Renames a plan's output columns (derived table and CTE column lists).
/// Joins FROM items left to right with cross joins (the written order).
pub(super) fn cross_all(leaves: Vec<(Plan, Scope)>) -> Result<(Plan, Scope), SqlError> {
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

pub(super) fn with_names(plan: Plan, cols: &[OutCol]) -> Plan {
    let width = cols.len();
    let exprs: Vec<BExpr> = (0..width).map(|i| BExpr::Col(i, cols[i].ty)).collect();
    if plan.columns().iter().map(|c| &c.name).eq(cols.iter().map(|c| &c.name)) {
        return plan;
    }
    Plan::Project { input: Box::new(plan), exprs, cols: cols.to_vec() }
}

/// Gives `cols` the names of a derived table's or CTE's column list (`owner` names it):
/// 8158 when the query has more columns than the list, 8159 when it has fewer.
pub(super) fn rename_columns(cols: &mut [OutCol], names: &[Ident], owner: &str) -> Result<(), SqlError> {
    if names.is_empty() {
        return Ok(());
    }
    if names.len() != cols.len() {
        let (number, what) = if cols.len() > names.len() { (8158, "more") } else { (8159, "fewer") };
        return Err(SqlError::new(
            number,
            16,
            1,
            format!("'{owner}' has {what} columns than were specified in the column list."),
        ));
    }
    for (c, n) in cols.iter_mut().zip(names) {
        c.name = n.value.clone();
    }
    Ok(())
}

pub(super) fn query_references(q: &Query, name: &str) -> bool {
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
pub(super) fn null_literal_columns(s: &SetExpr) -> Vec<bool> {
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
