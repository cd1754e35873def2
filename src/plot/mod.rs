//! Charts of a stored race as SVG, and one self-contained `report.html` that shows the summary
//! tables and the charts together.

mod capacity;
mod html;
mod recall;
mod svg;
mod timeline;
mod trend;

pub use html::report_html;
pub use svg::esc;
pub use trend::trend_charts;

use crate::results::{RaceHistograms, RaceRecord, TaskRecord};
use hdrhistogram::Histogram;
use svg::{Chart, XAxis, COLORS};

/// One chart: its file name in the output directory, and its SVG.
pub struct Plot {
    /// The task it draws (report.html groups charts by task); empty for a race-wide chart.
    pub task: String,
    pub file: String,
    pub title: String,
    pub svg: String,
}

/// A race with its histograms, as the charts read it.
#[derive(Clone, Copy)]
pub struct Source<'a> {
    pub label: &'a str,
    pub race: &'a RaceRecord,
    pub histograms: &'a RaceHistograms,
}

fn file_name(kind: &str, task: &str) -> String {
    let safe: String = task
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{kind}-{safe}.svg")
}

/// A sweep point as the legend shows it: just the values (the axis or title names the keys).
fn short(t: &TaskRecord) -> String {
    if t.slot.sweep.is_empty() {
        return "all".into();
    }
    t.slot
        .sweep
        .values()
        .map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// Task names in order of first appearance, with their records.
fn groups(race: &RaceRecord) -> Vec<(&str, Vec<(usize, &TaskRecord)>)> {
    let mut out: Vec<(&str, Vec<(usize, &TaskRecord)>)> = Vec::new();
    for (i, t) in race
        .tasks
        .iter()
        .enumerate()
        .filter(|(_, t)| t.slot.reported)
    {
        match out.iter_mut().find(|(name, _)| *name == t.slot.task) {
            Some((_, v)) => v.push((i, t)),
            None => out.push((&t.slot.task, vec![(i, t)])),
        }
    }
    out
}

/// (quantile, milliseconds) along the distribution, as HdrHistogram's percentile plots show it.
fn distribution(h: &Histogram<u64>, max_nines: f64) -> Vec<(f64, f64)> {
    let limit = 1.0 - 10f64.powf(-max_nines);
    let mut points: Vec<(f64, f64)> = h
        .iter_quantiles(5)
        .map(|v| {
            (
                v.quantile_iterated_to(),
                h.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
            )
        })
        .filter(|(q, _)| *q <= limit)
        .collect();
    points.dedup_by(|a, b| a.0 == b.0);
    points
}

/// Writes the charts of `base` (beside `other`, compared, when given) and report.html into
/// `dir`; returns how many charts were written.
pub fn write_report(
    dir: &std::path::Path,
    base: Source,
    other: Option<Source>,
) -> Result<usize, crate::results::StoreError> {
    let (html, plots) = report_page(base, other);
    for p in &plots {
        crate::results::write_atomic(&dir.join(&p.file), p.svg.as_bytes())?;
    }
    crate::results::write_atomic(&dir.join("report.html"), html.as_bytes())?;
    Ok(plots.len())
}

/// The report page of `base` (compared with `other` when given) and the charts in it: what
/// `runner plot` writes and the dashboard shows when a race ends.
pub fn report_page(base: Source, other: Option<Source>) -> (String, Vec<Plot>) {
    let plots = charts(base, other);
    let comparison = other.map(|o| crate::compare::compare(base.race, o.race, Default::default()));
    let summary = crate::report::Summary::new(base.race, base.histograms);
    (report_html(&summary, comparison.as_ref(), &plots), plots)
}

pub fn charts(base: Source, other: Option<Source>) -> Vec<Plot> {
    let mut plots = Vec::new();
    let sources: Vec<Source> = std::iter::once(base).chain(other).collect();
    for (task, records) in groups(base.race) {
        let measured = records
            .iter()
            .any(|(_, r)| r.trials.iter().any(|t| t.operations > 1));
        if !measured {
            continue;
        }
        plots.extend(
            timeline::throughput_chart(task, &sources)
                .or_else(|| timeline::measured_seconds_chart(task, &records, &sources)),
        );
        plots.extend(timeline::latency_chart(task, &sources));
        plots.extend(percentile_chart(task, &records, &sources));
        plots.extend(timeline::errors_chart(task, &sources));
        plots.extend(throughput_chart(task, &records, &sources));
        plots.extend(timeline::runner_cpu_chart(task, &sources));
        plots.extend(capacity::capacity_chart(task, &sources));
        plots.extend(capacity::ramp_chart(task, &sources));
        plots.extend(recall::recall_chart(task, &sources));
    }
    plots
}

/// The keys a task sweeps, comma-separated (empty when it does not sweep).
fn swept_keys(records: &[(usize, &TaskRecord)]) -> String {
    let keys: Vec<&str> = records[0].1.slot.sweep.keys().map(String::as_str).collect();
    keys.join(", ")
}

/// Throughput by sweep point, with the spread of the trials (when there is more than one
/// point or trial).
fn throughput_chart(
    task: &str,
    records: &[(usize, &TaskRecord)],
    sources: &[Source],
) -> Option<Plot> {
    if records.len() < 2 && records.iter().all(|(_, r)| r.trials.len() < 2) {
        return None;
    }
    let labels: Vec<String> = records.iter().map(|(_, r)| r.sweep_label()).collect();
    let names: Vec<String> = records.iter().map(|(_, r)| short(r)).collect();
    let unit = records[0].1.slot.throughput_unit.as_str();
    let mut y_max: f64 = 0.0;
    let mut series = Vec::new();
    for s in sources {
        let per_point: Vec<Vec<f64>> = labels
            .iter()
            .map(|n| {
                s.race
                    .tasks
                    .iter()
                    .find(|t| t.slot.task == task && t.sweep_label() == *n)
                    .map(|t| t.complete_trials().map(|tr| tr.throughput).collect())
                    .unwrap_or_default()
            })
            .collect();
        y_max = per_point.iter().flatten().fold(y_max, |m, v| m.max(*v));
        series.push(per_point);
    }
    let sweep_name = swept_keys(records);
    let x = XAxis::Categories {
        names: names.clone(),
        label: if sweep_name.is_empty() {
            "sweep point".into()
        } else {
            sweep_name
        },
    };
    let title = format!("{task}: throughput by sweep point (median, min–max of trials)");
    let mut chart = Chart::new(&title, x, y_max * 1.1, unit);
    for (si, (s, per_point)) in sources.iter().zip(&series).enumerate() {
        let color = COLORS[si % COLORS.len()];
        let offset = if sources.len() > 1 {
            (si as f64 - 0.5) * 24.0
        } else {
            0.0
        };
        for (i, values) in per_point.iter().enumerate() {
            if !values.is_empty() {
                chart.spread(
                    i as f64,
                    offset,
                    values,
                    crate::report::ThroughputStats::of(values).median,
                    color,
                );
            }
        }
        chart.legend_entry(s.label, color);
    }
    Some(Plot {
        task: task.to_string(),
        file: file_name("throughput", task),
        title,
        svg: chart.render(),
    })
}

/// Latency and service-time distributions per sweep point, by percentile.
fn percentile_chart(
    task: &str,
    records: &[(usize, &TaskRecord)],
    sources: &[Source],
) -> Option<Plot> {
    let max_nines = 5.0;
    let mut lines = Vec::new();
    for (si, s) in sources.iter().enumerate() {
        for (pi, (i, t)) in s
            .race
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.slot.task == task)
            .enumerate()
        {
            let prefix = if sources.len() > 1 {
                format!("{} ", s.label)
            } else {
                String::new()
            };
            let color_index = si * records.len() + pi;
            let Some((service, latency)) = s.histograms.merged(i) else {
                continue;
            };
            for (h, latency) in [(latency, true), (service, false)] {
                if h.len() > 1 {
                    let kind = if latency { "latency" } else { "service" };
                    lines.push((
                        format!("{prefix}{} {kind}", short(t)),
                        COLORS[color_index % COLORS.len()],
                        !latency,
                        distribution(&h, max_nines),
                    ));
                }
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let values = || lines.iter().flat_map(|l| l.3.iter().map(|p| p.1));
    let (y_min, y_max) = (
        values().filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min),
        values().fold(0.0, f64::max),
    );
    let by = swept_keys(records);
    let by = if by.is_empty() {
        String::new()
    } else {
        format!(", by {by}")
    };
    let title = format!("{task}: latency (solid) and service time (dashed) by percentile{by}");
    let mut chart = Chart::new_log_y(
        &title,
        XAxis::Percentile { max_nines },
        y_min,
        y_max,
        "ms (log scale)",
    );
    for (name, color, dashed, points) in &lines {
        chart.line(name, color, *dashed, points);
    }
    Some(Plot {
        task: task.to_string(),
        file: file_name("percentiles", task),
        title,
        svg: chart.render(),
    })
}
