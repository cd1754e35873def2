//! The elasticsearch backend's own HTTP/1.1 client against a loopback server that frames its
//! answers in every way HTTP/1.1 allows, and records what the client sent: each way must be
//! read, and each request must carry the credentials, its length and its (compressed) body.

use crate::util::fault_listener;
use std::io::{BufRead, BufReader, Read, Write};
use std::sync::{Arc, Mutex};

/// How the server frames its answers to `_search` and `_bulk`.
#[derive(Clone, Copy, Debug)]
enum Framing {
    /// Content-Length, written a few bytes at a time.
    LengthInPieces,
    /// Chunked, with chunk extensions and a trailer.
    Chunked,
    /// `Connection: close` after every answer.
    CloseEach,
    /// HTTP/1.0 with no length: the body ends when the server closes.
    Http10,
    /// A `100 Continue` before the answer.
    Interim,
    /// Keep-alive connections left idle for 300 ms are closed by the server, as a server's
    /// idle timeout does.
    IdleClose,
}

#[derive(Debug, Clone)]
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

fn read_request(reader: &mut BufReader<std::net::TcpStream>) -> Option<Seen> {
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        if h == "\r\n" {
            break;
        }
        let (k, v) = h.split_once(':')?;
        headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
    }
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(Seen {
        request_line,
        headers,
        body,
    })
}

