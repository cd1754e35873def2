//! One baseline against several contenders (Rally #933): each contender compared as a pair,
//! shown side by side per task and metric, with each pair's own verdict.

use super::{Comparison, Verdict};
use crate::report::{Csv, Json, Markdown, Render};
use serde::Serialize;
use std::fmt::Write;

#[derive(Debug, Clone, Serialize)]
pub struct Comparisons {
    pub baseline: String,
    pub pairs: Vec<Comparison>,
}

impl Comparisons {
    /// Every (task, sweep, metric) any pair holds, in the first pair's order.
    fn rows(&self) -> Vec<(String, String, &'static str, String)> {
        let mut rows = Vec::new();
        for c in &self.pairs {
            for t in &c.tasks {
                for m in &t.metrics {
                    let key = (t.task.clone(), t.sweep.clone(), m.metric, m.unit.clone());
                    if !rows.contains(&key) {
                        rows.push(key);
                    }
                }
            }
        }
        rows
    }

    fn find(
        &self,
        pair: usize,
        task: &str,
        sweep: &str,
        metric: &str,
    ) -> Option<&super::MetricDiff> {
        self.pairs[pair]
            .tasks
            .iter()
            .find(|t| t.task == task && t.sweep == sweep)?
            .metrics
            .iter()
            .find(|m| m.metric == metric)
    }
}

impl Render<Comparisons> for Json {
    fn render(&self, c: &Comparisons) -> String {
        serde_json::to_string_pretty(c).unwrap_or_default()
    }
}

impl Render<Comparisons> for Markdown {
    fn render(&self, c: &Comparisons) -> String {
        let mut out = format!(
            "# Compare: baseline {} against {} contenders\n\n",
            c.baseline,
            c.pairs.len()
        );
        for (i, p) in c.pairs.iter().enumerate() {
            for w in &p.warnings {
                let _ = writeln!(out, "> ⚠ contender {} ({}): {w}", i + 1, p.contender);
            }
        }
        let _ = writeln!(out, "Each contender is compared with the baseline as `runner compare` compares two races (medians across trials; the noise threshold and, with enough trials, a Mann-Whitney U test); each cell: the contender's value, its difference and verdict.\n");
        let heads: Vec<String> = c
            .pairs
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} ({})", i + 1, p.contender))
            .collect();
        let _ = writeln!(
            out,
            "| Task | Sweep | Metric | Baseline | {} |",
            heads.join(" | ")
        );
        let _ = writeln!(out, "|---|---|---|--:|{}", "---|".repeat(c.pairs.len()));
        for (task, sweep, metric, unit) in c.rows() {
            let base = (0..c.pairs.len())
                .find_map(|i| c.find(i, &task, &sweep, metric))
                .map(|m| m.baseline);
            let cells: Vec<String> = (0..c.pairs.len())
                .map(|i| match c.find(i, &task, &sweep, metric) {
                    Some(m) => format!(
                        "{} ({}, {})",
                        super::render::value(m.contender, &m.unit),
                        m.relative
                            .map_or("-".into(), |r| format!("{:+.1}%", r * 100.0)),
                        m.verdict.label()
                    ),
                    None => "-".into(),
                })
                .collect();
            let _ = writeln!(
                out,
                "| {task} | {sweep} | {metric} ({unit}) | {} | {} |",
                base.map_or("-".into(), |b| super::render::value(b, &unit)),
                cells.join(" | ")
            );
        }
        let worse: usize = c
            .pairs
            .iter()
            .flat_map(|p| &p.tasks)
            .flat_map(|t| &t.metrics)
            .filter(|m| m.verdict == Verdict::Regression)
            .count();
        let _ = writeln!(out, "\n{worse} regression(s) across the contenders.");
        out
    }
}

impl Render<Comparisons> for Csv {
    fn render(&self, c: &Comparisons) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "baseline",
            "contender",
            "task",
            "sweep",
            "metric",
            "unit",
            "baseline_value",
            "contender_value",
            "relative",
            "p_value",
            "verdict",
        ]);
        for p in &c.pairs {
            for t in &p.tasks {
                for m in &t.metrics {
                    let _ = w.write_record([
                        c.baseline.as_str(),
                        p.contender.as_str(),
                        t.task.as_str(),
                        t.sweep.as_str(),
                        m.metric,
                        m.unit.as_str(),
                        &m.baseline.to_string(),
                        &m.contender.to_string(),
                        &m.relative.map(|r| r.to_string()).unwrap_or_default(),
                        &m.p_value.map(|p| p.to_string()).unwrap_or_default(),
                        m.verdict.plain().0,
                    ]);
                }
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
