//! Runs one REST test case against a `runner serve` port, as Elasticsearch's YAML test runner
//! does: `do` calls with their `catch`, assertions on the last response, a stash for `set`.

use super::api;
use super::client;
use super::suite::{scalar, Case, Do, Step, Suite};
use serde_json::{Map, Value};

/// The version `runner serve` answers as, for `skip: version` and `gte_v…` features.
const SERVED_VERSION: (u32, u32, u32) = (8, 15, 0);

/// Test-runner features this harness runs; a case requiring any other is skipped, as
/// Elasticsearch's own runner skips what it does not support.
const RUNNER_FEATURES: &[&str] = &[
    "headers",
    "allowed_warnings",
    "allowed_warnings_regex",
    "warnings",
    "warnings_regex",
    "contains",
    "close_to",
    "default_shards",
    "stash_in_path",
    "node_selector",
];

pub enum Outcome {
    Passed,
    Skipped(String),
    Failed(String),
}

/// Whether the case runs at all: the `skip`/`requires` sections of the setup and of the case.
pub fn skip_reason(suite: &Suite, case: &Case) -> Option<String> {
    suite
        .setup
        .iter()
        .chain(&case.steps)
        .filter_map(|s| match s {
            Step::Prerequisite { skip, spec } => prerequisite_unmet(*skip, spec),
            _ => None,
        })
        .next()
}

fn prerequisite_unmet(skip: bool, spec: &Map<String, Value>) -> Option<String> {
    let list = |key: &str| -> Vec<String> {
        match spec.get(key) {
            Some(Value::Array(items)) => items.iter().map(scalar).collect(),
            Some(v) => vec![scalar(v)],
            None => Vec::new(),
        }
    };
    let reason = spec.get("reason").map(scalar).unwrap_or_default();
    if skip {
        if let Some(range) = spec.get("version").map(scalar) {
            if version_in(&range) {
                return Some(format!("skip: version {range} ({reason})"));
            }
        }
        if let Some(f) = list("features")
            .iter()
            .find(|f| !RUNNER_FEATURES.contains(&f.as_str()))
        {
            return Some(format!("skip: the harness lacks test feature `{f}`"));
        }
        let features = list("cluster_features");
        if !features.is_empty() && features.iter().all(|f| has_cluster_feature(f)) {
            return Some(format!("skip: cluster has {features:?} ({reason})"));
        }
        if spec.contains_key("awaits_fix") {
            return Some(format!("skip: awaits fix ({reason})"));
        }
        return None;
    }
    if let Some(f) = list("test_runner_features")
        .iter()
        .find(|f| !RUNNER_FEATURES.contains(&f.as_str()))
    {
        return Some(format!("requires test feature `{f}` the harness lacks"));
    }
    if let Some(f) = list("cluster_features")
        .iter()
        .find(|f| !has_cluster_feature(f))
    {
        return Some(format!("requires cluster feature `{f}` ({reason})"));
    }
    if spec.contains_key("capabilities") {
        // Elasticsearch asks `GET /_capabilities`, which runner serve does not answer.
        return Some(format!("requires the capabilities API ({reason})"));
    }
    None
}

/// `gte_vX.Y.Z` holds up to the served version; named features are taken as present, so their
/// cases run and a missing behaviour shows as a failure, never as a quiet skip.
fn has_cluster_feature(feature: &str) -> bool {
    match feature.strip_prefix("gte_v") {
        Some(v) => parse_version(v).is_some_and(|v| v <= SERVED_VERSION),
        None => true,
    }
}

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut it = text.trim().split('.').map(|p| p.parse::<u32>().ok());
    Some((
        it.next()??,
        it.next().flatten().unwrap_or(0),
        it.next().flatten().unwrap_or(0),
    ))
}

fn version_in(ranges: &str) -> bool {
    ranges.split(',').any(|range| {
        let range = range.trim();
        if range == "all" {
            return true;
        }
        let Some((lo, hi)) = range.split_once('-') else {
            return parse_version(range) == Some(SERVED_VERSION);
        };
        let lo = parse_version(lo).unwrap_or((0, 0, 0));
        let hi = parse_version(hi).unwrap_or((u32::MAX, 0, 0));
        lo <= SERVED_VERSION && SERVED_VERSION <= hi
    })
}

