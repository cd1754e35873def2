//! create-index, delete-index and refresh: index lifecycle operations.

use super::{OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;

pub const CREATE_INDEX: OperationType = OperationType {
    name: "create-index",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::CreateIndex(indices_to_create(p, ctx)?)),
};

pub const DELETE_INDEX: OperationType = OperationType {
    name: "delete-index",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| {
        Ok(OpSpec::DeleteIndex(DeleteIndexSpec {
            names: index_names(p, ctx)?,
            only_if_exists: p.bool("only-if-exists")?,
            lift_destructive: p.bool("lift-destructive")?.unwrap_or(true),
        }))
    },
};

pub const REFRESH: OperationType = OperationType {
    name: "refresh",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| {
        Ok(OpSpec::Refresh {
            indices: index_names(p, ctx)?,
            all_in_path: p.bool("all-in-path")?.unwrap_or(false),
        })
    },
};
use serde_json::Value;

/// Indices to delete. `only_if_exists` set: Rally's DeleteIndex runner (its setting lifted
/// around the deletes unless `lift_destructive` is false, as OSB's runner lifts none; `true`:
/// each index asked for first); unset: one DELETE that ignores indices that are not there.
#[derive(Debug, Clone)]
pub struct DeleteIndexSpec {
    pub names: Vec<String>,
    pub only_if_exists: Option<bool>,
    pub lift_destructive: bool,
}

/// An index as the track declares it: a name and Elasticsearch-style settings/mappings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct IndexSpec {
    pub name: String,
    pub body: Value,
}

/// The `index` param: one name, a list of names, or (absent) every index of the track.
pub fn index_names(p: &Params, ctx: &TrackContext) -> Result<Vec<String>, ParamError> {
    match p.get("index") {
        None => {
            if ctx.indices.is_empty() {
                return Err(ParamError::new(
                    "index",
                    "the track declares no indices; name one with `index`",
                ));
            }
            Ok(ctx.indices.iter().map(|i| i.name.clone()).collect())
        }
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(items)) if !items.is_empty() => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| ParamError::new("index", "expected index names"))
            })
            .collect(),
        Some(other) => Err(ParamError::new(
            "index",
            format!("expected an index name or a list of them, got {other}"),
        )),
    }
}

pub fn single_index(p: &Params, ctx: &TrackContext) -> Result<String, ParamError> {
    let names = index_names(p, ctx)?;
    match names.as_slice() {
        [one] => Ok(one.clone()),
        _ => Err(ParamError::new(
            "index",
            "this operation needs exactly one index; name it with `index`",
        )),
    }
}

/// The indices a create-index makes: those `index` names (all the track's when absent; none for
/// an empty list, as Rally's create-index makes none of a track's indices that no name
/// matches). A declared index gets its declared body; another is made from the operation's
/// `body`, as Rally makes it for a track that declares no indices. `settings` is merged into
/// each body's settings, as Rally's CreateIndexParamSource merges it.
pub fn indices_to_create(p: &Params, ctx: &TrackContext) -> Result<Vec<IndexSpec>, ParamError> {
    let names = match p.get("index") {
        Some(Value::Array(a)) if a.is_empty() => return Ok(Vec::new()),
        _ => index_names(p, ctx)?,
    };
    let body = match p.get("body") {
        None | Some(Value::Null) => None,
        Some(b @ Value::Object(_)) => Some(b),
        Some(other) => {
            return Err(ParamError::new(
                "body",
                format!(
                    "expected an index body (an object with settings and mappings), got {other}"
                ),
            ))
        }
    };
    let settings = match p.get("settings") {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(m),
        Some(other) => {
            return Err(ParamError::new(
                "settings",
                format!("expected an object of index settings, got {other}"),
            ))
        }
    };
    names
        .into_iter()
        .map(|name| {
            let declared = ctx.indices.iter().find(|i| i.name == name);
            let mut spec = match (declared, body) {
                (Some(_), Some(_)) => {
                    return Err(ParamError::new(
                        "body",
                        format!("index `{name}` is declared under `indices`, with its body there; drop `body` here"),
                    ))
                }
                (Some(i), None) => i.clone(),
                (None, Some(b)) => IndexSpec {
                    name,
                    body: b.clone(),
                },
                (None, None) => {
                    let hint = crate::suggest::did_you_mean(
                        &name,
                        ctx.indices.iter().map(|i| i.name.as_str()),
                    );
                    return Err(ParamError::new(
                        "index",
                        format!("index `{name}` is not declared under `indices`{hint}; declare it, or give its `body` here"),
                    ));
                }
            };
            // Rally merges only settings that say something (`if new_content:`): an empty
            // object leaves the body as it is, none where the index has none.
            if let Some(settings) = settings.filter(|s| !s.is_empty()) {
                merge_settings(&mut spec.body, settings);
            }
            Ok(spec)
        })
        .collect()
}

/// Rally's merge of an operation's `settings` into a body: its keys over the body's settings.
fn merge_settings(body: &mut Value, settings: &serde_json::Map<String, Value>) {
    if !body.is_object() {
        *body = Value::Object(Default::default());
    }
    let Some(body) = body.as_object_mut() else {
        return;
    };
    let target = body
        .entry("settings")
        .or_insert_with(|| Value::Object(Default::default()));
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Some(target) = target.as_object_mut() {
        for (k, v) in settings {
            target.insert(k.clone(), v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn create(indices: &[(&str, Value)], params: Value) -> Result<Vec<IndexSpec>, ParamError> {
        let indices: Vec<IndexSpec> = indices
            .iter()
            .map(|(n, b)| IndexSpec {
                name: n.to_string(),
                body: b.clone(),
            })
            .collect();
        let ctx = TrackContext {
            indices: &indices,
            corpora: &[],
            dir: None,
        };
        let map = params.as_object().unwrap().clone();
        indices_to_create(&Params::new("create-index", &map), &ctx)
    }

    #[test]
    fn declared_indices_take_the_operations_settings_over_theirs() {
        let made = create(
            &[(
                "a",
                json!({"settings": {"index.number_of_shards": 2, "index.refresh_interval": "1s"}}),
            )],
            json!({"settings": {"index.refresh_interval": "-1"}}),
        )
        .unwrap();
        assert_eq!(
            made[0].body,
            json!({"settings": {"index.number_of_shards": 2, "index.refresh_interval": "-1"}})
        );
    }

    #[test]
    fn empty_settings_leave_the_body_as_it_is_as_in_rally() {
        let made = create(&[("a", json!({}))], json!({"settings": {}})).unwrap();
        assert_eq!(made[0].body, json!({}));
    }

    #[test]
    fn an_undeclared_index_is_made_from_the_operations_body() {
        let body = json!({"mappings": {"properties": {"n": {"type": "long"}}}});
        let made = create(&[], json!({"index": ["x", "y"], "body": body})).unwrap();
        assert_eq!(made.len(), 2);
        assert_eq!((made[1].name.as_str(), &made[1].body), ("y", &body));
        let e = create(&[], json!({"index": "x"})).unwrap_err();
        assert!(e.message.contains("give its `body`"), "{}", e.message);
    }

    #[test]
    fn a_declared_index_keeps_its_declared_body_only() {
        let e = create(&[("a", json!({}))], json!({"index": "a", "body": {}})).unwrap_err();
        assert!(e.message.contains("drop `body`"), "{}", e.message);
        assert!(create(&[("a", json!({}))], json!({"index": []}))
            .unwrap()
            .is_empty());
    }
}
