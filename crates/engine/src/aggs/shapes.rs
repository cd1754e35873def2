//! Aggregations over geo_shape fields, beside the geo_point ones in `points`: the grid cells
//! a shape intersects (`geohash_grid`, `geotile_grid`, `geohex_grid` count a document in
//! every cell its shape touches, as Elasticsearch's shape tilers do), `geo_bounds` (the
//! extremes of every vertex) and `geo_centroid` (Elasticsearch's weighted centroid of the
//! shapes' highest dimension).

use crate::geo::column::{Sides, Weighted};
use crate::geo::grid::{Cell, Grid};
use crate::geo::shape::Bounds;
use geo::{BoundingRect, Geometry, Intersects, Rect};
use serde_json::{json, Value};
use std::collections::HashSet;

/// The most cells one document's shape may be counted in.
pub const MAX_CELLS_PER_SHAPE: usize = 1 << 18;

/// The cells of `grid` that the shape intersects, within `bounds` when the aggregation has
/// them; Err when there would be more than [`MAX_CELLS_PER_SHAPE`].
pub fn shape_cells(
    grid: Grid,
    shape: &Geometry<f64>,
    bounds: Option<&Bounds>,
    out: &mut Vec<Cell>,
) -> Result<(), ()> {
    out.clear();
    let Some(rect) = shape.bounding_rect() else {
        return Ok(());
    };
    let limit = bounds.map(|b| crate::geo::geometry::envelope_geometry(b));
    let keep = |cell: Cell| -> bool {
        let g = grid.cell_geometry(cell);
        g.intersects(shape) && limit.as_ref().is_none_or(|l| l.intersects(&g))
    };
    match grid {
        Grid::Geohex(_) => hex_cells(grid, shape, &keep, out),
        _ => box_cells(grid, rect, &keep, out),
    }
}

/// Geohash and geotile cells: every cell of the grid over the shape's box, tested.
fn box_cells(
    grid: Grid,
    rect: Rect<f64>,
    keep: &dyn Fn(Cell) -> bool,
    out: &mut Vec<Cell>,
) -> Result<(), ()> {
    let (min, max) = (rect.min(), rect.max());
    // Column and row ranges, and each (column, row)'s cell.
    let (columns, rows, cell_at): (_, _, Box<dyn Fn(u64, u64) -> Cell>) = match grid {
        Grid::Geotile(_) => {
            let (nw, se) = (grid.cell(max.y, min.x).0, grid.cell(min.y, max.x).0);
            let xy = |c: u64| (c >> 32, c & 0xffff_ffff);
            let ((x0, y0), (x1, y1)) = (xy(nw), xy(se));
            (
                x0..=x1,
                y0..=y1,
                Box::new(|x: u64, y: u64| Cell((x << 32) | y)),
            )
        }
        Grid::Geohash(p) => {
            let (lon_bits, lat_bits) = ((5 * p).div_ceil(2), 5 * p / 2);
            let (nx, ny) = ((1u64 << lon_bits) as f64, (1u64 << lat_bits) as f64);
            let index = |v: f64, lo: f64, span: f64, n: f64| {
                (((v - lo) / span * n).floor()).clamp(0.0, n - 1.0) as u64
            };
            let (x0, x1) = (
                index(min.x, -180.0, 360.0, nx),
                index(max.x, -180.0, 360.0, nx),
            );
            let (y0, y1) = (
                index(min.y, -90.0, 180.0, ny),
                index(max.y, -90.0, 180.0, ny),
            );
            let center = move |x: u64, y: u64| {
                let lon = -180.0 + (x as f64 + 0.5) * 360.0 / nx;
                let lat = -90.0 + (y as f64 + 0.5) * 180.0 / ny;
                grid.cell(lat, lon)
            };
            (x0..=x1, y0..=y1, Box::new(center))
        }
        Grid::Geohex(_) => unreachable!("H3 cells are walked, not ranged"),
    };
    let count = (columns.end() + 1 - columns.start()).saturating_mul(rows.end() + 1 - rows.start());
    if count > MAX_CELLS_PER_SHAPE as u64 * 4 {
        return Err(());
    }
    for x in columns {
        for y in rows.clone() {
            let cell = cell_at(x, y);
            if keep(cell) {
                out.push(cell);
            }
        }
    }
    match out.len() > MAX_CELLS_PER_SHAPE {
        true => Err(()),
        false => Ok(()),
    }
}

/// H3 cells: from the cells of the shape's vertices, outwards through neighbours that the
/// shape still touches (the cells a connected shape touches are connected).
fn hex_cells(
    grid: Grid,
    shape: &Geometry<f64>,
    keep: &dyn Fn(Cell) -> bool,
    out: &mut Vec<Cell>,
) -> Result<(), ()> {
    use geo::CoordsIter;
    let mut seen: HashSet<Cell> = HashSet::new();
    let mut todo: Vec<Cell> = Vec::new();
    for c in shape.coords_iter() {
        let cell = grid.cell(c.y, c.x);
        if seen.insert(cell) {
            todo.push(cell);
        }
    }
    while let Some(cell) = todo.pop() {
        if seen.len() > MAX_CELLS_PER_SHAPE * 2 {
            return Err(());
        }
        if !keep(cell) {
            continue;
        }
        out.push(cell);
        let Ok(index) = h3o::CellIndex::try_from(cell.0) else {
            continue;
        };
        for n in index.grid_disk::<Vec<_>>(1) {
            let n = Cell(u64::from(n));
            if seen.insert(n) {
                todo.push(n);
            }
        }
    }
    Ok(())
}

/// `geo_bounds` of shapes, shaped as Elasticsearch answers it.
pub fn bounds_json(sides: &Sides, wrap: bool) -> Value {
    if sides.top.is_infinite() {
        return json!({});
    }
    let (left, right) = crate::aggs::geo::pick_sides(
        (sides.neg_left, sides.neg_right),
        (sides.pos_left, sides.pos_right),
        wrap,
    );
    json!({"bounds": {"top_left": {"lat": sides.top, "lon": left},
                      "bottom_right": {"lat": sides.bottom, "lon": right}}})
}

/// `geo_centroid` of shapes: the weighted mean of the highest dimension's centroids, and
/// the count of documents with a shape.
pub fn centroid_json(sum: Option<&Weighted>, count: u64) -> Value {
    match sum.filter(|w| w.weight > 0.0 && count > 0) {
        None => json!({"count": count}),
        Some(w) => json!({"location": {"lat": w.sum_lat / w.weight, "lon": w.sum_lon / w.weight},
                          "count": count}),
    }
}
