//! How long a step should take by its plan: what the progress line's time left counts on.

use super::{Leaf, Work};
use std::time::Duration;

/// A leaf's length by its plan: a time budget, or a fixed number of operations at a target
/// rate; None when it runs as fast as it can (or searches for a capacity), which only its
/// measured rate can tell.
pub fn leaf_duration(leaf: &Leaf) -> Option<Duration> {
    if leaf.capacity.is_some() {
        return None;
    }
    match leaf.work {
        Work::Time { warmup, measured } => Some(warmup + measured),
        Work::Iterations { warmup, measured } => {
            let rate = leaf
                .target_throughput
                .filter(|t| t.0 > 0.0 && t.0.is_finite())?;
            let seconds = (warmup + measured) as f64 / rate.0;
            Some(Duration::from_secs_f64(seconds.min(1e9)) + leaf.ramp_up)
        }
        Work::Corpus { .. } => None,
    }
}

/// A step's length: its longest leaf (they run at once), when every leaf's is known.
pub fn step_duration(leaves: &[Leaf]) -> Option<Duration> {
    leaves
        .iter()
        .map(leaf_duration)
        .try_fold(Duration::ZERO, |longest, d| Some(longest.max(d?)))
}
