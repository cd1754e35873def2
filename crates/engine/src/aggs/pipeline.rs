//! Pipeline aggregations, computed from the response of the others as Elasticsearch computes
//! them after its reduce: sibling ones (`max_bucket`, `min_bucket`, `avg_bucket`, `sum_bucket`,
//! `stats_bucket`) over a multi-bucket aggregation beside them, and parent ones inside a
//! multi-bucket aggregation (`derivative`, `cumulative_sum`, `moving_fn` inside a histogram;
//! `bucket_script`, `bucket_selector`, `bucket_sort` inside any), in each of its buckets.
//! `buckets_path` is Elasticsearch's: `agg>agg.metric`, `_count`, `_key`, `pct[99.0]`. Deeper
//! pipelines run first, so that one may read another's value.

use crate::painless::{NoDoc, Script, Val};
use serde_json::{json, Map, Value};

/// The pipeline aggregation types.
pub const KINDS: [&str; 11] = [
    "max_bucket",
    "min_bucket",
    "avg_bucket",
    "sum_bucket",
    "stats_bucket",
    "derivative",
    "cumulative_sum",
    "moving_fn",
    "bucket_script",
    "bucket_selector",
    "bucket_sort",
];

/// The parents that order their buckets, which derivatives and moving functions need.
const HISTOGRAMS: [&str; 3] = ["histogram", "date_histogram", "auto_date_histogram"];

