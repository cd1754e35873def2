//! Time zones as Elasticsearch reads a `time_zone` (Java's `ZoneId`): `UTC`, `Z`, offsets
//! (`+01:00`, `-0800`, `+5`) and tz database names (`Europe/Vienna`), the database bundled
//! (jiff's copy of IANA's), so that an answer does not depend on the machine. Times are epoch
//! milliseconds; a "local" time is the wall clock read as if it were UTC, as Elasticsearch's
//! roundings compute.

use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::Timestamp;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct Zone {
    tz: TimeZone,
}

/// The instants at which the wall clock reads a local time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Instants {
    One(i64),
    /// The clock went back: the earlier instant, then the later.
    Two(i64, i64),
    /// The clock skipped this time: the transition's instant (the first after the gap), and
    /// the instant Java resolves the time to (read with the offset before the gap).
    Gap {
        transition: i64,
        resolved: i64,
    },
}

impl Zone {
    pub fn utc() -> Zone {
        Zone { tz: TimeZone::UTC }
    }

    /// A request's `time_zone` (absent: UTC).
    pub fn of_param(v: Option<&Value>) -> Result<Zone, String> {
        match v {
            None | Some(Value::Null) => Ok(Zone::utc()),
            Some(Value::String(s)) => Zone::parse(s),
            Some(other) => Err(format!("`time_zone` is a string, got {other}")),
        }
    }

    pub fn parse(text: &str) -> Result<Zone, String> {
        let t = text.trim();
        if matches!(t, "Z" | "UTC" | "GMT" | "UT" | "Etc/UTC" | "Etc/GMT") {
            return Ok(Zone::utc());
        }
        // `UTC+01:00` and `GMT-5` are offsets too, as Java reads them.
        let bare = ["UTC", "GMT", "UT"]
            .iter()
            .find_map(|p| t.strip_prefix(p).filter(|r| r.starts_with(['+', '-'])))
            .unwrap_or(t);
        if bare.starts_with(['+', '-']) {
            let seconds = offset_seconds(bare).ok_or_else(|| {
                format!("time_zone `{text}`: an offset is ±hh, ±hh:mm or ±hhmm, at most ±18:00")
            })?;
            let offset = Offset::from_seconds(seconds).map_err(|e| e.to_string())?;
            return Ok(Zone {
                tz: TimeZone::fixed(offset),
            });
        }
        let tz = TimeZone::get(t).map_err(|_| format!("unknown time zone `{text}`"))?;
        Ok(Zone { tz })
    }

    pub fn is_utc(&self) -> bool {
        self.tz == TimeZone::UTC || self.tz.to_fixed_offset().is_ok_and(|o| o.seconds() == 0)
    }

    /// A fixed offset from UTC (UTC included): no daylight saving, no transitions.
    pub fn fixed_offset_ms(&self) -> Option<i64> {
        self.tz
            .to_fixed_offset()
            .ok()
            .map(|o| o.seconds() as i64 * 1000)
    }

    /// The zone's offset from UTC at `utc_ms`, in milliseconds.
    pub fn offset_ms(&self, utc_ms: i64) -> i64 {
        match Timestamp::from_millisecond(utc_ms) {
            Ok(ts) => self.tz.to_offset(ts).seconds() as i64 * 1000,
            Err(_) => 0,
        }
    }

    /// The wall clock at `utc_ms`, read as if it were UTC.
    pub fn local_ms(&self, utc_ms: i64) -> i64 {
        utc_ms.saturating_add(self.offset_ms(utc_ms))
    }

    /// The instants at which the wall clock reads `local_ms`.
    pub fn instants(&self, local_ms: i64) -> Instants {
        let Ok(ts) = Timestamp::from_millisecond(local_ms) else {
            return Instants::One(local_ms);
        };
        let civil = TimeZone::UTC.to_datetime(ts);
        let ms = |o: Offset| local_ms - o.seconds() as i64 * 1000;
        match self.tz.to_ambiguous_timestamp(civil).offset() {
            AmbiguousOffset::Unambiguous { offset } => Instants::One(ms(offset)),
            AmbiguousOffset::Fold { before, after } => {
                let (a, b) = (ms(before), ms(after));
                Instants::Two(a.min(b), a.max(b))
            }
            AmbiguousOffset::Gap { before, .. } => {
                // Read with the offset before the gap, the time is past the transition.
                let resolved = ms(before);
                Instants::Gap {
                    transition: self.previous_transition(resolved, true).unwrap_or(resolved),
                    resolved,
                }
            }
        }
    }

    /// The instant of a wall-clock time as Java's `ZonedDateTime.of` resolves it: the earlier
    /// of two, and past a gap by the gap's length.
    pub fn from_local(&self, local_ms: i64) -> i64 {
        match self.instants(local_ms) {
            Instants::One(t) | Instants::Two(t, _) | Instants::Gap { resolved: t, .. } => t,
        }
    }

    /// The last transition before `utc_ms` (at it too when `inclusive`).
    pub fn previous_transition(&self, utc_ms: i64, inclusive: bool) -> Option<i64> {
        let at = utc_ms.checked_add(i64::from(inclusive))?;
        let ts = Timestamp::from_millisecond(at).ok()?;
        self.tz
            .preceding(ts)
            .next()
            .map(|t| t.timestamp().as_millisecond())
    }

