//! ES|QL through `POST /_query`, checked against answers worked out by hand from the
//! documents (distances by the spherical law of cosines, not the engine's haversine).

use crate::cluster::Engine;
use crate::rest::tests::call;
use serde_json::{json, Value};

/// Five named points, and two log lines.
fn engine() -> Engine {
    let b = Engine::new();
    let points = r#"{"mappings": {"properties": {"name": {"type": "keyword"}, "location": {"type": "geo_point"}, "n": {"type": "long"}}}}"#;
    assert_eq!(call(&b, "PUT", "/pts", points).0, 200);
    let mut bulk = String::new();
    for (name, lon, lat, n) in [
        ("a", 1.0, 1.0, 1),
        ("b", 2.0, 3.0, 2),
        ("c", 20.0, 20.0, 3),
        ("d", -50.0, -50.0, 4),
        ("e", 5.0, 5.0, 5),
    ] {
        bulk.push_str("{\"index\":{}}\n");
        bulk.push_str(&json!({"name": name, "location": [lon, lat], "n": n}).to_string());
        bulk.push('\n');
    }
    assert_eq!(call(&b, "POST", "/pts/_bulk?refresh=true", &bulk).0, 200);
    let logs = r#"{"mappings": {"properties": {"message": {"type": "text"}, "@timestamp": {"type": "date"}, "size": {"type": "long"}}}}"#;
    assert_eq!(call(&b, "PUT", "/logs-1", logs).0, 200);
    let lines = [
        ("Connection 7 disconnected", "2024-01-05T00:00:00Z", 10),
        ("server query failed", "2024-01-25T12:00:00Z", 30),
        ("Connection 9 disconnected", "2024-01-26T00:00:00Z", 20),
    ];
    let mut bulk = String::new();
    for (m, t, s) in lines {
        bulk.push_str("{\"index\":{}}\n");
        bulk.push_str(&json!({"message": m, "@timestamp": t, "size": s}).to_string());
        bulk.push('\n');
    }
    assert_eq!(call(&b, "POST", "/logs-1/_bulk?refresh=true", &bulk).0, 200);
    b
}

fn query(b: &Engine, q: &str) -> (u16, Value) {
    call(b, "POST", "/_query", &json!({"query": q}).to_string())
}

fn values(b: &Engine, q: &str) -> Value {
    let (s, r) = query(b, q);
    assert_eq!(s, 200, "{q}: {r}");
    r["values"].clone()
}

/// The spherical law of cosines on Elasticsearch's mean earth radius.
fn distance(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2, dl) = (
        lat1.to_radians(),
        lat2.to_radians(),
        (lon2 - lon1).to_radians(),
    );
    6_371_008.771_4
        * (p1.sin() * p2.sin() + p1.cos() * p2.cos() * dl.cos())
            .clamp(-1.0, 1.0)
            .acos()
}

#[test]
fn spatial_filters_counts_and_aggregations() {
    let b = engine();
    let (s, r) = query(&b, "FROM pts | STATS count = COUNT(*)");
    assert_eq!(s, 200, "{r}");
    assert_eq!(r["columns"], json!([{"name": "count", "type": "long"}]));
    assert_eq!(r["values"], json!([[5]]));
    // a, b and e lie in the box; c and d do not.
    let q = "FROM pts | WHERE ST_Intersects(location, TO_GEOSHAPE(\"BBOX((0, 10, 10, 0))\")) | STATS count=COUNT(*)";
    assert_eq!(values(&b, q), json!([[3]]));
    let q = "FROM pts | WHERE ST_Disjoint(location, TO_GEOSHAPE(\"POLYGON((0 0, 10 0, 10 10, 0 10, 0 0))\")) | KEEP name | SORT name";
    assert_eq!(values(&b, q), json!([["c"], ["d"]]));
    let (s, r) = query(&b, "FROM pts | EVAL d = ST_Distance(location, TO_GEOPOINT(\"POINT(0 0)\")) | SORT d ASC | LIMIT 2 | KEEP name, d");
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["columns"],
        json!([{"name": "name", "type": "keyword"}, {"name": "d", "type": "double"}])
    );
    assert_eq!(r["values"][0][0], "a");
    assert_eq!(r["values"][1][0], "b");
    let d = r["values"][1][1].as_f64().unwrap();
    assert!((d - distance(0.0, 0.0, 3.0, 2.0)).abs() < 0.01, "{d}");
    // The mean of the five points, and their box (across the antimeridian is not narrower).
    let (_, r) = query(
        &b,
        "FROM pts | STATS c = ST_CENTROID_AGG(location), e = ST_EXTENT_AGG(location)",
    );
    assert_eq!(
        r["columns"],
        json!([{"name": "c", "type": "geo_point"}, {"name": "e", "type": "geo_shape"}])
    );
    assert_eq!(
        r["values"],
        json!([["POINT (-4.4 -4.2)", "BBOX (-50.0, 20.0, 20.0, -50.0)"]])
    );
    // Geohash cells as Elasticsearch's long: the bits above the length. `s` (longitudes and
    // latitudes 0 to 45) is 24, so 24 << 4 | 1 = 385: a, b, c and e are in it.
    let q = "FROM pts | EVAL g = ST_GEOHASH(location, 1) | STATS c = COUNT(*) BY g | SORT c DESC | LIMIT 1";
    assert_eq!(values(&b, q), json!([[4, 385]]));
    let q = "FROM pts | WHERE ST_GEOHASH(location, 1) == TO_GEOHASH(\"s\") | STATS c = COUNT(*)";
    assert_eq!(values(&b, q), json!([[4]]));
}

