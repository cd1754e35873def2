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

mod challenge;
mod corpora;
mod operation;
pub mod python;

use challenge::*;
use corpora::*;
pub use corpora::{is_bulk, test_mode_file};
use operation::*;

#[derive(Debug)]
pub struct Converted {
    pub track: Value,
    /// What was skipped, dropped or approximated, one line each.
    pub notes: Vec<String>,
    /// For each operation a track.py param source fed: a commented start of its bindings.
    pub binding_stubs: Vec<String>,
    /// The track's Python, as loaded and checked.
    pub python: Option<crate::python::TrackPython>,
}

struct Ctx<'a> {
    file: &'a Path,
    test_mode: bool,
    on_unsupported: OnUnsupported,
    notes: Vec<String>,
    /// Rally's operation type of each declared operation, by name.
    rally_types: std::collections::HashMap<String, String>,
    /// Each declared operation, by name, as Rally wrote it (its `Retry` parameters become
    /// the `retry` of the tasks that run it).
    rally_ops: std::collections::HashMap<String, Map<String, Value>>,
    /// An OpenSearch Benchmark workload (`workload.json`): its runners and opensearch-py send
    /// some requests otherwise than Rally's (no setting lifted around deletes, bulks POSTed).
    osb: bool,
    /// Rendered index bodies by file name (Rally bodies are templates too).
    render_body: &'a dyn Fn(&str) -> Result<Value, TrackError>,
    /// The track's data streams and templates, which operations naming no target act on.
    declared: crate::rally::registry::Declared,
    /// The track's corpora, by name: a bulk naming none indexes them all, as in Rally.
    corpus_names: Vec<String>,
    /// Whether the track declares `indices` (else refresh and force-merge default as Rally's).
    has_indices: bool,
    /// In the challenge being converted, the first skipped task that would have put index
    /// templates: data streams made after it would lack theirs.
    skipped_templates: Option<String>,
    /// Whether a task before, in that challenge, puts index templates and runs.
    made_templates: bool,
    /// The track's Python, where it has a track.py: what it registered, and a worker that
    /// builds and draws from its param sources.
    python: Option<python::PythonConv>,
    /// Declared operations whose params could not be converted: an error only for a task that
    /// uses them (Rally builds param sources only for the tasks it runs).
    failed_ops: std::collections::HashMap<String, TrackError>,
    /// Whether the track has one challenge (Rally's default then, whatever it says).
    sole_challenge: bool,
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
#[allow(clippy::too_many_arguments)]
pub fn convert(
    rally: &Value,
    file: &Path,
    name: &str,
    test_mode: bool,
    on_unsupported: OnUnsupported,
    challenge_wanted: Option<&str>,
    render_body: &dyn Fn(&str) -> Result<Value, TrackError>,
    python: Option<python::PythonConv>,
) -> Result<Converted, TrackError> {
    let mut c = Ctx {
        python,
        file,
        test_mode,
        on_unsupported,
        notes: Vec::new(),
        rally_types: Default::default(),
        rally_ops: Default::default(),
        osb: file.file_name().is_some_and(|n| n == "workload.json"),
        render_body,
        declared: Default::default(),
        corpus_names: Vec::new(),
        has_indices: false,
        skipped_templates: None,
        made_templates: false,
        failed_ops: Default::default(),
        sole_challenge: false,
    };
    let Some(top) = rally.as_object() else {
        return Err(c.err("/", "a Rally track is a JSON object"));
    };
    let mut out = Map::new();
    out.insert("name".into(), json!(track_name(name)));
    if let Some(d) = top.get("description").and_then(Value::as_str) {
        out.insert("description".into(), json!(d));
    }
    let our_indices = indices(&c, top)?;
    c.has_indices = !our_indices.is_empty();
    out.insert("indices".into(), Value::Array(our_indices));
    c.declared = declared(&c, top)?;
    c.declared.osb = c.osb;
    c.declared.indices = out["indices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i["name"].as_str().map(str::to_string))
        .collect();
    let our_corpora = corpora(&mut c, top)?;
    c.corpus_names = our_corpora
        .iter()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    out.insert("corpora".into(), Value::Array(our_corpora));
    let (ops, unsupported_ops, binding_stubs) = operations(&mut c, top)?;
    out.insert("operations".into(), Value::Array(ops.clone()));
    let our = challenges(&mut c, top, challenge_wanted, &ops, &unsupported_ops)?;
    out.insert("challenges".into(), Value::Array(our));
    Ok(Converted {
        track: Value::Object(out),
        notes: c.notes,
        binding_stubs,
        python: c.python.map(|p| p.python),
    })
}

/// A track's name is its directory's, as a file name takes it.
fn track_name(dir: &str) -> String {
    let clean: String = dir
        .chars()
        .map(|ch| {
            if ch.is_ascii_alphanumeric() || "_.-".contains(ch) {
                ch
            } else {
                '-'
            }
        })
        .collect();
    if clean.is_empty() {
        "rally-track".to_string()
    } else {
        clean
    }
}

/// The track's indices, each body rendered where it is a file (Rally bodies are templates).
fn indices(c: &Ctx, top: &Map<String, Value>) -> Result<Vec<Value>, TrackError> {
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
            // Rally's loader (`if body_file:`): a body that renders empty is no body, as a
            // workload that sets it from a parameter not given has it.
            Some(Value::String(f)) if f.trim().is_empty() => {}
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
    Ok(our_indices)
}

/// The track's operations as ours, those that cannot run with their reason, and a start of
/// bindings for each that a track.py param source fed.
#[allow(clippy::type_complexity)]
fn operations(
    c: &mut Ctx,
    top: &Map<String, Value>,
) -> Result<(Vec<Value>, Map<String, Value>, Vec<String>), TrackError> {
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
        if let (Some(n), Some(m)) = (op.get("name").and_then(Value::as_str), op.as_object()) {
            c.rally_ops.insert(n.to_string(), m.clone());
        }
        let converted = match (
            operation(c, op, &format!("/operations/{i}")),
            op.get("name"),
        ) {
            (Err(e), Some(Value::String(n))) => {
                c.failed_ops.insert(n.clone(), e);
                continue;
            }
            (converted, _) => converted?,
        };
        match converted {
            OperationAs::Ours(o) => ops.push(o),
            OperationAs::Unsupported(why) => {
                let n = op
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
                    .to_string();
                if let (Some(source), None) =
                    (op.get("param-source").and_then(Value::as_str), &c.python)
                {
                    binding_stubs.push(binding_stub(&n, op, source));
                }
                unsupported_ops.insert(n, json!(why));
            }
        }
    }
    Ok((ops, unsupported_ops, binding_stubs))
}

