//! esrally's command line as a Rally user types it: hosts race the cluster they name, Rally's
//! client options against a cluster that demands TLS and basic auth (runner serve behind
//! nginx), esrally's task filters, race ids and tags, Rally's track repository and corpora
//! where esrally keeps them, and the binary alone racing a built-in track.

use crate::elasticsearch::{serve, Serve};
use crate::redis::{free_port, wait_for_port};
use crate::util::*;
use std::path::Path;
use std::process::{Child, Command, Output};

const PASSWORD: &str = "s3cret-Rally-pass";

/// `runner serve` recording every request it answers, and races of a track against it.
struct Recording {
    env: Env,
    record: std::path::PathBuf,
    server: Serve,
}

impl Recording {
    fn new() -> Recording {
        let env = Env::new();
        let record = env.home.path().join("requests.jsonl");
        let server = serve(&env, &["--record", record.to_str().unwrap()]);
        Recording {
            env,
            record,
            server,
        }
    }

    /// Races the track in `dir` against the server, quietly; its output, success or not.
    fn race(&self, dir: &tempfile::TempDir) -> Output {
        let hosts = format!("127.0.0.1:{}", self.server.port);
        self.env.run(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--target-hosts",
            &hosts,
        ])
    }

    /// Races, and insists on success.
    fn race_ok(&self, dir: &tempfile::TempDir) {
        let out = self.race(dir);
        assert!(out.status.success(), "{}", stderr(&out));
    }

    /// Every request recorded so far, in order.
    fn lines(&self) -> Vec<serde_json::Value> {
        std::fs::read_to_string(&self.record)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

/// The documents of each recorded bulk to `/_bulk` (an action line before each).
fn bulk_sizes(lines: &[serde_json::Value]) -> Vec<usize> {
    lines
        .iter()
        .filter(|l| l["path"] == "/_bulk")
        .map(|l| l["body"].as_array().unwrap().len() / 2)
        .collect()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// nginx in front of `runner serve`: TLS with the test CA's certificate and basic auth for
/// `elastic`; killed when dropped.
struct Nginx {
    child: Child,
    port: u16,
    _dir: tempfile::TempDir,
    _serve: Serve,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nginx(env: &Env, certs: &Path) -> Option<Nginx> {
    if Command::new("nginx").arg("-v").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI must install nginx");
        eprintln!("NOT CHECKED: nginx is not installed");
        return None;
    }
    let served = serve(env, &[]);
    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    std::fs::write(
        dir.path().join("htpasswd"),
        format!("elastic:{{PLAIN}}{PASSWORD}\n"),
    )
    .unwrap();
    let d = dir.path().display();
    let conf = format!(
        r#"daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log;
events {{ worker_connections 256; }}
http {{
  access_log off;
  client_body_temp_path {d}/body;
  proxy_temp_path {d}/proxy;
  fastcgi_temp_path {d}/fastcgi;
  uwsgi_temp_path {d}/uwsgi;
  scgi_temp_path {d}/scgi;
  client_max_body_size 64m;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    auth_basic "cluster";
    auth_basic_user_file {d}/htpasswd;
    location / {{
      proxy_pass http://127.0.0.1:{upstream};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Authorization "";
    }}
  }}
}}
"#,
        cert = certs.join("server.pem").display(),
        key = certs.join("server.key").display(),
        upstream = served.port,
    );
    std::fs::write(dir.path().join("nginx.conf"), conf).unwrap();
    let child = Command::new("nginx")
        .args(["-e", &format!("{d}/error.log"), "-p"])
        .arg(dir.path())
        .arg("-c")
        .arg(dir.path().join("nginx.conf"))
        .spawn()
        .expect("nginx starts");
    wait_for_port(port);
    Some(Nginx {
        child,
        port,
        _dir: dir,
        _serve: served,
    })
}

