//! `Value`: one SQL Server value in the exact representation of its type family, with
//! the range rules of each type, and the check that a value fits a declared [`SqlType`].
//!
//! Representations (all exact, so that storing and reading back never changes a value):
//!
//! | variant | holds | range enforced |
//! |---|---|---|
//! | `Bit` | bool | |
//! | `TinyInt`/`SmallInt`/`Int`/`BigInt` | u8/i16/i32/i64 | the Rust type's |
//! | `Decimal` | unscaled i128, precision, scale | 1 <= p <= 38, s <= p, abs(v) <= 10^p - 1 |
//! | `Money` | i64 count of 1/10000 (money and smallmoney) | smallmoney: i32 range, checked against the type |
//! | `Float`/`Real` | f64/f32 | finite (SQL Server stores no NaN or infinity) |
//! | `Date` | days since 0001-01-01 | ..= 9999-12-31 |
//! | `Time` | 100 ns ticks since midnight, scale | < 24 h, a multiple of the scale's unit |
//! | `DateTime` | days since 1900-01-01 (i32), 1/300 s ticks | 1753-01-01 ..= 9999-12-31 23:59:59.997 |
//! | `SmallDateTime` | days since 1900-01-01 (u16), minutes | 1900-01-01 ..= 2079-06-06 23:59 |
//! | `DateTime2` | days since 0001-01-01, 100 ns ticks, scale | as date and time |
//! | `DateTimeOffset` | UTC days and ticks as datetime2, offset minutes | offset -14:00..+14:00; UTC and local both in range |
//! | `String` | text of char/varchar/nchar/nvarchar/xml | length checked against the type |
//! | `Binary` | bytes of binary/varbinary | length checked against the type |
//! | `Guid` | 16 bytes in SQL Server's (.NET Guid) byte order | |

use crate::calendar::{
    self, DATETIME_MAX_DAYS, DATETIME_MIN_DAYS, DATETIME_TICKS_PER_DAY, DAYS_TO_1900, MAX_DATE_DAYS,
    MAX_OFFSET_MINUTES, MINUTES_PER_DAY, TICKS_PER_DAY, TICKS_PER_MINUTE,
};
use crate::codepage::CodePage;
use crate::decimal::{self, MONEY_SCALE, SMALLMONEY_MAX, SMALLMONEY_MIN};
use crate::error::SqlError;
use crate::sqltype::{Length, SqlType, MAX_LOB_BYTES, MAX_TIME_SCALE};

/// A SQL Server value. `Null` is the SQL NULL of any type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Bit(bool),
    TinyInt(u8),
    SmallInt(i16),
    Int(i32),
    BigInt(i64),
    /// decimal/numeric: `value / 10^scale`.
    Decimal {
        value: i128,
        precision: u8,
        scale: u8,
    },
    /// money and smallmoney, in 1/10000 units.
    Money(i64),
    Float(f64),
    Real(f32),
    /// Days since 0001-01-01.
    Date(u32),
    /// 100 ns ticks since midnight; `scale` is the declared fractional-seconds digits.
    Time {
        ticks: u64,
        scale: u8,
    },
    /// Days since 1900-01-01 (negative back to 1753) and 1/300 s ticks since midnight.
    DateTime {
        days: i32,
        ticks: u32,
    },
    /// Days since 1900-01-01 and minutes since midnight.
    SmallDateTime {
        days: u16,
        minutes: u16,
    },
    /// Days since 0001-01-01 and 100 ns ticks since midnight.
    DateTime2 {
        days: u32,
        ticks: u64,
        scale: u8,
    },
    /// The instant in UTC (as DateTime2) plus the offset, in minutes, that local time had.
    DateTimeOffset {
        days: u32,
        ticks: u64,
        scale: u8,
        offset: i16,
    },
    /// char, varchar, nchar, nvarchar and xml.
    String(String),
    /// binary and varbinary.
    Binary(Vec<u8>),
    /// uniqueidentifier, bytes in the order SQL Server stores them.
    Guid([u8; 16]),
    /// sql_variant: a non-NULL value and its base type (a NULL sql_variant is `Null`).
    /// Build it with [`Value::variant`], which checks the pair.
    Variant(Box<Variant>),
}

