//! Rally's operations as ours: each family's parameters translated, REST calls through the registry, what cannot run with its reason.

use super::*;

/// Rally's administrative operation types: left out of its report unless a task sets
/// `include-in-reporting: true`.
pub(super) const ADMIN_TYPES: [&str; 16] = [
    "create-index",
    "delete-index",
    "refresh",
    "force-merge",
    "cluster-health",
    "put-settings",
    "sleep",
    "create-index-template",
    "delete-index-template",
    "create-composable-template",
    "delete-composable-template",
    "create-component-template",
    "delete-component-template",
    "shrink-index",
    "create-data-stream",
    "wait-for-transform",
];

/// Seconds (a number, as Rally writes times) as one of our durations.
pub(super) fn seconds(v: &Value) -> Option<String> {
    v.as_f64().filter(|s| *s >= 0.0).map(|s| {
        if s.fract() == 0.0 {
            format!("{}s", s as u64)
        } else {
            format!("{}ms", (s * 1000.0).round() as u64)
        }
    })
}

/// A Rally operation as ours, or why it cannot be run (a decision for `--on-unsupported`, not
/// an error in the track).
pub(super) enum OperationAs {
    Ours(Value),
    Unsupported(String),
}

/// The track's `data-streams`, `composable-templates`, `component-templates` and
/// `templates`, with each template's body read from its file.
pub(super) fn declared(
    c: &Ctx,
    top: &Map<String, Value>,
) -> Result<crate::rally::registry::Declared, TrackError> {
    let mut out = crate::rally::registry::Declared::default();
    for ds in top
        .get("data-streams")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(n) = ds.get("name").and_then(Value::as_str) {
            out.data_streams.push(n.to_string());
        }
    }
    for (key, kind) in [
        ("composable-templates", "composable"),
        ("component-templates", "component"),
        ("templates", "legacy"),
    ] {
        for (i, t) in top
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                return Err(c.err(&format!("/{key}/{i}"), "a template needs a `name`"));
            };
            let mut body = match t.get("template") {
                Some(Value::String(f)) => (c.render_body)(f)?,
                Some(b @ Value::Object(_)) => b.clone(),
                _ => {
                    return Err(c.err(
                        &format!("/{key}/{i}"),
                        "a template needs its `template` file",
                    ))
                }
            };
            // Rally's `template-path`: where in the file the template is (dot-separated keys).
            if let Some(at) = t.get("template-path").and_then(Value::as_str) {
                for field in at.split('.') {
                    body = match body {
                        Value::Object(mut m) if m.contains_key(field) => {
                            m.remove(field).unwrap_or_default()
                        }
                        _ => {
                            return Err(c.err(
                                &format!("/{key}/{i}/template-path"),
                                format!("the template file has no `{field}` on the path `{at}`"),
                            ))
                        }
                    };
                }
            }
            out.templates
                .push(crate::rally::registry::DeclaredTemplate {
                    kind,
                    name: name.to_string(),
                    body,
                    index_pattern: t
                        .get("index-pattern")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    // Rally deletes what a template matched unless told not to.
                    delete_matching_indices: t
                        .get("delete-matching-indices")
                        .and_then(Value::as_bool)
                        .unwrap_or(true),
                });
        }
    }
    Ok(out)
}

