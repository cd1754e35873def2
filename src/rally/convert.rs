//! A rendered Rally track (JSON) turned into a track of ours, following Rally's semantics where
//! they differ: iterations and warmup iterations are per client in Rally (ours are totals),
//! Rally's `time-period` is measured after `warmup-time-period` (ours includes the warmup),
//! times are seconds, operation params sit beside `operation-type`, a track's name is its
//! directory, and `--test-mode` reads each corpus file's `-1k` variant. What the runner cannot do
//! (custom runners, some params) fails the conversion, or skips the task with
//! `--on-unsupported skip`; every such decision is returned as a note.

use crate::track::{TrackError, TrackErrorKind};
use serde_json::{json, Map, Value};
use std::path::Path;

pub use crate::track::OnUnsupported;

#[derive(Debug)]
pub struct Converted {
    pub track: Value,
    /// What was skipped, dropped or approximated, one line each.
    pub notes: Vec<String>,
    /// For each operation a track.py param source fed: a commented start of its bindings.
    pub binding_stubs: Vec<String>,
}

struct Ctx<'a> {
    file: &'a Path,
    test_mode: bool,
    on_unsupported: OnUnsupported,
    notes: Vec<String>,
    /// Rally's operation type of each declared operation, by name.
    rally_types: std::collections::HashMap<String, String>,
    /// Rendered index bodies by file name (Rally bodies are templates too).
    render_body: &'a dyn Fn(&str) -> Result<Value, TrackError>,
    /// The track's data streams and templates, which operations naming no target act on.
    declared: super::registry::Declared,
    /// The track's corpora, by name: a bulk naming none indexes them all, as in Rally.
    corpus_names: Vec<String>,
    /// Whether the track declares `indices` (else refresh and force-merge default as Rally's).
    has_indices: bool,
    /// In the challenge being converted, the first skipped task that would have put index
    /// templates: data streams made after it would lack theirs.
    skipped_templates: Option<String>,
    /// Whether a task before, in that challenge, puts index templates and runs.
    made_templates: bool,
}

impl Ctx<'_> {
    fn err(&self, path: &str, message: impl Into<String>) -> TrackError {
        TrackError::new(TrackErrorKind::Invalid, self.file, message).with_path(path)
    }
}

/// Converts a rendered Rally track; `name` is its directory's name. Only the challenge a race
/// will run (`challenge`, else the track's default) fails on a task the runner cannot run; in
/// the others such tasks are left out with a note, and a challenge left with nothing to run
/// is dropped with one: a track is not refused for a challenge nobody asked for.
pub fn convert(
    rally: &Value,
    file: &Path,
    name: &str,
    test_mode: bool,
    on_unsupported: OnUnsupported,
    challenge_wanted: Option<&str>,
    render_body: &dyn Fn(&str) -> Result<Value, TrackError>,
) -> Result<Converted, TrackError> {
    let mut c = Ctx {
        file,
        test_mode,
        on_unsupported,
        notes: Vec::new(),
        rally_types: Default::default(),
        render_body,
        declared: Default::default(),
        corpus_names: Vec::new(),
        has_indices: false,
        skipped_templates: None,
        made_templates: false,
    };
    let Some(top) = rally.as_object() else {
        return Err(c.err("/", "a Rally track is a JSON object"));
    };
    let mut out = Map::new();
    let clean: String = name
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || "_.-".contains(ch) {
                ch
            } else {
                '-'
            }
        })
        .collect();
    out.insert(
        "name".into(),
        json!(if clean.is_empty() {
            "rally-track".to_string()
        } else {
            clean
        }),
    );
    if let Some(d) = top.get("description").and_then(Value::as_str) {
        out.insert("description".into(), json!(d));
    }
    let indices = top
        .get("indices")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut our_indices = Vec::new();
    for (i, idx) in indices.iter().enumerate() {
        let Some(n) = idx.get("name").and_then(Value::as_str) else {
            return Err(c.err(&format!("/indices/{i}"), "an index needs a name"));
        };
        let mut o = Map::new();
        o.insert("name".into(), json!(n));
        match idx.get("body") {
            Some(Value::String(f)) => {
                o.insert("body".into(), (c.render_body)(f)?);
            }
            Some(b @ Value::Object(_)) => {
                o.insert("body".into(), b.clone());
            }
            _ => {}
        }
        our_indices.push(Value::Object(o));
    }
    c.has_indices = !our_indices.is_empty();
    out.insert("indices".into(), Value::Array(our_indices));
    c.declared = declared(&c, top)?;
    let our_corpora = corpora(&mut c, top)?;
    c.corpus_names = our_corpora
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    out.insert("corpora".into(), Value::Array(our_corpora));
    let mut ops = Vec::new();
    let mut unsupported_ops = Map::new();
    let mut binding_stubs = Vec::new();
    for (i, op) in top
        .get("operations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        if let (Some(n), Some(t)) = (
            op.get("name").and_then(Value::as_str),
            op.get("operation-type").and_then(Value::as_str),
        ) {
            c.rally_types.insert(n.to_string(), t.to_string());
        }
        match operation(&mut c, op, &format!("/operations/{i}"))? {
            OperationAs::Ours(o) => ops.push(o),
            OperationAs::Unsupported(why) => {
                let n = op
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string();
                if let Some(source) = op.get("param-source").and_then(Value::as_str) {
                    binding_stubs.push(binding_stub(&n, op, source));
                }
                unsupported_ops.insert(n, json!(why));
            }
        }
    }
    out.insert("operations".into(), Value::Array(ops.clone()));
    // OpenSearch Benchmark names challenges test procedures.
    let challenges: Vec<Value> = match (
        top.get("challenges").or_else(|| top.get("test_procedures")),
        top.get("challenge").or_else(|| top.get("test_procedure")),
        top.get("schedule"),
    ) {
        (Some(Value::Array(cs)), _, _) => cs.clone(),
        (_, Some(ch), _) => vec![ch.clone()],
        (_, _, Some(s)) => vec![json!({"name": "default", "default": true, "schedule": s})],
        _ => {
            return Err(c.err(
                "/",
                "a Rally track needs `challenges`, `challenge` or `schedule` (an OpenSearch Benchmark workload `test_procedures` or `test_procedure`)",
            ))
        }
    };
    let selected = selected_challenge(&challenges, challenge_wanted);
    let mut our = Vec::new();
    for (i, ch) in challenges.iter().enumerate() {
        let path = format!("/challenges/{i}");
        if Some(i) == selected {
            our.push(challenge(&mut c, ch, &path, &ops, &unsupported_ops)?);
            continue;
        }
        let strict = std::mem::replace(&mut c.on_unsupported, OnUnsupported::Skip);
        let converted = challenge(&mut c, ch, &path, &ops, &unsupported_ops);
        c.on_unsupported = strict;
        match converted {
            Ok(ours) => our.push(ours),
            Err(e) => c.notes.push(format!(
                "{path}: challenge `{}` is left out (not the one raced): {}",
                ch.get("name").and_then(Value::as_str).unwrap_or("default"),
                e.message
            )),
        }
    }
    out.insert("challenges".into(), Value::Array(our));
    Ok(Converted {
        track: Value::Object(out),
        notes: c.notes,
        binding_stubs,
    })
}

