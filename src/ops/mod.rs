//! Operation types, named as in the track format. Each file turns an operation's `params`
//! into a typed spec; the driver executes specs against a backend.

mod admin;
mod bindings;
mod bulk;
mod kv;
pub mod poll;
mod python;
mod rest;
mod search;
pub mod vector;

pub use admin::{DeleteIndexSpec, IndexSpec};
pub use bindings::{BodyDraw, BoundBody};
pub use bulk::{ActionLines, BulkSpec, Conflicts, IdOrder, OnConflict, BULK_ACTION_LINE};
pub use kv::{ArgPart, CustomCommand, KeyDistribution, KvCommand, KvInfo, KvSpec};
pub use python::{drawn_bulk, DrawnBulk, DrawnDialect, PythonSpec};
pub use rest::{ClusterHealthSpec, HealthStatus, RawCall, RawRequestSpec, StatusSet};
pub use search::{PageBy, Paging, SearchSpec};
pub use vector::VectorSearchSpec;

use crate::corpus::DocumentSet;
use crate::units::ThroughputUnit;
use serde_json::{Map, Value};
use std::time::Duration;

/// Every operation type the runner implements, as written in tracks: the one list the track
/// loader, the planner, the schema test and `did you mean` read. Adding a type is a file that
/// defines its [`OperationType`], a line here, and its arms in the backends.
pub static OPERATION_TYPES: &[&OperationType] = &[
    &admin::CREATE_INDEX,
    &admin::DELETE_INDEX,
    &admin::REFRESH,
    &rest::FORCE_MERGE,
    &rest::CLUSTER_HEALTH,
    &bulk::BULK,
    &search::SEARCH,
    &search::SCROLL_SEARCH,
    &search::PAGINATED_SEARCH,
    &vector::VECTOR_SEARCH,
    &rest::GET_DOCUMENT,
    &rest::INDEX_DOCUMENT,
    &rest::RAW_REQUEST,
    &kv::GET,
    &kv::PUT,
    &kv::DELETE,
    &kv::INCR,
    &kv::KV_MIX,
    &kv::COMMAND,
    &python::PYTHON,
    &SLEEP,
];

/// One operation type: its name in tracks, what its throughput counts, which params a task
/// may sweep, and how its params become an [`OpSpec`].
pub struct OperationType {
    pub name: &'static str,
    pub unit: ThroughputUnit,
    /// Params a task may give as a list, to sweep over.
    pub sweepable: &'static [&'static str],
    pub parse: fn(&Params, &TrackContext) -> Result<OpSpec, ParamError>,
}

impl std::fmt::Debug for OperationType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

impl OperationType {
    /// The type a track's `type` names. `get` with an `id` param is the older spelling of
    /// `get-document` and resolves to it here, the one place that knows.
    pub fn find(kind: &str, params: &Map<String, Value>) -> Option<&'static OperationType> {
        let kind = if kind == "get" && params.contains_key("id") {
            rest::GET_DOCUMENT.name
        } else {
            kind
        };
        OPERATION_TYPES.iter().copied().find(|t| t.name == kind)
    }

    pub fn names() -> impl Iterator<Item = &'static str> + Clone {
        OPERATION_TYPES.iter().map(|t| t.name)
    }
}

const SLEEP: OperationType = OperationType {
    name: "sleep",
    unit: ThroughputUnit::Operations,
    sweepable: &["duration"],
    parse: |p, _| {
        Ok(OpSpec::Sleep(
            p.duration("duration")?.unwrap_or(Duration::ZERO),
        ))
    },
};

