//! The race store: every race in its own directory with `race.json` (format 1) and the raw
//! HDR histograms, rewritten atomically after each trial so that a killed race keeps every
//! completed trial.

mod histograms;
mod model;
mod store;

pub use histograms::RaceHistograms;
pub use model::*;
pub use store::{write_atomic, write_report, RaceStore, StoreError};
