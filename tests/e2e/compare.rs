use crate::util::*;
use serde_json::Value;

const TRIALS_TRACK: &str = "name: steady
operations: [{name: noop, type: sleep, params: {duration: 0}}]
challenges:
  - name: c
    schedule:
      - {name: steady, operation: noop, iterations: 200, target-throughput: 2000, trials: 5}
";

/// Copies a stored race under a new id with its trials rewritten: throughput scaled by
/// `throughput`, every time percentile set to `time_ms`, each trial offset by `spread` × (i - 2)
/// so the trials differ a little and their median is exactly the value asked for.
fn planted(
    env: &Env,
    from: &std::path::Path,
    id: &str,
    throughput: f64,
    time_ms: f64,
    spread: f64,
) {
    let mut race = read_json(&from.join("race.json"));
    race["race_id"] = Value::from(id);
    for task in race["tasks"].as_array_mut().unwrap() {
        for (i, trial) in task["trials"]
            .as_array_mut()
            .unwrap()
            .iter_mut()
            .enumerate()
        {
            let jitter = 1.0 + (i as f64 - 2.0) * spread;
            trial["throughput"] = Value::from(2000.0 * throughput * jitter);
            for key in ["service_time_ms", "latency_ms"] {
                for (k, v) in trial[key].as_object_mut().unwrap() {
                    if k != "count" {
                        *v = Value::from(time_ms * jitter);
                    }
                }
            }
        }
    }
    let dir = env.home.path().join("races").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("race.json"), serde_json::to_vec(&race).unwrap()).unwrap();
    std::fs::copy(from.join("histograms.json"), dir.join("histograms.json")).unwrap();
}

