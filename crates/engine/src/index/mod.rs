//! One embedded index: a tantivy index with its writer (explicit commit = refresh) and reader,
//! the same layers tantivy itself has.

mod counters;
mod nested;
mod schedule;
pub mod storage;
mod stored;
mod write;

use crate::bulk::Item;
use crate::bulk::ItemError;
use crate::bulk::Verb;
use crate::error::Error;
use crate::error::ErrorKind;
use crate::mapping::Mapping;
pub use counters::TimedCount;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};
use tantivy::{Index, IndexReader, IndexWriter, ReloadPolicy};
use write::Live;
pub use write::{DocMeta, Written, PRIMARY_TERM};

/// Indexing memory for all writer threads together; tantivy needs at least 15 MB a thread.
const WRITER_BUDGET_PER_THREAD: usize = 64 * 1024 * 1024;
/// How often a force-merge lists the segments again when a background merge took some of them.
const MERGE_ATTEMPTS: u32 = 20;

#[derive(Debug, Clone, Copy, Default)]
pub struct IndexStats {
    pub docs: u64,
    pub deleted: u64,
    pub segments: u64,
    pub bytes: u64,
    pub indexed: TimedCount,
    pub refreshes: TimedCount,
    pub merges: TimedCount,
    pub queries: TimedCount,
}

impl std::ops::Add for IndexStats {
    type Output = IndexStats;
    fn add(self, o: IndexStats) -> IndexStats {
        IndexStats {
            docs: self.docs + o.docs,
            deleted: self.deleted + o.deleted,
            segments: self.segments + o.segments,
            bytes: self.bytes + o.bytes,
            indexed: self.indexed + o.indexed,
            refreshes: self.refreshes + o.refreshes,
            merges: self.merges + o.merges,
            queries: self.queries + o.queries,
        }
    }
}

pub struct IndexedAs {
    pub id: String,
}

pub struct EmbeddedIndex {
    pub name: String,
    pub mapping: Mapping,
    /// The `mappings` it was created with (templates applied), as `_mapping` shows them.
    pub mappings: Value,
    pub(crate) index: Index,
    writer: RwLock<IndexWriter>,
    pub(crate) reader: IndexReader,
    next_id: AtomicU64,
    /// The next write's `_seq_no` (one shard: one sequence).
    seq_no: AtomicU64,
    /// Documents with generated ids were added since the last refresh (they are not in
    /// `live`): a realtime get refreshes before it looks.
    unrefreshed_appends: std::sync::atomic::AtomicBool,
    /// Closed by `_close`: searches, gets and writes are refused until `_open`.
    closed: std::sync::atomic::AtomicBool,
    /// The random first bytes of this index's generated ids.
    id_prefix: u64,
    /// Elasticsearch's `index.uuid`: 22 URL-safe base64 characters.
    pub uuid: String,
    /// When it was created, in milliseconds since the epoch (`index.creation_date`).
    pub created_ms: u64,
    /// Documents written by id since the last refresh, so that gets and updates see them at
    /// once, as Elasticsearch's realtime get does; emptied by each refresh.
    live: [Mutex<HashMap<Box<str>, Live>>; LIVE_SHARDS],
    /// Its pipelines and write blocks; read once per bulk item's index switch.
    pub settings: RwLock<IndexSettings>,
    /// Reads hits' `_id` and `_source` without deserialising whole documents.
    stored: stored::StoredFields,
    /// Writes, refreshes, merges and queries, for `_stats`.
    pub(crate) counters: counters::Counters,
    /// The stores of its nested fields' objects, one per top-level nested path.
    nested: Vec<nested::NestedStore>,
    /// When its writes become searchable unasked (`index.refresh_interval`).
    pub(crate) schedule: schedule::Schedule,
    /// The index's directory on disk, removed after the writer and reader are dropped
    /// (fields drop in order); None in RAM.
    _dir: Option<crate::index::storage::OwnedDir>,
}

const LIVE_SHARDS: usize = 16;

/// A generated id's length (15 bytes in base64).
const AUTO_ID_LEN: usize = 20;

/// Seven random-enough bytes per index (the clock, the process and the name hashed), the
/// eighth left for the counter's top byte.
fn random_prefix(name: &str) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write(name.as_bytes());
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.finish() & !0xff
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Internal, e.to_string())
}

fn item_internal(e: impl std::fmt::Display) -> ItemError {
    ItemError::new(500, "exception", e.to_string())
}

/// Merges `patch` into `target`: objects key by key, anything else replaced.
pub(crate) fn merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => merge(existing, v),
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

impl EmbeddedIndex {
    /// Why the engine cannot build this index's mapping, if it cannot.
    pub fn check_mapping(name: &str, body: &Value) -> Result<Mapping, String> {
        Mapping::from_index_body(body).map_err(|u| match &u.why {
            // Elasticsearch's own words, as it says them.
            Some(why) if why.starts_with("Failed to parse mapping") => why.clone(),
            Some(why) => format!("index `{name}`: field `{}`: {why}", u.field),
            None if !crate::mapping::is_elasticsearch_type(&u.kind) => {
                crate::mapping::unknown_type_message(&u.kind, &u.field, false)
            }
            None => format!("index `{name}`: field `{}` has type `{}`, which the embedded backend does not support (text, keyword, long/integer, double/float, boolean, date, geo_point, ip, alias, flattened, object, the range types)", u.field, u.kind),
        })
    }

