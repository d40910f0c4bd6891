//! FORMAT(value, format [, culture]): .NET format strings as SQL Server passes them to
//! the CLR, for the en-US culture (and the invariant culture, which reads the same for
//! these formats).
//!
//! Numbers: the standard formats N, F, D, C, P, X, E, G with an optional precision, and
//! custom patterns built from `0`, `#`, `,` (grouping), `.`, `%` and literal text,
//! including a second section after `;` for negative numbers. Dates and times: the
//! standard formats d D t T f F g G M Y s u o and custom patterns (yyyy, MM, MMM, MMMM,
//! dd, ddd, dddd, HH, hh, mm, ss, f..., tt, zzz, K, quoted literals, `\` escapes); time
//! values follow .NET TimeSpan rules (`hh\:mm`, standard `c`/`g`). Decisions: what .NET
//! rejects (D on a decimal, an unescaped `:` in a TimeSpan pattern) returns NULL, as
//! SQL Server's FORMAT does; currency negatives show as `($1.00)` (.NET Framework's
//! en-US pattern, which SQL Server uses); zero is never negative.

use types::calendar;
use types::{SqlError, Value};

use super::convert::{float_to_unscaled, group_thousands};
use super::dates::{day_name, month_name};
use super::util::{exact_parts, utc_clock, wall_clock, UNITS_PER_SECOND, UNITS_PER_TICK};

/// Msg 9818 for a culture other than en-US / en / the invariant culture.
pub fn check_culture(culture: Option<&str>) -> Result<(), SqlError> {
    match culture {
        None => Ok(()),
        Some(c) if c.is_empty() || c.eq_ignore_ascii_case("en-US") || c.eq_ignore_ascii_case("en") => Ok(()),
        Some(c) => Err(SqlError::new(
            9818,
            16,
            1,
            format!("The culture parameter '{c}' provided in the function call is not supported."),
        )),
    }
}

/// FORMAT of a non-NULL value; None where .NET would throw (SQL Server returns NULL).
pub fn format_value(v: &Value, fmt: &str) -> Option<String> {
    match v {
        Value::Date(_)
        | Value::DateTime { .. }
        | Value::SmallDateTime { .. }
        | Value::DateTime2 { .. }
        | Value::DateTimeOffset { .. } => format_date(v, fmt),
        Value::Time { ticks, .. } => format_timespan(*ticks, fmt),
        Value::Float(f) => format_number(Num::from_f64(*f)?, fmt, false),
        Value::Real(f) => format_number(Num::from_f64(f64::from(*f))?, fmt, false),
        _ => {
            let (x, s) = exact_parts(v)?;
            let integer = matches!(v, Value::TinyInt(_) | Value::SmallInt(_) | Value::Int(_) | Value::BigInt(_));
            let width = match v {
                Value::TinyInt(_) => 8,
                Value::SmallInt(_) => 16,
                Value::Int(_) => 32,
                _ => 64,
            };
            format_number(
                Num { neg: x < 0, mag: x.unsigned_abs(), scale: s, int_width: integer.then_some(width) },
                fmt,
                false,
            )
        }
    }
}

/// A number as sign, magnitude and scale.
#[derive(Debug, Clone, Copy)]
struct Num {
    neg: bool,
    mag: u128,
    scale: u8,
    /// Bit width for integer types (hex of negatives); None for non-integers.
    int_width: Option<u32>,
}

impl Num {
    fn from_f64(f: f64) -> Option<Num> {
        // 17 significant digits are enough to reproduce any double.
        let mag = if f == 0.0 { 0 } else { f.abs().log10().floor().clamp(-400.0, 400.0) as i32 };
        let scale = (16 - mag).clamp(0, 30) as u8;
        let u = float_to_unscaled(f, scale)?;
        Some(Num { neg: u < 0, mag: u.unsigned_abs(), scale, int_width: None })
    }

