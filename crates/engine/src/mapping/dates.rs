//! A date field's `format`, as Elasticsearch reads it: alternatives joined by `||`, each a
//! built-in name (`epoch_millis`, `epoch_second`, `strict_date_optional_time`, ...) or a
//! Java-style pattern (`yyyy-MM-dd HH:mm:ss`). A value is read by the first alternative that
//! takes it. A format the engine cannot read is refused at create-index, never ignored.

use serde_json::Value;
use tantivy::DateTime;

/// Elasticsearch's default for a date field.
const DEFAULT: &str = "strict_date_optional_time||epoch_millis";

#[derive(Debug, Clone, PartialEq)]
pub struct DateFormats(Vec<Format>);

#[derive(Debug, Clone, PartialEq)]
enum Format {
    EpochMillis,
    EpochSecond,
    /// RFC 3339 and its shorter forms: a date, optionally a time, optionally a zone; printed
    /// as the built-in format it was named by.
    OptionalTime(Printed),
    /// A chrono pattern translated from a Java one; `zoned` when it reads an offset, `timed`
    /// when it reads a time of day; `print` writes it (fractions at the pattern's width).
    Pattern {
        java: String,
        chrono: String,
        print: String,
        zoned: bool,
        timed: bool,
        /// The pattern ends with a zone's name or id (`z`, `zz`, `zzz`, `VV`): the text's
        /// last word names the zone its time is on.
        zone_name: bool,
    },
}

/// How a built-in ISO format prints an instant (always in UTC).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Printed {
    /// `2026-01-02T03:04:05.678Z`.
    Millis,
    /// As `Millis`, with six or nine fraction digits where the instant has them.
    Nanos,
    /// `2026-01-02T03:04:05Z`.
    Seconds,
    /// `2026-01-02`.
    Date,
    /// `2026-01-02T03:04`.
    Minute,
    /// `2026-01-02T03:04:05`.
    Second,
    /// `2026-01-02T03:04:05.678`.
    SecondMillis,
}

impl Default for DateFormats {
    fn default() -> Self {
        DateFormats::parse(DEFAULT).expect("the default format parses")
    }
}

impl DateFormats {
    pub fn parse(text: &str) -> Result<DateFormats, String> {
        text.split("||")
            .map(|alt| {
                let alt = alt.trim();
                Ok(match alt {
                    "epoch_millis" => Format::EpochMillis,
                    "epoch_second" => Format::EpochSecond,
                    "strict_date_optional_time"
                    | "date_optional_time"
                    | "strict_date_time"
                    | "date_time" => Format::OptionalTime(Printed::Millis),
                    "strict_date_optional_time_nanos" => Format::OptionalTime(Printed::Nanos),
                    "strict_date_time_no_millis" | "date_time_no_millis" => {
                        Format::OptionalTime(Printed::Seconds)
                    }
                    "strict_date" | "date" => Format::OptionalTime(Printed::Date),
                    "strict_date_hour_minute_second" | "date_hour_minute_second" => {
                        Format::OptionalTime(Printed::Second)
                    }
                    "strict_date_hour_minute_second_millis" | "date_hour_minute_second_millis" => {
                        Format::OptionalTime(Printed::SecondMillis)
                    }
                    "strict_date_hour_minute" | "date_hour_minute" => {
                        Format::OptionalTime(Printed::Minute)
                    }
                    "basic_date" => pattern("yyyyMMdd")?,
                    "basic_date_time_no_millis" => pattern("yyyyMMdd'T'HHmmssZ")?,
                    "basic_date_time" => pattern("yyyyMMdd'T'HHmmss.SSSZ")?,
                    "year_month_day" | "strict_year_month_day" => pattern("yyyy-MM-dd")?,
                    named if named.chars().all(|c| c.is_ascii_lowercase() || c == '_') => {
                        return Err(format!(
                            "the built-in date format `{named}` is not read by the embedded engine"
                        ))
                    }
                    java => pattern(java)?,
                })
            })
            .collect::<Result<Vec<_>, String>>()
            .map(DateFormats)
    }

