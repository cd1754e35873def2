//! What one client measures during a trial, and the merge of all clients into trial metrics.
//! Recording is a few adds and two histogram increments: no allocation, no lock.

use super::histogram::new_histogram;
use super::samples::{micros, Reservoir, Sample, TrialSamples};
use crate::backend::{ErrorKind, OpError, Outcome};
use hdrhistogram::Histogram;
use std::time::Duration;
use tokio::time::Instant;

/// What happened to the operations of a trial, apart from their timing.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    pub operations: u64,
    pub successes: u64,
    pub units: u64,
    /// Requests (commands) of the measured operations; a pipeline of N is N requests.
    pub requests: u64,
    pub hits: u64,
    pub errors: [u64; ErrorKind::COUNT],
    /// The first message seen for each error kind, to show the user what went wrong.
    pub first_error: [Option<String>; ErrorKind::COUNT],
    pub warmup_operations: u64,
    /// Units done by warmup operations (e.g. documents indexed during warmup).
    pub warmup_units: u64,
    /// Operations in flight when the race was interrupted, dropped unfinished: neither
    /// successes nor errors, and not in the timings.
    pub interrupted_operations: u64,
    /// Measured operations the driver started over `LATE_START` after their intended start
    /// although their client was free: the driver's lag, not the system's.
    pub late_starts: u64,
    /// Measured searches answered by only some of their shards (`_shards.failed` above 0).
    pub partial_searches: u64,
}

/// How late a start may be, with its client free, before the driver is said to lag.
pub const LATE_START: std::time::Duration = std::time::Duration::from_millis(1);

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.operations += o.operations;
        self.successes += o.successes;
        self.units += o.units;
        self.requests += o.requests;
        self.hits += o.hits;
        self.warmup_operations += o.warmup_operations;
        self.warmup_units += o.warmup_units;
        self.interrupted_operations += o.interrupted_operations;
        self.late_starts += o.late_starts;
        self.partial_searches += o.partial_searches;
        for (i, n) in o.errors.iter().enumerate() {
            self.errors[i] += n;
            if self.first_error[i].is_none() {
                self.first_error[i].clone_from(&o.first_error[i]);
            }
        }
    }

    pub fn error_count(&self) -> u64 {
        self.errors.iter().sum()
    }

    #[cold]
    fn count_error(&mut self, kind: ErrorKind, n: u64, message: Option<&str>) {
        self.errors[kind.index()] += n;
        let slot = &mut self.first_error[kind.index()];
        if slot.is_none() {
            *slot = Some(message.unwrap_or(GENERIC_ITEM_FAILURE).to_string());
        }
    }
}

const GENERIC_ITEM_FAILURE: &str = "some items of a bulk request failed";

pub struct Recorder {
    /// Time zero of the trial: per-second buckets count from here.
    origin: Instant,
    /// The task's scheduled time between operations, all clients together (zero when
    /// unthrottled): the measured window runs to the end of the last operation's slot, so N
    /// operations at rate r span N/r seconds, not (N-1)/r.
    interval: Duration,
    pub service: Histogram<u64>,
    pub latency: Histogram<u64>,
    service_nanos: u128,
    latency_nanos: u128,
    pub counts: Counts,
    pub first_start: Option<Instant>,
    pub last_end: Option<Instant>,
    /// Units completed in each second since `origin` (measured operations only).
    pub per_second: Vec<u64>,
    /// The client stopped before its work was done (Ctrl-C or an abort).
    pub cut_short: bool,
    /// Requests (and timings) by labelled part of the operation, when it has parts.
    pub parts: Option<Parts>,
    /// Recall of each measured answer in thousandths, for a vector search.
    pub recall: Option<Histogram<u64>>,
    /// The numbers a track's custom runner returned with its last measured call (Rally keeps
    /// them as the sample's meta: the dense_vector track's `avg_recall`).
    pub runner_numbers: std::collections::BTreeMap<String, f64>,
    /// Each request's timings (`--keep-samples`), bounded.
    pub samples: Option<Reservoir>,
    /// The group's counters that the progress line, the dashboard and the timeline read
    /// while the trial runs.
    live: Option<std::sync::Arc<super::LiveGroup>>,
}

