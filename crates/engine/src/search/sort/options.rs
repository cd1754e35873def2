//! A sort entry's options as Elasticsearch reads them, refused by name where the engine would
//! sort differently: a field's, a date's shown values, and `_geo_distance`.

use super::{By, DateShown, SortKey};
use crate::mapping::{FieldType, Mapping};
use serde_json::Value;

/// A field sort's options: `order`; `missing: _last` and `mode` as Elasticsearch's defaults
/// for the order (`min` ascending, `max` descending), which is how the engine sorts; and
/// `unmapped_type` on a field the mapping has, where it changes nothing. Anything else would
/// sort differently, and is refused naming it.
pub(super) fn check_options(
    name: &str,
    opts: &serde_json::Map<String, Value>,
    mapping: &Mapping,
) -> Result<(), String> {
    for (k, v) in opts {
        let runs = match k.as_str() {
            "order" => true,
            "missing" => v == "_last",
            "mode" => v == "min" || v == "max",
            "unmapped_type" => mapping.field(name).is_some(),
            // A date's values shown formatted, or at another resolution (the order is the same).
            "format" | "numeric_type" => {
                mapping
                    .field(name)
                    .is_some_and(|f| f.kind == FieldType::Date)
                    && (k == "format" || ["date", "date_nanos"].contains(&v.as_str().unwrap_or("")))
            }
            // Nested objects are flattened here: a nested sort over all of a path's objects
            // (no `filter`) sees the same values, and `min`/`max` picks the same one.
            "nested" => {
                v.as_object().is_some_and(|n| n.keys().all(|k| k == "path"))
                    && v.get("path")
                        .and_then(Value::as_str)
                        .is_some_and(|p| name.starts_with(&format!("{p}.")))
            }
            _ => false,
        };
        if !runs {
            return Err(format!(
                "sort `{name}`: option `{k}: {v}` is not run by the embedded engine (it runs `order`, `missing: _last`, `mode` min or max, `nested` with its `path` alone, `unmapped_type` on a mapped field, and on dates `format` and `numeric_type` date or date_nanos)"
            ));
        }
    }
    Ok(())
}

/// How a date sort key's values are shown: by its `format`, at its `numeric_type`'s
/// resolution, or at the field's own (nanoseconds for `date_nanos`).
pub(super) fn date_shown(
    name: &str,
    opts: &serde_json::Map<String, Value>,
    mapping: &Mapping,
) -> Result<DateShown, String> {
    let Some(field) = mapping.field(name).filter(|f| f.kind == FieldType::Date) else {
        return Ok(DateShown::Millis);
    };
    if let Some(format) = opts.get("format") {
        let text = format
            .as_str()
            .ok_or_else(|| format!("sort `{name}`: `format` is a date format, got {format}"))?;
        return crate::mapping::dates::DateFormats::parse(text)
            .map(DateShown::Formatted)
            .map_err(|why| format!("sort `{name}`: {why}"));
    }
    Ok(match opts.get("numeric_type").and_then(Value::as_str) {
        Some("date_nanos") => DateShown::Nanos,
        Some("date") => DateShown::Millis,
        _ if field.nanos => DateShown::Nanos,
        _ => DateShown::Millis,
    })
}

