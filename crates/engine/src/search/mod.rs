//! Searches on one embedded index: a request body compiled once (query, size, from, sort,
//! search_after), then run as one page, or page by page as a scroll or with `search_after`.

pub(crate) mod fetch;
mod first;
pub(crate) mod keywords;
pub mod many;
pub mod pit;
pub(crate) mod scroll;
pub mod sort;
pub mod source;

use crate::aggs::AggFruit;
use crate::dsl::ast::{Leaf, QueryAst};
use crate::dsl::QueryCompiler;
use crate::error::Error;
use crate::error::ErrorKind;
use crate::index::EmbeddedIndex;
use crate::search::sort::After;
use crate::search::sort::Sort;
use crate::search::sort::TopAfter;
use serde_json::Value;
use tantivy::collector::{Count, TopDocs};
use tantivy::query::Query;
use tantivy::{DocAddress, Searcher};

/// How a search reads past its first page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageBy {
    /// A scroll: the first search opens it, each next page continues it, the end clears it.
    Scroll,
    /// Each page searches again with `search_after` set to the last hit's sort values.
    SearchAfter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paging {
    pub by: PageBy,
    /// At most this many pages; None reads until a page comes back short.
    pub pages: Option<u64>,
    pub per_page: u64,
}

/// What a paged read did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paged {
    pub pages: u64,
    /// The search's total hits.
    pub total_hits: u64,
}

/// A search body, compiled for one index.
pub struct SearchPlan {
    pub query: Box<dyn Query>,
    pub size: usize,
    pub from: usize,
    /// The body's `sort`; None is relevance order.
    pub sort: Option<Sort>,
    pub after: Option<After>,
    /// The body's `aggs`, checked.
    pub aggs: Option<crate::aggs::AggPlan>,
    /// The body's `fields` and `highlight`, added to each hit returned.
    pub fetch: std::sync::Arc<crate::search::fetch::FetchPlan>,
    /// `profile: true` on a kNN search: each top-level clause's count of compared vectors.
    pub knn_visits: Vec<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    /// Where the query's scripts keep a failure while searching.
    pub script_errors: crate::dsl::doc_script::ErrorSlot,
}

/// One search hit, as the REST API returns it.
pub struct Hit {
    pub score: f32,
    pub id: String,
    /// As `_source` filtering leaves it; None when the search asks for no source.
    pub source: Option<Vec<u8>>,
    /// The hit's sort values, when the search sorts.
    pub sort: Option<Value>,
    /// `,"fields":..,"highlight":..` when the search asks for them.
    pub extra: Option<String>,
    /// `_version` (`version: true`) and `_seq_no` (`seq_no_primary_term: true`).
    pub version: Option<u64>,
    pub seq_no: Option<u64>,
}

/// Which hits a page holds: `limit` of them after the cursor, once `skip` (`from`) are passed.
#[derive(Debug, Clone, Copy)]
pub struct Window {
    pub after: Option<After>,
    pub skip: usize,
    pub limit: usize,
}

/// A page of hits: addresses in order, with the cursor after the last one.
pub struct Page {
    pub total: u64,
    pub hits: Vec<(DocAddress, f32, Option<Value>)>,
    pub next: Option<After>,
}

/// Search body keys the embedded engine runs (`_source` filters each hit's source;
/// `track_total_hits` shapes the REST answer's total); anything else (post_filter,
/// rescore, ...) would be measured without the work it asks for, so it is refused.
const SEARCH_KEYS: [&str; 21] = [
    "aggs",
    "script_fields",
    "runtime_mappings",
    "fields",
    "docvalue_fields",
    "stored_fields",
    "highlight",
    "aggregations",
    "query",
    "size",
    "from",
    "sort",
    "search_after",
    "track_total_hits",
    "_source",
    "timeout",
    "version",
    "seq_no_primary_term",
    "knn",
    "profile",
    "slice",
];

