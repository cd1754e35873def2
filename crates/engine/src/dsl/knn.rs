//! kNN search: Elasticsearch's top-level `knn` section and `knn` query, and OpenSearch's `knn`
//! query, parsed once into [`KnnAst`] and run as a tantivy query whose matches are the k
//! nearest documents: each segment's graph explored with `num_candidates` candidates (only
//! live documents matching the filter kept), the segments' best merged into the global k.

use crate::dsl::ast::QueryAst;
use crate::vector::hnsw::Near;
use crate::vector::segments::{SegmentVectors, VectorFields};
use crate::vector::spec::{VectorSpec, MAX_CANDIDATES};
use serde_json::{Map, Value};
use std::sync::Arc;
use tantivy::query::{EnableScoring, Explanation, Query, Scorer, Weight};
use tantivy::{DocId, DocSet, Score, SegmentReader, TERMINATED};

/// One kNN clause, as written (the vector is checked against the field's mapping when
/// compiled).
#[derive(Debug, Clone, PartialEq)]
pub struct KnnAst {
    pub field: String,
    pub vector: Value,
    /// None: the search's `size` (Elasticsearch), as for the `knn` query.
    pub k: Option<usize>,
    pub num_candidates: Option<usize>,
    pub filter: Vec<QueryAst>,
    /// The least similarity a match has (a distance's most, for `l2_norm`).
    pub similarity: Option<f32>,
    pub boost: f32,
}

fn count(v: Option<&Value>, key: &str) -> Result<Option<usize>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 && n as usize <= MAX_CANDIDATES => Ok(Some(n as usize)),
            _ => Err(format!(
                "[{key}] must be an integer in [1, {MAX_CANDIDATES}], got {v}"
            )),
        },
    }
}

fn filters(v: Option<&Value>) -> Result<Vec<QueryAst>, String> {
    match v {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) => items.iter().map(QueryAst::parse).collect(),
        Some(one) => Ok(vec![QueryAst::parse(one)?]),
    }
}

impl KnnAst {
    /// Elasticsearch's clause (top-level or query) or OpenSearch's query (`{"<field>":
    /// {"vector": [...], "k": n}}`).
    pub fn parse(body: &Value) -> Result<KnnAst, String> {
        let obj = body.as_object().ok_or("`knn` expects an object")?;
        if obj.contains_key("field") {
            return Self::parse_elasticsearch(obj);
        }
        match (obj.len(), obj.iter().next()) {
            (1, Some((field, inner))) if inner.get("vector").is_some() => {
                Self::parse_opensearch(field, inner)
            }
            _ => Err("`knn` needs a `field` and a `query_vector` (Elasticsearch), or one field holding a `vector` (OpenSearch)".into()),
        }
    }

    fn parse_elasticsearch(obj: &Map<String, Value>) -> Result<KnnAst, String> {
        for key in obj.keys() {
            match key.as_str() {
                "field" | "query_vector" | "k" | "num_candidates" | "filter" | "similarity"
                | "boost" | "_name" => {}
                "query_vector_builder" => return Err("knn `query_vector_builder` needs an inference model, which the embedded engine does not have; give `query_vector`".into()),
                other => return Err(format!("knn parameter [{other}] is not run by the embedded engine")),
            }
        }
        let k = count(obj.get("k"), "k")?;
        let num_candidates = count(obj.get("num_candidates"), "num_candidates")?;
        if let (Some(k), Some(c)) = (k, num_candidates) {
            if c < k {
                return Err(format!(
                    "[num_candidates] cannot be less than [k] ({c} < {k})"
                ));
            }
        }
        Ok(KnnAst {
            field: obj
                .get("field")
                .and_then(Value::as_str)
                .ok_or("knn `field` must be a string")?
                .to_string(),
            vector: obj
                .get("query_vector")
                .cloned()
                .ok_or("knn needs a `query_vector`")?,
            k,
            num_candidates,
            filter: filters(obj.get("filter"))?,
            similarity: obj
                .get("similarity")
                .and_then(Value::as_f64)
                .map(|s| s as f32),
            boost: obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
        })
    }

