//! Snapshot repositories and snapshots, and Rally's waits on them.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{json, Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        "wait-for-snapshot-create" => match (string(op, "repository"), string(op, "snapshot")) {
            (Some(r), Some(s)) => one(Call::new(
                "GET",
                format!("/_snapshot/{}/{}/_status", enc(&r), enc(&s)),
            )
            .param("ignore_unavailable", Some(json!(true)))
            .until(
                "snapshot-succeeded",
                get("completion-recheck-wait-period"),
                None,
            )),
            _ => Err("`wait-for-snapshot-create` needs `repository` and `snapshot`".into()),
        },
        "wait-for-current-snapshots-create" => required(op, kind, "repository").and_then(|r| {
            one(Call::new("GET", format!("/_snapshot/{}/_current", enc(&r)))
                .param("verbose", Some(json!(false)))
                .until(
                    "no-current-snapshots",
                    get("completion-recheck-wait-period"),
                    None,
                ))
        }),
        "create-snapshot-repository" => match (string(op, "repository"), get("body")) {
            (Some(r), Some(body)) => one(Call::new("PUT", format!("/_snapshot/{}", enc(&r)))
                .body(body)
                .params(rp)),
            _ => Err("`create-snapshot-repository` needs `repository` and `body`".into()),
        },
        "delete-snapshot-repository" => required(op, kind, "repository").and_then(|r| {
            Ok((
                vec![Call::new("DELETE", format!("/_snapshot/{}", enc(&r)))],
                true,
            ))
        }),
        "create-snapshot" | "restore-snapshot" => {
            match (string(op, "repository"), string(op, "snapshot")) {
                (Some(r), Some(s)) => {
                    let (method, path) = if kind == "create-snapshot" {
                        ("PUT", format!("/_snapshot/{}/{}", enc(&r), enc(&s)))
                    } else {
                        (
                            "POST",
                            format!("/_snapshot/{}/{}/_restore", enc(&r), enc(&s)),
                        )
                    };
                    let mut call = Call::new(method, path)
                        .param(
                            "wait_for_completion",
                            Some(get("wait-for-completion").unwrap_or(json!(false))),
                        )
                        .params(rp);
                    if let Some(b) = get("body") {
                        call = call.body(b);
                    }
                    one(call)
                }
                _ => Err(format!("`{kind}` needs `repository` and `snapshot`")),
            }
        }
        _ => return None,
    })
}
