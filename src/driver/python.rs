//! A leaf the track's Python drives. A param source's params are drawn ahead of each client, in
//! batches, by a feeder task per client: each draw is converted and prepared there, off the
//! measured path, into a bounded queue the client takes its next call from. The first batch is
//! drawn before the step starts. A custom runner's call goes to the client's worker and back.

use super::client::{Done, RunnerExec, Shared};
use crate::backend::{status_error, Backend, ErrorKind, OpError, Outcome};
use crate::ops::{DrawnDialect, OpSpec, PythonSpec};
use crate::python::frames::{Drawn, DrawnBody};
use crate::python::{Pool, RunnerReply};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One call's input, drawn ahead.
pub enum Call<P> {
    /// A built-in operation, prepared from the drawn params.
    Op(P),
    /// A bulk whose body was drawn whole, prepared, with its documents.
    Bulk(P, Box<super::work::Batch>),
    /// A custom runner's call: its params wait in its worker, drawn there.
    InWorker,
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

/// Where one client takes its calls from.
pub enum ClientFeed<P> {
    /// Drawn ahead by a feeder.
    Queue(async_channel::Receiver<Call<P>>),
    /// Paced by the track's scheduler, one call at a time.
    Paced(Pacer<P>),
}

/// The feeds of one leaf: one per client of this process, in client order.
pub struct ParamFeeds<P> {
    pub feeds: Vec<ClientFeed<P>>,
    /// The source's id in the workers (a custom runner's call names it).
    pub sid: u64,
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

/// Builds the leaf's param source in the workers and starts a feeder per client (or, for a
/// paced task, a pacer; for a custom runner, nothing: it draws in its worker).
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
    let task = spec.task.clone().unwrap_or(Value::Null);
    let pacing = spec.scheduler.as_deref().map(|s| (s, &task));
    let params = Value::Object(spec.params.clone());
    let sid = pool
        .open_source(&source, &params, pacing, &ids, total)
        .await
        .map_err(|e| e.to_string())?;
    let mut feeds = ParamFeeds {
        feeds: Vec::new(),
        sid,
        stats: Arc::default(),
        source: source.clone(),
        error: Arc::default(),
        _feeders: Vec::new(),
    };
    let converter = Arc::new(Converter {
        pool: pool.clone(),
        runner: spec.runner.is_some(),
        dialect: spec.dialect,
        kind: spec.operation_type.clone(),
        dir: pool.track_dir(),
    });
    let what = Arc::new(format!("param source `{source}`"));
    match (&spec.runner, &spec.scheduler) {
        // The runner draws its params in its own worker, call by call.
        (Some(_), None) => {}
        (_, Some(_)) => {
            let make: MakeCall<B::Prepared> = {
                let (backend, converter) = (backend.clone(), converter.clone());
                Arc::new(move |drawn: &Drawn| converter.call(backend.as_ref(), drawn))
            };
            for &client in &ids {
                feeds.feeds.push(ClientFeed::Paced(Pacer {
                    pool: pool.clone(),
                    sid,
                    client,
                    make: make.clone(),
                    what: what.clone(),
                    feedback: None,
                    error: feeds.error.clone(),
                    keep: spec.runner.is_some(),
                }));
            }
        }
        (None, None) => {
            for client in ids {
                let feeder = Feeder {
                    pool: pool.clone(),
                    sid,
                    client,
                    converter: converter.clone(),
                    stats: feeds.stats.clone(),
                    error: feeds.error.clone(),
                    what: what.clone(),
                };
                let (queue, task) = feeder.start(backend.clone()).await?;
                feeds.feeds.push(ClientFeed::Queue(queue));
                feeds._feeders.extend(task);
            }
        }
    }
    Ok(feeds)
}

/// One client's feeder: draws its partition ahead into its queue.
struct Feeder {
    pool: Arc<Pool>,
    sid: u64,
    client: u64,
    converter: Arc<Converter>,
    stats: Arc<FeedStats>,
    error: Arc<Mutex<Option<String>>>,
    what: Arc<String>,
}

impl Feeder {
    /// Draws the first batch now (before the step starts), sizes the queue by it, and leaves
    /// a task drawing the rest (none when the source ended already).
    async fn start<B: Backend>(
        self,
        backend: Arc<B>,
    ) -> Result<
        (
            async_channel::Receiver<Call<B::Prepared>>,
            Option<super::AbortOnDrop>,
        ),
        String,
    > {
        let started = std::time::Instant::now();
        let first = self
            .pool
            .draw(self.sid, self.client, FIRST_BATCH, &self.what)
            .await
            .map_err(|e| e.to_string())?;
        let bytes: usize = first.params.iter().map(Drawn::len).sum();
        let per_call = bytes / first.params.len().max(1);
        let depth = (QUEUE_BYTES / per_call.max(1))
            .clamp(2, 1024)
            .max(first.params.len());
        let (tx, rx) = async_channel::bounded(depth);
        for raw in &first.params {
            let _ = tx.try_send(self.converter.call(backend.as_ref(), raw)?);
        }
        self.stats.add(first.params.len(), started);
        if first.end {
            return Ok((rx, None));
        }
        let task = tokio::spawn(async move { self.run(backend, tx, depth).await });
        Ok((rx, Some(super::AbortOnDrop(task))))
    }

