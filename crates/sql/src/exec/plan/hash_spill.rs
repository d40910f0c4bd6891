//! A hash join past its memory grant: a grace hash join over partition files, as SQL
//! Server's hash join spills to tempdb (a Hash Warning).
//!
//! When the build side does not fit the request's grant, the join writes its build
//! rows, then all its probe rows, to [`FANOUT`] partition files each, by the hash of
//! the join key ([`Partitions`]); rows with equal keys land in the same pair of files.
//! Each pair is then joined in memory on its own: the build file into a hash table, the
//! probe file streamed past it, unmatched rows out as the join kind wants. A build
//! partition that still does not fit is partitioned again (with another hash) with its
//! probe partition, at most [`MAX_SPILL_LEVEL`] times; past that (rows that all share
//! one key) the statement fails with Msg 701.
//!
//! A partition record is the key's bytes (a binary value; NULL for a NULL key, which
//! matches nothing: such rows are written only when an outer join keeps them), then the
//! row: a build row's kept values, a probe row as read.

use std::collections::HashMap;
use std::path::PathBuf;

use types::hash::FxBuild;
use types::{SqlError, Value};

use super::super::context::Cx;
use super::super::expr::{is_true, BExpr, Row};
use super::super::memory::{row_bytes, Charge};
use super::super::spill::{partition_of, Partitions, SpoolReader, MAX_SPILL_LEVEL};
use super::{fill_joined, RightRow};
use crate::ast::JoinKind;

/// A key as a partition record holds it.
pub fn key_value(key: Option<&[u8]>) -> Value {
    key.map_or(Value::Null, |k| Value::Binary(k.to_vec()))
}

/// The partition of a record's key (NULL keys share the empty key's).
fn part_of(key: &Value, level: u32) -> usize {
    match key {
        Value::Binary(b) => partition_of(b, level),
        _ => partition_of(&[], level),
    }
}

/// Both sides of a spilled join, partitioned (see the module doc).
pub struct SpillWriter {
    pub build: Partitions,
    pub probe: Partitions,
}

impl SpillWriter {
    pub fn new(cx: &mut Cx, level: u32) -> SpillWriter {
        let dir = cx.host.spill_dir();
        SpillWriter { build: Partitions::new(&dir, level), probe: Partitions::new(&dir, level) }
    }
}

/// One pair of partition files still to join, and its partitioning level.
struct Pending {
    build: Option<SpoolReader>,
    probe: Option<SpoolReader>,
    level: u32,
}

/// The join of spilled partitions, one pair at a time.
pub struct SpilledJoin {
    kind: JoinKind,
    residual: Option<BExpr>,
    out: Option<Vec<usize>>,
    widths: (usize, usize),
    right_slots: Option<Vec<usize>>,
    dir: PathBuf,
    pending: Vec<Pending>,
    /// The partition being joined: its build records (key, then kept values), by key.
    build: Vec<Row>,
    table: HashMap<Vec<u8>, Vec<usize>, FxBuild>,
    matched: Vec<bool>,
    charge: Option<Charge>,
    probe: Option<SpoolReader>,
    /// The probe record being joined (key, then the row), its candidates and the next
    /// one to try.
    current: Row,
    candidates: Vec<usize>,
    next: usize,
    probing: bool,
    probe_matched: bool,
    /// The next build row to check for an unmatched output (right and full joins).
    unmatched_out: Option<usize>,
}

