//! The driver: runs a plan's steps in order against a backend, N clients per leaf on tokio,
//! and hands every finished trial to the caller (which stores it at once).

mod actions;
mod budget;
mod capacity;
mod client;
mod feed;
mod group_recorder;
mod groups;
mod live;
mod parts;
mod progress;
mod python;
mod retry;
mod schedule;
mod slice;
mod spawn;
mod stop;
mod telemetry;
mod timer;
mod vectors;
mod work;

pub use schedule::{wait_until, Schedule};
pub use slice::{Slice, StepGate};
pub use telemetry::{cpu_time, DriverUsage, ParamSourceUsage};

use crate::backend::server_stats::ServerUsage;
use crate::backend::Backend;
use crate::metrics::TrialMetrics;
use crate::ops::{OpSpec, PayloadSource};
use crate::plan::{sweep_label, Leaf, Plan, Step};
use client::{Exec, Shared};
use live::task_views;
pub use live::{plan_views, LiveSink};
use progress::Board;
pub use progress::TaskView;
use spawn::{client_runs, join_clients, LeafStart};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stop::StopSignal;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use work::CorpusFeed;

/// What to do when an operation fails.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum,
)]
#[serde(rename_all = "kebab-case")]
pub enum OnError {
    /// Count the error and go on; the error rate is reported.
    Continue,
    /// Stop the race at the first error, keeping what was measured.
    Abort,
}

#[derive(Clone)]
pub struct DriverOptions {
    pub on_error: OnError,
    pub progress: bool,
    /// This process's part of the race (the whole of it, unless it is one shard of several).
    pub slice: Slice,
    /// Where the shards meet before each step; None in a race of one process.
    pub gate: Option<Arc<dyn StepGate>>,
    /// The track's Python workers, where the track has some and the race runs its operations.
    pub python: Option<Arc<crate::python::Pool>>,
    /// Say what a capacity search does, probe by probe (unless the race is quiet).
    pub narrate: bool,
    /// Keep each request's timings, at most this many per trial (`--keep-samples`).
    pub keep_samples: Option<usize>,
    /// Without a terminal (and not quiet): a line after each step says how far the race is.
    pub log_progress: bool,
    /// Where each step and each second of the running tasks go as they happen (the live
    /// dashboard).
    pub live: Option<Arc<dyn LiveSink>>,
}

impl DriverOptions {
    /// A race run whole, by this process alone.
    pub fn whole(on_error: OnError, progress: bool) -> DriverOptions {
        DriverOptions {
            on_error,
            progress,
            slice: Slice::WHOLE,
            gate: None,
            python: None,
            narrate: false,
            keep_samples: None,
            log_progress: false,
            live: None,
        }
    }
}

/// One finished (or cut short) trial of a leaf.
pub struct TrialRun {
    /// Index of its task (at its sweep point) in `Plan::results`.
    pub result: usize,
    /// The runner's own CPU and memory during the trial.
    pub driver: DriverUsage,
    /// The server's statistics over the trial (None: the backend has none; an error: they
    /// could not be read).
    pub server: Option<Result<ServerUsage, String>>,
    pub trial: u64,
    pub started_at: chrono::DateTime<chrono::Utc>,
    /// The trial's time zero, when its clients started (the same instant on every shard).
    pub origin: Instant,
    pub wall: Duration,
    pub metrics: TrialMetrics,
    /// Why the trial could not run or stopped early (a corpus error, a failed prepare).
    pub failure: Option<String>,
    pub interrupted: bool,
    /// A warmup trial: shown, not recorded.
    pub warmup: bool,
    /// The capacity search this trial was (its probe at the capacity is the trial's metrics).
    pub capacity: Option<crate::capacity::CapacityRecord>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stop {
    Completed,
    /// Ctrl-C: what was measured is kept.
    Interrupted,
    /// `--on-error abort`, or a failing reset: the reason.
    Aborted(String),
}

pub struct Driver<B: Backend> {
    backend: Arc<B>,
    opts: DriverOptions,
    /// Cancelled by Ctrl-C or by an abort.
    cancel: CancellationToken,
    abort: Arc<Mutex<Option<String>>>,
}

impl<B: Backend> Driver<B> {
    pub fn new(backend: Arc<B>, opts: DriverOptions, cancel: CancellationToken) -> Self {
        Driver {
            backend,
            opts,
            cancel,
            abort: Arc::new(Mutex::new(None)),
        }
    }

