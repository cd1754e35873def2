//! Ingest pipelines (`_ingest/pipeline`), index settings the engine acts on (`_settings`) and
//! index blocks (`_block`).

use crate::cluster::Engine;
use crate::rest::parse_body;
use crate::rest::RestResponse;
use serde_json::{json, Value};

impl Engine {
    pub(crate) fn put_pipeline(&self, id: &str, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let put = self
            .state
            .pipelines
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .put(id, body);
        match put {
            Ok(()) => RestResponse::json(200, &json!({ "acknowledged": true })),
            Err(m) => RestResponse::error(400, "parse_exception", &format!("pipeline [{id}]: {m}")),
        }
    }

    /// `GET _ingest/pipeline[/<ids>]`; `?summary=true` names them without their bodies.
    pub(crate) fn get_pipeline(&self, ids: Option<&str>, query: &str) -> RestResponse {
        let mut found = self
            .state
            .pipelines
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .bodies(ids);
        if crate::rest::param(query, "summary").as_deref() == Some("true") {
            for body in found.values_mut() {
                *body = Value::Object(Default::default());
            }
        }
        // Elasticsearch answers 404 with an empty object when named pipelines are not there.
        let status = if found.is_empty() && ids.is_some() {
            404
        } else {
            200
        };
        RestResponse::json(status, &Value::Object(found))
    }

    pub(crate) fn delete_pipeline(&self, ids: &str) -> RestResponse {
        let deleted = self
            .state
            .pipelines
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .delete(ids);
        if deleted == 0 && !ids.contains('*') {
            return RestResponse::error(
                404,
                "resource_not_found_exception",
                &format!("pipeline [{ids}] is missing"),
            );
        }
        RestResponse::json(200, &json!({ "acknowledged": true }))
    }

    /// `PUT <index>/_settings`: pipelines and blocks change; the rest is acknowledged.
    pub(crate) fn index_settings(&self, names: Option<&str>, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let indices = match self.resolve_as(names, false) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let settings = body.get("settings").unwrap_or(&body);
        for index in &indices {
            let mut s = index.settings.write().unwrap_or_else(|p| p.into_inner());
            let mut changed = s.clone();
            if let Err(m) = changed.update(settings) {
                return RestResponse::error(400, "illegal_argument_exception", &m);
            }
            *s = changed;
        }
        RestResponse::json(200, &json!({ "acknowledged": true }))
    }

    /// `GET [<index>/]_settings[/<name>]`: each index's settings as given, with the ones
    /// Elasticsearch always shows (shards, replicas, uuid, creation date, version), nested
    /// or (`flat_settings=true`) as dotted keys; `<name>` filters them by pattern.
    pub(crate) fn get_settings(
        &self,
        names: Option<&str>,
        filter: Option<&str>,
        query: &str,
    ) -> RestResponse {
        let indices = match self.resolve_as(names, false) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let flat = crate::rest::param(query, "flat_settings").as_deref() == Some("true");
        let mut out = serde_json::Map::new();
        for index in &indices {
            let s = index
                .settings
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let mut all = s.given.clone();
            for key in ["index.number_of_shards", "index.number_of_replicas"] {
                all.insert(key.into(), s.text(key));
            }
            all.insert("index.uuid".into(), index.uuid.clone());
            all.insert("index.creation_date".into(), index.created_ms.to_string());
            all.insert("index.provided_name".into(), index.name.clone());
            all.insert(
                "index.version.created".into(),
                crate::rest::VERSION_ID.to_string(),
            );
            // Elasticsearch marks an index it closed cleanly.
            if index.is_closed() {
                all.insert("index.verified_before_close".into(), "true".into());
            }
            let kept = all.into_iter().filter(|(k, _)| {
                filter.is_none_or(|f| {
                    f.split(',').any(|p| {
                        crate::names::simple_match(p, k)
                            || crate::names::simple_match(p, k.trim_start_matches("index."))
                    })
                })
            });
            let settings = if flat {
                Value::Object(kept.map(|(k, v)| (k, Value::String(v))).collect())
            } else {
                let mut nested = serde_json::Map::new();
                for (k, v) in kept {
                    nest(&mut nested, &k, v);
                }
                Value::Object(nested)
            };
            out.insert(index.name.clone(), json!({ "settings": settings }));
        }
        RestResponse::json(200, &Value::Object(out))
    }

