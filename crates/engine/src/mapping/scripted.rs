//! Index-time scripts: a mapped field with a `script` computes its values when a document
//! is indexed, from the document's other fields (`doc['f']`, read from its source by each
//! field's type) through `emit`, as Elasticsearch's scripted fields do. A document may not
//! bring such a field's value itself.

use super::values::add_value;
use super::{lookup, read_date, FieldType, MappedField, Mapping};
use crate::painless::{Host, Script, Val};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Elasticsearch's bound on the values one script may emit for a document.
const MAX_EMITTED: usize = 100;

/// Types Elasticsearch lets a mapped field compute with a script.
const SCRIPTED_TYPES: [FieldType; 7] = [
    FieldType::Boolean,
    FieldType::Ip,
    FieldType::Date,
    FieldType::Double,
    FieldType::GeoPoint,
    FieldType::Keyword,
    FieldType::Long,
];

#[derive(Debug, Clone)]
pub(super) struct Scripted {
    field: usize,
    script: Script,
    /// `on_script_error: continue`: a failing script leaves the field empty.
    keep_going: bool,
    /// A runtime field's: it shadows a value the source has.
    runtime: bool,
}

/// The declared scripts (field name, definition), checked and parsed once.
pub(super) fn resolve(
    declared: &[(String, Value)],
    by_name: &HashMap<String, usize>,
    fields: &[MappedField],
) -> Result<Vec<Scripted>, String> {
    declared
        .iter()
        .map(|(name, def)| {
            let field = by_name[name];
            let f = &fields[field];
            if !SCRIPTED_TYPES.contains(&f.kind) {
                return Err(format!("[{name}]: a field of type [{}] takes no script (Elasticsearch runs index-time scripts on boolean, date, double, geo_point, ip, keyword and long fields)", def["type"].as_str().unwrap_or_default()));
            }
            let keep_going = match def.get("on_script_error").and_then(Value::as_str) {
                None | Some("fail") => false,
                Some("continue") => true,
                Some(other) => {
                    return Err(format!(
                        "[{name}]: `on_script_error` is fail or continue, got [{other}]"
                    ))
                }
            };
            let script = Script::from_request(&def["script"]).map_err(|e| format!("[{name}]: {e}"))?;
            Ok(Scripted {
                field,
                script,
                keep_going,
                runtime: def.get(super::runtime::RUNTIME) == Some(&Value::Bool(true)),
            })
        })
        .collect()
}

/// The document's own values read by each field's type, and what the script emits.
struct SourceDoc<'a> {
    mapping: &'a Mapping,
    source: &'a Map<String, Value>,
    /// The scripted field `emit` gives values to; None where a script only returns one
    /// (`script_fields`).
    target: Option<&'a MappedField>,
    emitted: Vec<Value>,
}

impl SourceDoc<'_> {
    fn value(&self, f: &MappedField, v: &Value) -> Result<Option<Val>, String> {
        Ok(Some(match (f.kind, v) {
            (_, Value::Null) => return Ok(None),
            (FieldType::Keyword | FieldType::Ip, v) => Val::Str(super::plain(v)),
            (FieldType::Long, v) => Val::Int(super::as_i64(v)?),
            (FieldType::Double, v) => Val::Float(super::as_f64(v)?),
            (FieldType::Boolean, Value::Bool(b)) => Val::Bool(*b),
            (FieldType::Boolean, v) => Val::Bool(v.as_str() == Some("true")),
            (FieldType::Date, v) => Val::Date(read_date(f, v)?.into_timestamp_millis()),
            (FieldType::GeoPoint, v) => {
                let (lon, lat) = super::geo_point(v)?;
                Val::Geo(lat, lon)
            }
            (FieldType::GeoShape, v) => Val::Shape(Box::new(super::shapes::script_value(
                &crate::geo::geometry::parse_indexed(v)?,
            )?)),
            (FieldType::Text, _) => {
                return Err(format!(
                    "Text fields are not optimised for operations that require per-document field data: [{}]",
                    f.name
                ))
            }
            (kind, _) => return Err(format!("`doc['{}']` of a {kind:?} field is not in the engine's Painless subset", f.name)),
        }))
    }
}

