//! Headless Chromium driven over its DevTools protocol: open a page, evaluate script in it,
//! and collect what its console said (errors, uncaught exceptions, failed loads).

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tungstenite::{Message, WebSocket};

/// The browser, if one is installed; in CI it must be.
pub fn chromium() -> Option<&'static str> {
    let found = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install chromium (apt-get install chromium) for the browser checks"
        );
        eprintln!("NOT CHECKED: chromium is not installed (apt-get install chromium)");
    }
    found
}

/// Chromium's flags for a quiet, offline, headless run.
pub fn headless(browser: &str, profile: &std::path::Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
    ]);
    c.arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// A running headless Chromium, killed when dropped.
pub struct Browser {
    child: Child,
    port: u16,
    _profile: tempfile::TempDir,
}

impl Browser {
    pub fn launch(browser: &str) -> Browser {
        let profile = tempfile::tempdir().unwrap();
        let mut child = headless(browser, profile.path())
            .args([
                "--remote-debugging-port=0",
                "--window-size=1280,1400",
                "about:blank",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/..." on stderr.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines
                .next()
                .expect("chromium says where DevTools listens")
                .unwrap();
            if let Some(rest) = line.split("ws://127.0.0.1:").nth(1) {
                break rest.split('/').next().unwrap().parse().unwrap();
            }
        };
        // Keep draining stderr, so that chromium never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Browser {
            child,
            port,
            _profile: profile,
        }
    }

    /// A new tab, with its console and runtime events on.
    pub fn page(&self) -> Page {
        let answer = http(self.port, "PUT", "/json/new?about:blank");
        let target: Value = serde_json::from_str(answer.split("\r\n\r\n").nth(1).unwrap())
            .unwrap_or_else(|e| panic!("{e}: {answer}"));
        let url = target["webSocketDebuggerUrl"].as_str().unwrap().to_string();
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(200)))
            .unwrap();
        let (ws, _) = tungstenite::client(url.as_str(), stream).expect("DevTools handshake");
        let mut page = Page {
            ws,
            next: 0,
            problems: Vec::new(),
        };
        for domain in ["Runtime.enable", "Log.enable", "Page.enable"] {
            page.call(domain, json!({}));
        }
        page
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One request to DevTools' HTTP endpoint: its answer's head and body (by its length, as
/// DevTools may keep the connection open).
fn http(port: u16, method: &str, path: &str) -> String {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    write!(s, "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n").unwrap();
    let mut reader = BufReader::new(s);
    let mut head = String::new();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).expect("DevTools answers");
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap();
        }
        head.push_str(&line);
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    head + &String::from_utf8(body).unwrap()
}

pub struct Page {
    ws: WebSocket<TcpStream>,
    next: u64,
    /// Console errors, uncaught exceptions and failed loads, as the page met them.
    pub problems: Vec<String>,
}

impl Page {
    /// Calls a DevTools method and returns its result, keeping the events that came first.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        match self.try_call(method, params) {
            Ok(result) => result,
            Err(error) => panic!("{method}: {error}"),
        }
    }

    /// A DevTools call's result, or the error chromium answered.
    fn try_call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next += 1;
        let id = self.next;
        let text = json!({"id": id, "method": method, "params": params}).to_string();
        self.ws.send(Message::text(text)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            assert!(
                Instant::now() < deadline,
                "{method}: no answer from chromium"
            );
            let Some(v) = self.read() else { continue };
            if v["id"] == id {
                return match v.get("error") {
                    Some(error) => Err(error.clone()),
                    None => Ok(v["result"].clone()),
                };
            }
            self.note(&v);
        }
    }

    fn read(&mut self) -> Option<Value> {
        match self.ws.read() {
            Ok(Message::Text(t)) => serde_json::from_str(&t).ok(),
            Ok(_) => None,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                None
            }
            Err(e) => panic!("DevTools connection: {e}"),
        }
    }

    fn note(&mut self, v: &Value) {
        let p = &v["params"];
        match v["method"].as_str() {
            Some("Runtime.consoleAPICalled")
                if ["error", "assert"].contains(&p["type"].as_str().unwrap_or("")) =>
            {
                self.problems
                    .push(format!("console.{}: {}", p["type"], p["args"]))
            }
            Some("Runtime.exceptionThrown") => self.problems.push(format!(
                "uncaught: {}",
                p["exceptionDetails"]["exception"]["description"]
            )),
            Some("Log.entryAdded") if p["entry"]["level"] == "error" => self
                .problems
                .push(format!("log: {} {}", p["entry"]["text"], p["entry"]["url"])),
            _ => {}
        }
    }

    /// Reads events for a while (console messages arrive on their own).
    pub fn settle(&mut self, d: Duration) {
        let end = Instant::now() + d;
        while Instant::now() < end {
            if let Some(v) = self.read() {
                self.note(&v);
            }
        }
    }

    pub fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
        assert!(
            self.wait_until(
                "document.readyState === 'complete'",
                Duration::from_secs(30)
            ),
            "{url} did not load"
        );
    }

    /// The value of a script expression in the page.
    pub fn eval(&mut self, expression: &str) -> Value {
        let r = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            r.get("exceptionDetails").is_none(),
            "{expression}: {}",
            r["exceptionDetails"]
        );
        r["result"]["value"].clone()
    }

    /// Waits for an expression to be true; false at the deadline. A page between two
    /// documents (a redirect, a navigation) has no context to evaluate in: asked again.
    pub fn wait_until(&mut self, expression: &str, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            let answer = self.try_call(
                "Runtime.evaluate",
                json!({"expression": expression, "returnByValue": true}),
            );
            match answer {
                Ok(r) if r.get("exceptionDetails").is_some() => {
                    panic!("{expression}: {}", r["exceptionDetails"])
                }
                Ok(r) if r["result"]["value"] == Value::Bool(true) => return true,
                Ok(_) => {}
                Err(e) if navigating(&e) => {}
                Err(e) => panic!("Runtime.evaluate of {expression}: {e}"),
            }
            self.settle(Duration::from_millis(200));
        }
        false
    }

    /// A PNG of the page as it is, `height` pixels of it from the top.
    pub fn screenshot(&mut self, height: u32) -> Vec<u8> {
        self.screenshot_at(0.0, height)
    }

    /// A PNG of `height` pixels of the page from `y` down.
    pub fn screenshot_at(&mut self, y: f64, height: u32) -> Vec<u8> {
        use base64::Engine;
        let r = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "clip": {"x": 0, "y": y, "width": 1280, "height": height, "scale": 1}, "captureBeyondViewport": true}),
        );
        base64::engine::general_purpose::STANDARD
            .decode(r["data"].as_str().unwrap())
            .unwrap()
    }
}

/// Chromium's answer when an evaluation's page navigated away under it.
fn navigating(error: &Value) -> bool {
    let message = error["message"].as_str().unwrap_or_default();
    message.contains("navigated or closed") || message.contains("Cannot find context")
}