#[test]
fn a_secured_cluster_as_the_readme_shows_it_and_a_wrong_password_refused() {
    if Command::new("openssl").arg("version").output().is_err() {
        assert!(std::env::var_os("CI").is_none(), "CI must install openssl");
        return;
    }
    let certs = tempfile::tempdir().unwrap();
    crate::redis_tls::make_certs(certs.path());
    let env = Env::new();
    let Some(proxy) = nginx(&env, certs.path()) else {
        return;
    };
    let ca = certs.path().join("ca.pem");
    let hosts = format!("localhost:{}", proxy.port);
    let race = |password: &str, options: String| {
        env.command(&[
            "race",
            "--track",
            "geonames",
            "--test-mode",
            "--quiet",
            "--include-tasks",
            GEONAMES_INDEX_AND_SEARCH,
            "--target-hosts",
            &hosts,
            "--client-options",
            &options,
        ])
        .env("RUNNER_ES_USERNAME", "elastic")
        .env("RUNNER_ES_PASSWORD", password)
        .output()
        .unwrap()
    };
    // The README's four lines: credentials in the environment, TLS in Rally's options.
    let tls = format!("use_ssl:true,verify_certs:true,ca_certs:'{}'", ca.display());
    let out = race(PASSWORD, tls.clone());
    assert!(out.status.success(), "{}", stderr(&out));
    let report = String::from_utf8_lossy(&out.stdout);
    let first = report.lines().next().unwrap_or_default();
    assert!(
        first.contains(&format!("at https://localhost:{}", proxy.port))
            && !first.contains("embedded"),
        "the first line names the system raced: {first}"
    );
    let record = env.only_race();
    let search = &tasks(&record, "search-sankt-georgen")[0]["trials"][0];
    assert_eq!(
        (search["errors"].as_u64(), search["hits"].as_u64()),
        (Some(0), Some(20 * 17)),
        "{search}"
    );
    // Rally's own credential options work too, and never reach what is stored.
    let out = race(
        "",
        format!("{tls},basic_auth_user:'elastic',basic_auth_password:'{PASSWORD}'"),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains(PASSWORD));
    for dir in env.race_dirs() {
        for f in std::fs::read_dir(&dir).unwrap().flatten() {
            let text =
                String::from_utf8_lossy(&std::fs::read(f.path()).unwrap_or_default()).into_owned();
            assert!(
                !text.contains(PASSWORD),
                "{} holds the password",
                f.path().display()
            );
        }
    }
    // A wrong password: refused before the race, saying so, and stored nowhere.
    let wrong = "Wrong-Password-123";
    let out = race(wrong, tls);
    let e = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{e}");
    assert!(e.contains("401") && !e.contains(wrong), "{e}");
    assert_eq!(env.race_dirs().len(), 2, "the refused race stored nothing");
}

