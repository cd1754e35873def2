//! Command-line arguments, mirrored one to one from the flags.

use crate::backend::BackendKind;
use crate::driver::OnError;
use crate::report::ReportFormat;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "runner",
    version,
    about = "A declarative YAML benchmark runner in the style of Elasticsearch Rally"
)]
pub struct Cli {
    /// Where races are stored (default: $RUNNER_HOME, else ~/.runner).
    #[arg(long, global = true, value_name = "DIR")]
    pub results_dir: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run a benchmark: track → plan → driver → backend → stored race and report.
    Race(RaceArgs),
    /// Print the task graph a race would run, without running it.
    Plan(PlanArgs),
    /// Print a track after templating: ours (YAML) or a Rally track directory (track.json,
    /// rendered with Rally's helpers).
    RenderTrack(RenderArgs),
    /// Write the track of ours equivalent to a Rally track directory: track.yaml (index bodies
    /// inline, Rally's semantics translated) and its corpus files (hard-linked, else copied).
    ConvertRally {
        /// The Rally track directory (holding track.json).
        dir: PathBuf,
        /// Output directory (created; an existing track.yaml there is not overwritten).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        #[arg(long, value_name = "PARAMS")]
        track_params: Option<String>,
        #[arg(long)]
        ignore_unused_track_params: bool,
        #[arg(long, value_enum, default_value = "fail")]
        on_unsupported: crate::track::OnUnsupported,
        /// Convert for a test-mode race: the corpus files' `-1k` variants.
        #[arg(long)]
        test_mode: bool,
        /// The challenge whose tasks must convert (default: the track's default); OSB's test
        /// procedure.
        #[arg(long, visible_alias = "test-procedure")]
        challenge: Option<String>,
    },
    /// List built-in tracks or stored races (newest first).
    List {
        #[arg(value_enum)]
        what: ListWhat,
        #[command(flatten)]
        filter: RaceFilter,
    },
    /// Compare two stored races: baseline, then contender.
    Compare {
        /// Race id, unique prefix, `latest` or `latest~N`.
        baseline: String,
        contender: String,
        /// Relative differences below this many percent count as noise.
        #[arg(long, default_value_t = 5.0, value_name = "PERCENT")]
        noise_threshold: f64,
        /// Significance level of the Mann-Whitney U test (needs >= 3 trials in each race).
        #[arg(long, default_value_t = 0.05)]
        alpha: f64,
        /// Exit 3 when a metric is `worse` (significant, beyond the noise threshold), or with
        /// `likely-worse` also when too few trials leave a regression unjudged: a CI gate.
        #[arg(long, value_enum, value_name = "WHAT")]
        fail_on: Option<FailOn>,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Write SVG charts of a stored race and a self-contained report.html showing them with
    /// the summary tables.
    Plot {
        race: String,
        /// Another race to draw beside it (and compare against).
        #[arg(long, value_name = "RACE")]
        compare: Option<String>,
        /// Output directory (created if needed).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Export a stored race: Rally's metric documents into an Elasticsearch or OpenSearch
    /// (`--to`, so Rally's dashboards work), or an OpenMetrics text file (`--openmetrics`).
    Export {
        /// Race id, unique id prefix, `latest` or `latest~N`.
        race: String,
        /// The cluster to write `rally-results-*` and `rally-metrics-*` into (credentials as for
        /// races: RUNNER_ES_USERNAME/RUNNER_ES_PASSWORD or RUNNER_ES_API_KEY).
        #[arg(long, value_name = "URL")]
        to: Option<String>,
        /// Write the race's summary in OpenMetrics text format (for Prometheus) to this file.
        #[arg(long, value_name = "FILE")]
        openmetrics: Option<PathBuf>,
        /// TLS and timeout options of `--to`, as for races (`verify_certs:false,timeout:30`).
        #[arg(long, value_name = "OPTIONS", default_value = "")]
        client_options: String,
    },
    /// Delete a stored race.
    Delete { race: String },
    /// Merge the shard races stored under a race (`<race>/shard-<i>`, copied there from each
    /// load driver's results directory) into that race, exactly; shard 0 does this itself
    /// when it can reach every shard.
    Merge {
        /// The race id (as each shard printed it).
        race: String,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Write the Kubernetes manifests of a sharded race: an Indexed Job of N pods, a headless
    /// Service for shard 0's rendezvous, the track in a ConfigMap, results on a volume.
    K8sJob(K8sJobArgs),
    /// Print the report of a stored race.
    Show {
        /// Race id, unique id prefix, `latest` or `latest~N`.
        race: String,
        #[command(flatten)]
        report: ReportArgs,
    },
    /// Serve the embedded engine over the Elasticsearch REST API subset (for
    /// `--backend elasticsearch`, curl or other tools), until Ctrl-C.
    Serve(ServeArgs),
    /// Load and check a track (name of a built-in track, or a path), then print what it holds.
    Validate {
        /// Built-in track name, track directory or track file.
        track: String,
        #[arg(long, value_name = "PARAMS")]
        track_params: Option<String>,
    },
}

/// Filters of `list races`.
#[derive(Debug, Args, Clone, Default)]
pub struct RaceFilter {
    #[arg(long)]
    pub track: Option<String>,
    #[arg(long)]
    pub challenge: Option<String>,
    #[arg(long)]
    pub backend: Option<String>,
    /// `key:value`; repeatable, all must match.
    #[arg(long = "user-tag", value_name = "KEY:VALUE")]
    pub user_tags: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    Worse,
    LikelyWorse,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum ListWhat {
    Tracks,
    Races,
}

#[derive(Debug, Args, Clone, Default)]
pub struct TrackArgs {
    /// A built-in track (see `runner list tracks`).
    #[arg(long, conflicts_with = "track_path", value_name = "NAME")]
    pub track: Option<String>,
    /// A track directory (holding track.yaml, a Rally track.json or an OpenSearch Benchmark
    /// workload.json) or a track file.
    #[arg(long, value_name = "PATH", visible_alias = "workload-path")]
    pub track_path: Option<PathBuf>,
    /// Challenge to run (default: the track's default challenge); OSB's test procedure.
    #[arg(long, visible_alias = "test-procedure")]
    pub challenge: Option<String>,
    /// Track parameters: `k=v,k2=[1,2]`, or a .yaml/.json file.
    #[arg(long, value_name = "PARAMS", visible_alias = "workload-params")]
    pub track_params: Option<String>,
    /// Shrink the race to seconds: first 1,000 documents, few iterations, short periods.
    #[arg(long)]
    pub test_mode: bool,
    /// Run only these tasks (task names, operation names or types), comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "TASKS")]
    pub include_tasks: Option<Vec<String>>,
    /// Rally tracks: allow --track-params that no template of the track uses.
    #[arg(long)]
    pub ignore_unused_track_params: bool,
    /// Rally tracks: a task the runner cannot run as Rally would fails the track, or is skipped.
    #[arg(long, value_enum, default_value = "fail")]
    pub on_unsupported: crate::track::OnUnsupported,
}

#[derive(Debug, Args, Clone)]
pub struct ReportArgs {
    #[arg(long, value_enum, default_value = "markdown")]
    pub report_format: ReportFormat,
    /// Also write the report to this file.
    #[arg(long, value_name = "FILE")]
    pub report_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct RaceArgs {
    #[command(flatten)]
    pub track: TrackArgs,
    #[arg(long, value_enum, default_value = "embedded")]
    pub backend: BackendKind,
    /// Hosts of a network backend, comma-separated (unused by the embedded backend).
    #[arg(long, value_delimiter = ',', value_name = "HOSTS")]
    pub target_hosts: Vec<String>,
    /// Client settings of a network backend: `key:value,...` (redis: tls, verify_certs,
    /// tls_ca_file, tls_cert_file, tls_key_file, tls_server_name, timeout, busy_poll;
    /// elasticsearch: verify_certs, tls_ca_file, tls_cert_file, tls_key_file, timeout,
    /// compression). Credentials go in environment variables, not here.
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    pub client_options: String,
    #[arg(long, value_enum, default_value = "continue")]
    pub on_error: OnError,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// Tags stored with the race, `key:value`; repeatable.
    #[arg(long = "user-tag", value_name = "KEY:VALUE")]
    pub user_tags: Vec<String>,
    /// A pass/fail criterion, `[TASK:]METRIC OP VALUE` (e.g. `search:service_time.p99 < 5ms`,
    /// `error_rate < 0.1%`: every task without `TASK:`); repeatable. A failed one exits 3.
    #[arg(long = "threshold", value_name = "[TASK:]CRITERION")]
    pub thresholds: Vec<String>,
    /// The embedded backend's indices: on disk under the results directory (memory stays
    /// flat as the corpus grows), or in RAM.
    #[arg(long, value_enum, default_value = "disk")]
    pub engine_storage: engine::storage::EngineStorage,
    #[command(flatten)]
    pub shard: ShardArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// One race run by several processes (see README: Many load drivers).
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

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where the engine keeps its indices: on disk under the results directory (memory stays
    /// flat as the corpus grows), or in RAM.
    #[arg(long, value_enum, default_value = "disk")]
    pub engine_storage: engine::storage::EngineStorage,
    /// Address to bind; loopback by default, as the server has no authentication.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
    /// Port to listen on (0 picks a free one and prints it).
    #[arg(long, default_value_t = 9200)]
    pub port: u16,
    /// Answer _search and _bulk at once without doing any work, to measure a client alone.
    #[arg(long)]
    pub stub: bool,
    /// Serve HTTPS with this PEM certificate chain (needs --tls-key).
    #[arg(long, value_name = "FILE", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Open connections at most; at the cap the longest-idle one is closed for a new one.
    #[arg(long, default_value_t = 4096, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub max_connections: u32,
    /// Request bytes all requests may hold together (received and decompressed); beyond it a
    /// request gets 429, as from Elasticsearch's in-flight requests breaker.
    #[arg(long, default_value = "256mb", value_parser = parse_byte_budget)]
    pub max_in_flight_bytes: u64,
    /// Time to send a request head, counted from when the server waits for one: closes
    /// slowloris connections and connections idle between requests.
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration)]
    pub header_timeout: std::time::Duration,
    /// Time to send a whole request body once its head has arrived (408 after).
    #[arg(long, default_value = "60s", value_parser = parse_positive_duration)]
    pub body_timeout: std::time::Duration,
}

fn parse_byte_budget(text: &str) -> Result<u64, String> {
    crate::units::parse_bytes(text).map(|b| b.0)
}

fn parse_positive_duration(text: &str) -> Result<std::time::Duration, String> {
    let d = crate::units::parse_duration(text)?;
    if d.is_zero() {
        return Err(format!("`{text}` must be longer than zero"));
    }
    Ok(d)
}

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub track: TrackArgs,
    #[arg(long, value_enum, default_value = "text")]
    pub format: PlanFormat,
}

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub track: TrackArgs,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlanFormat {
    Text,
    Json,
}

#[derive(Debug, Args)]
pub struct K8sJobArgs {
    /// The track directory (or file) to ship in a ConfigMap (at most ~900 KB: corpora go in
    /// the image or a volume).
    #[arg(long, value_name = "DIR", conflicts_with = "track")]
    pub track_path: Option<PathBuf>,
    /// A built-in track, instead of --track-path.
    #[arg(long, value_name = "NAME")]
    pub track: Option<String>,
    /// Shards (pods): the Job's completions and parallelism.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub shards: u32,
    /// The container image holding `runner`.
    #[arg(long)]
    pub image: String,
    /// The Job's (and Service's) name.
    #[arg(long, default_value = "runner-race")]
    pub name: String,
    #[arg(long)]
    pub namespace: Option<String>,
    /// Shard 0's rendezvous port.
    #[arg(long, default_value_t = crate::shard::DEFAULT_PORT)]
    pub port: u16,
    /// A PersistentVolumeClaim for /results (default: an emptyDir; shard 0 logs the report).
    #[arg(long, value_name = "PVC")]
    pub results_claim: Option<String>,
    /// Write here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// More `runner race` arguments, after `--` (`-- --challenge quick --backend elasticsearch`).
    #[arg(last = true, value_name = "RACE ARGS")]
    pub race_args: Vec<String>,
}
