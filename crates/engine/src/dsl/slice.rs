//! Sliced scrolls and points in time: `"slice": {"id": i, "max": n}` splits a search's
//! documents into `n` disjoint slices, which clients page through side by side. As
//! Elasticsearch's default slicing (`_id`), each document's slice is a hash of its id modulo
//! `max`, found term by term in the `_id` dictionary, never by reading documents. The hash is
//! murmur3 (x86, 32 bits, seed 7919, as Elasticsearch's) of the id's UTF-8 bytes, where
//! Elasticsearch hashes its internal encoding of the id: the slices partition the same way
//! (disjoint, together every document, about equal), not document for document.

use serde_json::Value;
use tantivy::query::{
    BitSetDocSet, ConstScorer, EnableScoring, Explanation, Query, Scorer, Weight,
};
use tantivy::schema::{Field, IndexRecordOption};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

/// Elasticsearch's seed for slicing by `_id`.
const SEED: u32 = 7919;

/// One slice of `max`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slice {
    pub id: u32,
    pub max: u32,
}

impl Slice {
    /// A request's `slice`, checked as Elasticsearch checks it; `field` may only name the
    /// default (`_id`, or `_shard_doc` for a point in time).
    pub fn parse(v: &Value) -> Result<Slice, String> {
        let o = v
            .as_object()
            .ok_or_else(|| format!("[slice] is an object with `id` and `max`, got {v}"))?;
        for k in o.keys() {
            match k.as_str() {
                "id" | "max" => {}
                "field" if matches!(o[k].as_str(), Some("_id" | "_shard_doc")) => {}
                "field" => {
                    return Err(format!(
                    "[slice] by field [{}] is not run by the embedded engine (it slices by `_id`)",
                    o[k]
                ))
                }
                other => return Err(format!("[slice] unknown field [{other}]")),
            }
        }
        let number = |k: &str| {
            o.get(k)
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("[slice] needs `{k}`, a whole number"))
        };
        let (id, max) = (number("id")?, number("max")?);
        if max <= 1 {
            return Err("max must be greater than 1".into());
        }
        if id < 0 {
            return Err("id must be greater than or equal to 0".into());
        }
        if id >= max {
            return Err("max must be greater than id".into());
        }
        Ok(Slice {
            id: u32::try_from(id).map_err(|_| "[slice] id is too large".to_string())?,
            max: u32::try_from(max).map_err(|_| "[slice] max is too large".to_string())?,
        })
    }

    fn holds(&self, id: &[u8]) -> bool {
        (crate::murmur3::x86_32(id, SEED) as i32).rem_euclid(self.max as i32) as u32 == self.id
    }
}

/// The documents of one slice, by their `_id` terms.
#[derive(Debug, Clone)]
pub struct SliceQuery {
    pub id_field: Field,
    pub slice: Slice,
}

impl Query for SliceQuery {
    fn weight(&self, _: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        Ok(Box::new(self.clone()))
    }
}

impl Weight for SliceQuery {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let mut bits = tantivy::BitSet::with_max_value(reader.max_doc().max(1));
        let inverted = reader.inverted_index(self.id_field)?;
        let mut terms = inverted.terms().stream()?;
        while terms.advance() {
            if !self.slice.holds(terms.key()) {
                continue;
            }
            let mut postings =
                inverted.read_postings_from_terminfo(terms.value(), IndexRecordOption::Basic)?;
            let mut doc = postings.doc();
            while doc != TERMINATED {
                bits.insert(doc);
                doc = postings.advance();
            }
        }
        Ok(Box::new(ConstScorer::new(BitSetDocSet::from(bits), boost)))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut s = self.scorer(reader, 1.0)?;
        if s.seek(doc) != doc {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document #{doc} is not in slice {} of {}",
                self.slice.id, self.slice.max
            )));
        }
        Ok(Explanation::new("in the slice", 0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn slices_are_checked_as_elasticsearch_checks_them() {
        assert_eq!(
            Slice::parse(&json!({"id": 1, "max": 3})),
            Ok(Slice { id: 1, max: 3 })
        );
        for (bad, why) in [
            (json!({"id": 0, "max": 1}), "greater than 1"),
            (json!({"id": 3, "max": 3}), "greater than id"),
            (json!({"id": -1, "max": 3}), "greater than or equal to 0"),
            (json!({"id": 0, "max": 2, "field": "n"}), "by field"),
            (json!({"id": 0}), "needs `max`"),
        ] {
            let e = Slice::parse(&bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
        // Every id is in exactly one slice.
        for id in ["a", "b", "42", "some-longer-id"] {
            let holding = (0..4)
                .filter(|i| Slice { id: *i, max: 4 }.holds(id.as_bytes()))
                .count();
            assert_eq!(holding, 1);
        }
    }
}
