//! The race's Python workers: processes started with the race and killed with it (dropped,
//! Ctrl-C, SIGTERM, or runner killed outright). Client `i` of a task is served by worker
//! `i % workers`. Requests carry an id; one task per worker writes its requests, another reads
//! its replies and hands each to whoever waits for it. A worker that dies fails what waits on
//! it with its exit status and last words.

use super::frames::{self, Drawn};
use super::probe::{command, forward_stderr, STDERR_TAIL};
use super::{PythonError, TrackPython};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::io::AsyncWriteExt;
use tokio::sync::{mpsc, oneshot};

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Vec<u8>>>>>;

struct Worker {
    label: String,
    requests: mpsc::Sender<Vec<u8>>,
    pending: Pending,
    next_rid: AtomicU64,
    /// Set when the worker is gone: why, for every request that still waits.
    dead: Arc<OnceLock<String>>,
    _child: tokio::process::Child,
    _io: [AbortOnDrop; 2],
}

struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Removes a request's slot when its caller stops waiting (a call dropped by Ctrl-C).
struct PendingGuard<'a> {
    pending: &'a Pending,
    rid: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        lock(self.pending).remove(&self.rid);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The workers of one race.
pub struct Pool {
    workers: Vec<Worker>,
    python: Arc<TrackPython>,
    next_sid: AtomicU64,
}

/// What a custom runner is called with: params as JSON, or those its client's partition of a
/// param source draws in the worker (they never leave Python, as in Rally).
#[derive(Clone, Copy)]
pub enum RunnerInput<'a> {
    Params(&'a str),
    Source(u64),
}

/// What a custom runner's call came back with, as Rally's `execute_single` reads it.
#[derive(Debug, Clone, Deserialize)]
pub struct RunnerReply {
    pub ok: bool,
    /// A failure that ends the race (a KeyError, an exception that is no client error).
    #[serde(default)]
    pub fatal: bool,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub weight: f64,
    #[serde(default)]
    pub unit: String,
    #[serde(default)]
    pub meta: Value,
    /// Seconds, as Rally takes them (see the worker's `es_client.execute`).
    #[serde(default)]
    pub service: f64,
    /// The param source had no more params for this client: no call was made.
    #[serde(default)]
    pub end: bool,
}

impl RunnerReply {
    pub fn success(&self) -> bool {
        self.meta["success"].as_bool().unwrap_or(true)
    }
}

/// One call of a paced task: when it is due (seconds from the client's start, Rally's
/// `next_scheduled`) and its params.
pub struct Step {
    pub at: f64,
    /// The params; none when they stay in the worker for a runner.
    pub params: Vec<Drawn>,
}

/// A reply's head, read without touching the params after it (a draw may hold megabytes).
#[derive(Deserialize, Default)]
pub(super) struct Head {
    #[serde(default)]
    ok: bool,
    #[serde(default)]
    end: bool,
    #[serde(default)]
    at: f64,
    /// How the drawn params after the head are laid out.
    #[serde(default)]
    items: Vec<frames::ItemLayout>,
}

impl Head {
    fn of(frame: &[u8]) -> Head {
        serde_json::from_slice(frames::head_and_tail(frame).0).unwrap_or_default()
    }
}

/// One batch of draws.
pub struct Draws {
    pub params: Vec<Drawn>,
    pub end: bool,
}

/// The drawn params of a reply, cut as its head lays them out.
pub(super) fn drawn(frame: Vec<u8>, what: &str) -> Result<(Head, Vec<Drawn>), PythonError> {
    let failed = |message: String| PythonError::Failed {
        what: what.into(),
        message,
    };
    let (head, tail) = frames::head_and_tail(&frame);
    let head: Head = serde_json::from_slice(head).map_err(|e| {
        failed(format!(
            "the worker's reply head is not what runner reads: {e}"
        ))
    })?;
    let start = frame.len() - tail.len();
    let tail = bytes::Bytes::from(frame).slice(start..);
    let items = frames::drawn_items(&head.items, tail).map_err(failed)?;
    Ok((head, items))
}

impl Pool {
    /// Starts `count` workers, each loading the track; `client` is what custom runners are
    /// handed (hosts and options), None when the race calls none.
    pub async fn start(
        python: Arc<TrackPython>,
        count: usize,
        client: Option<Value>,
    ) -> Result<Pool, PythonError> {
        let mut workers = Vec::with_capacity(count);
        for i in 0..count.max(1) {
            workers.push(Worker::spawn(&python, i)?);
        }
        let what = format!("{}/{}.py", python.dir.display(), python.dialect.entry());
        let loads = workers.iter().enumerate().map(|(i, w)| {
            let mut load = python.load_request();
            load["client"] = client.clone().unwrap_or(Value::Null);
            load["worker"] = json!(i);
            w.request(load, &what, Some(super::request_timeout()))
        });
        for reply in futures::future::join_all(loads).await {
            ok_reply(&python, &what, &reply?)?;
        }
        if !python.registry.track_processors.is_empty() {
            // Rally's on_prepare_track, its jobs shared among the workers: it may generate
            // data for minutes, so it has no timeout (Ctrl-C stops it with the workers).
            let what = "the track processors' on_prepare_track";
            let count = workers.len();
            let prepares = workers.iter().enumerate().map(|(i, w)| {
                let msg = json!({"t": "prepare", "data_root": python.data_root, "index": i, "count": count});
                w.request(msg, what, None)
            });
            for reply in futures::future::join_all(prepares).await {
                ok_reply(&python, what, &reply?)?;
            }
        }
        Ok(Pool {
            workers,
            python,
            next_sid: AtomicU64::new(1),
        })
    }

