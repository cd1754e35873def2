//! An Elasticsearch-compatible engine in process: indices on tantivy with Elasticsearch's
//! mappings, query DSL, aggregations, aliases, templates, data streams and ingest pipelines,
//! behind the REST API's request and answer shapes; and an in-memory key-value store.
//!
//! It knows nothing of tracks, races or measurements: the runner's embedded backend and
//! `runner serve` are thin layers over [`Engine`], [`EmbeddedIndex`] and [`rest`].
//!
//! The modules, from the bottom up: `names` and `util`; `geo` (geometry); `mapping` (field
//! types, dates, dynamic mapping); `bulk` (write actions); `index` (one index and its storage);
//! `dsl` (the query DSL compiled to tantivy queries); `aggs`; `search` (paging, scroll, sort,
//! fetch, highlight); `ingest` (pipelines); `cluster` (the state behind [`Engine`]); `rest`
//! (the route table and Elasticsearch's answers); `kv` (the key-value store).

pub mod aggs;
pub mod bulk;
mod cluster;
mod dsl;
mod error;
pub mod esql;
mod geo;
pub mod index;
mod ingest;
pub mod kv;
mod mapping;
mod murmur3;
pub mod names;
mod names_math;
pub mod painless;
pub mod rest;
pub mod search;
mod util;
pub mod vector;
pub(crate) mod zone;

pub use cluster::aliases::with_filter as with_alias_filter;
pub use cluster::terms_lookup::lookups_emptied;
pub use cluster::{CreateError, Engine, RefreshSchedule};
pub use error::{Error, ErrorKind};
pub use index::storage;
pub use index::EmbeddedIndex;
pub use kv::{ArgTemplate, Found, KvStore, StoreCommand};
pub use rest::{RestRequest, RestResponse, COMPATIBLE_VERSION};
pub use search::{PageBy, Paged, Paging, SearchPlan};

/// Why a search body cannot run here, named before any index exists.
pub fn unsupported_search(body: &serde_json::Value) -> Option<String> {
    crate::search::unsupported_body(body)
}

/// A search compiled against the mapping its index is created with (`index_body`), before
/// that index exists: what the mapping decides (a text field aggregated, a geo_point sorted
/// on, a field the mapping lacks) is named then.
pub fn check_search_against(
    index: &str,
    index_body: &serde_json::Value,
    search_body: &serde_json::Value,
) -> Option<String> {
    // A mapping the engine cannot build is named by the create-index's own check.
    let mapping = crate::mapping::Mapping::from_index_body(index_body).ok()?;
    let tantivy_index = tantivy::Index::create_in_ram(mapping.schema.clone());
    // A terms lookup's values are another document's, found per search.
    let search_body = cluster::terms_lookup::lookups_emptied(search_body);
    crate::search::compile_search(index, &mapping, &tantivy_index, &search_body)
        .err()
        .map(|e| e.message)
}
