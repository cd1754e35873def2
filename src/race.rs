//! One race end to end: plan the track, store an empty race record, run the driver, and
//! store each trial as it ends. The CLI calls this; tests can too.

use crate::backend::{Backend, OpenError, WithBackend};
use crate::driver::{Driver, DriverOptions, Stop};
use crate::plan::{self, Plan};
use crate::request::RaceRequest;
use crate::results::*;
use crate::shard::{Member, Session};
use crate::track::{Track, TrackError};
use crate::units::Timestamp;

mod checks;
mod python;
mod trials;

use checks::{check_shardable, check_supported};
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use trials::TrialSink;

#[derive(Debug, thiserror::Error)]
pub enum RaceError {
    #[error(transparent)]
    Track(#[from] TrackError),
    #[error("cannot store the race: {0}")]
    Store(#[from] StoreError),
    /// The race ran but its results could not all be stored (a full disk): what was stored
    /// as trials ended is kept and readable.
    #[error("cannot store the race: {source}; the {stored} trial(s) stored as they ended are kept (`runner show {race_id}`)")]
    StoredInPart {
        race_id: String,
        stored: usize,
        source: StoreError,
    },
    #[error("{0}")]
    Backend(String),
    /// The track asks for something this backend cannot do; found before the race starts.
    #[error("{0}")]
    Unsupported(String),
    /// The shards of a race could not meet (one never joined, they planned different races).
    #[error("{0}")]
    Rendezvous(String),
    /// Stopped by a signal before the race started: nothing was measured or stored.
    #[error("interrupted while checking the backend, before the race started")]
    Interrupted,
}

pub struct RaceOutcome {
    pub stored: (RaceRecord, HistogramFile),
    pub dir: PathBuf,
}

impl RaceOutcome {
    /// How the race ended, for the exit code: a trial that could not run (a corpus broken
    /// half-way, a reset that failed) is not a finished measurement, whatever `--on-error`
    /// says about operation errors; nor is a race whose task left out of the report (a
    /// create-index, as Rally's administrative operations are) failed, since the report would
    /// not show it.
    pub fn ended(&self) -> RaceEnd {
        let tasks = &self.stored.0.tasks;
        let failed_trial = tasks
            .iter()
            .flat_map(|t| &t.trials)
            .any(|t| t.failure.is_some())
            || tasks
                .iter()
                .filter(|t| !t.slot.reported)
                .flat_map(|t| &t.trials)
                .any(|t| t.errors > 0);
        match self.stored.0.status {
            RaceStatus::Completed if failed_trial => RaceEnd::Failed,
            RaceStatus::Completed => RaceEnd::Completed,
            RaceStatus::Interrupted => RaceEnd::Interrupted,
            RaceStatus::Aborted
            | RaceStatus::Running
            | RaceStatus::Incomplete
            | RaceStatus::StoreFailed => RaceEnd::Failed,
        }
    }
}

/// How a race that ran ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaceEnd {
    Completed,
    /// Stopped by a signal; what was measured is stored.
    Interrupted,
    /// Aborted, or a trial could not run.
    Failed,
}

/// A race still marked running whose process is gone was killed: say so.
pub fn effective_status(r: &RaceRecord) -> RaceStatus {
    let alive = r
        .pid
        .is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
    match r.status {
        RaceStatus::Running if !alive => RaceStatus::Incomplete,
        other => other,
    }
}

/// Adds the `--threshold`s to the tasks they name (all tasks when they name none).
fn add_thresholds(
    plan: &mut Plan,
    given: &[(Option<String>, crate::thresholds::Threshold)],
) -> Result<(), RaceError> {
    for (task, threshold) in given {
        let mut matched = false;
        for slot in plan
            .results
            .iter_mut()
            // Tasks left out of reports are never judged.
            .filter(|s| s.reported && task.as_ref().is_none_or(|t| *t == s.task))
        {
            // A recall criterion given for all tasks is for those that measure recall.
            let recall = matches!(threshold.metric, crate::thresholds::Metric::Recall(_));
            if recall && task.is_none() && slot.operation_type != "vector-search" {
                continue;
            }
            if threshold.needs_target() && slot.target_throughput.is_none() {
                if task.is_some() {
                    return Err(RaceError::Unsupported(format!(
                        "--threshold {threshold}: task `{}` has no target-throughput",
                        slot.task
                    )));
                }
                continue;
            }
            slot.thresholds.push(threshold.clone());
            matched = true;
        }
        if !matched {
            let tasks: Vec<&str> = plan
                .results
                .iter()
                .filter(|s| s.reported)
                .map(|s| s.task.as_str())
                .collect();
            return Err(RaceError::Unsupported(match task {
                Some(t) => format!(
                    "--threshold {threshold}: no reported task `{t}` in this challenge (tasks: {})",
                    tasks.join(", ")
                ),
                None => format!("--threshold {threshold}: no task has a target-throughput"),
            }));
        }
    }
    Ok(())
}

/// The most clients any step runs at once.
fn max_clients(plan: &Plan) -> u64 {
    plan.steps
        .iter()
        .map(|s| match s {
            plan::Step::Run { leaves }
            | plan::Step::Reset {
                operations: leaves, ..
            } => leaves.iter().map(|l| l.clients).sum(),
        })
        .max()
        .unwrap_or(1)
}

pub async fn run(
    track: Arc<Track>,
    opts: &RaceRequest,
    cancel: CancellationToken,
) -> Result<RaceOutcome, RaceError> {
    let mut plan = opts.track.plan(&track)?;
    add_thresholds(&mut plan, &opts.thresholds)?;
    checks::check_recall_criteria(&plan, opts.shard.is_some())?;
    let mut deviations = track.notes.clone();
    deviations.extend(checks::uncut_rally_bulks(&plan));
    deviations.extend(check_supported(
        opts.backend,
        &mut plan,
        opts.track.load.on_unsupported,
    )?);
    if opts.shard.is_some() {
        check_shardable(opts.backend, &plan)?;
    }
    let target = crate::backend::Target {
        kind: opts.backend,
        hosts: opts.target_hosts.clone(),
        options: opts.client_options.clone(),
        max_clients: max_clients(&plan),
        engine_storage: opts.engine_storage,
        home: opts.home.clone(),
    };
    let checking = cancel.clone();
    let race = RaceWith {
        track: &track,
        plan: &plan,
        opts,
        cancel,
        deviations,
    };
    let redactor = opts.client_options.credentials.redactor();
    crate::backend::open(target, &checking, race)
        .await
        .map_err(|e| match e {
            OpenError::Settings(m) => RaceError::Unsupported(redactor.redact(&m)),
            OpenError::Unreachable(m) => RaceError::Backend(redactor.redact(&m)),
            OpenError::Interrupted => RaceError::Interrupted,
        })?
}

/// The race, handed to whichever backend opens.
struct RaceWith<'a> {
    track: &'a Track,
    plan: &'a Plan,
    opts: &'a RaceRequest,
    cancel: CancellationToken,
    deviations: Vec<String>,
}

