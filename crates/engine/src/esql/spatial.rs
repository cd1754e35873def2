//! ES|QL's scalar functions: the spatial ones (conversions, relations, distance, envelope,
//! point counts, simplification, grid cells as Elasticsearch encodes them in a long) and the
//! few others the shared tracks call.

use super::exec::Table;
use super::parse::Expr;
use super::value::{Ty, V};
use crate::geo::grid::Grid;
use crate::geo::shape::Relation;
use geo::{BoundingRect, CoordsIter, Geometry, Simplify};

fn arg(values: &[V], i: usize, name: &str) -> Result<V, String> {
    values
        .get(i)
        .cloned()
        .ok_or_else(|| format!("[{name}] needs {} arguments", i + 1))
}

fn text(v: &V, name: &str) -> Result<String, String> {
    match v {
        V::Str(s) => Ok(s.clone()),
        other => Err(format!("[{name}] takes a string, got {}", other.to_json())),
    }
}

fn shape_of(wkt: &str) -> Result<Geometry<f64>, String> {
    use crate::geo::geometry::Parsed;
    match Parsed::parse(&serde_json::Value::String(wkt.to_string()))? {
        Parsed::Geometry(g) => Ok(g),
        Parsed::Envelope(b) if b.west <= b.east => Ok(Geometry::Rect(geo::Rect::new(
            geo::Coord {
                x: b.west,
                y: b.south,
            },
            geo::Coord {
                x: b.east,
                y: b.north,
            },
        ))),
        Parsed::Envelope(b) => Ok(crate::geo::geometry::envelope_geometry(&b)),
        Parsed::Circle { .. } => Err("a CIRCLE is not a geo_shape value".into()),
    }
}

fn geometry(v: &V) -> Option<Geometry<f64>> {
    match v {
        V::Point(lon, lat) => Some(Geometry::Point(geo::Point::new(*lon, *lat))),
        V::Shape(g) => Some((**g).clone()),
        _ => None,
    }
}

/// A grid cell as Elasticsearch's ES|QL encodes it in a long: a geohash's bits above its
/// length (4 bits), a tile's zoom, x and y (6, 29 and 29 bits), an H3 index as it is.
fn cell_long(grid: Grid, cell: crate::geo::grid::Cell) -> i64 {
    match grid {
        Grid::Geohash(p) => ((cell.0 << 4) | p as u64) as i64,
        Grid::Geotile(z) => {
            (((z as u64) << 58) | ((cell.0 >> 32) << 29) | (cell.0 & 0xffff_ffff)) as i64
        }
        Grid::Geohex(_) => cell.0 as i64,
    }
}

fn grid_cell(name: &str, values: &[V]) -> Result<V, String> {
    let V::Point(lon, lat) = arg(values, 0, name)? else {
        return Ok(V::Null);
    };
    let precision = match arg(values, 1, name)? {
        V::Long(p) if (0..=29).contains(&p) => p as u32,
        other => {
            return Err(format!(
                "[{name}] precision is a whole number 0 to 29, got {}",
                other.to_json()
            ))
        }
    };
    let grid = match name {
        "ST_GEOHASH" if (1..=12).contains(&precision) => Grid::Geohash(precision),
        "ST_GEOTILE" if precision <= 29 => Grid::Geotile(precision),
        "ST_GEOHEX" if precision <= 15 => Grid::Geohex(precision),
        _ => return Err(format!("[{name}] precision [{precision}] is out of range")),
    };
    if let Some(V::Shape(bounds)) = values.get(2) {
        use geo::Intersects;
        if !bounds.intersects(&geo::Point::new(lon, lat)) {
            return Ok(V::Null);
        }
    }
    Ok(V::Long(cell_long(grid, grid.cell(lat, lon))))
}

fn to_cell(name: &str, v: &V) -> Result<V, String> {
    if let V::Long(n) = v {
        return Ok(V::Long(*n));
    }
    let key = text(v, name)?;
    let (grid, cell) = match name {
        "TO_GEOHASH" => Grid::parse_geohash(&key)?,
        "TO_GEOTILE" => Grid::parse_geotile(&key)?,
        _ => Grid::parse_geohex(&key)?,
    };
    Ok(V::Long(cell_long(grid, cell)))
}