/// Why the embedded engine cannot run this search body, if it cannot.
pub fn unsupported_body(body: &Value) -> Option<String> {
    let keys = body.as_object()?.keys();
    let refused: Vec<&str> = keys
        .map(String::as_str)
        .filter(|k| !SEARCH_KEYS.contains(k))
        .collect();
    if !refused.is_empty() {
        return Some(format!(
            "the embedded engine does not run `{}` in a search body (it runs {})",
            refused.join("`, `"),
            SEARCH_KEYS.join(", ")
        ));
    }
    if let Some(why) = body.get("query").and_then(crate::dsl::unsupported_query) {
        return Some(why);
    }
    if let Some(why) = crate::search::fetch::unsupported_formats(body) {
        return Some(why);
    }
    if body
        .get("runtime_mappings")
        .is_some_and(|r| r.as_object().is_none_or(|o| !o.is_empty()))
    {
        return Some("search-time `runtime_mappings` are not run by the embedded engine (define the runtime fields in the index's mapping, where they run)".into());
    }
    match body.get("profile") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) if body.get("knn").is_some() => {}
        Some(_) => return Some("`profile` is run for top-level kNN searches only (their `vector_operations_count`); the embedded engine does not profile other searches".into()),
    }
    if let Some(knn) = body.get("knn") {
        let clauses = match knn {
            Value::Array(items) => items.iter().collect(),
            one => vec![one],
        };
        if let Some(why) = clauses
            .into_iter()
            .find_map(|c| crate::dsl::knn::KnnAst::parse(c).err())
        {
            return Some(why);
        }
    }
    let aggs = body.get("aggs").or_else(|| body.get("aggregations"))?;
    crate::aggs::AggPlan::check(aggs).err()
}

/// An aggregation that failed while running (too many buckets, a field of the wrong type).
fn bad_aggregation(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::BadRequest, format!("aggregation failed: {e}"))
}

/// A failed search: the aggregations' fault when it has any (the query alone ran before).
fn search_failed(plan: &SearchPlan, e: impl std::fmt::Display) -> Error {
    match plan.aggs {
        Some(_) => bad_aggregation(e),
        None => internal(e),
    }
}

fn internal(e: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::Internal, e.to_string())
}

impl SearchPlan {
    /// A script that failed on a document fails the search (Elasticsearch answers 400).
    pub fn script_failure(&self) -> Result<(), Error> {
        let mut slot = self.script_errors.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(e) => Err(Error::new(
                ErrorKind::BadRequest,
                format!("runtime error in a script: {e}"),
            )),
            None => Ok(()),
        }
    }

    /// The response's `aggregations` for `results` of this search, as Elasticsearch shapes them.
    /// A pipeline aggregation's script that fails on the results is an error of the search.
    pub fn aggregations_json(&self, results: &AggFruit) -> Result<Value, Error> {
        match &self.aggs {
            Some(plan) => plan
                .to_json(results)
                .map_err(|e| Error::new(ErrorKind::BadRequest, e)),
            None => Ok(Value::Null),
        }
    }
}

/// The search's aggregation collector (with what finishes its fruit), when it aggregates.
fn prepare(
    plan: &SearchPlan,
    searcher: &Searcher,
) -> Result<
    (
        Option<crate::aggs::AggCollector>,
        Option<crate::aggs::Finish>,
    ),
    Error,
> {
    match &plan.aggs {
        None => Ok((None, None)),
        Some(a) => {
            let (collector, finish) = a
                .prepare(searcher, plan.query.as_ref())
                .map_err(bad_aggregation)?;
            Ok((Some(collector), Some(finish)))
        }
    }
}

/// Elasticsearch's default `index.max_result_window`.
pub const MAX_RESULT_WINDOW: u64 = 10_000;

impl EmbeddedIndex {
    pub fn compile(&self, body: &Value) -> Result<SearchPlan, Error> {
        self.check_open()?;
        compile_search(&self.name, &self.mapping, &self.index, body)
    }

