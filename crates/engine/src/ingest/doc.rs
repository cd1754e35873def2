//! A document as an ingest pipeline sees it: its source, its metadata (`_index`, `_id`) and
//! `_ingest.timestamp`, read and written by dotted paths as Elasticsearch's `IngestDocument`.

use serde_json::{Map, Value};
use std::borrow::Cow;

pub struct IngestDoc {
    pub source: Map<String, Value>,
    pub index: String,
    pub id: Option<String>,
    /// `_ingest.timestamp`: when the pipeline started on the document, RFC 3339.
    pub timestamp: String,
    /// The other `_ingest` metadata: `_value` in a `foreach`, `_grok_match_index`.
    pub ingest: Map<String, Value>,
}

/// A path's place: a metadata field or one in the source.
enum Place<'p> {
    Index,
    Id,
    Timestamp,
    Ingest(&'p str),
    Source(&'p str),
}

fn place(path: &str) -> Place<'_> {
    match path {
        "_index" => Place::Index,
        "_id" => Place::Id,
        "_ingest.timestamp" => Place::Timestamp,
        p => match p.strip_prefix("_ingest.") {
            Some(rest) => Place::Ingest(rest),
            None => Place::Source(p.strip_prefix("_source.").unwrap_or(p)),
        },
    }
}

impl IngestDoc {
    /// The document as a script's `ctx`: its source, `_index` and `_id`.
    pub fn ctx(&self) -> crate::painless::Val {
        use crate::painless::Val;
        let mut m: Vec<(String, Val)> = self
            .source
            .iter()
            .map(|(k, v)| (k.clone(), Val::from_json(v)))
            .collect();
        m.push(("_index".into(), Val::Str(self.index.clone())));
        m.push(("_id".into(), self.id.clone().map_or(Val::Null, Val::Str)));
        Val::map(m)
    }

    /// `_ingest.timestamp` in epoch milliseconds (a script's `metadata().now`).
    pub fn now_ms(&self) -> i64 {
        chrono::DateTime::parse_from_rfc3339(&self.timestamp).map_or(0, |t| t.timestamp_millis())
    }

    /// Takes back the `ctx` a script changed: the source, and `_index` and `_id`.
    pub fn set_ctx(&mut self, ctx: crate::painless::Val) -> Result<(), String> {
        let Value::Object(mut m) = ctx.to_json().map_err(|e| e.to_string())? else {
            return Err("the script left `ctx` something other than a map".into());
        };
        match m.remove("_index") {
            Some(Value::String(i)) => self.index = i,
            Some(other) => return Err(format!("`ctx._index` must be a string, got {other}")),
            None => {}
        }
        self.id = match m.remove("_id") {
            Some(Value::String(id)) => Some(id),
            Some(Value::Null) | None => None,
            Some(other) => Some(other.to_string()),
        };
        self.source = m;
        Ok(())
    }

    pub fn get(&self, path: &str) -> Option<Cow<'_, Value>> {
        match place(path) {
            Place::Index => Some(Cow::Owned(Value::String(self.index.clone()))),
            Place::Id => self.id.clone().map(|id| Cow::Owned(Value::String(id))),
            Place::Timestamp => Some(Cow::Owned(Value::String(self.timestamp.clone()))),
            Place::Source(p) => get_in(&self.source, p).map(Cow::Borrowed),
            Place::Ingest(p) => get_in(&self.ingest, p).map(Cow::Borrowed),
        }
    }

    /// The text of the field a processor reads (a string, number or boolean); None (the
    /// processor does nothing) when it is missing and `ignore_missing` says so.
    pub fn text_of(&self, field: &str, ignore_missing: bool) -> Result<Option<String>, String> {
        match self.get(field) {
            Some(v) if !v.is_null() => scalar_text(&v).map(Some).ok_or_else(|| {
                format!(
                    "field [{field}] of type [{}] cannot be cast to a string",
                    kind(&v)
                )
            }),
            _ if ignore_missing => Ok(None),
            _ => Err(format!(
                "field [{field}] not present as part of path [{field}]"
            )),
        }
    }

    pub fn has(&self, path: &str) -> bool {
        self.get(path).is_some()
    }

    /// Sets `path`, making the objects on the way; a scalar on the way is an error, as in
    /// Elasticsearch.
    pub fn set(&mut self, path: &str, value: Value) -> Result<(), String> {
        match place(path) {
            Place::Index => {
                self.index = scalar_text(&value)
                    .ok_or_else(|| format!("`_index` must be a string, got {value}"))?;
            }
            Place::Id => {
                self.id = Some(
                    scalar_text(&value)
                        .ok_or_else(|| format!("`_id` must be a string, got {value}"))?,
                );
            }
            Place::Timestamp => return Err("`_ingest.timestamp` cannot be set".into()),
            Place::Source(p) => set_in(&mut self.source, p, value)?,
            Place::Ingest(p) => set_in(&mut self.ingest, p, value)?,
        }
        Ok(())
    }

    pub fn remove(&mut self, path: &str) -> Option<Value> {
        match place(path) {
            Place::Index | Place::Timestamp => None,
            Place::Id => self.id.take().map(Value::String),
            Place::Source(p) => remove_in(&mut self.source, p),
            Place::Ingest(p) => remove_in(&mut self.ingest, p),
        }
    }

    /// A mustache template of Elasticsearch's ingest processors: `{{{path}}}` is the field's
    /// text, `{{path}}` the same HTML-escaped; a missing field is empty.
    pub fn render(&self, template: &str) -> String {
        let mut out = String::with_capacity(template.len());
        let mut rest = template;
        while let Some(start) = rest.find("{{") {
            out.push_str(&rest[..start]);
            let after = &rest[start..];
            let (raw, open, close) = if after.starts_with("{{{") {
                (true, 3, "}}}")
            } else {
                (false, 2, "}}")
            };
            let Some(end) = after[open..].find(close) else {
                out.push_str(after);
                return out;
            };
            let path = after[open..open + end].trim();
            let text = self
                .get(path)
                .map(|v| scalar_text(&v).unwrap_or_else(|| v.to_string()))
                .unwrap_or_default();
            if raw {
                out.push_str(&text);
            } else {
                html_escape(&text, &mut out);
            }
            rest = &after[open + end + close.len()..];
        }
        out.push_str(rest);
        out
    }
}

