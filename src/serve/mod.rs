//! `runner serve`: the embedded engine behind the Elasticsearch REST API subset, so that the
//! elasticsearch backend (and other tools: curl, wrk, Elasticsearch clients) can be pointed at
//! a real engine on this machine. `--stub` answers search and bulk without doing any work,
//! to measure a client alone.

use bytes::Bytes;
use engine::{Engine, RestRequest, RestResponse};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_ENCODING, CONTENT_TYPE};
use hyper::{Request, Response};
use std::convert::Infallible;
use std::io::Read as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Elasticsearch's default `http.max_content_length`.
pub const MAX_BODY: usize = 100 * 1024 * 1024;

const STUB_SEARCH: &[u8] =
    br#"{"took":0,"timed_out":false,"_shards":{"total":1,"successful":1,"skipped":0,"failed":0},"hits":{"total":{"value":0,"relation":"eq"},"max_score":null,"hits":[]}}"#;

mod limits;
mod record;

pub use limits::Limits;
use limits::{Connections, InFlightBytes};

#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub addr: SocketAddr,
    pub stub: bool,
    /// One line per request on stderr: method, path, status, time.
    pub log_requests: bool,
    /// Serve HTTPS with this config instead of plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// Write every request whole to this file, one JSON line each (`--record`).
    pub record: Option<std::path::PathBuf>,
    pub limits: Limits,
    /// Where the engine keeps its indices, under `home/engine/` on disk.
    pub storage: engine::storage::EngineStorage,
    pub home: std::path::PathBuf,
}

struct Server {
    engine: Engine,
    stub: bool,
    log_requests: bool,
    record: Option<record::Recorder>,
    in_flight: InFlightBytes,
    body_timeout: Duration,
}

/// Open files beyond the connections: the listener, the engine's files, stdio.
const SPARE_FILES: usize = 64;

/// Binds, then calls `on_bound` with the real address (port 0 picks one) and serves until
/// `cancel`. A connection cap the open-files limit cannot hold is lowered, and said.
pub async fn serve(
    opts: ServeOptions,
    cancel: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let engine = Engine::with_storage(opts.storage, &opts.home)?;
    // Written documents become searchable on Elasticsearch's schedule, unasked.
    let _refreshes = engine.schedule_refreshes();
    serve_engine(engine, opts, cancel, on_bound).await
}

/// Serves `engine` (one a race already holds, for the track's Python runners) as [`serve`]
/// does; `opts.storage` and `opts.home` are not read.
pub async fn serve_engine(
    engine: Engine,
    opts: ServeOptions,
    cancel: CancellationToken,
    on_bound: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let listener = TcpListener::bind(opts.addr).await?;
    let max_connections = connections_the_system_allows(opts.limits.max_connections);
    on_bound(listener.local_addr()?);
    let record = opts
        .record
        .as_deref()
        .map(record::Recorder::create)
        .transpose()?;
    let server = Arc::new(Server {
        engine,
        stub: opts.stub,
        log_requests: opts.log_requests,
        record,
        in_flight: InFlightBytes::new(opts.limits.max_in_flight_bytes),
        body_timeout: opts.limits.body_timeout,
    });
    let connections = Connections::new(max_connections);
    let tls = opts.tls.map(tokio_rustls::TlsAcceptor::from);
    loop {
        let (stream, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(s) => s,
                // Out of file descriptors or a reset before accept: keep serving the others,
                // without spinning while descriptors are short.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
            _ = cancel.cancelled() => return Ok(()),
        };
        // At the cap this closes the longest-idle connection, or (all busy) waits for one to
        // end while later connections wait in the backlog.
        let Some(admitted) = connections.admit(&cancel).await else {
            return Ok(());
        };
        let _ = stream.set_nodelay(true);
        let server = server.clone();
        let tls = tls.clone();
        let connections = connections.clone();
        let header_timeout = opts.limits.header_timeout;
        tokio::spawn(async move {
            let close = admitted.conn.close.clone();
            let conn = admitted.conn.clone();
            let service = hyper::service::service_fn(move |req| {
                let in_progress = connections.begin_request(&conn);
                let server = server.clone();
                async move {
                    let response = handle(server, req).await;
                    drop(in_progress);
                    response
                }
            });
            let mut http = hyper::server::conn::http1::Builder::new();
            http.keep_alive(true)
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            match tls {
                None => serve_connection(&http, stream, service, &close).await,
                // A failed or stalled handshake only ends that connection; the client reports it.
                Some(acceptor) => {
                    if let Ok(Ok(stream)) =
                        tokio::time::timeout(header_timeout, acceptor.accept(stream)).await
                    {
                        serve_connection(&http, stream, service, &close).await;
                    }
                }
            }
            drop(admitted);
        });
    }
}

