use super::*;
use crate::track::{load, LoadOptions};

fn track(yaml: &str) -> (tempfile::TempDir, Track) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("docs.json"), "{\"a\":1}\n{\"a\":2}\n").unwrap();
    std::fs::write(dir.path().join("track.yaml"), yaml).unwrap();
    let t = load(dir.path(), &LoadOptions::default()).unwrap();
    (dir, t)
}

const BASE: &str = "name: t
corpora:
  - name: c
    target-index: i
    documents: [{source-file: docs.json, document-count: 2}]
indices: [{name: i}]
operations:
  - {name: bulk, type: bulk}
  - {name: del, type: delete-index}
  - {name: make, type: create-index}
  - {name: s, type: search}
  - {name: nap, type: sleep}
";

fn runs(p: &Plan) -> Vec<&Leaf> {
    p.steps
        .iter()
        .flat_map(|s| match s {
            Step::Run { leaves } => leaves.iter().collect::<Vec<_>>(),
            Step::Reset { .. } => vec![],
        })
        .collect()
}

#[test]
fn sweep_times_trials_with_reset_before_each_trial() {
    let (_d, t) = track(&format!(
        "{BASE}challenges:
  - name: c
    schedule:
      - operation: bulk
        trials: 3
        warmup: 40%
        reset: [del, make]
        params: {{bulk-size: [500, 5000, 50000]}}
"
    ));
    let p = build(&t, &t.challenges[0], &PlanOptions::default()).unwrap();
    assert_eq!(p.results.len(), 3);
    assert_eq!(runs(&p).len(), 9);
    assert_eq!(
        p.steps
            .iter()
            .filter(|s| matches!(s, Step::Reset { .. }))
            .count(),
        9
    );
    assert!(matches!(p.steps[0], Step::Reset { .. }));
    assert_eq!(
        p.results[1].sweep.get("bulk-size"),
        Some(&serde_json::json!(5000))
    );
    let trials: Vec<u64> = runs(&p).iter().map(|l| l.trial).collect();
    assert_eq!(trials, vec![0, 1, 2, 0, 1, 2, 0, 1, 2]);
    assert!(runs(&p).iter().all(|l| l.work
        == Work::Corpus {
            warmup_fraction: 0.4,
            warmup_time: Duration::ZERO,
            warmup_requests: 0
        }));
}

#[test]
fn matrix_of_clients_and_targets() {
    let (_d, t) = track(&format!(
        "{BASE}challenges:
  - name: c
    schedule:
      - operation: s
        clients: [1, 8]
        target-throughput: [100, 1000, 10000, 100000]
        warmup: 10000
        iterations: 10000
        trials: 5
"
    ));
    let p = build(&t, &t.challenges[0], &PlanOptions::default()).unwrap();
    assert_eq!(p.results.len(), 8);
    assert_eq!(runs(&p).len(), 40);
    let first = runs(&p)[0];
    assert_eq!(
        first.work,
        Work::Iterations {
            warmup: 10000,
            measured: 10000
        }
    );
    assert_eq!(first.schedule, ScheduleKind::Deterministic);
    assert_eq!(
        p.results[7].sweep_label(),
        "clients=8,target-throughput=100000"
    );
}

#[test]
fn challenge_trials_reuse_result_slots() {
    let (_d, t) = track(&format!(
        "{BASE}challenges:
  - name: c
    trials: 2
    reset: [del]
    schedule:
      - {{operation: nap, trials: 3}}
      - parallel:
          tasks: [{{operation: nap}}, {{operation: s, iterations: 5}}]
"
    ));
    let p = build(&t, &t.challenges[0], &PlanOptions::default()).unwrap();
    assert_eq!(p.results.len(), 3);
    assert_eq!(p.results[0].planned_trials, 6);
    let nap_trials: Vec<u64> = runs(&p)
        .iter()
        .filter(|l| l.result == Some(0))
        .map(|l| l.trial)
        .collect();
    assert_eq!(nap_trials, vec![0, 1, 2, 3, 4, 5]);
    let parallel = p
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Run { leaves } if leaves.len() == 2))
        .count();
    assert_eq!(parallel, 2);
}

#[test]
fn test_mode_shrinks_work() {
    let (_d, t) = track(&format!(
        "{BASE}challenges:
  - name: c
    schedule:
      - {{operation: s, warmup: 10000, iterations: 10000}}
      - {{operation: s, warmup: 30s, time-period: 2m}}
      - {{operation: bulk}}
      - {{operation: s, target-throughput: 0.5, iterations: 100}}
      - {{operation: bulk, warmup: 30s}}
"
    ));
    let test_mode = |t: &Track| {
        build(
            t,
            &t.challenges[0],
            &PlanOptions {
                test_mode: true,
                tasks: TaskSelection::All,
                rally_workers: None,
            },
        )
        .unwrap()
    };
    let p = test_mode(&t);
    let r = runs(&p);
    assert_eq!(
        r[0].work,
        Work::Iterations {
            warmup: 5,
            measured: 20
        }
    );
    assert_eq!(
        r[1].work,
        Work::Time {
            warmup: Duration::ZERO,
            measured: Duration::from_secs(1)
        }
    );
    assert_eq!(r[2].document_limit, Some(TEST_MODE_DOCUMENTS));
    // Unthrottled, and a bulk's warmup time dropped, as in Rally's test mode.
    assert_eq!(
        (r[3].target_throughput, r[3].schedule),
        (None, ScheduleKind::Unthrottled)
    );
    assert_eq!(
        r[4].work,
        Work::Corpus {
            warmup_fraction: 0.0,
            warmup_time: Duration::ZERO,
            warmup_requests: 0
        }
    );
    // A track its front end shrank (Rally's: time periods to 10 s, iterations to one a
    // client) keeps what the front end left.
    let mut shrunk = t.clone();
    shrunk.shrunk_for_test_mode = true;
    let p = test_mode(&shrunk);
    let r = runs(&p);
    assert_eq!(
        (&r[0].work, &r[1].work),
        (
            &Work::Iterations {
                warmup: 10000,
                measured: 10000
            },
            &Work::Time {
                warmup: Duration::ZERO,
                measured: Duration::from_secs(90)
            }
        )
    );
}

#[test]
fn fraction_warmup_splits_iterations_and_include_tasks_filters() {
    let (_d, t) = track(&format!(
        "{BASE}challenges:
  - name: c
    schedule:
      - {{operation: s, warmup: 25%, iterations: 100}}
      - {{operation: nap}}
"
    ));
    let p = build(
        &t,
        &t.challenges[0],
        &PlanOptions {
            test_mode: false,
            tasks: TaskSelection::Include(vec![TaskFilter::Name("s".into())]),
            rally_workers: None,
        },
    )
    .unwrap();
    assert_eq!(runs(&p).len(), 1);
    assert_eq!(
        runs(&p)[0].work,
        Work::Iterations {
            warmup: 25,
            measured: 75
        }
    );
    let e = build(
        &t,
        &t.challenges[0],
        &PlanOptions {
            test_mode: false,
            tasks: TaskSelection::Include(vec![TaskFilter::Name("zzz".into())]),
            rally_workers: None,
        },
    )
    .unwrap_err();
    assert!(e.message.contains("matches no task"), "{}", e.message);
}
