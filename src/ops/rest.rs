//! force-merge, cluster-health, index-document and raw-request: REST operations of
//! Elasticsearch-style backends (the embedded engine answers them through the same API).

use super::{admin, OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;
use serde_json::Value;

pub const FORCE_MERGE: OperationType = OperationType {
    name: "force-merge",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| {
        Ok(OpSpec::ForceMerge {
            indices: admin::index_names(p, ctx)?,
            max_num_segments: max_num_segments(p)?,
            poll: merge_polling(p)?,
        })
    },
};

/// Rally's `mode` (`blocking`, the default, or `polling`) and `poll-period` (10 s).
fn merge_polling(p: &Params) -> Result<Option<std::time::Duration>, ParamError> {
    match p.string("mode")?.as_deref() {
        None | Some("blocking") => Ok(None),
        Some("polling") => match p.duration("poll-period")? {
            Some(d) if d.is_zero() => Err(ParamError::new("poll-period", "must be above 0")),
            Some(d) => Ok(Some(d)),
            None => Ok(Some(std::time::Duration::from_secs(10))),
        },
        Some(other) => Err(ParamError::new(
            "mode",
            format!("expected `blocking` or `polling`, got `{other}`"),
        )),
    }
}

/// Rally passes `max-num-segments` on when it is truthy: -1, its tracks' default, is sent as
/// it is (Elasticsearch's own default, merge as needed), and 0 is not sent.
fn max_num_segments(p: &Params) -> Result<Option<i64>, ParamError> {
    match p.get("max-num-segments").and_then(Value::as_i64) {
        Some(-1) => Ok(Some(-1)),
        Some(0) => Ok(None),
        _ => Ok(p
            .positive_int("max-num-segments")?
            .map(|n| n.min(i64::MAX as u64) as i64)),
    }
}

pub const CLUSTER_HEALTH: OperationType = OperationType {
    name: "cluster-health",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, _| Ok(OpSpec::ClusterHealth(cluster_health(p)?)),
};

pub const GET_DOCUMENT: OperationType = OperationType {
    name: "get-document",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| {
        let index = admin::single_index(p, ctx)?;
        let id = p
            .string("id")?
            .ok_or_else(|| ParamError::new("id", "get-document needs the document's `id`"))?;
        Ok(OpSpec::GetDocument { index, id })
    },
};

pub const INDEX_DOCUMENT: OperationType = OperationType {
    name: "index-document",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| {
        let (index, id, body) = index_document(p, ctx)?;
        Ok(OpSpec::IndexDocument { index, id, body })
    },
};

pub const RAW_REQUEST: OperationType = OperationType {
    name: "raw-request",
    unit: ThroughputUnit::Operations,
    sweepable: &[],
    parse: |p, ctx| Ok(OpSpec::RawRequest(raw_request(p, ctx)?)),
};

/// A cluster health colour; `wait-for-status` waits until the cluster is at least this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HealthStatus {
    Red,
    Yellow,
    Green,
}

impl HealthStatus {
    pub fn parse(s: &str) -> Option<HealthStatus> {
        match s {
            "red" => Some(HealthStatus::Red),
            "yellow" => Some(HealthStatus::Yellow),
            "green" => Some(HealthStatus::Green),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Red => "red",
            HealthStatus::Yellow => "yellow",
            HealthStatus::Green => "green",
        }
    }
}

#[derive(Debug, Clone)]
pub struct ClusterHealthSpec {
    pub index: Option<String>,
    pub wait_for_status: Option<HealthStatus>,
    pub request_params: Vec<(String, String)>,
}

/// One or more HTTP requests, sent in order as one operation (a setup step that creates
/// several templates is one task, as in Rally).
#[derive(Debug, Clone)]
pub struct RawRequestSpec {
    pub requests: Vec<RawCall>,
    /// Statuses answered that are not errors (`404` for deletes of what may not exist, as
    /// Rally's delete operations and a raw request's `ignore` treat it).
    pub ignore_status: StatusSet,
    /// `${...}` slots in the one request's body filled per call.
    pub bound: Option<std::sync::Arc<super::BoundBody>>,
}

