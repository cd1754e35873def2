//! Operations as HTTP calls, built once per task: method, URL per host, body, and what the
//! response must show for the call to count as a success.

use crate::ops::{query_string, HealthStatus, OpSpec};
use bytes::Bytes;
use reqwest::{Method, Url};
use std::time::Duration;

/// Admin calls that legitimately take long (force-merge, waiting for health) get this
/// timeout instead of the per-request one, as Rally's admin operations do.
pub const ADMIN_TIMEOUT: Duration = Duration::from_secs(2 * 60 * 60);

/// What decides a call's outcome beyond its HTTP status.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Expect {
    /// Any 2xx/3xx.
    Status,
    /// Any 2xx/3xx, or this status (a delete's 404).
    StatusOr(crate::ops::StatusSet),
    /// A search: count `hits.total`.
    Search,
    /// A bulk request: item failures inside a 200 are errors.
    Bulk,
    /// Cluster health at least this colour.
    Health(Option<HealthStatus>),
}

pub struct HttpCall {
    pub method: Method,
    /// The same request on each host, in host order.
    pub urls: Vec<Url>,
    /// Per host: the request line and headers, up to where a body's length goes.
    heads: Vec<Bytes>,
    /// Per host: the whole request with its fixed body (compressed once, if asked) or with
    /// no body, written as it is on every call.
    whole: Vec<Bytes>,
    /// Fixed body; bulk calls take theirs from each call's documents.
    pub body: Option<Bytes>,
    pub timeout: Option<Duration>,
    pub expect: Expect,
    /// Sent again until its answer says a condition holds (Rally's `wait-for-*`).
    pub poll: Option<crate::ops::poll::Poll>,
    /// Sent only when the HEAD before it found its target (Rally's `only-if-exists`).
    pub if_found: bool,
    /// A wildcard delete: `action.destructive_requires_name` lifted around the operation.
    pub destructive: bool,
    /// Pages in all, each after the first sent with the answer's `cursor` (Rally's sql).
    pub cursor_pages: u64,
    /// `GET /index/_doc/1`, for messages.
    pub label: String,
}

/// Only the label: the built requests carry the credentials.
impl std::fmt::Debug for HttpCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpCall")
            .field("label", &self.label)
            .finish()
    }
}

impl HttpCall {
    /// The request to host `host` with its fixed body, ready to write.
    pub fn fixed(&self, host: usize) -> &[u8] {
        &self.whole[host]
    }

    /// Appends the request head to host `host` for a body of `len` bytes.
    pub fn head_for(&self, host: usize, len: usize, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.heads[host]);
        out.extend_from_slice(b"content-length: ");
        let mut digits = [0u8; 20];
        out.extend_from_slice(crate::units::decimal_bytes(&mut digits, len as u64));
        out.extend_from_slice(b"\r\n\r\n");
    }

    pub fn is_head(&self) -> bool {
        self.method == Method::HEAD
    }
}

/// What every request carries besides its own line and body, fixed for a race.
#[derive(Clone, Copy, Default)]
pub struct Fixed<'a> {
    /// The `Authorization` header's value.
    pub auth: Option<&'a str>,
    /// Bodies go gzip-compressed.
    pub gzip: bool,
}

/// The request line and fixed headers of `method url`; with `body_headers`, also the
/// content type (and encoding) a body needs.
fn head(method: &Method, url: &Url, fixed: Fixed, content_type: Option<&str>) -> Vec<u8> {
    let mut target = url.path().to_string();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    let host = url.host_str().unwrap_or("localhost");
    let host = match url.port() {
        Some(p) => format!("{host}:{p}"),
        None => host.to_string(),
    };
    let mut h = format!(
        "{method} {target} HTTP/1.1\r\nhost: {host}\r\nuser-agent: runner/{}\r\n",
        env!("CARGO_PKG_VERSION")
    );
    if let Some(auth) = fixed.auth {
        h.push_str(&format!("authorization: {auth}\r\n"));
    }
    if let Some(ct) = content_type {
        h.push_str(&format!("content-type: {ct}\r\n"));
        if fixed.gzip {
            h.push_str("content-encoding: gzip\r\n");
        }
    }
    h.into_bytes()
}

/// Gzip at the fastest level: the request compression Rally's `compression` option asks for.
/// One compressor per client, reset for each body, so a bulk request allocates nothing (a new
/// encoder would allocate and zero its ~256 KB of state every time).
pub struct Gzip {
    deflate: flate2::Compress,
}

impl Default for Gzip {
    fn default() -> Gzip {
        Gzip {
            deflate: flate2::Compress::new(flate2::Compression::fast(), false),
        }
    }
}

