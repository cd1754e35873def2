//! `percentiles` through the REST layer against Elasticsearch's own t-digest: the expected
//! answers were produced by Elasticsearch's HybridDigest (Java) fed the same documents.

use super::tests::call;
use super::*;
use crate::aggs::tdigest::Digest;

/// Document `i`'s values of `v` (two, descending in the source, for every seventh).
fn values(i: u64) -> Vec<f64> {
    let v = ((i * 7919) % 10007) as f64 / 10.0;
    match i % 7 {
        0 => vec![v, v / 2.0],
        _ => vec![v],
    }
}

fn load(b: &Engine, index: &str, docs: std::ops::Range<u64>) {
    let mapping = r#"{"mappings":{"properties":{"v":{"type":"double"},"tag":{"type":"keyword"},"at":{"type":"date"}}}}"#;
    assert_eq!(call(b, "PUT", &format!("/{index}"), mapping).0, 200);
    write(b, index, docs);
}

/// One bulk of `docs` into `index`, refreshed (a segment of its own, or more).
fn write(b: &Engine, index: &str, docs: std::ops::Range<u64>) {
    let mut bulk = String::new();
    for i in docs {
        let tag = ["a", "b", "c"][(i % 3) as usize];
        let at = 1_767_225_600_000u64 + (i % 4) * 60_000;
        bulk.push_str(&format!("{{\"index\":{{\"_id\":\"{i}\"}}}}\n"));
        bulk.push_str(
            &serde_json::to_string(&serde_json::json!({"v": values(i), "tag": tag, "at": at}))
                .unwrap(),
        );
        bulk.push('\n');
    }
    let (s, r) = call(b, "POST", &format!("/{index}/_bulk?refresh=true"), &bulk);
    assert_eq!((s, &r["errors"]), (200, &Value::Bool(false)), "{r}");
}

/// The three answers (1st, 50th, 99.9th) of a percentiles, as bits.
fn bits(p: &Value) -> Vec<String> {
    ["1.0", "50.0", "99.9"]
        .iter()
        .map(|k| {
            let v = p["values"][k].as_f64().unwrap_or_else(|| panic!("{p}"));
            format!("{:x}", v.to_bits())
        })
        .collect()
}

fn expected(line: &str) -> Vec<String> {
    line.split(' ').skip(1).map(str::to_string).collect()
}

