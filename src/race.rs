//! One race end to end: plan the track, store an empty race record, run the driver, and
//! store each trial as it ends. The CLI calls this; tests can too.

use crate::backend::credentials::Redactor;
use crate::backend::{Backend, OpenError, WithBackend};
use crate::driver::{Driver, DriverOptions, Stop, TrialRun};
use crate::metrics::{encode_histogram, Percentiles};
use crate::plan::{self, Plan};
use crate::request::RaceRequest;
use crate::results::*;
use crate::shard::{Member, Session};
use crate::track::{Track, TrackError};
use crate::units::{format_number, Timestamp};

mod checks;
use checks::{check_shardable, check_supported};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

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

fn trial_record(run: &TrialRun, redactor: &Redactor, shard: Option<&Member>) -> TrialRecord {
    let m = &run.metrics;
    let c = &m.counts;
    let mut errors_by_kind = BTreeMap::new();
    let mut error_messages = BTreeMap::new();
    for kind in crate::backend::ErrorKind::ALL {
        let n = c.errors[kind.index()];
        if n > 0 {
            errors_by_kind.insert(kind, n);
        }
        if let Some(msg) = &c.first_error[kind.index()] {
            // A server may echo the Authorization header or quote a password back.
            error_messages.insert(kind, redactor.redact(msg));
        }
    }
    let errors = c.error_count();
    TrialRecord {
        trial: run.trial,
        started_at: Timestamp::millis(run.started_at),
        wall_seconds: run.wall.as_secs_f64(),
        interrupted: run.interrupted,
        interrupted_operations: c.interrupted_operations,
        driver: Some(run.driver.clone()),
        server: run.server.as_ref().and_then(|s| s.as_ref().ok()).cloned(),
        server_stats_error: run
            .server
            .as_ref()
            .and_then(|s| s.as_ref().err())
            .map(|e| redactor.redact(e)),
        failure: run.failure.as_deref().map(|f| redactor.redact(f)),
        throughput: if m.throughput().is_finite() {
            m.throughput()
        } else {
            0.0
        },
        measured_seconds: m.measured_window.as_secs_f64(),
        operations: c.operations,
        warmup_operations: c.warmup_operations,
        warmup_units: c.warmup_units,
        successes: c.successes,
        errors,
        errors_by_kind,
        error_messages,
        error_rate: crate::metrics::error_rate(c.successes, errors),
        units: c.units,
        requests: c.requests,
        requests_per_second: if m.measured_window.is_zero() {
            0.0
        } else {
            c.requests as f64 / m.measured_window.as_secs_f64()
        },
        hits: c.hits,
        service_time_ms: Percentiles::from_histogram(&m.service, m.service_mean_ms),
        latency_ms: Percentiles::from_histogram(&m.latency, m.latency_mean_ms),
        throughput_per_second: m.per_second.clone(),
        parts: part_records(m),
        clock: shard.map(|member| TrialClock {
            origin_ns: member.shared_ns(run.origin),
            window_s: m.window.map(|(a, b)| (a.as_secs_f64(), b.as_secs_f64())),
            units_by_second: m.units_by_second.clone(),
        }),
        per_shard: Vec::new(),
    }
}

