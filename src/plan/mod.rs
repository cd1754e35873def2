//! The interpreter: turns a track, a challenge and parameters into the task graph the driver
//! runs. Sweeps expand into a matrix, trials repeat with resets before them, and parallel
//! blocks become one step of several leaves. The graph is the only thing the driver runs.

mod estimate;
mod filter;
mod rally_workers;
mod rate;
mod render;
mod sweep;

pub use estimate::{leaf_duration, step_duration};
pub use filter::{TaskFilter, TaskSelection};
pub use render::render_text;
use sweep::{expand, Point};

use crate::ops::{self, OpSpec};
use crate::track::{
    Challenge, OperationDef, ScheduleItem, ScheduleKind, TaskSpec, Track, TrackError,
    TrackErrorKind, Warmup,
};
use crate::units::{OpsPerSec, ThroughputUnit};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::time::Duration;

/// How `--test-mode` shrinks a race so that it finishes in seconds.
pub const TEST_MODE_DOCUMENTS: u64 = 1_000;
const TEST_MODE_ITERATIONS: u64 = 20;
const TEST_MODE_WARMUP_ITERATIONS: u64 = 5;
const TEST_MODE_TIME: Duration = Duration::from_secs(1);
const TEST_MODE_RAMP_UP: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub test_mode: bool,
    /// The tasks that run (`--include-tasks`, `--exclude-tasks`).
    pub tasks: TaskSelection,
    /// esrally's worker processes, which cut a Rally track's bulks (`split: rally`); this
    /// machine's cores when unset, as esrally's `available.cores`.
    pub rally_workers: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct Plan {
    pub track: String,
    pub challenge: String,
    pub test_mode: bool,
    pub params: Map<String, Value>,
    /// One entry per task × sweep point: where the trials of a leaf are reported.
    pub results: Vec<ResultSlot>,
    pub steps: Vec<Step>,
}

/// A task at one sweep point; its trials are collected together. The stored race keeps it
/// as it was planned, beside the trials that ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ResultSlot {
    pub task: String,
    pub operation: String,
    /// The operation type's name (`bulk`, `search`, ...), as the registry spells it.
    pub operation_type: String,
    /// The swept values of this point (empty when the task does not sweep).
    pub sweep: Map<String, Value>,
    pub clients: u64,
    pub target_throughput: Option<OpsPerSec>,
    pub schedule: ScheduleKind,
    pub throughput_unit: ThroughputUnit,
    /// Trials the plan asks for; a stored race may hold fewer if it stopped early.
    pub planned_trials: u64,
    /// Whole trials run first and not recorded.
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub warmup_trials: u64,
    /// For key-value operations: what they send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_value: Option<crate::ops::KvInfo>,
    /// `include-in-reporting`: false leaves it out of reports (it still runs and is stored).
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub reported: bool,
    /// Pass/fail criteria on the results (the track's, then `--threshold`'s).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<crate::thresholds::Threshold>,
    /// `target-throughput: max`: each trial is a search for the highest rate that holds this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::track::rate::CapacitySpec>,
    /// `target-throughput: {stages}`: the intended rates over the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::track::rate::Ramp>,
}

fn yes() -> bool {
    true
}

fn is_true(b: &bool) -> bool {
    *b
}

impl ResultSlot {
    /// `bulk-size=500`, or `-` when the task does not sweep.
    pub fn sweep_label(&self) -> String {
        sweep_label(&self.sweep)
    }
}

