//! Distances on the earth as Elasticsearch measures them.

/// Elasticsearch's mean earth radius, in metres (`GeoUtils.EARTH_MEAN_RADIUS`).
pub const EARTH_RADIUS_M: f64 = 6_371_008.771_4;

/// The great-circle distance between two points, in metres (haversine).
pub fn arc_distance(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    let (p1, p2) = (lat1.to_radians(), lat2.to_radians());
    let (dp, dl) = ((lat2 - lat1).to_radians(), (lon2 - lon1).to_radians());
    let h = (dp / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
    2.0 * EARTH_RADIUS_M * h.sqrt().min(1.0).asin()
}

/// `2km`, `500m`, `1.5mi` and Elasticsearch's other distance units, in metres.
pub fn distance_meters(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let n: f64 = n
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a distance"))?;
    let per = match unit {
        "" | "m" | "meters" => 1.0,
        "km" | "kilometers" => 1000.0,
        "cm" => 0.01,
        "mm" => 0.001,
        "mi" | "miles" => 1609.344,
        "yd" | "yards" => 0.9144,
        "ft" | "feet" => 0.3048,
        "in" | "inch" => 0.0254,
        "nmi" | "NM" => 1852.0,
        other => return Err(format!("distance unit `{other}` of `{text}` is not known")),
    };
    Ok(n * per)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_take_elasticsearch_units() {
        assert!((distance_meters("2km").unwrap() - 2000.0).abs() < 1e-9);
        assert!((distance_meters("1.5mi").unwrap() - 2414.016).abs() < 1e-9);
        assert!(distance_meters("3 parsecs").is_err());
    }
}
