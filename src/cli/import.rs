//! `runner import --from URL`: Rally's and OSB's races out of a metrics store, into the store.

use super::common::runtime;
use super::CliError;
use crate::import::ImportFilter;
use crate::results::{HistogramFile, RaceStore, FORMAT_VERSION};
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The metrics store (Elasticsearch or OpenSearch) holding `rally-results-*`,
    /// `rally-races-*` or `benchmark-results-*` (credentials as for races:
    /// RUNNER_ES_USERNAME/RUNNER_ES_PASSWORD or RUNNER_ES_API_KEY).
    #[arg(long, value_name = "URL")]
    from: String,
    /// Only races of this track.
    #[arg(long, value_name = "NAME")]
    track: Option<String>,
    /// Only races of this challenge (OSB: test procedure).
    #[arg(long, value_name = "NAME")]
    challenge: Option<String>,
    /// Only races started on or after this day (YYYY-MM-DD) or instant (RFC 3339).
    #[arg(long, value_name = "WHEN")]
    since: Option<String>,
    /// TLS and timeout options, as for races (`verify_certs:false,timeout:30`).
    #[arg(long, value_name = "OPTIONS", default_value = "")]
    client_options: String,
}

pub fn run(args: ImportArgs, home: &Path) -> Result<u8, CliError> {
    // Rally's race timestamps: `20260101T120000Z`.
    let since = args
        .since
        .as_deref()
        .map(super::common::parse_since)
        .transpose()?
        .map(|t| t.format("%Y%m%dT%H%M%SZ").to_string());
    let filter = ImportFilter {
        track: args.track.clone(),
        challenge: args.challenge.clone(),
        since,
    };
    let options = super::common::cluster_client_options(&args.client_options, home)?;
    let admin = crate::backend::elasticsearch::Admin::new(vec![args.from.clone()], options)
        .map_err(CliError::Usage)?;
    let docs = runtime()?
        .block_on(crate::import::fetch(&admin, &filter))
        .map_err(|e| CliError::Import(e.to_string()))?;
    let races = crate::import::races_of(&docs, &admin.host())
        .map_err(|e| CliError::Import(format!("{}: {e}", admin.host())))?;
    let store = RaceStore::new(home);
    let (mut added, mut there) = (0, 0);
    for r in races {
        if store
            .race_dir(&r.record.race_id)
            .join("race.json")
            .is_file()
        {
            there += 1;
            continue;
        }
        let histograms = HistogramFile {
            format: FORMAT_VERSION,
            trials: Vec::new(),
        };
        store.begin(&r.record)?;
        store.finish(&r.record, &histograms, None)?;
        eprintln!(
            "imported {} ({} / {}, {}) from {}'s race {}",
            r.record.race_id,
            r.record.track,
            r.record.challenge,
            r.record.started_at,
            admin.host(),
            r.source_id
        );
        added += 1;
    }
    eprintln!(
        "{added} race(s) imported from {} ({} metric documents read){}",
        admin.host(),
        docs.len(),
        if there > 0 {
            format!("; {there} already in the store")
        } else {
            String::new()
        }
    );
    Ok(0)
}