    /// The magnitude rounded half away from zero to `digits` decimals, as (integer part,
    /// fraction digits).
    fn digits(&self, digits: u8) -> (String, String) {
        let v = types::decimal::rescale(self.mag as i128, self.scale, digits).unwrap_or(0);
        let text = types::decimal::format_unscaled(v, digits);
        match text.split_once('.') {
            Some((i, f)) => (i.to_string(), f.to_string()),
            None => (text, String::new()),
        }
    }

    /// The shortest decimal text (trailing fraction zeros dropped).
    fn plain(&self) -> String {
        let (i, f) = self.digits(self.scale);
        let f = f.trim_end_matches('0');
        let sign = if self.neg && (i != "0" || !f.is_empty()) { "-" } else { "" };
        if f.is_empty() {
            format!("{sign}{i}")
        } else {
            format!("{sign}{i}.{f}")
        }
    }

    fn times100(mut self) -> Num {
        if self.scale >= 2 {
            self.scale -= 2;
        } else {
            self.mag = self.mag.saturating_mul(100);
        }
        self
    }
}

fn format_number(n: Num, fmt: &str, _unused: bool) -> Option<String> {
    let mut chars = fmt.chars();
    let first = chars.next();
    let rest = chars.as_str();
    let standard =
        first.is_some_and(|c| c.is_ascii_alphabetic()) && rest.bytes().all(|b| b.is_ascii_digit()) && rest.len() <= 2;
    if fmt.is_empty() {
        return Some(n.plain());
    }
    if !standard {
        return Some(custom_number(n, fmt));
    }
    let prec: Option<u8> = if rest.is_empty() { None } else { rest.parse().ok() };
    let sign = |s: String, zero: bool| if n.neg && !zero { format!("-{s}") } else { s };
    let is_zero = |i: &str, f: &str| i.bytes().all(|b| b == b'0') && f.bytes().all(|b| b == b'0');
    Some(match first?.to_ascii_uppercase() {
        'N' => {
            let (i, f) = n.digits(prec.unwrap_or(2));
            let z = is_zero(&i, &f);
            let body = if f.is_empty() { group_thousands(&i) } else { format!("{}.{f}", group_thousands(&i)) };
            sign(body, z)
        }
        'F' => {
            let (i, f) = n.digits(prec.unwrap_or(2));
            let z = is_zero(&i, &f);
            sign(if f.is_empty() { i } else { format!("{i}.{f}") }, z)
        }
        'D' => {
            n.int_width?;
            let (i, _) = n.digits(0);
            let w = usize::from(prec.unwrap_or(0));
            sign(format!("{i:0>w$}"), i == "0")
        }
        'C' => {
            let (i, f) = n.digits(prec.unwrap_or(2));
            let z = is_zero(&i, &f);
            let body = if f.is_empty() { group_thousands(&i) } else { format!("{}.{f}", group_thousands(&i)) };
            if n.neg && !z {
                format!("(${body})")
            } else {
                format!("${body}")
            }
        }
        'P' => {
            let p = n.times100();
            let (i, f) = p.digits(prec.unwrap_or(2));
            let z = is_zero(&i, &f);
            let body = if f.is_empty() { group_thousands(&i) } else { format!("{}.{f}", group_thousands(&i)) };
            sign(format!("{body} %"), z)
        }
        'X' => {
            let width = n.int_width?;
            let v = if n.neg { (n.mag as i128).wrapping_neg() } else { n.mag as i128 };
            let mask: u128 = if width >= 64 { u64::MAX as u128 } else { (1u128 << width) - 1 };
            let hex = format!("{:X}", (v as u128) & mask);
            let hex = if first == Some('x') { hex.to_ascii_lowercase() } else { hex };
            let w = usize::from(prec.unwrap_or(0));
            format!("{hex:0>w$}")
        }
        'E' => {
            let p = usize::from(prec.unwrap_or(6));
            let f: f64 = n.plain().parse().ok()?;
            let s = format!("{:.p$e}", f.abs());
            let (m, e) = s.split_once('e')?;
            let e: i32 = e.parse().ok()?;
            let letter = if first == Some('e') { 'e' } else { 'E' };
            let body = format!("{m}{letter}{}{:03}", if e < 0 { '-' } else { '+' }, e.unsigned_abs());
            sign(body, f == 0.0)
        }
        'G' | 'R' => n.plain(),
        _ => return None,
    })
}

