//! A stored race, out to where teams already look: Rally's metric documents in an
//! Elasticsearch or OpenSearch (so Rally's dashboards work), and an OpenMetrics text file for
//! Prometheus.

mod openmetrics;
mod rally;
mod samples;

pub use openmetrics::openmetrics;
pub use rally::{rally_documents, RallyDocuments};
pub use samples::SampledTrial;

use crate::backend::elasticsearch::Admin;
use crate::metrics::TrialSamples;
use crate::results::SamplesRecord;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error("cannot export to {host}: {message}")]
    Peer { host: String, message: String },
    #[error("cannot read the race's samples: {0}")]
    Samples(String),
}

/// Creates Rally's two indices where missing (with the fields dashboards query mapped) and
/// bulk-indexes the race's documents, each sampled trial's read by `load` when its turn comes;
/// returns how many were indexed.
pub async fn to_elasticsearch(
    admin: &Admin,
    docs: &RallyDocuments,
    load: &dyn Fn(&SamplesRecord) -> Result<TrialSamples, String>,
) -> Result<usize, ExportError> {
    let peer = |message: String| ExportError::Peer {
        host: admin.host(),
        message: if message.contains("error sending request") || message.contains("onnect") {
            format!("{message} (is the cluster `--to` names running, and reachable from here?)")
        } else {
            message
        },
    };
    for (index, mapping) in [
        (&docs.results_index, rally::RESULTS_MAPPING),
        (&docs.metrics_index, rally::METRICS_MAPPING),
    ] {
        let (status, _) = admin
            .request(reqwest::Method::HEAD, index, None)
            .await
            .map_err(peer)?;
        if status == 404 {
            let (status, body) = admin
                .request(
                    reqwest::Method::PUT,
                    index,
                    Some((mapping.as_bytes().to_vec(), "application/json")),
                )
                .await
                .map_err(peer)?;
            // Another exporter may have created it in between.
            if status >= 300
                && !String::from_utf8_lossy(&body).contains("resource_already_exists_exception")
            {
                return Err(peer(format!(
                    "PUT {index} answered {status}: {}",
                    crate::backend::elasticsearch::response::error_summary(&body)
                )));
            }
        }
    }
    // In bulks of a bounded size: a long race has a sample per second per trial, and one body
    // would pass any server's request limit.
    let all: Vec<(&str, &str, &serde_json::Value)> = docs.all().collect();
    for chunk in all.chunks(DOCUMENTS_PER_BULK) {
        send_bulk(admin, chunk).await.map_err(peer)?;
    }
    let mut written = all.len();
    for trial in &docs.sampled {
        let samples = load(&trial.samples).map_err(ExportError::Samples)?;
        let mut made = trial.documents(&samples).peekable();
        while made.peek().is_some() {
            let chunk: Vec<(String, serde_json::Value)> =
                made.by_ref().take(DOCUMENTS_PER_BULK).collect();
            let refs: Vec<(&str, &str, &serde_json::Value)> = chunk
                .iter()
                .map(|(id, d)| (docs.metrics_index.as_str(), id.as_str(), d))
                .collect();
            send_bulk(admin, &refs).await.map_err(peer)?;
            written += refs.len();
        }
    }
    Ok(written)
}

/// Documents per `_bulk` request of an export.
const DOCUMENTS_PER_BULK: usize = 5_000;

/// One `_bulk` of `docs`, refreshed so that what was exported is searchable at once.
async fn send_bulk(admin: &Admin, docs: &[(&str, &str, &serde_json::Value)]) -> Result<(), String> {
    let mut bulk = Vec::new();
    for (index, id, doc) in docs {
        bulk.extend_from_slice(
            serde_json::json!({"index": {"_index": index, "_id": id}})
                .to_string()
                .as_bytes(),
        );
        bulk.push(b'\n');
        bulk.extend_from_slice(doc.to_string().as_bytes());
        bulk.push(b'\n');
    }
    let (status, body) = admin
        .request(
            reqwest::Method::POST,
            "_bulk?refresh=true",
            Some((bulk, "application/x-ndjson")),
        )
        .await?;
    if status >= 300 {
        return Err(format!(
            "_bulk answered {status}: {}",
            crate::backend::elasticsearch::response::error_summary(&body)
        ));
    }
    let reply: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|e| format!("_bulk answered something that is not JSON: {e}"))?;
    if reply["errors"] == true {
        let first = reply["items"]
            .as_array()
            .into_iter()
            .flatten()
            .find_map(|i| i.as_object()?.values().next()?.get("error").cloned());
        return Err(format!(
            "some documents were refused: {}",
            first.unwrap_or_default()
        ));
    }
    Ok(())
}