#[test]
fn full_text_like_sort_and_dates() {
    let b = engine();
    let q = "FROM logs-* METADATA _source | WHERE MATCH(message, \"disconnected\") | SORT @timestamp DESC | LIMIT 500 | KEEP _source";
    let (s, r) = query(&b, q);
    assert_eq!(s, 200, "{r}");
    assert_eq!(
        r["columns"],
        json!([{"name": "_source", "type": "_source"}])
    );
    assert_eq!(r["values"][0][0]["message"], "Connection 9 disconnected");
    assert_eq!(r["values"].as_array().unwrap().len(), 2);
    let q =
        "FROM logs-* | WHERE message LIKE \"Connection * disconnected\" AND size > 10 | KEEP size";
    assert_eq!(values(&b, q), json!([[20]]));
    // 2024-01-05, -25 and -26 in spans of 10 days from the epoch: 19720 days is 2023-12-29,
    // 19730 is 2024-01-08... 19740 is 2024-01-18.
    let q = "FROM logs-* | EVAL every10days = DATE_TRUNC(10 DAYS, @timestamp) | STATS min=MIN(size), max=MAX(size), avg=AVG(size) BY every10days | SORT every10days";
    assert_eq!(
        values(&b, q),
        json!([
            [10, 10, 10.0, "2023-12-29T00:00:00.000Z"],
            [20, 30, 25.0, "2024-01-18T00:00:00.000Z"]
        ])
    );
    let q = "FROM logs-* | EVAL ratio = size::DOUBLE / 4 | STATS AVG(ratio)";
    let (_, r) = query(&b, q);
    assert_eq!(
        r["columns"],
        json!([{"name": "AVG(ratio)", "type": "double"}])
    );
    assert_eq!(r["values"], json!([[5.0]]));
}

#[test]
fn what_the_subset_lacks_is_named() {
    let b = engine();
    for (q, says) in [
        ("FROM pts | MV_EXPAND name", "`MV_EXPAND` is not run"),
        ("FROM pts | STATS COUNT() BY CATEGORIZE(name)", "CATEGORIZE"),
        ("FROM logs-* | WHERE KQL(\"x\")", "KQL"),
        ("FROM pts | KEEP nope", "Unknown column [nope]"),
        ("FROM pts | EVAL x = FOO(n)", "`FOO` is not run"),
        ("FROM nothing", "Unknown index [nothing]"),
        (
            "FROM logs-* | EVAL x = DATE_TRUNC(9223372036854775 DAYS, @timestamp)",
            "too long",
        ),
        (
            "FROM pts | EVAL g = ST_GEOHASH(location, 4294967297)",
            "precision",
        ),
        (
            "FROM pts | SORT n | WHERE MATCH(name, \"a\")",
            "directly after FROM",
        ),
    ] {
        let (s, r) = query(&b, q);
        assert_eq!(s, 400, "{q}: {r}");
        assert!(r.to_string().contains(says), "{q}: {r}");
    }
    let (s, r) = call(
        &b,
        "POST",
        "/_query",
        r#"{"query": "FROM pts", "profile": true}"#,
    );
    assert_eq!(s, 400, "{r}");
    assert!(r.to_string().contains("[profile]"), "{r}");
}