    fn stop_reason(&self) -> Option<Stop> {
        if let Some(reason) = self.abort.lock().unwrap_or_else(|p| p.into_inner()).clone() {
            return Some(Stop::Aborted(reason));
        }
        self.cancel.is_cancelled().then_some(Stop::Interrupted)
    }

    /// Runs every step; `on_trial` is called as each trial ends, in order.
    pub async fn run(&self, plan: &Plan, on_trial: &mut (dyn FnMut(TrialRun) + Send)) -> Stop {
        let board = Board::new(plan, self.opts.progress, self.opts.log_progress);
        let mut counted = 0;
        for (index, step) in plan.steps.iter().enumerate() {
            if let Some(stop) = self.stop_reason() {
                return stop;
            }
            match step {
                Step::Reset { .. } if !self.opts.slice.runs_resets() => {}
                Step::Reset { before, operations } => {
                    for leaf in operations {
                        let run = self
                            .run_leaves(plan, std::slice::from_ref(leaf), None, None)
                            .await
                            .remove(0);
                        if let Some(stop) = self.stop_reason() {
                            return stop;
                        }
                        let failed = run.failure.clone().or_else(|| {
                            (run.metrics.counts.error_count() > 0)
                                .then(|| first_error(&run.metrics))
                        });
                        if let Some(why) = failed {
                            return Stop::Aborted(format!(
                                "reset before {before} failed: {} ({})",
                                leaf.operation.name, why
                            ));
                        }
                    }
                }
                Step::Run { leaves } => {
                    board.step_started(counted);
                    if let Some(live) = &self.opts.live {
                        live.step_started(counted, &task_views(plan, leaves));
                    }
                    let runs = match leaves.as_slice() {
                        [leaf] if leaf.capacity.is_some() => {
                            let spec = leaf.capacity.as_ref().expect("matched");
                            vec![self.run_capacity(plan, leaf, index, spec, &board).await]
                        }
                        _ => {
                            self.run_leaves(plan, leaves, Some(&board), Some(index))
                                .await
                        }
                    };
                    for run in runs {
                        if run.failure.is_some() && self.opts.on_error == OnError::Abort {
                            let mut reason = self.abort.lock().unwrap_or_else(|p| p.into_inner());
                            reason.get_or_insert_with(|| run.failure.clone().unwrap_or_default());
                            self.cancel.cancel();
                        }
                        on_trial(run);
                    }
                    board.step_ended();
                    if let Some(live) = &self.opts.live {
                        live.step_ended(counted);
                    }
                    counted += 1;
                }
            }
        }
        self.stop_reason().unwrap_or(Stop::Completed)
    }

    /// Runs leaves at once (one for a task, several for a parallel block); each spawns its own
    /// clients and shows its own bar. A step of the plan (`step`, not a reset) is where the
    /// shards of a race meet before they start.
    async fn run_leaves(
        &self,
        plan: &Plan,
        leaves: &[Leaf],
        board: Option<&Board>,
        step: Option<usize>,
    ) -> Vec<TrialRun> {
        let what = leaves
            .iter()
            .map(|l| trial_label(plan, l))
            .collect::<Vec<_>>()
            .join(" + ");
        let gate = step.and(self.opts.gate.as_deref());
        let start = slice::StepStart::new(leaves.len(), gate, step.unwrap_or(0), what);
        // Resets run whole, on shard 0 alone.
        let slice = match step {
            Some(_) => self.opts.slice,
            None => Slice::WHOLE,
        };
        // `completed-by`: the completing leaf's end stops the others of the block.
        let block_done = leaves
            .iter()
            .any(|l| l.completes_block)
            .then(CancellationToken::new);
        let (block_done, start) = (&block_done, &start);
        // The first leaf of a step tells the overall line how long its step has left.
        futures::future::join_all(leaves.iter().enumerate().map(|(i, leaf)| async move {
            let run = self
                .run_leaf(
                    plan,
                    leaf,
                    (board, i == 0),
                    block_done.as_ref(),
                    start,
                    slice,
                )
                .await;
            if leaf.completes_block {
                if let Some(done) = block_done {
                    done.cancel();
                }
            }
            run
        }))
        .await
    }