    /// As one index of a search over several: a query on a field this one does not map
    /// matches none of its documents, as Elasticsearch answers.
    pub fn compile_among_others(&self, body: &Value) -> Result<SearchPlan, Error> {
        self.check_open()?;
        compile_search_with(&self.name, &self.mapping, &self.index, body, true)
    }
}

/// A search body compiled against an index's mapping: everything but running it. The race's
/// check compiles each search against the mapping its create-index gives, before the race.
pub fn compile_search(
    name: &str,
    mapping: &crate::mapping::Mapping,
    index: &tantivy::Index,
    body: &Value,
) -> Result<SearchPlan, Error> {
    compile_search_with(name, mapping, index, body, false)
}

/// The matches of `query` in one `slice` of the documents (scrolled in parallel).
fn sliced(
    query: Box<dyn Query>,
    slice: &Value,
    mapping: &crate::mapping::Mapping,
) -> Result<Box<dyn Query>, String> {
    let slice = crate::dsl::slice::Slice::parse(slice)?;
    let only = crate::dsl::slice::SliceQuery {
        id_field: mapping.id,
        slice,
    };
    Ok(Box::new(tantivy::query::BooleanQuery::new(vec![
        (tantivy::query::Occur::Must, query),
        (
            tantivy::query::Occur::Must,
            Box::new(tantivy::query::ConstScoreQuery::new(Box::new(only), 0.0)),
        ),
    ])))
}

fn compile_search_with(
    name: &str,
    mapping: &crate::mapping::Mapping,
    index: &tantivy::Index,
    body: &Value,
    among_others: bool,
) -> Result<SearchPlan, Error> {
    let bad = |m: String| Error::new(ErrorKind::BadRequest, format!("index `{name}`: {m}"));
    if let Some(why) = unsupported_body(body) {
        return Err(bad(why));
    }
    let rewritten;
    let body = if mentions_index_field(body) {
        rewritten = index_field_resolved(body, name);
        &rewritten
    } else {
        body
    };
    let number = |key: &str, default: u64| match body.get(key) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => v
            .as_u64()
            .ok_or_else(|| bad(format!("`{key}` must be a non-negative integer, got {v}"))),
    };
    let (size, from) = (number("size", 10)?, number("from", 0)?);
    // Elasticsearch's `index.max_result_window`: a page is bounded before anything is
    // allocated for it, whatever a track or a request asks.
    let window = size.saturating_add(from);
    if window > MAX_RESULT_WINDOW {
        return Err(bad(format!(
                "Result window is too large, from + size must be less than or equal to: [{MAX_RESULT_WINDOW}] but was [{window}] (Elasticsearch's index.max_result_window; page deeper with search_after or a scroll)"
            )));
    }
    let (size, from) = (size as usize, from as usize);
    let script_errors = crate::dsl::doc_script::ErrorSlot::default();
    let compiler = QueryCompiler {
        mapping,
        index,
        unmapped_matches_none: among_others,
        size,
        script_errors: Some(script_errors.clone()),
        flattened_objects: false,
    };
    let parsed = match body.get("query") {
        Some(q) => QueryAst::parse(q).map_err(bad)?,
        None => QueryAst::Leaf(Leaf::MatchAll, serde_json::json!({})),
    };
    let mut query = compiler.compile(&parsed).map_err(bad)?;
    let profile = body.get("profile") == Some(&Value::Bool(true));
    let mut knn_visits = Vec::new();
    if let Some(knn) = body.get("knn") {
        let with = body.get("query").map(|_| query);
        (query, knn_visits) = compiler.top_level_knn(knn, with, profile).map_err(bad)?;
    }
    if let Some(slice) = body.get("slice") {
        query = sliced(query, slice, mapping).map_err(bad)?;
    }
    if let Some(e) = body
        .get("sort")
        .and_then(|s| sort::unmapped_sort(s, mapping))
    {
        return Err(e);
    }
    let sort = body
        .get("sort")
        .map(|s| Sort::parse_with(s, mapping, script_errors.clone()))
        .transpose()
        .map_err(bad)?;
    let after = match body.get("search_after") {
        None => None,
        Some(v) => Some(
            sort.as_ref()
                .ok_or_else(|| bad("search_after needs a `sort`".into()))?
                .search_after(v)
                .map_err(bad)?,
        ),
    };
    let aggs = body
        .get("aggs")
        .or_else(|| body.get("aggregations"))
        .map(|a| crate::aggs::AggPlan::compile(a, mapping, index))
        .transpose()
        .map_err(bad)?;
    let mut fetch = crate::search::fetch::FetchPlan::compile(body, mapping, index, query.as_ref())
        .map_err(bad)?;
    fetch.inner_hits = compiler.inner_hits(&parsed).map_err(bad)?;
    Ok(SearchPlan {
        query,
        size,
        from,
        sort,
        after,
        aggs,
        fetch: std::sync::Arc::new(fetch),
        knn_visits,
        script_errors,
    })
}

