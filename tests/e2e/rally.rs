//! Rally tracks. The fixture tests/fixtures/rally-geonames is a
//! Rally-format copy of a small geonames track whose operations/ and challenges/ parts are
//! joined by `rally.collect`; `runner render-track` renders it as Rally would.

use crate::util::*;

fn fixture() -> String {
    repo()
        .join("tests/fixtures/rally-geonames")
        .to_str()
        .unwrap()
        .to_string()
}

#[test]
fn render_track_joins_the_parts_and_applies_parameters() {
    let env = Env::new();
    let text = env.ok(&["render-track", "--track-path", &fixture()]);
    let track: serde_json::Value = serde_json::from_str(&text).expect("the rendered track is JSON");
    let ops: Vec<&str> = track["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        ops,
        [
            "index-append",
            "phrase",
            "scroll-all",
            "by-population",
            "index-update-conflicts",
            "count-all",
            "index-stats",
            "node-stats"
        ]
    );
    assert_eq!(
        track["operations"][0],
        serde_json::json!({"name": "index-append", "operation-type": "bulk", "bulk-size": 500}),
        "defaults, and no ingest-percentage unless set"
    );
    let schedule = &track["challenges"][0]["schedule"];
    assert_eq!(
        (
            schedule[2]["clients"].as_u64(),
            schedule[4]["target-throughput"].as_u64()
        ),
        (Some(2), Some(200))
    );

    let text = env.ok(&[
        "render-track",
        "--track-path",
        &fixture(),
        "--track-params",
        "bulk_size:5000,ingest_percentage:40,bulk_indexing_clients:8",
    ]);
    let track: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(track["operations"][0]["bulk-size"], 5000);
    assert_eq!(
        track["operations"][0]["ingest-percentage"], 40,
        "exists_set_param writes a parameter that is set"
    );
    assert_eq!(
        track["challenges"][0]["schedule"][2]["clients"], 8,
        "parts see the parameters"
    );
}

