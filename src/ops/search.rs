//! search: an Elasticsearch query DSL body run against one index.

use super::{admin, ParamError, Params, TrackContext};
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct SearchSpec {
    pub index: String,
    /// The request body (`query`, `size`, ...), passed to the backend as written.
    pub body: Value,
    /// URL parameters of the request (`request_cache`, `preference`, ...).
    pub request_params: Vec<(String, String)>,
}

pub fn parse(p: &Params, ctx: &TrackContext) -> Result<SearchSpec, ParamError> {
    let index = admin::single_index(p, ctx)?;
    let mut body = match p.get("body") {
        None => json!({ "query": { "match_all": {} } }),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => return Err(ParamError::new("body", format!("expected a query body mapping, got {other}"))),
    };
    if let Some(size) = p.get("size") {
        if !size.is_u64() {
            return Err(ParamError::new("size", format!("expected a non-negative integer, got {size}")));
        }
        body["size"] = size.clone();
    }
    Ok(SearchSpec { index, body, request_params: super::rest::request_params(p)? })
}
