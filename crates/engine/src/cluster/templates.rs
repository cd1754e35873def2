//! Index templates: legacy (`_template`), composable (`_index_template`) and component
//! (`_component_template`) ones, applied when an index is created, as Elasticsearch does:
//! the highest-priority composable template whose pattern matches (with its component
//! templates, in order), else every matching legacy template by `order`; the create-index
//! body itself wins over all of them.

use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TemplateKind {
    Legacy,
    Composable,
    Component,
}

#[derive(Default)]
pub struct Templates {
    stored: BTreeMap<(TemplateKind, String), Value>,
}

fn patterns(body: &Value) -> Vec<String> {
    crate::util::string_list(body.get("index_patterns"))
}

impl Templates {
    pub fn put(&mut self, kind: TemplateKind, name: &str, body: Value) -> Result<(), String> {
        if kind != TemplateKind::Component && patterns(&body).is_empty() {
            return Err("a template needs `index_patterns`".into());
        }
        self.stored.insert((kind, name.to_string()), body);
        Ok(())
    }

    pub fn delete(&mut self, kind: TemplateKind, name: &str) -> bool {
        self.stored.remove(&(kind, name.to_string())).is_some()
    }

    pub fn get(&self, kind: TemplateKind, name: &str) -> Option<&Value> {
        self.stored.get(&(kind, name.to_string()))
    }

    /// The templates of a kind whose names match `names` (a comma list with `*`), by name.
    pub fn matching(&self, kind: TemplateKind, names: &str) -> Vec<(&str, &Value)> {
        self.stored
            .iter()
            .filter(|((k, n), _)| {
                *k == kind && names.split(',').any(|p| crate::names::simple_match(p, n))
            })
            .map(|((_, n), t)| (n.as_str(), t))
            .collect()
    }

    /// The template that makes `name` a data stream: the highest-priority composable template
    /// matching it, when it has `data_stream`.
    pub fn data_stream_template(&self, name: &str) -> Option<String> {
        self.stored
            .iter()
            .filter(|((k, _), t)| {
                *k == TemplateKind::Composable
                    && patterns(t)
                        .iter()
                        .any(|p| crate::names::simple_match(p, name))
            })
            .max_by_key(|(_, t)| t.get("priority").and_then(Value::as_i64).unwrap_or(0))
            .filter(|(_, t)| t.get("data_stream").is_some())
            .map(|((_, n), _)| n.clone())
    }

    /// The body an index named `name` is created with: the matching templates' settings and
    /// mappings, then `body` over them.
    pub fn apply(&self, name: &str, body: &Value) -> Value {
        let matching = |kind| {
            self.stored.iter().filter(move |((k, _), t)| {
                *k == kind
                    && patterns(t)
                        .iter()
                        .any(|p| crate::names::simple_match(p, name))
            })
        };
        let mut layers: Vec<Value> = Vec::new();
        let composable = matching(TemplateKind::Composable)
            .max_by_key(|(_, t)| t.get("priority").and_then(Value::as_i64).unwrap_or(0));
        match composable {
            Some((_, t)) => {
                for part in t
                    .get("composed_of")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                {
                    if let Some(c) = self.get(TemplateKind::Component, part) {
                        layers.push(c.get("template").cloned().unwrap_or(json!({})));
                    }
                }
                layers.push(t.get("template").cloned().unwrap_or(json!({})));
            }
            None => {
                let mut legacy: Vec<&Value> =
                    matching(TemplateKind::Legacy).map(|(_, t)| t).collect();
                legacy.sort_by_key(|t| t.get("order").and_then(Value::as_i64).unwrap_or(0));
                layers.extend(legacy.into_iter().map(|t| json!({ "settings": t.get("settings").cloned().unwrap_or(json!({})), "mappings": t.get("mappings").cloned().unwrap_or(json!({})) })));
            }
        }
        if layers.is_empty() {
            return body.clone();
        }
        let mut out = json!({});
        for layer in layers.iter().chain(std::iter::once(body)) {
            for key in ["settings", "mappings", "aliases"] {
                if let Some(v) = layer.get(key) {
                    crate::index::merge(
                        out.as_object_mut()
                            .expect("object")
                            .entry(key)
                            .or_insert(json!({})),
                        v,
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composable_templates_win_and_the_body_wins_over_them() {
        let mut t = Templates::default();
        t.put(
            TemplateKind::Component,
            "base",
            json!({"template": {"mappings": {"properties": {"a": {"type": "long"}}}}}),
        )
        .unwrap();
        t.put(TemplateKind::Composable, "low", json!({"index_patterns": ["logs-*"], "priority": 1, "template": {"mappings": {"properties": {"x": {"type": "keyword"}}}}})).unwrap();
        t.put(TemplateKind::Composable, "high", json!({"index_patterns": "logs-*", "priority": 9, "composed_of": ["base"], "template": {"settings": {"number_of_shards": 2}}})).unwrap();
        t.put(TemplateKind::Legacy, "old", json!({"index_patterns": ["logs-*"], "mappings": {"properties": {"old": {"type": "long"}}}})).unwrap();
        let body = t.apply(
            "logs-1",
            &json!({"mappings": {"properties": {"b": {"type": "text"}}}}),
        );
        assert_eq!(
            body["mappings"]["properties"],
            json!({"a": {"type": "long"}, "b": {"type": "text"}})
        );
        assert_eq!(body["settings"]["number_of_shards"], 2);
        let legacy = t.apply("old-style", &json!({}));
        assert_eq!(legacy, json!({}));
        assert!(
            t.delete(TemplateKind::Composable, "high") && t.delete(TemplateKind::Composable, "low")
        );
        assert_eq!(
            t.apply("logs-2", &json!({}))["mappings"]["properties"]["old"]["type"],
            "long"
        );
        assert!(t.put(TemplateKind::Legacy, "bad", json!({})).is_err());
    }
}