#[derive(Debug, Clone, Copy, PartialEq)]
enum Gap {
    Skip,
    InsertZeros,
    KeepValues,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Sibling {
    Max,
    Min,
    Avg,
    Sum,
    Stats,
}

#[derive(Debug, Clone)]
enum Kind {
    Sibling(Sibling, String),
    Derivative(String),
    CumulativeSum(String),
    MovingFn {
        path: String,
        window: usize,
        shift: i64,
        script: Box<Script>,
    },
    Script {
        vars: Vec<(String, String)>,
        script: Box<Script>,
    },
    Selector {
        vars: Vec<(String, String)>,
        script: Box<Script>,
    },
    Sort {
        by: Vec<(String, bool)>,
        from: usize,
        size: Option<usize>,
    },
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    /// The response names of the bucket aggregations above it (a parent pipeline's last is
    /// its parent).
    path: Vec<String>,
    name: String,
    kind: Kind,
    gap: Gap,
}

/// The pipelines of one request.
#[derive(Debug, Clone, Default)]
pub struct Pipelines(Vec<Pipeline>);

impl Pipelines {
    /// Checks one pipeline aggregation: `siblings` are the names beside it, `parent` the kind
    /// of the aggregation it is inside (None at the top level).
    pub fn push(
        &mut self,
        path: &[String],
        name: &str,
        kind: &str,
        params: &Map<String, Value>,
        siblings: &[&String],
        parent: Option<&str>,
        at: &str,
    ) -> Result<(), String> {
        let refuse = |m: String| format!("aggregation `{at}`: {m}");
        let (gap, is_parent_kind) = checked(kind, name, params, parent, at)?;
        if path.iter().any(|p| super::filters::is_expanded(p)) {
            return Err(format!("aggregation `{at}`: a pipeline aggregation under a `filters` aggregation is not run by the embedded engine"));
        }
        let one_path = || -> Result<String, String> {
            let p = match params.get("buckets_path") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Array(a)) if a.len() == 1 => {
                    a[0].as_str().unwrap_or_default().to_string()
                }
                _ => return Err(refuse(format!("`{kind}` needs a `buckets_path`"))),
            };
            check_path(&p, siblings, is_parent_kind).map_err(refuse)?;
            Ok(p)
        };
        let script = || -> Result<Box<Script>, String> {
            let s = params
                .get("script")
                .ok_or_else(|| refuse(format!("`{kind}` needs a `script`")))?;
            Script::from_request(s).map(Box::new).map_err(refuse)
        };
        let vars = || -> Result<Vec<(String, String)>, String> {
            let map = match params.get("buckets_path") {
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect(),
                Some(Value::String(s)) => vec![("_value".to_string(), s.clone())],
                _ => return Err(refuse(format!("`{kind}` needs a `buckets_path`"))),
            };
            for (_, p) in &map {
                check_path(p, siblings, true).map_err(refuse)?;
            }
            Ok(map)
        };
        let kind = match kind {
            "max_bucket" => Kind::Sibling(Sibling::Max, one_path()?),
            "min_bucket" => Kind::Sibling(Sibling::Min, one_path()?),
            "avg_bucket" => Kind::Sibling(Sibling::Avg, one_path()?),
            "sum_bucket" => Kind::Sibling(Sibling::Sum, one_path()?),
            "stats_bucket" => Kind::Sibling(Sibling::Stats, one_path()?),
            "derivative" => Kind::Derivative(one_path()?),
            "cumulative_sum" => Kind::CumulativeSum(one_path()?),
            "moving_fn" => Kind::MovingFn {
                path: one_path()?,
                window: params
                    .get("window")
                    .and_then(Value::as_u64)
                    .filter(|w| (1..=100_000).contains(w))
                    .ok_or_else(|| {
                        refuse("`moving_fn` needs a `window` of 1 to 100,000 buckets".into())
                    })? as usize,
                shift: params
                    .get("shift")
                    .map_or(Some(0), Value::as_i64)
                    .ok_or_else(|| refuse("`shift` is a whole number".into()))?,
                script: script()?,
            },
            "bucket_script" => Kind::Script {
                vars: vars()?,
                script: script()?,
            },
            "bucket_selector" => Kind::Selector {
                vars: vars()?,
                script: script()?,
            },
            "bucket_sort" => sort(params, siblings).map_err(refuse)?,
            other => return Err(refuse(format!("`{other}` is not a pipeline aggregation"))),
        };
        self.0.push(Pipeline {
            path: path
                .iter()
                .map(|p| p.trim_end_matches(['\u{4}', '\u{5}', '\u{6}']).to_string())
                .collect(),
            name: name.to_string(),
            kind,
            gap,
        });
        Ok(())
    }

    /// Adds each pipeline's answer to the response's aggregations; deeper ones first.
    pub fn apply(&self, v: &mut Value) -> Result<(), String> {
        let mut order: Vec<&Pipeline> = self.0.iter().collect();
        order.sort_by_key(|p| std::cmp::Reverse(p.path.len()));
        let mut error = None;
        for p in order {
            match &p.kind {
                Kind::Sibling(op, path) => {
                    super::date_histogram::at_path(v, &p.path, &mut |level| {
                        let answer = sibling(*op, level, path, p.gap);
                        level.insert(p.name.clone(), answer);
                    })
                }
                _ => {
                    let (parent, above) =
                        p.path.split_last().expect("a parent pipeline has a parent");
                    super::date_histogram::at_path(v, above, &mut |level| {
                        if let Some(buckets) =
                            level.get_mut(parent.as_str()).map(|a| &mut a["buckets"])
                        {
                            if let Err(e) = p.in_buckets(buckets) {
                                error.get_or_insert(e);
                            }
                        }
                    })
                }
            }
        }
        error.map_or(Ok(()), Err)
    }
}

/// A pipeline's parameters and place checked: its gap policy, and whether it goes inside its
/// parent (else beside a multi-bucket aggregation).
fn checked(
    kind: &str,
    name: &str,
    params: &Map<String, Value>,
    parent: Option<&str>,
    at: &str,
) -> Result<(Gap, bool), String> {
    let refuse = |m: String| format!("aggregation `{at}`: {m}");
    let allowed: &[&str] = match kind {
        "moving_fn" => &["buckets_path", "window", "shift", "script", "gap_policy"],
        "bucket_sort" => &["sort", "from", "size", "gap_policy"],
        "derivative" | "cumulative_sum" | "max_bucket" | "min_bucket" | "avg_bucket"
        | "sum_bucket" | "stats_bucket" => &["buckets_path", "gap_policy", "format"],
        _ => &["buckets_path", "script", "gap_policy"],
    };
    if let Some(k) = params.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(refuse(format!(
            "`{kind}` parameter `{k}` is not run by the embedded engine"
        )));
    }
    let gap = match params.get("gap_policy").and_then(Value::as_str) {
        None | Some("skip") => Gap::Skip,
        Some("insert_zeros") => Gap::InsertZeros,
        Some("keep_values") => Gap::KeepValues,
        Some(other) => {
            return Err(refuse(format!(
                "`gap_policy` `{other}` is not one of skip, insert_zeros, keep_values"
            )))
        }
    };
    let is_parent_kind = !kind.ends_with("_bucket");
    match (is_parent_kind, parent) {
        (true, None | Some("filter")) => {
            return Err(refuse(format!("`{kind}` must be inside a multi-bucket aggregation")))
        }
        (true, Some(p))
            if matches!(kind, "derivative" | "cumulative_sum" | "moving_fn")
                && !HISTOGRAMS.contains(&p) =>
        {
            return Err(refuse(format!(
                "{kind} aggregation [{name}] must have a histogram, date_histogram or auto_date_histogram as parent"
            )))
        }
        _ => {}
    }
    Ok((gap, is_parent_kind))
}

