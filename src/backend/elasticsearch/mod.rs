//! The elasticsearch backend: Elasticsearch or OpenSearch (or `runner serve`) over its REST
//! API with reqwest. Each driver client owns one HTTP/1.1 keep-alive client, so connections
//! are reused per client and never shared; requests go round-robin over the hosts.
//! Credentials come from `RUNNER_ES_USERNAME`/`RUNNER_ES_PASSWORD` or `RUNNER_ES_API_KEY`
//! and are never stored.

mod paged;
mod request;
pub(crate) mod response;

use super::{
    status_error, Backend, BackendClient, BackendInfo, ErrorKind, OpError, Outcome, Payload,
};
use crate::backend::tls::TlsOptions;
use crate::backend::ClientOptions;
use crate::ops::{HealthStatus, OpSpec};
use bytes::Bytes;
use request::{CallBuilder, Expect, HttpCall};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_ENCODING, CONTENT_TYPE};
use reqwest::Url;
use std::io::Write as _;
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
        Ok(Settings {
            hosts,
            timeout,
            gzip,
            tls,
            tls_config,
            auth,
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
        Ok(ElasticsearchClient {
            http: self.settings.http_client()?,
            gzip: self.settings.gzip,
            next_host: first % self.settings.hosts.len(),
            hosts: self.settings.hosts.len(),
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
    http: reqwest::Client,
    gzip: bool,
    next_host: usize,
    hosts: usize,
    last_item_failure: Option<String>,
}

fn gzip(body: &[u8]) -> Bytes {
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(body.len() / 4 + 64),
        flate2::Compression::fast(),
    );
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(body);
    Bytes::from(enc.finish().unwrap_or_default())
}

impl ElasticsearchClient {
    /// The outcome of a bulk whose reply has `items` items, `failed` of them failed, for
    /// `docs` documents sent: a document the reply does not account for is not indexed.
    fn bulk_items(
        &mut self,
        label: &str,
        docs: u64,
        items: u64,
        failed: u64,
        reason: Option<String>,
    ) -> Result<Outcome, OpError> {
        if items > docs {
            return Err(OpError::new(
                ErrorKind::Protocol,
                format!("{label}: the bulk response has {items} items for {docs} documents sent"),
            ));
        }
        let missing = docs - items;
        self.last_item_failure = match (reason, missing) {
            (reason, 0) => reason,
            (_, missing) => Some(format!("the bulk response accounts for {items} of the {docs} documents sent: {missing} missing")),
        };
        let failed = (failed + missing).min(docs.max(1));
        Ok(Outcome {
            units: docs.saturating_sub(failed),
            failed_items: failed,
            ..Outcome::default()
        })
    }

    /// The next host's URL of a call (requests go round-robin).
    fn next_url<'c>(&mut self, call: &'c HttpCall) -> &'c Url {
        let url = &call.urls[self.next_host];
        self.next_host = (self.next_host + 1) % self.hosts;
        url
    }

    async fn run(&mut self, call: &HttpCall, payload: &Payload<'_>) -> Result<Outcome, OpError> {
        let url = self.next_url(call);
        let (body, docs) = match (call.expect, payload) {
            // The feeder wrote the whole body, action lines included.
            (Expect::Bulk, Payload::Documents { body, count, .. }) => {
                (Some(Bytes::copy_from_slice(body.as_bytes())), *count)
            }
            (Expect::Bulk, _) => {
                return Err(OpError::new(ErrorKind::Internal, "bulk without documents"))
            }
            _ => (call.body.clone(), 0),
        };
        let bytes = self.send(call, url, body).await?;
        let label = &call.label;
        self.outcome(call, label, &bytes, docs)
    }

    /// Sends one request of `call` to `url` with `body`; a status of 400 or more is an error.
    async fn send(
        &self,
        call: &HttpCall,
        url: &Url,
        body: Option<Bytes>,
    ) -> Result<Bytes, OpError> {
        let mut request = self.http.request(call.method.clone(), url.clone());
        if let Some(body) = body {
            request = request.header(CONTENT_TYPE, HeaderValue::from_static(call.content_type));
            request = if self.gzip {
                request
                    .header(CONTENT_ENCODING, HeaderValue::from_static("gzip"))
                    .body(gzip(&body))
            } else {
                request.body(body)
            };
        }
        if let Some(t) = call.timeout {
            request = request.timeout(t);
        }
        let response = request
            .send()
            .await
            .map_err(|e| transport_error(&call.label, url, &e))?;
        let status = response.status().as_u16();
        let bytes = read_body(response, &call.label, url).await?;
        if let Some(kind) = status_error(status) {
            return Err(OpError::new(
                kind,
                format!(
                    "{} answered {status}: {}",
                    call.label,
                    response::error_summary(&bytes)
                ),
            ));
        }
        Ok(bytes)
    }

    fn outcome(
        &mut self,
        call: &HttpCall,
        label: &str,
        bytes: &[u8],
        docs: u64,
    ) -> Result<Outcome, OpError> {
        match call.expect {
            Expect::Status => Ok(Outcome {
                units: 1,
                ..Outcome::default()
            }),
            Expect::Search => {
                let hits = response::search_hits(bytes).ok_or_else(|| {
                    OpError::new(
                        ErrorKind::Protocol,
                        format!("{label}: the response has no hits.total"),
                    )
                })?;
                Ok(Outcome {
                    units: 1,
                    hits,
                    ..Outcome::default()
                })
            }
            Expect::Bulk => match response::bulk_has_errors(bytes) {
                Some(false) => {
                    let items = response::bulk_item_count(bytes).ok_or_else(|| {
                        OpError::new(
                            ErrorKind::Protocol,
                            format!("{label}: the bulk response has no readable `items`"),
                        )
                    })?;
                    self.bulk_items(label, docs, items, 0, None)
                }
                Some(true) => {
                    let f = response::bulk_item_failures(bytes).ok_or_else(|| {
                        OpError::new(
                            ErrorKind::Protocol,
                            format!("{label}: errors:true but no readable items"),
                        )
                    })?;
                    // errors:true promises a failed item even when none can be read.
                    let failed = f.failed.max(1);
                    self.bulk_items(label, docs, f.items, failed, f.first_reason)
                }
                None => Err(OpError::new(
                    ErrorKind::Protocol,
                    format!("{label}: the response is not a bulk response (no `errors` flag)"),
                )),
            },
            Expect::Health(wanted) => {
                let v: serde_json::Value = serde_json::from_slice(bytes).map_err(|_| {
                    OpError::new(
                        ErrorKind::Protocol,
                        format!("{label}: the response is not JSON"),
                    )
                })?;
                let got = v
                    .get("status")
                    .and_then(|s| s.as_str())
                    .and_then(HealthStatus::parse);
                match (wanted, got) {
                    (_, None) => Err(OpError::new(
                        ErrorKind::Protocol,
                        format!("{label}: the response has no status"),
                    )),
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
                    _ => Ok(Outcome {
                        units: 1,
                        ..Outcome::default()
                    }),
                }
            }
        }
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
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&gzip(&body)[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, body);
    }
}
