//! A Rally track's own Python (track.py): its param sources and custom runners run in worker
//! processes (tests/fixtures/rally-python), what they draw is checked on the wire, and every way
//! a track's Python can be wrong ends with an error naming it, before the race where it can.

use crate::util::*;
use std::sync::Mutex;

fn fixture() -> String {
    repo()
        .join("tests/fixtures/rally-python")
        .to_str()
        .unwrap()
        .to_string()
}

fn trials<'a>(race: &'a serde_json::Value, task: &str) -> &'a serde_json::Value {
    let t = race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .unwrap_or_else(|| panic!("no task {task}"));
    &t["trials"][0]
}

fn race_json(env: &Env, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["race", "--quiet", "--report-format", "json"];
    all.extend_from_slice(args);
    let out = env.ok(&all);
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["race"].clone()
}

#[test]
fn a_track_py_drives_param_sources_and_runners_on_the_embedded_engine() {
    let Some(python) = clients_python() else {
        return;
    };
    let fixture = fixture();
    let args = [
        "--track-path",
        fixture.as_str(),
        "--python",
        python.as_str(),
    ];
    let env = Env::new();
    let log = env.home.path().join("scheduler.log");
    let mut all = vec!["race", "--quiet", "--report-format", "json"];
    all.extend_from_slice(&args);
    let out = env
        .command(&all)
        .env("RUNNER_TEST_SCHEDULER_LOG", &log)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["race"].clone();
    // The track's scheduler paced its task: asked for each call's time in turn (Rally's
    // `next_scheduled`, 20 ms apart at 50 ops/s), told of each call after it.
    let said = std::fs::read_to_string(&log).unwrap();
    let nexts: Vec<&str> = said.lines().filter(|l| l.starts_with("next ")).collect();
    assert_eq!(
        nexts[..3],
        ["next 0.000", "next 0.020", "next 0.040"],
        "{said}"
    );
    let afters = said.lines().filter(|l| *l == "after 1.0 ops True").count();
    assert_eq!(afters, 6, "{said}");
    assert_eq!(trials(&race, "paced")["operations"], 6);
    let terms = trials(&race, "country-terms");
    assert_eq!(terms["operations"], 20, "{terms}");
    assert_eq!(terms["errors"], 0, "{terms}");
    // A finite source: each of 2 clients runs until its own partition ends (4 pages each).
    let pages = trials(&race, "pages");
    assert_eq!(
        (pages["operations"].as_u64(), pages["errors"].as_u64()),
        (Some(8), Some(0)),
        "{pages}"
    );
    assert_eq!(
        pages["hits"], 400,
        "every page counts the 50 documents: {pages}"
    );
    assert_eq!(pages["interrupted"], false, "{pages}");
    assert_eq!(trials(&race, "by-function")["operations"], 3);
    // The runner counts the documents with the official client, through the loopback server.
    let count = trials(&race, "count");
    assert_eq!(
        (count["operations"].as_u64(), count["errors"].as_u64()),
        (Some(3), Some(0)),
        "{count}"
    );
    assert!(
        count["service_time_ms"]["p50"].as_f64().unwrap() > 0.0,
        "{count}"
    );
    let classy = trials(&race, "classy");
    assert_eq!(
        (classy["operations"].as_u64(), classy["errors"].as_u64()),
        (Some(4), Some(0)),
        "{classy}"
    );
    // A runner fed by a source whose params hold what JSON cannot carry (they stay in
    // Python): each client's partition ends after 3 calls.
    let tallied = trials(&race, "tallied");
    assert_eq!(
        (tallied["operations"].as_u64(), tallied["errors"].as_u64()),
        (Some(6), Some(0)),
        "{tallied}"
    );
    assert_eq!(
        tallied["interrupted"], false,
        "a source that ends is no interruption: {tallied}"
    );
    // A source that seeds `random` draws the same params on every run: the same hits (for
    // one client; clients of a task share its iterations as they come).
    let again = race_json(&Env::new(), &args);
    let once = trials(&race, "country-terms-alone");
    assert_eq!(once["errors"], 0, "{once}");
    assert_eq!(trials(&again, "country-terms-alone")["hits"], once["hits"]);
}

/// The search bodies bindings' recording server kept, parsed.
fn parsed(bodies: &Mutex<Vec<String>>) -> Vec<serde_json::Value> {
    bodies
        .lock()
        .unwrap()
        .iter()
        .map(|b| serde_json::from_str(b).unwrap_or_default())
        .collect()
}

