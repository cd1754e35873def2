//! The embedded backend: in-process, no server to install. Documents and search run on
//! tantivy; key-value operations on an in-memory sharded store.

mod index;
mod kv;
mod mapping;
mod query;

pub use index::EmbeddedIndex;
pub use kv::KvStore;

use super::{Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload};
use crate::ops::{IndexSpec, KvCommand, OpSpec};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use tantivy::query::Query;

#[derive(Default)]
pub struct EmbeddedBackend {
    state: Arc<State>,
}

#[derive(Default)]
struct State {
    indices: RwLock<HashMap<String, Arc<EmbeddedIndex>>>,
    kv: KvStore,
}

/// What a client runs per call. Index handles are looked up once per task, not per call.
pub enum Prepared {
    CreateIndex(Vec<IndexSpec>),
    DeleteIndex(Vec<String>),
    Refresh(Vec<String>),
    Bulk(Arc<EmbeddedIndex>),
    Search { index: Arc<EmbeddedIndex>, query: Box<dyn Query>, size: usize },
    GetDocument { index: Arc<EmbeddedIndex>, id: String },
    Kv(KvCommand),
    /// The operation can never succeed (e.g. its index does not exist); every call fails so.
    Fails(OpError),
    Nothing,
}

impl EmbeddedBackend {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn index(&self, name: &str) -> Option<Arc<EmbeddedIndex>> {
        self.state.indices.read().unwrap_or_else(|p| p.into_inner()).get(name).cloned()
    }

    fn index_or_fail(&self, name: &str) -> Result<Arc<EmbeddedIndex>, Prepared> {
        self.index(name).ok_or_else(|| {
            Prepared::Fails(OpError::new(ErrorKind::NotFound, format!("no such index `{name}` (is there a create-index task before this one?)")))
        })
    }
}

impl Backend for EmbeddedBackend {
    type Client = EmbeddedClient;
    type Prepared = Prepared;

    fn info(&self) -> BackendInfo {
        let mut details = serde_json::Map::new();
        details.insert("engine".into(), "tantivy".into());
        details.insert("storage".into(), "ram".into());
        BackendInfo { kind: "embedded".into(), version: format!("runner {} / tantivy 0.27", env!("CARGO_PKG_VERSION")), details }
    }

    async fn connect(&self) -> Result<EmbeddedClient, OpError> {
        Ok(EmbeddedClient { state: self.state.clone() })
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        let prepared = match op {
            OpSpec::CreateIndex(specs) => Prepared::CreateIndex(specs.clone()),
            OpSpec::DeleteIndex(names) => Prepared::DeleteIndex(names.clone()),
            OpSpec::Refresh(names) => Prepared::Refresh(names.clone()),
            OpSpec::Bulk(spec) => match self.index_or_fail(&spec.index) {
                Ok(index) => Prepared::Bulk(index),
                Err(fails) => fails,
            },
            OpSpec::Search(spec) => match self.index_or_fail(&spec.index) {
                Ok(index) => match index.compile(&spec.body) {
                    Ok((query, size)) => Prepared::Search { index, query, size },
                    Err(e) => return Err(e),
                },
                Err(fails) => fails,
            },
            OpSpec::GetDocument { index, id } => match self.index_or_fail(index) {
                Ok(index) => Prepared::GetDocument { index, id: id.clone() },
                Err(fails) => fails,
            },
            OpSpec::Kv(spec) => Prepared::Kv(spec.command),
            OpSpec::Sleep(_) => Prepared::Nothing,
        };
        Ok(prepared)
    }
}

pub struct EmbeddedClient {
    state: Arc<State>,
}

impl EmbeddedClient {
    fn create_indices(&self, specs: &[IndexSpec]) -> Result<Outcome, OpError> {
        for spec in specs {
            let index = EmbeddedIndex::create(&spec.name, &spec.body)?;
            let mut map = self.state.indices.write().unwrap_or_else(|p| p.into_inner());
            if map.contains_key(&spec.name) {
                return Err(OpError::new(ErrorKind::BadRequest, format!("index `{}` already exists (add a delete-index before it, e.g. in the task's reset)", spec.name)));
            }
            map.insert(spec.name.clone(), Arc::new(index));
        }
        Ok(Outcome { units: 1, ..Outcome::default() })
    }

    fn with_indices(&self, names: &[String], f: impl Fn(&EmbeddedIndex) -> Result<(), OpError>) -> Result<Outcome, OpError> {
        for name in names {
            let index = self.state.indices.read().unwrap_or_else(|p| p.into_inner()).get(name).cloned();
            let index = index.ok_or_else(|| OpError::new(ErrorKind::NotFound, format!("no such index `{name}`")))?;
            f(&index)?;
        }
        Ok(Outcome { units: 1, ..Outcome::default() })
    }

    fn kv(&self, command: KvCommand, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let Payload::Keys { keys, key_size, value } = payload else {
            return Err(OpError::new(ErrorKind::Internal, "key-value operation without keys"));
        };
        let mut missing = 0;
        for key in keys.chunks_exact(*key_size) {
            match command {
                KvCommand::Get => missing += u64::from(self.state.kv.get(key).is_none()),
                KvCommand::Put => self.state.kv.put(key, value),
                KvCommand::Delete => missing += u64::from(!self.state.kv.delete(key)),
            }
        }
        // A miss is an answer, not an error (redis-benchmark counts it as a request too);
        // `hits` counts keys found by gets and deletes.
        let found = if command == KvCommand::Put { 0 } else { (keys.len() / key_size) as u64 - missing };
        Ok(Outcome { units: 1, hits: found, failed_items: 0, requests: (keys.len() / key_size) as u64 })
    }
}

impl BackendClient for EmbeddedClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Search { index, query, size } => index.search(query.as_ref(), *size),
            Prepared::Kv(command) => self.kv(*command, payload),
            Prepared::Bulk(index) => match payload {
                // Indexing is heavy CPU work: let tokio move other clients off this thread.
                Payload::Documents { body, .. } => tokio::task::block_in_place(|| index.bulk(body)),
                _ => Err(OpError::new(ErrorKind::Internal, "bulk without documents")),
            },
            Prepared::GetDocument { index, id } => index.get(id),
            Prepared::CreateIndex(specs) => tokio::task::block_in_place(|| self.create_indices(specs)),
            Prepared::DeleteIndex(names) => {
                let mut map = self.state.indices.write().unwrap_or_else(|p| p.into_inner());
                // Deleting an index that is not there is not an error: resets start from any state.
                names.iter().for_each(|n| {
                    map.remove(n);
                });
                Ok(Outcome { units: 1, ..Outcome::default() })
            }
            Prepared::Refresh(names) => tokio::task::block_in_place(|| self.with_indices(names, EmbeddedIndex::refresh)),
            Prepared::Fails(e) => Err(e.clone()),
            Prepared::Nothing => Ok(Outcome { units: 1, ..Outcome::default() }),
        }
    }
}
