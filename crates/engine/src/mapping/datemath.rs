//! Elasticsearch's date math in range queries and date_range aggregations: an anchor (`now`,
//! or a date followed by `||`), then `+N<unit>`/`-N<unit>` steps and `/<unit>` roundings, in
//! UTC. Units: `y`, `M`, `w`, `d`, `h`/`H`, `m`, `s`. A rounding goes to the unit's start, or
//! to its last millisecond where Elasticsearch rounds up (`gt` and `lte` bounds).

use crate::mapping::dates::DateFormats;
use chrono::{DateTime as Chrono, Datelike, Duration, Months, NaiveDate, TimeZone, Utc};
use serde_json::Value;
use tantivy::DateTime;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Round {
    Down,
    Up,
}

/// Whether a bound's text is date math rather than a date.
pub fn is_math(v: &Value) -> bool {
    v.as_str()
        .is_some_and(|s| s.trim_start().starts_with("now") || s.contains("||"))
}

/// The instant a date-math expression names, `now` being `now`.
pub fn eval(
    text: &str,
    formats: &DateFormats,
    now: Chrono<Utc>,
    round: Round,
) -> Result<DateTime, String> {
    let text = text.trim();
    let (anchor, mut ops) = if let Some(rest) = text.strip_prefix("now") {
        (now, rest)
    } else if let Some((date, rest)) = text.split_once("||") {
        let dt = formats.read(&Value::String(date.to_string()))?;
        let at = Utc
            .timestamp_micros(dt.into_timestamp_micros())
            .single()
            .ok_or_else(|| format!("`{date}` is out of range"))?;
        (at, rest)
    } else {
        return formats.read(&Value::String(text.to_string()));
    };
    let bad = |why: &str| format!("date math `{text}`: {why}");
    let mut at = anchor;
    while let Some(op) = ops.chars().next() {
        ops = &ops[1..];
        let digits = ops.chars().take_while(char::is_ascii_digit).count();
        let n: i64 = if digits == 0 {
            1
        } else {
            ops[..digits]
                .parse()
                .map_err(|_| bad("the number is too large"))?
        };
        ops = &ops[digits..];
        let unit = ops.chars().next().ok_or_else(|| bad("a unit is missing"))?;
        ops = &ops[unit.len_utf8()..];
        at = match op {
            '+' => step(at, n, unit).ok_or_else(|| bad("out of range"))?,
            '-' => step(at, -n, unit).ok_or_else(|| bad("out of range"))?,
            '/' if digits == 0 => round_to(at, unit, round).ok_or_else(|| bad("unknown unit"))?,
            _ => {
                return Err(bad(
                    "expected +, - or / followed by a unit (y, M, w, d, h, m, s)",
                ))
            }
        };
    }
    Ok(DateTime::from_timestamp_micros(at.timestamp_micros()))
}

fn step(at: Chrono<Utc>, n: i64, unit: char) -> Option<Chrono<Utc>> {
    let months = |m: i64| {
        let k = Months::new(u32::try_from(m.unsigned_abs()).ok()?);
        if m >= 0 {
            at.checked_add_months(k)
        } else {
            at.checked_sub_months(k)
        }
    };
    match unit {
        'y' => months(n.checked_mul(12)?),
        'M' => months(n),
        'w' => at.checked_add_signed(Duration::try_weeks(n)?),
        'd' => at.checked_add_signed(Duration::try_days(n)?),
        'h' | 'H' => at.checked_add_signed(Duration::try_hours(n)?),
        'm' => at.checked_add_signed(Duration::try_minutes(n)?),
        's' => at.checked_add_signed(Duration::try_seconds(n)?),
        _ => None,
    }
}

/// The start of `at`'s unit, or (rounding up) the last millisecond of it.
fn round_to(at: Chrono<Utc>, unit: char, round: Round) -> Option<Chrono<Utc>> {
    let day = at.date_naive();
    let midnight = |d: NaiveDate| Some(Utc.from_utc_datetime(&d.and_hms_opt(0, 0, 0)?));
    let start: Chrono<Utc> = match unit {
        'y' => midnight(NaiveDate::from_ymd_opt(day.year(), 1, 1)?)?,
        'M' => midnight(NaiveDate::from_ymd_opt(day.year(), day.month(), 1)?)?,
        'w' => midnight(day - Duration::days(day.weekday().num_days_from_monday() as i64))?,
        'd' => midnight(day)?,
        'h' | 'H' => at - Duration::seconds((at.timestamp() % 3600 + 3600) % 3600) - sub_second(at),
        'm' => at - Duration::seconds((at.timestamp() % 60 + 60) % 60) - sub_second(at),
        's' => at - sub_second(at),
        _ => return None,
    };
    match round {
        Round::Down => Some(start),
        Round::Up => Some(step(start, 1, unit)? - Duration::milliseconds(1)),
    }
}

