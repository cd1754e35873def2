use super::*;
use crate::bulk::Done;
use crate::bulk::Item;
use crate::bulk::Verb;
use serde_json::json;

fn add(idx: &EmbeddedIndex, body: &str) {
    idx.add_for_test(body);
}

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {"name": {"type": "text"}, "population": {"type": "long"}, "cc": {"type": "keyword"}}}});
    EmbeddedIndex::create("places", &body).unwrap()
}

#[test]
fn constant_score_scores_each_match_its_boost_and_unknown_types_are_named_before_a_race() {
    let idx = index();
    for d in [
        r#"{"cc":"AT","population":5}"#,
        r#"{"cc":"DE","population":7}"#,
    ] {
        add(&idx, d);
    }
    idx.refresh().unwrap();
    let q = json!({"query": {"constant_score": {"filter": {"term": {"cc": "AT"}}, "boost": 2.5}}});
    let plan = idx.compile(&q).unwrap();
    let (total, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert_eq!((total, hits[0].score), (1, 2.5));
    // Found in the body alone, with no index: deep inside bool and constant_score too.
    let deep = json!({"query": {"bool": {"filter": [{"constant_score": {"filter": {"more_like_this": {}}}}]}}});
    let why = crate::search::unsupported_body(&deep).unwrap();
    assert!(why.contains("`more_like_this` is not supported"), "{why}");
    assert!(crate::search::unsupported_body(&q).is_none());
}

#[test]
fn exists_prefix_and_multi_match_match_as_elasticsearch_does() {
    let body = json!({"mappings": {"properties": {
        "title": {"type": "text"}, "body": {"type": "text"}, "tag": {"type": "keyword"},
        "n": {"type": "long"},
    }}});
    let idx = EmbeddedIndex::create("m", &body).unwrap();
    for d in [
        r#"{"title": "rust load driver", "body": "fast", "tag": "a.b-1", "n": 1}"#,
        r#"{"title": "python", "body": "rust everywhere rust", "tag": "a.c"}"#,
        r#"{"body": "nothing here", "tag": "b.a"}"#,
    ] {
        add(&idx, d);
    }
    idx.refresh().unwrap();
    let hits = |q: serde_json::Value| {
        let plan = idx.compile(&json!({ "query": q })).unwrap();
        idx.search(&plan).unwrap()
    };
    assert_eq!(hits(json!({"exists": {"field": "n"}})), 1);
    assert_eq!(hits(json!({"exists": {"field": "title"}})), 2);
    // A prefix is literal: `.` is no wildcard.
    assert_eq!(hits(json!({"prefix": {"tag": "a."}})), 2);
    assert_eq!(hits(json!({"prefix": {"tag": {"value": "a.b-"}}})), 1);
    assert_eq!(hits(json!({"prefix": {"tag": "a*"}})), 0);
    let mm = |kind: &str| json!({"multi_match": {"query": "rust", "fields": ["title^3", "body"], "type": kind}});
    assert_eq!(hits(mm("best_fields")), 2);
    assert_eq!(hits(mm("most_fields")), 2);
    // best_fields ranks the boosted title first.
    let plan = idx.compile(&json!({"query": mm("best_fields")})).unwrap();
    let (_, found, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert!(
        String::from_utf8_lossy(found[0].source.as_deref().unwrap()).contains("rust load driver")
    );
    assert!(idx.compile(&json!({"query": {"multi_match": {"query": "x", "fields": ["title"], "type": "cross_fields"}}})).is_err());
}

#[test]
fn a_date_field_reads_values_by_its_format() {
    let body = json!({"mappings": {"properties": {
        "t": {"type": "date", "format": "epoch_second"},
        "u": {"type": "date", "format": "yyyy-MM-dd HH:mm:ss||epoch_millis"},
    }}});
    let idx = EmbeddedIndex::create("d", &body).unwrap();
    let add = |doc: &str| idx.apply(&Item::new(Verb::Index, None, Some(doc)));
    // 1767312000 seconds is 2026-01-02: read as milliseconds it would be January 1970.
    assert!(add(r#"{"t": 1767312000, "u": "2026-01-02 03:04:05"}"#).is_ok());
    let e = add(r#"{"u": "2026-01-02T03:04:05Z"}"#).err().unwrap();
    assert!(e.reason.contains("yyyy-MM-dd HH:mm:ss"), "{}", e.reason);
    idx.refresh().unwrap();
    let hits = |q: serde_json::Value| {
        let plan = idx.compile(&json!({ "query": q })).unwrap();
        idx.search(&plan).unwrap()
    };
    assert_eq!(hits(json!({"range": {"t": {"gte": 1767312000}}})), 1);
    assert_eq!(
        hits(json!({"range": {"u": {"gte": "2026-01-02 03:00:00"}}})),
        1
    );
    assert_eq!(
        hits(json!({"range": {"u": {"gte": "2026-01-02 04:00:00"}}})),
        0
    );
    let e = EmbeddedIndex::create(
        "x",
        &json!({"mappings": {"properties": {"w": {"type": "date", "format": "week_date"}}}}),
    );
    assert!(e.err().unwrap().message.contains("`week_date` is not read"));
}

#[test]
fn bulk_refresh_and_search() {
    let idx = index();
    let docs = [
        "{\"name\":\"Sankt Georgen im Attergau\",\"population\":1500,\"cc\":\"AT\"}",
        "{\"name\":\"Georgen Sankt\",\"population\":20,\"cc\":\"AT\"}",
        "{\"name\":\"Wien\",\"population\":\"x\"}",
    ];
    let results: Vec<Option<String>> = docs
        .iter()
        .map(|d| {
            idx.apply(&Item::new(Verb::Index, None, Some(d)))
                .ok()
                .map(|w| w.id)
        })
        .collect();
    assert_eq!(
        results.iter().map(Option::is_some).collect::<Vec<_>>(),
        [true, true, false]
    );
    let first = results[0].clone().unwrap();
    assert_ne!(Some(first.clone()), results[1], "generated ids are unique");
    idx.refresh().unwrap();
    assert_eq!(idx.searchable_docs(), 2);
    let run = |q: serde_json::Value| {
        let plan = idx.compile(&json!({ "query": q })).unwrap();
        idx.search(&plan).unwrap()
    };
    assert_eq!(run(json!({"match_phrase": {"name": "Sankt Georgen"}})), 1);
    assert_eq!(run(json!({"match": {"name": "sankt georgen"}})), 2);
    assert_eq!(
        run(json!({"match": {"name": {"query": "sankt attergau", "operator": "and"}}})),
        1
    );
    assert_eq!(run(json!({"term": {"cc": "AT"}})), 2);
    assert_eq!(run(json!({"range": {"population": {"gte": 100}}})), 1);
    assert_eq!(
        run(
            json!({"bool": {"must": [{"match": {"name": "georgen"}}], "must_not": [{"range": {"population": {"lt": 100}}}]}})
        ),
        1
    );
    assert_eq!(run(json!({"match_all": {}})), 2);
    idx.get(&first).unwrap();
    assert_eq!(idx.get("999").unwrap_err().kind, ErrorKind::NotFound);
}

#[test]
fn writes_by_id_are_seen_at_once_and_updates_merge() {
    let idx = index();
    let item = |verb, id: &'static str, body: Option<&'static str>| Item::new(verb, Some(id), body);
    assert_eq!(
        idx.apply(&item(
            Verb::Index,
            "a",
            Some("{\"name\":\"Wien\",\"population\":1}")
        ))
        .unwrap()
        .done,
        Done::Created
    );
    assert_eq!(
        idx.apply(&item(Verb::Update, "a", Some("{\"doc\":{\"cc\":\"AT\"}}")))
            .unwrap()
            .done,
        Done::Updated
    );
    let merged: Value = serde_json::from_str(&idx.current_source("a").unwrap().unwrap()).unwrap();
    assert_eq!(merged, json!({"name": "Wien", "population": 1, "cc": "AT"}));
    assert_eq!(
        idx.apply(&item(Verb::Create, "a", Some("{}")))
            .unwrap_err()
            .status,
        409
    );
    assert_eq!(
        idx.apply(&item(Verb::Update, "b", Some("{\"doc\":{}}")))
            .unwrap_err()
            .kind,
        "document_missing_exception"
    );
    assert_eq!(
        idx.apply(&item(
            Verb::Update,
            "b",
            Some("{\"doc\":{\"cc\":\"DE\"},\"doc_as_upsert\":true}")
        ))
        .unwrap()
        .done,
        Done::Created
    );
    assert_eq!(
        idx.apply(&item(Verb::Index, "a", Some("{\"name\":\"Graz\"}")))
            .unwrap()
            .done,
        Done::Updated
    );
    idx.refresh().unwrap();
    assert_eq!(idx.searchable_docs(), 2, "a replaced document counts once");
    assert_eq!(
        idx.current_source("a").unwrap().unwrap(),
        "{\"name\":\"Graz\"}"
    );
    assert_eq!(
        idx.apply(&item(
            Verb::Update,
            "a",
            Some("{\"doc\":{\"population\":2}}")
        ))
        .unwrap()
        .done,
        Done::Updated,
        "committed documents are found too"
    );
    assert_eq!(
        idx.apply(&item(Verb::Delete, "a", None)).unwrap().done,
        Done::Deleted
    );
    assert!(idx.current_source("a").unwrap().is_none());
    assert_eq!(
        idx.apply(&item(Verb::Delete, "zz", None)).unwrap().done,
        Done::NotFound
    );
    idx.refresh().unwrap();
    assert_eq!(idx.searchable_docs(), 1);
}

#[test]
fn unknown_fields_and_queries_are_bad_requests() {
    // Where documents cannot bring new fields, a field the mapping lacks is named.
    let body = json!({"mappings": {"dynamic": "strict", "properties": {"name": {"type": "text"}}}});
    let strict = EmbeddedIndex::create("strict", &body).unwrap();
    let e = strict
        .compile(&json!({"query": {"match": {"nmae": "x"}}}))
        .err()
        .unwrap();
    assert_eq!(e.kind, ErrorKind::BadRequest);
    assert!(e.message.contains("did you mean `name`"), "{}", e.message);
    // Where they can, it matches nothing until one does, as in Elasticsearch.
    let idx = index();
    add(&idx, r#"{"name": "x", "population": 1}"#);
    idx.refresh().unwrap();
    let plan = idx
        .compile(&json!({"query": {"match": {"nmae": "x"}}}))
        .unwrap();
    assert_eq!(idx.search_hits(&plan, &idx.searcher()).unwrap().0, 0);
    assert_eq!(
        idx.compile(&json!({"query": {"fuzzy": {"name": "x"}}}))
            .err()
            .unwrap()
            .kind,
        ErrorKind::BadRequest
    );
}

#[test]
fn aliases_read_their_target_and_copy_to_indexes_values_again() {
    let body = json!({"mappings": {"properties": {
        "first": {"type": "text", "copy_to": "full"},
        "last": {"type": "text", "copy_to": ["full"]},
        "full": {"type": "text"},
        "country": {"type": "keyword"},
        "cc": {"type": "alias", "path": "country"},
        "pop": {"type": "long"},
        "people": {"type": "alias", "path": "pop"},
    }}});
    let idx = EmbeddedIndex::create("a", &body).unwrap();
    for d in [
        r#"{"first":"Ada","last":"Lovelace","country":"GB","pop":3}"#,
        r#"{"first":"Alan","last":"Turing","country":"GB","pop":5}"#,
        r#"{"first":"Grace","last":"Hopper","country":"US","pop":7}"#,
    ] {
        add(&idx, d);
    }
    idx.refresh().unwrap();
    let total = |q: serde_json::Value| {
        let plan = idx.compile(&json!({"query": q})).unwrap();
        idx.search_hits(&plan, &idx.searcher()).unwrap().0
    };
    assert_eq!(total(json!({"term": {"cc": "GB"}})), 2);
    assert_eq!(total(json!({"range": {"people": {"gte": 5}}})), 2);
    assert_eq!(total(json!({"exists": {"field": "people"}})), 3);
    // Both names went into `full`; the source keeps no `full` of its own.
    assert_eq!(total(json!({"match": {"full": "turing"}})), 1);
    assert_eq!(total(json!({"match_phrase": {"full": "grace"}})), 1);
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {"by": {"terms": {"field": "cc"}}, "s": {"sum": {"field": "people"}}}}))
        .unwrap();
    let aggs = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    let aggs = plan.aggregations_json(&aggs).unwrap();
    assert_eq!(
        aggs["by"]["buckets"][0],
        json!({"key": "GB", "doc_count": 2})
    );
    assert_eq!(aggs["s"]["value"], json!(15.0));
    let plan = idx
        .compile(&json!({"sort": [{"people": "desc"}], "size": 1}))
        .unwrap();
    let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert_eq!(hits.len(), 1);
    // A path or a copy_to naming no field is named.
    let bad = |props: serde_json::Value| {
        EmbeddedIndex::check_mapping("x", &json!({"mappings": {"properties": props}})).unwrap_err()
    };
    assert!(bad(json!({"a": {"type": "alias", "path": "nope"}})).contains("`nope` names no field"));
    assert!(bad(json!({"a": {"type": "text", "copy_to": "nope"}})).contains("`nope`"));
}

#[test]
fn ip_fields_match_addresses_blocks_and_ranges() {
    let body = json!({"mappings": {"properties": {"ip": {"type": "ip"}}}});
    let idx = EmbeddedIndex::create("ips", &body).unwrap();
    for ip in [
        "10.1.2.3",
        "10.1.9.9",
        "10.1.9.9",
        "192.168.0.1",
        "2001:db8::1",
    ] {
        add(&idx, &json!({ "ip": ip }).to_string());
    }
    let bad = idx.apply(&Item::new(
        Verb::Index,
        None,
        Some(r#"{"ip": "not-an-ip"}"#),
    ));
    assert!(bad.is_err());
    idx.refresh().unwrap();
    let total = |q: serde_json::Value| {
        let plan = idx.compile(&json!({ "query": q })).unwrap();
        idx.search_hits(&plan, &idx.searcher()).unwrap().0
    };
    assert_eq!(total(json!({"term": {"ip": "10.1.2.3"}})), 1);
    assert_eq!(total(json!({"term": {"ip": "10.1.0.0/16"}})), 3);
    assert_eq!(total(json!({"term": {"ip": "2001:db8::/32"}})), 1);
    assert_eq!(
        total(json!({"terms": {"ip": ["192.168.0.1", "2001:db8::1"]}})),
        2
    );
    assert_eq!(
        total(json!({"range": {"ip": {"gte": "10.0.0.0", "lt": "192.168.0.1"}}})),
        3
    );
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {"by": {"terms": {"field": "ip"}}}}))
        .unwrap();
    let aggs = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    let aggs = plan.aggregations_json(&aggs).unwrap();
    assert_eq!(
        aggs["by"]["buckets"][0],
        json!({"key": "10.1.9.9", "doc_count": 2})
    );
    let keys: Vec<&str> = aggs["by"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["key"].as_str().unwrap())
        .collect();
    assert!(
        keys.contains(&"2001:db8::1") && keys.contains(&"192.168.0.1"),
        "{keys:?}"
    );
}

#[test]
fn geo_distance_sorts_nearest_first_with_distances_in_the_unit_asked() {
    let body = json!({"mappings": {"properties": {"name": {"type": "keyword"}, "at": {"type": "geo_point"}}}});
    let idx = EmbeddedIndex::create("geo", &body).unwrap();
    // Vienna, Salzburg, Graz, and one without a point.
    for d in [
        r#"{"name":"salzburg","at":{"lat":47.8095,"lon":13.055}}"#,
        r#"{"name":"graz","at":"47.0707,15.4395"}"#,
        r#"{"name":"vienna","at":[16.3738,48.2082]}"#,
        r#"{"name":"nowhere"}"#,
    ] {
        add(&idx, d);
    }
    idx.refresh().unwrap();
    let origin: (f64, f64) = (48.2082, 16.3738);
    let sorted = |order: &str| {
        let q = json!({"sort": [{"_geo_distance": {"at": {"lat": origin.0, "lon": origin.1}, "order": order, "unit": "km"}}]});
        let plan = idx.compile(&q).unwrap();
        let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
        hits.into_iter()
            .map(|h| {
                let name =
                    serde_json::from_slice::<serde_json::Value>(h.source.as_deref().unwrap())
                        .unwrap()["name"]
                        .clone();
                (
                    name.as_str().unwrap().to_string(),
                    h.sort.unwrap()[0].clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let asc = sorted("asc");
    let names: Vec<&str> = asc.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["vienna", "graz", "salzburg", "nowhere"]);
    // Distances computed here by the haversine formula on Elasticsearch's earth radius.
    let km = |lat: f64, lon: f64| {
        let (p1, p2) = (origin.0.to_radians(), lat.to_radians());
        let (dp, dl) = ((lat - origin.0).to_radians(), (lon - origin.1).to_radians());
        let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
        2.0 * 6_371.008_771_4 * h.sqrt().asin()
    };
    assert!(asc[0].1.as_f64().unwrap().abs() < 1e-6);
    assert!((asc[1].1.as_f64().unwrap() - km(47.0707, 15.4395)).abs() < 1e-6);
    assert!((asc[2].1.as_f64().unwrap() - km(47.8095, 13.055)).abs() < 1e-6);
    assert_eq!(asc[3].1, json!("Infinity"));
    let desc: Vec<String> = sorted("desc").into_iter().map(|(n, _)| n).collect();
    assert_eq!(desc[..3], ["salzburg", "graz", "vienna"]);
    let bad = idx
        .compile(&json!({"sort": [{"_geo_distance": {"name": [0, 0]}}]}))
        .err()
        .unwrap();
    assert!(
        bad.message.contains("no geo_point field"),
        "{}",
        bad.message
    );
}

#[test]
fn keyword_sorts_order_strings_across_segments() {
    let body =
        json!({"mappings": {"properties": {"cc": {"type": "keyword"}, "n": {"type": "long"}}}});
    let idx = EmbeddedIndex::create("k", &body).unwrap();
    // Three segments, each with its own dictionary, and a document without `cc`.
    for batch in [&["DE", "AT"][..], &["IT", "CH", "AT"][..], &["FR"][..]] {
        for cc in batch {
            add(&idx, &json!({ "cc": cc }).to_string());
        }
        idx.refresh().unwrap();
    }
    add(&idx, r#"{"n": 1}"#);
    idx.refresh().unwrap();
    let sorted = |sort: serde_json::Value, size: u64| {
        let plan = idx.compile(&json!({"sort": sort, "size": size})).unwrap();
        let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
        hits.into_iter()
            .map(|h| h.sort.unwrap()[0].clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        sorted(json!([{"cc": "asc"}]), 10),
        json!(["AT", "AT", "CH", "DE", "FR", "IT", null])
            .as_array()
            .unwrap()
            .clone()
    );
    assert_eq!(
        sorted(json!([{"cc": {"order": "desc"}}]), 3),
        json!(["IT", "FR", "DE"]).as_array().unwrap().clone()
    );
    let e = idx
        .compile(&json!({"sort": ["cc"], "search_after": ["CH"]}))
        .err()
        .unwrap();
    assert!(
        e.message.contains("search_after on a keyword sort"),
        "{}",
        e.message
    );
}

#[test]
fn geo_centroid_is_the_mean_of_the_points() {
    let body = json!({"mappings": {"properties": {"cc": {"type": "keyword"}, "at": {"type": "geo_point"}}}});
    let idx = EmbeddedIndex::create("g", &body).unwrap();
    let points = [
        ("AT", 48.2, 16.37),
        ("AT", 47.07, 15.44),
        ("DE", 52.52, 13.4),
        ("AT", 47.8, 13.05),
    ];
    for (cc, lat, lon) in points {
        add(
            &idx,
            &json!({"cc": cc, "at": {"lat": lat, "lon": lon}}).to_string(),
        );
    }
    idx.refresh().unwrap();
    let plan = idx
        .compile(&json!({"size": 0, "aggs": {
            "c": {"geo_centroid": {"field": "at"}},
            "by": {"terms": {"field": "cc"}, "aggs": {"c": {"geo_centroid": {"field": "at"}}}},
            "none": {"filter": {"term": {"cc": "FR"}}, "aggs": {"c": {"geo_centroid": {"field": "at"}}}}
        }}))
        .unwrap();
    let aggs = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    let aggs = plan.aggregations_json(&aggs).unwrap();
    let mean = |sel: &dyn Fn(&&(&str, f64, f64)) -> bool| {
        let chosen: Vec<_> = points.iter().filter(sel).collect();
        let n = chosen.len() as f64;
        (
            chosen.iter().map(|p| p.1).sum::<f64>() / n,
            chosen.iter().map(|p| p.2).sum::<f64>() / n,
        )
    };
    let close = |got: &serde_json::Value, want: f64| {
        assert!(
            (got.as_f64().unwrap() - want).abs() < 1e-9,
            "{got} != {want}"
        );
    };
    let (lat, lon) = mean(&|_| true);
    close(&aggs["c"]["location"]["lat"], lat);
    close(&aggs["c"]["location"]["lon"], lon);
    assert_eq!(aggs["c"]["count"], 4);
    let at = &aggs["by"]["buckets"][0];
    assert_eq!(
        (at["key"].as_str(), at["c"]["count"].as_u64()),
        (Some("AT"), Some(3))
    );
    let (lat, lon) = mean(&|p| p.0 == "AT");
    close(&at["c"]["location"]["lat"], lat);
    close(&at["c"]["location"]["lon"], lon);
    assert_eq!(aggs["none"]["c"], json!({"count": 0}));
    let e = idx
        .compile(&json!({"aggs": {"c": {"geo_centroid": {"field": "cc"}}}}))
        .err()
        .unwrap();
    assert!(
        e.message.contains("needs a geo_point field"),
        "{}",
        e.message
    );
}

/// A force-merge while the writer's merge policy merges in the background: segments listed for
/// the merge may be taken by a background merge first (tantivy then finds them gone, as
/// elastic/metricbeat's force-merge met); the merge lists them again and ends with the count
/// asked for, every document kept.
#[test]
fn a_force_merge_beside_background_merges_ends_merged() {
    let idx = index();
    let mut written = 0;
    for round in 0..6 {
        for i in 0..12 {
            add(&idx, &format!(r#"{{"cc":"C{round}","population":{i}}}"#));
            written += 1;
            idx.refresh().unwrap();
        }
        idx.force_merge(1).unwrap();
        assert_eq!(idx.index.searchable_segment_metas().unwrap().len(), 1);
    }
    let all = idx.compile(&json!({"query": {"match_all": {}}})).unwrap();
    assert_eq!(idx.search_hits(&all, &idx.searcher()).unwrap().0, written);
}
