//! Sorts, spools and hash operators larger than their memory grant: an external merge
//! sort, as SQL Server's sort spills to tempdb (a Sort Warning), an eager spool on disk,
//! and the partition files of hash operators (a Hash Warning).
//!
//! The sort reads its input into memory, charging each row to the request's grant
//! ([`super::memory`]). When a row does not fit, the rows held so far are sorted and
//! written to a run file, their memory goes back, and reading goes on. At the end the
//! runs (and the rows still in memory, sorted) are merged, 64 at a time (more runs are
//! first merged into one); each step takes the smallest head, the first run among equals.
//! Keys are evaluated once per row and written with it, so a key like NEWID() is the
//! same in the run as it was when the row was read. A spool ([`spool`]) writes its rows
//! to one such file, unsorted and without keys, once they pass the grant.
//!
//! Hash operators (hash join, aggregate, DISTINCT, UNION, INTERSECT, EXCEPT) past the
//! grant write rows to [`FANOUT`] (16) partition files ([`Partitions`]) chosen by a hash
//! of the row's key seeded with the partitioning level, so a partition that still does
//! not fit spreads when it is partitioned again; after [`MAX_SPILL_LEVEL`] levels
//! (rows that all share one key) the statement fails with Msg 701. What a hash
//! operator's record holds is its own (the hash join's: `hash_spill.rs`; an aggregate's:
//! the group keys, then each aggregate's argument, separator and WITHIN GROUP values;
//! DISTINCT's and set operators': the row, or a right side's key as one binary value).
//!
//! A run, spool or partition file lives in the host's spill directory (`spill/` in the
//! data directory, the system's temporary directory for an in-memory instance), is
//! unlinked as soon as it is created (it disappears with its reader, whatever ends the
//! request), and holds one record per row: u32 length (little-endian), then each key
//! value and each column value as [`write_value`] writes them: a tag byte (0 NULL, 1 bit,
//! 2 tinyint, 3 smallint, 4 int, 5 bigint, 6 decimal, 7 money, 8 float, 9 real, 10 date,
//! 11 time, 12 datetime, 13 smalldatetime, 14 datetime2, 15 datetimeoffset, 16 string,
//! 17 binary, 18 guid) and the value's fields little-endian, strings (UTF-8) and
//! binaries after a u32 length. sql_variant values are not written (the statement fails
//! with Msg 701). At most [`MAX_SPILL_BYTES`] per sort, spool or set of partitions: past
//! that the statement fails with Msg 1105, as a full tempdb does.

use std::cmp::Ordering;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

use types::{SqlError, SqlType, Value};

use super::context::Cx;
use super::expr::Row;
use super::memory::{row_bytes, Charge};
use super::plan::{order_values_in, HeldRows, Op, OpResult, SortKey};

/// The most one sort writes to its run files (tempdb's size, in effect).
pub const MAX_SPILL_BYTES: u64 = 32 << 30;

/// Sorts and spools that went to disk so far (SQL Server's Sort Warnings, and eager
/// spools written to tempdb), for the performance counters and DMVs.
pub static SPILLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn io_err(e: std::io::Error) -> SqlError {
    SqlError::new(
        823,
        24,
        2,
        format!("The operating system returned an error ({e}) during a read or write of a sort's run file in tempdb."),
    )
}

fn tempdb_full() -> SqlError {
    SqlError::new(
        1105,
        17,
        2,
        "Could not allocate space for object 'dbo.SORT temporary run storage' in database 'tempdb' because the 'PRIMARY' filegroup is full. Create disk space by deleting unneeded files, dropping objects in the filegroup, adding additional files to the filegroup, or setting autogrowth on for existing files in the filegroup.",
    )
}

/// How the sort orders its keyed rows.
#[derive(Clone)]
struct Order {
    desc: Vec<bool>,
    types: Vec<SqlType>,
    colls: Vec<Option<types::Collation>>,
}

