//! Document APIs: `_doc` get and put, and `_bulk` (run by the engine's bulk module).

use crate::cluster::Engine;
use crate::rest::not_found;
use crate::rest::RestResponse;
use serde_json::json;
use std::fmt::Write as _;
use std::time::Instant;

impl Engine {
    pub(crate) fn get_doc(&self, name: &str, id: &str) -> RestResponse {
        let Some(index) = self.index(name) else {
            return not_found(name);
        };
        // A realtime get: documents written since the last refresh are found.
        match index.current_source(id) {
            Ok(Some(source)) => {
                let mut out = format!(
                    r#"{{"_index":{},"_id":{},"_version":1,"found":true,"_source":"#,
                    json!(name),
                    json!(id)
                )
                .into_bytes();
                out.extend_from_slice(source.as_bytes());
                out.push(b'}');
                RestResponse {
                    status: 200,
                    body: out,
                }
            }
            Ok(None) => {
                RestResponse::json(404, &json!({ "_index": name, "_id": id, "found": false }))
            }
            Err(e) => RestResponse::from_error(&e),
        }
    }

    pub(crate) fn put_doc(&self, name: &str, id: Option<&str>, body: &[u8]) -> RestResponse {
        let Some(index) = self.index(name) else {
            return not_found(name);
        };
        let Ok(source) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the document is not UTF-8");
        };
        match index.index_one(id, source.trim()) {
            Ok(done) => RestResponse::json(
                if id.is_some() { 200 } else { 201 },
                &json!({ "_index": name, "_id": done.id, "_version": 1, "result": if id.is_some() { "updated" } else { "created" }, "_shards": { "total": 1, "successful": 1, "failed": 0 } }),
            ),
            Err(e) => RestResponse::error(400, "document_parsing_exception", &e.message),
        }
    }

    /// `_bulk`: NDJSON action lines (index, create, update, delete), each but delete followed
    /// by its document. Items fail alone, as in Elasticsearch; the request fails only if it
    /// cannot be read. `?refresh` (true or wait_for) makes what it wrote searchable at once.
    pub(crate) fn bulk_request(
        &self,
        default_index: Option<&str>,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let started = Instant::now();
        let Ok(text) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the bulk body is not UTF-8");
        };
        let default = match default_index {
            Some(name) => match self.state.writable_index(name, crate::bulk::Verb::Index) {
                Some(i) => Some(i),
                None => return not_found(name),
            },
            None => None,
        };
        let mut items = String::with_capacity(64 * 1024);
        let mut errors = false;
        let mut written: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
        let run = self.state.bulk(default.as_ref(), crate::rest::param(query, "pipeline"), crate::bulk::items(text), |index, verb, id, result| {
            if result.is_ok() && !written.contains(index) {
                written.insert(index.to_string());
            }
            if !items.is_empty() {
                items.push(',');
            }
            let verb = verb.as_str();
            match result {
                Ok((id, done)) => {
                    let _ = write!(items, r#"{{"{verb}":{{"_index":{},"_id":{},"_version":1,"result":"{}","status":{}}}}}"#, json!(index), json!(id), done.as_str(), done.status());
                }
                Err(e) => {
                    errors = true;
                    let _ = write!(
                        items,
                        r#"{{"{verb}":{{"_index":{},"_id":{},"status":{},"error":{{"type":"{}","reason":{}}}}}}}"#,
                        json!(index),
                        json!(id),
                        e.status,
                        e.kind,
                        json!(e.reason)
                    );
                }
            }
        });
        if let Err(m) = run {
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("line {}: {}", m.line, m.message),
            );
        }
        if matches!(
            crate::rest::param(query, "refresh"),
            Some("" | "true" | "wait_for")
        ) {
            for name in &written {
                if let Some(Err(e)) = self.index(name).map(|i| i.refresh()) {
                    return RestResponse::from_error(&e);
                }
            }
        }
        let mut out = format!(
            r#"{{"took":{},"errors":{errors},"items":["#,
            started.elapsed().as_millis()
        );
        out.push_str(&items);
        out.push_str("]}");
        RestResponse {
            status: 200,
            body: out.into_bytes(),
        }
    }
}