#[test]
fn unused_parameters_and_template_errors_are_clear() {
    let env = Env::new();
    let out = env.run(&[
        "render-track",
        "--track-path",
        &fixture(),
        "--track-params",
        "bulk_sise:5000",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("track.json")
            && stderr.contains("`bulk_sise` is not used by the track (did you mean `bulk_size`?)"),
        "{stderr}"
    );
    env.ok(&[
        "render-track",
        "--track-path",
        &fixture(),
        "--track-params",
        "bulk_sise:5000",
        "--ignore-unused-track-params",
    ]);

    // A Jinja error in a part names the part and its line; a part that renders bad JSON is
    // caught; running a Rally track says what is and is not supported.
    let broken = track_dir(&[
        ("track.json", "{% import \"rally.helpers\" as rally with context %}\n{\"operations\": [{{ rally.collect(parts=\"operations/*.json\") }}]}\n"),
        ("operations/a.json", "{\"name\": \"a\",\n \"x\": {% if %}}\n"),
    ]);
    let out = env.run(&[
        "render-track",
        "--track-path",
        broken.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("operations/a.json:2:")
            && stderr.contains("in a part collected by track.json")
            && !stderr.contains("panicked"),
        "{stderr}"
    );
    std::fs::write(
        broken.path().join("operations/a.json"),
        "{\"name\": \"a\",}",
    )
    .unwrap();
    let out = env.run(&[
        "render-track",
        "--track-path",
        broken.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("the rendered track is not JSON"),
        "{stderr}"
    );
    let out = env.run(&["race", "--track-path", broken.path().to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(env.race_dirs().is_empty());
}

/// The fixture end to end against `runner serve`: its 17 "Sankt Georgen" on every search.
#[test]
fn the_rally_fixture_races_against_runner_serve() {
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let u = crate::elasticsearch::url(server.port);
    let out = env.ok(&[
        "race",
        "--track-path",
        &fixture(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &u,
        "--quiet",
    ]);
    let race = env.only_race();
    assert_eq!(
        (race["track"].as_str(), race["challenge"].as_str()),
        (Some("rally-geonames"), Some("append-no-conflicts"))
    );
    assert_eq!(tasks(&race, "index-append")[0]["trials"][0]["units"], 200);
    let phrase = &tasks(&race, "phrase")[0];
    let trial = &phrase["trials"][0];
    // Rally: 50 warmup + 100 measured iterations for the one client.
    assert_eq!(
        (
            trial["warmup_operations"].as_u64(),
            trial["operations"].as_u64(),
            trial["hits"].as_u64()
        ),
        (Some(50), Some(100), Some(1700)),
        "{trial}"
    );
    assert_eq!(phrase["target_throughput"], 200.0);
    assert!(out.contains("| phrase |"), "{out}");
    // As in Rally, administrative tasks run and are stored, but are not in the report.
    assert!(
        !out.contains("| delete-index |") && !out.contains("| refresh |"),
        "{out}"
    );
    assert_eq!(tasks(&race, "refresh")[0]["reported"], false);
    assert!(
        tasks(&race, "phrase")[0].get("reported").is_none(),
        "reported tasks store no flag"
    );
    // A scroll of 50 a page reads the 200 places in 4 full pages and an empty one; Rally
    // counts scroll throughput in pages. paginated-search stops at its 3 pages.
    let scroll = &tasks(&race, "scroll-all")[0];
    assert_eq!(
        (
            scroll["trials"][0]["units"].as_u64(),
            scroll["trials"][0]["hits"].as_u64(),
            scroll["throughput_unit"].as_str()
        ),
        (Some(10), Some(400), Some("pages/s")),
        "{scroll}"
    );
    assert_eq!(tasks(&race, "by-population")[0]["trials"][0]["units"], 6);
    // Rally's index-stats and node-stats, as REST calls runner serve answers.
    for stats in ["index-stats", "node-stats"] {
        let t = &tasks(&race, stats)[0]["trials"][0];
        assert_eq!(
            (t["successes"].as_u64(), t["errors"].as_u64()),
            (Some(5), Some(0)),
            "{stats}: {t}"
        );
    }
    assert!(
        out.contains("| scroll-all |") && out.contains("pages/s"),
        "{out}"
    );
    // Random id conflicts with updates: every document is accepted, a quarter update one
    // indexed before, so fewer distinct documents remain; the same on both backends.
    let distinct = |args: &[&str]| {
        let env = Env::new();
        let path = fixture();
        let mut all = vec![
            "race",
            "--track-path",
            &path,
            "--challenge",
            "update-conflicts",
            "--quiet",
        ];
        all.extend_from_slice(args);
        env.ok(&all);
        let race = env.only_race();
        let bulk = &tasks(&race, "index-update-conflicts")[0]["trials"][0];
        assert_eq!(
            (bulk["units"].as_u64(), bulk["errors"].as_u64()),
            (Some(200), Some(0)),
            "{bulk}"
        );
        tasks(&race, "count-all")[0]["trials"][0]["hits"]
            .as_u64()
            .unwrap()
    };
    let over_http = distinct(&["--backend", "elasticsearch", "--target-hosts", &u]);
    let embedded = distinct(&[]);
    assert_eq!(over_http, embedded);
    assert!(
        (130..175).contains(&embedded),
        "{embedded} distinct documents of 200 at 25% conflicts"
    );
    // ingest-percentage indexes the first share of the bulks of each worker's slice, rounded
    // up, as Rally's param source counts it: 200 documents in bulks of 50 are 4 bulks (2 on
    // each of two workers), and half of them is 100 documents.
    let ingested = |params: &str| {
        let env = Env::new();
        env.ok(&[
            "race",
            "--track-path",
            &fixture(),
            "--quiet",
            "--track-params",
            params,
        ]);
        tasks(&env.only_race(), "index-append")[0]["trials"][0]["units"].clone()
    };
    assert_eq!(ingested("ingest_percentage:50,bulk_size:50"), 100);
    // One bulk of 500 holds each slice: half a bulk rounds up to the whole corpus.
    assert_eq!(ingested("ingest_percentage:50"), 200);
    // Rally's --test-mode reads the -1k file.
    let env = Env::new();
    env.ok(&["race", "--track-path", &fixture(), "--test-mode", "--quiet"]);
    assert_eq!(
        tasks(&env.only_race(), "index-append")[0]["trials"][0]["units"],
        50
    );
}

#[test]
fn rally_semantics_are_translated_and_unsupported_tasks_fail_or_are_skipped() {
    let track = r#"{
  "operations": [
    {"name": "nap", "operation-type": "sleep", "duration": 0},
    {"name": "custom", "operation-type": "my-custom-runner"}
  ],
  "schedule": [
    {"operation": "nap", "clients": 2, "warmup-iterations": 10, "iterations": 50},
    {"operation": "nap", "name": "timed", "clients": 2, "warmup-time-period": 0.2, "time-period": 0.3, "target-throughput": 100},
    {"operation": "custom"}
  ]
}"#;
    let dir = track_dir(&[("track.json", track)]);
    let path = dir.path().to_str().unwrap();
    let env = Env::new();
    let out = env.run(&["race", "--track-path", path, "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("task `custom`")
            && stderr.contains("custom runner")
            && stderr.contains("--on-unsupported skip"),
        "{stderr}"
    );
    let out = env
        .command(&[
            "race",
            "--track-path",
            path,
            "--quiet",
            "--on-unsupported",
            "skip",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("note:") && stderr.contains("task `custom` skipped"),
        "{stderr}"
    );
    let race = env.only_race();
    // Iterations are per client in Rally: 2 clients × 50 measured (+ 2 × 10 warmup).
    let nap = &tasks(&race, "nap")[0]["trials"][0];
    assert_eq!(
        (
            nap["operations"].as_u64(),
            nap["warmup_operations"].as_u64()
        ),
        (Some(100), Some(20)),
        "{nap}"
    );
    // Rally measures time-period after warmup-time-period: 0.5 s in all, 0.3 s measured. The
    // plan says so exactly (a wall-clock window would stretch on a loaded machine), and the race
    // starts 100 ops/s × 0.3 s = 30 measured operations on that schedule.
    let plan = env.ok(&[
        "plan",
        "--track-path",
        path,
        "--on-unsupported",
        "skip",
        "--report-format",
        "json",
    ]);
    let plan: serde_json::Value = serde_json::from_str(&plan).unwrap();
    let timed_work = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["leaves"].as_array().unwrap())
        .find(|l| l["task"] == "timed")
        .map(|l| l["work"].clone())
        .unwrap();
    assert_eq!(
        timed_work,
        serde_json::json!({"kind": "time", "warmup": 0.2, "measured": 0.3})
    );
    let timed = &tasks(&race, "timed")[0]["trials"][0];
    assert_eq!(timed["operations"], 30, "{timed}");
    assert!(tasks(&race, "custom").is_empty());
}

#[test]
fn convert_rally_writes_a_track_of_ours_that_races_alike() {
    let out_dir = tempfile::tempdir().unwrap();
    let target = out_dir.path().join("converted");
    let env = Env::new();
    let yaml = env.ok(&[
        "convert-rally",
        &fixture(),
        "--out",
        target.to_str().unwrap(),
    ]);
    assert!(
        yaml.contains("type: bulk")
            && yaml.contains("iterations: 100")
            && yaml.contains("warmup: 50"),
        "{yaml}"
    );
    assert!(
        target.join("documents.json").is_file(),
        "the corpus file is there beside it"
    );
    env.ok(&["race", "--track-path", target.to_str().unwrap(), "--quiet"]);
    assert_eq!(
        tasks(&env.only_race(), "phrase")[0]["trials"][0]["hits"],
        1700
    );
    let again = env.run(&[
        "convert-rally",
        &fixture(),
        "--out",
        target.to_str().unwrap(),
    ]);
    assert_eq!(
        again.status.code(),
        Some(2),
        "an existing track.yaml is not overwritten"
    );
}

/// Rally assembles a track before rendering it: parts are inlined where they are collected,
/// so a top-level `{% set %}` reaches them, each part collects from its own folder, and OSB's
/// workloads reach `../../common_operations` with the variables of a `{% with %}` around it.
#[test]
fn parts_are_assembled_as_rally_and_osb_assemble_them() {
    let root = track_dir(&[
        (
            "w/workload.json",
            "{% import \"benchmark.helpers\" as benchmark with context %}\n{% set rate = 7 %}\n{\"version\": 2, \"indices\": [{\"name\": \"i\"}],\n \"operations\": [{{ benchmark.collect(parts=\"operations/*.json\") }}],\n \"test_procedures\": [{{ benchmark.collect(parts=\"test_procedures/*.json\") }}]}\n",
        ),
        (
            "w/operations/a.json",
            "{\"name\": \"a\", \"operation-type\": \"search\"}",
        ),
        (
            "w/test_procedures/t.json",
            "{\"name\": \"t\", \"default\": true, \"schedule\": [\n{% with index_name=\"i\" %}{{ benchmark.collect(parts=\"../../common/setup.json\") }},{% endwith %}\n{\"operation\": \"a\", \"target-throughput\": {{ rate }}}]}",
        ),
        (
            "common/setup.json",
            "{\"name\": \"health-{{ index_name }}\", \"operation\": {\"operation-type\": \"cluster-health\", \"index\": \"{{ index_name }}\"}}",
        ),
    ]);
    let env = Env::new();
    let dir = root.path().join("w");
    let text = env.ok(&["render-track", "--workload-path", dir.to_str().unwrap()]);
    let v: serde_json::Value = serde_json::from_str(&text).expect(&text);
    let schedule = &v["test_procedures"][0]["schedule"];
    assert_eq!(schedule[0]["operation"]["index"], "i", "{text}");
    assert_eq!(schedule[0]["name"], "health-i", "{text}");
    assert_eq!(schedule[1]["target-throughput"], 7, "{text}");

    // A glob that matches nothing renders nothing, as in Rally and OSB; when that leaves the
    // workload not JSON, the error names the glob and where it looked.
    std::fs::remove_file(root.path().join("common/setup.json")).unwrap();
    for command in ["render-track", "race"] {
        let out = env.run(&[
            command,
            "--workload-path",
            dir.to_str().unwrap(),
            "--test-mode",
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("health-"),
            "{command}"
        );
        assert!(
            stderr.contains("not JSON")
                && stderr.contains(
                    "t.json:2: collect(parts=\"../../common/setup.json\") matched no file"
                )
                && stderr.contains("rendered nothing"),
            "{command}: {stderr}"
        );
    }
}

#[test]
fn render_track_shows_our_tracks_after_templating_too() {
    let env = Env::new();
    let text = env.ok(&[
        "render-track",
        "--track",
        "geonames",
        "--track-params",
        "documents:500000",
    ]);
    assert!(
        text.contains("scale-to: 500000") && !text.contains("{{"),
        "{text}"
    );
}

/// A loopback HTTP server for corpus downloads: `body` for GET /corpora/docs.json, 404 for
/// anything else; counts the requests.
fn corpus_server(body: &'static str) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    use std::io::{BufRead, Write};
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = hits.clone();
    let port = fault_listener(move |stream, _| {
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut request = String::new();
        reader.read_line(&mut request).ok();
        let mut line = String::new();
        while reader.read_line(&mut line).map(|n| n > 2).unwrap_or(false) {
            line.clear();
        }
        counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let mut stream = stream;
        let reply = if request.starts_with("GET /corpora/docs.json ") {
            format!(
                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        } else {
            "HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".to_string()
        };
        let _ = stream.write_all(reply.as_bytes());
    });
    (port, hits)
}

#[test]
fn base_url_corpora_are_downloaded_once_kept_under_the_results_home_and_size_checked() {
    const DOCS: &str = "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n";
    let (port, hits) = corpus_server(DOCS);
    let track = |bytes: usize, file: &str| {
        format!(
            r#"{{"indices": [{{"name": "i"}}],
  "corpora": [{{"name": "c", "base-url": "http://127.0.0.1:{port}/corpora", "documents": [{{"source-file": "{file}", "document-count": 3, "uncompressed-bytes": {bytes}, "target-index": "i"}}]}}],
  "schedule": [{{"operation": "create-index"}}, {{"operation": {{"name": "bulk", "operation-type": "bulk", "bulk-size": 2}}}}]}}"#
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let rally = dir.path().join("downloaded");
    std::fs::create_dir(&rally).unwrap();
    std::fs::write(rally.join("track.json"), track(DOCS.len(), "docs.json")).unwrap();
    let env = Env::new();
    env.ok(&["race", "--track-path", rally.to_str().unwrap(), "--quiet"]);
    assert_eq!(tasks(&env.only_race(), "bulk")[0]["trials"][0]["units"], 3);
    let cached = env.home.path().join("data/downloaded/docs.json");
    assert_eq!(
        std::fs::read_to_string(&cached).unwrap(),
        DOCS,
        "kept under the results home"
    );
    assert!(
        !rally.join("docs.json").exists(),
        "the track directory is left as it was"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    env.ok(&["race", "--track-path", rally.to_str().unwrap(), "--quiet"]);
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "the second race reads the cached file"
    );

    // A size that does not match is refused, naming both sizes.
    std::fs::write(rally.join("track.json"), track(DOCS.len() + 1, "docs.json")).unwrap();
    let out = env.run(&["race", "--track-path", rally.to_str().unwrap(), "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "says {} bytes, the file has {}",
            DOCS.len() + 1,
            DOCS.len()
        )),
        "{stderr}"
    );
    // A file the server does not have: the URL and the status.
    std::fs::write(rally.join("track.json"), track(3, "missing.json")).unwrap();
    let out = env.run(&["race", "--track-path", rally.to_str().unwrap(), "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot download")
            && stderr.contains("/corpora/missing.json")
            && stderr.contains("404"),
        "{stderr}"
    );
    assert!(
        !env.home
            .path()
            .join("data/downloaded/missing.json")
            .exists()
            && !env
                .home
                .path()
                .join("data/downloaded/missing.json.part")
                .exists()
    );
}

/// The trial of a Rally bulk task of 20 one-document requests through a 20-document corpus,
/// with `task_keys` (JSON members) added to the task.
fn bulk_of_twenty(task_keys: &str) -> serde_json::Value {
    let docs: String = (0..20).map(|i| format!("{{\"n\":{i}}}\n")).collect();
    let track = format!(
        r#"{{"indices": [{{"name": "i"}}],
  "corpora": [{{"name": "c", "documents": [{{"source-file": "docs.json", "document-count": 20, "target-index": "i"}}]}}],
  "schedule": [{{"operation": "create-index"}},
    {{"operation": {{"name": "bulk", "operation-type": "bulk", "bulk-size": 1}}, {task_keys}}}]}}"#
    );
    let dir = track_dir(&[("track.json", &track), ("docs.json", &docs)]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    tasks(&env.only_race(), "bulk")[0]["trials"][0].clone()
}

/// Rally's `warmup-time-period` on a bulk task through its corpus: the requests of the first
/// seconds are warmup (here 0.5 s of a 1 s, 20-request bulk at 20 requests/s).
#[test]
fn warmup_time_on_a_bulk_task_takes_the_first_seconds_of_requests() {
    let trial = &bulk_of_twenty(r#""warmup-time-period": 0.5, "target-throughput": 20"#);
    let (warmup, measured) = (
        trial["warmup_operations"].as_u64().unwrap(),
        trial["operations"].as_u64().unwrap(),
    );
    assert_eq!(warmup + measured, 20, "{trial}");
    assert!(
        (5..=15).contains(&warmup),
        "about half the requests fall in the first 0.5 s: {trial}"
    );
    assert_eq!(
        trial["units"].as_u64().unwrap() + trial["warmup_units"].as_u64().unwrap(),
        20
    );
}

/// A task Rally leaves out of its report (an administrative operation) that fails is shown in
/// the summary and fails the exit code: it was hidden, and the race exited 0.
#[test]
fn a_failed_task_left_out_of_the_report_is_shown_and_fails_the_race() {
    let track = r#"{"indices": [{"name": "i"}],
  "operations": [{"name": "nap", "operation-type": "sleep", "duration": 0}],
  "schedule": [{"operation": {"operation-type": "refresh", "index": "nope"}},
    {"operation": "nap", "iterations": 3}]}"#;
    let dir = track_dir(&[("track.json", track)]);
    let env = Env::new();
    let out = env.run(&["race", "--track-path", dir.path().to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("failed outside the report: refresh")
            && stdout.contains("Failed outside the report"),
        "{stdout}"
    );
    let race = env.only_race();
    assert_eq!(race["status"], "completed");
    assert_eq!(tasks(&race, "nap")[0]["trials"][0]["successes"], 3);
    // The CSV report has its error rows too.
    let id = race["race_id"].as_str().unwrap();
    let csv = env.ok(&["show", id, "--report-format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.contains(",refresh,") && l.contains(",errors,1,")),
        "{csv}"
    );
}

/// `warmup-iterations` on a bulk task through its corpus: the first N requests of each client
/// are warmup, as in Rally (it was refused).
#[test]
fn warmup_iterations_on_a_bulk_task_are_its_first_requests() {
    let trial = &bulk_of_twenty(r#""clients": 2, "warmup-iterations": 3"#);
    // 3 per client × 2 clients = the first 6 of 20 one-document requests.
    assert_eq!(
        (
            trial["warmup_operations"].as_u64(),
            trial["operations"].as_u64(),
            trial["warmup_units"].as_u64(),
            trial["units"].as_u64()
        ),
        (Some(6), Some(14), Some(6), Some(14)),
        "{trial}"
    );
}

/// `completed-by`: when the named task of a parallel block ends, the others stop, complete
/// (not cut short), with what they measured kept.
#[test]
fn completed_by_ends_a_parallel_block_when_its_task_ends() {
    let track = r#"{"operations": [{"name": "nap", "operation-type": "sleep", "duration": 0.001}],
  "schedule": [{"parallel": {"completed-by": "short", "tasks": [
    {"name": "short", "operation": "nap", "iterations": 20},
    {"name": "long", "operation": "nap", "time-period": 60}]}}]}"#;
    let dir = track_dir(&[("track.json", track)]);
    let env = Env::new();
    let started = std::time::Instant::now();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "the 60 s task stopped with the short one"
    );
    let race = env.only_race();
    assert_eq!(race["status"], "completed");
    let long = &tasks(&race, "long")[0]["trials"][0];
    assert_eq!(long["interrupted"], false, "{long}");
    assert!(long["operations"].as_u64().unwrap() > 0, "{long}");
    assert_eq!(tasks(&race, "short")[0]["trials"][0]["operations"], 20);
    // A completed-by naming no task of the block is an error in a track of ours.
    let ours = track_dir(&[("track.yaml", "name: t\noperations: [{name: nap, type: sleep}]\nchallenges:\n  - name: c\n    schedule:\n      - parallel:\n          completed-by: shrot\n          tasks: [{name: short, operation: nap}]\n")]);
    let out = env.run(&[
        "race",
        "--track-path",
        ours.path().to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/challenges/0/schedule/0/parallel/completed-by")
            && stderr.contains("did you mean `short`"),
        "{stderr}"
    );
}

/// `ramp-up-time-period`: clients start one after another within the warmup, so the warmup
/// holds fewer operations (4 clients at 100 ops/s each, the last starting 0.3 s late: ~140 of
/// ~200) while the measured period holds them all.
#[test]
fn ramp_up_starts_clients_one_after_another_within_the_warmup() {
    let track = r#"{"operations": [{"name": "nap", "operation-type": "sleep", "duration": 0}],
  "schedule": [{"operation": "nap", "clients": 4, "target-throughput": 400, "ramp-up-time-period": 0.4, "warmup-time-period": 0.5, "time-period": 0.5}]}"#;
    let dir = track_dir(&[("track.json", track)]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    let t = &tasks(&race, "nap")[0]["trials"][0];
    let (warmup, measured) = (
        t["warmup_operations"].as_u64().unwrap(),
        t["operations"].as_u64().unwrap(),
    );
    assert!((100..=180).contains(&warmup), "{t}");
    assert!((180..=205).contains(&measured), "{t}");
    // Ours: a ramp-up needs a time warmup at least as long.
    let ours = track_dir(&[("track.yaml", "name: t\noperations: [{name: nap, type: sleep}]\nchallenges:\n  - name: c\n    schedule: [{operation: nap, clients: 2, time-period: 2s, ramp-up-time-period: 1s}]\n")]);
    let out = env.run(&[
        "race",
        "--track-path",
        ours.path().to_str().unwrap(),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("ramp-up-time-period") && stderr.contains("needs a time warmup"),
        "{stderr}"
    );
}

#[test]
fn test_mode_never_reads_a_huge_corpus_file_beside_the_track() {
    // The fixture with an 800 MB documents.json (sparse): test mode reads documents-1k.json
    // only, and looking for template variables skips data files past 16 MB unread.
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("rally-geonames");
    let status = std::process::Command::new("cp")
        .args(["-r", &fixture(), copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::File::create(copy.join("documents.json"))
        .unwrap()
        .set_len(800 << 20)
        .unwrap();
    let env = Env::new();
    let mut cmd = env.command(&[
        "race",
        "--track-path",
        copy.to_str().unwrap(),
        "--test-mode",
        "--quiet",
    ]);
    cmd.stderr(std::process::Stdio::null());
    let started = std::time::Instant::now();
    let (code, peak) = crate::memory::run_measuring_peak_rss(cmd);
    eprintln!(
        "rally test mode beside an 800 MB documents.json: exit {code}, {:?}, peak RSS {} MB",
        started.elapsed(),
        peak >> 20
    );
    assert_eq!(code, 0);
    assert!(peak < 256 << 20, "peak RSS {} MB", peak >> 20);
}

#[test]
fn what_the_backend_cannot_run_is_skipped_on_request_and_every_report_says_how_the_race_differs() {
    let track = r#"{
  "indices": [{"name": "i"}],
  "operations": [
    {"name": "plain", "operation-type": "search", "index": "i", "body": {"query": {"match_all": {}}}},
    {"name": "lit", "operation-type": "search", "index": "i", "body": {"query": {"match_all": {}}, "suggest": {"s": {"text": "x", "term": {"field": "x"}}}}},
    {"name": "custom", "operation-type": "my-custom-runner"}
  ],
  "schedule": [
    {"operation": {"name": "create", "operation-type": "create-index"}},
    {"operation": "plain", "iterations": 5},
    {"operation": "lit", "iterations": 5},
    {"operation": "custom"}
  ]
}"#;
    let dir = track_dir(&[("track.json", track)]);
    let path = dir.path().to_str().unwrap();
    let env = Env::new();
    // Without skip: refused before the race, naming the task and what the engine lacks.
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--on-unsupported",
        "fail",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--on-unsupported",
        "skip",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let race = env.only_race();
    assert_eq!(tasks(&race, "plain")[0]["trials"][0]["operations"], 5);
    // A skipped task is no row of empty numbers: the deviations name it.
    assert!(tasks(&race, "lit").is_empty(), "{race}");
    let deviations: Vec<&str> = race["deviations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(
        deviations
            .iter()
            .any(|d| d.contains("task `lit`") && d.contains("suggest") && d.contains("skipped")),
        "{deviations:?}"
    );
    assert!(
        deviations
            .iter()
            .any(|d| d.contains("task `custom` skipped")),
        "{deviations:?}"
    );
    // Every report shows them.
    let id = race["race_id"].as_str().unwrap();
    let markdown = env.ok(&["show", id]);
    assert!(
        markdown.contains("> this race differs from the track: operation `lit`"),
        "{markdown}"
    );
    let csv = env.ok(&["show", id, "--report-format", "csv"]);
    assert!(
        csv.lines()
            .any(|l| l.contains(",deviation,1,") && l.contains("suggest")),
        "{csv}"
    );
    let json = env.ok(&["show", id, "--report-format", "json"]);
    assert!(json.contains("\"deviations\""), "{json}");
    let charts = env.home.path().join("charts");
    env.ok(&["plot", id, "--out", charts.to_str().unwrap()]);
    let page = std::fs::read_to_string(charts.join("report.html")).unwrap();
    assert!(
        page.contains("this race differs from the track"),
        "the page shows them"
    );
}

#[test]
fn an_opensearch_benchmark_workload_runs_by_its_own_names() {
    let workload = r#"{% import "benchmark.helpers" as benchmark with context %}
{
  "version": 2,
  "operations": [{{ benchmark.collect(parts="operations/*.json") }}],
  "test_procedures": [{{ benchmark.collect(parts="test_procedures/*.json") }}]
}"#;
    let op = r#"{"name": "nap", "operation-type": "sleep", "duration": 0}"#;
    let procedure = r#"{"name": "naps", "default": true,
  "schedule": [{"operation": "nap", "iterations": {{ nap_iterations | default(3) }}}]}"#;
    let other = r#"{"name": "other", "schedule": [{"operation": "nap", "iterations": 2}]}"#;
    let dir = track_dir(&[
        ("workload.json", workload),
        ("operations/default.json", op),
        ("test_procedures/default.json", procedure),
        ("test_procedures/other.json", other),
        ("workload.py", "def register(registry): pass\n"),
    ]);
    let path = dir.path().to_str().unwrap();
    let env = Env::new();
    env.ok(&[
        "race",
        "--workload-path",
        path,
        "--workload-params",
        "nap_iterations:7",
        "--quiet",
    ]);
    let race = env.only_race();
    assert_eq!(race["challenge"], "naps");
    assert_eq!(tasks(&race, "nap")[0]["trials"][0]["operations"], 7);
    // Its workload.py runs, as OSB's loader runs it, and the race says so.
    let deviations = race["deviations"].to_string();
    assert!(
        deviations.contains("workload.py runs on Python")
            && deviations.contains("it registers nothing"),
        "{deviations}"
    );
    let env = Env::new();
    env.ok(&[
        "race",
        "--workload-path",
        path,
        "--test-procedure",
        "other",
        "--quiet",
    ]);
    assert_eq!(
        tasks(&env.only_race(), "nap")[0]["trials"][0]["operations"],
        2
    );
}

/// Rally's bulk over every corpus of a track, and a corpus whose files target different
/// indices (http_logs, nyc_taxis): each document reaches its own index, in one bulk task.
#[test]
fn a_bulk_indexes_several_corpora_and_several_target_indices() {
    let docs = |n: usize, tag: &str| -> String {
        (0..n)
            .map(|i| format!("{{\"n\": {i}, \"tag\": \"{tag}\"}}\n"))
            .collect()
    };
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "logs-a"}, {"name": "logs-b"}, {"name": "taxis"}],
  "corpora": [
    {"name": "logs", "documents": [
      {"source-file": "a.json", "document-count": 30, "target-index": "logs-a"},
      {"source-file": "b.json", "document-count": 20, "target-index": "logs-b"}
    ]},
    {"name": "taxis", "documents": [{"source-file": "t.json", "document-count": 7, "target-index": "taxis"}]}
  ],
  "schedule": [
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"operation-type": "bulk", "bulk-size": 8}, "clients": 2},
    {"operation": {"operation-type": "refresh"}}
  ]
}"#,
        ),
        ("a.json", &docs(30, "a")),
        ("b.json", &docs(20, "b")),
        ("t.json", &docs(7, "t")),
    ]);
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &crate::elasticsearch::url(server.port),
        "--quiet",
    ]);
    for (index, want) in [("logs-a", 30), ("logs-b", 20), ("taxis", 7)] {
        let body = http_body(server.port, "GET", &format!("/{index}/_count"), "");
        let v: serde_json::Value = serde_json::from_str(&body).expect(&body);
        assert_eq!(v["count"], want, "{index}: {body}");
    }
    // The same track in-process: 57 documents indexed in one task, none failed.
    let embedded = Env::new();
    embedded.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = embedded.only_race();
    let bulk = tasks(&race, "bulk")[0];
    assert_eq!(bulk["trials"][0]["units"], 57, "{bulk}");
    assert_eq!(bulk["trials"][0]["errors"], 0, "{bulk}");
}