pub struct Context {
    port: u16,
    stash: Map<String, Value>,
    body: Value,
}

impl Context {
    pub fn new(port: u16) -> Context {
        Context {
            port,
            stash: Map::new(),
            body: Value::Null,
        }
    }

    /// Runs the steps, stopping at the first that fails; the error names its position.
    pub fn run(&mut self, steps: &[Step], section: &str) -> Result<(), String> {
        for (i, step) in steps.iter().enumerate() {
            self.step(step)
                .map_err(|e| format!("{section} step {}: {e}", i + 1))?;
        }
        Ok(())
    }

    fn step(&mut self, step: &Step) -> Result<(), String> {
        match step {
            Step::Prerequisite { .. } => Ok(()),
            Step::Do(call) => self.call(call),
            Step::Set { path, name } => {
                let v = self.lookup(path)?.cloned().unwrap_or(Value::Null);
                self.stash.insert(name.clone(), v);
                Ok(())
            }
            Step::IsTrue(path) => match self.lookup(path)? {
                Some(v) if truthy(v) => Ok(()),
                other => Err(format!("is_true `{path}`: found {}", shown(other))),
            },
            Step::IsFalse(path) => match self.lookup(path)? {
                Some(v) if truthy(v) => Err(format!("is_false `{path}`: found {v}")),
                _ => Ok(()),
            },
            Step::Assert {
                kind,
                path,
                expected,
            } => {
                let expected = self.resolve(expected);
                let actual = self.lookup(path)?.cloned();
                assert_one(kind, path, &expected, actual.as_ref())
            }
            Step::Unknown(kind) => Err(format!("the harness does not run `{kind}` steps")),
        }
    }

    fn call(&mut self, call: &Do) -> Result<(), String> {
        let api = api::find(&call.api)
            .ok_or_else(|| format!("API `{}` is not in the harness's table", call.api))?;
        let params = match self.resolve(&Value::Object(call.params.clone())) {
            Value::Object(m) => m,
            _ => unreachable!("an object resolves to an object"),
        };
        let request = build_request(api, &params)?;
        let headers: Vec<(String, String)> = call
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), self.substitute(v)))
            .collect();
        let body = request.body.as_ref().map(|(t, b)| (*t, b.as_slice()));
        let response = client::send(self.port, request.method, &request.target, &headers, body)
            .map_err(|e| format!("{} {}: {e}", request.method, request.target))?;
        let text = String::from_utf8_lossy(&response.body).into_owned();
        self.body = if request.method == "HEAD" {
            Value::Bool(response.status == 200)
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text.clone()))
        };
        let head_miss = request.method == "HEAD" && response.status == 404;
        let failed = response.status >= 400 && !head_miss;
        let what = format!(
            "{} {} answered {}",
            request.method, request.target, response.status
        );
        if !call.warnings.is_empty() && response.header("warning").is_none() {
            return Err(format!(
                "{what} without the expected warnings {:?}",
                call.warnings
            ));
        }
        match (&call.catch, failed) {
            (None, false) => Ok(()),
            (None, true) if request.ignore.contains(&response.status) => Ok(()),
            (None, true) => Err(format!("{what}: {}", clip(&text))),
            (Some(c), false) => Err(format!("{what}, not the error `catch: {c}` expects")),
            (Some(c), true) => catch_matches(c, response.status, &text)
                .then_some(())
                .ok_or_else(|| format!("{what}, not `catch: {c}`: {}", clip(&text))),
        }
    }

    /// A value with `$name` (whole) and `${name}` (inside text) taken from the stash.
    fn resolve(&self, v: &Value) -> Value {
        match v {
            Value::String(s) => match s.strip_prefix('$').filter(|n| self.stash.contains_key(*n)) {
                Some(name) => self.stash[name].clone(),
                None => Value::String(self.substitute(s)),
            },
            Value::Array(items) => Value::Array(items.iter().map(|i| self.resolve(i)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), self.resolve(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    fn substitute(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (name, value) in &self.stash {
            let token = format!("${{{name}}}");
            if out.contains(&token) {
                out = out.replace(&token, &scalar(value));
            }
        }
        out
    }

    /// The value at a dotted path of the last response (`\.` escapes a dot; `$body` is all).
    fn lookup(&self, path: &str) -> Result<Option<&Value>, String> {
        if path.is_empty() || path == "$body" {
            return Ok(Some(&self.body));
        }
        let mut current = &self.body;
        for raw in split_path(path) {
            let part = match raw.strip_prefix('$') {
                Some(name) => self
                    .stash
                    .get(name)
                    .map(scalar)
                    .ok_or_else(|| format!("`${name}` is not stashed"))?,
                None => raw,
            };
            let next = match current {
                Value::Object(m) => m.get(&part),
                Value::Array(items) => part.parse::<usize>().ok().and_then(|i| items.get(i)),
                _ => None,
            };
            match next {
                Some(v) => current = v,
                None => return Ok(None),
            }
        }
        Ok(Some(current))
    }
}

fn split_path(path: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'.') => {
                parts.last_mut().unwrap().push('.');
                chars.next();
            }
            '.' => parts.push(String::new()),
            c => parts.last_mut().unwrap().push(c),
        }
    }
    parts
}

