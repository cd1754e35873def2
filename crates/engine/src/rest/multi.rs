//! Requests of several in one: `_msearch` (NDJSON header and body pairs, each searched as a
//! `_search` of its own) and `_mget` (documents by index and id, each got as `_doc` is).

use crate::cluster::Engine;
use crate::rest::documents::GetOptions;
use crate::rest::{parse_body, RestResponse};
use crate::search::source::SourceFilter;
use serde_json::{json, Value};
use std::time::Instant;

/// Searches one `_msearch` request may hold, bounded before any is run.
const MAX_SEARCHES: usize = 10_000;

/// Header keys a search of an `_msearch` runs (as its URL parameters, or its target).
const HEADER_KEYS: [&str; 6] = [
    "index",
    "preference",
    "request_cache",
    "search_type",
    "ignore_unavailable",
    "allow_no_indices",
];

impl Engine {
    pub(crate) fn multi_search(
        &self,
        default: Option<&str>,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let started = Instant::now();
        let Ok(text) = std::str::from_utf8(body) else {
            return RestResponse::error(400, "parse_exception", "the msearch body is not UTF-8");
        };
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        if lines.len() % 2 != 0 || lines.len() / 2 > MAX_SEARCHES {
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("an msearch body is header and body lines in pairs, at most {MAX_SEARCHES} of them"),
            );
        }
        if let Some(r) = inaccurate_int_total(query, &lines) {
            return r;
        }
        // A search of a point in time names no index; Elasticsearch validates that for the
        // whole request before running any.
        let pit_with_index = lines.chunks(2).any(|pair| {
            let header: Value = serde_json::from_str(pair[0]).unwrap_or(Value::Null);
            let body: Value = serde_json::from_str(pair[1]).unwrap_or(Value::Null);
            body.get("pit").is_some() && (header.get("index").is_some() || default.is_some())
        });
        if pit_with_index {
            return RestResponse::error(400, "action_request_validation_exception", "Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index with point in time.;");
        }
        let mut responses = Vec::with_capacity(lines.len() / 2);
        for pair in lines.chunks(2) {
            let header: Value = match serde_json::from_str(pair[0]) {
                Ok(h) => h,
                Err(e) => {
                    return RestResponse::error(
                        400,
                        "parse_exception",
                        &format!("msearch header: {e}"),
                    )
                }
            };
            if let Some(k) = header
                .as_object()
                .and_then(|h| h.keys().find(|k| !HEADER_KEYS.contains(&k.as_str())))
            {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    &format!(
                        "msearch header key [{k}] is not run by runner serve (it runs {})",
                        HEADER_KEYS.join(", ")
                    ),
                );
            }
            let index = match header.get("index") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(list)) => list
                    .iter()
                    .filter_map(Value::as_str)
                    .collect::<Vec<_>>()
                    .join(","),
                _ => default.unwrap_or("_all").to_string(),
            };
            let answer = self.search(&index, query, pair[1].as_bytes(), false);
            let mut item: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
            item["status"] = json!(answer.status);
            responses.push(item);
        }
        RestResponse::json(
            200,
            &json!({ "took": started.elapsed().as_millis() as u64, "responses": responses }),
        )
    }

    /// `_mget`: `{"docs": [{"_index", "_id", "_source", "stored_fields", "version"}]}`, or
    /// `{"ids": [..]}` with the index in the path; the URL's `_source*` and `stored_fields`
    /// apply to documents that do not say.
    pub(crate) fn multi_get(
        &self,
        default: Option<&str>,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let defaults = match GetOptions::from_query(query) {
            Ok(o) => o,
            Err(r) => return r,
        };
        let invalid = |m: String| {
            RestResponse::error(
                400,
                "action_request_validation_exception",
                &format!("Validation Failed: {m}"),
            )
        };
        let id_text = |v: &Value| match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        };
        let mut wanted: Vec<(String, String, Option<GetOptions>)> = Vec::new();
        match (body.get("docs"), body.get("ids")) {
            (Some(Value::Array(docs)), None) => {
                let mut problems = Vec::new();
                for (i, d) in docs.iter().enumerate() {
                    if let Some(k) = d
                        .as_object()
                        .and_then(|o| o.keys().find(|k| !DOC_KEYS.contains(&k.as_str())))
                    {
                        return RestResponse::error(400, "illegal_argument_exception", &format!("mget document option [{k}] is not run by runner serve (it runs {})", DOC_KEYS.join(", ")));
                    }
                    let index = d.get("_index").and_then(Value::as_str).or(default);
                    let id = d.get("_id").and_then(id_text);
                    if index.is_none() {
                        problems.push(format!(
                            "{}: index is missing for doc {i};",
                            problems.len() + 1
                        ));
                    }
                    if id.is_none() {
                        problems.push(format!(
                            "{}: id is missing for doc {i};",
                            problems.len() + 1
                        ));
                    }
                    let options = match doc_options(d) {
                        Ok(o) => o,
                        Err(m) => {
                            return RestResponse::error(400, "illegal_argument_exception", &m)
                        }
                    };
                    wanted.push((
                        index.unwrap_or("").to_string(),
                        id.unwrap_or_default(),
                        options,
                    ));
                }
                if !problems.is_empty() {
                    return invalid(problems.join(" "));
                }
            }
            (None, Some(Value::Array(ids))) => {
                let Some(index) = default else {
                    return invalid("1: index is missing for doc 0;".into());
                };
                for id in ids {
                    let Some(id) = id_text(id) else {
                        return RestResponse::error(
                            400,
                            "illegal_argument_exception",
                            &format!("mget id {id} is not a string or a number"),
                        );
                    };
                    wanted.push((index.to_string(), id, None));
                }
            }
            _ => {}
        }
        if wanted.is_empty() {
            return invalid("1: no documents to get;".into());
        }
        let docs: Vec<Value> = wanted
            .iter()
            .map(|(index, id, options)| {
                let answer = self.fetch_doc(index, id, options.as_ref().unwrap_or(&defaults));
                let mut doc: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
                if answer.status >= 400 && doc.get("error").is_some() {
                    doc = json!({ "_index": index, "_id": id, "error": doc["error"] });
                }
                doc
            })
            .collect();
        RestResponse::json(200, &json!({ "docs": docs }))
    }
}

