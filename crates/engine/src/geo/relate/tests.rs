//! geo_shape fields: queries with their four relations, box, distance and grid queries, and
//! the aggregations on shapes, checked against answers worked out by hand from the shapes
//! (boxes, areas, geohash bits, Web Mercator tiles), not by the engine's code.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Nine documents, `n` 1 to 9; 8 has no shape, 9 has two points.
fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {
        "n": {"type": "long"}, "shape": {"type": "geo_shape"}}}});
    let idx = EmbeddedIndex::create("shapes", &body).unwrap();
    let shapes = [
        json!("POINT (1 1)"),
        json!({"type": "LineString", "coordinates": [[0.5, 5.0], [10.0, 5.0]]}),
        json!("POLYGON ((20 20, 30 20, 30 30, 20 30, 20 20))"),
        json!({"type": "polygon", "coordinates": [
            [[40, 1], [50, 1], [50, 11], [40, 11], [40, 1]],
            [[44, 5], [46, 5], [46, 7], [44, 7], [44, 5]]]}),
        json!("MULTIPOLYGON (((1 40, 3 40, 3 42, 1 42, 1 40)), ((10 40, 12 40, 12 42, 10 42, 10 40)))"),
        json!({"type": "envelope", "coordinates": [[60, 10], [70, 1]]}),
        json!("GEOMETRYCOLLECTION (POINT (80 80), LINESTRING (80 70, 85 75))"),
        Value::Null,
        json!(["POINT (-50 -50)", {"type": "point", "coordinates": [-60, -60]}]),
    ];
    for (i, shape) in shapes.into_iter().enumerate() {
        let doc = match shape {
            Value::Null => json!({"n": i + 1}),
            s => json!({"n": i + 1, "shape": s}),
        };
        idx.add_for_test(&doc.to_string());
    }
    idx.refresh().unwrap();
    idx
}

