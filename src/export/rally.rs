//! Rally's metric documents: `rally-results-YYYY-MM` (one per task, metric and sweep point:
//! throughput, service_time, latency, error_rate, as Rally's results store writes them) and
//! `rally-metrics-YYYY-MM` (the per-second throughput samples of each trial). The race keeps
//! latencies as histograms, not samples, so their percentiles are in the results documents.

use crate::metrics::{Percentiles, PERCENTILES};
use crate::report::Summary;
use serde_json::{json, Map, Value};

pub const RESULTS_MAPPING: &str = r#"{"mappings":{"properties":{
  "race-id":{"type":"keyword"},"race-timestamp":{"type":"keyword"},"environment":{"type":"keyword"},
  "track":{"type":"keyword"},"challenge":{"type":"keyword"},"car":{"type":"keyword"},
  "task":{"type":"keyword"},"operation":{"type":"keyword"},"operation-type":{"type":"keyword"},
  "name":{"type":"keyword"},"unit":{"type":"keyword"},"sweep":{"type":"keyword"},
  "distribution-version":{"type":"keyword"},"active":{"type":"boolean"},
  "value":{"properties":{"single":{"type":"double"},"min":{"type":"double"},"mean":{"type":"double"},
    "median":{"type":"double"},"max":{"type":"double"},"50_0":{"type":"double"},"90_0":{"type":"double"},
    "95_0":{"type":"double"},"99_0":{"type":"double"},"99_9":{"type":"double"},"99_99":{"type":"double"},
    "100_0":{"type":"double"}}}}}}"#;

pub const METRICS_MAPPING: &str = r#"{"mappings":{"properties":{
  "@timestamp":{"type":"date","format":"epoch_millis"},"relative-time":{"type":"long"},
  "race-id":{"type":"keyword"},"race-timestamp":{"type":"keyword"},"environment":{"type":"keyword"},
  "track":{"type":"keyword"},"challenge":{"type":"keyword"},"car":{"type":"keyword"},
  "task":{"type":"keyword"},"operation":{"type":"keyword"},"operation-type":{"type":"keyword"},
  "name":{"type":"keyword"},"unit":{"type":"keyword"},"sample-type":{"type":"keyword"},
  "value":{"type":"double"}}}}"#;

/// The server's counters a task's results carry: (our name, Rally's, unit).
const SERVER_METRICS: &[(&str, &str, &str)] = &[
    ("gc_young_ms", "young_gc_time", "ms"),
    ("gc_old_ms", "old_gc_time", "ms"),
    ("gc_young_count", "young_gc_count", ""),
    ("indexing_ms", "indexing_total_time", "ms"),
    ("merge_ms", "merge_total_time", "ms"),
    ("merges", "merge_total_count", ""),
    ("cpu_ms", "server_cpu_time", "ms"),
];

pub struct RallyDocuments {
    pub results_index: String,
    pub metrics_index: String,
    pub results: Vec<Value>,
    pub metrics: Vec<Value>,
}

impl RallyDocuments {
    pub fn all(&self) -> impl Iterator<Item = (&str, &Value)> {
        let r = self
            .results
            .iter()
            .map(|d| (self.results_index.as_str(), d));
        r.chain(
            self.metrics
                .iter()
                .map(|d| (self.metrics_index.as_str(), d)),
        )
    }

    pub fn len(&self) -> usize {
        self.results.len() + self.metrics.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Rally's key of a percentile: 99.9 → `99_9`, 50 → `50_0`.
fn percentile_key(p: f64) -> String {
    if p.fract() == 0.0 {
        format!("{}_0", p as u64)
    } else {
        format!("{p}").replace('.', "_")
    }
}

fn percentiles_value(p: &Percentiles) -> Value {
    let mut v = Map::new();
    for ((_, q), shown) in PERCENTILES.iter().zip(p.shown()) {
        if let Some(x) = shown {
            v.insert(percentile_key(*q), json!(x));
        }
    }
    if p.count > 0 {
        v.insert("mean".into(), json!(p.mean));
    }
    Value::Object(v)
}

pub fn rally_documents(s: &Summary) -> RallyDocuments {
    let race = s.race;
    let started = race.started_at.at();
    let race_timestamp = started.format("%Y%m%dT%H%M%SZ").to_string();
    let month = started.format("%Y-%m").to_string();
    let common = |t: &crate::report::TaskSummary| {
        json!({
            "environment": "runner",
            "race-id": race.race_id,
            "race-timestamp": race_timestamp,
            "track": race.track,
            "challenge": race.challenge,
            "car": "external",
            "distribution-version": race.backend.version,
            "user-tags": race.user_tags,
            "active": true,
            "task": t.record.slot.task,
            "operation": t.record.slot.operation,
            "operation-type": t.record.slot.operation_type,
            "sweep": t.sweep_label,
        })
    };
    let mut results = Vec::new();
    let mut metrics = Vec::new();
    for t in &s.tasks {
        let with = |name: &str, value: Value, unit: &str| {
            let mut doc = common(t);
            doc["name"] = json!(name);
            doc["value"] = value;
            doc["unit"] = json!(unit);
            doc
        };
        if let Some(th) = t.throughput {
            results.push(with(
                "throughput",
                json!({"min": th.min, "mean": th.mean, "median": th.median, "max": th.max}),
                t.record.slot.throughput_unit.as_str(),
            ));
        }
        results.push(with(
            "service_time",
            percentiles_value(&t.service_time_ms),
            "ms",
        ));
        results.push(with("latency", percentiles_value(&t.latency_ms), "ms"));
        results.push(with("error_rate", json!({"single": t.error_rate}), ""));
        // The server's side, summed over the task's complete trials, under Rally's names.
        for (ours, rallys, unit) in SERVER_METRICS {
            let total: Option<f64> = t
                .record
                .complete_trials()
                .filter_map(|tr| tr.server.as_ref()?.deltas.get(*ours))
                .fold(None, |sum, v| Some(sum.unwrap_or(0.0) + v));
            if let Some(total) = total {
                results.push(with(rallys, json!({"single": total}), unit));
            }
        }
        for tr in t.record.complete_trials() {
            let trial_start = tr.started_at.at();
            for (second, units) in tr.throughput_per_second.iter().enumerate() {
                let at = trial_start + chrono::Duration::seconds(second as i64 + 1);
                let mut doc = with(
                    "throughput",
                    json!(*units as f64),
                    t.record.slot.throughput_unit.as_str(),
                );
                doc["@timestamp"] = json!(at.timestamp_millis());
                doc["relative-time"] = json!((at - started).num_milliseconds());
                doc["sample-type"] = json!("normal");
                doc["meta"] = json!({"trial": tr.trial + 1});
                metrics.push(doc);
            }
        }
    }
    RallyDocuments {
        results_index: format!("rally-results-{month}"),
        metrics_index: format!("rally-metrics-{month}"),
        results,
        metrics,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn percentile_keys_are_rallys() {
        assert_eq!(super::percentile_key(99.9), "99_9");
        assert_eq!(super::percentile_key(50.0), "50_0");
        assert_eq!(super::percentile_key(99.99), "99_99");
        assert_eq!(super::percentile_key(100.0), "100_0");
    }
}
