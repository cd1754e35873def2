//! `reverse_nested` under a `nested` aggregation: for each bucket above it, the documents
//! owning the bucket's objects. Its `doc_count` counts those documents, and its
//! sub-aggregations run on them, as in Elasticsearch. A bucket's objects are found again by
//! a query made from its key (terms, range, histogram, filter): the buckets above a
//! `reverse_nested` must be of those kinds.

use super::AggPlan;
use crate::dsl::join::SeqIn;
use crate::mapping::nested::NestedMapping;
use crate::mapping::Mapping;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use tantivy::collector::Count;
use tantivy::query::{BooleanQuery, Occur, Query};
use tantivy::Searcher;

/// The bucket aggregations a `reverse_nested` may be under, with how each bucket's objects
/// are found again.
const UNDER: [&str; 4] = ["terms", "filter", "range", "histogram"];

/// One bucket aggregation on the way from the `nested` aggregation to a `reverse_nested`.
#[derive(Debug, Clone)]
struct Step {
    name: String,
    kind: String,
    params: Map<String, Value>,
}

/// A `reverse_nested` found under a nested aggregation, before it is compiled.
#[derive(Debug, Clone)]
pub struct Found {
    steps: Vec<Step>,
    name: String,
    sub: Option<Value>,
}

/// A `reverse_nested`, compiled: its sub-aggregations against the documents' mapping.
#[derive(Debug, Clone)]
pub struct ReverseNested {
    steps: Vec<Step>,
    name: String,
    sub: Option<AggPlan>,
}

/// The nested aggregation's sub-aggregations without their `reverse_nested` ones, and those.
pub(super) fn split(sub: &Value, here: &str) -> Result<(Value, Vec<Found>), String> {
    let mut found = Vec::new();
    let rest = strip(sub, here, &mut Vec::new(), &mut found)?;
    Ok((rest, found))
}

fn strip(
    aggs: &Value,
    here: &str,
    steps: &mut Vec<Step>,
    found: &mut Vec<Found>,
) -> Result<Value, String> {
    let Some(aggs) = aggs.as_object() else {
        return Ok(aggs.clone());
    };
    let mut out = Map::new();
    for (name, def) in aggs {
        let at = format!("{here}.{name}");
        let kind = def
            .as_object()
            .and_then(|d| {
                d.keys()
                    .find(|k| !["aggs", "aggregations", "meta"].contains(&k.as_str()))
            })
            .cloned()
            .unwrap_or_default();
        let sub = def.get("aggs").or_else(|| def.get("aggregations"));
        if kind == "reverse_nested" {
            if let Some(k) = def[&kind].as_object().and_then(|p| p.keys().next()) {
                return Err(format!("aggregation `{at}`: `reverse_nested` option `{k}` is not run by the embedded engine (it goes back to the documents)"));
            }
            if let Some(bad) = steps.iter().find(|s| !UNDER.contains(&s.kind.as_str())) {
                return Err(format!("aggregation `{at}`: a `reverse_nested` under a `{}` is not run by the embedded engine (it runs under {})", bad.kind, UNDER.join(", ")));
            }
            found.push(Found {
                steps: steps.clone(),
                name: name.clone(),
                sub: sub.cloned(),
            });
            continue;
        }
        let mut def = def.clone();
        if let Some(sub) = sub {
            steps.push(Step {
                name: name.clone(),
                kind: kind.clone(),
                params: def[&kind].as_object().cloned().unwrap_or_default(),
            });
            let inner = strip(sub, &at, steps, found);
            steps.pop();
            let inner = inner?;
            let o = def.as_object_mut().expect("an aggregation is an object");
            o.remove("aggregations");
            match inner.as_object().is_some_and(|m| m.is_empty()) {
                true => o.remove("aggs"),
                false => o.insert("aggs".into(), inner),
            };
        }
        out.insert(name.clone(), def);
    }
    Ok(Value::Object(out))
}

impl Found {
    /// Checks its sub-aggregations with no index yet.
    pub fn check(&self) -> Result<(), String> {
        self.sub.as_ref().map_or(Ok(()), AggPlan::check)
    }

    pub fn compile(
        self,
        mapping: &Mapping,
        index: &tantivy::Index,
    ) -> Result<ReverseNested, String> {
        Ok(ReverseNested {
            sub: self
                .sub
                .map(|s| AggPlan::compile(&s, mapping, index))
                .transpose()?,
            steps: self.steps,
            name: self.name,
        })
    }
}

