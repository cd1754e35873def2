//! One HTTP/1.1 exchange per request over loopback: what the REST tests send and read.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::Duration;

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

pub fn send(
    port: u16,
    method: &str,
    target: &str,
    headers: &[(String, String)],
    body: Option<(&str, &[u8])>,
) -> Result<Response, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok();
    let mut head =
        format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    if let Some((content_type, bytes)) = body {
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            head.push_str(&format!("Content-Type: {content_type}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n", bytes.len()));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    if let Some((_, bytes)) = body {
        s.write_all(bytes).map_err(|e| e.to_string())?;
    }
    read_response(BufReader::new(s), method == "HEAD")
}

fn read_response(mut r: impl BufRead, head_only: bool) -> Result<Response, String> {
    let mut line = String::new();
    r.read_line(&mut line).map_err(|e| e.to_string())?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).map_err(|e| e.to_string())? == 0 || h == "\r\n" {
            break;
        }
        if let Some((k, v)) = h.trim_end().split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    let mut response = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if head_only {
        return Ok(response);
    }
    let chunked = response
        .header("transfer-encoding")
        .is_some_and(|v| v.eq_ignore_ascii_case("chunked"));
    if chunked {
        loop {
            let mut size = String::new();
            r.read_line(&mut size).map_err(|e| e.to_string())?;
            let n = usize::from_str_radix(size.trim(), 16).map_err(|e| e.to_string())?;
            let mut chunk = vec![0; n + 2];
            r.read_exact(&mut chunk).map_err(|e| e.to_string())?;
            if n == 0 {
                break;
            }
            response.body.extend_from_slice(&chunk[..n]);
        }
    } else if let Some(n) = response
        .header("content-length")
        .and_then(|v| v.parse().ok())
    {
        response.body = vec![0; n];
        r.read_exact(&mut response.body)
            .map_err(|e| e.to_string())?;
    } else {
        r.read_to_end(&mut response.body)
            .map_err(|e| e.to_string())?;
    }
    Ok(response)
}
