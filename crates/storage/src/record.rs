//! The row format: SQL Server's FixedVar record, working on bytes.
//!
//! Storage does not know SQL types. A table's rows are described physically by a
//! [`RowLayout`] (per column: fixed length or variable, nullable, sparse, may go off-row),
//! and column values arrive already encoded as bytes by the `types` crate. This module turns
//! a set of values into one record and reads columns back out of a record without copying.
//!
//! A hierarchyid column is a variable-length column of at most 892 bytes: SQL Server's
//! binary form ([MS-SSCLRT] HIERARCHYID, `types::hierarchyid`): per integer of each level
//! a range prefix, the offset in the range (with the range's fixed separator bits) and an
//! F bit (1 ends the level, 0 is a dot; the integer before a dot is stored plus one),
//! padded with zero bits to a whole byte; the root is empty. Its byte order is the tree's
//! depth-first order. Values are checked to decode when read. geometry and geography
//! columns are varbinary(max) columns holding SQL Server's serialization
//! (`types::spatial`).
//!
//! A sql_variant column is a variable-length column (at most 8016 bytes). Its bytes are
//! the base type's TDS type id (u8), the number of property bytes (u8), the properties
//! (decimal/numeric: precision, scale; time, datetime2, datetimeoffset: scale;
//! binary/varbinary: max length u16; char, varchar, nchar, nvarchar: max length in bytes
//! u16 then the 5-byte collation), then the value encoded as a column of its base type
//! (`types::encoding`). The header is the one SSVARIANTTYPE values carry in TDS.
//!
//! # Byte layout
//!
//! All integers are little-endian. Offsets are relative to the first byte of the record.
//!
//! | Offset            | Size            | Field                                                            |
//! |-------------------|-----------------|------------------------------------------------------------------|
//! | 0                 | 1               | Status A. Bit 0: reserved (0). Bits 1-3: record type (0 primary, 1 forwarded, 2 forwarding stub, 3 index, 4 blob fragment, 5 ghost index, 6 ghost data). Bit 4: null bitmap present. Bit 5: variable-length section present. Bits 6-7: reserved (0). |
//! | 1                 | 1               | Status B. Bit 0: the record carries a sparse vector. Bits 1-7: reserved (0). |
//! | 2                 | 2               | `F`: offset of the end of the fixed-length portion (= offset of the column count). |
//! | 4                 | `F - 4`         | Fixed-length data: every non-sparse fixed-length column, in column order, each exactly its declared length. A NULL column still occupies its bytes (written as zeros). |
//! | `F`               | 2               | `N`: number of columns stored in the record.                     |
//! | `F + 2`           | `ceil(N / 8)`   | Null bitmap (only when status A bit 4 is set): bit `i % 8` of byte `i / 8` is 1 when column `i` is NULL. Bits of sparse columns and padding bits are 0. |
//! | `V`               | 2               | `C`: number of variable-length entries (only when status A bit 5 is set; then `C >= 1`). |
//! | `V + 2`           | `2 * C`         | End offset of each entry. Bit 15 (0x8000) set = the entry is *complex* (an off-row LOB pointer, the sparse vector, or the back pointer); bits 0-14 = offset just past the entry's last byte. An entry starts where the previous one ends; the first starts at `V + 2 + 2 * C`. |
//! | `V + 2 + 2 * C`   | rest            | Entry data, in entry order. The last entry ends exactly at the end of the record. |
//!
//! `V` is `F + 2 + ceil(N / 8)` when the null bitmap is present, `F + 2` otherwise. Without
//! a variable-length section the record ends at `V`.
//!
//! Variable-length entries, in order:
//! 1. the non-sparse variable-length columns in column order, stopping at the last one that
//!    is not NULL (trailing NULL columns cost nothing, as in SQL Server). A NULL column
//!    before that has a zero-length entry and its null bit set;
//! 2. the sparse vector (complex), when status B bit 0 is set;
//! 3. the back pointer (complex), when the record type is *forwarded*.
//!
//! Complex entries begin with a u16 *complex column id*, numbered as SQL Server numbers them:
//!
//! | Structure          | Bytes                                                                              |
//! |--------------------|------------------------------------------------------------------------------------|
//! | LOB root pointer   | 14: u16 id = 2, u32 total value length, RID of the LOB root (see below)            |
//! | Sparse vector      | u16 id = 5, u16 `S` (sparse columns present, >= 1), `S` x u16 column ids (strictly ascending), `S` x u16 end offsets relative to the vector start (bit 15 = the value is a LOB root pointer), then the values. The first value starts at `4 + 4 * S`; the last ends at the end of the vector. |
//! | Back pointer       | 10: u16 id = 1024, RID of the forwarding stub that points at this record           |
//! | RID                | 8: u32 page number, u16 file id, u16 slot                                           |
//!
//! A *forwarding stub* is not a FixedVar record: it is exactly 9 bytes, status A `0x04`
//! (type 2, no other bits) followed by the 8-byte RID of the forwarded record.
//!
//! # Rules
//!
//! - The null bitmap is written when the layout has at least one nullable non-sparse column
//!   (index records of all-NOT NULL keys stay smaller, as in SQL Server). The column count is
//!   always written.
//! - A sparse column is NULL exactly when it is absent from the sparse vector; a NULL sparse
//!   column costs zero bytes, a non-NULL one its value plus 4 bytes.
//! - A record is at most [`MAX_IN_ROW_RECORD`] (8060) bytes, not counting a forwarded
//!   record's back pointer (12 bytes with its offset entry), so every row that fits can be
//!   forwarded: records are at most [`MAX_RECORD_LEN`] (8072) bytes.
//! - One inline value is at most [`MAX_INLINE_VALUE`] (8000) bytes. Larger values of
//!   `lob` columns live off-row, leaving a 14-byte LOB root pointer in the row;
//!   [`plan_off_row`] chooses which.
//! - Schema evolution: a record may store fewer columns than the layout has (`N` smaller).
//!   The missing trailing columns read as NULL, so appending columns to a layout is a
//!   metadata-only change, as `ALTER TABLE ... ADD` of a nullable column is in SQL Server.
//!   Any other layout change needs the rows rewritten.
//!
//! # Robustness
//!
//! DBCC and crash recovery feed damaged bytes to this module. Every read is bounds-checked
//! and garbage yields [`RecordError::Corrupt`], never a panic. [`RecordView::parse`] checks
//! the structure (header, counts, offset arrays, sparse vector and back pointer) so that
//! every column can be located; [`RecordView::column`] checks what concerns that one column;
//! [`RecordView::check`] checks everything, for DBCC.

use std::fmt;

use crate::page::PageId;

/// SQL Server's maximum row size (error 511).
pub const MAX_IN_ROW_RECORD: usize = 8060;
/// Largest value stored inline in a record (`varbinary(8000)`); larger values of `lob`
/// columns go off-row.
pub const MAX_INLINE_VALUE: usize = 8000;
/// Maximum number of columns of a table with sparse columns (a "wide table").
pub const MAX_COLUMNS: usize = 30_000;
/// Maximum number of non-sparse columns.
pub const MAX_NON_SPARSE_COLUMNS: usize = 1024;
/// Length of the record header: status A, status B and the fixed-portion end offset.
pub const RECORD_HEADER_LEN: usize = 4;
/// Length of a forwarding stub: status byte and the RID of the forwarded record.
pub const FORWARDING_STUB_LEN: usize = 1 + Rid::LEN;
/// Length of an in-row LOB root pointer.
pub const LOB_POINTER_LEN: usize = 2 + 4 + Rid::LEN;
/// Length of a forwarded record's back pointer entry data.
pub const BACK_POINTER_LEN: usize = 2 + Rid::LEN;
/// Largest record this module produces: a forwarded record of a maximum-size row
/// (the back pointer and its offset entry are not counted against the 8060 bytes).
pub const MAX_RECORD_LEN: usize = MAX_IN_ROW_RECORD + 2 + BACK_POINTER_LEN;
/// Largest total length an off-row value can have in a LOB root pointer (u32 on disk).
pub const MAX_LOB_LEN: u64 = u32::MAX as u64;

/// Complex column id of an in-row LOB root pointer.
pub const COMPLEX_ID_LOB_ROOT: u16 = 2;
/// Complex column id of the sparse vector.
pub const COMPLEX_ID_SPARSE_VECTOR: u16 = 5;
/// Complex column id of a forwarded record's back pointer.
pub const COMPLEX_ID_BACK_POINTER: u16 = 1024;

/// Status A: mask of the record type bits (bits 1-3).
const STATUS_A_TYPE_MASK: u8 = 0b0000_1110;
/// Status A: the null bitmap is present.
pub const STATUS_A_NULL_BITMAP: u8 = 0x10;
/// Status A: the variable-length section is present.
pub const STATUS_A_VAR_COLUMNS: u8 = 0x20;
/// Status A bits this version never sets; a record with any of them is damaged.
const STATUS_A_RESERVED: u8 = 0xC1;
/// Status B: the record carries a sparse vector.
pub const STATUS_B_SPARSE_VECTOR: u8 = 0x01;
const STATUS_B_RESERVED: u8 = 0xFE;
/// High bit of a variable-length end offset: the entry is complex.
const COMPLEX_BIT: u16 = 0x8000;
const OFFSET_MASK: u16 = 0x7FFF;

// ---------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------