pub fn scalar(name: &str, values: &[V]) -> Result<V, String> {
    // Every function of the subset gives null for a null first argument.
    if values.first().is_some_and(V::is_null) && name != "COALESCE" {
        return Ok(V::Null);
    }
    Ok(match name {
        "TO_GEOSHAPE" => match arg(values, 0, name)? {
            V::Str(s) => V::Shape(Box::new(shape_of(&s)?)),
            v @ V::Shape(_) => v,
            V::Point(lon, lat) => V::Shape(Box::new(Geometry::Point(geo::Point::new(lon, lat)))),
            other => return Err(format!("[TO_GEOSHAPE] cannot convert {}", other.to_json())),
        },
        "TO_GEOPOINT" => match arg(values, 0, name)? {
            V::Str(s) => match shape_of(&s)? {
                Geometry::Point(p) => V::Point(p.x(), p.y()),
                _ => return Err(format!("[TO_GEOPOINT] `{s}` is not a point")),
            },
            v @ V::Point(..) => v,
            other => return Err(format!("[TO_GEOPOINT] cannot convert {}", other.to_json())),
        },
        "ST_INTERSECTS" => super::func::relate(
            Relation::Intersects,
            &arg(values, 0, name)?,
            &arg(values, 1, name)?,
        )?,
        "ST_WITHIN" => super::func::relate(
            Relation::Within,
            &arg(values, 0, name)?,
            &arg(values, 1, name)?,
        )?,
        "ST_CONTAINS" => super::func::relate(
            Relation::Contains,
            &arg(values, 0, name)?,
            &arg(values, 1, name)?,
        )?,
        "ST_DISJOINT" => super::func::relate(
            Relation::Disjoint,
            &arg(values, 0, name)?,
            &arg(values, 1, name)?,
        )?,
        "ST_DISTANCE" => match (arg(values, 0, name)?, arg(values, 1, name)?) {
            (V::Point(lon1, lat1), V::Point(lon2, lat2)) => {
                V::Double(crate::geo::distance::arc_distance(lat1, lon1, lat2, lon2))
            }
            (_, V::Null) => V::Null,
            _ => return Err("[ST_DISTANCE] takes two geo_points".into()),
        },
        "ST_ENVELOPE" => match geometry(&arg(values, 0, name)?).and_then(|g| g.bounding_rect()) {
            Some(r) => V::Shape(Box::new(Geometry::Rect(r))),
            None => V::Null,
        },
        "ST_NPOINTS" => match geometry(&arg(values, 0, name)?) {
            // Elasticsearch counts a box's four corners.
            Some(Geometry::Rect(_)) => V::Long(4),
            Some(g) => V::Long(g.coords_count() as i64),
            None => V::Null,
        },
        "ST_SIMPLIFY" => {
            let tolerance = arg(values, 1, name)?
                .as_f64()
                .ok_or("[ST_SIMPLIFY] tolerance is a number")?;
            match arg(values, 0, name)? {
                V::Shape(g) => V::Shape(Box::new(simplify(*g, tolerance))),
                other => other,
            }
        }
        "ST_X" | "ST_Y" => match arg(values, 0, name)? {
            V::Point(lon, lat) => V::Double(if name == "ST_X" { lon } else { lat }),
            _ => return Err(format!("[{name}] takes a geo_point")),
        },
        "ST_GEOHASH" | "ST_GEOTILE" | "ST_GEOHEX" => grid_cell(name, values)?,
        "TO_GEOHASH" | "TO_GEOTILE" | "TO_GEOHEX" => to_cell(name, &arg(values, 0, name)?)?,
        _ => general(name, values)?,
    })
}

/// The functions of the subset that are not spatial.
fn general(name: &str, values: &[V]) -> Result<V, String> {
    Ok(match name {
        "TO_STRING" => super::func::cast(arg(values, 0, name)?, "string")?,
        "TO_DOUBLE" => arg(values, 0, name)?.as_f64().map_or(V::Null, V::Double),
        "TO_LONG" | "TO_INTEGER" => arg(values, 0, name)?
            .as_f64()
            .map_or(V::Null, |x| V::Long(x as i64)),
        "DATE_TRUNC" => date_trunc(&arg(values, 0, name)?, &arg(values, 1, name)?)?,
        "ABS" => match arg(values, 0, name)? {
            V::Long(n) => V::Long(n.abs()),
            v => v.as_f64().map_or(V::Null, |x| V::Double(x.abs())),
        },
        "ROUND" => {
            let digits = values.get(1).and_then(V::as_f64).unwrap_or(0.0) as i32;
            match arg(values, 0, name)? {
                V::Long(n) => V::Long(n),
                v => v.as_f64().map_or(V::Null, |x| {
                    let f = 10f64.powi(digits);
                    V::Double((x * f).round() / f)
                }),
            }
        }
        "LENGTH" => V::Long(text(&arg(values, 0, name)?, name)?.chars().count() as i64),
        "TO_LOWER" => V::Str(text(&arg(values, 0, name)?, name)?.to_lowercase()),
        "TO_UPPER" => V::Str(text(&arg(values, 0, name)?, name)?.to_uppercase()),
        "COALESCE" => values
            .iter()
            .find(|v| !v.is_null())
            .cloned()
            .unwrap_or(V::Null),
        other => {
            return Err(format!(
                "ES|QL function `{other}` is not run by the embedded engine"
            ))
        }
    })
}