#[derive(Debug, Clone)]
pub struct RawCall {
    pub method: String,
    /// Path with a leading `/`, without the query string.
    pub path: String,
    pub body: Option<Value>,
    pub request_params: Vec<(String, String)>,
    /// Sent again until its answer says this condition holds (Rally's `wait-for-*`).
    pub poll: Option<super::poll::Poll>,
    /// `if-found`: sent only when the request before it answered 2xx (a HEAD asking whether
    /// the target exists: Rally's `only-if-exists`).
    pub if_found: bool,
    /// `destructive`: a delete by wildcard. Elasticsearch refuses it while
    /// `action.destructive_requires_name` holds, so the setting is lifted around the
    /// operation's requests and put back after, as Rally's `set_destructive_requires_name`.
    pub destructive: bool,
    /// `cursor-pages`: the request, then this many pages in all, each next one sent with the
    /// answer's `cursor` as its body (`{"cursor": ...}`), as Rally's sql runner pages.
    pub cursor_pages: u64,
}

/// At most this many pages followed by cursor in one request.
const MAX_CURSOR_PAGES: u64 = 100_000;

/// At most this many requests in one raw-request operation.
const MAX_RAW_REQUESTS: usize = 1000;

pub const RAW_METHODS: &[&str] = &["GET", "POST", "PUT", "DELETE", "HEAD"];

/// `request-params`: a mapping of URL query parameters, values rendered as strings.
pub fn request_params(p: &Params) -> Result<Vec<(String, String)>, ParamError> {
    match p.get("request-params") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                Value::Number(_) | Value::Bool(_) => Ok((k.clone(), v.to_string())),
                other => Err(ParamError::new(
                    "request-params",
                    format!("`{k}` must be a string, number or boolean, not {other}"),
                )),
            })
            .collect(),
        Some(other) => Err(ParamError::new(
            "request-params",
            format!("expected a mapping of URL parameters, got {other}"),
        )),
    }
}

pub fn cluster_health(p: &Params) -> Result<ClusterHealthSpec, ParamError> {
    let index = p.string("index")?;
    let wait_for_status = match p.string("wait-for-status")? {
        None => None,
        Some(s) => Some(HealthStatus::parse(&s).ok_or_else(|| {
            ParamError::new(
                "wait-for-status",
                format!("expected green, yellow or red, got `{s}`"),
            )
        })?),
    };
    Ok(ClusterHealthSpec {
        index,
        wait_for_status,
        request_params: request_params(p)?,
    })
}

pub fn index_document(
    p: &Params,
    ctx: &TrackContext,
) -> Result<(String, Option<String>, Value), ParamError> {
    let index = admin::single_index(p, ctx)?;
    let id = p.string("id")?;
    let body = match p.get("body") {
        Some(v @ Value::Object(_)) => v.clone(),
        None => {
            return Err(ParamError::new(
                "body",
                "index-document needs the document as `body`",
            ))
        }
        Some(other) => {
            return Err(ParamError::new(
                "body",
                format!("expected a document mapping, got {other}"),
            ))
        }
    };
    Ok((index, id, body))
}

/// A set of HTTP error statuses (400-599), copied into each request's expectation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StatusSet([u64; 4]);

impl StatusSet {
    pub fn insert(&mut self, status: u16) -> bool {
        let Some(i) = status.checked_sub(400).filter(|i| *i < 200) else {
            return false;
        };
        self.0[usize::from(i / 64)] |= 1 << (i % 64);
        true
    }

    pub fn contains(&self, status: u16) -> bool {
        status
            .checked_sub(400)
            .filter(|i| *i < 200)
            .is_some_and(|i| self.0[usize::from(i / 64)] & (1 << (i % 64)) != 0)
    }

    pub fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }
}

