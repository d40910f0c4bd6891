//! The byte encoding of one column value inside a row: what [`encode`] writes and
//! [`decode`] reads back. Fixed-length types always take exactly
//! [`SqlType::fixed_storage_len`] bytes; variable-length types take the bytes of the value
//! (the row format records their length). NULL is the row format's business (its null
//! bitmap): [`encode`] writes zeros for a NULL of a fixed-length type and nothing for a
//! variable-length one, and [`decode`] never returns NULL.
//!
//! All integers are little-endian. The layouts follow SQL Server's on-disk formats where
//! they are known:
//!
//! | type | bytes | layout |
//! |---|---|---|
//! | bit | 1 | 0 or 1 (SQL Server packs bit columns 8 to a byte; the row format may too) |
//! | tinyint / smallint / int / bigint | 1 / 2 / 4 / 8 | two's complement |
//! | decimal(p,s), numeric(p,s) | 5 / 9 / 13 / 17 for p 1-9 / 10-19 / 20-28 / 29-38 | sign byte (1 = positive or zero, 0 = negative), then the unscaled magnitude in 4 / 8 / 12 / 16 bytes |
//! | money | 8 | the i64 of 1/10000 units as two 4-byte halves, high half first (SQL Server's order) |
//! | smallmoney | 4 | i32 of 1/10000 units |
//! | real / float | 4 / 8 | IEEE 754 binary32 / binary64 |
//! | date | 3 | days since 0001-01-01 |
//! | time(n) | 3 (n 0-2), 4 (n 3-4), 5 (n 5-7) | time since midnight in units of 10^-n s |
//! | datetime2(n) | time(n) bytes + 3 | time as time(n), then the date as date |
//! | datetimeoffset(n) | datetime2(n) bytes + 2 | UTC date and time as datetime2(n), then the offset in minutes (i16) |
//! | datetime | 8 | 1/300 s ticks since midnight (u32), then days since 1900-01-01 (i32) |
//! | smalldatetime | 4 | minutes since midnight (u16), then days since 1900-01-01 (u16) |
//! | char(n) | n | the column collation's code page (1252 by default), blank-padded |
//! | varchar(n / max) | length of value | the column collation's code page, 1252 by default ('?' for characters outside it) |
//! | nchar(n) | 2n | UTF-16LE, blank-padded |
//! | nvarchar(n / max), xml | length of value | UTF-16LE (xml is kept as text for now) |
//! | binary(n) | n | the bytes, zero-padded |
//! | varbinary(n / max) | length of value | the bytes |
//! | uniqueidentifier | 16 | the stored bytes (.NET Guid order) |
//! | sql_variant | 2 + properties + value | the base type's TDS type id, the number of property bytes, the properties (see [`put_variant_header`]), then the value encoded as its base type |

use crate::calendar::{self, TICKS_PER_DAY};
use crate::codepage::CodePage;
use crate::error::SqlError;
use crate::sqltype::{decimal_magnitude_len, time_storage_len, Length, SqlType};
use crate::value::{fit_str, Value};

/// Appends the encoding of `value` as a value of column type `ty`. The value must
/// already be of the type's family and fit it ([`Value::check_type`]): wrong family is
/// Msg 206, out of range 8115 or the type's overflow error, too long 8152 (trailing
/// spaces beyond a character length are dropped, as SQL Server does). What is written
/// decodes to `value.fit_to(ty)`. Nothing is written when an error is returned.
pub fn encode(value: &Value, ty: &SqlType, out: &mut Vec<u8>) -> Result<(), SqlError> {
    encode_in(value, ty, CodePage::CP1252, out)
}