    pub fn size(&self) -> usize {
        self.workers.len()
    }

    /// The track's directory, where its files are.
    pub fn track_dir(&self) -> std::path::PathBuf {
        self.python.dir.clone()
    }

    /// One drawn params dict for the front end's operation type `kind`, as our type and params.
    pub fn convert_drawn(
        &self,
        kind: &str,
        drawn: serde_json::Map<String, Value>,
    ) -> Result<(String, serde_json::Map<String, Value>), String> {
        (self.python.convert)(kind, drawn, &self.python.dir)
    }

    fn worker(&self, client: u64) -> &Worker {
        &self.workers[(client % self.workers.len() as u64) as usize]
    }

    /// Builds a param source for `clients` (of `total`): one instance per worker that serves
    /// any of them, partitioned per client as Rally does. Returns the source's id.
    pub async fn open_source(
        &self,
        name: &str,
        params: &Value,
        pacing: Option<(&str, &Value)>,
        clients: &[u64],
        total: u64,
    ) -> Result<u64, PythonError> {
        let sid = self.next_sid.fetch_add(1, Ordering::Relaxed);
        let mut by_worker: Vec<Vec<u64>> = vec![Vec::new(); self.workers.len()];
        for &c in clients {
            by_worker[(c % self.workers.len() as u64) as usize].push(c);
        }
        let what = format!("param source `{name}`");
        let opened = by_worker
            .iter()
            .enumerate()
            .filter(|(_, cs)| !cs.is_empty())
            .map(|(w, cs)| {
                let mut msg = json!({"t": "source", "sid": sid, "name": name, "params": params, "clients": cs, "total": total});
                if let Some((scheduler, task)) = pacing {
                    msg["scheduler"] = json!(scheduler);
                    msg["task"] = task.clone();
                }
                self.workers[w].request(msg, &what, Some(super::request_timeout()))
            });
        for reply in futures::future::join_all(opened).await {
            ok_reply(&self.python, &what, &reply?)?;
        }
        Ok(sid)
    }

    /// Up to `n` params of client `client` from source `sid`; `end` when the source ended.
    pub async fn draw(
        &self,
        sid: u64,
        client: u64,
        n: u64,
        what: &str,
    ) -> Result<Draws, PythonError> {
        let msg = json!({"t": "draw", "sid": sid, "client": client, "n": n});
        let frame = self
            .worker(client)
            .request(msg, what, Some(super::request_timeout()))
            .await?;
        if !Head::of(&frame).ok {
            ok_reply(&self.python, what, &frame)?;
        }
        let (head, params) = drawn(frame, what)?;
        Ok(Draws {
            params,
            end: head.end,
        })
    }

    /// The next call of client `client` of a task the track's scheduler paces: `feedback`
    /// (the last call's, for its `before_request`/`after_request`) goes first, then its
    /// `next` and the params are drawn. None when the param source ended.
    pub async fn step(
        &self,
        sid: u64,
        client: u64,
        feedback: Option<Value>,
        keep: bool,
        what: &str,
    ) -> Result<Option<Step>, PythonError> {
        let msg =
            json!({"t": "step", "sid": sid, "client": client, "feedback": feedback, "keep": keep});
        let frame = self
            .worker(client)
            .request(msg, what, Some(super::request_timeout()))
            .await?;
        let head = Head::of(&frame);
        if !head.ok {
            ok_reply(&self.python, what, &frame)?;
        }
        if head.end {
            return Ok(None);
        }
        let (head, params) = drawn(frame, what)?;
        Ok(Some(Step {
            at: head.at,
            params,
        }))
    }

    /// Calls custom runner `runner` for client `client` with params already encoded as JSON.
    /// No timeout: a runner may rightly wait long (a snapshot, a recovery).
    pub async fn call(
        &self,
        client: u64,
        runner: &str,
        input: RunnerInput<'_>,
    ) -> Result<RunnerReply, PythonError> {
        let worker = self.worker(client);
        let rid = worker.next_rid.fetch_add(1, Ordering::Relaxed);
        let runner_json = serde_json::to_string(runner).unwrap_or_default();
        let body = match input {
            RunnerInput::Params(params_json) => format!(
                "{{\"t\":\"run\",\"rid\":{rid},\"runner\":{runner_json},\"params\":{params_json}}}"
            ),
            RunnerInput::Source(sid) => format!(
                "{{\"t\":\"run\",\"rid\":{rid},\"runner\":{runner_json},\"sid\":{sid},\"client\":{client}}}"
            ),
        };
        let frame = worker.send(rid, body.into_bytes(), runner, None).await?;
        serde_json::from_slice(&frame).map_err(|e| PythonError::Failed {
            what: format!("runner `{runner}`"),
            message: format!("its reply is not what runner reads: {e}"),
        })
    }
}

