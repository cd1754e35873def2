//! Sorted and paged searches: Elasticsearch's `sort`, `search_after` and scroll cursors over
//! tantivy. Every hit gets a key of up to four u64s that order as the sort asks (numbers,
//! dates and booleans through their fast columns, `_score`, `_doc`), and a page is the top
//! keys strictly after a cursor, so pages are found in one pass each, however deep.

use crate::mapping::FieldType;
use crate::mapping::Mapping;
use crate::search::keywords::GlobalOrds;
use options::{check_options, date_shown, geo_distance_key};
use serde_json::{json, Value};
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::Column;
use tantivy::{DocAddress, DocId, Score, SegmentOrdinal, SegmentReader};

/// Sort keys a request may give; one more is kept for the tiebreaker.
const MAX_USER_KEYS: usize = 3;
const MAX_KEYS: usize = MAX_USER_KEYS + 1;

#[derive(Debug, Clone, Copy, PartialEq)]
enum By {
    Score,
    /// The document's address (segment, then doc id): index order, unique.
    Doc,
    Field(FieldType),
    /// `_geo_distance`: metres from `origin` to the document's point (the nearest of
    /// several, Elasticsearch's default `mode: min` ascending).
    GeoDistance,
    /// A keyword: its rank among the field's terms in every segment (see `keywords`).
    Keyword,
    /// `_script` of type number: the script's value for the document.
    Script,
}

#[derive(Debug, Clone)]
struct SortKey {
    by: By,
    /// The tantivy field name of a field key.
    name: String,
    desc: bool,
    /// `_geo_distance`: the origin (lat, lon) and metres per unit of the values shown.
    geo: Option<((f64, f64), f64)>,
    /// A date key's formats, which read a `search_after` given as a date string.
    dates: Option<crate::mapping::dates::DateFormats>,
    /// How a date key's values are shown and read back by `search_after`.
    shown: DateShown,
    /// Of a document's several values, the largest (`mode: max`, the default descending)
    /// or the smallest (`min`, the default ascending).
    max: bool,
    /// A `_script` key's script.
    script: Option<Arc<crate::dsl::doc_script::DocScript>>,
}

/// A search's order: the request's keys, then the document address to break ties.
#[derive(Debug, Clone)]
pub struct Sort {
    keys: Vec<SortKey>,
    /// Keys the request gave (shown as a hit's `sort`, compared by `search_after`).
    user_keys: usize,
    /// Keyword keys' ordinals for the last searcher generation, built once per generation.
    ordinals: Arc<Mutex<Option<(u64, Ordinals)>>>,
}

/// A date sort value as a hit shows it: epoch milliseconds (a `date` field), epoch
/// nanoseconds (a `date_nanos` field, or `numeric_type: date_nanos`), or a string in the
/// sort's `format`.
#[derive(Debug, Clone, Default)]
enum DateShown {
    #[default]
    Millis,
    Nanos,
    Formatted(crate::mapping::dates::DateFormats),
}

/// Per sort key: the keyword ordinals of the searcher a search runs on (None for others).
pub type Ordinals = Vec<Option<Arc<GlobalOrds>>>;

/// Where a hit sits in a sort: smaller comes first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key([u64; MAX_KEYS]);

/// Where the next page starts: after this key, compared on its first `len` parts (a
/// client's `search_after` gives the sort's values only; a scroll's own cursor is exact).
#[derive(Debug, Clone, Copy)]
pub struct After {
    key: Key,
    len: usize,
}

impl After {
    fn admits(&self, key: &Key) -> bool {
        key.0[..self.len] > self.key.0[..self.len]
    }
}

fn score_bits(score: f32) -> u64 {
    // IEEE floats order as integers once negative ones have all bits flipped.
    let b = score.to_bits();
    u64::from(if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    })
}

fn score_from_bits(bits: u64) -> f32 {
    let b = bits as u32;
    f32::from_bits(if b & 0x8000_0000 != 0 {
        b & 0x7FFF_FFFF
    } else {
        !b
    })
}

