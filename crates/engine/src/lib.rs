//! An Elasticsearch-compatible engine in process: indices on tantivy with Elasticsearch's
//! mappings, query DSL, aggregations, aliases, templates, data streams and ingest pipelines,
//! behind the REST API's request and answer shapes; and an in-memory key-value store.
//!
//! It knows nothing of tracks, races or measurements: the runner's embedded backend and
//! `runner serve` are thin layers over [`Engine`], [`EmbeddedIndex`] and [`rest`].

pub mod aggs;
mod aliases;
pub mod bulk;
mod command;
mod datemath;
mod dates;
mod dynamic;
mod error;
mod fetch;
mod functions;
mod geo;
pub mod index;
mod ingest;
mod keywords;
pub mod kv;
mod mapping;
pub mod names;
mod nested;
mod query;
mod query_string;
mod ranges;
pub mod rest;
mod scoring;
pub mod search;
pub mod sort;
pub mod storage;
mod templates;
mod util;

pub use aliases::with_filter as with_alias_filter;
pub use command::{ArgTemplate, Found, StoreCommand};
pub use error::{Error, ErrorKind};
pub use index::EmbeddedIndex;
pub use kv::KvStore;
pub use rest::{RestRequest, RestResponse, COMPATIBLE_VERSION};
pub use search::{PageBy, Paged, Paging, SearchPlan};

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The engine: its indices and the cluster-level state around them. Cloning shares it.
#[derive(Default, Clone)]
pub struct Engine {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    indices: RwLock<HashMap<String, Arc<EmbeddedIndex>>>,
    kv: KvStore,
    /// Scrolls opened through the REST API.
    scrolls: std::sync::Mutex<rest::Scrolls>,
    templates: RwLock<templates::Templates>,
    /// Data streams, each with the template it was created from (its index has its name).
    data_streams: RwLock<std::collections::BTreeMap<String, String>>,
    pipelines: RwLock<ingest::Pipelines>,
    aliases: RwLock<aliases::Aliases>,
    /// Cluster settings as last put (`persistent`, `transient`); they change nothing here.
    cluster_settings: RwLock<serde_json::Value>,
    /// Where indices live on disk; None keeps them in RAM. Last, so that it is removed after
    /// the indices in it are closed (fields drop in order).
    disk: Option<storage::EngineDir>,
}

/// Why an index could not be created.
pub enum CreateError {
    Exists,
    Mapping(String),
}

impl State {
    /// Creates an index with the matching templates applied under its body.
    fn create_index(&self, name: &str, body: &serde_json::Value) -> Result<(), CreateError> {
        let body = self
            .templates
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .apply(name, body);
        if self
            .indices
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(name)
        {
            return Err(CreateError::Exists);
        }
        let dir = match &self.disk {
            Some(engine) => Some(engine.index_dir(name).map_err(|e| {
                CreateError::Mapping(format!("index `{name}`: cannot create its directory: {e}"))
            })?),
            None => None,
        };
        // The body's aliases, checked before anything is made.
        let mut aliases = Vec::new();
        if let Some(serde_json::Value::Object(m)) = body.get("aliases") {
            for (alias, b) in m {
                let target = aliases::AliasTarget::parse(b)
                    .map_err(|m| CreateError::Mapping(format!("alias `{alias}`: {m}")))?;
                aliases.push((alias.clone(), target));
            }
        }
        let index = EmbeddedIndex::create_in(name, &body, dir)
            .map_err(|e| CreateError::Mapping(e.message))?;
        let mut map = self.indices.write().unwrap_or_else(|p| p.into_inner());
        if map.contains_key(name) {
            return Err(CreateError::Exists);
        }
        map.insert(name.to_string(), Arc::new(index));
        let mut all = self.aliases.write().unwrap_or_else(|p| p.into_inner());
        for (alias, target) in aliases {
            all.add(&alias, name, target);
        }
        Ok(())
    }

    /// Removes indices (and the data streams they are), leaving the others.
    fn remove_indices<'n>(&self, names: impl Iterator<Item = &'n str>) {
        let mut map = self.indices.write().unwrap_or_else(|p| p.into_inner());
        let mut streams = self.data_streams.write().unwrap_or_else(|p| p.into_inner());
        let mut aliases = self.aliases.write().unwrap_or_else(|p| p.into_inner());
        for n in names {
            map.remove(n);
            streams.remove(n);
            aliases.remove_index(n);
        }
    }
}

