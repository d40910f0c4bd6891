//! Date and time functions: dateparts, DATEADD, DATEDIFF(_BIG), DATEPART, DATENAME,
//! DATETRUNC, the *FROMPARTS builders, EOMONTH, the clock functions, SWITCHOFFSET,
//! TODATETIMEOFFSET and AT TIME ZONE with a table of Windows time zones.
//!
//! Decisions:
//! - A string date argument is read as datetime2(7) (DATEADD of a string returns
//!   datetime, as SQL Server types it); an integer argument is days since 1900-01-01
//!   (`DATEPART(year, 0)` is 1900).
//! - DATEDIFF counts boundaries crossed (`DATEDIFF(year, '2023-12-31', '2024-01-01')` is
//!   1); weeks always start on Sunday whatever SET DATEFIRST says (SQL Server documents
//!   this for DATEDIFF); DATEPART(week/weekday) and DATETRUNC(week) use DATEFIRST. When
//!   either argument is a datetimeoffset, both are compared as UTC instants.
//! - datetime values count milliseconds as they display (.997), so DATEPART(ms) and
//!   DATEDIFF(ms) agree with what users see.
//! - AT TIME ZONE applies today's daylight-saving rules to every year (US: second Sunday
//!   of March to first Sunday of November at 02:00 local; EU: last Sunday of March to
//!   last Sunday of October at 01:00 UTC; Australia: first Sunday of October to first
//!   Sunday of April at 02:00/03:00 local; New Zealand: last Sunday of September to
//!   first Sunday of April). A local time in the spring-forward gap moves forward by the
//!   daylight delta with the daylight offset; one in the fall-back overlap takes the
//!   daylight (earlier) offset.

use types::calendar::{self, DAYS_TO_1900};
use types::{Length, SqlError, SqlType, Value};

use super::convert;
use super::util::{
    self, build_temporal, invalid_arg, shift, total_units, utc_clock, wall_clock, UNITS_PER_DAY, UNITS_PER_HOUR,
    UNITS_PER_MINUTE, UNITS_PER_SECOND, UNITS_PER_TICK,
};
use super::FnContext;

/// A datepart word of DATEADD, DATEDIFF, DATEPART, DATENAME and DATETRUNC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatePart {
    Year,
    Quarter,
    Month,
    DayOfYear,
    Day,
    Week,
    IsoWeek,
    Weekday,
    Hour,
    Minute,
    Second,
    Millisecond,
    Microsecond,
    Nanosecond,
    TzOffset,
}

impl DatePart {
    /// The datepart a word (or abbreviation) names, case-insensitive.
    pub fn parse(word: &str) -> Option<DatePart> {
        use DatePart::*;
        Some(match word.trim().to_ascii_lowercase().as_str() {
            "year" | "yy" | "yyyy" => Year,
            "quarter" | "qq" | "q" => Quarter,
            "month" | "mm" | "m" => Month,
            "dayofyear" | "dy" | "y" => DayOfYear,
            "day" | "dd" | "d" => Day,
            "week" | "wk" | "ww" => Week,
            "iso_week" | "isowk" | "isoww" => IsoWeek,
            "weekday" | "dw" | "w" => Weekday,
            "hour" | "hh" => Hour,
            "minute" | "mi" | "n" => Minute,
            "second" | "ss" | "s" => Second,
            "millisecond" | "ms" => Millisecond,
            "microsecond" | "mcs" => Microsecond,
            "nanosecond" | "ns" => Nanosecond,
            "tzoffset" | "tz" => TzOffset,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        use DatePart::*;
        match self {
            Year => "year",
            Quarter => "quarter",
            Month => "month",
            DayOfYear => "dayofyear",
            Day => "day",
            Week => "week",
            IsoWeek => "iso_week",
            Weekday => "weekday",
            Hour => "hour",
            Minute => "minute",
            Second => "second",
            Millisecond => "millisecond",
            Microsecond => "microsecond",
            Nanosecond => "nanosecond",
            TzOffset => "tzoffset",
        }
    }

    fn is_date_part(self) -> bool {
        use DatePart::*;
        matches!(self, Year | Quarter | Month | DayOfYear | Day | Week | IsoWeek | Weekday)
    }

    fn is_time_part(self) -> bool {
        use DatePart::*;
        matches!(self, Hour | Minute | Second | Millisecond | Microsecond | Nanosecond)
    }
}

/// The datepart of argument 1 (a string holding the word), or Msg 155 naming the
/// function ("'foo' is not a recognized datepart option.").
pub fn datepart_arg(v: Option<&Value>, fname: &str) -> Result<DatePart, SqlError> {
    let word = match v {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    };
    DatePart::parse(&word).ok_or_else(|| {
        SqlError::new(155, 15, 1, format!("'{}' is not a recognized {} option.", word, fname.to_ascii_lowercase()))
    })
}

/// Msg 9810: a datepart the type does not have.
fn unsupported(part: DatePart, fname: &str, ty: &SqlType) -> SqlError {
    SqlError::new(
        9810,
        16,
        10,
        format!(
            "The datepart {} is not supported by date function {} for data type {}.",
            part.name(),
            fname.to_ascii_lowercase(),
            ty.name()
        ),
    )
}

/// Checks that `part` exists for values of `ty` (date has no time parts, time no date
/// parts, only datetimeoffset has tzoffset).
pub fn check_part(part: DatePart, ty: &SqlType, fname: &str) -> Result<(), SqlError> {
    let ok = match ty {
        SqlType::Date => part.is_date_part(),
        SqlType::Time { .. } => part.is_time_part(),
        SqlType::DateTimeOffset { .. } => true,
        _ => part != DatePart::TzOffset,
    };
    if ok {
        Ok(())
    } else {
        Err(unsupported(part, fname, ty))
    }
}

/// The type a date argument is read as: date/time types as they are, strings as
/// datetime2(7), numbers as datetime.
pub fn date_arg_type(t: &SqlType) -> SqlType {
    if t.is_temporal() {
        *t
    } else if t.is_character() {
        SqlType::DateTime2 { scale: 7 }
    } else {
        SqlType::DateTime
    }
}

/// A date argument as a date/time value (see [`date_arg_type`]); Msg 8116 for types
/// that never convert.
pub fn date_arg(v: &Value, t: &SqlType, n: usize, fname: &str) -> Result<Value, SqlError> {
    let t = util::effective_type(v, t);
    if t.is_temporal() {
        return Ok(v.clone());
    }
    if matches!(t, SqlType::UniqueIdentifier | SqlType::Xml) || t.is_binary() {
        return Err(invalid_arg(t.name(), n, fname));
    }
    convert::convert(v, &t, &date_arg_type(&t), None)
}

/// (days, units) of the wall clock with datetime's time counted in the milliseconds it
/// shows (.997, not 0.99666...).
fn clock_for_parts(v: &Value) -> (i64, u64) {
    if let Value::DateTime { days, ticks } = *v {
        let secs = u64::from(ticks / calendar::DATETIME_TICKS_PER_SECOND);
        let ms = u64::from(calendar::datetime_ticks_to_millis(ticks % calendar::DATETIME_TICKS_PER_SECOND));
        return (i64::from(days) + DAYS_TO_1900, secs * UNITS_PER_SECOND + ms * (UNITS_PER_SECOND / 1000));
    }
    wall_clock(v).unwrap_or((0, 0))
}

/// Day of the week under SET DATEFIRST: 1 is the DATEFIRST day.
fn weekday(days: i64, datefirst: u8) -> u32 {
    let iso = calendar::iso_weekday(days) as i64;
    ((iso - i64::from(datefirst)).rem_euclid(7) + 1) as u32
}

fn iso_week(days: i64) -> i64 {
    let (y, _, _) = calendar::civil_from_days(days);
    // The Thursday of this ISO week decides the year; week 1 holds January 4.
    let thursday = days - i64::from(calendar::iso_weekday(days)) + 4;
    let (ty, _, _) = calendar::civil_from_days(thursday);
    let _ = y;
    let jan1 = calendar::days_from_civil(ty, 1, 1);
    (thursday - jan1) / 7 + 1
}

/// DATEPART of a date/time value.
pub fn datepart(part: DatePart, v: &Value, datefirst: u8) -> i64 {
    let (days, units) = clock_for_parts(v);
    let (y, m, d) = calendar::civil_from_days(days);
    let sub = units % UNITS_PER_SECOND;
    match part {
        DatePart::Year => i64::from(y),
        DatePart::Quarter => i64::from((m - 1) / 3 + 1),
        DatePart::Month => i64::from(m),
        DatePart::DayOfYear => i64::from(calendar::day_of_year(y, m, d)),
        DatePart::Day => i64::from(d),
        DatePart::Week => {
            let jan1 = calendar::days_from_civil(y, 1, 1);
            let doy = days - jan1;
            (doy + i64::from(weekday(jan1, datefirst)) - 1) / 7 + 1
        }
        DatePart::IsoWeek => iso_week(days),
        DatePart::Weekday => i64::from(weekday(days, datefirst)),
        DatePart::Hour => (units / UNITS_PER_HOUR) as i64,
        DatePart::Minute => (units / UNITS_PER_MINUTE % 60) as i64,
        DatePart::Second => (units / UNITS_PER_SECOND % 60) as i64,
        DatePart::Millisecond => (sub / 30_000) as i64,
        DatePart::Microsecond => (sub / 30) as i64,
        DatePart::Nanosecond => (u128::from(sub) * 100 / 3) as i64,
        DatePart::TzOffset => match v {
            Value::DateTimeOffset { offset, .. } => i64::from(*offset),
            _ => 0,
        },
    }
}

/// English month name (us_english's, as `types::lang` keeps them).
pub(crate) fn month_name(m: u32) -> &'static str {
    types::lang::us_english().month_name(m)
}

/// English day name of a day number since 0001-01-01.
pub(crate) fn day_name(days: i64) -> &'static str {
    types::lang::us_english().day_name(calendar::iso_weekday(days))
}

