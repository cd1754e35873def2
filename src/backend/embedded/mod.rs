//! The embedded backend: in-process, no server to install. Documents and search run on
//! tantivy; key-value operations on an in-memory sharded store.

pub(crate) mod aggs;
mod aliases;
mod bulk;
mod command;
mod datemath;
mod dates;
mod dynamic;
mod fetch;
mod functions;
mod geo;
pub(crate) mod index;
mod ingest;
mod keywords;
mod kv;
mod mapping;
mod nested;
mod query;
mod query_string;
mod ranges;
mod rest;
mod scoring;
pub(crate) mod search;
pub(crate) mod sort;
pub mod storage;
mod templates;

pub use command::StoreCommand;
pub use index::EmbeddedIndex;
pub use kv::KvStore;
pub use rest::{RestRequest, RestResponse, COMPATIBLE_VERSION};

use super::{Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload};
use crate::ops::{IndexSpec, KvCommand, OpSpec};
use command::Found;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

#[derive(Default)]
pub struct EmbeddedBackend {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    indices: RwLock<HashMap<String, Arc<EmbeddedIndex>>>,
    kv: KvStore,
    /// Scrolls opened through the REST API (`runner serve`).
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
}

impl State {
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

enum CreateError {
    Exists,
    Mapping(String),
}

/// One request of a raw-request operation, for the engine's REST layer.
#[derive(Debug)]
pub struct RawPrepared {
    method: String,
    path: String,
    query: String,
    body: Vec<u8>,
    poll: Option<crate::ops::poll::Poll>,
}

/// What a client runs per call. Index handles are looked up once per task, not per call.
pub enum Prepared {
    CreateIndex(Vec<IndexSpec>),
    DeleteIndex(Vec<String>),
    Refresh(Vec<String>),
    ForceMerge {
        indices: Vec<String>,
        max_num_segments: u64,
    },
    /// One node, always green: only a missing index makes health fail.
    ClusterHealth(Option<String>),
    IndexDocument {
        index: Arc<EmbeddedIndex>,
        id: Option<String>,
        source: String,
    },
    RawRequest {
        requests: Vec<RawPrepared>,
        ignore_status: crate::ops::StatusSet,
    },
    /// The request's index; none when the corpus's own action lines name it.
    Bulk {
        index: Option<Arc<EmbeddedIndex>>,
        /// The task's ingest pipeline (Rally's bulk `pipeline`).
        pipeline: Option<String>,
    },
    Search {
        index: Arc<EmbeddedIndex>,
        plan: search::SearchPlan,
        paging: Option<crate::ops::Paging>,
        /// The filter the aliases searched through add (to bodies drawn per call too).
        filter: Option<serde_json::Value>,
    },
    GetDocument {
        index: Arc<EmbeddedIndex>,
        id: String,
    },
    /// Commands come with each call's keys; a custom command is interpreted per call.
    Kv(Option<Arc<StoreCommand>>),
    /// The operation can never succeed (e.g. its index does not exist); every call fails so.
    Fails(OpError),
    Nothing,
}

impl EmbeddedBackend {
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
        Ok(EmbeddedBackend {
            state: Arc::new(State {
                disk,
                ..State::default()
            }),
        })
    }

    pub fn index(&self, name: &str) -> Option<Arc<EmbeddedIndex>> {
        self.state
            .indices
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    fn index_or_fail(&self, name: &str) -> Result<Arc<EmbeddedIndex>, Prepared> {
        self.index(name).ok_or_else(|| {
            Prepared::Fails(OpError::new(
                ErrorKind::NotFound,
                format!("no such index `{name}` (is there a create-index task before this one?)"),
            ))
        })
    }
}

impl Backend for EmbeddedBackend {
    type Client = EmbeddedClient;
    type Prepared = Prepared;

    /// The engine's indices (docs, segments). Its CPU is this process's, which the driver's
    /// own telemetry reports already.
    async fn server_snapshot(
        &self,
    ) -> Option<Result<crate::backend::server_stats::ServerSnapshot, String>> {
        let stats = self.rest(&RestRequest {
            method: "GET",
            path: "/_nodes/stats",
            query: "",
            body: b"",
        });
        let v: serde_json::Value = serde_json::from_slice(&stats.body).ok()?;
        let mut snapshot = crate::backend::server_stats::from_node_stats(&v);
        snapshot.counters.remove("cpu_ms");
        Some(Ok(snapshot))
    }

