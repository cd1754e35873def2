//! Small value types that carry their unit, so layers do not pass bare numbers around.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::time::Duration;

/// A rate in operations (or documents) per second.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Serialize, Deserialize)]
#[serde(transparent)]
pub struct OpsPerSec(pub f64);

impl OpsPerSec {
    /// The time between two operations at this rate.
    pub fn interval(self) -> Duration {
        Duration::from_secs_f64(1.0 / self.0)
    }
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
        Timestamp { at: chrono::Utc::now().trunc_subsecs(0), precision: chrono::SecondsFormat::Secs }
    }

    /// `at`, to the millisecond.
    pub fn millis(at: chrono::DateTime<chrono::Utc>) -> Timestamp {
        use chrono::SubsecRound;
        Timestamp { at: at.trunc_subsecs(3), precision: chrono::SecondsFormat::Millis }
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
        let at = chrono::DateTime::parse_from_rfc3339(&text).map_err(|e| serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time: {e}")))?;
        // Written back as it was read: with sub-second digits if it had them.
        let precision = if text.contains('.') { chrono::SecondsFormat::Millis } else { chrono::SecondsFormat::Secs };
        Ok(Timestamp { at: at.with_timezone(&chrono::Utc), precision })
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
        _ => return Err(format!("`{text}` has an unknown time unit `{unit}` (use ns, us, ms, s, m or h)")),
    };
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!("`{text}` must be a non-negative duration"));
    }
    Duration::try_from_secs_f64(secs).map_err(|_| format!("`{text}` is too long a duration"))
}

/// Parses a byte size: `5mb`, `512kb`, `1048576`, `1gb`.
pub fn parse_bytes(text: &str) -> Result<Bytes, String> {
    let t = text.trim().to_ascii_lowercase();
    let (num, unit) = match t.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&t[..i], t[i..].trim().to_string()),
        None => (t.as_str(), "b".to_string()),
    };
    let value: f64 = num.trim().parse().map_err(|_| format!("`{text}` is not a byte size (examples: 5mb, 512kb)"))?;
    let factor = match unit.as_str() {
        "b" => 1.0,
        "kb" | "k" | "kib" => 1024.0,
        "mb" | "m" | "mib" => 1024.0 * 1024.0,
        "gb" | "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(format!("`{text}` has an unknown size unit `{unit}` (use b, kb, mb or gb)")),
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
    fn timestamps_read_and_write_as_stored() {
        for text in ["\"2026-12-05T04:07:16Z\"", "\"2026-12-05T04:07:16.000Z\"", "\"2026-12-05T04:07:16.250Z\""] {
            let t: Timestamp = serde_json::from_str(text).unwrap();
            assert_eq!(serde_json::to_string(&t).unwrap(), text);
        }
        assert!(serde_json::from_str::<Timestamp>("\"yesterday\"").unwrap_err().to_string().contains("RFC 3339"));
        assert_eq!(format!("{:<22}|", Timestamp::now_seconds()).len(), 23, "padded in listings");
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
        Duration::try_from_secs_f64(secs).map_err(serde::de::Error::custom)
    }
}
