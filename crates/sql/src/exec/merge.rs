//! MERGE: the target joined with the source on the ON condition, then per joined row the
//! first WHEN clause of its kind (matched, not matched by target, not matched by source)
//! whose AND condition holds.
//!
//! The join is the target's scan (with its locator) against the source (with a marker
//! column that tells a source row from the NULLs of an outer join): inner when only
//! WHEN MATCHED is written, a right join with WHEN NOT MATCHED [BY TARGET], a left join
//! with WHEN NOT MATCHED BY SOURCE, a full join with both. As UPDATE and DELETE do, every
//! action is decided while reading (each target row read again under a U lock,
//! `dml::lock_current`) and applied afterwards, through the same row writers. A target
//! row that two source rows would update or delete is Msg 8672.

use std::collections::HashSet;
use std::sync::Arc;

use types::{Length, SqlError, SqlType, Value};

use super::context::Cx;
use super::dml::{self, Sets};
use super::expr::{is_true, BExpr, Row};
use super::plan::{open, OutCol, Plan, ScanNode};
use super::query::{Binder, Scope, ScopeCol};
use super::table::TableInfo;
use super::{errors, trigger};
use crate::ast::*;
use crate::scalar::convert;

/// The hidden column that marks a joined row as having a source row.
const SOURCE_MARKER: &str = "%%merge_source%%";

enum BoundAction {
    Update(Sets),
    Delete,
    /// Target positions and the values (None: DEFAULT).
    Insert(Vec<usize>, Vec<Option<BExpr>>),
}

struct BoundClause {
    when: MergeWhen,
    condition: Option<BExpr>,
    action: BoundAction,
}

/// One change decided in the read phase.
enum Change {
    Insert { values: Row, types: Vec<SqlType>, positions: Vec<usize> },
    Update { pk: Vec<u8>, old: Row, new: Row },
    Delete { pk: Vec<u8>, old: Row },
}

fn same_row_twice() -> SqlError {
    SqlError::new(
        8672,
        16,
        1,
        "The MERGE statement attempted to UPDATE or DELETE the same row more than once. This happens when a target row matches more than one source row. A MERGE statement cannot UPDATE/DELETE the same row of the target table multiple times. Refine the ON clause to ensure a target row matches at most one source row, or use the GROUP BY clause to group the source rows.",
    )
}

/// A copy of `scope` in which the columns in `range` cannot be named: WHEN NOT MATCHED
/// [BY TARGET] sees only the source, WHEN NOT MATCHED BY SOURCE only the target.
fn hide(scope: &Scope, range: std::ops::Range<usize>) -> Scope {
    let mut s = scope.clone();
    for c in &mut s.cols[range] {
        c.table = None;
        c.name = String::new();
    }
    s
}

/// Binds an expression of a WHEN clause over its restricted scope. A name that only the
/// hidden side has is Msg 5333/5334, as in SQL Server, rather than a plain 4104/207.
fn bind_in_clause(
    b: &mut Binder,
    e: &Expr,
    clause_scope: &Scope,
    full: &Scope,
    when: MergeWhen,
) -> Result<BExpr, SqlError> {
    let err = match b.bind_expr(e, clause_scope) {
        Ok(x) => return Ok(x),
        Err(err) if matches!(err.number, 207 | 4104) && when != MergeWhen::Matched => err,
        Err(err) => return Err(err),
    };
    let mut names = Vec::new();
    super::query::walk_expr(e, &mut |x| {
        if let ExprKind::Column(n) = &x.kind {
            let written = n.parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join(".");
            names.push((x.clone(), written));
        }
    });
    for (col, written) in names {
        if b.bind_expr(&col, clause_scope).is_err() && b.bind_expr(&col, full).is_ok() {
            let (number, allowed) = match when {
                MergeWhen::NotMatchedBySource => {
                    (5334, "Only target columns and columns in the clause scope are allowed in the 'WHEN NOT MATCHED BY SOURCE' clause of a MERGE statement.")
                }
                _ => (5333, "Only source columns are allowed in the 'WHEN NOT MATCHED' clause of a MERGE statement."),
            };
            return Err(SqlError::new(number, 16, 1, format!("The identifier '{written}' cannot be bound. {allowed}")));
        }
    }
    Err(err)
}

