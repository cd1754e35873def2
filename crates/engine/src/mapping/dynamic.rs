//! Dynamic mapping, as Elasticsearch does it: a document's fields that the mapping does not
//! name are mapped on first sight, by the index's `dynamic_templates` or by the type of the
//! JSON value (a string is `text` with a `.keyword` multi-field, or a `date` when it reads as
//! one; a whole number is `long`, another number `float`, true/false `boolean`). The type a
//! field is first given stays; later values are read by it, or the document is refused.
//!
//! tantivy's schema is fixed when an index is created, so learned fields live in two JSON
//! fields: `_dynamic` (keywords, numbers, dates and booleans: indexed and columnar) and
//! `_dynamic_text` (analysed text). A learned field is a [`MappedField`] whose `json_path`
//! names its place there. `flattened` fields keep their leaves in `_dynamic` too.

use crate::mapping::dates::DateFormats;
use crate::mapping::FieldType;
use crate::mapping::MappedField;
use crate::mapping::UnsupportedType;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use tantivy::schema::{
    Field, IndexRecordOption, JsonObjectOptions, OwnedValue, SchemaBuilder, TextFieldIndexing,
    TextOptions, FAST,
};

/// The JSON field holding learned keywords, numbers, dates and booleans.
pub const KEYWORDS: &str = "_dynamic";
/// The JSON field holding learned text.
pub const TEXT: &str = "_dynamic_text";

/// What happens to a field the mapping does not name (`dynamic`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    /// Mapped on first sight.
    True,
    /// Kept in `_source` only.
    False,
    /// The document is refused.
    Strict,
}

impl Mode {
    pub fn parse(v: &Value, at: &str) -> Result<Mode, UnsupportedType> {
        match v {
            Value::Bool(true) => Ok(Mode::True),
            Value::Bool(false) => Ok(Mode::False),
            Value::String(s) if s == "true" => Ok(Mode::True),
            Value::String(s) if s == "false" => Ok(Mode::False),
            Value::String(s) if s == "strict" => Ok(Mode::Strict),
            other => Err(UnsupportedType {
                field: at.to_string(),
                kind: "dynamic".into(),
                why: Some(format!("`dynamic: {other}` is not run by the embedded engine (true, false, strict; runtime fields are not built)")),
            }),
        }
    }
}

/// The two JSON fields of every index's schema.
#[derive(Debug, Clone, Copy)]
pub struct JsonFields {
    pub keywords: Field,
    pub text: Field,
}

impl JsonFields {
    pub fn add(builder: &mut SchemaBuilder) -> JsonFields {
        let raw = TextFieldIndexing::default()
            .set_tokenizer("raw")
            .set_index_option(IndexRecordOption::Basic);
        let keywords = JsonObjectOptions::from(FAST)
            .set_fast("raw")
            .set_indexing_options(raw)
            .set_expand_dots_enabled();
        let text = JsonObjectOptions::from(
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer("default")
                    .set_index_option(IndexRecordOption::WithFreqsAndPositions),
            ),
        )
        .set_expand_dots_enabled();
        JsonFields {
            keywords: builder.add_json_field(KEYWORDS, keywords),
            text: builder.add_json_field(TEXT, text),
        }
    }
}

/// An index's dynamic mapping: its rules, and the fields learned so far.
#[derive(Debug)]
pub struct Dynamic {
    mode: Mode,
    /// Objects with a `dynamic` of their own, or `enabled: false` (as `False`), deepest first.
    objects: Vec<(String, Mode)>,
    templates: Vec<template::Template>,
    date_detection: Option<DateFormats>,
    numeric_detection: bool,
    /// `index.mapping.total_fields.limit`: mapped and learned fields together.
    limit: usize,
    json: JsonFields,
    learned: RwLock<Learned>,
}

/// The fields learned so far: by the name a search gives, and by the document path whose
/// values they index (a field and its multi-fields).
#[derive(Debug, Default)]
struct Learned {
    by_name: HashMap<String, Arc<MappedField>>,
    by_path: HashMap<String, Arc<[Arc<MappedField>]>>,
}

/// Whatever `index.mapping.total_fields.limit` says, an index learns at most this many fields:
/// each costs memory, and a request to `runner serve` may set the limit.
const MAX_FIELDS: u64 = 100_000;