    /// The offset as a date shows it: `Z` for UTC, else `+01:00`.
    pub fn offset_text(&self, utc_ms: i64) -> String {
        let ms = self.offset_ms(utc_ms);
        if ms == 0 {
            return "Z".into();
        }
        let sign = if ms < 0 { '-' } else { '+' };
        let minutes = ms.abs() / 60_000;
        let seconds = ms.abs() / 1000 % 60;
        if seconds == 0 {
            format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
        } else {
            format!("{sign}{:02}:{:02}:{seconds:02}", minutes / 60, minutes % 60)
        }
    }

    /// `utc_ms` as `strict_date_optional_time` with milliseconds, in this zone.
    pub fn format(&self, utc_ms: i64) -> String {
        let local = chrono::DateTime::from_timestamp_millis(self.local_ms(utc_ms));
        local
            .map(|t| {
                format!(
                    "{}{}",
                    t.format("%Y-%m-%dT%H:%M:%S%.3f"),
                    self.offset_text(utc_ms)
                )
            })
            .unwrap_or_default()
    }
}

/// `+1`, `+01`, `+01:00`, `+0100`, `+01:00:00`, `+010000` in seconds, within ±18 hours.
fn offset_seconds(text: &str) -> Option<i32> {
    let (sign, digits) = match text.split_at(1) {
        ("+", rest) => (1, rest),
        ("-", rest) => (-1, rest),
        _ => return None,
    };
    let parts: Vec<&str> = if digits.contains(':') {
        digits.split(':').collect()
    } else {
        match digits.len() {
            1 | 2 => vec![digits],
            4 => vec![&digits[..2], &digits[2..]],
            6 => vec![&digits[..2], &digits[2..4], &digits[4..]],
            _ => return None,
        }
    };
    if parts.is_empty()
        || parts.len() > 3
        || parts
            .iter()
            .any(|p| p.is_empty() || p.len() > 2 || !p.bytes().all(|b| b.is_ascii_digit()))
    {
        return None;
    }
    let n = |i: usize| parts.get(i).map_or(Some(0), |p| p.parse::<i32>().ok());
    let (h, m, s) = (n(0)?, n(1)?, n(2)?);
    if m > 59 || s > 59 {
        return None;
    }
    let total = h * 3600 + m * 60 + s;
    (total <= 18 * 3600).then_some(sign * total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(text: &str) -> i64 {
        chrono::DateTime::parse_from_rfc3339(text)
            .unwrap()
            .timestamp_millis()
    }

    #[test]
    fn offsets_and_names_read_as_java_reads_them() {
        for (text, seconds) in [
            ("+01:00", 3600),
            ("-08:00", -8 * 3600),
            ("+0530", 5 * 3600 + 1800),
            ("+5", 5 * 3600),
            ("UTC+02:00", 7200),
            ("GMT-3", -3 * 3600),
        ] {
            let z = Zone::parse(text).unwrap();
            assert_eq!(z.offset_ms(0), seconds as i64 * 1000, "{text}");
        }
        assert!(Zone::parse("UTC").unwrap().is_utc());
        assert!(Zone::parse("+00:00").unwrap().is_utc());
        assert!(!Zone::parse("Europe/Vienna").unwrap().is_utc());
        for bad in ["+19:00", "+1:2:3:4", "Mars/Olympus", "+ab", ""] {
            assert!(Zone::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn daylight_saving_transitions_in_vienna() {
        let z = Zone::parse("Europe/Vienna").unwrap();
        assert_eq!(z.offset_ms(ms("2016-01-15T12:00:00Z")), 3_600_000);
        assert_eq!(z.offset_ms(ms("2016-07-15T12:00:00Z")), 7_200_000);
        // 2016-03-27 02:00 CET became 03:00 CEST (01:00Z): 02:30 does not exist.
        let local = ms("2016-03-27T02:30:00Z");
        assert_eq!(
            z.instants(local),
            Instants::Gap {
                transition: ms("2016-03-27T01:00:00Z"),
                resolved: ms("2016-03-27T01:30:00Z")
            }
        );
        assert_eq!(z.from_local(local), ms("2016-03-27T01:30:00Z"));
        // 2016-10-30 03:00 CEST became 02:00 CET (01:00Z): 02:30 happened twice.
        let local = ms("2016-10-30T02:30:00Z");
        assert_eq!(
            z.instants(local),
            Instants::Two(ms("2016-10-30T00:30:00Z"), ms("2016-10-30T01:30:00Z"))
        );
        assert_eq!(z.from_local(local), ms("2016-10-30T00:30:00Z"));
        assert_eq!(
            z.previous_transition(ms("2016-10-30T01:30:00Z"), false),
            Some(ms("2016-10-30T01:00:00Z"))
        );
        assert_eq!(
            z.previous_transition(ms("2016-10-30T01:00:00Z"), false),
            Some(ms("2016-03-27T01:00:00Z"))
        );
        assert_eq!(
            z.previous_transition(ms("2016-10-30T01:00:00Z"), true),
            Some(ms("2016-10-30T01:00:00Z"))
        );
        assert_eq!(
            z.format(ms("2016-07-01T10:00:00Z")),
            "2016-07-01T12:00:00.000+02:00"
        );
        assert_eq!(Zone::utc().format(0), "1970-01-01T00:00:00.000Z");
    }
}
