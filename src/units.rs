//! Small value types that carry their unit, so layers do not pass bare numbers around.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// A rate in operations (or documents) per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OpsPerSec(pub f64);

impl OpsPerSec {
    /// The fastest rate a track may ask for: an operation a nanosecond.
    pub const MAX: f64 = 1e9;

    /// A rate as a track gives it, checked: above zero, at most [`OpsPerSec::MAX`], and at
    /// least one operation in [`MAX_DURATION`] (so that its interval is a duration).
    pub fn new(rate: f64) -> Result<OpsPerSec, String> {
        let slowest = 1.0 / MAX_DURATION.as_secs_f64();
        if rate.is_finite() && (slowest..=Self::MAX).contains(&rate) {
            Ok(OpsPerSec(rate))
        } else {
            Err(format!("a target throughput of {} ops/s is outside what can be scheduled ({slowest:.1e} to {:.0e} ops/s)", short_number(rate), Self::MAX))
        }
    }

    /// The time between two operations at this rate.
    pub fn interval(self) -> Duration {
        Duration::try_from_secs_f64(1.0 / self.0)
            .unwrap_or(MAX_DURATION)
            .min(MAX_DURATION)
    }
}

/// The longest time a track or an option may name (a period, an interval, a warmup, a
/// timeout): 366 days. Far beyond any benchmark, and far from where instants overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(366 * 24 * 3600);

/// Seconds as a duration, checked: finite, not negative, at most [`MAX_DURATION`].
pub fn duration_from_secs(secs: f64) -> Result<Duration, String> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!(
            "{} s is not a duration (a number of seconds, 0 or more)",
            short_number(secs)
        ));
    }
    match Duration::try_from_secs_f64(secs) {
        Ok(d) if d <= MAX_DURATION => Ok(d),
        _ => Err(format!(
            "{} s is longer than the longest duration allowed ({} days)",
            short_number(secs),
            MAX_DURATION.as_secs() / 86_400
        )),
    }
}

/// A number for a message: plain when it reads well, in scientific notation when tiny or huge.
fn short_number(v: f64) -> String {
    if v != 0.0 && !(1e-3..1e9).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// A whole number from JSON/YAML: an integer, or a number with no fractional part (`1e3`,
/// `2.0`), at most `max`; never silently something else.
pub fn whole_number(v: &serde_json::Value, max: u64) -> Result<u64, String> {
    let n = match v.as_u64() {
        Some(n) => n,
        None => match v.as_f64() {
            // Exactly representable below 2^53; larger floats are not whole numbers one can count.
            Some(f) if f >= 0.0 && f.fract() == 0.0 && f <= 9_007_199_254_740_992.0 => f as u64,
            _ => return Err(format!("`{v}` is not a whole number")),
        },
    };
    if n > max {
        return Err(format!("{n} is more than the {max} allowed"));
    }
    Ok(n)
}

impl fmt::Display for OpsPerSec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", format_number(self.0))
    }
}

/// What one unit of a task's throughput counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ThroughputUnit {
    /// Documents indexed (bulk).
    #[serde(rename = "docs/s")]
    Documents,
    /// Operations done.
    #[serde(rename = "ops/s")]
    Operations,
    /// Pages read (a scroll or a paginated search counts its pages, as Rally does).
    #[serde(rename = "pages/s")]
    Pages,
}

impl ThroughputUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            ThroughputUnit::Documents => "docs/s",
            ThroughputUnit::Operations => "ops/s",
            ThroughputUnit::Pages => "pages/s",
        }
    }
}

impl fmt::Display for ThroughputUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A UTC time as races store it: RFC 3339 (`2026-12-05T04:07:16Z`), with the sub-second
/// digits it was taken with (none for a race's start, milliseconds for a trial's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timestamp {
    pub at: chrono::DateTime<chrono::Utc>,
    precision: chrono::SecondsFormat,
}

impl Timestamp {
    /// Now, to the second.
    pub fn now_seconds() -> Timestamp {
        use chrono::SubsecRound;
        Timestamp {
            at: chrono::Utc::now().trunc_subsecs(0),
            precision: chrono::SecondsFormat::Secs,
        }
    }

    /// The instant.
    pub fn at(&self) -> chrono::DateTime<chrono::Utc> {
        self.at
    }

