//! Field types as Elasticsearch knows them, and `runtime` fields: those without a script read
//! `_source`, so they are indexed as their type and answer every query alike.

use super::UnsupportedType;
use serde_json::{Map, Value};

/// Field types Elasticsearch has (in its distribution and default plugins): a type outside
/// these is refused in its words, one inside that the engine lacks in the engine's.
const ELASTICSEARCH_TYPES: [&str; 51] = [
    "text",
    "keyword",
    "long",
    "integer",
    "short",
    "byte",
    "double",
    "float",
    "half_float",
    "scaled_float",
    "unsigned_long",
    "date",
    "date_nanos",
    "boolean",
    "binary",
    "ip",
    "object",
    "nested",
    "flattened",
    "geo_point",
    "geo_shape",
    "point",
    "shape",
    "integer_range",
    "float_range",
    "long_range",
    "double_range",
    "date_range",
    "ip_range",
    "alias",
    "completion",
    "search_as_you_type",
    "token_count",
    "dense_vector",
    "sparse_vector",
    "rank_feature",
    "rank_features",
    "percolator",
    "join",
    "histogram",
    "constant_keyword",
    "wildcard",
    "match_only_text",
    "version",
    "aggregate_metric_double",
    "murmur3",
    "annotated_text",
    "semantic_text",
    "counted_keyword",
    "passthrough",
    "exponential_histogram",
];

/// Elasticsearch's refusal of a type it does not have.
pub fn unknown_type_message(kind: &str, field: &str, runtime: bool) -> String {
    let leaf = field.rsplit('.').next().unwrap_or(field);
    let what = if runtime { "runtime field" } else { "field" };
    format!("Failed to parse mapping: The mapper type [{kind}] declared on {what} [{leaf}] does not exist. It might have been created within a future version or requires a plugin to be installed. Check the documentation.")
}

pub fn is_elasticsearch_type(kind: &str) -> bool {
    ELASTICSEARCH_TYPES.contains(&kind)
}

/// Runtime types that read a field's value from `_source`, as an indexed field of that type
/// answers the same queries.
const RUNTIME_TYPES: [&str; 7] = [
    "boolean",
    "date",
    "double",
    "geo_point",
    "ip",
    "keyword",
    "long",
];

/// The mapping's `properties` with its `runtime` fields added, when it has any. A runtime
/// field without a script reads `_source`'s value at query time; indexing that value answers
/// every query alike, so such a field is mapped as its type. One with a script is computed
/// when each document is indexed (`scripted`, marked `RUNTIME`): the same values the script
/// would give at query time. `composite` and `lookup` ones are refused.
pub(super) fn runtime_fields(body: &Value) -> Result<Option<Map<String, Value>>, UnsupportedType> {
    let Some(runtime) = body.pointer("/mappings/runtime").and_then(Value::as_object) else {
        return Ok(None);
    };
    let mut props = body
        .pointer("/mappings/properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    for (name, def) in runtime {
        let kind = def.get("type").and_then(Value::as_str).unwrap_or_default();
        let refuse = |why: String| UnsupportedType {
            field: name.clone(),
            kind: kind.to_string(),
            why: Some(why),
        };
        if !RUNTIME_TYPES.contains(&kind) && !matches!(kind, "composite" | "lookup") {
            return Err(refuse(unknown_type_message(kind, name, true)));
        }
        if matches!(kind, "composite" | "lookup") {
            return Err(refuse(format!(
                "a `{kind}` runtime field is not run by the embedded engine"
            )));
        }
        let mut field = Map::new();
        field.insert("type".into(), Value::String(kind.to_string()));
        if let Some(script) = def.get("script") {
            field.insert("script".into(), script.clone());
            field.insert(RUNTIME.into(), Value::Bool(true));
        }
        if let Some(format) = def.get("format") {
            field.insert("format".into(), format.clone());
        }
        insert_at(&mut props, name, Value::Object(field));
    }
    Ok(Some(props))
}

/// Marks a scripted field that came from `runtime`: its script shadows a value the source
/// has, rather than refusing the document.
pub(super) const RUNTIME: &str = "\u{0}runtime";

/// Puts `def` at a dotted `path` of `props`, through (or making) its objects' `properties`.
fn insert_at(props: &mut Map<String, Value>, path: &str, def: Value) {
    match path.split_once('.') {
        None => {
            props.insert(path.to_string(), def);
        }
        Some((head, rest)) => {
            let object = props
                .entry(head.to_string())
                .or_insert_with(|| serde_json::json!({ "properties": {} }));
            if let Some(inner) = object
                .as_object_mut()
                .map(|o| {
                    o.entry("properties")
                        .or_insert_with(|| serde_json::json!({}))
                })
                .and_then(Value::as_object_mut)
            {
                insert_at(inner, rest, def);
            }
        }
    }
}
