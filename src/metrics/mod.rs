//! Measurement: per-client recorders with HDR histograms (microsecond values, 3 significant
//! digits) for service time and latency, merged after a trial; percentile summaries.

mod histogram;
mod live;
mod recorder;
mod samples;

pub use histogram::{
    decode_histogram, encode_histogram, new_histogram, value_at_percentile, Percentiles,
    PERCENTILES,
};
/// Errors over all operations that ended (successes and errors), 0 when none did.
pub fn error_rate(successes: u64, errors: u64) -> f64 {
    if successes + errors > 0 {
        errors as f64 / (successes + errors) as f64
    } else {
        0.0
    }
}

pub use live::{LatencyPoint, LiveGroup, LiveTotals, SecondPoint, MAX_TIMELINE_SECONDS};
pub use recorder::{
    measured_seconds, recall_histogram, Counts, PartTimes, Parts, Recorder, TrialMetrics,
    LATE_START,
};
pub use samples::{Sample, TrialSamples};