/// The challenges (OSB's test procedures): the one raced converts strictly; in the others a
/// task that cannot run is left out, and a challenge that cannot convert is dropped with a note.
fn challenges(
    c: &mut Ctx,
    top: &Map<String, Value>,
    challenge_wanted: Option<&str>,
    ops: &[Value],
    unsupported_ops: &Map<String, Value>,
) -> Result<Vec<Value>, TrackError> {
    // Rally's `_get_challenge_specs`: exactly one of them.
    let given = [
        top.get("challenges").or_else(|| top.get("test_procedures")),
        top.get("challenge").or_else(|| top.get("test_procedure")),
        top.get("schedule"),
    ];
    if given.iter().filter(|g| g.is_some()).count() > 1 {
        return Err(c.err(
            "/",
            "Multiple out of 'challenge', 'challenges' or 'schedule' are defined but only one of them is allowed.",
        ));
    }
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
    rallys_challenge_rules(c, &challenges)?;
    c.sole_challenge = challenges.len() == 1;
    let selected = selected_challenge(&challenges, challenge_wanted);
    let mut our = Vec::new();
    for (i, ch) in challenges.iter().enumerate() {
        let path = format!("/challenges/{i}");
        if Some(i) == selected {
            our.push(challenge(c, ch, &path, ops, unsupported_ops)?);
            continue;
        }
        let strict = std::mem::replace(&mut c.on_unsupported, OnUnsupported::Skip);
        let converted = challenge(c, ch, &path, ops, unsupported_ops);
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
    Ok(our)
}

/// Rally's loader's rules over challenges (`_create_challenges`, `parse_parallel`), refused in
/// its words: one default challenge (a sole one is the default), unique challenge names, unique
/// task names in a challenge (a task is named after its operation unless named), and a
/// `completed-by` naming exactly one task of its block (or `any`).
fn rallys_challenge_rules(c: &Ctx, challenges: &[Value]) -> Result<(), TrackError> {
    let name_of = |ch: &Value| {
        ch.get("name")
            .and_then(Value::as_str)
            .unwrap_or("default")
            .to_string()
    };
    let mut default: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for (i, ch) in challenges.iter().enumerate() {
        let path = format!("/challenges/{i}");
        let name = name_of(ch);
        let is_default =
            challenges.len() == 1 || ch.get("default").and_then(Value::as_bool) == Some(true);
        if is_default {
            if let Some(first) = &default {
                return Err(c.err(&path, format!("Both '{first}' and '{name}' are defined as default challenges. Please define only one of them as default.")));
            }
            default = Some(name.clone());
        }
        if !seen.insert(name.clone()) {
            return Err(c.err(&path, format!("Duplicate challenge with name '{name}'.")));
        }
        challenge::rallys_task_rules(c, ch, &name, &path)?;
    }
    if !challenges.is_empty() && default.is_none() {
        let names: Vec<String> = challenges.iter().map(name_of).collect();
        return Err(c.err(
            "/challenges",
            format!(
                "No default challenge specified. Please edit the track and add \"default\": true to one of the challenges {}.",
                names.join(", ")
            ),
        ));
    }
    Ok(())
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

#[cfg(test)]
mod loader_cases;
#[cfg(test)]
mod tests;