fn verdicts(json: &str) -> Vec<(String, String)> {
    let c: Value = serde_json::from_str(json).unwrap();
    c["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| {
            t["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| {
                    (
                        m["metric"].as_str().unwrap().to_string(),
                        m["verdict"].as_str().unwrap().to_string(),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

#[test]
fn compare_flags_a_planted_regression_and_not_a_rerun() {
    let dir = track_dir(&[("track.yaml", TRIALS_TRACK)]);
    let env = Env::new();
    let path = dir.path().to_str().unwrap();
    env.ok(&["race", "--track-path", path, "--quiet"]);
    env.ok(&["race", "--track-path", path, "--quiet"]);
    let races = env.race_dirs();
    let (first, second) = (
        races[0].file_name().unwrap().to_str().unwrap().to_string(),
        races[1].file_name().unwrap().to_str().unwrap().to_string(),
    );

    // The same work run twice for real: its throughput and error rate are not flagged. (Its
    // sub-0.1 ms latency tails move with whatever else the machine runs, e.g. the other tests,
    // so a real rerun's latencies can legitimately differ; the planted copies below are exact.)
    let rerun = env.ok(&["compare", &first, &second, "--report-format", "json"]);
    let v = verdicts(&rerun);
    for metric in ["throughput", "error_rate"] {
        let (_, verdict) = v.iter().find(|(m, _)| m == metric).unwrap();
        assert!(
            verdict == "within-noise" || verdict == "not-significant",
            "{metric}: {rerun}"
        );
    }

    // A baseline, a rerun within 1%, and a contender with 30% lower throughput and 30% higher
    // times in every trial.
    planted(&env, &races[0], "29991231T000000Z-base", 1.0, 1.0, 0.01);
    planted(&env, &races[0], "29991231T000001Z-again", 1.0, 1.0, 0.005);
    planted(&env, &races[0], "29991231T000002Z-slow", 0.7, 1.3, 0.01);
    let again = env.ok(&[
        "compare",
        "29991231T000000Z-base",
        "29991231T000001Z-again",
        "--report-format",
        "json",
    ]);
    assert!(
        verdicts(&again).iter().all(|(_, v)| v == "within-noise"),
        "{again}"
    );
    let first = "29991231T000000Z-base".to_string();
    let md = env.ok(&["compare", &first, "29991231T000002Z-slow"]);
    assert!(
        md.contains(
            "| steady | - | throughput (ops/s) | 2000 | 1400 | -600 | -30.0% | 0.008 | 🔴 worse |"
        ),
        "{md}"
    );
    assert!(md.contains("| steady | - | service_time_p99 (ms) | 1.000 | 1.300 | +0.300 | +30.0% | 0.008 | 🔴 worse |"), "{md}");
    let json = env.ok(&[
        "compare",
        &first,
        "29991231T000002Z-slow",
        "--report-format",
        "json",
    ]);
    let v = verdicts(&json);
    assert!(
        v.contains(&("throughput".into(), "regression".into())),
        "{v:?}"
    );
    assert!(
        v.contains(&("service_time_p99".into(), "regression".into())),
        "{v:?}"
    );
    assert!(
        v.contains(&("latency_p50".into(), "regression".into())),
        "{v:?}"
    );
    // ... and the other way round it is an improvement.
    let back = env.ok(&[
        "compare",
        "29991231T000002Z-slow",
        &first,
        "--report-format",
        "json",
    ]);
    assert!(verdicts(&back).contains(&("throughput".into(), "improvement".into())));
    let csv = env.ok(&[
        "compare",
        &first,
        "29991231T000002Z-slow",
        "--report-format",
        "csv",
    ]);
    assert!(
        csv.lines()
            .any(|l| l.contains(",throughput,") && l.ends_with(",regression")),
        "{csv}"
    );
}

#[test]
fn compare_warns_about_different_races_and_lists_unmatched_tasks() {
    let a = track_dir(&[("track.yaml", TRIALS_TRACK)]);
    let b = track_dir(&[(
        "track.yaml",
        &TRIALS_TRACK
            .replace("name: steady\n", "name: other\n")
            .replace(
                "trials: 5}",
                "trials: 1}\n      - {name: extra, operation: noop}",
            ),
    )]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        a.path().to_str().unwrap(),
        "--quiet",
    ]);
    env.ok(&[
        "race",
        "--track-path",
        b.path().to_str().unwrap(),
        "--quiet",
    ]);
    let out = env.run(&["compare", "latest~1", "latest"]);
    assert!(out.status.success());
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(md.contains("⚠ track differs: `steady` vs `other`"), "{md}");
    assert!(md.contains("Only in the contender: extra [-]"), "{md}");
    assert!(
        md.contains("Significance cannot be judged with fewer than 3 trials"),
        "{md}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("warning: track differs"));
}

#[test]
fn list_filters_and_delete() {
    let dir = track_dir(&[("track.yaml", TRIALS_TRACK)]);
    let env = Env::new();
    let path = dir.path().to_str().unwrap();
    env.ok(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--user-tag",
        "env:a",
    ]);
    env.ok(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--user-tag",
        "env:b",
    ]);
    let a = env.ok(&["list", "races", "--user-tag", "env:a"]);
    assert_eq!(a.lines().count(), 2, "{a}");
    let none = env.ok(&["list", "races", "--track", "nope"]);
    assert_eq!(none.lines().count(), 1, "{none}");
    let ids: Vec<String> = env
        .race_dirs()
        .iter()
        .map(|d| d.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    env.ok(&["delete", &ids[0]]);
    assert_eq!(env.race_dirs().len(), 1);
}

#[test]
fn bad_race_ids_and_corrupt_records_exit_2() {
    let env = Env::new();
    let dirs = ["20260101T000000Z-aaaa", "20260101T000000Z-abbb"];
    for d in dirs {
        std::fs::create_dir_all(env.home.path().join("races").join(d)).unwrap();
        std::fs::write(
            env.home.path().join("races").join(d).join("race.json"),
            "{\"format\": 1, \"trunc",
        )
        .unwrap();
    }
    let track = track_dir(&[("track.yaml", TRIALS_TRACK)]);
    env.ok(&[
        "race",
        "--track-path",
        track.path().to_str().unwrap(),
        "--quiet",
    ]);
    let good = env
        .race_dirs()
        .into_iter()
        .find(|d| !d.ends_with("20260101T000000Z-aaaa") && !d.ends_with("20260101T000000Z-abbb"))
        .unwrap();
    std::fs::write(good.join("histograms.json"), "not json").unwrap();
    let good_id = good.file_name().unwrap().to_str().unwrap().to_string();
    let newer = env.home.path().join("races").join("20260303T000000Z-dddd");
    std::fs::create_dir_all(&newer).unwrap();
    std::fs::write(newer.join("race.json"), "{\"format\": 3}").unwrap();
    for (args, expect) in [
        (
            vec!["show", good_id.as_str()],
            "histograms.json is corrupted",
        ),
        (
            vec!["plot", "20260303", "--out", "/tmp/never"],
            "newer than this runner understands",
        ),
        (vec!["compare", "nope", "latest"], "no race `nope`"),
        (vec!["show", "20260101T000000Z-a"], "ambiguous"),
        (vec!["show", "20260101T000000Z-aa"], "is corrupted"),
        (vec!["delete", "missing"], "no race `missing`"),
    ] {
        let out = env.run(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains(expect) && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
}
