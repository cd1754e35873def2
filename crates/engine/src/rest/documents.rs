//! Document APIs: `_doc` get, put and delete, `_create`, and `_bulk` (run by the engine's bulk
//! module, single-document writes too).

use crate::bulk::{Item, Verb};
use crate::cluster::Engine;
use crate::rest::not_found;
use crate::rest::RestResponse;
use serde_json::json;
use std::borrow::Cow;
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

    /// One document written (`_doc`, `_create`) or deleted, as a bulk item of its own: the
    /// same pipelines, write blocks, aliases, auto-created indices, results and conflicts.
    pub(crate) fn write_doc(
        &self,
        name: &str,
        id: Option<&str>,
        verb: Verb,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let Ok(source) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the document is not UTF-8");
        };
        let verb = match (verb, crate::rest::param(query, "op_type").as_deref()) {
            (Verb::Index, Some("create")) => Verb::Create,
            (v, None | Some("index")) | (v @ Verb::Create, Some("create")) => v,
            (_, Some(other)) => {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!("opType must be 'create' or 'index', found: [{other}]"),
                )
            }
        };
        let item = Item {
            verb,
            index: Some(Cow::Borrowed(name)),
            id: id.map(Cow::Borrowed),
            body: (verb != Verb::Delete).then(|| source.trim()),
            pipeline: None,
        };
        let pipeline = crate::rest::param(query, "pipeline");
        let mut answer = None;
        let run = self.state.bulk(
            None,
            pipeline.as_deref(),
            std::iter::once(Ok(item)),
            |index, _, _, result| {
                answer = Some((index.to_string(), result));
            },
        );
        let (index, result) = match (run, answer) {
            (Ok(()), Some(a)) => a,
            (Err(m), _) => {
                return RestResponse::error(400, "illegal_argument_exception", &m.message)
            }
            (Ok(()), None) => {
                return RestResponse::error(500, "exception", "the write was not run")
            }
        };
        match result {
            Ok((id, done)) => {
                if let Some(r) = self.refresh_if_asked(query, &index) {
                    return r;
                }
                RestResponse::json(
                    done.status(),
                    &json!({ "_index": index, "_id": id, "_version": 1, "result": done.as_str(), "_shards": { "total": 1, "successful": 1, "failed": 0 } }),
                )
            }
            Err(e) => RestResponse::error(e.status, e.kind, &e.reason),
        }
    }

    /// `?refresh` (`true`, `wait_for` or bare) makes the write searchable at once.
    fn refresh_if_asked(&self, query: &str, index: &str) -> Option<RestResponse> {
        match crate::rest::param(query, "refresh").as_deref() {
            Some("" | "true" | "wait_for") => match self.index(index).map(|i| i.refresh()) {
                Some(Err(e)) => Some(RestResponse::from_error(&e)),
                _ => None,
            },
            _ => None,
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
        let run = self.state.bulk(default.as_ref(), crate::rest::param(query, "pipeline").as_deref(), crate::bulk::items(text), |index, verb, id, result| {
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
        for name in &written {
            if let Some(r) = self.refresh_if_asked(query, name) {
                return r;
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
