//! The elasticsearch backend: Elasticsearch or OpenSearch (or `runner serve`) over its REST
//! API. Each driver client owns one HTTP/1.1 keep-alive connection per host, never shared,
//! with requests built once per task (`connection`, `wire`); requests go round-robin over the
//! hosts. reqwest serves what is not measured: the connection check and `Admin`.
//! Credentials come from `RUNNER_ES_USERNAME`/`RUNNER_ES_PASSWORD` or `RUNNER_ES_API_KEY`
//! and are never stored.

mod connection;
mod paged;
mod request;
pub(crate) mod response;
mod wire;

use super::{
    status_error, Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload,
};
use crate::backend::net::Deadline;
use crate::backend::tls::TlsOptions;
use crate::backend::ClientOptions;
use crate::ops::{HealthStatus, OpSpec};
use bytes::Bytes;
use connection::{Connection, Endpoint};
use request::{CallBuilder, Expect, HttpCall};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE};
use reqwest::Url;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub const DEFAULT_HOST: &str = "http://127.0.0.1:9200";

pub struct Settings {
    hosts: Vec<Url>,
    timeout: Duration,
    gzip: bool,
    tls: TlsOptions,
    tls_config: rustls::ClientConfig,
    /// `Authorization` header value, built once; marked sensitive so it is never logged.
    auth: Option<HeaderValue>,
    /// The same value for the requests of operations, which are built once per task.
    auth_line: Option<String>,
    /// Where each host is, for the operations' own connections.
    endpoints: Arc<[Endpoint]>,
    auth_kind: &'static str,
    next_client: AtomicUsize,
}

fn parse_host(h: &str) -> Result<Url, String> {
    let with_scheme = if h.contains("://") {
        h.to_string()
    } else {
        format!("http://{h}")
    };
    let shown = super::masked_host(h);
    let mut url = Url::parse(&with_scheme).map_err(|e| {
        format!("--target-hosts: `{shown}` is not a URL such as http://127.0.0.1:9200 ({e})")
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!(
            "--target-hosts: `{shown}` must be http:// or https://"
        ));
    }
    if url.query().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(format!("--target-hosts: `{}` must not carry credentials or a query; credentials come from RUNNER_ES_USERNAME/RUNNER_ES_PASSWORD or RUNNER_ES_API_KEY", url.host_str().unwrap_or(h)));
    }
    if url.port().is_none() && !h.contains("://") {
        let _ = url.set_port(Some(9200));
    }
    // A trailing slash makes relative joins keep a path prefix (a proxy's /es/).
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    Ok(url)
}

