//! The embedded backend: the engine crate in process, no server to install. This adapter
//! turns the runner's operations into engine calls and the engine's answers into outcomes.

mod many;
mod poll;
#[cfg(test)]
mod tests;

pub use engine::storage;
pub use engine::{Engine, RestRequest, RestResponse, COMPATIBLE_VERSION};

use super::{Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload};
use crate::ops::{IndexSpec, KvCommand, OpSpec};
use engine::{CreateError, EmbeddedIndex, Found, StoreCommand};
use std::sync::Arc;

impl From<engine::Error> for OpError {
    fn from(e: engine::Error) -> Self {
        let kind = match e.kind {
            engine::ErrorKind::NotFound => ErrorKind::NotFound,
            engine::ErrorKind::BadRequest
            | engine::ErrorKind::Closed
            | engine::ErrorKind::QueryShard => ErrorKind::BadRequest,
            engine::ErrorKind::Internal => ErrorKind::Internal,
            engine::ErrorKind::ErrorReply => ErrorKind::ErrorReply,
        };
        OpError::new(kind, e.message)
    }
}

#[derive(Default, Clone)]
pub struct EmbeddedBackend {
    engine: Engine,
    /// Refreshes on Elasticsearch's schedule (`index.refresh_interval`), so that a search
    /// sees what was written as it would there; stops with the last clone.
    _refreshes: Option<std::sync::Arc<engine::RefreshSchedule>>,
}

