//! `percentiles` as Elasticsearch computes them: one t-digest per shard (an index here) and
//! bucket ([`super::tdigest`]), fed as Elasticsearch feeds it (documents in index order,
//! segment after segment; a document's values ascending), exact below
//! `round(compression) * 20` values and Elasticsearch's own estimate past them. At the top
//! level they are collected in the search's own pass and answer alone. Under bucket
//! aggregations (`terms`, `histogram`, fixed-length `date_histogram`, `filter`, nested) a
//! second pass collects them over the documents of the buckets the first pass showed
//! ([`SecondPass`]); they are the answer there too, in tantivy's layout of the buckets.

use super::bucket_keys::{number, KeyReader, LocalKey, Parent, Shown, ShownFilter, NUMERIC};
use super::tdigest::Digest;
use rustc_hash::FxHashMap;
use serde_json::{json, Map, Value};
use std::sync::{Arc, Mutex};
use tantivy::collector::{Collector, SegmentCollector};
use tantivy::columnar::{Column, ColumnType};
use tantivy::{DocId, Score, SegmentOrdinal, SegmentReader};

/// Elasticsearch's default t-digest `compression`.
pub const DEFAULT_COMPRESSION: f64 = 100.0;

/// Elasticsearch's default `percents`.
pub const DEFAULT_PERCENTS: [f64; 7] = [1.0, 5.0, 25.0, 50.0, 75.0, 95.0, 99.0];

/// The most bytes one search's digests hold (Elasticsearch's request circuit breaker plays
/// this part there); past it the search fails, naming the bound. (Smaller under test, where
/// a test reaches it.)
const MAX_DIGEST_BYTES: usize = if cfg!(test) { 1 << 20 } else { 256 << 20 };

/// What a bucket's entry costs beside its digest (the map's slot, the key chain).
const BUCKET_OVERHEAD: usize = 160;

#[derive(Debug, Clone)]
pub struct PercentilesAgg {
    pub name: String,
    /// The column read (tantivy's field name).
    pub field: String,
    pub missing: Option<f64>,
    pub percents: Vec<f64>,
    pub keyed: bool,
    pub compression: f64,
    /// The bucket aggregations it is under, outermost first (none at the top level).
    pub parents: Vec<Parent>,
    /// On a date field: how its answers print (`<percent>_as_string`).
    pub dates: Option<(crate::mapping::dates::DateFormats, crate::zone::Zone)>,
}

/// One aggregation's digests: one, or one per shown chain of bucket keys (numbered).
#[derive(Debug, Clone)]
enum Digests {
    One(Digest),
    Buckets {
        shown: Arc<Shown>,
        digests: FxHashMap<Vec<u32>, Digest>,
    },
}

/// What a pass collected: each aggregation's digests, their bytes, and the error that
/// stopped it, if the bound did.
#[derive(Debug, Clone)]
pub struct Collected {
    digests: Vec<Digests>,
    bytes: usize,
    over: Option<String>,
}

impl Collected {
    fn new(aggs: &[PercentilesAgg], shown: &[Option<Arc<Shown>>]) -> Collected {
        let digests = aggs
            .iter()
            .zip(shown)
            .map(|(a, shown)| match shown {
                None => Digests::One(Digest::new(a.compression)),
                Some(shown) => Digests::Buckets {
                    shown: shown.clone(),
                    digests: FxHashMap::default(),
                },
            })
            .collect();
        Collected {
            digests,
            bytes: 0,
            over: None,
        }
    }

    /// The chains each aggregation collected (None at the top level).
    fn shown(&self) -> Vec<Option<Arc<Shown>>> {
        self.digests
            .iter()
            .map(|d| match d {
                Digests::One(_) => None,
                Digests::Buckets { shown, .. } => Some(shown.clone()),
            })
            .collect()
    }

    /// Merges what is pending in every digest, so that answers are read without changing it.
    fn settle(&mut self) {
        for d in &mut self.digests {
            match d {
                Digests::One(d) => d.settle(),
                Digests::Buckets { digests, .. } => digests.values_mut().for_each(Digest::settle),
            }
        }
    }
}