impl EmbeddedIndex {
    pub fn searcher(&self) -> Searcher {
        self.reader.searcher()
    }

    /// The hits of `query` in `window`, in `sort` order, with the total when `count`.
    pub fn page(
        &self,
        searcher: &Searcher,
        query: &dyn Query,
        sort: &Sort,
        window: Window,
        count: bool,
    ) -> Result<Page, Error> {
        let Window { after, skip, limit } = window;
        let ordinals = sort.ordinals(searcher).map_err(internal)?;
        let top = TopAfter {
            sort,
            ordinals: &ordinals,
            after,
            limit: skip + limit,
        };
        let (total, found) = if count {
            let (n, found) = searcher.search(query, &(Count, top)).map_err(internal)?;
            (n as u64, found)
        } else {
            (0, searcher.search(query, &top).map_err(internal)?)
        };
        let next = found.last().map(|h| sort.after_hit(h.key));
        let show = sort.shows_values();
        let hits = found
            .into_iter()
            .skip(skip)
            .map(|h| {
                (
                    h.address,
                    h.score,
                    show.then(|| sort.values(&h.key, &ordinals)),
                )
            })
            .collect();
        Ok(Page { total, hits, next })
    }

    /// Loads a hit's id and stored source, as Elasticsearch's fetch phase does.
    pub fn fetch(&self, searcher: &Searcher, addr: DocAddress) -> Result<(String, Vec<u8>), Error> {
        self.stored_fields(searcher, addr)
    }

    /// The hits of one search with their ids, scores and sources, the total, and the
    /// aggregations when the search has any.
    pub fn search_hits(
        &self,
        plan: &SearchPlan,
        searcher: &Searcher,
    ) -> Result<(u64, Vec<Hit>, Option<AggFruit>), Error> {
        let started = std::time::Instant::now();
        let found = self.search_hits_untimed(plan, searcher);
        self.counters.queries.record(started);
        plan.script_failure()?;
        found
    }

    fn search_hits_untimed(
        &self,
        plan: &SearchPlan,
        searcher: &Searcher,
    ) -> Result<(u64, Vec<Hit>, Option<AggFruit>), Error> {
        let aggregations;
        let (total, found) = match (&plan.sort, plan.after) {
            _ if plan.size == 0 => {
                let (n, aggs) = self.count_and_aggregate(plan, searcher)?;
                aggregations = aggs;
                (n, Vec::new())
            }
            (None, None) => {
                let top = TopDocs::with_limit((plan.size).max(1))
                    .and_offset(plan.from)
                    .order_by_score();
                // One pass collects the page, the count and the aggregations, as
                // Elasticsearch's query phase does.
                let (collector, prepared) = prepare(plan, searcher)?;
                let (n, top, aggs) = searcher
                    .search(plan.query.as_ref(), &(Count, top, collector))
                    .map_err(|e| search_failed(plan, e))?;
                aggregations = prepared
                    .zip(aggs)
                    .map(|(p, f)| p.finish(f))
                    .transpose()
                    .map_err(bad_aggregation)?;
                (
                    n as u64,
                    top.into_iter()
                        .take(plan.size)
                        .map(|(score, addr)| (addr, score, None))
                        .collect(),
                )
            }
            (sort, after) => {
                let page = self.page(
                    searcher,
                    plan.query.as_ref(),
                    sort.as_ref().unwrap_or(Sort::relevance()),
                    Window {
                        after,
                        skip: plan.from,
                        limit: plan.size,
                    },
                    true,
                )?;
                aggregations = self.aggregate(plan, searcher)?;
                (page.total, page.hits)
            }
        };
        let hits = found
            .into_iter()
            .map(|(addr, score, sort)| self.hit(&plan.fetch, searcher, addr, score, sort))
            .collect::<Result<_, _>>()?;
        Ok((total, hits, aggregations))
    }

