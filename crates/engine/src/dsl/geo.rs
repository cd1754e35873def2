//! Geo queries on geo_point fields: `geo_distance`, `geo_bounding_box`, `geo_shape` (point,
//! polygon, envelope and circle shapes with their four relations), `geo_polygon` and
//! `geo_grid` (geohash and geotile cells). Each narrows the candidates with a box on the
//! indexed coordinates, then tests each candidate's point exactly.

use crate::dsl::scoring::DocFn;
use crate::dsl::scoring::FnQuery;
use crate::dsl::scoring::Points;
use crate::dsl::scoring::SegmentFn;
use crate::dsl::single_entry;
use crate::dsl::QueryCompiler;
use crate::geo::grid::Cell;
use crate::geo::grid::Grid;
use crate::geo::relate::Target;
use crate::geo::shape::circle_bounds;
use crate::geo::shape::Bounds;
use crate::geo::shape::Relation;
use crate::geo::shape::Shape;
use crate::mapping::geo_point;
use crate::mapping::FieldRef;
use crate::mapping::FieldType;
use crate::mapping::MappedField;
use serde_json::{Map, Value};
use std::ops::Bound;
use std::sync::Arc;
use tantivy::query::{
    BooleanQuery, ConstScoreQuery, EmptyQuery, ExistsQuery, Occur, Query, RangeQuery,
};
use tantivy::{DocId, Score, SegmentReader, Term};

/// Keys of a geo query's object that are options, not the field.
const OPTIONS: [&str; 8] = [
    "distance",
    "distance_type",
    "validation_method",
    "_name",
    "boost",
    "ignore_unmapped",
    "type",
    "relation",
];

/// The one key of a geo query's object naming its field, with its value.
fn field_entry<'v>(
    obj: &'v Map<String, Value>,
    what: &str,
) -> Result<(&'v String, &'v Value), String> {
    obj.iter()
        .find(|(k, _)| !OPTIONS.contains(&k.as_str()))
        .ok_or_else(|| format!("`{what}` names a geo_point field"))
}

/// Documents whose point passes a test: in a shape (or out of it), or in a grid cell.
#[derive(Debug, Clone)]
enum PointTest {
    In(Arc<Shape>),
    Out(Arc<Shape>),
    Cell(Grid, Cell),
}

#[derive(Debug)]
struct PointFilter {
    field: String,
    test: PointTest,
}

impl DocFn for PointFilter {
    fn bind(&self, reader: &SegmentReader) -> tantivy::Result<Box<dyn SegmentFn>> {
        struct Bound {
            points: Points,
            test: PointTest,
        }
        impl SegmentFn for Bound {
            fn eval(&mut self, doc: DocId, _: Score) -> Option<Score> {
                let (lat, lon) = self.points.get(doc)?;
                let keep = match &self.test {
                    PointTest::In(s) => s.contains(lat, lon),
                    PointTest::Out(s) => !s.contains(lat, lon),
                    PointTest::Cell(g, c) => g.cell(lat, lon) == *c,
                };
                keep.then_some(1.0)
            }
        }
        Ok(Box::new(Bound {
            points: Points::open(reader, &self.field)?,
            test: self.test.clone(),
        }))
    }
}

