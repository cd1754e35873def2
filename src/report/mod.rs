//! Reports of a stored race, one file per format behind one trait. Every format reads the same
//! [`Summary`], derived from the stored race and its histograms; a comparison of two races is
//! rendered through the same trait by the same formats (see `compare::render`).

pub mod capacity;
mod csv;
pub(crate) mod header;
mod json;
mod kv;
mod markdown;
pub mod recall;
mod shards;
mod summary;
pub mod table;

pub use kv::{CumulativeLine, KvViews, RedisBenchmarkView, TimerView};
pub use summary::{Summary, TaskSummary, ThroughputStats};

use crate::results::{RaceHistograms, RaceRecord};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Tables for a terminal or a pull request.
    Markdown,
    /// One row per task and metric (esrally's csv).
    Csv,
    /// Everything the tables show, for programs.
    Json,
}

pub use csv::Csv;
pub use json::Json;
pub use markdown::Markdown;

/// One output format of one kind of result: a race's [`Summary`], a comparison. Each format is
/// a type (`Markdown`, `Csv`, `Json`) rendering every kind it knows.
pub trait Render<T: ?Sized> {
    fn render(&self, value: &T) -> String;
}

/// `value` in the chosen format.
pub fn render<T: ?Sized>(format: ReportFormat, value: &T) -> String
where
    Markdown: Render<T>,
    Csv: Render<T>,
    Json: Render<T>,
{
    match format {
        ReportFormat::Markdown => Markdown.render(value),
        ReportFormat::Csv => Csv.render(value),
        ReportFormat::Json => Json.render(value),
    }
}

/// A stored race's report in the chosen format.
pub fn render_race(format: ReportFormat, race: &RaceRecord, histograms: &RaceHistograms) -> String {
    render(format, &Summary::new(race, histograms))
}
