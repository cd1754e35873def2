//! Metric documents as races: grouped by race, each task's throughput, service time, latency
//! and error rate as one trial, written in the stored race format (the results module's own
//! types read it, with their defaults). Rally's field names and OSB's are both read.

use crate::results::RaceRecord;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// A race read out of a metrics store.
pub struct Imported {
    pub record: RaceRecord,
    /// Its id in the store it came from.
    pub source_id: String,
}

/// The first of several field names a document has (Rally's, then OSB's).
fn field<'a>(doc: &'a Value, names: &[&str]) -> Option<&'a Value> {
    names
        .iter()
        .find_map(|n| doc.get(*n).filter(|v| !v.is_null()))
}

fn text(doc: &Value, names: &[&str]) -> Option<String> {
    field(doc, names)
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// One task's metrics, as the store kept them.
#[derive(Default)]
struct TaskMetrics {
    operation: String,
    operation_type: String,
    throughput: Option<Value>,
    service_time: Option<Value>,
    latency: Option<Value>,
    error_rate: Option<f64>,
}

/// One race's documents.
#[derive(Default)]
struct RaceDocs {
    tool: &'static str,
    index: String,
    timestamp: String,
    track: String,
    challenge: String,
    version: String,
    user_tags: Map<String, Value>,
    params: Map<String, Value>,
    tasks: BTreeMap<String, TaskMetrics>,
}

/// The races the documents hold, oldest first; `from` is the store's (masked) address.
pub fn races_of(docs: &[(String, Value)], from: &str) -> Result<Vec<Imported>, String> {
    let mut races: BTreeMap<String, RaceDocs> = BTreeMap::new();
    for (index, doc) in docs {
        let Some(id) = text(doc, &["race-id", "test-execution-id"]) else {
            continue;
        };
        let race = races.entry(id).or_default();
        race.tool = if index.starts_with("benchmark-") {
            "OpenSearch Benchmark"
        } else {
            "Rally"
        };
        if race.index.is_empty()
            || index.starts_with("rally-results")
            || index.starts_with("benchmark-results")
        {
            race.index.clone_from(index);
        }
        fill_meta(race, doc);
        if let Some(ops) = doc["results"]["op_metrics"].as_array() {
            for op in ops {
                take_op_metrics(race, op);
            }
        } else {
            take_result(race, doc);
        }
    }
    let mut out: Vec<Imported> = races
        .into_iter()
        .filter(|(_, r)| !r.tasks.is_empty())
        .map(|(id, r)| {
            record(&id, r, from).map(|record| Imported {
                record,
                source_id: id,
            })
        })
        .collect::<Result<_, _>>()?;
    out.sort_by_key(|r| r.record.started_at.at);
    Ok(out)
}

fn fill_meta(race: &mut RaceDocs, doc: &Value) {
    let set = |slot: &mut String, names: &[&str]| {
        if slot.is_empty() {
            if let Some(v) = text(doc, names) {
                *slot = v;
            }
        }
    };
    set(
        &mut race.timestamp,
        &["race-timestamp", "test-execution-timestamp"],
    );
    set(&mut race.track, &["track", "workload"]);
    set(
        &mut race.challenge,
        &["challenge", "test_procedure", "test-procedure"],
    );
    set(&mut race.version, &["distribution-version"]);
    if let Some(Value::Object(tags)) = field(doc, &["user-tags", "user-tag"]) {
        race.user_tags.extend(tags.clone());
    }
    if let Some(Value::Object(p)) = field(doc, &["track-params", "workload-params"]) {
        race.params.extend(p.clone());
    }
}

/// A `rally-results` (or `benchmark-results`) document: one metric of one task.
fn take_result(race: &mut RaceDocs, doc: &Value) {
    let (Some(task), Some(name)) = (text(doc, &["task"]), text(doc, &["name"])) else {
        return;
    };
    let t = race.tasks.entry(task.clone()).or_default();
    t.operation = text(doc, &["operation"]).unwrap_or(task);
    t.operation_type = text(doc, &["operation-type"]).unwrap_or_default();
    let value = doc["value"].clone();
    match name.as_str() {
        "throughput" => t.throughput = Some(value),
        "service_time" => t.service_time = Some(value),
        "latency" => t.latency = Some(value),
        "error_rate" => t.error_rate = value["single"].as_f64().or(value.as_f64()),
        _ => {}
    }
}

/// An entry of a `rally-races` document's `results.op_metrics`: every metric of one task.
fn take_op_metrics(race: &mut RaceDocs, op: &Value) {
    let Some(task) = text(op, &["task"]) else {
        return;
    };
    let t = race.tasks.entry(task.clone()).or_default();
    if t.throughput.is_some() {
        return; // The results documents already gave this task.
    }
    t.operation = text(op, &["operation"]).unwrap_or(task);
    t.operation_type = text(op, &["operation-type"]).unwrap_or_default();
    t.throughput = op.get("throughput").cloned();
    t.service_time = op.get("service_time").cloned();
    t.latency = op.get("latency").cloned();
    t.error_rate = op["error_rate"].as_f64();
}

/// Rally's percentile keys and ours.
const KEYS: [(&str, &str, f64); 7] = [
    ("50_0", "p50", 50.0),
    ("90_0", "p90", 90.0),
    ("95_0", "p95", 95.0),
    ("99_0", "p99", 99.0),
    ("99_9", "p99.9", 99.9),
    ("99_99", "p99.99", 99.99),
    ("100_0", "p100", 100.0),
];

/// Stored percentiles in our wire shape. The store keeps no sample count: the count given is
/// the smallest that supports the highest percentile it kept (p99.9 needs 1,000).
fn percentiles(v: Option<&Value>) -> Value {
    let Some(v) = v else {
        return json!({"count": 0, "min": 0.0, "mean": 0.0, "stddev": 0.0});
    };
    let ms = |x: &Value| {
        x.as_f64()
            .map(|f| if v["unit"] == "s" { f * 1000.0 } else { f })
    };
    let mut out = Map::new();
    let mut count = 0u64;
    for (theirs, ours, q) in KEYS {
        let value = v.get(theirs).and_then(ms);
        if value.is_some() {
            let needed = if q >= 100.0 {
                1
            } else {
                (1.0 / (1.0 - q / 100.0)).round() as u64
            };
            count = count.max(needed);
        }
        out.insert(ours.into(), json!(value));
    }
    out.insert("count".into(), json!(count));
    out.insert(
        "min".into(),
        json!(v.get("min").and_then(ms).unwrap_or(0.0)),
    );
    out.insert(
        "mean".into(),
        json!(v.get("mean").and_then(ms).unwrap_or(0.0)),
    );
    out.insert("stddev".into(), json!(0.0));
    Value::Object(out)
}

fn record(id: &str, r: RaceDocs, from: &str) -> Result<RaceRecord, String> {
    let at = chrono::NaiveDateTime::parse_from_str(&r.timestamp, "%Y%m%dT%H%M%SZ")
        .map_err(|e| format!("race {id}: timestamp `{}`: {e}", r.timestamp))?
        .and_utc();
    let started = at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let digest = crate::units::fnv1a_hex(id.as_bytes());
    let tasks: Vec<Value> = r
        .tasks
        .iter()
        .map(|(name, t)| {
            let unit = match t.throughput.as_ref().and_then(|v| v["unit"].as_str()) {
                Some("docs/s") => "docs/s",
                Some("pages/s") => "pages/s",
                _ => "ops/s",
            };
            json!({
                "task": name, "operation": t.operation, "operation_type": t.operation_type,
                "sweep": {}, "clients": 0, "target_throughput": null, "schedule": "unthrottled",
                "throughput_unit": unit, "planned_trials": 1,
                "trials": [{
                    "trial": 0, "started_at": started, "wall_seconds": 0.0, "interrupted": false, "imported": true,
                    "throughput": t.throughput.as_ref().and_then(|v| v["median"].as_f64().or(v["mean"].as_f64())).unwrap_or(0.0),
                    "measured_seconds": 0.0, "operations": 0, "warmup_operations": 0,
                    "successes": 0, "errors": 0, "errors_by_kind": {},
                    "error_rate": t.error_rate.unwrap_or(0.0), "units": 0, "hits": 0,
                    "service_time_ms": percentiles(t.service_time.as_ref()),
                    "latency_ms": percentiles(t.latency.as_ref()),
                    "throughput_per_second": []
                }]
            })
        })
        .collect();
    let doc = json!({
        "format": crate::results::FORMAT_VERSION,
        "race_id": format!("{}.000000Z-imported-{}", at.format("%Y%m%dT%H%M%S"), &digest[..8]),
        "status": "completed",
        "started_at": started,
        "finished_at": started,
        "track": r.track,
        "track_path": format!("{} ({})", r.index, r.tool),
        "challenge": r.challenge,
        "test_mode": false,
        "params": r.params,
        "backend": {"kind": "imported", "version": r.version, "details": {}},
        "target_hosts": [],
        "on_error": "continue",
        "user_tags": r.user_tags,
        "host": {"hostname": "", "os": "", "arch": "", "cpus": 0, "memory_bytes": null, "runner_version": ""},
        "deviations": [format!(
            "imported from {}'s metrics store at {from} ({}, race {id}): no histograms; percentiles, throughput and error rates as the store kept them; sample counts unknown",
            r.tool, r.index
        )],
        "tasks": tasks,
    });
    serde_json::from_value(doc).map_err(|e| format!("race {id}: {e}"))
}
