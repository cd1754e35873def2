//! A geo_shape field's columns: each value's geometry (bytes, `geo::codec`) and its box
//! (four doubles, written by `mapping`), read back per segment; and what aggregations and
//! scripts take from a document's shapes (box, sides, weighted centroid).

use crate::geo::codec;
use geo::{Area, Centroid, CoordsIter, Euclidean, Geometry, Length};
use tantivy::columnar::BytesColumn;
use tantivy::{DocId, SegmentReader};

/// The box columns' suffixes, in the order [`add_shape`] writes them.
pub const SIDES: [&str; 4] = ["west", "east", "south", "north"];

/// One segment's shapes of a field.
pub struct ShapeColumn {
    column: Option<BytesColumn>,
    buf: Vec<u8>,
}

impl ShapeColumn {
    pub fn open(reader: &SegmentReader, field: &str) -> tantivy::Result<ShapeColumn> {
        Ok(ShapeColumn {
            column: reader.fast_fields().bytes(field)?,
            buf: Vec::new(),
        })
    }

    /// The document's shapes, as one geometry (a collection when it has several).
    pub fn get(&mut self, doc: DocId) -> Option<Geometry<f64>> {
        let column = self.column.as_ref()?;
        let mut all = Vec::new();
        for ord in column.term_ords(doc) {
            self.buf.clear();
            if !column.ord_to_bytes(ord, &mut self.buf).unwrap_or(false) {
                continue;
            }
            // The engine wrote these bytes; one it cannot read is left out of the answer
            // rather than failing the search (as a damaged doc value would be in Lucene).
            if let Ok(g) = codec::decode(&self.buf) {
                all.push(g);
            }
        }
        match all.len() {
            0 => None,
            1 => all.pop(),
            _ => Some(Geometry::GeometryCollection(geo::GeometryCollection(all))),
        }
    }
}

/// A shape's centroid with its weight, by its highest dimension, as Elasticsearch's
/// `CentroidCalculator` keeps it: polygons by area, lines by length, points by count; parts
/// of a lower dimension than the shape's highest do not count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weighted {
    pub dimension: u8,
    pub weight: f64,
    /// Weighted sums of longitude and latitude.
    pub sum_lon: f64,
    pub sum_lat: f64,
}

impl Weighted {
    fn of_part(dimension: u8, weight: f64, c: Option<geo::Point<f64>>) -> Option<Weighted> {
        let c = c?;
        Some(Weighted {
            dimension,
            weight,
            sum_lon: c.x() * weight,
            sum_lat: c.y() * weight,
        })
    }

    /// Adds another shape's: the higher dimension wins, equal ones sum.
    pub fn add(self, other: Weighted) -> Weighted {
        match self.dimension.cmp(&other.dimension) {
            std::cmp::Ordering::Less => other,
            std::cmp::Ordering::Greater => self,
            std::cmp::Ordering::Equal => Weighted {
                dimension: self.dimension,
                weight: self.weight + other.weight,
                sum_lon: self.sum_lon + other.sum_lon,
                sum_lat: self.sum_lat + other.sum_lat,
            },
        }
    }

    pub fn of(g: &Geometry<f64>) -> Option<Weighted> {
        let fold = |parts: Vec<Option<Weighted>>| parts.into_iter().flatten().reduce(Weighted::add);
        match g {
            Geometry::Point(p) => Self::of_part(0, 1.0, Some(*p)),
            Geometry::MultiPoint(m) => fold(
                m.0.iter()
                    .map(|p| Self::of_part(0, 1.0, Some(*p)))
                    .collect(),
            ),
            Geometry::LineString(l) => line(l),
            Geometry::MultiLineString(m) => fold(m.0.iter().map(line).collect()),
            Geometry::Polygon(p) => polygon(p),
            Geometry::MultiPolygon(m) => fold(m.0.iter().map(polygon).collect()),
            Geometry::GeometryCollection(c) => fold(c.0.iter().map(Weighted::of).collect()),
            Geometry::Rect(r) => polygon(&r.to_polygon()),
            Geometry::Triangle(t) => polygon(&t.to_polygon()),
            Geometry::Line(l) => line(&geo::LineString(vec![l.start, l.end])),
        }
    }
}

/// A line by its length; a line of no length is its point.
fn line(l: &geo::LineString<f64>) -> Option<Weighted> {
    let length = Euclidean.length(l);
    match length > 0.0 {
        true => Weighted::of_part(1, length, l.centroid()),
        false => Weighted::of_part(0, 1.0, Some(geo::Point(*l.0.first()?))),
    }
}

/// A polygon by its area; one of no area is its outline.
fn polygon(p: &geo::Polygon<f64>) -> Option<Weighted> {
    let area = p.unsigned_area();
    match area > 0.0 {
        true => Weighted::of_part(2, area, p.centroid()),
        false => line(p.exterior()),
    }
}

/// A shape's extremes as `geo_bounds` combines them: top and bottom, and the longitudes on
/// each side of the prime meridian (to pick a box across the antimeridian when narrower).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sides {
    pub top: f64,
    pub bottom: f64,
    pub neg_left: f64,
    pub neg_right: f64,
    pub pos_left: f64,
    pub pos_right: f64,
}

impl Default for Sides {
    fn default() -> Sides {
        Sides {
            top: f64::NEG_INFINITY,
            bottom: f64::INFINITY,
            neg_left: f64::INFINITY,
            neg_right: f64::NEG_INFINITY,
            pos_left: f64::INFINITY,
            pos_right: f64::NEG_INFINITY,
        }
    }
}

impl Sides {
    pub fn add_geometry(&mut self, g: &Geometry<f64>) {
        for c in g.coords_iter() {
            self.add_point(c.x, c.y);
        }
    }

    pub fn add_point(&mut self, lon: f64, lat: f64) {
        self.top = self.top.max(lat);
        self.bottom = self.bottom.min(lat);
        if lon < 0.0 {
            self.neg_left = self.neg_left.min(lon);
            self.neg_right = self.neg_right.max(lon);
        } else {
            self.pos_left = self.pos_left.min(lon);
            self.pos_right = self.pos_right.max(lon);
        }
    }

    pub fn merge(&mut self, o: &Sides) {
        self.top = self.top.max(o.top);
        self.bottom = self.bottom.min(o.bottom);
        self.neg_left = self.neg_left.min(o.neg_left);
        self.neg_right = self.neg_right.max(o.neg_right);
        self.pos_left = self.pos_left.min(o.pos_left);
        self.pos_right = self.pos_right.max(o.pos_right);
    }
}

/// Spherical Mercator (EPSG:3857) metres of a longitude and a latitude, as Elasticsearch's
/// `SphericalMercatorUtils` computes them.
pub fn mercator(lon: f64, lat: f64) -> (f64, f64) {
    const FACTOR: f64 = 20037508.34 / 180.0;
    let y =
        ((90.0 + lat) * std::f64::consts::PI / 360.0).tan().ln() / (std::f64::consts::PI / 180.0);
    (lon * FACTOR, y * FACTOR)
}
