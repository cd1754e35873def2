//! What the server did during a trial, from its own statistics read before and after (off the
//! measured path): Elasticsearch's `_nodes/stats`, Redis's `INFO`, the embedded engine's
//! indices. Counters become deltas over the trial; gauges are read at its end.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One reading of the server's statistics.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerSnapshot {
    /// Cumulative counters (`cpu_ms`, `gc_young_ms`, `commands`, ...), summed over nodes.
    pub counters: BTreeMap<String, f64>,
    /// Levels (`segments`, `heap_used_bytes`, `used_memory_bytes`, ...).
    pub gauges: BTreeMap<String, f64>,
}

/// The server during one trial.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerUsage {
    /// Between the two readings.
    pub seconds: f64,
    /// How much each counter grew.
    pub deltas: BTreeMap<String, f64>,
    /// Each gauge at the end.
    pub gauges: BTreeMap<String, f64>,
}

impl ServerUsage {
    pub fn between(start: &ServerSnapshot, end: &ServerSnapshot, seconds: f64) -> ServerUsage {
        let deltas = end
            .counters
            .iter()
            .filter_map(|(k, v)| Some((k.clone(), (v - start.counters.get(k)?).max(0.0))))
            .collect();
        ServerUsage {
            seconds,
            deltas,
            gauges: end.gauges.clone(),
        }
    }
}

/// `redis-server`'s INFO text as a snapshot.
pub fn from_redis_info(text: &str) -> ServerSnapshot {
    let field = |name: &str| {
        text.lines().find_map(|l| {
            l.strip_prefix(name)?
                .strip_prefix(':')?
                .trim()
                .parse::<f64>()
                .ok()
        })
    };
    let mut s = ServerSnapshot::default();
    if let (Some(sys), Some(user)) = (field("used_cpu_sys"), field("used_cpu_user")) {
        s.counters.insert("cpu_ms".into(), (sys + user) * 1000.0);
    }
    for (info, name) in [
        ("total_commands_processed", "commands"),
        ("rejected_connections", "rejected_connections"),
        ("keyspace_hits", "keyspace_hits"),
        ("keyspace_misses", "keyspace_misses"),
        ("total_net_input_bytes", "net_input_bytes"),
        ("total_net_output_bytes", "net_output_bytes"),
    ] {
        if let Some(v) = field(info) {
            s.counters.insert(name.into(), v);
        }
    }
    for (info, name) in [
        ("used_memory", "used_memory_bytes"),
        ("connected_clients", "connected_clients"),
    ] {
        if let Some(v) = field(info) {
            s.gauges.insert(name.into(), v);
        }
    }
    s
}

/// Elasticsearch's (or `runner serve`'s) `_nodes/stats` as a snapshot, summed over nodes.
pub fn from_node_stats(v: &serde_json::Value) -> ServerSnapshot {
    let mut s = ServerSnapshot::default();
    let counters: [(&str, &[&str]); 10] = [
        ("cpu_ms", &["process", "cpu", "total_in_millis"]),
        (
            "gc_young_ms",
            &[
                "jvm",
                "gc",
                "collectors",
                "young",
                "collection_time_in_millis",
            ],
        ),
        (
            "gc_old_ms",
            &[
                "jvm",
                "gc",
                "collectors",
                "old",
                "collection_time_in_millis",
            ],
        ),
        (
            "gc_young_count",
            &["jvm", "gc", "collectors", "young", "collection_count"],
        ),
        ("indexing_ops", &["indices", "indexing", "index_total"]),
        (
            "indexing_ms",
            &["indices", "indexing", "index_time_in_millis"],
        ),
        ("search_ops", &["indices", "search", "query_total"]),
        ("search_ms", &["indices", "search", "query_time_in_millis"]),
        ("merges", &["indices", "merges", "total"]),
        ("merge_ms", &["indices", "merges", "total_time_in_millis"]),
    ];
    let gauges: [(&str, &[&str]); 3] = [
        ("segments", &["indices", "segments", "count"]),
        ("docs", &["indices", "docs", "count"]),
        ("heap_used_bytes", &["jvm", "mem", "heap_used_in_bytes"]),
    ];
    for node in v["nodes"].as_object().into_iter().flat_map(|n| n.values()) {
        let at = |path: &[&str]| {
            path.iter()
                .try_fold(node, |v, k| v.get(k))
                .and_then(serde_json::Value::as_f64)
        };
        for (name, path) in counters {
            if let Some(x) = at(path) {
                *s.counters.entry(name.into()).or_insert(0.0) += x;
            }
        }
        for (name, path) in gauges {
            if let Some(x) = at(path) {
                *s.gauges.entry(name.into()).or_insert(0.0) += x;
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_become_deltas_and_gauges_stay_levels() {
        let info = |cmds: u64, cpu: f64| {
            format!("# Stats\r\ntotal_commands_processed:{cmds}\r\nrejected_connections:0\r\n# CPU\r\nused_cpu_sys:{cpu}\r\nused_cpu_user:{cpu}\r\n# Memory\r\nused_memory:1048576\r\n")
        };
        let (a, b) = (
            from_redis_info(&info(100, 1.0)),
            from_redis_info(&info(1100, 1.5)),
        );
        let usage = ServerUsage::between(&a, &b, 2.0);
        assert_eq!(usage.deltas["commands"], 1000.0);
        assert_eq!(
            crate::results::ServerRecord::from(&usage).cpu_cores(),
            Some(0.5),
            "1 s of CPU over 2 s"
        );
        assert_eq!(usage.gauges["used_memory_bytes"], 1048576.0);
        let nodes = serde_json::json!({"nodes": {
            "a": {"process": {"cpu": {"total_in_millis": 500}}, "indices": {"segments": {"count": 3}, "search": {"query_total": 10}}},
            "b": {"process": {"cpu": {"total_in_millis": 700}}, "indices": {"segments": {"count": 4}}}}});
        let s = from_node_stats(&nodes);
        assert_eq!(
            (
                s.counters["cpu_ms"],
                s.gauges["segments"],
                s.counters["search_ops"]
            ),
            (1200.0, 7.0, 10.0)
        );
    }
}