impl ReverseNested {
    /// Adds this `reverse_nested`'s answer to every bucket above it in `answer` (the nested
    /// aggregation's), whose objects are those `theirs` matches.
    pub fn fill(
        &self,
        nested: &Arc<NestedMapping>,
        answer: &mut Value,
        theirs: &dyn Query,
        objects: &Searcher,
        documents: &Searcher,
    ) -> tantivy::Result<()> {
        let mut each = |bucket: &mut Value, narrowed: Vec<Box<dyn Query>>| {
            let mut clauses = vec![(Occur::Must, theirs.box_clone())];
            clauses.extend(narrowed.into_iter().map(|q| (Occur::Must, q)));
            let query = BooleanQuery::new(clauses);
            let owners = Arc::new(super::nested::owners(objects, &query)?);
            let docs = SeqIn::new(owners.clone(), documents_seq_no(documents)?);
            let mut shown = match &self.sub {
                None => json!({}),
                Some(plan) => {
                    let (collector, finish) = plan.prepare(documents, &docs)?;
                    let (_, parts) = documents.search(&docs, &(Count, collector))?;
                    plan.to_json(&finish.finish(parts)?)
                        .map_err(tantivy::TantivyError::InvalidArgument)?
                }
            };
            shown["doc_count"] = json!(owners.len());
            bucket[&self.name] = shown;
            Ok(())
        };
        walk(nested, answer, &self.steps, Vec::new(), &mut each)
    }
}

fn documents_seq_no(documents: &Searcher) -> tantivy::Result<tantivy::schema::Field> {
    documents.schema().get_field("_seq_no")
}

type Each<'a> = dyn FnMut(&mut Value, Vec<Box<dyn Query>>) -> tantivy::Result<()> + 'a;

/// Calls `each` on every bucket at the end of `steps`, with the queries finding its objects.
fn walk(
    nested: &Arc<NestedMapping>,
    node: &mut Value,
    steps: &[Step],
    narrowed: Vec<Box<dyn Query>>,
    each: &mut Each<'_>,
) -> tantivy::Result<()> {
    let Some((step, rest)) = steps.split_first() else {
        return each(node, narrowed);
    };
    let bad = |m: String| tantivy::TantivyError::InvalidArgument(m);
    let Some(agg) = node.get_mut(&step.name) else {
        return Ok(());
    };
    if step.kind == "filter" {
        let mut more = clone_all(&narrowed);
        more.push(objects_query(nested, &Value::Object(step.params.clone())).map_err(bad)?);
        return walk(nested, agg, rest, more, each);
    }
    let field = step
        .params
        .get("field")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let buckets: Vec<&mut Value> = match agg.get_mut("buckets") {
        Some(Value::Array(b)) => b.iter_mut().collect(),
        Some(Value::Object(b)) => b.values_mut().collect(),
        _ => Vec::new(),
    };
    for bucket in buckets {
        let q = match step.kind.as_str() {
            "terms" => json!({"term": {field: bucket["key"].clone()}}),
            "histogram" => {
                let interval = step.params.get("interval").cloned().unwrap_or(json!(1));
                let key = bucket["key"].as_f64().unwrap_or(0.0);
                json!({"range": {field: {"gte": key, "lt": key + interval.as_f64().unwrap_or(1.0)}}})
            }
            _ => {
                let mut bounds = Map::new();
                if let Some(from) = bucket.get("from").filter(|v| !v.is_null()) {
                    bounds.insert("gte".into(), from.clone());
                }
                if let Some(to) = bucket.get("to").filter(|v| !v.is_null()) {
                    bounds.insert("lt".into(), to.clone());
                }
                json!({"range": {field: bounds}})
            }
        };
        let mut more = clone_all(&narrowed);
        more.push(objects_query(nested, &q).map_err(bad)?);
        walk(nested, bucket, rest, more, each)?;
    }
    Ok(())
}

fn clone_all(queries: &[Box<dyn Query>]) -> Vec<Box<dyn Query>> {
    queries.iter().map(|q| q.box_clone()).collect()
}

/// A query on the objects' fields.
fn objects_query(nested: &NestedMapping, q: &Value) -> Result<Box<dyn Query>, String> {
    let index = nested.views.index(&nested.mapping.schema);
    crate::dsl::QueryCompiler {
        mapping: &nested.mapping,
        index: &index,
        unmapped_matches_none: true,
        size: 0,
        script_errors: None,
        flattened_objects: false,
    }
    .compile_json(q)
}