fn answer(stream: &mut std::net::TcpStream, framing: Framing, body: &str) -> bool {
    let w = |s: &mut std::net::TcpStream, b: &[u8]| s.write_all(b).is_ok();
    match framing {
        Framing::LengthInPieces => {
            let all = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            for piece in all.as_bytes().chunks(7) {
                if !w(stream, piece) {
                    return false;
                }
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            true
        }
        Framing::Chunked => {
            let (a, b) = body.split_at(body.len() / 2);
            let all = format!(
                "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n{:x};x=1\r\n{a}\r\n{:x}\r\n{b}\r\n0\r\nx-trailer: t\r\n\r\n",
                a.len(),
                b.len()
            );
            w(stream, all.as_bytes())
        }
        Framing::CloseEach => {
            let all = format!(
                "HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
            w(stream, all.as_bytes());
            false
        }
        Framing::Http10 => {
            w(stream, format!("HTTP/1.0 200 OK\r\n\r\n{body}").as_bytes());
            false
        }
        Framing::Interim => w(
            stream,
            format!(
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        ),
        Framing::IdleClose => {
            let ok = w(
                stream,
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
                    body.len()
                )
                .as_bytes(),
            );
            let _ = stream.set_read_timeout(Some(std::time::Duration::from_millis(300)));
            ok
        }
    }
}

/// A server answering with `framing`; what it was sent goes to the returned list.
fn wire_server(framing: Framing) -> (u16, Arc<Mutex<Vec<Seen>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let port = fault_listener(move |stream, _| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while let Some(req) = read_request(&mut reader) {
            let line = req.request_line.clone();
            let body = if line.contains("_cluster/health") {
                r#"{"status":"green"}"#.to_string()
            } else if line.contains("_search") {
                r#"{"took":1,"hits":{"total":{"value":42,"relation":"eq"},"hits":[]}}"#.to_string()
            } else if line.contains("_bulk") {
                let mut plain = req.body.clone();
                if req.header("content-encoding") == Some("gzip") {
                    plain.clear();
                    flate2::read::GzDecoder::new(&req.body[..])
                        .read_to_end(&mut plain)
                        .unwrap();
                }
                let docs = plain.iter().filter(|b| **b == b'\n').count() / 2;
                let items = vec![r#"{"index":{"status":201}}"#; docs.max(1)].join(",");
                format!(r#"{{"took":1,"errors":false,"items":[{items}]}}"#)
            } else {
                r#"{"version":{"number":"8.15.0"}}"#.to_string()
            };
            let measured = line.contains("_search") || line.contains("_bulk");
            log.lock().unwrap().push(req);
            let framing = if measured {
                framing
            } else {
                Framing::LengthInPieces
            };
            if !answer(&mut stream, framing, &body) {
                return;
            }
        }
    });
    (port, seen)
}

const TRACK: &str = "name: wire
indices: [{name: i}]
corpora:
  - name: c
    target-index: i
    documents: [{generate: small, document-count: 40}]
operations:
  - {name: s, type: search, params: {body: {query: {match: {name: wire}}}}}
  - {name: b, type: bulk, params: {bulk-size: 20}}
  - {name: nap, type: sleep, params: {duration: 1.2}}
challenges:
  - name: c
    schedule:
      - {operation: b, clients: 1}
      - {name: s1, operation: s, iterations: 3}
      - {operation: nap}
      - {name: s2, operation: s, iterations: 3}
";

#[test]
fn every_framing_is_read_and_every_request_carries_credentials_length_and_body() {
    use base64::Engine as _;
    for framing in [
        Framing::LengthInPieces,
        Framing::Chunked,
        Framing::CloseEach,
        Framing::Http10,
        Framing::Interim,
        Framing::IdleClose,
    ] {
        for gzip in [false, true] {
            let (port, seen) = wire_server(framing);
            let host = format!("http://127.0.0.1:{port}");
            let options = format!("compression:{gzip}");
            let dir = crate::util::track_dir(&[("track.yaml", TRACK)]);
            let env = crate::util::Env::new();
            let out = env
                .command(&[
                    "race",
                    "--track-path",
                    dir.path().to_str().unwrap(),
                    "--quiet",
                    "--backend",
                    "elasticsearch",
                    "--target-hosts",
                    &host,
                    "--client-options",
                    &options,
                ])
                .env("RUNNER_ES_USERNAME", "u")
                .env("RUNNER_ES_PASSWORD", "p")
                .output()
                .unwrap();
            let what = format!("{framing:?} gzip:{gzip}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{what}: {stderr}");
            let race = env.only_race();
            for task in ["s1", "s2"] {
                let trial = &crate::util::tasks(&race, task)[0]["trials"][0];
                assert_eq!(trial["successes"], 3, "{what} {task}: {trial}");
                assert_eq!(trial["hits"], 3 * 42, "{what} {task}: {trial}");
            }
            let bulk = &crate::util::tasks(&race, "b")[0]["trials"][0];
            assert_eq!(bulk["errors"], 0, "{what}: {bulk}");
            assert_eq!(bulk["units"], 40, "{what}: {bulk}");

            let seen = seen.lock().unwrap();
            let basic = base64::engine::general_purpose::STANDARD.encode("u:p");
            let ops: Vec<&Seen> = seen
                .iter()
                .filter(|s| s.request_line.contains("_search") || s.request_line.contains("_bulk"))
                .collect();
            assert_eq!(ops.len(), 8, "{what}: 6 searches and 2 bulks");
            for s in ops {
                assert_eq!(
                    s.header("authorization"),
                    Some(format!("Basic {basic}").as_str()),
                    "{what}: {}",
                    s.request_line
                );
                assert!(s.request_line.ends_with(" HTTP/1.1\r\n"), "{what}");
                assert!(s.header("host").unwrap().ends_with(&port.to_string()));
                let body = if gzip {
                    assert_eq!(s.header("content-encoding"), Some("gzip"), "{what}");
                    let mut plain = Vec::new();
                    flate2::read::GzDecoder::new(&s.body[..])
                        .read_to_end(&mut plain)
                        .unwrap();
                    plain
                } else {
                    assert_eq!(s.header("content-encoding"), None, "{what}");
                    s.body.clone()
                };
                let text = String::from_utf8(body).unwrap();
                if s.request_line.contains("_search") {
                    assert_eq!(s.header("content-type"), Some("application/json"));
                    assert_eq!(text, r#"{"query":{"match":{"name":"wire"}}}"#, "{what}");
                } else {
                    assert_eq!(s.header("content-type"), Some("application/x-ndjson"));
                    assert_eq!(
                        text.lines().count(),
                        40,
                        "{what}: 20 action and document lines"
                    );
                }
            }
        }
    }
}