/// DATENAME: month and weekday names in the session's language, else DATEPART's
/// number; tzoffset as `+hh:mm`.
pub fn datename(part: DatePart, v: &Value, datefirst: u8, lang: &types::lang::Language) -> String {
    let (days, _) = clock_for_parts(v);
    match part {
        DatePart::Month => lang.month_name(calendar::civil_from_days(days).1).to_string(),
        DatePart::Weekday => lang.day_name(calendar::iso_weekday(days)).to_string(),
        DatePart::TzOffset => match v {
            Value::DateTimeOffset { offset, .. } => types::format::format_offset(*offset),
            _ => "+00:00".into(),
        },
        p => datepart(p, v, datefirst).to_string(),
    }
}

/// Adds `months` to a civil date, clamping the day to the month's end.
fn add_months(days: i64, months: i64) -> Option<i64> {
    let (y, m, d) = calendar::civil_from_days(days);
    let total = i64::from(y) * 12 + i64::from(m) - 1 + months;
    let (ny, nm) = (total.div_euclid(12), (total.rem_euclid(12) + 1) as u32);
    if !(1..=9999).contains(&ny) {
        return None;
    }
    let nd = d.min(calendar::days_in_month(ny as i32, nm));
    Some(calendar::days_from_civil(ny as i32, nm, nd))
}

fn overflow_517(ty: &SqlType) -> SqlError {
    SqlError::new(517, 16, 1, format!("Adding a value to a '{}' column caused an overflow.", ty.name()))
}

/// DATEADD(part, n, v) for a value of type `ty` (the result keeps the type; time wraps
/// around midnight). Msg 517 when the result leaves the type's range.
pub fn dateadd(part: DatePart, n: i64, v: &Value, ty: &SqlType) -> Result<Value, SqlError> {
    check_part(part, ty, "dateadd")?;
    let (days, units) = wall_clock(v).unwrap_or((0, 0));
    let offset = match v {
        Value::DateTimeOffset { offset, .. } => *offset,
        _ => 0,
    };
    let range = || overflow_517(ty);
    let months = |k: i64| -> Result<(i64, u64), SqlError> {
        Ok((add_months(days, n.checked_mul(k).ok_or_else(range)?).ok_or_else(range)?, units))
    };
    let by_units = |per: i128| -> Result<(i64, u64), SqlError> {
        let delta = i128::from(n) * per;
        let total = total_units(days, units) + delta;
        let d = i64::try_from(total.div_euclid(i128::from(UNITS_PER_DAY))).map_err(|_| range())?;
        Ok((d, total.rem_euclid(i128::from(UNITS_PER_DAY)) as u64))
    };
    let (d, u) = match part {
        DatePart::Year => months(12)?,
        DatePart::Quarter => months(3)?,
        DatePart::Month => months(1)?,
        DatePart::DayOfYear | DatePart::Day | DatePart::Weekday => by_units(i128::from(UNITS_PER_DAY))?,
        DatePart::Week => by_units(7 * i128::from(UNITS_PER_DAY))?,
        DatePart::Hour => by_units(i128::from(UNITS_PER_HOUR))?,
        DatePart::Minute => by_units(i128::from(UNITS_PER_MINUTE))?,
        DatePart::Second => by_units(i128::from(UNITS_PER_SECOND))?,
        DatePart::Millisecond => by_units(30_000)?,
        DatePart::Microsecond => by_units(30)?,
        DatePart::Nanosecond => {
            // 1 ns is 0.03 units: round the total to whole units.
            let delta = (i128::from(n) * 3 + if n >= 0 { 50 } else { -50 }) / 100;
            let total = total_units(days, units) + delta;
            let d = i64::try_from(total.div_euclid(i128::from(UNITS_PER_DAY))).map_err(|_| range())?;
            (d, total.rem_euclid(i128::from(UNITS_PER_DAY)) as u64)
        }
        DatePart::IsoWeek | DatePart::TzOffset => return Err(unsupported(part, "dateadd", ty)),
    };
    let d = if matches!(ty, SqlType::Time { .. }) { DAYS_TO_1900 } else { d };
    build_temporal(d, u, ty, offset).map_err(|_| range())
}

