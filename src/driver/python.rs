//! A leaf the track's Python drives. A param source's params are drawn ahead of each client, in
//! batches, by a feeder task per client: each draw is converted and prepared there, off the
//! measured path, into a bounded queue the client takes its next call from. The first batch is
//! drawn before the step starts. A custom runner's call goes to the client's worker and back.

use crate::backend::{status_error, Backend, ErrorKind, OpError, Outcome};
use crate::ops::{DrawnDialect, OpSpec, PythonSpec};
use crate::python::{Pool, RunnerReply};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One call's input, drawn ahead.
pub enum Call<P> {
    /// A built-in operation, prepared from the drawn params.
    Op(P),
    /// The drawn params of a custom runner, as JSON.
    Runner(String),
}

/// How much a leaf's param source drew, and how long clients waited for it.
#[derive(Default)]
pub struct FeedStats {
    pub drawn: AtomicU64,
    /// Time the feeders spent drawing and converting (the source's own pace).
    pub busy_nanos: AtomicU64,
    /// Calls whose params were not ready when due, and the time clients waited for them.
    pub waits: AtomicU64,
    pub wait_nanos: AtomicU64,
}

impl FeedStats {
    fn add(&self, drawn: usize, started: std::time::Instant) {
        self.drawn.fetch_add(drawn as u64, Ordering::Relaxed);
        self.busy_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

/// The feeds of one leaf: a queue per client of this process, in client order.
pub struct ParamFeeds<P> {
    pub queues: Vec<async_channel::Receiver<Call<P>>>,
    pub stats: Arc<FeedStats>,
    pub source: String,
    error: Arc<Mutex<Option<String>>>,
    _feeders: Vec<super::AbortOnDrop>,
}

impl<P> ParamFeeds<P> {
    /// Why a feeder stopped early: the source raised, drew what cannot run, or its worker died.
    pub fn take_error(&self) -> Option<String> {
        self.error.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// Draws of the first batch; later batches grow to keep the queue full.
const FIRST_BATCH: u64 = 8;
const MAX_BATCH: u64 = 256;
/// What one client's queue may hold, in bytes of drawn params (at least 2 calls).
const QUEUE_BYTES: usize = 16 << 20;

/// Builds the leaf's param source in the workers and starts a feeder per client.
pub async fn start<B: Backend>(
    backend: &Arc<B>,
    pool: &Arc<Pool>,
    spec: &PythonSpec,
    clients: std::ops::Range<u64>,
    total: u64,
) -> Result<ParamFeeds<B::Prepared>, String> {
    let Some(source) = spec.param_source.clone() else {
        return Err("no param source".into());
    };
    let ids: Vec<u64> = clients.collect();
    let sid = pool
        .open_source(&source, &Value::Object(spec.params.clone()), &ids, total)
        .await
        .map_err(|e| e.to_string())?;
    let stats = Arc::new(FeedStats::default());
    let error = Arc::new(Mutex::new(None));
    let converter = Arc::new(Converter {
        runner: spec.runner.is_some(),
        dialect: spec.dialect,
        kind: spec.operation_type.clone(),
        dir: pool.track_dir(),
    });
    let what = Arc::new(format!("param source `{source}`"));
    let mut queues = Vec::with_capacity(ids.len());
    let mut feeders = Vec::with_capacity(ids.len());
    for client in ids {
        let started = std::time::Instant::now();
        let first = pool
            .draw(sid, client, FIRST_BATCH, &what)
            .await
            .map_err(|e| e.to_string())?;
        let bytes: usize = first.params.iter().map(|p| p.get().len()).sum();
        let per_call = bytes / first.params.len().max(1);
        let depth = (QUEUE_BYTES / per_call.max(1))
            .clamp(2, 1024)
            .max(first.params.len());
        let (tx, rx) = async_channel::bounded(depth);
        let mut ended = first.end;
        for raw in &first.params {
            let call = converter.call(backend.as_ref(), raw)?;
            let _ = tx.try_send(call);
        }
        stats.add(first.params.len(), started);
        queues.push(rx);
        if ended {
            continue;
        }
        let (backend, pool, converter) = (backend.clone(), pool.clone(), converter.clone());
        let (stats, error, what) = (stats.clone(), error.clone(), what.clone());
        feeders.push(super::AbortOnDrop(tokio::spawn(async move {
            // A batch grows to the queue's depth; sending waits for room, so a feeder holds at
            // most one batch beside its queue.
            let mut batch = FIRST_BATCH;
            while !ended {
                let started = std::time::Instant::now();
                let draws = match pool.draw(sid, client, batch, &what).await {
                    Ok(d) => d,
                    Err(e) => {
                        fail(&error, e.to_string());
                        return;
                    }
                };
                ended = draws.end;
                let mut calls = Vec::with_capacity(draws.params.len());
                for raw in &draws.params {
                    match converter.call(backend.as_ref(), raw) {
                        Ok(call) => calls.push(call),
                        Err(e) => {
                            fail(&error, format!("{what}: {e}"));
                            return;
                        }
                    }
                }
                stats.add(draws.params.len(), started);
                for call in calls {
                    if tx.send(call).await.is_err() {
                        return;
                    }
                }
                batch = (batch * 2).min(MAX_BATCH).min(depth as u64).max(1);
            }
        })));
    }
    Ok(ParamFeeds {
        queues,
        stats,
        source,
        error,
        _feeders: feeders,
    })
}

fn fail(slot: &Mutex<Option<String>>, why: String) {
    slot.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert(why);
}

/// Turns one drawn params dict into a call.
struct Converter {
    runner: bool,
    dialect: DrawnDialect,
    kind: String,
    dir: PathBuf,
}

impl Converter {
    fn call<B: Backend>(&self, backend: &B, raw: &RawValue) -> Result<Call<B::Prepared>, String> {
        if self.runner {
            return Ok(Call::Runner(raw.get().to_string()));
        }
        let drawn: Map<String, Value> = serde_json::from_str(raw.get())
            .map_err(|e| format!("drew params that are not a JSON object: {e}"))?;
        let (kind, params) = match self.dialect {
            DrawnDialect::Rally => {
                crate::rally::drawn_operation(&self.kind, &drawn, &self.dir.join("track.json"))
                    .map_err(|why| {
                        format!(
                            "drew params that cannot run as Rally's `{}`: {why}",
                            self.kind
                        )
                    })?
            }
            DrawnDialect::Ours => (self.kind.clone(), drawn),
        };
        let ctx = crate::ops::TrackContext {
            indices: &[],
            corpora: &[],
            dir: Some(&self.dir),
        };
        let (_, op) = crate::ops::parse(&kind, &params, &ctx).map_err(|e| {
            format!(
                "drew params that `{kind}` refuses: `{}`: {}",
                e.param, e.message
            )
        })?;
        if let OpSpec::Python(_) = op {
            return Err("drew params for another python operation".into());
        }
        backend.prepare(&op).map(Call::Op).map_err(|e| {
            format!(
                "drew an operation the backend cannot prepare: {}",
                e.message
            )
        })
    }
}

/// A custom runner's reply as an operation's outcome, with the service time Rally records;
/// a fatal reply (the runner raised what is no client error) is an error that stops the race.
pub fn runner_outcome(
    reply: Result<RunnerReply, crate::python::PythonError>,
) -> (Result<Outcome, OpError>, Option<Duration>, Option<String>) {
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            let m = e.to_string();
            return (
                Err(OpError::new(ErrorKind::Internal, m.clone())),
                None,
                Some(m),
            );
        }
    };
    if !reply.ok {
        let m = reply.error.unwrap_or_else(|| "the runner failed".into());
        return (
            Err(OpError::new(ErrorKind::Internal, m.clone())),
            None,
            Some(m),
        );
    }
    let service = Duration::try_from_secs_f64(reply.service).ok();
    if reply.success() {
        let units = reply.weight.max(0.0).round() as u64;
        return (
            Ok(Outcome {
                units,
                ..Outcome::default()
            }),
            service,
            None,
        );
    }
    let status = reply.meta["http-status"]
        .as_u64()
        .and_then(|s| u16::try_from(s).ok());
    let description = reply.meta["error-description"]
        .as_str()
        .unwrap_or("the runner reported a failure");
    let kind = match (reply.meta["error-type"].as_str(), status) {
        (_, Some(s)) => status_error(s).unwrap_or(ErrorKind::ServerError),
        (Some("transport"), None) if description.contains("timed out") => ErrorKind::Timeout,
        (Some("transport"), None) => ErrorKind::Connection,
        _ => ErrorKind::ServerError,
    };
    (
        Err(OpError::new(kind, description.to_string())),
        service,
        None,
    )
}
