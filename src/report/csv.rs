//! One row per task × sweep point × trial × metric, plus `all` rows for the cross-trial
//! aggregates: easy to pivot in a spreadsheet.

use super::summary::TaskSummary;
use super::{Render, Summary};
use crate::metrics::{Percentiles, PERCENTILES};
use crate::results::{TaskRecord, TrialRecord};

pub struct Csv;

/// The columns, declared once: every row is written through [`Row`], which fills them in
/// this order.
const COLUMNS: [&str; 13] = [
    "race_id",
    "track",
    "challenge",
    "task",
    "operation",
    "operation_type",
    "sweep",
    "clients",
    "target_throughput",
    "trial",
    "metric",
    "value",
    "unit",
];

/// One row's values, by column.
struct Row<'a> {
    task: Option<&'a TaskRecord>,
    sweep: &'a str,
    trial: &'a str,
    metric: &'a str,
    value: &'a str,
    unit: &'a str,
}

impl Row<'_> {
    fn write(&self, w: &mut csv::Writer<Vec<u8>>, s: &Summary) {
        let slot = self.task.map(|t| &t.slot);
        let text = |f: fn(&crate::results::SlotRecord) -> String| slot.map(f).unwrap_or_default();
        let values: [String; COLUMNS.len()] = [
            s.race.race_id.clone(),
            s.race.track.clone(),
            s.race.challenge.clone(),
            text(|s| s.task.clone()),
            text(|s| s.operation.clone()),
            text(|s| s.operation_type.clone()),
            self.sweep.to_string(),
            text(|s| s.clients.to_string()),
            text(|s| {
                s.target_throughput
                    .map(|v| v.to_string())
                    .unwrap_or_default()
            }),
            self.trial.to_string(),
            self.metric.to_string(),
            self.value.to_string(),
            self.unit.to_string(),
        ];
        let _ = w.write_record(values);
    }
}

/// The percentiles the sample count supports (no row for the others), and the mean.
fn percentile_rows(prefix: &str, p: &Percentiles, row: &mut dyn FnMut(String, f64, &str)) {
    for ((label, _), v) in PERCENTILES.iter().zip(p.shown()) {
        if let Some(v) = v {
            row(format!("{prefix}_{label}"), v, "ms");
        }
    }
    if p.count > 0 {
        row(format!("{prefix}_mean"), p.mean, "ms");
    }
}

/// One trial's rows.
fn trial_rows(r: &TaskRecord, tr: &TrialRecord, row: &mut dyn FnMut(String, f64, &str)) {
    if tr.is_single_operation() {
        row("duration".into(), tr.service_time_ms.mean, "ms");
    } else {
        row(
            "throughput".into(),
            tr.throughput,
            r.slot.throughput_unit.as_str(),
        );
    }
    percentile_rows("service_time", &tr.service_time_ms, row);
    percentile_rows("latency", &tr.latency_ms, row);
    row("operations".into(), tr.operations as f64, "count");
    row("successes".into(), tr.successes as f64, "count");
    row("errors".into(), tr.errors as f64, "count");
    row("error_rate".into(), tr.error_rate, "ratio");
    row("units".into(), tr.units as f64, "count");
    row("hits".into(), tr.hits as f64, "count");
    row(
        "interrupted".into(),
        f64::from(u8::from(tr.interrupted)),
        "bool",
    );
    super::capacity::trial_rows(tr, row);
    super::recall::trial_rows(tr, row);
}

/// A task's `all` rows: the spread across trials, merged percentiles, thresholds, errors.
fn task_rows(t: &TaskSummary, row: &mut dyn FnMut(String, f64, &str)) {
    let r = t.record;
    let (stats, name, unit) = match (t.throughput, t.duration_ms) {
        (_, Some(d)) => (d, "duration", "ms"),
        (th, None) => (
            th.unwrap_or_default(),
            "throughput",
            r.slot.throughput_unit.as_str(),
        ),
    };
    for (stat, v) in [
        ("min", stats.min),
        ("median", stats.median),
        ("mean", stats.mean),
        ("max", stats.max),
    ] {
        row(format!("{name}_{stat}"), v, unit);
    }
    percentile_rows("service_time", &t.service_time_ms, row);
    percentile_rows("latency", &t.latency_ms, row);
    for j in &t.thresholds {
        let pass = j.verdict == crate::thresholds::Verdict::Pass;
        row(
            format!("threshold: {}", j.threshold),
            f64::from(u8::from(pass)),
            "pass",
        );
    }
    row("errors".into(), t.errors as f64, "count");
    row("error_rate".into(), t.error_rate, "ratio");
    super::recall::task_rows(t, row);
}

impl Render<Summary<'_>> for Csv {
    fn render(&self, s: &Summary) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(COLUMNS);
        for t in &s.tasks {
            let r = t.record;
            let mut emit = |trial: &str, metric: String, value: f64, unit: &str| {
                let row = Row {
                    task: Some(r),
                    sweep: &t.sweep_label,
                    trial,
                    metric: &metric,
                    value: &value.to_string(),
                    unit,
                };
                row.write(&mut w, s);
            };
            for tr in &r.trials {
                let trial = (tr.trial + 1).to_string();
                trial_rows(r, tr, &mut |m, v, u| emit(&trial, m, v, u));
            }
            task_rows(t, &mut |m, v, u| emit("all", m, v, u));
        }
        // A task left out of the report still shows its failures (a failed create-index).
        for r in s.race.tasks.iter().filter(|r| !r.slot.reported) {
            for tr in r.trials.iter().filter(|tr| tr.errors > 0) {
                let trial = (tr.trial + 1).to_string();
                for (metric, value, unit) in [
                    ("errors", tr.errors as f64, "count"),
                    ("error_rate", tr.error_rate, "ratio"),
                ] {
                    let value = value.to_string();
                    let row = Row {
                        task: Some(r),
                        sweep: "-",
                        trial: &trial,
                        metric,
                        value: &value,
                        unit,
                    };
                    row.write(&mut w, s);
                }
            }
        }
        // How the race differs from the track: a row each, the text in the unit column.
        for d in &s.race.deviations {
            let row = Row {
                task: None,
                sweep: "",
                trial: "",
                metric: "deviation",
                value: "1",
                unit: d,
            };
            row.write(&mut w, s);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