impl QueryCompiler<'_> {
    /// A geo_point field of the mapping, with its latitude field.
    fn geo_field(&self, name: &str) -> Result<(&MappedField, tantivy::schema::Field), String> {
        let f = match self.mapping.field(name) {
            Some(FieldRef::Mapped(f)) => f,
            _ => return Err(format!("field `{name}` is not a geo_point")),
        };
        match (f.kind, f.second) {
            (FieldType::GeoPoint, Some(lat)) => Ok((f, lat)),
            _ => Err(format!("field `{name}` is not a geo_point")),
        }
    }

    /// The documents whose point lies in the box (degrees); a box across the antimeridian
    /// (west > east) is two.
    fn geo_box(&self, f: &MappedField, lat: tantivy::schema::Field, b: Bounds) -> Box<dyn Query> {
        let range = |field, lo: f64, hi: f64| -> Box<dyn Query> {
            Box::new(RangeQuery::new(
                Bound::Included(Term::from_field_f64(field, lo)),
                Bound::Included(Term::from_field_f64(field, hi)),
            ))
        };
        let lon: Box<dyn Query> = if b.west <= b.east {
            range(f.field, b.west, b.east)
        } else {
            Box::new(BooleanQuery::new(vec![
                (Occur::Should, range(f.field, b.west, 180.0)),
                (Occur::Should, range(f.field, -180.0, b.east)),
            ]))
        };
        Box::new(ConstScoreQuery::new(
            Box::new(BooleanQuery::new(vec![
                (Occur::Must, range(lat, b.south, b.north)),
                (Occur::Must, lon),
            ])),
            1.0,
        ))
    }

    /// The candidates in `b`, kept by `test`.
    fn filtered(
        &self,
        f: &MappedField,
        lat: tantivy::schema::Field,
        b: Bounds,
        test: PointTest,
    ) -> Box<dyn Query> {
        Box::new(FnQuery::new(
            self.geo_box(f, lat, b),
            Arc::new(PointFilter {
                field: f.name.clone(),
                test,
            }),
        ))
    }

    pub(crate) fn geo_distance(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body.as_object().ok_or("`geo_distance` expects an object")?;
        let (name, origin) = field_entry(obj, "geo_distance")?;
        let (lon, lat) = geo_point(origin)?;
        let meters = match obj.get("distance") {
            Some(Value::String(s)) => crate::geo::distance::distance_meters(s)?,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            _ => return Err("`geo_distance` needs a `distance`".into()),
        };
        if let Some(f) = self.shape_field(name) {
            let circle = crate::geo::geometry::Parsed::Circle { lon, lat, meters };
            return Ok(self.shape_query(f, Target::new(circle), Relation::Intersects));
        }
        let (f, lat_field) = self.geo_field(name)?;
        let circle = Shape::Circle { lon, lat, meters };
        Ok(self.filtered(
            f,
            lat_field,
            circle_bounds(lat, lon, meters),
            PointTest::In(Arc::new(circle)),
        ))
    }

    pub(crate) fn geo_bounding_box(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body
            .as_object()
            .ok_or("`geo_bounding_box` expects an object")?;
        let (name, corners) = field_entry(obj, "geo_bounding_box")?;
        let b = box_corners(corners)?;
        if let Some(f) = self.shape_field(name) {
            return Ok(self.shape_in_box(f, b));
        }
        let (f, lat_field) = self.geo_field(name)?;
        Ok(self.geo_box(f, lat_field, b))
    }

    /// `geo_shape` on a geo_point field: a point intersects (or lies within) a shape when it
    /// is inside it, is disjoint from it when outside, and contains only a shape that is
    /// that point.
    pub(crate) fn geo_shape(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body.as_object().ok_or("`geo_shape` expects an object")?;
        let (name, spec) = field_entry(obj, "geo_shape")?;
        if spec.get("indexed_shape").is_some() {
            return Err("`geo_shape` with an `indexed_shape` is not run by the embedded engine (it reads no other document)".into());
        }
        if let Some(f) = self.shape_field(name) {
            let shape = spec.get("shape").ok_or("`geo_shape` needs a `shape`")?;
            let target = Target::new(crate::geo::geometry::Parsed::parse(shape)?);
            return Ok(self.shape_query(f, target, Relation::parse(spec.get("relation"))?));
        }
        let (f, lat_field) = self.geo_field(name).map_err(|e| {
            if self.mapping.field(name).is_some() {
                format!("`geo_shape` on `{name}`: the embedded engine runs it on geo_point and geo_shape fields")
            } else {
                e
            }
        })?;
        let shape = Shape::parse(spec.get("shape").ok_or("`geo_shape` needs a `shape`")?)?;
        let relation = Relation::parse(spec.get("relation"))?;
        let bounds = shape.bounds();
        let shape = Arc::new(shape);
        Ok(match relation {
            Relation::Intersects | Relation::Within => {
                self.filtered(f, lat_field, bounds, PointTest::In(shape))
            }
            Relation::Contains if shape.is_points() => {
                self.filtered(f, lat_field, bounds, PointTest::In(shape))
            }
            Relation::Contains => Box::new(EmptyQuery),
            Relation::Disjoint => Box::new(FnQuery::new(
                Box::new(ConstScoreQuery::new(
                    Box::new(ExistsQuery::new(format!("{}.lat", f.name), false)),
                    1.0,
                )),
                Arc::new(PointFilter {
                    field: f.name.clone(),
                    test: PointTest::Out(shape),
                }),
            )),
        })
    }

    /// `geo_polygon` (deprecated in Elasticsearch, still in OSB's workloads): `points`.
    pub(crate) fn geo_polygon(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body.as_object().ok_or("`geo_polygon` expects an object")?;
        let (name, spec) = field_entry(obj, "geo_polygon")?;
        let (f, lat_field) = self.geo_field(name)?;
        let mut ring = spec
            .get("points")
            .and_then(Value::as_array)
            .ok_or("`geo_polygon` needs `points`")?
            .iter()
            .map(geo_point)
            .collect::<Result<Vec<_>, _>>()?;
        if ring.len() < 3 {
            return Err("`geo_polygon` needs at least 3 points".into());
        }
        if ring.first() != ring.last() {
            ring.push(ring[0]);
        }
        let shape = Shape::Polygon(vec![ring]);
        let bounds = shape.bounds();
        Ok(self.filtered(f, lat_field, bounds, PointTest::In(Arc::new(shape))))
    }

    /// `geo_grid`: the points in one geohash or geotile cell.
    pub(crate) fn geo_grid(&self, body: &Value) -> Result<Box<dyn Query>, String> {
        let obj = body.as_object().ok_or("`geo_grid` expects an object")?;
        let (name, spec) = field_entry(obj, "geo_grid")?;
        let (kind, key) = single_entry(spec, "geo_grid")?;
        let key = key.as_str().ok_or("a `geo_grid` cell is a string")?;
        let (grid, cell) = match kind.as_str() {
            "geohash" => Grid::parse_geohash(key)?,
            "geotile" => Grid::parse_geotile(key)?,
            "geohex" => Grid::parse_geohex(key)?,
            other => {
                return Err(format!(
                    "`geo_grid` cell `{other}` is not one of geohash, geotile, geohex"
                ))
            }
        };
        if let Some(f) = self.shape_field(name) {
            let target = Target::Geometry(grid.cell_geometry(cell));
            return Ok(self.shape_query(f, target, Relation::Intersects));
        }
        let (f, lat_field) = self.geo_field(name)?;
        Ok(self.filtered(f, lat_field, grid.bounds(cell), PointTest::Cell(grid, cell)))
    }
}

