//! Bulk bodies beyond plain appends, on the embedded backend and over HTTP against
//! `runner serve`: corpora whose files hold their own action lines, Rally's id conflicts,
//! looped corpora; and paged searches in our own track format.

use crate::util::*;

/// Six action/document pairs: `a` indexed then replaced, `b` created, one without an id,
/// and `c` indexed then updated in place: 4 documents remain.
const WITH_ACTIONS: &str = r#"{"index":{"_id":"a"}}
{"name":"first a","n":1}
{"create":{"_id":"b"}}
{"name":"b","n":2}
{"index":{}}
{"name":"no id","n":3}
{"index":{"_id":"a"}}
{"name":"second a","n":4}
{"index":{"_id":"c"}}
{"name":"c","n":5}
{"update":{"_id":"c"}}
{"doc":{"n":50}}
"#;

const TRACK: &str = "name: actions
indices: [{name: docs, body: {mappings: {properties: {name: {type: text}, n: {type: long}}}}}]
corpora:
  - name: own
    documents: [{source-file: docs.json, includes-action-and-meta-data: true, document-count: 6}]
operations:
  - {name: delete-index, type: delete-index}
  - {name: create-index, type: create-index}
  - {name: refresh, type: refresh}
  - {name: load, type: bulk, params: {bulk-size: 4}}
  - {name: count, type: search, params: {body: {query: {match_all: {}}, size: 0}}}
  - {name: big-n, type: search, params: {body: {query: {range: {n: {gte: 50}}}, size: 0}}}
challenges:
  - name: c
    schedule:
      - {operation: delete-index}
      - {operation: create-index}
      - {operation: load}
      - {operation: refresh}
      - {operation: count, iterations: 1}
      - {operation: big-n, iterations: 1}
";

fn race_in(files: &[(&str, &str)], args: &[&str]) -> serde_json::Value {
    let dir = track_dir(files);
    let env = Env::new();
    let mut all = vec![
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ];
    all.extend_from_slice(args);
    env.ok(&all);
    env.only_race()
}

fn trial<'a>(race: &'a serde_json::Value, task: &str) -> &'a serde_json::Value {
    &tasks(race, task)[0]["trials"][0]
}

#[test]
fn a_corpus_with_its_own_action_lines_is_sent_as_written() {
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let u = crate::elasticsearch::url(server.port);
    for args in [
        vec![],
        vec!["--backend", "elasticsearch", "--target-hosts", u.as_str()],
    ] {
        let race = race_in(&[("track.yaml", TRACK), ("docs.json", WITH_ACTIONS)], &args);
        let load = trial(&race, "load");
        assert_eq!(
            (
                load["units"].as_u64(),
                load["errors"].as_u64(),
                load["operations"].as_u64()
            ),
            (Some(6), Some(0), Some(2)),
            "{args:?}: {load}"
        );
        assert_eq!(
            trial(&race, "count")["hits"],
            4,
            "{args:?}: a (replaced), b, one without id, c"
        );
        assert_eq!(
            trial(&race, "big-n")["hits"],
            1,
            "{args:?}: the update merged n: 50 into c"
        );
    }
}

#[test]
fn a_create_of_an_existing_id_fails_as_an_item_and_is_counted() {
    let docs = "{\"index\":{\"_id\":\"x\"}}\n{\"n\":1}\n{\"create\":{\"_id\":\"x\"}}\n{\"n\":2}\n";
    let track = TRACK.replace("document-count: 6", "document-count: 2");
    let race = race_in(&[("track.yaml", &track), ("docs.json", docs)], &[]);
    let load = trial(&race, "load");
    assert_eq!(
        (
            load["units"].as_u64(),
            load["errors_by_kind"]["item-failures"].as_u64()
        ),
        (Some(1), Some(1)),
        "{load}"
    );
    assert!(
        load["error_messages"]["item-failures"]
            .as_str()
            .unwrap()
            .contains("version_conflict"),
        "{load}"
    );
}

/// 100 generated documents with Rally's conflicts: sequential ids, half of them reusing one.
const CONFLICTS: &str = "name: conflicts
indices: [{name: logs, body: {mappings: {properties: {message: {type: text}}}}}]
corpora:
  - name: gen
    documents: [{generate: small, document-count: 100}]
operations:
  - {name: delete-index, type: delete-index}
  - {name: create-index, type: create-index}
  - {name: refresh, type: refresh}
  - {name: load, type: bulk, params: {bulk-size: 10, conflicts: sequential, conflict-probability: 50, on-conflict: index}}
  - {name: count, type: search, params: {body: {size: 0}}}
  - {name: loop, type: bulk, params: {bulk-size: 30, looped: true}}
