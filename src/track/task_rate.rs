//! A task's target when it is not one rate: `target-throughput: max` with its `slo` and probe
//! keys (a capacity search), or `target-throughput: {start, stages}` (a ramp); each checked
//! against the keys it cannot go with, so that a track says what it means before the race.

use super::error::{TrackError, TrackErrorKind};
use super::model::{Resolver, ScheduleKind, Warmup};
use super::rate::{slo_problem, CapacitySpec, Ramp, Stage, MAX_STAGES};
use super::raw::RawScheduleItem;
use super::task::duration_at;
use crate::units::OpsPerSec;
use serde_json::Value;

/// What `target-throughput` asks for, besides plain rates.
pub(super) enum Special {
    None,
    Max,
    Ramp(Ramp),
}

/// Reads `target-throughput` when it is `max` or a ramp.
pub(super) fn special_target(
    t: &RawScheduleItem,
    r: &Resolver,
    path: &str,
) -> Result<Special, TrackError> {
    let at = format!("{path}/target-throughput");
    match &t.target_throughput {
        Some(Value::String(s)) if s == "max" => Ok(Special::Max),
        Some(Value::String(s)) => Err(r.err(
            TrackErrorKind::Invalid,
            &at,
            format!(
                "`{s}` is not a target: give ops/s, `max` (with an `slo`) or `{{stages: [...]}}`"
            ),
        )),
        Some(Value::Object(m)) => resolve_ramp(m, r, &at).map(Special::Ramp),
        Some(Value::Array(items)) if items.iter().any(|v| !v.is_number()) => Err(r.err(
            TrackErrorKind::NotSweepable,
            &at,
            "only plain rates sweep: `max` and ramps are one target each",
        )),
        _ => Ok(Special::None),
    }
}

fn resolve_ramp(
    m: &serde_json::Map<String, Value>,
    r: &Resolver,
    at: &str,
) -> Result<Ramp, TrackError> {
    let invalid = |p: &str, msg: String| r.err(TrackErrorKind::Invalid, p, msg);
    if let Some(k) = m.keys().find(|k| *k != "start" && *k != "stages") {
        return Err(r.err(
            TrackErrorKind::Schema,
            &format!("{at}/{k}"),
            format!("unknown key `{k}` in a ramp (it takes `start` and `stages`)"),
        ));
    }
    let rate = |v: &Value, p: &str| -> Result<f64, TrackError> {
        match v.as_f64() {
            Some(x) if x.is_finite() && (0.0..=OpsPerSec::MAX).contains(&x) => Ok(x),
            _ => Err(invalid(
                p,
                format!("`{v}` is not a rate from 0 to {:.0e} ops/s", OpsPerSec::MAX),
            )),
        }
    };
    let start = match m.get("start") {
        Some(v) => rate(v, &format!("{at}/start"))?,
        None => 0.0,
    };
    let Some(Value::Array(items)) = m.get("stages") else {
        return Err(invalid(
            at,
            "a ramp needs `stages`: a list of `{duration, target}`".into(),
        ));
    };
    if items.is_empty() || items.len() > MAX_STAGES {
        return Err(invalid(
            &format!("{at}/stages"),
            format!("a ramp has 1 to {MAX_STAGES} stages"),
        ));
    }
    let mut stages = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = format!("{at}/stages/{i}");
        let Value::Object(s) = item else {
            return Err(invalid(
                &p,
                "a stage is `{duration: 30s, target: 100}`".into(),
            ));
        };
        if let Some(k) = s.keys().find(|k| *k != "duration" && *k != "target") {
            return Err(r.err(
                TrackErrorKind::Schema,
                &format!("{p}/{k}"),
                format!("unknown key `{k}` in a stage (it takes `duration` and `target`)"),
            ));
        }
        let (Some(d), Some(t)) = (s.get("duration"), s.get("target")) else {
            return Err(invalid(&p, "a stage needs `duration` and `target`".into()));
        };
        stages.push(Stage {
            duration: duration_at(d, r, &format!("{p}/duration"))?,
            target: rate(t, &format!("{p}/target"))?,
        });
    }
    let ramp = Ramp { start, stages };
    if ramp.total().is_zero() {
        return Err(invalid(
            &format!("{at}/stages"),
            "the stages last no time: give them durations".into(),
        ));
    }
    if ramp.operations_by(ramp.total().as_secs_f64()) < 1.0 {
        return Err(invalid(
            &format!("{at}/stages"),
            "the ramp intends less than one operation: raise its targets".into(),
        ));
    }
    if ramp.total() > crate::units::MAX_DURATION {
        return Err(invalid(
            &format!("{at}/stages"),
            "the stages last longer than a task may".into(),
        ));
    }
    Ok(ramp)
}

