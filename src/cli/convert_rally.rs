//! `runner convert-rally`: the track of ours equivalent to a Rally track.

use super::common::{out, track_request, TrackArgs};
use super::CliError;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ConvertRallyArgs {
    /// The Rally track directory (holding track.json), or --track-path / --track.
    #[arg(value_name = "DIR", conflicts_with_all = ["track", "track_path"])]
    dir: Option<PathBuf>,
    /// Output directory (created; an existing track.yaml there is not overwritten).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    #[command(flatten)]
    track: TrackArgs,
}

pub fn run(args: ConvertRallyArgs, home: &Path) -> Result<u8, CliError> {
    let mut track_args = args.track;
    if let Some(dir) = args.dir {
        track_args.track_path = Some(dir);
    }
    let mut request = track_request(&track_args, home)?;
    // A conversion may be written before the corpus is fetched: what is missing is named in
    // the track's notes.
    request.load.corpora_may_be_missing = true;
    let (text, target) =
        crate::rally::write_converted(&request.location, &args.out, &request.load)?;
    out(&text);
    eprintln!("wrote {}", target.display());
    Ok(0)
}