    /// The instant a document's (or a query's) value names.
    pub fn read(&self, v: &Value) -> Result<DateTime, String> {
        let text = match v {
            Value::Number(n) => n.to_string(),
            Value::String(s) => s.trim().to_string(),
            other => return Err(format!("expected a date, got {other}")),
        };
        for f in &self.0 {
            if let Some(dt) = f.read(&text, v.is_number()) {
                return Ok(dt);
            }
        }
        Err(format!(
            "`{text}` does not fit the date format `{}`",
            self.0
                .iter()
                .map(Format::name)
                .collect::<Vec<_>>()
                .join("||")
        ))
    }
}

impl DateFormats {
    /// An instant (nanoseconds since the epoch) as the first format writes it, as
    /// Elasticsearch shows a formatted sort value or `key_as_string`.
    pub fn print(&self, nanos: i64) -> String {
        self.print_in(nanos, &crate::zone::Zone::utc())
    }

    /// As [`DateFormats::print`], on `zone`'s clock with its offset (`Z` for UTC), as
    /// Elasticsearch prints with a `time_zone`.
    pub fn print_in(&self, nanos: i64, zone: &crate::zone::Zone) -> String {
        let offset_ms = zone.offset_ms(nanos.div_euclid(1_000_000));
        let zone_text = zone.offset_text(nanos.div_euclid(1_000_000));
        let at = chrono::DateTime::from_timestamp_nanos(
            nanos.saturating_add(offset_ms.saturating_mul(1_000_000)),
        );
        let zoned = chrono::FixedOffset::east_opt((offset_ms / 1000) as i32)
            .map(|o| chrono::DateTime::from_timestamp_nanos(nanos).with_timezone(&o));
        let fraction = |at: &chrono::DateTime<chrono::Utc>| match nanos.rem_euclid(1_000_000_000) {
            n if n % 1_000_000 == 0 => at.format("%.3f").to_string(),
            n if n % 1_000 == 0 => at.format("%.6f").to_string(),
            _ => at.format("%.9f").to_string(),
        };
        match self.0.first() {
            Some(Format::EpochMillis) => nanos.div_euclid(1_000_000).to_string(),
            Some(Format::EpochSecond) => nanos.div_euclid(1_000_000_000).to_string(),
            Some(Format::Pattern { print, .. }) => match zoned {
                Some(z) => z.format(print).to_string(),
                None => at.format(print).to_string(),
            },
            Some(Format::OptionalTime(printed)) => match printed {
                Printed::Millis => format!("{}{zone_text}", at.format("%Y-%m-%dT%H:%M:%S%.3f")),
                Printed::Nanos => format!(
                    "{}{}{zone_text}",
                    at.format("%Y-%m-%dT%H:%M:%S"),
                    fraction(&at)
                ),
                Printed::Seconds => format!("{}{zone_text}", at.format("%Y-%m-%dT%H:%M:%S")),
                Printed::Date => at.format("%Y-%m-%d").to_string(),
                Printed::Minute => at.format("%Y-%m-%dT%H:%M").to_string(),
                Printed::Second => at.format("%Y-%m-%dT%H:%M:%S").to_string(),
                Printed::SecondMillis => at.format("%Y-%m-%dT%H:%M:%S%.3f").to_string(),
            },
            None => nanos.div_euclid(1_000_000).to_string(),
        }
    }
}

impl Format {
    fn name(&self) -> String {
        match self {
            Format::EpochMillis => "epoch_millis".into(),
            Format::EpochSecond => "epoch_second".into(),
            Format::OptionalTime(_) => "strict_date_optional_time".into(),
            Format::Pattern { java, .. } => java.clone(),
        }
    }

