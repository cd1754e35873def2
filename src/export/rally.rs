//! Rally's metric documents: `rally-results-YYYY-MM` (one per task, metric and sweep point:
//! throughput, service_time, latency, error_rate, shaped as Rally's results store writes them:
//! `rally-version`, `distribution-flavor`, the unit inside `value`, runner's own fields under
//! `meta`) and `rally-metrics-YYYY-MM` (the per-second throughput samples of each trial, and,
//! for a race run with `--keep-samples`, a `latency` and a `service_time` document per request,
//! as Rally writes them). Every document's id is derived from the race and what it measures:
//! exporting a race twice replaces its documents instead of adding copies.

use crate::metrics::{Percentiles, PERCENTILES};
use crate::report::Summary;
use serde_json::{json, Map, Value};

pub const RESULTS_MAPPING: &str = r#"{"mappings":{"properties":{
  "race-id":{"type":"keyword"},"race-timestamp":{"type":"keyword"},"environment":{"type":"keyword"},
  "track":{"type":"keyword"},"challenge":{"type":"keyword"},"car":{"type":"keyword"},
  "task":{"type":"keyword"},"operation":{"type":"keyword"},"operation-type":{"type":"keyword"},
  "name":{"type":"keyword"},"rally-version":{"type":"keyword"},
  "distribution-version":{"type":"keyword"},"distribution-flavor":{"type":"keyword"},
  "distribution-major-version":{"type":"short"},"active":{"type":"boolean"},
  "value":{"properties":{"unit":{"type":"keyword"},"single":{"type":"double"},"min":{"type":"double"},"mean":{"type":"double"},
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
    /// Each document with its id.
    pub results: Vec<(String, Value)>,
    pub metrics: Vec<(String, Value)>,
    /// Trials with per-request samples: their `latency` and `service_time` documents, made a
    /// bulk at a time when exported (a million samples would be two million documents).
    pub sampled: Vec<super::samples::SampledTrial>,
}

impl RallyDocuments {
    /// (index, id, document) of every document.
    pub fn all(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        let r = self
            .results
            .iter()
            .map(|(id, d)| (self.results_index.as_str(), id.as_str(), d));
        r.chain(
            self.metrics
                .iter()
                .map(|(id, d)| (self.metrics_index.as_str(), id.as_str(), d)),
        )
    }

    /// Documents, the per-request samples' two each included.
    pub fn len(&self) -> usize {
        let samples: u64 = self.sampled.iter().map(|t| 2 * t.samples.kept).sum();
        self.results.len() + self.metrics.len() + samples as usize
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

/// A document's id: the race's id and a hash of what the document measures (FNV-1a, stable
/// across builds and machines).
pub(super) fn document_id(race_id: &str, parts: &[&str]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for b in part.bytes().chain(std::iter::once(0)) {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
    }
    format!("{race_id}-{h:016x}")
}

/// The major version of a distribution's version text (`elasticsearch 8.15.0` gives 8).
fn major_version(version: &str) -> Option<u64> {
    version
        .split_whitespace()
        .last()?
        .split('.')
        .next()?
        .parse()
        .ok()
}

fn percentiles_value(p: &Percentiles) -> Value {
    let mut v = Map::new();
    v.insert("unit".into(), json!("ms"));
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
    let month = started.format("%Y-%m").to_string();
    let race_fields = race_fields(race);
    let mut results = Vec::new();
    let mut metrics = Vec::new();
    let mut sampled = Vec::new();
    for t in &s.tasks {
        let common = || {
            let mut doc = race_fields.clone();
            doc["task"] = json!(t.record.slot.task);
            doc["operation"] = json!(t.record.slot.operation);
            // runner's own fields, where Rally keeps a task's metadata.
            doc["meta"] = json!({
                "operation-type": t.record.slot.operation_type,
                "sweep": t.sweep_label,
                "backend": race.backend.kind,
            });
            doc
        };
        results.extend(task_results(t, &race.race_id, &common));
        let unit = t.record.slot.throughput_unit.as_str();
        for tr in t.record.complete_trials() {
            let trial_start = tr.started_at.at();
            for (second, units) in tr.throughput_per_second.iter().enumerate() {
                let at = trial_start + chrono::Duration::seconds(second as i64 + 1);
                // A metrics document as Rally's: the unit beside the value.
                let mut doc = common();
                doc["name"] = json!("throughput");
                doc["value"] = json!(*units as f64);
                doc["unit"] = json!(unit);
                doc["@timestamp"] = json!(at.timestamp_millis());
                doc["relative-time"] = json!((at - started).num_milliseconds());
                doc["sample-type"] = json!("normal");
                doc["meta"]["trial"] = json!(tr.trial + 1);
                let id = document_id(
                    &race.race_id,
                    &[
                        "metrics",
                        &t.record.slot.task,
                        &t.sweep_label,
                        "throughput",
                        &tr.trial.to_string(),
                        &second.to_string(),
                    ],
                );
                metrics.push((id, doc));
            }
            if let Some(samples) = &tr.samples {
                let mut base = common();
                base["meta"]["trial"] = json!(tr.trial + 1);
                sampled.push(super::samples::SampledTrial {
                    base,
                    id_parts: [
                        t.record.slot.task.clone(),
                        t.sweep_label.clone(),
                        tr.trial.to_string(),
                    ],
                    race_id: race.race_id.clone(),
                    trial_start,
                    race_start: started,
                    samples: samples.clone(),
                });
            }
        }
    }
    RallyDocuments {
        results_index: format!("rally-results-{month}"),
        metrics_index: format!("rally-metrics-{month}"),
        results,
        metrics,
        sampled,
    }
}

/// The fields every document of a race has, under Rally's names.
fn race_fields(race: &crate::results::RaceRecord) -> Value {
    let flavor = race
        .backend
        .details
        .get("build_flavor")
        .and_then(Value::as_str)
        .unwrap_or(race.backend.kind.as_str());
    let mut doc = json!({
        "rally-version": concat!("runner-", env!("CARGO_PKG_VERSION")),
        "environment": "runner",
        "race-id": race.race_id,
        "race-timestamp": race.started_at.at().format("%Y%m%dT%H%M%SZ").to_string(),
        "track": race.track,
        "challenge": race.challenge,
        "car": "external",
        "distribution-version": race.backend.version,
        "distribution-flavor": flavor,
        "user-tags": race.user_tags,
        "active": true,
    });
    if let Some(major) = major_version(&race.backend.version) {
        doc["distribution-major-version"] = json!(major);
    }
    if !race.params.is_empty() {
        doc["track-params"] = json!(race.params);
    }
    doc
}

/// A task's results documents: throughput, service time, latency, error rate, and the
/// server's counters summed over its complete trials, under Rally's names.
fn task_results(
    t: &crate::report::TaskSummary,
    race_id: &str,
    common: &dyn Fn() -> Value,
) -> Vec<(String, Value)> {
    let result = |name: &str, value: Value| {
        let mut doc = common();
        doc["name"] = json!(name);
        doc["value"] = value;
        let id = document_id(
            race_id,
            &["results", &t.record.slot.task, &t.sweep_label, name],
        );
        (id, doc)
    };
    let mut results = Vec::new();
    let unit = t.record.slot.throughput_unit.as_str();
    if let Some(th) = t.throughput {
        results.push(result(
            "throughput",
            json!({"min": th.min, "mean": th.mean, "median": th.median, "max": th.max, "unit": unit}),
        ));
    }
    results.push(result(
        "service_time",
        percentiles_value(&t.service_time_ms),
    ));
    results.push(result("latency", percentiles_value(&t.latency_ms)));
    results.push(result("error_rate", json!({"single": t.error_rate})));
    for (ours, rallys, unit) in SERVER_METRICS {
        let total: Option<f64> = t
            .record
            .complete_trials()
            .filter_map(|tr| tr.server.as_ref()?.deltas.get(*ours))
            .fold(None, |sum, v| Some(sum.unwrap_or(0.0) + v));
        if let Some(total) = total {
            let mut value = json!({"single": total});
            if !unit.is_empty() {
                value["unit"] = json!(unit);
            }
            results.push(result(rallys, value));
        }
    }
    results
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_stable_and_versions_have_majors() {
        assert_eq!(
            super::document_id("r", &["a", "b"]),
            super::document_id("r", &["a", "b"])
        );
        assert_ne!(
            super::document_id("r", &["a", "b"]),
            super::document_id("r", &["ab", ""])
        );
        assert_eq!(super::major_version("elasticsearch 8.15.0"), Some(8));
        assert_eq!(super::major_version("opensearch 2.11.1"), Some(2));
        assert_eq!(super::major_version("embedded"), None);
    }

    #[test]
    fn percentile_keys_are_rallys() {
        assert_eq!(super::percentile_key(99.9), "99_9");
        assert_eq!(super::percentile_key(50.0), "50_0");
        assert_eq!(super::percentile_key(99.99), "99_99");
        assert_eq!(super::percentile_key(100.0), "100_0");
    }
}
