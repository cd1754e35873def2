//! What an index did, counted as it happens, for `_stats` as Elasticsearch reports it:
//! documents indexed, refreshes (each a commit here, so flushes too), merges and queries, each
//! with the time spent.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A count and the time its events took.
#[derive(Default)]
pub struct Timed {
    count: AtomicU64,
    nanos: AtomicU64,
}

impl Timed {
    pub fn record(&self, started: Instant) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    pub fn read(&self) -> TimedCount {
        TimedCount {
            count: self.count.load(Ordering::Relaxed),
            millis: self.nanos.load(Ordering::Relaxed) / 1_000_000,
        }
    }
}

/// A [`Timed`] read at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TimedCount {
    pub count: u64,
    pub millis: u64,
}

impl std::ops::Add for TimedCount {
    type Output = TimedCount;
    fn add(self, o: TimedCount) -> TimedCount {
        TimedCount {
            count: self.count + o.count,
            millis: self.millis + o.millis,
        }
    }
}

#[derive(Default)]
pub struct Counters {
    pub indexed: Timed,
    pub refreshes: Timed,
    pub merges: Timed,
    pub queries: Timed,
}
