//! Pipeline aggregations, checked against values worked out by hand from the documents and
//! Elasticsearch's documented definitions.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

/// Sales by day: the 1st 10 + 20 (A, B), the 2nd 5 (A), none on the 3rd, the 4th 40 (B).
fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "cc": {"type": "keyword"}, "at": {"type": "date"}, "n": {"type": "long"}}}});
    let idx = EmbeddedIndex::create("sales", &body).unwrap();
    for (cc, day, n) in [("A", 1, 10), ("B", 1, 20), ("A", 2, 5), ("B", 4, 40)] {
        idx.add_for_test(
            &json!({"cc": cc, "at": format!("2026-01-0{day}T12:00:00Z"), "n": n}).to_string(),
        );
    }
    idx.refresh().unwrap();
    idx
}

fn aggregate(aggs: Value) -> Result<Value, String> {
    let idx = index();
    let plan = idx
        .compile(&json!({"size": 0, "aggs": aggs}))
        .map_err(|e| e.message)?;
    let (_, _, fruit) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    plan.aggregations_json(&fruit.unwrap())
        .map_err(|e| e.message)
}

/// Each bucket's `name.value` (None where the bucket has no such key).
fn column(agg: &Value, name: &str) -> Vec<Option<Value>> {
    agg["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.get(name).map(|v| v["value"].clone()))
        .collect()
}

#[test]
fn parent_pipelines_in_a_date_histogram() {
    let got = aggregate(json!({
        "per_day": {"date_histogram": {"field": "at", "calendar_interval": "day"}, "aggs": {
            "sales": {"sum": {"field": "n"}},
            "mean": {"avg": {"field": "n"}},
            "d": {"derivative": {"buckets_path": "sales"}},
            "d_mean": {"derivative": {"buckets_path": "mean"}},
            "d_zeros": {"derivative": {"buckets_path": "mean", "gap_policy": "insert_zeros"}},
            "cum": {"cumulative_sum": {"buckets_path": "sales"}},
            "mv": {"moving_fn": {"buckets_path": "sales", "window": 2, "script": "MovingFunctions.unweightedAvg(values)"}},
            "ratio": {"bucket_script": {"buckets_path": {"s": "sales", "c": "_count"}, "script": "params.s / params.c"}},
        }}
    }))
    .unwrap();
    let day = &got["per_day"];
    let n = |v: f64| Some(json!(v));
    // Sales 30, 5, 0, 40; means 15, 5, none, 40; counts 2, 1, 0, 1.
    assert_eq!(column(day, "d"), [None, n(-25.0), n(-5.0), n(40.0)]);
    assert_eq!(column(day, "d_mean"), [None, n(-10.0), None, None]);
    assert_eq!(column(day, "d_zeros"), [None, n(-10.0), n(-5.0), n(40.0)]);
    assert_eq!(column(day, "cum"), [n(30.0), n(35.0), n(35.0), n(75.0)]);
    // The window is the two buckets before each (none before the first: null).
    assert_eq!(
        column(day, "mv"),
        [Some(Value::Null), n(30.0), n(17.5), n(2.5)]
    );
    // 0 / 0 is NaN, which Elasticsearch shows as null.
    assert_eq!(
        column(day, "ratio"),
        [n(15.0), n(5.0), Some(Value::Null), n(40.0)]
    );
}

#[test]
fn sibling_pipelines_beside_a_histogram() {
    let got = aggregate(json!({
        "per_day": {"date_histogram": {"field": "at", "calendar_interval": "day"}, "aggs": {"sales": {"sum": {"field": "n"}}}},
        "max_day": {"max_bucket": {"buckets_path": "per_day>sales"}},
        "min_day": {"min_bucket": {"buckets_path": "per_day>sales"}},
        "avg_day": {"avg_bucket": {"buckets_path": "per_day>sales"}},
        "sum_day": {"sum_bucket": {"buckets_path": "per_day>sales"}},
        "counts": {"stats_bucket": {"buckets_path": "per_day>_count"}},
    }))
    .unwrap();
    assert_eq!(
        got["max_day"],
        json!({"value": 40.0, "keys": ["2026-01-04T00:00:00.000Z"]})
    );
    assert_eq!(
        got["min_day"],
        json!({"value": 0.0, "keys": ["2026-01-03T00:00:00.000Z"]})
    );
    assert_eq!(got["avg_day"]["value"], json!(18.75));
    assert_eq!(got["sum_day"]["value"], json!(75.0));
    assert_eq!(
        got["counts"],
        json!({"count": 4, "min": 0.0, "max": 2.0, "avg": 1.0, "sum": 4.0})
    );
}

#[test]
fn selecting_and_sorting_terms_buckets() {
    let got = aggregate(json!({
        "by_cc": {"terms": {"field": "cc"}, "aggs": {
            "sales": {"sum": {"field": "n"}},
            "big": {"bucket_selector": {"buckets_path": {"s": "sales"}, "script": "params.s > 20"}},
        }},
        "top": {"terms": {"field": "cc"}, "aggs": {
            "sales": {"sum": {"field": "n"}},
            "sorted": {"bucket_sort": {"sort": [{"sales": {"order": "asc"}}], "size": 1}},
        }},
    }))
    .unwrap();
    // A sold 15, B 60.
    let keys = |agg: &Value| -> Vec<Value> {
        agg["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["key"].clone())
            .collect()
    };
    assert_eq!(keys(&got["by_cc"]), [json!("B")]);
    assert_eq!(keys(&got["top"]), [json!("A")]);
}

#[test]
fn pipelines_are_checked_before_the_search() {
    for (aggs, says) in [
        (
            json!({"d": {"derivative": {"buckets_path": "x"}}}),
            "inside a multi-bucket aggregation",
        ),
        (
            json!({"t": {"terms": {"field": "cc"}, "aggs": {"s": {"sum": {"field": "n"}}, "d": {"derivative": {"buckets_path": "s"}}}}}),
            "must have a histogram, date_histogram or auto_date_histogram as parent",
        ),
        (
            json!({"h": {"histogram": {"field": "n", "interval": 10}}, "m": {"max_bucket": {"buckets_path": "nope>x"}}}),
            "No aggregation found for path [nope>x]",
        ),
        (
            json!({"h": {"histogram": {"field": "n", "interval": 10}, "aggs": {"b": {"bucket_script": {"buckets_path": {"c": "_count"}, "script": "x -> 1"}}}}}),
            "lambdas",
        ),
        (
            json!({"h": {"histogram": {"field": "n", "interval": 10}}, "m": {"moving_avg": {"buckets_path": "h>_count"}}}),
            "moving_fn",
        ),
        (
            json!({"f": {"filter": {"term": {"cc": "A"}}, "aggs": {"s": {"sum": {"field": "n"}}, "b": {"bucket_script": {"buckets_path": {"s": "s"}, "script": "params.s"}}}}}),
            "inside a multi-bucket aggregation",
        ),
        (
            json!({"f": {"filters": {"filters": {"a": {"term": {"cc": "A"}}}}, "aggs": {"s": {"sum": {"field": "n"}}, "b": {"bucket_script": {"buckets_path": {"s": "s"}, "script": "params.s"}}}}}),
            "under a `filters` aggregation",
        ),
    ] {
        let e = aggregate(aggs.clone()).unwrap_err();
        assert!(e.contains(says), "{aggs}: {e}");
    }
    // A script that fails on the results fails the search.
    let e = aggregate(json!({"h": {"histogram": {"field": "n", "interval": 10}, "aggs": {
        "b": {"bucket_script": {"buckets_path": {"c": "_count"}, "script": "params.c + params.nope.size()"}}}}}))
    .unwrap_err();
    assert!(
        e.contains("NullPointerException") && e.contains("`size`"),
        "{e}"
    );
}