/// The documents of `index` in its own order (segment after segment), as the collector and
/// an Elasticsearch shard read them.
fn index_order(b: &Engine, index: &str) -> Vec<u64> {
    let body = r#"{"size":10000,"sort":["_doc"],"_source":false}"#;
    let (s, r) = call(b, "POST", &format!("/{index}/_search"), body);
    assert_eq!(s, 200, "{r}");
    r["hits"]["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["_id"].as_str().unwrap().parse().unwrap())
        .collect()
}

/// A digest fed documents' values as Elasticsearch feeds them: in `order`, each document's
/// ascending.
fn fed(order: &[u64], compression: f64, keep: impl Fn(u64) -> bool) -> Digest {
    let mut d = Digest::new(compression);
    for &i in order.iter().filter(|i| keep(**i)) {
        let mut v = values(i);
        v.sort_by(f64::total_cmp);
        for x in v {
            d.add(x, 1);
        }
    }
    d
}

fn answers(d: &Digest) -> Vec<String> {
    [1.0, 50.0, 99.9]
        .iter()
        .map(|p| format!("{:x}", d.quantile(p / 100.0).unwrap().to_bits()))
        .collect()
}

/// The digest is checked against Elasticsearch's own Java code in `aggs/tdigest` (a table
/// of its answers); here, that the engine feeds it as Elasticsearch does: documents in the
/// index's order, across segments, each bucket of nested bucket aggregations its own.
#[test]
fn percentiles_are_elasticsearchs_at_the_top_and_in_nested_buckets() {
    let b = Engine::new();
    // Two refreshed bulks: several segments, whose digests are carried from one to the next.
    load(&b, "p", 0..2500);
    write(&b, "p", 2500..6000);
    let order = index_order(&b, "p");
    assert_eq!(order.len(), 6000);
    let body = r#"{"size":0,"aggs":{
        "all":{"percentiles":{"field":"v","percents":[1,50,99.9]}},
        "tags":{"terms":{"field":"tag"},"aggs":{
            "p":{"percentiles":{"field":"v","percents":[1,50,99.9]}},
            "minutes":{"date_histogram":{"field":"at","fixed_interval":"60s"},"aggs":{
                "p":{"percentiles":{"field":"v","percents":[1,50,99.9],"tdigest":{"compression":10}}}}}}}}}"#;
    let (s, r) = call(&b, "POST", "/p/_search", body);
    assert_eq!(s, 200, "{r}");
    let aggs = &r["aggregations"];
    // 6,858 values: past 1,999, Elasticsearch's merging digest.
    let all = fed(&order, 100.0, |_| true);
    assert!(!all.is_exact());
    assert_eq!(bits(&aggs["all"]), answers(&all));
    let tags = aggs["tags"]["buckets"].as_array().unwrap();
    assert_eq!(tags.len(), 3);
    for (t, tag) in ["a", "b", "c"].iter().enumerate() {
        let bucket = tags.iter().find(|b| b["key"] == *tag).unwrap();
        let digest = fed(&order, 100.0, |i| i % 3 == t as u64);
        assert!(!digest.is_exact(), "about 2,286 values in each tag");
        assert_eq!(bits(&bucket["p"]), answers(&digest), "tag {tag}");
        let minutes = bucket["minutes"]["buckets"].as_array().unwrap();
        assert_eq!(minutes.len(), 4);
        for (m, minute) in minutes.iter().enumerate() {
            let digest = fed(&order, 10.0, |i| i % 3 == t as u64 && i % 4 == m as u64);
            assert!(
                !digest.is_exact(),
                "about 571 values, past compression 10's 200"
            );
            assert_eq!(
                bits(&minute["p"]),
                answers(&digest),
                "{tag} {}",
                minute["key"]
            );
        }
    }
}

/// With the documents in the order they were written (one segment, as one bulk into an
/// Elasticsearch shard leaves them), the answer is the one Elasticsearch's Java gave.
#[test]
fn in_written_order_the_answer_is_elasticsearchs_java_one() {
    let order: Vec<u64> = (0..6000).collect();
    let all = fed(&order, 100.0, |_| true);
    assert_eq!(
        answers(&all),
        expected("all 4021b30aafd48208 407bc85726526ddd 408f3c837b4a233b")
    );
    let mut two = Digest::new(100.0);
    two.add_digest(&mut fed(&order, 100.0, |i| i < 3000));
    two.add_digest(&mut fed(&order, 100.0, |i| i >= 3000));
    assert_eq!(
        answers(&two),
        expected("two-indices 4021b301f0dfcebd 407bc9602cbeae16 408f3c837b4a233b")
    );
}

/// Several indices are Elasticsearch's several shards: each digest stands on its own, then a
/// fresh one adds them in the order of the indices' names.
#[test]
fn several_indices_reduce_their_digests_as_shards_are_reduced() {
    let b = Engine::new();
    load(&b, "p2", 3000..6000);
    load(&b, "p1", 0..3000);
    let body = r#"{"size":0,"aggs":{"all":{"percentiles":{"field":"v","percents":[1,50,99.9]}}}}"#;
    let (s, r) = call(&b, "POST", "/p2,p1/_search", body);
    assert_eq!(s, 200, "{r}");
    let mut reduced = Digest::new(100.0);
    for index in ["p1", "p2"] {
        reduced.add_digest(&mut fed(&index_order(&b, index), 100.0, |_| true));
    }
    assert_eq!(bits(&r["aggregations"]["all"]), answers(&reduced));
}

