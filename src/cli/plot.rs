//! `runner plot`: SVG charts and a self-contained report.html.

use super::common::load_race;
use super::CliError;
use crate::plot;
use crate::results::RaceStore;
use clap::Args;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct PlotArgs {
    race: String,
    /// Another race to draw beside it (and compare against).
    #[arg(long, value_name = "RACE")]
    compare: Option<String>,
    /// Output directory (created if needed).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

pub fn run(args: PlotArgs, home: &Path) -> Result<u8, CliError> {
    let store = RaceStore::new(home);
    let (record, histograms) = load_race(&store, &args.race)?;
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
