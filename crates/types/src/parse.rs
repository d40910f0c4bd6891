//! Conversion of character strings to values: the rules of CAST('...' AS type) for the
//! formats SQL Server users write, with SQL Server's error numbers. Every function here
//! returns an error for text it does not accept and never panics, whatever the input.
//!
//! Rules implemented (session settings assumed: us_english, DATEFORMAT mdy):
//! - Integers: optional blanks, sign and digits; empty text (or a lone sign) is 0.
//!   Not a number: Msg 245 (tinyint/smallint/int/bit) or 8114 (bigint). Out of range:
//!   Msg 244 (tinyint, smallint: "overflowed an INT1/INT2 column"), 248 (int), 8114
//!   (bigint).
//! - bit: 'true'/'false' (any case) or an integer; any non-zero integer is 1.
//! - decimal/numeric: `[sign]digits[.digits]`, no exponent; extra fraction digits round half
//!   away from zero; Msg 8114 for bad text, 8115 for too many integer digits.
//! - money/smallmoney: an optional currency symbol, commas in the integer part, up to any
//!   number of decimals rounded to 4; Msg 235 for bad text, 8115 out of range.
//! - float/real: `[sign]digits[.digits][e[sign]digits]`; Msg 8114 for bad text (and for
//!   float overflow), 8115 when a value overflows real.
//! - Dates and times: `yyyy-mm-dd`, `yyyy/mm/dd`, `yyyy.mm.dd`, `mm/dd/yyyy`, `mm-dd-yy`,
//!   `yyyymmdd`, `yymmdd`, `yyyy`, `Mon dd[,] yyyy`, `dd Mon yyyy`, `Mon yyyy`, each
//!   optionally followed by a time (after blanks, or after `T` in the ISO dashed form);
//!   a time alone means 1900-01-01. Times are `hh:mi[:ss[.fffffff]]`, `hh:mi:ss:mmm`
//!   (colon: milliseconds), optional `AM`/`PM`, or `hh AM`. An offset `Z`, `+hh:mm` or
//!   `-hh:mm` may follow. Empty text is 1900-01-01 00:00:00. Bad text is Msg 241; for
//!   datetime and smalldatetime a well-formed but impossible or out-of-range date is
//!   Msg 242. datetime takes at most 3 fractional digits (more is 241, as in SQL Server),
//!   the other types at most 7; datetime rounds to 1/300 s, smalldatetime to the minute
//!   (29.999 s and up rounds up), the others to their scale. datetime and smalldatetime
//!   accept only the `Z` offset.
//! - uniqueidentifier: 36 characters `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`, or the same
//!   in braces; characters after those are ignored, as SQL Server truncates the string to
//!   the type's length. Msg 8169 otherwise.
//! - Character types: the text, truncated silently to the length (CAST truncates; only
//!   assignment to a column raises 8152), reduced to code page 1252 for char/varchar,
//!   blank-padded for char/nchar.
//! - Binary types: the bytes of the string (code page 1252, or UTF-16LE when the source is
//!   nvarchar), truncated, zero-padded for binary(n). Hex text is [`parse_hex_binary`].

use crate::calendar::{
    self, DAYS_TO_1900, MAX_DATE_DAYS, MAX_OFFSET_MINUTES, SMALLDATETIME_MAX_DAYS, TICKS_PER_DAY, TICKS_PER_HOUR,
    TICKS_PER_MINUTE, TICKS_PER_SECOND,
};
use crate::codepage::{self, CodePage};
use crate::decimal::{self, MONEY_SCALE, SMALLMONEY_MAX, SMALLMONEY_MIN};
use crate::error::SqlError;
use crate::format::GUID_TEXT_ORDER;
use crate::sqltype::{Length, SqlType};
use crate::value::{carry_day, shift_minutes, Value};

/// CAST(text AS target) with text typed varchar.
pub fn parse(text: &str, target: &SqlType) -> Result<Value, SqlError> {
    parse_from(text, &SqlType::VarChar { len: Length::Max }, target)
}

/// CAST(text AS target) with text of type `source` (a character type): the source's name
/// appears in error messages ("the nvarchar value ...") and decides the bytes a string
/// becomes when cast to binary.
pub fn parse_from(text: &str, source: &SqlType, target: &SqlType) -> Result<Value, SqlError> {
    let from = match source {
        SqlType::NChar { .. } | SqlType::NVarChar { .. } | SqlType::Xml | SqlType::NText => "nvarchar",
        _ => "varchar",
    };
    match *target {
        SqlType::Bit => parse_bit(text, from),
        SqlType::TinyInt => {
            let v = parse_int_in(text, from, "tinyint", 0, i128::from(u8::MAX))?;
            Ok(Value::TinyInt(v as u8))
        }
        SqlType::SmallInt => {
            let v = parse_int_in(text, from, "smallint", i128::from(i16::MIN), i128::from(i16::MAX))?;
            Ok(Value::SmallInt(v as i16))
        }
        SqlType::Int => {
            let v = parse_int_in(text, from, "int", i128::from(i32::MIN), i128::from(i32::MAX))?;
            Ok(Value::Int(v as i32))
        }
        SqlType::BigInt => {
            let v = parse_int_in(text, from, "bigint", i128::from(i64::MIN), i128::from(i64::MAX))?;
            Ok(Value::BigInt(v as i64))
        }
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => {
            parse_decimal(text, from, precision, scale)
        }
        SqlType::Money => parse_money(text, i64::MIN, i64::MAX, "money"),
        SqlType::SmallMoney => parse_money(text, SMALLMONEY_MIN, SMALLMONEY_MAX, "smallmoney"),
        SqlType::Float => parse_float(text, from),
        SqlType::Real => parse_real(text, from),
        SqlType::Date => parse_date_value(text),
        SqlType::Time { scale } => parse_time_value(text, scale),
        SqlType::DateTime => parse_datetime(text, from),
        SqlType::SmallDateTime => parse_smalldatetime(text, from),
        SqlType::DateTime2 { scale } => parse_datetime2(text, from, scale),
        SqlType::DateTimeOffset { scale } => parse_datetimeoffset(text, from, scale),
        SqlType::Char { .. } | SqlType::VarChar { .. } => Ok(fit_code_page(text, target, CodePage::CP1252)),
        SqlType::NChar { len } => Ok(Value::String(fit_utf16(text, usize::from(len), true))),
        SqlType::NVarChar { len: Length::Bounded(len) } => Ok(Value::String(fit_utf16(text, usize::from(len), false))),
        SqlType::NVarChar { len: Length::Max } | SqlType::Xml => Ok(Value::String(text.to_string())),
        SqlType::Binary { len } => Ok(Value::Binary(string_bytes(text, from, Some(usize::from(len)), true))),
        SqlType::VarBinary { len: Length::Bounded(len) } => {
            Ok(Value::Binary(string_bytes(text, from, Some(usize::from(len)), false)))
        }
        SqlType::VarBinary { len: Length::Max } => Ok(Value::Binary(string_bytes(text, from, None, false))),
        SqlType::UniqueIdentifier => parse_guid(text).map(Value::Guid),
        // The text itself becomes the value, of the source's type.
        SqlType::Variant => Value::variant(Value::String(text.to_string()), source),
        SqlType::Text | SqlType::NText | SqlType::Image => parse_from(text, source, &target.max_equivalent()),
        SqlType::HierarchyId => crate::hierarchyid::HierarchyId::parse(text)?.encode().map(Value::Binary),
        // Parse: SRID 0 for geometry, 4326 for geography.
        SqlType::Geometry => Ok(Value::Binary(crate::spatial::Spatial::from_wkt(text, 0, false)?.serialize(false))),
        SqlType::Geography => Ok(Value::Binary(crate::spatial::Spatial::from_wkt(text, 4326, true)?.serialize(true))),
    }
}