/// `bucket_sort`'s `sort` (paths or `_key`/`_count`, each ascending unless `desc`), `from`
/// and `size`.
fn sort(params: &Map<String, Value>, siblings: &[&String]) -> Result<Kind, String> {
    let mut by = Vec::new();
    let entries: Vec<Value> = match params.get("sort") {
        None => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(other) => vec![other.clone()],
    };
    for e in entries {
        let (path, desc) = match &e {
            Value::String(s) => (s.clone(), false),
            Value::Object(o) if o.len() == 1 => {
                let (k, v) = o.iter().next().expect("one entry");
                let order = v
                    .get("order")
                    .and_then(Value::as_str)
                    .or(v.as_str())
                    .unwrap_or("asc");
                (k.clone(), order == "desc")
            }
            other => {
                return Err(format!(
                    "`bucket_sort` sort entry {other} is not a path with an order"
                ))
            }
        };
        check_path(&path, siblings, true)?;
        by.push((path, desc));
    }
    let from = params
        .get("from")
        .map_or(Some(0), Value::as_u64)
        .ok_or("`from` is a whole number")? as usize;
    let size = params
        .get("size")
        .map(|s| {
            s.as_u64()
                .map(|n| n as usize)
                .ok_or("`size` is a whole number")
        })
        .transpose()?;
    Ok(Kind::Sort { by, from, size })
}

/// A buckets_path's first aggregation is beside the pipeline (or `_count`/`_key`).
fn check_path(path: &str, siblings: &[&String], parent: bool) -> Result<(), String> {
    let first = path.split(['>', '.', '[']).next().unwrap_or_default();
    if (parent && matches!(first, "_count" | "_key"))
        || siblings.iter().any(|s| s.as_str() == first)
    {
        return Ok(());
    }
    Err(format!("No aggregation found for path [{path}]"))
}

/// The value a path names in a bucket (or an aggregations level); None for a gap.
fn resolve(level: &Map<String, Value>, path: &str) -> Option<f64> {
    let mut segments: Vec<&str> = path.split('>').collect();
    let last = segments.pop()?;
    let mut here = level;
    for s in segments {
        here = here.get(s)?.as_object()?;
    }
    let (name, key) = match last.split_once('[') {
        Some((n, rest)) => (n, Some(rest.trim_end_matches(']'))),
        None => match last.split_once('.') {
            // `agg.metric`, but a percentile's key may hold a dot (`pct.99.9`).
            Some((n, m)) => (n, Some(m)),
            None => (last, None),
        },
    };
    let number = |v: &Value| v.as_f64().filter(|f| !f.is_nan());
    match (name, key) {
        ("_count", None) => here.get("doc_count").and_then(number),
        ("_key", None) => here.get("key").and_then(number),
        (n, None) => {
            let agg = here.get(n)?;
            agg.get("value")
                .map_or_else(|| agg.get("doc_count").and_then(number), number)
        }
        (n, Some(k)) => {
            let agg = here.get(n)?;
            agg.get(k)
                .and_then(number)
                .or_else(|| agg.get("values").and_then(|vs| values_entry(vs, k)))
        }
    }
}

/// A percentiles' value by its key (`99`, `99.0`).
fn values_entry(values: &Value, key: &str) -> Option<f64> {
    let want: f64 = key.parse().ok()?;
    match values {
        Value::Object(m) => m
            .iter()
            .find(|(k, _)| k.parse::<f64>().ok() == Some(want))
            .and_then(|(_, v)| v.as_f64()),
        Value::Array(a) => a
            .iter()
            .find(|e| e["key"].as_f64() == Some(want))
            .and_then(|e| e["value"].as_f64()),
        _ => None,
    }
}

