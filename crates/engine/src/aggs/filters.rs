//! `filter` and `filters` aggregations: Elasticsearch's query DSL inside an aggregation, run
//! by tantivy's filter aggregation with the query the engine compiles from it. A `filters`
//! aggregation becomes one `filter` per named (or listed) query, side by side, and its
//! buckets are put back together in Elasticsearch's shape after the search.

use crate::dsl::ast::QueryAst;
use crate::dsl::QueryCompiler;
use crate::mapping::Mapping;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;
use tantivy::aggregation::agg_req::{AggregationVariants, Aggregations};
use tantivy::aggregation::bucket::{FilterAggregation, QueryBuilder};

/// Joins a `filters` aggregation's name and a keyed bucket's key in the request tantivy runs.
const KEYED: char = '\u{1}';
/// Joins a `filters` aggregation's name and an anonymous bucket's position.
const LISTED: char = '\u{2}';

/// A query of a filter aggregation, compiled when tantivy asks for it. Its JSON is kept
/// because tantivy's request is serialisable; the parsed tree is what runs.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct EsFilter {
    query: Value,
    #[serde(skip)]
    parsed: Option<Arc<QueryAst>>,
    #[serde(skip)]
    ctx: Option<Arc<(Mapping, tantivy::Index)>>,
}

#[typetag::serde]
impl QueryBuilder for EsFilter {
    fn build_query(
        &self,
        _: &tantivy::schema::Schema,
        _: &tantivy::tokenizer::TokenizerManager,
    ) -> tantivy::Result<Box<dyn tantivy::query::Query>> {
        let ctx = self.ctx.as_ref().ok_or_else(|| {
            tantivy::TantivyError::InvalidArgument("a filter aggregation without its index".into())
        })?;
        let compiler = QueryCompiler {
            mapping: &ctx.0,
            index: &ctx.1,
            unmapped_matches_none: false,
            size: 10,
            script_errors: None,
            flattened_objects: false,
        };
        match &self.parsed {
            Some(q) => compiler.compile(q),
            None => compiler.compile_json(&self.query),
        }
        .map_err(tantivy::TantivyError::InvalidArgument)
    }

    fn box_clone(&self) -> Box<dyn QueryBuilder> {
        Box::new(self.clone())
    }
}

/// The `filter` aggregations of a request (each `filters` one expanded), by path of names,
/// with their queries; the request gets a placeholder each, replaced by [`attach`].
#[derive(Debug, Default, Clone)]
pub struct Filters(Vec<(Vec<String>, Value, Arc<QueryAst>)>);

/// A `filter`'s query, parsed with no index (its types) and, given a mapping and index,
/// compiled once so a bad field fails before the search.
pub fn check_query(
    q: &Value,
    at: &str,
    ctx: Option<(&Mapping, &tantivy::Index)>,
) -> Result<QueryAst, String> {
    let parsed = QueryAst::parse(q).map_err(|why| format!("aggregation `{at}`: {why}"))?;
    if let Some(ctx) = ctx {
        compile(&parsed, ctx).map_err(|e| format!("aggregation `{at}`: {e}"))?;
    }
    Ok(parsed)
}

/// A filter's parsed query compiled for an index, as its aggregation runs it.
pub fn compile(
    parsed: &QueryAst,
    (mapping, index): (&Mapping, &tantivy::Index),
) -> Result<Box<dyn tantivy::query::Query>, String> {
    QueryCompiler {
        mapping,
        index,
        unmapped_matches_none: false,
        size: 10,
        script_errors: None,
        flattened_objects: false,
    }
    .compile(parsed)
}

/// A `filters` aggregation's queries: (name in tantivy's request, query).
pub fn expand(
    name: &str,
    params: &Map<String, Value>,
    at: &str,
) -> Result<Vec<(String, Value)>, String> {
    if let Some(k) = params
        .keys()
        .find(|k| !["filters", "other_bucket", "other_bucket_key"].contains(&k.as_str()))
    {
        return Err(format!(
            "aggregation `{at}`: `filters` parameter `{k}` is not run by the embedded engine"
        ));
    }
    if params.get("other_bucket").and_then(Value::as_bool) == Some(true)
        || params.contains_key("other_bucket_key")
    {
        return Err(format!(
            "aggregation `{at}`: `filters` `other_bucket` is not run by the embedded engine"
        ));
    }
    let none = |v: &Value| {
        v.as_object().is_some_and(Map::is_empty) || v.as_array().is_some_and(Vec::is_empty)
    };
    if params.get("filters").is_some_and(none) {
        return Err(format!(
            "aggregation `{at}`: `filters` needs at least one query"
        ));
    }
    match params.get("filters") {
        Some(Value::Object(keyed)) => Ok(keyed
            .iter()
            .map(|(k, q)| (format!("{name}{KEYED}{k}"), q.clone()))
            .collect()),
        Some(Value::Array(listed)) => Ok(listed
            .iter()
            .enumerate()
            .map(|(i, q)| (format!("{name}{LISTED}{i:06}"), q.clone()))
            .collect()),
        _ => Err(format!(
            "aggregation `{at}`: `filters` needs `filters`, named queries or a list"
        )),
    }
}

