//! `date_range`: tantivy's range aggregation on a date field, with Elasticsearch's request and
//! answer around it. Bounds are read by the field's date format (epoch millis as numbers),
//! the ranges are sorted by `from` then `to` as Elasticsearch sorts them, and each bucket is
//! shown as Elasticsearch shows it: `from`/`to` in epoch milliseconds, their strings in
//! `strict_date_optional_time`, and the key `from-to` (`*` for an open end). tantivy's buckets
//! for the gaps between ranges are left out.

use crate::mapping::datemath::{self, Round};
use crate::mapping::dates::DateFormats;
use crate::mapping::FieldType;
use crate::mapping::Mapping;
use crate::zone::Zone;
use serde_json::{json, Map, Value};

/// Joins a `date_range`'s name in tantivy's request; its answer is put back in its place.
const MARK: char = '\u{4}';

#[derive(Debug, Clone)]
pub struct DateRange {
    /// The aggregation's name in tantivy's request.
    marker: String,
    /// Per range, sorted: from and to (epoch ms), and a custom key.
    ranges: Vec<(Option<i64>, Option<i64>, Option<String>)>,
    keyed: bool,
    /// How bounds print: the `format` (else the field's) on the `time_zone`'s clock.
    formats: DateFormats,
    zone: Zone,
}

/// tantivy's request for `name`'s date_range, and what reshapes its answer.
pub fn rewrite(
    name: &str,
    params: &Map<String, Value>,
    mapping: Option<&Mapping>,
    at: &str,
) -> Result<(String, Value, DateRange), String> {
    let refuse = |m: String| Err(format!("aggregation `{at}`: {m}"));
    if let Some(k) = params
        .keys()
        .find(|k| !["field", "ranges", "keyed", "time_zone", "format"].contains(&k.as_str()))
    {
        return refuse(format!(
            "`date_range` parameter `{k}` is not run by the embedded engine"
        ));
    }
    let (formats, zone) = super::date_histogram::key_printer(params, mapping, at)?;
    let field = params
        .get("field")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("aggregation `{at}`: `date_range` needs a `field`"))?;
    let mapped = match mapping.map(|m| m.field(field)) {
        None => None,
        Some(Some(f)) if f.kind == FieldType::Date => Some(f),
        Some(_) => {
            return refuse(format!(
                "`date_range` needs a date field, and `{field}` is not one"
            ))
        }
    };
    let list = params
        .get("ranges")
        .and_then(Value::as_array)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| format!("aggregation `{at}`: `date_range` needs `ranges`"))?;
    // Checked with no index, a date the field's own format reads is read at the search.
    let lenient = mapping.is_none();
    let mut ranges = read_ranges(list, &formats, &zone, lenient, at)?;
    // Elasticsearch sorts the ranges by `from`, then `to` (open ends first and last).
    ranges.sort_by_key(|(f, t, _)| (f.unwrap_or(i64::MIN), t.unwrap_or(i64::MAX)));
    let column = mapped
        .as_ref()
        .map_or(field.to_string(), |f| f.name.clone());
    let nanos = |ms: Option<i64>| ms.map(|m| json!(m.saturating_mul(1_000_000)));
    let request_ranges: Vec<Value> = ranges
        .iter()
        .map(|(f, t, _)| {
            let mut r = Map::new();
            if let Some(v) = nanos(*f) {
                r.insert("from".into(), v);
            }
            if let Some(v) = nanos(*t) {
                r.insert("to".into(), v);
            }
            Value::Object(r)
        })
        .collect();
    let marker = format!("{name}{MARK}");
    let keyed = params
        .get("keyed")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok((
        marker.clone(),
        json!({"range": {"field": column, "ranges": request_ranges, "keyed": false}}),
        DateRange {
            marker,
            ranges,
            keyed,
            formats,
            zone,
        },
    ))
}

