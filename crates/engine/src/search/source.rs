//! `_source` filtering, as Elasticsearch's fetch phase does it: `false` leaves the source out,
//! a pattern or a list of them keeps the matching fields, and `includes`/`excludes` (or
//! `include`/`exclude`) keep and drop by full dotted paths with `*` wildcards. An object whose
//! path matches is kept whole (less its excluded fields); one that could hold a match deeper is
//! descended into, and dropped when nothing in it is kept; arrays are filtered item by item.

use serde_json::{Map, Value};

/// What a search shows of each hit's stored source.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum SourceFilter {
    /// The stored bytes as they are.
    #[default]
    Whole,
    /// No `_source` in the hit.
    Hidden,
    Filtered {
        includes: Vec<String>,
        excludes: Vec<String>,
    },
}

impl SourceFilter {
    /// The `_source` of a search body (or of the URL parameters, turned into it).
    pub fn parse(v: Option<&Value>) -> Result<SourceFilter, String> {
        let list = |v: &Value, what: &str| -> Result<Vec<String>, String> {
            match v {
                Value::String(s) => Ok(vec![s.clone()]),
                Value::Array(items) => items
                    .iter()
                    .map(|i| {
                        i.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| format!("`_source` {what}: {i} is not a field pattern"))
                    })
                    .collect(),
                other => Err(format!(
                    "`_source` {what}: {other} is not a field pattern or a list of them"
                )),
            }
        };
        let filtered = |includes: Vec<String>, excludes: Vec<String>| {
            if includes.is_empty() && excludes.is_empty() {
                SourceFilter::Whole
            } else {
                SourceFilter::Filtered { includes, excludes }
            }
        };
        match v {
            None | Some(Value::Bool(true)) | Some(Value::Null) => Ok(SourceFilter::Whole),
            Some(Value::Bool(false)) => Ok(SourceFilter::Hidden),
            Some(v @ (Value::String(_) | Value::Array(_))) => {
                Ok(filtered(list(v, "")?, Vec::new()))
            }
            Some(Value::Object(o)) => {
                if let Some(k) = o
                    .keys()
                    .find(|k| !["includes", "include", "excludes", "exclude"].contains(&k.as_str()))
                {
                    return Err(format!(
                        "`_source` option `{k}` is not one of includes, excludes"
                    ));
                }
                let get = |a: &str, b: &str| o.get(a).or_else(|| o.get(b));
                let includes = get("includes", "include")
                    .map(|v| list(v, "includes"))
                    .transpose()?;
                let excludes = get("excludes", "exclude")
                    .map(|v| list(v, "excludes"))
                    .transpose()?;
                Ok(filtered(
                    includes.unwrap_or_default(),
                    excludes.unwrap_or_default(),
                ))
            }
            Some(other) => Err(format!(
                "`_source`: {other} is not true, false, a pattern, a list or an object"
            )),
        }
    }

    /// The source a hit shows, or None when it shows none.
    pub fn apply(&self, source: Vec<u8>) -> Option<Vec<u8>> {
        match self {
            SourceFilter::Whole => Some(source),
            SourceFilter::Hidden => None,
            SourceFilter::Filtered { includes, excludes } => {
                let doc: Value = serde_json::from_slice(&source).ok()?;
                let kept = match &doc {
                    Value::Object(m) => filter(m, "", includes, excludes),
                    _ => Map::new(),
                };
                serde_json::to_vec(&Value::Object(kept)).ok()
            }
        }
    }
}

fn filter(
    map: &Map<String, Value>,
    prefix: &str,
    includes: &[String],
    excludes: &[String],
) -> Map<String, Value> {
    let mut out = Map::new();
    for (key, value) in map {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        if excludes
            .iter()
            .any(|p| crate::names::simple_match(p, &path))
        {
            continue;
        }
        let whole = includes.is_empty()
            || includes
                .iter()
                .any(|p| crate::names::simple_match(p, &path));
        let deeper = !whole && includes.iter().any(|p| may_match_below(p, &path));
        if let Some(kept) = keep(value, &path, whole, deeper, includes, excludes) {
            out.insert(key.clone(), kept);
        }
    }
    out
}

