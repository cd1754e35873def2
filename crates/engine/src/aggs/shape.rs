//! What Elasticsearch shows in an aggregation's answer that tantivy's does not: the request's
//! `meta` handed back, `date_histogram` keys as whole milliseconds (tantivy's are floats), and
//! `cardinality` and `value_count` values as whole numbers.

use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    Meta(Value),
    WholeKeys,
    WholeValue,
    /// A `time_series`' buckets: each key, a time series id, shown as its dimensions.
    SeriesKeys,
}

/// The shapes of a request's aggregations, by their path of names.
#[derive(Debug, Clone, Default)]
pub struct Shapes(Vec<(Vec<String>, Shape)>);

impl Shapes {
    /// Notes what the aggregation `name` (at `path`, of type `kind`, defined by `def`) needs.
    pub fn note(&mut self, path: &[String], name: &str, kind: &str, def: &Map<String, Value>) {
        let mut at = path.to_vec();
        at.push(name.to_string());
        if let Some(meta) = def.get("meta") {
            self.0.push((at.clone(), Shape::Meta(meta.clone())));
        }
        match kind {
            "date_histogram" => self.0.push((at, Shape::WholeKeys)),
            "cardinality" | "value_count" => self.0.push((at, Shape::WholeValue)),
            "time_series" => self.0.push((at, Shape::SeriesKeys)),
            _ => {}
        }
    }

    /// Reshapes an answer's aggregations.
    pub fn apply(&self, aggregations: &mut Value) {
        for (path, shape) in &self.0 {
            each_at(aggregations, path, &mut |agg| reshape(agg, shape));
        }
    }
}

fn reshape(agg: &mut Value, shape: &Shape) {
    let Value::Object(map) = agg else { return };
    match shape {
        Shape::Meta(meta) => {
            map.insert("meta".into(), meta.clone());
        }
        Shape::WholeValue => {
            if let Some(v) = map.get_mut("value") {
                whole(v);
            }
        }
        Shape::SeriesKeys => {
            map.remove("doc_count_error_upper_bound");
            map.remove("sum_other_doc_count");
            for bucket in buckets(map) {
                if let Some(key) = bucket.get_mut("key") {
                    if let Value::String(id) = key {
                        *key = serde_json::from_str(id).unwrap_or(Value::Null);
                    }
                }
            }
        }
        Shape::WholeKeys => {
            for bucket in buckets(map) {
                if let Some(k) = bucket.get_mut("key") {
                    whole(k);
                }
            }
        }
    }
}

/// A float with no fraction as an integer.
fn whole(v: &mut Value) {
    if let Some(f) = v.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
        *v = Value::from(f as i64);
    }
}

/// The buckets of a multi-bucket answer (a list, or keyed by name).
fn buckets(map: &mut Map<String, Value>) -> Vec<&mut Value> {
    match map.get_mut("buckets") {
        Some(Value::Array(items)) => items.iter_mut().collect(),
        Some(Value::Object(keyed)) => keyed.values_mut().collect(),
        _ => Vec::new(),
    }
}

/// Calls `f` on every answer at `path`: an aggregation under a multi-bucket one is in each
/// bucket; under a single-bucket one (`filter`), in that aggregation itself.
fn each_at(v: &mut Value, path: &[String], f: &mut dyn FnMut(&mut Value)) {
    let Some((name, rest)) = path.split_first() else {
        return;
    };
    let Some(node) = v.get_mut(name.as_str()) else {
        return;
    };
    if rest.is_empty() {
        return f(node);
    }
    let Value::Object(map) = node else { return };
    if map.contains_key("buckets") {
        for bucket in buckets(map) {
            each_at(bucket, rest, f);
        }
    } else {
        each_at(node, rest, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn meta_keys_and_counts_as_elasticsearch_shows_them() {
        let mut shapes = Shapes::default();
        let def = |v: Value| v.as_object().unwrap().clone();
        shapes.note(
            &[],
            "by_day",
            "date_histogram",
            &def(json!({"meta": {"a": 1}})),
        );
        shapes.note(&["by_day".into()], "users", "cardinality", &def(json!({})));
        shapes.note(&[], "f", "filter", &def(json!({"meta": "m"})));
        shapes.note(&["f".into()], "n", "value_count", &def(json!({})));
        let mut v = json!({
            "by_day": {"buckets": [{"key": 1704067200000.0, "doc_count": 2, "users": {"value": 2.0}}]},
            "f": {"doc_count": 3, "n": {"value": 3.0}}
        });
        shapes.apply(&mut v);
        assert_eq!(
            v,
            json!({
                "by_day": {"meta": {"a": 1}, "buckets": [{"key": 1704067200000i64, "doc_count": 2, "users": {"value": 2}}]},
                "f": {"meta": "m", "doc_count": 3, "n": {"value": 3}}
            })
        );
    }
}