/// Documents for a data stream (Rally's `target-data-stream`) are sent as `create` actions,
/// the only kind a data stream takes.
#[test]
fn documents_for_a_data_stream_are_created() {
    use std::sync::{Arc, Mutex};
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "data-streams": [{"name": "logs-app"}],
  "corpora": [{"name": "logs", "documents": [
    {"source-file": "logs.json", "document-count": 5, "target-data-stream": "logs-app"}
  ]}],
  "schedule": [{"operation": {"operation-type": "bulk", "bulk-size": 2}}]
}"#,
        ),
        (
            "logs.json",
            "{\"m\": 1}\n{\"m\": 2}\n{\"m\": 3}\n{\"m\": 4}\n{\"m\": 5}\n",
        ),
    ]);
    let seen: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let kept = seen.clone();
    let port = json_server(move |line, body| {
        if line.contains("_bulk") {
            let body = String::from_utf8(body).unwrap();
            let items = body.lines().count() / 2;
            kept.lock().unwrap().push((line.to_string(), body));
            let item = r#"{"create":{"_index":"logs-app","status":201}}"#;
            format!(
                r#"{{"errors":false,"items":[{}]}}"#,
                vec![item; items].join(",")
            )
        } else {
            r#"{"version":{"number":"8.15.0"}}"#.to_string()
        }
    });
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &format!("http://127.0.0.1:{port}"),
        "--quiet",
    ]);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3, "{seen:?}");
    let mut docs = 0;
    for (line, body) in seen.iter() {
        // As Rally's client sends it: PUT /_bulk, each action line naming the data stream.
        assert!(line.starts_with("PUT /_bulk"), "{line}");
        for (i, l) in body.lines().enumerate() {
            if i % 2 == 0 {
                assert_eq!(l, r#"{"create": {"_index": "logs-app"}}"#);
            } else {
                docs += 1;
            }
        }
    }
    assert_eq!(docs, 5);
}

