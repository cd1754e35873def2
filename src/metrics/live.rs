//! What a running trial has done so far, readable while it runs: the progress line, the live
//! dashboard and the per-second timeline of the report read it once a second (or ten times).
//!
//! Each group of clients writes its own counters, and a group's clients are polled by one
//! task, so every counter has a single writer: an update is a relaxed load and store (two
//! plain moves), never a locked read-modify-write, no lock, no allocation. Readers may see a
//! count a moment old, which a once-a-second view does not mind. Latency is counted in
//! log-linear buckets (32 per power of two: within 3%), coarse next to the trial's HDR
//! histograms, which stay the measurement; these only draw the seconds.

use crate::backend::ErrorKind;
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::Duration;

/// Values below this many microseconds have a bucket each.
const LINEAR: u64 = 64;
/// Sub-buckets per power of two above `LINEAR`.
const SUB_BITS: u32 = 5;
/// The largest latency told apart: 2^36 µs (19 hours); longer ones count in the last bucket.
const MAX_BITS: u32 = 36;
pub const BUCKETS: usize = LINEAR as usize + ((MAX_BITS - SUB_BITS - 1) as usize) * (1 << SUB_BITS);

/// The bucket of a latency in microseconds.
fn bucket(us: u64) -> usize {
    if us < LINEAR {
        return us as usize;
    }
    let us = us.min((1 << MAX_BITS) - 1);
    let msb = 63 - us.leading_zeros(); // at least SUB_BITS + 1
    let shift = msb - SUB_BITS;
    let sub = (us >> shift) as usize - (1 << SUB_BITS);
    LINEAR as usize + (shift as usize - 1) * (1 << SUB_BITS) + sub
}

/// The middle of a bucket, in microseconds.
fn bucket_middle(i: usize) -> f64 {
    if i < LINEAR as usize {
        return i as f64;
    }
    let k = i - LINEAR as usize;
    let shift = (k >> SUB_BITS) as u32 + 1;
    let low = ((1u64 << SUB_BITS) + (k as u64 & ((1 << SUB_BITS) - 1))) << shift;
    low as f64 + ((1u64 << shift) as f64 - 1.0) / 2.0
}

/// One group's counters (see the module's note on their single writer).
pub struct LiveGroup {
    operations: AtomicU64,
    warmup_operations: AtomicU64,
    units: AtomicU64,
    errors: [AtomicU64; ErrorKind::COUNT],
    latency: Box<[AtomicU64]>,
}

impl Default for LiveGroup {
    fn default() -> Self {
        LiveGroup {
            operations: AtomicU64::new(0),
            warmup_operations: AtomicU64::new(0),
            units: AtomicU64::new(0),
            errors: std::array::from_fn(|_| AtomicU64::new(0)),
            latency: (0..BUCKETS).map(|_| AtomicU64::new(0)).collect(),
        }
    }
}

/// Adds to a counter only its group's task writes: no locked instruction.
#[inline]
fn bump(counter: &AtomicU64, n: u64) {
    counter.store(counter.load(Relaxed).wrapping_add(n), Relaxed);
}

impl LiveGroup {
    pub fn new() -> Arc<LiveGroup> {
        Arc::new(LiveGroup::default())
    }

    /// Counts one finished operation: its latency, the units it did, and its error (a kind
    /// and how many: failed bulk items count each).
    ///
    /// Called only by the clients of this group, which one task polls (the single writer).
    #[inline]
    pub fn record(
        &self,
        latency: Duration,
        units: u64,
        error: Option<(ErrorKind, u64)>,
        warmup: bool,
    ) {
        bump(&self.operations, 1);
        if warmup {
            bump(&self.warmup_operations, 1);
        }
        bump(&self.units, units);
        if let Some((kind, n)) = error {
            bump(&self.errors[kind.index()], n);
        }
        let us = latency.as_micros().min(u128::from(u64::MAX)) as u64;
        bump(&self.latency[bucket(us)], 1);
    }
}

/// The counters of a leaf's groups, added up at one moment.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveTotals {
    pub operations: u64,
    pub warmup_operations: u64,
    pub units: u64,
    pub errors: [u64; ErrorKind::COUNT],
    latency: Vec<u64>,
}

impl Default for LiveTotals {
    fn default() -> Self {
        LiveTotals {
            operations: 0,
            warmup_operations: 0,
            units: 0,
            errors: [0; ErrorKind::COUNT],
            latency: vec![0; BUCKETS],
        }
    }
}

impl LiveTotals {
    /// Reads the groups' counters into `self`, reusing its buffer.
    pub fn read(&mut self, groups: &[Arc<LiveGroup>]) {
        *self = LiveTotals {
            latency: std::mem::take(&mut self.latency),
            ..Default::default()
        };
        self.latency.iter_mut().for_each(|n| *n = 0);
        for g in groups {
            self.operations += g.operations.load(Relaxed);
            self.warmup_operations += g.warmup_operations.load(Relaxed);
            self.units += g.units.load(Relaxed);
            for (mine, theirs) in self.errors.iter_mut().zip(&g.errors) {
                *mine += theirs.load(Relaxed);
            }
            for (mine, theirs) in self.latency.iter_mut().zip(g.latency.iter()) {
                *mine += theirs.load(Relaxed);
            }
        }
    }

