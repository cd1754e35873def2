//! Search APIs: `_search` (with `sort`, `from`, `search_after` and `?scroll=`), `_count`,
//! and the scroll API (`_search/scroll` to continue, DELETE to clear). A scroll holds its
//! searcher, a snapshot of the index, until it is cleared or its keep-alive passes.

use crate::cluster::Engine;
use crate::index::{EmbeddedIndex, PRIMARY_TERM};
use crate::rest::param;
use crate::rest::parse_body;
use crate::rest::search_url::{self, TotalShown};
use crate::rest::RestResponse;
use crate::search::fetch::FetchPlan;
use crate::search::pit::PitTarget;
use crate::search::scroll::{Cursor, ScrollContext};
use crate::search::Hit;
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tantivy::Searcher;

/// Elasticsearch's default `search.max_open_scroll_context`.
const MAX_OPEN_SCROLLS: usize = 500;

fn keep_alive(text: &str) -> Result<Duration, RestResponse> {
    crate::util::parse_time(text).map_err(|m| {
        RestResponse::error(
            400,
            "illegal_argument_exception",
            &format!("scroll keep-alive: {m}"),
        )
    })
}

/// A count's `terminate_after`: a positive number of documents, or None.
fn terminate_after(query: &str) -> Result<Option<u64>, RestResponse> {
    let Some(v) = param(query, "terminate_after") else {
        return Ok(None);
    };
    match v.parse::<i64>() {
        Ok(n) if n > 0 => Ok(Some(n as u64)),
        Ok(_) => Err(RestResponse::error(
            400,
            "illegal_argument_exception",
            "terminateAfter must be > 0",
        )),
        Err(_) => Err(RestResponse::error(
            400,
            "illegal_argument_exception",
            &format!("[terminate_after] is not a number: [{v}]"),
        )),
    }
}

/// The index each hit of an answer came from.
#[derive(Clone, Copy)]
enum HitIndex<'a> {
    All(&'a str),
    /// By hit, for a search of several indices.
    Each(&'a [String]),
}

impl HitIndex<'_> {
    fn of(&self, hit: usize) -> &str {
        match self {
            HitIndex::All(name) => name,
            HitIndex::Each(names) => names.get(hit).map_or("", String::as_str),
        }
    }
}

