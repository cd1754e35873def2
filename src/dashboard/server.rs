//! The dashboard's HTTP server: the page, its event stream and the final report. Loopback by
//! default, a few connections at most, GET only.

use super::hub::Hub;
use bytes::Bytes;
use futures::StreamExt;
use http_body_util::{combinators::BoxBody, BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

/// Browsers served at once: a dashboard is watched by a few people, and each open page holds a
/// connection for its events.
const MAX_CONNECTIONS: usize = 32;
/// A keep-alive comment this often keeps proxies from closing a quiet event stream.
const HEARTBEAT: Duration = Duration::from_secs(15);

type Body = BoxBody<Bytes, Infallible>;

/// Binds `addr` and serves `hub` until `stop`, on a thread and runtime of its own: the race's
/// workers may be kept busy by its clients, and the page must still be answered (nor may the
/// page take a worker from the clients). Returns the bound address once listening.
pub fn start(
    addr: SocketAddr,
    hub: Arc<Hub>,
    stop: CancellationToken,
) -> std::io::Result<SocketAddr> {
    let (bound_tx, bound_rx) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("runner-dashboard".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => return drop(bound_tx.send(Err(e))),
            };
            runtime.block_on(async move {
                let listener = match TcpListener::bind(addr).await {
                    Ok(l) => l,
                    Err(e) => return drop(bound_tx.send(Err(e))),
                };
                let _ = bound_tx.send(listener.local_addr());
                serve(listener, hub, stop).await;
            });
        })?;
    bound_rx
        .recv()
        .unwrap_or_else(|_| Err(std::io::Error::other("the dashboard's thread ended")))
}

async fn serve(listener: TcpListener, hub: Arc<Hub>, stop: CancellationToken) {
    let permits = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    {
        loop {
            let stream = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((s, _)) => s,
                    Err(_) => {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                },
                _ = stop.cancelled() => return,
            };
            // Past the cap, a connection is closed at once rather than queued.
            let Ok(permit) = permits.clone().try_acquire_owned() else {
                continue;
            };
            let (hub, stop) = (hub.clone(), stop.clone());
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let (hub, stop) = (hub.clone(), stop.clone());
                    async move { Ok::<_, Infallible>(route(&hub, &req, stop)) }
                });
                let mut http = hyper::server::conn::http1::Builder::new();
                http.timer(hyper_util::rt::TokioTimer::new())
                    .header_read_timeout(Duration::from_secs(10));
                let connection =
                    http.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
                let _ = connection.await;
                drop(permit);
            });
        }
    }
}

fn route(hub: &Arc<Hub>, req: &Request<Incoming>, stop: CancellationToken) -> Response<Body> {
    if req.method() != Method::GET && req.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "the dashboard answers GET only\n",
        );
    }
    match req.uri().path() {
        "/" => page(super::page::PAGE, "text/html; charset=utf-8"),
        "/events" => events(hub.clone(), stop),
        "/state" => {
            let snapshot = hub.snapshot();
            // The snapshot event's data line, as JSON.
            let json = snapshot
                .lines()
                .find_map(|l| l.strip_prefix("data: "))
                .unwrap_or("null")
                .to_string();
            page(json, "application/json")
        }
        "/report" => match hub.report() {
            Some(html) => page(html.to_string(), "text/html; charset=utf-8"),
            None => plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "the race is still running: its report is shown when it ends\n",
            ),
        },
        other => plain(
            StatusCode::NOT_FOUND,
            &format!("no page {other} here: the dashboard is at /\n"),
        ),
    }
}

fn page(body: impl Into<Bytes>, content_type: &'static str) -> Response<Body> {
    let mut r = Response::new(Full::new(body.into()).boxed());
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        content_type.parse().expect("valid header"),
    );
    r.headers_mut().insert(
        hyper::header::CACHE_CONTROL,
        "no-store".parse().expect("valid header"),
    );
    r
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut r = page(text.to_string(), "text/plain; charset=utf-8");
    *r.status_mut() = status;
    r
}

/// The event stream: the whole state first, then each event; a browser that falls behind
/// is sent the whole state again (what it missed is dropped, the driver never waits).
fn events(hub: Arc<Hub>, stop: CancellationToken) -> Response<Body> {
    let first = hub.snapshot();
    let rx = hub.subscribe();
    let stream = futures::stream::unfold(
        (Some(first), rx, hub, stop),
        |(pending, mut rx, hub, stop)| async move {
            if let Some(event) = pending {
                return Some((event, (None, rx, hub, stop)));
            }
            let event = tokio::select! {
                got = rx.recv() => match got {
                    Ok(e) => e,
                    Err(RecvError::Lagged(_)) => hub.snapshot(),
                    Err(RecvError::Closed) => return None,
                },
                _ = tokio::time::sleep(HEARTBEAT) => Arc::from(": still here\n\n"),
                _ = stop.cancelled() => return None,
            };
            Some((event, (None, rx, hub, stop)))
        },
    )
    .map(|e: Arc<str>| Ok::<_, Infallible>(Frame::data(Bytes::from(e.as_bytes().to_vec()))));
    let mut r = Response::new(BodyExt::boxed(StreamBody::new(stream)));
    let h = r.headers_mut();
    h.insert(
        hyper::header::CONTENT_TYPE,
        "text/event-stream".parse().expect("valid header"),
    );
    h.insert(
        hyper::header::CACHE_CONTROL,
        "no-store".parse().expect("valid header"),
    );
    r
}