/// Blanks SQL Server skips around numbers and dates.
fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

fn trim_blanks(s: &str) -> &str {
    s.trim_matches(is_blank)
}

fn split_sign(s: &str) -> (bool, &str) {
    match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// Outcome of reading an integer: its value (None past i128) or not an integer.
fn parse_integer(text: &str) -> Option<Option<i128>> {
    let (neg, digits) = split_sign(trim_blanks(text));
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut v: i128 = 0;
    for b in digits.bytes() {
        match v.checked_mul(10).and_then(|v| v.checked_add(i128::from(b - b'0'))) {
            Some(n) => v = n,
            None => return Some(None),
        }
    }
    Some(Some(if neg { -v } else { v }))
}

fn parse_int_in(text: &str, from: &str, to: &str, min: i128, max: i128) -> Result<i128, SqlError> {
    let bad = || {
        if to == "bigint" {
            SqlError::error_converting(from, to)
        } else {
            SqlError::conversion_failed(text, from, to)
        }
    };
    let overflow = || match to {
        "tinyint" => int_overflow(244, text, from, "INT1 column. Use a larger integer column"),
        "smallint" => int_overflow(244, text, from, "INT2 column. Use a larger integer column"),
        "int" => int_overflow(248, text, from, "int column"),
        _ => SqlError::error_converting(from, to),
    };
    match parse_integer(text) {
        None => Err(bad()),
        Some(Some(v)) if (min..=max).contains(&v) => Ok(v),
        Some(_) => Err(overflow()),
    }
}

fn int_overflow(number: i32, text: &str, from: &str, what: &str) -> SqlError {
    SqlError::new(number, 16, 1, format!("The conversion of the {from} value '{text}' overflowed an {what}."))
}

fn parse_bit(text: &str, from: &str) -> Result<Value, SqlError> {
    let t = trim_blanks(text);
    if t.eq_ignore_ascii_case("true") {
        return Ok(Value::Bit(true));
    }
    if t.eq_ignore_ascii_case("false") {
        return Ok(Value::Bit(false));
    }
    match parse_integer(t) {
        None => Err(SqlError::conversion_failed(text, from, "bit")),
        Some(v) => Ok(Value::Bit(v != Some(0))),
    }
}

fn parse_decimal(text: &str, from: &str, precision: u8, scale: u8) -> Result<Value, SqlError> {
    let (neg, body) = split_sign(trim_blanks(text));
    match decimal::parse_unsigned_fixed(body, scale) {
        None => Err(SqlError::error_converting(from, "numeric")),
        Some(Some(v)) if decimal::fits_precision(v, precision) => {
            Ok(Value::Decimal { value: if neg { -v } else { v }, precision, scale })
        }
        Some(_) => Err(SqlError::arithmetic_overflow_from(from, "numeric")),
    }
}

fn is_currency_symbol(c: char) -> bool {
    matches!(c, '$' | '\u{A2}'..='\u{A5}' | '\u{20A0}'..='\u{20CF}')
}

fn parse_money(text: &str, min: i64, max: i64, to: &str) -> Result<Value, SqlError> {
    let syntax = || {
        if to == "smallmoney" {
            SqlError::new(293, 16, 0, "Cannot convert char value to smallmoney. The char value has incorrect syntax.")
        } else {
            SqlError::new(235, 16, 0, "Cannot convert a char value to money. The char value has incorrect syntax.")
        }
    };
    let mut t = trim_blanks(text);
    let mut neg = false;
    let mut seen_sign = false;
    let mut seen_symbol = false;
    // A sign and a currency symbol may come in either order: '-$5', '$-5'.
    while let Some(c) = t.chars().next() {
        if (c == '-' || c == '+') && !seen_sign {
            neg = c == '-';
            seen_sign = true;
        } else if is_currency_symbol(c) && !seen_symbol {
            seen_symbol = true;
        } else {
            break;
        }
        t = t[c.len_utf8()..].trim_start_matches(is_blank);
    }
    if t.is_empty() {
        return Ok(Value::Money(0));
    }
    let (int, frac) = match t.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (t, None),
    };
    if int.starts_with(',') {
        return Err(syntax());
    }
    let mut plain: String = int.chars().filter(|&c| c != ',').collect();
    if let Some(f) = frac {
        plain.push('.');
        plain.push_str(f);
    }
    match decimal::parse_unsigned_fixed(&plain, MONEY_SCALE) {
        None => Err(syntax()),
        Some(Some(v)) => {
            let v = if neg { -v } else { v };
            if v < i128::from(min) || v > i128::from(max) {
                Err(SqlError::arithmetic_overflow(to))
            } else {
                Ok(Value::Money(v as i64))
            }
        }
        Some(None) => Err(SqlError::arithmetic_overflow(to)),
    }
}

