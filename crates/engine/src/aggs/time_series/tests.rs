//! The `time_series` aggregation on a time-series index, as the tsdb track asks it (under a
//! date_histogram, beside a `min_bucket` over its series), the answer worked out by hand.

use crate::index::EmbeddedIndex;
use serde_json::json;

#[test]
fn each_series_is_a_bucket_keyed_by_its_dimensions() {
    let body = json!({
        "settings": {"index": {"mode": "time_series", "routing_path": ["host", "pod"]}},
        "mappings": {"properties": {
            "@timestamp": {"type": "date"},
            "host": {"type": "keyword", "time_series_dimension": true},
            "pod": {"type": "keyword", "time_series_dimension": true},
            "mem": {"type": "long", "time_series_metric": "gauge"}}}});
    let idx = EmbeddedIndex::create("tsdb", &body).unwrap();
    for (t, host, pod, mem) in [
        ("2024-01-01T00:10:00Z", "a", "x", 10),
        ("2024-01-01T00:20:00Z", "a", "x", 20),
        ("2024-01-01T00:30:00Z", "a", "y", 5),
        ("2024-01-01T01:10:00Z", "b", "x", 7),
    ] {
        idx.add_for_test(
            &json!({"@timestamp": t, "host": host, "pod": pod, "mem": mem}).to_string(),
        );
    }
    idx.refresh().unwrap();
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {"by_date": {
            "date_histogram": {"field": "@timestamp", "fixed_interval": "1h"},
            "aggs": {
                "ts": {"time_series": {"keyed": false}, "aggs": {"total": {"sum": {"field": "mem"}}}},
                "least": {"min_bucket": {"buckets_path": "ts>total"}}}}}}))
        .unwrap();
    let fruit = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    let got = plan.aggregations_json(&fruit).unwrap();
    let hours = got["by_date"]["buckets"].as_array().unwrap();
    assert_eq!(hours.len(), 2, "{got}");
    assert_eq!(
        hours[0]["ts"],
        json!({"buckets": [
            {"key": {"host": "a", "pod": "x"}, "doc_count": 2, "total": {"value": 30.0}},
            {"key": {"host": "a", "pod": "y"}, "doc_count": 1, "total": {"value": 5.0}}]})
    );
    assert_eq!(hours[0]["least"]["value"], 5.0);
    assert_eq!(
        hours[1]["ts"]["buckets"][0]["key"],
        json!({"host": "b", "pod": "x"})
    );
    assert_eq!(hours[1]["least"]["value"], 7.0);
    // Not a time-series index, or keyed: named.
    let plain = EmbeddedIndex::create(
        "plain",
        &json!({"mappings": {"properties": {"h": {"type": "keyword"}}}}),
    )
    .unwrap();
    let e = plain
        .compile(&json!({"aggs": {"ts": {"time_series": {"keyed": false}}}}))
        .err()
        .unwrap();
    assert!(e.message.contains("time_series mode"), "{}", e.message);
    let e = idx
        .compile(&json!({"aggs": {"ts": {"time_series": {}}}}))
        .err()
        .unwrap();
    assert!(e.message.contains("keyed"), "{}", e.message);
}
