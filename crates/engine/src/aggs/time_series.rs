//! The `time_series` aggregation: a bucket per time series of a time-series index (a
//! distinct combination of its `time_series_dimension` fields), run as tantivy's `terms` on
//! the series id each document is indexed with (`_tsid`, its dimensions as a JSON object),
//! every series a bucket, in id order; `shape` shows each key as the dimensions.

use crate::mapping::Mapping;
use serde_json::{json, Map, Value};

/// The most series one `time_series` aggregation answers (Elasticsearch's default bucket
/// bound is higher; the engine's buckets are bounded here).
const MAX_SERIES: u64 = 65_535;

/// tantivy's request for a `time_series` at `at`.
pub(super) fn request(
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<Value, String> {
    if let Some(k) = params
        .keys()
        .find(|k| !matches!(k.as_str(), "keyed" | "size"))
    {
        return Err(format!(
            "aggregation `{at}`: `time_series` parameter `{k}` is not run by the embedded engine"
        ));
    }
    if params.get("keyed").and_then(Value::as_bool).unwrap_or(true) {
        return Err(format!("aggregation `{at}`: a keyed `time_series` (the default) is not run by the embedded engine: ask `\"keyed\": false`"));
    }
    if let Some(m) = mapping {
        if m.time_series.is_none() {
            return Err(format!("aggregation `{at}`: [time_series] aggregation can only be used on an index in time_series mode (`index.mode: time_series` with `time_series_dimension` fields)"));
        }
    }
    let size = params
        .get("size")
        .map_or(Some(MAX_SERIES), Value::as_u64)
        .ok_or_else(|| format!("aggregation `{at}`: `size` is a whole number"))?
        .min(MAX_SERIES);
    Ok(json!({"terms": {"field": crate::mapping::TSID, "size": size, "order": {"_key": "asc"}}}))
}

#[cfg(test)]
mod tests;
