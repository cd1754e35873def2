//! Checks of a request that tantivy would otherwise run as something else: an `order` by a
//! bucket sub-aggregation, and parameters tantivy reads past without a word.

use serde_json::{Map, Value};

/// Metric aggregations: a bucket aggregation may be ordered by their values (not by a
/// percentiles: tantivy orders by none, where Elasticsearch orders by its digest's answer).
const METRICS: [&str; 9] = [
    "avg",
    "min",
    "max",
    "sum",
    "value_count",
    "stats",
    "extended_stats",
    "cardinality",
    "top_hits",
];

/// Refuses an `order` by a bucket sub-aggregation (`high.doc_count`, `high>avg`): tantivy
/// orders by metrics only, and would fail inside with an internal error.
pub(super) fn order_by_buckets(order: &Value, sub: Option<&Value>, at: &str) -> Result<(), String> {
    let entries: Vec<&Map<String, Value>> = match order {
        Value::Object(o) => vec![o],
        Value::Array(items) => items.iter().filter_map(Value::as_object).collect(),
        _ => Vec::new(),
    };
    for key in entries.iter().flat_map(|o| o.keys()) {
        if key.starts_with('_') {
            continue;
        }
        let name = key.split(['.', '>', '[']).next().unwrap_or(key);
        let kind = sub
            .and_then(|s| s.get(name))
            .and_then(Value::as_object)
            .and_then(|d| {
                d.keys()
                    .find(|k| !matches!(k.as_str(), "aggs" | "aggregations" | "meta"))
            });
        if let Some(kind) = kind.filter(|k| !METRICS.contains(&k.as_str())) {
            return Err(format!("aggregation `{at}`: `order` by `{key}`, a `{kind}` sub-aggregation, is not run by the embedded engine (it orders by `_count`, `_key` or a metric sub-aggregation: {})", METRICS.join(", ")));
        }
    }
    Ok(())
}

/// Parameters of the request that tantivy did not read back: those it would ignore.
pub(super) fn unread(given: &Value, read: &Value, at: &str) -> Result<(), String> {
    let Some(given) = given.as_object() else {
        return Ok(());
    };
    for (name, agg) in given {
        let here = format!("{at}.{name}");
        let back = &read[name.as_str()];
        for (key, value) in agg.as_object().into_iter().flatten() {
            if key == "aggs" {
                unread(value, &back["aggs"], &here)?;
                continue;
            }
            let read_params = back[key.as_str()].as_object();
            for (param, v) in value.as_object().into_iter().flatten() {
                let known =
                    read_params.is_some_and(|r| r.contains_key(param) || alias(r, param).is_some());
                if !known && !v.is_null() {
                    return Err(format!(
                        "aggregation `{here}`: `{key}` parameter `{param}` is not run by the embedded engine (tantivy's {key} has no such parameter)"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn alias<'a>(read: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    match key {
        "shard_size" => read.get("split_size").or_else(|| read.get("segment_size")),
        _ => None,
    }
}
