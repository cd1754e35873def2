//! Comparing two stored races, criterion-style: for each task × sweep point in both, the median
//! across trials of each metric, the difference, and a verdict that says better or worse (not up
//! or down), judged against a noise threshold and, with enough trials, a Mann-Whitney U test.

mod capacity;
mod many;
mod recall;
mod render;
mod stats;

pub use many::Comparisons;
pub use stats::{mann_whitney_p, smallest_p};

use crate::results::{RaceRecord, TaskRecord, TrialRecord};
use serde::Serialize;

#[derive(Debug, Clone, Copy)]
pub struct CompareOptions {
    /// Relative differences below this are noise, whatever the test says (0.05 = 5%).
    pub noise_threshold: f64,
    /// Significance level of the Mann-Whitney U test.
    pub alpha: f64,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            noise_threshold: 0.05,
            alpha: 0.05,
        }
    }
}

/// Trials each race needs before a difference can be tested.
pub const MIN_TRIALS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Improvement,
    Regression,
    /// Smaller than the noise threshold.
    WithinNoise,
    /// Beyond the threshold, but the test does not find it significant.
    NotSignificant,
    /// Beyond the threshold, but too few trials to test: a likely improvement.
    UnjudgedImprovement,
    UnjudgedRegression,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Improvement => "🟢 better",
            Verdict::Regression => "🔴 worse",
            Verdict::WithinNoise => "⚪ within noise",
            Verdict::NotSignificant => "⚪ not significant",
            Verdict::UnjudgedImprovement => "🟡 better? (too few trials to judge)",
            Verdict::UnjudgedRegression => "🟠 worse? (too few trials to judge)",
        }
    }
}

