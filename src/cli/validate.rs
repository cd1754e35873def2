//! `runner validate`: loads a track and plans every challenge.

use super::common::{load_track, out, track_request, TrackArgs};
use super::CliError;
use crate::track;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// A built-in track's name, a track directory or a track file (or --track, --track-path).
    #[arg(value_name = "TRACK", conflicts_with_all = ["track", "track_path"])]
    given: Option<String>,
    #[command(flatten)]
    track: TrackArgs,
}

pub fn run(args: ValidateArgs, home: &Path) -> Result<u8, CliError> {
    let mut track_args = args.track;
    if let Some(given) = args.given {
        track_args.track = Some(given);
    }
    let mut request = track_request(&track_args, home)?;
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
