//! A task of a challenge, resolved from the track's keys (see `keys::TASK_KEYS`): its
//! operation, clients, amount of work, target rate and schedule, warmup, ramp-up, thresholds.

use super::error::{TrackError, TrackErrorKind};
use super::keys::Parser;
use super::model::{
    resolve_ref, resolve_refs, OperationDef, Resolver, ScheduleKind, TaskSpec, Warmup,
};
use super::raw::RawScheduleItem;
use super::task_rate::{check_ramp, resolve_capacity, special_target, Special};
use crate::ops::{self, TrackContext};
use crate::units::{parse_duration, OpsPerSec};
use serde_json::{Map, Value};
use std::time::Duration;

/// The first key of a task that holds more than one value, if any.
pub(super) fn swept_key(t: &TaskSpec) -> Option<String> {
    if t.clients.len() > 1 {
        return Some("clients".into());
    }
    if t.iterations.as_ref().is_some_and(|v| v.len() > 1) {
        return Some("iterations".into());
    }
    if t.targets.as_ref().is_some_and(|v| v.len() > 1) {
        return Some("target-throughput".into());
    }
    t.params
        .iter()
        .find(|(_, v)| v.is_array())
        .map(|(k, _)| format!("params/{k}"))
}

/// Most clients one task may run: each holds a connection and its own recorder.
pub const MAX_CLIENTS: u64 = 100_000;
/// Most iterations (or warmup iterations) one task may ask for: at a billion a second, 11 days.
pub const MAX_ITERATIONS: u64 = 1_000_000_000_000_000;

/// A value of a task key, as the key's parser in `keys::TASK_KEYS` reads it.
enum KeyValue {
    Counts(Vec<u64>),
    Rates(Vec<OpsPerSec>),
    Duration(Duration),
    Warmup(Warmup),
}

/// Reads the value of the task key `name` with the parser the table gives it.
fn read(name: &str, v: &Value, r: &Resolver, path: &str) -> Result<KeyValue, TrackError> {
    let at = format!("{path}/{name}");
    let parser = super::keys::task_key(name).map(|k| k.parser);
    let items = match v {
        Value::Array(items) => items.as_slice(),
        one => std::slice::from_ref(one),
    };
    match parser {
        Some(Parser::Counts { max }) => {
            let count = |v: &Value| match crate::units::whole_number(v, max) {
                Ok(0) => Err(r.err(TrackErrorKind::Invalid, &at, "must be at least 1")),
                Ok(n) => Ok(n),
                Err(m) => Err(r.err(TrackErrorKind::Invalid, &at, m)),
            };
            each(items, count).map(KeyValue::Counts)
        }
        Some(Parser::Rates | Parser::Target) => {
            let rate = |v: &Value| {
                v.as_f64()
                    .ok_or_else(|| format!("`{v}` is not a number"))
                    .and_then(OpsPerSec::new)
                    .map_err(|m| r.err(TrackErrorKind::Invalid, &at, m))
            };
            each(items, rate).map(KeyValue::Rates)
        }
        Some(Parser::Intervals) => {
            let rate = |item: &Value| {
                let d = duration_at(item, r, &at)?;
                if d.is_zero() {
                    return Err(r.err(
                        TrackErrorKind::Invalid,
                        &at,
                        "a target interval must be longer than zero",
                    ));
                }
                OpsPerSec::new(1.0 / d.as_secs_f64())
                    .map_err(|m| r.err(TrackErrorKind::Invalid, &at, m))
            };
            each(items, rate).map(KeyValue::Rates)
        }
        Some(Parser::Duration) => duration_at(v, r, &at).map(KeyValue::Duration),
        Some(Parser::Warmup) => resolve_warmup(v, r, &at).map(KeyValue::Warmup),
        other => Err(r.err(
            TrackErrorKind::Invalid,
            &at,
            format!("`{name}` is not read as a value (its parser: {other:?})"),
        )),
    }
}

/// Every item read, or the first error.
fn each<T>(
    items: &[Value],
    read: impl Fn(&Value) -> Result<T, TrackError>,
) -> Result<Vec<T>, TrackError> {
    items.iter().map(read).collect()
}

