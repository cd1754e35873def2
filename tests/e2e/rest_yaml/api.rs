//! The Elasticsearch APIs the REST tests call, as rest-api-spec defines their URLs: each a list
//! of methods (the first used, POST/PUT when there is a body) and paths with `{part}`s.

pub struct Api {
    pub name: &'static str,
    pub methods: &'static [&'static str],
    pub paths: &'static [&'static str],
    /// Bodies sent as newline-delimited JSON (`bulk`, `msearch`).
    pub ndjson: bool,
}

const fn api(
    name: &'static str,
    methods: &'static [&'static str],
    paths: &'static [&'static str],
) -> Api {
    Api {
        name,
        methods,
        paths,
        ndjson: false,
    }
}

const GET: &[&str] = &["GET"];
const POST: &[&str] = &["POST"];
const PUT: &[&str] = &["PUT"];
const DELETE: &[&str] = &["DELETE"];
const HEAD: &[&str] = &["HEAD"];
const GET_POST: &[&str] = &["GET", "POST"];
const PUT_POST: &[&str] = &["PUT", "POST"];

pub const APIS: &[Api] = &[
    api("info", GET, &["/"]),
    Api {
        name: "bulk",
        methods: PUT_POST,
        paths: &["/_bulk", "/{index}/_bulk"],
        ndjson: true,
    },
    Api {
        name: "msearch",
        methods: GET_POST,
        paths: &["/_msearch", "/{index}/_msearch"],
        ndjson: true,
    },
    api("index", PUT_POST, &["/{index}/_doc/{id}", "/{index}/_doc"]),
    api("create", PUT_POST, &["/{index}/_create/{id}"]),
    api("get", GET, &["/{index}/_doc/{id}"]),
    api("get_source", GET, &["/{index}/_source/{id}"]),
    api("exists", HEAD, &["/{index}/_doc/{id}"]),
    api("exists_source", HEAD, &["/{index}/_source/{id}"]),
    api("delete", DELETE, &["/{index}/_doc/{id}"]),
    api("update", POST, &["/{index}/_update/{id}"]),
    api("mget", GET_POST, &["/_mget", "/{index}/_mget"]),
    api("search", GET_POST, &["/_search", "/{index}/_search"]),
    api("count", GET_POST, &["/_count", "/{index}/_count"]),
    api(
        "scroll",
        GET_POST,
        &["/_search/scroll", "/_search/scroll/{scroll_id}"],
    ),
    api(
        "clear_scroll",
        DELETE,
        &["/_search/scroll", "/_search/scroll/{scroll_id}"],
    ),
    api("delete_by_query", POST, &["/{index}/_delete_by_query"]),
    api("update_by_query", POST, &["/{index}/_update_by_query"]),
    api("open_point_in_time", POST, &["/{index}/_pit"]),
    api("close_point_in_time", DELETE, &["/_pit"]),
    api("tasks.get", GET, &["/_tasks/{task_id}"]),
    api("indices.create", PUT, &["/{index}"]),
    api("indices.delete", DELETE, &["/{index}"]),
    api("indices.exists", HEAD, &["/{index}"]),
    api("indices.get", GET, &["/{index}"]),
    api("indices.close", POST, &["/{index}/_close"]),
    api("indices.open", POST, &["/{index}/_open"]),
    api("indices.add_block", PUT, &["/{index}/_block/{block}"]),
    api(
        "indices.refresh",
        &["POST", "GET"],
        &["/_refresh", "/{index}/_refresh"],
    ),
    api(
        "indices.flush",
        &["POST", "GET"],
        &["/_flush", "/{index}/_flush"],
    ),
    api(
        "indices.forcemerge",
        POST,
        &["/_forcemerge", "/{index}/_forcemerge"],
    ),
    api("indices.put_alias", PUT_POST, &["/{index}/_alias/{name}"]),
    api("indices.delete_alias", DELETE, &["/{index}/_alias/{name}"]),
    api(
        "indices.get_alias",
        GET,
        &[
            "/_alias",
            "/_alias/{name}",
            "/{index}/_alias/{name}",
            "/{index}/_alias",
        ],
    ),
    api(
        "indices.exists_alias",
        HEAD,
        &["/_alias/{name}", "/{index}/_alias/{name}"],
    ),
    api("indices.update_aliases", POST, &["/_aliases"]),
    api(
        "indices.get_mapping",
        GET,
        &["/_mapping", "/{index}/_mapping"],
    ),
    api("indices.put_mapping", PUT_POST, &["/{index}/_mapping"]),
    api(
        "indices.get_settings",
        GET,
        &[
            "/_settings",
            "/{index}/_settings",
            "/{index}/_settings/{name}",
            "/_settings/{name}",
        ],
    ),
    api(
        "indices.put_settings",
        PUT,
        &["/_settings", "/{index}/_settings"],
    ),
    api(
        "indices.stats",
        GET,
        &[
            "/_stats",
            "/_stats/{metric}",
            "/{index}/_stats",
            "/{index}/_stats/{metric}",
        ],
    ),
    api(
        "indices.put_index_template",
        PUT_POST,
        &["/_index_template/{name}"],
    ),
    api(
        "indices.delete_index_template",
        DELETE,
        &["/_index_template/{name}"],
    ),
    api("indices.put_template", PUT_POST, &["/_template/{name}"]),
    api("indices.create_data_stream", PUT, &["/_data_stream/{name}"]),
    api(
        "indices.delete_data_stream",
        DELETE,
        &["/_data_stream/{name}"],
    ),
    api(
        "cat.indices",
        GET,
        &["/_cat/indices", "/_cat/indices/{index}"],
    ),
    api(
        "cluster.health",
        GET,
        &["/_cluster/health", "/_cluster/health/{index}"],
    ),
    api(
        "cluster.state",
        GET,
        &["/_cluster/state", "/_cluster/state/{metric}"],
    ),
    api("cluster.put_settings", PUT, &["/_cluster/settings"]),
    api("cluster.get_settings", GET, &["/_cluster/settings"]),
    api("ingest.put_pipeline", PUT, &["/_ingest/pipeline/{id}"]),
    api(
        "ingest.get_pipeline",
        GET,
        &["/_ingest/pipeline", "/_ingest/pipeline/{id}"],
    ),
    api(
        "ingest.delete_pipeline",
        DELETE,
        &["/_ingest/pipeline/{id}"],
    ),
    api(
        "ingest.simulate",
        GET_POST,
        &[
            "/_ingest/pipeline/_simulate",
            "/_ingest/pipeline/{id}/_simulate",
        ],
    ),
    api(
        "nodes.stats",
        GET,
        &["/_nodes/stats", "/_nodes/stats/{metric}"],
    ),
    api("nodes.info", GET, &["/_nodes", "/_nodes/{metric}"]),
];

pub fn find(name: &str) -> Option<&'static Api> {
    APIS.iter().find(|a| a.name == name)
}

/// The path among `api.paths` whose parts are all given, the most specific first.
pub fn pick_path<'a>(api: &'a Api, has_part: impl Fn(&str) -> bool) -> Option<&'a str> {
    api.paths
        .iter()
        .filter(|p| parts(p).all(&has_part))
        .max_by_key(|p| parts(p).count())
        .copied()
}

pub fn parts(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
}