    async fn run_leaf(
        &self,
        plan: &Plan,
        leaf: &Leaf,
        board: (Option<&Board>, bool),
        block_done: Option<&CancellationToken>,
        start: &slice::StepStart<'_>,
        slice: Slice,
    ) -> TrialRun {
        let started_at = chrono::Utc::now();
        let wall_start = Instant::now();
        let label = trial_label(plan, leaf);
        let run = |metrics: TrialMetrics,
                   failure: Option<String>,
                   driver: DriverUsage,
                   origin: Instant| TrialRun {
            result: leaf.result.unwrap_or(0),
            driver,
            server: None,
            trial: leaf.trial,
            started_at,
            origin,
            wall: wall_start.elapsed(),
            interrupted: metrics.cut_short,
            metrics,
            failure,
            warmup: leaf.warmup_trial,
            capacity: None,
        };
        let failed = |why: String| {
            run(
                TrialMetrics::merge(Vec::new()),
                Some(format!("{label}: {why}")),
                DriverUsage::default(),
                wall_start,
            )
        };
        // Everything that may take a while (connecting thousands of clients, opening the
        // corpus) is done before the step's start, so that the shards start together.
        let prepared = self.prepare_leaf(leaf, block_done, slice).await;
        // The server's own statistics before the clients start (off the measured path, and
        // before the start, which the schedule counts from).
        let server_before = match prepared {
            Ok(Some(_)) => self.server_snapshot().await,
            _ => None,
        };
        let origin = match start.wait().await {
            Ok(origin) => origin,
            Err(why) => {
                // Ctrl-C while waiting is an interruption, not a failure of the rendezvous.
                if !self.cancel.is_cancelled() {
                    self.abort_race(&why);
                }
                return failed(why);
            }
        };
        let ready = match prepared {
            Err(why) => return failed(why),
            // This shard has no client of this task: it measured nothing, by design.
            Ok(None) => {
                return run(
                    TrialMetrics::merge(Vec::new()),
                    None,
                    DriverUsage::default(),
                    origin,
                )
            }
            Ok(Some(ready)) => ready,
        };
        let (metrics, failure, driver, server) = self
            .race_leaf(
                plan,
                leaf,
                &label,
                board,
                block_done,
                ready,
                LeafStart {
                    slice,
                    origin,
                    keep_samples: self.opts.keep_samples,
                },
                server_before,
            )
            .await;
        let mut trial = run(metrics, failure, driver, origin);
        trial.server = server;
        trial
    }

