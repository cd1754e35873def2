//! When each operation should start. Intended start times are computed from the trial's start
//! (never from when the previous operation finished), so a slow response cannot drift the
//! schedule, and latency measured from them shows coordinated omission.

use super::timer::PreciseTimer;
use crate::track::ScheduleKind;
use crate::units::OpsPerSec;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// Tokio's timer wakes up to ~1 ms late, so it is used only to get within this margin of the
/// target; the rest of the wait yields in a loop. Costs CPU at low rates, buys precision.
const SPIN_BELOW: Duration = Duration::from_micros(2500);
const SLEEP_MARGIN: Duration = Duration::from_micros(2000);
/// How early a timerfd wait ends, to spin the rest (see `wait_until`).
#[cfg(not(test))]
const WAKE_UP_LEAD: Duration = Duration::from_micros(30);

pub struct Schedule {
    kind: ScheduleKind,
    start: Instant,
    /// Offset of this client's first operation, in nanoseconds from `start`.
    offset_ns: f64,
    /// Mean time between this client's operations, in nanoseconds.
    interval_ns: f64,
    issued: u64,
    next_ns: f64,
    rng: SmallRng,
}

impl Schedule {
    /// The schedule of client `client` (0-based) of `clients`, sharing `target` between them.
    pub fn new(
        kind: ScheduleKind,
        target: Option<OpsPerSec>,
        start: Instant,
        client: u64,
        clients: u64,
        seed: u64,
    ) -> Schedule {
        let (kind, interval_ns, offset_ns) = match target {
            Some(t) if t.0 > 0.0 && kind != ScheduleKind::Unthrottled => {
                let per_client_interval = clients as f64 * 1e9 / t.0;
                // Stagger clients evenly so that together they issue at an even rate.
                (kind, per_client_interval, client as f64 * 1e9 / t.0)
            }
            _ => (ScheduleKind::Unthrottled, 0.0, 0.0),
        };
        Schedule {
            kind,
            start,
            offset_ns,
            interval_ns,
            issued: 0,
            next_ns: offset_ns,
            rng: SmallRng::seed_from_u64(seed ^ client.wrapping_mul(0x9E37_79B9_7F4A_7C15)),
        }
    }

    /// The intended start of the next operation; None when unthrottled (start right away).
    #[inline]
    pub fn next(&mut self) -> Option<Instant> {
        let at_ns = match self.kind {
            ScheduleKind::Unthrottled => return None,
            // k-th start = offset + k × interval: a product, not a running sum, so no drift.
            ScheduleKind::Deterministic => self.offset_ns + self.issued as f64 * self.interval_ns,
            ScheduleKind::Poisson => {
                // Exponential gaps with the target's mean interval: -ln(U) × mean.
                let u: f64 = self.rng.random::<f64>().max(f64::MIN_POSITIVE);
                self.next_ns += -u.ln() * self.interval_ns;
                self.next_ns
            }
        };
        self.issued += 1;
        Some(self.start + Duration::from_nanos(at_ns as u64))
    }
}

/// Waits until `at`, precise beyond tokio's 1 ms timer: on the client's timerfd when it has
/// one, else sleeping to within 2 ms and yielding for the rest. Returns false if cancelled
/// first.
pub async fn wait_until(
    at: Instant,
    cancel: &CancellationToken,
    timer: Option<&PreciseTimer>,
) -> bool {
    // Under the unit tests' paused clock only tokio's timer moves time.
    #[cfg(not(test))]
    if let Some(timer) = timer {
        // The timer wakes the task some 25 µs late (the reactor's wake-up on this kind of
        // machine): wake that much early and yield the rest, a few µs of spinning per
        // operation instead of 2 ms.
        tokio::select! {
            slept = timer.sleep_until(at.checked_sub(WAKE_UP_LEAD).unwrap_or(at)) => if slept.is_err() { return wait_on_tokio(at, cancel).await },
            _ = cancel.cancelled() => return false,
        }
        while Instant::now() < at {
            if cancel.is_cancelled() {
                return false;
            }
            tokio::task::yield_now().await;
        }
        return true;
    }
    #[cfg(test)]
    let _ = timer;
    wait_on_tokio(at, cancel).await
}

