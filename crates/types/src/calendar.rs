//! Calendar arithmetic for the date and time types: proleptic Gregorian civil dates to and
//! from day numbers, and the tick units the types count in.
//!
//! SQL Server counts `date`, `datetime2` and `datetimeoffset` days from 0001-01-01 and
//! `datetime`/`smalldatetime` days from 1900-01-01, always in the proleptic Gregorian
//! calendar (no Julian switch in 1582). Everything here is integer arithmetic so that
//! DATEADD, DATEDIFF and conversions later agree exactly with what is stored.

/// Days from 0001-01-01 to 1900-01-01: the epoch of `datetime` and `smalldatetime`.
pub const DAYS_TO_1900: i64 = 693_595;
/// Day number (since 0001-01-01) of 9999-12-31, the last day of every date type.
pub const MAX_DATE_DAYS: u32 = 3_652_058;
/// Day number (since 1900-01-01, may be negative) of 1753-01-01, `datetime`'s first day.
pub const DATETIME_MIN_DAYS: i32 = -53_690;
/// Day number (since 1900-01-01) of 9999-12-31, `datetime`'s last day.
pub const DATETIME_MAX_DAYS: i32 = 2_958_463;
/// Day number (since 1900-01-01) of 2079-06-06, `smalldatetime`'s last day.
pub const SMALLDATETIME_MAX_DAYS: u16 = u16::MAX;

/// `time`, `datetime2` and `datetimeoffset` count in 100 ns ticks.
pub const TICKS_PER_SECOND: u64 = 10_000_000;
pub const TICKS_PER_MINUTE: u64 = 60 * TICKS_PER_SECOND;
pub const TICKS_PER_HOUR: u64 = 60 * TICKS_PER_MINUTE;
pub const TICKS_PER_DAY: u64 = 24 * TICKS_PER_HOUR;
/// `datetime` counts its time of day in 1/300 s ticks.
pub const DATETIME_TICKS_PER_SECOND: u32 = 300;
pub const DATETIME_TICKS_PER_DAY: u32 = 24 * 60 * 60 * DATETIME_TICKS_PER_SECOND;
pub const MINUTES_PER_DAY: u16 = 24 * 60;
/// `datetimeoffset` offsets are limited to -14:00..+14:00.
pub const MAX_OFFSET_MINUTES: i16 = 14 * 60;

/// Leap years of the proleptic Gregorian calendar.
pub fn is_leap_year(year: i32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// Days in `month` (1..=12) of `year`; 0 for a month outside 1..=12.
pub fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// Whether year/month/day names a real day in SQL Server's range 0001-01-01..9999-12-31.
pub fn is_valid_date(year: i32, month: u32, day: u32) -> bool {
    (1..=9999).contains(&year) && day >= 1 && day <= days_in_month(year, month)
}

/// Day number since 0001-01-01 (which is day 0) of a civil date. Works for any year
/// (Howard Hinnant's `days_from_civil`, shifted to SQL Server's epoch); the caller checks
/// ranges. `month` and `day` are expected to be valid for the year.
pub fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = i64::from(year) - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y - era * 400; // [0, 399]
    let mp = (i64::from(month) + 9) % 12; // March = 0
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1; // [0, 365]
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; // [0, 146096]
                                                     // era * 146097 + doe counts from 0000-03-01; 0001-01-01 is 306 days later.
    era * 146_097 + doe - 306
}

/// Civil date (year, month, day) of a day number since 0001-01-01. Inverse of
/// [`days_from_civil`]; day numbers beyond +-2^40 (far outside any SQL Server type) are
/// clamped so that no input can overflow.
pub fn civil_from_days(days: i64) -> (i32, u32, u32) {
    let z = days.clamp(-(1 << 40), 1 << 40) + 306;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097; // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year as i32, month, day)
}

/// ISO weekday of a day number since 0001-01-01: 1 = Monday .. 7 = Sunday.
/// (0001-01-01 was a Monday in the proleptic Gregorian calendar.) DATEPART(weekday)
/// shifts this by @@DATEFIRST.
pub fn iso_weekday(days: i64) -> u32 {
    (days.rem_euclid(7) + 1) as u32
}

/// Day of the year, 1..=366.
pub fn day_of_year(year: i32, month: u32, day: u32) -> u32 {
    (days_from_civil(year, month, day) - days_from_civil(year, 1, 1) + 1) as u32
}

/// Splits 100 ns ticks since midnight into hours, minutes, seconds and the remaining
/// ticks (0..10^7).
pub fn split_ticks(ticks: u64) -> (u32, u32, u32, u64) {
    let h = ticks / TICKS_PER_HOUR;
    let mi = ticks % TICKS_PER_HOUR / TICKS_PER_MINUTE;
    let s = ticks % TICKS_PER_MINUTE / TICKS_PER_SECOND;
    (h as u32, mi as u32, s as u32, ticks % TICKS_PER_SECOND)
}

/// The number of 100 ns ticks in one unit of a time scale (0..=7): 10^(7 - scale).
/// Scales above 7 are treated as 7.
pub fn ticks_per_unit(scale: u8) -> u64 {
    10u64.pow(7 - u32::from(scale.min(7)))
}

