//! Transforms and downsampling, and Rally's `wait-for-transform`.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{json, Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        // Rally's DownsampleParamSource: `fixed-interval` 1h, the source the track's only index
        // (or data stream), the target `<source>-<interval>`.
        "downsample" => {
            let interval = string(op, "fixed-interval").unwrap_or_else(|| "1h".into());
            let source = string(op, "source-index").or_else(|| {
                match (
                    declared.indices.as_slice(),
                    declared.data_streams.as_slice(),
                ) {
                    ([one], _) => Some(one.clone()),
                    ([], [one]) => Some(one.clone()),
                    _ => None,
                }
            });
            match source {
                Some(s) => {
                    let t = string(op, "target-index").unwrap_or_else(|| format!("{s}-{interval}"));
                    let mut body = json!({"fixed_interval": interval});
                    if let Some(m) = get("sampling-method") {
                        body["sampling_method"] = m;
                    }
                    one(Call::new("POST", format!("/{}/_downsample/{}", enc(&s), enc(&t))).body(body).params(rp))
                }
                None => Err("`downsample` needs `source-index` when the track has not exactly one index or data stream, as Rally says".into()),
            }
        }
        "create-transform" => match (string(op, "transform-id"), get("body")) {
            (Some(id), Some(body)) => one(Call::new("PUT", format!("/_transform/{}", enc(&id)))
                .body(body)
                .param(
                    "defer_validation",
                    Some(get("defer-validation").unwrap_or(json!(false))),
                )),
            _ => Err("`create-transform` needs `transform-id` and `body`".into()),
        },
        "start-transform" => required(op, kind, "transform-id").and_then(|id| {
            one(
                Call::new("POST", format!("/_transform/{}/_start", enc(&id)))
                    .param("timeout", get("timeout")),
            )
        }),
        "delete-transform" => required(op, kind, "transform-id").and_then(|id| {
            Ok((
                vec![Call::new("DELETE", format!("/_transform/{}", enc(&id)))
                    .param("force", Some(get("force").unwrap_or(json!(false))))],
                true,
            ))
        }),
        // Stop the transform once it reaches its next checkpoint, then wait until it has.
        "wait-for-transform" => required(op, kind, "transform-id").and_then(|id| {
            let stop = Call::new("POST", format!("/_transform/{}/_stop", enc(&id)))
                .param("force", Some(get("force").unwrap_or(json!(false))))
                .param("timeout", get("timeout"))
                .param("wait_for_completion", Some(json!(false)))
                .param(
                    "wait_for_checkpoint",
                    Some(get("wait-for-checkpoint").unwrap_or(json!(true))),
                );
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
