//! A search of several indices on the embedded engine (a pattern such as `osm*`, a list, an
//! alias of several): each index's plan compiled once, each call running them all and merging
//! hits and aggregations as the engine's `search::many` does (as Elasticsearch merges its
//! shards'). What cannot be merged is refused before the race, by name.

use super::Prepared;
use crate::backend::{ErrorKind, OpError, Outcome, Payload};
use engine::EmbeddedIndex;
use std::sync::Arc;

/// The indices of one search, each with its plan (made ready for merging) and the page the
/// request asked.
pub struct Many {
    parts: Vec<(Arc<EmbeddedIndex>, engine::SearchPlan)>,
    /// The filter each index's aliases add (to bodies drawn per call too).
    filters: Vec<Option<serde_json::Value>>,
    page: (usize, usize),
    /// Indices whose shard fails on its mapping (a sort field it lacks): left out of every
    /// call, each call a partial answer, as Elasticsearch's.
    failed_shards: u64,
}

/// A search's compile on one index: its plan, or None where its shard fails on its mapping
/// (Elasticsearch answers from the others).
fn plan_or_failed_shard(
    index: &EmbeddedIndex,
    body: &serde_json::Value,
    filter: Option<&serde_json::Value>,
) -> Result<Option<engine::SearchPlan>, engine::Error> {
    let compiled = match filter {
        Some(f) => index.compile(&engine::with_alias_filter(body, f)),
        None => index.compile(body),
    };
    match compiled {
        Ok(plan) => Ok(Some(plan)),
        Err(e) if e.kind == engine::ErrorKind::QueryShard => Ok(None),
        Err(e) => Err(e),
    }
}

type Targets = Vec<(Arc<EmbeddedIndex>, Option<serde_json::Value>)>;

/// Compiles the search for every index it reaches.
pub(super) fn prepare(
    spec: &crate::ops::SearchSpec,
    targets: Targets,
) -> Result<Prepared, OpError> {
    let owned_names: Vec<String> = targets.iter().map(|(i, _)| i.name.clone()).collect();
    let names: Vec<&str> = owned_names.iter().map(String::as_str).collect();
    let refuse = |what: &str| {
        Ok(Prepared::Fails(OpError::new(
            ErrorKind::BadRequest,
            format!(
                "{what} over several indices ([{}] reaches {}) is not run by the embedded backend: search one index, or an alias of one",
                spec.index,
                names.join(", ")
            ),
        )))
    };
    if spec.paging.is_some() {
        return refuse("a paged search (scroll or search_after)");
    }
    if engine::lookups_emptied(&spec.body) != spec.body {
        return refuse("a search with a terms lookup");
    }
    let mut parts = Vec::with_capacity(targets.len());
    let mut filters = Vec::with_capacity(targets.len());
    let mut page = (0, 10);
    let mut failed_shards = 0;
    for (index, filter) in targets {
        let Some(mut plan) = plan_or_failed_shard(&index, &spec.body, filter.as_ref())? else {
            failed_shards += 1;
            continue;
        };
        if let Some(why) = engine::search::many::not_merged(&plan, &names) {
            return Ok(Prepared::Fails(OpError::new(ErrorKind::BadRequest, why)));
        }
        page = engine::search::many::for_merging(&mut plan);
        parts.push((index, plan));
        filters.push(filter);
    }
    if parts.is_empty() {
        // Every shard failed: the search fails whole, as Elasticsearch's.
        let why = match spec.body.get("sort") {
            Some(_) => "all shards failed: no index it reaches has the field it sorts on",
            None => "all shards failed",
        };
        return Ok(Prepared::Fails(OpError::new(ErrorKind::BadRequest, why)));
    }
    Ok(Prepared::SearchMany(Many {
        parts,
        filters,
        page,
        failed_shards,
    }))
}

impl Many {
    /// One call: a body drawn for it compiled for every index, else the prepared plans.
    pub(super) fn call(&self, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let drawn;
        let (plans, page): (Vec<&engine::SearchPlan>, _) = match payload {
            Payload::Body(body) => {
                let body: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
                    OpError::new(
                        ErrorKind::BadRequest,
                        format!("the drawn body is not JSON: {e}"),
                    )
                })?;
                let mut page = self.page;
                let mut failed = self.failed_shards;
                drawn = self
                    .parts
                    .iter()
                    .zip(&self.filters)
                    .filter_map(|((index, _), filter)| {
                        match plan_or_failed_shard(index, &body, filter.as_ref()) {
                            Ok(Some(mut plan)) => {
                                page = engine::search::many::for_merging(&mut plan);
                                Some(Ok((&**index, plan)))
                            }
                            Ok(None) => {
                                failed += 1;
                                None
                            }
                            Err(e) => Some(Err(e)),
                        }
                    })
                    .collect::<Result<Vec<_>, engine::Error>>()?;
                if drawn.is_empty() {
                    return Err(OpError::new(ErrorKind::BadRequest, "all shards failed"));
                }
                let parts: Vec<engine::search::many::Part<'_>> = drawn
                    .iter()
                    .map(|(index, plan)| (*index, plan, index.searcher()))
                    .collect();
                return answered(&parts, page, failed);
            }
            _ => (self.parts.iter().map(|(_, p)| p).collect(), self.page),
        };
        let parts: Vec<engine::search::many::Part<'_>> = self
            .parts
            .iter()
            .zip(plans)
            .map(|((index, _), plan)| (&**index, plan, index.searcher()))
            .collect();
        answered(&parts, page, self.failed_shards)
    }
}

/// One merged search's outcome: a search, its total hits, and the shards that failed.
fn answered(
    parts: &[engine::search::many::Part<'_>],
    page: (usize, usize),
    failed_shards: u64,
) -> Result<Outcome, OpError> {
    let merged = engine::search::many::search_many(parts, page)?;
    std::hint::black_box((&merged.hits, &merged.aggregations));
    Ok(Outcome {
        units: 1,
        hits: merged.total,
        failed_shards,
        ..Outcome::default()
    })
}