/// Errors of record encoding and decoding.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    #[error("a row layout must have at least one column")]
    NoColumns,
    #[error("too many columns: {count}, the maximum is {max}")]
    TooManyColumns { count: usize, max: usize },
    #[error("invalid layout of column {column}: {reason}")]
    InvalidColumnLayout { column: usize, reason: &'static str },
    #[error(
        "Creating or altering table failed because the minimum row size would be {min}, \
         including {overhead} bytes of internal overhead. This exceeds the maximum allowable \
         table row size of 8060 bytes."
    )]
    MinRowSizeTooLarge { min: usize, overhead: usize },
    #[error("expected {expected} column values, got {got}")]
    ColumnCountMismatch { expected: usize, got: usize },
    #[error("column {column} is fixed-length {expected} bytes but the value has {got} bytes")]
    FixedLengthMismatch { column: usize, expected: usize, got: usize },
    #[error("column {column} does not allow NULL")]
    NullNotAllowed { column: usize },
    #[error("column {column} cannot be stored off-row")]
    LobNotAllowed { column: usize },
    #[error("value of column {column} has {len} bytes; at most 8000 bytes are stored in-row")]
    ValueTooLong { column: usize, len: usize },
    #[error("off-row value of {0} bytes is longer than a LOB pointer can describe")]
    LobTooLarge(u64),
    #[error(
        "Cannot create a row of size {size} which is greater than the allowable maximum row \
         size of 8060."
    )]
    RowTooLarge { size: usize },
    #[error("expected {expected}, found a {found:?} record")]
    UnexpectedRecordType { expected: &'static str, found: RecordType },
    #[error("column {index} is out of range: the layout has {count} columns")]
    ColumnOutOfRange { index: usize, count: usize },
    #[error("corrupt record at offset {offset}: {reason}")]
    Corrupt { offset: usize, reason: &'static str },
}

impl RecordError {
    /// The SQL Server error number this error corresponds to, where there is one.
    pub fn sql_error_number(&self) -> Option<i32> {
        match self {
            RecordError::RowTooLarge { .. } => Some(511),
            RecordError::MinRowSizeTooLarge { .. } => Some(1701),
            RecordError::TooManyColumns { .. } => Some(1702),
            _ => None,
        }
    }
}

fn corrupt(offset: usize, reason: &'static str) -> RecordError {
    RecordError::Corrupt { offset, reason }
}

// ---------------------------------------------------------------------------------------
// RID, LOB pointer, column values, record types
// ---------------------------------------------------------------------------------------

/// A row identifier: file, page and slot, shown `(file:page:slot)` as
/// `sys.fn_PhysLocFormatter` shows it. On disk: u32 page, u16 file, u16 slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Rid {
    pub file_id: u16,
    pub page_no: u32,
    pub slot: u16,
}

impl Rid {
    /// Encoded length.
    pub const LEN: usize = 8;

    pub const fn new(page: PageId, slot: u16) -> Self {
        Rid { file_id: page.file_id, page_no: page.page_no, slot }
    }

    pub const fn page_id(self) -> PageId {
        PageId { file_id: self.file_id, page_no: self.page_no }
    }

    pub fn to_bytes(self) -> [u8; 8] {
        let p = self.page_no.to_le_bytes();
        let f = self.file_id.to_le_bytes();
        let s = self.slot.to_le_bytes();
        [p[0], p[1], p[2], p[3], f[0], f[1], s[0], s[1]]
    }

    /// Decodes the first 8 bytes of `b`; `None` when `b` is shorter.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let b: &[u8; 8] = b.get(..Rid::LEN)?.try_into().ok()?;
        Some(Rid {
            page_no: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            file_id: u16::from_le_bytes([b[4], b[5]]),
            slot: u16::from_le_bytes([b[6], b[7]]),
        })
    }
}

impl fmt::Display for Rid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}:{}:{})", self.file_id, self.page_no, self.slot)
    }
}

/// The in-row part of a value stored off-row: its total length and where its LOB root is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LobPointer {
    pub total_len: u64,
    pub root: Rid,
}

impl LobPointer {
    /// Encodes the pointer (complex id 2, u32 length, RID). Fails when the length does not
    /// fit the u32 field.
    pub fn to_bytes(self) -> Result<[u8; LOB_POINTER_LEN], RecordError> {
        let len = u32::try_from(self.total_len).map_err(|_| RecordError::LobTooLarge(self.total_len))?;
        // Constant ranges inside a fixed-size array: cannot fail.
        let mut b = [0u8; LOB_POINTER_LEN];
        b[0..2].copy_from_slice(&COMPLEX_ID_LOB_ROOT.to_le_bytes());
        b[2..6].copy_from_slice(&len.to_le_bytes());
        b[6..14].copy_from_slice(&self.root.to_bytes());
        Ok(b)
    }

    /// Decodes a pointer; `b` must be exactly [`LOB_POINTER_LEN`] bytes with complex id 2.
    pub fn from_bytes(b: &[u8]) -> Result<Self, RecordError> {
        if b.len() != LOB_POINTER_LEN {
            return Err(corrupt(0, "LOB root pointer has the wrong length"));
        }
        if rd_u16(b, 0) != Some(COMPLEX_ID_LOB_ROOT) {
            return Err(corrupt(0, "complex column is not a LOB root pointer"));
        }
        let total_len = rd_u32(b, 2).ok_or(corrupt(2, "truncated LOB root pointer"))?;
        let root = b.get(6..).and_then(Rid::from_bytes).ok_or(corrupt(6, "truncated LOB root pointer"))?;
        Ok(LobPointer { total_len: u64::from(total_len), root })
    }
}

/// One column's value as the encoder takes it and the decoder returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnValue<'a> {
    Null,
    /// The value's bytes, stored in the record.
    Inline(&'a [u8]),
    /// The value lives off-row; the record holds this pointer.
    Lob(LobPointer),
}

impl ColumnValue<'_> {
    pub fn is_null(&self) -> bool {
        matches!(self, ColumnValue::Null)
    }

    /// Bytes the value occupies in the record (NULL: none).
    fn stored_len(&self) -> Option<usize> {
        match self {
            ColumnValue::Null => None,
            ColumnValue::Inline(b) => Some(b.len()),
            ColumnValue::Lob(_) => Some(LOB_POINTER_LEN),
        }
    }
}

/// Record types, numbered as SQL Server numbers them in status bits 1-3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RecordType {
    Primary,
    Forwarded,
    ForwardingStub,
    Index,
    BlobFragment,
    GhostIndex,
    GhostData,
}

impl RecordType {
    pub const fn code(self) -> u8 {
        match self {
            RecordType::Primary => 0,
            RecordType::Forwarded => 1,
            RecordType::ForwardingStub => 2,
            RecordType::Index => 3,
            RecordType::BlobFragment => 4,
            RecordType::GhostIndex => 5,
            RecordType::GhostData => 6,
        }
    }

    pub const fn from_code(code: u8) -> Option<Self> {
        Some(match code {
            0 => RecordType::Primary,
            1 => RecordType::Forwarded,
            2 => RecordType::ForwardingStub,
            3 => RecordType::Index,
            4 => RecordType::BlobFragment,
            5 => RecordType::GhostIndex,
            6 => RecordType::GhostData,
            _ => return None,
        })
    }

    pub const fn is_ghost(self) -> bool {
        matches!(self, RecordType::GhostIndex | RecordType::GhostData)
    }

    fn from_status(status_a: u8) -> Option<Self> {
        RecordType::from_code((status_a & STATUS_A_TYPE_MASK) >> 1)
    }
}

// ---------------------------------------------------------------------------------------
// Layouts
// ---------------------------------------------------------------------------------------

/// The physical description of one column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ColumnLayout {
    /// `Some(n)`: fixed-length column of `n` bytes (1..=8000); `None`: variable-length.
    pub fixed_len: Option<u16>,
    pub nullable: bool,
    /// Stored in the sparse vector; must be nullable (as SQL Server requires).
    pub sparse: bool,
    /// The value may be pushed off-row (a MAX type, or any variable-length column the
    /// engine allows row-overflow for); must be variable-length.
    pub lob: bool,
}

impl ColumnLayout {
    /// A NOT NULL fixed-length column of `len` bytes.
    pub const fn fixed(len: u16) -> Self {
        ColumnLayout { fixed_len: Some(len), nullable: false, sparse: false, lob: false }
    }

    /// A NOT NULL variable-length column.
    pub const fn variable() -> Self {
        ColumnLayout { fixed_len: None, nullable: false, sparse: false, lob: false }
    }

    /// A NOT NULL variable-length column whose values may go off-row.
    pub const fn lob() -> Self {
        ColumnLayout { fixed_len: None, nullable: false, sparse: false, lob: true }
    }

    pub const fn with_nullable(mut self) -> Self {
        self.nullable = true;
        self
    }

    /// Makes the column sparse (and therefore nullable).
    pub const fn with_sparse(mut self) -> Self {
        self.sparse = true;
        self.nullable = true;
        self
    }
}

/// Where a column lives in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// In the fixed-length portion at this record offset.
    Fixed { offset: u16, len: u16 },
    /// The `index`-th non-sparse variable-length column.
    Var { index: u16 },
    /// In the sparse vector.
    Sparse,
}

/// A table's (or index's) physical row description with everything the encoder and the
/// decoder need precomputed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowLayout {
    columns: Vec<ColumnLayout>,
    slots: Vec<Slot>,
    /// `fixed_end[k]`: end of the fixed portion of a record storing the first `k` columns.
    fixed_end: Vec<u16>,
    /// `var_prefix[k]`: number of non-sparse variable-length columns among the first `k`.
    var_prefix: Vec<u16>,
    /// Column ids of the non-sparse variable-length columns, in entry order.
    var_columns: Vec<u16>,
    /// Column ids of the sparse columns, ascending.
    sparse_columns: Vec<u16>,
    has_null_bitmap: bool,
}

impl RowLayout {
    /// Builds a layout, rejecting what SQL Server rejects at CREATE TABLE: no columns, too
    /// many columns (1702), a fixed portion that can never fit in a row (1701), and
    /// inconsistent column flags.
    pub fn new(columns: Vec<ColumnLayout>) -> Result<Self, RecordError> {
        let n = columns.len();
        if n == 0 {
            return Err(RecordError::NoColumns);
        }
        if n > MAX_COLUMNS {
            return Err(RecordError::TooManyColumns { count: n, max: MAX_COLUMNS });
        }
        let non_sparse = columns.iter().filter(|c| !c.sparse).count();
        if non_sparse > MAX_NON_SPARSE_COLUMNS {
            return Err(RecordError::TooManyColumns { count: non_sparse, max: MAX_NON_SPARSE_COLUMNS });
        }
        let mut slots = Vec::with_capacity(n);
        let mut fixed_end = Vec::with_capacity(n + 1);
        let mut var_prefix = Vec::with_capacity(n + 1);
        let mut var_columns = Vec::new();
        let mut sparse_columns = Vec::new();
        // Sums are kept in usize and checked against the row limit below, so the u16
        // values stored are exact.
        let mut end = RECORD_HEADER_LEN;
        fixed_end.push(end as u16);
        var_prefix.push(0u16);
        for (i, c) in columns.iter().enumerate() {
            let invalid = |reason| RecordError::InvalidColumnLayout { column: i, reason };
            if c.sparse && !c.nullable {
                return Err(invalid("a sparse column must be nullable"));
            }
            if c.lob && c.fixed_len.is_some() {
                return Err(invalid("a column stored off-row must be variable-length"));
            }
            if let Some(len) = c.fixed_len {
                if len == 0 || usize::from(len) > MAX_INLINE_VALUE {
                    return Err(invalid("fixed length must be between 1 and 8000 bytes"));
                }
            }
            // `i < 30_000`, so column ids fit u16.
            let id = i as u16;
            let slot = match (c.sparse, c.fixed_len) {
                (true, _) => {
                    sparse_columns.push(id);
                    Slot::Sparse
                }
                (false, Some(len)) => {
                    let offset = end;
                    end += usize::from(len);
                    if end + 2 > MAX_IN_ROW_RECORD {
                        // Reported with the full minimum size below; stop before u16 overflow.
                        break;
                    }
                    Slot::Fixed { offset: offset as u16, len }
                }
                (false, None) => {
                    var_columns.push(id);
                    Slot::Var { index: (var_columns.len() - 1) as u16 }
                }
            };
            slots.push(slot);
            fixed_end.push(end as u16);
            var_prefix.push(var_columns.len() as u16);
        }
        let fixed_total: usize =
            columns.iter().filter(|c| !c.sparse).filter_map(|c| c.fixed_len).map(usize::from).sum();
        let has_null_bitmap = columns.iter().any(|c| c.nullable && !c.sparse);
        let overhead = RECORD_HEADER_LEN + 2 + if has_null_bitmap { n.div_ceil(8) } else { 0 };
        let min = fixed_total + overhead;
        if min > MAX_IN_ROW_RECORD || slots.len() != n {
            return Err(RecordError::MinRowSizeTooLarge { min, overhead });
        }
        Ok(RowLayout { columns, slots, fixed_end, var_prefix, var_columns, sparse_columns, has_null_bitmap })
    }