pub fn merge(cx: &mut Cx, m: &Merge) -> Result<(), SqlError> {
    // The target needs the permission of every action written.
    let mut t: Option<Arc<TableInfo>> = None;
    for perm in ["INSERT", "UPDATE", "DELETE"] {
        let used = m.clauses.iter().any(|c| match c.action {
            MergeAction::Insert { .. } => perm == "INSERT",
            MergeAction::Update(_) => perm == "UPDATE",
            MergeAction::Delete => perm == "DELETE",
        });
        if used {
            t = Some(dml::target_table(cx, &m.target, perm)?);
        }
    }
    let Some(t) = t else {
        return Err(errors::not_supported("MERGE without a WHEN clause"));
    };
    let width = t.columns.len();
    let target_alias = match (&m.alias, &m.target) {
        (Some(a), _) => a.value.clone(),
        (None, DmlTarget::Table { name, .. }) => name.name().value.clone(),
        (None, DmlTarget::Variable(v)) => v.clone(),
    };
    let has = |w: MergeWhen| m.clauses.iter().any(|c| c.when == w);
    let kind = match (has(MergeWhen::NotMatchedByTarget), has(MergeWhen::NotMatchedBySource)) {
        (false, false) => JoinKind::Inner,
        (true, false) => JoinKind::RightOuter,
        (false, true) => JoinKind::LeftOuter,
        (true, true) => JoinKind::FullOuter,
    };

    // Bind the join, the clauses and the OUTPUT's extra columns with one binder, so the
    // WITH clause is visible to all of them.
    let (plan, on, clauses, source_scope, marker) = {
        let mut b = Binder::new(cx);
        b.push_ctes(&m.with);
        let mut tcols = t.out_cols();
        tcols.push(OutCol::new("%%physloc%%", SqlType::VarBinary { len: Length::Bounded(900) }, false));
        let target_plan = Plan::Scan(ScanNode::all_with_locator(&t));
        let (source_plan, source_scope) = b.plan_from(std::slice::from_ref(&m.source))?;
        let mut scols = source_plan.columns();
        let mut exprs: Vec<BExpr> = scols.iter().enumerate().map(|(i, c)| BExpr::Col(i, c.ty)).collect();
        exprs.push(BExpr::Const(Value::Int(1), SqlType::Int));
        scols.push(OutCol::new(SOURCE_MARKER, SqlType::Int, true));
        let source_plan = Plan::Project { input: Box::new(source_plan), exprs, cols: scols.clone() };

        let mut scope = Scope::from_cols(Some(&target_alias), &tcols);
        scope.cols.extend(source_scope.cols.iter().cloned());
        let marker = scope.cols.len();
        scope.cols.push(ScopeCol {
            table: None,
            name: SOURCE_MARKER.into(),
            ty: SqlType::Int,
            nullable: true,
            exposed: None,
            collation: None,
        });
        let on = b.bind_expr(&m.on, &scope)?;
        let mut cols = tcols;
        cols.extend(scols);
        let plan = super::query::make_join(target_plan, source_plan, kind, Some(on.clone()), cols, width + 1, None)?;

        let mut clauses = Vec::new();
        for c in &m.clauses {
            let cscope = match c.when {
                MergeWhen::Matched => scope.clone(),
                MergeWhen::NotMatchedByTarget => hide(&scope, 0..width + 1),
                MergeWhen::NotMatchedBySource => hide(&scope, width + 1..marker),
            };
            let condition = match &c.condition {
                Some(e) => Some(bind_in_clause(&mut b, e, &cscope, &scope, c.when)?),
                None => None,
            };
            let action = match &c.action {
                MergeAction::Update(a) => {
                    for x in a {
                        bind_in_clause(&mut b, &x.value, &cscope, &scope, c.when)?;
                    }
                    BoundAction::Update(dml::bind_assignments(&mut b, &t, a, &cscope)?)
                }
                MergeAction::Delete => BoundAction::Delete,
                MergeAction::Insert { columns, values } => {
                    let positions = match values {
                        Some(_) => dml::insert_positions(b.cx, &t, columns)?.into_owned(),
                        None => Vec::new(),
                    };
                    let values = values.as_deref().unwrap_or(&[]);
                    if values.len() != positions.len() {
                        return Err(if columns.is_empty() {
                            errors::column_count_mismatch()
                        } else {
                            errors::insert_count_mismatch(positions.len() > values.len())
                        });
                    }
                    let mut bound = Vec::with_capacity(values.len());
                    for v in values {
                        bound.push(match v.kind {
                            ExprKind::Default => None,
                            _ => Some(bind_in_clause(&mut b, v, &cscope, &scope, c.when)?),
                        });
                    }
                    BoundAction::Insert(positions, bound)
                }
            };
            clauses.push(BoundClause { when: c.when, condition, action });
        }
        (plan, on, clauses, source_scope, marker)
    };

    // OUTPUT rows carry $action and the source's columns after inserted.*.
    let mut extra = Scope::default();
    extra.cols.push(ScopeCol {
        table: None,
        name: "$action".into(),
        ty: SqlType::NVarChar { len: Length::Bounded(10) },
        nullable: false,
        exposed: None,
        collation: None,
    });
    extra.cols.extend(source_scope.cols.iter().cloned());
    let mut outs = dml::bind_output(cx, &t, &m.output, &extra)?;
    let top = match &m.top {
        Some(top) => {
            let (v, ty) = super::run::eval_standalone(cx, &top.quantity)?;
            if top.percent {
                let p = match convert::convert(&v, &ty, &SqlType::Float, None)? {
                    Value::Float(f) => f,
                    _ => 0.0,
                };
                if !(0.0..=100.0).contains(&p) {
                    return Err(SqlError::new(1031, 16, 1, "Percent values must be between 0 and 100."));
                }
                Some((p, true))
            } else {
                Some((super::run::int_value(&v, &ty)?.max(0) as f64, false))
            }
        }
        None => None,
    };

    let mut triggers = MergeTriggers::new(cx, &t, m, &clauses)?;

    // Read phase: decide every row's action.
    let source_start = width + 1;
    let mut changes: Vec<(Change, Row)> = Vec::new();
    let mut acted: HashSet<Vec<u8>> = HashSet::new();
    let mut op = open(&plan, cx)?;
    while let Some(mut r) = op.next(cx)? {
        let target_pk = match r.get(width) {
            Some(Value::Binary(pk)) => Some(pk.clone()),
            _ => None,
        };
        let has_source = r.get(marker).is_some_and(|v| !v.is_null());
        let when = match (&target_pk, has_source) {
            (Some(_), true) => MergeWhen::Matched,
            (Some(_), false) => MergeWhen::NotMatchedBySource,
            (None, true) => MergeWhen::NotMatchedByTarget,
            (None, false) => continue,
        };
        if !clauses.iter().any(|c| c.when == when) {
            continue;
        }
        if let Some(pk) = &target_pk {
            // The row as it is now, under a U lock; a matched row that no longer meets
            // the ON condition is left alone.
            let recheck = if when == MergeWhen::Matched { Some(&on) } else { None };
            if !dml::lock_current(cx, &t, pk, &mut r, 0, recheck)? {
                continue;
            }
        }
        let mut chosen = None;
        for c in clauses.iter().filter(|c| c.when == when) {
            let applies = match &c.condition {
                Some(p) => is_true(&p.eval(&r, cx)?),
                None => true,
            };
            if applies {
                chosen = Some(c);
                break;
            }
        }
        let Some(c) = chosen else { continue };
        let source: Row = r.get(source_start..marker).map(<[Value]>::to_vec).unwrap_or_default();
        let change = match (&c.action, target_pk) {
            (BoundAction::Update(sets), Some(pk)) => {
                if !acted.insert(pk.clone()) {
                    return Err(same_row_twice());
                }
                let old: Row = r[..width].to_vec();
                let new = sets.apply(cx, &t, &r, &old)?;
                Change::Update { pk, old, new }
            }
            (BoundAction::Delete, Some(pk)) => {
                if !acted.insert(pk.clone()) {
                    return Err(same_row_twice());
                }
                Change::Delete { pk, old: r[..width].to_vec() }
            }
            (BoundAction::Insert(positions, values), None) => {
                let mut vals = Vec::with_capacity(values.len());
                let mut types = Vec::with_capacity(values.len());
                for v in values {
                    match v {
                        // insert_values' marker for a column's default.
                        None => {
                            vals.push(dml::default_marker());
                            types.push(SqlType::Int);
                        }
                        Some(e) => {
                            vals.push(e.eval(&r, cx)?);
                            types.push(e.ty());
                        }
                    }
                }
                Change::Insert { values: vals, types, positions: positions.clone() }
            }
            // The clause kinds and the join sides agree by construction.
            _ => continue,
        };
        changes.push((change, source));
    }
    drop(op);
    // TOP limits the rows acted on, after the join (PERCENT rounds up).
    if let Some((n, percent)) = top {
        let keep = if percent { (changes.len() as f64 * n / 100.0).ceil() as usize } else { n as usize };
        changes.truncate(keep);
    }

    // Write phase (with INSTEAD OF triggers: the rows as they would be, unwritten).
    let action_value = |s: &str| Value::String(s.to_string());
    let mut count = 0u64;
    let outer = trigger::begin_cascades(cx);
    for (change, source) in changes {
        let mut extra_row = Vec::with_capacity(source.len() + 1);
        match change {
            Change::Insert { values, types, positions } => {
                let row = if triggers.instead {
                    dml::would_insert(cx, &t, &positions, values, &types)?
                } else {
                    dml::insert_values_as(cx, &t, &positions, values, &types, "MERGE")?
                };
                extra_row.push(action_value("INSERT"));
                extra_row.extend(source);
                dml::collect_output(&mut outs, None, Some(&row), width, &extra_row, cx)?;
                triggers.keep(trigger::Event::Insert, None, Some(row));
            }
            Change::Update { pk, old, mut new } => {
                if triggers.instead {
                    dml::compute_columns(cx, &t, &mut new)?;
                } else {
                    new = dml::write_update(cx, &t, &pk, &old, new, "MERGE")?;
                }
                extra_row.push(action_value("UPDATE"));
                extra_row.extend(source);
                dml::collect_output(&mut outs, Some(&old), Some(&new), width, &extra_row, cx)?;
                triggers.keep(trigger::Event::Update, Some(old), Some(new));
            }
            Change::Delete { pk, old } => {
                if !triggers.instead && !dml::write_delete(cx, &t, &pk, &old, "MERGE")? {
                    continue;
                }
                extra_row.push(action_value("DELETE"));
                extra_row.extend(source);
                dml::collect_output(&mut outs, Some(&old), None, width, &extra_row, cx)?;
                triggers.keep(trigger::Event::Delete, Some(old), None);
            }
        }
        count += 1;
    }
    dml::flush_output(outs, cx)?;
    trigger::fire_cascades(cx, outer)?;
    triggers.fire(cx, &t, count)?;
    cx.state.rowcount = count as i64;
    cx.done(Some(count))
}

