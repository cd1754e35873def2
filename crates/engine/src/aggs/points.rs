//! Aggregations over a geo_point's position rather than a column's value: `geo_distance`
//! (ranges of distance from an origin) and the `geohash_grid` and `geotile_grid` cells. Their
//! keys are computed per document, which tantivy's aggregations cannot do, so they run in a
//! collector of their own beside tantivy's, at the top level of a request.

use crate::aggs::shapes;
use crate::dsl::scoring::Points;
use crate::geo::column::{ShapeColumn, Sides, Weighted};
use crate::geo::distance::arc_distance;
use crate::geo::distance::distance_meters;
use crate::geo::grid::Cell;
use crate::geo::grid::Grid;
use crate::geo::grid::MAX_GEOHASH_PRECISION;
use crate::geo::grid::MAX_GEOTILE_ZOOM;
use crate::geo::shape::Bounds;
use crate::mapping::geo_point;
use crate::mapping::FieldType;
use crate::mapping::Mapping;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// The most distinct cells one search may count, as Elasticsearch's request circuit breaker
/// bounds a grid's per-shard table.
const MAX_CELLS: usize = 1 << 20;
/// The most ranges one `geo_distance` aggregation takes.
const MAX_RANGES: usize = 1_000;

#[derive(Debug, Clone)]
pub enum PointAgg {
    Distance {
        field: String,
        lat: f64,
        lon: f64,
        /// Metres per unit of the ranges.
        unit: f64,
        /// (key, from, to) in units, sorted as Elasticsearch sorts them.
        ranges: Vec<(Option<String>, f64, f64)>,
        keyed: bool,
    },
    Grid {
        field: String,
        grid: Grid,
        size: usize,
        bounds: Option<Bounds>,
        /// On a geo_shape field: a document counts in every cell its shape touches.
        shapes: bool,
    },
    /// `geo_bounds` on a geo_shape field.
    ShapeBounds { field: String, wrap: bool },
    /// `geo_centroid` on a geo_shape field.
    ShapeCentroid { field: String },
}

/// The aggregation types this module runs.
pub const KINDS: [&str; 4] = [
    "geo_distance",
    "geohash_grid",
    "geotile_grid",
    "geohex_grid",
];

fn reject(at: &str, what: impl std::fmt::Display) -> String {
    format!("aggregation `{at}`: {what}")
}

