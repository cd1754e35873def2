//! `runner race`: a benchmark run, stored and reported.

use super::common::{
    cancel_on_signals, emit_report, load_track, parse_positive_duration, parse_tags, runtime,
    track_request, ReportArgs, TrackArgs,
};
use super::{race_exit_code, CliError, EXIT_GATE_FAILED};
use crate::backend::BackendKind;
use crate::dashboard::Hub;
use crate::driver::OnError;
use crate::race;
use crate::report;
use crate::request::RaceRequest;
use clap::Args;
use std::path::Path;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Args)]
pub struct RaceArgs {
    #[command(flatten)]
    pub track: TrackArgs,
    /// The system raced. Default: elasticsearch when --target-hosts (redis:// hosts: redis) or
    /// --pipeline benchmark-only is given, else embedded (the engine inside runner).
    #[arg(long, value_enum)]
    pub backend: Option<BackendKind>,
    /// The cluster to race, as esrally takes it: `host:port,...` (https:// or the client option
    /// use_ssl:true for TLS), `{"default": ["host:port"]}` or a .json file holding that.
    /// Hosts select the elasticsearch backend.
    #[arg(long, value_name = "HOSTS")]
    pub target_hosts: Option<String>,
    /// esrally's pipeline: `benchmark-only` (race a cluster that is running) is what runner
    /// does; the pipelines that install Elasticsearch are refused.
    #[arg(long, value_name = "PIPELINE")]
    pub pipeline: Option<String>,
    /// The client's settings, as esrally takes them: `key:value,...` (strings in single
    /// quotes), `{"default": {...}}` or a .json file. elasticsearch: use_ssl, verify_certs,
    /// ca_certs, client_cert, client_key, basic_auth_user, basic_auth_password, api_key,
    /// timeout (seconds or None), http_compress, max_connections, enable_cleanup_closed;
    /// redis: tls, verify_certs, tls_ca_file, tls_cert_file, tls_key_file, tls_server_name,
    /// timeout, busy_poll. Credentials are better kept in RUNNER_ES_USERNAME,
    /// RUNNER_ES_PASSWORD, RUNNER_ES_API_KEY (RUNNER_REDIS_*) or the credentials file.
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    pub client_options: String,
    /// What an error response does: counted and reported (continue, as esrally), or the race
    /// stops at the first one, keeping what was measured (abort).
    #[arg(long, value_enum, default_value = "continue")]
    pub on_error: OnError,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// Tags stored with the race, `key:value,...` (esrally's --user-tags); repeatable.
    #[arg(
        long = "user-tags",
        visible_alias = "user-tag",
        value_name = "KEY:VALUE",
        value_delimiter = ','
    )]
    pub user_tags: Vec<String>,
    /// The race's id (esrally's --race-id): letters, digits, `.`, `_` and `-`, unique in the
    /// results directory. Default: the start time and a random suffix.
    #[arg(long, value_name = "ID")]
    pub race_id: Option<String>,
    /// A pass/fail criterion, `[TASK:]METRIC OP VALUE` (e.g. `search:service_time.p99 < 5ms`,
    /// `error_rate < 0.1%`: every task without `TASK:`); repeatable. A failed one exits 3.
    #[arg(long = "threshold", value_name = "[TASK:]CRITERION")]
    pub thresholds: Vec<String>,
    /// The embedded backend's indices: on disk under the results directory (memory stays
    /// flat as the corpus grows), or in RAM.
    #[arg(long, value_enum, default_value = "disk")]
    pub engine_storage: engine::storage::EngineStorage,
    /// Keep each request's intended start, service time and latency (warmup ones too), at most
    /// N per trial (a uniform sample past N; 32 bytes each while the trial runs), for
    /// `runner export`'s per-request `latency` and `service_time` documents, as Rally writes.
    #[arg(long, value_name = "N", num_args = 0..=1, default_missing_value = "1000000",
          value_parser = clap::value_parser!(u32).range(1..=MAX_SAMPLES))]
    pub keep_samples: Option<u32>,
    /// Serve a live dashboard of the race at ADDR (default 127.0.0.1:0, a free port; the
    /// address is printed): the plan, throughput and latency each second, errors, the
    /// runner's CPU, then the race's report when it ends.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:0")]
    pub dashboard: Option<std::net::SocketAddr>,
    /// After the race, how long the dashboard keeps serving its report (default: until
    /// Ctrl-C or SIGTERM).
    #[arg(long, value_name = "DURATION", requires = "dashboard", value_parser = super::common::parse_positive_duration)]
    pub dashboard_keep: Option<std::time::Duration>,
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub rally_only: super::rally_flags::RallyOnlyFlags,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// The most samples a trial keeps: 50 million, 1.6 GB while the trial runs.
const MAX_SAMPLES: i64 = 50_000_000;

/// One race run by several processes (see docs/shards.md).
#[derive(Debug, Args)]
pub struct ShardArgs {
    /// This process's shard, `I/N` (from 0), or `none` to run whole. Default: from the
    /// launcher (JOB_COMPLETION_INDEX with RUNNER_SHARDS, SLURM_PROCID/SLURM_NTASKS,
    /// OMPI_COMM_WORLD_RANK/SIZE, PMI_RANK/PMI_SIZE), else whole.
    #[arg(long, value_name = "I/N", default_value = "auto", value_parser = parse_shard)]
    pub shard: crate::shard::ShardArg,
    /// Where shard 0 serves the rendezvous, `HOST:PORT` (default: MASTER_ADDR:MASTER_PORT).
    #[arg(long, value_name = "HOST:PORT")]
    pub coordinator: Option<String>,
    /// How long shards wait for each other: to join, and at each step after the first one
    /// arrives.
    #[arg(long, default_value = "120s", value_parser = parse_positive_duration)]
    pub rendezvous_timeout: std::time::Duration,
}

