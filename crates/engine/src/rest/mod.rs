//! The Elasticsearch REST API subset over the embedded engine: a request (method, path,
//! query string, body) in, a status and an Elasticsearch-shaped JSON body out. `runner serve`
//! puts it behind HTTP; the embedded backend's `raw-request` calls it in-process.
//!
//! Differences from Elasticsearch, on purpose: a write creates no index (bulk items for an index
//! that does not exist fail with `index_not_found_exception`, unless a data stream template
//! makes it a data stream), one shard, health always green.

mod admin;
mod aliases;
mod by_query;
mod cat;
mod documents;
mod effects;
mod esql;
mod ingest;
mod mappings;
mod multi;
mod nodes;
mod params;
#[cfg(test)]
mod percentiles_tests;
#[cfg(test)]
mod percolate_tests;
pub(crate) mod pit;
mod recovery;
mod routes;
mod search;
mod search_url;
mod streams;
#[cfg(test)]
mod url_tests;

use crate::cluster::Engine;
use crate::error::Error;
use crate::error::ErrorKind;
use crate::index::EmbeddedIndex;
pub(crate) use params::param;
pub use routes::answers;
use routes::{route, segments, Route};
use serde_json::{json, Value};
use std::sync::Arc;

pub use effects::{effects, Effects};

/// The version `GET /` reports: clients check the major version to pick their API dialect.
pub const COMPATIBLE_VERSION: &str = "8.15.0";
/// The version as Elasticsearch numbers it in `index.version.created`.
pub const VERSION_ID: u32 = 8_150_099;

pub struct RestRequest<'a> {
    pub method: &'a str,
    /// The path without the query string, e.g. `/geonames/_search`.
    pub path: &'a str,
    /// The raw query string (`a=1&b=2`), possibly empty.
    pub query: &'a str,
    pub body: &'a [u8],
}

pub struct RestResponse {
    pub status: u16,
    pub body: Vec<u8>,
}

impl RestResponse {
    /// A JSON answer (not a HEAD's empty body, not a cat table).
    fn is_json(&self) -> bool {
        self.body.first() == Some(&b'{')
    }

    /// The answer with only what `filter_path` keeps (`a.b,-c.*`: paths with wildcards, a
    /// leading `-` to drop).
    fn filtered(self, paths: &str) -> RestResponse {
        let (excludes, includes): (Vec<String>, Vec<String>) = paths
            .split(',')
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .partition(|p| p.starts_with('-'));
        let excludes = excludes.into_iter().map(|p| p[1..].to_string()).collect();
        let filter = crate::search::source::SourceFilter::Filtered { includes, excludes };
        let status = self.status;
        match filter.apply(self.body) {
            Some(body) => RestResponse { status, body },
            None => RestResponse {
                status,
                body: b"{}".to_vec(),
            },
        }
    }

    pub(crate) fn json(status: u16, v: &Value) -> RestResponse {
        RestResponse {
            status,
            body: serde_json::to_vec(v).unwrap_or_default(),
        }
    }

    pub(crate) fn error(status: u16, kind: &str, reason: &str) -> RestResponse {
        let cause = json!({ "type": kind, "reason": reason });
        RestResponse::json(
            status,
            &json!({ "error": { "root_cause": [cause.clone()], "type": kind, "reason": reason }, "status": status }),
        )
    }

    pub(crate) fn from_error(e: &Error) -> RestResponse {
        match e.kind {
            ErrorKind::NotFound => {
                RestResponse::error(404, "index_not_found_exception", &e.message)
            }
            ErrorKind::BadRequest => {
                RestResponse::error(400, "illegal_argument_exception", &e.message)
            }
            ErrorKind::Closed => RestResponse::error(400, "index_closed_exception", &e.message),
            ErrorKind::QueryShard => RestResponse::error(400, "query_shard_exception", &e.message),
            _ => RestResponse::error(500, "exception", &e.message),
        }
    }
}

