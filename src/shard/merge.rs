//! The shards of one race, merged into one race exactly: histograms added (so every
//! percentile is that of one histogram holding every sample), counts and errors summed,
//! throughput over the union of the measured windows on the shared clock, and each shard's
//! own numbers kept beside (`per_shard`). Shard 0 merges as the race ends; `runner merge`
//! does the same from stored shard races.

use crate::metrics::{
    decode_histogram, encode_histogram, measured_seconds, new_histogram, Percentiles,
};
use crate::results::*;
use hdrhistogram::Histogram;
use std::collections::BTreeMap;

/// One shard's stored race.
pub struct ShardRace {
    pub host: String,
    pub race: RaceRecord,
    pub histograms: HistogramFile,
}

/// What is known about the shards besides their races.
#[derive(Default)]
pub struct MergeContext {
    /// Shards with no results, and why.
    pub missing: BTreeMap<u32, String>,
    pub barriers: Vec<BarrierRecord>,
    /// Why the race was stopped on every shard, when it was.
    pub failure: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("no shard's results to merge")]
    Nothing,
    #[error("race {0} is not a shard of a race (it was run whole)")]
    NotAShard(String),
    #[error("{0}")]
    Mismatch(String),
    #[error("shard {shard}: {what}")]
    Histogram { shard: u32, what: String },
}

/// Merges shard races into the race `race_id`.
pub fn merge(
    race_id: &str,
    mut shards: Vec<ShardRace>,
    ctx: MergeContext,
) -> Result<(RaceRecord, HistogramFile), MergeError> {
    shards.sort_by_key(|s| s.race.shard.as_ref().map_or(0, |r| r.index));
    let first = shards.first().ok_or(MergeError::Nothing)?;
    let role = |s: &ShardRace| {
        s.race
            .shard
            .clone()
            .ok_or_else(|| MergeError::NotAShard(s.race.race_id.clone()))
    };
    let count = role(first)?.count;
    for s in &shards {
        check_same(first, s, count)?;
    }
    let mut record = first.race.clone();
    record.race_id = race_id.to_string();
    record.pid = None;
    record.shard = None;
    record.started_at = shards
        .iter()
        .map(|s| s.race.started_at)
        .min_by_key(|t| t.at)
        .unwrap_or(record.started_at);
    record.finished_at = shards
        .iter()
        .filter_map(|s| s.race.finished_at)
        .max_by_key(|t| t.at);
    let summary = shards_summary(&shards, count, ctx.missing, ctx.barriers);
    (record.status, record.stop_reason) = status(&shards, &summary.missing, ctx.failure);
    record.shards = Some(summary);
    let histograms = merge_trials(&shards, &mut record)?;
    Ok((record, histograms))
}

/// Which shards are in the merged race, which are missing and why, and each step's rendezvous
/// with the least slack any shard had.
fn shards_summary(
    shards: &[ShardRace],
    count: u32,
    mut missing: BTreeMap<u32, String>,
    mut barriers: Vec<BarrierRecord>,
) -> ShardsSummary {
    for i in 0..count {
        if !shards
            .iter()
            .any(|s| s.race.shard.as_ref().is_some_and(|r| r.index == i))
        {
            missing.entry(i).or_insert_with(|| "no results".into());
        }
    }
    for b in &mut barriers {
        b.min_slack_ms = shards
            .iter()
            .flat_map(|s| s.race.shard.iter().flat_map(|r| &r.start_slack_ms))
            .filter(|(step, _)| *step == b.step)
            .map(|(_, slack)| *slack)
            .reduce(f64::min);
    }
    ShardsSummary {
        count,
        merged: shards
            .iter()
            .map(|s| (s.race.shard.as_ref().map_or(0, |r| r.index), s.host.clone()))
            .collect(),
        missing,
        barriers,
    }
}

