//! The command line: parses arguments and dispatches; the work lives in the library.

mod args;
mod shard;

pub use args::*;

use crate::race::{self, RaceEnd, RaceError};
use crate::report;
use crate::request::{RaceRequest, TrackRequest};
use crate::results::{RaceStore, StoreError};
use crate::track::{self, TrackError};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Exit code for bad input (track, parameters, race ids).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for a race stopped by Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;
/// The race completed, but a threshold failed (`race`), or `compare --fail-on` found what it
/// fails on: a gate for CI.
pub const EXIT_GATE_FAILED: u8 = 3;

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error(transparent)]
    Track(#[from] TrackError),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Race(#[from] RaceError),
    #[error("{0}")]
    Usage(String),
    /// A peer that could not take what was sent (an export's cluster): exit 1.
    #[error(transparent)]
    Export(#[from] crate::export::ExportError),
}

impl CliError {
    /// The one place errors become exit codes (README: Exit codes).
    fn exit_code(&self) -> u8 {
        match self {
            CliError::Track(_) | CliError::Store(_) | CliError::Usage(_) => EXIT_BAD_INPUT,
            CliError::Race(RaceError::Track(_) | RaceError::Unsupported(_)) => EXIT_BAD_INPUT,
            CliError::Race(
                RaceError::Store(_)
                | RaceError::StoredInPart { .. }
                | RaceError::Backend(_)
                | RaceError::Rendezvous(_),
            ) => 1,
            CliError::Race(RaceError::Interrupted) => EXIT_INTERRUPTED,
            CliError::Export(_) => 1,
        }
    }
}

pub(crate) fn race_exit_code(end: RaceEnd) -> u8 {
    match end {
        RaceEnd::Completed => 0,
        RaceEnd::Interrupted => EXIT_INTERRUPTED,
        RaceEnd::Failed => 1,
    }
}

/// The async runtime of `race` and `serve` (`RUNNER_WORKER_THREADS` sets its threads).
fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
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
fn cancel_on_signals(cancel: &CancellationToken, message: Option<&'static str>) {
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

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}

fn serve_command(args: ServeArgs, home: &Path) -> Result<u8, CliError> {
    let runtime = runtime()?;
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            Some(crate::backend::tls::server_config(cert, key).map_err(CliError::Usage)?)
        }
        _ => None,
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let limits = crate::serve::Limits {
        max_connections: args.max_connections as usize,
        max_in_flight_bytes: usize::try_from(args.max_in_flight_bytes).unwrap_or(usize::MAX),
        header_timeout: args.header_timeout,
        body_timeout: args.body_timeout,
    };
    let opts = crate::serve::ServeOptions {
        addr: std::net::SocketAddr::new(args.host, args.port),
        stub: args.stub,
        tls,
        limits,
        storage: args.engine_storage,
        home: home.to_path_buf(),
    };
    let cancel = CancellationToken::new();
    let result = runtime.block_on(async {
        cancel_on_signals(&cancel, None);
        crate::serve::serve(opts.clone(), cancel.clone(), |addr| {
            let mode = if opts.stub {
                " (stub: _search and _bulk answered without work)"
            } else {
                ""
            };
            eprintln!("runner serve: listening on {scheme}://{addr}{mode}");
        })
        .await
    });
    result.map_err(|e| {
        CliError::Usage(format!("runner serve cannot listen on {}: {e}", opts.addr))
    })?;
    Ok(0)
}

fn export_command(
    home: &Path,
    race: &str,
    to: Option<String>,
    openmetrics: Option<PathBuf>,
    client_options: &str,
) -> Result<u8, CliError> {
    if to.is_none() && openmetrics.is_none() {
        return Err(CliError::Usage(
            "export needs --to URL, --openmetrics FILE, or both".into(),
        ));
    }
    let store = RaceStore::new(home);
    let (record, histograms) = load_race(&store, race)?;
    let summary = report::Summary::new(&record, &histograms);
    if let Some(file) = openmetrics {
        crate::results::write_report(&file, &crate::export::openmetrics(&summary))?;
        eprintln!("wrote {}", file.display());
    }
    if let Some(url) = to {
        let mut options =
            crate::backend::ClientOptions::parse(client_options).map_err(CliError::Usage)?;
        options.credentials = crate::backend::credentials::Credentials::load(
            &crate::backend::credentials::Credentials::default_file(home),
        )
        .map_err(CliError::Usage)?;
        let admin = crate::backend::elasticsearch::Admin::new(vec![url], options)
            .map_err(CliError::Usage)?;
        let docs = crate::export::rally_documents(&summary);
        let runtime = runtime()?;
        let written = runtime.block_on(crate::export::to_elasticsearch(&admin, &docs))?;
        eprintln!(
            "exported {written} documents to {} ({} and {})",
            admin.host(),
            docs.results_index,
            docs.metrics_index
        );
    }
    Ok(0)
}

