//! `runner validate`: loads a track and plans every challenge.

use super::common::{load_track, out, track_request, TrackArgs};
use super::CliError;
use crate::track;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Built-in track name, track directory or track file.
    track: String,
    #[arg(long, value_name = "PARAMS")]
    track_params: Option<String>,
    /// Rally tracks with a track.py: the Python interpreter that runs it (default: `python3`).
    #[arg(long, value_name = "PATH")]
    python: Option<std::path::PathBuf>,
}

pub fn run(args: ValidateArgs, home: &Path) -> Result<u8, CliError> {
    let track_args = TrackArgs {
        track: Some(args.track),
        track_params: args.track_params,
        python: args.python,
        ..TrackArgs::default()
    };
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