fn parse_shard(text: &str) -> Result<crate::shard::ShardArg, String> {
    if text == "auto" {
        return Ok(crate::shard::ShardArg::Detect);
    }
    text.parse()
}

pub fn run(args: RaceArgs, home: &Path) -> Result<u8, CliError> {
    let mut request = race_request(&args, home)?;
    let track = load_track(&request.track)?;
    let runtime = runtime()?;
    let cancel = CancellationToken::new();
    let hub = args
        .dashboard
        .map(|_| Hub::new(serde_json::Value::Null, Vec::new()));
    request.live = hub.clone().map(|h| h as Arc<dyn crate::driver::LiveSink>);
    let stop_dashboard = CancellationToken::new();
    let outcome = runtime.block_on(async {
        cancel_on_signals(
            &cancel,
            Some("interrupted: stopping clients and saving what was measured ..."),
        );
        if let (Some(addr), Some(hub)) = (args.dashboard, &hub) {
            let bound = crate::dashboard::start(addr, hub.clone(), stop_dashboard.clone())
                .map_err(|e| CliError::Usage(format!("--dashboard {addr}: cannot listen: {e}")))?;
            eprintln!("dashboard: http://{bound}/");
        }
        race::run(Arc::new(track), &request, cancel.clone())
            .await
            .map_err(CliError::from)
    })?;
    let (record, histogram_file) = &outcome.stored;
    let histograms = crate::results::RaceHistograms::decode(histogram_file);
    if let Some(hub) = &hub {
        show_report_until_stopped(
            &runtime,
            hub,
            record,
            &histograms,
            &cancel,
            args.dashboard_keep,
        );
    }
    stop_dashboard.cancel();
    let summary = report::Summary::new(record, &histograms);
    emit_report(
        report::render(args.report.report_format, &summary),
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

/// The dashboard shows the race's report until Ctrl-C (or for `keep`), unless the race
/// itself was stopped by a signal.
fn show_report_until_stopped(
    runtime: &tokio::runtime::Runtime,
    hub: &Hub,
    record: &crate::results::RaceRecord,
    histograms: &crate::results::RaceHistograms,
    cancel: &CancellationToken,
    keep: Option<std::time::Duration>,
) {
    let source = crate::plot::Source {
        label: &record.race_id,
        race: record,
        histograms,
    };
    hub.finish(crate::plot::report_page(source, None).0);
    if cancel.is_cancelled() {
        return;
    }
    match keep {
        Some(d) => eprintln!(
            "dashboard: showing the report for {}",
            crate::units::format_duration_short(d)
        ),
        None => eprintln!("dashboard: showing the report until Ctrl-C"),
    }
    runtime.block_on(async {
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::sleep(keep.unwrap_or(std::time::Duration::MAX / 4)) => {}
        }
    });
}

fn race_request(args: &RaceArgs, home: &Path) -> Result<RaceRequest, CliError> {
    args.rally_only.check()?;
    let (backend, target_hosts) = super::target::resolve(
        args.backend,
        args.target_hosts.as_deref(),
        args.pipeline.as_deref(),
    )?;
    let client_options = match backend {
        BackendKind::Embedded if !args.client_options.trim().is_empty() => {
            return Err(CliError::Usage(
                "--client-options set a network client; the embedded backend has none (race a cluster with --target-hosts, or drop --client-options)".into(),
            ))
        }
        BackendKind::Embedded => crate::backend::ClientOptions::default(),
        BackendKind::Elasticsearch => super::common::cluster_client_options(&args.client_options, home)?,
        BackendKind::Redis => {
            let mut options = crate::backend::ClientOptions::parse(&args.client_options)
                .map_err(CliError::Usage)?;
            let file = crate::backend::credentials::Credentials::default_file(home);
            options.credentials = crate::backend::credentials::Credentials::load(&file)
                .map_err(CliError::Usage)?;
            options
        }
    };
    let race_id = args
        .race_id
        .as_deref()
        .map(|id| crate::results::RaceStore::new(home).check_new_id(id))
        .transpose()?;
    let shard = crate::shard::resolve(
        args.shard.shard,
        args.shard.coordinator.as_deref(),
        args.shard.rendezvous_timeout,
        |name| std::env::var(name).ok(),
    )
    .map_err(CliError::Usage)?;
    if race_id.is_some() && shard.is_some() {
        return Err(CliError::Usage(
            "--race-id is not taken by a sharded race: its shards agree on one id at the rendezvous (race whole, or without it)".into(),
        ));
    }
    if args.keep_samples.is_some() && shard.is_some() {
        return Err(CliError::Usage(
            "--keep-samples is not run in a sharded race: the merged race has no per-request samples to keep (race whole, or without it)".into(),
        ));
    }
    Ok(RaceRequest {
        track: track_request(&args.track, home)?,
        backend,
        target_hosts,
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
        keep_samples: args.keep_samples.map(|n| n as usize),
        shard,
        race_id,
        live: None,
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