/// Several shards' (indices') top-level digests as Elasticsearch reduces them: one shard's
/// stand as they are; several are added, in order, to fresh digests.
pub fn reduce(aggs: &[PercentilesAgg], parts: Vec<Collected>) -> Collected {
    reduce_parts(aggs, &vec![None; aggs.len()], parts)
}

/// As [`reduce`], of parts that collected the chains `shown`.
fn reduce_parts(
    aggs: &[PercentilesAgg],
    shown: &[Option<Arc<Shown>>],
    mut parts: Vec<Collected>,
) -> Collected {
    if parts.len() == 1 {
        return parts.remove(0);
    }
    let mut all = Collected::new(aggs, shown);
    // Each bucket's digests from the parts that have it, in the parts' order.
    let mut buckets: Vec<FxHashMap<Vec<u32>, Vec<Digest>>> = vec![FxHashMap::default(); aggs.len()];
    for mut part in parts {
        all.over = all.over.or(part.over.take());
        all.bytes += part.bytes;
        for ((into, from), per_bucket) in all.digests.iter_mut().zip(part.digests).zip(&mut buckets)
        {
            match (into, from) {
                (Digests::One(into), Digests::One(mut from)) => into.add_digest(&mut from),
                (Digests::Buckets { .. }, Digests::Buckets { digests, .. }) => {
                    for (key, from) in digests {
                        per_bucket.entry(key).or_default().push(from);
                    }
                }
                _ => {}
            }
        }
    }
    for ((into, per_bucket), agg) in all.digests.iter_mut().zip(buckets).zip(aggs) {
        let Digests::Buckets { digests, .. } = into else {
            continue;
        };
        for (key, mut parts) in per_bucket {
            digests.insert(key, reduce_bucket(&mut parts, agg.compression));
        }
    }
    all.settle();
    all
}

/// A bucket's digests from the parts that have it: one part's stands as it is
/// (Elasticsearch reduces nothing for a bucket one shard has); several are a fresh digest
/// adding each in turn.
fn reduce_bucket(parts: &mut Vec<Digest>, compression: f64) -> Digest {
    if parts.len() == 1 {
        return parts.remove(0);
    }
    let mut fresh = Digest::new(compression);
    for part in parts {
        fresh.add_digest(part);
    }
    fresh
}

/// Several indices' second-pass answers (each index's, in the order of the indices' names),
/// reduced per aggregation as shards' are. Every index ran the same aggregations over the
/// same shown buckets (the merged answer's), so their chains are numbered alike.
pub fn reduce_buckets(per_index: Vec<BucketAnswers>) -> BucketAnswers {
    let mut per_index = per_index.into_iter();
    let Some(first) = per_index.next() else {
        return Vec::new();
    };
    let mut parts: Vec<(PercentilesAgg, Vec<Collected>)> =
        first.into_iter().map(|(agg, c)| (agg, vec![c])).collect();
    for answers in per_index {
        for ((_, into), (_, c)) in parts.iter_mut().zip(answers) {
            into.push(c);
        }
    }
    parts
        .into_iter()
        .map(|(agg, collected)| {
            let shown = collected.first().map(Collected::shown).unwrap_or_default();
            let reduced = reduce_parts(std::slice::from_ref(&agg), &shown, collected);
            (agg, reduced)
        })
        .collect()
}

/// The collector of one pass's percentiles. Its segments hand their digests on to the next
/// (tantivy collects them one after another), so that each digest sees the values of the
/// whole index in order, as an Elasticsearch shard's does; segments collected at once would
/// each start their own, reduced after.
pub struct DigestCollector {
    aggs: Arc<Vec<PercentilesAgg>>,
    /// Per aggregation under parents, the key chains the first pass showed.
    shown: Arc<Vec<Option<Arc<Shown>>>>,
    carried: Arc<Mutex<Option<Collected>>>,
}

impl DigestCollector {
    /// A collector for one search's top-level percentiles.
    pub fn top_level(aggs: Arc<Vec<PercentilesAgg>>) -> DigestCollector {
        let shown = Arc::new(vec![None; aggs.len()]);
        DigestCollector {
            aggs,
            shown,
            carried: Arc::new(Mutex::new(None)),
        }
    }
}

