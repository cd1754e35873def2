//! Before a vector search's task: its true neighbours, read from its file (every id checked
//! to be in the index) or found by an exact search of each query, off the measured path.

use super::client::Recall;
use crate::backend::{Backend, BackendClient, Payload};
use crate::ops::vector::{Truth, TruthSource};
use crate::ops::{OpSpec, SearchSpec, VectorSearchSpec};
use serde_json::json;
use std::sync::Arc;

/// Ids checked per request.
const IDS_PER_CHECK: usize = 1000;

pub(super) async fn recall_of<B: Backend>(
    backend: &B,
    spec: &VectorSearchSpec,
) -> Result<Recall, String> {
    let truth = match &spec.truth {
        TruthSource::File(t) => {
            check_ids_exist(backend, spec, t).await?;
            t.clone()
        }
        TruthSource::Exact => Arc::new(exact(backend, spec).await?),
    };
    Ok(Recall {
        truth: Arc::new(truth.for_k(spec.k)),
        k: spec.k,
    })
}

/// Each query's k nearest by an exact search (a script scoring every document).
async fn exact<B: Backend>(backend: &B, spec: &VectorSearchSpec) -> Result<Truth, String> {
    let what = |m: String| {
        format!(
            "the exact ground truth of `{}`.`{}`: {m}",
            spec.index, spec.field
        )
    };
    let op = OpSpec::VectorSearch(spec.exact_variant());
    let prepared = backend.prepare(&op).map_err(|e| what(e.message))?;
    let mut client = backend.connect().await.map_err(|e| what(e.message))?;
    let n = spec.queries.vectors.len();
    let mut ids = Vec::with_capacity(n);
    for i in 0..n {
        client
            .execute(&prepared, &Payload::Vector(i))
            .await
            .map_err(|e| what(format!("query {} (line {}): {}", i + 1, i + 1, e.message)))?;
        let mut out = Vec::new();
        if !client.last_hit_ids(&mut out) {
            return Err(what("this backend does not give hit ids".into()));
        }
        if out.is_empty() {
            return Err(what(format!(
                "query {} found no document: is the index empty, or the field unset?",
                i + 1
            )));
        }
        ids.push(out);
    }
    Ok(Truth { ids })
}

/// The documents among `ids` in the index, by an `ids` query.
async fn count_present<B: Backend>(
    backend: &B,
    client: &mut B::Client,
    index: &str,
    ids: &[&str],
) -> Result<u64, String> {
    let op = OpSpec::Search(SearchSpec {
        index: index.to_string(),
        body: json!({"size": 0, "track_total_hits": true, "query": {"ids": {"values": ids}}}),
        request_params: Vec::new(),
        paging: None,
        bound: None,
    });
    let prepared = backend.prepare(&op).map_err(|e| e.message)?;
    client
        .execute(&prepared, &Payload::None)
        .await
        .map(|o| o.hits)
        .map_err(|e| e.message)
}

/// Every id of the ground truth (its first k per query) is a document of the index; an id
/// that is not makes recall meaningless, so the task does not start.
async fn check_ids_exist<B: Backend>(
    backend: &B,
    spec: &VectorSearchSpec,
    truth: &Truth,
) -> Result<(), String> {
    let what = |m: String| format!("ground-truth of `{}`: {m}", spec.index);
    let mut all: Vec<&str> = truth
        .ids
        .iter()
        .flat_map(|line| line.iter().take(spec.k).map(String::as_str))
        .collect();
    all.sort_unstable();
    all.dedup();
    let mut client = backend.connect().await.map_err(|e| what(e.message))?;
    let mut missing = Vec::new();
    let mut absent = 0u64;
    for batch in all.chunks(IDS_PER_CHECK) {
        let present = count_present(backend, &mut client, &spec.index, batch)
            .await
            .map_err(&what)?;
        if present as usize >= batch.len() {
            continue;
        }
        absent += batch.len() as u64 - present;
        for id in batch {
            if missing.len() >= 3 {
                break;
            }
            if count_present(backend, &mut client, &spec.index, &[id])
                .await
                .map_err(&what)?
                == 0
            {
                missing.push(*id);
            }
        }
    }
    if absent > 0 {
        return Err(what(format!(
            "{absent} of its {} ids are no document of the index (e.g. {}): were they written for another corpus?",
            all.len(),
            missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", ")
        )));
    }
    Ok(())
}
