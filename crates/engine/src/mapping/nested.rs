//! `nested` fields. Each object of a nested field is indexed twice: flattened into its
//! document (as before: sorts and `exists` read it there), and as a document of its own in a
//! store beside the index, one store per nested path, as Elasticsearch's hidden nested
//! documents are. A nested query runs on that store, so the fields it reads must match
//! inside one object; its matches are joined back to their documents by the document's
//! `_seq_no`, which each object's document carries (a new version of a document gets a new
//! `_seq_no`, and its objects are written again).
//!
//! Only top-level nested paths (not inside another nested field) have a store; a nested
//! field inside one is an object of its store.

use super::{Mapping, UnsupportedType};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use tantivy::schema::Field;
use tantivy::{Searcher, SearcherGeneration, TantivyDocument, Warmer};

/// One nested path: its objects' mapping, and the searchers of its store.
#[derive(Debug)]
pub struct NestedMapping {
    /// The nested field's dotted path (`answers`).
    pub path: String,
    pub segments: Vec<String>,
    /// The objects' mapping: fields keep their full names (`answers.date`); `_id` is the
    /// document's and `_seq_no` the document's at the time it was written.
    pub mapping: Mapping,
    /// Each object's place in its document's array, `_nested.offset` of an inner hit.
    pub offset: Field,
    pub views: Arc<Views>,
    /// `include_in_parent` or `include_in_root`: the objects' fields are the document's too.
    pub in_parent: bool,
    /// `index.mapping.nested_objects.limit`: the objects one document may hold, over all its
    /// nested fields.
    pub limit: usize,
}

/// Elasticsearch's default `index.mapping.nested_objects.limit`.
const DEFAULT_LIMIT: usize = 10_000;

/// The index's `index.mapping.nested_objects.limit`, in any of the ways settings are written.
fn objects_limit(body: &Value) -> usize {
    [
        "/settings/index/mapping/nested_objects/limit",
        "/settings/index.mapping.nested_objects.limit",
        "/settings/index/mapping.nested_objects.limit",
        "/settings/mapping/nested_objects/limit",
    ]
    .iter()
    .find_map(|p| body.pointer(p))
    .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
    .map_or(DEFAULT_LIMIT, |n| n as usize)
}

/// Whether a mapping body declares a nested field anywhere.
pub(super) fn has_nested(props: &Map<String, Value>) -> bool {
    props.values().any(|def| {
        def.get("type").and_then(Value::as_str) == Some("nested")
            || def
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(has_nested)
    })
}

/// The top-level nested paths of `props`, with their definitions.
fn nested_paths(
    props: &Map<String, Value>,
    prefix: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Value)>,
) {
    for (name, def) in props {
        prefix.push(name.clone());
        if def.get("type").and_then(Value::as_str) == Some("nested") {
            out.push((prefix.clone(), def.clone()));
        } else if let Some(sub) = def.get("properties").and_then(Value::as_object) {
            nested_paths(sub, prefix, out);
        }
        prefix.pop();
    }
}

/// A nested field's definition as an object's, nested fields inside it made objects.
fn as_object(def: &Value) -> Value {
    match def {
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, v)| match k.as_str() {
                    "type" if v == "nested" => (k.clone(), Value::from("object")),
                    "include_in_parent" | "include_in_root" => (k.clone(), Value::Null),
                    "properties" => (
                        k.clone(),
                        Value::Object(
                            v.as_object()
                                .into_iter()
                                .flatten()
                                .map(|(n, d)| (n.clone(), as_object(d)))
                                .collect(),
                        ),
                    ),
                    _ => (k.clone(), v.clone()),
                })
                .filter(|(_, v)| !v.is_null())
                .collect(),
        ),
        other => other.clone(),
    }
}

impl NestedMapping {
    /// The mappings of every top-level nested path of `props`.
    pub(super) fn all(
        body: &Value,
        props: &Map<String, Value>,
    ) -> Result<Vec<Arc<NestedMapping>>, UnsupportedType> {
        let mut defs = Vec::new();
        nested_paths(props, &mut Vec::new(), &mut defs);
        defs.into_iter()
            .map(|(segments, def)| Self::build(body, segments, &def).map(Arc::new))
            .collect()
    }

    /// The mapping of one nested path's objects, from the index body's.
    pub(super) fn build(
        body: &Value,
        segments: Vec<String>,
        def: &Value,
    ) -> Result<NestedMapping, UnsupportedType> {
        let mut inner = as_object(def);
        for name in segments.iter().rev() {
            let mut props = Map::new();
            props.insert(name.clone(), inner);
            inner = serde_json::json!({ "properties": props });
        }
        let mut mappings = inner;
        if let Some(d) = body.pointer("/mappings/dynamic") {
            mappings["dynamic"] = d.clone();
        }
        let child_body = serde_json::json!({ "mappings": mappings });
        let (mapping, offset) = Mapping::build(&child_body, true)?;
        Ok(NestedMapping {
            path: segments.join("."),
            segments,
            mapping,
            offset: offset.expect("a nested mapping has an offset field"),
            views: Arc::new(Views::default()),
            limit: objects_limit(body),
            in_parent: ["include_in_parent", "include_in_root"]
                .iter()
                .any(|k| def.get(k) == Some(&Value::Bool(true))),
        })
    }