    /// What may take a while before a leaf starts: its prepared operation, corpus feed and
    /// connected clients; None when this shard runs none of its clients.
    async fn prepare_leaf(
        &self,
        leaf: &Leaf,
        block_done: Option<&CancellationToken>,
        slice: Slice,
    ) -> Result<Option<Ready<B::Client, B::Prepared>>, String> {
        let mine = slice.clients(leaf.clients);
        if mine.is_empty() {
            return Ok(None);
        }
        // A param source's feeds first: a custom runner drawing from it names it.
        let params = match &leaf.spec {
            OpSpec::Python(p) if p.param_source.is_some() => Some(
                python::start(
                    &self.backend,
                    &self.python_pool()?,
                    p,
                    mine.clone(),
                    leaf.clients,
                )
                .await
                .inspect_err(|why| self.abort_race(why))?,
            ),
            _ => None,
        };
        let exec = match &leaf.spec {
            OpSpec::Sleep(d) => Exec::Sleep(*d),
            OpSpec::Python(p) => match &p.runner {
                Some(name) => Exec::Runner(client::RunnerExec {
                    pool: self.python_pool()?,
                    name: name.clone(),
                    params: match &params {
                        Some(feeds) => client::RunnerParams::Source(feeds.sid),
                        None => client::RunnerParams::Fixed(
                            serde_json::to_string(&p.params).map_err(|e| e.to_string())?,
                        ),
                    },
                    unit: p.unit,
                }),
                None => Exec::Drawn,
            },
            spec => Exec::Backend(self.backend.prepare(spec).map_err(|e| e.message)?),
        };
        let cancel = self.cancel.child_token();
        let stop_with_block = match block_done {
            Some(done) if !leaf.completes_block => {
                let (done, stop) = (done.clone(), cancel.clone());
                Some(AbortOnDrop(tokio::spawn(async move {
                    done.cancelled().await;
                    stop.cancel();
                })))
            }
            _ => None,
        };
        let feed = match leaf.spec.payload_source() {
            PayloadSource::Corpus(bulk) => Some(Arc::new(
                feed::start_feed(leaf, bulk, cancel.clone(), slice).await?,
            )),
            _ => None,
        };
        let recall = match &leaf.spec {
            // An exact ground truth may take a while: Ctrl-C stops it too.
            OpSpec::VectorSearch(v) => Some(
                tokio::select! {
                    found = vectors::recall_of(self.backend.as_ref(), v) => found,
                    _ = self.cancel.cancelled() => Err("interrupted while finding the vector search's true neighbours, before the task started".to_string()),
                }
                .inspect_err(|why| self.abort_race(why))?,
            ),
            _ => None,
        };
        let mut clients = Vec::with_capacity(mine.clone().count());
        for _ in mine {
            let client = self.backend.connect().await;
            clients.push(client.map_err(|e| format!("cannot connect: {}", e.message))?);
        }
        Ok(Some(Ready {
            exec,
            feed,
            params,
            clients,
            cancel,
            recall,
            _stop_with_block: stop_with_block,
        }))
    }

    /// The race's Python workers, for an operation the track's Python drives.
    fn python_pool(&self) -> Result<Arc<crate::python::Pool>, String> {
        self.opts.python.clone().ok_or_else(|| {
            "the operation needs the track's Python, which this race did not start".to_string()
        })
    }

    /// Runs a prepared leaf's clients from the step's start to their end.
    #[allow(clippy::too_many_arguments)]
    async fn race_leaf(
        &self,
        plan: &Plan,
        leaf: &Leaf,
        label: &str,
        (board, lead): (Option<&Board>, bool),
        block_done: Option<&CancellationToken>,
        ready: Ready<B::Client, B::Prepared>,
        start: LeafStart,
        server_before: Option<Result<crate::backend::server_stats::ServerSnapshot, String>>,
    ) -> (
        TrialMetrics,
        Option<String>,
        DriverUsage,
        Option<Result<ServerUsage, String>>,
    ) {
        let Ready {
            exec,
            feed,
            mut params,
            clients,
            cancel,
            recall,
            _stop_with_block,
        } = ready;
        let shared = Arc::new(Shared {
            cancel,
            abort: self.abort.clone(),
            abort_on_error: self.opts.on_error == OnError::Abort,
            ignore_response_errors: leaf.ignore_response_errors,
            retry: leaf.retry,
            race_cancel: self.cancel.clone(),
            block_done: block_done.filter(|_| !leaf.completes_block).cloned(),
            task_label: label.to_string(),
            params: params.as_ref().map(|f| f.stats.clone()),
            unit_said: Default::default(),
            truth: recall,
        });
        let view = live::shard_view(plan, leaf, start.slice);
        // The shards start at one instant, on the shared clock.
        tokio::time::sleep_until(start.origin).await;
        let server_from = Instant::now();
        let stops: Vec<Arc<StopSignal>> = (0..clients.len()).map(|_| Arc::default()).collect();
        // Ctrl-C, SIGTERM or an abort drops the operations in flight; the end of a time
        // budget or of a completing task lets them finish.
        let race_cancel = self.cancel.clone();
        let signals = stops.clone();
        let _stop_in_flight = AbortOnDrop(tokio::spawn(async move {
            race_cancel.cancelled().await;
            signals.iter().for_each(|s| s.stop());
        }));
        let later = self.backend.descriptors_opened_later();
        let clients = clients.into_iter().zip(stops).collect();
        let runs = client_runs(
            leaf,
            start,
            clients,
            Arc::new(exec),
            feed.as_ref(),
            params
                .as_mut()
                .map(|f| std::mem::take(&mut f.feeds))
                .unwrap_or_default(),
            &shared,
            later,
        );
        let (progress, sampler) =
            live::watch(self.opts.live.as_ref(), view, runs.live(), (board, lead));
        let (recorders, mut failure) = join_clients(runs).await;
        let (mut driver, timeline) = sampler.finish();
        driver.param_source = params
            .as_ref()
            .map(|f| telemetry::ParamSourceUsage::of(&f.source, &f.stats, leaf.target_throughput));
        let server_after = self.server_snapshot().await;
        let server = match (server_before, server_after) {
            (Some(Ok(a)), Some(Ok(b))) => Some(Ok(ServerUsage::between(
                &a,
                &b,
                server_from.elapsed().as_secs_f64(),
            ))),
            (Some(Err(e)), _) | (_, Some(Err(e))) => Some(Err(e)),
            _ => None,
        };
        progress.finish();
        failure = failure.map(|e| format!("{label}: a client crashed: {e}"));
        if let Some(e) = feed.as_ref().and_then(|f| f.take_error()) {
            failure = Some(format!("{label}: {e}"));
        }
        if let Some(why) = self.param_source_failed(params.as_ref(), label) {
            failure = Some(why);
        }
        let mut metrics = TrialMetrics::merge(recorders);
        metrics.timeline = timeline;
        (metrics, failure, driver, server)
    }