/// The contents of a sql_variant: `value` fits `ty` ([`Value::check_type`]) and `ty`
/// can be a base type ([`SqlType::is_variant_base`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    pub ty: SqlType,
    pub value: Value,
}

fn out_of_range(type_name: &str) -> SqlError {
    SqlError::new(517, 16, 3, format!("Adding a value to a '{type_name}' column caused an overflow."))
}

impl Value {
    /// The type a value carries by itself, at its family's full width (strings are
    /// nvarchar(max), binaries varbinary(max)); None for NULL, which has none.
    pub fn own_type(&self) -> Option<SqlType> {
        Some(match *self {
            Value::Null => return None,
            Value::Bit(_) => SqlType::Bit,
            Value::TinyInt(_) => SqlType::TinyInt,
            Value::SmallInt(_) => SqlType::SmallInt,
            Value::Int(_) => SqlType::Int,
            Value::BigInt(_) => SqlType::BigInt,
            Value::Decimal { precision, scale, .. } => SqlType::Decimal { precision, scale },
            Value::Money(_) => SqlType::Money,
            Value::Float(_) => SqlType::Float,
            Value::Real(_) => SqlType::Real,
            Value::Date(_) => SqlType::Date,
            Value::Time { scale, .. } => SqlType::Time { scale },
            Value::DateTime { .. } => SqlType::DateTime,
            Value::SmallDateTime { .. } => SqlType::SmallDateTime,
            Value::DateTime2 { scale, .. } => SqlType::DateTime2 { scale },
            Value::DateTimeOffset { scale, .. } => SqlType::DateTimeOffset { scale },
            Value::String(_) => SqlType::NVarChar { len: Length::Max },
            Value::Binary(_) => SqlType::VarBinary { len: Length::Max },
            Value::Guid(_) => SqlType::UniqueIdentifier,
            Value::Variant(_) => SqlType::Variant,
        })
    }

    /// The integer part of an exact numeric value (a decimal truncated toward zero);
    /// None for other values.
    pub fn integer_part(&self) -> Option<i128> {
        Some(match *self {
            Value::TinyInt(n) => i128::from(n),
            Value::SmallInt(n) => i128::from(n),
            Value::Int(n) => i128::from(n),
            Value::BigInt(n) => i128::from(n),
            Value::Decimal { value, scale, .. } => value / crate::decimal::pow10(scale),
            _ => return None,
        })
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type name SQL Server would use for this value in messages ("int",
    /// "decimal", "nvarchar", ...). Strings report nvarchar and binaries varbinary since
    /// the value alone does not say which of the family it came from.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Null => "NULL",
            Value::Bit(_) => "bit",
            Value::TinyInt(_) => "tinyint",
            Value::SmallInt(_) => "smallint",
            Value::Int(_) => "int",
            Value::BigInt(_) => "bigint",
            Value::Decimal { .. } => "decimal",
            Value::Money(_) => "money",
            Value::Float(_) => "float",
            Value::Real(_) => "real",
            Value::Date(_) => "date",
            Value::Time { .. } => "time",
            Value::DateTime { .. } => "datetime",
            Value::SmallDateTime { .. } => "smalldatetime",
            Value::DateTime2 { .. } => "datetime2",
            Value::DateTimeOffset { .. } => "datetimeoffset",
            Value::String(_) => "nvarchar",
            Value::Binary(_) => "varbinary",
            Value::Guid(_) => "uniqueidentifier",
            Value::Variant(_) => "sql_variant",
        }
    }

