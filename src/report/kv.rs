//! The two views key-value benchmarks are read in, derived from the same HDR data as the
//! rest of the summary: redis-benchmark's ("N requests completed in S seconds", cumulative
//! "% <= N milliseconds", requests per second) and a metrics-library timer's (count, mean
//! rate, min/max/mean/stddev/median, 75/95/98/99/99.9th percentiles).

use crate::results::KeyValueRecord;
use crate::results::{RaceHistograms, TaskRecord};
use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct KvViews {
    pub info: KeyValueRecord,
    pub redis_benchmark: RedisBenchmarkView,
    /// The whole task first, then each command of a mix (when timed separately).
    pub timers: Vec<TimerView>,
    /// Measured requests by command: a mix's achieved split.
    pub requests_by_command: std::collections::BTreeMap<String, u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct RedisBenchmarkView {
    /// Requests (commands) of the measured operations of all trials.
    pub requests: u64,
    /// Measured seconds of all trials together.
    pub seconds: f64,
    pub clients: u64,
    pub payload_bytes: u64,
    pub commands_per_operation: u64,
    /// Cumulative share of operations answered within each bound, ending at 100%.
    pub cumulative: Vec<CumulativeLine>,
    pub requests_per_second: f64,
}

#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct CumulativeLine {
    pub percent: f64,
    pub le_ms: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TimerView {
    /// `all`, or the command of a mix.
    pub name: String,
    pub count: u64,
    /// Operations per second over the measured time.
    pub mean_rate: f64,
    pub min_ms: f64,
    pub max_ms: f64,
    pub mean_ms: f64,
    pub stddev_ms: f64,
    /// Percentiles: `None` (null) where the count does not support them.
    pub median_ms: Option<f64>,
    pub p75_ms: Option<f64>,
    pub p95_ms: Option<f64>,
    pub p98_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub p99_9_ms: Option<f64>,
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Bounds as redis-benchmark steps them: 0.1 ms apart below 1 ms, then 1, 2 … 10, 20 … 100,
/// 200 … ms. A line is printed where the share changed, so the list is short.
fn bounds_us() -> impl Iterator<Item = u64> {
    let fine = (1..=10).map(|i| i * 100);
    let coarse = (0..7u32).flat_map(|decade| (2..=10).map(move |i| i * 1000 * 10u64.pow(decade)));
    fine.chain(coarse)
}

pub fn cumulative(latency_us: &Histogram<u64>) -> Vec<CumulativeLine> {
    let total = latency_us.len();
    let mut lines: Vec<CumulativeLine> = Vec::new();
    if total == 0 {
        return lines;
    }
    let mut last = 0;
    for bound in bounds_us() {
        let within = latency_us.count_between(0, bound);
        if within != last {
            lines.push(CumulativeLine {
                percent: within as f64 * 100.0 / total as f64,
                le_ms: ms(bound),
            });
            last = within;
        }
        if within >= total {
            return lines;
        }
    }
    // Beyond the last bound: the maximum closes the list.
    lines.push(CumulativeLine {
        percent: 100.0,
        le_ms: ms(latency_us.max()),
    });
    lines
}

pub fn timer(
    name: &str,
    h: &Histogram<u64>,
    exact_mean_ms: Option<f64>,
    seconds: f64,
) -> TimerView {
    let q = |p: f64| {
        (!h.is_empty() && crate::metrics::Percentiles::supported(h.len(), p))
            .then(|| ms(crate::metrics::value_at_percentile(h, p)))
    };
    TimerView {
        name: name.to_string(),
        count: h.len(),
        mean_rate: if seconds > 0.0 {
            h.len() as f64 / seconds
        } else {
            0.0
        },
        min_ms: if h.is_empty() { 0.0 } else { ms(h.min()) },
        max_ms: ms(h.max()),
        mean_ms: exact_mean_ms.unwrap_or(h.mean() / 1000.0),
        stddev_ms: h.stdev() / 1000.0,
        median_ms: q(50.0),
        p75_ms: q(75.0),
        p95_ms: q(95.0),
        p98_ms: q(98.0),
        p99_ms: q(99.0),
        p99_9_ms: q(99.9),
    }
}

/// The views of one key-value task; `latency` is all its trials' merged latency histogram.
pub fn views(
    index: usize,
    t: &TaskRecord,
    latency: &Histogram<u64>,
    exact_mean_ms: Option<f64>,
    histograms: &RaceHistograms,
) -> Option<KvViews> {
    let info = t.slot.key_value.clone()?;
    let (requests, seconds) = t.measured_trials().fold((0, 0.0), |(r, s), tr| {
        (r + tr.requests, s + tr.measured_seconds)
    });
    let mut timers = vec![timer("all", latency, exact_mean_ms, seconds)];
    // A mix's commands, timed separately when each operation was one command.
    for (name, h) in &histograms.merged_parts(index) {
        // Exact per-command means, weighted over the trials that timed the command.
        let (mut sum, mut n) = (0.0, 0u64);
        for c in t.trials.iter().filter_map(|tr| tr.parts.get(*name)) {
            if let Some(l) = &c.latency_ms {
                sum += l.mean * l.count as f64;
                n += l.count;
            }
        }
        timers.push(timer(name, h, (n > 0).then(|| sum / n as f64), seconds));
    }
    let mut requests_by_command = std::collections::BTreeMap::new();
    for tr in &t.trials {
        for (name, c) in &tr.parts {
            *requests_by_command.entry(name.clone()).or_insert(0) += c.requests;
        }
    }
    Some(KvViews {
        redis_benchmark: RedisBenchmarkView {
            requests,
            seconds,
            clients: t.slot.clients,
            payload_bytes: info.value_size,
            commands_per_operation: info.commands_per_operation,
            cumulative: cumulative(latency),
            requests_per_second: if seconds > 0.0 {
                requests as f64 / seconds
            } else {
                0.0
            },
        },
        info,
        timers,
        requests_by_command,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cumulative_lines_step_like_redis_benchmark_and_end_at_100() {
        let mut h = crate::metrics::new_histogram();
        for _ in 0..90 {
            h.record(150).unwrap(); // 0.15 ms
        }
        for _ in 0..9 {
            h.record(1_500).unwrap(); // 1.5 ms
        }
        h.record(2_500_000).unwrap(); // 2.5 s
        let lines = cumulative(&h);
        let pairs: Vec<(f64, f64)> = lines.iter().map(|l| (l.le_ms, l.percent)).collect();
        assert_eq!(pairs, vec![(0.2, 90.0), (2.0, 99.0), (3000.0, 100.0)]);
    }

    #[test]
    fn timer_reports_the_metrics_library_fields() {
        let mut h = crate::metrics::new_histogram();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        let t = timer("all", &h, None, 2.0);
        assert_eq!((t.count, t.mean_rate), (1000, 500.0));
        assert_eq!((t.min_ms, t.max_ms), (0.001, 1.0));
        let near = |v: Option<f64>, want: f64| v.is_some_and(|v| (v - want).abs() < 0.001);
        assert!(near(t.median_ms, 0.5) && near(t.p75_ms, 0.75) && near(t.p98_ms, 0.98));
        assert_eq!(t.p99_9_ms, Some(0.999), "1,000 samples support p99.9");
        let few = timer(
            "all",
            &{
                let mut h = crate::metrics::new_histogram();
                h.record(5).unwrap();
                h
            },
            None,
            1.0,
        );
        assert_eq!(
            (few.median_ms, few.p99_ms),
            (None, None),
            "one sample supports no percentile"
        );
        assert!((t.stddev_ms - 0.2887).abs() < 0.001, "{}", t.stddev_ms);
    }
}