fn basic_auth(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

impl Settings {
    /// Hosts and client options; credentials from the environment.
    pub fn new(hosts: Vec<String>, mut options: ClientOptions) -> Result<Settings, String> {
        let hosts = if hosts.is_empty() {
            vec![DEFAULT_HOST.to_string()]
        } else {
            hosts
        };
        let hosts = hosts
            .iter()
            .map(|h| parse_host(h))
            .collect::<Result<Vec<_>, _>>()?;
        let tls = TlsOptions {
            verify: options.bool("verify_certs")?.unwrap_or(true),
            ca_file: options.string("tls_ca_file").map(Into::into),
            cert_file: options.string("tls_cert_file").map(Into::into),
            key_file: options.string("tls_key_file").map(Into::into),
            server_name: None,
        };
        let timeout = options.secs("timeout")?.unwrap_or(Duration::from_secs(60));
        let gzip = options.bool("compression")?.unwrap_or(false);
        options.finish("elasticsearch")?;
        let mut tls_config = (*crate::backend::tls::client_config(&tls)?).clone();
        tls_config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let secret = |k: &str| options.credentials.get(k);
        let (auth, auth_kind) = match (
            secret("RUNNER_ES_API_KEY"),
            secret("RUNNER_ES_USERNAME"),
            secret("RUNNER_ES_PASSWORD"),
        ) {
            (Some(key), _, _) => (Some(format!("ApiKey {key}")), "api-key"),
            (None, Some(user), Some(password)) => (Some(basic_auth(&user, &password)), "basic"),
            (None, Some(_), None) => {
                return Err("RUNNER_ES_USERNAME is set but RUNNER_ES_PASSWORD is not".into())
            }
            (None, None, Some(_)) => {
                return Err("RUNNER_ES_PASSWORD is set but RUNNER_ES_USERNAME is not".into())
            }
            (None, None, None) => (None, "none"),
        };
        let auth_line = auth.clone();
        let auth = match auth {
            Some(v) => {
                let mut v = HeaderValue::from_str(&v).map_err(|_| {
                    "the credentials in RUNNER_ES_* hold characters an HTTP header cannot carry"
                        .to_string()
                })?;
                v.set_sensitive(true);
                Some(v)
            }
            None => None,
        };
        let shared_tls = Arc::new(tls_config.clone());
        let endpoints = hosts
            .iter()
            .map(|h| Endpoint::new(h, &shared_tls, &tls))
            .collect::<Result<Vec<_>, _>>()?
            .into();
        Ok(Settings {
            hosts,
            timeout,
            gzip,
            tls,
            tls_config,
            auth,
            auth_line,
            endpoints,
            auth_kind,
            next_client: AtomicUsize::new(0),
        })
    }

    fn http_client(&self) -> Result<reqwest::Client, OpError> {
        let mut headers = HeaderMap::new();
        if let Some(auth) = &self.auth {
            headers.insert(AUTHORIZATION, auth.clone());
        }
        reqwest::Client::builder()
            .http1_only()
            .redirect(reqwest::redirect::Policy::none())
            .pool_max_idle_per_host(1)
            // Below the idle timeouts of servers (runner serve's 60 s, nginx's 75 s), so that a
            // pooled connection is not reused just as the server closes it.
            .pool_idle_timeout(Duration::from_secs(30))
            .tcp_nodelay(true)
            .timeout(self.timeout)
            .connect_timeout(self.timeout.min(Duration::from_secs(10)))
            .default_headers(headers)
            .tls_backend_preconfigured(self.tls_config.clone())
            .build()
            .map_err(|e| {
                OpError::new(
                    ErrorKind::Internal,
                    format!("cannot build the HTTP client: {e}"),
                )
            })
    }
}

/// Plain requests to the first host with the backend's TLS, timeout and credentials, for
/// what is not an operation of a race (`runner export`).
pub struct Admin {
    http: reqwest::Client,
    base: Url,
}

impl Admin {
    pub fn new(hosts: Vec<String>, options: ClientOptions) -> Result<Admin, String> {
        Admin::of(&Settings::new(hosts, options)?)
    }

    fn of(settings: &Settings) -> Result<Admin, String> {
        let http = settings.http_client().map_err(|e| e.message)?;
        Ok(Admin {
            http,
            base: settings.hosts[0].clone(),
        })
    }

    pub fn host(&self) -> String {
        crate::backend::masked_host(self.base.as_str())
    }

    /// `method path` with an optional JSON or NDJSON body: the status and the body (bounded).
    pub async fn request(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<(Vec<u8>, &'static str)>,
    ) -> Result<(u16, Bytes), String> {
        let url = self
            .base
            .join(path.trim_start_matches('/'))
            .map_err(|e| format!("{path}: {e}"))?;
        let mut request = self.http.request(method.clone(), url.clone());
        if let Some((body, content_type)) = body {
            request = request
                .header(CONTENT_TYPE, HeaderValue::from_static(content_type))
                .body(body);
        }
        let label = format!("{method} {path}");
        let response = request
            .send()
            .await
            .map_err(|e| transport_error(&label, &url, &e).message)?;
        let status = response.status().as_u16();
        let bytes = read_body(response, &label, &url)
            .await
            .map_err(|e| e.message)?;
        Ok((status, bytes))
    }
}

/// A transport failure as an error kind and a message with the causes (the useful part is
/// usually a cause: "connection refused", "invalid peer certificate").
fn transport_error(label: &str, url: &Url, e: &reqwest::Error) -> OpError {
    let mut chain = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        let text = s.to_string();
        if !chain.contains(&text) {
            chain.push_str(": ");
            chain.push_str(&text);
        }
        source = s.source();
    }
    let host = url.host_str().unwrap_or("?");
    let port = url.port_or_known_default().unwrap_or(0);
    let lower = chain.to_ascii_lowercase();
    let broken = [
        "end of file",
        "incomplete",
        "connection closed",
        "reset by peer",
        "broken pipe",
    ]
    .iter()
    .any(|p| lower.contains(p));
    let kind = if e.is_timeout() {
        ErrorKind::Timeout
    } else if broken {
        ErrorKind::Connection
    } else if lower.contains("invalid http")
        || lower.contains("invalid status")
        || lower.contains("invalid header")
        || lower.contains("parse")
    {
        ErrorKind::Protocol
    } else if e.is_decode() {
        ErrorKind::Protocol
    } else {
        ErrorKind::Connection
    };
    let hint =
        if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
            " (TLS failed: see the tls_ca_file and verify_certs client options)"
        } else if lower.contains("refused") {
            " (is the cluster running? name it with --target-hosts)"
        } else if broken {
            " (the server closed the connection)"
        } else {
            ""
        };
    OpError::new(kind, format!("{label} on {host}:{port}: {chain}{hint}"))
}