pub fn sweep_label(sweep: &Map<String, Value>) -> String {
    if sweep.is_empty() {
        return "-".into();
    }
    sweep
        .iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[derive(Debug, Serialize)]
#[serde(tag = "step", rename_all = "kebab-case")]
pub enum Step {
    /// Operations run before a trial to bring the system back to a known state; not reported.
    Reset {
        before: String,
        operations: Vec<Leaf>,
    },
    /// Leaves that run at once (one leaf for an ordinary task, several for `parallel`).
    Run { leaves: Vec<Leaf> },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Work {
    /// A fixed number of operations across all clients, warmup first.
    Iterations { warmup: u64, measured: u64 },
    /// Run for a time; operations that start in the warmup period are not measured.
    Time {
        #[serde(with = "crate::units::serde_secs")]
        warmup: Duration,
        #[serde(with = "crate::units::serde_secs")]
        measured: Duration,
    },
    /// Bulk through the whole corpus; requests starting in the first `warmup_fraction` of the
    /// documents, in the first `warmup_time` of the task, or the first `warmup_requests`
    /// requests (Rally's `warmup-iterations` on a bulk task), are warmup.
    Corpus {
        warmup_fraction: f64,
        #[serde(
            with = "crate::units::serde_secs",
            default,
            skip_serializing_if = "Duration::is_zero"
        )]
        warmup_time: Duration,
        #[serde(default, skip_serializing_if = "crate::units::is_zero")]
        warmup_requests: u64,
    },
}

#[derive(Debug, Clone, Serialize)]
pub struct Leaf {
    /// Index into `Plan::results`; None for reset operations.
    pub result: Option<usize>,
    pub task: String,
    pub operation: OperationDef,
    #[serde(skip)]
    pub spec: OpSpec,
    #[serde(skip)]
    pub op_type: &'static ops::OperationType,
    pub clients: u64,
    pub work: Work,
    pub target_throughput: Option<OpsPerSec>,
    pub schedule: ScheduleKind,
    /// 0-based trial number of this leaf within its result slot (of the warmup trials when
    /// `warmup_trial`).
    pub trial: u64,
    /// A whole trial run before the recorded ones; its results are not kept.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub warmup_trial: bool,
    /// `ignore-response-error-level: non-fatal`: error responses do not abort.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ignore_response_errors: bool,
    /// When an operation is tried again after a failure (the task's `retry`).
    #[serde(skip)]
    pub retry: Option<crate::track::RetryPolicy>,
    /// In a parallel block with `completed-by`: this leaf's end stops the others.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub completes_block: bool,
    /// Client i of n starts i/n of this after the first.
    #[serde(
        with = "crate::units::serde_secs",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub ramp_up: Duration,
    /// Documents to read from the corpus at most (test mode).
    pub document_limit: Option<u64>,
    /// A capacity search: the driver runs probes at rates it chooses (`target_throughput`
    /// is each probe's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capacity: Option<crate::track::rate::CapacitySpec>,
    /// Arrival rates that follow a ramp instead of `target_throughput`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ramp: Option<crate::track::rate::Ramp>,
    /// A Rally track's bulk: the task-client ranges of esrally's workers, each reading its
    /// own slice of the corpus (see `rally_workers`); empty: one queue for every client.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub corpus_parts: Vec<std::ops::Range<u64>>,
}

struct Builder<'a> {
    track: &'a Track,
    opts: &'a PlanOptions,
    challenge_trials: u64,
    results: Vec<ResultSlot>,
    steps: Vec<Step>,
    /// While a parallel block's leaf is built: whether another task's end stops it.
    stopped_by_block: bool,
}

pub fn build(track: &Track, challenge: &Challenge, opts: &PlanOptions) -> Result<Plan, TrackError> {
    build_unlocated(track, challenge, opts).map_err(|e| track.locate(e))
}

/// More task runs than this in one race is a sweep written by mistake (or by an attacker):
/// refused before the matrix is built, so that planning cannot exhaust memory.
pub const MAX_TASK_RUNS: u64 = 100_000;

/// Sweep points × trials of a task, saturating.
fn task_runs(task: &TaskSpec, trials: u64) -> u64 {
    let mut points = task.clients.len().max(1) as u64;
    points = points.saturating_mul(task.targets.as_ref().map_or(1, |t| t.len().max(1) as u64));
    points = points.saturating_mul(
        task.iterations
            .as_ref()
            .map_or(1, |t| t.len().max(1) as u64),
    );
    for v in task.params.values() {
        if let Value::Array(items) = v {
            points = points.saturating_mul(items.len().max(1) as u64);
        }
    }
    points.saturating_mul(trials)
}