/// Serves one connection until it ends or `close` asks it to (then gracefully: a response
/// being written is finished, within a second).
async fn serve_connection<I, S>(
    http: &hyper::server::conn::http1::Builder,
    io: I,
    service: S,
    close: &CancellationToken,
) where
    I: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    S: hyper::service::HttpService<Incoming, ResBody = Full<Bytes>>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = http.serve_connection(hyper_util::rt::TokioIo::new(io), service);
    tokio::pin!(connection);
    tokio::select! {
        _ = connection.as_mut() => return,
        _ = close.cancelled() => connection.as_mut().graceful_shutdown(),
    }
    let _ = tokio::time::timeout(Duration::from_secs(1), connection).await;
}

fn connections_the_system_allows(wanted: usize) -> usize {
    let needed = wanted.saturating_add(SPARE_FILES) as u64;
    match crate::backend::raise_open_files(needed) {
        Ok(()) => wanted,
        Err(hard) => {
            let allowed = hard
                .map_or(1024, |h| usize::try_from(h).unwrap_or(usize::MAX))
                .saturating_sub(SPARE_FILES)
                .max(1);
            eprintln!("runner serve: --max-connections {wanted} does not fit the open-files limit; serving at most {allowed} connections");
            allowed.min(wanted)
        }
    }
}

