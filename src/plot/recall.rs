//! A vector search's recall–throughput curve: each sweep point's recall (mean over its
//! measured answers) against its throughput, the points no other beats on both marked (the
//! Pareto front), one curve per race when two are compared.

use super::svg::{Chart, XAxis, COLORS};
use super::{file_name, Plot, Source};
use crate::report::recall::{pareto, Point};

/// (sweep label, point) of each of the task's sweep points with recall, in one race.
fn points(task: &str, s: &Source) -> Vec<(String, Point)> {
    s.race
        .tasks
        .iter()
        .filter(|t| t.slot.task == task)
        .filter_map(|t| {
            let trials: Vec<_> = t.complete_trials().collect();
            let throughput = crate::report::ThroughputStats::of(
                &trials.iter().map(|tr| tr.throughput).collect::<Vec<_>>(),
            )
            .median;
            let merged = crate::results::RecallRecord::merged(
                trials.iter().filter_map(|tr| tr.recall.as_ref()),
            )?;
            Some((
                t.sweep_label(),
                Point {
                    throughput,
                    recall: merged.mean() / 1000.0,
                },
            ))
        })
        .collect()
}

pub(super) fn recall_chart(task: &str, sources: &[Source]) -> Option<Plot> {
    let curves: Vec<(&str, Vec<(String, Point)>)> = sources
        .iter()
        .map(|s| (s.label, points(task, s)))
        .filter(|(_, p)| !p.is_empty())
        .collect();
    if curves.is_empty() {
        return None;
    }
    let all = || curves.iter().flat_map(|(_, p)| p.iter().map(|(_, q)| *q));
    let x_min = all().map(|p| p.recall).fold(1.0, f64::min);
    let x_min = ((x_min - 0.05).max(0.0) * 20.0).floor() / 20.0;
    let y_max = all().map(|p| p.throughput).fold(0.0, f64::max);
    let title = format!("{task}: recall against throughput, by sweep point (Pareto front marked)");
    let mut chart = Chart::new(
        &title,
        XAxis::Linear {
            min: x_min,
            max: 1.0,
            label: "recall@k (mean over measured answers)".into(),
        },
        y_max * 1.1,
        "throughput (ops/s)",
    );
    for (i, (label, pts)) in curves.iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut by_recall: Vec<&(String, Point)> = pts.iter().collect();
        by_recall.sort_by(|a, b| a.1.recall.total_cmp(&b.1.recall));
        let line: Vec<(f64, f64)> = by_recall
            .iter()
            .map(|(_, p)| (p.recall, p.throughput))
            .collect();
        chart.line(label, color, i > 0, &line);
        let front = pareto(&pts.iter().map(|(_, p)| *p).collect::<Vec<_>>());
        for ((name, p), best) in pts.iter().zip(&front) {
            let tip = format!(
                "{name}: recall {:.3}, {} ops/s{}",
                p.recall,
                crate::units::format_number(p.throughput),
                if *best { " (Pareto front)" } else { "" }
            );
            chart.dot(
                p.recall,
                p.throughput,
                if *best { 6.0 } else { 3.5 },
                color,
                &tip,
            );
        }
    }
    chart.legend_entry("large dot: Pareto front", "#444444");
    Some(Plot {
        task: task.to_string(),
        file: file_name("recall", task),
        title,
        svg: chart.render(),
    })
}