    /// `at`, to the millisecond.
    pub fn millis(at: chrono::DateTime<chrono::Utc>) -> Timestamp {
        use chrono::SubsecRound;
        Timestamp {
            at: at.trunc_subsecs(3),
            precision: chrono::SecondsFormat::Millis,
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.at.to_rfc3339_opts(self.precision, true))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        let at = chrono::DateTime::parse_from_rfc3339(&text).map_err(|e| {
            serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time: {e}"))
        })?;
        // Written back as it was read: with sub-second digits if it had them.
        let precision = if text.contains('.') {
            chrono::SecondsFormat::Millis
        } else {
            chrono::SecondsFormat::Secs
        };
        Ok(Timestamp {
            at: at.with_timezone(&chrono::Utc),
            precision,
        })
    }
}

/// Number of documents in one bulk request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct BulkSize(pub u64);

/// A size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Bytes(pub u64);

/// Writes `n` in decimal into `buf` and returns the digits, without allocating or going
/// through `fmt` (used per operation: document ids, RESP lengths).
pub fn decimal(buf: &mut [u8; 20], n: u64) -> &str {
    let digits = decimal_bytes(buf, n);
    // Only b'0'..=b'9' were written; the check is kept off the byte-level callers' path.
    std::str::from_utf8(digits).expect("ascii digits")
}

/// [`decimal`] as bytes, for callers that append to a byte buffer.
#[inline]
pub fn decimal_bytes(buf: &mut [u8; 20], mut n: u64) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    &buf[i..]
}

/// Milliseconds with microsecond resolution (what the histograms hold); sub-microsecond means
/// keep more digits since they come from exact sums.
pub fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v > 0.0 && v < 0.001 {
        format!("{v:.6}")
    } else {
        format!("{v:.3}")
    }
}

/// For `skip_serializing_if`: a zero count is left out of stored records.
pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Formats a rate or count for humans: integers without decimals, small values with three.
pub fn format_number(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// A rate or time for a person to read: three significant digits (`12.9`, `1.23`, `0.0123`),
/// whole numbers from 100, grouped by thousands from 10,000 (`12,346`).
pub fn format_significant(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a >= 10_000.0 {
        let digits = format!("{:.0}", a);
        let mut grouped = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                grouped.push(',');
            }
            grouped.push(c);
        }
        return if v < 0.0 {
            format!("-{grouped}")
        } else {
            grouped
        };
    }
    let decimals = match a {
        a if a >= 100.0 || a == 0.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        a => (2 - a.log10().floor() as i32).clamp(3, 9) as usize,
    };
    format!("{v:.decimals$}")
}

/// A duration for a person to read, to the second: `45s`, `2m 10s`, `1h 05m`.
pub fn format_duration_short(d: Duration) -> String {
    let s = d.as_secs_f64().round() as u64;
    match s {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
    }
}

/// A rate as a track writes it: whole numbers without decimals (`0`, `2000`), others as
/// [`format_number`] shows them.
pub fn format_rate(v: f64) -> String {
    if v.is_finite() && v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format_number(v)
    }
}

