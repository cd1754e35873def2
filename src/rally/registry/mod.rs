//! Rally's and OpenSearch Benchmark's built-in operation types: the list (Rally's
//! `track.OperationType`, OSB's `workload.OperationType`), and how each becomes an operation
//! of ours. Those that are one or more REST calls are converted here into a `raw-request`,
//! with Rally's parameters and defaults (its runners and param sources in `runner.py` and
//! `params.py`); those runner cannot run have their reason. A type on neither list is one a
//! track.py registers.

mod ml;
mod pipelines;
mod policies;
mod queries;
mod recovery;
mod snapshots;
mod streams;
mod templates;
mod transforms;

use serde_json::{json, Map, Value};

/// Why a built-in type is not run (None: converted, here or by the caller).
type Reason = Option<&'static str>;

const STATE: &str =
    "it keeps state across operations (an id one call returns and later ones use), which runner's operations do not share";
const POLLS: &str =
    "it polls the cluster until a condition holds, which runner's raw requests do not do yet";
const VECTOR: &str = "OSB's k-NN operations read HDF5 or big-ann data sets and train or warm plugin models, which runner does not convert; runner's own `vector-search` operation runs kNN searches and measures recall on every answer (docs/tracks.md)";

/// Every built-in type: Rally's, then OSB's own.
pub const BUILT_IN: &[(&str, Reason)] = &[
    // Converted by `convert::operation` into our own types.
    ("bulk", None),
    ("search", None),
    ("paginated-search", None),
    ("scroll-search", None),
    ("create-index", None),
    ("delete-index", None),
    ("refresh", None),
    ("force-merge", None),
    ("cluster-health", None),
    ("raw-request", None),
    ("index-stats", None),
    ("node-stats", None),
    ("put-settings", None),
    ("sleep", None),
    // REST calls, converted here.
    ("create-index-template", None),
    ("delete-index-template", None),
    ("create-composable-template", None),
    ("delete-composable-template", None),
    ("create-component-template", None),
    ("delete-component-template", None),
    ("create-data-stream", None),
    ("delete-data-stream", None),
    ("put-pipeline", None),
    ("delete-pipeline", None),
    ("create-ilm-policy", None),
    ("delete-ilm-policy", None),
    ("esql", None),
    ("sql", None),
    ("field-caps", None),
    ("downsample", None),
    ("create-transform", None),
    ("start-transform", None),
    ("delete-transform", None),
    ("create-snapshot-repository", None),
    ("delete-snapshot-repository", None),
    ("create-snapshot", None),
    ("restore-snapshot", None),
    ("create-ml-datafeed", None),
    ("delete-ml-datafeed", None),
    ("start-ml-datafeed", None),
    ("stop-ml-datafeed", None),
    ("create-ml-job", None),
    ("delete-ml-job", None),
    ("open-ml-job", None),
    ("close-ml-job", None),
    ("create-search-pipeline", None),
    // Not run, with the reason.
    ("composite", Some("it runs a sub-schedule of request streams with shared state (Rally's `composite`)")),
    ("composite-agg", Some("it pages a composite aggregation with the `after_key` of each answer, which runner does not carry from one request to the next")),
    ("esql-profile", Some("it records ES|QL's per-driver profile as extra metrics, which runner does not read from the answer")),
    ("submit-async-search", Some(STATE)),
    ("get-async-search", Some(STATE)),
    ("delete-async-search", Some(STATE)),
    ("open-point-in-time", Some(STATE)),
    ("close-point-in-time", Some(STATE)),
    ("create-point-in-time", Some(STATE)),
    ("delete-point-in-time", Some(STATE)),
    ("list-all-point-in-time", Some(STATE)),
    ("wait-for-recovery", None),
    ("wait-for-snapshot-create", None),
    ("wait-for-current-snapshots-create", None),
    ("wait-for-transform", None),
    ("transform-stats", Some(POLLS)),
    ("run-until", Some(POLLS)),
    ("shrink-index", Some("it moves shards to one node, waits, then shrinks: a multi-step cluster procedure runner does not run")),
    ("vector-search", Some(VECTOR)),
    ("bulk-vector-data-set", Some(VECTOR)),
    ("train-knn-model", Some(VECTOR)),
    ("delete-knn-model", Some(VECTOR)),
    ("warmup-knn-indices", Some(VECTOR)),
    ("produce-stream-message", Some("it writes to a streaming service (Kafka, Kinesis) for pull-based ingestion, which runner has no client for")),
    ("proto-bulk", Some("OSB's gRPC transport is not supported")),
    ("proto-search", Some("OSB's gRPC transport is not supported")),
    ("proto-vector-search", Some("OSB's gRPC transport is not supported")),
    ("proto-bulk-vector-data-set", Some("OSB's gRPC transport is not supported")),
    ("register-ml-model", Some("OpenSearch ML Commons models are registered by polling a task, which runner does not do")),
    ("deploy-ml-model", Some("OpenSearch ML Commons models are deployed by polling a task, which runner does not do")),
    ("delete-ml-model", Some("OpenSearch ML Commons models are undeployed, then deleted, by polling, which runner does not do")),
    ("register-remote-ml-model", Some("OpenSearch ML Commons models are registered by polling a task, which runner does not do")),
    ("create-ml-connector", Some(STATE)),
    ("delete-ml-connector", Some(STATE)),
    ("update-concurrent-segment-search-settings", Some("OSB's concurrent segment search switch is not supported")),
];

