//! A document's geo_shape values indexed: each shape's geometry in the field's bytes column
//! (`geo::codec`) and its box in the four box columns (`geo::column::SIDES`).

use crate::geo::codec;
use crate::geo::column::SIDES;
use crate::geo::geometry::parse_indexed;
use crate::mapping::MappedField;
use geo::{BoundingRect, Geometry};
use serde_json::Value;
use tantivy::TantivyDocument;

/// The most shapes one document's field may hold.
const MAX_VALUES: usize = 10_000;

/// Indexes a document's value of a geo_shape field: one shape, or a list of them.
pub(super) fn add_shape(
    doc: &mut TantivyDocument,
    f: &MappedField,
    v: &Value,
) -> Result<(), String> {
    let shapes: Vec<&Value> = match v {
        Value::Null => return Ok(()),
        Value::Array(items) => items.iter().filter(|i| !i.is_null()).collect(),
        one => vec![one],
    };
    if shapes.len() > MAX_VALUES {
        return Err(format!("more than {MAX_VALUES} shapes in one document"));
    }
    for shape in shapes {
        let g = parse_indexed(shape).map_err(|e| {
            format!(
                "failed to parse field [{}] of type [geo_shape]: {e}",
                f.name
            )
        })?;
        let Some(rect) = g.bounding_rect() else {
            continue;
        };
        doc.add_bytes(f.field, &codec::encode(&g));
        let sides = [rect.min().x, rect.max().x, rect.min().y, rect.max().y];
        for (side, x) in SIDES.iter().zip(sides) {
            let column = doc_field(f, side);
            doc.add_f64(column, x);
        }
    }
    Ok(())
}

/// A box column of the field: `second` is the first, the others follow it (see `mapping`).
fn doc_field(f: &MappedField, side: &str) -> tantivy::schema::Field {
    let at = SIDES.iter().position(|s| *s == side).expect("a side") as u32;
    let first = f.second.expect("a geo_shape field has its box columns");
    tantivy::schema::Field::from_field_id(first.field_id() + at)
}

/// A shape as a script reads it (`doc['shape'].value`): its box, weighted centroid and
/// highest dimension.
pub(super) fn script_value(g: &Geometry<f64>) -> Result<crate::painless::ShapeVal, String> {
    let (Some(rect), Some(w)) = (g.bounding_rect(), crate::geo::column::Weighted::of(g)) else {
        return Err("an empty shape has no value".into());
    };
    Ok(crate::painless::ShapeVal {
        west: rect.min().x,
        east: rect.max().x,
        south: rect.min().y,
        north: rect.max().y,
        centroid: (w.sum_lat / w.weight, w.sum_lon / w.weight),
        dimension: ["POINT", "LINE", "POLYGON"][w.dimension.min(2) as usize],
    })
}
