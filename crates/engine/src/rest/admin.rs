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

fn stats_json(s: IndexStats) -> Value {
    json!({
        "docs": { "count": s.docs, "deleted": s.deleted },
        "store": { "size_in_bytes": s.bytes },
        "segments": { "count": s.segments },
    })
}

fn kind_of(segment: &str) -> TemplateKind {
    match segment {
        "_template" => TemplateKind::Legacy,
        "_index_template" => TemplateKind::Composable,
        _ => TemplateKind::Component,
    }
}

impl Engine {
    pub(crate) fn index_stats(&self, names: Option<&str>) -> RestResponse {
        let indices = match self.resolve(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let mut all = IndexStats::default();
        let mut per_index = Map::new();
        for index in &indices {
            let s = index.stats();
            all = IndexStats {
                docs: all.docs + s.docs,
                deleted: all.deleted + s.deleted,
                segments: all.segments + s.segments,
                bytes: all.bytes + s.bytes,
            };
            per_index.insert(
                index.name.clone(),
                json!({ "primaries": stats_json(s), "total": stats_json(s) }),
            );
        }
        let n = indices.len();
        RestResponse::json(
            200,
            &json!({
                "_shards": { "total": n, "successful": n, "failed": 0 },
                "_all": { "primaries": stats_json(all), "total": stats_json(all) },
                "indices": per_index,
            }),
        )
    }

    pub(crate) fn node_stats(&self) -> RestResponse {
        let mut all = IndexStats::default();
        for index in self.resolve(None).unwrap_or_default() {
            let s = index.stats();
            all = IndexStats {
                docs: all.docs + s.docs,
                deleted: all.deleted + s.deleted,
                segments: all.segments + s.segments,
                bytes: all.bytes + s.bytes,
            };
        }
        RestResponse::json(
            200,
            &json!({
                "_nodes": { "total": 1, "successful": 1, "failed": 0 },
                "cluster_name": "runner",
                "nodes": { "runner-0": {
                    "name": "runner",
                    "roles": ["data", "master"],
                    "indices": stats_json(all),
                    // This process's CPU time, as Elasticsearch reports its own.
                    "process": { "cpu": { "total_in_millis": crate::util::cpu_time().as_millis() as u64 } },
                } },
            }),
        )
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

    pub(crate) fn get_cluster_settings(&self) -> RestResponse {
        let settings = self
            .state
            .cluster_settings
            .read()
            .unwrap_or_else(|p| p.into_inner());
        RestResponse::json(
            200,
            &json!({ "persistent": settings.get("persistent").cloned().unwrap_or(json!({})), "transient": settings.get("transient").cloned().unwrap_or(json!({})) }),
        )
    }

    pub(crate) fn put_template(&self, kind: &str, name: &str, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        match self
            .state
            .templates
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .put(kind_of(kind), name, body)
        {
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

    pub(crate) fn get_template(&self, kind: &str, name: &str) -> RestResponse {
        let templates = self
            .state
            .templates
            .read()
            .unwrap_or_else(|p| p.into_inner());
        match templates.get(kind_of(kind), name) {
            Some(t) if kind == "_template" => RestResponse::json(200, &json!({ name: t })),
            Some(t) if kind == "_index_template" => RestResponse::json(
                200,
                &json!({ "index_templates": [{ "name": name, "index_template": t }] }),
            ),
            Some(t) => RestResponse::json(
                200,
                &json!({ "component_templates": [{ "name": name, "component_template": t }] }),
            ),
            None => not_found(name),
        }
    }
}