/// A key read as counts (`clients`, `iterations`).
fn counts(
    name: &str,
    v: &Option<Value>,
    r: &Resolver,
    path: &str,
) -> Result<Option<Vec<u64>>, TrackError> {
    match v.as_ref().map(|v| read(name, v, r, path)).transpose()? {
        Some(KeyValue::Counts(c)) => Ok(Some(c)),
        _ => Ok(None),
    }
}

/// A key read as rates (`target-throughput`, `target-interval`).
fn rates(
    name: &str,
    v: &Value,
    r: &Resolver,
    path: &str,
) -> Result<Option<Vec<OpsPerSec>>, TrackError> {
    match read(name, v, r, path)? {
        KeyValue::Rates(rates) => Ok(Some(rates)),
        _ => Ok(None),
    }
}

/// A key read as a time (`time-period`, `ramp-up-time-period`).
fn duration(
    name: &str,
    v: &Option<Value>,
    r: &Resolver,
    path: &str,
) -> Result<Option<Duration>, TrackError> {
    match v.as_ref().map(|v| read(name, v, r, path)).transpose()? {
        Some(KeyValue::Duration(d)) => Ok(Some(d)),
        _ => Ok(None),
    }
}

pub(super) fn duration_at(v: &Value, r: &Resolver, path: &str) -> Result<Duration, TrackError> {
    match v {
        Value::Number(n) => crate::units::duration_from_secs(n.as_f64().unwrap_or(-1.0))
            .map_err(|m| r.err(TrackErrorKind::Invalid, path, m)),
        Value::String(s) => parse_duration(s).map_err(|m| r.err(TrackErrorKind::Invalid, path, m)),
        other => Err(r.err(
            TrackErrorKind::Schema,
            path,
            format!("`{other}` is not a duration"),
        )),
    }
}

/// A task of a challenge as the track gives it, checked key by key.
pub(super) fn resolve_task(
    t: &RawScheduleItem,
    ops: &[OperationDef],
    ctx: &TrackContext,
    r: &Resolver,
    path: &str,
) -> Result<TaskSpec, TrackError> {
    let op_value = t
        .operation
        .as_ref()
        .ok_or_else(|| r.err(TrackErrorKind::Schema, path, "a task needs an `operation`"))?;
    let operation = resolve_ref(op_value, ops, ctx, r, &format!("{path}/operation"))?;
    check_swept_params(t, &operation, r, path)?;
    let time_period = resolve_time_period(t, r, path)?;
    let iterations = counts("iterations", &t.iterations, r, path)?;
    if iterations.is_some() && time_period.is_some() {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/time-period"),
            "give either `iterations` or `time-period`, not both",
        ));
    }
    let special = special_target(t, r, path)?;
    let targets = match special {
        Special::None => resolve_targets(t, r, path)?,
        _ if t.target_interval.is_some() => {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/target-interval"),
                "give either `target-throughput` or `target-interval`, not both",
            ))
        }
        _ => None,
    };
    let capacity = resolve_capacity(t, matches!(special, Special::Max), r, path)?;
    let ramp = match special {
        Special::Ramp(ramp) => Some(ramp),
        _ => None,
    };
    let has_target = targets.is_some() || capacity.is_some() || ramp.is_some();
    let schedule = resolve_schedule(t.schedule.as_deref(), has_target, r, path)?;
    if capacity.is_some() && schedule == ScheduleKind::Unthrottled {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/schedule"),
            "a capacity search probes target rates: use `deterministic` or `poisson`",
        ));
    }
    let warmup = match t
        .warmup
        .as_ref()
        .map(|v| read("warmup", v, r, path))
        .transpose()?
    {
        Some(KeyValue::Warmup(w)) => w,
        _ => Warmup::None,
    };
    check_warmup(warmup, iterations.is_some(), time_period, r, path)?;
    if let Some(ramp) = &ramp {
        check_ramp(t, ramp, warmup, schedule, r, path)?;
    }
    let ramp_up = resolve_ramp_up(t, warmup, r, path)?;
    // A share of the target needs one fixed rate: a ramp's moves, and a search's SLO judges
    // each probe against its own.
    let thresholds = resolve_thresholds(
        &t.thresholds,
        targets.is_some(),
        r,
        &format!("{path}/thresholds"),
    )?;
    if !thresholds.is_empty() && t.include_in_reporting == Some(false) {
        return Err(r.err(TrackErrorKind::Invalid, &format!("{path}/thresholds"), "a task left out of reports (`include-in-reporting: false`) is never judged: drop its thresholds or report it"));
    }
    Ok(TaskSpec {
        thresholds,
        named: t.name.is_some(),
        name: t.name.clone().unwrap_or_else(|| operation.name.clone()),
        path: path.to_string(),
        clients: counts("clients", &t.clients, r, path)?.unwrap_or_else(|| vec![1]),
        iterations,
        time_period,
        warmup,
        targets,
        schedule,
        trials: t.trials.unwrap_or(1),
        warmup_trials: t.warmup_trials.unwrap_or(0),
        ignore_response_errors: t.ignore_response_error_level.as_deref() == Some("non-fatal"),
        retry: super::retry::parse(&t.retry, r, path)?,
        reported: t.include_in_reporting.unwrap_or(true),
        tags: tags(&t.tags, r, path)?,
        ramp_up,
        capacity,
        ramp,
        reset: resolve_refs(&t.reset, ops, ctx, r, &format!("{path}/reset"))?,
        params: t.params.clone(),
        operation,
    })
}