    fn parse_opensearch(field: &str, inner: &Value) -> Result<KnnAst, String> {
        let obj = inner.as_object().ok_or("`knn` expects an object")?;
        let mut ef = None;
        for (key, v) in obj {
            match key.as_str() {
                "vector" | "k" | "filter" | "boost" | "_name" => {}
                "method_parameters" => {
                    for (p, pv) in v.as_object().into_iter().flatten() {
                        match p.as_str() {
                            "ef_search" => ef = count(Some(pv), "ef_search")?,
                            other => return Err(format!("knn method parameter [{other}] is not run by the embedded engine")),
                        }
                    }
                }
                other => return Err(format!("knn parameter [{other}] is not run by the embedded engine (vector, k, filter, boost, method_parameters.ef_search)")),
            }
        }
        let k = count(obj.get("k"), "k")?.ok_or("OpenSearch's knn query needs `k`")?;
        Ok(KnnAst {
            field: field.to_string(),
            vector: obj["vector"].clone(),
            k: Some(k),
            // OpenSearch's `index.knn.algo_param.ef_search` default, at least k.
            num_candidates: Some(ef.unwrap_or(100).max(k)),
            filter: filters(obj.get("filter"))?,
            similarity: None,
            boost: obj.get("boost").and_then(Value::as_f64).unwrap_or(1.0) as f32,
        })
    }

    /// Its k and num_candidates, with Elasticsearch's defaults: k is the search's size,
    /// num_candidates 1.5 × k (at least k, at most 10,000).
    pub fn sizes(&self, size: usize) -> Result<(usize, usize), String> {
        let k = self.k.unwrap_or(size.max(1));
        let candidates = self
            .num_candidates
            .unwrap_or_else(|| (k + k / 2).clamp(k, MAX_CANDIDATES));
        if candidates < k {
            return Err(format!(
                "[num_candidates] cannot be less than [k] ({candidates} < {k})"
            ));
        }
        Ok((k, candidates))
    }
}

/// A compiled kNN clause: it finds its matches when its weight is made (it needs the
/// searcher's segments), then hands each segment its list.
pub struct KnnQuery {
    pub vectors: Arc<VectorFields>,
    pub position: usize,
    pub spec: Arc<VectorSpec>,
    pub vector: Arc<[f32]>,
    pub k: usize,
    pub candidates: usize,
    pub filter: Option<Box<dyn Query>>,
    pub min_score: Option<f32>,
    pub boost: f32,
    /// Where a profiled search adds the vectors it compared.
    pub visits: Option<Arc<std::sync::atomic::AtomicU64>>,
}

impl Clone for KnnQuery {
    fn clone(&self) -> Self {
        KnnQuery {
            vectors: self.vectors.clone(),
            position: self.position,
            spec: self.spec.clone(),
            vector: self.vector.clone(),
            k: self.k,
            candidates: self.candidates,
            filter: self.filter.as_ref().map(|f| f.box_clone()),
            min_score: self.min_score,
            boost: self.boost,
            visits: self.visits.clone(),
        }
    }
}

impl std::fmt::Debug for KnnQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KnnQuery")
            .field("k", &self.k)
            .field("num_candidates", &self.candidates)
            .finish()
    }
}

/// One segment's k nearest accepted nodes: by its graph, or by a scan when it has none or
/// when so few documents pass the filter that the scan costs less (Lucene's rule).
fn segment_nearest(
    seg: &SegmentVectors,
    q: &[f32],
    k: usize,
    candidates: usize,
    accept: &dyn Fn(u32) -> bool,
    accepted: Option<usize>,
) -> (Vec<Near>, u64) {
    let qv = seg.points.query(q);
    match &seg.graph {
        Some(g) if accepted.is_none_or(|n| n > candidates) => {
            VectorFields::with_visited(seg.points.len(), |v| {
                let found = g.search(&seg.points, &qv, k, candidates, accept, v);
                (found, v.count)
            })
        }
        _ => {
            let mut all: Vec<Near> = (0..seg.points.len() as u32)
                .filter(|n| accept(*n))
                .map(|n| Near {
                    sim: seg.points.to(&qv, n),
                    node: n,
                })
                .collect();
            let keep = k.min(all.len());
            if keep > 0 && keep < all.len() {
                all.select_nth_unstable_by(keep - 1, |a, b| b.cmp(a));
            }
            let scanned = all.len() as u64;
            all.truncate(keep);
            (all, scanned)
        }
    }
}