/// [`encode`] for a column whose collation has code page `cp`: char and varchar text is
/// written in it ('?' for characters it lacks).
pub fn encode_in(value: &Value, ty: &SqlType, cp: CodePage, out: &mut Vec<u8>) -> Result<(), SqlError> {
    value.check_type(ty)?;
    // text, ntext and image are stored as the MAX types are.
    match (value, ty.max_equivalent()) {
        (Value::Null, _) => {
            if let Some(n) = ty.fixed_storage_len() {
                out.resize(out.len() + usize::from(n), 0);
            }
        }
        (Value::Bit(b), _) => out.push(u8::from(*b)),
        (Value::TinyInt(v), _) => out.push(*v),
        (Value::SmallInt(v), _) => out.extend_from_slice(&v.to_le_bytes()),
        (Value::Int(v), _) => out.extend_from_slice(&v.to_le_bytes()),
        (Value::BigInt(v), _) => out.extend_from_slice(&v.to_le_bytes()),
        (Value::Decimal { value, .. }, SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. }) => {
            out.push(u8::from(*value >= 0));
            let n = usize::from(decimal_magnitude_len(precision));
            out.extend_from_slice(&value.unsigned_abs().to_le_bytes()[..n]);
        }
        (Value::Money(m), SqlType::SmallMoney) => out.extend_from_slice(&(*m as i32).to_le_bytes()),
        (Value::Money(m), _) => {
            out.extend_from_slice(&((*m >> 32) as i32).to_le_bytes());
            out.extend_from_slice(&(*m as u32).to_le_bytes());
        }
        (Value::Real(f), _) => out.extend_from_slice(&f.to_le_bytes()),
        (Value::Float(f), _) => out.extend_from_slice(&f.to_le_bytes()),
        (Value::Date(days), _) => push_date(*days, out),
        (Value::Time { ticks, scale }, _) => push_time(*ticks, *scale, out),
        (Value::DateTime2 { days, ticks, scale }, _) => {
            push_time(*ticks, *scale, out);
            push_date(*days, out);
        }
        (Value::DateTimeOffset { days, ticks, scale, offset }, _) => {
            push_time(*ticks, *scale, out);
            push_date(*days, out);
            out.extend_from_slice(&offset.to_le_bytes());
        }
        (Value::DateTime { days, ticks }, _) => {
            out.extend_from_slice(&ticks.to_le_bytes());
            out.extend_from_slice(&days.to_le_bytes());
        }
        (Value::SmallDateTime { days, minutes }, _) => {
            out.extend_from_slice(&minutes.to_le_bytes());
            out.extend_from_slice(&days.to_le_bytes());
        }
        (Value::String(s), SqlType::Char { len }) => {
            let start = out.len();
            let s = fit_str(s, usize::from(len), false).unwrap_or(s);
            cp.encode_lossy(s, out);
            out.resize(start + usize::from(len), b' ');
        }
        (Value::String(s), SqlType::VarChar { len }) => {
            let s = match len {
                Length::Bounded(n) => fit_str(s, usize::from(n), false).unwrap_or(s),
                Length::Max => s,
            };
            cp.encode_lossy(s, out)
        }
        (Value::String(s), SqlType::NChar { len }) => {
            let units = push_utf16(fit_str(s, usize::from(len), true).unwrap_or(s), out);
            for _ in units..usize::from(len) {
                out.extend_from_slice(&[b' ', 0]);
            }
        }
        (Value::String(s), SqlType::NVarChar { len: Length::Bounded(n) }) => {
            push_utf16(fit_str(s, usize::from(n), true).unwrap_or(s), out);
        }
        (Value::String(s), _) => {
            push_utf16(s, out);
        }
        (Value::Binary(b), SqlType::Binary { len }) => {
            out.extend_from_slice(b);
            out.resize(out.len() + usize::from(len) - b.len(), 0);
        }
        (Value::Binary(b), _) => out.extend_from_slice(b),
        (Value::Guid(g), _) => out.extend_from_slice(g),
        (Value::Variant(v), _) => {
            put_variant_header(&v.ty, out);
            encode(&v.value, &v.ty, out)?;
        }
        // check_type admitted no other pairing.
        _ => return Err(SqlError::operand_type_clash(value.kind_name(), ty.name())),
    }
    Ok(())
}

/// Reads a value of column type `ty` from exactly the bytes [`encode`] wrote. Bytes that
/// cannot be such a value (wrong length, out of range, bad sign byte, odd UTF-16 length)
/// are Msg 2570, the error DBCC reports for out-of-range column values. char(n) and
/// nchar(n) come back blank-padded, decimal with the column's precision.
pub fn decode(ty: &SqlType, bytes: &[u8]) -> Result<Value, SqlError> {
    let mut v = Value::Null;
    decode_to(ty, bytes, &mut v)?;
    Ok(v)
}

/// [`decode`] into `slot`, for decoding rows: the value is built where it is kept
/// instead of being returned and moved (moving `Value`s by the million costs more than
/// decoding them), and a string or binary already in the slot lends its buffer (a scan
/// decoding each row over the previous one allocates nothing for them). After an error
/// `slot` holds NULL or a value.
#[inline]
pub fn decode_to(ty: &SqlType, bytes: &[u8], slot: &mut Value) -> Result<(), SqlError> {
    decode_to_in(ty, CodePage::CP1252, bytes, slot)
}

