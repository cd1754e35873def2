//! Data streams: `create-data-stream` and `delete-data-stream`.

use super::{enc, only_if_exists, Call, Calls, Declared};
use serde_json::{Map, Value};

pub(super) fn calls(kind: &str, op: &Map<String, Value>, declared: &Declared) -> Option<Calls> {
    let rp = op.get("request-params");
    Some(match kind {
        "create-data-stream" | "delete-data-stream" => {
            let create = kind.starts_with("create");
            let named = names(op.get("data-stream"));
            // Creating filters the declared streams by the name given; deleting takes the
            // name given, else the declared ones (Rally's param sources).
            let targets = match (create, named) {
                (true, named) if !declared.data_streams.is_empty() => declared
                    .data_streams
                    .iter()
                    .filter(|d| named.as_ref().is_none_or(|n| n.contains(d)))
                    .cloned()
                    .collect(),
                (_, Some(named)) => named,
                (_, None) => declared.data_streams.clone(),
            };
            let calls = targets
                .iter()
                .flat_map(|n| {
                    let path = format!("/_data_stream/{}", enc(n));
                    match create {
                        true => vec![Call::new("PUT", path).params(rp)],
                        // Rally asks whether the stream exists as an index (`indices.exists`).
                        false => {
                            Call::deletes(format!("/{}", enc(n)), path, only_if_exists(op), rp)
                        }
                    }
                })
                .collect();
            Ok((calls, !create))
        }
        _ => return None,
    })
}

/// A data stream name or a list of them.
fn names(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
        ),
        _ => None,
    }
}
