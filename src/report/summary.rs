//! Aggregates across trials: throughput statistics, and percentiles of all trials' samples
//! together (merged histograms, not averaged percentiles, which would be meaningless).

use crate::metrics::Percentiles;
use crate::results::{RaceHistograms, RaceRecord, TaskRecord};
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, Serialize, Default, PartialEq)]
pub struct ThroughputStats {
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
}

impl ThroughputStats {
    pub fn of(values: &[f64]) -> ThroughputStats {
        if values.is_empty() {
            return ThroughputStats::default();
        }
        let mut v = values.to_vec();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        ThroughputStats {
            min: v[0],
            median,
            mean: v.iter().sum::<f64>() / n as f64,
            max: v[n - 1],
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskSummary<'a> {
    /// The stored task (already in the race's own `tasks`; not repeated in JSON).
    #[serde(skip)]
    pub record: &'a TaskRecord,
    /// Index into the race's `tasks`.
    pub task_index: usize,
    pub task: &'a str,
    pub sweep_label: String,
    pub completed_trials: usize,
    /// Across complete trials; `None` for a task of one operation per trial, which has a
    /// duration (`duration_ms`), not a rate.
    pub throughput: Option<ThroughputStats>,
    /// The duration of a one-operation task's operation, across its complete trials (ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<ThroughputStats>,
    pub service_time_ms: Percentiles,
    pub latency_ms: Percentiles,
    pub operations: u64,
    pub successes: u64,
    pub errors: u64,
    pub error_rate: f64,
    pub errors_by_kind: BTreeMap<crate::results::ErrorKindRecord, u64>,
    pub units: u64,
    pub hits: u64,
    /// The task's thresholds, judged on these results.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::thresholds::Judged>,
    /// redis-benchmark's and a metrics timer's views, for key-value tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_value: Option<super::kv::KvViews>,
    /// A capacity search's result across its searches (trials), ops/s.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<ThroughputStats>,
    /// A ramp's stages, intended against achieved, per trial.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ramp_stages: Vec<Vec<super::capacity::StageSummary>>,
    /// A vector search's recall@k over the measured answers of all its complete trials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<crate::results::RecallRecord>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary<'a> {
    pub race: &'a RaceRecord,
    pub tasks: Vec<TaskSummary<'a>>,
}

impl<'a> Summary<'a> {
    /// Whether every threshold of every reported task passed (true when there are none).
    pub fn thresholds_pass(&self) -> bool {
        self.tasks
            .iter()
            .flat_map(|t| &t.thresholds)
            .all(|j| j.verdict == crate::thresholds::Verdict::Pass)
    }

    pub fn new(race: &'a RaceRecord, histograms: &RaceHistograms) -> Summary<'a> {
        let tasks = race
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.slot.reported)
            .map(|(i, t)| summarise(i, t, histograms))
            .collect();
        Summary { race, tasks }
    }
}

fn summarise<'a>(index: usize, t: &'a TaskRecord, histograms: &RaceHistograms) -> TaskSummary<'a> {
    let complete: Vec<&crate::results::TrialRecord> = t.complete_trials().collect();
    let single = !complete.is_empty() && complete.iter().all(|tr| tr.is_single_operation());
    let stats = |read: fn(&crate::results::TrialRecord) -> f64| {
        ThroughputStats::of(&complete.iter().map(|tr| read(tr)).collect::<Vec<_>>())
    };
    let (throughput, duration_ms) = if single {
        (None, Some(stats(|tr| tr.service_time_ms.mean)))
    } else {
        (Some(stats(|tr| tr.throughput)), None)
    };
    let operations: u64 = t.trials.iter().map(|tr| tr.operations).sum();
    let weighted_mean = |f: fn(&crate::results::TrialRecord) -> f64| {
        (operations > 0).then(|| {
            t.trials
                .iter()
                .map(|tr| f(tr) * tr.operations as f64)
                .sum::<f64>()
                / operations as f64
        })
    };
    let merged = histograms.merged(index);
    let (service_time_ms, latency_ms) = if let Some((service, latency)) = &merged {
        (
            Percentiles::from_histogram(service, weighted_mean(|tr| tr.service_time_ms.mean)),
            Percentiles::from_histogram(latency, weighted_mean(|tr| tr.latency_ms.mean)),
        )
    } else {
        let first = t.trials.first();
        (
            first.map(|f| f.service_time_ms).unwrap_or_default(),
            first.map(|f| f.latency_ms).unwrap_or_default(),
        )
    };
    let mut errors_by_kind = BTreeMap::new();
    for tr in &t.trials {
        for (k, n) in &tr.errors_by_kind {
            *errors_by_kind.entry(*k).or_insert(0) += n;
        }
    }
    let errors: u64 = t.trials.iter().map(|tr| tr.errors).sum();
    let successes: u64 = t.trials.iter().map(|tr| tr.successes).sum();
    let error_rate = error_rate_of(t, successes, errors);
    let recall = recall_of(&complete);
    let measured = crate::thresholds::Measured {
        service_time_ms: &service_time_ms,
        latency_ms: &latency_ms,
        error_rate,
        throughput: throughput
            .filter(|_| !complete.is_empty())
            .map(|th| th.mean),
        target: t.slot.target_throughput.map(|r| r.0),
        unit: t.slot.throughput_unit.as_str(),
        recall: recall.as_ref().map(|r| crate::thresholds::RecallMeasured {
            mean: r.mean,
            min: r.min,
            p5: r.p5,
            p50: r.p50,
        }),
    };
    let thresholds = t
        .slot
        .thresholds
        .iter()
        .map(|th| th.judge(&measured))
        .collect();
    TaskSummary {
        thresholds,
        record: t,
        task_index: index,
        task: &t.slot.task,
        sweep_label: t.sweep_label(),
        completed_trials: complete.len(),
        throughput,
        duration_ms,
        service_time_ms,
        latency_ms,
        operations,
        successes,
        errors,
        error_rate,
        errors_by_kind,
        units: t.trials.iter().map(|tr| tr.units).sum(),
        hits: t.trials.iter().map(|tr| tr.hits).sum(),
        capacity: capacity_found(t),
        ramp_stages: ramp_stages(t),
        recall,
        key_value: merged.as_ref().and_then(|(_, latency)| {
            super::kv::views(index, t, latency, latency_ms.mean_if_any(), histograms)
        }),
    }
}

