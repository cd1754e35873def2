//! Trends across many races of one track and challenge: each task's metrics as a series in
//! race order, the change points in it (`edivisive`), and whether each is a regression given
//! the metric's direction. `runner trend` reads the stored races and renders this.

pub mod across;
pub mod edivisive;
mod render;
mod student;

use crate::compare::Better;
use crate::report::{Summary, TaskSummary};
use crate::results::{RaceHistograms, RaceRecord};
use serde::Serialize;

/// A change point needs a segment on each side.
pub const MIN_RACES: usize = 4;

/// A metric a trend follows, with the direction that is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrendMetric {
    Throughput,
    #[value(name = "service_time_p50")]
    ServiceTimeP50,
    #[value(name = "service_time_p99")]
    ServiceTimeP99,
    #[value(name = "latency_p50")]
    LatencyP50,
    #[value(name = "latency_p99")]
    LatencyP99,
    #[value(name = "error_rate")]
    ErrorRate,
    Capacity,
}

impl TrendMetric {
    pub const DEFAULT: [TrendMetric; 6] = [
        TrendMetric::Throughput,
        TrendMetric::ServiceTimeP50,
        TrendMetric::ServiceTimeP99,
        TrendMetric::LatencyP99,
        TrendMetric::ErrorRate,
        TrendMetric::Capacity,
    ];