/// Msg 535 for a DATEDIFF result outside int (or bigint for DATEDIFF_BIG).
fn datediff_overflow(big: bool) -> SqlError {
    SqlError::new(
        535,
        16,
        if big { 1 } else { 0 },
        format!(
            "The {} function resulted in an overflow. The number of dateparts separating two date/time instances is too large. Try to use {} with a less precise datepart.",
            if big { "datediff_big" } else { "datediff" },
            if big { "datediff_big" } else { "datediff" }
        ),
    )
}

/// DATEDIFF / DATEDIFF_BIG: the number of `part` boundaries crossed from `a` to `b`.
pub fn datediff(part: DatePart, a: &Value, b: &Value, big: bool) -> Result<i64, SqlError> {
    let fname = if big { "datediff_big" } else { "datediff" };
    if matches!(part, DatePart::TzOffset) {
        return Err(SqlError::new(
            9806,
            16,
            1,
            format!(
                "The datepart {} is not supported by date function {fname} for data type datetimeoffset.",
                part.name()
            ),
        ));
    }
    let utc = matches!(a, Value::DateTimeOffset { .. }) || matches!(b, Value::DateTimeOffset { .. });
    let clock = |v: &Value| if utc { utc_clock(v).unwrap_or((0, 0)) } else { clock_for_parts(v) };
    let ((d1, u1), (d2, u2)) = (clock(a), clock(b));
    let (y1, m1, _) = calendar::civil_from_days(d1);
    let (y2, m2, _) = calendar::civil_from_days(d2);
    let t1 = total_units(d1, u1);
    let t2 = total_units(d2, u2);
    let floor_diff = |per: i128| t2.div_euclid(per) - t1.div_euclid(per);
    let diff: i128 = match part {
        DatePart::Year => i128::from(y2 - y1),
        DatePart::Quarter => i128::from(y2 * 4 + ((m2 - 1) / 3) as i32) - i128::from(y1 * 4 + ((m1 - 1) / 3) as i32),
        DatePart::Month => i128::from(y2 * 12 + m2 as i32) - i128::from(y1 * 12 + m1 as i32),
        DatePart::DayOfYear | DatePart::Day | DatePart::Weekday => i128::from(d2 - d1),
        // Weeks start on Sunday (0001-01-07 was a Sunday: day 6).
        DatePart::Week | DatePart::IsoWeek => i128::from((d2 + 1).div_euclid(7) - (d1 + 1).div_euclid(7)),
        DatePart::Hour => floor_diff(i128::from(UNITS_PER_HOUR)),
        DatePart::Minute => floor_diff(i128::from(UNITS_PER_MINUTE)),
        DatePart::Second => floor_diff(i128::from(UNITS_PER_SECOND)),
        DatePart::Millisecond => floor_diff(30_000),
        DatePart::Microsecond => floor_diff(30),
        DatePart::Nanosecond => (t2 * 100).div_euclid(3) - (t1 * 100).div_euclid(3),
        DatePart::TzOffset => 0,
    };
    let (lo, hi) =
        if big { (i128::from(i64::MIN), i128::from(i64::MAX)) } else { (i128::from(i32::MIN), i128::from(i32::MAX)) };
    if !(lo..=hi).contains(&diff) {
        return Err(datediff_overflow(big));
    }
    Ok(diff as i64)
}

/// DATETRUNC(part, v): the start of the part containing `v`, in `v`'s type.
pub fn datetrunc(part: DatePart, v: &Value, ty: &SqlType, datefirst: u8) -> Result<Value, SqlError> {
    if matches!(part, DatePart::Weekday | DatePart::TzOffset | DatePart::Nanosecond) {
        return Err(unsupported(part, "datetrunc", ty));
    }
    check_part(part, ty, "datetrunc")?;
    let (days, units) = clock_for_parts(v);
    let (y, m, _) = calendar::civil_from_days(days);
    let (d, u) = match part {
        DatePart::Year => (calendar::days_from_civil(y, 1, 1), 0),
        DatePart::Quarter => (calendar::days_from_civil(y, (m - 1) / 3 * 3 + 1, 1), 0),
        DatePart::Month => (calendar::days_from_civil(y, m, 1), 0),
        DatePart::DayOfYear | DatePart::Day => (days, 0),
        DatePart::Week => (days - i64::from(weekday(days, datefirst)) + 1, 0),
        DatePart::IsoWeek => (days - i64::from(calendar::iso_weekday(days)) + 1, 0),
        DatePart::Hour => (days, units - units % UNITS_PER_HOUR),
        DatePart::Minute => (days, units - units % UNITS_PER_MINUTE),
        DatePart::Second => (days, units - units % UNITS_PER_SECOND),
        DatePart::Millisecond => (days, units - units % 30_000),
        _ => (days, units - units % 30),
    };
    let offset = match v {
        Value::DateTimeOffset { offset, .. } => *offset,
        _ => 0,
    };
    build_temporal(d, u, ty, offset).map_err(|_| overflow_517(ty))
}

/// EOMONTH(start [, months]): the last day of the month.
pub fn eomonth(v: &Value, months: i64) -> Result<Value, SqlError> {
    let (days, _) = wall_clock(v).unwrap_or((0, 0));
    let (y, m, _) = calendar::civil_from_days(days);
    let first = calendar::days_from_civil(y, m, 1);
    let target = add_months(first, months).ok_or_else(|| overflow_517(&SqlType::Date))?;
    let (ty, tm, _) = calendar::civil_from_days(target);
    let last = calendar::days_from_civil(ty, tm, calendar::days_in_month(ty, tm));
    build_temporal(last, 0, &SqlType::Date, 0).map_err(|_| overflow_517(&SqlType::Date))
}

/// Msg 289 "Cannot construct data type date, some of the arguments have values which
/// are not valid." (states per type as SQL Server reports them).
pub fn cannot_construct(type_name: &str) -> SqlError {
    let state = match type_name {
        "date" => 1,
        "time" => 2,
        "datetime" => 3,
        "smalldatetime" => 4,
        "datetime2" => 5,
        _ => 6,
    };
    SqlError::new(
        289,
        16,
        state,
        format!("Cannot construct data type {type_name}, some of the arguments have values which are not valid."),
    )
}

/// Msg 10760: the precision argument of DATETIME2FROMPARTS and friends is not a constant.
pub fn scale_not_constant(type_name: &str) -> SqlError {
    SqlError::new(
        10760,
        16,
        1,
        format!(
            "Scale argument is not valid. Valid expressions for data type {type_name} scale argument are integer constants and integer constant expressions."
        ),
    )
}

