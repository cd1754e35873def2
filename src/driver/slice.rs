//! This process's part of a race that several processes run together (see `shard`): which
//! clients of each task it runs, its share of the iterations and of the corpus, and the gate
//! where the processes meet before each step.

use futures::future::BoxFuture;
use std::ops::Range;
use tokio::sync::{Barrier, OnceCell};
use tokio::time::Instant;

/// Shard `index` of `count`. Every task is dealt out by its clients, as k6's execution
/// segments deal out virtual users: shard i runs global clients `⌈iC/N⌉..⌈(i+1)C/N⌉`, each
/// with the schedule and keys it would have in one process, so the shards together send
/// exactly the race as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slice {
    pub index: u32,
    pub count: u32,
}

impl Slice {
    /// The whole race, in one process.
    pub const WHOLE: Slice = Slice { index: 0, count: 1 };

    pub fn is_whole(self) -> bool {
        self.count <= 1
    }

    /// The global indexes of the clients this shard runs, of a task's `clients`. Shard 0
    /// gets the first of an uneven split, so a one-client task (create-index) runs there once.
    pub fn clients(self, clients: u64) -> Range<u64> {
        let at = |i: u32| ceil_div(clients as u128 * i as u128, self.count.max(1) as u128) as u64;
        at(self.index)..at(self.index + 1)
    }

    /// This shard's part of `amount` (iterations) shared by a task's `clients`, in proportion
    /// to its clients; the parts of all shards add up to `amount`.
    pub fn share(self, amount: u64, clients: u64) -> u64 {
        let range = self.clients(clients);
        let at = |c: u64| ceil_div(amount as u128 * c as u128, clients.max(1) as u128) as u64;
        at(range.end) - at(range.start)
    }

    /// Resets (and other once-only work) run on shard 0 alone.
    pub fn runs_resets(self) -> bool {
        self.index == 0
    }
}

fn ceil_div(a: u128, b: u128) -> u128 {
    a.div_ceil(b)
}

/// Where the shards of a race meet before each step of the plan.
pub trait StepGate: Send + Sync {
    /// Waits until every shard still in the race has reached step `step` (named `what`), and
    /// returns when the step starts, on this machine's clock: the same instant on every shard.
    fn arrive<'a>(&'a self, step: usize, what: &'a str) -> BoxFuture<'a, Result<Instant, String>>;

    /// Gives this shard's part of probe `probe` of a capacity search at step `step`, and
    /// returns every shard's parts merged (the same on every shard).
    fn share_probe<'a>(
        &'a self,
        step: usize,
        probe: u32,
        mine: crate::capacity::share::ProbeShare,
    ) -> BoxFuture<'a, Result<crate::capacity::share::ProbeShare, String>>;
}

/// The start of one step: its leaves prepare (connect clients, open the corpus), wait for each
/// other here, and the gate is passed once for all of them.
pub(super) struct StepStart<'a> {
    local: Barrier,
    origin: OnceCell<Result<Instant, String>>,
    gate: Option<&'a dyn StepGate>,
    step: usize,
    what: String,
}

impl<'a> StepStart<'a> {
    pub fn new(leaves: usize, gate: Option<&'a dyn StepGate>, step: usize, what: String) -> Self {
        StepStart {
            local: Barrier::new(leaves.max(1)),
            origin: OnceCell::new(),
            gate,
            step,
            what,
        }
    }

    /// Called once by each leaf of the step, whether or not it could prepare.
    pub async fn wait(&self) -> Result<Instant, String> {
        self.local.wait().await;
        self.origin
            .get_or_init(|| async {
                match self.gate {
                    Some(gate) => gate.arrive(self.step, &self.what).await,
                    None => Ok(Instant::now()),
                }
            })
            .await
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_task_whatever_the_split() {
        for count in 1..=9u32 {
            for clients in [1u64, 2, 3, 7, 8, 100, 1001] {
                let slices = (0..count).map(|index| Slice { index, count });
                let ranges: Vec<_> = slices.clone().map(|s| s.clients(clients)).collect();
                // Contiguous, disjoint, covering every client once.
                assert_eq!(ranges[0].start, 0);
                assert_eq!(ranges.last().unwrap().end, clients);
                for w in ranges.windows(2) {
                    assert_eq!(w[0].end, w[1].start);
                }
                for amount in [0u64, 1, 5, 999, 1_000_003] {
                    let total: u64 = slices.clone().map(|s| s.share(amount, clients)).sum();
                    assert_eq!(
                        total, amount,
                        "{amount} over {clients} clients, {count} shards"
                    );
                }
            }
        }
        // One client: shard 0 runs it, the others none.
        let s = |index| Slice { index, count: 3 };
        assert_eq!(s(0).clients(1), 0..1);
        assert!(s(1).clients(1).is_empty() && s(2).clients(1).is_empty());
        assert_eq!(s(0).share(10, 1), 10);
        // Shares follow the clients: 10 clients over 4 shards are 3, 2, 3, 2.
        let sizes: Vec<u64> = (0..4)
            .map(|i| Slice { index: i, count: 4 }.clients(10))
            .map(|r| r.end - r.start)
            .collect();
        assert_eq!(sizes, vec![3, 2, 3, 2]);
    }
}
