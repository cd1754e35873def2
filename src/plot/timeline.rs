//! Charts over the seconds of a trial: throughput with its warmup shaded and its target
//! drawn, latency percentiles, errors, and the runner's own CPU. Each trial's timeline (the
//! live view's seconds, warmup included) draws them; a race stored before timelines were
//! kept draws its measured seconds' throughput instead.

use super::svg::{Chart, XAxis, COLORS};
use super::{file_name, short, Plot, Source};

use crate::metrics::SecondPoint;
use crate::results::{TaskRecord, TrialRecord};

/// At most this many lines in one chart: past it, the legend would be a wall.
const MAX_LINES: usize = 24;

/// Every trial of `task`: (source index, sweep point index, task, trial).
fn trials_of<'a>(task: &str, sources: &[Source<'a>]) -> Vec<Trial<'a>> {
    let mut out = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        let records = s.race.tasks.iter().filter(|t| t.slot.task == task);
        for (pi, t) in records.enumerate() {
            out.extend(t.trials.iter().map(|tr| (si, pi, t, tr)));
        }
    }
    out
}

/// Every trial of `task` with a timeline.
fn timelines<'a>(task: &str, sources: &[Source<'a>]) -> Vec<Trial<'a>> {
    let mut trials = trials_of(task, sources);
    trials.retain(|t| !t.3.timeline.is_empty());
    trials
}

/// Where a second's point is drawn: the middle of the time it covers.
fn x_of(p: &SecondPoint) -> f64 {
    p.second as f64 - 1.0 + p.span.unwrap_or(1.0).min(1.0) / 2.0
}

fn seconds_axis(lines: &[Line]) -> XAxis {
    let x_max = lines
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.0))
        .fold(0.0, f64::max);
    XAxis::Seconds {
        min: 0.0,
        max: x_max.ceil().max(2.0),
        label: "second of the trial (warmup shaded)".into(),
    }
}

/// A line's name: the race (when compared), the sweep point and the trial.
fn name(sources: &[Source], si: usize, t: &TaskRecord, tr: &TrialRecord, what: &str) -> String {
    let race = if sources.len() > 1 {
        format!("{} ", sources[si].label)
    } else {
        String::new()
    };
    let point = if t.slot.sweep.is_empty() {
        String::new()
    } else {
        format!("{} ", short(t))
    };
    format!("{race}{point}trial {}{what}", tr.trial + 1)
}

/// Shades the first trial's warmup: the seconds before its measured window.
fn shade_warmup(chart: &mut Chart, trials: &[Trial]) {
    if let Some([start, _]) = trials.first().and_then(|t| t.3.measured_s) {
        if start > 0.05 {
            chart.shade(0.0, start, "warmup");
        }
    }
}

type Line = (String, &'static str, bool, Vec<(f64, f64)>);
type Trial<'a> = (usize, usize, &'a TaskRecord, &'a TrialRecord);

/// One line per trial of a rate each second (the contender's dashed).
fn per_trial_lines(
    sources: &[Source],
    trials: &[Trial],
    value: fn(&SecondPoint) -> f64,
) -> Vec<Line> {
    trials
        .iter()
        .take(MAX_LINES)
        .map(|(si, pi, t, tr)| {
            // A rate over a sliver of a second is mostly noise (as in the measured seconds).
            let whole_enough = |p: &&SecondPoint| p.span.is_none_or(|s| s >= 0.25);
            let points = tr
                .timeline
                .iter()
                .filter(whole_enough)
                .map(|p| (x_of(p), value(p)))
                .collect();
            (
                name(sources, *si, t, tr, ""),
                COLORS[(si * 4 + pi) % COLORS.len()],
                *si > 0,
                points,
            )
        })
        .filter(|l: &Line| !l.3.is_empty())
        .collect()
}

/// A chart over the seconds of the trials: their lines, the first trial's warmup shaded, and
/// a horizontal rule (a target) when given.
fn seconds_chart(
    (task, kind, title): (&str, &str, String),
    y_label: &str,
    trials: &[Trial],
    lines: &[Line],
    rule: Option<(f64, String)>,
) -> Plot {
    let y_max = lines
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.1))
        .chain(rule.as_ref().map(|r| r.0))
        .fold(0.0, f64::max);
    let mut chart = Chart::new(&title, seconds_axis(lines), y_max * 1.1, y_label);
    shade_warmup(&mut chart, trials);
    for (name, color, dashed, points) in lines {
        chart.line(name, color, *dashed, points);
    }
    if let Some((y, label)) = rule {
        chart.h_rule(y, &label, "#888888");
    }
    Plot {
        task: task.to_string(),
        file: file_name(kind, task),
        title,
        svg: chart.render(),
    }
}

