//! One answer from several indices' searches (a pattern, a list, an alias of several): each
//! index's aggregations kept unfinished (tantivy's intermediate results and the engine's own
//! collectors'), merged, then finished once, as Elasticsearch reduces its shards' answers;
//! percentiles under buckets are then collected by each index in the merged answer's buckets
//! and reduced.

use super::{AggFruit, AggPlan};
use tantivy::aggregation::agg_result::AggregationResults;
use tantivy::aggregation::intermediate_agg_result::IntermediateAggregationResults;

impl AggPlan {
    /// Why the answers of several indices to this plan cannot be merged, if they cannot:
    /// what each search lays out from its own matches, or scores against its own index.
    pub fn not_mergeable(&self) -> Option<&'static str> {
        if !self.autos.is_empty() {
            Some("auto_date_histogram, and date_histogram in calendar units or a zone with daylight saving,")
        } else if !self.significant.is_empty() {
            Some("significant_terms")
        } else if !self.nested.is_empty() {
            Some("nested")
        } else {
            None
        }
    }

    /// One answer from several indices' searches, each run with `keep_parts` (the plan of
    /// any of them: they are compiled from one body).
    pub fn merge(&self, fruits: Vec<AggFruit>) -> Result<AggFruit, String> {
        let mut intermediate: Option<IntermediateAggregationResults> = None;
        let (mut points, mut digests, mut seconds) = (Vec::new(), Vec::new(), Vec::new());
        for fruit in fruits {
            seconds.extend(fruit.second);
            let (i, p, e) = fruit
                .parts
                .ok_or("a search's aggregations were finished before merging")?;
            match &mut intermediate {
                None => intermediate = Some(i),
                Some(all) => all.merge_fruits(i).map_err(|e| e.to_string())?,
            }
            points.extend(p);
            digests.extend(e);
        }
        let results = match intermediate {
            Some(i) => i
                .into_final_result(self.request.clone(), Default::default())
                .map_err(|e| e.to_string())?,
            None => AggregationResults::default(),
        };
        use tantivy::collector::Collector;
        let points = (!points.is_empty())
            .then(|| self.points.merge_fruits(points))
            .transpose()
            .map_err(|e| e.to_string())?;
        // Each index is one of Elasticsearch's shards: their digests are reduced in order.
        let percentiles =
            (!digests.is_empty()).then(|| super::percentiles::reduce(&self.percentiles, digests));
        // Percentiles under buckets: each index collects the buckets the merged answer shows
        // (as each shard collects its own), then their digests are reduced in order.
        let first = super::to_json(&results);
        let answers = seconds
            .iter()
            .map(|s| s.run(&first))
            .collect::<tantivy::Result<Vec<_>>>()
            .map_err(|e| e.to_string())?;
        Ok(AggFruit {
            results,
            points,
            percentiles,
            bucket_percentiles: super::percentiles::reduce_buckets(answers),
            second: None,
            autos: Vec::new(),
            significant: Vec::new(),
            parts: None,
            nested: Vec::new(),
        })
    }
}
