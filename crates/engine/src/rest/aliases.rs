//! Index aliases over REST: `POST _aliases` (add, remove, remove_index actions),
//! `PUT`/`DELETE <index>/_alias/<name>` and `GET [<index>/]_alias[/<name>]`.

use crate::cluster::aliases::AliasTarget;

/// An `add` action's keys besides the alias's own.
const ADD_KEYS: [&str; 5] = ["index", "indices", "alias", "aliases", "must_exist"];
use crate::cluster::Engine;
use crate::rest::parse_body;
use crate::rest::RestResponse;
use serde_json::{json, Map, Value};

/// The names an action gives under `key` or `plural` (each a string or a list).
fn names(action: &Value, key: &str, plural: &str) -> Vec<String> {
    let mut out = Vec::new();
    for v in [action.get(key), action.get(plural)].into_iter().flatten() {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => out.extend(a.iter().filter_map(Value::as_str).map(str::to_string)),
            _ => {}
        }
    }
    out
}

/// What `POST _aliases` asks for, read before anything is applied.
struct AliasActions {
    adds: Vec<(String, String, AliasTarget)>,
    /// (alias, index, must exist)
    removes: Vec<(String, String, bool)>,
    remove_indices: Vec<String>,
}

impl Engine {
    /// `POST _aliases`: the actions apply together or not at all.
    pub(crate) fn update_aliases(&self, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let Some(actions) = body.get("actions").and_then(Value::as_array) else {
            return RestResponse::error(
                400,
                "action_request_validation_exception",
                "[actions] is a list of add, remove and remove_index actions",
            );
        };
        // Read first (names resolve through the aliases too); applied only if all are fine.
        match self.read_alias_actions(actions) {
            Ok(plan) => self.apply_alias_actions(plan),
            Err(r) => r,
        }
    }

    /// Every action read and its names resolved, or the answer refusing the first bad one.
    fn read_alias_actions(&self, actions: &[Value]) -> Result<AliasActions, RestResponse> {
        let mut adds = Vec::new();
        let mut removes = Vec::new();
        let mut remove_indices = Vec::new();
        for action in actions {
            let Some((kind, a)) = action
                .as_object()
                .filter(|m| m.len() == 1)
                .and_then(|m| m.iter().next())
            else {
                return Err(RestResponse::error(
                    400,
                    "action_request_validation_exception",
                    &format!("an alias action is an object with one key, got {action}"),
                ));
            };
            let indices = names(a, "index", "indices");
            if indices.is_empty() {
                return Err(RestResponse::error(
                    400,
                    "action_request_validation_exception",
                    &format!("[{kind}]: an index or indices is required"),
                ));
            }
            let mut matched = Vec::new();
            for i in &indices {
                match self.index_names(i) {
                    Ok(m) => matched.extend(m),
                    Err(r) => return Err(r),
                }
            }
            match kind.as_str() {
                "add" => {
                    let target = match AliasTarget::parse(a, &ADD_KEYS) {
                        Ok(t) => t,
                        Err(m) => {
                            return Err(RestResponse::error(400, "illegal_argument_exception", &m))
                        }
                    };
                    let alias_names = names(a, "alias", "aliases");
                    if alias_names.is_empty() {
                        return Err(RestResponse::error(
                            400,
                            "action_request_validation_exception",
                            "[add]: an alias or aliases is required",
                        ));
                    }
                    for alias in alias_names {
                        if let Err(why) = crate::names::check_alias_name(&alias) {
                            return Err(RestResponse::error(
                                400,
                                "invalid_alias_name_exception",
                                &why,
                            ));
                        }
                        if self.index(&alias).is_some() {
                            return Err(RestResponse::error(400, "invalid_alias_name_exception", &format!("Invalid alias name [{alias}]: an index or data stream exists with the same name as the alias")));
                        }
                        for index in &matched {
                            adds.push((alias.clone(), index.clone(), target.clone()));
                        }
                    }
                }
                "remove" => {
                    // `must_exist: false` removes what is there and asks for nothing more.
                    let must_exist = a.get("must_exist").and_then(Value::as_bool) != Some(false);
                    for alias in names(a, "alias", "aliases") {
                        for index in &matched {
                            removes.push((alias.clone(), index.clone(), must_exist));
                        }
                    }
                }
                "remove_index" => remove_indices.extend(matched),
                other => {
                    return Err(RestResponse::error(
                        400,
                        "action_request_validation_exception",
                        &format!("alias action [{other}] is not one of add, remove, remove_index"),
                    ))
                }
            }
        }
        Ok(AliasActions {
            adds,
            removes,
            remove_indices,
        })
    }

