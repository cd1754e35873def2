//! The REST layer's answers, call by call.

use super::*;

/// One request to the REST layer: its status and JSON body.
pub(crate) fn call(b: &Engine, method: &str, path: &str, body: &str) -> (u16, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let r = b.rest(&RestRequest {
        method,
        path,
        query,
        body: body.as_bytes(),
    });
    (r.status, serde_json::from_slice(&r.body).unwrap())
}

#[test]
fn index_bulk_search_get_and_errors_have_elasticsearch_shapes() {
    let b = Engine::new();
    assert_eq!(
        call(&b, "GET", "/", "").1["version"]["number"],
        COMPATIBLE_VERSION
    );
    let (s, _) = call(
        &b,
        "PUT",
        "/places",
        r#"{"mappings":{"properties":{"name":{"type":"text"},"pop":{"type":"long"}}}}"#,
    );
    assert_eq!(s, 200);
    assert_eq!(
        call(&b, "PUT", "/places", "{}").1["error"]["type"],
        "resource_already_exists_exception"
    );
    let bulk = "{\"index\":{\"_index\":\"places\",\"_id\":\"a\"}}\n{\"name\":\"Sankt Georgen\",\"pop\":5}\n{\"index\":{}}\n{\"name\":\"Wien\",\"pop\":\"many\"}\n{\"create\":{\"_index\":\"nope\"}}\n{\"name\":\"x\"}\n";
    let (s, r) = call(&b, "POST", "/places/_bulk", bulk);
    assert_eq!(s, 200);
    assert_eq!(r["errors"], true);
    let items = r["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    assert_eq!(items[0]["index"]["status"], 201);
    assert_eq!(
        items[1]["index"]["error"]["type"],
        "document_parsing_exception"
    );
    // A write creates its missing index, as Elasticsearch's auto-creation does.
    assert_eq!(items[2]["create"]["status"], 201);
    assert_eq!(items[2]["create"]["_index"], "nope");
    assert_eq!(items[2]["create"]["_id"].as_str().unwrap().len(), 20);
    call(&b, "POST", "/places/_refresh", "");
    let (s, r) = call(
        &b,
        "POST",
        "/places/_search",
        r#"{"query":{"match_phrase":{"name":"Sankt Georgen"}}}"#,
    );
    assert_eq!(s, 200);
    assert_eq!(r["hits"]["total"]["value"], 1);
    assert_eq!(r["hits"]["hits"][0]["_id"], "a");
    assert_eq!(r["hits"]["hits"][0]["_source"]["pop"], 5);
    assert_eq!(call(&b, "GET", "/places/_doc/a", "").1["found"], true);
    assert_eq!(call(&b, "GET", "/places/_doc/zz", "").0, 404);
    assert_eq!(
        call(
            &b,
            "POST",
            "/places/_search",
            r#"{"query":{"fuzzy":{"name":"x"}}}"#
        )
        .0,
        400
    );
    assert_eq!(
        call(&b, "POST", "/never-written/_search", "{}").1["error"]["type"],
        "index_not_found_exception"
    );
    assert_eq!(
        call(&b, "POST", "/places/_forcemerge?max_num_segments=1", "").0,
        200
    );
    assert_eq!(
        call(&b, "POST", "/places/_forcemerge?max_num_segments=-1", "").0,
        200
    );
    assert_eq!(call(&b, "POST", "/places/_count", "{}").1["count"], 1);
    assert_eq!(call(&b, "DELETE", "/never-made", "").0, 404);
    assert_eq!(
        call(&b, "DELETE", "/never-made?ignore_unavailable=true", "").0,
        200
    );
    assert_eq!(call(&b, "DELETE", "/places", "").0, 200);
    // The indices left keep the default of one replica, which one node cannot hold.
    let health = call(&b, "GET", "/_cluster/health", "").1;
    assert_eq!(health["status"], "yellow", "{health}");
    assert!(health["unassigned_shards"].as_u64() > Some(0), "{health}");
    // `_all` and patterns name whatever matches, as in Elasticsearch; a missing name is a 404.
    for path in ["/_cluster/health/_all", "/_cluster/health/logs-*,_all"] {
        assert_eq!(call(&b, "GET", path, "").1["status"], "yellow", "{path}");
    }
    assert_eq!(
        call(
            &b,
            "PUT",
            "/solo",
            r#"{"settings":{"index.number_of_replicas":0}}"#
        )
        .0,
        200
    );
    assert_eq!(
        call(&b, "GET", "/_cluster/health/solo", "").1["status"],
        "green"
    );
    assert_eq!(call(&b, "GET", "/_cluster/health/never-made", "").0, 404);
    assert_eq!(call(&b, "PATCH", "/x", "").0, 400);
}

fn places(b: &Engine, n: u64) {
    call(
        b,
        "PUT",
        "/places",
        r#"{"mappings":{"properties":{"name":{"type":"text"},"pop":{"type":"long"}}}}"#,
    );
    let bulk: String = (0..n)
        .map(|i| {
            format!(
                "{{\"index\":{{\"_id\":\"{i}\"}}}}\n{{\"name\":\"place {i}\",\"pop\":{}}}\n",
                i % 7
            )
        })
        .collect();
    assert_eq!(call(b, "POST", "/places/_bulk", &bulk).1["errors"], false);
    call(b, "POST", "/places/_refresh", "");
}

#[test]
fn scrolls_read_every_hit_once_then_clear() {
    let b = Engine::new();
    places(&b, 25);
    let (s, first) = call(
        &b,
        "POST",
        "/places/_search?scroll=1m",
        r#"{"size":10,"sort":["_doc"]}"#,
    );
    assert_eq!(s, 200);
    let id = first["_scroll_id"].as_str().unwrap().to_string();
    let mut seen: Vec<String> = first["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap().to_string())
        .collect();
    loop {
        let (s, page) = call(
            &b,
            "POST",
            "/_search/scroll",
            &format!(r#"{{"scroll":"1m","scroll_id":"{id}"}}"#),
        );
        assert_eq!(s, 200);
        assert_eq!(page["hits"]["total"]["value"], 25);
        let hits = page["hits"]["hits"].as_array().unwrap();
        if hits.is_empty() {
            break;
        }
        seen.extend(hits.iter().map(|h| h["_id"].as_str().unwrap().to_string()));
    }
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!((seen.len(), sorted.len()), (25, 25));
    let (s, cleared) = call(
        &b,
        "DELETE",
        "/_search/scroll",
        &format!(r#"{{"scroll_id":["{id}"]}}"#),
    );
    assert_eq!((s, cleared["num_freed"].as_u64()), (200, Some(1)));
    assert_eq!(
        call(
            &b,
            "POST",
            "/_search/scroll",
            &format!(r#"{{"scroll_id":"{id}"}}"#)
        )
        .1["error"]["type"],
        "search_context_missing_exception"
    );
}

#[test]
fn sorted_searches_show_sort_values_and_continue_with_search_after() {
    let b = Engine::new();
    places(&b, 20);
    let body = r#"{"size":6,"sort":[{"pop":"desc"},"_doc"]}"#;
    let (_, first) = call(&b, "POST", "/places/_search", body);
    let hits = first["hits"]["hits"].as_array().unwrap();
    let pops: Vec<i64> = hits
        .iter()
        .map(|h| h["sort"][0].as_i64().unwrap())
        .collect();
    assert_eq!(pops, [6, 6, 5, 5, 5, 4]);
    let mut all = hits.len();
    let mut after = hits.last().unwrap()["sort"].clone();
    loop {
        let (s, page) = call(
            &b,
            "POST",
            "/places/_search",
            &format!(r#"{{"size":6,"sort":[{{"pop":"desc"}},"_doc"],"search_after":{after}}}"#),
        );
        assert_eq!(s, 200, "{page}");
        let hits = page["hits"]["hits"].as_array().unwrap();
        all += hits.len();
        if hits.len() < 6 {
            break;
        }
        after = hits.last().unwrap()["sort"].clone();
    }
    assert_eq!(all, 20);
    assert_eq!(
        call(&b, "POST", "/places/_search", r#"{"sort":["name"]}"#).0,
        400
    );
    assert_eq!(
        call(&b, "POST", "/places/_search", r#"{"search_after":[1]}"#).0,
        400
    );
    assert_eq!(
        call(&b, "POST", "/places/_search", r#"{"from":18,"size":5}"#).1["hits"]["hits"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

#[test]
fn pages_are_bounded_by_the_result_window() {
    let b = Engine::new();
    places(&b, 3);
    // One unauthenticated request asking for 10^12 hits is refused, not allocated.
    for body in [
        r#"{"size":1000000000000}"#,
        r#"{"from":1000000000000}"#,
        r#"{"from":9995,"size":10}"#,
        r#"{"size":18446744073709551615,"from":1}"#,
    ] {
        let (status, reply) = call(&b, "POST", "/places/_search", body);
        assert_eq!(status, 400, "{body}: {reply}");
        assert!(
            reply.to_string().contains("Result window is too large"),
            "{reply}"
        );
    }
    assert_eq!(
        call(&b, "POST", "/places/_search?scroll=1m", r#"{"size":10001}"#).0,
        400
    );
    assert_eq!(
        call(&b, "POST", "/places/_search", r#"{"from":9990,"size":10}"#).0,
        200
    );
    assert_eq!(
        call(
            &b,
            "POST",
            "/places/_search?scroll=4000000000000000h",
            r#"{"size":1}"#
        )
        .0,
        400,
        "a keep-alive past any instant is refused"
    );
}

#[test]
fn stats_settings_and_templates_answer_as_elasticsearch_does() {
    let b = Engine::new();
    assert_eq!(call(&b, "PUT", "/_index_template/t", r#"{"index_patterns":["pl*"],"template":{"mappings":{"properties":{"extra":{"type":"keyword"}}}}}"#).0, 200);
    places(&b, 5);
    let (s, stats) = call(&b, "GET", "/_stats", "");
    assert_eq!(
        (s, stats["_all"]["primaries"]["docs"]["count"].as_u64()),
        (200, Some(5))
    );
    assert_eq!(
        call(&b, "GET", "/places/_stats", "").1["indices"]["places"]["total"]["docs"]["count"],
        5
    );
    assert_eq!(
        call(&b, "GET", "/_nodes/stats", "").1["nodes"]["runner-0"]["indices"]["docs"]["count"],
        5
    );
    assert_eq!(
        call(
            &b,
            "POST",
            "/places/_search",
            r#"{"query":{"term":{"extra":"x"}}}"#
        )
        .0,
        200,
        "the template's field is mapped"
    );
    assert_eq!(
        call(&b, "PUT", "/_cluster/settings", r#"{"persistent":{"a":1}}"#).1["persistent"]["a"],
        1
    );
    assert_eq!(
        call(
            &b,
            "PUT",
            "/places/_settings",
            r#"{"index":{"refresh_interval":"-1"}}"#
        )
        .0,
        200
    );
    assert_eq!(call(&b, "DELETE", "/_index_template/t", "").0, 200);
    assert_eq!(call(&b, "DELETE", "/_index_template/t", "").0, 404);
    assert_eq!(call(&b, "GET", "/nope/_stats", "").0, 404);
}

/// A sort on a field one of the searched indices lacks fails that index's shard alone, as in
/// Elasticsearch: the others answer (200, the failure under `_shards.failures`); where every
/// index lacks it, the search fails whole ("all shards failed").
#[test]
fn an_index_lacking_the_sort_field_is_a_failed_shard_not_a_failed_search() {
    let b = Engine::new();
    let with = r#"{"mappings":{"properties":{"pop":{"type":"long"}}}}"#;
    let without = r#"{"mappings":{"properties":{"name":{"type":"keyword"}}}}"#;
    assert_eq!(call(&b, "PUT", "/a", with).0, 200);
    assert_eq!(call(&b, "PUT", "/b", without).0, 200);
    let docs = "{\"index\":{\"_index\":\"a\"}}\n{\"pop\":2}\n{\"index\":{\"_index\":\"a\"}}\n{\"pop\":1}\n{\"index\":{\"_index\":\"b\"}}\n{\"name\":\"x\"}\n";
    assert_eq!(call(&b, "POST", "/_bulk?refresh=true", docs).0, 200);
    let sorted = r#"{"sort":[{"pop":"asc"}]}"#;
    let (s, r) = call(&b, "POST", "/a,b/_search", sorted);
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["_shards"]["total"], 2, "{r}");
    assert_eq!(r["_shards"]["successful"], 1, "{r}");
    assert_eq!(r["_shards"]["failed"], 1, "{r}");
    let failure = &r["_shards"]["failures"][0];
    assert_eq!(failure["index"], "b", "{r}");
    assert_eq!(failure["reason"]["type"], "query_shard_exception", "{r}");
    assert_eq!(
        failure["reason"]["reason"],
        "No mapping found for [pop] in order to sort on"
    );
    assert_eq!(r["hits"]["total"]["value"], 2, "{r}");
    assert_eq!(r["hits"]["hits"][0]["sort"][0], 1, "{r}");
    let (s, r) = call(&b, "POST", "/a,b/_count", r#"{"query":{"match_all":{}}}"#);
    assert_eq!((s, r["_shards"]["total"].clone()), (200, json!(2)), "{r}");
    let (s, r) = call(&b, "POST", "/b/_search", sorted);
    assert_eq!(s, 400, "{r}");
    assert_eq!(
        r["error"]["type"], "search_phase_execution_exception",
        "{r}"
    );
    assert_eq!(r["error"]["reason"], "all shards failed", "{r}");
    assert_eq!(
        r["error"]["root_cause"][0]["type"], "query_shard_exception",
        "{r}"
    );
    assert_eq!(r["error"]["failed_shards"][0]["index"], "b", "{r}");
    // `unmapped_type` names the type the field would have: no failure.
    let typed = r#"{"sort":[{"pop":{"order":"asc","unmapped_type":"long"}}]}"#;
    let (s, r) = call(&b, "POST", "/a/_search", typed);
    assert_eq!((s, r["_shards"]["failed"].clone()), (200, json!(0)), "{r}");
}
