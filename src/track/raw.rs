//! The track file mirrored one to one, after templating and schema validation. Values that
//! may be scalars or sweep lists stay as JSON here; `model::from_raw` gives them meaning.

use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawTrack {
    // Accepted so editors can point at the schema; declared parameters are read by the loader.
    #[allow(dead_code)]
    #[serde(rename = "$schema", default)]
    pub schema: Option<String>,
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[allow(dead_code)]
    #[serde(default)]
    pub parameters: Map<String, Value>,
    #[serde(default)]
    pub corpora: Vec<RawCorpus>,
    #[serde(default)]
    pub indices: Vec<RawIndex>,
    #[serde(default)]
    pub operations: Vec<RawOperation>,
    pub challenges: Vec<RawChallenge>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawCorpus {
    pub name: String,
    #[serde(default)]
    pub target_index: Option<String>,
    /// Use the corpus of the same name from the track in the sibling directory of this name.
    #[serde(default)]
    pub from_track: Option<String>,
    #[serde(default)]
    pub documents: Vec<RawDocuments>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawDocuments {
    /// Exactly one of `source-file` and `generate`.
    #[serde(default)]
    pub source_file: Option<String>,
    #[serde(default)]
    pub generate: Option<String>,
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub document_count: Option<u64>,
    /// Documents to make from a source file: its own, then new ones recombined from them.
    #[serde(default)]
    pub scale_to: Option<u64>,
    #[serde(default)]
    pub target_index: Option<String>,
    /// A data stream the documents go to, with `create` actions (Rally's).
    #[serde(default)]
    pub target_data_stream: Option<String>,
    /// Each document comes after its own action-and-metadata line in the file.
    #[serde(default)]
    pub includes_action_and_meta_data: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawIndex {
    pub name: String,
    /// Inline settings/mappings, or the name of a JSON/YAML file beside the track.
    #[serde(default)]
    pub body: Option<Value>,
}

#[derive(Debug, Deserialize, Clone)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawOperation {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub params: Map<String, Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawChallenge {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub default: bool,
    #[serde(default)]
    pub trials: Option<u64>,
    #[serde(default)]
    pub reset: Vec<Value>,
    pub schedule: Vec<RawScheduleItem>,
}

/// A schedule entry: either a task, or a `parallel:` block of tasks.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawScheduleItem {
    #[serde(default)]
    pub name: Option<String>,
    /// An operation name, or an inline operation.
    #[serde(default)]
    pub operation: Option<Value>,
    #[serde(default)]
    pub clients: Option<Value>,
    #[serde(default)]
    pub warmup: Option<Value>,
    #[serde(default)]
    pub iterations: Option<Value>,
    #[serde(default)]
    pub time_period: Option<Value>,
    #[serde(default)]
    pub target_throughput: Option<Value>,
    #[serde(default)]
    pub target_interval: Option<Value>,
    #[serde(default)]
    pub schedule: Option<String>,
    #[serde(default)]
    pub trials: Option<u64>,
    #[serde(default)]
    pub warmup_trials: Option<u64>,
    /// Start the clients one after another over this time, within the warmup (Rally's key).
    #[serde(default)]
    pub ramp_up_time_period: Option<Value>,
    /// `false`: the task runs and is stored but left out of reports and comparisons.
    #[serde(default)]
    pub include_in_reporting: Option<bool>,
    /// Labels for `--include-tasks tag:NAME` (Rally's key): a string or a list of strings.
    #[serde(default)]
    pub tags: Option<Value>,
    /// `non-fatal`: under `--on-error abort`, error responses do not stop the race (Rally's key).
    #[serde(default)]
    pub ignore_response_error_level: Option<String>,
    /// Attempts after a failure (Rally's `Retry` parameters, as one object).
    #[serde(default)]
    pub retry: Option<Value>,
    /// Pass/fail criteria on the task's results: metric → condition (`service_time.p99: "< 5ms"`).
    #[serde(default)]
    pub thresholds: Map<String, Value>,
    /// A capacity search's goal (`target-throughput: max`): metric → condition.
    #[serde(default)]
    pub slo: Map<String, Value>,
    #[serde(default)]
    pub probe_time: Option<Value>,
    #[serde(default)]
    pub probe_warmup: Option<Value>,
    #[serde(default)]
    pub precision: Option<Value>,
    #[serde(default)]
    pub probe_start: Option<Value>,
    #[serde(default)]
    pub max_probes: Option<u64>,
    #[serde(default)]
    pub reset: Vec<Value>,
    /// Overrides of the operation's params; lists sweep where the operation type allows it.
    #[serde(default)]
    pub params: Map<String, Value>,
    #[serde(default)]
    pub parallel: Option<RawParallel>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RawParallel {
    pub tasks: Vec<RawScheduleItem>,
    /// The task whose end ends the block: the others stop then (Rally's `completed-by`).
    #[serde(default)]
    pub completed_by: Option<String>,
    #[serde(default)]
    pub trials: Option<u64>,
    #[serde(default)]
    pub reset: Vec<Value>,
}