    fn read(&self, text: &str, number: bool) -> Option<DateTime> {
        match self {
            Format::EpochMillis => epoch(text, 1_000.0),
            Format::EpochSecond => epoch(text, 1.0),
            Format::OptionalTime(_) if !number => optional_time(text),
            Format::OptionalTime(_) => None,
            Format::Pattern {
                chrono,
                zone_name: true,
                ..
            } => {
                let split = text
                    .char_indices()
                    .rev()
                    .take_while(|(_, c)| c.is_ascii_alphanumeric() || "/_+-:".contains(*c))
                    .last()
                    .map(|(i, _)| i)?;
                let (local, name) = text.split_at(split);
                let zone = zone_by_name(name)?;
                let at = chrono::NaiveDateTime::parse_from_str(local, chrono).ok()?;
                let millis = zone.from_local(at.and_utc().timestamp_millis());
                Some(DateTime::from_timestamp_millis(millis))
            }
            Format::Pattern {
                chrono,
                zoned,
                timed,
                ..
            } => {
                let at = if *zoned {
                    chrono::DateTime::parse_from_str(text, chrono)
                        .ok()?
                        .to_utc()
                } else if *timed {
                    chrono::NaiveDateTime::parse_from_str(text, chrono)
                        .ok()?
                        .and_utc()
                } else {
                    chrono::NaiveDate::parse_from_str(text, chrono)
                        .ok()?
                        .and_hms_opt(0, 0, 0)?
                        .and_utc()
                };
                instant(at)
            }
        }
    }
}

/// A zone as Java's `z` and `VV` read it: an id (`Europe/Vienna`), `UTC`/`GMT`, or a short
/// name, which Java takes as its region's zone (`PST` is America/Los_Angeles, whose rules
/// then give the offset at that time, daylight saving or not).
fn zone_by_name(name: &str) -> Option<crate::zone::Zone> {
    const SHORT: [(&str, &str); 34] = [
        ("EST", "America/New_York"),
        ("EDT", "America/New_York"),
        ("CST", "America/Chicago"),
        ("CDT", "America/Chicago"),
        ("MST", "America/Denver"),
        ("MDT", "America/Denver"),
        ("PST", "America/Los_Angeles"),
        ("PDT", "America/Los_Angeles"),
        ("AKST", "America/Anchorage"),
        ("AKDT", "America/Anchorage"),
        ("HST", "Pacific/Honolulu"),
        ("CET", "CET"),
        ("CEST", "CET"),
        ("MET", "MET"),
        ("MEST", "MET"),
        ("EET", "EET"),
        ("EEST", "EET"),
        ("WET", "WET"),
        ("WEST", "WET"),
        ("BST", "Europe/London"),
        ("IST", "Asia/Kolkata"),
        ("MSK", "Europe/Moscow"),
        ("JST", "Asia/Tokyo"),
        ("KST", "Asia/Seoul"),
        ("HKT", "Asia/Hong_Kong"),
        ("SGT", "Asia/Singapore"),
        ("AEST", "Australia/Sydney"),
        ("AEDT", "Australia/Sydney"),
        ("ACST", "Australia/Adelaide"),
        ("AWST", "Australia/Perth"),
        ("NZST", "Pacific/Auckland"),
        ("NZDT", "Pacific/Auckland"),
        ("BRT", "America/Sao_Paulo"),
        ("ART", "America/Argentina/Buenos_Aires"),
    ];
    let id = SHORT
        .iter()
        .find(|(short, _)| *short == name)
        .map_or(name, |(_, id)| *id);
    crate::zone::Zone::parse(id).ok()
}

/// Epoch seconds or milliseconds, with a fraction as Elasticsearch allows.
fn epoch(text: &str, per_second: f64) -> Option<DateTime> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(match per_second as i64 {
            1 => DateTime::from_timestamp_secs(n),
            _ => DateTime::from_timestamp_millis(n),
        });
    }
    let f: f64 = text.parse().ok()?;
    f.is_finite()
        .then(|| DateTime::from_timestamp_micros((f * 1e6 / per_second) as i64))
}

/// A chrono instant at nanosecond precision (what a `date_nanos` column keeps; a `date`
/// column keeps its milliseconds).
fn instant(at: chrono::DateTime<chrono::Utc>) -> Option<DateTime> {
    at.timestamp_nanos_opt().map(DateTime::from_timestamp_nanos)
}

