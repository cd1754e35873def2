//! Dynamic mapping checked against what Elasticsearch maps for the same documents: each
//! expected hit count, bucket and value is worked out here from the three documents.

use crate::bulk::Item;
use crate::bulk::Verb;
use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

fn index() -> EmbeddedIndex {
    let body = json!({
        "settings": {"index": {"mapping": {"total_fields": {"limit": 20}}}},
        "mappings": {
            "dynamic_templates": [
                {"labels": {"path_match": "labels.*", "match_mapping_type": "string", "mapping": {"type": "keyword"}}},
                {"counts": {"match": "*_count", "mapping": {"type": "long"}}}
            ],
            "properties": {
                "name": {"type": "keyword"},
                "meta": {"type": "object", "enabled": false},
                "locked": {"type": "object", "dynamic": "strict", "properties": {"a": {"type": "long"}}},
                "tags": {"type": "flattened"},
                "k8s": {"type": "object"}
            }
        }
    });
    let idx = EmbeddedIndex::create("dyn", &body).unwrap();
    for d in [
        json!({"name": "a", "labels": {"app": "web", "tier": "front"}, "bytes": 100, "ratio": 0.5,
               "seen": "2024-01-02T03:04:05Z", "msg": "Quick brown fox", "err_count": "7",
               "meta": {"x": 1}, "tags": {"env": "prod", "team": {"lead": "ann"}}, "k8s": {"pod": "p1"}}),
        json!({"name": "b", "labels": {"app": "db"}, "bytes": 250, "ratio": 1.5,
               "seen": "2024-01-03T00:00:00Z", "msg": "lazy dog", "err_count": 3,
               "tags": {"env": "dev"}, "k8s": {"pod": "p2"}}),
        json!({"name": "c", "labels": {"app": "web"}, "bytes": 40, "ratio": 2.0, "msg": "the quick dog"}),
    ] {
        idx.add_for_test(&d.to_string());
    }
    idx.refresh().unwrap();
    idx
}

fn hits(idx: &EmbeddedIndex, query: Value) -> u64 {
    let plan = idx
        .compile(&json!({"query": query, "size": 0}))
        .unwrap_or_else(|e| panic!("{query}: {}", e.message));
    idx.search_hits(&plan, &idx.searcher()).unwrap().0
}

fn refused(idx: &EmbeddedIndex, doc: Value) -> String {
    let body = doc.to_string();
    idx.apply(&Item::new(Verb::Index, None, Some(&body)))
        .unwrap_err()
        .reason
}

#[test]
fn new_fields_are_mapped_by_templates_or_by_their_values() {
    let idx = index();
    // labels.* strings: keywords by the template.
    assert_eq!(hits(&idx, json!({"term": {"labels.app": "web"}})), 2);
    assert_eq!(hits(&idx, json!({"exists": {"field": "labels.tier"}})), 1);
    // A string with no template: text, with a `.keyword` multi-field.
    assert_eq!(hits(&idx, json!({"match": {"msg": "quick"}})), 2);
    assert_eq!(hits(&idx, json!({"match_phrase": {"msg": "quick dog"}})), 1);
    assert_eq!(hits(&idx, json!({"term": {"msg.keyword": "lazy dog"}})), 1);
    // Whole numbers are longs; 0.5 makes `ratio` a float, and 2.0 is found as 2.0.
    assert_eq!(hits(&idx, json!({"range": {"bytes": {"gte": 100}}})), 2);
    assert_eq!(hits(&idx, json!({"range": {"ratio": {"gt": 1.0}}})), 2);
    assert_eq!(hits(&idx, json!({"term": {"ratio": 2.0}})), 1);
    // A string that reads as a date is a date.
    assert_eq!(
        hits(&idx, json!({"range": {"seen": {"gte": "2024-01-03"}}})),
        1
    );
    // `*_count` is a long by its template: "7" is read as 7.
    assert_eq!(hits(&idx, json!({"term": {"err_count": 7}})), 1);
    assert_eq!(hits(&idx, json!({"range": {"err_count": {"gte": 3}}})), 2);
    // An object with no properties maps what it holds; a disabled one maps nothing.
    assert_eq!(hits(&idx, json!({"term": {"k8s.pod": "p2"}})), 1);
    assert_eq!(hits(&idx, json!({"term": {"meta.x": 1}})), 0);
    // flattened: every leaf is a keyword of the field, and of its own path.
    assert_eq!(hits(&idx, json!({"term": {"tags": "prod"}})), 1);
    assert_eq!(hits(&idx, json!({"term": {"tags": "ann"}})), 1);
    assert_eq!(hits(&idx, json!({"term": {"tags.team.lead": "ann"}})), 1);
    assert_eq!(hits(&idx, json!({"term": {"tags.env": "ann"}})), 0);
}