/// A custom numeric pattern: `0` and `#` digit placeholders, `.`, `,`, `%`, literals.
fn custom_number(n: Num, fmt: &str) -> String {
    // Sections: positive;negative;zero.
    let sections = split_unquoted(fmt, ';');
    let (pattern, use_sign) = if n.neg && sections.len() > 1 && !sections[1].is_empty() {
        (sections[1].as_str(), false)
    } else {
        (sections[0].as_str(), true)
    };
    let tokens = lex_pattern(pattern);
    let mut n = n;
    if tokens.iter().any(|t| matches!(t, Pat::Lit(s) if s == "%")) {
        n = n.times100();
    }
    // Digit placeholders: before and after the decimal point.
    let mut int_zeros = 0;
    let mut int_places = 0;
    let mut frac_zeros = 0;
    let mut frac_places = 0;
    let mut seen_point = false;
    let mut grouping = false;
    let mut first_ph = None;
    let mut last_ph = 0;
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Pat::Zero | Pat::Hash => {
                first_ph.get_or_insert(i);
                last_ph = i;
                if seen_point {
                    frac_places += 1;
                    if *t == Pat::Zero {
                        frac_zeros = frac_places;
                    }
                } else {
                    int_places += 1;
                    if *t == Pat::Zero {
                        int_zeros += 1;
                    }
                }
            }
            Pat::Point => {
                if !seen_point {
                    first_ph.get_or_insert(i);
                    last_ph = last_ph.max(i);
                }
                seen_point = true;
            }
            Pat::Comma if !seen_point && first_ph.is_some() => grouping = true,
            _ => {}
        }
    }
    let _ = int_places;
    let (i, f) = n.digits(frac_places as u8);
    let mut f = f;
    while f.len() > frac_zeros && f.ends_with('0') {
        f.pop();
    }
    let mut i = i.trim_start_matches('0').to_string();
    while i.len() < int_zeros {
        i.insert(0, '0');
    }
    if grouping {
        i = group_thousands(&i);
    }
    let zero = i.bytes().all(|b| b == b'0' || b == b',') && f.bytes().all(|b| b == b'0');
    let mut number = i;
    if !f.is_empty() {
        number.push('.');
        number.push_str(&f);
    }
    let mut out = String::new();
    if n.neg && use_sign && !zero {
        out.push('-');
    }
    let first_ph = first_ph.unwrap_or(tokens.len());
    for (idx, t) in tokens.iter().enumerate() {
        if idx == first_ph {
            out.push_str(&number);
        }
        if idx >= first_ph && idx <= last_ph {
            if let Pat::Lit(s) = t {
                if s != "," {
                    out.push_str(s);
                }
            }
            continue;
        }
        match t {
            Pat::Lit(s) => out.push_str(s),
            Pat::Comma => out.push(','),
            Pat::Point => out.push('.'),
            _ => {}
        }
    }
    if first_ph >= tokens.len() {
        out.push_str(&number);
    }
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Pat {
    Zero,
    Hash,
    Point,
    Comma,
    Lit(String),
}

fn lex_pattern(p: &str) -> Vec<Pat> {
    let mut out = Vec::new();
    let mut chars = p.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '0' => out.push(Pat::Zero),
            '#' => out.push(Pat::Hash),
            '.' => out.push(Pat::Point),
            ',' => out.push(Pat::Comma),
            '\\' => {
                if let Some(n) = chars.next() {
                    out.push(Pat::Lit(n.to_string()));
                }
            }
            '\'' | '"' => {
                let mut s = String::new();
                for n in chars.by_ref() {
                    if n == c {
                        break;
                    }
                    s.push(n);
                }
                out.push(Pat::Lit(s));
            }
            other => out.push(Pat::Lit(other.to_string())),
        }
    }
    out
}

