//! What is not measured goes through reqwest: the connection check before a race, and
//! `Admin` (telemetry around trials, `runner export`).

use super::{response, Settings, MAX_RESPONSE_BYTES};
use crate::backend::{status_error, ClientOptions, ErrorKind, OpError};
use bytes::Bytes;
use reqwest::header::{HeaderValue, CONTENT_TYPE};
use reqwest::Url;

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

    pub(super) fn of(settings: &Settings) -> Result<Admin, String> {
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
    } else if e.is_decode()
        || lower.contains("invalid http")
        || lower.contains("invalid status")
        || lower.contains("invalid header")
        || lower.contains("parse")
    {
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

pub(super) async fn fetch_json(
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
            (ErrorKind::Unauthorized, _) => " (the cluster refused the credentials: check RUNNER_ES_USERNAME/RUNNER_ES_PASSWORD or RUNNER_ES_API_KEY, or the client options basic_auth_user/basic_auth_password/api_key)",
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