/// A data stream whose template a skipped track.py task would make is skipped as well, naming
/// that task, rather than run to fail on every backend.
#[test]
fn a_data_stream_after_its_skipped_template_task_is_skipped_naming_it() {
    let track = r#"{"data-streams": [{"name": "logs-a"}],
  "operations": [
    {"name": "templates", "operation-type": "create-composable-template", "param-source": "template-source"},
    {"name": "streams", "operation-type": "create-data-stream"},
    {"name": "nap", "operation-type": "sleep", "duration": 0}],
  "schedule": [{"operation": "templates"}, {"operation": "streams"}, {"operation": "nap", "iterations": 2}]}"#;
    let dir = track_dir(&[("track.json", track)]);
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--on-unsupported",
        "skip",
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let race = env.only_race();
    let deviations = race["deviations"].to_string();
    assert!(
        deviations.contains("task `streams` skipped")
            && deviations.contains("would come from the skipped task `templates`"),
        "{deviations}"
    );
    assert_eq!(tasks(&race, "nap")[0]["trials"][0]["successes"], 2);
}

/// A Rally track's ingest pipeline (put-pipeline, then a bulk with `pipeline`) runs on the
/// embedded engine and through `runner serve`: the pipeline's processors change every document,
/// and a document one cannot process fails alone.
#[test]
fn a_bulk_pipeline_processes_every_document_on_both_backends() {
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "logs", "body": "index.json"}],
  "corpora": [{"name": "logs", "documents": [{"source-file": "logs.json", "document-count": 5, "target-index": "logs"}]}],
  "schedule": [
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"operation-type": "delete-pipeline", "id": "prep"}},
    {"operation": {"operation-type": "put-pipeline", "id": "prep", "body": {"processors": [
      {"convert": {"field": "n", "type": "integer"}},
      {"fingerprint": {"fields": ["host"], "target_field": "_id", "method": "MurmurHash3"}},
      {"set": {"field": "seen", "value": "{% raw %}{{{host}}}-{{{n}}}{% endraw %}"}}
    ]}}},
    {"operation": {"operation-type": "bulk", "bulk-size": 5, "pipeline": "prep"}},
    {"operation": {"operation-type": "refresh"}}
  ]
}"#,
        ),
        (
            "index.json",
            r#"{"mappings": {"properties": {"n": {"type": "integer"}, "host": {"type": "keyword"}, "seen": {"type": "keyword"}}}}"#,
        ),
        (
            "logs.json",
            "{\"n\": \"1\", \"host\": \"a\"}\n{\"n\": \"2\", \"host\": \"b\"}\n{\"n\": \"3\"}\n{\"n\": \"4\", \"host\": \"a\"}\n{\"n\": \"5\", \"host\": \"d\"}\n",
        ),
    ]);
    let track = dir.path().to_str().unwrap();
    let bulk_of = |env: &Env| {
        let race = env.only_race();
        let bulk = tasks(&race, "bulk")[0]["trials"][0].clone();
        (bulk["units"].as_u64(), bulk["errors"].as_u64())
    };
    // Embedded: the document without a `host` fails the fingerprint (and only it, as nothing
    // else would refuse it); the other four are indexed.
    let embedded = Env::new();
    embedded.ok(&["race", "--track-path", track, "--quiet"]);
    assert_eq!(bulk_of(&embedded), (Some(4), Some(1)));
    // Through runner serve, the same; then the index holds what the pipeline made of them:
    // host `a` twice under one fingerprint id, so three documents.
    let (env, server) = crate::elasticsearch::race_through_serve(track, &[]);
    assert_eq!(bulk_of(&env), (Some(4), Some(1)));
    let body = http_body(
        server.port,
        "POST",
        "/logs/_search",
        r#"{"sort": ["n"], "size": 10}"#,
    );
    let found: serde_json::Value = serde_json::from_str(&body).unwrap();
    let hits: Vec<(String, serde_json::Value)> = found["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["_source"]["seen"].as_str().unwrap_or("").to_string(),
                h["_source"]["n"].clone(),
            )
        })
        .collect();
    assert_eq!(
        hits,
        vec![
            ("b-2".to_string(), serde_json::json!(2)),
            ("a-4".to_string(), serde_json::json!(4)),
            ("d-5".to_string(), serde_json::json!(5)),
        ],
        "{body}"
    );
    let ids: std::collections::BTreeSet<&str> = found["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap())
        .collect();
    assert!(ids.iter().all(|id| id.len() == 24), "{ids:?}");
}

