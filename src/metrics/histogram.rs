//! HDR histogram helpers: one configuration everywhere, compact serialisation for the race
//! store, and the percentile summary every report shows.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable value: one hour, in microseconds. Larger values saturate.
pub const MAX_MICROS: u64 = 3_600_000_000;

/// Percentiles every report shows, as (label, quantile).
pub const PERCENTILES: [(&str, f64); 7] = [
    ("p50", 50.0),
    ("p90", 90.0),
    ("p95", 95.0),
    ("p99", 99.0),
    ("p99.9", 99.9),
    ("p99.99", 99.99),
    ("p100", 100.0),
];

pub fn new_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_MICROS, 3).expect("valid histogram bounds")
}

/// V2 + deflate, base64: the HdrHistogram interchange format, readable by other HDR tools.
pub fn encode_histogram(h: &Histogram<u64>) -> String {
    let mut buf = Vec::new();
    V2DeflateSerializer::new()
        .serialize(h, &mut buf)
        .expect("in-memory serialisation cannot fail");
    base64::engine::general_purpose::STANDARD.encode(buf)
}

pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|e| format!("not base64: {e}"))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("not an HDR histogram: {e:?}"))
}

/// A time distribution in milliseconds. `mean` comes from the exact sum of nanoseconds, so it
/// stays exact below the histogram's microsecond resolution.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct Percentiles {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    #[serde(rename = "p99.9")]
    pub p99_9: f64,
    #[serde(rename = "p99.99")]
    pub p99_99: f64,
    pub p100: f64,
}

impl Percentiles {
    pub fn from_histogram(h: &Histogram<u64>, exact_mean_ms: Option<f64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(h.value_at_percentile(p));
        Percentiles {
            count: h.len(),
            min: ms(h.min()),
            mean: exact_mean_ms.unwrap_or(h.mean() / 1000.0),
            stddev: h.stdev() / 1000.0,
            p50: q(50.0),
            p90: q(90.0),
            p95: q(95.0),
            p99: q(99.0),
            p99_9: q(99.9),
            p99_99: q(99.99),
            p100: ms(h.max()),
        }
    }

    /// The mean, unless nothing was measured.
    pub fn mean_if_any(&self) -> Option<f64> {
        (self.count > 0).then_some(self.mean)
    }

    /// Values in the order of [`PERCENTILES`].
    pub fn values(&self) -> [f64; 7] {
        [
            self.p50,
            self.p90,
            self.p95,
            self.p99,
            self.p99_9,
            self.p99_99,
            self.p100,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrips_through_base64() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        let back = decode_histogram(&encode_histogram(&h)).unwrap();
        assert_eq!(back.len(), 1000);
        assert_eq!(back.value_at_quantile(0.5), h.value_at_quantile(0.5));
        assert!(decode_histogram("not a histogram").is_err());
    }

    #[test]
    fn percentiles_are_in_milliseconds_with_three_digits() {
        let mut h = new_histogram();
        for v in 1..=10_000u64 {
            h.record(v).unwrap(); // 1 µs .. 10 ms
        }
        let p = Percentiles::from_histogram(&h, None);
        assert_eq!(p.count, 10_000);
        assert!((p.p50 - 5.0).abs() / 5.0 < 0.001, "{}", p.p50);
        assert!((p.p99 - 9.9).abs() / 9.9 < 0.001, "{}", p.p99);
        assert!((p.p100 - 10.0).abs() / 10.0 < 0.001);
        assert!(p.min <= 0.001);
    }

    #[test]
    fn large_values_saturate_instead_of_failing() {
        let mut h = new_histogram();
        h.saturating_record(u64::MAX);
        assert_eq!(h.len(), 1);
        assert!(h.max() >= MAX_MICROS);
    }
}
