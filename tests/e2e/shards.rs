//! One race run by several `runner` processes: shards started by hand (`--shard i/N`) and by
//! a real launcher (`mpirun`), against `runner serve` and a real redis-server; a shard killed
//! mid-race, one that never joins, one that stops at a step; and the merge, checked exactly
//! against the shards' own stored histograms.

use crate::elasticsearch::{serve, url};
use crate::redis::{free_port, shared_server};
use crate::util::*;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

const DOCS: usize = 1001;

/// Bulk through a corpus (5 clients), then a throttled search (4 clients): shards 0..N each
/// take their part; the admin tasks (one client) run on shard 0.
fn sharded_track() -> tempfile::TempDir {
    let track = "name: sharded
corpora: [{name: c, target-index: i, documents: [{source-file: docs.json}]}]
indices: [{name: i, body: {mappings: {properties: {n: {type: long}}}}}]
operations:
  - {name: delete, type: delete-index}
  - {name: create, type: create-index}
  - {name: bulk, type: bulk, params: {bulk-size: 7}}
  - {name: refresh, type: refresh}
  - {name: all, type: search, params: {index: i, body: {query: {match_all: {}}}}}
challenges:
  - name: c
    schedule:
      - {operation: delete}
      - {operation: create}
      - {operation: bulk, clients: 5}
      - {operation: refresh}
      - {operation: all, clients: 4, warmup: 10, iterations: 203, target-throughput: 400}
";
    let docs: String = (0..DOCS).map(|n| format!("{{\"n\":{n}}}\n")).collect();
    track_dir(&[("track.yaml", track), ("docs.json", &docs)])
}

/// Starts shard `i` of `n` with these race arguments.
fn start_shard(env: &Env, i: u32, n: u32, port: u16, args: &[&str]) -> Child {
    let shard = format!("{i}/{n}");
    let coordinator = format!("127.0.0.1:{port}");
    let mut all = vec![
        "race",
        "--quiet",
        "--shard",
        &shard,
        "--coordinator",
        &coordinator,
    ];
    all.extend_from_slice(args);
    env.command(&all)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runner starts")
}

fn finish(child: Child) -> Output {
    child.wait_with_output().expect("shard ends")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The merged race (the only race at the top of the store) and its directory.
fn merged(env: &Env) -> (serde_json::Value, std::path::PathBuf) {
    let dirs: Vec<_> = env
        .race_dirs()
        .into_iter()
        .filter(|d| d.join("race.json").is_file())
        .collect();
    assert_eq!(dirs.len(), 1, "one merged race: {dirs:?}");
    (read_json(&dirs[0].join("race.json")), dirs[0].clone())
}

fn trial<'a>(race: &'a serde_json::Value, task: &str) -> &'a serde_json::Value {
    &tasks(race, task)[0]["trials"][0]
}

/// Every merged trial's histograms equal the sum of the shards' own stored histograms, and
/// its percentiles are those of that sum, bit for bit.
fn check_exact_merge(dir: &Path, count: u32, trials: usize) {
    use runner::metrics::{decode_histogram, new_histogram, Percentiles};
    let hist = |p: &Path| read_json(&p.join("histograms.json"));
    let merged_race = read_json(&dir.join("race.json"));
    let merged = hist(dir);
    let shards: Vec<_> = (0..count)
        .map(|i| hist(&dir.join(format!("shard-{i}"))))
        .collect();
    let mut checked = 0;
    for t in merged["trials"].as_array().unwrap() {
        let key = (t["task_index"].clone(), t["trial"].clone());
        let mut sum = new_histogram();
        for s in &shards {
            for st in s["trials"].as_array().unwrap() {
                if (st["task_index"].clone(), st["trial"].clone()) == key {
                    sum.add(decode_histogram(st["service_time_us"].as_str().unwrap()).unwrap())
                        .unwrap();
                }
            }
        }
        let got = decode_histogram(t["service_time_us"].as_str().unwrap()).unwrap();
        assert_eq!(got, sum, "merged histogram of task {key:?}");
        let task = &merged_race["tasks"][key.0.as_u64().unwrap() as usize];
        let stored = &task["trials"][key.1.as_u64().unwrap() as usize]["service_time_ms"];
        let expect = Percentiles::from_histogram(&sum, None);
        for (name, p) in [
            ("p50", 50.0),
            ("p99", 99.0),
            ("p99.9", 99.9),
            ("p99.99", 99.99),
        ] {
            match expect.at(p) {
                Some(v) => assert_eq!(
                    stored[name].as_f64().unwrap().to_bits(),
                    v.to_bits(),
                    "{name}"
                ),
                None => assert!(stored[name].is_null(), "{name}: {stored}"),
            }
        }
        checked += 1;
    }
    assert_eq!(checked, trials, "every task's trial was checked");
}