    fn info(&self) -> BackendInfo {
        let mut details = serde_json::Map::new();
        details.insert("engine".into(), "tantivy".into());
        let storage = if self.state.disk.is_some() {
            "disk"
        } else {
            "ram"
        };
        details.insert("storage".into(), storage.into());
        BackendInfo {
            kind: "embedded".into(),
            version: format!("runner {} / tantivy 0.27", env!("CARGO_PKG_VERSION")),
            details,
        }
    }

    fn cannot_run(op: &OpSpec) -> Option<String> {
        match op {
            OpSpec::Search(spec) => search::unsupported_body(&spec.body),
            // A mapping the engine cannot build is named before the race, not at create-index.
            OpSpec::CreateIndex(indices) => indices
                .iter()
                .find_map(|i| index::EmbeddedIndex::check_mapping(&i.name, &i.body).err()),
            OpSpec::RawRequest(spec) => spec
                .requests
                .iter()
                .find(|r| !rest::answers(&r.method, &r.path))
                .map(|r| format!("the embedded engine has no endpoint for {} {} (it answers the part of Elasticsearch's REST API that `runner serve` lists)", r.method, r.path)),
            OpSpec::Kv(spec) => spec
                .custom
                .as_ref()
                .and_then(|c| StoreCommand::compile(c).err())
                .map(|e| e.message),
            _ => None,
        }
    }

    async fn connect(&self) -> Result<EmbeddedClient, OpError> {
        Ok(EmbeddedClient {
            state: self.state.clone(),
            args: Vec::new(),
            last_item_failure: None,
        })
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        let prepared = match op {
            OpSpec::CreateIndex(specs) => Prepared::CreateIndex(specs.clone()),
            OpSpec::DeleteIndex(names) => Prepared::DeleteIndex(names.clone()),
            OpSpec::Refresh(names) => Prepared::Refresh(names.clone()),
            OpSpec::ForceMerge {
                indices,
                max_num_segments,
            } => Prepared::ForceMerge {
                indices: indices.clone(),
                max_num_segments: max_num_segments.unwrap_or(1),
            },
            OpSpec::ClusterHealth(spec) => Prepared::ClusterHealth(spec.index.clone()),
            OpSpec::IndexDocument { index, id, body } => match self.index_or_fail(index) {
                Ok(index) => Prepared::IndexDocument {
                    index,
                    id: id.clone(),
                    source: body.to_string(),
                },
                Err(fails) => fails,
            },
            OpSpec::RawRequest(spec) => Prepared::RawRequest {
                requests: spec
                    .requests
                    .iter()
                    .map(|r| RawPrepared {
                        method: r.method.clone(),
                        path: r.path.clone(),
                        query: crate::ops::query_string(&r.request_params),
                        body: r
                            .body
                            .as_ref()
                            .map(|b| b.to_string().into_bytes())
                            .unwrap_or_default(),
                        poll: r.poll,
                    })
                    .collect(),
                ignore_status: spec.ignore_status,
            },
            OpSpec::Bulk(spec) if spec.index.is_empty() => Prepared::Bulk {
                index: None,
                pipeline: spec.pipeline.clone(),
            },
            OpSpec::Bulk(spec) => match self.index_or_fail(&spec.index) {
                Ok(index) => Prepared::Bulk {
                    index: Some(index),
                    pipeline: spec.pipeline.clone(),
                },
                Err(fails) => fails,
            },
            OpSpec::Search(spec) => match self.state.search_target(&spec.index) {
                // Wildcards that match nothing: each call is an empty answer, as there.
                Ok(None) => Prepared::Nothing,
                Ok(Some((index, filter))) => {
                    let plan = match &filter {
                        Some(f) => index.compile(&aliases::with_filter(&spec.body, f))?,
                        None => index.compile(&spec.body)?,
                    };
                    Prepared::Search {
                        index,
                        plan,
                        paging: spec.paging,
                        filter,
                    }
                }
                Err(e) if e.kind == ErrorKind::NotFound => Prepared::Fails(OpError::new(
                    ErrorKind::NotFound,
                    format!(
                        "{} (is there a create-index task before this one?)",
                        e.message
                    ),
                )),
                Err(e) => Prepared::Fails(e),
            },
            OpSpec::GetDocument { index, id } => match self.index_or_fail(index) {
                Ok(index) => Prepared::GetDocument {
                    index,
                    id: id.clone(),
                },
                Err(fails) => fails,
            },
            OpSpec::Kv(spec) => Prepared::Kv(match &spec.custom {
                Some(c) => Some(Arc::new(StoreCommand::compile(c)?)),
                None => None,
            }),
            OpSpec::Sleep(_) => Prepared::Nothing,
        };
        Ok(prepared)
    }
}

/// A search compiled against the mapping its index is created with in this race, before the
/// race: what the mapping decides (a text field aggregated, a geo_point sorted on, a field the
/// mapping lacks) is named then, rather than failing every call.
pub fn cannot_run_on(op: &OpSpec, created: &[crate::ops::IndexSpec]) -> Option<String> {
    let OpSpec::Search(spec) = op else {
        return None;
    };
    let created = created.iter().rev().find(|i| i.name == spec.index)?;
    // A mapping the engine cannot build is named by the create-index's own check.
    let mapping = mapping::Mapping::from_index_body(&created.body).ok()?;
    let index = tantivy::Index::create_in_ram(mapping.schema.clone());
    search::compile_search(&spec.index, &mapping, &index, &spec.body)
        .err()
        .map(|e| e.message)
}

pub struct EmbeddedClient {
    state: Arc<State>,
    /// A custom command's arguments, rebuilt per key in place.
    args: Vec<Vec<u8>>,
    last_item_failure: Option<String>,
}

impl EmbeddedClient {
    fn create_indices(&self, specs: &[IndexSpec]) -> Result<Outcome, OpError> {
        for spec in specs {
            self.state.create_index(&spec.name, &spec.body).map_err(|e| match e {
                CreateError::Exists => OpError::new(ErrorKind::BadRequest, format!("index `{}` already exists (add a delete-index before it, e.g. in the task's reset)", spec.name)),
                CreateError::Mapping(m) => OpError::new(ErrorKind::BadRequest, m),
            })?;
        }
        Ok(Outcome {
            units: 1,
            ..Outcome::default()
        })
    }