impl Gzip {
    /// `body` as a gzip member (RFC 1952) in `out`, which is cleared first.
    pub fn compress(&mut self, body: &[u8], out: &mut Vec<u8>) {
        // Magic, deflate, no flags, no time, no extra flags, unknown OS.
        out.clear();
        out.extend_from_slice(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff]);
        self.deflate.reset();
        let mut consumed = 0;
        loop {
            // Deflate's worst case is a little over the input; grown only if a body needs it.
            out.reserve(body.len() - consumed + body.len() / 1000 + 64);
            let before = self.deflate.total_in();
            let status =
                self.deflate
                    .compress_vec(&body[consumed..], out, flate2::FlushCompress::Finish);
            consumed += (self.deflate.total_in() - before) as usize;
            if matches!(status, Ok(flate2::Status::StreamEnd) | Err(_)) {
                break;
            }
        }
        let mut crc = flate2::Crc::new();
        crc.update(body);
        out.extend_from_slice(&crc.sum().to_le_bytes());
        // ISIZE: the length modulo 2^32.
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    }
}

/// A comma-joined list of index names as one path segment, escaped.
fn indices_segment(names: &[String]) -> String {
    names
        .iter()
        .map(|n| escape_segment(n))
        .collect::<Vec<_>>()
        .join(",")
}

/// Where a search of `index` goes: `/_search` for every index (`_all`, what runner makes of a
/// Rally search naming none, which Rally's runner sends to `/_search`; no catalogue track names
/// `_all` for a search), else `/<index>/_search`.
pub(super) fn search_path(index: &str) -> String {
    match index {
        "_all" => "/_search".to_string(),
        one => format!("/{}/_search", escape_segment(one)),
    }
}

/// Escapes what would change a path segment's meaning (`/`, `?`, `#`, `%`, spaces).
pub(super) fn escape_segment(s: &str) -> String {
    crate::ops::percent_encode(s, b"-_.~*,+:@")
}

pub struct CallBuilder<'a> {
    pub hosts: &'a [Url],
    pub fixed: Fixed<'a>,
}