/// A histogram of recall in thousandths (0 to 1,000), exact at every value.
pub fn recall_histogram() -> Histogram<u64> {
    Histogram::new_with_max(1000, 3).expect("valid histogram bounds")
}

/// Labelled parts of an operation (the commands of a key-value operation): the requests of
/// each, and, when every operation is one part, each part's own service time and latency.
pub struct Parts {
    pub labels: &'static [&'static str],
    pub requests: Box<[u64]>,
    pub times: Option<Box<[PartTimes]>>,
}

impl Parts {
    fn new(labels: &'static [&'static str], timed: bool) -> Parts {
        Parts {
            labels,
            requests: vec![0; labels.len()].into_boxed_slice(),
            times: timed.then(|| (0..labels.len()).map(|_| PartTimes::new()).collect()),
        }
    }

    fn add(&mut self, other: &Parts) {
        for (mine, theirs) in self.requests.iter_mut().zip(other.requests.iter()) {
            *mine += theirs;
        }
        if let (Some(mine), Some(theirs)) = (&mut self.times, &other.times) {
            for (a, b) in mine.iter_mut().zip(theirs.iter()) {
                a.add(b);
            }
        }
    }

    /// Each part that was used: its label, requests and (when timed) times.
    pub fn used(&self) -> impl Iterator<Item = (&'static str, u64, Option<&PartTimes>)> + '_ {
        self.labels
            .iter()
            .enumerate()
            .filter(|(i, _)| self.requests[*i] > 0)
            .map(|(i, label)| {
                (
                    *label,
                    self.requests[i],
                    self.times
                        .as_ref()
                        .map(|t| &t[i])
                        .filter(|t| !t.service.is_empty()),
                )
            })
    }
}

/// One part's share of the timing.
pub struct PartTimes {
    pub service: Histogram<u64>,
    pub latency: Histogram<u64>,
    service_nanos: u128,
    latency_nanos: u128,
}

impl PartTimes {
    fn new() -> Self {
        PartTimes {
            service: new_histogram(),
            latency: new_histogram(),
            service_nanos: 0,
            latency_nanos: 0,
        }
    }

    fn add(&mut self, other: &PartTimes) {
        self.service
            .add(&other.service)
            .expect("same histogram configuration");
        self.latency
            .add(&other.latency)
            .expect("same histogram configuration");
        self.service_nanos += other.service_nanos;
        self.latency_nanos += other.latency_nanos;
    }

    /// Exact means (from nanosecond sums) of service time and latency, in ms.
    pub fn means_ms(&self) -> Option<(f64, f64)> {
        let n = self.service.len() as f64;
        (n > 0.0).then(|| {
            (
                self.service_nanos as f64 / n / 1e6,
                self.latency_nanos as f64 / n / 1e6,
            )
        })
    }
}

impl Recorder {
    pub fn new(origin: Instant, expected_seconds: usize, interval: Duration) -> Recorder {
        Recorder {
            origin,
            interval,
            service: new_histogram(),
            latency: new_histogram(),
            service_nanos: 0,
            latency_nanos: 0,
            counts: Counts::default(),
            first_start: None,
            last_end: None,
            per_second: Vec::with_capacity(expected_seconds.min(86_400) + 1),
            cut_short: false,
            parts: None,
            recall: None,
            runner_numbers: Default::default(),
            samples: None,
            live: None,
        }
    }

    /// Counts each operation in `live` too, as it ends.
    pub fn with_live(mut self, live: std::sync::Arc<super::LiveGroup>) -> Recorder {
        self.live = Some(live);
        self
    }