/// The *FROMPARTS builders. `parts` are the integer arguments (NULL already handled by
/// the caller); `ty` the result type.
pub fn from_parts(name: &str, parts: &[i64], ty: &SqlType) -> Result<Value, SqlError> {
    let tname = ty.name();
    let bad = || cannot_construct(tname);
    let get = |i: usize| parts.get(i).copied().unwrap_or(0);
    let civil = |y: i64, m: i64, d: i64| -> Result<i64, SqlError> {
        let (y, m, d) = (
            i32::try_from(y).map_err(|_| bad())?,
            u32::try_from(m).map_err(|_| bad())?,
            u32::try_from(d).map_err(|_| bad())?,
        );
        if !calendar::is_valid_date(y, m, d) {
            return Err(bad());
        }
        Ok(calendar::days_from_civil(y, m, d))
    };
    let clock = |h: i64, mi: i64, s: i64| -> Result<u64, SqlError> {
        if !(0..24).contains(&h) || !(0..60).contains(&mi) || !(0..60).contains(&s) {
            return Err(bad());
        }
        Ok(((h * 60 + mi) * 60 + s) as u64 * UNITS_PER_SECOND)
    };
    // fractions at a precision: fewer than 10^precision units of 10^-precision s.
    let fraction = |f: i64, precision: u8| -> Result<u64, SqlError> {
        let limit = 10i64.pow(u32::from(precision));
        if f < 0 || f >= limit {
            return Err(bad());
        }
        Ok(f as u64 * calendar::ticks_per_unit(precision) * UNITS_PER_TICK)
    };
    let scale = ty.time_scale().unwrap_or(0);
    match name {
        "DATEFROMPARTS" => build_temporal(civil(get(0), get(1), get(2))?, 0, ty, 0).map_err(|_| bad()),
        "DATETIMEFROMPARTS" => {
            let days = civil(get(0), get(1), get(2))?;
            let ms = get(6);
            if !(0..1000).contains(&ms) {
                return Err(bad());
            }
            let units = clock(get(3), get(4), get(5))? + ms as u64 * 30_000;
            build_temporal(days, units, ty, 0).map_err(|_| bad())
        }
        "SMALLDATETIMEFROMPARTS" => {
            let days = civil(get(0), get(1), get(2))?;
            build_temporal(days, clock(get(3), get(4), 0)?, ty, 0).map_err(|_| bad())
        }
        "DATETIME2FROMPARTS" => {
            let days = civil(get(0), get(1), get(2))?;
            let units = clock(get(3), get(4), get(5))? + fraction(get(6), scale)?;
            build_temporal(days, units, ty, 0).map_err(|_| bad())
        }
        "TIMEFROMPARTS" => {
            let units = clock(get(0), get(1), get(2))? + fraction(get(3), scale)?;
            build_temporal(DAYS_TO_1900, units, ty, 0).map_err(|_| bad())
        }
        _ => {
            // DATETIMEOFFSETFROMPARTS: the offset's hour and minute share one sign.
            let days = civil(get(0), get(1), get(2))?;
            let units = clock(get(3), get(4), get(5))? + fraction(get(6), scale)?;
            let (oh, om) = (get(7), get(8));
            if (oh > 0 && om < 0) || (oh < 0 && om > 0) || om.unsigned_abs() >= 60 || oh.unsigned_abs() > 14 {
                return Err(bad());
            }
            let offset = oh * 60 + om;
            if offset.abs() > i64::from(calendar::MAX_OFFSET_MINUTES) {
                return Err(bad());
            }
            build_temporal(days, units, ty, offset as i16).map_err(|_| bad())
        }
    }
}

/// The statement's clock: (local days, local units) and the UTC instant.
fn now(cx: &FnContext, local: bool) -> (i64, u64) {
    let (d, t) = cx.now_utc;
    let (d, u) = (i64::from(d), t.min(calendar::TICKS_PER_DAY - 1) * UNITS_PER_TICK);
    if local {
        shift(d, u, i64::from(cx.local_offset_minutes) * UNITS_PER_MINUTE as i64)
    } else {
        (d, u)
    }
}

/// GETDATE, GETUTCDATE, CURRENT_TIMESTAMP, SYSDATETIME, SYSUTCDATETIME,
/// SYSDATETIMEOFFSET: the statement's start time in the function's type.
pub fn clock_function(name: &str, cx: &FnContext) -> Result<Value, SqlError> {
    let (which, local, ty) = match name {
        "GETDATE" | "CURRENT_TIMESTAMP" => (0, true, SqlType::DateTime),
        "GETUTCDATE" => (1, false, SqlType::DateTime),
        "SYSDATETIME" => (2, true, SqlType::DateTime2 { scale: 7 }),
        "SYSUTCDATETIME" => (3, false, SqlType::DateTime2 { scale: 7 }),
        _ => (4, true, SqlType::DateTimeOffset { scale: 7 }),
    };
    // The value is the same for the whole statement (`now_utc` is the statement's start),
    // and INSERT ... SELECT SYSDATETIME() asks once per row: remember the last answer.
    type Memo = [Option<((u32, u64), i16, Value)>; 5];
    thread_local! {
        static LAST: std::cell::RefCell<Memo> = const { std::cell::RefCell::new([None, None, None, None, None]) };
    }
    let key = (cx.now_utc, cx.local_offset_minutes);
    if let Some(v) = LAST.with(|m| match &m.borrow()[which] {
        Some((now, off, v)) if (*now, *off) == key => Some(v.clone()),
        _ => None,
    }) {
        return Ok(v);
    }
    let (d, u) = now(cx, local);
    let v = build_temporal(d, u, &ty, cx.local_offset_minutes).map_err(|_| overflow_517(&ty))?;
    LAST.with(|m| m.borrow_mut()[which] = Some((key.0, key.1, v.clone())));
    Ok(v)
}

/// An offset argument of SWITCHOFFSET / TODATETIMEOFFSET: `'+05:30'` or minutes.
/// Msg 9812 otherwise.
pub fn offset_arg(v: &Value, fname: &str) -> Result<i16, SqlError> {
    let bad = || {
        SqlError::new(
            9812,
            16,
            1,
            format!("The timezone provided to builtin function {} is invalid.", fname.to_ascii_lowercase()),
        )
    };
    let minutes: i64 = match v {
        Value::String(s) => {
            let t = s.trim();
            let (neg, body) = match t.as_bytes().first() {
                Some(b'+') => (false, &t[1..]),
                Some(b'-') => (true, &t[1..]),
                _ => return Err(bad()),
            };
            let (h, m) = body.split_once(':').ok_or_else(bad)?;
            if h.len() != 2 || m.len() != 2 {
                return Err(bad());
            }
            let (h, m): (i64, i64) = (h.parse().map_err(|_| bad())?, m.parse().map_err(|_| bad())?);
            if m >= 60 {
                return Err(bad());
            }
            let v = h * 60 + m;
            if neg {
                -v
            } else {
                v
            }
        }
        other => util::exact_parts(other).map(|(x, s)| (x / types::decimal::pow10(s)) as i64).ok_or_else(bad)?,
    };
    if minutes.unsigned_abs() > u64::from(calendar::MAX_OFFSET_MINUTES.unsigned_abs()) {
        return Err(bad());
    }
    Ok(minutes as i16)
}