#[test]
fn three_shards_through_runner_serve_make_one_exact_race() {
    let env = Env::new();
    let server = serve(&env, &[]);
    let dir = sharded_track();
    let port = free_port();
    let target = url(server.port);
    let args = [
        "--track-path",
        dir.path().to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &target,
    ];
    let children: Vec<Child> = (0..3)
        .map(|i| start_shard(&env, i, 3, port, &args))
        .collect();
    let outputs: Vec<Output> = children.into_iter().map(finish).collect();
    for (i, o) in outputs.iter().enumerate() {
        assert!(o.status.success(), "shard {i}: {}", stderr(o));
    }
    let (race, dir) = merged(&env);
    assert_eq!(race["status"], "completed");
    let shards = &race["shards"];
    assert_eq!(shards["count"], 3);
    assert_eq!(shards["merged"].as_object().unwrap().len(), 3);
    let barriers = shards["barriers"].as_array().unwrap();
    assert_eq!(barriers.len(), 5, "{shards}");
    // Each shard says how long before each start it heard of it.
    assert!(
        barriers.iter().all(|b| b["min_slack_ms"].is_f64()),
        "{shards}"
    );
    // Every document indexed once across the shards: none twice, none left out.
    let bulk = trial(&race, "bulk");
    assert_eq!(
        (bulk["units"].as_u64(), bulk["errors"].as_u64()),
        (Some(DOCS as u64), Some(0))
    );
    let per_shard: Vec<u64> = bulk["per_shard"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["units"].as_u64().unwrap())
        .collect();
    assert_eq!(per_shard.len(), 3);
    assert!(
        per_shard.iter().all(|u| *u > 0),
        "each shard indexed its part: {per_shard:?}"
    );
    let count: serde_json::Value =
        serde_json::from_str(&http_body(server.port, "GET", "/i/_count", "")).unwrap();
    assert_eq!(count["count"], DOCS, "the index holds each document once");
    // The search's iterations add up to the task as written, split 2+1+... by clients.
    let search = trial(&race, "all");
    assert_eq!(search["operations"], 203);
    assert_eq!(search["warmup_operations"], 10);
    assert_eq!(search["hits"].as_u64(), Some(203 * DOCS as u64));
    // One-client tasks ran once, on shard 0.
    assert_eq!(trial(&race, "create")["operations"], 1);
    check_exact_merge(&dir, 3, 5);
    // The report says what the race was merged from, with each shard's part.
    let report = String::from_utf8_lossy(&outputs[0].stdout);
    assert!(report.contains("merged from 3 of 3 shards"), "{report}");
    assert!(report.contains("## Shards"), "{report}");
    // `runner merge` makes the same race from the stored shards.
    let id = race["race_id"].as_str().unwrap();
    let again = env.ok(&["merge", id, "--report-format", "json"]);
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    let (a, b) = (trial(&race, "all"), &again["race"]);
    let b = &b["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == "all")
        .unwrap()["trials"][0];
    assert_eq!(a["service_time_ms"], b["service_time_ms"]);
    assert_eq!(a["operations"], b["operations"]);
    // A shard's own race is there too, by its name.
    let shown = env.ok(&["show", &format!("{id}/shard-1")]);
    assert!(shown.contains("shard 1 of 3"), "{shown}");
}

/// A key-value track on redis: 2 tasks of iterations, 7 clients.
fn kv_args(h: &str) -> Vec<String> {
    [
        "--track",
        "redis-kv",
        "--backend",
        "redis",
        "--target-hosts",
        h,
        "--include-tasks",
        "get,set",
        "--track-params",
        "requests=3000,clients=[7]",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

#[test]
fn shards_against_a_real_redis_server() {
    let Some((_own, h)) = shared_server() else {
        return;
    };
    let env = Env::new();
    let port = free_port();
    let args = kv_args(&h);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let children: Vec<Child> = (0..2)
        .map(|i| start_shard(&env, i, 2, port, &args))
        .collect();
    for (i, o) in children.into_iter().map(finish).enumerate() {
        assert!(o.status.success(), "shard {i}: {}", stderr(&o));
    }
    let (race, dir) = merged(&env);
    assert_eq!(race["status"], "completed");
    for task in ["get", "set"] {
        let t = trial(&race, task);
        assert_eq!(
            (t["operations"].as_u64(), t["errors"].as_u64()),
            (Some(2700), Some(0)),
            "{task}: {t}"
        );
        let parts: Vec<u64> = t["per_shard"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["operations"].as_u64().unwrap())
            .collect();
        // 7 clients over 2 shards: 4 and 3, and the iterations in proportion.
        assert_eq!(parts.iter().sum::<u64>(), 2700);
        assert_eq!(parts, vec![1543, 1157], "{task}");
    }
    check_exact_merge(&dir, 2, 2);
    // A merged race is a race like any other for show, compare and plot.
    let id = race["race_id"].as_str().unwrap();
    assert!(env.ok(&["show", id]).contains("merged from 2 of 2 shards"));
    assert!(env.ok(&["compare", id, id]).contains("get"));
    let charts = env.home.path().join("charts");
    env.ok(&["plot", id, "--out", charts.to_str().unwrap()]);
    let page = std::fs::read_to_string(charts.join("report.html")).unwrap();
    assert!(
        page.contains("Shards (each load driver"),
        "the page has the per-shard table"
    );
}

fn mpirun() -> Option<&'static str> {
    let found = std::process::Command::new("mpirun")
        .arg("--version")
        .output()
        .is_ok();
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install openmpi-bin for the launcher test"
        );
        eprintln!("NOT CHECKED: mpirun is not installed (apt-get install openmpi-bin)");
        return None;
    }
    Some("mpirun")
}