/// A request's JSON body, the one way every route reads it: an empty body is `{}`.
pub(crate) fn parse_body(body: &[u8]) -> Result<Value, RestResponse> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    serde_json::from_slice(body).map_err(|e| {
        RestResponse::error(
            400,
            "parse_exception",
            &format!("request body is not JSON: {e}"),
        )
    })
}

/// Whether one node meets a `wait_for_nodes` condition (`1`, `>=1`, `le(2)`, ...); None when
/// it cannot be read.
fn nodes_condition(condition: &str) -> Option<bool> {
    let c = condition.trim();
    let (op, n) = [">=", "<=", ">", "<", "ge(", "le(", "gt(", "lt("]
        .iter()
        .find_map(|op| {
            c.strip_prefix(op)
                .map(|rest| (*op, rest.trim_end_matches(')')))
        })
        .unwrap_or(("", c));
    let n: u64 = n.trim().parse().ok()?;
    Some(match op {
        ">=" | "ge(" => 1 >= n,
        "<=" | "le(" => 1 <= n,
        ">" | "gt(" => 1 > n,
        "<" | "lt(" => 1 < n,
        _ => n == 1,
    })
}

pub(crate) fn not_found(name: &str) -> RestResponse {
    let error = json!({
        "type": "index_not_found_exception",
        "reason": format!("no such index [{name}]"),
        "resource.type": "index_or_alias",
        "resource.id": name,
        "index_uuid": "_na_",
        "index": name,
    });
    RestResponse::json(
        404,
        &json!({ "error": { "root_cause": [error.clone()], "type": error["type"], "reason": error["reason"], "resource.type": "index_or_alias", "resource.id": name, "index_uuid": "_na_", "index": name }, "status": 404 }),
    )
}

