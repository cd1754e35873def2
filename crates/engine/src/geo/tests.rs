//! Geo queries and aggregations on geo_point fields, checked against counts computed here
//! from the points by Elasticsearch's documented semantics (haversine distances on its mean
//! earth radius, geohash bit interleaving, Web Mercator tiles), not by the engine's code.

use crate::index::EmbeddedIndex;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// 400 points over western and central Europe, and 3 documents without one.
fn points() -> Vec<(f64, f64)> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..400)
        .map(|_| (40.0 + 20.0 * next(), -10.0 + 35.0 * next()))
        .collect()
}

fn index() -> EmbeddedIndex {
    let body = json!({"mappings": {"properties": {"n": {"type": "long"}, "location": {"type": "geo_point"}}}});
    let idx = EmbeddedIndex::create("osm", &body).unwrap();
    let mut docs: Vec<String> = points()
        .iter()
        .enumerate()
        .map(|(i, (lat, lon))| json!({"n": i, "location": [lon, lat]}).to_string())
        .collect();
    docs.extend((0..3).map(|i| json!({"n": 1000 + i}).to_string()));
    for d in &docs {
        idx.add_for_test(d);
    }
    idx.refresh().unwrap();
    idx
}

fn count(idx: &EmbeddedIndex, query: Value) -> usize {
    let plan = idx.compile(&json!({"query": query, "size": 0})).unwrap();
    idx.search_hits(&plan, &idx.searcher()).unwrap().0 as usize
}

fn aggs(idx: &EmbeddedIndex, aggs: Value) -> Value {
    let plan = idx.compile(&json!({"size": 0, "aggs": aggs})).unwrap();
    let fruit = idx.search_hits(&plan, &idx.searcher()).unwrap().2.unwrap();
    plan.aggregations_json(&fruit).unwrap()
}

#[test]
fn h3_cells_as_the_h3_library_numbers_them() {
    // h3-py's README: (37.769377, -122.388903) at resolution 9 is 89283082e73ffff.
    let body = json!({"mappings": {"properties": {"location": {"type": "geo_point"}}}});
    let idx = EmbeddedIndex::create("sf", &body).unwrap();
    idx.add_for_test(&json!({"location": {"lat": 37.769377, "lon": -122.388903}}).to_string());
    idx.add_for_test(&json!({"location": {"lat": 48.8566, "lon": 2.3522}}).to_string());
    idx.refresh().unwrap();
    let got = aggs(
        &idx,
        json!({"x": {"geohex_grid": {"field": "location", "precision": 9}}}),
    );
    let keys: Vec<&str> = got["x"]["buckets"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|b| b["key"].as_str())
        .collect();
    assert!(keys.contains(&"89283082e73ffff"), "{got}");
    assert_eq!(
        count(
            &idx,
            json!({"geo_grid": {"location": {"geohex": "89283082e73ffff"}}})
        ),
        1
    );
    let e = idx
        .compile(&json!({"aggs": {"x": {"geohex_grid": {"field": "location", "precision": 16}}}}))
        .err()
        .unwrap();
    assert!(
        e.message.contains("Must be between 0 and 15"),
        "{}",
        e.message
    );
}

fn haversine_m(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let r = 6_371_008.771_4;
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let a = ((lat2 - lat1).to_radians() / 2.0).sin().powi(2)
        + p1.cos() * p2.cos() * ((lon2 - lon1).to_radians() / 2.0).sin().powi(2);
    2.0 * r * a.sqrt().asin()
}

