//! The official Python clients (elasticsearch 8.19, opensearch-py 3.2) call `runner serve` as
//! an application would, every answer checked (`tests/fixtures/clients/official_clients.py`).

use crate::elasticsearch::{serve, url};
use crate::util::*;

#[test]
fn official_python_clients_work_against_runner_serve() {
    let Some(python) = clients_python() else {
        return;
    };
    let env = Env::new();
    let server = serve(&env, &[]);
    let out = std::process::Command::new(python)
        .arg(repo().join("tests/fixtures/clients/official_clients.py"))
        .arg(url(server.port))
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tally = stdout
        .lines()
        .find_map(|l| l.strip_suffix(" calls worked"))
        .expect("a tally");
    let (worked, of) = tally.split_once(" of ").expect("N of M");
    assert_eq!(worked, of, "{stdout}");
    assert!(of.parse::<u32>().unwrap() >= 30, "{stdout}");
}