fn buckets_of(v: &mut Value) -> Vec<&mut Map<String, Value>> {
    match v {
        Value::Array(a) => a.iter_mut().filter_map(Value::as_object_mut).collect(),
        Value::Object(o) => o.values_mut().filter_map(Value::as_object_mut).collect(),
        _ => Vec::new(),
    }
}

fn key_text(b: &Map<String, Value>) -> String {
    match b.get("key_as_string").or_else(|| b.get("key")) {
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

fn with_gap(v: Option<f64>, gap: Gap) -> Option<f64> {
    match (v, gap) {
        (None, Gap::InsertZeros) => Some(0.0),
        (v, _) => v,
    }
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

fn sibling(op: Sibling, level: &mut Map<String, Value>, path: &str, gap: Gap) -> Value {
    let (agg, rest) = path.split_once('>').unwrap_or((path, "_count"));
    let mut values: Vec<(String, f64)> = Vec::new();
    if let Some(buckets) = level.get_mut(agg).map(|a| &mut a["buckets"]) {
        for b in buckets_of(buckets) {
            if let Some(v) = with_gap(resolve(b, rest), gap) {
                values.push((key_text(b), v));
            }
        }
    }
    let nums = values.iter().map(|(_, v)| *v);
    let sum: f64 = nums.clone().sum();
    let count = values.len();
    match op {
        Sibling::Max | Sibling::Min => {
            let best = if op == Sibling::Max {
                nums.clone().fold(f64::NEG_INFINITY, f64::max)
            } else {
                nums.clone().fold(f64::INFINITY, f64::min)
            };
            let keys: Vec<&String> = values
                .iter()
                .filter(|(_, v)| *v == best)
                .map(|(k, _)| k)
                .collect();
            json!({"value": if count == 0 { Value::Null } else { number(best) }, "keys": keys})
        }
        Sibling::Avg => {
            json!({"value": if count == 0 { Value::Null } else { number(sum / count as f64) }})
        }
        Sibling::Sum => json!({"value": number(sum)}),
        Sibling::Stats => {
            let min = nums.clone().fold(f64::INFINITY, f64::min);
            let max = nums.fold(f64::NEG_INFINITY, f64::max);
            let or_null = |v: f64| if count == 0 { Value::Null } else { number(v) };
            json!({"count": count, "min": or_null(min), "max": or_null(max), "avg": or_null(sum / count as f64), "sum": number(sum)})
        }
    }
}

impl Pipeline {
    /// A parent pipeline over its parent's buckets.
    fn in_buckets(&self, buckets: &mut Value) -> Result<(), String> {
        let name = &self.name;
        match &self.kind {
            Kind::Sibling(..) => {}
            Kind::Derivative(path) => {
                let mut last = None;
                for b in buckets_of(buckets) {
                    let v = with_gap(resolve(b, path), self.gap);
                    if let (Some(prev), Some(cur)) = (last, v) {
                        b.insert(name.clone(), json!({"value": number(cur - prev)}));
                    }
                    last = v;
                }
            }
            Kind::CumulativeSum(path) => {
                let mut sum = 0.0;
                for b in buckets_of(buckets) {
                    sum += resolve(b, path).unwrap_or(0.0);
                    b.insert(name.clone(), json!({"value": number(sum)}));
                }
            }
            Kind::MovingFn {
                path,
                window,
                shift,
                script,
            } => self.moving_fn(buckets, path, *window, *shift, script)?,
            Kind::Script { vars, script } => {
                for b in buckets_of(buckets) {
                    let Some(args) = self.vars(b, vars) else {
                        continue;
                    };
                    let out = script.run(&args, &mut NoDoc)?;
                    match out {
                        Val::Null => {}
                        other => {
                            let v = other.as_f64().ok_or_else(|| format!("bucket_script `{name}`: the script returned a {}, not a number", other.type_name()))?;
                            b.insert(name.clone(), json!({"value": number(v)}));
                        }
                    }
                }
            }
            Kind::Selector { vars, script } => self.select(buckets, vars, script)?,
            Kind::Sort { by, from, size } => self.sort(buckets, by, *from, *size)?,
        }
        Ok(())
    }

    fn moving_fn(
        &self,
        buckets: &mut Value,
        path: &str,
        window: usize,
        shift: i64,
        script: &Script,
    ) -> Result<(), String> {
        let name = &self.name;
        let mut list = buckets_of(buckets);
        let values: Vec<f64> = list
            .iter()
            .filter_map(|b| with_gap(resolve(b, path), self.gap))
            .collect();
        let mut index: i64 = 0;
        for b in list.iter_mut() {
            if with_gap(resolve(b, path), self.gap).is_none() {
                continue;
            }
            let clamp = |i: i64| i.clamp(0, values.len() as i64) as usize;
            let (from, to) = (clamp(index - window as i64 + shift), clamp(index + shift));
            let window_values = Val::list(
                values[from..to.max(from)]
                    .iter()
                    .map(|v| Val::Float(*v))
                    .collect(),
            );
            let out = script.run(&[("values".into(), window_values)], &mut NoDoc)?;
            let v = out.as_f64().ok_or_else(|| {
                format!(
                    "moving_fn `{name}`: the script returned a {}, not a number",
                    out.type_name()
                )
            })?;
            b.insert(name.clone(), json!({"value": number(v)}));
            index += 1;
        }
        Ok(())
    }

    fn select(
        &self,
        buckets: &mut Value,
        vars: &[(String, String)],
        script: &Script,
    ) -> Result<(), String> {
        let name = &self.name;
        let mut failed = None;
        let mut keep = |b: &Value| -> bool {
            let Some(b) = b.as_object() else { return true };
            let Some(args) = self.vars(b, vars) else {
                return true;
            };
            match script.run(&args, &mut NoDoc) {
                Ok(Val::Bool(keep)) => keep,
                Ok(other) => {
                    failed.get_or_insert(format!(
                        "bucket_selector `{name}`: the script returned a {}, not a boolean",
                        other.type_name()
                    ));
                    true
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    true
                }
            }
        };
        match buckets {
            Value::Array(a) => a.retain(keep),
            Value::Object(o) => o.retain(|_, b| keep(b)),
            _ => {}
        }
        if let Some(e) = failed {
            return Err(e);
        }
        Ok(())
    }

    fn sort(
        &self,
        buckets: &mut Value,
        by: &[(String, bool)],
        from: usize,
        size: Option<usize>,
    ) -> Result<(), String> {
        let name = &self.name;
        let Value::Array(list) = buckets else {
            return Err(format!(
                "bucket_sort `{name}`: keyed buckets cannot be sorted"
            ));
        };
        if !by.is_empty() {
            let keyed = |b: &Value| -> Vec<Option<f64>> {
                by.iter()
                    .map(|(p, _)| b.as_object().and_then(|o| resolve(o, p)))
                    .collect()
            };
            // A bucket with a gap is left out, as with `skip`.
            list.retain(|b| keyed(b).iter().all(Option::is_some) || self.gap != Gap::Skip);
            list.sort_by(|a, b| {
                for (i, (ka, kb)) in keyed(a).into_iter().zip(keyed(b)).enumerate() {
                    let o = ka.unwrap_or(0.0).total_cmp(&kb.unwrap_or(0.0));
                    let o = if by[i].1 { o.reverse() } else { o };
                    if o != std::cmp::Ordering::Equal {
                        return o;
                    }
                }
                std::cmp::Ordering::Equal
            });
        }
        let end = size.map_or(list.len(), |s| (from + s).min(list.len()));
        *list = list
            .drain(..)
            .skip(from)
            .take(end.saturating_sub(from))
            .collect();
        Ok(())
    }

    /// A script's `params.<var>` from the bucket; None when one is a gap (skip).
    fn vars(
        &self,
        b: &Map<String, Value>,
        vars: &[(String, String)],
    ) -> Option<Vec<(String, Val)>> {
        let mut out = Vec::new();
        for (var, path) in vars {
            let v = match (resolve(b, path), self.gap) {
                (Some(v), _) => v,
                (None, Gap::InsertZeros) => 0.0,
                (None, _) => return None,
            };
            out.push((format!("params.{var}"), Val::Float(v)));
        }
        Some(out)
    }
}
