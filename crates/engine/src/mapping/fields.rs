//! The fields a mapping's `properties` declare, each added to the tantivy schema by its
//! type: objects walked, aliases, `copy_to`, `flattened`, multi-fields and index-time
//! scripts noted for the mapping to resolve once every field is known.

use super::dynamic::Mode;
use super::{Declared, FieldType, MappedField, UnsupportedType};
use serde_json::Map;
use serde_json::Value;
use std::sync::Arc;
use tantivy::schema::{FAST, INDEXED, STRING, TEXT};

pub(super) fn collect(
    props: &Map<String, Value>,
    prefix: &mut Vec<String>,
    builder: &mut tantivy::schema::SchemaBuilder,
    out: &mut Vec<MappedField>,
    declared: &mut Declared,
) -> Result<(), UnsupportedType> {
    for (name, def) in props {
        // Elasticsearch's rule (tantivy would panic on an empty name); and tantivy's own: a
        // whole name may not start with `-` (`reactions.-1` is fine, a top-level `-1` not).
        let empty = name.trim().is_empty() || name.split('.').any(str::is_empty);
        if empty || (prefix.is_empty() && name.starts_with('-')) {
            return Err(UnsupportedType {
                field: name.clone(),
                kind: String::new(),
                why: Some(if name.trim().is_empty() {
                    "field name cannot be an empty string".into()
                } else if empty {
                    "a field name may not hold an empty part between dots".into()
                } else {
                    "a top-level field name starting with `-` is not supported by the embedded engine (tantivy's rule)".into()
                }),
            });
        }
        prefix.push(name.clone());
        let dotted = prefix.join(".");
        if let Some(copy_to) = def.get("copy_to") {
            let targets = match copy_to {
                Value::String(t) => vec![t.clone()],
                Value::Array(a) => a
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                _ => Vec::new(),
            };
            declared.copy_to.push((dotted.clone(), targets));
        }
        if def.get("time_series_dimension") == Some(&Value::Bool(true)) {
            declared.dimensions.push(dotted.clone());
        }
        if def.get("script").is_some() {
            declared.scripts.push((dotted.clone(), def.clone()));
        }
        let kind = def.get("type").and_then(Value::as_str);
        let is_object = matches!(kind, None | Some("object" | "nested"));
        if is_object {
            if def.get("enabled") == Some(&Value::Bool(false)) {
                declared.objects.push((dotted.clone(), Mode::False));
            } else if let Some(mode) = def.get("dynamic") {
                declared
                    .objects
                    .push((dotted.clone(), Mode::parse(mode, &dotted)?));
            }
        }
        if kind == Some("alias") {
            let path = def.get("path").and_then(Value::as_str).unwrap_or_default();
            declared.aliases.push((dotted, path.to_string()));
        } else if let Some(sub) = def.get("properties").and_then(Value::as_object) {
            collect(sub, prefix, builder, out, declared)?;
        } else if is_object {
            // An object with no properties: its fields are mapped as documents bring them.
        } else if kind == Some("flattened") {
            let mut f = add_field(
                builder,
                &dotted,
                prefix,
                &serde_json::json!({"type": "keyword"}),
            )?;
            f.ignore_above = def
                .get("ignore_above")
                .and_then(Value::as_u64)
                .map(|n| n as usize);
            declared.flattened.push(dotted.clone());
            out.push(f);
        } else {
            out.push(add_field(builder, &dotted, prefix, def)?);
            // Multi-fields: the same value indexed again under `<name>.<sub>` (`name.raw`).
            if let Some(subs) = def.get("fields").and_then(Value::as_object) {
                for (sub, subdef) in subs {
                    out.push(add_field(
                        builder,
                        &format!("{dotted}.{sub}"),
                        prefix,
                        subdef,
                    )?);
                }
            }
        }
        prefix.pop();
    }
    Ok(())
}

