//! `runner plan`: the task graph a race would run.

use super::common::{load_track, out, track_request, TrackArgs};
use super::CliError;
use clap::{Args, ValueEnum};
use std::path::Path;

#[derive(Debug, Args)]
pub struct PlanArgs {
    #[command(flatten)]
    pub track: TrackArgs,
    /// The plan as text, or as JSON (its task graph, as the driver receives it).
    #[arg(long, value_enum, default_value = "text", alias = "format")]
    pub report_format: PlanFormat,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum PlanFormat {
    /// Steps and their tasks, one per line.
    Text,
    /// The task graph.
    Json,
}

pub fn run(args: PlanArgs, home: &Path) -> Result<u8, CliError> {
    let request = track_request(&args.track, home)?;
    let plan = request.plan(&load_track(&request)?)?;
    match args.report_format {
        PlanFormat::Text => out(&crate::plan::render_text(&plan)),
        PlanFormat::Json => out(&format!(
            "{}\n",
            serde_json::to_string_pretty(&plan).unwrap_or_default()
        )),
    }
    Ok(0)
}
