//! `fields` and `highlight` checked against Elasticsearch's documented output for the same
//! documents: values by field type, and fragments with the query's terms marked.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "title": {"type": "text", "fields": {"raw": {"type": "keyword"}}},
        "body": {"type": "text"},
        "cc": {"type": "keyword"},
        "pop": {"type": "long"},
        "when": {"type": "date"},
        "loc": {"type": "geo_point"}
    }}});
    let idx = EmbeddedIndex::create("f", &body).unwrap();
    idx.add_for_test(&json!({
        "title": "The quick brown fox", "cc": "AT", "pop": "1200", "when": 1_700_000_000_000i64,
        "loc": [16.37, 48.2],
        "body": format!("{} A quick fox jumps. {} The fox sleeps.", "Filler words here. ".repeat(10), "More filler text. ".repeat(10))
    }).to_string());
    idx.add_for_test(
        &json!({"title": "Lazy dog <b>", "cc": ["DE", "FR"], "pop": 7, "body": "nothing to see"})
            .to_string(),
    );
    idx.refresh().unwrap();
    idx
}

/// Each hit's extras (what follows its `_source`), parsed, in score order.
fn extras(idx: &EmbeddedIndex, body: Value) -> Vec<Value> {
    let plan = idx
        .compile(&body)
        .unwrap_or_else(|e| panic!("{}", e.message));
    let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    hits.into_iter()
        .map(|h| {
            let extra = h.extra.unwrap_or_default();
            serde_json::from_str(&format!("{{\"_\":0{extra}}}")).unwrap()
        })
        .collect()
}

#[test]
fn fields_show_each_value_by_its_type() {
    let idx = index();
    let got = extras(
        &idx,
        json!({"query": {"term": {"cc": "AT"}}, "fields": ["pop", "when", "loc", "title*", {"field": "cc"}, "nope"]}),
    );
    assert_eq!(
        got[0]["fields"],
        json!({
            "pop": [1200],
            "when": ["2023-11-14T22:13:20.000Z"],
            "loc": [{"type": "Point", "coordinates": [16.37, 48.2]}],
            "title": ["The quick brown fox"],
            "title.raw": ["The quick brown fox"],
            "cc": ["AT"]
        })
    );
    let got = extras(
        &idx,
        json!({"query": {"term": {"cc": "DE"}}, "docvalue_fields": ["cc", "when"]}),
    );
    assert_eq!(got[0]["fields"], json!({"cc": ["DE", "FR"]}));
    let e = idx
        .compile(&json!({"fields": [{"field": "when", "format": "epoch_millis"}]}))
        .err()
        .unwrap();
    assert!(e.message.contains("`format`"), "{}", e.message);
}

#[test]
fn highlight_marks_the_query_terms_in_fragments() {
    let idx = index();
    let got = extras(
        &idx,
        json!({"query": {"bool": {"should": [{"match": {"body": "fox"}}, {"match": {"title": "quick"}}]}},
               "highlight": {"fields": {"body": {"fragment_size": 40, "number_of_fragments": 2}, "title": {"number_of_fragments": 0}}}}),
    );
    let h = &got[0]["highlight"];
    assert_eq!(h["title"], json!(["The <em>quick</em> brown fox"]));
    let body = h["body"].as_array().unwrap();
    assert_eq!(body.len(), 2, "{h}");
    // In the order of the text, each around its match and about 40 characters long.
    assert!(
        body[0]
            .as_str()
            .unwrap()
            .contains("A quick <em>fox</em> jumps."),
        "{h}"
    );
    assert!(
        body[1]
            .as_str()
            .unwrap()
            .contains("The <em>fox</em> sleeps."),
        "{h}"
    );
    assert!(body.iter().all(|f| f.as_str().unwrap().len() < 80), "{h}");
    assert!(got[0]["highlight"].get("cc").is_none());

    // Keywords highlight whole; html escapes the value; tags as asked.
    let got = extras(
        &idx,
        json!({"query": {"bool": {"must": [{"term": {"cc": "DE"}}, {"match": {"title": "dog"}}]}},
               "highlight": {"pre_tags": ["["], "post_tags": ["]"], "encoder": "html", "fields": {"cc": {}, "title": {}}}}),
    );
    assert_eq!(got[0]["highlight"]["cc"], json!(["[DE]"]));
    assert_eq!(
        got[0]["highlight"]["title"],
        json!(["Lazy [dog] &lt;b&gt;"])
    );
    // No match: nothing, unless no_match_size.
    let got = extras(
        &idx,
        json!({"query": {"term": {"cc": "AT"}}, "highlight": {"fields": {"title": {"no_match_size": 9}}}}),
    );
    assert_eq!(got[0]["highlight"]["title"], json!(["The quick"]));
    let e = idx
        .compile(&json!({"highlight": {"fields": {"title": {}}, "boundary_scanner": "word"}}))
        .err()
        .unwrap();
    assert!(e.message.contains("boundary_scanner"), "{}", e.message);
}

#[test]
fn script_fields_run_on_each_hits_values() {
    let idx = index();
    let got = extras(
        &idx,
        json!({"query": {"term": {"cc": "AT"}}, "script_fields": {
            "twice": {"script": "doc['pop'].value * 2"},
            "shout": {"script": {"source": "params._source.title + params.end", "params": {"end": "!"}}},
            "codes": {"script": "doc['cc']"},
            "skipped": {"script": "doc['pop'].value / 0", "ignore_failure": true}}}),
    );
    assert_eq!(got[0]["fields"]["twice"], json!([2400]));
    assert_eq!(got[0]["fields"]["shout"], json!(["The quick brown fox!"]));
    assert_eq!(got[0]["fields"]["codes"], json!(["AT"]));
    assert!(got[0]["fields"].get("skipped").is_none(), "{}", got[0]);
    // A script that fails on a hit fails the search, naming the field.
    let plan = idx
        .compile(&json!({"script_fields": {"x": {"script": "doc['nope'].value"}}}))
        .unwrap();
    let e = idx.search_hits(&plan, &idx.searcher()).err().unwrap();
    assert!(
        e.message.contains("script field [x]") && e.message.contains("No field found for [nope]"),
        "{}",
        e.message
    );
}