    /// A sql_variant holding `value` as type `ty` (NULL stays NULL; a sql_variant is
    /// returned as it is). A MAX type or xml cannot be a base type: Msg 206, as SQL
    /// Server reports it ("nvarchar(max) is incompatible with sql_variant").
    pub fn variant(value: Value, ty: &SqlType) -> Result<Value, SqlError> {
        if value.is_null() || matches!(value, Value::Variant(_)) {
            return Ok(value);
        }
        if !ty.is_variant_base() {
            return Err(SqlError::operand_type_clash(&ty.to_string(), "sql_variant"));
        }
        let value = value.fit_to(ty)?;
        Ok(Value::Variant(Box::new(Variant { ty: *ty, value })))
    }

    /// The value inside a sql_variant, or the value itself.
    pub fn unvariant(&self) -> &Value {
        match self {
            Value::Variant(v) => &v.value,
            v => v,
        }
    }

    /// A decimal value, checked: 1 <= precision <= 38, scale <= precision, and the value
    /// within 10^precision - 1 (else Msg 8115).
    pub fn decimal(value: i128, precision: u8, scale: u8) -> Result<Value, SqlError> {
        let v = Value::Decimal { value, precision, scale };
        v.validate()?;
        Ok(v)
    }

    /// A date from its civil parts, checked (Msg 241 for an impossible day).
    pub fn date_from_ymd(year: i32, month: u32, day: u32) -> Result<Value, SqlError> {
        if !calendar::is_valid_date(year, month, day) {
            return Err(SqlError::datetime_conversion_failed());
        }
        Ok(Value::Date(calendar::days_from_civil(year, month, day) as u32))
    }

    /// A datetime2(scale) from civil parts and 100 ns ticks since midnight. The ticks are
    /// rounded to the scale; rounding up to midnight carries into the next day.
    pub fn datetime2_from_parts(year: i32, month: u32, day: u32, ticks: u64, scale: u8) -> Result<Value, SqlError> {
        if !calendar::is_valid_date(year, month, day) || ticks >= TICKS_PER_DAY || scale > MAX_TIME_SCALE {
            return Err(SqlError::datetime_conversion_failed());
        }
        let days = calendar::days_from_civil(year, month, day);
        let (days, ticks) = carry_day(days, calendar::round_ticks_to_scale(ticks, scale));
        if days > i64::from(MAX_DATE_DAYS) {
            return Err(SqlError::datetime_out_of_range("varchar", "datetime2"));
        }
        Ok(Value::DateTime2 { days: days as u32, ticks, scale })
    }

    /// A datetime from civil parts and milliseconds since midnight, rounded to 1/300 s as
    /// SQL Server rounds (.000/.003/.007). Out of 1753..9999 is Msg 242.
    pub fn datetime_from_parts(year: i32, month: u32, day: u32, millis: u32) -> Result<Value, SqlError> {
        if !calendar::is_valid_date(year, month, day) || millis >= 86_400_000 {
            return Err(SqlError::datetime_out_of_range("varchar", "datetime"));
        }
        let days = calendar::days_from_civil(year, month, day) - DAYS_TO_1900;
        let t = calendar::millis_to_datetime_ticks(u64::from(millis));
        let (days, ticks) = if t >= u64::from(DATETIME_TICKS_PER_DAY) { (days + 1, 0) } else { (days, t) };
        if days < i64::from(DATETIME_MIN_DAYS) || days > i64::from(DATETIME_MAX_DAYS) {
            return Err(SqlError::datetime_out_of_range("varchar", "datetime"));
        }
        Ok(Value::DateTime { days: days as i32, ticks: ticks as u32 })
    }

