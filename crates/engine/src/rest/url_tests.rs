//! URL parameters through the REST layer: run as Elasticsearch runs them, or refused by name.

use super::tests::call;
use crate::cluster::Engine;
use serde_json::{json, Value};

fn places() -> Engine {
    let b = Engine::new();
    let (s, _) = call(
        &b,
        "PUT",
        "/places",
        r#"{"mappings":{"properties":{"name":{"type":"text"},"tag":{"type":"keyword"},"pop":{"type":"long"},"geo":{"properties":{"lat":{"type":"double"},"lon":{"type":"double"}}}}}}"#,
    );
    assert_eq!(s, 200);
    let mut bulk = String::new();
    for i in 0..30 {
        let tag = if i % 3 == 0 { "a" } else { "b" };
        bulk.push_str(&format!("{{\"index\":{{\"_id\":\"{i}\"}}}}\n"));
        bulk.push_str(&format!(
            "{{\"name\":\"place {i}\",\"tag\":\"{tag}\",\"pop\":{i},\"geo\":{{\"lat\":{i},\"lon\":1}}}}\n"
        ));
    }
    let (s, r) = call(&b, "POST", "/places/_bulk?refresh=true", &bulk);
    assert_eq!((s, &r["errors"]), (200, &json!(false)));
    b
}

fn hits(r: &Value) -> &Vec<Value> {
    r["hits"]["hits"].as_array().unwrap()
}

#[test]
fn search_parameters_in_the_url_are_run() {
    let b = places();
    let (_, r) = call(&b, "GET", "/places/_search?size=25", "");
    assert_eq!(hits(&r).len(), 25, "size from the URL, over the default 10");
    let (_, r) = call(
        &b,
        "POST",
        "/places/_search?size=2&from=1",
        r#"{"size": 10}"#,
    );
    assert_eq!(hits(&r).len(), 2, "the URL's size overrides the body's");
    let (_, r) = call(&b, "GET", "/places/_search?q=tag:a&size=100", "");
    assert_eq!(r["hits"]["total"]["value"], 10);
    assert!(hits(&r).iter().all(|h| h["_source"]["tag"] == "a"));
    let (_, r) = call(&b, "GET", "/places/_search?sort=pop:desc&size=1", "");
    assert_eq!(hits(&r)[0]["_id"], "29");
    let (_, r) = call(&b, "GET", "/places/_count?q=tag%3Ab", "");
    assert_eq!(r["count"], 20);
    let (_, r) = call(&b, "GET", "/places/_search?rest_total_hits_as_int=true", "");
    assert_eq!(r["hits"]["total"], 30);
    let (_, r) = call(&b, "GET", "/places/_search?track_total_hits=5", "");
    assert_eq!(r["hits"]["total"], json!({"value": 5, "relation": "gte"}));
    let (_, r) = call(&b, "GET", "/places/_search?track_total_hits=false", "");
    assert!(r["hits"].get("total").is_none());
}

#[test]
fn source_filtering_is_applied_from_the_body_and_the_url() {
    let b = places();
    let (_, r) = call(
        &b,
        "POST",
        "/places/_search?size=1&sort=pop",
        r#"{"_source": ["name", "geo.lat"]}"#,
    );
    assert_eq!(
        hits(&r)[0]["_source"],
        json!({"name": "place 0", "geo": {"lat": 0}})
    );
    let (_, r) = call(
        &b,
        "GET",
        "/places/_search?size=1&sort=pop&_source_excludes=geo,tag",
        "",
    );
    assert_eq!(hits(&r)[0]["_source"], json!({"name": "place 0", "pop": 0}));
    let (_, r) = call(&b, "GET", "/places/_search?size=1&_source=false", "");
    assert!(hits(&r)[0].get("_source").is_none());
    assert!(hits(&r)[0].get("_id").is_some());
}