#[test]
fn geo_shape_relations_on_points() {
    let idx = index();
    let pts = points();
    // A convex quadrilateral, counter-clockwise: inside is left of every edge.
    let quad = [(0.0, 45.0), (15.0, 44.0), (18.0, 55.0), (2.0, 57.0)];
    let inside = |lat: f64, lon: f64| {
        (0..4).all(|i| {
            let ((x1, y1), (x2, y2)) = (quad[i], quad[(i + 1) % 4]);
            (x2 - x1) * (lat - y1) - (y2 - y1) * (lon - x1) >= 0.0
        })
    };
    let expected = pts.iter().filter(|(lat, lon)| inside(*lat, *lon)).count();
    assert!(expected > 50 && expected < 350, "{expected}");
    let mut ring: Vec<[f64; 2]> = quad.iter().map(|&(x, y)| [x, y]).collect();
    ring.push(ring[0]);
    let shape = |relation: &str| json!({"geo_shape": {"location": {"shape": {"type": "polygon", "coordinates": [ring]}, "relation": relation}}});
    assert_eq!(count(&idx, shape("intersects")), expected);
    assert_eq!(count(&idx, shape("within")), expected);
    // Disjoint: the documents with a point outside; the 3 without a point match neither.
    assert_eq!(count(&idx, shape("disjoint")), pts.len() - expected);
    assert_eq!(count(&idx, shape("contains")), 0);
    let poly: Vec<Value> = quad
        .iter()
        .map(|&(lon, lat)| json!({"lat": lat, "lon": lon}))
        .collect();
    assert_eq!(
        count(&idx, json!({"geo_polygon": {"location": {"points": poly}}})),
        expected
    );

    // Circles (geo_shape) and geo_distance, as the geopoint track's rings use them.
    let within_km = |km: f64| {
        pts.iter()
            .filter(|(lat, lon)| haversine_m(55.0, 7.0, *lat, *lon) <= km * 1000.0)
            .count()
    };
    let circle = |km: &str, relation: &str| json!({"geo_shape": {"location": {"shape": {"type": "circle", "radius": km, "coordinates": [7, 55]}, "relation": relation}}});
    let ring_200_300 =
        json!({"bool": {"must": [circle("300km", "intersects"), circle("200km", "disjoint")]}});
    assert_eq!(
        count(&idx, ring_200_300),
        within_km(300.0) - within_km(200.0)
    );
    assert_eq!(
        count(
            &idx,
            json!({"geo_distance": {"distance": "400km", "location": [7.0, 55.0]}})
        ),
        within_km(400.0)
    );
    // value_count on a geo_point counts the points (the 3 documents without one are not).
    assert_eq!(
        aggs(&idx, json!({"c": {"value_count": {"field": "location"}}}))["c"]["value"],
        json!(pts.len()),
        "a whole number, as Elasticsearch's"
    );
    assert!(within_km(400.0) > within_km(200.0));

    let e = idx
        .compile(&json!({"query": shape("overlaps")}))
        .err()
        .unwrap();
    assert!(e.message.contains("relation `overlaps`"), "{}", e.message);
}

/// Geohash cell of a point, computed as cell indices interleaved (longitude first).
fn geohash(lat: f64, lon: f64, chars: u32) -> String {
    let bits = 5 * chars;
    let (lon_bits, lat_bits) = (bits.div_ceil(2), bits / 2);
    let x = ((lon + 180.0) / 360.0 * (1u64 << lon_bits) as f64) as u64;
    let y = ((lat + 90.0) / 180.0 * (1u64 << lat_bits) as f64) as u64;
    let mut all = 0u64;
    let (mut xi, mut yi) = (lon_bits, lat_bits);
    for i in 0..bits {
        let bit = if i % 2 == 0 {
            xi -= 1;
            (x >> xi) & 1
        } else {
            yi -= 1;
            (y >> yi) & 1
        };
        all = (all << 1) | bit;
    }
    let alphabet = b"0123456789bcdefghjkmnpqrstuvwxyz";
    (0..chars)
        .map(|c| alphabet[((all >> (5 * (chars - 1 - c))) & 31) as usize] as char)
        .collect()
}

fn geotile(lat: f64, lon: f64, zoom: u32) -> String {
    let n = (1u64 << zoom) as f64;
    let x = ((lon + 180.0) / 360.0 * n).floor();
    let lat_r = lat.to_radians();
    let y =
        ((1.0 - (lat_r.tan() + 1.0 / lat_r.cos()).ln() / std::f64::consts::PI) / 2.0 * n).floor();
    format!("{zoom}/{x}/{y}")
}