/// Every trial of every task merged across the shards that ran it, into `record`; the merged
/// histograms.
fn merge_trials(
    shards: &[ShardRace],
    record: &mut RaceRecord,
) -> Result<HistogramFile, MergeError> {
    let mut histograms = HistogramFile {
        format: FORMAT_VERSION,
        trials: Vec::new(),
    };
    // Each shard's histograms by (task, trial).
    let stored: Vec<BTreeMap<(usize, u64), &TrialHistograms>> = shards
        .iter()
        .map(|s| {
            s.histograms
                .trials
                .iter()
                .map(|t| ((t.task_index, t.trial), t))
                .collect()
        })
        .collect();
    for (task_index, task) in record.tasks.iter_mut().enumerate() {
        let mut trial_numbers: Vec<u64> = shards
            .iter()
            .flat_map(|s| s.race.tasks[task_index].trials.iter().map(|t| t.trial))
            .collect();
        trial_numbers.sort_unstable();
        trial_numbers.dedup();
        task.trials.clear();
        for trial in trial_numbers {
            let parts: Vec<ShardPart> = shards
                .iter()
                .zip(&stored)
                .filter_map(|(s, h)| {
                    let record = s.race.tasks[task_index]
                        .trials
                        .iter()
                        .find(|t| t.trial == trial)?;
                    Some(ShardPart {
                        shard: s.race.shard.as_ref().map_or(0, |r| r.index),
                        record,
                        histograms: h.get(&(task_index, trial)).copied(),
                    })
                })
                .collect();
            let (merged, h) = merge_trial(task_index, trial, &parts)?;
            task.trials.push(merged);
            histograms.trials.push(h);
        }
    }
    Ok(histograms)
}

fn check_same(first: &ShardRace, other: &ShardRace, count: u32) -> Result<(), MergeError> {
    let (a, b) = (&first.race, &other.race);
    let role = b
        .shard
        .as_ref()
        .ok_or_else(|| MergeError::NotAShard(b.race_id.clone()))?;
    let ra = a.shard.as_ref().expect("checked first");
    let differ = |what: &str| {
        MergeError::Mismatch(format!(
            "shard {} and shard {} are not parts of one race: their {what} differ",
            ra.index, role.index
        ))
    };
    if role.count != count || role.race != ra.race {
        return Err(differ("race ids or shard counts"));
    }
    if a.track != b.track || a.challenge != b.challenge || a.params != b.params {
        return Err(differ("tracks, challenges or parameters"));
    }
    if a.tasks.len() != b.tasks.len()
        || a.tasks.iter().zip(&b.tasks).any(|(x, y)| {
            x.slot.task != y.slot.task
                || x.slot.sweep != y.slot.sweep
                || x.slot.clients != y.slot.clients
        })
    {
        return Err(differ("tasks"));
    }
    Ok(())
}

/// The merged race's status: the worst of the shards', and incomplete when one is missing.
fn status(
    shards: &[ShardRace],
    missing: &BTreeMap<u32, String>,
    failure: Option<String>,
) -> (RaceStatus, Option<String>) {
    if let Some(f) = failure {
        return (RaceStatus::Aborted, Some(f));
    }
    let index = |s: &ShardRace| s.race.shard.as_ref().map_or(0, |r| r.index);
    for wanted in [
        RaceStatus::Aborted,
        RaceStatus::StoreFailed,
        RaceStatus::Interrupted,
    ] {
        if let Some(s) = shards.iter().find(|s| s.race.status == wanted) {
            let why = s.race.stop_reason.as_deref().unwrap_or(wanted.as_str());
            return (wanted, Some(format!("shard {}: {why}", index(s))));
        }
    }
    let unfinished: Vec<String> = shards
        .iter()
        .filter(|s| matches!(s.race.status, RaceStatus::Running | RaceStatus::Incomplete))
        .map(|s| format!("shard {} did not finish", index(s)))
        .chain(
            missing
                .iter()
                .map(|(i, why)| format!("shard {i} is missing: {why}")),
        )
        .collect();
    if unfinished.is_empty() {
        (RaceStatus::Completed, None)
    } else {
        (RaceStatus::Incomplete, Some(unfinished.join("; ")))
    }
}

struct ShardPart<'a> {
    shard: u32,
    record: &'a TrialRecord,
    histograms: Option<&'a TrialHistograms>,
}

fn decode(shard: u32, what: &str, text: &str) -> Result<Histogram<u64>, MergeError> {
    decode_histogram(text).map_err(|e| MergeError::Histogram {
        shard,
        what: format!("the {what} histogram cannot be read: {e}"),
    })
}

/// Adds a shard's histogram; one whose values lie beyond the runner's range (a corrupted
/// file, a hostile peer) is an error naming the shard, not a panic.
fn add(into: &mut Histogram<u64>, h: &Histogram<u64>, shard: u32) -> Result<(), MergeError> {
    into.add(h).map_err(|e| MergeError::Histogram {
        shard,
        what: format!("a histogram does not fit the runner's range: {e:?}"),
    })
}