/// Why a type cannot be run: a built-in's reason, or a custom type's.
pub fn why_not(kind: &str) -> String {
    match BUILT_IN.iter().find(|(n, _)| *n == kind) {
        Some((_, Some(reason))) => format!("Rally's operation type `{kind}` is not supported: {reason}"),
        Some((_, None)) => format!("Rally's operation type `{kind}` takes parameters runner cannot convert here"),
        None => format!("operation type `{kind}` is not one of Rally's or OpenSearch Benchmark's: it needs the custom runner a track.py registers, and runner runs no Python"),
    }
}

/// What a track declares beside its operations that Rally's param sources read when an
/// operation names no target: its data streams and templates (bodies already read).
#[derive(Default)]
pub struct Declared {
    /// The track's indices by name (Rally's param sources default to its only one).
    pub indices: Vec<String>,
    pub data_streams: Vec<String>,
    /// (kind, name, body, index pattern, delete matching indices) per template; kind is
    /// `composable`, `component` or `legacy`.
    pub templates: Vec<DeclaredTemplate>,
    /// The workload is OpenSearch Benchmark's: its template deletes lift no setting.
    pub osb: bool,
}

pub struct DeclaredTemplate {
    pub kind: &'static str,
    pub name: String,
    pub body: Value,
    pub index_pattern: Option<String>,
    pub delete_matching_indices: bool,
}

struct Call {
    method: &'static str,
    path: String,
    body: Option<Value>,
    params: Map<String, Value>,
    /// `until`, `poll-interval` and `poll-timeout`: a request polled (Rally's `wait-for-*`).
    poll: Map<String, Value>,
    /// Sent only when the HEAD before it found the target (Rally's `only-if-exists`).
    if_found: bool,
    /// A wildcard delete, with `action.destructive_requires_name` lifted around it.
    destructive: bool,
    /// Pages in all, each after the first sent with the answer's `cursor`.
    cursor_pages: u64,
}

impl Call {
    fn new(method: &'static str, path: String) -> Call {
        Call {
            method,
            path,
            body: None,
            params: Map::new(),
            poll: Map::new(),
            if_found: false,
            destructive: false,
            cursor_pages: 1,
        }
    }

    /// A DELETE as Rally's delete runners send it: with `only-if-exists` (their default), a
    /// HEAD of `head` first and the DELETE only when it found the target; else the DELETE
    /// alone, a 404 ignored. Rally's `request-params` go with the DELETE only.
    fn deletes(
        head: String,
        delete: String,
        only_if_exists: bool,
        rp: Option<&Value>,
    ) -> Vec<Call> {
        let delete = Call::new("DELETE", delete).params(rp);
        if !only_if_exists {
            return vec![delete];
        }
        vec![
            Call::new("HEAD", head),
            Call {
                if_found: true,
                ..delete
            },
        ]
    }

    /// A delete by wildcard: the setting that forbids it lifted around it.
    fn destructive(self) -> Call {
        Call {
            destructive: true,
            ..self
        }
    }

    /// `pages` in all, each after the first sent with the answer's `cursor`.
    fn cursor_pages(self, pages: u64) -> Call {
        Call {
            cursor_pages: pages,
            ..self
        }
    }

    /// Polled until `until` holds, every `interval` seconds (Rally's default 1), at most
    /// `timeout` seconds (else our default).
    fn until(mut self, until: &str, interval: Option<Value>, timeout: Option<Value>) -> Call {
        self.poll.insert("until".into(), json!(until));
        self.poll
            .insert("poll-interval".into(), interval.unwrap_or(json!(1)));
        if let Some(t) = timeout {
            self.poll.insert("poll-timeout".into(), t);
        }
        self
    }

    fn body(mut self, body: Value) -> Call {
        self.body = Some(body);
        self
    }