fn sub_second(at: Chrono<Utc>) -> Duration {
    Duration::nanoseconds(at.timestamp_subsec_nanos() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, round: Round) -> String {
        let now = Utc.with_ymd_and_hms(2024, 3, 14, 15, 9, 26).unwrap();
        let dt = eval(text, &DateFormats::default(), now, round).unwrap();
        Utc.timestamp_micros(dt.into_timestamp_micros())
            .unwrap()
            .format("%Y-%m-%dT%H:%M:%S%.3f")
            .to_string()
    }

    #[test]
    fn steps_and_roundings_as_elasticsearch_documents_them() {
        assert_eq!(at("now", Round::Down), "2024-03-14T15:09:26.000");
        assert_eq!(at("now-1d", Round::Down), "2024-03-13T15:09:26.000");
        assert_eq!(at("now/d", Round::Down), "2024-03-14T00:00:00.000");
        assert_eq!(at("now/d", Round::Up), "2024-03-14T23:59:59.999");
        assert_eq!(at("now-1M/M", Round::Down), "2024-02-01T00:00:00.000");
        assert_eq!(at("now-1M/M", Round::Up), "2024-02-29T23:59:59.999");
        // 2024-03-14 is a Thursday; weeks start on Monday.
        assert_eq!(at("now/w", Round::Down), "2024-03-11T00:00:00.000");
        assert_eq!(at("now+1y-2h/h", Round::Down), "2025-03-14T13:00:00.000");
        assert_eq!(at("2014-11-18||/M", Round::Up), "2014-11-30T23:59:59.999");
        assert_eq!(
            at("2014-11-18||+1M", Round::Down),
            "2014-12-18T00:00:00.000"
        );
        let now = Utc::now();
        for bad in ["now-1q", "now+", "now/3d", "nowx"] {
            assert!(
                eval(bad, &DateFormats::default(), now, Round::Down).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn range_queries_round_as_elasticsearch_does() {
        use crate::index::EmbeddedIndex;
        use serde_json::json;
        let body = json!({"mappings": {"properties": {"at": {"type": "date"}}}});
        let idx = EmbeddedIndex::create("d", &body).unwrap();
        // One document an hour through 2024-03-14 and 15.
        for h in 0..48 {
            idx.add_for_test(
                &json!({"at": format!("2024-03-{}T{:02}:30:00Z", 14 + h / 24, h % 24)}).to_string(),
            );
        }
        idx.refresh().unwrap();
        let hits = |range: serde_json::Value| {
            let plan = idx
                .compile(&json!({"size": 0, "query": {"range": {"at": range}}}))
                .unwrap();
            idx.search_hits(&plan, &idx.searcher()).unwrap().0
        };
        // `lte` rounds up to the day's end, `lt` down to its start; `gt` up, `gte` down.
        assert_eq!(hits(json!({"lte": "2024-03-14T10:00:00Z||/d"})), 24);
        assert_eq!(hits(json!({"lt": "2024-03-14T10:00:00Z||/d"})), 0);
        assert_eq!(hits(json!({"gt": "2024-03-14T10:00:00Z||/d"})), 24);
        assert_eq!(hits(json!({"gte": "2024-03-14T10:00:00Z||/d"})), 48);
        assert_eq!(hits(json!({"gte": "2024-03-14||+36h"})), 12);
        // A bound's own format, and `now` (every document is in the past).
        assert_eq!(
            hits(json!({"gte": "15/03/2024", "format": "dd/MM/yyyy"})),
            24
        );
        assert_eq!(hits(json!({"lt": "now"})), 48);
        let e = idx
            .compile(&json!({"query": {"range": {"at": {"gte": "now-1d", "time_zone": "+01:00"}}}}))
            .err()
            .unwrap();
        assert!(e.message.contains("time_zone"), "{}", e.message);
    }
}