fn part_histograms(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, PartHistograms> {
    let Some(parts) = &m.parts else {
        return BTreeMap::new();
    };
    parts
        .used()
        .filter_map(|(label, _, times)| {
            times.map(|t| {
                (
                    label.to_string(),
                    PartHistograms {
                        service_time_us: encode_histogram(&t.service),
                        latency_us: encode_histogram(&t.latency),
                    },
                )
            })
        })
        .collect()
}

fn part_records(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, PartRecord> {
    let Some(parts) = &m.parts else {
        return BTreeMap::new();
    };
    parts
        .used()
        .map(|(label, requests, times)| {
            (
                label.to_string(),
                PartRecord {
                    requests,
                    service_time_ms: times.map(|t| {
                        Percentiles::from_histogram(&t.service, t.means_ms().map(|m| m.0))
                    }),
                    latency_ms: times.map(|t| {
                        Percentiles::from_histogram(&t.latency, t.means_ms().map(|m| m.1))
                    }),
                },
            )
        })
        .collect()
}

pub async fn run(
    track: Arc<Track>,
    opts: &RaceRequest,
    cancel: CancellationToken,
) -> Result<RaceOutcome, RaceError> {
    let mut plan = opts.track.plan(&track)?;
    add_thresholds(&mut plan, &opts.thresholds)?;
    let mut deviations = track.notes.clone();
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
    let RaceInputs {
        track,
        plan,
        opts,
        deviations,
    } = inputs;
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
    let mut record = RaceRecord {
        format: FORMAT_VERSION,
        race_id: member
            .as_ref()
            .map_or_else(crate::results::new_race_id, |m| m.shard_race_id()),
        status: RaceStatus::Running,
        stop_reason: None,
        started_at: Timestamp::now_seconds(),
        finished_at: None,
        pid: Some(std::process::id()),
        track: track.name.clone(),
        track_path: track.file.display().to_string(),
        challenge: plan.challenge.clone(),
        test_mode: plan.test_mode,
        params: plan.params.clone(),
        backend: backend.info(),
        target_hosts: opts.target_hosts.clone(),
        on_error: opts.on_error,
        user_tags: opts.user_tags.clone(),
        host: HostInfo::current(),
        deviations,
        shard: member.as_ref().map(|m| m.role()),
        shards: None,
        tasks: plan
            .results
            .iter()
            .map(|slot| TaskRecord {
                slot: slot.clone(),
                trials: Vec::new(),
            })
            .collect(),
    };
    let mut histograms = HistogramFile {
        format: FORMAT_VERSION,
        trials: Vec::new(),
    };
    store.begin(&record)?;
    if !opts.quiet {
        let shard = member.as_ref().map_or(String::new(), |m| {
            format!(" · shard {} of {}", m.slice.index, m.slice.count)
        });
        eprintln!(
            "race {} · track {} · challenge {} · backend {}{shard}",
            record.race_id, record.track, record.challenge, record.backend.kind
        );
    }

    let mut driver_options = DriverOptions::whole(opts.on_error, opts.progress);
    if let Some(m) = &member {
        driver_options.slice = m.slice;
        driver_options.gate = Some(m.clone() as Arc<dyn crate::driver::StepGate>);
    }
    // The driver cancels its own token on an abort; the race's stays for signals alone, which
    // the wait for the other shards' results listens to.
    let driver = Driver::new(backend, driver_options, cancel.child_token());
    let mut store_error: Option<StoreError> = None;
    let mut stored_trials = 0usize;
    let quiet = opts.quiet;
    let redactor = &opts.client_options.credentials.redactor();
    let stop = {
        let record = &mut record;
        let histograms = &mut histograms;
        let store_error = &mut store_error;
        let stored_trials = &mut stored_trials;
        let store = &store;
        let member = member.as_deref();
        let mut on_trial = move |run: TrialRun| {
            let tr = trial_record(&run, redactor, member);
            if !quiet {
                let task = &record.tasks[run.result];
                let status = match (&tr.failure, tr.interrupted) {
                    (Some(f), _) => format!("failed: {f}"),
                    (None, true) => "interrupted".into(),
                    (None, false) => {
                        let p = |q: f64| {
                            tr.service_time_ms
                                .at(q)
                                .map_or("-".into(), |v| format!("{v:.3} ms"))
                        };
                        format!(
                            "{} {} · service p50 {} p99 {} · {} errors",
                            format_number(tr.throughput),
                            task.slot.throughput_unit,
                            p(50.0),
                            p(99.0),
                            tr.errors
                        )
                    }
                };
                if run.warmup {
                    eprintln!(
                        "  {} [{}] warmup trial {}/{}: {status} (not recorded)",
                        task.slot.task,
                        task.sweep_label(),
                        run.trial + 1,
                        task.slot.warmup_trials
                    );
                } else {
                    eprintln!(
                        "  {} [{}] trial {}/{}: {status}",
                        task.slot.task,
                        task.sweep_label(),
                        run.trial + 1,
                        task.slot.planned_trials
                    );
                }
            }
            if run.warmup {
                return;
            }
            let trial_histograms = TrialHistograms {
                task_index: run.result,
                trial: run.trial,
                service_time_us: encode_histogram(&run.metrics.service),
                latency_us: encode_histogram(&run.metrics.latency),
                parts: part_histograms(&run.metrics),
            };
            // Stored as it ends, in a file of its own: a killed race keeps all completed
            // trials, and a trial costs the same to store whatever came before it.
            let stored = StoredTrial::new(run.result, tr, trial_histograms);
            let seq = histograms.trials.len();
            match store.append_trial(&record.race_id, seq, &stored) {
                Ok(()) => *stored_trials += 1,
                Err(e) => {
                    store_error.get_or_insert(e);
                }
            }
            histograms.trials.push(stored.histograms);
            record.tasks[run.result].trials.push(stored.record);
        };
        driver.run(plan, &mut on_trial).await
    };
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
    let Some(session) = session else {
        let dir = store.race_dir(&record.race_id);
        return Ok(RaceOutcome {
            stored: (record, histograms),
            dir,
        });
    };
    let merged_id = session.member.race_id.clone();
    match session.finish(&record, &histograms, &cancel).await {
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
                Ok(_) if !opts.quiet => eprintln!(
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
