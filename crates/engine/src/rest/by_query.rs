//! `_delete_by_query` and `_update_by_query`, as Elasticsearch runs them: a snapshot of the
//! matching documents read in batches of `scroll_size`, each document then deleted (or
//! written again, bumping its version) only if it is still the version the snapshot saw. A
//! document changed since is a version conflict: the request stops at the first
//! (`conflicts=abort`, the default, answering 409) or counts them (`conflicts=proceed`).

use crate::bulk::{Done, Item, Preconditions, Verb};
use crate::cluster::Engine;
use crate::index::{EmbeddedIndex, PRIMARY_TERM};
use crate::rest::{param, parse_body, RestResponse};
use crate::search::scroll::Cursor;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::time::Instant;

/// Elasticsearch's default batch (`scroll_size`).
const DEFAULT_SCROLL_SIZE: usize = 1000;

/// The largest batch one request may ask for, bounded before anything is read.
const MAX_SCROLL_SIZE: usize = 10_000;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ByQuery {
    Delete,
    Update,
}

#[derive(Default)]
struct Tally {
    total: u64,
    done: u64,
    batches: u64,
    conflicts: u64,
    noops: u64,
    failures: Vec<Value>,
}

struct Options {
    proceed: bool,
    max_docs: Option<u64>,
    scroll_size: usize,
}

impl Engine {
    pub(crate) fn by_query(
        &self,
        kind: ByQuery,
        name: &str,
        query: &str,
        body: &[u8],
    ) -> RestResponse {
        let started = Instant::now();
        let mut body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        if let Err(e) = self.resolve_terms_lookups(&mut body) {
            return RestResponse::from_error(&e);
        }
        let options = match options(query, &mut body) {
            Ok(o) => o,
            Err(r) => return r,
        };
        if kind == ByQuery::Update && body.get("script").is_some() {
            return RestResponse::error(400, "illegal_argument_exception", "_update_by_query with a `script` is not run by runner serve (it runs no scripts); without one, each matching document is written again as it is");
        }
        if let Err(r) = crate::rest::search_url::into_body(query, &mut body) {
            return r;
        }
        let targets = match self.state.search_targets(name) {
            Ok(t) => t,
            Err(e) if e.kind == crate::error::ErrorKind::NotFound => {
                return crate::rest::not_found(name)
            }
            Err(e) => return RestResponse::from_error(&e),
        };
        let mut tally = Tally::default();
        let mut touched = Vec::new();
        for (index, filter) in targets {
            let body = match &filter {
                Some(f) => crate::cluster::aliases::with_filter(&body, f),
                None => body.clone(),
            };
            if let Err(r) = self.run_on(kind, &index, &body, &options, &mut tally) {
                return r;
            }
            touched.push(index);
            if !tally.failures.is_empty() || options.max_docs.is_some_and(|m| tally.done >= m) {
                break;
            }
        }
        if matches!(
            param(query, "refresh").as_deref(),
            Some("" | "true" | "wait_for")
        ) {
            for index in &touched {
                if let Err(e) = index.refresh() {
                    return RestResponse::from_error(&e);
                }
            }
        }
        let (done_key, other_key) = match kind {
            ByQuery::Delete => ("deleted", "updated"),
            ByQuery::Update => ("updated", "deleted"),
        };
        let status = if tally.failures.is_empty() { 200 } else { 409 };
        let mut answer = json!({
            "took": started.elapsed().as_millis() as u64,
            "timed_out": false,
            "total": tally.total,
            done_key: tally.done,
            other_key: 0,
            "batches": tally.batches,
            "version_conflicts": tally.conflicts,
            "noops": tally.noops,
            "retries": { "bulk": 0, "search": 0 },
            "throttled_millis": 0,
            "requests_per_second": -1.0,
            "throttled_until_millis": 0,
            "failures": tally.failures,
        });
        if kind == ByQuery::Delete {
            answer.as_object_mut().expect("an object").remove("updated");
        } else {
            answer["created"] = json!(0);
        }
        RestResponse::json(status, &answer)
    }