    /// A batch grows to the queue's depth; sending waits for room, so a feeder holds at most
    /// one batch beside its queue.
    async fn run<B: Backend>(
        self,
        backend: Arc<B>,
        tx: async_channel::Sender<Call<B::Prepared>>,
        depth: usize,
    ) {
        let mut batch = FIRST_BATCH;
        let mut draws = match self
            .pool
            .draw(self.sid, self.client, batch, &self.what)
            .await
        {
            Ok(d) => d,
            Err(e) => return fail(&self.error, e.to_string()),
        };
        loop {
            let started = std::time::Instant::now();
            let end = draws.end;
            let next_batch = (batch * 2).min(MAX_BATCH).min(depth as u64).max(1);
            // The next batch is drawn in Python while this one converts here.
            let next = async {
                match end {
                    true => None,
                    false => Some(
                        self.pool
                            .draw(self.sid, self.client, next_batch, &self.what)
                            .await,
                    ),
                }
            };
            let convert = async {
                let mut calls = Vec::with_capacity(draws.params.len());
                for raw in &draws.params {
                    calls.push(self.converter.call(backend.as_ref(), raw)?);
                }
                Ok::<_, String>(calls)
            };
            let (next, calls) = tokio::join!(next, convert);
            let calls = match calls {
                Ok(c) => c,
                Err(e) => return fail(&self.error, format!("{}: {e}", self.what)),
            };
            self.stats.add(calls.len(), started);
            for call in calls {
                if tx.send(call).await.is_err() {
                    return;
                }
            }
            draws = match next {
                None => return,
                Some(Ok(d)) => d,
                Some(Err(e)) => return fail(&self.error, e.to_string()),
            };
            batch = next_batch;
        }
    }
}

fn fail(slot: &Mutex<Option<String>>, why: String) {
    slot.lock()
        .unwrap_or_else(|p| p.into_inner())
        .get_or_insert(why);
}

/// Turns one drawn params dict into a call.
struct Converter {
    pool: Arc<Pool>,
    runner: bool,
    dialect: DrawnDialect,
    kind: String,
    dir: PathBuf,
}

impl Converter {
    fn call<B: Backend>(&self, backend: &B, drawn: &Drawn) -> Result<Call<B::Prepared>, String> {
        if self.runner {
            return Ok(Call::InWorker);
        }
        let mut params = parse_drawn(&drawn.params)?;
        let json = match &drawn.body {
            // A body drawn for a search is converted apart (an empty one in its place) and
            // reaches the request as the bytes Python encoded: it can hold tens of thousands of
            // terms, and each decoding or copy of it costs milliseconds a call.
            Some(DrawnBody::Json(json)) if self.searches() => {
                params.insert("body".into(), Value::Object(Map::new()));
                json
            }
            Some(body) => {
                params.insert("body".into(), body.to_value()?);
                return self.in_place(backend, params);
            }
            None => return self.in_place(backend, params),
        };
        match self.spec_of(params)? {
            OpSpec::Search(s) => backend
                .prepare_encoded_search(s, json.clone())
                .map(Call::Op)
                .map_err(cannot_prepare),
            // Converted as something else: again, with its body in place.
            _ => {
                let mut params = parse_drawn(&drawn.params)?;
                params.insert("body".into(), DrawnBody::Json(json.clone()).to_value()?);
                self.in_place(backend, params)
            }
        }
    }

