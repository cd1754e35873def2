//! `geo_centroid` and `geo_bounds` on a geo_point field, as aggregations on the point's two
//! columns put back together after the search. Elasticsearch's centroid of geo points is the
//! mean of their latitudes and of their longitudes: two `avg` and a `value_count`. Its bounds
//! are the extreme latitudes and, per side of the prime meridian, the extreme longitudes
//! (from which it picks the narrower box, across the antimeridian or not): `min`/`max` on
//! the latitudes and a two-range `range` on the longitudes.

use crate::mapping::FieldType;
use crate::mapping::Mapping;
use serde_json::{json, Map, Value};

/// Joins a `geo_centroid`'s name and its parts in the request tantivy runs.
const PART: char = '\u{3}';

/// The aggregations that compute `name`'s centroid.
pub fn centroid(
    name: &str,
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<Vec<(String, Value)>, String> {
    let column = point_column("geo_centroid", params, mapping, at, &["field"])?;
    Ok(vec![
        (
            format!("{name}{PART}lat"),
            json!({"avg": {"field": format!("{column}.lat")}}),
        ),
        (
            format!("{name}{PART}lon"),
            json!({"avg": {"field": format!("{column}.lon")}}),
        ),
        (
            format!("{name}{PART}count"),
            json!({"value_count": {"field": format!("{column}.lat")}}),
        ),
    ])
}

/// The geo_point column an aggregation at `at` reads.
fn point_column(
    kind: &str,
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
    allowed: &[&str],
) -> Result<String, String> {
    if let Some(k) = params.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(format!(
            "aggregation `{at}`: `{kind}` parameter `{k}` is not run by the embedded engine"
        ));
    }
    let field = params
        .get("field")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("aggregation `{at}`: `{kind}` needs a `field`"))?;
    match mapping.map(|m| m.field(field)) {
        None => Ok(field.to_string()),
        Some(Some(f)) if f.kind == FieldType::GeoPoint => Ok(f.name.clone()),
        Some(_) => Err(format!(
            "aggregation `{at}`: `{kind}` needs a geo_point field, and `{field}` is not one"
        )),
    }
}

/// The aggregations that compute `name`'s bounds.
pub fn bounds(
    name: &str,
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<Vec<(String, Value)>, String> {
    let column = point_column(
        "geo_bounds",
        params,
        mapping,
        at,
        &["field", "wrap_longitude"],
    )?;
    let wrap = params
        .get("wrap_longitude")
        .map_or(Some(true), Value::as_bool)
        .ok_or_else(|| format!("aggregation `{at}`: `wrap_longitude` is true or false"))?;
    let (lat, lon) = (format!("{column}.lat"), format!("{column}.lon"));
    Ok(vec![
        (format!("{name}{PART}top"), json!({"max": {"field": lat}})),
        (
            format!("{name}{PART}bottom"),
            json!({"min": {"field": lat}}),
        ),
        (
            format!(
                "{name}{PART}{}",
                if wrap { "sides" } else { "sides-nowrap" }
            ),
            json!({"range": {"field": lon, "ranges": [{"to": 0.0}, {"from": 0.0}]},
                   "aggs": {"min": {"min": {"field": lon}}, "max": {"max": {"field": lon}}}}),
        ),
    ])
}

/// `InternalGeoBounds.boundingBox`: the box of the points, across the antimeridian when
/// that is narrower and `wrap_longitude` allows it.
fn bounds_json(parts: &Map<String, Value>) -> Value {
    let value = |v: &Value| v["value"].as_f64();
    let (Some(top), Some(bottom)) = (value(&parts["top"]), value(&parts["bottom"])) else {
        return json!({});
    };
    let (sides, wrap) = match parts.get("sides") {
        Some(s) => (s, true),
        None => (&parts["sides-nowrap"], false),
    };
    let side = |i: usize| {
        let b = &sides["buckets"][i];
        match b["doc_count"].as_u64() {
            Some(n) if n > 0 => (
                value(&b["min"]).unwrap_or(f64::INFINITY),
                value(&b["max"]).unwrap_or(f64::NEG_INFINITY),
            ),
            _ => (f64::INFINITY, f64::NEG_INFINITY),
        }
    };
    let (left, right) = pick_sides(side(0), side(1), wrap);
    json!({"bounds": {"top_left": {"lat": top, "lon": left}, "bottom_right": {"lat": bottom, "lon": right}}})
}

/// The box's west and east from the extreme longitudes west and east of the prime meridian:
/// across the antimeridian when that box is narrower and `wrap` allows it.
pub(crate) fn pick_sides(
    (neg_left, neg_right): (f64, f64),
    (pos_left, pos_right): (f64, f64),
    wrap: bool,
) -> (f64, f64) {
    if pos_left.is_infinite() {
        (neg_left, neg_right)
    } else if neg_left.is_infinite() {
        (pos_left, pos_right)
    } else if wrap && (180.0 - pos_left) - (-180.0 - neg_right) < pos_right - neg_left {
        (pos_left, neg_right)
    } else {
        (neg_left, pos_right)
    }
}

/// Elasticsearch's shape for the centroids and bounds of a response, at every level:
/// `{"location": {"lat", "lon"}, "count"}` (no location when no document has a point).
pub fn regroup(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let parts: Vec<String> = map.keys().filter(|k| k.contains(PART)).cloned().collect();
            let mut grouped: Map<String, Value> = Map::new();
            for k in parts {
                let Some(part) = map.remove(&k) else { continue };
                let (name, which) = k.split_once(PART).unwrap_or((&k, ""));
                grouped.entry(name.to_string()).or_insert_with(|| json!({}))[which] = part;
            }
            for (name, parts) in grouped {
                let Some(parts) = parts.as_object() else {
                    continue;
                };
                let v = if parts.contains_key("top") {
                    bounds_json(parts)
                } else {
                    let count = parts["count"]["value"].as_f64().unwrap_or(0.0) as u64;
                    if count == 0 {
                        json!({"count": 0})
                    } else {
                        json!({"location": {"lat": parts["lat"]["value"], "lon": parts["lon"]["value"]}, "count": count})
                    }
                };
                map.insert(name, v);
            }
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| regroup(v));
        }
        Value::Array(items) => items.iter_mut().for_each(regroup),
        _ => {}
    }
}

