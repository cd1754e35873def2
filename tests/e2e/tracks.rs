//! The benchmark tracks that reproduce published reports: client-bench (on the geonames corpus
//! borrowed with `from-track`) and bulk-indexer (generated datasets, warmup runs), each through
//! the embedded backend and through `runner serve` over HTTP.

use crate::elasticsearch::{serve, url};
use crate::util::*;
use std::io::{Read, Write};

/// Sends `method path` (no body) to a loopback server and returns the response body.
fn http(port: u16, method: &str, path: &str) -> String {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(s, "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_string())
        .unwrap_or_default()
}

#[test]
fn client_bench_runs_on_the_borrowed_geonames_corpus_alike_in_process_and_over_http() {
    let embedded = Env::new();
    embedded.ok(&["race", "--track", "client-bench", "--test-mode", "--quiet"]);
    let over_http = Env::new();
    let server = serve(&over_http, &[]);
    over_http.ok(&[
        "race",
        "--track",
        "client-bench",
        "--test-mode",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    for race in [embedded.only_race(), over_http.only_race()] {
        assert_eq!(race["status"], "completed", "{race}");
        let bulk = tasks(&race, "bulk");
        assert_eq!(
            bulk.iter()
                .map(|t| t["sweep"]["bulk-size"].as_u64().unwrap())
                .collect::<Vec<_>>(),
            [500, 5000, 50000]
        );
        for t in &bulk {
            let trials = t["trials"].as_array().unwrap();
            assert_eq!(trials.len(), 3);
            for tr in trials {
                // The index is recreated before each trial, so every trial indexes the whole
                // test-mode excerpt of geonames (1,000 documents), warmup included.
                assert_eq!(
                    tr["units"].as_u64().unwrap() + tr["warmup_units"].as_u64().unwrap(),
                    1000,
                    "{tr}"
                );
                assert_eq!(tr["errors"], 0);
            }
        }
        let search = tasks(&race, "search");
        let targets: Vec<f64> = search
            .iter()
            .map(|t| t["target_throughput"].as_f64().unwrap())
            .collect();
        assert_eq!(targets, [100.0, 1000.0, 10000.0, 100000.0]);
        for t in &search {
            let trials = t["trials"].as_array().unwrap();
            assert_eq!(trials.len(), 5);
            for tr in trials {
                // The 17 "Sankt Georgen" places of the excerpt, on every measured search.
                assert_eq!(
                    tr["hits"].as_u64().unwrap(),
                    tr["operations"].as_u64().unwrap() * 17,
                    "{tr}"
                );
                assert_eq!(tr["errors"], 0);
            }
        }
    }
    let shown = over_http.ok(&["show", over_http.only_race()["race_id"].as_str().unwrap()]);
    assert!(
        shown.contains("| p50 | p90 | p95 | p99 | p99.9 | p99.99 |")
            && shown.contains("## Bulk runs"),
        "{shown}"
    );
}

#[test]
fn bulk_indexer_records_its_runs_after_unrecorded_warmup_runs() {
    let env = Env::new();
    let out = env.ok(&[
        "race",
        "--track",
        "bulk-indexer",
        "--track-params",
        "count:3000,runs:2,warmup_runs:1,workers:2,flush_bytes:50kb",
    ]);
    let race = env.only_race();
    let task = &tasks(&race, "index-small")[0];
    assert_eq!(task["planned_trials"], 2);
    assert_eq!(task["warmup_trials"], 1);
    let trials = task["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2, "the warmup run is not recorded");
    for tr in trials {
        assert_eq!(tr["units"], 3000, "{tr}");
        assert_eq!(tr["errors"], 0);
        // ~139 bytes a document with its action line: a 50 kB threshold sends ~360 a request.
        let requests = tr["operations"].as_u64().unwrap();
        assert!((8..=10).contains(&requests), "{requests} requests");
    }
    let hist = read_json(&env.race_dirs()[0].join("histograms.json"));
    assert_eq!(hist["trials"].as_array().unwrap().len(), 2);
    assert!(
        out.contains("## Bulk runs") && out.contains("after 1 warmup run, not recorded"),
        "{out}"
    );
    assert!(
        out.contains("  1) 3000 docs")
            && out.contains("  2) 3000 docs")
            && out.contains("min ")
            && out.contains(" mean "),
        "{out}"
    );
    let progress =
        String::from_utf8_lossy(&env.run(&["show", race["race_id"].as_str().unwrap()]).stdout)
            .into_owned();
    assert!(progress.contains("(after 1 warmup)"), "{progress}");
}

#[test]
fn bulk_indexer_httplog_over_http_leaves_exactly_count_documents() {
    let env = Env::new();
    let server = serve(&env, &[]);
    let run = env.run(&[
        "race",
        "--track",
        "bulk-indexer",
        "--quiet",
        "--track-params",
        "dataset:httplog,count:2000,runs:1,warmup_runs:1,workers:2,flush_bytes:1mb,shards:1",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{stderr}");
    let race = env.only_race();
    let tr = &tasks(&race, "index-httplog")[0]["trials"][0];
    assert_eq!(tr["units"], 2000);
    // ~2.5 KB + the action line a document: a 1 MB threshold sends ~5 requests for 2,000.
    assert!(
        (4..=6).contains(&tr["operations"].as_u64().unwrap()),
        "{tr}"
    );
    // The track does not refresh (as the benchmark it reproduces); make the documents visible.
    http(server.port, "POST", "/test-bulk-benchmark/_refresh");
    let count = http(server.port, "GET", "/test-bulk-benchmark/_count");
    assert!(count.contains("\"count\":2000"), "{count}");
}

/// `scale-to` makes documents past a file's own by recombining them: indexed and searchable
/// like the real ones, on every backend (here embedded and over HTTP), with a new id each.
#[test]
fn a_scaled_corpus_indexes_its_recombined_documents() {
    let base = "{\"geonameid\":1,\"name\":\"Sankt Georgen\",\"alternatenames\":\"a,b\",\"population\":600,\"location\":[14.5,47.2]}\n\
                {\"geonameid\":2,\"name\":\"Bad Ischl\",\"alternatenames\":\"c,d\",\"population\":14000,\"location\":[13.6,47.7]}\n";
    let track = "name: scaled
corpora:
  - name: places
    target-index: places
    documents: [{source-file: base.json, document-count: 2, scale-to: 3000, seed: 5}]
indices: [{name: places, body: {mappings: {properties: {name: {type: text}, population: {type: long}}}}}]
operations:
  - {name: bulk, type: bulk, params: {bulk-size: 500}}
  - {name: refresh, type: refresh}
  - {name: all, type: search, params: {body: {query: {match_all: {}}}}}
  - {name: mixed, type: search, params: {body: {query: {match_phrase: {name: Sankt Ischl}}}}}
challenges:
  - name: c
    schedule:
      - {operation: {name: ci, type: create-index}}
      - {operation: bulk, clients: 2}
      - {operation: refresh}
      - {operation: all, iterations: 1}
      - {operation: mixed, iterations: 1}
";
    let dir = track_dir(&[("track.yaml", track), ("base.json", base)]);
    let path = dir.path().to_str().unwrap();
    let embedded = Env::new();
    embedded.ok(&["race", "--track-path", path, "--quiet"]);
    let over_http = Env::new();
    let server = serve(&over_http, &[]);
    over_http.ok(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let mut mixed_hits = Vec::new();
    for race in [embedded.only_race(), over_http.only_race()] {
        assert_eq!(tasks(&race, "bulk")[0]["trials"][0]["units"], 3000);
        assert_eq!(
            tasks(&race, "all")[0]["trials"][0]["hits"],
            3000,
            "every document is there, none overwritten: ids are new"
        );
        let hits = tasks(&race, "mixed")[0]["trials"][0]["hits"]
            .as_u64()
            .unwrap();
        assert!(
            hits > 100 && hits < 2000,
            "about a quarter of the recombined names: {hits}"
        );
        mixed_hits.push(hits);
    }
    assert_eq!(
        mixed_hits[0], mixed_hits[1],
        "the same documents on both backends"
    );
    // A declared count that is not the file's is refused when the race reads the base.
    let dir = track_dir(&[
        (
            "track.yaml",
            &track.replace("document-count: 2", "document-count: 3"),
        ),
        ("base.json", base),
    ]);
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("declares 3 documents but the file has 2")
    );
}
