//! Elasticsearch-style mappings (`mappings.properties`) turned into a tantivy schema, and JSON
//! documents turned into tantivy documents under that schema.

pub(crate) mod datemath;
mod ip;
pub use ip::{ip_block, read_ip};
mod fields;
pub mod nested;
pub(crate) mod percolator;
mod runtime;
mod scripted;
mod shapes;
mod values;
use fields::collect;
pub use runtime::{is_elasticsearch_type, unknown_type_message};
use values::add_value;
pub(crate) mod calendar;
pub(crate) mod dates;
pub(crate) mod dynamic;
pub(crate) mod ranges;

use crate::mapping::dynamic::Dynamic;
use crate::mapping::dynamic::JsonFields;
use crate::mapping::dynamic::Mode;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::schema::{Field, Schema, STORED, STRING};
use tantivy::{DateTime, TantivyDocument, Term};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    Text,
    Keyword,
    Long,
    Double,
    Boolean,
    Date,
    /// Stored as two double fields, `<name>.lon` and `<name>.lat`.
    GeoPoint,
    /// An IPv4 or IPv6 address (IPv4 held as IPv6-mapped, as tantivy does).
    Ip,
    /// A range of values (`integer_range`, `date_range`, ...): its ends in two columns.
    Range(crate::mapping::ranges::RangeOf),
    /// A `dense_vector` (or OpenSearch's `knn_vector`): one vector per document, its
    /// little-endian f32s in a bytes column; its spec is the field's `vector`.
    DenseVector,
    /// A `geo_shape`: each value's geometry in a bytes column (`geo::codec`), and its box in
    /// four double columns `<name>.west`, `.east`, `.south`, `.north` that narrow a query's
    /// candidates before the exact test.
    GeoShape,
    /// A `percolator`: each document's query, its JSON in a bytes column, and the terms a
    /// document must hold for it to match in the keyword field `<name>.extracted`
    /// (`mapping::percolator`).
    Percolator,
}

impl FieldType {
    pub fn parse(name: &str) -> Option<FieldType> {
        Some(match name {
            "text" | "match_only_text" => FieldType::Text,
            "keyword" | "constant_keyword" | "wildcard" => FieldType::Keyword,
            "long" | "integer" | "short" | "byte" | "unsigned_long" => FieldType::Long,
            "double" | "float" | "half_float" | "scaled_float" => FieldType::Double,
            "boolean" => FieldType::Boolean,
            "date" | "date_nanos" => FieldType::Date,
            "geo_point" => FieldType::GeoPoint,
            "ip" => FieldType::Ip,
            "dense_vector" | "knn_vector" => FieldType::DenseVector,
            "geo_shape" => FieldType::GeoShape,
            "percolator" => FieldType::Percolator,
            other => FieldType::Range(crate::mapping::ranges::RangeOf::parse(other)?),
        })
    }
}

#[derive(Debug, Clone)]
pub struct MappedField {
    /// The field's name in queries and aggregations (`name`, `name.raw` for a multi-field).
    pub name: String,
    /// Dotted path of the value in the document (`location`, `user.name`); a multi-field
    /// reads its parent's value.
    pub path: Vec<String>,
    pub kind: FieldType,
    pub field: Field,
    /// The second column: a geo_point's latitude (`field` holds the longitude), a range's
    /// upper end (`field` holds the lower).
    pub second: Option<Field>,
    /// How a date field reads values (its `format`).
    pub dates: Option<crate::mapping::dates::DateFormats>,
    /// A field learned by dynamic mapping (or a `flattened` leaf): its path inside the JSON
    /// field `field`.
    pub json_path: Option<String>,
    /// Longer keyword values are kept in `_source` only (`ignore_above`).
    pub ignore_above: Option<usize>,
    /// `store: true`: `stored_fields` returns its values.
    pub stored: bool,
    /// A vector field's dimensions, similarity and index options.
    pub vector: Option<Arc<crate::vector::spec::VectorSpec>>,
    /// A `date_nanos` field: its column keeps nanoseconds, and its sort values are
    /// nanoseconds (a `date` field's, milliseconds).
    pub nanos: bool,
}