struct Request {
    method: &'static str,
    target: String,
    body: Option<(&'static str, Vec<u8>)>,
    ignore: Vec<u16>,
}

fn build_request(api: &api::Api, params: &Map<String, Value>) -> Result<Request, String> {
    let has = |p: &str| params.get(p).is_some_and(|v| !v.is_null());
    let template = api::pick_path(api, has)
        .ok_or_else(|| format!("no path of `{}` fits {:?}", api.name, params.keys()))?;
    let mut target = String::new();
    for seg in template.split('/').skip(1) {
        target.push('/');
        match seg.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
            Some(part) => target.push_str(&encode(&scalar(&params[part]))),
            None => target.push_str(seg),
        }
    }
    if target.is_empty() {
        target.push('/');
    }
    let parts: Vec<&str> = api::parts(template).collect();
    let mut query = Vec::new();
    let mut ignore = Vec::new();
    for (k, v) in params {
        match k.as_str() {
            "body" => {}
            "ignore" => {
                ignore = scalar(v)
                    .split(',')
                    .filter_map(|s| s.trim().parse().ok())
                    .collect()
            }
            k if parts.contains(&k) => {}
            k => query.push(format!("{}={}", encode(k), encode(&scalar(v)))),
        }
    }
    if !query.is_empty() {
        target.push('?');
        target.push_str(&query.join("&"));
    }
    let body = params.get("body").map(|b| encode_body(api, b));
    let method = if api.name == "index" {
        if has("id") {
            "PUT"
        } else {
            "POST"
        }
    } else if body.is_some() {
        api.methods
            .iter()
            .find(|m| **m == "POST" || **m == "PUT")
            .unwrap_or(&api.methods[0])
    } else {
        api.methods[0]
    };
    Ok(Request {
        method,
        target,
        body,
        ignore,
    })
}

