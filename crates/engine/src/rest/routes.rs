//! The route table: every endpoint the engine answers, by method and path segments, with the
//! URL parameters each one runs. Read by [`crate::cluster::Engine::rest`] and by the pre-race
//! check that names a raw request the engine has no endpoint for.

use crate::rest::pit::Flavor;

/// The endpoints the engine answers; one list, read by [`Engine::rest`] and by the
/// check that names a raw request the engine has no endpoint for before a race.
pub(crate) enum Route<'a> {
    Root,
    Health(Option<&'a str>),
    Bulk(Option<&'a str>),
    Refresh(Option<&'a str>),
    ForceMerge(Option<&'a str>),
    /// Index stats: the indices and the metrics named in the path.
    Stats(Option<&'a str>, Option<&'a str>),
    NodeStats,
    NodeInfo,
    PutClusterSettings,
    GetClusterSettings,
    ClusterState(Option<&'a str>),
    IndexSettings(Option<&'a str>),
    /// `GET [<index>/]_settings[/<name>]`.
    GetSettings(Option<&'a str>, Option<&'a str>),
    PutTemplate(&'a str, &'a str),
    DeleteTemplate(&'a str, &'a str),
    GetTemplate(&'a str, Option<&'a str>),
    Scroll(Option<&'a str>),
    ClearScroll(Option<&'a str>),
    Search(&'a str, bool),
    GetDoc(&'a str, &'a str),
    GetSource(&'a str, &'a str),
    DeleteByQuery(&'a str),
    OpenPit(&'a str, crate::rest::pit::Flavor),
    ClosePit(bool, crate::rest::pit::Flavor),
    ListPits,
    UpdateByQuery(&'a str),
    PutDoc(&'a str, Option<&'a str>),
    CreateDoc(&'a str, &'a str),
    UpdateDoc(&'a str, &'a str),
    MultiSearch(Option<&'a str>),
    MultiGet(Option<&'a str>),
    CatIndices(Option<&'a str>),
    GetMapping(Option<&'a str>),
    DeleteDoc(&'a str, &'a str),
    CreateIndex(&'a str),
    DeleteIndex(&'a str),
    GetIndex(&'a str),
    PutDataStream(&'a str),
    DeleteDataStream(&'a str),
    GetDataStream(Option<&'a str>),
    PutPipeline(&'a str),
    GetPipeline(Option<&'a str>),
    DeletePipeline(&'a str),
    AddBlock(&'a str, &'a str),
    /// `POST <index>/_close` (true) or `_open` (false).
    CloseIndex(&'a str, bool),
    Recovery(Option<&'a str>),
    UpdateAliases,
    PutAlias(&'a str, &'a str),
    DeleteAlias(&'a str, &'a str),
    GetAlias(Option<&'a str>, Option<&'a str>),
    /// `POST /_query`: ES|QL.
    Esql,
    /// `GET /_tasks/<node:id>`: a task handed out by `wait_for_completion=false`.
    GetTask(&'a str),
}

pub(crate) fn route<'a>(method: &str, segments: &[&'a str]) -> Option<Route<'a>> {
    const TEMPLATES: [&str; 3] = ["_template", "_index_template", "_component_template"];
    Some(match (method, segments) {
        ("GET" | "HEAD", []) => Route::Root,
        ("GET", ["_cluster", "health"]) => Route::Health(None),
        ("GET", ["_cluster", "health", index]) => Route::Health(Some(index)),
        ("POST" | "PUT", ["_bulk"]) => Route::Bulk(None),
        ("POST" | "PUT", [index, "_bulk"]) => Route::Bulk(Some(index)),
        ("POST" | "GET", ["_refresh"]) => Route::Refresh(None),
        ("POST" | "GET", [index, "_refresh"]) => Route::Refresh(Some(index)),
        ("POST", ["_forcemerge"]) => Route::ForceMerge(None),
        ("POST", [index, "_forcemerge"]) => Route::ForceMerge(Some(index)),
        ("GET", ["_tasks", id]) => Route::GetTask(id),
        // A metric (`_all`, `docs,store`, ...) shows what the engine keeps: docs, store, segments.
        ("GET", ["_stats"]) => Route::Stats(None, None),
        ("GET", ["_stats", metric]) => Route::Stats(None, Some(metric)),
        ("GET", [index, "_stats"]) => Route::Stats(Some(index), None),
        ("GET", [index, "_stats", metric]) => Route::Stats(Some(index), Some(metric)),
        (
            "GET",
            ["_nodes", "stats"]
            | ["_nodes", "stats", _]
            | ["_nodes", _, "stats"]
            | ["_nodes", _, "stats", _],
        ) => Route::NodeStats,
        ("GET", ["_nodes"] | ["_nodes", _] | ["_nodes", _, _]) => Route::NodeInfo,
        ("PUT", ["_cluster", "settings"]) => Route::PutClusterSettings,
        ("GET", ["_cluster", "settings"]) => Route::GetClusterSettings,
        ("GET", ["_cluster", "state"]) => Route::ClusterState(None),
        ("GET", ["_cluster", "state", metrics]) => Route::ClusterState(Some(metrics)),
        ("PUT", [index, "_settings"]) => Route::IndexSettings(Some(index)),
        ("PUT", ["_settings"]) => Route::IndexSettings(None),
        ("GET", ["_settings"]) => Route::GetSettings(None, None),
        ("GET", ["_settings", name]) => Route::GetSettings(None, Some(name)),
        ("GET", [index, "_settings"]) => Route::GetSettings(Some(index), None),
        ("GET", [index, "_settings", name]) => Route::GetSettings(Some(index), Some(name)),
        ("PUT" | "POST", [kind, name]) if TEMPLATES.contains(kind) => {
            Route::PutTemplate(kind, name)
        }
        ("DELETE", [kind, name]) if TEMPLATES.contains(kind) => Route::DeleteTemplate(kind, name),
        ("GET" | "HEAD", [kind, name]) if TEMPLATES.contains(kind) => {
            Route::GetTemplate(kind, Some(name))
        }
        ("GET", [kind]) if TEMPLATES.contains(kind) => Route::GetTemplate(kind, None),
        ("PUT", ["_data_stream", name]) => Route::PutDataStream(name),
        ("DELETE", ["_data_stream", names]) => Route::DeleteDataStream(names),
        ("GET", ["_data_stream"]) => Route::GetDataStream(None),
        ("GET", ["_data_stream", names]) => Route::GetDataStream(Some(names)),
        ("PUT", ["_ingest", "pipeline", id]) => Route::PutPipeline(id),
        ("GET", ["_ingest", "pipeline"]) => Route::GetPipeline(None),
        ("GET", ["_ingest", "pipeline", ids]) => Route::GetPipeline(Some(ids)),
        ("DELETE", ["_ingest", "pipeline", ids]) => Route::DeletePipeline(ids),
        ("PUT", [index, "_block", block]) => Route::AddBlock(index, block),
        ("POST", [index, "_close"]) => Route::CloseIndex(index, true),
        ("POST", [index, "_open"]) => Route::CloseIndex(index, false),
        ("POST", ["_aliases"]) => Route::UpdateAliases,
        ("PUT" | "POST", [index, "_alias" | "_aliases", name]) => Route::PutAlias(index, name),
        ("DELETE", [index, "_alias" | "_aliases", name]) => Route::DeleteAlias(index, name),
        ("GET" | "HEAD", ["_alias"]) => Route::GetAlias(None, None),
        ("GET" | "HEAD", ["_alias", name]) => Route::GetAlias(None, Some(name)),
        ("GET" | "HEAD", [index, "_alias"]) => Route::GetAlias(Some(index), None),
        ("GET" | "HEAD", [index, "_alias", name]) => Route::GetAlias(Some(index), Some(name)),
        ("GET", ["_mapping"]) => Route::GetMapping(None),
        ("GET", [index, "_mapping"]) => Route::GetMapping(Some(index)),
        ("GET", ["_cat", "indices"]) => Route::CatIndices(None),
        ("GET", ["_cat", "indices", names]) => Route::CatIndices(Some(names)),
        ("GET", ["_recovery"]) => Route::Recovery(None),
        ("GET", [index, "_recovery"]) => Route::Recovery(Some(index)),
        ("GET" | "POST", ["_search", "scroll"]) => Route::Scroll(None),
        ("GET" | "POST", ["_search", "scroll", id]) => Route::Scroll(Some(id)),
        ("DELETE", ["_search", "scroll"]) => Route::ClearScroll(None),
        ("DELETE", ["_search", "scroll", ids]) => Route::ClearScroll(Some(ids)),
        ("GET" | "POST", ["_search"]) => Route::Search("_all", false),
        ("GET" | "POST", ["_count"]) => Route::Search("_all", true),
        ("GET" | "POST", [index, "_search"]) => Route::Search(index, false),
        ("GET" | "POST", [index, "_count"]) => Route::Search(index, true),
        _ => return document_route(method, segments),
    })
}

/// The document, search-context and index routes of [`route`].
fn document_route<'a>(method: &str, segments: &[&'a str]) -> Option<Route<'a>> {
    Some(match (method, segments) {
        ("GET" | "HEAD", [index, "_doc", id]) => Route::GetDoc(index, id),
        ("GET" | "HEAD", [index, "_source", id]) => Route::GetSource(index, id),
        ("PUT" | "POST", [index, "_doc", id]) => Route::PutDoc(index, Some(id)),
        ("POST", [index, "_doc"]) => Route::PutDoc(index, None),
        ("PUT" | "POST", [index, "_create", id]) => Route::CreateDoc(index, id),
        ("POST", [index, "_update", id]) => Route::UpdateDoc(index, id),
        ("POST", [index, "_pit"]) => Route::OpenPit(index, Flavor::Elasticsearch),
        ("DELETE", ["_pit"]) => Route::ClosePit(false, Flavor::Elasticsearch),
        ("POST", [index, "_search", "point_in_time"]) => Route::OpenPit(index, Flavor::OpenSearch),
        ("DELETE", ["_search", "point_in_time"]) => Route::ClosePit(false, Flavor::OpenSearch),
        ("DELETE", ["_search", "point_in_time", "_all"]) => {
            Route::ClosePit(true, Flavor::OpenSearch)
        }
        ("GET", ["_search", "point_in_time", "_all"]) => Route::ListPits,
        ("POST", [index, "_delete_by_query"]) => Route::DeleteByQuery(index),
        ("POST", [index, "_update_by_query"]) => Route::UpdateByQuery(index),
        ("POST", ["_query"]) => Route::Esql,
        ("GET" | "POST", ["_msearch"]) => Route::MultiSearch(None),
        ("GET" | "POST", [index, "_msearch"]) => Route::MultiSearch(Some(index)),
        ("GET" | "POST", ["_mget"]) => Route::MultiGet(None),
        ("GET" | "POST", [index, "_mget"]) => Route::MultiGet(Some(index)),
        ("DELETE", [index, "_doc", id]) => Route::DeleteDoc(index, id),
        ("PUT", [index]) if !index.starts_with('_') => Route::CreateIndex(index),
        ("DELETE", [index]) if !index.starts_with('_') => Route::DeleteIndex(index),
        ("HEAD" | "GET", [index]) if !index.starts_with('_') => Route::GetIndex(index),
        _ => return None,
    })
}

/// A path's segments, each percent-decoded (`%3Clogs%3E` is `<logs>`; an encoded `/` stays
/// inside its segment).
pub(crate) fn segments(path: &str) -> Vec<std::borrow::Cow<'_, str>> {
    path.trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(crate::rest::params::decode_path)
        .collect()
}

/// The segments as `route` reads them.
pub(crate) fn as_strs<'a>(segments: &'a [std::borrow::Cow<'_, str>]) -> Vec<&'a str> {
    segments.iter().map(|s| s.as_ref()).collect()
}

/// Whether the engine has an endpoint for `method path`.
pub fn answers(method: &str, path: &str) -> bool {
    route(method, &as_strs(&segments(path))).is_some()
}

/// URL parameters every endpoint takes: output formatting (`filter_path` is applied to every
/// answer), and time bounds that one in-memory node, answering at once, always meets.
const GLOBAL_PARAMS: [&str; 6] = [
    "pretty",
    "human",
    "error_trace",
    "filter_path",
    "master_timeout",
    "timeout",
];

/// What a search or count reads from the URL besides its body (`rest/search.rs` runs each).
pub(crate) const SEARCH_PARAMS: [&str; 29] = [
    "scroll",
    "docvalue_fields",
    "stored_fields",
    "size",
    "from",
    "sort",
    "_source",
    "_source_includes",
    "_source_excludes",
    "q",
    "df",
    "default_operator",
    "lenient",
    "analyze_wildcard",
    "track_total_hits",
    "rest_total_hits_as_int",
    "version",
    "seq_no_primary_term",
    "request_cache",
    "preference",
    "search_type",
    "allow_no_indices",
    "ignore_unavailable",
    "expand_wildcards",
    "batched_reduce_size",
    "pre_filter_shard_size",
    "max_concurrent_shard_requests",
    "ccs_minimize_roundtrips",
    "allow_partial_search_results",
];

/// The query a count or a by-query request reads from the URL (`q` and its options), and the
/// index options that change nothing on one node.
const QUERY_PARAMS: [&str; 9] = [
    "q",
    "df",
    "default_operator",
    "lenient",
    "analyze_wildcard",
    "preference",
    "allow_no_indices",
    "ignore_unavailable",
    "expand_wildcards",
];

/// `_doc` and `_create` writes. `routing` picks a shard, and there is one.
const WRITE_PARAMS: [&str; 10] = [
    "refresh",
    "wait_for_active_shards",
    "op_type",
    "pipeline",
    "if_seq_no",
    "if_primary_term",
    "version",
    "version_type",
    "require_alias",
    "routing",
];

/// Gets, `_source` and mgets.
const GET_PARAMS: [&str; 10] = [
    "realtime",
    "refresh",
    "preference",
    "routing",
    "_source",
    "_source_includes",
    "_source_excludes",
    "stored_fields",
    "version",
    "version_type",
];

/// One green node: every wait is met at once.
const HEALTH_PARAMS: [&str; 7] = [
    "wait_for_status",
    "wait_for_no_relocating_shards",
    "wait_for_no_initializing_shards",
    "wait_for_active_shards",
    "wait_for_events",
    "wait_for_nodes",
    "local",
];

/// `_bulk`.
const BULK_PARAMS: [&str; 5] = [
    "pipeline",
    "refresh",
    "wait_for_active_shards",
    "require_alias",
    "routing",
];

/// `GET _settings`.
const GET_SETTINGS_PARAMS: [&str; 6] = [
    "flat_settings",
    "include_defaults",
    "local",
    "ignore_unavailable",
    "allow_no_indices",
    "expand_wildcards",
];

/// Opening a point in time.
const OPEN_PIT_PARAMS: [&str; 6] = [
    "keep_alive",
    "preference",
    "routing",
    "ignore_unavailable",
    "expand_wildcards",
    "allow_partial_search_results",
];

/// `_delete_by_query` and `_update_by_query`.
const BY_QUERY_PARAMS: [&str; 9] = [
    "conflicts",
    "max_docs",
    "scroll_size",
    "refresh",
    "wait_for_completion",
    "wait_for_active_shards",
    "scroll",
    "search_timeout",
    "routing",
];

/// `_update/<id>`.
const UPDATE_PARAMS: [&str; 7] = [
    "refresh",
    "wait_for_active_shards",
    "if_seq_no",
    "if_primary_term",
    "require_alias",
    "routing",
    "retry_on_conflict",
];

/// `_msearch`.
const MSEARCH_PARAMS: [&str; 6] = [
    "rest_total_hits_as_int",
    "max_concurrent_searches",
    "search_type",
    "pre_filter_shard_size",
    "max_concurrent_shard_requests",
    "ccs_minimize_roundtrips",
];

/// `_cat/indices`.
const CAT_INDICES_PARAMS: [&str; 7] = [
    "v",
    "h",
    "s",
    "format",
    "bytes",
    "expand_wildcards",
    "health",
];

/// Deleting a document.
const DELETE_PARAMS: [&str; 7] = [
    "refresh",
    "wait_for_active_shards",
    "if_seq_no",
    "if_primary_term",
    "version",
    "version_type",
    "routing",
];

impl Route<'_> {
    /// The URL parameters this endpoint runs, besides [`GLOBAL_PARAMS`]. Anything else is a
    /// 400 naming it, as Elasticsearch answers an unrecognized parameter: never ignored.
    pub(crate) fn params(&self) -> [&'static [&'static str]; 2] {
        match self {
            Route::Search(_, true) => [&["terminate_after"], &QUERY_PARAMS],
            Route::DeleteByQuery(_) | Route::UpdateByQuery(_) => [&BY_QUERY_PARAMS, &QUERY_PARAMS],
            other => [other.own_params(), &[]],
        }
    }

    /// The parameters of routes that take one list.
    fn own_params(&self) -> &'static [&'static str] {
        match self {
            Route::Health(_) => &HEALTH_PARAMS,
            Route::Bulk(_) => &BULK_PARAMS,
            Route::Stats(..) => &["level"],
            Route::GetPipeline(_) => &["summary"],
            Route::GetSettings(..) => &GET_SETTINGS_PARAMS,
            Route::OpenPit(..) => &OPEN_PIT_PARAMS,
            Route::GetClusterSettings => &["flat_settings"],
            Route::PutClusterSettings => &["flat_settings"],
            Route::ClusterState(_) => &["local"],
            Route::ForceMerge(_) => &["max_num_segments", "wait_for_completion", "flush"],
            Route::Scroll(_) => &["scroll", "scroll_id", "rest_total_hits_as_int"],
            Route::Search(_, false) => &SEARCH_PARAMS,
            Route::PutDoc(..) => &WRITE_PARAMS,
            Route::CreateDoc(..) => &WRITE_PARAMS,
            Route::UpdateDoc(..) => &UPDATE_PARAMS,
            Route::MultiSearch(_) => &MSEARCH_PARAMS,
            Route::Esql => &["format"],
            Route::GetTask(_) => &["wait_for_completion", "timeout"],
            Route::MultiGet(_) => &GET_PARAMS,
            Route::CatIndices(_) => &CAT_INDICES_PARAMS,
            Route::DeleteDoc(..) => &DELETE_PARAMS,
            Route::GetDoc(..) | Route::GetSource(..) => &GET_PARAMS,
            Route::CreateIndex(_) => &["wait_for_active_shards"],
            Route::DeleteIndex(_) => &["ignore_unavailable"],
            Route::CloseIndex(..) => &[
                "wait_for_active_shards",
                "ignore_unavailable",
                "allow_no_indices",
                "expand_wildcards",
            ],
            // One node: `master_timeout` has nothing to wait for, `cause` only names the change.
            Route::PutTemplate(..) => &["create", "cause", "master_timeout"],
            _ => &[],
        }
    }
}

/// Parameters taken with some values only: the others ask for what one synchronous node does
/// not do (an asynchronous task, a get that misses unrefreshed documents).
const ONLY_VALUES: [(&str, &[&str]); 2] = [
    ("wait_for_completion", &["true", ""]),
    ("realtime", &["true", ""]),
];

/// The first URL parameter `route` does not run, in Elasticsearch's words.
pub(crate) fn unrecognized(route: &Route, path: &str, query: &str) -> Option<String> {
    for (name, value) in crate::rest::params::pairs(query) {
        // A force-merge asked not to wait answers a task id (done before it is answered).
        if matches!(route, Route::ForceMerge(_)) && name == "wait_for_completion" {
            continue;
        }
        if let Some((_, allowed)) = ONLY_VALUES.iter().find(|(n, _)| *n == name) {
            if !allowed.contains(&value.as_ref()) {
                return Some(format!(
                    "request [{path}]: [{name}={value}] is not run by runner serve (only [{name}=true])"
                ));
            }
        }
    }
    let accepted: Vec<&str> = route
        .params()
        .iter()
        .flat_map(|g| g.iter().copied())
        .collect();
    let (name, _) = crate::rest::params::pairs(query)
        .find(|(k, _)| !GLOBAL_PARAMS.contains(&k.as_ref()) && !accepted.contains(&k.as_ref()))?;
    let hint = crate::util::did_you_mean(&name, accepted.iter().copied());
    Some(format!(
        "request [{path}] contains unrecognized parameter: [{name}]{hint} (runner serve runs {})",
        if accepted.is_empty() {
            "none but the global ones".to_string()
        } else {
            accepted.join(", ")
        }
    ))
}

/// The metrics `_stats` takes in its path.
const STATS_METRICS: [&str; 20] = [
    "_all",
    "bulk",
    "completion",
    "dense_vector",
    "docs",
    "fielddata",
    "flush",
    "get",
    "indexing",
    "mappings",
    "merge",
    "query_cache",
    "refresh",
    "request_cache",
    "search",
    "segments",
    "shard_stats",
    "sparse_vector",
    "store",
    "warmer",
];

/// A `_stats` path metric Elasticsearch does not know, in its words.
pub(crate) fn unknown_stats_metric(path: &str, metrics: &str) -> Option<String> {
    let unknown = metrics.split(',').find(|m| !STATS_METRICS.contains(m))?;
    let hint = STATS_METRICS
        .iter()
        .map(|c| (strsim::jaro_winkler(unknown, c), *c))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| format!(" -> did you mean [{c}]?"))
        .unwrap_or_default();
    Some(format!(
        "request [{path}] contains unrecognized metric: [{unknown}]{hint}"
    ))
}