/// One field of the schema, named `name`, reading the value at `path`.
fn add_field(
    builder: &mut tantivy::schema::SchemaBuilder,
    name: &str,
    path: &[String],
    def: &Value,
) -> Result<MappedField, UnsupportedType> {
    let kind_name = def.get("type").and_then(Value::as_str).unwrap_or("object");
    let kind = FieldType::parse(kind_name).ok_or_else(|| UnsupportedType {
        field: name.to_string(),
        kind: kind_name.to_string(),
        why: None,
    })?;
    let nanos = kind_name == "date_nanos";
    let dates = match (kind, def.get("format").and_then(Value::as_str)) {
        (
            FieldType::Date | FieldType::Range(crate::mapping::ranges::RangeOf::Date),
            Some(format),
        ) => Some(
            crate::mapping::dates::DateFormats::parse(format).map_err(|why| UnsupportedType {
                field: name.to_string(),
                kind: kind_name.to_string(),
                why: Some(why),
            })?,
        ),
        (FieldType::Date | FieldType::Range(crate::mapping::ranges::RangeOf::Date), None) => {
            Some(crate::mapping::dates::DateFormats::default())
        }
        _ => None,
    };
    // Keywords are fast fields too: Elasticsearch aggregates and sorts on their doc values.
    let (field, second) = match kind {
        FieldType::Text => (builder.add_text_field(name, TEXT), None),
        FieldType::Keyword => (builder.add_text_field(name, STRING | FAST), None),
        FieldType::Long => (builder.add_i64_field(name, INDEXED | FAST), None),
        FieldType::Double => (builder.add_f64_field(name, INDEXED | FAST), None),
        FieldType::Boolean => (builder.add_bool_field(name, INDEXED | FAST), None),
        // Elasticsearch keeps a date's milliseconds (a date_nanos' nanoseconds); tantivy's
        // default column keeps seconds.
        FieldType::Date => (
            builder.add_date_field(
                name,
                tantivy::schema::DateOptions::from(INDEXED | FAST).set_precision(match nanos {
                    true => tantivy::schema::DateTimePrecision::Nanoseconds,
                    false => tantivy::schema::DateTimePrecision::Milliseconds,
                }),
            ),
            None,
        ),
        FieldType::Ip => (builder.add_ip_addr_field(name, INDEXED | FAST), None),
        FieldType::Range(of) => {
            let (lo, hi) = of.add_fields(builder, name);
            (lo, Some(hi))
        }
        FieldType::GeoPoint => (
            builder.add_f64_field(&format!("{name}.lon"), INDEXED | FAST),
            Some(builder.add_f64_field(&format!("{name}.lat"), INDEXED | FAST)),
        ),
        FieldType::DenseVector => (builder.add_bytes_field(name, FAST), None),
        // `second` is the first of the four box columns, made one after another.
        // `second` holds the query's extracted terms.
        FieldType::Percolator => {
            let extracted = builder.add_text_field(&format!("{name}.extracted"), STRING);
            (builder.add_bytes_field(name, FAST), Some(extracted))
        }
        FieldType::GeoShape => {
            let sides = crate::geo::column::SIDES
                .map(|side| builder.add_f64_field(&format!("{name}.{side}"), FAST));
            (builder.add_bytes_field(name, FAST), Some(sides[0]))
        }
    };
    let vector = match kind {
        FieldType::DenseVector => Some(Arc::new(
            crate::vector::spec::VectorSpec::parse(def).map_err(|why| UnsupportedType {
                field: name.to_string(),
                kind: kind_name.to_string(),
                why: Some(why),
            })?,
        )),
        _ => None,
    };
    Ok(MappedField {
        name: name.to_string(),
        path: path.to_vec(),
        kind,
        field,
        second,
        dates,
        json_path: None,
        ignore_above: def
            .get("ignore_above")
            .and_then(Value::as_u64)
            .map(|n| n as usize),
        stored: def.get("store") == Some(&Value::Bool(true)),
        vector,
        nanos,
    })
}
