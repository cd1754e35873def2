//! Index, composable and component templates: create and delete, from the operation or the track's declared templates, as Rally's param sources.

use super::{enc, only_if_exists, string, Call, Calls, Declared, DeclaredTemplate};
use serde_json::{json, Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, declared: &Declared) -> Option<Calls> {
    let rp = op.get("request-params");
    Some(match kind {
        "create-index-template" | "create-composable-template" | "create-component-template" => {
            create(kind, op, declared)
        }
        "delete-index-template" | "delete-composable-template" | "delete-component-template" => {
            let (of_kind, endpoint) = declared_of_kind(declared, kind);
            let wanted = string(op, "template");
            let targets: Vec<(String, Option<String>, bool)> = if of_kind.is_empty() {
                let Some(n) = wanted else {
                    return Some(Err(format!(
                        "`{kind}` needs `template` when the track declares no such templates"
                    )));
                };
                let delete = op
                    .get("delete-matching-indices")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let pattern = string(op, "index-pattern");
                if delete && pattern.is_none() {
                    return Some(Err(format!(
                        "`{kind}` with `delete-matching-indices` needs `index-pattern`"
                    )));
                }
                vec![(n, pattern, delete)]
            } else {
                of_kind
                    .iter()
                    .filter(|t| wanted.as_ref().is_none_or(|w| *w == t.name))
                    .map(|t| {
                        (
                            t.name.clone(),
                            t.index_pattern.clone(),
                            t.delete_matching_indices,
                        )
                    })
                    .collect()
            };
            let mut calls = Vec::new();
            for (n, pattern, delete) in targets {
                let path = format!("/{endpoint}/{}", enc(&n));
                calls.extend(Call::deletes(path.clone(), path, only_if_exists(op), rp));
                // Rally deletes the indices a template matched when asked to, whether or not
                // the template was there, with the setting that forbids wildcards lifted.
                if let (Some(p), true) = (pattern, delete && kind != "delete-component-template") {
                    let delete = Call::new("DELETE", format!("/{}", enc(&p)));
                    calls.push(if declared.osb {
                        delete
                    } else {
                        delete.destructive()
                    });
                }
            }
            Ok((calls, true))
        }
        _ => return None,
    })
}

/// A create-template operation's PUTs: Rally's `templates` list, a `template` with its `body`,
/// else the track's declared templates of the kind (the one named, if named).
fn create(kind: &str, op: &Map<String, Value>, declared: &Declared) -> Calls {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let (of_kind, endpoint) = declared_of_kind(declared, kind);
    let wanted = string(op, "template");
    // As Rally's CreateTemplateParamSource: `template` with a `body` first, else the
    // declared templates (the one named, if named).
    let templates: Vec<(String, Value)> = match (wanted, get("body")) {
        // What Rally's param source gives its runner (a param source of a track's
        // Python may give it too): `templates`, a list of [name, body].
        _ if op.get("templates").is_some() => match drawn_templates(kind, op) {
            Ok(t) => t,
            Err(e) => return Err(e),
        },
        (Some(n), Some(b)) => vec![(n, b)],
        (_, _) if of_kind.is_empty() => {
            return Err(format!(
                "`{kind}` needs `template` and `body` when the track declares no such templates"
            ))
        }
        (wanted, _) => {
            let found: Vec<(String, Value)> = of_kind
                .iter()
                .filter(|t| wanted.as_ref().is_none_or(|w| *w == t.name))
                .map(|t| {
                    (
                        t.name.clone(),
                        with_settings(kind, t.body.clone(), op.get("settings")),
                    )
                })
                .collect();
            if let (Some(w), true) = (&wanted, found.is_empty()) {
                let names: Vec<&str> = of_kind.iter().map(|t| t.name.as_str()).collect();
                return Err(format!(
                    "unknown template `{w}` (the track declares {}), as Rally says",
                    names.join(", ")
                ));
            }
            found
        }
    };
    let calls = templates
        .into_iter()
        .map(|(n, b)| {
            // Rally sends a component template's `template` section, as its runner does.
            let body = if kind == "create-component-template" {
                json!({"template": b.get("template").cloned().unwrap_or(json!({}))})
            } else {
                b
            };
            Call::new("PUT", format!("/{endpoint}/{}", enc(&n)))
                .body(body)
                .params(rp)
        })
        .collect();
    Ok((calls, false))
}

/// Rally's runner input: `templates`, a list of `[name, body]` pairs (with `settings` merged,
/// as its param source merges them).
fn drawn_templates(kind: &str, op: &Map<String, Value>) -> Result<Vec<(String, Value)>, String> {
    let Some(Value::Array(list)) = op.get("templates") else {
        return Err(format!("`{kind}` `templates` is a list of [name, body]"));
    };
    list.iter()
        .map(|pair| match pair.as_array().map(Vec::as_slice) {
            Some([Value::String(n), body @ Value::Object(_)]) => Ok((
                n.clone(),
                with_settings(kind, body.clone(), op.get("settings")),
            )),
            _ => Err(format!(
                "`{kind}` `templates` holds {pair}, not a [name, body] pair"
            )),
        })
        .collect()
}

/// Rally merges a create-template operation's `settings` into each template's settings.
fn with_settings(kind: &str, mut body: Value, settings: Option<&Value>) -> Value {
    let Some(Value::Object(settings)) = settings else {
        return body;
    };
    let target = if kind == "create-index-template" {
        &mut body
    } else {
        match body.get_mut("template") {
            Some(t) => t,
            None => return body,
        }
    };
    if let Some(t) = target.as_object_mut() {
        let entry = t.entry("settings").or_insert(json!({}));
        if let Some(e) = entry.as_object_mut() {
            e.extend(settings.clone());
        }
    }
    body
}

/// The track's declared templates of the operation's kind, and the kind's endpoint.
fn declared_of_kind<'d>(
    declared: &'d Declared,
    kind: &str,
) -> (Vec<&'d DeclaredTemplate>, &'static str) {
    let (declared_kind, endpoint) = template_kind(kind);
    let of_kind = declared
        .templates
        .iter()
        .filter(|t| t.kind == declared_kind)
        .collect();
    (of_kind, endpoint)
}

fn template_kind(kind: &str) -> (&'static str, &'static str) {
    if kind.contains("component") {
        ("component", "_component_template")
    } else if kind.contains("composable") {
        ("composable", "_index_template")
    } else {
        ("legacy", "_template")
    }
}