impl super::Level<'_> {
    /// `geo_bounds` and `geo_centroid`: on a geo_shape field, run beside tantivy's
    /// aggregations; on a geo_point field, as tantivy's on its columns. True when `kind` is one.
    pub(super) fn rewrite_geo_metric(
        &mut self,
        kind: &str,
        params: &Map<String, Value>,
        sub: Option<&Value>,
        at: &super::Here<'_>,
        out: &mut Map<String, Value>,
    ) -> Result<bool, String> {
        let (name, here, path) = (at.name, at.here, at.path);
        let mapping = self.mapping;
        if let Some(field) = shape_metric_field(kind, params, mapping) {
            if !path.is_empty() || sub.is_some() {
                return Err(format!("aggregation `{here}`: the embedded engine runs `{kind}` on a geo_shape field at the top level of a request, with no sub-aggregations"));
            }
            self.points.push((
                name.clone(),
                super::points::PointAgg::shape_metric(kind, field, params, &here)?,
            ));
            return Ok(true);
        }
        if kind == "geo_bounds" {
            if sub.is_some() {
                return Err(format!(
                    "aggregation `{here}`: `geo_bounds` is a metric and takes no sub-aggregations"
                ));
            }
            out.extend(bounds(name, params, mapping, &here)?);
            return Ok(true);
        }
        if kind == "geo_centroid" {
            if sub.is_some() {
                return Err(format!("aggregation `{here}`: `geo_centroid` is a metric and takes no sub-aggregations"));
            }
            out.extend(centroid(name, params, mapping, &here)?);
            return Ok(true);
        }
        Ok(false)
    }
}

/// The geo_shape field a `geo_bounds` or `geo_centroid` reads, when it reads one.
fn shape_metric_field(
    kind: &str,
    params: &Map<String, Value>,
    mapping: Option<&crate::mapping::Mapping>,
) -> Option<String> {
    if !matches!(kind, "geo_bounds" | "geo_centroid") {
        return None;
    }
    let f = mapping?.field(params.get("field")?.as_str()?)?;
    (f.kind == crate::mapping::FieldType::GeoShape).then(|| f.name.clone())
}
