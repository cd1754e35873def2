//! Operation types, named as in the track format. Each file turns an operation's `params`
//! into a typed spec; the driver executes specs against a backend.

mod admin;
mod bulk;
mod kv;
mod rest;
mod search;

pub use admin::IndexSpec;
pub use bulk::{BulkSpec, Conflicts, IdOrder, OnConflict, BULK_ACTION_LINE};
pub use kv::{ArgPart, CustomCommand, KeyDistribution, KvCommand, KvInfo, KvSpec};
pub use rest::{ClusterHealthSpec, HealthStatus, RawRequestSpec};
pub use search::{PageBy, Paging, SearchSpec};

use crate::track::DocumentSet;
use serde_json::{Map, Value};
use std::time::Duration;

/// Every operation type the runner implements, as written in tracks.
pub const OPERATION_TYPES: &[&str] =
&[
    "create-index",
    "delete-index",
    "refresh",
    "force-merge",
    "cluster-health",
    "bulk",
    "search",
    "scroll-search",
    "paginated-search",
    "get",
    "index-document",
    "raw-request",
    "put",
    "delete",
    "incr",
    "kv-mix",
    "command",
    "sleep",
];

/// A typed, validated operation.
#[derive(Debug, Clone)]
pub enum OpSpec {
    CreateIndex(Vec<IndexSpec>),
    DeleteIndex(Vec<String>),
    Refresh(Vec<String>),
    /// Merge each index down to `max_num_segments` segments (default: the backend's choice).
    ForceMerge { indices: Vec<String>, max_num_segments: Option<u64> },
    ClusterHealth(ClusterHealthSpec),
    Bulk(BulkSpec),
    Search(SearchSpec),
    /// Fetch one document by id.
    GetDocument { index: String, id: String },
    /// Index one document (with `id`: create or replace that document).
    IndexDocument { index: String, id: Option<String>, body: Value },
    /// Any REST request, for what no other operation covers.
    RawRequest(RawRequestSpec),
    Kv(KvSpec),
    Sleep(Duration),
}

impl OpSpec {
    /// What one unit of throughput counts: documents for bulk, operations otherwise.
    pub fn throughput_unit(&self) -> &'static str {
        match self {
            OpSpec::Bulk(_) => "docs/s",
            // As Rally counts them: a paged search's throughput is in pages.
            OpSpec::Search(SearchSpec { paging: Some(_), .. }) => "pages/s",
            _ => "ops/s",
        }
    }

    /// Admin operations run once per trial by default.
    pub fn is_admin(&self) -> bool {
        matches!(
            self,
            OpSpec::CreateIndex(_) | OpSpec::DeleteIndex(_) | OpSpec::Refresh(_) | OpSpec::ForceMerge { .. } | OpSpec::ClusterHealth(_)
        )
    }
}

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
}

/// A parameter problem: the param's name (or "" for the whole operation) and a message.
#[derive(Debug)]
pub struct ParamError {
    pub param: String,
    pub message: String,
}

impl ParamError {
    pub fn new(param: &str, message: impl Into<String>) -> Self {
        ParamError { param: param.to_string(), message: message.into() }
    }
}

/// Params that may be given as a list in a task's `params` to sweep over.
pub fn sweepable_params(kind: &str) -> &'static [&'static str] {
    match kind {
        "bulk" => &["bulk-size", "flush-bytes"],
        "get" | "put" | "delete" | "incr" | "kv-mix" | "command" => &["keyspace", "key-size", "value-size", "pipeline", "transaction", "zipf-exponent"],
        "search" => &["size", "request-params"],
        "scroll-search" | "paginated-search" => &["size", "request-params", "pages", "results-per-page"],
        "sleep" => &["duration"],
        _ => &[],
    }
}