fn check_size(track: &Track, challenge: &Challenge) -> Result<(), TrackError> {
    let mut total = 0u64;
    for item in &challenge.schedule {
        let (runs, path) = match item {
            ScheduleItem::Task(t) => (
                task_runs(t, t.trials.saturating_add(t.warmup_trials)),
                t.path.clone(),
            ),
            ScheduleItem::Parallel { tasks, trials, .. } => (
                tasks.len() as u64 * trials,
                tasks.first().map(|t| t.path.clone()).unwrap_or_default(),
            ),
        };
        total = total.saturating_add(runs.saturating_mul(challenge.trials));
        if total > MAX_TASK_RUNS {
            return Err(TrackError::new(
                TrackErrorKind::Invalid,
                &track.file,
                format!("challenge `{}` would run more than {MAX_TASK_RUNS} task runs (sweep points × trials; {runs} from this task alone); sweep fewer values", challenge.name),
            )
            .with_path(path));
        }
    }
    Ok(())
}

fn build_unlocated(
    track: &Track,
    challenge: &Challenge,
    opts: &PlanOptions,
) -> Result<Plan, TrackError> {
    check_size(track, challenge)?;
    let mut b = Builder {
        track,
        opts,
        challenge_trials: challenge.trials,
        results: Vec::new(),
        steps: Vec::new(),
        stopped_by_block: false,
    };
    // Result slots are made once per task x sweep point; every trial (of the task, and of the
    // challenge) adds a leaf to the same slot.
    let mut slots: Vec<Vec<usize>> = Vec::new();
    for item in &challenge.schedule {
        slots.push(match item {
            ScheduleItem::Task(task) if b.included(task) => {
                b.slots_for(task, &expand(task), task.trials, task.warmup_trials)?
            }
            ScheduleItem::Parallel { tasks, trials, .. } => {
                let mut ids = Vec::new();
                let included: Vec<&TaskSpec> = tasks.iter().filter(|t| b.included(t)).collect();
                for task in included {
                    ids.extend(b.slots_for(task, &expand(task)[..1], *trials, 0)?);
                }
                ids
            }
            ScheduleItem::Task(_) => Vec::new(),
        });
    }
    for challenge_trial in 0..challenge.trials {
        if !challenge.reset.is_empty() {
            let ops = b.reset_leaves(&challenge.reset, &format!("challenge {}", challenge.name))?;
            b.steps.push(Step::Reset {
                before: format!("challenge trial {}", challenge_trial + 1),
                operations: ops,
            });
        }
        for (item, ids) in challenge.schedule.iter().zip(&slots) {
            match item {
                ScheduleItem::Task(task) if b.included(task) => {
                    b.task(task, ids, challenge_trial)?
                }
                ScheduleItem::Parallel {
                    name,
                    tasks,
                    trials,
                    reset,
                    completed_by,
                } => {
                    let completing = completed_by.map(|i| tasks[i].name.as_str());
                    let tasks: Vec<&TaskSpec> = tasks.iter().filter(|t| b.included(t)).collect();
                    if !tasks.is_empty() {
                        b.parallel(
                            name,
                            &tasks,
                            *trials,
                            reset,
                            ids,
                            challenge_trial,
                            completing,
                        )?;
                    }
                }
                ScheduleItem::Task(_) => {}
            }
        }
    }
    if b.steps.iter().all(|s| matches!(s, Step::Reset { .. })) {
        let what = opts
            .tasks
            .describe()
            .unwrap_or_else(|| "the challenge has no tasks".into());
        return Err(TrackError::new(
            TrackErrorKind::Invalid,
            &track.file,
            format!("nothing to run: {what} in challenge `{}`", challenge.name),
        ));
    }
    let workers = opts
        .rally_workers
        .unwrap_or_else(rally_workers::this_machines_workers);
    rally_workers::split_rally_bulks(&mut b.steps, workers);
    Ok(Plan {
        track: track.name.clone(),
        challenge: challenge.name.clone(),
        test_mode: opts.test_mode,
        params: track.params.clone(),
        results: b.results,
        steps: b.steps,
    })
}

