//! Writes: every document carries a `_version` and a `_seq_no`, and a write by id runs
//! Elasticsearch's optimistic concurrency control (`op_type=create`, `if_seq_no` with
//! `if_primary_term`, external versions) under a lock on that id.

use super::{internal, item_internal, merge, stored, EmbeddedIndex, AUTO_ID_LEN};
use crate::bulk::{Done, Item, ItemError, Preconditions, Verb, VersionType};
use crate::error::Error;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use tantivy::collector::TopDocs;
use tantivy::Term;

/// The one primary term of a node that never fails over.
pub const PRIMARY_TERM: u64 = 1;

/// How long a deleted document's version is remembered (Elasticsearch's `index.gc_deletes`).
const GC_DELETES: Duration = Duration::from_secs(60);

/// The longest `_id` Elasticsearch takes, in bytes.
const MAX_ID_BYTES: usize = 512;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DocMeta {
    pub version: u64,
    pub seq_no: u64,
}

/// What a write did, with the version and sequence number it gave the document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub id: String,
    pub done: Done,
    pub meta: DocMeta,
}

/// A document written or deleted by id since the last refresh (deletes kept a while longer,
/// for their versions).
pub(super) enum Live {
    Source { source: Box<str>, meta: DocMeta },
    Deleted { meta: DocMeta, at: Instant },
}

/// A document as a write by id finds it: its source when it exists, and the last version
/// known for the id (a deleted document's too).
struct Current {
    source: Option<String>,
    meta: Option<DocMeta>,
    exists: bool,
}

type LiveMap = HashMap<Box<str>, Live>;

impl EmbeddedIndex {
    /// Runs one bulk action. Documents that do not fit the mapping fail alone, as items of an
    /// Elasticsearch bulk request do.
    pub fn apply(&self, item: &Item) -> Result<Written, ItemError> {
        if self.is_closed() {
            return Err(ItemError::new(
                400,
                "index_closed_exception",
                format!("index [{}] is closed", self.name),
            ));
        }
        let started = Instant::now();
        let result = self.apply_untimed(item);
        if result.is_ok() {
            self.schedule.wrote();
            if item.verb != Verb::Delete {
                self.counters.indexed.record(started);
            }
        }
        result
    }

    fn apply_untimed(&self, item: &Item) -> Result<Written, ItemError> {
        match (item.verb, item.id.as_deref()) {
            (Verb::Index | Verb::Create, None) => {
                let mut id_buf = [0u8; AUTO_ID_LEN];
                let id = self.auto_id(&mut id_buf);
                let mut doc = self.document(id, item.body.unwrap_or("{}").trim())?;
                let meta = DocMeta {
                    version: 1,
                    seq_no: self.next_seq_no(),
                };
                self.stamp(&mut doc, meta);
                let objects = self.nested_docs(id, item.body, meta.seq_no)?;
                let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
                self.put_nested(id, objects, false)?;
                writer.add_document(doc).map_err(item_internal)?;
                // Not kept for realtime gets (a bulk load would hold every source): a get
                // that misses refreshes first, as Elasticsearch's "unsafe" version map does.
                if !self.unrefreshed_appends.load(Ordering::Relaxed) {
                    self.unrefreshed_appends.store(true, Ordering::Relaxed);
                }
                Ok(Written {
                    id: id.to_string(),
                    done: Done::Created,
                    meta,
                })
            }
            (_, Some(id)) => {
                check_id(id)?;
                self.write_by_id(item, id)
            }
            (Verb::Update | Verb::Delete, None) => Err(ItemError::new(
                400,
                "action_request_validation_exception",
                format!(
                    "Validation Failed: 1: id is missing (`{}`);",
                    item.verb.as_str()
                ),
            )),
        }
    }

