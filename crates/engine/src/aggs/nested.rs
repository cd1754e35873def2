//! The `nested` aggregation, at the top level of a request: its sub-aggregations run on the
//! objects of the path (the store of [`crate::mapping::nested`]) that belong to the
//! documents the query matches, and `doc_count` counts those objects, as Elasticsearch's
//! nested aggregation does. Under it, `reverse_nested` ([`super::reverse`]) goes back to the
//! documents.

use super::AggPlan;
use crate::dsl::join::{SeqIn, SeqSet, SeqSetBuilder};
use crate::mapping::nested::NestedMapping;
use crate::mapping::Mapping;
use serde_json::{Map, Value};
use std::sync::Arc;
use tantivy::collector::Count;
use tantivy::query::{EnableScoring, Query};
use tantivy::Searcher;

/// One top-level `nested` aggregation, compiled.
#[derive(Debug, Clone)]
pub struct NestedAgg {
    pub name: String,
    pub nested: Arc<NestedMapping>,
    /// Its sub-aggregations, compiled against the objects' mapping.
    pub sub: Option<Box<AggPlan>>,
    /// Its `reverse_nested` aggregations, found by their path in `sub`'s answer.
    pub reverse: Vec<super::reverse::ReverseNested>,
}

/// The nested aggregation `here`, or why the engine cannot run it. `mapping` is None when
/// a track is checked before the race: the sub-aggregations are checked alone.
pub(super) fn parse(
    name: &str,
    params: &Map<String, Value>,
    sub: Option<&Value>,
    ctx: Option<(&Mapping, &tantivy::Index)>,
    here: &str,
) -> Result<Option<NestedAgg>, String> {
    if let Some(k) = params.keys().find(|k| k.as_str() != "path") {
        return Err(format!(
            "aggregation `{here}`: `nested` option `{k}` is not run by the embedded engine"
        ));
    }
    let path = params
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("aggregation `{here}`: [nested] requires the `path`"))?;
    let Some((mapping, index)) = ctx else {
        let inner = sub.map(|s| super::reverse::split(s, here)).transpose()?;
        if let Some((objects, reverse)) = &inner {
            AggPlan::check(objects)?;
            for r in reverse {
                r.check()?;
            }
        }
        return Ok(None);
    };
    let nested = mapping
        .nested
        .iter()
        .find(|n| n.path == path)
        .ok_or_else(|| {
            format!("aggregation `{here}`: [nested] nested path [{path}] not found (the embedded engine runs `nested` on top-level nested fields)")
        })?;
    let (sub, reverse) = match sub {
        None => (None, Vec::new()),
        Some(s) => {
            let (objects, reverse) = super::reverse::split(s, here)?;
            let store_index = nested.views.index(&nested.mapping.schema);
            let plan = AggPlan::compile(&objects, &nested.mapping, &store_index)?;
            let reverse = reverse
                .into_iter()
                .map(|r| r.compile(mapping, index))
                .collect::<Result<_, _>>()?;
            (Some(Box::new(plan)), reverse)
        }
    };
    Ok(Some(NestedAgg {
        name: name.to_string(),
        nested: nested.clone(),
        sub,
        reverse,
    }))
}

/// The documents matching `query`, by `_seq_no`; on a store of objects, the documents
/// owning the objects matching it.
pub(crate) fn owners(searcher: &Searcher, query: &dyn Query) -> tantivy::Result<SeqSet> {
    let weight = query.weight(EnableScoring::disabled_from_searcher(searcher))?;
    let mut found = SeqSetBuilder::new(crate::dsl::nested::ScoreMode::None, false);
    for segment in searcher.segment_readers() {
        let seq_nos = segment.fast_fields().u64("_seq_no")?;
        let alive = segment.alive_bitset();
        weight.for_each(segment, &mut |doc, _| {
            if alive.is_none_or(|a| a.is_alive(doc)) {
                if let Some(s) = seq_nos.first(doc) {
                    found.add(s, 0.0);
                }
            }
        })?;
    }
    Ok(found.build())
}

/// The nested aggregations of one search, run after it on the documents it matched.
pub struct NestedPass {
    pub aggs: Arc<Vec<NestedAgg>>,
    pub searcher: Searcher,
    pub query: Box<dyn Query>,
}

impl NestedPass {
    /// Each nested aggregation's answer, by name.
    pub fn run(&self) -> tantivy::Result<Vec<(String, Value)>> {
        let everything = self
            .query
            .downcast_ref::<tantivy::query::AllQuery>()
            .is_some();
        let documents = Arc::new(match everything {
            true => SeqSet::default(),
            false => owners(&self.searcher, self.query.as_ref())?,
        });
        let mut out = Vec::new();
        for agg in self.aggs.iter() {
            let objects = agg
                .nested
                .views
                .searcher_for(&self.searcher)
                .map_err(tantivy::TantivyError::InvalidArgument)?;
            // Every object belongs to a live document: all of them when all documents match.
            let theirs: Box<dyn Query> = match everything {
                true => Box::new(tantivy::query::AllQuery),
                false => Box::new(SeqIn::new(documents.clone(), agg.nested.mapping.seq_no)),
            };
            let mut answer = match &agg.sub {
                None => {
                    let n = objects.search(theirs.as_ref(), &Count)?;
                    serde_json::json!({ "doc_count": n })
                }
                Some(plan) => {
                    let (collector, finish) = plan.prepare(&objects, theirs.as_ref())?;
                    let (n, parts) = objects.search(theirs.as_ref(), &(Count, collector))?;
                    let fruit = finish.finish(parts)?;
                    let mut v = plan
                        .to_json(&fruit)
                        .map_err(tantivy::TantivyError::InvalidArgument)?;
                    if let Value::Object(m) = &mut v {
                        m.insert("doc_count".into(), n.into());
                    }
                    v
                }
            };
            for r in &agg.reverse {
                r.fill(
                    &agg.nested,
                    &mut answer,
                    theirs.as_ref(),
                    &objects,
                    &self.searcher,
                )?;
            }
            out.push((agg.name.clone(), answer));
        }
        Ok(out)
    }
}