#[test]
fn mpirun_starts_the_shards_and_they_find_their_places() {
    let Some(mpirun) = mpirun() else { return };
    let env = Env::new();
    let server = serve(&env, &[]);
    let target = url(server.port);
    let dir = sharded_track();
    let port = free_port().to_string();
    let out = std::process::Command::new(mpirun)
        .args(["--allow-run-as-root", "--oversubscribe", "-np", "3"])
        .args([
            "-x",
            "MASTER_ADDR=127.0.0.1",
            "-x",
            &format!("MASTER_PORT={port}"),
        ])
        .args(["-x", "RUNNER_HOME", "-x", "RUNNER_TRACKS_DIR"])
        .arg(env!("CARGO_BIN_EXE_runner"))
        .args([
            "race",
            "--quiet",
            "--track-path",
            dir.path().to_str().unwrap(),
        ])
        .args(["--backend", "elasticsearch", "--target-hosts", &target])
        .env("RUNNER_HOME", env.home.path())
        .env("RUNNER_TRACKS_DIR", repo().join("tracks"))
        .env("OMPI_MCA_plm_rsh_agent", "")
        .output()
        .expect("mpirun runs");
    assert!(
        out.status.success(),
        "mpirun: {}\n{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    let (race, dir) = merged(&env);
    assert_eq!(race["status"], "completed");
    let bulk = trial(&race, "bulk");
    assert_eq!(bulk["per_shard"].as_array().unwrap().len(), 3);
    assert_eq!(bulk["units"].as_u64(), Some(DOCS as u64));
    assert_eq!(trial(&race, "all")["operations"], 203);
    check_exact_merge(&dir, 3, 5);
}

/// A race of two time-based tasks, long enough to kill or stop a shard in the first.
fn long_track() -> tempfile::TempDir {
    track_dir(&[(
        "track.yaml",
        "name: long
operations: [{name: nap, type: sleep, params: {duration: 1ms}}]
challenges:
  - name: c
    schedule:
      - {name: first, operation: nap, clients: 3, time-period: 3s, target-throughput: 300}
      - {name: second, operation: nap, clients: 3, time-period: 1s, target-throughput: 300}
",
    )])
}

#[test]
fn a_shard_killed_mid_race_leaves_the_others_to_finish_and_is_named_missing() {
    let env = Env::new();
    let dir = long_track();
    let port = free_port();
    let args = ["--track-path", dir.path().to_str().unwrap()];
    let mut children: Vec<Child> = (0..3)
        .map(|i| start_shard(&env, i, 3, port, &args))
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    children[2].kill().unwrap();
    let outputs: Vec<Output> = children.into_iter().map(finish).collect();
    assert!(outputs[1].status.success(), "{}", stderr(&outputs[1]));
    assert_eq!(
        outputs[0].status.code(),
        Some(1),
        "an incomplete race exits 1: {}",
        stderr(&outputs[0])
    );
    let (race, _) = merged(&env);
    assert_eq!(race["status"], "incomplete");
    let missing = &race["shards"]["missing"];
    assert!(
        missing["2"].as_str().unwrap().contains("left the race"),
        "{missing}"
    );
    // The others ran both tasks.
    assert_eq!(
        trial(&race, "second")["per_shard"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    let report = String::from_utf8_lossy(&outputs[0].stdout);
    assert!(
        report.contains("incomplete: shard 2 is missing"),
        "{report}"
    );
}

#[test]
fn a_shard_that_never_joins_fails_the_rendezvous_with_its_name() {
    let env = Env::new();
    let dir = long_track();
    let port = free_port();
    let args = [
        "--track-path",
        dir.path().to_str().unwrap(),
        "--rendezvous-timeout",
        "2s",
    ];
    let started = Instant::now();
    let zero = finish(start_shard(&env, 0, 3, port, &args));
    let e = stderr(&zero);
    assert_eq!(zero.status.code(), Some(1), "{e}");
    assert!(e.contains("shards 1, 2 of 3 did not join within 2s"), "{e}");
    assert!(started.elapsed() < Duration::from_secs(60));
    assert!(env.race_dirs().is_empty(), "no race was run, none stored");
    // And a shard whose shard 0 never comes says where it looked.
    let one = finish(start_shard(&env, 1, 3, free_port(), &args));
    let e = stderr(&one);
    assert_eq!(one.status.code(), Some(1), "{e}");
    assert!(
        e.contains("cannot reach the rendezvous at 127.0.0.1:"),
        "{e}"
    );
}

#[test]
fn a_shard_that_stops_at_a_step_fails_the_step_on_every_shard() {
    let env = Env::new();
    let dir = long_track();
    let port = free_port();
    let args = [
        "--track-path",
        dir.path().to_str().unwrap(),
        "--rendezvous-timeout",
        "2s",
    ];
    let children: Vec<Child> = (0..2)
        .map(|i| start_shard(&env, i, 2, port, &args))
        .collect();
    std::thread::sleep(Duration::from_millis(1500));
    // Frozen in the first task: alive, connected, never arriving at the second.
    let pid = children[1].id() as i32;
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let mut children = children.into_iter();
    let zero = finish(children.next().unwrap());
    let mut one = children.next().unwrap();
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let _ = one.kill();
    let _ = one.wait();
    let e = stderr(&zero);
    assert_eq!(zero.status.code(), Some(1), "{e}");
    assert!(e.contains("shard 1 (on"), "{e}");
    assert!(e.contains("did not reach `second"), "{e}");
    let (race, _) = merged(&env);
    assert_eq!(race["status"], "aborted");
    assert!(
        race["stop_reason"]
            .as_str()
            .unwrap()
            .contains("did not reach"),
        "{race}"
    );
}

#[test]
fn a_sharded_race_on_the_in_process_engine_is_refused_before_it_starts() {
    let env = Env::new();
    let dir = sharded_track();
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--shard",
        "0/2",
        "--coordinator",
        "127.0.0.1:1",
    ]);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("cannot run sharded on --backend embedded") && e.contains("runner serve"),
        "{e}"
    );
    assert!(env.race_dirs().is_empty());
}

