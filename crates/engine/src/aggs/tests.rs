//! Aggregation results checked against what Elasticsearch returns for the same data: the
//! expected bucket keys, doc counts and metric values are computed here, independently, from
//! the documents, by Elasticsearch's documented semantics.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};
use std::collections::BTreeMap;

struct Doc {
    cc: &'static str,
    pop: i64,
    score: f64,
    /// Day of January 2026 (1..=28), at 06:00 UTC.
    day: u32,
}

fn docs() -> Vec<Doc> {
    const CC: [&str; 5] = ["AT", "DE", "FR", "IT", "CH"];
    (0..300u64)
        .map(|i| Doc {
            // Uneven: AT 120, DE 75, FR 50, IT 35, CH 20.
            cc: CC[match i % 60 {
                0..=23 => 0,
                24..=38 => 1,
                39..=48 => 2,
                49..=55 => 3,
                _ => 4,
            }],
            pop: ((i * 7919) % 1000) as i64,
            score: ((i * 37) % 100) as f64 + 0.5,
            day: 1 + (i % 28) as u32,
        })
        .collect()
}

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "cc": {"type": "keyword"},
        "name": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
        "pop": {"type": "long"},
        "score": {"type": "double"},
        "at": {"type": "date"},
    }}});
    let idx = EmbeddedIndex::create("places", &body).unwrap();
    for (i, d) in docs().iter().enumerate() {
        let source = json!({
            "cc": d.cc, "name": format!("town {}", i % 7), "pop": d.pop, "score": d.score,
            "at": format!("2026-01-{:02}T06:00:00Z", d.day),
        })
        .to_string();
        idx.add_for_test(&source);
    }
    idx.refresh().unwrap();
    idx
}

/// The response's `aggregations` of a `size: 0` search with these aggs.
fn aggregate(idx: &EmbeddedIndex, aggs: Value) -> Value {
    let plan = idx.compile(&json!({"size": 0, "aggs": aggs})).unwrap();
    let (total, hits, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert_eq!((total, hits.len()), (300, 0));
    plan.aggregations_json(&aggs.unwrap()).unwrap()
}

fn refused(idx: &EmbeddedIndex, aggs: Value) -> String {
    idx.compile(&json!({"aggs": aggs})).err().unwrap().message
}

fn close(got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("a number, got {got}"));
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1.0),
        "{got} != {want}"
    );
}

#[test]
fn terms_with_a_sub_aggregation_as_elasticsearch_buckets_them() {
    let idx = index();
    let d = docs();
    let mut counts: BTreeMap<&str, (u64, i64)> = BTreeMap::new();
    for doc in &d {
        let e = counts.entry(doc.cc).or_default();
        e.0 += 1;
        e.1 += doc.pop;
    }
    // Elasticsearch: by doc_count descending, ties by key ascending; `size` 3 leaves the rest
    // in sum_other_doc_count.
    let mut want: Vec<(&str, u64, i64)> = counts.iter().map(|(k, (n, s))| (*k, *n, *s)).collect();
    want.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let got = aggregate(
        &idx,
        json!({"by_cc": {"terms": {"field": "cc", "size": 3}, "aggs": {"pop": {"sum": {"field": "pop"}}}}}),
    );
    let buckets = got["by_cc"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 3);
    for (b, (key, n, sum)) in buckets.iter().zip(&want) {
        assert_eq!(
            (b["key"].as_str().unwrap(), b["doc_count"].as_u64().unwrap()),
            (*key, *n)
        );
        close(&b["pop"]["value"], *sum as f64);
    }
    let rest: u64 = want[3..].iter().map(|w| w.1).sum();
    assert_eq!(got["by_cc"]["sum_other_doc_count"], rest);
    // A multi-field aggregates its parent's value.
    let names = aggregate(
        &idx,
        json!({"n": {"terms": {"field": "name.raw", "size": 10}}}),
    );
    let keys: Vec<&str> = names["n"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 7);
    assert!(
        keys.contains(&"town 0") && keys.contains(&"town 6"),
        "{keys:?}"
    );
}

