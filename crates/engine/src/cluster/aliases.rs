//! Index aliases: a name for one or more indices, each with an optional filter (a query every
//! search through the alias adds, without scoring) and a write index. A search reads one index
//! here, so an alias (or a pattern) naming several is refused, naming them.

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct AliasTarget {
    pub filter: Option<Value>,
    pub is_write_index: Option<bool>,
    pub is_hidden: Option<bool>,
    /// Routing does nothing on one shard; it is kept and shown, as Elasticsearch shows it.
    pub index_routing: Option<String>,
    pub search_routing: Option<String>,
}

/// The keys of an alias's own body.
const ALIAS_KEYS: [&str; 6] = [
    "filter",
    "routing",
    "index_routing",
    "search_routing",
    "is_write_index",
    "is_hidden",
];

impl AliasTarget {
    /// An alias's body (`filter`, `is_write_index`, `is_hidden`, routing); `also` names keys
    /// the body may carry besides (an alias action's `index`, `alias`, ...). Anything else,
    /// or a value of the wrong type, is refused in Elasticsearch's words.
    pub fn parse(body: &Value, also: &[&str]) -> Result<AliasTarget, String> {
        if let Some(k) = body
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys())
            .find(|k| !ALIAS_KEYS.contains(&k.as_str()) && !also.contains(&k.as_str()))
        {
            return Err(format!("Unsupported field [{k}]"));
        }
        let filter = body.get("filter").filter(|f| !f.is_null()).cloned();
        if let Some(f) = &filter {
            if !f.is_object() {
                return Err(format!("an alias's `filter` is a query, got {f}"));
            }
        }
        let flag = |key: &str| match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(other) => Err(format!(
                "Unsupported {} type value [{}] for field [{key}]",
                json_type(other),
                crate::util::plain(other)
            )),
        };
        let routing = |key: &str| match body.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Number(n)) => Ok(Some(n.to_string())),
            Some(Value::Array(_)) => Err(format!(
                "Failed to parse field [{key}]: Unexpected token [START_ARRAY]"
            )),
            Some(Value::Object(_)) => Err(format!(
                "Failed to parse field [{key}]: Unexpected token [START_OBJECT]"
            )),
            Some(other) => Err(format!(
                "Unsupported {} type value [{}] for field [{key}]",
                json_type(other),
                crate::util::plain(other)
            )),
        };
        let both = routing("routing")?;
        Ok(AliasTarget {
            filter,
            is_write_index: flag("is_write_index")?,
            is_hidden: flag("is_hidden")?,
            index_routing: routing("index_routing")?.or_else(|| both.clone()),
            search_routing: routing("search_routing")?.or(both),
        })
    }

    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        if let Some(f) = &self.filter {
            o.insert("filter".into(), f.clone());
        }
        if let Some(r) = &self.index_routing {
            o.insert("index_routing".into(), json!(r));
        }
        if let Some(r) = &self.search_routing {
            o.insert("search_routing".into(), json!(r));
        }
        if let Some(w) = self.is_write_index {
            o.insert("is_write_index".into(), json!(w));
        }
        if let Some(h) = self.is_hidden {
            o.insert("is_hidden".into(), json!(h));
        }
        Value::Object(o)
    }
}

/// A JSON value's type as Elasticsearch's parser names it.
fn json_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "String",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null => "null",
    }
}

/// Alias name → index name → how the alias reaches that index.
#[derive(Default)]
pub struct Aliases {
    by_name: BTreeMap<String, BTreeMap<String, AliasTarget>>,
}

impl Aliases {
    pub fn add(&mut self, alias: &str, index: &str, target: AliasTarget) {
        self.by_name
            .entry(alias.to_string())
            .or_default()
            .insert(index.to_string(), target);
    }

    /// Removes the aliases matching `alias` from the indices matching `index` (patterns);
    /// how many were removed.
    pub fn remove(&mut self, alias: &str, index: &str) -> usize {
        let mut removed = 0;
        for (name, targets) in self.by_name.iter_mut() {
            if crate::names::index_pattern_matches(alias, name) {
                let before = targets.len();
                targets.retain(|i, _| !crate::names::index_pattern_matches(index, i));
                removed += before - targets.len();
            }
        }
        self.by_name.retain(|_, t| !t.is_empty());
        removed
    }