#[test]
fn digests_refuse_what_they_do_not_run() {
    let b = Engine::new();
    load(&b, "q", 0..10);
    let search = |tdigest: &str| {
        let body =
            format!(r#"{{"aggs":{{"p":{{"percentiles":{{"field":"v","tdigest":{tdigest}}}}}}}}}"#);
        call(&b, "POST", "/q/_search", &body)
    };
    assert_eq!(search(r#"{"execution_hint":"default"}"#).0, 200);
    let (s, r) = search(r#"{"execution_hint":"high_accuracy"}"#);
    assert_eq!(s, 400);
    assert!(r.to_string().contains("high_accuracy"), "{r}");
    let (s, r) = search(r#"{"execution_hint":"fast"}"#);
    assert_eq!(s, 400);
    assert!(
        r.to_string().contains("Invalid execution_hint [fast]"),
        "{r}"
    );
    let (s, r) = search(r#"{"compression":1e9}"#);
    assert_eq!(s, 400);
    assert!(r.to_string().contains("compression"), "{r}");
}

/// A search whose digests would pass the engine's bound fails, naming it, rather than
/// answering with something else (the bound is 1 MB under test, 256 MB otherwise).
#[test]
fn digests_past_the_bound_fail_the_search() {
    let b = Engine::new();
    let mapping = r#"{"mappings":{"properties":{"v":{"type":"double"},"k":{"type":"keyword"}}}}"#;
    assert_eq!(call(&b, "PUT", "/big", mapping).0, 200);
    let mut bulk = String::new();
    for i in 0..500 {
        let v: Vec<u32> = (0..300).collect();
        bulk.push_str("{\"index\":{}}\n");
        bulk.push_str(&serde_json::json!({"k": format!("k{i}"), "v": v}).to_string());
        bulk.push('\n');
    }
    assert_eq!(call(&b, "POST", "/big/_bulk?refresh=true", &bulk).0, 200);
    let body = r#"{"size":0,"aggs":{"k":{"terms":{"field":"k","size":500},"aggs":{"p":{"percentiles":{"field":"v","tdigest":{"compression":10000}}}}}}}"#;
    let (s, r) = call(&b, "POST", "/big/_search", body);
    // A 400 naming the bound (Elasticsearch's breaker answers 429).
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("Data too large"), "{r}");
    // Under the bound, the same buckets answer (each exact: 300 values).
    let body = r#"{"size":0,"aggs":{"k":{"terms":{"field":"k","size":3},"aggs":{"p":{"percentiles":{"field":"v","percents":[50]}}}}}}"#;
    let (s, r) = call(&b, "POST", "/big/_search", body);
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["aggregations"]["k"]["buckets"][0]["p"]["values"]["50.0"],
        149.5
    );
}

/// Buckets with no values show nulls, as Elasticsearch's empty digests do.
#[test]
fn empty_buckets_show_nulls_and_an_order_by_percentiles_is_refused() {
    let b = Engine::new();
    load(&b, "e", 0..30);
    let body = r#"{"size":0,"aggs":{"m":{"date_histogram":{"field":"at","fixed_interval":"60s",
        "min_doc_count":0,"extended_bounds":{"min":1767225600000,"max":1767225900000}},
        "aggs":{"p":{"percentiles":{"field":"v","percents":[50]}}}}}}"#;
    let (s, r) = call(&b, "POST", "/e/_search", body);
    assert_eq!(s, 200, "{r}");
    let buckets = r["aggregations"]["m"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 6, "{r}");
    // Minute 0 holds documents 0, 4, 8, ...: exact, 8 documents, 10 values.
    let mut minute0: Vec<f64> = (0..30).filter(|i| i % 4 == 0).flat_map(values).collect();
    minute0.sort_by(f64::total_cmp);
    let want = crate::aggs::tdigest::sorted_quantile(&minute0, 0.5).unwrap();
    assert_eq!(buckets[0]["p"]["values"]["50.0"], want);
    for empty in &buckets[4..] {
        assert_eq!(empty["doc_count"], 0);
        assert_eq!(empty["p"]["values"]["50.0"], Value::Null, "{empty}");
    }
    // Ordering by a percentiles is refused by name (tantivy orders by no percentiles).
    let body = r#"{"size":0,"aggs":{"t":{"terms":{"field":"tag","order":{"p.50":"desc"}},
        "aggs":{"p":{"percentiles":{"field":"v","percents":[50]}}}}}}"#;
    let (s, r) = call(&b, "POST", "/e/_search", body);
    assert_eq!(s, 400, "{r}");
    assert!(
        r.to_string().contains("`order` by `p.50`, a `percentiles`"),
        "{r}"
    );
}