/// A sort on a field `mapping` lacks (with no `unmapped_type`): Elasticsearch's shard failure,
/// in its words. A search of several indices fails that index's shard alone.
pub fn unmapped_sort(v: &Value, mapping: &Mapping) -> Option<crate::error::Error> {
    unmapped_field(v, mapping).map(|field| {
        crate::error::Error::new(
            crate::error::ErrorKind::QueryShard,
            format!("No mapping found for [{field}] in order to sort on"),
        )
    })
}

/// The first field a request's `sort` orders by that `mapping` does not have (and that gives
/// no `unmapped_type`).
fn unmapped_field(v: &Value, mapping: &Mapping) -> Option<String> {
    let entries: Vec<&Value> = match v {
        Value::Array(a) => a.iter().collect(),
        one => vec![one],
    };
    entries.into_iter().find_map(|entry| {
        let (name, opts) = match entry {
            Value::String(name) => (name.as_str(), None),
            Value::Object(o) if o.len() == 1 => {
                let (name, opts) = o.iter().next()?;
                (name.as_str(), opts.as_object())
            }
            _ => return None,
        };
        let special = name.starts_with('_')
            && matches!(
                name,
                "_score" | "_doc" | "_shard_doc" | "_script" | "_geo_distance"
            );
        let given_type = opts.is_some_and(|o| o.contains_key("unmapped_type"));
        (!special && !given_type && mapping.field(name).is_none()).then(|| name.to_string())
    })
}

/// What a sort entry named `name` orders by.
fn sorted_by(name: &str, mapping: &Mapping) -> Result<By, String> {
    Ok(match name {
        "_score" => By::Score,
        "_doc" | "_shard_doc" => By::Doc,
        field => match mapping.field(field).map(|f| f.kind) {
            Some(kind @ (FieldType::Long | FieldType::Double | FieldType::Date | FieldType::Boolean)) => By::Field(kind),
            Some(FieldType::Keyword) => By::Keyword,
            Some(kind) => return Err(format!("cannot sort on `{field}`: the embedded engine sorts on keyword, numeric, date and boolean fields, not {kind:?}")),
            None => return Err(format!("cannot sort on `{field}`: no such field in the mapping")),
        },
    })
}

/// A document's value in a column, of several the smallest or the largest (the column's raw
/// values order as the values do).
fn pick(column: &tantivy::columnar::Column<u64>, doc: DocId, max: bool) -> Option<u64> {
    match column.get_cardinality() {
        tantivy::columnar::Cardinality::Multivalued => {
            let values = column.values_for_doc(doc);
            if max {
                values.max()
            } else {
                values.min()
            }
        }
        _ => column.first(doc),
    }
}