#[test]
fn metrics_are_exact_and_percentiles_close() {
    let idx = index();
    let pops: Vec<f64> = docs().iter().map(|d| d.pop as f64).collect();
    let n = pops.len() as f64;
    let sum: f64 = pops.iter().sum();
    let (min, max) = pops
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), &p| (a.min(p), b.max(p)));
    let got = aggregate(
        &idx,
        json!({
            "avg": {"avg": {"field": "pop"}}, "min": {"min": {"field": "pop"}},
            "max": {"max": {"field": "pop"}}, "sum": {"sum": {"field": "pop"}},
            "count": {"value_count": {"field": "pop"}}, "stats": {"stats": {"field": "pop"}},
            "ext": {"extended_stats": {"field": "pop"}},
            "distinct": {"cardinality": {"field": "cc"}},
            "pct": {"percentiles": {"field": "pop", "percents": [50, 99]}},
        }),
    );
    close(&got["avg"]["value"], sum / n);
    close(&got["min"]["value"], min);
    close(&got["max"]["value"], max);
    close(&got["sum"]["value"], sum);
    close(&got["count"]["value"], n);
    let s = &got["stats"];
    assert_eq!(s["count"], 300);
    close(&s["min"], min);
    close(&s["max"], max);
    close(&s["avg"], sum / n);
    close(&s["sum"], sum);
    let mean = sum / n;
    let variance = pops.iter().map(|p| (p - mean).powi(2)).sum::<f64>() / n;
    close(&got["ext"]["variance"], variance);
    close(&got["ext"]["std_deviation"], variance.sqrt());
    close(&got["distinct"]["value"], 5.0);
    // Elasticsearch's percentiles are estimates (t-digest); tantivy's (DDSketch) hold a 1%
    // relative error. Both sit near the exact rank.
    let mut sorted = pops.clone();
    sorted.sort_by(f64::total_cmp);
    for (p, key) in [(50.0, "50.0"), (99.0, "99.0")] {
        let exact = sorted[((p / 100.0) * (n - 1.0)).round() as usize];
        let v = got["pct"]["values"][key]
            .as_f64()
            .unwrap_or_else(|| panic!("{}", got["pct"]));
        assert!(
            (v - exact).abs() <= 0.02 * exact + 5.0,
            "p{p}: {v} against {exact}"
        );
    }
}

