//! Nested queries, inner hits and aggregations on a real index, against answers worked out
//! by hand from Elasticsearch's documented semantics.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

fn questions() -> EmbeddedIndex {
    let index = EmbeddedIndex::create(
        "q",
        &json!({"mappings": {"properties": {
            "tag": {"type": "keyword"},
            "answers": {"type": "nested", "properties": {
                "user": {"type": "keyword"}, "date": {"type": "date"}, "text": {"type": "text"}}}}}}),
    )
    .unwrap();
    for (id, doc) in [
        (
            "1",
            json!({"tag": "a", "answers": [{"user": "u1", "date": "2010-01-01", "text": "red fox"}, {"user": "u2", "date": "2012-01-01", "text": "red red fox"}]}),
        ),
        (
            "2",
            json!({"tag": "a", "answers": [{"user": "u1", "date": "2013-01-01", "text": "blue"}]}),
        ),
        (
            "3",
            json!({"tag": "b", "answers": {"user": "u2", "date": "2009-01-01", "text": "red"}}),
        ),
        ("4", json!({"tag": "a"})),
    ] {
        index.index_one(Some(id), &doc.to_string()).unwrap();
    }
    index.refresh().unwrap();
    index
}

fn ids(index: &EmbeddedIndex, body: Value) -> Vec<String> {
    let plan = index.compile(&body).unwrap();
    let searcher = index.searcher();
    let (_, hits, _) = index.search_hits(&plan, &searcher).unwrap();
    let mut ids: Vec<String> = hits.into_iter().map(|h| h.id).collect();
    ids.sort();
    ids
}

#[test]
fn several_fields_match_inside_one_object() {
    let index = questions();
    // u1 answered before 2011 only in document 1; u1's 2013 answer and u2's 2009 answer
    // each match one of the two fields, in documents 2 and 3.
    let both = json!({"query": {"nested": {"path": "answers", "query": {"bool": {"must": [
        {"term": {"answers.user": "u1"}}, {"range": {"answers.date": {"lte": "2011-01-01"}}}]}}}}});
    assert_eq!(ids(&index, both), ["1"]);
    let either = json!({"query": {"nested": {"path": "answers", "query": {"bool": {"should": [
        {"term": {"answers.user": "u1"}}, {"range": {"answers.date": {"lte": "2011-01-01"}}}]}}}}});
    assert_eq!(ids(&index, either), ["1", "2", "3"]);
}

