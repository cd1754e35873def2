//! The elasticsearch backend against `runner serve` (the real binary serving the embedded
//! engine over HTTP) and against a loopback server that injects one fault each.

use crate::redis::{free_port, wait_for_port};
use crate::util::*;
use std::io::{BufReader, Write};
use std::process::{Child, Stdio};

pub struct Serve {
    child: Child,
    pub port: u16,
}

impl Serve {
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `runner serve` on a port of its own choosing (`--port 0`), read from the line it prints:
/// tests running side by side never race for a port.
pub fn serve(env: &Env, extra: &[&str]) -> Serve {
    use std::io::BufRead;
    let mut args = vec!["serve", "--port", "0"];
    args.extend_from_slice(extra);
    let mut child = env
        .command(&args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runner serve starts");
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let port = loop {
        let line = lines
            .next()
            .expect("runner serve says where it listens")
            .expect("readable stderr");
        if let Some(addr) = line.split("listening on ").nth(1) {
            let port = addr.split_whitespace().next().unwrap_or_default();
            break port.rsplit(':').next().unwrap().parse().expect("a port");
        }
    };
    // The rest of its stderr is drained, so a chatty server never blocks on a full pipe.
    std::thread::spawn(move || lines.for_each(drop));
    wait_for_port(port);
    Serve { child, port }
}

pub fn url(port: u16) -> String {
    format!("http://127.0.0.1:{port}")
}

/// Races the track at `track_path` through a fresh `runner serve` (`--quiet`, and `extra`);
/// the server lives as long as the returned handle.
pub fn race_through_serve(track_path: &str, extra: &[&str]) -> (Env, Serve) {
    let env = Env::new();
    let server = serve(&env, &[]);
    let target = url(server.port);
    let mut args = vec![
        "race",
        "--track-path",
        track_path,
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &target,
    ];
    args.extend_from_slice(extra);
    env.ok(&args);
    (env, server)
}

fn tasks<'a>(race: &'a serde_json::Value, name: &str) -> Vec<&'a serde_json::Value> {
    race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["task"] == name)
        .collect()
}

#[test]
fn geonames_through_runner_serve_matches_the_embedded_backend() {
    let over_http = Env::new();
    let server = serve(&over_http, &[]);
    over_http.ok(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let embedded = Env::new();
    embedded.ok(&["race", "--track", "geonames", "--test-mode", "--quiet"]);
    let (a, b) = (over_http.only_race(), embedded.only_race());
    assert_eq!(a["backend"]["kind"], "elasticsearch");
    assert!(
        a["backend"]["version"].as_str().unwrap().contains("8.15.0"),
        "{}",
        a["backend"]
    );
    for (ta, tb) in a["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .zip(b["tasks"].as_array().unwrap())
    {
        for (x, y) in ta["trials"]
            .as_array()
            .unwrap()
            .iter()
            .zip(tb["trials"].as_array().unwrap())
        {
            assert_eq!(x["errors"], 0, "{}: {}", ta["task"], x["error_messages"]);
            // The same documents and queries give the same hits and units in both paths.
            assert_eq!(
                (&x["hits"], &x["units"]),
                (&y["hits"], &y["units"]),
                "task {}",
                ta["task"]
            );
        }
    }
    let search = tasks(&a, "search-sankt-georgen");
    assert!(search[0]["trials"][0]["hits"].as_u64().unwrap() > 0);
}

#[test]
fn item_failures_inside_a_200_are_errors_with_their_reason() {
    let track = "name: t
corpora:
  - name: c
    target-index: i
    documents: [{source-file: docs.json}]
indices: [{name: i, body: {mappings: {properties: {pop: {type: long}}}}}]
operations:
  - {name: delete, type: delete-index}
  - {name: create, type: create-index}
  - {name: bulk, type: bulk, params: {bulk-size: 4}}
challenges:
  - name: c
    schedule: [{operation: delete}, {operation: create}, {operation: bulk}]
";
    let dir = track_dir(&[
        ("track.yaml", track),
        (
            "docs.json",
            "{\"pop\":1}\n{\"pop\":\"many\"}\n{\"pop\":3}\n{\"pop\":4}\n",
        ),
    ]);
    let env = Env::new();
    let server = serve(&env, &[]);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let race = env.only_race();
    let bulk = &tasks(&race, "bulk")[0]["trials"][0];
    assert_eq!(bulk["units"], 3, "{bulk}");
    assert_eq!(bulk["errors_by_kind"]["item-failures"], 1, "{bulk}");
    let reason = bulk["error_messages"]["item-failures"].as_str().unwrap();
    assert!(reason.contains("document_parsing_exception"), "{reason}");
}

#[test]
fn a_bulk_reply_missing_items_counts_the_missing_documents_as_failed() {
    let track = "name: t
corpora: [{name: c, target-index: i, documents: [{source-file: docs.json}]}]
operations: [{name: bulk, type: bulk, params: {bulk-size: 4}}]
challenges: [{name: c, schedule: [{operation: bulk}]}]
";
    let docs = "{\"a\":1}\n".repeat(8);
    let dir = track_dir(&[("track.yaml", track), ("docs.json", &docs)]);
    let env = Env::new();
    let port = fault_server(Fault::ShortBulk, 200);
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(port),
    ]);
    let race = env.only_race();
    let bulk = &tasks(&race, "bulk")[0]["trials"][0];
    // Two requests of four documents, each answered with one item: two documents indexed,
    // six counted as failed items.
    assert_eq!(bulk["units"], 2, "{bulk}");
    assert_eq!(bulk["errors_by_kind"]["item-failures"], 6, "{bulk}");
    let reason = bulk["error_messages"]["item-failures"].as_str().unwrap();
    assert!(
        reason.contains("accounts for 1 of the 4 documents sent: 3 missing"),
        "{reason}"
    );
}

