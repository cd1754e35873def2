//! Rally's general rules, followed from esrally's source, on the project's fixture
//! (tests/fixtures/rally-rules): runner races it with its stand-in for esrally (python3, no
//! esrally), with esrally's own track model (esrally's venv, where CI installed it), and through
//! the elasticsearch backend against `runner serve`. esrally races the same fixture in
//! esrally.rs. Each rule's outcome is checked by what the engine holds afterwards.

use crate::elasticsearch::serve;
use crate::util::*;

fn fixture() -> String {
    repo()
        .join("tests/fixtures/rally-rules")
        .to_string_lossy()
        .into_owned()
}

/// Each task's units (documents for a bulk) and hits in the race, by task name.
fn by_task(race: &serde_json::Value) -> std::collections::BTreeMap<String, (u64, u64)> {
    race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let trial = &t["trials"][0];
            assert_eq!(
                trial["errors"], 0,
                "{}: {}",
                t["task"], trial["error_messages"]
            );
            (
                t["task"].as_str().unwrap().to_string(),
                (
                    trial["units"].as_u64().unwrap(),
                    trial["hits"].as_u64().unwrap(),
                ),
            )
        })
        .collect()
}

/// The rules' outcomes in one race: every task without error; a drawn bulk of two (one
/// iteration a client in Rally's test mode); the corpus to the track's only index, through
/// Slice to `sliced`, and looped until the parallel block's completing task ended (the race
/// ends, and the index holds what the looped bulk reported).
fn check(race: &serde_json::Value) {
    let t = by_task(race);
    assert_eq!(t["generated-bulk"].0, 2, "{t:?}");
    assert_eq!(t["sliced-bulk"].0, 3, "{t:?}");
    assert_eq!(t["index-docs"].0, 3, "{t:?}");
    // How many the looped bulk sends before the search ends it is a matter of timing (it may
    // be none, in Rally too): what it sent is what the index holds beyond the corpus.
    let looped = t["looped-bulk"].0;
    assert_eq!(t["count-docs"].1, 3 + looped, "{t:?}");
    assert_eq!(t["count-generated"].1, 2, "{t:?}");
    assert_eq!(t["count-sliced"].1, 3, "{t:?}");
    // Rally's test mode: one iteration a client, the throttle lifted.
    assert_eq!(t["search-while-looping"].0, 1, "{t:?}");
}

fn race(env: &Env, extra: &[&str]) -> serde_json::Value {
    let fixture = fixture();
    let mut args = vec![
        "race",
        "--quiet",
        "--test-mode",
        "--track-path",
        fixture.as_str(),
        "--report-format",
        "json",
    ];
    args.extend_from_slice(extra);
    let out = env.ok(&args);
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["race"].clone()
}

#[test]
fn rallys_rules_hold_with_runners_stand_in_for_esrally() {
    let env = Env::new();
    let race = race(&env, &["--python", "python3"]);
    check(&race);
    let deviations = race["deviations"].to_string();
    assert!(
        deviations.contains("runner's stand-in for esrally"),
        "{deviations}"
    );
}

#[test]
fn rallys_rules_hold_with_esrallys_own_track_model() {
    let Ok(esrally) = std::env::var("RUNNER_TEST_ESRALLY") else {
        eprintln!("NOT CHECKED: esrally is not here (RUNNER_TEST_ESRALLY; .ci/run sets it)");
        return;
    };
    let python = std::path::Path::new(&esrally).with_file_name("python");
    let _one = esrally_venv_lock();
    let env = Env::new();
    let race = race(&env, &["--python", python.to_str().unwrap()]);
    check(&race);
    assert!(race["deviations"].to_string().contains("esrally 2.13"));
}

/// Through the elasticsearch backend: the drawn bulks are sent as drawn, to `/_bulk`.
#[test]
fn rallys_rules_hold_through_the_elasticsearch_backend() {
    let env = Env::new();
    let server = serve(&env, &[]);
    let target = format!("http://127.0.0.1:{}", server.port);
    let race = race(
        &env,
        &[
            "--python",
            "python3",
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &target,
        ],
    );
    check(&race);
    let count = |index: &str| -> serde_json::Value {
        serde_json::from_str(&http_body(
            server.port,
            "GET",
            &format!("/{index}/_count"),
            "",
        ))
        .unwrap()
    };
    assert_eq!(count("generated")["count"], 2);
    assert_eq!(count("sliced")["count"], 3);
}

