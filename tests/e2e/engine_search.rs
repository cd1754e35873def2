//! The embedded engine behind `runner serve` as an Elasticsearch client sees it: an index
//! mapped dynamically by its templates, then Lucene query strings, highlighting, `fields`,
//! auto_date_histogram, significant_terms and geo queries and aggregations, each answer
//! checked against what Elasticsearch returns for the same documents.

use crate::elasticsearch::serve;
use crate::util::*;
use serde_json::{json, Value};

fn call(port: u16, method: &str, path: &str, body: Value) -> Value {
    let text = http_body(port, method, path, &body.to_string());
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: {text}"))
}

/// Documents i = 0..60: a service per i % 3, a message, an hour of 2026-02-01, a point.
fn doc(i: usize) -> Value {
    let service = ["web", "db", "cache"][i % 3];
    json!({
        "@timestamp": format!("2026-02-01T{:02}:15:00Z", i % 24),
        "labels": {"service": service, "zone": if i < 20 { "eu-1" } else { "us-1" }},
        "message": if i % 5 == 0 { format!("request {i} failed with timeout. retrying now") } else { format!("request {i} served") },
        "status": if i % 5 == 0 { 504 } else { 200 },
        "location": {"lat": 40.0 + (i % 10) as f64, "lon": -5.0 + (i / 10) as f64 * 3.0}
    })
}

#[test]
fn a_dynamic_index_answers_elasticsearch_searches() {
    let env = Env::new();
    let server = serve(&env, &[]);
    let port = server.port;
    let created = call(
        port,
        "PUT",
        "/logs",
        json!({"mappings": {
            "dynamic_templates": [{"labels": {"path_match": "labels.*", "match_mapping_type": "string", "mapping": {"type": "keyword"}}}],
            "properties": {"location": {"type": "geo_point"}}
        }}),
    );
    assert_eq!(created["acknowledged"], true, "{created}");
    let bulk: String = (0..60)
        .map(|i| format!("{{\"index\":{{\"_index\":\"logs\"}}}}\n{}\n", doc(i)))
        .collect();
    let text = http_body(port, "POST", "/_bulk?refresh=true", &bulk);
    assert!(text.contains("\"errors\":false"), "{text}");
    let search = |body: Value| call(port, "POST", "/logs/_search", body);

    // query_string on learned fields: a keyword by template, a long by value.
    let r = search(
        json!({"size": 0, "query": {"query_string": {"query": "labels.service:web AND status:[500 TO 599]"}}}),
    );
    let want = (0..60).filter(|i| i % 3 == 0 && i % 5 == 0).count();
    assert_eq!(r["hits"]["total"]["value"], want, "{r}");

    // Highlighting and fields on the hits.
    let r = search(json!({"size": 1, "sort": [{"status": "desc"}],
        "query": {"match": {"message": "timeout"}},
        "highlight": {"fields": {"message": {}}}, "fields": ["labels.zone", "status"]}));
    let hit = &r["hits"]["hits"][0];
    let fragment = hit["highlight"]["message"][0].as_str().unwrap_or_default();
    assert!(fragment.contains("<em>timeout</em>"), "{r}");
    assert_eq!(hit["fields"]["status"], json!([504]), "{r}");

    // auto_date_histogram: 24 hours in at most 10 buckets are 3-hour buckets.
    let r = search(
        json!({"size": 0, "aggs": {"t": {"auto_date_histogram": {"field": "@timestamp", "buckets": 10}}}}),
    );
    let t = &r["aggregations"]["t"];
    assert_eq!(t["interval"], "3h", "{r}");
    let counts: Vec<u64> = t["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["doc_count"].as_u64().unwrap())
        .collect();
    let want: Vec<u64> = (0..8)
        .map(|b| (0..60).filter(|i| (i % 24) / 3 == b).count() as u64)
        .collect();
    assert_eq!(counts, want, "{r}");

    // significant_terms: the failed requests' service against the whole index.
    let r = search(json!({"size": 0, "query": {"term": {"status": 504}},
        "aggs": {"s": {"significant_terms": {"field": "labels.zone", "min_doc_count": 1}}}}));
    let s = &r["aggregations"]["s"];
    assert_eq!(
        (s["doc_count"].as_u64(), s["bg_count"].as_u64()),
        (Some(12), Some(60)),
        "{r}"
    );

    // Geo: a polygon on the points, and a geotile grid of them.
    let r = search(
        json!({"size": 0, "query": {"geo_shape": {"location": {"shape": "BBOX (-5.5, 0.5, 49.5, 39.5)"}}},
        "aggs": {"g": {"geotile_grid": {"field": "location", "precision": 2}}, "b": {"geo_bounds": {"field": "location"}}}}),
    );
    // Longitudes -5 and -2 (i / 10 = 0, 1), every latitude.
    assert_eq!(r["hits"]["total"]["value"], 20, "{r}");
    assert_eq!(
        r["aggregations"]["b"]["bounds"]["top_left"],
        json!({"lat": 49.0, "lon": -5.0}),
        "{r}"
    );
    let tiles: u64 = r["aggregations"]["g"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["doc_count"].as_u64().unwrap())
        .sum();
    assert_eq!(tiles, 20, "{r}");
}

/// A race on the embedded backend runs a terms lookup per search: the looked-up document's
/// values, as they are when each search runs.
#[test]
fn a_race_looks_terms_up_for_each_search() {
    let track = "name: t
indices: [{name: users}, {name: lists}]
operations:
  - {name: create, type: create-index}
  - {name: ann, type: index-document, params: {index: users, id: u1, body: {name: ann}}}
  - {name: bob, type: index-document, params: {index: users, id: u2, body: {name: bob}}}
  - {name: list, type: index-document, params: {index: lists, id: l, body: {who: [ann, bob, cid]}}}
  - {name: refresh, type: refresh}
  - name: followed
    type: search
    params: {index: users, body: {query: {terms: {name: {index: lists, id: l, path: who}}}}}
  - name: paged
    type: scroll-search
    params: {index: users, pages: 1, body: {query: {terms: {name: {index: lists, id: l, path: who}}}}}
challenges:
  - name: c
    schedule:
      - {operation: create}
      - {operation: ann}
      - {operation: bob}
      - {operation: list}
      - {operation: refresh}
      - {operation: followed, iterations: 5}
      - {operation: paged, iterations: 1}
";
    let dir = track_dir(&[("track.yaml", track)]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    let followed = &tasks(&race, "followed")[0]["trials"][0];
    assert_eq!(followed["errors"], 0, "{followed}");
    // Two users of the three looked-up names exist: 2 hits a search.
    assert_eq!(followed["hits"], 10, "{followed}");
    let paged = &tasks(&race, "paged")[0]["trials"][0];
    assert_eq!(
        paged["errors"], 1,
        "refused, not run without its lookup: {paged}"
    );
    assert!(
        paged["error_messages"].to_string().contains("terms lookup"),
        "{paged}"
    );
}