/// A value kept whole (its own exclusions still apply), descended into, or dropped.
fn keep(
    value: &Value,
    path: &str,
    whole: bool,
    deeper: bool,
    includes: &[String],
    excludes: &[String],
) -> Option<Value> {
    let inner: &[String] = if whole { &[] } else { includes };
    match value {
        Value::Object(m) if whole || deeper => {
            let kept = filter(m, path, inner, excludes);
            (whole || !kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) if whole || deeper => {
            let kept: Vec<Value> = items
                .iter()
                .filter_map(|item| match item {
                    Value::Object(m) => {
                        let k = filter(m, path, inner, excludes);
                        (whole || !k.is_empty()).then_some(Value::Object(k))
                    }
                    other => whole.then(|| other.clone()),
                })
                .collect();
            (whole || !kept.is_empty()).then_some(Value::Array(kept))
        }
        other => whole.then(|| other.clone()),
    }
}

/// Whether `pattern` could match a path below `path` (`path.something`).
fn may_match_below(pattern: &str, path: &str) -> bool {
    let below = format!("{path}.");
    match pattern.find('*') {
        None => pattern.starts_with(&below),
        // The literal part before the first wildcard and the path agree as far as both go.
        Some(star) => {
            let literal = &pattern[..star];
            literal.starts_with(&below) || below.starts_with(literal)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shown(filter: Value, doc: Value) -> Option<Value> {
        let f = SourceFilter::parse(Some(&filter)).unwrap();
        f.apply(serde_json::to_vec(&doc).unwrap())
            .map(|b| serde_json::from_slice(&b).unwrap())
    }

    #[test]
    fn includes_and_excludes_by_dotted_paths_and_wildcards() {
        let doc = json!({"name": "a", "geo": {"lat": 1, "lon": 2, "meta": {"src": "x"}}, "tags": [{"k": 1, "v": 2}, {"k": 3}], "pop": 7});
        assert_eq!(shown(json!(false), doc.clone()), None);
        assert_eq!(shown(json!(true), doc.clone()), Some(doc.clone()));
        assert_eq!(
            shown(json!("name"), doc.clone()),
            Some(json!({"name": "a"}))
        );
        assert_eq!(
            shown(json!(["geo.lat", "pop"]), doc.clone()),
            Some(json!({"geo": {"lat": 1}, "pop": 7}))
        );
        assert_eq!(
            shown(
                json!({"includes": ["geo"], "excludes": ["geo.meta"]}),
                doc.clone()
            ),
            Some(json!({"geo": {"lat": 1, "lon": 2}}))
        );
        assert_eq!(
            shown(json!({"includes": "g*.l*"}), doc.clone()),
            Some(json!({"geo": {"lat": 1, "lon": 2}}))
        );
        assert_eq!(
            shown(json!({"includes": ["tags.k"]}), doc.clone()),
            Some(json!({"tags": [{"k": 1}, {"k": 3}]}))
        );
        assert_eq!(
            shown(json!({"excludes": ["*.meta", "tags"]}), doc.clone()),
            Some(json!({"name": "a", "geo": {"lat": 1, "lon": 2}, "pop": 7}))
        );
        assert_eq!(shown(json!(["nothing"]), doc), Some(json!({})));
    }

    #[test]
    fn what_is_not_a_filter_is_named() {
        assert!(
            SourceFilter::parse(Some(&json!({"include": "a", "only": "b"})))
                .unwrap_err()
                .contains("`only`")
        );
        assert!(SourceFilter::parse(Some(&json!(3))).is_err());
        assert!(SourceFilter::parse(Some(&json!([1]))).is_err());
    }
}
