//! The shapes a `geo_shape`, `geo_polygon` or `geo_grid` query asks about, as Elasticsearch
//! reads them (GeoJSON or WKT), and whether a geo_point lies in one. On a geo_point field
//! Elasticsearch (Lucene's `LatLonPoint` geometry queries) treats polygon edges as straight
//! lines in latitude/longitude and a circle as a haversine distance: so does this.

use crate::geo::distance::arc_distance;
use crate::geo::geometry::Parsed;
use geo::Geometry;
use serde_json::Value;

/// A closed ring of (lon, lat) vertices.
type Ring = Vec<(f64, f64)>;

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// An outer ring and its holes.
    Polygon(Vec<Ring>),
    MultiPolygon(Vec<Vec<Ring>>),
    /// south, north, west, east (degrees); west > east crosses the antimeridian.
    Envelope(Bounds),
    Circle {
        lon: f64,
        lat: f64,
        meters: f64,
    },
    Points(Vec<(f64, f64)>),
}

/// A latitude/longitude box: south, north, west, east.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bounds {
    pub south: f64,
    pub north: f64,
    pub west: f64,
    pub east: f64,
}

impl Bounds {
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        let in_lon = if self.west <= self.east {
            (self.west..=self.east).contains(&lon)
        } else {
            lon >= self.west || lon <= self.east
        };
        in_lon && (self.south..=self.north).contains(&lat)
    }
}

/// How the documents' points relate to the query's shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Relation {
    Intersects,
    Within,
    Disjoint,
    Contains,
}

impl Relation {
    pub fn parse(v: Option<&Value>) -> Result<Relation, String> {
        match v.and_then(Value::as_str).map(str::to_ascii_lowercase) {
            None => Ok(Relation::Intersects),
            Some(r) => match r.as_str() {
                "intersects" => Ok(Relation::Intersects),
                "within" => Ok(Relation::Within),
                "disjoint" => Ok(Relation::Disjoint),
                "contains" => Ok(Relation::Contains),
                other => Err(format!(
                    "geo_shape relation `{other}` is not one of intersects, within, disjoint, contains"
                )),
            },
        }
    }
}

impl Shape {
    /// A GeoJSON object (`{"type": "polygon", "coordinates": ...}`, Elasticsearch's
    /// `envelope` and `circle` too) or a WKT string, as `geo::geometry` reads it; on a
    /// geo_point field a shape is an area or points.
    pub fn parse(v: &Value) -> Result<Shape, String> {
        let ring = |l: &geo::LineString<f64>| l.0.iter().map(|c| (c.x, c.y)).collect::<Ring>();
        let rings = |p: &geo::Polygon<f64>| {
            std::iter::once(p.exterior())
                .chain(p.interiors())
                .map(ring)
                .collect::<Vec<_>>()
        };
        Ok(match Parsed::parse(v)? {
            Parsed::Envelope(b) => Shape::Envelope(b),
            Parsed::Circle { lon, lat, meters } => Shape::Circle { lon, lat, meters },
            Parsed::Geometry(Geometry::Polygon(p)) => Shape::Polygon(rings(&p)),
            Parsed::Geometry(Geometry::MultiPolygon(m)) => {
                Shape::MultiPolygon(m.0.iter().map(rings).collect())
            }
            Parsed::Geometry(Geometry::Point(p)) => Shape::Points(vec![(p.x(), p.y())]),
            Parsed::Geometry(Geometry::MultiPoint(m)) => {
                Shape::Points(m.0.iter().map(|p| (p.x(), p.y())).collect())
            }
            Parsed::Geometry(other) => return Err(not_run(kind_name(&other))),
        })
    }

    /// Well-known text, with Elasticsearch's `BBOX (minLon, maxLon, maxLat, minLat)`.
    pub fn wkt(text: &str) -> Result<Shape, String> {
        Shape::parse(&Value::String(text.to_string()))
    }

    /// The box around the shape, to narrow the candidates with the indexed coordinates.
    pub fn bounds(&self) -> Bounds {
        let around = |pts: &mut dyn Iterator<Item = (f64, f64)>| {
            let mut b = Bounds {
                south: 90.0,
                north: -90.0,
                west: 180.0,
                east: -180.0,
            };
            for (lon, lat) in pts {
                b.south = b.south.min(lat);
                b.north = b.north.max(lat);
                b.west = b.west.min(lon);
                b.east = b.east.max(lon);
            }
            b
        };
        match self {
            Shape::Polygon(rings) => around(&mut rings[0].iter().copied()),
            Shape::MultiPolygon(ps) => around(&mut ps.iter().flat_map(|p| p[0].iter().copied())),
            Shape::Envelope(b) => *b,
            Shape::Points(ps) => around(&mut ps.iter().copied()),
            Shape::Circle { lon, lat, meters } => circle_bounds(*lat, *lon, *meters),
        }
    }

    /// Whether the point lies in the shape (its boundary included).
    pub fn contains(&self, lat: f64, lon: f64) -> bool {
        match self {
            Shape::Polygon(rings) => in_polygon(rings, lon, lat),
            Shape::MultiPolygon(ps) => ps.iter().any(|p| in_polygon(p, lon, lat)),
            Shape::Envelope(b) => b.contains(lat, lon),
            Shape::Circle {
                lon: clon,
                lat: clat,
                meters,
            } => arc_distance(*clat, *clon, lat, lon) <= *meters,
            Shape::Points(ps) => ps.iter().any(|&(x, y)| x == lon && y == lat),
        }
    }

    /// Whether a point can contain the shape: only a shape of that one point.
    pub fn is_points(&self) -> bool {
        matches!(self, Shape::Points(_))
    }
}