#[test]
fn hosts_race_the_cluster_and_contradictory_flags_exit_2() {
    let env = Env::new();
    // Hosts without --backend: the cluster there (none answers: exit 1), never the engine.
    let port = free_port();
    let out = env.run(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--target-hosts",
        &format!("127.0.0.1:{port}"),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("127.0.0.1:{port}")),
        "{}",
        stderr(&out)
    );
    assert!(env.race_dirs().is_empty());
    for (args, says) in [
        (
            vec!["--backend", "embedded", "--target-hosts", "es:9200"],
            "--backend embedded",
        ),
        (vec!["--pipeline", "from-distribution"], "never provisions"),
        (
            vec!["--pipeline", "benchmark-only", "--backend", "embedded"],
            "drop one",
        ),
        (
            vec![
                "--target-hosts",
                "es:9200",
                "--client-options",
                "use_ssl:maybe",
            ],
            "true or false, not `maybe`",
        ),
        (
            vec![
                "--target-hosts",
                "es:9200",
                "--client-options",
                "static_responses:'r.json'",
            ],
            "runner serve --stub",
        ),
        (
            vec![
                "--target-hosts",
                "es:9200",
                "--client-options",
                "retry_on_timeout:true",
            ],
            "no client option `retry_on_timeout`",
        ),
        (
            vec![
                "--target-hosts",
                r#"{"default": ["a:9200"], "remote": ["b:9200"]}"#,
            ],
            "`remote`",
        ),
        (
            vec!["--client-options", "timeout:5"],
            "the embedded backend has none",
        ),
        (
            vec!["--include-tasks", "kind:search"],
            "`kind:` is not a filter",
        ),
        (
            vec!["--race-id", "latest-one"],
            "`latest` names the newest race",
        ),
        (vec!["--car", "4gheap"], "never provisions"),
        (vec!["--telemetry", "gc"], "_nodes/stats"),
    ] {
        let mut full = vec!["race", "--track", "geonames", "--test-mode", "--quiet"];
        full.extend(args.iter().copied());
        let out = env.run(&full);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

const TAGGED: &str = r#"
name: tagged
operations:
  - {name: nap, type: sleep}
challenges:
  - name: c
    schedule:
      - {name: setup, operation: nap, iterations: 1, tags: [setup, admin]}
      - {name: work, operation: nap, iterations: 3, tags: work}
      - parallel:
          tasks:
            - {name: side, operation: nap, iterations: 2, tags: [work]}
            - {name: other, operation: nap, iterations: 2}
"#;

#[test]
fn task_filters_read_names_types_and_tags_as_esrally_does() {
    let dir = track_dir(&[("track.yaml", TAGGED)]);
    let track = dir.path().display().to_string();
    let env = Env::new();
    let planned = |filter: &[&str]| -> Vec<String> {
        let mut args = vec!["plan", "--track-path", &track, "--report-format", "json"];
        args.extend_from_slice(filter);
        let plan: serde_json::Value = serde_json::from_str(&env.ok(&args)).unwrap();
        let mut names: Vec<String> = plan["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["task"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        names
    };
    assert_eq!(planned(&["--include-tasks", "tag:work"]), ["side", "work"]);
    assert_eq!(planned(&["--exclude-tasks", "tag:work,setup"]), ["other"]);
    let out = env.run(&[
        "plan",
        "--track-path",
        &track,
        "--exclude-tasks",
        "type:sleep",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("--exclude-tasks type:sleep leaves no task"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn race_ids_and_tags_as_esrally_sets_them() {
    let dir = track_dir(&[("track.yaml", TAGGED)]);
    let track = dir.path().display().to_string();
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        &track,
        "--quiet",
        "--race-id",
        "baseline-1",
        "--user-tags",
        "intention:baseline,ticket:12345",
        "--include-tasks",
        "setup",
    ]);
    let race = env.only_race();
    assert_eq!(race["race_id"], "baseline-1");
    assert_eq!(race["user_tags"]["ticket"], "12345");
    assert_eq!(race["user_tags"]["intention"], "baseline");
    assert!(env.ok(&["show", "baseline-1"]).contains("baseline-1"));
    let out = env.run(&[
        "race",
        "--track-path",
        &track,
        "--quiet",
        "--race-id",
        "baseline-1",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("a stored race has this id"));
    // A race after it is `latest`, whatever the ids' letters.
    env.ok(&[
        "race",
        "--track-path",
        &track,
        "--quiet",
        "--include-tasks",
        "setup",
    ]);
    let latest = env.ok(&["show", "latest", "--report-format", "json"]);
    assert!(!latest.contains("\"baseline-1\""), "{latest}");
    let before = env.ok(&["show", "latest~1", "--report-format", "json"]);
    assert!(before.contains("\"baseline-1\""), "{before}");
}

#[test]
fn the_binary_alone_races_a_built_in_track_from_an_empty_directory() {
    let installed = tempfile::tempdir().unwrap();
    let bin = installed.path().join("runner");
    std::fs::copy(runner_bin(), &bin).unwrap();
    let (cwd, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let run = |args: &[&str]| {
        Command::new(&bin)
            .args(args)
            .current_dir(cwd.path())
            .env_remove("RUNNER_TRACKS_DIR")
            .env("RUNNER_HOME", home.path())
            .output()
            .unwrap()
    };
    let out = run(&[
        "race",
        "--track",
        "geonames",
        "--test-mode",
        "--quiet",
        "--include-tasks",
        GEONAMES_INDEX_AND_SEARCH,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = String::from_utf8_lossy(&run(&["list", "tracks"]).stdout).into_owned();
    for name in [
        "bulk-indexer",
        "client-bench",
        "geonames",
        "kv-mix",
        "redis-kv",
    ] {
        assert!(listed.contains(name), "{listed}");
    }
    // Errors name no folder of the machine the binary was built on.
    let out = run(&["race", "--track", "geonams"]);
    assert_eq!(out.status.code(), Some(2));
    let e = stderr(&out);
    assert!(
        e.contains("did you mean `geonames`") && !e.contains(&repo().display().to_string()),
        "{e}"
    );
}

const RALLY_TRACK: &str = r#"{
  "version": 2,
  "description": "A track of Rally's repository",
  "indices": [{"name": "tiny"}],
  "corpora": [{"name": "tiny-corpus", "base-url": "http://127.0.0.1:9/corpora",
    "documents": [{"source-file": "docs.json", "document-count": 3}]}],
  "schedule": [
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "index", "operation-type": "bulk", "bulk-size": 3}, "clients": 1}
  ]
}"#;

#[test]
fn a_track_and_its_corpus_found_where_esrally_keeps_them() {
    let rally_home = tempfile::tempdir().unwrap();
    let repo_dir = rally_home.path().join(".rally/benchmarks/tracks/default");
    std::fs::create_dir_all(repo_dir.join("tiny")).unwrap();
    std::fs::write(repo_dir.join("tiny/track.json"), RALLY_TRACK).unwrap();
    let data = rally_home.path().join(".rally/benchmarks/data/tiny-corpus");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        data.join("docs.json"),
        "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n",
    )
    .unwrap();
    let env = Env::new();
    let race = |extra: &[&str]| {
        let mut args = vec!["race", "--track", "tiny", "--quiet", "--offline"];
        args.extend_from_slice(extra);
        env.command(&args)
            .env("RALLY_HOME", rally_home.path())
            .output()
            .unwrap()
    };
    let out = race(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let race_record = env.only_race();
    assert_eq!(
        tasks(&race_record, "index")[0]["trials"][0]["units"].as_u64(),
        Some(3)
    );
    // Offline, a corpus that is nowhere is an error naming --offline, not a download.
    std::fs::remove_file(data.join("docs.json")).unwrap();
    std::fs::remove_dir_all(env.home.path().join("data")).unwrap();
    let out = race(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--offline"), "{}", stderr(&out));
    // A revision of the repository: the committed track, not the files checked out.
    std::fs::write(
        data.join("docs.json"),
        "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n",
    )
    .unwrap();
    let git = |args: &[&str]| {
        let o = Command::new("git")
            .arg("-C")
            .arg(&repo_dir)
            .args(args)
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {}", stderr(&o));
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "tiny",
    ]);
    std::fs::write(repo_dir.join("tiny/track.json"), "{ not json").unwrap();
    let out = race(&["--track-revision", "HEAD"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let out = race(&["--track-revision", "no-such-branch"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no-such-branch"), "{}", stderr(&out));
}

/// A Rally track's requests as Rally's runners send them (recorded by `runner serve
/// --record`): delete-index lifts `action.destructive_requires_name` around a HEAD and the
/// DELETE of an index that exists, a template is deleted after a HEAD found it and its
/// indices by wildcard with the setting lifted, bulks are cut per esrally worker, searches
/// are GETs with their body, index-stats asks `/_all/_stats/_all`.
#[test]
fn a_rally_tracks_requests_are_rallys() {
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "tiny"}],
  "composable-templates": [{"name": "tpl", "index-pattern": "tiny-*", "delete-matching-indices": true, "template": "tpl.json"}],
  "corpora": [{"name": "tiny-corpus", "documents": [{"source-file": "docs.json", "document-count": 4}]}],
  "schedule": [
    {"operation": {"operation-type": "delete-composable-template"}},
    {"operation": {"operation-type": "create-composable-template"}},
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "index", "operation-type": "bulk", "bulk-size": 4}, "clients": 2},
    {"operation": {"operation-type": "refresh"}},
    {"operation": {"name": "all", "operation-type": "search", "body": {"query": {"match_all": {}}}}, "iterations": 2},
    {"operation": {"name": "stats", "operation-type": "index-stats"}, "iterations": 1}
  ]
}"#,
        ),
        (
            "tpl.json",
            r#"{"index_patterns": ["tiny-*"], "template": {"settings": {"number_of_shards": 1}}}"#,
        ),
        (
            "docs.json",
            "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n{\"a\": 4}\n",
        ),
    ]);
    let server = Recording::new();
    for _ in 0..2 {
        server.race_ok(&dir);
    }
    let lines = server.lines();
    let said = |l: &serde_json::Value| {
        let q: Vec<String> = l["query"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| format!("{}={}", p[0].as_str().unwrap(), p[1].as_str().unwrap()))
            .collect();
        format!(
            "{} {}{}",
            l["method"].as_str().unwrap(),
            l["path"].as_str().unwrap(),
            if q.is_empty() {
                String::new()
            } else {
                format!("?{}", q.join("&"))
            }
        )
    };
    let requests: Vec<String> = lines
        .iter()
        .map(said)
        .filter(|r| {
            !r.contains("/_nodes/stats/process") && r != "GET /" && r != "GET /_cluster/health"
        })
        .collect();
    const LIFT: [&str; 2] = [
        "GET /_cluster/settings?flat_settings=true",
        "PUT /_cluster/settings",
    ];
    // The first race: no template to delete yet; the indices it matched are deleted by
    // wildcard with the setting lifted, as Rally's DeleteComposableTemplate does.
    assert_eq!(
        requests[..7],
        [
            "HEAD /_index_template/tpl",
            LIFT[0],
            LIFT[1],
            "DELETE /tiny-*",
            LIFT[0],
            LIFT[1],
            "PUT /_index_template/tpl"
        ],
        "{requests:#?}"
    );
    // ... and no index to delete: HEAD, found nothing.
    assert_eq!(
        requests[7..10],
        [LIFT[0], LIFT[1], "HEAD /tiny"],
        "{requests:#?}"
    );
    // The second race: the template and the index exist now, and are deleted after a HEAD.
    let second = requests
        .iter()
        .rposition(|r| r == "HEAD /_index_template/tpl")
        .unwrap();
    assert_eq!(
        requests[second + 1],
        "DELETE /_index_template/tpl",
        "{requests:#?}"
    );
    let delete = requests.iter().rposition(|r| r == "HEAD /tiny").unwrap();
    assert_eq!(
        requests[delete - 2..delete + 4],
        [
            LIFT[0],
            LIFT[1],
            "HEAD /tiny",
            "DELETE /tiny",
            LIFT[0],
            LIFT[1]
        ],
        "{requests:#?}"
    );
    let puts: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|l| l["path"] == "/_cluster/settings" && l["method"] == "PUT")
        .collect();
    assert_eq!(
        puts[0]["body"]["transient"]["action.destructive_requires_name"],
        false
    );
    assert!(
        puts[1]["body"]["transient"]["action.destructive_requires_name"].is_null(),
        "put back as found: none"
    );
    assert!(
        requests
            .iter()
            .filter(|r| *r == "GET /tiny/_search")
            .count()
            >= 4,
        "{requests:#?}"
    );
    assert!(
        requests.contains(&"GET /_all/_stats/_all".to_string()),
        "{requests:#?}"
    );
    // Bulks as Rally's client sends them: PUT /_bulk, each action line naming the index.
    let bulk = lines
        .iter()
        .find(|l| l["path"] == "/_bulk")
        .expect("a bulk to /_bulk");
    assert_eq!(bulk["method"], "PUT");
    assert_eq!(
        bulk["body"][0],
        serde_json::json!({"index": {"_index": "tiny"}})
    );
    // The corpus cut as esrally cuts it: one slice per worker (a core each) of the two
    // clients, each slice its own bulk.
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(2);
    let bulks = bulk_sizes(&lines);
    assert_eq!(bulks.len(), 2 * workers, "{bulks:?}");
    assert!(bulks.iter().all(|&docs| docs == 4 / workers), "{bulks:?}");
}

