//! scroll-search and paginated-search over HTTP, as Rally runs them: a scroll opened by the
//! first search (`?scroll=10s`), continued with `_search/scroll` and cleared at the end; or
//! a search repeated with `search_after` set to the last hit's `sort`. One operation is all
//! its pages; it stops at `pages` or at the first page shorter than `results-per-page`.

use super::request::{CallBuilder, Expect, HttpCall};
use super::response;
use super::ElasticsearchClient;
use crate::backend::{ErrorKind, OpError, Outcome};
use crate::ops::{PageBy, Paging, SearchSpec};
use bytes::Bytes;
use reqwest::Method;
use serde_json::json;

/// Rally's scroll keep-alive.
const KEEP_ALIVE: &str = "10s";

pub struct PagedSearch {
    paging: Paging,
    first: HttpCall,
    /// `_search/scroll` (scroll) or the search again (search_after).
    next: HttpCall,
    /// `DELETE _search/scroll`.
    clear: HttpCall,
    /// The body without its closing brace (and without any `search_after`), to append the
    /// next page's `search_after` to.
    body_prefix: String,
}

pub fn build(
    builder: &CallBuilder,
    spec: &SearchSpec,
    paging: Paging,
    path: &str,
) -> Result<PagedSearch, String> {
    let none: &[(String, String)] = &[];
    let mut params = spec.request_params.clone();
    if paging.by == PageBy::Scroll {
        // Rally's scroll runner asks the first page in the URL: by `_doc`, kept 10 s, a page
        // of `results-per-page`.
        params.push(("sort".into(), "_doc".into()));
        params.push(("scroll".into(), KEEP_ALIVE.into()));
        params.push(("size".into(), paging.per_page.to_string()));
    }
    // Rally's runners search with GET and a body, scroll pages too.
    let first = builder.call(
        Method::GET,
        path.to_string(),
        &params,
        Some(Bytes::from(spec.body.to_string())),
        Expect::Search,
    )?;
    let next = match paging.by {
        PageBy::Scroll => builder.call(
            Method::GET,
            "/_search/scroll".into(),
            none,
            None,
            Expect::Search,
        )?,
        PageBy::SearchAfter => builder.call(
            Method::GET,
            path.to_string(),
            &spec.request_params,
            None,
            Expect::Search,
        )?,
    };
    let clear = builder.call(
        Method::DELETE,
        "/_search/scroll".into(),
        none,
        None,
        Expect::Status,
    )?;
    let mut body = spec.body.clone();
    if let Some(o) = body.as_object_mut() {
        o.remove("search_after");
    }
    let mut body_prefix = body.to_string();
    body_prefix.pop();
    Ok(PagedSearch {
        paging,
        first,
        next,
        clear,
        body_prefix,
    })
}

impl ElasticsearchClient {
    pub(super) async fn paged(&mut self, p: &PagedSearch) -> Result<Outcome, OpError> {
        let mut scroll_id: Option<String> = None;
        let result = self.pages(p, &mut scroll_id).await;
        if let Some(id) = scroll_id {
            // Clearing is housekeeping: a failure here does not undo the pages read.
            let host = self.next_host();
            let body = json!({ "scroll_id": [id] }).to_string();
            let _ = self.send(&p.clear, host, Some(body.as_bytes())).await;
        }
        result
    }

    async fn pages(
        &mut self,
        p: &PagedSearch,
        scroll_id: &mut Option<String>,
    ) -> Result<Outcome, OpError> {
        let per_page = p.paging.per_page;
        let (mut pages, mut total) = (0u64, 0u64);
        let mut last_sort = String::new();
        loop {
            let call = if pages == 0 { &p.first } else { &p.next };
            let body = match (pages, p.paging.by) {
                (0, _) => None,
                (_, PageBy::Scroll) => Some(json!({ "scroll": KEEP_ALIVE, "scroll_id": scroll_id.as_deref().unwrap_or_default() }).to_string()),
                (_, PageBy::SearchAfter) => Some(p.search_after_body(&last_sort)),
            };
            let host = self.next_host();
            let answer = self
                .send(call, host, body.as_deref().map(str::as_bytes))
                .await?;
            let page = response::page(self.body(&answer)).ok_or_else(|| {
                OpError::new(
                    ErrorKind::Protocol,
                    format!("{}: the response is not a search response", call.label),
                )
            })?;
            if pages == 0 {
                total = page.total.unwrap_or(0);
            }
            pages += 1;
            if p.paging.by == PageBy::Scroll {
                match page.scroll_id {
                    Some(id) => *scroll_id = Some(id),
                    None if scroll_id.is_none() => {
                        return Err(OpError::new(
                            ErrorKind::Protocol,
                            format!("{}: the response has no _scroll_id", call.label),
                        ))
                    }
                    None => {}
                }
            }
            if page.hits < per_page || p.paging.pages.is_some_and(|max| pages >= max) {
                break;
            }
            match (p.paging.by, page.last_sort) {
                (PageBy::SearchAfter, Some(sort)) => last_sort = sort.to_string(),
                (PageBy::SearchAfter, None) => {
                    return Err(OpError::new(
                        ErrorKind::Protocol,
                        format!(
                            "{}: hits carry no `sort` values to continue from",
                            call.label
                        ),
                    ))
                }
                (PageBy::Scroll, _) => {}
            }
        }
        Ok(Outcome {
            units: pages,
            hits: total,
            ..Outcome::default()
        })
    }
}

impl PagedSearch {
    /// The body of the page after one whose last hit sorted as `sort` (JSON).
    fn search_after_body(&self, sort: &str) -> String {
        let sep = if self.body_prefix.len() > 1 { "," } else { "" };
        format!("{}{sep}\"search_after\":{sort}}}", self.body_prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::SearchSpec;

    #[test]
    fn search_after_bodies_replace_any_earlier_cursor() {
        let hosts = vec![reqwest::Url::parse("http://a:9200/").unwrap()];
        let b = CallBuilder {
            hosts: &hosts,
            fixed: crate::backend::elasticsearch::request::Fixed::default(),
        };
        let spec = SearchSpec {
            index: "i".into(),
            body: json!({"size": 2, "sort": ["_doc"], "search_after": [0]}),
            request_params: vec![],
            paging: None,
            bound: None,
        };
        let paging = Paging {
            by: PageBy::SearchAfter,
            pages: None,
            per_page: 2,
        };
        let p = build(&b, &spec, paging, "/i/_search").unwrap();
        let next: serde_json::Value =
            serde_json::from_str(&p.search_after_body("[7,\"x\"]")).unwrap();
        assert_eq!(
            next,
            json!({"size": 2, "sort": ["_doc"], "search_after": [7, "x"]})
        );
        let scroll = build(
            &b,
            &spec,
            Paging {
                by: PageBy::Scroll,
                pages: Some(3),
                per_page: 2,
            },
            "/i/_search",
        )
        .unwrap();
        assert_eq!(
            scroll.first.urls[0].as_str(),
            "http://a:9200/i/_search?sort=_doc&scroll=10s&size=2",
            "as Rally's scroll runner asks the first page"
        );
        assert_eq!(scroll.next.urls[0].as_str(), "http://a:9200/_search/scroll");
    }
}
