//! The rendezvous's side of a sharded capacity search: each shard's part of a probe is held
//! until every shard still racing has sent its own, then all are merged and the same merged
//! probe goes back to each.

use crate::capacity::share::ProbeShare;
use std::collections::{BTreeMap, BTreeSet};
use tokio::time::Instant;

/// A probe whose parts are still coming in.
struct Pending {
    first: Instant,
    parts: BTreeMap<u32, ProbeShare>,
}

#[derive(Default)]
pub(super) struct ProbeExchange {
    pending: BTreeMap<(usize, u32), Pending>,
}

/// A probe every racing shard has sent: who to answer, and the answer (or why there is none).
pub(super) struct Merged {
    pub step: usize,
    pub probe: u32,
    pub shards: Vec<u32>,
    pub merged: Result<ProbeShare, String>,
}

impl ProbeExchange {
    pub fn add(&mut self, step: usize, probe: u32, shard: u32, part: ProbeShare) {
        self.pending
            .entry((step, probe))
            .or_insert_with(|| Pending {
                first: Instant::now(),
                parts: BTreeMap::new(),
            })
            .parts
            .insert(shard, part);
    }

    /// The probes every shard in `racing` has sent, merged in shard order.
    pub fn ready(&mut self, racing: &BTreeSet<u32>) -> Vec<Merged> {
        let done: Vec<(usize, u32)> = self
            .pending
            .iter()
            .filter(|(_, p)| racing.iter().all(|s| p.parts.contains_key(s)))
            .map(|(k, _)| *k)
            .collect();
        done.into_iter()
            .filter_map(|key| {
                let p = self.pending.remove(&key)?;
                let parts: Vec<ProbeShare> = p.parts.values().cloned().collect();
                Some(Merged {
                    step: key.0,
                    probe: key.1,
                    shards: p.parts.keys().copied().collect(),
                    merged: ProbeShare::merge(&parts),
                })
            })
            .collect()
    }

    /// When the oldest probe still waiting was first sent.
    pub fn oldest(&self) -> Option<Instant> {
        self.pending.values().map(|p| p.first).min()
    }

    /// The probes waiting since before `limit`, with the shards that sent them.
    pub fn late(&mut self, limit: Instant) -> Vec<((usize, u32), BTreeSet<u32>)> {
        let late: Vec<(usize, u32)> = self
            .pending
            .iter()
            .filter(|(_, p)| p.first < limit)
            .map(|(k, _)| *k)
            .collect();
        late.into_iter()
            .filter_map(|k| Some((k, self.pending.remove(&k)?.parts.into_keys().collect())))
            .collect()
    }
}