#[test]
fn histograms_and_ranges_bucket_as_elasticsearch_does() {
    let idx = index();
    let d = docs();
    let got = aggregate(
        &idx,
        json!({
            "h": {"histogram": {"field": "pop", "interval": 250}},
            "days": {"date_histogram": {"field": "at", "calendar_interval": "day"}},
            "weeks": {"date_histogram": {"field": "at", "calendar_interval": "week", "time_zone": "UTC"}},
            "r": {"range": {"field": "score", "ranges": [{"to": 10}, {"from": 10, "to": 50}, {"from": 50}]}},
        }),
    );
    // Histogram keys are floor(value / interval) * interval.
    let mut want: BTreeMap<i64, u64> = BTreeMap::new();
    for doc in &d {
        *want.entry(doc.pop / 250 * 250).or_default() += 1;
    }
    let h: Vec<(i64, u64)> = got["h"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["key"].as_f64().unwrap() as i64,
                b["doc_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(h, want.into_iter().collect::<Vec<_>>());
    // One bucket a day, keyed by the day's first millisecond (UTC).
    let days = got["days"]["buckets"].as_array().unwrap();
    assert_eq!(days.len(), 28);
    let jan1 = 1_767_225_600_000i64; // 2026-01-01T00:00:00Z
    for (k, b) in days.iter().enumerate() {
        assert_eq!(
            b["key"].as_f64().unwrap() as i64,
            jan1 + k as i64 * 86_400_000
        );
        let n = d.iter().filter(|x| x.day == k as u32 + 1).count() as u64;
        assert_eq!(b["doc_count"], n);
    }
    // Calendar weeks start on Monday: 2025-12-29, 2026-01-05, -12, -19, -26.
    let monday = jan1 - 3 * 86_400_000;
    let weeks = got["weeks"]["buckets"].as_array().unwrap();
    let keys: Vec<i64> = weeks
        .iter()
        .map(|b| b["key"].as_f64().unwrap() as i64)
        .collect();
    assert_eq!(
        keys,
        (0..5)
            .map(|w| monday + w * 7 * 86_400_000)
            .collect::<Vec<_>>()
    );
    let first_week = d.iter().filter(|x| x.day <= 4).count() as u64;
    assert_eq!(weeks[0]["doc_count"], first_week);
    // Ranges include `from` and exclude `to`.
    let r = got["r"]["buckets"].as_array().unwrap();
    let count =
        |lo: f64, hi: f64| d.iter().filter(|x| x.score >= lo && x.score < hi).count() as u64;
    assert_eq!(r[0]["doc_count"], count(f64::MIN, 10.0));
    assert_eq!(r[1]["doc_count"], count(10.0, 50.0));
    assert_eq!(r[2]["doc_count"], count(50.0, f64::MAX));
}

#[test]
fn what_the_engine_lacks_is_named_never_run_as_something_else() {
    let idx = index();
    for (aggs, says) in [
        (
            json!({"s": {"significant_text": {"field": "name"}}}),
            "`aggs.s` is a `significant_text`",
        ),
        (
            json!({"f": {"filters": {"filters": {}}}}),
            "at least one query",
        ),
        (
            json!({"f": {"filters": {"filters": {"a": {"match_all": {}}}, "other_bucket": true}}}),
            "`other_bucket`",
        ),
        (
            json!({"f": {"filter": {"more_like_this": {"fields": ["q"]}}}}),
            "query type `more_like_this`",
        ),
        (json!({"f": {"filter": {"fuzzy": {"cc": "x"}}}}), "fuzzy"),
        (
            json!({"t": {"terms": {"field": "name"}}}),
            "`name` is a text field",
        ),
        (
            json!({"t": {"terms": {"field": "cc", "no_such": 1}}}),
            "parameter `no_such`",
        ),
        (
            json!({"m": {"date_histogram": {"field": "at", "calendar_interval": "2M"}}}),
            "could not be parsed as a calendar interval",
        ),
        (
            json!({"z": {"date_histogram": {"field": "at", "fixed_interval": "1d", "time_zone": "Mars/Base"}}}),
            "unknown time zone `Mars/Base`",
        ),
        (
            json!({"t": {"terms": {"field": "cc"}, "aggs": {"b": {"serial_diff": {}}}}}),
            "pipeline aggregations it runs",
        ),
        (json!({"s": {"sum": {"script": "doc.pop"}}}), "scripts"),
    ] {
        let e = refused(&idx, aggs.clone());
        assert!(e.contains(says), "{aggs}: {e}");
    }
}

#[test]
fn a_search_with_hits_and_aggregations_collects_both_in_one_pass() {
    let idx = index();
    let plan = idx
        .compile(&json!({"query": {"term": {"cc": "AT"}}, "size": 2, "aggs": {"m": {"max": {"field": "pop"}}}}))
        .unwrap();
    let (total, hits, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    let all = docs();
    let at: Vec<&Doc> = all.iter().filter(|d| d.cc == "AT").collect();
    assert_eq!((total, hits.len()), (at.len() as u64, 2));
    let max = at.iter().map(|d| d.pop).max().unwrap() as f64;
    close(
        &plan.aggregations_json(&aggs.unwrap()).unwrap()["m"]["value"],
        max,
    );
}

#[test]
fn filter_and_filters_bucket_as_elasticsearch_does() {
    let idx = index();
    let d = docs();
    let got = aggregate(
        &idx,
        json!({
            "at": {"filter": {"term": {"cc": "AT"}}, "aggs": {"pop": {"sum": {"field": "pop"}}}},
            "by": {
                "filters": {"filters": {
                    "big": {"range": {"pop": {"gte": 500}}},
                    "de": {"bool": {"filter": [{"term": {"cc": "DE"}}]}}
                }},
                "aggs": {"n": {"value_count": {"field": "pop"}}}
            },
            "list": {"filters": {"filters": [{"term": {"cc": "FR"}}, {"match_all": {}}]}},
            "t": {"terms": {"field": "cc"}, "aggs": {"rich": {"filter": {"range": {"pop": {"gte": 500}}}}}}
        }),
    );
    let count = |f: &dyn Fn(&Doc) -> bool| d.iter().filter(|x| f(x)).count() as u64;
    assert_eq!(got["at"]["doc_count"], json!(120));
    let at_pop: i64 = d.iter().filter(|x| x.cc == "AT").map(|x| x.pop).sum();
    close(&got["at"]["pop"]["value"], at_pop as f64);
    let big = count(&|x| x.pop >= 500);
    assert_eq!(got["by"]["buckets"]["big"]["doc_count"], json!(big));
    close(&got["by"]["buckets"]["big"]["n"]["value"], big as f64);
    assert_eq!(got["by"]["buckets"]["de"]["doc_count"], json!(75));
    assert_eq!(
        got["list"]["buckets"],
        json!([{"doc_count": 50}, {"doc_count": 300}])
    );
    for b in got["t"]["buckets"].as_array().unwrap() {
        let cc = b["key"].as_str().unwrap();
        let want = count(&|x| x.cc == cc && x.pop >= 500);
        assert_eq!(b["rich"]["doc_count"], json!(want), "{cc}");
    }
    assert!(
        got.as_object()
            .unwrap()
            .keys()
            .all(|k| !k.contains(['\u{1}', '\u{2}'])),
        "{got}"
    );
}

#[test]
fn date_ranges_bucket_and_show_as_elasticsearch_does() {
    let idx = index();
    let d = docs();
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {
            "periods": {"date_range": {"field": "at", "ranges": [
                {"from": "2026-01-20", "key": "late"},
                {"to": "2026-01-10"},
                {"from": "2026-01-10", "to": "2026-01-20"}
            ]}, "aggs": {"pop": {"sum": {"field": "pop"}}}},
            "keyed": {"date_range": {"field": "at", "keyed": true, "ranges": [{"from": 1767225600000i64, "to": "2026-01-05"}]}}
        }}))
        .unwrap();
    let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    let got = plan.aggregations_json(&aggs.unwrap()).unwrap();
    let buckets = got["periods"]["buckets"].as_array().unwrap();
    let ms = |day: u32| {
        chrono::NaiveDate::from_ymd_opt(2026, 1, day)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp_millis() as f64
    };
    // Sorted by `from` (the open one first), as Elasticsearch sorts them.
    assert_eq!(buckets[0]["key"], "*-2026-01-10T00:00:00.000Z");
    assert_eq!(buckets[0]["to"], json!(ms(10)));
    assert_eq!(buckets[0]["to_as_string"], "2026-01-10T00:00:00.000Z");
    assert!(buckets[0].get("from").is_none());
    assert_eq!(
        buckets[1]["key"],
        "2026-01-10T00:00:00.000Z-2026-01-20T00:00:00.000Z"
    );
    assert_eq!(buckets[2]["key"], "late");
    assert_eq!(buckets[2]["from"], json!(ms(20)));
    let count = |lo: u32, hi: u32| d.iter().filter(|x| x.day >= lo && x.day < hi).count() as u64;
    let pop = |lo: u32, hi: u32| -> i64 {
        d.iter()
            .filter(|x| x.day >= lo && x.day < hi)
            .map(|x| x.pop)
            .sum()
    };
    for (b, (lo, hi)) in buckets.iter().zip([(1, 10), (10, 20), (20, 29)]) {
        assert_eq!(b["doc_count"], json!(count(lo, hi)), "{b}");
        close(&b["pop"]["value"], pop(lo, hi) as f64);
    }
    assert_eq!(buckets.len(), 3, "no gap buckets: {got}");
    let keyed = &got["keyed"]["buckets"]["2026-01-01T00:00:00.000Z-2026-01-05T00:00:00.000Z"];
    assert_eq!(keyed["doc_count"], json!(count(1, 5)), "{got}");
    // Date math: from the 5th (rounded down to its day) to before the 10th.
    let math = aggregate(
        &idx,
        json!({"m": {"date_range": {"field": "at", "ranges": [{"from": "2026-01-01||+4d/d", "to": "2026-01-10T11:00:00Z||/d"}]}}}),
    );
    assert_eq!(
        math["m"]["buckets"][0]["doc_count"],
        json!(count(5, 10)),
        "{math}"
    );
    for (aggs, says) in [
        (
            json!({"r": {"date_range": {"field": "at", "ranges": [{"from": "now-10q"}]}}}),
            "date math",
        ),
        (
            json!({"r": {"date_range": {"field": "pop", "ranges": [{"to": 1}]}}}),
            "needs a date field",
        ),
    ] {
        let e = refused(&idx, aggs.clone());
        assert!(e.contains(says), "{aggs}: {e}");
    }
    // A `format` reads and prints the bounds, on the `time_zone`'s clock: the 5th at +05:00
    // starts at 19:00Z on the 4th.
    let zoned = aggregate(
        &idx,
        json!({"z": {"date_range": {"field": "at", "format": "dd-MM-yyyy", "time_zone": "+05:00",
            "ranges": [{"from": "05-01-2026", "to": "10-01-2026"}]}}}),
    );
    let b = &zoned["z"]["buckets"][0];
    assert_eq!(b["from"], json!(ms(5) - 5.0 * 3_600_000.0), "{zoned}");
    assert_eq!(b["from_as_string"], "05-01-2026");
    assert_eq!(b["key"], "05-01-2026-10-01-2026");
    assert_eq!(b["doc_count"], json!(count(5, 10)));
}

