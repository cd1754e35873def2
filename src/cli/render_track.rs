//! `runner render-track`: a track after templating.

use super::common::{out, track_request, TrackArgs};
use super::CliError;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct RenderArgs {
    #[command(flatten)]
    pub track: TrackArgs,
}

pub fn run(args: RenderArgs, home: &Path) -> Result<u8, CliError> {
    let request = track_request(&args.track, home)?;
    let text = request.render()?;
    out(&text);
    // A Rally track must render to JSON: say where it does not (below the text shown).
    if let Some(file) = crate::rally::rally_track_file(&request.location) {
        crate::rally::parse_rendered(&text, &file)?;
    }
    Ok(0)
}