/// Each range's bounds in epoch milliseconds (dates, date math and numbers read as
/// Elasticsearch reads them: by the `format`, else the field's, on the zone's clock), and its
/// key.
#[allow(clippy::type_complexity)]
fn read_ranges(
    list: &[Value],
    formats: &DateFormats,
    zone: &Zone,
    lenient: bool,
    at: &str,
) -> Result<Vec<(Option<i64>, Option<i64>, Option<String>)>, String> {
    let refuse = |m: String| Err(format!("aggregation `{at}`: {m}"));
    let mut ranges = Vec::new();
    let now = chrono::Utc::now();
    for r in list {
        let Some(o) = r.as_object() else {
            return refuse(format!(
                "a range is an object with `from` and/or `to`, got {r}"
            ));
        };
        if let Some(k) = o
            .keys()
            .find(|k| !["from", "to", "key"].contains(&k.as_str()))
        {
            return refuse(format!(
                "`date_range` range parameter `{k}` is not run by the embedded engine"
            ));
        }
        let bound = |k: &str| -> Result<Option<i64>, String> {
            match o.get(k) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => n.as_i64().map(Some).ok_or_else(|| {
                    format!("aggregation `{at}`: `{k}` {n} is not epoch milliseconds")
                }),
                // Elasticsearch reads both ends of a date range rounding down.
                Some(Value::String(text)) => {
                    match datemath::eval_in(text, formats, now, Round::Down, zone) {
                        Ok(d) => Ok(Some(d.into_timestamp_millis())),
                        Err(_) if lenient => Ok(Some(0)),
                        Err(e) => Err(format!("aggregation `{at}`: `{k}`: {e}")),
                    }
                }
                Some(other) => Err(format!("aggregation `{at}`: `{k}` {other} is not a date")),
            }
        };
        let key = o.get("key").and_then(Value::as_str).map(str::to_string);
        ranges.push((bound("from")?, bound("to")?, key));
    }
    Ok(ranges)
}

/// A tantivy range bucket's bound in epoch milliseconds (its column holds nanoseconds).
pub(crate) fn bound_ms(bucket: &Value, key: &str) -> Option<i64> {
    bucket[key]
        .as_f64()
        .map(|n| (n / 1_000_000.0).round() as i64)
}

/// A range bucket's sub-aggregations, copied into Elasticsearch's bucket `into`.
pub(crate) fn copy_sub_aggregations(bucket: &Value, into: &mut Map<String, Value>) {
    const OWN: [&str; 6] = [
        "key",
        "from",
        "to",
        "from_as_string",
        "to_as_string",
        "doc_count",
    ];
    for (k, v) in bucket.as_object().into_iter().flatten() {
        if !OWN.contains(&k.as_str()) {
            into.insert(k.clone(), v.clone());
        }
    }
}

/// Puts Elasticsearch's answer for each date_range in place of tantivy's, at every level.
pub fn reshape(v: &mut Value, specs: &[DateRange]) {
    if specs.is_empty() {
        return;
    }
    match v {
        Value::Object(map) => {
            for spec in specs {
                let Some(found) = map.remove(&spec.marker) else {
                    continue;
                };
                let name = spec.marker.trim_end_matches(MARK).to_string();
                map.insert(name, answer(&found, spec));
            }
            map.iter_mut()
                .filter(|(k, _)| k.as_str() != "hits")
                .for_each(|(_, v)| reshape(v, specs));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| reshape(v, specs)),
        _ => {}
    }
}

fn answer(tantivy: &Value, spec: &DateRange) -> Value {
    let buckets = tantivy["buckets"].as_array().cloned().unwrap_or_default();
    let mut out = Vec::new();
    for (from, to, key) in &spec.ranges {
        let bucket = buckets
            .iter()
            .find(|b| bound_ms(b, "from") == *from && bound_ms(b, "to") == *to)
            .cloned()
            .unwrap_or_else(|| json!({"doc_count": 0}));
        let mut o = Map::new();
        let print = |ms: i64| {
            spec.formats
                .print_in(ms.saturating_mul(1_000_000), &spec.zone)
        };
        let from_s = from.map(print);
        let to_s = to.map(print);
        let label = key.clone().unwrap_or_else(|| {
            format!(
                "{}-{}",
                from_s.as_deref().unwrap_or("*"),
                to_s.as_deref().unwrap_or("*")
            )
        });
        o.insert("key".into(), json!(label));
        if let (Some(f), Some(s)) = (from, &from_s) {
            o.insert("from".into(), json!(*f as f64));
            o.insert("from_as_string".into(), json!(s));
        }
        if let (Some(t), Some(s)) = (to, &to_s) {
            o.insert("to".into(), json!(*t as f64));
            o.insert("to_as_string".into(), json!(s));
        }
        o.insert("doc_count".into(), bucket["doc_count"].clone());
        copy_sub_aggregations(&bucket, &mut o);
        out.push((label, Value::Object(o)));
    }
    if spec.keyed {
        let mut keyed = Map::new();
        for (label, mut b) in out {
            if let Some(o) = b.as_object_mut() {
                o.remove("key");
            }
            keyed.insert(label, b);
        }
        json!({"buckets": keyed})
    } else {
        json!({"buckets": out.into_iter().map(|(_, b)| b).collect::<Vec<_>>()})
    }
}
