//! Cluster and index administration that Rally tracks call: `_stats`, `_nodes/stats`,
//! cluster and index settings (kept and acknowledged; one in-memory node has nothing they
//! tune), and index templates (applied when an index is created).

use crate::cluster::templates::TemplateKind;
use crate::cluster::Engine;
use crate::index::IndexStats;
use crate::rest::not_found;
use crate::rest::parse_body;
use crate::rest::RestResponse;
use serde_json::{json, Map, Value};

/// An index's (or several together) statistics as Elasticsearch's `_stats` shows them. Every
/// refresh commits here, so `flush` counts the refreshes; merges run when asked
/// (`_forcemerge`), so none is ever current; no translog, no throttling.
pub(crate) fn stats_json(s: IndexStats) -> Value {
    json!({
        "docs": { "count": s.docs, "deleted": s.deleted },
        // Nothing is reserved for incoming recoveries on one node.
        "store": { "size_in_bytes": s.bytes, "total_data_set_size_in_bytes": s.bytes, "reserved_in_bytes": 0 },
        "segments": { "count": s.segments },
        "indexing": { "index_total": s.indexed.count, "index_time_in_millis": s.indexed.millis, "index_current": 0, "throttle_time_in_millis": 0 },
        "refresh": { "total": s.refreshes.count, "total_time_in_millis": s.refreshes.millis },
        "flush": { "total": s.refreshes.count, "total_time_in_millis": s.refreshes.millis },
        "merges": { "current": 0, "total": s.merges.count, "total_time_in_millis": s.merges.millis, "total_throttled_time_in_millis": 0 },
        "search": { "query_total": s.queries.count, "query_time_in_millis": s.queries.millis, "query_current": 0 },
        "translog": { "size_in_bytes": 0, "operations": 0 },
    })
}

/// Nested settings as dotted keys.
fn flatten(v: &Value, prefix: &str, out: &mut Map<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, sub) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(sub, &key, out);
            }
        }
        leaf => {
            out.insert(prefix.to_string(), leaf.clone());
        }
    }
}

fn kind_of(segment: &str) -> TemplateKind {
    match segment {
        "_template" => TemplateKind::Legacy,
        "_index_template" => TemplateKind::Composable,
        _ => TemplateKind::Component,
    }
}

impl Engine {
    /// `POST <index>/_close` and `_open`: a closed index keeps its documents, and every search,
    /// get and write of it is refused (400 `index_closed_exception`) until it is opened; a
    /// wildcard search passes it over.
    pub(crate) fn close_indices(&self, names: &str, close: bool, query: &str) -> RestResponse {
        let allow_no_indices =
            crate::rest::param(query, "allow_no_indices").as_deref() != Some("false");
        let indices = match self.resolve_as(Some(names), allow_no_indices) {
            Ok(i) => i,
            Err(r) => return r,
        };
        for index in &indices {
            if let Err(e) = index.set_closed(close) {
                return RestResponse::from_error(&e);
            }
        }
        let mut answer = json!({ "acknowledged": true, "shards_acknowledged": true });
        if close {
            answer["indices"] = indices
                .iter()
                .map(|i| (i.name.clone(), json!({ "closed": true })))
                .collect::<Map<_, _>>()
                .into();
        }
        RestResponse::json(200, &answer)
    }

    /// `_stats` at `level` `cluster`, `indices` (the default) or `shards` (one primary shard
    /// per index, as here). Closed indices have none: a pattern passes over them, a name is
    /// refused, as Elasticsearch's broadcast requests do.
    pub(crate) fn index_stats(&self, names: Option<&str>, query: &str) -> RestResponse {
        let level = crate::rest::param(query, "level");
        let (per_index, shards) = match level.as_deref() {
            None | Some("indices") => (true, false),
            Some("shards") => (true, true),
            Some("cluster") => (false, false),
            Some(other) => {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!("level parameter must be one of [cluster] or [indices] or [shards] but was [{other}]"),
                )
            }
        };
        let indices = match self.resolve_open(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let mut all = IndexStats::default();
        let mut listed = Map::new();
        for index in &indices {
            let s = index.stats();
            all = all + s;
            let mut entry = json!({ "primaries": stats_json(s), "total": stats_json(s) });
            if shards {
                let mut shard = stats_json(s);
                shard["routing"] =
                    json!({ "state": "STARTED", "primary": true, "node": "runner-0" });
                entry["shards"] = json!({ "0": [shard] });
            }
            listed.insert(index.name.clone(), entry);
        }
        let n = indices.len();
        let mut out = json!({
            "_shards": { "total": n, "successful": n, "failed": 0 },
            "_all": { "primaries": stats_json(all), "total": stats_json(all) },
        });
        if per_index {
            out["indices"] = Value::Object(listed);
        }
        RestResponse::json(200, &out)
    }

