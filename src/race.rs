//! One race end to end: plan the track, store an empty race record, run the driver, and
//! store each trial as it ends. The CLI calls this; tests can too.

use crate::backend::embedded::EmbeddedBackend;
use crate::backend::elasticsearch::ElasticsearchBackend;
use crate::backend::redis::RedisBackend;
use crate::backend::{Backend, BackendKind};
use crate::cli::TrackArgs;
use crate::driver::{Driver, DriverOptions, OnError, Stop, TrialRun};
use crate::metrics::{encode_histogram, Percentiles};
use crate::plan::{self, Plan, PlanOptions};
use crate::results::*;
use crate::track::{Track, TrackError};
use crate::units::format_number;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

pub struct RaceOptions {
    pub track_args: TrackArgs,
    pub track_path: PathBuf,
    pub backend: BackendKind,
    pub target_hosts: Vec<String>,
    pub client_options: crate::backend::ClientOptions,
    pub on_error: OnError,
    pub progress: bool,
    pub quiet: bool,
    pub home: PathBuf,
    pub user_tags: BTreeMap<String, String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RaceError {
    #[error(transparent)]
    Track(#[from] TrackError),
    #[error("cannot store the race: {0}")]
    Store(#[from] StoreError),
    #[error("{0}")]
    Backend(String),
    /// The track asks for something this backend cannot do; found before the race starts.
    #[error("{0}")]
    Unsupported(String),
}

impl RaceError {
    pub fn exit_code(&self) -> u8 {
        match self {
            RaceError::Track(_) | RaceError::Unsupported(_) => crate::cli::EXIT_BAD_INPUT,
            RaceError::Store(_) | RaceError::Backend(_) => 1,
        }
    }
}

pub struct RaceOutcome {
    pub stored: (RaceRecord, HistogramFile),
    pub dir: PathBuf,
}

impl RaceOutcome {
    pub fn exit_code(&self) -> u8 {
        let failed_trial = self.stored.0.tasks.iter().flat_map(|t| &t.trials).any(|t| t.failure.is_some());
        match self.stored.0.status {
            // A trial that could not run (a corpus broken half-way, a reset that failed) is not
            // a finished measurement, whatever `--on-error` says about operation errors.
            RaceStatus::Completed if failed_trial => 1,
            RaceStatus::Completed => 0,
            RaceStatus::Interrupted => crate::cli::EXIT_INTERRUPTED,
            RaceStatus::Aborted | RaceStatus::Running | RaceStatus::Incomplete => 1,
        }
    }
}

pub fn plan_for(track: &Track, args: &TrackArgs) -> Result<Plan, TrackError> {
    let challenge = track.challenge(args.challenge.as_deref())?;
    plan::build(track, challenge, &PlanOptions { test_mode: args.test_mode, include_tasks: args.include_tasks.clone() })
}

/// A race still marked running whose process is gone was killed: say so.
pub fn effective_status(r: &RaceRecord) -> RaceStatus {
    let alive = r.pid.is_some_and(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
    match r.status {
        RaceStatus::Running if !alive => RaceStatus::Incomplete,
        other => other,
    }
}

/// The most clients any step runs at once.
fn max_clients(plan: &Plan) -> u64 {
    plan.steps
        .iter()
        .map(|s| match s {
            plan::Step::Run { leaves } | plan::Step::Reset { operations: leaves, .. } => leaves.iter().map(|l| l.clients).sum(),
        })
        .max()
        .unwrap_or(1)
}

/// Each network client holds a socket: raise the soft open-files limit to fit them, or say
/// clearly that it cannot be raised.
fn ensure_open_files(clients: u64) -> Result<(), RaceError> {
    let needed = clients + 64;
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed in.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 || lim.rlim_cur >= needed {
        return Ok(());
    }
    if lim.rlim_max < needed {
        return Err(RaceError::Backend(format!(
            "{clients} clients need {needed} open files, but the hard limit is {} (raise it with `ulimit -Hn` as root, or use fewer clients)",
            lim.rlim_max
        )));
    }
    let raised = libc::rlimit { rlim_cur: needed.max(lim.rlim_cur), rlim_max: lim.rlim_max };
    // SAFETY: as above.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } != 0 {
        return Err(RaceError::Backend(format!("cannot raise the open-files limit to {needed} for {clients} clients")));
    }
    Ok(())
}

fn new_race_id() -> String {
    let now = chrono::Utc::now();
    let suffix: u16 = rand::random();
    // Microseconds keep ids in start order even for races started in the same second, so that
    // sorting ids sorts races (and `latest` is the newest).
    format!("{}-{suffix:04x}", now.format("%Y%m%dT%H%M%S%.6fZ"))
}

fn trial_record(run: &TrialRun) -> TrialRecord {
    let m = &run.metrics;
    let c = &m.counts;
    let mut errors_by_kind = BTreeMap::new();
    let mut error_messages = BTreeMap::new();
    for kind in crate::backend::ErrorKind::ALL {
        let n = c.errors[kind.index()];
        if n > 0 {
            errors_by_kind.insert(kind.as_str().to_string(), n);
        }
        if let Some(msg) = &c.first_error[kind.index()] {
            error_messages.insert(kind.as_str().to_string(), msg.clone());
        }
    }
    let errors = c.error_count();
    TrialRecord {
        trial: run.trial,
        started_at: run.started_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        wall_seconds: run.wall.as_secs_f64(),
        interrupted: run.interrupted,
        failure: run.failure.clone(),
        throughput: if m.throughput().is_finite() { m.throughput() } else { 0.0 },
        measured_seconds: m.measured_window.as_secs_f64(),
        operations: c.operations,
        warmup_operations: c.warmup_operations,
        warmup_units: c.warmup_units,
        successes: c.successes,
        errors,
        errors_by_kind,
        error_messages,
        error_rate: if c.successes + errors > 0 { errors as f64 / (c.successes + errors) as f64 } else { 0.0 },
        units: c.units,
        requests: c.requests,
        requests_per_second: if m.measured_window.is_zero() { 0.0 } else { c.requests as f64 / m.measured_window.as_secs_f64() },
        hits: c.hits,
        service_time_ms: Percentiles::from_histogram(&m.service, m.service_mean_ms),
        latency_ms: Percentiles::from_histogram(&m.latency, m.latency_mean_ms),
        throughput_per_second: m.per_second.clone(),
        commands: command_records(m),
    }
}

fn command_histograms(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, CommandHistograms> {
    let Some(split) = &m.by_command else { return BTreeMap::new() };
    crate::ops::KvCommand::ALL
        .iter()
        .filter(|c| !split[c.index()].service.is_empty())
        .map(|c| {
            let t = &split[c.index()];
            (c.as_str().to_string(), CommandHistograms { service_time_us: encode_histogram(&t.service), latency_us: encode_histogram(&t.latency) })
        })
        .collect()
}

fn command_records(m: &crate::metrics::TrialMetrics) -> BTreeMap<String, CommandRecord> {
    let mut out = BTreeMap::new();
    for command in crate::ops::KvCommand::ALL {
        let requests = m.counts.by_command[command.index()];
        if requests == 0 {
            continue;
        }
        let times = m.by_command.as_ref().map(|split| &split[command.index()]);
        out.insert(command.as_str().to_string(), CommandRecord {
            requests,
            service_time_ms: times.map(|t| Percentiles::from_histogram(&t.service, t.means_ms().map(|m| m.0))),
            latency_ms: times.map(|t| Percentiles::from_histogram(&t.latency, t.means_ms().map(|m| m.1))),
        });
    }
    out
}

pub async fn run(track: Arc<Track>, opts: RaceOptions, cancel: CancellationToken) -> Result<RaceOutcome, RaceError> {
    let plan = plan_for(&track, &opts.track_args)?;
    match opts.backend {
        BackendKind::Embedded => run_with(Arc::new(EmbeddedBackend::new()), &track, &plan, &opts, cancel).await,
        BackendKind::Redis => {
            ensure_open_files(max_clients(&plan))?;
            let settings = crate::backend::redis::Settings::new(opts.target_hosts.clone(), opts.client_options.clone()).map_err(RaceError::Unsupported)?;
            let backend = RedisBackend::connect_checked(settings).await.map_err(|e| RaceError::Backend(e.message))?;
            run_with(Arc::new(backend), &track, &plan, &opts, cancel).await
        }
        BackendKind::Elasticsearch => {
            ensure_open_files(max_clients(&plan))?;
            let settings = crate::backend::elasticsearch::Settings::new(opts.target_hosts.clone(), opts.client_options.clone()).map_err(RaceError::Unsupported)?;
            let backend = ElasticsearchBackend::connect_checked(settings).await.map_err(|e| RaceError::Backend(e.message))?;
            run_with(Arc::new(backend), &track, &plan, &opts, cancel).await
        }
    }
}

/// Operations (and custom key-value commands) a backend cannot run fail here, before anything is measured,
/// not in every trial.
fn check_supported<B: Backend>(backend: &B, plan: &Plan, opts: &RaceOptions) -> Result<(), RaceError> {
    for step in &plan.steps {
        let (plan::Step::Run { leaves } | plan::Step::Reset { operations: leaves, .. }) = step;
        for leaf in leaves {
            if let Some(why) = backend.unsupported(&leaf.spec) {
                return Err(RaceError::Unsupported(format!(
                    "operation `{}` ({}) of task `{}` cannot run on --backend {}: {why}",
                    leaf.operation.name, leaf.operation.kind, leaf.task, opts.backend.as_str()
                )));
            }
            if let crate::ops::OpSpec::Kv(kv) = &leaf.spec {
                if kv.custom.is_some() {
                    backend.prepare(&leaf.spec).map_err(|e| {
                        RaceError::Unsupported(format!("operation `{}` of task `{}` cannot run on --backend {}: {}", leaf.operation.name, leaf.task, opts.backend.as_str(), e.message))
                    })?;
                }
            }
        }
    }
    Ok(())
}

async fn run_with<B: Backend>(backend: Arc<B>, track: &Track, plan: &Plan, opts: &RaceOptions, cancel: CancellationToken) -> Result<RaceOutcome, RaceError> {
    check_supported(backend.as_ref(), plan, opts)?;
    let store = RaceStore::new(&opts.home);
    let mut record = RaceRecord {
        format: FORMAT_VERSION,
        race_id: new_race_id(),
        status: RaceStatus::Running,
        stop_reason: None,
        started_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        finished_at: None,
        pid: Some(std::process::id()),
        track: track.name.clone(),
        track_path: track.file.display().to_string(),
        challenge: plan.challenge.clone(),
        test_mode: plan.test_mode,
        params: plan.params.clone(),
        backend: backend.info(),
        target_hosts: opts.target_hosts.clone(),
        on_error: format!("{:?}", opts.on_error).to_lowercase(),
        user_tags: opts.user_tags.clone(),
        host: HostInfo::current(),
        tasks: plan
            .results
            .iter()
            .map(|s| TaskRecord {
                task: s.task.clone(),
                operation: s.operation.clone(),
                operation_type: s.operation_type.clone(),
                sweep: s.sweep.clone(),
                clients: s.clients,
                target_throughput: s.target_throughput.map(|t| t.0),
                schedule: s.schedule,
                throughput_unit: s.throughput_unit.clone(),
                planned_trials: s.trials,
                warmup_trials: s.warmup_trials,
                key_value: s.key_value.clone(),
                reported: s.reported,
                trials: Vec::new(),
            })
            .collect(),
    };
    let mut histograms = HistogramFile { format: FORMAT_VERSION, trials: Vec::new() };
    store.save(&record, &histograms)?;
    if !opts.quiet {
        eprintln!("race {} · track {} · challenge {} · backend {}", record.race_id, record.track, record.challenge, record.backend.kind);
    }

    let driver = Driver::new(backend, DriverOptions { on_error: opts.on_error, progress: opts.progress }, cancel);
    let mut store_error: Option<StoreError> = None;
    let quiet = opts.quiet;
    let stop = {
        let record = &mut record;
        let histograms = &mut histograms;
        let store_error = &mut store_error;
        let store = &store;
        let mut on_trial = move |run: TrialRun| {
            let tr = trial_record(&run);
            if !quiet {
                let task = &record.tasks[run.slot];
                let status = match (&tr.failure, tr.interrupted) {
                    (Some(f), _) => format!("failed: {f}"),
                    (None, true) => "interrupted".into(),
                    (None, false) => format!(
                        "{} {} · service p50 {:.3} ms p99 {:.3} ms · {} errors",
                        format_number(tr.throughput), task.throughput_unit, tr.service_time_ms.p50, tr.service_time_ms.p99, tr.errors
                    ),
                };
                if run.warmup {
                    eprintln!("  {} [{}] warmup trial {}/{}: {status} (not recorded)", task.task, task.sweep_label(), run.trial + 1, task.warmup_trials);
                } else {
                    eprintln!("  {} [{}] trial {}/{}: {status}", task.task, task.sweep_label(), run.trial + 1, task.planned_trials);
                }
            }
            if run.warmup {
                return;
            }
            histograms.trials.push(TrialHistograms {
                task_index: run.slot,
                trial: run.trial,
                service_time_us: encode_histogram(&run.metrics.service),
                latency_us: encode_histogram(&run.metrics.latency),
                commands: command_histograms(&run.metrics),
            });
            record.tasks[run.slot].trials.push(tr);
            // Stored after every trial: a killed race keeps all completed trials.
            if let Err(e) = store.save(record, histograms) {
                store_error.get_or_insert(e);
            }
        };
        driver.run(plan, &mut on_trial).await
    };
    record.finished_at = Some(chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    (record.status, record.stop_reason) = match stop {
        Stop::Completed => (RaceStatus::Completed, None),
        Stop::Interrupted => (RaceStatus::Interrupted, Some("interrupted by the user (Ctrl-C)".into())),
        Stop::Aborted(why) => (RaceStatus::Aborted, Some(why)),
    };
    if let Some(reason) = &record.stop_reason {
        eprintln!("race stopped early: {reason}");
    }
    store.save(&record, &histograms)?;
    if let Some(e) = store_error {
        return Err(e.into());
    }
    let dir = store.race_dir(&record.race_id);
    Ok(RaceOutcome { stored: (record, histograms), dir })
}
