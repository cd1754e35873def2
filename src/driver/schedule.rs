//! When each operation should start. Intended start times are computed from the trial's start
//! (never from when the previous operation finished), so a slow response cannot drift the
//! schedule, and latency measured from them shows coordinated omission.

use super::timer::PreciseTimer;
use crate::track::rate::{Ramp, RampCursor};
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
    /// A ramp of rates: operations are placed in "operation time" (the ramp's integral) and
    /// mapped back to clock time, which spaces them by the rate of the moment.
    ramp: Option<RampedStarts>,
}

struct RampedStarts {
    ramp: std::sync::Arc<Ramp>,
    cursor: RampCursor,
    /// This client's next operation, counted over all clients (fractional under poisson).
    position: f64,
    clients: f64,
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
            ramp: None,
        }
    }

    /// The schedule of client `client` of `clients` under a ramp of rates shared between them
    /// (deterministic: the clients take turns; poisson: each an inhomogeneous Poisson process
    /// of its share, by time rescaling).
    pub fn ramped(
        kind: ScheduleKind,
        ramp: std::sync::Arc<Ramp>,
        start: Instant,
        client: u64,
        clients: u64,
        seed: u64,
    ) -> Schedule {
        let mut s = Schedule::new(kind, None, start, client, clients, seed);
        s.kind = kind;
        s.ramp = Some(RampedStarts {
            cursor: RampCursor::new(&ramp),
            ramp,
            position: client as f64,
            clients: clients.max(1) as f64,
        });
        s
    }

    /// The next start under a ramp; past the ramp's end, an instant after it (which ends the
    /// client's time budget).
    fn next_ramped(&mut self) -> Option<Instant> {
        let r = self.ramp.as_mut()?;
        let position = match self.kind {
            ScheduleKind::Poisson => {
                let u: f64 = self.rng.random::<f64>().max(f64::MIN_POSITIVE);
                // Exponential gaps of mean `clients` in operation time; the first from the
                // client's own offset, as without a ramp.
                if self.issued > 0 {
                    r.position += -u.ln() * r.clients;
                }
                r.position
            }
            _ => {
                let p = r.position;
                r.position += r.clients;
                p
            }
        };
        self.issued += 1;
        let secs = r
            .cursor
            .time_of(&r.ramp, position)
            .unwrap_or_else(|| r.ramp.total().as_secs_f64() + 1.0);
        Some(self.start + Duration::from_secs_f64(secs))
    }

    /// The intended start of the next operation; None when unthrottled (start right away).
    #[inline]
    pub fn next(&mut self) -> Option<Instant> {
        if self.ramp.is_some() {
            return self.next_ramped();
        }
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
    fn a_ramp_spaces_starts_by_the_rate_of_the_moment() {
        use crate::track::rate::Stage;
        let t0 = Instant::now();
        // 0 → 2,000 ops/s over 10 s, 4 clients: 10,000 starts, 100 in the first second and
        // 1,900 in the last.
        let ramp = std::sync::Arc::new(Ramp {
            start: 0.0,
            stages: vec![Stage {
                duration: Duration::from_secs(10),
                target: 2000.0,
            }],
        });
        for kind in [ScheduleKind::Deterministic, ScheduleKind::Poisson] {
            let mut per_second = [0u32; 12];
            for c in 0..4 {
                let mut s = Schedule::ramped(kind, ramp.clone(), t0, c, 4, 9);
                loop {
                    let at = (s.next().unwrap() - t0).as_secs_f64();
                    if at >= 10.0 {
                        break;
                    }
                    per_second[at as usize] += 1;
                }
            }
            let total: u32 = per_second.iter().sum();
            match kind {
                ScheduleKind::Deterministic => {
                    assert_eq!(total, 10_000, "{per_second:?}");
                    assert!((99..=101).contains(&per_second[0]), "{per_second:?}");
                    assert!((1899..=1901).contains(&per_second[9]), "{per_second:?}");
                }
                _ => {
                    // Poisson counts: within 5 standard deviations of the intended ones.
                    assert!((total as f64 - 10_000.0).abs() < 500.0, "{per_second:?}");
                    assert!((per_second[9] as f64 - 1900.0).abs() < 5.0 * 1900f64.sqrt());
                }
            }
        }
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
