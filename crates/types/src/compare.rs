//! Ordering of values: [`compare`] for predicates and sorting, and [`sort_key`], bytes
//! whose memcmp order is the same ordering, for B+tree keys.
//!
//! Strings compare under an approximation of SQL_Latin1_General_CP1_CI_AS
//! ([`compare_strings`]): case-insensitive, accent-sensitive, trailing spaces ignored.
//! Binary values ignore trailing 0x00 bytes, as SQL Server does ("0x = 0x00" is true).
//! uniqueidentifier orders by bytes 10..16, then 8..10, 6..8, 4..6, 0..4 (SQL Server's
//! order, which puts the last group of the text form first).

use std::cmp::Ordering;

use crate::calendar::DAYS_TO_1900;
use crate::decimal;
use crate::error::SqlError;
use crate::sqltype::{time_storage_len, SqlType};
use crate::value::Value;

/// Compares two values of the same family, or None when either is NULL (SQL's unknown)
/// or the families differ (the executor converts first, by precedence). Families:
/// numbers (bit, integers, decimal, money exactly; float or real against anything
/// numeric as f64), points in time (date, datetime, smalldatetime, datetime2 and
/// datetimeoffset, the last by its UTC instant and the others taken as UTC), time,
/// strings, binaries, uniqueidentifiers.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    use Value::*;
    match (a, b) {
        (Null, _) | (_, Null) => None,
        (Variant(_), _) | (_, Variant(_)) => Some(compare_variant(a.unvariant(), b.unvariant())),
        (Float(_) | Real(_), _) | (_, Float(_) | Real(_)) => as_f64(a)?.partial_cmp(&as_f64(b)?),
        (String(x), String(y)) => Some(compare_strings(x, y)),
        (Binary(x), Binary(y)) => Some(trim_zeros(x).cmp(trim_zeros(y))),
        (Guid(x), Guid(y)) => Some(guid_order(x).cmp(&guid_order(y))),
        (Time { ticks: x, .. }, Time { ticks: y, .. }) => Some(x.cmp(y)),
        _ => {
            if let (Some(x), Some(y)) = (as_exact(a), as_exact(b)) {
                return Some(compare_exact(x, y));
            }
            Some(as_instant(a)?.cmp(&as_instant(b)?))
        }
    }
}

/// The base type family of a sql_variant value as a rank (a value of a higher family is
/// greater than every value of a lower one; SQL Server's sql_variant comparison rules):
/// date and time 6, approximate numeric 5, exact numeric 4, character 3 (char, varchar,
/// nchar and nvarchar are one family here: Mesquite has one collation, under which SQL
/// Server compares them as nvarchar), binary 2, uniqueidentifier 1.
pub fn variant_family(v: &Value) -> u8 {
    match v {
        Value::Date(_)
        | Value::Time { .. }
        | Value::DateTime { .. }
        | Value::SmallDateTime { .. }
        | Value::DateTime2 { .. }
        | Value::DateTimeOffset { .. } => 6,
        Value::Float(_) | Value::Real(_) => 5,
        Value::String(_) => 3,
        Value::Binary(_) => 2,
        Value::Guid(_) => 1,
        _ => 4,
    }
}

/// Compares two non-NULL sql_variant contents (or a sql_variant and a plain value,
/// which SQL Server converts to sql_variant first): by family, then within the family
/// as the values themselves compare. A time is the time on 1900-01-01 against the
/// other date and time types (its conversion to datetime).
fn compare_variant(a: &Value, b: &Value) -> Ordering {
    let (fa, fb) = (variant_family(a), variant_family(b));
    if fa != fb {
        return fa.cmp(&fb);
    }
    if fa == 6 {
        return variant_instant(a).cmp(&variant_instant(b));
    }
    compare(a, b).unwrap_or(Ordering::Equal)
}

fn variant_instant(v: &Value) -> (i64, u64) {
    match *v {
        Value::Time { ticks, .. } => (DAYS_TO_1900, ticks * 3),
        _ => as_instant(v).unwrap_or((0, 0)),
    }
}

/// (unscaled, scale) of an exact number.
fn as_exact(v: &Value) -> Option<(i128, u8)> {
    Some(match *v {
        Value::Bit(b) => (i128::from(b), 0),
        Value::TinyInt(x) => (i128::from(x), 0),
        Value::SmallInt(x) => (i128::from(x), 0),
        Value::Int(x) => (i128::from(x), 0),
        Value::BigInt(x) => (i128::from(x), 0),
        Value::Money(m) => (i128::from(m), decimal::MONEY_SCALE),
        Value::Decimal { value, scale, .. } => (value, scale),
        _ => return None,
    })
}

