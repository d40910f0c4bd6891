//! Text forms of values: what `Display` for [`Value`] prints, matching how SQL Server
//! and its client tools show each type (the ISO style 121 forms for dates and times).
//!
//! | type | example |
//! |---|---|
//! | bit | `1`, `0` |
//! | decimal(5,2) | `-12.30` (always `scale` digits) |
//! | money, smallmoney | `12.3400` (4 decimals, no thousands separator) |
//! | float, real | shortest text that reads back to the same value (see [`format_float`]) |
//! | date | `2024-01-02` |
//! | time(3) | `03:04:05.123` (scale digits; none at scale 0) |
//! | datetime | `2024-01-02 03:04:05.997` |
//! | smalldatetime | `2024-01-02 03:04:00` |
//! | datetime2(7) | `2024-01-02 03:04:05.1234567` |
//! | datetimeoffset(7) | `2024-01-02 03:04:05.1234567 +05:30` (local time, then offset) |
//! | uniqueidentifier | `6F9619FF-8B86-D011-B42D-00C04FC964FF` |
//! | binary | `0x0A0B` |
//!
//! Note: CAST(x AS varchar) of datetime, smalldatetime and money uses CONVERT style 0
//! (`Jan  2 2024  3:04AM`, two money decimals); [`format_datetime_style0`] and
//! [`format_money_style0`] give those forms for the CONVERT implementation.

use std::fmt::{self, Write};

use crate::calendar::{self, DAYS_TO_1900, TICKS_PER_MINUTE};
use crate::decimal;
use crate::value::Value;

/// `yyyy-mm-dd` of a day number since 0001-01-01.
pub fn format_date(days: i64) -> String {
    let (y, m, d) = calendar::civil_from_days(days);
    format!("{y:04}-{m:02}-{d:02}")
}

/// `hh:mi:ss[.f...]` of 100 ns ticks since midnight with `scale` fractional digits.
pub fn format_time(ticks: u64, scale: u8) -> String {
    let (h, mi, s, frac) = calendar::split_ticks(ticks);
    let mut out = format!("{h:02}:{mi:02}:{s:02}");
    push_fraction(&mut out, frac, scale);
    out
}

fn push_fraction(out: &mut String, frac_ticks: u64, scale: u8) {
    let scale = scale.min(7);
    if scale > 0 {
        let digits = frac_ticks / calendar::ticks_per_unit(scale);
        let _ = write!(out, ".{:0width$}", digits, width = usize::from(scale));
    }
}

/// `+hh:mm` / `-hh:mm` of an offset in minutes.
pub fn format_offset(offset: i16) -> String {
    let sign = if offset < 0 { '-' } else { '+' };
    let a = offset.unsigned_abs();
    format!("{sign}{:02}:{:02}", a / 60, a % 60)
}

/// `yyyy-mm-dd hh:mi:ss.mmm` of a datetime.
pub fn format_datetime(days: i32, ticks: u32) -> String {
    let secs = ticks / calendar::DATETIME_TICKS_PER_SECOND;
    let ms = calendar::datetime_ticks_to_millis(ticks % calendar::DATETIME_TICKS_PER_SECOND);
    format!(
        "{} {:02}:{:02}:{:02}.{:03}",
        format_date(i64::from(days) + DAYS_TO_1900),
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        ms
    )
}

/// `Mon dd yyyy hh:miAM` (CONVERT style 0/100, and what CAST(datetime AS varchar) gives):
/// day and hour space-padded to two characters, e.g. `Jan  2 2024  3:04AM`.
pub fn format_datetime_style0(days_since_0001: i64, ticks: u64) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (y, m, d) = calendar::civil_from_days(days_since_0001);
    let (h, mi, _, _) = calendar::split_ticks(ticks);
    let (h12, ampm) = match h {
        0 => (12, "AM"),
        1..=11 => (h, "AM"),
        12 => (12, "PM"),
        _ => (h - 12, "PM"),
    };
    let month = MONTHS.get((m as usize).wrapping_sub(1)).copied().unwrap_or("???");
    format!("{month} {d:>2} {y:04} {h12:>2}:{mi:02}{ampm}")
}

/// money in CONVERT style 0: rounded to two decimals, no separators (`12.35`).
pub fn format_money_style0(m: i64) -> String {
    let v = decimal::rescale(i128::from(m), 4, 2).unwrap_or(0);
    decimal::format_unscaled(v, 2)
}

/// `0x` then upper-case hex of every byte, as SQL Server shows binary values.
pub fn format_binary(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(2 + bytes.len() * 2);
    out.push_str("0x");
    for b in bytes {
        let _ = write!(out, "{b:02X}");
    }
    out
}