impl SpilledJoin {
    /// The join of the partitions `w` wrote (level 0 of the spill).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        w: SpillWriter,
        kind: JoinKind,
        residual: Option<BExpr>,
        out: Option<Vec<usize>>,
        widths: (usize, usize),
        right_slots: Option<Vec<usize>>,
        cx: &mut Cx,
    ) -> Result<SpilledJoin, SqlError> {
        let mut j = SpilledJoin {
            kind,
            residual,
            out,
            widths,
            right_slots,
            dir: cx.host.spill_dir(),
            pending: Vec::new(),
            build: Vec::new(),
            table: HashMap::with_hasher(FxBuild),
            matched: Vec::new(),
            charge: None,
            probe: None,
            current: Row::new(),
            candidates: Vec::new(),
            next: 0,
            probing: false,
            probe_matched: false,
            unmatched_out: None,
        };
        j.queue(w, 0)?;
        Ok(j)
    }

    /// Queues the pairs of partitions `w` wrote at `level` (the first partition is
    /// joined first). A pair the join kind cannot output from is dropped.
    fn queue(&mut self, w: SpillWriter, level: u32) -> Result<(), SqlError> {
        let keeps_build = matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter);
        let keeps_probe = matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter);
        let pairs: Vec<_> = w.build.finish()?.into_iter().zip(w.probe.finish()?).collect();
        for (build, probe) in pairs.into_iter().rev() {
            let useful = match (&build, &probe) {
                (Some(_), Some(_)) => true,
                (Some(_), None) => keeps_build,
                (None, Some(_)) => keeps_probe,
                (None, None) => false,
            };
            if useful {
                self.pending.push(Pending { build, probe, level });
            }
        }
        Ok(())
    }

    /// Loads the next pair's build rows into memory (partitioning the pair again when
    /// they do not fit); false when no pair is left.
    fn load_next(&mut self, cx: &mut Cx) -> Result<bool, SqlError> {
        self.build.clear();
        self.table.clear();
        self.matched.clear();
        self.charge = None;
        self.unmatched_out = None;
        self.probing = false;
        'pairs: loop {
            let Some(p) = self.pending.pop() else { return Ok(false) };
            let mut charge = cx.memory.charge();
            if let Some(mut build) = p.build {
                while let Some(rec) = build.next_row()? {
                    cx.check_cancel()?;
                    let bytes = row_bytes(&rec);
                    if !charge.try_add(bytes) {
                        if p.level + 1 < MAX_SPILL_LEVEL {
                            // Still too big: this pair is partitioned again, by another hash.
                            let level = p.level + 1;
                            let mut w = SpillWriter {
                                build: Partitions::new(&self.dir, level),
                                probe: Partitions::new(&self.dir, level),
                            };
                            for r in self.build.drain(..).chain(std::iter::once(rec)) {
                                w.build.push(part_of(&r[0], level), &r)?;
                            }
                            repartition(build, &mut w.build, level, cx)?;
                            if let Some(probe) = p.probe {
                                repartition(probe, &mut w.probe, level, cx)?;
                            }
                            self.table.clear();
                            drop(charge);
                            self.queue(w, level)?;
                            continue 'pairs;
                        }
                        // Rows that no partitioning separates: Msg 701 past the grant.
                        charge.add(bytes)?;
                    }
                    if let Value::Binary(k) = &rec[0] {
                        self.table.entry(k.clone()).or_default().push(self.build.len());
                    }
                    self.build.push(rec);
                }
            }
            self.matched = vec![false; self.build.len()];
            self.charge = Some(charge);
            self.probe = p.probe;
            return Ok(true);
        }
    }

    pub fn next_into(&mut self, cx: &mut Cx, row: &mut Row) -> Result<bool, SqlError> {
        loop {
            if self.probing {
                while self.next < self.candidates.len() {
                    let i = self.candidates[self.next];
                    self.next += 1;
                    let right = Some(RightRow::Values(&self.build[i][1..], self.right_slots.as_deref()));
                    fill_joined(row, self.out.as_deref(), Some(&self.current[1..]), self.widths, right);
                    let ok = match &self.residual {
                        Some(p) => is_true(&cx.eval_with_outer(p, &row[..])?),
                        None => true,
                    };
                    if ok {
                        self.matched[i] = true;
                        self.probe_matched = true;
                        return Ok(true);
                    }
                }
                self.probing = false;
                if !self.probe_matched && matches!(self.kind, JoinKind::LeftOuter | JoinKind::FullOuter) {
                    fill_joined(row, self.out.as_deref(), Some(&self.current[1..]), self.widths, None);
                    return Ok(true);
                }
            }
            if self.unmatched_out.is_none() {
                if let Some(probe) = &mut self.probe {
                    if let Some(rec) = probe.next_row()? {
                        cx.check_cancel()?;
                        self.current = rec;
                        self.candidates.clear();
                        if let Value::Binary(k) = &self.current[0] {
                            if let Some(list) = self.table.get(k.as_slice()) {
                                self.candidates.extend_from_slice(list);
                            }
                        }
                        self.next = 0;
                        self.probe_matched = false;
                        self.probing = true;
                        continue;
                    }
                }
                self.probe = None;
                self.unmatched_out = Some(0);
            }
            if matches!(self.kind, JoinKind::RightOuter | JoinKind::FullOuter) {
                let i = self.unmatched_out.get_or_insert(0);
                while *i < self.build.len() {
                    let j = *i;
                    *i += 1;
                    if !self.matched[j] {
                        let right = Some(RightRow::Values(&self.build[j][1..], self.right_slots.as_deref()));
                        fill_joined(row, self.out.as_deref(), None, self.widths, right);
                        return Ok(true);
                    }
                }
            }
            if !self.load_next(cx)? {
                return Ok(false);
            }
        }
    }
}

/// The rest of `reader`'s records into `parts` by their key at `level`.
fn repartition(mut reader: SpoolReader, parts: &mut Partitions, level: u32, cx: &mut Cx) -> Result<(), SqlError> {
    while let Some(rec) = reader.next_row()? {
        cx.check_cancel()?;
        parts.push(part_of(&rec[0], level), &rec)?;
    }
    Ok(())
}
