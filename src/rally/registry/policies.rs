//! ILM policies.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        "create-ilm-policy" => match (string(op, "policy-name"), get("body")) {
            (Some(n), Some(body)) => one(Call::new("PUT", format!("/_ilm/policy/{}", enc(&n)))
                .body(body)
                .params(rp)),
            _ => Err("`create-ilm-policy` needs `policy-name` and `body`".into()),
        },
        "delete-ilm-policy" => required(op, kind, "policy-name").and_then(|n| {
            Ok((
                vec![Call::new("DELETE", format!("/_ilm/policy/{}", enc(&n))).params(rp)],
                false,
            ))
        }),
        _ => return None,
    })
}