impl Engine {
    /// An engine keeping its indices in RAM.
    pub fn new() -> Self {
        Self::default()
    }

    /// An engine keeping its indices as `storage` says, on disk under `home/engine/`.
    pub fn with_storage(
        storage: storage::EngineStorage,
        home: &std::path::Path,
    ) -> std::io::Result<Self> {
        let disk = match storage {
            storage::EngineStorage::Disk => Some(storage::EngineDir::create(home)?),
            storage::EngineStorage::Ram => None,
        };
        Ok(Engine {
            state: Arc::new(State {
                disk,
                ..State::default()
            }),
        })
    }

    /// Whether indices live on disk (else in RAM).
    pub fn on_disk(&self) -> bool {
        self.state.disk.is_some()
    }

    pub fn index(&self, name: &str) -> Option<Arc<EmbeddedIndex>> {
        self.state
            .indices
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    /// Creates an index from a create-index body, with the matching templates under it.
    pub fn create_index(&self, name: &str, body: &serde_json::Value) -> Result<(), CreateError> {
        self.state.create_index(name, body)
    }

    /// Deletes indices (a name that is not there is no error).
    pub fn remove_indices<'n>(&self, names: impl Iterator<Item = &'n str>) {
        self.state.remove_indices(names)
    }

    /// The indices `names` reach: `_all` and wildcards every match (none is no error, as
    /// Elasticsearch allows no indices for them); a plain name must exist.
    pub fn matching_indices(&self, names: &str) -> Result<Vec<Arc<EmbeddedIndex>>, Error> {
        let map = self.state.indices.read().unwrap_or_else(|p| p.into_inner());
        let mut out = Vec::new();
        for name in names.split(',') {
            if name == "_all" || name.contains('*') {
                out.extend(
                    map.iter()
                        .filter(|(n, _)| names::index_pattern_matches(name, n))
                        .map(|(_, i)| i.clone()),
                );
            } else {
                let one = map.get(name).cloned().ok_or_else(|| {
                    Error::new(ErrorKind::NotFound, format!("no such index `{name}`"))
                })?;
                out.push(one);
            }
        }
        Ok(out)
    }

    /// What a search of `names` reads: one index and the filter its aliases add; None when
    /// only wildcards matching nothing were given.
    pub fn search_target(
        &self,
        names: &str,
    ) -> Result<Option<(Arc<EmbeddedIndex>, Option<serde_json::Value>)>, Error> {
        self.state.search_target(names)
    }

    /// Runs bulk items, calling `done` with each item's index, verb, id and result.
    pub fn bulk<'a>(
        &self,
        index: Option<&Arc<EmbeddedIndex>>,
        pipeline: Option<&str>,
        items: impl Iterator<Item = Result<bulk::Item<'a>, bulk::Malformed>>,
        done: impl FnMut(&str, bulk::Verb, Option<&str>, Result<(String, bulk::Done), bulk::ItemError>),
    ) -> Result<(), bulk::Malformed> {
        self.state.bulk(index, pipeline, items, done)
    }

    /// The key-value store.
    pub fn kv(&self) -> &KvStore {
        &self.state.kv
    }
}

/// Why a search body cannot run here, named before any index exists.
pub fn unsupported_search(body: &serde_json::Value) -> Option<String> {
    search::unsupported_body(body)
}

/// A search compiled against the mapping its index is created with (`index_body`), before
/// that index exists: what the mapping decides (a text field aggregated, a geo_point sorted
/// on, a field the mapping lacks) is named then.
pub fn check_search_against(
    index: &str,
    index_body: &serde_json::Value,
    search_body: &serde_json::Value,
) -> Option<String> {
    // A mapping the engine cannot build is named by the create-index's own check.
    let mapping = mapping::Mapping::from_index_body(index_body).ok()?;
    let tantivy_index = tantivy::Index::create_in_ram(mapping.schema.clone());
    search::compile_search(index, &mapping, &tantivy_index, search_body)
        .err()
        .map(|e| e.message)
}