    /// Counts one operation in the live counters: its latency, units and error.
    #[inline]
    fn count_live(&self, latency: Duration, result: &Result<Outcome, OpError>, warmup: bool) {
        if let Some(live) = &self.live {
            let (units, error) = match result {
                Ok(o) if o.failed_items > 0 => {
                    (o.units, Some((ErrorKind::ItemFailures, o.failed_items)))
                }
                Ok(o) => (o.units, None),
                Err(e) => (0, Some((e.kind, 1))),
            };
            live.record(latency, units, error, warmup);
        }
    }

    /// Keeps each request's timings too, up to `capacity` (a uniform sample past it).
    pub fn with_samples(mut self, capacity: usize, seed: u64) -> Recorder {
        self.samples = Some(Reservoir::new(capacity, seed));
        self
    }

    #[inline]
    fn sample(&mut self, intended: Instant, start: Instant, end: Instant, ok: bool, warmup: bool) {
        if let Some(samples) = &mut self.samples {
            let began = intended.min(start);
            samples.offer(Sample {
                intended_us: micros(began.saturating_duration_since(self.origin)),
                service_us: micros(end.saturating_duration_since(start)),
                latency_us: micros(end.saturating_duration_since(began)),
                ok,
                warmup,
            });
        }
    }

    /// Keeps the numbers of a custom runner's answer (not its weight, unit or status).
    #[cold]
    pub fn record_runner_numbers(&mut self, meta: &serde_json::Value) {
        for (k, v) in meta.as_object().into_iter().flatten() {
            if let (Some(n), false) = (v.as_f64(), ["weight", "http-status"].contains(&k.as_str()))
            {
                self.runner_numbers.insert(k.clone(), n);
            }
        }
    }

    /// Records each answer's recall too (a vector search).
    pub fn with_recall(mut self) -> Recorder {
        self.recall = Some(recall_histogram());
        self
    }

    /// Records one measured answer's recall, in thousandths.
    #[inline]
    pub fn record_recall(&mut self, thousandths: u64) {
        if let Some(h) = &mut self.recall {
            h.saturating_record(thousandths.min(1000));
        }
    }