/// A `geo_bounding_box`'s corners: top_left and bottom_right, top_right and bottom_left,
/// the four sides, or WKT's BBOX.
fn box_corners(corners: &Value) -> Result<Bounds, String> {
    if let Some(wkt) = corners.get("wkt").and_then(Value::as_str) {
        return match Shape::wkt(wkt)? {
            Shape::Envelope(b) => Ok(b),
            _ => Err("`geo_bounding_box` wkt is a BBOX".into()),
        };
    }
    let c = corners
        .as_object()
        .ok_or("`geo_bounding_box` corners are an object")?;
    let point = |k: &str| c.get(k).map(geo_point).transpose();
    let number = |k: &str| c.get(k).map(crate::mapping::as_f64).transpose();
    let (south, north, west, east) = if let (Some((w, n)), Some((e, s))) =
        (point("top_left")?, point("bottom_right")?)
    {
        (s, n, w, e)
    } else if let (Some((e, n)), Some((w, s))) = (point("top_right")?, point("bottom_left")?) {
        (s, n, w, e)
    } else if let (Some(n), Some(w), Some(s), Some(e)) = (
        number("top")?,
        number("left")?,
        number("bottom")?,
        number("right")?,
    ) {
        (s, n, w, e)
    } else {
        return Err("`geo_bounding_box` takes top_left and bottom_right, top_right and bottom_left, top, left, bottom and right, or wkt".into());
    };
    Ok(Bounds {
        south,
        north,
        west,
        east,
    })
}