    /// What happened between `earlier` and these totals.
    pub fn since(&self, earlier: &LiveTotals) -> LiveTotals {
        LiveTotals {
            operations: self.operations.saturating_sub(earlier.operations),
            warmup_operations: self
                .warmup_operations
                .saturating_sub(earlier.warmup_operations),
            units: self.units.saturating_sub(earlier.units),
            errors: std::array::from_fn(|i| self.errors[i].saturating_sub(earlier.errors[i])),
            latency: self
                .latency
                .iter()
                .zip(&earlier.latency)
                .map(|(a, b)| a.saturating_sub(*b))
                .collect(),
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    /// Errors by kind, the kinds seen only.
    pub fn errors_by_kind(&self) -> impl Iterator<Item = (ErrorKind, u64)> + '_ {
        ErrorKind::ALL
            .iter()
            .map(|k| (*k, self.errors[k.index()]))
            .filter(|(_, n)| *n > 0)
    }

    /// The latency at quantile `q` (0 to 1) in ms, within a bucket's width; None when no
    /// operation was counted.
    pub fn latency_ms(&self, q: f64) -> Option<f64> {
        let count: u64 = self.latency.iter().sum();
        if count == 0 {
            return None;
        }
        // The rank HdrHistogram uses: the value at or below which q of the counts lie.
        let rank = ((q * count as f64).ceil() as u64).clamp(1, count);
        let mut seen = 0;
        for (i, n) in self.latency.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return Some(bucket_middle(i) / 1000.0);
            }
        }
        None
    }

    /// The highest latency counted, in ms.
    pub fn max_latency_ms(&self) -> Option<f64> {
        let i = self.latency.iter().rposition(|n| *n > 0)?;
        Some(bucket_middle(i) / 1000.0)
    }

    /// These totals (one second's, from `since`) as a point of the timeline; `span` is the
    /// time they cover when it is not a whole second (the trial's last moments).
    pub fn point(&self, second: u32, span: Option<f64>) -> SecondPoint {
        SecondPoint {
            second,
            span,
            operations: self.operations,
            warmup_operations: self.warmup_operations,
            units: self.units,
            errors: self.error_count(),
            latency_ms: self.latency_ms(0.5).map(|p50| LatencyPoint {
                p50,
                p90: self.latency_ms(0.9).unwrap_or(p50),
                p99: self.latency_ms(0.99).unwrap_or(p50),
                max: self.max_latency_ms().unwrap_or(p50),
            }),
        }
    }
}

/// One second of a trial: what finished in it, warmup included, and its latencies (from the
/// intended start, within 3%).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondPoint {
    /// Seconds since the clients started: this point covers `[second - 1, second)`.
    pub second: u32,
    /// The seconds this point covers when not one (the trial's last, partial second).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<f64>,
    pub operations: u64,
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub warmup_operations: u64,
    pub units: u64,
    #[serde(default, skip_serializing_if = "crate::units::is_zero")]
    pub errors: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<LatencyPoint>,
}

impl SecondPoint {
    /// Units per second over the time this point covers.
    pub fn rate(&self) -> f64 {
        self.units as f64 / self.span.unwrap_or(1.0).max(1e-3)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyPoint {
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// A day of seconds: a longer trial's timeline keeps its first day (the record stays small).
pub const MAX_TIMELINE_SECONDS: usize = 86_400;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_ordered_and_their_middles_lie_within_them() {
        let mut last = 0;
        for us in (0..5_000u64).chain([65_535, 1 << 20, (1 << 36) - 1, 1 << 40, u64::MAX]) {
            let b = bucket(us);
            assert!(b >= last && b < BUCKETS, "{us} -> {b}");
            last = b;
            if us < 1 << 36 {
                let mid = bucket_middle(b);
                assert!(
                    (mid - us as f64).abs() <= (us as f64 / 32.0).max(0.5),
                    "{us} in bucket {b} with middle {mid}"
                );
            }
        }
        assert_eq!(bucket(u64::MAX), BUCKETS - 1);
    }

    #[test]
    fn a_second_of_counts_gives_its_percentiles_and_errors() {
        let groups = [LiveGroup::new(), LiveGroup::new()];
        let mut before = LiveTotals::default();
        before.read(&groups);
        // 1..=100 ms spread over two groups; two of them failed, one a bulk of 3 failed items.
        for ms in 1..=100u64 {
            let error = match ms {
                7 => Some((ErrorKind::Timeout, 1)),
                8 => Some((ErrorKind::ItemFailures, 3)),
                _ => None,
            };
            groups[(ms % 2) as usize].record(Duration::from_millis(ms), 10, error, ms <= 5);
        }
        let mut after = LiveTotals::default();
        after.read(&groups);
        let second = after.since(&before);
        assert_eq!(
            (second.operations, second.units, second.warmup_operations),
            (100, 1000, 5)
        );
        assert_eq!(second.error_count(), 4);
        assert_eq!(
            second.errors_by_kind().collect::<Vec<_>>(),
            [(ErrorKind::ItemFailures, 3), (ErrorKind::Timeout, 1)]
        );
        let point = second.point(3, None);
        let l = point.latency_ms.expect("counted");
        for (got, want) in [(l.p50, 50.0), (l.p90, 90.0), (l.p99, 99.0), (l.max, 100.0)] {
            assert!((got - want).abs() <= want * 0.032, "{got} vs {want}");
        }
        // Nothing new: an empty second has no latency.
        let mut again = LiveTotals::default();
        again.read(&groups);
        assert_eq!(again.since(&after).point(4, None).latency_ms, None);
    }
}