/// Rounds 100 ns ticks to a time scale, half away from zero as SQL Server does when it
/// narrows `datetime2(7)` to `datetime2(3)`. The result may equal a whole day
/// (TICKS_PER_DAY), which the caller carries into the date.
pub fn round_ticks_to_scale(ticks: u64, scale: u8) -> u64 {
    let unit = ticks_per_unit(scale);
    ticks.saturating_add(unit / 2) / unit * unit
}

/// Milliseconds (0..=999, rounded) shown for a `datetime` tick count within a second:
/// 1/300 s ticks display as .000, .003, .007, ...
pub fn datetime_ticks_to_millis(ticks_in_second: u32) -> u32 {
    // ticks * 1000 / 300, rounded to nearest; never exactly half.
    ticks_in_second.saturating_mul(20).saturating_add(3) / 6
}

/// `datetime` 1/300 s ticks nearest to a number of milliseconds, the rounding SQL Server
/// applies to 'hh:mi:ss.mmm' (.998 -> .997, .999 -> next second).
pub fn millis_to_datetime_ticks(millis: u64) -> u64 {
    millis.saturating_mul(3).saturating_add(5) / 10
}

/// `datetime` 1/300 s ticks nearest to a count of 100 ns ticks (half rounds up).
pub fn ticks_to_datetime_ticks(ticks: u64) -> u64 {
    // 1/300 s = 100_000/3 ticks: n = ticks * 3 / 100_000, rounded.
    ticks.saturating_mul(3).saturating_add(50_000) / 100_000
}

/// 100 ns ticks nearest to a count of `datetime` 1/300 s ticks.
pub fn datetime_ticks_to_ticks(dt_ticks: u64) -> u64 {
    dt_ticks.saturating_mul(100_000).saturating_add(1) / 3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs() {
        assert_eq!(days_from_civil(1, 1, 1), 0);
        assert_eq!(days_from_civil(1900, 1, 1), DAYS_TO_1900);
        assert_eq!(days_from_civil(9999, 12, 31), i64::from(MAX_DATE_DAYS));
        assert_eq!(days_from_civil(1753, 1, 1) - DAYS_TO_1900, i64::from(DATETIME_MIN_DAYS));
        assert_eq!(days_from_civil(9999, 12, 31) - DAYS_TO_1900, i64::from(DATETIME_MAX_DAYS));
        assert_eq!(days_from_civil(2079, 6, 6) - DAYS_TO_1900, i64::from(SMALLDATETIME_MAX_DAYS));
        // 1970-01-01 is 719162 days after 0001-01-01 (.NET's DateTime agrees).
        assert_eq!(days_from_civil(1970, 1, 1), 719_162);
    }

    #[test]
    fn round_trips_every_day() {
        let mut expect = (1, 1, 1);
        for days in 0..=i64::from(MAX_DATE_DAYS) {
            let got = civil_from_days(days);
            assert_eq!(got, expect, "day {days}");
            assert_eq!(days_from_civil(got.0, got.1, got.2), days);
            let (y, m, d) = expect;
            expect = if d < days_in_month(y, m) {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
        }
    }

    #[test]
    fn leap_years_and_weekdays() {
        assert!(is_leap_year(2000) && is_leap_year(2024) && !is_leap_year(1900) && !is_leap_year(2023));
        assert!(is_valid_date(2024, 2, 29) && !is_valid_date(2023, 2, 29) && !is_valid_date(2024, 13, 1));
        assert!(!is_valid_date(0, 1, 1) && !is_valid_date(10000, 1, 1));
        assert_eq!(iso_weekday(0), 1); // 0001-01-01 Monday
        assert_eq!(iso_weekday(days_from_civil(2024, 1, 2)), 2); // a Tuesday
        assert_eq!(day_of_year(2024, 12, 31), 366);
    }

    #[test]
    fn datetime_tick_rounding() {
        // SQL Server's documented table: .990/.991 -> .990, .992-.994 -> .993,
        // .995-.998 -> .997, .999 -> next second.
        let shown = |ms: u64| {
            let t = millis_to_datetime_ticks(ms);
            if t == 300 {
                1000
            } else {
                datetime_ticks_to_millis(t as u32)
            }
        };
        assert_eq!(shown(990), 990);
        assert_eq!(shown(991), 990);
        assert_eq!(shown(992), 993);
        assert_eq!(shown(994), 993);
        assert_eq!(shown(995), 997);
        assert_eq!(shown(998), 997);
        assert_eq!(shown(999), 1000);
        assert_eq!(datetime_ticks_to_millis(1), 3);
        assert_eq!(datetime_ticks_to_millis(2), 7);
        assert_eq!(round_ticks_to_scale(1_234_567, 3), 1_230_000);
        assert_eq!(round_ticks_to_scale(1_235_000, 3), 1_240_000);
        assert_eq!(round_ticks_to_scale(TICKS_PER_DAY - 1, 0), TICKS_PER_DAY);
        assert_eq!(ticks_to_datetime_ticks(datetime_ticks_to_ticks(299)), 299);
    }
}
