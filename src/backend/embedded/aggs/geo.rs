//! `geo_centroid` on a geo_point field: Elasticsearch's centroid of geo points is the mean of
//! their latitudes and of their longitudes, so it runs as two `avg` and a `value_count` on the
//! point's two columns, side by side, put back together after the search.

use super::super::mapping::{FieldType, Mapping};
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
    if let Some(k) = params.keys().find(|k| k.as_str() != "field") {
        return Err(format!(
            "aggregation `{at}`: `geo_centroid` parameter `{k}` is not run by the embedded engine"
        ));
    }
    let field = params
        .get("field")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("aggregation `{at}`: `geo_centroid` needs a `field`"))?;
    let column = match mapping.map(|m| m.field(field)) {
        None => field.to_string(),
        Some(Some(f)) if f.kind == FieldType::GeoPoint => f.name.clone(),
        Some(_) => {
            return Err(format!(
            "aggregation `{at}`: `geo_centroid` needs a geo_point field, and `{field}` is not one"
        ))
        }
    };
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

/// Elasticsearch's shape for the centroids of a response, at every level:
/// `{"location": {"lat", "lon"}, "count"}` (no location when no document has a point).
pub fn regroup(v: &mut Value) {
    match v {
        Value::Object(map) => {
            let parts: Vec<String> = map.keys().filter(|k| k.contains(PART)).cloned().collect();
            let mut centroids: Map<String, Value> = Map::new();
            for k in parts {
                let Some(part) = map.remove(&k) else { continue };
                let (name, which) = k.split_once(PART).unwrap_or((&k, ""));
                let c = centroids
                    .entry(name.to_string())
                    .or_insert_with(|| json!({"location": {}, "count": 0}));
                match which {
                    "count" => c["count"] = json!(part["value"].as_f64().unwrap_or(0.0) as u64),
                    axis => c["location"][axis] = part["value"].clone(),
                }
            }
            for c in centroids.values_mut() {
                if c["count"] == json!(0) {
                    if let Some(o) = c.as_object_mut() {
                        o.remove("location");
                    }
                }
            }
            map.extend(centroids);
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| regroup(v));
        }
        Value::Array(items) => items.iter_mut().for_each(regroup),
        _ => {}
    }
}
