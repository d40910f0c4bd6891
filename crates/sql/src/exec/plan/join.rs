//! Join operators: nested loops (and APPLY), the hash join (its build side within the
//! request's grant, a grace hash join past it: `hash_spill.rs`) and the merge join.

use super::*;

/// The columns each side of a join must produce for a consumer reading `need` of the
/// joined rows, besides the keys and the residual.
pub(super) fn join_needs(need: Needed, lw: usize, rw: usize, residual: Option<&BExpr>) -> (Needed, Needed) {
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
pub(super) fn open_join(
    plan: &Plan,
    cx: &mut Cx,
    need: Needed,
    out: Option<Vec<usize>>,
) -> Result<Box<dyn Op>, SqlError> {
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

pub(super) enum NlState {
    NeedLeft,
    Right { left: Row, op: Box<dyn Op>, matched: bool },
    Done,
}

pub(super) struct NestedLoopOp {
    pub(super) left: Box<dyn Op>,
    pub(super) right_plan: Plan,
    pub(super) right_width: usize,
    pub(super) left_width: usize,
    pub(super) kind: JoinKind,
    pub(super) on: Option<BExpr>,
    pub(super) state: NlState,
    /// For RIGHT/FULL joins: the right side materialized once, and which rows matched.
    pub(super) right_rows: Option<Vec<Row>>,
    pub(super) right_matched: Vec<bool>,
    pub(super) pending_right_unmatched: Option<usize>,
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
pub(super) struct IndexedVecOp {
    pub(super) rows: Vec<Row>,
    pub(super) pos: usize,
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

pub(super) struct HashJoinOp {
    pub(super) left: Box<dyn Op>,
    pub(super) right: Option<Box<dyn Op>>,
    pub(super) left_width: usize,
    pub(super) right_width: usize,
    /// Per right column, its slot in a kept build row ([`NOT_KEPT`]: not read after the
    /// join); None: build rows are kept whole.
    pub(super) right_slots: Option<Vec<usize>>,
    /// Values per kept build row.
    pub(super) kept_width: usize,
    pub(super) kind: JoinKind,
    pub(super) left_keys: Vec<BExpr>,
    pub(super) right_keys: Vec<BExpr>,
    /// How each side's key is read (a plain integer column in place).
    pub(super) left_key: KeyReader,
    pub(super) right_key: KeyReader,
    pub(super) key_types: Vec<SqlType>,
    pub(super) residual: Option<BExpr>,
    /// The positions of the joined row to output (a projection fused into the join,
    /// see `open_hash_join`); None: the whole joined row.
    pub(super) out: Option<Vec<usize>>,
    /// Build side: the right input's rows, by key.
    pub(super) table: JoinTable,
    /// The build rows' kept values, `kept_width` per row (no allocation per row; the
    /// right input gets each of its rows back to refill).
    pub(super) build_vals: BuildVals,
    pub(super) build_count: usize,
    /// The build side's share of the request's memory grant.
    pub(super) build_charge: Option<super::super::memory::Charge>,
    /// Per build row, the next build row with the same key ([`END`] ends the chain):
    /// each key's rows in build order without a vector per key.
    pub(super) next_same: Vec<usize>,
    pub(super) matched: Vec<bool>,
    /// The probe row being joined, its next candidate build row (`probe_next`), and
    /// whether it matched. The row stays in place while its matches go out: moving a
    /// row through an `Option` per output row stalled on store forwarding.
    pub(super) current: Row,
    /// `current` holds a probe row being joined.
    pub(super) probing: bool,
    pub(super) probe_next: usize,
    pub(super) probe_matched: bool,
    pub(super) unmatched_out: Option<usize>,
    /// Scratch for encoded keys.
    pub(super) key_buf: Vec<u8>,
    /// An output row handed back by the consumer, refilled for the next one.
    pub(super) spare: Option<Row>,
    /// Past the grant: the join of both sides' partition files (`hash_spill.rs`).
    pub(super) spilled: Option<Box<super::hash_spill::SpilledJoin>>,
}

/// The end of a chain of build rows.
pub(super) const END: usize = usize::MAX;

/// A right column a hash join does not keep (see `HashJoinOp::right_slots`).
pub(super) const NOT_KEPT: usize = usize::MAX;

/// The values a hash join keeps of its build rows, `kept_width` per row, in build order.
pub(super) enum BuildVals {
    Values(Vec<Value>),
    /// Every kept column is of an integer type: 8 bytes per value rather than a
    /// `Value`'s 32, so a large build side touches a quarter of the fresh memory.
    Ints(IntVals),
}

/// Integer values of known types (see [`BuildVals::Ints`]).
pub(super) struct IntVals {
    /// The type of each kept column, in slot order.
    pub(super) types: Vec<SqlType>,
    pub(super) vals: Vec<i64>,
    /// Bit `i` set: value `i` is NULL. Empty until the first NULL is kept.
    pub(super) nulls: Vec<u64>,
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
pub(super) enum JoinTable {
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
pub(super) enum JoinKey {
    /// A NULL key (or one that cannot be a value of the key type): matches nothing.
    None,
    Int(i64),
    /// In the operator's `key_buf`.
    Bytes,
}

/// The value of an integer-typed key as an i64.
#[inline]
pub(super) fn int_key(v: &Value) -> Option<i64> {
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
pub(super) enum KeyReader {
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
pub(super) fn join_key(
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
            pending += super::super::memory::row_bytes(&r);
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
pub(super) struct Built<'a> {
    pub(super) int_keys: &'a [i64],
    pub(super) null_rows: &'a [usize],
    pub(super) byte_keys: &'a [Option<(usize, usize)>],
    pub(super) key_bytes: &'a [u8],
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
pub(super) fn first_match(
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
pub(super) fn assign(slot: &mut Value, v: Option<&Value>) {
    match (v, slot) {
        // An integer over an integer: in place (an assignment drops the old value
        // through a call first).
        (Some(Value::Int(n)), Value::Int(s)) => *s = *n,
        (v, slot) => assign_any(slot, v),
    }
}

pub(super) fn assign_any(slot: &mut Value, v: Option<&Value>) {
    match v {
        None | Some(Value::Null) => *slot = Value::Null,
        Some(Value::Int(n)) => *slot = Value::Int(*n),
        Some(Value::BigInt(n)) => *slot = Value::BigInt(*n),
        Some(v) => slot.clone_from(v),
    }
}

/// A join's output row: `left` then `right` (NULLs for a missing side), or the `out`
/// positions of that row; in the spare row's vector when there is one.
pub(super) fn joined(
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
pub(super) enum MergeState {
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
pub(super) struct MergeJoinOp {
    pub(super) left: Box<dyn Op>,
    pub(super) right: Box<dyn Op>,
    pub(super) widths: (usize, usize),
    pub(super) kind: JoinKind,
    /// The key's position in a left and a right row.
    pub(super) keys: (usize, usize),
    pub(super) residual: Option<BExpr>,
    /// See `HashJoinOp::out`.
    pub(super) out: Option<Vec<usize>>,
    pub(super) state: MergeState,
    pub(super) left_row: Option<Row>,
    /// The next group row to try with `left_row`, and whether it matched one.
    pub(super) probe: (usize, bool),
    /// The last key read on each side: an input out of order is an error, never a
    /// wrong result.
    pub(super) last_keys: (Option<i64>, Option<i64>),
    pub(super) group: Vec<Row>,
    pub(super) group_matched: Vec<bool>,
    /// The key of the group, once it is complete.
    pub(super) group_key: Option<i64>,
    /// Group rows already checked for being unmatched.
    pub(super) flushed: usize,
    /// The next right row, read but not yet placed.
    pub(super) peek: Option<Row>,
    pub(super) right_done: bool,
    pub(super) spare: Option<Row>,
}

pub(super) fn out_of_order() -> SqlError {
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
