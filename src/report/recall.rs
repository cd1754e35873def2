//! Recall of vector searches, for every format: a table of each task (and sweep point) with
//! its throughput beside its recall, the Pareto-best points marked; CSV rows per trial and
//! per task. JSON carries the task summaries' `recall`.

use super::summary::TaskSummary;
use super::table::{Align, Table};
use super::Summary;
use crate::results::{RecallRecord, TrialRecord};
use crate::units::format_number;

/// One point of a recall–throughput curve.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    pub throughput: f64,
    pub recall: f64,
}

/// Which points no other point beats on both recall and throughput (the Pareto front).
pub fn pareto(points: &[Point]) -> Vec<bool> {
    points
        .iter()
        .map(|p| {
            !points.iter().any(|q| {
                q.recall >= p.recall
                    && q.throughput >= p.throughput
                    && (q.recall > p.recall || q.throughput > p.throughput)
            })
        })
        .collect()
}

fn recall_tasks<'a>(s: &'a Summary<'a>) -> Vec<(&'a TaskSummary<'a>, &'a RecallRecord)> {
    s.tasks
        .iter()
        .filter_map(|t| Some((t, t.recall.as_ref()?)))
        .collect()
}

fn ratio(v: f64) -> String {
    format!("{v:.3}")
}

pub fn tables(s: &Summary) -> Vec<Table> {
    use Align::{Left as L, Right as R};
    let tasks = recall_tasks(s);
    if tasks.is_empty() {
        return Vec::new();
    }
    let mut table = Table::new(
        "Recall (share of each query's true k nearest among its k hits; all measured answers)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Clients", R),
            ("Throughput (median)", R),
            ("Unit", L),
            ("Mean", R),
            ("p5", R),
            ("p50", R),
            ("Min", R),
            ("Answers", R),
            ("Pareto", L),
        ],
    );
    // The front is judged among the sweep points of each task.
    let points: Vec<Point> = tasks
        .iter()
        .map(|(t, r)| Point {
            throughput: t.throughput.map_or(0.0, |th| th.median),
            recall: r.mean,
        })
        .collect();
    let mut best = vec![false; tasks.len()];
    for name in tasks.iter().map(|(t, _)| t.task) {
        let idx: Vec<usize> = (0..tasks.len())
            .filter(|i| tasks[*i].0.task == name)
            .collect();
        let front = pareto(&idx.iter().map(|i| points[*i]).collect::<Vec<_>>());
        for (i, on) in idx.iter().zip(front) {
            best[*i] = on;
        }
    }
    for (((t, r), p), on) in tasks.iter().zip(&points).zip(best) {
        table.row(vec![
            t.task.to_string(),
            t.sweep_label.clone(),
            t.record.slot.clients.to_string(),
            format_number(p.throughput),
            t.record.slot.throughput_unit.as_str().to_string(),
            ratio(r.mean),
            ratio(r.p5),
            ratio(r.p50),
            ratio(r.min),
            r.count.to_string(),
            if on { "best".into() } else { String::new() },
        ]);
    }
    table.note = Some("best: no other sweep point of the task has both a higher recall and a higher throughput (the Pareto front; `runner plot` draws the curve).".into());
    vec![table]
}

/// What the tracks' custom runners returned (Rally keeps it as each sample's meta).
pub fn runner_numbers_table(s: &Summary) -> Option<Table> {
    use Align::{Left as L, Right as R};
    let rows: Vec<Vec<String>> = s
        .tasks
        .iter()
        .flat_map(|t| {
            t.record.trials.iter().flat_map(move |tr| {
                tr.runner_numbers.iter().map(move |(k, v)| {
                    vec![
                        t.task.to_string(),
                        t.sweep_label.clone(),
                        (tr.trial + 1).to_string(),
                        k.clone(),
                        format_number(*v),
                    ]
                })
            })
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut table = Table::new(
        "Custom runners' numbers (each trial's last measured call)",
        &[
            ("Task", L),
            ("Sweep", L),
            ("Trial", R),
            ("Name", L),
            ("Value", R),
        ],
    );
    rows.into_iter().for_each(|r| table.row(r));
    Some(table)
}

/// A trial's recall rows for CSV.
pub fn trial_rows(tr: &TrialRecord, row: &mut dyn FnMut(String, f64, &str)) {
    if let Some(r) = &tr.recall {
        record_rows(r, row);
    }
    for (k, v) in &tr.runner_numbers {
        row(format!("runner_{k}"), *v, "");
    }
}

/// A task's recall rows over all its trials, for CSV.
pub fn task_rows(t: &TaskSummary, row: &mut dyn FnMut(String, f64, &str)) {
    if let Some(r) = &t.recall {
        record_rows(r, row);
    }
}

fn record_rows(r: &RecallRecord, row: &mut dyn FnMut(String, f64, &str)) {
    for (name, v) in [
        ("recall_mean", r.mean),
        ("recall_p5", r.p5),
        ("recall_p50", r.p50),
        ("recall_min", r.min),
        ("recall_max", r.max),
    ] {
        row(name.into(), v, "ratio");
    }
    row("recall_answers".into(), r.count as f64, "count");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_front_keeps_points_nothing_beats_on_both() {
        let p = |throughput, recall| Point { throughput, recall };
        let front = pareto(&[
            p(100.0, 0.8),
            p(80.0, 0.9),
            p(70.0, 0.85),
            p(50.0, 0.99),
            p(100.0, 0.8),
        ]);
        assert_eq!(front, [true, true, false, true, true]);
    }
}
