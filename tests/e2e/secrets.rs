//! Credentials given to a race reach the server and nothing else: no stored file, report
//! (every format, shown again later or written with --report-file), progress or log line
//! holds them, in any encoding the client sends them in.

use crate::elasticsearch::{serve, url};
use crate::util::*;
use base64::Engine;
use std::io::BufRead;
use std::path::Path;

/// Every file under `dir`, recursively, as bytes.
fn all_files(dir: &Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() {
            out.extend(all_files(&p));
        } else {
            out.push((p.clone(), std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Runs `race_args` with `secret_env` set, then shows and exports the race in every format,
/// and asserts that none of `secrets` appears anywhere the runner wrote.
fn assert_nothing_leaks(
    env: &Env,
    race_args: &[&str],
    secret_env: &[(&str, &str)],
    secrets: &[String],
) {
    let report_file = env.home.path().join("exports").join("report.md");
    std::fs::create_dir_all(report_file.parent().unwrap()).unwrap();
    let mut args = race_args.to_vec();
    let rf = report_file.to_str().unwrap().to_string();
    args.extend_from_slice(&["--report-file", &rf]);
    let mut cmd = env.command(&args);
    for (k, v) in secret_env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut written: Vec<(String, Vec<u8>)> = vec![
        ("race stdout".into(), out.stdout),
        ("race stderr".into(), out.stderr),
    ];
    for format in ["markdown", "csv", "json"] {
        let out = env
            .command(&["show", "latest", "--report-format", format])
            .envs(secret_env.iter().copied())
            .output()
            .unwrap();
        assert!(out.status.success());
        written.push((format!("show --report-format {format}"), out.stdout));
        written.push((format!("show {format} stderr"), out.stderr));
    }
    let plot = env.home.path().join("exports").join("plot");
    let out = env
        .command(&["plot", "latest", "--out", plot.to_str().unwrap()])
        .output()
        .unwrap();
    written.push(("plot stderr".into(), out.stderr));
    let files = all_files(env.home.path());
    assert!(
        files.iter().any(|(p, _)| p.ends_with("race.json"))
            && files.iter().any(|(p, _)| p.ends_with("report.md")),
        "the race and its report were written: {:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    written.extend(files.into_iter().map(|(p, b)| (p.display().to_string(), b)));
    for (what, bytes) in &written {
        let text = String::from_utf8_lossy(bytes);
        for secret in secrets {
            assert!(!text.contains(secret.as_str()), "{what} holds a credential");
        }
    }
}

#[test]
fn elasticsearch_credentials_are_in_no_file_report_or_log() {
    let env = Env::new();
    let server = serve(&env, &[]);
    let u = url(server.port);
    let race = [
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &u,
    ];
    let (user, password) = ("bench-user", "pw-9f3kq-never-stored");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    assert_nothing_leaks(
        &env,
        &race,
        &[
            ("RUNNER_ES_USERNAME", user),
            ("RUNNER_ES_PASSWORD", password),
        ],
        &[password.to_string(), basic],
    );
    let record = read_json(&env.race_dirs()[0].join("race.json"));
    assert_eq!(
        record["backend"]["details"]["auth"], "basic",
        "the kind of credentials is recorded, not them: {}",
        record["backend"]
    );

    let env = Env::new();
    let api_key = "a2V5LWlkOmFwaS1rZXktbmV2ZXItc3RvcmVk";
    assert_nothing_leaks(
        &env,
        &race,
        &[("RUNNER_ES_API_KEY", api_key)],
        &[api_key.to_string()],
    );
}

#[test]
fn redis_credentials_are_in_no_file_report_or_log() {
    let Some(srv) = crate::redis::server(&["--requirepass", "redis-pw-never-stored"]) else {
        return;
    };
    let env = Env::new();
    let h = crate::redis::host(&srv);
    let race = [
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--track-params",
        "requests=200,clients=[2],transactions=[10]",
    ];
    assert_nothing_leaks(
        &env,
        &race,
        &[
            ("RUNNER_REDIS_USERNAME", "default"),
            ("RUNNER_REDIS_PASSWORD", "redis-pw-never-stored"),
        ],
        &["redis-pw-never-stored".to_string()],
    );
}

#[test]
fn credentials_from_the_file_reach_the_server_and_nothing_else() {
    let Some(srv) = crate::redis::server(&["--requirepass", "file-pw-never-stored"]) else {
        return;
    };
    use std::os::unix::fs::PermissionsExt;
    let secrets_dir = tempfile::tempdir().unwrap();
    let file = secrets_dir.path().join("credentials.yaml");
    std::fs::write(&file, "RUNNER_REDIS_PASSWORD: file-pw-never-stored\n").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let env = Env::new();
    let h = crate::redis::host(&srv);
    let race = [
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--track-params",
        "requests=200,clients=[2],transactions=[10]",
    ];
    // The server wants the password: the race passing AUTH shows the file was read.
    assert_nothing_leaks(
        &env,
        &race,
        &[("RUNNER_CREDENTIALS_FILE", file.to_str().unwrap())],
        &["file-pw-never-stored".to_string()],
    );

    // A file others can read is refused before anything is sent.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let env = Env::new();
    let out = env
        .command(&race)
        .env("RUNNER_CREDENTIALS_FILE", &file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("chmod 600") && !stderr.contains("file-pw-never-stored"),
        "{stderr}"
    );
    assert!(env.race_dirs().is_empty());
}

/// Reads one HTTP/1.1 request's head and body; returns (request line, authorization header).
fn read_request(reader: &mut impl std::io::BufRead) -> Option<(String, String)> {
    let mut line = String::new();
    if reader.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let (mut length, mut auth) = (0usize, String::new());
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).ok()? == 0 {
            return None;
        }
        if h == "\r\n" {
            break;
        }
        let lower = h.to_ascii_lowercase();
        if let Some(v) = lower.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if lower.starts_with("authorization:") {
            auth = h["authorization:".len()..].trim().to_string();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((line, auth))
}

#[test]
fn credentials_a_server_echoes_back_are_redacted_everywhere() {
    // A server that quotes the Authorization header it got in every search error.
    let port = fault_listener(|stream, _| {
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        while let Some((line, auth)) = read_request(&mut reader) {
            let (status, body) = if line.contains("_cluster/health") {
                (200, r#"{"status":"green"}"#.to_string())
            } else if line.contains("_search") {
                (
                    400,
                    format!(
                        r#"{{"error":{{"type":"parse_exception","reason":"bad header [{auth}]"}},"status":400}}"#
                    ),
                )
            } else {
                (200, r#"{"version":{"number":"8.15.0"}}"#.to_string())
            };
            let reply = format!("HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}", body.len());
            if std::io::Write::write_all(&mut stream, reply.as_bytes()).is_err() {
                return;
            }
        }
    });
    let env = Env::new();
    let dir = track_dir(&[("track.yaml", "name: t\nindices: [{name: i}]\noperations: [{name: s, type: search}]\nchallenges: [{name: c, schedule: [{operation: s, iterations: 3}]}]\n")]);
    let u = url(port);
    let race = [
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &u,
    ];
    let (user, password) = ("bench-user", "pw-echoed-never-stored");
    let basic = base64::engine::general_purpose::STANDARD.encode(format!("{user}:{password}"));
    assert_nothing_leaks(
        &env,
        &race,
        &[
            ("RUNNER_ES_USERNAME", user),
            ("RUNNER_ES_PASSWORD", password),
        ],
        &[password.to_string(), basic],
    );
    let record = read_json(&env.race_dirs()[0].join("race.json"));
    let message = record["tasks"][0]["trials"][0]["error_messages"]["bad-request"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("bad header [Basic [redacted]]"),
        "the error is kept, the secret is not: {message}"
    );

    // A Redis server whose AUTH error quotes the password it was sent.
    let port = fault_listener(|stream, _| {
        let mut reader = std::io::BufReader::new(stream.try_clone().unwrap());
        let mut stream = stream;
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 0 {
            let args: usize = line.trim().trim_start_matches('*').parse().unwrap_or(0);
            let mut words = Vec::new();
            for _ in 0..args {
                line.clear();
                let _ = reader.read_line(&mut line);
                line.clear();
                let _ = reader.read_line(&mut line);
                words.push(line.trim().to_string());
            }
            let reply = if words
                .first()
                .is_some_and(|w| w.eq_ignore_ascii_case("AUTH"))
            {
                format!(
                    "-WRONGPASS invalid password '{}'\r\n",
                    words.last().unwrap()
                )
            } else {
                "+PONG\r\n".to_string()
            };
            if std::io::Write::write_all(&mut stream, reply.as_bytes()).is_err() {
                return;
            }
            line.clear();
        }
    });
    let env = Env::new();
    let host = format!("127.0.0.1:{port}");
    let out = env
        .command(&[
            "race",
            "--track",
            "redis-kv",
            "--test-mode",
            "--backend",
            "redis",
            "--target-hosts",
            &host,
        ])
        .env("RUNNER_REDIS_PASSWORD", "redis-pw-echoed-never-stored")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("AUTH failed") && stderr.contains("[redacted]"),
        "{stderr}"
    );
    assert!(!stderr.contains("redis-pw-echoed-never-stored"), "{stderr}");
}

#[test]
fn a_password_inside_target_hosts_is_refused_without_being_printed() {
    let env = Env::new();
    for (track, backend, host) in [
        (
            "redis-kv",
            "redis",
            "redis://user:hosts-pw-never-printed@127.0.0.1:1",
        ),
        (
            "geonames",
            "elasticsearch",
            "http://user:hosts-pw-never-printed@[bad",
        ),
    ] {
        let out = env.run(&[
            "race",
            "--track",
            track,
            "--test-mode",
            "--backend",
            backend,
            "--target-hosts",
            host,
        ]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{backend}: {stderr}");
        assert!(
            stderr.contains("***@") && !stderr.contains("hosts-pw-never-printed"),
            "{backend}: {stderr}"
        );
    }
}