/// Rally's `Retry` around a runner: `retries` more attempts of a cluster-health that the
/// server answers 408 (its wait for green timed out: replicas on one node), waiting
/// `retry-wait-period` between them; the attempts are one operation, its one error.
#[test]
fn rallys_retries_try_an_operation_again() {
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "replicated", "body": "index.json"}],
  "schedule": [
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "health", "operation-type": "cluster-health", "index": "replicated",
      "request-params": {"wait_for_status": "green", "timeout": "1ms"}, "retries": 2, "retry-wait-period": 0.05},
     "include-in-reporting": true}
  ]
}"#,
        ),
        (
            "index.json",
            r#"{"settings": {"index": {"number_of_replicas": 1}}}"#,
        ),
    ]);
    let server = Recording::new();
    let out = server.race(&dir);
    let recorded = std::fs::read_to_string(&server.record).unwrap();
    let health = recorded
        .lines()
        .filter(|l| l.contains("\"/_cluster/health/replicated\""))
        .count();
    assert_eq!(
        health,
        3,
        "one attempt and two retries: {recorded}\n{}",
        stderr(&out)
    );
    let race = server.env.only_race();
    let trial = &tasks(&race, "health")[0]["trials"][0];
    assert_eq!(
        trial["errors_by_kind"]["timeout"].as_u64(),
        Some(1),
        "{trial}"
    );
    // The attempts and the two waits between them are the one operation's service time.
    assert!(
        trial["service_time_ms"]["min"].as_f64().unwrap() >= 100.0,
        "{trial}"
    );
}