fn as_f64(v: &Value) -> Option<f64> {
    match *v {
        Value::Float(f) => Some(f),
        Value::Real(f) => Some(f64::from(f)),
        _ => {
            let (x, s) = as_exact(v)?;
            Some(x as f64 / 10f64.powi(i32::from(s)))
        }
    }
}

fn compare_exact((a, sa): (i128, u8), (b, sb): (i128, u8)) -> Ordering {
    match sa.cmp(&sb) {
        Ordering::Equal => a.cmp(&b),
        Ordering::Less => match a.checked_mul(decimal::pow10(sb - sa)) {
            Some(a) => a.cmp(&b),
            // Too large for i128 means larger in magnitude than any b.
            None => 0.cmp(&a).reverse(),
        },
        Ordering::Greater => compare_exact((b, sb), (a, sa)).reverse(),
    }
}

/// A point in time as (days since 0001-01-01, units of 1/30,000,000 s): the common
/// multiple of 100 ns ticks (3 units) and datetime's 1/300 s (100,000 units).
fn as_instant(v: &Value) -> Option<(i64, u64)> {
    Some(match *v {
        Value::Date(d) => (i64::from(d), 0),
        Value::DateTime { days, ticks } => (i64::from(days) + DAYS_TO_1900, u64::from(ticks) * 100_000),
        Value::SmallDateTime { days, minutes } => (i64::from(days) + DAYS_TO_1900, u64::from(minutes) * 1_800_000_000),
        Value::DateTime2 { days, ticks, .. } | Value::DateTimeOffset { days, ticks, .. } => {
            (i64::from(days), ticks * 3)
        }
        _ => return None,
    })
}

fn trim_zeros(b: &[u8]) -> &[u8] {
    let end = b.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    &b[..end]
}

/// SQL Server's uniqueidentifier comparison order of the 16 stored bytes.
const GUID_ORDER: [usize; 16] = [10, 11, 12, 13, 14, 15, 8, 9, 6, 7, 4, 5, 0, 1, 2, 3];

fn guid_order(g: &[u8; 16]) -> [u8; 16] {
    GUID_ORDER.map(|i| g[i])
}

// ---- collation -------------------------------------------------------------------

/// Base letters of U+00C0..=U+00FF ('-': no base letter, the character sorts by itself).
const LATIN1_BASE: &[u8; 64] = b"AAAAAA-CEEEEIIII-NOOOOO-OUUUUY--aaaaaa-ceeeeiiii-nooooo-ouuuuy-y";
/// Base letters of U+0100..=U+017F (Latin Extended-A).
const LATIN_EXT_A_BASE: &[u8; 128] = b"AaAaAaCcCcCcCcDdDdEeEeEeEeEeGgGgGgGgHhHhIiIiIiIiIi--JjKk-LlLlLlLlLlNnNnNn---OoOoOo--RrRrRrSsSsSsSsTtTtTtUuUuUuUuUuUuWwYyYZzZzZz-";

/// Collation weights of one character: (primary, secondary). Primary weights order
/// punctuation and controls (ASCII order) before digits before letters (a..z, with
/// accented Latin letters on their base letter) before every other character (by code
/// point). Case is folded before weighing. The secondary weight is 0 for an unaccented
/// character and a distinct non-zero number (at most 192) per accented form.
pub(crate) fn weights(c: char) -> (u32, u8) {
    let mut lower = c.to_lowercase();
    let c = match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    };
    let cp = u32::from(c);
    if cp < 0x80 {
        let b = cp as u8;
        return (ascii_primary(b), 0);
    }
    let base = match cp {
        0xC0..=0xFF => Some((LATIN1_BASE[(cp - 0xC0) as usize], cp - 0xBF)),
        0x100..=0x17F => Some((LATIN_EXT_A_BASE[(cp - 0x100) as usize], cp - 0x100 + 65)),
        _ => None,
    };
    match base {
        Some((letter, secondary)) if letter != b'-' => (ascii_primary(letter.to_ascii_lowercase()), secondary as u8),
        _ => (0x80 + cp, 0),
    }
}

