//! The driver's accounting, tested in process against the scripted backend under tokio's
//! paused clock: every latency is what the script says, so counts, windows, throughput and
//! latency from the intended start are checked exactly, not within a tolerance.

use super::*;
use crate::backend::scripted::ScriptedBackend;
use crate::backend::{ErrorKind, OpError, Outcome};
use crate::plan::Plan;
use crate::track::{load, LoadOptions};

fn plan(schedule: &str) -> Plan {
    let dir = tempfile::tempdir().unwrap();
    let yaml = format!(
        "name: t\noperations:\n  - {{name: call, type: raw-request, params: {{path: /}}}}\n  - {{name: fail, type: raw-request, params: {{path: /fail}}}}\nchallenges:\n  - name: c\n    schedule:\n{schedule}"
    );
    std::fs::write(dir.path().join("track.yaml"), yaml).unwrap();
    let track = load(dir.path(), &LoadOptions::default()).unwrap();
    crate::plan::build(&track, &track.challenges[0], &Default::default()).unwrap()
}

async fn race(
    backend: ScriptedBackend,
    plan: &Plan,
    on_error: OnError,
) -> (Stop, Vec<TrialRun>, Arc<ScriptedBackend>) {
    let backend = Arc::new(backend);
    let driver = Driver::new(
        backend.clone(),
        DriverOptions::whole(on_error, false),
        CancellationToken::new(),
    );
    let mut runs = Vec::new();
    let stop = driver.run(plan, &mut |r| runs.push(r)).await;
    (stop, runs, backend)
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const OK: Result<Outcome, OpError> = Ok(Outcome {
    units: 1,
    hits: 0,
    failed_items: 0,
    requests: 0,
    failed_shards: 0,
});

#[tokio::test(start_paused = true)]
async fn warmup_iterations_are_run_first_and_left_out() {
    let p = plan("      - {operation: call, clients: 2, warmup: 4, iterations: 10}\n");
    let (stop, runs, backend) = race(ScriptedBackend::constant(ms(1)), &p, OnError::Continue).await;
    assert_eq!(stop, Stop::Completed);
    let m = &runs[0].metrics;
    assert_eq!(
        (
            m.counts.operations,
            m.counts.warmup_operations,
            m.counts.successes
        ),
        (10, 4, 10)
    );
    assert_eq!(backend.calls(), 14);
    // Every service time is exactly the scripted 1 ms, and unthrottled latency equals it.
    assert_eq!((m.service.min(), m.service.max()), (1000, 1000));
    assert_eq!((m.latency.min(), m.latency.max()), (1000, 1000));
    assert_eq!(m.service_mean_ms, Some(1.0));
    // Two clients, 7 calls each back to back: the measured five of each take 5 ms.
    assert_eq!(m.measured_window, ms(5));
    assert_eq!(m.throughput(), 2000.0);
}

#[tokio::test(start_paused = true)]
async fn a_throttled_task_holds_its_rate_exactly() {
    let p = plan("      - {operation: call, clients: 1, iterations: 50, target-throughput: 100}\n");
    let (_, runs, _) = race(ScriptedBackend::constant(ms(1)), &p, OnError::Continue).await;
    let m = &runs[0].metrics;
    assert_eq!(m.counts.operations, 50);
    // 50 slots of 10 ms: the window ends with the last slot, so the rate is the target.
    assert_eq!(m.measured_window, ms(500));
    assert_eq!(m.throughput(), 100.0);
    assert_eq!((m.latency.min(), m.latency.max()), (1000, 1000));
}

#[tokio::test(start_paused = true)]
async fn many_staggered_clients_hold_the_task_rate_exactly() {
    // 1,000 clients at one operation a second each, staggered by 1 ms: the window is the 2 s
    // the operations were scheduled over, not stretched by the last client's own interval.
    let p = plan(
        "      - {operation: call, clients: 1000, time-period: 2s, target-throughput: 1000}\n",
    );
    let (_, runs, _) = race(
        ScriptedBackend::constant(Duration::from_micros(100)),
        &p,
        OnError::Continue,
    )
    .await;
    let m = &runs[0].metrics;
    assert_eq!(m.counts.operations, 2000);
    assert_eq!(m.measured_window, ms(2000));
    assert_eq!(m.throughput(), 1000.0);
}

#[tokio::test(start_paused = true)]
async fn latency_counts_from_the_intended_start_after_a_stall() {
    // Call 0 stalls 35 ms at 100 ops/s: calls 1-3 were due at 10, 20 and 30 ms and start late.
    let backend = ScriptedBackend::new(|n| (if n == 0 { ms(35) } else { ms(1) }, OK));
    let p = plan("      - {operation: call, clients: 1, iterations: 10, target-throughput: 100}\n");
    let (_, runs, _) = race(backend, &p, OnError::Continue).await;
    let m = &runs[0].metrics;
    // Service times: one 35 ms, nine 1 ms. Latencies: 35, then 35-10+1=26, 17, 8, and 1 ms after.
    assert_eq!(m.service.count_between(35_000, 35_000), 1);
    assert_eq!(m.service.count_between(1000, 1000), 9);
    for (us, n) in [
        (35_000, 1),
        (26_000, 1),
        (17_000, 1),
        (8_000, 1),
        (1_000, 6),
    ] {
        assert_eq!(m.latency.count_between(us, us), n, "latency {us} µs");
    }
}

#[tokio::test(start_paused = true)]
async fn a_time_period_measures_what_starts_inside_it() {
    let p = plan("      - {operation: call, clients: 1, warmup: 1s, time-period: 3s}\n");
    let (_, runs, _) = race(ScriptedBackend::constant(ms(10)), &p, OnError::Continue).await;
    let m = &runs[0].metrics;
    // Back-to-back 10 ms calls: 100 start in the first second, 200 in the next two.
    assert_eq!(
        (m.counts.warmup_operations, m.counts.operations),
        (100, 200)
    );
    // Units are bucketed by the second their operation ended in, over the measured window
    // [1 s, 3 s): the last call ended at 3 s exactly, in a second the window does not cover.
    assert_eq!(m.per_second, vec![99, 100]);
}

#[tokio::test(start_paused = true)]
async fn errors_are_counted_by_kind_and_abort_stops_the_race() {
    let script = |n: u64| {
        (
            ms(1),
            if n % 3 == 2 {
                Err(OpError::new(ErrorKind::ServerError, "boom"))
            } else {
                OK
            },
        )
    };
    let p = plan("      - {operation: call, clients: 1, iterations: 30}\n      - {operation: call, clients: 1, iterations: 5}\n");
    let (stop, runs, _) = race(ScriptedBackend::new(script), &p, OnError::Continue).await;
    assert_eq!(stop, Stop::Completed);
    let c = &runs[0].metrics.counts;
    assert_eq!(
        (
            c.operations,
            c.successes,
            c.errors[ErrorKind::ServerError.index()]
        ),
        (30, 20, 10)
    );
    assert_eq!(
        c.first_error[ErrorKind::ServerError.index()].as_deref(),
        Some("boom")
    );

    let (stop, runs, backend) = race(ScriptedBackend::new(script), &p, OnError::Abort).await;
    let Stop::Aborted(why) = stop else {
        panic!("{stop:?}")
    };
    assert!(why.contains("boom"), "{why}");
    // The third call failed: nothing after it ran, and the second task never started.
    assert_eq!(backend.calls(), 3);
    assert_eq!(runs.len(), 1);
    assert!(runs[0].interrupted);
}

#[tokio::test(start_paused = true)]
async fn a_failing_reset_aborts_before_the_trial() {
    let script = |n: u64| {
        (
            ms(1),
            if n == 0 {
                Err(OpError::new(ErrorKind::NotFound, "no such index"))
            } else {
                OK
            },
        )
    };
    let p = plan("      - {operation: call, iterations: 3, reset: [fail]}\n");
    let (stop, runs, backend) = race(ScriptedBackend::new(script), &p, OnError::Continue).await;
    let Stop::Aborted(why) = stop else {
        panic!("{stop:?}")
    };
    assert!(
        why.contains("reset before call") && why.contains("no such index"),
        "{why}"
    );
    assert!(runs.is_empty());
    assert_eq!(backend.calls(), 1);
}

#[tokio::test(start_paused = true)]
async fn completed_by_ends_the_block_without_cutting_it_short() {
    let p = plan(
        "      - parallel:\n          completed-by: quick\n          tasks:\n            - {name: quick, operation: call, iterations: 5}\n            - {name: long, operation: call, time-period: 1h}\n",
    );
    let (stop, runs, _) = race(ScriptedBackend::constant(ms(10)), &p, OnError::Continue).await;
    assert_eq!(stop, Stop::Completed);
    assert_eq!(runs.len(), 2);
    let long = runs
        .iter()
        .find(|r| r.metrics.counts.operations != 5)
        .unwrap();
    // The long task ran alongside the 50 ms of the quick one, then stopped, complete.
    assert!(!long.interrupted);
    assert!(
        (5..=6).contains(&long.metrics.counts.operations),
        "{}",
        long.metrics.counts.operations
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_stops_the_clients_and_keeps_the_measurements() {
    let p = plan("      - {operation: call, clients: 2, time-period: 1h}\n");
    let backend = Arc::new(ScriptedBackend::constant(ms(100)));
    let cancel = CancellationToken::new();
    let driver = Driver::new(
        backend.clone(),
        DriverOptions::whole(OnError::Continue, false),
        cancel.clone(),
    );
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1050)).await;
        cancel.cancel();
    });
    let mut runs = Vec::new();
    let stop = driver.run(&p, &mut |r| runs.push(r)).await;
    stopper.await.unwrap();
    assert_eq!(stop, Stop::Interrupted);
    assert!(runs[0].interrupted);
    // Each client finished ten calls before the stop at 1.05 s; the call in flight then (due
    // to end at 1.1 s) is dropped at once, counted as interrupted (neither success nor error),
    // and no other starts.
    assert_eq!(runs[0].metrics.counts.operations, 20);
    assert_eq!(runs[0].metrics.counts.successes, 20);
    assert_eq!(runs[0].metrics.counts.interrupted_operations, 2);
    assert_eq!(
        runs[0].wall,
        ms(1050),
        "the stop does not wait for the calls in flight"
    );
}