/// Whether `t` is `[sign]digits[.digits][(e|E)[sign]digits]` with at least one mantissa
/// digit. Rust's float parser also accepts "inf" and "NaN", which SQL Server does not.
fn is_float_syntax(t: &str) -> bool {
    let (_, t) = split_sign(t);
    let (mantissa, exp) = match t.find(['e', 'E']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits_ok(int) || !digits_ok(frac) || int.len() + frac.len() == 0 {
        return false;
    }
    match exp {
        None => true,
        Some(e) => {
            let (_, e) = split_sign(e);
            !e.is_empty() && digits_ok(e)
        }
    }
}

fn parse_float(text: &str, from: &str) -> Result<Value, SqlError> {
    let t = trim_blanks(text);
    if t.is_empty() {
        return Ok(Value::Float(0.0));
    }
    if !is_float_syntax(t) {
        return Err(SqlError::error_converting(from, "float"));
    }
    match t.parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(Value::Float(f)),
        _ => Err(SqlError::error_converting(from, "float")),
    }
}

fn parse_real(text: &str, from: &str) -> Result<Value, SqlError> {
    let t = trim_blanks(text);
    if t.is_empty() {
        return Ok(Value::Real(0.0));
    }
    if !is_float_syntax(t) {
        return Err(SqlError::error_converting(from, "real"));
    }
    match t.parse::<f32>() {
        Ok(f) if f.is_finite() => Ok(Value::Real(f)),
        _ => Err(SqlError::arithmetic_overflow("real")),
    }
}

