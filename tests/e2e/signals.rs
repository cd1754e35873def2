use crate::util::*;
use std::time::{Duration, Instant};

const LONG_TRACK: &str = "name: long
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges:
  - name: c
    schedule:
      - {name: short, operation: nap, iterations: 20, trials: 3}
      - {name: long, operation: nap, time-period: 60s}
";

/// Waits until the running race has stored `n` trials (each in `trials/` as it ends).
fn wait_for_trials(env: &Env, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(dir) = env.race_dirs().first() {
            let stored = std::fs::read_dir(dir.join("trials"))
                .map(|d| {
                    d.flatten()
                        .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
                        .count()
                })
                .unwrap_or(0);
            if stored >= n {
                return;
            }
        }
        assert!(
            Instant::now() < deadline,
            "the race never stored {n} trials"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn signal(pid: u32, sig: &str) {
    let status = std::process::Command::new("kill")
        .args([sig, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Sends SIGINT inside the long task once `trials_before` trials are stored; asserts the race
/// stops promptly with exit 130 and keeps the short task's trials and the partial one.
fn ctrl_c_mid_race(what: &str, track: &str, trials_before: usize, extra: &[&str]) {
    signal_mid_race("-INT", what, track, trials_before, extra);
}

/// As [`ctrl_c_mid_race`], with the signal `sig` (`-INT`, `-TERM`).
fn signal_mid_race(sig: &str, what: &str, track: &str, trials_before: usize, extra: &[&str]) {
    let dir = track_dir(&[("track.yaml", track)]);
    let env = Env::new();
    let mut args = vec![
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let mut child = env
        .command(&args)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_trials(&env, trials_before);
    std::thread::sleep(Duration::from_millis(500)); // inside the 60 s task
    let sent = Instant::now();
    signal(child.id(), sig);
    let status = child.wait().unwrap();
    // Typically tens of milliseconds; the bound leaves room for a loaded CI machine.
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "{what}: took {:?} to stop",
        sent.elapsed()
    );
    eprintln!(
        "{sig} {what}: stopped {:?} after the signal",
        sent.elapsed()
    );
    assert_eq!(status.code(), Some(130), "{what}");
    let race = env.only_race();
    assert_eq!(race["status"], "interrupted", "{what}");
    assert_eq!(
        tasks(&race, "short")[0]["trials"].as_array().unwrap().len(),
        3,
        "{what}"
    );
    let long = &tasks(&race, "long")[0]["trials"][0];
    assert_eq!(long["interrupted"], true, "{what}");
    assert!(
        long["operations"].as_u64().unwrap() > 10,
        "{what}: the partial trial's measurements are kept: {long}"
    );
    assert_eq!(
        long["errors"], 0,
        "{what}: stopping is not an error: {long}"
    );
}

#[test]
fn ctrl_c_stops_within_a_second_and_keeps_what_was_measured() {
    ctrl_c_mid_race("embedded", LONG_TRACK, 3, &[]);
}

#[test]
fn sigterm_stops_a_race_as_ctrl_c_does() {
    signal_mid_race("-TERM", "embedded", LONG_TRACK, 3, &[]);
}

#[test]
fn ctrl_c_mid_race_over_the_network_backends() {
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let es_track = "name: long
indices: [{name: i}]
operations: [{name: ci, type: create-index}, {name: s, type: search, params: {index: i}}]
challenges:
  - name: c
    schedule:
      - {operation: ci}
      - {name: short, operation: s, iterations: 20, trials: 3}
      - {name: long, operation: s, clients: 2, time-period: 60s, target-throughput: 500}
";
    ctrl_c_mid_race(
        "elasticsearch",
        es_track,
        4,
        &[
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &crate::elasticsearch::url(server.port),
        ],
    );
    let Some((_own, host)) = crate::redis::shared_server() else {
        return;
    };
    let redis_track = "name: long
operations: [{name: g, type: get, params: {keyspace: 100}}]
challenges:
  - name: c
    schedule:
      - {name: short, operation: g, iterations: 20, trials: 3}
      - {name: long, operation: g, clients: 2, time-period: 60s, target-throughput: 500}
";
    ctrl_c_mid_race(
        "redis",
        redis_track,
        3,
        &["--backend", "redis", "--target-hosts", &host],
    );
}

/// Signals a race whose only operation never ends, one second in; asserts the race stops at
/// once with the operation dropped and counted as interrupted, not as an error.
fn signal_with_an_operation_in_flight(sig: &str, what: &str, track: &str, extra: &[&str]) {
    let dir = track_dir(&[("track.yaml", track)]);
    let env = Env::new();
    let mut args = vec![
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ];
    args.extend_from_slice(extra);
    let child = env
        .command(&args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Instant::now();
    signal(child.id(), sig);
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    eprintln!("{sig} {what} with an operation in flight: exited {took:?} after the signal");
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Typically tens of milliseconds; the bound leaves room for a loaded CI machine.
    assert!(took < Duration::from_secs(3), "{what}: took {took:?}");
    assert_eq!(out.status.code(), Some(130), "{what}: {stderr}");
    let race = env.only_race();
    assert_eq!(race["status"], "interrupted", "{what}");
    let trial = &tasks(&race, "stuck")[0]["trials"][0];
    assert_eq!(trial["interrupted"], true, "{what}: {trial}");
    assert_eq!(trial["interrupted_operations"], 1, "{what}: {trial}");
    assert_eq!(
        trial["errors"], 0,
        "{what}: dropping is not an error: {trial}"
    );
    assert_eq!(trial["operations"], 0, "{what}: {trial}");
}

#[test]
fn a_signal_drops_the_operation_in_flight_on_every_backend() {
    let track = |op: &str| {
        format!("name: t\noperations: [{op}]\nchallenges: [{{name: c, schedule: [{{name: stuck, operation: o, iterations: 2}}]}}]\n")
    };
    let es = format!(
        "http://127.0.0.1:{}",
        crate::elasticsearch::fault_server(crate::elasticsearch::Fault::Stall, 200)
    );
    let redis = format!(
        "127.0.0.1:{}",
        crate::redis_faults::resp_fault_server(crate::redis_faults::Fault::Stall)
    );
    let cases = [
        (
            "embedded",
            "{name: o, type: sleep, params: {duration: 20s}}",
            None,
        ),
        (
            "elasticsearch",
            "{name: o, type: search, params: {index: i}}",
            Some(es),
        ),
        (
            "redis",
            "{name: o, type: get, params: {keyspace: 10}}",
            Some(redis),
        ),
    ];
    for (backend, op, host) in &cases {
        let mut args = vec!["--backend", backend];
        if let Some(host) = host {
            // A network client's timeout well above the in-flight operation's.
            args.extend(["--target-hosts", host, "--client-options", "timeout:60"]);
        }
        for sig in ["-INT", "-TERM"] {
            signal_with_an_operation_in_flight(sig, backend, &track(op), &args);
        }
    }
}

#[test]
fn sigkill_leaves_completed_trials_readable_and_marked_incomplete() {
    let dir = track_dir(&[("track.yaml", LONG_TRACK)]);
    let env = Env::new();
    let mut child = env
        .command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ])
        .spawn()
        .unwrap();
    wait_for_trials(&env, 3);
    signal(child.id(), "-KILL");
    child.wait().unwrap();
    let race = env.only_race();
    assert_eq!(
        race["status"], "running",
        "the record says running: nobody could write otherwise"
    );
    let shown = env.ok(&["show", "latest"]);
    assert!(
        shown.contains("incomplete: the runner was killed"),
        "{shown}"
    );
    assert!(shown.contains("| short | - | 1 | - |"), "{shown}");
    let listed = env.ok(&["list", "races"]);
    assert!(listed.contains("incomplete"), "{listed}");
}

#[test]
fn ctrl_c_during_the_connection_check_stops_at_once() {
    // A cluster that accepts and never answers: the check would wait for its 60 s timeout.
    let port = fault_listener(|stream, _| {
        let mut buf = [0u8; 4096];
        let mut stream = &stream;
        while std::io::Read::read(&mut stream, &mut buf).is_ok_and(|n| n > 0) {}
    });
    let env = Env::new();
    let host = format!("http://127.0.0.1:{port}");
    let child = env
        .command(&[
            "race",
            "--track",
            "geonames",
            "--test-mode",
            "--quiet",
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &host,
            "--client-options",
            "timeout:60",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let sent = Instant::now();
    signal(child.id(), "-INT");
    let out = child.wait_with_output().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(3),
        "took {:?}",
        sent.elapsed()
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("interrupted while checking the backend"),
        "{stderr}"
    );
    assert!(
        env.race_dirs().is_empty(),
        "nothing was measured, nothing is stored"
    );
}