fn encode_body(api: &api::Api, body: &Value) -> (&'static str, Vec<u8>) {
    let line = |v: &Value| match v {
        Value::String(s) => s.trim_end().to_string(),
        other => other.to_string(),
    };
    if api.ndjson {
        let text = match body {
            Value::Array(items) => items.iter().map(|i| line(i) + "\n").collect::<String>(),
            Value::String(s) if s.ends_with('\n') => s.clone(),
            other => line(other) + "\n",
        };
        return ("application/x-ndjson", text.into_bytes());
    }
    let text = match body {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    ("application/json", text.into_bytes())
}

/// Percent-encodes all but what Elasticsearch's clients leave as is in paths and parameters.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b',' | b'*' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

fn catch_matches(catch: &str, status: u16, body: &str) -> bool {
    match catch {
        "missing" => status == 404,
        "conflict" => status == 409,
        "bad_request" => status == 400,
        "unauthorized" => status == 401,
        "forbidden" => status == 403,
        "request_timeout" => status == 408,
        "unavailable" => status == 503,
        "request" => status >= 400 && ![400, 401, 403, 404, 408, 409].contains(&status),
        regex if regex.len() > 2 && regex.starts_with('/') && regex.ends_with('/') => {
            regex::Regex::new(&regex[1..regex.len() - 1]).is_ok_and(|r| r.is_match(body))
        }
        _ => false,
    }
}

/// Elasticsearch's `is_true`: present, and not null, false, "", or 0.
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty() && !s.eq_ignore_ascii_case("false") && s != "0",
        Value::Number(n) => n.as_f64() != Some(0.0),
        _ => true,
    }
}

fn assert_one(
    kind: &str,
    path: &str,
    expected: &Value,
    actual: Option<&Value>,
) -> Result<(), String> {
    let fail = || {
        format!(
            "{kind} `{path}`: expected {expected}, found {}",
            shown(actual)
        )
    };
    let holds = match kind {
        "match" => matches(expected, actual),
        "length" => {
            let n = match actual {
                Some(Value::Array(a)) => a.len(),
                Some(Value::Object(m)) => m.len(),
                Some(Value::String(s)) => s.chars().count(),
                _ => return Err(fail()),
            };
            expected.as_u64() == Some(n as u64)
        }
        "gt" | "gte" | "lt" | "lte" => {
            let (Some(a), Some(e)) = (actual.and_then(Value::as_f64), expected.as_f64()) else {
                return Err(fail());
            };
            match kind {
                "gt" => a > e,
                "gte" => a >= e,
                "lt" => a < e,
                _ => a <= e,
            }
        }
        "contains" => match actual {
            Some(Value::Array(items)) => items.iter().any(|i| subset(expected, i)),
            _ => false,
        },
        "close_to" => {
            let value = expected.get("value").and_then(Value::as_f64);
            let error = expected.get("error").and_then(Value::as_f64);
            match (actual.and_then(Value::as_f64), value, error) {
                (Some(a), Some(v), Some(e)) => (a - v).abs() <= e,
                _ => false,
            }
        }
        _ => return Err(format!("unknown assertion `{kind}`")),
    };
    holds.then_some(()).ok_or_else(fail)
}

/// Elasticsearch's `match`: a `/regex/` string against the text (whitespace-insensitive, as
/// Java's COMMENTS flag), numbers by value, maps and lists whole.
fn matches(expected: &Value, actual: Option<&Value>) -> bool {
    if let Value::String(s) = expected {
        let t = s.trim();
        if t.len() > 2 && t.starts_with('/') && t.ends_with('/') {
            let Some(actual) = actual else { return false };
            let text = match actual {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            // Java's `$` also matches before a line terminator that ends the input.
            let trimmed = text.strip_suffix('\n').unwrap_or(&text);
            return regex::Regex::new(&format!("(?x){}", &t[1..t.len() - 1]))
                .is_ok_and(|r| r.is_match(&text) || r.is_match(trimmed));
        }
    }
    match (expected, actual) {
        (Value::Null, None | Some(Value::Null)) => true,
        (_, None) => false,
        (e, Some(a)) => equal(e, a),
    }
}

fn equal(e: &Value, a: &Value) -> bool {
    match (e, a) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| equal(v, w))
        }
        _ => e == a,
    }
}

fn subset(e: &Value, a: &Value) -> bool {
    match (e, a) {
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .all(|(k, v)| y.get(k).is_some_and(|w| subset(v, w))),
        _ => equal(e, a),
    }
}

fn shown(v: Option<&Value>) -> String {
    v.map_or("nothing".to_string(), |v| clip(&v.to_string()))
}

fn clip(s: &str) -> String {
    if s.len() <= 300 {
        return s.to_string();
    }
    let mut end = 300;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}