/// Where the driver takes each call's changing input from.
pub enum PayloadSource<'a> {
    /// Nothing changes from call to call.
    Fixed,
    /// Bulk bodies read from a corpus by the feeder thread.
    Corpus(&'a BulkSpec),
    /// Keys (and values) drawn from a keyspace.
    Keys(&'a KvSpec),
    /// A body with `${...}` slots, drawn per call.
    Bound(&'a std::sync::Arc<BoundBody>),
    /// Params drawn per call from the track's Python param source.
    Python(&'a PythonSpec),
    /// Query vectors, each client walking them in its own order.
    Vectors(&'a VectorSearchSpec),
}

/// A typed, validated operation.
#[derive(Debug, Clone)]
pub enum OpSpec {
    CreateIndex(Vec<IndexSpec>),
    DeleteIndex(DeleteIndexSpec),
    /// Refresh these indices. `_all` alone goes to `/_refresh`, as Rally's client sends a
    /// refresh naming no index, unless `all_in_path` (OSB's client sends `/_all/_refresh`).
    Refresh {
        indices: Vec<String>,
        all_in_path: bool,
    },
    /// Merge each index down to `max_num_segments` segments (default: the backend's choice;
    /// -1, as Rally's tracks write it, is Elasticsearch's default, sent as written).
    ForceMerge {
        indices: Vec<String>,
        max_num_segments: Option<i64>,
        /// `mode: polling`: the merge asked not to wait, its task polled this often until it
        /// completes (Rally's `poll-period`), so that no request waits hours for a merge.
        poll: Option<std::time::Duration>,
    },
    ClusterHealth(ClusterHealthSpec),
    Bulk(BulkSpec),
    Search(SearchSpec),
    /// kNN searches over a file of query vectors, recall measured on each answer.
    VectorSearch(VectorSearchSpec),
    /// Fetch one document by id.
    GetDocument {
        index: String,
        id: String,
    },
    /// Index one document (with `id`: create or replace that document).
    IndexDocument {
        index: String,
        id: Option<String>,
        body: Value,
    },
    /// Any REST request, for what no other operation covers.
    RawRequest(RawRequestSpec),
    Kv(KvSpec),
    Sleep(Duration),
    /// Driven by the track's own Python: a param source, a custom runner, or both.
    Python(PythonSpec),
}

impl OpSpec {
    /// What feeds each call of this operation.
    pub fn payload_source(&self) -> PayloadSource<'_> {
        match self {
            OpSpec::Bulk(bulk) => PayloadSource::Corpus(bulk),
            OpSpec::Kv(kv) => PayloadSource::Keys(kv),
            OpSpec::Search(SearchSpec { bound: Some(b), .. })
            | OpSpec::RawRequest(RawRequestSpec { bound: Some(b), .. }) => PayloadSource::Bound(b),
            OpSpec::Python(p) if p.param_source.is_some() => PayloadSource::Python(p),
            OpSpec::VectorSearch(v) => PayloadSource::Vectors(v),
            _ => PayloadSource::Fixed,
        }
    }

    /// The indices an operation reads or writes (names, patterns or comma lists as written);
    /// empty for those that create or delete indices, or name none.
    pub fn target_indices(&self) -> Vec<&str> {
        match self {
            OpSpec::Bulk(b) if !b.index.is_empty() => vec![b.index.as_str()],
            OpSpec::Bulk(b) => {
                let mut targets: Vec<&str> =
                    b.files.iter().map(|f| f.target_index.as_str()).collect();
                targets.sort_unstable();
                targets.dedup();
                targets.retain(|t| !t.is_empty());
                targets
            }
            OpSpec::Search(s) => vec![s.index.as_str()],
            OpSpec::VectorSearch(v) => vec![v.index.as_str()],
            OpSpec::GetDocument { index, .. } | OpSpec::IndexDocument { index, .. } => {
                vec![index.as_str()]
            }
            OpSpec::Refresh { indices: names, .. } | OpSpec::ForceMerge { indices: names, .. } => {
                names.iter().map(String::as_str).collect()
            }
            OpSpec::ClusterHealth(h) => h.index.as_deref().into_iter().collect(),
            // What one draw targets, else the index a runner's params name.
            OpSpec::Python(p) => match &p.first {
                Some(f) => f.target_indices(),
                None => p
                    .params
                    .get("index")
                    .and_then(Value::as_str)
                    .into_iter()
                    .collect(),
            },
            _ => Vec::new(),
        }
    }

    /// What the operation's throughput counts: its type's unit, or for one the track's Python
    /// drives, the unit of the type its params are for (or its runner's weight).
    pub fn throughput_unit(&self, op_type: &OperationType) -> ThroughputUnit {
        match self {
            OpSpec::Python(p) => p.unit,
            _ => op_type.unit,
        }
    }

    /// Labels of the parts whose requests are counted (the commands of a key-value operation).
    pub fn counted_parts(&self) -> Option<&'static [&'static str]> {
        match self {
            OpSpec::Kv(_) => Some(&KvCommand::LABELS),
            _ => None,
        }
    }

    /// Whether the counted parts are also timed: a key-value mix of one command an operation
    /// is timed per command.
    pub fn times_parts(&self) -> bool {
        matches!(self, OpSpec::Kv(kv) if kv.single_command().is_none() && kv.keys_per_operation() == 1)
    }
}

/// Index-name patterns (`_all`, `*`): the engine's one matcher, for every backend's checks.
pub use engine::names::index_pattern_matches;

/// URL parameters as a query string (`a=1&b=x%20y`), empty when there are none.
pub fn query_string(params: &[(String, String)]) -> String {
    let mut out = String::new();
    for (k, v) in params {
        if !out.is_empty() {
            out.push('&');
        }
        out.push_str(&percent_encode(k, QUERY_SAFE));
        out.push('=');
        out.push_str(&percent_encode(v, QUERY_SAFE));
    }
    out
}

/// Bytes besides ASCII letters and digits a query-string value keeps as they are.
const QUERY_SAFE: &[u8] = b"-_.~*,";

/// Percent-encodes every byte that is not an ASCII letter, digit or one of `safe`.
pub fn percent_encode(s: &str, safe: &[u8]) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || safe.contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// What an operation may refer to in its track.
pub struct TrackContext<'a> {
    pub indices: &'a [IndexSpec],
    pub corpora: &'a [(String, Vec<DocumentSet>)],
    /// The track's directory, where the files bindings draw from are.
    pub dir: Option<&'a std::path::Path>,
}

/// A parameter problem: the param's name (or "" for the whole operation) and a message.
#[derive(Debug)]
pub struct ParamError {
    pub param: String,
    pub message: String,
}

impl ParamError {
    pub fn new(param: &str, message: impl Into<String>) -> Self {
        ParamError {
            param: param.to_string(),
            message: message.into(),
        }
    }
}

/// Params that may be given as a list in a task's `params` to sweep over.
pub fn sweepable_params(kind: &str, params: &Map<String, Value>) -> &'static [&'static str] {
    OperationType::find(kind, params).map_or(&[], |t| t.sweepable)
}