    /// Drawn params with their body in place: a Rally bulk's whole body, or any operation.
    fn in_place<B: Backend>(
        &self,
        backend: &B,
        mut params: Map<String, Value>,
    ) -> Result<Call<B::Prepared>, String> {
        if self.kind == "bulk" && self.dialect == DrawnDialect::Rally {
            if let Some(bulk) = crate::ops::drawn_bulk(&mut params) {
                return self.whole_bulk(backend, bulk?);
            }
        }
        backend
            .prepare(&self.spec_of(params)?)
            .map(Call::Op)
            .map_err(cannot_prepare)
    }

    /// Whether the drawn params are a search's (their body passed on, not read).
    fn searches(&self) -> bool {
        match self.dialect {
            DrawnDialect::Rally => matches!(
                self.kind.as_str(),
                "search" | "paginated-search" | "scroll-search"
            ),
            DrawnDialect::Ours => self.kind == "search",
        }
    }

    /// A bulk drawn whole: sent as drawn, its documents framed for backends that index them.
    fn whole_bulk<B: Backend>(
        &self,
        backend: &B,
        bulk: crate::ops::DrawnBulk,
    ) -> Result<Call<B::Prepared>, String> {
        let op = OpSpec::Bulk(crate::ops::BulkSpec::whole_body(bulk.docs, bulk.pipeline));
        let prepared = backend
            .prepare(&op)
            .map_err(|e| format!("drew a bulk the backend cannot prepare: {}", e.message))?;
        let batch = super::work::Batch {
            body: bulk.body,
            items: bulk.items,
            uniform: None,
            docs: bulk.docs,
            first_doc: 0,
            seq: 0,
        };
        Ok(Call::Bulk(prepared, Box::new(batch)))
    }

