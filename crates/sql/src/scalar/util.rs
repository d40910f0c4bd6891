//! Helpers shared by the scalar modules: SQL Server's error messages for expressions,
//! the type a bare value belongs to, 256-bit fixed-point arithmetic for decimal(38)
//! operands, and a common clock (days since 0001-01-01 plus 1/30,000,000 s units) that
//! holds every date and time type exactly, datetime's 1/300 s ticks included.

use std::cmp::Ordering;

use types::calendar::{self, DATETIME_MAX_DAYS, DATETIME_MIN_DAYS, DAYS_TO_1900, MAX_DATE_DAYS};
use types::{SqlError, SqlType, Value};

// ---- errors ------------------------------------------------------------------------

/// Msg 8115 state 2, the shape arithmetic overflow takes: "Arithmetic overflow error
/// converting expression to data type int."
pub(crate) fn overflow(type_name: &str) -> SqlError {
    SqlError::new(8115, 16, 2, format!("Arithmetic overflow error converting expression to data type {type_name}."))
}

/// Msg 8115 naming the source: "Arithmetic overflow error converting int to data type numeric."
pub(crate) fn overflow_from(from: &str, to: &str) -> SqlError {
    SqlError::new(8115, 16, 8, format!("Arithmetic overflow error converting {from} to data type {to}."))
}

/// Msg 8134.
pub(crate) fn divide_by_zero() -> SqlError {
    SqlError::new(8134, 16, 1, "Divide by zero error encountered.")
}

/// Msg 8117: "Operand data type bit is invalid for multiply operator."
pub(crate) fn invalid_operand(type_name: &str, op: &str) -> SqlError {
    SqlError::new(8117, 16, 1, format!("Operand data type {type_name} is invalid for {op} operator."))
}

/// Msg 402: "The data types varbinary and varbinary are incompatible in the '&' operator."
pub(crate) fn incompatible(a: &str, b: &str, op: &str) -> SqlError {
    SqlError::new(402, 16, 1, format!("The data types {a} and {b} are incompatible in the {op} operator."))
}

/// Msg 206: "Operand type clash: date is incompatible with int".
pub(crate) fn clash(a: &str, b: &str) -> SqlError {
    SqlError::new(206, 16, 2, format!("Operand type clash: {a} is incompatible with {b}"))
}

/// Msg 529: "Explicit conversion from data type date to int is not allowed."
pub(crate) fn explicit_not_allowed(from: &str, to: &str) -> SqlError {
    SqlError::new(529, 16, 2, format!("Explicit conversion from data type {from} to {to} is not allowed."))
}

/// Msg 8114: "Error converting data type varbinary to numeric."
pub(crate) fn error_converting(from: &str, to: &str) -> SqlError {
    SqlError::new(8114, 16, 5, format!("Error converting data type {from} to {to}."))
}

/// Msg 3623: a math function outside its domain (SQRT(-1), LOG(0), ...).
pub(crate) fn float_domain() -> SqlError {
    SqlError::new(3623, 16, 1, "An invalid floating point operation occurred.")
}

/// Msg 174: "The left function requires 2 argument(s)."
pub(crate) fn arg_count(name: &str, n: usize) -> SqlError {
    SqlError::new(174, 15, 1, format!("The {} function requires {n} argument(s).", name.to_ascii_lowercase()))
}

/// Msg 189: "The concat function requires 2 to 254 arguments."
pub(crate) fn arg_range(name: &str, lo: usize, hi: usize) -> SqlError {
    SqlError::new(189, 15, 1, format!("The {} function requires {lo} to {hi} arguments.", name.to_ascii_lowercase()))
}

/// Msg 8116: "Argument data type varchar is invalid for argument 1 of abs function."
pub(crate) fn invalid_arg(type_name: &str, n: usize, fname: &str) -> SqlError {
    SqlError::new(
        8116,
        16,
        1,
        format!(
            "Argument data type {type_name} is invalid for argument {n} of {} function.",
            fname.to_ascii_lowercase()
        ),
    )
}

// ---- value types -------------------------------------------------------------------

/// The type a value carries by itself (strings are nvarchar(max), binaries
/// varbinary(max)): what a value is treated as when the static type given with it
/// does not describe it.
pub fn value_type(v: &Value) -> SqlType {
    v.own_type().unwrap_or(SqlType::Int)
}

