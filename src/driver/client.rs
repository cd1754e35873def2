//! The one client loop, parameterised by schedule × budget × payload source. Everything it
//! touches per operation is owned by the client: no allocation, no lock, no formatting.

use super::budget::Budget;
use super::group_recorder::GroupRecorder;
use super::python::{Call, FeedStats};
use super::schedule::{wait_until, Schedule};
use super::stop::StopSignal;
use super::timer::PreciseTimer;
use super::work::{CorpusFeed, KeyGen, VectorWalk};
use crate::backend::{BackendClient, Outcome, Payload};
use crate::metrics::LATE_START;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// What a leaf executes per call.
pub enum Exec<P> {
    /// Runs in the driver itself; `sleep 0` measures the driver's own overhead.
    Sleep(Duration),
    Backend(P),
    /// The operation each call runs comes with its draw from the track's param source.
    Drawn,
    /// A custom runner of the track's Python, called in the client's worker.
    Runner(RunnerExec),
}

/// A custom runner: its name, and its params: fixed, or drawn from a param source in the
/// same worker (params stay in Python: Rally hands them to its runner as they are).
pub struct RunnerExec {
    pub pool: Arc<crate::python::Pool>,
    pub name: String,
    pub params: RunnerParams,
    pub unit: crate::units::ThroughputUnit,
}

pub enum RunnerParams {
    /// The operation's own params, as JSON.
    Fixed(String),
    /// The id of the param source the worker draws them from.
    Source(u64),
}

impl RunnerExec {
    fn params(&self) -> crate::python::RunnerInput<'_> {
        match &self.params {
            RunnerParams::Fixed(json) => crate::python::RunnerInput::Params(json),
            RunnerParams::Source(sid) => crate::python::RunnerInput::Source(*sid),
        }
    }
}

pub enum Source<P> {
    None,
    Corpus(Arc<CorpusFeed>),
    Keys(KeyGen),
    /// A body drawn per call from the operation's bindings, before its intended start.
    Bound(crate::ops::BodyDraw),
    /// Calls drawn ahead from the track's param source.
    Python(async_channel::Receiver<Call<P>>),
    /// Calls the track's scheduler paces: each one's intended start and params from Python.
    Paced(super::python::Pacer<P>),
    /// A vector search's queries, in this client's order.
    Vectors(VectorWalk),
}

/// State shared by the clients of one leaf; touched per operation only through atomics.
pub struct Shared {
    pub cancel: CancellationToken,
    /// Set when `--on-error abort` stops the race: the first error's message.
    pub abort: Arc<Mutex<Option<String>>>,
    pub abort_on_error: bool,
    /// The task's `ignore-response-error-level: non-fatal`: only broken connections, timeouts
    /// and garbage abort.
    pub ignore_response_errors: bool,
    /// The task's `retry`: which failed operations are tried again.
    pub retry: Option<crate::track::RetryPolicy>,
    pub race_cancel: CancellationToken,
    /// Set in a `completed-by` block: cancelled when the completing task ends, which stops
    /// this one without cutting it short.
    pub block_done: Option<CancellationToken>,
    pub task_label: String,
    /// The leaf's param source's counters (calls whose params were late).
    pub params: Option<Arc<FeedStats>>,
    /// Said once: a custom runner's weight came in another unit than the task counts.
    pub unit_said: std::sync::atomic::AtomicBool,
    /// A vector search's true neighbours (their first k), against which each answer's
    /// recall is measured.
    pub truth: Option<Recall>,
}

/// What a vector search's answers are checked against.
pub struct Recall {
    pub truth: Arc<crate::ops::vector::TrueNeighbours>,
    pub k: usize,
}

impl Shared {
    /// Whether a stop now leaves the work unfinished (Ctrl-C, an abort), rather than ends it
    /// (the block's completing task ended).
    fn stop_cuts_short(&self) -> bool {
        self.race_cancel.is_cancelled()
            || !self
                .block_done
                .as_ref()
                .is_some_and(CancellationToken::is_cancelled)
    }

    #[cold]
    pub(super) fn abort_with(&self, message: &str) {
        let mut slot = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(format!("{}: {message}", self.task_label));
        }
        self.race_cancel.cancel();
    }
}

