//! `report.html`: the summary tables and the charts on one self-contained page (inline SVG,
//! inline CSS, no scripts, nothing fetched).

use super::Plot;
use crate::compare::Comparison;
use crate::metrics::PERCENTILES;
use crate::report::Summary;
use crate::units::format_number;
use super::svg::esc;
use std::fmt::Write;

/// A cell is text, optionally with a CSS class.
fn table(out: &mut String, head: &[&str], rows: Vec<Vec<String>>) {
    table_with_classes(out, head, rows.into_iter().map(|r| r.into_iter().map(|c| (c, None)).collect()).collect());
}

fn table_with_classes(out: &mut String, head: &[&str], rows: Vec<Vec<(String, Option<&str>)>>) {
    out.push_str("<table><thead><tr>");
    for h in head {
        let _ = write!(out, "<th>{}</th>", esc(h));
    }
    out.push_str("</tr></thead><tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for (i, (cell, class)) in row.iter().enumerate() {
            let class = match class {
                Some(c) => format!(" class=\"{c}\""),
                None if i >= 2 => " class=\"num\"".to_string(),
                None => String::new(),
            };
            let _ = write!(out, "<td{class}>{}</td>", esc(cell));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table>\n");
}

pub fn report_html(summary: &Summary, comparison: Option<&Comparison>, plots: &[Plot]) -> String {
    let r = summary.race;
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Race {id}</title>\n<style>\
body{{font-family:sans-serif;margin:24px;color:#222;max-width:1200px}}\
table{{border-collapse:collapse;margin:8px 0 24px}}th,td{{border:1px solid #ccc;padding:4px 8px}}\
th{{background:#f3f3f3}}td.num{{text-align:right;font-variant-numeric:tabular-nums}}\
figure{{margin:0 0 24px}}figcaption{{color:#555}}.better{{color:#1a7f37;font-weight:bold}}.worse{{color:#c62828;font-weight:bold}}.neutral{{color:#666}}</style></head><body>\n",
        id = esc(&r.race_id)
    );
    let _ = writeln!(out, "<h1>Race {}</h1>", esc(&r.race_id));
    let _ = writeln!(
        out,
        "<p>track <b>{}</b> · challenge <b>{}</b> · backend <b>{}</b> · status <b>{:?}</b>{} · started {} · host {} ({} cpus)</p>",
        esc(&r.track), esc(&r.challenge), esc(&r.backend.kind), r.status, if r.test_mode { " · test mode" } else { "" },
        esc(&r.started_at), esc(&r.host.hostname), r.host.cpus
    );
    out.push_str("<h2>Throughput</h2>\n");
    let rows = summary.tasks.iter().map(|t| {
        vec![
            t.record.slot.task.clone(), t.sweep_label.clone(), t.record.slot.target_throughput.map(|t| format_number(t.0)).unwrap_or_else(|| "-".into()),
            format_number(t.throughput.min), format_number(t.throughput.median), format_number(t.throughput.max),
            t.record.slot.throughput_unit.to_string(), format!("{}/{}", t.completed_trials, t.record.slot.planned_trials),
        ]
    }).collect();
    table(&mut out, &["task", "sweep", "target", "min", "median", "max", "unit", "trials"], rows);
    for (title, latency) in [("Service time (ms)", false), ("Latency from the intended start (ms)", true)] {
        let _ = writeln!(out, "<h2>{title}</h2>");
        let mut head = vec!["task", "sweep", "mean"];
        head.extend(PERCENTILES.iter().map(|(l, _)| *l));
        let rows = summary.tasks.iter().map(|t| {
            let p = if latency { &t.latency_ms } else { &t.service_time_ms };
            let mut row = vec![t.record.slot.task.clone(), t.sweep_label.clone(), format!("{:.3}", p.mean)];
            row.extend(p.values().iter().map(|v| format!("{v:.3}")));
            row
        }).collect();
        table(&mut out, &head, rows);
    }
    out.push_str("<h2>Outcomes</h2>\n");
    let rows = summary.tasks.iter().map(|t| {
        vec![t.record.slot.task.clone(), t.sweep_label.clone(), t.operations.to_string(), t.errors.to_string(), format!("{:.2}%", t.error_rate * 100.0)]
    }).collect();
    table(&mut out, &["task", "sweep", "operations", "errors", "error rate"], rows);
    if let Some(c) = comparison {
        let _ = writeln!(out, "<h2>Compared with {}</h2>", esc(&c.contender));
        let _ = writeln!(out, "<p>Baseline {} (this race), contender {}: medians across trials; higher throughput and lower times are better. In the charts, the baseline is blue and the contender red.</p>", esc(&c.baseline), esc(&c.contender));
        for w in &c.warnings {
            let _ = writeln!(out, "<p>⚠ {}</p>", esc(w));
        }
        let rows = c.tasks.iter().flat_map(|t| t.metrics.iter().map(move |m| {
            let (label, good) = m.verdict.plain();
            let class = match good {
                Some(true) => Some("better"),
                Some(false) => Some("worse"),
                None => Some("neutral"),
            };
            vec![
                (t.task.clone(), None), (t.sweep.clone(), None), (m.metric.to_string(), Some("name")), (format!("{:.3}", m.baseline), None), (format!("{:.3}", m.contender), None),
                (m.relative.map(|r| format!("{:+.1}%", r * 100.0)).unwrap_or_else(|| "-".into()), None), (label.to_string(), class),
            ]
        })).collect();
        table_with_classes(&mut out, &["task", "sweep", "metric", "baseline", "contender", "diff", "verdict"], rows);
    }
    out.push_str("<h2>Charts</h2>\n");
    for p in plots {
        let _ = writeln!(out, "<figure>{}<figcaption>{}</figcaption></figure>", p.svg, esc(&p.title));
    }
    out.push_str("</body></html>\n");
    out
}
