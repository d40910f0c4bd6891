//! Join planning: the greedy join order of a FROM list, equi-joins as hash, merge or
//! index nested-loop joins, predicate push-down and index choice.

use super::*;

/// Join order for a FROM list of three or more items with WHERE conjuncts. Without
/// statistics the order is chosen greedily: start from the item with the most selective
/// local filter (an equality with a constant, then any filter), then repeatedly add an
/// item linked to the joined ones by an equality (filtered items first), so that cross
/// products only happen when the query asks for them. Each step is a hash join on the
/// linking equalities (built on the new item). The result is projected back to the
/// written column order, so the scope and every bound expression stay valid.
pub(super) fn reorder_joins(leaves: Vec<Plan>, cs: Vec<BExpr>, cx: &mut Cx) -> Result<Plan, SqlError> {
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

/// Builds a join, turning equality predicates between the sides into hash keys.
pub(in crate::exec) fn make_join(
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
pub(super) struct EquiJoin {
    pub(super) left: Plan,
    pub(super) right: Plan,
    pub(super) kind: JoinKind,
    pub(super) left_keys: Vec<BExpr>,
    pub(super) right_keys: Vec<BExpr>,
    pub(super) key_types: Vec<SqlType>,
    pub(super) residual: Vec<BExpr>,
    pub(super) cols: Vec<OutCol>,
    /// The HASH join hint.
    pub(super) hash_only: bool,
}

/// At most this many estimated outer rows make index nested loops the choice: a seek
/// through the host costs about 6,300 instructions, the hash join's build about 1,000
/// per row of the other input, whose size the planner does not know.
pub(super) const INDEX_JOIN_MAX_OUTER: u64 = 16;

/// Chooses how an equi-join runs (docs/architecture.md, "Join strategy"): index nested
/// loops when one input is estimated at a few rows and the other is a table seekable by
/// its join key; a merge join when both inputs come in order of one integer key; else a
/// hash join, building on the input estimated smaller. An inner join may swap its
/// inputs (a projection puts the columns back in the written order).
pub(super) fn equi_join(j: EquiJoin) -> Plan {
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

pub(super) fn hash_join(j: EquiJoin) -> Plan {
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
pub(super) fn index_join(j: EquiJoin, seek: Plan) -> Plan {
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
pub(super) fn swapped(j: EquiJoin) -> EquiJoin {
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
pub(super) fn in_written_order(plan: Plan, lw: usize, rw: usize, cols: Vec<OutCol>) -> Plan {
    let exprs = (0..lw).map(|i| BExpr::Col(rw + i, cols[i].ty)).chain((0..rw).map(|i| BExpr::Col(i, cols[lw + i].ty)));
    Plan::Project { input: Box::new(plan), exprs: exprs.collect(), cols }
}

/// Rows a plan produces when the planner can tell without statistics: a seek by every
/// key column of a unique index (1), constant rows, and what keeps or multiplies those.
pub(super) fn estimated_rows(plan: &Plan) -> Option<u64> {
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
pub(super) fn ordered_on(plan: &Plan, col: usize) -> bool {
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
pub(super) fn reads_outer(e: &BExpr) -> bool {
    let mut found = has_subquery(e);
    e.visit(&mut |x| found |= matches!(x, BExpr::Outer { .. }));
    found
}

/// `plan` (a table scan, filtered or not) seeking by `keys` = `outer_keys`, the latter
/// read from the outer row of index nested loops; None when no index seeks by them.
pub(super) fn seek_by_outer(plan: &Plan, keys: &[BExpr], outer_keys: &[BExpr], types: &[SqlType]) -> Option<Plan> {
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
pub(in crate::exec) fn equality(c: &BExpr) -> Option<(&BExpr, &BExpr, SqlType, Option<types::Collation>)> {
    match c {
        BExpr::Cmp(BinaryOp::Eq, a, b, ty) => Some((a, b, *ty, None)),
        BExpr::CollCmp(BinaryOp::Eq, a, b, ty, coll) => Some((a, b, *ty, Some(*coll))),
        _ => None,
    }
}

#[allow(clippy::type_complexity)]
pub(super) fn split_equi(cs: Vec<BExpr>, left_width: usize) -> (Vec<BExpr>, Vec<BExpr>, Vec<SqlType>, Vec<BExpr>) {
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
pub(super) fn choose_index(s: &mut ScanNode, cs: &[BExpr]) {
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
pub(super) fn column_of(e: &BExpr) -> Option<usize> {
    match e {
        BExpr::Col(i, _) => Some(*i),
        BExpr::ImplicitColl(inner, _) | BExpr::Collated(inner, _) => column_of(inner),
        _ => None,
    }
}

pub(super) fn flip(op: BinaryOp) -> BinaryOp {
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