/// The value at a dotted path (through objects, and lists by index).
fn get_in<'a>(root: &'a Map<String, Value>, p: &str) -> Option<&'a Value> {
    let mut parts = p.split('.');
    let mut at = root.get(parts.next()?)?;
    for part in parts {
        at = match at {
            Value::Object(m) => m.get(part)?,
            Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(at)
}

/// Sets a dotted path, making the objects on the way; a scalar on the way is an error, as in
/// Elasticsearch.
fn set_in(root: &mut Map<String, Value>, p: &str, value: Value) -> Result<(), String> {
    let (parents, last) = split_last(p);
    let mut at = root;
    for part in parents {
        let next = at
            .entry(part.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        at = match next {
            Value::Object(m) => m,
            other => {
                return Err(format!(
                    "cannot set [{last}] as part of path [{p}]: [{part}] is {}, not an object",
                    kind(other)
                ))
            }
        };
    }
    at.insert(last.to_string(), value);
    Ok(())
}

fn remove_in(root: &mut Map<String, Value>, p: &str) -> Option<Value> {
    let (parents, last) = split_last(p);
    let mut at = root;
    for part in parents {
        at = at.get_mut(part)?.as_object_mut()?;
    }
    at.remove(last)
}

/// A dotted path's parent parts, and its last part.
fn split_last(path: &str) -> (impl Iterator<Item = &str>, &str) {
    let (parents, last) = match path.rsplit_once('.') {
        Some((parents, last)) => (Some(parents), last),
        None => (None, path),
    };
    (parents.into_iter().flat_map(|ps| ps.split('.')), last)
}

/// A string as itself, a number or boolean as its text; None for null, objects and arrays.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn html_escape(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '=' => out.push_str("&#61;"),
            c => out.push(c),
        }
    }
}

/// A document of index `logs`, for tests.
#[cfg(test)]
pub fn doc(v: Value) -> IngestDoc {
    IngestDoc {
        source: v.as_object().cloned().unwrap_or_default(),
        index: "logs".into(),
        id: None,
        timestamp: "2026-12-05T10:00:00.000Z".into(),
        ingest: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_nested_objects_lists_and_metadata() {
        let mut d = doc(json!({"a": {"b": [10, {"c": "x"}]}, "n": 1}));
        assert_eq!(d.get("a.b.1.c").as_deref(), Some(&json!("x")));
        assert_eq!(d.get("_source.n").as_deref(), Some(&json!(1)));
        assert_eq!(d.get("_index").as_deref(), Some(&json!("logs")));
        assert!(d.get("a.b.7").is_none() && d.get("n.x").is_none());
        d.set("p.q.r", json!(true)).unwrap();
        assert_eq!(d.source["p"], json!({"q": {"r": true}}));
        let refused = d.set("n.x", json!(1)).unwrap_err();
        assert!(refused.contains("[n] is a number"), "{refused}");
        d.set("_id", json!(42)).unwrap();
        assert_eq!(d.id.as_deref(), Some("42"));
        assert_eq!(d.remove("p.q"), Some(json!({"r": true})));
        assert_eq!(d.source["p"], json!({}));
        assert_eq!(d.remove("nope.x"), None);
    }

    #[test]
    fn templates_read_fields_raw_or_escaped() {
        let d = doc(json!({"user": {"name": "a<b"}, "n": 3}));
        assert_eq!(
            d.render("{{{_ingest.timestamp}}}"),
            "2026-12-05T10:00:00.000Z"
        );
        assert_eq!(
            d.render("{{user.name}}/{{{user.name}}}-{{n}}{{missing}}!"),
            "a&lt;b/a<b-3!"
        );
        assert_eq!(d.render("no {{ end"), "no {{ end");
    }
}
