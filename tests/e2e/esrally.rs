//! esrally 2.13 itself races a real Rally track, unmodified, against `runner serve`:
//! `--pipeline=benchmark-only`, test mode, its always-on telemetry reading `_nodes/stats`,
//! `_stats` and `_cluster/*` as from Elasticsearch. `.ci/run` installs esrally in a venv
//! (RUNNER_TEST_ESRALLY) and the shared tracks are beside the repository
//! (RUNNER_TEST_RALLY_TRACKS); their corpus comes from the shared generator. The race must exit
//! 0 and every task run without error, except those running scripts (out of reach, as
//! docs/rally.md lists).

use crate::elasticsearch::serve;
use crate::util::*;
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::{Duration, Instant};

/// geonames' tasks that run Painless or expression scripts.
const SCRIPT_TASKS: [&str; 5] = [
    "expression",
    "painless_static",
    "painless_dynamic",
    "decay_geo_gauss_script_score",
    "field_value_script_score",
];

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

#[test]
fn esrally_races_geonames_against_runner_serve() {
    let (Ok(esrally), Ok(shared)) = (
        std::env::var("RUNNER_TEST_ESRALLY"),
        std::env::var("RUNNER_TEST_RALLY_TRACKS"),
    ) else {
        assert!(
            std::env::var_os("CI").is_none()
                || std::env::var_os("RUNNER_TEST_RALLY_TRACKS").is_none(),
            "CI must provide esrally (RUNNER_TEST_ESRALLY, see .ci/run)"
        );
        eprintln!("NOT CHECKED: esrally or the shared Rally tracks are not here (RUNNER_TEST_ESRALLY, RUNNER_TEST_RALLY_TRACKS; .ci/run sets both)");
        return;
    };
    let track = format!("{shared}/elastic/geonames");
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join(".rally/benchmarks/data/geonames");
    std::fs::create_dir_all(&data).unwrap();
    let python = std::path::Path::new(&esrally).with_file_name("python");
    let made = Command::new(&python)
        .arg(format!("{shared}/tools/make_corpus.py"))
        .args([&track, data.to_str().unwrap(), "--docs", "1000"])
        .output()
        .expect("the corpus generator runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let env = Env::new();
    let server = serve(&env, &[]);
    let report = home.path().join("report.md");
    let mut cmd = Command::new(&esrally);
    cmd.env("HOME", home.path())
        .arg("race")
        .arg(format!("--track-path={track}"))
        .args([
            "--pipeline=benchmark-only",
            "--test-mode",
            "--offline",
            "--on-error=continue",
        ])
        .arg(format!("--target-hosts=127.0.0.1:{}", server.port))
        .arg(format!("--report-file={}", report.display()));
    let (code, log) = run_bounded(cmd, Duration::from_secs(600));
    assert_eq!(code, Some(0), "esrally: {log}");
    let report = std::fs::read_to_string(&report).expect("esrally wrote its report");
    let mut tasks = 0;
    for line in report.lines().filter(|l| l.contains("error rate")) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (task, rate) = (cells[2], cells[3].parse::<f64>().unwrap());
        tasks += 1;
        assert!(
            rate == 0.0 || SCRIPT_TASKS.contains(&task),
            "`{task}` failed {rate}% of its operations against runner serve:\n{report}"
        );
    }
    assert!(tasks >= 25, "the report lists {tasks} tasks:\n{report}");
}