impl Order {
    fn cmp(&self, a: &[Value], b: &[Value]) -> Ordering {
        for i in 0..self.desc.len() {
            let o = order_values_in(&a[i], &b[i], &self.types[i], self.colls[i].as_ref());
            let o = if self.desc[i] { o.reverse() } else { o };
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }
}

/// Sorts `input` by `keys` within the request's grant, spilling runs to `dir` when the
/// rows do not fit. Returns an operator over the sorted rows.
pub fn sort(mut input: Box<dyn Op>, keys: &[SortKey], cx: &mut Cx, dir: &Path) -> Result<Box<dyn Op>, SqlError> {
    let db = cx.db_collation();
    let order = Order {
        desc: keys.iter().map(|k| k.desc).collect(),
        types: keys.iter().map(|k| k.expr.ty()).collect(),
        colls: keys.iter().map(|k| k.expr.collation(db)).collect(),
    };
    let mut charge = cx.memory.charge();
    let mut held: Vec<(Vec<Value>, Row)> = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    let mut spilled = 0u64;
    while let Some(r) = input.next(cx)? {
        cx.check_cancel()?;
        let mut k = Vec::with_capacity(keys.len());
        for key in keys {
            k.push(key.expr.eval(&r, cx)?);
        }
        let bytes = row_bytes(&r) + row_bytes(&k);
        // One row is always held, whatever its size (a run needs a row).
        if !charge.try_add(bytes) && !held.is_empty() {
            held.sort_by(|a, b| order.cmp(&a.0, &b.0));
            let run = Run::write(dir, &held, &mut spilled)?;
            runs.push(run);
            if runs.len() >= MAX_MERGE_WIDTH {
                let merged = merge_runs(std::mem::take(&mut runs), &order, dir, &mut spilled)?;
                runs.push(merged);
            }
            held.clear();
            held.shrink_to(0);
            charge.clear();
            let _ = charge.try_add(bytes);
        }
        held.push((k, r));
    }
    held.sort_by(|a, b| order.cmp(&a.0, &b.0));
    if runs.is_empty() {
        return Ok(Box::new(HeldRows::new(held.into_iter().map(|(_, r)| r).collect(), charge)));
    }
    SPILLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    // The rows still in memory are one more run, read from memory.
    let mut sources: Vec<Source> = runs.into_iter().map(Source::File).collect();
    sources.push(Source::Memory(held.into_iter()));
    Ok(Box::new(Merge::new(order, sources, Some(charge))?))
}

/// The rows of an input materialized within the request's grant ([`spool`]).
pub enum Spooled {
    /// All in memory, with the grant they hold.
    Memory(Vec<Row>, Option<Charge>),
    /// Past the grant: in a spool file, read back in order.
    Disk(SpoolReader),
}

/// Rows read back from a spool file, in the order they were written.
pub struct SpoolReader {
    run: Run,
}

impl SpoolReader {
    pub fn next_row(&mut self) -> Result<Option<Row>, SqlError> {
        Ok(self.run.next(0)?.map(|(_, r)| r))
    }
}

impl Op for SpoolReader {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        cx.check_cancel()?;
        self.next_row()
    }
}

/// Reads every row of `input` (an eager spool, as INSERT ... SELECT needs when its
/// source may read its target): in memory while they fit the request's grant, else all
/// of them, in order, in a spool file under `dir`.
pub fn spool(mut input: Box<dyn Op>, cx: &mut Cx, dir: &Path) -> Result<Spooled, SqlError> {
    let mut charge = cx.memory.charge();
    let mut held: Vec<Row> = Vec::new();
    let mut writer: Option<RunWriter> = None;
    let mut spilled = 0u64;
    while let Some(r) = input.next(cx)? {
        cx.check_cancel()?;
        if let Some(w) = &mut writer {
            w.push(&[], &r, &mut spilled)?;
            continue;
        }
        if charge.try_add(row_bytes(&r)) {
            held.push(r);
            continue;
        }
        let mut w = RunWriter::new(dir)?;
        diag::counters().worktables_created.add(1);
        for h in held.drain(..) {
            w.push(&[], &h, &mut spilled)?;
        }
        w.push(&[], &r, &mut spilled)?;
        charge.clear();
        writer = Some(w);
    }
    Ok(match writer {
        None => Spooled::Memory(held, Some(charge)),
        Some(w) => {
            SPILLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Spooled::Disk(SpoolReader { run: w.finish()? })
        }
    })
}

/// Partitions a hash operator writes at once when its rows pass the grant.
pub const FANOUT: usize = 16;

/// How many times a partition that still does not fit is partitioned again (with
/// another hash) before the operator gives up with Msg 701: 16^4 partitions, and rows
/// that all share one key (which no partitioning separates) end it.
pub const MAX_SPILL_LEVEL: u32 = 4;

/// Rows spread over [`FANOUT`] spill files by the hash of a key (a hash join's or
/// aggregate's partitions, as SQL Server writes them to tempdb). Files are created as
/// rows reach them; each is a spool file read back in order.
pub struct Partitions {
    dir: std::path::PathBuf,
    level: u32,
    files: Vec<Option<RunWriter>>,
    spilled: u64,
}