fn split_unquoted(s: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
            }
        } else if c == '\'' || c == '"' {
            quote = Some(c);
        } else if c == sep {
            parts.push(String::new());
            continue;
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

/// The expansion of a standard date format letter (en-US).
fn standard_date(fmt: &str, v: &Value) -> Option<&'static str> {
    let offset = matches!(v, Value::DateTimeOffset { .. });
    Some(match fmt {
        "d" => "M/d/yyyy",
        "D" => "dddd, MMMM d, yyyy",
        "t" => "h:mm tt",
        "T" => "h:mm:ss tt",
        "f" => "dddd, MMMM d, yyyy h:mm tt",
        "F" => "dddd, MMMM d, yyyy h:mm:ss tt",
        "g" => "M/d/yyyy h:mm tt",
        "G" => "M/d/yyyy h:mm:ss tt",
        "M" | "m" => "MMMM d",
        "Y" | "y" => "MMMM yyyy",
        "s" => "yyyy'-'MM'-'dd'T'HH':'mm':'ss",
        "u" => "yyyy'-'MM'-'dd HH':'mm':'ss'Z'",
        "o" | "O" if offset => "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffffzzz",
        "o" | "O" => "yyyy'-'MM'-'dd'T'HH':'mm':'ss'.'fffffff",
        _ => return None,
    })
}

fn format_date(v: &Value, fmt: &str) -> Option<String> {
    let fmt = if fmt.is_empty() { "G" } else { fmt };
    let pattern = if fmt.chars().count() == 1 {
        // A single letter is a standard format; anything else a one-token custom one.
        standard_date(fmt, v)?.to_string()
    } else {
        fmt.to_string()
    };
    // 'u' shows universal time.
    let (days, units) = if fmt == "u" { utc_clock(v)? } else { wall_clock(v)? };
    let (y, mo, d) = calendar::civil_from_days(days);
    let secs = units / UNITS_PER_SECOND;
    let (h, mi, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let ticks = units % UNITS_PER_SECOND / UNITS_PER_TICK;
    let offset = match v {
        Value::DateTimeOffset { offset, .. } => Some(*offset),
        _ => None,
    };
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let mut run = 1;
        while i + run < chars.len() && chars[i + run] == c {
            run += 1;
        }
        match c {
            'y' => {
                match run {
                    1 => out.push_str(&(y % 100).to_string()),
                    2 => out.push_str(&format!("{:02}", y % 100)),
                    n => out.push_str(&format!("{:0n$}", y)),
                }
                i += run;
            }
            'M' => {
                match run {
                    1 => out.push_str(&mo.to_string()),
                    2 => out.push_str(&format!("{mo:02}")),
                    3 => out.push_str(&month_name(mo)[..3]),
                    _ => out.push_str(month_name(mo)),
                }
                i += run;
            }
            'd' => {
                match run {
                    1 => out.push_str(&d.to_string()),
                    2 => out.push_str(&format!("{d:02}")),
                    3 => out.push_str(&day_name(days)[..3]),
                    _ => out.push_str(day_name(days)),
                }
                i += run;
            }
            'H' => {
                out.push_str(&if run == 1 { h.to_string() } else { format!("{h:02}") });
                i += run;
            }
            'h' => {
                let h12 = if h % 12 == 0 { 12 } else { h % 12 };
                out.push_str(&if run == 1 { h12.to_string() } else { format!("{h12:02}") });
                i += run;
            }
            'm' => {
                out.push_str(&if run == 1 { mi.to_string() } else { format!("{mi:02}") });
                i += run;
            }
            's' => {
                out.push_str(&if run == 1 { s.to_string() } else { format!("{s:02}") });
                i += run;
            }
            'f' | 'F' => {
                let n = run.min(7);
                let digits = format!("{ticks:07}")[..n].to_string();
                if c == 'F' {
                    out.push_str(digits.trim_end_matches('0'));
                } else {
                    out.push_str(&digits);
                }
                i += run;
            }
            't' => {
                let ampm = if h < 12 { "AM" } else { "PM" };
                out.push_str(if run == 1 { &ampm[..1] } else { ampm });
                i += run;
            }
            'z' => {
                let o = i32::from(offset.unwrap_or(0));
                let sign = if o < 0 { '-' } else { '+' };
                let (oh, om) = (o.abs() / 60, o.abs() % 60);
                match run {
                    1 => out.push_str(&format!("{sign}{oh}")),
                    2 => out.push_str(&format!("{sign}{oh:02}")),
                    _ => out.push_str(&format!("{sign}{oh:02}:{om:02}")),
                }
                i += run;
            }
            'K' => {
                if let Some(o) = offset {
                    out.push_str(&types::format::format_offset(o));
                }
                i += 1;
            }
            '\'' | '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != c {
                    out.push(chars[j]);
                    j += 1;
                }
                i = j + 1;
            }
            '\\' => {
                if let Some(&n) = chars.get(i + 1) {
                    out.push(n);
                }
                i += 2;
            }
            other => {
                out.push(other);
                i += 1;
            }
        }
    }
    Some(out)
}

