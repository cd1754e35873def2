//! The redis backend against real redis-server processes (Debian's package), each test on a
//! port of its own, and the faults a server can throw at a client.

use crate::util::*;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    child: Child,
    pub port: u16,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Starts redis-server with extra arguments; None (with a loud note) when it is not installed
/// outside CI. In CI (`.ci/run` installs it) a missing server is a failure.
pub fn server(extra: &[&str]) -> Option<Server> {
    if Command::new("redis-server")
        .arg("--version")
        .output()
        .is_err()
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install redis-server (apt-get install redis-server)"
        );
        eprintln!("NOT CHECKED: redis-server is not installed (apt-get install redis-server)");
        return None;
    }
    let port = free_port();
    let child = Command::new("redis-server")
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
        ])
        .args(extra)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port);
    Some(Server { child, port })
}

/// Waits until something listens on the loopback port (a server just spawned).
pub fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "redis-server did not start listening on port {port}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn host(s: &Server) -> String {
    format!("127.0.0.1:{}", s.port)
}

#[test]
fn redis_kv_track_runs_against_a_real_server() {
    let Some(srv) = server(&[]) else { return };
    let env = Env::new();
    let h = host(&srv);
    env.ok(&[
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--quiet",
        "--track-params",
        "requests=2000,clients=[1,50],transactions=[10]",
    ]);
    let race = env.only_race();
    assert_eq!(race["backend"]["kind"], "redis");
    assert!(
        race["backend"]["version"]
            .as_str()
            .unwrap()
            .starts_with("redis "),
        "{}",
        race["backend"]
    );
    // Recorded so that races with and without busy-polling are told apart.
    assert!(
        race["backend"]["details"]["busy_poll_below_clients"]
            .as_u64()
            .unwrap()
            >= 1,
        "{}",
        race["backend"]
    );
    for t in race["tasks"].as_array().unwrap() {
        let tr = &t["trials"][0];
        assert_eq!(tr["errors"], 0, "{t}");
        assert_eq!(
            tr["operations"],
            if t["task"] == "set-transactions" {
                180
            } else {
                1800
            }
        );
    }
    let tx = &tasks(&race, "set-transactions")[0]["trials"][0];
    assert_eq!(
        tx["requests"], 1800,
        "a MULTI/EXEC of 10 writes is one operation and 10 requests"
    );
    let gets = &tasks(&race, "get")[0]["trials"][0];
    assert!(
        gets["hits"].as_u64().unwrap() > 0,
        "gets find keys the sets wrote"
    );
    let dbsize = Command::new("redis-cli")
        .args(["-p", &srv.port.to_string(), "DBSIZE"])
        .output()
        .unwrap();
    let keys: u64 = String::from_utf8_lossy(&dbsize.stdout)
        .trim()
        .parse()
        .unwrap();
    assert!(keys > 1000, "the server really holds the keys: {keys}");
}

#[test]
fn server_not_running_is_a_clear_error() {
    let env = Env::new();
    let port = free_port();
    let out = env.run(&[
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &format!("127.0.0.1:{port}"),
        "--quiet",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("redis at 127.0.0.1:{port}"))
            && stderr.contains("is redis-server running?"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn auth_failure_names_the_variables_and_not_the_password() {
    let Some(srv) = server(&["--requirepass", "right-secret"]) else {
        return;
    };
    let env = Env::new();
    let h = host(&srv);
    let out = env
        .command(&[
            "race",
            "--track",
            "redis-kv",
            "--backend",
            "redis",
            "--target-hosts",
            &h,
            "--quiet",
        ])
        .env("RUNNER_REDIS_PASSWORD", "wrong-secret")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("AUTH failed")
            && stderr.contains("RUNNER_REDIS_PASSWORD")
            && !stderr.contains("wrong-secret"),
        "{stderr}"
    );
    // With the right password the race runs, and the password is in no stored file.
    let out = env
        .command(&[
            "race",
            "--track",
            "redis-kv",
            "--backend",
            "redis",
            "--target-hosts",
            &h,
            "--quiet",
            "--track-params",
            "requests=200,clients=[2],transactions=[10]",
        ])
        .env("RUNNER_REDIS_PASSWORD", "right-secret")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("right-secret"));
    for dir in env.race_dirs() {
        for f in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(f.unwrap().path()).unwrap();
            assert!(!text.contains("right-secret"));
        }
    }
}

