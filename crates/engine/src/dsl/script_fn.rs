//! A `script_score` script bound to an index's vectors, scoring each document of a segment.

use crate::dsl::scoring::{DocFn, SegmentFn};
use crate::vector::script::{self, DocValues, Script, VectorFn};
use crate::vector::segments::{SegmentVectors, VectorFields};
use std::sync::Arc;
use tantivy::{DocId, Score, SegmentReader};

/// A `script_score` script bound to an index: each vector it reads (its query param and
/// field), checked against the field's mapping.
#[derive(Debug)]
pub struct ScriptFn {
    pub script: Arc<Script>,
    pub vectors: Arc<VectorFields>,
    /// (param, field, the field's position, the query vector).
    pub reads: Vec<(String, String, usize, Arc<[f32]>)>,
    pub min_score: Option<f32>,
}

impl DocFn for ScriptFn {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        let segments = self
            .reads
            .iter()
            .map(|(_, _, pos, _)| self.vectors.segment(reader, *pos))
            .collect::<tantivy::Result<Vec<_>>>()?;
        Ok(Box::new(BoundScript {
            script: self.script.clone(),
            reads: self.reads.clone(),
            segments,
            min_score: self.min_score,
        }))
    }
}

struct BoundScript {
    script: Arc<Script>,
    reads: Vec<(String, String, usize, Arc<[f32]>)>,
    segments: Vec<Arc<SegmentVectors>>,
    min_score: Option<f32>,
}

struct ScriptDoc<'a> {
    bound: &'a BoundScript,
    doc: DocId,
}

impl DocValues for ScriptDoc<'_> {
    fn number(&self, param: &str) -> f64 {
        self.bound
            .script
            .params
            .get(param)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(f64::NAN)
    }

    fn vector(&self, f: VectorFn, param: &str, field: &str) -> Option<f64> {
        let i = self
            .bound
            .reads
            .iter()
            .position(|(p, fl, _, _)| p == param && fl == field)?;
        let seg = &self.bound.segments[i];
        let node = seg.node(self.doc)?;
        Some(script::vector_fn(
            f,
            &self.bound.reads[i].3,
            seg.points.raw_vector(node),
        ))
    }
}

impl SegmentFn for BoundScript {
    /// A document without the vector, or scored below zero or `min_score`, is not a match
    /// (Elasticsearch fails such a search instead; see docs/engine.md).
    fn eval(&mut self, doc: DocId, score: Score) -> Option<Score> {
        let s = script::eval(
            &self.script.expr,
            score as f64,
            &ScriptDoc { bound: self, doc },
        )?;
        let s = s as f32;
        (s.is_finite() && s >= 0.0 && self.min_score.is_none_or(|m| s >= m)).then_some(s)
    }
}