/// The search's settings, when `target-throughput` is `max`; and no probe key without it.
pub(super) fn resolve_capacity(
    t: &RawScheduleItem,
    max: bool,
    r: &Resolver,
    path: &str,
) -> Result<Option<CapacitySpec>, TrackError> {
    let given = [
        ("slo", !t.slo.is_empty()),
        ("probe-time", t.probe_time.is_some()),
        ("probe-warmup", t.probe_warmup.is_some()),
        ("precision", t.precision.is_some()),
        ("probe-start", t.probe_start.is_some()),
        ("max-probes", t.max_probes.is_some()),
    ];
    if !max {
        return match given.iter().find(|(_, set)| *set) {
            Some((key, _)) => Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/{key}"),
                format!("`{key}` belongs to a capacity search (`target-throughput: max`); a fixed rate is judged by `thresholds`"),
            )),
            None => Ok(None),
        };
    }
    if t.slo.is_empty() {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/target-throughput"),
            "`target-throughput: max` searches for the highest rate that holds a goal: give it an `slo`, e.g. `slo: {latency.p99: \"< 20ms\"}`",
        ));
    }
    check_search_keys(t, r, path)?;
    let slo = resolve_slo(t, r, path)?;
    let secs = |v: &Option<Value>, key: &str, default| match v {
        Some(v) => duration_at(v, r, &format!("{path}/{key}")),
        None => Ok(default),
    };
    let probe_time = secs(
        &t.probe_time,
        "probe-time",
        CapacitySpec::DEFAULT_PROBE_TIME,
    )?;
    if probe_time.is_zero() {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/probe-time"),
            "a probe of no time measures nothing",
        ));
    }
    let probe_warmup = secs(
        &t.probe_warmup,
        "probe-warmup",
        CapacitySpec::DEFAULT_PROBE_WARMUP,
    )?;
    let precision = match &t.precision {
        Some(v) => read_share(v).ok_or_else(|| {
            r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/precision"),
                format!(
                    "`{v}` is not a precision: a share above 0% and below 50%, e.g. `2%` or 0.02"
                ),
            )
        })?,
        None => CapacitySpec::DEFAULT_PRECISION,
    };
    let probe_start = match &t.probe_start {
        Some(v) => Some(
            v.as_f64()
                .ok_or_else(|| format!("`{v}` is not a number"))
                .and_then(OpsPerSec::new)
                .map_err(|m| r.err(TrackErrorKind::Invalid, &format!("{path}/probe-start"), m))?,
        ),
        None => None,
    };
    let max_probes = match t.max_probes {
        Some(n) if (3..=u64::from(CapacitySpec::MOST_PROBES)).contains(&n) => n as u32,
        Some(n) => {
            return Err(r.err(
                TrackErrorKind::Invalid,
                &format!("{path}/max-probes"),
                format!(
                    "{n} probes: a search takes 3 to {}",
                    CapacitySpec::MOST_PROBES
                ),
            ))
        }
        None => CapacitySpec::DEFAULT_MAX_PROBES,
    };
    Ok(Some(CapacitySpec {
        slo,
        probe_time,
        probe_warmup,
        precision,
        probe_start,
        max_probes,
    }))
}