#[test]
fn what_a_param_source_draws_is_what_the_server_receives() {
    let (port, bodies) = crate::bindings::recording_server();
    let fixture = fixture();
    let target = format!("http://127.0.0.1:{port}");
    race_json(
        &Env::new(),
        &[
            "--track-path",
            &fixture,
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &target,
            "--include-tasks",
            "country-terms,pages",
            // The runners' tasks are not raced; their client need not be installed.
            "--on-unsupported",
            "skip",
        ],
    );
    let bodies = parsed(&bodies);
    // 2 warmup and 10 measured calls per client for the terms (and 12 and 6 of the tasks that
    // run the same operation with one client), 4 pages per client.
    let terms: Vec<_> = bodies
        .iter()
        .filter(|b| b["query"]["terms"].is_object())
        .collect();
    assert_eq!(terms.len(), 42, "{bodies:?}");
    for b in &terms {
        let codes = b["query"]["terms"]["country_code"].as_array().unwrap();
        assert_eq!(codes.len(), 3, "the source's `terms` param: {b}");
        assert_eq!(b["size"], 0);
    }
    let pages: Vec<u64> = bodies.iter().filter_map(|b| b["from"].as_u64()).collect();
    let mut sorted = pages.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        [1, 1, 2, 2, 3, 3, 4, 4],
        "each client's own partition"
    );
}

#[test]
fn a_drawn_body_reaches_the_server_as_the_bytes_python_encoded() {
    // ASCII escapes, key order and a float's `.0` are Python's: a body decoded and encoded
    // again on the way would lose them. What Rally puts in the body (`results-per-page` as its
    // `size`) still reaches it.
    let source = r#"
def src(track, params, **kwargs):
    return {"index": "i", "body": {"query": {"match": {"name": "caf\u00e9"}}, "z": 1.0, "a": [1, 2]}}

def sized(track, params, **kwargs):
    return {"index": "i", "results-per-page": 3, "body": {"query": {"match_all": {}}}}

def register(registry):
    registry.register_param_source("src", src)
    registry.register_param_source("sized", sized)
"#;
    let ops = r#"{"name": "op", "operation-type": "search", "param-source": "src"},
        {"name": "op2", "operation-type": "search", "param-source": "sized"}"#;
    let track = format!(
        r#"{{"version": 2, "indices": [{{"name": "i"}}], "operations": [{ops}],
  "challenges": [{{"name": "c", "default": true, "schedule": [
    {{"operation": "op", "iterations": 5}}, {{"operation": "op2", "iterations": 5}}]}}]}}"#
    );
    let dir = track_dir(&[("track.json", &track), ("track.py", source)]);
    let (port, bodies) = crate::bindings::recording_server();
    let target = format!("http://127.0.0.1:{port}");
    race_json(
        &Env::new(),
        &[
            "--track-path",
            dir.path().to_str().unwrap(),
            "--backend",
            "elasticsearch",
            "--target-hosts",
            &target,
        ],
    );
    let bodies = bodies.lock().unwrap().clone();
    let drawn = r#"{"query":{"match":{"name":"caf\u00e9"}},"z":1.0,"a":[1,2]}"#;
    assert_eq!(
        bodies.iter().filter(|b| *b == drawn).count(),
        5,
        "{bodies:?}"
    );
    let sized: Vec<serde_json::Value> = bodies
        .iter()
        .filter(|b| b.contains("match_all"))
        .map(|b| serde_json::from_str(b).unwrap())
        .collect();
    assert_eq!(sized.len(), 5, "{bodies:?}");
    assert!(sized.iter().all(|b| b["size"] == 3), "{sized:?}");
}

/// A Rally track of `track.json` and `track.py` in a temporary directory.
fn python_track(track_py: &str, operation: &str) -> tempfile::TempDir {
    let track = format!(
        r#"{{"version": 2, "indices": [{{"name": "i"}}],
  "operations": [{operation}],
  "challenges": [{{"name": "c", "default": true, "schedule": [
    {{"operation": {{"operation-type": "create-index"}}}},
    {{"operation": "op", "iterations": 40}}]}}]}}"#
    );
    track_dir(&[("track.json", &track), ("track.py", track_py)])
}