#[test]
fn learned_fields_aggregate_and_sort() {
    let idx = index();
    let plan = idx
        .compile(&json!({"size": 3, "sort": [{"bytes": "desc"}], "aggs": {
            "apps": {"terms": {"field": "labels.app"}},
            "mean": {"avg": {"field": "bytes"}},
            "top": {"max": {"field": "ratio"}}
        }}))
        .unwrap();
    let (_, found, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    let names: Vec<String> = found
        .iter()
        .map(|h| {
            serde_json::from_slice::<Value>(h.source.as_deref().unwrap()).unwrap()["name"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(names, ["b", "a", "c"]);
    let aggs = plan.aggregations_json(&aggs.unwrap()).unwrap();
    assert_eq!(
        aggs["apps"]["buckets"],
        json!([{"key": "web", "doc_count": 2}, {"key": "db", "doc_count": 1}])
    );
    assert!((aggs["mean"]["value"].as_f64().unwrap() - 390.0 / 3.0).abs() < 1e-9);
    assert_eq!(aggs["top"]["value"], json!(2.0));
    // A field no document brought aggregates to nothing, as an unmapped one does in
    // Elasticsearch.
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {"t": {"terms": {"field": "never"}}, "m": {"max": {"field": "never.n"}}}}))
        .unwrap();
    let (_, _, aggs) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    let aggs = plan.aggregations_json(&aggs.unwrap()).unwrap();
    assert_eq!(aggs["t"]["buckets"], json!([]), "{aggs}");
    assert_eq!(aggs["m"]["value"], Value::Null, "{aggs}");
}

#[test]
fn conflicts_strict_objects_and_the_field_limit_refuse_the_document() {
    let idx = index();
    let e = refused(&idx, json!({"bytes": "lots"}));
    assert!(e.contains("bytes") && e.contains("lots"), "{e}");
    let e = refused(&idx, json!({"locked": {"b": 1}}));
    assert!(e.contains("strict") && e.contains("locked.b"), "{e}");
    // 3 mapped and 9 learned fields so far; the limit is 20.
    let many: serde_json::Map<String, Value> =
        (0..10).map(|i| (format!("f{i}"), json!(i))).collect();
    let e = refused(&idx, Value::Object(many));
    assert!(e.contains("Limit of total fields [20]"), "{e}");
    // dynamic: false keeps new fields in _source only.
    let body = json!({"mappings": {"dynamic": false, "properties": {"a": {"type": "long"}}}});
    let quiet = EmbeddedIndex::create("quiet", &body).unwrap();
    quiet.add_for_test(r#"{"a": 1, "b": "x"}"#);
    quiet.refresh().unwrap();
    assert!(quiet
        .compile(&json!({"query": {"term": {"b": "x"}}}))
        .is_err());
    // Runtime fields are refused at creation, with the reason.
    let runtime = json!({"mappings": {"dynamic": "runtime"}});
    let why = EmbeddedIndex::check_mapping("r", &runtime).unwrap_err();
    assert!(why.contains("runtime"), "{why}");
}