/// Waits on tokio's 1 ms timer to within 2 ms of `at`, then yields for the rest.
async fn wait_on_tokio(at: Instant, cancel: &CancellationToken) -> bool {
    loop {
        let now = Instant::now();
        if now >= at {
            return true;
        }
        let left = at - now;
        if left > SPIN_BELOW {
            tokio::select! {
                _ = tokio::time::sleep(left - SLEEP_MARGIN) => {}
                _ = cancel.cancelled() => return false,
            }
        } else {
            if cancel.is_cancelled() {
                return false;
            }
            #[cfg(test)]
            tokio::time::sleep_until(at).await;
            #[cfg(not(test))]
            tokio::task::yield_now().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_starts_are_offset_plus_k_intervals() {
        let t0 = Instant::now();
        // 1,000 ops/s shared by 4 clients: each client every 4 ms, client 1 offset by 1 ms.
        let mut s = Schedule::new(
            ScheduleKind::Deterministic,
            Some(OpsPerSec(1000.0)),
            t0,
            1,
            4,
            1,
        );
        let starts: Vec<Duration> = (0..3).map(|_| s.next().unwrap() - t0).collect();
        assert_eq!(
            starts,
            vec![
                Duration::from_millis(1),
                Duration::from_millis(5),
                Duration::from_millis(9)
            ]
        );
        // The millionth start is still exact: no accumulated error.
        for _ in 3..1_000_000 {
            s.next();
        }
        assert_eq!(
            s.next().unwrap() - t0,
            Duration::from_millis(1 + 4 * 1_000_000)
        );
    }

    #[test]
    fn clients_together_issue_at_the_target_rate() {
        let t0 = Instant::now();
        let mut all: Vec<Duration> = (0..4)
            .flat_map(|c| {
                let mut s = Schedule::new(
                    ScheduleKind::Deterministic,
                    Some(OpsPerSec(100.0)),
                    t0,
                    c,
                    4,
                    1,
                );
                (0..25)
                    .map(move |_| s.next().unwrap() - t0)
                    .collect::<Vec<_>>()
            })
            .collect();
        all.sort();
        for w in all.windows(2) {
            assert_eq!(w[1] - w[0], Duration::from_millis(10));
        }
    }

    #[test]
    fn poisson_has_the_target_mean_and_is_seeded() {
        let t0 = Instant::now();
        let mut a = Schedule::new(ScheduleKind::Poisson, Some(OpsPerSec(1000.0)), t0, 0, 1, 7);
        let mut b = Schedule::new(ScheduleKind::Poisson, Some(OpsPerSec(1000.0)), t0, 0, 1, 7);
        let mut last = t0;
        for _ in 0..100_000 {
            last = a.next().unwrap();
            assert_eq!(Some(last), b.next());
        }
        let mean_ms = (last - t0).as_secs_f64() * 1000.0 / 100_000.0;
        assert!((mean_ms - 1.0).abs() < 0.02, "mean gap {mean_ms} ms");
    }

    #[test]
    fn unthrottled_has_no_intended_start() {
        let mut s = Schedule::new(ScheduleKind::Deterministic, None, Instant::now(), 0, 1, 1);
        assert_eq!(s.next(), None);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn wait_until_returns_at_the_instant_not_before() {
        let cancel = CancellationToken::new();
        let at = Instant::now() + Duration::from_millis(3);
        assert!(wait_until(at, &cancel, None).await);
        assert!(Instant::now() >= at);
        cancel.cancel();
        assert!(!wait_until(Instant::now() + Duration::from_secs(60), &cancel, None).await);
    }
}
