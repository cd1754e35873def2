//! Elasticsearch's REST API YAML tests, run against `runner serve`.
//!
//! Two sets run through the same harness:
//! - `tests/rest_yaml/cases/`: cases of ours in Elasticsearch's format, written from its
//!   documentation; every one must pass.
//! - Elasticsearch's own `rest-api-spec` tests, read from the directory
//!   `RUNNER_TEST_ES_REST_TESTS` names (a copy of `rest-api-spec/src/yamlRestTest/resources/
//!   rest-api-spec/test` from elastic/elasticsearch; they are not kept in this repository).
//!   Every case passes except those `tests/rest_yaml/out_of_reach.txt` lists with a reason; a
//!   listed case that passes fails the test too, so the list stays true.

mod api;
mod client;
mod run;
mod suite;

use crate::elasticsearch::serve;
use crate::util::{repo, Env};
use run::{Context, Outcome};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Elasticsearch's test directories this project is held to.
const DIRECTORIES: &[&str] = &[
    "bulk",
    "index",
    "get",
    "count",
    "search",
    "search.aggregation",
    "indices.create",
    "indices.put_alias",
    "ingest",
    "mget",
    "msearch",
    "update",
    "delete",
    "delete_by_query",
    "indices.get_mapping",
    "indices.stats",
    "cat.indices",
];

struct CaseResult {
    file: String,
    case: String,
    outcome: Outcome,
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"));
    files.sort();
    files
}

/// Each case on a fresh `runner serve`: Elasticsearch wipes its cluster between cases.
fn run_file(env: &Env, path: &Path, label: &str) -> Vec<CaseResult> {
    let text = std::fs::read_to_string(path).expect("readable test file");
    let suite = match suite::parse(&text) {
        Ok(s) => s,
        Err(e) => {
            return vec![CaseResult {
                file: label.to_string(),
                case: "(file)".into(),
                outcome: Outcome::Failed(format!("unreadable: {e}")),
            }]
        }
    };
    let mut results = Vec::new();
    for case in &suite.cases {
        let outcome = match run::skip_reason(&suite, case) {
            Some(reason) => Outcome::Skipped(reason),
            None => {
                let server = serve(env, &[]);
                let mut cx = Context::new(server.port);
                let result = cx
                    .run(&suite.setup, "setup")
                    .and_then(|()| cx.run(&case.steps, "case"));
                let _ = cx.run(&suite.teardown, "teardown");
                match result {
                    Ok(()) => Outcome::Passed,
                    Err(e) => Outcome::Failed(e),
                }
            }
        };
        results.push(CaseResult {
            file: label.to_string(),
            case: case.name.clone(),
            outcome,
        });
    }
    results
}

#[test]
fn runner_serve_passes_its_own_rest_cases() {
    let env = Env::new();
    let dir = repo().join("tests/rest_yaml/cases");
    let files = yaml_files(&dir);
    assert!(!files.is_empty(), "no cases under {}", dir.display());
    let mut failures = Vec::new();
    let mut passed = 0;
    for file in files {
        let label = file.file_name().unwrap().to_string_lossy().into_owned();
        for r in run_file(&env, &file, &label) {
            match r.outcome {
                Outcome::Passed => passed += 1,
                Outcome::Skipped(why) => {
                    failures.push(format!("{} :: {} skipped: {why}", r.file, r.case))
                }
                Outcome::Failed(why) => failures.push(format!("{} :: {}: {why}", r.file, r.case)),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(passed >= 20, "only {passed} cases ran");
}

/// `file :: case :: reason` lines: the Elasticsearch cases runner serve is not held to.
fn out_of_reach() -> BTreeMap<(String, String), String> {
    let text = std::fs::read_to_string(repo().join("tests/rest_yaml/out_of_reach.txt"))
        .expect("tests/rest_yaml/out_of_reach.txt");
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.splitn(3, " :: ");
            let (f, c, r) = (it.next(), it.next(), it.next());
            let (Some(f), Some(c), Some(r)) = (f, c, r) else {
                panic!("out_of_reach.txt: `{l}` is not `file :: case :: reason`");
            };
            (
                (f.trim().to_string(), c.trim().to_string()),
                r.trim().to_string(),
            )
        })
        .collect()
}

#[test]
fn elasticsearch_rest_tests_pass_against_runner_serve() {
    let Some(root) = std::env::var_os("RUNNER_TEST_ES_REST_TESTS") else {
        eprintln!("skipped: RUNNER_TEST_ES_REST_TESTS names no copy of Elasticsearch's REST tests");
        return;
    };
    let root = PathBuf::from(root);
    let listed = out_of_reach();
    let env = Env::new();
    let mut table = String::from(
        "| directory | cases | passed | out of reach | skipped by their own prerequisites |\n|---|---:|---:|---:|---:|\n",
    );
    let mut unexpected = Vec::new();
    let mut reasons = Vec::new();
    for dir in DIRECTORIES {
        let (mut total, mut passed, mut reach, mut skipped) = (0, 0, 0, 0);
        for file in yaml_files(&root.join(dir)) {
            let label = format!("{dir}/{}", file.file_name().unwrap().to_string_lossy());
            for r in run_file(&env, &file, &label) {
                total += 1;
                let key = (r.file.clone(), r.case.clone());
                match (r.outcome, listed.get(&key)) {
                    (Outcome::Passed, None) => passed += 1,
                    (Outcome::Passed, Some(_)) => unexpected.push(format!(
                        "{label} :: {} passes: take it off out_of_reach.txt",
                        r.case
                    )),
                    (Outcome::Skipped(_), _) => skipped += 1,
                    (Outcome::Failed(_), Some(reason)) => {
                        reach += 1;
                        reasons.push(format!("- {label} :: {}: {reason}", r.case));
                    }
                    (Outcome::Failed(why), None) => {
                        unexpected.push(format!("{label} :: {}: {why}", r.case))
                    }
                }
            }
        }
        table.push_str(&format!(
            "| {dir} | {total} | {passed} | {reach} | {skipped} |\n"
        ));
    }
    println!("{table}\nOut of reach:\n{}", reasons.join("\n"));
    if let Some(out) = std::env::var_os("RUNNER_TEST_ES_REST_REPORT") {
        std::fs::write(
            out,
            format!("{table}\nOut of reach:\n{}\n", reasons.join("\n")),
        )
        .unwrap();
    }
    assert!(
        unexpected.is_empty(),
        "{} unexpected:\n{}",
        unexpected.len(),
        unexpected.join("\n")
    );
}
