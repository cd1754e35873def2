//! The buckets of the bucket aggregations above a `percentiles` (`terms`, `histogram`,
//! fixed-length `date_histogram`, `filter`, nested in one another), as its digests are
//! collected: each document's keys at each level, and a filter on the top level's shown
//! buckets so that the pass that collects them reads only their documents. A parent the
//! collector cannot bucket as tantivy does (a `missing` bucket, a script, a calendar month)
//! leaves the percentiles under it to tantivy's estimate.

use crate::mapping::FieldType;
use rustc_hash::{FxHashMap, FxHashSet};
use serde_json::{Map, Value};
use tantivy::columnar::{ColumnType, MonotonicallyMappableToU64, StrColumn};
use tantivy::{DocId, SegmentReader};

/// How the parent aggregation puts a document in a bucket.
#[derive(Debug, Clone, PartialEq)]
pub enum BucketBy {
    /// `terms` on a keyword field: each of the document's terms.
    Keywords { field: String },
    /// `terms` on a numeric field: each of its values.
    Numbers { field: String },
    /// `histogram` or a fixed-length `date_histogram`: `floor((v - offset) / interval)`,
    /// in the column's own unit (dates in milliseconds).
    Intervals {
        field: String,
        interval: f64,
        offset: f64,
        dates: bool,
    },
    /// `filter`: the documents its query matches, in its one bucket.
    Filter(FilterQuery),
}

/// A `filter` aggregation's query, compiled for the index.
#[derive(Clone)]
pub struct FilterQuery(pub std::sync::Arc<dyn tantivy::query::Query>);

impl std::fmt::Debug for FilterQuery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FilterQuery({:?})", self.0)
    }
}

impl PartialEq for FilterQuery {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The key of a `filter`'s one bucket.
const FILTER_KEY: u64 = 0;

/// The parent: its name in the response, and how it buckets.
#[derive(Debug, Clone, PartialEq)]
pub struct Parent {
    pub name: String,
    pub by: BucketBy,
}

/// A bucket's key as the response shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum BucketKey {
    Text(String),
    /// A number's bits (keys are compared as the response's numbers are).
    Number(u64),
}

impl BucketKey {
    /// A number's key (-0.0 as 0.0, as the response prints both).
    pub fn number(n: f64) -> BucketKey {
        BucketKey::Number((n + 0.0).to_bits())
    }

    /// A response bucket's `key`.
    pub fn of_json(key: &Value) -> Option<BucketKey> {
        match key {
            Value::String(s) => Some(BucketKey::Text(s.clone())),
            Value::Number(n) => n.as_f64().map(BucketKey::number),
            _ => None,
        }
    }
}

impl Parent {
    /// A `filter` named `name` matching `query`.
    pub fn filter(name: &str, query: Box<dyn tantivy::query::Query>) -> Parent {
        Parent {
            name: name.to_string(),
            by: BucketBy::Filter(FilterQuery(query.into())),
        }
    }

    /// The parent's buckets in a level of the response: each one's key, and its JSON
    /// pointer from that level (a `filter`'s one bucket is the aggregation itself).
    pub fn buckets(&self, level: &Value) -> Vec<(BucketKey, String)> {
        let Some(agg) = level.get(&self.name) else {
            return Vec::new();
        };
        let at = format!("/{}", self.name.replace('~', "~0").replace('/', "~1"));
        if let BucketBy::Filter(_) = self.by {
            return vec![(BucketKey::Number(FILTER_KEY), at)];
        }
        let buckets = agg.get("buckets").and_then(Value::as_array);
        buckets
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, b)| {
                let key = b.get("key").and_then(BucketKey::of_json)?;
                Some((key, format!("{at}/buckets/{i}")))
            })
            .collect()
    }

    /// The parent `kind` with its request `params` and tantivy's (`field` as tantivy names
    /// it), on a field mapped as `mapped`, when the collector buckets it as tantivy does
    /// (from the same column: keywords, numbers, dates).
    pub fn of(
        name: &str,
        kind: &str,
        params: &Map<String, Value>,
        tantivy: &Map<String, Value>,
        mapped: Option<&FieldType>,
    ) -> Option<Parent> {
        if params.contains_key("missing") || params.contains_key("script") {
            return None;
        }
        let field = tantivy.get("field")?.as_str()?.to_string();
        let number = matches!(mapped, Some(FieldType::Long | FieldType::Double));
        let by = match kind {
            "terms" if mapped == Some(&FieldType::Keyword) => BucketBy::Keywords { field },
            "terms" if number => BucketBy::Numbers { field },
            "histogram" if number => BucketBy::Intervals {
                field,
                interval: params.get("interval")?.as_f64().filter(|i| *i > 0.0)?,
                offset: params.get("offset").map_or(Some(0.0), Value::as_f64)?,
                dates: false,
            },
            // tantivy's parameters: a calendar interval of a fixed length is already a
            // `fixed_interval` there (a week, 7d from a Monday), a time zone other than UTC
            // refused; months, quarters and years never reach here (`auto_date`).
            "date_histogram" if mapped == Some(&FieldType::Date) => BucketBy::Intervals {
                field,
                interval: signed_millis(tantivy.get("fixed_interval")?.as_str()?)
                    .filter(|i| *i > 0.0)?,
                offset: match tantivy.get("offset") {
                    None => 0.0,
                    Some(o) => signed_millis(o.as_str()?)?,
                },
                dates: true,
            },
            _ => return None,
        };
        Some(Parent {
            name: name.to_string(),
            by,
        })
    }
}