#[test]
fn an_unreachable_cluster_is_said_before_the_race() {
    let env = Env::new();
    let port = free_port();
    let out = env.run(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(port),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot reach the cluster")
            && stderr.contains(&port.to_string())
            && stderr.contains("--target-hosts"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// What the fault server does with `_search` requests (GET / and health answer normally).
#[derive(Clone, Copy)]
pub enum Fault {
    Status(u16),
    Garbage,
    CloseMidResponse,
    Slow,
    /// The first search closes its connection and the server stops listening: every later
    /// connection is refused.
    Refuse,
    /// A 301 to `/`, which answers 200: following it would count the search as done.
    Redirect,
    /// A chunked body that never ends (for up to five seconds, or until the client hangs up).
    EndlessChunked,
    /// No answer for 20 s, then the connection closes.
    Stall,
    /// `_bulk` is answered 200, `errors:false`, with one item whatever was sent.
    ShortBulk,
    /// `GET /` (the connection check) is answered with a chunked body that never ends.
    EndlessRoot,
}

/// A 200 with a chunked body that never ends: for five seconds, or until the client hangs up.
fn endless_chunked(stream: &mut std::net::TcpStream) {
    let _ = stream.write_all(
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    let chunk = [b"10000\r\n".as_slice(), &[b' '; 0x10000], b"\r\n"].concat();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while std::time::Instant::now() < until && stream.write_all(&chunk).is_ok() {}
}

/// A loopback HTTP/1.1 server on std threads: enough Elasticsearch to pass the start-up
/// check, then `fault` on every search.
pub fn fault_server(fault: Fault, root_status: u16) -> u16 {
    fault_listener(move |stream, stop| {
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while let Some((request_line, _body)) = read_http_request(&mut reader) {
            let reply = |status: u16, body: &str| {
                format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len())
            };
            if request_line.starts_with("GET / ") && matches!(fault, Fault::EndlessRoot) {
                endless_chunked(&mut stream);
                return;
            }
            let answer = if request_line.contains("_bulk") && matches!(fault, Fault::ShortBulk) {
                reply(
                    200,
                    r#"{"took":1,"errors":false,"items":[{"index":{"_id":"1","status":201}}]}"#,
                )
            } else if request_line.contains("_cluster/health") {
                reply(200, r#"{"status":"green"}"#)
            } else if !request_line.contains("_search") {
                if root_status != 200 {
                    reply(
                        root_status,
                        r#"{"error":{"type":"security_exception","reason":"missing authentication credentials"},"status":401}"#,
                    )
                } else {
                    reply(200, r#"{"version":{"number":"8.15.0"}}"#)
                }
            } else {
                match fault {
                    Fault::Status(s) => reply(
                        s,
                        r#"{"error":{"type":"injected","reason":"fault"},"status":0}"#,
                    ),
                    Fault::Garbage => "SSH-2.0-nonsense\r\n\r\n".to_string(),
                    Fault::CloseMidResponse => {
                        let _ = stream
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n{\"hits\":");
                        return;
                    }
                    Fault::Refuse => {
                        stop.store(true, std::sync::atomic::Ordering::SeqCst);
                        return;
                    }
                    Fault::Stall => {
                        std::thread::sleep(std::time::Duration::from_secs(20));
                        return;
                    }
                    Fault::Slow => {
                        std::thread::sleep(std::time::Duration::from_millis(1500));
                        reply(200, r#"{"hits":{"total":{"value":1}}}"#)
                    }
                    Fault::Redirect => {
                        "HTTP/1.1 301 Moved Permanently\r\nlocation: /\r\ncontent-length: 0\r\n\r\n"
                            .to_string()
                    }
                    Fault::EndlessChunked => {
                        endless_chunked(&mut stream);
                        return;
                    }
                    Fault::ShortBulk | Fault::EndlessRoot => {
                        reply(200, r#"{"hits":{"total":{"value":1}}}"#)
                    }
                }
            };
            if stream.write_all(answer.as_bytes()).is_err() {
                return;
            }
        }
    })
}

const SEARCH_TRACK: &str = "name: t
indices: [{name: i}]
operations:
  - {name: s, type: search}
challenges:
  - name: c
    schedule: [{operation: s, iterations: 3}]
";

fn race_against(port: u16, extra: &[&str]) -> (Env, std::process::Output) {
    let u = url(port);
    let mut args = vec!["--backend", "elasticsearch", "--target-hosts", &u];
    args.extend_from_slice(extra);
    race_track(SEARCH_TRACK, &args)
}

#[test]
fn each_fault_is_counted_by_kind_and_continue_finishes() {
    let cases = [
        (Fault::Status(429), "too-many-requests", "429"),
        (Fault::Status(503), "server-error", "503"),
        (Fault::Status(403), "unauthorized", "403"),
        (Fault::Garbage, "protocol", ""),
        (Fault::CloseMidResponse, "connection", ""),
        (Fault::Slow, "timeout", ""),
        (Fault::Refuse, "connection", ""),
        (Fault::Redirect, "redirect", "301"),
    ];
    for (fault, kind, text) in cases {
        let port = fault_server(fault, 200);
        let (env, out) = race_against(port, &["--client-options", "timeout:0.5"]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{kind}: {stderr}");
        let race = env.only_race();
        let trial = &race["tasks"][0]["trials"][0];
        assert_eq!(trial["errors_by_kind"][kind], 3, "{kind}: {trial}");
        assert_eq!(trial["successes"], 0, "{kind}");
        assert_eq!(trial["error_rate"], 1.0, "{kind}");
        assert!(
            trial["error_messages"][kind]
                .as_str()
                .unwrap()
                .contains(text),
            "{kind}: {}",
            trial["error_messages"]
        );
        let summary = String::from_utf8_lossy(&out.stdout);
        assert!(
            summary.contains("100.00%") && summary.contains(&format!("{kind}: 3")),
            "{kind}: the summary reports the error rate and kind: {summary}"
        );
        eprintln!("FAULT elasticsearch {kind}: continue -> exit 0, 3 of 3 counted as {kind}");

        // The same fault under --on-error abort stops at the first error, with its message.
        let port = fault_server(fault, 200);
        let (env, out) = race_against(
            port,
            &["--client-options", "timeout:0.5", "--on-error", "abort"],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{kind}: {stderr}");
        assert!(stderr.contains("race stopped early"), "{kind}: {stderr}");
        let race = env.only_race();
        assert_eq!(race["status"], "aborted", "{kind}");
        assert_eq!(
            race["tasks"][0]["trials"][0]["errors_by_kind"][kind], 1,
            "{kind}: one error, then the stop"
        );
        eprintln!("FAULT elasticsearch {kind}: abort -> exit 1, status aborted after 1 error");
    }
}

#[test]
fn abort_stops_at_the_first_error_with_its_message() {
    let port = fault_server(Fault::Status(503), 200);
    let (env, out) = race_against(port, &["--on-error", "abort"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("503") && stderr.contains("injected: fault"),
        "{stderr}"
    );
    assert_eq!(env.only_race()["status"], "aborted");
}

#[test]
fn a_cluster_wanting_credentials_names_the_variables_and_never_the_secret() {
    let port = fault_server(Fault::Status(200), 401);
    let (_, out) = race_against(port, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("401") && stderr.contains("RUNNER_ES_USERNAME"),
        "{stderr}"
    );
    let dir = track_dir(&[("track.yaml", SEARCH_TRACK)]);
    let env = Env::new();
    let out = env
        .command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &url(port),
        ])
        .env("RUNNER_ES_USERNAME", "elastic")
        .env("RUNNER_ES_PASSWORD", "s3cr3t-pw")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refused the credentials") && !stderr.contains("s3cr3t-pw"),
        "{stderr}"
    );
}

#[test]
fn tls_to_a_plain_http_server_fails_clearly() {
    let port = fault_server(Fault::Status(200), 200);
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", SEARCH_TRACK)]);
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &format!("https://127.0.0.1:{port}"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot reach the cluster") && !stderr.contains("panicked"),
        "{stderr}"
    );
}

#[test]
fn stub_mode_answers_search_and_bulk_without_work() {
    let env = Env::new();
    let server = serve(&env, &["--stub"]);
    env.ok(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &url(server.port),
    ]);
    let race = env.only_race();
    let search = &tasks(&race, "search-sankt-georgen")[0]["trials"][0];
    assert_eq!(
        (&search["errors"], &search["hits"]),
        (&serde_json::json!(0), &serde_json::json!(0)),
        "{search}"
    );
    let bulk = &tasks(&race, "index-append")[0]["trials"][0];
    assert_eq!(bulk["errors"], 0, "{bulk}");
    assert!(bulk["units"].as_u64().unwrap() > 0);
}

#[test]
fn https_with_a_ca_file_verifies_and_measures_and_an_unknown_ca_is_refused() {
    let have_openssl = std::process::Command::new("openssl")
        .arg("version")
        .output()
        .is_ok();
    if !have_openssl {
        assert!(std::env::var_os("CI").is_none(), "CI must install openssl");
        eprintln!("NOT CHECKED: openssl is not installed");
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    crate::redis_tls::make_certs(certs.path());
    let env = Env::new();
    let (cert, key) = (
        certs.path().join("server.pem"),
        certs.path().join("server.key"),
    );
    let server = serve(
        &env,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let ca = certs.path().join("ca.pem");
    let race = |env: &Env, host: &str, options: &str| {
        env.run(&[
            "race",
            "--track",
            "geonames",
            "--test-mode",
            "--quiet",
            "--include-tasks",
            GEONAMES_INDEX_AND_SEARCH,
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &format!("https://{host}:{}", server.port),
            "--client-options",
            options,
        ])
    };
    // Verified against the test CA, by name and by IP address, with gzip request bodies.
    for host in ["localhost", "127.0.0.1"] {
        let env = Env::new();
        let out = race(
            &env,
            host,
            &format!("tls_ca_file:{},compression:true", ca.display()),
        );
        assert!(
            out.status.success(),
            "{host}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let record = env.only_race();
        let bulk = &tasks(&record, "index-append")[0]["trials"][0];
        assert_eq!(
            bulk["units"].as_u64().unwrap() + bulk["warmup_units"].as_u64().unwrap(),
            1000,
            "{bulk}"
        );
        let search = tasks(&record, "search-sankt-georgen");
        let tr = &search[0]["trials"][0];
        assert_eq!(
            (tr["errors"].as_u64(), tr["hits"].as_u64()),
            (Some(0), Some(20 * 17)),
            "{tr}"
        );
    }
    // The bundled roots do not know the test CA: refused before the race, clearly.
    let env = Env::new();
    let out = race(&env, "localhost", "timeout:5");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot reach the cluster")
            && stderr.to_lowercase().contains("certificate"),
        "{stderr}"
    );
    // Unless verification is turned off, which the record says.
    let env = Env::new();
    let out = race(&env, "localhost", "verify_certs:false");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.only_race()["backend"]["details"]["verify_certs"], false);
}

/// `ignore-response-error-level: non-fatal` (Rally's key): under `--on-error abort`, error
/// responses are counted and the race goes on; a broken connection still stops it.
#[test]
fn non_fatal_response_errors_do_not_abort_but_broken_connections_do() {
    let track = SEARCH_TRACK.replace(
        "{operation: s, iterations: 3}",
        "{operation: s, iterations: 3, ignore-response-error-level: non-fatal}",
    );
    let port = fault_server(Fault::Status(503), 200);
    let u = url(port);
    let (env, out) = race_track(
        &track,
        &[
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &u,
            "--on-error",
            "abort",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    assert_eq!(
        (
            race["status"].as_str(),
            race["tasks"][0]["trials"][0]["errors_by_kind"]["server-error"].as_u64()
        ),
        (Some("completed"), Some(3))
    );
    let port = fault_server(Fault::CloseMidResponse, 200);
    let u = url(port);
    let (env, out) = race_track(
        &track,
        &[
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &u,
            "--on-error",
            "abort",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(env.only_race()["status"], "aborted");
}

#[test]
fn an_endless_body_is_cut_off_within_bounded_memory() {
    // Under a 2 GiB address-space limit: before, the whole body was buffered until the
    // allocator gave up, whatever the timeout said.
    let port = fault_server(Fault::EndlessChunked, 200);
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", SEARCH_TRACK)]);
    let runner = env!("CARGO_BIN_EXE_runner");
    let script = format!("ulimit -v 2097152 && exec '{runner}' race --track-path '{}' --quiet --backend elasticsearch --target-hosts {} --client-options timeout:30", dir.path().display(), url(port));
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
            .contains("past the 67108864-byte limit"),
        "{trial}"
    );
}

/// `runner serve --record FILE`: every request of a race whole, in order, one JSON line each,
/// and no credential (headers are never written).
#[test]
fn serve_records_every_request_whole_and_no_header() {
    let env = Env::new();
    let record = env.home.path().join("requests.jsonl");
    let server = serve(&env, &["--record", record.to_str().unwrap()]);
    let out = env
        .command(&[
            "race",
            "--track",
            "geonames",
            "--test-mode",
            "--quiet",
            "--include-tasks",
            GEONAMES_INDEX_AND_SEARCH,
            "--target-hosts",
            &url(server.port),
        ])
        .env("RUNNER_ES_USERNAME", "elastic")
        .env("RUNNER_ES_PASSWORD", "recorded-never-pw")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(!text.contains("recorded-never-pw") && !text.contains("Authorization"));
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l["seq"].as_u64(), Some(i as u64), "in order: {l}");
    }
    let bulks: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["path"] == "/geonames/_bulk")
        .collect();
    let documents: usize = bulks
        .iter()
        .map(|b| b["body"].as_array().unwrap().len() / 2)
        .sum();
    // Three bulk sizes × three trials, the 1,000 documents of test mode each time.
    assert_eq!(documents, 9000, "every document sent, as NDJSON lines");
    assert_eq!(bulks[0]["body_format"], "ndjson");
    let search = lines
        .iter()
        .find(|l| l["path"] == "/geonames/_search")
        .expect("a search");
    assert_eq!(
        search["body"]["query"]["match_phrase"]["name"], "Sankt Georgen",
        "{search}"
    );
    assert!(lines
        .iter()
        .any(|l| l["method"] == "DELETE" && l["path"] == "/geonames"));
}
