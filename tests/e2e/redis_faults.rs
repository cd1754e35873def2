//! The redis backend against a loopback server that speaks just enough RESP to pass the
//! start-up PING and INFO, then injects one fault into every other command: each fault is counted by
//! kind and `continue` finishes with the error rate reported; `abort` stops at the first one.
//! (A real redis-server killed mid-race, killing connections mid-pipeline, error replies and
//! AUTH failures are in redis.rs.)

use crate::util::*;
use std::io::{BufRead, BufReader, Write};
use std::sync::atomic::Ordering;
use std::time::Duration;

#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// Bytes that are not RESP.
    Garbage,
    /// Half a bulk reply, then the connection closes.
    CloseMidReply,
    /// The reply comes after the client's timeout.
    Slow,
    /// The connection closes and the server stops listening: reconnects are refused.
    Refuse,
    /// A bulk string of 99,999,999,999 bytes is declared, then bytes stream for up to 5 s.
    HugeLength,
    /// A simple string that never ends: bytes stream for up to 5 s, no CRLF.
    EndlessLine,
    /// Lengths RESP does not have (only -1 means nil).
    NegativeLength,
    NegativeArray,
    /// No answer for 20 s, then the connection closes.
    Stall,
}

/// Writes `head`, then filler for at most five seconds or until the client hangs up.
fn stream_endlessly(stream: &mut std::net::TcpStream, head: &[u8]) {
    let _ = stream.write_all(head);
    let filler = vec![b'x'; 64 * 1024];
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while std::time::Instant::now() < until && stream.write_all(&filler).is_ok() {}
}

/// Reads one RESP command (an array of bulk strings); None when the client hung up.
fn read_command(r: &mut impl BufRead) -> Option<Vec<String>> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let n: usize = line.trim().strip_prefix('*')?.parse().ok()?;
    let mut args = Vec::with_capacity(n);
    for _ in 0..n {
        line.clear();
        r.read_line(&mut line).ok()?;
        let len: usize = line.trim().strip_prefix('$')?.parse().ok()?;
        let mut arg = vec![0; len + 2];
        std::io::Read::read_exact(r, &mut arg).ok()?;
        arg.truncate(len);
        args.push(String::from_utf8_lossy(&arg).into_owned());
    }
    Some(args)
}

pub fn resp_fault_server(fault: Fault) -> u16 {
    fault_listener(move |stream, stop| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while let Some(cmd) = read_command(&mut reader) {
            let command = cmd
                .first()
                .map(|c| c.to_ascii_uppercase())
                .unwrap_or_default();
            let answer: &[u8] = if command == "PING" {
                b"+PONG\r\n"
            } else if command == "INFO" {
                b"$22\r\nredis_version:7.0.15\r\n\r\n"
            } else {
                match fault {
                    Fault::Garbage => b"HTTP/1.1 400 Bad Request\r\n\r\n",
                    Fault::CloseMidReply => {
                        let _ = stream.write_all(b"$10\r\nabc");
                        return;
                    }
                    Fault::Slow => {
                        std::thread::sleep(Duration::from_millis(1500));
                        b"$-1\r\n"
                    }
                    Fault::Refuse => {
                        stop.store(true, Ordering::SeqCst);
                        return;
                    }
                    Fault::HugeLength => {
                        stream_endlessly(&mut stream, b"$99999999999\r\n");
                        return;
                    }
                    Fault::EndlessLine => {
                        stream_endlessly(&mut stream, b"+");
                        return;
                    }
                    Fault::Stall => {
                        std::thread::sleep(Duration::from_secs(20));
                        return;
                    }
                    Fault::NegativeLength => b"$-5\r\n",
                    Fault::NegativeArray => b"*-7\r\n",
                }
            };
            if stream.write_all(answer).is_err() {
                return;
            }
        }
    })
}

const GET_TRACK: &str = "name: t
operations: [{name: g, type: get, params: {keyspace: 10}}]
challenges:
  - name: c
    schedule: [{operation: g, iterations: 3}]
";

fn race_on(port: u16, extra: &[&str]) -> (Env, std::process::Output) {
    let host = format!("127.0.0.1:{port}");
    let mut args = vec![
        "--backend",
        "redis",
        "--target-hosts",
        &host,
        "--client-options",
        "timeout:0.5",
    ];
    args.extend_from_slice(extra);
    race_track(GET_TRACK, &args)
}