#[test]
fn a_parameter_not_run_is_a_400_naming_it() {
    let b = places();
    let (s, r) = call(&b, "GET", "/places/_search?sizee=5", "");
    assert_eq!(s, 400);
    let reason = r["error"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("unrecognized parameter: [sizee]"),
        "{reason}"
    );
    assert!(reason.contains("size"), "a hint: {reason}");
    let (s, r) = call(
        &b,
        "PUT",
        "/places/_doc/1?op_type=create",
        r#"{"name": "x"}"#,
    );
    assert_eq!(s, 409, "op_type=create is run: {r}");
    let (s, r) = call(
        &b,
        "PUT",
        "/places/_doc/1?version_type=external",
        r#"{"name": "x"}"#,
    );
    assert_eq!(s, 400, "{r}");
    // A merge asked not to wait is done first, then its task is answered, completed.
    let (s, r) = call(
        &b,
        "POST",
        "/places/_forcemerge?wait_for_completion=false",
        "",
    );
    assert_eq!(s, 200, "{r}");
    let task = r["task"].as_str().unwrap().to_string();
    let (s, r) = call(&b, "GET", &format!("/_tasks/{task}"), "");
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["completed"], true, "{r}");
    assert_eq!(call(&b, "GET", "/_tasks/runner:999", "").0, 404);
    // Other requests asked not to wait still are not run.
    assert_eq!(
        call(
            &b,
            "POST",
            "/places/_delete_by_query?wait_for_completion=false",
            r#"{"query":{"match_all":{}}}"#
        )
        .0,
        400
    );
    assert_eq!(call(&b, "GET", "/places/_doc/1?realtime=false", "").0, 400);
    assert_eq!(call(&b, "GET", "/places/_doc/1?realtime=true", "").0, 200);
    let (s, _) = call(&b, "GET", "/places/_count?size=1", "");
    assert_eq!(s, 400, "a count takes no size");
    let (s, _) = call(
        &b,
        "GET",
        "/_cluster/health?wait_for_status=yellow&timeout=1s",
        "",
    );
    assert_eq!(s, 200, "a wait one node meets at once");
    // `places` has one replica, which one node never assigns: green never comes.
    let (s, r) = call(&b, "GET", "/_cluster/health?wait_for_status=green", "");
    assert_eq!((s, &r["timed_out"]), (408, &json!(true)));
    let (s, r) = call(&b, "GET", "/_cluster/health?wait_for_nodes=%3E%3D1", "");
    assert_eq!((s, &r["timed_out"]), (200, &json!(false)));
    let (s, r) = call(&b, "GET", "/_cluster/health?wait_for_nodes=2", "");
    assert_eq!(
        (s, &r["timed_out"]),
        (408, &json!(true)),
        "never met: timed out, as there"
    );
    assert_eq!(
        call(&b, "GET", "/_cluster/health?wait_for_nodes=many", "").0,
        400
    );
}

#[test]
fn filter_path_keeps_what_it_names() {
    let b = places();
    let (_, r) = call(
        &b,
        "GET",
        "/places/_search?size=2&filter_path=hits.hits._id,took",
        "",
    );
    let keys: Vec<&String> = r.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["took", "hits"]);
    assert!(hits(&r)
        .iter()
        .all(|h| h.as_object().unwrap().keys().eq(["_id"])));
    let (_, r) = call(&b, "GET", "/?filter_path=-tagline,-version", "");
    assert!(r.get("tagline").is_none() && r.get("version").is_none() && r.get("name").is_some());
}

