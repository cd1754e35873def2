//! Shapes as Elasticsearch reads them (GeoJSON, with its `envelope` and `circle`, or WKT, with
//! its `BBOX`), held as `geo` crate geometries: the one parser for queries on geo_point and
//! geo_shape fields and for indexed `geo_shape` values. Edges are straight lines in
//! longitude/latitude, as Lucene's shape queries draw them.

use crate::geo::distance::distance_meters;
use crate::geo::shape::Bounds;
use geo::{
    Coord, Geometry, GeometryCollection, LineString, MultiLineString, MultiPoint, MultiPolygon,
    Point, Polygon, Rect,
};
use serde_json::Value;

/// The most coordinates one shape may have, bounded before it is built.
pub const MAX_COORDS: usize = 1 << 20;
/// The deepest geometry collections nest.
const MAX_DEPTH: usize = 16;

/// A shape as a request or a document writes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Parsed {
    Geometry(Geometry<f64>),
    /// south, north, west, east; west > east crosses the antimeridian.
    Envelope(Bounds),
    Circle {
        lon: f64,
        lat: f64,
        meters: f64,
    },
}

impl Parsed {
    /// A GeoJSON object or a WKT string.
    pub fn parse(v: &Value) -> Result<Parsed, String> {
        let mut budget = MAX_COORDS;
        match v {
            Value::String(wkt) => parse_wkt(wkt, &mut budget),
            _ => parse_geojson(v, &mut budget, 0),
        }
    }

    /// The shape as a geometry: an envelope across the antimeridian is its two boxes; a
    /// circle has none (it is tested by distance).
    pub fn geometry(&self) -> Option<Geometry<f64>> {
        match self {
            Parsed::Geometry(g) => Some(g.clone()),
            Parsed::Envelope(b) => Some(envelope_geometry(b)),
            Parsed::Circle { .. } => None,
        }
    }
}

/// A box as a geometry; across the antimeridian, the two boxes either side of it.
pub fn envelope_geometry(b: &Bounds) -> Geometry<f64> {
    let rect = |w: f64, e: f64| {
        Rect::new(Coord { x: w, y: b.south }, Coord { x: e, y: b.north }).to_polygon()
    };
    if b.west <= b.east {
        Geometry::Polygon(rect(b.west, b.east))
    } else {
        Geometry::MultiPolygon(MultiPolygon(vec![
            rect(b.west, 180.0),
            rect(-180.0, b.east),
        ]))
    }
}

fn coordinate(v: &Value) -> Result<f64, String> {
    v.as_f64().ok_or_else(|| format!("{v} is not a coordinate"))
}

fn checked(lon: f64, lat: f64) -> Result<Coord<f64>, String> {
    if !(-180.0..=180.0).contains(&lon) {
        return Err(format!("illegal longitude value [{lon}]"));
    }
    if !(-90.0..=90.0).contains(&lat) {
        return Err(format!("illegal latitude value [{lat}]"));
    }
    Ok(Coord { x: lon, y: lat })
}

fn take(budget: &mut usize, n: usize) -> Result<(), String> {
    *budget = budget
        .checked_sub(n)
        .ok_or_else(|| format!("a shape has more than {MAX_COORDS} coordinates"))?;
    Ok(())
}

fn position(v: &Value) -> Result<Coord<f64>, String> {
    match v.as_array().map(Vec::as_slice) {
        Some([lon, lat]) | Some([lon, lat, _]) => checked(coordinate(lon)?, coordinate(lat)?),
        _ => Err(format!("{v} is not a position [lon, lat]")),
    }
}

fn positions(v: &Value, budget: &mut usize) -> Result<Vec<Coord<f64>>, String> {
    let list = v
        .as_array()
        .ok_or_else(|| format!("{v} is not a list of positions"))?;
    take(budget, list.len())?;
    list.iter().map(position).collect()
}