/// The context a search answer continues: a scroll, or the point in time it read.
#[derive(Clone, Copy)]
enum Context<'a> {
    Scroll(&'a str),
    Pit(&'a str),
}

/// A profiled kNN search's answer: Elasticsearch's `profile.shards[].dfs.knn[]` with each
/// clause's `vector_operations_count` (the vectors it compared, summed over the indices).
fn with_knn_profile(
    mut answer: RestResponse,
    visits: &[Vec<std::sync::Arc<std::sync::atomic::AtomicU64>>],
) -> RestResponse {
    let clauses = visits.iter().map(Vec::len).max().unwrap_or(0);
    if clauses == 0 || answer.status != 200 || answer.body.last() != Some(&b'}') {
        return answer;
    }
    let knn: Vec<Value> = (0..clauses)
        .map(|i| {
            let n: u64 = visits
                .iter()
                .filter_map(|v| v.get(i))
                .map(|c| c.load(std::sync::atomic::Ordering::Relaxed))
                .sum();
            json!({"query": [], "rewrite_time": 0, "collector": [], "vector_operations_count": n})
        })
        .collect();
    let profile = json!({"shards": [{"id": "[runner][knn][0]", "dfs": {"knn": knn}, "searches": [], "aggregations": []}]});
    answer.body.pop();
    answer
        .body
        .extend_from_slice(format!(",\"profile\":{profile}}}").as_bytes());
    answer
}

/// The shards a search ran on, as Elasticsearch accounts them (here, one per index): how
/// many, and each that failed, with its index and why.
#[derive(Default)]
struct Shards {
    total: usize,
    failures: Vec<(String, String)>,
}

impl Shards {
    fn one() -> Shards {
        Shards {
            total: 1,
            failures: Vec::new(),
        }
    }

    /// `_shards` as Elasticsearch writes it: `failures` only where some failed.
    fn json(&self) -> Value {
        let failed = self.failures.len();
        let mut shards = json!({
            "total": self.total,
            "successful": self.total - failed,
            "skipped": 0,
            "failed": failed,
        });
        if failed > 0 {
            shards["failures"] = Value::Array(self.failures.iter().map(shard_failure).collect());
        }
        shards
    }
}

/// One failed shard as Elasticsearch lists it.
fn shard_failure((index, reason): &(String, String)) -> Value {
    json!({
        "shard": 0,
        "index": index,
        "node": crate::rest::nodes::NODE_ID,
        "reason": {"type": "query_shard_exception", "reason": reason, "index": index},
    })
}

/// Every shard failed: Elasticsearch's `search_phase_execution_exception`, "all shards failed".
fn all_shards_failed(failures: &[(String, String)]) -> RestResponse {
    let causes: Vec<Value> = failures
        .iter()
        .map(|(index, reason)| json!({"type": "query_shard_exception", "reason": reason, "index": index}))
        .collect();
    RestResponse::json(
        400,
        &json!({
            "error": {
                "root_cause": causes,
                "type": "search_phase_execution_exception",
                "reason": "all shards failed",
                "phase": "query",
                "grouped": true,
                "failed_shards": failures.iter().map(shard_failure).collect::<Vec<_>>(),
            },
            "status": 400,
        }),
    )
}

/// A search response; sources are stored JSON, spliced in as they are.
fn hits_body(
    index: HitIndex,
    took: Duration,
    (total, shown): (u64, TotalShown),
    hits: &[Hit],
    (context, shards): (Option<Context>, &Shards),
    aggregations: Option<&Value>,
) -> RestResponse {
    let mut out = String::with_capacity(
        256 + hits
            .iter()
            .map(|h| h.source.as_ref().map_or(0, Vec::len) + 96)
            .sum::<usize>(),
    );
    out.push('{');
    match context {
        Some(Context::Scroll(id)) => {
            let _ = write!(out, r#""_scroll_id":{},"#, json!(id));
        }
        Some(Context::Pit(id)) => {
            let _ = write!(out, r#""pit_id":{},"#, json!(id));
        }
        None => {}
    }
    let max_score = hits
        .first()
        .map_or("null".to_string(), |h| h.score.to_string());
    let _ = write!(
        out,
        r#""took":{},"timed_out":false,"_shards":{},"hits":{{"#,
        took.as_millis(),
        shards.json()
    );
    if let Some(t) = shown.render(total) {
        let _ = write!(out, r#""total":{t},"#);
    }
    let _ = write!(out, r#""max_score":{max_score},"hits":["#);
    for (i, h) in hits.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        let _ = write!(
            out,
            r#"{sep}{{"_index":{},"_id":{}"#,
            json!(index.of(i)),
            json!(h.id),
        );
        if let Some(v) = h.version {
            let _ = write!(out, r#","_version":{v}"#);
        }
        if let Some(s) = h.seq_no {
            let _ = write!(out, r#","_seq_no":{s},"_primary_term":{PRIMARY_TERM}"#);
        }
        let _ = write!(out, r#","_score":{}"#, h.score);
        if let Some(source) = &h.source {
            out.push_str(r#","_source":"#);
            out.push_str(std::str::from_utf8(source).unwrap_or("{}"));
        }
        if let Some(extra) = &h.extra {
            out.push_str(extra);
        }
        if let Some(sort) = &h.sort {
            let _ = write!(out, r#","sort":{sort}"#);
        }
        out.push('}');
    }
    out.push_str("]}");
    if let Some(a) = aggregations {
        let _ = write!(out, r#","aggregations":{a}"#);
    }
    out.push('}');
    RestResponse {
        status: 200,
        body: out.into_bytes(),
    }
}

fn fetch_all(
    index: &EmbeddedIndex,
    searcher: &Searcher,
    found: Vec<(tantivy::DocAddress, f32, Option<Value>)>,
    extras: &FetchPlan,
) -> Result<Vec<Hit>, RestResponse> {
    found
        .into_iter()
        .map(|(addr, score, sort)| {
            index
                .hit(extras, searcher, addr, score, sort)
                .map_err(|e| RestResponse::from_error(&e))
        })
        .collect()
}

/// A search (or count) run on each of its indices: one index's answer as it is; several
/// indices' counts summed, and their hits and aggregations merged (`search::many`).
fn searched(
    plans: Vec<Planned>,
    count_only: Option<Option<u64>>,
    (started, shown): (Instant, TotalShown),
    pit: Option<&str>,
    failures: Vec<(String, String)>,
) -> RestResponse {
    let shards = Shards {
        total: plans.len() + failures.len(),
        failures,
    };
    let terminate_after = count_only.flatten();
    let mut terminated_early = false;
    let count = |n: u64, early: bool| {
        let mut answer = json!({ "count": n, "_shards": shards.json() });
        if early {
            answer["terminated_early"] = json!(true);
        }
        RestResponse::json(200, &answer)
    };
    let count_only = count_only.is_some();
    if plans.len() > 1 && !count_only {
        let mut plans = plans;
        let mut page = (0, 10);
        for (_, plan, _) in plans.iter_mut() {
            page = crate::search::many::for_merging(plan);
        }
        let parts: Vec<crate::search::many::Part<'_>> =
            plans.iter().map(|(i, p, s)| (&**i, p, s.clone())).collect();
        let merged = match crate::search::many::search_many(&parts, page) {
            Ok(m) => m,
            Err(e) if e.kind == crate::error::ErrorKind::BadRequest => {
                return RestResponse::error(400, "illegal_argument_exception", &e.message)
            }
            Err(e) => return RestResponse::from_error(&e),
        };
        let (names, found): (Vec<String>, Vec<Hit>) = merged.hits.into_iter().unzip();
        return hits_body(
            HitIndex::Each(&names),
            started.elapsed(),
            (merged.total, shown),
            &found,
            (pit.map(Context::Pit), &shards),
            merged.aggregations.as_ref(),
        );
    }
    let (mut total, mut found, mut names, mut aggregations) = (0, Vec::new(), Vec::new(), None);
    for (index, plan, searcher) in plans {
        let (n, hits, aggs) = match index.search_hits(&plan, &searcher) {
            Ok(r) => r,
            Err(e) => return RestResponse::from_error(&e),
        };
        // `terminate_after` stops each shard (here, each index) after that many documents.
        let n = match terminate_after {
            Some(limit) if n > limit => {
                terminated_early = true;
                limit
            }
            _ => n,
        };
        total += n;
        aggregations = match aggs.map(|a| plan.aggregations_json(&a)).transpose() {
            Ok(a) => a,
            Err(e) => return RestResponse::from_error(&e),
        };
        names.extend(std::iter::repeat_n(index.name.clone(), hits.len()));
        found.extend(hits);
    }
    if count_only {
        return count(total, terminated_early);
    }
    hits_body(
        HitIndex::Each(&names),
        started.elapsed(),
        (total, shown),
        &found,
        (pit.map(Context::Pit), &shards),
        aggregations.as_ref(),
    )
}

/// A search of one index: the index, its compiled plan, and the snapshot it reads.
type Planned = (Arc<EmbeddedIndex>, crate::search::SearchPlan, Searcher);

/// The search compiled for each of its indices (with the index's alias filter), and the
/// indices whose shard fails on their mapping (Elasticsearch's partial results); a fault of
/// the request itself is the answer.
#[allow(clippy::type_complexity)]
fn planned_each(
    targets: Vec<PitTarget>,
    body: &Value,
    count_only: bool,
) -> Result<(Vec<Planned>, Vec<(String, String)>), RestResponse> {
    let mut plans = Vec::with_capacity(targets.len());
    let mut failures = Vec::new();
    let several = targets.len() > 1;
    for PitTarget {
        index,
        filter,
        searcher,
    } in targets
    {
        let body = match &filter {
            Some(f) => crate::cluster::aliases::with_filter(body, f),
            None => body.clone(),
        };
        let compiled = match several {
            true => index.compile_among_others(&body),
            false => index.compile(&body),
        };
        match compiled {
            Ok(mut plan) => {
                if count_only {
                    plan.size = 0;
                }
                plans.push((index, plan, searcher));
            }
            Err(e) if e.kind == crate::error::ErrorKind::Closed => {
                return Err(RestResponse::from_error(&e))
            }
            // This index's shard fails; the others answer (Elasticsearch's partial
            // results), the search failing only where every one does.
            Err(e) if e.kind == crate::error::ErrorKind::QueryShard => {
                failures.push((index.name.clone(), e.message));
            }
            Err(e) => {
                return Err(RestResponse::error(
                    400,
                    "search_phase_execution_exception",
                    &e.message,
                ))
            }
        }
    }
    Ok((plans, failures))
}

/// A `slice` outside a scroll or a point in time, refused as Elasticsearch refuses it.
fn slice_without_context(body: &Value, pit: bool, query: &str) -> Option<RestResponse> {
    (body.get("slice").is_some() && !pit && param(query, "scroll").is_none()).then(|| {
        RestResponse::error(
            400,
            "action_request_validation_exception",
            "Validation Failed: 1: [slice] can only be used with [scroll] or [point-in-time] requests;",
        )
    })
}

impl Engine {
    /// A search body, its terms lookups resolved.
    fn parsed_with_lookups(&self, body: &[u8]) -> Result<Value, RestResponse> {
        let mut body = parse_body(body)?;
        self.resolve_terms_lookups(&mut body)
            .map_err(|e| RestResponse::from_error(&e))?;
        Ok(body)
    }

    pub(crate) fn search(
        &self,
        name: &str,
        query: &str,
        body: &[u8],
        count_only: bool,
    ) -> RestResponse {
        let started = Instant::now();
        // Request validation comes before the indices are looked up, as in Elasticsearch.
        let count_limit = match count_only.then(|| terminate_after(query)).transpose() {
            Ok(limit) => limit.flatten(),
            Err(r) => return r,
        };
        let mut body = match self.parsed_with_lookups(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let pit = match body.as_object_mut().and_then(|o| o.remove("pit")) {
            Some(p) => match self.pit_of(name, &p, count_only) {
                Ok(found) => Some(found),
                Err(r) => return r,
            },
            None => None,
        };
        if let Some(refused) = slice_without_context(&body, pit.is_some(), query) {
            return refused;
        }
        let targets = match &pit {
            Some((_, targets)) => targets.clone(),
            None => match self.snapshots(name) {
                Ok(t) => t,
                Err(r) => return r,
            },
        };
        let shown = match search_url::into_body(query, &mut body) {
            Ok(s) => s,
            Err(r) => return r,
        };
        let (plans, failures) = match planned_each(targets, &body, count_only) {
            Ok(p) => p,
            Err(r) => return r,
        };
        let mut plans = plans;
        if plans.is_empty() && !failures.is_empty() {
            return all_shards_failed(&failures);
        }
        let scroll = param(query, "scroll").filter(|_| !count_only);
        let visits: Vec<_> = plans.iter().map(|(_, p, _)| p.knn_visits.clone()).collect();
        let answer = match (plans.len(), scroll) {
            (_, Some(_)) if pit.is_some() => RestResponse::error(
                400,
                "action_request_validation_exception",
                "Validation Failed: 1: using [point in time] is not allowed in a scroll context;",
            ),
            (1, Some(alive)) => match keep_alive(&alive) {
                Ok(keep) => {
                    let (index, plan, searcher) = plans.pop().expect("one plan");
                    self.open_scroll(index, searcher, plan, keep, (started, shown))
                }
                Err(r) => r,
            },
            (n, Some(_)) if n > 1 => RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("a scroll over several indices ([{name}] reaches {n}) is not run by runner serve: scroll one index or an alias of one"),
            ),
            _ => searched(
                plans,
                count_only.then_some(count_limit),
                (started, shown),
                pit.as_ref().map(|(id, _)| id.as_str()),
                failures,
            ),
        };
        with_knn_profile(answer, &visits)
    }

    /// The snapshot a search body's `pit` (`{"id", "keep_alive"}`) names. A point in time
    /// chose its indices when it was opened, so the search names none.
    fn pit_of(
        &self,
        name: &str,
        pit: &Value,
        count_only: bool,
    ) -> Result<(String, Vec<PitTarget>), RestResponse> {
        let bad = |m: &str| {
            RestResponse::error(
                400,
                "action_request_validation_exception",
                &format!("Validation Failed: 1: {m};"),
            )
        };
        if count_only {
            return Err(bad("[pit] is not allowed in a count"));
        }
        if name != "_all" {
            return Err(bad("[indices] cannot be used with point in time. Do not specify any index with point in time."));
        }
        let Some(id) = pit.get("id").and_then(Value::as_str) else {
            return Err(bad("a point in time needs an [id]"));
        };
        let keep = match pit.get("keep_alive").and_then(Value::as_str) {
            Some(k) => Some(keep_alive(k)?),
            None => None,
        };
        let mut pits = self.state.pits.lock().unwrap_or_else(|p| p.into_inner());
        match pits.get(id, keep) {
            Some(targets) => Ok((id.to_string(), targets)),
            None => Err(RestResponse::error(
                404,
                "search_context_missing_exception",
                &format!("No search context found for id [{id}]"),
            )),
        }
    }

    fn open_scroll(
        &self,
        index: Arc<EmbeddedIndex>,
        searcher: Searcher,
        plan: crate::search::SearchPlan,
        keep: Duration,
        (started, shown): (Instant, TotalShown),
    ) -> RestResponse {
        let (cursor, page) = match Cursor::open(&index, searcher, &plan, plan.size, plan.from) {
            Ok(opened) => opened,
            Err(e) => return RestResponse::from_error(&e),
        };
        let searcher = &cursor.searcher;
        let hits = match fetch_all(&index, searcher, page.hits, &plan.fetch) {
            Ok(h) => h,
            Err(r) => return r,
        };
        // Elasticsearch answers a scroll's aggregations with its first page.
        let aggregations = match index.aggregate(&plan, searcher) {
            Ok(a) => match a.map(|a| plan.aggregations_json(&a)).transpose() {
                Ok(a) => a,
                Err(e) => return RestResponse::from_error(&e),
            },
            Err(e) => return RestResponse::from_error(&e),
        };
        let mut scrolls = self.state.scrolls.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        scrolls.open.retain(|_, c| c.expires > now);
        if scrolls.open.len() >= MAX_OPEN_SCROLLS {
            return RestResponse::error(
                500,
                "exception",
                &format!("Trying to create too many scroll contexts. Must be less than or equal to: [{MAX_OPEN_SCROLLS}]; clear scrolls when done with them"),
            );
        }
        scrolls.next_id += 1;
        let id = format!("runner-scroll-{}", scrolls.next_id);
        let name = index.name.clone();
        let context = ScrollContext {
            index,
            query: plan.query,
            cursor,
            keep_alive: keep,
            expires: now + keep,
            fetch: plan.fetch.clone(),
        };
        scrolls.open.insert(id.clone(), context);
        drop(scrolls);
        // A scroll counts every hit, as Elasticsearch's scrolls do.
        let shown = match shown {
            TotalShown::Int => TotalShown::Int,
            _ => TotalShown::Object { up_to: None },
        };
        hits_body(
            HitIndex::All(&name),
            started.elapsed(),
            (page.total, shown),
            &hits,
            (Some(Context::Scroll(&id)), &Shards::one()),
            aggregations.as_ref(),
        )
    }

    /// The next page of a scroll: `{"scroll_id": "...", "scroll": "1m"}` or the same as
    /// query parameters.
    pub(crate) fn scroll(&self, query: &str, body: &[u8]) -> RestResponse {
        let started = Instant::now();
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let Some(id) = body
            .get("scroll_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| param(query, "scroll_id").map(|v| v.into_owned()))
        else {
            return RestResponse::error(
                400,
                "action_request_validation_exception",
                "scrollId is missing",
            );
        };
        let renew = match body
            .get("scroll")
            .and_then(Value::as_str)
            .map(str::to_string)
            .or_else(|| param(query, "scroll").map(|v| v.into_owned()))
        {
            Some(text) => match keep_alive(&text) {
                Ok(d) => Some(d),
                Err(r) => return r,
            },
            None => None,
        };
        let shown = match param(query, "rest_total_hits_as_int").as_deref() {
            Some("true" | "") => TotalShown::Int,
            _ => TotalShown::Object { up_to: None },
        };
        // The context is taken out while its page is searched, so other scrolls go on.
        let now = Instant::now();
        let taken = {
            let mut scrolls = self.state.scrolls.lock().unwrap_or_else(|p| p.into_inner());
            scrolls.open.retain(|_, c| c.expires > now);
            scrolls.open.remove(&id)
        };
        let Some(mut c) = taken else {
            return RestResponse::error(
                404,
                "search_context_missing_exception",
                &format!(
                    "No search context found for id [{id}] (cleared, or its keep-alive passed)"
                ),
            );
        };
        c.keep_alive = renew.unwrap_or(c.keep_alive);
        c.expires = now + c.keep_alive;
        let page = c.cursor.next(&c.index, c.query.as_ref());
        let (index, searcher, total, fetch) = (
            c.index.clone(),
            c.cursor.searcher.clone(),
            c.cursor.total,
            c.fetch.clone(),
        );
        self.state
            .scrolls
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .open
            .insert(id.clone(), c);
        let page = match page {
            Ok(p) => p,
            Err(e) => return RestResponse::from_error(&e),
        };
        match fetch_all(&index, &searcher, page.hits, &fetch) {
            Ok(hits) => hits_body(
                HitIndex::All(&index.name),
                started.elapsed(),
                (total, shown),
                &hits,
                (Some(Context::Scroll(&id)), &Shards::one()),
                None,
            ),
            Err(r) => r,
        }
    }

    /// Clears scrolls: ids in the body (`{"scroll_id": [..]}` or one string), in the path
    /// (comma-separated), or `_all`.
    pub(crate) fn clear_scroll(&self, path_ids: Option<&str>, body: &[u8]) -> RestResponse {
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        let mut ids: Vec<String> = path_ids
            .map(|p| p.split(',').map(str::to_string).collect())
            .unwrap_or_default();
        match body.get("scroll_id") {
            Some(Value::String(s)) => ids.push(s.clone()),
            Some(Value::Array(a)) => {
                ids.extend(a.iter().filter_map(Value::as_str).map(str::to_string))
            }
            _ => {}
        }
        let mut scrolls = self.state.scrolls.lock().unwrap_or_else(|p| p.into_inner());
        let freed = if ids.iter().any(|i| i == "_all") {
            let n = scrolls.open.len();
            scrolls.open.clear();
            n
        } else {
            ids.iter()
                .filter(|i| scrolls.open.remove(i.as_str()).is_some())
                .count()
        };
        let status = if freed == 0 && !ids.is_empty() {
            404
        } else {
            200
        };
        RestResponse::json(status, &json!({ "succeeded": true, "num_freed": freed }))
    }
}
