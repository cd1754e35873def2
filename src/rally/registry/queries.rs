//! ES|QL, SQL and field capabilities.

use super::{enc, required, string, Call, Calls, Declared};
use serde_json::{json, Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, _declared: &Declared) -> Option<Calls> {
    let get = |k: &str| op.get(k).cloned();
    let rp = op.get("request-params");
    let one = |c: Call| -> Calls { Ok((vec![c], false)) };
    Some(match kind {
        "esql" => required(op, kind, "query").and_then(|q| {
            // Rally's body: the track's `body`, with `query` and `filter` set.
            let mut body = get("body")
                .and_then(|b| b.as_object().cloned())
                .unwrap_or_default();
            body.insert("query".into(), json!(q));
            if let Some(f) = get("filter") {
                body.insert("filter".into(), f);
            }
            one(Call::new("POST", "/_query".into())
                .body(Value::Object(body))
                .params(rp))
        }),
        "sql" => match get("body") {
            Some(b) if b.get("query").is_some() => {
                // Rally's sql runner: `pages` in all, each after the first asked with the
                // answer's cursor.
                let pages = op.get("pages").and_then(Value::as_u64).unwrap_or(1).max(1);
                one(Call::new("POST", "/_sql".into())
                    .body(b)
                    .cursor_pages(pages))
            }
            _ => Err("`sql` needs `body.query`".into()),
        },
        "field-caps" => {
            let index = string(op, "index").unwrap_or_else(|| "_all".into());
            let mut call = Call::new("GET", format!("/{}/_field_caps", enc(&index)))
                .param("fields", Some(get("fields").unwrap_or(json!("*"))))
                .params(rp);
            let mut body = get("body")
                .and_then(|b| b.as_object().cloned())
                .unwrap_or_default();
            if let Some(f) = get("index_filter") {
                body.insert("index_filter".into(), f);
            }
            if !body.is_empty() {
                call = call.body(Value::Object(body));
            }
            one(call)
        }
        _ => return None,
    })
}
