//! Percentiles as Elasticsearch computes them on few values. Its t-digest keeps every value
//! while there are few (its HybridDigest is a sorting digest below `round(compression) * 20`
//! values, 2,000 by default, then a merging one) and interpolates
//! between them, so `percentiles` of {1, 51, 101, 151} is exactly 26 at the 25th. tantivy's
//! sketch is relative-error (1.01 where Elasticsearch says 1.0), so a top-level `percentiles`
//! also collects its values here, up to that bound, and answers exactly when it holds them
//! all; past it, both are estimates and tantivy's stands. One directly under a top-level
//! bucket aggregation is collected per bucket by a [`SecondPass`] over its small buckets.

use super::exact_buckets::{number, BucketKey, KeyReader, LocalKey, Parent};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::Arc;
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{Column, ColumnType};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Elasticsearch's default t-digest `compression`.
pub const DEFAULT_COMPRESSION: f64 = 100.0;

/// The most values one percentiles aggregation holds exactly, per search (or per bucket).
pub const MAX_HELD: usize = 10_000;

/// The most values one percentiles under a parent holds over all its buckets (8 MB); past
/// it, the estimate stands for every bucket.
const MAX_HELD_IN_BUCKETS: usize = 1_000_000;

/// Elasticsearch's default `percents`.
pub const DEFAULT_PERCENTS: [f64; 7] = [1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0];

#[derive(Debug, Clone)]
pub struct ExactPercentiles {
    pub name: String,
    /// The column read (tantivy's field name).
    pub field: String,
    pub missing: Option<f64>,
    pub percents: Vec<f64>,
    pub keyed: bool,
    /// The most values held exactly (in each bucket, under a parent).
    pub cap: usize,
    /// The top-level bucket aggregation it is directly under, if any.
    pub parent: Option<Parent>,
}

/// The most buckets one percentiles under a parent holds values for; past it, tantivy's
/// estimate stands for every bucket.
const MAX_BUCKETS: usize = 10_000;

#[derive(Debug, Clone, Default)]
pub struct ExactAggs(pub Arc<Vec<ExactPercentiles>>);

/// Per aggregation: every value (or each bucket's), or None past its bound.
#[derive(Debug, Default)]
pub struct ExactResults(Vec<Held<BucketKey>>);

/// What one aggregation holds: its values, or each bucket's (None for a bucket past its
/// bound); the whole None past the bucket bound.
#[derive(Debug)]
pub enum Held<K> {
    Flat(Option<Vec<f64>>),
    Buckets(Option<HashMap<K, Option<Vec<f64>>>>),
}

impl<K> Held<K> {
    fn empty(agg: &ExactPercentiles) -> Held<K> {
        match agg.parent {
            None => Held::Flat(Some(Vec::new())),
            Some(_) => Held::Buckets(Some(HashMap::new())),
        }
    }
}

pub struct ExactSegment {
    aggs: Arc<Vec<ExactPercentiles>>,
    columns: Vec<Option<(Column<u64>, ColumnType)>>,
    keys: Vec<Option<KeyReader>>,
    values: Vec<Held<LocalKey>>,
    /// The buckets of the document being collected (reused).
    scratch: Vec<LocalKey>,
    /// The values of the document being collected (reused).
    doc_values: Vec<f64>,
    /// Per aggregation, the values held over all its buckets.
    held_in_buckets: Vec<usize>,
}

const NUMERIC: [ColumnType; 3] = [ColumnType::I64, ColumnType::U64, ColumnType::F64];

