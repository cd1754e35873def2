//! `report.html`: the summary tables and the charts on one self-contained page (inline SVG,
//! inline CSS, no scripts, nothing fetched).

use super::svg::esc;
use super::Plot;
use crate::compare::Comparison;
use crate::report::table::{Align, Cell, Table};
use crate::report::Summary;
use std::fmt::Write;

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
        esc(&r.started_at.to_string()), esc(&r.host.hostname), r.host.cpus
    );
    for line in crate::report::header::header_lines(summary) {
        let _ = writeln!(out, "<p class=\"note\">{}</p>", esc(&line));
    }
    for table in crate::report::table::summary_tables(summary) {
        table.html(&mut out);
    }
    if let Some(c) = comparison {
        comparison_section(&mut out, c);
    }
    out.push_str("<h2>Charts</h2>\n");
    for p in plots {
        let _ = writeln!(
            out,
            "<figure>{}<figcaption>{}</figcaption></figure>",
            p.svg,
            esc(&p.title)
        );
    }
    out.push_str("</body></html>\n");
    out
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
                    cell(format!("{:.3}", m.baseline)),
                    cell(format!("{:.3}", m.contender)),
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
    let _ = writeln!(out, "<p>Baseline {} (this race), contender {}: medians across trials; higher throughput and lower times are better. In the charts, the baseline is blue and the contender red.</p>", esc(&c.baseline), esc(&c.contender));
    for w in &c.warnings {
        let _ = writeln!(out, "<p>⚠ {}</p>", esc(w));
    }
    table.html_table(out);
}
