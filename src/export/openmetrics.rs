//! A stored race as an OpenMetrics text file (Prometheus' exposition format): one summary per
//! task and timing with the quantiles the samples support, throughput and error rate as
//! gauges, labelled by race, track, challenge, task and sweep point.

use crate::report::Summary;
use std::fmt::Write;

/// A label value with `\`, `"` and line breaks escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

pub fn openmetrics(s: &Summary) -> String {
    let race = s.race;
    let mut out = String::new();
    let labels = |t: &crate::report::TaskSummary| {
        format!(
            "race=\"{}\",track=\"{}\",challenge=\"{}\",task=\"{}\",sweep=\"{}\"",
            label(&race.race_id),
            label(&race.track),
            label(&race.challenge),
            label(&t.record.slot.task),
            label(&t.sweep_label)
        )
    };
    let _ = writeln!(out, "# TYPE runner_throughput gauge\n# HELP runner_throughput Mean throughput of the complete trials, in the unit label.");
    for t in &s.tasks {
        if let Some(th) = t.throughput {
            let _ = writeln!(
                out,
                "runner_throughput{{{},unit=\"{}\"}} {}",
                labels(t),
                label(t.record.slot.throughput_unit.as_str()),
                th.mean
            );
        }
    }
    let _ = writeln!(out, "# TYPE runner_error_ratio gauge\n# HELP runner_error_ratio Errors over operations, all trials.");
    for t in &s.tasks {
        let _ = writeln!(out, "runner_error_ratio{{{}}} {}", labels(t), t.error_rate);
    }
    for (name, help, pick) in [
        (
            "runner_service_time_seconds",
            "From sending an operation to its response.",
            true,
        ),
        (
            "runner_latency_seconds",
            "From an operation's intended start to its response.",
            false,
        ),
    ] {
        let _ = writeln!(
            out,
            "# TYPE {name} summary\n# UNIT {name} seconds\n# HELP {name} {help}"
        );
        for t in &s.tasks {
            let p = if pick {
                &t.service_time_ms
            } else {
                &t.latency_ms
            };
            if p.count == 0 {
                continue;
            }
            for ((_, q), v) in crate::metrics::PERCENTILES.iter().zip(p.shown()) {
                if let Some(v) = v {
                    let _ = writeln!(
                        out,
                        "{name}{{{},quantile=\"{}\"}} {}",
                        labels(t),
                        quantile_label(*q),
                        v / 1000.0
                    );
                }
            }
            let _ = writeln!(out, "{name}_count{{{}}} {}", labels(t), p.count);
            let _ = writeln!(
                out,
                "{name}_sum{{{}}} {}",
                labels(t),
                p.mean * p.count as f64 / 1000.0
            );
        }
    }
    out.push_str("# EOF\n");
    out
}

/// A percentile as a quantile label, written exactly: 99.9 is `0.999`, never the float
/// division's `0.9990000000000001`.
fn quantile_label(percent: f64) -> String {
    let text = format!("{:.8}", percent / 100.0);
    let text = text.trim_end_matches('0');
    text.strip_suffix('.').unwrap_or(text).to_string()
}

#[cfg(test)]
mod tests {
    #[test]
    fn quantile_labels_are_exact() {
        let labels: Vec<String> = [50.0, 90.0, 99.0, 99.9, 99.99, 100.0]
            .iter()
            .map(|p| super::quantile_label(*p))
            .collect();
        assert_eq!(labels, ["0.5", "0.9", "0.99", "0.999", "0.9999", "1"]);
    }
}