    /// One hit as the fetch phase loads it: id, source, the extras the search asks for.
    pub fn hit(
        &self,
        fetch: &crate::search::fetch::FetchPlan,
        searcher: &Searcher,
        addr: DocAddress,
        score: f32,
        sort: Option<Value>,
    ) -> Result<Hit, Error> {
        let (id, source) = self.fetch(searcher, addr)?;
        let meta = match fetch.version || fetch.seq_no {
            true => Some(self.meta_at(searcher, addr)?),
            false => None,
        };
        Ok(Hit {
            score,
            id,
            extra: fetch
                .render_at(&source, searcher, addr, &self.name)
                .map_err(|e| Error::new(ErrorKind::BadRequest, e))?,
            source: fetch.source.apply(source),
            sort,
            version: meta.filter(|_| fetch.version).map(|m| m.version),
            seq_no: meta.filter(|_| fetch.seq_no).map(|m| m.seq_no),
        })
    }

    /// The aggregations of a search alone, in a pass of their own (a scroll's first page).
    pub fn aggregate(
        &self,
        plan: &SearchPlan,
        searcher: &Searcher,
    ) -> Result<Option<AggFruit>, Error> {
        let (collector, prepared) = prepare(plan, searcher)?;
        let fruit = collector
            .map(|c| searcher.search(plan.query.as_ref(), &c))
            .transpose()
            .map_err(bad_aggregation)?;
        prepared
            .zip(fruit)
            .map(|(p, f)| p.finish(f))
            .transpose()
            .map_err(bad_aggregation)
    }

    /// The hit count and the aggregations of a search that returns no hits (`size: 0`).
    pub fn count_and_aggregate(
        &self,
        plan: &SearchPlan,
        searcher: &Searcher,
    ) -> Result<(u64, Option<AggFruit>), Error> {
        let (collector, prepared) = prepare(plan, searcher)?;
        let (n, aggs) = searcher
            .search(plan.query.as_ref(), &(Count, collector))
            .map_err(|e| search_failed(plan, e))?;
        let fruit = prepared
            .zip(aggs)
            .map(|(p, f)| p.finish(f))
            .transpose()
            .map_err(bad_aggregation)?;
        Ok((n as u64, fruit))
    }

    /// Runs a search as a client's call does: counts all hits and loads the sources of the
    /// page, as Elasticsearch's query and fetch phases do. Answers the total hits.
    pub fn search(&self, plan: &SearchPlan) -> Result<u64, Error> {
        self.before_search()?;
        let searcher = self.searcher();
        let (total, hits, aggregations) = self.search_hits(plan, &searcher)?;
        std::hint::black_box(
            hits.iter()
                .map(|h| {
                    h.source.as_ref().map_or(0, Vec::len) + h.extra.as_ref().map_or(0, String::len)
                })
                .sum::<usize>(),
        );
        // The response's aggregations are built, as Elasticsearch builds them.
        std::hint::black_box(
            aggregations
                .map(|a| plan.aggregations_json(&a))
                .transpose()?,
        );
        Ok(total)
    }

    /// As [`EmbeddedIndex::search`], also giving the hits' ids, in order, in `ids`.
    pub fn search_ids(&self, plan: &SearchPlan, ids: &mut Vec<String>) -> Result<u64, Error> {
        self.before_search()?;
        let searcher = self.searcher();
        let (total, hits, _) = self.search_hits(plan, &searcher)?;
        ids.clear();
        ids.extend(hits.into_iter().map(|h| h.id));
        Ok(total)
    }

