//! Part of benches/rally_tracks.py's table, in CI: real Rally tracks and OSB workloads from
//! `../shared/rally-tracks` (RUNNER_TEST_RALLY_TRACKS; `.ci/run` sets it when the folder is
//! there), with corpora from its generator, raced in test mode on the embedded engine and
//! through `runner serve`, the param sources of geonames and nested from the project's own
//! Python (the shared folder holds data only), run by esrally's venv's Python. What the engine cannot
//! run must be named: skipped before the race with its reason in-process, a 400 naming it through
//! serve; each for a feature the docs/rally.md lists as out of reach. Nothing may fail to load, and everything else runs with no
//! error.

use crate::util::*;

#[test]
fn shared_rally_tracks_load_and_run_what_they_can() {
    // The shared folder holds the tracks' data; geonames' and nested's param sources come
    // from the project's own Python (tests/fixtures/rally-own-python).
    let tracks = [
        "elastic/geonames",
        "elastic/nested",
        "elastic/so",
        "elastic/geopoint",
        "opensearch/geonames",
        "opensearch/nested",
        "opensearch/so",
        "opensearch/geopoint",
    ];
    let Some(laid) = shared_tracks_with_own_python(&tracks) else {
        eprintln!("RUNNER_TEST_RALLY_TRACKS is not set: the shared Rally tracks are not here");
        return;
    };
    let shared = laid.path().to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let json = out.path().join("rows.json");
    // The tracks' own track.py runs on esrally's venv (esrally and its client), as Rally's would.
    let python: Vec<String> = match std::env::var("RUNNER_TEST_ESRALLY") {
        Ok(esrally) => {
            let py = std::path::Path::new(&esrally).with_file_name("python");
            vec!["--python".into(), py.to_string_lossy().into_owned()]
        }
        Err(_) => Vec::new(),
    };
    // Its track.py workers run on esrally's venv: no esrally race meanwhile.
    let _one = esrally_venv_lock();
    let status = std::process::Command::new("python3")
        .arg(repo().join("benches/rally_tracks.py"))
        .args(&python)
        .args([
            "--shared",
            shared,
            "--only",
            "geonames,nested,so,geopoint",
            "--others",
            "0",
        ])
        .args(["--bin", env!("CARGO_BIN_EXE_runner"), "--timeout", "240"])
        .arg("--json")
        .arg(&json)
        .output()
        .expect("python3 runs the table");
    assert!(
        status.status.success(),
        "the table script failed: {}{}",
        String::from_utf8_lossy(&status.stdout),
        String::from_utf8_lossy(&status.stderr)
    );
    let rows: Vec<serde_json::Value> =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    assert!(rows.len() >= 14, "{} rows: {rows:#?}", rows.len());
    let mut clean = 0;
    for r in &rows {
        let name = format!("{} {} {}", r["track"], r["challenge"], r["backend"]);
        assert!(
            r["error"].as_str() == Some(""),
            "{name} did not load or race: {}",
            r["error"]
        );
        for f in r["failed"].as_array().unwrap() {
            let f = f.as_str().unwrap();
            // In a race, what the engine lacks is found before the race and skipped with its
            // reason: nothing fails. Through `runner serve` (which cannot know before a
            // request), it is a 400 naming it: never a 5xx, a timeout or a broken answer.
            assert!(
                r["backend"] == "serve" && f.contains("answered 400: "),
                "{name}: a task failed for a reason that is no named limitation: {f}"
            );
        }
        for s in r["skipped"].as_array().unwrap() {
            assert!(s.as_str().unwrap().contains("skipped"), "{name}: {s}");
        }
        // Every skip and failure needs an engine feature docs/rally.md lists as out of reach
        // (or follows from such a skip): none is runner's own, and none is for want of running
        // the track's Python (when esrally's venv runs it, as in CI).
        for key in ["skip_classes", "fail_classes"] {
            assert!(
                r[key].get("runner").is_none(),
                "{name}: {key} has runner's own: {}",
                r[key]
            );
            if !python.is_empty() {
                assert!(
                    r[key].get("python").is_none(),
                    "{name}: {key} has Python's: {}",
                    r[key]
                );
            }
        }
        if r["backend"] == "embedded" {
            assert_eq!(r["exit"], 0, "{name}");
        }
        clean += r["ran"].as_u64().unwrap();
    }
    assert!(clean >= 100, "only {clean} tasks ran clean");
}