/// A time value (`30s`, `-6h`, `7d`) in milliseconds, with its sign.
fn signed_millis(text: &str) -> Option<f64> {
    let (sign, magnitude) = match text.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, text.strip_prefix('+').unwrap_or(text)),
    };
    let d = crate::util::parse_time(magnitude).ok()?;
    Some(sign * d.as_secs_f64() * 1000.0)
}

/// How the pass over a parent's shown buckets reads documents.
pub enum ShownFilter {
    /// The parent shows no bucket: nothing to collect.
    Nothing,
    /// Only the documents of the shown buckets.
    Only(Box<dyn tantivy::query::Query>),
    /// Every match (more shown buckets than a filter is worth, or keys it cannot name).
    All,
}

impl Parent {
    /// A filter matching the documents of this (top-level) parent's buckets in the first
    /// pass's `answer`.
    pub fn shown_filter(&self, answer: &Value, schema: &tantivy::schema::Schema) -> ShownFilter {
        use std::ops::Bound;
        use tantivy::query::{BooleanQuery, Occur, Query, RangeQuery, TermSetQuery};
        use tantivy::schema::FieldType as Kind;
        use tantivy::Term;
        if let BucketBy::Filter(query) = &self.by {
            return match answer.get(&self.name) {
                Some(_) => ShownFilter::Only(query.0.box_clone()),
                None => ShownFilter::Nothing,
            };
        }
        let Some(buckets) = answer
            .get(&self.name)
            .and_then(|a| a.get("buckets"))
            .and_then(Value::as_array)
        else {
            return ShownFilter::All;
        };
        if buckets.is_empty() {
            return ShownFilter::Nothing;
        }
        // Past this many buckets the filter would cost more than the documents it skips.
        const MAX_FILTERED: usize = 1_000;
        if buckets.len() > MAX_FILTERED {
            return ShownFilter::All;
        }
        let shown = buckets.iter().filter_map(|b| b.get("key"));
        let name = match &self.by {
            BucketBy::Keywords { field }
            | BucketBy::Numbers { field }
            | BucketBy::Intervals { field, .. } => field,
            BucketBy::Filter(_) => return ShownFilter::All,
        };
        let Ok(field) = schema.get_field(name) else {
            return ShownFilter::All;
        };
        let kind = schema.get_field_entry(field).field_type().clone();
        // The term of a number in the field's own type (dates in milliseconds).
        let term = |n: f64| -> Option<Term> {
            Some(match kind {
                Kind::I64(_) => Term::from_field_i64(field, n as i64),
                Kind::U64(_) => Term::from_field_u64(field, n as u64),
                Kind::F64(_) => Term::from_field_f64(field, n),
                Kind::Date(_) => {
                    Term::from_field_date(field, tantivy::DateTime::from_timestamp_millis(n as i64))
                }
                _ => return None,
            })
        };
        let filter: Option<Box<dyn Query>> = match &self.by {
            BucketBy::Keywords { .. } => {
                let terms: Option<Vec<Term>> = shown
                    .map(|k| Some(Term::from_field_text(field, k.as_str()?)))
                    .collect();
                terms.map(|t| Box::new(TermSetQuery::new(t)) as Box<dyn Query>)
            }
            BucketBy::Numbers { .. } | BucketBy::Intervals { .. } => {
                let width = match &self.by {
                    BucketBy::Intervals { interval, .. } => Some(*interval),
                    _ => None,
                };
                let ranges: Option<Vec<(Occur, Box<dyn Query>)>> = shown
                    .map(|k| {
                        let k = k.as_f64()?;
                        let upper = match width {
                            Some(w) => Bound::Excluded(term(k + w)?),
                            None => Bound::Included(term(k)?),
                        };
                        let range: Box<dyn Query> =
                            Box::new(RangeQuery::new(Bound::Included(term(k)?), upper));
                        Some((Occur::Should, range))
                    })
                    .collect();
                ranges.map(|r| Box::new(BooleanQuery::new(r)) as Box<dyn Query>)
            }
            BucketBy::Filter(_) => None,
        };
        match filter {
            Some(f) => ShownFilter::Only(f),
            None => ShownFilter::All,
        }
    }
}

