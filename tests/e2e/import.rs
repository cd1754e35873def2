//! `runner import --from URL` against a loopback metrics store answering `_search` with
//! documents as Rally and OpenSearch Benchmark write them (tests/fixtures/rally-metrics-store),
//! and with runner's own export of a race: imported races are stored, marked, and followed by
//! `trend`.

use crate::util::*;
use std::sync::{Arc, Mutex};

/// A store answering each `_search` with `docs` (paged by `from`/`size`), recording the requests.
fn store(docs: Vec<serde_json::Value>) -> (u16, Arc<Mutex<Vec<String>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let port = json_server(move |line, body| {
        log.lock()
            .unwrap()
            .push(format!("{line} {}", String::from_utf8_lossy(&body)));
        if line.starts_with("GET / ") {
            return r#"{"version":{"number":"8.15.0"}}"#.into();
        }
        let q: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        let from = q["from"].as_u64().unwrap_or(0) as usize;
        let size = q["size"].as_u64().unwrap_or(10) as usize;
        let hits: Vec<_> = docs.iter().skip(from).take(size).cloned().collect();
        serde_json::json!({"hits": {"total": {"value": docs.len(), "relation": "eq"}, "hits": hits}}).to_string()
    });
    (port, seen)
}

fn fixture() -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(repo().join("tests/fixtures/rally-metrics-store/documents.json"))
            .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn rally_and_osb_races_are_imported_marked_and_followed() {
    let (port, seen) = store(fixture());
    let env = Env::new();
    let url = format!("http://127.0.0.1:{port}");
    let out = env.run(&["import", "--from", &url]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("7 race(s) imported"), "{err}");
    let asked = seen.lock().unwrap().join("\n");
    assert!(
        asked.contains("rally-results-*,rally-races-*,benchmark-results-*/_search"),
        "{asked}"
    );
    // Importing again adds nothing.
    let again = env.run(&["import", "--from", &url]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("7 already in the store"));
    let list = env.ok(&["list", "races", "--track", "geonames"]);
    assert_eq!(
        list.lines().filter(|l| l.contains("imported")).count(),
        5,
        "{list}"
    );
    // The Rally race document's op_metrics and OSB's results became tasks with their numbers.
    let taxis = env.ok(&["list", "races", "--track", "nyc_taxis"]);
    assert_eq!(taxis.lines().count(), 3, "{taxis}");
    let newest = env.ok(&["show", "latest", "--report-format", "json"]);
    let osb: serde_json::Value = serde_json::from_str(&newest).unwrap();
    assert_eq!(osb["race"]["challenge"], "append-no-conflicts");
    assert_eq!(osb["tasks"][0]["throughput"]["median"], 1001.0);
    assert_eq!(osb["tasks"][0]["service_time_ms"]["p99"], 21.0);
    let md = env.ok(&["show", "latest"]);
    assert!(
        md.contains("imported from OpenSearch Benchmark's metrics store"),
        "{md}"
    );
    // The five nightly geonames races: the fifth is slower, and trend says so.
    let trend = env.run(&[
        "trend",
        "--track",
        "geonames",
        "--metric",
        "service_time_p50",
        "--metric",
        "throughput",
        "--fail-on",
        "regression",
        "--report-format",
        "json",
    ]);
    assert_eq!(
        trend.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&trend.stderr)
    );
    let t: serde_json::Value = serde_json::from_slice(&trend.stdout).unwrap();
    for s in t["series"].as_array().unwrap() {
        let changes = s["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{s}");
        assert_eq!(changes[0]["index"], 4);
        assert_eq!(changes[0]["direction"], "regression");
    }
}

#[test]
fn runners_own_export_comes_back() {
    // A real race, exported as Rally's documents by runner itself, then read back.
    let (env, out) = race_track(
        "name: own\noperations: [{name: nap, type: sleep, params: {duration: 1ms}}]\nchallenges: [{name: c, schedule: [{operation: nap, iterations: 50}]}]\n",
        &[],
    );
    assert!(out.status.success());
    let race = env.only_race();
    let store_ = runner::results::RaceStore::new(env.home.path());
    let (record, histograms) = store_.load(race["race_id"].as_str().unwrap()).unwrap();
    let summary = runner::report::Summary::new(&record, &histograms);
    let docs: Vec<serde_json::Value> = runner::export::rally_documents(&summary)
        .results
        .into_iter()
        .map(|(_, d)| serde_json::json!({"_index": "rally-results-2026-12", "_source": d}))
        .collect();
    let (port, _) = store(docs);
    let other = Env::new();
    let out = other.run(&["import", "--from", &format!("http://127.0.0.1:{port}")]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let back: serde_json::Value =
        serde_json::from_str(&other.ok(&["show", "latest", "--report-format", "json"])).unwrap();
    let ours = &race["tasks"][0]["trials"][0];
    let theirs = &back["race"]["tasks"][0]["trials"][0];
    assert_eq!(
        theirs["service_time_ms"]["p50"],
        ours["service_time_ms"]["p50"]
    );
    assert_eq!(
        theirs["service_time_ms"]["p99"],
        ours["service_time_ms"]["p99"]
    );
    assert_eq!(back["race"]["track"], "own");
}

#[test]
fn a_store_without_results_or_not_a_store_is_a_clear_error() {
    let (port, _) = store(Vec::new());
    let env = Env::new();
    let out = env.run(&["import", "--from", &format!("http://127.0.0.1:{port}")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("holds no Rally or OSB results"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let nginxish = json_server(|_, _| "<html>not a search</html>".into());
    let out = env.run(&["import", "--from", &format!("http://127.0.0.1:{nginxish}")]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is not a search response"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = env.run(&["import", "--from", "http://127.0.0.1:1"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