/// On the embedded engine, which starts empty, a search of an index no task that runs makes
/// (here one a skipped track.py task would have made) is skipped with `--on-unsupported skip`,
/// named, instead of failing every call; searches of indices that are made still run.
#[test]
fn a_search_of_an_index_nothing_makes_is_skipped_on_the_fresh_engine() {
    let dir = track_dir(&[(
        "track.json",
        r#"{
  "version": 2,
  "indices": [{"name": "made"}],
  "schedule": [
    {"operation": {"operation-type": "create-index"}},
    {"name": "make-other", "operation": {"operation-type": "downsample", "param-source": "my-source"}},
    {"name": "read-made", "operation": {"operation-type": "search", "index": "made"}},
    {"name": "read-other", "operation": {"operation-type": "search", "index": "made-by-the-skipped-task"}}
  ]
}"#,
    )]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--on-unsupported",
        "skip",
    ]);
    let race = env.only_race();
    assert_eq!(
        tasks(&race, "read-made")[0]["trials"][0]["errors"],
        0,
        "{race}"
    );
    assert!(tasks(&race, "read-other").is_empty());
    let deviations = race["deviations"].to_string();
    assert!(
        deviations.contains("read-other")
            && deviations
                .contains("no task that runs before it makes index `made-by-the-skipped-task`"),
        "{deviations}"
    );
}