    pub fn columns(&self) -> &[ColumnLayout] {
        &self.columns
    }

    pub fn column_count(&self) -> usize {
        self.columns.len()
    }

    /// Column ids of the sparse columns, ascending.
    pub fn sparse_columns(&self) -> &[u16] {
        &self.sparse_columns
    }

    /// Column ids of the non-sparse variable-length columns, in record entry order.
    pub fn var_columns(&self) -> &[u16] {
        &self.var_columns
    }

    /// Whether records of this layout carry a null bitmap.
    pub fn has_null_bitmap(&self) -> bool {
        self.has_null_bitmap
    }

    /// Offset of the end of the fixed-length portion (where the column count is).
    pub fn fixed_end(&self) -> usize {
        self.fixed_end.last().copied().map_or(RECORD_HEADER_LEN, usize::from)
    }

    /// Size of the smallest record: header, fixed portion, column count and null bitmap.
    pub fn min_record_len(&self) -> usize {
        self.fixed_end() + 2 + self.null_bitmap_len(self.columns.len())
    }

    fn null_bitmap_len(&self, stored_columns: usize) -> usize {
        if self.has_null_bitmap {
            stored_columns.div_ceil(8)
        } else {
            0
        }
    }

    /// Exact encoded size of a row whose column `i` occupies `len_of(i)` bytes (`None`:
    /// NULL). Non-sparse fixed columns always take their declared length.
    fn record_size(&self, forwarded: bool, len_of: impl Fn(usize) -> Option<usize>) -> usize {
        let mut stored_vars = 0;
        let mut var_bytes = 0;
        for (k, &col) in self.var_columns.iter().enumerate() {
            if let Some(len) = len_of(usize::from(col)) {
                stored_vars = k + 1;
                var_bytes += len;
            }
        }
        let (mut sparse_count, mut sparse_bytes) = (0, 0);
        for &col in &self.sparse_columns {
            if let Some(len) = len_of(usize::from(col)) {
                sparse_count += 1;
                sparse_bytes += len;
            }
        }
        let entries = stored_vars + usize::from(sparse_count > 0) + usize::from(forwarded);
        let mut size = self.min_record_len();
        if entries > 0 {
            size += 2 + 2 * entries + var_bytes;
            if sparse_count > 0 {
                size += 4 + 4 * sparse_count + sparse_bytes;
            }
            if forwarded {
                size += BACK_POINTER_LEN;
            }
        }
        size
    }
}

// ---------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------

fn value_at<'v>(values: &[ColumnValue<'v>], i: usize) -> ColumnValue<'v> {
    values.get(i).copied().unwrap_or(ColumnValue::Null)
}

/// Checks values against the layout: count, NULLs, fixed lengths, the in-row value limit
/// and LOB pointers.
fn validate_values(layout: &RowLayout, values: &[ColumnValue]) -> Result<(), RecordError> {
    if values.len() != layout.columns.len() {
        return Err(RecordError::ColumnCountMismatch { expected: layout.columns.len(), got: values.len() });
    }
    for (column, (c, v)) in layout.columns.iter().zip(values).enumerate() {
        match v {
            ColumnValue::Null if !c.nullable => return Err(RecordError::NullNotAllowed { column }),
            ColumnValue::Null => {}
            ColumnValue::Inline(b) => match c.fixed_len {
                Some(n) if b.len() != usize::from(n) => {
                    return Err(RecordError::FixedLengthMismatch { column, expected: usize::from(n), got: b.len() })
                }
                Some(_) => {}
                None if b.len() > MAX_INLINE_VALUE => return Err(RecordError::ValueTooLong { column, len: b.len() }),
                None => {}
            },
            ColumnValue::Lob(p) => {
                if !c.lob {
                    return Err(RecordError::LobNotAllowed { column });
                }
                if p.total_len > MAX_LOB_LEN {
                    return Err(RecordError::LobTooLarge(p.total_len));
                }
            }
        }
    }
    Ok(())
}

/// Validates `values` and returns (size without back pointer, size as encoded).
fn checked_size(layout: &RowLayout, forwarded: bool, values: &[ColumnValue]) -> Result<(usize, usize), RecordError> {
    validate_values(layout, values)?;
    let len_of = |i| value_at(values, i).stored_len();
    let size = layout.record_size(false, len_of);
    if size > MAX_IN_ROW_RECORD {
        return Err(RecordError::RowTooLarge { size });
    }
    Ok((size, if forwarded { layout.record_size(true, len_of) } else { size }))
}

/// Exact length of the record [`encode_record`] (or, for [`RecordType::Forwarded`],
/// [`encode_forwarded_record`]) would produce, after the same checks. Lets a heap find a
/// page with room before encoding.
pub fn encoded_len(layout: &RowLayout, rtype: RecordType, values: &[ColumnValue]) -> Result<usize, RecordError> {
    if rtype == RecordType::ForwardingStub {
        return Ok(FORWARDING_STUB_LEN);
    }
    Ok(checked_size(layout, rtype == RecordType::Forwarded, values)?.1)
}

/// Encodes one record of type `rtype` and appends it to `out`. On error `out` is unchanged.
///
/// `rtype` may be any type but [`RecordType::Forwarded`] (use [`encode_forwarded_record`],
/// which needs the back pointer) and [`RecordType::ForwardingStub`] (use
/// [`encode_forwarding_stub`]).
pub fn encode_record(
    layout: &RowLayout,
    rtype: RecordType,
    values: &[ColumnValue],
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    match rtype {
        RecordType::Forwarded | RecordType::ForwardingStub => {
            Err(RecordError::UnexpectedRecordType { expected: "a record type encode_record can write", found: rtype })
        }
        _ => encode_inner(layout, rtype, values, None, out),
    }
}

/// Encodes a forwarded record (type 1): the row moved here from the page of the stub at
/// `back_pointer`, which the record remembers so the heap can find the stub again.
pub fn encode_forwarded_record(
    layout: &RowLayout,
    values: &[ColumnValue],
    back_pointer: Rid,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    encode_inner(layout, RecordType::Forwarded, values, Some(back_pointer), out)
}

fn put_u16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_value(out: &mut Vec<u8>, v: ColumnValue) -> Result<(), RecordError> {
    match v {
        ColumnValue::Null => {}
        ColumnValue::Inline(b) => out.extend_from_slice(b),
        ColumnValue::Lob(p) => out.extend_from_slice(&p.to_bytes()?),
    }
    Ok(())
}

/// End-offset entry for a value ending at `end` (< 0x8000 because records are at most
/// 8072 bytes), with the complex bit for LOB pointers.
fn offset_entry(end: usize, v: ColumnValue) -> u16 {
    let complex = if matches!(v, ColumnValue::Lob(_)) { COMPLEX_BIT } else { 0 };
    (end as u16 & OFFSET_MASK) | complex
}

fn encode_inner(
    layout: &RowLayout,
    rtype: RecordType,
    values: &[ColumnValue],
    back_pointer: Option<Rid>,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    let (_, size) = checked_size(layout, back_pointer.is_some(), values)?;
    let base = out.len();
    out.reserve(size);
    let result = write_record(layout, rtype, values, back_pointer, out);
    if result.is_err() {
        out.truncate(base);
    }
    debug_assert!(result.is_err() || out.len() - base == size, "record size computation disagrees with encoder");
    result
}

/// Writes the record; `values` have been validated and the size checked (every offset
/// below fits 15 bits because the record is at most `MAX_RECORD_LEN` bytes).
fn write_record(
    layout: &RowLayout,
    rtype: RecordType,
    values: &[ColumnValue],
    back_pointer: Option<Rid>,
    out: &mut Vec<u8>,
) -> Result<(), RecordError> {
    let base = out.len();
    let n = layout.columns.len();
    let stored_vars =
        layout.var_columns.iter().rposition(|&c| !value_at(values, usize::from(c)).is_null()).map_or(0, |k| k + 1);
    let sparse_present = || {
        layout.sparse_columns.iter().filter_map(|&c| {
            let v = value_at(values, usize::from(c));
            (!v.is_null()).then_some((c, v))
        })
    };
    let sparse_count = sparse_present().count();
    let entries = stored_vars + usize::from(sparse_count > 0) + usize::from(back_pointer.is_some());

    // Header.
    let mut status_a = rtype.code() << 1;
    if layout.has_null_bitmap {
        status_a |= STATUS_A_NULL_BITMAP;
    }
    if entries > 0 {
        status_a |= STATUS_A_VAR_COLUMNS;
    }
    out.push(status_a);
    out.push(if sparse_count > 0 { STATUS_B_SPARSE_VECTOR } else { 0 });
    put_u16(out, layout.fixed_end() as u16);

    // Fixed portion: NULLs keep their space so every fixed column has a fixed offset.
    for (i, slot) in layout.slots.iter().enumerate() {
        if let Slot::Fixed { len, .. } = *slot {
            match value_at(values, i) {
                ColumnValue::Inline(b) => out.extend_from_slice(b),
                _ => out.resize(out.len() + usize::from(len), 0),
            }
        }
    }

    // Column count and null bitmap.
    put_u16(out, n as u16);
    if layout.has_null_bitmap {
        let start = out.len();
        out.resize(start + n.div_ceil(8), 0);
        for (i, slot) in layout.slots.iter().enumerate() {
            if *slot != Slot::Sparse && value_at(values, i).is_null() {
                if let Some(byte) = out.get_mut(start + i / 8) {
                    *byte |= 1 << (i % 8);
                }
            }
        }
    }
    if entries == 0 {
        return Ok(());
    }

    // Variable-length entries: the end-offset array, then the data in the same order.
    put_u16(out, entries as u16);
    let stored_var_values = || layout.var_columns.iter().take(stored_vars).map(|&c| value_at(values, usize::from(c)));
    let sparse_header = 4 + 4 * sparse_count;
    let sparse_len = sparse_header + sparse_present().filter_map(|(_, v)| v.stored_len()).sum::<usize>();
    let mut end = out.len() - base + 2 * entries;
    for v in stored_var_values() {
        end += v.stored_len().unwrap_or(0);
        put_u16(out, offset_entry(end, v));
    }
    if sparse_count > 0 {
        end += sparse_len;
        put_u16(out, (end as u16 & OFFSET_MASK) | COMPLEX_BIT);
    }
    if back_pointer.is_some() {
        end += BACK_POINTER_LEN;
        put_u16(out, (end as u16 & OFFSET_MASK) | COMPLEX_BIT);
    }
    for v in stored_var_values() {
        put_value(out, v)?;
    }
    if sparse_count > 0 {
        put_u16(out, COMPLEX_ID_SPARSE_VECTOR);
        put_u16(out, sparse_count as u16);
        for (c, _) in sparse_present() {
            put_u16(out, c);
        }
        let mut rel = sparse_header;
        for (_, v) in sparse_present() {
            rel += v.stored_len().unwrap_or(0);
            put_u16(out, offset_entry(rel, v));
        }
        for (_, v) in sparse_present() {
            put_value(out, v)?;
        }
    }
    if let Some(rid) = back_pointer {
        put_u16(out, COMPLEX_ID_BACK_POINTER);
        out.extend_from_slice(&rid.to_bytes());
    }
    Ok(())
}