impl Collector for ExactAggs {
    type Fruit = ExactResults;
    type Child = ExactSegment;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<ExactSegment> {
        let columns = self
            .0
            .iter()
            .map(|a| {
                reader
                    .fast_fields()
                    .u64_lenient_for_type(Some(&NUMERIC), &a.field)
            })
            .collect::<tantivy::Result<_>>()?;
        let keys = self
            .0
            .iter()
            .map(|a| {
                a.parent
                    .as_ref()
                    .map(|p| KeyReader::open(&p.by, reader))
                    .transpose()
            })
            .collect::<tantivy::Result<_>>()?;
        Ok(ExactSegment {
            aggs: self.0.clone(),
            columns,
            keys,
            values: self.0.iter().map(Held::empty).collect(),
            scratch: Vec::new(),
            doc_values: Vec::new(),
            held_in_buckets: vec![0; self.0.len()],
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<ExactResults>) -> tantivy::Result<ExactResults> {
        let mut all: Vec<Held<BucketKey>> = self.0.iter().map(Held::empty).collect();
        for fruit in fruits {
            for ((into, from), agg) in all.iter_mut().zip(fruit.0).zip(self.0.iter()) {
                merge_held(into, from, agg.cap);
            }
        }
        Ok(ExactResults(all))
    }
}

/// Two parts' values together, each bucket's and the whole within their bounds.
fn merge_held(into: &mut Held<BucketKey>, from: Held<BucketKey>, cap: usize) {
    let joined = |a: Option<Vec<f64>>, b: Option<Vec<f64>>| match (a, b) {
        (Some(mut a), Some(b)) if a.len() + b.len() <= cap => {
            a.extend(b);
            Some(a)
        }
        _ => None,
    };
    *into = match (std::mem::replace(into, Held::Flat(None)), from) {
        (Held::Flat(a), Held::Flat(b)) => Held::Flat(joined(a, b)),
        (Held::Buckets(Some(mut a)), Held::Buckets(Some(b))) => {
            for (k, v) in b {
                let merged = match a.remove(&k) {
                    Some(mine) => joined(mine, v),
                    None => v,
                };
                a.insert(k, merged);
            }
            let held: usize = a.values().flatten().map(Vec::len).sum();
            match a.len() <= MAX_BUCKETS && held <= MAX_HELD_IN_BUCKETS {
                true => Held::Buckets(Some(a)),
                false => Held::Buckets(None),
            }
        }
        (Held::Buckets(_), _) | (_, Held::Buckets(_)) => Held::Buckets(None),
    };
}

impl SegmentCollector for ExactSegment {
    type Fruit = ExactResults;

    fn collect(&mut self, doc: DocId, _: Score) {
        for (i, agg) in self.aggs.iter().enumerate() {
            match &mut self.values[i] {
                Held::Flat(None) | Held::Buckets(None) => {}
                Held::Flat(Some(held)) => {
                    read_values(&self.columns[i], agg, doc, held);
                    if held.len() > agg.cap {
                        self.values[i] = Held::Flat(None);
                    }
                }
                Held::Buckets(Some(buckets)) => {
                    let Some(keys) = &self.keys[i] else { continue };
                    keys.keys(doc, &mut self.scratch);
                    self.doc_values.clear();
                    read_values(&self.columns[i], agg, doc, &mut self.doc_values);
                    for key in &self.scratch {
                        let held = buckets.entry(*key).or_insert_with(|| Some(Vec::new()));
                        if let Some(h) = held {
                            h.extend_from_slice(&self.doc_values);
                            self.held_in_buckets[i] += self.doc_values.len();
                            if h.len() > agg.cap {
                                *held = None;
                            }
                        }
                    }
                    if buckets.len() > MAX_BUCKETS || self.held_in_buckets[i] > MAX_HELD_IN_BUCKETS
                    {
                        self.values[i] = Held::Buckets(None);
                    }
                }
            }
        }
    }

    fn harvest(self) -> ExactResults {
        let keys = self.keys;
        let held = self
            .values
            .into_iter()
            .zip(keys)
            .map(|(held, reader)| match (held, reader) {
                (Held::Flat(v), _) => Held::Flat(v),
                (Held::Buckets(Some(b)), Some(reader)) => Held::Buckets(
                    b.into_iter()
                        .map(|(k, v)| reader.shown(k).map(|k| (k, v)))
                        .collect(),
                ),
                (Held::Buckets(_), _) => Held::Buckets(None),
            })
            .collect();
        ExactResults(held)
    }
}

/// A document's values of the percentiles' field (its `missing` when it has none), into `out`.
fn read_values(
    column: &Option<(Column<u64>, ColumnType)>,
    agg: &ExactPercentiles,
    doc: DocId,
    out: &mut Vec<f64>,
) {
    let before = out.len();
    if let Some((column, kind)) = column {
        out.extend(column.values_for_doc(doc).map(|v| number(v, *kind)));
    }
    if out.len() == before {
        out.extend(agg.missing);
    }
}

/// The `q`-th quantile of sorted values as Elasticsearch's sorting digest gives it: each
/// value the centre of its own weight, linear between centres, the extremes beyond.
pub fn quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let n = sorted.len();
    match n {
        0 => return None,
        1 => return Some(sorted[0]),
        _ => {}
    }
    let index = q * n as f64;
    if index <= 0.5 {
        return Some(sorted[0]);
    }
    if index >= n as f64 - 0.5 {
        return Some(sorted[n - 1]);
    }
    let position = index - 0.5;
    let lower = position.floor() as usize;
    let fraction = position - lower as f64;
    Some(sorted[lower] + fraction * (sorted[lower + 1] - sorted[lower]))
}

impl ExactAggs {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Puts the exact answers in `aggregations` (the response's), where the values were
    /// all held.
    pub fn apply(&self, results: &ExactResults, aggregations: &mut Value) {
        for (agg, held) in self.0.iter().zip(&results.0) {
            match (held, &agg.parent) {
                (Held::Flat(Some(values)), _) => agg.show(values, aggregations),
                (Held::Buckets(Some(buckets)), Some(parent)) => {
                    let Some(list) = aggregations
                        .get_mut(&parent.name)
                        .and_then(|p| p.get_mut("buckets"))
                        .and_then(Value::as_array_mut)
                    else {
                        continue;
                    };
                    for bucket in list {
                        let Some(key) = bucket.get("key").cloned() else {
                            continue;
                        };
                        let found = buckets.iter().find(|(k, _)| k.is(&key));
                        if let Some((_, Some(values))) = found {
                            agg.show(values, bucket);
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl ExactPercentiles {
    /// Puts the exact answer of `values` in the aggregation's slot under `parent`.
    fn show(&self, values: &[f64], parent: &mut Value) {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let answers = self
            .percents
            .iter()
            .map(|p| (*p, quantile(&sorted, p / 100.0)));
        let shown = if self.keyed {
            Value::Object(
                answers
                    .map(|(p, v)| (super::points::java_double(p), json!(v)))
                    .collect::<Map<_, _>>(),
            )
        } else {
            Value::Array(
                answers
                    .map(|(p, v)| json!({ "key": p, "value": v }))
                    .collect(),
            )
        };
        if let Some(slot) = parent.get_mut(&self.name) {
            slot["values"] = shown;
        }
    }
}

/// The percentiles under top-level bucket aggregations, run after the search's own pass over
/// the documents of the buckets it found small (see `exact_buckets`).
pub struct SecondPass {
    pub aggs: Arc<Vec<ExactPercentiles>>,
    pub query: Box<dyn tantivy::query::Query>,
    pub searcher: tantivy::Searcher,
}

impl SecondPass {
    /// Each percentiles' values in the small buckets of `first` (the first pass's answer).
    pub fn run(&self, first: &Value) -> tantivy::Result<Vec<(ExactAggs, ExactResults)>> {
        use tantivy::query::{BooleanQuery, Occur};
        let mut out = Vec::new();
        for agg in self.aggs.iter() {
            let Some(parent) = &agg.parent else { continue };
            let Some(filter) = parent.small_buckets(first, agg.cap, self.searcher.schema()) else {
                continue;
            };
            let query = BooleanQuery::new(vec![
                (Occur::Must, self.query.box_clone()),
                (Occur::Must, filter),
            ]);
            let collector = ExactAggs(Arc::new(vec![agg.clone()]));
            let held = self.searcher.search(&query, &collector)?;
            out.push((collector, held));
        }
        Ok(out)
    }
}

/// `percentiles`' own parameters, checked as Elasticsearch checks them: `percents` a
/// non-empty list of numbers; `tdigest.compression` (which bounds how many values are held
/// exactly, see `exact`) not negative; HDR histograms are another estimate, not run here.
pub(super) fn percentiles_params(p: &mut Map<String, Value>, at: &str) -> Result<(), String> {
    if p.contains_key("hdr") {
        return Err(format!("aggregation `{at}`: `percentiles` with `hdr` is not run by the embedded engine (it estimates as t-digest does)"));
    }
    if let Some(t) = p.remove("tdigest") {
        let known = ["compression", "execution_hint"];
        if let Some(k) = t
            .as_object()
            .and_then(|o| o.keys().find(|k| !known.contains(&k.as_str())))
        {
            return Err(format!(
                "aggregation `{at}`: `tdigest` parameter `{k}` is not run by the embedded engine"
            ));
        }
        if let Some(c) = t.get("compression").and_then(Value::as_f64) {
            if c < 0.0 {
                return Err(format!(
                    "[compression] must be greater than or equal to 0. Found [{c:?}] in [{at}]"
                ));
            }
        }
    }
    match p.get("percents") {
        None => {}
        Some(Value::Null) => return Err(format!("[percents] must not be null: [{at}]")),
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(format!("[percents] must not be empty: [{at}]"))
        }
        Some(Value::Array(items)) => {
            if let Some(bad) = items
                .iter()
                .find(|i| !i.as_f64().is_some_and(|x| (0.0..=100.0).contains(&x)))
            {
                return Err(format!(
                    "aggregation `{at}`: percent {bad} is not a number from 0 to 100"
                ));
            }
        }
        Some(other) => {
            return Err(format!(
                "aggregation `{at}`: [percents] must be a list of numbers, got {other}"
            ))
        }
    }
    Ok(())
}

/// A top-level `percentiles` (or one directly under `parent`) as the exact collector runs it
/// (the field as tantivy reads it).
pub(super) fn exact_percentiles(
    name: &str,
    given: &Map<String, Value>,
    tantivy: &Map<String, Value>,
    parent: Option<Parent>,
) -> ExactPercentiles {
    let compression = given
        .get("tdigest")
        .and_then(|t| t.get("compression"))
        .and_then(Value::as_f64)
        .unwrap_or(DEFAULT_COMPRESSION);
    ExactPercentiles {
        name: name.to_string(),
        field: tantivy
            .get("field")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        missing: given.get("missing").and_then(Value::as_f64),
        percents: given
            .get("percents")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_else(|| DEFAULT_PERCENTS.to_vec()),
        keyed: given.get("keyed").and_then(Value::as_bool).unwrap_or(true),
        // Exact below HybridDigest's switch (`round(compression) * 20` values, the last
        // value added reaching it switches); bounded whatever `compression` a request names:
        // past it, the estimate stands.
        cap: (compression.round() * 20.0 - 1.0).clamp(1.0, MAX_HELD as f64) as usize,
        parent,
    }
}

#[cfg(test)]
mod tests {
    use super::quantile;

    #[test]
    fn few_values_interpolate_as_elasticsearch_does() {
        let four = [1.0, 51.0, 101.0, 151.0];
        let at = |q: f64| quantile(&four, q).unwrap();
        assert_eq!(
            [
                at(0.01),
                at(0.05),
                at(0.25),
                at(0.5),
                at(0.75),
                at(0.95),
                at(0.99)
            ],
            [1.0, 1.0, 26.0, 76.0, 126.0, 151.0, 151.0]
        );
        let three = [51.0, 101.0, 151.0];
        assert_eq!(quantile(&three, 0.25), Some(63.5));
        assert_eq!(quantile(&three, 0.75), Some(138.5));
        // The issue's own example: {1, 2, 2} has its median at 2, not 1.99.
        assert_eq!(quantile(&[1.0, 2.0, 2.0], 0.5), Some(2.0));
        assert_eq!(quantile(&[], 0.5), None);
    }
}