/// What a race runs, checked and planned.
struct RaceInputs<'a> {
    track: &'a Track,
    plan: &'a Plan,
    opts: &'a RaceRequest,
    /// How the race differs from the track: stored, and shown by every report.
    deviations: Vec<String>,
}

impl WithBackend for RaceWith<'_> {
    type Output = Result<RaceOutcome, RaceError>;

    async fn run<B: Backend>(self, backend: Arc<B>) -> Self::Output {
        run_with(
            backend,
            RaceInputs {
                track: self.track,
                plan: self.plan,
                opts: self.opts,
                deviations: self.deviations,
            },
            self.cancel,
        )
        .await
    }
}

async fn run_with<B: Backend>(
    backend: Arc<B>,
    inputs: RaceInputs<'_>,
    cancel: CancellationToken,
) -> Result<RaceOutcome, RaceError> {
    let opts = inputs.opts;
    let plan = inputs.plan;
    // Started before the record, so that a track.py that cannot run stores no race.
    // Starting the workers may run the track processors' data preparation: Ctrl-C stops it.
    let python = tokio::select! {
        started = python::start(&backend, inputs.track.python.as_ref(), plan, opts) => started?,
        _ = cancel.cancelled() => return Err(RaceError::Interrupted),
    };
    let store = RaceStore::new(&opts.home);
    let session = match &opts.shard {
        Some(spec) => Some(Session::join(spec, plan, &cancel).await.map_err(|e| {
            if cancel.is_cancelled() {
                RaceError::Interrupted
            } else {
                RaceError::Rendezvous(e)
            }
        })?),
        None => None,
    };
    let member = session.as_ref().map(|s| s.member.clone());
    let record = started_record(backend.info(), inputs, member.as_deref());
    store.begin(&record)?;
    announce(&record, plan, opts, member.as_deref());
    let mut driver_options = DriverOptions::whole(opts.on_error, opts.progress);
    driver_options.narrate = !opts.quiet;
    driver_options.log_progress = !opts.quiet && !opts.progress;
    driver_options.live = opts.live.clone();
    driver_options.keep_samples = opts.keep_samples;
    if let Some(m) = &member {
        driver_options.slice = m.slice;
        driver_options.gate = Some(m.clone() as Arc<dyn crate::driver::StepGate>);
    }
    driver_options.python = python.as_ref().map(|p| p.pool.clone());
    // The driver cancels its own token on an abort; the race's stays for signals alone, which
    // the wait for the other shards' results listens to.
    let driver = Driver::new(backend, driver_options, cancel.child_token());
    let redactor = &opts.client_options.credentials.redactor();
    let mut sink = TrialSink::new(record, &store, redactor, member.as_deref(), opts.quiet);
    let stop = driver.run(plan, &mut |run| sink.take(run)).await;
    let TrialSink {
        mut record,
        histograms,
        store_error,
        stored_trials,
        ..
    } = sink;
    record.finished_at = Some(Timestamp::now_seconds());
    if let Some(m) = &member {
        record.shard = Some(m.role());
    }
    (record.status, record.stop_reason) = match stop {
        Stop::Completed => (RaceStatus::Completed, None),
        Stop::Interrupted => (
            RaceStatus::Interrupted,
            Some("interrupted by a signal (Ctrl-C or SIGTERM)".into()),
        ),
        Stop::Aborted(why) => (RaceStatus::Aborted, Some(redactor.redact(&why))),
    };
    if let Some(reason) = &record.stop_reason {
        eprintln!("race stopped early: {reason}");
    }
    store
        .finish(&record, &histograms, store_error.as_ref())
        .map_err(|source| RaceError::StoredInPart {
            race_id: record.race_id.clone(),
            stored: stored_trials,
            source,
        })?;
    // Every trial is in the consolidated record now, whatever failed while the race ran.
    if let Some(e) = store_error {
        eprintln!("warning: a trial could not be stored when it ended ({e}); the final record holds every trial");
    }
    match session {
        None => Ok(RaceOutcome {
            dir: store.race_dir(&record.race_id),
            stored: (record, histograms),
        }),
        Some(session) => {
            merge_shards(session, record, histograms, &store, opts.quiet, &cancel).await
        }
    }
}