/// Percentiles under buckets over several indices: each index collects the buckets the
/// merged answer shows, then a bucket several indices have is a fresh digest adding each
/// one's (in the order of the indices' names), and a bucket one index has stands as it is,
/// as Elasticsearch reduces its shards' buckets.
#[test]
fn several_indices_reduce_bucket_digests_as_shards_are_reduced() {
    let b = Engine::new();
    load(&b, "q1", 0..2500);
    // The second index's documents 2500..6000, and 2,600 more with a tag of its own.
    load(&b, "q2", 2500..6000);
    let mut bulk = String::new();
    for i in 6000..8600u64 {
        bulk.push_str(&format!("{{\"index\":{{\"_id\":\"{i}\"}}}}\n"));
        bulk.push_str(&serde_json::json!({"v": values(i), "tag": "d"}).to_string());
        bulk.push('\n');
    }
    assert_eq!(call(&b, "POST", "/q2/_bulk?refresh=true", &bulk).0, 200);
    let body = r#"{"size":0,"aggs":{"t":{"terms":{"field":"tag"},"aggs":{"p":{"percentiles":{"field":"v","percents":[1,50,99.9]}}}}}}"#;
    let (s, r) = call(&b, "POST", "/q*/_search", body);
    assert_eq!(s, 200, "{r}");
    let (o1, o2) = (index_order(&b, "q1"), index_order(&b, "q2"));
    let tag_of = |i: u64| match i {
        6000.. => 3,
        _ => i % 3,
    };
    let buckets = r["aggregations"]["t"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 4, "{r}");
    for (t, tag) in ["a", "b", "c", "d"].iter().enumerate() {
        let bucket = buckets.iter().find(|b| b["key"] == *tag).unwrap();
        let in_q2 = fed(&o2, 100.0, |i| tag_of(i) == t as u64);
        let want = match t {
            // Only the second index has `d`: its digest stands as it is.
            3 => in_q2,
            _ => {
                let mut fresh = Digest::new(100.0);
                fresh.add_digest(&mut fed(&o1, 100.0, |i| tag_of(i) == t as u64));
                fresh.add_digest(&mut { in_q2 });
                fresh
            }
        };
        assert_eq!(bits(&bucket["p"]), answers(&want), "tag {tag}");
    }
}

/// A `filter` is one bucket: its percentiles are the digest of the documents it matches, at
/// the top level or under other buckets.
#[test]
fn a_filter_is_a_bucket_of_its_own() {
    let b = Engine::new();
    load(&b, "f", 0..6000);
    let order = index_order(&b, "f");
    let body = r#"{"size":0,"aggs":{
        "big":{"filter":{"range":{"v":{"gte":500}}},"aggs":{"p":{"percentiles":{"field":"v","percents":[1,50,99.9]}}}},
        "tags":{"terms":{"field":"tag"},"aggs":{"only_a":{"filter":{"term":{"tag":"a"}},
            "aggs":{"p":{"percentiles":{"field":"v","percents":[1,50,99.9]}}}}}}}}"#;
    let (s, r) = call(&b, "POST", "/f/_search", body);
    assert_eq!(s, 200, "{r}");
    let aggs = &r["aggregations"];
    // A document matches when any of its values does; all its values count.
    let big = fed(&order, 100.0, |i| values(i).iter().any(|v| *v >= 500.0));
    assert!(!big.is_exact());
    assert_eq!(bits(&aggs["big"]["p"]), answers(&big));
    for bucket in aggs["tags"]["buckets"].as_array().unwrap() {
        let p = &bucket["only_a"]["p"];
        match bucket["key"].as_str().unwrap() {
            "a" => assert_eq!(bits(p), answers(&fed(&order, 100.0, |i| i % 3 == 0))),
            _ => assert_eq!(p["values"]["50.0"], Value::Null, "{bucket}"),
        }
    }
}

