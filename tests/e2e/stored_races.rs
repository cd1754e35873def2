//! Races stored by an earlier runner still read and report the same: the stored format is a
//! promise to the user's history, not whatever the runtime types serialise to today.
//!
//! `tests/fixtures/stored-races/<name>/` holds a race as stored (race.json, histograms.json)
//! and the reports `runner show` gave for it (`show.md`, `show.csv`, `show.json`). A change
//! that alters them on purpose regenerates them with `RUNNER_BLESS=1 cargo test stored_races`
//! and says why in its commit.

use crate::util::*;
use std::path::Path;

const FORMATS: &[(&str, &str)] = &[
    ("markdown", "show.md"),
    ("csv", "show.csv"),
    ("json", "show.json"),
];

fn fixtures() -> Vec<std::path::PathBuf> {
    let mut dirs: Vec<_> = std::fs::read_dir(repo().join("tests/fixtures/stored-races"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("race.json").is_file())
        .collect();
    dirs.sort();
    dirs
}

fn copy_race(from: &Path, home: &Path, name: &str) {
    let to = home.join("races").join(name);
    std::fs::create_dir_all(&to).unwrap();
    for file in ["race.json", "histograms.json"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
}

#[test]
fn stored_races_read_and_report_as_they_did() {
    let bless = std::env::var_os("RUNNER_BLESS").is_some();
    let fixtures = fixtures();
    assert!(fixtures.len() >= 2, "the fixtures are there: {fixtures:?}");
    for dir in fixtures {
        let name = dir.file_name().unwrap().to_str().unwrap().to_string();
        let env = Env::new();
        copy_race(&dir, env.home.path(), &name);
        for (format, file) in FORMATS {
            let out = env.run(&["show", &name, "--report-format", format]);
            assert!(
                out.status.success(),
                "{name}: show --report-format {format}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.stderr.is_empty(),
                "{name}: nothing in it is unreadable: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            let expected = dir.join(file);
            if bless {
                std::fs::write(&expected, &out.stdout).unwrap();
                continue;
            }
            let want = std::fs::read_to_string(&expected).unwrap_or_else(|e| {
                panic!("{}: {e} (RUNNER_BLESS=1 writes it)", expected.display())
            });
            let got = String::from_utf8_lossy(&out.stdout);
            if got != want {
                let line = got
                    .lines()
                    .zip(want.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(got.lines().count().min(want.lines().count()));
                panic!(
                    "{name}: `runner show --report-format {format}` differs from {} at line {}:\n got: {:?}\nwant: {:?}",
                    expected.display(),
                    line + 1,
                    got.lines().nth(line),
                    want.lines().nth(line)
                );
            }
        }
    }
}

#[test]
fn a_stored_record_round_trips_through_the_model_unchanged() {
    for dir in fixtures() {
        let text = std::fs::read_to_string(dir.join("race.json")).unwrap();
        let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
        let record: runner::results::RaceRecord = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: the record no longer reads: {e}", dir.display()));
        let again = serde_json::to_value(&record).unwrap();
        assert_eq!(
            again,
            stored,
            "{}: reading and writing a record changes it (a renamed or retyped field?)",
            dir.display()
        );
        let histograms = std::fs::read_to_string(dir.join("histograms.json")).unwrap();
        let file: runner::results::HistogramFile = serde_json::from_str(&histograms).unwrap();
        assert_eq!(
            serde_json::to_value(&file).unwrap(),
            serde_json::from_str::<serde_json::Value>(&histograms).unwrap()
        );
    }
}
