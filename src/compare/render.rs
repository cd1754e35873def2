//! A comparison as markdown, csv or json: the report formats render it through their one trait.

use super::{Comparison, Verdict};
use crate::report::{Csv, Json, Markdown, Render};
use crate::units::format_number;
use std::fmt::Write;

impl Render<Comparison> for Markdown {
    fn render(&self, c: &Comparison) -> String {
        markdown(c)
    }
}

impl Render<Comparison> for Csv {
    fn render(&self, c: &Comparison) -> String {
        csv(c)
    }
}

impl Render<Comparison> for Json {
    fn render(&self, c: &Comparison) -> String {
        serde_json::to_string_pretty(c).unwrap_or_default()
    }
}

pub(super) fn value(v: f64, unit: &str) -> String {
    match unit {
        "ms" => format!("{v:.3}"),
        "ratio" => format!("{:.2}%", v * 100.0),
        _ => format_number(v),
    }
}

fn markdown(c: &Comparison) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# Compare: baseline {} → contender {}\n",
        c.baseline, c.contender
    );
    for w in &c.warnings {
        let _ = writeln!(out, "> ⚠ {w}");
    }
    if !c.warnings.is_empty() {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "Medians across trials. A difference counts when it is at least {:.0}% and, with ≥ {} trials in each race, a Mann-Whitney U test gives p ≤ {}; 🟢/🔴 say better/worse for that metric (higher throughput, lower times and error rate are better).\n",
        c.noise_threshold * 100.0, super::MIN_TRIALS, c.alpha
    );
    metric_rows(c, &mut out);
    capacity_notes(c, &mut out);
    trial_notes(c, &mut out);
    let regressions = c
        .tasks
        .iter()
        .flat_map(|t| &t.metrics)
        .filter(|m| m.verdict == Verdict::Regression)
        .count();
    let improvements = c
        .tasks
        .iter()
        .flat_map(|t| &t.metrics)
        .filter(|m| m.verdict == Verdict::Improvement)
        .count();
    let _ = writeln!(
        out,
        "\n{improvements} improvement(s), {regressions} regression(s)."
    );
    for (label, list) in [
        ("Only in the baseline", &c.only_in_baseline),
        ("Only in the contender", &c.only_in_contender),
    ] {
        if !list.is_empty() {
            let _ = writeln!(out, "\n{label}: {}", list.join(", "));
        }
    }
    out
}

/// One row per task, sweep point and metric.
fn metric_rows(c: &Comparison, out: &mut String) {
    let _ = writeln!(
        out,
        "| Task | Sweep | Metric | Baseline | Contender | Diff | Diff % | p | Verdict |"
    );
    let _ = writeln!(out, "|---|---|---|--:|--:|--:|--:|--:|---|");
    for t in &c.tasks {
        for m in &t.metrics {
            let rel = m
                .relative
                .map(|r| format!("{:+.1}%", r * 100.0))
                .unwrap_or_else(|| "-".into());
            let p = m
                .p_value
                .map(|p| format!("{p:.3}"))
                .unwrap_or_else(|| "-".into());
            let _ = writeln!(
                out,
                "| {} | {} | {} ({}) | {} | {} | {}{} | {} | {} | {} |",
                t.task,
                t.sweep,
                m.metric,
                m.unit,
                value(m.baseline, &m.unit),
                value(m.contender, &m.unit),
                if m.absolute > 0.0 { "+" } else { "" },
                value(m.absolute, &m.unit),
                rel,
                p,
                m.verdict.label()
            );
        }
    }
}

/// Where each capacity lies: a search brackets it, and the verdict reads the brackets.
fn capacity_notes(c: &Comparison, out: &mut String) {
    for t in &c.tasks {
        for m in &t.metrics {
            let Some(i) = m.interval else { continue };
            let _ = writeln!(
                out,
                "\n{} [{}] capacity: baseline in [{}, {}] ops/s, contender in [{}, {}] ops/s (highest held to lowest failed); the difference lies between {:+.1}% and {:+.1}%{}.",
                t.task,
                t.sweep,
                format_number(i.baseline.0),
                format_number(i.baseline.1),
                format_number(i.contender.0),
                format_number(i.contender.1),
                i.relative.0 * 100.0,
                i.relative.1 * 100.0,
                if m.verdict == Verdict::NotSignificant { ": the brackets overlap, so the searches cannot tell the races apart" } else { "" }
            );
        }
    }
}

