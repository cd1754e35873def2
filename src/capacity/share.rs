//! One shard's part of a probe, as the shards of a race exchange it: every shard sends its own
//! and gets back all of them merged (histograms added, counts summed, windows united on the
//! shared clock), so that every shard judges the whole probe the same way and the search takes
//! the same next step everywhere.

use crate::metrics::{decode_histogram, encode_histogram, new_histogram, Counts, TrialMetrics};
use serde::{Deserialize, Serialize};
use std::time::Duration;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeShare {
    pub operations: u64,
    pub successes: u64,
    pub errors: u64,
    pub late_starts: u64,
    /// The measured window, in nanoseconds from the probe's start (the same instant on every
    /// shard).
    pub window_ns: Option<(u64, u64)>,
    /// HdrHistogram V2-deflate, base64, microseconds.
    pub service_us: String,
    pub latency_us: String,
    /// The busiest shard's CPU, in cores.
    pub cpu_cores: f64,
}

impl ProbeShare {
    pub fn of(m: &TrialMetrics, cpu_cores: f64) -> ProbeShare {
        ProbeShare {
            operations: m.counts.operations,
            successes: m.counts.successes,
            errors: m.counts.error_count(),
            late_starts: m.counts.late_starts,
            window_ns: m
                .window
                .map(|(a, b)| (a.as_nanos() as u64, b.as_nanos() as u64)),
            service_us: encode_histogram(&m.service),
            latency_us: encode_histogram(&m.latency),
            cpu_cores,
        }
    }

    /// The shards' parts as one, in shard order.
    pub fn merge(parts: &[ProbeShare]) -> Result<ProbeShare, String> {
        let (mut service, mut latency) = (new_histogram(), new_histogram());
        for p in parts {
            for (into, text) in [(&mut service, &p.service_us), (&mut latency, &p.latency_us)] {
                let h = decode_histogram(text)?;
                into.add(&h)
                    .map_err(|e| format!("a shard's histogram does not add: {e:?}"))?;
            }
        }
        let sum = |f: fn(&ProbeShare) -> u64| parts.iter().map(f).sum();
        let windows = parts.iter().filter_map(|p| p.window_ns);
        let window_ns = windows
            .clone()
            .map(|w| w.0)
            .min()
            .zip(windows.map(|w| w.1).max());
        Ok(ProbeShare {
            operations: sum(|p| p.operations),
            successes: sum(|p| p.successes),
            errors: sum(|p| p.errors),
            late_starts: sum(|p| p.late_starts),
            window_ns,
            service_us: encode_histogram(&service),
            latency_us: encode_histogram(&latency),
            cpu_cores: parts.iter().map(|p| p.cpu_cores).fold(0.0, f64::max),
        })
    }

    /// The merged probe as the judge reads it.
    pub fn metrics(&self) -> Result<TrialMetrics, String> {
        let mut m = TrialMetrics::merge(Vec::new());
        m.service = decode_histogram(&self.service_us)?;
        m.latency = decode_histogram(&self.latency_us)?;
        m.counts = Counts {
            operations: self.operations,
            successes: self.successes,
            late_starts: self.late_starts,
            ..Counts::default()
        };
        m.counts.errors[0] = self.errors;
        m.window = self
            .window_ns
            .map(|(a, b)| (Duration::from_nanos(a), Duration::from_nanos(b)));
        m.measured_window = self.window_ns.map_or(Duration::ZERO, |(a, b)| {
            Duration::from_nanos(b.saturating_sub(a))
        });
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(values: &[u64], window: (u64, u64)) -> ProbeShare {
        let mut m = TrialMetrics::merge(Vec::new());
        for v in values {
            m.latency.record(*v).unwrap();
            m.service.record(*v).unwrap();
        }
        m.counts.operations = values.len() as u64;
        m.counts.successes = values.len() as u64;
        m.window = Some((
            Duration::from_nanos(window.0),
            Duration::from_nanos(window.1),
        ));
        ProbeShare::of(&m, 0.5)
    }

    #[test]
    fn the_merge_adds_histograms_and_unites_windows() {
        let a = part(&[1_000, 2_000], (100, 5_000));
        let b = part(&[3_000], (50, 4_000));
        let merged = ProbeShare::merge(&[a, b]).unwrap();
        assert_eq!(merged.operations, 3);
        assert_eq!(merged.window_ns, Some((50, 5_000)));
        let m = merged.metrics().unwrap();
        assert_eq!(m.latency.len(), 3);
        assert_eq!(m.measured_window, Duration::from_nanos(4_950));
        assert!(ProbeShare::merge(&[ProbeShare {
            latency_us: "garbage".into(),
            ..part(&[], (0, 0))
        }])
        .is_err());
    }
}