    /// One index: its matches as of now, batch by batch, each written only if unchanged.
    fn run_on(
        &self,
        kind: ByQuery,
        index: &EmbeddedIndex,
        body: &Value,
        options: &Options,
        tally: &mut Tally,
    ) -> Result<(), RestResponse> {
        // A write block refuses these writes as it refuses any other.
        let refusal = index
            .settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .write_refusal(&index.name);
        if let Some(why) = refusal {
            return Err(RestResponse::error(403, "cluster_block_exception", &why));
        }
        // In index order, as Elasticsearch's scroll over `_doc` reads them.
        let search = json!({
            "query": body.get("query").cloned().unwrap_or(json!({"match_all": {}})),
            "sort": ["_doc"],
        });
        let plan = index.compile(&search).map_err(|e| {
            RestResponse::error(400, "search_phase_execution_exception", &e.message)
        })?;
        if let Err(e) = index.before_search() {
            return Err(RestResponse::from_error(&e));
        }
        let searcher = index.searcher();
        let (mut cursor, mut page) = Cursor::open(index, searcher, &plan, options.scroll_size, 0)
            .map_err(|e| RestResponse::from_error(&e))?;
        let limit = options.max_docs.unwrap_or(u64::MAX);
        tally.total += cursor.total.min(limit.saturating_sub(tally.done));
        while !page.hits.is_empty() && tally.done < limit {
            tally.batches += 1;
            for (addr, _, _) in &page.hits {
                if tally.done >= limit {
                    return Ok(());
                }
                let searcher = &cursor.searcher;
                let meta = index
                    .meta_at(searcher, *addr)
                    .map_err(|e| RestResponse::from_error(&e))?;
                let (id, source) = index
                    .fetch(searcher, *addr)
                    .map_err(|e| RestResponse::from_error(&e))?;
                let source = String::from_utf8_lossy(&source).into_owned();
                let item = Item {
                    verb: if kind == ByQuery::Delete {
                        Verb::Delete
                    } else {
                        Verb::Index
                    },
                    index: None,
                    id: Some(Cow::Borrowed(&id)),
                    body: (kind == ByQuery::Update).then_some(source.as_str()),
                    pipeline: None,
                    pre: Preconditions {
                        if_seq_no: Some(meta.seq_no),
                        if_primary_term: Some(PRIMARY_TERM),
                        ..Preconditions::default()
                    },
                    require_alias: None,
                };
                match index.apply(&item) {
                    Ok(w) if w.done == Done::Noop => tally.noops += 1,
                    Ok(_) => tally.done += 1,
                    Err(e) if e.status == 409 => {
                        tally.conflicts += 1;
                        if !options.proceed {
                            tally.failures.push(json!({
                                "index": index.name,
                                "id": id,
                                "cause": { "type": e.kind, "reason": e.reason, "index_uuid": "_na_", "shard": "0", "index": index.name },
                                "status": 409,
                            }));
                            return Ok(());
                        }
                    }
                    Err(e) => {
                        tally.failures.push(json!({
                            "index": index.name,
                            "id": id,
                            "cause": { "type": e.kind, "reason": e.reason },
                            "status": e.status,
                        }));
                        return Ok(());
                    }
                }
            }
            page = cursor
                .next(index, plan.query.as_ref())
                .map_err(|e| RestResponse::from_error(&e))?;
        }
        Ok(())
    }
}

/// `conflicts`, `max_docs` and `scroll_size`, from the URL or (the first two) the body.
fn options(query: &str, body: &mut Value) -> Result<Options, RestResponse> {
    let bad = |m: String| RestResponse::error(400, "illegal_argument_exception", &m);
    if let Some(k) = body.as_object().and_then(|o| {
        o.keys()
            .find(|k| !["query", "max_docs", "conflicts", "script"].contains(&k.as_str()))
    }) {
        return Err(bad(format!("[{k}] in a by-query body is not run by runner serve (it runs query, max_docs, conflicts)")));
    }
    let conflicts = param(query, "conflicts").map(Cow::into_owned).or_else(|| {
        body.get("conflicts")
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    let proceed = match conflicts.as_deref() {
        None | Some("abort") => false,
        Some("proceed") => true,
        Some(other) => {
            return Err(bad(format!(
                "conflicts may only be \"proceed\" or \"abort\" but was [{other}]"
            )))
        }
    };
    let max_docs = match param(query, "max_docs") {
        Some(v) => Some(
            v.parse::<u64>()
                .map_err(|_| bad(format!("[max_docs] is not a number: [{v}]")))?,
        ),
        None => body.get("max_docs").and_then(Value::as_u64),
    };
    if max_docs == Some(0) {
        return Err(bad(
            "[max_docs] parameter cannot be negative or zero, found [0]".into(),
        ));
    }
    let scroll_size = match param(query, "scroll_size") {
        Some(v) => match v.parse::<usize>() {
            Ok(n) if (1..=MAX_SCROLL_SIZE).contains(&n) => n,
            _ => {
                return Err(bad(format!(
                    "[scroll_size] must be between 1 and {MAX_SCROLL_SIZE}, got [{v}]"
                )))
            }
        },
        None => DEFAULT_SCROLL_SIZE,
    };
    if let Some(o) = body.as_object_mut() {
        o.remove("max_docs");
        o.remove("conflicts");
    }
    Ok(Options {
        proceed,
        max_docs,
        scroll_size: max_docs.map_or(scroll_size, |m| scroll_size.min(m.max(1) as usize)),
    })
}
