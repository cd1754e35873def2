//! `runner serve --record FILE`: every request whole, one JSON line each (its order, method,
//! path, query, status, and body: JSON parsed, NDJSON as a list of its lines, other bytes by
//! size), so that two clients' request streams can be compared (benches/request_streams.py
//! sets runner's against esrally's). Headers are never written: they carry credentials.

use serde_json::{json, Value};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

pub struct Recorder {
    out: Mutex<std::io::BufWriter<std::fs::File>>,
    seq: AtomicU64,
}

/// The query parameters of a recorded request, in order; a parameter without `=` is `""`.
fn query_pairs(query: &str) -> Value {
    let Ok(url) = reqwest::Url::parse(&format!("http://h/?{query}")) else {
        return json!([]);
    };
    Value::Array(url.query_pairs().map(|(k, v)| json!([k, v])).collect())
}

/// The body as JSON, or NDJSON lines, or (neither) its size.
fn body_value(body: &[u8]) -> (&'static str, Value) {
    if body.iter().all(u8::is_ascii_whitespace) {
        return ("none", Value::Null);
    }
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        return ("json", v);
    }
    let lines: Option<Vec<Value>> = body
        .split(|&b| b == b'\n')
        .filter(|l| !l.iter().all(u8::is_ascii_whitespace))
        .map(|l| serde_json::from_slice::<Value>(l).ok())
        .collect();
    match lines {
        Some(lines) => ("ndjson", Value::Array(lines)),
        None => ("bytes", json!(body.len())),
    }
}

impl Recorder {
    pub fn create(path: &std::path::Path) -> std::io::Result<Recorder> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(Recorder {
            out: Mutex::new(std::io::BufWriter::new(file)),
            seq: AtomicU64::new(0),
        })
    }

    /// Writes one request, flushed at once (a server stopped with a signal keeps all).
    pub fn record(&self, method: &str, path: &str, query: &str, status: u16, body: &[u8]) {
        let (format, body) = body_value(body);
        let line = json!({
            "seq": self.seq.fetch_add(1, Ordering::Relaxed),
            "method": method,
            "path": path,
            "query": query_pairs(query),
            "status": status,
            "body_format": format,
            "body": body,
        });
        let Ok(mut out) = self.out.lock() else { return };
        let _ = serde_json::to_writer(&mut *out, &line);
        let _ = out.write_all(b"\n");
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_kept_as_json_lines_or_sizes() {
        assert_eq!(body_value(b"{\"a\":1}").0, "json");
        let (f, v) = body_value(b"{\"index\":{}}\n{\"a\":1}\n");
        assert_eq!((f, v[1]["a"].as_i64()), ("ndjson", Some(1)));
        assert_eq!(body_value(b"\x00\x01"), ("bytes", json!(2)));
        assert_eq!(body_value(b" \n"), ("none", Value::Null));
        assert_eq!(query_pairs("a=1&b"), json!([["a", "1"], ["b", ""]]));
    }

    #[test]
    fn writes_one_line_a_request_and_no_header() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.jsonl");
        let r = Recorder::create(&path).unwrap();
        r.record(
            "POST",
            "/i/_search",
            "size=0",
            200,
            b"{\"query\":{\"match_all\":{}}}",
        );
        r.record("GET", "/", "", 200, b"");
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0]["body"]["query"]["match_all"], json!({}));
        assert_eq!(lines[1]["seq"], 1);
    }
}