    /// A write to one id, from reading its current version to making the new one visible to
    /// realtime gets, under the id's lock; the writer lock is taken first, as refresh does.
    fn write_by_id(&self, item: &Item, id: &str) -> Result<Written, ItemError> {
        let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
        let mut live = self.live_shard(id);
        let current = self.current_in(&live, id, item.verb == Verb::Update)?;
        let (source, done) = match item.verb {
            Verb::Update => {
                let next = self.updated_source(id, item.body.unwrap_or("{}"), &current)?;
                check_preconditions(&item.pre, id, &current)?;
                match next {
                    Some(next) => next,
                    None => {
                        // Nothing changed: Elasticsearch's `noop`, with no new version.
                        let meta = current.meta.unwrap_or(DocMeta {
                            version: 1,
                            seq_no: 0,
                        });
                        return Ok(Written {
                            id: id.to_string(),
                            done: Done::Noop,
                            meta,
                        });
                    }
                }
            }
            Verb::Delete => (
                None,
                if current.exists {
                    Done::Deleted
                } else {
                    Done::NotFound
                },
            ),
            Verb::Index | Verb::Create => {
                if current.exists && item.verb == Verb::Create {
                    let v = current.meta.map_or(1, |m| m.version);
                    return Err(conflict(
                        id,
                        format!("document already exists (current version [{v}])"),
                    ));
                }
                let done = if current.exists {
                    Done::Updated
                } else {
                    Done::Created
                };
                (Some(item.body.unwrap_or("{}").trim().to_string()), done)
            }
        };
        check_preconditions(&item.pre, id, &current)?;
        let version = match (item.pre.version, item.pre.version_type) {
            (Some(v), VersionType::External | VersionType::ExternalGte) => v,
            _ => current.meta.map_or(1, |m| m.version + 1),
        };
        let mut doc = match &source {
            Some(s) => Some(self.document(id, s)?),
            None => None,
        };
        let meta = DocMeta {
            version,
            seq_no: self.next_seq_no(),
        };
        let objects = self.nested_docs(id, doc.as_ref().and(source.as_deref()), meta.seq_no)?;
        writer.delete_term(Term::from_field_text(self.mapping.id, id));
        match (&mut doc, source) {
            (Some(doc), Some(source)) => {
                self.stamp(doc, meta);
                live.insert(
                    id.into(),
                    Live::Source {
                        source: source.into(),
                        meta,
                    },
                );
            }
            _ => {
                live.insert(
                    id.into(),
                    Live::Deleted {
                        meta,
                        at: Instant::now(),
                    },
                );
            }
        }
        self.put_nested(id, objects, true)?;
        if let Some(doc) = doc {
            writer.add_document(doc).map_err(item_internal)?;
        }
        Ok(Written {
            id: id.to_string(),
            done,
            meta,
        })
    }

    /// An `update` body applied to the current document: `doc` merged in (objects key by key,
    /// as Elasticsearch does), `upsert` or `doc_as_upsert` when there is none. None when the
    /// merge changes nothing (a noop).
    fn updated_source(
        &self,
        id: &str,
        body: &str,
        current: &Current,
    ) -> Result<Option<(Option<String>, Done)>, ItemError> {
        let bad = |m: String| ItemError::new(400, "x_content_parse_exception", m);
        let body: Value = serde_json::from_str(body)
            .map_err(|e| bad(format!("the update body is not JSON: {e}")))?;
        let Some(doc) = body.get("doc").filter(|d| d.is_object()) else {
            return Err(bad(
                "an update needs a `doc` object (scripts are not supported)".into(),
            ));
        };
        let (merged, done) = match &current.source {
            Some(source) => {
                let before: Value = serde_json::from_str(source)
                    .map_err(|e| bad(format!("the stored document is not JSON: {e}")))?;
                let mut after = before.clone();
                merge(&mut after, doc);
                if after == before && body.get("detect_noop") != Some(&Value::Bool(false)) {
                    return Ok(None);
                }
                (after, Done::Updated)
            }
            None if body.get("doc_as_upsert").and_then(Value::as_bool) == Some(true) => {
                (doc.clone(), Done::Created)
            }
            None => match body.get("upsert") {
                Some(upsert @ Value::Object(_)) => (upsert.clone(), Done::Created),
                _ => {
                    return Err(ItemError::new(
                        404,
                        "document_missing_exception",
                        format!("[{id}]: document missing"),
                    ))
                }
            },
        };
        Ok(Some((Some(merged.to_string()), done)))
    }