/// One request of a raw-request operation, for the engine's REST layer.
#[derive(Debug)]
pub struct RawPrepared {
    method: String,
    path: String,
    query: String,
    body: Vec<u8>,
    poll: Option<crate::ops::poll::Poll>,
    /// Sent only when the request before it answered 2xx.
    if_found: bool,
    /// Pages in all, each after the first asked with the answer's `cursor`.
    cursor_pages: u64,
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
        plan: engine::SearchPlan,
        paging: Option<engine::Paging>,
        /// The filter the aliases searched through add (to bodies drawn per call too).
        filter: Option<serde_json::Value>,
        /// A body with a terms lookup: looked up and compiled on each call, as Elasticsearch
        /// gets the looked-up document for each search.
        lookups: Option<serde_json::Value>,
    },
    /// A search of several indices, merged as their shards' answers are.
    SearchMany(many::Many),
    GetDocument {
        index: Arc<EmbeddedIndex>,
        id: String,
    },
    /// A vector search: each query vector's search, compiled once.
    VectorSearch {
        index: Arc<EmbeddedIndex>,
        plans: Vec<engine::SearchPlan>,
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
        let engine = Engine::with_storage(storage, home)?;
        Ok(EmbeddedBackend {
            _refreshes: Some(std::sync::Arc::new(engine.schedule_refreshes())),
            engine,
        })
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// A search: compiled once, or per call when its body looks terms up.
    fn prepare_search(&self, spec: &crate::ops::SearchSpec) -> Result<Prepared, OpError> {
        let target = match self.engine.search_targets(&spec.index) {
            Ok(all) if all.len() > 1 => return many::prepare(spec, all),
            Ok(mut all) => Ok(all.pop()),
            Err(e) => Err(e),
        };
        Ok(match target {
            // Wildcards that match nothing: each call is an empty answer, as there.
            Ok(None) => Prepared::Nothing,
            Ok(Some((index, filter))) => {
                // A body with terms lookups is checked here as if they found nothing, and
                // compiled per call once they are looked up.
                let checked = engine::lookups_emptied(&spec.body);
                let lookups = (checked != spec.body).then(|| spec.body.clone());
                if lookups.is_some() && spec.paging.is_some() {
                    return Ok(Prepared::Fails(OpError::new(
                        ErrorKind::BadRequest,
                        "a paged search (scroll or search_after) with a terms lookup is not run by the embedded backend: its lookups are resolved per search, not per page",
                    )));
                }
                let plan = match &filter {
                    Some(f) => index.compile(&engine::with_alias_filter(&checked, f))?,
                    None => index.compile(&checked)?,
                };
                Prepared::Search {
                    index,
                    plan,
                    paging: spec.paging,
                    filter,
                    lookups,
                }
            }
            Err(e) if e.kind == engine::ErrorKind::NotFound => Prepared::Fails(OpError::new(
                ErrorKind::NotFound,
                format!(
                    "{} (is there a create-index task before this one?)",
                    e.message
                ),
            )),
            Err(e) => Prepared::Fails(e.into()),
        })
    }

    /// A vector search's searches, one compiled per query vector.
    fn prepare_vectors(&self, spec: &crate::ops::VectorSearchSpec) -> Result<Prepared, OpError> {
        Ok(match self.engine.search_target(&spec.index) {
            Ok(Some((index, filter))) => {
                let plans = (0..spec.queries.vectors.len())
                    .map(|i| {
                        let body = spec.body(i);
                        match &filter {
                            Some(f) => index.compile(&engine::with_alias_filter(&body, f)),
                            None => index.compile(&body),
                        }
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Prepared::VectorSearch { index, plans }
            }
            Ok(None) => Prepared::Fails(OpError::new(
                ErrorKind::NotFound,
                format!("no index matches `{}`", spec.index),
            )),
            Err(e) => Prepared::Fails(e.into()),
        })
    }

    pub fn index(&self, name: &str) -> Option<Arc<EmbeddedIndex>> {
        self.engine.index(name)
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
        let stats = self.engine.rest(&RestRequest {
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
        let storage = if self.engine.on_disk() { "disk" } else { "ram" };
        details.insert("storage".into(), storage.into());
        BackendInfo {
            kind: "embedded".into(),
            version: format!("runner {} / tantivy 0.27", env!("CARGO_PKG_VERSION")),
            details,
        }
    }

    fn cannot_run(op: &OpSpec) -> Option<String> {
        match op {
            OpSpec::Search(spec) => engine::unsupported_search(&spec.body),
            OpSpec::VectorSearch(spec) => engine::unsupported_search(&spec.body(0)).or_else(|| {
                match spec.truth {
                    crate::ops::vector::TruthSource::Exact => {
                        engine::unsupported_search(&spec.exact_variant().body(0))
                    }
                    _ => None,
                }
            }),
            // A mapping the engine cannot build is named before the race, not at create-index.
            OpSpec::CreateIndex(indices) => indices
                .iter()
                .find_map(|i| EmbeddedIndex::check_mapping(&i.name, &i.body).err()),
            OpSpec::RawRequest(spec) => spec.requests.iter().find_map(|r| {
                if !engine::rest::answers(&r.method, &r.path) {
                    return Some(format!("the embedded engine has no endpoint for {} {} (it answers the part of Elasticsearch's REST API that `runner serve` lists)", r.method, r.path));
                }
                // An ES|QL query outside the engine's subset is named before the race.
                let esql = r.method == "POST" && r.path.trim_end_matches('/') == "/_query";
                match (esql, &r.body) {
                    (true, Some(body)) => engine::esql::check(body).err(),
                    _ => None,
                }
            }),
            OpSpec::Kv(spec) => spec
                .custom
                .as_ref()
                .and_then(|c| StoreCommand::compile(c.clone()).err())
                .map(|e| e.message),
            _ => None,
        }
    }

    async fn connect(&self) -> Result<EmbeddedClient, OpError> {
        Ok(EmbeddedClient {
            engine: self.engine.clone(),
            last_ids: Vec::new(),
            args: Vec::new(),
            last_item_failure: None,
        })
    }

    fn embedded_engine(&self) -> Option<Engine> {
        Some(self.engine.clone())
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        let prepared = match op {
            OpSpec::Python(_) => {
                return Err(OpError::new(ErrorKind::BadRequest, super::PYTHON_RUNS_IT))
            }
            OpSpec::CreateIndex(specs) => Prepared::CreateIndex(specs.clone()),
            OpSpec::DeleteIndex(spec) => Prepared::DeleteIndex(spec.names.clone()),
            OpSpec::Refresh { indices, .. } => Prepared::Refresh(indices.clone()),
            // The engine merges before it answers: nothing to poll.
            OpSpec::ForceMerge {
                indices,
                max_num_segments,
                poll: _,
            } => Prepared::ForceMerge {
                indices: indices.clone(),
                // -1 (Elasticsearch's default) and none: the engine's choice, one segment.
                max_num_segments: max_num_segments.filter(|n| *n > 0).map_or(1, |n| n as u64),
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
                        // The engine keeps no `action.destructive_requires_name`: a wildcard
                        // delete needs no lift here.
                        if_found: r.if_found,
                        cursor_pages: r.cursor_pages,
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
            OpSpec::VectorSearch(spec) => self.prepare_vectors(spec)?,
            OpSpec::Search(spec) => self.prepare_search(spec)?,
            OpSpec::GetDocument { index, id } => match self.index_or_fail(index) {
                Ok(index) => Prepared::GetDocument {
                    index,
                    id: id.clone(),
                },
                Err(fails) => fails,
            },
            OpSpec::Kv(spec) => Prepared::Kv(match &spec.custom {
                Some(c) => Some(Arc::new(StoreCommand::compile(c.clone())?)),
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
    let (index, body) = match op {
        OpSpec::Search(spec) => (&spec.index, spec.body.clone()),
        OpSpec::VectorSearch(spec) => (&spec.index, spec.body(0)),
        _ => return None,
    };
    let created = created.iter().rev().find(|i| &i.name == index)?;
    engine::check_search_against(index, &created.body, &body)
}

pub struct EmbeddedClient {
    engine: Engine,
    /// The last vector search's hit ids, whose recall is checked.
    last_ids: Vec<String>,
    /// A custom command's arguments, rebuilt per key in place.
    args: Vec<Vec<u8>>,
    last_item_failure: Option<String>,
}

impl EmbeddedClient {
    /// A raw request's calls in order to the engine's REST layer (polled ones until done); a
    /// status it does not ignore is an error of its kind.
    async fn raw_requests(
        &self,
        requests: &[RawPrepared],
        ignore_status: crate::ops::StatusSet,
        payload: &Payload<'_>,
    ) -> Result<Outcome, OpError> {
        let backend = EmbeddedBackend {
            engine: self.engine.clone(),
            _refreshes: None,
        };
        let mut found = true;
        for r in requests {
            if r.if_found && !found {
                continue;
            }
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
            let mut response = match r.poll {
                None => tokio::task::block_in_place(|| backend.engine.rest(&request)),
                Some(poll) => backend.poll(&request, poll).await?,
            };
            for page in 1..r.cursor_pages {
                if response.status >= 300 {
                    break;
                }
                let cursor = serde_json::from_slice::<serde_json::Value>(&response.body)
                    .ok()
                    .and_then(|v| v.get("cursor").cloned())
                    .filter(serde_json::Value::is_string)
                    .ok_or_else(|| {
                        let left = r.cursor_pages - page;
                        OpError::new(ErrorKind::Unmet, format!("{} {}: Result set has been exhausted before all pages have been fetched, {left} page(s) remaining.", r.method, r.path))
                    })?;
                let next = serde_json::json!({ "cursor": cursor }).to_string();
                let request = RestRequest {
                    body: next.as_bytes(),
                    ..request
                };
                response = tokio::task::block_in_place(|| backend.engine.rest(&request));
            }
            found = (200..300).contains(&response.status);
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

    fn create_indices(&self, specs: &[IndexSpec]) -> Result<Outcome, OpError> {
        for spec in specs {
            self.engine.create_index(&spec.name, &spec.body).map_err(|e| match e {
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
        f: impl Fn(&EmbeddedIndex) -> Result<(), engine::Error>,
    ) -> Result<Outcome, OpError> {
        for name in names {
            for index in &self.engine.matching_indices(name)? {
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
        self.engine
            .bulk(
                index,
                pipeline,
                batch_items(body, pairs),
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
        let store = self.engine.kv();
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
            requests: commands.len() as u64,
            ..Outcome::default()
        })
    }
}

impl BackendClient for EmbeddedClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Search { .. } => self.search(op, payload),
            Prepared::SearchMany(many) => many.call(payload),
            Prepared::VectorSearch { index, plans } => {
                let Payload::Vector(i) = payload else {
                    return Err(OpError::new(
                        ErrorKind::Internal,
                        "a vector search without its query",
                    ));
                };
                let plan = plans.get(*i).ok_or_else(|| {
                    OpError::new(ErrorKind::Internal, format!("no query vector {i}"))
                })?;
                self.last_ids.clear();
                Ok(searched(index.search_ids(plan, &mut self.last_ids)?))
            }
            Prepared::Kv(custom) => self.kv(custom.as_deref(), payload),
            Prepared::Bulk { index, pipeline } => match payload {
                // Indexing is heavy CPU work: let tokio move other clients off this thread.
                Payload::Documents { body, pairs, .. } => tokio::task::block_in_place(|| {
                    self.bulk(index.as_ref(), pipeline.as_deref(), body, *pairs)
                }),
                _ => Err(OpError::new(ErrorKind::Internal, "bulk without documents")),
            },
            Prepared::GetDocument { index, id } => {
                index.get(id)?;
                Ok(Outcome {
                    units: 1,
                    hits: 1,
                    ..Outcome::default()
                })
            }
            Prepared::CreateIndex(specs) => {
                tokio::task::block_in_place(|| self.create_indices(specs))
            }
            Prepared::DeleteIndex(names) => {
                // Deleting an index that is not there is not an error: resets start from any state.
                self.engine.remove_indices(names.iter().map(String::as_str));
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
                index.index_one(id.as_deref(), source)?;
                Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                })
            }
            Prepared::RawRequest {
                requests,
                ignore_status,
            } => self.raw_requests(requests, *ignore_status, payload).await,
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

    fn hits_among(&mut self, truth: &[u64], k: usize) -> Option<u32> {
        Some(
            self.last_ids
                .iter()
                .take(k)
                .filter(|id| {
                    truth
                        .binary_search(&crate::ops::vector::id_hash(id.as_bytes()))
                        .is_ok()
                })
                .count() as u32,
        )
    }

    fn last_hit_ids(&mut self, out: &mut Vec<String>) -> bool {
        out.clone_from(&self.last_ids);
        true
    }
}

/// A search's outcome: one operation, its total hits.
fn searched(total_hits: u64) -> Outcome {
    Outcome {
        units: 1,
        hits: total_hits,
        ..Outcome::default()
    }
}

/// A corpus batch's (action, document) pairs as the engine's bulk items.
pub fn batch_items<'a>(
    body: &'a str,
    pairs: crate::corpus::Pairs<'a>,
) -> impl Iterator<Item = Result<engine::bulk::Item<'a>, engine::bulk::Malformed>> + 'a {
    pairs.iter(body).map(|p| {
        Ok(engine::bulk::Item {
            verb: p.verb,
            index: p.index,
            id: p.id,
            body: (p.verb != engine::bulk::Verb::Delete).then_some(p.document),
            pipeline: None,
            pre: Default::default(),
            require_alias: None,
        })
    })
}

impl EmbeddedClient {
    /// One search call: a drawn body or one with terms lookups compiled now, else the
    /// prepared plan, whole or page by page.
    fn search(&self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Search {
                index,
                paging: None,
                filter,
                ..
            } if matches!(payload, Payload::Body(_)) => {
                search_drawn(&self.engine, index, filter.as_ref(), payload)
            }
            Prepared::Search {
                index,
                paging: None,
                filter,
                lookups: Some(body),
                ..
            } => search_body(&self.engine, index, filter.as_ref(), body.clone()),
            Prepared::Search {
                index,
                plan,
                paging: None,
                ..
            } => Ok(searched(index.search(plan)?)),
            Prepared::Search {
                index,
                plan,
                paging: Some(paging),
                ..
            } => tokio::task::block_in_place(|| {
                let read = index.paged(plan, *paging)?;
                Ok(Outcome {
                    units: read.pages,
                    hits: read.total_hits,
                    ..Outcome::default()
                })
            }),
            _ => Err(OpError::new(ErrorKind::Internal, "not a search")),
        }
    }
}

/// A search whose body was drawn for this call (bindings): parsed and compiled as its own.
fn search_drawn(
    engine: &Engine,
    index: &EmbeddedIndex,
    filter: Option<&serde_json::Value>,
    payload: &Payload<'_>,
) -> Result<Outcome, OpError> {
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
    search_body(engine, index, filter, body)
}

/// One search compiled for this call: its terms lookups resolved first.
fn search_body(
    engine: &Engine,
    index: &EmbeddedIndex,
    filter: Option<&serde_json::Value>,
    mut body: serde_json::Value,
) -> Result<Outcome, OpError> {
    engine.resolve_terms_lookups(&mut body)?;
    let body = match filter {
        Some(f) => engine::with_alias_filter(&body, f),
        None => body,
    };
    Ok(searched(index.search(&index.compile(&body)?)?))
}
