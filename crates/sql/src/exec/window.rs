//! Window functions: ROW_NUMBER, RANK, DENSE_RANK, NTILE, LAG, LEAD, FIRST_VALUE,
//! LAST_VALUE and aggregates OVER (PARTITION BY ... ORDER BY ... [ROWS|RANGE frame]).
//!
//! Each function sorts the rows by (partition, order) and computes its column; the input
//! order is restored at the end so that several functions with different windows compose.
//! Frames: without ORDER BY an aggregate covers the whole partition; with ORDER BY and no
//! frame it is SQL Server's default RANGE UNBOUNDED PRECEDING .. CURRENT ROW (peers
//! included); ROWS frames count rows.

use std::cmp::Ordering;

use types::{SqlError, Value};

use super::context::Cx;
use super::expr::Row;
use super::memory::row_bytes;
use super::plan::{order_values_in, row_key, FrameEdge, HeldRows, Op, OpResult, SortKey, VecOp, WindowFn, WindowKind};
use crate::scalar::aggregate::Accumulator;
use crate::scalar::convert;

/// The window functions' rows: the input read within the request's grant and computed
/// at once (in input order). Past the grant, each function in turn sorts its input by
/// its PARTITION BY (spilling like any sort) and computes its column one partition at a
/// time, each partition within the grant (rows then come partition by partition of the
/// last function); a function without PARTITION BY, or one partition larger than the
/// grant, fails the statement with Msg 701.
pub fn open(mut input: Box<dyn Op>, funcs: &[WindowFn], cx: &mut Cx) -> Result<Box<dyn Op>, SqlError> {
    let mut charge = cx.memory.charge();
    let mut rows = Vec::new();
    while let Some(r) = input.next(cx)? {
        cx.check_cancel()?;
        let bytes = row_bytes(&r);
        if !charge.try_add(bytes) {
            if funcs.iter().any(|f| f.partition.is_empty()) {
                charge.add(bytes)?;
                rows.push(r);
                continue;
            }
            rows.push(r);
            drop(charge);
            // Each function's column is appended after the input's (and the earlier
            // functions'), and its expressions read only the input's columns.
            let mut stream: Box<dyn Op> = Box::new(super::plan::ChainOp { first: VecOp::new(rows), rest: input });
            let dir = cx.host.spill_dir();
            for f in funcs {
                let keys: Vec<SortKey> = f.partition.iter().map(|e| SortKey { expr: e.clone(), desc: false }).collect();
                let sorted = super::spill::sort(stream, &keys, cx, &dir)?;
                let db = cx.db_collation();
                stream = Box::new(ByPartition {
                    input: sorted,
                    types: f.partition.iter().map(|e| e.ty()).collect(),
                    colls: f.partition.iter().map(|e| e.collation(db)).collect(),
                    func: [f.clone()],
                    next: None,
                    out: None,
                });
            }
            return Ok(stream);
        }
        rows.push(r);
    }
    Ok(Box::new(HeldRows::new(compute(rows, funcs, cx)?, charge)))
}

/// One window function over input sorted by its PARTITION BY: one partition at a time.
struct ByPartition {
    input: Box<dyn Op>,
    func: [WindowFn; 1],
    /// The partition keys' types and collations.
    types: Vec<types::SqlType>,
    colls: Vec<Option<types::Collation>>,
    /// The first row of the next partition, read ahead, with its partition key.
    next: Option<(Vec<u8>, Row)>,
    out: Option<HeldRows>,
}

impl ByPartition {
    fn key(&self, row: &Row, cx: &mut Cx) -> Result<Vec<u8>, SqlError> {
        let mut vals = Vec::with_capacity(self.types.len());
        for e in &self.func[0].partition {
            vals.push(cx.eval_with_outer(e, row)?);
        }
        Ok(row_key(&vals, &self.types, &self.colls))
    }
}

impl Op for ByPartition {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some(out) = &mut self.out {
                if let Some(r) = out.next(cx)? {
                    return Ok(Some(r));
                }
                self.out = None;
            }
            let (key, first) = match self.next.take() {
                Some(n) => n,
                None => match self.input.next(cx)? {
                    Some(r) => (self.key(&r, cx)?, r),
                    None => return Ok(None),
                },
            };
            let mut charge = cx.memory.charge();
            charge.add(row_bytes(&first))?;
            let mut rows = vec![first];
            while let Some(r) = self.input.next(cx)? {
                let k = self.key(&r, cx)?;
                if k != key {
                    self.next = Some((k, r));
                    break;
                }
                // One partition larger than the grant: Msg 701.
                charge.add(row_bytes(&r))?;
                rows.push(r);
            }
            self.out = Some(HeldRows::new(compute(rows, &self.func, cx)?, charge));
        }
    }
}