/// SWITCHOFFSET(dto, offset): the same instant at another offset.
pub fn switchoffset(v: &Value, offset: i16, ty: &SqlType) -> Result<Value, SqlError> {
    let (d, u) = utc_clock(v).unwrap_or((0, 0));
    let (ld, lu) = shift(d, u, i64::from(offset) * UNITS_PER_MINUTE as i64);
    build_temporal(ld, lu, ty, offset).map_err(|_| overflow_517(ty))
}

/// TODATETIMEOFFSET(dt, offset): the wall clock `dt` at `offset`.
pub fn todatetimeoffset(v: &Value, offset: i16, ty: &SqlType) -> Result<Value, SqlError> {
    let (d, u) = wall_clock(v).unwrap_or((0, 0));
    build_temporal(d, u, ty, offset).map_err(|_| overflow_517(ty))
}

// ---- AT TIME ZONE ------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dst {
    None,
    /// US and Canada: second Sunday of March 02:00 to first Sunday of November 02:00 local.
    Us,
    /// European Union: last Sunday of March to last Sunday of October, 01:00 UTC.
    Eu,
    /// Australia (south-east): first Sunday of October 02:00 to first Sunday of April 03:00.
    Au,
    /// New Zealand: last Sunday of September 02:00 to first Sunday of April 03:00.
    Nz,
}

/// Windows time zone names SQL Server accepts, with standard offsets in minutes.
const ZONES: &[(&str, i16, Dst)] = &[
    ("UTC", 0, Dst::None),
    ("Coordinated Universal Time", 0, Dst::None),
    ("GMT Standard Time", 0, Dst::Eu),
    ("Greenwich Standard Time", 0, Dst::None),
    ("W. Europe Standard Time", 60, Dst::Eu),
    ("Central European Standard Time", 60, Dst::Eu),
    ("Central Europe Standard Time", 60, Dst::Eu),
    ("Romance Standard Time", 60, Dst::Eu),
    ("GTB Standard Time", 120, Dst::Eu),
    ("FLE Standard Time", 120, Dst::Eu),
    ("E. Europe Standard Time", 120, Dst::Eu),
    ("Russian Standard Time", 180, Dst::None),
    ("Turkey Standard Time", 180, Dst::None),
    ("Arabian Standard Time", 240, Dst::None),
    ("India Standard Time", 330, Dst::None),
    ("SE Asia Standard Time", 420, Dst::None),
    ("China Standard Time", 480, Dst::None),
    ("Singapore Standard Time", 480, Dst::None),
    ("W. Australia Standard Time", 480, Dst::None),
    ("Tokyo Standard Time", 540, Dst::None),
    ("Korea Standard Time", 540, Dst::None),
    ("AUS Eastern Standard Time", 600, Dst::Au),
    ("E. Australia Standard Time", 600, Dst::None),
    ("New Zealand Standard Time", 720, Dst::Nz),
    ("South Africa Standard Time", 120, Dst::None),
    ("E. South America Standard Time", -180, Dst::None),
    ("Atlantic Standard Time", -240, Dst::Us),
    ("Eastern Standard Time", -300, Dst::Us),
    ("SA Pacific Standard Time", -300, Dst::None),
    ("Central Standard Time", -360, Dst::Us),
    ("Mountain Standard Time", -420, Dst::Us),
    ("US Mountain Standard Time", -420, Dst::None),
    ("Pacific Standard Time", -480, Dst::Us),
    ("Alaskan Standard Time", -540, Dst::Us),
    ("Hawaiian Standard Time", -600, Dst::None),
];

/// The n-th (1-based) Sunday of a month, or the last one for n = 0.
fn sunday(y: i32, m: u32, n: u32) -> i64 {
    if n == 0 {
        let last = calendar::days_from_civil(y, m, calendar::days_in_month(y, m));
        return last - i64::from(calendar::iso_weekday(last) % 7);
    }
    let first = calendar::days_from_civil(y, m, 1);
    let to_sunday = (7 - i64::from(calendar::iso_weekday(first))) % 7;
    first + to_sunday + 7 * i64::from(n - 1)
}

/// Start and end of daylight time in a year as UTC unit counts.
fn dst_window_utc(dst: Dst, y: i32, std: i16) -> Option<(i128, i128)> {
    let std_u = i128::from(std) * i128::from(UNITS_PER_MINUTE);
    let dst_u = std_u + i128::from(UNITS_PER_HOUR);
    let at = |days: i64, hour: u64| total_units(days, hour * UNITS_PER_HOUR);
    Some(match dst {
        Dst::None => return None,
        // 02:00 standard time; ends 02:00 daylight time.
        Dst::Us => (at(sunday(y, 3, 2), 2) - std_u, at(sunday(y, 11, 1), 2) - dst_u),
        Dst::Eu => (at(sunday(y, 3, 0), 1), at(sunday(y, 10, 0), 1)),
        Dst::Au => (at(sunday(y, 10, 1), 2) - std_u, at(sunday(y, 4, 1), 3) - dst_u),
        Dst::Nz => (at(sunday(y, 9, 0), 2) - std_u, at(sunday(y, 4, 1), 3) - dst_u),
    })
}

/// Is daylight time in force at a UTC instant?
fn in_dst(dst: Dst, std: i16, utc: i128) -> bool {
    let days = utc.div_euclid(i128::from(UNITS_PER_DAY)) as i64;
    let (y, _, _) = calendar::civil_from_days(days);
    let Some((start, end)) = dst_window_utc(dst, y, std) else { return false };
    if start < end {
        utc >= start && utc < end
    } else {
        // Southern hemisphere: daylight time spans the new year.
        utc >= start || utc < end
    }
}

fn find_zone(name: &str) -> Option<(i16, Dst)> {
    let n = name.trim();
    ZONES.iter().find(|(z, _, _)| z.eq_ignore_ascii_case(n)).map(|&(_, o, d)| (o, d))
}

