//! Rows of values <-> FixedVar records (`storage::record`), with values too large for the
//! row stored off-row through `storage::lob`.
//!
//! An index's stored columns ([`sql::host::StoredColumn`]) become a [`RowLayout`]:
//! fixed-length types keep their fixed length, every variable-length column may go
//! off-row (SQL Server's LOB_DATA for MAX types and ROW_OVERFLOW_DATA for the others),
//! sparse columns go in the sparse vector. Each value is encoded with `types::encode`.
//!
//! A B-tree entry is the key plus the record, and must fit on one page
//! (`btree::MAX_ENTRY_LEN`): the widest movable values go off-row until the record fits
//! both the 8,060-byte row limit and the page with its key.

use std::sync::Arc;

use sql::host::{HostError, HostResult, RowDecoder, StoredColumn};
use storage::btree::MAX_ENTRY_LEN;
use storage::record::{
    self, encode_record, plan_off_row, ColumnLayout, ColumnValue, FixedPart, LobPointer, RecordError, RecordType,
    RecordView, RowLayout, LOB_POINTER_LEN,
};
use storage::{Database, StorageError};
use types::{SqlError, Value};

use crate::error::{EngineError, Result};

/// Working buffers of [`RowCodec::encode_into`], one set per thread.
#[derive(Default)]
struct EncodeScratch {
    buf: Vec<u8>,
    spans: Vec<Option<(usize, usize)>>,
    off_row: Vec<bool>,
    /// Always empty between rows; kept for its allocation.
    values: Vec<ColumnValue<'static>>,
}

thread_local! {
    static ENCODE_SCRATCH: std::cell::RefCell<EncodeScratch> = std::cell::RefCell::new(EncodeScratch::default());
}

