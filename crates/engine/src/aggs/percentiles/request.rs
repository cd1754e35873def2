//! A `percentiles` request: its parameters checked as Elasticsearch checks them, and where
//! the digest collector runs it.

use super::{PercentilesAgg, DEFAULT_COMPRESSION, DEFAULT_PERCENTS};
use crate::aggs::bucket_keys::Parent;
use crate::aggs::tdigest::MAX_COMPRESSION;
use serde_json::{Map, Value};

impl super::super::Level<'_> {
    /// A `percentiles` the digest collector runs: at the top level, or under bucket
    /// aggregations it buckets as tantivy does; true when it noted one (tantivy's is then
    /// not needed). A `format` prints dates; on another field it is refused (Elasticsearch
    /// would add `_as_string` values in a decimal pattern, not run here).
    pub(in crate::aggs) fn note_percentiles(
        &mut self,
        name: &str,
        params: &Map<String, Value>,
        tantivy_params: &Map<String, Value>,
        path: &[String],
        here: &str,
    ) -> Result<bool, String> {
        let dates = params
            .get("field")
            .and_then(Value::as_str)
            .and_then(|f| self.mapping?.field(f))
            .is_some_and(|f| f.kind == crate::mapping::FieldType::Date);
        // (Types are known only with a mapping: a check before the race has none.)
        if params.contains_key("format") && self.mapping.is_some() && !dates {
            return Err(format!("aggregation `{here}`: `format` on a field other than a date is not run by the embedded engine (it prints no `_as_string` values)"));
        }
        // Every aggregation above it must have pushed a parent it can bucket by.
        if self.parents.len() != path.len() {
            return Ok(false);
        }
        let Some(parents) = self.parents.iter().cloned().collect::<Option<Vec<_>>>() else {
            return Ok(false);
        };
        let mut agg = percentiles_agg(name, params, tantivy_params, parents);
        // On a date field the answers are epoch milliseconds, each also printed in the
        // field's format (or the request's), as Elasticsearch prints them.
        if dates {
            agg.dates = Some(crate::aggs::date_histogram::key_printer(
                params,
                self.mapping,
                here,
            )?);
        }
        match agg.parents.is_empty() {
            true => self.percentiles.push(agg),
            false => self.bucket_percentiles.push(agg),
        }
        Ok(true)
    }
}

/// `percentiles`' own parameters, checked as Elasticsearch checks them: `percents` a
/// non-empty list of numbers; `tdigest.compression` not negative (and within the engine's
/// bound), `execution_hint` `default` (`high_accuracy` is another digest, not run here); HDR
/// histograms are another estimate, not run here.
pub(in crate::aggs) fn percentiles_params(
    p: &mut Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    if p.contains_key("hdr") {
        return Err(format!("aggregation `{at}`: `percentiles` with `hdr` is not run by the embedded engine (it estimates as t-digest does)"));
    }
    if let Some(t) = p.remove("tdigest") {
        tdigest_params(&t, at)?;
    }
    match p.get("percents") {
        None => {}
        Some(Value::Null) => return Err(format!("[percents] must not be null: [{at}]")),
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(format!("[percents] must not be empty: [{at}]"))
        }
        Some(Value::Array(items)) => {
            if let Some(bad) = items
                .iter()
                .find(|i| !i.as_f64().is_some_and(|x| (0.0..=100.0).contains(&x)))
            {
                return Err(format!(
                    "aggregation `{at}`: percent {bad} is not a number from 0 to 100"
                ));
            }
        }
        Some(other) => {
            return Err(format!(
                "aggregation `{at}`: [percents] must be a list of numbers, got {other}"
            ))
        }
    }
    Ok(())
}

fn tdigest_params(t: &Value, at: &str) -> Result<(), String> {
    let known = ["compression", "execution_hint"];
    if let Some(k) = t
        .as_object()
        .and_then(|o| o.keys().find(|k| !known.contains(&k.as_str())))
    {
        return Err(format!(
            "aggregation `{at}`: `tdigest` parameter `{k}` is not run by the embedded engine"
        ));
    }
    if let Some(c) = t.get("compression").and_then(Value::as_f64) {
        if c < 0.0 {
            return Err(format!(
                "[compression] must be greater than or equal to 0. Found [{c:?}] in [{at}]"
            ));
        }
        if c > MAX_COMPRESSION {
            return Err(format!("aggregation `{at}`: the embedded engine builds t-digests of `compression` up to {MAX_COMPRESSION}, not {c}"));
        }
    }
    match t.get("execution_hint").map(Value::as_str) {
        None | Some(Some("default")) => Ok(()),
        Some(Some("high_accuracy")) => Err(format!("aggregation `{at}`: `execution_hint` `high_accuracy` (Elasticsearch's AVL-tree digest) is not run by the embedded engine; it runs the default digest")),
        Some(other) => Err(format!(
            "Invalid execution_hint [{}], valid values are [default, high_accuracy]",
            other.unwrap_or_default()
        )),
    }
}

/// A `percentiles` as the digest collector runs it (the field as tantivy reads it), under
/// `parents`.
fn percentiles_agg(
    name: &str,
    given: &Map<String, Value>,
    tantivy: &Map<String, Value>,
    parents: Vec<Parent>,
) -> PercentilesAgg {
    PercentilesAgg {
        name: name.to_string(),
        field: tantivy
            .get("field")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        missing: given.get("missing").and_then(Value::as_f64),
        percents: given
            .get("percents")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_else(|| DEFAULT_PERCENTS.to_vec()),
        keyed: given.get("keyed").and_then(Value::as_bool).unwrap_or(true),
        compression: given
            .get("tdigest")
            .and_then(|t| t.get("compression"))
            .and_then(Value::as_f64)
            .unwrap_or(DEFAULT_COMPRESSION),
        parents,
        dates: None,
    }
}