/// Elasticsearch's default `dynamic_date_formats`.
const DEFAULT_DATE_FORMATS: &str = "strict_date_optional_time||yyyy/MM/dd HH:mm:ss Z||yyyy/MM/dd Z";

impl Dynamic {
    pub fn parse(
        body: &Value,
        objects: Vec<(String, Mode)>,
        json: JsonFields,
    ) -> Result<Dynamic, UnsupportedType> {
        let mappings = body.get("mappings").unwrap_or(&Value::Null);
        let mode = match mappings.get("dynamic") {
            None => Mode::True,
            Some(v) => Mode::parse(v, "mappings")?,
        };
        let mut templates = Vec::new();
        for entry in mappings
            .get("dynamic_templates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            for (name, def) in entry.as_object().into_iter().flatten() {
                templates.push(template::template(name, def)?);
            }
        }
        let date_detection = match mappings.get("date_detection") {
            Some(Value::Bool(false)) => None,
            _ => {
                let formats = match mappings
                    .get("dynamic_date_formats")
                    .and_then(Value::as_array)
                {
                    Some(list) => list
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join("||"),
                    None => DEFAULT_DATE_FORMATS.into(),
                };
                Some(DateFormats::parse(&formats).map_err(|why| UnsupportedType {
                    field: "dynamic_date_formats".into(),
                    kind: "date".into(),
                    why: Some(why),
                })?)
            }
        };
        let limit = body
            .pointer("/settings/index/mapping/total_fields/limit")
            .or_else(|| body.pointer("/settings/index.mapping.total_fields.limit"))
            .or_else(|| body.pointer("/settings/index/mapping.total_fields.limit"))
            .and_then(|v| v.as_u64().or_else(|| v.as_str()?.parse().ok()))
            .unwrap_or(1000)
            .min(MAX_FIELDS) as usize;
        let mut objects = objects;
        objects.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        Ok(Dynamic {
            mode,
            objects,
            templates,
            date_detection,
            numeric_detection: mappings.get("numeric_detection") == Some(&Value::Bool(true)),
            limit,
            json,
            learned: RwLock::new(Learned::default()),
        })
    }

    pub fn json(&self) -> JsonFields {
        self.json
    }

    /// The mode for a new field at `path`: its nearest object's, else the index's.
    fn mode_for(&self, path: &str) -> Mode {
        self.objects
            .iter()
            .find(|(p, _)| {
                path.len() > p.len()
                    && path.starts_with(p.as_str())
                    && path.as_bytes()[p.len()] == b'.'
            })
            .map_or(self.mode, |(_, m)| *m)
    }

    /// Whether a search may name fields no document has brought yet.
    pub fn may_learn(&self) -> bool {
        self.mode == Mode::True || self.objects.iter().any(|(_, m)| *m == Mode::True)
    }

    /// The fields learned so far, by document path: each path's own field first, then its
    /// multi-fields.
    pub fn learned_fields(&self) -> Vec<(String, Vec<Arc<MappedField>>)> {
        let Ok(learned) = self.learned.read() else {
            return Vec::new();
        };
        let mut out: Vec<(String, Vec<Arc<MappedField>>)> = learned
            .by_path
            .iter()
            .map(|(path, fields)| (path.clone(), fields.to_vec()))
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    pub fn learned(&self, name: &str) -> Option<Arc<MappedField>> {
        self.learned.read().ok()?.by_name.get(name).cloned()
    }

    /// A field no document has brought yet: a keyword that matches nothing, as an unmapped
    /// field matches nothing in Elasticsearch.
    pub fn unseen(&self, name: &str) -> MappedField {
        json_field(name, FieldType::Keyword, self.json.keywords, None)
    }

    /// Maps and indexes the document's fields that `mapped` does not name.
    pub fn index(
        &self,
        obj: &Map<String, Value>,
        mapped: &dyn Fn(&str) -> bool,
        static_fields: usize,
        doc: &mut tantivy::TantivyDocument,
    ) -> Result<(), String> {
        let mut keywords = BTreeMap::new();
        let mut text = BTreeMap::new();
        let mut out = Out {
            keywords: &mut keywords,
            text: &mut text,
        };
        self.walk(obj, &mut String::new(), mapped, static_fields, &mut out)?;
        if !keywords.is_empty() {
            doc.add_object(self.json.keywords, keywords);
        }
        if !text.is_empty() {
            doc.add_object(self.json.text, text);
        }
        Ok(())
    }

    /// Visits the document's values; `path` is the dotted path of `obj`, extended in place
    /// for each key (no allocation for the fields the mapping names).
    fn walk(
        &self,
        obj: &Map<String, Value>,
        path: &mut String,
        mapped: &dyn Fn(&str) -> bool,
        static_fields: usize,
        out: &mut Out,
    ) -> Result<(), String> {
        for (key, value) in obj {
            let len = path.len();
            if len > 0 {
                path.push('.');
            }
            path.push_str(key);
            let done = self.visit(value, path, mapped, static_fields, out);
            path.truncate(len);
            done?;
        }
        Ok(())
    }

    fn visit(
        &self,
        value: &Value,
        path: &mut String,
        mapped: &dyn Fn(&str) -> bool,
        static_fields: usize,
        out: &mut Out,
    ) -> Result<(), String> {
        if mapped(path) {
            return Ok(());
        }
        let many;
        let leaves: &[Value] = match value {
            Value::Object(o) => return self.walk(o, path, mapped, static_fields, out),
            Value::Array(items) => {
                for item in items.iter().filter(|i| i.is_object()) {
                    self.visit(item, path, mapped, static_fields, out)?;
                }
                many = items
                    .iter()
                    .filter(|i| !i.is_object() && !i.is_null() && !i.is_array())
                    .cloned()
                    .collect::<Vec<_>>();
                &many
            }
            Value::Null => return Ok(()),
            leaf => std::slice::from_ref(leaf),
        };
        let Some(first) = leaves.first() else {
            return Ok(());
        };
        match self.mode_for(path) {
            Mode::False => return Ok(()),
            Mode::Strict => {
                return Err(format!(
                    "mapping set to strict, dynamic introduction of [{path}] is not allowed"
                ))
            }
            Mode::True => {}
        }
        let fields = self.fields_for(path, first, static_fields)?;
        for f in fields.iter() {
            let at = f.json_path.as_deref().unwrap_or_default();
            for leaf in leaves {
                if let Some(v) = coerce(f, leaf).map_err(|m| format!("field `{at}`: {m}"))? {
                    let target = if f.kind == FieldType::Text {
                        &mut *out.text
                    } else {
                        &mut *out.keywords
                    };
                    push(target, at, v);
                }
            }
        }
        Ok(())
    }

    /// The learned fields at `path` (the field and its multi-fields), learned now from
    /// `first` if this is the first document to bring it.
    fn fields_for(
        &self,
        path: &str,
        first: &Value,
        static_fields: usize,
    ) -> Result<Arc<[Arc<MappedField>]>, String> {
        let poisoned = || "the index's mapping lock is poisoned".to_string();
        if let Some(found) = self
            .learned
            .read()
            .map_err(|_| poisoned())?
            .by_path
            .get(path)
        {
            return Ok(found.clone());
        }
        let (detected, default_kind) = self.detect(first);
        let learnable = self
            .templates
            .iter()
            .find(|t| t.applies(path, detected))
            .and_then(|t| t.mapping.clone());
        let mut new = Vec::new();
        match learnable {
            Some(l) => {
                let kind = l.kind.unwrap_or(default_kind);
                let mut main = json_field(path, kind, self.json_for(kind), l.format.clone());
                main.ignore_above = l.ignore_above;
                new.push(main);
                for (sub, k, ignore) in l.subs {
                    let mut f = json_field(&format!("{path}.{sub}"), k, self.json_for(k), None);
                    f.ignore_above = ignore;
                    new.push(f);
                }
            }
            None => {
                new.push(json_field(
                    path,
                    default_kind,
                    self.json_for(default_kind),
                    None,
                ));
                if default_kind == FieldType::Text {
                    let mut kw = json_field(
                        &format!("{path}.keyword"),
                        FieldType::Keyword,
                        self.json.keywords,
                        None,
                    );
                    kw.ignore_above = Some(256);
                    new.push(kw);
                }
            }
        }
        let mut learned = self.learned.write().map_err(|_| poisoned())?;
        if let Some(found) = learned.by_path.get(path) {
            return Ok(found.clone());
        }
        if static_fields + learned.by_name.len() + new.len() > self.limit {
            return Err(format!(
                "Limit of total fields [{}] has been exceeded while adding new fields [{}]",
                self.limit,
                new.len()
            ));
        }
        let new: Arc<[Arc<MappedField>]> = new.into_iter().map(Arc::new).collect();
        for f in new.iter() {
            let name = f.json_path.clone().unwrap_or_default();
            learned.by_name.insert(name, f.clone());
        }
        learned.by_path.insert(path.to_string(), new.clone());
        Ok(new)
    }

    fn json_for(&self, kind: FieldType) -> Field {
        if kind == FieldType::Text {
            self.json.text
        } else {
            self.json.keywords
        }
    }

    /// Elasticsearch's detected type for a template's `match_mapping_type`, and the type it
    /// maps with no template.
    fn detect(&self, v: &Value) -> (&'static str, FieldType) {
        match v {
            Value::Bool(_) => ("boolean", FieldType::Boolean),
            Value::Number(n) if n.is_i64() || n.is_u64() => ("long", FieldType::Long),
            Value::Number(_) => ("double", FieldType::Double),
            Value::String(s) => {
                if let Some(formats) = &self.date_detection {
                    if formats.read(v).is_ok() && !s.trim().chars().all(|c| c.is_ascii_digit()) {
                        return ("date", FieldType::Date);
                    }
                }
                if self.numeric_detection {
                    if s.trim().parse::<i64>().is_ok() {
                        return ("long", FieldType::Long);
                    }
                    if s.trim().parse::<f64>().is_ok() {
                        return ("double", FieldType::Double);
                    }
                }
                ("string", FieldType::Text)
            }
            _ => ("object", FieldType::Keyword),
        }
    }
}

