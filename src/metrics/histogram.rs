//! HDR histogram helpers: one configuration everywhere, compact serialisation for the race
//! store, and the percentile summary every report shows.

use base64::Engine;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable value: one hour, in microseconds. Larger values saturate.
pub const MAX_MICROS: u64 = 3_600_000_000;

/// The value at percentile `p` (0-100): the sample of rank round(p/100 × count), at least 1,
/// as the highest value its bucket holds. This is HdrHistogram_c's and Python's `hdrhistogram`
/// reading. The `hdrhistogram` crate takes the ceiling of the rank in floating point, where
/// 0.999 × 1,000 is a hair above 999, so p99.9 of 1,000 samples became the maximum.
pub fn value_at_percentile(h: &Histogram<u64>, p: f64) -> u64 {
    if h.is_empty() {
        return 0;
    }
    let rank = ((p.clamp(0.0, 100.0) / 100.0 * h.len() as f64) + 0.5)
        .floor()
        .max(1.0) as u64;
    let mut seen = 0u64;
    for v in h.iter_recorded() {
        seen += v.count_at_value();
        if seen >= rank {
            return h.highest_equivalent(v.value_iterated_to());
        }
    }
    h.max()
}

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
/// stays exact below the histogram's microsecond resolution. Stored and reported with `null`
/// for a percentile its sample count does not support (see [`Percentiles::supported`]); read
/// back, such a percentile is NaN, and every report goes through [`Percentiles::shown`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(into = "PercentilesWire", from = "PercentilesWire")]
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

/// The stored shape of [`Percentiles`].
#[derive(Serialize, Deserialize)]
struct PercentilesWire {
    count: u64,
    min: f64,
    mean: f64,
    stddev: f64,
    p50: Option<f64>,
    p90: Option<f64>,
    p95: Option<f64>,
    p99: Option<f64>,
    #[serde(rename = "p99.9")]
    p99_9: Option<f64>,
    #[serde(rename = "p99.99")]
    p99_99: Option<f64>,
    p100: Option<f64>,
}

impl From<Percentiles> for PercentilesWire {
    fn from(p: Percentiles) -> Self {
        let [p50, p90, p95, p99, p99_9, p99_99, p100] = p.shown();
        PercentilesWire {
            count: p.count,
            min: p.min,
            mean: p.mean,
            stddev: p.stddev,
            p50,
            p90,
            p95,
            p99,
            p99_9,
            p99_99,
            p100,
        }
    }
}

impl From<PercentilesWire> for Percentiles {
    fn from(w: PercentilesWire) -> Self {
        let v = |x: Option<f64>| x.unwrap_or(f64::NAN);
        Percentiles {
            count: w.count,
            min: w.min,
            mean: w.mean,
            stddev: w.stddev,
            p50: v(w.p50),
            p90: v(w.p90),
            p95: v(w.p95),
            p99: v(w.p99),
            p99_9: v(w.p99_9),
            p99_99: v(w.p99_99),
            p100: v(w.p100),
        }
    }
}

impl Percentiles {
    pub fn from_histogram(h: &Histogram<u64>, exact_mean_ms: Option<f64>) -> Percentiles {
        if h.is_empty() {
            return Percentiles::default();
        }
        let ms = |us: u64| us as f64 / 1000.0;
        let q = |p: f64| ms(value_at_percentile(h, p));
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

    /// Whether `count` samples support percentile `p`: one sample in every 1/(1-p) lies
    /// above it, so p99 needs 100 samples, p99.9 1,000 and p99.99 10,000 (p50 needs 2; p100,
    /// the maximum, needs 1). Rally shows percentiles by the same rule.
    pub fn supported(count: u64, p: f64) -> bool {
        p >= 100.0 || (count as f64) * (1.0 - p / 100.0) >= 1.0 - 1e-9
    }

    /// The values of [`Percentiles::values`], `None` where the sample count does not support
    /// the percentile: what every report shows.
    pub fn shown(&self) -> [Option<f64>; 7] {
        let values = self.values();
        let mut out = [None; 7];
        for (i, (_, p)) in PERCENTILES.iter().enumerate() {
            if self.count > 0 && Self::supported(self.count, *p) && !values[i].is_nan() {
                out[i] = Some(values[i]);
            }
        }
        out
    }

    /// Percentile `p` (one of [`PERCENTILES`]) where the samples support it.
    pub fn at(&self, p: f64) -> Option<f64> {
        let i = PERCENTILES.iter().position(|(_, q)| *q == p)?;
        self.shown()[i]
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
    fn percentile_ranks_round_half_up_not_a_floating_point_hair_up() {
        let mut h = new_histogram();
        for v in 1..=1000u64 {
            h.record(v * 10).unwrap();
        }
        // 0.999 × 1,000 is 999.0000000000001: the 999th sample, not the 1,000th.
        assert_eq!(value_at_percentile(&h, 99.9), h.highest_equivalent(9990));
        assert_eq!(value_at_percentile(&h, 50.0), h.highest_equivalent(5000));
        assert_eq!(value_at_percentile(&h, 100.0), h.max());
        let mut seven = new_histogram();
        for v in 1..=7u64 {
            seven.record(v).unwrap();
        }
        // 0.9 × 7 = 6.3 rounds to rank 6; 0.5 × 7 = 3.5 rounds to rank 4.
        assert_eq!(value_at_percentile(&seven, 90.0), 6);
        assert_eq!(value_at_percentile(&seven, 50.0), 4);
        assert_eq!(value_at_percentile(&new_histogram(), 50.0), 0);
    }

    #[test]
    fn a_percentile_is_shown_only_where_the_samples_support_it() {
        let with = |n: u64| {
            Percentiles {
                count: n,
                ..Percentiles::default()
            }
            .shown()
            .map(|v| v.is_some())
        };
        // p50 p90 p95 p99 p99.9 p99.99 p100
        assert_eq!(with(0), [false; 7]);
        assert_eq!(with(1), [false, false, false, false, false, false, true]);
        assert_eq!(with(43), [true, true, true, false, false, false, true]);
        assert_eq!(with(100), [true, true, true, true, false, false, true]);
        assert_eq!(with(1_000), [true, true, true, true, true, false, true]);
        assert_eq!(with(10_000), [true; 7]);
    }

    #[test]
    fn large_values_saturate_instead_of_failing() {
        let mut h = new_histogram();
        h.saturating_record(u64::MAX);
        assert_eq!(h.len(), 1);
        assert!(h.max() >= MAX_MICROS);
    }
}
