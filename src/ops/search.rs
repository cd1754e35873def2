//! search: an Elasticsearch query DSL body run against one index; scroll-search and
//! paginated-search read it page by page (a scroll, or `search_after`), as one operation.

use super::{admin, OpSpec, OperationType, ParamError, Params, TrackContext};
use crate::units::ThroughputUnit;
use serde_json::{json, Value};

pub const SEARCH: OperationType = OperationType {
    name: "search",
    unit: ThroughputUnit::Operations,
    sweepable: &["size", "request-params"],
    parse: |p, ctx| Ok(OpSpec::Search(parse(p, ctx)?)),
};

const PAGED_SWEEPABLE: &[&str] = &["size", "request-params", "pages", "results-per-page"];

/// As Rally counts them: a paged search's throughput is in pages.
pub const SCROLL_SEARCH: OperationType = OperationType {
    name: "scroll-search",
    unit: ThroughputUnit::Pages,
    sweepable: PAGED_SWEEPABLE,
    parse: |p, ctx| Ok(OpSpec::Search(parse_paged(p, ctx, PageBy::Scroll)?)),
};

pub const PAGINATED_SEARCH: OperationType = OperationType {
    name: "paginated-search",
    unit: ThroughputUnit::Pages,
    sweepable: PAGED_SWEEPABLE,
    parse: |p, ctx| Ok(OpSpec::Search(parse_paged(p, ctx, PageBy::SearchAfter)?)),
};

#[derive(Debug, Clone)]
pub struct SearchSpec {
    pub index: String,
    /// The request body (`query`, `size`, ...), passed to the backend as written.
    pub body: Value,
    /// URL parameters of the request (`request_cache`, `preference`, ...).
    pub request_params: Vec<(String, String)>,
    /// Read page by page; the operation is all its pages.
    pub paging: Option<Paging>,
    /// `${...}` slots in the body filled per call (`body` then holds one drawn sample).
    pub bound: Option<std::sync::Arc<super::BoundBody>>,
}

/// How a scroll or paginated search reads its pages: the engine's definition, which every
/// backend follows.
pub use engine::{PageBy, Paging};

pub fn parse(p: &Params, ctx: &TrackContext) -> Result<SearchSpec, ParamError> {
    let index = admin::single_index(p, ctx)?;
    let mut body = match p.get("body") {
        None => json!({ "query": { "match_all": {} } }),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return Err(ParamError::new(
                "body",
                format!("expected a query body mapping, got {other}"),
            ))
        }
    };
    if let Some(size) = p.get("size") {
        if !size.is_u64() {
            return Err(ParamError::new(
                "size",
                format!("expected a non-negative integer, got {size}"),
            ));
        }
        body["size"] = size.clone();
    }
    let bound = super::BoundBody::parse(p, &body, ctx)?;
    if let Some(b) = &bound {
        body = b.sample();
    }
    Ok(SearchSpec {
        index,
        body,
        request_params: super::rest::request_params(p)?,
        paging: None,
        bound,
    })
}

/// scroll-search and paginated-search: a search plus `pages` (a count or "all") and
/// `results-per-page` (default: the body's `size`, else 10).
pub fn parse_paged(p: &Params, ctx: &TrackContext, by: PageBy) -> Result<SearchSpec, ParamError> {
    let mut spec = parse(p, ctx)?;
    if spec.bound.is_some() {
        return Err(ParamError::new(
            "bindings",
            "bindings fill a search's or a raw request's body, not the pages of a scroll or paginated search",
        ));
    }
    let pages = match p.get("pages") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "all" => None,
        Some(v) => match v.as_u64() {
            Some(n) if n > 0 => Some(n),
            _ => {
                return Err(ParamError::new(
                    "pages",
                    format!("expected a positive number of pages or \"all\", got {v}"),
                ))
            }
        },
    };
    let per_page = match p.positive_int("results-per-page")? {
        Some(n) => n,
        None => spec
            .body
            .get("size")
            .and_then(Value::as_u64)
            .filter(|n| *n > 0)
            .unwrap_or(10),
    };
    spec.body["size"] = json!(per_page);
    if by == PageBy::SearchAfter && spec.body.get("sort").is_none() {
        return Err(ParamError::new(
            "body",
            "paginated-search pages with `search_after`, which needs a `sort` in the body",
        ));
    }
    if p.get("with-point-in-time-from").is_some() {
        return Err(ParamError::new("with-point-in-time-from", "point-in-time searches (open-point-in-time) are not supported; without it, pages use `search_after` on the index"));
    }
    spec.paging = Some(Paging {
        by,
        pages,
        per_page,
    });
    Ok(spec)
}