/// Rally's `wait-for-*` operations poll: the snapshot status is asked again until it says
/// SUCCESS (one task, no error), a FAILED snapshot fails the task, and wait-for-recovery runs
/// on the embedded engine and through `runner serve`.
#[test]
fn wait_for_operations_poll_until_the_answer_says_done() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let track = |snapshot: &str| {
        format!(
            r#"{{"version": 2, "indices": [{{"name": "i"}}], "schedule": [
  {{"operation": {{"operation-type": "create-index"}}}},
  {{"name": "recovered", "operation": {{"operation-type": "wait-for-recovery", "index": "i", "completion-recheck-wait-period": 0.01}}}},
  {{"name": "snapshot", "include-in-reporting": true, "operation": {{"operation-type": "wait-for-snapshot-create", "repository": "r", "snapshot": "{snapshot}", "completion-recheck-wait-period": 0.01}}}}
]}}"#
        )
    };
    for (snapshot, errors) in [("good", 0), ("bad", 1)] {
        let dir = track_dir(&[("track.json", &track(snapshot))]);
        let asked = Arc::new(AtomicUsize::new(0));
        let count = asked.clone();
        let port = json_server(move |line, _| {
            if line.contains("/_status") {
                let n = count.fetch_add(1, Ordering::SeqCst);
                let state = match (line.contains("/good/"), n) {
                    (_, 0 | 1) => "IN_PROGRESS",
                    (true, _) => "SUCCESS",
                    (false, _) => "FAILED",
                };
                format!(r#"{{"snapshots": [{{"state": "{state}"}}]}}"#)
            } else if line.contains("_recovery") {
                r#"{"i": {"shards": [{"stage": "DONE"}]}}"#.to_string()
            } else {
                r#"{"version":{"number":"8.15.0"},"acknowledged":true}"#.to_string()
            }
        });
        let env = Env::new();
        env.run(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &format!("http://127.0.0.1:{port}"),
        ]);
        let race = env.only_race();
        let trial = &tasks(&race, "snapshot")[0]["trials"][0];
        assert_eq!(trial["errors"], errors, "{trial}");
        assert_eq!(
            asked.load(Ordering::SeqCst),
            3,
            "{snapshot}: three status requests"
        );
    }
    // On the engine, whose one shard per index is recovered when made.
    let dir = track_dir(&[(
        "track.json",
        r#"{"version": 2, "indices": [{"name": "i"}], "schedule": [
  {"operation": {"operation-type": "create-index"}},
  {"name": "recovered", "include-in-reporting": true, "operation": {"operation-type": "wait-for-recovery", "index": "i"}}
]}"#,
    )]);
    let embedded = Env::new();
    embedded.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = embedded.only_race();
    assert_eq!(
        tasks(&race, "recovered")[0]["trials"][0]["errors"],
        0,
        "{race}"
    );
    let (env, _server) =
        crate::elasticsearch::race_through_serve(dir.path().to_str().unwrap(), &[]);
    let race = env.only_race();
    assert_eq!(
        tasks(&race, "recovered")[0]["trials"][0]["errors"],
        0,
        "{race}"
    );
}