/// Ramer-Douglas-Peucker, as Elasticsearch's `ST_SIMPLIFY` (JTS's Douglas-Peucker) does it.
fn simplify(g: Geometry<f64>, tolerance: f64) -> Geometry<f64> {
    match g {
        Geometry::LineString(l) => Geometry::LineString(l.simplify(tolerance)),
        Geometry::MultiLineString(m) => Geometry::MultiLineString(m.simplify(tolerance)),
        Geometry::Polygon(p) => Geometry::Polygon(p.simplify(tolerance)),
        Geometry::MultiPolygon(m) => Geometry::MultiPolygon(m.simplify(tolerance)),
        Geometry::GeometryCollection(c) => Geometry::GeometryCollection(geo::GeometryCollection(
            c.0.into_iter().map(|g| simplify(g, tolerance)).collect(),
        )),
        other => other,
    }
}

/// `DATE_TRUNC(span, date)`: fixed spans from the epoch, months and years on the calendar.
fn date_trunc(span: &V, date: &V) -> Result<V, String> {
    let V::Date(ms) = date else {
        return Ok(V::Null);
    };
    let V::Str(span) = span else {
        return Err("[DATE_TRUNC] takes a time span such as `1 DAY`".into());
    };
    let (n, unit) = span
        .split_once(' ')
        .ok_or("[DATE_TRUNC] takes a time span")?;
    let n: i64 = n
        .parse()
        .map_err(|_| "[DATE_TRUNC] takes a whole number of units")?;
    let unit = unit.trim_end_matches('s');
    let fixed: Option<i64> = match unit {
        "millisecond" => Some(1),
        "second" => Some(1_000),
        "minute" => Some(60_000),
        "hour" => Some(3_600_000),
        "day" => Some(86_400_000),
        "week" => Some(7 * 86_400_000),
        _ => None,
    };
    if let Some(step) = fixed {
        let step = step
            .checked_mul(n.max(1))
            .ok_or("[DATE_TRUNC] the span is too long")?;
        return Ok(V::Date(ms.div_euclid(step) * step));
    }
    let months = match unit {
        "month" => n,
        "quarter" => 3 * n,
        "year" => 12 * n,
        other => return Err(format!("[DATE_TRUNC] unit `{other}` is not one ES|QL has")),
    }
    .max(1);
    use chrono::Datelike;
    let at =
        chrono::DateTime::from_timestamp_millis(*ms).ok_or("[DATE_TRUNC] date out of range")?;
    let index = at.year() as i64 * 12 + (at.month() as i64 - 1);
    let floored = index.div_euclid(months) * months;
    let start = chrono::NaiveDate::from_ymd_opt(
        floored.div_euclid(12) as i32,
        (floored.rem_euclid(12) + 1) as u32,
        1,
    )
    .and_then(|d| d.and_hms_opt(0, 0, 0))
    .ok_or("[DATE_TRUNC] date out of range")?;
    Ok(V::Date(start.and_utc().timestamp_millis()))
}

/// A function's result type.
pub fn return_type(name: &str, args: &[Expr], table: &Table) -> Result<Ty, String> {
    let first = || {
        args.first()
            .map(|a| super::func::type_of(a, table))
            .transpose()
    };
    Ok(match name {
        "TO_GEOSHAPE" | "ST_ENVELOPE" => Ty::GeoShape,
        "ST_SIMPLIFY" => first()?.unwrap_or(Ty::GeoShape),
        "TO_GEOPOINT" => Ty::GeoPoint,
        "ST_INTERSECTS" | "ST_WITHIN" | "ST_CONTAINS" | "ST_DISJOINT" => Ty::Boolean,
        "MATCH" | "MATCH_PHRASE" | "QSTR" | "KQL" => Ty::Boolean,
        "ST_DISTANCE" | "ST_X" | "ST_Y" | "TO_DOUBLE" => Ty::Double,
        "ST_NPOINTS" | "LENGTH" | "TO_INTEGER" => Ty::Integer,
        "ST_GEOHASH" | "ST_GEOTILE" | "ST_GEOHEX" | "TO_GEOHASH" | "TO_GEOTILE" | "TO_GEOHEX"
        | "TO_LONG" => Ty::Long,
        "DATE_TRUNC" => Ty::Date,
        "TO_STRING" | "TO_LOWER" | "TO_UPPER" => Ty::Keyword,
        "ABS" | "ROUND" | "COALESCE" => first()?.unwrap_or(Ty::Null),
        other => {
            return Err(format!(
                "ES|QL function `{other}` is not run by the embedded engine"
            ))
        }
    })
}