/// A search runs timed probes of its own: the keys that set a task's length do not apply.
fn check_search_keys(t: &RawScheduleItem, r: &Resolver, path: &str) -> Result<(), TrackError> {
    let clash = [
        (
            "iterations",
            t.iterations.is_some(),
            "each probe runs `probe-time`",
        ),
        (
            "time-period",
            t.time_period.is_some(),
            "each probe runs `probe-time`",
        ),
        (
            "warmup",
            t.warmup.is_some(),
            "each probe warms up for `probe-warmup`",
        ),
    ];
    if let Some((key, _, why)) = clash.iter().find(|(_, set, _)| *set) {
        return Err(r.err(
            TrackErrorKind::Invalid,
            &format!("{path}/{key}"),
            format!("`{key}` does not go with `target-throughput: max`: {why}"),
        ));
    }
    Ok(())
}

fn resolve_slo(
    t: &RawScheduleItem,
    r: &Resolver,
    path: &str,
) -> Result<Vec<crate::thresholds::Threshold>, TrackError> {
    t.slo
        .iter()
        .map(|(metric, condition)| {
            let at = format!("{path}/slo/{metric}");
            let condition = condition.as_str().ok_or_else(|| {
                r.err(
                    TrackErrorKind::Invalid,
                    &at,
                    "a criterion is a string such as \"< 20ms\"",
                )
            })?;
            let c = crate::thresholds::Threshold::from_track(metric, condition)
                .map_err(|e| r.err(TrackErrorKind::Invalid, &at, e))?;
            match slo_problem(&c) {
                Some(why) => Err(r.err(TrackErrorKind::Invalid, &at, why)),
                None => Ok(c),
            }
        })
        .collect()
}

/// `2%` or 0.02, above 0 and below one half.
fn read_share(v: &Value) -> Option<f64> {
    let x = match v {
        Value::String(s) => s.trim().strip_suffix('%')?.trim().parse::<f64>().ok()? / 100.0,
        other => other.as_f64()?,
    };
    (x.is_finite() && x > 0.0 && x < 0.5).then_some(x)
}

/// A ramp sets the task's length, and needs a schedule to follow it.
pub(super) fn check_ramp(
    t: &RawScheduleItem,
    ramp: &Ramp,
    warmup: Warmup,
    schedule: ScheduleKind,
    r: &Resolver,
    path: &str,
) -> Result<(), TrackError> {
    let err =
        |key: &str, msg: String| r.err(TrackErrorKind::Invalid, &format!("{path}/{key}"), msg);
    if t.iterations.is_some() || t.time_period.is_some() {
        let key = if t.iterations.is_some() {
            "iterations"
        } else {
            "time-period"
        };
        return Err(err(
            key,
            format!(
                "`{key}` does not go with a ramp: the stages set the task's length ({:?})",
                ramp.total()
            ),
        ));
    }
    if schedule == ScheduleKind::Unthrottled {
        return Err(err(
            "schedule",
            "a ramp is a schedule of rates: use `deterministic` or `poisson`".into(),
        ));
    }
    match warmup {
        Warmup::Time(w) if w >= ramp.total() => Err(err("warmup", format!("the warmup ({w:?}) is not shorter than the stages ({:?}): nothing would be measured", ramp.total()))),
        Warmup::Iterations(_) => Err(err("warmup", "a ramp's warmup is a time or a fraction of its stages".into())),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_reads_a_percentage_or_a_share() {
        assert_eq!(read_share(&Value::from("2%")), Some(0.02));
        assert_eq!(read_share(&Value::from(0.05)), Some(0.05));
        assert_eq!(read_share(&Value::from("0%")), None);
        assert_eq!(read_share(&Value::from(0.5)), None);
        assert_eq!(read_share(&Value::from("two")), None);
    }
}
