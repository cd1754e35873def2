//! How a document's shape relates to a query's: the four relations of Elasticsearch's
//! `geo_shape` query, by the `geo` crate's predicates (DE-9IM); a circle by haversine
//! distance, as Lucene's `Circle` tests it.

use crate::geo::distance::arc_distance;
use crate::geo::geometry::Parsed;
use crate::geo::shape::{circle_bounds, Bounds, Relation};
use geo::{
    BoundingRect, Closest, Contains, CoordsIter, Geometry, HaversineClosestPoint, Intersects,
    Point, Polygon,
};

/// Vertices of the polygon a circle is drawn as when a shape must contain it.
const CIRCLE_VERTICES: usize = 360;

/// A query's shape, ready to test documents against.
#[derive(Debug, Clone)]
pub enum Target {
    Geometry(Geometry<f64>),
    Circle {
        lon: f64,
        lat: f64,
        meters: f64,
        /// The circle drawn as a polygon, for `contains`.
        drawn: Polygon<f64>,
    },
}

impl Target {
    pub fn new(shape: Parsed) -> Target {
        match shape {
            Parsed::Circle { lon, lat, meters } => Target::Circle {
                lon,
                lat,
                meters,
                drawn: draw_circle(lon, lat, meters),
            },
            other => Target::Geometry(other.geometry().expect("not a circle")),
        }
    }

    /// The box around the target, to narrow the candidates by the documents' boxes.
    pub fn bounds(&self) -> Bounds {
        match self {
            Target::Circle {
                lon, lat, meters, ..
            } => circle_bounds(*lat, *lon, *meters),
            Target::Geometry(g) => match g.bounding_rect() {
                Some(r) => Bounds {
                    south: r.min().y,
                    north: r.max().y,
                    west: r.min().x,
                    east: r.max().x,
                },
                None => Bounds {
                    south: 0.0,
                    north: -1.0,
                    west: 0.0,
                    east: -1.0,
                },
            },
        }
    }

    /// Whether the document's shape stands in `relation` to the target.
    pub fn test(&self, doc: &Geometry<f64>, relation: Relation) -> bool {
        match relation {
            Relation::Intersects => self.intersects(doc),
            Relation::Disjoint => !self.intersects(doc),
            Relation::Within => match self {
                Target::Geometry(g) => g.contains(doc),
                Target::Circle {
                    lon, lat, meters, ..
                } => doc
                    .coords_iter()
                    .all(|c| arc_distance(*lat, *lon, c.y, c.x) <= *meters),
            },
            Relation::Contains => match self {
                Target::Geometry(g) => doc.contains(g),
                Target::Circle { drawn, .. } => doc.contains(drawn),
            },
        }
    }

    fn intersects(&self, doc: &Geometry<f64>) -> bool {
        match self {
            Target::Geometry(g) => g.intersects(doc),
            Target::Circle {
                lon, lat, meters, ..
            } => {
                let center = Point::new(*lon, *lat);
                match doc.haversine_closest_point(&center) {
                    Closest::Intersection(_) => true,
                    Closest::SinglePoint(p) => arc_distance(*lat, *lon, p.y(), p.x()) <= *meters,
                    Closest::Indeterminate => doc
                        .coords_iter()
                        .any(|c| arc_distance(*lat, *lon, c.y, c.x) <= *meters),
                }
            }
        }
    }
}

/// A circle as a polygon of points at its radius (along great circles from its center).
fn draw_circle(lon: f64, lat: f64, meters: f64) -> Polygon<f64> {
    use geo::{Destination, Haversine};
    let center = Point::new(lon, lat);
    let mut ring: Vec<geo::Coord<f64>> = (0..CIRCLE_VERTICES)
        .map(|i| {
            let bearing = 360.0 * i as f64 / CIRCLE_VERTICES as f64;
            Haversine.destination(center, bearing, meters).0
        })
        .collect();
    ring.push(ring[0]);
    Polygon::new(geo::LineString(ring), vec![])
}

#[cfg(test)]
mod tests;