pub struct DigestSegment {
    aggs: Arc<Vec<PercentilesAgg>>,
    columns: Vec<Option<(Column<u64>, ColumnType)>>,
    /// Per aggregation, per parent: its key reader and the keys it has named.
    levels: Vec<Vec<KeyLevel>>,
    collected: Collected,
    carried: Arc<Mutex<Option<Collected>>>,
    /// Scratch: the document's values, its keys at each level, one chain.
    doc_values: Vec<f64>,
    local: Vec<LocalKey>,
    keys: Vec<Vec<u32>>,
    chain: Vec<u32>,
    /// Scratch: which key of each level the chain being visited takes.
    at: Vec<usize>,
}

struct KeyLevel {
    reader: KeyReader,
    /// Segment-local keys as numbered in the shown chains (each looked up once per
    /// segment); None for a key no shown chain has.
    ids: FxHashMap<LocalKey, Option<u32>>,
}

impl Collector for DigestCollector {
    type Fruit = Collected;
    type Child = DigestSegment;

    fn for_segment(
        &self,
        _: SegmentOrdinal,
        reader: &SegmentReader,
    ) -> tantivy::Result<DigestSegment> {
        let columns = self
            .aggs
            .iter()
            .map(|a| {
                reader
                    .fast_fields()
                    .u64_lenient_for_type(Some(&NUMERIC), &a.field)
            })
            .collect::<tantivy::Result<_>>()?;
        let levels = self
            .aggs
            .iter()
            .map(|a| {
                a.parents
                    .iter()
                    .map(|p| {
                        Ok(KeyLevel {
                            reader: KeyReader::open(&p.by, reader)?,
                            ids: FxHashMap::default(),
                        })
                    })
                    .collect::<tantivy::Result<Vec<_>>>()
            })
            .collect::<tantivy::Result<_>>()?;
        let carried = self.carried.lock().map(|mut c| c.take()).unwrap_or(None);
        Ok(DigestSegment {
            aggs: self.aggs.clone(),
            columns,
            levels,
            collected: carried.unwrap_or_else(|| Collected::new(&self.aggs, &self.shown)),
            carried: self.carried.clone(),
            doc_values: Vec::new(),
            local: Vec::new(),
            keys: Vec::new(),
            chain: Vec::new(),
            at: Vec::new(),
        })
    }

    fn requires_scoring(&self) -> bool {
        false
    }

    fn merge_fruits(&self, fruits: Vec<Option<Collected>>) -> tantivy::Result<Collected> {
        let carried = self.carried.lock().map(|mut c| c.take()).unwrap_or(None);
        let parts: Vec<Collected> = carried
            .into_iter()
            .chain(fruits.into_iter().flatten())
            .collect();
        let mut all = match parts.is_empty() {
            true => Collected::new(&self.aggs, &self.shown),
            false => reduce_parts(&self.aggs, &self.shown, parts),
        };
        all.settle();
        Ok(all)
    }
}

impl SegmentCollector for DigestSegment {
    /// None when the segment handed its digests on to the next.
    type Fruit = Option<Collected>;

    fn collect(&mut self, doc: DocId, _: Score) {
        for i in 0..self.aggs.len() {
            if self.collected.over.is_some() {
                return;
            }
            let agg = &self.aggs[i];
            self.doc_values.clear();
            read_values(&self.columns[i], agg, doc, &mut self.doc_values);
            if self.doc_values.is_empty() {
                continue;
            }
            // Elasticsearch reads a document's values ascending (sorted doc values).
            self.doc_values.sort_by(f64::total_cmp);
            if agg.parents.is_empty() {
                let Digests::One(digest) = &mut self.collected.digests[i] else {
                    continue;
                };
                let used = add_all(digest, &self.doc_values);
                self.account(used, i);
            } else {
                self.collect_in_buckets(i, doc);
            }
        }
    }

