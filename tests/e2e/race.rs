use crate::util::*;
use serde_json::Value;

#[test]
fn geonames_test_mode_stores_a_consistent_race() {
    let env = Env::new();
    let out = env.ok(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--report-format",
        "json",
    ]);
    let report: Value = serde_json::from_str(&out).expect("json report on stdout");
    let race = env.only_race();
    assert_eq!(race["status"], "completed");
    assert_eq!(race["format"], 2);
    assert_eq!(race["challenge"], "client-benchmark");
    assert_eq!(report["race"]["race_id"], race["race_id"]);

    let bulk = tasks(&race, "index-append");
    assert_eq!(bulk.len(), 3, "three bulk sizes");
    for (t, size) in bulk.iter().zip([500, 5000, 50000]) {
        assert_eq!(t["sweep"]["bulk-size"], size);
        assert_eq!(t["throughput_unit"], "docs/s");
        let trials = t["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 3);
        for tr in trials {
            // Every document of the test-mode corpus is indexed: measured plus warmup.
            let indexed = tr["units"].as_u64().unwrap() + tr["warmup_units"].as_u64().unwrap();
            assert_eq!(indexed, 1000, "bulk-size {size}: {tr}");
            assert_eq!(tr["errors"], 0);
            assert!(tr["throughput"].as_f64().unwrap() > 0.0);
        }
    }
    // 40% of the requests are warmup: 1,000 docs at bulk-size 500 is 2 requests, floor(0.8) = 0.
    assert_eq!(bulk[0]["trials"][0]["warmup_operations"], 0);

    let search = tasks(&race, "search-sankt-georgen");
    assert_eq!(search.len(), 4, "four target throughputs");
    for (t, target) in search.iter().zip([100.0, 1000.0, 10000.0, 100000.0]) {
        assert_eq!(t["target_throughput"].as_f64(), Some(target));
        let trials = t["trials"].as_array().unwrap();
        assert_eq!(trials.len(), 5);
        for tr in trials {
            assert_eq!(tr["operations"], 20);
            assert_eq!(tr["warmup_operations"], 5);
            // 17 places are named "Sankt Georgen ..." in the test corpus.
            assert_eq!(tr["hits"].as_u64().unwrap(), 20 * 17);
            let svc = &tr["service_time_ms"];
            let lat = &tr["latency_ms"];
            assert!(svc["p50"].as_f64().unwrap() > 0.0);
            assert!(lat["p100"].as_f64().unwrap() >= svc["p50"].as_f64().unwrap());
            assert_eq!(svc["count"], 20);
        }
    }
    let dir = &env.race_dirs()[0];
    let hist = read_json(&dir.join("histograms.json"));
    assert_eq!(hist["trials"].as_array().unwrap().len(), 3 * 3 + 1 + 4 * 5);

    let id = race["race_id"].as_str().unwrap();
    let listed = env.ok(&["list", "races"]);
    assert!(
        listed.contains(id) && listed.contains("completed"),
        "{listed}"
    );
    let shown = env.ok(&["show", &id[..12]]);
    assert!(
        shown.contains("## Throughput")
            && shown.contains("search-sankt-georgen")
            && shown.contains("bulk-size=50000"),
        "{shown}"
    );
    assert!(shown.contains("| p50 | p90 | p95 | p99 | p99.9 | p99.99 | p100 |"));
}

#[test]
fn csv_has_one_row_per_trial_and_metric() {
    let env = Env::new();
    let track = repo().join("examples/parallel-search");
    let report = env.home.path().join("report.csv");
    let out = env.ok(&[
        "race",
        "--track-path",
        track.to_str().unwrap(),
        "--quiet",
        "--report-format",
        "csv",
        "--report-file",
        report.to_str().unwrap(),
    ]);
    assert_eq!(std::fs::read_to_string(&report).unwrap(), out);
    let mut rdr = csv::Reader::from_reader(out.as_bytes());
    let header: Vec<String> = rdr.headers().unwrap().iter().map(str::to_string).collect();
    assert_eq!(&header[9..], ["trial", "metric", "value", "unit"]);
    let rows: Vec<csv::StringRecord> = rdr.records().map(Result::unwrap).collect();
    let by_name: Vec<&csv::StringRecord> = rows.iter().filter(|r| &r[3] == "by-name").collect();
    assert!(by_name
        .iter()
        .any(|r| &r[9] == "1" && &r[10] == "throughput" && &r[12] == "ops/s"));
    // 200 samples: p99 is supported, p99.9 (1,000) is not, so it has no row.
    assert!(by_name
        .iter()
        .any(|r| &r[9] == "all" && &r[10] == "service_time_p99"));
    assert!(!by_name.iter().any(|r| &r[10] == "service_time_p99.9"));
    let hits: f64 = by_name
        .iter()
        .find(|r| &r[9] == "1" && &r[10] == "hits")
        .unwrap()[11]
        .parse()
        .unwrap();
    assert_eq!(hits, 200.0 * 3.0, "three cities match `sankt`");
    // Each (task, trial, metric) appears once.
    let mut keys: Vec<String> = rows
        .iter()
        .map(|r| format!("{}|{}|{}|{}", &r[3], &r[6], &r[9], &r[10]))
        .collect();
    let n = keys.len();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), n);
}