fn home(cli: &Cli) -> PathBuf {
    cli.results_dir
        .clone()
        .unwrap_or_else(RaceStore::default_home)
}

/// Runs one command; returns the process exit code.
pub fn run(cli: Cli) -> Result<u8, CliError> {
    let home = home(&cli);
    match cli.command {
        Command::Race(args) => race_command(args, &home),
        Command::Serve(args) => serve_command(args, &home),
        Command::RenderTrack(args) => {
            let request = track_request(&args.track, &home)?;
            let text = request.render()?;
            out(&text);
            // A Rally track must render to JSON: say where it does not (below the text shown).
            if let Some(file) = crate::rally::rally_track_file(&request.location) {
                crate::rally::parse_json(&text, &file)?;
            }
            Ok(0)
        }
        Command::ConvertRally {
            dir,
            out: out_dir,
            track_params,
            ignore_unused_track_params,
            on_unsupported,
            test_mode,
            challenge,
        } => convert_rally(
            &home,
            &dir,
            &out_dir,
            track_params.as_deref(),
            track::LoadOptions {
                frontends: crate::rally::FRONTENDS,
                ignore_unused_params: ignore_unused_track_params,
                on_unsupported,
                test_mode,
                challenge,
                data_root: Some(home.join("data")),
                // A conversion may be written before the corpus is fetched: what is missing
                // is named in the track's notes.
                corpora_may_be_missing: true,
                ..Default::default()
            },
        ),
        Command::Plan(args) => {
            let request = track_request(&args.track, &home)?;
            let plan = request.plan(&load_track(&request)?)?;
            match args.format {
                PlanFormat::Text => out(&crate::plan::render_text(&plan)),
                PlanFormat::Json => out(&format!(
                    "{}\n",
                    serde_json::to_string_pretty(&plan).unwrap_or_default()
                )),
            }
            Ok(0)
        }
        Command::List {
            what: ListWhat::Tracks,
            ..
        } => {
            for name in track::builtin_track_names() {
                let desc = track::load(&track::builtin_track(&name)?, &Default::default())
                    .map(|t| t.description)
                    .unwrap_or_else(|e| format!("(does not load: {e})"));
                out(&format!("{name:<16} {desc}\n"));
            }
            Ok(0)
        }
        Command::List {
            what: ListWhat::Races,
            filter,
        } => {
            let tags = parse_tags(&filter.user_tags)?;
            let store = RaceStore::new(&home);
            let mut text = format!(
                "{:<30} {:<16} {:<18} {:<21} {:<10} {:<11} tags\n",
                "race", "track", "challenge", "started", "backend", "status"
            );
            for id in store.ids() {
                match store.load_record(&id) {
                    Ok(r) => {
                        let keep = filter.track.as_ref().is_none_or(|t| *t == r.track)
                            && filter.challenge.as_ref().is_none_or(|c| *c == r.challenge)
                            && filter.backend.as_ref().is_none_or(|b| *b == r.backend.kind)
                            && tags.iter().all(|(k, v)| r.user_tags.get(k) == Some(v));
                        if keep {
                            let status = race::effective_status(&r).as_str().to_string();
                            let shown: Vec<String> = r
                                .user_tags
                                .iter()
                                .map(|(k, v)| format!("{k}:{v}"))
                                .collect();
                            text.push_str(&format!(
                                "{:<30} {:<16} {:<18} {:<21} {:<10} {:<11} {}\n",
                                id,
                                r.track,
                                r.challenge,
                                r.started_at,
                                r.backend.kind,
                                status,
                                shown.join(",")
                            ));
                        }
                    }
                    Err(e) => text.push_str(&format!("{id:<30} (unreadable: {e})\n")),
                }
            }
            out(&text);
            Ok(0)
        }
        Command::Compare {
            baseline,
            contender,
            noise_threshold,
            alpha,
            fail_on,
            report,
        } => {
            if !(0.0..100.0).contains(&noise_threshold) || !(0.0..=1.0).contains(&alpha) {
                return Err(CliError::Usage("--noise-threshold is a percentage from 0 to 100 and --alpha a probability from 0 to 1".into()));
            }
            let store = RaceStore::new(&home);
            let b = store.load_record(&store.resolve(&baseline)?)?;
            let c = store.load_record(&store.resolve(&contender)?)?;
            let opts = crate::compare::CompareOptions {
                noise_threshold: noise_threshold / 100.0,
                alpha,
            };
            let comparison = crate::compare::compare(&b, &c, opts);
            for w in &comparison.warnings {
                eprintln!("warning: {w}");
            }
            emit_report(
                crate::compare::render(&comparison, report.report_format),
                report.report_file.as_deref(),
            )?;
            use crate::compare::Verdict;
            let failing = |v: Verdict| match fail_on {
                Some(args::FailOn::Worse) => v == Verdict::Regression,
                Some(args::FailOn::LikelyWorse) => {
                    matches!(v, Verdict::Regression | Verdict::UnjudgedRegression)
                }
                None => false,
            };
            let worse: Vec<String> = comparison
                .tasks
                .iter()
                .flat_map(|t| {
                    t.metrics
                        .iter()
                        .filter(|m| failing(m.verdict))
                        .map(move |m| format!("{} [{}] {}", t.task, t.sweep, m.metric))
                })
                .collect();
            if !worse.is_empty() {
                eprintln!("--fail-on: worse in {}", worse.join(", "));
                return Ok(EXIT_GATE_FAILED);
            }
            Ok(0)
        }
        Command::Plot {
            race,
            compare,
            out: dir,
        } => {
            use crate::plot;
            let store = RaceStore::new(&home);
            let (record, histograms) = load_race(&store, &race)?;
            let other = compare.map(|c| load_race(&store, &c)).transpose()?;
            let base_label = if other.is_some() {
                "baseline"
            } else {
                record.race_id.as_str()
            };
            let base = plot::Source {
                label: base_label,
                race: &record,
                histograms: &histograms,
            };
            let other_source = other.as_ref().map(|(r, h)| plot::Source {
                label: "contender",
                race: r,
                histograms: h,
            });
            let charts = plot::write_report(&dir, base, other_source)?;
            eprintln!("wrote {charts} charts and report.html to {}", dir.display());
            Ok(0)
        }
        Command::Export {
            race,
            to,
            openmetrics,
            client_options,
        } => export_command(&home, &race, to, openmetrics, &client_options),
        Command::Delete { race } => {
            let store = RaceStore::new(&home);
            let id = store.resolve(&race)?;
            store.delete(&id)?;
            eprintln!("deleted race {id}");
            Ok(0)
        }
        Command::Merge { race, report } => shard::merge_command(&home, &race, &report),
        Command::K8sJob(args) => shard::k8s_job_command(args),
        Command::Show { race, report } => {
            let store = RaceStore::new(&home);
            let (mut record, histograms) = load_race(&store, &race)?;
            record.status = race::effective_status(&record);
            emit_report(
                report::render(report.report_format, &record, &histograms),
                report.report_file.as_deref(),
            )?;
            Ok(0)
        }
        Command::Validate {
            track: name,
            track_params,
        } => {
            let args = TrackArgs {
                track: Some(name),
                track_params,
                ..TrackArgs::default()
            };
            let mut request = track_request(&args, &home)?;
            let t = load_track(&request)?;
            for c in &t.challenges {
                request.challenge = Some(c.name.clone());
                request.plan(&t)?;
            }
            out(&format!(
                "{}: ok: track `{}` with {} challenge(s) ({}), {} operation(s), {} corpus(es), {} index(es)\n",
                track::track_file(&request.location).display(),
                t.name,
                t.challenges.len(),
                t.challenges.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", "),
                t.operations.len(),
                t.corpora.len(),
                t.indices.len()
            ));
            Ok(0)
        }
    }
}