/// Does the value's representation belong to the type's family?
pub(crate) fn fits_family(v: &Value, ty: &SqlType) -> bool {
    use SqlType as T;
    matches!(
        (v, ty),
        (Value::Bit(_), T::Bit)
            | (Value::TinyInt(_), T::TinyInt)
            | (Value::SmallInt(_), T::SmallInt)
            | (Value::Int(_), T::Int)
            | (Value::BigInt(_), T::BigInt)
            | (Value::Decimal { .. }, T::Decimal { .. } | T::Numeric { .. })
            | (Value::Money(_), T::Money | T::SmallMoney)
            | (Value::Float(_), T::Float)
            | (Value::Real(_), T::Real)
            | (Value::Date(_), T::Date)
            | (Value::Time { .. }, T::Time { .. })
            | (Value::DateTime { .. }, T::DateTime)
            | (Value::SmallDateTime { .. }, T::SmallDateTime)
            | (Value::DateTime2 { .. }, T::DateTime2 { .. })
            | (Value::DateTimeOffset { .. }, T::DateTimeOffset { .. })
            | (Value::Guid(_), T::UniqueIdentifier)
            | (Value::Variant(_), T::Variant)
    ) || (matches!(v, Value::String(_)) && ty.is_character())
        || (matches!(v, Value::Binary(_)) && (ty.is_binary() || ty.is_clr()))
}

/// The static type when it describes the value, else the value's own type.
pub(crate) fn effective_type(v: &Value, ty: &SqlType) -> SqlType {
    if fits_family(v, ty) {
        *ty
    } else {
        value_type(v)
    }
}

pub(crate) fn is_decimal(t: &SqlType) -> bool {
    matches!(t, SqlType::Decimal { .. } | SqlType::Numeric { .. })
}

pub(crate) fn is_money(t: &SqlType) -> bool {
    matches!(t, SqlType::Money | SqlType::SmallMoney)
}

pub(crate) fn is_approx(t: &SqlType) -> bool {
    matches!(t, SqlType::Float | SqlType::Real)
}

/// datetime and smalldatetime, the types that take part in arithmetic as day counts.
pub(crate) fn is_legacy_datetime(t: &SqlType) -> bool {
    matches!(t, SqlType::DateTime | SqlType::SmallDateTime)
}

/// The (precision, scale) an exact numeric type converts to when it meets a decimal.
pub(crate) fn decimal_params_of(t: &SqlType) -> Option<(u8, u8)> {
    Some(match *t {
        SqlType::Bit => (1, 0),
        SqlType::TinyInt => (3, 0),
        SqlType::SmallInt => (5, 0),
        SqlType::Int => (10, 0),
        SqlType::BigInt => (19, 0),
        SqlType::Money => (19, 4),
        SqlType::SmallMoney => (10, 4),
        SqlType::Decimal { precision, scale } | SqlType::Numeric { precision, scale } => (precision, scale),
        _ => return None,
    })
}

/// An exact numeric value as (unscaled, scale); None for other values.
pub(crate) fn exact_parts(v: &Value) -> Option<(i128, u8)> {
    Some(match *v {
        Value::Bit(b) => (i128::from(b), 0),
        Value::TinyInt(x) => (i128::from(x), 0),
        Value::SmallInt(x) => (i128::from(x), 0),
        Value::Int(x) => (i128::from(x), 0),
        Value::BigInt(x) => (i128::from(x), 0),
        Value::Money(m) => (i128::from(m), 4),
        Value::Decimal { value, scale, .. } => (value, scale),
        _ => return None,
    })
}

/// A numeric value as f64, exactly rounded (decimals go through their text so that
/// 0.1 becomes the nearest double, not a quotient of two rounded doubles).
pub(crate) fn to_f64(v: &Value) -> Option<f64> {
    match *v {
        Value::Float(f) => Some(f),
        Value::Real(f) => Some(f64::from(f)),
        _ => {
            let (x, s) = exact_parts(v)?;
            if s == 0 {
                return Some(x as f64);
            }
            types::decimal::format_unscaled(x, s).parse::<f64>().ok()
        }
    }
}

// ---- 256-bit arithmetic ------------------------------------------------------------

/// An unsigned 256-bit integer (four 64-bit limbs, least significant first): enough for
/// the product of two decimal(38) magnitudes and for a dividend scaled by 10^38.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct U256([u64; 4]);

impl U256 {
    pub(crate) const ZERO: U256 = U256([0; 4]);

    pub(crate) fn from_u128(v: u128) -> U256 {
        U256([v as u64, (v >> 64) as u64, 0, 0])
    }