#[test]
fn documents_score_by_the_score_mode() {
    let index = questions();
    let scores = |mode: &str| {
        let body = json!({"query": {"nested": {"path": "answers", "score_mode": mode,
            "query": {"match": {"answers.text": "red"}}}}});
        let plan = index.compile(&body).unwrap();
        let (_, hits, _) = index.search_hits(&plan, &index.searcher()).unwrap();
        hits.into_iter()
            .map(|h| (h.id, h.score))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let (sum, avg, max, min, none) = (
        scores("sum"),
        scores("avg"),
        scores("max"),
        scores("min"),
        scores("none"),
    );
    assert_eq!(sum.keys().collect::<Vec<_>>(), ["1", "3"]);
    // Document 1 has two matching answers: avg is half their sum, max and min bound it.
    let close = |a: f32, b: f32| (a - b).abs() < 1e-5;
    assert!(close(avg["1"] * 2.0, sum["1"]));
    assert!(close(max["1"] + min["1"], sum["1"]));
    assert!(max["1"] > min["1"]);
    // Document 3 has one: every mode gives its score, except none.
    assert!(close(sum["3"], avg["3"]) && close(max["3"], min["3"]) && close(sum["3"], max["3"]));
    assert_eq!((none["1"], none["3"]), (0.0, 0.0));
}

#[test]
fn inner_hits_show_each_hits_matching_objects() {
    let index = questions();
    let body = json!({"query": {"nested": {"path": "answers",
        "query": {"range": {"answers.date": {"gte": "2010-01-01"}}},
        "inner_hits": {"name": "recent", "size": 1}}}, "sort": [{"tag": "asc"}]});
    let plan = index.compile(&body).unwrap();
    let (_, hits, _) = index.search_hits(&plan, &index.searcher()).unwrap();
    let shown: Vec<(String, Value)> = hits
        .into_iter()
        .map(|h| {
            let extra: Value =
                serde_json::from_str(&format!("{{{}}}", &h.extra.unwrap()[1..])).unwrap();
            (h.id, extra["inner_hits"]["recent"]["hits"].clone())
        })
        .collect();
    assert_eq!(shown.len(), 2);
    let one = &shown.iter().find(|(id, _)| id == "1").unwrap().1;
    // Both of document 1's answers match (constant scores): the first in the document first.
    assert_eq!(one["total"], json!({"value": 2, "relation": "eq"}));
    assert_eq!(
        one["hits"],
        json!([{"_index": "q", "_id": "1", "_nested": {"field": "answers", "offset": 0},
                "_score": 1.0, "_source": {"user": "u1", "date": "2010-01-01", "text": "red fox"}}])
    );
    let two = &shown.iter().find(|(id, _)| id == "2").unwrap().1;
    assert_eq!(two["total"]["value"], 1);
    assert_eq!(two["hits"][0]["_source"]["user"], "u1");
}

#[test]
fn rewritten_and_deleted_documents_take_their_objects_along() {
    let index = questions();
    let by = |user: &str| json!({"query": {"nested": {"path": "answers", "query": {"term": {"answers.user": user}}}}});
    index
        .index_one(
            Some("1"),
            &json!({"tag": "a", "answers": [{"user": "u9", "date": "2020-01-01"}]}).to_string(),
        )
        .unwrap();
    index
        .apply(&crate::bulk::Item::new(
            crate::bulk::Verb::Delete,
            Some("3"),
            None,
        ))
        .unwrap();
    index.refresh().unwrap();
    assert_eq!(ids(&index, by("u9")), ["1"]);
    assert_eq!(ids(&index, by("u2")), Vec::<String>::new());
    assert_eq!(ids(&index, by("u1")), ["2"]);
    // A path that is no nested field is Elasticsearch's error, or nothing when told so.
    let e = index
        .compile(&json!({"query": {"nested": {"path": "tag", "query": {"match_all": {}}}}}))
        .err()
        .unwrap();
    assert!(
        e.message
            .contains("failed to find nested object under path [tag]"),
        "{}",
        e.message
    );
    let ignored = json!({"query": {"nested": {"path": "tag", "ignore_unmapped": true, "query": {"match_all": {}}}}});
    assert_eq!(ids(&index, ignored), Vec::<String>::new());
}

fn aggregations(index: &EmbeddedIndex, body: Value) -> Value {
    let plan = index.compile(&body).unwrap();
    let (_, fruit) = index.count_and_aggregate(&plan, &index.searcher()).unwrap();
    plan.aggregations_json(&fruit.unwrap()).unwrap()
}

#[test]
fn nested_aggregations_count_the_matched_documents_objects() {
    let index = questions();
    // Tag `a`: documents 1, 2 (and 4, with no answers): three answers, in 2010, 2012, 2013.
    let body = json!({"size": 0, "query": {"term": {"tag": "a"}}, "aggs": {"answers": {
        "nested": {"path": "answers"},
        "aggs": {"years": {"date_histogram": {"field": "answers.date", "calendar_interval": "year", "min_doc_count": 1}},
                 "users": {"terms": {"field": "answers.user"}}}}}});
    let a = aggregations(&index, body);
    assert_eq!(a["answers"]["doc_count"], 3);
    let years: Vec<(String, u64)> = a["answers"]["years"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["key_as_string"].as_str().unwrap()[..4].to_string(),
                b["doc_count"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        years,
        [("2010".into(), 1), ("2012".into(), 1), ("2013".into(), 1)]
    );
    assert_eq!(
        a["answers"]["users"]["buckets"],
        json!([{"key": "u1", "doc_count": 2}, {"key": "u2", "doc_count": 1}])
    );
}

#[test]
fn reverse_nested_counts_the_documents_of_each_bucket() {
    let index = questions();
    // All documents: u1 answered twice in 1 and 2 (two questions, tags a and a), u2 in 1
    // and 3 (tags a and b).
    let body = json!({"size": 0, "aggs": {"answers": {"nested": {"path": "answers"}, "aggs": {
        "users": {"terms": {"field": "answers.user"}, "aggs": {
            "questions": {"reverse_nested": {}, "aggs": {"tags": {"terms": {"field": "tag"}}}}}}}}}});
    let a = aggregations(&index, body);
    let users = a["answers"]["users"]["buckets"].as_array().unwrap();
    assert_eq!(a["answers"]["doc_count"], 4);
    assert_eq!(users[0]["key"], "u1");
    assert_eq!(users[0]["doc_count"], 2);
    assert_eq!(users[0]["questions"]["doc_count"], 2);
    assert_eq!(
        users[0]["questions"]["tags"]["buckets"],
        json!([{"key": "a", "doc_count": 2}])
    );
    assert_eq!(users[1]["key"], "u2");
    assert_eq!(users[1]["questions"]["doc_count"], 2);
    assert_eq!(
        users[1]["questions"]["tags"]["buckets"],
        json!([{"key": "a", "doc_count": 1}, {"key": "b", "doc_count": 1}])
    );
    // Directly under nested: the documents with any answer.
    let body = json!({"size": 0, "aggs": {"answers": {"nested": {"path": "answers"}, "aggs": {
        "back": {"reverse_nested": {}}}}}});
    assert_eq!(
        aggregations(&index, body)["answers"]["back"]["doc_count"],
        3
    );
    // Where the engine cannot find a bucket's objects again, it says so.
    let body = json!({"size": 0, "aggs": {"answers": {"nested": {"path": "answers"}, "aggs": {
        "d": {"date_histogram": {"field": "answers.date", "calendar_interval": "year"}, "aggs": {
            "back": {"reverse_nested": {}}}}}}}});
    let e = index.compile(&body).err().unwrap();
    assert!(
        e.message.contains("under a `date_histogram`"),
        "{}",
        e.message
    );
}

#[test]
fn the_documents_do_not_hold_their_objects_fields() {
    let index = questions();
    // In Elasticsearch a nested field's values are its objects' only.
    assert_eq!(
        ids(&index, json!({"query": {"term": {"answers.user": "u1"}}})),
        Vec::<String>::new()
    );
    let e = index
        .compile(&json!({"aggs": {"u": {"terms": {"field": "answers.user"}}}}))
        .err()
        .unwrap();
    assert!(
        e.message.contains("field of the nested `answers`"),
        "{}",
        e.message
    );
}

#[test]
fn a_sort_on_an_objects_field_names_its_nested_path() {
    let index = questions();
    let e = index
        .compile(&json!({"sort": [{"answers.date": "asc"}]}))
        .err()
        .unwrap();
    assert!(
        e.message.contains("mandatory to set the [nested] context"),
        "{}",
        e.message
    );
    // With it, the latest answer of each document orders them (as the nested track sorts).
    let body = json!({"sort": [{"answers.date": {"mode": "max", "order": "desc", "nested": {"path": "answers"}}}]});
    let plan = index.compile(&body).unwrap();
    let (_, hits, _) = index.search_hits(&plan, &index.searcher()).unwrap();
    let order: Vec<String> = hits.into_iter().map(|h| h.id).collect();
    assert_eq!(order, ["2", "1", "3", "4"]);
}

#[test]
fn a_range_on_one_field_reads_the_flattened_copy_with_the_joins_answer() {
    let index = questions();
    let scored = |query: Value| {
        let plan = index.compile(&json!({"query": query})).unwrap();
        let (_, hits, _) = index.search_hits(&plan, &index.searcher()).unwrap();
        hits.into_iter()
            .map(|h| (h.id, h.score))
            .collect::<std::collections::BTreeMap<_, _>>()
    };
    let range = json!({"range": {"answers.date": {"gte": "2011-06-01"}}});
    for mode in ["avg", "max", "min", "none"] {
        let flattened =
            scored(json!({"nested": {"path": "answers", "score_mode": mode, "query": range}}));
        // `bool.must` around it takes the join, scoring each object as the range does.
        let joined = scored(
            json!({"nested": {"path": "answers", "score_mode": mode, "query": {"bool": {"must": [range]}}}}),
        );
        assert_eq!(flattened, joined, "{mode}");
        assert_eq!(flattened.keys().collect::<Vec<_>>(), ["1", "2"], "{mode}");
    }
    // Summed, document 1's two answers count twice: that one joins.
    let summed = scored(
        json!({"nested": {"path": "answers", "score_mode": "sum", "query": {"exists": {"field": "answers.user"}}}}),
    );
    assert_eq!((summed["1"], summed["2"]), (2.0, 1.0));
}

#[test]
fn a_document_past_the_nested_objects_limit_fails_alone() {
    let index = EmbeddedIndex::create(
        "limited",
        &json!({"settings": {"index.mapping.nested_objects.limit": 3},
                "mappings": {"properties": {"a": {"type": "nested"}, "b": {"type": "nested"}}}}),
    )
    .unwrap();
    // Two and one: three in all, at the limit.
    index
        .index_one(
            Some("ok"),
            &json!({"a": [{"x": 1}, {"x": 2}], "b": {"y": 1}}).to_string(),
        )
        .unwrap();
    // Two and two: past it, counted over both fields.
    let e = index
        .index_one(
            Some("over"),
            &json!({"a": [{"x": 1}, {"x": 2}], "b": [{"y": 1}, {"y": 2}]}).to_string(),
        )
        .err()
        .unwrap();
    assert!(
        e.message.contains("exceeded the allowed limit of [3]"),
        "{}",
        e.message
    );
    index.refresh().unwrap();
    assert_eq!(index.searchable_docs(), 1);
    let body = json!({"query": {"nested": {"path": "b", "query": {"match_all": {}}}}});
    assert_eq!(ids(&index, body), ["ok"]);
}