/// One Rally operation as ours, or why it cannot be run.
pub(super) fn operation(c: &mut Ctx, op: &Value, path: &str) -> Result<OperationAs, TrackError> {
    let Some(map) = op.as_object() else {
        return Err(c.err(path, "an operation is an object"));
    };
    let kind = map
        .get("operation-type")
        .and_then(Value::as_str)
        .ok_or_else(|| c.err(path, "an operation needs an `operation-type`"))?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or(kind)
        .to_string();
    if let Some(ours) = super::python::operation(c, map, kind, &name) {
        return Ok(ours);
    }
    let converted = match kind {
        "bulk" => {
            known_corpora(c, map, path)?;
            bulk(c, map)
        }
        "search" | "paginated-search" | "scroll-search" => search(c, map, kind, path),
        "create-index" => create_index(c, map, &name),
        "delete-index" | "refresh" | "force-merge" => admin(c, map, kind),
        "cluster-health" => cluster_health(map),
        "raw-request" => raw_request(map),
        "index-stats" | "node-stats" => stats(map, kind),
        "put-settings" => put_settings(map),
        "sleep" => sleep(map),
        other => rest(c, map, other),
    };
    // Rally's `Retry` parameters become the task's `retry`; index-stats' `condition`, which
    // decides whether an attempt succeeded, is not run (said, not hidden).
    if converted.is_ok() && map.get("condition").is_some() {
        c.notes.push(format!(
            "{path}: Rally's `condition` not run: each attempt's answer is taken as a success"
        ));
    }
    Ok(match converted {
        Ok((our_kind, params)) => {
            OperationAs::Ours(json!({"name": name, "type": our_kind, "params": params}))
        }
        Err(why) => OperationAs::Unsupported(why),
    })
}

/// What an operation of one family becomes: our type and its params, or why it cannot run.
type Becomes = Result<(&'static str, Map<String, Value>), String>;

/// Our operation type of the same name, which these families keep.
fn ours(kind: &str) -> Result<&'static str, String> {
    crate::ops::OperationType::names()
        .find(|n| *n == kind)
        .ok_or_else(|| format!("Rally's `{kind}` has no operation type of the same name here"))
}

/// A target given as a list: its first (Rally's param sources take the first index).
fn index_of(v: Option<Value>) -> Option<Value> {
    match v {
        Some(Value::Array(a)) => a.first().cloned(),
        other => other,
    }
}