#[test]
fn grid_queries_and_aggregations_count_each_cell() {
    let idx = index();
    let pts = points();
    let by_cell = |key: &dyn Fn(f64, f64) -> String| {
        let mut m: BTreeMap<String, u64> = BTreeMap::new();
        for (lat, lon) in &pts {
            *m.entry(key(*lat, *lon)).or_default() += 1;
        }
        m
    };
    let hashes = by_cell(&|lat, lon| geohash(lat, lon, 2));
    let tiles = by_cell(&|lat, lon| geotile(lat, lon, 4));
    assert!(hashes.len() > 4 && tiles.len() > 4);
    for (hash, n) in &hashes {
        assert_eq!(
            count(&idx, json!({"geo_grid": {"location": {"geohash": hash}}})) as u64,
            *n,
            "{hash}"
        );
    }
    for (tile, n) in &tiles {
        assert_eq!(
            count(&idx, json!({"geo_grid": {"location": {"geotile": tile}}})) as u64,
            *n,
            "{tile}"
        );
    }
    let got = aggs(
        &idx,
        json!({"h": {"geohash_grid": {"field": "location", "precision": 2}},
               "t": {"geotile_grid": {"field": "location", "precision": 4, "size": 3}}}),
    );
    // Buckets by count, most first, ties by cell.
    let buckets = |v: &Value| -> Vec<(String, u64)> {
        v["buckets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["key"].as_str().unwrap().to_string(),
                    b["doc_count"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let got_hashes = buckets(&got["h"]);
    assert_eq!(got_hashes.len(), hashes.len());
    assert!(got_hashes.windows(2).all(|w| w[0].1 >= w[1].1));
    assert_eq!(got_hashes.into_iter().collect::<BTreeMap<_, _>>(), hashes);
    let got_tiles = buckets(&got["t"]);
    assert_eq!(got_tiles.len(), 3);
    let mut top: Vec<u64> = tiles.values().copied().collect();
    top.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(got_tiles.iter().map(|t| t.1).collect::<Vec<_>>(), top[..3]);
    assert!(got_tiles.iter().all(|(k, n)| tiles[k] == *n));

    // H3 cells: each bucket of a geohex_grid holds what a geo_grid query of its cell finds,
    // and the buckets hold every point, at a coarse and a fine resolution.
    for precision in [2, 4] {
        let got = aggs(
            &idx,
            json!({"x": {"geohex_grid": {"field": "location", "precision": precision, "size": 10000}}}),
        );
        let cells = buckets(&got["x"]);
        assert!(cells.len() > 3, "{got}");
        assert_eq!(cells.iter().map(|c| c.1).sum::<u64>(), 400);
        for (key, n) in &cells {
            assert_eq!(key.len(), 15, "{key}");
            let found = count(&idx, json!({"geo_grid": {"location": {"geohex": key}}}));
            assert_eq!(found as u64, *n, "cell {key}");
        }
    }
    let e = idx
        .compile(&json!({"query": {"geo_grid": {"location": {"geohex": "not-a-cell"}}}}))
        .err()
        .unwrap();
    assert!(e.message.contains("not an H3 cell index"), "{}", e.message);
    let e = idx
        .compile(&json!({"aggs": {"a": {"terms": {"field": "n"}, "aggs": {"g": {"geohash_grid": {"field": "location"}}}}}}))
        .err()
        .unwrap();
    assert!(e.message.contains("top level"), "{}", e.message);
}

#[test]
fn distance_ranges_and_bounds() {
    let idx = index();
    let pts = points();
    let got = aggs(
        &idx,
        json!({
            "d": {"geo_distance": {"field": "location", "origin": "55.0, 7.0", "unit": "km",
                   "ranges": [{"from": 100, "to": 200}, {"to": 100}, {"from": 200}]}},
            "b": {"geo_bounds": {"field": "location"}}
        }),
    );
    let km: Vec<f64> = pts
        .iter()
        .map(|(lat, lon)| haversine_m(55.0, 7.0, *lat, *lon) / 1000.0)
        .collect();
    let n = |lo: f64, hi: f64| km.iter().filter(|d| **d >= lo && **d < hi).count() as u64;
    assert_eq!(
        got["d"]["buckets"],
        json!([
            {"key": "*-100.0", "to": 100.0, "doc_count": n(f64::NEG_INFINITY, 100.0)},
            {"key": "100.0-200.0", "from": 100.0, "to": 200.0, "doc_count": n(100.0, 200.0)},
            {"key": "200.0-*", "from": 200.0, "doc_count": n(200.0, f64::INFINITY)},
        ])
    );
    let fold = |f: fn(f64, f64) -> f64, get: fn(&(f64, f64)) -> f64, init: f64| {
        pts.iter().map(get).fold(init, f)
    };
    let top = fold(f64::max, |p| p.0, -90.0);
    let bottom = fold(f64::min, |p| p.0, 90.0);
    let left = fold(f64::min, |p| p.1, 180.0);
    let right = fold(f64::max, |p| p.1, -180.0);
    assert_eq!(
        got["b"],
        json!({"bounds": {"top_left": {"lat": top, "lon": left}, "bottom_right": {"lat": bottom, "lon": right}}})
    );

    // Across the antimeridian the narrower box wins, unless wrap_longitude is false.
    let body = json!({"mappings": {"properties": {"p": {"type": "geo_point"}}}});
    let pacific = EmbeddedIndex::create("pacific", &body).unwrap();
    for p in ["10,170", "-10,-170", "0,175"] {
        let d = json!({"p": p}).to_string();
        pacific.add_for_test(&d);
    }
    pacific.refresh().unwrap();
    let got = aggs(
        &pacific,
        json!({"w": {"geo_bounds": {"field": "p"}}, "n": {"geo_bounds": {"field": "p", "wrap_longitude": false}}}),
    );
    assert_eq!(got["w"]["bounds"]["top_left"]["lon"], json!(170.0));
    assert_eq!(got["w"]["bounds"]["bottom_right"]["lon"], json!(-170.0));
    assert_eq!(got["n"]["bounds"]["top_left"]["lon"], json!(-170.0));
    assert_eq!(got["n"]["bounds"]["bottom_right"]["lon"], json!(175.0));
}

#[test]
fn an_unmapped_sort_field_with_ignore_unmapped_sorts_every_point_as_missing() {
    let idx = index();
    let sort = |ignore: bool| json!({"size": 2, "sort": [{"_geo_distance": {"pin.location": [-7.0, 55.0], "unit": "km", "ignore_unmapped": ignore}}]});
    let plan = idx.compile(&sort(true)).unwrap();
    let (total, hits, _) = idx.search_hits(&plan, &idx.searcher()).unwrap();
    assert_eq!(total, 403);
    assert!(hits.iter().all(|h| h.sort == Some(json!(["Infinity"]))));
    assert!(idx.compile(&sort(false)).is_err());
}