#[test]
fn each_resp_fault_is_counted_by_kind_and_abort_stops_at_the_first() {
    let cases = [
        (Fault::Garbage, "protocol", "is it a Redis server?"),
        (Fault::CloseMidReply, "connection", "closed the connection"),
        (Fault::Slow, "timeout", "no reply within 500ms"),
        (Fault::Refuse, "connection", "redis at"),
        (
            Fault::HugeLength,
            "protocol",
            "a bulk string of length 99999999999",
        ),
        (
            Fault::NegativeLength,
            "protocol",
            "a bulk string of length -5",
        ),
        (Fault::NegativeArray, "protocol", "an array of length -7"),
    ];
    for (fault, kind, text) in cases {
        let (env, out) = race_on(resp_fault_server(fault), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{fault:?}: {stderr}");
        let race = env.only_race();
        let trial = &race["tasks"][0]["trials"][0];
        assert_eq!(trial["errors_by_kind"][kind], 3, "{fault:?}: {trial}");
        assert_eq!(
            (trial["successes"].as_u64(), trial["error_rate"].as_f64()),
            (Some(0), Some(1.0)),
            "{fault:?}"
        );
        let message = trial["error_messages"][kind].as_str().unwrap();
        assert!(message.contains(text), "{fault:?}: {message}");
        let summary = String::from_utf8_lossy(&out.stdout);
        assert!(
            summary.contains("100.00%") && summary.contains(&format!("{kind}: 3")),
            "{fault:?}: {summary}"
        );
        eprintln!("FAULT redis {fault:?}: continue -> exit 0, 3 of 3 counted as {kind}");

        let (env, out) = race_on(resp_fault_server(fault), &["--on-error", "abort"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{fault:?}: {stderr}");
        assert!(
            stderr.contains("race stopped early") && stderr.contains(text),
            "{fault:?}: {stderr}"
        );
        let race = env.only_race();
        assert_eq!(race["status"], "aborted", "{fault:?}");
        assert_eq!(
            race["tasks"][0]["trials"][0]["errors_by_kind"][kind], 1,
            "{fault:?}"
        );
        eprintln!("FAULT redis {fault:?}: abort -> exit 1, status aborted after 1 error");
    }
}

#[test]
fn a_reply_that_never_ends_is_cut_off_within_bounded_memory() {
    // Under a 2 GiB address-space limit: before, the runner buffered what the server streamed
    // until the allocator gave up.
    let port = resp_fault_server(Fault::EndlessLine);
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", GET_TRACK)]);
    let runner = env!("CARGO_BIN_EXE_runner");
    let script = format!("ulimit -v 2097152 && exec '{runner}' race --track-path '{}' --quiet --backend redis --target-hosts 127.0.0.1:{port} --client-options timeout:5", dir.path().display());
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("RUNNER_HOME", env.home.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let race = env.only_race();
    let trial = &race["tasks"][0]["trials"][0];
    assert_eq!(trial["errors_by_kind"]["protocol"], 3, "{trial}");
    assert!(
        trial["error_messages"]["protocol"]
            .as_str()
            .unwrap()
            .contains("a reply longer than 67108864 bytes"),
        "{trial}"
    );
}

#[test]
fn a_server_that_never_answers_ends_within_the_timeout() {
    // Accepts, reads, and never says a word: neither to PING at the connection check nor to
    // AUTH when a password is set.
    let port = fault_listener(|stream, _| {
        let mut reader = BufReader::new(stream);
        while read_command(&mut reader).is_some() {}
    });
    for env_vars in [vec![], vec![("RUNNER_REDIS_PASSWORD", "secret")]] {
        let env = Env::new();
        let dir = track_dir(&[("track.yaml", GET_TRACK)]);
        let started = std::time::Instant::now();
        let host = format!("127.0.0.1:{port}");
        let mut cmd = env.command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--backend",
            "redis",
            "--target-hosts",
            &host,
            "--client-options",
            "timeout:1",
        ]);
        for (k, v) in &env_vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("no answer to") && stderr.contains("within 1s"),
            "{stderr}"
        );
        assert!(!stderr.contains("secret"), "{stderr}");
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }
}
