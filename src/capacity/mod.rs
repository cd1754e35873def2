//! Capacity: the highest throughput that holds a latency goal (`target-throughput: max` with
//! an `slo`). The driver runs probes, each a short open-model window at a target rate with
//! latency from the intended start (a system behind schedule fails the goal instead of hiding
//! it); `judge` gives each probe its verdict and how sure it is; `search` picks the next rate.
//! What is stored: every probe, and the conclusion.

pub mod judge;
pub mod search;
pub mod share;

use crate::metrics::Percentiles;
use serde::{Deserialize, Serialize};

/// Why a probe ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Unthrottled: the most the clients reach.
    Calibrate,
    /// Growing the rate until the goal fails.
    Grow,
    /// Lowering it until the goal holds (the first rate failed).
    Lower,
    /// Halving the bracket.
    Bisect,
    /// The same rate again: the last verdict was within noise.
    Repeat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProbeVerdict {
    Held,
    Failed,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Conclusion {
    /// The bracket is within the precision: the capacity is its lower end.
    Found,
    /// A failed probe was the driver's limit, not the system's: the capacity is at least the
    /// highest rate held.
    DriverLimited,
    /// Not even a thousandth of the first rate held the goal.
    NoRateHeld,
    /// The probe budget (`max-probes`) ran out first.
    MaxProbes,
    /// The calibration measured nothing.
    NothingMeasured,
    /// Ctrl-C, or a probe that failed to run.
    Stopped,
}

impl Conclusion {
    pub fn describe(self) -> &'static str {
        match self {
            Conclusion::Found => "found within the precision",
            Conclusion::DriverLimited => "the driver, not the system, was the limit",
            Conclusion::NoRateHeld => "no probed rate held the goal",
            Conclusion::MaxProbes => "stopped at max-probes",
            Conclusion::NothingMeasured => "the unthrottled calibration measured nothing",
            Conclusion::Stopped => "stopped before the end",
        }
    }
}

/// One criterion of the goal, as a probe measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CriterionRecord {
    pub criterion: String,
    /// In the criterion's unit (ms, a ratio, ops/s); None when nothing was measured.
    pub value: Option<f64>,
    /// The value's 95% interval (widened for run-to-run noise).
    pub interval: Option<(f64, f64)>,
    pub held: bool,
    /// The limit lies within the interval.
    pub within_noise: bool,
}

/// One probe of a search.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProbeRecord {
    pub phase: Phase,
    /// The probe's target, ops/s (None: the unthrottled calibration).
    pub target: Option<f64>,
    /// Operations per second over the measured window.
    pub achieved: f64,
    pub operations: u64,
    pub errors: u64,
    pub error_rate: f64,
    pub latency_ms: Percentiles,
    pub service_time_ms: Percentiles,
    /// None for the calibration, which is not judged.
    pub verdict: Option<ProbeVerdict>,
    #[serde(default)]
    pub within_noise: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<CriterionRecord>,
    /// Operations the driver started over 1 ms late although their client was free.
    #[serde(default)]
    pub late_starts: u64,
    /// The runner process's CPU over the probe, in cores (the busiest shard's).
    #[serde(default)]
    pub driver_cpu_cores: f64,
    #[serde(default)]
    pub cores_available: u32,
    pub seconds: f64,
}

/// One search: its goal, conclusion and probes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CapacityRecord {
    /// The trial of the task this search was.
    pub trial: u64,
    pub slo: Vec<String>,
    pub precision: f64,
    pub conclusion: Conclusion,
    /// Why, in words, when the conclusion needs them (the driver's limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The highest probed rate that held every criterion (ops/s).
    pub capacity: Option<f64>,
    /// The rate achieved at that probe.
    pub achieved: Option<f64>,
    /// The lowest probed rate that failed, above the capacity.
    pub failed_at: Option<f64>,
    /// What the clients reached unthrottled.
    pub unthrottled: Option<f64>,
    pub probes: Vec<ProbeRecord>,
    /// The whole search, calibration and repeats included.
    pub seconds: f64,
}

impl CapacityRecord {
    /// The interval the true capacity lies in: from the highest held to the lowest failed
    /// (or the held rate alone when nothing above it failed).
    pub fn interval(&self) -> Option<(f64, f64)> {
        let held = self.capacity?;
        Some((held, self.failed_at.unwrap_or(held).max(held)))
    }
}

/// A share of a probe's operations started late by the driver above which the driver, not the
/// system, is called the limit.
pub const LATE_START_LIMIT: f64 = 0.05;