    /// Counts requests by these labelled parts too, and with `timed` their timings.
    pub fn with_parts(mut self, labels: &'static [&'static str], timed: bool) -> Recorder {
        self.parts = Some(Parts::new(labels, timed));
        self
    }

    /// Adds the parts of one measured operation: `requests` by part (in label order), and for
    /// timed parts the operation's timing under `single`, its one part.
    #[inline]
    pub fn record_parts(
        &mut self,
        requests: &[u64],
        single: usize,
        intended: Instant,
        start: Instant,
        end: Instant,
    ) {
        let Some(parts) = &mut self.parts else { return };
        for (n, d) in parts.requests.iter_mut().zip(requests) {
            *n += d;
        }
        if let Some(times) = &mut parts.times {
            let times = &mut times[single];
            let (service, latency) = (
                end.saturating_duration_since(start),
                end.saturating_duration_since(intended.min(start)),
            );
            times.service.saturating_record(micros(service));
            times.latency.saturating_record(micros(latency));
            times.service_nanos += service.as_nanos();
            times.latency_nanos += latency.as_nanos();
        }
    }

    /// Records one measured operation. `intended` is when the schedule wanted it to start;
    /// latency runs from there, service time from the actual start.
    #[inline]
    pub fn record(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        result: &Result<Outcome, OpError>,
    ) {
        let service = end.saturating_duration_since(start);
        let latency = end.saturating_duration_since(intended.min(start));
        let ok = matches!(result, Ok(o) if o.failed_items == 0);
        self.sample(intended, start, end, ok, false);
        self.count_live(latency, result, false);
        self.service.saturating_record(micros(service));
        self.latency.saturating_record(micros(latency));
        self.service_nanos += service.as_nanos();
        self.latency_nanos += latency.as_nanos();
        self.counts.operations += 1;
        self.counts.requests += match result {
            Ok(o) if o.requests > 0 => o.requests,
            _ => 1,
        };
        // A min, not the first recorded: the clients of a group share this recorder, and
        // one may record an operation that began before another's.
        let began = intended.min(start);
        self.first_start = Some(self.first_start.map_or(began, |f| f.min(began)));
        let window_end = end.max(intended + self.interval);
        self.last_end = Some(self.last_end.map_or(window_end, |l| l.max(window_end)));
        match result {
            Ok(outcome) => {
                self.counts.units += outcome.units;
                self.counts.hits += outcome.hits;
                self.counts.partial_searches += u64::from(outcome.failed_shards > 0);
                if outcome.failed_items > 0 {
                    self.counts
                        .count_error(ErrorKind::ItemFailures, outcome.failed_items, None);
                } else {
                    self.counts.successes += 1;
                }
                let second = end.saturating_duration_since(self.origin).as_secs() as usize;
                if second >= self.per_second.len() {
                    self.per_second.resize(second + 1, 0);
                }
                self.per_second[second] += outcome.units;
            }
            Err(e) => self.counts.count_error(e.kind, 1, Some(&e.message)),
        }
    }

    /// Whether an item-failure reason is still wanted (the first one is kept).
    pub fn wants_item_failure_reason(&self) -> bool {
        self.counts.errors[ErrorKind::ItemFailures.index()] > 0
            && self.counts.first_error[ErrorKind::ItemFailures.index()]
                .as_deref()
                .is_none_or(|m| m == GENERIC_ITEM_FAILURE)
    }

    #[cold]
    pub fn set_item_failure_reason(&mut self, reason: String) {
        self.counts.first_error[ErrorKind::ItemFailures.index()] = Some(reason);
    }

    #[cold]
    pub fn record_interrupted(&mut self) {
        self.counts.interrupted_operations += 1;
    }

    /// Counts a warmup operation: not measured, but its work is accounted for (and its timings
    /// kept as a warmup sample when samples are kept, as Rally keeps them).
    #[inline]
    pub fn record_warmup(
        &mut self,
        intended: Instant,
        start: Instant,
        end: Instant,
        result: &Result<Outcome, OpError>,
    ) {
        let ok = matches!(result, Ok(o) if o.failed_items == 0);
        self.sample(intended, start, end, ok, true);
        self.count_live(
            end.saturating_duration_since(intended.min(start)),
            result,
            true,
        );
        self.counts.warmup_operations += 1;
        if let Ok(o) = result {
            self.counts.warmup_units += o.units;
        }
    }
}

/// The seconds of the measured window `[start, end)` (seconds from the trial's start), as
/// units per second: the second the window starts in and the one it ends in are partial, so
/// their counts are scaled to a whole second, or left out when they cover less than a quarter
/// of it (a count over 0.1 s scaled up would be mostly noise). Seconds before the window held
/// only warmup.
pub fn measured_seconds(counts: &[u64], start: f64, end: f64) -> Vec<u64> {
    if end <= start {
        return Vec::new();
    }
    let (first, last) = (start.floor() as usize, (end.ceil() as usize).max(1) - 1);
    (first..=last)
        .filter_map(|k| {
            let covered = (end.min(k as f64 + 1.0) - start.max(k as f64)).clamp(0.0, 1.0);
            let n = counts.get(k).copied().unwrap_or(0);
            match covered {
                c if c >= 1.0 - 1e-9 => Some(n),
                c if c >= 0.25 => Some((n as f64 / c).round() as u64),
                _ => None,
            }
        })
        .collect()
}

