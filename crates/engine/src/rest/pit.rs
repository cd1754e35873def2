//! Point-in-time APIs, in Elasticsearch's form (`POST <index>/_pit`, `DELETE _pit`) and
//! OpenSearch's (`POST <index>/_search/point_in_time`, `DELETE _search/point_in_time[/_all]`,
//! `GET _search/point_in_time/_all`). A search reads one with `"pit": {"id": ...}`.

use crate::cluster::Engine;
use crate::rest::{param, parse_body, RestResponse};
use crate::search::pit::PitTarget;
use serde_json::{json, Value};

/// Which API shape a request came in.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavor {
    Elasticsearch,
    OpenSearch,
}

impl Engine {
    pub(crate) fn open_pit(&self, names: &str, query: &str, flavor: Flavor) -> RestResponse {
        let Some(keep) = param(query, "keep_alive") else {
            return RestResponse::error(
                400,
                "action_request_validation_exception",
                "Validation Failed: 1: [keep_alive] is not specified;",
            );
        };
        let keep = match crate::util::parse_time(&keep) {
            Ok(k) => k,
            Err(m) => {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!("[keep_alive]: {m}"),
                )
            }
        };
        let targets = match self.snapshots(names) {
            Ok(t) => t,
            Err(r) => return r,
        };
        let shards = targets.len();
        let opened = self
            .state
            .pits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .open(targets, keep);
        let id = match opened {
            Ok(id) => id,
            Err(m) => return RestResponse::error(500, "exception", &m),
        };
        let shards = json!({ "total": shards, "successful": shards, "skipped": 0, "failed": 0 });
        match flavor {
            Flavor::Elasticsearch => {
                RestResponse::json(200, &json!({ "id": id, "_shards": shards }))
            }
            Flavor::OpenSearch => {
                let created = self
                    .state
                    .pits
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .list()
                    .into_iter()
                    .find(|l| l.id == id)
                    .map_or(0, |l| l.created_ms);
                RestResponse::json(
                    200,
                    &json!({ "pit_id": id, "_shards": shards, "creation_time": created }),
                )
            }
        }
    }

    /// The indices `names` reaches (with their alias filters), each with a snapshot to read:
    /// what a search reads, and what a point in time keeps.
    pub(crate) fn snapshots(&self, names: &str) -> Result<Vec<PitTarget>, RestResponse> {
        match self.state.search_targets(names) {
            Ok(t) => t
                .into_iter()
                .map(|(index, filter)| {
                    // A search-idle index with writes pending refreshes first.
                    index
                        .before_search()
                        .map_err(|e| RestResponse::from_error(&e))?;
                    let searcher = index.searcher();
                    Ok(PitTarget {
                        index,
                        filter,
                        searcher,
                    })
                })
                .collect(),
            // In Elasticsearch's words, `no such index [name]`, for the name that is missing.
            Err(e) if e.kind == crate::error::ErrorKind::NotFound => Err(crate::rest::not_found(
                e.message.split('`').nth(1).unwrap_or(names),
            )),
            Err(e) => Err(RestResponse::from_error(&e)),
        }
    }

    /// Closes the points in time a body names (`{"id": ...}`, or OpenSearch's
    /// `{"pit_id": [...]}`), or all of them.
    pub(crate) fn close_pit(&self, body: &[u8], all: bool, flavor: Flavor) -> RestResponse {
        let mut pits = self.state.pits.lock().unwrap_or_else(|p| p.into_inner());
        if all {
            let listed: Vec<String> = pits.list().into_iter().map(|l| l.id).collect();
            pits.close_all();
            let closed: Vec<Value> = listed
                .iter()
                .map(|id| json!({ "pit_id": id, "successful": true }))
                .collect();
            return RestResponse::json(200, &json!({ "pits": closed }));
        }
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let key = match flavor {
            Flavor::Elasticsearch => "id",
            Flavor::OpenSearch => "pit_id",
        };
        let ids: Vec<String> = match body.get(key) {
            Some(Value::String(s)) => vec![s.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => {
                return RestResponse::error(
                    400,
                    "action_request_validation_exception",
                    &format!("Validation Failed: 1: [{key}] is required;"),
                )
            }
        };
        let freed: Vec<(String, bool)> = ids
            .into_iter()
            .map(|id| {
                let ok = pits.close(&id);
                (id, ok)
            })
            .collect();
        match flavor {
            Flavor::Elasticsearch => {
                let n = freed.iter().filter(|(_, ok)| *ok).count();
                let status = if n == 0 { 404 } else { 200 };
                RestResponse::json(status, &json!({ "succeeded": true, "num_freed": n }))
            }
            Flavor::OpenSearch => {
                let pits: Vec<Value> = freed
                    .iter()
                    .map(|(id, ok)| json!({ "pit_id": id, "successful": ok }))
                    .collect();
                RestResponse::json(200, &json!({ "pits": pits }))
            }
        }
    }

    /// OpenSearch's `GET _search/point_in_time/_all`.
    pub(crate) fn list_pits(&self) -> RestResponse {
        let listed = self
            .state
            .pits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .list();
        let pits: Vec<Value> = listed
            .iter()
            .map(|l| json!({ "pit_id": l.id, "creation_time": l.created_ms, "keep_alive": l.keep_alive.as_millis() as u64 }))
            .collect();
        RestResponse::json(200, &json!({ "pits": pits }))
    }
}