/// A time value formatted as .NET formats a TimeSpan: custom patterns need `:` and `.`
/// escaped; the standard formats are `c`, `g` and `G`.
fn format_timespan(ticks: u64, fmt: &str) -> Option<String> {
    let secs = ticks / calendar::TICKS_PER_SECOND;
    let (h, m, s) = (secs / 3600, secs / 60 % 60, secs % 60);
    let frac = ticks % calendar::TICKS_PER_SECOND;
    match fmt {
        "" | "c" | "t" | "T" => {
            return Some(if frac == 0 {
                format!("{h:02}:{m:02}:{s:02}")
            } else {
                format!("{h:02}:{m:02}:{s:02}.{frac:07}")
            });
        }
        "g" => {
            let f = if frac == 0 { String::new() } else { format!(".{}", format!("{frac:07}").trim_end_matches('0')) };
            return Some(format!("{h}:{m:02}:{s:02}{f}"));
        }
        "G" => return Some(format!("0:{h:02}:{m:02}:{s:02}.{frac:07}")),
        _ => {}
    }
    let chars: Vec<char> = fmt.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let mut run = 1;
        while i + run < chars.len() && chars[i + run] == c {
            run += 1;
        }
        match c {
            'h' => out.push_str(&if run == 1 { h.to_string() } else { format!("{h:02}") }),
            'm' => out.push_str(&if run == 1 { m.to_string() } else { format!("{m:02}") }),
            's' => out.push_str(&if run == 1 { s.to_string() } else { format!("{s:02}") }),
            'f' | 'F' => {
                let digits = format!("{frac:07}")[..run.min(7)].to_string();
                out.push_str(if c == 'F' { digits.trim_end_matches('0') } else { &digits });
            }
            'd' => out.push('0'),
            '\\' => {
                out.push(*chars.get(i + 1)?);
                i += 2;
                continue;
            }
            '\'' | '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != c {
                    out.push(chars[j]);
                    j += 1;
                }
                i = j + 1;
                continue;
            }
            // Any other unescaped character is a FormatException in .NET: NULL.
            _ => return None,
        }
        i += run;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::SqlType;

    fn f(v: Value, fmt: &str) -> Option<String> {
        format_value(&v, fmt)
    }

    fn dec(v: i128, s: u8) -> Value {
        Value::Decimal { value: v, precision: 38, scale: s }
    }

    #[test]
    fn numbers() {
        assert_eq!(f(Value::Int(1_234_567), "N").as_deref(), Some("1,234,567.00"));
        assert_eq!(f(dec(12_345_678, 3), "N2").as_deref(), Some("12,345.68"));
        assert_eq!(f(dec(-12_345_678, 3), "N0").as_deref(), Some("-12,346"));
        assert_eq!(f(Value::Int(42), "D5").as_deref(), Some("00042"));
        assert_eq!(f(Value::Int(-42), "D").as_deref(), Some("-42"));
        assert_eq!(f(dec(42, 0), "D"), None);
        assert_eq!(f(Value::Float(1234.5678), "F2").as_deref(), Some("1234.57"));
        assert_eq!(f(Value::Money(12_345_600), "C").as_deref(), Some("$1,234.56"));
        assert_eq!(f(Value::Money(-12_345_600), "C").as_deref(), Some("($1,234.56)"));
        assert_eq!(f(Value::Float(0.1234), "P").as_deref(), Some("12.34 %"));
        assert_eq!(f(Value::Int(255), "X").as_deref(), Some("FF"));
        assert_eq!(f(Value::Int(-1), "x").as_deref(), Some("ffffffff"));
        assert_eq!(f(Value::Float(1234.5678), "E2").as_deref(), Some("1.23E+003"));
        assert_eq!(f(dec(12_345, 2), "0.00").as_deref(), Some("123.45"));
        assert_eq!(f(dec(12_345, 2), "0.0").as_deref(), Some("123.5"));
        assert_eq!(f(Value::Int(1_234_567), "#,##0").as_deref(), Some("1,234,567"));
        assert_eq!(f(Value::Float(1_234_567.891), "#,##0.00").as_deref(), Some("1,234,567.89"));
        assert_eq!(f(Value::Int(7), "000").as_deref(), Some("007"));
        assert_eq!(f(Value::Float(0.5), "#.##").as_deref(), Some(".5"));
        assert_eq!(f(Value::Float(0.256), "0.0%").as_deref(), Some("25.6%"));
        assert_eq!(f(Value::Int(-5), "0;(0)").as_deref(), Some("(5)"));
        assert_eq!(f(Value::Money(12_345_600), "$#,##0.00").as_deref(), Some("$1,234.56"));
        assert_eq!(f(Value::Float(-0.0), "0.00").as_deref(), Some("0.00"));
        assert_eq!(f(Value::Int(5), "G").as_deref(), Some("5"));
    }

    #[test]
    fn dates() {
        let v = types::parse("2024-03-05 14:07:09.1234567", &SqlType::DateTime2 { scale: 7 }).unwrap();
        assert_eq!(f(v.clone(), "yyyy-MM-dd HH:mm:ss").as_deref(), Some("2024-03-05 14:07:09"));
        assert_eq!(f(v.clone(), "dd/MM/yyyy").as_deref(), Some("05/03/2024"));
        assert_eq!(f(v.clone(), "MMMM d, yyyy").as_deref(), Some("March 5, 2024"));
        assert_eq!(f(v.clone(), "ddd MMM").as_deref(), Some("Tue Mar"));
        assert_eq!(f(v.clone(), "dddd").as_deref(), Some("Tuesday"));
        assert_eq!(f(v.clone(), "hh:mm tt").as_deref(), Some("02:07 PM"));
        assert_eq!(f(v.clone(), "HH:mm:ss.fff").as_deref(), Some("14:07:09.123"));
        assert_eq!(f(v.clone(), "d").as_deref(), Some("3/5/2024"));
        assert_eq!(f(v.clone(), "D").as_deref(), Some("Tuesday, March 5, 2024"));
        assert_eq!(f(v.clone(), "s").as_deref(), Some("2024-03-05T14:07:09"));
        assert_eq!(f(v.clone(), "yyyy'Q'").as_deref(), Some("2024Q"));
        let o = types::parse("2024-03-05 14:07:09 +05:30", &SqlType::DateTimeOffset { scale: 0 }).unwrap();
        assert_eq!(f(o, "yyyy-MM-dd HH:mm zzz").as_deref(), Some("2024-03-05 14:07 +05:30"));
        let t = types::parse("14:07:09", &SqlType::Time { scale: 0 }).unwrap();
        assert_eq!(f(t.clone(), "hh\\:mm").as_deref(), Some("14:07"));
        assert_eq!(f(t.clone(), "hh:mm"), None);
        assert_eq!(f(t, "c").as_deref(), Some("14:07:09"));
        assert!(check_culture(Some("en-US")).is_ok());
        let e = check_culture(Some("de-DE")).unwrap_err();
        assert_eq!(e.number, 9818);
    }
}