/// Date math in the index names of a path (its first segment) and in an alias's name
/// (`<index>/_alias/<name>`), each name of a comma-separated list resolved.
fn resolve_date_math(segments: &mut [std::borrow::Cow<'_, str>]) -> Result<(), String> {
    let aliased = matches!(
        segments.get(1).map(|s| s.as_ref()),
        Some("_alias" | "_aliases")
    );
    let now = chrono::Utc::now();
    for (i, segment) in segments.iter_mut().enumerate() {
        if !(i == 0 || (i == 2 && aliased)) || !segment.contains('<') {
            continue;
        }
        let resolved: Result<Vec<String>, String> = segment
            .split(',')
            .map(|name| crate::names_math::resolve(name, now).map(|n| n.into_owned()))
            .collect();
        *segment = std::borrow::Cow::Owned(resolved?.join(","));
    }
    Ok(())
}

/// The node name in the ids of the tasks the engine hands out.
const TASK_NODE: &str = "runner";

impl Engine {
    pub fn rest(&self, req: &RestRequest) -> RestResponse {
        let mut owned = segments(req.path);
        if let Err(why) = resolve_date_math(&mut owned) {
            return RestResponse::error(400, "illegal_argument_exception", &why);
        }
        let segments = routes::as_strs(&owned);
        let Some(route) = route(req.method, &segments) else {
            return RestResponse::error(
                400,
                "illegal_argument_exception",
                &format!("runner serve has no handler for {} {} (it implements the subset docs/serve.md lists)", req.method, req.path),
            );
        };
        if let Some(why) = routes::unrecognized(&route, req.path, req.query) {
            return RestResponse::error(400, "illegal_argument_exception", &why);
        }
        let answer = self.answer(route, req);
        if req.method == "HEAD" {
            // A HEAD answer is its status alone.
            return RestResponse {
                status: answer.status,
                body: Vec::new(),
            };
        }
        match param(req.query, "filter_path") {
            Some(paths) if answer.is_json() => answer.filtered(&paths),
            _ => answer,
        }
    }

    fn answer(&self, route: Route, req: &RestRequest) -> RestResponse {
        match route {
            Route::Root => self.root(),
            Route::Health(index) => self.health(index, req.query),
            Route::Bulk(index) => self.bulk_request(index, req.query, req.body),
            Route::Refresh(index) => self.each_index(index, EmbeddedIndex::refresh),
            Route::ForceMerge(index) => self.force_merge(index, req.query),
            Route::GetTask(id) => self.get_task(id),
            Route::Stats(index, metric) => {
                match metric.and_then(|m| routes::unknown_stats_metric(req.path, m)) {
                    Some(why) => RestResponse::error(400, "illegal_argument_exception", &why),
                    None => self.index_stats(index, req.query),
                }
            }
            Route::NodeStats => self.node_stats(),
            Route::NodeInfo => self.node_info(),
            Route::PutClusterSettings => self.put_cluster_settings(req.body),
            Route::GetClusterSettings => self.get_cluster_settings(req.query),
            Route::ClusterState(metrics) => self.cluster_state(metrics),
            Route::IndexSettings(index) => self.index_settings(index, req.body),
            Route::GetSettings(index, name) => self.get_settings(index, name, req.query),
            Route::PutTemplate(kind, name) => self.put_template(kind, name, req.body, req.query),
            Route::DeleteTemplate(kind, name) => self.delete_template(kind, name),
            Route::GetTemplate(kind, name) => self.get_template(kind, name),
            Route::Scroll(None) => self.scroll(req.query, req.body),
            Route::Scroll(Some(id)) => {
                self.scroll(&format!("scroll_id={id}&{}", req.query), req.body)
            }
            Route::ClearScroll(ids) => self.clear_scroll(ids, req.body),
            Route::Search(index, count) => self.search(index, req.query, req.body, count),
            Route::GetDoc(index, id) => self.get_doc(index, id, req.query),
            Route::GetSource(index, id) => self.get_source(index, id, req.query),
            Route::PutDoc(index, id) => {
                self.write_doc(index, id, crate::bulk::Verb::Index, req.query, req.body)
            }
            Route::CreateDoc(index, id) => self.write_doc(
                index,
                Some(id),
                crate::bulk::Verb::Create,
                req.query,
                req.body,
            ),
            Route::UpdateDoc(index, id) => self.write_doc(
                index,
                Some(id),
                crate::bulk::Verb::Update,
                req.query,
                req.body,
            ),
            Route::MultiSearch(index) => self.multi_search(index, req.query, req.body),
            Route::Esql => self.esql(req.query, req.body),
            Route::MultiGet(index) => self.multi_get(index, req.query, req.body),
            Route::OpenPit(index, flavor) => self.open_pit(index, req.query, flavor),
            Route::ClosePit(all, flavor) => self.close_pit(req.body, all, flavor),
            Route::ListPits => self.list_pits(),
            Route::DeleteByQuery(index) => {
                self.by_query(by_query::ByQuery::Delete, index, req.query, req.body)
            }
            Route::UpdateByQuery(index) => {
                self.by_query(by_query::ByQuery::Update, index, req.query, req.body)
            }
            Route::DeleteDoc(index, id) => {
                self.write_doc(index, Some(id), crate::bulk::Verb::Delete, req.query, b"")
            }
            admin => self.answer_admin(admin, req),
        }
    }

    /// Index, cluster, template, pipeline and alias routes.
    fn answer_admin(&self, route: Route, req: &RestRequest) -> RestResponse {
        match route {
            Route::CatIndices(names) => self.cat_indices(names, req.query),
            Route::GetMapping(names) => self.get_mapping(names),
            Route::CreateIndex(index) => self.put_index(index, req.body),
            Route::PutDataStream(name) => self.put_data_stream(name),
            Route::DeleteDataStream(names) => self.delete_data_stream(names),
            Route::GetDataStream(names) => self.get_data_stream(names),
            Route::PutPipeline(id) => self.put_pipeline(id, req.body),
            Route::GetPipeline(ids) => self.get_pipeline(ids, req.query),
            Route::DeletePipeline(ids) => self.delete_pipeline(ids),
            Route::AddBlock(index, block) => self.add_block(index, block),
            Route::CloseIndex(names, close) => self.close_indices(names, close, req.query),
            Route::Recovery(names) => self.recovery(names),
            Route::UpdateAliases => self.update_aliases(req.body),
            Route::PutAlias(index, name) => self.put_alias(index, name, req.body),
            Route::DeleteAlias(index, name) => self.delete_alias(index, name),
            Route::GetAlias(indices, names) => self.get_alias(indices, names),
            Route::DeleteIndex(index) => self.delete_index(index, req.query),
            Route::GetIndex(index) => self.get_index(index),
            _ => RestResponse::error(500, "exception", "a route reached no handler"),
        }
    }

    fn get_index(&self, index: &str) -> RestResponse {
        match self.index(index) {
            Some(_) => {
                let aliases = self
                    .state
                    .aliases
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .of_index(index, None);
                RestResponse::json(
                    200,
                    &json!({ index: { "aliases": aliases, "settings": { "index": { "number_of_shards": "1" } } } }),
                )
            }
            None => not_found(index),
        }
    }

    fn root(&self) -> RestResponse {
        RestResponse::json(
            200,
            &json!({
                "name": "runner",
                "cluster_name": "runner",
                "cluster_uuid": "runner-embedded",
                // Elasticsearch's fields, each one: clients read them (OSB's `build_hash`).
                "version": {
                    "number": COMPATIBLE_VERSION,
                    "build_flavor": "runner-embedded",
                    "build_type": "runner",
                    "build_hash": concat!("runner-", env!("CARGO_PKG_VERSION")),
                    "build_date": "1970-01-01T00:00:00.000Z",
                    "build_snapshot": false,
                    "lucene_version": "tantivy 0.27",
                    "minimum_wire_compatibility_version": "7.17.0",
                    "minimum_index_compatibility_version": "7.0.0",
                    "runner_version": env!("CARGO_PKG_VERSION"),
                },
                "tagline": "You Know, for Search"
            }),
        )
    }

    fn health(&self, index: Option<&str>, query: &str) -> RestResponse {
        // One node: `wait_for_nodes` is met now or never (then Elasticsearch times out, 408).
        let met = match param(query, "wait_for_nodes") {
            Some(condition) => match nodes_condition(&condition) {
                Some(met) => met,
                None => {
                    return RestResponse::error(
                        400,
                        "illegal_argument_exception",
                        &format!("cannot parse wait_for_nodes [{condition}]: a count, or >=, <=, >, < or ge(), le(), gt(), lt() of one"),
                    )
                }
            },
            None => true,
        };
        // `_all`, `*` and patterns name whatever matches; a concrete name must exist.
        for name in index.into_iter().flat_map(|n| n.split(',')) {
            if name != "_all" && !name.contains('*') && self.index(name).is_none() {
                return not_found(name);
            }
        }
        let indices = match self.resolve(index) {
            Ok(i) => i,
            Err(r) => return r,
        };
        // One node holds no replica: replicas stay unassigned and their indices yellow.
        let unassigned: u64 = indices
            .iter()
            .map(|i| {
                i.settings
                    .read()
                    .unwrap_or_else(|p| p.into_inner())
                    .unassigned_replicas()
            })
            .sum();
        let status = if unassigned > 0 { "yellow" } else { "green" };
        // Nothing changes while it waits: a status it asks for and does not have is not
        // coming, and it answers at once what Elasticsearch answers at its `timeout`.
        let rank = |s: &str| match s {
            "green" => Some(2),
            "yellow" => Some(1),
            "red" => Some(0),
            _ => None,
        };
        let met = match param(query, "wait_for_status") {
            Some(wanted) => match rank(&wanted) {
                Some(w) => met && rank(status) >= Some(w),
                None => {
                    return RestResponse::error(
                        400,
                        "illegal_argument_exception",
                        &format!("unknown cluster health status [{wanted}]"),
                    )
                }
            },
            None => met,
        };
        let active = indices.len() as u64;
        RestResponse::json(
            if met { 200 } else { 408 },
            &json!({
                "cluster_name": "runner", "status": status, "timed_out": !met,
                "number_of_nodes": 1, "number_of_data_nodes": 1,
                "active_primary_shards": active, "active_shards": active,
                "relocating_shards": 0, "initializing_shards": 0, "unassigned_shards": unassigned,
                "active_shards_percent_as_number":
                    if active + unassigned == 0 { 100.0 } else { 100.0 * active as f64 / (active + unassigned) as f64 }
            }),
        )
    }

    /// The indices a path names (all when absent), as Elasticsearch's broadcast APIs read
    /// it: a wildcard may match nothing (`allow_no_indices`).
    fn resolve(&self, names: Option<&str>) -> Result<Vec<Arc<EmbeddedIndex>>, RestResponse> {
        self.resolve_as(names, true)
    }

    /// As [`Self::resolve`]; with `allow_no_indices` false (`_settings`, `_block`), names that
    /// reach no index are a 404, as there.
    fn resolve_as(
        &self,
        names: Option<&str>,
        allow_no_indices: bool,
    ) -> Result<Vec<Arc<EmbeddedIndex>>, RestResponse> {
        let found = self.index_names(names.unwrap_or("_all"))?;
        if found.is_empty() && !allow_no_indices {
            return Err(not_found(names.unwrap_or("_all")));
        }
        let map = self.state.indices.read().unwrap_or_else(|p| p.into_inner());
        Ok(found.iter().filter_map(|n| map.get(n).cloned()).collect())
    }

    /// Index names `pattern` reaches (a name, an alias, a comma list, wildcards, `_all`): a
    /// concrete name that is no index or alias is a 404; a wildcard may match nothing.
    fn index_names(&self, pattern: &str) -> Result<Vec<String>, RestResponse> {
        let map = self.state.indices.read().unwrap_or_else(|p| p.into_inner());
        let aliases = self.state.aliases.read().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<String> = Vec::new();
        for part in pattern.split(',').filter(|p| !p.is_empty()) {
            if part.contains('*') || part == "_all" {
                let part = if part == "_all" { "*" } else { part };
                out.extend(
                    map.keys()
                        .filter(|n| crate::names::index_pattern_matches(part, n))
                        .cloned(),
                );
            } else if map.contains_key(part) {
                out.push(part.to_string());
            } else if let Some(targets) = aliases.targets(part) {
                out.extend(targets.keys().cloned());
            } else {
                return Err(not_found(part));
            }
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    fn each_index(
        &self,
        names: Option<&str>,
        f: fn(&EmbeddedIndex) -> Result<(), Error>,
    ) -> RestResponse {
        let indices = match self.resolve_open(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        for index in &indices {
            if let Err(e) = f(index) {
                return RestResponse::from_error(&e);
            }
        }
        RestResponse::json(
            200,
            &json!({ "_shards": { "total": indices.len(), "successful": indices.len(), "failed": 0 } }),
        )
    }

    /// As [`Self::resolve`], for a broadcast request (`_refresh`, `_forcemerge`): a closed
    /// index a wildcard reaches is passed over, one named is refused, as Elasticsearch does.
    fn resolve_open(&self, names: Option<&str>) -> Result<Vec<Arc<EmbeddedIndex>>, RestResponse> {
        let named: Vec<&str> = names
            .into_iter()
            .flat_map(|n| n.split(','))
            .filter(|n| !n.contains('*') && *n != "_all")
            .collect();
        let mut indices = self.resolve(names)?;
        if let Some(closed) = indices
            .iter()
            .find(|i| i.is_closed() && named.contains(&i.name.as_str()))
        {
            return Err(RestResponse::error(
                400,
                "index_closed_exception",
                &format!("index [{}] is closed", closed.name),
            ));
        }
        indices.retain(|i| !i.is_closed());
        Ok(indices)
    }

    fn force_merge(&self, names: Option<&str>, query: &str) -> RestResponse {
        // -1 is Elasticsearch's own default, as Rally's tracks send it: here, one segment.
        let given = param(query, "max_num_segments");
        let max = match given.as_deref().map(|n| (n, n.parse::<u64>())) {
            None | Some(("-1", _)) => 1,
            Some((_, Ok(n))) if n > 0 => n,
            Some(_) => {
                return RestResponse::error(
                    400,
                    "illegal_argument_exception",
                    "max_num_segments must be a positive integer or -1",
                )
            }
        };
        let indices = match self.resolve_open(names) {
            Ok(i) => i,
            Err(r) => return r,
        };
        for index in &indices {
            if let Err(e) = index.force_merge(max) {
                return RestResponse::from_error(&e);
            }
        }
        // Asked not to wait: Elasticsearch answers the task's id, which is done here already.
        if param(query, "wait_for_completion").as_deref() == Some("false") {
            let n = 1 + self
                .state
                .tasks_issued
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            return RestResponse::json(200, &json!({ "task": format!("{TASK_NODE}:{n}") }));
        }
        RestResponse::json(
            200,
            &json!({ "_shards": { "total": indices.len(), "successful": indices.len(), "failed": 0 } }),
        )
    }

    /// A task handed out before: completed (each is done before its id is answered).
    fn get_task(&self, id: &str) -> RestResponse {
        let issued = self
            .state
            .tasks_issued
            .load(std::sync::atomic::Ordering::Relaxed);
        let known = id
            .strip_prefix(TASK_NODE)
            .and_then(|n| n.strip_prefix(':'))
            .and_then(|n| n.parse::<u64>().ok())
            .filter(|n| (1..=issued).contains(n));
        match known {
            Some(n) => RestResponse::json(
                200,
                &json!({
                    "completed": true,
                    "task": {"node": TASK_NODE, "id": n, "type": "transport", "action": "indices:admin/forcemerge", "cancellable": false},
                    "response": {"_shards": {"failed": 0}}
                }),
            ),
            None => RestResponse::error(
                404,
                "resource_not_found_exception",
                &format!("task [{id}] isn't running and hasn't stored its results"),
            ),
        }
    }

    fn put_index(&self, name: &str, body: &[u8]) -> RestResponse {
        if let Err(why) = crate::names::check_index_name(name) {
            return RestResponse::error(400, "invalid_index_name_exception", &why);
        }
        let body = match parse_body(body) {
            Ok(b) => b,
            Err(r) => return r,
        };
        match self.state.create_index(name, &body) {
            Ok(()) => {}
            Err(crate::cluster::CreateError::Mapping(m)) => {
                // Elasticsearch says what the mapper or the settings refused under its own
                // exception, as the cause.
                let cause = if m.contains("field name cannot be an empty string") {
                    Some("illegal_argument_exception")
                } else if m.contains("soft-deletes") {
                    return RestResponse::error(400, "illegal_argument_exception", &m);
                } else {
                    None
                };
                let mut r = json!({ "error": { "root_cause": [{ "type": "mapper_parsing_exception", "reason": m }], "type": "mapper_parsing_exception", "reason": m }, "status": 400 });
                if let Some(c) = cause {
                    r["error"]["caused_by"] = json!({ "type": c, "reason": m });
                }
                return RestResponse::json(400, &r);
            }
            Err(crate::cluster::CreateError::Exists) => {
                return RestResponse::error(
                    400,
                    "resource_already_exists_exception",
                    &format!("index [{name}] already exists"),
                )
            }
        }
        RestResponse::json(
            200,
            &json!({ "acknowledged": true, "shards_acknowledged": true, "index": name }),
        )
    }

    fn delete_index(&self, names: &str, query: &str) -> RestResponse {
        let lenient = param(query, "ignore_unavailable").as_deref() == Some("true");
        let map = self
            .state
            .indices
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let names: Vec<&str> = names.split(',').collect();
        if !lenient {
            if let Some(missing) = names.iter().find(|n| !map.contains_key(**n)) {
                return not_found(missing);
            }
        }
        drop(map);
        self.state.remove_indices(names.into_iter());
        RestResponse::json(200, &json!({ "acknowledged": true }))
    }
}

#[cfg(test)]
pub(crate) mod tests;
#[cfg(test)]
mod vector_tests;