impl CallBuilder<'_> {
    pub(super) fn call(
        &self,
        method: Method,
        path: String,
        params: &[(String, String)],
        body: Option<Bytes>,
        expect: Expect,
    ) -> Result<HttpCall, String> {
        let query = query_string(params);
        let path_and_query = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{query}")
        };
        let urls = self
            .hosts
            .iter()
            .map(|h| {
                h.join(path_and_query.trim_start_matches('/'))
                    .map_err(|e| format!("cannot build a URL for {path}: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let content_type = if expect == Expect::Bulk {
            "application/x-ndjson"
        } else {
            "application/json"
        };
        let mut heads = Vec::with_capacity(urls.len());
        let mut whole = Vec::with_capacity(urls.len());
        let mut compressed = Vec::new();
        let sent_body = match (&body, self.fixed.gzip) {
            (Some(b), true) => {
                Gzip::default().compress(b, &mut compressed);
                Some(&compressed[..])
            }
            (Some(b), false) => Some(&b[..]),
            (None, _) => None,
        };
        for url in &urls {
            let with_type = head(&method, url, self.fixed, Some(content_type));
            let full = match sent_body {
                Some(b) => {
                    let mut w = with_type.clone();
                    let mut digits = [0u8; 20];
                    w.extend_from_slice(b"content-length: ");
                    w.extend_from_slice(crate::units::decimal_bytes(&mut digits, b.len() as u64));
                    w.extend_from_slice(b"\r\n\r\n");
                    w.extend_from_slice(b);
                    w
                }
                None => {
                    let mut w = head(&method, url, self.fixed, None);
                    if method == Method::POST || method == Method::PUT {
                        w.extend_from_slice(b"content-length: 0\r\n");
                    }
                    w.extend_from_slice(b"\r\n");
                    w
                }
            };
            heads.push(Bytes::from(with_type));
            whole.push(Bytes::from(full));
        }
        Ok(HttpCall {
            label: format!("{method} {path}"),
            method,
            urls,
            heads,
            whole,
            body,
            timeout: None,
            expect,
            poll: None,
            if_found: false,
            destructive: false,
            cursor_pages: 1,
        })
    }

    fn json(v: &serde_json::Value) -> Option<Bytes> {
        // Straight into bytes: `to_string` goes through a formatter, a third slower on big bodies.
        serde_json::to_vec(v).ok().map(Bytes::from)
    }

    /// A vector search's calls: one per query vector, each call sending one.
    pub fn vector_calls(
        &self,
        spec: &crate::ops::VectorSearchSpec,
    ) -> Result<Vec<HttpCall>, String> {
        let path = format!("/{}/_search", escape_segment(&spec.index));
        (0..spec.queries.vectors.len())
            .map(|i| {
                self.call(
                    Method::POST,
                    path.clone(),
                    &[],
                    Self::json(&spec.body(i)),
                    Expect::Search,
                )
            })
            .collect()
    }

    /// The calls of one operation, run in order (create-index over two indices is two PUTs).
    /// None for operations this backend has no REST call for (key-value work).
    pub fn build(&self, op: &OpSpec) -> Result<Option<Vec<HttpCall>>, String> {
        let none: &[(String, String)] = &[];
        let calls = match op {
            OpSpec::Python(_) => return Err(crate::backend::PYTHON_RUNS_IT.into()),
            OpSpec::VectorSearch(spec) => self.vector_calls(spec)?,
            OpSpec::CreateIndex(specs) => specs
                .iter()
                .map(|s| {
                    // An index with nothing in its body is made with no body, as Rally's
                    // client sends it.
                    let empty = s.body.as_object().is_some_and(|b| b.is_empty());
                    self.call(
                        Method::PUT,
                        format!("/{}", escape_segment(&s.name)),
                        none,
                        Self::json(&s.body).filter(|_| !empty),
                        Expect::Status,
                    )
                })
                .collect::<Result<Vec<_>, _>>()?,
            OpSpec::DeleteIndex(crate::ops::DeleteIndexSpec { names, .. }) => {
                let lenient = [("ignore_unavailable".to_string(), "true".to_string())];
                vec![self.call(
                    Method::DELETE,
                    format!("/{}", indices_segment(names)),
                    &lenient,
                    None,
                    Expect::Status,
                )?]
            }
            OpSpec::Refresh {
                indices: names,
                all_in_path,
            } => vec![self.call(
                Method::POST,
                // Every index as Rally's client asks for it: `/_refresh`.
                match names.as_slice() {
                    [all] if all == "_all" && !all_in_path => "/_refresh".to_string(),
                    _ => format!("/{}/_refresh", indices_segment(names)),
                },
                none,
                None,
                Expect::Status,
            )?],
            // A polled merge is prepared apart (`tasks`); this is the blocking one.
            OpSpec::ForceMerge {
                indices,
                max_num_segments,
                poll: _,
            } => vec![self.force_merge(indices, *max_num_segments, &[])?],
            OpSpec::ClusterHealth(spec) => vec![self.cluster_health(spec)?],
            OpSpec::Bulk(spec) => vec![self.bulk(spec)?],
            OpSpec::Search(spec) => vec![self.search(spec, Self::json(&spec.body))?],
            OpSpec::GetDocument { index, id } => {
                vec![self.call(
                    Method::GET,
                    format!("/{}/_doc/{}", escape_segment(index), escape_segment(id)),
                    none,
                    None,
                    Expect::Status,
                )?]
            }
            OpSpec::IndexDocument { index, id, body } => {
                let (method, path) = match id {
                    Some(id) => (
                        Method::PUT,
                        format!("/{}/_doc/{}", escape_segment(index), escape_segment(id)),
                    ),
                    None => (Method::POST, format!("/{}/_doc", escape_segment(index))),
                };
                vec![self.call(method, path, none, Self::json(body), Expect::Status)?]
            }
            OpSpec::RawRequest(spec) => self.raw_requests(spec)?,
            OpSpec::Sleep(_) => Vec::new(),
            OpSpec::Kv(_) => return Ok(None),
        };
        Ok(Some(calls))
    }

    /// A search's call: Rally's and OSB's search runner, a GET with the body.
    pub(super) fn search(
        &self,
        spec: &crate::ops::SearchSpec,
        body: Option<Bytes>,
    ) -> Result<HttpCall, String> {
        self.call(
            Method::GET,
            search_path(&spec.index),
            &spec.request_params,
            body,
            Expect::Search,
        )
    }

    /// `_forcemerge`, with the admin timeout (a merge takes long).
    /// A bulk's call. Action lines that name the index (a corpus's own, a Python-drawn
    /// body, Rally's) go to `/_bulk`, with PUT as Rally's client sends it, POST as
    /// opensearch-py sends OSB's.
    fn bulk(&self, spec: &crate::ops::BulkSpec) -> Result<HttpCall, String> {
        let (method, path) = match spec.action_lines {
            crate::ops::ActionLines::Osb => (Method::POST, "/_bulk".to_string()),
            crate::ops::ActionLines::Rally => (Method::PUT, "/_bulk".to_string()),
            crate::ops::ActionLines::Plain if spec.index.is_empty() => {
                (Method::PUT, "/_bulk".to_string())
            }
            crate::ops::ActionLines::Plain => (
                Method::POST,
                format!("/{}/_bulk", escape_segment(&spec.index)),
            ),
        };
        let pipeline: Vec<(String, String)> = spec
            .pipeline
            .iter()
            .map(|p| ("pipeline".to_string(), p.clone()))
            .collect();
        self.call(method, path, &pipeline, None, Expect::Bulk)
    }

    pub(super) fn force_merge(
        &self,
        indices: &[String],
        max_num_segments: Option<i64>,
        more: &[(String, String)],
    ) -> Result<HttpCall, String> {
        let params: Vec<(String, String)> = max_num_segments
            .iter()
            .map(|n| ("max_num_segments".to_string(), n.to_string()))
            .chain(more.iter().cloned())
            .collect();
        let mut call = self.call(
            Method::POST,
            format!("/{}/_forcemerge", indices_segment(indices)),
            &params,
            None,
            Expect::Status,
        )?;
        call.timeout = Some(ADMIN_TIMEOUT);
        Ok(call)
    }

    /// `_cluster/health`, waiting for the status asked, with the admin timeout.
    fn cluster_health(&self, spec: &crate::ops::ClusterHealthSpec) -> Result<HttpCall, String> {
        let path = match &spec.index {
            Some(i) => format!("/_cluster/health/{}", escape_segment(i)),
            None => "/_cluster/health".to_string(),
        };
        let mut params = spec.request_params.clone();
        if let Some(status) = spec.wait_for_status {
            if !params.iter().any(|(k, _)| k == "wait_for_status") {
                params.push(("wait_for_status".into(), status.as_str().into()));
            }
        }
        let mut call = self.call(
            Method::GET,
            path,
            &params,
            None,
            Expect::Health(spec.wait_for_status),
        )?;
        call.timeout = Some(ADMIN_TIMEOUT);
        Ok(call)
    }

    /// A raw request's calls in order; the statuses it ignores are not errors.
    fn raw_requests(&self, spec: &crate::ops::RawRequestSpec) -> Result<Vec<HttpCall>, String> {
        let expect = if spec.ignore_status.is_empty() {
            Expect::Status
        } else {
            Expect::StatusOr(spec.ignore_status)
        };
        spec.requests
            .iter()
            .map(|r| {
                let method = Method::from_bytes(r.method.as_bytes()).map_err(|e| e.to_string())?;
                let mut call = self.call(
                    method,
                    r.path.clone(),
                    &r.request_params,
                    r.body.as_ref().and_then(Self::json),
                    expect,
                )?;
                call.poll = r.poll;
                call.if_found = r.if_found;
                call.destructive = r.destructive;
                call.cursor_pages = r.cursor_pages;
                Ok::<_, String>(call)
            })
            .collect::<Result<Vec<_>, _>>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{ClusterHealthSpec, SearchSpec};

    #[test]
    fn builds_urls_per_host_with_escaped_segments_and_params() {
        let hosts = vec![
            Url::parse("http://a:9200/").unwrap(),
            Url::parse("https://b:9201/prefix/").unwrap(),
        ];
        let b = CallBuilder {
            hosts: &hosts,
            fixed: Fixed::default(),
        };
        let search = OpSpec::Search(SearchSpec {
            index: "geo names".into(),
            body: serde_json::json!({"query": {"match_all": {}}}),
            request_params: vec![("request_cache".into(), "false".into())],
            paging: None,
            bound: None,
        });
        let calls = b.build(&search).unwrap().unwrap();
        assert_eq!(
            calls[0].urls[0].as_str(),
            "http://a:9200/geo%20names/_search?request_cache=false"
        );
        assert_eq!(
            calls[0].urls[1].as_str(),
            "https://b:9201/prefix/geo%20names/_search?request_cache=false"
        );
        assert_eq!(calls[0].expect, Expect::Search);
        let health = OpSpec::ClusterHealth(ClusterHealthSpec {
            index: None,
            wait_for_status: Some(HealthStatus::Green),
            request_params: vec![],
        });
        let calls = b.build(&health).unwrap().unwrap();
        assert_eq!(
            calls[0].urls[0].as_str(),
            "http://a:9200/_cluster/health?wait_for_status=green"
        );
        let delete = OpSpec::DeleteIndex(crate::ops::DeleteIndexSpec {
            names: vec!["a".into(), "b".into()],
            only_if_exists: None,
            lift_destructive: true,
        });
        assert_eq!(
            b.build(&delete).unwrap().unwrap()[0].urls[0].as_str(),
            "http://a:9200/a,b?ignore_unavailable=true"
        );
    }
}
