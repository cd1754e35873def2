//! Rally's and OpenSearch Benchmark's built-in operation types: the list (Rally's
//! `track.OperationType`, OSB's `workload.OperationType`), and how each becomes an operation
//! of ours. Those that are one or more REST calls are converted here into a `raw-request`,
//! with Rally's parameters and defaults (its runners and param sources in `runner.py` and
//! `params.py`); those runner cannot run have their reason. A type on neither list is one a
//! track.py registers.

use serde_json::{json, Map, Value};

/// Why a built-in type is not run (None: converted, here or by the caller).
type Reason = Option<&'static str>;

const STATE: &str =
    "it keeps state across operations (an id one call returns and later ones use), which runner's operations do not share";
const POLLS: &str =
    "it polls the cluster until a condition holds, which runner's raw requests do not do yet";
const VECTOR: &str = "k-NN vector operations are not supported";

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
    pub data_streams: Vec<String>,
    /// (kind, name, body, index pattern, delete matching indices) per template; kind is
    /// `composable`, `component` or `legacy`.
    pub templates: Vec<DeclaredTemplate>,
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
}

impl Call {
    fn new(method: &'static str, path: String) -> Call {
        Call {
            method,
            path,
            body: None,
            params: Map::new(),
            poll: Map::new(),
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

/// Rally's REST-call operations, call by call; the flag says a 404 is not an error.
#[allow(clippy::type_complexity)]
fn calls(
    kind: &str,
    op: &Map<String, Value>,
    declared: &Declared,
) -> Option<Result<(Vec<Call>, bool), String>> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| Ok((vec![c], false));
    Some(match kind {
        "create-data-stream" | "delete-data-stream" => {
            let create = kind.starts_with("create");
            let named = names(op.get("data-stream"));
            // Creating filters the declared streams by the name given; deleting takes the
            // name given, else the declared ones (Rally's param sources).
            let targets = match (create, named) {
                (true, named) if !declared.data_streams.is_empty() => declared
                    .data_streams
                    .iter()
                    .filter(|d| named.as_ref().is_none_or(|n| n.contains(d)))
                    .cloned()
                    .collect(),
                (_, Some(named)) => named,
                (_, None) => declared.data_streams.clone(),
            };
            let calls = targets
                .iter()
                .map(|n| {
                    Call::new(if create { "PUT" } else { "DELETE" }, format!("/_data_stream/{}", enc(n)))
                        .params(rp)
                })
                .collect();
            Ok((calls, !create))
        }
        "create-index-template" | "create-composable-template" | "create-component-template" => {
            let (declared_kind, endpoint) = template_kind(kind);
            let of_kind: Vec<&DeclaredTemplate> =
                declared.templates.iter().filter(|t| t.kind == declared_kind).collect();
            let wanted = string(op, "template");
            // As Rally's CreateTemplateParamSource: `template` with a `body` first, else the
            // declared templates (the one named, if named).
            let templates: Vec<(String, Value)> = match (wanted, get("body")) {
                (Some(n), Some(b)) => vec![(n, b)],
                (_, _) if of_kind.is_empty() => {
                    return Some(Err(format!("`{kind}` needs `template` and `body` when the track declares no such templates")))
                }
                (wanted, _) => {
                    let found: Vec<(String, Value)> = of_kind
                        .iter()
                        .filter(|t| wanted.as_ref().is_none_or(|w| *w == t.name))
                        .map(|t| (t.name.clone(), with_settings(kind, t.body.clone(), op.get("settings"))))
                        .collect();
                    if let (Some(w), true) = (&wanted, found.is_empty()) {
                        let names: Vec<&str> = of_kind.iter().map(|t| t.name.as_str()).collect();
                        return Some(Err(format!("unknown template `{w}` (the track declares {}), as Rally says", names.join(", "))));
                    }
                    found
                }
            };
            let calls = templates
                .into_iter()
                .map(|(n, b)| {
                    // Rally sends a component template's `template` section, as its runner does.
                    let body = if kind == "create-component-template" {
                        json!({"template": b.get("template").cloned().unwrap_or(json!({}))})
                    } else {
                        b
                    };
                    Call::new("PUT", format!("/{endpoint}/{}", enc(&n))).body(body).params(rp)
                })
                .collect();
            Ok((calls, false))
        }
        "delete-index-template" | "delete-composable-template" | "delete-component-template" => {
            let (declared_kind, endpoint) = template_kind(kind);
            let of_kind: Vec<&DeclaredTemplate> =
                declared.templates.iter().filter(|t| t.kind == declared_kind).collect();
            let wanted = string(op, "template");
            let targets: Vec<(String, Option<String>, bool)> = if of_kind.is_empty() {
                let Some(n) = wanted else {
                    return Some(Err(format!("`{kind}` needs `template` when the track declares no such templates")));
                };
                let delete = op.get("delete-matching-indices").and_then(Value::as_bool).unwrap_or(false);
                let pattern = string(op, "index-pattern");
                if delete && pattern.is_none() {
                    return Some(Err(format!("`{kind}` with `delete-matching-indices` needs `index-pattern`")));
                }
                vec![(n, pattern, delete)]
            } else {
                of_kind
                    .iter()
                    .filter(|t| wanted.as_ref().is_none_or(|w| *w == t.name))
                    .map(|t| (t.name.clone(), t.index_pattern.clone(), t.delete_matching_indices))
                    .collect()
            };
            let mut calls = Vec::new();
            for (n, pattern, delete) in targets {
                calls.push(Call::new("DELETE", format!("/{endpoint}/{}", enc(&n))).params(rp));
                // Rally deletes the indices a template matched when asked to.
                if let (Some(p), true) = (pattern, delete && kind != "delete-component-template") {
                    calls.push(Call::new("DELETE", format!("/{}", enc(&p))));
                }
            }
            Ok((calls, true))
        }
        "put-pipeline" => match (string(op, "id"), get("body")) {
            (Some(id), Some(body)) => one(Call::new("PUT", format!("/_ingest/pipeline/{}", enc(&id)))
                .body(body)
                .param("master_timeout", get("master-timeout"))
                .param("timeout", get("timeout"))),
            _ => Err("`put-pipeline` needs `id` and `body`".into()),
        },
        "delete-pipeline" => required(op, kind, "id").and_then(|id| {
            Ok((vec![Call::new("DELETE", format!("/_ingest/pipeline/{}", enc(&id)))], true))
        }),
        "create-search-pipeline" => match (string(op, "id"), get("body")) {
            (Some(id), Some(body)) => one(Call::new("PUT", format!("/_search/pipeline/{}", enc(&id))).body(body)),
            _ => Err("`create-search-pipeline` needs `id` and `body`".into()),
        },
        "create-ilm-policy" => match (string(op, "policy-name"), get("body")) {
            (Some(n), Some(body)) => one(Call::new("PUT", format!("/_ilm/policy/{}", enc(&n))).body(body).params(rp)),
            _ => Err("`create-ilm-policy` needs `policy-name` and `body`".into()),
        },
        "delete-ilm-policy" => required(op, kind, "policy-name").and_then(|n| {
            Ok((vec![Call::new("DELETE", format!("/_ilm/policy/{}", enc(&n))).params(rp)], false))
        }),
        "esql" => required(op, kind, "query").and_then(|q| {
            // Rally's body: the track's `body`, with `query` and `filter` set.
            let mut body = get("body").and_then(|b| b.as_object().cloned()).unwrap_or_default();
            body.insert("query".into(), json!(q));
            if let Some(f) = get("filter") {
                body.insert("filter".into(), f);
            }
            one(Call::new("POST", "/_query".into()).body(Value::Object(body)).params(rp))
        }),
        "sql" => match get("body") {
            Some(b) if b.get("query").is_some() => {
                if op.get("pages").and_then(Value::as_u64).unwrap_or(1) > 1 {
                    return Some(Err("`sql` with more than one page follows each answer's cursor, which runner does not carry between requests".into()));
                }
                one(Call::new("POST", "/_sql".into()).body(b))
            }
            _ => Err("`sql` needs `body.query`".into()),
        },
        "field-caps" => {
            let index = string(op, "index").unwrap_or_else(|| "_all".into());
            let mut call = Call::new("GET", format!("/{}/_field_caps", enc(&index)))
                .param("fields", Some(get("fields").unwrap_or(json!("*"))))
                .params(rp);
            let mut body = get("body").and_then(|b| b.as_object().cloned()).unwrap_or_default();
            if let Some(f) = get("index_filter") {
                body.insert("index_filter".into(), f);
            }
            if !body.is_empty() {
                call = call.body(Value::Object(body));
            }
            one(call)
        }
        "downsample" => match (string(op, "source-index"), string(op, "target-index"), get("fixed-interval")) {
            (Some(s), Some(t), Some(i)) => {
                let mut body = json!({"fixed_interval": i});
                if let Some(m) = get("sampling-method") {
                    body["sampling_method"] = m;
                }
                one(Call::new("POST", format!("/{}/_downsample/{}", enc(&s), enc(&t))).body(body).params(rp))
            }
            _ => Err("`downsample` needs `source-index`, `target-index` and `fixed-interval` (Rally's track.py param source gives them for tsdb)".into()),
        },
        "create-transform" => match (string(op, "transform-id"), get("body")) {
            (Some(id), Some(body)) => one(Call::new("PUT", format!("/_transform/{}", enc(&id)))
                .body(body)
                .param("defer_validation", Some(get("defer-validation").unwrap_or(json!(false))))),
            _ => Err("`create-transform` needs `transform-id` and `body`".into()),
        },
        "start-transform" => required(op, kind, "transform-id").and_then(|id| {
            one(Call::new("POST", format!("/_transform/{}/_start", enc(&id))).param("timeout", get("timeout")))
        }),
        "delete-transform" => required(op, kind, "transform-id").and_then(|id| {
            Ok((vec![Call::new("DELETE", format!("/_transform/{}", enc(&id)))
                .param("force", Some(get("force").unwrap_or(json!(false))))], true))
        }),
        // Rally's `wait-for-*`: one request, polled until its answer says done.
        "wait-for-recovery" => required(op, kind, "index").and_then(|index| {
            one(Call::new("GET", format!("/{}/_recovery", enc(&index)))
                .until("recovery-done", get("completion-recheck-wait-period"), None))
        }),
        "wait-for-snapshot-create" => match (string(op, "repository"), string(op, "snapshot")) {
            (Some(r), Some(s)) => one(
                Call::new("GET", format!("/_snapshot/{}/{}/_status", enc(&r), enc(&s)))
                    .param("ignore_unavailable", Some(json!(true)))
                    .until("snapshot-succeeded", get("completion-recheck-wait-period"), None),
            ),
            _ => Err("`wait-for-snapshot-create` needs `repository` and `snapshot`".into()),
        },
        "wait-for-current-snapshots-create" => required(op, kind, "repository").and_then(|r| {
            one(Call::new("GET", format!("/_snapshot/{}/_current", enc(&r)))
                .param("verbose", Some(json!(false)))
                .until("no-current-snapshots", get("completion-recheck-wait-period"), None))
        }),
        // Stop the transform once it reaches its next checkpoint, then wait until it has.
        "wait-for-transform" => required(op, kind, "transform-id").and_then(|id| {
            let stop = Call::new("POST", format!("/_transform/{}/_stop", enc(&id)))
                .param("force", Some(get("force").unwrap_or(json!(false))))
                .param("timeout", get("timeout"))
                .param("wait_for_completion", Some(json!(false)))
                .param("wait_for_checkpoint", Some(get("wait-for-checkpoint").unwrap_or(json!(true))));
            if get("wait-for-completion") == Some(json!(false)) {
                return one(stop);
            }
            let stats = Call::new("GET", format!("/_transform/{}/_stats", enc(&id))).until(
                "transform-stopped",
                Some(get("poll-interval").unwrap_or(json!(0.5))),
                Some(get("transform-timeout").unwrap_or(json!(3600))),
            );
            Ok((vec![stop, stats], false))
        }),
        "create-snapshot-repository" => match (string(op, "repository"), get("body")) {
            (Some(r), Some(body)) => one(Call::new("PUT", format!("/_snapshot/{}", enc(&r))).body(body).params(rp)),
            _ => Err("`create-snapshot-repository` needs `repository` and `body`".into()),
        },
        "delete-snapshot-repository" => required(op, kind, "repository").and_then(|r| {
            Ok((vec![Call::new("DELETE", format!("/_snapshot/{}", enc(&r)))], true))
        }),
        "create-snapshot" | "restore-snapshot" => match (string(op, "repository"), string(op, "snapshot")) {
            (Some(r), Some(s)) => {
                let (method, path) = if kind == "create-snapshot" {
                    ("PUT", format!("/_snapshot/{}/{}", enc(&r), enc(&s)))
                } else {
                    ("POST", format!("/_snapshot/{}/{}/_restore", enc(&r), enc(&s)))
                };
                let mut call = Call::new(method, path)
                    .param("wait_for_completion", Some(get("wait-for-completion").unwrap_or(json!(false))))
                    .params(rp);
                if let Some(b) = get("body") {
                    call = call.body(b);
                }
                one(call)
            }
            _ => Err(format!("`{kind}` needs `repository` and `snapshot`")),
        },
        "create-ml-datafeed" => ml(op, kind, "datafeed-id", |id| Call::new("PUT", format!("/_ml/datafeeds/{id}")), true),
        "delete-ml-datafeed" => ml(op, kind, "datafeed-id", |id| Call::new("DELETE", format!("/_ml/datafeeds/{id}")), false)
            .map(|(c, _)| (c.into_iter().map(|c| c.param("force", Some(get("force").unwrap_or(json!(false))))).collect(), true)),
        "start-ml-datafeed" => ml(op, kind, "datafeed-id", |id| Call::new("POST", format!("/_ml/datafeeds/{id}/_start")), false)
            .map(|(c, i)| (c.into_iter().map(|c| c.param("start", get("start")).param("end", get("end")).param("timeout", get("timeout"))).collect(), i)),
        "stop-ml-datafeed" => ml(op, kind, "datafeed-id", |id| Call::new("POST", format!("/_ml/datafeeds/{id}/_stop")), false)
            .map(|(c, i)| (c.into_iter().map(|c| c.param("force", get("force")).param("timeout", get("timeout"))).collect(), i)),
        "create-ml-job" => ml(op, kind, "job-id", |id| Call::new("PUT", format!("/_ml/anomaly_detectors/{id}")), true),
        "delete-ml-job" => ml(op, kind, "job-id", |id| Call::new("DELETE", format!("/_ml/anomaly_detectors/{id}")), false)
            .map(|(c, _)| (c.into_iter().map(|c| c.param("force", Some(get("force").unwrap_or(json!(false))))).collect(), true)),
        "open-ml-job" => ml(op, kind, "job-id", |id| Call::new("POST", format!("/_ml/anomaly_detectors/{id}/_open")), false),
        "close-ml-job" => ml(op, kind, "job-id", |id| Call::new("POST", format!("/_ml/anomaly_detectors/{id}/_close")), false)
            .map(|(c, i)| (c.into_iter().map(|c| c.param("force", get("force")).param("timeout", get("timeout"))).collect(), i)),
        _ => return None,
    })
}

fn ml(
    op: &Map<String, Value>,
    kind: &str,
    id_key: &str,
    call: impl Fn(String) -> Call,
    with_body: bool,
) -> Result<(Vec<Call>, bool), String> {
    let id = required(op, kind, id_key)?;
    let mut c = call(enc(&id));
    if with_body {
        c = c.body(
            op.get("body")
                .cloned()
                .ok_or_else(|| format!("`{kind}` needs `body`"))?,
        );
    }
    Ok((vec![c], false))
}

/// A data stream name or a list of them.
fn names(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}

/// Rally merges a create-template operation's `settings` into each template's settings.
fn with_settings(kind: &str, mut body: Value, settings: Option<&Value>) -> Value {
    let Some(Value::Object(settings)) = settings else {
        return body;
    };
    let target = if kind == "create-index-template" {
        &mut body
    } else {
        match body.get_mut("template") {
            Some(t) => t,
            None => return body,
        }
    };
    if let Some(t) = target.as_object_mut() {
        let entry = t.entry("settings").or_insert(json!({}));
        if let Some(e) = entry.as_object_mut() {
            e.extend(settings.clone());
        }
    }
    body
}

fn template_kind(kind: &str) -> (&'static str, &'static str) {
    if kind.contains("component") {
        ("component", "_component_template")
    } else if kind.contains("composable") {
        ("composable", "_index_template")
    } else {
        ("legacy", "_template")
    }
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
            data_streams: Vec::new(),
            templates: vec![DeclaredTemplate {
                kind: "composable",
                name: "declared".into(),
                body: json!({"index_patterns": ["a-*"]}),
                index_pattern: Some("a-*".into()),
                delete_matching_indices: false,
            }],
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
            data_streams: vec!["logs-a".into(), "logs-b".into()],
            templates: vec![DeclaredTemplate {
                kind: "composable",
                name: "t1".into(),
                body: json!({"index_patterns": ["logs-*"]}),
                index_pattern: Some("logs-*".into()),
                delete_matching_indices: true,
            }],
        };
        let p = rest_operation("delete-data-stream", &Map::new(), &declared)
            .unwrap()
            .unwrap();
        assert_eq!(
            Value::Object(p),
            json!({"requests": [{"method": "DELETE", "path": "/_data_stream/logs-a"}, {"method": "DELETE", "path": "/_data_stream/logs-b"}], "ignore-status": 404})
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
            json!([{"method": "DELETE", "path": "/_index_template/t1"}, {"method": "DELETE", "path": "/logs-*"}])
        );
        let p = rest_operation(
            "create-transform",
            &op(json!({"transform-id": "t", "body": {"x": 1}})),
            &declared,
        )
        .unwrap()
        .unwrap();
        assert_eq!(p["request-params"], json!({"defer_validation": "false"}));
        let e = rest_operation(
            "sql",
            &op(json!({"body": {"query": "SELECT 1"}, "pages": 3})),
            &declared,
        )
        .unwrap()
        .unwrap_err();
        assert!(e.contains("cursor"), "{e}");
        let e = rest_operation("create-data-stream", &Map::new(), &Declared::default())
            .unwrap()
            .unwrap_err();
        assert!(e.contains("names no target"), "{e}");
    }
}
