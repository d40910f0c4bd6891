//! Table and index scans and seeks: rows decoded from the host's stored batches, the
//! columns a consumer needs only.

use super::*;

pub(super) struct ScanOp {
    pub(super) node: ScanNode,
    pub(super) lower: Option<Vec<u8>>,
    pub(super) lower_inclusive: bool,
    pub(super) upper: Option<Vec<u8>>,
    pub(super) upper_inclusive: bool,
    /// The current batch in reverse order (the next row is the last): popped row by row,
    /// its allocation refilled by every batch.
    pub(super) buf: Vec<KeyRow>,
    /// The same when the host hands rows over undecoded (`Host::scan_stored`), in order
    /// from `pos`: each is decoded by `decoder` when it is reached.
    pub(super) stored: StoredBatch,
    pub(super) pos: usize,
    pub(super) decoder: Option<Arc<dyn RowDecoder>>,
    /// A row handed back by the consumer ([`Op::recycle`]) or dropped by the filter: the
    /// next row is decoded into it, reusing its vector and its strings' buffers.
    pub(super) spare: Option<Row>,
    /// The columns the consumer and the filter read, when not all: the others are not
    /// decoded (see `open_needing`).
    pub(super) needed: Option<Vec<bool>>,
    /// The host has no stored form for this index: batches come from `Host::scan`.
    pub(super) decoded_only: bool,
    /// The index's rows are the table's rows as they are (the primary index of a table
    /// without computed-on-read columns): `TableInfo::row_from_index` has nothing to do.
    pub(super) stored_is_row: bool,
    pub(super) last_key: Option<Vec<u8>>,
    pub(super) exhausted: bool,
    pub(super) empty: bool,
    /// The one key an equality on every key column of a unique index names: read with
    /// `Host::get` (a point lookup: no range, batch or resume protocol).
    pub(super) point: Option<Vec<u8>>,
}

impl ScanOp {
    pub(super) fn new(node: ScanNode, cx: &mut Cx) -> Result<ScanOp, SqlError> {
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
    pub(super) fn prune(&mut self, need: Needed) {
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
            if let Some(row) = cx.host.get(index, &key).map_err(super::super::base::host_err)? {
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
            cx.host
                .scan_stored(index, lower, upper, reverse, SCAN_BATCH, &mut self.stored)
                .map_err(super::super::base::host_err)?
        };
        let more = match stored {
            Some((more, decoder)) => {
                self.decoder = Some(decoder);
                more
            }
            None => {
                self.decoded_only = true;
                cx.host
                    .scan(index, lower, upper, reverse, SCAN_BATCH, &mut self.buf)
                    .map_err(super::super::base::host_err)?
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
            if whole.map_err(super::super::base::host_err)? {
                return Ok(Some((want_key.then(|| key.to_vec()), row)));
            }
            self.spare = Some(row);
            // A value stored off-row: read through the transaction; a row deleted
            // meanwhile is skipped, as `Host::scan` does.
            if let Some(row) = cx.host.get(iref, key).map_err(super::super::base::host_err)? {
                return Ok(Some((want_key.then(|| key.to_vec()), row)));
            }
        }
        Ok(None)
    }
}

/// A row as an index stores it, with its key when asked for.
pub(super) type Popped = (Option<Vec<u8>>, Row);

pub(super) fn bound_of(k: &Option<Vec<u8>>, inclusive: bool) -> Bound<&[u8]> {
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
                    if !whole.map_err(super::super::base::host_err)? {
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
                    if !whole.map_err(super::super::base::host_err)? {
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
