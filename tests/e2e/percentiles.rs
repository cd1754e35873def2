//! Every percentile a race stores or reports, cross-checked against another HdrHistogram
//! implementation: Python's `hdrhistogram` (PyPI) decodes the stored histograms and computes
//! the same percentiles. `.ci/run` installs it in a venv and names its python in
//! RUNNER_TEST_HDRH_PYTHON.

use crate::util::*;

const CROSS_CHECK: &str = r#"
import json, sys
from hdrh.histogram import HdrHistogram
race, hists, summary = (json.load(open(p)) for p in sys.argv[1:4])
PCTS = [("p50", 50), ("p90", 90), ("p95", 95), ("p99", 99), ("p99.9", 99.9), ("p99.99", 99.99), ("p100", 100)]
checked, problems = 0, []
def compare(what, h, stored):
    global checked
    n = h.get_total_count()
    if stored["count"] != n:
        problems.append(f"{what}: count {stored['count']} != {n}")
    for label, p in PCTS:
        supported = p == 100 or n * (1 - p / 100) >= 1 - 1e-9
        got = stored[label]
        if not supported or n == 0:
            if got is not None:
                problems.append(f"{what} {label}: {n} samples do not support it, yet it says {got}")
            continue
        want = h.get_value_at_percentile(p) / 1000.0
        checked += 1
        if got is None or abs(got - want) > 1e-9:
            problems.append(f"{what} {label}: runner {got} ms, hdrhistogram {want} ms ({n} samples)")
by_task = {}
for t in hists["trials"]:
    for kind, key in (("service_time_ms", "service_time_us"), ("latency_ms", "latency_us")):
        h = HdrHistogram.decode(t[key])
        trial = next(tr for tr in race["tasks"][t["task_index"]]["trials"] if tr["trial"] == t["trial"])
        compare(f"task {t['task_index']} trial {t['trial']} {kind}", h, trial[kind])
        merged = by_task.setdefault((t["task_index"], kind), HdrHistogram(1, 3600000000, 3))
        merged.add(h)
for s in summary["tasks"]:
    for kind in ("service_time_ms", "latency_ms"):
        h = by_task.get((s["task_index"], kind))
        if h is not None:
            compare(f"summary of task {s['task']} {kind}", h, s[kind])
print(f"checked {checked}")
for p in problems:
    print("PROBLEM", p)
"#;

fn python_with_hdrh() -> Option<String> {
    if let Ok(python) = std::env::var("RUNNER_TEST_HDRH_PYTHON") {
        return Some(python);
    }
    let found = std::process::Command::new("python3")
        .args(["-c", "import hdrh"])
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Some("python3".into());
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must provide Python's hdrhistogram (RUNNER_TEST_HDRH_PYTHON, see .ci/run)"
    );
    eprintln!(
        "NOT CHECKED: Python's hdrhistogram is not installed (python3 -m pip install hdrhistogram)"
    );
    None
}

#[test]
fn every_reported_percentile_agrees_with_pythons_hdrhistogram() {
    let Some(python) = python_with_hdrh() else {
        return;
    };
    let env = Env::new();
    // Tasks of 1 to 1,000 samples a trial (test mode), several trials merged.
    env.ok(&["race", "--track", "geonames", "--test-mode", "--quiet"]);
    let dir = &env.race_dirs()[0];
    let summary = env.home.path().join("summary.json");
    std::fs::write(
        &summary,
        env.ok(&["show", "latest", "--report-format", "json"]),
    )
    .unwrap();
    let script = env.home.path().join("cross_check.py");
    std::fs::write(&script, CROSS_CHECK).unwrap();
    let out = std::process::Command::new(&python)
        .arg(&script)
        .arg(dir.join("race.json"))
        .arg(dir.join("histograms.json"))
        .arg(&summary)
        .output()
        .unwrap();
    let said =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{said}");
    eprintln!("{}", said.lines().next().unwrap_or(""));
    let checked: u64 = said
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("checked "))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(checked > 100, "{said}");
    assert!(!said.contains("PROBLEM"), "{said}");
}
