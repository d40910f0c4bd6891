//! Fixed-point helpers for decimal/numeric (an unscaled i128 plus precision and scale)
//! and money (an i64 count of 1/10000 units): powers of ten, digit counts, rescaling with
//! SQL Server's rounding (half away from zero), and text formatting.

/// 10^n for n in 0..=38: every power a decimal(38) needs.
const POW10: [i128; 39] = {
    let mut t = [1i128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Largest unscaled magnitude of decimal(38): 10^38 - 1.
pub const MAX_DECIMAL_UNSCALED: i128 = POW10[38] - 1;

/// Money counts 1/10000 units.
pub const MONEY_SCALE: u8 = 4;
/// smallmoney's range in 1/10000 units: -214,748.3648 ..= 214,748.3647.
pub const SMALLMONEY_MIN: i64 = i32::MIN as i64;
pub const SMALLMONEY_MAX: i64 = i32::MAX as i64;

/// 10^n; n above 38 saturates to 10^38 (callers never need more).
pub fn pow10(n: u8) -> i128 {
    POW10[usize::from(n.min(38))]
}

/// Number of decimal digits in |v| (0 has one digit).
pub fn digit_count(v: i128) -> u8 {
    let m = v.unsigned_abs();
    let mut n = 1u8;
    while n < 39 && m >= POW10[usize::from(n)] as u128 {
        n += 1;
    }
    n
}

/// Whether an unscaled value fits decimal(precision): |v| <= 10^precision - 1.
pub fn fits_precision(v: i128, precision: u8) -> bool {
    (1..=38).contains(&precision) && v.unsigned_abs() < POW10[usize::from(precision)] as u128
}

/// Moves an unscaled value from one scale to another. Narrowing rounds half away from
/// zero (SQL Server's rule for CAST(1.235 AS decimal(5,2)) = 1.24); widening multiplies
/// and returns None on i128 overflow.
pub fn rescale(v: i128, from_scale: u8, to_scale: u8) -> Option<i128> {
    if to_scale >= from_scale {
        v.checked_mul(pow10(to_scale - from_scale))
    } else {
        let diff = from_scale - to_scale;
        if diff > 38 {
            return Some(0);
        }
        let d = POW10[usize::from(diff)];
        let q = v / d;
        let r = v % d;
        // |r| * 2 >= d  <=>  |r| >= d - |r|, which cannot overflow.
        let ra = r.abs();
        if ra >= d - ra {
            Some(if v < 0 { q - 1 } else { q + 1 })
        } else {
            Some(q)
        }
    }
}

/// Text of an unscaled value at a scale: `-12.30`, `0.05`, `7` (scale 0). This is how
/// SQL Server shows decimal and numeric: always `scale` digits after the point, a leading
/// zero before it, no thousands separators.
pub fn format_unscaled(v: i128, scale: u8) -> String {
    let digits = v.unsigned_abs().to_string();
    let scale = usize::from(scale);
    let mut out = String::with_capacity(digits.len() + 3);
    if v < 0 {
        out.push('-');
    }
    if scale == 0 {
        out.push_str(&digits);
    } else if digits.len() > scale {
        let (int, frac) = digits.split_at(digits.len() - scale);
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else {
        out.push_str("0.");
        for _ in digits.len()..scale {
            out.push('0');
        }
        out.push_str(&digits);
    }
    out
}

/// Parses an unsigned digit string with an optional fraction (`123`, `1.5`, `.5`, `5.`)
/// into an unscaled value at `scale`, rounding extra fraction digits half away from zero.
/// Returns None when the text is not of that shape; Some(None) when it overflows i128
/// after rounding (callers compare against the target precision themselves).
pub(crate) fn parse_unsigned_fixed(text: &str, scale: u8) -> Option<Option<i128>> {
    let (int, frac) = match text.split_once('.') {
        Some((i, f)) => (i, f),
        None => (text, ""),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let int = int.trim_start_matches('0');
    let scale = usize::from(scale);
    let mut v: i128 = 0;
    let push = |v: i128, b: u8| -> Option<i128> { v.checked_mul(10)?.checked_add(i128::from(b - b'0')) };
    let mut overflow = false;
    for b in int.bytes() {
        match push(v, b) {
            Some(n) => v = n,
            None => {
                overflow = true;
                break;
            }
        }
    }
    let fb = frac.as_bytes();
    for i in 0..scale {
        if overflow {
            break;
        }
        let b = fb.get(i).copied().unwrap_or(b'0');
        match push(v, b) {
            Some(n) => v = n,
            None => overflow = true,
        }
    }
    if overflow {
        return Some(None);
    }
    if fb.get(scale).is_some_and(|&b| b >= b'5') {
        return Some(v.checked_add(1));
    }
    Some(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_and_digits() {
        assert_eq!(pow10(0), 1);
        assert_eq!(pow10(38), 100_000_000_000_000_000_000_000_000_000_000_000_000);
        assert_eq!(digit_count(0), 1);
        assert_eq!(digit_count(9), 1);
        assert_eq!(digit_count(-10), 2);
        assert_eq!(digit_count(MAX_DECIMAL_UNSCALED), 38);
        assert!(fits_precision(99_999, 5) && !fits_precision(100_000, 5) && fits_precision(-99_999, 5));
        assert!(fits_precision(MAX_DECIMAL_UNSCALED, 38) && !fits_precision(MAX_DECIMAL_UNSCALED + 1, 38));
    }

    #[test]
    fn rounding_half_away_from_zero() {
        assert_eq!(rescale(1235, 3, 2), Some(124));
        assert_eq!(rescale(1234, 3, 2), Some(123));
        assert_eq!(rescale(-1235, 3, 2), Some(-124));
        assert_eq!(rescale(-1234, 3, 2), Some(-123));
        assert_eq!(rescale(5, 1, 0), Some(1));
        assert_eq!(rescale(12, 0, 2), Some(1200));
        assert_eq!(rescale(MAX_DECIMAL_UNSCALED, 0, 38), None);
    }

    #[test]
    fn formatting() {
        assert_eq!(format_unscaled(1230, 2), "12.30");
        assert_eq!(format_unscaled(-5, 2), "-0.05");
        assert_eq!(format_unscaled(7, 0), "7");
        assert_eq!(format_unscaled(0, 3), "0.000");
        assert_eq!(format_unscaled(-MAX_DECIMAL_UNSCALED, 38), "-0.99999999999999999999999999999999999999");
    }

    #[test]
    fn parsing_fixed() {
        assert_eq!(parse_unsigned_fixed("1.235", 2), Some(Some(124)));
        assert_eq!(parse_unsigned_fixed(".5", 1), Some(Some(5)));
        assert_eq!(parse_unsigned_fixed("5.", 0), Some(Some(5)));
        assert_eq!(parse_unsigned_fixed("007", 0), Some(Some(7)));
        assert_eq!(parse_unsigned_fixed(".", 0), None);
        assert_eq!(parse_unsigned_fixed("1e5", 0), None);
        assert_eq!(parse_unsigned_fixed(&"9".repeat(60), 0), Some(None));
    }
}