    /// An index in RAM.
    pub fn create(name: &str, body: &Value) -> Result<EmbeddedIndex, Error> {
        Self::create_in(name, body, None)
    }

    /// An index in `dir` (memory-mapped files), or in RAM when None.
    pub fn create_in(
        name: &str,
        body: &Value,
        dir: Option<crate::index::storage::OwnedDir>,
    ) -> Result<EmbeddedIndex, Error> {
        let mapping = Self::check_mapping(name, body)
            .map_err(|message| Error::new(ErrorKind::BadRequest, message))?;
        let mut settings = IndexSettings::default();
        if let Some(s) = body.get("settings") {
            settings
                .update(s)
                .map_err(|m| Error::new(ErrorKind::BadRequest, format!("index `{name}`: {m}")))?;
        }
        let index = match &dir {
            Some(d) => Index::create_in_dir(d.path(), mapping.schema.clone()).map_err(internal)?,
            None => Index::create_in_ram(mapping.schema.clone()),
        };
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(2)
            .clamp(1, 4);
        let writer = index
            .writer_with_num_threads(threads, threads * WRITER_BUDGET_PER_THREAD)
            .map_err(internal)?;
        let nested = mapping
            .nested
            .iter()
            .enumerate()
            .map(|(i, n)| nested::NestedStore::create(n, i, dir.as_ref().map(|d| d.path())))
            .collect::<Result<Vec<_>, _>>()?;
        let mut warmers = Vec::new();
        if !mapping.vectors.is_empty() {
            // Each new segment's vector graphs are built before a searcher sees it.
            if let Some(d) = &dir {
                mapping.vectors.keep_in(d.path());
            }
            let warmer: std::sync::Arc<dyn tantivy::Warmer> = mapping.vectors.clone();
            warmers.push(std::sync::Arc::downgrade(&warmer));
        }
        for n in &mapping.nested {
            // Each searcher is paired with its nested objects' searcher of the same refresh.
            let warmer: std::sync::Arc<dyn tantivy::Warmer> = n.views.clone();
            warmers.push(std::sync::Arc::downgrade(&warmer));
        }
        let mut reader = index.reader_builder().reload_policy(ReloadPolicy::Manual);
        if !warmers.is_empty() {
            reader = reader.warmers(warmers);
        }
        let reader = reader.try_into().map_err(internal)?;
        let live = std::array::from_fn(|_| Mutex::new(HashMap::new()));
        Ok(EmbeddedIndex {
            name: name.to_string(),
            mapping,
            mappings: body
                .get("mappings")
                .cloned()
                .unwrap_or_else(|| Value::Object(Default::default())),
            index,
            writer: RwLock::new(writer),
            reader,
            next_id: AtomicU64::new(1),
            seq_no: AtomicU64::new(0),
            unrefreshed_appends: std::sync::atomic::AtomicBool::new(false),
            closed: std::sync::atomic::AtomicBool::new(false),
            id_prefix: random_prefix(name),
            uuid: {
                use base64::Engine as _;
                let mut raw = [0u8; 16];
                raw[..8].copy_from_slice(&random_prefix(name).to_be_bytes());
                raw[8..].copy_from_slice(&random_prefix("uuid").to_be_bytes());
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
            },
            created_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            live,
            settings: RwLock::new(settings),
            stored: stored::StoredFields::default(),
            counters: counters::Counters::default(),
            nested,
            schedule: schedule::Schedule::default(),
            _dir: dir,
        })
    }

