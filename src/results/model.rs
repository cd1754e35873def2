//! The stored race. This is the single serde model every report reads, so CSV, markdown and
//! JSON cannot drift apart; what other layers hand over is stored in `schema`'s types.

use super::schema::{
    BackendRecord, DriverRecord, ErrorKindRecord, OnErrorRecord, ServerRecord, SlotRecord,
};
use crate::metrics::Percentiles;
use crate::units::Timestamp;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Version of the stored format; loading a newer one is an error, not a guess. Format 2
/// stores `null` for a percentile too few samples support (format 1 stored a number); this
/// runner reads both.
pub const FORMAT_VERSION: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RaceStatus {
    /// Still running, or killed before it could say otherwise.
    Running,
    Completed,
    /// Stopped by Ctrl-C; completed trials are kept.
    Interrupted,
    /// Stopped by `--on-error abort` or a failed reset.
    Aborted,
    /// Marked running, but the process that ran it is gone (killed): only the trials stored
    /// before that are there. Never written; derived when a race is read.
    Incomplete,
    /// The race ended but its results could not be consolidated (a full disk): the trials
    /// stored as they ended are there, and `stop_reason` says what failed.
    StoreFailed,
}

impl RaceStatus {
    /// The name stored in race.json and shown in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            RaceStatus::Running => "running",
            RaceStatus::Completed => "completed",
            RaceStatus::Interrupted => "interrupted",
            RaceStatus::Aborted => "aborted",
            RaceStatus::Incomplete => "incomplete",
            RaceStatus::StoreFailed => "store-failed",
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub arch: String,
    pub cpus: usize,
    pub memory_bytes: Option<u64>,
    pub runner_version: String,
}

impl HostInfo {
    pub fn current() -> HostInfo {
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .or_else(|_| std::fs::read_to_string("/etc/hostname"))
            .map(|s| s.trim().to_string())
            .unwrap_or_else(|_| "unknown".into());
        let memory_bytes = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
            let line = m.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kb * 1024)
        });
        HostInfo {
            hostname,
            os: std::env::consts::OS.into(),
            arch: std::env::consts::ARCH.into(),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            memory_bytes,
            runner_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RaceRecord {
    pub format: u32,
    pub race_id: String,
    pub status: RaceStatus,
    /// Why the race stopped early, for interrupted or aborted races.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    pub started_at: Timestamp,
    #[serde(default)]
    pub finished_at: Option<Timestamp>,
    /// Process id of the runner while the race runs; tells a killed race from a running one.
    #[serde(default)]
    pub pid: Option<u32>,
    pub track: String,
    pub track_path: String,
    /// A digest of the track file as raced (FNV-1a of its bytes): races of one track whose
    /// file changed in between are told apart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub track_revision: Option<String>,
    pub challenge: String,
    pub test_mode: bool,
    pub params: Map<String, Value>,
    pub backend: BackendRecord,
    /// Hosts of a network backend (never credentials).
    #[serde(default)]
    pub target_hosts: Vec<String>,
    pub on_error: OnErrorRecord,
    #[serde(default)]
    pub user_tags: BTreeMap<String, String>,
    pub host: HostInfo,
    /// Every way this race differs from what the track asks (or what Rally would do): each
    /// report shows them at the top.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deviations: Vec<String>,
    /// This race is one shard of a race run by several processes (see `shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardRole>,
    /// This race was merged from the shards of one race.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shards: Option<ShardsSummary>,
    pub tasks: Vec<TaskRecord>,
}

/// A shard's place in the race it is part of.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardRole {
    pub index: u32,
    pub count: u32,
    /// The merged race's id; this shard's own is `<race>/shard-<index>`.
    pub race: String,
    /// Where the shards met (shard 0's rendezvous).
    pub coordinator: String,
    /// This machine's clock minus the coordinator's, as measured at the rendezvous (the
    /// shortest of several round trips), and that round trip.
    pub clock_offset_ms: f64,
    pub round_trip_ms: f64,
    /// For each step (by its index in the plan): how long before the common start this shard
    /// heard of it, in ms; negative when it heard late and started late.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub start_slack_ms: Vec<(usize, f64)>,
}

/// How a merged race was put together.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct ShardsSummary {
    pub count: u32,
    /// The shards whose results are in this race, with the host each ran on.
    pub merged: BTreeMap<u32, String>,
    /// The shards whose results are not, and why.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub missing: BTreeMap<u32, String>,
    /// Each step's rendezvous, when shard 0 merged the race as it ended.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub barriers: Vec<BarrierRecord>,
}

