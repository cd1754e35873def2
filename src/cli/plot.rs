//! `runner plot`: SVG charts and a self-contained report.html.

use super::common::load_race;
use super::CliError;
use crate::plot;
use crate::results::RaceStore;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The race to draw (not with --trend).
    #[arg(required_unless_present = "trend")]
    race: Option<String>,
    /// Draw the trend of the stored races the filters match instead (each series with its
    /// change points, as `runner trend --plot`).
    #[arg(long, conflicts_with_all = ["race", "compare"])]
    trend: bool,
    #[command(flatten)]
    filter: super::list::RaceFilter,
    /// Another race to draw beside it (and compare against).
    #[arg(long, value_name = "RACE")]
    compare: Option<String>,
    /// Output directory (created if needed).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn run(args: PlotArgs, home: &Path) -> Result<u8, CliError> {
    let f = &args.filter;
    if !args.trend
        && (f.track.is_some()
            || f.challenge.is_some()
            || f.backend.is_some()
            || !f.user_tags.is_empty())
    {
        return Err(CliError::Usage(
            "--track, --challenge, --backend and --user-tag choose the races of `plot --trend`; a single race's plot takes none".into(),
        ));
    }
    let Some(race) = args.race.as_deref().filter(|_| !args.trend) else {
        let charts = super::trend::plot(&args.filter, &args.out, home)?;
        eprintln!("wrote {charts} trend charts to {}", args.out.display());
        return Ok(0);
    };
    let store = RaceStore::new(home);
    let (record, histograms) = load_race(&store, race)?;
    let other = args.compare.map(|c| load_race(&store, &c)).transpose()?;
    let base_label = if other.is_some() {
        "baseline"
    } else {
        record.race_id.as_str()
    };
    let base = plot::Source {
        label: base_label,
        race: &record,
        histograms: &histograms,
    };
    let other_source = other.as_ref().map(|(r, h)| plot::Source {
        label: "contender",
        race: r,
        histograms: h,
    });
    let charts = plot::write_report(&args.out, base, other_source)?;
    eprintln!(
        "wrote {charts} charts and report.html to {}",
        args.out.display()
    );
    Ok(0)
}