/// The operation type `kind` names, with its params parsed into a spec.
pub fn parse(
    kind: &str,
    params: &Map<String, Value>,
    ctx: &TrackContext,
) -> Result<(&'static OperationType, OpSpec), ParamError> {
    let Some(op_type) = OperationType::find(kind, params) else {
        let hint = crate::suggest::did_you_mean(kind, OperationType::names());
        return Err(ParamError::new(
            "",
            format!("unknown operation type `{kind}`{hint}"),
        ));
    };
    let p = Params::new(op_type.name, params);
    let spec = (op_type.parse)(&p, ctx)?;
    p.reject_unknown()?;
    Ok((op_type, spec))
}

/// Typed access to an operation's params that remembers which keys were read, so that
/// unknown ones can be reported with a suggestion.
pub struct Params<'a> {
    kind: &'a str,
    pub(crate) map: &'a Map<String, Value>,
    read: std::cell::RefCell<Vec<&'static str>>,
}

impl<'a> Params<'a> {
    pub(crate) fn new(kind: &'a str, map: &'a Map<String, Value>) -> Self {
        Params {
            kind,
            map,
            read: Default::default(),
        }
    }

    pub fn get(&self, key: &'static str) -> Option<&'a Value> {
        self.read.borrow_mut().push(key);
        self.map.get(key)
    }

    pub fn string(&self, key: &'static str) -> Result<Option<String>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(other) => Err(ParamError::new(
                key,
                format!("expected a string, got {other}"),
            )),
        }
    }

    pub fn bool(&self, key: &'static str) -> Result<Option<bool>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(ParamError::new(
                key,
                format!("expected true or false, got {other}"),
            )),
        }
    }

    pub fn positive_int(&self, key: &'static str) -> Result<Option<u64>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(ParamError::new(
                    key,
                    format!("expected a positive integer, got {v}"),
                )),
            },
        }
    }

    pub fn duration(&self, key: &'static str) -> Result<Option<Duration>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => {
                let secs = n.as_f64().unwrap_or(-1.0);
                crate::units::duration_from_secs(secs)
                    .map(Some)
                    .map_err(|m| ParamError::new(key, m))
            }
            Some(Value::String(s)) => crate::units::parse_duration(s)
                .map(Some)
                .map_err(|m| ParamError::new(key, m)),
            Some(other) => Err(ParamError::new(
                key,
                format!("expected a duration such as 10ms, got {other}"),
            )),
        }
    }

    fn reject_unknown(&self) -> Result<(), ParamError> {
        let read = self.read.borrow();
        for key in self.map.keys() {
            if !read.contains(&key.as_str()) {
                let hint = crate::suggest::did_you_mean(key, read.iter().copied());
                return Err(ParamError::new(
                    key,
                    format!("`{}` does not take a param `{key}`{hint}", self.kind),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_strings_are_percent_encoded() {
        let params = vec![
            ("q".to_string(), "a b&c".to_string()),
            ("size".to_string(), "10".to_string()),
        ];
        assert_eq!(super::query_string(&params), "q=a%20b%26c&size=10");
        assert_eq!(super::query_string(&[]), "");
    }

    #[test]
    fn the_schema_lists_every_operation_type() {
        let schema: serde_json::Value =
            serde_json::from_str(include_str!("../../schemas/track.schema.json")).unwrap();
        let mut listed: Vec<&str> = schema["$defs"]["operation"]["properties"]["type"]["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let mut names: Vec<&str> = super::OperationType::names().collect();
        names.sort_unstable();
        listed.sort_unstable();
        assert_eq!(listed, names);
    }

    #[test]
    fn force_merge_takes_rallys_minus_one_as_the_backends_choice() {
        let ctx = super::TrackContext {
            indices: &[],
            corpora: &[],
            dir: None,
        };
        let segments = |v: serde_json::Value| {
            let params = serde_json::json!({"index": "i", "max-num-segments": v});
            match super::parse("force-merge", params.as_object().unwrap(), &ctx) {
                Ok((
                    _,
                    super::OpSpec::ForceMerge {
                        max_num_segments, ..
                    },
                )) => Ok(max_num_segments),
                Ok(_) => unreachable!(),
                Err(e) => Err(e.message),
            }
        };
        assert_eq!(
            segments(serde_json::json!(-1)),
            Ok(Some(-1)),
            "sent as Rally sends it"
        );
        assert_eq!(segments(serde_json::json!(0)), Ok(None));
        assert_eq!(segments(serde_json::json!(5)), Ok(Some(5)));
        assert!(segments(serde_json::json!(-2)).is_err());
        assert!(segments(serde_json::json!("x")).is_err());
    }

    #[test]
    fn get_with_an_id_is_get_document() {
        let with_id = serde_json::json!({"index": "i", "id": "1"});
        assert_eq!(
            super::OperationType::find("get", with_id.as_object().unwrap())
                .unwrap()
                .name,
            "get-document"
        );
        assert_eq!(
            super::OperationType::find("get", &Default::default())
                .unwrap()
                .name,
            "get"
        );
    }
}
