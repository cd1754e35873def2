//! `runner show`: the report of a stored race.

use super::common::{emit_report, load_race, ReportArgs};
use super::CliError;
use crate::race;
use crate::report;
use crate::results::RaceStore;
use clap::Args;
use std::path::Path;

#[derive(Debug, Args)]
pub struct ShowArgs {
    /// Race id, unique id prefix, `latest` or `latest~N`.
    race: String,
    #[command(flatten)]
    report: ReportArgs,
}

pub fn run(args: ShowArgs, home: &Path) -> Result<u8, CliError> {
    let store = RaceStore::new(home);
    let (mut record, histograms) = load_race(&store, &args.race)?;
    record.status = race::effective_status(&record);
    emit_report(
        report::render_race(args.report.report_format, &record, &histograms),
        args.report.report_file.as_deref(),
    )?;
    Ok(0)
}
