//! Queries that keep or rescore the matches of another by a function of each document's
//! fast-field values: Elasticsearch's `function_score` (weight, field_value_factor,
//! random_score and the gauss/exp/linear decays on numbers, dates and geo points) and
//! `geo_distance`. Each segment binds its columns once; per document it is a column read and
//! a little arithmetic.

use std::fmt;
use std::sync::Arc;
use tantivy::columnar::Column;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

/// A function of one segment's documents: `None` drops the document, `Some` is its score.
pub trait SegmentFn: Send {
    fn eval(&mut self, doc: DocId, score: Score) -> Option<Score>;
}

/// Binds a [`SegmentFn`] to each segment.
pub trait DocFn: Send + Sync + fmt::Debug {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>>;
}

/// The matches of `inner`, kept and scored by `func`.
#[derive(Debug)]
pub struct FnQuery {
    inner: Box<dyn Query>,
    func: Arc<dyn DocFn>,
}

impl Clone for FnQuery {
    fn clone(&self) -> Self {
        FnQuery {
            inner: self.inner.box_clone(),
            func: self.func.clone(),
        }
    }
}

impl FnQuery {
    pub fn new(inner: Box<dyn Query>, func: Arc<dyn DocFn>) -> FnQuery {
        FnQuery { inner, func }
    }
}

impl Query for FnQuery {
    fn weight(&self, enable_scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(FnWeight {
            inner: self.inner.weight(enable_scoring)?,
            func: self.func.clone(),
        }))
    }

    // The inner query's terms are the search's (highlighting reads them).
    fn query_terms<'a>(&'a self, visitor: &mut dyn FnMut(&'a tantivy::Term, bool)) {
        self.inner.query_terms(visitor);
    }
}

struct FnWeight {
    inner: Box<dyn Weight>,
    func: Arc<dyn DocFn>,
}

impl Weight for FnWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let mut scorer = FnScorer {
            inner: self.inner.scorer(reader, 1.0)?,
            func: self.func.bind(reader)?,
            boost,
            score: 0.0,
        };
        scorer.settle();
        Ok(Box::new(scorer))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut scorer = self.scorer(reader, 1.0)?;
        if scorer.doc() > doc || scorer.seek(doc) != doc {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document #{doc} does not match"
            )));
        }
        Ok(Explanation::new("function of fast fields", scorer.score()))
    }
}

struct FnScorer {
    inner: Box<dyn Scorer>,
    func: Box<dyn SegmentFn>,
    boost: Score,
    score: Score,
}

impl FnScorer {
    /// Moves forward to the first document at or after the current one that the function
    /// keeps, and scores it.
    fn settle(&mut self) -> DocId {
        let mut doc = self.inner.doc();
        while doc != TERMINATED {
            let inner = self.inner.score();
            if let Some(s) = self.func.eval(doc, inner) {
                self.score = s * self.boost;
                return doc;
            }
            doc = self.inner.advance();
        }
        TERMINATED
    }
}

impl DocSet for FnScorer {
    fn advance(&mut self) -> DocId {
        self.inner.advance();
        self.settle()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        self.inner.seek(target);
        self.settle()
    }

    fn doc(&self) -> DocId {
        self.inner.doc()
    }

    fn size_hint(&self) -> u32 {
        self.inner.size_hint()
    }
}

impl Scorer for FnScorer {
    fn score(&mut self) -> Score {
        self.score
    }
}

/// A numeric column of any of the engine's numeric kinds, read as f64 (dates in
/// milliseconds, as Elasticsearch computes on them).
pub enum Numbers {
    F64(Column<f64>),
    I64(Column<i64>),
    Date(Column<tantivy::DateTime>),
    Missing,
}

impl Numbers {
    pub fn open(reader: &SegmentReader, field: &str, kind: NumberKind) -> tantivy::Result<Numbers> {
        let ff = reader.fast_fields();
        Ok(match kind {
            NumberKind::Double => ff.f64(field).map(Numbers::F64).unwrap_or(Numbers::Missing),
            NumberKind::Long => ff.i64(field).map(Numbers::I64).unwrap_or(Numbers::Missing),
            NumberKind::Date => ff
                .date(field)
                .map(Numbers::Date)
                .unwrap_or(Numbers::Missing),
        })
    }

    pub fn get(&self, doc: DocId) -> Option<f64> {
        match self {
            Numbers::F64(c) => c.first(doc),
            Numbers::I64(c) => c.first(doc).map(|v| v as f64),
            Numbers::Date(c) => c
                .first(doc)
                .map(|d| d.into_timestamp_micros() as f64 / 1000.0),
            Numbers::Missing => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum NumberKind {
    Long,
    Double,
    Date,
}

/// A geo_point's two columns.
pub struct Points {
    lat: Numbers,
    lon: Numbers,
}

impl Points {
    pub fn open(reader: &SegmentReader, field: &str) -> tantivy::Result<Points> {
        Ok(Points {
            lat: Numbers::open(reader, &format!("{field}.lat"), NumberKind::Double)?,
            lon: Numbers::open(reader, &format!("{field}.lon"), NumberKind::Double)?,
        })
    }

    pub fn get(&self, doc: DocId) -> Option<(f64, f64)> {
        Some((self.lat.get(doc)?, self.lon.get(doc)?))
    }
}

#[cfg(test)]
mod tests;
