//! What a REST request makes and needs, read from the same route table the engine answers
//! with: a caller checking requests before sending them (a race on a fresh engine) knows which
//! indices, data streams and aliases a request creates, and which must exist for it.

use super::{route, segments, Route};
use serde_json::Value;

/// The names a request makes and the names it needs to exist.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Effects {
    /// Indices, data streams or aliases it creates (an alias a template holds is made with the
    /// indices it matches).
    pub makes: Vec<String>,
    /// Indices it acts on that must exist: alias actions' indices, a settings or block change's
    /// target (patterns as given).
    pub needs: Vec<String>,
}

/// The effects of `method path` with `body`; none for a request the engine has no route for.
pub fn effects(method: &str, path: &str, body: Option<&Value>) -> Effects {
    let owned = segments(path);
    let segments = super::routes::as_strs(&owned);
    let Some(route) = route(method, &segments) else {
        return Effects::default();
    };
    match route {
        Route::UpdateAliases => Effects {
            makes: alias_actions(body, &["add"], &["alias", "aliases"]),
            needs: alias_actions(body, &["add", "remove"], &["index", "indices"]),
        },
        Route::PutAlias(_, name) => made(name),
        Route::PutTemplate(..) => Effects {
            makes: body
                .and_then(|b| b.pointer("/template/aliases").or_else(|| b.get("aliases")))
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(|a| a.keys().cloned())
                .collect(),
            needs: Vec::new(),
        },
        Route::PutDataStream(name) | Route::CreateIndex(name) => made(name),
        // A write creates its missing index (`action.auto_create_index`).
        Route::PutDoc(name, _) | Route::CreateDoc(name, _) | Route::Bulk(Some(name)) => made(name),
        Route::IndexSettings(Some(target))
        | Route::AddBlock(target, _)
        | Route::CloseIndex(target, _) => Effects {
            makes: Vec::new(),
            needs: target.split(',').map(str::to_string).collect(),
        },
        _ => Effects::default(),
    }
}

fn made(name: &str) -> Effects {
    Effects {
        makes: vec![name.to_string()],
        needs: Vec::new(),
    }
}

/// The strings (or lists of strings) under `keys` of the `actions` of the given kinds.
fn alias_actions(body: Option<&Value>, kinds: &[&str], keys: &[&str]) -> Vec<String> {
    let actions = body
        .and_then(|b| b.get("actions"))
        .and_then(Value::as_array);
    let mut out = Vec::new();
    for action in actions.into_iter().flatten() {
        for a in kinds.iter().filter_map(|k| action.get(*k)) {
            for key in keys {
                match a.get(*key) {
                    Some(Value::String(s)) => out.push(s.clone()),
                    Some(Value::Array(list)) => {
                        out.extend(list.iter().filter_map(Value::as_str).map(str::to_string))
                    }
                    _ => {}
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn what_requests_make_and_need_comes_from_the_route_table() {
        assert_eq!(effects("PUT", "/logs", None).makes, ["logs"]);
        assert_eq!(
            effects("PUT", "/_data_stream/logs-x", None).makes,
            ["logs-x"]
        );
        assert_eq!(effects("POST", "/i/_alias/a", None).makes, ["a"]);
        let actions = json!({"actions": [
            {"add": {"index": "i1", "alias": "a1"}},
            {"add": {"indices": ["i2", "i3"], "aliases": ["a2"]}},
            {"remove": {"index": "i4", "alias": "a1"}}
        ]});
        let e = effects("POST", "/_aliases", Some(&actions));
        assert_eq!(e.makes, ["a1", "a2"]);
        assert_eq!(e.needs, ["i1", "i2", "i3", "i4"]);
        let template =
            json!({"index_patterns": ["l-*"], "template": {"aliases": {"all-logs": {}}}});
        assert_eq!(
            effects("PUT", "/_index_template/t", Some(&template)).makes,
            ["all-logs"]
        );
        assert_eq!(effects("PUT", "/a,b/_settings", None).needs, ["a", "b"]);
        assert_eq!(effects("PUT", "/x/_block/write", None).needs, ["x"]);
        assert_eq!(effects("GET", "/x/_search", None), Effects::default());
        assert_eq!(effects("POST", "/new/_doc", None).makes, ["new"]);
        assert_eq!(effects("PUT", "/new/_create/1", None).makes, ["new"]);
        assert_eq!(
            effects("PUT", "/_nothing/here/at/all", None),
            Effects::default()
        );
    }
}
