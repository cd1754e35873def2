//! Transforms and downsampling, and Rally's `wait-for-transform`.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{json, Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        "downsample" => match (string(op, "source-index"), string(op, "target-index"), get("fixed-interval")) {
            (Some(s), Some(t), Some(i)) => {
                let mut body = json!({"fixed_interval": i});
                if let Some(m) = get("sampling-method") {
                    body["sampling_method"] = m;
                }
                one(Call::new("POST", format!("/{}/_downsample/{}", enc(&s), enc(&t))).body(body).params(rp))
            }
            _ => Err("`downsample` needs `source-index`, `target-index` and `fixed-interval` (Rally's track.py param source gives them for tsdb)".into()),
        },
        "create-transform" => match (string(op, "transform-id"), get("body")) {
            (Some(id), Some(body)) => one(Call::new("PUT", format!("/_transform/{}", enc(&id)))
                .body(body)
                .param("defer_validation", Some(get("defer-validation").unwrap_or(json!(false))))),
            _ => Err("`create-transform` needs `transform-id` and `body`".into()),
        },
        "start-transform" => required(op, kind, "transform-id").and_then(|id| {
            one(Call::new("POST", format!("/_transform/{}/_start", enc(&id))).param("timeout", get("timeout")))
        }),
        "delete-transform" => required(op, kind, "transform-id").and_then(|id| {
            Ok((vec![Call::new("DELETE", format!("/_transform/{}", enc(&id)))
                .param("force", Some(get("force").unwrap_or(json!(false))))], true))
        }),
        // Stop the transform once it reaches its next checkpoint, then wait until it has.
        "wait-for-transform" => required(op, kind, "transform-id").and_then(|id| {
            let stop = Call::new("POST", format!("/_transform/{}/_stop", enc(&id)))
                .param("force", Some(get("force").unwrap_or(json!(false))))
                .param("timeout", get("timeout"))
                .param("wait_for_completion", Some(json!(false)))
                .param("wait_for_checkpoint", Some(get("wait-for-checkpoint").unwrap_or(json!(true))));
            if get("wait-for-completion") == Some(json!(false)) {
                return one(stop);
            }
            let stats = Call::new("GET", format!("/_transform/{}/_stats", enc(&id))).until(
                "transform-stopped",
                Some(get("poll-interval").unwrap_or(json!(0.5))),
                Some(get("transform-timeout").unwrap_or(json!(3600))),
            );
            Ok((vec![stop, stats], false))
        }),
        _ => return None,
    })
}