    fn param(mut self, k: &str, v: Option<Value>) -> Call {
        if let Some(v) = v.filter(|v| !v.is_null()) {
            let v = match v {
                Value::String(s) => Value::String(s),
                other => Value::String(other.to_string()),
            };
            self.params.insert(k.into(), v);
        }
        self
    }

    fn params(mut self, from: Option<&Value>) -> Call {
        if let Some(Value::Object(m)) = from {
            for (k, v) in m {
                self = self.param(k, Some(v.clone()));
            }
        }
        self
    }

    fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("method".into(), json!(self.method));
        o.insert("path".into(), json!(self.path));
        if let Some(b) = &self.body {
            o.insert("body".into(), b.clone());
        }
        if !self.params.is_empty() {
            o.insert("request-params".into(), Value::Object(self.params.clone()));
        }
        o.extend(self.poll.clone());
        if self.if_found {
            o.insert("if-found".into(), json!(true));
        }
        if self.destructive {
            o.insert("destructive".into(), json!(true));
        }
        if self.cursor_pages > 1 {
            o.insert("cursor-pages".into(), json!(self.cursor_pages));
        }
        Value::Object(o)
    }
}

/// A Rally operation that is REST calls, as the params of our `raw-request`: None when `kind`
/// is not one of those, Err with the reason when its params cannot be converted.
pub fn rest_operation(
    kind: &str,
    op: &Map<String, Value>,
    declared: &Declared,
) -> Option<Result<Map<String, Value>, String>> {
    let (calls, ignore_404) = match calls(kind, op, declared)? {
        Ok(c) => c,
        Err(e) => return Some(Err(e)),
    };
    if calls.is_empty() {
        return Some(Err(format!(
            "`{kind}` names no target and the track declares none"
        )));
    }
    let mut params = Map::new();
    if calls.len() == 1 {
        if let Value::Object(one) = calls[0].to_json() {
            params.extend(one);
        }
    } else {
        params.insert(
            "requests".into(),
            Value::Array(calls.iter().map(Call::to_json).collect()),
        );
    }
    if ignore_404 {
        params.insert("ignore-status".into(), json!(404));
    }
    Some(Ok(params))
}

/// Rally's `only-if-exists` of its delete operations: true unless the operation says false.
fn only_if_exists(op: &Map<String, Value>) -> bool {
    op.get("only-if-exists")
        .and_then(Value::as_bool)
        .unwrap_or(true)
}

fn string(op: &Map<String, Value>, k: &str) -> Option<String> {
    op.get(k).and_then(Value::as_str).map(str::to_string)
}

fn required(op: &Map<String, Value>, kind: &str, k: &str) -> Result<String, String> {
    string(op, k).ok_or_else(|| format!("`{kind}` needs `{k}`"))
}

/// A name as one path segment: what would end or split it is percent-encoded.
fn enc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '/' | '?' | '#' | '%' | ' ' => out.push_str(&format!("%{:02X}", ch as u32)),
            c => out.push(c),
        }
    }
    out
}

/// What a family of operations makes of one: its calls and whether a 404 is no error, or why
/// it cannot be converted.
type Calls = Result<(Vec<Call>, bool), String>;

/// The families of Rally's REST-call operations, each in its own file: the first that knows
/// the type converts it.
const FAMILIES: &[fn(&str, &Map<String, Value>, &Declared) -> Option<Calls>] = &[
    streams::calls,
    templates::calls,
    pipelines::calls,
    policies::calls,
    queries::calls,
    transforms::calls,
    recovery::calls,
    snapshots::calls,
    ml::calls,
];

