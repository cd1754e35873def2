//! The join of a nested query: its inner query runs once per search on the store of the
//! path's objects (the store's searcher of the same refresh as the documents'), each match's
//! document `_seq_no` is noted with its score, and each segment of the documents matches
//! the documents whose `_seq_no` was noted, scored by the `score_mode`.

use super::nested::ScoreMode;
use crate::mapping::nested::NestedMapping;
use std::sync::Arc;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::schema::Field;
use tantivy::{DocId, DocSet, Score, Searcher, SegmentReader, TERMINATED};

mod seqset;
pub(crate) use seqset::{SeqSet, SeqSetBuilder};

#[derive(Clone)]
pub struct NestedJoin {
    nested: Arc<NestedMapping>,
    inner: Arc<dyn Query>,
    mode: ScoreMode,
    /// The documents' `_seq_no` column.
    seq_no: Field,
}

impl std::fmt::Debug for NestedJoin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NestedJoin({}, {:?})", self.nested.path, self.inner)
    }
}

impl NestedJoin {
    pub fn new(
        nested: Arc<NestedMapping>,
        inner: Box<dyn Query>,
        mode: ScoreMode,
        seq_no: Field,
    ) -> Self {
        NestedJoin {
            nested,
            inner: Arc::from(inner),
            mode,
            seq_no,
        }
    }
}

/// The documents (by `_seq_no`) whose objects match `inner` on `objects`, each with its
/// objects' scores combined by `mode`.
pub(crate) fn matching_documents(
    objects: &Searcher,
    inner: &dyn Query,
    scoring: bool,
    mode: ScoreMode,
) -> tantivy::Result<SeqSet> {
    let scoring = scoring && mode != ScoreMode::None;
    let enable = match scoring {
        true => EnableScoring::enabled_from_searcher(objects),
        false => EnableScoring::disabled_from_searcher(objects),
    };
    let weight = inner.weight(enable)?;
    let mut found = SeqSetBuilder::new(mode, scoring);
    for segment in objects.segment_readers() {
        let owners = segment.fast_fields().u64("_seq_no")?;
        let alive = segment.alive_bitset();
        weight.for_each(segment, &mut |doc, score| {
            if alive.is_some_and(|a| !a.is_alive(doc)) {
                return;
            }
            if let Some(owner) = owners.first(doc) {
                found.add(owner, score);
            }
        })?;
    }
    Ok(found.build())
}

impl Query for NestedJoin {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let searcher = scoring.searcher().ok_or_else(|| {
            tantivy::TantivyError::InvalidArgument(format!(
                "a `nested` query on `{}` needs a searcher",
                self.nested.path
            ))
        })?;
        let objects = self
            .nested
            .views
            .searcher_for(searcher)
            .map_err(tantivy::TantivyError::InvalidArgument)?;
        let documents = matching_documents(
            &objects,
            self.inner.as_ref(),
            scoring.is_scoring_enabled(),
            self.mode,
        )?;
        Ok(Box::new(JoinWeight {
            documents: Arc::new(documents),
            seq_no: self.seq_no,
        }))
    }
}

/// The documents of one search's join, by `_seq_no`.
#[derive(Clone)]
pub(crate) struct JoinWeight {
    pub documents: Arc<SeqSet>,
    pub seq_no: Field,
}

/// The documents (or objects) whose `_seq_no` is one of a set's, each scoring its score.
#[derive(Clone)]
pub(crate) struct SeqIn(JoinWeight);

impl SeqIn {
    pub fn new(documents: Arc<SeqSet>, seq_no: Field) -> Self {
        SeqIn(JoinWeight { documents, seq_no })
    }
}

impl std::fmt::Debug for SeqIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SeqIn({} documents)", self.0.documents.len())
    }
}

impl Query for SeqIn {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.0.clone()))
    }
}

impl JoinWeight {
    fn matches(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Matches> {
        let mut m = Matches::default();
        if self.documents.is_empty() {
            return Ok(m);
        }
        let name = reader.schema().get_field_name(self.seq_no).to_string();
        let column = reader.fast_fields().u64(&name)?;
        for doc in 0..reader.max_doc() {
            if let Some(score) = column.first(doc).and_then(|s| self.documents.score(s)) {
                m.docs.push(doc);
                m.scores.push(score * boost);
            }
        }
        Ok(m)
    }
}

impl Weight for JoinWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        Ok(Box::new(self.matches(reader, boost)?))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut m = self.matches(reader, 1.0)?;
        if m.seek(doc) != doc {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document #{doc} has no matching nested object"
            )));
        }
        Ok(Explanation::new("nested objects matched", m.score()))
    }
}

/// One segment's joined documents, in order.
#[derive(Default)]
struct Matches {
    docs: Vec<DocId>,
    scores: Vec<Score>,
    at: usize,
}

impl DocSet for Matches {
    fn advance(&mut self) -> DocId {
        self.at += 1;
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        self.at += self.docs[self.at.min(self.docs.len())..].partition_point(|d| *d < target);
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.docs.get(self.at).copied().unwrap_or(TERMINATED)
    }

    fn size_hint(&self) -> u32 {
        self.docs.len() as u32
    }
}

impl Scorer for Matches {
    fn score(&mut self) -> Score {
        self.scores.get(self.at).copied().unwrap_or(0.0)
    }
}