/// A bulk's `corpora` that the track declares: Rally indexes those and ignores the others
/// (a corpus may exist only under other track parameters); naming none of them is an error.
fn known_corpora(c: &Ctx, map: &Map<String, Value>, path: &str) -> Result<(), TrackError> {
    let names: Vec<&str> = match map.get("corpora") {
        Some(Value::String(s)) => vec![s.as_str()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => return Ok(()),
    };
    // A drawn operation is converted without the track's corpora.
    let known = |n: &&str| c.corpus_names.is_empty() || c.corpus_names.iter().any(|k| k == n);
    if names.is_empty() || names.iter().any(known) {
        return Ok(());
    }
    let hint = crate::suggest::did_you_mean(names[0], c.corpus_names.iter().map(String::as_str));
    Err(c.err(
        &format!("{path}/corpora"),
        format!(
            "bulk names corpora {}, none of which the track declares{hint}",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

/// A number as Rally's `int(...)` reads it: a float truncated, a string of digits parsed;
/// None for anything else (left for the check to name).
fn rally_int(v: &Value) -> Option<Value> {
    match v {
        Value::Number(n) if n.is_f64() => n
            .as_f64()
            .filter(|f| f.is_finite())
            .map(|f| json!(f.trunc() as i64)),
        Value::String(s) => s.trim().parse::<i64>().ok().map(|n| json!(n)),
        _ => None,
    }
}

/// Rally's `bulk`: the corpora it indexes (one, several, else all) and its id-conflict and pipeline params.
fn bulk(c: &Ctx, map: &Map<String, Value>) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    if let Some(v) = get("bulk-size") {
        params.insert("bulk-size".into(), rally_int(&v).unwrap_or(v));
    }
    // Rally's `corpora` (one name or several, else every corpus of the track).
    match get("corpora") {
        Some(Value::Array(a)) => {
            let known: Vec<Value> = a
                .into_iter()
                .filter(|n| {
                    c.corpus_names.is_empty() || c.corpus_names.iter().any(|k| n == k.as_str())
                })
                .collect();
            match known.as_slice() {
                [one] => params.insert("corpus".into(), one.clone()),
                _ => params.insert("corpus".into(), Value::Array(known)),
            };
        }
        Some(v) => {
            params.insert("corpus".into(), v);
        }
        None if c.corpus_names.len() > 1 => {
            params.insert("corpus".into(), json!(c.corpus_names));
        }
        None => {}
    }
    // Rally keeps the corpus documents that target these indices or data streams.
    let mut targets: Vec<Value> = Vec::new();
    for key in ["indices", "data-streams"] {
        match get(key) {
            Some(Value::Array(a)) => targets.extend(a),
            Some(v @ Value::String(_)) => targets.push(v),
            _ => {}
        }
    }
    if !targets.is_empty() {
        params.insert("indices".into(), Value::Array(targets));
    }
    if let Some(v) = get("ingest-percentage") {
        params.insert("ingest-percentage".into(), v);
    }
    for same in [
        "conflicts",
        "conflict-probability",
        "on-conflict",
        "recency",
        "looped",
        "pipeline",
    ] {
        if let Some(v) = get(same) {
            params.insert(same.into(), v);
        }
    }
    // Rally's bulk bodies: each action line names the index, sent to `/_bulk` (POSTed by
    // OSB's client); the corpus cut per load-driver worker, as both drivers cut it.
    let driver = if c.osb { "osb" } else { "rally" };
    params.insert("action-lines".into(), json!(driver));
    params.insert("split".into(), json!(driver));
    Ok(("bulk", params))
}

/// Rally's searches, paginated and scrolled: the index, the body and URL parameters, what is ignored said in a note.
fn search(c: &mut Ctx, map: &Map<String, Value>, kind: &str, path: &str) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    params.insert("index".into(), json!(search_target(c, map)?));
    // Rally before 2.x scrolled with a `search` that had `pages`.
    let kind = if kind == "search" && map.contains_key("pages") {
        "scroll-search"
    } else {
        kind
    };
    let mut keys = vec!["body", "request-params"];
    if kind != "search" {
        keys.extend(["pages", "results-per-page"]);
        if map.contains_key("with-point-in-time-from") {
            return Err(
                "`with-point-in-time-from` (point-in-time searches) is not supported".into(),
            );
        }
    }
    for k in keys {
        if let Some(v) = get(k) {
            params.insert(k.into(), v);
        }
    }
    // Rally's Query runner sets a search's body `size` to `results-per-page`, when not zero.
    // (Elasticsearch reads a number given as a string too.)
    let per_page = get("results-per-page")
        .and_then(|v| v.as_u64().or_else(|| v.as_str()?.trim().parse().ok()))
        .filter(|&n| kind == "search" && n != 0);
    if let Some(size) = per_page {
        params.insert("size".into(), json!(size));
    }
    // Rally's `cache` is the request cache URL parameter.
    if let Some(cache) = map.get("cache").and_then(Value::as_bool) {
        let rp = params.entry("request-params").or_insert(json!({}));
        if let Some(o) = rp.as_object_mut() {
            o.entry("request_cache").or_insert(json!(cache.to_string()));
        }
    }
    let ignored: Vec<&str> = [
        "detailed-results",
        "request-timeout",
        "opaque-id",
        "response-compression-enabled",
        "assertions",
    ]
    .into_iter()
    .filter(|k| map.contains_key(*k))
    .collect();
    if !ignored.is_empty() {
        c.notes
            .push(format!("{path}: search `{}` ignored", ignored.join("`, `")));
    }
    Ok((ours(kind)?, params))
}

/// Index administration; refresh and force-merge with no index declared default as Rally's.
fn admin(c: &Ctx, map: &Map<String, Value>, kind: &str) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    if let Some(v) = index_of(get("index")) {
        params.insert("index".into(), v);
    } else if kind == "refresh" {
        // Rally's refresh runner: `_all` unless the operation names an index (sent to
        // `/_refresh` by Rally's client, to `/_all/_refresh` by OSB's).
        params.insert("index".into(), json!("_all"));
        if c.osb {
            params.insert("all-in-path".into(), json!(true));
        }
    } else if let Some(stream) = get("data-stream").filter(|_| kind == "force-merge") {
        // Rally's ForceMergeParamSource: `index`, else `data-stream`, else its default.
        params.insert("index".into(), stream);
    } else if !c.has_indices && kind == "force-merge" {
        // Rally's default with no indices declared: the data streams, else `_all`.
        let target = match c.declared.data_streams.as_slice() {
            [] => "_all".to_string(),
            streams => streams.join(","),
        };
        params.insert("index".into(), json!(target));
    }
    if kind == "force-merge" {
        // Rally's ForceMergeParamSource: `mode` (`polling`: the task polled every
        // `poll-period`, 10 s unless given) beside `max-num-segments`.
        for k in ["max-num-segments", "mode", "poll-period"] {
            if let Some(v) = get(k) {
                params.insert(k.into(), v);
            }
        }
    }
    if kind == "delete-index" {
        // Rally's DeleteIndexParamSource: `only-if-exists` defaults to true.
        let only = get("only-if-exists")
            .and_then(|v| v.as_bool())
            .unwrap_or(true);
        params.insert("only-if-exists".into(), json!(only));
        // OSB's DeleteIndex lifts no `action.destructive_requires_name`.
        if c.osb {
            params.insert("lift-destructive".into(), json!(false));
        }
    }
    Ok((ours(kind)?, params))
}

/// Rally's `create-index` (its CreateIndexParamSource): where the track declares indices, those
/// `index` names (one or a list; all when absent), each with the operation's `settings` merged
/// into its body; a name the track does not declare makes nothing. Where it declares none,
/// `index` is required and each is made from the operation's `body`.
fn create_index(c: &mut Ctx, map: &Map<String, Value>, name: &str) -> Becomes {
    let wanted: Option<Vec<String>> = match map.get("index") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(vec![s.clone()]),
        Some(Value::Array(a)) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        Some(other) => {
            return Err(format!(
                "create-index takes an index name or a list of them, not {other}"
            ))
        }
    };
    let mut params = Map::new();
    if c.has_indices {
        if let Some(wanted) = wanted {
            let (kept, dropped): (Vec<String>, Vec<String>) = wanted
                .into_iter()
                .partition(|n| c.declared.indices.contains(n));
            if !dropped.is_empty() {
                c.notes.push(format!(
                    "operation `{name}`: create-index makes no index the track does not declare ({}), as Rally's CreateIndexParamSource (esrally 2.13 then fails the task: it times no request)",
                    dropped.join(", ")
                ));
            }
            params.insert("index".into(), json!(kept));
        }
        if let Some(settings) = map.get("settings").filter(|s| !s.is_null()) {
            params.insert("settings".into(), settings.clone());
        }
    } else {
        let wanted = wanted
            .ok_or("Please set the property 'index' for the create-index operation (Rally's own words: the track declares no indices)")?;
        params.insert("index".into(), json!(wanted));
        params.insert(
            "body".into(),
            map.get("body")
                .filter(|b| !b.is_null())
                .cloned()
                .unwrap_or_else(|| json!({})),
        );
    }
    Ok(("create-index", params))
}

/// What a search reaches, as Rally's `get_target`: its `index` (a list joined with commas, as
/// the client joins it), else its `data-stream`, else the track's only index, else its only
/// data stream; none of them is Rally's InvalidSyntax.
fn search_target(c: &Ctx, map: &Map<String, Value>) -> Result<String, String> {
    let named = |v: Option<&Value>| -> Option<String> {
        match v? {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Array(a) if !a.is_empty() => Some(
                a.iter()
                    .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_string))
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            _ => None,
        }
    };
    let only = |names: &[String]| match names {
        [one] => Some(one.clone()),
        _ => None,
    };
    named(map.get("index").or_else(|| map.get("indices")))
        .or_else(|| named(map.get("data-stream")))
        .or_else(|| only(&c.declared.indices))
        .or_else(|| only(&c.declared.data_streams))
        .ok_or_else(|| {
            let name = map.get("name").and_then(Value::as_str).unwrap_or("search");
            format!("'index' or 'data-stream' is mandatory and is missing for operation '{name}' (Rally's words: the track declares no one index or data stream to default to)")
        })
}