pub struct ElasticsearchBackend {
    settings: Arc<Settings>,
    info: BackendInfo,
    /// Reads `_nodes/stats` around each trial.
    admin: Admin,
}

impl ElasticsearchBackend {
    /// Checks each host (GET / and cluster health) before anything is measured, and says
    /// clearly when a host cannot be reached or refuses the credentials.
    pub async fn connect_checked(settings: Settings) -> Result<ElasticsearchBackend, OpError> {
        let settings = Arc::new(settings);
        let client = settings.http_client()?;
        let mut details = serde_json::Map::new();
        let mut version = String::new();
        for host in &settings.hosts {
            let root = fetch_json(&client, host, "", settings.auth_kind).await?;
            let number = root
                .pointer("/version/number")
                .and_then(|v| v.as_str())
                .unwrap_or("unknown");
            let distribution = root
                .pointer("/version/distribution")
                .and_then(|v| v.as_str())
                .unwrap_or("elasticsearch");
            version = format!("{distribution} {number}");
            let health = fetch_json(&client, host, "_cluster/health", settings.auth_kind).await?;
            details.insert(
                "cluster_name".into(),
                root.get("cluster_name").cloned().unwrap_or_default(),
            );
            details.insert(
                "health_at_start".into(),
                health.get("status").cloned().unwrap_or_default(),
            );
            if let Some(flavor) = root.pointer("/version/build_flavor") {
                details.insert("build_flavor".into(), flavor.clone());
            }
        }
        // Hosts without any credentials part (URLs refuse them): safe to store.
        let hosts: Vec<serde_json::Value> = settings
            .hosts
            .iter()
            .map(|h| h.as_str().trim_end_matches('/').into())
            .collect();
        details.insert("hosts".into(), hosts.into());
        details.insert("auth".into(), settings.auth_kind.into());
        details.insert(
            "request_compression".into(),
            if settings.gzip { "gzip" } else { "none" }.into(),
        );
        if settings.hosts.iter().any(|h| h.scheme() == "https") {
            details.insert("verify_certs".into(), settings.tls.verify.into());
        }
        let admin = Admin::of(&settings).map_err(|m| OpError::new(ErrorKind::Internal, m))?;
        Ok(ElasticsearchBackend {
            settings,
            admin,
            info: BackendInfo {
                kind: "elasticsearch".into(),
                version,
                details,
            },
        })
    }
}

