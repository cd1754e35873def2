//! Each segment's vectors and graph, per vector field: read from the field's column and built
//! when a new searcher first sees the segment (a refresh's new segment, a merge's result), as
//! Lucene writes a segment's graph with the segment; kept beside the segment's files when the
//! index is on disk, and dropped with the segment.

use super::hnsw::{Hnsw, Visited};
use super::points::Points;
use super::spec::VectorSpec;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use tantivy::index::SegmentId;
use tantivy::{DocId, Searcher, SearcherGeneration, SegmentReader, Warmer};

/// One segment's vectors of one field.
pub struct SegmentVectors {
    pub points: Points,
    /// Node → document.
    pub docs: Vec<DocId>,
    /// Document → node (`u32::MAX`: the document has no vector).
    node_of: Vec<u32>,
    /// None for a `flat` field, or one not indexed: searched by a scan.
    pub graph: Option<Hnsw>,
}

impl SegmentVectors {
    pub fn node(&self, doc: DocId) -> Option<u32> {
        self.node_of
            .get(doc as usize)
            .copied()
            .filter(|n| *n != u32::MAX)
    }

    pub fn heap_bytes(&self) -> usize {
        self.points.heap_bytes()
            + (self.docs.capacity() + self.node_of.capacity()) * 4
            + self.graph.as_ref().map_or(0, Hnsw::heap_bytes)
    }
}

/// The vector fields of one index and their per-segment data.
pub struct VectorFields {
    /// (field name, its spec), in the mapping's order.
    fields: Vec<(String, Arc<VectorSpec>)>,
    /// The index's directory: graphs are kept there (None: in RAM only).
    dir: OnceLock<PathBuf>,
    cache: RwLock<HashMap<(SegmentId, usize), Arc<SegmentVectors>>>,
    /// One build at a time per (segment, field): a search arriving during a build waits.
    building: Mutex<()>,
}

impl std::fmt::Debug for VectorFields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorFields")
            .field("fields", &self.fields.len())
            .finish()
    }
}

/// Graphs of fewer points than this are built by one thread: quick anyway, and the same graph
/// on every run (threads inserting side by side link nodes in an order that varies).
const ONE_THREAD_BELOW: usize = 20_000;

fn threads(points: usize) -> usize {
    if points < ONE_THREAD_BELOW {
        return 1;
    }
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 4)
}

impl VectorFields {
    pub fn new(fields: Vec<(String, Arc<VectorSpec>)>) -> VectorFields {
        VectorFields {
            fields,
            dir: OnceLock::new(),
            cache: RwLock::new(HashMap::new()),
            building: Mutex::new(()),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// Keeps graphs in `dir` (the index's directory).
    pub fn keep_in(&self, dir: &Path) {
        let _ = self.dir.set(dir.to_path_buf());
    }

    /// The position of a vector field, by name.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|(n, _)| n == name)
    }

    /// Memory held by vectors and graphs, for `_stats`.
    pub fn heap_bytes(&self) -> usize {
        self.cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .map(|s| s.heap_bytes())
            .sum()
    }

    /// A segment's vectors of field `field`: cached, read from the graph file, or built.
    pub fn segment(
        &self,
        reader: &SegmentReader,
        field: usize,
    ) -> tantivy::Result<Arc<SegmentVectors>> {
        let key = (reader.segment_id(), field);
        if let Some(s) = self
            .cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(s.clone());
        }
        let _one = self.building.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = self
            .cache
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
        {
            return Ok(s.clone());
        }
        let (name, spec) = &self.fields[field];
        let built = Arc::new(self.load(reader, field, name, spec)?);
        self.cache
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, built.clone());
        Ok(built)
    }

    fn graph_file(&self, segment: SegmentId, field: usize) -> Option<PathBuf> {
        self.dir
            .get()
            .map(|d| d.join(format!("{}.v{field}.hnsw", segment.uuid_string())))
    }

    fn load(
        &self,
        reader: &SegmentReader,
        field: usize,
        name: &str,
        spec: &VectorSpec,
    ) -> tantivy::Result<SegmentVectors> {
        let max_doc = reader.max_doc();
        let mut node_of = vec![u32::MAX; max_doc as usize];
        let mut docs = Vec::new();
        let mut data = Vec::new();
        if let Some(column) = reader.fast_fields().bytes(name)? {
            // The column's dictionary holds each distinct vector once, in term order.
            let mut by_ord: Vec<f32> = Vec::with_capacity(column.num_terms() * spec.dims);
            let mut terms = column.dictionary().stream()?;
            while terms.advance() {
                let key = terms.key();
                if key.len() != spec.dims * 4 {
                    return Err(tantivy::TantivyError::InternalError(format!(
                        "vector field `{name}`: a stored vector has {} bytes, not {}",
                        key.len(),
                        spec.dims * 4
                    )));
                }
                by_ord.extend(
                    key.chunks_exact(4)
                        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
                );
            }
            for doc in 0..max_doc {
                if let Some(ord) = column.term_ords(doc).next() {
                    let at = ord as usize * spec.dims;
                    node_of[doc as usize] = docs.len() as u32;
                    docs.push(doc);
                    data.extend_from_slice(&by_ord[at..at + spec.dims]);
                }
            }
        }
        let points = Points::new(spec, data);
        let graph = match (spec.indexed && spec.options.graph, docs.is_empty()) {
            (true, false) => Some(self.graph(reader.segment_id(), field, &points, spec)),
            _ => None,
        };
        Ok(SegmentVectors {
            points,
            docs,
            node_of,
            graph,
        })
    }

    /// The segment's graph: read back from its file, or built (and written when on disk).
    fn graph(&self, segment: SegmentId, field: usize, points: &Points, spec: &VectorSpec) -> Hnsw {
        let file = self.graph_file(segment, field);
        if let Some(g) = file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|bytes| Hnsw::from_bytes(&bytes, points.len()))
        {
            return g;
        }
        let g = Hnsw::build(
            points,
            spec.options.m,
            spec.options.ef_construction,
            threads(points.len()),
        );
        if let Some(f) = file {
            // Written aside and renamed: a torn file is never read as a graph.
            let tmp = f.with_extension("hnsw.tmp");
            if std::fs::write(&tmp, g.to_bytes()).is_ok() {
                let _ = std::fs::rename(&tmp, &f);
            }
        }
        g
    }

    /// Scratch for a search over a segment of `n` vectors, reused by the thread.
    pub fn with_visited<R>(n: usize, f: impl FnOnce(&mut Visited) -> R) -> R {
        thread_local! {
            static VISITED: std::cell::RefCell<Option<Visited>> = const { std::cell::RefCell::new(None) };
        }
        VISITED.with(|v| {
            let mut slot = v.borrow_mut();
            let visited = slot.get_or_insert_with(|| Visited::new(n));
            f(visited)
        })
    }
}

impl Warmer for VectorFields {
    fn warm(&self, searcher: &Searcher) -> tantivy::Result<()> {
        for reader in searcher.segment_readers() {
            for field in 0..self.fields.len() {
                self.segment(reader, field)?;
            }
        }
        Ok(())
    }

    fn garbage_collect(&self, live: &[&SearcherGeneration]) {
        let mut cache = self.cache.write().unwrap_or_else(|p| p.into_inner());
        let gone: Vec<(SegmentId, usize)> = cache
            .keys()
            .filter(|(seg, _)| !live.iter().any(|g| g.segments().contains_key(seg)))
            .copied()
            .collect();
        for key in gone {
            cache.remove(&key);
            if let Some(f) = self.graph_file(key.0, key.1) {
                let _ = std::fs::remove_file(f);
            }
        }
    }
}