const SEARCH_BY_SOURCE: &str =
    r#"{"name": "op", "operation-type": "search", "param-source": "src"}"#;

/// Races the track and insists it fails with exit `code`; returns stderr.
fn fails(dir: &tempfile::TempDir, code: i32, extra: &[&str], env_vars: &[(&str, &str)]) -> String {
    let env = Env::new();
    let mut args = vec![
        "race",
        "--quiet",
        "--track-path",
        dir.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let mut cmd = env.command(&args);
    for (k, v) in env_vars {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    stderr
}

#[test]
fn a_track_py_that_cannot_load_is_named_with_its_file_and_line() {
    let syntax = python_track("def register(registry)\n    pass\n", SEARCH_BY_SOURCE);
    let e = fails(&syntax, 2, &[], &[]);
    assert!(e.contains("track.py:1") && e.contains("SyntaxError"), "{e}");

    let missing = python_track(
        "import surely_not_installed_here\ndef register(registry):\n    pass\n",
        SEARCH_BY_SOURCE,
    );
    let e = fails(&missing, 2, &[], &[]);
    assert!(e.contains("track.py:1"), "{e}");
    assert!(
        e.contains("-m pip install 'surely_not_installed_here'"),
        "{e}"
    );

    // A name runner's stand-in for esrally lacks (when python3 has no esrally of its own):
    // none that the public catalogues import (tests/python/test_standin.py), so one made up.
    let python_has_esrally = std::process::Command::new("python3")
        .args(["-c", "import esrally"])
        .status()
        .is_ok_and(|s| s.success());
    if !python_has_esrally {
        let beyond = python_track(
            "from esrally.track.params import NoSuchSource\ndef register(registry):\n    pass\n",
            SEARCH_BY_SOURCE,
        );
        let e = fails(&beyond, 2, &[], &[]);
        assert!(
            e.contains("track.py:1")
                && e.contains("stand-in for esrally")
                && e.contains("-m pip install 'esrally==2.13.0'"),
            "{e}"
        );
    }

    let raises = python_track(
        "def register(registry):\n    raise ValueError('no registering today')\n",
        SEARCH_BY_SOURCE,
    );
    let e = fails(&raises, 2, &[], &[]);
    assert!(
        e.contains("track.py:2") && e.contains("no registering today"),
        "{e}"
    );

    let none = python_track("def register(registry):\n    pass\n", SEARCH_BY_SOURCE);
    let e = fails(&none, 2, &[], &[]);
    assert!(
        e.contains("param source `src` is not one the track's track.py registers"),
        "{e}"
    );

    let e = fails(&none, 2, &["--python", "/nonexistent/python3"], &[]);
    assert!(
        e.contains("cannot start the Python interpreter `/nonexistent/python3`"),
        "{e}"
    );
}

fn with_source(params_body: &str) -> String {
    format!(
        "import os, time\n\nclass Src:\n    def __init__(self, track, params, **kwargs):\n        self.n = 0\n        self.infinite = True\n    def partition(self, i, total):\n        return self\n    def params(self):\n        self.n += 1\n{params_body}\n\ndef register(registry):\n    registry.register_param_source('src', Src)\n"
    )
}

#[test]
fn a_param_source_that_misbehaves_stops_before_the_race() {
    let not_a_dict = python_track(
        &with_source("        return ['a', 'list']"),
        SEARCH_BY_SOURCE,
    );
    let e = fails(&not_a_dict, 2, &[], &[]);
    assert!(e.contains("params() returned list, not a dict"), "{e}");

    let raises = python_track(
        &with_source("        raise RuntimeError('the source broke')"),
        SEARCH_BY_SOURCE,
    );
    let e = fails(&raises, 2, &[], &[]);
    assert!(
        e.contains("track.py:11") && e.contains("the source broke"),
        "{e}"
    );

    let refused = python_track(
        &with_source("        return {'index': 'i', 'body': 'not a query'}"),
        SEARCH_BY_SOURCE,
    );
    let e = fails(&refused, 2, &[], &[]);
    assert!(
        e.contains("the first params the source drew, as `search`")
            && e.contains("expected a query body mapping"),
        "{e}"
    );

    let hangs = python_track(&with_source("        time.sleep(3600)"), SEARCH_BY_SOURCE);
    let started = std::time::Instant::now();
    let e = fails(&hangs, 2, &[], &[("RUNNER_PYTHON_TIMEOUT", "2")]);
    assert!(e.contains("gave no answer within 2s"), "{e}");
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
}

#[test]
fn a_worker_killed_mid_race_ends_it_naming_the_worker_and_keeps_what_was_measured() {
    // The probe draws once; the race's worker dies at its 20th draw.
    let dies = python_track(
        &with_source(
            "        if self.n == 20:\n            os.kill(os.getpid(), 9)\n        return {'index': 'i', 'body': {'query': {'match_all': {}}}}",
        ),
        SEARCH_BY_SOURCE,
    );
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--quiet",
        "--track-path",
        dies.path().to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("track.py worker 1 (pid"), "{stderr}");
    assert!(stderr.contains("stopped"), "{stderr}");
    let race = env.only_race();
    assert_eq!(race["status"], "aborted", "{race}");
    // create-index ran and was stored; the search's measured calls before the death too.
    let tasks = race["tasks"].as_array().unwrap();
    assert!(
        tasks
            .iter()
            .any(|t| t["trials"].as_array().is_some_and(|a| !a.is_empty())),
        "{race}"
    );
}

#[test]
fn a_runner_that_raises_or_returns_what_rally_refuses_stops_the_race() {
    let Some(python) = clients_python() else {
        return;
    };
    let key_error = python_track(
        "async def boom(es, params):\n    return params['nowhere']\n\ndef register(registry):\n    registry.register_runner('boom', boom, async_runner=True)\n",
        r#"{"name": "op", "operation-type": "boom"}"#,
    );
    let e = fails(&key_error, 1, &["--python", &python], &[]);
    assert!(
        e.contains("Cannot execute [") && e.contains("'nowhere'"),
        "{e}"
    );

    let bad_weight = python_track(
        "async def odd(es, params):\n    return {'weight': 'heavy'}\n\ndef register(registry):\n    registry.register_runner('odd', odd, async_runner=True)\n",
        r#"{"name": "op", "operation-type": "odd"}"#,
    );
    let e = fails(&bad_weight, 1, &["--python", &python], &[]);
    assert!(e.contains("weight 'heavy' is not a number"), "{e}");

    let sync = python_track(
        "def slow(es, params):\n    return 1, 'ops'\n\ndef register(registry):\n    registry.register_runner('slow', slow)\n",
        r#"{"name": "op", "operation-type": "slow"}"#,
    );
    let e = fails(&sync, 2, &["--python", &python], &[]);
    assert!(e.contains("must be implemented as async runner"), "{e}");
}

#[test]
fn sigterm_stops_the_workers_with_the_race() {
    let Some(python) = clients_python() else {
        return;
    };
    let scratch = tempfile::tempdir().unwrap();
    let dir = python_track(
        "import asyncio\n\nasync def wait(es, params):\n    await asyncio.sleep(3600)\n\ndef register(registry):\n    registry.register_runner('wait', wait, async_runner=True)\n",
        r#"{"name": "op", "operation-type": "wait"}"#,
    );
    let env = Env::new();
    let mut child = env
        .command(&[
            "race",
            "--quiet",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--python",
            &python,
        ])
        // The worker's files go below this test's own temp dir: its processes are findable.
        .env("TMPDIR", scratch.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let workers = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c).contains(scratch.path().to_str().unwrap())
                })
            })
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while workers() == 0 {
        assert!(std::time::Instant::now() < deadline, "no worker started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // The runner's call is in flight (the worker was started for it); stop the race.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert!(!status.success());
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while workers() > 0 {
        assert!(
            std::time::Instant::now() < gone,
            "a worker outlived the race"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// geonames' default challenge with its large-terms tasks drawn by a track.py (the project's
/// own, beside the shared track's data): every body the server receives holds the track's
/// terms.txt and the number each source adds to avoid caching (RUNNER_TEST_RALLY_TRACKS: the
/// shared Rally tracks).
#[test]
fn geonames_large_terms_come_from_its_track_py() {
    let Some(shared) = shared_tracks_with_own_python(&["elastic/geonames"]) else {
        eprintln!("RUNNER_TEST_RALLY_TRACKS is not set: the shared Rally tracks are not here");
        return;
    };
    let track = shared.path().join("elastic/geonames");
    let terms = std::fs::read_to_string(track.join("terms.txt"))
        .unwrap()
        .lines()
        .count();
    let env = Env::new();
    // The test-mode corpus file the track names (the tasks raced index nothing).
    let data = env.home.path().join("data/geonames");
    std::fs::create_dir_all(&data).unwrap();
    let made = std::process::Command::new("python3")
        .arg("-c")
        .arg("import bz2,sys; open(sys.argv[1],'wb').write(bz2.compress(b'{\"name\":\"x\"}\\n'))")
        .arg(data.join("documents-2-1k.json.bz2"))
        .status()
        .unwrap();
    assert!(made.success());
    let (port, bodies) = crate::bindings::recording_server();
    let target = format!("http://127.0.0.1:{port}");
    let out = env.run(&[
        "race",
        "--quiet",
        "--test-mode",
        "--track-path",
        track.to_str().unwrap(),
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &target,
        "--include-tasks",
        "large_terms,large_filtered_terms,large_prohibited_terms",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bodies = parsed(&bodies);
    let (mut pure, mut filtered, mut prohibited) = (0, 0, 0);
    for b in &bodies {
        let (list, most) = if let Some(t) = b["query"]["terms"]["name.raw"].as_array() {
            pure += 1;
            (t, 100)
        } else if let Some(t) = b["query"]["bool"]["filter"][0]["terms"]["name.raw"].as_array() {
            filtered += 1;
            (t, 1000)
        } else if let Some(t) = b["query"]["bool"]["must_not"][0]["terms"]["name.raw"].as_array() {
            prohibited += 1;
            (t, 1000)
        } else {
            panic!(
                "a body no large-terms source draws: {}",
                &b.to_string()[..200.min(b.to_string().len())]
            );
        };
        assert_eq!(list.len(), terms + 1, "terms.txt and one number");
        let salt: u64 = list[terms].as_str().unwrap().parse().unwrap();
        assert!((1..=most).contains(&salt), "{salt}");
    }
    assert!(
        pure > 0 && filtered > 0 && prohibited > 0,
        "{pure} {filtered} {prohibited}"
    );
}

/// runner's stand-ins for esrally and OSB (tests/python/test_standin.py): every name the
/// public catalogues import resolves, and the parts tracks build on behave as Rally's.
#[test]
fn the_stand_ins_answer_every_name_the_catalogues_import() {
    let py = repo().join("src/python/py");
    let out = std::process::Command::new("python3")
        .args(["-W", "ignore", "-m", "unittest", "-v"])
        .arg(repo().join("tests/python/test_standin.py"))
        .env(
            "PYTHONPATH",
            format!("{}:{}", py.display(), py.join("compat").display()),
        )
        .current_dir(repo())
        .output()
        .expect("python3 runs");
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("Ran 14 tests") && text.contains("OK"),
        "{text}"
    );
}

/// The stand-in track model against esrally's own (tests/python/model_vs_esrally.py): the
/// same rendered tracks, every attribute a track's Python reads equal.
#[test]
fn the_stand_in_track_model_reads_tracks_as_esrally_does() {
    let Ok(esrally) = std::env::var("RUNNER_TEST_ESRALLY") else {
        eprintln!("NOT CHECKED: esrally is not here (RUNNER_TEST_ESRALLY; .ci/run sets it)");
        return;
    };
    let python = std::path::Path::new(&esrally).with_file_name("python");
    let _one = esrally_venv_lock();
    let out = std::process::Command::new(python)
        .arg(repo().join("tests/python/model_vs_esrally.py"))
        .env("PYTHONPATH", repo().join("src/python/py"))
        .output()
        .expect("esrally's python runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("0 differences"), "{text}");
}

/// The stand-in's runners (BulkIndex, ClusterHealth, DeleteIndex, PutSettings, Query, Retry)
/// called with the official async client against `runner serve`
/// (tests/python/standin_runners_live.py): every call one the client takes and the server answers.
#[test]
fn the_stand_in_runners_work_with_the_official_client() {
    let Some(python) = clients_python() else {
        return;
    };
    let env = Env::new();
    let server = crate::elasticsearch::serve(&env, &[]);
    let py = repo().join("src/python/py");
    let out = std::process::Command::new(&python)
        .arg(repo().join("tests/python/standin_runners_live.py"))
        .arg(server.port.to_string())
        .env(
            "PYTHONPATH",
            format!("{}:{}", py.display(), py.join("compat").display()),
        )
        .output()
        .expect("the clients' python runs");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("stand-in runners: ok"));
}