impl Host for SourceDoc<'_> {
    fn doc(&mut self, field: &str) -> Result<Val, String> {
        let Some(f) = self.mapping.field(field) else {
            return Err(format!("No field found for [{field}] in mapping"));
        };
        let mut raw = Vec::new();
        lookup(self.source, &f.path, &mut raw);
        let mut out = Vec::new();
        for v in raw {
            // A shape's array is its coordinates only inside an object; at the top it is a
            // list of values, as for every other type.
            match v {
                Value::Array(items)
                    if !(f.kind == FieldType::GeoPoint
                        && items.first().is_some_and(Value::is_number)) =>
                {
                    for item in items {
                        out.extend(self.value(&f, item)?);
                    }
                }
                one => out.extend(self.value(&f, one)?),
            }
        }
        Ok(Val::Doc(out))
    }

    fn maps(&self, field: &str) -> bool {
        self.mapping.field(field).is_some()
    }

    fn call(&mut self, name: &str, args: &[Val]) -> Option<Result<Val, String>> {
        let target = self.target.filter(|_| name == "emit")?;
        if self.emitted.len() >= MAX_EMITTED {
            return Some(Err(format!("Runtime field [{}] is emitting [{}] values while the maximum number of values allowed is [{MAX_EMITTED}]", target.name, MAX_EMITTED + 1)));
        }
        let v = match (target.kind, args) {
            (FieldType::GeoPoint, [lat, lon]) => match (lat.to_json(), lon.to_json()) {
                (Ok(lat), Ok(lon)) => json!({"lat": lat, "lon": lon}),
                (Err(e), _) | (_, Err(e)) => return Some(Err(e.to_string())),
            },
            (_, [one]) => match one.to_json() {
                Ok(v) => v,
                Err(e) => return Some(Err(e.to_string())),
            },
            _ => {
                return Some(Err(format!(
                    "`emit` for a {:?} field takes one value",
                    target.kind
                )))
            }
        };
        self.emitted.push(v);
        Some(Ok(Val::Null))
    }
}

impl Mapping {
    /// A script's value on a document's source: `doc['f']` read by each field's type, and
    /// `params._source` the source itself (a hit's `script_fields`).
    pub(crate) fn run_on_source(
        &self,
        script: &Script,
        source: &Map<String, Value>,
    ) -> Result<Val, String> {
        let mut host = SourceDoc {
            mapping: self,
            source,
            target: None,
            emitted: Vec::new(),
        };
        let whole = Val::from_json(&Value::Object(source.clone()));
        script.run(&[("params._source".to_string(), whole)], &mut host)
    }

    /// Whether the field's values come from a script (not from the source).
    pub(super) fn is_scripted(&self, field: usize) -> bool {
        self.scripted.iter().any(|s| s.field == field)
    }

    /// Refuses a document that brings a scripted field's value; then indexes what each
    /// script emits.
    pub(super) fn run_scripts(
        &self,
        source: &Map<String, Value>,
        doc: &mut tantivy::TantivyDocument,
    ) -> Result<(), String> {
        for s in self.scripted.iter() {
            let f = &self.fields[s.field];
            let mut own = Vec::new();
            lookup(source, &f.path, &mut own);
            if !s.runtime && own.iter().any(|v| !v.is_null()) {
                return Err(format!("failed to parse field [{}]: Cannot index data directly into a field with a [script] parameter", f.name));
            }
            let mut host = SourceDoc {
                mapping: self,
                source,
                target: Some(f),
                emitted: Vec::new(),
            };
            match s.script.run(&[], &mut host) {
                Ok(_) => {}
                Err(_) if s.keep_going => continue,
                Err(e) => return Err(format!("Error executing script on field [{}]: {e}", f.name)),
            }
            for v in &host.emitted {
                add_value(doc, f, v).map_err(|m| format!("field `{}`: {m}", f.name))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