    /// An index is gone: so are its aliases.
    pub fn remove_index(&mut self, index: &str) {
        for targets in self.by_name.values_mut() {
            targets.remove(index);
        }
        self.by_name.retain(|_, t| !t.is_empty());
    }

    pub fn targets(&self, alias: &str) -> Option<&BTreeMap<String, AliasTarget>> {
        self.by_name.get(alias)
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// The aliases of `index` matching `pattern` (all when None), as `GET _alias` shows them.
    pub fn of_index(&self, index: &str, pattern: Option<&str>) -> Map<String, Value> {
        self.by_name
            .iter()
            .filter(|(name, _)| {
                pattern.is_none_or(|p| {
                    p.split(',')
                        .any(|p| crate::names::index_pattern_matches(p, name))
                })
            })
            .filter_map(|(name, targets)| targets.get(index).map(|t| (name.clone(), t.to_json())))
            .collect()
    }

    /// The index a write to `alias` goes to: its only index, else its write index.
    pub fn write_index(&self, alias: &str) -> Result<Option<&str>, String> {
        let Some(targets) = self.by_name.get(alias) else {
            return Ok(None);
        };
        if let [(only, t)] = targets.iter().collect::<Vec<_>>()[..] {
            if t.is_write_index != Some(false) {
                return Ok(Some(only));
            }
        }
        match targets.iter().find(|(_, t)| t.is_write_index == Some(true)) {
            Some((index, _)) => Ok(Some(index)),
            None => Err(format!(
                "no write index is defined for alias [{alias}]. The write index may be explicitly disabled using is_write_index=false or the alias points to multiple indices without one being designated as a write index"
            )),
        }
    }
}

/// `body` with an alias's `filter` added as a non-scoring clause, as Elasticsearch applies it.
pub fn with_filter(body: &Value, filter: &Value) -> Value {
    let mut out = match body {
        Value::Object(m) => m.clone(),
        _ => Map::new(),
    };
    // A top-level kNN search filters its candidates too (each clause's own `filter`), and
    // without a `query` it has no other matches to filter.
    if let Some(knn) = out.get_mut("knn") {
        let clauses: Vec<&mut Value> = match knn {
            Value::Array(items) => items.iter_mut().collect(),
            one => vec![one],
        };
        for clause in clauses.into_iter().filter_map(Value::as_object_mut) {
            let joined = match clause.remove("filter") {
                None => filter.clone(),
                Some(Value::Array(mut fs)) => {
                    fs.push(filter.clone());
                    Value::Array(fs)
                }
                Some(one) => json!([one, filter]),
            };
            clause.insert("filter".into(), joined);
        }
        if !out.contains_key("query") {
            return Value::Object(out);
        }
    }
    let query = out
        .remove("query")
        .unwrap_or_else(|| json!({"match_all": {}}));
    out.insert(
        "query".into(),
        json!({"bool": {"must": [query], "filter": [filter]}}),
    );
    Value::Object(out)
}

impl crate::cluster::State {
    /// What a search of `names` reads (indices, aliases, patterns, comma lists, `_all`): each
    /// index in name order, with the filter its aliases add (filters of several aliases of it
    /// are ORed, and any unfiltered way to it leaves it unfiltered, as in Elasticsearch); empty
    /// when only wildcards were given and they match nothing (an empty answer, as there).
    pub(crate) fn search_targets(
        &self,
        names: &str,
    ) -> Result<Vec<SearchTarget>, crate::error::Error> {
        use crate::error::Error;
        use crate::error::ErrorKind;
        let indices = self.indices.read().unwrap_or_else(|p| p.into_inner());
        let aliases = self.aliases.read().unwrap_or_else(|p| p.into_inner());
        let mut reached: BTreeMap<String, Option<Value>> = BTreeMap::new();
        let mut reach = |index: &str, filter: Option<&Value>| match reached.get_mut(index) {
            None => {
                reached.insert(index.to_string(), filter.cloned());
            }
            Some(existing) => {
                *existing = match (existing.take(), filter) {
                    (Some(a), Some(b)) if a == *b => Some(a),
                    (Some(a), Some(b)) => {
                        Some(json!({"bool": {"should": [a, b], "minimum_should_match": 1}}))
                    }
                    _ => None,
                }
            }
        };
        for part in names.split(',').filter(|p| !p.is_empty()) {
            if !(part.contains('*') || part == "_all") {
                // A name: an index or an alias, looked up, not matched.
                if indices.contains_key(part) {
                    reach(part, None);
                } else if let Some(targets) = aliases.targets(part) {
                    for (index, t) in targets {
                        reach(index, t.filter.as_ref());
                    }
                } else {
                    return Err(Error::new(
                        ErrorKind::NotFound,
                        format!("no such index `{part}`"),
                    ));
                }
                continue;
            }
            // Wildcards expand to open indices (`expand_wildcards: open`, the default).
            for (name, index) in indices.iter() {
                if crate::names::index_pattern_matches(part, name) && !index.is_closed() {
                    reach(name, None);
                }
            }
            for alias in aliases.names() {
                if crate::names::index_pattern_matches(part, alias) {
                    for (index, t) in aliases.targets(alias).into_iter().flatten() {
                        reach(index, t.filter.as_ref());
                    }
                }
            }
        }
        reached
            .into_iter()
            .map(|(index, filter)| {
                let found = indices.get(&index).cloned().ok_or_else(|| {
                    Error::new(ErrorKind::NotFound, format!("no such index `{index}`"))
                })?;
                Ok((found, filter))
            })
            .collect()
    }

