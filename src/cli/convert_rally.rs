//! `runner convert-rally`: the track of ours equivalent to a Rally track.

use super::common::out;
use super::CliError;
use crate::track;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ConvertRallyArgs {
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
    /// The version the track's templates see as `distribution_version` (OSB's
    /// `--distribution-version`).
    #[arg(long, value_name = "VERSION")]
    distribution_version: Option<String>,
}

pub fn run(args: ConvertRallyArgs, home: &Path) -> Result<u8, CliError> {
    let params = args
        .track_params
        .as_deref()
        .map(track::parse_track_params)
        .transpose()?
        .unwrap_or_default();
    let opts = track::LoadOptions {
        frontends: crate::rally::FRONTENDS,
        params,
        ignore_unused_params: args.ignore_unused_track_params,
        on_unsupported: args.on_unsupported,
        test_mode: args.test_mode,
        challenge: args.challenge,
        data_root: Some(home.join("data")),
        // A conversion may be written before the corpus is fetched: what is missing is named
        // in the track's notes.
        corpora_may_be_missing: true,
        python: None,
        distribution_version: args.distribution_version,
        offline: false,
    };
    let (text, target) = crate::rally::write_converted(&args.dir, &args.out, &opts)?;
    out(&text);
    eprintln!("wrote {}", target.display());
    Ok(0)
}