/// A commented operation to start from where a track.py param source made the params: the
/// same name and type, a body with a `${value}` slot, and a binding to fill it.
fn binding_stub(name: &str, op: &Value, source: &str) -> String {
    let kind = op["operation-type"].as_str().unwrap_or("search");
    let index = op["index"].as_str().unwrap_or("<index>");
    format!(
        "operation `{name}` took its params from track.py's param source `{source}`, which runner cannot run.\n\
         Read what that source returns in track.py, and write it with bindings (docs/tracks.md, \"Parameter bindings\"); a start:\n\
         \x20 - name: {name}\n\
         \x20   type: {kind}\n\
         \x20   params:\n\
         \x20     index: {index}\n\
         \x20     body: {{query: {{match: {{<field>: \"${{value}}\"}}}}}}\n\
         \x20     bindings:\n\
         \x20       value: {{choice-file: <values.txt>}}   # or choice, lines, int, float, date, sequence, weighted, uuid, zipf"
    )
}

fn corpora(c: &mut Ctx, top: &Map<String, Value>) -> Result<Vec<Value>, TrackError> {
    let mut out = Vec::new();
    for (i, corpus) in top
        .get("corpora")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let path = format!("/corpora/{i}");
        let name = corpus
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| c.err(&path, "a corpus needs a name"))?;
        let mut docs = Vec::new();
        for (j, d) in corpus
            .get("documents")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let dpath = format!("{path}/documents/{j}");
            let source = d
                .get("source-file")
                .and_then(Value::as_str)
                .ok_or_else(|| c.err(&dpath, "documents need a `source-file`"))?;
            let mut count = d.get("document-count").and_then(Value::as_u64);
            // Rally's test mode reads `<name>-1k.<ext>`: the first 1,000 documents.
            let source = if c.test_mode {
                count = count.map(|n| n.min(1000));
                test_mode_file(source)
            } else {
                source.to_string()
            };
            let mut o = Map::new();
            o.insert("source-file".into(), json!(source));
            if let Some(n) = count {
                o.insert("document-count".into(), json!(n));
            }
            if let Some(t) = d.get("target-index").or_else(|| corpus.get("target-index")) {
                o.insert("target-index".into(), t.clone());
            } else if let Some(t) = d
                .get("target-data-stream")
                .or_else(|| corpus.get("target-data-stream"))
            {
                o.insert("target-data-stream".into(), t.clone());
            }
            if d.get("includes-action-and-meta-data")
                .and_then(Value::as_bool)
                == Some(true)
            {
                o.insert("includes-action-and-meta-data".into(), json!(true));
            }
            if d.get("compressed-bytes").is_some() || d.get("uncompressed-bytes").is_some() {
                c.notes.push(format!("{dpath}: compressed-bytes/uncompressed-bytes are not checked; document-count is"));
            }
            docs.push(Value::Object(o));
        }
        out.push(json!({"name": name, "documents": docs}));
    }
    Ok(out)
}