/// An OSB workload's requests as OSB 2.4 sends them: delete-index asks with a HEAD and lifts
/// no setting, bulks are POSTed to `/_bulk` (opensearch-py) with Rally's action lines, a
/// refresh of everything goes to `/_all/_refresh`.
#[test]
fn an_osb_workloads_requests_are_osbs() {
    let dir = track_dir(&[
        (
            "workload.json",
            r#"{
  "version": 2,
  "indices": [{"name": "tiny"}],
  "corpora": [{"name": "tiny-corpus", "documents": [{"source-file": "docs.json", "document-count": 2}]}],
  "schedule": [
    {"operation": {"operation-type": "delete-index"}},
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "index", "operation-type": "bulk", "bulk-size": 2}},
    {"operation": {"operation-type": "refresh"}}
  ]
}"#,
        ),
        ("docs.json", "{\"a\": 1}\n{\"a\": 2}\n"),
    ]);
    let server = Recording::new();
    server.race_ok(&dir);
    let lines = server.lines();
    assert!(
        lines.iter().all(|l| l["path"] != "/_cluster/settings"),
        "OSB lifts no setting: {lines:#?}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l["method"] == "HEAD" && l["path"] == "/tiny"),
        "{lines:#?}"
    );
    let bulk = lines
        .iter()
        .find(|l| l["path"] == "/_bulk")
        .expect("a bulk to /_bulk");
    assert_eq!(bulk["method"], "POST");
    assert_eq!(
        bulk["body"][0],
        serde_json::json!({"index": {"_index": "tiny"}})
    );
    // opensearch-py names `_all` in a refresh's path.
    assert!(
        lines
            .iter()
            .any(|l| l["method"] == "POST" && l["path"] == "/_all/_refresh"),
        "{lines:#?}"
    );
}