challenges:
  - name: c
    schedule:
      - {operation: delete-index}
      - {operation: create-index}
      - {operation: load}
      - {operation: refresh}
      - {operation: count, iterations: 1}
  - name: looped
    schedule:
      - {operation: delete-index}
      - {operation: create-index}
      - {operation: loop, iterations: 10}
      - {operation: refresh}
      - {operation: count, iterations: 1}
";

#[test]
fn id_conflicts_replace_documents_alike_on_both_backends() {
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let u = crate::elasticsearch::url(server.port);
    let mut distinct = Vec::new();
    for args in [
        vec![],
        vec!["--backend", "elasticsearch", "--target-hosts", u.as_str()],
    ] {
        let race = race_in(&[("track.yaml", CONFLICTS)], &args);
        let load = trial(&race, "load");
        assert_eq!(
            (load["units"].as_u64(), load["errors"].as_u64()),
            (Some(100), Some(0)),
            "{load}"
        );
        distinct.push(trial(&race, "count")["hits"].as_u64().unwrap());
    }
    assert_eq!(
        distinct[0], distinct[1],
        "the same seeded ids on both backends"
    );
    assert!(
        (35..65).contains(&distinct[0]),
        "{} distinct of 100 at 50% conflicts",
        distinct[0]
    );
}

#[test]
fn a_looped_corpus_starts_over_until_its_iterations_end() {
    let race = race_in(&[("track.yaml", CONFLICTS)], &["--challenge", "looped"]);
    let looped = trial(&race, "loop");
    // 10 requests of 30 over 100 documents: 300 indexed, each document three times or more.
    assert_eq!(
        (looped["operations"].as_u64(), looped["units"].as_u64()),
        (Some(10), Some(300)),
        "{looped}"
    );
    assert_eq!(trial(&race, "count")["hits"], 300);
}

#[test]
fn paged_searches_read_their_pages_on_both_backends() {
    let track = "name: pages
indices: [{name: docs, body: {mappings: {properties: {name: {type: text}, n: {type: long}}}}}]
corpora:
  - name: gen
    documents: [{generate: small, document-count: 95, target-index: docs}]
operations:
  - {name: delete-index, type: delete-index}
  - {name: create-index, type: create-index}
  - {name: refresh, type: refresh}
  - {name: load, type: bulk, params: {bulk-size: 50}}
  - {name: scroll, type: scroll-search, params: {results-per-page: 20, body: {query: {match_all: {}}}}}
  - {name: after, type: paginated-search, params: {pages: 2, results-per-page: 40, body: {sort: [_doc]}}}
challenges:
  - name: c
    schedule:
      - {operation: delete-index}
      - {operation: create-index}
      - {operation: load}
      - {operation: refresh}
      - {operation: scroll, iterations: 3}
      - {operation: after, iterations: 2}
";
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let u = crate::elasticsearch::url(server.port);
    for args in [
        vec![],
        vec!["--backend", "elasticsearch", "--target-hosts", u.as_str()],
    ] {
        let race = race_in(&[("track.yaml", track)], &args);
        let scroll = trial(&race, "scroll");
        // 95 hits at 20 a page: 4 full pages and a short one, each of the 3 iterations.
        assert_eq!(
            (
                scroll["units"].as_u64(),
                scroll["hits"].as_u64(),
                scroll["errors"].as_u64()
            ),
            (Some(15), Some(285), Some(0)),
            "{args:?}: {scroll}"
        );
        assert_eq!(tasks(&race, "scroll")[0]["throughput_unit"], "pages/s");
        assert_eq!(
            trial(&race, "after")["units"],
            4,
            "{args:?}: 2 pages, twice"
        );
    }
    // Every scroll the elasticsearch backend opened was cleared at the end of its operation.
    assert!(http(server.port, "DELETE /_search/scroll/_all").contains("\"num_freed\":0"));
}