/// `name` split as Python's `os.path.splitext` does (the last dot of the file name, not a
/// leading one), except that `.tar.gz` and `.tar.bz2` stay whole, as in Rally's `io.splitext`.
fn splitext(name: &str) -> (&str, &str) {
    for whole in [".tar.gz", ".tar.bz2"] {
        if let Some(stem) = name.strip_suffix(whole) {
            return (stem, &name[stem.len()..]);
        }
    }
    let base_start = name.rfind('/').map_or(0, |i| i + 1);
    let base = &name[base_start..];
    match base.rfind('.') {
        // A dot that only leads the name (`.hidden`, `..x`) is no extension.
        Some(i) if base[..i].chars().any(|c| c != '.') => {
            (&name[..base_start + i], &name[base_start + i..])
        }
        _ => (name, ""),
    }
}

/// The file Rally's test mode reads instead of `source`, as Rally names it: the `-1k` goes before
/// the document extension, inside any compression extension. `documents.json.bz2` →
/// `documents-1k.json.bz2`, `documents-181998.unparsed.json.bz2` →
/// `documents-181998.unparsed-1k.json.bz2`, `docs.json` → `docs-1k.json`.
pub fn test_mode_file(source: &str) -> String {
    const COMPRESSED: [&str; 8] = [
        ".bz2", ".gz", ".zst", ".zip", ".tgz", ".tar", ".tar.gz", ".tar.bz2",
    ];
    let (path, ext) = splitext(source);
    if COMPRESSED.contains(&ext) {
        let (path2, ext2) = splitext(path);
        format!("{path2}-1k{ext2}{ext}")
    } else {
        format!("{path}-1k{ext}")
    }
}

