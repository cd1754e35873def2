//! One row per task × sweep point × trial × metric, plus `all` rows for the cross-trial
//! aggregates: easy to pivot in a spreadsheet.

use super::{Exporter, Summary};
use crate::metrics::{Percentiles, PERCENTILES};

pub struct Csv;

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

/// One row: the race and task columns, then the trial, metric, value and unit.
#[allow(clippy::too_many_arguments)]
fn write_row(
    w: &mut csv::Writer<Vec<u8>>,
    s: &Summary,
    r: &crate::results::TaskRecord,
    sweep: &str,
    trial: &str,
    metric: &str,
    value: f64,
    unit: &str,
) {
    let target = r
        .slot
        .target_throughput
        .map(|v| v.to_string())
        .unwrap_or_default();
    let _ = w.write_record([
        s.race.race_id.as_str(),
        &s.race.track,
        &s.race.challenge,
        &r.slot.task,
        &r.slot.operation,
        &r.slot.operation_type,
        sweep,
        &r.slot.clients.to_string(),
        &target,
        trial,
        metric,
        &value.to_string(),
        unit,
    ]);
}

impl Exporter for Csv {
    fn render(&self, s: &Summary) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
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
        ]);
        for t in &s.tasks {
            let r = t.record;
            let mut emit = |trial: &str, metric: String, value: f64, unit: &str| {
                write_row(&mut w, s, r, &t.sweep_label, trial, &metric, value, unit);
            };
            for tr in &r.trials {
                let trial = (tr.trial + 1).to_string();
                let mut row = |m: String, v: f64, u: &str| emit(&trial, m, v, u);
                if tr.is_single_operation() {
                    row("duration".into(), tr.service_time_ms.mean, "ms");
                } else {
                    row(
                        "throughput".into(),
                        tr.throughput,
                        r.slot.throughput_unit.as_str(),
                    );
                }
                percentile_rows("service_time", &tr.service_time_ms, &mut row);
                percentile_rows("latency", &tr.latency_ms, &mut row);
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
            }
            let mut row = |m: String, v: f64, u: &str| emit("all", m, v, u);
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
            percentile_rows("service_time", &t.service_time_ms, &mut row);
            percentile_rows("latency", &t.latency_ms, &mut row);
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
        }
        // A task left out of the report still shows its failures (a failed create-index).
        for r in s.race.tasks.iter().filter(|r| !r.slot.reported) {
            for tr in r.trials.iter().filter(|tr| tr.errors > 0) {
                let trial = (tr.trial + 1).to_string();
                for (metric, value, unit) in [
                    ("errors", tr.errors as f64, "count"),
                    ("error_rate", tr.error_rate, "ratio"),
                ] {
                    write_row(&mut w, s, r, "-", &trial, metric, value, unit);
                }
            }
        }
        // How the race differs from the track: a row each, the text in the unit column.
        for d in &s.race.deviations {
            let _ = w.write_record([
                s.race.race_id.as_str(),
                &s.race.track,
                &s.race.challenge,
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "deviation",
                "1",
                d,
            ]);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