impl Sort {
    /// Relevance order, Elasticsearch's default: best score first, then index order. Built
    /// once, so searches without a `sort` allocate none.
    pub fn relevance() -> &'static Sort {
        static RELEVANCE: std::sync::LazyLock<Sort> = std::sync::LazyLock::new(|| Sort {
            keys: vec![
                SortKey {
                    by: By::Score,
                    name: String::new(),
                    desc: true,
                    geo: None,
                    dates: None,
                    shown: DateShown::Millis,
                    max: false,
                    script: None,
                },
                SortKey {
                    by: By::Doc,
                    name: String::new(),
                    desc: false,
                    geo: None,
                    dates: None,
                    shown: DateShown::Millis,
                    max: false,
                    script: None,
                },
            ],
            user_keys: 0,
            ordinals: Arc::default(),
        });
        &RELEVANCE
    }

    /// A request's `sort`: a field name, `{"field": "desc"}`, `{"field": {"order": "desc"}}`,
    /// `_score`, `_doc` (or `_shard_doc`), or a list of them.
    pub fn parse(v: &Value, mapping: &Mapping) -> Result<Sort, String> {
        Self::parse_with(v, mapping, crate::dsl::doc_script::ErrorSlot::default())
    }

    /// As [`Sort::parse`], a `_script` key's failures noted in `errors` (the search's).
    pub fn parse_with(
        v: &Value,
        mapping: &Mapping,
        errors: crate::dsl::doc_script::ErrorSlot,
    ) -> Result<Sort, String> {
        let entries: Vec<&Value> = match v {
            Value::Array(a) => a.iter().collect(),
            one => vec![one],
        };
        if entries.is_empty() {
            return Ok(Sort::relevance().clone());
        }
        if entries.len() > MAX_USER_KEYS {
            return Err(format!(
                "the embedded engine sorts on up to {MAX_USER_KEYS} keys, got {}",
                entries.len()
            ));
        }
        let mut keys = Vec::with_capacity(entries.len() + 1);
        for e in entries {
            let no_options = serde_json::Map::new();
            let (name, order, opts) = match e {
                Value::String(name) => (name.as_str(), None, &no_options),
                Value::Object(o) if o.len() == 1 => {
                    let (name, spec) = o.iter().next().expect("one entry");
                    let (order, opts) = match spec {
                        Value::String(s) => (Some(s.as_str()), &no_options),
                        Value::Object(opts) if name != "_geo_distance" && name != "_script" => {
                            let order = opts.get("order").and_then(Value::as_str);
                            check_options(name, opts, mapping)?;
                            (order, opts)
                        }
                        Value::Object(opts) => (opts.get("order").and_then(Value::as_str), &no_options),
                        other => return Err(format!("sort `{name}`: expected \"asc\", \"desc\" or {{\"order\": ...}}, got {other}")),
                    };
                    (name.as_str(), order, opts)
                }
                other => {
                    return Err(format!(
                        "a sort entry is a field name or {{\"field\": \"asc\"}}, got {other}"
                    ))
                }
            };
            if name == "_geo_distance" {
                keys.push(geo_distance_key(e, mapping)?);
                continue;
            }
            if name == "_script" {
                keys.push(options::script_key(e, mapping, errors.clone())?);
                continue;
            }
            if mapping.nested_only(name).is_some() && !opts.contains_key("nested") {
                return Err(format!("it is mandatory to set the [nested] context on the nested sort field: [{name}]."));
            }
            keys.push(field_key(name, order, opts, mapping)?);
        }
        let user_keys = keys.len();
        if !keys.iter().any(|k| k.by == By::Doc) {
            keys.push(SortKey {
                by: By::Doc,
                name: String::new(),
                desc: false,
                geo: None,
                dates: None,
                shown: DateShown::Millis,
                max: false,
                script: None,
            });
        }
        Ok(Sort {
            keys,
            user_keys,
            ordinals: Arc::default(),
        })
    }

    /// The keyword keys' ordinals for `searcher`: reused while its generation lasts.
    pub fn ordinals(&self, searcher: &tantivy::Searcher) -> tantivy::Result<Ordinals> {
        if !self.keys.iter().any(|k| k.by == By::Keyword) {
            return Ok(Vec::new());
        }
        let generation = searcher.generation().generation_id();
        let mut cached = self.ordinals.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((g, ords)) = cached.as_ref().filter(|(g, _)| *g == generation) {
            let _ = g;
            return Ok(ords.clone());
        }
        let ords = self
            .keys
            .iter()
            .map(|k| match k.by {
                By::Keyword => GlobalOrds::build(searcher, &k.name).map(Some),
                _ => Ok(None),
            })
            .collect::<tantivy::Result<Ordinals>>()?;
        *cached = Some((generation, ords.clone()));
        Ok(ords)
    }

    pub fn needs_scores(&self) -> bool {
        self.keys
            .iter()
            .any(|k| matches!(k.by, By::Score | By::Script))
    }

    /// Whether hits show `sort` values (the request sorted).
    pub fn shows_values(&self) -> bool {
        self.user_keys > 0
    }

    /// The order of two hits by the `sort` values they show, key by key in each key's
    /// direction (numbers by value, strings by bytes, a missing value last): how hits of
    /// several indices merge, as Elasticsearch merges its shards' pages.
    pub fn compare_shown(&self, a: Option<&Value>, b: Option<&Value>) -> std::cmp::Ordering {
        use std::cmp::Ordering;
        let (Some(Value::Array(a)), Some(Value::Array(b))) = (a, b) else {
            return Ordering::Equal;
        };
        for (i, key) in self.keys.iter().take(self.user_keys).enumerate() {
            let order = match (a.get(i), b.get(i)) {
                (Some(Value::Number(x)), Some(Value::Number(y))) => {
                    let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                    x.total_cmp(&y)
                }
                (Some(Value::String(x)), Some(Value::String(y))) => x.as_bytes().cmp(y.as_bytes()),
                (None | Some(Value::Null), None | Some(Value::Null)) => Ordering::Equal,
                // Missing values sort last in either direction, Elasticsearch's `_last`.
                (None | Some(Value::Null), _) => return Ordering::Greater,
                (_, None | Some(Value::Null)) => return Ordering::Less,
                _ => Ordering::Equal,
            };
            let order = if key.desc { order.reverse() } else { order };
            if order != Ordering::Equal {
                return order;
            }
        }
        Ordering::Equal
    }

    /// The cursor after a hit: exact, for the next page of the same search.
    pub fn after_hit(&self, key: Key) -> After {
        After {
            key,
            len: self.keys.len(),
        }
    }

    /// The cursor a client continuing from `after`'s sort values has: the request's keys
    /// only, so ties across pages are skipped, as in Elasticsearch without a tiebreaker.
    pub fn user_cursor(&self, after: After) -> After {
        After {
            key: after.key,
            len: self.user_keys.max(1),
        }
    }

    /// A hit's `sort` values as Elasticsearch shows them (dates as epoch milliseconds;
    /// keywords through the ordinals of the searcher that found the hit).
    pub fn values(&self, key: &Key, ordinals: &Ordinals) -> Value {
        let shown = self
            .keys
            .iter()
            .zip(key.0)
            .enumerate()
            .take(self.user_keys)
            .map(|(i, (k, part))| {
                let raw = if k.desc { !part } else { part };
                match k.by {
                    By::Score => json!(score_from_bits(raw)),
                    By::Doc => json!(raw),
                    By::Field(_) if raw == u64::MAX => Value::Null,
                    By::Field(FieldType::Long) => json!(tantivy::u64_to_i64(raw)),
                    By::Field(FieldType::Double) => json!(tantivy::u64_to_f64(raw)),
                    By::Field(FieldType::Date) => {
                        let nanos = tantivy::u64_to_i64(raw);
                        match &k.shown {
                            DateShown::Millis => json!(nanos.div_euclid(1_000_000)),
                            DateShown::Nanos => json!(nanos),
                            DateShown::Formatted(f) => json!(f.print(nanos)),
                        }
                    }
                    By::Field(FieldType::Boolean) => json!(raw),
                    By::Field(_) => Value::Null,
                    // Elasticsearch shows a document with no point as Infinity.
                    By::GeoDistance if raw == u64::MAX => json!("Infinity"),
                    By::GeoDistance => {
                        json!(tantivy::u64_to_f64(raw) / k.geo.map_or(1.0, |g| g.1))
                    }
                    By::Script if raw == u64::MAX => Value::Null,
                    By::Script => json!(tantivy::u64_to_f64(raw)),
                    By::Keyword if raw == u64::MAX => Value::Null,
                    By::Keyword => ordinals
                        .get(i)
                        .and_then(Option::as_ref)
                        .and_then(|o| o.term(raw))
                        .map_or(Value::Null, |t| json!(t)),
                }
            });
        Value::Array(shown.collect())
    }

    /// A request's `search_after`: one value per sort key, strictly after which hits start.
    pub fn search_after(&self, v: &Value) -> Result<After, String> {
        let values = v
            .as_array()
            .ok_or_else(|| format!("search_after is a list of sort values, got {v}"))?;
        if self.user_keys == 0 {
            return Err("search_after needs a `sort`".into());
        }
        if values.len() != self.user_keys {
            return Err(format!(
                "search_after has {} values but the sort has {} keys",
                values.len(),
                self.user_keys
            ));
        }
        if self.keys.iter().any(|k| k.by == By::Keyword) {
            return Err("search_after on a keyword sort is not run by the embedded engine (page with a scroll, or sort on a numeric or date field)".into());
        }
        let mut key = Key([0; MAX_KEYS]);
        for (i, (k, v)) in self.keys.iter().zip(values).enumerate() {
            let bad = || format!("search_after value {v} does not fit sort key `{}`", k.name);
            let raw = match (k.by, v) {
                (_, Value::Null) => u64::MAX,
                (By::Score, v) => score_bits(v.as_f64().ok_or_else(bad)? as f32),
                (By::Doc, v) => v.as_u64().ok_or_else(bad)?,
                (By::Field(FieldType::Long), v) => tantivy::i64_to_u64(v.as_i64().ok_or_else(bad)?),
                (By::Field(FieldType::Double), v) => {
                    tantivy::f64_to_u64(v.as_f64().ok_or_else(bad)?)
                }
                (By::Field(FieldType::Date), Value::String(s)) => {
                    // Read by the sort's `format` when it has one, else by the field's.
                    let formats = match &k.shown {
                        DateShown::Formatted(f) => f.clone(),
                        _ => k.dates.clone().unwrap_or_default(),
                    };
                    let at = formats.read(&Value::String(s.clone())).map_err(|_| {
                        format!(
                            "search_after: failed to parse date field [{s}] of sort key `{}`",
                            k.name
                        )
                    })?;
                    tantivy::i64_to_u64(at.into_timestamp_nanos())
                }
                (By::Field(FieldType::Date), v) => {
                    let n = v.as_i64().ok_or_else(bad)?;
                    tantivy::i64_to_u64(match k.shown {
                        DateShown::Nanos => n,
                        _ => n.saturating_mul(1_000_000),
                    })
                }
                (By::Field(FieldType::Boolean), Value::Bool(b)) => u64::from(*b),
                (By::GeoDistance, Value::String(s)) if s == "Infinity" => u64::MAX,
                (By::Keyword, _) => return Err(bad()),
                (By::Script, v) => tantivy::f64_to_u64(v.as_f64().ok_or_else(bad)?),
                (By::GeoDistance, v) => {
                    tantivy::f64_to_u64(v.as_f64().ok_or_else(bad)? * k.geo.map_or(1.0, |g| g.1))
                }
                (By::Field(_), v) => v.as_u64().ok_or_else(bad)?,
            };
            key.0[i] = if k.desc && raw != u64::MAX { !raw } else { raw };
        }
        Ok(After {
            key,
            len: self.user_keys,
        })
    }
}