fn line(points: Vec<Coord<f64>>) -> Result<LineString<f64>, String> {
    if points.len() < 2 {
        return Err(format!(
            "invalid number of points in LineString (found [{}] - must be >= 2)",
            points.len()
        ));
    }
    Ok(LineString(points))
}

/// A ring as Elasticsearch takes it: closed, at least 4 positions, no edge across the
/// antimeridian (which Elasticsearch would split, and the engine does not).
fn ring(points: Vec<Coord<f64>>) -> Result<LineString<f64>, String> {
    if points.len() < 4 {
        return Err(format!(
            "at least 4 polygon points required, found {}",
            points.len()
        ));
    }
    if points.first() != points.last() {
        return Err(
            "first and last points of the linear ring must be the same (it must close itself)"
                .into(),
        );
    }
    if points.windows(2).any(|w| (w[0].x - w[1].x).abs() > 180.0) {
        return Err("a polygon with an edge across the antimeridian is not indexed by the embedded engine (Elasticsearch splits it in two)".into());
    }
    Ok(LineString(points))
}

fn polygon(v: &Value, budget: &mut usize) -> Result<Polygon<f64>, String> {
    let mut rings = v
        .as_array()
        .ok_or("a polygon's coordinates are a list of rings")?
        .iter()
        .map(|r| ring(positions(r, budget)?))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter();
    let outer = rings.next().ok_or("a polygon needs an outer ring")?;
    Ok(Polygon::new(outer, rings.collect()))
}

fn list<'v>(v: Option<&'v Value>, kind: &str) -> Result<&'v Vec<Value>, String> {
    v.and_then(Value::as_array)
        .ok_or_else(|| format!("a `{kind}` shape needs its `coordinates` as a list"))
}

fn parse_geojson(v: &Value, budget: &mut usize, depth: usize) -> Result<Parsed, String> {
    if depth > MAX_DEPTH {
        return Err(format!("geometry collections nest deeper than {MAX_DEPTH}"));
    }
    let kind = v
        .get("type")
        .and_then(Value::as_str)
        .ok_or("a shape needs a `type`")?
        .to_ascii_lowercase();
    let coords = v.get("coordinates");
    let geometry = match kind.as_str() {
        "point" => Geometry::Point(Point(position(
            coords.ok_or("a point needs `coordinates`")?,
        )?)),
        "multipoint" => Geometry::MultiPoint(MultiPoint(
            positions(coords.ok_or("a multipoint needs `coordinates`")?, budget)?
                .into_iter()
                .map(Point)
                .collect(),
        )),
        "linestring" => Geometry::LineString(line(positions(
            coords.ok_or("a linestring needs `coordinates`")?,
            budget,
        )?)?),
        "multilinestring" => Geometry::MultiLineString(MultiLineString(
            list(coords, &kind)?
                .iter()
                .map(|l| line(positions(l, budget)?))
                .collect::<Result<_, _>>()?,
        )),
        "polygon" => Geometry::Polygon(polygon(
            coords.ok_or("a polygon needs `coordinates`")?,
            budget,
        )?),
        "multipolygon" => Geometry::MultiPolygon(MultiPolygon(
            list(coords, &kind)?
                .iter()
                .map(|p| polygon(p, budget))
                .collect::<Result<_, _>>()?,
        )),
        "geometrycollection" => {
            let parts = v
                .get("geometries")
                .and_then(Value::as_array)
                .ok_or("a geometrycollection needs `geometries`")?;
            let mut out = Vec::with_capacity(parts.len().min(1024));
            for part in parts {
                match parse_geojson(part, budget, depth + 1)? {
                    Parsed::Geometry(g) => out.push(g),
                    Parsed::Envelope(b) => out.push(envelope_geometry(&b)),
                    Parsed::Circle { .. } => return Err(
                        "a circle inside a geometrycollection is not run by the embedded engine"
                            .into(),
                    ),
                }
            }
            Geometry::GeometryCollection(GeometryCollection(out))
        }
        "envelope" => {
            let corners = positions(coords.ok_or("an envelope needs `coordinates`")?, budget)?;
            let [nw, se] = corners[..] else {
                return Err("an envelope is [[minLon, maxLat], [maxLon, minLat]]".into());
            };
            return envelope(nw.x, se.x, nw.y, se.y);
        }
        "circle" => {
            let center = position(coords.ok_or("a circle needs `coordinates`")?)?;
            let meters = match v.get("radius") {
                Some(Value::String(r)) => distance_meters(r)?,
                Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
                _ => return Err("a circle needs a `radius`".into()),
            };
            return Ok(Parsed::Circle {
                lon: center.x,
                lat: center.y,
                meters,
            });
        }
        other => return Err(format!("unknown geometry type: {other}")),
    };
    Ok(Parsed::Geometry(geometry))
}