impl Partitions {
    /// Partitions at recursion `level` (each level hashes differently).
    pub fn new(dir: &Path, level: u32) -> Partitions {
        Partitions { dir: dir.to_path_buf(), level, files: (0..FANOUT).map(|_| None).collect(), spilled: 0 }
    }

    /// The partition of a key (its encoded bytes).
    pub fn of(&self, key: &[u8]) -> usize {
        partition_of(key, self.level)
    }

    /// Appends `row` to partition `p`.
    pub fn push(&mut self, p: usize, row: &[Value]) -> Result<(), SqlError> {
        if self.files[p].is_none() {
            self.files[p] = Some(RunWriter::new(&self.dir)?);
            diag::counters().workfiles_created.add(1);
        }
        match &mut self.files[p] {
            Some(w) => w.push(&[], row, &mut self.spilled),
            None => Ok(()),
        }
    }

    /// The partitions' rows, in partition order (None: no row reached it).
    pub fn finish(self) -> Result<Vec<Option<SpoolReader>>, SqlError> {
        self.files.into_iter().map(|f| f.map(|w| Ok(SpoolReader { run: w.finish()? })).transpose()).collect()
    }
}

/// The partition of `key` at `level`: a hash seeded by the level, so a partition's
/// rows spread again when it is partitioned at the next level.
pub fn partition_of(key: &[u8], level: u32) -> usize {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    level.hash(&mut h);
    key.hash(&mut h);
    (h.finish() % FANOUT as u64) as usize
}

/// A sorted run on disk.
struct Run {
    reader: BufReader<File>,
    left: usize,
}

/// Writes one run.
struct RunWriter {
    w: BufWriter<File>,
    rows: usize,
    rec: Vec<u8>,
}

impl RunWriter {
    fn new(dir: &Path) -> Result<RunWriter, SqlError> {
        std::fs::create_dir_all(dir).map_err(io_err)?;
        let path = dir.join(format!(
            "sort-{}-{}.run",
            std::process::id(),
            RUN_SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let file = std::fs::OpenOptions::new().read(true).write(true).create_new(true).open(&path).map_err(io_err)?;
        // Unlinked at once: the file goes away with its handle, however the sort ends.
        let _ = std::fs::remove_file(&path);
        Ok(RunWriter { w: BufWriter::with_capacity(256 << 10, file), rows: 0, rec: Vec::new() })
    }

    fn push(&mut self, keys: &[Value], row: &[Value], spilled: &mut u64) -> Result<(), SqlError> {
        self.rec.clear();
        for v in keys.iter().chain(row.iter()) {
            write_value(v, &mut self.rec)?;
        }
        *spilled += self.rec.len() as u64 + 4;
        if *spilled > MAX_SPILL_BYTES {
            return Err(tempdb_full());
        }
        self.w.write_all(&(self.rec.len() as u32).to_le_bytes()).map_err(io_err)?;
        self.w.write_all(&self.rec).map_err(io_err)?;
        self.rows += 1;
        Ok(())
    }

    fn finish(self) -> Result<Run, SqlError> {
        let mut file = self.w.into_inner().map_err(|e| io_err(e.into_error()))?;
        file.seek(SeekFrom::Start(0)).map_err(io_err)?;
        Ok(Run { reader: BufReader::with_capacity(64 << 10, file), left: self.rows })
    }
}

impl Run {
    fn write(dir: &Path, rows: &[(Vec<Value>, Row)], spilled: &mut u64) -> Result<Run, SqlError> {
        let mut w = RunWriter::new(dir)?;
        for (k, r) in rows {
            w.push(k, r, spilled)?;
        }
        w.finish()
    }

    fn next(&mut self, nkeys: usize) -> Result<Option<(Vec<Value>, Row)>, SqlError> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let mut len = [0u8; 4];
        self.reader.read_exact(&mut len).map_err(io_err)?;
        let mut rec = vec![0u8; u32::from_le_bytes(len) as usize];
        self.reader.read_exact(&mut rec).map_err(io_err)?;
        let mut at = 0;
        let mut vals = Vec::new();
        while at < rec.len() {
            vals.push(read_value(&rec, &mut at)?);
        }
        let row = vals.split_off(nkeys.min(vals.len()));
        Ok(Some((vals, row)))
    }
}

static RUN_SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

enum Source {
    File(Run),
    Memory(std::vec::IntoIter<(Vec<Value>, Row)>),
}

impl Source {
    fn next(&mut self, nkeys: usize) -> Result<Option<(Vec<Value>, Row)>, SqlError> {
        match self {
            Source::File(run) => run.next(nkeys),
            Source::Memory(it) => Ok(it.next()),
        }
    }
}

/// The merge of sorted sources: each step takes the smallest head (the first source
/// among equals, so the merge is stable). At most [`MAX_MERGE_WIDTH`] sources, so a
/// linear scan of the heads costs little next to reading them.
struct Merge {
    order: Order,
    sources: Vec<Source>,
    heads: Vec<Option<(Vec<Value>, Row)>>,
    _charge: Option<Charge>,
}

/// Runs merged at once; more are merged into one run first (fewer open files too).
const MAX_MERGE_WIDTH: usize = 64;

impl Merge {
    fn new(order: Order, mut sources: Vec<Source>, charge: Option<Charge>) -> Result<Merge, SqlError> {
        let nkeys = order.desc.len();
        let mut heads = Vec::with_capacity(sources.len());
        for s in &mut sources {
            heads.push(s.next(nkeys)?);
        }
        Ok(Merge { order, sources, heads, _charge: charge })
    }

