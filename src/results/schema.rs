//! The stored race's own types for what the plan, the driver and the backends hand over: the
//! task at its sweep point, the runner's and the server's usage, the backend, the error kinds
//! and the error policy. They are written to `race.json` and read by every report; the runtime
//! types they come from convert into them here, so renaming a runtime field or variant cannot
//! change the format on disk (the golden stored races in tests/fixtures/stored-races hold it).
//!
//! Three runtime types are stored as they are, because their stored form is already declared
//! apart from their fields: `Percentiles` (its own wire struct), `Threshold` (its text) and
//! `SecondPoint` (a wire struct the live view sends as it is).

use crate::thresholds::Threshold;
use crate::units::{OpsPerSec, ThroughputUnit};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A task at one sweep point, as the plan had it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SlotRecord {
    pub task: String,
    pub operation: String,
    /// The operation type's name (`bulk`, `search`, ...), as the registry spells it.
    pub operation_type: String,
    /// The swept values of this point (empty when the task does not sweep).
    pub sweep: Map<String, Value>,
    pub clients: u64,
    pub target_throughput: Option<OpsPerSec>,
    pub schedule: ScheduleRecord,
    pub throughput_unit: ThroughputUnit,
    /// Trials the plan asks for; a stored race may hold fewer if it stopped early.
    pub planned_trials: u64,
    /// Whole trials run first and not recorded.
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub warmup_trials: u64,
    /// For key-value operations: what they send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_value: Option<KeyValueRecord>,
    /// `include-in-reporting`: false leaves it out of reports (it still runs and is stored).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub reported: bool,
    /// Pass/fail criteria on the results (the track's, then `--threshold`'s), as text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<Threshold>,
    /// `target-throughput: max`: the search's goal and settings (stored as the track gave
    /// them; the SLO as its text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::track::rate::CapacitySpec>,
    /// `target-throughput: {stages}`: the intended rates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::track::rate::Ramp>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl SlotRecord {
    /// `bulk-size=500`, or `-` when the task does not sweep.
    pub fn sweep_label(&self) -> String {
        crate::plan::sweep_label(&self.sweep)
    }
}