/// The bucket chains a pass collects: those the first pass's answer shows along the
/// parents (outermost first), each key numbered per level so that a document's chains are
/// a few integers, not strings.
#[derive(Debug, Default)]
pub struct Shown {
    ids: Vec<FxHashMap<BucketKey, u32>>,
    chains: FxHashSet<Vec<u32>>,
}

impl Shown {
    pub fn of(answer: &Value, parents: &[Parent]) -> Shown {
        let mut shown = Shown {
            ids: vec![FxHashMap::default(); parents.len()],
            chains: FxHashSet::default(),
        };
        shown.walk(answer, parents, &mut Vec::new());
        shown
    }

    fn walk(&mut self, level: &Value, parents: &[Parent], chain: &mut Vec<u32>) {
        let Some((parent, deeper)) = parents.split_first() else {
            self.chains.insert(chain.clone());
            return;
        };
        for (key, at) in parent.buckets(level) {
            let Some(bucket) = level.pointer(&at) else {
                continue;
            };
            let ids = &mut self.ids[chain.len()];
            let next = ids.len() as u32;
            chain.push(*ids.entry(key).or_insert(next));
            self.walk(bucket, deeper, chain);
            chain.pop();
        }
    }

    /// The number of `key` at `level`, if a shown chain has it.
    pub fn id(&self, level: usize, key: &BucketKey) -> Option<u32> {
        self.ids.get(level)?.get(key).copied()
    }

    pub fn contains(&self, chain: &[u32]) -> bool {
        self.chains.contains(chain)
    }
}

/// The numeric columns read: numbers, and dates (as epoch milliseconds, see [`number`]).
pub const NUMERIC: [ColumnType; 4] = [
    ColumnType::I64,
    ColumnType::U64,
    ColumnType::F64,
    ColumnType::DateTime,
];

/// A segment's reader of the parent's bucket keys.
pub enum KeyReader {
    Keywords(StrColumn),
    Numbers(tantivy::columnar::Column<u64>, ColumnType),
    Intervals {
        column: tantivy::columnar::Column<u64>,
        kind: ColumnType,
        interval: f64,
        offset: f64,
    },
    /// A `filter`'s matches in the segment, walked in step with the collected documents.
    Filter(Box<dyn tantivy::query::Scorer>),
    /// The segment has no values of the field: no document is in any bucket.
    Nothing,
}

/// A segment-local key: a keyword's ordinal (named at harvest) or a number's bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalKey {
    Ord(u64),
    Number(u64),
}

impl KeyReader {
    pub fn open(by: &BucketBy, reader: &SegmentReader) -> tantivy::Result<KeyReader> {
        let fast = reader.fast_fields();
        Ok(match by {
            BucketBy::Keywords { field } => match fast.str(field)? {
                Some(c) => KeyReader::Keywords(c),
                None => KeyReader::Nothing,
            },
            BucketBy::Numbers { field } => {
                match fast.u64_lenient_for_type(Some(&NUMERIC), field)? {
                    Some((c, kind)) => KeyReader::Numbers(c, kind),
                    None => KeyReader::Nothing,
                }
            }
            BucketBy::Intervals {
                field,
                interval,
                offset,
                dates,
            } => match fast.u64_lenient_for_type(Some(&NUMERIC), field)? {
                Some((column, kind)) if *dates == (kind == ColumnType::DateTime) => {
                    KeyReader::Intervals {
                        column,
                        kind,
                        interval: *interval,
                        offset: *offset,
                    }
                }
                Some(_) => KeyReader::Nothing,
                None => KeyReader::Nothing,
            },
            BucketBy::Filter(query) => {
                let scoring = tantivy::query::EnableScoring::disabled_from_schema(reader.schema());
                KeyReader::Filter(query.0.weight(scoring)?.scorer(reader, 1.0)?)
            }
        })
    }

