//! Many clients run a few to a tokio task. A worker's run queue holds 256 tasks; when more
//! wake at once (1,000 connections answered in one reactor turn) the rest spill into the
//! shared queue, which a busy worker serves only every 61st turn, and those clients wait. At
//! 1,000 unpipelined redis clients on 2 workers that doubled the p99 latency (39-57 ms against
//! 24-28) and each wait past 40 ms cost the server a delayed ACK. A group polls its clients
//! in the order they woke (`FuturesUnordered` is FIFO), so every client is served in turn
//! (BENCHMARKS.md, "Clients grouped per task").

use futures::stream::{FuturesUnordered, StreamExt};
use futures::FutureExt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use tokio::task::JoinHandle;

/// Tasks per worker thread, well under the run queue's 256 so that all of them can wake at
/// once without spilling.
const TASKS_PER_WORKER: usize = 64;

/// How many tasks carry `clients` clients: one per client until the workers' queues would fill.
pub fn task_count(clients: usize, workers: usize) -> usize {
    #[cfg(test)]
    if let Some(tasks) = TASKS_OVERRIDE.with(std::cell::Cell::get) {
        return tasks.clamp(1, clients.max(1));
    }
    clients.min(TASKS_PER_WORKER * workers.max(1)).max(1)
}

#[cfg(test)]
thread_local! {
    /// Lets a test run the same clients alone and grouped (on a current-thread runtime).
    pub static TASKS_OVERRIDE: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// Spawns each group of clients as one task (a client is put in a group by the caller, with
/// the recorder the group shares). In a group each client's output comes back as `Ok`, or
/// `Err` with the panic's message when it panicked; its group's other clients go on.
pub fn spawn<F, T>(groups: Vec<Vec<F>>) -> Vec<JoinHandle<Vec<Result<T, String>>>>
where
    F: Future<Output = T> + Send + 'static,
    T: Send + 'static,
{
    groups
        .into_iter()
        .filter(|g| !g.is_empty())
        .map(|mut group| {
            if group.len() == 1 {
                // A client of its own per task, polled by tokio directly: a `FuturesUnordered`
                // of one re-queues its task each time the client waits, which cost one
                // busy-polling client half its round trips (16,600-20,800 SET/s against
                // 28,400-40,000). A panic comes back as the task's `JoinError`.
                let client = group.pop().expect("one client");
                return tokio::spawn(async move { vec![Ok(client.await)] });
            }
            tokio::spawn(async move {
                let mut running: FuturesUnordered<_> = group
                    .into_iter()
                    .map(|c| AssertUnwindSafe(c).catch_unwind())
                    .collect();
                let mut out = Vec::with_capacity(running.len());
                while let Some(result) = running.next().await {
                    out.push(result.map_err(|panic| panic_message(&*panic)));
                }
                out
            })
        })
        .collect()
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panicked".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_task_per_client_until_the_queues_would_fill() {
        assert_eq!(task_count(1, 2), 1);
        assert_eq!(task_count(50, 2), 50);
        assert_eq!(task_count(128, 2), 128);
        assert_eq!(task_count(1000, 2), 128);
        assert_eq!(task_count(1000, 16), 1000);
        assert_eq!(task_count(0, 2), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_client_output_comes_back_and_a_panic_stays_in_its_client() {
        let clients: Vec<_> = (0..10u32)
            .map(|i| async move {
                tokio::task::yield_now().await;
                if i == 3 {
                    panic!("client 3 broke");
                }
                i
            })
            .collect();
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        let mut groups: Vec<Vec<_>> = (0..3).map(|_| Vec::new()).collect();
        for (i, c) in clients.into_iter().enumerate() {
            groups[i % 3].push(c);
        }
        for h in spawn(groups) {
            for r in h.await.unwrap() {
                match r {
                    Ok(i) => ok.push(i),
                    Err(e) => failed.push(e),
                }
            }
        }
        ok.sort();
        assert_eq!(ok, vec![0, 1, 2, 4, 5, 6, 7, 8, 9]);
        assert_eq!(failed, vec!["client 3 broke".to_string()]);
    }
}
