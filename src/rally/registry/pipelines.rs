//! Ingest and search pipelines.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        "put-pipeline" => match (string(op, "id"), get("body")) {
            (Some(id), Some(body)) => {
                one(Call::new("PUT", format!("/_ingest/pipeline/{}", enc(&id)))
                    .body(body)
                    .param("master_timeout", get("master-timeout"))
                    .param("timeout", get("timeout")))
            }
            _ => Err("`put-pipeline` needs `id` and `body`".into()),
        },
        "delete-pipeline" => required(op, kind, "id").and_then(|id| {
            Ok((
                vec![Call::new(
                    "DELETE",
                    format!("/_ingest/pipeline/{}", enc(&id)),
                )],
                true,
            ))
        }),
        "create-search-pipeline" => match (string(op, "id"), get("body")) {
            (Some(id), Some(body)) => {
                one(Call::new("PUT", format!("/_search/pipeline/{}", enc(&id))).body(body))
            }
            _ => Err("`create-search-pipeline` needs `id` and `body`".into()),
        },
        _ => return None,
    })
}