    pub(crate) fn to_u128(self) -> Option<u128> {
        if self.0[2] != 0 || self.0[3] != 0 {
            return None;
        }
        Some(u128::from(self.0[0]) | u128::from(self.0[1]) << 64)
    }

    pub(crate) fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    pub(crate) fn mul_u64(self, m: u64) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry: u128 = 0;
        for (i, limb) in self.0.iter().enumerate() {
            let p = u128::from(*limb) * u128::from(m) + carry;
            out[i] = p as u64;
            carry = p >> 64;
        }
        if carry != 0 {
            None
        } else {
            Some(U256(out))
        }
    }

    /// The full product of two u128 values.
    pub(crate) fn mul(a: u128, b: u128) -> U256 {
        let a = [a as u64, (a >> 64) as u64];
        let b = [b as u64, (b >> 64) as u64];
        let mut out = [0u64; 4];
        for (i, &x) in a.iter().enumerate() {
            let mut carry: u128 = 0;
            for (j, &y) in b.iter().enumerate() {
                let cur = u128::from(out[i + j]) + u128::from(x) * u128::from(y) + carry;
                out[i + j] = cur as u64;
                carry = cur >> 64;
            }
            // i + 2 <= 3: the carry always fits the next limb of a 256-bit product.
            out[i + 2] = carry as u64;
        }
        U256(out)
    }

    pub(crate) fn mul_pow10(self, mut k: u32) -> Option<U256> {
        let mut v = self;
        while k > 0 {
            let step = k.min(19);
            v = v.mul_u64(10u64.pow(step))?;
            k -= step;
        }
        Some(v)
    }

    pub(crate) fn add(self, o: U256) -> Option<U256> {
        let mut out = [0u64; 4];
        let mut carry = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (s1, c1) = self.0[i].overflowing_add(o.0[i]);
            let (s2, c2) = s1.overflowing_add(u64::from(carry));
            *slot = s2;
            carry = c1 || c2;
        }
        if carry {
            None
        } else {
            Some(U256(out))
        }
    }

    /// self - o; the caller ensures self >= o.
    pub(crate) fn sub(self, o: U256) -> U256 {
        let mut out = [0u64; 4];
        let mut borrow = false;
        for (i, slot) in out.iter_mut().enumerate() {
            let (d1, b1) = self.0[i].overflowing_sub(o.0[i]);
            let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
            *slot = d2;
            borrow = b1 || b2;
        }
        U256(out)
    }

    fn bit(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }

    fn shl1(self) -> U256 {
        let l = self.0;
        U256([l[0] << 1, l[1] << 1 | l[0] >> 63, l[2] << 1 | l[1] >> 63, l[3] << 1 | l[2] >> 63])
    }

    /// Quotient and remainder; None for a zero divisor.
    pub(crate) fn divrem(self, d: U256) -> Option<(U256, U256)> {
        if d.is_zero() {
            return None;
        }
        let mut q = U256::ZERO;
        let mut r = U256::ZERO;
        for i in (0..256).rev() {
            r = r.shl1();
            if self.bit(i) {
                r.0[0] |= 1;
            }
            if r >= d {
                r = r.sub(d);
                q.0[i / 64] |= 1 << (i % 64);
            }
        }
        Some((q, r))
    }
}

impl PartialOrd for U256 {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for U256 {
    fn cmp(&self, other: &Self) -> Ordering {
        for i in (0..4).rev() {
            match self.0[i].cmp(&other.0[i]) {
                Ordering::Equal => {}
                o => return o,
            }
        }
        Ordering::Equal
    }
}

/// How a quotient's dropped digits are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rounding {
    /// Half away from zero: every decimal operator but division, and conversions.
    HalfAway,
    /// Toward zero: decimal and money division.
    Truncate,
}

/// A signed 256-bit value as sign and magnitude.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Wide {
    pub neg: bool,
    pub mag: U256,
}

impl Wide {
    pub(crate) fn from_i128(v: i128) -> Wide {
        Wide { neg: v < 0, mag: U256::from_u128(v.unsigned_abs()) }
    }

    pub(crate) fn mul(a: i128, b: i128) -> Wide {
        Wide { neg: (a < 0) != (b < 0), mag: U256::mul(a.unsigned_abs(), b.unsigned_abs()) }
    }

    pub(crate) fn mul_pow10(self, k: u32) -> Option<Wide> {
        Some(Wide { neg: self.neg, mag: self.mag.mul_pow10(k)? })
    }