/// Just enough of a Kubernetes API server for kubectl to map kinds to resources (what a
/// client-side dry run asks before it reads a manifest): discovery of v1 and batch/v1.
fn discovery_server() -> u16 {
    use std::io::{BufRead, BufReader, Write};
    fault_listener(|stream, _| {
        let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut writer = stream;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let path = line
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .split('?')
                .next()
                .unwrap_or("")
                .to_string();
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                    break;
                }
            }
            let resource = |name: &str, kind: &str| serde_json::json!({"name": name, "singularName": kind.to_lowercase(), "namespaced": true, "kind": kind, "verbs": ["create", "get"]});
            let body = match path.as_str() {
                "/api" => {
                    serde_json::json!({"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []})
                }
                "/apis" => {
                    serde_json::json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [{"name": "batch", "versions": [{"groupVersion": "batch/v1", "version": "v1"}], "preferredVersion": {"groupVersion": "batch/v1", "version": "v1"}}]})
                }
                "/api/v1" => {
                    serde_json::json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [resource("configmaps", "ConfigMap"), resource("services", "Service")]})
                }
                "/apis/batch/v1" => {
                    serde_json::json!({"kind": "APIResourceList", "groupVersion": "batch/v1", "resources": [resource("jobs", "Job")]})
                }
                _ => serde_json::Value::Null,
            };
            let (status, text) = match body {
                serde_json::Value::Null => ("404 Not Found", String::new()),
                b => ("200 OK", b.to_string()),
            };
            let _ = write!(writer, "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}", text.len());
        }
    })
}