pub fn compute(rows: Vec<Row>, funcs: &[WindowFn], cx: &mut Cx) -> Result<Vec<Row>, SqlError> {
    let n = rows.len();
    let mut rows = rows;
    let db = cx.db_collation();
    for f in funcs {
        // Evaluate partition and order keys and arguments per row.
        let mut part = Vec::with_capacity(n);
        let mut ord = Vec::with_capacity(n);
        let mut args = Vec::with_capacity(n);
        let ptypes: Vec<_> = f.partition.iter().map(|e| e.ty()).collect();
        let pcolls: Vec<_> = f.partition.iter().map(|e| e.collation(db)).collect();
        for r in &rows {
            let mut p = Vec::with_capacity(f.partition.len());
            for e in &f.partition {
                p.push(cx.eval_with_outer(e, r)?);
            }
            part.push(row_key(&p, &ptypes, &pcolls));
            let mut o = Vec::with_capacity(f.order.len());
            for k in &f.order {
                o.push(cx.eval_with_outer(&k.expr, r)?);
            }
            ord.push(o);
            let mut a = Vec::with_capacity(f.args.len());
            for e in &f.args {
                a.push(cx.eval_with_outer(e, r)?);
            }
            args.push(a);
        }
        let mut idx: Vec<usize> = (0..n).collect();
        let colls: Vec<_> = f.order.iter().map(|k| k.expr.collation(db)).collect();
        let cmp_order = |a: usize, b: usize| -> Ordering {
            for (i, k) in f.order.iter().enumerate() {
                let o = order_values_in(&ord[a][i], &ord[b][i], &k.expr.ty(), colls[i].as_ref());
                let o = if k.desc { o.reverse() } else { o };
                if o != Ordering::Equal {
                    return o;
                }
            }
            Ordering::Equal
        };
        idx.sort_by(|&a, &b| part[a].cmp(&part[b]).then_with(|| cmp_order(a, b)));
        let mut out = vec![Value::Null; n];
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && part[idx[end]] == part[idx[start]] {
                end += 1;
            }
            let p = &idx[start..end];
            compute_partition(f, p, &args, &cmp_order, &mut out, cx)?;
            start = end;
        }
        for (r, v) in rows.iter_mut().zip(out) {
            r.push(v);
        }
    }
    Ok(rows)
}

fn int_arg(v: Option<&Value>, default: i64) -> i64 {
    match v {
        Some(Value::TinyInt(n)) => i64::from(*n),
        Some(Value::SmallInt(n)) => i64::from(*n),
        Some(Value::Int(n)) => i64::from(*n),
        Some(Value::BigInt(n)) => *n,
        _ => default,
    }
}

