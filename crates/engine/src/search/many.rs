//! A search of several indices (a pattern, a list, an alias of several): each index runs it
//! as a shard runs it in Elasticsearch, scoring its own hits; the counts are summed, the hits
//! merged by the request's sort (else by score) and paged once, and the aggregations merged
//! from each index's unfinished parts into one answer.

use crate::error::{Error, ErrorKind};
use crate::index::EmbeddedIndex;
use crate::search::{Hit, SearchPlan};
use serde_json::Value;
use tantivy::Searcher;

/// One index's part of the search: the index, the body compiled for it (and made ready
/// with [`for_merging`]), and the snapshot it reads.
pub type Part<'a> = (&'a EmbeddedIndex, &'a SearchPlan, Searcher);

/// The merged answer: the total, the page's hits each with its index's name, and the
/// aggregations as the response shows them.
pub struct Merged {
    pub total: u64,
    pub hits: Vec<(String, Hit)>,
    pub aggregations: Option<Value>,
}

/// Why a search compiled as `plan` over `names` cannot be answered by merging its indices'
/// answers, if it cannot.
pub fn not_merged(plan: &SearchPlan, names: &[&str]) -> Option<String> {
    let what = match (&plan.aggs, &plan.sort, &plan.after) {
        (Some(aggs), _, _) if aggs.not_mergeable().is_some() => aggs.not_mergeable()?,
        (_, None, Some(_)) => "`search_after` without a `sort`",
        _ => return None,
    };
    Some(format!(
        "{what} over several indices ({}) are not merged by the embedded engine: search one index, or an alias of one",
        names.join(", ")
    ))
}

/// Makes one index's plan a part of a merged search: it gives its best `from + size` hits
/// (the page is cut from all of them) and keeps its aggregations unfinished. Answers the
/// page the request asked, `(from, size)`.
pub fn for_merging(plan: &mut SearchPlan) -> (usize, usize) {
    let page = (plan.from, plan.size);
    (plan.size, plan.from) = (page.0 + page.1, 0);
    if let Some(aggs) = &mut plan.aggs {
        aggs.keep_parts = true;
    }
    page
}

/// Runs the search on every part and merges the answers into the page `(from, size)`.
pub fn search_many(parts: &[Part<'_>], (from, size): (usize, usize)) -> Result<Merged, Error> {
    let Some((_, first, _)) = parts.first() else {
        return Ok(Merged {
            total: 0,
            hits: Vec::new(),
            aggregations: None,
        });
    };
    let names: Vec<&str> = parts.iter().map(|(i, _, _)| i.name.as_str()).collect();
    if let Some(why) = not_merged(first, &names) {
        return Err(Error::new(ErrorKind::BadRequest, why));
    }
    let (mut total, mut found, mut fruits) = (0, Vec::new(), Vec::new());
    for (index, plan, searcher) in parts {
        let (n, hits, aggs) = index.search_hits(plan, searcher)?;
        total += n;
        fruits.extend(aggs);
        found.extend(hits.into_iter().map(|h| (index.name.clone(), h)));
    }
    // By the request's sort, else best score first; ties keep their indices' order.
    match &first.sort {
        Some(s) => found.sort_by(|a, b| s.compare_shown(a.1.sort.as_ref(), b.1.sort.as_ref())),
        None => found.sort_by(|a, b| b.1.score.total_cmp(&a.1.score)),
    }
    let hits: Vec<(String, Hit)> = found.into_iter().skip(from).take(size).collect();
    let aggregations = match &first.aggs {
        Some(aggs) if !fruits.is_empty() => {
            let merged = aggs
                .merge(fruits)
                .map_err(|e| Error::new(ErrorKind::BadRequest, e))?;
            Some(first.aggregations_json(&merged)?)
        }
        _ => None,
    };
    Ok(Merged {
        total,
        hits,
        aggregations,
    })
}