/// An emptied vector with another lifetime for its elements, keeping the allocation (the
/// in-place collect reuses it: same element size and alignment).
fn recycle<'a, 'b>(mut v: Vec<ColumnValue<'a>>) -> Vec<ColumnValue<'b>> {
    v.clear();
    v.into_iter().map(|_| ColumnValue::Null).collect()
}

/// The layout of an index's rows and the column types, built once per index shape.
pub struct RowCodec {
    pub columns: Arc<[StoredColumn]>,
    layout: RowLayout,
    /// Any column may go off-row.
    has_lob_columns: bool,
    /// The fixed-length columns' bytes plus every column's share of the record's
    /// overhead (null bitmap, offsets, header), at most: a row whose values encode to
    /// at most `MAX_IN_ROW_RECORD - in_row_overhead` bytes stays in-row whole.
    in_row_overhead: usize,
}

impl RowCodec {
    pub fn new(columns: Arc<[StoredColumn]>) -> Result<RowCodec> {
        let cols: Vec<ColumnLayout> = columns
            .iter()
            .map(|c| {
                let fixed = c.ty.fixed_storage_len();
                ColumnLayout {
                    fixed_len: fixed,
                    // Sparse columns are nullable by definition (CREATE TABLE enforces it).
                    nullable: c.nullable || c.sparse,
                    sparse: c.sparse,
                    lob: fixed.is_none(),
                }
            })
            .collect();
        let layout = RowLayout::new(cols).map_err(StorageError::from)?;
        let has_lob_columns = layout.columns().iter().any(|c| c.lob);
        let n = layout.columns().len();
        let fixed: usize = layout.columns().iter().filter_map(|c| c.fixed_len).map(usize::from).sum();
        // Header and column count (4), null bitmap, variable column count and offsets (2
        // each), and the sparse vector (a header, then a column id and an offset each).
        let in_row_overhead = fixed + 4 + n.div_ceil(8) + 2 + 2 * n + 8 + 4 * n;
        Ok(RowCodec { columns, layout, has_lob_columns, in_row_overhead })
    }

    pub fn has_lob_columns(&self) -> bool {
        self.has_lob_columns
    }

    /// Encodes `row` into a record for an entry with a key of `key_len` bytes. Values
    /// that go off-row are written with `write_lob` (inside the caller's transaction)
    /// and their pointers appended to `written`, also when an error follows, so the
    /// caller can free them if the row is not stored after all.
    pub fn encode(
        &self,
        row: &[Value],
        key_len: usize,
        written: &mut Vec<LobPointer>,
        write_lob: impl FnMut(&[u8]) -> Result<LobPointer>,
    ) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.encode_into(row, key_len, written, write_lob, &mut out)?;
        Ok(out)
    }

    /// [`RowCodec::encode`] into `out` (cleared first). The working buffers are the
    /// thread's own and reused, so a row of in-row values allocates nothing here (an
    /// inserted row used to allocate six vectors).
    pub fn encode_into(
        &self,
        row: &[Value],
        key_len: usize,
        written: &mut Vec<LobPointer>,
        write_lob: impl FnMut(&[u8]) -> Result<LobPointer>,
        out: &mut Vec<u8>,
    ) -> Result<()> {
        // Taken out of the cell for the duration (write_lob runs storage code), put back
        // after; a nested use would only find empty buffers.
        let mut scratch = ENCODE_SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
        let r = self.encode_with(row, key_len, written, write_lob, out, &mut scratch);
        ENCODE_SCRATCH.with(|s| *s.borrow_mut() = scratch);
        r
    }

    fn encode_with(
        &self,
        row: &[Value],
        key_len: usize,
        written: &mut Vec<LobPointer>,
        mut write_lob: impl FnMut(&[u8]) -> Result<LobPointer>,
        out: &mut Vec<u8>,
        scratch: &mut EncodeScratch,
    ) -> Result<()> {
        let n = self.columns.len();
        if row.len() != n {
            return Err(EngineError::Sql(SqlError::new(
                213,
                16,
                1,
                format!(
                    "Column name or number of supplied values does not match table definition ({} of {n}).",
                    row.len()
                ),
            )));
        }
        // Encode every non-NULL value once, all into one buffer.
        let EncodeScratch { buf, spans, off_row, values: values_slot } = scratch;
        buf.clear();
        spans.clear();
        for (v, c) in row.iter().zip(self.columns.iter()) {
            if v.is_null() {
                if !(c.nullable || c.sparse) {
                    return Err(EngineError::Sql(SqlError::new(
                        515,
                        16,
                        2,
                        "Cannot insert the value NULL into a column that does not allow nulls.",
                    )));
                }
                spans.push(None);
            } else {
                let start = buf.len();
                types::encode_in(v, &c.ty, c.code_page, buf)?;
                spans.push(Some((start, buf.len())));
            }
        }
        let lens = |i: usize| spans[i].map(|(a, b)| b - a);
        off_row.clear();
        // Nothing goes off-row when even the values together fit both the largest inline
        // value and the record beside the fixed part: the common row skips the plan.
        let small =
            buf.len() <= record::MAX_INLINE_VALUE && buf.len() + self.in_row_overhead <= record::MAX_IN_ROW_RECORD;
        if self.has_lob_columns && !small {
            let all: Vec<Option<usize>> = (0..n).map(lens).collect();
            off_row.extend(plan_off_row(&self.layout, &all).map_err(row_error)?);
        } else {
            // Fixed-length columns only: nothing can go off-row.
            off_row.resize(n, false);
        }
        // Off-row values stand in as a pointer until they are written (the size is the
        // same).
        const DUMMY: LobPointer = LobPointer { total_len: 0, root: record::Rid { file_id: 0, page_no: 0, slot: 0 } };
        // The vector of the previous row, reused for values borrowing this row's `buf`.
        let mut values: Vec<ColumnValue<'_>> = recycle(std::mem::take(values_slot));
        values.extend(spans.iter().zip(off_row.iter()).map(|(e, off)| match e {
            None => ColumnValue::Null,
            Some(_) if *off => ColumnValue::Lob(DUMMY),
            Some((a, b)) => ColumnValue::Inline(&buf[*a..*b]),
        }));
        // The entry (u16 key length, key, record) must also fit one page.
        let budget = MAX_ENTRY_LEN.saturating_sub(2 + key_len);
        let too_large = |size: usize| {
            EngineError::Sql(SqlError::new(
                511,
                16,
                1,
                format!(
                    "Cannot create a row of size {} which is greater than the allowable maximum row size of {}.",
                    size + key_len,
                    budget.min(record::MAX_IN_ROW_RECORD)
                ),
            ))
        };
        if !off_row.contains(&true) {
            // The common row, all in-row: encoded at once (encoding computes the size the
            // loop below would), kept when it fits; else (too large, or an error the
            // loop meets again) the loop moves values off-row.
            out.clear();
            if encode_record(&self.layout, RecordType::Primary, &values, out).is_ok() && out.len() <= budget {
                *values_slot = recycle(values);
                return Ok(());
            }
        }
        loop {
            let size = record::encoded_len(&self.layout, RecordType::Primary, &values).map_err(row_error)?;
            if size <= budget {
                break;
            }
            let widest = (0..n)
                .filter(|&i| self.layout.columns()[i].lob && !off_row[i])
                .filter_map(|i| lens(i).filter(|&l| l > LOB_POINTER_LEN).map(|l| (l, i)))
                .max();
            match widest {
                Some((_, i)) => {
                    off_row[i] = true;
                    values[i] = ColumnValue::Lob(DUMMY);
                }
                None => return Err(too_large(size)),
            }
        }
        for (i, off) in off_row.iter().enumerate() {
            if let (true, Some((a, b))) = (*off, spans[i]) {
                let p = write_lob(&buf[a..b])?;
                written.push(p);
                values[i] = ColumnValue::Lob(p);
            }
        }
        out.clear();
        let r = encode_record(&self.layout, RecordType::Primary, &values, out).map_err(row_error);
        *values_slot = recycle(values);
        r
    }

    /// The values of a record; off-row values are read from `db`.
    pub fn decode(&self, bytes: &[u8], db: &Database) -> Result<Vec<Value>> {
        // One spare slot: scans for UPDATE/DELETE append the row's locator.
        let mut out = Vec::with_capacity(self.columns.len() + 1);
        self.decode_into(bytes, Some(db), None, &mut out)?;
        Ok(out)
    }

    /// Sets `out` to the values of a record, each decoded into its slot so the buffer of
    /// a string or binary already there is reused (see `RowDecoder::decode_row`); false
    /// (and `out` partly filled) when the record holds an off-row value and there is no
    /// `db` to read it from. With `needed`, the columns it does not mark are left NULL
    /// (not read, so an off-row value there needs no `db`).
    fn decode_into(
        &self,
        bytes: &[u8],
        db: Option<&Database>,
        needed: Option<&[bool]>,
        out: &mut Vec<Value>,
    ) -> Result<bool> {
        // Fixed-length columns are read in place; the record is parsed whole only for
        // another column (or a record `FixedPart` leaves to the full parse).
        let fixed = FixedPart::new(&self.layout, bytes);
        let mut view = None;
        let n = self.columns.len();
        if out.len() != n {
            out.truncate(n);
            out.resize(n, Value::Null);
        }
        for (i, (c, slot)) in self.columns.iter().zip(out.iter_mut()).enumerate() {
            if needed.is_some_and(|need| need.get(i) == Some(&false)) {
                *slot = Value::Null;
                continue;
            }
            let value = match fixed.and_then(|f| f.column(i)) {
                Some(v) => v,
                None => {
                    let view = match view {
                        Some(v) => v,
                        None => *view.insert(RecordView::parse(&self.layout, bytes).map_err(StorageError::from)?),
                    };
                    view.column(i).map_err(StorageError::from)?
                }
            };
            match value {
                ColumnValue::Null => *slot = Value::Null,
                ColumnValue::Inline(b) => types::decode_to_in(&c.ty, c.code_page, b, slot)?,
                ColumnValue::Lob(p) => {
                    let Some(db) = db else { return Ok(false) };
                    let b = storage::lob::read(db, p)?;
                    types::decode_to_in(&c.ty, c.code_page, &b, slot)?
                }
            }
        }
        Ok(true)
    }

    /// The off-row values a record points at (to free them when the row goes).
    pub fn lob_pointers(&self, bytes: &[u8]) -> Result<Vec<LobPointer>> {
        if !self.has_lob_columns {
            return Ok(Vec::new());
        }
        let view = RecordView::parse(&self.layout, bytes).map_err(StorageError::from)?;
        let mut out = Vec::new();
        for i in 0..self.columns.len() {
            if let ColumnValue::Lob(p) = view.column(i).map_err(StorageError::from)? {
                out.push(p);
            }
        }
        Ok(out)
    }
}

