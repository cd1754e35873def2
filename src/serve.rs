//! `runner serve`: the embedded engine behind the Elasticsearch REST API subset, so that the
//! elasticsearch backend (and other tools: curl, wrk, Elasticsearch clients) can be pointed at
//! a real engine on this machine. `--stub` answers search and bulk without doing any work,
//! to measure a client alone.

use crate::backend::embedded::{EmbeddedBackend, RestRequest, RestResponse};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_TYPE};
use hyper::{Request, Response};
use std::convert::Infallible;
use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Elasticsearch's default `http.max_content_length`.
pub const MAX_BODY: usize = 100 * 1024 * 1024;

const STUB_SEARCH: &[u8] =
    br#"{"took":0,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}"#;
const STUB_BULK: &[u8] = br#"{"took":0,"errors":false,"items":[]}"#;

#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    pub stub: bool,
    /// Serve HTTPS with this config instead of plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
}

struct Server {
    engine: EmbeddedBackend,
    stub: bool,
}

/// Binds, then calls `on_bound` with the real address (port 0 picks one) and serves until
/// `cancel`.
pub async fn serve(
    opts: ServeOptions,
    cancel: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = TcpListener::bind(opts.addr).await?;
    on_bound(listener.local_addr()?);
    let server = Arc::new(Server {
        engine: EmbeddedBackend::new(),
        stub: opts.stub,
    });
    let tls = opts.tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                // Out of file descriptors or a reset before accept: keep serving the others,
                // without spinning while descriptors are short.
                Err(_) => {
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = cancel.cancelled() => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| handle(server.clone(), req));
            let mut http = hyper::server::conn::http1::Builder::new();
            http.keep_alive(true);
            match tls {
                None => {
                    let _ = http
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                }
                // A failed handshake only ends that connection; the client reports it.
                Some(acceptor) => {
                    if let Ok(stream) = acceptor.accept(stream).await {
                        let _ = http
                            .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                            .await;
                    }
                }
            }
        });
    }
}

fn respond(status: u16, body: impl Into<Bytes>) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    let headers = r.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    // Elasticsearch clients since 7.14 refuse a server without this header.
    headers.insert(
        "x-elastic-product",
        HeaderValue::from_static("Elasticsearch"),
    );
    r
}

fn error(status: u16, kind: &str, reason: &str) -> Response<Full<Bytes>> {
    let body = serde_json::json!({ "error": { "root_cause": [{ "type": kind, "reason": reason }], "type": kind, "reason": reason }, "status": status });
    respond(status, body.to_string())
}

async fn handle(
    server: Arc<Server>,
    req: Request<Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let (parts, body) = req.into_parts();
    let body = match Limited::new(body, MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            return Ok(
                if e.downcast_ref::<http_body_util::LengthLimitError>()
                    .is_some()
                {
                    error(
                        413,
                        "content_too_long_exception",
                        &format!("request body larger than {MAX_BODY} bytes"),
                    )
                } else {
                    error(
                        400,
                        "parse_exception",
                        &format!("cannot read the request body: {e}"),
                    )
                },
            )
        }
    };
    let body = if parts
        .headers
        .get(CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"))
    {
        let mut out = Vec::with_capacity(body.len() * 4);
        if let Err(e) = flate2::read::GzDecoder::new(&body[..])
            .take(MAX_BODY as u64 + 1)
            .read_to_end(&mut out)
        {
            return Ok(error(
                400,
                "parse_exception",
                &format!("the gzip request body does not decompress: {e}"),
            ));
        }
        Bytes::from(out)
    } else {
        body
    };
    let path = parts.uri.path();
    if server.stub {
        if path.ends_with("/_search") {
            return Ok(respond(200, Bytes::from_static(STUB_SEARCH)));
        }
        if path.ends_with("/_bulk") {
            return Ok(respond(200, Bytes::from_static(STUB_BULK)));
        }
    }
    let request = RestRequest {
        method: parts.method.as_str(),
        path,
        query: parts.uri.query().unwrap_or(""),
        body: &body,
    };
    // The engine's work is synchronous CPU work: keep the other connections' threads free.
    let RestResponse { status, body } =
        tokio::task::block_in_place(|| server.engine.rest(&request));
    let mut response = respond(status, body);
    if parts.method == hyper::Method::HEAD {
        *response.body_mut() = Full::new(Bytes::new());
    }
    Ok(response)
}
