//! `runner export`: a stored race as Rally's metric documents, or as OpenMetrics.

use super::common::{load_race, runtime};
use super::CliError;
use crate::report;
use crate::results::RaceStore;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ExportArgs {
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
}

pub fn run(args: ExportArgs, home: &Path) -> Result<u8, CliError> {
    let ExportArgs {
        race,
        to,
        openmetrics,
        client_options,
    } = args;
    if to.is_none() && openmetrics.is_none() {
        return Err(CliError::Usage(
            "export needs --to URL, --openmetrics FILE, or both".into(),
        ));
    }
    let store = RaceStore::new(home);
    let (record, histograms) = load_race(&store, &race)?;
    let summary = report::Summary::new(&record, &histograms);
    if let Some(file) = openmetrics {
        crate::results::write_report(&file, &crate::export::openmetrics(&summary))?;
        eprintln!("wrote {}", file.display());
    }
    if let Some(url) = to {
        let options = super::common::cluster_client_options(&client_options, home)?;
        let admin = crate::backend::elasticsearch::Admin::new(vec![url], options)
            .map_err(CliError::Usage)?;
        let docs = crate::export::rally_documents(&summary);
        let runtime = runtime()?;
        let race_id = record.race_id.clone();
        let load = |r: &crate::results::SamplesRecord| {
            store.load_samples(&race_id, r).map_err(|e| e.to_string())
        };
        let written = runtime.block_on(crate::export::to_elasticsearch(&admin, &docs, &load))?;
        eprintln!(
            "exported {written} documents to {} ({} and {})",
            admin.host(),
            docs.results_index,
            docs.metrics_index
        );
    }
    Ok(0)
}
