//! Index-time scripts and runtime fields with a script: the values they emit, indexed and
//! searched as their type, worked out by hand from the documents.

use crate::index::EmbeddedIndex;
use serde_json::json;

#[test]
fn a_runtime_field_with_a_script_answers_as_its_values_would() {
    let body = json!({"mappings": {
        "properties": {"price": {"type": "long"}, "name": {"type": "keyword"}},
        "runtime": {
            "with_tax": {"type": "double", "script": {"source": "emit(doc['price'].value * params.rate)", "params": {"rate": 1.25}}},
            "shout": {"type": "keyword", "script": "emit(doc['name'].value.toUpperCase())"}}}});
    let idx = EmbeddedIndex::create("shop", &body).unwrap();
    // The second document has a value of its own for `shout`: the runtime field shadows it.
    idx.add_for_test(&json!({"price": 8, "name": "pen"}).to_string());
    idx.add_for_test(&json!({"price": 20, "name": "ink", "shout": "quiet"}).to_string());
    idx.refresh().unwrap();
    let plan = idx
        .compile(&json!({"size": 0, "query": {"term": {"shout": "INK"}},
            "aggs": {"t": {"sum": {"field": "with_tax"}}}}))
        .unwrap();
    let (total, _, fruit) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert_eq!(total, 1);
    assert_eq!(
        plan.aggregations_json(&fruit.unwrap()).unwrap()["t"]["value"],
        25.0
    );
    let all = idx
        .compile(&json!({"size": 0, "aggs": {"t": {"sum": {"field": "with_tax"}}}}))
        .unwrap();
    let fruit = idx.search_hits(&all, &idx.searcher()).unwrap().2.unwrap();
    assert_eq!(all.aggregations_json(&fruit).unwrap()["t"]["value"], 35.0);
    // A script outside the subset is named when the index is made.
    let bad = json!({"mappings": {"runtime": {"x": {"type": "long", "script": "do { emit(1) } while (false)"}}}});
    let e = EmbeddedIndex::create("bad", &bad).err().unwrap();
    assert!(e.message.contains("`do`"), "{}", e.message);
}
