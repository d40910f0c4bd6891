//! Set operators and DISTINCT: UNION ALL streams, UNION and DISTINCT keep the keys seen,
//! INTERSECT and EXCEPT the right side's keys, each spilling partitions past the grant.

use super::*;

/// Rows of an input converted to a set operation's column types.
pub(super) struct ConformOp {
    pub(super) input: Box<dyn Op>,
    pub(super) from: Vec<SqlType>,
    pub(super) to: Vec<SqlType>,
}

impl Op for ConformOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        let Some(r) = self.input.next(cx)? else { return Ok(None) };
        if self.from == self.to {
            return Ok(Some(r));
        }
        conform_row(r, &self.from, &self.to).map(Some)
    }
}

/// The rows of one input, then of the other (UNION ALL).
pub(super) struct ConcatOp {
    pub(super) first: Option<Box<dyn Op>>,
    pub(super) rest: Box<dyn Op>,
}

impl Op for ConcatOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if let Some(op) = &mut self.first {
            if let Some(r) = op.next(cx)? {
                return Ok(Some(r));
            }
            self.first = None;
        }
        self.rest.next(cx)
    }
}

/// INTERSECT (`keep` true) or EXCEPT: the distinct rows of `left` whose key is (is not)
/// among `right`'s. The right side's keys are held within the grant; past it both sides
/// go to partition files by the hash of their key (a Hash Warning), and each pair of
/// partitions is compared on its own (`right_keys`: the right rows are those files' keys,
/// one binary value each).
pub(super) fn intersect_except(
    keep: bool,
    mut left: Box<dyn Op>,
    mut right: Box<dyn Op>,
    right_keys: bool,
    (types, colls): (&[SqlType], &[Option<types::Collation>]),
    level: u32,
    cx: &mut Cx,
) -> Result<Box<dyn Op>, SqlError> {
    let key_of = |row: &[Value], keyed: bool| match (keyed, row.first()) {
        (true, Some(Value::Binary(k))) => k.clone(),
        _ => row_key(row, types, colls),
    };
    let mut set = std::collections::HashSet::new();
    let mut charge = cx.memory.charge();
    while let Some(r) = right.next(cx)? {
        cx.check_cancel()?;
        let k = key_of(&r, right_keys);
        if set.contains(&k) {
            continue;
        }
        let bytes = k.len() as u64 + 48;
        if charge.try_add(bytes) {
            set.insert(k);
            continue;
        }
        if level + 1 >= super::super::spill::MAX_SPILL_LEVEL {
            charge.add(bytes)?;
            set.insert(k);
            continue;
        }
        let dir = cx.host.spill_dir();
        let (mut lp, mut rp) =
            (super::super::spill::Partitions::new(&dir, level), super::super::spill::Partitions::new(&dir, level));
        for k in set.drain().chain(std::iter::once(k)) {
            rp.push(rp.of(&k), &[Value::Binary(k)])?;
        }
        drop(charge);
        while let Some(r) = right.next(cx)? {
            cx.check_cancel()?;
            let k = key_of(&r, right_keys);
            rp.push(rp.of(&k), &[Value::Binary(k)])?;
        }
        while let Some(r) = left.next(cx)? {
            cx.check_cancel()?;
            let k = row_key(&r, types, colls);
            lp.push(lp.of(&k), &r)?;
        }
        let mut pairs: Vec<_> = lp.finish()?.into_iter().zip(rp.finish()?).filter_map(|(l, r)| Some((l?, r))).collect();
        pairs.reverse();
        return Ok(Box::new(SpilledSetOp {
            keep,
            pairs,
            types: types.to_vec(),
            colls: colls.to_vec(),
            level,
            current: None,
        }));
    }
    let filtered =
        Box::new(KeyFilterOp { input: left, set, keep, types: types.to_vec(), colls: colls.to_vec(), _charge: charge });
    Ok(Box::new(DistinctOp::new(filtered, colls.to_vec(), 0, cx)))
}

/// The rows whose key is (`keep`) or is not in `set`.
pub(super) struct KeyFilterOp {
    pub(super) input: Box<dyn Op>,
    pub(super) set: std::collections::HashSet<Vec<u8>>,
    pub(super) keep: bool,
    pub(super) types: Vec<SqlType>,
    pub(super) colls: Vec<Option<types::Collation>>,
    pub(super) _charge: super::super::memory::Charge,
}

