//! A small harness: a temporary RUNNER_HOME, the binary, and readers of what it stored.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub struct Env {
    pub home: tempfile::TempDir,
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

impl Env {
    pub fn new() -> Env {
        Env { home: tempfile::tempdir().expect("temp dir") }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_runner"));
        c.args(args).env("RUNNER_HOME", self.home.path()).env("RUNNER_TRACKS_DIR", repo().join("tracks")).current_dir(repo());
        c
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("runner runs")
    }

    /// Runs and insists on success, returning stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "runner {args:?} failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).expect("utf-8 stdout")
    }

    pub fn race_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(self.home.path().join("races"))
            .map(|rd| rd.flatten().map(|e| e.path()).collect())
            .unwrap_or_default();
        dirs.sort();
        dirs
    }

    pub fn only_race(&self) -> serde_json::Value {
        let dirs = self.race_dirs();
        assert_eq!(dirs.len(), 1, "expected one stored race, found {dirs:?}");
        read_json(&dirs[0].join("race.json"))
    }
}

pub fn read_json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("readable")).expect("valid JSON")
}

/// Writes a track directory with the given files and returns its path.
pub fn track_dir(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for (name, text) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

pub fn tasks<'a>(race: &'a serde_json::Value, name: &str) -> Vec<&'a serde_json::Value> {
    race["tasks"].as_array().unwrap().iter().filter(|t| t["task"] == name).collect()
}