/// Parses a uniqueidentifier's text into its 16 stored bytes (see
/// [`crate::format::format_guid`] for the byte order). Msg 8169 for anything else.
pub fn parse_guid(text: &str) -> Result<[u8; 16], SqlError> {
    let err =
        || SqlError::new(8169, 16, 2, "Conversion failed when converting from a character string to uniqueidentifier.");
    let b = text.as_bytes();
    let body = if b.first() == Some(&b'{') {
        if b.get(37) != Some(&b'}') {
            return Err(err());
        }
        &b[1..37]
    } else {
        b.get(..36).ok_or_else(err)?
    };
    let mut out = [0u8; 16];
    let mut pair = 0;
    let mut i = 0;
    while i < body.len() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if body[i] != b'-' {
                return Err(err());
            }
            i += 1;
            continue;
        }
        let hi = hex_val(body[i]).ok_or_else(err)?;
        let lo = body.get(i + 1).and_then(|&c| hex_val(c)).ok_or_else(err)?;
        let slot = GUID_TEXT_ORDER.get(pair).copied().ok_or_else(err)?;
        out[slot] = hi << 4 | lo;
        pair += 1;
        i += 2;
    }
    if pair != 16 {
        return Err(err());
    }
    Ok(out)
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Hex text to bytes, as CONVERT(varbinary, text, 1) (`with_prefix`: text starts with
/// `0x`) or style 2 (no prefix). An odd number of digits or a non-hex character is
/// Msg 8114.
pub fn parse_hex_binary(text: &str, with_prefix: bool) -> Result<Vec<u8>, SqlError> {
    let err = || SqlError::error_converting("varchar", "varbinary");
    let digits =
        if with_prefix { text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")).ok_or_else(err)? } else { text };
    let b = digits.as_bytes();
    if b.len() % 2 != 0 {
        return Err(err());
    }
    b.chunks(2)
        .map(|p| match (hex_val(p[0]), hex_val(p[1])) {
            (Some(h), Some(l)) => Ok(h << 4 | l),
            _ => Err(err()),
        })
        .collect()
}

/// CAST(text AS char/varchar) under a collation of code page `cp`: characters outside
/// it become '?', then the text is cut to the length (one character per byte) and char
/// padded with blanks. Any other target type is returned as varchar(max) text.
pub fn fit_code_page(text: &str, target: &SqlType, cp: CodePage) -> Value {
    let (len, pad) = match *target {
        SqlType::Char { len } => (usize::from(len), true),
        SqlType::VarChar { len: Length::Bounded(len) } => (usize::from(len), false),
        _ => return Value::String(cp.to_lossy(text)),
    };
    if cp.is_double_byte() {
        // Lengths count bytes; a character that would not fit whole is dropped.
        let mut s = String::new();
        let mut bytes = 0;
        for c in cp.to_lossy(text).chars() {
            let n = cp.byte_len(c.encode_utf8(&mut [0; 4]));
            if bytes + n > len {
                break;
            }
            bytes += n;
            s.push(c);
        }
        if pad {
            s.extend(std::iter::repeat_n(' ', len - bytes));
        }
        return Value::String(s);
    }
    let mut s: String = cp.to_lossy(text).chars().take(len).collect();
    if pad {
        let have = s.chars().count();
        s.extend(std::iter::repeat_n(' ', len.saturating_sub(have)));
    }
    Value::String(s)
}

fn fit_utf16(text: &str, len: usize, pad: bool) -> String {
    let mut s = String::new();
    let mut units = 0;
    for c in text.chars() {
        let n = crate::ucs2::char_units(c);
        if units + n > len {
            // A pair cut in two keeps its high surrogate, unpaired, as SQL Server does.
            if units < len {
                s.push(crate::ucs2::stand_in(c.encode_utf16(&mut [0; 2])[0]));
                units += 1;
            }
            break;
        }
        units += n;
        s.push(c);
    }
    if pad {
        s.extend(std::iter::repeat_n(' ', len.saturating_sub(units)));
    }
    s
}

fn string_bytes(text: &str, from: &str, len: Option<usize>, pad: bool) -> Vec<u8> {
    let mut out = Vec::new();
    if from == "nvarchar" {
        for u in crate::ucs2::units(&text) {
            out.extend_from_slice(&u.to_le_bytes());
        }
    } else {
        codepage::encode_lossy(text, &mut out);
    }
    if let Some(len) = len {
        out.truncate(len);
        if pad {
            out.resize(len, 0);
        }
    }
    out
}

// ---- dates and times -------------------------------------------------------------

/// A time of day as written: fields are unvalidated except by the grammar.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct TimeText {
    hour: u32,
    minute: u32,
    second: u32,
    /// The fractional digits' value (first 9 digits) and how many digits were written.
    frac: u64,
    frac_digits: usize,
}

impl TimeText {
    /// 100 ns ticks since midnight for at most 7 fractional digits.
    fn ticks(&self) -> u64 {
        let frac = if self.frac_digits <= 7 { self.frac * 10u64.pow(7 - self.frac_digits as u32) } else { 0 };
        u64::from(self.hour) * TICKS_PER_HOUR
            + u64::from(self.minute) * TICKS_PER_MINUTE
            + u64::from(self.second) * TICKS_PER_SECOND
            + frac
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Offset {
    Z,
    Minutes(i32),
}

#[derive(Debug, Default, PartialEq)]
struct DateTimeText {
    date: Option<(i32, u32, u32)>,
    time: Option<TimeText>,
    offset: Option<Offset>,
}

impl DateTimeText {
    fn ymd(&self) -> (i32, u32, u32) {
        self.date.unwrap_or((1900, 1, 1))
    }

    fn time(&self) -> TimeText {
        self.time.unwrap_or_default()
    }

    fn offset_minutes(&self) -> i32 {
        match self.offset {
            Some(Offset::Minutes(m)) => m,
            _ => 0,
        }
    }
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn at_end(&self) -> bool {
        self.i >= self.b.len()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn skip_blanks(&mut self) -> bool {
        let start = self.i;
        while self.peek().is_some_and(|c| is_blank(char::from(c))) {
            self.i += 1;
        }
        self.i > start
    }

    /// A run of digits: (value of the first 9 digits, number of digits); None if no digit.
    fn digits(&mut self) -> Option<(u64, usize)> {
        let start = self.i;
        let mut v = 0u64;
        while let Some(c) = self.peek().filter(u8::is_ascii_digit) {
            if self.i - start < 9 {
                v = v * 10 + u64::from(c - b'0');
            }
            self.i += 1;
        }
        let n = self.i - start;
        (n > 0).then_some((v, n))
    }

    /// Digits of length 1..=max.
    fn short_number(&mut self, max: usize) -> Option<u32> {
        let (v, n) = self.digits()?;
        (n <= max).then_some(v as u32)
    }

    /// The character at the cursor (the text is UTF-8: month names of other languages).
    fn peek_char(&self) -> Option<char> {
        let rest = self.b.get(self.i..)?;
        if let Some(&c) = rest.first().filter(|c| c.is_ascii()) {
            return Some(char::from(c));
        }
        let n = rest.len().min(4);
        // The longest valid prefix of up to 4 bytes holds the next character.
        let s = match std::str::from_utf8(&rest[..n]) {
            Ok(s) => s,
            Err(e) => std::str::from_utf8(&rest[..e.valid_up_to()]).ok()?,
        };
        s.chars().next()
    }

    /// Is the cursor at a letter (a month name or AM/PM starts here)?
    fn at_letter(&self) -> bool {
        self.peek_char().is_some_and(char::is_alphabetic)
    }

    fn word(&mut self) -> &str {
        let start = self.i;
        while let Some(c) = self.peek_char().filter(|c| c.is_alphabetic()) {
            self.i += c.len_utf8();
        }
        std::str::from_utf8(&self.b[start..self.i]).unwrap_or_default()
    }
}

/// A month name in the session's language (or English): see [`crate::lang`].
fn month_number(word: &str) -> Option<u32> {
    crate::lang::current().month_number(word)
}

/// A year written with 4 digits, or 2 digits under the two-digit year cutoff 2049.
fn year_of(v: u64, digits: usize) -> Option<i32> {
    match digits {
        4 => Some(v as i32),
        2 if v < 50 => Some(2000 + v as i32),
        2 => Some(1900 + v as i32),
        _ => None,
    }
}

/// Reads a date at the cursor; returns (year, month, day) and whether it was the ISO
/// dashed form (which may be followed by `T`). Leaves the cursor anywhere on failure.
fn date_part(c: &mut Cursor) -> Option<((i32, u32, u32), bool)> {
    if c.at_letter() {
        // Mon dd[,] yyyy | Mon yyyy
        let m = month_number(c.word())?;
        c.skip_blanks();
        let (v, n) = c.digits()?;
        if n == 4 {
            return Some(((v as i32, m, 1), false));
        }
        if n > 2 {
            return None;
        }
        c.eat(b',');
        c.skip_blanks();
        let (y, yn) = c.digits()?;
        return Some(((year_of(y, yn)?, m, v as u32), false));
    }
    let (n1, d1) = c.digits()?;
    match c.peek() {
        Some(sep @ (b'-' | b'/' | b'.')) => {
            c.i += 1;
            if c.at_letter() {
                // dd-Mon-yyyy
                let m = month_number(c.word())?;
                if d1 > 2 || !c.eat(sep) {
                    return None;
                }
                let (y, yn) = c.digits()?;
                return Some(((year_of(y, yn)?, m, n1 as u32), false));
            }
            let n2 = c.short_number(2)?;
            if !c.eat(sep) {
                return None;
            }
            let (n3, d3) = c.digits()?;
            if d1 == 4 && d3 <= 2 {
                Some(((n1 as i32, n2, n3 as u32), sep == b'-'))
            } else if d1 <= 2 {
                Some(((year_of(n3, d3)?, n1 as u32, n2), false))
            } else {
                None
            }
        }
        next => {
            let boundary = next.is_none_or(|x| x == b'T' || is_blank(char::from(x)));
            if d1 == 8 && boundary {
                return Some((((n1 / 10_000) as i32, (n1 / 100 % 100) as u32, (n1 % 100) as u32), true));
            }
            if d1 == 6 && next.is_none_or(|x| is_blank(char::from(x))) {
                return Some(((year_of(n1 / 10_000, 2)?, (n1 / 100 % 100) as u32, (n1 % 100) as u32), false));
            }
            if next.is_some_and(|x| is_blank(char::from(x))) {
                // dd Mon yyyy
                let save = c.i;
                c.skip_blanks();
                if let Some(m) = month_number(c.word()) {
                    if d1 > 2 {
                        return None;
                    }
                    c.eat(b',');
                    c.skip_blanks();
                    let (y, yn) = c.digits()?;
                    return Some(((year_of(y, yn)?, m, n1 as u32), false));
                }
                c.i = save;
            }
            if d1 == 4 && next.is_none_or(|x| is_blank(char::from(x))) {
                return Some(((n1 as i32, 1, 1), false));
            }
            None
        }
    }
}

/// Reads `hh:mi[:ss[.f|:mmm]] [AM|PM]` or `hh AM|PM`.
fn time_part(c: &mut Cursor) -> Option<TimeText> {
    let mut t = TimeText { hour: c.short_number(2)?, ..TimeText::default() };
    let mut need_ampm = true;
    if c.eat(b':') {
        need_ampm = false;
        t.minute = c.short_number(2)?;
        if c.eat(b':') {
            t.second = c.short_number(2)?;
            if c.eat(b'.') {
                if let Some((v, n)) = c.digits() {
                    t.frac = v;
                    t.frac_digits = n;
                }
            } else if c.eat(b':') {
                t.frac = u64::from(c.short_number(3)?);
                t.frac_digits = 3;
            }
        }
    }
    let save = c.i;
    c.skip_blanks();
    let w = c.word();
    let pm = if w.eq_ignore_ascii_case("PM") {
        Some(true)
    } else if w.eq_ignore_ascii_case("AM") {
        Some(false)
    } else {
        c.i = save;
        None
    };
    match pm {
        Some(pm) => {
            if t.hour > 12 {
                return None;
            }
            t.hour = match (pm, t.hour) {
                (false, 12) => 0,
                (true, h) if h < 12 => h + 12,
                (_, h) => h,
            };
        }
        None if need_ampm => return None,
        None => {}
    }
    (t.hour < 24 && t.minute < 60 && t.second < 60).then_some(t)
}

fn offset_part(c: &mut Cursor) -> Option<Offset> {
    if c.eat(b'Z') || c.eat(b'z') {
        return Some(Offset::Z);
    }
    let neg = match c.peek()? {
        b'+' => false,
        b'-' => true,
        _ => return None,
    };
    c.i += 1;
    let (h, hn) = c.digits()?;
    let (h, m) = if hn == 4 {
        (h / 100, h % 100)
    } else if hn <= 2 && c.eat(b':') {
        (h, u64::from(c.short_number(2)?))
    } else {
        return None;
    };
    let total = h * 60 + m;
    if m >= 60 || total > MAX_OFFSET_MINUTES as u64 {
        return None;
    }
    Some(Offset::Minutes(if neg { -(total as i32) } else { total as i32 }))
}

/// Splits date/time text into its written parts, or None when the text is not one of
/// the accepted forms.
fn scan_datetime(text: &str) -> Option<DateTimeText> {
    let b = trim_blanks(text).as_bytes();
    let mut c = Cursor { b, i: 0 };
    let mut out = DateTimeText::default();
    if c.at_end() {
        return Some(out);
    }
    let start = c.i;
    match date_part(&mut c) {
        Some((ymd, iso)) => {
            out.date = Some(ymd);
            if c.at_end() {
                return Some(out);
            }
            let separated = (iso && c.eat(b'T')) || c.skip_blanks();
            if !separated {
                return None;
            }
        }
        None => c.i = start,
    }
    out.time = Some(time_part(&mut c)?);
    c.skip_blanks();
    if !c.at_end() {
        out.offset = Some(offset_part(&mut c)?);
        c.skip_blanks();
    }
    c.at_end().then_some(out)
}

fn scan_or_241(text: &str, max_frac_digits: usize) -> Result<DateTimeText, SqlError> {
    match scan_datetime(text) {
        Some(p) if p.time.map_or(0, |t| t.frac_digits) <= max_frac_digits => Ok(p),
        _ => Err(SqlError::datetime_conversion_failed()),
    }
}

fn parse_date_value(text: &str) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 7)?;
    let (y, m, d) = p.ymd();
    Value::date_from_ymd(y, m, d)
}

fn parse_time_value(text: &str, scale: u8) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 7)?;
    // Rounding 23:59:59.9999999 up at a small scale wraps to midnight (time has no day
    // to carry into).
    let ticks = calendar::round_ticks_to_scale(p.time().ticks(), scale) % TICKS_PER_DAY;
    Ok(Value::Time { ticks, scale })
}