impl Op for KeyFilterOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        while let Some(r) = self.input.next(cx)? {
            if self.set.contains(&row_key(&r, &self.types, &self.colls)) == self.keep {
                return Ok(Some(r));
            }
        }
        Ok(None)
    }
}

/// INTERSECT or EXCEPT over partition files, one pair at a time.
pub(super) struct SpilledSetOp {
    pub(super) keep: bool,
    /// Left partition, right partition (None: no right row hashed there), last first.
    pub(super) pairs: Vec<(super::super::spill::SpoolReader, Option<super::super::spill::SpoolReader>)>,
    pub(super) types: Vec<SqlType>,
    pub(super) colls: Vec<Option<types::Collation>>,
    pub(super) level: u32,
    pub(super) current: Option<Box<dyn Op>>,
}

impl Op for SpilledSetOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        loop {
            if let Some(op) = &mut self.current {
                if let Some(r) = op.next(cx)? {
                    return Ok(Some(r));
                }
            }
            let Some((l, r)) = self.pairs.pop() else { return Ok(None) };
            let r: Box<dyn Op> = match r {
                Some(r) => Box::new(r),
                None => Box::new(VecOp::new(Vec::new())),
            };
            let types = (self.types.as_slice(), self.colls.as_slice());
            self.current = Some(intersect_except(self.keep, Box::new(l), r, true, types, self.level + 1, cx)?);
        }
    }
}

/// DISTINCT (and UNION): each row the first time its key is seen. The keys seen are
/// charged to the request's grant; past it, rows of keys not seen yet go to partition
/// files by the hash of their key (a Hash Warning), each made distinct on its own once
/// the input is read.
pub(super) struct DistinctOp {
    pub(super) input: Box<dyn Op>,
    /// The columns' collations (SELECT DISTINCT x COLLATE ...).
    pub(super) colls: Vec<Option<types::Collation>>,
    pub(super) seen: std::collections::HashSet<Vec<u8>>,
    /// The keys seen, charged to the request's grant.
    pub(super) charge: super::super::memory::Charge,
    /// How many times the rows were partitioned already.
    pub(super) level: u32,
    pub(super) spill: Option<super::super::spill::Partitions>,
    /// Once the input is read: the partitions still to read, and the one being read.
    pub(super) later: Vec<super::super::spill::SpoolReader>,
    pub(super) current: Option<Box<DistinctOp>>,
    pub(super) input_done: bool,
}

impl DistinctOp {
    pub(super) fn new(input: Box<dyn Op>, colls: Vec<Option<types::Collation>>, level: u32, cx: &Cx) -> DistinctOp {
        DistinctOp {
            input,
            colls,
            seen: std::collections::HashSet::new(),
            charge: cx.memory.charge(),
            level,
            spill: None,
            later: Vec::new(),
            current: None,
            input_done: false,
        }
    }
}

impl Op for DistinctOp {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        if !self.input_done {
            while let Some(r) = self.input.next(cx)? {
                let types: Vec<SqlType> = r.iter().map(crate::scalar::value_type).collect();
                let key = row_key(&r, &types, &self.colls);
                if self.seen.contains(&key) {
                    continue;
                }
                cx.check_cancel()?;
                if let Some(p) = &mut self.spill {
                    p.push(p.of(&key), &r)?;
                    continue;
                }
                let bytes = key.len() as u64 + 48;
                if !self.charge.try_add(bytes) {
                    if self.level + 1 < super::super::spill::MAX_SPILL_LEVEL {
                        let mut p = super::super::spill::Partitions::new(&cx.host.spill_dir(), self.level);
                        p.push(p.of(&key), &r)?;
                        self.spill = Some(p);
                        continue;
                    }
                    self.charge.add(bytes)?;
                }
                self.seen.insert(key);
                return Ok(Some(r));
            }
            self.input_done = true;
            if let Some(p) = self.spill.take() {
                self.seen = Default::default();
                self.charge.clear();
                self.later = p.finish()?.into_iter().flatten().collect();
                self.later.reverse();
            }
        }
        loop {
            if let Some(op) = &mut self.current {
                if let Some(r) = op.next(cx)? {
                    return Ok(Some(r));
                }
            }
            let Some(reader) = self.later.pop() else { return Ok(None) };
            self.current = Some(Box::new(DistinctOp::new(Box::new(reader), self.colls.clone(), self.level + 1, cx)));
        }
    }
}