/// `2026-01-02`, `2026-01-02T03:04`, `2026-01-02T03:04:05.678`, with or without a zone (UTC).
fn optional_time(text: &str) -> Option<DateTime> {
    if let Ok(dt) = chrono::DateTime::parse_from_rfc3339(text) {
        return instant(dt.to_utc());
    }
    for zoned in [
        "%Y-%m-%dT%H:%M:%S%.f%:z",
        "%Y-%m-%dT%H:%M:%S%.f%z",
        "%Y-%m-%dT%H:%M%:z",
    ] {
        if let Ok(dt) = chrono::DateTime::parse_from_str(text, zoned) {
            return instant(dt.to_utc());
        }
    }
    let local = text.strip_suffix('Z').unwrap_or(text);
    for naive in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%dT%H:%M",
    ] {
        if let Ok(dt) = chrono::NaiveDateTime::parse_from_str(local, naive) {
            return instant(dt.and_utc());
        }
    }
    if let Some(hour) = local.split_once('T').and_then(|(d, h)| {
        let h: u32 = h.parse().ok().filter(|_| h.len() == 2)?;
        chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
            .ok()?
            .and_hms_opt(h, 0, 0)
    }) {
        return instant(hour.and_utc());
    }
    // `yyyy` and `yyyy-MM`, which strict_date_optional_time takes too (the first of the
    // year or month).
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let full = match local.split_once('-') {
        None if digits(local, 4) => format!("{local}-01-01"),
        Some((y, m)) if digits(y, 4) && digits(m, 2) => format!("{local}-01"),
        _ => local.to_string(),
    };
    let date = chrono::NaiveDate::parse_from_str(&full, "%Y-%m-%d").ok()?;
    Some(DateTime::from_timestamp_micros(
        date.and_hms_opt(0, 0, 0)?.and_utc().timestamp_micros(),
    ))
}

/// A Java `DateTimeFormatter` pattern as a chrono one; letters it does not know are refused.
fn pattern(java: &str) -> Result<Format, String> {
    let mut chrono = String::new();
    let mut print = String::new();
    let (mut zoned, mut timed) = (false, false);
    let chars: Vec<char> = java.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c == '\'' {
            // A quoted literal; '' is a quote.
            let mut j = i + 1;
            while j < chars.len() && chars[j] != '\'' {
                push_literal(&mut chrono, chars[j]);
                push_literal(&mut print, chars[j]);
                j += 1;
            }
            if j == i + 1 {
                chrono.push('\'');
                print.push('\'');
            }
            i = j + 1;
            continue;
        }
        if !c.is_ascii_alphabetic() {
            push_literal(&mut chrono, c);
            push_literal(&mut print, c);
            i += 1;
            continue;
        }
        let run = chars[i..].iter().take_while(|x| **x == c).count();
        if matches!((c, run), ('z', 1..=3) | ('V', 2)) {
            return zone_named(java, chrono, print, i + run == chars.len());
        }
        let spec = match (c, run) {
            ('y' | 'u', 4) | ('y' | 'u', 1) => "%Y",
            ('y' | 'u', 2) => "%y",
            ('M', 1 | 2) => "%m",
            ('M', 3) => "%b",
            ('M', 4) => "%B",
            ('d', 1 | 2) => "%d",
            ('D', 1..=3) => "%j",
            ('E', 1..=3) => "%a",
            ('E', 4) => "%A",
            ('H', 1 | 2) => "%H",
            ('h', 1 | 2) => "%I",
            ('a', 1) => "%p",
            ('m', 1 | 2) => "%M",
            ('s', 1 | 2) => "%S",
            ('S', 1..=9) => "%.f",
            ('Z', 1..=3) | ('x', 1..=3) => "%z",
            ('X', 1..=3) | ('x', 4..=5) | ('X', 4..=5) | ('Z', 5) => "%:z",
            _ => {
                return Err(format!(
                    "date format `{java}`: `{}` is not read by the embedded engine",
                    c.to_string().repeat(run)
                ))
            }
        };
        if spec == "%.f" {
            // chrono's `%.f` takes the dot with it; printed, the fraction has the pattern's
            // width (`SSS` three digits, `SSSSSS` six).
            if chrono.ends_with('.') {
                chrono.pop();
                print.pop();
            }
            print.push_str(match run {
                1..=3 => "%.3f",
                4..=6 => "%.6f",
                _ => "%.9f",
            });
        } else {
            print.push_str(spec);
        }
        timed |= matches!(c, 'H' | 'h' | 'm' | 's' | 'S');
        zoned |= matches!(c, 'Z' | 'X' | 'x');
        chrono.push_str(spec);
        i += run;
    }
    Ok(Format::Pattern {
        java: java.to_string(),
        chrono,
        print,
        zoned,
        timed: timed || zoned,
        zone_name: false,
    })
}

