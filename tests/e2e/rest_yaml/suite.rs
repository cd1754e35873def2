//! Elasticsearch's REST test format (rest-api-spec `yamlRestTest`), read into steps.
//!
//! A file holds YAML documents: an optional `setup` and `teardown`, then one test case each,
//! every one a list of steps (`do`, `match`, `set`, `length`, `is_true`, ...).

use serde_json::{Map, Value};

pub struct Suite {
    pub setup: Vec<Step>,
    pub teardown: Vec<Step>,
    pub cases: Vec<Case>,
}

pub struct Case {
    pub name: String,
    pub steps: Vec<Step>,
}

pub enum Step {
    /// `skip` or `requires`, kept whole: whether it applies is the runner's call.
    Prerequisite {
        skip: bool,
        spec: Map<String, Value>,
    },
    Do(Do),
    /// `match`, `length`, `gt`, `lte`, ...: a path and what it is held against.
    Assert {
        kind: String,
        path: String,
        expected: Value,
    },
    IsTrue(String),
    IsFalse(String),
    Set {
        path: String,
        name: String,
    },
    /// A step this harness does not run, kept so the case fails naming it.
    Unknown(String),
}

pub struct Do {
    pub api: String,
    pub params: Map<String, Value>,
    pub catch: Option<String>,
    pub headers: Vec<(String, String)>,
    /// `warnings` / `warnings_regex`: deprecation warnings the server must send.
    pub warnings: Vec<String>,
}

pub fn parse(text: &str) -> Result<Suite, String> {
    let mut suite = Suite {
        setup: Vec::new(),
        teardown: Vec::new(),
        cases: Vec::new(),
    };
    for document in serde_yaml::Deserializer::from_str(text) {
        let value: serde_yaml::Value =
            serde::Deserialize::deserialize(document).map_err(|e| e.to_string())?;
        let json = to_json(&value);
        let Value::Object(sections) = json else {
            if json.is_null() {
                continue;
            }
            return Err(format!("a document that is not a mapping: {json}"));
        };
        for (name, steps) in sections {
            let steps = parse_steps(&steps).map_err(|e| format!("{name}: {e}"))?;
            match name.as_str() {
                "setup" => suite.setup = steps,
                "teardown" => suite.teardown = steps,
                _ => suite.cases.push(Case { name, steps }),
            }
        }
    }
    Ok(suite)
}

fn parse_steps(steps: &Value) -> Result<Vec<Step>, String> {
    let list = steps.as_array().ok_or("steps are not a list")?;
    list.iter().map(parse_step).collect()
}

fn parse_step(step: &Value) -> Result<Step, String> {
    let map = step
        .as_object()
        .ok_or_else(|| format!("step {step} is not a mapping"))?;
    let (kind, body) = map.iter().next().ok_or("an empty step")?;
    Ok(match kind.as_str() {
        "skip" | "requires" => Step::Prerequisite {
            skip: kind == "skip",
            spec: body.as_object().cloned().unwrap_or_default(),
        },
        "do" => Step::Do(parse_do(body)?),
        "is_true" => Step::IsTrue(body.as_str().unwrap_or_default().to_string()),
        "is_false" => Step::IsFalse(body.as_str().unwrap_or_default().to_string()),
        "set" => {
            let (path, name) = single(body)?;
            Step::Set {
                path,
                name: name.as_str().unwrap_or_default().to_string(),
            }
        }
        "match" | "length" | "gt" | "gte" | "lt" | "lte" | "contains" | "close_to" => {
            let (path, expected) = single(body)?;
            Step::Assert {
                kind: kind.clone(),
                path,
                expected,
            }
        }
        other => Step::Unknown(other.to_string()),
    })
}

fn single(body: &Value) -> Result<(String, Value), String> {
    let map = body
        .as_object()
        .ok_or_else(|| format!("{body} is not a mapping"))?;
    let (k, v) = map.iter().next().ok_or("an empty assertion")?;
    Ok((k.clone(), v.clone()))
}

fn parse_do(body: &Value) -> Result<Do, String> {
    let map = body.as_object().ok_or("`do` is not a mapping")?;
    let mut call = Do {
        api: String::new(),
        params: Map::new(),
        catch: None,
        headers: Vec::new(),
        warnings: Vec::new(),
    };
    for (key, value) in map {
        match key.as_str() {
            "catch" => call.catch = value.as_str().map(str::to_string),
            "headers" => {
                for (h, v) in value.as_object().into_iter().flatten() {
                    call.headers.push((h.clone(), scalar(v)));
                }
            }
            "warnings" | "warnings_regex" => {
                call.warnings
                    .extend(value.as_array().into_iter().flatten().map(scalar));
            }
            "allowed_warnings" | "allowed_warnings_regex" | "node_selector" => {}
            api => {
                call.api = api.to_string();
                call.params = value.as_object().cloned().unwrap_or_default();
            }
        }
    }
    if call.api.is_empty() {
        return Err("`do` names no API".into());
    }
    Ok(call)
}

/// A parameter's text as it goes in a URL: lists joined by commas, as Elasticsearch's clients do.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(scalar).collect::<Vec<_>>().join(","),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

pub fn to_json(v: &serde_yaml::Value) -> Value {
    use serde_yaml::Value as Y;
    match v {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(*b),
        Y::Number(n) => {
            if let Some(i) = n.as_i64() {
                Value::from(i)
            } else if let Some(u) = n.as_u64() {
                Value::from(u)
            } else {
                serde_json::Number::from_f64(n.as_f64().unwrap_or(0.0))
                    .map(Value::Number)
                    .unwrap_or(Value::Null)
            }
        }
        Y::String(s) => Value::String(s.clone()),
        Y::Sequence(items) => Value::Array(items.iter().map(to_json).collect()),
        Y::Mapping(m) => Value::Object(m.iter().map(|(k, v)| (key_text(k), to_json(v))).collect()),
        Y::Tagged(t) => to_json(&t.value),
    }
}

fn key_text(k: &serde_yaml::Value) -> String {
    match to_json(k) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}
