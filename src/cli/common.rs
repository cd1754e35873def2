//! What several subcommands share: the track flags, the report flags, the async runtime,
//! signals, loading a track or a stored race, and writing to stdout.

use super::CliError;
use crate::report::ReportFormat;
use crate::request::TrackRequest;
use crate::results::RaceStore;
use crate::track;
use clap::Args;
use std::path::{Path, PathBuf};
use tokio_util::sync::CancellationToken;

#[derive(Debug, Args, Clone, Default)]
pub struct TrackArgs {
    /// A track by name: a built-in one (see `runner list tracks`), else one of Rally's track
    /// repository as esrally keeps it (~/.rally/benchmarks/tracks/default).
    #[arg(long, conflicts_with = "track_path", value_name = "NAME")]
    pub track: Option<String>,
    /// The Rally track repository `--track` names a track of: a folder under
    /// ~/.rally/benchmarks/tracks (esrally's `default` unless given), or a path to one.
    #[arg(long, value_name = "NAME|PATH", conflicts_with = "track_path")]
    pub track_repository: Option<String>,
    /// A git revision (commit, tag or branch) of the Rally track repository to read the track
    /// from, instead of the files checked out.
    #[arg(long, value_name = "REVISION", conflicts_with = "track_path")]
    pub track_revision: Option<String>,
    /// A track directory (holding track.yaml, a Rally track.json or an OpenSearch Benchmark
    /// workload.json) or a track file.
    #[arg(long, value_name = "PATH", visible_alias = "workload-path")]
    pub track_path: Option<PathBuf>,
    /// Challenge to run (default: the track's default challenge); OSB's test procedure.
    #[arg(long, visible_alias = "test-procedure")]
    pub challenge: Option<String>,
    /// Track parameters: `key:value,...` (esrally's form; `key=value` too), or a .yaml/.json
    /// file.
    #[arg(long, value_name = "PARAMS", visible_alias = "workload-params")]
    pub track_params: Option<String>,
    /// Shrink the race to seconds: first 1,000 documents, few iterations, short periods.
    #[arg(long)]
    pub test_mode: bool,
    /// Run only these tasks, comma-separated: a task name, `type:OPERATION-TYPE` or `tag:TAG`.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "TASKS",
        conflicts_with = "exclude_tasks"
    )]
    pub include_tasks: Option<Vec<String>>,
    /// Run every task but these, comma-separated: a task name, `type:OPERATION-TYPE` or
    /// `tag:TAG`.
    #[arg(long, value_delimiter = ',', value_name = "TASKS")]
    pub exclude_tasks: Option<Vec<String>>,
    /// Never download: corpora must be on disk already (in the results directory's data
    /// folder, beside the track, or where esrally keeps them).
    #[arg(long)]
    pub offline: bool,
    /// Rally tracks: allow --track-params that no template of the track uses.
    #[arg(long)]
    pub ignore_unused_track_params: bool,
    /// Rally tracks: a task the runner cannot run as Rally would fails the track, or is skipped.
    #[arg(long, value_enum, default_value = "fail")]
    pub on_unsupported: crate::track::OnUnsupported,
    /// Rally tracks with a track.py (OSB workloads with a workload.py): the Python interpreter
    /// that runs it, such as a virtualenv's `bin/python` (default: `python3` from PATH).
    #[arg(long, value_name = "PATH")]
    pub python: Option<PathBuf>,
    /// Rally tracks and OSB workloads: the version their templates see as
    /// `distribution_version` (as OSB's `--distribution-version`; unset, a workload's own
    /// default applies, such as OSB's common operations' 3.3.0).
    #[arg(long, value_name = "VERSION")]
    pub distribution_version: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    /// The report printed on stdout (as esrally's --report-format, with JSON too).
    #[arg(long, value_enum, default_value = "markdown")]
    pub report_format: ReportFormat,
    /// Also write the report to this file.
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
}

/// The async runtime of `race` and `serve` (`RUNNER_WORKER_THREADS` sets its threads).
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = std::env::var("RUNNER_WORKER_THREADS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|n| *n > 0)
    {
        builder.worker_threads(n);
    }
    builder
        .enable_all()
        .build()
        .map_err(|e| CliError::Usage(format!("cannot start the async runtime: {e}")))
}

/// Cancels `cancel` on Ctrl-C (SIGINT) or SIGTERM, which `timeout`, `kill`, systemd and
/// container runtimes send, saying `message` first; call inside the runtime.
pub(crate) fn cancel_on_signals(cancel: &CancellationToken, message: Option<&'static str>) {
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let name = match signal(SignalKind::terminate()) {
            Ok(mut term) => tokio::select! {
                r = tokio::signal::ctrl_c() => r.is_ok().then_some("Ctrl-C"),
                r = term.recv() => r.map(|_| "SIGTERM"),
            },
            Err(_) => tokio::signal::ctrl_c().await.is_ok().then_some("Ctrl-C"),
        };
        if let Some(name) = name {
            if let Some(m) = message {
                eprintln!("\n{name}: {m}");
            }
            on_signal.cancel();
        }
    });
}