#[test]
fn auto_date_histograms_pick_elasticsearch_s_rounding() {
    let idx = index();
    let d = docs();
    let day = |n: u32| {
        chrono::NaiveDate::from_ymd_opt(2026, 1, n)
            .unwrap()
            .and_hms_opt(0, 0, 0)
            .unwrap()
            .and_utc()
            .timestamp_millis()
    };
    let in_days = |lo: u32, hi: u32| d.iter().filter(move |x| x.day >= lo && x.day < hi);
    let run = |body: Value| {
        let plan = idx.compile(&body).unwrap();
        let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
        plan.aggregations_json(&aggs.unwrap()).unwrap()["t"].clone()
    };
    // Days 1 to 28: 28 daily buckets are more than 10, 4 weekly ones are not.
    let got = run(
        json!({"size": 0, "aggs": {"t": {"auto_date_histogram": {"field": "at"},
        "aggs": {"pop": {"sum": {"field": "pop"}}}}}}),
    );
    assert_eq!(got["interval"], "7d", "{got}");
    let buckets = got["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 4);
    for (b, start) in buckets.iter().zip([1, 8, 15, 22]) {
        assert_eq!(b["key"], json!(day(start)), "{b}");
        assert_eq!(
            b["doc_count"],
            json!(in_days(start, start + 7).count()),
            "{b}"
        );
        close(
            &b["pop"]["value"],
            in_days(start, start + 7).map(|x| x.pop).sum::<i64>() as f64,
        );
    }
    assert_eq!(buckets[0]["key_as_string"], "2026-01-01T00:00:00.000Z");
    let got = run(
        json!({"size": 0, "aggs": {"t": {"auto_date_histogram": {"field": "at", "buckets": 30}}}}),
    );
    assert_eq!(
        (
            got["interval"].as_str(),
            got["buckets"].as_array().unwrap().len()
        ),
        (Some("1d"), 28)
    );
    let got = run(
        json!({"size": 0, "aggs": {"t": {"auto_date_histogram": {"field": "at", "buckets": 3}}}}),
    );
    assert_eq!(got["interval"], "1M");
    assert_eq!(got["buckets"][0]["doc_count"], json!(d.len()));
    // Days 3 to 5 at 06:00: 48 hours; 12-hour buckets from 06:00, the empty ones included.
    let got = run(
        json!({"size": 0, "query": {"range": {"at": {"gte": "2026-01-03", "lt": "2026-01-06"}}},
        "aggs": {"t": {"auto_date_histogram": {"field": "at"}}}}),
    );
    assert_eq!(got["interval"], "12h", "{got}");
    let counts: Vec<u64> = got["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["doc_count"].as_u64().unwrap())
        .collect();
    let per_day = in_days(3, 4).count() as u64;
    assert_eq!(counts, [per_day, 0, per_day, 0, per_day]);
    // No match: no buckets.
    let got = run(
        json!({"size": 0, "query": {"term": {"cc": "none"}}, "aggs": {"t": {"auto_date_histogram": {"field": "at"}}}}),
    );
    assert_eq!(got["buckets"], json!([]));
    assert!(refused(&idx, json!({"a": {"terms": {"field": "cc"}, "aggs": {"t": {"auto_date_histogram": {"field": "at"}}}}})).contains("top level"));
}

#[test]
fn significant_terms_score_the_foreground_against_the_index() {
    let idx = index();
    let d = docs();
    // The foreground: documents of the first week.
    let fg: Vec<&Doc> = d.iter().filter(|x| x.day <= 7).collect();
    let plan = idx
        .compile(
            &json!({"size": 0, "query": {"range": {"at": {"lt": "2026-01-08"}}},
            "aggs": {"sig": {"significant_terms": {"field": "cc", "min_doc_count": 1}}}}),
        )
        .unwrap();
    let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    let got = plan.aggregations_json(&aggs.unwrap()).unwrap()["sig"].clone();
    assert_eq!(got["doc_count"], json!(fg.len()));
    assert_eq!(got["bg_count"], json!(d.len()));
    // JLH, computed here: (fg% - bg%) * fg% / bg% for the terms more common in the foreground.
    let mut want: Vec<(String, f64, u64, u64)> = ["AT", "DE", "FR", "IT", "CH"]
        .iter()
        .map(|cc| {
            let f = fg.iter().filter(|x| x.cc == *cc).count() as u64;
            let b = d.iter().filter(|x| x.cc == *cc).count() as u64;
            let (fp, bp) = (f as f64 / fg.len() as f64, b as f64 / d.len() as f64);
            (
                cc.to_string(),
                if fp > bp { (fp - bp) * fp / bp } else { 0.0 },
                f,
                b,
            )
        })
        .filter(|w| w.1 > 0.0)
        .collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    let buckets = got["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), want.len(), "{got}");
    assert!(!want.is_empty());
    for (b, (cc, score, f, bg)) in buckets.iter().zip(&want) {
        assert_eq!(
            (
                b["key"].as_str(),
                b["doc_count"].as_u64(),
                b["bg_count"].as_u64()
            ),
            (Some(cc.as_str()), Some(*f), Some(*bg))
        );
        close(&b["score"], *score);
    }
    assert!(refused(
        &idx,
        json!({"s": {"significant_terms": {"field": "cc", "background_filter": {"match_all": {}}}}})
    )
    .contains("background_filter"));
}

#[test]
fn calendar_date_histograms_bucket_by_month_quarter_and_year() {
    let body = json!({"mappings": {"properties": {"at": {"type": "date"}, "n": {"type": "long"}}}});
    let idx = EmbeddedIndex::create("cal", &body).unwrap();
    // Three in November 2025, none in December or January, two in February 2026.
    for (at, n) in [
        ("2025-11-03", 1),
        ("2025-11-20", 2),
        ("2025-11-30T23:59:59Z", 3),
        ("2026-02-01", 4),
        ("2026-02-28", 5),
    ] {
        idx.add_for_test(&json!({"at": at, "n": n}).to_string());
    }
    idx.refresh().unwrap();
    let run = |h: Value| {
        let plan = idx.compile(&json!({"size": 0, "aggs": {"h": h}})).unwrap();
        let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
        plan.aggregations_json(&aggs.unwrap()).unwrap()["h"].clone()
    };
    let buckets = |v: &Value| -> Vec<(String, u64)> {
        v["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["key_as_string"].as_str().unwrap()[..10].to_string(),
                    b["doc_count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let monthly = run(
        json!({"date_histogram": {"field": "at", "calendar_interval": "month"}, "aggs": {"s": {"sum": {"field": "n"}}}}),
    );
    assert_eq!(
        buckets(&monthly),
        [
            ("2025-11-01".to_string(), 3),
            ("2025-12-01".into(), 0),
            ("2026-01-01".into(), 0),
            ("2026-02-01".into(), 2)
        ]
    );
    close(&monthly["buckets"][3]["s"]["value"], 9.0);
    assert!(monthly.get("interval").is_none());
    let dense = run(
        json!({"date_histogram": {"field": "at", "calendar_interval": "1M", "min_doc_count": 1}}),
    );
    assert_eq!(
        buckets(&dense),
        [("2025-11-01".to_string(), 3), ("2026-02-01".into(), 2)]
    );
    let quarters = run(json!({"date_histogram": {"field": "at", "calendar_interval": "quarter"}}));
    assert_eq!(
        buckets(&quarters),
        [("2025-10-01".to_string(), 3), ("2026-01-01".into(), 2)]
    );
    let years = run(json!({"date_histogram": {"field": "at", "calendar_interval": "year"}}));
    assert_eq!(
        buckets(&years),
        [("2025-01-01".to_string(), 3), ("2026-01-01".into(), 2)]
    );
}