pub fn raw_request(p: &Params, ctx: &TrackContext) -> Result<RawRequestSpec, ParamError> {
    let mut ignore_status = StatusSet::default();
    let listed = match p.get("ignore-status") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(list)) => list.clone(),
        Some(one) => vec![one.clone()],
    };
    for v in listed {
        let fits = v
            .as_u64()
            .and_then(|s| u16::try_from(s).ok())
            .is_some_and(|s| ignore_status.insert(s));
        if !fits {
            return Err(ParamError::new(
                "ignore-status",
                format!("expected HTTP error statuses (400-599), one or a list, got {v}"),
            ));
        }
    }
    let requests = match p.get("requests") {
        None => vec![raw_call(p)?],
        Some(Value::Array(list)) => {
            if ["method", "path", "body", "request-params"]
                .iter()
                .any(|k| p.get(k).is_some())
            {
                return Err(ParamError::new(
                    "requests",
                    "give either `requests` or one request's `method`/`path`/`body`/`request-params`, not both",
                ));
            }
            if list.is_empty() || list.len() > MAX_RAW_REQUESTS {
                return Err(ParamError::new(
                    "requests",
                    format!(
                        "expected 1 to {MAX_RAW_REQUESTS} requests, got {}",
                        list.len()
                    ),
                ));
            }
            list.iter()
                .enumerate()
                .map(|(i, r)| {
                    let Value::Object(m) = r else {
                        return Err(ParamError::new(
                            "requests",
                            format!("request {i} is not a mapping"),
                        ));
                    };
                    let one = Params::new("a raw-request's request", m);
                    raw_call(&one)
                        .and_then(|c| one.reject_unknown().map(|()| c))
                        .map_err(|e| {
                            ParamError::new(
                                "requests",
                                format!("request {i}: `{}`: {}", e.param, e.message),
                            )
                        })
                })
                .collect::<Result<_, _>>()?
        }
        Some(other) => {
            return Err(ParamError::new(
                "requests",
                format!("expected a list of requests, got {other}"),
            ))
        }
    };
    let mut requests: Vec<RawCall> = requests;
    let bound = match (requests.as_mut_slice(), p.get("bindings").is_some()) {
        (_, false) => None,
        ([one], true) => {
            let body = one.body.clone().ok_or_else(|| {
                ParamError::new(
                    "bindings",
                    "bindings fill the request's `body`, and it has none",
                )
            })?;
            let bound = super::BoundBody::parse(p, &body, ctx)?;
            if let Some(b) = &bound {
                one.body = Some(b.sample());
            }
            bound
        }
        _ => {
            return Err(ParamError::new(
                "bindings",
                "bindings fill the body of one request, and this raw-request has several",
            ))
        }
    };
    Ok(RawRequestSpec {
        requests,
        ignore_status,
        bound,
    })
}

fn raw_call(p: &Params) -> Result<RawCall, ParamError> {
    let method = p
        .string("method")?
        .unwrap_or_else(|| "GET".into())
        .to_ascii_uppercase();
    if !RAW_METHODS.contains(&method.as_str()) {
        return Err(ParamError::new(
            "method",
            format!("`{method}` is not one of {}", RAW_METHODS.join(", ")),
        ));
    }
    let path = p
        .string("path")?
        .ok_or_else(|| ParamError::new("path", "raw-request needs a `path`, e.g. /_cat/indices"))?;
    if !path.starts_with('/') {
        return Err(ParamError::new(
            "path",
            format!("`{path}` must start with `/`"),
        ));
    }
    if path.contains('?') {
        return Err(ParamError::new(
            "path",
            "put URL parameters under `request-params`, not in `path`",
        ));
    }
    let body = match p.get("body") {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.clone()),
    };
    let poll = match p.string("until")? {
        None => None,
        Some(name) => {
            let until = super::poll::Until::parse(&name).ok_or_else(|| {
                ParamError::new(
                    "until",
                    format!(
                        "`{name}` is not one of {}",
                        super::poll::Until::NAMES.join(", ")
                    ),
                )
            })?;
            let positive = |key: &'static str, default| -> Result<_, ParamError> {
                match p.duration(key)? {
                    Some(d) if d.is_zero() => Err(ParamError::new(key, "must be above 0")),
                    Some(d) => Ok(d),
                    None => Ok(default),
                }
            };
            Some(super::poll::Poll {
                until,
                interval: positive("poll-interval", super::poll::DEFAULT_INTERVAL)?,
                timeout: positive("poll-timeout", super::poll::DEFAULT_TIMEOUT)?,
            })
        }
    };
    let flag = |key: &'static str| match p.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ParamError::new(
            key,
            format!("expected true or false, got {other}"),
        )),
    };
    Ok(RawCall {
        method,
        path,
        body,
        request_params: request_params(p)?,
        poll,
        if_found: flag("if-found")?,
        destructive: flag("destructive")?,
        cursor_pages: match p.get("cursor-pages") {
            None | Some(Value::Null) => 1,
            Some(v) => v
                .as_u64()
                .filter(|n| (1..=MAX_CURSOR_PAGES).contains(n))
                .ok_or_else(|| {
                    ParamError::new(
                        "cursor-pages",
                        format!("expected 1 to {MAX_CURSOR_PAGES} pages, got {v}"),
                    )
                })?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::StatusSet;

    #[test]
    fn a_status_set_holds_error_statuses_only() {
        let mut s = StatusSet::default();
        assert!(s.is_empty());
        assert!(s.insert(404) && s.insert(400) && s.insert(599));
        assert!(!s.insert(200) && !s.insert(600) && !s.insert(0));
        assert!(s.contains(404) && s.contains(400) && s.contains(599));
        assert!(!s.contains(409) && !s.contains(200) && !s.contains(65535));
    }
}
