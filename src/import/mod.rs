//! `runner import --from URL`: races out of an Elasticsearch/OpenSearch metrics store, as Rally
//! (`rally-results-*`, and `rally-races-*`'s per-race `results.op_metrics`) and OpenSearch
//! Benchmark (`benchmark-results-*`) write them, into the race store, so that `trend`, `report`
//! and `compare` cover a team's existing history. An imported race has no histograms: its
//! percentiles are those the store kept, and every report says so.

mod convert;

pub use convert::{races_of, Imported};

use crate::backend::elasticsearch::Admin;
use serde_json::{json, Value};

/// Indices searched: Rally's per-metric results, Rally's race documents, OSB's results.
pub const INDICES: &str = "rally-results-*,rally-races-*,benchmark-results-*";
/// Documents read per request, and at most in all (Elasticsearch's default result window).
const PAGE: usize = 1_000;
pub const MOST_DOCUMENTS: usize = 10_000;

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{0}")]
    Peer(String),
    #[error("{host} answered {status} to {what}: {body}")]
    Status {
        host: String,
        status: u16,
        what: String,
        body: String,
    },
    #[error("{host} holds {total} metric documents matching the filter, above the {MOST_DOCUMENTS} one import reads: narrow it with --track, --challenge or --since")]
    TooMany { host: String, total: u64 },
    #[error("{host} holds no Rally or OSB results matching the filter (searched {INDICES}): is it a Rally metrics store?")]
    Nothing { host: String },
    #[error("{host} sent what is not a search response: {0}", host = .1)]
    NotSearch(String, String),
}

/// What to read: the store's documents of one track and challenge, from a day on.
#[derive(Debug, Clone, Default)]
pub struct ImportFilter {
    pub track: Option<String>,
    pub challenge: Option<String>,
    /// Rally's compact timestamp, `YYYYMMDDTHHMMSSZ`: races at or after it.
    pub since: Option<String>,
}

/// The query of `filter`, for Rally's field names and OSB's alike.
fn query(filter: &ImportFilter) -> Value {
    let mut must = Vec::new();
    let either = |a: &str, b: &str, v: &str| json!({"bool": {"should": [{"term": {a: v}}, {"term": {b: v}}], "minimum_should_match": 1}});
    if let Some(t) = &filter.track {
        must.push(either("track", "workload", t));
    }
    if let Some(c) = &filter.challenge {
        must.push(either("challenge", "test_procedure", c));
    }
    if let Some(s) = &filter.since {
        must.push(json!({"bool": {"should": [
            {"range": {"race-timestamp": {"gte": s}}},
            {"range": {"test-execution-timestamp": {"gte": s}}}
        ], "minimum_should_match": 1}}));
    }
    json!({"bool": {"filter": must}})
}

/// Every matching document (its index and source), page by page, bounded.
pub async fn fetch(
    admin: &Admin,
    filter: &ImportFilter,
) -> Result<Vec<(String, Value)>, ImportError> {
    let host = admin.host();
    let mut docs = Vec::new();
    loop {
        let body = json!({
            "size": PAGE,
            "from": docs.len(),
            "track_total_hits": true,
            "sort": ["_doc"],
            "query": query(filter),
        });
        let path = format!("{INDICES}/_search?ignore_unavailable=true&allow_no_indices=true");
        let (status, bytes) = admin
            .request(
                reqwest::Method::POST,
                &path,
                Some((body.to_string().into_bytes(), "application/json")),
            )
            .await
            .map_err(ImportError::Peer)?;
        if status != 200 {
            let text = String::from_utf8_lossy(&bytes);
            return Err(ImportError::Status {
                host,
                status,
                what: format!("POST {path}"),
                body: text.chars().take(300).collect(),
            });
        }
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| ImportError::NotSearch(format!("not JSON ({e})"), host.clone()))?;
        let total = v["hits"]["total"]["value"]
            .as_u64()
            .or_else(|| v["hits"]["total"].as_u64())
            .ok_or_else(|| ImportError::NotSearch("no hits.total".into(), host.clone()))?;
        if total as usize > MOST_DOCUMENTS {
            return Err(ImportError::TooMany { host, total });
        }
        let hits = v["hits"]["hits"]
            .as_array()
            .ok_or_else(|| ImportError::NotSearch("no hits.hits".into(), host.clone()))?;
        for h in hits {
            let index = h["_index"].as_str().unwrap_or_default().to_string();
            docs.push((index, h["_source"].clone()));
        }
        if hits.is_empty() || docs.len() as u64 >= total || docs.len() >= MOST_DOCUMENTS {
            break;
        }
    }
    if docs.is_empty() {
        return Err(ImportError::Nothing { host });
    }
    Ok(docs)
}