async fn fetch_json(
    client: &reqwest::Client,
    host: &Url,
    path: &str,
    auth: &str,
) -> Result<serde_json::Value, OpError> {
    let url = host
        .join(path)
        .map_err(|e| OpError::new(ErrorKind::BadRequest, e.to_string()))?;
    let shown = url.as_str().to_string();
    let response = client.get(url.clone()).send().await.map_err(|e| {
        let mut err = transport_error("GET", &url, &e);
        err.message = format!("cannot reach the cluster at {shown}: {}", err.message);
        err
    })?;
    let status = response.status().as_u16();
    let body = read_body(response, "GET", &url).await?;
    if let Some(kind) = status_error(status) {
        let hint = match (kind, auth) {
            (ErrorKind::Unauthorized, "none") => " (the cluster wants credentials: set RUNNER_ES_USERNAME and RUNNER_ES_PASSWORD, or RUNNER_ES_API_KEY)",
            (ErrorKind::Unauthorized, _) => " (check the credentials in RUNNER_ES_USERNAME/RUNNER_ES_PASSWORD or RUNNER_ES_API_KEY)",
            _ => "",
        };
        return Err(OpError::new(
            kind,
            format!(
                "GET {shown} answered {status}: {}{hint}",
                response::error_summary(&body)
            ),
        ));
    }
    serde_json::from_slice(&body).map_err(|_| {
        OpError::new(
            ErrorKind::Protocol,
            format!("GET {shown} did not answer JSON (is it Elasticsearch or OpenSearch?)"),
        )
    })
}