/// One HTTP/1.1 request line to 127.0.0.1:`port`; the whole response.
fn http(port: u16, request: &str) -> String {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "{request} HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn bad_paging_and_bulk_params_are_refused_before_the_race() {
    let cases = [
        (
            "{name: p, type: paginated-search, params: {index: i}}",
            "needs a `sort`",
        ),
        (
            "{name: p, type: scroll-search, params: {index: i, pages: 0}}",
            "pages",
        ),
        (
            "{name: p, type: bulk, params: {conflicts: often}}",
            "`sequential` or `random`",
        ),
        (
            "{name: p, type: bulk, params: {conflict-probability: 10}}",
            "needs `conflicts",
        ),
        (
            "{name: p, type: bulk, params: {conflicts: random, recency: 2}}",
            "from 0 to 1",
        ),
        (
            "{name: p, type: bulk, params: {looped: true}}",
            "`looped` bulk never runs out",
        ),
        (
            "{name: p, type: search, params: {index: i, body: {aggs: {by: {significant_text: {field: f}}}}}}",
            "is a `significant_text`, which the embedded engine does not run",
        ),
    ];
    for (op, expected) in cases {
        let track = format!(
            "name: bad\nindices: [{{name: i}}]\ncorpora: [{{name: g, documents: [{{generate: small, document-count: 5}}]}}]\noperations: [{op}]\nchallenges: [{{name: c, schedule: [{{operation: p}}]}}]\n"
        );
        let (env, out) = race_track(&track, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{op}: {stderr}");
        // A track error names the file; what the backend cannot run names the task instead.
        let names = if expected.contains("embedded engine") {
            "task `p`"
        } else {
            "track.yaml"
        };
        assert!(
            stderr.contains(expected) && stderr.contains(names),
            "{op}: {stderr}"
        );
        assert!(env.race_dirs().is_empty());
    }
}

/// `split: rally` over a file with no declared document count: there are no esrally slices to
/// cut, so the clients share one queue, and the race says so in its deviations.
#[test]
fn a_rally_split_with_no_document_count_is_a_deviation_not_a_silent_queue() {
    let dir = track_dir(&[
        ("docs.json", "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n{\"n\":4}\n"),
        (
            "track.yaml",
            &split_track("[{source-file: docs.json, target-index: tiny}]", 2),
        ),
    ]);
    let (race, load) = race_and_task(&dir, &[], "load");
    let deviations = race["deviations"].to_string();
    assert!(
        deviations.contains("task `load`") && deviations.contains("declares no document count"),
        "{deviations}"
    );
    // Every document still indexed once, in bulks of two.
    assert_eq!(load["trials"][0]["errors"], 0, "{load}");
    assert_eq!(load["trials"][0]["units"], 4, "{load}");
}

/// Test mode's first 1,000 documents hold for a corpus cut per esrally worker too: the files
/// are cut to the first 1,000 in file order, then sliced.
#[test]
fn a_rally_split_in_test_mode_reads_the_first_thousand_documents() {
    let docs = |from: u32| -> String {
        (from..from + 600)
            .map(|n| format!("{{\"n\":{n}}}\n"))
            .collect()
    };
    let (a, b) = (docs(0), docs(600));
    let dir = track_dir(&[
        ("a.json", &a),
        ("b.json", &b),
        (
            "track.yaml",
            &split_track(
                "[{source-file: a.json, target-index: tiny, document-count: 600}, {source-file: b.json, target-index: tiny, document-count: 600}]",
                100,
            ),
        ),
    ]);
    let (_, load) = race_and_task(&dir, &["--test-mode"], "load");
    assert_eq!(load["trials"][0]["errors"], 0, "{load}");
    assert_eq!(load["trials"][0]["units"], 1000, "{load}");
}

/// A track whose task `load` bulks `documents` in `bulk_size`s with two clients, its corpus
/// cut per esrally worker (`split: rally`).
fn split_track(documents: &str, bulk_size: u64) -> String {
    format!(
        "name: split
indices: [{{name: tiny}}]
corpora:
  - name: c
    documents: {documents}
operations:
  - {{name: create-index, type: create-index}}
  - {{name: load, type: bulk, params: {{bulk-size: {bulk_size}, split: rally}}}}
challenges:
  - name: c
    schedule:
      - {{operation: create-index}}
      - {{operation: load, clients: 2}}
"
    )
}

/// Races the track in `dir` on the embedded engine: the race's JSON and its task `task`.
fn race_and_task(
    dir: &tempfile::TempDir,
    extra: &[&str],
    task: &str,
) -> (serde_json::Value, serde_json::Value) {
    let mut args = vec!["race", "--quiet", "--report-format", "json", "--track-path"];
    args.push(dir.path().to_str().unwrap());
    args.extend_from_slice(extra);
    let out = Env::new().ok(&args);
    let race = serde_json::from_str::<serde_json::Value>(&out).unwrap()["race"].clone();
    let found = race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .cloned()
        .unwrap_or_else(|| panic!("no task `{task}`: {race}"));
    (race, found)
}