/// Throughput each second of each trial, the warmup shaded and the target drawn.
pub(super) fn throughput_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let trials = timelines(task, sources);
    let unit = trials.first()?.2.slot.throughput_unit.as_str();
    let lines = per_trial_lines(sources, &trials, SecondPoint::rate);
    if lines.is_empty() {
        return None;
    }
    // A target in ops/s is drawn where the task counts operations.
    let target = trials[0]
        .2
        .slot
        .target_throughput
        .filter(|_| unit == "ops/s");
    let rule = target.map(|t| {
        (
            t.0,
            format!("target {}", crate::units::format_significant(t.0)),
        )
    });
    let title = format!("{task}: throughput each second");
    Some(seconds_chart(
        (task, "throughput-over-time", title),
        unit,
        &trials,
        &lines,
        rule,
    ))
}

/// Latency percentiles each second: p50, p90 and p99 of one trial; p50 and p99 of each when
/// several are drawn.
pub(super) fn latency_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let trials = timelines(task, sources);
    let one = trials.len() == 1;
    let mut lines = Vec::new();
    for (k, (si, _, t, tr)) in trials.iter().enumerate() {
        let quantiles: &[(&str, fn(&crate::metrics::LatencyPoint) -> f64)] = if one {
            &[("p50", |l| l.p50), ("p90", |l| l.p90), ("p99", |l| l.p99)]
        } else {
            &[("p50", |l| l.p50), ("p99", |l| l.p99)]
        };
        for (qi, (q, pick)) in quantiles.iter().enumerate() {
            let points: Vec<(f64, f64)> = tr
                .timeline
                .iter()
                .filter_map(|p| Some((x_of(p), pick(p.latency_ms.as_ref()?))))
                .collect();
            // One trial: a colour per percentile. Several: a colour per trial, its p50 dashed.
            let (color, dashed) = match one {
                true => (COLORS[qi % COLORS.len()], false),
                false => (COLORS[k % COLORS.len()], qi == 0 || *si > 0),
            };
            lines.push((
                name(sources, *si, t, tr, &format!(" {q}")),
                color,
                dashed,
                points,
            ));
        }
    }
    lines.retain(|l| !l.3.is_empty());
    lines.truncate(MAX_LINES);
    if lines.is_empty() {
        return None;
    }
    let title = format!("{task}: latency percentiles each second (from the intended start)");
    Some(seconds_chart(
        (task, "latency-over-time", title),
        "ms",
        &trials,
        &lines,
        None,
    ))
}

/// Errors each second, where a trial had any.
pub(super) fn errors_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let trials: Vec<_> = timelines(task, sources)
        .into_iter()
        .filter(|t| t.3.timeline.iter().any(|p| p.errors > 0))
        .collect();
    if trials.is_empty() {
        return None;
    }
    let lines = per_trial_lines(sources, &trials, |p| {
        p.errors as f64 / p.span.unwrap_or(1.0).max(1e-3)
    });
    if lines.is_empty() {
        return None;
    }
    let title = format!("{task}: errors each second");
    Some(seconds_chart(
        (task, "errors-over-time", title),
        "errors per second",
        &trials,
        &lines,
        None,
    ))
}

