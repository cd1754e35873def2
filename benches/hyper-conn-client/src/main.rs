//! `hyper-conn-client HOST:PORT PATH CONTENT-TYPE BODY-FILE CONNECTIONS SECONDS`: one task per
//! connection, each on its own hyper HTTP/1.1 connection (`client::conn::http1`), POSTs the body
//! back to back for SECONDS and reads each response whole. Nothing is timed or recorded per
//! request (hyper's best case: runner's loop also records each one in a histogram). Prints one
//! line: requests and requests/s.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use std::time::{Duration, Instant};

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, path, content_type, body_file, conns, secs] = args.as_slice() else {
        eprintln!("usage: hyper-conn-client HOST:PORT PATH CONTENT-TYPE BODY-FILE CONNECTIONS SECONDS");
        std::process::exit(2);
    };
    let body = Bytes::from(std::fs::read(body_file).expect("body file"));
    let conns: usize = conns.parse().expect("connections");
    let end = Instant::now() + Duration::from_secs(secs.parse().expect("seconds"));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..conns {
        let (addr, path, content_type, body) = (addr.clone(), path.clone(), content_type.clone(), body.clone());
        tasks.push(tokio::spawn(async move {
            let stream = tokio::net::TcpStream::connect(&addr).await.expect("connect");
            stream.set_nodelay(true).unwrap();
            let (mut sender, conn) = http1::handshake(TokioIo::new(stream)).await.expect("handshake");
            tokio::spawn(conn);
            let mut n = 0u64;
            while Instant::now() < end {
                let request = hyper::Request::post(path.as_str())
                    .header(hyper::header::HOST, addr.as_str())
                    .header(hyper::header::CONTENT_TYPE, content_type.as_str())
                    .body(Full::new(body.clone()))
                    .unwrap();
                let response = sender.send_request(request).await.expect("request");
                assert!(response.status().is_success());
                let _ = response.into_body().collect().await.expect("body").to_bytes();
                n += 1;
            }
            n
        }));
    }
    let mut total = 0;
    for t in tasks {
        total += t.await.unwrap();
    }
    let secs = start.elapsed().as_secs_f64();
    println!("{total} {:.1}", total as f64 / secs);
}