    /// A param source that raised, drew what cannot run, or lost its worker ends the race: the
    /// track's Python is broken, and every later task would meet it too.
    fn param_source_failed<P>(
        &self,
        params: Option<&python::ParamFeeds<P>>,
        label: &str,
    ) -> Option<String> {
        let why = format!("{label}: {}", params?.take_error()?);
        self.abort_race(&why);
        Some(why)
    }

    /// Stops the race: the shards could not meet, so none can go on measuring a race the
    /// others are not running.
    fn abort_race(&self, why: &str) {
        let mut reason = self.abort.lock().unwrap_or_else(|p| p.into_inner());
        reason.get_or_insert_with(|| why.to_string());
        self.cancel.cancel();
    }

    /// The backend's statistics, unless Ctrl-C, SIGTERM or an abort comes first: a stuck
    /// server must not hold the stop up for its timeout.
    async fn server_snapshot(
        &self,
    ) -> Option<Result<crate::backend::server_stats::ServerSnapshot, String>> {
        tokio::select! {
            snapshot = self.backend.server_snapshot() => snapshot,
            _ = self.cancel.cancelled() => None,
        }
    }
}

/// How a trial is named in progress lines and failures: `task [sweep] trial 2/5`.
fn trial_label(plan: &Plan, leaf: &Leaf) -> String {
    match leaf.result {
        Some(index) => {
            let s = &plan.results[index];
            let (what, of) = if leaf.warmup_trial {
                ("warmup trial", s.warmup_trials)
            } else {
                ("trial", s.planned_trials)
            };
            format!(
                "{} [{}] {what} {}/{of}",
                leaf.task,
                sweep_label(&s.sweep),
                leaf.trial + 1
            )
        }
        None => format!("{} ({})", leaf.operation.name, leaf.task),
    }
}

/// A leaf prepared to start: what it runs, its corpus feed, its connected clients.
struct Ready<C, P> {
    exec: Exec<P>,
    feed: Option<Arc<CorpusFeed>>,
    /// The param source's queues, one per client.
    params: Option<python::ParamFeeds<P>>,
    clients: Vec<C>,
    cancel: CancellationToken,
    /// A vector search's true neighbours.
    recall: Option<client::Recall>,
    /// Stops the leaf when its `completed-by` block is done.
    _stop_with_block: Option<AbortOnDrop>,
}

/// Stops a helper task when the trial it watches is over.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn first_error(m: &TrialMetrics) -> String {
    m.counts
        .first_error
        .iter()
        .flatten()
        .next()
        .cloned()
        .unwrap_or_else(|| "an operation failed".into())
}

#[cfg(test)]
mod tests;