/// A filtered alias made by a raw `POST /_aliases` is searched through on both backends, its
/// filter applied (a track's search of the alias is not mistaken for one of nothing).
#[test]
fn a_filtered_alias_is_searched_through_on_both_backends() {
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "logs", "body": "index.json"}],
  "corpora": [{"name": "logs", "documents": [{"source-file": "logs.json", "document-count": 4, "target-index": "logs"}]}],
  "schedule": [
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"operation-type": "bulk", "bulk-size": 4}},
    {"operation": {"operation-type": "refresh"}},
    {"operation": {"operation-type": "raw-request", "method": "POST", "path": "/_aliases", "body": {"actions": [
      {"add": {"index": "logs", "alias": "errors", "filter": {"term": {"level": "error"}}}}]}}},
    {"name": "through-alias", "operation": {"operation-type": "search", "index": "errors", "body": {"query": {"match_all": {}}}}}
  ]
}"#,
        ),
        (
            "index.json",
            r#"{"mappings": {"properties": {"level": {"type": "keyword"}}}}"#,
        ),
        (
            "logs.json",
            "{\"level\": \"error\"}\n{\"level\": \"info\"}\n{\"level\": \"error\"}\n{\"level\": \"info\"}\n",
        ),
    ]);
    let track = dir.path().to_str().unwrap();
    let hits = |env: &Env| {
        let race = env.only_race();
        let t = tasks(&race, "through-alias");
        assert_eq!(t.len(), 1, "{race}");
        (
            t[0]["trials"][0]["errors"].as_u64(),
            t[0]["trials"][0]["hits"].clone(),
        )
    };
    let embedded = Env::new();
    embedded.ok(&[
        "race",
        "--track-path",
        track,
        "--quiet",
        "--on-unsupported",
        "skip",
    ]);
    let (env, server) = crate::elasticsearch::race_through_serve(track, &[]);
    for env in [&embedded, &env] {
        assert_eq!(hits(env).0, Some(0));
    }
    let body = http_body(server.port, "POST", "/errors/_count", "");
    assert!(body.contains("\"count\":2"), "{body}");
}