fn compute_partition(
    f: &WindowFn,
    p: &[usize],
    args: &[Vec<Value>],
    cmp_order: &dyn Fn(usize, usize) -> Ordering,
    out: &mut [Value],
    cx: &mut Cx,
) -> Result<(), SqlError> {
    let len = p.len();
    // Peer groups: rows equal on the ORDER BY keys.
    let mut peer_start = vec![0usize; len];
    let mut peer_end = vec![0usize; len];
    let mut i = 0;
    while i < len {
        let mut j = i + 1;
        while j < len && cmp_order(p[i], p[j]) == Ordering::Equal {
            j += 1;
        }
        for k in i..j {
            peer_start[k] = i;
            peer_end[k] = j;
        }
        i = j;
    }
    let conv = |v: &Value, f: &WindowFn| -> Result<Value, SqlError> {
        let from = f.args.first().map(|e| e.ty()).unwrap_or(f.ty);
        if v.is_null() || from == f.ty {
            Ok(v.clone())
        } else {
            convert::convert(v, &from, &f.ty, None)
        }
    };
    match f.kind {
        WindowKind::NextValue { db, object_id } => {
            for &r in p {
                out[r] = cx.next_sequence_value(db, object_id)?;
            }
        }
        WindowKind::RowNumber => {
            for (k, &r) in p.iter().enumerate() {
                out[r] = Value::BigInt(k as i64 + 1);
            }
        }
        WindowKind::Rank => {
            for (k, &r) in p.iter().enumerate() {
                out[r] = Value::BigInt(peer_start[k] as i64 + 1);
            }
        }
        WindowKind::DenseRank => {
            let mut rank = 0i64;
            for (k, &r) in p.iter().enumerate() {
                if k == 0 || peer_start[k] == k {
                    rank += 1;
                }
                out[r] = Value::BigInt(rank);
            }
        }
        WindowKind::Ntile => {
            let buckets = int_arg(args[p[0]].first(), 1);
            if buckets <= 0 {
                return Err(SqlError::new(
                    4107,
                    16,
                    1,
                    "The function 'NTILE' takes only a positive integer constant argument.".to_string(),
                ));
            }
            let b = buckets as usize;
            let base = len / b;
            let extra = len % b;
            let mut k = 0;
            for bucket in 0..b {
                let size = base + usize::from(bucket < extra);
                for _ in 0..size {
                    if k < len {
                        out[p[k]] = Value::BigInt(bucket as i64 + 1);
                        k += 1;
                    }
                }
            }
        }
        WindowKind::Lag | WindowKind::Lead => {
            for (k, &r) in p.iter().enumerate() {
                let a = &args[r];
                let offset = int_arg(a.get(1), 1);
                if offset < 0 {
                    return Err(SqlError::new(
                        8730,
                        16,
                        1,
                        "Offset parameter for Lag and Lead functions cannot be a negative value.".to_string(),
                    ));
                }
                let target = if f.kind == WindowKind::Lag { k as i64 - offset } else { k as i64 + offset };
                out[r] = if target >= 0 && (target as usize) < len {
                    conv(&args[p[target as usize]][0], f)?
                } else {
                    match a.get(2) {
                        Some(d) => {
                            let from = f.args.get(2).map(|e| e.ty()).unwrap_or(f.ty);
                            if d.is_null() || from == f.ty {
                                d.clone()
                            } else {
                                convert::convert(d, &from, &f.ty, None)?
                            }
                        }
                        None => Value::Null,
                    }
                };
            }
        }
        WindowKind::FirstValue | WindowKind::LastValue | WindowKind::Agg(_) => {
            for k in 0..len {
                let (lo, hi) = frame_bounds(f, k, len, &peer_start, &peer_end);
                let r = p[k];
                out[r] = match f.kind {
                    WindowKind::FirstValue => {
                        if lo < hi {
                            conv(&args[p[lo]][0], f)?
                        } else {
                            Value::Null
                        }
                    }
                    WindowKind::LastValue => {
                        if lo < hi {
                            conv(&args[p[hi - 1]][0], f)?
                        } else {
                            Value::Null
                        }
                    }
                    WindowKind::Agg(kind) => {
                        let mut acc = Accumulator::new(kind, f.args.first().map(|e| e.ty()), f.ty);
                        for &q in &p[lo..hi] {
                            let v = args[q].first().cloned().unwrap_or(Value::Int(1));
                            if !v.is_null() {
                                acc.update(&v, args[q].get(1))?;
                            }
                        }
                        acc.finish()?
                    }
                    _ => Value::Null,
                };
            }
        }
    }
    Ok(())
}

/// The frame [lo, hi) of row `k` in a partition of `len` rows.
fn frame_bounds(f: &WindowFn, k: usize, len: usize, peer_start: &[usize], peer_end: &[usize]) -> (usize, usize) {
    match f.frame {
        None => {
            if f.order.is_empty() {
                (0, len)
            } else {
                (0, peer_end[k])
            }
        }
        Some((rows, start, end)) => {
            let pos = |e: FrameEdge, is_start: bool| -> i64 {
                match e {
                    FrameEdge::UnboundedPreceding => 0,
                    FrameEdge::UnboundedFollowing => len as i64,
                    FrameEdge::CurrentRow => {
                        if rows {
                            if is_start {
                                k as i64
                            } else {
                                k as i64 + 1
                            }
                        } else if is_start {
                            peer_start[k] as i64
                        } else {
                            peer_end[k] as i64
                        }
                    }
                    FrameEdge::Preceding(n) => {
                        if is_start {
                            k as i64 - n
                        } else {
                            k as i64 - n + 1
                        }
                    }
                    FrameEdge::Following(n) => {
                        if is_start {
                            k as i64 + n
                        } else {
                            k as i64 + n + 1
                        }
                    }
                }
            };
            let lo = pos(start, true).clamp(0, len as i64) as usize;
            let hi = pos(end, false).clamp(0, len as i64) as usize;
            (lo, hi.max(lo))
        }
    }
}