/// The triggers a MERGE runs: for each action written in its WHEN clauses, the
/// target's triggers for that action fire once after all rows are written (also when
/// the action changed no row), with `inserted`/`deleted` holding that action's rows, as
/// SQL Server does. With INSTEAD OF triggers (then one for every action written, else
/// 5316) nothing is written and they get the would-be rows.
struct MergeTriggers {
    /// Per action written (insert, update, delete): the rows to hand over, when a
    /// trigger wants them.
    actions: Vec<(trigger::Event, Option<trigger::TriggerInfo>, trigger::Fired)>,
    instead: bool,
}

impl MergeTriggers {
    fn new(cx: &Cx, t: &TableInfo, m: &Merge, clauses: &[BoundClause]) -> Result<MergeTriggers, SqlError> {
        let mut actions = Vec::new();
        let mut updated = vec![false; t.columns.len()];
        for c in clauses {
            if let BoundAction::Update(sets) = &c.action {
                for p in sets.column_positions() {
                    updated[p] = true;
                }
            }
        }
        for (e, written) in [
            (trigger::Event::Insert, clauses.iter().any(|c| matches!(c.action, BoundAction::Insert(..)))),
            (trigger::Event::Update, clauses.iter().any(|c| matches!(c.action, BoundAction::Update(_)))),
            (trigger::Event::Delete, clauses.iter().any(|c| matches!(c.action, BoundAction::Delete))),
        ] {
            if !written {
                continue;
            }
            let (instead, keep) = dml::statement_triggers(cx, t, e, &m.output)?;
            if keep {
                let updated = (e == trigger::Event::Update).then(|| updated.clone());
                let f = trigger::Fired { inserted: Vec::new(), deleted: Vec::new(), updated, row_count: 0 };
                actions.push((e, instead, f));
            }
        }
        let with_instead = actions.iter().filter(|a| a.1.is_some()).count();
        if with_instead > 0 && (with_instead < actions.len() || actions.len() < written_actions(clauses)) {
            return Err(SqlError::new(
                5316,
                16,
                1,
                format!("The target '{}' of the MERGE statement has an INSTEAD OF trigger on some, but not all, of the actions specified in the MERGE statement. In a MERGE statement, if any action has an enabled INSTEAD OF trigger on the target, then all actions must have enabled INSTEAD OF triggers.", t.display_name),
            ));
        }
        Ok(MergeTriggers { actions, instead: with_instead > 0 })
    }

    /// Keeps a changed row for the triggers of its action.
    fn keep(&mut self, e: trigger::Event, old: Option<Row>, new: Option<Row>) {
        if let Some((_, _, f)) = self.actions.iter_mut().find(|a| a.0 == e) {
            f.deleted.extend(old);
            f.inserted.extend(new);
        }
    }

    fn fire(self, cx: &mut Cx, t: &TableInfo, count: u64) -> Result<(), SqlError> {
        for (e, instead, mut f) in self.actions {
            f.row_count = count;
            match &instead {
                Some(tr) => trigger::fire_instead(cx, t, tr, f)?,
                None => trigger::fire_after(cx, t, e, f)?,
            }
        }
        Ok(())
    }
}

/// How many of INSERT, UPDATE and DELETE the WHEN clauses name.
fn written_actions(clauses: &[BoundClause]) -> usize {
    [
        clauses.iter().any(|c| matches!(c.action, BoundAction::Insert(..))),
        clauses.iter().any(|c| matches!(c.action, BoundAction::Update(_))),
        clauses.iter().any(|c| matches!(c.action, BoundAction::Delete)),
    ]
    .iter()
    .filter(|w| **w)
    .count()
}