/// All clients of one trial, merged.
pub struct TrialMetrics {
    pub service: Histogram<u64>,
    pub latency: Histogram<u64>,
    pub service_mean_ms: Option<f64>,
    pub latency_mean_ms: Option<f64>,
    pub counts: Counts,
    /// From the first measured start to the last measured end, across clients.
    pub measured_window: Duration,
    pub per_second: Vec<u64>,
    /// The measured window as offsets from the trial's time zero, and the units finished in
    /// each whole second from it: what shards of one race need to merge their windows and
    /// per-second counts on the shared clock.
    pub window: Option<(Duration, Duration)>,
    pub units_by_second: Vec<u64>,
    /// Some client stopped before its work was done: the numbers cover part of the work.
    pub cut_short: bool,
    pub parts: Option<Parts>,
    /// Each measured answer's recall in thousandths (a vector search).
    pub recall: Option<Histogram<u64>>,
    /// A custom runner's numbers from its last measured call.
    pub runner_numbers: std::collections::BTreeMap<String, f64>,
    /// Each request's timings, when the race keeps them.
    pub samples: Option<TrialSamples>,
    /// Each second of the trial, warmup included, as the sampler saw it.
    pub timeline: Vec<super::SecondPoint>,
}

impl TrialMetrics {
    pub fn merge(recorders: Vec<Recorder>) -> TrialMetrics {
        let mut m = TrialMetrics {
            service: new_histogram(),
            latency: new_histogram(),
            service_mean_ms: None,
            latency_mean_ms: None,
            counts: Counts::default(),
            measured_window: Duration::ZERO,
            per_second: Vec::new(),
            window: None,
            units_by_second: Vec::new(),
            cut_short: false,
            parts: None,
            recall: None,
            runner_numbers: Default::default(),
            samples: None,
            timeline: Vec::new(),
        };
        let mut reservoirs = Vec::new();
        let (mut service_nanos, mut latency_nanos) = (0u128, 0u128);
        let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
        let mut origin = None;
        for mut r in recorders {
            reservoirs.extend(r.samples.take());
            origin = Some(r.origin);
            m.service
                .add(&r.service)
                .expect("same histogram configuration");
            m.latency
                .add(&r.latency)
                .expect("same histogram configuration");
            service_nanos += r.service_nanos;
            latency_nanos += r.latency_nanos;
            m.counts.add(&r.counts);
            m.cut_short |= r.cut_short;
            m.runner_numbers.extend(r.runner_numbers.clone());
            if let Some(h) = &r.recall {
                // Same bounds on both sides: the add cannot fail.
                let _ = m.recall.get_or_insert_with(recall_histogram).add(h);
            }
            if let Some(parts) = &r.parts {
                m.parts
                    .get_or_insert_with(|| Parts::new(parts.labels, parts.times.is_some()))
                    .add(parts);
            }
            first = match (first, r.first_start) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            last = match (last, r.last_end) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            if r.per_second.len() > m.per_second.len() {
                m.per_second.resize(r.per_second.len(), 0);
            }
            for (i, n) in r.per_second.iter().enumerate() {
                m.per_second[i] += n;
            }
        }
        if !reservoirs.is_empty() {
            m.samples = Some(TrialSamples::merge(reservoirs));
        }
        let ops = m.counts.operations;
        if ops > 0 {
            m.service_mean_ms = Some(service_nanos as f64 / ops as f64 / 1e6);
            m.latency_mean_ms = Some(latency_nanos as f64 / ops as f64 / 1e6);
        }
        if let (Some(a), Some(b)) = (first, last) {
            m.measured_window = b.saturating_duration_since(a);
        }
        m.units_by_second = std::mem::take(&mut m.per_second);
        if let (Some(o), Some(a), Some(b)) = (origin, first, last) {
            let window = (
                a.saturating_duration_since(o),
                b.saturating_duration_since(o),
            );
            m.per_second = measured_seconds(
                &m.units_by_second,
                window.0.as_secs_f64(),
                window.1.as_secs_f64(),
            );
            m.window = Some(window);
        }
        m
    }