fn envelope(west: f64, east: f64, north: f64, south: f64) -> Result<Parsed, String> {
    checked(west, north)?;
    checked(east, south)?;
    if south > north {
        return Err(format!(
            "top is below bottom: maxLat [{north}] is below minLat [{south}]"
        ));
    }
    Ok(Parsed::Envelope(Bounds {
        south,
        north,
        west,
        east,
    }))
}

/// Well-known text, with Elasticsearch's `BBOX (minLon, maxLon, maxLat, minLat)` (or
/// `ENVELOPE`) and `CIRCLE (lon lat radius_m)`.
fn parse_wkt(text: &str, budget: &mut usize) -> Result<Parsed, String> {
    let t = text.trim();
    let open = t
        .find('(')
        .unwrap_or_else(|| t.find(|c: char| c.is_whitespace()).unwrap_or(t.len()));
    let kind = t[..open].trim().to_ascii_lowercase();
    let inner = || {
        t[open..]
            .trim()
            .trim_start_matches('(')
            .trim_end_matches(')')
    };
    let numbers = |s: &str| -> Result<Vec<f64>, String> {
        s.split(|c: char| c == ',' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .map(|p| {
                p.parse()
                    .map_err(|_| format!("`{p}` in `{t}` is not a number"))
            })
            .collect()
    };
    match kind.as_str() {
        "bbox" | "envelope" => match numbers(inner())?[..] {
            [west, east, north, south] => return envelope(west, east, north, south),
            _ => {
                return Err(format!(
                    "`{t}` is not BBOX (minLon, maxLon, maxLat, minLat)"
                ))
            }
        },
        "circle" => match numbers(inner())?[..] {
            [lon, lat, meters] => {
                let c = checked(lon, lat)?;
                return Ok(Parsed::Circle {
                    lon: c.x,
                    lat: c.y,
                    meters,
                });
            }
            _ => return Err(format!("`{t}` is not CIRCLE (lon lat radius)")),
        },
        _ => {}
    }
    // A comma or a space separates every number: a bound on the coordinates before parsing.
    take(budget, t.bytes().filter(|b| *b == b',').count())?;
    let parsed: wkt::Wkt<f64> = t
        .parse()
        .map_err(|e| format!("`{}` is not well-known text: {e}", short(t)))?;
    closed_rings(&parsed)?;
    let geometry: Geometry<f64> = parsed
        .try_into()
        .map_err(|e| format!("`{}` is not a shape the engine takes: {e}", short(t)))?;
    validate(&geometry)?;
    Ok(Parsed::Geometry(geometry))
}

fn short(t: &str) -> &str {
    match t.char_indices().nth(80) {
        Some((i, _)) => &t[..i],
        None => t,
    }
}

/// Rings as WKT writes them must close (the `geo` types would close them silently).
fn closed_rings(w: &wkt::Wkt<f64>) -> Result<(), String> {
    let polygon =
        |p: &wkt::types::Polygon<f64>| {
            p.rings().iter().try_for_each(|r| {
                match (r.coords().first(), r.coords().last()) {
            (Some(a), Some(b)) if a.x != b.x || a.y != b.y => Err(
                "first and last points of the linear ring must be the same (it must close itself)"
                    .to_string(),
            ),
            _ => Ok(()),
        }
            })
        };
    match w {
        wkt::Wkt::Polygon(p) => polygon(p),
        wkt::Wkt::MultiPolygon(m) => m.polygons().iter().try_for_each(polygon),
        wkt::Wkt::GeometryCollection(c) => c.geometries().iter().try_for_each(closed_rings),
        _ => Ok(()),
    }
}

/// The checks GeoJSON's reader makes as it goes, for a geometry read from WKT.
fn validate(g: &Geometry<f64>) -> Result<(), String> {
    use geo::CoordsIter;
    for c in g.coords_iter() {
        checked(c.x, c.y)?;
    }
    let polygons: Vec<&Polygon<f64>> = match g {
        Geometry::Polygon(p) => vec![p],
        Geometry::MultiPolygon(m) => m.0.iter().collect(),
        Geometry::GeometryCollection(c) => return c.0.iter().try_for_each(validate),
        Geometry::LineString(l) => return line(l.0.clone()).map(|_| ()),
        Geometry::MultiLineString(m) => {
            return m.0.iter().try_for_each(|l| line(l.0.clone()).map(|_| ()))
        }
        _ => vec![],
    };
    for p in polygons {
        for r in std::iter::once(p.exterior()).chain(p.interiors()) {
            ring(r.0.clone())?;
        }
    }
    Ok(())
}

/// An indexed shape: circles are refused as Elasticsearch refuses them (it indexes a circle
/// through the `circle` ingest processor, as a polygon).
pub fn parse_indexed(v: &Value) -> Result<Geometry<f64>, String> {
    match Parsed::parse(v)? {
        Parsed::Geometry(g) => Ok(g),
        Parsed::Envelope(b) => Ok(envelope_geometry(&b)),
        Parsed::Circle { .. } => Err("invalid shape type found [Circle] while indexing shape (a circle is indexed as a polygon through the `circle` ingest processor)".into()),
    }
}

/// A geometry as GeoJSON (`fields` shows a geo_shape so).
pub fn to_geojson(g: &Geometry<f64>) -> Value {
    use serde_json::json;
    let coord = |c: &Coord<f64>| json!([c.x, c.y]);
    let line = |l: &LineString<f64>| Value::Array(l.0.iter().map(coord).collect());
    let polygon = |p: &Polygon<f64>| {
        Value::Array(
            std::iter::once(p.exterior())
                .chain(p.interiors())
                .map(line)
                .collect(),
        )
    };
    match g {
        Geometry::Point(p) => json!({"type": "Point", "coordinates": coord(&p.0)}),
        Geometry::LineString(l) => json!({"type": "LineString", "coordinates": line(l)}),
        Geometry::Polygon(p) => json!({"type": "Polygon", "coordinates": polygon(p)}),
        Geometry::MultiPoint(m) => json!({"type": "MultiPoint",
            "coordinates": m.0.iter().map(|p| coord(&p.0)).collect::<Vec<_>>()}),
        Geometry::MultiLineString(m) => json!({"type": "MultiLineString",
            "coordinates": m.0.iter().map(line).collect::<Vec<_>>()}),
        Geometry::MultiPolygon(m) => json!({"type": "MultiPolygon",
            "coordinates": m.0.iter().map(polygon).collect::<Vec<_>>()}),
        Geometry::GeometryCollection(c) => json!({"type": "GeometryCollection",
            "geometries": c.0.iter().map(to_geojson).collect::<Vec<_>>()}),
        Geometry::Rect(r) => to_geojson(&Geometry::Polygon(r.to_polygon())),
        Geometry::Triangle(t) => to_geojson(&Geometry::Polygon(t.to_polygon())),
        Geometry::Line(l) => to_geojson(&Geometry::LineString(LineString(vec![l.start, l.end]))),
    }
}