    fn with_indices(
        &self,
        names: &[String],
        f: impl Fn(&EmbeddedIndex) -> Result<(), OpError>,
    ) -> Result<Outcome, OpError> {
        for name in names.iter().flat_map(|n| n.split(',')) {
            // `_all` and wildcards name every matching index (none is not an error, as
            // Elasticsearch allows no indices for them); a plain name must exist.
            let matched: Vec<Arc<EmbeddedIndex>> = {
                let map = self.state.indices.read().unwrap_or_else(|p| p.into_inner());
                if name == "_all" || name.contains('*') {
                    map.iter()
                        .filter(|(n, _)| crate::ops::index_pattern_matches(name, n))
                        .map(|(_, i)| i.clone())
                        .collect()
                } else {
                    let one = map.get(name).cloned().ok_or_else(|| {
                        OpError::new(ErrorKind::NotFound, format!("no such index `{name}`"))
                    })?;
                    vec![one]
                }
            };
            for index in &matched {
                f(index)?;
            }
        }
        Ok(Outcome {
            units: 1,
            ..Outcome::default()
        })
    }

    fn bulk(
        &mut self,
        index: Option<&Arc<EmbeddedIndex>>,
        pipeline: Option<&str>,
        body: &str,
        pairs: crate::corpus::Pairs<'_>,
    ) -> Result<Outcome, OpError> {
        let mut outcome = Outcome::default();
        let first_failure = &mut self.last_item_failure;
        self.state
            .bulk(
                index,
                pipeline,
                bulk::batch_items(body, pairs),
                |name, verb, id, result| match result {
                    Ok(_) => outcome.units += 1,
                    Err(e) => {
                        outcome.failed_items += 1;
                        if first_failure.is_none() {
                            *first_failure = Some(format!(
                                "{} {name}/{}: {} {}",
                                verb.as_str(),
                                id.unwrap_or("-"),
                                e.kind,
                                e.reason
                            ));
                        }
                    }
                },
            )
            .map_err(|m| {
                OpError::new(
                    ErrorKind::BadRequest,
                    format!("bulk body line {}: {}", m.line, m.message),
                )
            })?;
        Ok(outcome)
    }