    pub(crate) fn add(self, o: Wide) -> Option<Wide> {
        if self.neg == o.neg {
            return Some(Wide { neg: self.neg, mag: self.mag.add(o.mag)? });
        }
        Some(if self.mag >= o.mag {
            Wide { neg: self.neg, mag: self.mag.sub(o.mag) }
        } else {
            Wide { neg: o.neg, mag: o.mag.sub(self.mag) }
        })
    }

    pub(crate) fn neg(self) -> Wide {
        Wide { neg: !self.neg, mag: self.mag }
    }

    /// self / d with the chosen rounding; None for a zero divisor.
    pub(crate) fn div(self, d: Wide, rounding: Rounding) -> Option<Wide> {
        let (q, r) = self.mag.divrem(d.mag)?;
        let mut q = q;
        if rounding == Rounding::HalfAway && !r.is_zero() {
            // r >= d - r  <=>  2r >= d: round the magnitude up.
            if r >= d.mag.sub(r) {
                q = q.add(U256::from_u128(1))?;
            }
        }
        Some(Wide { neg: self.neg != d.neg, mag: q })
    }

    /// Remainder with the dividend's sign (SQL Server's %).
    pub(crate) fn rem(self, d: Wide) -> Option<Wide> {
        let (_, r) = self.mag.divrem(d.mag)?;
        Some(Wide { neg: self.neg, mag: r })
    }

    /// Divides by 10^k with the chosen rounding.
    pub(crate) fn div_pow10(self, k: u32, rounding: Rounding) -> Option<Wide> {
        if k == 0 {
            return Some(self);
        }
        let d = U256::from_u128(1).mul_pow10(k)?;
        self.div(Wide { neg: false, mag: d }, rounding)
    }

    pub(crate) fn to_i128(self) -> Option<i128> {
        let m = self.mag.to_u128()?;
        if m > i128::MAX as u128 {
            return None;
        }
        Some(if self.neg { -(m as i128) } else { m as i128 })
    }
}

/// Rescales an unscaled value from scale `from` to `to` (rounding half away from zero
/// when narrowing); None when it leaves i128.
pub(crate) fn rescale(v: i128, from: u8, to: u8) -> Option<i128> {
    types::decimal::rescale(v, from, to)
}

// ---- the common clock ---------------------------------------------------------------

/// 1/30,000,000 s: 3 units are one 100 ns tick and 100,000 units one datetime tick, so
/// every date and time type converts to this clock exactly.
pub(crate) const UNITS_PER_TICK: u64 = 3;
pub(crate) const UNITS_PER_DT_TICK: u64 = 100_000;
pub(crate) const UNITS_PER_SECOND: u64 = 30_000_000;
pub(crate) const UNITS_PER_MINUTE: u64 = 60 * UNITS_PER_SECOND;
pub(crate) const UNITS_PER_HOUR: u64 = 60 * UNITS_PER_MINUTE;
pub(crate) const UNITS_PER_DAY: u64 = 24 * UNITS_PER_HOUR;

/// The wall-clock (local) time of a date/time value: days since 0001-01-01 and units
/// since midnight. date is at midnight; time is on 1900-01-01 (SQL Server's default
/// date); datetimeoffset is its local time.
pub(crate) fn wall_clock(v: &Value) -> Option<(i64, u64)> {
    Some(match *v {
        Value::Date(d) => (i64::from(d), 0),
        Value::Time { ticks, .. } => (DAYS_TO_1900, ticks * UNITS_PER_TICK),
        Value::DateTime { days, ticks } => (i64::from(days) + DAYS_TO_1900, u64::from(ticks) * UNITS_PER_DT_TICK),
        Value::SmallDateTime { days, minutes } => {
            (i64::from(days) + DAYS_TO_1900, u64::from(minutes) * UNITS_PER_MINUTE)
        }
        Value::DateTime2 { days, ticks, .. } => (i64::from(days), ticks * UNITS_PER_TICK),
        Value::DateTimeOffset { days, ticks, offset, .. } => {
            shift(i64::from(days), ticks * UNITS_PER_TICK, i64::from(offset) * UNITS_PER_MINUTE as i64)
        }
        _ => return None,
    })
}

/// The instant in UTC: the wall clock, except datetimeoffset which is stored in UTC.
pub(crate) fn utc_clock(v: &Value) -> Option<(i64, u64)> {
    match *v {
        Value::DateTimeOffset { days, ticks, .. } => Some((i64::from(days), ticks * UNITS_PER_TICK)),
        _ => wall_clock(v),
    }
}