    /// `PUT <index>/_block/<block>`.
    pub(crate) fn add_block(&self, names: &str, block: &str) -> RestResponse {
        let indices = match self.resolve_as(Some(names), false) {
            Ok(i) => i,
            Err(r) => return r,
        };
        for index in &indices {
            let mut s = index.settings.write().unwrap_or_else(|p| p.into_inner());
            if let Err(m) = s.set_block(block, true) {
                return RestResponse::error(400, "illegal_argument_exception", &m);
            }
        }
        let blocked: Vec<Value> = indices
            .iter()
            .map(|i| json!({ "name": i.name, "blocked": true }))
            .collect();
        RestResponse::json(
            200,
            &json!({ "acknowledged": true, "shards_acknowledged": true, "indices": blocked }),
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;
    use serde_json::{json, Value};

    fn sources(b: &Engine, index: &str) -> Vec<Value> {
        let (_, r) = call(
            b,
            "POST",
            &format!("/{index}/_search"),
            r#"{"size": 100, "sort": ["n"]}"#,
        );
        r["hits"]["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| json!({"_id": h["_id"], "src": h["_source"]}))
            .collect()
    }

    #[test]
    fn bulk_documents_go_through_the_request_default_and_final_pipelines() {
        let b = Engine::new();
        let pipeline = |body: Value| body.to_string();
        assert_eq!(call(&b, "PUT", "/_ingest/pipeline/ids", &pipeline(json!({"processors": [
            {"set": {"field": "_id", "value": "doc-{{n}}"}}, {"set": {"field": "via", "value": "ids"}}]}))).0, 200);
        assert_eq!(
            call(
                &b,
                "PUT",
                "/_ingest/pipeline/default",
                &pipeline(json!({"processors": [
            {"set": {"field": "via", "value": "default"}}, {"drop": {"if": "ctx.n.stream().reduce(0, (a, b) -> a + b) == 2"}}]}))
            )
            .0,
            400
        );
        assert_eq!(call(&b, "PUT", "/_ingest/pipeline/default", &pipeline(json!({"processors": [
            {"set": {"field": "via", "value": "default"}}, {"reroute": {"destination": "{{target}}"}}]}))).0, 200);
        assert_eq!(
            call(
                &b,
                "PUT",
                "/_ingest/pipeline/final",
                &pipeline(json!({"processors": [
            {"uppercase": {"field": "via", "target_field": "checked"}}]}))
            )
            .0,
            200
        );
        let mapping = r#"{"mappings": {"properties": {"n": {"type": "long"}, "via": {"type": "keyword"}, "checked": {"type": "keyword"}, "target": {"type": "keyword"}}}}"#;
        let with_pipelines = format!(
            r#"{{"settings": {{"index": {{"default_pipeline": "default", "final_pipeline": "final"}}}}, {}"#,
            &mapping[1..]
        );
        let (status, r) = call(&b, "PUT", "/a", &with_pipelines);
        assert_eq!(status, 200, "{r}");
        assert_eq!(call(&b, "PUT", "/b", mapping).0, 200);
        let bulk = concat!(
            "{\"index\":{}}\n{\"n\":1,\"target\":\"a\"}\n",
            "{\"index\":{}}\n{\"n\":2,\"target\":\"b\"}\n",
            "{\"index\":{\"pipeline\":\"ids\"}}\n{\"n\":3,\"target\":\"b\"}\n",
        );
        let (_, r) = call(&b, "POST", "/a/_bulk?refresh=true", bulk);
        assert_eq!(r["errors"], false, "{r}");
        let (_, r) = call(
            &b,
            "POST",
            "/b/_bulk?refresh=true&pipeline=ids",
            "{\"index\":{}}\n{\"n\":4}\n",
        );
        assert_eq!(r["items"][0]["index"]["_id"], "doc-4", "{r}");
        // The default pipeline kept n=1 in `a` (then its final pipeline ran) and rerouted n=2
        // to `b`, where `b` has no final pipeline; the action's pipeline replaced a's default.
        assert_eq!(
            sources(&b, "a"),
            vec![
                json!({"_id": sources(&b, "a")[0]["_id"], "src": {"n": 1, "target": "a", "via": "default", "checked": "DEFAULT"}}),
                json!({"_id": "doc-3", "src": {"n": 3, "target": "b", "via": "ids", "checked": "IDS"}}),
            ]
        );
        let in_b = sources(&b, "b");
        assert_eq!(in_b.len(), 2);
        assert_eq!(
            in_b[0]["src"],
            json!({"n": 2, "target": "b", "via": "default"})
        );
        assert_eq!(in_b[1]["_id"], "doc-4");
        // A missing pipeline fails its items alone.
        let (_, r) = call(
            &b,
            "POST",
            "/b/_bulk?pipeline=nope",
            "{\"index\":{}}\n{\"n\":5}\n",
        );
        assert!(
            r["items"][0]["index"]["error"]["reason"]
                .as_str()
                .unwrap()
                .contains("[nope] does not exist"),
            "{r}"
        );
        let (status, got) = call(&b, "GET", "/_ingest/pipeline/ids,final", "");
        assert_eq!((status, got.as_object().unwrap().len()), (200, 2));
        assert_eq!(call(&b, "DELETE", "/_ingest/pipeline/ids", "").0, 200);
        assert_eq!(call(&b, "DELETE", "/_ingest/pipeline/ids", "").0, 404);
        assert_eq!(call(&b, "GET", "/_ingest/pipeline/ids", "").0, 404);
    }

    #[test]
    fn a_write_block_refuses_writes_until_the_setting_lifts_it() {
        let b = Engine::new();
        assert_eq!(
            call(
                &b,
                "PUT",
                "/t",
                r#"{"mappings": {"properties": {"n": {"type": "long"}}}}"#
            )
            .0,
            200
        );
        let (status, r) = call(&b, "PUT", "/t/_block/write", "");
        assert_eq!((status, &r["indices"][0]["blocked"]), (200, &json!(true)));
        let (_, r) = call(&b, "POST", "/t/_bulk", "{\"index\":{}}\n{\"n\":1}\n");
        assert_eq!(r["items"][0]["index"]["status"], 403, "{r}");
        assert_eq!(
            r["items"][0]["index"]["error"]["type"],
            "cluster_block_exception"
        );
        assert_eq!(call(&b, "POST", "/t/_refresh", "").0, 200);
        assert_eq!(call(&b, "PUT", "/t/_block/read", "").0, 400);
        assert_eq!(
            call(
                &b,
                "PUT",
                "/t/_settings",
                r#"{"index.blocks.write": false}"#
            )
            .0,
            200
        );
        let (_, r) = call(&b, "POST", "/t/_bulk", "{\"index\":{}}\n{\"n\":1}\n");
        assert_eq!(r["errors"], false, "{r}");
    }
}

/// Puts `value` at the dotted `key` of `into`, as nested objects.
fn nest(into: &mut serde_json::Map<String, Value>, key: &str, value: String) {
    match key.split_once('.') {
        None => {
            into.insert(key.to_string(), Value::String(value));
        }
        Some((head, rest)) => {
            let inner = into
                .entry(head.to_string())
                .or_insert_with(|| Value::Object(Default::default()));
            if !inner.is_object() {
                *inner = Value::Object(Default::default());
            }
            if let Value::Object(m) = inner {
                nest(m, rest, value);
            }
        }
    }
}