fn parse_datetime(text: &str, from: &str) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 3)?;
    if matches!(p.offset, Some(Offset::Minutes(_))) {
        return Err(SqlError::datetime_conversion_failed());
    }
    let (y, m, d) = p.ymd();
    let t = p.time();
    let millis = u64::from(t.hour * 3600 + t.minute * 60 + t.second) * 1000
        + t.frac * 10u64.pow(3u32.saturating_sub(t.frac_digits as u32));
    Value::datetime_from_parts(y, m, d, millis as u32).map_err(|_| SqlError::datetime_out_of_range(from, "datetime"))
}

fn parse_smalldatetime(text: &str, from: &str) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 7)?;
    if matches!(p.offset, Some(Offset::Minutes(_))) {
        return Err(SqlError::datetime_conversion_failed());
    }
    let range = || SqlError::datetime_out_of_range(from, "smalldatetime");
    let (y, m, d) = p.ymd();
    if !calendar::is_valid_date(y, m, d) {
        return Err(range());
    }
    let t = p.time();
    let within_minute = t.ticks() % TICKS_PER_MINUTE;
    let mut minutes = i64::from(t.hour * 60 + t.minute);
    // SQL Server: 29.998 s or less rounds down, 29.999 s or more rounds up.
    if within_minute >= 29_999 * (TICKS_PER_SECOND / 1000) {
        minutes += 1;
    }
    let mut days = calendar::days_from_civil(y, m, d) - DAYS_TO_1900;
    if minutes == 1440 {
        minutes = 0;
        days += 1;
    }
    if !(0..=i64::from(SMALLDATETIME_MAX_DAYS)).contains(&days) {
        return Err(range());
    }
    Ok(Value::SmallDateTime { days: days as u16, minutes: minutes as u16 })
}