/// [`decode_to`] for a column whose collation has code page `cp` (char and varchar
/// bytes are read in it).
#[inline]
pub fn decode_to_in(ty: &SqlType, cp: CodePage, bytes: &[u8], slot: &mut Value) -> Result<(), SqlError> {
    // The integer keys and counts of most rows, inlined into the caller's loop; the
    // rest is `decode_other`.
    // A slot already holding an integer (a recycled row's) is overwritten in place: an
    // assignment would first drop the old value through a call.
    match (ty, bytes.len(), slot) {
        (SqlType::Int, 4, Value::Int(n)) => *n = i32::from_le_bytes(le(bytes)),
        (SqlType::BigInt, 8, Value::BigInt(n)) => *n = i64::from_le_bytes(le(bytes)),
        (SqlType::Int, 4, slot) => *slot = Value::Int(i32::from_le_bytes(le(bytes))),
        (SqlType::BigInt, 8, slot) => *slot = Value::BigInt(i64::from_le_bytes(le(bytes))),
        (_, _, slot) => return decode_other(ty, cp, bytes, slot),
    }
    Ok(())
}

fn decode_other(ty: &SqlType, cp: CodePage, bytes: &[u8], slot: &mut Value) -> Result<(), SqlError> {
    if ty.is_legacy_lob() {
        return decode_other(&ty.max_equivalent(), cp, bytes, slot);
    }
    if decode_common(ty, cp, bytes, slot) {
        return Ok(());
    }
    let bad = || SqlError::invalid_stored_value(ty.name());
    if let Some(n) = ty.fixed_storage_len() {
        if bytes.len() != usize::from(n) {
            return Err(bad());
        }
    }
    *slot = match *ty {
        SqlType::Bit => match bytes[0] {
            0 => Value::Bit(false),
            1 => Value::Bit(true),
            _ => return Err(bad()),
        },
        SqlType::TinyInt => Value::TinyInt(bytes[0]),
        SqlType::SmallInt => Value::SmallInt(i16::from_le_bytes(le(bytes))),
        SqlType::Int => Value::Int(i32::from_le_bytes(le(bytes))),
        SqlType::BigInt => Value::BigInt(i64::from_le_bytes(le(bytes))),
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            let magnitude = u128::from_le_bytes(le(&bytes[1..]));
            let value = i128::try_from(magnitude).map_err(|_| bad())?;
            let value = match bytes[0] {
                1 => value,
                0 => -value,
                _ => return Err(bad()),
            };
            Value::Decimal { value, precision, scale }
        }
        SqlType::SmallMoney => Value::Money(i64::from(i32::from_le_bytes(le(bytes)))),
        SqlType::Money => {
            let hi = i32::from_le_bytes(le(&bytes[..4]));
            let lo = u32::from_le_bytes(le(&bytes[4..]));
            Value::Money(i64::from(hi) << 32 | i64::from(lo))
        }
        SqlType::Real => Value::Real(f32::from_le_bytes(le(bytes))),
        SqlType::Float => Value::Float(f64::from_le_bytes(le(bytes))),
        SqlType::Date => Value::Date(read_date(bytes)),
        SqlType::Time { scale } => Value::Time { ticks: read_time(bytes, scale).ok_or_else(bad)?, scale },
        SqlType::DateTime2 { scale } => {
            let t = usize::from(time_storage_len(scale));
            let ticks = read_time(&bytes[..t], scale).ok_or_else(bad)?;
            Value::DateTime2 { days: read_date(&bytes[t..]), ticks, scale }
        }
        SqlType::DateTimeOffset { scale } => {
            let t = usize::from(time_storage_len(scale));
            let ticks = read_time(&bytes[..t], scale).ok_or_else(bad)?;
            let days = read_date(&bytes[t..t + 3]);
            let offset = i16::from_le_bytes(le(&bytes[t + 3..]));
            Value::DateTimeOffset { days, ticks, scale, offset }
        }
        SqlType::DateTime => {
            Value::DateTime { ticks: u32::from_le_bytes(le(&bytes[..4])), days: i32::from_le_bytes(le(&bytes[4..])) }
        }
        SqlType::SmallDateTime => Value::SmallDateTime {
            minutes: u16::from_le_bytes(le(&bytes[..2])),
            days: u16::from_le_bytes(le(&bytes[2..])),
        },
        SqlType::Char { .. } | SqlType::VarChar { .. } => Value::String(cp.decode(bytes)),
        SqlType::NChar { .. } | SqlType::NVarChar { .. } | SqlType::Xml => {
            if !bytes.len().is_multiple_of(2) {
                return Err(bad());
            }
            let units = bytes.chunks_exact(2).map(|p| u16::from_le_bytes([p[0], p[1]]));
            // Unpaired surrogates are kept as sent (as stand-ins, see `ucs2`).
            Value::String(crate::ucs2::decode(units))
        }
        SqlType::Binary { .. } | SqlType::VarBinary { .. } => Value::Binary(bytes.to_vec()),
        SqlType::HierarchyId => {
            crate::hierarchyid::HierarchyId::decode(bytes).ok_or_else(bad)?;
            Value::Binary(bytes.to_vec())
        }
        // Checked when they came in (CAST, TDS); kept as varbinary(max).
        SqlType::Geometry | SqlType::Geography => Value::Binary(bytes.to_vec()),
        SqlType::UniqueIdentifier => Value::Guid(le(bytes)),
        SqlType::Variant => {
            let (base, n) = read_variant_header(bytes).ok_or_else(bad)?;
            let value = decode(&base, &bytes[n..])?;
            Value::Variant(Box::new(crate::value::Variant { ty: base, value }))
        }
        // Taken as their MAX equivalents above.
        SqlType::Text | SqlType::NText | SqlType::Image => return Err(bad()),
    };
    // Ranges (dates, decimal digits, lengths) are checked once, here, for every type. A
    // char/varchar has one character per byte, so one within its length in bytes is
    // within its length in characters without counting them (the common case of a scan).
    let fits_by_bytes = match *ty {
        SqlType::Char { len } | SqlType::VarChar { len: Length::Bounded(len) } => bytes.len() <= usize::from(len),
        _ => false,
    };
    if !fits_by_bytes {
        slot.check_type(ty).map_err(|_| bad())?;
    }
    Ok(())
}