/// The 9 bytes of a forwarding stub pointing at `target`.
pub fn forwarding_stub(target: Rid) -> [u8; FORWARDING_STUB_LEN] {
    let r = target.to_bytes();
    [RecordType::ForwardingStub.code() << 1, r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]]
}

/// Appends a forwarding stub pointing at `target` to `out`.
pub fn encode_forwarding_stub(target: Rid, out: &mut Vec<u8>) {
    out.extend_from_slice(&forwarding_stub(target));
}

/// Decodes a forwarding stub (exactly 9 bytes) and returns the RID it points at.
pub fn decode_forwarding_stub(bytes: &[u8]) -> Result<Rid, RecordError> {
    let rtype = record_type(bytes)?;
    if rtype != RecordType::ForwardingStub {
        return Err(RecordError::UnexpectedRecordType { expected: "a forwarding stub", found: rtype });
    }
    if bytes.len() != FORWARDING_STUB_LEN {
        return Err(corrupt(0, "a forwarding stub must be 9 bytes"));
    }
    bytes.get(1..).and_then(Rid::from_bytes).ok_or(corrupt(1, "truncated forwarding stub"))
}

// ---------------------------------------------------------------------------------------
// Status byte helpers
// ---------------------------------------------------------------------------------------

/// The type of the record in `bytes`, from its status byte. Works for every record type,
/// stubs included, so a heap can look before it parses.
pub fn record_type(bytes: &[u8]) -> Result<RecordType, RecordError> {
    let status_a = *bytes.first().ok_or(corrupt(0, "record is empty"))?;
    if status_a & STATUS_A_RESERVED != 0 {
        return Err(corrupt(0, "reserved status bits are set"));
    }
    let rtype = RecordType::from_status(status_a).ok_or(corrupt(0, "invalid record type"))?;
    if rtype == RecordType::ForwardingStub && status_a != RecordType::ForwardingStub.code() << 1 {
        return Err(corrupt(0, "forwarding stub with status bits set"));
    }
    Ok(rtype)
}

/// Length of the record at the start of `bytes`, computed from the record itself (a stub is
/// 9 bytes; otherwise the end of the last variable-length entry, or of the null bitmap).
/// Fails when the record claims to extend past `bytes`.
pub fn record_length(bytes: &[u8]) -> Result<usize, RecordError> {
    let rtype = record_type(bytes)?;
    let len = if rtype == RecordType::ForwardingStub {
        FORWARDING_STUB_LEN
    } else {
        let status_a = bytes.first().copied().unwrap_or(0);
        let fixed_end = usize::from(rd_u16(bytes, 2).ok_or(corrupt(2, "truncated record header"))?);
        let n = usize::from(rd_u16(bytes, fixed_end).ok_or(corrupt(2, "column count is past the record end"))?);
        let mut pos = fixed_end + 2;
        if status_a & STATUS_A_NULL_BITMAP != 0 {
            pos += n.div_ceil(8);
        }
        if status_a & STATUS_A_VAR_COLUMNS != 0 {
            let entries = usize::from(rd_u16(bytes, pos).ok_or(corrupt(pos, "truncated variable-length count"))?);
            if entries == 0 {
                return Err(corrupt(pos, "variable-length section with no entries"));
            }
            let last_at = pos + 2 * entries;
            let last = rd_u16(bytes, last_at).ok_or(corrupt(last_at, "truncated variable-length offsets"))?;
            let end = usize::from(last & OFFSET_MASK);
            if end < last_at + 2 {
                return Err(corrupt(last_at, "variable-length data ends before it starts"));
            }
            end
        } else {
            pos
        }
    };
    if len > bytes.len() {
        return Err(corrupt(bytes.len(), "record extends past the available bytes"));
    }
    Ok(len)
}

fn change_type(bytes: &mut [u8], from: RecordType, to: RecordType) -> bool {
    match bytes.first_mut() {
        Some(status) if RecordType::from_status(*status) == Some(from) => {
            *status = (*status & !STATUS_A_TYPE_MASK) | (to.code() << 1);
            true
        }
        _ => false,
    }
}

/// Marks a record as a ghost in place (a delete that leaves the record for the ghost
/// cleanup task): primary becomes ghost data, index becomes ghost index. Returns the new type.
pub fn set_ghost(bytes: &mut [u8]) -> Result<RecordType, RecordError> {
    let rtype = record_type(bytes)?;
    let ghost = match rtype {
        RecordType::Primary => RecordType::GhostData,
        RecordType::Index => RecordType::GhostIndex,
        _ => return Err(RecordError::UnexpectedRecordType { expected: "a primary or index record", found: rtype }),
    };
    change_type(bytes, rtype, ghost);
    Ok(ghost)
}

/// Turns a ghost back into a live record in place (rollback of a delete, or an insert that
/// reuses a ghost). Returns the new type.
pub fn clear_ghost(bytes: &mut [u8]) -> Result<RecordType, RecordError> {
    let rtype = record_type(bytes)?;
    let live = match rtype {
        RecordType::GhostData => RecordType::Primary,
        RecordType::GhostIndex => RecordType::Index,
        _ => return Err(RecordError::UnexpectedRecordType { expected: "a ghost record", found: rtype }),
    };
    change_type(bytes, rtype, live);
    Ok(live)
}

/// Re-encodes the primary record `record` as a forwarded record remembering `stub`
/// (the row's original location), appending it to `out`. A forwarded record that moves
/// again is accepted too: its back pointer is replaced by `stub` (normally the same RID, as
/// the heap keeps one stub per row and repoints it).
pub fn to_forwarded_record(layout: &RowLayout, record: &[u8], stub: Rid, out: &mut Vec<u8>) -> Result<(), RecordError> {
    let view = RecordView::parse(layout, record)?;
    if !matches!(view.record_type(), RecordType::Primary | RecordType::Forwarded) {
        return Err(RecordError::UnexpectedRecordType {
            expected: "a primary or forwarded record",
            found: view.record_type(),
        });
    }
    let values = view.columns().collect::<Result<Vec<_>, _>>()?;
    encode_forwarded_record(layout, &values, stub, out)
}

/// Re-encodes the forwarded record `record` as a primary record without its back pointer
/// (the row moves back home, or the heap is rebuilt), appending it to `out`.
pub fn to_primary_record(layout: &RowLayout, record: &[u8], out: &mut Vec<u8>) -> Result<(), RecordError> {
    let view = RecordView::parse(layout, record)?;
    if view.record_type() != RecordType::Forwarded {
        return Err(RecordError::UnexpectedRecordType { expected: "a forwarded record", found: view.record_type() });
    }
    let values = view.columns().collect::<Result<Vec<_>, _>>()?;
    encode_record(layout, RecordType::Primary, &values, out)
}

// ---------------------------------------------------------------------------------------
// Decoding
// ---------------------------------------------------------------------------------------

fn rd_u16(b: &[u8], at: usize) -> Option<u16> {
    let s: [u8; 2] = b.get(at..at.checked_add(2)?)?.try_into().ok()?;
    Some(u16::from_le_bytes(s))
}

fn rd_u32(b: &[u8], at: usize) -> Option<u32> {
    let s: [u8; 4] = b.get(at..at.checked_add(4)?)?.try_into().ok()?;
    Some(u32::from_le_bytes(s))
}

/// Location of the sparse vector inside a record.
#[derive(Debug, Clone, Copy)]
struct SparseVector {
    /// Record offset of the vector (its complex id).
    start: usize,
    /// Number of sparse columns present.
    count: usize,
}

/// A zero-copy view of one FixedVar record (any type but a forwarding stub).
#[derive(Debug, Clone, Copy)]
pub struct RecordView<'a> {
    layout: &'a RowLayout,
    bytes: &'a [u8],
    rtype: RecordType,
    /// Columns stored in the record (`N`); later layout columns read as NULL.
    stored_columns: usize,
    /// Record offset of the null bitmap, when present.
    bitmap: Option<usize>,
    /// Record offset of the first end-offset entry.
    offsets_start: usize,
    /// Record offset where the first variable-length entry's data starts.
    data_start: usize,
    /// Stored entries of non-sparse variable-length columns.
    user_entries: usize,
    sparse: Option<SparseVector>,
    back_pointer: Option<Rid>,
}