    /// The objects of the document `obj` at this path, each as a document of the store,
    /// added to `out` (which holds those of the document's other nested fields).
    pub fn documents(
        &self,
        obj: &Map<String, Value>,
        id: &str,
        seq_no: u64,
        out: &mut Vec<TantivyDocument>,
    ) -> Result<(), String> {
        let mut objects = Vec::new();
        super::lookup(obj, &self.segments, &mut objects);
        let mut offset = 0u64;
        for value in objects {
            let items: &[Value] = match value {
                Value::Array(a) => a,
                one => std::slice::from_ref(one),
            };
            for item in items {
                if !item.is_object() {
                    continue;
                }
                // Counted over every nested field of the document (`out` holds the others').
                if out.len() >= self.limit {
                    return Err(format!("The number of nested documents has exceeded the allowed limit of [{}]. This limit can be set by changing the [index.mapping.nested_objects.limit] index level setting.", self.limit));
                }
                let mut wrapped = item.clone();
                for name in self.segments.iter().rev() {
                    let mut m = Map::new();
                    m.insert(name.clone(), wrapped);
                    wrapped = Value::Object(m);
                }
                let mut doc = self
                    .mapping
                    .document(&wrapped.to_string(), id)
                    .map_err(|m| format!("nested `{}`: {m}", self.path))?;
                doc.add_u64(self.mapping.seq_no, seq_no);
                doc.add_u64(self.offset, offset);
                out.push(doc);
                offset += 1;
            }
        }
        Ok(())
    }

    /// The object a store document holds, from its stored `_source` (the object wrapped in
    /// its path).
    pub fn object_of(&self, stored: &[u8]) -> Option<Value> {
        let mut v: Value = serde_json::from_slice(stored).ok()?;
        for name in &self.segments {
            v = v.as_object_mut()?.remove(name)?;
        }
        Some(v)
    }
}

/// The store's searchers, each paired with the document searcher of the same refresh, so
/// that a search joins objects and documents of one moment.
#[derive(Default)]
pub struct Views {
    /// The store's index and reader, once the index is created (none while a track is
    /// checked before the race).
    store: OnceLock<(tantivy::Index, tantivy::IndexReader)>,
    /// By the documents' searcher generation: the store's searcher taken as it was warmed.
    paired: Mutex<HashMap<u64, Searcher>>,
    /// An index with the store's schema, for analyzers, when no store exists.
    schema_only: RwLock<Option<tantivy::Index>>,
}

impl std::fmt::Debug for Views {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Views")
    }
}

impl Views {
    /// Sets the store once it is created.
    pub fn attach(&self, index: tantivy::Index, reader: tantivy::IndexReader) {
        let _ = self.store.set((index, reader));
    }

    /// The store's searcher of the same refresh as `documents`. Every searcher of the
    /// index's reader is paired as it is warmed; any other (a percolated document's) has no
    /// objects here.
    pub fn searcher_for(&self, documents: &Searcher) -> Result<Searcher, String> {
        let key = generation_key(documents.generation());
        match self.paired.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            Some(s) => Ok(s.clone()),
            None => Err("a nested query runs on an index's own documents only (not inside a percolator query)".into()),
        }
    }

    /// The index whose analyzers a query on the store's fields uses.
    pub fn index(&self, schema: &tantivy::schema::Schema) -> tantivy::Index {
        if let Some((index, _)) = self.store.get() {
            return index.clone();
        }
        let mut held = self.schema_only.write().unwrap_or_else(|p| p.into_inner());
        held.get_or_insert_with(|| tantivy::Index::create_in_ram(schema.clone()))
            .clone()
    }
}

/// A searcher generation by its segments (random ids) and their deletes: the generation
/// numbers of tantivy's readers each count from 0.
fn generation_key(g: &SearcherGeneration) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    g.segments().hash(&mut h);
    h.finish()
}

impl Warmer for Views {
    fn warm(&self, documents: &Searcher) -> tantivy::Result<()> {
        if let Some((_, reader)) = self.store.get() {
            self.paired
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(generation_key(documents.generation()), reader.searcher());
        }
        Ok(())
    }

    fn garbage_collect(&self, live: &[&SearcherGeneration]) {
        self.paired
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|g, _| live.iter().any(|l| generation_key(l) == *g));
    }
}