/// [`decode_to`] for the commonest column types, each complete here with no range check
/// to run: an integer's bytes hold every value of its type, a char/varchar or binary
/// within its length in bytes is within it (one character per byte), a datetime2 needs
/// its two fields in range. Strings and binaries are decoded into the buffer of the one
/// already in the slot. False (and `slot` untouched) for anything else, valid or not:
/// the general path decodes it or reports the error.
fn decode_common(ty: &SqlType, cp: CodePage, bytes: &[u8], slot: &mut Value) -> bool {
    let v = match (*ty, bytes.len()) {
        (SqlType::Int, 4) => Value::Int(i32::from_le_bytes(le(bytes))),
        (SqlType::BigInt, 8) => Value::BigInt(i64::from_le_bytes(le(bytes))),
        (SqlType::SmallInt, 2) => Value::SmallInt(i16::from_le_bytes(le(bytes))),
        (SqlType::TinyInt, 1) => Value::TinyInt(bytes[0]),
        (SqlType::DateTime2 { scale }, n) if n == usize::from(time_storage_len(scale)) + 3 => {
            let t = n - 3;
            let (Some(ticks), days) = (read_time(&bytes[..t], scale), read_date(&bytes[t..])) else { return false };
            if days > calendar::MAX_DATE_DAYS {
                return false;
            }
            Value::DateTime2 { days, ticks, scale }
        }
        (SqlType::VarChar { len: Length::Bounded(len) }, n) | (SqlType::Char { len }, n)
            if n <= usize::from(len) && (n == usize::from(len) || matches!(ty, SqlType::VarChar { .. })) =>
        {
            if let Value::String(s) = slot {
                s.clear();
                cp.decode_into(bytes, s);
                return true;
            }
            Value::String(cp.decode(bytes))
        }
        (SqlType::VarBinary { len: Length::Bounded(len) }, n) | (SqlType::Binary { len }, n)
            if n <= usize::from(len) && (n == usize::from(len) || matches!(ty, SqlType::VarBinary { .. })) =>
        {
            if let Value::Binary(b) = slot {
                b.clear();
                b.extend_from_slice(bytes);
                return true;
            }
            Value::Binary(bytes.to_vec())
        }
        _ => return false,
    };
    *slot = v;
    true
}