fn kind_name(g: &Geometry<f64>) -> &'static str {
    match g {
        Geometry::LineString(_) | Geometry::Line(_) => "linestring",
        Geometry::MultiLineString(_) => "multilinestring",
        Geometry::GeometryCollection(_) => "geometrycollection",
        _ => "shape",
    }
}

fn not_run(kind: &str) -> String {
    format!("a `{kind}` shape on a geo_point field is not run by the embedded engine (it runs point, multipoint, polygon, multipolygon, envelope and circle)")
}

/// The box around a circle: `dlat` of arc north and south, wider in longitude away from
/// the equator; the whole band of longitudes near a pole.
pub fn circle_bounds(lat: f64, lon: f64, meters: f64) -> Bounds {
    let dlat = (meters / crate::geo::distance::EARTH_RADIUS_M).to_degrees();
    let (south, north) = ((lat - dlat).max(-90.0), (lat + dlat).min(90.0));
    let polar = north >= 90.0 || south <= -90.0;
    let dlon = if polar {
        180.0
    } else {
        dlat / lat.to_radians().cos().max(1e-9)
    };
    let (west, east) = if dlon >= 180.0 {
        (-180.0, 180.0)
    } else {
        let wrap = |x: f64| {
            if x < -180.0 {
                x + 360.0
            } else if x > 180.0 {
                x - 360.0
            } else {
                x
            }
        };
        (wrap(lon - dlon), wrap(lon + dlon))
    };
    Bounds {
        south,
        north,
        west,
        east,
    }
}

/// Even-odd rule over the outer ring and the holes; a point on an edge is inside.
fn in_polygon(rings: &[Ring], x: f64, y: f64) -> bool {
    let mut inside = false;
    for (i, ring) in rings.iter().enumerate() {
        let (crosses, on_edge) = crossings(ring, x, y);
        if on_edge {
            // On the outer ring's edge: inside; on a hole's edge: inside too (the hole's
            // boundary belongs to the polygon).
            return i == 0 || inside;
        }
        if i == 0 {
            if !crosses {
                return false;
            }
            inside = true;
        } else if crosses {
            return false;
        }
    }
    inside
}

/// Whether a ray from (x, y) crosses the ring an odd number of times, and whether the point
/// lies on one of its edges.
fn crossings(ring: &Ring, x: f64, y: f64) -> (bool, bool) {
    let mut odd = false;
    for w in ring.windows(2) {
        let ((x1, y1), (x2, y2)) = (w[0], w[1]);
        let cross = (x2 - x1) * (y - y1) - (y2 - y1) * (x - x1);
        let within = x >= x1.min(x2) && x <= x1.max(x2) && y >= y1.min(y2) && y <= y1.max(y2);
        if cross == 0.0 && within {
            return (false, true);
        }
        if (y1 > y) != (y2 > y) && x < (x2 - x1) * (y - y1) / (y2 - y1) + x1 {
            odd = !odd;
        }
    }
    (odd, false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn polygons_with_holes_and_wkt() {
        let square = json!({"type": "Polygon", "coordinates": [
            [[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0], [0.0, 0.0]],
            [[4.0, 4.0], [6.0, 4.0], [6.0, 6.0], [4.0, 6.0], [4.0, 4.0]]
        ]});
        let s = Shape::parse(&square).unwrap();
        assert!(s.contains(1.0, 1.0));
        assert!(!s.contains(5.0, 5.0), "inside the hole");
        assert!(s.contains(0.0, 5.0), "on the outer edge");
        assert!(!s.contains(11.0, 5.0));
        let wkt = Shape::parse(&json!(
            "POLYGON ((0 0, 10 0, 10 10, 0 10, 0 0), (4 4, 6 4, 6 6, 4 6, 4 4))"
        ))
        .unwrap();
        assert_eq!(wkt, s);
        let multi = Shape::parse(&json!(
            "MULTIPOLYGON (((0 0, 1 0, 1 1, 0 0)), ((5 5, 6 5, 6 6, 5 5)))"
        ))
        .unwrap();
        assert!(multi.contains(0.2, 0.5));
        assert!(multi.contains(5.2, 5.5));
        assert!(!multi.contains(3.0, 3.0));
    }

    #[test]
    fn envelopes_circles_and_points() {
        let bbox = Shape::parse(&json!("BBOX (-0.1, 15.0, 61.0, 48.0)")).unwrap();
        assert_eq!(
            bbox,
            Shape::parse(&json!({"type": "envelope", "coordinates": [[-0.1, 61.0], [15.0, 48.0]]}))
                .unwrap()
        );
        assert!(bbox.contains(50.0, 7.0));
        assert!(!bbox.contains(47.9, 7.0));
        let circle =
            Shape::parse(&json!({"type": "circle", "radius": "100km", "coordinates": [7.0, 55.0]}))
                .unwrap();
        // One degree of latitude is 111.195 km on Elasticsearch's mean earth radius.
        assert!(circle.contains(55.89, 7.0));
        assert!(!circle.contains(55.91, 7.0));
        let b = circle.bounds();
        assert!(b.south < 54.11 && b.north > 55.89 && b.west < 7.0 && b.east > 7.0);
        let point = Shape::parse(&json!("POINT (7 55)")).unwrap();
        assert!(point.contains(55.0, 7.0) && point.is_points());
        for bad in [
            json!({"type": "linestring", "coordinates": [[0, 0], [1, 1]]}),
            json!({"type": "polygon", "coordinates": [[[0, 0], [1, 1], [0, 0]]]}),
            json!({"type": "point", "coordinates": [200, 0]}),
        ] {
            assert!(Shape::parse(&bad).is_err(), "{bad}");
        }
    }
}
