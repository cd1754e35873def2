//! What a search's fetch phase adds to each hit besides its `_source`: `fields` (and
//! `docvalue_fields`), each mapped field's values read from the source by its type, and
//! `highlight`, the matching terms of text and keyword fields marked in fragments of their
//! values. Both are compiled with the search and computed for every hit returned, in races as
//! in `runner serve`, so a race measures the work they ask for.

use crate::mapping::as_f64;
use crate::mapping::as_i64;
use crate::mapping::read_date;
use crate::mapping::FieldType;
use crate::mapping::MappedField;
use crate::mapping::Mapping;
use serde_json::{json, Map, Value};
use tantivy::query::Query;

/// The fetch phase's extras for one search.
#[derive(Clone, Default)]
pub struct FetchPlan {
    /// (name shown, field) per requested field, in request order.
    fields: Vec<(String, MappedField)>,
    highlight: Option<highlight::Highlight>,
    /// What each hit shows of its `_source`.
    pub source: crate::search::source::SourceFilter,
    /// Each hit's `_version` (`version: true`), and its `_seq_no` and `_primary_term`
    /// (`seq_no_primary_term: true`).
    pub version: bool,
    pub seq_no: bool,
    /// The search's `percolate` queries, whose matched slots and highlighted documents
    /// each hit shows; the highlight then applies to the percolated documents.
    percolates: Vec<std::sync::Arc<crate::dsl::percolate::Percolated>>,
    percolate_highlight: Option<Value>,
    script_fields: Option<script_fields::ScriptFields>,
    /// The inner hits of the query's nested queries.
    pub inner_hits: Vec<crate::dsl::nested::InnerHitsPlan>,
}

