//! function_score and the geo queries, checked against values computed here from the
//! documents by Elasticsearch's documented formulas.

use crate::bulk::Item;
use crate::bulk::Verb;
use crate::index::EmbeddedIndex;
use serde_json::{json, Value};

/// Places on a grid around Vienna (48.2, 16.4): lat 46..50.5, lon 14..18.5 by 0.5°.
fn places() -> Vec<(String, f64, f64, i64)> {
    let mut out = Vec::new();
    for i in 0..10 {
        for j in 0..10 {
            let (lat, lon) = (46.0 + i as f64 * 0.5, 14.0 + j as f64 * 0.5);
            out.push((
                format!("p{i}{j}"),
                lat,
                lon,
                (i * 10 + j) as i64 * 37 % 1000,
            ));
        }
    }
    out
}

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "name": {"type": "keyword"}, "loc": {"type": "geo_point"}, "pop": {"type": "long"},
    }}});
    let idx = EmbeddedIndex::create("geo", &body).unwrap();
    for (name, lat, lon, pop) in places() {
        let doc = json!({"name": name, "loc": {"lat": lat, "lon": lon}, "pop": pop}).to_string();
        idx.apply(&Item::new(Verb::Index, Some(&name), Some(&doc)))
            .unwrap();
    }
    idx.refresh().unwrap();
    idx
}

/// Hits as (id, score), best first.
fn search(idx: &EmbeddedIndex, query: Value, size: usize) -> (u64, Vec<(String, f32)>) {
    let plan = idx.compile(&json!({"query": query, "size": size})).unwrap();
    let (total, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    (total, hits.into_iter().map(|h| (h.id, h.score)).collect())
}

/// The spherical law of cosines: independent of the engine's haversine.
fn distance(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2, dl) = (
        lat1.to_radians(),
        lat2.to_radians(),
        (lon2 - lon1).to_radians(),
    );
    let c = (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos()).clamp(-1.0, 1.0);
    6_371_008.771_4 * c.acos()
}

#[test]
fn geo_distance_and_bounding_box_keep_exactly_the_points_inside() {
    let idx = index();
    for km in [30.0, 120.0, 250.0] {
        let want = places()
            .iter()
            .filter(|(_, lat, lon, _)| distance(48.2, 16.4, *lat, *lon) <= km * 1000.0)
            .count() as u64;
        let (got, _) = search(
            &idx,
            json!({"geo_distance": {"distance": format!("{km}km"), "loc": {"lat": 48.2, "lon": 16.4}}}),
            0,
        );
        assert_eq!(got, want, "{km} km");
    }
    // Inside a bool filter, as tracks write it.
    let q =
        json!({"bool": {"filter": {"geo_distance": {"distance": "120km", "loc": [16.4, 48.2]}}}});
    assert!(search(&idx, q, 0).0 > 0);
    let want = places()
        .iter()
        .filter(|(_, lat, lon, _)| (47.0..=48.5).contains(lat) && (15.0..=16.0).contains(lon))
        .count() as u64;
    let q = json!({"geo_bounding_box": {"loc": {"top_left": {"lat": 48.5, "lon": 15.0}, "bottom_right": {"lat": 47.0, "lon": 16.0}}}});
    assert_eq!(search(&idx, q, 0).0, want);
}

#[test]
fn function_score_scores_as_elasticsearch_documents() {
    let idx = index();
    // field_value_factor: modifier(factor × value), replacing the query's score.
    let q = json!({"function_score": {"query": {"match_all": {}},
        "field_value_factor": {"field": "pop", "factor": 2.0, "modifier": "log1p"}, "boost_mode": "replace"}});
    let (_, hits) = search(&idx, q, 3);
    let mut want: Vec<(String, f64)> = places()
        .iter()
        .map(|(n, _, _, pop)| (n.clone(), (1.0 + 2.0 * *pop as f64).log10()))
        .collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    for ((id, score), (wid, wscore)) in hits.iter().zip(&want) {
        assert!(
            (*score as f64 - wscore).abs() < 1e-5,
            "{id} {score} vs {wid} {wscore}"
        );
    }
    // A gauss decay on the point: 1 at the origin, `decay` at `scale`.
    let q = json!({"function_score": {"gauss": {"loc": {"origin": {"lat": 48.0, "lon": 16.0}, "scale": "100km", "decay": 0.5}}, "boost_mode": "replace"}});
    let (_, hits) = search(&idx, q, 100);
    let sigma2 = -(100_000f64.powi(2)) / (2.0 * 0.5f64.ln());
    for (id, score) in &hits {
        let (_, lat, lon, _) = places().into_iter().find(|p| &p.0 == id).unwrap();
        let d = distance(48.0, 16.0, lat, lon);
        let want = (-(d * d) / (2.0 * sigma2)).exp();
        assert!(
            (*score as f64 - want).abs() < 1e-4,
            "{id}: {score} vs {want}"
        );
    }
    assert_eq!(hits[0].0, "p44", "the origin's own point scores highest");
    // Filtered functions with weights summed; docs no function matches score 1 × query.
    let q = json!({"function_score": {
        "query": {"range": {"pop": {"lt": 100}}},
        "functions": [
            {"filter": {"range": {"pop": {"lt": 50}}}, "weight": 3},
            {"filter": {"range": {"pop": {"lt": 20}}}, "weight": 5}],
        "score_mode": "sum", "boost_mode": "replace", "min_score": 2}});
    let (total, hits) = search(&idx, q, 100);
    let below = |n: i64| places().iter().filter(|p| p.3 < n).count() as u64;
    assert_eq!(
        total,
        below(50),
        "min_score drops those no function raised to 2"
    );
    for (id, score) in hits {
        let pop = places().into_iter().find(|p| p.0 == id).unwrap().3;
        let want = if pop < 20 { 8.0 } else { 3.0 };
        assert_eq!(score, want, "{id} with pop {pop}");
    }
}

#[test]
fn scripts_are_refused_by_name() {
    let idx = index();
    for q in [
        json!({"function_score": {"script_score": {"script": "doc['pop'].stream().reduce(0, (a, b) -> a + b)"}}}),
        json!({"script_score": {"query": {"match_all": {}}, "script": "doc['pop'].stream().mapToDouble(x -> x * 2).sum()"}}),
        json!({"function_score": {"functions": [{"weight": 2}, {"script_score": {"script": "x -> 1"}}]}}),
    ] {
        let body = json!({"query": q});
        // Named before the race, from the body alone; and at the search too.
        let why = crate::search::unsupported_body(&body).unwrap();
        assert!(why.contains("script"), "{why}");
        let why = idx.compile(&body).err().unwrap().message;
        assert!(why.contains("script"), "{why}");
    }
}

#[test]
fn terms_scores_every_match_its_boost() {
    let idx = index();
    let (total, hits) = search(
        &idx,
        json!({"terms": {"name": ["p00", "p11", "nope"], "boost": 2.5}}),
        10,
    );
    assert_eq!(total, 2);
    assert!(hits.iter().all(|(_, s)| *s == 2.5), "{hits:?}");
    let refused = idx
        .compile(&json!({"query": {"terms": {"name": ["p00"], "pop": [1]}}}))
        .err()
        .unwrap();
    assert!(
        refused.message.contains("exactly one field"),
        "{}",
        refused.message
    );
}