/// Primary weight of an ASCII character (letters already lower-case): 1..=66 for the
/// 66 non-alphanumeric characters in ASCII order, 67..=76 digits, 77..=102 letters.
fn ascii_primary(b: u8) -> u32 {
    if b.is_ascii_digit() {
        67 + u32::from(b - b'0')
    } else if b.is_ascii_lowercase() {
        77 + u32::from(b - b'a')
    } else if b.is_ascii_uppercase() {
        77 + u32::from(b - b'A')
    } else {
        // Rank among non-alphanumerics below b, plus one.
        let below = u32::from(b) - alnum_below(b);
        below + 1
    }
}

/// Number of ASCII alphanumerics with code below b.
fn alnum_below(b: u8) -> u32 {
    (0..b).filter(|x| x.is_ascii_alphanumeric()).count() as u32
}

pub(crate) fn trim_trailing_spaces(s: &str) -> &str {
    s.trim_end_matches(' ')
}

/// Compares strings the way SQL_Latin1_General_CP1_CI_AS does, approximately:
/// case-insensitive, accent-sensitive, trailing spaces ignored (so 'a' = 'A ' and
/// 'e' < 'é' < 'f'). The text first compares by primary weights (letters without case
/// or accents); only on a tie do accents decide, position by position.
///
/// Limits of the approximation (documented in the crate docs): punctuation orders by
/// ASCII code rather than SQL Server's sort order 52 table; expansions ('æ' = 'ae',
/// 'ß' = 'ss') and Windows word-sort rules (hyphen and apostrophe ignored in nvarchar)
/// are not applied; letters outside Latin-1 and Latin Extended-A order by code point
/// after case folding; varchar and nvarchar use the same rules.
pub fn compare_strings(a: &str, b: &str) -> Ordering {
    let (a, b) = (trim_trailing_spaces(a), trim_trailing_spaces(b));
    let primary = a.chars().map(|c| weights(c).0).cmp(b.chars().map(|c| weights(c).0));
    if primary != Ordering::Equal {
        return primary;
    }
    a.chars().map(|c| weights(c).1).cmp(b.chars().map(|c| weights(c).1))
}

/// Whether two strings are equal under the collation (the `=` operator).
pub fn strings_equal(a: &str, b: &str) -> bool {
    compare_strings(a, b) == Ordering::Equal
}

// ---- sort keys -------------------------------------------------------------------