    /// A generated `_id` as Elasticsearch makes them: 20 URL-safe base64 characters, here from
    /// the index's random prefix and a counter, so it cannot collide with the ids a client
    /// gives ("1", "2", ...) or with another index's.
    fn auto_id<'b>(&self, buf: &'b mut [u8; AUTO_ID_LEN]) -> &'b str {
        use base64::Engine as _;
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut raw = [0u8; 15];
        raw[..8].copy_from_slice(&self.id_prefix.to_be_bytes());
        raw[7..].copy_from_slice(&n.to_be_bytes());
        let written = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode_slice(raw, buf)
            .unwrap_or(0);
        std::str::from_utf8(&buf[..written]).unwrap_or_default()
    }

    fn live_shard(&self, id: &str) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Live>> {
        let h = id.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        self.live[h as usize % LIVE_SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Indexes one document under `id` (replacing a document with that id) or under the next
    /// generated id; returns the id, or why the document does not fit the mapping.
    pub fn index_one(&self, id: Option<&str>, source: &str) -> Result<IndexedAs, Error> {
        let item = Item::new(Verb::Index, id, Some(source));
        self.apply(&item)
            .map(|w| IndexedAs { id: w.id })
            .map_err(|e| {
                Error::new(
                    if e.status == 400 {
                        ErrorKind::BadRequest
                    } else {
                        ErrorKind::Internal
                    },
                    e.reason,
                )
            })
    }

    /// Commits, then merges the searchable segments down to at most `max_segments` (the
    /// smallest ones first), as Elasticsearch's _forcemerge does.
    pub fn force_merge(&self, max_segments: u64) -> Result<(), Error> {
        self.refresh()?;
        let started = std::time::Instant::now();
        let merged = self.merge_to(max_segments);
        self.counters.merges.record(started);
        merged
    }

    fn merge_to(&self, max_segments: u64) -> Result<(), Error> {
        let keep = max_segments.max(1) as usize;
        let mut writer = self.writer.write().unwrap_or_else(|p| p.into_inner());
        // A background merge may take segments listed here before this merge starts (tantivy
        // then finds them gone): list them again, a bounded number of times.
        let mut attempts = 0;
        loop {
            let mut segments = self.index.searchable_segment_metas().map_err(internal)?;
            if segments.len() <= keep {
                break;
            }
            segments.sort_by_key(|m| m.num_docs());
            let merge: Vec<_> = segments[..=segments.len() - keep]
                .iter()
                .map(|m| m.id())
                .collect();
            match writer.merge(&merge).wait() {
                Ok(_) => {
                    writer.commit().map_err(internal)?;
                    break;
                }
                Err(tantivy::TantivyError::InvalidArgument(_)) if attempts < MERGE_ATTEMPTS => {
                    attempts += 1;
                    std::thread::sleep(std::time::Duration::from_millis(20));
                }
                Err(e) => return Err(internal(e)),
            }
        }
        drop(writer);
        self.reader.reload().map_err(internal)
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Closes (`_close`) or opens (`_open`) the index; a close refreshes first, so that
    /// what was written is there when it opens again.
    pub fn set_closed(&self, closed: bool) -> Result<(), Error> {
        if closed {
            self.refresh()?;
        }
        self.closed
            .store(closed, std::sync::atomic::Ordering::Release);
        Ok(())
    }

    /// Refuses a read or write of a closed index, in Elasticsearch's words.
    pub fn check_open(&self) -> Result<(), Error> {
        match self.is_closed() {
            true => Err(Error::new(
                crate::error::ErrorKind::Closed,
                format!("index [{}] is closed", self.name),
            )),
            false => Ok(()),
        }
    }

    /// A hit's `_id` and stored `_source`, as Elasticsearch's fetch phase loads them.
    pub fn stored_fields(
        &self,
        searcher: &tantivy::Searcher,
        addr: tantivy::DocAddress,
    ) -> Result<(String, Vec<u8>), Error> {
        self.stored
            .id_and_source(searcher, addr, stored::layout(&self.mapping))
            .map_err(internal)
    }

    /// Makes everything indexed so far searchable (commit + reader reload).
    pub fn refresh(&self) -> Result<(), Error> {
        // No write runs while the writer is held exclusively, so once the reader sees the
        // commit, every live document is searchable and the live map can go.
        let started = std::time::Instant::now();
        let mut writer = self.writer.write().unwrap_or_else(|p| p.into_inner());
        self.unrefreshed_appends.store(false, Ordering::Relaxed);
        self.schedule.refreshing();
        for store in &self.nested {
            store.refresh()?;
        }
        writer.commit().map_err(internal)?;
        self.reader.reload().map_err(internal)?;
        self.prune_live();
        self.counters.refreshes.record(started);
        Ok(())
    }

    /// A realtime get, as Elasticsearch's: documents written since the last refresh count.
    pub fn get(&self, id: &str) -> Result<(), Error> {
        match self.current_source(id)? {
            Some(source) => {
                std::hint::black_box(source.len());
                Ok(())
            }
            None => Err(Error::new(
                ErrorKind::NotFound,
                format!("document `{id}` not found in index `{}`", self.name),
            )),
        }
    }

    /// What `_stats` reports: searchable and deleted documents, segments, bytes in RAM.
    pub fn stats(&self) -> IndexStats {
        let searcher = self.reader.searcher();
        let segments = searcher.segment_readers();
        IndexStats {
            // As Elasticsearch's: nested objects are documents of their own.
            docs: searcher.num_docs() + self.nested.iter().map(|s| s.objects()).sum::<u64>(),
            deleted: segments
                .iter()
                .map(|s| u64::from(s.num_deleted_docs()))
                .sum(),
            segments: segments.len() as u64,
            bytes: searcher
                .space_usage()
                .map(|u| u.total().get_bytes())
                .unwrap_or(0),
            indexed: self.counters.indexed.read(),
            refreshes: self.counters.refreshes.read(),
            merges: self.counters.merges.read(),
            queries: self.counters.queries.read(),
        }
    }

    /// Documents visible to searches (after the last refresh).
    pub fn searchable_docs(&self) -> u64 {
        self.reader.searcher().num_docs()
    }
}

#[cfg(test)]
impl EmbeddedIndex {
    /// Indexes one document (no id), as a bulk `index` action does.
    pub fn add_for_test(&self, body: &str) {
        self.apply(&Item::new(Verb::Index, None, Some(body)))
            .unwrap();
    }
}

mod settings;
pub use settings::IndexSettings;

#[cfg(test)]
mod tests;