/// `value AT TIME ZONE 'zone'`: smalldatetime, datetime and datetime2 are local times in
/// the zone and get its offset; datetimeoffset is converted to the zone. The result is
/// datetimeoffset (scale 3 for datetime, 0 for smalldatetime, else the input's). Msg
/// 9820 for an unknown zone, 8116 for date and time inputs.
pub fn at_time_zone(value: &Value, ty: &SqlType, zone_name: &str) -> Result<Value, SqlError> {
    if value.is_null() {
        return Ok(Value::Null);
    }
    let ty = util::effective_type(value, ty);
    let scale = match ty {
        SqlType::DateTime => 3,
        SqlType::SmallDateTime => 0,
        SqlType::DateTime2 { scale } | SqlType::DateTimeOffset { scale } => scale,
        _ => {
            return Err(SqlError::new(
                8116,
                16,
                1,
                format!("Argument data type {} is invalid for argument 1 of AT TIME ZONE function.", ty.name()),
            ))
        }
    };
    let (std, dst) = find_zone(zone_name).ok_or_else(|| {
        SqlError::new(
            9820,
            16,
            1,
            format!("The time zone parameter '{zone_name}' provided to AT TIME ZONE clause is invalid."),
        )
    })?;
    let out = SqlType::DateTimeOffset { scale };
    let minute = i128::from(UNITS_PER_MINUTE);
    let hour = i128::from(UNITS_PER_HOUR);
    let std_u = i128::from(std) * minute;
    let (local, offset) = if let Value::DateTimeOffset { .. } = value {
        let (d, u) = utc_clock(value).unwrap_or((0, 0));
        let utc = total_units(d, u);
        let off = if in_dst(dst, std, utc) { std + 60 } else { std };
        (utc + i128::from(off) * minute, off)
    } else {
        let (d, u) = wall_clock(value).unwrap_or((0, 0));
        let local = total_units(d, u);
        if dst == Dst::None {
            (local, std)
        } else {
            // Try daylight time first: in the fall-back overlap both readings are
            // valid and the daylight (earlier) one wins; in the spring-forward gap
            // neither is, and the time moves forward by the daylight delta.
            let as_dst = local - std_u - hour;
            let as_std = local - std_u;
            if in_dst(dst, std, as_dst) {
                (local, std + 60)
            } else if !in_dst(dst, std, as_std) {
                (local, std)
            } else {
                (local + hour, std + 60)
            }
        }
    };
    let days = local.div_euclid(i128::from(UNITS_PER_DAY)) as i64;
    let units = local.rem_euclid(i128::from(UNITS_PER_DAY)) as u64;
    build_temporal(days, units, &out, offset).map_err(|_| SqlError::datetime_out_of_range(ty.name(), "datetimeoffset"))
}