    pub fn name(self) -> &'static str {
        match self {
            TrendMetric::Throughput => "throughput",
            TrendMetric::ServiceTimeP50 => "service_time_p50",
            TrendMetric::ServiceTimeP99 => "service_time_p99",
            TrendMetric::LatencyP50 => "latency_p50",
            TrendMetric::LatencyP99 => "latency_p99",
            TrendMetric::ErrorRate => "error_rate",
            TrendMetric::Capacity => "capacity",
        }
    }

    fn better(self) -> Better {
        match self {
            TrendMetric::Throughput | TrendMetric::Capacity => Better::Higher,
            _ => Better::Lower,
        }
    }

    /// The race's value for a task: the median across trials, merged percentiles, the error
    /// rate over every trial; None where the race cannot support it.
    pub(crate) fn read(self, t: &TaskSummary) -> Option<f64> {
        match self {
            TrendMetric::Throughput => t
                .throughput
                .filter(|_| t.completed_trials > 0)
                .map(|s| s.median),
            TrendMetric::ServiceTimeP50 => t.service_time_ms.at(50.0),
            TrendMetric::ServiceTimeP99 => t.service_time_ms.at(99.0),
            TrendMetric::LatencyP50 => t.latency_ms.at(50.0),
            TrendMetric::LatencyP99 => t.latency_ms.at(99.0),
            TrendMetric::ErrorRate => (t.completed_trials > 0).then_some(t.error_rate),
            TrendMetric::Capacity => t.capacity.map(|c| c.median),
        }
    }

    pub(crate) fn unit(self, throughput_unit: &str) -> String {
        match self {
            TrendMetric::Throughput => throughput_unit.to_string(),
            TrendMetric::Capacity => "ops/s".into(),
            TrendMetric::ErrorRate => "ratio".into(),
            _ => "ms".into(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct TrendOptions {
    /// A split is a change point when its t-test's p-value is at most this.
    pub max_p: f64,
    /// A change smaller than this share of the mean before it is not called a regression or
    /// an improvement.
    pub noise_threshold: f64,
}

/// One value of a series: the race it comes from.
#[derive(Debug, Clone, Serialize)]
pub struct Point {
    pub race: String,
    pub started_at: String,
    pub value: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    Regression,
    Improvement,
    /// Below the noise threshold.
    WithinNoise,
}

/// A change point of a series.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// The first race after the change.
    pub race: String,
    /// Its place in the series (0-based).
    pub index: usize,
    pub mean_before: f64,
    pub mean_after: f64,
    /// Races on each side, up to the neighbouring change points.
    pub races_before: usize,
    pub races_after: usize,
    pub change_percent: f64,
    pub p_value: f64,
    pub direction: Direction,
}

#[derive(Debug, Clone, Serialize)]
pub struct Series {
    pub task: String,
    pub sweep: String,
    pub metric: &'static str,
    pub unit: String,
    pub better: Better,
    pub points: Vec<Point>,
    pub changes: Vec<Change>,
}

impl Series {
    /// The change the newest race belongs to, when it is the last and a regression.
    pub fn newest_regression(&self) -> Option<&Change> {
        self.changes
            .last()
            .filter(|c| c.direction == Direction::Regression)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Trend {
    pub track: String,
    pub challenge: String,
    pub max_p: f64,
    pub noise_threshold: f64,
    /// The races, oldest first.
    pub races: Vec<String>,
    /// What differs between the races besides the system under test.
    pub warnings: Vec<String>,
    pub series: Vec<Series>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum TrendError {
    #[error("no stored race matches {0}")]
    NoRace(String),
    #[error("{found} races match {filter}: a change point needs at least {MIN_RACES} (two on each side)")]
    TooFew { found: usize, filter: String },
    #[error("the races are of {0}: give --track and --challenge to follow one")]
    Mixed(String),
}

/// Each task × sweep point of the races, with its throughput unit, in order of first appearance.
pub(crate) fn task_keys(summaries: &[Summary]) -> Vec<(String, String, String)> {
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for s in summaries {
        for t in &s.tasks {
            let key = (
                t.task.to_string(),
                t.sweep_label.clone(),
                t.record.slot.throughput_unit.as_str().to_string(),
            );
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
    }
    keys
}

/// A race's summary of one task at one sweep point.
pub(crate) fn task_in<'s, 'a>(
    s: &'s Summary<'a>,
    task: &str,
    sweep: &str,
) -> Option<&'s TaskSummary<'a>> {
    s.tasks
        .iter()
        .find(|t| t.task == task && t.sweep_label == sweep)
}

/// The trend of `races` (oldest first), all of one track and challenge.
pub fn trend(
    races: &[(RaceRecord, RaceHistograms)],
    metrics: &[TrendMetric],
    filter: &str,
    opts: TrendOptions,
) -> Result<Trend, TrendError> {
    let Some((first, _)) = races.first() else {
        return Err(TrendError::NoRace(filter.into()));
    };
    let kinds: std::collections::BTreeSet<(String, String)> = races
        .iter()
        .map(|(r, _)| (r.track.clone(), r.challenge.clone()))
        .collect();
    if kinds.len() > 1 {
        let listed: Vec<String> = kinds.iter().map(|(t, c)| format!("{t}/{c}")).collect();
        return Err(TrendError::Mixed(format!(
            "{} tracks and challenges ({})",
            kinds.len(),
            listed.join(", ")
        )));
    }
    if races.len() < MIN_RACES {
        return Err(TrendError::TooFew {
            found: races.len(),
            filter: filter.into(),
        });
    }
    let summaries: Vec<Summary> = races.iter().map(|(r, h)| Summary::new(r, h)).collect();
    let keys = task_keys(&summaries);
    let mut series = Vec::new();
    for (task, sweep, unit) in &keys {
        for &metric in metrics {
            let points: Vec<Point> = summaries
                .iter()
                .filter_map(|s| {
                    let t = task_in(s, task, sweep)?;
                    Some(Point {
                        race: s.race.race_id.clone(),
                        started_at: s.race.started_at.to_string(),
                        value: metric.read(t)?,
                    })
                })
                .collect();
            if points.len() < MIN_RACES {
                continue;
            }
            let changes = changes_of(&points, metric.better(), opts);
            series.push(Series {
                task: task.clone(),
                sweep: sweep.clone(),
                metric: metric.name(),
                unit: metric.unit(unit),
                better: metric.better(),
                points,
                changes,
            });
        }
    }
    Ok(Trend {
        track: first.track.clone(),
        challenge: first.challenge.clone(),
        max_p: opts.max_p,
        noise_threshold: opts.noise_threshold,
        races: races.iter().map(|(r, _)| r.race_id.clone()).collect(),
        warnings: differences(races),
        series,
    })
}

fn changes_of(points: &[Point], better: Better, opts: TrendOptions) -> Vec<Change> {
    let values: Vec<f64> = points.iter().map(|p| p.value).collect();
    edivisive::change_points(&values, opts.max_p)
        .into_iter()
        .map(|c| {
            let rel = if c.before.mean != 0.0 {
                c.after.mean / c.before.mean - 1.0
            } else {
                0.0
            };
            let worse = match better {
                Better::Higher => rel < 0.0,
                Better::Lower => rel > 0.0,
            };
            Change {
                race: points[c.index].race.clone(),
                index: c.index,
                mean_before: c.before.mean,
                mean_after: c.after.mean,
                races_before: c.before.n,
                races_after: c.after.n,
                change_percent: rel * 100.0,
                p_value: c.p_value,
                direction: if rel.abs() < opts.noise_threshold {
                    Direction::WithinNoise
                } else if worse {
                    Direction::Regression
                } else {
                    Direction::Improvement
                },
            }
        })
        .collect()
}

/// What differs across the races besides the system: the track file's revision, the track
/// parameters, the backend, the host.
pub(crate) fn differences(races: &[(RaceRecord, RaceHistograms)]) -> Vec<String> {
    let mut w = Vec::new();
    let mut distinct = |what: &str, values: Vec<String>| {
        let set: std::collections::BTreeSet<String> = values.into_iter().collect();
        if set.len() > 1 {
            let shown: Vec<String> = set.into_iter().take(5).collect();
            w.push(format!("the races mix {what}: {}", shown.join(" · ")));
        }
    };
    distinct(
        "track revisions (the track file changed between them)",
        races
            .iter()
            .filter_map(|(r, _)| r.track_revision.clone())
            .collect(),
    );
    distinct(
        "track parameters",
        races
            .iter()
            .map(|(r, _)| serde_json::to_string(&r.params).unwrap_or_default())
            .collect(),
    );
    distinct(
        "backends",
        races.iter().map(|(r, _)| r.backend.kind.clone()).collect(),
    );
    distinct(
        "hosts",
        races.iter().map(|(r, _)| r.host.hostname.clone()).collect(),
    );
    w
}
