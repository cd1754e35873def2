//! A bulk task's corpus feed, sized and started for one leaf: its share of the corpus, its
//! warmup (a fraction, a time, the first requests) and its limits.

use super::actions;
use super::parts::{FeedReader, PartedReader};
use super::work::{CorpusFeed, CorpusWarmup, FeedLimits};
use super::Slice;
use crate::plan::{Leaf, Work};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub(super) async fn start_feed(
    leaf: &Leaf,
    bulk: &crate::ops::BulkSpec,
    cancel: CancellationToken,
    slice: Slice,
) -> Result<CorpusFeed, String> {
    let warmup_fraction = match leaf.work {
        Work::Corpus {
            warmup_fraction, ..
        } if warmup_fraction > 0.0 => Some(warmup_fraction),
        _ => None,
    };
    // The corpus size, when a share of it is asked for (ingest-percentage, a warmup fraction).
    let mut document_limit = leaf.document_limit;
    let mut total = None;
    let random_ids = matches!(bulk.conflicts, Some(c) if c.order == crate::ops::IdOrder::Random);
    if bulk.ingest_percentage.is_some() || warmup_fraction.is_some() || random_ids {
        let declared: Option<u64> = bulk.files.iter().map(|f| f.document_count).sum();
        let n = match declared {
            Some(n) => n,
            None => {
                let files = bulk.files.clone();
                let limit = leaf.document_limit;
                tokio::task::spawn_blocking(move || crate::corpus::count_documents(&files, limit))
                    .await
                    .map_err(|e| e.to_string())?
                    .map_err(|e| e.to_string())?
            }
        };
        let n = document_limit.map_or(n, |l| n.min(l));
        if let Some(pct) = bulk.ingest_percentage {
            document_limit = Some((n as f64 * pct / 100.0).floor() as u64);
        }
        total = Some(document_limit.map_or(n, |l| n.min(l)));
    }
    let limits = FeedLimits {
        bulk_size: bulk.bulk_size.0,
        flush_bytes: bulk.flush_bytes.map(|b| b.0),
        max_requests: match leaf.work {
            Work::Iterations { warmup, measured } => {
                Some(slice.share(warmup, leaf.clients) + slice.share(measured, leaf.clients))
            }
            _ => None,
        },
        document_limit,
        looped: bulk.looped,
        owned: (!slice.is_whole()).then(|| (slice.clients(leaf.clients), leaf.clients)),
    };
    let warmup_docs = match (warmup_fraction, total) {
        (Some(warmup_fraction), Some(total)) => match bulk.flush_bytes {
            None => CorpusWarmup::Requests(
                (warmup_fraction * total.div_ceil(bulk.bulk_size.0) as f64).floor() as u64,
            ),
            Some(_) => CorpusWarmup::Documents((warmup_fraction * total as f64).floor() as u64),
        },
        _ => match leaf.work {
            Work::Corpus { warmup_time, .. } if !warmup_time.is_zero() => {
                CorpusWarmup::Until(Instant::now() + warmup_time)
            }
            Work::Corpus {
                warmup_requests, ..
            } => CorpusWarmup::Requests(warmup_requests),
            _ => CorpusWarmup::Requests(0),
        },
    };
    let seed = 0x1D5 ^ leaf.trial;
    // A Rally track's bulk on one machine: cut in esrally's workers' slices.
    let parted = match (&leaf.corpus_parts[..], slice.is_whole()) {
        ([_, ..], true) => {
            // Each slice's start is reached here, off the async threads and before the race.
            // The plan's limit (test mode's), not an ingest share: each slice takes its own share.
            let bulk = within_limit(bulk, leaf.document_limit);
            let (parts, clients) = (leaf.corpus_parts.clone(), leaf.clients);
            tokio::task::spawn_blocking(move || PartedReader::new(&bulk, &parts, clients, seed))
                .await
                .map_err(|e| e.to_string())?
                .map_err(|e| e.to_string())?
                .map(FeedReader::Parts)
        }
        _ => None,
    };
    let reader = match parted {
        Some(reader) => reader,
        None => {
            let actions = actions::BulkActions::new(bulk.conflicts, total, seed)
                .creating(bulk.create)
                .naming(
                    bulk.action_lines
                        .name_the_index()
                        .then_some(bulk.index.as_str())
                        .filter(|i| !i.is_empty()),
                );
            CorpusFeed::one_queue(bulk.files.clone(), &limits, actions)
                .map_err(|e| e.to_string())?
        }
    };
    CorpusFeed::start(reader, limits, leaf.clients, warmup_docs, cancel).map_err(|e| e.to_string())
}

/// A bulk whose files are cut to the first `limit` documents of the corpus, in file order:
/// the slices are then cut from what is left, as the one queue reads the same first documents.
fn within_limit(bulk: &crate::ops::BulkSpec, limit: Option<u64>) -> crate::ops::BulkSpec {
    let mut bulk = bulk.clone();
    if let Some(mut left) = limit {
        for file in &mut bulk.files {
            if let Some(n) = file.document_count {
                let kept = n.min(left);
                file.document_count = Some(kept);
                left -= kept;
            }
        }
    }
    bulk
}