#[test]
fn error_replies_are_counted_by_kind() {
    // With no memory to spare and no eviction, every SET is refused with an -OOM error reply.
    let Some(srv) = server(&["--maxmemory", "1", "--maxmemory-policy", "noeviction"]) else {
        return;
    };
    let env = Env::new();
    let h = host(&srv);
    env.ok(&[
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--quiet",
        "--track-params",
        "requests=100,clients=[1],transactions=[10]",
    ]);
    let race = env.only_race();
    let set = &tasks(&race, "set")[0]["trials"][0];
    assert_eq!(set["errors_by_kind"]["error-reply"], 90, "{set}");
    assert!(
        set["error_messages"]["error-reply"]
            .as_str()
            .unwrap()
            .contains("OOM"),
        "{set}"
    );
    let get = &tasks(&race, "get")[0]["trials"][0];
    assert_eq!(get["errors"], 0, "reads still work");
    let out = env.run(&[
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--quiet",
        "--on-error",
        "abort",
        "--track-params",
        "requests=100,clients=[1]",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("OOM"));
}

#[test]
fn a_server_killed_mid_race_keeps_what_was_measured() {
    let Some(mut srv) = server(&[]) else { return };
    let env = Env::new();
    let h = host(&srv);
    let track = track_dir(&[(
        "track.yaml",
        "name: long
operations: [{name: set, type: put, params: {keyspace: 1000}}]
challenges:
  - name: c
    schedule:
      - {name: before, operation: set, iterations: 500}
      - {name: during, operation: set, clients: 4, time-period: 5s, target-throughput: 2000}
",
    )]);
    let mut child = env
        .command(&[
            "race",
            "--track-path",
            track.path().to_str().unwrap(),
            "--backend",
            "redis",
            "--target-hosts",
            &h,
            "--quiet",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    srv.child.kill().unwrap();
    srv.child.wait().unwrap();
    let status = child.wait().unwrap();
    assert_eq!(
        status.code(),
        Some(0),
        "continue is the default: the race finishes, counting errors"
    );
    let race = env.only_race();
    assert_eq!(race["status"], "completed");
    assert_eq!(tasks(&race, "before")[0]["trials"][0]["errors"], 0);
    let during = &tasks(&race, "during")[0]["trials"][0];
    assert!(
        during["successes"].as_u64().unwrap() > 100,
        "operations before the kill are kept: {during}"
    );
    assert!(
        during["errors_by_kind"]["connection"].as_u64().unwrap() > 0,
        "{during}"
    );
}

/// The redis-server `.ci/run` started (RUNNER_TEST_REDIS), or one of our own.
pub fn shared_server() -> Option<(Option<Server>, String)> {
    match std::env::var("RUNNER_TEST_REDIS") {
        Ok(h) if !h.is_empty() => Some((None, h)),
        _ => server(&["--maxclients", "4096"]).map(|s| {
            let h = host(&s);
            (Some(s), h)
        }),
    }
}

#[test]
fn a_thousand_clients_each_on_its_own_connection() {
    let Some((_own, h)) = shared_server() else {
        return;
    };
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        &h,
        "--include-tasks",
        "get",
        "--track-params",
        "requests=20000,clients=[1000]",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let race = env.only_race();
    let t = &tasks(&race, "get")[0];
    assert_eq!(t["clients"], 1000);
    let tr = &t["trials"][0];
    assert_eq!(
        (
            tr["errors"].as_u64(),
            tr["operations"].as_u64(),
            tr["warmup_operations"].as_u64()
        ),
        (Some(0), Some(18000), Some(2000)),
        "{tr}"
    );
}

#[test]
fn too_low_an_open_files_limit_is_said_before_connecting() {
    let Some((_own, h)) = shared_server() else {
        return;
    };
    let env = Env::new();
    let runner = env!("CARGO_BIN_EXE_runner");
    // `ulimit -n` in a shell lowers the hard limit too, which only root could raise again.
    let script = format!("ulimit -n 256 && exec '{runner}' race --track redis-kv --backend redis --target-hosts {h} --quiet --include-tasks get --track-params 'requests=2000,clients=[1000]'");
    let out = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .env("RUNNER_HOME", env.home.path())
        .env("RUNNER_TRACKS_DIR", repo().join("tracks"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("1000 clients need 1064 open files, but the hard limit is 256"),
        "{stderr}"
    );
    assert!(env.race_dirs().is_empty());
}

#[test]
fn connections_killed_mid_pipeline_are_counted_and_reopened() {
    let Some(srv) = server(&[]) else { return };
    let env = Env::new();
    let h = host(&srv);
    // 1,000-deep pipelines keep replies in flight nearly all the time, so CLIENT KILL lands
    // inside a pipeline; the client counts a connection error and reconnects for the next one.
    let track = track_dir(&[(
        "track.yaml",
        "name: killed
operations: [{name: set, type: put, params: {keyspace: 1000, pipeline: 1000}}]
challenges:
  - name: c
    schedule:
      - {name: during, operation: set, clients: 2, time-period: 3s}
",
    )]);
    let mut child = env
        .command(&[
            "race",
            "--track-path",
            track.path().to_str().unwrap(),
            "--backend",
            "redis",
            "--target-hosts",
            &h,
            "--quiet",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let port = srv.port.to_string();
    let mut kills = 0;
    let deadline = Instant::now() + Duration::from_secs(30);
    while child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the race did not finish");
        std::thread::sleep(Duration::from_millis(300));
        let out = Command::new("redis-cli")
            .args(["-p", &port, "CLIENT", "KILL", "TYPE", "normal"])
            .output()
            .unwrap();
        kills += String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse::<u64>()
            .unwrap_or(0);
    }
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(kills > 0, "CLIENT KILL closed no connection");
    let race = env.only_race();
    let during = &tasks(&race, "during")[0]["trials"][0];
    assert!(
        during["errors_by_kind"]["connection"].as_u64().unwrap() > 0,
        "{during}"
    );
    assert!(
        during["successes"].as_u64().unwrap() > 0,
        "operations between the kills succeed after reconnecting: {during}"
    );
    assert!(
        during["error_messages"]["connection"]
            .as_str()
            .unwrap()
            .contains("redis at"),
        "{during}"
    );
}