/// `cluster-health`: Rally's `wait_for_status` URL parameter is our `wait-for-status`.
fn cluster_health(map: &Map<String, Value>) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    if let Some(v) = index_of(get("index")) {
        params.insert("index".into(), v);
    }
    let mut rp = get("request-params")
        .and_then(|v| v.as_object().cloned())
        .unwrap_or_default();
    if let Some(status) = rp.remove("wait_for_status") {
        params.insert("wait-for-status".into(), status);
    }
    if !rp.is_empty() {
        params.insert("request-params".into(), Value::Object(rp));
    }
    Ok(("cluster-health", params))
}

/// `raw-request`: Rally's `ignore` is our `ignore-status`; a path's query string becomes `request-params`.
fn raw_request(map: &Map<String, Value>) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    for k in ["method", "path", "body", "request-params"] {
        if let Some(v) = get(k) {
            params.insert(k.into(), v);
        }
    }
    // Rally's `ignore`: statuses the client does not raise on (one or a list).
    if let Some(v) = get("ignore") {
        params.insert("ignore-status".into(), v);
    }
    // Rally sends a path's query string as written; ours are `request-params`.
    let query = params
        .get("path")
        .and_then(Value::as_str)
        .and_then(|p| p.split_once('?'))
        .map(|(path, q)| (path.to_string(), q.to_string()));
    if let Some((path, query)) = query {
        params.insert("path".into(), json!(path));
        let rp = params.entry("request-params").or_insert(json!({}));
        if let Some(rp) = rp.as_object_mut() {
            for pair in query.split('&').filter(|p| !p.is_empty()) {
                let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                rp.entry(percent_decode(k))
                    .or_insert(json!(percent_decode(v)));
            }
        }
    }
    Ok(("raw-request", params))
}