/// nvarchar(30), DATENAME's type.
pub const DATENAME_TYPE: SqlType = SqlType::NVarChar { len: Length::Bounded(30) };

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str, t: SqlType) -> Value {
        types::parse(s, &t).unwrap()
    }

    fn dt2(s: &str) -> Value {
        parse(s, SqlType::DateTime2 { scale: 7 })
    }

    const DT2: SqlType = SqlType::DateTime2 { scale: 7 };

    #[test]
    fn datepart_words() {
        for (w, p) in [
            ("yy", DatePart::Year),
            ("QQ", DatePart::Quarter),
            ("m", DatePart::Month),
            ("dy", DatePart::DayOfYear),
            ("d", DatePart::Day),
            ("wk", DatePart::Week),
            ("isowk", DatePart::IsoWeek),
            ("dw", DatePart::Weekday),
            ("hh", DatePart::Hour),
            ("n", DatePart::Minute),
            ("ss", DatePart::Second),
            ("ms", DatePart::Millisecond),
            ("mcs", DatePart::Microsecond),
            ("ns", DatePart::Nanosecond),
            ("tz", DatePart::TzOffset),
        ] {
            assert_eq!(DatePart::parse(w), Some(p), "{w}");
        }
        let e = datepart_arg(Some(&Value::String("foo".into())), "DATEADD").unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (155, "'foo' is not a recognized dateadd option."));
    }

    #[test]
    fn dateparts() {
        let v = dt2("2024-03-15 13:45:30.1234567");
        assert_eq!(datepart(DatePart::Year, &v, 7), 2024);
        assert_eq!(datepart(DatePart::Quarter, &v, 7), 1);
        assert_eq!(datepart(DatePart::DayOfYear, &v, 7), 75);
        assert_eq!(datepart(DatePart::Weekday, &v, 7), 6); // a Friday, Sunday first
        assert_eq!(datepart(DatePart::Weekday, &v, 1), 5); // Monday first
        assert_eq!(datepart(DatePart::Hour, &v, 7), 13);
        assert_eq!(datepart(DatePart::Millisecond, &v, 7), 123);
        assert_eq!(datepart(DatePart::Microsecond, &v, 7), 123_456);
        assert_eq!(datepart(DatePart::Nanosecond, &v, 7), 123_456_700);
        // Week 1 holds January 1; 2024-01-06 is a Saturday, 2024-01-07 a Sunday.
        assert_eq!(datepart(DatePart::Week, &dt2("2024-01-06"), 7), 1);
        assert_eq!(datepart(DatePart::Week, &dt2("2024-01-07"), 7), 2);
        assert_eq!(datepart(DatePart::Week, &dt2("2024-01-07"), 1), 1);
        assert_eq!(datepart(DatePart::IsoWeek, &dt2("2021-01-03"), 7), 53);
        assert_eq!(datepart(DatePart::IsoWeek, &dt2("2024-12-30"), 7), 1);
        let d = parse("2024-01-02 03:04:05.997", SqlType::DateTime);
        assert_eq!(datepart(DatePart::Millisecond, &d, 7), 997);
        let o = parse("2024-01-02 03:04:05 +05:30", SqlType::DateTimeOffset { scale: 0 });
        assert_eq!(datepart(DatePart::TzOffset, &o, 7), 330);
        assert_eq!(datepart(DatePart::Hour, &o, 7), 3);
        assert_eq!(datename(DatePart::Month, &v, 7, types::lang::us_english()), "March");
        assert_eq!(datename(DatePart::Weekday, &v, 7, types::lang::us_english()), "Friday");
        assert_eq!(datename(DatePart::Day, &v, 7, types::lang::us_english()), "15");
        assert_eq!(datename(DatePart::TzOffset, &o, 7, types::lang::us_english()), "+05:30");
        let e = check_part(DatePart::Hour, &SqlType::Date, "datepart").unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (9810, "The datepart hour is not supported by date function datepart for data type date.")
        );
        assert!(check_part(DatePart::Year, &SqlType::Time { scale: 7 }, "datepart").is_err());
        assert!(check_part(DatePart::TzOffset, &DT2, "datepart").is_err());
    }

    #[test]
    fn adding() {
        let v = dt2("2024-01-31 10:00");
        assert_eq!(dateadd(DatePart::Month, 1, &v, &DT2).unwrap(), dt2("2024-02-29 10:00"));
        assert_eq!(dateadd(DatePart::Year, -1, &dt2("2024-02-29"), &DT2).unwrap(), dt2("2023-02-28"));
        assert_eq!(dateadd(DatePart::Quarter, 1, &v, &DT2).unwrap(), dt2("2024-04-30 10:00"));
        assert_eq!(dateadd(DatePart::Week, 1, &v, &DT2).unwrap(), dt2("2024-02-07 10:00"));
        assert_eq!(dateadd(DatePart::Hour, -11, &v, &DT2).unwrap(), dt2("2024-01-30 23:00"));
        assert_eq!(dateadd(DatePart::Nanosecond, 49, &v, &DT2).unwrap(), v);
        assert_eq!(dateadd(DatePart::Nanosecond, 50, &v, &DT2).unwrap(), dt2("2024-01-31 10:00:00.0000001"));
        let t = parse("23:00", SqlType::Time { scale: 7 });
        assert_eq!(
            dateadd(DatePart::Hour, 2, &t, &SqlType::Time { scale: 7 }).unwrap(),
            parse("01:00", SqlType::Time { scale: 7 })
        );
        let d = parse("2024-01-01 00:00:00.000", SqlType::DateTime);
        assert_eq!(dateadd(DatePart::Millisecond, 1, &d, &SqlType::DateTime).unwrap(), d);
        assert_eq!(
            dateadd(DatePart::Millisecond, 2, &d, &SqlType::DateTime).unwrap(),
            parse("2024-01-01 00:00:00.003", SqlType::DateTime)
        );
        let e = dateadd(DatePart::Year, 1, &parse("9999-06-01", SqlType::Date), &SqlType::Date).unwrap_err();
        assert_eq!((e.number, e.message.as_str()), (517, "Adding a value to a 'date' column caused an overflow."));
        assert_eq!(
            dateadd(DatePart::Hour, 1, &parse("2024-01-01", SqlType::Date), &SqlType::Date).unwrap_err().number,
            9810
        );
        let o = parse("2024-01-02 03:04:05 +05:30", SqlType::DateTimeOffset { scale: 0 });
        assert_eq!(
            dateadd(DatePart::Day, 1, &o, &SqlType::DateTimeOffset { scale: 0 }).unwrap().to_string(),
            "2024-01-03 03:04:05 +05:30"
        );
    }

    #[test]
    fn differences() {
        let a = dt2("2023-12-31 23:59:59");
        let b = dt2("2024-01-01 00:00:00");
        assert_eq!(datediff(DatePart::Year, &a, &b, false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Quarter, &a, &b, false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Month, &a, &b, false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Day, &a, &b, false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Second, &a, &b, false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Year, &b, &a, false).unwrap(), -1);
        // 2024-01-06 is a Saturday, the 7th a Sunday: one week boundary.
        assert_eq!(datediff(DatePart::Week, &dt2("2024-01-06"), &dt2("2024-01-07"), false).unwrap(), 1);
        assert_eq!(datediff(DatePart::Week, &dt2("2024-01-07"), &dt2("2024-01-13"), false).unwrap(), 0);
        let d0 = parse("1900-01-01", SqlType::DateTime);
        assert_eq!(datediff(DatePart::Day, &d0, &parse("2024-01-31", SqlType::DateTime), false).unwrap(), 45_320);
        let e = datediff(DatePart::Nanosecond, &dt2("2000-01-01"), &dt2("2024-01-01"), false).unwrap_err();
        assert_eq!(e.number, 535);
        assert!(e.message.starts_with("The datediff function resulted in an overflow."));
        assert_eq!(
            datediff(DatePart::Nanosecond, &dt2("2000-01-01"), &dt2("2024-01-01"), true).unwrap(),
            757_382_400_000_000_000
        );
        let x = parse("2024-01-01 00:00:00.000", SqlType::DateTime);
        let y = parse("2024-01-01 00:00:00.997", SqlType::DateTime);
        assert_eq!(datediff(DatePart::Millisecond, &x, &y, false).unwrap(), 997);
        // datetimeoffset: compared as UTC instants.
        let o1 = parse("2024-01-01 23:00 -05:00", SqlType::DateTimeOffset { scale: 0 });
        let o2 = parse("2024-01-02 01:00 +00:00", SqlType::DateTimeOffset { scale: 0 });
        assert_eq!(datediff(DatePart::Hour, &o1, &o2, false).unwrap(), -3);
        assert_eq!(datediff(DatePart::TzOffset, &o1, &o2, false).unwrap_err().number, 9806);
    }

    #[test]
    fn truncating_and_parts() {
        let v = dt2("2024-05-15 13:45:30.1234567");
        assert_eq!(datetrunc(DatePart::Year, &v, &DT2, 7).unwrap(), dt2("2024-01-01"));
        assert_eq!(datetrunc(DatePart::Quarter, &v, &DT2, 7).unwrap(), dt2("2024-04-01"));
        assert_eq!(datetrunc(DatePart::Month, &v, &DT2, 7).unwrap(), dt2("2024-05-01"));
        assert_eq!(datetrunc(DatePart::Week, &v, &DT2, 7).unwrap(), dt2("2024-05-12"));
        assert_eq!(datetrunc(DatePart::IsoWeek, &v, &DT2, 7).unwrap(), dt2("2024-05-13"));
        assert_eq!(datetrunc(DatePart::Hour, &v, &DT2, 7).unwrap(), dt2("2024-05-15 13:00"));
        assert_eq!(datetrunc(DatePart::Millisecond, &v, &DT2, 7).unwrap(), dt2("2024-05-15 13:45:30.123"));
        assert_eq!(
            datetrunc(DatePart::Hour, &parse("2024-05-15", SqlType::Date), &SqlType::Date, 7).unwrap_err().number,
            9810
        );
        assert_eq!(eomonth(&dt2("2024-02-10"), 0).unwrap(), parse("2024-02-29", SqlType::Date));
        assert_eq!(eomonth(&dt2("2024-01-31"), 1).unwrap(), parse("2024-02-29", SqlType::Date));
        assert_eq!(eomonth(&dt2("2024-01-31"), -2).unwrap(), parse("2023-11-30", SqlType::Date));
        assert_eq!(
            from_parts("DATEFROMPARTS", &[2024, 2, 29], &SqlType::Date).unwrap(),
            parse("2024-02-29", SqlType::Date)
        );
        let e = from_parts("DATEFROMPARTS", &[2023, 2, 29], &SqlType::Date).unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (289, "Cannot construct data type date, some of the arguments have values which are not valid.")
        );
        let v =
            from_parts("DATETIME2FROMPARTS", &[2024, 1, 2, 3, 4, 5, 5, 1], &SqlType::DateTime2 { scale: 1 }).unwrap();
        assert_eq!(v.to_string(), "2024-01-02 03:04:05.5");
        assert!(
            from_parts("DATETIME2FROMPARTS", &[2024, 1, 2, 3, 4, 5, 50, 1], &SqlType::DateTime2 { scale: 1 }).is_err()
        );
        let v = from_parts("DATETIMEFROMPARTS", &[2024, 1, 2, 23, 59, 59, 999], &SqlType::DateTime).unwrap();
        assert_eq!(v.to_string(), "2024-01-03 00:00:00.000");
        let v = from_parts("SMALLDATETIMEFROMPARTS", &[2024, 1, 2, 3, 4], &SqlType::SmallDateTime).unwrap();
        assert_eq!(v.to_string(), "2024-01-02 03:04:00");
        let v = from_parts("TIMEFROMPARTS", &[23, 59, 59, 123, 3], &SqlType::Time { scale: 3 }).unwrap();
        assert_eq!(v.to_string(), "23:59:59.123");
        assert_eq!(from_parts("TIMEFROMPARTS", &[24, 0, 0, 0, 0], &SqlType::Time { scale: 0 }).unwrap_err().state, 2);
        let v = from_parts(
            "DATETIMEOFFSETFROMPARTS",
            &[2024, 1, 2, 3, 4, 5, 0, 5, 30, 0],
            &SqlType::DateTimeOffset { scale: 0 },
        )
        .unwrap();
        assert_eq!(v.to_string(), "2024-01-02 03:04:05 +05:30");
        assert!(from_parts(
            "DATETIMEOFFSETFROMPARTS",
            &[2024, 1, 2, 3, 4, 5, 0, 5, -30, 0],
            &SqlType::DateTimeOffset { scale: 0 }
        )
        .is_err());
    }

    #[test]
    fn clocks_and_offsets() {
        let cx = FnContext {
            now_utc: (calendar::days_from_civil(2024, 6, 1) as u32, 36_000_000_000),
            local_offset_minutes: 120,
            ..FnContext::default()
        };
        assert_eq!(clock_function("SYSUTCDATETIME", &cx).unwrap(), dt2("2024-06-01 01:00"));
        assert_eq!(clock_function("SYSDATETIME", &cx).unwrap(), dt2("2024-06-01 03:00"));
        assert_eq!(clock_function("GETDATE", &cx).unwrap(), parse("2024-06-01 03:00", SqlType::DateTime));
        assert_eq!(clock_function("GETUTCDATE", &cx).unwrap(), parse("2024-06-01 01:00", SqlType::DateTime));
        assert_eq!(clock_function("SYSDATETIMEOFFSET", &cx).unwrap().to_string(), "2024-06-01 03:00:00.0000000 +02:00");
        let o = parse("2024-01-02 03:04:05 +05:30", SqlType::DateTimeOffset { scale: 0 });
        let ty = SqlType::DateTimeOffset { scale: 0 };
        assert_eq!(
            switchoffset(&o, offset_arg(&Value::String("-08:00".into()), "switchoffset").unwrap(), &ty)
                .unwrap()
                .to_string(),
            "2024-01-01 13:34:05 -08:00"
        );
        assert_eq!(offset_arg(&Value::Int(-120), "switchoffset").unwrap(), -120);
        let e = offset_arg(&Value::String("+15:00".into()), "switchoffset").unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (9812, "The timezone provided to builtin function switchoffset is invalid.")
        );
        let v = todatetimeoffset(&dt2("2024-01-02 03:04:05"), 330, &ty).unwrap();
        assert_eq!(v.to_string(), "2024-01-02 03:04:05 +05:30");
    }

    #[test]
    fn time_zones() {
        let tz = |s: &str, z: &str| at_time_zone(&dt2(s), &DT2, z).unwrap().to_string();
        assert_eq!(tz("2024-01-15 12:00", "Pacific Standard Time"), "2024-01-15 12:00:00.0000000 -08:00");
        assert_eq!(tz("2024-07-15 12:00", "Pacific Standard Time"), "2024-07-15 12:00:00.0000000 -07:00");
        assert_eq!(tz("2024-07-15 12:00", "eastern standard time"), "2024-07-15 12:00:00.0000000 -04:00");
        assert_eq!(tz("2024-07-15 12:00", "Central European Standard Time"), "2024-07-15 12:00:00.0000000 +02:00");
        assert_eq!(tz("2024-01-15 12:00", "W. Europe Standard Time"), "2024-01-15 12:00:00.0000000 +01:00");
        assert_eq!(tz("2024-07-15 12:00", "GMT Standard Time"), "2024-07-15 12:00:00.0000000 +01:00");
        assert_eq!(tz("2024-07-15 12:00", "Tokyo Standard Time"), "2024-07-15 12:00:00.0000000 +09:00");
        assert_eq!(tz("2024-07-15 12:00", "India Standard Time"), "2024-07-15 12:00:00.0000000 +05:30");
        assert_eq!(tz("2024-07-15 12:00", "AUS Eastern Standard Time"), "2024-07-15 12:00:00.0000000 +10:00");
        assert_eq!(tz("2024-01-15 12:00", "AUS Eastern Standard Time"), "2024-01-15 12:00:00.0000000 +11:00");
        // EU transitions 2022: spring forward 2022-03-27 02:00 -> 03:00 (CET).
        assert_eq!(tz("2022-03-27 01:59", "Central European Standard Time"), "2022-03-27 01:59:00.0000000 +01:00");
        assert_eq!(tz("2022-03-27 02:30", "Central European Standard Time"), "2022-03-27 03:30:00.0000000 +02:00");
        assert_eq!(tz("2022-03-27 03:00", "Central European Standard Time"), "2022-03-27 03:00:00.0000000 +02:00");
        // Fall back 2022-10-30 03:00 -> 02:00: the overlap takes the daylight offset.
        assert_eq!(tz("2022-10-30 02:30", "Central European Standard Time"), "2022-10-30 02:30:00.0000000 +02:00");
        assert_eq!(tz("2022-10-30 03:00", "Central European Standard Time"), "2022-10-30 03:00:00.0000000 +01:00");
        // US 2024: 2024-03-10 02:00 -> 03:00, 2024-11-03 02:00 -> 01:00.
        assert_eq!(tz("2024-03-10 02:30", "Eastern Standard Time"), "2024-03-10 03:30:00.0000000 -04:00");
        assert_eq!(tz("2024-11-03 01:30", "Eastern Standard Time"), "2024-11-03 01:30:00.0000000 -04:00");
        assert_eq!(tz("2024-11-03 02:30", "Eastern Standard Time"), "2024-11-03 02:30:00.0000000 -05:00");
        // datetimeoffset input: converted.
        let o = parse("2024-07-15 12:00 +00:00", SqlType::DateTimeOffset { scale: 0 });
        let v = at_time_zone(&o, &SqlType::DateTimeOffset { scale: 0 }, "Pacific Standard Time").unwrap();
        assert_eq!(v.to_string(), "2024-07-15 05:00:00 -07:00");
        let d = parse("2024-07-15 12:00", SqlType::DateTime);
        assert_eq!(at_time_zone(&d, &SqlType::DateTime, "UTC").unwrap().to_string(), "2024-07-15 12:00:00.000 +00:00");
        let e = at_time_zone(&d, &SqlType::DateTime, "Mars Standard Time").unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (9820, "The time zone parameter 'Mars Standard Time' provided to AT TIME ZONE clause is invalid.")
        );
        let e = at_time_zone(&parse("2024-01-01", SqlType::Date), &SqlType::Date, "UTC").unwrap_err();
        assert_eq!(
            (e.number, e.message.as_str()),
            (8116, "Argument data type date is invalid for argument 1 of AT TIME ZONE function.")
        );
    }
}