/// Appends the sort key of `value` as a value of column type `ty` (checked as by
/// [`Value::check_type`]). For two values of the same type, memcmp of their keys orders
/// exactly as [`compare`] does, and equal keys mean equal values; NULL's key (a single
/// 0x00) sorts before every other value, as NULLs do in indexes and ORDER BY. Non-NULL
/// keys start with 0x01.
///
/// Keys are self-delimiting (no key is a prefix of another), so the keys of several
/// columns concatenated order like the column tuple, and a descending column can use the
/// bitwise complement of its key. Layouts after the 0x01 marker:
/// - bit, tinyint: the byte; smallint/int/bigint, money (8), smallmoney (4): big-endian
///   with the sign bit flipped;
/// - decimal/numeric: the unscaled value, sign-flipped big-endian, in 4, 8 or 16 bytes
///   for precision up to 9, 18, 38;
/// - real/float: IEEE bits, flipped so that memcmp order is numeric order (-0 as +0);
/// - date: 3 bytes big-endian; time(n): its stored units big-endian in the type's stored
///   length; datetime2(n): date then time; datetimeoffset(n): UTC date then time (the
///   offset is not part of the key: the same instant at two offsets is equal);
///   datetime: days sign-flipped (4) then ticks (4); smalldatetime: days (2) minutes (2);
/// - strings: the collation's primary weights (trailing spaces dropped) in an
///   order-preserving UTF-8-style variable-length code, 0x00, then the secondary
///   (accent) weights plus one with trailing zeros dropped, 0x00. Equal keys mean equal
///   under the collation, so a unique index rejects 'A' next to 'a ';
/// - binary: trailing zeros dropped, 0x00 escaped as 0x00 0xFF, then 0x00 0x00;
/// - uniqueidentifier: the 16 bytes in SQL Server's comparison order.
pub fn sort_key(value: &Value, ty: &SqlType, out: &mut Vec<u8>) -> Result<(), SqlError> {
    value.check_type(ty)?;
    if value.is_null() {
        out.push(0);
        return Ok(());
    }
    out.push(1);
    match (value, *ty) {
        (Value::Bit(b), _) => out.push(u8::from(*b)),
        (Value::TinyInt(v), _) => out.push(*v),
        (Value::SmallInt(v), _) => out.extend_from_slice(&((*v as u16) ^ 0x8000).to_be_bytes()),
        (Value::Int(v), _) => out.extend_from_slice(&flip32(*v)),
        (Value::BigInt(v), _) => out.extend_from_slice(&flip64(*v)),
        (Value::Money(m), SqlType::SmallMoney) => out.extend_from_slice(&flip32(*m as i32)),
        (Value::Money(m), _) => out.extend_from_slice(&flip64(*m)),
        (Value::Decimal { value, .. }, SqlType::Decimal { precision, .. } | SqlType::Numeric { precision, .. }) => {
            match precision {
                0..=9 => out.extend_from_slice(&flip32(*value as i32)),
                10..=18 => out.extend_from_slice(&flip64(*value as i64)),
                _ => out.extend_from_slice(&((*value as u128) ^ (1 << 127)).to_be_bytes()),
            }
        }
        (Value::Float(f), _) => {
            let bits = (if *f == 0.0 { 0.0f64 } else { *f }).to_bits();
            let key = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
            out.extend_from_slice(&key.to_be_bytes());
        }
        (Value::Real(f), _) => {
            let bits = (if *f == 0.0 { 0.0f32 } else { *f }).to_bits();
            let key = if bits >> 31 == 1 { !bits } else { bits | 1 << 31 };
            out.extend_from_slice(&key.to_be_bytes());
        }
        (Value::Date(d), _) => out.extend_from_slice(&d.to_be_bytes()[1..]),
        (Value::Time { ticks, scale }, _) => push_time_key(*ticks, *scale, out),
        (Value::DateTime2 { days, ticks, scale }, _) | (Value::DateTimeOffset { days, ticks, scale, .. }, _) => {
            out.extend_from_slice(&days.to_be_bytes()[1..]);
            push_time_key(*ticks, *scale, out);
        }
        (Value::DateTime { days, ticks }, _) => {
            out.extend_from_slice(&flip32(*days));
            out.extend_from_slice(&ticks.to_be_bytes());
        }
        (Value::SmallDateTime { days, minutes }, _) => {
            out.extend_from_slice(&days.to_be_bytes());
            out.extend_from_slice(&minutes.to_be_bytes());
        }
        (Value::String(s), _) => push_string_key(s, out),
        (Value::Binary(b), _) => push_binary_key(b, out),
        (Value::Guid(g), _) => out.extend_from_slice(&guid_order(g)),
        (Value::Variant(v), _) => push_variant_key(&v.value, out),
        _ => return Err(SqlError::operand_type_clash(value.kind_name(), ty.name())),
    }
    Ok(())
}

/// [`sort_key`] with strings keyed under `collation` ([`crate::Collation::push_sort_key`]):
/// the grouping and duplicate keys of GROUP BY, DISTINCT and UNION under a collation
/// other than the default. None or the default collation give [`sort_key`]'s bytes.
pub fn sort_key_in(
    value: &Value,
    ty: &SqlType,
    collation: Option<&crate::Collation>,
    out: &mut Vec<u8>,
) -> Result<(), SqlError> {
    match (value, collation) {
        (Value::String(s), Some(c)) if *c != crate::Collation::DEFAULT => {
            value.check_type(ty)?;
            out.push(1);
            c.push_sort_key(s, ty.is_unicode(), out);
            Ok(())
        }
        _ => sort_key(value, ty, out),
    }
}

/// The key of a sql_variant's contents: the family rank, then a key that orders the
/// whole family as [`compare_variant`] does: exact numbers as their floor integer part
/// (i128, sign-flipped) and the fraction scaled to 38 digits, floats as f64, points in
/// time as (days, 1/30,000,000 s), strings, binaries and GUIDs as their own keys.
fn push_variant_key(v: &Value, out: &mut Vec<u8>) {
    let family = variant_family(v);
    out.push(family);
    match family {
        6 => {
            let (days, units) = variant_instant(v);
            out.extend_from_slice(&flip64(days));
            out.extend_from_slice(&units.to_be_bytes());
        }
        5 => {
            let f = as_f64(v).unwrap_or(0.0);
            let bits = (if f == 0.0 { 0.0f64 } else { f }).to_bits();
            let key = if bits >> 63 == 1 { !bits } else { bits | 1 << 63 };
            out.extend_from_slice(&key.to_be_bytes());
        }
        4 => {
            let (x, s) = as_exact(v).unwrap_or((0, 0));
            let p = decimal::pow10(s);
            let (int, frac) = (x.div_euclid(p), x.rem_euclid(p));
            out.extend_from_slice(&((int as u128) ^ (1 << 127)).to_be_bytes());
            // frac < 10^s, so frac * 10^(38 - s) < 10^38 < 2^127.
            out.extend_from_slice(&((frac as u128) * (decimal::pow10(38 - s) as u128)).to_be_bytes());
        }
        3 => {
            if let Value::String(s) = v {
                push_string_key(s, out);
            }
        }
        2 => {
            if let Value::Binary(b) = v {
                push_binary_key(b, out);
            }
        }
        _ => {
            if let Value::Guid(g) = v {
                out.extend_from_slice(&guid_order(g));
            }
        }
    }
}