pub struct ClientRun<C: BackendClient> {
    pub client: C,
    /// The client's place in its task (which Python worker serves it).
    pub index: u64,
    /// Given when the race is interrupted: drops the operation in flight.
    pub stop: Arc<StopSignal>,
    pub exec: Arc<Exec<C::Prepared>>,
    pub schedule: Schedule,
    /// When this client starts (the leaf's start and its ramp-up delay): a paced call's
    /// intended start counts from it.
    pub starts_at: Instant,
    pub budget: Budget,
    pub source: Source<C::Prepared>,
    /// Shared with the other clients of this client's group (see `groups`).
    pub recorder: Arc<GroupRecorder>,
    /// The precise wait of a throttled or ramped-up client (None: tokio's timer and a spin).
    pub timer: Option<PreciseTimer>,
}

impl<C: BackendClient> ClientRun<C> {
    /// A client that never ran (stopped while waiting to start).
    pub fn stopped_before_start(self, shared: &Shared) {
        self.mark_stopped(shared);
    }

    /// The next call's intended start, and what the track's Python drew for it: a paced call
    /// comes with its start, a drawn one with the schedule's. None when the param source ended
    /// or the leaf stopped.
    async fn next_call(
        &mut self,
        shared: &Shared,
    ) -> Option<(Option<Instant>, Option<Call<C::Prepared>>)> {
        match &mut self.source {
            Source::Paced(pacer) => {
                // A slow `next` or `params()` in Python must not hold up Ctrl-C.
                let (at, call) = tokio::select! {
                    step = pacer.next() => step?,
                    _ = shared.cancel.cancelled() => return None,
                };
                Some((Some(self.starts_at + at), Some(call)))
            }
            Source::Python(queue) => {
                let call = super::python::next_call(queue, shared).await?;
                Some((self.schedule.next(), Some(call)))
            }
            _ => Some((self.schedule.next(), None)),
        }
    }

    /// The param source ended: the client's work is done, unless the leaf was stopped first.
    fn stopped_or_done(&self, shared: &Shared) {
        if shared.cancel.is_cancelled() {
            self.mark_stopped(shared);
        }
    }

    /// Records that this client stopped: cut short, unless its block's completing task ended.
    fn mark_stopped(&self, shared: &Shared) {
        let cut_short = shared.stop_cuts_short();
        recording(&self.recorder, |r| r.cut_short |= cut_short);
    }

    pub async fn run(mut self, shared: Arc<Shared>) {
        let corpus_budget = matches!(self.budget, Budget::Corpus);
        loop {
            if shared.cancel.is_cancelled() {
                self.mark_stopped(&shared);
                break;
            }
            let Some((intended, call)) = self.next_call(&shared).await else {
                // The param source ended (its work is done), or the leaf was stopped.
                self.stopped_or_done(&shared);
                break;
            };
            // The intended start decides warmup and the end of a time budget, so an operation
            // scheduled past the end is not started.
            let Some(mut warmup) = self.budget.next(|| intended.unwrap_or_else(Instant::now))
            else {
                break;
            };
            let batch = match &self.source {
                Source::Corpus(feed) => match feed.next().await {
                    Some(b) => {
                        if corpus_budget {
                            warmup = feed.warmup.is_warmup(&b);
                        }
                        Some(b)
                    }
                    None => break,
                },
                _ => None,
            };
            let payload = match (&mut self.source, &batch) {
                (Source::Keys(keys), _) => keys.draw(),
                (Source::Bound(draw), _) => Payload::Body(draw.render()),
                (Source::Vectors(walk), _) => Payload::Vector(walk.next()),
                (_, Some(b)) => Payload::Documents {
                    body: &b.body,
                    count: b.docs,
                    pairs: b.pairs(),
                },
                _ => Payload::None,
            };
            if let Some(at) = intended {
                if !wait_for(at, warmup, &shared, self.timer.as_ref(), &self.recorder).await {
                    self.mark_stopped(&shared);
                    break;
                }
            }
            let start = Instant::now();
            let in_flight = execute(
                &mut self.client,
                &self.exec,
                call.as_ref(),
                &payload,
                self.index,
                &shared,
                self.timer.as_ref(),
            );
            let Some(done) = self.stop.unless_stopped(in_flight).await else {
                // Neither a success nor an error: the operation was dropped unfinished, and
                // its connection with it (this client sends nothing more).
                recording(&self.recorder, |r| {
                    r.record_interrupted();
                    r.cut_short = true;
                });
                break;
            };
            if done.source_ended {
                // A runner's params come from its source in the worker, which just ended.
                self.stopped_or_done(&shared);
                break;
            }
            let end = Instant::now();
            // A custom runner's service time is Rally's, taken in the worker; the round trip
            // to it counts in the latency.
            let sent = start;
            let start = done
                .service
                .map_or(start, |s| end.checked_sub(s).unwrap_or(start).max(start));
            let times = Times {
                // Unthrottled: latency runs from when the call was sent, the round trip in it.
                intended: intended.unwrap_or(sent),
                start,
                end,
            };
            record_result(
                &self.recorder,
                &mut self.client,
                warmup,
                times,
                &done.result,
            );
            abort_if_asked(&shared, &done.result);
            drop(payload);
            drop(call);
            self.after_call(warmup, times, &done, batch, &shared);
        }
    }