#[test]
fn plan_prints_the_graph_as_text_and_json() {
    let env = Env::new();
    let text = env.ok(&["plan", "--track", "geonames"]);
    assert!(
        text.contains("39 steps, 30 runs, 8 task × sweep points"),
        "{text}"
    );
    assert!(text
        .contains("reset before index-append [bulk-size=500] trial 1: delete-index, create-index"));
    let json: Value =
        serde_json::from_str(&env.ok(&["plan", "--track", "geonames", "--report-format", "json"]))
            .unwrap();
    assert_eq!(json["results"].as_array().unwrap().len(), 8);
    let runs = json["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["step"] == "run")
        .count();
    assert_eq!(runs, 30);
    let quick = env.ok(&[
        "plan",
        "--track",
        "geonames",
        "--challenge",
        "quick",
        "--track-params",
        "bulk_clients=2",
    ]);
    assert!(quick.contains("parallel:"), "{quick}");
}

#[test]
fn key_value_sweeps_clients_and_pipelines() {
    let env = Env::new();
    let track = repo().join("examples/key-value");
    env.ok(&[
        "race",
        "--track-path",
        track.to_str().unwrap(),
        "--quiet",
        "--track-params",
        "iterations=1000,clients=[1,3]",
        "--user-tag",
        "purpose:test",
    ]);
    let race = env.only_race();
    assert_eq!(race["user_tags"]["purpose"], "test");
    let puts = tasks(&race, "put-16b");
    assert_eq!(
        puts.iter()
            .map(|t| t["clients"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 3]
    );
    for t in puts {
        // 1,000 iterations split across clients, 10% of them warmup.
        assert_eq!(t["trials"][0]["operations"], 900);
        assert_eq!(t["trials"][0]["warmup_operations"], 100);
    }
    let gets = tasks(&race, "get-16b");
    assert!(
        gets[0]["trials"][0]["hits"].as_u64().unwrap() > 0,
        "gets find keys the puts wrote"
    );
    let pipelined = tasks(&race, "put-pipelined");
    assert_eq!(pipelined.len(), 2);
    assert_eq!(pipelined[1]["sweep"]["pipeline"], 10);
    // Each operation of a 10-deep pipeline is 10 requests.
    let t = &pipelined[1]["trials"][0];
    assert_eq!(
        t["requests"].as_u64().unwrap(),
        10 * t["operations"].as_u64().unwrap()
    );
}

#[test]
fn on_error_continue_counts_and_abort_stops() {
    let files = [(
        "track.yaml",
        "name: broken
indices: [{name: missing}]
operations:
  - {name: s, type: search, params: {index: missing}}
  - {name: nap, type: sleep}
challenges:
  - name: c
    schedule:
      - {operation: s, iterations: 50}
      - {operation: nap, iterations: 3}
",
    )];
    let dir = track_dir(&files);
    let path = dir.path().to_str().unwrap();
    let env = Env::new();
    env.ok(&["race", "--track-path", path, "--quiet"]);
    let race = env.only_race();
    let s = &tasks(&race, "s")[0]["trials"][0];
    assert_eq!(s["errors"], 50);
    assert_eq!(s["errors_by_kind"]["not-found"], 50);
    assert_eq!(s["error_rate"], 1.0);
    assert!(s["error_messages"]["not-found"]
        .as_str()
        .unwrap()
        .contains("missing"));

    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--on-error",
        "abort",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("race stopped early") && stderr.contains("no such index `missing`"),
        "{stderr}"
    );
    let race = env.only_race();
    assert_eq!(race["status"], "aborted");
    assert!(
        tasks(&race, "nap")[0]["trials"]
            .as_array()
            .unwrap()
            .is_empty(),
        "nothing runs after the abort"
    );
    assert_eq!(tasks(&race, "s")[0]["trials"][0]["errors"], 1);
}

#[test]
fn validate_accepts_every_shipped_track() {
    let env = Env::new();
    for t in [
        "geonames",
        "client-bench",
        "bulk-indexer",
        "redis-kv",
        "kv-mix",
        "examples/key-value",
        "examples/driver-overhead",
        "examples/parallel-search",
    ] {
        let out = env.ok(&["validate", t]);
        assert!(out.contains(": ok: track"), "{out}");
    }
    let tracks = env.ok(&["list", "tracks"]);
    for name in ["geonames", "redis-kv", "kv-mix"] {
        assert!(tracks.contains(name), "{tracks}");
    }
}

#[test]
fn the_runner_reports_its_own_cpu_and_memory_per_trial() {
    // Pinned to one core: the stored usage says so, whatever the machine has.
    let dir = track_dir(&[(
        "track.yaml",
        "name: t
operations: [{name: nap, type: sleep, params: {duration: 0s}}]
challenges: [{name: c, schedule: [{name: spin, operation: nap, clients: 4, time-period: 1s}]}]
",
    )]);
    let env = Env::new();
    let out = std::process::Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_runner"), "--results-dir"])
        .arg(env.home.path())
        .args([
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    let driver = &race["tasks"][0]["trials"][0]["driver"];
    assert_eq!(driver["cores_available"], 1, "{driver}");
    assert!(driver["cpu_cores"].as_f64().unwrap() > 0.0, "{driver}");
    assert!(
        driver["peak_rss_bytes"].as_u64().unwrap() > 1 << 20,
        "{driver}"
    );
    assert!(
        driver["rss_per_second"].is_array() && driver["cpu_per_second"].is_array(),
        "{driver}"
    );
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(report.contains("## Runner (this process"), "{report}");
}

#[test]
fn each_trial_stores_what_the_server_did() {
    // runner serve reports its own CPU in _nodes/stats, as Elasticsearch does.
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let out = env.run(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &crate::elasticsearch::url(server.port),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    let trial = &race["tasks"][0]["trials"][0];
    assert!(
        trial["server"]["deltas"]["cpu_ms"].as_f64().is_some(),
        "{trial}"
    );
    assert!(
        trial["server"]["seconds"].as_f64().unwrap() > 0.0,
        "{trial}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("## Server (its own statistics"));
    let Some((_own, host)) = crate::redis::shared_server() else {
        return;
    };
    let dir = track_dir(&[(
        "track.yaml",
        "name: t
operations: [{name: g, type: get, params: {keyspace: 100}}]
challenges: [{name: c, schedule: [{name: g, operation: g, clients: 2, iterations: 500}]}]
",
    )]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "redis",
        "--target-hosts",
        &host,
    ]);
    let race = env.only_race();
    let server = &race["tasks"][0]["trials"][0]["server"];
    // 500 GETs, and the INFO that read the counters the first time.
    assert!(
        server["deltas"]["commands"].as_f64().unwrap() >= 500.0,
        "{server}"
    );
    assert!(server["deltas"]["cpu_ms"].as_f64().is_some(), "{server}");
    assert!(
        server["gauges"]["used_memory_bytes"].as_f64().unwrap() > 0.0,
        "{server}"
    );
}

#[test]
fn the_engine_keeps_indices_on_disk_under_the_results_home_and_removes_them() {
    let track = "name: disk
corpora: [{name: c, target-index: i, documents: [{generate: small, document-count: 2000}]}]
indices: [{name: i}]
operations:
  - {name: create, type: create-index}
  - {name: bulk, type: bulk, params: {bulk-size: 100}}
  - {name: refresh, type: refresh}
  - {name: all, type: search, params: {index: i, body: {query: {match_all: {}}}}}
challenges:
  - name: c
    schedule: [{operation: create}, {operation: bulk}, {operation: refresh}, {operation: all, iterations: 5}]
";
    for storage in ["disk", "ram"] {
        let dir = crate::util::track_dir(&[("track.yaml", track)]);
        let env = Env::new();
        // A directory a killed runner left behind is cleared by the next one.
        let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .unwrap()
            .trim()
            .replace(|c: char| !(c.is_ascii_alphanumeric() || c == '-'), "_");
        let stale_engine = env.home.path().join(format!("engine/{host}.4000000000-0"));
        let stale = stale_engine.join("0-i");
        std::fs::create_dir_all(&stale).unwrap();
        env.ok(&[
            "race",
            "--quiet",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--engine-storage",
            storage,
        ]);
        let race = env.only_race();
        assert_eq!(race["backend"]["details"]["storage"], storage);
        let all = &tasks(&race, "all")[0]["trials"][0];
        assert_eq!(
            (all["hits"].as_u64(), all["errors"].as_u64()),
            (Some(5 * 2000), Some(0))
        );
        // On disk, the engine's directory replaces what a dead runner left.
        assert_eq!(stale.exists(), storage == "ram", "{storage}");
        let _ = std::fs::remove_dir_all(&stale_engine);
        // Nothing is left once the race ends.
        let left: Vec<_> = std::fs::read_dir(env.home.path().join("engine"))
            .map(|d| d.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "{storage}: {left:?}");
    }
}