/// A successful bulk reply with one item per action of `body`, as a client checks that every
/// document it sent is accounted for. Counting actions is the only work the stub does.
fn stub_bulk_reply(body: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(64 + body.len() / 8);
    out.extend_from_slice(br#"{"took":0,"errors":false,"items":["#);
    let mut lines = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace));
    let mut first = true;
    while let Some(line) = lines.next() {
        let Some((verb, _, _)) = std::str::from_utf8(line)
            .ok()
            .and_then(crate::corpus::parse_action_line)
        else {
            continue;
        };
        if verb != crate::corpus::Verb::Delete {
            lines.next();
        }
        if !first {
            out.push(b',');
        }
        first = false;
        out.extend_from_slice(br#"{""#);
        out.extend_from_slice(verb.as_str().as_bytes());
        out.extend_from_slice(br#"":{"status":201}}"#);
    }
    out.extend_from_slice(b"]}");
    Bytes::from(out)
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
    let started = std::time::Instant::now();
    let (parts, body) = req.into_parts();
    let mut held = server.in_flight.reservation();
    let body = match read_body(&server, &parts.headers, body, &mut held).await {
        Ok(body) => body,
        Err(refused) => return Ok(refused.response(&server.in_flight)),
    };
    let path = parts.uri.path();
    let response = answer(&server, &parts, path, &body);
    if let Some(r) = &server.record {
        let query = parts.uri.query().unwrap_or("");
        r.record(
            parts.method.as_str(),
            path,
            query,
            response.status().as_u16(),
            &body,
        );
    }
    if server.log_requests {
        // The query string is left out: it may carry what a client did not mean to log.
        eprintln!(
            "{} {} {} {:.3}ms",
            parts.method,
            path,
            response.status().as_u16(),
            started.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(response)
}

/// The stub's answer, else the engine's.
fn answer(
    server: &Server,
    parts: &hyper::http::request::Parts,
    path: &str,
    body: &[u8],
) -> Response<Full<Bytes>> {
    if server.stub {
        if path.ends_with("/_search") {
            return respond(200, Bytes::from_static(STUB_SEARCH));
        }
        if path.ends_with("/_bulk") {
            return respond(200, stub_bulk_reply(body));
        }
    }
    let request = RestRequest {
        method: parts.method.as_str(),
        path,
        query: parts.uri.query().unwrap_or(""),
        body,
    };
    // The engine's work is synchronous CPU work: keep the other connections' threads free.
    let RestResponse { status, body } =
        tokio::task::block_in_place(|| server.engine.rest(&request));
    let mut response = respond(status, body);
    if parts.method == hyper::Method::HEAD {
        *response.body_mut() = Full::new(Bytes::new());
    }
    response
}

/// Why a request body was not read whole.
enum Refused {
    TooLarge,
    OverInFlightBudget,
    TooSlow(Duration),
    Unreadable(String),
}

impl Refused {
    fn response(&self, in_flight: &InFlightBytes) -> Response<Full<Bytes>> {
        match self {
            Refused::TooLarge => error(413, "content_too_long_exception", &format!("request body larger than {MAX_BODY} bytes")),
            // Elasticsearch's in-flight requests breaker answers 429, which clients retry.
            Refused::OverInFlightBudget => error(
                429,
                "circuit_breaking_exception",
                &format!("[in_flight_requests] Data too large: requests in progress hold {} of at most {} bytes (--max-in-flight-bytes)", in_flight.used(), in_flight.max()),
            ),
            Refused::TooSlow(limit) => error(408, "request_timeout_exception", &format!("the request body did not arrive within {limit:?} (--body-timeout)")),
            Refused::Unreadable(why) => error(400, "parse_exception", why),
        }
    }
}

/// Reads a request body (and gunzips it) within the size, in-flight and time limits,
/// counting what it holds in `held`.
async fn read_body(
    server: &Server,
    headers: &hyper::HeaderMap,
    mut body: Incoming,
    held: &mut limits::Reservation<'_>,
) -> Result<Bytes, Refused> {
    use hyper::body::Body as _;
    // A declared length is refused or counted whole before any of it is read.
    let declared = body
        .size_hint()
        .exact()
        .map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    if declared.is_some_and(|n| n > MAX_BODY) {
        return Err(Refused::TooLarge);
    }
    if let Some(n) = declared {
        if !held.grow(n) {
            return Err(Refused::OverInFlightBudget);
        }
    }
    let deadline = tokio::time::Instant::now() + server.body_timeout;
    let mut bytes = Vec::new();
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => return Err(Refused::TooSlow(server.body_timeout)),
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(Refused::Unreadable(format!(
                    "cannot read the request body: {e}"
                )))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if bytes.len() + data.len() > MAX_BODY {
            return Err(Refused::TooLarge);
        }
        if declared.is_none() && !held.grow(data.len()) {
            return Err(Refused::OverInFlightBudget);
        }
        bytes.extend_from_slice(&data);
    }
    if headers
        .get(CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"gzip"))
    {
        return gunzip(&bytes, held);
    }
    Ok(Bytes::from(bytes))
}

/// Decompresses a bounded body, counting its output against the in-flight budget as it grows.
fn gunzip(compressed: &[u8], held: &mut limits::Reservation<'_>) -> Result<Bytes, Refused> {
    let mut decoder = flate2::read::GzDecoder::new(compressed);
    let mut out = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        let n = decoder.read(&mut chunk).map_err(|e| {
            Refused::Unreadable(format!("the gzip request body does not decompress: {e}"))
        })?;
        if n == 0 {
            return Ok(Bytes::from(out));
        }
        if out.len() + n > MAX_BODY {
            return Err(Refused::TooLarge);
        }
        if !held.grow(n) {
            return Err(Refused::OverInFlightBudget);
        }
        out.extend_from_slice(&chunk[..n]);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_stub_answers_one_item_per_action() {
        let body = b"{\"index\":{}}\n{\"a\":1}\n\n{\"delete\":{\"_id\":\"1\"}}\n{\"update\":{\"_id\":\"2\"}}\n{\"doc\":{}}\n";
        let reply = super::stub_bulk_reply(body);
        assert_eq!(
            &reply[..],
            br#"{"took":0,"errors":false,"items":[{"index":{"status":201}},{"delete":{"status":201}},{"update":{"status":201}}]}"#
        );
        assert_eq!(
            crate::backend::elasticsearch::response::bulk_item_count(&reply),
            Some(3)
        );
    }
}