    /// Checks the rules every value of its variant obeys regardless of the column it is
    /// going to (the table in the module documentation). Errors are SQL Server's overflow
    /// messages for the type.
    pub fn validate(&self) -> Result<(), SqlError> {
        match *self {
            Value::Decimal { value, precision, scale }
                if (precision == 0
                    || precision > 38
                    || scale > precision
                    || !decimal::fits_precision(value, precision)) =>
            {
                return Err(SqlError::arithmetic_overflow("numeric"));
            }
            Value::Float(f) if !f.is_finite() => return Err(SqlError::arithmetic_overflow("float")),
            Value::Real(f) if !f.is_finite() => return Err(SqlError::arithmetic_overflow("real")),
            Value::Date(days) if days > MAX_DATE_DAYS => return Err(out_of_range("date")),
            Value::Time { ticks, scale } if !valid_time(ticks, scale) => return Err(out_of_range("time")),
            Value::DateTime { days, ticks }
                if (!(DATETIME_MIN_DAYS..=DATETIME_MAX_DAYS).contains(&days) || ticks >= DATETIME_TICKS_PER_DAY) =>
            {
                return Err(out_of_range("datetime"));
            }
            Value::SmallDateTime { minutes, .. } if minutes >= MINUTES_PER_DAY => {
                return Err(out_of_range("smalldatetime"))
            }
            Value::DateTime2 { days, ticks, scale } if (days > MAX_DATE_DAYS || !valid_time(ticks, scale)) => {
                return Err(out_of_range("datetime2"));
            }
            Value::DateTimeOffset { days, ticks, scale, offset } => {
                if days > MAX_DATE_DAYS
                    || !valid_time(ticks, scale)
                    || offset.unsigned_abs() > MAX_OFFSET_MINUTES.unsigned_abs()
                {
                    return Err(out_of_range("datetimeoffset"));
                }
                // Local time must be a real date too: SQL Server cannot show 10000-01-01.
                let (ld, _) = utc_to_local(days, ticks, offset);
                if ld < 0 || ld > i64::from(MAX_DATE_DAYS) {
                    return Err(out_of_range("datetimeoffset"));
                }
            }
            Value::Variant(ref v) => {
                if !v.ty.is_variant_base() || v.value.is_null() || matches!(v.value, Value::Variant(_)) {
                    return Err(SqlError::operand_type_clash(&v.ty.to_string(), "sql_variant"));
                }
                v.value.check_type(&v.ty)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// NULL, or a value of one of the common types that is exactly of type `ty`: an int
    /// of int, a bit of bit, ... (nothing to convert, fit or check).
    pub fn is_exactly(&self, ty: &SqlType) -> bool {
        matches!(
            (self, ty),
            (Value::Null, _)
                | (Value::Int(_), SqlType::Int)
                | (Value::BigInt(_), SqlType::BigInt)
                | (Value::SmallInt(_), SqlType::SmallInt)
                | (Value::TinyInt(_), SqlType::TinyInt)
                | (Value::Bit(_), SqlType::Bit)
                | (Value::Guid(_), SqlType::UniqueIdentifier)
        )
    }

    /// Checks that this value can be stored in a column of type `ty` without conversion:
    /// the variant belongs to the type's family (else Msg 206), scales of decimal and
    /// the time types match the type's, the value is in the type's range (smallmoney,
    /// decimal precision; Msg 8115), and strings and binaries fit the declared length
    /// (Msg 8152). Trailing spaces beyond a character length do not count: SQL Server
    /// drops them silently (ANSI rule: only losing non-blank characters is an error), and
    /// so do [`Value::fit_to`] and [`crate::encode`]. NULL fits every type.
    pub fn check_type(&self, ty: &SqlType) -> Result<(), SqlError> {
        // The common exact pairs first: nothing for `validate` to check in them.
        if self.is_exactly(ty) {
            return Ok(());
        }
        self.validate()?;
        let clash = || SqlError::operand_type_clash(self.kind_name(), ty.name());
        // text, ntext and image hold what the MAX types hold.
        match (self, ty.max_equivalent()) {
            (Value::Null, _) => Ok(()),
            (Value::Bit(_), SqlType::Bit)
            | (Value::TinyInt(_), SqlType::TinyInt)
            | (Value::SmallInt(_), SqlType::SmallInt)
            | (Value::Int(_), SqlType::Int)
            | (Value::BigInt(_), SqlType::BigInt)
            | (Value::Money(_), SqlType::Money)
            | (Value::Float(_), SqlType::Float)
            | (Value::Real(_), SqlType::Real)
            | (Value::Date(_), SqlType::Date)
            | (Value::DateTime { .. }, SqlType::DateTime)
            | (Value::SmallDateTime { .. }, SqlType::SmallDateTime)
            | (Value::Guid(_), SqlType::UniqueIdentifier)
            | (Value::Variant(_), SqlType::Variant) => Ok(()),
            (Value::Money(m), SqlType::SmallMoney) => {
                if (SMALLMONEY_MIN..=SMALLMONEY_MAX).contains(m) {
                    Ok(())
                } else {
                    Err(SqlError::arithmetic_overflow("smallmoney"))
                }
            }
            (Value::Decimal { value, scale, .. }, SqlType::Decimal { precision: p, scale: s })
            | (Value::Decimal { value, scale, .. }, SqlType::Numeric { precision: p, scale: s }) => {
                if *scale != s {
                    Err(clash())
                } else if !decimal::fits_precision(*value, p) {
                    Err(SqlError::arithmetic_overflow("numeric"))
                } else {
                    Ok(())
                }
            }
            (Value::Time { scale, .. }, SqlType::Time { scale: s })
            | (Value::DateTime2 { scale, .. }, SqlType::DateTime2 { scale: s })
            | (Value::DateTimeOffset { scale, .. }, SqlType::DateTimeOffset { scale: s }) => {
                if *scale == s {
                    Ok(())
                } else {
                    Err(clash())
                }
            }
            (Value::String(s), SqlType::Char { len: n })
            | (Value::String(s), SqlType::VarChar { len: Length::Bounded(n) }) => {
                match fit_str(s, usize::from(n), false) {
                    Some(_) => Ok(()),
                    None => Err(SqlError::string_truncated()),
                }
            }
            (Value::String(s), SqlType::NChar { len: n })
            | (Value::String(s), SqlType::NVarChar { len: Length::Bounded(n) }) => {
                match fit_str(s, usize::from(n), true) {
                    Some(_) => Ok(()),
                    None => Err(SqlError::string_truncated()),
                }
            }
            (Value::String(s), SqlType::VarChar { len: Length::Max }) => {
                if s.chars().count() as u64 > u64::from(MAX_LOB_BYTES) {
                    Err(SqlError::string_truncated())
                } else {
                    Ok(())
                }
            }
            (Value::String(s), SqlType::NVarChar { len: Length::Max }) | (Value::String(s), SqlType::Xml) => {
                if crate::ucs2::len(&s) as u64 * 2 > u64::from(MAX_LOB_BYTES) {
                    Err(SqlError::string_truncated())
                } else {
                    Ok(())
                }
            }
            (Value::Binary(b), SqlType::Binary { len: n })
            | (Value::Binary(b), SqlType::VarBinary { len: Length::Bounded(n) }) => {
                if b.len() > usize::from(n) {
                    Err(SqlError::string_truncated())
                } else {
                    Ok(())
                }
            }
            (Value::Binary(b), SqlType::VarBinary { len: Length::Max }) => {
                if b.len() as u64 > u64::from(MAX_LOB_BYTES) {
                    Err(SqlError::string_truncated())
                } else {
                    Ok(())
                }
            }
            (Value::Binary(b), SqlType::HierarchyId) => match crate::hierarchyid::HierarchyId::decode(b) {
                Some(_) => Ok(()),
                None => Err(SqlError::invalid_stored_value("hierarchyid")),
            },
            _ => Err(clash()),
        }
    }

    /// What a value of the right family becomes when assigned to a column of `ty` under
    /// SQL Server's storage rules: char/nchar/binary padded to their length, varchar
    /// text reduced to code page 1252 ('?' for other characters), trailing spaces that
    /// overflow a character length dropped (ANSI rule: only non-blank truncation is an
    /// error), decimal precision taken from the column. The result is what
    /// decode(encode(v)) returns. Errors as [`Value::check_type`].
    pub fn fit_to(&self, ty: &SqlType) -> Result<Value, SqlError> {
        self.fit_to_in(ty, CodePage::CP1252)
    }

    /// [`Value::fit_to`] for a column whose collation has code page `cp`: char and
    /// varchar text reduced to that code page.
    pub fn fit_to_in(&self, ty: &SqlType, cp: CodePage) -> Result<Value, SqlError> {
        if cp.is_double_byte() {
            if let (Value::String(s), SqlType::Char { len } | SqlType::VarChar { len: Length::Bounded(len) }) =
                (self, ty)
            {
                return fit_double_byte(s, usize::from(*len), matches!(ty, SqlType::Char { .. }), cp);
            }
        }
        let v = match (self, ty.max_equivalent()) {
            (Value::String(s), SqlType::Char { len })
            | (Value::String(s), SqlType::VarChar { len: Length::Bounded(len) }) => {
                let s = cp.to_lossy(s);
                let mut s = fit_str(&s, usize::from(len), false).unwrap_or(&s).to_string();
                if let SqlType::Char { len } = ty {
                    let have = s.chars().count();
                    s.extend(std::iter::repeat_n(' ', usize::from(*len).saturating_sub(have)));
                }
                Value::String(s)
            }
            (Value::String(s), SqlType::VarChar { len: Length::Max }) => Value::String(cp.to_lossy(s)),
            (Value::String(s), SqlType::NChar { len })
            | (Value::String(s), SqlType::NVarChar { len: Length::Bounded(len) }) => {
                let mut s = fit_str(s, usize::from(len), true).unwrap_or(s).to_string();
                if let SqlType::NChar { len } = ty {
                    let have = crate::ucs2::len(&s);
                    s.extend(std::iter::repeat_n(' ', usize::from(*len).saturating_sub(have)));
                }
                Value::String(s)
            }
            (Value::Binary(b), SqlType::Binary { len }) if b.len() < usize::from(len) => {
                let mut b = b.clone();
                b.resize(usize::from(len), 0);
                Value::Binary(b)
            }
            (Value::Decimal { value, scale, .. }, SqlType::Decimal { precision, .. })
            | (Value::Decimal { value, scale, .. }, SqlType::Numeric { precision, .. }) => {
                Value::Decimal { value: *value, precision, scale: *scale }
            }
            _ => self.clone(),
        };
        v.check_type(ty)?;
        Ok(v)
    }

    /// [`Value::fit_to`] of an owned value: a value that needs no change is checked and
    /// returned as it is (no copy).
    pub fn fit_into(self, ty: &SqlType) -> Result<Value, SqlError> {
        let changes = matches!(
            (&self, ty.max_equivalent()),
            (Value::String(_), SqlType::Char { .. } | SqlType::VarChar { .. } | SqlType::NChar { .. })
                | (Value::String(_), SqlType::NVarChar { len: Length::Bounded(_) })
                | (Value::Binary(_), SqlType::Binary { .. })
                | (Value::Decimal { .. }, SqlType::Decimal { .. } | SqlType::Numeric { .. })
        );
        if changes {
            return self.fit_to(ty);
        }
        self.check_type(ty)?;
        Ok(self)
    }

    /// The money value as an unscaled decimal at scale 4.
    pub fn money_as_decimal(m: i64) -> Value {
        Value::Decimal { value: i128::from(m), precision: 19, scale: MONEY_SCALE }
    }

    /// Local (days since 0001-01-01, ticks) of a datetimeoffset; None for other values.
    pub fn local_datetime(&self) -> Option<(u32, u64)> {
        match *self {
            Value::DateTimeOffset { days, ticks, offset, .. } => {
                let (d, t) = utc_to_local(days, ticks, offset);
                Some((d.clamp(0, i64::from(MAX_DATE_DAYS)) as u32, t))
            }
            _ => None,
        }
    }
}

/// The length of a string as its type counts it: characters (code page 1252 text) or
/// UTF-16 code units (Unicode); an ASCII string's is its byte count.
pub fn text_len(s: &str, unicode: bool) -> usize {
    if s.is_ascii() {
        s.len()
    } else if unicode {
        crate::ucs2::len(&s)
    } else {
        s.chars().count()
    }
}

/// `s` without the trailing spaces that make it longer than `len` (counted in characters
/// for code page 1252 text, UTF-16 units for Unicode); None when it is too long even
/// without them. A space is one byte, one character and one unit, so the excess can be
/// cut by byte count.
/// [`Value::fit_to_in`] of char(`len`) / varchar(`len`) text in a double-byte code page,
/// whose lengths count bytes: only trailing blanks may be cut, char is padded to `len`
/// bytes.
fn fit_double_byte(s: &str, len: usize, pad: bool, cp: CodePage) -> Result<Value, SqlError> {
    let mut s = cp.to_lossy(s);
    let mut bytes = cp.byte_len(&s);
    if bytes > len {
        let kept = s.trim_end_matches(' ').len();
        let without = cp.byte_len(&s[..kept]);
        if without > len {
            return Err(SqlError::string_truncated());
        }
        s.truncate(kept + (len - without));
        bytes = len;
    }
    if pad {
        s.extend(std::iter::repeat_n(' ', len - bytes));
    }
    Ok(Value::String(s))
}

pub(crate) fn fit_str(s: &str, len: usize, unicode: bool) -> Option<&str> {
    // Within the byte count no string can exceed `len` (a character is at least a byte):
    // the common case, without counting.
    if s.len() <= len {
        return Some(s);
    }
    let have = text_len(s, unicode);
    if have <= len {
        return Some(s);
    }
    let excess = have - len;
    let trailing = s.len() - s.trim_end_matches(' ').len();
    (trailing >= excess).then(|| &s[..s.len() - excess])
}

fn valid_time(ticks: u64, scale: u8) -> bool {
    scale <= MAX_TIME_SCALE && ticks < TICKS_PER_DAY && ticks.is_multiple_of(calendar::ticks_per_unit(scale))
}

/// Normalises (days, ticks) where ticks may be a whole day or more after rounding.
pub(crate) fn carry_day(days: i64, ticks: u64) -> (i64, u64) {
    (days + (ticks / TICKS_PER_DAY) as i64, ticks % TICKS_PER_DAY)
}

/// Local (days, ticks) from UTC (days, ticks) and an offset in minutes. Days may fall
/// outside 0..=MAX_DATE_DAYS; the caller checks.
pub(crate) fn utc_to_local(days: u32, ticks: u64, offset: i16) -> (i64, u64) {
    shift_minutes(i64::from(days), ticks, i64::from(offset))
}

/// (days, ticks) moved by a signed number of minutes.
pub(crate) fn shift_minutes(days: i64, ticks: u64, minutes: i64) -> (i64, u64) {
    let total = i128::from(days) * i128::from(TICKS_PER_DAY)
        + i128::from(ticks)
        + i128::from(minutes) * i128::from(TICKS_PER_MINUTE);
    let per_day = i128::from(TICKS_PER_DAY);
    (total.div_euclid(per_day) as i64, total.rem_euclid(per_day) as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert!(Value::decimal(99_999, 5, 2).is_ok());
        assert_eq!(Value::decimal(100_000, 5, 2).unwrap_err().number, 8115);
        assert!(Value::Float(f64::NAN).validate().is_err());
        assert!(Value::Date(MAX_DATE_DAYS + 1).validate().is_err());
        assert!(Value::Time { ticks: 1, scale: 6 }.validate().is_err());
        assert!(Value::Time { ticks: 10, scale: 6 }.validate().is_ok());
        assert!(Value::DateTime { days: DATETIME_MIN_DAYS - 1, ticks: 0 }.validate().is_err());
        assert!(Value::DateTime { days: DATETIME_MAX_DAYS, ticks: DATETIME_TICKS_PER_DAY - 1 }.validate().is_ok());
        assert!(Value::SmallDateTime { days: u16::MAX, minutes: 1439 }.validate().is_ok());
        assert!(Value::SmallDateTime { days: 0, minutes: 1440 }.validate().is_err());
        // 9999-12-31 23:00 UTC at +05:00 would be local 10000-01-01.
        let late =
            Value::DateTimeOffset { days: MAX_DATE_DAYS, ticks: 23 * calendar::TICKS_PER_HOUR, scale: 7, offset: 300 };
        assert!(late.validate().is_err());
        let ok =
            Value::DateTimeOffset { days: MAX_DATE_DAYS, ticks: 23 * calendar::TICKS_PER_HOUR, scale: 7, offset: -300 };
        assert!(ok.validate().is_ok());
        assert!(Value::DateTimeOffset { days: 10, ticks: 0, scale: 7, offset: 841 }.validate().is_err());
    }

    #[test]
    fn type_checks() {
        assert!(Value::Money(i64::from(i32::MAX)).check_type(&SqlType::SmallMoney).is_ok());
        assert_eq!(Value::Money(i64::from(i32::MAX) + 1).check_type(&SqlType::SmallMoney).unwrap_err().number, 8115);
        assert_eq!(Value::Int(1).check_type(&SqlType::Date).unwrap_err().number, 206);
        assert_eq!(
            Value::Int(1).check_type(&SqlType::Date).unwrap_err().message,
            "Operand type clash: int is incompatible with date"
        );
        let d = SqlType::decimal(5, 2).unwrap();
        assert!(Value::decimal(99_999, 38, 2).unwrap().check_type(&d).is_ok());
        assert_eq!(Value::decimal(100_000, 38, 2).unwrap().check_type(&d).unwrap_err().number, 8115);
        assert_eq!(Value::decimal(1, 38, 3).unwrap().check_type(&d).unwrap_err().number, 206);
        let vc = SqlType::varchar(3).unwrap();
        assert!(Value::String("abc".into()).check_type(&vc).is_ok());
        assert_eq!(Value::String("abcd".into()).check_type(&vc).unwrap_err().number, 8152);
        assert_eq!(Value::String("ab  ".into()).fit_to(&vc).unwrap(), Value::String("ab ".into()));
        assert_eq!(Value::String("a".into()).fit_to(&SqlType::char(3).unwrap()).unwrap(), Value::String("a  ".into()));
        assert_eq!(Value::String("日".into()).fit_to(&vc).unwrap(), Value::String("?".into()));
        assert_eq!(Value::String("😀".into()).check_type(&SqlType::nvarchar(1).unwrap()).unwrap_err().number, 8152);
        assert_eq!(Value::Binary(vec![1]).fit_to(&SqlType::binary(3).unwrap()).unwrap(), Value::Binary(vec![1, 0, 0]));
        assert!(Value::Null.check_type(&SqlType::Int).is_ok());
    }

    #[test]
    fn constructors() {
        assert_eq!(Value::date_from_ymd(1, 1, 1).unwrap(), Value::Date(0));
        assert_eq!(Value::date_from_ymd(2023, 2, 29).unwrap_err().number, 241);
        assert_eq!(Value::datetime_from_parts(1900, 1, 1, 999).unwrap(), Value::DateTime { days: 0, ticks: 300 });
        assert_eq!(Value::datetime_from_parts(1752, 12, 31, 0).unwrap_err().number, 242);
        assert_eq!(Value::datetime_from_parts(9999, 12, 31, 86_399_999).unwrap_err().number, 242);
        let v = Value::datetime2_from_parts(2024, 1, 1, TICKS_PER_DAY - 1, 0).unwrap();
        assert_eq!(v, Value::DateTime2 { days: calendar::days_from_civil(2024, 1, 2) as u32, ticks: 0, scale: 0 });
    }
}