pub fn parse(kind: &str, params: &Map<String, Value>, ctx: &TrackContext) -> Result<OpSpec, ParamError> {
    let p = Params::new(kind, params);
    let spec = match kind {
        "create-index" => OpSpec::CreateIndex(admin::indices_to_create(&p, ctx)?),
        "delete-index" => OpSpec::DeleteIndex(admin::index_names(&p, ctx)?),
        "refresh" => OpSpec::Refresh(admin::index_names(&p, ctx)?),
        "force-merge" => {
            let (indices, max_num_segments) = rest::force_merge(&p, ctx)?;
            OpSpec::ForceMerge { indices, max_num_segments }
        }
        "cluster-health" => OpSpec::ClusterHealth(rest::cluster_health(&p)?),
        "index-document" => {
            let (index, id, body) = rest::index_document(&p, ctx)?;
            OpSpec::IndexDocument { index, id, body }
        }
        "raw-request" => OpSpec::RawRequest(rest::raw_request(&p)?),
        "bulk" => OpSpec::Bulk(bulk::parse(&p, ctx)?),
        "search" => OpSpec::Search(search::parse(&p, ctx)?),
        "scroll-search" => OpSpec::Search(search::parse_paged(&p, ctx, PageBy::Scroll)?),
        "paginated-search" => OpSpec::Search(search::parse_paged(&p, ctx, PageBy::SearchAfter)?),
        "get" if params.contains_key("id") => {
            let index = admin::single_index(&p, ctx)?;
            OpSpec::GetDocument { index, id: p.string("id")?.unwrap_or_default() }
        }
        "get" => OpSpec::Kv(kv::parse(Some(KvCommand::Get), &p)?),
        "put" => OpSpec::Kv(kv::parse(Some(KvCommand::Put), &p)?),
        "delete" => OpSpec::Kv(kv::parse(Some(KvCommand::Delete), &p)?),
        "incr" => OpSpec::Kv(kv::parse(Some(KvCommand::Incr), &p)?),
        "command" => OpSpec::Kv(kv::parse(Some(KvCommand::Command), &p)?),
        "kv-mix" => OpSpec::Kv(kv::parse(None, &p)?),
        "sleep" => OpSpec::Sleep(p.duration("duration")?.unwrap_or(Duration::ZERO)),
        other => {
            let hint = crate::track::did_you_mean(other, OPERATION_TYPES.iter().copied());
            return Err(ParamError::new("", format!("unknown operation type `{other}`{hint}")));
        }
    };
    p.reject_unknown()?;
    Ok(spec)
}

/// Typed access to an operation's params that remembers which keys were read, so that
/// unknown ones can be reported with a suggestion.
pub struct Params<'a> {
    kind: &'a str,
    pub(crate) map: &'a Map<String, Value>,
    read: std::cell::RefCell<Vec<&'static str>>,
}

impl<'a> Params<'a> {
    fn new(kind: &'a str, map: &'a Map<String, Value>) -> Self {
        Params { kind, map, read: Default::default() }
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
            Some(other) => Err(ParamError::new(key, format!("expected a string, got {other}"))),
        }
    }

    pub fn positive_int(&self, key: &'static str) -> Result<Option<u64>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Ok(Some(n)),
                _ => Err(ParamError::new(key, format!("expected a positive integer, got {v}"))),
            },
        }
    }

    pub fn duration(&self, key: &'static str) -> Result<Option<Duration>, ParamError> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) => {
                let secs = n.as_f64().unwrap_or(-1.0);
                Duration::try_from_secs_f64(secs)
                    .map(Some)
                    .map_err(|_| ParamError::new(key, format!("expected a non-negative duration, got {n}")))
            }
            Some(Value::String(s)) => crate::units::parse_duration(s).map(Some).map_err(|m| ParamError::new(key, m)),
            Some(other) => Err(ParamError::new(key, format!("expected a duration such as 10ms, got {other}"))),
        }
    }

    fn reject_unknown(&self) -> Result<(), ParamError> {
        let read = self.read.borrow();
        for key in self.map.keys() {
            if !read.contains(&key.as_str()) {
                let hint = crate::track::did_you_mean(key, read.iter().copied());
                return Err(ParamError::new(key, format!("`{}` does not take a param `{key}`{hint}", self.kind)));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn query_strings_are_percent_encoded() {
        let params = vec![("q".to_string(), "a b&c".to_string()), ("size".to_string(), "10".to_string())];
        assert_eq!(super::query_string(&params), "q=a%20b%26c&size=10");
        assert_eq!(super::query_string(&[]), "");
    }

    #[test]
    fn the_schema_lists_every_operation_type() {
        let schema: serde_json::Value = serde_json::from_str(include_str!("../../schemas/track.schema.json")).unwrap();
        let listed: Vec<&str> = schema["$defs"]["operation"]["properties"]["type"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(listed, super::OPERATION_TYPES);
    }
}
