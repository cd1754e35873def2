//! query_string checked against what Lucene's syntax means for the same documents: each
//! expected count is worked out here from the five documents.

use crate::dsl::query_string::lex;
use crate::dsl::query_string::Token;
use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "msg": {"type": "text"}, "kind": {"type": "keyword"}, "status": {"type": "long"},
        "host": {"type": "keyword"}
    }}});
    let idx = EmbeddedIndex::create("qs", &body).unwrap();
    for (msg, kind, status, host) in [
        ("UPDATE users set name", "nginx.access", 200, "web-1"),
        ("update orders quickly", "nginx.access", 404, "web-2"),
        ("Connection 42 disconnected", "nginx.error", 500, "db-1"),
        ("select everything", "system.syslog", 302, "db-2"),
        ("packer build started", "system.syslog", 200, "ci-1"),
    ] {
        idx.add_for_test(
            &json!({"msg": msg, "kind": kind, "status": status, "host": host}).to_string(),
        );
    }
    idx.refresh().unwrap();
    idx
}

fn hits(idx: &EmbeddedIndex, q: Value) -> u64 {
    let plan = idx
        .compile(&json!({"size": 0, "query": {"query_string": q}}))
        .unwrap_or_else(|e| panic!("{q}: {}", e.message));
    idx.search_hits(&plan, &idx.searcher()).unwrap().0
}

#[test]
fn lucene_syntax_as_elasticsearch_reads_it() {
    let idx = index();
    assert_eq!(hits(&idx, json!({"query": "kind:nginx.access"})), 2);
    assert_eq!(hits(&idx, json!({"query": "status:[200 TO 299]"})), 2);
    assert_eq!(hits(&idx, json!({"query": "status:{200 TO 500]"})), 3);
    assert_eq!(hits(&idx, json!({"query": "status:>=404"})), 2);
    // Every text and keyword field, leniently; the text field is lower-cased.
    assert_eq!(
        hits(&idx, json!({"query": "UPDATE*", "analyze_wildcard": true})),
        2
    );
    assert_eq!(
        hits(&idx, json!({"query": "packer*", "fields": ["msg", "host"]})),
        1
    );
    // A lone `*` is any value (Lucene's `field:*`), so with OR every document matches.
    assert_eq!(hits(&idx, json!({"query": "Connection * disconnected"})), 5);
    assert_eq!(
        hits(&idx, json!({"query": "Connection AND disconnected"})),
        1
    );
    // OR by default; AND, NOT, + and -, groups and a field on a group.
    assert_eq!(hits(&idx, json!({"query": "update select"})), 3);
    assert_eq!(
        hits(
            &idx,
            json!({"query": "update select", "default_operator": "AND"})
        ),
        0
    );
    assert_eq!(
        hits(&idx, json!({"query": "kind:nginx.access AND status:404"})),
        1
    );
    assert_eq!(
        hits(
            &idx,
            json!({"query": "kind:nginx.access && NOT status:404"})
        ),
        1
    );
    assert_eq!(
        hits(&idx, json!({"query": "+kind:system.syslog -msg:packer"})),
        1
    );
    assert_eq!(
        hits(
            &idx,
            json!({"query": "host:(web-1 OR db-2) OR msg:\"build started\""})
        ),
        3
    );
    assert_eq!(
        hits(&idx, json!({"query": "_exists_:host AND NOT kind:nginx*"})),
        2
    );
    assert_eq!(
        hits(
            &idx,
            json!({"query": "msg:update^2", "default_field": "kind"})
        ),
        2
    );
    // Explicit fields are strict: text on a number is an error, as in Elasticsearch.
    let e = idx
        .compile(&json!({"query": {"query_string": {"query": "status:many"}}}))
        .err()
        .unwrap();
    assert!(e.message.contains("many"), "{}", e.message);
    for (bad, says) in [
        ("msg:upd~2", "fuzzy"),
        ("(a OR b", "not closed"),
        ("/a.*/", "regular expressions"),
    ] {
        let e = idx
            .compile(&json!({"query": {"query_string": {"query": bad}}}))
            .err()
            .unwrap();
        assert!(e.message.contains(says), "{bad}: {}", e.message);
    }
    // Nesting is bounded, by parentheses or by chained operators, so no request exhausts the
    // stack.
    for deep in [
        format!("{}a{}", "(".repeat(40), ")".repeat(40)),
        format!("{}a", "NOT ".repeat(100_000)),
    ] {
        let e = idx
            .compile(&json!({"query": {"query_string": {"query": deep}}}))
            .err()
            .unwrap();
        assert!(e.message.contains("deeper"), "{}", e.message);
    }
}

#[test]
fn the_lexer_reads_escapes_ranges_and_operators() {
    assert_eq!(
        lex(r#"a\:b "x y" [1 TO *] >=5 && ||"#).unwrap(),
        vec![
            Token::Word("a:b".into()),
            Token::Phrase("x y".into()),
            Token::Range("1".into(), "*".into(), true, true),
            Token::Compare("gte", "5".into()),
            Token::And,
            Token::Or,
        ]
    );
}