struct Out<'a> {
    keywords: &'a mut BTreeMap<String, OwnedValue>,
    text: &'a mut BTreeMap<String, OwnedValue>,
}

/// Adds a value at a dotted path (the JSON field expands the dots); a second value makes
/// an array.
pub fn push(map: &mut BTreeMap<String, OwnedValue>, path: &str, v: OwnedValue) {
    match map.get_mut(path) {
        None => {
            map.insert(path.to_string(), v);
        }
        Some(OwnedValue::Array(items)) => items.push(v),
        Some(one) => {
            let first = std::mem::replace(one, OwnedValue::Null);
            *one = OwnedValue::Array(vec![first, v]);
        }
    }
}

/// A learned field, kept at `name` inside the JSON field `json`.
pub fn json_field(
    name: &str,
    kind: FieldType,
    json: Field,
    dates: Option<DateFormats>,
) -> MappedField {
    let column = if kind == FieldType::Text {
        TEXT
    } else {
        KEYWORDS
    };
    MappedField {
        name: format!("{column}.{name}"),
        path: name.split('.').map(str::to_string).collect(),
        kind,
        field: json,
        second: None,
        dates: match kind {
            FieldType::Date => Some(dates.unwrap_or_default()),
            _ => None,
        },
        json_path: Some(name.to_string()),
        ignore_above: None,
        stored: false,
        vector: None,
        nanos: false,
    }
}

