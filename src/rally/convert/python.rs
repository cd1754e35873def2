//! Operations a Rally track's own Python drives: a registered param source makes the params
//! (each source is built and drawn from once here, so that what is wrong is said before the
//! race, and what it draws is converted as a Rally operation's params are), a registered
//! runner runs the operation type (Rally lets a track's runner replace a built-in one too).

use super::{Ctx, OperationAs};
use crate::python::probe::{Session, SourceUse};
use crate::python::TrackPython;
use crate::track::{TrackError, TrackErrorKind};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// The track's Python during conversion.
pub struct PythonConv {
    pub python: TrackPython,
    pub session: Session,
    /// For each operation a param source feeds, by name: whether it never ends.
    pub extents: HashMap<String, bool>,
    /// Whether the client custom runners are handed was found importable.
    pub client_checked: bool,
    /// Rally's types that esrally's own runners run here (each noted once).
    pub rallys_own: std::collections::BTreeSet<String>,
}

/// Rally's built-in operation types runner has no runner for, which esrally's own runners run
/// in the track's Python where esrally is installed there (`rally:<type>`).
const RALLYS_OWN: &[&str] = &[
    "composite",
    "composite-agg",
    "esql-profile",
    "submit-async-search",
    "get-async-search",
    "delete-async-search",
    "open-point-in-time",
    "close-point-in-time",
    "transform-stats",
    "run-until",
    "shrink-index",
];

/// The operation as one the track's Python drives, if it is one; None for the others.
pub(super) fn operation(
    c: &mut Ctx,
    map: &Map<String, Value>,
    kind: &str,
    name: &str,
) -> Option<OperationAs> {
    let source = map.get("param-source").and_then(Value::as_str);
    let Some(py) = c.python.as_mut() else {
        return source.map(|s| OperationAs::Unsupported(format!(
            "its parameters come from the param source `{s}`, which a track.py registers, and this track has none"
        )));
    };
    let registry = &py.python.registry;
    let rallys_own = RALLYS_OWN.contains(&kind)
        && py.python.esrally.is_some()
        && py.python.dialect == crate::python::Dialect::Rally;
    let runner = if registry.has_runner(kind) {
        Some(kind.to_string())
    } else if rallys_own {
        if py.rallys_own.insert(kind.to_string()) {
            c.notes.push(format!(
                "Rally's `{kind}`, which runner has no runner of its own for, runs with esrally's own runner in the track's Python"
            ));
        }
        Some(format!("rally:{kind}"))
    } else {
        None
    };
    if let Some(s) = source.filter(|s| !registry.has_param_source(s)) {
        let hint =
            crate::suggest::did_you_mean(s, registry.param_sources.iter().map(String::as_str));
        return Some(OperationAs::Unsupported(format!(
            "its param source `{s}` is not one the track's {}.py registers{hint}",
            py.python.dialect.entry()
        )));
    }
    if source.is_none() && runner.is_none() {
        return None;
    }
    // Rally hands a source (and a runner without one) the whole operation as its params.
    let params = Value::Object(map.clone());
    let mut ours = json!({"operation-type": kind, "dialect": "rally", "params": params});
    if let Some(r) = &runner {
        if !py.client_checked {
            let why = format!("operation `{name}` runs the track's runner `{r}`");
            if let Err(e) = py.session.check_client(py.python.dialect, &why) {
                return Some(OperationAs::Unsupported(e.to_string()));
            }
            py.client_checked = true;
        }
        ours["runner"] = json!(r);
        // A runner's weight is documents where the operation is a bulk of them (Rally's
        // runners built on its BulkIndex report `docs`).
        if map.contains_key("bulk-size") {
            ours["unit"] = json!("docs");
        }
    }
    if let Some(s) = source {
        ours["param-source"] = json!(s);
        let sample = match py.session.sample(&SourceUse {
            operation: name.to_string(),
            source: s.to_string(),
            params: params_of(&ours),
            for_runner: runner.is_some(),
        }) {
            Ok(sample) => sample,
            Err(e) => return Some(OperationAs::Unsupported(e.to_string())),
        };
        py.extents.insert(name.to_string(), sample.infinite);
        if runner.is_none() {
            if let Err(why) = check_first(c, (name, kind, s), sample.first, &mut ours) {
                return Some(OperationAs::Unsupported(why));
            }
        }
    }
    Some(OperationAs::Ours(
        json!({"name": name, "type": "python", "params": ours}),
    ))
}

/// The first params a source drew for a built-in type, checked as Rally's runner would take
/// them: converted (kept as the operation's `first`), or a bulk's whole body framed. Why it
/// cannot run, if it cannot.
fn check_first(
    c: &mut Ctx,
    (name, kind, source): (&str, &str, &str),
    first: Option<Value>,
    ours: &mut Value,
) -> Result<(), String> {
    match first {
        Some(Value::Object(mut drawn)) if kind == "bulk" && drawn.contains_key("body") => {
            match crate::ops::drawn_bulk(&mut drawn) {
                Some(Err(why)) => Err(format!(
                    "param source `{source}` draws a bulk that cannot be sent: {why}"
                )),
                _ => Ok(()),
            }
        }
        Some(Value::Object(drawn)) => match drawn_operation(kind, drawn, c.file) {
            Ok((t, p)) => {
                ours["first"] = json!({"type": t, "params": p});
                Ok(())
            }
            Err(why) => Err(format!(
                "param source `{source}` draws params that cannot run as Rally's `{kind}`: {why}"
            )),
        },
        Some(other) => Err(format!(
            "param source `{source}` drew {other}, not a dict of params"
        )),
        None => {
            c.notes.push(format!(
                "operation `{name}`: param source `{source}` ended before its first params"
            ));
            Ok(())
        }
    }
}