fn matching(idx: &EmbeddedIndex, query: Value) -> BTreeSet<i64> {
    let plan = idx
        .compile(&json!({"query": query, "size": 100, "_source": ["n"]}))
        .unwrap();
    let (_, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    hits.iter()
        .map(|h| {
            let source: Value = serde_json::from_slice(h.source.as_ref().unwrap()).unwrap();
            source["n"].as_i64().unwrap()
        })
        .collect()
}

fn shape(relation: &str, shape: Value) -> Value {
    json!({"geo_shape": {"shape": {"shape": shape, "relation": relation}}})
}

fn set(ns: &[i64]) -> BTreeSet<i64> {
    ns.iter().copied().collect()
}

#[test]
fn the_four_relations() {
    let idx = index();
    let near_origin = json!("BBOX (-1, 11, 6, -1)");
    assert_eq!(
        matching(&idx, shape("intersects", near_origin.clone())),
        set(&[1, 2])
    );
    assert_eq!(
        matching(&idx, shape("within", near_origin.clone())),
        set(&[1, 2])
    );
    // The line runs on to longitude 10: not within a box ending at 5.
    assert_eq!(
        matching(&idx, shape("within", json!("BBOX (-1, 5, 6, -1)"))),
        set(&[1])
    );
    // Disjoint: every document with a shape but the two; the one without is not matched.
    assert_eq!(
        matching(&idx, shape("disjoint", near_origin)),
        set(&[3, 4, 5, 6, 7, 9])
    );
    assert_eq!(
        matching(
            &idx,
            shape("contains", json!({"type": "point", "coordinates": [41, 2]}))
        ),
        set(&[4])
    );
    // In the hole: the polygon neither contains nor intersects it.
    assert_eq!(
        matching(&idx, shape("contains", json!("POINT (45 6)"))),
        set(&[])
    );
    assert_eq!(
        matching(
            &idx,
            shape("intersects", json!("BBOX (44.5, 45.5, 6.5, 5.5)"))
        ),
        set(&[])
    );
    assert_eq!(
        matching(
            &idx,
            shape(
                "intersects",
                json!("POLYGON ((24 24, 26 24, 25 26, 24 24))")
            )
        ),
        set(&[3])
    );
    // A line crossing the multipolygon's gap touches neither part.
    assert_eq!(
        matching(&idx, shape("intersects", json!("LINESTRING (5 39, 7 43)"))),
        set(&[])
    );
    assert_eq!(
        matching(&idx, shape("intersects", json!("LINESTRING (2 39, 2 43)"))),
        set(&[5])
    );
    // One of the document's two points suffices to intersect; within needs both.
    let box_one = json!({"type": "envelope", "coordinates": [[-55, -45], [-45, -55]]});
    assert_eq!(
        matching(&idx, shape("intersects", box_one.clone())),
        set(&[9])
    );
    assert_eq!(matching(&idx, shape("within", box_one)), set(&[]));
    assert_eq!(
        matching(&idx, shape("within", json!("BBOX (-65, -45, -45, -65)"))),
        set(&[9])
    );
}

#[test]
fn box_distance_and_grid_queries() {
    let idx = index();
    let q = json!({"geo_bounding_box": {"shape": {"top_left": [-55, -45], "bottom_right": [-45, -55]}}});
    assert_eq!(matching(&idx, q), set(&[9]));
    // The line runs along latitude 5: half a degree (55.6 km on Elasticsearch's mean
    // radius) from (5, 5.5).
    let near = |d: &str| json!({"geo_distance": {"distance": d, "shape": [5.0, 5.5]}});
    assert_eq!(matching(&idx, near("60km")), set(&[2]));
    assert_eq!(matching(&idx, near("50km")), set(&[]));
    let circle = json!({"type": "circle", "coordinates": [5.0, 5.5], "radius": "60km"});
    assert_eq!(matching(&idx, shape("intersects", circle)), set(&[2]));
    // Geohash `s` is longitudes 0 to 45, latitudes 0 to 45; tile 1/0/1 the south-west.
    let grid = |k: &str, v: &str| json!({"geo_grid": {"shape": {k: v}}});
    assert_eq!(matching(&idx, grid("geohash", "s")), set(&[1, 2, 3, 4, 5]));
    assert_eq!(matching(&idx, grid("geotile", "1/0/1")), set(&[9]));
}

fn aggs(idx: &EmbeddedIndex, query: Value, aggs: Value) -> Value {
    let plan = idx
        .compile(&json!({"size": 0, "query": query, "aggs": aggs}))
        .unwrap();
    let fruit = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    plan.aggregations_json(&fruit).unwrap()
}

#[test]
fn bounds_centroid_and_grids_on_shapes() {
    let idx = index();
    let all = json!({"match_all": {}});
    let got = aggs(
        &idx,
        all.clone(),
        json!({"b": {"geo_bounds": {"field": "shape"}}}),
    );
    assert_eq!(
        got["b"],
        json!({"bounds": {"top_left": {"lat": 80.0, "lon": -60.0},
                          "bottom_right": {"lat": -60.0, "lon": 85.0}}})
    );
    // The point, the square (area 100, centre 25/25) and the holed square (area 96, centre
    // 45/6): only the polygons weigh, by area.
    let some = json!({"terms": {"n": [1, 3, 4]}});
    let got = aggs(
        &idx,
        some,
        json!({"c": {"geo_centroid": {"field": "shape"}}}),
    );
    let (lat, lon) = (
        got["c"]["location"]["lat"].as_f64().unwrap(),
        got["c"]["location"]["lon"].as_f64().unwrap(),
    );
    assert!(
        (lon - (25.0 * 100.0 + 45.0 * 96.0) / 196.0).abs() < 1e-9,
        "{got}"
    );
    assert!(
        (lat - (25.0 * 100.0 + 6.0 * 96.0) / 196.0).abs() < 1e-9,
        "{got}"
    );
    assert_eq!(got["c"]["count"], 3);
    // Geohash cells of one character: 45 degrees square (bits lon, lat, lon, lat, lon);
    // the holed square spans s and t, the collection at 80/80 is v (11011).
    let got = aggs(
        &idx,
        all.clone(),
        json!({"g": {"geohash_grid": {"field": "shape", "precision": 1}}}),
    );
    assert_eq!(
        got["g"]["buckets"],
        json!([{"key": "s", "doc_count": 5}, {"key": "t", "doc_count": 2},
               {"key": "4", "doc_count": 1}, {"key": "v", "doc_count": 1}])
    );
    let got = aggs(
        &idx,
        all.clone(),
        json!({"g": {"geotile_grid": {"field": "shape", "precision": 1}}}),
    );
    assert_eq!(
        got["g"]["buckets"],
        json!([{"key": "1/1/0", "doc_count": 7}, {"key": "1/0/1", "doc_count": 1}])
    );
    // Bounds keep the cells that meet them.
    let got = aggs(
        &idx,
        all.clone(),
        json!({"g": {"geohash_grid": {"field": "shape", "precision": 1,
        "bounds": {"top_left": [50, 20], "bottom_right": [60, 5]}}}}),
    );
    assert_eq!(got["g"]["buckets"], json!([{"key": "t", "doc_count": 2}]));
    // Every H3 cell's count is the count of a geo_grid query on that cell.
    let got = aggs(
        &idx,
        all,
        json!({"g": {"geohex_grid": {"field": "shape", "precision": 2}}}),
    );
    let buckets = got["g"]["buckets"].as_array().unwrap();
    assert!(buckets.len() > 5, "{got}");
    for b in buckets {
        let key = b["key"].as_str().unwrap();
        let n = matching(&idx, json!({"geo_grid": {"shape": {"geohex": key}}})).len();
        assert_eq!(b["doc_count"], n, "{key}");
    }
}

#[test]
fn bad_shapes_are_refused_with_elasticsearch_words() {
    let body = json!({"mappings": {"properties": {"shape": {"type": "geo_shape"}}}});
    let idx = EmbeddedIndex::create("bad", &body).unwrap();
    for (shape, words) in [
        (json!("POLYGON ((0 0, 1 0, 1 1, 0 1))"), "must be the same"),
        (
            json!({"type": "circle", "coordinates": [0, 0], "radius": "1km"}),
            "Circle",
        ),
        (json!("POINT (200 0)"), "illegal longitude value"),
        (
            json!({"type": "linestring", "coordinates": [[0, 0]]}),
            "must be >= 2",
        ),
        (
            json!("POLYGON ((170 0, -170 0, -170 1, 170 0))"),
            "antimeridian",
        ),
        (json!("NOT A SHAPE"), "well-known text"),
    ] {
        let err = idx
            .mapping
            .document(&json!({"shape": shape}).to_string(), "1")
            .unwrap_err();
        assert!(err.contains(words), "{shape}: {err}");
    }
}

#[test]
fn an_index_time_script_reads_the_shape_as_geoshape_s_mapping_does() {
    // The mapping of Rally's geoshape track: `size` is the squared diagonal of the shape's
    // box in Web Mercator metres.
    let body = json!({"mappings": {"dynamic": "strict", "properties": {
        "shape": {"type": "geo_shape"},
        "size": {"type": "double", "script": {"source":
            "ScriptDocValues.Geometry geometry = doc[\"shape\"];double w = geometry.getMercatorWidth();double h = geometry.getMercatorHeight();emit(h * h + w * w);"}}}}});
    let idx = EmbeddedIndex::create("osm", &body).unwrap();
    idx.add_for_test(&json!({"shape": "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0))"}).to_string());
    idx.add_for_test(&json!({"shape": "LINESTRING (-3 50, -2 51)"}).to_string());
    idx.refresh().unwrap();
    // Elasticsearch's SphericalMercatorUtils, written out.
    let x = |lon: f64| lon * 20037508.34 / 180.0;
    let y = |lat: f64| {
        ((90.0 + lat) * std::f64::consts::PI / 360.0).tan().ln() / (std::f64::consts::PI / 180.0)
            * 20037508.34
            / 180.0
    };
    let square = (x(10.0) - x(0.0)).powi(2) + (y(10.0) - y(0.0)).powi(2);
    let line = (x(-2.0) - x(-3.0)).powi(2) + (y(51.0) - y(50.0)).powi(2);
    let got = aggs(
        &idx,
        json!({"match_all": {}}),
        json!({"max": {"max": {"field": "size"}}, "min": {"min": {"field": "size"}},
               "n": {"value_count": {"field": "size"}}}),
    );
    assert!(
        (got["max"]["value"].as_f64().unwrap() - square).abs() < 1e-3,
        "{got}"
    );
    assert!(
        (got["min"]["value"].as_f64().unwrap() - line).abs() < 1e-3,
        "{got}"
    );
    assert_eq!(got["n"]["value"], 2);
    // A document may not bring the computed field itself.
    let err = idx
        .mapping
        .document(
            &json!({"shape": "POINT (1 1)", "size": 3.0}).to_string(),
            "x",
        )
        .unwrap_err();
    assert!(
        err.contains("Cannot index data directly into a field with a [script] parameter"),
        "{err}"
    );
}