    /// A scroll-search or paginated-search: pages of `per_page` hits until one comes back
    /// short or `pages` are read. A scroll reads one snapshot; `search_after` searches anew
    /// each page from the last hit's sort values, as a client does. Units are pages.
    pub fn paged(&self, plan: &SearchPlan, paging: Paging) -> Result<Paged, Error> {
        let per_page = paging.per_page as usize;
        self.before_search()?;
        let (mut cursor, mut page) =
            scroll::Cursor::open(self, self.searcher(), plan, per_page, 0)?;
        // The first page carries the aggregations, as Elasticsearch's does.
        std::hint::black_box(
            self.aggregate(plan, &cursor.searcher)?
                .map(|a| plan.aggregations_json(&a))
                .transpose()?,
        );
        let mut pages = 1;
        loop {
            let mut bytes = 0;
            for (addr, _, _) in &page.hits {
                let source = self.fetch(&cursor.searcher, *addr)?.1;
                let extra = plan
                    .fetch
                    .render_at(&source, &cursor.searcher, *addr, &self.name)
                    .map_err(|e| Error::new(ErrorKind::BadRequest, e))?
                    .map_or(0, |e| e.len());
                bytes += plan.fetch.source.apply(source).map_or(0, |s| s.len()) + extra;
            }
            std::hint::black_box(bytes);
            if page.hits.len() < per_page || paging.pages.is_some_and(|p| pages >= p) {
                break;
            }
            if paging.by == PageBy::SearchAfter {
                cursor.continue_as_client(self);
            }
            page = cursor.next(self, plan.query.as_ref())?;
            pages += 1;
        }
        let total = cursor.total;
        Ok(Paged {
            pages,
            total_hits: total,
        })
    }
}

/// Queries on the `_index` metadata field (`term`, `terms`, `match`, `match_phrase`,
/// `prefix`, `wildcard`) match every document of an index whose name they match, and none
/// of another: they are resolved per index before compiling, as Elasticsearch rewrites them.
const INDEX_FIELD_QUERIES: [&str; 6] = [
    "term",
    "terms",
    "match",
    "match_phrase",
    "prefix",
    "wildcard",
];

fn mentions_index_field(v: &Value) -> bool {
    match v {
        Value::Object(o) => o
            .iter()
            .any(|(k, v)| k == "_index" || mentions_index_field(v)),
        Value::Array(items) => items.iter().any(mentions_index_field),
        _ => false,
    }
}

fn index_field_resolved(v: &Value, name: &str) -> Value {
    match v {
        Value::Object(o) => {
            if o.len() == 1 {
                let (kind, inner) = o.iter().next().expect("one entry");
                if let Some(matched) = index_field_match(kind, inner, name) {
                    let boost = inner
                        .get("_index")
                        .and_then(|f| f.get("boost"))
                        .or_else(|| inner.get("boost"))
                        .cloned()
                        .unwrap_or(serde_json::json!(1.0));
                    return if matched {
                        serde_json::json!({ "match_all": { "boost": boost } })
                    } else {
                        serde_json::json!({ "match_none": {} })
                    };
                }
            }
            Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), index_field_resolved(v, name)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| index_field_resolved(i, name))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Whether a `kind` query on `_index` matches the index `name`; None when it is not one.
fn index_field_match(kind: &str, inner: &Value, name: &str) -> Option<bool> {
    if !INDEX_FIELD_QUERIES.contains(&kind) {
        return None;
    }
    let given = inner.get("_index")?;
    let text = |v: &Value| -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o
                .get("value")
                .or_else(|| o.get("query"))
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        }
    };
    Some(match kind {
        "terms" => given
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .any(|n| n == name),
        "prefix" => name.starts_with(&text(given)?),
        "wildcard" => crate::names::simple_match(&text(given)?, name),
        _ => text(given)? == name,
    })
}