    /// One drawn params dict as our operation.
    fn spec_of(&self, drawn: Map<String, Value>) -> Result<OpSpec, String> {
        let (kind, params) = match self.dialect {
            DrawnDialect::Rally => self.pool.convert_drawn(&self.kind, drawn).map_err(|why| {
                format!(
                    "drew params that cannot run as Rally's `{}`: {why}",
                    self.kind
                )
            })?,
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
        match op {
            OpSpec::Python(_) => Err("drew params for another python operation".into()),
            op => Ok(op),
        }
    }
}

fn parse_drawn(params: &[u8]) -> Result<Map<String, Value>, String> {
    serde_json::from_slice(params)
        .map_err(|e| format!("drew params that are not a JSON object: {e}"))
}

fn cannot_prepare(e: crate::backend::OpError) -> String {
    format!(
        "drew an operation the backend cannot prepare: {}",
        e.message
    )
}

/// A custom runner's reply as the call's result; a fatal one stops the race (Rally's runner
/// errors that are no client error end its race too). The service time is the worker's.
pub fn runner_result(
    r: &RunnerExec,
    reply: Result<RunnerReply, crate::python::PythonError>,
    shared: &Shared,
) -> Done {
    if reply.as_ref().is_ok_and(|r| r.ok && r.end) {
        return Done {
            result: Ok(Outcome::default()),
            service: None,
            runner: None,
            source_ended: true,
        };
    }
    let account = reply.as_ref().ok().filter(|r| r.ok).map(|r| RunnerAccount {
        weight: r.weight,
        unit: r.unit.clone(),
        meta: r.meta.clone(),
    });
    let (result, service, fatal) = runner_outcome(reply);
    if let Some(why) = fatal {
        shared.abort_with(&why);
    }
    if let Some(unit) = account
        .as_ref()
        .map(|a| a.unit.as_str())
        .filter(|u| !u.is_empty() && r.unit.as_str().trim_end_matches("/s") != *u)
    {
        if !shared.unit_said.swap(true, Ordering::Relaxed) {
            eprintln!(
                "warning: {}: runner `{}` weighs its calls in `{unit}`, but the task counts {}; throughput is its weight per second",
                shared.task_label,
                r.name,
                r.unit.as_str()
            );
        }
    }
    Done {
        result,
        service,
        runner: account,
        source_ended: false,
    }
}

/// What a custom runner said of its call: Rally's weight, unit and request metadata, which a
/// scheduler of the track's is handed after the call.
pub struct RunnerAccount {
    pub weight: f64,
    pub unit: String,
    pub meta: Value,
}

/// The next call drawn from the track's param source; a call not ready yet is waited for and
/// counted (Python fell behind the schedule). None when the source ended or the leaf stopped.
pub async fn next_call<P>(
    queue: &async_channel::Receiver<Call<P>>,
    shared: &Shared,
) -> Option<Call<P>> {
    match queue.try_recv() {
        Ok(c) => return Some(c),
        Err(async_channel::TryRecvError::Closed) => return None,
        Err(async_channel::TryRecvError::Empty) => {}
    }
    waited(queue, shared).await
}

#[cold]
async fn waited<P>(queue: &async_channel::Receiver<Call<P>>, shared: &Shared) -> Option<Call<P>> {
    let from = tokio::time::Instant::now();
    let call = tokio::select! {
        c = queue.recv() => c.ok(),
        _ = shared.cancel.cancelled() => None,
    };
    if let (Some(_), Some(stats)) = (&call, &shared.params) {
        stats.waits.fetch_add(1, Ordering::Relaxed);
        stats
            .wait_nanos
            .fetch_add(from.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
    call
}

type MakeCall<P> = Arc<dyn Fn(&Drawn) -> Result<Call<P>, String> + Send + Sync>;

/// One client of a task the track's scheduler paces: each call's intended start and params
/// come from its worker one at a time (Rally's ScheduleHandle), the last call's account going
/// back with the request for the next. Its round trip comes before the intended start, as in
/// Rally, where the scheduler and the source run in the client's own loop.
pub struct Pacer<P> {
    pool: Arc<Pool>,
    sid: u64,
    client: u64,
    make: MakeCall<P>,
    what: Arc<String>,
    feedback: Option<Value>,
    error: Arc<Mutex<Option<String>>>,
    /// The params stay in the worker for the runner's call (a custom runner's task).
    keep: bool,
}

impl<P> Pacer<P> {
    /// The next call and when it is due after the client's start; None when the source ended
    /// or failed (the failure is the leaf's).
    pub async fn next(&mut self) -> Option<(Duration, Call<P>)> {
        let step = self
            .pool
            .step(
                self.sid,
                self.client,
                self.feedback.take(),
                self.keep,
                &self.what,
            )
            .await;
        let failed = |why: String| {
            fail(&self.error, why);
            None
        };
        match step {
            Ok(None) => None,
            Err(e) => failed(e.to_string()),
            Ok(Some(step)) => {
                let at = Duration::try_from_secs_f64(step.at.max(0.0)).unwrap_or(Duration::ZERO);
                if self.keep {
                    return Some((at, Call::InWorker));
                }
                let Some(raw) = step.params.first() else {
                    return failed(format!("{}: a step came without params", self.what));
                };
                match (self.make)(raw) {
                    Ok(call) => Some((at, call)),
                    Err(e) => failed(format!("{}: {e}", self.what)),
                }
            }
        }
    }

    /// The account of the call just made, for the scheduler's `before_request` and
    /// `after_request` (times in seconds from the client's start, as its `next` counts).
    pub fn after(
        &mut self,
        starts_at: tokio::time::Instant,
        start: tokio::time::Instant,
        end: tokio::time::Instant,
        done: &Done,
    ) {
        let secs = |t: tokio::time::Instant| t.saturating_duration_since(starts_at).as_secs_f64();
        let (weight, unit, meta) = match (&done.runner, &done.result) {
            (Some(a), _) => (a.weight, a.unit.clone(), a.meta.clone()),
            (None, Ok(o)) => (o.units as f64, "ops".to_string(), json!({"success": true})),
            (None, Err(e)) => (
                0.0,
                "ops".to_string(),
                json!({"success": false, "error-description": e.message}),
            ),
        };
        self.feedback = Some(json!({
            "before": secs(start), "after": secs(end), "weight": weight, "unit": unit, "meta": meta,
        }));
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