fn params_of(ours: &Value) -> Value {
    ours["params"].clone()
}

/// One params dict a param source drew for Rally's operation type `kind`, as our operation
/// type and params (converted as a Rally track's operation is). An index of `None` is
/// Rally's "every index" (the client's search with no index).
pub fn drawn_operation(
    kind: &str,
    drawn: Map<String, Value>,
    file: &Path,
) -> Result<(String, Map<String, Value>), String> {
    let no_files = |body: &str| -> Result<Value, TrackError> {
        Err(TrackError::new(
            TrackErrorKind::Invalid,
            file,
            format!("drawn params name the file `{body}`; a param source gives bodies, not files"),
        ))
    };
    let mut c = Ctx {
        python: None,
        file,
        test_mode: false,
        on_unsupported: crate::track::OnUnsupported::Fail,
        notes: Vec::new(),
        rally_types: Default::default(),
        rally_ops: Default::default(),
        osb: false,
        render_body: &no_files,
        declared: Default::default(),
        corpus_names: Vec::new(),
        has_indices: true,
        skipped_templates: None,
        made_templates: false,
        failed_ops: Default::default(),
        sole_challenge: false,
    };
    // Taken, not copied: a drawn body may hold tens of thousands of terms.
    let mut op = drawn;
    op.insert("operation-type".into(), json!(kind));
    op.entry("name").or_insert(json!(kind));
    op.remove("param-source");
    // Rally's search runner hands the client no index where the drawn params name none:
    // every index.
    let searches = matches!(
        kind,
        "search" | "paginated-search" | "scroll-search" | "composite-agg"
    );
    if op.get("index").is_some_and(Value::is_null) || (searches && !op.contains_key("index")) {
        op.insert("index".into(), json!("_all"));
    }
    match super::operation::operation(&mut c, &Value::Object(op), "") {
        Ok(OperationAs::Ours(Value::Object(mut o))) => {
            let t = o["type"].as_str().unwrap_or_default().to_string();
            match o.remove("params") {
                Some(Value::Object(params)) => Ok((t, params)),
                _ => Ok((t, Map::new())),
            }
        }
        Ok(OperationAs::Ours(_)) => Err("the conversion gave no operation".into()),
        Ok(OperationAs::Unsupported(why)) => Err(why),
        Err(e) => Err(e.message),
    }
}

/// A task whose `schedule` names a scheduler the track's Python registers: its operation
/// inlined with the scheduler and the task as written (the scheduler is made from it), so that
/// each call's intended start and params come from the track's Python, one call at a time, as
/// Rally's ScheduleHandle takes them. Only an operation fed by a param source can be paced
/// (runner cannot draw Rally's built-in params in Python); another is refused. None: no such
/// scheduler.
pub(super) fn paced_by_scheduler(
    c: &Ctx,
    map: &Map<String, Value>,
    op_value: Option<&Value>,
    ops: &[Value],
    task_name: &str,
) -> Option<Result<Value, String>> {
    let name = map.get("schedule").and_then(Value::as_str)?;
    let py = c.python.as_ref()?;
    if !py.python.registry.schedulers.iter().any(|s| s == name) {
        return None;
    }
    let op = match op_value? {
        Value::String(n) => ops.iter().find(|o| o["name"] == *n)?.clone(),
        inline => inline.clone(),
    };
    if op["type"] != "python" || !op["params"]["param-source"].is_string() {
        return Some(Err(format!(
            "its schedule is `{name}`, a scheduler the track's {}.py registers, and its operation takes no params from a param source of the track (the only calls runner can pace from Python)",
            py.python.dialect.entry()
        )));
    }
    let mut task = map.clone();
    task.entry("name").or_insert(json!(task_name));
    let mut op = op;
    op["params"]["scheduler"] = json!(name);
    op["params"]["task"] = Value::Object(task);
    Some(Ok(op))
}

/// Rally's reading of a task with no `iterations` or `time-period` whose params come from a
/// param source: one that never ends runs once per client; one that ends runs until each
/// client's partition does (its `size()` only shows Rally's progress). Sets ours in `out`.
pub(super) fn extent_of_task(
    c: &mut Ctx,
    op_name: &str,
    clients: u64,
    out: &mut Map<String, Value>,
) {
    if out.contains_key("iterations") || out.contains_key("time-period") {
        return;
    }
    let Some(infinite) = c
        .python
        .as_ref()
        .and_then(|p| p.extents.get(op_name).copied())
    else {
        return;
    };
    // With a time warmup, Rally runs a time-period schedule with no end of its own: until the
    // source ends, or the block's completing task does.
    if out.get("warmup").is_some_and(Value::is_string) {
        c.notes.push(format!(
            "operation `{op_name}`: a time warmup and no `time-period`: the task runs until its param source or its block's completing task ends (Rally's reading)"
        ));
        out.insert("time-period".into(), json!(UNTIL_THE_BLOCK_ENDS));
        return;
    }
    let per_client = if infinite { 1 } else { UNTIL_THE_SOURCE_ENDS };
    out.insert(
        "iterations".into(),
        json!(per_client.saturating_mul(clients)),
    );
}

/// The time period of a task that runs until something else ends it (30 days).
const UNTIL_THE_BLOCK_ENDS: &str = "2592000s";

/// Iterations per client of a task that runs until its param source ends: more than any race
/// gets through (the track's limit on iterations is far above it).
const UNTIL_THE_SOURCE_ENDS: u64 = 1 << 36;