/// (days, units) moved by a signed number of units.
pub(crate) fn shift(days: i64, units: u64, delta: i64) -> (i64, u64) {
    let total = i128::from(days) * i128::from(UNITS_PER_DAY) + i128::from(units) + i128::from(delta);
    let per = i128::from(UNITS_PER_DAY);
    (total.div_euclid(per) as i64, total.rem_euclid(per) as u64)
}

/// (days, units) as one signed count of units.
pub(crate) fn total_units(days: i64, units: u64) -> i128 {
    i128::from(days) * i128::from(UNITS_PER_DAY) + i128::from(units)
}

/// Rounds units to a multiple of `step` (half up), possibly reaching a whole day.
fn round_units(units: u64, step: u64) -> u64 {
    (units + step / 2) / step * step
}

/// Builds a value of a date/time type from a wall clock, rounding the time to the
/// type's precision (datetime to 1/300 s, smalldatetime to the minute with 29.999 s
/// rounding up, the others to their scale). `offset` is the datetimeoffset's offset in
/// minutes. Err(()) when the result is outside the type's range; the caller names the
/// error (242, 517 or 8115 depending on the operation).
pub(crate) fn build_temporal(days: i64, units: u64, ty: &SqlType, offset: i16) -> Result<Value, ()> {
    let (days, units) = shift(days, units, 0);
    match *ty {
        SqlType::Date => {
            if !(0..=i64::from(MAX_DATE_DAYS)).contains(&days) {
                return Err(());
            }
            Ok(Value::Date(days as u32))
        }
        SqlType::Time { scale } => {
            let step = calendar::ticks_per_unit(scale) * UNITS_PER_TICK;
            let u = round_units(units, step) % UNITS_PER_DAY;
            Ok(Value::Time { ticks: u / UNITS_PER_TICK, scale })
        }
        SqlType::DateTime => {
            let (d, u) = shift(days, round_units(units, UNITS_PER_DT_TICK), 0);
            let d = d - DAYS_TO_1900;
            if d < i64::from(DATETIME_MIN_DAYS) || d > i64::from(DATETIME_MAX_DAYS) {
                return Err(());
            }
            Ok(Value::DateTime { days: d as i32, ticks: (u / UNITS_PER_DT_TICK) as u32 })
        }
        SqlType::SmallDateTime => {
            let rem = units % UNITS_PER_MINUTE;
            // 29.999 seconds and more round up (SQL Server's documented rule).
            let up = rem >= 29_999 * UNITS_PER_SECOND / 1000;
            let u = units - rem + if up { UNITS_PER_MINUTE } else { 0 };
            let (d, u) = shift(days, u, 0);
            let d = d - DAYS_TO_1900;
            if !(0..=i64::from(u16::MAX)).contains(&d) {
                return Err(());
            }
            Ok(Value::SmallDateTime { days: d as u16, minutes: (u / UNITS_PER_MINUTE) as u16 })
        }
        SqlType::DateTime2 { scale } => {
            let step = calendar::ticks_per_unit(scale) * UNITS_PER_TICK;
            let (d, u) = shift(days, round_units(units, step), 0);
            if !(0..=i64::from(MAX_DATE_DAYS)).contains(&d) {
                return Err(());
            }
            Ok(Value::DateTime2 { days: d as u32, ticks: u / UNITS_PER_TICK, scale })
        }
        SqlType::DateTimeOffset { scale } => {
            let step = calendar::ticks_per_unit(scale) * UNITS_PER_TICK;
            let (ld, lu) = shift(days, round_units(units, step), 0);
            if !(0..=i64::from(MAX_DATE_DAYS)).contains(&ld) {
                return Err(());
            }
            let (ud, uu) = shift(ld, lu, -i64::from(offset) * UNITS_PER_MINUTE as i64);
            if !(0..=i64::from(MAX_DATE_DAYS)).contains(&ud) {
                return Err(());
            }
            let v = Value::DateTimeOffset { days: ud as u32, ticks: uu / UNITS_PER_TICK, scale, offset };
            v.validate().map_err(|_| ())?;
            Ok(v)
        }
        _ => Err(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wide_arithmetic() {
        let big = 99_999_999_999_999_999_999_999_999_999_999_999_999i128;
        let p = Wide::mul(big, big);
        let q = p.div(Wide::from_i128(big), Rounding::Truncate).unwrap();
        assert_eq!(q.to_i128(), Some(big));
        let r = Wide::from_i128(7).div(Wide::from_i128(2), Rounding::HalfAway).unwrap();
        assert_eq!(r.to_i128(), Some(4));
        let r = Wide::from_i128(-7).div(Wide::from_i128(2), Rounding::HalfAway).unwrap();
        assert_eq!(r.to_i128(), Some(-4));
        let r = Wide::from_i128(-7).div(Wide::from_i128(2), Rounding::Truncate).unwrap();
        assert_eq!(r.to_i128(), Some(-3));
        assert_eq!(Wide::from_i128(-7).rem(Wide::from_i128(2)).unwrap().to_i128(), Some(-1));
        assert!(Wide::from_i128(1).div(Wide::from_i128(0), Rounding::Truncate).is_none());
        assert_eq!(Wide::from_i128(12_345).div_pow10(2, Rounding::HalfAway).unwrap().to_i128(), Some(123));
        assert!(U256::from_u128(u128::MAX).mul_pow10(60).is_none());
        let s = Wide::from_i128(5).add(Wide::from_i128(-8)).unwrap();
        assert_eq!(s.to_i128(), Some(-3));
    }

    #[test]
    fn clock_round_trips() {
        let v = Value::DateTime { days: 45_000, ticks: 299 };
        let (d, u) = wall_clock(&v).unwrap();
        assert_eq!(build_temporal(d, u, &SqlType::DateTime, 0).unwrap(), v);
        let v = Value::DateTimeOffset { days: 738_000, ticks: 1_000, scale: 7, offset: -300 };
        let (d, u) = wall_clock(&v).unwrap();
        assert_eq!(build_temporal(d, u, &SqlType::DateTimeOffset { scale: 7 }, -300).unwrap(), v);
        // 29.998 s rounds down, 29.999 s up for smalldatetime.
        let base = DAYS_TO_1900;
        let v = build_temporal(base, 29_998 * UNITS_PER_SECOND / 1000, &SqlType::SmallDateTime, 0).unwrap();
        assert_eq!(v, Value::SmallDateTime { days: 0, minutes: 0 });
        let v = build_temporal(base, 29_999 * UNITS_PER_SECOND / 1000, &SqlType::SmallDateTime, 0).unwrap();
        assert_eq!(v, Value::SmallDateTime { days: 0, minutes: 1 });
        assert!(build_temporal(base - 1, 0, &SqlType::SmallDateTime, 0).is_err());
        assert_eq!(value_type(&Value::String("x".into())), SqlType::NVarChar { len: types::Length::Max });
    }
}

/// The largest value of a MAX type: 2^31 - 1 bytes.
pub const MAX_LOB_BYTES: u64 = i32::MAX as u64;

/// Msg 7119: a varchar(max), nvarchar(max) or varbinary(max) value would pass 2 GB.
pub fn lob_too_large() -> SqlError {
    SqlError::new(7119, 16, 1, format!("Attempting to grow LOB beyond maximum allowed size of {MAX_LOB_BYTES} bytes."))
}

/// Checks a value that grows piece by piece (REPLACE's output, STRING_AGG, FOR XML and
/// FOR JSON) against [`MAX_LOB_BYTES`]: counted again only after it grew by 16 MB since
/// the last count, so a long run of small appends costs no repeated counting and the
/// value never passes the limit by more than that before Msg 7119.
#[derive(Debug, Clone, Default)]
pub struct LobGuard {
    counted_at: usize,
}

impl LobGuard {
    pub fn check(&mut self, s: &str, unicode: bool) -> Result<(), SqlError> {
        if s.len() < self.counted_at + (16 << 20) {
            return Ok(());
        }
        self.counted_at = s.len();
        if text_over_lob_limit(&[s], unicode) {
            return Err(lob_too_large());
        }
        Ok(())
    }
}

/// Whether `parts` joined would pass [`MAX_LOB_BYTES`] as stored (2 bytes per UTF-16
/// code unit when `unicode`, else one per character), counted only when the UTF-8
/// length says it could.
pub fn text_over_lob_limit(parts: &[&str], unicode: bool) -> bool {
    // A character takes at least one UTF-8 byte, and a UTF-16 unit (2 bytes stored) at
    // least one too: within the limit by the UTF-8 length, no count is needed.
    let utf8: u64 = parts.iter().map(|p| p.len() as u64).sum();
    if utf8 * if unicode { 2 } else { 1 } <= MAX_LOB_BYTES {
        return false;
    }
    let n: u64 =
        parts.iter().map(|p| if unicode { types::ucs2::len(&p) as u64 * 2 } else { p.chars().count() as u64 }).sum();
    n > MAX_LOB_BYTES
}