impl PointAgg {
    pub fn parse(
        kind: &str,
        params: &Map<String, Value>,
        mapping: Option<&Mapping>,
        at: &str,
    ) -> Result<PointAgg, String> {
        let name = params
            .get("field")
            .and_then(Value::as_str)
            .ok_or_else(|| reject(at, format!("`{kind}` needs a `field`")))?;
        let (field, shapes) = match mapping.map(|m| m.field(name)) {
            None => (name.to_string(), false),
            Some(Some(f)) if f.kind == FieldType::GeoPoint => (f.name.clone(), false),
            Some(Some(f)) if f.kind == FieldType::GeoShape && kind != "geo_distance" => {
                (f.name.clone(), true)
            }
            Some(_) => {
                return Err(reject(
                    at,
                    format!("`{kind}` needs a geo_point field, and `{name}` is not one"),
                ))
            }
        };
        let allowed: &[&str] = match kind {
            "geo_distance" => &[
                "field",
                "origin",
                "unit",
                "distance_type",
                "ranges",
                "keyed",
            ],
            _ => &["field", "precision", "size", "shard_size", "bounds"],
        };
        if let Some(k) = params.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(reject(
                at,
                format!("`{kind}` parameter `{k}` is not run by the embedded engine"),
            ));
        }
        if kind == "geo_distance" {
            return Self::distance(field, params, at);
        }
        let precision = match params.get("precision") {
            None => None,
            Some(p) => Some(
                p.as_u64()
                    .ok_or_else(|| reject(at, "`precision` is a whole number"))?
                    as u32,
            ),
        };
        let grid = if kind == "geohash_grid" {
            let p = precision.unwrap_or(5);
            if !(1..=MAX_GEOHASH_PRECISION).contains(&p) {
                return Err(reject(at, "geohash `precision` is 1 to 12"));
            }
            Grid::Geohash(p)
        } else if kind == "geohex_grid" {
            let p = precision.unwrap_or(5);
            if p > crate::geo::grid::MAX_GEOHEX_PRECISION {
                return Err(reject(
                    at,
                    &format!(
                        "Invalid geohex aggregation precision of [{p}]. Must be between 0 and 15."
                    ),
                ));
            }
            Grid::Geohex(p)
        } else {
            let z = precision.unwrap_or(7);
            if z > MAX_GEOTILE_ZOOM {
                return Err(reject(at, "geotile `precision` is 0 to 29"));
            }
            Grid::Geotile(z)
        };
        let size = params
            .get("size")
            .map_or(Some(10_000), Value::as_u64)
            .ok_or_else(|| reject(at, "`size` is a whole number"))?;
        let bounds = match params.get("bounds") {
            None => None,
            Some(b) => Some(bounds(b).map_err(|e| reject(at, e))?),
        };
        Ok(PointAgg::Grid {
            field,
            grid,
            size: size.min(65_536) as usize,
            bounds,
            shapes,
        })
    }

    fn distance(field: String, params: &Map<String, Value>, at: &str) -> Result<PointAgg, String> {
        let (lon, lat) = geo_point(
            params
                .get("origin")
                .ok_or_else(|| reject(at, "`geo_distance` needs an `origin`"))?,
        )
        .map_err(|e| reject(at, e))?;
        let unit = match params.get("unit").and_then(Value::as_str) {
            None => 1.0,
            Some(u) => distance_meters(&format!("1{u}")).map_err(|e| reject(at, e))?,
        };
        if let Some(t) = params
            .get("distance_type")
            .and_then(Value::as_str)
            .filter(|t| *t != "arc")
        {
            return Err(reject(
                at,
                format!(
                    "`geo_distance` distance_type `{t}` is not run by the embedded engine (`arc`)"
                ),
            ));
        }
        let mut ranges = Vec::new();
        for r in params
            .get("ranges")
            .and_then(Value::as_array)
            .ok_or_else(|| reject(at, "`geo_distance` needs `ranges`"))?
        {
            let bound = |k: &str, default: f64| match r.get(k) {
                None | Some(Value::Null) => Ok(default),
                Some(v) => v
                    .as_f64()
                    .ok_or_else(|| reject(at, format!("range `{k}` is a number"))),
            };
            let key = r.get("key").and_then(Value::as_str).map(str::to_string);
            ranges.push((
                key,
                bound("from", f64::NEG_INFINITY)?,
                bound("to", f64::INFINITY)?,
            ));
        }
        // Each range is tested for every matching point: their number is bounded.
        if ranges.len() > MAX_RANGES {
            return Err(reject(
                at,
                format!("`geo_distance` takes at most {MAX_RANGES} ranges"),
            ));
        }
        ranges.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.2.total_cmp(&b.2)));
        Ok(PointAgg::Distance {
            field,
            lat,
            lon,
            unit,
            ranges,
            keyed: params
                .get("keyed")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        })
    }

    /// `geo_bounds` or `geo_centroid` on the geo_shape field `field`.
    pub fn shape_metric(
        kind: &str,
        field: String,
        params: &Map<String, Value>,
        at: &str,
    ) -> Result<PointAgg, String> {
        let allowed: &[&str] = match kind {
            "geo_bounds" => &["field", "wrap_longitude"],
            _ => &["field"],
        };
        if let Some(k) = params.keys().find(|k| !allowed.contains(&k.as_str())) {
            return Err(reject(
                at,
                format!("`{kind}` parameter `{k}` is not run by the embedded engine"),
            ));
        }
        Ok(match kind {
            "geo_bounds" => PointAgg::ShapeBounds {
                field,
                wrap: params
                    .get("wrap_longitude")
                    .map_or(Some(true), Value::as_bool)
                    .ok_or_else(|| reject(at, "`wrap_longitude` is true or false"))?,
            },
            _ => PointAgg::ShapeCentroid { field },
        })
    }

    fn field(&self) -> &str {
        match self {
            PointAgg::Distance { field, .. }
            | PointAgg::Grid { field, .. }
            | PointAgg::ShapeBounds { field, .. }
            | PointAgg::ShapeCentroid { field } => field,
        }
    }

    fn on_shapes(&self) -> bool {
        matches!(
            self,
            PointAgg::Grid { shapes: true, .. }
                | PointAgg::ShapeBounds { .. }
                | PointAgg::ShapeCentroid { .. }
        )
    }
}

/// A grid's `bounds`: top_left and bottom_right points, or a WKT BBOX.
fn bounds(v: &Value) -> Result<Bounds, String> {
    if let Value::String(wkt) = v {
        return match crate::geo::shape::Shape::wkt(wkt)? {
            crate::geo::shape::Shape::Envelope(b) => Ok(b),
            _ => Err("`bounds` is a BBOX".into()),
        };
    }
    let corner = |k: &str| v.get(k).map(geo_point).transpose();
    match (corner("top_left")?, corner("bottom_right")?) {
        (Some((west, north)), Some((east, south))) => Ok(Bounds {
            south,
            north,
            west,
            east,
        }),
        _ => Err("`bounds` takes top_left and bottom_right".into()),
    }
}

/// The point aggregations of one request, by name.
#[derive(Debug, Clone, Default)]
pub struct PointAggs(pub Arc<Vec<(String, PointAgg)>>);