    fn pop(&mut self) -> Result<Option<(Vec<Value>, Row)>, SqlError> {
        let mut best: Option<usize> = None;
        for (i, h) in self.heads.iter().enumerate() {
            if let Some((k, _)) = h {
                let better = match best {
                    None => true,
                    Some(b) => self.heads[b].as_ref().is_some_and(|(bk, _)| self.order.cmp(k, bk) == Ordering::Less),
                };
                if better {
                    best = Some(i);
                }
            }
        }
        let Some(i) = best else { return Ok(None) };
        let next = self.sources[i].next(self.order.desc.len())?;
        Ok(std::mem::replace(&mut self.heads[i], next))
    }
}

impl Op for Merge {
    fn next(&mut self, cx: &mut Cx) -> OpResult {
        cx.check_cancel()?;
        Ok(self.pop()?.map(|(_, row)| row))
    }
}

/// Merges `runs` into one run (when there are more than a merge takes at once).
fn merge_runs(runs: Vec<Run>, order: &Order, dir: &Path, spilled: &mut u64) -> Result<Run, SqlError> {
    let mut m = Merge::new(order.clone(), runs.into_iter().map(Source::File).collect(), None)?;
    let mut w = RunWriter::new(dir)?;
    while let Some((k, r)) = m.pop()? {
        w.push(&k, &r, spilled)?;
    }
    w.finish()
}

/// A value in a run file: a tag byte, then the variant's fields little-endian; strings
/// and binaries with a u32 length.
pub fn write_value(v: &Value, out: &mut Vec<u8>) -> Result<(), SqlError> {
    match v {
        Value::Null => out.push(0),
        Value::Bit(b) => out.extend_from_slice(&[1, u8::from(*b)]),
        Value::TinyInt(n) => out.extend_from_slice(&[2, *n]),
        Value::SmallInt(n) => {
            out.push(3);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Int(n) => {
            out.push(4);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::BigInt(n) => {
            out.push(5);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Decimal { value, precision, scale } => {
            out.push(6);
            out.extend_from_slice(&value.to_le_bytes());
            out.extend_from_slice(&[*precision, *scale]);
        }
        Value::Money(n) => {
            out.push(7);
            out.extend_from_slice(&n.to_le_bytes());
        }
        Value::Float(f) => {
            out.push(8);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Real(f) => {
            out.push(9);
            out.extend_from_slice(&f.to_le_bytes());
        }
        Value::Date(d) => {
            out.push(10);
            out.extend_from_slice(&d.to_le_bytes());
        }
        Value::Time { ticks, scale } => {
            out.push(11);
            out.extend_from_slice(&ticks.to_le_bytes());
            out.push(*scale);
        }
        Value::DateTime { days, ticks } => {
            out.push(12);
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&ticks.to_le_bytes());
        }
        Value::SmallDateTime { days, minutes } => {
            out.push(13);
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&minutes.to_le_bytes());
        }
        Value::DateTime2 { days, ticks, scale } => {
            out.push(14);
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&ticks.to_le_bytes());
            out.push(*scale);
        }
        Value::DateTimeOffset { days, ticks, scale, offset } => {
            out.push(15);
            out.extend_from_slice(&days.to_le_bytes());
            out.extend_from_slice(&ticks.to_le_bytes());
            out.push(*scale);
            out.extend_from_slice(&offset.to_le_bytes());
        }
        Value::String(s) => {
            out.push(16);
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Value::Binary(b) => {
            out.push(17);
            out.extend_from_slice(&(b.len() as u32).to_le_bytes());
            out.extend_from_slice(b);
        }
        Value::Guid(g) => {
            out.push(18);
            out.extend_from_slice(g);
        }
        // A sql_variant carries its type; sorting one past memory is not supported.
        Value::Variant(_) => return Err(super::memory::insufficient_memory()),
    }
    Ok(())
}

fn corrupt() -> SqlError {
    SqlError::new(824, 24, 2, "A sort's run file in tempdb did not read back as written.")
}

fn take<'a>(rec: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], SqlError> {
    let s = rec.get(*at..*at + n).ok_or_else(corrupt)?;
    *at += n;
    Ok(s)
}

fn arr<const N: usize>(rec: &[u8], at: &mut usize) -> Result<[u8; N], SqlError> {
    let mut a = [0u8; N];
    a.copy_from_slice(take(rec, at, N)?);
    Ok(a)
}

/// Reads a value [`write_value`] wrote.
pub fn read_value(rec: &[u8], at: &mut usize) -> Result<Value, SqlError> {
    let tag = take(rec, at, 1)?[0];
    Ok(match tag {
        0 => Value::Null,
        1 => Value::Bit(take(rec, at, 1)?[0] != 0),
        2 => Value::TinyInt(take(rec, at, 1)?[0]),
        3 => Value::SmallInt(i16::from_le_bytes(arr(rec, at)?)),
        4 => Value::Int(i32::from_le_bytes(arr(rec, at)?)),
        5 => Value::BigInt(i64::from_le_bytes(arr(rec, at)?)),
        6 => {
            let value = i128::from_le_bytes(arr(rec, at)?);
            let [precision, scale] = arr(rec, at)?;
            Value::Decimal { value, precision, scale }
        }
        7 => Value::Money(i64::from_le_bytes(arr(rec, at)?)),
        8 => Value::Float(f64::from_le_bytes(arr(rec, at)?)),
        9 => Value::Real(f32::from_le_bytes(arr(rec, at)?)),
        10 => Value::Date(u32::from_le_bytes(arr(rec, at)?)),
        11 => {
            let ticks = u64::from_le_bytes(arr(rec, at)?);
            Value::Time { ticks, scale: take(rec, at, 1)?[0] }
        }
        12 => {
            let days = i32::from_le_bytes(arr(rec, at)?);
            Value::DateTime { days, ticks: u32::from_le_bytes(arr(rec, at)?) }
        }
        13 => {
            let days = u16::from_le_bytes(arr(rec, at)?);
            Value::SmallDateTime { days, minutes: u16::from_le_bytes(arr(rec, at)?) }
        }
        14 => {
            let days = u32::from_le_bytes(arr(rec, at)?);
            let ticks = u64::from_le_bytes(arr(rec, at)?);
            Value::DateTime2 { days, ticks, scale: take(rec, at, 1)?[0] }
        }
        15 => {
            let days = u32::from_le_bytes(arr(rec, at)?);
            let ticks = u64::from_le_bytes(arr(rec, at)?);
            let scale = take(rec, at, 1)?[0];
            Value::DateTimeOffset { days, ticks, scale, offset: i16::from_le_bytes(arr(rec, at)?) }
        }
        16 => {
            let n = u32::from_le_bytes(arr(rec, at)?) as usize;
            let s = take(rec, at, n)?;
            Value::String(String::from_utf8(s.to_vec()).map_err(|_| corrupt())?)
        }
        17 => {
            let n = u32::from_le_bytes(arr(rec, at)?) as usize;
            Value::Binary(take(rec, at, n)?.to_vec())
        }
        18 => Value::Guid(arr(rec, at)?),
        _ => return Err(corrupt()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_round_trip_through_a_run_record() {
        let vals = vec![
            Value::Null,
            Value::Bit(true),
            Value::Int(-5),
            Value::BigInt(1 << 40),
            Value::Decimal { value: -12345, precision: 10, scale: 2 },
            Value::Float(2.5),
            Value::DateTime2 { days: 738000, ticks: 123, scale: 7 },
            Value::DateTimeOffset { days: 1, ticks: 2, scale: 3, offset: -300 },
            Value::String("héllo".into()),
            Value::Binary(vec![1, 2, 3]),
            Value::Guid([7; 16]),
        ];
        let mut rec = Vec::new();
        for v in &vals {
            write_value(v, &mut rec).unwrap();
        }
        let mut at = 0;
        let back: Vec<Value> = (0..vals.len()).map(|_| read_value(&rec, &mut at).unwrap()).collect();
        assert_eq!(back, vals);
        assert_eq!(at, rec.len());
        assert!(read_value(&[99], &mut 0).is_err());
    }
}
