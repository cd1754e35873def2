//! Measurement: per-client recorders with HDR histograms (microsecond values, 3 significant
//! digits) for service time and latency, merged after a trial; percentile summaries.

mod histogram;
mod recorder;

pub use histogram::{decode_histogram, encode_histogram, new_histogram, Percentiles, PERCENTILES};
pub use recorder::{Counts, PartTimes, Parts, Recorder, TrialMetrics};
