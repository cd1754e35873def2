//! esrally 2.13 itself races real Rally tracks (geonames, nested; elastic/logs by hand), unmodified,
//! against `runner serve`, one race at a time (esrally allows no other on the machine):
//! `--pipeline=benchmark-only`, test mode, its always-on telemetry reading `_nodes/stats`,
//! `_stats` and `_cluster/*` as from Elasticsearch. `.ci/run` installs esrally in a venv
//! (RUNNER_TEST_ESRALLY) and the shared tracks' data are beside the repository
//! (RUNNER_TEST_RALLY_TRACKS), their param sources from the project's own Python
//! (tests/fixtures/rally-own-python); their corpus comes from the shared generator. The race must
//! exit 0 and every task run without error (geonames' Painless and expression script tasks
//! included).

use crate::elasticsearch::serve;
use crate::util::*;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `cmd` in a process group of its own, killed whole when it ends or at `limit` (esrally
/// leaves actor processes behind).
fn run_bounded(mut cmd: Command, limit: Duration) -> (Option<i32>, String) {
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = cmd
        .process_group(0)
        .stdout(out.reopen().unwrap())
        .stderr(out.reopen().unwrap())
        .spawn()
        .expect("esrally starts");
    let started = Instant::now();
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if started.elapsed() > limit {
            break None;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    // SAFETY: signals a process group this test made; no memory is touched.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
    (
        code,
        std::fs::read_to_string(out.path()).unwrap_or_default(),
    )
}

/// esrally's report of a race of the shared track `track` (under `elastic/`, with the project's
/// own Python beside it) against a fresh `runner serve`, on a generated corpus of 1,000
/// documents; None where esrally or the shared tracks are not here (CI has both).
fn race(track: &str) -> Option<String> {
    let Some(tracks) = shared_tracks_with_own_python(&[&format!("elastic/{track}")]) else {
        eprintln!("NOT CHECKED: the shared Rally tracks are not here (RUNNER_TEST_RALLY_TRACKS; .ci/run sets it)");
        return None;
    };
    race_with(tracks.path(), track, &[]).map(|(report, _, _)| report)
}

/// As [`race`], for a track at `<tracks>/elastic/<path>` with esrally's `extra` arguments
/// (`tracks` holds `tools/` too); also the serve it raced against, still running. Each
/// generated corpus file is put where Rally looks for it, under its corpus's name (the
/// generator writes them side by side).
fn race_with(
    tracks: &std::path::Path,
    path: &str,
    extra: &[&str],
) -> Option<(String, crate::elasticsearch::Serve, Env)> {
    let esrally = esrally_here()?;
    // The corpus generator runs on esrally's venv too: the whole race holds the lock.
    let _one = esrally_venv_lock();
    let shared = tracks.display();
    let track_path = format!("{shared}/elastic/{path}");
    let name = path.rsplit('/').next().unwrap_or(path);
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(format!(".rally/benchmarks/data/{name}"));
    let generated = home.path().join("generated");
    std::fs::create_dir_all(&data).unwrap();
    let python = std::path::Path::new(&esrally).with_file_name("python");
    let made = Command::new(&python)
        .arg(format!("{shared}/tools/make_corpus.py"))
        .args([&track_path, generated.to_str().unwrap(), "--docs", "1000"])
        .output()
        .expect("the corpus generator runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    place_corpora(&made.stdout, &generated, &data);
    Some(esrally_race(
        &esrally,
        home,
        std::path::Path::new(&track_path),
        extra,
    ))
}

/// esrally, where CI installed it (RUNNER_TEST_ESRALLY); None elsewhere, said.
fn esrally_here() -> Option<String> {
    let (Ok(esrally), true) = (
        std::env::var("RUNNER_TEST_ESRALLY"),
        std::env::var_os("RUNNER_TEST_RALLY_TRACKS").is_some(),
    ) else {
        assert!(
            std::env::var_os("CI").is_none()
                || std::env::var_os("RUNNER_TEST_RALLY_TRACKS").is_none(),
            "CI must provide esrally (RUNNER_TEST_ESRALLY, see .ci/run)"
        );
        eprintln!("NOT CHECKED: esrally or the shared Rally tracks are not here (RUNNER_TEST_ESRALLY, RUNNER_TEST_RALLY_TRACKS; .ci/run sets both)");
        return None;
    };
    Some(esrally)
}

/// esrally races `track` in test mode against a fresh `runner serve`, with `home` as its
/// HOME (corpora placed under `.rally/benchmarks/data` already): its report (the race must
/// exit 0), and the serve, still running. The caller holds `esrally_venv_lock`.
fn esrally_race(
    esrally: &str,
    home: tempfile::TempDir,
    track: &std::path::Path,
    extra: &[&str],
) -> (String, crate::elasticsearch::Serve, Env) {
    // The caller holds `esrally_venv_lock`; a race killed before may linger still.
    wait_for_no_esrally(Duration::from_secs(60));
    let env = Env::new();
    let server = serve(&env, &[]);
    let report = home.path().join("report.md");
    let mut cmd = Command::new(esrally);
    cmd.env("HOME", home.path())
        .arg("race")
        .arg(format!("--track-path={}", track.display()))
        .args([
            "--pipeline=benchmark-only",
            "--test-mode",
            "--offline",
            "--on-error=continue",
        ])
        .args(extra)
        .arg(format!("--target-hosts=127.0.0.1:{}", server.port))
        .arg(format!("--report-file={}", report.display()));
    let (code, log) = run_bounded(cmd, Duration::from_secs(900));
    // Its actor processes leave the process group; the next race would see them running.
    stop_processes_of(home.path());
    assert_eq!(code, Some(0), "esrally: {log}");
    let report = std::fs::read_to_string(&report).expect("esrally wrote its report");
    (report, server, env)
}

/// The project's fixture of Rally's general rules (tests/fixtures/rally-rules), raced by
/// esrally itself against `runner serve`: every task without error, and the documents where
/// Rally put them (the looped bulk's count aside, which its completing task decides).
#[test]
fn esrally_races_the_rally_rules_fixture_against_runner_serve() {
    let Some(esrally) = esrally_here() else {
        return;
    };
    let _one = esrally_venv_lock();
    let home = tempfile::tempdir().unwrap();
    let fixture = repo().join("tests/fixtures/rally-rules");
    let data = home.path().join(".rally/benchmarks/data/docs");
    std::fs::create_dir_all(&data).unwrap();
    std::fs::copy(
        fixture.join("documents-1k.json"),
        data.join("documents-1k.json"),
    )
    .unwrap();
    let (report, server, _env) = esrally_race(&esrally, home, &fixture, &[]);
    let rates = every_task_without_error(&report);
    let tasks: Vec<&str> = rates.iter().map(|(t, _)| t.as_str()).collect();
    for task in ["generated-bulk", "sliced-bulk", "looped-bulk", "index-docs"] {
        assert!(
            tasks.contains(&task),
            "no `{task}` in the report:\n{report}"
        );
    }
    let count = |index: &str| -> u64 {
        let answer: serde_json::Value = serde_json::from_str(&http_body(
            server.port,
            "GET",
            &format!("/{index}/_count"),
            "",
        ))
        .unwrap();
        answer["count"]
            .as_u64()
            .unwrap_or_else(|| panic!("{index}: {answer}"))
    };
    assert_eq!(
        count("generated"),
        2,
        "one drawn bulk of two (test mode: an iteration a client)"
    );
    assert_eq!(count("sliced"), 3, "the corpus through Slice");
    assert!(count("docs") >= 3, "the corpus and the looped bulk");
}

/// Puts each file the generator made (its summary on stdout: `file`, `corpus`) where Rally
/// reads it: flat for a track of one corpus, under the corpus's name for several.
fn place_corpora(summary: &[u8], generated: &std::path::Path, data: &std::path::Path) {
    let made: serde_json::Value = serde_json::from_slice(summary).expect("the generator's summary");
    let files = made.as_array().cloned().unwrap_or_default();
    let corpora: std::collections::BTreeSet<&str> =
        files.iter().filter_map(|f| f["corpus"].as_str()).collect();
    for f in &files {
        let file = f["file"].as_str().expect("a file name");
        let mut to = data.to_path_buf();
        if corpora.len() > 1 {
            to.push(f["corpus"].as_str().unwrap_or_default());
        }
        std::fs::create_dir_all(&to).unwrap();
        std::fs::copy(generated.join(file), to.join(file)).unwrap();
    }
}

/// Waits, at most `limit`, until no esrally process is left on the machine (an earlier
/// race's, killed, may linger until it is reaped; esrally counts it as running).
fn wait_for_no_esrally(limit: Duration) {
    let started = Instant::now();
    while started.elapsed() < limit {
        let any = std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.parse::<u32>().is_ok())
            })
            .any(|e| {
                std::fs::read_to_string(e.path().join("comm"))
                    .is_ok_and(|comm| comm.trim_start().starts_with("esrally"))
            });
        if !any {
            return;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Kills the processes whose `HOME` is `home` (this test's own esrally's, none other), and
/// waits until they are gone.
fn stop_processes_of(home: &std::path::Path) {
    let wanted = format!("HOME={}", home.display());
    let ours = || -> Vec<i32> {
        std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .is_ok_and(|env| env.split(|b| *b == 0).any(|kv| kv == wanted.as_bytes()))
            })
            .collect()
    };
    let started = Instant::now();
    let mut killed = std::collections::BTreeSet::new();
    loop {
        let pids = ours();
        // A killed process stays in /proc until it is reaped, and esrally counts it.
        killed.retain(|pid| std::path::Path::new(&format!("/proc/{pid}")).exists());
        if (pids.is_empty() && killed.is_empty()) || started.elapsed() > Duration::from_secs(20) {
            return;
        }
        for pid in pids {
            // SAFETY: signals a process this test's esrally started; no memory is touched.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            killed.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Each task's error rate in an esrally report.
fn error_rates(report: &str) -> Vec<(String, f64)> {
    report
        .lines()
        .filter(|l| l.contains("error rate"))
        .map(|line| {
            let cells: Vec<&str> = line.split('|').map(str::trim).collect();
            (cells[2].to_string(), cells[3].parse::<f64>().unwrap())
        })
        .collect()
}

/// Each task's error rate, every one asserted 0.
fn every_task_without_error(report: &str) -> Vec<(String, f64)> {
    let rates = error_rates(report);
    for (task, rate) in &rates {
        assert!(
            *rate == 0.0,
            "`{task}` failed {rate}% of its operations against runner serve:\n{report}"
        );
    }
    rates
}

#[test]
fn esrally_races_geonames_against_runner_serve() {
    let Some(report) = race("geonames") else {
        return;
    };
    let rates = every_task_without_error(&report);
    assert!(
        rates.len() >= 25,
        "the report lists {} tasks:\n{report}",
        rates.len()
    );
}

/// nested: nested queries, inner hits (of 3 and of 100 objects) and the nested aggregation,
/// every task without error.
#[test]
fn esrally_races_nested_against_runner_serve() {
    let Some(report) = race("nested") else {
        return;
    };
    let rates = every_task_without_error(&report);
    let tasks: Vec<&str> = rates.iter().map(|(t, _)| t.as_str()).collect();
    for task in [
        "nested-date-histo",
        "randomized-nested-queries-with-inner-hits_default_big_size",
    ] {
        assert!(
            tasks.contains(&task),
            "no `{task}` in the report:\n{report}"
        );
    }
}

/// elastic/logs (its default challenge, logging-indexing): its 14 integration pipelines and
/// Fleet's final pipeline put and run on every document, its data streams, templates and
/// ILM; every task without error. One node holds no replica, so the race is told so, as on
/// a one-node Elasticsearch (`number_of_replicas:0`; with the track's default of 1 its
/// health check waits for green forever there too). Its Python is a package of its own
/// (param sources, runners, processors) that is never committed here, so this runs by hand on
/// a checkout of the public elastic/rally-tracks:
/// `RUNNER_TEST_RALLY_TRACKS_REPO=DIR cargo test esrally_races_elastic_logs -- --ignored`
/// (with RUNNER_TEST_ESRALLY and RUNNER_TEST_RALLY_TRACKS as .ci/run sets them).
#[test]
#[ignore = "needs elastic/logs' own Python: a checkout of elastic/rally-tracks (RUNNER_TEST_RALLY_TRACKS_REPO)"]
fn esrally_races_elastic_logs_against_runner_serve() {
    let repo = std::env::var("RUNNER_TEST_RALLY_TRACKS_REPO")
        .expect("RUNNER_TEST_RALLY_TRACKS_REPO: a checkout of elastic/rally-tracks");
    let shared = std::env::var("RUNNER_TEST_RALLY_TRACKS").expect("RUNNER_TEST_RALLY_TRACKS");
    let tracks = tempfile::tempdir().unwrap();
    // elastic/logs imports elastic/shared: the repository's whole `elastic` folder.
    copy_tree(
        &std::path::Path::new(&repo).join("elastic"),
        &tracks.path().join("elastic/elastic"),
    );
    copy_tree(
        &std::path::Path::new(&shared).join("tools"),
        &tracks.path().join("tools"),
    );
    let Some((report, server, _env)) = race_with(
        tracks.path(),
        "elastic/logs",
        &["--track-params=number_of_replicas:0"],
    ) else {
        return;
    };
    let rates = every_task_without_error(&report);
    let tasks: Vec<&str> = rates.iter().map(|(t, _)| t.as_str()).collect();
    for task in ["insert-pipelines", "bulk-index"] {
        assert!(
            tasks.contains(&task),
            "no `{task}` in the report:\n{report}"
        );
    }
    // The documents went through the pipelines, none failing, and are searchable.
    let get = |path: &str| -> serde_json::Value {
        serde_json::from_str(&http_body(server.port, "GET", path, "")).unwrap()
    };
    let stats = get("/_nodes/stats/ingest");
    let node = stats["nodes"]
        .as_object()
        .unwrap()
        .values()
        .next()
        .unwrap()
        .clone();
    assert!(
        node["ingest"]["total"]["count"].as_u64().unwrap() > 0,
        "{node}"
    );
    assert_eq!(
        node["ingest"]["total"]["failed"].as_u64(),
        Some(0),
        "{node}"
    );
    let pipelines = node["ingest"]["pipelines"].as_object().unwrap();
    assert!(pipelines.len() >= 15, "{}", pipelines.len());
    let count = get("/logs-*/_count");
    assert!(count["count"].as_u64().unwrap() > 0, "{count}");
}
