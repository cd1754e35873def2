//! Reading a search page by page: one cursor, used by the REST scroll API (whose open contexts
//! are kept here too) and by the `paged` operation (scroll or `search_after`).

use crate::error::Error;
use crate::index::EmbeddedIndex;
use crate::search::fetch::FetchPlan;
use crate::search::sort::{After, Sort};
use crate::search::{Page, SearchPlan, Window};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tantivy::query::Query;
use tantivy::Searcher;

/// Where a paged read is: the snapshot it reads, its sort and page size, the search's total,
/// and the hit after which the next page starts.
pub(crate) struct Cursor {
    pub(crate) searcher: Searcher,
    sort: Sort,
    per_page: usize,
    after: Option<After>,
    pub(crate) total: u64,
}

impl Cursor {
    /// The first page (counting every hit, skipping `skip`), and the cursor after it.
    pub(crate) fn open(
        index: &EmbeddedIndex,
        searcher: Searcher,
        plan: &SearchPlan,
        per_page: usize,
        skip: usize,
    ) -> Result<(Cursor, Page), Error> {
        let sort = plan
            .sort
            .clone()
            .unwrap_or_else(|| Sort::relevance().clone());
        let window = Window {
            after: plan.after,
            skip,
            limit: per_page,
        };
        let page = index.page(&searcher, plan.query.as_ref(), &sort, window, true)?;
        // The first page counts every match, so every script has run on every document.
        plan.script_failure()?;
        let cursor = Cursor {
            searcher,
            sort,
            per_page,
            after: page.next.or(plan.after),
            total: page.total,
        };
        Ok((cursor, page))
    }

    /// The next page of the same snapshot; the cursor moves past its last hit.
    pub(crate) fn next(&mut self, index: &EmbeddedIndex, query: &dyn Query) -> Result<Page, Error> {
        let window = Window {
            after: self.after,
            skip: 0,
            limit: self.per_page,
        };
        let page = index.page(&self.searcher, query, &self.sort, window, false)?;
        self.after = page.next.or(self.after);
        Ok(page)
    }

    /// Goes on as a client with `search_after` does: from a fresh snapshot, with only the last
    /// hit's sort values to continue from.
    pub(crate) fn continue_as_client(&mut self, index: &EmbeddedIndex) {
        self.searcher = index.searcher();
        self.after = self.after.map(|a| self.sort.user_cursor(a));
    }
}

/// The open scrolls of one engine.
#[derive(Default)]
pub struct Scrolls {
    pub(crate) next_id: u64,
    pub(crate) open: HashMap<String, ScrollContext>,
}

pub(crate) struct ScrollContext {
    pub(crate) index: Arc<EmbeddedIndex>,
    pub(crate) query: Box<dyn Query>,
    pub(crate) cursor: Cursor,
    pub(crate) keep_alive: Duration,
    pub(crate) expires: Instant,
    /// The first page's `fields` and `highlight`, for every page.
    pub(crate) fetch: Arc<FetchPlan>,
}