/// Throughput over time, every trial.
pub(super) fn measured_seconds_chart(
    task: &str,
    records: &[(usize, &TaskRecord)],
    sources: &[Source],
) -> Option<Plot> {
    let mut series = Vec::new();
    for (si, pi, t, tr) in trials_of(task, sources) {
        if tr.throughput_per_second.len() >= 2 {
            let values = tr.throughput_per_second.iter().map(|n| *n as f64);
            series.push(per_second(sources, (si, pi), t, tr, values, 1.0));
        }
    }
    if series.is_empty() {
        return None;
    }
    let x_max = series.iter().map(|s| s.3.len() as f64).fold(1.0, f64::max);
    let y_max = series
        .iter()
        .flat_map(|s| s.3.iter().map(|p| p.1))
        .fold(0.0, f64::max);
    let title = format!("{task}: throughput over time, each trial");
    let unit = records[0]
        .1
        .slot
        .throughput_unit
        .as_str()
        .trim_end_matches("/s")
        .to_string()
        + " per second";
    let mut chart = Chart::new(
        &title,
        XAxis::Seconds {
            min: 1.0,
            max: x_max.max(2.0),
            label: "second of the measured window".into(),
        },
        y_max * 1.1,
        &unit,
    );
    for (name, color, dashed, pts) in series.iter().take(24) {
        chart.line(name, color, *dashed, pts);
    }
    Some(Plot {
        task: task.to_string(),
        file: file_name("timeline", task),
        title,
        svg: chart.render(),
    })
}

/// One line of a chart over the seconds of a trial: its name (the race's label when several are
/// compared, the task and the trial), colour, dash (races after the first) and points.
fn per_second(
    sources: &[Source],
    (source, task_index): (usize, usize),
    t: &TaskRecord,
    tr: &TrialRecord,
    values: impl Iterator<Item = f64>,
    first_x: f64,
) -> (String, &'static str, bool, Vec<(f64, f64)>) {
    (
        name(sources, source, t, tr, ""),
        COLORS[(source * 4 + task_index) % COLORS.len()],
        source > 0,
        values
            .enumerate()
            .map(|(sec, v)| (sec as f64 + first_x, v))
            .collect(),
    )
}

/// The runner's own CPU each second of each trial, beside the throughput chart, with the cores
/// it may use: a runner at its ceiling measures itself.
pub(super) fn runner_cpu_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let mut series = Vec::new();
    let mut cores = 0u32;
    for (si, pi, t, tr) in trials_of(task, sources) {
        let Some(d) = tr.driver.as_ref().filter(|d| d.cpu_per_second.len() >= 2) else {
            continue;
        };
        cores = cores.max(d.cores_available);
        let values = d.cpu_per_second.iter().copied();
        series.push(per_second(sources, (si, pi), t, tr, values, 0.5));
    }
    if series.is_empty() {
        return None;
    }
    let x_max = series.iter().map(|s| s.3.len() as f64).fold(2.0, f64::max);
    let title = format!("{task}: the runner's CPU over time, each trial");
    let mut chart = Chart::new(
        &title,
        XAxis::Seconds {
            min: 0.0,
            max: x_max,
            label: "second of the trial (warmup included)".into(),
        },
        f64::from(cores.max(1)) * 1.1,
        "cores",
    );
    for (name, color, dashed, pts) in series.iter().take(24) {
        chart.line(name, color, *dashed, pts);
    }
    chart.line(
        &format!("{cores} cores available"),
        "#888888",
        true,
        &[(0.0, f64::from(cores)), (x_max, f64::from(cores))],
    );
    Some(Plot {
        task: task.to_string(),
        file: file_name("runner-cpu", task),
        title,
        svg: chart.render(),
    })
}