/// Parses a duration as written in a track: `10s`, `500ms`, `250us`, `2m`, `1h`, or a bare
/// number of seconds.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], t[i..].trim()),
        None => (t, "s"),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a duration (examples: 30s, 500ms, 2m)"))?;
    let secs = match unit {
        "ns" => value / 1e9,
        "us" | "µs" => value / 1e6,
        "ms" => value / 1e3,
        "s" | "sec" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        _ => {
            return Err(format!(
                "`{text}` has an unknown time unit `{unit}` (use ns, us, ms, s, m or h)"
            ))
        }
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{text}` must be a non-negative duration"));
    }
    duration_from_secs(secs).map_err(|m| format!("`{text}`: {m}"))
}

/// Parses a byte size: `5mb`, `512kb`, `1048576`, `1gb`.
pub fn parse_bytes(text: &str) -> Result<Bytes, String> {
    let t = text.trim().to_ascii_lowercase();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], t[i..].trim().to_string()),
        None => (t.as_str(), "b".to_string()),
    };
    let value: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a byte size (examples: 5mb, 512kb)"))?;
    let factor = match unit.as_str() {
        "b" => 1.0,
        "kb" | "k" | "kib" => 1024.0,
        "mb" | "m" | "mib" => 1024.0 * 1024.0,
        "gb" | "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => {
            return Err(format!(
                "`{text}` has an unknown size unit `{unit}` (use b, kb, mb or gb)"
            ))
        }
    };
    let bytes = value * factor;
    if !bytes.is_finite() || bytes < 1.0 {
        return Err(format!("`{text}` must be at least one byte"));
    }
    Ok(Bytes(bytes as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people_keep_three_significant_digits() {
        let cases = [
            (12.9245, "12.9"),
            (1.23456, "1.23"),
            (0.012345, "0.0123"),
            (0.5, "0.500"),
            (0.0, "0"),
            (123.4, "123"),
            (9_999.6, "10000"),
            (12_345.6, "12,346"),
            (1_234_567.0, "1,234,567"),
            (-45_000.0, "-45,000"),
        ];
        for (v, want) in cases {
            assert_eq!(format_significant(v), want, "{v}");
        }
        let d = |s| format_duration_short(Duration::from_secs(s));
        assert_eq!(
            (d(45), d(130), d(3_900)),
            ("45s".into(), "2m 10s".into(), "1h 05m".into())
        );
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("1.5").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("10 parsecs").is_err());
    }

    #[test]
    fn bytes_parse_with_units() {
        assert_eq!(parse_bytes("5mb").unwrap(), Bytes(5 * 1024 * 1024));
        assert_eq!(parse_bytes("100").unwrap(), Bytes(100));
        assert!(parse_bytes("0").is_err());
    }

    #[test]
    fn decimals_without_allocation() {
        let mut buf = [0u8; 20];
        assert_eq!(decimal(&mut buf, 0), "0");
        assert_eq!(decimal(&mut buf, 1234567), "1234567");
        assert_eq!(decimal(&mut buf, u64::MAX), "18446744073709551615");
    }

    #[test]
    fn numbers_that_become_times_or_counts_are_bounded() {
        assert_eq!(
            duration_from_secs(1.5).unwrap(),
            Duration::from_millis(1500)
        );
        for bad in [
            -1.0,
            f64::NAN,
            f64::INFINITY,
            1e19,
            MAX_DURATION.as_secs_f64() + 1.0,
        ] {
            assert!(duration_from_secs(bad).is_err(), "{bad}");
        }
        assert!(
            duration_from_secs(1e19)
                .unwrap_err()
                .contains("1e19 s is longer"),
            "{}",
            duration_from_secs(1e19).unwrap_err()
        );
        assert!(parse_duration("1e19s").is_err());
        assert!(OpsPerSec::new(1e-300).unwrap_err().contains("1e-300 ops/s"));
        for bad in [0.0, -5.0, f64::NAN, 2e9] {
            assert!(OpsPerSec::new(bad).is_err(), "{bad}");
        }
        assert_eq!(
            OpsPerSec::new(100.0).unwrap().interval(),
            Duration::from_millis(10)
        );
        use serde_json::json;
        assert_eq!(whole_number(&json!(1e3), 10_000), Ok(1000));
        assert_eq!(whole_number(&json!(2.0), 10), Ok(2));
        for bad in [json!(2.5), json!(1e30), json!(-1), json!("3")] {
            assert!(whole_number(&bad, u64::MAX).is_err(), "{bad}");
        }
        assert!(whole_number(&json!(11), 10)
            .unwrap_err()
            .contains("more than the 10 allowed"));
    }

    #[test]
    fn timestamps_read_and_write_as_stored() {
        for text in [
            "\"2026-12-05T04:07:16Z\"",
            "\"2026-12-05T04:07:16.000Z\"",
            "\"2026-12-05T04:07:16.250Z\"",
        ] {
            let t: Timestamp = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), text);
        }
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"")
            .unwrap_err()
            .to_string()
            .contains("RFC 3339"));
        assert_eq!(
            format!("{:<22}|", Timestamp::now_seconds()).len(),
            23,
            "padded in listings"
        );
    }

    #[test]
    fn interval_is_reciprocal_of_rate() {
        assert_eq!(OpsPerSec(1000.0).interval(), Duration::from_millis(1));
    }
}

/// Serialises a `Duration` as fractional seconds.
pub mod serde_secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let secs = f64::deserialize(d)?;
        super::duration_from_secs(secs).map_err(serde::de::Error::custom)
    }
}

/// FNV-1a of `bytes`, as 16 hex digits: the same on every machine and build.
pub fn fnv1a_hex(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h = (h ^ *b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}