/// Errors over the operations that ended; an imported race counts no operations, and its
/// trials carry the rate its store kept.
fn error_rate_of(t: &TaskRecord, successes: u64, errors: u64) -> f64 {
    if successes + errors > 0 || t.trials.is_empty() {
        crate::metrics::error_rate(successes, errors)
    } else {
        t.trials.iter().map(|tr| tr.error_rate).sum::<f64>() / t.trials.len() as f64
    }
}

/// Recall over every measured answer of the trials: their histograms added.
fn recall_of(trials: &[&crate::results::TrialRecord]) -> Option<crate::results::RecallRecord> {
    let merged =
        crate::results::RecallRecord::merged(trials.iter().filter_map(|tr| tr.recall.as_ref()))?;
    crate::results::RecallRecord::of(&merged)
}

/// The capacities a task's searches found, across them.
fn capacity_found(t: &TaskRecord) -> Option<ThroughputStats> {
    let found: Vec<f64> = t
        .trials
        .iter()
        .filter_map(|tr| tr.capacity.as_ref()?.capacity)
        .collect();
    (!found.is_empty()).then(|| ThroughputStats::of(&found))
}

/// A ramped task's stages, intended against achieved, per trial.
fn ramp_stages(t: &TaskRecord) -> Vec<Vec<super::capacity::StageSummary>> {
    match &t.slot.ramp {
        Some(ramp) => t
            .trials
            .iter()
            .filter_map(|tr| Some(super::capacity::stages(ramp, tr.rate_by_second.as_ref()?)))
            .collect(),
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn throughput_stats() {
        let s = ThroughputStats::of(&[3.0, 1.0, 2.0, 10.0]);
        assert_eq!(
            s,
            ThroughputStats {
                min: 1.0,
                median: 2.5,
                mean: 4.0,
                max: 10.0
            }
        );
        assert_eq!(ThroughputStats::of(&[5.0]).median, 5.0);
    }
}