/// A built-in name, or a path to a directory or file.
fn track_location(name: Option<&str>, path: Option<&Path>) -> Result<PathBuf, CliError> {
    match (name, path) {
        (_, Some(p)) => Ok(p.to_path_buf()),
        (Some(n), None)
            if Path::new(n).exists()
                && (n.contains('/') || n.ends_with(".yaml") || n.ends_with(".yml")) =>
        {
            Ok(PathBuf::from(n))
        }
        (Some(n), None) => Ok(track::builtin_track(n)?),
        (None, None) => Err(CliError::Usage(
            "name a track with --track NAME or --track-path DIR (see `runner list tracks`)".into(),
        )),
    }
}

/// The track request the flags describe: where the track is, its parameters, test mode and
/// the Rally options, loaded the same way by every command.
fn track_request(args: &TrackArgs, home: &Path) -> Result<TrackRequest, CliError> {
    let location = track_location(args.track.as_deref(), args.track_path.as_deref())?;
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
        },
        challenge: args.challenge.clone(),
        plan: crate::plan::PlanOptions {
            test_mode: args.test_mode,
            include_tasks: args.include_tasks.clone(),
        },
    })
}

fn load_track(request: &TrackRequest) -> Result<track::Track, CliError> {
    let t = request.load()?;
    for note in &t.notes {
        eprintln!("note: {note}");
    }
    Ok(t)
}