impl Verdict {
    /// The label without its colour mark, and whether it is good, bad or neither, for pages
    /// that colour it themselves.
    pub fn plain(self) -> (&'static str, Option<bool>) {
        match self {
            Verdict::Improvement => ("better", Some(true)),
            Verdict::Regression => ("worse", Some(false)),
            Verdict::WithinNoise => ("within noise", None),
            Verdict::NotSignificant => ("not significant", None),
            Verdict::UnjudgedImprovement => ("better? (too few trials to judge)", Some(true)),
            Verdict::UnjudgedRegression => ("worse? (too few trials to judge)", Some(false)),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Better {
    Higher,
    Lower,
}

/// The metrics compared, with which direction is better, and how to read them off a trial
/// (None: the trial cannot support it, as p99 of fewer than 100 samples, or the throughput of
/// one operation; such a metric is not compared).
pub type ReadMetric = fn(&TrialRecord) -> Option<f64>;

pub const METRICS: &[(&str, Better, ReadMetric)] = &[
    ("throughput", Better::Higher, |t| {
        (t.operations > 1).then_some(t.throughput)
    }),
    ("service_time_p50", Better::Lower, |t| {
        t.service_time_ms.at(50.0)
    }),
    ("service_time_p90", Better::Lower, |t| {
        t.service_time_ms.at(90.0)
    }),
    ("service_time_p99", Better::Lower, |t| {
        t.service_time_ms.at(99.0)
    }),
    ("service_time_p99.9", Better::Lower, |t| {
        t.service_time_ms.at(99.9)
    }),
    ("latency_p50", Better::Lower, |t| t.latency_ms.at(50.0)),
    ("latency_p99", Better::Lower, |t| t.latency_ms.at(99.0)),
    ("error_rate", Better::Lower, |t| Some(t.error_rate)),
];

#[derive(Debug, Clone, Serialize)]
pub struct MetricDiff {
    pub metric: &'static str,
    pub unit: String,
    pub better: Better,
    pub baseline: f64,
    pub contender: f64,
    pub absolute: f64,
    /// Relative to the baseline; None when the baseline is 0.
    pub relative: Option<f64>,
    pub p_value: Option<f64>,
    pub verdict: Verdict,
    /// A capacity's brackets (the searches' highest held to lowest failed rates).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<capacity::CapacityIntervals>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskDiff {
    pub task: String,
    pub sweep: String,
    pub baseline_trials: usize,
    pub contender_trials: usize,
    pub metrics: Vec<MetricDiff>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Comparison {
    pub baseline: String,
    pub contender: String,
    pub noise_threshold: f64,
    pub alpha: f64,
    /// What differs between the races besides the code under test (track, params, backend ...).
    pub warnings: Vec<String>,
    pub tasks: Vec<TaskDiff>,
    pub only_in_baseline: Vec<String>,
    pub only_in_contender: Vec<String>,
}

fn usable(t: &TaskRecord) -> Vec<&TrialRecord> {
    t.complete_trials().collect()
}

fn key(t: &TaskRecord) -> String {
    format!("{} [{}]", t.slot.task, t.sweep_label())
}

fn differences(a: &RaceRecord, b: &RaceRecord) -> Vec<String> {
    let mut w = Vec::new();
    let mut differs = |what: &str, x: String, y: String| {
        if x != y {
            w.push(format!("{what} differs: `{x}` vs `{y}`"));
        }
    };
    differs("track", a.track.clone(), b.track.clone());
    differs("challenge", a.challenge.clone(), b.challenge.clone());
    differs("backend", a.backend.kind.clone(), b.backend.kind.clone());
    differs(
        "test mode",
        a.test_mode.to_string(),
        b.test_mode.to_string(),
    );
    differs("host", a.host.hostname.clone(), b.host.hostname.clone());
    let keys: std::collections::BTreeSet<&String> =
        a.params.keys().chain(b.params.keys()).collect();
    for k in keys {
        let show = |v: Option<&serde_json::Value>| {
            v.map(|v| v.to_string()).unwrap_or_else(|| "(unset)".into())
        };
        differs(
            &format!("track parameter {k}"),
            show(a.params.get(k)),
            show(b.params.get(k)),
        );
    }
    w
}

pub fn compare(baseline: &RaceRecord, contender: &RaceRecord, opts: CompareOptions) -> Comparison {
    let mut tasks = Vec::new();
    let mut only_in_baseline = Vec::new();
    for bt in baseline.tasks.iter().filter(|t| t.slot.reported) {
        let Some(ct) = contender.tasks.iter().find(|c| key(c) == key(bt)) else {
            only_in_baseline.push(key(bt));
            continue;
        };
        let (bs, cs) = (usable(bt), usable(ct));
        if bs.is_empty() || cs.is_empty() {
            continue;
        }
        let metrics = METRICS
            .iter()
            .filter_map(|(name, better, read)| {
                // Compared only where every trial on both sides supports the metric.
                let bv: Option<Vec<f64>> = bs.iter().map(|t| read(t)).collect();
                let cv: Option<Vec<f64>> = cs.iter().map(|t| read(t)).collect();
                Some(diff(
                    name,
                    *better,
                    &bv?,
                    &cv?,
                    bt.slot.throughput_unit.as_str(),
                    opts,
                ))
            })
            .chain(capacity::diff(bt, ct, opts))
            .chain(recall::diff(bt, ct, opts))
            .collect();
        tasks.push(TaskDiff {
            task: bt.slot.task.clone(),
            sweep: bt.sweep_label(),
            baseline_trials: bs.len(),
            contender_trials: cs.len(),
            metrics,
        });
    }
    let only_in_contender = contender
        .tasks
        .iter()
        .filter(|c| c.slot.reported && !baseline.tasks.iter().any(|b| key(b) == key(c)))
        .map(key)
        .collect();
    Comparison {
        baseline: baseline.race_id.clone(),
        contender: contender.race_id.clone(),
        noise_threshold: opts.noise_threshold,
        alpha: opts.alpha,
        warnings: differences(baseline, contender),
        tasks,
        only_in_baseline,
        only_in_contender,
    }
}

fn diff(
    metric: &'static str,
    better: Better,
    b: &[f64],
    c: &[f64],
    throughput_unit: &str,
    opts: CompareOptions,
) -> MetricDiff {
    let (baseline, contender) = (stats::median(b), stats::median(c));
    let absolute = contender - baseline;
    let relative = (baseline != 0.0).then(|| absolute / baseline.abs());
    let improved = match better {
        Better::Higher => absolute > 0.0,
        Better::Lower => absolute < 0.0,
    };
    // Times are stored with microsecond resolution: smaller differences are not measured ones.
    let resolution = if metric.contains("time") || metric.starts_with("latency") {
        0.002
    } else {
        0.0
    };
    let beyond_noise = absolute.abs() > resolution
        && match relative {
            Some(r) => r.abs() >= opts.noise_threshold,
            None => absolute != 0.0,
        };
    let enough = b.len() >= MIN_TRIALS && c.len() >= MIN_TRIALS;
    let p_value = if enough { mann_whitney_p(b, c) } else { None };
    let verdict = match (beyond_noise, enough, p_value) {
        (false, _, _) => Verdict::WithinNoise,
        (true, true, Some(p)) if p <= opts.alpha => {
            if improved {
                Verdict::Improvement
            } else {
                Verdict::Regression
            }
        }
        (true, true, _) => Verdict::NotSignificant,
        (true, false, _) => {
            if improved {
                Verdict::UnjudgedImprovement
            } else {
                Verdict::UnjudgedRegression
            }
        }
    };
    let unit = if metric == "throughput" {
        throughput_unit.to_string()
    } else if metric == "error_rate" {
        "ratio".into()
    } else {
        "ms".into()
    };
    MetricDiff {
        metric,
        unit,
        better,
        baseline,
        contender,
        absolute,
        relative,
        p_value,
        verdict,
        interval: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direction_decides_better_or_worse() {
        let o = CompareOptions::default();
        let up = [100.0, 101.0, 102.0, 103.0, 104.0];
        let down = [130.0, 131.0, 132.0, 133.0, 134.0];
        assert_eq!(
            diff("throughput", Better::Higher, &up, &down, "ops/s", o).verdict,
            Verdict::Improvement
        );
        assert_eq!(
            diff("latency_p99", Better::Lower, &up, &down, "ms", o).verdict,
            Verdict::Regression
        );
        let noise = [101.0, 102.0, 103.0, 104.0, 105.0];
        assert_eq!(
            diff("throughput", Better::Higher, &up, &noise, "ops/s", o).verdict,
            Verdict::WithinNoise
        );
        assert_eq!(
            diff(
                "throughput",
                Better::Higher,
                &up[..2],
                &down[..2],
                "ops/s",
                o
            )
            .verdict,
            Verdict::UnjudgedImprovement
        );
    }
}
