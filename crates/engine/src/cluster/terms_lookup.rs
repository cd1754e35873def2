//! Terms lookup: a `terms` query whose values are another document's, `{"terms": {"field":
//! {"index": "users", "id": "2", "path": "followers"}}}`. Elasticsearch fetches the document
//! (a realtime get) when the search is rewritten, before any index runs it; so does this,
//! replacing the lookup with the values found, in the query and in filter aggregations alike.

use crate::cluster::Engine;
use crate::error::{Error, ErrorKind};
use serde_json::Value;

/// Elasticsearch's default `index.max_terms_count`: a lookup finding more is refused.
const MAX_TERMS: usize = 65_536;

/// `body` with each terms lookup replaced by no values: what a search with lookups is checked
/// and prepared as, before its lookups are resolved (per call). Equal to `body` when it has
/// none.
pub fn lookups_emptied(body: &Value) -> Value {
    let mut body = body.clone();
    let _ = each_lookup(&mut body, 0, &mut |_, spec| {
        *spec = Value::Array(Vec::new());
        Ok(())
    });
    body
}

/// How deep a body is walked for lookups; a body nested deeper is refused by the parser later.
const MAX_DEPTH: usize = 64;

/// Calls `f` with the field and the spec of each terms lookup in `v` (a `terms` entry whose
/// value is an object with `id`; a terms aggregation's `{"field": "name"}` is not one).
fn each_lookup(
    v: &mut Value,
    depth: usize,
    f: &mut impl FnMut(&str, &mut Value) -> Result<(), Error>,
) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Ok(());
    }
    match v {
        Value::Object(o) => {
            if let Some(Value::Object(terms)) = o.get_mut("terms") {
                for (field, spec) in terms.iter_mut() {
                    if spec.as_object().is_some_and(|s| s.contains_key("id")) {
                        f(field, spec)?;
                    }
                }
            }
            for child in o.values_mut() {
                each_lookup(child, depth + 1, f)?;
            }
        }
        Value::Array(a) => {
            for child in a {
                each_lookup(child, depth + 1, f)?;
            }
        }
        _ => {}
    }
    Ok(())
}

impl Engine {
    /// Replaces every terms lookup in `body` with the values it finds.
    pub fn resolve_terms_lookups(&self, body: &mut Value) -> Result<(), Error> {
        each_lookup(body, 0, &mut |field, spec| {
            *spec = Value::Array(self.looked_up(field, spec)?);
            Ok(())
        })
    }

    /// The values one lookup (`spec`, for `field`) finds.
    fn looked_up(&self, field: &str, spec: &Value) -> Result<Vec<Value>, Error> {
        let bad = |m: String| Error::new(ErrorKind::BadRequest, m);
        let lookup = spec
            .as_object()
            .ok_or_else(|| bad("a terms lookup is an object".into()))?;
        for k in lookup.keys() {
            if !["index", "id", "path", "routing"].contains(&k.as_str()) {
                return Err(bad(format!(
                    "[terms] query does not support [{k}] within lookup element"
                )));
            }
        }
        let text = |k: &str| match lookup.get(k) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Number(n)) => Ok(n.to_string()),
            _ => Err(bad(format!(
                "[terms] query lookup element requires specifying the {k} value for field [{field}]"
            ))),
        };
        let (index, id, path) = (text("index")?, text("id")?, text("path")?);
        let Some(found) = self.index(&index) else {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("no such index [{index}]"),
            ));
        };
        // A missing document looks up no terms: the query matches nothing.
        let mut values = Vec::new();
        if let Some((source, _)) = found.current(&id)? {
            let doc: Value = serde_json::from_str(&source).unwrap_or(Value::Null);
            extract(&doc, &path.split('.').collect::<Vec<_>>(), &mut values);
        }
        if values.len() > MAX_TERMS {
            return Err(bad(format!("The number of terms [{}] used in the Terms Query request has exceeded the allowed maximum of [{MAX_TERMS}]. This maximum can be set by changing the [index.max_terms_count] index level setting.", values.len())));
        }
        Ok(values)
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