/// Rally's sql runner pages by cursor: `pages` requests in all, each after the first sent
/// with the answer's `cursor`; an answer with no cursor before the last page is an error in
/// Rally's words.
#[test]
fn rallys_sql_follows_each_answers_cursor() {
    let dir = track_dir(&[(
        "track.json",
        r#"{
  "version": 2,
  "schedule": [
    {"operation": {"name": "three", "operation-type": "sql", "body": {"query": "SELECT 1", "fetch_size": 1}, "pages": 3}},
    {"operation": {"name": "too-many", "operation-type": "sql", "body": {"query": "SELECT 2"}, "pages": 5}}
  ]
}"#,
    )]);
    let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let kept = bodies.clone();
    let port = json_server(move |line, body| {
        if !line.contains("/_sql") {
            return r#"{"version":{"number":"8.15.0"},"status":"green"}"#.to_string();
        }
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        kept.lock().unwrap().push(body.clone());
        // Two more pages after the first, then none.
        match body["cursor"].as_str() {
            None => r#"{"rows":[[1]],"cursor":"c1"}"#.into(),
            Some("c1") => r#"{"rows":[[1]],"cursor":"c2"}"#.into(),
            Some(_) => r#"{"rows":[[1]]}"#.into(),
        }
    });
    let env = Env::new();
    env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--target-hosts",
        &format!("127.0.0.1:{port}"),
    ]);
    let bodies = bodies.lock().unwrap().clone();
    assert_eq!(
        bodies[..3],
        [
            serde_json::json!({"query": "SELECT 1", "fetch_size": 1}),
            serde_json::json!({"cursor": "c1"}),
            serde_json::json!({"cursor": "c2"})
        ],
        "{bodies:#?}"
    );
    let race = env.only_race();
    let three = &tasks(&race, "three")[0]["trials"][0];
    assert_eq!(three["errors"].as_u64(), Some(0), "{three}");
    let too_many = &tasks(&race, "too-many")[0]["trials"][0];
    let why = too_many["error_messages"]["unmet"]
        .as_str()
        .unwrap_or_default();
    assert!(
        why.contains("exhausted before all pages have been fetched, 2 page(s) remaining"),
        "{too_many}"
    );
}