impl Query for KnnQuery {
    fn weight(&self, scoring: EnableScoring<'_>) -> tantivy::Result<Box<dyn Weight>> {
        let searcher = scoring.searcher().ok_or_else(|| {
            tantivy::TantivyError::InvalidArgument("a knn search needs the index's segments".into())
        })?;
        let filter = self
            .filter
            .as_ref()
            .map(|f| f.weight(EnableScoring::disabled_from_searcher(searcher)))
            .transpose()?;
        let mut found: Vec<(Score, u32, DocId)> = Vec::new();
        for (ord, reader) in searcher.segment_readers().iter().enumerate() {
            let seg = self.vectors.segment(reader, self.position)?;
            let allowed = match &filter {
                Some(w) => {
                    let mut bits = tantivy::BitSet::with_max_value(reader.max_doc().max(1));
                    let mut scorer = w.scorer(reader, 1.0)?;
                    let mut doc = scorer.doc();
                    while doc != TERMINATED {
                        bits.insert(doc);
                        doc = scorer.advance();
                    }
                    Some(bits)
                }
                None => None,
            };
            let alive = reader.alive_bitset();
            let accept = |node: u32| {
                let doc = seg.docs[node as usize];
                alive.is_none_or(|a| a.is_alive(doc))
                    && allowed.as_ref().is_none_or(|b| b.contains(doc))
            };
            let accepted = allowed.as_ref().map(|b| b.len());
            let (nearest, visited) = segment_nearest(
                &seg,
                &self.vector,
                self.k,
                self.candidates,
                &accept,
                accepted,
            );
            if let Some(v) = &self.visits {
                v.fetch_add(visited, std::sync::atomic::Ordering::Relaxed);
            }
            for n in nearest {
                let score = self.spec.score(seg.points.metric.raw(n.sim));
                found.push((score, ord as u32, seg.docs[n.node as usize]));
            }
        }
        found.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then((a.1, a.2).cmp(&(b.1, b.2))));
        found.truncate(self.k);
        if let Some(min) = self.min_score {
            found.retain(|f| f.0 >= min);
        }
        let mut per_segment: Vec<Vec<(DocId, Score)>> =
            vec![Vec::new(); searcher.segment_readers().len()];
        for (score, ord, doc) in found {
            per_segment[ord as usize].push((doc, score * self.boost));
        }
        per_segment
            .iter_mut()
            .for_each(|s| s.sort_unstable_by_key(|d| d.0));
        let segments = searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .zip(per_segment)
            .collect();
        Ok(Box::new(KnnWeight { segments }))
    }
}

struct KnnWeight {
    segments: Vec<(tantivy::index::SegmentId, Vec<(DocId, Score)>)>,
}

impl Weight for KnnWeight {
    fn scorer(&self, reader: &SegmentReader, boost: Score) -> tantivy::Result<Box<dyn Scorer>> {
        let hits = self
            .segments
            .iter()
            .find(|(id, _)| *id == reader.segment_id())
            .map(|(_, h)| h.clone())
            .unwrap_or_default();
        Ok(Box::new(ListScorer { hits, at: 0, boost }))
    }

    fn explain(&self, reader: &SegmentReader, doc: DocId) -> tantivy::Result<Explanation> {
        let mut s = self.scorer(reader, 1.0)?;
        if s.seek(doc) != doc {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "document #{doc} is not among the nearest"
            )));
        }
        Ok(Explanation::new("within top k documents", s.score()))
    }
}

/// Documents given with their scores, in document order.
pub struct ListScorer {
    pub hits: Vec<(DocId, Score)>,
    pub at: usize,
    pub boost: Score,
}

impl DocSet for ListScorer {
    fn advance(&mut self) -> DocId {
        self.at += 1;
        self.doc()
    }

    fn seek(&mut self, target: DocId) -> DocId {
        while self.doc() < target {
            self.at += 1;
        }
        self.doc()
    }

    fn doc(&self) -> DocId {
        self.hits.get(self.at).map_or(TERMINATED, |h| h.0)
    }

    fn size_hint(&self) -> u32 {
        (self.hits.len() - self.at.min(self.hits.len())) as u32
    }
}

impl Scorer for ListScorer {
    fn score(&mut self) -> Score {
        self.hits.get(self.at).map_or(0.0, |h| h.1 * self.boost)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn parses_both_dialects() {
        let es = KnnAst::parse(&json!({"field": "v", "query_vector": [1, 2], "k": 5, "num_candidates": 50, "filter": {"term": {"tag": "a"}}, "boost": 2})).unwrap();
        assert_eq!(
            (es.k, es.num_candidates, es.filter.len(), es.boost),
            (Some(5), Some(50), 1, 2.0)
        );
        let os = KnnAst::parse(&json!({"v": {"vector": [1, 2], "k": 7}})).unwrap();
        assert_eq!(
            (os.field.as_str(), os.k, os.num_candidates),
            ("v", Some(7), Some(100))
        );
        assert_eq!(
            KnnAst::parse(&json!({"field": "v", "query_vector": [1], "k": 3}))
                .unwrap()
                .sizes(10)
                .unwrap(),
            (3, 4)
        );
        for bad in [
            json!({"field": "v", "query_vector": [1], "k": 10, "num_candidates": 5}),
            json!({"field": "v", "query_vector": [1], "num_candidates": 10001}),
            json!({"field": "v", "query_vector_builder": {}}),
            json!({"field": "v", "query_vector": [1], "rescore_vector": {}}),
            json!({"v": {"vector": [1]}}),
        ] {
            assert!(KnnAst::parse(&bad).is_err(), "{bad}");
        }
    }
}
