//! The stores of an index's nested objects (see [`crate::mapping::nested`]): one tantivy
//! index per top-level nested path, written with its documents and refreshed with them.

use super::internal;
use crate::error::Error;
use crate::mapping::nested::NestedMapping;
use std::sync::{Arc, RwLock};
use tantivy::{Index, IndexWriter, ReloadPolicy, TantivyDocument, Term};

/// Indexing memory of a store's one writer thread (tantivy's least is 15 MB).
const STORE_WRITER_BUDGET: usize = 32 * 1024 * 1024;

pub(super) struct NestedStore {
    pub nested: Arc<NestedMapping>,
    writer: RwLock<IndexWriter>,
    reader: tantivy::IndexReader,
}

impl NestedStore {
    /// The store of one path, in `dir` (beside the index's own files) or in RAM.
    pub fn create(
        nested: &Arc<NestedMapping>,
        position: usize,
        dir: Option<&std::path::Path>,
    ) -> Result<Self, Error> {
        let schema = nested.mapping.schema.clone();
        let index = match dir {
            Some(d) => {
                // By position: a field's name is no file name.
                let d = d.join(format!("nested-{position}"));
                std::fs::create_dir_all(&d).map_err(internal)?;
                Index::create_in_dir(&d, schema).map_err(internal)?
            }
            None => Index::create_in_ram(schema),
        };
        let writer = index
            .writer_with_num_threads(1, STORE_WRITER_BUDGET)
            .map_err(internal)?;
        let reader: tantivy::IndexReader = index
            .reader_builder()
            .reload_policy(ReloadPolicy::Manual)
            .try_into()
            .map_err(internal)?;
        nested.views.attach(index, reader.clone());
        Ok(NestedStore {
            nested: nested.clone(),
            writer: RwLock::new(writer),
            reader,
        })
    }

    /// Replaces the objects of document `id` (none when it is deleted).
    pub fn write(&self, id: &str, replace: bool, docs: Vec<TantivyDocument>) -> Result<(), Error> {
        let writer = self.writer.read().unwrap_or_else(|p| p.into_inner());
        if replace {
            writer.delete_term(Term::from_field_text(self.nested.mapping.id, id));
        }
        for doc in docs {
            writer.add_document(doc).map_err(internal)?;
        }
        Ok(())
    }

    /// Commits and reloads, before the documents' reader reloads: each documents' searcher
    /// is paired with the store's searcher of the same refresh as it is warmed.
    pub fn refresh(&self) -> Result<(), Error> {
        let mut writer = self.writer.write().unwrap_or_else(|p| p.into_inner());
        writer.commit().map_err(internal)?;
        self.reader.reload().map_err(internal)
    }

    pub fn objects(&self) -> u64 {
        self.reader.searcher().num_docs()
    }
}
