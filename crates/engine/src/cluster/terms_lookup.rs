//! Terms lookup: a `terms` query whose values are another document's, `{"terms": {"field":
//! {"index": "users", "id": "2", "path": "followers"}}}`. Elasticsearch fetches the document
//! (a realtime get) when the search is rewritten, before any index runs it; so does this,
//! replacing the lookup with the values found, in the query and in filter aggregations alike.

use crate::cluster::Engine;
use crate::error::{Error, ErrorKind};
use serde_json::Value;

/// Elasticsearch's default `index.max_terms_count`: a lookup finding more is refused.
const MAX_TERMS: usize = 65_536;

/// Whether `body` holds a terms lookup anywhere (a search that has one resolves it per call).
pub fn has_terms_lookup(body: &Value) -> bool {
    fn walk(v: &Value, depth: usize) -> bool {
        depth <= MAX_DEPTH
            && match v {
                Value::Object(o) => {
                    o.get("terms").and_then(Value::as_object).is_some_and(|t| {
                        t.values()
                            .any(|s| s.as_object().is_some_and(|s| s.contains_key("id")))
                    }) || o.values().any(|c| walk(c, depth + 1))
                }
                Value::Array(a) => a.iter().any(|c| walk(c, depth + 1)),
                _ => false,
            }
    }
    walk(body, 0)
}

/// `body` with each terms lookup replaced by no values: what a search with lookups is checked
/// and prepared as, before its lookups are resolved (per call).
pub fn lookups_emptied(body: &Value) -> Value {
    fn walk(v: &mut Value, depth: usize) {
        if depth > MAX_DEPTH {
            return;
        }
        match v {
            Value::Object(o) => {
                if let Some(Value::Object(t)) = o.get_mut("terms") {
                    for spec in t.values_mut() {
                        if spec.as_object().is_some_and(|s| s.contains_key("id")) {
                            *spec = Value::Array(Vec::new());
                        }
                    }
                }
                o.values_mut().for_each(|c| walk(c, depth + 1));
            }
            Value::Array(a) => a.iter_mut().for_each(|c| walk(c, depth + 1)),
            _ => {}
        }
    }
    let mut body = body.clone();
    walk(&mut body, 0);
    body
}

/// How deep a body is walked for lookups; a body nested deeper is refused by the parser later.
const MAX_DEPTH: usize = 64;

impl Engine {
    /// Replaces every terms lookup in `body` with the values it finds.
    pub fn resolve_terms_lookups(&self, body: &mut Value) -> Result<(), Error> {
        self.walk(body, 0)
    }

    fn walk(&self, v: &mut Value, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Ok(());
        }
        match v {
            Value::Object(o) => {
                if let Some(terms) = o.get_mut("terms") {
                    self.lookup(terms)?;
                }
                for child in o.values_mut() {
                    self.walk(child, depth + 1)?;
                }
            }
            Value::Array(a) => {
                for child in a {
                    self.walk(child, depth + 1)?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// A `terms` query's field, when it names a lookup (an object with `id`), becomes the list
    /// of values found. A terms aggregation (`{"field": "name"}`) is left as it is.
    fn lookup(&self, terms: &mut Value) -> Result<(), Error> {
        let Some(o) = terms.as_object_mut() else {
            return Ok(());
        };
        for (field, spec) in o.iter_mut() {
            let Some(lookup) = spec.as_object().filter(|s| s.contains_key("id")) else {
                continue;
            };
            let bad = |m: String| Error::new(ErrorKind::BadRequest, m);
            for k in lookup.keys() {
                if !["index", "id", "path", "routing"].contains(&k.as_str()) {
                    return Err(bad(format!(
                        "[terms] query does not support [{k}] within lookup element"
                    )));
                }
            }
            let text = |k: &str| {
                match lookup.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                _ => Err(bad(format!(
                    "[terms] query lookup element requires specifying the {k} value for field [{field}]"
                ))),
            }
            };
            let (index, id, path) = (text("index")?, text("id")?, text("path")?);
            let Some(found) = self.index(&index) else {
                return Err(Error::new(
                    ErrorKind::NotFound,
                    format!("no such index [{index}]"),
                ));
            };
            // A missing document looks up no terms: the query matches nothing.
            let values = match found.current(&id) {
                Ok(Some((source, _))) => {
                    let doc: Value = serde_json::from_str(&source).unwrap_or(Value::Null);
                    let mut out = Vec::new();
                    extract(&doc, &path.split('.').collect::<Vec<_>>(), &mut out);
                    out
                }
                Ok(None) => Vec::new(),
                Err(e) => return Err(e),
            };
            if values.len() > MAX_TERMS {
                return Err(bad(format!("The number of terms [{}] used in the Terms Query request has exceeded the allowed maximum of [{MAX_TERMS}]. This maximum can be set by changing the [index.max_terms_count] index level setting.", values.len())));
            }
            *spec = Value::Array(values);
        }
        Ok(())
    }
}

/// The values at a dotted path, through arrays (of values and of objects), as Elasticsearch's
/// `extractRawValues` reads a source.
fn extract(v: &Value, path: &[&str], out: &mut Vec<Value>) {
    match (v, path.split_first()) {
        (Value::Array(a), _) => a.iter().for_each(|x| extract(x, path, out)),
        (Value::Null, _) => {}
        (leaf, None) => out.push(leaf.clone()),
        // A key may be dotted (`"a.b": 1`): the same path as nested objects.
        (Value::Object(o), Some(_)) => {
            for (k, x) in o {
                let key: Vec<&str> = k.split('.').collect();
                if path.len() >= key.len() && path[..key.len()] == key[..] {
                    extract(x, &path[key.len()..], out);
                }
            }
        }
        (_, Some(_)) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::extract;
    use serde_json::json;

    #[test]
    fn values_are_found_through_arrays_and_dotted_keys() {
        let doc = json!({"f": ["a", "b"], "u": [{"id": 1}, {"id": [2, 3]}], "x.y": "z", "n": null});
        let got = |path: &str| {
            let mut out = Vec::new();
            extract(&doc, &path.split('.').collect::<Vec<_>>(), &mut out);
            out
        };
        assert_eq!(got("f"), vec![json!("a"), json!("b")]);
        assert_eq!(got("u.id"), vec![json!(1), json!(2), json!(3)]);
        assert_eq!(got("x.y"), vec![json!("z")]);
        assert!(got("n").is_empty());
        assert!(got("missing").is_empty());
        assert!(got("f.deeper").is_empty());
    }
}