/// One meeting of the shards before a step.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BarrierRecord {
    pub step: usize,
    pub what: String,
    /// From the first shard's arrival to the last's: how far apart the shards finished the
    /// step before.
    pub arrival_spread_ms: f64,
    /// From the last arrival to the common start: the rendezvous's own cost.
    pub start_after_ms: f64,
    /// The least time any shard had between hearing of the start and the start (negative: a
    /// shard started that late), from the shards' own records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_slack_ms: Option<f64>,
}

/// A shard's trial on the race's shared clock, for the merge.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TrialClock {
    /// The trial's time zero: nanoseconds since the Unix epoch on the coordinator's clock.
    pub origin_ns: u64,
    /// The measured window, in seconds from the time zero.
    pub window_s: Option<(f64, f64)>,
    /// Units finished in each whole second from the time zero.
    pub units_by_second: Vec<u64>,
}

/// One shard's numbers in a merged trial.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ShardTrial {
    pub shard: u32,
    pub operations: u64,
    pub errors: u64,
    pub units: u64,
    pub throughput: f64,
    pub measured_seconds: f64,
    pub service_time_ms: Percentiles,
    pub latency_ms: Percentiles,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
}

/// One task at one sweep point as the plan had it, with the trials that ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    #[serde(flatten)]
    pub slot: SlotRecord,
    pub trials: Vec<TrialRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialRecord {
    pub trial: u64,
    pub started_at: Timestamp,
    pub wall_seconds: f64,
    /// True when Ctrl-C or an abort cut the trial short: its numbers cover part of the work.
    pub interrupted: bool,
    /// The runner's own CPU and memory during the trial (absent in races stored before it was
    /// sampled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<DriverRecord>,
    /// The server's statistics over the trial (`_nodes/stats`, `INFO`), when the backend
    /// reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerRecord>,
    /// Why the server's statistics could not be read, when they could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_stats_error: Option<String>,
    /// Operations in flight at the interruption, dropped unfinished (not successes, not
    /// errors, not timed).
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub interrupted_operations: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// Achieved throughput over the measured window, in `throughput_unit`.
    pub throughput: f64,
    pub measured_seconds: f64,
    pub operations: u64,
    pub warmup_operations: u64,
    /// Units done by warmup operations (e.g. documents indexed before measuring began).
    #[serde(default)]
    pub warmup_units: u64,
    pub successes: u64,
    pub errors: u64,
    pub errors_by_kind: BTreeMap<ErrorKindRecord, u64>,
    /// The first message of each error kind.
    #[serde(default)]
    pub error_messages: BTreeMap<ErrorKindRecord, String>,
    pub error_rate: f64,
    /// Documents indexed (bulk) or operations done.
    pub units: u64,
    /// Requests (commands) sent by measured operations: N per operation of an N-deep pipeline.
    #[serde(default)]
    pub requests: u64,
    /// Requests per second over the measured window.
    #[serde(default)]
    pub requests_per_second: f64,
    /// Sum of search hits (hits.total) over measured operations; keys found by key-value gets.
    pub hits: u64,
    /// Requests by labelled part of the operation (a key-value mix's achieved split by
    /// command), with their own times when each operation is one part.
    #[serde(
        default,
        rename = "commands",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub parts: BTreeMap<String, PartRecord>,
    pub service_time_ms: Percentiles,
    pub latency_ms: Percentiles,
    /// Units completed in each second of the measured window.
    pub throughput_per_second: Vec<u64>,
    /// A shard's trial: where it lies on the race's shared clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<TrialClock>,
    /// A merged trial: each shard's own numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub per_shard: Vec<ShardTrial>,
    /// Measured operations the driver started over 1 ms late although their client was free
    /// (the driver's lag, not the system's).
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub late_starts: u64,
    /// Measured searches answered by only some of their shards (Elasticsearch's partial
    /// results): successes, as Rally counts them, named in every report.
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub partial_searches: u64,
    /// A capacity search (`target-throughput: max`): its probes and conclusion; the trial's
    /// own numbers are those of the probe at the capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::capacity::CapacityRecord>,
    /// A ramped task: the intended and achieved rate in each second from the trial's start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_by_second: Option<RateBySecond>,
    /// Read out of another tool's metrics store (`runner import`): its numbers are the store's,
    /// its counts of operations unknown (0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub imported: bool,
    /// A vector search: the recall of its measured answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recall: Option<RecallRecord>,
    /// The numbers a track's custom runner returned with its last measured call (the
    /// dense_vector track's `avg_recall`, `min_recall`...).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub runner_numbers: BTreeMap<String, f64>,
    /// Each request's timings, kept beside the race (`--keep-samples`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<SamplesRecord>,
    /// Each second of the trial from its clients' start, warmup included: throughput,
    /// errors and latency percentiles (within 3%) as the live view saw them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<crate::metrics::SecondPoint>,
    /// The measured window, in seconds from the clients' start: before it, warmup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_s: Option<[f64; 2]>,
}