    pub(crate) fn put_cluster_settings(&self, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let mut settings = self
            .state
            .cluster_settings
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if settings.is_null() {
            *settings = json!({ "persistent": {}, "transient": {} });
        }
        for scope in ["persistent", "transient"] {
            if let Some(v) = body.get(scope) {
                crate::index::merge(&mut settings[scope], v);
            }
        }
        RestResponse::json(
            200,
            &json!({ "acknowledged": true, "persistent": settings["persistent"], "transient": settings["transient"] }),
        )
    }

    /// The kept settings; `flat_settings` writes their keys dotted (`a.b: 1`), as there.
    pub(crate) fn get_cluster_settings(&self, query: &str) -> RestResponse {
        let settings = self
            .state
            .cluster_settings
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let flat = matches!(
            crate::rest::param(query, "flat_settings").as_deref(),
            Some("" | "true")
        );
        let scope = |name: &str| {
            let v = settings.get(name).cloned().unwrap_or(json!({}));
            if flat {
                let mut out = Map::new();
                flatten(&v, "", &mut out);
                Value::Object(out)
            } else {
                v
            }
        };
        RestResponse::json(
            200,
            &json!({ "persistent": scope("persistent"), "transient": scope("transient") }),
        )
    }

    /// The one node's cluster state, for the metrics it has: `master_node` (and `nodes`).
    pub(crate) fn cluster_state(&self, metrics: Option<&str>) -> RestResponse {
        let mut out = json!({ "cluster_name": "runner", "cluster_uuid": "runner-embedded" });
        for metric in metrics.unwrap_or("_all").split(',') {
            let (master, nodes) = match metric {
                "master_node" => (true, false),
                "nodes" => (false, true),
                "_all" => (true, true),
                other => {
                    return RestResponse::error(
                        400,
                        "illegal_argument_exception",
                        &format!("cluster state metric [{other}] is not answered by runner serve (it answers master_node, nodes)"),
                    )
                }
            };
            if master {
                out["master_node"] = json!("runner-0");
            }
            if nodes {
                out["nodes"] =
                    json!({ "runner-0": { "name": "runner", "transport_address": "127.0.0.1:0" } });
            }
        }
        RestResponse::json(200, &out)
    }

    /// `create=true` refuses to replace a template that exists, as Elasticsearch does.
    pub(crate) fn put_template(
        &self,
        kind: &str,
        name: &str,
        body: &[u8],
        query: &str,
    ) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let create =
            crate::rest::param(query, "create").is_some_and(|v| v == "true" || v.is_empty());
        let mut templates = self
            .state
            .templates
            .write()
            .unwrap_or_else(|p| p.into_inner());
        if create && templates.get(kind_of(kind), name).is_some() {
            let what = if kind == "_component_template" {
                "component template"
            } else {
                "index template"
            };
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("{what} [{name}] already exists"),
            );
        }
        match templates.put(kind_of(kind), name, body) {
            Ok(()) => RestResponse::json(200, &json!({ "acknowledged": true })),
            Err(m) => RestResponse::error(400, "action_request_validation_exception", &m),
        }
    }

    pub(crate) fn delete_template(&self, kind: &str, name: &str) -> RestResponse {
        if self
            .state
            .templates
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .delete(kind_of(kind), name)
        {
            RestResponse::json(200, &json!({ "acknowledged": true }))
        } else {
            RestResponse::error(
                404,
                "resource_not_found_exception",
                &format!("index template matching [{name}] not found"),
            )
        }
    }

    /// Templates by name, a comma list or a pattern (all without one); a name that matches
    /// nothing is a 404, a pattern an empty answer, as in Elasticsearch.
    pub(crate) fn get_template(&self, kind: &str, names: Option<&str>) -> RestResponse {
        let templates = self
            .state
            .templates
            .read()
            .unwrap_or_else(|p| p.into_inner());
        let found = templates.matching(kind_of(kind), names.unwrap_or("*"));
        if found.is_empty() {
            if let Some(name) = names.filter(|n| !n.contains('*')) {
                return not_found(name);
            }
        }
        let listed = |key: &str| -> Vec<Value> {
            found
                .iter()
                .map(|(n, t)| json!({ "name": n, key: t }))
                .collect()
        };
        let body = match kind {
            "_template" => Value::Object(
                found
                    .iter()
                    .map(|(n, t)| (n.to_string(), (*t).clone()))
                    .collect(),
            ),
            "_index_template" => json!({ "index_templates": listed("index_template") }),
            _ => json!({ "component_templates": listed("component_template") }),
        };
        RestResponse::json(200, &body)
    }
}
