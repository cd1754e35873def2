//! `_nodes` info and stats, shaped as Elasticsearch's for the one node the engine is: the
//! fields Rally's always-on telemetry reads (name, host, `jvm.gc.collectors`, `jvm.mem.pools`,
//! `ingest`, `os`, `plugins`, `attributes`) are there. The numbers are the engine's own where
//! they mean something (indices, CPU time, resident memory, ingest counts); a Rust process has
//! no garbage collector and no JVM memory pools, so those maps are empty rather than made up.

use crate::cluster::Engine;
use crate::index::IndexStats;
use crate::rest::RestResponse;
use serde_json::json;

pub(crate) const NODE_ID: &str = "runner-0";

/// This process's resident memory (Linux), or 0.
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// A `_nodes` answer of the one node: `node(fields)` under its id.
fn nodes_answer(fields: serde_json::Value) -> RestResponse {
    RestResponse::json(
        200,
        &json!({
            "_nodes": { "total": 1, "successful": 1, "failed": 0 },
            "cluster_name": "runner",
            "nodes": { NODE_ID: node(fields) },
        }),
    )
}

/// The node's name and addresses, with `rest` beside them.
fn node(mut rest: serde_json::Value) -> serde_json::Value {
    for (k, v) in [
        ("name", json!("runner")),
        ("host", json!("127.0.0.1")),
        ("ip", json!("127.0.0.1")),
        ("transport_address", json!("127.0.0.1:0")),
        ("roles", json!(["data", "ingest", "master"])),
    ] {
        rest[k] = v;
    }
    rest
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

impl Engine {
    /// Every index's statistics together.
    pub(crate) fn all_index_stats(&self) -> IndexStats {
        self.resolve(None)
            .unwrap_or_default()
            .iter()
            .fold(IndexStats::default(), |all, index| all + index.stats())
    }

    pub(crate) fn node_stats(&self) -> RestResponse {
        let ingest = self
            .state
            .pipelines
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .stats();
        let rss = resident_bytes();
        nodes_answer(json!({
                    "indices": crate::rest::admin::stats_json(self.all_index_stats()),
                    // This process's CPU time and memory, as Elasticsearch reports its own.
                    "process": {
                        "cpu": { "total_in_millis": crate::util::cpu_time().as_millis() as u64 },
                    },
                    "jvm": {
                        "mem": { "heap_used_in_bytes": rss, "pools": {} },
                        // Elasticsearch's two collectors, which drivers read (OSB's
                        // telemetry): nothing collected, the engine has no garbage collector.
                        "gc": { "collectors": {
                            "young": { "collection_count": 0, "collection_time_in_millis": 0 },
                            "old": { "collection_count": 0, "collection_time_in_millis": 0 },
                        } },
                        "buffer_pools": {},
                    },
                    "os": { "available_processors": cores() },
                    "ingest": ingest,
            "thread_pool": {},
        }))
    }

    pub(crate) fn node_info(&self) -> RestResponse {
        nodes_answer(json!({
                    "version": crate::rest::COMPATIBLE_VERSION,
                    "build_flavor": "runner-embedded",
                    "os": {
                        "name": std::env::consts::OS,
                        "arch": std::env::consts::ARCH,
                        "available_processors": cores(),
                    },
                    // No JVM: the engine is a Rust process.
                    "jvm": { "vm_vendor": "none (runner's engine is not a JVM)", "version": "none" },
                    "plugins": [],
                    "modules": [],
            "attributes": {},
        }))
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;

    /// What Rally's always-on telemetry reads is there, with the keys it indexes by.
    #[test]
    fn rallys_telemetry_finds_what_it_reads() {
        let b = Engine::new();
        let pipeline = r#"{"processors": [{"set": {"field": "x", "value": 1}}]}"#;
        assert_eq!(call(&b, "PUT", "/_ingest/pipeline/p", pipeline).0, 200);
        let bulk = "{\"index\":{\"_index\":\"i\"}}\n{\"a\":1}\n";
        assert_eq!(
            call(&b, "POST", "/_bulk?pipeline=p&refresh=true", bulk).0,
            200
        );
        for path in [
            "/_nodes/stats",
            "/_nodes/stats/_all",
            "/_nodes/stats/jvm",
            "/_nodes/_all/stats/ingest",
        ] {
            let (s, r) = call(&b, "GET", path, "");
            assert_eq!(s, 200, "{path}");
            let node = &r["nodes"]["runner-0"];
            assert!(node["jvm"]["gc"]["collectors"].is_object(), "{path}");
            assert!(node["jvm"]["mem"]["pools"].is_object(), "{path}");
            assert_eq!(node["ingest"]["total"]["count"], 1, "{path}");
            let p = &node["ingest"]["pipelines"]["p"];
            assert_eq!(p["count"], 1);
            assert_eq!(p["processors"][0]["set"]["stats"]["count"], 1);
        }
        for path in ["/_nodes", "/_nodes/_all", "/_nodes/_all/os"] {
            let (s, r) = call(&b, "GET", path, "");
            assert_eq!(s, 200, "{path}");
            let node = &r["nodes"]["runner-0"];
            assert!(node["os"]["available_processors"].as_u64().unwrap() >= 1);
            assert!(node["plugins"].is_array() && node["attributes"].is_object());
        }
        let (s, r) = call(&b, "GET", "/_stats/_all?level=shards", "");
        assert_eq!(s, 200);
        assert_eq!(r["_all"]["primaries"]["docs"]["count"], 1);
        // What Rally's wait-for-merges and index-time summaries read.
        assert_eq!(r["_all"]["total"]["merges"]["current"], 0);
        assert_eq!(r["_all"]["primaries"]["indexing"]["index_total"], 1);
        assert_eq!(r["_all"]["primaries"]["refresh"]["total"], 1);
        assert_eq!(
            r["indices"]["i"]["shards"]["0"][0]["routing"]["primary"],
            true
        );
        assert_eq!(call(&b, "GET", "/_all/_stats/_all", "").0, 200);
        // Rally's delete-index reads a setting flat; its master-node telemetry the master.
        let body = r#"{"persistent": {"action": {"destructive_requires_name": "true"}}}"#;
        assert_eq!(call(&b, "PUT", "/_cluster/settings", body).0, 200);
        let (_, r) = call(&b, "GET", "/_cluster/settings?flat_settings=true", "");
        assert_eq!(r["persistent"]["action.destructive_requires_name"], "true");
        let (_, r) = call(&b, "GET", "/_cluster/state/master_node", "");
        assert_eq!(r["master_node"], "runner-0");
        assert_eq!(call(&b, "GET", "/_cluster/state/routing_table", "").0, 400);
        assert_eq!(call(&b, "GET", "/_stats?level=nodes", "").0, 400);
    }
}