fn convert_rally(
    _home: &Path,
    dir: &Path,
    out_dir: &Path,
    params: Option<&str>,
    opts: track::LoadOptions,
) -> Result<u8, CliError> {
    let params = params
        .map(track::parse_track_params)
        .transpose()?
        .unwrap_or_default();
    let opts = track::LoadOptions { params, ..opts };
    let (text, target) = crate::rally::write_converted(dir, out_dir, &opts)?;
    out(&text);
    eprintln!("wrote {}", target.display());
    Ok(0)
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
fn load_race(
    store: &RaceStore,
    given: &str,
) -> Result<(crate::results::RaceRecord, crate::results::RaceHistograms), CliError> {
    let (record, histograms) = store.load(&store.resolve(given)?)?;
    for p in &histograms.problems {
        eprintln!("warning: {p}");
    }
    Ok((record, histograms))
}

fn parse_tags(tags: &[String]) -> Result<std::collections::BTreeMap<String, String>, CliError> {
    tags.iter()
        .map(|tag| {
            let (k, v) = tag
                .split_once(':')
                .ok_or_else(|| CliError::Usage(format!("--user-tag `{tag}` is not key:value")))?;
            Ok((k.trim().to_string(), v.trim().to_string()))
        })
        .collect()
}

fn race_command(args: RaceArgs, home: &Path) -> Result<u8, CliError> {
    let request = race_request(&args, home)?;
    let track = load_track(&request.track)?;
    if args.backend == crate::backend::BackendKind::Embedded && !args.target_hosts.is_empty() {
        eprintln!("note: --target-hosts is ignored by the embedded backend, which runs in-process");
    }
    let runtime = runtime()?;
    let cancel = CancellationToken::new();
    let outcome = runtime.block_on(async {
        cancel_on_signals(
            &cancel,
            Some("interrupted: stopping clients and saving what was measured ..."),
        );
        race::run(Arc::new(track), &request, cancel.clone()).await
    })?;
    let (record, histogram_file) = &outcome.stored;
    let histograms = crate::results::RaceHistograms::decode(histogram_file);
    let summary = report::Summary::new(record, &histograms);
    emit_report(
        report::exporter(args.report.report_format).render(&summary),
        args.report.report_file.as_deref(),
    )?;
    eprintln!(
        "race {} stored in {}",
        record.race_id,
        outcome.dir.display()
    );
    match race_exit_code(outcome.ended()) {
        0 if !summary.thresholds_pass() => {
            eprintln!("a threshold failed (see Thresholds in the report)");
            Ok(EXIT_GATE_FAILED)
        }
        code => Ok(code),
    }
}

fn race_request(args: &RaceArgs, home: &Path) -> Result<RaceRequest, CliError> {
    let mut client_options =
        crate::backend::ClientOptions::parse(&args.client_options).map_err(CliError::Usage)?;
    if args.backend != crate::backend::BackendKind::Embedded {
        let file = crate::backend::credentials::Credentials::default_file(home);
        client_options.credentials =
            crate::backend::credentials::Credentials::load(&file).map_err(CliError::Usage)?;
    }
    Ok(RaceRequest {
        track: track_request(&args.track, home)?,
        backend: args.backend,
        target_hosts: args.target_hosts.clone(),
        client_options,
        on_error: args.on_error,
        progress: !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        quiet: args.quiet,
        home: home.to_path_buf(),
        user_tags: parse_tags(&args.user_tags)?,
        thresholds: args
            .thresholds
            .iter()
            .map(|t| parse_threshold(t))
            .collect::<Result<_, _>>()?,
        engine_storage: args.engine_storage,
        shard: crate::shard::resolve(
            args.shard.shard,
            args.shard.coordinator.as_deref(),
            args.shard.rendezvous_timeout,
            |name| std::env::var(name).ok(),
        )
        .map_err(CliError::Usage)?,
    })
}

/// `[TASK:]METRIC OP VALUE`.
fn parse_threshold(text: &str) -> Result<(Option<String>, crate::thresholds::Threshold), CliError> {
    let (task, criterion) = match text.split_once(':') {
        Some((task, rest)) => (Some(task.trim().to_string()), rest),
        None => (None, text),
    };
    let threshold = criterion
        .parse()
        .map_err(|e| CliError::Usage(format!("--threshold {text}: {e}")))?;
    Ok((task, threshold))
}
