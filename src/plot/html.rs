//! `report.html`: a summary first (what ran, headline numbers, warnings, deviations), each
//! task's charts, then the detail tables; one self-contained page (inline SVG and CSS, no
//! scripts, nothing fetched), light or dark as the viewer prefers, printable. The live
//! dashboard ends on this page.

use super::svg::esc;
use super::Plot;
use crate::compare::Comparison;
use crate::report::table::{Align, Cell, Table};
use crate::report::Summary;
use std::fmt::Write;

/// The page's styles: light and dark, and a printable layout.
const STYLE: &str = ":root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--panel:#f6f8fa;--good:#1a7f37;--bad:#cf222e}\
@media (prefers-color-scheme:dark){:root{--bg:#0d1117;--fg:#e6edf3;--muted:#9198a1;--line:#3d444d;--panel:#151b23;--good:#3fb950;--bad:#f85149}}\
body{font-family:system-ui,sans-serif;margin:24px auto;padding:0 24px;color:var(--fg);background:var(--bg);max-width:1280px}\
h1{font-size:24px;margin:0 0 4px}h2{border-bottom:1px solid var(--line);padding-bottom:4px;margin-top:32px}h3{margin:24px 0 8px}\
.meta,.muted{color:var(--muted)}\
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(240px,1fr));gap:12px}\
.card{background:var(--panel);border:1px solid var(--line);border-radius:6px;padding:10px 14px}\
.card h3{margin:0 0 6px;font-size:15px}.card .big{font-size:22px;font-weight:600;font-variant-numeric:tabular-nums}\
.card p{margin:2px 0;font-size:13px}\
ul.notes{padding-left:20px}ul.notes li{margin:4px 0}\
table{border-collapse:collapse;margin:8px 0 24px}th,td{border:1px solid var(--line);padding:4px 8px}\
th{background:var(--panel)}td.num{text-align:right;font-variant-numeric:tabular-nums}\
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(560px,1fr));gap:12px}\
figure{margin:0}figure svg{width:100%;height:auto}figcaption{color:var(--muted);font-size:13px}\
.better{color:var(--good);font-weight:bold}.worse{color:var(--bad);font-weight:bold}.neutral{color:var(--muted)}\
@media print{body{max-width:none;margin:0}figure,.card,table{break-inside:avoid}h2{break-after:avoid}.charts{display:block}}";

pub fn report_html(summary: &Summary, comparison: Option<&Comparison>, plots: &[Plot]) -> String {
    let r = summary.race;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>Race {id}</title><link rel=\"icon\" href=\"data:,\">\n<style>{STYLE}</style></head><body>\n",
        id = esc(&r.race_id)
    );
    let _ = writeln!(
        out,
        "<h1>Race {}: {}</h1>",
        esc(&r.race_id),
        esc(&r.backend.system())
    );
    let _ = writeln!(
        out,
        "<p class=\"meta\">track <b>{}</b> · challenge <b>{}</b> · backend <b>{}</b> · status <b>{:?}</b>{} · started {} · host {} ({} cpus)</p>",
        esc(&r.track), esc(&r.challenge), esc(&r.backend.kind), r.status, if r.test_mode { " · test mode" } else { "" },
        esc(&r.started_at.to_string()), esc(&r.host.hostname), r.host.cpus
    );
    summary_section(&mut out, summary, comparison);
    if let Some(c) = comparison {
        comparison_section(&mut out, c);
    }
    task_sections(&mut out, plots);
    out.push_str("<h2>Details</h2>\n");
    for table in crate::report::table::summary_tables(summary) {
        table.html(&mut out);
    }
    out.push_str("</body></html>\n");
    out
}