/// Rally's administrative operation types: left out of its report unless a task sets
/// `include-in-reporting: true`.
const ADMIN_TYPES: [&str; 16] = [
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
fn seconds(v: &Value) -> Option<String> {
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
enum OperationAs {
    Ours(Value),
    Unsupported(String),
}

/// The track's `data-streams`, `composable-templates`, `component-templates` and
/// `templates`, with each template's body read from its file.
fn declared(c: &Ctx, top: &Map<String, Value>) -> Result<super::registry::Declared, TrackError> {
    let mut out = super::registry::Declared::default();
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
            let body = match t.get("template") {
                Some(Value::String(f)) => (c.render_body)(f)?,
                Some(b @ Value::Object(_)) => b.clone(),
                _ => {
                    return Err(c.err(
                        &format!("/{key}/{i}"),
                        "a template needs its `template` file",
                    ))
                }
            };
            out.templates.push(super::registry::DeclaredTemplate {
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
fn operation(c: &mut Ctx, op: &Value, path: &str) -> Result<OperationAs, TrackError> {
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
    if let Some(source) = map.get("param-source") {
        return Ok(OperationAs::Unsupported(format!(
            "its parameters come from the param source {source}, which a track.py registers, and runner runs no Python"
        )));
    }
    let mut params = Map::new();
    let get = |k: &str| map.get(k).cloned();
    let index_of = |v: Option<Value>| match v {
        Some(Value::Array(a)) => a.first().cloned(),
        other => other,
    };
    let our_kind = match kind {
        "bulk" => {
            if let Some(v) = get("bulk-size") {
                params.insert("bulk-size".into(), v);
            }
            // Rally's `corpora` (one name or several, else every corpus of the track).
            match get("corpora") {
                Some(Value::Array(a)) if a.len() == 1 => {
                    params.insert("corpus".into(), a[0].clone());
                }
                Some(v) => {
                    params.insert("corpus".into(), v);
                }
                None if c.corpus_names.len() > 1 => {
                    params.insert("corpus".into(), json!(c.corpus_names));
                }
                None => {}
            }
            match get("indices") {
                Some(Value::Array(a)) if a.len() > 1 => {
                    return Ok(OperationAs::Unsupported(
                        "bulk `indices` naming several indices (Rally keeps the corpus documents that target them) is not supported".into(),
                    ))
                }
                v => {
                    if let Some(v) = index_of(v) {
                        params.insert("index".into(), v);
                    }
                }
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
            "bulk"
        }
        "search" | "paginated-search" | "scroll-search" => {
            if let Some(v) = index_of(get("index").or_else(|| get("indices"))) {
                params.insert("index".into(), v);
            }
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
                    return Ok(OperationAs::Unsupported(
                        "`with-point-in-time-from` (point-in-time searches) is not supported"
                            .into(),
                    ));
                }
            }
            for k in keys {
                if let Some(v) = get(k) {
                    params.insert(k.into(), v);
                }
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
            kind
        }
        "create-index" | "delete-index" | "refresh" | "force-merge" => {
            if let Some(v) = index_of(get("index")) {
                params.insert("index".into(), v);
            } else if !c.has_indices && matches!(kind, "refresh" | "force-merge") {
                // Rally's default with no indices declared: the data streams, else `_all`.
                let target = match c.declared.data_streams.as_slice() {
                    [] => "_all".to_string(),
                    streams => streams.join(","),
                };
                params.insert("index".into(), json!(target));
            }
            if kind == "force-merge" {
                if let Some(v) = get("max-num-segments") {
                    params.insert("max-num-segments".into(), v);
                }
            }
            kind
        }
        "cluster-health" => {
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
            "cluster-health"
        }
        "raw-request" => {
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
            "raw-request"
        }
        "index-stats" | "node-stats" => {
            let p = if kind == "index-stats" {
                index_of(get("index"))
                    .and_then(|v| v.as_str().map(|i| format!("/{i}/_stats")))
                    .unwrap_or_else(|| "/_stats".into())
            } else {
                "/_nodes/stats".into()
            };
            params.insert("method".into(), json!("GET"));
            params.insert("path".into(), json!(p));
            "raw-request"
        }
        "put-settings" => {
            params.insert("method".into(), json!("PUT"));
            params.insert("path".into(), json!("/_cluster/settings"));
            params.insert("body".into(), get("body").unwrap_or(json!({})));
            "raw-request"
        }
        "sleep" => {
            params.insert("duration".into(), get("duration").unwrap_or(json!(0)));
            "sleep"
        }
        other => match super::registry::rest_operation(other, map, &c.declared) {
            Some(Ok(rest)) => {
                params.extend(rest);
                "raw-request"
            }
            Some(Err(why)) => {
                return Ok(OperationAs::Unsupported(format!(
                    "Rally's `{other}`: {why}"
                )))
            }
            None => return Ok(OperationAs::Unsupported(super::registry::why_not(other))),
        },
    };
    Ok(OperationAs::Ours(
        json!({"name": name, "type": our_kind, "params": params}),
    ))
}

/// `%41` as `A` and `+` as a space, as a query string's parts are read.
fn percent_decode(s: &str) -> String {
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

/// The index of the challenge a race runs: the one named, else the one marked `default`, else
/// the only one. None when none of those applies (the track model then says why).
fn selected_challenge(challenges: &[Value], wanted: Option<&str>) -> Option<usize> {
    let name = |ch: &Value| {
        ch.get("name")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_string()
    };
    match wanted {
        Some(w) => challenges.iter().position(|ch| name(ch) == w),
        None => challenges
            .iter()
            .position(|ch| ch.get("default").and_then(Value::as_bool) == Some(true))
            .or((challenges.len() == 1).then_some(0)),
    }
}

fn challenge(
    c: &mut Ctx,
    ch: &Value,
    path: &str,
    ops: &[Value],
    unsupported: &Map<String, Value>,
) -> Result<Value, TrackError> {
    let name = ch.get("name").and_then(Value::as_str).unwrap_or("default");
    c.skipped_templates = None;
    c.made_templates = false;
    let mut out = Map::new();
    out.insert("name".into(), json!(name));
    if let Some(d) = ch.get("description").and_then(Value::as_str) {
        out.insert("description".into(), json!(d));
    }
    if ch.get("default").and_then(Value::as_bool) == Some(true) {
        out.insert("default".into(), json!(true));
    }
    let mut schedule = Vec::new();
    for (i, item) in ch
        .get("schedule")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let ipath = format!("{path}/schedule/{i}");
        if let Some(par) = item.get("parallel") {
            let defaults = par.as_object().cloned().unwrap_or_default();
            let mut tasks = Vec::new();
            for (j, t) in par
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let mut merged = defaults.clone();
                merged.remove("tasks");
                merged.remove("completed-by");
                if let Some(m) = t.as_object() {
                    merged.extend(m.clone());
                }
                if let Some(task) = self_task(
                    c,
                    &Value::Object(merged),
                    &format!("{ipath}/parallel/tasks/{j}"),
                    ops,
                    unsupported,
                )? {
                    tasks.push(task);
                }
            }
            if !tasks.is_empty() {
                let mut block = json!({"tasks": tasks});
                if let Some(by) = defaults.get("completed-by").and_then(Value::as_str) {
                    // A skipped completing task would leave the block without an end: let it end
                    // when all of its tasks do, and say so.
                    if block["tasks"]
                        .as_array()
                        .is_some_and(|ts| ts.iter().any(|t| t["name"] == by))
                    {
                        block["completed-by"] = json!(by);
                    } else {
                        c.notes.push(format!("{ipath}: `completed-by: {by}` names no task that runs; the block ends when all its tasks end"));
                    }
                }
                schedule.push(json!({"parallel": block}));
            }
        } else if let Some(task) = self_task(c, item, &ipath, ops, unsupported)? {
            schedule.push(task);
        }
    }
    if schedule.is_empty() {
        return Err(c.err(
            &format!("{path}/schedule"),
            format!("challenge `{name}` has no task the runner can run"),
        ));
    }
    out.insert("schedule".into(), Value::Array(schedule));
    Ok(Value::Object(out))
}

/// One task as ours; None when it is skipped.
fn self_task(
    c: &mut Ctx,
    t: &Value,
    path: &str,
    ops: &[Value],
    unsupported: &Map<String, Value>,
) -> Result<Option<Value>, TrackError> {
    let Some(map) = t.as_object() else {
        return Err(c.err(path, "a task is an object"));
    };
    let (op_value, op_name, why) = match map.get("operation") {
        Some(Value::String(n)) => {
            if let Some(why) = unsupported.get(n) {
                (
                    None,
                    n.clone(),
                    Some(why.as_str().unwrap_or("").to_string()),
                )
            } else if ops.iter().any(|o| o["name"] == *n) {
                (Some(json!(n)), n.clone(), None)
            } else {
                // As in Rally, a name that is no declared operation may be an operation type
                // with default params (`"operation": "refresh"`).
                match operation(
                    c,
                    &json!({"name": n, "operation-type": n}),
                    &format!("{path}/operation"),
                )? {
                    OperationAs::Ours(o) => (Some(o), n.clone(), None),
                    OperationAs::Unsupported(why) => {
                        let hint = crate::suggest::did_you_mean(
                            n,
                            ops.iter().filter_map(|o| o["name"].as_str()),
                        );
                        (None, n.clone(), Some(format!("no operation named `{n}` under `operations`{hint}, so it is an operation type, and {why}")))
                    }
                }
            }
        }
        Some(inline @ Value::Object(_)) => {
            let n = inline
                .get("name")
                .and_then(Value::as_str)
                .or_else(|| inline.get("operation-type").and_then(Value::as_str))
                .unwrap_or("?")
                .to_string();
            match operation(c, inline, &format!("{path}/operation"))? {
                OperationAs::Ours(o) => (Some(o), n, None),
                OperationAs::Unsupported(why) => (None, n, Some(why)),
            }
        }
        _ => return Err(c.err(path, "a task needs an `operation`")),
    };
    let rally_type = match map.get("operation") {
        Some(Value::String(n)) => c.rally_types.get(n).cloned().unwrap_or_else(|| n.clone()),
        Some(inline) => inline
            .get("operation-type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        None => String::new(),
    };
    let task_name = map
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| op_name.clone());
    let skip_or_fail = |c: &mut Ctx, why: String| -> Result<Option<Value>, TrackError> {
        match c.on_unsupported {
            OnUnsupported::Fail => Err(c.err(
                path,
                format!("task `{task_name}`: {why} (--on-unsupported skip leaves it out)"),
            )),
            OnUnsupported::Skip => {
                c.notes
                    .push(format!("{path}: task `{task_name}` skipped: {why}"));
                Ok(None)
            }
        }
    };
    // Rally's template operations: a skipped one leaves its templates unmade.
    const TEMPLATE_TYPES: [&str; 3] = [
        "create-composable-template",
        "create-component-template",
        "create-index-template",
    ];
    if TEMPLATE_TYPES.contains(&rally_type.as_str()) {
        match &why {
            Some(_) => {
                c.skipped_templates.get_or_insert_with(|| task_name.clone());
            }
            None => c.made_templates = true,
        }
    }
    // A data stream needs a template made earlier; when the task that would make it is
    // skipped and no other one runs before, the data stream cannot be made (on Elasticsearch
    // either): it is skipped too, naming why.
    let why = why.or_else(|| match (&c.skipped_templates, rally_type.as_str()) {
        (Some(skipped), "create-data-stream") if !c.made_templates => Some(format!(
            "the index template its data streams need would come from the skipped task `{skipped}`"
        )),
        _ => None,
    });
    if let Some(why) = why {
        return skip_or_fail(c, why);
    }
    let mut out = Map::new();
    out.insert("name".into(), json!(task_name));
    out.insert("operation".into(), op_value.clone().unwrap_or(Value::Null));
    let clients = map
        .get("clients")
        .and_then(Value::as_u64)
        .unwrap_or(1)
        .max(1);
    if clients > 1 {
        out.insert("clients".into(), json!(clients));
    }
    // Rally counts iterations per client; ours are totals.
    let iterations = map.get("iterations").and_then(Value::as_u64);
    let warmup_iterations = map.get("warmup-iterations").and_then(Value::as_u64);
    let warmup_time = map.get("warmup-time-period").and_then(Value::as_f64);
    let time_period = map.get("time-period").and_then(Value::as_f64);
    if let Some(r) = map.get("ramp-up-time-period").and_then(seconds) {
        out.insert("ramp-up-time-period".into(), json!(r));
    }
    match (iterations, time_period) {
        (Some(n), _) => {
            out.insert("iterations".into(), json!(n.saturating_mul(clients)));
            if let Some(w) = warmup_iterations.filter(|w| *w > 0) {
                out.insert("warmup".into(), json!(w.saturating_mul(clients)));
            }
        }
        (None, Some(tp)) => {
            // Rally measures `time-period` after `warmup-time-period`; ours includes the warmup.
            let w = warmup_time.unwrap_or(0.0);
            out.insert(
                "time-period".into(),
                json!(seconds(&json!(tp + w)).unwrap_or_default()),
            );
            if w > 0.0 {
                out.insert(
                    "warmup".into(),
                    json!(seconds(&json!(w)).unwrap_or_default()),
                );
            }
        }
        (None, None) => {
            // A bulk task through its corpus: the requests of the first seconds are warmup.
            if let Some(w) = warmup_time.filter(|w| *w > 0.0) {
                out.insert(
                    "warmup".into(),
                    json!(seconds(&json!(w)).unwrap_or_default()),
                );
            }
            if let Some(w) = warmup_iterations.filter(|w| *w > 0) {
                out.insert("warmup".into(), json!(w.saturating_mul(clients)));
            }
        }
    }
    if let Some(v) = map.get("target-throughput") {
        let op = match &op_value {
            Some(Value::String(n)) => ops.iter().find(|o| o["name"] == *n),
            other => other.as_ref(),
        };
        let bulk_size = op
            .filter(|o| o["type"] == "bulk")
            .and_then(|o| o["params"]["bulk-size"].as_f64());
        match requests_per_second(v, bulk_size) {
            Ok(Some(rate)) => {
                out.insert("target-throughput".into(), rate);
            }
            Ok(None) => {}
            Err(why) => return Err(c.err(&format!("{path}/target-throughput"), why)),
        }
    }
    if let Some(v) = map.get("target-interval").and_then(seconds) {
        out.insert("target-interval".into(), json!(v));
    }
    if let Some(level) = map
        .get("ignore-response-error-level")
        .and_then(Value::as_str)
    {
        out.insert("ignore-response-error-level".into(), json!(level));
    }
    if let Some(s) = map.get("schedule").and_then(Value::as_str) {
        out.insert("schedule".into(), json!(s));
    }
    // Rally leaves administrative operations out of its report unless the task says otherwise.
    let admin = ADMIN_TYPES.contains(&rally_type.as_str());
    if !map
        .get("include-in-reporting")
        .and_then(Value::as_bool)
        .unwrap_or(!admin)
    {
        out.insert("include-in-reporting".into(), json!(false));
    }
    Ok(Some(Value::Object(out)))
}

/// Rally's `target-throughput` as requests per second: a number is one already; a string is
/// `"<value> <unit>/s"`. `ops/s` counts requests; `docs/s` on a bulk counts documents, and Rally's
/// unit-aware scheduler divides it by a request's documents (the bulk size). 0 is unthrottled.
fn requests_per_second(v: &Value, bulk_size: Option<f64>) -> Result<Option<Value>, String> {
    let Value::String(text) = v else {
        return Ok(match v.as_f64() {
            Some(0.0) => None,
            _ => Some(v.clone()),
        });
    };
    let parsed = text.trim().split_once(' ').and_then(|(value, unit)| {
        let value: f64 = value
            .parse()
            .ok()
            .filter(|x: &f64| x.is_finite() && *x >= 0.0)?;
        Some((value, unit.trim()))
    });
    let Some((value, unit)) = parsed else {
        return Err(format!(
            "`{text}` is not a throughput: Rally takes a number of operations per second or \"<value> <unit>/s\" (\"10 docs/s\")"
        ));
    };
    if value == 0.0 {
        return Ok(None);
    }
    match (unit, bulk_size) {
        ("ops/s", _) => Ok(Some(json!(value))),
        ("docs/s", Some(size)) if size > 0.0 => Ok(Some(json!(value / size))),
        _ => Err(format!(
            "`{text}`: this task's throughput is measured in {}, not {unit}, and Rally refuses the mismatch too",
            if bulk_size.is_some() { "ops/s or docs/s" } else { "ops/s" }
        )),
    }
}

#[cfg(test)]
mod test_mode_names {
    use super::test_mode_file;

    #[test]
    fn the_1k_file_is_named_as_rally_names_it() {
        for (source, rally) in [
            ("documents.json.bz2", "documents-1k.json.bz2"),
            (
                "documents-181998.unparsed.json.bz2",
                "documents-181998.unparsed-1k.json.bz2",
            ),
            ("documents.json", "documents-1k.json"),
            ("a.b.json", "a.b-1k.json"),
            ("logs.json.gz", "logs-1k.json.gz"),
            ("data.tar.gz", "data-1k.tar.gz"),
            ("dir.v2/documents", "dir.v2/documents-1k"),
            ("documents", "documents-1k"),
        ] {
            assert_eq!(test_mode_file(source), rally, "{source}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn convert_json(v: Value, on_unsupported: OnUnsupported) -> Result<Converted, TrackError> {
        convert(
            &v,
            Path::new("track.json"),
            "t",
            false,
            on_unsupported,
            None,
            &|_| Ok(json!({})),
        )
    }

    #[test]
    fn refresh_and_force_merge_default_as_rallys_without_declared_indices() {
        let rally = json!({
            "data-streams": [{"name": "logs-a"}, {"name": "logs-b"}],
            "schedule": [{"operation": "refresh"}, {"operation": "force-merge"}]
        });
        let c = convert_json(rally, OnUnsupported::Fail).unwrap();
        let schedule = &c.track["challenges"][0]["schedule"];
        assert_eq!(schedule[0]["operation"]["params"]["index"], "logs-a,logs-b");
        let none = json!({"schedule": [{"operation": "refresh"}]});
        let c = convert_json(none, OnUnsupported::Fail).unwrap();
        assert_eq!(
            c.track["challenges"][0]["schedule"][0]["operation"]["params"]["index"],
            "_all"
        );
    }

    #[test]
    fn a_raw_request_path_with_a_query_string_becomes_request_params() {
        let rally = json!({
            "operations": [{"name": "r", "operation-type": "raw-request", "method": "GET",
                "path": "/_cluster/stats?include_remotes=true&q=a%20b+c&flag", "request-params": {"pretty": "true"}}],
            "schedule": [{"operation": "r"}]
        });
        let c = convert_json(rally, OnUnsupported::Fail).unwrap();
        let op = &c.track["operations"][0]["params"];
        assert_eq!(op["path"], "/_cluster/stats");
        assert_eq!(
            op["request-params"],
            json!({"pretty": "true", "include_remotes": "true", "q": "a b c", "flag": ""})
        );
        assert_eq!(percent_decode("%e2%82%ac%zz%"), "€%zz%");
    }

    #[test]
    fn a_throughput_with_a_unit_is_requests_per_second_as_rallys_scheduler_throttles() {
        let size = Some(500.0);
        assert_eq!(
            requests_per_second(&json!("10 docs/s"), size),
            Ok(Some(json!(0.02)))
        );
        assert_eq!(
            requests_per_second(&json!("2.5 ops/s"), size),
            Ok(Some(json!(2.5)))
        );
        assert_eq!(requests_per_second(&json!(7), None), Ok(Some(json!(7))));
        assert_eq!(requests_per_second(&json!(0), None), Ok(None));
        assert_eq!(requests_per_second(&json!("0 ops/s"), None), Ok(None));
        let docs_on_search = requests_per_second(&json!("10 docs/s"), None).unwrap_err();
        assert!(docs_on_search.contains("not docs/s"), "{docs_on_search}");
        let bytes = requests_per_second(&json!("10 MB/s"), size).unwrap_err();
        assert!(bytes.contains("not MB/s"), "{bytes}");
        let junk = requests_per_second(&json!("fast"), size).unwrap_err();
        assert!(junk.contains("not a throughput"), "{junk}");
    }

    #[test]
    fn a_raw_requests_ignore_is_our_ignore_status() {
        let rally = json!({
            "operations": [{"name": "r", "operation-type": "raw-request", "method": "DELETE", "path": "/_ingest/pipeline/p", "ignore": [400, 404]}],
            "schedule": [{"operation": "r"}]
        });
        let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
        assert_eq!(
            t["operations"][0]["params"]["ignore-status"],
            json!([400, 404])
        );
    }

    #[test]
    fn a_docs_per_second_bulk_task_converts_to_requests_per_second() {
        let rally = json!({
            "indices": [{"name": "logs"}],
            "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 10}]}],
            "operations": [{"name": "b", "operation-type": "bulk", "bulk-size": 50}],
            "schedule": [
                {"operation": "b", "target-throughput": "100 docs/s"},
                {"operation": {"name": "i", "operation-type": "bulk", "bulk-size": 4}, "target-throughput": "2 docs/s"}
            ]
        });
        let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
        let schedule = t["challenges"][0]["schedule"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| t["schedule"].as_array().cloned().unwrap());
        assert_eq!(schedule[0]["target-throughput"], json!(2.0));
        assert_eq!(schedule[1]["target-throughput"], json!(0.5));
    }

    #[test]
    fn action_line_corpora_conflicts_and_paged_searches_convert_as_they_are() {
        let rally = json!({
            "indices": [{"name": "logs"}],
            "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 10, "includes-action-and-meta-data": true}]}],
            "operations": [
                {"name": "b", "operation-type": "bulk", "bulk-size": 5, "conflicts": "sequential", "conflict-probability": 10, "on-conflict": "update", "recency": 0.2, "looped": true},
                {"name": "s", "operation-type": "scroll-search", "index": "logs", "pages": 4, "results-per-page": 100, "body": {"query": {"match_all": {}}}},
                {"name": "p", "operation-type": "paginated-search", "index": "logs", "pages": "all", "body": {"sort": ["_doc"]}}
            ],
            "schedule": [{"operation": "b", "iterations": 2}, {"operation": "s"}, {"operation": "p"}]
        });
        let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
        assert_eq!(
            t["corpora"][0]["documents"][0]["includes-action-and-meta-data"],
            true
        );
        assert_eq!(
            t["operations"][0]["params"],
            json!({"bulk-size": 5, "conflicts": "sequential", "conflict-probability": 10, "on-conflict": "update", "recency": 0.2, "looped": true})
        );
        assert_eq!(
            (
                t["operations"][1]["type"].as_str(),
                t["operations"][1]["params"]["pages"].as_u64()
            ),
            (Some("scroll-search"), Some(4))
        );
        assert_eq!(t["operations"][2]["params"]["pages"], "all");
    }

    #[test]
    fn old_style_scrolls_and_the_request_cache_convert() {
        let rally = json!({
            "indices": [{"name": "i"}],
            "operations": [{"name": "s", "operation-type": "search", "pages": 25, "results-per-page": 1000, "cache": false, "detailed-results": true, "body": {"query": {"match_all": {}}}}],
            "schedule": [{"operation": "s"}]
        });
        let converted = convert_json(rally, OnUnsupported::Fail).unwrap();
        let op = &converted.track["operations"][0];
        assert_eq!(op["type"], "scroll-search");
        assert_eq!(
            op["params"]["request-params"],
            json!({"request_cache": "false"})
        );
        assert_eq!(op["params"]["pages"], 25);
        assert!(
            converted
                .notes
                .iter()
                .any(|n| n.contains("detailed-results")),
            "{:?}",
            converted.notes
        );
    }

    #[test]
    fn only_the_challenge_raced_fails_on_a_task_that_cannot_run() {
        let rally = json!({
            "operations": [
                {"name": "nap", "operation-type": "sleep", "duration": 0},
                {"name": "custom", "operation-type": "my-custom-runner"}
            ],
            "challenges": [
                {"name": "plain", "default": true, "schedule": [{"operation": "nap"}]},
                {"name": "mixed", "schedule": [{"operation": "nap"}, {"operation": "custom"}]},
                {"name": "custom-only", "schedule": [{"operation": "custom"}]}
            ]
        });
        let convert_for = |wanted: Option<&str>| {
            convert(
                &rally,
                Path::new("track.json"),
                "t",
                false,
                OnUnsupported::Fail,
                wanted,
                &|_| Ok(json!({})),
            )
        };
        // The default challenge runs: the others lose what cannot run, with notes.
        let converted = convert_for(None).unwrap();
        let names: Vec<&str> = converted.track["challenges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["plain", "mixed"], "{:?}", converted.notes);
        let notes = converted.notes.join("\n");
        assert!(
            notes.contains("task `custom` skipped") && notes.contains("`custom-only` is left out"),
            "{notes}"
        );
        // Racing the challenge that holds it still fails, naming the task.
        let e = convert_for(Some("mixed")).unwrap_err();
        assert!(e.to_string().contains("task `custom`"), "{e}");
    }

    #[test]
    fn point_in_time_is_named_as_unsupported_and_a_bulk_pipeline_is_kept() {
        let pit = json!({"name": "x", "operation-type": "paginated-search", "with-point-in-time-from": "open"});
        let rally = json!({"indices": [{"name": "i"}], "operations": [pit], "schedule": [{"operation": "x"}]});
        let e = convert_json(rally, OnUnsupported::Fail).unwrap_err();
        assert!(e.to_string().contains("point-in-time"), "{e}");
        let bulk = json!({"name": "x", "operation-type": "bulk", "pipeline": "p"});
        let rally = json!({"indices": [{"name": "i"}], "corpora": [{"name": "c", "documents": [{"source-file": "d.json", "document-count": 1}]}],
            "operations": [bulk], "schedule": [{"operation": "x"}]});
        let t = convert_json(rally, OnUnsupported::Fail).unwrap().track;
        assert_eq!(t["operations"][0]["params"]["pipeline"], "p");
    }
}