/// What a Rally track's bulks index, as Rally decides it: `indices` keeps the corpus documents
/// that target them, a data stream's documents are created, and an operation only another
/// challenge uses may name a corpus the track lacks.
#[test]
fn bulks_index_what_rally_would_across_indices_and_data_streams() {
    let lines = |n: usize, field: &str| -> String {
        (0..n)
            .map(|i| format!("{{\"{field}\": \"2024-01-01T00:00:{i:02}Z\", \"n\": {i}}}\n"))
            .collect()
    };
    let track = serde_json::json!({
        "version": 2,
        "indices": [{"name": "idx-a"}, {"name": "idx-b"}],
        "corpora": [
            {"name": "two", "documents": [
                {"source-file": "a.json", "document-count": 10, "target-index": "idx-a"},
                {"source-file": "b.json", "document-count": 7, "target-index": "idx-b"}]},
            {"name": "logs", "target-data-stream": "logs-x", "documents": [
                {"source-file": "ds.json", "document-count": 5}]}],
        "composable-templates": [{"name": "logs-x", "index-pattern": "logs-x*", "template": "tmpl.json"}],
        "operations": [
            {"name": "index-both", "operation-type": "bulk", "bulk-size": 4, "corpora": "two", "indices": ["idx-a", "idx-b"]},
            {"name": "index-b", "operation-type": "bulk", "bulk-size": 4, "corpora": "two", "indices": ["idx-b"]},
            {"name": "index-logs", "operation-type": "bulk", "bulk-size": 2, "corpora": "logs"},
            {"name": "index-elsewhere", "operation-type": "bulk", "corpora": "only-with-other-params"}],
        "challenges": [
            {"name": "main", "default": true, "schedule": [
                {"operation": {"operation-type": "delete-index"}},
                {"operation": {"operation-type": "create-index"}},
                {"operation": {"operation-type": "create-composable-template"}},
                {"operation": {"operation-type": "create-data-stream", "data-stream": "logs-x"}},
                {"operation": "index-both"},
                {"operation": "index-b"},
                {"operation": "index-logs"},
                {"operation": {"operation-type": "refresh", "index": "_all"}},
                {"operation": {"name": "count-b", "operation-type": "search", "index": "idx-b", "body": {"query": {"match_all": {}}}}},
                {"operation": {"name": "count-logs", "operation-type": "search", "index": "logs-x", "body": {"query": {"match_all": {}}}}}]},
            {"name": "other", "schedule": [{"operation": "index-elsewhere"}]}]
    });
    let template = r#"{"index_patterns": ["logs-x*"], "data_stream": {}, "template": {"mappings": {"properties": {"@timestamp": {"type": "date"}}}}}"#;
    let dir = track_dir(&[
        ("track.json", &track.to_string()),
        ("a.json", &lines(10, "at")),
        ("b.json", &lines(7, "at")),
        ("ds.json", &lines(5, "@timestamp")),
        ("tmpl.json", template),
    ]);
    let env = Env::new();
    let path = dir.path().to_str().unwrap();
    // Rally's loader refuses a corpus for a data stream the track does not declare beside
    // declared indices (esrally 2.13: "Mandatory element 'target-index' is missing in
    // 'ds.json'"); it refuses declared data streams beside indices as well.
    let out = env.run(&["race", "--track-path", path, "--quiet"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("Mandatory element 'target-index' is missing in 'ds.json'"),
        "{stderr}"
    );
    // The data stream's documents in a track of their own; the indices' in the first.
    let streams_only = serde_json::json!({
        "version": 2,
        "data-streams": [{"name": "logs-x"}],
        "corpora": [track["corpora"][1].clone()],
        "composable-templates": track["composable-templates"].clone(),
        "schedule": [
            {"operation": {"operation-type": "create-composable-template"}},
            {"operation": {"operation-type": "create-data-stream"}},
            {"operation": {"name": "index-logs", "operation-type": "bulk", "bulk-size": 2}},
            {"operation": {"operation-type": "refresh"}},
            {"operation": {"name": "count-logs", "operation-type": "search", "index": "logs-x", "body": {"query": {"match_all": {}}}}}]
    });
    let streams = track_dir(&[
        ("track.json", &streams_only.to_string()),
        ("ds.json", &lines(5, "@timestamp")),
        ("tmpl.json", template),
    ]);
    let logs = env.ok(&[
        "race",
        "--track-path",
        streams.path().to_str().unwrap(),
        "--quiet",
        "--report-format",
        "json",
    ]);
    let logs: serde_json::Value =
        serde_json::from_str(&logs[..logs.rfind('}').unwrap() + 1]).expect(&logs);
    let mut indices_only = track.clone();
    indices_only["corpora"].as_array_mut().unwrap().truncate(1);
    let ops = indices_only["operations"].as_array_mut().unwrap();
    ops.retain(|o| o["name"] != "index-logs");
    let main = indices_only["challenges"][0]["schedule"]
        .as_array_mut()
        .unwrap();
    main.retain(|t| {
        let op = t["operation"].to_string();
        !op.contains("logs") && !op.contains("data-stream") && !op.contains("composable")
    });
    std::fs::write(dir.path().join("track.json"), indices_only.to_string()).unwrap();
    let out = env.ok(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--report-format",
        "json",
    ]);
    let report: serde_json::Value =
        serde_json::from_str(&out[..out.rfind('}').unwrap() + 1]).expect(&out);
    let logs_task = |name: &str| {
        logs["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == name)
            .unwrap_or_else(|| panic!("no task {name}: {logs}"))
            .clone()
    };
    assert_eq!(logs_task("index-logs")["units"], 5, "{logs}");
    assert_eq!(logs_task("count-logs")["hits"], 5, "{logs}");
    let task = |name: &str| {
        report["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == name)
            .unwrap_or_else(|| panic!("no task {name}: {report}"))
            .clone()
    };
    for (name, units) in [("index-both", 17), ("index-b", 7)] {
        let t = task(name);
        assert_eq!(
            (t["units"].as_u64(), t["errors"].as_u64()),
            (Some(units), Some(0)),
            "{name}: {t}"
        );
    }
    assert_eq!(task("count-b")["hits"], 14);
    // The challenge that uses the operation fails on it, before the race.
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--challenge",
        "other",
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("/operations/2/corpora")
            && stderr.contains("`only-with-other-params`, none of which the track declares"),
        "{stderr}"
    );
}