/// Says what starts: on stderr (unless quiet), and to the live view.
fn announce(record: &RaceRecord, plan: &Plan, opts: &RaceRequest, member: Option<&Member>) {
    if !opts.quiet {
        let shard = member.map_or(String::new(), |m| {
            format!(" · shard {} of {}", m.slice.index, m.slice.count)
        });
        eprintln!(
            "race {} · track {} · challenge {} · backend {}{shard}",
            record.race_id, record.track, record.challenge, record.backend.kind
        );
    }
    if let Some(live) = &opts.live {
        live.race_started(
            serde_json::json!({
                "id": record.race_id,
                "track": record.track,
                "challenge": record.challenge,
                "backend": record.backend.kind,
            }),
            crate::driver::plan_views(plan),
        );
    }
}

/// The record of a race as it starts: what it runs, where, and a slot per task with no trials.
fn started_record(
    backend: crate::backend::BackendInfo,
    inputs: RaceInputs<'_>,
    member: Option<&Member>,
) -> RaceRecord {
    let RaceInputs {
        track,
        plan,
        opts,
        deviations,
    } = inputs;
    RaceRecord {
        format: FORMAT_VERSION,
        race_id: match (member, &opts.race_id) {
            (Some(m), _) => m.shard_race_id(),
            (None, Some(id)) => id.clone(),
            (None, None) => crate::results::new_race_id(),
        },
        status: RaceStatus::Running,
        stop_reason: None,
        started_at: Timestamp::now_seconds(),
        finished_at: None,
        pid: Some(std::process::id()),
        track: track.name.clone(),
        track_path: track.file.display().to_string(),
        track_revision: std::fs::read(&track.file)
            .ok()
            .map(|b| crate::units::fnv1a_hex(&b)),
        challenge: plan.challenge.clone(),
        test_mode: plan.test_mode,
        params: plan.params.clone(),
        backend: (&backend).into(),
        target_hosts: opts.target_hosts.clone(),
        on_error: opts.on_error.into(),
        user_tags: opts.user_tags.clone(),
        host: HostInfo::current(),
        deviations,
        shard: member.map(|m| m.role()),
        shards: None,
        tasks: plan
            .results
            .iter()
            .map(|slot| TaskRecord {
                slot: slot.into(),
                trials: Vec::new(),
            })
            .collect(),
    }
}

/// A shard's race is sent to shard 0, which merges and stores the whole race (and says so).
async fn merge_shards(
    session: Session,
    record: RaceRecord,
    histograms: HistogramFile,
    store: &RaceStore,
    quiet: bool,
    cancel: &CancellationToken,
) -> Result<RaceOutcome, RaceError> {
    let merged_id = session.member.race_id.clone();
    match session.finish(&record, &histograms, cancel).await {
        Ok(Some((merged, merged_histograms))) => {
            store.finish(&merged, &merged_histograms, None)?;
            Ok(RaceOutcome {
                dir: store.race_dir(&merged.race_id),
                stored: (merged, merged_histograms),
            })
        }
        other => {
            match other {
                Err(e) => eprintln!("warning: {e}"),
                Ok(_) if !quiet => eprintln!(
                    "shard {} sent its results to shard 0, which stores the merged race {merged_id}",
                    record.shard.as_ref().map_or(0, |s| s.index)
                ),
                Ok(_) => {}
            }
            let dir = store.race_dir(&record.race_id);
            Ok(RaceOutcome {
                stored: (record, histograms),
                dir,
            })
        }
    }
}
