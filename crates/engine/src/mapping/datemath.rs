//! Elasticsearch's date math in range queries and date_range aggregations: an anchor (`now`,
//! or a date followed by `||`), then `+N<unit>`/`-N<unit>` steps and `/<unit>` roundings, in
//! UTC or on a `time_zone`'s clock. Units: `y`, `M`, `w`, `d`, `h`/`H`, `m`, `s`. A rounding goes to the unit's start, or
//! to its last millisecond where Elasticsearch rounds up (`gt` and `lte` bounds).

use crate::mapping::calendar::{add_local, truncate, Unit};
use crate::mapping::dates::DateFormats;
use crate::zone::Zone;
use chrono::{DateTime as Chrono, Utc};
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

/// The instant a date-math expression names, `now` being `now`, in UTC.
pub fn eval(
    text: &str,
    formats: &DateFormats,
    now: Chrono<Utc>,
    round: Round,
) -> Result<DateTime, String> {
    eval_in(text, formats, now, round, &Zone::utc())
}

/// The instant a date-math expression names on `zone`'s clock, as Elasticsearch reads it with
/// a `time_zone`: a date without an offset of its own is a wall-clock time there (epoch
/// numbers are instants), `+1d`, `+1M`, `/d` and `/M` count the zone's days and months, and
/// `+1h`, `+1m`, `+1s` are elapsed time.
/// What Elasticsearch adds to a `gt` or `lte` date that leaves out its time's last
/// components: it fills them with their largest values (`2011-01-01` is
/// `2011-01-01T23:59:59.999`; the month and the day stay the first). Only for dates written
/// as strict_date_optional_time writes them; 0 for anything else.
fn missing_time_up(text: &str) -> i64 {
    let (date, time) = text.split_once('T').unwrap_or((text, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let date_ok = date.len() >= 4 && date.split('-').all(digits) && date.split('-').count() <= 3;
    if !date_ok {
        return 0;
    }
    let time = time.trim_end_matches('Z');
    match time.split(':').collect::<Vec<_>>()[..] {
        [""] if text.contains('T') => 0,
        [""] => 86_399_999,
        [h] if digits(h) => 3_599_999,
        [_, m] if digits(m) => 59_999,
        [_, _, s] if digits(s) => 999,
        _ => 0,
    }
}

pub fn eval_in(
    text: &str,
    formats: &DateFormats,
    now: Chrono<Utc>,
    round: Round,
    zone: &Zone,
) -> Result<DateTime, String> {
    let text = text.trim();
    let read = |date: &str| -> Result<i64, String> {
        let ms = formats
            .read(&Value::String(date.to_string()))?
            .into_timestamp_millis();
        let instant = date.parse::<f64>().is_ok() || names_its_offset(date);
        Ok(if instant { ms } else { zone.from_local(ms) })
    };
    let (mut at, mut ops) = if let Some(rest) = text.strip_prefix("now") {
        (now.timestamp_millis(), rest)
    } else if let Some((date, rest)) = text.split_once("||") {
        (read(date)?, rest)
    } else {
        let at = read(text)?;
        return Ok(DateTime::from_timestamp_millis(match round {
            Round::Up => at + missing_time_up(text),
            Round::Down => at,
        }));
    };
    let bad = |why: &str| format!("date math `{text}`: {why}");
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
        let u = unit_of(unit)
            .ok_or_else(|| bad("expected +, - or / followed by a unit (y, M, w, d, h, m, s)"))?;
        at = match op {
            '+' => step(zone, at, u, n).ok_or_else(|| bad("out of range"))?,
            '-' => step(zone, at, u, -n).ok_or_else(|| bad("out of range"))?,
            '/' if digits == 0 => {
                let start = truncate(zone.local_ms(at), u);
                match round {
                    Round::Down => zone.from_local(start),
                    Round::Up => {
                        let next = add_local(start, u, 1).ok_or_else(|| bad("out of range"))?;
                        zone.from_local(next) - 1
                    }
                }
            }
            _ => {
                return Err(bad(
                    "expected +, - or / followed by a unit (y, M, w, d, h, m, s)",
                ))
            }
        };
    }
    Ok(DateTime::from_timestamp_millis(at))
}

fn unit_of(c: char) -> Option<Unit> {
    Some(match c {
        'y' => Unit::Year,
        'M' => Unit::Month,
        'w' => Unit::Week,
        'd' => Unit::Day,
        'h' | 'H' => Unit::Hour,
        'm' => Unit::Minute,
        's' => Unit::Second,
        _ => return None,
    })
}

/// `n` units on from `at`: days and longer on the wall clock, hours and shorter elapsed.
fn step(zone: &Zone, at: i64, unit: Unit, n: i64) -> Option<i64> {
    match unit {
        Unit::Hour | Unit::Minute | Unit::Second => add_local(at, unit, n),
        _ => Some(zone.from_local(add_local(zone.local_ms(at), unit, n)?)),
    }
}

/// Whether a date's text gives its own offset (`Z`, `+01:00`, `-0500` after its time).
pub(crate) fn names_its_offset(date: &str) -> bool {
    let Some(t) = date.find(['T', ' ']) else {
        return false;
    };
    let time = &date[t + 1..];
    time.ends_with(['Z', 'z'])
        || time.rfind(['+', '-']).is_some_and(|i| {
            i > 0
                && time[i + 1..]
                    .chars()
                    .all(|c| c.is_ascii_digit() || c == ':')
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

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
        // A date with no time: `lte` and `gt` fill it with the day's last millisecond.
        assert_eq!(hits(json!({"lte": "2024-03-14"})), 24);
        assert_eq!(hits(json!({"gt": "2024-03-14"})), 24);
        assert_eq!(hits(json!({"lt": "2024-03-15"})), 24);
        assert_eq!(hits(json!({"lte": "2024-03-15T05"})), 30);
        assert_eq!(hits(json!({"gte": "2024"})), 48);
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
        // On a zone's clock: the 15th at +05:00 starts at 19:00Z on the 14th (5 documents of
        // the 14th, from 19:30, and the 15th's 24); an offset of its own or an epoch number
        // is an instant.
        let zoned = |bound: serde_json::Value| json!({"gte": bound, "time_zone": "+05:00"});
        assert_eq!(hits(zoned(json!("2024-03-15"))), 29);
        assert_eq!(hits(zoned(json!("2024-03-15T00:00:00Z"))), 24);
        assert_eq!(hits(zoned(json!(1_710_460_800_000i64))), 24);
        assert_eq!(
            hits(json!({"lte": "2024-03-14||/d", "time_zone": "-02:00"})),
            26
        );
        let e = idx
            .compile(
                &json!({"query": {"range": {"at": {"gte": "now-1d", "time_zone": "Moon/Base"}}}}),
            )
            .err()
            .unwrap();
        assert!(
            e.message.contains("unknown time zone `Moon/Base`"),
            "{}",
            e.message
        );
        // query_string ranges read dates on its zone's clock too.
        let plan = idx
            .compile(&json!({"size": 0, "query": {"query_string": {"query": "at:[2024-03-15 TO *]", "time_zone": "+05:00"}}}))
            .unwrap();
        assert_eq!(idx.search_hits(&plan, &idx.searcher()).unwrap().0, 29);
    }

    #[test]
    fn steps_and_roundings_on_a_zones_clock() {
        let zone = Zone::parse("Europe/Vienna").unwrap();
        let now = Utc.with_ymd_and_hms(2016, 3, 27, 10, 0, 0).unwrap();
        let at = |text: &str, round| {
            let dt = eval_in(text, &DateFormats::default(), now, round, &zone).unwrap();
            zone.format(dt.into_timestamp_millis())
        };
        // The 27th has 23 hours in Vienna: its last millisecond is 23:59:59.999 CEST.
        assert_eq!(at("now/d", Round::Down), "2016-03-27T00:00:00.000+01:00");
        assert_eq!(at("now/d", Round::Up), "2016-03-27T23:59:59.999+02:00");
        // A day back is the same wall-clock time; 24 hours back is an hour earlier on it.
        assert_eq!(at("now", Round::Down), "2016-03-27T12:00:00.000+02:00");
        assert_eq!(at("now-1d", Round::Down), "2016-03-26T12:00:00.000+01:00");
        assert_eq!(at("now-24h", Round::Down), "2016-03-26T11:00:00.000+01:00");
        assert_eq!(
            at("2016-03-27||+1M/M", Round::Down),
            "2016-04-01T00:00:00.000+02:00"
        );
        assert_eq!(
            at("2016-03-27T02:30:00", Round::Down),
            "2016-03-27T03:30:00.000+02:00"
        );
    }
}