    fn kv(
        &mut self,
        custom: Option<&StoreCommand>,
        payload: &Payload<'_>,
    ) -> Result<Outcome, OpError> {
        let Payload::Keys {
            keys,
            key_size,
            value,
            commands,
        } = payload
        else {
            return Err(OpError::new(
                ErrorKind::Internal,
                "key-value operation without keys",
            ));
        };
        let store = &self.state.kv;
        let mut found = 0;
        for (key, command) in keys.chunks_exact(*key_size).zip(commands.iter()) {
            // A miss is an answer, not an error (redis-benchmark counts it as a request too);
            // `hits` counts keys found by gets and deletes.
            let hit = match command {
                KvCommand::Get => store.get(key).is_some(),
                KvCommand::Put => {
                    store.put(key, value);
                    false
                }
                KvCommand::Delete => store.delete(key),
                KvCommand::Incr => store
                    .incr(key, 1)
                    .map(|_| false)
                    .map_err(|e| OpError::new(ErrorKind::ErrorReply, e))?,
                KvCommand::Command => match custom {
                    Some(c) => c.run(store, key, value, &mut self.args)? == Found::Yes,
                    None => {
                        return Err(OpError::new(
                            ErrorKind::Internal,
                            "custom command without its definition",
                        ))
                    }
                },
            };
            found += u64::from(hit);
        }
        Ok(Outcome {
            units: 1,
            hits: found,
            failed_items: 0,
            requests: commands.len() as u64,
        })
    }
}

impl BackendClient for EmbeddedClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Search {
                index,
                paging: None,
                filter,
                ..
            } if matches!(payload, Payload::Body(_)) => {
                // A body drawn from bindings: parsed and compiled as the call's own.
                let Payload::Body(body) = payload else {
                    unreachable!("matched above")
                };
                let body: serde_json::Value = serde_json::from_slice(body).map_err(|e| {
                    OpError::new(
                        ErrorKind::BadRequest,
                        format!("the drawn body is not JSON: {e}"),
                    )
                })?;
                let body = match filter {
                    Some(f) => aliases::with_filter(&body, f),
                    None => body,
                };
                index.search(&index.compile(&body)?)
            }
            Prepared::Search {
                index,
                plan,
                paging: None,
                ..
            } => index.search(plan),
            Prepared::Search {
                index,
                plan,
                paging: Some(paging),
                ..
            } => tokio::task::block_in_place(|| index.paged(plan, *paging)),
            Prepared::Kv(custom) => self.kv(custom.as_deref(), payload),
            Prepared::Bulk { index, pipeline } => match payload {
                // Indexing is heavy CPU work: let tokio move other clients off this thread.
                Payload::Documents { body, pairs, .. } => tokio::task::block_in_place(|| {
                    self.bulk(index.as_ref(), pipeline.as_deref(), body, *pairs)
                }),
                _ => Err(OpError::new(ErrorKind::Internal, "bulk without documents")),
            },
            Prepared::GetDocument { index, id } => index.get(id),
            Prepared::CreateIndex(specs) => {
                tokio::task::block_in_place(|| self.create_indices(specs))
            }
            Prepared::DeleteIndex(names) => {
                // Deleting an index that is not there is not an error: resets start from any state.
                self.state.remove_indices(names.iter().map(String::as_str));
                Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                })
            }
            Prepared::Refresh(names) => {
                tokio::task::block_in_place(|| self.with_indices(names, EmbeddedIndex::refresh))
            }
            Prepared::ForceMerge {
                indices,
                max_num_segments,
            } => tokio::task::block_in_place(|| {
                self.with_indices(indices, |i| i.force_merge(*max_num_segments))
            }),
            Prepared::ClusterHealth(index) => self.with_indices(index.as_slice(), |_| Ok(())),
            Prepared::IndexDocument { index, id, source } => {
                index.index_one(id.as_deref(), source).map(|_| Outcome {
                    units: 1,
                    ..Outcome::default()
                })
            }
            Prepared::RawRequest {
                requests,
                ignore_status,
            } => {
                let backend = EmbeddedBackend {
                    state: self.state.clone(),
                };
                for r in requests {
                    // A body drawn from bindings replaces the (one) request's.
                    let body = match payload {
                        Payload::Body(b) => b,
                        _ => &r.body[..],
                    };
                    let request = RestRequest {
                        method: &r.method,
                        path: &r.path,
                        query: &r.query,
                        body,
                    };
                    let response = match r.poll {
                        None => tokio::task::block_in_place(|| backend.rest(&request)),
                        Some(poll) => backend.poll(&request, poll).await?,
                    };
                    if ignore_status.contains(response.status) {
                        continue;
                    }
                    if let Some(kind) = crate::backend::status_error(response.status) {
                        return Err(OpError::new(
                            kind,
                            format!(
                                "{} {}: {}",
                                r.method,
                                r.path,
                                String::from_utf8_lossy(&response.body)
                            ),
                        ));
                    }
                }
                Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                })
            }
            Prepared::Fails(e) => Err(e.clone()),
            Prepared::Nothing => Ok(Outcome {
                units: 1,
                ..Outcome::default()
            }),
        }
    }

    fn item_failure_reason(&mut self) -> Option<String> {
        self.last_item_failure.take()
    }
}