/// A value as its learned field holds it; None when it is not indexed (past `ignore_above`).
pub fn coerce(f: &MappedField, v: &Value) -> Result<Option<OwnedValue>, String> {
    use crate::mapping::as_f64;
    use crate::mapping::as_i64;
    use crate::mapping::read_date;
    Ok(Some(match f.kind {
        FieldType::Text | FieldType::Keyword => {
            let s = match v {
                Value::String(s) => s.clone(),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) => n.to_string(),
                other => return Err(format!("expected a string, got {other}")),
            };
            if f.ignore_above.is_some_and(|n| s.chars().count() > n) {
                return Ok(None);
            }
            OwnedValue::Str(s)
        }
        FieldType::Long => OwnedValue::I64(as_i64(v)?),
        FieldType::Double => OwnedValue::F64(as_f64(v)?),
        FieldType::Boolean => match v {
            Value::Bool(b) => OwnedValue::Bool(*b),
            Value::String(s) if s == "true" || s == "false" => OwnedValue::Bool(s == "true"),
            other => return Err(format!("expected a boolean, got {other}")),
        },
        FieldType::Date => OwnedValue::Date(read_date(f, v)?),
        FieldType::GeoPoint
        | FieldType::Ip
        | FieldType::Range(_)
        | FieldType::DenseVector
        | FieldType::GeoShape
        | FieldType::Percolator => return Err("not learned dynamically".into()),
    }))
}

mod template;

#[cfg(test)]
mod tests;
