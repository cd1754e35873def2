//! `GET [<index>/]_mapping`: each index's mappings as created (templates applied), with the
//! fields dynamic mapping has learned since, typed as Elasticsearch's dynamic mapping types
//! them (a string is `text` with a `keyword` multi-field, a whole number `long`, a fraction
//! `float`).

use crate::cluster::Engine;
use crate::index::EmbeddedIndex;
use crate::mapping::FieldType;
use crate::rest::RestResponse;
use serde_json::{json, Map, Value};

fn type_name(kind: FieldType) -> &'static str {
    match kind {
        FieldType::Text => "text",
        FieldType::Keyword => "keyword",
        FieldType::Long => "long",
        FieldType::Double => "float",
        FieldType::Boolean => "boolean",
        FieldType::Date => "date",
        FieldType::GeoPoint => "geo_point",
        FieldType::Ip => "ip",
        FieldType::Range(_) => "object",
        FieldType::DenseVector => "dense_vector",
        FieldType::GeoShape => "geo_shape",
        FieldType::Percolator => "percolator",
    }
}

/// The mappings with the learned fields put in their place (declared ones stay as declared).
fn with_learned(index: &EmbeddedIndex) -> Value {
    let mut mappings = index.mappings.clone();
    for (path, fields) in index.mapping.dynamic.learned_fields() {
        let Some((own, multi)) = fields.split_first() else {
            continue;
        };
        let mut def = json!({ "type": type_name(own.kind) });
        if !multi.is_empty() {
            let subs: Map<String, Value> = multi
                .iter()
                .map(|f| {
                    let sub = f.name.rsplit('.').next().unwrap_or(&f.name).to_string();
                    let mut d = json!({ "type": type_name(f.kind) });
                    if let Some(n) = f.ignore_above {
                        d["ignore_above"] = json!(n);
                    }
                    (sub, d)
                })
                .collect();
            def["fields"] = Value::Object(subs);
        }
        let mut at = &mut mappings;
        let parts: Vec<&str> = path.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            if !at.is_object() {
                break;
            }
            let props = at
                .as_object_mut()
                .expect("an object")
                .entry("properties")
                .or_insert_with(|| json!({}));
            let Some(props) = props.as_object_mut() else {
                break;
            };
            if i + 1 == parts.len() {
                props.entry(part.to_string()).or_insert(def);
                break;
            }
            at = props.entry(part.to_string()).or_insert_with(|| json!({}));
        }
    }
    mappings
}

impl Engine {
    pub(crate) fn get_mapping(&self, names: Option<&str>) -> RestResponse {
        let indices = match self.resolve(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        let out: Map<String, Value> = indices
            .iter()
            .map(|i| (i.name.clone(), json!({ "mappings": with_learned(i) })))
            .collect();
        RestResponse::json(200, &Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use crate::cluster::Engine;
    use crate::rest::tests::call;
    use serde_json::json;

    #[test]
    fn declared_and_learned_fields_are_shown() {
        let b = Engine::new();
        let body = r#"{"mappings": {"properties": {"name": {"type": "keyword"}}}}"#;
        assert_eq!(call(&b, "PUT", "/m", body).0, 200);
        let doc = r#"{"name": "x", "title": "a b", "n": 3, "user": {"age": 4}}"#;
        assert_eq!(call(&b, "PUT", "/m/_doc/1?refresh=true", doc).0, 201);
        let (s, r) = call(&b, "GET", "/m/_mapping", "");
        assert_eq!(s, 200);
        let props = &r["m"]["mappings"]["properties"];
        assert_eq!(props["name"], json!({"type": "keyword"}));
        assert_eq!(props["title"]["type"], "text");
        assert_eq!(props["title"]["fields"]["keyword"]["type"], "keyword");
        assert_eq!(props["n"]["type"], "long");
        assert_eq!(props["user"]["properties"]["age"]["type"], "long");
        assert_eq!(
            call(&b, "GET", "/_mapping", "").1["m"]["mappings"]["properties"]["name"]["type"],
            "keyword"
        );
        assert_eq!(call(&b, "GET", "/none/_mapping", "").0, 404);
    }
}