/// Per aggregation: the count per range, or per cell; the sides or centroid of shapes.
/// `overflow`: a shape touched more cells than one may count in.
#[derive(Debug, Default)]
pub struct PointResults(Vec<Counts>, bool);

#[derive(Debug)]
enum Counts {
    Ranges(Vec<u64>),
    Cells(HashMap<Cell, u64>),
    Sides(Sides),
    Centroid(Option<Weighted>, u64),
}

/// Where one aggregation reads a segment's documents.
enum Source {
    Points(Points),
    /// The index of the field's column among the segment's shape columns.
    Shapes(usize),
}

pub struct PointSegment {
    aggs: Arc<Vec<(String, PointAgg)>>,
    sources: Vec<Source>,
    /// One column per geo_shape field the aggregations read, and the current document's
    /// shape of each, decoded once however many aggregations read it.
    shapes: Vec<(String, ShapeColumn)>,
    decoded: Vec<Option<Option<geo::Geometry<f64>>>>,
    counts: Vec<Counts>,
    cells: Vec<Cell>,
    overflow: bool,
}

fn empty_counts(aggs: &[(String, PointAgg)]) -> Vec<Counts> {
    aggs.iter()
        .map(|(_, a)| match a {
            PointAgg::Distance { ranges, .. } => Counts::Ranges(vec![0; ranges.len()]),
            PointAgg::Grid { .. } => Counts::Cells(HashMap::new()),
            PointAgg::ShapeBounds { .. } => Counts::Sides(Sides::default()),
            PointAgg::ShapeCentroid { .. } => Counts::Centroid(None, 0),
        })
        .collect()
}

