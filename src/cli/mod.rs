//! The command line: parses arguments and dispatches to one file per subcommand; the work
//! lives in the library.

mod common;
mod compare;
mod convert_rally;
mod delete;
mod export;
mod import;
mod k8s_job;
mod list;
mod merge;
mod plan;
mod plot;
mod race;
mod rally_flags;
#[cfg(test)]
mod reference;
mod render_track;
mod report;
mod serve;
mod show;
mod target;
mod trend;
mod validate;

pub use common::{ReportArgs, TrackArgs};

use crate::race::{RaceEnd, RaceError};
use crate::results::{RaceStore, StoreError};
use crate::track::TrackError;
use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Exit code for bad input (track, parameters, race ids).
pub const EXIT_BAD_INPUT: u8 = 2;
/// Exit code for a race stopped by Ctrl-C.
pub const EXIT_INTERRUPTED: u8 = 130;
/// The race completed, but a threshold failed (`race`), or `compare --fail-on` found what it
/// fails on: a gate for CI.
pub const EXIT_GATE_FAILED: u8 = 3;

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
    Race(race::RaceArgs),
    /// Print the task graph a race would run, without running it.
    Plan(plan::PlanArgs),
    /// Print a track after templating: ours (YAML) or a Rally track directory (track.json,
    /// rendered with Rally's helpers).
    RenderTrack(render_track::RenderArgs),
    /// Write the track of ours equivalent to a Rally track directory: track.yaml (index bodies
    /// inline, Rally's semantics translated) and its corpus files (hard-linked, else copied).
    ConvertRally(convert_rally::ConvertRallyArgs),
    /// List built-in tracks or stored races (newest first).
    List(list::ListArgs),
    /// Compare two stored races: baseline, then contender.
    Compare(compare::CompareArgs),
    /// Write SVG charts of a stored race and a self-contained report.html showing them with
    /// the summary tables.
    Plot(plot::PlotArgs),
    /// Export a stored race: Rally's metric documents into an Elasticsearch or OpenSearch
    /// (`--to`, so Rally's dashboards work), or an OpenMetrics text file (`--openmetrics`).
    Export(export::ExportArgs),
    /// Read Rally's or OpenSearch Benchmark's races out of an Elasticsearch/OpenSearch metrics
    /// store (`rally-results-*`, `rally-races-*`, `benchmark-results-*`) into the store, marked
    /// as imported (no histograms: their percentiles as stored), for `trend`, `report`, `compare`.
    Import(import::ImportArgs),
    /// Delete a stored race.
    Delete(delete::DeleteArgs),
    /// Merge the shard races stored under a race (`<race>/shard-<i>`, copied there from each
    /// load driver's results directory) into that race, exactly; shard 0 does this itself
    /// when it can reach every shard.
    Merge(merge::MergeArgs),
    /// Write the Kubernetes manifests of a sharded race: an Indexed Job of N pods, a headless
    /// Service for shard 0's rendezvous, the track in a ConfigMap, results on a volume.
    K8sJob(k8s_job::K8sJobArgs),
    /// Print the report of a stored race.
    Show(show::ShowArgs),
    /// Several stored races as one report: per task and metric the mean, median, min, max and
    /// coefficient of variation across them, and percentiles of all their samples together.
    Report(report::ReportRacesArgs),
    /// Follow the stored races of one track and challenge: each task's metrics in race order,
    /// their change points (E-Divisive means, Otava's variant), regressions; a CI gate with
    /// `--fail-on regression`.
    Trend(trend::TrendArgs),
    /// Serve the embedded engine over the Elasticsearch REST API subset (for
    /// `--backend elasticsearch`, curl or other tools), until Ctrl-C.
    Serve(serve::ServeArgs),
    /// Load and check a track (name of a built-in track, or a path), then print what it holds.
    Validate(validate::ValidateArgs),
}

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
    /// A metrics store that could not be read, or is not one: exit 1.
    #[error("import: {0}")]
    Import(String),
}

impl CliError {
    /// The one place errors become exit codes (docs/cli.md: Exit codes).
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
            CliError::Export(_) | CliError::Import(_) => 1,
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

/// Runs one command; returns the process exit code.
pub fn run(cli: Cli) -> Result<u8, CliError> {
    let home = cli
        .results_dir
        .clone()
        .unwrap_or_else(RaceStore::default_home);
    match cli.command {
        Command::Race(args) => race::run(args, &home),
        Command::Plan(args) => plan::run(args, &home),
        Command::RenderTrack(args) => render_track::run(args, &home),
        Command::ConvertRally(args) => convert_rally::run(args, &home),
        Command::List(args) => list::run(args, &home),
        Command::Compare(args) => compare::run(args, &home),
        Command::Plot(args) => plot::run(args, &home),
        Command::Export(args) => export::run(args, &home),
        Command::Import(args) => import::run(args, &home),
        Command::Delete(args) => delete::run(args, &home),
        Command::Merge(args) => merge::run(args, &home),
        Command::K8sJob(args) => k8s_job::run(args),
        Command::Show(args) => show::run(args, &home),
        Command::Trend(args) => trend::run(args, &home),
        Command::Report(args) => report::run(args, &home),
        Command::Serve(args) => serve::run(args, &home),
        Command::Validate(args) => validate::run(args, &home),
    }
}