/// `tags`: a string, or a list of strings.
fn tags(v: &Option<Value>, r: &Resolver, path: &str) -> Result<Vec<String>, TrackError> {
    let bad = || {
        r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/tags"),
            "tags are a string or a list of strings",
        )
    };
    match v {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string).ok_or_else(bad))
            .collect(),
        Some(_) => Err(bad()),
    }
}

/// A list in `params` sweeps only where the operation type allows it, and is never empty.
fn check_swept_params(
    t: &RawScheduleItem,
    operation: &OperationDef,
    r: &Resolver,
    path: &str,
) -> Result<(), TrackError> {
    let sweepable = ops::sweepable_params(&operation.kind, &operation.params);
    for (k, v) in &t.params {
        let Value::Array(items) = v else { continue };
        if !sweepable.contains(&k.as_str()) {
            let allowed = if sweepable.is_empty() {
                "none".to_string()
            } else {
                sweepable.join(", ")
            };
            let keys: Vec<&str> = super::keys::sweepable_task_keys().collect();
            return Err(r.err(
                TrackErrorKind::NotSweepable,
                &format!("{path}/params/{k}"),
                format!("`{k}` cannot be swept for a `{}` operation (sweepable params: {allowed}; task keys {} sweep too)", operation.kind, keys.join(", ")),
            ));
        }
        if items.is_empty() {
            return Err(r.err(
                TrackErrorKind::Schema,
                &format!("{path}/params/{k}"),
                format!("`{k}` is an empty list: a sweep needs at least one value"),
            ));
        }
    }
    Ok(())
}

fn resolve_time_period(
    t: &RawScheduleItem,
    r: &Resolver,
    path: &str,
) -> Result<Option<Duration>, TrackError> {
    let time_period = duration("time-period", &t.time_period, r, path)?;
    if time_period.is_some_and(|p| p.is_zero()) {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/time-period"),
            "a time period of 0 measures nothing; give it a length, e.g. 30s",
        ));
    }
    Ok(time_period)
}

/// `target-throughput` or `target-interval` (one value or a sweep), as rates.
fn resolve_targets(
    t: &RawScheduleItem,
    r: &Resolver,
    path: &str,
) -> Result<Option<Vec<OpsPerSec>>, TrackError> {
    match (&t.target_throughput, &t.target_interval) {
        (Some(_), Some(_)) => Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/target-interval"),
            "give either `target-throughput` or `target-interval`, not both",
        )),
        (Some(v), None) => rates("target-throughput", v, r, path),
        (None, Some(v)) => rates("target-interval", v, r, path),
        (None, None) => Ok(None),
    }
}

fn resolve_schedule(
    given: Option<&str>,
    has_target: bool,
    r: &Resolver,
    path: &str,
) -> Result<ScheduleKind, TrackError> {
    let schedule = match given {
        Some("poisson") => ScheduleKind::Poisson,
        Some("unthrottled") => ScheduleKind::Unthrottled,
        Some("deterministic") => ScheduleKind::Deterministic,
        None if has_target => ScheduleKind::Deterministic,
        None => ScheduleKind::Unthrottled,
        Some(other) => {
            return Err(r.err(
                TrackErrorKind::Schema,
                &format!("{path}/schedule"),
                format!("unknown schedule `{other}`"),
            ))
        }
    };
    if schedule != ScheduleKind::Unthrottled && !has_target {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/schedule"),
            "a deterministic or poisson schedule needs a `target-throughput` or `target-interval`",
        ));
    }
    Ok(schedule)
}