impl MappedField {
    /// The term of a string value: a keyword, or one token of a text.
    pub fn text_term(&self, text: &str) -> Term {
        match &self.json_path {
            Some(path) => {
                let mut t = Term::from_field_json_path(self.field, path, true);
                t.append_type_and_str(text);
                t
            }
            None => Term::from_field_text(self.field, text),
        }
    }

    /// The term of an instant, on a date field.
    pub fn date_term(&self, at: DateTime) -> Term {
        match &self.json_path {
            Some(path) => {
                let mut t = Term::from_field_json_path(self.field, path, true);
                t.append_type_and_fast_value(at);
                t
            }
            // At the column's precision (milliseconds), for the fast-field ranges every date
            // query runs as; the inverted index holds seconds only.
            None => Term::from_field_date(self.field, at),
        }
    }

    /// The term of a value of this field's type.
    pub fn value_term(&self, v: &Value) -> Result<Term, String> {
        let Some(path) = &self.json_path else {
            return Ok(match self.kind {
                FieldType::Text | FieldType::Keyword => self.text_term(&plain(v)),
                FieldType::Long => Term::from_field_i64(self.field, as_i64(v)?),
                FieldType::Double | FieldType::GeoPoint => {
                    Term::from_field_f64(self.field, as_f64(v)?)
                }
                FieldType::Boolean => {
                    Term::from_field_bool(self.field, v.as_bool().ok_or("expected a boolean")?)
                }
                FieldType::Date => Term::from_field_date(self.field, read_date(self, v)?),
                FieldType::Ip => Term::from_field_ip_addr(self.field, read_ip(v)?),
                FieldType::Range(_) => {
                    return Err(format!(
                        "`{}` is a range field: a term query matches the ranges holding a value",
                        self.name
                    ))
                }
                FieldType::DenseVector => {
                    return Err(format!(
                    "`{}` is a dense_vector field: it is searched with `knn` or a `script_score`",
                    self.name
                ))
                }
                FieldType::GeoShape => {
                    return Err(format!(
                        "`{}` is a geo_shape field: it is searched with geo queries",
                        self.name
                    ))
                }
                FieldType::Percolator => {
                    return Err(format!(
                        "`{}` is a percolator field: it is searched with a `percolate` query",
                        self.name
                    ))
                }
            });
        };
        let mut t = Term::from_field_json_path(self.field, path, true);
        match self.kind {
            FieldType::Text | FieldType::Keyword => t.append_type_and_str(&plain(v)),
            FieldType::Long => t.append_type_and_fast_value(as_i64(v)?),
            // The JSON field indexes a whole double as the integer it equals.
            FieldType::Double => {
                let x = as_f64(v)?;
                if x.fract() == 0.0 && x.abs() < 9.0e15 {
                    t.append_type_and_fast_value(x as i64)
                } else {
                    t.append_type_and_fast_value(x)
                }
            }
            FieldType::Boolean => {
                t.append_type_and_fast_value(v.as_bool().ok_or("expected a boolean")?)
            }
            FieldType::Date => t.append_type_and_fast_value(read_date(self, v)?),
            FieldType::GeoPoint
            | FieldType::Ip
            | FieldType::Range(_)
            | FieldType::DenseVector
            | FieldType::GeoShape
            | FieldType::Percolator => {
                return Err(format!("`{path}` is not learned as a {:?}", self.kind))
            }
        }
        Ok(t)
    }
}

