//! The `percolate` query: the stored queries (a `percolator` field's) that match one or
//! several given documents. The documents are indexed in memory once, under the index's
//! mapping (Elasticsearch's `MemoryIndex`); the candidates are the stored queries whose
//! extracted terms the documents hold, or whose terms could not be extracted; each candidate
//! is then run on the in-memory documents. A match scores the stored query's best score on
//! them. Which documents (slots) each hit matched, and their highlighting, are added when the
//! hit is fetched (`search::fetch`).

use crate::dsl::scoring::{DocFn, FnQuery, SegmentFn};
use crate::dsl::QueryCompiler;
use crate::mapping::percolator::ANY;
use crate::mapping::{FieldRef, FieldType, Mapping};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::TopDocs;
use tantivy::query::{BooleanQuery, Occur, Query, TermQuery};
use tantivy::schema::IndexRecordOption;
use tantivy::{DocId, Score, SegmentReader, Term};

/// The most documents one `percolate` query takes.
const MAX_DOCUMENTS: usize = 1_000;

/// The percolated documents, indexed in memory under the index's mapping.
pub(crate) struct Percolated {
    mapping: Mapping,
    index: tantivy::Index,
    searcher: tantivy::Searcher,
    /// The documents as the request gave them, by slot.
    pub docs: Vec<Map<String, Value>>,
    /// The percolator field.
    pub field: String,
    /// The query's `name`: the hits' slot field is `_percolator_document_slot_<name>`.
    pub name: Option<String>,
    /// Whether the request gave `documents` (highlights are keyed by slot then).
    pub several: bool,
}

impl std::fmt::Debug for Percolated {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Percolated({} documents on `{}`)",
            self.docs.len(),
            self.field
        )
    }
}

impl Percolated {
    /// Reads a `percolate` query's body and indexes its documents.
    pub(crate) fn build(mapping: &Mapping, body: &Value) -> Result<Percolated, String> {
        let obj = body.as_object().ok_or("`percolate` expects an object")?;
        if let Some(k) = obj.keys().find(|k| {
            !matches!(
                k.as_str(),
                "field" | "document" | "documents" | "name" | "boost" | "_name"
            )
        }) {
            return Err(match k.as_str() {
                "index" | "id" | "routing" | "preference" | "version" => format!("`percolate` of a stored document (`{k}`) is not run by the embedded engine: give the `document`"),
                other => format!("`percolate` parameter [{other}] is not run by the embedded engine"),
            });
        }
        let field = obj
            .get("field")
            .and_then(Value::as_str)
            .ok_or("[percolate] query is missing required [field] parameter")?;
        match mapping.field(field) {
            Some(FieldRef::Mapped(f)) if f.kind == FieldType::Percolator => {}
            Some(_) => {
                return Err(format!(
                    "expected field [{field}] to be of type [percolator], but is of another type"
                ))
            }
            None => return Err(format!("field [{field}] does not exist")),
        }
        let (docs, several) = match (obj.get("document"), obj.get("documents")) {
            (Some(d), None) => (vec![d.clone()], false),
            (None, Some(Value::Array(ds))) => (ds.clone(), true),
            (Some(_), Some(_)) => {
                return Err(
                    "[percolate] query takes either [document] or [documents], not both".into(),
                )
            }
            _ => {
                return Err(
                    "[percolate] query is missing required [document] or [documents] parameter"
                        .into(),
                )
            }
        };
        if docs.is_empty() || docs.len() > MAX_DOCUMENTS {
            return Err(format!("`percolate` takes 1 to {MAX_DOCUMENTS} documents"));
        }
        let docs: Vec<Map<String, Value>> = docs
            .into_iter()
            .map(|d| match d {
                Value::Object(o) => Ok(o),
                other => Err(format!("a percolated document is an object, got {other}")),
            })
            .collect::<Result<_, _>>()?;
        let index = tantivy::Index::create_in_ram(mapping.schema.clone());
        let mut writer: tantivy::IndexWriter = index
            .writer_with_num_threads(1, 15_000_000)
            .map_err(|e| e.to_string())?;
        for (slot, d) in docs.iter().enumerate() {
            let doc = mapping
                .document(&Value::Object(d.clone()).to_string(), &slot.to_string())
                .map_err(|e| format!("a percolated document: {e}"))?;
            writer.add_document(doc).map_err(|e| e.to_string())?;
        }
        writer.commit().map_err(|e| e.to_string())?;
        let searcher = index.reader().map_err(|e| e.to_string())?.searcher();
        Ok(Percolated {
            mapping: mapping.clone(),
            index,
            searcher,
            docs,
            field: field.to_string(),
            name: obj.get("name").and_then(Value::as_str).map(str::to_string),
            several,
        })
    }