/// The canonical text of a uniqueidentifier. The 16 stored bytes are in .NET Guid order:
/// the first three groups are little-endian (bytes 3,2,1,0 - 5,4 - 7,6), the last two are
/// in byte order (8,9 - 10..16). E.g. bytes FF 19 96 6F 86 8B 11 D0 B4 2D 00 C0 4F C9 64 FF
/// show as `6F9619FF-8B86-D011-B42D-00C04FC964FF`.
pub fn format_guid(g: &[u8; 16]) -> String {
    let mut out = String::with_capacity(36);
    for (i, &idx) in GUID_TEXT_ORDER.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        let _ = write!(out, "{:02X}", g[idx]);
    }
    out
}

/// Which stored byte each pair of hex digits of the text form comes from.
pub(crate) const GUID_TEXT_ORDER: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];

/// Text of a float: the shortest digits that read back to the same f64 (Rust's
/// round-trip algorithm, the same digits .NET Core 3.0+ and SSMS show), laid out like
/// .NET's `double.ToString()`: plain decimal notation when the decimal exponent is in
/// -5 < e < 15, otherwise `d.dddE+XX` with a signed exponent of at least two digits.
/// Examples: `0.1`, `123.456`, `1E+15`, `1.5E-05`, `-2.5`.
pub fn format_float(f: f64) -> String {
    format_shortest(&format!("{f:e}"), 15)
}

/// Text of a real, as [`format_float`] but with f32's shortest round-trip digits and
/// scientific notation from exponent 7 on (like .NET's `float.ToString()`).
pub fn format_real(f: f32) -> String {
    format_shortest(&format!("{f:e}"), 7)
}

/// Lays out Rust's `{:e}` output (`-1.2345e-7`, `0e0`, `inf`, `NaN`) per the rules above.
fn format_shortest(sci: &str, max_exp: i32) -> String {
    let Some((mantissa, exp)) = sci.split_once('e') else {
        // inf / NaN: not storable in SQL Server; show something rather than fail.
        return sci.to_string();
    };
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mantissa) = match mantissa.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mantissa),
    };
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if digits.bytes().all(|b| b == b'0') {
        out.push('0');
        return out;
    }
    if exp > -5 && exp < max_exp {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                out.push_str(&digits);
                out.extend(std::iter::repeat_n('0', int_len - digits.len()));
            } else {
                out.push_str(&digits[..int_len]);
                out.push('.');
                out.push_str(&digits[int_len..]);
            }
        } else {
            out.push_str("0.");
            out.extend(std::iter::repeat_n('0', (-exp - 1) as usize));
            out.push_str(&digits);
        }
    } else {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "E{}{:02}", if exp < 0 { '-' } else { '+' }, exp.unsigned_abs());
    }
    out
}

impl fmt::Display for Value {
    /// The text SQL Server's tools show for the value (see the module table). NULL
    /// prints as `NULL`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("NULL"),
            Value::Bit(b) => f.write_str(if *b { "1" } else { "0" }),
            Value::TinyInt(v) => write!(f, "{v}"),
            Value::SmallInt(v) => write!(f, "{v}"),
            Value::Int(v) => write!(f, "{v}"),
            Value::BigInt(v) => write!(f, "{v}"),
            Value::Decimal { value, scale, .. } => f.write_str(&decimal::format_unscaled(*value, *scale)),
            Value::Money(m) => f.write_str(&decimal::format_unscaled(i128::from(*m), decimal::MONEY_SCALE)),
            Value::Float(v) => f.write_str(&format_float(*v)),
            Value::Real(v) => f.write_str(&format_real(*v)),
            Value::Date(days) => f.write_str(&format_date(i64::from(*days))),
            Value::Time { ticks, scale } => f.write_str(&format_time(*ticks, *scale)),
            Value::DateTime { days, ticks } => f.write_str(&format_datetime(*days, *ticks)),
            Value::SmallDateTime { days, minutes } => {
                let ticks = u64::from(*minutes) * TICKS_PER_MINUTE;
                write!(f, "{} {}", format_date(i64::from(*days) + DAYS_TO_1900), format_time(ticks, 0))
            }
            Value::DateTime2 { days, ticks, scale } => {
                write!(f, "{} {}", format_date(i64::from(*days)), format_time(*ticks, *scale))
            }
            Value::DateTimeOffset { days, ticks, scale, offset } => {
                let (ld, lt) = crate::value::utc_to_local(*days, *ticks, *offset);
                write!(f, "{} {} {}", format_date(ld), format_time(lt, *scale), format_offset(*offset))
            }
            Value::String(s) => f.write_str(s),
            Value::Binary(b) => f.write_str(&format_binary(b)),
            Value::Guid(g) => f.write_str(&format_guid(g)),
            Value::Variant(v) => v.value.fmt(f),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::{days_from_civil, TICKS_PER_SECOND};