fn push_binary_key(b: &[u8], out: &mut Vec<u8>) {
    for &x in trim_zeros(b) {
        if x == 0 {
            out.extend_from_slice(&[0, 0xFF]);
        } else {
            out.push(x);
        }
    }
    out.extend_from_slice(&[0, 0]);
}

fn flip32(v: i32) -> [u8; 4] {
    ((v as u32) ^ (1 << 31)).to_be_bytes()
}

fn flip64(v: i64) -> [u8; 8] {
    ((v as u64) ^ (1 << 63)).to_be_bytes()
}

fn push_time_key(ticks: u64, scale: u8, out: &mut Vec<u8>) {
    let units = ticks / crate::calendar::ticks_per_unit(scale);
    let n = usize::from(time_storage_len(scale));
    out.extend_from_slice(&units.to_be_bytes()[8 - n..]);
}

pub(crate) fn push_string_key(s: &str, out: &mut Vec<u8>) {
    let s = trim_trailing_spaces(s);
    for c in s.chars() {
        push_weight(weights(c).0, out);
    }
    out.push(0);
    let secondaries: Vec<u8> = s.chars().map(|c| weights(c).1).collect();
    let end = secondaries.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
    out.extend(secondaries[..end].iter().map(|&w| w + 1));
    out.push(0);
}

/// Writes a weight (1..2^21) in the UTF-8 layout: byte order equals numeric order, no
/// byte is 0x00, and no code is a prefix of another.
pub(crate) fn push_weight(w: u32, out: &mut Vec<u8>) {
    if w < 0x80 {
        out.push(w as u8);
    } else if w < 0x800 {
        out.extend_from_slice(&[0xC0 | (w >> 6) as u8, 0x80 | (w & 0x3F) as u8]);
    } else if w < 0x1_0000 {
        out.extend_from_slice(&[0xE0 | (w >> 12) as u8, 0x80 | (w >> 6 & 0x3F) as u8, 0x80 | (w & 0x3F) as u8]);
    } else {
        out.extend_from_slice(&[
            0xF0 | (w >> 18) as u8,
            0x80 | (w >> 12 & 0x3F) as u8,
            0x80 | (w >> 6 & 0x3F) as u8,
            0x80 | (w & 0x3F) as u8,
        ]);
    }
}