    /// A stored query (its JSON) compiled for the in-memory documents.
    pub(crate) fn compile(&self, query: &[u8]) -> Result<Box<dyn Query>, String> {
        let q: Value = serde_json::from_slice(query).map_err(|e| format!("a stored query: {e}"))?;
        QueryCompiler {
            mapping: &self.mapping,
            index: &self.index,
            unmapped_matches_none: false,
            size: 10,
            script_errors: None,
            flattened_objects: false,
        }
        .compile_json(&q)
    }

    /// The slots (in order) of the documents a stored query matches, and its best score on
    /// them; None when it matches none.
    pub(crate) fn matches(&self, query: &dyn Query) -> Result<Option<(Vec<u32>, Score)>, String> {
        let top = TopDocs::with_limit(self.docs.len()).order_by_score();
        let found = self
            .searcher
            .search(query, &top)
            .map_err(|e| e.to_string())?;
        if found.is_empty() {
            return Ok(None);
        }
        let best = found.iter().map(|(s, _)| *s).fold(f32::MIN, f32::max);
        let mut slots: Vec<u32> = found
            .iter()
            .map(|(_, addr)| self.slot_of(addr.doc_id))
            .collect();
        slots.sort_unstable();
        Ok(Some((slots, best)))
    }

    /// The index's mapping and the in-memory index of the documents (for their highlighting).
    pub(crate) fn memory(&self) -> (&Mapping, &tantivy::Index) {
        (&self.mapping, &self.index)
    }

    /// The in-memory documents were added in slot order, into one segment.
    fn slot_of(&self, doc: DocId) -> u32 {
        doc
    }

    /// The candidates: stored queries whose extracted terms the documents hold, or whose
    /// terms could not be extracted.
    fn candidates(&self, extracted: tantivy::schema::Field) -> Box<dyn Query> {
        let mut terms: Vec<String> = self
            .docs
            .iter()
            .flat_map(|d| self.mapping.document_terms(d))
            .collect();
        terms.sort();
        terms.dedup();
        terms.push(ANY.to_string());
        let should = terms
            .iter()
            .map(|t| -> (Occur, Box<dyn Query>) {
                (
                    Occur::Should,
                    Box::new(TermQuery::new(
                        Term::from_field_text(extracted, t),
                        IndexRecordOption::Basic,
                    )),
                )
            })
            .collect();
        Box::new(BooleanQuery::new(should))
    }
}

/// Keeps the candidates whose stored query matches, scored by it. Each distinct stored query
/// of a segment is run once.
#[derive(Debug)]
struct PercolateFn(Arc<Percolated>, Option<crate::dsl::doc_script::ErrorSlot>);

impl DocFn for PercolateFn {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        struct Bound {
            percolated: Arc<Percolated>,
            queries: Option<tantivy::columnar::BytesColumn>,
            seen: HashMap<u64, Option<Score>>,
            buf: Vec<u8>,
            errors: Option<crate::dsl::doc_script::ErrorSlot>,
        }
        impl SegmentFn for Bound {
            fn eval(&mut self, doc: DocId, _: Score) -> Option<Score> {
                let column = self.queries.as_ref()?;
                let ord = column.term_ords(doc).next()?;
                if let Some(known) = self.seen.get(&ord) {
                    return *known;
                }
                self.buf.clear();
                column.ord_to_bytes(ord, &mut self.buf).ok()?;
                // A stored query that cannot run fails the search, never silently matching
                // nothing.
                let score = match self
                    .percolated
                    .compile(&self.buf)
                    .and_then(|q| self.percolated.matches(q.as_ref()))
                {
                    Ok(found) => found.map(|(_, s)| s),
                    Err(e) => {
                        if let Some(slot) = &self.errors {
                            let mut first = slot.lock().unwrap_or_else(|p| p.into_inner());
                            first.get_or_insert(format!("a stored percolator query: {e}"));
                        }
                        None
                    }
                };
                self.seen.insert(ord, score);
                score
            }
        }
        Ok(Box::new(Bound {
            queries: reader.fast_fields().bytes(&self.0.field)?,
            percolated: self.0.clone(),
            seen: HashMap::new(),
            buf: Vec::new(),
            errors: self.1.clone(),
        }))
    }
}

impl QueryCompiler<'_> {
    pub(crate) fn percolate(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let percolated = Percolated::build(self.mapping, body)?;
        let extracted = match self.mapping.field(&percolated.field) {
            Some(FieldRef::Mapped(f)) => f.second.expect("a percolator has its extracted terms"),
            _ => unreachable!("checked by build"),
        };
        let candidates = percolated.candidates(extracted);
        Ok(Box::new(FnQuery::new(
            candidates,
            Arc::new(PercolateFn(
                Arc::new(percolated),
                self.script_errors.clone(),
            )),
        )))
    }
}