/// What ran and its headline numbers first: a card per task, then every note the race has.
fn summary_section(out: &mut String, summary: &Summary, comparison: Option<&Comparison>) {
    use crate::units::format_significant as sig;
    out.push_str("<h2>Summary</h2>\n<div class=\"cards\">\n");
    for t in &summary.tasks {
        let slot = &t.record.slot;
        let sweep = if t.sweep_label == "-" {
            String::new()
        } else {
            format!(" <span class=\"muted\">[{}]</span>", esc(&t.sweep_label))
        };
        let headline = match (t.duration_ms, t.throughput) {
            (Some(d), _) => format!(
                "{} ms <small class=\"muted\">one operation</small>",
                sig(d.median)
            ),
            (None, Some(th)) => format!("{} {}", sig(th.median), slot.throughput_unit),
            (None, None) => "not measured".into(),
        };
        let latency = match (t.latency_ms.at(50.0), t.latency_ms.at(99.0)) {
            (Some(a), Some(b)) => format!("latency p50 {} · p99 {} ms", sig(a), sig(b)),
            (Some(a), None) => format!("latency p50 {} ms", sig(a)),
            _ => String::new(),
        };
        let errors = match t.errors {
            0 => "no errors".to_string(),
            n => format!(
                "<span class=\"worse\">{n} errors ({}%)</span>",
                sig(t.error_rate * 100.0)
            ),
        };
        let _ = writeln!(
            out,
            "<div class=\"card\"><h3>{}{sweep}</h3><div class=\"big\">{headline}</div><p>{latency}</p><p>{errors} · {} of {} trials</p>{}</div>",
            esc(&slot.task),
            t.completed_trials,
            slot.planned_trials,
            versus(comparison, &slot.task, &t.sweep_label),
        );
    }
    out.push_str("</div>\n");
    let notes = crate::report::header::header_lines(summary);
    if !notes.is_empty() {
        out.push_str("<ul class=\"notes\">\n");
        for line in notes {
            let _ = writeln!(out, "<li>{}</li>", esc(&line));
        }
        out.push_str("</ul>\n");
    }
    if summary.tasks.iter().any(|t| !t.thresholds.is_empty()) {
        let (class, text) = if summary.thresholds_pass() {
            ("better", "every threshold passed")
        } else {
            ("worse", "a threshold failed (see Thresholds below)")
        };
        let _ = writeln!(out, "<p class=\"{class}\">{text}</p>");
    }
}

/// A card's line against the other race: the headline metric's change and verdict.
fn versus(comparison: Option<&Comparison>, task: &str, sweep: &str) -> String {
    let Some(m) = comparison
        .and_then(|c| c.tasks.iter().find(|t| t.task == task && t.sweep == sweep))
        .and_then(|t| t.metrics.iter().find(|m| m.metric == "throughput"))
    else {
        return String::new();
    };
    let (label, good) = m.verdict.plain();
    let class = match good {
        Some(true) => "better",
        Some(false) => "worse",
        None => "neutral",
    };
    let change = m
        .relative
        .map_or_else(|| "-".into(), |r| format!("{:+.1}%", r * 100.0));
    format!(
        "<p>vs contender: {} {change} <span class=\"{class}\">{label}</span></p>",
        esc(m.metric)
    )
}

/// Each task's charts under its name, in the order the race ran them.
fn task_sections(out: &mut String, plots: &[Plot]) {
    if plots.is_empty() {
        return;
    }
    out.push_str("<h2>Tasks</h2>\n");
    let mut current: Option<&str> = None;
    for p in plots {
        if current != Some(p.task.as_str()) {
            if current.is_some() {
                out.push_str("</div>\n");
            }
            let _ = writeln!(out, "<h3>{}</h3>\n<div class=\"charts\">", esc(&p.task));
            current = Some(&p.task);
        }
        // The chart's title is in its SVG; the figure is labelled by it for screen readers.
        let _ = writeln!(
            out,
            "<figure aria-label=\"{}\">{}</figure>",
            esc(&p.title),
            p.svg
        );
    }
    out.push_str("</div>\n");
}

/// The comparison with another race: a table of every metric's verdict, coloured.
fn comparison_section(out: &mut String, c: &Comparison) {
    let mut table = Table {
        title: format!("Compared with {}", c.contender),
        columns: [
            "task",
            "sweep",
            "metric",
            "baseline",
            "contender",
            "diff",
            "verdict",
        ]
        .iter()
        .enumerate()
        .map(|(i, c)| {
            (
                c.to_string(),
                if (3..6).contains(&i) {
                    Align::Right
                } else {
                    Align::Left
                },
            )
        })
        .collect(),
        rows: Vec::new(),
        note: None,
    };
    table.rows = c
        .tasks
        .iter()
        .flat_map(|t| {
            t.metrics.iter().map(move |m| {
                let (label, good) = m.verdict.plain();
                let class = match good {
                    Some(true) => "better",
                    Some(false) => "worse",
                    None => "neutral",
                };
                let cell = |text: String| Cell::from(text);
                vec![
                    cell(t.task.clone()),
                    cell(t.sweep.clone()),
                    Cell {
                        text: m.metric.to_string(),
                        class: Some("name"),
                    },
                    cell(crate::units::format_significant(m.baseline)),
                    cell(crate::units::format_significant(m.contender)),
                    cell(
                        m.relative
                            .map(|r| format!("{:+.1}%", r * 100.0))
                            .unwrap_or_else(|| "-".into()),
                    ),
                    Cell {
                        text: label.to_string(),
                        class: Some(class),
                    },
                ]
            })
        })
        .collect();
    let _ = writeln!(out, "<h2>{}</h2>", esc(&table.title));
    let _ = writeln!(out, "<p>Baseline {} (this race), contender {}: medians across trials; higher throughput and lower times are better. In the charts over time, the contender's lines are dashed.</p>", esc(&c.baseline), esc(&c.contender));
    for w in &c.warnings {
        let _ = writeln!(out, "<p>⚠ {}</p>", esc(w));
    }
    table.html_table(out);
}