    /// What a call leaves for its source: its account to a pacing scheduler, each command's
    /// times to a key-value mix's parts, its batch back to the corpus feed.
    fn after_call(
        &mut self,
        warmup: bool,
        t: Times,
        done: &Done,
        batch: Option<super::work::Batch>,
        shared: &Shared,
    ) {
        if let (Source::Vectors(walk), Some(recall), false, Ok(_)) =
            (&self.source, &shared.truth, warmup, &done.result)
        {
            record_recall(&self.recorder, &mut self.client, recall, walk.current);
        }
        if let (Some(account), false) = (&done.runner, warmup) {
            recording(&self.recorder, |r| r.record_runner_numbers(&account.meta));
        }
        match (&mut self.source, batch) {
            (Source::Paced(pacer), _) => pacer.after(self.starts_at, t.start, t.end, done),
            (Source::Keys(keys), _) if !warmup => {
                let first = keys.first_command().index();
                recording(&self.recorder, |r| {
                    r.record_parts(&keys.drawn, first, t.intended, t.start, t.end)
                });
            }
            (Source::Corpus(feed), Some(b)) => feed.give_back(b),
            _ => {}
        }
    }
}

/// What one call came back with: its result, the service time where it was taken elsewhere
/// (a custom runner's, in its worker), and a runner's own account of it.
pub struct Done {
    pub result: Result<Outcome, crate::backend::OpError>,
    pub service: Option<Duration>,
    pub runner: Option<super::python::RunnerAccount>,
    /// The param source a runner draws from in its worker had no more params: no call was made.
    pub source_ended: bool,
}

/// Waits for an intended start (false: stopped first), counting a start the driver made late
/// although the client was free: the driver's lag, not the system's.
async fn wait_for(
    at: Instant,
    warmup: bool,
    shared: &Shared,
    timer: Option<&PreciseTimer>,
    recorder: &GroupRecorder,
) -> bool {
    let free = Instant::now() < at;
    if !wait_until(at, &shared.cancel, timer).await {
        return false;
    }
    if free && !warmup && Instant::now().saturating_duration_since(at) > LATE_START {
        recording(recorder, |r| r.counts.late_starts += 1);
    }
    true
}

/// Runs one call: the leaf's operation, the one drawn with it, or the track's runner; tried
/// again as the task's `retry` says (the attempts and the waits between them are one call).
async fn execute<C: BackendClient>(
    client: &mut C,
    exec: &Exec<C::Prepared>,
    call: Option<&Call<C::Prepared>>,
    payload: &Payload<'_>,
    index: u64,
    shared: &Shared,
    timer: Option<&PreciseTimer>,
) -> Done {
    if let Exec::Runner(r) = exec {
        let reply = r.pool.call(index, &r.name, r.params()).await;
        return super::python::runner_result(r, reply, shared);
    }
    let mut result = attempt(client, exec, call, payload, timer).await;
    if let Some(policy) = shared.retry {
        let first = Instant::now();
        let mut tries = 0;
        while super::retry::again(&policy, &result) && policy.another(tries, first.elapsed()) {
            if !wait_until(Instant::now() + policy.wait, &shared.cancel, timer).await {
                break;
            }
            tries += 1;
            result = attempt(client, exec, call, payload, timer).await;
        }
    }
    Done {
        result,
        service: None,
        runner: None,
        source_ended: false,
    }
}