    /// The buckets `doc` is in, into `out` (cleared first). Documents come in increasing
    /// order within a segment.
    pub fn keys(&mut self, doc: DocId, out: &mut Vec<LocalKey>) {
        out.clear();
        match self {
            KeyReader::Filter(matches) => {
                let mut at = matches.doc();
                if at < doc {
                    at = matches.seek(doc);
                }
                if at == doc {
                    out.push(LocalKey::Number(FILTER_KEY));
                }
            }
            KeyReader::Keywords(c) => out.extend(c.term_ords(doc).map(LocalKey::Ord)),
            KeyReader::Numbers(c, kind) => {
                for v in c.values_for_doc(doc) {
                    let key = LocalKey::Number((number(v, *kind) + 0.0).to_bits());
                    if !out.contains(&key) {
                        out.push(key);
                    }
                }
            }
            KeyReader::Intervals {
                column,
                kind,
                interval,
                offset,
            } => {
                let (interval, offset) = (*interval, *offset);
                for v in column.values_for_doc(doc) {
                    // Dates are bucketed in milliseconds, as their keys are.
                    let v = match kind {
                        ColumnType::DateTime => millis(v) as f64,
                        _ => number(v, *kind),
                    };
                    let start = ((v - offset) / interval).floor() * interval + offset + 0.0;
                    let key = LocalKey::Number(start.to_bits());
                    if !out.contains(&key) {
                        out.push(key);
                    }
                }
            }
            KeyReader::Nothing => {}
        }
    }

    /// A segment-local key as the response shows it (dates in milliseconds).
    pub fn shown(&self, key: LocalKey) -> Option<BucketKey> {
        match (self, key) {
            (KeyReader::Keywords(c), LocalKey::Ord(ord)) => {
                let mut text = String::new();
                c.ord_to_str(ord, &mut text)
                    .ok()?
                    .then_some(BucketKey::Text(text))
            }
            (_, LocalKey::Number(bits)) => Some(BucketKey::Number(bits)),
            _ => None,
        }
    }
}

/// A column's raw value as a number (dates as milliseconds).
pub fn number(raw: u64, kind: ColumnType) -> f64 {
    match kind {
        ColumnType::I64 => i64::from_u64(raw) as f64,
        ColumnType::F64 => f64::from_u64(raw),
        ColumnType::DateTime => millis(raw) as f64,
        _ => raw as f64,
    }
}

/// A date column's raw value in milliseconds since the epoch.
fn millis(raw: u64) -> i64 {
    tantivy::DateTime::from_u64(raw).into_timestamp_millis()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_are_read_from_tantivys_parameters() {
        assert_eq!(signed_millis("30s"), Some(30_000.0));
        assert_eq!(signed_millis("-6h"), Some(-21_600_000.0));
        let params = |v: Value| v.as_object().unwrap().clone();
        let given = params(serde_json::json!({"field": "at", "calendar_interval": "week"}));
        let week =
            params(serde_json::json!({"field": "at", "fixed_interval": "7d", "offset": "4d"}));
        assert!(matches!(
            Parent::of("w", "date_histogram", &given, &week, Some(&FieldType::Date))
                .unwrap()
                .by,
            BucketBy::Intervals { interval, offset, dates: true, .. }
                if interval == 604_800_000.0 && offset == 345_600_000.0
        ));
        let missing = params(serde_json::json!({"field": "at", "missing": "x"}));
        let keyword = Some(&FieldType::Keyword);
        assert_eq!(Parent::of("t", "terms", &missing, &week, keyword), None);
        // A parent on a column the collector does not read as tantivy buckets it.
        let at = params(serde_json::json!({"field": "at"}));
        assert_eq!(
            Parent::of("b", "terms", &at, &at, Some(&FieldType::Boolean)),
            None
        );
        assert_eq!(
            Parent::of("d", "date_histogram", &given, &week, Some(&FieldType::Long)),
            None
        );
        let no_interval = params(serde_json::json!({"field": "at"}));
        assert_eq!(
            Parent::of(
                "h",
                "date_histogram",
                &given,
                &no_interval,
                Some(&FieldType::Date)
            ),
            None
        );
    }
}