/// Whether a name in tantivy's request is one of a `filters`' expanded queries.
pub fn is_expanded(name: &str) -> bool {
    name.contains(KEYED) || name.contains(LISTED)
}

impl Filters {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn push(&mut self, path: Vec<String>, query: Value, parsed: QueryAst) {
        self.0.push((path, query, Arc::new(parsed)));
    }

    /// Puts each filter's query, with the index it runs on, in place of its placeholder.
    pub fn attach(
        &self,
        aggs: &mut Aggregations,
        ctx: &Arc<(Mapping, tantivy::Index)>,
    ) -> Result<(), String> {
        for (path, query, parsed) in &self.0 {
            let mut level = &mut *aggs;
            let (last, parents) = path.split_last().ok_or("an empty aggregation path")?;
            for p in parents {
                level = &mut level
                    .get_mut(p)
                    .ok_or_else(|| format!("aggregation `{p}` went missing"))?
                    .sub_aggregation;
            }
            let agg = level
                .get_mut(last)
                .ok_or_else(|| format!("aggregation `{last}` went missing"))?;
            agg.agg = AggregationVariants::Filter(FilterAggregation::new_with_builder(Box::new(
                EsFilter {
                    query: query.clone(),
                    parsed: Some(parsed.clone()),
                    ctx: Some(ctx.clone()),
                },
            )));
        }
        Ok(())
    }
}

/// Elasticsearch's shape for the expanded `filters` aggregations of a response, at every level.
pub fn regroup(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let mut grouped: Map<String, Value> = Map::new();
            let keys: Vec<String> = map
                .keys()
                .filter(|k| k.contains([KEYED, LISTED]))
                .cloned()
                .collect();
            for k in keys {
                let Some(bucket) = map.remove(&k) else {
                    continue;
                };
                let (name, key, listed) = match k.split_once(KEYED) {
                    Some((n, key)) => (n, key, false),
                    None => {
                        let (n, i) = k.split_once(LISTED).unwrap_or((&k, ""));
                        (n, i, true)
                    }
                };
                let entry = grouped.entry(name.to_string()).or_insert_with(|| {
                    serde_json::json!({"buckets": if listed { Value::Array(vec![]) } else { Value::Object(Map::new()) }})
                });
                match &mut entry["buckets"] {
                    Value::Object(b) => {
                        b.insert(key.to_string(), bucket);
                    }
                    Value::Array(b) => b.push(serde_json::json!([key, bucket])),
                    _ => {}
                }
            }
            for (_, entry) in grouped.iter_mut() {
                // Listed buckets in the order given (their positions are zero-padded).
                if let Value::Array(b) = &mut entry["buckets"] {
                    b.sort_by(|x, y| x[0].as_str().cmp(&y[0].as_str()));
                    let ordered: Vec<Value> = b.iter().map(|p| p[1].clone()).collect();
                    *b = ordered;
                }
            }
            map.extend(grouped);
            // A top_hits' documents are the user's: their keys are left as they are.
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| regroup(v));
        }
        Value::Array(items) => items.iter_mut().for_each(regroup),
        _ => {}
    }
}

impl super::Level<'_> {
    /// A `filter`, or a `filters` (one `filter` per query): a `filter` aggregation each in
    /// tantivy's request, a placeholder here, its compiled query attached after.
    pub(super) fn rewrite_filters(
        &mut self,
        kind: &str,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &super::Here<'_>,
        out: &mut Map<String, Value>,
    ) -> Result<(), String> {
        let (name, here, path) = (at.name, at.here, at.path);
        let queries: Vec<(String, Value)> = match kind {
            "filter" => vec![(name.clone(), Value::Object(params.clone()))],
            _ => expand(name, params, here)?,
        };
        for (n, q) in queries {
            let parsed = check_query(&q, here, self.ctx)?;
            let mut inner = path.to_vec();
            inner.push(n.clone());
            let mut rewritten = Map::new();
            rewritten.insert("filter".into(), Value::String("*".into()));
            // A `filter` is one bucket percentiles' digests can be collected in.
            let parent = match (kind, self.ctx) {
                ("filter", Some(ctx)) => compile(&parsed, ctx).ok(),
                _ => None,
            };
            self.parents
                .push(parent.map(|q| super::bucket_keys::Parent::filter(&n, q)));
            let rewritten_sub = sub.map(|sub| self.rewrite(sub, here, &inner));
            self.parents.pop();
            if let Some(sub) = rewritten_sub.transpose()? {
                rewritten.insert("aggs".into(), sub);
            }
            self.filters.push(inner, q, parsed);
            out.insert(n, Value::Object(rewritten));
        }
        Ok(())
    }
}