/// What too few trials leave unjudged, or too weak to judge.
fn trial_notes(c: &Comparison, out: &mut String) {
    let few: Vec<String> = c
        .tasks
        .iter()
        .filter(|t| t.baseline_trials < super::MIN_TRIALS || t.contender_trials < super::MIN_TRIALS)
        .map(|t| {
            format!(
                "{} [{}] ({} vs {} trials)",
                t.task, t.sweep, t.baseline_trials, t.contender_trials
            )
        })
        .collect();
    if !few.is_empty() {
        let _ = writeln!(
            out,
            "\nSignificance cannot be judged with fewer than {} trials in each race: {}.",
            super::MIN_TRIALS,
            few.join("; ")
        );
    }
    let weak: Vec<String> = c
        .tasks
        .iter()
        .filter(|t| {
            t.baseline_trials >= super::MIN_TRIALS && t.contender_trials >= super::MIN_TRIALS
        })
        .filter(|t| super::smallest_p(t.baseline_trials, t.contender_trials) > c.alpha)
        .map(|t| format!("{} [{}]", t.task, t.sweep))
        .collect();
    if let Some(t) = c
        .tasks
        .iter()
        .find(|t| weak.contains(&format!("{} [{}]", t.task, t.sweep)))
    {
        let _ = writeln!(
            out,
            "\nWith {} vs {} trials the smallest p-value the test can give is {:.3} > {}: even a clear difference shows as not significant for {}. Run at least 4 trials in each race, or raise --alpha.",
            t.baseline_trials, t.contender_trials, super::smallest_p(t.baseline_trials, t.contender_trials), c.alpha, weak.join(", ")
        );
    }
}

/// A compared metric's row: its comparison, task and metric diff (None for a task only one
/// race has, whose row names the side in `verdict`).
struct CsvRow<'a> {
    c: &'a Comparison,
    task: &'a str,
    sweep: &'a str,
    metric: Option<&'a super::MetricDiff>,
    side: &'a str,
}

type Cell = fn(&CsvRow) -> String;

/// The columns, declared once with how each is filled.
const CSV_COLUMNS: [(&str, Cell); 13] = [
    ("baseline", |r| r.c.baseline.clone()),
    ("contender", |r| r.c.contender.clone()),
    ("task", |r| r.task.to_string()),
    ("sweep", |r| r.sweep.to_string()),
    ("metric", |r| {
        r.metric.map(|m| m.metric.to_string()).unwrap_or_default()
    }),
    ("unit", |r| {
        r.metric.map(|m| m.unit.clone()).unwrap_or_default()
    }),
    ("better", |r| {
        r.metric
            .map(|m| match m.better {
                super::Better::Higher => "higher".to_string(),
                super::Better::Lower => "lower".to_string(),
            })
            .unwrap_or_default()
    }),
    ("baseline_value", |r| {
        r.metric.map(|m| m.baseline.to_string()).unwrap_or_default()
    }),
    ("contender_value", |r| {
        r.metric
            .map(|m| m.contender.to_string())
            .unwrap_or_default()
    }),
    ("absolute", |r| {
        r.metric.map(|m| m.absolute.to_string()).unwrap_or_default()
    }),
    ("relative", |r| {
        r.metric
            .and_then(|m| m.relative)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }),
    ("p_value", |r| {
        r.metric
            .and_then(|m| m.p_value)
            .map(|v| v.to_string())
            .unwrap_or_default()
    }),
    ("verdict", |r| match r.metric {
        Some(m) => serde_json::to_value(m.verdict)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default(),
        None => r.side.to_string(),
    }),
];

fn csv(c: &Comparison) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let _ = w.write_record(CSV_COLUMNS.map(|(name, _)| name));
    let mut write = |row: CsvRow| {
        let _ = w.write_record(CSV_COLUMNS.map(|(_, cell)| cell(&row)));
    };
    for t in &c.tasks {
        for m in &t.metrics {
            write(CsvRow {
                c,
                task: &t.task,
                sweep: &t.sweep,
                metric: Some(m),
                side: "",
            });
        }
    }
    for (side, list) in [
        ("baseline-only", &c.only_in_baseline),
        ("contender-only", &c.only_in_contender),
    ] {
        for task in list.iter() {
            write(CsvRow {
                c,
                task,
                sweep: "",
                metric: None,
                side,
            });
        }
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}
