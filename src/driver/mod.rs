//! The driver: runs a plan's steps in order against a backend, N clients per leaf on tokio,
//! and hands every finished trial to the caller (which stores it at once).

mod actions;
mod budget;
mod client;
mod group_recorder;
mod groups;
mod progress;
mod schedule;
mod slice;
mod stop;
mod telemetry;
mod timer;
mod work;

pub use schedule::{wait_until, Schedule};
pub use slice::{Slice, StepGate};
pub use telemetry::{cpu_time, DriverUsage};

use crate::backend::server_stats::ServerUsage;
use crate::backend::Backend;
use crate::metrics::{Recorder, TrialMetrics};
use crate::ops::{OpSpec, PayloadSource};
use crate::plan::{sweep_label, Leaf, Plan, Step, Work};
use budget::{Budget, IterationPool};
use client::{ClientRun, Exec, Shared, Source};
use group_recorder::GroupRecorder;
use progress::Progress;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use stop::StopSignal;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use work::{CorpusFeed, CorpusWarmup, FeedLimits, KeyGen};

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
}

impl DriverOptions {
    /// A race run whole, by this process alone.
    pub fn whole(on_error: OnError, progress: bool) -> DriverOptions {
        DriverOptions {
            on_error,
            progress,
            slice: Slice::WHOLE,
            gate: None,
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
        for (index, step) in plan.steps.iter().enumerate() {
            if let Some(stop) = self.stop_reason() {
                return stop;
            }
            match step {
                Step::Reset { .. } if !self.opts.slice.runs_resets() => {}
                Step::Reset { before, operations } => {
                    for leaf in operations {
                        let run = self
                            .run_leaves(plan, std::slice::from_ref(leaf), false, None)
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
                    let runs = self
                        .run_leaves(plan, leaves, self.opts.progress, Some(index))
                        .await;
                    for run in runs {
                        if run.failure.is_some() && self.opts.on_error == OnError::Abort {
                            let mut reason = self.abort.lock().unwrap_or_else(|p| p.into_inner());
                            reason.get_or_insert_with(|| run.failure.clone().unwrap_or_default());
                            self.cancel.cancel();
                        }
                        on_trial(run);
                    }
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
        show_progress: bool,
        step: Option<usize>,
    ) -> Vec<TrialRun> {
        let bars = progress::Bars::new(show_progress);
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
        futures::future::join_all(leaves.iter().map(|leaf| async {
            let run = self
                .run_leaf(plan, leaf, &bars, block_done.as_ref(), &start, slice)
                .await;
            if leaf.completes_block {
                if let Some(done) = &block_done {
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
        bars: &progress::Bars,
        block_done: Option<&CancellationToken>,
        start: &slice::StepStart<'_>,
        slice: Slice,
    ) -> TrialRun {
        let started_at = chrono::Utc::now();
        let wall_start = Instant::now();
        let label = trial_label(plan, leaf);
        let mine = slice.clients(leaf.clients);
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
        let prepared = async {
            if mine.is_empty() {
                return Ok(None);
            }
            let exec = match &leaf.spec {
                OpSpec::Sleep(d) => Exec::Sleep(*d),
                spec => Exec::Backend(self.backend.prepare(spec).map_err(|e| e.message)?),
            };
            let leaf_cancel = self.cancel.child_token();
            let stop_with_block = match block_done {
                Some(done) if !leaf.completes_block => {
                    let (done, stop) = (done.clone(), leaf_cancel.clone());
                    Some(AbortOnDrop(tokio::spawn(async move {
                        done.cancelled().await;
                        stop.cancel();
                    })))
                }
                _ => None,
            };
            let feed = match leaf.spec.payload_source() {
                PayloadSource::Corpus(bulk) => Some(Arc::new(
                    self.start_feed(leaf, bulk, leaf_cancel.clone(), slice)
                        .await?,
                )),
                _ => None,
            };
            let mut clients = Vec::with_capacity(mine.clone().count());
            for _ in mine.clone() {
                let client = self.backend.connect().await;
                clients.push(client.map_err(|e| format!("cannot connect: {}", e.message))?);
            }
            Ok(Some((exec, feed, clients, leaf_cancel, stop_with_block)))
        }
        .await;
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
        let (exec, feed, clients, leaf_cancel, _stop_with_block) = match prepared {
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
            Ok(Some(prepared)) => prepared,
        };
        let shared = Arc::new(Shared {
            cancel: leaf_cancel,
            abort: self.abort.clone(),
            abort_on_error: self.opts.on_error == OnError::Abort,
            ignore_response_errors: leaf.ignore_response_errors,
            race_cancel: self.cancel.clone(),
            block_done: block_done.filter(|_| !leaf.completes_block).cloned(),
            progress: AtomicU64::new(0),
            task_label: label.clone(),
        });
        let total_ops = match leaf.work {
            Work::Iterations { warmup, measured } => {
                Some(slice.share(warmup, leaf.clients) + slice.share(measured, leaf.clients))
            }
            _ => None,
        };
        // The shards start at one instant, on the shared clock.
        tokio::time::sleep_until(origin).await;
        let server_from = Instant::now();
        let progress = Progress::start(bars, &label, total_ops, shared.clone());
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
            LeafStart { slice, origin },
            clients,
            Arc::new(exec),
            feed.as_ref(),
            &shared,
            later,
        );
        let sampler = telemetry::Sampler::start();
        let (recorders, mut failure) = join_clients(runs).await;
        let driver = sampler.finish();
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
        let mut trial = run(TrialMetrics::merge(recorders), failure, driver, origin);
        trial.server = server;
        trial
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

    async fn start_feed(
        &self,
        leaf: &Leaf,
        bulk: &crate::ops::BulkSpec,
        cancel: CancellationToken,
        slice: Slice,
    ) -> Result<CorpusFeed, String> {
        let warmup_fraction = match leaf.work {
            Work::Corpus {
                warmup_fraction, ..
            } if warmup_fraction > 0.0 => Some(warmup_fraction),
            _ => None,
        };
        // The corpus size, when a share of it is asked for (ingest-percentage, a warmup fraction).
        let mut document_limit = leaf.document_limit;
        let mut total = None;
        let random_ids =
            matches!(bulk.conflicts, Some(c) if c.order == crate::ops::IdOrder::Random);
        if bulk.ingest_percentage.is_some() || warmup_fraction.is_some() || random_ids {
            let declared: Option<u64> = bulk.files.iter().map(|f| f.document_count).sum();
            let n = match declared {
                Some(n) => n,
                None => {
                    let files = bulk.files.clone();
                    let limit = leaf.document_limit;
                    tokio::task::spawn_blocking(move || {
                        crate::corpus::count_documents(&files, limit)
                    })
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())?
                }
            };
            let n = document_limit.map_or(n, |l| n.min(l));
            if let Some(pct) = bulk.ingest_percentage {
                document_limit = Some((n as f64 * pct / 100.0).floor() as u64);
            }
            total = Some(document_limit.map_or(n, |l| n.min(l)));
        }
        let limits = FeedLimits {
            bulk_size: bulk.bulk_size.0,
            flush_bytes: bulk.flush_bytes.map(|b| b.0),
            max_requests: match leaf.work {
                Work::Iterations { warmup, measured } => {
                    Some(slice.share(warmup, leaf.clients) + slice.share(measured, leaf.clients))
                }
                _ => None,
            },
            document_limit,
            looped: bulk.looped,
            owned: (!slice.is_whole()).then(|| (slice.clients(leaf.clients), leaf.clients)),
        };
        let warmup_docs = match (warmup_fraction, total) {
            (Some(warmup_fraction), Some(total)) => match bulk.flush_bytes {
                None => CorpusWarmup::Requests(
                    (warmup_fraction * total.div_ceil(bulk.bulk_size.0) as f64).floor() as u64,
                ),
                Some(_) => CorpusWarmup::Documents((warmup_fraction * total as f64).floor() as u64),
            },
            _ => match leaf.work {
                Work::Corpus { warmup_time, .. } if !warmup_time.is_zero() => {
                    CorpusWarmup::Until(Instant::now() + warmup_time)
                }
                Work::Corpus {
                    warmup_requests, ..
                } => CorpusWarmup::Requests(warmup_requests),
                _ => CorpusWarmup::Requests(0),
            },
        };
        let actions = actions::BulkActions::new(bulk.conflicts, total, 0x1D5 ^ leaf.trial);
        CorpusFeed::start(
            bulk.files.clone(),
            limits,
            actions,
            leaf.clients,
            warmup_docs,
            cancel,
        )
        .map_err(|e| e.to_string())
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

/// The clients of a leaf in their groups (see `groups`), each group with the recorder its
/// clients share.
struct ClientGroups<F> {
    groups: Vec<Vec<F>>,
    recorders: Vec<Arc<GroupRecorder>>,
}

/// Each client's loop, ready to spawn: its schedule, budget and payload source, in its group
/// with the group's recorder, all sharing one time zero.
/// When a leaf's clients start, and which of them this process runs.
struct LeafStart {
    slice: Slice,
    origin: Instant,
}

fn client_runs<C: crate::backend::BackendClient>(
    leaf: &Leaf,
    start: LeafStart,
    clients: Vec<(C, Arc<StopSignal>)>,
    exec: Arc<Exec<C::Prepared>>,
    feed: Option<&Arc<CorpusFeed>>,
    shared: &Arc<Shared>,
    later_per_client: u64,
) -> ClientGroups<impl std::future::Future<Output = ()> + Send + 'static> {
    let LeafStart { slice, origin } = start;
    let first_client = slice.clients(leaf.clients).start;
    let expected_secs = match leaf.work {
        Work::Time { warmup, measured } => (warmup + measured).as_secs() as usize + 1,
        _ => 16,
    };
    // The time between two operations of the whole task at its target rate. The measured
    // window runs to the end of the last operation's slot: N operations at rate r span N/r.
    // Clients are staggered by this much, so a client's own interval (N times longer) would
    // stretch the merged window by the stagger (1 s of 16 at 10,000 clients at 1 op/s each).
    let slot = match leaf.target_throughput {
        Some(t) if leaf.schedule != crate::track::ScheduleKind::Unthrottled => t.interval(),
        _ => Duration::ZERO,
    };
    let pool = match leaf.work {
        Work::Iterations { warmup, measured } => Some(IterationPool::new(
            slice.share(warmup, leaf.clients),
            slice.share(measured, leaf.clients),
            clients.len() as u64,
        )),
        _ => None,
    };
    let workers = tokio::runtime::Handle::current().metrics().num_workers();
    let tasks = groups::task_count(clients.len(), workers);
    let waits =
        (!slot.is_zero() || !leaf.ramp_up.is_zero()) && timers_fit(clients.len(), later_per_client);
    let recorders: Vec<Arc<GroupRecorder>> = (0..tasks)
        .map(|_| {
            let recorder = Recorder::new(origin, expected_secs, slot);
            GroupRecorder::new(match leaf.spec.counted_parts() {
                Some(labels) => recorder.with_parts(labels, leaf.spec.times_parts()),
                None => recorder,
            })
        })
        .collect();
    let mut groups: Vec<Vec<_>> = (0..tasks).map(|_| Vec::new()).collect();
    for (i, (client, stop)) in clients.into_iter().enumerate() {
        let group = i % tasks;
        // The client's place in the whole task: its schedule and keys are those it would
        // have in a race of one process.
        let i = first_client + i as u64;
        let budget = match (leaf.work, &pool) {
            (_, Some(pool)) => Budget::iterations(pool),
            (Work::Time { warmup, measured }, _) => Budget::Time {
                warmup_end: origin + warmup,
                end: origin + warmup + measured,
            },
            _ => Budget::Corpus,
        };
        let source = match (leaf.spec.payload_source(), feed) {
            (_, Some(feed)) => Source::Corpus(feed.clone()),
            (PayloadSource::Keys(kv), _) => Source::Keys(KeyGen::new(kv, i)),
            _ => Source::None,
        };
        let run = ClientRun {
            client,
            timer: (waits && cfg!(not(test))).then(precise_timer).flatten(),
            stop,
            exec: exec.clone(),
            schedule: Schedule::new(
                leaf.schedule,
                leaf.target_throughput,
                origin + ramp_delay(leaf, i),
                i,
                leaf.clients,
                0x5EED ^ leaf.trial,
            ),
            budget,
            source,
            recorder: recorders[group].clone(),
        };
        let (delay, shared) = (ramp_delay(leaf, i), shared.clone());
        groups[group].push(async move {
            // A ramped-up client starts late; Ctrl-C while it waits stops it at once.
            if !delay.is_zero()
                && !wait_until(origin + delay, &shared.cancel, run.timer.as_ref()).await
            {
                return run.stopped_before_start(&shared);
            }
            run.run(shared).await
        });
    }
    ClientGroups { groups, recorders }
}

/// Runs each group of clients as one task and collects the groups' recorders; a client that
/// panicked is named by the last such message.
async fn join_clients<F>(clients: ClientGroups<F>) -> (Vec<Recorder>, Option<String>)
where
    F: std::future::Future<Output = ()> + Send + 'static,
{
    let mut crashed = None;
    for group in groups::spawn(clients.groups) {
        match group.await {
            Ok(outputs) => {
                if let Some(e) = outputs.into_iter().filter_map(Result::err).last() {
                    crashed = Some(e);
                }
            }
            Err(e) => crashed = Some(e.to_string()),
        }
    }
    // Every client has ended and dropped its handle: each recorder is the group's alone.
    let mut recorders = Vec::with_capacity(clients.recorders.len());
    for recorder in clients.recorders {
        match recorder.into_inner() {
            Some(r) => recorders.push(r),
            None => {
                crashed =
                    Some("a group of clients ended without giving back its measurements".into())
            }
        }
    }
    (recorders, crashed)
}

/// Whether a timerfd per client fits the open-files limit beside the descriptors clients open
/// on their first request (an HTTP connection per host): those come first.
fn timers_fit(clients: usize, later_per_client: u64) -> bool {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return false;
    }
    let open = std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count()) as u64;
    let needed = open + (1 + later_per_client) * clients as u64 + 64;
    let fits = lim.rlim_cur >= needed;
    if !fits {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("warning: a timerfd for each of {clients} throttled clients does not fit the open-files limit ({}): they wait on tokio's 1 ms timer and spin the rest, which costs CPU (raise `ulimit -n` to {needed} to avoid it)", lim.rlim_cur));
    }
    fits
}

/// A client's timerfd; when the system refuses one (out of descriptors), the client waits on
/// tokio's timer and spins the last 2 ms instead, and the first refusal is said.
fn precise_timer() -> Option<timer::PreciseTimer> {
    static SAID: std::sync::Once = std::sync::Once::new();
    timer::PreciseTimer::new()
        .inspect_err(|e| SAID.call_once(|| eprintln!("warning: no timerfd for a throttled client ({e}): it waits on tokio's 1 ms timer and spins the rest, which costs CPU")))
        .ok()
}

/// When client `i` of a leaf starts, after the first: `i/n` of the ramp-up.
fn ramp_delay(leaf: &Leaf, i: u64) -> Duration {
    leaf.ramp_up.mul_f64(i as f64 / leaf.clients.max(1) as f64)
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