/// The TDS type ids of sql_variant base types ([MS-TDS] 2.2.5.5.1.8, SSVARIANTTYPE): the
/// stored form of a sql_variant column starts with the same header as the value on the
/// wire, so the TDS codec and the row format share this table.
pub mod variant_id {
    pub const GUID: u8 = 0x24;
    pub const DATEN: u8 = 0x28;
    pub const TIMEN: u8 = 0x29;
    pub const DATETIME2N: u8 = 0x2A;
    pub const DATETIMEOFFSETN: u8 = 0x2B;
    pub const INT1: u8 = 0x30;
    pub const BIT: u8 = 0x32;
    pub const INT2: u8 = 0x34;
    pub const INT4: u8 = 0x38;
    pub const DATETIM4: u8 = 0x3A;
    pub const FLT4: u8 = 0x3B;
    pub const MONEY: u8 = 0x3C;
    pub const DATETIME: u8 = 0x3D;
    pub const FLT8: u8 = 0x3E;
    pub const DECIMALN: u8 = 0x6A;
    pub const NUMERICN: u8 = 0x6C;
    pub const MONEY4: u8 = 0x7A;
    pub const INT8: u8 = 0x7F;
    pub const BIGVARBINARY: u8 = 0xA5;
    pub const BIGVARCHAR: u8 = 0xA7;
    pub const BIGBINARY: u8 = 0xAD;
    pub const BIGCHAR: u8 = 0xAF;
    pub const NVARCHAR: u8 = 0xE7;
    pub const NCHAR: u8 = 0xEF;
}

/// SQL_Latin1_General_CP1_CI_AS as TDS and sql_variant headers carry it (LCID 0x0409,
/// IgnoreCase|IgnoreKana|IgnoreWidth, SortId 52).
pub const DEFAULT_COLLATION: [u8; 5] = [0x09, 0x04, 0xD0, 0x00, 0x34];

/// Writes a sql_variant's base type as [MS-TDS] describes it: the type id, the number of
/// property bytes, then the properties: precision and scale for decimal/numeric, the
/// scale for time/datetime2/datetimeoffset, the maximum length in bytes (u16 LE) for
/// binary/varbinary, and that length followed by the 5-byte collation for the
/// character types. A type that cannot be a base type writes nothing.
pub fn put_variant_header(ty: &SqlType, out: &mut Vec<u8>) {
    use variant_id::*;
    let with_len = |id: u8, len: u16, collation: bool, out: &mut Vec<u8>| {
        out.extend_from_slice(&[id, if collation { 7 } else { 2 }]);
        out.extend_from_slice(&len.to_le_bytes());
        if collation {
            out.extend_from_slice(&DEFAULT_COLLATION);
        }
    };
    let id = match *ty {
        SqlType::Bit => BIT,
        SqlType::TinyInt => INT1,
        SqlType::SmallInt => INT2,
        SqlType::Int => INT4,
        SqlType::BigInt => INT8,
        SqlType::Money => MONEY,
        SqlType::SmallMoney => MONEY4,
        SqlType::Real => FLT4,
        SqlType::Float => FLT8,
        SqlType::DateTime => DATETIME,
        SqlType::SmallDateTime => DATETIM4,
        SqlType::Date => DATEN,
        SqlType::UniqueIdentifier => GUID,
        SqlType::Decimal { precision, scale } => return out.extend_from_slice(&[DECIMALN, 2, precision, scale]),
        SqlType::Numeric { precision, scale } => return out.extend_from_slice(&[NUMERICN, 2, precision, scale]),
        SqlType::Time { scale } => return out.extend_from_slice(&[TIMEN, 1, scale]),
        SqlType::DateTime2 { scale } => return out.extend_from_slice(&[DATETIME2N, 1, scale]),
        SqlType::DateTimeOffset { scale } => return out.extend_from_slice(&[DATETIMEOFFSETN, 1, scale]),
        SqlType::Char { len } => return with_len(BIGCHAR, len, true, out),
        SqlType::VarChar { len: Length::Bounded(len) } => return with_len(BIGVARCHAR, len, true, out),
        SqlType::NChar { len } => return with_len(NCHAR, len.saturating_mul(2), true, out),
        SqlType::NVarChar { len: Length::Bounded(len) } => return with_len(NVARCHAR, len.saturating_mul(2), true, out),
        SqlType::Binary { len } => return with_len(BIGBINARY, len, false, out),
        SqlType::VarBinary { len: Length::Bounded(len) } => return with_len(BIGVARBINARY, len, false, out),
        _ => return,
    };
    out.extend_from_slice(&[id, 0]);
}

