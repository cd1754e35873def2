//! The percolator through the REST layer, checked against the examples of Elasticsearch's
//! percolate query documentation (their expected answers written out from it).

use super::tests::call;
use crate::cluster::Engine;
use serde_json::{json, Value};

fn queries(stored: &[Value]) -> Engine {
    let b = Engine::new();
    let mapping = r#"{"mappings": {"properties": {"message": {"type": "text"}, "query": {"type": "percolator"}}}}"#;
    assert_eq!(call(&b, "PUT", "/my-index", mapping).0, 200);
    for (i, q) in stored.iter().enumerate() {
        let (s, r) = call(
            &b,
            "PUT",
            &format!("/my-index/_doc/{}?refresh=true", i + 1),
            &json!({"query": q}).to_string(),
        );
        assert_eq!(s, 201, "{r}");
    }
    b
}

fn hits(r: &Value) -> &Vec<Value> {
    r["hits"]["hits"].as_array().unwrap()
}

#[test]
fn one_document_and_several_find_their_queries_with_slots() {
    let b = queries(&[json!({"match": {"message": "bonsai tree"}})]);
    let (s, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"percolate": {"field": "query", "document": {"message": "A new bonsai tree in the office"}}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["hits"]["total"]["value"], 1);
    assert_eq!(hits(&r)[0]["_id"], "1");
    assert_eq!(
        hits(&r)[0]["fields"]["_percolator_document_slot"],
        json!([0])
    );
    assert!(hits(&r)[0]["_score"].as_f64().unwrap() > 0.0);
    // Several documents: the slots of those the query matches (it wants bonsai or tree).
    let (_, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"percolate": {"field": "query", "documents": [
            {"message": "bonsai tree"}, {"message": "new tree"},
            {"message": "the office"}, {"message": "office tree"}]}}}"#,
    );
    assert_eq!(
        hits(&r)[0]["fields"]["_percolator_document_slot"],
        json!([0, 1, 3]),
        "{r}"
    );
    // A document no stored query matches, and a filter context.
    let (_, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"constant_score": {"filter": {"percolate": {"field": "query", "document": {"message": "the office"}}}}}}"#,
    );
    assert_eq!(r["hits"]["total"]["value"], 0, "{r}");
}

#[test]
fn highlighting_marks_the_percolated_document_by_each_query() {
    let b = queries(&[
        json!({"match": {"message": "brown fox"}}),
        json!({"match": {"message": "lazy dog"}}),
        // Terms that cannot be extracted: tested on every percolation.
        json!({"bool": {"must_not": {"match": {"message": "cat"}}}}),
        json!({"bool": {"must": [{"match": {"message": "fox"}}, {"range": {"message": {"gte": "zzz"}}}]}}),
    ]);
    let (s, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"percolate": {"field": "query", "document": {"message": "The quick brown fox jumps over the lazy dog"}}},
            "highlight": {"fields": {"message": {}}}}"#,
    );
    assert_eq!(s, 200, "{r}");
    let mut by_id: Vec<(String, Value)> = hits(&r)
        .iter()
        .map(|h| {
            (
                h["_id"].as_str().unwrap().to_string(),
                h["highlight"].clone(),
            )
        })
        .collect();
    by_id.sort_by(|a, b| a.0.cmp(&b.0));
    let ids: Vec<&str> = by_id.iter().map(|(i, _)| i.as_str()).collect();
    assert_eq!(ids, ["1", "2", "3"], "{r}");
    assert_eq!(
        by_id[0].1["message"],
        json!(["The quick <em>brown</em> <em>fox</em> jumps over the lazy dog"])
    );
    assert_eq!(
        by_id[1].1["message"],
        json!(["The quick brown fox jumps over the <em>lazy</em> <em>dog</em>"])
    );
}

#[test]
fn what_elasticsearch_refuses_is_refused() {
    let b = queries(&[]);
    let (s, r) = call(
        &b,
        "PUT",
        "/my-index/_doc/x",
        r#"{"query": {"match": {"nope": "x"}}}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(r
        .to_string()
        .contains("No field mapping can be found for the field with name [nope]"));
    let (s, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"percolate": {"field": "message", "document": {"message": "x"}}}}"#,
    );
    assert_eq!(s, 400, "{r}");
    let (s, r) = call(
        &b,
        "GET",
        "/my-index/_search",
        r#"{"query": {"percolate": {"field": "query", "index": "my-index", "id": "1"}}}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("give the `document`"), "{r}");
}