impl<'a> RecordView<'a> {
    /// Parses `bytes`, which must be exactly one record, checking its structure: header,
    /// column count against the layout, offset arrays in order and inside the record, the
    /// sparse vector and the back pointer.
    pub fn parse(layout: &'a RowLayout, bytes: &'a [u8]) -> Result<Self, RecordError> {
        let rtype = record_type(bytes)?;
        if rtype == RecordType::ForwardingStub {
            return Err(RecordError::UnexpectedRecordType { expected: "a FixedVar record", found: rtype });
        }
        let len = bytes.len();
        let status_a = bytes.first().copied().unwrap_or(0);
        let status_b = *bytes.get(1).ok_or(corrupt(1, "truncated record header"))?;
        if status_b & STATUS_B_RESERVED != 0 {
            return Err(corrupt(1, "reserved status bits are set"));
        }
        let fixed_end = usize::from(rd_u16(bytes, 2).ok_or(corrupt(2, "truncated record header"))?);
        let n = usize::from(rd_u16(bytes, fixed_end).ok_or(corrupt(2, "column count is past the record end"))?);
        if n > layout.columns.len() {
            return Err(corrupt(fixed_end, "record has more columns than its layout"));
        }
        if layout.fixed_end.get(n).map(|&e| usize::from(e)) != Some(fixed_end) {
            return Err(corrupt(2, "fixed-length portion size does not match the layout"));
        }
        let mut pos = fixed_end + 2;
        let bitmap = if status_a & STATUS_A_NULL_BITMAP != 0 {
            let start = pos;
            pos += n.div_ceil(8);
            Some(start)
        } else {
            None
        };
        if pos > len {
            return Err(corrupt(len, "null bitmap is past the record end"));
        }

        let (entries, offsets_start, data_start) = if status_a & STATUS_A_VAR_COLUMNS != 0 {
            let entries = usize::from(rd_u16(bytes, pos).ok_or(corrupt(pos, "truncated variable-length count"))?);
            if entries == 0 {
                return Err(corrupt(pos, "variable-length section with no entries"));
            }
            let data_start = pos + 2 + 2 * entries;
            if data_start > len {
                return Err(corrupt(pos, "variable-length offsets are past the record end"));
            }
            (entries, pos + 2, data_start)
        } else {
            (0, pos, pos)
        };
        // Entry ends must be in order and the last must end the record; afterwards every
        // entry is a valid sub-slice of the record.
        let mut prev = data_start;
        for k in 0..entries {
            let at = offsets_start + 2 * k;
            let end =
                usize::from(rd_u16(bytes, at).ok_or(corrupt(at, "truncated variable-length offsets"))? & OFFSET_MASK);
            if end < prev || end > len {
                return Err(corrupt(at, "variable-length entry end is out of order or past the record"));
            }
            prev = end;
        }
        if prev != len {
            return Err(corrupt(prev, "record length does not match its contents"));
        }

        let has_sparse = status_b & STATUS_B_SPARSE_VECTOR != 0;
        let forwarded = rtype == RecordType::Forwarded;
        let extras = usize::from(has_sparse) + usize::from(forwarded);
        let user_entries = entries
            .checked_sub(extras)
            .ok_or(corrupt(offsets_start, "sparse vector or back pointer entry is missing"))?;
        if layout.var_prefix.get(n).map(|&v| usize::from(v)) < Some(user_entries) {
            return Err(corrupt(offsets_start, "more variable-length entries than the layout has columns"));
        }
        let mut view = RecordView {
            layout,
            bytes,
            rtype,
            stored_columns: n,
            bitmap,
            offsets_start,
            data_start,
            user_entries,
            sparse: None,
            back_pointer: None,
        };
        if forwarded {
            let (s, e, complex) = view.entry(entries - 1)?;
            let data = bytes.get(s..e).ok_or(corrupt(s, "back pointer is past the record end"))?;
            if !complex || data.len() != BACK_POINTER_LEN || rd_u16(data, 0) != Some(COMPLEX_ID_BACK_POINTER) {
                return Err(corrupt(s, "forwarded record without a valid back pointer"));
            }
            view.back_pointer = data.get(2..).and_then(Rid::from_bytes);
        }
        if has_sparse {
            view.sparse = Some(view.parse_sparse_vector(user_entries)?);
        }
        Ok(view)
    }

    /// Parses the record at the start of `bytes`, which may continue past it (the length
    /// comes from [`record_length`]).
    pub fn parse_prefix(layout: &'a RowLayout, bytes: &'a [u8]) -> Result<Self, RecordError> {
        let len = record_length(bytes)?;
        RecordView::parse(layout, bytes.get(..len).ok_or(corrupt(len, "truncated record"))?)
    }

    fn parse_sparse_vector(&self, entry: usize) -> Result<SparseVector, RecordError> {
        let (start, end, complex) = self.entry(entry)?;
        let layout = self.layout;
        let v = self.bytes.get(start..end).ok_or(corrupt(start, "sparse vector is past the record end"))?;
        if !complex || rd_u16(v, 0) != Some(COMPLEX_ID_SPARSE_VECTOR) {
            return Err(corrupt(start, "sparse vector entry is not a sparse vector"));
        }
        let count = usize::from(rd_u16(v, 2).ok_or(corrupt(start, "truncated sparse vector"))?);
        if count == 0 {
            return Err(corrupt(start, "empty sparse vector"));
        }
        let header = 4 + 4 * count;
        if header > v.len() {
            return Err(corrupt(start, "sparse vector header is past its end"));
        }
        let mut prev_id = None;
        let mut prev_end = header;
        for j in 0..count {
            let id = rd_u16(v, 4 + 2 * j).ok_or(corrupt(start, "truncated sparse vector"))?;
            let col = usize::from(id);
            if prev_id >= Some(id) {
                return Err(corrupt(start + 4 + 2 * j, "sparse column ids are not ascending"));
            }
            if col >= self.stored_columns || layout.slots.get(col) != Some(&Slot::Sparse) {
                return Err(corrupt(start + 4 + 2 * j, "sparse vector names a column that is not sparse"));
            }
            prev_id = Some(id);
            let at = 4 + 2 * count + 2 * j;
            let raw = rd_u16(v, at).ok_or(corrupt(start + at, "truncated sparse vector"))?;
            let end = usize::from(raw & OFFSET_MASK);
            if end < prev_end || end > v.len() {
                return Err(corrupt(start + at, "sparse value end is out of order or past the vector"));
            }
            prev_end = end;
        }
        if prev_end != v.len() {
            return Err(corrupt(start, "sparse vector length does not match its contents"));
        }
        Ok(SparseVector { start, count })
    }

    /// (start, end, complex) of variable-length entry `k`, all record offsets.
    fn entry(&self, k: usize) -> Result<(usize, usize, bool), RecordError> {
        let at = self.offsets_start + 2 * k;
        let raw = rd_u16(self.bytes, at).ok_or(corrupt(at, "truncated variable-length offsets"))?;
        let start = match k.checked_sub(1) {
            None => self.data_start,
            Some(p) => {
                let prev = self.offsets_start + 2 * p;
                usize::from(
                    rd_u16(self.bytes, prev).ok_or(corrupt(prev, "truncated variable-length offsets"))? & OFFSET_MASK,
                )
            }
        };
        let end = usize::from(raw & OFFSET_MASK);
        if start > end || end > self.bytes.len() {
            return Err(corrupt(at, "variable-length entry is out of range"));
        }
        Ok((start, end, raw & COMPLEX_BIT != 0))
    }

    pub fn record_type(&self) -> RecordType {
        self.rtype
    }

    pub fn layout(&self) -> &'a RowLayout {
        self.layout
    }

    /// The record's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of columns stored in the record (at most the layout's column count).
    pub fn stored_columns(&self) -> usize {
        self.stored_columns
    }

    /// For a forwarded record, the RID of the forwarding stub that points at it.
    pub fn back_pointer(&self) -> Option<Rid> {
        self.back_pointer
    }

    /// Whether the record carries a sparse vector (some sparse column is not NULL).
    pub fn has_sparse_vector(&self) -> bool {
        self.sparse.is_some()
    }

    fn null_bit(&self, i: usize) -> Result<bool, RecordError> {
        match self.bitmap {
            None => Ok(false),
            Some(start) => {
                let byte = self.bytes.get(start + i / 8).ok_or(corrupt(start, "truncated null bitmap"))?;
                Ok(byte & (1 << (i % 8)) != 0)
            }
        }
    }

    /// Whether column `i` is NULL.
    pub fn is_null(&self, i: usize) -> Result<bool, RecordError> {
        Ok(self.column(i)?.is_null())
    }

    /// The value of column `i`, borrowing from the record.
    pub fn column(&self, i: usize) -> Result<ColumnValue<'a>, RecordError> {
        let count = self.layout.columns.len();
        let out_of_range = RecordError::ColumnOutOfRange { index: i, count };
        let col = *self.layout.columns.get(i).ok_or(out_of_range.clone())?;
        let slot = *self.layout.slots.get(i).ok_or(out_of_range)?;
        if i >= self.stored_columns {
            // Column added to the layout after this record was written.
            return Ok(ColumnValue::Null);
        }
        let null = self.null_bit(i)?;
        if null && !col.nullable {
            return Err(corrupt(self.bitmap.unwrap_or(0), "NULL in a column that does not allow NULL"));
        }
        match slot {
            Slot::Fixed { offset, len } => {
                if null {
                    return Ok(ColumnValue::Null);
                }
                let (s, e) = (usize::from(offset), usize::from(offset) + usize::from(len));
                self.bytes
                    .get(s..e)
                    .map(ColumnValue::Inline)
                    .ok_or(corrupt(s, "fixed-length column is past the record end"))
            }
            Slot::Var { index } => {
                let k = usize::from(index);
                if k >= self.user_entries {
                    // Trailing NULL variable-length columns are not stored.
                    return if null {
                        Ok(ColumnValue::Null)
                    } else {
                        Err(corrupt(self.offsets_start, "non-NULL variable-length column is missing"))
                    };
                }
                let (s, e, complex) = self.entry(k)?;
                if null {
                    return if s == e && !complex {
                        Ok(ColumnValue::Null)
                    } else {
                        Err(corrupt(s, "NULL variable-length column has data"))
                    };
                }
                self.value(col, s, e, complex)
            }
            Slot::Sparse => {
                if null {
                    return Err(corrupt(self.bitmap.unwrap_or(0), "sparse column marked NULL in the null bitmap"));
                }
                self.sparse_value(i, col)
            }
        }
    }

    /// Decodes the value at record offsets `s..e`.
    fn value(&self, col: ColumnLayout, s: usize, e: usize, complex: bool) -> Result<ColumnValue<'a>, RecordError> {
        let data = self.bytes.get(s..e).ok_or(corrupt(s, "value is past the record end"))?;
        if complex {
            if !col.lob {
                return Err(corrupt(s, "off-row pointer in a column that cannot go off-row"));
            }
            return LobPointer::from_bytes(data).map(ColumnValue::Lob).map_err(|err| match err {
                RecordError::Corrupt { offset, reason } => corrupt(s + offset, reason),
                other => other,
            });
        }
        match col.fixed_len {
            Some(n) if data.len() != usize::from(n) => {
                Err(corrupt(s, "sparse fixed-length value has the wrong length"))
            }
            _ => Ok(ColumnValue::Inline(data)),
        }
    }

    fn sparse_value(&self, i: usize, col: ColumnLayout) -> Result<ColumnValue<'a>, RecordError> {
        let Some(sv) = self.sparse else {
            return Ok(ColumnValue::Null);
        };
        let v = self.bytes.get(sv.start..).ok_or(corrupt(sv.start, "sparse vector is past the record end"))?;
        let id_at =
            |j: usize| rd_u16(v, 4 + 2 * j).map(usize::from).ok_or(corrupt(sv.start, "truncated sparse vector"));
        let end_at = |j: usize| rd_u16(v, 4 + 2 * sv.count + 2 * j).ok_or(corrupt(sv.start, "truncated sparse vector"));
        // Ids are ascending (checked by parse): binary search.
        let (mut lo, mut hi) = (0, sv.count);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let id = id_at(mid)?;
            if id == i {
                let start = match mid.checked_sub(1) {
                    None => 4 + 4 * sv.count,
                    Some(p) => usize::from(end_at(p)? & OFFSET_MASK),
                };
                let raw = end_at(mid)?;
                let end = usize::from(raw & OFFSET_MASK);
                if start > end {
                    return Err(corrupt(sv.start, "sparse value ends before it starts"));
                }
                return self.value(col, sv.start + start, sv.start + end, raw & COMPLEX_BIT != 0);
            }
            if id < i {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        Ok(ColumnValue::Null)
    }

    /// Every column's value, in column order.
    pub fn columns(&self) -> impl Iterator<Item = Result<ColumnValue<'a>, RecordError>> + 'a {
        let view = *self;
        (0..self.layout.columns.len()).map(move |i| view.column(i))
    }

    /// Full consistency check for DBCC: every column decodes, the null bitmap has no stray
    /// bits, and the record respects the size limit.
    pub fn check(&self) -> Result<(), RecordError> {
        let limit = if self.rtype == RecordType::Forwarded { MAX_RECORD_LEN } else { MAX_IN_ROW_RECORD };
        if self.bytes.len() > limit {
            return Err(corrupt(0, "record is larger than the maximum row size"));
        }
        if let Some(start) = self.bitmap {
            let n = self.stored_columns;
            // Bits used in the last bitmap byte; the rest must be zero.
            let used = n % 8;
            if used != 0 {
                let last = start + n / 8;
                let byte = self.bytes.get(last).ok_or(corrupt(last, "truncated null bitmap"))?;
                if byte >> used != 0 {
                    return Err(corrupt(last, "null bitmap has bits past the last column"));
                }
            }
        }
        for value in self.columns() {
            value?;
        }
        Ok(())
    }
}