/// The most bytes one response may hold: a bulk reply of 100,000 items or a page of 10,000
/// hits is far below; an endless body stops here, not at the memory limit.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// A response's body, at most [`MAX_RESPONSE_BYTES`] whatever the server declares or streams.
async fn read_body(
    mut response: reqwest::Response,
    label: &str,
    url: &Url,
) -> Result<Bytes, OpError> {
    let too_long = |n: u64| {
        OpError::new(ErrorKind::Protocol, format!("{label}: {} answered a body of {n} bytes or more, past the {MAX_RESPONSE_BYTES}-byte limit", url.as_str()))
    };
    if let Some(n) = response
        .content_length()
        .filter(|n| *n > MAX_RESPONSE_BYTES as u64)
    {
        return Err(too_long(n));
    }
    let Some(first) = response
        .chunk()
        .await
        .map_err(|e| transport_error(label, url, &e))?
    else {
        return Ok(Bytes::new());
    };
    let Some(second) = response
        .chunk()
        .await
        .map_err(|e| transport_error(label, url, &e))?
    else {
        return Ok(first);
    };
    let mut body = bytes::BytesMut::with_capacity(first.len() + second.len());
    body.extend_from_slice(&first);
    body.extend_from_slice(&second);
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_error(label, url, &e))?
    {
        if body.len() + chunk.len() > MAX_RESPONSE_BYTES {
            return Err(too_long((body.len() + chunk.len()) as u64));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

/// What a client runs per call.
pub enum Prepared {
    Calls(Vec<HttpCall>),
    Paged(Box<paged::PagedSearch>),
}

const DOCUMENTS_ONLY: &str =
    "the elasticsearch backend runs document and search operations, not key-value ones";

impl Backend for ElasticsearchBackend {
    type Client = ElasticsearchClient;
    type Prepared = Prepared;

    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    async fn connect(&self) -> Result<ElasticsearchClient, OpError> {
        let first = self.settings.next_client.fetch_add(1, Ordering::Relaxed);
        let hosts = self.settings.hosts.len();
        Ok(ElasticsearchClient {
            endpoints: self.settings.endpoints.clone(),
            conns: (0..hosts).map(|_| None).collect(),
            timeout: self.settings.timeout,
            gzip: self
                .settings
                .gzip
                .then(request::Gzip::default)
                .map(Box::new),
            next_host: first % hosts,
            head: Vec::new(),
            compressed: Vec::new(),
            deadline: Deadline::default(),
            last_item_failure: None,
        })
    }

    fn cannot_run(op: &OpSpec) -> Option<String> {
        matches!(op, OpSpec::Kv(_)).then(|| DOCUMENTS_ONLY.to_string())
    }

    fn descriptors_opened_later(&self) -> u64 {
        self.settings.hosts.len() as u64
    }

    async fn server_snapshot(
        &self,
    ) -> Option<Result<crate::backend::server_stats::ServerSnapshot, String>> {
        let read = async {
            let (status, body) = self
                .admin
                .request(
                    reqwest::Method::GET,
                    "_nodes/stats/process,jvm,indices",
                    None,
                )
                .await?;
            if status >= 300 {
                return Err(format!(
                    "_nodes/stats answered {status}: {}",
                    response::error_summary(&body)
                ));
            }
            let v: serde_json::Value = serde_json::from_slice(&body)
                .map_err(|e| format!("_nodes/stats is not JSON: {e}"))?;
            Ok(crate::backend::server_stats::from_node_stats(&v))
        };
        Some(read.await)
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        let builder = CallBuilder {
            hosts: &self.settings.hosts,
            fixed: request::Fixed {
                auth: self.settings.auth_line.as_deref(),
                gzip: self.settings.gzip,
            },
        };
        if let OpSpec::Search(
            spec @ crate::ops::SearchSpec {
                paging: Some(paging),
                ..
            },
        ) = op
        {
            let path = format!("/{}/_search", request::escape_segment(&spec.index));
            return paged::build(&builder, spec, *paging, &path)
                .map(|p| Prepared::Paged(Box::new(p)))
                .map_err(|m| OpError::new(ErrorKind::BadRequest, m));
        }
        match builder.build(op) {
            Ok(Some(calls)) => Ok(Prepared::Calls(calls)),
            Ok(None) => Err(OpError::new(ErrorKind::BadRequest, DOCUMENTS_ONLY)),
            Err(m) => Err(OpError::new(ErrorKind::BadRequest, m)),
        }
    }
}

pub struct ElasticsearchClient {
    endpoints: Arc<[Endpoint]>,
    /// One keep-alive connection per host, opened on first use and after a failure.
    conns: Vec<Option<Connection>>,
    timeout: Duration,
    /// The compressor, when bodies go gzip-compressed.
    gzip: Option<Box<request::Gzip>>,
    next_host: usize,
    /// Request heads of bodies made per call (bulk, pages), reused.
    head: Vec<u8>,
    /// Compressed bodies made per call, reused.
    compressed: Vec<u8>,
    deadline: Deadline,
    last_item_failure: Option<String>,
}

/// The outcome of a bulk whose reply has `items` items, `failed` of them failed, for `docs`
/// documents sent, and why items failed: a document the reply does not account for is not
/// indexed.
fn bulk_items(
    label: &str,
    docs: u64,
    items: u64,
    failed: u64,
    reason: Option<String>,
) -> Result<(Outcome, Option<String>), OpError> {
    if items > docs {
        return Err(OpError::new(
            ErrorKind::Protocol,
            format!("{label}: the bulk response has {items} items for {docs} documents sent"),
        ));
    }
    let missing = docs - items;
    let reason = match (reason, missing) {
        (reason, 0) => reason,
        (_, missing) => Some(format!("the bulk response accounts for {items} of the {docs} documents sent: {missing} missing")),
    };
    let failed = (failed + missing).min(docs.max(1));
    let outcome = Outcome {
        units: docs.saturating_sub(failed),
        failed_items: failed,
        ..Outcome::default()
    };
    Ok((outcome, reason))
}

fn protocol(label: &str, what: &str) -> OpError {
    OpError::new(ErrorKind::Protocol, format!("{label}: {what}"))
}

/// What a successful response of `call` counts as; for bulk, also why items failed.
fn outcome(call: &HttpCall, bytes: &[u8], docs: u64) -> Result<(Outcome, Option<String>), OpError> {
    let label = &call.label;
    let one = Outcome {
        units: 1,
        ..Outcome::default()
    };
    match call.expect {
        Expect::Status => Ok((one, None)),
        Expect::Search => {
            let hits = response::search_hits(bytes)
                .ok_or_else(|| protocol(label, "the response has no hits.total"))?;
            Ok((Outcome { hits, ..one }, None))
        }
        Expect::Bulk => match response::bulk_has_errors(bytes) {
            Some(false) => {
                let items = response::bulk_item_count(bytes)
                    .ok_or_else(|| protocol(label, "the bulk response has no readable `items`"))?;
                bulk_items(label, docs, items, 0, None)
            }
            Some(true) => {
                let f = response::bulk_item_failures(bytes)
                    .ok_or_else(|| protocol(label, "errors:true but no readable items"))?;
                // errors:true promises a failed item even when none can be read.
                bulk_items(label, docs, f.items, f.failed.max(1), f.first_reason)
            }
            None => Err(protocol(
                label,
                "the response is not a bulk response (no `errors` flag)",
            )),
        },
        Expect::Health(wanted) => {
            let v: serde_json::Value = serde_json::from_slice(bytes)
                .map_err(|_| protocol(label, "the response is not JSON"))?;
            let got = v
                .get("status")
                .and_then(|s| s.as_str())
                .and_then(HealthStatus::parse);
            match (wanted, got) {
                (_, None) => Err(protocol(label, "the response has no status")),
                (Some(w), Some(g)) if g < w => {
                    let kind = if v.get("timed_out").and_then(|t| t.as_bool()) == Some(true) {
                        ErrorKind::Timeout
                    } else {
                        ErrorKind::ServerError
                    };
                    Err(OpError::new(
                        kind,
                        format!(
                            "{label}: cluster health is {} but the task waits for {}",
                            g.as_str(),
                            w.as_str()
                        ),
                    ))
                }
                _ => Ok((one, None)),
            }
        }
    }
}

/// A response of one call: the host it came from and where its body is.
pub(super) struct Answer {
    host: usize,
    response: connection::Response,
}

impl ElasticsearchClient {
    /// The host of the next call (requests go round-robin).
    fn next_host(&mut self) -> usize {
        let host = self.next_host;
        self.next_host = (self.next_host + 1) % self.endpoints.len();
        host
    }

    fn body(&self, answer: &Answer) -> &[u8] {
        match &self.conns[answer.host] {
            Some(c) => c.body(&answer.response),
            None => &[],
        }
    }

    async fn run(&mut self, call: &HttpCall, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let host = self.next_host();
        let answer = match (call.expect, payload) {
            // The feeder wrote the whole body, action lines included: it goes to the socket
            // from the feeder's buffer.
            (Expect::Bulk, Payload::Documents { body, count, .. }) => {
                let answer = self.send(call, host, Some(body.as_bytes())).await?;
                return self.finish(call, &answer, *count);
            }
            (Expect::Bulk, _) => {
                return Err(OpError::new(ErrorKind::Internal, "bulk without documents"))
            }
            _ => self.send(call, host, None).await?,
        };
        self.finish(call, &answer, 0)
    }

    fn finish(&mut self, call: &HttpCall, answer: &Answer, docs: u64) -> Result<Outcome, OpError> {
        let (outcome, reason) = outcome(call, self.body(answer), docs)?;
        self.last_item_failure = reason;
        Ok(outcome)
    }

    /// Sends `call` to host `host`, with `body` made for this call or else the call's fixed
    /// one, and reads the response; a status of 400 or more is an error.
    pub(super) async fn send(
        &mut self,
        call: &HttpCall,
        host: usize,
        body: Option<&[u8]>,
    ) -> Result<Answer, OpError> {
        let Self {
            endpoints,
            conns,
            timeout,
            gzip,
            head,
            compressed,
            deadline,
            ..
        } = self;
        let endpoint = &endpoints[host];
        let slot = &mut conns[host];
        let (first, second): (&[u8], &[u8]) = match body {
            None => (call.fixed(host), &[]),
            Some(b) => {
                let b = match gzip {
                    Some(g) => {
                        g.compress(b, compressed);
                        &compressed[..]
                    }
                    None => b,
                };
                head.clear();
                call.head_for(host, b.len(), head);
                (&head[..], b)
            }
        };
        let exchange = async {
            if !slot.as_ref().is_some_and(Connection::usable) {
                *slot = None;
                *slot = Some(Connection::open(endpoint).await?);
            }
            let conn = slot.as_mut().expect("just opened");
            conn.exchange(first, second, call.is_head()).await
        };
        // Long admin calls have their own timeout; the shared deadline serves the rest.
        let limit = call.timeout.unwrap_or(*timeout);
        let result = match call.timeout {
            Some(t) => tokio::time::timeout(t, exchange).await.ok(),
            None => deadline.within(limit, exchange).await,
        };
        let response = match result {
            Some(Ok(r)) => r,
            Some(Err(failure)) => {
                *slot = None;
                return Err(failure.into_op_error(&call.label, &endpoint.addr));
            }
            None => {
                *slot = None;
                return Err(OpError::new(
                    ErrorKind::Timeout,
                    format!(
                        "{} on {}: no response within {limit:?}",
                        call.label, endpoint.addr
                    ),
                ));
            }
        };
        let answer = Answer { host, response };
        if let Some(kind) = status_error(answer.response.status) {
            return Err(OpError::new(
                kind,
                format!(
                    "{} answered {}: {}",
                    call.label,
                    answer.response.status,
                    response::error_summary(self.body(&answer))
                ),
            ));
        }
        Ok(answer)
    }
}

impl BackendClient for ElasticsearchClient {
    type Prepared = Prepared;

    async fn execute(&mut self, op: &Prepared, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        match op {
            Prepared::Calls(calls) => {
                let mut outcome = Outcome {
                    units: 1,
                    ..Outcome::default()
                };
                for call in calls {
                    outcome = self.run(call, payload).await?;
                }
                Ok(outcome)
            }
            Prepared::Paged(p) => self.paged(p).await,
        }
    }

    fn item_failure_reason(&mut self) -> Option<String> {
        self.last_item_failure.take()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_get_a_scheme_port_and_trailing_slash_and_refuse_credentials() {
        assert_eq!(
            parse_host("localhost").unwrap().as_str(),
            "http://localhost:9200/"
        );
        assert_eq!(
            parse_host("https://es.example:443/proxy").unwrap().as_str(),
            "https://es.example/proxy/"
        );
        assert!(parse_host("http://elastic:secret@h:9200")
            .unwrap_err()
            .contains("RUNNER_ES_USERNAME"));
        assert!(!parse_host("http://elastic:secret@h:9200")
            .unwrap_err()
            .contains("secret"));
        assert!(parse_host("ftp://h").is_err());
        // Unparsable, with a password in it: the message shows the host, never the password.
        for bad in [
            "http://elastic:s3cret@[bad",
            "ftp://u:s3cret@h",
            "u:s3cret@h:notaport",
        ] {
            let e = parse_host(bad).unwrap_err();
            assert!(!e.contains("s3cret") && e.contains("***@"), "{bad}: {e}");
        }
    }

    #[test]
    fn masked_hosts_hide_user_info_only() {
        use crate::backend::masked_host;
        assert_eq!(masked_host("redis://user:pw@h:6379"), "redis://***@h:6379");
        assert_eq!(masked_host("user:pw@h"), "***@h");
        assert_eq!(masked_host("h:9200"), "h:9200");
    }

    #[test]
    fn basic_auth_is_base64_of_user_and_password() {
        assert_eq!(
            basic_auth("elastic", "changeme"),
            "Basic ZWxhc3RpYzpjaGFuZ2VtZQ=="
        );
    }

    #[test]
    fn gzip_round_trips() {
        use std::io::Read;
        let body = b"{\"index\":{}}\n{\"a\":1}\n".repeat(100);
        let (mut out, mut compressed) = (Vec::new(), Vec::new());
        let mut gzip = request::Gzip::default();
        // Twice with one compressor: a reset leaves nothing of the first body behind.
        gzip.compress(b"something else entirely", &mut compressed);
        gzip.compress(&body, &mut compressed);
        flate2::read::GzDecoder::new(&compressed[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
    }
}