/// A scan hands rows to the executor undecoded (`DataAccess::scan_stored`): a row decodes
/// from its bytes alone unless it holds an off-row value, which is read through the
/// transaction (`Host::get`).
impl RowDecoder for RowCodec {
    fn decode_row(&self, stored: &[u8], out: &mut Vec<Value>) -> HostResult<bool> {
        self.decode_into(stored, None, None, out).map_err(HostError::from)
    }

    fn decode_columns(&self, stored: &[u8], needed: &[bool], out: &mut Vec<Value>) -> HostResult<bool> {
        self.decode_into(stored, None, Some(needed), out).map_err(HostError::from)
    }
}

fn row_error(e: RecordError) -> EngineError {
    match e {
        RecordError::RowTooLarge { size } => EngineError::Sql(SqlError::new(
            511,
            16,
            1,
            format!("Cannot create a row of size {size} which is greater than the allowable maximum row size of 8060."),
        )),
        RecordError::ValueTooLong { len, .. } => EngineError::Sql(SqlError::new(
            511,
            16,
            1,
            format!("Cannot create a row of size {len} which is greater than the allowable maximum row size of 8060."),
        )),
        e => EngineError::Storage(e.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::{Length, SqlType};

    fn cols(c: &[(SqlType, bool, bool)]) -> Arc<[StoredColumn]> {
        c.iter()
            .map(|&(ty, nullable, sparse)| StoredColumn { ty, nullable, sparse, code_page: types::CodePage::CP1252 })
            .collect::<Vec<_>>()
            .into()
    }

    #[test]
    fn wide_rows_push_values_off_row_until_the_entry_fits() {
        let codec = RowCodec::new(cols(&[
            (SqlType::Int, false, false),
            (SqlType::VarChar { len: Length::Bounded(8000) }, true, false),
            (SqlType::VarChar { len: Length::Bounded(8000) }, true, false),
        ]))
        .unwrap();
        let row = vec![Value::Int(1), Value::String("a".repeat(5000)), Value::String("b".repeat(5000))];
        let mut lobs = 0;
        let mut written = Vec::new();
        let rec = codec
            .encode(&row, 900, &mut written, |b| {
                lobs += 1;
                Ok(LobPointer { total_len: b.len() as u64, root: record::Rid { file_id: 1, page_no: 9, slot: lobs } })
            })
            .unwrap();
        assert_eq!(written.len(), 1);
        assert!(rec.len() + 900 + 2 <= MAX_ENTRY_LEN);
        assert_eq!(codec.lob_pointers(&rec).unwrap().len(), 1);
    }

    /// A stored row decodes from its bytes alone (overwriting what `out` holds, NULLs
    /// included, and reusing its strings' buffers) unless it holds an off-row value: then
    /// `decode_row` says so.
    #[test]
    fn rows_decode_alone_unless_a_value_is_off_row() {
        let codec = RowCodec::new(cols(&[
            (SqlType::Int, false, false),
            (SqlType::VarChar { len: Length::Bounded(20) }, true, false),
            (SqlType::VarChar { len: Length::Max }, true, false),
            (SqlType::DateTime2 { scale: 7 }, true, false),
        ]))
        .unwrap();
        let row = vec![Value::Int(7), Value::String("seven".into()), Value::Null, Value::Null];
        let rec = codec.encode(&row, 4, &mut Vec::new(), |_| unreachable!()).unwrap();
        let mut out = vec![
            Value::Bit(true),
            Value::String(String::with_capacity(64)),
            Value::Int(1),
            Value::Int(2),
            Value::Int(3),
        ];
        assert!(codec.decode_row(&rec, &mut out).unwrap());
        assert_eq!(out, row);
        assert!(matches!(&out[1], Value::String(s) if s.capacity() >= 64), "the string's buffer is reused");
        let row2 = vec![Value::Int(8), Value::Null, Value::Null, Value::DateTime2 { days: 5, ticks: 0, scale: 7 }];
        let rec2 = codec.encode(&row2, 4, &mut Vec::new(), |_| unreachable!()).unwrap();
        assert!(codec.decode_row(&rec2, &mut out).unwrap());
        assert_eq!(out, row2);
        // Only the needed columns are decoded; an off-row value in another one needs no
        // transaction to read.
        assert!(codec.decode_columns(&rec, &[true, false, false, true], &mut out).unwrap());
        assert_eq!(out, vec![Value::Int(7), Value::Null, Value::Null, Value::Null]);
        let wide = vec![Value::Int(8), Value::Null, Value::String("x".repeat(9000)), Value::Null];
        let rec = codec
            .encode(&wide, 4, &mut Vec::new(), |b| {
                Ok(LobPointer { total_len: b.len() as u64, root: record::Rid { file_id: 1, page_no: 9, slot: 0 } })
            })
            .unwrap();
        assert!(!codec.decode_row(&rec, &mut Vec::new()).unwrap());
        let mut out = Vec::new();
        assert!(codec.decode_columns(&rec, &[true, false, false], &mut out).unwrap());
        assert_eq!(out, vec![Value::Int(8), Value::Null, Value::Null, Value::Null]);
        assert!(codec.decode_row(&rec[..rec.len() - 1], &mut Vec::new()).is_err(), "a damaged record");
    }

    #[test]
    fn null_in_not_null_column_is_515() {
        let codec = RowCodec::new(cols(&[(SqlType::Int, false, false)])).unwrap();
        let e = match codec.encode(&[Value::Null], 4, &mut Vec::new(), |_| unreachable!()) {
            Err(e) => e.to_sql_error(),
            Ok(_) => panic!("NULL accepted"),
        };
        assert_eq!(e.number, 515);
    }
}
