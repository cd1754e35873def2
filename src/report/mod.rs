//! Reports of a stored race, one file per format behind one trait. Every exporter reads the
//! same [`Summary`], derived from the stored race and its histograms.

mod csv;
pub(crate) mod header;
mod json;
mod kv;
mod markdown;
mod shards;
mod summary;
pub mod table;

pub use kv::{CumulativeLine, KvViews, RedisBenchmarkView, TimerView};
pub use summary::{Summary, TaskSummary, ThroughputStats};

use crate::results::{RaceHistograms, RaceRecord};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    Markdown,
    Csv,
    Json,
}

pub trait Exporter {
    fn render(&self, summary: &Summary) -> String;
}

pub fn exporter(format: ReportFormat) -> Box<dyn Exporter> {
    match format {
        ReportFormat::Markdown => Box::new(markdown::Markdown),
        ReportFormat::Csv => Box::new(csv::Csv),
        ReportFormat::Json => Box::new(json::Json),
    }
}

pub fn render(format: ReportFormat, race: &RaceRecord, histograms: &RaceHistograms) -> String {
    exporter(format).render(&Summary::new(race, histograms))
}
