//! The first documents a query matches, in index order (segment by segment, each in doc id
//! order), up to a bound: what ES|QL's FROM reads.

use crate::error::Error;
use crate::index::EmbeddedIndex;
use crate::search::SearchPlan;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocAddress, DocId, Score, Searcher, SegmentOrdinal, SegmentReader};

/// The bound, and the documents taken so far over every segment: no more than the bound are
/// held, however many segments there are.
struct First(usize, std::sync::Arc<std::sync::atomic::AtomicUsize>);

struct FirstInSegment {
    segment: SegmentOrdinal,
    limit: usize,
    taken: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    docs: Vec<DocAddress>,
}

impl Collector for First {
    type Fruit = Vec<DocAddress>;
    type Child = FirstInSegment;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        _: &SegmentReader,
    ) -> tantivy::Result<FirstInSegment> {
        Ok(FirstInSegment {
            segment,
            limit: self.0,
            taken: self.1.clone(),
            docs: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Vec<DocAddress>>) -> tantivy::Result<Vec<DocAddress>> {
        let mut all: Vec<DocAddress> = fruits.into_iter().flatten().collect();
        all.sort();
        all.truncate(self.0);
        Ok(all)
    }
}

impl SegmentCollector for FirstInSegment {
    type Fruit = Vec<DocAddress>;

    fn collect(&mut self, doc: DocId, _: Score) {
        if self
            .taken
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            < self.limit
        {
            self.docs.push(DocAddress::new(self.segment, doc));
        }
    }

    fn harvest(self) -> Vec<DocAddress> {
        self.docs
    }
}

impl EmbeddedIndex {
    /// The addresses of the first `limit` documents the plan's query matches.
    pub fn matching_addresses(
        &self,
        plan: &SearchPlan,
        searcher: &Searcher,
        limit: usize,
    ) -> Result<Vec<DocAddress>, Error> {
        let found = searcher
            .search(plan.query.as_ref(), &First(limit, Default::default()))
            .map_err(|e| Error::new(crate::error::ErrorKind::Internal, e.to_string()))?;
        plan.script_failure()?;
        Ok(found)
    }
}