/// A string value as a keyword holds it.
fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A field of a mapping: one it names, or one learned (shared with the index's registry).
pub enum FieldRef<'a> {
    Mapped(&'a MappedField),
    Learned(Arc<MappedField>),
}

impl std::ops::Deref for FieldRef<'_> {
    type Target = MappedField;
    fn deref(&self) -> &MappedField {
        match self {
            FieldRef::Mapped(f) => f,
            FieldRef::Learned(f) => f,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Mapping {
    pub schema: Schema,
    pub id: Field,
    pub source: Field,
    /// `_version` (where it is not 1) and `_seq_no`, stored beside `_id` (see `index::stored`).
    pub version: Field,
    pub seq_no: Field,
    pub fields: Vec<MappedField>,
    /// Field names to fields, aliases included (an `alias` names its target's field).
    by_name: HashMap<String, usize>,
    /// Per field with a `copy_to`: the fields its values are indexed into as well.
    copies: Vec<(usize, Vec<usize>)>,
    /// `flattened` fields: each leaf under one is a keyword `<field>.<path>`, and the field
    /// itself holds every leaf.
    flattened: Vec<usize>,
    /// The fields documents bring that the mapping does not name.
    pub dynamic: Arc<Dynamic>,
    /// The vector fields, with each segment's vectors and graph.
    pub vectors: Arc<crate::vector::segments::VectorFields>,
    /// Fields whose values an index-time script computes.
    scripted: Arc<Vec<scripted::Scripted>>,
    /// In a time-series index (`index.mode: time_series`): each document's series id field
    /// and the dimension fields it is made of.
    pub time_series: Option<TimeSeries>,
    /// The top-level `nested` fields, each with its objects' store (see [`nested`]).
    pub nested: Vec<Arc<nested::NestedMapping>>,
}

/// The name of a time-series index's series id field: the document's dimensions as a JSON
/// object, keys in order.
pub const TSID: &str = "_tsid";

#[derive(Debug, Clone)]
pub struct TimeSeries {
    pub tsid: Field,
    pub dimensions: Vec<usize>,
}

impl TimeSeries {
    /// In a time-series index with dimensions, its series id field, added to the schema.
    fn add(
        body: &Value,
        dimensions: &[String],
        by_name: &HashMap<String, usize>,
        builder: &mut tantivy::schema::SchemaBuilder,
    ) -> Option<TimeSeries> {
        (time_series_mode(body) && !dimensions.is_empty()).then(|| TimeSeries {
            tsid: builder.add_text_field(TSID, STRING | tantivy::schema::FAST),
            dimensions: dimensions.iter().map(|n| by_name[n]).collect(),
        })
    }
}

/// Whether the index body's settings make a time-series index.
fn time_series_mode(body: &Value) -> bool {
    let settings = body.get("settings");
    let mode = settings.and_then(|s| {
        s.pointer("/index/mode")
            .or_else(|| s.get("index.mode"))
            .or_else(|| s.get("mode"))
    });
    mode.and_then(Value::as_str) == Some("time_series")
}

/// What a mapping declares besides fields: aliases (name, target path) and each field's
/// `copy_to` targets, resolved once every field is known.
#[derive(Default)]
struct Declared {
    aliases: Vec<(String, String)>,
    copy_to: Vec<(String, Vec<String>)>,
    /// Objects with their own `dynamic`, or disabled (`enabled: false`).
    objects: Vec<(String, Mode)>,
    flattened: Vec<String>,
    /// Fields computed by an index-time `script`, with their definitions.
    scripts: Vec<(String, Value)>,
    /// `time_series_dimension` fields.
    dimensions: Vec<String>,
}

/// The fields every document has: `_id`, `_source`, `_version`, `_seq_no` (a column where
/// nested objects are joined to their documents by it: `joined`) and, for the objects of a
/// nested field, `_nested_offset`.
fn meta_fields(
    builder: &mut tantivy::schema::SchemaBuilder,
    joined: bool,
    objects: bool,
) -> (Field, Field, Field, Field, Option<Field>) {
    let id = builder.add_text_field("_id", STRING | STORED);
    let source = builder.add_bytes_field("_source", STORED);
    let version = builder.add_u64_field("_version", STORED);
    let seq_no = match joined {
        true => builder.add_u64_field(
            "_seq_no",
            STORED | tantivy::schema::FAST | tantivy::schema::INDEXED,
        ),
        false => builder.add_u64_field("_seq_no", STORED),
    };
    let offset =
        objects.then(|| builder.add_u64_field("_nested_offset", STORED | tantivy::schema::FAST));
    (id, source, version, seq_no, offset)
}

impl Declared {
    /// Aliases added to `by_name`, and each `copy_to`'s targets, once every field is known.
    fn resolve_links(
        &self,
        by_name: &mut HashMap<String, usize>,
    ) -> Result<Vec<(usize, Vec<usize>)>, UnsupportedType> {
        let unknown = |field: &str, kind: &str, why: String| UnsupportedType {
            field: field.to_string(),
            kind: kind.to_string(),
            why: Some(why),
        };
        for (alias, path) in &self.aliases {
            let target = *by_name.get(path).ok_or_else(|| {
                unknown(
                    alias,
                    "alias",
                    format!("its path `{path}` names no field of the mapping"),
                )
            })?;
            by_name.insert(alias.clone(), target);
        }
        let mut copies = Vec::new();
        for (from, targets) in &self.copy_to {
            let targets = targets
                .iter()
                .map(|t| {
                    by_name.get(t).copied().ok_or_else(|| {
                        unknown(
                            from,
                            "copy_to",
                            format!("`copy_to` names `{t}`, which is no field of the mapping"),
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            copies.push((by_name[from], targets));
        }
        Ok(copies)
    }
}

/// Field types the embedded engine does not map are reported, not silently dropped.
#[derive(Debug)]
pub struct UnsupportedType {
    pub field: String,
    pub kind: String,
    /// Why a type the engine has cannot take this field's parameters (a date `format`).
    pub why: Option<String>,
}

impl Mapping {
    pub fn from_index_body(body: &Value) -> Result<Mapping, UnsupportedType> {
        Self::build(body, false).map(|(m, _)| m)
    }

    /// The mapping of `body`; for the objects of a nested field (`objects`), also the field
    /// keeping each object's offset.
    fn build(body: &Value, objects: bool) -> Result<(Mapping, Option<Field>), UnsupportedType> {
        let with_runtime = runtime::runtime_fields(body)?;
        let props = with_runtime.as_ref().or_else(|| {
            body.pointer("/mappings/properties")
                .and_then(Value::as_object)
        });
        let joined = objects || props.is_some_and(nested::has_nested);
        let mut builder = Schema::builder();
        let (id, source, version, seq_no, offset) = meta_fields(&mut builder, joined, objects);
        let json = JsonFields::add(&mut builder);
        let mut fields = Vec::new();
        let mut declared = Declared::default();
        if let Some(props) = props {
            collect(
                props,
                &mut Vec::new(),
                &mut builder,
                &mut fields,
                &mut declared,
            )?;
        }
        let mut by_name: HashMap<String, usize> = fields
            .iter()
            .enumerate()
            .map(|(i, f): (usize, &MappedField)| (f.name.clone(), i))
            .collect();
        let copies = declared.resolve_links(&mut by_name)?;
        if let Some(clash) = [
            crate::mapping::dynamic::KEYWORDS,
            crate::mapping::dynamic::TEXT,
        ]
        .into_iter()
        .find(|n| by_name.contains_key(*n))
        {
            return Err(UnsupportedType {
                field: clash.to_string(),
                kind: String::new(),
                why: Some(format!("`{clash}` is the name the embedded engine keeps dynamically mapped fields under")),
            });
        }
        let flattened = declared.flattened.iter().map(|n| by_name[n]).collect();
        let time_series = TimeSeries::add(body, &declared.dimensions, &by_name, &mut builder);
        let scripted = scripted::resolve(&declared.scripts, &by_name, &fields).map_err(|why| {
            UnsupportedType {
                field: String::new(),
                kind: "script".into(),
                why: Some(why),
            }
        })?;
        let dynamic = Dynamic::parse(body, declared.objects, json)?;
        let vectors = crate::vector::segments::VectorFields::new(
            fields
                .iter()
                .filter_map(|f| Some((f.name.clone(), f.vector.clone()?)))
                .collect(),
        );
        let nested = match props.filter(|_| !objects) {
            Some(props) => nested::NestedMapping::all(body, props)?,
            None => Vec::new(),
        };
        let mapping = Mapping {
            schema: builder.build(),
            id,
            source,
            version,
            seq_no,
            fields,
            by_name,
            copies,
            flattened,
            dynamic: Arc::new(dynamic),
            vectors: Arc::new(vectors),
            scripted: Arc::new(scripted),
            time_series,
            nested,
        };
        Ok((mapping, offset))
    }

    /// A field the mapping names, or one learned from the documents so far.
    pub fn field(&self, name: &str) -> Option<FieldRef<'_>> {
        if let Some(i) = self.by_name.get(name) {
            return Some(FieldRef::Mapped(&self.fields[*i]));
        }
        // A `flattened` field's leaves are keywords under its name.
        if let Some(root) = self.flattened.iter().map(|i| &self.fields[*i]).find(|f| {
            name.len() > f.name.len()
                && name.starts_with(f.name.as_str())
                && name.as_bytes()[f.name.len()] == b'.'
        }) {
            let _ = root;
            return Some(FieldRef::Learned(Arc::new(
                crate::mapping::dynamic::json_field(
                    name,
                    FieldType::Keyword,
                    self.dynamic.json().keywords,
                    None,
                ),
            )));
        }
        self.dynamic.learned(name).map(FieldRef::Learned)
    }

    /// A field for a query or an aggregation: as [`Mapping::field`], or, while documents may
    /// still bring it, one that matches nothing yet (Elasticsearch matches nothing on an
    /// unmapped field, and does not fail).
    pub fn field_or_unseen(&self, name: &str) -> Option<FieldRef<'_>> {
        self.field(name).or_else(|| {
            self.dynamic
                .may_learn()
                .then(|| FieldRef::Learned(Arc::new(self.dynamic.unseen(name))))
        })
    }

    /// The nested field holding `name`, when only its objects have the field (a query on
    /// the documents finds no value for it, as in Elasticsearch).
    pub fn nested_only(&self, name: &str) -> Option<&str> {
        self.nested
            .iter()
            .find(|n| {
                !n.in_parent
                    && name.len() > n.path.len()
                    && name.starts_with(n.path.as_str())
                    && name.as_bytes()[n.path.len()] == b'.'
            })
            .map(|n| n.path.as_str())
    }

    fn is_mapped(&self, path: &str) -> bool {
        self.by_name.contains_key(path)
    }

    /// Builds a document from one NDJSON line; errors name what ES would call a mapper failure.
    pub fn document(&self, line: &str, id: &str) -> Result<TantivyDocument, String> {
        let value: Value =
            serde_json::from_str(line).map_err(|e| format!("document is not valid JSON: {e}"))?;
        let Value::Object(obj) = &value else {
            return Err("document is not a JSON object".into());
        };
        let mut doc = TantivyDocument::default();
        doc.add_text(self.id, id);
        doc.add_bytes(self.source, line.as_bytes());
        let mut values = Vec::new();
        for (i, f) in self.fields.iter().enumerate() {
            values.clear();
            lookup(obj, &f.path, &mut values);
            if self.flattened.contains(&i) {
                self.add_flattened(&mut doc, f, &values);
                continue;
            }
            if self.is_scripted(i) {
                continue;
            }
            if f.kind == FieldType::Percolator {
                for v in &values {
                    self.add_percolator_query(&mut doc, f, v)
                        .map_err(|m| format!("field `{}`: {m}", f.name))?;
                }
                continue;
            }
            for v in &values {
                add_value(&mut doc, f, v).map_err(|m| format!("field `{}`: {m}", f.name))?;
            }
            // copy_to: the same values indexed into the target fields, by their types.
            if let Some((_, targets)) = self.copies.iter().find(|(from, _)| *from == i) {
                for t in targets {
                    let target = &self.fields[*t];
                    for v in &values {
                        add_value(&mut doc, target, v).map_err(|m| {
                            format!("field `{}` (copied from `{}`): {m}", target.name, f.name)
                        })?;
                    }
                }
            }
        }
        self.run_scripts(obj, &mut doc)?;
        if let Some(ts) = &self.time_series {
            let mut dims = Map::new();
            for i in &ts.dimensions {
                let f = &self.fields[*i];
                values.clear();
                lookup(obj, &f.path, &mut values);
                if let Some(v) = values.first().filter(|v| !v.is_null()) {
                    dims.insert(f.name.clone(), (*v).clone());
                }
            }
            dims.sort_keys();
            doc.add_text(ts.tsid, Value::Object(dims).to_string());
        }
        self.dynamic
            .index(obj, &|p| self.is_mapped(p), self.fields.len(), &mut doc)?;
        Ok(doc)
    }

    /// A `flattened` field's leaves: each a keyword of the field itself, and of
    /// `<field>.<path>` in the dynamic keywords.
    fn add_flattened(&self, doc: &mut TantivyDocument, f: &MappedField, values: &[&Value]) {
        let mut leaves = std::collections::BTreeMap::new();
        fn walk(
            v: &Value,
            path: &str,
            doc: &mut TantivyDocument,
            f: &MappedField,
            out: &mut std::collections::BTreeMap<String, tantivy::schema::OwnedValue>,
        ) {
            match v {
                Value::Object(o) => {
                    for (k, v) in o {
                        walk(v, &format!("{path}.{k}"), doc, f, out);
                    }
                }
                Value::Array(items) => items.iter().for_each(|i| walk(i, path, doc, f, out)),
                Value::Null => {}
                leaf => {
                    let text = plain(leaf);
                    if f.ignore_above.is_some_and(|n| text.chars().count() > n) {
                        return;
                    }
                    doc.add_text(f.field, &text);
                    if path != f.name {
                        crate::mapping::dynamic::push(
                            out,
                            path,
                            tantivy::schema::OwnedValue::Str(text),
                        );
                    }
                }
            }
        }
        for v in values {
            walk(v, &f.name, doc, f, &mut leaves);
        }
        if !leaves.is_empty() {
            doc.add_object(self.dynamic.json().keywords, leaves);
        }
    }
}

/// Every value at `path`: through arrays of objects too (`answers: [{date}, {date}]` gives
/// each answer's date), as Elasticsearch flattens an object array's fields.
pub(crate) fn lookup<'a>(obj: &'a Map<String, Value>, path: &[String], out: &mut Vec<&'a Value>) {
    // Documents may spell a nested field either nested or with a dotted key.
    if let Some(v) = obj.get(&path.join(".")) {
        out.push(v);
        return;
    }
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    let Some(v) = obj.get(first) else {
        return;
    };
    if rest.is_empty() {
        out.push(v);
        return;
    }
    match v {
        Value::Object(o) => lookup(o, rest, out),
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_object)
            .for_each(|o| lookup(o, rest, out)),
        _ => {}
    }
}

pub fn as_i64(v: &Value) -> Result<i64, String> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f as i64))
            .ok_or_else(|| format!("{n} is out of range")),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a number")),
        other => Err(format!("expected a number, got {other}")),
    }
}