/// Warmup iterations run before the measured ones (as in Rally), so any count is meaningful;
/// a time warmup lies within a time period.
fn check_warmup(
    warmup: Warmup,
    iterations: bool,
    time_period: Option<Duration>,
    r: &Resolver,
    path: &str,
) -> Result<(), TrackError> {
    let at = format!("{path}/warmup");
    match (warmup, iterations, time_period) {
        (Warmup::Time(w), _, Some(tp)) if w >= tp => Err(r.err(TrackErrorKind::Invalid, &at, format!("the warmup ({w:?}) is not shorter than the time-period ({tp:?}): nothing would be measured"))),
        (Warmup::Time(_), true, None) => Err(r.err(TrackErrorKind::Invalid, &at, "a time warmup needs a `time-period` task; with `iterations` give warmup as a count or a fraction")),
        (Warmup::Iterations(_), false, Some(_)) => Err(r.err(TrackErrorKind::Invalid, &at, "a warmup iteration count needs an `iterations` task; with `time-period` give warmup as a time or a fraction")),
        _ => Ok(()),
    }
}

/// Clients still starting would be measured: the ramp-up lies within a time warmup (as Rally
/// requires).
fn resolve_ramp_up(
    t: &RawScheduleItem,
    warmup: Warmup,
    r: &Resolver,
    path: &str,
) -> Result<Duration, TrackError> {
    let rpath = format!("{path}/ramp-up-time-period");
    let ramp_up =
        duration("ramp-up-time-period", &t.ramp_up_time_period, r, path)?.unwrap_or(Duration::ZERO);
    if !ramp_up.is_zero() && !matches!(warmup, Warmup::Time(w) if w >= ramp_up) {
        return Err(r.err(TrackErrorKind::Invalid, &rpath, format!("a ramp-up of {ramp_up:?} needs a time warmup at least as long (e.g. `warmup: {}s`), so that no starting client is measured", ramp_up.as_secs_f64().ceil())));
    }
    Ok(ramp_up)
}

/// `metric: condition` pairs, each checked now so that a typo fails before the race.
fn resolve_thresholds(
    raw: &Map<String, Value>,
    has_target: bool,
    r: &Resolver,
    path: &str,
) -> Result<Vec<crate::thresholds::Threshold>, TrackError> {
    raw.iter()
        .map(|(metric, condition)| {
            let at = format!("{path}/{metric}");
            let condition = condition.as_str().ok_or_else(|| {
                r.err(
                    TrackErrorKind::Invalid,
                    &at,
                    "a condition is a string such as \"< 5ms\"",
                )
            })?;
            let t = crate::thresholds::Threshold::from_track(metric, condition)
                .map_err(|e| r.err(TrackErrorKind::Invalid, &at, e))?;
            if t.needs_target() && !has_target {
                return Err(r.err(
                    TrackErrorKind::Invalid,
                    &at,
                    "a share of the target needs a `target-throughput` on the task, one fixed rate (a search's `slo` takes one, judged against each probe's rate)",
                ));
            }
            Ok(t)
        })
        .collect()
}

fn resolve_warmup(v: &Value, r: &Resolver, path: &str) -> Result<Warmup, TrackError> {
    match v {
        v @ Value::Number(n) if n.is_u64() => crate::units::whole_number(v, MAX_ITERATIONS)
            .map(Warmup::Iterations)
            .map_err(|m| r.err(TrackErrorKind::Invalid, path, m)),
        Value::String(s) if s.trim().ends_with('%') => {
            let pct: f64 = s.trim().trim_end_matches('%').trim().parse().map_err(|_| {
                r.err(
                    TrackErrorKind::Invalid,
                    path,
                    format!("`{s}` is not a percentage"),
                )
            })?;
            if !(0.0..100.0).contains(&pct) {
                return Err(r.err(
                    TrackErrorKind::Invalid,
                    path,
                    format!("a warmup of {pct}% leaves nothing to measure; use less than 100%"),
                ));
            }
            Ok(if pct == 0.0 {
                Warmup::None
            } else {
                Warmup::Fraction(pct / 100.0)
            })
        }
        other => Ok(Warmup::Time(duration_at(other, r, path)?)),
    }
}