    /// The actions applied together: none if an alias to remove is missing.
    fn apply_alias_actions(&self, plan: AliasActions) -> RestResponse {
        let AliasActions {
            adds,
            removes,
            remove_indices,
        } = plan;
        let mut aliases = self
            .state
            .aliases
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for (alias, index, must_exist) in &removes {
            let missing = *must_exist
                && aliases
                    .targets(alias)
                    .is_none_or(|t| !t.contains_key(index))
                && !alias.contains('*');
            if missing {
                return RestResponse::error(
                    404,
                    "aliases_not_found_exception",
                    &format!("aliases [{alias}] missing"),
                );
            }
        }
        for (alias, index, _) in removes {
            aliases.remove(&alias, &index);
        }
        for (alias, index, target) in adds {
            aliases.add(&alias, &index, target);
        }
        drop(aliases);
        self.state
            .remove_indices(remove_indices.iter().map(String::as_str));
        RestResponse::json(200, &json!({ "acknowledged": true, "errors": false }))
    }

    /// `PUT <index>/_alias/<name>` with an optional body (`filter`, `is_write_index`).
    pub(crate) fn put_alias(&self, index: &str, alias: &str, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let mut action = match body {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        action.insert("index".into(), json!(index));
        action.insert("alias".into(), json!(alias));
        let actions = json!({ "actions": [{ "add": action }] });
        self.update_aliases(actions.to_string().as_bytes())
    }

    pub(crate) fn delete_alias(&self, index: &str, alias: &str) -> RestResponse {
        let actions = json!({ "actions": [{ "remove": { "index": index, "alias": alias } }] });
        self.update_aliases(actions.to_string().as_bytes())
    }

    /// `GET [<index>/]_alias[/<name>]`: each index with its aliases; 404 when a named alias
    /// is nowhere.
    pub(crate) fn get_alias(&self, indices: Option<&str>, aliases: Option<&str>) -> RestResponse {
        let matched = match self.index_names(indices.unwrap_or("_all")) {
            Ok(m) => m,
            Err(r) => return r,
        };
        let all = self.state.aliases.read().unwrap_or_else(|p| p.into_inner());
        let mut out = Map::new();
        for index in matched {
            let of = all.of_index(&index, aliases);
            if aliases.is_none() || !of.is_empty() {
                out.insert(index, json!({ "aliases": of }));
            }
        }
        if aliases.is_some() && out.is_empty() {
            return RestResponse::error(
                404,
                "aliases_not_found_exception",
                &format!("alias [{}] missing", aliases.unwrap_or_default()),
            );
        }
        RestResponse::json(200, &Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;
    use serde_json::json;

    fn count(b: &Engine, target: &str) -> (u16, serde_json::Value) {
        call(b, "POST", &format!("/{target}/_count"), "")
    }

    #[test]
    fn a_wildcard_matching_nothing_is_empty_where_elasticsearch_allows_it() {
        let b = Engine::new();
        let (status, r) = call(&b, "POST", "/none-*/_search", "");
        assert_eq!(
            (status, &r["hits"]["total"]["value"]),
            (200, &json!(0)),
            "{r}"
        );
        assert_eq!(count(&b, "none-*").1["count"], 0);
        assert_eq!(call(&b, "GET", "/none-*/_stats", "").0, 200);
        assert_eq!(call(&b, "POST", "/none-*/_refresh", "").0, 200);
        // Settings and blocks need a match (allow_no_indices is false there).
        assert_eq!(
            call(
                &b,
                "PUT",
                "/none-*/_settings",
                r#"{"index.refresh_interval": "1s"}"#
            )
            .0,
            404
        );
        assert_eq!(call(&b, "PUT", "/none-*/_block/write", "").0, 404);
        // A concrete name is still a 404.
        assert_eq!(count(&b, "none").0, 404);
    }

    #[test]
    fn searches_and_writes_go_through_aliases_with_their_filters() {
        let b = Engine::new();
        let mapping = r#"{"mappings": {"properties": {"t": {"type": "keyword"}}}, "aliases": {"made-with": {}}}"#;
        assert_eq!(call(&b, "PUT", "/a", mapping).0, 200);
        assert_eq!(call(&b, "PUT", "/b", mapping).0, 200);
        let docs = "{\"index\":{}}\n{\"t\":\"x\"}\n{\"index\":{}}\n{\"t\":\"y\"}\n{\"index\":{}}\n{\"t\":\"y\"}\n";
        assert_eq!(call(&b, "POST", "/a/_bulk?refresh=true", docs).0, 200);
        let actions = json!({"actions": [
            {"add": {"index": "a", "alias": "only-y", "filter": {"term": {"t": "y"}}}},
            {"add": {"indices": ["a", "b"], "alias": "both"}},
            {"add": {"index": "a", "aliases": ["plain"]}}
        ]});
        let (status, r) = call(&b, "POST", "/_aliases", &actions.to_string());
        assert_eq!(status, 200, "{r}");
        assert_eq!(count(&b, "only-y").1["count"], 2);
        assert_eq!(count(&b, "plain").1["count"], 3);
        // The same index through the filtered and the plain alias: unfiltered.
        assert_eq!(count(&b, "only-y,plain").1["count"], 3);
        // An alias of two indices counts both (b is empty).
        let (status, r) = count(&b, "both");
        assert_eq!((status, &r["count"]), (200, &json!(3)), "{r}");
        assert_eq!(r["_shards"]["total"], 2);
        // A write through a one-index alias lands in its index.
        let (_, r) = call(
            &b,
            "POST",
            "/plain/_bulk?refresh=true",
            "{\"index\":{}}\n{\"t\":\"y\"}\n",
        );
        assert_eq!(r["items"][0]["index"]["_index"], "a", "{r}");
        assert_eq!(count(&b, "only-y").1["count"], 3);
        // Listed per index; removed; an index's removal takes its aliases.
        let (_, got) = call(&b, "GET", "/a/_alias/only-*", "");
        assert_eq!(
            got,
            json!({"a": {"aliases": {"only-y": {"filter": {"term": {"t": "y"}}}}}})
        );
        assert_eq!(
            call(&b, "GET", "/_alias/made-with", "")
                .1
                .as_object()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(call(&b, "DELETE", "/a/_alias/only-y", "").0, 200);
        assert_eq!(count(&b, "only-y").0, 404);
        assert_eq!(call(&b, "DELETE", "/a/_alias/only-y", "").0, 404);
        let lenient = json!({"actions": [{"remove": {"index": "a", "alias": "only-y", "must_exist": false}}]});
        assert_eq!(call(&b, "POST", "/_aliases", &lenient.to_string()).0, 200);
        assert_eq!(
            call(
                &b,
                "PUT",
                "/b/_alias/one-b",
                r#"{"filter": {"term": {"t": "x"}}}"#
            )
            .0,
            200
        );
        assert_eq!(count(&b, "one-b").1["count"], 0);
        assert_eq!(call(&b, "DELETE", "/b", "").0, 200);
        assert_eq!(count(&b, "one-b").0, 404);
        assert_eq!(count(&b, "both").1["count"], 4);
        // An alias named like an index is refused, and nothing of the request is applied.
        let clash = json!({"actions": [{"add": {"index": "a", "alias": "new"}}, {"add": {"index": "a", "alias": "a"}}]});
        assert_eq!(call(&b, "POST", "/_aliases", &clash.to_string()).0, 400);
        assert_eq!(call(&b, "GET", "/_alias/new", "").0, 404);
    }
}