/// Rally's REST-call operations, call by call; the flag says a 404 is not an error.
fn calls(kind: &str, op: &Map<String, Value>, declared: &Declared) -> Option<Calls> {
    FAMILIES
        .iter()
        .find_map(|family| family(kind, op, declared))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn op(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn every_built_in_type_is_converted_or_has_its_reason() {
        let declared = Declared::default();
        for (kind, reason) in BUILT_IN {
            assert!(why_not(kind).contains(kind), "{kind}: {}", why_not(kind));
            if reason.is_some() {
                assert!(
                    rest_operation(kind, &Map::new(), &declared).is_none(),
                    "{kind}"
                );
            }
        }
        let names: std::collections::HashSet<_> = BUILT_IN.iter().map(|(n, _)| n).collect();
        assert_eq!(names.len(), BUILT_IN.len(), "a type is listed twice");
        assert!(why_not("my-runner").contains("track.py"));
    }

    #[test]
    fn a_template_with_its_body_wins_over_the_declared_ones_as_in_rally() {
        let declared = Declared {
            indices: Vec::new(),
            data_streams: Vec::new(),
            templates: vec![DeclaredTemplate {
                kind: "composable",
                name: "declared".into(),
                body: json!({"index_patterns": ["a-*"]}),
                index_pattern: Some("a-*".into()),
                delete_matching_indices: false,
            }],
            osb: false,
        };
        let p = rest_operation(
            "create-composable-template",
            &op(json!({"template": "own", "body": {"index_patterns": ["b-*"]}})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            (p["path"].as_str(), &p["body"]),
            (
                Some("/_index_template/own"),
                &json!({"index_patterns": ["b-*"]})
            )
        );
        let unknown = rest_operation(
            "create-composable-template",
            &op(json!({"template": "nope"})),
            &declared,
        )
        .unwrap()
        .unwrap_err();
        assert!(unknown.contains("unknown template `nope`"), "{unknown}");
    }

    #[test]
    fn wait_for_transform_stops_it_then_polls_its_stats() {
        let declared = Declared::default();
        let p = rest_operation(
            "wait-for-transform",
            &op(json!({"transform-id": "t", "transform-timeout": 60})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"requests": [
                {"method": "POST", "path": "/_transform/t/_stop", "request-params": {"force": "false", "wait_for_completion": "false", "wait_for_checkpoint": "true"}},
                {"method": "GET", "path": "/_transform/t/_stats", "until": "transform-stopped", "poll-interval": 0.5, "poll-timeout": 60}
            ]})
        );
        let p = rest_operation(
            "wait-for-transform",
            &op(json!({"transform-id": "t", "wait-for-completion": false})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p["path"], "/_transform/t/_stop");
        assert!(p.get("until").is_none());
    }

    #[test]
    fn rest_calls_follow_rallys_runners() {
        let declared = Declared {
            indices: Vec::new(),
            data_streams: vec!["logs-a".into(), "logs-b".into()],
            templates: vec![DeclaredTemplate {
                kind: "composable",
                name: "t1".into(),
                body: json!({"index_patterns": ["logs-*"]}),
                index_pattern: Some("logs-*".into()),
                delete_matching_indices: true,
            }],
            osb: false,
        };
        let p = rest_operation("delete-data-stream", &Map::new(), &declared)
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"requests": [
                {"method": "HEAD", "path": "/logs-a"},
                {"method": "DELETE", "path": "/_data_stream/logs-a", "if-found": true},
                {"method": "HEAD", "path": "/logs-b"},
                {"method": "DELETE", "path": "/_data_stream/logs-b", "if-found": true}
            ], "ignore-status": 404})
        );
        // `only-if-exists: false`: the DELETE alone, a 404 ignored.
        let p = rest_operation(
            "delete-data-stream",
            &op(json!({"only-if-exists": false, "data-stream": "x"})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"method": "DELETE", "path": "/_data_stream/x", "ignore-status": 404})
        );
        let p = rest_operation(
            "esql",
            &op(json!({"query": "FROM x | LIMIT 1", "filter": {"term": {"a": 1}}})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"method": "POST", "path": "/_query", "body": {"query": "FROM x | LIMIT 1", "filter": {"term": {"a": 1}}}})
        );
        let p = rest_operation("delete-composable-template", &Map::new(), &declared)
            .unwrap()
            .unwrap();
        assert_eq!(
            p["requests"],
            json!([
                {"method": "HEAD", "path": "/_index_template/t1"},
                {"method": "DELETE", "path": "/_index_template/t1", "if-found": true},
                {"method": "DELETE", "path": "/logs-*", "destructive": true}
            ])
        );
        // OSB's runner deletes the matching indices lifting no setting.
        let osb = Declared {
            osb: true,
            ..declared
        };
        let p = rest_operation("delete-composable-template", &Map::new(), &osb)
            .unwrap()
            .unwrap();
        assert_eq!(
            p["requests"][2],
            json!({"method": "DELETE", "path": "/logs-*"})
        );
        let declared = Declared { osb: false, ..osb };
        let p = rest_operation(
            "create-transform",
            &op(json!({"transform-id": "t", "body": {"x": 1}})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p["request-params"], json!({"defer_validation": "false"}));
        // Rally's sql pages follow each answer's cursor.
        let p = rest_operation(
            "sql",
            &op(json!({"body": {"query": "SELECT 1"}, "pages": 3})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p["cursor-pages"], 3);
        let e = rest_operation("create-data-stream", &Map::new(), &Declared::default())
            .unwrap()
            .unwrap_err();
        assert!(e.contains("names no target"), "{e}");
    }
}