/// A key on a field (or `_score`, `_doc`): its order, column, date display and mode.
fn field_key(
    name: &str,
    order: Option<&str>,
    opts: &serde_json::Map<String, Value>,
    mapping: &Mapping,
) -> Result<SortKey, String> {
    let by = sorted_by(name, mapping)?;
    let desc = match order {
        None => by == By::Score,
        Some("asc") => false,
        Some("desc") => true,
        Some(other) => {
            return Err(format!(
                "sort `{name}`: order is \"asc\" or \"desc\", got \"{other}\""
            ))
        }
    };
    // An alias sorts on its target's column.
    let column = mapping
        .field(name)
        .map_or(name.to_string(), |f| f.name.clone());
    let dates = mapping.field(name).and_then(|f| f.dates.clone());
    let shown = date_shown(name, opts, mapping)?;
    let mode = opts.get("mode").and_then(Value::as_str);
    let max = match mode {
        Some("max") => true,
        Some("min") => false,
        _ => desc,
    };
    Ok(SortKey {
        by,
        name: column,
        desc,
        geo: None,
        dates,
        shown,
        max,
        script: None,
    })
}

/// The top `limit` hits after a cursor, in sort order, with their keys.
pub struct TopAfter<'a> {
    pub sort: &'a Sort,
    /// The keyword keys' ordinals for the searcher this runs on ([`Sort::ordinals`]).
    pub ordinals: &'a Ordinals,
    pub after: Option<After>,
    pub limit: usize,
}