/// With `rest_total_hits_as_int`, a search whose `track_total_hits` is not exact fails the
/// whole request, as in Elasticsearch.
fn inaccurate_int_total(query: &str, lines: &[&str]) -> Option<RestResponse> {
    if crate::rest::param(query, "rest_total_hits_as_int").as_deref() != Some("true") {
        return None;
    }
    lines.chunks(2).find_map(|pair| {
        let body: Value = serde_json::from_str(pair.get(1)?).ok()?;
        let track = body.get("track_total_hits")?;
        let exact = track == &Value::Bool(true) || track.as_i64() == Some(-1);
        (!exact).then(|| {
            RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got {track}"),
            )
        })
    })
}

/// The keys of an mget document that runner serve runs (`routing` picks a shard, and there is
/// one).
const DOC_KEYS: [&str; 7] = [
    "_index",
    "_id",
    "_source",
    "stored_fields",
    "version",
    "version_type",
    "routing",
];

/// An mget document's own options; None when it names none (the URL's apply).
fn doc_options(d: &Value) -> Result<Option<GetOptions>, String> {
    if ["_source", "stored_fields", "version"]
        .iter()
        .all(|k| d.get(k).is_none())
    {
        return Ok(None);
    }
    let stored_fields = match d.get("stored_fields") {
        None => Vec::new(),
        Some(Value::String(s)) => s.split(',').map(str::to_string).collect(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Some(other) => return Err(format!("mget `stored_fields`: {other} is not a field list")),
    };
    Ok(Some(GetOptions {
        source: SourceFilter::parse(d.get("_source"))?,
        stored_fields,
        version: d.get("version").and_then(Value::as_u64),
    }))
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;

    #[test]
    fn several_searches_and_gets_in_one_request() {
        let b = Engine::new();
        let bulk = "{\"index\":{\"_index\":\"a\",\"_id\":\"1\"}}\n{\"t\":\"x\"}\n{\"index\":{\"_index\":\"b\",\"_id\":\"2\"}}\n{\"t\":\"y\"}\n";
        assert_eq!(call(&b, "POST", "/_bulk?refresh=true", bulk).0, 200);
        let searches = "{\"index\":\"a\"}\n{\"query\":{\"match_all\":{}}}\n{}\n{\"query\":{\"term\":{\"t\":\"y\"}}}\n{\"index\":\"nope\"}\n{}\n";
        let (s, r) = call(&b, "POST", "/_msearch", searches);
        assert_eq!(s, 200, "{r}");
        assert_eq!(r["responses"][0]["hits"]["total"]["value"], 1);
        assert_eq!(r["responses"][1]["hits"]["hits"][0]["_id"], "2");
        assert_eq!(r["responses"][2]["status"], 404);
        let (_, r) = call(
            &b,
            "POST",
            "/_mget",
            r#"{"docs": [{"_index": "a", "_id": "1"}, {"_index": "b", "_id": "9"}]}"#,
        );
        assert_eq!(r["docs"][0]["found"], true);
        assert_eq!(r["docs"][1]["found"], false);
        let (_, r) = call(&b, "POST", "/b/_mget", r#"{"ids": ["2"]}"#);
        assert_eq!(r["docs"][0]["_source"]["t"], "y");
        assert_eq!(
            call(&b, "POST", "/_msearch", "{\"routing\":\"1\"}\n{}\n").0,
            400
        );
        let (s, r) = call(&b, "POST", "/a/_update/1", r#"{"doc": {"u": 1}}"#);
        assert_eq!((s, &r["result"]), (200, &serde_json::json!("updated")));
    }
}