fn parse_datetime2(text: &str, from: &str, scale: u8) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 7)?;
    let (y, m, d) = p.ymd();
    if !calendar::is_valid_date(y, m, d) {
        return Err(SqlError::datetime_conversion_failed());
    }
    Value::datetime2_from_parts(y, m, d, p.time().ticks(), scale).map_err(|e| {
        if e.number == 242 {
            SqlError::datetime_out_of_range(from, "datetime2")
        } else {
            e
        }
    })
}

fn parse_datetimeoffset(text: &str, from: &str, scale: u8) -> Result<Value, SqlError> {
    let p = scan_or_241(text, 7)?;
    let (y, m, d) = p.ymd();
    if !calendar::is_valid_date(y, m, d) {
        return Err(SqlError::datetime_conversion_failed());
    }
    let range = || SqlError::datetime_out_of_range(from, "datetimeoffset");
    let local_days = calendar::days_from_civil(y, m, d);
    let (local_days, local_ticks) = carry_day(local_days, calendar::round_ticks_to_scale(p.time().ticks(), scale));
    if local_days > i64::from(MAX_DATE_DAYS) {
        return Err(range());
    }
    let offset = p.offset_minutes();
    let (utc_days, utc_ticks) = shift_minutes(local_days, local_ticks, -i64::from(offset));
    if utc_days < 0 || utc_days > i64::from(MAX_DATE_DAYS) {
        return Err(range());
    }
    Ok(Value::DateTimeOffset { days: utc_days as u32, ticks: utc_ticks, scale, offset: offset as i16 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calendar::days_from_civil;

    fn p(text: &str, ty: SqlType) -> Result<Value, SqlError> {
        parse(text, &ty)
    }

    fn num(r: Result<Value, SqlError>) -> i32 {
        r.map(|v| panic!("expected an error, got {v:?}")).unwrap_or_else(|e| e.number)
    }

    #[test]
    fn integers() {
        assert_eq!(p(" 12 ", SqlType::Int).unwrap(), Value::Int(12));
        assert_eq!(p("-2147483648", SqlType::Int).unwrap(), Value::Int(i32::MIN));
        assert_eq!(p("", SqlType::Int).unwrap(), Value::Int(0));
        assert_eq!(p("+", SqlType::Int).unwrap(), Value::Int(0));
        assert_eq!(p("0007", SqlType::TinyInt).unwrap(), Value::TinyInt(7));
        let e = p("abc", SqlType::Int).unwrap_err();
        assert_eq!(e.number, 245);
        assert_eq!(e.message, "Conversion failed when converting the varchar value 'abc' to data type int.");
        assert_eq!(num(p("1.5", SqlType::Int)), 245);
        let e = p("2147483648", SqlType::Int).unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (248, "The conversion of the varchar value '2147483648' overflowed an int column.")
        );
        let e = p("256", SqlType::TinyInt).unwrap_err();
        assert_eq!(
            e.message,
            "The conversion of the varchar value '256' overflowed an INT1 column. Use a larger integer column."
        );
        assert_eq!(num(p("-1", SqlType::TinyInt)), 244);
        assert_eq!(num(p("40000", SqlType::SmallInt)), 244);
        assert_eq!(num(p("x", SqlType::SmallInt)), 245);
        assert_eq!(p("9223372036854775807", SqlType::BigInt).unwrap(), Value::BigInt(i64::MAX));
        let e = p("9223372036854775808", SqlType::BigInt).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (8114, "Error converting data type varchar to bigint."));
        assert_eq!(num(p(&"9".repeat(100), SqlType::Int)), 248);
        let e = parse_from("x", &SqlType::nvarchar(5).unwrap(), &SqlType::Int).unwrap_err();
        assert_eq!(e.message, "Conversion failed when converting the nvarchar value 'x' to data type int.");
    }

    #[test]
    fn bits() {
        assert_eq!(p("TRUE", SqlType::Bit).unwrap(), Value::Bit(true));
        assert_eq!(p("false", SqlType::Bit).unwrap(), Value::Bit(false));
        assert_eq!(p("2", SqlType::Bit).unwrap(), Value::Bit(true));
        assert_eq!(p("0", SqlType::Bit).unwrap(), Value::Bit(false));
        assert_eq!(num(p("yes", SqlType::Bit)), 245);
    }

    #[test]
    fn decimals() {
        let d52 = SqlType::decimal(5, 2).unwrap();
        assert_eq!(p("1.235", d52).unwrap(), Value::Decimal { value: 124, precision: 5, scale: 2 });
        assert_eq!(p("-1.235", d52).unwrap(), Value::Decimal { value: -124, precision: 5, scale: 2 });
        assert_eq!(p(" 999.99 ", d52).unwrap(), Value::Decimal { value: 99_999, precision: 5, scale: 2 });
        assert_eq!(p(".5", d52).unwrap(), Value::Decimal { value: 50, precision: 5, scale: 2 });
        let e = p("1000", d52).unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (8115, "Arithmetic overflow error converting varchar to data type numeric.")
        );
        assert_eq!(num(p("999.995", d52)), 8115);
        let e = p("1e3", d52).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (8114, "Error converting data type varchar to numeric."));
        assert_eq!(num(p("", d52)), 8114);
        assert_eq!(num(p("-", d52)), 8114);
        let d38 = SqlType::decimal(38, 0).unwrap();
        assert_eq!(
            p(&"9".repeat(38), d38).unwrap(),
            Value::Decimal { value: decimal::MAX_DECIMAL_UNSCALED, precision: 38, scale: 0 }
        );
        assert_eq!(num(p(&"9".repeat(39), d38)), 8115);
    }

    #[test]
    fn money() {
        assert_eq!(p("$1,234.56", SqlType::Money).unwrap(), Value::Money(12_345_600));
        assert_eq!(p("-$5", SqlType::Money).unwrap(), Value::Money(-50_000));
        assert_eq!(p("€-5.123456", SqlType::Money).unwrap(), Value::Money(-51_235));
        assert_eq!(p("", SqlType::Money).unwrap(), Value::Money(0));
        assert_eq!(p("922337203685477.5807", SqlType::Money).unwrap(), Value::Money(i64::MAX));
        assert_eq!(p("-922337203685477.5808", SqlType::Money).unwrap(), Value::Money(i64::MIN));
        assert_eq!(num(p("922337203685477.5808", SqlType::Money)), 8115);
        assert_eq!(p("214748.3647", SqlType::SmallMoney).unwrap(), Value::Money(2_147_483_647));
        assert_eq!(num(p("214748.3648", SqlType::SmallMoney)), 8115);
        assert_eq!(num(p("12a", SqlType::Money)), 235);
        assert_eq!(num(p("1e5", SqlType::Money)), 235);
    }

    #[test]
    fn floats() {
        assert_eq!(p("1.5e3", SqlType::Float).unwrap(), Value::Float(1500.0));
        assert_eq!(p(" -.5 ", SqlType::Float).unwrap(), Value::Float(-0.5));
        assert_eq!(p("", SqlType::Float).unwrap(), Value::Float(0.0));
        assert_eq!(p("0.1", SqlType::Real).unwrap(), Value::Real(0.1));
        assert_eq!(num(p("inf", SqlType::Float)), 8114);
        assert_eq!(num(p("NaN", SqlType::Float)), 8114);
        assert_eq!(num(p("1e400", SqlType::Float)), 8114);
        assert_eq!(num(p("1e39", SqlType::Real)), 8115);
        assert_eq!(num(p("1e", SqlType::Float)), 8114);
        assert_eq!(num(p(".", SqlType::Float)), 8114);
    }

    fn ymd(y: i32, m: u32, d: u32) -> u32 {
        days_from_civil(y, m, d) as u32
    }

    fn hms(h: u64, mi: u64, s: u64) -> u64 {
        h * TICKS_PER_HOUR + mi * TICKS_PER_MINUTE + s * TICKS_PER_SECOND
    }

    #[test]
    fn dates() {
        for text in [
            "2024-01-02",
            "2024/01/02",
            "2024.1.2",
            "01/02/2024",
            "1-2-24",
            "20240102",
            "240102",
            "Jan 2 2024",
            "January 2, 2024",
            "2 Jan 2024",
            "02-Jan-2024",
            " 2024-01-02 10:00 ",
        ] {
            assert_eq!(p(text, SqlType::Date).unwrap(), Value::Date(ymd(2024, 1, 2)), "{text}");
        }
        assert_eq!(p("", SqlType::Date).unwrap(), Value::Date(ymd(1900, 1, 1)));
        assert_eq!(p("2024", SqlType::Date).unwrap(), Value::Date(ymd(2024, 1, 1)));
        assert_eq!(p("Feb 2024", SqlType::Date).unwrap(), Value::Date(ymd(2024, 2, 1)));
        assert_eq!(p("0001-01-01", SqlType::Date).unwrap(), Value::Date(0));
        assert_eq!(p("12/31/99", SqlType::Date).unwrap(), Value::Date(ymd(1999, 12, 31)));
        assert_eq!(p("12/31/49", SqlType::Date).unwrap(), Value::Date(ymd(2049, 12, 31)));
        for bad in [
            "2023-02-29",
            "2024-13-01",
            "x",
            "2024-01-02x",
            "10000-01-01",
            "0000-01-01",
            "2024-01",
            "2024-01-02T",
            "Foo 2 2024",
        ] {
            let e = p(bad, SqlType::Date).unwrap_err();
            assert_eq!(e.number, 241, "{bad}");
            assert_eq!(e.message, "Conversion failed when converting date and/or time from character string.");
        }
    }

    #[test]
    fn datetimes() {
        let dt = |y, m, d, ms: u64| {
            let days = (days_from_civil(y, m, d) - DAYS_TO_1900) as i32;
            Value::DateTime { days, ticks: calendar::millis_to_datetime_ticks(ms) as u32 }
        };
        assert_eq!(p("2024-01-02 03:04:05.997", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 11_045_997));
        assert_eq!(p("2024-01-02T03:04:05.997", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 11_045_997));
        assert_eq!(p("2024-01-02T03:04:05Z", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 11_045_000));
        assert_eq!(p("2024-01-02 03:04:05:5", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 11_045_005));
        assert_eq!(p("2024-01-02 3:04PM", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 54_240_000));
        assert_eq!(p("Jan  2 2024 12:00AM", SqlType::DateTime).unwrap(), dt(2024, 1, 2, 0));
        assert_eq!(p("10:00", SqlType::DateTime).unwrap(), dt(1900, 1, 1, 36_000_000));
        assert_eq!(p("2024-01-02 23:59:59.999", SqlType::DateTime).unwrap(), dt(2024, 1, 3, 0));
        assert_eq!(p("", SqlType::DateTime).unwrap(), Value::DateTime { days: 0, ticks: 0 });
        assert_eq!(num(p("2024-01-02 03:04:05.1234", SqlType::DateTime)), 241);
        assert_eq!(num(p("2024-01-02 03:04:05 +05:00", SqlType::DateTime)), 241);
        let e = p("1752-12-31", SqlType::DateTime).unwrap_err();
        assert_eq!(e.number, 242);
        assert_eq!(
            e.message,
            "The conversion of a varchar data type to a datetime data type resulted in an out-of-range value."
        );
        assert_eq!(num(p("2023-02-29", SqlType::DateTime)), 242);
        assert_eq!(num(p("9999-12-31 23:59:59.999", SqlType::DateTime)), 242);
        assert_eq!(num(p("2024-01-02 24:00", SqlType::DateTime)), 241);
        assert_eq!(num(p("2024-01-02 13:00 PM", SqlType::DateTime)), 241);
    }

    #[test]
    fn smalldatetimes() {
        let sdt =
            |y, m, d, minutes| Value::SmallDateTime { days: (days_from_civil(y, m, d) - DAYS_TO_1900) as u16, minutes };
        assert_eq!(p("2024-01-02 03:04:29.998", SqlType::SmallDateTime).unwrap(), sdt(2024, 1, 2, 184));
        assert_eq!(p("2024-01-02 03:04:29.999", SqlType::SmallDateTime).unwrap(), sdt(2024, 1, 2, 185));
        assert_eq!(p("2079-06-06 23:59", SqlType::SmallDateTime).unwrap(), sdt(2079, 6, 6, 1439));
        assert_eq!(num(p("2079-06-06 23:59:30", SqlType::SmallDateTime)), 242);
        assert_eq!(num(p("1899-12-31", SqlType::SmallDateTime)), 242);
    }

    #[test]
    fn datetime2_time_and_offset() {
        let v = p("2024-01-02 03:04:05.1234567", SqlType::DateTime2 { scale: 7 }).unwrap();
        assert_eq!(v, Value::DateTime2 { days: ymd(2024, 1, 2), ticks: hms(3, 4, 5) + 1_234_567, scale: 7 });
        let v = p("2024-01-02 03:04:05.1235", SqlType::DateTime2 { scale: 3 }).unwrap();
        assert_eq!(v, Value::DateTime2 { days: ymd(2024, 1, 2), ticks: hms(3, 4, 5) + 1_240_000, scale: 3 });
        let v = p("2024-01-02 23:59:59.9", SqlType::DateTime2 { scale: 0 }).unwrap();
        assert_eq!(v, Value::DateTime2 { days: ymd(2024, 1, 3), ticks: 0, scale: 0 });
        assert_eq!(num(p("9999-12-31 23:59:59.9", SqlType::DateTime2 { scale: 0 })), 242);
        assert_eq!(num(p("2024-01-02 03:04:05.12345678", SqlType::DateTime2 { scale: 7 })), 241);
        let v = p("2024-01-02 10:00 +05:00", SqlType::DateTime2 { scale: 0 }).unwrap();
        assert_eq!(v, Value::DateTime2 { days: ymd(2024, 1, 2), ticks: hms(10, 0, 0), scale: 0 });
        assert_eq!(
            p("03:04:05.123", SqlType::Time { scale: 3 }).unwrap(),
            Value::Time { ticks: hms(3, 4, 5) + 1_230_000, scale: 3 }
        );
        assert_eq!(
            p("2024-01-02 03:04", SqlType::Time { scale: 0 }).unwrap(),
            Value::Time { ticks: hms(3, 4, 0), scale: 0 }
        );
        assert_eq!(p("11 PM", SqlType::Time { scale: 0 }).unwrap(), Value::Time { ticks: hms(23, 0, 0), scale: 0 });
        assert_eq!(p("23:59:59.9", SqlType::Time { scale: 0 }).unwrap(), Value::Time { ticks: 0, scale: 0 });
        let v = p("2024-01-02 03:04:05 +05:30", SqlType::DateTimeOffset { scale: 0 }).unwrap();
        assert_eq!(v, Value::DateTimeOffset { days: ymd(2024, 1, 1), ticks: hms(21, 34, 5), scale: 0, offset: 330 });
        assert_eq!(v.to_string(), "2024-01-02 03:04:05 +05:30");
        let v = p("2024-01-02T03:04:05-0800", SqlType::DateTimeOffset { scale: 0 }).unwrap();
        assert_eq!(v, Value::DateTimeOffset { days: ymd(2024, 1, 2), ticks: hms(11, 4, 5), scale: 0, offset: -480 });
        assert_eq!(num(p("0001-01-01 00:00 +01:00", SqlType::DateTimeOffset { scale: 0 })), 242);
        assert_eq!(num(p("2024-01-02 03:04 +14:01", SqlType::DateTimeOffset { scale: 0 })), 241);
        assert_eq!(
            p("2024-01-02", SqlType::DateTimeOffset { scale: 7 }).unwrap().to_string(),
            "2024-01-02 00:00:00.0000000 +00:00"
        );
    }

    #[test]
    fn guids() {
        let bytes = [0xFF, 0x19, 0x96, 0x6F, 0x86, 0x8B, 0x11, 0xD0, 0xB4, 0x2D, 0x00, 0xC0, 0x4F, 0xC9, 0x64, 0xFF];
        assert_eq!(parse_guid("6F9619FF-8B86-D011-B42D-00C04FC964FF").unwrap(), bytes);
        assert_eq!(parse_guid("{6f9619ff-8b86-d011-b42d-00c04fc964ff}").unwrap(), bytes);
        assert_eq!(parse_guid("6F9619FF-8B86-D011-B42D-00C04FC964FFwrong").unwrap(), bytes);
        for bad in [
            "",
            "6F9619FF-8B86-D011-B42D-00C04FC964F",
            "6F9619FF8B86-D011-B42D-00C04FC964FF0",
            "{6F9619FF-8B86-D011-B42D-00C04FC964FF",
            "6F9619FF-8B86-D011-B42D-00C04FC964FG",
            "6F9619FF-8B86-D011-B42D-00C04FC964é",
        ] {
            assert_eq!(parse_guid(bad).unwrap_err().number, 8169, "{bad}");
        }
    }

    #[test]
    fn strings_and_binary() {
        assert_eq!(p("abcdef", SqlType::varchar(3).unwrap()).unwrap(), Value::String("abc".into()));
        assert_eq!(p("ab", SqlType::char(4).unwrap()).unwrap(), Value::String("ab  ".into()));
        assert_eq!(p("日本", SqlType::varchar(10).unwrap()).unwrap(), Value::String("??".into()));
        assert_eq!(p("日本", SqlType::nchar(3).unwrap()).unwrap(), Value::String("日本 ".into()));
        // A pair cut by the length keeps its high surrogate, unpaired (as SQL Server).
        let half = format!("a{}", crate::ucs2::stand_in(0xD83D));
        assert_eq!(p("a😀", SqlType::nvarchar(2).unwrap()).unwrap(), Value::String(half));
        assert_eq!(p("AB", SqlType::varbinary(10).unwrap()).unwrap(), Value::Binary(vec![0x41, 0x42]));
        assert_eq!(p("AB", SqlType::binary(3).unwrap()).unwrap(), Value::Binary(vec![0x41, 0x42, 0]));
        let v = parse_from("A", &SqlType::nvarchar(1).unwrap(), &SqlType::varbinary(10).unwrap()).unwrap();
        assert_eq!(v, Value::Binary(vec![0x41, 0]));
        assert_eq!(parse_hex_binary("0x0aFF", true).unwrap(), vec![0x0A, 0xFF]);
        assert_eq!(parse_hex_binary("0aFF", false).unwrap(), vec![0x0A, 0xFF]);
        assert_eq!(parse_hex_binary("0x0", true).unwrap_err().number, 8114);
        assert_eq!(parse_hex_binary("zz", false).unwrap_err().number, 8114);
    }
}
