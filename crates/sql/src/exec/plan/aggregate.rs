//! Hash aggregation (GROUP BY, ROLLUP/CUBE/GROUPING SETS, scalar aggregates): groups
//! within the request's grant, partitions of the rest past it.

use super::*;

pub(super) struct Group {
    pub(super) keys: Row,
    pub(super) accs: Vec<Accumulator>,
    pub(super) distinct: Vec<std::collections::HashSet<Vec<u8>>>,
    /// For aggregates with WITHIN GROUP ordering: the inputs, sorted at the end.
    pub(super) ordered: Vec<Vec<(Vec<Value>, Value, Option<Value>)>>,
}

/// One grouping set's groups, in first-seen order, and their index by encoded key.
pub(super) type GroupTable = (HashMap<Vec<u8>, usize, FxBuild>, Vec<Group>);

pub(super) fn new_group(keys: Row, aggs: &[AggSpec]) -> Group {
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
/// the rows were partitioned already, see [`super::super::spill::MAX_SPILL_LEVEL`]).
pub(super) fn aggregate(
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
    let mut spill: Option<Vec<super::super::spill::Partitions>> = None;
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
                    let bytes = super::super::memory::row_bytes(&gk) + hk.len() as u64 * 2 + 64 * aggs.len() as u64;
                    if spill.is_none() && !charge.try_add(bytes) {
                        if level + 1 >= super::super::spill::MAX_SPILL_LEVEL {
                            charge.add(bytes)?;
                        } else {
                            let dir = cx.host.spill_dir();
                            spill =
                                Some(sets.iter().map(|_| super::super::spill::Partitions::new(&dir, level)).collect());
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
                    charge.add(
                        super::super::memory::row_bytes(order)
                            + super::super::memory::row_bytes(std::slice::from_ref(v)),
                    )?;
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
        let (rkeys, raggs) = spilled_agg_specs(keys, aggs, db);
        for (si, p) in parts.into_iter().enumerate() {
            for reader in p.finish()?.into_iter().flatten() {
                later.push((reader, si));
            }
        }
        later.reverse();
        return Ok(Box::new(SpilledAggregate {
            later,
            keys: rkeys,
            aggs: raggs,
            sets: sets.clone(),
            level,
            current: Some(Box::new(HeldRows::new(out, charge))),
        }));
    }
    Ok(Box::new(HeldRows::new(out, charge)))
}

/// The keys and aggregates that aggregate a spilled partition's records (see
/// `aggregate`): each reads its column of the record, under its original collation.
pub(super) fn spilled_agg_specs(keys: &[BExpr], aggs: &[AggSpec], db: types::Collation) -> (Vec<BExpr>, Vec<AggSpec>) {
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

/// An aggregate that spilled: the groups that were in memory (the first `current`),
/// then each partition's groups, aggregated when the previous ones are out.
pub(super) struct SpilledAggregate {
    /// Partitions still to aggregate, last first, with their grouping set.
    pub(super) later: Vec<(super::super::spill::SpoolReader, usize)>,
    pub(super) keys: Vec<BExpr>,
    pub(super) aggs: Vec<AggSpec>,
    pub(super) sets: Vec<Vec<bool>>,
    pub(super) level: u32,
    pub(super) current: Option<Box<dyn Op>>,
}

impl Op for SpilledAggregate {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
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

pub(super) fn same_expr(a: &BExpr, b: &BExpr) -> bool {
    format!("{a:?}") == format!("{b:?}")
}