pub fn as_f64(v: &Value) -> Result<f64, String> {
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(|| format!("{n} is out of range")),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a number")),
        other => Err(format!("expected a number, got {other}")),
    }
}

/// A date field's value, read by the field's `format`.
pub fn read_date(f: &MappedField, v: &Value) -> Result<DateTime, String> {
    match &f.dates {
        Some(formats) => formats.read(v),
        None => crate::mapping::dates::DateFormats::default().read(v),
    }
}

/// `[lon, lat]`, `{"lat": .., "lon": ..}`, `"lat,lon"` or `"POINT (lon lat)"`, as Elasticsearch
/// reads a geo_point.
pub(crate) fn geo_point(v: &Value) -> Result<(f64, f64), String> {
    let (lon, lat) = match v {
        Value::Array(a) if a.len() == 2 => (as_f64(&a[0])?, as_f64(&a[1])?),
        Value::Object(o) => (
            as_f64(o.get("lon").ok_or("geo_point object needs `lon`")?)?,
            as_f64(o.get("lat").ok_or("geo_point object needs `lat`")?)?,
        ),
        Value::String(s) if s.trim_start().to_ascii_uppercase().starts_with("POINT") => {
            match crate::geo::shape::Shape::wkt(s)? {
                crate::geo::shape::Shape::Points(p) if p.len() == 1 => p[0],
                _ => return Err(format!("`{s}` is not one point")),
            }
        }
        Value::String(s) => {
            let (lat, lon) = s
                .split_once(',')
                .ok_or_else(|| format!("`{s}` is not \"lat,lon\""))?;
            (
                as_f64(&Value::String(lon.trim().into()))?,
                as_f64(&Value::String(lat.trim().into()))?,
            )
        }
        other => return Err(format!("{other} is not a geo_point")),
    };
    if !(-180.0..=180.0).contains(&lon) || !(-90.0..=90.0).contains(&lat) {
        return Err(format!("geo_point [{lon}, {lat}] is out of range"));
    }
    Ok((lon, lat))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_types_and_builds_documents() {
        let body = json!({"mappings": {"properties": {
            "name": {"type": "text"}, "cc": {"type": "keyword"}, "population": {"type": "long"},
            "location": {"type": "geo_point"}, "when": {"type": "date"}, "user": {"properties": {"age": {"type": "integer"}}}
        }}});
        let m = Mapping::from_index_body(&body).unwrap();
        assert_eq!(m.field("user.age").unwrap().kind, FieldType::Long);
        assert_eq!(m.field("location").unwrap().kind, FieldType::GeoPoint);
        m.document(r#"{"name":"Sankt Georgen","cc":"AT","population":"12","location":[14.4,48.2],"when":"2020-01-01","user":{"age":3}}"#, "1").unwrap();
        let e = m.document(r#"{"population":"many"}"#, "2").unwrap_err();
        assert!(e.contains("population"), "{e}");
        assert!(m.document(r#"{"location":[200, 0]}"#, "3").is_err());
    }

    #[test]
    fn fields_inside_arrays_of_objects_take_every_objects_value() {
        use tantivy::schema::document::Document;
        let body = json!({"mappings": {"properties": {
            "answers": {"type": "nested", "properties": {"date": {"type": "date"}, "user": {"type": "keyword"}}}
        }}});
        let m = Mapping::from_index_body(&body).unwrap();
        let doc = m
            .document(r#"{"answers":[{"date":"2012-01-01","user":"a"},{"date":"2013-01-01"},{"user":["b","c"]}]}"#, "1")
            .unwrap();
        let count = |name: &str| {
            let f = m.field(name).unwrap().field;
            doc.iter_fields_and_values()
                .filter(|(field, _)| *field == f)
                .count()
        };
        assert_eq!(count("answers.date"), 2);
        assert_eq!(count("answers.user"), 3);
    }

    #[test]
    fn names_tantivy_cannot_take_are_refused_not_a_panic() {
        for bad in ["", " ", "-x", "a..b"] {
            let body = json!({"mappings": {"properties": {bad: {"type": "keyword"}}}});
            let e = Mapping::from_index_body(&body).err().expect("refused");
            assert!(e.why.is_some(), "{bad:?}");
        }
        let nested =
            json!({"mappings": {"properties": {"o": {"properties": {"": {"type": "long"}}}}}});
        assert!(Mapping::from_index_body(&nested).is_err());
        // GitHub's reactions: `-1` inside an object is a name Elasticsearch and tantivy take.
        let reactions = json!({"mappings": {"properties": {"reactions": {"properties": {
            "-1": {"type": "long"}, "+1": {"type": "long"}}}}}});
        let m = Mapping::from_index_body(&reactions).unwrap();
        assert_eq!(m.field("reactions.-1").unwrap().kind, FieldType::Long);
    }

    #[test]
    fn unsupported_types_are_reported() {
        let e = Mapping::from_index_body(
            &json!({"mappings": {"properties": {"v": {"type": "dense_vector"}}}}),
        )
        .unwrap_err();
        assert_eq!(e.field, "v");
    }
}
