//! `runner report RACE RACE ...`: several stored races as one report.

use super::common::{emit_report, ReportArgs};
use super::CliError;
use crate::results::RaceStore;
use crate::trend::TrendMetric;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ReportRacesArgs {
    /// Race ids, unique prefixes, `latest` or `latest~N`.
    #[arg(required = true, num_args = 1..)]
    races: Vec<String>,
    /// The metrics to report (repeatable; default: throughput, service_time_p50,
    /// service_time_p99, latency_p99, error_rate, capacity).
    #[arg(long = "metric", value_enum)]
    metrics: Vec<TrendMetric>,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: ReportRacesArgs, home: &Path) -> Result<u8, CliError> {
    let store = RaceStore::new(home);
    let mut races = Vec::new();
    for given in &args.races {
        races.push(store.load(&store.resolve(given)?)?);
    }
    let metrics = if args.metrics.is_empty() {
        TrendMetric::DEFAULT.to_vec()
    } else {
        args.metrics
    };
    let across = crate::trend::across::across(&races, &metrics);
    for w in &across.warnings {
        eprintln!("warning: {w}");
    }
    emit_report(
        crate::report::render(args.report.report_format, &across),
        args.report.report_file.as_deref(),
    )?;
    Ok(0)
}