#[test]
fn searches_without_an_index_or_over_several_read_them_all() {
    let b = places();
    let (s, r) = call(
        &b,
        "POST",
        "/_search?size=3",
        r#"{"query": {"term": {"tag": "a"}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["hits"]["total"]["value"], 10);
    assert_eq!(hits(&r)[0]["_index"], "places");
    let (_, r) = call(
        &b,
        "POST",
        "/others/_doc/x?refresh=true",
        r#"{"tag": "a", "name": "other place", "pop": 100}"#,
    );
    assert_eq!(r["result"], "created", "the write made its index");
    assert_eq!(call(&b, "GET", "/_count", "").1["count"], 31);
    assert_eq!(
        call(&b, "GET", "/places,others/_count?q=tag:a", "").1["count"],
        11
    );
    let (s, r) = call(&b, "GET", "/_search?q=name:place&size=50", "");
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["hits"]["total"]["value"], 31);
    let from: Vec<&str> = hits(&r)
        .iter()
        .map(|h| h["_index"].as_str().unwrap())
        .collect();
    assert!(from.contains(&"others") && from.contains(&"places"));
    let scores: Vec<f64> = hits(&r)
        .iter()
        .map(|h| h["_score"].as_f64().unwrap())
        .collect();
    assert!(
        scores.windows(2).all(|w| w[0] >= w[1]),
        "merged best first: {scores:?}"
    );
    // Aggregations merge across the indices, as Elasticsearch's shards' do.
    let (s, r) = call(
        &b,
        "POST",
        "/_search?size=0",
        r#"{"aggs": {"p": {"max": {"field": "pop"}}, "t": {"range": {"field": "pop", "ranges": [{"to": 10}, {"from": 10}]}},
                     "n": {"value_count": {"field": "pop"}}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["aggregations"]["p"]["value"], 100.0);
    assert_eq!(r["aggregations"]["n"]["value"], 31);
    let counts: Vec<&Value> = r["aggregations"]["t"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| &b["doc_count"])
        .collect();
    assert_eq!(counts, [&json!(10), &json!(21)], "{r}");
    // What each index lays out or scores on its own is refused by name.
    for d in ["/d1", "/d2"] {
        let mapping = r#"{"mappings": {"properties": {"when": {"type": "date"}}}}"#;
        assert_eq!(call(&b, "PUT", d, mapping).0, 200);
    }
    let (s, r) = call(
        &b,
        "POST",
        "/d*/_search",
        r#"{"aggs": {"s": {"auto_date_histogram": {"field": "when"}}}}"#,
    );
    assert_eq!(s, 400, "not merged, and said so: {r}");
    let reason = r["error"]["reason"].as_str().unwrap();
    assert!(
        reason.contains("auto_date_histogram") && reason.contains("over several indices (d1, d2)"),
        "{reason}"
    );
}

#[test]
fn single_document_writes_have_elasticsearchs_results() {
    let b = places();
    let (s, r) = call(&b, "PUT", "/places/_doc/new", r#"{"name": "n"}"#);
    assert_eq!((s, &r["result"]), (201, &json!("created")));
    let (s, r) = call(&b, "PUT", "/places/_doc/new", r#"{"name": "m"}"#);
    assert_eq!((s, &r["result"]), (200, &json!("updated")));
    assert_eq!(
        call(&b, "PUT", "/places/_create/new", r#"{"name": "o"}"#).0,
        409
    );
    let (s, r) = call(&b, "POST", "/places/_doc", r#"{"name": "auto"}"#);
    assert_eq!(s, 201);
    assert_eq!(r["_id"].as_str().unwrap().len(), 20);
    let head = |path: &str| {
        let r = b.rest(&crate::rest::RestRequest {
            method: "HEAD",
            path,
            query: "",
            body: b"",
        });
        (r.status, r.body.len())
    };
    assert_eq!(head("/places/_doc/new"), (200, 0));
    assert_eq!(head("/places/_doc/none"), (404, 0));
    assert_eq!(
        call(&b, "DELETE", "/places/_doc/new", "").1["result"],
        "deleted"
    );
    let (s, r) = call(&b, "DELETE", "/places/_doc/new", "");
    assert_eq!((s, &r["result"]), (404, &json!("not_found")));
    assert_eq!(
        call(&b, "PUT", "/Bad/_doc/1", "{}").1["error"]["type"],
        "invalid_index_name_exception"
    );
    assert_eq!(
        call(&b, "PUT", "/Bad", "{}").1["error"]["type"],
        "invalid_index_name_exception"
    );
}

#[test]
fn templates_are_listed_without_a_name() {
    let b = Engine::new();
    let t = r#"{"index_patterns": ["l-*"], "template": {"settings": {}}}"#;
    assert_eq!(call(&b, "PUT", "/_index_template/one", t).0, 200);
    assert_eq!(call(&b, "PUT", "/_index_template/two", t).0, 200);
    let (s, r) = call(&b, "GET", "/_index_template", "");
    assert_eq!(s, 200);
    assert_eq!(r["index_templates"].as_array().unwrap().len(), 2);
    assert_eq!(
        call(&b, "GET", "/_index_template/t*", "").1["index_templates"][0]["name"],
        "two"
    );
    assert_eq!(call(&b, "GET", "/_index_template/none", "").0, 404);
    let (s, r) = call(&b, "GET", "/_component_template", "");
    assert_eq!((s, r), (200, json!({"component_templates": []})));
}
