//! A document's values added to its tantivy document, by each field's type.

use super::{as_f64, as_i64, geo_point, plain, read_date, read_ip, FieldType, MappedField};
use serde_json::Value;
use tantivy::TantivyDocument;

pub(super) fn add_value(
    doc: &mut TantivyDocument,
    f: &MappedField,
    v: &Value,
) -> Result<(), String> {
    if let Some(spec) = &f.vector {
        if v.is_null() {
            return Ok(());
        }
        let bytes: Vec<u8> = spec
            .read(&f.name, v)?
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        doc.add_bytes(f.field, &bytes);
        return Ok(());
    }
    if f.kind == FieldType::GeoPoint {
        let (lon, lat) = geo_point(v)?;
        doc.add_f64(f.field, lon);
        doc.add_f64(f.second.expect("geo_point has a latitude field"), lat);
        return Ok(());
    }
    if f.kind == FieldType::GeoShape {
        return super::shapes::add_shape(doc, f, v);
    }
    if let FieldType::Range(_) = f.kind {
        return match v {
            Value::Null => Ok(()),
            _ => crate::mapping::ranges::add_value(doc, f, v),
        };
    }
    match v {
        Value::Null => Ok(()),
        Value::Array(items) => items.iter().try_for_each(|item| add_value(doc, f, item)),
        _ => add_scalar(doc, f, v),
    }
}

fn add_scalar(doc: &mut TantivyDocument, f: &MappedField, v: &Value) -> Result<(), String> {
    match f.kind {
        FieldType::Keyword if f.ignore_above.is_some_and(|n| plain(v).chars().count() > n) => {}
        FieldType::Text | FieldType::Keyword => match v {
            Value::String(s) => doc.add_text(f.field, s),
            Value::Number(n) => doc.add_text(f.field, n.to_string()),
            Value::Bool(b) => doc.add_text(f.field, if *b { "true" } else { "false" }),
            other => return Err(format!("expected a string, got {other}")),
        },
        FieldType::Long => doc.add_i64(f.field, as_i64(v)?),
        FieldType::Double => doc.add_f64(f.field, as_f64(v)?),
        FieldType::Boolean => match v {
            Value::Bool(b) => doc.add_bool(f.field, *b),
            Value::String(s) if s == "true" || s == "false" => doc.add_bool(f.field, s == "true"),
            other => return Err(format!("expected a boolean, got {other}")),
        },
        FieldType::Date => doc.add_date(f.field, read_date(f, v)?),
        FieldType::Ip => doc.add_ip_addr(f.field, read_ip(v)?),
        FieldType::GeoPoint
        | FieldType::Range(_)
        | FieldType::DenseVector
        | FieldType::GeoShape
        | FieldType::Percolator => {
            unreachable!("handled by add_value")
        }
    }
    Ok(())
}