/// The fixed-length columns of a primary record that stores every column of its layout,
/// read without [`RecordView::parse`]: a scan decoding a row's fixed-length columns
/// skips the checks of the variable-length part it does not read (most of a narrow
/// row's decoding cost). Checks what its own reads depend on (header, column count,
/// fixed portion, null bitmap); anything else (another record type, a record written
/// before columns were added, a NULL where the layout allows none) is left to
/// `RecordView`, which reports what is wrong.
#[derive(Debug, Clone, Copy)]
pub struct FixedPart<'a> {
    layout: &'a RowLayout,
    bytes: &'a [u8],
    bitmap: Option<usize>,
}

impl<'a> FixedPart<'a> {
    /// None when the record is not one this reads: parse it with [`RecordView::parse`].
    #[inline]
    pub fn new(layout: &'a RowLayout, bytes: &'a [u8]) -> Option<Self> {
        let &[status_a, status_b, f0, f1, ..] = bytes else { return None };
        if status_a & (STATUS_A_RESERVED | STATUS_A_TYPE_MASK) != 0 || status_b & STATUS_B_RESERVED != 0 {
            return None; // not a primary record (type code 0), or damaged
        }
        let n = layout.columns.len();
        let fixed_end = u16::from_le_bytes([f0, f1]);
        if layout.fixed_end.get(n) != Some(&fixed_end) {
            return None;
        }
        let at = usize::from(fixed_end);
        if rd_u16(bytes, at).map(usize::from) != Some(n) {
            return None;
        }
        let bitmap = if status_a & STATUS_A_NULL_BITMAP != 0 {
            if at + 2 + n.div_ceil(8) > bytes.len() {
                return None;
            }
            Some(at + 2)
        } else {
            None
        };
        Some(FixedPart { layout, bytes, bitmap })
    }

    /// Column `i` when it is stored in the fixed-length portion; None for the others
    /// (and for a NULL the layout does not allow): read those with `RecordView`.
    #[inline]
    pub fn column(&self, i: usize) -> Option<ColumnValue<'a>> {
        let Slot::Fixed { offset, len } = *self.layout.slots.get(i)? else { return None };
        if let Some(start) = self.bitmap {
            if self.bytes.get(start + i / 8)? & (1 << (i % 8)) != 0 {
                return self.layout.columns[i].nullable.then_some(ColumnValue::Null);
            }
        }
        let s = usize::from(offset);
        self.bytes.get(s..s + usize::from(len)).map(ColumnValue::Inline)
    }
}

// ---------------------------------------------------------------------------------------
// Off-row planning
// ---------------------------------------------------------------------------------------