fn ok_reply(python: &TrackPython, what: &str, frame: &[u8]) -> Result<Value, PythonError> {
    super::ok_reply(&python.interpreter, what, frame)
}

impl Worker {
    fn spawn(python: &TrackPython, index: usize) -> Result<Worker, PythonError> {
        let mut cmd = tokio::process::Command::from(command(&python.interpreter)?);
        cmd.kill_on_drop(true);
        let mut child = cmd.spawn().map_err(|e| PythonError::NoInterpreter {
            interpreter: python.interpreter.display().to_string(),
            why: e.to_string(),
        })?;
        let pid = child.id().unwrap_or(0);
        let label = format!("track.py worker {} (pid {pid})", index + 1);
        let (Some(mut stdin), Some(mut stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(PythonError::Died(format!(
                "{label}: its pipes were not opened"
            )));
        };
        let tail = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_TAIL)));
        if let Ok(fd) = stderr.into_owned_fd() {
            forward_stderr(std::fs::File::from(fd), label.clone(), tail.clone());
        }
        let (requests, mut queue) = mpsc::channel::<Vec<u8>>(1024);
        let writer = tokio::spawn(async move {
            while let Some(body) = queue.recv().await {
                if stdin.write_all(&frames::encode(&body)).await.is_err() {
                    break;
                }
            }
        });
        let pending: Pending = Arc::default();
        let dead: Arc<OnceLock<String>> = Arc::default();
        let reader = {
            let (pending, dead, label) = (pending.clone(), dead.clone(), label.clone());
            tokio::spawn(async move {
                let why = loop {
                    match frames::read(&mut stdout).await {
                        Ok(Some(frame)) => route(&pending, frame),
                        Ok(None) => break "it exited".to_string(),
                        Err(e) => break e.to_string(),
                    }
                };
                // The process's end and last words, then every waiting request fails.
                tokio::time::sleep(Duration::from_millis(100)).await;
                let last: Vec<String> = lock(&tail).iter().cloned().collect();
                let _ = dead.set(format!(
                    "{label} stopped: {why}{}",
                    if last.is_empty() {
                        String::new()
                    } else {
                        format!("; its last words: {}", last.join(" | "))
                    }
                ));
                lock(&pending).clear();
            })
        };
        Ok(Worker {
            label,
            requests,
            pending,
            next_rid: AtomicU64::new(1),
            dead,
            _child: child,
            _io: [AbortOnDrop(writer), AbortOnDrop(reader)],
        })
    }

    async fn request(
        &self,
        mut msg: Value,
        what: &str,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, PythonError> {
        let rid = self.next_rid.fetch_add(1, Ordering::Relaxed);
        msg["rid"] = json!(rid);
        let body = serde_json::to_vec(&msg).map_err(|e| PythonError::Failed {
            what: what.into(),
            message: e.to_string(),
        })?;
        self.send(rid, body, what, timeout).await
    }

    async fn send(
        &self,
        rid: u64,
        body: Vec<u8>,
        what: &str,
        timeout: Option<Duration>,
    ) -> Result<Vec<u8>, PythonError> {
        if body.len() > frames::MAX_FRAME {
            return Err(PythonError::Failed {
                what: what.into(),
                message: format!(
                    "a request of {} bytes is over the {}-byte limit",
                    body.len(),
                    frames::MAX_FRAME
                ),
            });
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(rid, tx);
        let _guard = PendingGuard {
            pending: &self.pending,
            rid,
        };
        if let Some(why) = self.dead.get() {
            return Err(PythonError::Died(format!("{what}: {why}")));
        }
        if self.requests.send(body).await.is_err() {
            return Err(self.gone(what).await);
        }
        let reply = match timeout {
            Some(t) => match tokio::time::timeout(t, rx).await {
                Ok(r) => r,
                Err(_) => {
                    return Err(PythonError::Timeout {
                        what: format!("{what} ({})", self.label),
                        after: t,
                    })
                }
            },
            None => rx.await,
        };
        match reply {
            Ok(frame) => Ok(frame),
            Err(_) => Err(self.gone(what).await),
        }
    }

    /// Why the worker is gone, once its reader has said.
    async fn gone(&self, what: &str) -> PythonError {
        for _ in 0..50 {
            if let Some(why) = self.dead.get() {
                return PythonError::Died(format!("{what}: {why}"));
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        PythonError::Died(format!("{what}: {} stopped answering", self.label))
    }
}

/// Hands a reply to the request waiting for it, by the `rid` at its start.
fn route(pending: &Pending, frame: Vec<u8>) {
    #[derive(Deserialize)]
    struct Rid {
        rid: u64,
    }
    // Every reply's head names its rid; drawn params after the head are not read here.
    let Ok(Rid { rid }) = serde_json::from_slice::<Rid>(frames::head_and_tail(&frame).0) else {
        return;
    };
    if let Some(tx) = lock(pending).remove(&rid) {
        let _ = tx.send(frame);
    }
}
