//! How much a client still has to do: iterations drawn from the task's shared pool, a time
//! window, or the corpus.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::time::Instant;

/// A task's iterations, handed to its clients as they go, as redis-benchmark hands out its
/// `-n` requests. Ticket numbers order the task's operations: the first `warmup` are warmup.
///
/// Fixed per-client shares let clients that the scheduler served less evenly finish late, alone,
/// and start measuring while others still warm up; at 1,000 clients both edges cost 5% of the
/// measured throughput. Drawn from one pool, clients finish within one operation of each other
/// and warmup ends for all at one ticket.
pub struct IterationPool {
    next: AtomicU64,
    warmup: u64,
    total: u64,
    clients: u64,
}

impl IterationPool {
    pub fn new(warmup: u64, measured: u64, clients: u64) -> Arc<IterationPool> {
        Arc::new(IterationPool {
            next: AtomicU64::new(0),
            warmup,
            total: warmup + measured,
            clients: clients.max(1),
        })
    }

    /// A run of tickets for one client. Runs never cross the warmup boundary and shrink as a
    /// boundary nears (guided self-scheduling: a quarter of a client's share of what is left
    /// before it), so there is one atomic operation per many operations, yet runs of one ticket
    /// at the end.
    fn take(&self) -> Option<Range<u64>> {
        let mut current = self.next.load(Ordering::Relaxed);
        loop {
            let boundary = if current < self.warmup {
                self.warmup
            } else {
                self.total
            };
            if current >= boundary {
                return None;
            }
            let run = ((boundary - current) / (4 * self.clients)).max(1);
            match self.next.compare_exchange_weak(
                current,
                current + run,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(current..current + run),
                Err(now) => current = now,
            }
        }
    }
}

/// How much a client still has to do.
pub enum Budget {
    Iterations {
        pool: Arc<IterationPool>,
        warmup: u64,
        tickets: Range<u64>,
    },
    Time {
        warmup_end: Instant,
        end: Instant,
    },
    /// Until the corpus feed runs dry.
    Corpus,
}

impl Budget {
    pub fn iterations(pool: &Arc<IterationPool>) -> Budget {
        Budget::Iterations {
            pool: pool.clone(),
            warmup: pool.warmup,
            tickets: 0..0,
        }
    }

    /// Whether an operation starting at `at()` (read only by time budgets) should run, and whether it is warmup. For corpus
    /// budgets the batch decides (see [`super::work::CorpusWarmup`]).
    #[inline]
    pub fn next(&mut self, at: impl FnOnce() -> Instant) -> Option<bool> {
        match self {
            Budget::Iterations {
                pool,
                warmup,
                tickets,
            } => {
                let ticket = match tickets.next() {
                    Some(t) => t,
                    None => {
                        *tickets = pool.take()?;
                        tickets.next()?
                    }
                };
                Some(ticket < *warmup)
            }
            Budget::Time { warmup_end, end } => {
                let at = at();
                (at < *end).then_some(at < *warmup_end)
            }
            Budget::Corpus => Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(b: &mut Budget) -> Vec<bool> {
        std::iter::from_fn(|| b.next(Instant::now)).collect()
    }

    #[test]
    fn iteration_budget_marks_warmup_first() {
        let pool = IterationPool::new(2, 1, 1);
        assert_eq!(drain(&mut Budget::iterations(&pool)), [true, true, false]);
        assert_eq!(
            drain(&mut Budget::iterations(&pool)),
            [false; 0],
            "the pool is empty for everyone"
        );
        assert!(drain(&mut Budget::iterations(&IterationPool::new(0, 0, 3))).is_empty());
    }

    #[test]
    fn runs_shrink_and_never_cross_the_warmup_boundary() {
        let pool = IterationPool::new(1000, 9000, 10);
        let runs: Vec<Range<u64>> = std::iter::from_fn(|| pool.take()).collect();
        assert_eq!(
            runs.first(),
            Some(&(0..25)),
            "a quarter of a client's share of the warmup"
        );
        assert!(runs.iter().all(|r| r.end <= 1000 || r.start >= 1000));
        assert!(runs.windows(2).all(|w| w[0].end == w[1].start));
        assert_eq!(runs.last(), Some(&(9999..10000)));
        assert!(runs.len() < 1000, "{} runs for 10,000 tickets", runs.len());
    }

    #[test]
    fn clients_drawing_at_once_get_every_ticket_once() {
        let pool = IterationPool::new(5_000, 95_000, 4);
        let counts: Vec<(u64, u64)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| {
                    s.spawn(|| {
                        let mut b = Budget::iterations(&pool);
                        drain(&mut b).iter().fold((0, 0), |(w, m), &warm| {
                            if warm {
                                (w + 1, m)
                            } else {
                                (w, m + 1)
                            }
                        })
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (warmup, measured) = counts.iter().fold((0, 0), |(w, m), (a, b)| (w + a, m + b));
        assert_eq!((warmup, measured), (5_000, 95_000));
    }

    #[test]
    fn a_slow_client_leaves_its_work_to_the_others() {
        // One client takes a run and stops drawing (slow); the other drains the rest.
        let pool = IterationPool::new(0, 1000, 2);
        let mut slow = Budget::iterations(&pool);
        assert_eq!(slow.next(Instant::now), Some(false));
        let fast = drain(&mut Budget::iterations(&pool)).len();
        let slow_rest = drain(&mut slow).len();
        assert_eq!(fast + slow_rest + 1, 1000);
        assert!(slow_rest < 125, "the slow client kept {slow_rest} of 1,000");
    }
}
