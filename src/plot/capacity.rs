//! The charts of a capacity search and of a ramp: latency percentiles against each probe's
//! rate, with the SLO's limits and the capacity marked; and a ramp's intended against
//! achieved rate, second by second.

use super::svg::{Chart, XAxis, COLORS};
use super::{file_name, Plot, Source};
use crate::capacity::{CapacityRecord, ProbeVerdict};
use crate::thresholds::{Bound, Metric, Stat, Threshold};

/// The percentiles a curve draws.
const CURVE: [(&str, f64); 4] = [("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9)];

/// Latency by probe rate for every search of `task` in `sources` (each race's first search
/// per sweep point), log scale.
pub(super) fn capacity_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let searches = searches_of(task, sources);
    if searches.is_empty() {
        return None;
    }
    let x_max = searches
        .iter()
        .flat_map(|(_, _, c)| judged(c).into_iter().filter_map(|p| p.target))
        .fold(1.0, f64::max);
    let latencies = || {
        searches.iter().flat_map(|(_, _, c)| {
            judged(c)
                .into_iter()
                .flat_map(|p| CURVE.iter().filter_map(move |(_, q)| p.latency_ms.at(*q)))
        })
    };
    let y_min = latencies()
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let limits = limits(&searches[0].2.slo);
    let y_max = latencies()
        .chain(limits.iter().map(|l| l.1))
        .fold(0.0, f64::max);
    if !y_min.is_finite() {
        return None;
    }
    let title = format!("{task}: latency by probe rate, SLO and capacity");
    let mut chart = Chart::new_log_y(
        &title,
        XAxis::Linear {
            min: 0.0,
            max: x_max * 1.05,
            label: "target rate of the probe (ops/s, offered load)".into(),
        },
        y_min.min(limits.iter().map(|l| l.1).fold(f64::INFINITY, f64::min)),
        y_max,
        "latency from the intended start (ms, log)",
    );
    for (label, limit) in &limits {
        chart.h_rule(*limit, &format!("SLO {label}"), "#d62728");
    }
    for (i, (si, name, c)) in searches.iter().enumerate() {
        let probes = judged(c);
        for (k, (label, q)) in CURVE.iter().enumerate() {
            let points: Vec<(f64, f64)> = probes
                .iter()
                .filter_map(|p| Some((p.target?, p.latency_ms.at(*q)?)))
                .collect();
            let color = COLORS[(k + i * CURVE.len()) % COLORS.len()];
            chart.line(&format!("{name} {label}"), color, *si > 0, &points);
        }
        for p in &probes {
            let (Some(t), Some(v)) = (p.target, p.latency_ms.at(99.0)) else {
                continue;
            };
            let held = p.verdict == Some(ProbeVerdict::Held);
            let tip = format!(
                "{} ops/s offered, {} achieved: p99 {} ms, {}",
                crate::units::format_number(t),
                crate::units::format_number(p.achieved),
                crate::units::ms(v),
                if held { "held" } else { "failed" }
            );
            chart.dot(t, v, 4.0, if held { "#2ca02c" } else { "#d62728" }, &tip);
        }
        if let Some(cap) = c.capacity {
            chart.v_rule(
                cap,
                &format!("capacity {}", crate::units::format_number(cap)),
                "#2ca02c",
            );
        }
    }
    Some(Plot {
        task: task.to_string(),
        file: file_name("capacity", task),
        title,
        svg: chart.render(),
    })
}

/// Every search of `task` in `sources`: its source's index, its legend name, its record.
fn searches_of<'a>(task: &str, sources: &[Source<'a>]) -> Vec<(usize, String, &'a CapacityRecord)> {
    sources
        .iter()
        .enumerate()
        .flat_map(|(si, s)| {
            s.race
                .tasks
                .iter()
                .filter(move |t| t.slot.task == task)
                .flat_map(move |t| {
                    t.trials.iter().filter_map(move |tr| {
                        let c = tr.capacity.as_ref()?;
                        let mut name = format!("trial {}", tr.trial + 1);
                        if !t.slot.sweep.is_empty() {
                            name = format!("{} {name}", t.sweep_label());
                        }
                        if sources.len() > 1 {
                            name = format!("{} {name}", s.label);
                        }
                        Some((si, name, c))
                    })
                })
        })
        .collect()
}

/// A search's judged probes (not the calibration), by rate.
fn judged(c: &CapacityRecord) -> Vec<&crate::capacity::ProbeRecord> {
    let mut p: Vec<_> = c
        .probes
        .iter()
        .filter(|p| p.target.is_some() && p.operations > 0)
        .collect();
    p.sort_by(|a, b| a.target.unwrap_or(0.0).total_cmp(&b.target.unwrap_or(0.0)));
    p
}

/// The SLO's latency and service-time percentile limits, in ms, as (criterion, limit).
fn limits(slo: &[String]) -> Vec<(String, f64)> {
    slo.iter()
        .filter_map(|text| {
            let t: Threshold = text.parse().ok()?;
            match (t.metric, t.bound) {
                (
                    Metric::Latency(Stat::Percentile(_)) | Metric::Latency(Stat::Mean),
                    Bound::Millis(v),
                ) => Some((text.clone(), v)),
                _ => None,
            }
        })
        .collect()
}

/// A line of a chart: its name, colour, dash and points.
type Line = (String, &'static str, bool, Vec<(f64, f64)>);

/// A ramp's intended and achieved rate, each second of each trial.
pub(super) fn ramp_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let mut lines: Vec<Line> = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for t in s.race.tasks.iter().filter(|t| t.slot.task == task) {
            for tr in &t.trials {
                let Some(seconds) = &tr.rate_by_second else {
                    continue;
                };
                let prefix = if sources.len() > 1 {
                    format!("{} ", s.label)
                } else {
                    String::new()
                };
                let intended = seconds
                    .intended
                    .iter()
                    .enumerate()
                    .map(|(k, v)| (k as f64 + 0.5, *v))
                    .collect();
                let achieved = seconds
                    .achieved
                    .iter()
                    .enumerate()
                    .filter_map(|(k, v)| Some((k as f64 + 0.5, (*v)? as f64)))
                    .collect();
                let n = lines.len() / 2;
                lines.push((
                    format!("{prefix}trial {} intended", tr.trial + 1),
                    COLORS[(2 * n) % COLORS.len()],
                    true,
                    intended,
                ));
                lines.push((
                    format!("{prefix}trial {} achieved", tr.trial + 1),
                    COLORS[(2 * n + 1) % COLORS.len()],
                    si > 0,
                    achieved,
                ));
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let x_max = lines
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let y_max = lines
        .iter()
        .flat_map(|l| l.3.iter().map(|p| p.1))
        .fold(1.0, f64::max);
    let title = format!("{task}: ramp, intended and achieved rate each second");
    let mut chart = Chart::new(
        &title,
        XAxis::Linear {
            min: 0.0,
            max: x_max + 0.5,
            label: "second of the trial".into(),
        },
        y_max * 1.1,
        "per second",
    );
    for (name, color, dashed, pts) in lines.iter().take(16) {
        chart.line(name, color, *dashed, pts);
    }
    Some(Plot {
        task: task.to_string(),
        file: file_name("ramp", task),
        title,
        svg: chart.render(),
    })
}