/// A path, a built-in name, or a track of Rally's track repository.
pub(crate) fn track_location(args: &TrackArgs, home: &Path) -> Result<PathBuf, CliError> {
    let rally_repo = args.track_repository.is_some() || args.track_revision.is_some();
    match (args.track.as_deref(), args.track_path.as_deref()) {
        (_, Some(p)) => Ok(p.to_path_buf()),
        (Some(n), None)
            if Path::new(n).exists()
                && (n.contains('/') || n.ends_with(".yaml") || n.ends_with(".yml")) =>
        {
            Ok(PathBuf::from(n))
        }
        (Some(n), None) if rally_repo => Ok(crate::rally::repository::track(
            n,
            args.track_repository.as_deref(),
            args.track_revision.as_deref(),
            home,
        )?),
        (Some(n), None) => match track::builtin_track(n, home) {
            Ok(dir) => Ok(dir),
            Err(builtin_error) => crate::rally::repository::track(n, None, None, home)
                .map_err(|_| CliError::Track(builtin_error)),
        },
        (None, None) => Err(CliError::Usage(
            "name a track with --track NAME or --track-path DIR (see `runner list tracks`)".into(),
        )),
    }
}

/// The track request the flags describe: where the track is, its parameters, test mode and
/// the Rally options, loaded the same way by every command.
pub(crate) fn track_request(args: &TrackArgs, home: &Path) -> Result<TrackRequest, CliError> {
    let location = track_location(args, home)?;
    let params = args
        .track_params
        .as_deref()
        .map(track::parse_track_params)
        .transpose()?
        .unwrap_or_default();
    Ok(TrackRequest {
        location,
        load: track::LoadOptions {
            frontends: crate::rally::FRONTENDS,
            params,
            test_mode: args.test_mode,
            ignore_unused_params: args.ignore_unused_track_params,
            on_unsupported: args.on_unsupported,
            challenge: args.challenge.clone(),
            data_root: Some(home.join("data")),
            corpora_may_be_missing: false,
            python: args.python.clone(),
            distribution_version: args.distribution_version.clone(),
            offline: args.offline,
        },
        challenge: args.challenge.clone(),
        plan: crate::plan::PlanOptions {
            test_mode: args.test_mode,
            tasks: task_selection(args)?,
            // esrally's load-driver workers: rally.ini's `available.cores` where the user
            // set it, else one per core (the plan's default).
            rally_workers: crate::rally::repository::available_cores(),
        },
    })
}

/// `--include-tasks` or `--exclude-tasks`, each filter read as esrally reads it.
fn task_selection(args: &TrackArgs) -> Result<crate::plan::TaskSelection, CliError> {
    use crate::plan::{TaskFilter, TaskSelection};
    let read = |list: &[String]| -> Result<Vec<TaskFilter>, CliError> {
        list.iter()
            .filter(|t| !t.trim().is_empty())
            .map(|t| t.parse().map_err(CliError::Usage))
            .collect()
    };
    Ok(match (&args.include_tasks, &args.exclude_tasks) {
        (Some(list), _) => TaskSelection::Include(read(list)?),
        (None, Some(list)) => TaskSelection::Exclude(read(list)?),
        (None, None) => TaskSelection::All,
    })
}

pub(crate) fn load_track(request: &TrackRequest) -> Result<track::Track, CliError> {
    let t = request.load()?;
    for note in &t.notes {
        eprintln!("note: {note}");
    }
    Ok(t)
}

/// Writes to stdout; a closed pipe (`runner ... | head`) ends output quietly instead of panicking.
pub(crate) fn out(text: &str) {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(text.as_bytes())
        .and_then(|_| stdout.flush());
}

pub(crate) fn emit_report(text: String, file: Option<&Path>) -> Result<(), CliError> {
    out(&text);
    if let Some(f) = file {
        crate::results::write_report(f, &text).map_err(CliError::Store)?;
    }
    Ok(())
}

/// A stored race by id, prefix or `latest`, saying what of its histograms cannot be read.
pub(crate) fn load_race(
    store: &RaceStore,
    given: &str,
) -> Result<(crate::results::RaceRecord, crate::results::RaceHistograms), CliError> {
    let (record, histograms) = store.load(&store.resolve(given)?)?;
    for p in &histograms.problems {
        eprintln!("warning: {p}");
    }
    Ok((record, histograms))
}

pub(crate) fn parse_tags(
    tags: &[String],
) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    tags.iter()
        .map(|tag| {
            let (k, v) = tag
                .split_once(':')
                .ok_or_else(|| CliError::Usage(format!("--user-tag `{tag}` is not key:value")))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

pub(crate) fn parse_positive_duration(text: &str) -> Result<std::time::Duration, String> {
    let d = crate::units::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("`{text}` must be longer than zero"));
    }
    Ok(d)
}

/// `--since`: a day (YYYY-MM-DD, from its midnight UTC) or an RFC 3339 instant.
pub(crate) fn parse_since(text: &str) -> Result<chrono::DateTime<chrono::Utc>, CliError> {
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(|t| t.and_utc())
        .ok_or_else(|| {
            CliError::Usage(format!(
                "--since `{text}`: expected YYYY-MM-DD or an RFC 3339 instant"
            ))
        })
}

/// `--client-options` of a command that talks to an Elasticsearch cluster (import, export):
/// Rally's forms, its credential options moved into the credentials (with the environment's
/// and the credentials file's).
pub(crate) fn cluster_client_options(
    text: &str,
    home: &Path,
) -> Result<crate::backend::ClientOptions, CliError> {
    use crate::backend::credentials::Credentials;
    let mut options = crate::backend::ClientOptions::parse(text).map_err(CliError::Usage)?;
    let given = options.take_rally_credentials();
    if given.iter().any(|(name, _)| !name.ends_with("_USERNAME")) {
        eprintln!("note: a password or API key in --client-options is seen by other users of this machine (ps); RUNNER_ES_PASSWORD, RUNNER_ES_API_KEY or the credentials file keep it out of sight");
    }
    options.credentials = Credentials::load(&Credentials::default_file(home))
        .map_err(CliError::Usage)?
        .with_options(given);
    Ok(options)
}