    /// Achieved throughput in units per second over the measured window.
    pub fn throughput(&self) -> f64 {
        let secs = self.measured_window.as_secs_f64();
        if secs <= 0.0 {
            return if self.counts.units > 0 {
                f64::INFINITY
            } else {
                0.0
            };
        }
        self.counts.units as f64 / secs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_seconds_at_the_window_edges_are_scaled_or_left_out() {
        // 1,000 units a second over [0.5, 3.2): 500 in second 0, 1,000 in 1 and 2, 200 in 3.
        let counts = [500, 1000, 1000, 200];
        assert_eq!(measured_seconds(&counts, 0.5, 3.2), vec![1000, 1000, 1000]);
        assert_eq!(measured_seconds(&counts, 0.5, 3.0), vec![1000, 1000, 1000]);
        // A whole second at each edge is kept as counted.
        assert_eq!(measured_seconds(&[7, 9], 0.0, 2.0), vec![7, 9]);
        // Under a quarter of a second is left out; a short trial can have no whole second.
        assert_eq!(measured_seconds(&[100, 30], 0.9, 1.1), Vec::<u64>::new());
        assert_eq!(measured_seconds(&[], 1.0, 1.0), Vec::<u64>::new());
    }

    #[test]
    fn throttled_window_covers_whole_slots() {
        let t0 = Instant::now();
        let slot = Duration::from_millis(10);
        let mut r = Recorder::new(t0, 1, slot);
        for k in 0..100u32 {
            let at = t0 + slot * k;
            r.record(
                at,
                at,
                at + Duration::from_micros(100),
                &Ok(Outcome {
                    units: 1,
                    ..Outcome::default()
                }),
            );
        }
        let m = TrialMetrics::merge(vec![r]);
        assert!((m.throughput() - 100.0).abs() < 1e-6, "{}", m.throughput());
    }

    #[test]
    fn records_service_and_latency_separately_and_merges() {
        let t0 = Instant::now();
        let mut a = Recorder::new(t0, 10, Duration::ZERO);
        let ok = Ok(Outcome {
            units: 5,
            hits: 2,
            failed_items: 0,
            ..Outcome::default()
        });
        // Intended at t0, started 1 ms late, took 2 ms: service 2 ms, latency 3 ms.
        a.record(
            t0,
            t0 + Duration::from_millis(1),
            t0 + Duration::from_millis(3),
            &ok,
        );
        let mut b = Recorder::new(t0, 10, Duration::ZERO);
        b.record(
            t0 + Duration::from_secs(1),
            t0 + Duration::from_secs(1),
            t0 + Duration::from_millis(1004),
            &Err(OpError::new(ErrorKind::Timeout, "slow")),
        );
        b.record(
            t0,
            t0,
            t0 + Duration::from_millis(1),
            &Ok(Outcome {
                units: 10,
                hits: 0,
                failed_items: 3,
                ..Outcome::default()
            }),
        );
        let m = TrialMetrics::merge(vec![a, b]);
        let c = &m.counts;
        assert_eq!(c.operations, 3);
        assert_eq!(c.successes, 1);
        assert_eq!(c.errors[ErrorKind::Timeout.index()], 1);
        assert_eq!(c.errors[ErrorKind::ItemFailures.index()], 3);
        assert_eq!(c.units, 15);
        assert_eq!(c.hits, 2);
        assert!(m.service.equivalent(m.service.max(), 4000));
        assert!(m.latency.value_at_quantile(0.0) >= 1000);
        assert!((m.latency_mean_ms.unwrap() - (3.0 + 4.0 + 1.0) / 3.0).abs() < 1e-9);
        assert_eq!(m.measured_window, Duration::from_millis(1004));
        assert_eq!(m.per_second, vec![15]);
        assert_eq!(
            c.first_error[ErrorKind::Timeout.index()].as_deref(),
            Some("slow")
        );
    }
}