/// Reads what [`put_variant_header`] wrote: the base type and the header's length. None
/// for an unknown type id, a property count that does not match the type, or
/// parameters out of range. The collation of a character base type is not checked
/// (Mesquite has one).
pub fn read_variant_header(bytes: &[u8]) -> Option<(SqlType, usize)> {
    use variant_id::*;
    let (&id, rest) = bytes.split_first()?;
    let (&n, rest) = rest.split_first()?;
    let props = rest.get(..usize::from(n))?;
    let len16 = || props.get(..2).map(|b| i64::from(u16::from_le_bytes([b[0], b[1]])));
    let ty = match (id, n) {
        (BIT, 0) => SqlType::Bit,
        (INT1, 0) => SqlType::TinyInt,
        (INT2, 0) => SqlType::SmallInt,
        (INT4, 0) => SqlType::Int,
        (INT8, 0) => SqlType::BigInt,
        (MONEY, 0) => SqlType::Money,
        (MONEY4, 0) => SqlType::SmallMoney,
        (FLT4, 0) => SqlType::Real,
        (FLT8, 0) => SqlType::Float,
        (DATETIME, 0) => SqlType::DateTime,
        (DATETIM4, 0) => SqlType::SmallDateTime,
        (DATEN, 0) => SqlType::Date,
        (GUID, 0) => SqlType::UniqueIdentifier,
        (DECIMALN, 2) => SqlType::decimal(i64::from(props[0]), i64::from(props[1])).ok()?,
        (NUMERICN, 2) => SqlType::numeric(i64::from(props[0]), i64::from(props[1])).ok()?,
        (TIMEN, 1) => SqlType::time(i64::from(props[0])).ok()?,
        (DATETIME2N, 1) => SqlType::datetime2(i64::from(props[0])).ok()?,
        (DATETIMEOFFSETN, 1) => SqlType::datetimeoffset(i64::from(props[0])).ok()?,
        (BIGCHAR, 7) => SqlType::char(len16()?).ok()?,
        (BIGVARCHAR, 7) => SqlType::varchar(len16()?).ok()?,
        (NCHAR, 7) => SqlType::nchar(len16()? / 2).ok()?,
        (NVARCHAR, 7) => SqlType::nvarchar(len16()? / 2).ok()?,
        (BIGBINARY, 2) => SqlType::binary(len16()?).ok()?,
        (BIGVARBINARY, 2) => SqlType::varbinary(len16()?).ok()?,
        _ => return None,
    };
    Some((ty, 2 + usize::from(n)))
}

/// Copies a slice into a fixed array, zero-filling or truncating; callers pass slices
/// whose lengths were checked against the type.
fn le<const N: usize>(bytes: &[u8]) -> [u8; N] {
    let mut a = [0u8; N];
    let n = bytes.len().min(N);
    a[..n].copy_from_slice(&bytes[..n]);
    a
}

fn push_date(days: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&days.to_le_bytes()[..3]);
}

fn read_date(bytes: &[u8]) -> u32 {
    u32::from_le_bytes(le(bytes))
}

fn push_time(ticks: u64, scale: u8, out: &mut Vec<u8>) {
    let units = ticks / calendar::ticks_per_unit(scale);
    out.extend_from_slice(&units.to_le_bytes()[..usize::from(time_storage_len(scale))]);
}

fn read_time(bytes: &[u8], scale: u8) -> Option<u64> {
    let units = u64::from_le_bytes(le(bytes));
    let ticks = units.checked_mul(calendar::ticks_per_unit(scale))?;
    (ticks < TICKS_PER_DAY).then_some(ticks)
}