    /// The nested objects of a document written under `id`, one list per store; checked
    /// before anything is written, so a bad object fails the document alone.
    fn nested_docs(
        &self,
        id: &str,
        source: Option<&str>,
        seq_no: u64,
    ) -> Result<Vec<Vec<tantivy::TantivyDocument>>, ItemError> {
        if self.nested.is_empty() {
            return Ok(Vec::new());
        }
        let parsed: Option<Value> = source.and_then(|s| serde_json::from_str(s.trim()).ok());
        let obj = parsed.as_ref().and_then(Value::as_object);
        // One list for all paths while they are made, so the limit counts them together.
        let mut all = Vec::new();
        let mut starts = Vec::with_capacity(self.nested.len());
        for store in &self.nested {
            starts.push(all.len());
            if let Some(obj) = obj {
                store
                    .nested
                    .documents(obj, id, seq_no, &mut all)
                    .map_err(|m| ItemError::new(400, "document_parsing_exception", m))?;
            }
        }
        // Split from the back (the last store's first), then put them back in order.
        let mut per_store: Vec<_> = starts.iter().rev().map(|s| all.split_off(*s)).collect();
        per_store.reverse();
        Ok(per_store)
    }

    /// Writes a document's nested objects, replacing its earlier ones.
    fn put_nested(
        &self,
        id: &str,
        docs: Vec<Vec<tantivy::TantivyDocument>>,
        replace: bool,
    ) -> Result<(), ItemError> {
        for (store, docs) in self.nested.iter().zip(docs) {
            store.write(id, replace, docs).map_err(item_internal)?;
        }
        Ok(())
    }

    fn document(&self, id: &str, source: &str) -> Result<tantivy::TantivyDocument, ItemError> {
        self.mapping
            .document(source, id)
            .map_err(|m| ItemError::new(400, "document_parsing_exception", m))
    }

    /// A document's version and sequence number, stored beside its id. Version 1, what nearly
    /// every document of a bulk load has, is stored as its absence (read back as 1).
    fn stamp(&self, doc: &mut tantivy::TantivyDocument, meta: DocMeta) {
        if meta.version != 1 {
            doc.add_u64(self.mapping.version, meta.version);
        }
        doc.add_u64(self.mapping.seq_no, meta.seq_no);
    }

    fn next_seq_no(&self) -> u64 {
        self.seq_no.fetch_add(1, Ordering::Relaxed)
    }

    /// The id as a write finds it, in `live` (the id's locked shard) or among searchable
    /// documents; the source is read only when `with_source`.
    fn current_in(
        &self,
        live: &LiveMap,
        id: &str,
        with_source: bool,
    ) -> Result<Current, ItemError> {
        match live.get(id) {
            Some(Live::Source { source, meta }) => {
                return Ok(Current {
                    source: with_source.then(|| source.to_string()),
                    meta: Some(*meta),
                    exists: true,
                })
            }
            Some(Live::Deleted { meta, .. }) => {
                return Ok(Current {
                    source: None,
                    meta: Some(*meta),
                    exists: false,
                })
            }
            None => {}
        }
        let found = self.searchable(id, with_source).map_err(item_internal)?;
        Ok(match found {
            Some((source, meta)) => Current {
                source: source.map(|b| String::from_utf8_lossy(&b).into_owned()),
                meta: Some(meta),
                exists: true,
            },
            None => Current {
                source: None,
                meta: None,
                exists: false,
            },
        })
    }

    /// The document with this id as of now (written since the last refresh, else searchable),
    /// with its version and sequence number: Elasticsearch's realtime get.
    pub fn current(&self, id: &str) -> Result<Option<(String, DocMeta)>, Error> {
        self.check_open()?;
        match self.live_shard(id).get(id) {
            Some(Live::Source { source, meta }) => return Ok(Some((source.to_string(), *meta))),
            Some(Live::Deleted { .. }) => return Ok(None),
            None => {}
        }
        if self.unrefreshed_appends.load(Ordering::Relaxed) {
            self.refresh()?;
        }
        Ok(self.searchable(id, true)?.map(|(source, meta)| {
            (
                String::from_utf8_lossy(&source.unwrap_or_default()).into_owned(),
                meta,
            )
        }))
    }

    /// The current source of a document, if there is one.
    pub fn current_source(&self, id: &str) -> Result<Option<String>, Error> {
        Ok(self.current(id)?.map(|(s, _)| s))
    }

    /// A searchable document by id: its stored source (when asked) and its version fields.
    fn searchable(
        &self,
        id: &str,
        with_source: bool,
    ) -> Result<Option<(Option<Vec<u8>>, DocMeta)>, Error> {
        let searcher = self.reader.searcher();
        let query = tantivy::query::TermQuery::new(
            Term::from_field_text(self.mapping.id, id),
            tantivy::schema::IndexRecordOption::Basic,
        );
        let top = searcher
            .search(&query, &TopDocs::with_limit(1).order_by_score())
            .map_err(internal)?;
        let Some((_, addr)) = top.first() else {
            return Ok(None);
        };
        let meta = self.meta_at(&searcher, *addr)?;
        let source = match with_source {
            true => Some(self.stored_fields(&searcher, *addr)?.1),
            false => None,
        };
        Ok(Some((source, meta)))
    }

