//! The two targets that are not one rate: a ramp of arrival rates (k6's
//! `ramping-arrival-rate`: `target-throughput: {stages: [...]}`) and a search for the highest
//! rate that holds a latency goal (`target-throughput: max` with an `slo`).

use crate::thresholds::{Bound, Metric, Threshold};
use crate::units::OpsPerSec;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One stage of a ramp: the rate moves linearly to `target` over `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    #[serde(with = "crate::units::serde_secs")]
    pub duration: Duration,
    /// ops/s, all clients together; 0 is allowed (a ramp down to rest).
    pub target: f64,
}

/// Arrival rates that change over the task: linear between stages, from `start`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    /// The rate at time zero.
    pub start: f64,
    pub stages: Vec<Stage>,
}

/// Most stages a ramp may have: a schedule, not a recording.
pub const MAX_STAGES: usize = 1_000;

impl Ramp {
    /// The ramp's whole length: the task runs this long.
    pub fn total(&self) -> Duration {
        self.stages.iter().map(|s| s.duration).sum()
    }

    /// Each stage's start time, start rate and end rate, in order.
    fn segments(&self) -> impl Iterator<Item = (f64, f64, &Stage)> + '_ {
        let mut at = 0.0;
        let mut from = self.start;
        self.stages.iter().map(move |s| {
            let segment = (at, from, s);
            at += s.duration.as_secs_f64();
            from = s.target;
            segment
        })
    }

    /// The intended rate at `t` seconds (the stage's line; 0 past the end).
    pub fn rate_at(&self, t: f64) -> f64 {
        for (at, from, s) in self.segments() {
            let d = s.duration.as_secs_f64();
            if t < at + d {
                return from + (s.target - from) * (t - at) / d;
            }
        }
        0.0
    }

    /// Operations intended by `t` seconds: the integral of the rate.
    pub fn operations_by(&self, t: f64) -> f64 {
        let mut total = 0.0;
        for (at, from, s) in self.segments() {
            let d = s.duration.as_secs_f64();
            let tau = (t - at).clamp(0.0, d);
            if tau > 0.0 {
                total += from * tau + (s.target - from) * tau * tau / (2.0 * d);
            }
        }
        total
    }

    /// Operations intended in each second of the ramp (the last may be a part of a second).
    pub fn intended_per_second(&self) -> Vec<f64> {
        let total = self.total().as_secs_f64();
        let seconds = total.ceil() as usize;
        (0..seconds)
            .map(|s| self.operations_by((s as f64 + 1.0).min(total)) - self.operations_by(s as f64))
            .collect()
    }
}

/// Where operation `u` (counted from 0, all clients together) is intended, in seconds from the
/// start; walks forward from a cursor, as a client's operations only move forward.
#[derive(Debug, Clone, Default)]
pub struct RampCursor {
    stage: usize,
    /// Start time and operations before the cursor's stage.
    at: f64,
    before: f64,
    from: f64,
}

impl RampCursor {
    pub fn new(ramp: &Ramp) -> RampCursor {
        RampCursor {
            stage: 0,
            at: 0.0,
            before: 0.0,
            from: ramp.start,
        }
    }

    /// Seconds from the start at which the `u`-th operation is due; None past the ramp's end.
    /// `u` must not go down between calls.
    pub fn time_of(&mut self, ramp: &Ramp, u: f64) -> Option<f64> {
        while let Some(s) = ramp.stages.get(self.stage) {
            let d = s.duration.as_secs_f64();
            let (a, b) = (self.from, s.target);
            let in_stage = if d > 0.0 { (a + b) * d / 2.0 } else { 0.0 };
            let left = u - self.before;
            if left <= in_stage && d > 0.0 {
                // Solve a·τ + k·τ²/2 = left, k = (b-a)/d, in the form that stays exact as k → 0.
                let k = (b - a) / d;
                let root = (a * a + 2.0 * k * left).max(0.0).sqrt();
                let tau = if a + root > 0.0 {
                    2.0 * left / (a + root)
                } else {
                    0.0
                };
                return Some(self.at + tau.min(d));
            }
            self.stage += 1;
            self.at += d;
            self.before += in_stage;
            self.from = b;
        }
        None
    }
}

/// `target-throughput: max`: the search's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct CapacitySpec {
    /// Every criterion a probe must hold (the thresholds' syntax).
    pub slo: Vec<Threshold>,
    /// Each probe's measured window.
    #[serde(with = "crate::units::serde_secs")]
    pub probe_time: Duration,
    /// Each probe runs this long first, not measured (its backlog still counts: latency is
    /// from the intended start).
    #[serde(with = "crate::units::serde_secs")]
    pub probe_warmup: Duration,
    /// The search stops when the bracket (highest held, lowest failed) is this narrow, as a
    /// share of the failed rate.
    pub precision: f64,
    /// The first probed rate; by default half of what the clients reach unthrottled.
    pub probe_start: Option<OpsPerSec>,
    /// Most probes one search runs (calibration and repeats included).
    pub max_probes: u32,
}

impl CapacitySpec {
    pub const DEFAULT_PROBE_TIME: Duration = Duration::from_secs(10);
    pub const DEFAULT_PROBE_WARMUP: Duration = Duration::from_secs(5);
    pub const DEFAULT_PRECISION: f64 = 0.02;
    pub const DEFAULT_MAX_PROBES: u32 = 40;
    /// A search asks for no more: each probe takes seconds.
    pub const MOST_PROBES: u32 = 1_000;
}

/// Why a criterion cannot be an SLO of a capacity search, if it cannot.
pub fn slo_problem(t: &Threshold) -> Option<String> {
    match (t.metric, t.bound) {
        (Metric::Throughput, Bound::OfTarget(_)) => None,
        (Metric::Throughput, _) => Some("an SLO on throughput is a share of each probe's rate (e.g. `>= 95% of target`): an absolute floor would fail every low probe".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramp(start: f64, stages: &[(f64, f64)]) -> Ramp {
        Ramp {
            start,
            stages: stages
                .iter()
                .map(|&(d, t)| Stage {
                    duration: Duration::from_secs_f64(d),
                    target: t,
                })
                .collect(),
        }
    }

    #[test]
    fn a_linear_ramp_intends_its_integral() {
        // 0 → 2,000 ops/s over 10 s: 10,000 operations, 1,000 by 5 s... no: 2,500 by 5 s.
        let r = ramp(0.0, &[(10.0, 2000.0)]);
        assert_eq!(r.total(), Duration::from_secs(10));
        assert!((r.operations_by(10.0) - 10_000.0).abs() < 1e-6);
        assert!((r.operations_by(5.0) - 2_500.0).abs() < 1e-6);
        assert!((r.rate_at(2.5) - 500.0).abs() < 1e-9);
        let per_second = r.intended_per_second();
        assert_eq!(per_second.len(), 10);
        assert!((per_second[0] - 100.0).abs() < 1e-6, "{per_second:?}");
        assert!((per_second[9] - 1_900.0).abs() < 1e-6, "{per_second:?}");
    }

    #[test]
    fn the_cursor_inverts_the_integral_across_stages() {
        let r = ramp(
            100.0,
            &[(2.0, 100.0), (3.0, 1000.0), (0.0, 50.0), (4.0, 0.0)],
        );
        let mut c = RampCursor::new(&r);
        let total = r.operations_by(r.total().as_secs_f64());
        let mut last = 0.0;
        let mut u = 0.0;
        while u <= total {
            let t = c.time_of(&r, u).expect("within the ramp");
            assert!(t >= last, "times only move forward");
            assert!(
                (r.operations_by(t) - u).abs() < 1e-6 * total.max(1.0),
                "op {u} at {t}s"
            );
            last = t;
            u += 7.5;
        }
        assert_eq!(c.time_of(&r, total + 1.0), None);
    }

    #[test]
    fn a_ramp_from_zero_starts_its_first_operation_at_zero() {
        let r = ramp(0.0, &[(10.0, 2000.0)]);
        let mut c = RampCursor::new(&r);
        assert_eq!(c.time_of(&r, 0.0), Some(0.0));
        // The 100th operation: 100 = 100·t² → t = 1 s.
        assert!((c.time_of(&r, 100.0).unwrap() - 1.0).abs() < 1e-9);
    }

    #[test]
    fn a_capacity_slo_takes_throughput_only_as_a_share_of_the_probe() {
        let absolute: Threshold = "throughput >= 100".parse().unwrap();
        assert!(slo_problem(&absolute).is_some());
        let share: Threshold = "throughput >= 95% of target".parse().unwrap();
        assert!(slo_problem(&share).is_none());
        let latency: Threshold = "latency.p99 < 20ms".parse().unwrap();
        assert!(slo_problem(&latency).is_none());
    }
}