/// Under a parent the digest collector does not bucket (a `terms` on a boolean), the
/// percentiles is tantivy's, as documented: never nulls where there are values.
#[test]
fn under_other_parents_tantivys_estimate_answers() {
    let b = Engine::new();
    let mapping =
        r#"{"mappings":{"properties":{"v":{"type":"double"},"flag":{"type":"boolean"}}}}"#;
    assert_eq!(call(&b, "PUT", "/o", mapping).0, 200);
    let mut bulk = String::new();
    for i in 0..50 {
        bulk.push_str("{\"index\":{}}\n");
        bulk.push_str(&serde_json::json!({"v": i, "flag": i % 2 == 0}).to_string());
        bulk.push('\n');
    }
    assert_eq!(call(&b, "POST", "/o/_bulk?refresh=true", &bulk).0, 200);
    let body = r#"{"size":0,"aggs":{"f":{"terms":{"field":"flag"},"aggs":{"p":{"percentiles":{"field":"v","percents":[50]}}}}}}"#;
    let (s, r) = call(&b, "POST", "/o/_search", body);
    assert_eq!(s, 200, "{r}");
    let buckets = r["aggregations"]["f"]["buckets"].as_array().unwrap();
    assert_eq!(buckets.len(), 2, "{r}");
    for bucket in buckets {
        let median = bucket["p"]["values"]["50.0"].as_f64();
        assert!(
            median.is_some_and(|m| (20.0..=30.0).contains(&m)),
            "{bucket}"
        );
    }
}

/// On a date field the answers are epoch milliseconds, each also printed in the field's
/// format, as Elasticsearch prints `(long) value` (`<percent>_as_string`).
#[test]
fn percentiles_of_dates_are_milliseconds_and_printed() {
    let b = Engine::new();
    load(&b, "d", 0..10);
    let body = r#"{"size":0,"aggs":{"p":{"percentiles":{"field":"at","percents":[50,100]}},
        "q":{"percentiles":{"field":"at","percents":[50],"keyed":false}}}}"#;
    let (s, r) = call(&b, "POST", "/d/_search", body);
    assert_eq!(s, 200, "{r}");
    // Documents 0..10 at minutes i % 4: 0,1,2,3,0,1,2,3,0,1 -> sorted, the median is the
    // centre of the 5th and 6th values, minute 1 (exact: 10 values).
    let p = &r["aggregations"]["p"]["values"];
    assert_eq!(p["50.0"], 1_767_225_660_000.0, "{r}");
    assert_eq!(p["50.0_as_string"], "2026-01-01T00:01:00.000Z");
    assert_eq!(p["100.0_as_string"], "2026-01-01T00:03:00.000Z");
    let keys: Vec<&String> = p.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["50.0", "50.0_as_string", "100.0", "100.0_as_string"]);
    let q = &r["aggregations"]["q"]["values"][0];
    assert_eq!(q["value_as_string"], "2026-01-01T00:01:00.000Z", "{q}");
    // A `format` prints dates; on a number (a decimal pattern) it is not run: refused.
    let body =
        r#"{"size":0,"aggs":{"p":{"percentiles":{"field":"at","format":"yyyy-MM-dd HH:mm"}}}}"#;
    let (s, r) = call(&b, "POST", "/d/_search", body);
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["aggregations"]["p"]["values"]["50.0_as_string"], "2026-01-01 00:01",
        "{r}"
    );
    let body = r#"{"size":0,"aggs":{"p":{"percentiles":{"field":"v","format":"0.00"}}}}"#;
    let (s, r) = call(&b, "POST", "/d/_search", body);
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("`format`"), "{r}");
}