/// Runs `plan` with its clients in `tasks` groups.
async fn race_in_groups(backend: ScriptedBackend, plan: &Plan, tasks: usize) -> Vec<TrialRun> {
    groups::TASKS_OVERRIDE.with(|o| o.set(Some(tasks)));
    let (_, runs, _) = race(backend, plan, OnError::Continue).await;
    groups::TASKS_OVERRIDE.with(|o| o.set(None));
    runs
}

#[tokio::test(start_paused = true)]
async fn clients_sharing_a_group_recorder_record_exactly_what_clients_alone_record() {
    let p = plan("      - {operation: call, clients: 300, warmup: 200, iterations: 3000}\n");
    // Varied times and outcomes, by call number: every 13th fails.
    let script = |n: u64| {
        let took = Duration::from_micros(1 + (n * 7919) % 20_000);
        let result = if n % 13 == 0 {
            Err(OpError::new(ErrorKind::ServerError, "injected"))
        } else {
            OK
        };
        (took, result)
    };
    let alone = race_in_groups(ScriptedBackend::new(script), &p, 300).await;
    let grouped = race_in_groups(ScriptedBackend::new(script), &p, 7).await;
    let (a, g) = (&alone[0].metrics, &grouped[0].metrics);
    use crate::metrics::encode_histogram;
    assert_eq!(
        encode_histogram(&a.service),
        encode_histogram(&g.service),
        "service histograms, bit for bit"
    );
    assert_eq!(
        encode_histogram(&a.latency),
        encode_histogram(&g.latency),
        "latency histograms, bit for bit"
    );
    assert_eq!(a.service.len(), 3000);
    assert_eq!(
        (a.counts.operations, a.counts.successes, a.counts.errors),
        (g.counts.operations, g.counts.successes, g.counts.errors)
    );
    assert_eq!(
        (a.counts.warmup_operations, a.counts.units),
        (g.counts.warmup_operations, g.counts.units)
    );
    assert_eq!(
        (a.service_mean_ms, a.latency_mean_ms),
        (g.service_mean_ms, g.latency_mean_ms)
    );
    assert_eq!(a.per_second, g.per_second);
    assert_eq!(a.measured_window, g.measured_window);
}
