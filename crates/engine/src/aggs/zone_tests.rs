//! Date histograms in time zones, checked against what Elasticsearch's documentation states
//! for the same dates: bucket keys (UTC epoch ms) and `key_as_string`s written out by hand from
//! the zone's rules (Europe/Vienna: CET +01:00, CEST +02:00 from 2016-03-27 01:00Z to
//! 2016-10-30 01:00Z; America/New_York: EST -05:00, EDT -04:00 from 2016-03-13 07:00Z).

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

fn ms(text: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(text)
        .unwrap()
        .timestamp_millis()
}

fn index(docs: &[(&str, &str)]) -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "cc": {"type": "keyword"}, "at": {"type": "date"}, "n": {"type": "long"}}}});
    let idx = EmbeddedIndex::create("dates", &body).unwrap();
    for (i, (cc, at)) in docs.iter().enumerate() {
        idx.add_for_test(&json!({"cc": cc, "at": at, "n": i}).to_string());
    }
    idx.refresh().unwrap();
    idx
}

fn aggregate(idx: &EmbeddedIndex, aggs: Value) -> Value {
    let plan = idx.compile(&json!({"size": 0, "aggs": aggs})).unwrap();
    let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    plan.aggregations_json(&aggs.unwrap()).unwrap()
}

/// Each bucket as (key as UTC text, key_as_string, doc_count).
fn buckets(agg: &Value) -> Vec<(String, String, u64)> {
    agg["buckets"]
        .as_array()
        .unwrap_or_else(|| panic!("buckets in {agg}"))
        .iter()
        .map(|b| {
            let key = b["key"].as_f64().unwrap() as i64;
            let utc = chrono::DateTime::from_timestamp_millis(key).unwrap();
            (
                utc.format("%Y-%m-%dT%H:%MZ").to_string(),
                b["key_as_string"].as_str().unwrap().to_string(),
                b["doc_count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn b(key: &str, text: &str, n: u64) -> (String, String, u64) {
    (key.to_string(), text.to_string(), n)
}

#[test]
fn a_day_across_the_spring_transition_holds_23_hours() {
    let idx = index(&[
        ("A", "2016-03-26T22:30:00Z"), // 23:30 CET, the 26th
        ("A", "2016-03-26T23:30:00Z"), // 00:30 CET, the 27th
        ("B", "2016-03-27T21:30:00Z"), // 23:30 CEST, the 27th
        ("B", "2016-03-27T22:30:00Z"), // 00:30 CEST, the 28th
    ]);
    let got = aggregate(
        &idx,
        json!({"d": {"date_histogram": {"field": "at", "calendar_interval": "day", "time_zone": "Europe/Vienna"},
            "aggs": {"total": {"sum": {"field": "n"}}}}}),
    );
    assert_eq!(
        buckets(&got["d"]),
        [
            b("2016-03-25T23:00Z", "2016-03-26T00:00:00.000+01:00", 1),
            b("2016-03-26T23:00Z", "2016-03-27T00:00:00.000+01:00", 2),
            b("2016-03-27T22:00Z", "2016-03-28T00:00:00.000+02:00", 1),
        ]
    );
    // Sub-aggregations run in each bucket: documents 1 and 2 are the 27th.
    assert_eq!(got["d"]["buckets"][1]["total"]["value"], 3.0);
}

#[test]
fn the_repeated_autumn_hour_is_two_hourly_buckets_under_a_terms() {
    let idx = index(&[
        ("A", "2016-10-30T00:30:00Z"), // 02:30 CEST
        ("A", "2016-10-30T01:30:00Z"), // 02:30 CET, the same wall clock
        ("B", "2016-10-30T03:10:00Z"), // 04:10 CET
        ("B", "2016-10-30T05:10:00Z"), // 06:10 CET
    ]);
    let got = aggregate(
        &idx,
        json!({"cc": {"terms": {"field": "cc"}, "aggs": {
            "h": {"date_histogram": {"field": "at", "fixed_interval": "1h", "time_zone": "Europe/Vienna"}}}}}),
    );
    let by_cc: Vec<&Value> = got["cc"]["buckets"].as_array().unwrap().iter().collect();
    assert_eq!(by_cc[0]["key"], "A");
    assert_eq!(
        buckets(&by_cc[0]["h"]),
        [
            b("2016-10-30T00:00Z", "2016-10-30T02:00:00.000+02:00", 1),
            b("2016-10-30T01:00Z", "2016-10-30T02:00:00.000+01:00", 1),
        ]
    );
    // Each parent shows its own first to last bucket, the empty one between included.
    assert_eq!(
        buckets(&by_cc[1]["h"]),
        [
            b("2016-10-30T03:00Z", "2016-10-30T04:00:00.000+01:00", 1),
            b("2016-10-30T04:00Z", "2016-10-30T05:00:00.000+01:00", 0),
            b("2016-10-30T05:00Z", "2016-10-30T06:00:00.000+01:00", 1),
        ]
    );
}

#[test]
fn months_in_new_york_with_a_format_keyed_and_min_doc_count() {
    let idx = index(&[
        ("A", "2016-01-01T04:59:00Z"), // 23:59 EST, 31 December 2015
        ("A", "2016-01-01T05:00:00Z"), // midnight EST, 1 January
        ("A", "2016-03-31T12:00:00Z"),
        ("A", "2016-04-01T03:59:00Z"), // 23:59 EDT, 31 March
    ]);
    let got = aggregate(
        &idx,
        json!({
            "m": {"date_histogram": {"field": "at", "calendar_interval": "month", "time_zone": "America/New_York", "format": "yyyy-MM"}},
            "k": {"date_histogram": {"field": "at", "calendar_interval": "1M", "time_zone": "America/New_York", "keyed": true, "min_doc_count": 1}},
        }),
    );
    assert_eq!(
        buckets(&got["m"]),
        [
            b("2015-12-01T05:00Z", "2015-12", 1),
            b("2016-01-01T05:00Z", "2016-01", 1),
            b("2016-02-01T05:00Z", "2016-02", 0),
            b("2016-03-01T05:00Z", "2016-03", 2),
        ]
    );
    let keyed = got["k"]["buckets"].as_object().unwrap();
    let keys: Vec<&String> = keyed.keys().collect();
    assert_eq!(
        keys,
        [
            "2015-12-01T00:00:00.000-05:00",
            "2016-01-01T00:00:00.000-05:00",
            "2016-03-01T00:00:00.000-05:00"
        ]
    );
    assert_eq!(
        keyed["2016-03-01T00:00:00.000-05:00"]["key"].as_f64(),
        Some(ms("2016-03-01T05:00:00Z") as f64)
    );
}

#[test]
fn a_fixed_offset_runs_on_tantivy_as_elasticsearchs_documentation_shows() {
    // The documentation's example: with time_zone -01:00, 2015-10-01T00:30Z is in the bucket
    // of 30 September, keyed 2015-09-30T01:00:00Z.
    let idx = index(&[("A", "2015-10-01T00:30:00Z"), ("A", "2015-10-01T01:30:00Z")]);
    let got = aggregate(
        &idx,
        json!({
            "z": {"date_histogram": {"field": "at", "calendar_interval": "day", "time_zone": "-01:00"}},
            "utc": {"date_histogram": {"field": "at", "calendar_interval": "day"}},
            "shifted": {"date_histogram": {"field": "at", "fixed_interval": "1d", "offset": "+6h", "format": "yyyy-MM-dd HH:mm"}},
        }),
    );
    assert_eq!(
        buckets(&got["z"]),
        [
            b("2015-09-30T01:00Z", "2015-09-30T00:00:00.000-01:00", 1),
            b("2015-10-01T01:00Z", "2015-10-01T00:00:00.000-01:00", 1),
        ]
    );
    assert_eq!(
        buckets(&got["utc"]),
        [b("2015-10-01T00:00Z", "2015-10-01T00:00:00.000Z", 2)]
    );
    assert_eq!(
        buckets(&got["shifted"]),
        [b("2015-09-30T06:00Z", "2015-09-30 06:00", 2)]
    );
}

#[test]
fn an_auto_date_histogram_rounds_on_the_zones_clock() {
    let idx = index(&[
        ("A", "2016-03-26T22:30:00Z"),
        ("A", "2016-03-27T12:00:00Z"),
        ("A", "2016-03-28T12:00:00Z"),
    ]);
    let got = aggregate(
        &idx,
        json!({"a": {"auto_date_histogram": {"field": "at", "buckets": 3, "time_zone": "Europe/Vienna"}}}),
    );
    assert_eq!(got["a"]["interval"], "1d");
    assert_eq!(
        buckets(&got["a"]),
        [
            b("2016-03-25T23:00Z", "2016-03-26T00:00:00.000+01:00", 1),
            b("2016-03-26T23:00Z", "2016-03-27T00:00:00.000+01:00", 1),
            b("2016-03-27T22:00Z", "2016-03-28T00:00:00.000+02:00", 1),
        ]
    );
}