/// An OSB workload whose Python imports osbenchmark's names (tests/fixtures/osb-rules) runs
/// on runner's stand-in for OSB where OSB is not installed: its param source draws, its runner
/// counts the documents with opensearch-py (CI's clients venv, RUNNER_TEST_CLIENTS_PYTHON).
#[test]
fn an_osb_workload_runs_on_runners_stand_in_for_osbenchmark() {
    let Some(python) = clients_python() else {
        return;
    };
    let env = Env::new();
    let fixture = repo().join("tests/fixtures/osb-rules");
    let out = env.ok(&[
        "race",
        "--quiet",
        "--test-mode",
        "--workload-path",
        fixture.to_str().unwrap(),
        "--python",
        &python,
        "--report-format",
        "json",
    ]);
    let race = serde_json::from_str::<serde_json::Value>(&out).unwrap()["race"].clone();
    let t = by_task(&race);
    assert_eq!(t["index-docs"].0, 3, "{t:?}");
    assert_eq!(t["search-drawn"].1, 1, "a term query on one name: {t:?}");
    assert_eq!(t["count-by-runner"].0, 1, "{t:?}");
    assert!(
        race["deviations"]
            .to_string()
            .contains("runner's stand-in for OpenSearch Benchmark"),
        "{}",
        race["deviations"]
    );
}

/// A search of two indices, one lacking the sort field, through the elasticsearch backend
/// against `runner serve` and on the embedded engine: Elasticsearch's partial results. Each search succeeds (as esrally
/// counts it: 200), its failed shard counted as a partial search and named in the report.
#[test]
fn searches_answered_by_some_shards_count_as_rally_counts_them_and_are_reported() {
    let track = serde_json::json!({
        "version": 2,
        "indices": [{"name": "with-pop", "body": "with.json"}, {"name": "without-pop", "body": "without.json"}],
        "corpora": [{"name": "c", "documents": [
            {"source-file": "a.json", "document-count": 2, "target-index": "with-pop"},
            {"source-file": "b.json", "document-count": 1, "target-index": "without-pop"}]}],
        "schedule": [
            {"operation": {"operation-type": "delete-index"}},
            {"operation": {"operation-type": "create-index"}},
            {"operation": {"name": "index", "operation-type": "bulk", "bulk-size": 10}},
            {"operation": {"operation-type": "refresh"}},
            {"name": "sorted", "operation": {"operation-type": "search", "index": "with-pop,without-pop",
                "body": {"sort": [{"pop": "asc"}]}}, "iterations": 4}]
    });
    let dir = track_dir(&[
        ("track.json", &track.to_string()),
        (
            "with.json",
            r#"{"mappings": {"properties": {"pop": {"type": "long"}}}}"#,
        ),
        (
            "without.json",
            r#"{"mappings": {"properties": {"name": {"type": "keyword"}}}}"#,
        ),
        ("a.json", "{\"pop\": 2}\n{\"pop\": 1}\n"),
        ("b.json", "{\"name\": \"x\"}\n"),
    ]);
    let env = Env::new();
    let server = serve(&env, &[]);
    let target = format!("http://127.0.0.1:{}", server.port);
    // Through `runner serve`, and on the embedded engine itself: the same partial answers.
    let elasticsearch = ["--backend", "elasticsearch", "--target-hosts", &target];
    for backend in [&elasticsearch[..], &[]] {
        let mut args = vec![
            "race",
            "--quiet",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--report-format",
            "json",
        ];
        args.extend_from_slice(backend);
        let out = env.ok(&args);
        let race = serde_json::from_str::<serde_json::Value>(&out).unwrap()["race"].clone();
        let sorted = tasks(&race, "sorted")[0]["trials"][0].clone();
        assert_eq!(sorted["errors"], 0, "{backend:?}: {sorted}");
        assert_eq!(sorted["operations"], 4, "{backend:?}: {sorted}");
        assert_eq!(sorted["partial_searches"], 4, "{backend:?}: {sorted}");
        assert_eq!(
            sorted["hits"], 8,
            "{backend:?}: each answered with the two documents that have `pop`"
        );
        let id = race["race_id"].as_str().unwrap();
        let shown = env.ok(&["show", id]);
        assert!(
            shown.contains("4 searches were answered by only some of their shards"),
            "{backend:?}: {shown}"
        );
    }
}
