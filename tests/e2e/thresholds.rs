//! Thresholds as a CI gate: from the track and from `--threshold`, judged in every report,
//! exit 3 when one fails; and `compare --fail-on worse`.

use crate::util::*;

fn nap_track(duration: &str, thresholds: &str) -> String {
    format!(
        "name: t
operations: [{{name: nap, type: sleep, params: {{duration: {duration}}}}}]
challenges:
  - name: c
    schedule:
      - {{name: nap, operation: nap, iterations: 20, trials: 5{thresholds}}}
"
    )
}

#[test]
fn a_failed_threshold_exits_3_and_every_report_says_which() {
    let passing = nap_track(
        "1ms",
        r#", thresholds: {service_time.p50: "< 1h", error_rate: "< 1%"}"#,
    );
    let (env, out) = race_track(&passing, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("## Thresholds") && report.contains("| nap | - | service_time.p50 < 1h |"),
        "{report}"
    );
    assert!(!report.contains("FAIL"), "{report}");
    let stored = env.only_race();
    assert_eq!(stored["tasks"][0]["thresholds"][0], "service_time.p50 < 1h");

    // The command line adds one that fails, and one that 100 samples cannot judge (p99.9).
    let (env, out) = race_track(
        &passing,
        &[
            "--threshold",
            "nap:service_time.p50 < 1us",
            "--threshold",
            "latency.p99.9 < 1h",
        ],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("a threshold failed"), "{stderr}");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        report.contains("| nap | - | service_time.p50 < 1us |") && report.contains("FAIL"),
        "{report}"
    );
    assert!(
        report.contains("cannot judge: 100 samples do not support p99.9"),
        "{report}"
    );
    let json = env.ok(&["show", "latest", "--report-format", "json"]);
    let summary: serde_json::Value = serde_json::from_str(&json).unwrap();
    let verdicts: Vec<&str> = summary["tasks"][0]["thresholds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["pass", "pass", "fail", "cannot-judge"]);
    let csv = env.ok(&["show", "latest", "--report-format", "csv"]);
    assert!(
        csv.contains("threshold: service_time.p50 < 1us,0,pass"),
        "{csv}"
    );
    assert!(csv.contains("threshold: error_rate < 1%,1,pass"), "{csv}");
}

#[test]
fn thresholds_that_cannot_mean_anything_are_refused_before_the_race() {
    let cases = [
        (
            nap_track("1ms", r#", thresholds: {service_time.p42: "< 5ms"}"#),
            "service_time.p42",
        ),
        (
            nap_track("1ms", r#", thresholds: {service_time.p99: "< 5"}"#),
            "needs a time unit",
        ),
        (
            nap_track("1ms", r#", thresholds: {throughput: ">= 99% of target"}"#),
            "needs a `target-throughput`",
        ),
        (
            nap_track(
                "1ms",
                r#", include-in-reporting: false, thresholds: {error_rate: "< 1%"}"#,
            ),
            "is never judged",
        ),
    ];
    for (track, expect) in cases {
        let (env, out) = race_track(&track, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains(expect) && stderr.contains("track.yaml"),
            "{expect}: {stderr}"
        );
        assert!(env.race_dirs().is_empty());
    }
    let (_, out) = race_track(
        &nap_track("1ms", ""),
        &["--threshold", "nope:error_rate < 1%"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("no reported task `nope`"), "{stderr}");
}

#[test]
fn compare_fail_on_worse_is_a_regression_gate() {
    // Naps of 1 ms against naps of 10 ms, five trials each: every timing is worse.
    let env = Env::new();
    for duration in ["1ms", "10ms"] {
        let dir = track_dir(&[("track.yaml", &nap_track(duration, ""))]);
        env.ok(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
    }
    let plain = env.run(&["compare", "latest~1", "latest"]);
    assert_eq!(plain.status.code(), Some(0));
    let gated = env.run(&["compare", "latest~1", "latest", "--fail-on", "worse"]);
    let stderr = String::from_utf8_lossy(&gated.stderr);
    assert_eq!(gated.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("worse in nap [-] throughput"), "{stderr}");
    let better = env.run(&["compare", "latest", "latest~1", "--fail-on", "worse"]);
    assert_eq!(
        better.status.code(),
        Some(0),
        "the other way round nothing is worse"
    );
}
