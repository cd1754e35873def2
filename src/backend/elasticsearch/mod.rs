//! The elasticsearch backend: Elasticsearch or OpenSearch (or `runner serve`) over its REST
//! API. Each driver client owns one HTTP/1.1 keep-alive connection per host, never shared,
//! with requests built once per task (`connection`, `wire`); requests go round-robin over the
//! hosts. reqwest serves what is not measured: the connection check and `Admin`.
//! Credentials come from `RUNNER_ES_USERNAME`/`RUNNER_ES_PASSWORD` or `RUNNER_ES_API_KEY`
//! and are never stored.

mod admin;
mod client;
mod connection;
mod delete;
mod paged;
mod request;
pub(crate) mod response;
mod tasks;
mod wire;

pub use admin::Admin;
pub use client::ElasticsearchClient;

use super::{Backend, BackendInfo, ErrorKind, OpError};
use crate::backend::tls::TlsOptions;
use crate::backend::ClientOptions;
use crate::ops::OpSpec;
use admin::fetch_json;
use connection::Endpoint;
use request::{CallBuilder, HttpCall};
use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION};
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

/// A host as a URL: `http://` unless it names its scheme, or Rally's `use_ssl` is on.
fn parse_host(h: &str, use_ssl: bool) -> Result<Url, String> {
    let with_scheme = match (h.contains("://"), use_ssl) {
        (true, _) => h.to_string(),
        (false, true) => format!("https://{h}"),
        (false, false) => format!("http://{h}"),
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

/// TLS as Rally's client options set it (`verify_certs`, `ca_certs`, `client_cert`,
/// `client_key`), or runner's older names for the same (`tls_ca_file`, ...).
fn tls_options(options: &mut ClientOptions) -> Result<TlsOptions, String> {
    let tls = TlsOptions {
        verify: options.bool("verify_certs")?.unwrap_or(true),
        ca_file: options.either("ca_certs", "tls_ca_file")?.map(Into::into),
        cert_file: options
            .either("client_cert", "tls_cert_file")?
            .map(Into::into),
        key_file: options
            .either("client_key", "tls_key_file")?
            .map(Into::into),
        server_name: None,
    };
    match (&tls.cert_file, &tls.key_file) {
        (Some(_), None) => Err("client option `client_cert` is given without `client_key`; a client certificate needs both".into()),
        (None, Some(_)) => Err("client option `client_key` is given without `client_cert`; a client certificate needs both".into()),
        _ => Ok(tls),
    }
}

/// `http_compress` (Rally), `compressed` (Rally's deprecated name) or `compression` (ours).
fn compression(options: &mut ClientOptions) -> Result<bool, String> {
    let deprecated = options.bool("compressed")?;
    if deprecated.is_some() {
        eprintln!(
            "note: client option `compressed` is deprecated (as in Rally); use `http_compress`"
        );
    }
    let given =
        match (options.bool("http_compress")?, options.bool("compression")?) {
            (Some(_), Some(_)) => return Err(
                "client options `http_compress` and `compression` name the same setting; give one"
                    .into(),
            ),
            (a, b) => a.or(b),
        };
    Ok(given.or(deprecated).unwrap_or(false))
}

/// Rally's own client options: those that change nothing here are read (and their values
/// checked); those runner cannot do are refused, saying what to use instead.
fn rally_options_without_effect(options: &mut ClientOptions) -> Result<(), String> {
    // Each of Rally's clients has its own pool of at least 256 connections and uses one at a
    // time; runner's clients hold one connection each, the same.
    options.count("max_connections")?;
    // aiohttp's cleanup of half-closed TLS connections; hyper closes its connections itself.
    options.bool("enable_cleanup_closed")?;
    // A warning of the Python client; runner prints none.
    options.bool("ssl_show_warn")?;
    if options.string("static_responses").is_some() {
        return Err("client option `static_responses` is not run: runner's client always sends its requests; race `runner serve --stub` (answers _search and _bulk without work) to measure the driver alone".into());
    }
    if options.bool("create_api_key_per_client")? == Some(true) {
        return Err("client option `create_api_key_per_client` is not run: runner does not create API keys; give one key (api_key, or RUNNER_ES_API_KEY) that every client uses".into());
    }
    Ok(())
}

/// The hosts a Rally user names and the Python client takes; the Rust client parses the same.
pub fn host_urls(hosts: &[String], use_ssl: bool) -> Result<Vec<String>, String> {
    let hosts = if hosts.is_empty() {
        vec![DEFAULT_HOST.to_string()]
    } else {
        hosts.to_vec()
    };
    hosts
        .iter()
        .map(|h| parse_host(h, use_ssl).map(|u| u.as_str().trim_end_matches('/').to_string()))
        .collect()
}

fn basic_auth(user: &str, password: &str) -> String {
    use base64::Engine as _;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"))
    )
}

impl Settings {
    /// Hosts and client options (Rally's names, or runner's older ones); credentials from the
    /// options, the environment or the credentials file.
    pub fn new(hosts: Vec<String>, mut options: ClientOptions) -> Result<Settings, String> {
        let use_ssl = options.bool("use_ssl")?.unwrap_or(false);
        let hosts = if hosts.is_empty() {
            vec![DEFAULT_HOST.to_string()]
        } else {
            hosts
        };
        let hosts = hosts
            .iter()
            .map(|h| parse_host(h, use_ssl))
            .collect::<Result<Vec<_>, _>>()?;
        let tls = tls_options(&mut options)?;
        // Rally's `timeout:None` is no limit; a year stands for it (a deadline must exist).
        let timeout = match options.secs_or_none("timeout")? {
            None => Duration::from_secs(60),
            Some(Some(d)) => d,
            Some(None) => Duration::from_secs(365 * 86_400),
        };
        let gzip = compression(&mut options)?;
        rally_options_without_effect(&mut options)?;
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

/// The most bytes one response may hold: a bulk reply of 100,000 items or a page of 10,000
/// hits is far below; an endless body stops here, not at the memory limit.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;

/// What a client runs per call.
pub enum Prepared {
    Calls(Vec<HttpCall>),
    /// A vector search: one call per query vector; each call sends the one its payload names.
    Vectors(Vec<HttpCall>),
    Paged(Box<paged::PagedSearch>),
    /// Rally's delete-index: its setting lifted around the deletes.
    DeleteIndices(Box<delete::DeleteSequence>),
    /// A force-merge that does not wait, its task polled until done (Rally's `polling`).
    PolledMerge(Box<tasks::PolledMerge>),
    /// Requests some of which wait on a HEAD before them, delete by wildcard, or page by
    /// cursor.
    Guarded(Box<delete::Guarded>),
}

const DOCUMENTS_ONLY: &str =
    "the elasticsearch backend runs document and search operations, not key-value ones";

impl ElasticsearchBackend {
    fn builder(&self) -> CallBuilder<'_> {
        CallBuilder {
            hosts: &self.settings.hosts,
            fixed: request::Fixed {
                auth: self.settings.auth_line.as_deref(),
                gzip: self.settings.gzip,
            },
        }
    }
}

impl Backend for ElasticsearchBackend {
    type Client = ElasticsearchClient;
    type Prepared = Prepared;

    fn info(&self) -> BackendInfo {
        self.info.clone()
    }

    async fn connect(&self) -> Result<ElasticsearchClient, OpError> {
        let first = self.settings.next_client.fetch_add(1, Ordering::Relaxed);
        Ok(ElasticsearchClient::new(&self.settings, first))
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

    /// A drawn body the conversion added nothing to is sent as the bytes Python encoded.
    fn prepare_encoded_search(
        &self,
        spec: crate::ops::SearchSpec,
        body: bytes::Bytes,
    ) -> Result<Prepared, OpError> {
        let as_drawn = spec.paging.is_none()
            && spec.bound.is_none()
            && spec.body.as_object().is_some_and(|added| added.is_empty());
        if !as_drawn {
            return self.prepare(&crate::backend::with_encoded_body(spec, &body)?);
        }
        self.builder()
            .search(&spec, Some(body))
            .map(|call| Prepared::Calls(vec![call]))
            .map_err(|m| OpError::new(ErrorKind::BadRequest, m))
    }

    fn prepare(&self, op: &OpSpec) -> Result<Prepared, OpError> {
        let builder = self.builder();
        if let OpSpec::Search(
            spec @ crate::ops::SearchSpec {
                paging: Some(paging),
                ..
            },
        ) = op
        {
            let path = request::search_path(&spec.index);
            return paged::build(&builder, spec, *paging, &path)
                .map(|p| Prepared::Paged(Box::new(p)))
                .map_err(|m| OpError::new(ErrorKind::BadRequest, m));
        }
        if let OpSpec::ForceMerge {
            indices,
            max_num_segments,
            poll: Some(period),
        } = op
        {
            return tasks::build(
                &builder,
                self.settings.clone(),
                indices,
                *max_num_segments,
                *period,
            )
            .map(|m| Prepared::PolledMerge(Box::new(m)))
            .map_err(|m| OpError::new(ErrorKind::BadRequest, m));
        }
        if let OpSpec::DeleteIndex(crate::ops::DeleteIndexSpec {
            names,
            only_if_exists: Some(only_if_exists),
            lift_destructive,
        }) = op
        {
            return delete::build(&builder, names, *only_if_exists, *lift_destructive)
                .map(|d| Prepared::DeleteIndices(Box::new(d)))
                .map_err(|m| OpError::new(ErrorKind::BadRequest, m));
        }
        match builder.build(op) {
            Ok(Some(calls)) if matches!(op, OpSpec::VectorSearch(_)) => {
                Ok(Prepared::Vectors(calls))
            }
            Ok(Some(calls))
                if calls
                    .iter()
                    .any(|c| c.if_found || c.destructive || c.cursor_pages > 1) =>
            {
                delete::guard(&builder, calls)
                    .map(|g| Prepared::Guarded(Box::new(g)))
                    .map_err(|m| OpError::new(ErrorKind::BadRequest, m))
            }
            Ok(Some(calls)) => Ok(Prepared::Calls(calls)),
            Ok(None) => Err(OpError::new(ErrorKind::BadRequest, DOCUMENTS_ONLY)),
            Err(m) => Err(OpError::new(ErrorKind::BadRequest, m)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_get_a_scheme_port_and_trailing_slash_and_refuse_credentials() {
        assert_eq!(
            parse_host("localhost", false).unwrap().as_str(),
            "http://localhost:9200/"
        );
        assert_eq!(
            parse_host("https://es.example:443/proxy", false)
                .unwrap()
                .as_str(),
            "https://es.example/proxy/"
        );
        assert!(parse_host("http://elastic:secret@h:9200", false)
            .unwrap_err()
            .contains("RUNNER_ES_USERNAME"));
        assert!(!parse_host("http://elastic:secret@h:9200", false)
            .unwrap_err()
            .contains("secret"));
        assert!(parse_host("ftp://h", false).is_err());
        // Unparsable, with a password in it: the message shows the host, never the password.
        for bad in [
            "http://elastic:s3cret@[bad",
            "ftp://u:s3cret@h",
            "u:s3cret@h:notaport",
        ] {
            let e = parse_host(bad, false).unwrap_err();
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