/// [`sort_key`] into a new vector.
pub fn sort_key_vec(value: &Value, ty: &SqlType) -> Result<Vec<u8>, SqlError> {
    let mut out = Vec::new();
    sort_key(value, ty, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use Ordering::*;

    #[test]
    fn numbers_across_types() {
        assert_eq!(compare(&Value::Int(5), &Value::BigInt(5)), Some(Equal));
        assert_eq!(compare(&Value::TinyInt(5), &Value::Decimal { value: 501, precision: 5, scale: 2 }), Some(Less));
        assert_eq!(compare(&Value::Money(50_000), &Value::Int(5)), Some(Equal));
        assert_eq!(compare(&Value::Float(0.5), &Value::Decimal { value: 5, precision: 1, scale: 1 }), Some(Equal));
        assert_eq!(compare(&Value::Real(1.5), &Value::Float(1.5)), Some(Equal));
        let big = Value::Decimal { value: decimal::MAX_DECIMAL_UNSCALED, precision: 38, scale: 0 };
        let small = Value::Decimal { value: 1, precision: 38, scale: 38 };
        assert_eq!(compare(&big, &small), Some(Greater));
        assert_eq!(compare(&small, &big), Some(Less));
        assert_eq!(compare(&Value::Int(1), &Value::Null), None);
        assert_eq!(compare(&Value::Int(1), &Value::String("1".into())), None);
        assert_eq!(compare(&Value::Float(-0.0), &Value::Float(0.0)), Some(Equal));
    }

    #[test]
    fn times_across_types() {
        let d = Value::Date(crate::calendar::DAYS_TO_1900 as u32);
        assert_eq!(compare(&d, &Value::DateTime { days: 0, ticks: 0 }), Some(Equal));
        assert_eq!(compare(&d, &Value::SmallDateTime { days: 0, minutes: 1 }), Some(Less));
        let dt = Value::DateTime { days: 0, ticks: 1 }; // 1/300 s
        let dt2 = Value::DateTime2 { days: crate::calendar::DAYS_TO_1900 as u32, ticks: 33_333, scale: 7 };
        assert_eq!(compare(&dt, &dt2), Some(Greater));
        let a = Value::DateTimeOffset { days: 10, ticks: 0, scale: 0, offset: 60 };
        let b = Value::DateTimeOffset { days: 10, ticks: 0, scale: 0, offset: -300 };
        assert_eq!(compare(&a, &b), Some(Equal));
        assert_eq!(compare(&Value::Time { ticks: 5, scale: 7 }, &Value::Time { ticks: 10, scale: 6 }), Some(Less));
        assert_eq!(compare(&Value::Time { ticks: 0, scale: 7 }, &Value::Date(0)), None);
    }

    #[test]
    fn strings_under_ci_as() {
        assert_eq!(compare_strings("abc", "ABC"), Equal);
        assert_eq!(compare_strings("abc", "abc   "), Equal);
        assert_eq!(compare_strings("abc", " abc"), Greater);
        assert_eq!(compare_strings("a", "B"), Less);
        assert_eq!(compare_strings("e", "é"), Less);
        assert_eq!(compare_strings("é", "f"), Less);
        assert_eq!(compare_strings("É", "é"), Equal);
        assert_eq!(compare_strings("éa", "eb"), Less);
        assert_eq!(compare_strings("_", "0"), Less);
        assert_eq!(compare_strings("9", "a"), Less);
        assert_eq!(compare_strings("ab", "abc"), Less);
        assert_eq!(compare_strings("", "   "), Equal);
        assert!(!strings_equal("Straße", "STRASSE"));
    }

    #[test]
    fn binary_and_guid() {
        assert_eq!(compare(&Value::Binary(vec![]), &Value::Binary(vec![0, 0])), Some(Equal));
        assert_eq!(compare(&Value::Binary(vec![1]), &Value::Binary(vec![1, 0, 1])), Some(Less));
        assert_eq!(compare(&Value::Binary(vec![0x20]), &Value::Binary(vec![0x20, 0x20])), Some(Less));
        let mut a = [0u8; 16];
        let mut b = [0u8; 16];
        a[0] = 0xFF; // first text group: least significant for ordering
        b[15] = 0x01; // last byte of the text form
        assert_eq!(compare(&Value::Guid(a), &Value::Guid(b)), Some(Less));
        let k = |v: &Value| sort_key_vec(v, &SqlType::UniqueIdentifier).unwrap();
        assert!(k(&Value::Guid(a)) < k(&Value::Guid(b)));
    }

    #[test]
    fn key_examples() {
        let k = |v: Value, t: SqlType| sort_key_vec(&v, &t).unwrap();
        assert!(k(Value::Int(-1), SqlType::Int) < k(Value::Int(0), SqlType::Int));
        assert!(k(Value::Null, SqlType::Int) < k(Value::Int(i32::MIN), SqlType::Int));
        let vc = SqlType::varchar(10).unwrap();
        assert_eq!(k(Value::String("Ab ".into()), vc), k(Value::String("aB".into()), vc));
        assert!(k(Value::String("e".into()), vc) < k(Value::String("é".into()), vc));
        assert!(k(Value::String("é".into()), vc) < k(Value::String("f".into()), vc));
        assert_eq!(k(Value::String("abc".into()), vc), vec![1, 77, 78, 79, 0, 0]);
        assert!(k(Value::Float(-1.0), SqlType::Float) < k(Value::Float(-0.5), SqlType::Float));
        assert_eq!(k(Value::Float(-0.0), SqlType::Float), k(Value::Float(0.0), SqlType::Float));
        assert_eq!(sort_key_vec(&Value::Int(1), &SqlType::Date).unwrap_err().number, 206);
    }
}
