//! Points in time: snapshots of one or more indices that searches read until the point in
//! time is closed or its keep-alive passes, as Elasticsearch's `_pit` (and OpenSearch's
//! `_search/point_in_time`) keep them.

use crate::index::EmbeddedIndex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tantivy::Searcher;

/// Open points in time at once, shared with scrolls in Elasticsearch
/// (`search.max_open_scroll_context`).
pub const MAX_OPEN: usize = 500;

/// One index of a point in time: its alias filter, and the snapshot searches read.
#[derive(Clone)]
pub struct PitTarget {
    pub index: Arc<EmbeddedIndex>,
    pub filter: Option<Value>,
    pub searcher: Searcher,
}

struct Pit {
    targets: Vec<PitTarget>,
    keep_alive: Duration,
    expires: Instant,
    created_ms: u64,
}

#[derive(Default)]
pub struct Pits {
    next: u64,
    open: HashMap<String, Pit>,
}

/// A point in time as `GET _search/point_in_time/_all` lists it.
pub struct Listed {
    pub id: String,
    pub created_ms: u64,
    pub keep_alive: Duration,
}

impl Pits {
    /// Opens a point in time over `targets`; its id, or why not.
    pub fn open(
        &mut self,
        targets: Vec<PitTarget>,
        keep_alive: Duration,
    ) -> Result<String, String> {
        self.expire();
        if self.open.len() >= MAX_OPEN {
            return Err(format!("Trying to create too many point in time contexts. Must be less than or equal to: [{MAX_OPEN}]; close them when done"));
        }
        self.next += 1;
        let created_ms = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let id = {
            use base64::Engine as _;
            let raw = format!("runner-pit:{}:{created_ms}", self.next);
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
        };
        self.open.insert(
            id.clone(),
            Pit {
                targets,
                keep_alive,
                expires: Instant::now() + keep_alive,
                created_ms,
            },
        );
        Ok(id)
    }

    /// The snapshot of an open point in time; a `keep_alive` given with a search extends it.
    pub fn get(&mut self, id: &str, keep_alive: Option<Duration>) -> Option<Vec<PitTarget>> {
        self.expire();
        let pit = self.open.get_mut(id)?;
        if let Some(k) = keep_alive {
            pit.keep_alive = k;
            pit.expires = Instant::now() + k;
        }
        Some(pit.targets.clone())
    }

    pub fn close(&mut self, id: &str) -> bool {
        self.open.remove(id).is_some()
    }

    /// Closes every point in time; how many there were.
    pub fn close_all(&mut self) -> usize {
        let n = self.open.len();
        self.open.clear();
        n
    }

    pub fn list(&mut self) -> Vec<Listed> {
        self.expire();
        let mut all: Vec<Listed> = self
            .open
            .iter()
            .map(|(id, p)| Listed {
                id: id.clone(),
                created_ms: p.created_ms,
                keep_alive: p.keep_alive,
            })
            .collect();
        all.sort_by_key(|l| l.created_ms);
        all
    }

    fn expire(&mut self) {
        let now = Instant::now();
        self.open.retain(|_, p| p.expires > now);
    }
}
