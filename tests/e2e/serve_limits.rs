//! `runner serve` against hostile clients: idle and slowloris sockets, held partial bodies and
//! a stalled body. Each test checks that a real request is still answered, and what the
//! hostile connections got.

use crate::elasticsearch::serve;
use crate::util::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).expect("connect to runner serve");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// The status line of a whole request sent on a fresh connection.
fn real_request(port: u16) -> String {
    let mut s = connect(port);
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    answer.lines().next().unwrap_or("").to_string()
}

/// Waits until the server closes `s` (EOF or reset), up to `within`; returns whether it did.
fn closed_by_server(mut s: &TcpStream, within: Duration) -> bool {
    s.set_read_timeout(Some(within)).unwrap();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn raise_nofile(n: u64) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: reads and writes only the struct passed in.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim);
        lim.rlim_cur = n.min(lim.rlim_max).max(lim.rlim_cur);
        libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
    }
}

#[test]
fn idle_and_slowloris_connections_never_lock_out_a_real_client() {
    raise_nofile(4096);
    let env = Env::new();
    // A header timeout far beyond the client's 20 s read timeout: only evicting the idlest
    // connection at the cap can serve the real client, not a timeout freeing a place.
    let server = serve(
        &env,
        &["--max-connections", "200", "--header-timeout", "120s"],
    );
    // Ten times the cap in idle sockets, and slowloris sockets that each sent half a head.
    let idle: Vec<TcpStream> = (0..1500)
        .filter_map(|_| TcpStream::connect(("127.0.0.1", server.port)).ok())
        .collect();
    let slowloris: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = connect(server.port);
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
            s
        })
        .collect();
    assert!(
        idle.len() > 1000,
        "the test opened {} idle sockets",
        idle.len()
    );
    assert_eq!(
        real_request(server.port),
        "HTTP/1.1 200 OK",
        "a real client is served beside {} idle and 100 slowloris sockets",
        idle.len()
    );
    let still_open = idle
        .iter()
        .take(50)
        .filter(|s| !closed_by_server(s, Duration::from_millis(1)))
        .count();
    assert_eq!(still_open, 0, "the oldest idle sockets were evicted");
    drop(idle);
    drop(slowloris);

    // Slowloris sockets still dribbling are closed once the head timeout passes.
    let server = serve(&env, &["--header-timeout", "2s"]);
    let mut slowloris: Vec<TcpStream> = (0..100)
        .map(|_| {
            let mut s = connect(server.port);
            s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: ")
                .unwrap();
            s
        })
        .collect();
    for s in &mut slowloris {
        let _ = s.write_all(b"a");
    }
    let closed = slowloris
        .iter()
        .filter(|s| closed_by_server(s, Duration::from_secs(6)))
        .count();
    assert_eq!(
        closed,
        slowloris.len(),
        "every slowloris connection is closed by the header timeout"
    );
    assert_eq!(real_request(server.port), "HTTP/1.1 200 OK");
}

#[test]
fn held_partial_bodies_are_bounded_by_the_in_flight_budget() {
    let env = Env::new();
    let server = serve(&env, &["--max-in-flight-bytes", "64mb"]);
    let mut create = connect(server.port);
    create
        .write_all(b"PUT /i HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        .unwrap();
    let mut created = String::new();
    let _ = create.read_to_string(&mut created);
    assert!(created.starts_with("HTTP/1.1 200"), "{created}");
    let declared = 30 * 1024 * 1024;
    let chunk = vec![b'x'; 1024 * 1024];
    let mut held = Vec::new();
    let mut refused = 0;
    for _ in 0..6 {
        let mut s = connect(server.port);
        let head = format!("POST /i/_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: {declared}\r\n\r\n");
        s.write_all(head.as_bytes()).unwrap();
        // Send most of the body, then hold the rest back.
        let mut sent_all = true;
        for _ in 0..28 {
            if s.write_all(&chunk).is_err() {
                sent_all = false;
                break;
            }
        }
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        let mut answer = [0u8; 512];
        match s.read(&mut answer) {
            Ok(n) if n > 0 => {
                let text = String::from_utf8_lossy(&answer[..n]).to_string();
                assert!(text.starts_with("HTTP/1.1 429"), "{text}");
                assert!(text.contains("circuit_breaking_exception"), "{text}");
                refused += 1;
            }
            _ => {
                assert!(sent_all, "a connection that is not refused takes the body");
                held.push(s);
            }
        }
    }
    assert_eq!(held.len(), 2, "two 30 MB bodies fit the 64 MB budget");
    assert_eq!(refused, 4);
    assert_eq!(real_request(server.port), "HTTP/1.1 200 OK");
    let peak_mb = peak_rss_kb(server.pid()) / 1024;
    assert!(peak_mb < 256, "runner serve peaked at {peak_mb} MB");
    // Released when the held requests end: a new body fits again.
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
    let mut s = connect(server.port);
    let body = "{\"index\":{}}\n{\"a\":1}\n";
    let req = format!("POST /i/_bulk?refresh=true HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

#[test]
fn a_stalled_body_gets_408_after_the_body_timeout() {
    let env = Env::new();
    let server = serve(&env, &["--body-timeout", "1s"]);
    let mut s = connect(server.port);
    s.write_all(b"POST /i/_bulk HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{\"index\":")
        .unwrap();
    // Without the body timeout this read would wait out the client's 20 s read timeout.
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--body-timeout"), "{answer}");
}

#[test]
fn serve_limits_are_checked_flags() {
    let env = Env::new();
    for (flag, value) in [
        ("--max-connections", "0"),
        ("--header-timeout", "0s"),
        ("--body-timeout", "-1s"),
        ("--max-in-flight-bytes", "lots"),
    ] {
        let out = env.run(&["serve", &format!("{flag}={value}")]);
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(flag), "{flag} {value}: {err}");
    }
}

/// `--log-requests` writes one line per request (method, path, status, time) and leaves the
/// query string out; without the flag nothing is written.
#[test]
fn requests_are_logged_when_asked() {
    use crate::redis::{free_port, wait_for_port};
    use std::process::Stdio;
    let env = Env::new();
    let port = free_port();
    let mut child = env
        .command(&["serve", "--port", &port.to_string(), "--log-requests"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runner serve starts");
    wait_for_port(port);
    let mut s = connect(port);
    s.write_all(b"GET /nope/_search?q=secret HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    let _ = child.kill();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    let _ = child.wait();
    let line = log
        .lines()
        .find(|l| l.starts_with("GET /nope/_search"))
        .unwrap_or_else(|| panic!("no request line in: {log}"));
    assert!(line.contains(" 404 ") && line.ends_with("ms"), "{line}");
    assert!(
        !log.contains("secret"),
        "the query string is not logged: {log}"
    );
}
