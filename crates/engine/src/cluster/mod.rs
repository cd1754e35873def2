//! The engine's cluster-level state behind one facade, [`Engine`]: its indices, and the
//! aliases, templates, data streams and ingest pipelines around them.

pub(crate) mod aliases;
mod bulk;
pub(crate) mod templates;
pub(crate) mod terms_lookup;

use crate::error::{Error, ErrorKind};
use crate::index::EmbeddedIndex;
use crate::kv::KvStore;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// The engine: its indices and the cluster-level state around them. Cloning shares it.
#[derive(Default, Clone)]
pub struct Engine {
    pub(crate) state: Arc<State>,
}

#[derive(Default)]
pub(crate) struct State {
    pub(crate) indices: RwLock<HashMap<String, Arc<EmbeddedIndex>>>,
    pub(crate) kv: KvStore,
    /// Scrolls opened through the REST API.
    pub(crate) scrolls: std::sync::Mutex<crate::search::scroll::Scrolls>,
    /// Points in time opened through the REST API.
    pub(crate) pits: std::sync::Mutex<crate::search::pit::Pits>,
    pub(crate) templates: RwLock<templates::Templates>,
    /// Data streams, each with the template it was created from (its index has its name).
    pub(crate) data_streams: RwLock<std::collections::BTreeMap<String, String>>,
    pub(crate) pipelines: RwLock<crate::ingest::Pipelines>,
    pub(crate) aliases: RwLock<aliases::Aliases>,
    /// Tasks handed out (`wait_for_completion=false`): each done before its id is answered,
    /// so an id up to this count is a completed task.
    pub(crate) tasks_issued: std::sync::atomic::AtomicU64,
    /// Cluster settings as last put (`persistent`, `transient`); they change nothing here.
    pub(crate) cluster_settings: RwLock<serde_json::Value>,
    /// Where indices live on disk; None keeps them in RAM. Last, so that it is removed after
    /// the indices in it are closed (fields drop in order).
    pub(crate) disk: Option<crate::index::storage::EngineDir>,
}

/// How often the refresh schedule looks for indices whose interval has passed.
const REFRESH_TICK: std::time::Duration = std::time::Duration::from_millis(100);

/// The running refresh schedule; dropping it stops it.
pub struct RefreshSchedule {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for RefreshSchedule {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Why an index could not be created.
pub enum CreateError {
    Exists,
    Mapping(String),
}

impl State {
    /// Creates an index with the matching templates applied under its body.
    pub(crate) fn create_index(
        &self,
        name: &str,
        body: &serde_json::Value,
    ) -> Result<(), CreateError> {
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
            let now = chrono::Utc::now();
            for (alias, b) in m {
                let alias = &crate::names_math::resolve(alias, now)
                    .map_err(CreateError::Mapping)?
                    .into_owned();
                crate::names::check_alias_name(alias).map_err(CreateError::Mapping)?;
                let target = aliases::AliasTarget::parse(b, &[])
                    .map_err(|m| CreateError::Mapping(format!("{m} in alias [{alias}]")))?;
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
    pub(crate) fn remove_indices<'n>(&self, names: impl Iterator<Item = &'n str>) {
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
        storage: crate::index::storage::EngineStorage,
        home: &std::path::Path,
    ) -> std::io::Result<Self> {
        let disk = match storage {
            crate::index::storage::EngineStorage::Disk => {
                Some(crate::index::storage::EngineDir::create(home)?)
            }
            crate::index::storage::EngineStorage::Ram => None,
        };
        Ok(Engine {
            state: Arc::new(State {
                disk,
                ..State::default()
            }),
        })
    }

    /// Starts refreshing indices as Elasticsearch schedules refreshes (`index.refresh_interval`,
    /// search-idle indices left to their next search), in a thread that ends when the engine
    /// is dropped or the handle is.
    pub fn schedule_refreshes(&self) -> RefreshSchedule {
        let state = Arc::downgrade(&self.state);
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stopped = stop.clone();
        let thread = std::thread::Builder::new()
            .name("engine-refresh".into())
            .spawn(move || {
                while !stopped.load(std::sync::atomic::Ordering::Relaxed) {
                    std::thread::sleep(REFRESH_TICK);
                    let Some(state) = state.upgrade() else { return };
                    let indices: Vec<Arc<EmbeddedIndex>> = state
                        .indices
                        .read()
                        .unwrap_or_else(|p| p.into_inner())
                        .values()
                        .cloned()
                        .collect();
                    drop(state);
                    for index in indices {
                        // A failed refresh is tried again next tick; an explicit `_refresh`
                        // reports the error.
                        let _ = index.refresh_if_due();
                    }
                }
            })
            .ok();
        RefreshSchedule { stop, thread }
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
                        .filter(|(n, _)| crate::names::index_pattern_matches(name, n))
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

    /// Every index a search of `names` reads, each with the filter its aliases add.
    pub fn search_targets(
        &self,
        names: &str,
    ) -> Result<Vec<(Arc<EmbeddedIndex>, Option<serde_json::Value>)>, Error> {
        self.state.search_targets(names)
    }

    /// Runs bulk items, calling `done` with each item's index, verb, id and result.
    pub fn bulk<'a>(
        &self,
        index: Option<&Arc<EmbeddedIndex>>,
        pipeline: Option<&str>,
        items: impl Iterator<Item = Result<crate::bulk::Item<'a>, crate::bulk::Malformed>>,
        done: impl FnMut(
            &str,
            crate::bulk::Verb,
            Option<&str>,
            Result<crate::index::Written, crate::bulk::ItemError>,
        ),
    ) -> Result<(), crate::bulk::Malformed> {
        self.state.bulk(index, pipeline, items, done)
    }

    /// The key-value store.
    pub fn kv(&self) -> &KvStore {
        &self.state.kv
    }
}