    fn dt2(y: i32, m: u32, d: u32, ticks: u64, scale: u8) -> Value {
        Value::DateTime2 { days: days_from_civil(y, m, d) as u32, ticks, scale }
    }

    const T030405: u64 = (3 * 3600 + 4 * 60 + 5) * TICKS_PER_SECOND;

    #[test]
    fn dates_and_times() {
        assert_eq!(Value::Date(days_from_civil(2024, 1, 2) as u32).to_string(), "2024-01-02");
        assert_eq!(Value::Date(0).to_string(), "0001-01-01");
        assert_eq!(dt2(2024, 1, 2, T030405 + 1_234_567, 7).to_string(), "2024-01-02 03:04:05.1234567");
        assert_eq!(dt2(2024, 1, 2, T030405, 0).to_string(), "2024-01-02 03:04:05");
        assert_eq!(Value::Time { ticks: T030405 + 1_230_000, scale: 3 }.to_string(), "03:04:05.123");
        let days = (days_from_civil(2024, 1, 2) - DAYS_TO_1900) as i32;
        let ticks = (3 * 3600 + 4 * 60 + 5) * 300 + 299;
        assert_eq!(Value::DateTime { days, ticks }.to_string(), "2024-01-02 03:04:05.997");
        assert_eq!(Value::DateTime { days: -53_690, ticks: 0 }.to_string(), "1753-01-01 00:00:00.000");
        assert_eq!(Value::SmallDateTime { days: u16::MAX, minutes: 1439 }.to_string(), "2079-06-06 23:59:00");
        // 2024-01-01 21:34:05 UTC at +05:30 is 2024-01-02 03:04:05 local.
        let utc = T030405 + 24 * calendar::TICKS_PER_HOUR - 330 * TICKS_PER_MINUTE;
        let v = Value::DateTimeOffset { days: days_from_civil(2024, 1, 1) as u32, ticks: utc, scale: 7, offset: 330 };
        assert_eq!(v.to_string(), "2024-01-02 03:04:05.0000000 +05:30");
        let v = Value::DateTimeOffset { days: 0, ticks: 0, scale: 0, offset: -90 };
        assert_eq!(format_offset(-90), "-01:30");
        assert!(v.validate().is_err()); // local would be 0000-12-31
        assert_eq!(format_datetime_style0(days_from_civil(2024, 1, 2), T030405), "Jan  2 2024  3:04AM");
        assert_eq!(
            format_datetime_style0(days_from_civil(2024, 12, 25), 13 * calendar::TICKS_PER_HOUR),
            "Dec 25 2024  1:00PM"
        );
        assert_eq!(format_datetime_style0(0, 0), "Jan  1 0001 12:00AM");
    }

    #[test]
    fn numbers() {
        assert_eq!(Value::Bit(true).to_string(), "1");
        assert_eq!(Value::Money(123_400).to_string(), "12.3400");
        assert_eq!(Value::Money(-1).to_string(), "-0.0001");
        assert_eq!(Value::Money(i64::MIN).to_string(), "-922337203685477.5808");
        assert_eq!(format_money_style0(123_450), "12.35");
        assert_eq!(Value::Decimal { value: 1230, precision: 5, scale: 2 }.to_string(), "12.30");
        assert_eq!(format_float(0.1), "0.1");
        assert_eq!(format_float(123.456), "123.456");
        assert_eq!(format_float(1e15), "1E+15");
        assert_eq!(format_float(123_456_789_012_345.0), "123456789012345");
        assert_eq!(format_float(1.5e-5), "1.5E-05");
        assert_eq!(format_float(0.0001), "0.0001");
        assert_eq!(format_float(-2.5), "-2.5");
        assert_eq!(format_float(0.0), "0");
        assert_eq!(format_float(1.7976931348623157e308), "1.7976931348623157E+308");
        assert_eq!(format_float(100.0), "100");
        assert_eq!(format_real(0.1), "0.1");
        assert_eq!(format_real(1_234_567.0), "1234567");
        assert_eq!(format_real(12_345_678.0), "1.2345678E+07");
    }

    #[test]
    fn guid_and_binary() {
        let g = [0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF];
        assert_eq!(Value::Guid(g).to_string(), "6F9619FF-8B86-D011-B42D-00C04FC964FF");
        assert_eq!(Value::Binary(vec![0x0A, 0xBC]).to_string(), "0x0ABC");
        assert_eq!(Value::Binary(vec![]).to_string(), "0x");
    }
}