    /// A searchable document's version fields (version 1 where an index predates them).
    pub fn meta_at(
        &self,
        searcher: &tantivy::Searcher,
        addr: tantivy::DocAddress,
    ) -> Result<DocMeta, Error> {
        let (version, seq_no) = self
            .stored
            .version_and_seq_no(searcher, addr, stored::layout(&self.mapping))
            .map_err(internal)?;
        Ok(DocMeta { version, seq_no })
    }

    /// Forgets what a refresh made searchable, keeping deletes for [`GC_DELETES`] so that a
    /// document written again continues its versions.
    pub(super) fn prune_live(&self) {
        for shard in &self.live {
            shard
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .retain(|_, l| matches!(l, Live::Deleted { at, .. } if at.elapsed() < GC_DELETES));
        }
    }
}

fn conflict(id: &str, what: String) -> ItemError {
    ItemError::new(
        409,
        "version_conflict_engine_exception",
        format!("[{id}]: version conflict, {what}"),
    )
}

fn check_id(id: &str) -> Result<(), ItemError> {
    if id.is_empty() {
        return Err(ItemError::new(
            400,
            "illegal_argument_exception",
            "if _id is specified it must not be empty",
        ));
    }
    if id.len() > MAX_ID_BYTES {
        return Err(ItemError::new(
            400,
            "action_request_validation_exception",
            format!(
                "Validation Failed: 1: id [{id}] is too long, must be no longer than {MAX_ID_BYTES} bytes but was: {};",
                id.len()
            ),
        ));
    }
    Ok(())
}

/// Elasticsearch's concurrency checks, against the document as it is now.
fn check_preconditions(pre: &Preconditions, id: &str, current: &Current) -> Result<(), ItemError> {
    let invalid = |m: &str| {
        ItemError::new(
            400,
            "action_request_validation_exception",
            format!("Validation Failed: 1: {m};"),
        )
    };
    match (pre.if_seq_no, pre.if_primary_term) {
        (Some(seq_no), Some(term)) => {
            if pre.version.is_some() {
                return Err(invalid(
                    "compare and write operations can not use versioning",
                ));
            }
            let have = current.meta.filter(|_| current.exists);
            match have {
                None => {
                    return Err(conflict(
                        id,
                        format!("required seqNo [{seq_no}], primary term [{term}] but no document was found"),
                    ))
                }
                Some(m) if m.seq_no != seq_no || term != PRIMARY_TERM => {
                    return Err(conflict(
                        id,
                        format!(
                            "required seqNo [{seq_no}], primary term [{term}]. current document has seqNo [{}] and primary term [{PRIMARY_TERM}]",
                            m.seq_no
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
        (Some(_), None) => return Err(invalid("ifSeqNo is set, but primary term is [0]")),
        (None, Some(t)) => {
            return Err(invalid(&format!(
                "ifSeqNo is unassigned, but primary term is [{t}]"
            )))
        }
        (None, None) => {}
    }
    let Some(wanted) = pre.version else {
        return match pre.version_type {
            VersionType::Internal => Ok(()),
            other => Err(invalid(&format!(
                "illegal version value [-3] for version type [{}]",
                if other == VersionType::External {
                    "EXTERNAL"
                } else {
                    "EXTERNAL_GTE"
                }
            ))),
        };
    };
    let have = current.meta.map(|m| m.version);
    match pre.version_type {
        VersionType::Internal => Err(invalid(
            "internal versioning can not be used for optimistic concurrency control. Please use `if_seq_no` and `if_primary_term` instead",
        )),
        VersionType::External => match have {
            Some(v) if v >= wanted => Err(conflict(
                id,
                format!("current version [{v}] is higher or equal to the one provided [{wanted}]"),
            )),
            _ => Ok(()),
        },
        VersionType::ExternalGte => match have {
            Some(v) if v > wanted => Err(conflict(
                id,
                format!("current version [{v}] is higher than the one provided [{wanted}]"),
            )),
            _ => Ok(()),
        },
    }
}
