//! ES|QL values and their types as a response shows them: numbers, strings, dates (ISO
//! 8601), geo points and shapes (WKT), multi-values (arrays), `_source` (an object).

use geo::Geometry;
use serde_json::{json, Value};
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq)]
pub enum V {
    Null,
    Bool(bool),
    Long(i64),
    Double(f64),
    Str(String),
    /// Epoch milliseconds, UTC.
    Date(i64),
    /// Longitude, latitude.
    Point(f64, f64),
    Shape(Box<Geometry<f64>>),
    Multi(Vec<V>),
    /// A document's `_source` (METADATA _source).
    Source(Box<Value>),
}

/// ES|QL's column types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ty {
    Null,
    Boolean,
    Integer,
    Long,
    Double,
    Keyword,
    Text,
    Date,
    GeoPoint,
    GeoShape,
    Ip,
    Source,
    Unsupported,
}

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            Ty::Null => "null",
            Ty::Boolean => "boolean",
            Ty::Integer => "integer",
            Ty::Long => "long",
            Ty::Double => "double",
            Ty::Keyword => "keyword",
            Ty::Text => "text",
            Ty::Date => "date",
            Ty::GeoPoint => "geo_point",
            Ty::GeoShape => "geo_shape",
            Ty::Ip => "ip",
            Ty::Source => "_source",
            Ty::Unsupported => "unsupported",
        }
    }

    /// The type of a computed value.
    pub fn of(v: &V) -> Ty {
        match v {
            V::Null => Ty::Null,
            V::Bool(_) => Ty::Boolean,
            V::Long(_) => Ty::Long,
            V::Double(_) => Ty::Double,
            V::Str(_) => Ty::Keyword,
            V::Date(_) => Ty::Date,
            V::Point(..) => Ty::GeoPoint,
            V::Shape(_) => Ty::GeoShape,
            V::Multi(items) => items.first().map_or(Ty::Null, Ty::of),
            V::Source(_) => Ty::Source,
        }
    }
}

impl V {
    pub fn to_json(&self) -> Value {
        match self {
            V::Null => Value::Null,
            V::Bool(b) => json!(b),
            V::Long(n) => json!(n),
            V::Double(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
            V::Str(s) => json!(s),
            V::Date(ms) => json!(crate::zone::Zone::utc().format(*ms)),
            V::Point(lon, lat) => json!(format!("POINT ({} {})", num(*lon), num(*lat))),
            V::Shape(g) => json!(wkt(g)),
            V::Multi(items) => Value::Array(items.iter().map(V::to_json).collect()),
            V::Source(v) => (**v).clone(),
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            V::Long(n) => Some(*n as f64),
            V::Double(x) => Some(*x),
            V::Date(ms) => Some(*ms as f64),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, V::Null)
    }

    /// ES|QL's ordering of two values of one type; None across types.
    pub fn compare(&self, other: &V) -> Option<Ordering> {
        match (self, other) {
            (V::Long(a), V::Long(b)) => Some(a.cmp(b)),
            (V::Date(a), V::Date(b)) => Some(a.cmp(b)),
            (V::Str(a), V::Str(b)) => Some(a.cmp(b)),
            (V::Bool(a), V::Bool(b)) => Some(a.cmp(b)),
            (a, b) => a.as_f64()?.partial_cmp(&b.as_f64()?),
        }
    }

    /// Equality as `==` has it: numbers across their kinds, points and shapes by value.
    pub fn equals(&self, other: &V) -> Option<bool> {
        match (self, other) {
            (V::Point(..) | V::Shape(_), _) | (_, V::Point(..) | V::Shape(_)) => {
                Some(self == other)
            }
            _ => self.compare(other).map(|o| o == Ordering::Equal),
        }
    }
}

/// Java's `Double.toString` of a coordinate, as Elasticsearch's WKT writes it.
fn num(x: f64) -> String {
    crate::aggs::java_double(x)
}

/// A geometry as Elasticsearch's WKT writer prints it.
pub fn wkt(g: &Geometry<f64>) -> String {
    let coords = |cs: &mut dyn Iterator<Item = &geo::Coord<f64>>| {
        cs.map(|c| format!("{} {}", num(c.x), num(c.y)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let line = |l: &geo::LineString<f64>| format!("({})", coords(&mut l.0.iter()));
    let polygon = |p: &geo::Polygon<f64>| {
        let rings: Vec<String> = std::iter::once(p.exterior())
            .chain(p.interiors())
            .map(line)
            .collect();
        format!("({})", rings.join(", "))
    };
    match g {
        Geometry::Point(p) => format!("POINT ({} {})", num(p.x()), num(p.y())),
        Geometry::LineString(l) => format!("LINESTRING {}", line(l)),
        Geometry::Polygon(p) => format!("POLYGON {}", polygon(p)),
        Geometry::MultiPoint(m) => format!(
            "MULTIPOINT ({})",
            m.0.iter()
                .map(|p| format!("{} {}", num(p.x()), num(p.y())))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Geometry::MultiLineString(m) => {
            format!(
                "MULTILINESTRING ({})",
                m.0.iter().map(line).collect::<Vec<_>>().join(", ")
            )
        }
        Geometry::MultiPolygon(m) => {
            format!(
                "MULTIPOLYGON ({})",
                m.0.iter().map(polygon).collect::<Vec<_>>().join(", ")
            )
        }
        Geometry::GeometryCollection(c) => {
            format!(
                "GEOMETRYCOLLECTION ({})",
                c.0.iter().map(wkt).collect::<Vec<_>>().join(", ")
            )
        }
        // Elasticsearch's envelope: BBOX (minLon, maxLon, maxLat, minLat).
        Geometry::Rect(r) => format!(
            "BBOX ({}, {}, {}, {})",
            num(r.min().x),
            num(r.max().x),
            num(r.max().y),
            num(r.min().y)
        ),
        Geometry::Triangle(t) => wkt(&Geometry::Polygon(t.to_polygon())),
        Geometry::Line(l) => wkt(&Geometry::LineString(geo::LineString(vec![l.start, l.end]))),
    }
}
