//! The race store: every race in its own directory with `race.json` (format 1) and the raw
//! HDR histograms. Each trial is stored in a file of its own as it ends, so that a killed race
//! keeps every completed trial, and consolidated when the race ends.

mod histograms;
mod journal;
mod model;
pub mod schema;
mod store;

pub use histograms::{add as add_histogram, RaceHistograms};
pub use journal::StoredTrial;
pub use model::*;
pub use schema::{
    BackendRecord, DriverRecord, ErrorKindRecord, KeyValueRecord, OnErrorRecord, ServerRecord,
    SlotRecord,
};
pub use store::{new_race_id, write_atomic, write_report, RaceStore, StoreError};