/// Rally's force-merge in `polling` mode: the merge asked not to wait, its task polled every
/// `poll-period` until it completed (`runner serve` merges, then answers the task's id).
#[test]
fn a_polled_force_merge_asks_for_its_task() {
    let dir = track_dir(&[(
        "track.json",
        r#"{
  "version": 2,
  "indices": [{"name": "merged"}],
  "schedule": [
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "merge", "operation-type": "force-merge", "max-num-segments": 1, "mode": "polling", "poll-period": 0.01}}
  ]
}"#,
    )]);
    let server = Recording::new();
    server.race_ok(&dir);
    let lines = server.lines();
    let at = lines
        .iter()
        .position(|l| l["path"] == "/merged/_forcemerge")
        .expect("a force-merge");
    assert_eq!(
        lines[at]["query"],
        serde_json::json!([["max_num_segments", "1"], ["wait_for_completion", "false"]])
    );
    assert_eq!(lines[at + 1]["method"], "GET");
    assert_eq!(lines[at + 1]["path"], "/_tasks/runner:1");
    let race = server.env.only_race();
    assert_eq!(
        tasks(&race, "merge")[0]["trials"][0]["errors"].as_u64(),
        Some(0)
    );
}

/// esrally's `available.cores` (rally.ini, `[system]`) sets its workers, and so how a Rally
/// bulk's corpus is cut: one core, one slice, one bulk of the four documents.
#[test]
fn rally_ini_available_cores_sets_the_workers_that_cut_a_bulk() {
    let dir = track_dir(&[
        (
            "track.json",
            r#"{
  "version": 2,
  "indices": [{"name": "tiny"}],
  "corpora": [{"name": "c", "documents": [{"source-file": "docs.json", "document-count": 4}]}],
  "schedule": [
    {"operation": {"operation-type": "create-index"}},
    {"operation": {"name": "index", "operation-type": "bulk", "bulk-size": 4}, "clients": 2}
  ]
}"#,
        ),
        (
            "docs.json",
            "{\"a\": 1}\n{\"a\": 2}\n{\"a\": 3}\n{\"a\": 4}\n",
        ),
    ]);
    let server = Recording::new();
    // The test's RALLY_HOME is its own home (`Env`).
    let conf = server.env.home.path().join(".rally");
    std::fs::create_dir_all(&conf).unwrap();
    std::fs::write(conf.join("rally.ini"), "[system]\navailable.cores = 1\n").unwrap();
    server.race_ok(&dir);
    let bulks = bulk_sizes(&server.lines());
    assert_eq!(bulks, [4], "one worker: one slice, one bulk");
}
