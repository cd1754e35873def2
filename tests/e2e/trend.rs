//! `runner trend` over real stored races: a series of races of one track where the system gets
//! slower at a known race, found where it starts, and a CI gate failing on it.

use crate::util::*;

const TRACK: &str = "name: nightly
parameters: {nap_us: 2000}
operations: [{name: nap, type: sleep, params: {duration: '{{ nap_us }}us'}}]
challenges:
  - name: c
    schedule:
      - {operation: nap, warmup: 20, iterations: 200}
";

#[test]
fn a_regression_is_found_where_it_starts_and_fails_the_gate() {
    let dir = track_dir(&[("track.yaml", TRACK)]);
    let env = Env::new();
    let path = dir.path().to_str().unwrap();
    // Eight races at 2 ms, then three at 3 ms: the service time grows by half at race 9.
    for i in 0..11 {
        let (nap, phase) = if i < 8 {
            ("nap_us:2000", "phase:before")
        } else {
            ("nap_us:3000", "phase:after")
        };
        env.ok(&[
            "race",
            "--track-path",
            path,
            "--quiet",
            "--track-params",
            nap,
            "--user-tag",
            phase,
        ]);
    }
    let out = env.run(&[
        "trend",
        "--track",
        "nightly",
        "--metric",
        "service_time_p50",
        "--fail-on",
        "regression",
        "--report-format",
        "json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("nap [-] service_time_p50") && err.contains("through the newest race"),
        "{err}"
    );
    // The races differ in a track parameter: said, not hidden.
    assert!(err.contains("the races mix track parameters"), "{err}");
    let trend: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let races = trend["races"].as_array().unwrap();
    assert_eq!(races.len(), 11);
    let series = &trend["series"][0];
    // The one regression starts at race 9. Sleep times are so steady that a machine's own 1%
    // step (a cold first race, say) may be a significant change too: it is within noise.
    let changes = series["changes"].as_array().unwrap();
    let regressions: Vec<_> = changes
        .iter()
        .filter(|c| c["direction"] == "regression")
        .collect();
    assert_eq!(regressions.len(), 1, "{series}");
    assert_eq!(regressions[0]["index"], 8, "{series}");
    assert_eq!(regressions[0]["race"], races[8]);
    let pct = regressions[0]["change_percent"].as_f64().unwrap();
    assert!(pct > 30.0, "{pct}");
    for c in changes.iter().filter(|c| c["direction"] != "regression") {
        assert_eq!(c["direction"], "within-noise", "{series}");
    }
    // Without the newest three, no regression: the gate passes.
    let md = env.ok(&[
        "trend",
        "--track",
        "nightly",
        "--user-tag",
        "phase:before",
        "--metric",
        "service_time_p50",
        "--fail-on",
        "regression",
    ]);
    assert!(!md.contains("regression |"), "{md}");
    // The newest five: two before and three after, still a change where it starts.
    let json = env.ok(&[
        "trend",
        "--track",
        "nightly",
        "--last",
        "5",
        "--metric",
        "service_time_p50",
        "--report-format",
        "json",
    ]);
    let last5: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(last5["races"].as_array().unwrap().len(), 5);
    // The newest three as one report: spread across races, and every sample together.
    let json = env.ok(&[
        "report",
        "latest",
        "latest~1",
        "latest~2",
        "--report-format",
        "json",
    ]);
    let across: serde_json::Value = serde_json::from_str(&json).unwrap();
    let merged = &across["merged"][0];
    assert_eq!(
        merged["service_time_ms"]["count"], 600,
        "three races of 200: {merged}"
    );
    let p50 = across["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "service_time_p50")
        .unwrap();
    assert_eq!(p50["races"], 3);
    assert!(p50["cv"].as_f64().is_some(), "{p50}");
    let md = env.ok(&["report", "latest", "latest~1", "latest~2"]);
    assert!(
        md.contains("| Task | Sweep | Metric | Races | Mean | Median | Min | Max | CV |"),
        "{md}"
    );
    // One baseline (the oldest race) against the newest three, side by side.
    let md = env.ok(&["compare", "latest~10", "latest~2", "latest~1", "latest"]);
    assert!(md.contains("against 3 contenders"), "{md}");
    assert!(
        md.lines()
            .any(|l| l.starts_with("| nap | - | service_time_p50 (ms) |")),
        "{md}"
    );
    let json = env.ok(&[
        "compare",
        "latest~10",
        "latest~1",
        "latest",
        "--report-format",
        "json",
    ]);
    let pairs: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(pairs["pairs"].as_array().unwrap().len(), 2);
    // The chart of each series, with its change point.
    let plots = tempfile::tempdir().unwrap();
    env.ok(&[
        "trend",
        "--track",
        "nightly",
        "--metric",
        "service_time_p50",
        "--plot",
        plots.path().to_str().unwrap(),
    ]);
    let svg =
        std::fs::read_to_string(plots.path().join("trend-service_time_p50-nap--.svg")).unwrap();
    assert!(svg.contains("+"), "{svg}");
}

#[test]
fn too_few_races_or_none_are_clear_errors() {
    let dir = track_dir(&[("track.yaml", TRACK)]);
    let env = Env::new();
    let out = env.run(&["trend", "--track", "nightly"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no stored race matches --track nightly"));
    // A CI gate on a fresh runner: no history, nothing regressed, the gate passes, saying so.
    let out = env.run(&["trend", "--track", "nightly", "--fail-on", "regression"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to judge yet"));
    let path = dir.path().to_str().unwrap();
    for _ in 0..2 {
        env.ok(&["race", "--track-path", path, "--quiet"]);
    }
    let out = env.run(&["trend", "--track", "nightly"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("2 races match --track nightly: a change point needs at least 4"),
        "{err}"
    );
}
