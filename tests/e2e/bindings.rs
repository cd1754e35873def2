//! Parameter bindings: each call's body drawn from the operation's `bindings`, checked on the
//! wire (a loopback server records every body the elasticsearch backend sends) and raced with
//! examples/param-bindings on the embedded engine and through `runner serve`.

use crate::elasticsearch::{serve, url};
use crate::util::*;
use std::sync::{Arc, Mutex};

/// A loopback server that answers like Elasticsearch and keeps each search body.
pub(crate) fn recording_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let kept = bodies.clone();
    let port = json_server(move |line, body| {
        if line.contains("_search") {
            kept.lock().unwrap().push(String::from_utf8(body).unwrap());
            r#"{"hits":{"total":{"value":1}}}"#.to_string()
        } else {
            r#"{"version":{"number":"8.15.0"}}"#.to_string()
        }
    });
    (port, bodies)
}

#[test]
fn each_call_sends_a_body_drawn_from_its_bindings() {
    let dir = track_dir(&[
        ("tags.txt", "rust\njava\n\npython\n"),
        (
            "track.yaml",
            r#"name: bound
indices: [{name: i}]
operations:
  - name: s
    type: search
    params:
      body:
        query: {bool: {must: [{match: {tag: "${tag}"}}], filter: [{terms: {name: ["...${tags}", "${salt}"]}}]}}
        size: "${size}"
        note: "tag ${tag}, call ${n}"
      bindings:
        tag: {choice-file: tags.txt}
        tags: {lines: tags.txt}
        salt: {int: [1, 1000000], as: string}
        size: {choice: [1, 2, 3]}
        n: {sequence: 0}
challenges:
  - name: c
    schedule: [{operation: s, clients: 2, warmup: 4, iterations: 60}]
"#,
        ),
    ]);
    let (port, bodies) = recording_server();
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(port),
        "--quiet",
    ]);
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 64, "warmup and measured calls");
    let mut salts = std::collections::HashSet::new();
    let mut calls = Vec::new();
    for text in &bodies {
        let b: serde_json::Value = serde_json::from_str(text).expect(text);
        let tag = b["query"]["bool"]["must"][0]["match"]["tag"]
            .as_str()
            .unwrap();
        assert!(["rust", "java", "python"].contains(&tag), "{text}");
        let names = b["query"]["bool"]["filter"][0]["terms"]["name"]
            .as_array()
            .unwrap();
        assert_eq!(
            names[..3],
            [
                serde_json::json!("rust"),
                serde_json::json!("java"),
                serde_json::json!("python")
            ]
        );
        salts.insert(names[3].as_str().expect("the salt is a string").to_string());
        assert!((1..=3).contains(&b["size"].as_u64().unwrap()), "{text}");
        let note = b["note"].as_str().unwrap();
        assert!(note.starts_with(&format!("tag {tag}, call ")), "{note}");
        calls.push(note.rsplit(' ').next().unwrap().parse::<u64>().unwrap());
    }
    // Each call draws its own salt; the sequence never gives two calls the same number
    // (client c takes c, c + 2, ...: unique across clients, and across shards alike).
    assert!(
        salts.len() > 50,
        "{} distinct salts in 64 calls",
        salts.len()
    );
    let n = calls.len();
    calls.sort();
    calls.dedup();
    assert_eq!(calls.len(), n, "a sequence number was drawn twice");
}

#[test]
fn the_param_bindings_example_races_alike_on_both_backends() {
    let example = repo().join("examples/param-bindings");
    let example = example.to_str().unwrap();
    let embedded = Env::new();
    embedded.ok(&[
        "race",
        "--track-path",
        example,
        "--track-params",
        "iterations:40,clients:1",
        "--quiet",
    ]);
    let over_http = Env::new();
    let server = serve(&over_http, &[]);
    over_http.ok(&[
        "race",
        "--track-path",
        example,
        "--track-params",
        "iterations:40,clients:1",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let (a, b) = (embedded.only_race(), over_http.only_race());
    for name in [
        "large-terms",
        "large-filtered-terms",
        "large-prohibited-terms",
        "randomized-term-queries",
        "randomized-nested-queries",
    ] {
        let (ta, tb) = (tasks(&a, name)[0], tasks(&b, name)[0]);
        let (ra, rb) = (&ta["trials"][0], &tb["trials"][0]);
        assert_eq!(ra["errors"], 0, "{name}: {ra}");
        assert_eq!(rb["errors"], 0, "{name}: {rb}");
        assert_eq!(ra["operations"], 40, "{name}: {ra}");
        // One client draws the same bodies in the same order on both backends, from the
        // same engine: the hits add up alike. (Several clients share the iterations as they
        // come, so which client makes which call varies from run to run.)
        assert_eq!(ra["hits"], rb["hits"], "{name}");
    }
    for name in [
        "large-terms",
        "randomized-term-queries",
        "randomized-nested-queries",
    ] {
        let hits = tasks(&a, name)[0]["trials"][0]["hits"].as_u64().unwrap();
        assert!(hits > 0, "{name} found nothing");
    }
}
