//! One embedded index: a tantivy index with its writer (explicit commit = refresh) and reader,
//! the same layers tantivy itself has.

use super::mapping::Mapping;
use super::query::QueryCompiler;
use crate::backend::{ErrorKind, OpError, Outcome};
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::Query;
use tantivy::schema::Value as _;
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// Indexing memory for all writer threads together; tantivy needs at least 15 MB a thread.
const WRITER_BUDGET_PER_THREAD: usize = 64 * 1024 * 1024;

pub struct IndexedAs {
    pub id: String,
}

/// One search hit, as the REST API returns it.
pub struct Hit {
    pub score: f32,
    pub id: String,
    pub source: Vec<u8>,
}

pub struct EmbeddedIndex {
    pub name: String,
    pub mapping: Mapping,
    index: Index,
    writer: RwLock<IndexWriter>,
    reader: IndexReader,
    next_id: AtomicU64,
}

fn internal(e: impl std::fmt::Display) -> OpError {
    OpError::new(ErrorKind::Internal, e.to_string())
}

impl EmbeddedIndex {
    pub fn create(name: &str, body: &Value) -> Result<EmbeddedIndex, OpError> {
        let mapping = Mapping::from_index_body(body).map_err(|u| {
            OpError::new(
                ErrorKind::BadRequest,
                format!("index `{name}`: field `{}` has type `{}`, which the embedded backend does not support (text, keyword, long/integer, double/float, boolean, date, geo_point)", u.field, u.kind),
            )
        })?;
        let index = Index::create_in_ram(mapping.schema.clone());
        let threads = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2).clamp(1, 4);
        let writer = index.writer_with_num_threads(threads, threads * WRITER_BUDGET_PER_THREAD).map_err(internal)?;
        let reader = index.reader_builder().reload_policy(ReloadPolicy::Manual).try_into().map_err(internal)?;
        Ok(EmbeddedIndex { name: name.to_string(), mapping, index, writer: RwLock::new(writer), reader, next_id: AtomicU64::new(1) })
    }

    /// Indexes NDJSON documents; documents that do not fit the mapping fail alone, as items
    /// of an Elasticsearch bulk request do.
    pub fn bulk(&self, body: &str) -> Result<Outcome, OpError> {
        let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
        let mut outcome = Outcome::default();
        let mut id_buf = [0u8; 20];
        for line in body.lines().filter(|l| !l.trim().is_empty()) {
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let id = crate::units::decimal(&mut id_buf, id);
            match self.mapping.document(line, id) {
                Ok(doc) => {
                    writer.add_document(doc).map_err(internal)?;
                    outcome.units += 1;
                }
                Err(_) => outcome.failed_items += 1,
            }
        }
        Ok(outcome)
    }

    /// Indexes one document under `id` (replacing a document with that id) or under the next
    /// generated id; returns the id, or why the document does not fit the mapping.
    pub fn index_one(&self, id: Option<&str>, source: &str) -> Result<IndexedAs, OpError> {
        let mut id_buf = [0u8; 20];
        let (id, replaced) = match id {
            Some(id) => (id.to_string(), true),
            None => (crate::units::decimal(&mut id_buf, self.next_id.fetch_add(1, Ordering::Relaxed)).to_string(), false),
        };
        let doc = self.mapping.document(source, &id).map_err(|m| OpError::new(ErrorKind::BadRequest, m))?;
        let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
        if replaced {
            writer.delete_term(Term::from_field_text(self.mapping.id, &id));
        }
        writer.add_document(doc).map_err(internal)?;
        Ok(IndexedAs { id })
    }

    /// Deletes the document with this id (visible after the next refresh).
    pub fn delete(&self, id: &str) {
        let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
        writer.delete_term(Term::from_field_text(self.mapping.id, id));
    }

    /// Commits, then merges the searchable segments down to at most `max_segments` (the
    /// smallest ones first), as Elasticsearch's _forcemerge does.
    pub fn force_merge(&self, max_segments: u64) -> Result<(), OpError> {
        self.refresh()?;
        let mut segments = self.index.searchable_segment_metas().map_err(internal)?;
        let keep = max_segments.max(1) as usize;
        if segments.len() > keep {
            segments.sort_by_key(|m| m.num_docs());
            let merge: Vec<_> = segments[..=segments.len() - keep].iter().map(|m| m.id()).collect();
            let mut writer = self.writer.write().unwrap_or_else(|p| p.into_inner());
            writer.merge(&merge).wait().map_err(internal)?;
            writer.commit().map_err(internal)?;
        }
        self.reader.reload().map_err(internal)
    }

    /// The top `size` hits of a query with their ids, scores and sources, and the total.
    pub fn search_hits(&self, query: &dyn Query, size: usize) -> Result<(u64, Vec<Hit>), OpError> {
        let searcher = self.reader.searcher();
        let (count, top) = searcher.search(query, &(Count, TopDocs::with_limit(size.max(1)).order_by_score())).map_err(internal)?;
        let mut hits = Vec::with_capacity(size.min(top.len()));
        for (score, addr) in top.into_iter().take(size) {
            let doc: TantivyDocument = searcher.doc(addr).map_err(internal)?;
            hits.push(Hit {
                score,
                id: doc.get_first(self.mapping.id).and_then(|v| v.as_str()).unwrap_or_default().to_string(),
                source: doc.get_first(self.mapping.source).and_then(|v| v.as_bytes()).unwrap_or(b"{}").to_vec(),
            });
        }
        Ok((count as u64, hits))
    }

    /// The stored source of a document, if the id is searchable.
    pub fn source_of(&self, id: &str) -> Result<Option<Vec<u8>>, OpError> {
        let searcher = self.reader.searcher();
        let query = tantivy::query::TermQuery::new(Term::from_field_text(self.mapping.id, id), tantivy::schema::IndexRecordOption::Basic);
        let top = searcher.search(&query, &TopDocs::with_limit(1).order_by_score()).map_err(internal)?;
        let Some((_, addr)) = top.first() else { return Ok(None) };
        let doc: TantivyDocument = searcher.doc(*addr).map_err(internal)?;
        Ok(Some(doc.get_first(self.mapping.source).and_then(|v| v.as_bytes()).unwrap_or(b"{}").to_vec()))
    }

    /// Makes everything indexed so far searchable (commit + reader reload).
    pub fn refresh(&self) -> Result<(), OpError> {
        let mut writer = self.writer.write().unwrap_or_else(|p| p.into_inner());
        writer.commit().map_err(internal)?;
        drop(writer);
        self.reader.reload().map_err(internal)
    }

    pub fn compile(&self, body: &Value) -> Result<(Box<dyn Query>, usize), OpError> {
        let size = body.get("size").and_then(Value::as_u64).unwrap_or(10) as usize;
        let compiler = QueryCompiler { mapping: &self.mapping, index: &self.index };
        let query = match body.get("query") {
            Some(q) => compiler.compile(q),
            None => compiler.compile(&serde_json::json!({"match_all": {}})),
        }
        .map_err(|m| OpError::new(ErrorKind::BadRequest, format!("index `{}`: {m}", self.name)))?;
        Ok((query, size))
    }

    /// Runs a query: counts all hits and, like Elasticsearch's fetch phase, loads the source of
    /// the top `size` documents.
    pub fn search(&self, query: &dyn Query, size: usize) -> Result<Outcome, OpError> {
        let searcher = self.reader.searcher();
        let hits = if size == 0 {
            searcher.search(query, &Count).map_err(internal)?
        } else {
            let (count, top) = searcher.search(query, &(Count, TopDocs::with_limit(size).order_by_score())).map_err(internal)?;
            for (_, addr) in top {
                let doc: TantivyDocument = searcher.doc(addr).map_err(internal)?;
                std::hint::black_box(doc.get_first(self.mapping.source).and_then(|v| v.as_bytes()).map(<[u8]>::len));
            }
            count
        };
        Ok(Outcome { units: 1, hits: hits as u64, failed_items: 0, ..Outcome::default() })
    }

    pub fn get(&self, id: &str) -> Result<Outcome, OpError> {
        let searcher = self.reader.searcher();
        let term = Term::from_field_text(self.mapping.id, id);
        let query = tantivy::query::TermQuery::new(term, tantivy::schema::IndexRecordOption::Basic);
        let top = searcher.search(&query, &TopDocs::with_limit(1).order_by_score()).map_err(internal)?;
        let Some((_, addr)) = top.first() else {
            return Err(OpError::new(ErrorKind::NotFound, format!("document `{id}` not found in index `{}`", self.name)));
        };
        let _doc: TantivyDocument = searcher.doc(*addr).map_err(internal)?;
        Ok(Outcome { units: 1, hits: 1, failed_items: 0, ..Outcome::default() })
    }

    /// Documents visible to searches (after the last refresh).
    pub fn searchable_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index() -> EmbeddedIndex {
        let body = json!({"mappings": {"properties": {"name": {"type": "text"}, "population": {"type": "long"}, "cc": {"type": "keyword"}}}});
        EmbeddedIndex::create("places", &body).unwrap()
    }

    #[test]
    fn bulk_refresh_and_search() {
        let idx = index();
        let out = idx
            .bulk("{\"name\":\"Sankt Georgen im Attergau\",\"population\":1500,\"cc\":\"AT\"}\n{\"name\":\"Georgen Sankt\",\"population\":20,\"cc\":\"AT\"}\n{\"name\":\"Wien\",\"population\":\"x\"}\n")
            .unwrap();
        assert_eq!((out.units, out.failed_items), (2, 1));
        idx.refresh().unwrap();
        assert_eq!(idx.searchable_docs(), 2);
        let run = |q: serde_json::Value| {
            let (query, size) = idx.compile(&json!({ "query": q })).unwrap();
            idx.search(query.as_ref(), size).unwrap().hits
        };
        assert_eq!(run(json!({"match_phrase": {"name": "Sankt Georgen"}})), 1);
        assert_eq!(run(json!({"match": {"name": "sankt georgen"}})), 2);
        assert_eq!(run(json!({"match": {"name": {"query": "sankt attergau", "operator": "and"}}})), 1);
        assert_eq!(run(json!({"term": {"cc": "AT"}})), 2);
        assert_eq!(run(json!({"range": {"population": {"gte": 100}}})), 1);
        assert_eq!(run(json!({"bool": {"must": [{"match": {"name": "georgen"}}], "must_not": [{"range": {"population": {"lt": 100}}}]}})), 1);
        assert_eq!(run(json!({"match_all": {}})), 2);
        idx.get("1").unwrap();
        assert_eq!(idx.get("999").unwrap_err().kind, ErrorKind::NotFound);
    }

    #[test]
    fn unknown_fields_and_queries_are_bad_requests() {
        let idx = index();
        assert_eq!(idx.compile(&json!({"query": {"match": {"nmae": "x"}}})).err().unwrap().kind, ErrorKind::BadRequest);
        assert_eq!(idx.compile(&json!({"query": {"fuzzy": {"name": "x"}}})).err().unwrap().kind, ErrorKind::BadRequest);
    }
}
