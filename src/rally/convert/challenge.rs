//! Rally's challenges and their schedules as ours: per-client counts made totals, warmups and time periods as ours read them.

use super::*;

/// The index of the challenge a race runs: the one named, else the one marked `default`, else
/// the only one. None when none of those applies (the track model then says why).
pub(super) fn selected_challenge(challenges: &[Value], wanted: Option<&str>) -> Option<usize> {
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

/// The name Rally gives a task: its own, else its operation's (a declared name, a type
/// written as a string, or an inline operation's name or type).
fn rally_task_name(t: &Value) -> String {
    match t.get("name").and_then(Value::as_str) {
        Some(n) => n.to_string(),
        None => rally_op_name(t),
    }
}

/// Rally's rules over one challenge's tasks: names unique in the challenge, and each
/// `parallel`'s `completed-by` naming exactly one of its tasks (or `any`); a task's
/// `ramp-up-time-period` only as its block's.
pub(super) fn rallys_task_rules(
    c: &Ctx,
    ch: &Value,
    challenge: &str,
    path: &str,
) -> Result<(), TrackError> {
    // As Rally: every block parsed (and checked) first, then the names over the challenge.
    let mut names = Vec::new();
    for (i, item) in ch
        .get("schedule")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let ipath = format!("{path}/schedule/{i}");
        let (tasks, par) = match item.get("parallel") {
            Some(par) => (
                par.get("tasks")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
                Some(par),
            ),
            None => (vec![item.clone()], None),
        };
        names.extend(tasks.iter().map(|t| (ipath.clone(), rally_task_name(t))));
        for t in &tasks {
            task_work_rules(c, t, par, challenge, &ipath)?;
        }
        let Some(par) = par else { continue };
        let ramp = par.get("ramp-up-time-period");
        for t in &tasks {
            let own = t.get("ramp-up-time-period");
            if own.is_some() && own != ramp {
                let name = rally_task_name(t);
                return Err(c.err(&ipath, match ramp {
                    None => format!("task '{name}' in 'parallel' element of challenge '{challenge}' specifies a ramp-up-time-period but it is only allowed on the 'parallel' element."),
                    Some(_) => format!("task '{name}' specifies a different ramp-up-time-period than its enclosing 'parallel' element in challenge '{challenge}'."),
                }));
            }
        }
        if let Some(by) = par
            .get("completed-by")
            .and_then(Value::as_str)
            .filter(|b| *b != "any")
        {
            match tasks.iter().filter(|t| rally_task_name(t) == by).count() {
                1 => {}
                0 => return Err(c.err(&ipath, format!("'parallel' element for challenge '{challenge}' is marked with 'completed-by' with task name '{by}' but no task with this name exists."))),
                _ => return Err(c.err(&ipath, format!("'parallel' element for challenge '{challenge}' contains multiple tasks with the name '{by}' marked with 'completed-by' but only task is allowed to match."))),
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    for (ipath, name) in names {
        if !seen.insert(name.clone()) {
            return Err(c.err(&ipath, format!("Challenge '{challenge}' contains multiple tasks with the name '{name}'. Please use the task's name property to assign a unique name for each task.")));
        }
    }
    Ok(())
}

/// The name Rally gives a task's operation: a declared or type name written as a string, else
/// an inline operation's name or type.
fn rally_op_name(t: &Value) -> String {
    match t.get("operation") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Object(op)) => op
            .get("name")
            .or_else(|| op.get("operation-type"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        _ => String::new(),
    }
}

/// Rally's parse_task checks of one task's work (its own keys, else its block's): iterations
/// and time periods not mixed, a ramp-up only with a warmup time period at least as long.
fn task_work_rules(
    c: &Ctx,
    t: &Value,
    par: Option<&Value>,
    challenge: &str,
    path: &str,
) -> Result<(), TrackError> {
    let get = |k: &str| {
        t.get(k)
            .or_else(|| par.and_then(|p| p.get(k)))
            .filter(|v| !v.is_null())
    };
    let op = rally_op_name(t);
    let shown = |v: Option<&Value>| v.map_or("None".to_string(), Value::to_string);
    let (warmup_iterations, iterations) = (get("warmup-iterations"), get("iterations"));
    let (warmup_time, time_period) = (get("warmup-time-period"), get("time-period"));
    let ramp_up = get("ramp-up-time-period");
    let refuse = |m: String| Err(c.err(path, m));
    if let (Some(w), Some(tp)) = (warmup_iterations, time_period) {
        return refuse(format!("Operation '{op}' in challenge '{challenge}' defines {w} warmup iterations and a time period of {tp} seconds but mixing time periods and iterations is not allowed."));
    }
    if let (Some(w), Some(n)) = (warmup_time, iterations) {
        return refuse(format!("Operation '{op}' in challenge '{challenge}' defines a warmup time period of {w} seconds and {n} iterations but mixing time periods and iterations is not allowed."));
    }
    let Some(ramp) = ramp_up else {
        return Ok(());
    };
    if warmup_iterations.is_some() || iterations.is_some() {
        return refuse(format!("Operation '{op}' in challenge '{challenge}' defines a ramp-up time period of {ramp} seconds as well as {} warmup iterations and {} iterations but mixing time periods and iterations is not allowed.", shown(warmup_iterations), shown(iterations)));
    }
    match warmup_time.and_then(Value::as_f64) {
        None => refuse(format!("Operation '{op}' in challenge '{challenge}' defines a ramp-up time period of {ramp} seconds but no warmup-time-period.")),
        Some(w) if ramp.as_f64().is_some_and(|r| w < r) => refuse(format!("The warmup-time-period of operation '{op}' in challenge '{challenge}' is {} seconds but must be greater than or equal to the ramp-up-time-period of {ramp} seconds.", shown(warmup_time))),
        Some(_) => Ok(()),
    }
}

pub(super) fn challenge(
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
    // Rally: a sole challenge is the default, whatever it says.
    if ch.get("default").and_then(Value::as_bool) == Some(true) || c.sole_challenge {
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
            block_clients_note(c, par, &ipath);
            let mut tasks = Vec::new();
            for (j, t) in par
                .get("tasks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                // Rally's parse_parallel hands its tasks these defaults, and no others
                // (`clients` bounds the block; it is no task's).
                let mut merged: Map<String, Value> = defaults
                    .iter()
                    .filter(|(k, _)| PARALLEL_DEFAULTS.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
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

/// What a `parallel` element hands its tasks, as Rally's parse_parallel does.
const PARALLEL_DEFAULTS: [&str; 5] = [
    "warmup-iterations",
    "iterations",
    "warmup-time-period",
    "time-period",
    "ramp-up-time-period",
];

/// A block's `clients` below its tasks' own: Rally runs the block on that many clients, its
/// tasks taking turns; runner runs every task's clients at once, and says so.
fn block_clients_note(c: &mut Ctx, par: &Value, path: &str) {
    let Some(bound) = par.get("clients").and_then(Value::as_u64) else {
        return;
    };
    let wanted: u64 = par
        .get("tasks")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|t| t.get("clients").and_then(Value::as_u64).unwrap_or(1))
        .sum();
    if bound < wanted {
        c.notes.push(format!(
            "{path}: the parallel block's `clients: {bound}` is below its tasks' {wanted}: Rally runs them on {bound} clients taking turns, runner runs all {wanted} at once"
        ));
    }
}

/// One task as ours; None when it is skipped.
pub(super) fn self_task(
    c: &mut Ctx,
    t: &Value,
    path: &str,
    ops: &[Value],
    unsupported: &Map<String, Value>,
) -> Result<Option<Value>, TrackError> {
    let Some(map) = t.as_object() else {
        return Err(c.err(path, "a task is an object"));
    };
    let (op_value, op_name, why) = task_operation(c, map, path, ops, unsupported)?;
    let rally_type = rally_type(c, map);
    let task_name = map
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| op_name.clone());
    let paced = super::python::paced_by_scheduler(c, map, op_value.as_ref(), ops, &task_name);
    let (why, op_value) = match paced {
        Some(Ok(op)) => (why, Some(op)),
        Some(Err(refused)) => (why.or(Some(refused)), op_value),
        None => (why, op_value),
    };
    let python_paced = op_value
        .as_ref()
        .is_some_and(|o| o["params"]["scheduler"].is_string());
    if let Some(why) = template_order(c, &rally_type, why, &task_name) {
        return match c.on_unsupported {
            OnUnsupported::Fail => Err(c.err(
                path,
                format!("task `{task_name}`: {why} (--on-unsupported skip leaves it out)"),
            )),
            OnUnsupported::Skip => {
                c.notes
                    .push(format!("{path}: task `{task_name}` skipped: {why}"));
                Ok(None)
            }
        };
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
    work(map, clients, c.test_mode, &mut out);
    super::python::extent_of_task(c, &op_name, clients, &mut out);
    // A task the track's scheduler paces takes its rate from it, not from ours.
    if !python_paced {
        rates(c, map, path, ops, op_value.as_ref(), &mut out)?;
    }
    // Rally's `Retry` around the runner: the operation's parameters, the task's over them.
    let none = Map::new();
    let rally_op = match map.get("operation") {
        Some(Value::Object(inline)) => inline,
        Some(Value::String(n)) => c.rally_ops.get(n).unwrap_or(&none),
        _ => &none,
    };
    if let Some(retry) = rally_retry(rally_op, map) {
        out.insert("retry".into(), retry);
    }
    // Rally's task tags, for `--include-tasks tag:NAME`.
    if let Some(tags) = map.get("tags").filter(|t| t.is_string() || t.is_array()) {
        out.insert("tags".into(), tags.clone());
    }
    if let Some(level) = map
        .get("ignore-response-error-level")
        .and_then(Value::as_str)
    {
        out.insert("ignore-response-error-level".into(), json!(level));
    }
    // Rally's `run_unthrottled`: a built-in schedule with no target throughput runs
    // unthrottled (only a track's own scheduler paces a task without one).
    let throttled = out.contains_key("target-throughput") || out.contains_key("target-interval");
    if let Some(s) = map
        .get("schedule")
        .and_then(Value::as_str)
        .filter(|s| !python_paced && (throttled || !["poisson", "deterministic"].contains(s)))
    {
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

/// The task's operation as ours (a name, or an inline operation), its name, and why it cannot
/// run if it cannot.
#[allow(clippy::type_complexity)]
fn task_operation(
    c: &mut Ctx,
    map: &Map<String, Value>,
    path: &str,
    ops: &[Value],
    unsupported: &Map<String, Value>,
) -> Result<(Option<Value>, String, Option<String>), TrackError> {
    Ok(match map.get("operation") {
        Some(Value::String(n)) => {
            if let Some(e) = c.failed_ops.get(n) {
                return Err(e.clone());
            }
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
    })
}

/// Rally's operation type of the task's operation.
fn rally_type(c: &Ctx, map: &Map<String, Value>) -> String {
    match map.get("operation") {
        Some(Value::String(n)) => c.rally_types.get(n).cloned().unwrap_or_else(|| n.clone()),
        Some(inline) => inline
            .get("operation-type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        None => String::new(),
    }
}

/// Rally's template operations: a skipped one leaves its templates unmade, and a data stream
/// made after it, with no other template task run before, cannot be made (on Elasticsearch
/// either): it is skipped too, naming why. Returns why the task cannot run, if it cannot.
fn template_order(
    c: &mut Ctx,
    rally_type: &str,
    why: Option<String>,
    task_name: &str,
) -> Option<String> {
    const TEMPLATE_TYPES: [&str; 3] = [
        "create-composable-template",
        "create-component-template",
        "create-index-template",
    ];
    if TEMPLATE_TYPES.contains(&rally_type) {
        match &why {
            Some(_) => {
                c.skipped_templates
                    .get_or_insert_with(|| task_name.to_string());
            }
            None => c.made_templates = true,
        }
    }
    why.or_else(|| match (&c.skipped_templates, rally_type) {
        (Some(skipped), "create-data-stream") if !c.made_templates => Some(format!(
            "the index template its data streams need would come from the skipped task `{skipped}`"
        )),
        _ => None,
    })
}

/// How much work: Rally counts iterations per client (ours are totals), and measures
/// `time-period` after `warmup-time-period` (ours includes the warmup). Rally's test mode (its
/// TestModeTrackProcessor) runs at most as many iterations and warmup iterations as the task
/// has clients; its shorter time periods are runner's test mode's own.
/// The longest time period of a task in Rally's test mode.
const RALLY_TEST_MODE_SECONDS: f64 = 10.0;

fn work(map: &Map<String, Value>, clients: u64, test_mode: bool, out: &mut Map<String, Value>) {
    let at_most_clients = |n: u64| if test_mode { n.min(clients) } else { n };
    let iterations = map
        .get("iterations")
        .and_then(Value::as_u64)
        .map(at_most_clients);
    let warmup_iterations = map
        .get("warmup-iterations")
        .and_then(Value::as_u64)
        .map(at_most_clients);
    // Rally's TestModeTrackProcessor: no warmup time, a time period of at most 10 s.
    let warmup_time = map
        .get("warmup-time-period")
        .and_then(Value::as_f64)
        .filter(|_| !test_mode);
    let time_period = map.get("time-period").and_then(Value::as_f64).map(|tp| {
        if test_mode {
            tp.min(RALLY_TEST_MODE_SECONDS)
        } else {
            tp
        }
    });
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
}

/// The task's rate: Rally's `target-throughput` (with its units) or `target-interval`.
fn rates(
    c: &Ctx,
    map: &Map<String, Value>,
    path: &str,
    ops: &[Value],
    op_value: Option<&Value>,
    out: &mut Map<String, Value>,
) -> Result<(), TrackError> {
    if c.test_mode {
        // Rally's test mode lifts every throttle (its target becomes sys.maxsize).
        return Ok(());
    }
    if let Some(v) = map.get("target-throughput") {
        let op = match op_value {
            Some(Value::String(n)) => ops.iter().find(|o| o["name"] == *n),
            other => other,
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
    Ok(())
}

/// Rally's `target-throughput` as requests per second: a number is one already; a string is
/// `"<value> <unit>/s"`. `ops/s` counts requests; `docs/s` on a bulk counts documents, and Rally's
/// unit-aware scheduler divides it by a request's documents (the bulk size). 0 is unthrottled.
pub(super) fn requests_per_second(
    v: &Value,
    bulk_size: Option<f64>,
) -> Result<Option<Value>, String> {
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

/// Rally's `Retry` parameters (runner.py) of an operation, overridden by the task's own, as
/// our task key `retry`; None when nothing is retried (`retries: 0`, no `retry-until-success`).
pub(super) fn rally_retry(op: &Map<String, Value>, task: &Map<String, Value>) -> Option<Value> {
    const KEYS: [(&str, &str); 5] = [
        ("retries", "retries"),
        ("retry-until-success", "until-success"),
        ("retry-wait-period", "wait-period"),
        ("retry-on-timeout", "on-timeout"),
        ("retry-on-error", "on-error"),
    ];
    let mut out = Map::new();
    for (rally, ours) in KEYS {
        if let Some(v) = task.get(rally).or_else(|| op.get(rally)) {
            out.insert(ours.into(), v.clone());
        }
    }
    let retries = out.get("retries").and_then(Value::as_u64).unwrap_or(0);
    let until = out
        .get("until-success")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    (retries > 0 || until).then_some(Value::Object(out))
}