impl From<&crate::plan::ResultSlot> for SlotRecord {
    fn from(s: &crate::plan::ResultSlot) -> SlotRecord {
        SlotRecord {
            task: s.task.clone(),
            operation: s.operation.clone(),
            operation_type: s.operation_type.clone(),
            sweep: s.sweep.clone(),
            clients: s.clients,
            target_throughput: s.target_throughput,
            schedule: s.schedule.into(),
            throughput_unit: s.throughput_unit,
            planned_trials: s.planned_trials,
            warmup_trials: s.warmup_trials,
            key_value: s.key_value.as_ref().map(KeyValueRecord::from),
            reported: s.reported,
            thresholds: s.thresholds.clone(),
            capacity: s.capacity.clone(),
            ramp: s.ramp.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ScheduleRecord {
    Deterministic,
    Poisson,
    Unthrottled,
}

impl From<crate::track::ScheduleKind> for ScheduleRecord {
    fn from(k: crate::track::ScheduleKind) -> ScheduleRecord {
        use crate::track::ScheduleKind as K;
        match k {
            K::Deterministic => ScheduleRecord::Deterministic,
            K::Poisson => ScheduleRecord::Poisson,
            K::Unthrottled => ScheduleRecord::Unthrottled,
        }
    }
}

/// What a key-value task sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyValueRecord {
    /// `SET`, `GET 10% / SET 90%`, `MULTI SET ×10 EXEC`, `HSET`.
    pub commands: String,
    pub keyspace: u64,
    /// `uniform` or `zipfian(0.99)`.
    pub key_distribution: String,
    pub key_size: u64,
    pub value_size: u64,
    /// Commands per operation (pipeline depth or transaction size).
    pub commands_per_operation: u64,
    pub transaction: bool,
}

impl From<&crate::ops::KvInfo> for KeyValueRecord {
    fn from(k: &crate::ops::KvInfo) -> KeyValueRecord {
        KeyValueRecord {
            commands: k.commands.clone(),
            keyspace: k.keyspace,
            key_distribution: k.key_distribution.clone(),
            key_size: k.key_size,
            value_size: k.value_size,
            commands_per_operation: k.commands_per_operation,
            transaction: k.transaction,
        }
    }
}

/// What the runner process used during one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DriverRecord {
    /// CPU time (user + system) over the trial's wall time, in cores.
    pub cpu_cores: f64,
    /// The cores this process may run on (its affinity mask: `taskset` counts).
    pub cores_available: u32,
    /// The highest one-second CPU use during the trial, in cores.
    pub peak_cpu_cores: f64,
    /// CPU cores used in each second of the trial.
    pub cpu_per_second: Vec<f64>,
    /// Resident memory at its highest (the process's high-water mark), in bytes.
    pub peak_rss_bytes: u64,
    /// Resident memory at the end of each second of the trial, in bytes.
    #[serde(default)]
    pub rss_per_second: Vec<u64>,
    /// The track's param source, where one drew the trial's params: whether it kept up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub param_source: Option<crate::driver::ParamSourceUsage>,
}

impl DriverRecord {
    /// The share of the available cores the busiest second used: past 0.8 the client may be
    /// the bottleneck.
    pub fn peak_share(&self) -> f64 {
        if self.cores_available == 0 {
            return 0.0;
        }
        self.peak_cpu_cores / f64::from(self.cores_available)
    }
}

impl From<&crate::driver::DriverUsage> for DriverRecord {
    fn from(u: &crate::driver::DriverUsage) -> DriverRecord {
        DriverRecord {
            cpu_cores: u.cpu_cores,
            cores_available: u.cores_available,
            peak_cpu_cores: u.peak_cpu_cores,
            cpu_per_second: u.cpu_per_second.clone(),
            peak_rss_bytes: u.peak_rss_bytes,
            rss_per_second: u.rss_per_second.clone(),
            param_source: u.param_source.clone(),
        }
    }
}

/// The server during one trial, from its own statistics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerRecord {
    /// Between the two readings.
    pub seconds: f64,
    /// How much each counter grew.
    pub deltas: BTreeMap<String, f64>,
    /// Each gauge at the end.
    pub gauges: BTreeMap<String, f64>,
}

impl ServerRecord {
    /// The server's CPU over the trial, in cores, when it reports its CPU time.
    pub fn cpu_cores(&self) -> Option<f64> {
        let ms = self.deltas.get("cpu_ms")?;
        (self.seconds > 0.0).then(|| ms / 1000.0 / self.seconds)
    }
}

impl From<&crate::backend::server_stats::ServerUsage> for ServerRecord {
    fn from(u: &crate::backend::server_stats::ServerUsage) -> ServerRecord {
        ServerRecord {
            seconds: u.seconds,
            deltas: u.deltas.clone(),
            gauges: u.gauges.clone(),
        }
    }
}

/// Facts about the backend.
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
pub struct BackendRecord {
    pub kind: String,
    pub version: String,
    pub details: Map<String, Value>,
}

impl BackendRecord {
    /// The system raced, in a phrase: what it is, its version, where it is.
    pub fn system(&self) -> String {
        let hosts: Vec<&str> = self
            .details
            .get("hosts")
            .and_then(Value::as_array)
            .map(|h| h.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // Elasticsearch's version names its distribution (`opensearch 2.19.0`); Redis's not.
        let what = match self.kind.as_str() {
            "embedded" => return format!("the embedded engine inside runner ({})", self.version),
            "redis" => format!("redis {}", self.version),
            _ => self.version.clone(),
        };
        match hosts.is_empty() {
            true => what,
            false => format!("{what} at {}", hosts.join(", ")),
        }
    }
}

impl From<&crate::backend::BackendInfo> for BackendRecord {
    fn from(b: &crate::backend::BackendInfo) -> BackendRecord {
        BackendRecord {
            kind: b.kind.clone(),
            version: b.version.clone(),
            details: b.details.clone(),
        }
    }
}

/// What the race did on an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OnErrorRecord {
    Continue,
    Abort,
}