impl Collector for PointAggs {
    type Fruit = PointResults;
    type Child = PointSegment;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<PointSegment> {
        let mut shapes: Vec<(String, ShapeColumn)> = Vec::new();
        let mut sources = Vec::with_capacity(self.0.len());
        for (_, a) in self.0.iter() {
            sources.push(match a.on_shapes() {
                false => Source::Points(Points::open(reader, a.field())?),
                true => match shapes.iter().position(|(f, _)| f == a.field()) {
                    Some(i) => Source::Shapes(i),
                    None => {
                        shapes.push((a.field().to_string(), ShapeColumn::open(reader, a.field())?));
                        Source::Shapes(shapes.len() - 1)
                    }
                },
            });
        }
        Ok(PointSegment {
            sources,
            decoded: (0..shapes.len()).map(|_| None).collect(),
            shapes,
            counts: empty_counts(&self.0),
            aggs: self.0.clone(),
            cells: Vec::new(),
            overflow: false,
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<PointResults>) -> tantivy::Result<PointResults> {
        let mut all = empty_counts(&self.0);
        if fruits.iter().any(|f| f.1) {
            return Err(tantivy::TantivyError::InvalidArgument(format!(
                "a shape touches more than {} cells of a grid aggregation; ask a lower precision",
                shapes::MAX_CELLS_PER_SHAPE
            )));
        }
        for fruit in fruits {
            for (into, from) in all.iter_mut().zip(fruit.0) {
                match (into, from) {
                    (Counts::Ranges(a), Counts::Ranges(b)) => {
                        a.iter_mut().zip(b).for_each(|(x, y)| *x += y)
                    }
                    (Counts::Cells(a), Counts::Cells(b)) => {
                        for (cell, n) in b {
                            *a.entry(cell).or_default() += n;
                        }
                        if a.len() > MAX_CELLS {
                            return Err(too_many_cells());
                        }
                    }
                    (Counts::Sides(a), Counts::Sides(b)) => a.merge(&b),
                    (Counts::Centroid(a, n), Counts::Centroid(b, m)) => {
                        *a = match (*a, b) {
                            (Some(x), Some(y)) => Some(x.add(y)),
                            (x, y) => x.or(y),
                        };
                        *n += m;
                    }
                    _ => unreachable!("fruits are built from the same aggregations"),
                }
            }
        }
        Ok(PointResults(all, false))
    }
}

fn too_many_cells() -> tantivy::TantivyError {
    tantivy::TantivyError::InvalidArgument(format!(
        "a grid aggregation reached {MAX_CELLS} distinct cells; ask a lower precision or smaller bounds"
    ))
}

impl SegmentCollector for PointSegment {
    type Fruit = PointResults;

    fn collect(&mut self, doc: DocId, _: Score) {
        self.decoded.iter_mut().for_each(|d| *d = None);
        for ((_, agg), (source, counts)) in self
            .aggs
            .iter()
            .zip(self.sources.iter_mut().zip(self.counts.iter_mut()))
        {
            let points = match source {
                Source::Points(points) => points,
                Source::Shapes(i) => {
                    let column = &mut self.shapes[*i].1;
                    let shape = self.decoded[*i].get_or_insert_with(|| column.get(doc));
                    if let Some(shape) = shape {
                        self.overflow |=
                            collect_shape(agg, shape, counts, &mut self.cells).is_err();
                    }
                    continue;
                }
            };
            let Some((lat, lon)) = points.get(doc) else {
                continue;
            };
            match (agg, counts) {
                (
                    PointAgg::Distance {
                        lat: olat,
                        lon: olon,
                        unit,
                        ranges,
                        ..
                    },
                    Counts::Ranges(n),
                ) => {
                    let d = arc_distance(*olat, *olon, lat, lon) / unit;
                    for (i, (_, from, to)) in ranges.iter().enumerate() {
                        if d >= *from && d < *to {
                            n[i] += 1;
                        }
                    }
                }
                (PointAgg::Grid { grid, bounds, .. }, Counts::Cells(cells)) => {
                    if bounds.is_some_and(|b| !b.contains(lat, lon)) {
                        continue;
                    }
                    let cell = grid.cell(lat, lon);
                    // Past the bound, new cells are no longer counted; the merge refuses
                    // the search.
                    if cells.len() <= MAX_CELLS || cells.contains_key(&cell) {
                        *cells.entry(cell).or_default() += 1;
                    }
                }
                _ => {}
            }
        }
    }

    fn harvest(self) -> PointResults {
        PointResults(self.counts, self.overflow)
    }
}

/// Counts one document's shape.
fn collect_shape(
    agg: &PointAgg,
    shape: &geo::Geometry<f64>,
    counts: &mut Counts,
    cells: &mut Vec<Cell>,
) -> Result<(), ()> {
    match (agg, counts) {
        (PointAgg::Grid { grid, bounds, .. }, Counts::Cells(n)) => {
            shapes::shape_cells(*grid, shape, bounds.as_ref(), cells)?;
            for cell in cells.iter() {
                if n.len() <= MAX_CELLS || n.contains_key(cell) {
                    *n.entry(*cell).or_default() += 1;
                }
            }
        }
        (PointAgg::ShapeBounds { .. }, Counts::Sides(sides)) => sides.add_geometry(shape),
        (PointAgg::ShapeCentroid { .. }, Counts::Centroid(sum, n)) => {
            *n += 1;
            if let Some(w) = Weighted::of(shape) {
                *sum = Some(sum.map_or(w, |s| s.add(w)));
            }
        }
        _ => {}
    }
    Ok(())
}

/// Elasticsearch's `Double.toString` for a range key: `100.0`, `0.5`.
pub(crate) fn java_double(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e7 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

impl PointAggs {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each aggregation's response, as Elasticsearch shapes it.
    pub fn to_json(&self, results: &PointResults) -> Map<String, Value> {
        let mut out = Map::new();
        for ((name, agg), counts) in self.0.iter().zip(&results.0) {
            let v = match (agg, counts) {
                (PointAgg::Distance { ranges, keyed, .. }, Counts::Ranges(n)) => {
                    let buckets = ranges.iter().zip(n).map(|((key, from, to), count)| {
                        let key = key.clone().unwrap_or_else(|| {
                            let end = |x: f64| {
                                if x.is_infinite() {
                                    "*".to_string()
                                } else {
                                    java_double(x)
                                }
                            };
                            format!("{}-{}", end(*from), end(*to))
                        });
                        let mut b = Map::new();
                        b.insert("key".into(), json!(key));
                        if from.is_finite() {
                            b.insert("from".into(), json!(from));
                        }
                        if to.is_finite() {
                            b.insert("to".into(), json!(to));
                        }
                        b.insert("doc_count".into(), json!(count));
                        (key, Value::Object(b))
                    });
                    if *keyed {
                        let map: Map<String, Value> = buckets
                            .map(|(k, mut b)| {
                                b.as_object_mut().map(|o| o.remove("key"));
                                (k, b)
                            })
                            .collect();
                        json!({"buckets": map})
                    } else {
                        json!({"buckets": buckets.map(|(_, b)| b).collect::<Vec<_>>()})
                    }
                }
                (PointAgg::Grid { grid, size, .. }, Counts::Cells(cells)) => {
                    let mut sorted: Vec<(&Cell, &u64)> = cells.iter().collect();
                    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
                    let buckets: Vec<Value> = sorted
                        .into_iter()
                        .take(*size)
                        .map(|(c, n)| json!({"key": grid.key(*c), "doc_count": n}))
                        .collect();
                    json!({"buckets": buckets})
                }
                (PointAgg::ShapeBounds { wrap, .. }, Counts::Sides(sides)) => {
                    shapes::bounds_json(sides, *wrap)
                }
                (PointAgg::ShapeCentroid { .. }, Counts::Centroid(sum, n)) => {
                    shapes::centroid_json(sum.as_ref(), *n)
                }
                _ => Value::Null,
            };
            out.insert(name.clone(), v);
        }
        out
    }
}