/// Appends UTF-16LE and returns the number of code units written.
fn push_utf16(s: &str, out: &mut Vec<u8>) -> usize {
    let mut n = 0;
    for u in crate::ucs2::units(&s) {
        out.extend_from_slice(&u.to_le_bytes());
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: &Value, ty: SqlType) -> Vec<u8> {
        let mut out = Vec::new();
        encode(v, &ty, &mut out).unwrap();
        assert_eq!(decode(&ty, &out).unwrap(), v.fit_to(&ty).unwrap(), "round trip of {v:?} as {ty}");
        // Decoding in place gives the same over whatever the slot held.
        let mut slot = Value::String("left over".into());
        decode_to(&ty, &out, &mut slot).unwrap();
        assert_eq!(slot, v.fit_to(&ty).unwrap(), "decode_to of {v:?} as {ty}");
        out
    }

    /// char/varchar within their length in bytes skip the character count; beyond it the
    /// full check decides as before (trailing blanks may still fit).
    #[test]
    fn character_lengths_at_the_boundary() {
        let vc = SqlType::VarChar { len: Length::Bounded(3) };
        assert_eq!(decode(&vc, b"abc").unwrap(), Value::String("abc".into()));
        assert_eq!(decode(&vc, &[0x80, 0x80, 0x80]).unwrap(), Value::String("\u{20AC}".repeat(3)));
        assert_eq!(decode(&vc, b"ab  ").unwrap(), Value::String("ab  ".into()));
        assert_eq!(decode(&vc, b"abcd").unwrap_err().number, 2570);
        let c = SqlType::Char { len: 2 };
        assert_eq!(decode(&c, b"ab").unwrap(), Value::String("ab".into()));
        assert_eq!(decode(&c, b"a").unwrap_err().number, 2570);
    }

    #[test]
    fn fixed_layouts() {
        assert_eq!(enc(&Value::Int(-2), SqlType::Int), vec![0xFE, 0xFF, 0xFF, 0xFF]);
        let d = SqlType::decimal(9, 2).unwrap();
        assert_eq!(enc(&Value::Decimal { value: -258, precision: 9, scale: 2 }, d), vec![0, 2, 1, 0, 0]);
        assert_eq!(enc(&Value::Decimal { value: 0, precision: 9, scale: 2 }, d), vec![1, 0, 0, 0, 0]);
        assert_eq!(
            enc(&Value::Decimal { value: 1, precision: 38, scale: 0 }, SqlType::decimal(38, 0).unwrap()).len(),
            17
        );
        assert_eq!(enc(&Value::Money(0x1_0000_0002), SqlType::Money), vec![1, 0, 0, 0, 2, 0, 0, 0]);
        assert_eq!(enc(&Value::Money(-1), SqlType::Money), vec![0xFF; 8]);
        assert_eq!(enc(&Value::Date(0x01_02_03), SqlType::Date), vec![3, 2, 1]);
        // time(0) counts seconds, time(7) 100 ns units.
        assert_eq!(enc(&Value::Time { ticks: 10_000_000, scale: 0 }, SqlType::Time { scale: 0 }), vec![1, 0, 0]);
        assert_eq!(
            enc(&Value::Time { ticks: 10_000_000, scale: 7 }, SqlType::Time { scale: 7 }),
            vec![0x80, 0x96, 0x98, 0, 0]
        );
        let v = Value::DateTime2 { days: 1, ticks: 10_000_000, scale: 3 };
        assert_eq!(enc(&v, SqlType::DateTime2 { scale: 3 }), vec![0xE8, 3, 0, 0, 1, 0, 0]);
        let v = Value::DateTimeOffset { days: 1, ticks: 0, scale: 0, offset: -60 };
        assert_eq!(enc(&v, SqlType::DateTimeOffset { scale: 0 }), vec![0, 0, 0, 1, 0, 0, 0xC4, 0xFF]);
        assert_eq!(
            enc(&Value::DateTime { days: -1, ticks: 2 }, SqlType::DateTime),
            vec![2, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]
        );
        assert_eq!(enc(&Value::SmallDateTime { days: 2, minutes: 1 }, SqlType::SmallDateTime), vec![1, 0, 2, 0]);
        assert_eq!(enc(&Value::String("ab".into()), SqlType::char(4).unwrap()), b"ab  ".to_vec());
        assert_eq!(enc(&Value::String("é".into()), SqlType::nchar(2).unwrap()), vec![0xE9, 0, b' ', 0]);
        assert_eq!(enc(&Value::String("€".into()), SqlType::varchar(2).unwrap()), vec![0x80]);
        assert_eq!(enc(&Value::Binary(vec![7]), SqlType::binary(3).unwrap()), vec![7, 0, 0]);
        let null = |ty: SqlType| {
            let mut out = Vec::new();
            encode(&Value::Null, &ty, &mut out).unwrap();
            out.len()
        };
        for ty in [SqlType::decimal(20, 5).unwrap(), SqlType::DateTimeOffset { scale: 4 }, SqlType::nchar(3).unwrap()] {
            assert_eq!(null(ty), usize::from(ty.fixed_storage_len().unwrap()));
        }
        assert_eq!(null(SqlType::varchar(3).unwrap()), 0);
    }

    #[test]
    fn rejects_bad_values_and_bytes() {
        let mut out = Vec::new();
        assert_eq!(encode(&Value::Int(1), &SqlType::BigInt, &mut out).unwrap_err().number, 206);
        assert_eq!(encode(&Value::Money(1 << 40), &SqlType::SmallMoney, &mut out).unwrap_err().number, 8115);
        assert_eq!(
            encode(&Value::String("abcd".into()), &SqlType::varchar(3).unwrap(), &mut out).unwrap_err().number,
            8152
        );
        assert!(encode(&Value::DateTime { days: -60_000, ticks: 0 }, &SqlType::DateTime, &mut out).is_err());
        assert!(out.is_empty());
        // Blanks beyond the length are dropped, as SQL Server's INSERT does.
        let c1 = SqlType::char(1).unwrap();
        encode(&Value::String("a  ".into()), &c1, &mut out).unwrap();
        assert_eq!(out, b"a");
        assert_eq!(decode(&c1, &out).unwrap(), Value::String("a".into()));
        assert_eq!(encode(&Value::String(" ab".into()), &c1, &mut out).unwrap_err().number, 8152);
        out.clear();
        let bad = |ty: SqlType, b: &[u8]| decode(&ty, b).unwrap_err().number;
        assert_eq!(bad(SqlType::Int, &[1, 2, 3]), 2570);
        assert_eq!(bad(SqlType::Bit, &[2]), 2570);
        assert_eq!(bad(SqlType::decimal(2, 0).unwrap(), &[1, 100, 0, 0, 0]), 2570);
        assert_eq!(bad(SqlType::decimal(2, 0).unwrap(), &[7, 1, 0, 0, 0]), 2570);
        assert_eq!(bad(SqlType::Date, &[0xFF, 0xFF, 0xFF]), 2570);
        assert_eq!(bad(SqlType::Time { scale: 7 }, &[0xFF; 5]), 2570);
        assert_eq!(bad(SqlType::DateTime, &[0, 0, 0, 0, 0, 0, 0, 0x80]), 2570);
        assert_eq!(bad(SqlType::SmallDateTime, &[0xA0, 0x05, 0, 0]), 2570);
        assert_eq!(bad(SqlType::nvarchar(5).unwrap(), &[0x41]), 2570);
        assert_eq!(bad(SqlType::varchar(1).unwrap(), b"ab"), 2570);
        assert_eq!(bad(SqlType::Float, &f64::NAN.to_le_bytes()), 2570);
        assert_eq!(bad(SqlType::DateTimeOffset { scale: 0 }, &[0, 0, 0, 0, 0, 0, 0x00, 0x10]), 2570);
        // The types `decode_common` takes whole, at and past their limits.
        assert_eq!(bad(SqlType::BigInt, &[0; 7]), 2570);
        assert_eq!(bad(SqlType::TinyInt, &[]), 2570);
        assert_eq!(bad(SqlType::DateTime2 { scale: 0 }, &[0, 0, 0, 0xFF, 0xFF, 0xFF]), 2570);
        assert_eq!(bad(SqlType::DateTime2 { scale: 0 }, &[0xFF, 0xFF, 0xFF, 0, 0, 0]), 2570);
        assert_eq!(bad(SqlType::DateTime2 { scale: 7 }, &[0; 7]), 2570);
        assert_eq!(bad(SqlType::varbinary(1).unwrap(), &[1, 2]), 2570);
        assert_eq!(bad(SqlType::binary(2).unwrap(), &[1]), 2570);
        let max = SqlType::DateTime2 { scale: 7 };
        let v = Value::DateTime2 { days: calendar::MAX_DATE_DAYS, ticks: TICKS_PER_DAY - 1, scale: 7 };
        assert_eq!(enc(&v, max), [[0xFF, 0xBF, 0x69, 0x2A, 0xC9].as_slice(), &[0xDA, 0xB9, 0x37]].concat());
    }

    /// A string or binary in the slot lends its buffer to the value decoded over it.
    #[test]
    fn decoding_in_place_reuses_buffers() {
        let mut slot = Value::String(String::with_capacity(64));
        decode_to(&SqlType::varchar(10).unwrap(), b"abc", &mut slot).unwrap();
        assert!(matches!(&slot, Value::String(s) if s == "abc" && s.capacity() >= 64));
        decode_to(&SqlType::varchar(10).unwrap(), &[0xE9], &mut slot).unwrap();
        assert!(matches!(&slot, Value::String(s) if s == "é" && s.capacity() >= 64));
        let mut slot = Value::Binary(Vec::with_capacity(32));
        decode_to(&SqlType::varbinary(4).unwrap(), &[1, 2], &mut slot).unwrap();
        assert!(matches!(&slot, Value::Binary(b) if b == &[1, 2] && b.capacity() >= 32));
        decode_to(&SqlType::Int, &[5, 0, 0, 0], &mut slot).unwrap();
        assert_eq!(slot, Value::Int(5));
    }
}
