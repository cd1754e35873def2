//! Calendar units on a wall clock (a "local" time is epoch milliseconds read as if the wall
//! clock were UTC): their start, and steps of them, as Elasticsearch's date math and roundings
//! count them (weeks start on Monday; a month step keeps the day, clamped to the month's end).

use chrono::{DateTime, Datelike, Months, NaiveDate};

const HOUR: i64 = 3_600_000;
const DAY: i64 = 24 * HOUR;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Unit {
    Second,
    Minute,
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Unit {
    /// Elasticsearch's names of a calendar interval.
    pub fn parse(text: &str) -> Option<Unit> {
        Some(match text {
            "second" | "1s" => Unit::Second,
            "minute" | "1m" => Unit::Minute,
            "hour" | "1h" => Unit::Hour,
            "day" | "1d" => Unit::Day,
            "week" | "1w" => Unit::Week,
            "month" | "1M" => Unit::Month,
            "quarter" | "1q" => Unit::Quarter,
            "year" | "1y" => Unit::Year,
            _ => return None,
        })
    }

    /// The shortest and longest a bucket of this unit can be, daylight saving included.
    pub fn span(self) -> (i64, i64) {
        match self {
            Unit::Second => (1000, 1000),
            Unit::Minute => (60_000, 60_000),
            Unit::Hour => (HOUR / 2, 3 * HOUR),
            Unit::Day => (21 * HOUR, 27 * HOUR),
            Unit::Week => (7 * DAY - 3 * HOUR, 7 * DAY + 3 * HOUR),
            Unit::Month => (28 * DAY - 3 * HOUR, 31 * DAY + 3 * HOUR),
            Unit::Quarter => (89 * DAY, 92 * DAY + 3 * HOUR),
            Unit::Year => (365 * DAY - 3 * HOUR, 366 * DAY + 3 * HOUR),
        }
    }
}

/// The start of `local`'s unit, on the wall clock (weeks start on Monday).
pub fn truncate(local: i64, unit: Unit) -> i64 {
    let floor = |step: i64| local.div_euclid(step) * step;
    let Some(t) = DateTime::from_timestamp_millis(local) else {
        return local;
    };
    let day = t.date_naive();
    let at = |d: Option<NaiveDate>| {
        d.and_then(|d| d.and_hms_opt(0, 0, 0))
            .map_or(local, |d| d.and_utc().timestamp_millis())
    };
    match unit {
        Unit::Second => floor(1000),
        Unit::Minute => floor(60_000),
        Unit::Hour => floor(HOUR),
        Unit::Day => floor(DAY),
        // The epoch was a Thursday: Mondays are 4 days on from a multiple of 7.
        Unit::Week => (local - 4 * DAY).div_euclid(7 * DAY) * 7 * DAY + 4 * DAY,
        Unit::Month => at(NaiveDate::from_ymd_opt(day.year(), day.month(), 1)),
        Unit::Quarter => at(NaiveDate::from_ymd_opt(
            day.year(),
            day.month() - (day.month() - 1) % 3,
            1,
        )),
        Unit::Year => at(NaiveDate::from_ymd_opt(day.year(), 1, 1)),
    }
}

/// `local` plus `n` units on the wall clock (months keep the day, clamped to the month's end).
pub fn add_local(local: i64, unit: Unit, n: i64) -> Option<i64> {
    let months = |m: i64| {
        let t = DateTime::from_timestamp_millis(local)?;
        let k = Months::new(u32::try_from(m.unsigned_abs()).ok()?);
        let moved = if m >= 0 {
            t.checked_add_months(k)
        } else {
            t.checked_sub_months(k)
        };
        moved.map(|t| t.timestamp_millis())
    };
    let fixed = |step: i64| local.checked_add(n.checked_mul(step)?);
    match unit {
        Unit::Second => fixed(1000),
        Unit::Minute => fixed(60_000),
        Unit::Hour => fixed(HOUR),
        Unit::Day => fixed(DAY),
        Unit::Week => fixed(7 * DAY),
        Unit::Month => months(n),
        Unit::Quarter => months(n.checked_mul(3)?),
        Unit::Year => months(n.checked_mul(12)?),
    }
}