/// `{"_geo_distance": {"<geo_point field>": point, "order": ..., "unit": ...}}`: one origin,
/// arc distance, the nearest point of a document (`mode: min`).
pub(super) fn geo_distance_key(e: &Value, mapping: &Mapping) -> Result<SortKey, String> {
    let opts = e["_geo_distance"]
        .as_object()
        .ok_or("`_geo_distance` takes an object: {\"<field>\": point, \"order\": ...}")?;
    const OPTIONS: [&str; 6] = [
        "order",
        "unit",
        "mode",
        "distance_type",
        "ignore_unmapped",
        "nested",
    ];
    let mut field = None;
    for (k, v) in opts {
        if !OPTIONS.contains(&k.as_str()) {
            if field.is_some() {
                return Err("`_geo_distance` sorts from one field's origin".into());
            }
            field = Some((k, v));
        }
    }
    let (name, origin) = field.ok_or("`_geo_distance` names no geo_point field")?;
    let column = match mapping.field(name) {
        Some(f) if f.kind == FieldType::GeoPoint => f.name.clone(),
        // As in Elasticsearch, an unmapped field with `ignore_unmapped` sorts every document
        // as having no point: at "Infinity".
        None if opts.get("ignore_unmapped") == Some(&Value::Bool(true)) => name.clone(),
        _ => {
            return Err(format!(
                "cannot sort on `_geo_distance` of `{name}`: no geo_point field of that name"
            ))
        }
    };
    let origin = match origin {
        Value::Array(a) if a.len() == 1 => &a[0],
        Value::Array(a) if a.first().is_some_and(Value::is_array) => {
            return Err(
                "`_geo_distance` from several origins is not run by the embedded engine".into(),
            )
        }
        one => one,
    };
    let (lon, lat) =
        crate::mapping::geo_point(origin).map_err(|m| format!("`_geo_distance` origin: {m}"))?;
    let unit = match opts.get("unit").and_then(Value::as_str) {
        None => 1.0,
        Some(u) => crate::geo::distance::distance_meters(&format!("1{u}"))?,
    };
    match opts.get("mode").and_then(Value::as_str) {
        None | Some("min") => {}
        Some(m) => return Err(format!("`_geo_distance` mode `{m}` is not run by the embedded engine (a document's nearest point, `min`)")),
    }
    if let Some(t) = opts
        .get("distance_type")
        .and_then(Value::as_str)
        .filter(|t| *t != "arc")
    {
        return Err(format!(
            "`_geo_distance` distance_type `{t}` is not run by the embedded engine (`arc`)"
        ));
    }
    let desc = match opts.get("order").and_then(Value::as_str) {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(o) => {
            return Err(format!(
                "sort `_geo_distance`: order is \"asc\" or \"desc\", got \"{o}\""
            ))
        }
    };
    Ok(SortKey {
        by: By::GeoDistance,
        name: column,
        desc,
        geo: Some(((lat, lon), unit)),
        dates: None,
        shown: DateShown::Millis,
        max: false,
        script: None,
    })
}

/// `{"_script": {"type": "number", "script": ..., "order": ...}}`: each document's value of a
/// Painless script (the engine's subset, on its doc values).
pub(super) fn script_key(
    e: &Value,
    mapping: &Mapping,
    errors: crate::dsl::doc_script::ErrorSlot,
) -> Result<SortKey, String> {
    let opts = e["_script"]
        .as_object()
        .ok_or("`_script` takes an object: {\"type\": \"number\", \"script\": ...}")?;
    if let Some(k) = opts
        .keys()
        .find(|k| !matches!(k.as_str(), "type" | "script" | "order" | "mode"))
    {
        return Err(format!(
            "`_script` sort option `{k}` is not run by the embedded engine"
        ));
    }
    match opts.get("type").and_then(Value::as_str) {
        Some("number") => {}
        Some(other) => {
            return Err(format!(
            "a `_script` sort of type `{other}` is not run by the embedded engine (type number is)"
        ))
        }
        None => return Err("a `_script` sort needs its `type`".into()),
    }
    let script = crate::painless::Script::from_request(
        opts.get("script")
            .ok_or("a `_script` sort needs its `script`")?,
    )?;
    let compiled = crate::dsl::doc_script::DocScript::compile(
        std::sync::Arc::new(script),
        mapping,
        crate::dsl::doc_script::Use::Value,
        errors,
    )?;
    let desc = match opts.get("order").and_then(Value::as_str) {
        None | Some("asc") => false,
        Some("desc") => true,
        Some(other) => {
            return Err(format!(
                "sort `_script`: order is \"asc\" or \"desc\", got \"{other}\""
            ))
        }
    };
    Ok(SortKey {
        by: By::Script,
        name: "_script".into(),
        desc,
        geo: None,
        dates: None,
        shown: DateShown::Millis,
        max: false,
        script: Some(std::sync::Arc::new(compiled)),
    })
}