/// A pattern ending with a zone's name (`z`, `zz`, `zzz`, `VV`).
fn zone_named(
    java: &str,
    chrono: String,
    mut print: String,
    at_end: bool,
) -> Result<Format, String> {
    if !at_end {
        return Err(format!(
            "date format `{java}`: a zone name (`z`, `VV`) is read only at the pattern's end"
        ));
    }
    // Printed as Java prints UTC's (the engine prints in UTC).
    print.push_str("UTC");
    Ok(Format::Pattern {
        java: java.to_string(),
        chrono,
        print,
        zoned: false,
        timed: true,
        zone_name: true,
    })
}

fn push_literal(out: &mut String, c: char) {
    if c == '%' {
        out.push_str("%%");
    } else {
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn millis(formats: &str, v: Value) -> i64 {
        let dt = DateFormats::parse(formats).unwrap().read(&v).unwrap();
        dt.into_timestamp_micros() / 1000
    }

    #[test]
    fn reads_values_as_elasticsearch_does() {
        let day = 1_767_312_000_000i64; // 2026-01-02T00:00:00Z
                                        // The default: an ISO date-time (or date), else epoch milliseconds.
        assert_eq!(millis(DEFAULT, json!("2026-01-02")), day);
        assert_eq!(millis(DEFAULT, json!("2026-01-02T01:00:00+01:00")), day);
        assert_eq!(millis(DEFAULT, json!("2026-01-02T00:00:00.250")), day + 250);
        assert_eq!(millis(DEFAULT, json!(day)), day);
        assert_eq!(millis(DEFAULT, json!(day.to_string())), day);
        // epoch_second is seconds, not milliseconds.
        assert_eq!(millis("epoch_second", json!(day / 1000)), day);
        assert_eq!(millis("epoch_second", json!("1767312000.5")), day + 500);
        // Java patterns, and alternatives tried in order.
        let f = "yyyy-MM-dd HH:mm:ss||yyyy/MM/dd||epoch_millis";
        assert_eq!(millis(f, json!("2026-01-02 03:04:05")), day + 11_045_000);
        assert_eq!(millis(f, json!("2026/01/02")), day);
        assert_eq!(millis(f, json!(day)), day);
        assert_eq!(
            millis(
                "dd/MMM/yyyy:HH:mm:ss Z",
                json!("02/Jan/2026:01:00:00 +0100")
            ),
            day
        );
        assert_eq!(
            millis("yyyyMMdd'T'HHmmss.SSSZ", json!("20260102T000000.007+0000")),
            day + 7
        );
        assert_eq!(millis("basic_date", json!("20260102")), day);
        // A zone's short name or id at the end, as Java's `zz` and `VV` read them.
        let pg = "yyyy-MM-dd HH:mm:ss.SSS zz";
        assert_eq!(millis(pg, json!("2026-01-02 00:00:00.000 UTC")), day);
        assert_eq!(millis(pg, json!("2026-01-02 01:00:00.000 CET")), day);
        // PST in July is Los Angeles on daylight saving time, as Java resolves it.
        assert_eq!(
            millis(pg, json!("2026-07-01 17:00:00.000 PST")),
            1_782_950_400_000
        );
        assert_eq!(
            millis("yyyy-MM-dd HH:mm VV", json!("2026-01-02 09:00 Asia/Tokyo")),
            day
        );
    }

    #[test]
    fn what_does_not_fit_is_an_error_naming_the_format() {
        let f = DateFormats::parse("yyyy-MM-dd HH:mm:ss").unwrap();
        let e = f.read(&json!("2026-01-02")).unwrap_err();
        assert!(e.contains("yyyy-MM-dd HH:mm:ss"), "{e}");
        let e = DateFormats::parse("epoch_second")
            .unwrap()
            .read(&json!("soon"))
            .unwrap_err();
        assert!(e.contains("epoch_second"), "{e}");
        // Formats the engine cannot read are refused when the index is created.
        for bad in ["week_date", "YYYY-ww", "yyyy-MM-dd G"] {
            assert!(DateFormats::parse(bad).is_err(), "{bad}");
        }
    }
}
