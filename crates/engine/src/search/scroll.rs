//! The scroll contexts an engine holds open: a searcher (a snapshot of the index) and where the
//! next page starts, until cleared or past their keep-alive.

use crate::index::EmbeddedIndex;
use crate::search::fetch::FetchPlan;
use crate::search::sort::{After, Sort};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tantivy::query::Query;
use tantivy::Searcher;

/// The open scrolls of one engine.
#[derive(Default)]
pub struct Scrolls {
    pub(crate) next_id: u64,
    pub(crate) open: HashMap<String, ScrollContext>,
}

pub(crate) struct ScrollContext {
    pub(crate) index: Arc<EmbeddedIndex>,
    pub(crate) searcher: Searcher,
    pub(crate) query: Box<dyn Query>,
    pub(crate) sort: Sort,
    pub(crate) per_page: usize,
    pub(crate) after: Option<After>,
    pub(crate) total: u64,
    pub(crate) keep_alive: Duration,
    pub(crate) expires: Instant,
    /// The first page's `fields` and `highlight`, for every page.
    pub(crate) fetch: Arc<FetchPlan>,
}