    /// As [`Self::search_targets`], for a caller that searches one index: None when nothing
    /// matches, an error naming them when several do.
    pub(crate) fn search_target(
        &self,
        names: &str,
    ) -> Result<Option<SearchTarget>, crate::error::Error> {
        let mut all = self.search_targets(names)?;
        match all.len() {
            0 => Ok(None),
            1 => Ok(all.pop()),
            n => Err(crate::error::Error::new(
                crate::error::ErrorKind::BadRequest,
                format!(
                    "[{names}] reaches {n} indices ({}, {}{}); the embedded engine searches one index at a time",
                    all[0].0.name,
                    all[1].0.name,
                    if n > 2 { ", ..." } else { "" }
                ),
            )),
        }
    }
}

/// An index a search reads, with the filter its aliases add.
pub(crate) type SearchTarget = (std::sync::Arc<crate::index::EmbeddedIndex>, Option<Value>);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_are_added_removed_and_written_through() {
        let mut a = Aliases::default();
        let f = AliasTarget::parse(&json!({"filter": {"term": {"t": 1}}}), &[]).unwrap();
        a.add("one", "i1", f.clone());
        a.add("many", "i1", AliasTarget::default());
        a.add(
            "many",
            "i2",
            AliasTarget::parse(&json!({"is_write_index": true}), &[]).unwrap(),
        );
        assert_eq!(a.write_index("one"), Ok(Some("i1")));
        assert_eq!(a.write_index("many"), Ok(Some("i2")));
        assert_eq!(a.write_index("none"), Ok(None));
        assert_eq!(a.of_index("i1", None).len(), 2);
        assert_eq!(
            a.of_index("i1", Some("on*"))["one"],
            json!({"filter": {"term": {"t": 1}}})
        );
        assert_eq!(a.remove("man*", "i2"), 1);
        assert_eq!(a.write_index("many"), Ok(Some("i1")));
        a.add("many", "i3", AliasTarget::default());
        assert!(a
            .write_index("many")
            .unwrap_err()
            .contains("no write index"));
        a.remove_index("i1");
        assert!(a.targets("one").is_none());
        assert_eq!(a.names().collect::<Vec<_>>(), vec!["many"]);
        assert!(AliasTarget::parse(&json!({"filter": "x"}), &[]).is_err());
    }

    #[test]
    fn a_filter_is_added_without_scoring() {
        let f = json!({"term": {"t": 1}});
        assert_eq!(
            with_filter(&json!({"query": {"match": {"m": "x"}}, "size": 3}), &f),
            json!({"size": 3, "query": {"bool": {"must": [{"match": {"m": "x"}}], "filter": [{"term": {"t": 1}}]}}})
        );
        assert_eq!(
            with_filter(&json!({}), &f)["query"]["bool"]["must"][0],
            json!({"match_all": {}})
        );
    }
}