    fn harvest(self) -> Option<Collected> {
        // Handed on to the next segment, unless another segment's digests are there (a
        // collection in parallel): then this segment's are its own part.
        match self.carried.lock() {
            Ok(mut slot) if slot.is_none() => {
                *slot = Some(self.collected);
                None
            }
            _ => Some(self.collected),
        }
    }
}

/// Adds `values` to `digest`; the change in the bytes it holds.
fn add_all(digest: &mut Digest, values: &[f64]) -> isize {
    let before = digest.bytes() as isize;
    for v in values {
        digest.add(*v, 1);
    }
    digest.bytes() as isize - before
}

impl DigestSegment {
    /// The document's values into the digest of each shown bucket chain it is in.
    fn collect_in_buckets(&mut self, i: usize, doc: DocId) {
        let Digests::Buckets { shown, digests } = &mut self.collected.digests[i] else {
            return;
        };
        let levels = &mut self.levels[i];
        self.keys.resize_with(levels.len(), Vec::new);
        let mut used = 0isize;
        let mut complete = true;
        for (l, (level, keys)) in levels.iter_mut().zip(self.keys.iter_mut()).enumerate() {
            level.reader.keys(doc, &mut self.local);
            keys.clear();
            let KeyLevel { reader, ids } = level;
            for local in &self.local {
                let id = ids.entry(*local).or_insert_with(|| {
                    used += BUCKET_OVERHEAD as isize;
                    reader.shown(*local).and_then(|k| shown.id(l, &k))
                });
                keys.extend(*id);
            }
            if keys.is_empty() {
                complete = false;
                break;
            }
        }
        if complete {
            let compression = self.aggs[i].compression;
            // Every chain of one key per level (a document with two terms is in both
            // buckets), the innermost level turning fastest.
            let at = &mut self.at;
            at.clear();
            at.resize(self.keys.len(), 0);
            'chains: loop {
                self.chain.clear();
                self.chain
                    .extend(at.iter().zip(&self.keys).map(|(k, keys)| keys[*k]));
                let digest = match digests.get_mut(self.chain.as_slice()) {
                    Some(d) => Some(d),
                    None if shown.contains(&self.chain) => {
                        used += BUCKET_OVERHEAD as isize;
                        Some(
                            digests
                                .entry(self.chain.clone())
                                .or_insert_with(|| Digest::new(compression)),
                        )
                    }
                    None => None,
                };
                if let Some(digest) = digest {
                    used += add_all(digest, &self.doc_values);
                }
                let mut level = at.len();
                loop {
                    if level == 0 {
                        break 'chains;
                    }
                    level -= 1;
                    at[level] += 1;
                    if at[level] < self.keys[level].len() {
                        break;
                    }
                    at[level] = 0;
                }
            }
        }
        self.account(used, i);
    }

    /// Counts `used` bytes against the bound; past it, the pass stops with an error.
    fn account(&mut self, used: isize, i: usize) {
        let c = &mut self.collected;
        c.bytes = c.bytes.saturating_add_signed(used);
        if c.bytes > MAX_DIGEST_BYTES && c.over.is_none() {
            c.over = Some(format!(
                "[request] Data too large: the t-digests of percentiles [{}] would hold more than the embedded engine's bound of {} bytes for one search",
                self.aggs[i].name,
                MAX_DIGEST_BYTES
            ));
        }
    }
}