/// One attempt at a call of the backend (or a sleep).
async fn attempt<C: BackendClient>(
    client: &mut C,
    exec: &Exec<C::Prepared>,
    call: Option<&Call<C::Prepared>>,
    payload: &Payload<'_>,
    timer: Option<&PreciseTimer>,
) -> Result<Outcome, crate::backend::OpError> {
    match (exec, call) {
        (Exec::Sleep(d), _) => {
            if !d.is_zero() {
                // On the client's timerfd where it has one: tokio's timer rounds up to the
                // next millisecond, which would make a 10 ms sleep take 11. Only the stop
                // signal around the call cuts it short.
                static NEVER: std::sync::OnceLock<CancellationToken> = std::sync::OnceLock::new();
                let never = NEVER.get_or_init(CancellationToken::new);
                wait_until(Instant::now() + *d, never, timer).await;
            }
            Ok(Outcome {
                units: 1,
                ..Outcome::default()
            })
        }
        (Exec::Backend(op), _) | (Exec::Drawn, Some(Call::Op(op))) => {
            client.execute(op, payload).await
        }
        (Exec::Drawn, Some(Call::Bulk(op, batch))) => {
            let documents = Payload::Documents {
                body: &batch.body,
                count: batch.docs,
                pairs: batch.pairs(),
            };
            client.execute(op, &documents).await
        }
        (Exec::Runner(_), _) | (Exec::Drawn, _) => Err(crate::backend::OpError::new(
            crate::backend::ErrorKind::Internal,
            "a drawn operation came without its draw",
        )),
    }
}

/// When an operation was due, started and ended.
#[derive(Clone, Copy)]
struct Times {
    intended: Instant,
    start: Instant,
    end: Instant,
}

/// An operation's times and outcome (a warmup one only counted), with the reason of a bulk's
/// first failed item when the recorder wants one.
fn record_result<C: BackendClient>(
    recorder: &GroupRecorder,
    client: &mut C,
    warmup: bool,
    t: Times,
    result: &Result<Outcome, crate::backend::OpError>,
) {
    if warmup {
        recording(recorder, |r| {
            r.record_warmup(t.intended, t.start, t.end, result)
        });
        return;
    }
    let wants_reason = recording(recorder, |r| {
        r.record(t.intended, t.start, t.end, result);
        matches!(result, Ok(o) if o.failed_items > 0) && r.wants_item_failure_reason()
    });
    if wants_reason {
        if let Some(reason) = client.item_failure_reason() {
            recording(recorder, |r| r.set_item_failure_reason(reason));
        }
    }
}

/// One answer's recall@k: the share of the query's true k nearest among its first k hits.
fn record_recall<C: BackendClient>(
    recorder: &GroupRecorder,
    client: &mut C,
    recall: &Recall,
    query: usize,
) {
    let Some(truth) = recall.truth.hashed.get(query).filter(|t| !t.is_empty()) else {
        return;
    };
    if let Some(found) = client.hits_among(truth, recall.k) {
        let thousandths = u64::from(found) * 1000 / truth.len() as u64;
        recording(recorder, |r| r.record_recall(thousandths));
    }
}

/// Under `--on-error abort`, an error (or failed bulk items) stops the race, except the error
/// responses a task ignores (`ignore-response-error-level: non-fatal`).
fn abort_if_asked(shared: &Shared, result: &Result<Outcome, crate::backend::OpError>) {
    if !shared.abort_on_error {
        return;
    }
    match result {
        Err(e) if shared.ignore_response_errors && e.kind.is_response() => {}
        Err(e) => shared.abort_with(&e.message),
        Ok(o) if o.failed_items > 0 && !shared.ignore_response_errors => shared.abort_with(
            &format!("{} items of a bulk request failed", o.failed_items),
        ),
        Ok(_) => {}
    }
}

/// Runs `f` on a client's group recorder.
#[inline]
fn recording<R>(recorder: &GroupRecorder, f: impl FnOnce(&mut crate::metrics::Recorder) -> R) -> R {
    // SAFETY: a client runs only inside its group's task (`join_clients` spawns each group as
    // one task with the recorder made for it), and no closure here reaches the recorder again.
    unsafe { recorder.with(f) }
}
