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
}

type Targets = Vec<(Arc<EmbeddedIndex>, Option<serde_json::Value>)>;

/// Compiles the search for every index it reaches.
pub(super) fn prepare(
    spec: &crate::ops::SearchSpec,
    targets: Targets,
) -> Result<Prepared, OpError> {
    let names: Vec<&str> = targets.iter().map(|(i, _)| i.name.as_str()).collect();
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
    let mut page = (0, 10);
    for (index, filter) in &targets {
        let mut plan = match filter {
            Some(f) => index.compile(&engine::with_alias_filter(&spec.body, f))?,
            None => index.compile(&spec.body)?,
        };
        if let Some(why) = engine::search::many::not_merged(&plan, &names) {
            return Ok(Prepared::Fails(OpError::new(ErrorKind::BadRequest, why)));
        }
        page = engine::search::many::for_merging(&mut plan);
        parts.push((index.clone(), plan));
    }
    let filters = targets.into_iter().map(|(_, f)| f).collect();
    Ok(Prepared::SearchMany(Many {
        parts,
        filters,
        page,
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
                drawn = self
                    .parts
                    .iter()
                    .zip(&self.filters)
                    .map(|((index, _), filter)| {
                        let mut plan = match filter {
                            Some(f) => index.compile(&engine::with_alias_filter(&body, f))?,
                            None => index.compile(&body)?,
                        };
                        page = engine::search::many::for_merging(&mut plan);
                        Ok(plan)
                    })
                    .collect::<Result<Vec<_>, engine::Error>>()?;
                (drawn.iter().collect(), page)
            }
            _ => (self.parts.iter().map(|(_, p)| p).collect(), self.page),
        };
        let parts: Vec<engine::search::many::Part<'_>> = self
            .parts
            .iter()
            .zip(plans)
            .map(|((index, _), plan)| (&**index, plan, index.searcher()))
            .collect();
        let merged = engine::search::many::search_many(&parts, page)?;
        std::hint::black_box((&merged.hits, &merged.aggregations));
        Ok(Outcome {
            units: 1,
            hits: merged.total,
            ..Outcome::default()
        })
    }
}
