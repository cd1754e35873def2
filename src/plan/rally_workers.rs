//! esrally's load driver, as far as it decides what a bulk sends: one worker process per core
//! (`available.cores`), each serving a contiguous run of the challenge's clients
//! (driver.py's `calculate_worker_assignments` over the `Allocator`'s clients). A worker's
//! clients of a bulk task share one param source, partitioned over their task-client
//! indexes (`schedule_for` → `partition(client_index_in_task, task.clients)`): each worker
//! reads its own slice of the corpus and cuts it into bulks. Which documents travel together
//! therefore depends on the workers, and a Rally track's bulk (`split: rally`) is cut the same
//! way here.

use super::{Leaf, Step};
use crate::ops::OpSpec;
use std::ops::Range;

/// The task-client ranges each worker serves, in worker order, for a task whose clients take
/// global client indexes `start..start + clients` among the challenge's `max_clients`.
pub fn worker_client_ranges(
    start: u64,
    clients: u64,
    max_clients: u64,
    workers: u64,
) -> Vec<Range<u64>> {
    let max_clients = max_clients.max(1);
    let workers = workers.clamp(1, max_clients);
    // Worker w serves physical clients first[w]..first[w + 1]: `clients_per_worker[c % W]`.
    let per_worker = |w: u64| max_clients / workers + u64::from(w < max_clients % workers);
    let mut first = Vec::with_capacity(workers as usize + 1);
    let mut at = 0;
    for w in 0..workers {
        first.push(at);
        at += per_worker(w);
    }
    first.push(at);
    let worker_of = |physical: u64| first.partition_point(|&f| f <= physical) as u64 - 1;
    // Rally takes each worker's lowest and highest task-client index as its range.
    let mut ranges: Vec<(u64, Range<u64>)> = Vec::new();
    for i in 0..clients {
        let w = worker_of((start + i) % max_clients);
        match ranges.iter_mut().find(|(owner, _)| *owner == w) {
            Some((_, r)) => {
                r.start = r.start.min(i);
                r.end = r.end.max(i + 1);
            }
            None => ranges.push((w, i..i + 1)),
        }
    }
    ranges.sort_by_key(|(w, _)| *w);
    ranges.into_iter().map(|(_, r)| r).collect()
}

/// Gives each `split: rally` bulk leaf the client ranges of the workers that run it, as
/// esrally allocates the challenge's clients over `workers` processes.
pub fn split_rally_bulks(steps: &mut [Step], workers: u64) {
    let run_clients = |leaves: &[Leaf]| leaves.iter().map(|l| l.clients).sum::<u64>();
    let max_clients = steps
        .iter()
        .map(|s| match s {
            Step::Run { leaves } => run_clients(leaves),
            Step::Reset { .. } => 0,
        })
        .max()
        .unwrap_or(1);
    for step in steps {
        let Step::Run { leaves } = step else { continue };
        let mut start = 0;
        for leaf in leaves.iter_mut() {
            if matches!(&leaf.spec, OpSpec::Bulk(b) if b.rally_split) {
                leaf.corpus_parts = worker_client_ranges(start, leaf.clients, max_clients, workers);
            }
            start += leaf.clients;
        }
    }
}

/// How many workers esrally starts on this machine: one per core.
pub fn this_machines_workers() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_dealt_to_workers_in_contiguous_runs() {
        // 8 clients on 2 cores: clients 0-3 on the first worker, 4-7 on the second.
        assert_eq!(worker_client_ranges(0, 8, 8, 2), vec![0..4, 4..8]);
        // One worker per client once there are as many cores.
        assert_eq!(worker_client_ranges(0, 3, 3, 8), vec![0..1, 1..2, 2..3]);
        // 5 clients on 2 cores: 3 and 2 (`clients_per_worker[c % W] += 1`).
        assert_eq!(worker_client_ranges(0, 5, 5, 2), vec![0..3, 3..5]);
        // One core: one slice, the whole corpus read as one queue.
        assert_eq!(worker_client_ranges(0, 8, 8, 1), vec![0..8]);
    }

    /// Rally's own cases (tests/driver/driver_test.py, `TestWorkerAssignment`, one host of 4
    /// cores): the clients each worker serves, here as a task's ranges.
    #[test]
    fn workers_are_assigned_as_in_rallys_own_cases() {
        assert_eq!(
            worker_client_ranges(0, 4, 4, 4),
            vec![0..1, 1..2, 2..3, 3..4]
        );
        assert_eq!(
            worker_client_ranges(0, 6, 6, 4),
            vec![0..2, 2..4, 4..5, 5..6]
        );
        // Fewer clients than cores: the workers without clients read nothing.
        assert_eq!(worker_client_ranges(0, 2, 2, 4), vec![0..1, 1..2]);
    }

    #[test]
    fn a_task_beside_others_is_split_by_the_workers_of_its_own_clients() {
        // A parallel block of 2 + 2 clients on 2 cores: the second task's clients are the
        // challenge's 2 and 3, all on the second worker, so its corpus is one slice.
        assert_eq!(worker_client_ranges(2, 2, 4, 2), vec![0..2]);
        assert_eq!(worker_client_ranges(0, 2, 4, 2), vec![0..2]);
        // A 2-client task in a challenge of 8 clients: both on the first worker.
        assert_eq!(worker_client_ranges(0, 2, 8, 2), vec![0..2]);
        // Clients past the challenge's count wrap round (Rally's physical client index).
        assert_eq!(worker_client_ranges(6, 4, 8, 2), vec![2..4, 0..2]);
    }
}
