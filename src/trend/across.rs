//! Several races as one report (Rally's RFC #2176): per task and metric, the mean, median, min,
//! max and coefficient of variation of the races' values, and the latency and service-time
//! percentiles of all the races' samples together, from their histograms added (never
//! percentiles averaged, which would mean nothing).

use super::{task_in, task_keys, TrendMetric};
use crate::metrics::{new_histogram, Percentiles};
use crate::report::{Summary, ThroughputStats};
use crate::results::{add_histogram, RaceHistograms, RaceRecord};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Across {
    pub races: Vec<String>,
    pub warnings: Vec<String>,
    pub rows: Vec<AcrossRow>,
    pub merged: Vec<MergedRow>,
}

/// One metric of one task across the races.
#[derive(Debug, Clone, Serialize)]
pub struct AcrossRow {
    pub task: String,
    pub sweep: String,
    pub metric: &'static str,
    pub unit: String,
    /// Races that had a value.
    pub races: usize,
    pub stats: ThroughputStats,
    /// Standard deviation over the mean (sample, n − 1); None with fewer than two races.
    pub cv: Option<f64>,
}

/// A task's samples of every race together.
#[derive(Debug, Clone, Serialize)]
pub struct MergedRow {
    pub task: String,
    pub sweep: String,
    pub service_time_ms: Percentiles,
    pub latency_ms: Percentiles,
}

pub fn across(races: &[(RaceRecord, RaceHistograms)], metrics: &[TrendMetric]) -> Across {
    let summaries: Vec<Summary> = races.iter().map(|(r, h)| Summary::new(r, h)).collect();
    let keys = task_keys(&summaries);
    let mut rows = Vec::new();
    let mut merged = Vec::new();
    for (task, sweep, unit) in &keys {
        for &metric in metrics {
            let values: Vec<f64> = summaries
                .iter()
                .filter_map(|s| {
                    let t = task_in(s, task, sweep)?;
                    metric.read(t)
                })
                .collect();
            if values.is_empty() {
                continue;
            }
            let stats = ThroughputStats::of(&values);
            rows.push(AcrossRow {
                task: task.clone(),
                sweep: sweep.clone(),
                metric: metric.name(),
                unit: metric.unit(unit),
                races: values.len(),
                stats,
                cv: coefficient_of_variation(&values),
            });
        }
        let (mut service, mut latency) = (new_histogram(), new_histogram());
        let mut weighted = (0.0, 0.0, 0u64);
        for (s, (_, h)) in summaries.iter().zip(races) {
            let Some(t) = task_in(s, task, sweep) else {
                continue;
            };
            if let Some((sv, la)) = h.merged(t.task_index) {
                add_histogram(&mut service, &sv);
                add_histogram(&mut latency, &la);
                let n = t.service_time_ms.count;
                weighted = (
                    weighted.0 + t.service_time_ms.mean * n as f64,
                    weighted.1 + t.latency_ms.mean * n as f64,
                    weighted.2 + n,
                );
            }
        }
        if !service.is_empty() {
            let n = weighted.2.max(1) as f64;
            merged.push(MergedRow {
                task: task.clone(),
                sweep: sweep.clone(),
                service_time_ms: Percentiles::from_histogram(&service, Some(weighted.0 / n)),
                latency_ms: Percentiles::from_histogram(&latency, Some(weighted.1 / n)),
            });
        }
    }
    Across {
        races: races.iter().map(|(r, _)| r.race_id.clone()).collect(),
        warnings: super::differences(races),
        rows,
        merged,
    }
}

fn coefficient_of_variation(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    (mean != 0.0).then(|| var.sqrt() / mean.abs())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_coefficient_of_variation_is_the_sample_spread_over_the_mean() {
        let cv = super::coefficient_of_variation(&[90.0, 100.0, 110.0]).unwrap();
        assert!((cv - 0.1).abs() < 1e-12, "{cv}");
        assert_eq!(super::coefficient_of_variation(&[5.0]), None);
    }
}