/// The union's length of intervals, in the intervals' unit.
fn union_length(mut intervals: Vec<(f64, f64)>) -> f64 {
    intervals.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut total = 0.0;
    let mut current: Option<(f64, f64)> = None;
    for (a, b) in intervals {
        current = match current {
            Some((s, e)) if a <= e => Some((s, e.max(b))),
            Some((s, e)) => {
                total += e - s;
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    total + current.map_or(0.0, |(s, e)| e - s)
}

fn merge_trial(
    task_index: usize,
    trial: u64,
    parts: &[ShardPart<'_>],
) -> Result<(TrialRecord, TrialHistograms), MergeError> {
    let mut m = summed_counts(parts);
    let (mut service, mut latency) = (new_histogram(), new_histogram());
    let mut part_hists: BTreeMap<String, (Histogram<u64>, Histogram<u64>)> = BTreeMap::new();
    let (mut service_sum, mut latency_sum) = (0.0, 0.0);
    for p in parts {
        let t = p.record;
        for (kind, n) in &t.errors_by_kind {
            *m.errors_by_kind.entry(*kind).or_default() += n;
        }
        for (kind, msg) in &t.error_messages {
            m.error_messages.entry(*kind).or_insert_with(|| msg.clone());
        }
        service_sum += t.service_time_ms.mean_if_any().unwrap_or(0.0) * t.operations as f64;
        latency_sum += t.latency_ms.mean_if_any().unwrap_or(0.0) * t.operations as f64;
        for (label, part) in &t.parts {
            let e = m.parts.entry(label.clone()).or_insert(PartRecord {
                requests: 0,
                service_time_ms: None,
                latency_ms: None,
            });
            e.requests += part.requests;
        }
        let at = (task_index, trial);
        add_shard_histograms(p, at, &mut service, &mut latency, &mut part_hists)?;
    }
    let ops = m.operations as f64;
    let mean = |s: f64| (m.operations > 0).then(|| s / ops);
    m.service_time_ms = Percentiles::from_histogram(&service, mean(service_sum));
    m.latency_ms = Percentiles::from_histogram(&latency, mean(latency_sum));
    for (label, (s, l)) in &part_hists {
        if let Some(p) = m.parts.get_mut(label) {
            p.service_time_ms = Some(Percentiles::from_histogram(s, None));
            p.latency_ms = Some(Percentiles::from_histogram(l, None));
        }
    }
    m.error_rate = crate::metrics::error_rate(m.successes, m.errors);
    merge_windows(&mut m, parts)?;
    m.per_shard = parts
        .iter()
        .map(|p| ShardTrial {
            shard: p.shard,
            operations: p.record.operations,
            errors: p.record.errors,
            units: p.record.units,
            throughput: p.record.throughput,
            measured_seconds: p.record.measured_seconds,
            service_time_ms: p.record.service_time_ms,
            latency_ms: p.record.latency_ms,
            failure: p.record.failure.clone(),
        })
        .collect();
    let histograms = TrialHistograms {
        task_index,
        trial,
        service_time_us: encode_histogram(&service),
        latency_us: encode_histogram(&latency),
        parts: part_hists
            .iter()
            .map(|(label, (s, l))| {
                (
                    label.clone(),
                    PartHistograms {
                        service_time_us: encode_histogram(s),
                        latency_us: encode_histogram(l),
                    },
                )
            })
            .collect(),
    };
    Ok((m, histograms))
}

/// The shards' counts added, the earliest start, the longest wall time, the busiest shard's
/// own usage; errors, parts and latencies are added by the caller.
fn summed_counts(parts: &[ShardPart<'_>]) -> TrialRecord {
    let first = parts[0].record;
    let mut m = first.clone();
    let sum = |f: fn(&TrialRecord) -> u64| parts.iter().map(|p| f(p.record)).sum::<u64>();
    m.operations = sum(|t| t.operations);
    m.warmup_operations = sum(|t| t.warmup_operations);
    m.warmup_units = sum(|t| t.warmup_units);
    m.successes = sum(|t| t.successes);
    m.errors = sum(|t| t.errors);
    m.units = sum(|t| t.units);
    m.requests = sum(|t| t.requests);
    m.hits = sum(|t| t.hits);
    m.interrupted_operations = sum(|t| t.interrupted_operations);
    m.late_starts = sum(|t| t.late_starts);
    m.partial_searches = sum(|t| t.partial_searches);
    m.errors_by_kind.clear();
    m.error_messages.clear();
    m.parts.clear();
    // Shards keep no samples (`--keep-samples` is refused with `--shard`), and each shard's
    // seconds are its own: the merged trial's throughput by second is the shared clock's.
    m.samples = None;
    m.timeline.clear();
    m.measured_s = None;
    m.interrupted = parts.iter().any(|p| p.record.interrupted);
    let failures: Vec<String> = parts
        .iter()
        .filter_map(|p| Some(format!("shard {}: {}", p.shard, p.record.failure.as_ref()?)))
        .collect();
    m.failure = (!failures.is_empty()).then(|| failures.join("; "));
    m.started_at = parts
        .iter()
        .map(|p| p.record.started_at)
        .min_by_key(|t| t.at)
        .unwrap_or(m.started_at);
    m.wall_seconds = parts
        .iter()
        .map(|p| p.record.wall_seconds)
        .fold(0.0, f64::max);
    m.server = parts.iter().find_map(|p| p.record.server.clone());
    // Every shard's answers' recall, added.
    m.recall =
        crate::results::RecallRecord::merged(parts.iter().filter_map(|p| p.record.recall.as_ref()))
            .as_ref()
            .and_then(crate::results::RecallRecord::of);
    // The busiest shard's own usage: if one load driver was saturated, the report says so.
    m.driver = parts
        .iter()
        .filter_map(|p| p.record.driver.as_ref())
        .max_by(|a, b| a.peak_share().total_cmp(&b.peak_share()))
        .cloned();
    m
}

/// One shard's histograms of a trial added to the merged ones (a shard that measured
/// something must have them).
fn add_shard_histograms(
    p: &ShardPart<'_>,
    (task_index, trial): (usize, u64),
    service: &mut Histogram<u64>,
    latency: &mut Histogram<u64>,
    part_hists: &mut BTreeMap<String, (Histogram<u64>, Histogram<u64>)>,
) -> Result<(), MergeError> {
    let t = p.record;
    let Some(h) = p.histograms else {
        if t.operations > 0 {
            return Err(MergeError::Histogram {
                shard: p.shard,
                what: format!(
                    "task #{} trial {} has no histograms",
                    task_index + 1,
                    trial + 1
                ),
            });
        }
        return Ok(());
    };
    add(
        service,
        &decode(p.shard, "service time", &h.service_time_us)?,
        p.shard,
    )?;
    add(
        latency,
        &decode(p.shard, "latency", &h.latency_us)?,
        p.shard,
    )?;
    for (label, ph) in &h.parts {
        let e = part_hists
            .entry(label.clone())
            .or_insert_with(|| (new_histogram(), new_histogram()));
        add(
            &mut e.0,
            &decode(p.shard, label, &ph.service_time_us)?,
            p.shard,
        )?;
        add(&mut e.1, &decode(p.shard, label, &ph.latency_us)?, p.shard)?;
    }
    Ok(())
}

/// Throughput over the union of the shards' measured windows on the shared clock, and the
/// per-second series from the shards' counts added second by second.
fn merge_windows(m: &mut TrialRecord, parts: &[ShardPart<'_>]) -> Result<(), MergeError> {
    let clocks: Vec<(u32, &TrialClock)> = parts
        .iter()
        .map(|p| {
            p.record
                .clock
                .as_ref()
                .map(|c| (p.shard, c))
                .ok_or_else(|| {
                    MergeError::Mismatch(format!(
                        "shard {}'s trials carry no shared clock (stored by an older runner?)",
                        p.shard
                    ))
                })
        })
        .collect::<Result<_, _>>()?;
    let base = clocks.iter().map(|(_, c)| c.origin_ns).min().unwrap_or(0);
    let offset = |c: &TrialClock| (c.origin_ns - base) as f64 / 1e9;
    let windows: Vec<(f64, f64)> = clocks
        .iter()
        .filter_map(|(_, c)| c.window_s.map(|(a, b)| (offset(c) + a, offset(c) + b)))
        .collect();
    let mut by_second: Vec<u64> = Vec::new();
    for (_, c) in &clocks {
        // Shards start on one Go, so their time zeros agree to the clock sync's error;
        // counts are added in the second of the earliest time zero they fall in.
        let shift = offset(c).round() as usize;
        if by_second.len() < shift + c.units_by_second.len() {
            by_second.resize(shift + c.units_by_second.len(), 0);
        }
        for (k, n) in c.units_by_second.iter().enumerate() {
            by_second[shift + k] += n;
        }
    }
    let start = windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
    let end = windows
        .iter()
        .map(|w| w.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let seconds = union_length(windows.clone());
    m.measured_seconds = seconds;
    m.throughput = if seconds > 0.0 {
        m.units as f64 / seconds
    } else {
        0.0
    };
    m.requests_per_second = if seconds > 0.0 {
        m.requests as f64 / seconds
    } else {
        0.0
    };
    m.throughput_per_second = if windows.is_empty() {
        Vec::new()
    } else {
        measured_seconds(&by_second, start, end)
    };
    m.clock = Some(TrialClock {
        origin_ns: base,
        window_s: (!windows.is_empty()).then_some((start, end)),
        units_by_second: by_second,
    });
    Ok(())
}

#[cfg(test)]
mod tests;