pub struct Hit {
    pub key: Key,
    pub address: DocAddress,
    pub score: Score,
}

impl PartialEq for Hit {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl Eq for Hit {}
impl PartialOrd for Hit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Hit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

pub struct SegmentTop {
    keys: Vec<SortKey>,
    columns: Vec<Option<Column<u64>>>,
    /// Per `_geo_distance` key: the field's point columns.
    points: Vec<Option<crate::dsl::scoring::Points>>,
    /// Per `_script` key: the script bound to this segment.
    scripts: Vec<Option<crate::dsl::doc_script::Bound>>,
    /// Per keyword key: the field's ordinals, and their keys in this segment.
    ordinals: Ordinals,
    segment: SegmentOrdinal,
    after: Option<After>,
    limit: usize,
    /// The best hits so far, the worst on top.
    heap: BinaryHeap<Hit>,
}

impl Collector for TopAfter<'_> {
    type Fruit = Vec<Hit>;
    type Child = SegmentTop;

    fn for_segment(
        &self,
        segment: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<SegmentTop> {
        let columns = self
            .sort
            .keys
            .iter()
            .map(|k| match k.by {
                By::Field(_) => reader
                    .fast_fields()
                    .u64_lenient(&k.name)
                    .map(|c| c.map(|(col, _)| col)),
                By::Keyword => reader
                    .fast_fields()
                    .str(&k.name)
                    .map(|c| c.map(|s| s.ords().clone())),
                _ => Ok(None),
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        let points = self
            .sort
            .keys
            .iter()
            .map(|k| match k.by {
                By::GeoDistance => crate::dsl::scoring::Points::open(reader, &k.name).map(Some),
                _ => Ok(None),
            })
            .collect::<tantivy::Result<Vec<_>>>()?;
        let scripts = self
            .sort
            .keys
            .iter()
            .map(|k| k.script.as_ref().map(|s| s.bound(reader)).transpose())
            .collect::<tantivy::Result<Vec<_>>>()?;
        Ok(SegmentTop {
            keys: self.sort.keys.clone(),
            columns,
            points,
            scripts,
            ordinals: self.ordinals.clone(),
            segment,
            after: self.after,
            limit: self.limit,
            heap: BinaryHeap::with_capacity(self.limit + 1),
        })
    }

    fn requires_scoring(&self) -> bool {
        self.sort.needs_scores()
    }

    fn merge_fruits(&self, fruits: Vec<Vec<Hit>>) -> tantivy::Result<Vec<Hit>> {
        let mut all: Vec<Hit> = fruits.into_iter().flatten().collect();
        all.sort_unstable();
        all.truncate(self.limit);
        Ok(all)
    }
}

impl SegmentCollector for SegmentTop {
    type Fruit = Vec<Hit>;

    fn collect(&mut self, doc: DocId, score: Score) {
        if self.limit == 0 {
            return;
        }
        let mut key = Key([0; MAX_KEYS]);
        for (i, k) in self.keys.iter().enumerate() {
            let raw = match k.by {
                By::Score => score_bits(score),
                By::Doc => (u64::from(self.segment) << 32) | u64::from(doc),
                // Documents without the field sort last, in either order, as in Elasticsearch.
                By::Field(_) => match self.columns[i].as_ref().and_then(|c| pick(c, doc, k.max)) {
                    Some(v) => v,
                    None => {
                        key.0[i] = u64::MAX;
                        continue;
                    }
                },
                By::Keyword => {
                    let rank = self.columns[i]
                        .as_ref()
                        .and_then(|c| pick(c, doc, k.max))
                        .and_then(|ord| self.ordinals.get(i)?.as_ref()?.key(self.segment, ord));
                    match rank {
                        Some(k) => k,
                        None => {
                            key.0[i] = u64::MAX;
                            continue;
                        }
                    }
                }
                By::Script => match self.scripts[i].as_mut().and_then(|s| s.number(doc, score)) {
                    Some(x) => tantivy::f64_to_u64(x),
                    None => {
                        key.0[i] = u64::MAX;
                        continue;
                    }
                },
                By::GeoDistance => {
                    let origin = k.geo.map_or((0.0, 0.0), |g| g.0);
                    match self.points[i].as_ref().and_then(|p| p.get(doc)) {
                        Some((lat, lon)) => tantivy::f64_to_u64(
                            crate::geo::distance::arc_distance(origin.0, origin.1, lat, lon),
                        ),
                        None => {
                            key.0[i] = u64::MAX;
                            continue;
                        }
                    }
                }
            };
            key.0[i] = if k.desc { !raw } else { raw };
        }
        if self.after.is_some_and(|a| !a.admits(&key)) {
            return;
        }
        if self.heap.len() < self.limit {
            self.heap.push(Hit {
                key,
                address: DocAddress::new(self.segment, doc),
                score,
            });
        } else if self.heap.peek().is_some_and(|worst| key < worst.key) {
            self.heap.pop();
            self.heap.push(Hit {
                key,
                address: DocAddress::new(self.segment, doc),
                score,
            });
        }
    }

    fn harvest(self) -> Vec<Hit> {
        self.heap.into_vec()
    }
}

mod options;
#[cfg(test)]
mod tests;