/// `index-stats` and `node-stats` as GET requests.
fn stats(map: &Map<String, Value>, kind: &str) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    // Rally's runners: `es.indices.stats(index=<index or _all>, metric="_all")` and
    // `es.nodes.stats(metric="_all")`, which the client sends to these paths.
    let p = if kind == "index-stats" {
        let index = index_of(get("index"))
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "_all".into());
        format!("/{index}/_stats/_all")
    } else {
        "/_nodes/stats/_all".into()
    };
    params.insert("method".into(), json!("GET"));
    params.insert("path".into(), json!(p));
    Ok(("raw-request", params))
}

/// `put-settings` as a PUT of the cluster's settings.
fn put_settings(map: &Map<String, Value>) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    params.insert("method".into(), json!("PUT"));
    params.insert("path".into(), json!("/_cluster/settings"));
    params.insert("body".into(), get("body").unwrap_or(json!({})));
    Ok(("raw-request", params))
}

/// `sleep`, for its `duration`.
fn sleep(map: &Map<String, Value>) -> Becomes {
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    params.insert("duration".into(), get("duration").unwrap_or(json!(0)));
    Ok(("sleep", params))
}

/// Rally's REST-call types, through the registry of their families.
fn rest(c: &Ctx, map: &Map<String, Value>, kind: &str) -> Becomes {
    match crate::rally::registry::rest_operation(kind, map, &c.declared) {
        Some(Ok(rest)) => Ok(("raw-request", rest)),
        Some(Err(why)) => Err(format!("Rally's `{kind}`: {why}")),
        None => Err(crate::rally::registry::why_not(kind)),
    }
}

/// `%41` as `A` and `+` as a space, as a query string's parts are read.
pub(super) fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1).and_then(|b| hex(*b)),
            bytes.get(i + 2).and_then(|b| hex(*b)),
        ) {
            (b'%', Some(hi), Some(lo)) => {
                out.push((hi * 16 + lo) as u8);
                i += 3;
            }
            (b'+', _, _) => {
                out.push(b' ');
                i += 1;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