impl FetchPlan {
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
            && self.highlight.is_none()
            && self.percolates.is_empty()
            && self.script_fields.is_none()
    }

    pub fn compile(
        body: &Value,
        mapping: &Mapping,
        index: &tantivy::Index,
        query: &dyn Query,
    ) -> Result<FetchPlan, String> {
        let flag = |key: &str| match body.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => Err(format!("`{key}` is true or false, got {other}")),
        };
        let mut plan = FetchPlan {
            source: crate::search::source::SourceFilter::parse(body.get("_source"))?,
            version: flag("version")?,
            seq_no: flag("seq_no_primary_term")?,
            ..FetchPlan::default()
        };
        for key in ["fields", "docvalue_fields"] {
            let Some(list) = body.get(key) else { continue };
            let list = list
                .as_array()
                .ok_or_else(|| format!("`{key}` is a list of field names"))?;
            for item in list {
                let pattern = match item {
                    Value::String(s) => s.as_str(),
                    Value::Object(o) => {
                        if let Some(k) = o.keys().find(|k| k.as_str() != "field") {
                            let value = &o[k];
                            if k == "format"
                                && value.as_str().is_some_and(|f| f.starts_with("mvt("))
                            {
                                return Err(format!("`{key}` format {value} (a Mapbox vector tile) is not run by the embedded engine"));
                            }
                            return Err(format!("`{key}` option `{k}` is not run by the embedded engine (field names only)"));
                        }
                        o.get("field")
                            .and_then(Value::as_str)
                            .ok_or_else(|| format!("`{key}` entries name a `field`"))?
                    }
                    other => return Err(format!("`{key}`: {other} is not a field name")),
                };
                for (name, f) in matching(mapping, pattern) {
                    if !plan.fields.iter().any(|(n, _)| *n == name) {
                        plan.fields.push((name, f));
                    }
                }
            }
        }
        if let Some(stored) = body.get("stored_fields") {
            plan.stored_fields(stored, mapping)?;
        }
        plan.percolates = percolated::percolates(body, mapping)?;
        plan.script_fields = script_fields::compile(body, mapping)?;
        match body.get("highlight") {
            Some(h) if !plan.percolates.is_empty() => plan.percolate_highlight = Some(h.clone()),
            Some(h) => {
                plan.highlight = Some(highlight::Highlight::compile(h, mapping, index, query)?)
            }
            None => {}
        }
        Ok(plan)
    }

    /// `stored_fields`: the `_source` only when the list names it (`_none_` leaves out the
    /// source too), and the named fields mapped with `store: true`, read from the source as
    /// Elasticsearch's stored copies of it hold them.
    fn stored_fields(&mut self, stored: &Value, mapping: &Mapping) -> Result<(), String> {
        let names: Vec<&str> = match stored {
            Value::String(s) => s.split(',').collect(),
            Value::Array(items) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .ok_or_else(|| format!("`stored_fields`: {i} is not a field name"))
                })
                .collect::<Result<_, _>>()?,
            other => return Err(format!("`stored_fields`: {other} is not a field list")),
        };
        if !names.contains(&"_source") {
            self.source = crate::search::source::SourceFilter::Hidden;
        }
        for name in names {
            if name.starts_with('_') {
                continue;
            }
            for (shown, f) in matching(mapping, name) {
                if f.stored && !self.fields.iter().any(|(n, _)| *n == shown) {
                    self.fields.push((shown, f));
                }
            }
        }
        Ok(())
    }

    /// [`FetchPlan::render`] with the hit's inner hits, for the hit at `at` of `index`.
    pub fn render_at(
        &self,
        source: &[u8],
        searcher: &tantivy::Searcher,
        at: tantivy::DocAddress,
        index: &str,
    ) -> Result<Option<String>, String> {
        let extra = self.render(source)?;
        if self.inner_hits.is_empty() {
            return Ok(extra);
        }
        let inner = inner_hits::render(&self.inner_hits, searcher, at, index)?;
        Ok(Some(extra.unwrap_or_default() + &inner))
    }

    /// The hit's `fields` and `highlight`, as a JSON fragment to follow its `_source`
    /// (`,"fields":{..},"highlight":{..}`), or None when the search asks for neither.
    pub fn render(&self, source: &[u8]) -> Result<Option<String>, String> {
        if self.is_empty() {
            return Ok(None);
        }
        let doc: Value = serde_json::from_slice(source).unwrap_or(Value::Null);
        let Some(obj) = doc.as_object() else {
            return Ok(None);
        };
        let mut out = String::new();
        let mut values = Vec::new();
        let mut fields = Map::new();
        for (name, f) in &self.fields {
            values.clear();
            collect(obj, f, &mut values);
            let shown: Vec<Value> = values.iter().filter_map(|v| shown(f, v)).collect();
            if !shown.is_empty() {
                fields.insert(name.clone(), Value::Array(shown));
            }
        }
        if let Some(scripted) = &self.script_fields {
            scripted.render(obj, &mut fields)?;
        }
        let mut marked = Map::new();
        percolated::render(
            &self.percolates,
            self.percolate_highlight.as_ref(),
            obj,
            &mut fields,
            &mut marked,
        );
        if !fields.is_empty() {
            out.push_str(&format!(r#","fields":{}"#, Value::Object(fields)));
        }
        match self.highlight.as_ref().and_then(|h| h.render(obj)) {
            Some(found) => out.push_str(&format!(r#","highlight":{found}"#)),
            None if !marked.is_empty() => {
                out.push_str(&format!(r#","highlight":{}"#, Value::Object(marked)))
            }
            None => {}
        }
        Ok(Some(out))
    }
}

/// A `fields` format the engine does not run, named before a race: Mapbox vector tiles.
pub(crate) fn unsupported_formats(body: &Value) -> Option<String> {
    let list = body.get("fields")?.as_array()?;
    list.iter()
        .filter_map(|f| f.get("format")?.as_str())
        .find(|f| f.starts_with("mvt("))
        .map(|f| {
            format!(
                "`fields` format \"{f}\" (a Mapbox vector tile) is not run by the embedded engine"
            )
        })
}

/// The mapped fields a `fields` pattern names (wildcards match every field, multi-fields
/// included, as in Elasticsearch).
pub(crate) fn matching(mapping: &Mapping, pattern: &str) -> Vec<(String, MappedField)> {
    if !pattern.contains('*') {
        return mapping
            .field(pattern)
            .map(|f| vec![(pattern.to_string(), f.clone())])
            .unwrap_or_default();
    }
    mapping
        .fields
        .iter()
        .filter(|f| crate::names::simple_match(pattern, &f.name))
        .map(|f| (f.name.clone(), f.clone()))
        .collect()
}

/// Every value at `path`, arrays flattened.
pub(crate) fn collect<'a>(obj: &'a Map<String, Value>, f: &MappedField, out: &mut Vec<&'a Value>) {
    let mut found = Vec::new();
    crate::mapping::lookup(obj, &f.path, &mut found);
    for v in found {
        match v {
            // `[lon, lat]` is one point.
            Value::Array(items)
                if f.kind == FieldType::GeoPoint && items.first().is_some_and(Value::is_number) =>
            {
                out.push(v)
            }
            Value::Array(items) => items
                .iter()
                .filter(|i| !i.is_null())
                .for_each(|i| out.push(i)),
            Value::Null => {}
            one => out.push(one),
        }
    }
}

/// A value as Elasticsearch's `fields` shows it: by the field's type.
fn shown(f: &MappedField, v: &Value) -> Option<Value> {
    Some(match f.kind {
        FieldType::Text | FieldType::Keyword | FieldType::Ip => match v {
            Value::String(s) => {
                if f.ignore_above.is_some_and(|n| s.chars().count() > n) {
                    return None;
                }
                json!(s)
            }
            Value::Object(_) | Value::Array(_) => return None,
            other => json!(other.to_string()),
        },
        FieldType::Long => json!(as_i64(v).ok()?),
        FieldType::Double => json!(as_f64(v).ok()?),
        FieldType::Boolean => match v {
            Value::Bool(b) => json!(b),
            Value::String(s) => json!(s == "true"),
            _ => return None,
        },
        FieldType::Date => {
            let at = read_date(f, v).ok()?;
            let ms = at.into_timestamp_millis();
            let dt = chrono::DateTime::from_timestamp_millis(ms)?;
            json!(dt.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        }
        FieldType::Range(_) | FieldType::DenseVector | FieldType::Percolator => v.clone(),
        FieldType::GeoShape => {
            crate::geo::geometry::to_geojson(&crate::geo::geometry::parse_indexed(v).ok()?)
        }
        FieldType::GeoPoint => {
            let (lon, lat) = crate::mapping::geo_point(v).ok()?;
            json!({"type": "Point", "coordinates": [lon, lat]})
        }
    })
}

pub(crate) mod highlight;
pub(crate) mod inner_hits;
mod percolated;
mod script_fields;

#[cfg(test)]
mod tests;
