//! When written documents become searchable without an explicit refresh, as Elasticsearch
//! schedules it: every `index.refresh_interval` (1s unless given; `-1` never), and, with the
//! default interval, not while the index is search-idle (unsearched for
//! `index.search.idle.after`, 30s): then its next search refreshes first and waits for it,
//! as Elasticsearch parks a search on an idle shard until a refresh.

use super::settings::Refresh;
use super::EmbeddedIndex;
use crate::error::Error;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// An index's refresh bookkeeping.
#[derive(Debug)]
pub(crate) struct Schedule {
    /// A write was made since the last refresh.
    unrefreshed: AtomicBool,
    /// When it was last refreshed, and last searched (milliseconds on [`now_ms`]'s clock).
    refreshed_at: AtomicU64,
    searched_at: AtomicU64,
}

impl Default for Schedule {
    fn default() -> Self {
        // A new index is not search-idle: its clock starts now.
        let now = now_ms();
        Schedule {
            unrefreshed: AtomicBool::new(false),
            refreshed_at: AtomicU64::new(now),
            searched_at: AtomicU64::new(now),
        }
    }
}

/// Milliseconds on a monotonic clock started with the process.
fn now_ms() -> u64 {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    ORIGIN.get_or_init(Instant::now).elapsed().as_millis() as u64
}

impl Schedule {
    pub(crate) fn wrote(&self) {
        // Read first: a bulk load does not make every write store to a shared line.
        if !self.unrefreshed.load(Ordering::Relaxed) {
            self.unrefreshed.store(true, Ordering::Relaxed);
        }
    }

    /// Called as a refresh starts: what is written from now on waits for the next one.
    pub(crate) fn refreshing(&self) {
        self.unrefreshed.store(false, Ordering::Relaxed);
        self.refreshed_at.store(now_ms(), Ordering::Relaxed);
    }
}

impl EmbeddedIndex {
    /// Before a search: notes it, and refreshes first when the index was search-idle with
    /// writes pending.
    pub fn before_search(&self) -> Result<(), Error> {
        let s = &self.schedule;
        let now = now_ms();
        // Stored only when the millisecond changed: many clients searching at once do not
        // all write the same line.
        let last = s.searched_at.load(Ordering::Relaxed);
        if last != now {
            s.searched_at.store(now, Ordering::Relaxed);
        }
        if !s.unrefreshed.load(Ordering::Relaxed) || self.is_closed() {
            return Ok(());
        }
        let (refresh, idle_after) = self.refresh_settings();
        if refresh == Refresh::Default && now.saturating_sub(last) >= idle_after {
            self.refresh()?;
        }
        Ok(())
    }

    /// Refreshes when its interval has passed with writes pending (an idle index with the
    /// default interval waits for its next search); whether it did.
    pub fn refresh_if_due(&self) -> Result<bool, Error> {
        let s = &self.schedule;
        if !s.unrefreshed.load(Ordering::Relaxed) || self.is_closed() {
            return Ok(false);
        }
        let (refresh, idle_after) = self.refresh_settings();
        let Some(interval) = refresh.interval() else {
            return Ok(false);
        };
        let now = now_ms();
        if now.saturating_sub(s.refreshed_at.load(Ordering::Relaxed)) < interval.as_millis() as u64
        {
            return Ok(false);
        }
        let idle = now.saturating_sub(s.searched_at.load(Ordering::Relaxed)) >= idle_after;
        if refresh == Refresh::Default && idle {
            return Ok(false);
        }
        self.refresh()?;
        Ok(true)
    }

    fn refresh_settings(&self) -> (Refresh, u64) {
        let settings = self.settings.read().unwrap_or_else(|p| p.into_inner());
        (
            settings.refresh,
            settings.search_idle_after.as_millis() as u64,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn index(settings: serde_json::Value) -> EmbeddedIndex {
        EmbeddedIndex::create("logs", &json!({"settings": settings})).unwrap()
    }

    fn visible(idx: &EmbeddedIndex) -> u64 {
        idx.searcher().num_docs()
    }

    #[test]
    fn writes_become_searchable_on_the_interval_unless_never() {
        let idx = index(json!({"index": {"refresh_interval": "20ms"}}));
        idx.index_one(None, r#"{"a": 1}"#).unwrap();
        assert_eq!(visible(&idx), 0);
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(idx.refresh_if_due().unwrap());
        assert_eq!(visible(&idx), 1);
        // Nothing written since: nothing to do.
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!idx.refresh_if_due().unwrap());
        let never = index(json!({"index": {"refresh_interval": "-1"}}));
        never.index_one(None, r#"{"a": 1}"#).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        assert!(!never.refresh_if_due().unwrap());
        never.before_search().unwrap();
        assert_eq!(visible(&never), 0);
        let bad = EmbeddedIndex::create("x", &json!({"settings": {"refresh_interval": "soon"}}));
        assert!(bad.is_err());
    }

    #[test]
    fn a_search_idle_index_refreshes_on_its_next_search_not_on_schedule() {
        // The default interval (1s), idle after 10ms unsearched.
        let idx = index(json!({"index": {"search.idle.after": "10ms"}}));
        std::thread::sleep(std::time::Duration::from_millis(20));
        idx.index_one(None, r#"{"a": 1}"#).unwrap();
        assert_eq!(visible(&idx), 0);
        // Idle: the schedule leaves it, however long it waits...
        assert!(!idx.refresh_if_due().unwrap());
        // ...and its next search refreshes first.
        idx.before_search().unwrap();
        assert_eq!(visible(&idx), 1);
        // Not idle (searched within the hour): a write waits for the schedule. (A second
        // index, so that no timing of this test's own steps decides it.)
        let busy = index(json!({"index": {"search.idle.after": "1h"}}));
        busy.before_search().unwrap();
        busy.index_one(None, r#"{"a": 2}"#).unwrap();
        busy.before_search().unwrap();
        assert_eq!(visible(&busy), 0);
    }
}