/// The documents a test-mode race reads of an operation's corpus: the first 1,000; or, for a
/// track its front end shrank (Rally's test mode: each file's `-1k` variant, at most 1,000
/// documents of each), every file as its count declares.
fn test_mode_documents(spec: &OpSpec, shrunk: bool) -> u64 {
    let OpSpec::Bulk(bulk) = spec else {
        return TEST_MODE_DOCUMENTS;
    };
    let declared: Option<u64> = bulk.files.iter().map(|f| f.document_count).sum();
    match declared {
        Some(n) if shrunk => n,
        _ => TEST_MODE_DOCUMENTS,
    }
}

impl Builder<'_> {
    fn included(&self, t: &TaskSpec) -> bool {
        self.opts.tasks.keeps(t)
    }

    fn spec(
        &self,
        def: &OperationDef,
        path: &str,
    ) -> Result<(&'static ops::OperationType, OpSpec), TrackError> {
        ops::parse(&def.kind, &def.params, &self.track.context()).map_err(|e| {
            let at = self.param_path(def, path, &e.param);
            TrackError::new(
                TrackErrorKind::Invalid,
                &self.track.file,
                format!("operation `{}`: {}", def.name, e.message),
            )
            .with_path(at)
        })
    }

    /// The YAML path of operation param `param`: the task's `params` when the task set it, else
    /// the operation's own definition (named, or inline under the task).
    fn param_path(&self, def: &OperationDef, task_path: &str, param: &str) -> String {
        if param.is_empty() || !task_path.starts_with('/') {
            return task_path.to_string();
        }
        let set_by_task = self
            .track
            .challenges
            .iter()
            .flat_map(|c| c.tasks())
            .any(|t| t.path == task_path && t.params.contains_key(param));
        if set_by_task {
            return format!("{task_path}/params/{param}");
        }
        match self.track.operation_path(&def.name) {
            Some(op) => format!("{op}/params/{param}"),
            None => format!("{task_path}/operation/params/{param}"),
        }
    }

    fn reset_leaves(&self, defs: &[OperationDef], owner: &str) -> Result<Vec<Leaf>, TrackError> {
        defs.iter()
            .map(|def| {
                let (op_type, spec) = self.spec(def, "reset")?;
                let document_limit = self
                    .opts
                    .test_mode
                    .then(|| test_mode_documents(&spec, self.track.shrunk_for_test_mode));
                Ok(Leaf {
                    result: None,
                    task: format!("reset of {owner}"),
                    operation: def.clone(),
                    op_type,
                    spec,
                    clients: 1,
                    work: Work::Iterations {
                        warmup: 0,
                        measured: 1,
                    },
                    target_throughput: None,
                    schedule: ScheduleKind::Unthrottled,
                    trial: 0,
                    warmup_trial: false,
                    ignore_response_errors: false,
                    retry: None,
                    completes_block: false,
                    ramp_up: Duration::ZERO,
                    document_limit,
                    capacity: None,
                    ramp: None,
                    corpus_parts: Vec::new(),
                })
            })
            .collect()
    }

    fn work(
        &self,
        task: &TaskSpec,
        spec: &OpSpec,
        iterations: Option<u64>,
    ) -> Result<Work, TrackError> {
        let tm = self.opts.test_mode;
        let invalid = |m: String| {
            TrackError::new(TrackErrorKind::Invalid, &self.track.file, m).with_path(&task.path)
        };
        let work = match (iterations, task.time_period) {
            (Some(n), _) => {
                let (warmup, measured) = match task.warmup {
                    Warmup::None => (0, n),
                    Warmup::Iterations(w) => (w, n),
                    Warmup::Fraction(f) => {
                        let w = (f * n as f64).floor() as u64;
                        (w, n - w)
                    }
                    Warmup::Time(_) => return Err(invalid("a time warmup needs a time-period task".into())),
                };
                if measured == 0 {
                    return Err(invalid(format!("the warmup takes all {n} iterations: nothing would be measured")));
                }
                if tm && !self.track.shrunk_for_test_mode {
                    Work::Iterations { warmup: warmup.min(TEST_MODE_WARMUP_ITERATIONS), measured: measured.min(TEST_MODE_ITERATIONS) }
                } else {
                    Work::Iterations { warmup, measured }
                }
            }
            (None, Some(period)) => {
                let (warmup, measured) = match task.warmup {
                    Warmup::None => (Duration::ZERO, period),
                    Warmup::Time(w) => (w, period - w.min(period)),
                    Warmup::Fraction(f) => (period.mul_f64(f), period.mul_f64(1.0 - f)),
                    Warmup::Iterations(_) => return Err(invalid("a warmup iteration count needs an iterations task".into())),
                };
                if tm {
                    // No warmup time in test mode, as in Rally's: a bulk over a 1,000-document
                    // corpus ends within any warmup and would measure nothing. A front end that
                    // shrank the track kept its own cap (Rally's: 10 s).
                    let cap = if self.track.shrunk_for_test_mode { Duration::MAX } else { TEST_MODE_TIME };
                    Work::Time { warmup: Duration::ZERO, measured: measured.min(cap) }
                } else {
                    Work::Time { warmup, measured }
                }
            }
            (None, None) if matches!(spec, OpSpec::Bulk(b) if b.looped) && !self.stopped_by_block => {
                return Err(invalid("a `looped` bulk never runs out of documents: give it `iterations` or a `time-period`, or run it in a `parallel` block `completed-by` another task".into()))
            }
            (None, None) if matches!(spec, OpSpec::Bulk(_)) => match task.warmup {
                Warmup::None => Work::Corpus { warmup_fraction: 0.0, warmup_time: Duration::ZERO, warmup_requests: 0 },
                Warmup::Fraction(f) => Work::Corpus { warmup_fraction: f, warmup_time: Duration::ZERO, warmup_requests: 0 },
                // Rally's `warmup-time-period` on a bulk task: requests of the first seconds.
                // Test mode (as Rally's) drops it: a 1,000-document corpus is gone in less, and
                // would measure nothing.
                Warmup::Time(w) => Work::Corpus { warmup_fraction: 0.0, warmup_time: if tm { Duration::ZERO } else { w }, warmup_requests: 0 },
                // The first N bulk requests, as Rally's `warmup-iterations` on a bulk task (its
                // per-client count times the clients); none in test mode, for the same reason.
                Warmup::Iterations(n) => Work::Corpus { warmup_fraction: 0.0, warmup_time: Duration::ZERO, warmup_requests: if tm { 0 } else { n } },
            },
            (None, None) => match task.warmup {
                Warmup::None => Work::Iterations { warmup: 0, measured: 1 },
                Warmup::Iterations(w) => Work::Iterations { warmup: w.min(if tm && !self.track.shrunk_for_test_mode { TEST_MODE_WARMUP_ITERATIONS } else { u64::MAX }), measured: 1 },
                _ => return Err(invalid("give `iterations` or `time-period` for this warmup".into())),
            },
        };
        Ok(work)
    }

    fn leaf(
        &mut self,
        task: &TaskSpec,
        point: &Point,
        slot: usize,
        trial: u64,
    ) -> Result<Leaf, TrackError> {
        let mut def = task.operation.clone();
        def.params.extend(point.params.clone());
        let (op_type, spec) = self.spec(&def, &task.path)?;
        let document_limit = self
            .opts
            .test_mode
            .then(|| test_mode_documents(&spec, self.track.shrunk_for_test_mode));
        let work = match rate::special_work(task, self.opts.test_mode) {
            Some(work) => work,
            None => self.work(task, &spec, point.iterations)?,
        };
        let (capacity, ramp) = rate::special_target(task, self.opts.test_mode);
        Ok(Leaf {
            op_type,
            result: Some(slot),
            task: task.name.clone(),
            work,
            capacity,
            ramp,
            operation: def,
            spec,
            clients: point.clients,
            // Test mode runs unthrottled, as Rally's does: a target of 0.5 ops/s would make a
            // check of the setup take minutes.
            target_throughput: point.target.filter(|_| !self.opts.test_mode),
            schedule: if rate::throttled(task, point.target) && !self.opts.test_mode {
                task.schedule
            } else {
                ScheduleKind::Unthrottled
            },
            trial,
            warmup_trial: false,
            ignore_response_errors: task.ignore_response_errors,
            retry: task.retry,
            completes_block: false,
            ramp_up: if self.opts.test_mode {
                task.ramp_up.min(TEST_MODE_RAMP_UP)
            } else {
                task.ramp_up
            },
            document_limit,
            corpus_parts: Vec::new(),
        })
    }

    fn slots_for(
        &mut self,
        task: &TaskSpec,
        points: &[Point],
        trials: u64,
        warmup_trials: u64,
    ) -> Result<Vec<usize>, TrackError> {
        let mut ids = Vec::new();
        for p in points {
            let mut def = task.operation.clone();
            def.params.extend(p.params.clone());
            let (op_type, spec) = self.spec(&def, &task.path)?;
            let key_value = match &spec {
                OpSpec::Kv(kv) => Some(crate::ops::KvInfo::of(kv)),
                _ => None,
            };
            let schedule = if rate::throttled(task, p.target) {
                task.schedule
            } else {
                ScheduleKind::Unthrottled
            };
            self.results.push(ResultSlot {
                task: task.name.clone(),
                operation: task.operation.name.clone(),
                operation_type: op_type.name.to_string(),
                sweep: p.sweep.clone(),
                clients: p.clients,
                target_throughput: p.target,
                schedule,
                throughput_unit: spec.throughput_unit(op_type),
                planned_trials: trials * self.challenge_trials,
                warmup_trials: warmup_trials * self.challenge_trials,
                key_value,
                reported: task.reported,
                thresholds: task.thresholds.clone(),
                capacity: rate::special_target(task, self.opts.test_mode).0,
                ramp: rate::special_target(task, self.opts.test_mode).1,
            });
            ids.push(self.results.len() - 1);
        }
        Ok(ids)
    }

    fn task(
        &mut self,
        task: &TaskSpec,
        ids: &[usize],
        challenge_trial: u64,
    ) -> Result<(), TrackError> {
        let points = expand(task);
        for (point, slot) in points.iter().zip(ids) {
            // Warmup trials first, each with its reset, exactly as the recorded ones run.
            for (warmup, t, count) in (0..task.warmup_trials)
                .map(|t| (true, t, task.warmup_trials))
                .chain((0..task.trials).map(|t| (false, t, task.trials)))
            {
                let trial = challenge_trial * count + t;
                if !task.reset.is_empty() {
                    let what = if warmup { "warmup trial" } else { "trial" };
                    let ops = self.reset_leaves(&task.reset, &task.name)?;
                    self.steps.push(Step::Reset {
                        before: format!(
                            "{} [{}] {what} {}",
                            task.name,
                            sweep_label(&point.sweep),
                            t + 1
                        ),
                        operations: ops,
                    });
                }
                let mut leaf = self.leaf(task, point, *slot, trial)?;
                leaf.warmup_trial = warmup;
                self.steps.push(Step::Run { leaves: vec![leaf] });
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn parallel(
        &mut self,
        name: &str,
        tasks: &[&TaskSpec],
        trials: u64,
        reset: &[OperationDef],
        ids: &[usize],
        challenge_trial: u64,
        completing: Option<&str>,
    ) -> Result<(), TrackError> {
        for t in 0..trials {
            if !reset.is_empty() {
                let ops = self.reset_leaves(reset, name)?;
                self.steps.push(Step::Reset {
                    before: format!("{name} trial {}", t + 1),
                    operations: ops,
                });
            }
            let mut leaves = Vec::new();
            for (task, slot) in tasks.iter().zip(ids) {
                let point = expand(task).remove(0);
                // Another task's end stops this one (Rally's `completed-by`): a looped bulk
                // needs no end of its own.
                self.stopped_by_block = completing.is_some_and(|c| c != task.name);
                let leaf = self.leaf(task, &point, *slot, challenge_trial * trials + t);
                self.stopped_by_block = false;
                let mut leaf = leaf?;
                leaf.completes_block = completing == Some(task.name.as_str());
                leaves.push(leaf);
            }
            self.steps.push(Step::Run { leaves });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