impl From<crate::driver::OnError> for OnErrorRecord {
    fn from(o: crate::driver::OnError) -> OnErrorRecord {
        match o {
            crate::driver::OnError::Continue => OnErrorRecord::Continue,
            crate::driver::OnError::Abort => OnErrorRecord::Abort,
        }
    }
}

/// Why operations failed, as counted in a trial (ordered as reports list them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "kebab-case")]
pub enum ErrorKindRecord {
    NotFound,
    BadRequest,
    ItemFailures,
    Connection,
    Timeout,
    Internal,
    ErrorReply,
    Protocol,
    Unauthorized,
    TooManyRequests,
    ServerError,
    Redirect,
    Unmet,
}

impl From<crate::backend::ErrorKind> for ErrorKindRecord {
    fn from(k: crate::backend::ErrorKind) -> ErrorKindRecord {
        use crate::backend::ErrorKind as K;
        match k {
            K::NotFound => ErrorKindRecord::NotFound,
            K::BadRequest => ErrorKindRecord::BadRequest,
            K::ItemFailures => ErrorKindRecord::ItemFailures,
            K::Connection => ErrorKindRecord::Connection,
            K::Timeout => ErrorKindRecord::Timeout,
            K::Internal => ErrorKindRecord::Internal,
            K::ErrorReply => ErrorKindRecord::ErrorReply,
            K::Protocol => ErrorKindRecord::Protocol,
            K::Unauthorized => ErrorKindRecord::Unauthorized,
            K::TooManyRequests => ErrorKindRecord::TooManyRequests,
            K::ServerError => ErrorKindRecord::ServerError,
            K::Redirect => ErrorKindRecord::Redirect,
            K::Unmet => ErrorKindRecord::Unmet,
        }
    }
}

impl ErrorKindRecord {
    /// The name stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKindRecord::NotFound => "not-found",
            ErrorKindRecord::BadRequest => "bad-request",
            ErrorKindRecord::ItemFailures => "item-failures",
            ErrorKindRecord::Connection => "connection",
            ErrorKindRecord::Timeout => "timeout",
            ErrorKindRecord::Internal => "internal",
            ErrorKindRecord::ErrorReply => "error-reply",
            ErrorKindRecord::Protocol => "protocol",
            ErrorKindRecord::Unauthorized => "unauthorized",
            ErrorKindRecord::TooManyRequests => "too-many-requests",
            ErrorKindRecord::ServerError => "server-error",
            ErrorKindRecord::Redirect => "redirect",
            ErrorKindRecord::Unmet => "unmet",
        }
    }
}

impl std::fmt::Display for ErrorKindRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every runtime error kind converts to the stored kind of the same name, and the stored
    /// names are serde's: the two spellings cannot drift apart.
    #[test]
    fn error_kinds_keep_their_stored_names() {
        for kind in crate::backend::ErrorKind::ALL {
            let stored = ErrorKindRecord::from(kind);
            assert_eq!(stored.as_str(), kind.as_str());
            assert_eq!(
                serde_json::to_value(stored).unwrap(),
                serde_json::Value::String(kind.as_str().into())
            );
        }
    }

    #[test]
    fn usage_and_slots_convert_field_for_field() {
        let usage = crate::driver::DriverUsage {
            cpu_cores: 0.5,
            cores_available: 2,
            peak_cpu_cores: 1.5,
            cpu_per_second: vec![0.5],
            peak_rss_bytes: 10,
            rss_per_second: vec![10],
            param_source: None,
        };
        let stored = DriverRecord::from(&usage);
        assert_eq!(stored.peak_share(), 0.75);
        assert_eq!(
            serde_json::to_value(&stored).unwrap(),
            serde_json::to_value(&usage).unwrap()
        );
    }
}