/// Decides which values go off-row so that the record fits in [`MAX_IN_ROW_RECORD`] bytes.
/// `value_lens[i]` is the encoded length of column `i`'s value (`None`: NULL). Values over
/// 8000 bytes always go off-row; then the largest remaining values of `lob` columns go
/// off-row, one at a time, until the record fits (as SQL Server moves the widest
/// columns first). Returns one flag per column, `true` = store a [`LobPointer`].
///
/// Fails with [`RecordError::ValueTooLong`] for an over-8000-byte value of a column that
/// cannot go off-row, and with [`RecordError::RowTooLarge`] when even moving every movable
/// value does not make the row fit.
pub fn plan_off_row(layout: &RowLayout, value_lens: &[Option<usize>]) -> Result<Vec<bool>, RecordError> {
    let n = layout.columns.len();
    if value_lens.len() != n {
        return Err(RecordError::ColumnCountMismatch { expected: n, got: value_lens.len() });
    }
    let mut off_row = vec![false; n];
    for (column, ((c, len), off)) in layout.columns.iter().zip(value_lens).zip(off_row.iter_mut()).enumerate() {
        if let Some(len) = *len {
            if c.fixed_len.is_none() && len > MAX_INLINE_VALUE {
                if !c.lob {
                    return Err(RecordError::ValueTooLong { column, len });
                }
                *off = true;
            }
        }
    }
    loop {
        let size = layout.record_size(false, |i| {
            let len = value_lens.get(i).copied().flatten()?;
            let c = layout.columns.get(i)?;
            Some(match (c.fixed_len, off_row.get(i)) {
                (Some(fixed), _) => usize::from(fixed),
                (None, Some(true)) => LOB_POINTER_LEN,
                (None, _) => len,
            })
        });
        if size <= MAX_IN_ROW_RECORD {
            return Ok(off_row);
        }
        // The widest in-row movable value; moving one no longer than a pointer saves nothing.
        let widest = layout
            .columns
            .iter()
            .zip(value_lens)
            .zip(&off_row)
            .enumerate()
            .filter(|(_, ((c, _), off))| c.lob && !**off)
            .filter_map(|(i, ((_, len), _))| len.filter(|&l| l > LOB_POINTER_LEN).map(|l| (l, i)))
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        match widest.and_then(|(_, i)| off_row.get_mut(i)) {
            Some(flag) => *flag = true,
            None => return Err(RecordError::RowTooLarge { size }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(cols: &[ColumnLayout]) -> RowLayout {
        RowLayout::new(cols.to_vec()).expect("valid layout")
    }

    fn encode(l: &RowLayout, values: &[ColumnValue]) -> Vec<u8> {
        let mut out = Vec::new();
        encode_record(l, RecordType::Primary, values, &mut out).expect("encodes");
        out
    }

    fn decode_all<'a>(l: &'a RowLayout, bytes: &'a [u8]) -> Vec<ColumnValue<'a>> {
        let view = RecordView::parse(l, bytes).expect("parses");
        view.check().expect("checks");
        view.columns().collect::<Result<_, _>>().expect("decodes")
    }

    const RID: Rid = Rid { file_id: 1, page_no: 153, slot: 7 };

    #[test]
    fn fixed_only_record_is_byte_exact() {
        let l = layout(&[ColumnLayout::fixed(4), ColumnLayout::fixed(2)]);
        let rec = encode(&l, &[ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Inline(&[5, 6])]);
        // No nullable column: no null bitmap; no variable columns: no var section.
        assert_eq!(rec, vec![0x00, 0x00, 10, 0, 1, 2, 3, 4, 5, 6, 2, 0]);
        assert_eq!(record_length(&rec), Ok(rec.len()));
        let vals = decode_all(&l, &rec);
        assert_eq!(vals, vec![ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Inline(&[5, 6])]);
    }

    /// `FixedPart` reads what `RecordView` reads for fixed-length columns, and leaves
    /// the other columns and the records it does not vouch for to it.
    #[test]
    fn fixed_part_agrees_with_the_full_parse() {
        let l = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::fixed(2).with_nullable(),
        ]);
        for values in [
            [ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Inline(b"abc"), ColumnValue::Inline(&[5, 6])],
            [ColumnValue::Inline(&[7, 8, 9, 10]), ColumnValue::Null, ColumnValue::Null],
        ] {
            let rec = encode(&l, &values);
            let f = FixedPart::new(&l, &rec).expect("a primary record with every column");
            let view = RecordView::parse(&l, &rec).expect("parses");
            assert_eq!(f.column(0), Some(view.column(0).expect("decodes")));
            assert_eq!(f.column(1), None, "variable-length: not read here");
            assert_eq!(f.column(2), Some(view.column(2).expect("decodes")));
            assert_eq!(f.column(3), None, "past the layout");
        }
        let rec = encode(&l, &[ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Null, ColumnValue::Null]);
        // Another record type, a fixed portion of another size, a truncated record.
        let mut other = rec.clone();
        other[0] |= RecordType::Index.code() << 1;
        assert!(FixedPart::new(&l, &other).is_none());
        let mut short = rec.clone();
        short[2] -= 1;
        assert!(FixedPart::new(&l, &short).is_none());
        assert!(FixedPart::new(&l, &rec[..3]).is_none());
        // A NULL in a column that allows none is the full parse's to report.
        let strict = layout(&[ColumnLayout::fixed(4), ColumnLayout::fixed(2).with_nullable()]);
        let mut bad = encode(&strict, &[ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Null]);
        let bitmap = usize::from(u16::from_le_bytes([bad[2], bad[3]])) + 2;
        bad[bitmap] |= 1;
        assert_eq!(FixedPart::new(&strict, &bad).and_then(|f| f.column(0)), None);
        assert!(RecordView::parse(&strict, &bad).and_then(|v| v.column(0)).is_err());
    }

    #[test]
    fn mixed_record_is_byte_exact() {
        let l = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::fixed(1).with_nullable(),
            ColumnLayout::variable(),
        ]);
        let rec = encode(
            &l,
            &[ColumnValue::Inline(b"abcd"), ColumnValue::Null, ColumnValue::Null, ColumnValue::Inline(b"xy")],
        );
        let expected: Vec<u8> = vec![
            0x30, 0x00, 9, 0, // status A: bitmap + var; status B; fixed end 9
            b'a', b'b', b'c', b'd', 0, // fixed data, NULL column zeroed
            4, 0,      // column count
            0b0110, // null bitmap: columns 1 and 2
            2, 0, // two var entries
            18, 0, // column 1: empty (NULL)
            20, 0, // column 3
            b'x', b'y',
        ];
        assert_eq!(rec, expected);
        let vals = decode_all(&l, &rec);
        assert_eq!(
            vals,
            vec![ColumnValue::Inline(b"abcd"), ColumnValue::Null, ColumnValue::Null, ColumnValue::Inline(b"xy")]
        );
    }

    #[test]
    fn empty_string_is_not_null() {
        let l = layout(&[ColumnLayout::variable().with_nullable(), ColumnLayout::variable().with_nullable()]);
        let rec = encode(&l, &[ColumnValue::Inline(b""), ColumnValue::Inline(b"z")]);
        assert_eq!(decode_all(&l, &rec), vec![ColumnValue::Inline(b""), ColumnValue::Inline(b"z")]);
    }

    #[test]
    fn trailing_null_var_columns_are_not_stored() {
        let l = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::variable().with_nullable(),
        ]);
        let id = ColumnValue::Inline(&[0, 0, 0, 1]);
        let full = encode(&l, &[id, ColumnValue::Inline(b"a"), ColumnValue::Null, ColumnValue::Inline(b"c")]);
        let trailing = encode(&l, &[id, ColumnValue::Inline(b"a"), ColumnValue::Null, ColumnValue::Null]);
        let all_null = encode(&l, &[id, ColumnValue::Null, ColumnValue::Null, ColumnValue::Null]);
        // Dropping the last value removes its byte, its offset entry and the middle NULL's entry.
        assert_eq!(full.len() - trailing.len(), 1 + 2 + 2);
        // No stored var column at all: no var section either.
        assert_eq!(all_null.len(), 4 + 4 + 2 + 1);
        assert_eq!(all_null[0] & STATUS_A_VAR_COLUMNS, 0);
        let vals = decode_all(&l, &trailing);
        assert_eq!(vals[3], ColumnValue::Null);
        assert_eq!(decode_all(&l, &all_null)[1], ColumnValue::Null);
    }

    #[test]
    fn sparse_null_columns_cost_nothing() {
        let mut cols = vec![ColumnLayout::fixed(4)];
        cols.extend(std::iter::repeat_n(ColumnLayout::variable().with_sparse(), 50));
        let with_sparse = layout(&cols);
        let plain = layout(&[ColumnLayout::fixed(4)]);
        let id = ColumnValue::Inline(&[1, 2, 3, 4]);
        let mut values = vec![id];
        values.extend(std::iter::repeat_n(ColumnValue::Null, 50));
        let a = encode(&with_sparse, &values);
        let b = encode(&plain, &[id]);
        // Only the column count differs in value; no bitmap (sparse columns are never in it).
        assert_eq!(a.len(), b.len());
        assert!(!with_sparse.has_null_bitmap());
        let view = RecordView::parse(&with_sparse, &a).expect("parses");
        assert!(!view.has_sparse_vector());
        assert!(view.is_null(30).expect("in range"));
    }

    #[test]
    fn sparse_vector_is_byte_exact() {
        let l = layout(&[
            ColumnLayout::fixed(2),
            ColumnLayout::fixed(4).with_sparse(),
            ColumnLayout::variable().with_sparse(),
            ColumnLayout::variable().with_sparse(),
        ]);
        let rec = encode(
            &l,
            &[
                ColumnValue::Inline(&[9, 9]),
                ColumnValue::Inline(&[1, 2, 3, 4]),
                ColumnValue::Null,
                ColumnValue::Inline(b"hi"),
            ],
        );
        let expected: Vec<u8> = vec![
            0x20, 0x01, 6, 0, 9, 9, // header (var section, sparse vector), fixed column 0
            4, 0, // column count, no bitmap
            1, 0, 30, 0x80, // one entry: the sparse vector, complex, ends at 30
            5, 0, 2, 0, // complex id 5, two sparse columns
            1, 0, 3, 0, // column ids 1 and 3
            16, 0, 18, 0, // value ends relative to the vector
            1, 2, 3, 4, b'h', b'i',
        ];
        assert_eq!(rec, expected);
        let vals = decode_all(&l, &rec);
        assert_eq!(vals[1], ColumnValue::Inline(&[1, 2, 3, 4]));
        assert_eq!(vals[2], ColumnValue::Null);
        assert_eq!(vals[3], ColumnValue::Inline(b"hi"));
    }

    #[test]
    fn lob_pointer_in_row_and_in_sparse_vector() {
        let l =
            layout(&[ColumnLayout::lob().with_nullable(), ColumnLayout::lob().with_sparse(), ColumnLayout::variable()]);
        let p1 = LobPointer { total_len: 100_000, root: RID };
        let p2 = LobPointer { total_len: 9_000, root: Rid { file_id: 3, page_no: 1 << 20, slot: 0 } };
        let rec = encode(&l, &[ColumnValue::Lob(p1), ColumnValue::Lob(p2), ColumnValue::Inline(b"tail")]);
        assert_eq!(
            decode_all(&l, &rec),
            vec![ColumnValue::Lob(p1), ColumnValue::Lob(p2), ColumnValue::Inline(b"tail")]
        );
        assert_eq!(LobPointer::from_bytes(&p1.to_bytes().expect("fits")), Ok(p1));
        // A pointer in a column that cannot go off-row is refused.
        let plain = layout(&[ColumnLayout::variable()]);
        let mut out = Vec::new();
        assert_eq!(
            encode_record(&plain, RecordType::Primary, &[ColumnValue::Lob(p1)], &mut out),
            Err(RecordError::LobNotAllowed { column: 0 })
        );
        let too_big = LobPointer { total_len: u64::from(u32::MAX) + 1, root: RID };
        assert_eq!(
            encode_record(
                &l,
                RecordType::Primary,
                &[ColumnValue::Lob(too_big), ColumnValue::Null, ColumnValue::Inline(b"")],
                &mut out
            ),
            Err(RecordError::LobTooLarge(too_big.total_len))
        );
        assert!(out.is_empty());
    }

    #[test]
    fn forwarding_stub_round_trip() {
        let stub = forwarding_stub(RID);
        assert_eq!(stub, [0x04, 153, 0, 0, 0, 1, 0, 7, 0]);
        assert_eq!(decode_forwarding_stub(&stub), Ok(RID));
        assert_eq!(record_type(&stub), Ok(RecordType::ForwardingStub));
        assert_eq!(record_length(&stub), Ok(9));
        let mut out = vec![0xEE];
        encode_forwarding_stub(RID, &mut out);
        assert_eq!(&out[1..], &stub);
        assert!(decode_forwarding_stub(&stub[..8]).is_err());
        let l = layout(&[ColumnLayout::fixed(1)]);
        assert!(matches!(RecordView::parse(&l, &stub), Err(RecordError::UnexpectedRecordType { .. })));
        let rec = encode(&l, &[ColumnValue::Inline(&[1])]);
        assert!(matches!(decode_forwarding_stub(&rec), Err(RecordError::UnexpectedRecordType { .. })));
    }

    #[test]
    fn forwarded_record_keeps_back_pointer() {
        let l = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::variable().with_sparse(),
        ]);
        let values = [ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Null, ColumnValue::Inline(b"s")];
        let primary = encode(&l, &values);
        let mut fwd = Vec::new();
        to_forwarded_record(&l, &primary, RID, &mut fwd).expect("forwards");
        assert_eq!(fwd.len(), primary.len() + 2 + BACK_POINTER_LEN);
        assert_eq!(encoded_len(&l, RecordType::Forwarded, &values), Ok(fwd.len()));
        let view = RecordView::parse(&l, &fwd).expect("parses");
        assert_eq!(view.record_type(), RecordType::Forwarded);
        assert_eq!(view.back_pointer(), Some(RID));
        assert_eq!(decode_all(&l, &fwd), values.to_vec());
        let mut back = Vec::new();
        to_primary_record(&l, &fwd, &mut back).expect("unforwards");
        assert_eq!(back, primary);
        assert!(matches!(
            encode_record(&l, RecordType::Forwarded, &values, &mut Vec::new()),
            Err(RecordError::UnexpectedRecordType { .. })
        ));
    }

    #[test]
    fn forwarded_record_of_a_full_row_still_fits_a_page() {
        let l = layout(&[ColumnLayout::variable(), ColumnLayout::variable()]);
        let a = vec![7u8; 8000];
        let b = vec![8u8; MAX_IN_ROW_RECORD - 8000 - 4 - 2 - 2 - 4];
        let values = [ColumnValue::Inline(&a), ColumnValue::Inline(&b)];
        let rec = encode(&l, &values);
        assert_eq!(rec.len(), MAX_IN_ROW_RECORD);
        let mut fwd = Vec::new();
        encode_forwarded_record(&l, &values, RID, &mut fwd).expect("forwards");
        assert_eq!(fwd.len(), MAX_RECORD_LEN);
        assert!(MAX_RECORD_LEN <= crate::page::MAX_RECORD_ON_PAGE);
        RecordView::parse(&l, &fwd).and_then(|v| v.check()).expect("valid");
    }

    #[test]
    fn ghost_round_trip() {
        let l = layout(&[ColumnLayout::fixed(1)]);
        let mut rec = encode(&l, &[ColumnValue::Inline(&[1])]);
        assert_eq!(set_ghost(&mut rec), Ok(RecordType::GhostData));
        assert_eq!(RecordView::parse(&l, &rec).map(|v| v.record_type()), Ok(RecordType::GhostData));
        assert!(set_ghost(&mut rec).is_err());
        assert_eq!(clear_ghost(&mut rec), Ok(RecordType::Primary));
        let mut idx = Vec::new();
        encode_record(&l, RecordType::Index, &[ColumnValue::Inline(&[1])], &mut idx).expect("encodes");
        assert_eq!(set_ghost(&mut idx), Ok(RecordType::GhostIndex));
        assert_eq!(clear_ghost(&mut idx), Ok(RecordType::Index));
        let mut stub = forwarding_stub(RID);
        assert!(set_ghost(&mut stub).is_err());
        assert!(set_ghost(&mut []).is_err());
    }

    #[test]
    fn value_errors() {
        let l = layout(&[ColumnLayout::fixed(4), ColumnLayout::variable()]);
        let mut out = vec![1, 2, 3];
        let e =
            encode_record(&l, RecordType::Primary, &[ColumnValue::Inline(&[1]), ColumnValue::Inline(b"")], &mut out);
        assert_eq!(e, Err(RecordError::FixedLengthMismatch { column: 0, expected: 4, got: 1 }));
        let e = encode_record(&l, RecordType::Primary, &[ColumnValue::Inline(&[0; 4])], &mut out);
        assert_eq!(e, Err(RecordError::ColumnCountMismatch { expected: 2, got: 1 }));
        let e = encode_record(&l, RecordType::Primary, &[ColumnValue::Null, ColumnValue::Inline(b"")], &mut out);
        assert_eq!(e, Err(RecordError::NullNotAllowed { column: 0 }));
        let big = vec![0u8; 8001];
        let e = encode_record(
            &l,
            RecordType::Primary,
            &[ColumnValue::Inline(&[0; 4]), ColumnValue::Inline(&big)],
            &mut out,
        );
        assert_eq!(e, Err(RecordError::ValueTooLong { column: 1, len: 8001 }));
        assert_eq!(out, vec![1, 2, 3], "output untouched on error");
    }

    #[test]
    fn row_too_large_is_error_511() {
        let l = layout(&[ColumnLayout::variable(), ColumnLayout::variable()]);
        let a = vec![0u8; 8000];
        let b = vec![0u8; 100];
        let err = encode_record(
            &l,
            RecordType::Primary,
            &[ColumnValue::Inline(&a), ColumnValue::Inline(&b)],
            &mut Vec::new(),
        )
        .expect_err("too large");
        assert_eq!(err, RecordError::RowTooLarge { size: 8112 });
        assert_eq!(err.sql_error_number(), Some(511));
        assert_eq!(
            err.to_string(),
            "Cannot create a row of size 8112 which is greater than the allowable maximum row size of 8060."
        );
    }

    #[test]
    fn layout_errors() {
        assert_eq!(RowLayout::new(vec![]), Err(RecordError::NoColumns));
        assert!(matches!(
            RowLayout::new(vec![ColumnLayout::fixed(4).with_nullable(); 1025]),
            Err(RecordError::TooManyColumns { count: 1025, max: 1024 })
        ));
        let mut wide = vec![ColumnLayout::fixed(4)];
        wide.extend(std::iter::repeat_n(ColumnLayout::variable().with_sparse(), 29_999));
        assert!(RowLayout::new(wide.clone()).is_ok());
        wide.push(ColumnLayout::variable().with_sparse());
        assert!(matches!(RowLayout::new(wide), Err(RecordError::TooManyColumns { .. })));
        let sparse_not_null = ColumnLayout { sparse: true, ..ColumnLayout::variable() };
        assert!(matches!(RowLayout::new(vec![sparse_not_null]), Err(RecordError::InvalidColumnLayout { .. })));
        let fixed_lob = ColumnLayout { lob: true, ..ColumnLayout::fixed(8) };
        assert!(matches!(RowLayout::new(vec![fixed_lob]), Err(RecordError::InvalidColumnLayout { .. })));
        assert!(matches!(RowLayout::new(vec![ColumnLayout::fixed(0)]), Err(RecordError::InvalidColumnLayout { .. })));
        let e = RowLayout::new(vec![ColumnLayout::fixed(8000), ColumnLayout::fixed(100)]).expect_err("too wide");
        assert_eq!(e, RecordError::MinRowSizeTooLarge { min: 8106, overhead: 6 });
        assert_eq!(e.sql_error_number(), Some(1701));
    }

    #[test]
    fn appended_columns_read_as_null() {
        let old = layout(&[ColumnLayout::fixed(4), ColumnLayout::variable()]);
        let rec = encode(&old, &[ColumnValue::Inline(&[1, 2, 3, 4]), ColumnValue::Inline(b"v")]);
        let new = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::variable(),
            ColumnLayout::fixed(8).with_nullable(),
            ColumnLayout::variable().with_nullable(),
            ColumnLayout::variable().with_sparse(),
        ]);
        let view = RecordView::parse(&new, &rec).expect("old record parses with the new layout");
        view.check().expect("consistent");
        assert_eq!(view.stored_columns(), 2);
        assert_eq!(view.column(1), Ok(ColumnValue::Inline(b"v")));
        for i in 2..5 {
            assert_eq!(view.column(i), Ok(ColumnValue::Null));
        }
        assert!(matches!(view.column(5), Err(RecordError::ColumnOutOfRange { index: 5, count: 5 })));
        // The reverse (a layout with fewer columns than the record) is corruption.
        let rec_new = encode(
            &new,
            &[
                ColumnValue::Inline(&[1, 2, 3, 4]),
                ColumnValue::Inline(b"v"),
                ColumnValue::Null,
                ColumnValue::Null,
                ColumnValue::Null,
            ],
        );
        assert!(RecordView::parse(&old, &rec_new).is_err());
    }

    #[test]
    fn parse_prefix_and_record_length() {
        let l = layout(&[ColumnLayout::fixed(2), ColumnLayout::variable().with_nullable()]);
        let mut rec = encode(&l, &[ColumnValue::Inline(&[1, 2]), ColumnValue::Inline(b"abc")]);
        let len = rec.len();
        rec.extend_from_slice(&[0xAA; 5]);
        assert_eq!(record_length(&rec), Ok(len));
        assert!(RecordView::parse(&l, &rec).is_err(), "trailing bytes are not part of a record");
        let view = RecordView::parse_prefix(&l, &rec).expect("parses");
        assert_eq!(view.bytes().len(), len);
        assert!(record_length(&rec[..len - 1]).is_err());
    }

    #[test]
    fn corruption_is_detected() {
        let l = layout(&[ColumnLayout::fixed(2), ColumnLayout::variable(), ColumnLayout::lob().with_nullable()]);
        let p = LobPointer { total_len: 20_000, root: RID };
        let rec = encode(&l, &[ColumnValue::Inline(&[1, 2]), ColumnValue::Inline(b"abc"), ColumnValue::Lob(p)]);
        let check = |b: &[u8]| RecordView::parse(&l, b).and_then(|v| v.check());
        assert_eq!(check(&rec), Ok(()));
        // Truncated anywhere.
        for cut in 0..rec.len() {
            assert!(check(&rec[..cut]).is_err(), "cut at {cut}");
        }
        // Reserved status bits, invalid type.
        let mut bad = rec.clone();
        bad[0] |= 0x80;
        assert!(check(&bad).is_err());
        let mut bad = rec.clone();
        bad[0] |= 0x0E;
        assert!(check(&bad).is_err());
        // Non-nullable column marked NULL.
        let mut bad = rec.clone();
        let bitmap = usize::from(u16::from_le_bytes([rec[2], rec[3]])) + 2;
        bad[bitmap] |= 0b010;
        assert!(check(&bad).is_err());
        // Complex bit removed from the LOB pointer entry: fine structurally, data is inline.
        // Complex bit added to a non-LOB column: corrupt.
        let mut bad = rec.clone();
        let first_offset = bitmap + 1 + 2;
        bad[first_offset + 1] |= 0x80;
        assert!(check(&bad).is_err());
        // LOB pointer with a wrong complex id.
        let mut bad = rec.clone();
        let n = bad.len();
        bad[n - LOB_POINTER_LEN] = 9;
        assert!(check(&bad).is_err());
    }

    #[test]
    fn plan_off_row_moves_widest_first() {
        let l = layout(&[
            ColumnLayout::fixed(4),
            ColumnLayout::lob().with_nullable(),
            ColumnLayout::lob().with_nullable(),
            ColumnLayout::lob(),
        ]);
        // Fits as is.
        assert_eq!(plan_off_row(&l, &[Some(4), Some(10), None, Some(100)]), Ok(vec![false; 4]));
        // Over 8000 always goes off-row.
        assert_eq!(plan_off_row(&l, &[Some(4), Some(8001), None, Some(10)]), Ok(vec![false, true, false, false]));
        // 5000 + 4000 does not fit: the wider goes.
        assert_eq!(plan_off_row(&l, &[Some(4), Some(4000), Some(5000), Some(10)]), Ok(vec![false, false, true, false]));
        // Three of 3000: one must go, the lowest column id on ties.
        assert_eq!(
            plan_off_row(&l, &[Some(4), Some(3000), Some(3000), Some(3000)]),
            Ok(vec![false, true, false, false])
        );
        // Three of 4100: two must go.
        assert_eq!(
            plan_off_row(&l, &[Some(4), Some(4100), Some(4100), Some(4100)]),
            Ok(vec![false, true, true, false])
        );
        let plain = layout(&[ColumnLayout::variable(), ColumnLayout::variable()]);
        assert_eq!(
            plan_off_row(&plain, &[Some(8001), Some(0)]),
            Err(RecordError::ValueTooLong { column: 0, len: 8001 })
        );
        assert!(matches!(plan_off_row(&plain, &[Some(5000), Some(5000)]), Err(RecordError::RowTooLarge { .. })));
        assert!(matches!(plan_off_row(&plain, &[Some(5000)]), Err(RecordError::ColumnCountMismatch { .. })));
    }

    #[test]
    fn rid_encoding_and_display() {
        let r = Rid::new(PageId::new(2, 0x0102_0304), 0x0506);
        assert_eq!(r.to_bytes(), [4, 3, 2, 1, 2, 0, 6, 5]);
        assert_eq!(Rid::from_bytes(&r.to_bytes()), Some(r));
        assert_eq!(Rid::from_bytes(&[0; 7]), None);
        assert_eq!(r.page_id(), PageId::new(2, 0x0102_0304));
        assert_eq!(RID.to_string(), "(1:153:7)");
    }
}