#[test]
fn k8s_job_manifests_pass_kubectl_and_the_schemas_and_their_environment_places_the_shards() {
    let env = Env::new();
    let dir = long_track();
    let file = env.home.path().join("job.yaml");
    env.ok(&[
        "k8s-job",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--shards",
        "2",
        "--image",
        "registry.example/runner:1",
        "--name",
        "nap",
        "--out",
        file.to_str().unwrap(),
        "--",
        "--challenge",
        "c",
    ]);
    let kubectl = std::process::Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output();
    match kubectl {
        Ok(_) => {
            let port = discovery_server();
            let out = std::process::Command::new("kubectl")
                .args(["--server", &format!("http://127.0.0.1:{port}")])
                .args([
                    "create",
                    "--dry-run=client",
                    "--validate=false",
                    "-o",
                    "json",
                    "-f",
                ])
                .arg(&file)
                .env("KUBECONFIG", "/nonexistent")
                .output()
                .unwrap();
            assert!(out.status.success(), "kubectl: {}", stderr(&out));
            // One JSON object per manifest, as kubectl read it.
            let items: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&out.stdout)
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap();
            let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
            assert_eq!(kinds, ["ConfigMap", "Service", "Job"]);
            let job = &items[2]["spec"];
            assert_eq!(
                (job["completionMode"].as_str(), job["completions"].as_u64()),
                (Some("Indexed"), Some(2))
            );
        }
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must install kubernetes-client"
            );
            eprintln!("NOT CHECKED: kubectl is not installed (apt-get install kubernetes-client)");
        }
    }
    // Every field checked against Kubernetes' own schemas, unknown ones refused.
    match std::env::var("RUNNER_TEST_K8S_VALIDATE") {
        Ok(validate) if !validate.is_empty() => {
            let out = std::process::Command::new(validate)
                .args(["--strict", "--quiet"])
                .arg(&file)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "kubernetes-validate: {}{}",
                String::from_utf8_lossy(&out.stdout),
                stderr(&out)
            );
        }
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must set RUNNER_TEST_K8S_VALIDATE"
            );
            eprintln!("NOT CHECKED: RUNNER_TEST_K8S_VALIDATE (pip install kubernetes-validate) is not set");
        }
    }
    // The pods' environment, as the Job gives it: each finds its shard and shard 0.
    let docs: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .split("\n---\n")
        .skip(1)
        .map(|d| serde_yaml::from_str(d).unwrap())
        .collect();
    let container = &docs[2]["spec"]["template"]["spec"]["containers"][0];
    let vars: Vec<(String, String)> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| {
            (
                v["name"].as_str().unwrap().to_string(),
                v["value"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let port = free_port().to_string();
    let children: Vec<Child> = (0..2)
        .map(|i| {
            let mut c = env.command(&[
                "race",
                "--quiet",
                "--track-path",
                dir.path().to_str().unwrap(),
            ]);
            for (k, v) in &vars {
                c.env(k, v);
            }
            // The Service's name resolves in the cluster; here, shard 0 is on loopback.
            c.env("MASTER_ADDR", "127.0.0.1")
                .env("MASTER_PORT", &port)
                .env("JOB_COMPLETION_INDEX", i.to_string());
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for o in children.into_iter().map(finish) {
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (race, _) = merged(&env);
    assert_eq!(race["shards"]["merged"].as_object().unwrap().len(), 2);
    assert_eq!(race["status"], "completed");
}
