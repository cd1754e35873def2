//! The adapter's checks and calls, against the engine it drives.

use super::Engine;
use serde_json::json;

/// What a bulk run reports, item by item.
fn run<'a>(
    engine: &Engine,
    actions: Vec<Result<engine::bulk::Item<'a>, engine::bulk::Malformed>>,
) -> Vec<String> {
    let mut out = Vec::new();
    engine
        .bulk(
            None,
            None,
            actions.into_iter(),
            |index, verb, id, result| {
                out.push(format!(
                    "{index} {} {} {}",
                    verb.as_str(),
                    id.unwrap_or("-"),
                    result.map(|w| w.id).unwrap_or_else(|e| e.kind.to_string())
                ))
            },
        )
        .unwrap();
    out
}

#[test]
fn a_mapping_the_engine_cannot_build_is_named_before_the_race() {
    let op = crate::ops::OpSpec::CreateIndex(vec![crate::ops::IndexSpec {
        name: "shapes".into(),
        body: json!({"mappings": {"properties": {"shape": {"type": "join"}}}}),
    }]);
    let why = crate::backend::BackendKind::Embedded
        .check(&op)
        .unwrap_err();
    assert!(
        why.contains("index `shapes`: field `shape` has type `join`"),
        "{why}"
    );
    assert!(why.contains("--backend elasticsearch"), "{why}");
}

#[test]
fn searches_are_checked_against_the_mapping_the_race_creates() {
    let created = [crate::ops::IndexSpec {
        name: "osm".into(),
        body: json!({"mappings": {"properties": {"location": {"type": "geo_point"}, "name": {"type": "text"}}}}),
    }];
    let search = |index: &str, body: serde_json::Value| {
        crate::ops::OpSpec::Search(crate::ops::SearchSpec {
            index: index.into(),
            body,
            request_params: vec![],
            paging: None,
            bound: None,
        })
    };
    let why = super::cannot_run_on(
        &search(
            "osm",
            json!({"aggs": {"n": {"terms": {"field": "location"}}}}),
        ),
        &created,
    )
    .unwrap();
    assert!(why.contains("is a geo_point"), "{why}");
    let why = super::cannot_run_on(&search("osm", json!({"sort": ["name"]})), &created).unwrap();
    assert!(why.contains("cannot sort on `name`"), "{why}");
    // A good search, and an index the race does not create, pass.
    assert!(super::cannot_run_on(
        &search("osm", json!({"query": {"match": {"name": "x"}}})),
        &created
    )
    .is_none());
    assert!(super::cannot_run_on(&search("other", json!({"sort": ["nope"]})), &created).is_none());
}

#[test]
fn a_pattern_over_several_indices_is_searched_and_merged() {
    let engine = Engine::new();
    let mapping =
        json!({"mappings": {"properties": {"n": {"type": "long"}, "when": {"type": "date"}}}});
    for (name, ns) in [("osm-a", 0..5), ("osm-b", 5..12)] {
        engine.create_index(name, &mapping).map_err(|_| ()).unwrap();
        let body: String = ns
            .map(|n| format!("{{\"index\":{{}}}}\n{{\"n\":{n}}}\n"))
            .collect();
        let r = engine.rest(&super::RestRequest {
            method: "POST",
            path: &format!("/{name}/_bulk"),
            query: "refresh=true",
            body: body.as_bytes(),
        });
        assert_eq!(r.status, 200);
    }
    let spec = |body: serde_json::Value| crate::ops::SearchSpec {
        index: "osm*".into(),
        body,
        request_params: vec![],
        paging: None,
        bound: None,
    };
    let merged = super::many::prepare(
        &spec(
            json!({"query": {"range": {"n": {"gte": 3}}}, "aggs": {"m": {"max": {"field": "n"}}}}),
        ),
        engine.search_targets("osm*").unwrap(),
    )
    .unwrap();
    let super::Prepared::SearchMany(many) = merged else {
        panic!("several indices are one merged search")
    };
    assert_eq!(many.call(&crate::backend::Payload::None).unwrap().hits, 9);
    // What each index would lay out on its own is refused before the race, by name.
    let refused = super::many::prepare(
        &spec(json!({"aggs": {"d": {"auto_date_histogram": {"field": "when"}}}})),
        engine.search_targets("osm*").unwrap(),
    );
    let Ok(super::Prepared::Fails(e)) = refused else {
        panic!("refused before the race")
    };
    assert!(
        e.message.contains("auto_date_histogram") && e.message.contains("(osm-a, osm-b)"),
        "{}",
        e.message
    );
}

#[test]
fn a_batch_runs_from_its_pairs_as_from_its_body() {
    // The same bulk body, once parsed as Elasticsearch reads it and once from the pairs the
    // corpus reader recorded, against two fresh engines: the outcomes are the same.
    let body = "{\"index\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":1}\n{\"create\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"a\":2}\n{\"update\":{\"_index\":\"i\",\"_id\":\"1\"}}\n{\"doc\":{\"a\":3}}\n{\"index\":{\"_index\":\"nope\"}}\n{\"a\":4}\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.json");
    std::fs::write(&path, body).unwrap();
    let mut set = crate::corpus::DocumentSet::file(path, "");
    set.with_actions = true;
    let mut reader = crate::corpus::CorpusReader::open(vec![set], None)
        .unwrap()
        .with_framing(crate::corpus::Framing::Bulk(Box::new(NoActions)));
    let (mut batch, mut pairs) = (String::new(), Vec::new());
    assert_eq!(
        reader.fill_items(&mut batch, &mut pairs, 10, None).unwrap(),
        4
    );
    assert_eq!(batch, body);
    let engines = [Engine::new(), Engine::new()];
    for e in &engines {
        e.create_index("i", &serde_json::json!({}))
            .map_err(|_| ())
            .unwrap();
    }
    // Generated ids differ from engine to engine: each is shown by its length.
    let generated = |lines: Vec<String>| -> Vec<String> {
        lines
            .into_iter()
            .map(|l| match l.rsplit_once(' ') {
                Some((head, id)) if id.len() == 20 => format!("{head} <20-character id>"),
                _ => l,
            })
            .collect()
    };
    let parsed = generated(run(&engines[0], engine::bulk::items(body).collect()));
    let paired = generated(run(
        &engines[1],
        super::batch_items(&batch, crate::corpus::Pairs::Listed(&pairs)).collect(),
    ));
    assert_eq!(parsed, paired);
    assert_eq!(
        parsed,
        vec![
            "i index 1 1",
            "i create 1 version_conflict_engine_exception",
            "i update 1 1",
            // A write creates its missing index, as Elasticsearch's auto-creation does.
            "nope index - <20-character id>"
        ]
    );
}

/// Framing for files that bring their own action lines.
struct NoActions;

impl crate::corpus::ActionLines for NoActions {
    fn write_action(&mut self, _buf: &mut String) -> crate::corpus::Action {
        unreachable!("the file has its own action lines")
    }
}
