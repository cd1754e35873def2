//! Data streams, as a client of Elasticsearch's API sees them: created by `PUT
//! _data_stream/<name>` or by the first bulk `create` into a name, when the highest-priority
//! composable template matching it has `data_stream`; listed and deleted through
//! `_data_stream`; written with `create` actions only, each document with an `@timestamp`. Here
//! a data stream is one index of its name (no rollover, so no backing indices to list beyond
//! it), with `@timestamp` mapped as a date.

use crate::cluster::CreateError;
use crate::cluster::Engine;
use crate::cluster::State;
use crate::rest::RestResponse;
use serde_json::{json, Value};

/// Why a data stream could not be created.
pub enum StreamError {
    Exists,
    NoTemplate,
    Mapping(String),
}

impl StreamError {
    pub fn response(&self, name: &str) -> RestResponse {
        match self {
            StreamError::Exists => RestResponse::error(
                400,
                "resource_already_exists_exception",
                &format!("data_stream [{name}] already exists"),
            ),
            StreamError::NoTemplate => RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("no matching index template found for data stream [{name}]"),
            ),
            StreamError::Mapping(m) => RestResponse::error(400, "mapper_parsing_exception", m),
        }
    }
}

impl State {
    /// Creates `name` as a data stream, when a data stream template matches it.
    pub(crate) fn create_data_stream(&self, name: &str) -> Result<(), StreamError> {
        let template = self
            .templates
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .data_stream_template(name)
            .ok_or(StreamError::NoTemplate)?;
        let body = json!({"mappings": {"properties": {"@timestamp": {"type": "date"}}}});
        self.create_index(name, &body).map_err(|e| match e {
            CreateError::Exists => StreamError::Exists,
            CreateError::Mapping(m) => StreamError::Mapping(m),
        })?;
        self.data_streams
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), template);
        Ok(())
    }

    pub(crate) fn is_data_stream(&self, name: &str) -> bool {
        self.data_streams
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(name)
    }

    /// The data streams `names` (a comma list, with wildcards) names.
    fn matching_streams(&self, names: Option<&str>) -> Vec<(String, String)> {
        let streams = self.data_streams.read().unwrap_or_else(|p| p.into_inner());
        let patterns: Vec<&str> = names.map_or(vec!["*"], |n| n.split(',').collect());
        streams
            .iter()
            .filter(|(n, _)| {
                patterns
                    .iter()
                    .any(|p| crate::names::index_pattern_matches(p, n))
            })
            .map(|(n, t)| (n.clone(), t.clone()))
            .collect()
    }
}

impl Engine {
    pub(crate) fn put_data_stream(&self, name: &str) -> RestResponse {
        if name.contains(['*', ',']) || name != name.to_lowercase() {
            return RestResponse::error(
                400,
                "invalid_index_name_exception",
                &format!("invalid data stream name [{name}]: lowercase, no `*` or `,`"),
            );
        }
        match self.state.create_data_stream(name) {
            Ok(()) => RestResponse::json(200, &json!({"acknowledged": true})),
            Err(e) => e.response(name),
        }
    }

    pub(crate) fn delete_data_stream(&self, names: &str) -> RestResponse {
        let found = self.state.matching_streams(Some(names));
        if found.is_empty() && !names.contains('*') {
            return RestResponse::error(
                404,
                "index_not_found_exception",
                &format!("no such index [{names}]"),
            );
        }
        self.state
            .remove_indices(found.iter().map(|(name, _)| name.as_str()));
        RestResponse::json(200, &json!({"acknowledged": true}))
    }

    pub(crate) fn get_data_stream(&self, names: Option<&str>) -> RestResponse {
        let found = self.state.matching_streams(names);
        if found.is_empty() && names.is_some_and(|n| !n.contains('*') && n != "_all") {
            return RestResponse::error(
                404,
                "index_not_found_exception",
                &format!("no such index [{}]", names.unwrap_or_default()),
            );
        }
        let streams: Vec<Value> = found
            .into_iter()
            .map(|(name, template)| {
                json!({
                    "name": name,
                    "timestamp_field": {"name": "@timestamp"},
                    "indices": [{"index_name": name}],
                    "generation": 1,
                    "status": "GREEN",
                    "template": template,
                })
            })
            .collect();
        RestResponse::json(200, &json!({"data_streams": streams}))
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;
    use serde_json::Value;

    #[test]
    fn data_streams_are_made_by_their_template_and_take_create_actions() {
        let b = Engine::new();
        // No data stream template yet: refused, as Elasticsearch refuses it.
        let (status, body) = call(&b, "PUT", "/_data_stream/logs-a", "");
        assert_eq!(status, 400, "{body}");
        assert!(body["error"]["reason"]
            .as_str()
            .unwrap()
            .contains("no matching index template"));
        let template = r#"{"index_patterns": ["logs-*"], "data_stream": {}, "priority": 5,
            "template": {"mappings": {"properties": {"msg": {"type": "keyword"}}}}}"#;
        assert_eq!(call(&b, "PUT", "/_index_template/logs", template).0, 200);
        assert_eq!(call(&b, "PUT", "/_data_stream/logs-a", "").0, 200);
        assert_eq!(call(&b, "PUT", "/_data_stream/logs-a", "").0, 400);
        // The first `create` into a matching name makes it; `index` actions and documents
        // without @timestamp fail alone.
        let bulk = concat!(
            "{\"create\":{\"_index\":\"logs-b\"}}\n{\"@timestamp\":\"2026-01-01T00:00:00Z\",\"msg\":\"x\"}\n",
            "{\"index\":{\"_index\":\"logs-b\"}}\n{\"@timestamp\":\"2026-01-01T00:00:00Z\",\"msg\":\"y\"}\n",
            "{\"create\":{\"_index\":\"logs-b\"}}\n{\"msg\":\"z\"}\n",
            "{\"create\":{\"_index\":\"other\"}}\n{\"@timestamp\":\"2026-01-01T00:00:00Z\"}\n",
            "{\"delete\":{\"_index\":\"gone\",\"_id\":\"1\"}}\n",
        );
        let (_, r) = call(&b, "POST", "/_bulk?refresh=true", bulk);
        let statuses: Vec<u64> = r["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                i["create"]
                    .get("status")
                    .or(i["index"].get("status"))
                    .or(i["delete"].get("status"))
                    .and_then(Value::as_u64)
                    .unwrap()
            })
            .collect();
        // A name no data stream template matches is made an index (auto-creation); a delete
        // makes nothing.
        assert_eq!(statuses, [201, 400, 400, 201, 404], "{r}");
        assert_eq!(
            r["items"][4]["delete"]["error"]["type"],
            "index_not_found_exception"
        );
        let (_, found) = call(
            &b,
            "POST",
            "/logs-b/_search",
            r#"{"query": {"term": {"msg": "x"}}}"#,
        );
        assert_eq!(found["hits"]["total"]["value"], 1, "{found}");
        let (_, listed) = call(&b, "GET", "/_data_stream/logs-*", "");
        let names: Vec<&str> = listed["data_streams"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["logs-a", "logs-b"]);
        assert_eq!(listed["data_streams"][0]["template"], "logs");
        assert_eq!(call(&b, "DELETE", "/_data_stream/logs-a,logs-b", "").0, 200);
        assert_eq!(call(&b, "DELETE", "/_data_stream/logs-a", "").0, 404);
        assert_eq!(call(&b, "POST", "/logs-b/_search", "{}").0, 404);
    }
}
