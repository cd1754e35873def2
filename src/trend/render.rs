//! A trend as markdown, CSV or JSON, through the report formats' one trait.

use super::{Direction, Trend};
use crate::report::{Csv, Json, Markdown, Render};
use crate::units::format_number;
use std::fmt::Write;

impl Render<Trend> for Json {
    fn render(&self, t: &Trend) -> String {
        serde_json::to_string_pretty(t).unwrap_or_default()
    }
}

fn value(v: f64, unit: &str) -> String {
    match unit {
        "ms" => crate::units::ms(v),
        "ratio" => format!("{:.3}%", v * 100.0),
        _ => format_number(v),
    }
}

fn label(d: Direction) -> &'static str {
    match d {
        Direction::Regression => "🔴 regression",
        Direction::Improvement => "🟢 improvement",
        Direction::WithinNoise => "⚪ within noise",
    }
}

impl Render<Trend> for Markdown {
    fn render(&self, t: &Trend) -> String {
        let mut out = format!(
            "# Trend: {} / {}, {} races ({} → {})\n\n",
            t.track,
            t.challenge,
            t.races.len(),
            t.races.first().map_or("", String::as_str),
            t.races.last().map_or("", String::as_str)
        );
        for w in &t.warnings {
            let _ = writeln!(out, "> ⚠ {w}");
        }
        let _ = writeln!(
            out,
            "{}Change points by E-Divisive means with Student's t-test (Otava's variant) at p ≤ {}; a change under {:.0}% of the mean before it is within noise.\n",
            if t.warnings.is_empty() { "" } else { "\n" },
            t.max_p,
            t.noise_threshold * 100.0
        );
        out.push_str("| Task | Sweep | Metric | Starts at race | # | Before | After | Change | p | Verdict |\n");
        out.push_str("|---|---|---|---|--:|--:|--:|--:|--:|---|\n");
        let mut any = false;
        for s in &t.series {
            for c in &s.changes {
                any = true;
                let _ = writeln!(
                    out,
                    "| {} | {} | {} ({}) | {} | {} | {} | {} | {:+.1}% | {:.1e} | {} |",
                    s.task,
                    s.sweep,
                    s.metric,
                    s.unit,
                    c.race,
                    c.index + 1,
                    value(c.mean_before, &s.unit),
                    value(c.mean_after, &s.unit),
                    c.change_percent,
                    c.p_value,
                    label(c.direction)
                );
            }
        }
        if !any {
            out.push_str("| (none) | | | | | | | | | |\n");
        }
        let _ = writeln!(out, "\n## Series (oldest first)\n");
        for s in &t.series {
            let values: Vec<String> = s.points.iter().map(|p| value(p.value, &s.unit)).collect();
            let _ = writeln!(
                out,
                "- {} [{}] {} ({}): {}",
                s.task,
                s.sweep,
                s.metric,
                s.unit,
                values.join(", ")
            );
        }
        out
    }
}

impl Render<Trend> for Csv {
    fn render(&self, t: &Trend) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "track",
            "challenge",
            "task",
            "sweep",
            "metric",
            "unit",
            "race",
            "index",
            "value",
            "change_percent",
            "p_value",
            "verdict",
        ]);
        for s in &t.series {
            for (i, p) in s.points.iter().enumerate() {
                let change = s.changes.iter().find(|c| c.index == i);
                let _ = w.write_record([
                    t.track.as_str(),
                    t.challenge.as_str(),
                    s.task.as_str(),
                    s.sweep.as_str(),
                    s.metric,
                    s.unit.as_str(),
                    p.race.as_str(),
                    &i.to_string(),
                    &p.value.to_string(),
                    &change
                        .map(|c| c.change_percent.to_string())
                        .unwrap_or_default(),
                    &change.map(|c| c.p_value.to_string()).unwrap_or_default(),
                    change.map_or("", |c| match c.direction {
                        Direction::Regression => "regression",
                        Direction::Improvement => "improvement",
                        Direction::WithinNoise => "within-noise",
                    }),
                ]);
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}

impl Render<super::across::Across> for Json {
    fn render(&self, a: &super::across::Across) -> String {
        serde_json::to_string_pretty(a).unwrap_or_default()
    }
}

impl Render<super::across::Across> for Markdown {
    fn render(&self, a: &super::across::Across) -> String {
        let mut out = format!(
            "# {} races as one report\n\n{}\n\n",
            a.races.len(),
            a.races.join(", ")
        );
        for w in &a.warnings {
            let _ = writeln!(out, "> ⚠ {w}");
        }
        out.push_str("\n## Across races (each race's value: throughput its trials' median, percentiles its merged histograms)\n\n");
        out.push_str("| Task | Sweep | Metric | Races | Mean | Median | Min | Max | CV |\n|---|---|---|--:|--:|--:|--:|--:|--:|\n");
        for r in &a.rows {
            let _ = writeln!(
                out,
                "| {} | {} | {} ({}) | {} | {} | {} | {} | {} | {} |",
                r.task,
                r.sweep,
                r.metric,
                r.unit,
                r.races,
                value(r.stats.mean, &r.unit),
                value(r.stats.median, &r.unit),
                value(r.stats.min, &r.unit),
                value(r.stats.max, &r.unit),
                r.cv.map_or("-".into(), |c| format!("{:.1}%", c * 100.0))
            );
        }
        out.push_str("\n## All races' samples together (ms; histograms added, never percentiles averaged)\n\n");
        out.push_str("| Task | Sweep | Kind | Samples | Mean | p50 | p90 | p99 | p99.9 | p100 |\n|---|---|---|--:|--:|--:|--:|--:|--:|--:|\n");
        for m in &a.merged {
            for (kind, p) in [
                ("service time", &m.service_time_ms),
                ("latency", &m.latency_ms),
            ] {
                let at = |q: f64| p.at(q).map_or("—".into(), crate::units::ms);
                let _ = writeln!(
                    out,
                    "| {} | {} | {kind} | {} | {} | {} | {} | {} | {} | {} |",
                    m.task,
                    m.sweep,
                    p.count,
                    crate::units::ms(p.mean),
                    at(50.0),
                    at(90.0),
                    at(99.0),
                    at(99.9),
                    at(100.0)
                );
            }
        }
        out
    }
}

impl Render<super::across::Across> for Csv {
    fn render(&self, a: &super::across::Across) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "task", "sweep", "metric", "unit", "races", "mean", "median", "min", "max", "cv",
        ]);
        for r in &a.rows {
            let _ = w.write_record([
                r.task.as_str(),
                r.sweep.as_str(),
                r.metric,
                r.unit.as_str(),
                &r.races.to_string(),
                &r.stats.mean.to_string(),
                &r.stats.median.to_string(),
                &r.stats.min.to_string(),
                &r.stats.max.to_string(),
                &r.cv.map(|c| c.to_string()).unwrap_or_default(),
            ]);
        }
        for m in &a.merged {
            for (kind, p) in [
                ("service_time", &m.service_time_ms),
                ("latency", &m.latency_ms),
            ] {
                for (label, q) in crate::metrics::PERCENTILES {
                    if let Some(v) = p.at(q) {
                        let _ = w.write_record([
                            m.task.as_str(),
                            m.sweep.as_str(),
                            &format!("{kind}_{label}_merged"),
                            "ms",
                            &a.races.len().to_string(),
                            &v.to_string(),
                            "",
                            "",
                            "",
                            "",
                        ]);
                    }
                }
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