/// Where a trial's per-request samples are, and how many of its requests they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplesRecord {
    /// The CSV file, relative to the race's directory.
    pub file: String,
    /// Requests the trial made (warmup ones too).
    pub seen: u64,
    /// Requests kept: all of them, or a uniform sample when they outnumbered the buffer.
    pub kept: u64,
}

/// The recall@k of a vector search's measured answers: the share of each query's true k
/// nearest among the ids it returned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecallRecord {
    /// Answers checked.
    pub count: u64,
    pub mean: f64,
    pub min: f64,
    /// The 5th percentile: 95% of answers had at least this recall.
    pub p5: f64,
    pub p50: f64,
    pub max: f64,
    /// Recall in thousandths, base64 V2-deflate (the HdrHistogram interchange format).
    pub histogram: String,
}

impl RecallRecord {
    pub fn of(h: &hdrhistogram::Histogram<u64>) -> Option<RecallRecord> {
        (!h.is_empty()).then(|| RecallRecord {
            count: h.len(),
            mean: h.mean() / 1000.0,
            min: h.min() as f64 / 1000.0,
            p5: h.value_at_quantile(0.05) as f64 / 1000.0,
            p50: h.value_at_quantile(0.5) as f64 / 1000.0,
            max: h.max() as f64 / 1000.0,
            histogram: crate::metrics::encode_histogram(h),
        })
    }

    /// The histogram back, for merging and significance tests.
    pub fn decoded(&self) -> Option<hdrhistogram::Histogram<u64>> {
        crate::metrics::decode_histogram(&self.histogram).ok()
    }

    /// Every answer of these records together (trials, shards): their histograms added;
    /// None when none holds an answer.
    pub fn merged<'a>(
        records: impl IntoIterator<Item = &'a RecallRecord>,
    ) -> Option<hdrhistogram::Histogram<u64>> {
        let mut merged: Option<hdrhistogram::Histogram<u64>> = None;
        for h in records.into_iter().filter_map(RecallRecord::decoded) {
            match &mut merged {
                // Recall histograms share their bounds: the add cannot fail.
                Some(m) => {
                    let _ = m.add(&h);
                }
                None => merged = Some(h),
            }
        }
        merged.filter(|h| !h.is_empty())
    }
}

/// Intended against achieved, second by second from a trial's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RateBySecond {
    /// Operations the schedule intended in each second.
    pub intended: Vec<f64>,
    /// Units completed in each second by measured operations (None: a warmup second).
    pub achieved: Vec<Option<u64>>,
}

impl RateBySecond {
    pub fn of(
        ramp: &crate::track::rate::Ramp,
        units_by_second: &[u64],
        warmup_s: f64,
    ) -> RateBySecond {
        let intended = ramp.intended_per_second();
        let achieved = (0..intended.len())
            .map(|s| ((s as f64) >= warmup_s).then(|| units_by_second.get(s).copied().unwrap_or(0)))
            .collect();
        RateBySecond { intended, achieved }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct PartRecord {
    pub requests: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_time_ms: Option<Percentiles>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Percentiles>,
}

/// Raw histograms of one trial, base64 V2-deflate (the HdrHistogram interchange format).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TrialHistograms {
    pub task_index: usize,
    pub trial: u64,
    pub service_time_us: String,
    pub latency_us: String,
    /// Histograms by labelled part (a mix's commands), when each operation is one part.
    #[serde(
        default,
        rename = "commands",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub parts: BTreeMap<String, PartHistograms>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PartHistograms {
    pub service_time_us: String,
    pub latency_us: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct HistogramFile {
    pub format: u32,
    pub trials: Vec<TrialHistograms>,
}

impl TaskRecord {
    pub fn sweep_label(&self) -> String {
        self.slot.sweep_label()
    }

    /// Trials that measured something: their operations count in latency summaries, even
    /// when the race stopped them early.
    pub fn measured_trials(&self) -> impl Iterator<Item = &TrialRecord> {
        self.trials.iter().filter(|t| t.measured())
    }

    /// Whole trials: their throughput counts, and compare takes only these.
    pub fn complete_trials(&self) -> impl Iterator<Item = &TrialRecord> {
        self.trials.iter().filter(|t| t.complete())
    }
}

impl TrialRecord {
    /// It ran (no failure) and measured at least one operation, or came from another tool's
    /// metrics store (which keeps no counts).
    pub fn measured(&self) -> bool {
        self.failure.is_none() && (self.operations > 0 || self.imported)
    }

    /// One measured operation: it has a duration, not a rate (create-index, force-merge).
    pub fn is_single_operation(&self) -> bool {
        self.operations == 1
    }

    /// Measured, and not cut short.
    pub fn complete(&self) -> bool {
        self.measured() && !self.interrupted
    }
}