/// A document's values of the percentiles' field (its `missing` when it has none), into `out`.
fn read_values(
    column: &Option<(Column<u64>, ColumnType)>,
    agg: &PercentilesAgg,
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

/// Puts each aggregation's answers in `aggregations` (the response's): at the top level, or
/// in each bucket along its parents.
pub fn apply(
    aggs: &[PercentilesAgg],
    collected: &Collected,
    aggregations: &mut Value,
) -> Result<(), String> {
    if let Some(over) = &collected.over {
        return Err(over.clone());
    }
    for (agg, digests) in aggs.iter().zip(&collected.digests) {
        match digests {
            Digests::One(d) => agg.show(Some(d), aggregations),
            Digests::Buckets { shown, digests } => {
                let mut chain = Vec::new();
                agg.show_in_buckets(&agg.parents, (shown, digests), aggregations, &mut chain);
            }
        }
    }
    Ok(())
}

impl PercentilesAgg {
    /// Puts the answer of `digest` (nulls without one: a bucket with no values) in the
    /// aggregation's slot under `parent`, made if tantivy did not lay it out. On a date
    /// field each answer is also printed, as Elasticsearch prints `(long) value`.
    fn show(&self, digest: Option<&Digest>, parent: &mut Value) {
        let printed = |v: Option<f64>| -> Option<String> {
            let (formats, zone) = self.dates.as_ref()?;
            Some(formats.print_in((v? as i64).saturating_mul(1_000_000), zone))
        };
        let answers = self.percents.iter().map(|p| {
            let v = digest.and_then(|d| d.quantile(p / 100.0));
            (*p, v, printed(v))
        });
        let shown = if self.keyed {
            let mut values = Map::new();
            for (p, v, s) in answers {
                let key = super::points::java_double(p);
                values.insert(key.clone(), json!(v));
                if let Some(s) = s {
                    values.insert(format!("{key}_as_string"), json!(s));
                }
            }
            Value::Object(values)
        } else {
            Value::Array(
                answers
                    .map(|(p, v, s)| {
                        let mut one = json!({ "key": p, "value": v });
                        if let Some(s) = s {
                            one["value_as_string"] = json!(s);
                        }
                        one
                    })
                    .collect(),
            )
        };
        match parent.get_mut(&self.name) {
            Some(slot) => slot["values"] = shown,
            None => {
                if let Some(map) = parent.as_object_mut() {
                    map.insert(self.name.clone(), json!({ "values": shown }));
                }
            }
        }
    }

    fn show_in_buckets(
        &self,
        parents: &[Parent],
        (shown, digests): (&Shown, &FxHashMap<Vec<u32>, Digest>),
        level: &mut Value,
        chain: &mut Vec<u32>,
    ) {
        let Some((parent, deeper)) = parents.split_first() else {
            self.show(digests.get(chain.as_slice()), level);
            return;
        };
        for (key, at) in parent.buckets(level) {
            let (Some(id), Some(bucket)) = (shown.id(chain.len(), &key), level.pointer_mut(&at))
            else {
                continue;
            };
            chain.push(id);
            self.show_in_buckets(deeper, (shown, digests), bucket, chain);
            chain.pop();
        }
    }
}

/// The percentiles under bucket aggregations, run after the search's own pass over the
/// documents of the buckets it showed.
pub struct SecondPass {
    pub aggs: Arc<Vec<PercentilesAgg>>,
    pub query: Box<dyn tantivy::query::Query>,
    pub searcher: tantivy::Searcher,
}

/// The second pass's answers: each aggregation with its digests.
pub type BucketAnswers = Vec<(PercentilesAgg, Collected)>;

impl SecondPass {
    /// Each percentiles' digests in the buckets of `first` (the first pass's answer).
    pub fn run(&self, first: &Value) -> tantivy::Result<BucketAnswers> {
        use tantivy::query::{BooleanQuery, Occur, Query};
        let mut out = Vec::new();
        for agg in self.aggs.iter() {
            let Some(top) = agg.parents.first() else {
                continue;
            };
            let query: Box<dyn Query> = match top.shown_filter(first, self.searcher.schema()) {
                ShownFilter::Nothing => continue,
                ShownFilter::All => self.query.box_clone(),
                ShownFilter::Only(filter) => Box::new(BooleanQuery::new(vec![
                    (Occur::Must, self.query.box_clone()),
                    (Occur::Must, filter),
                ])),
            };
            let collector = DigestCollector {
                aggs: Arc::new(vec![agg.clone()]),
                shown: Arc::new(vec![Some(Arc::new(Shown::of(first, &agg.parents)))]),
                carried: Arc::new(Mutex::new(None)),
            };
            out.push((agg.clone(), self.searcher.search(&query, &collector)?));
        }
        Ok(out)
    }
}

mod request;
pub(super) use request::percentiles_params;
