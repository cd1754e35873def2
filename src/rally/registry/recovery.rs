//! Rally's `wait-for-recovery`: `_recovery` polled until every shard is done.

use super::{enc, required, Call, Calls, Declared};
use serde_json::{Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        // Rally's `wait-for-*`: one request, polled until its answer says done.
        "wait-for-recovery" => required(op, kind, "index").and_then(|index| {
            one(
                Call::new("GET", format!("/{}/_recovery", enc(&index))).until(
                    "recovery-done",
                    get("completion-recheck-wait-period"),
                    None,
                ),
            )
        }),
        _ => return None,
    })
}
