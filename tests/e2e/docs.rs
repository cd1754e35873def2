//! The documentation as a user reads it: every track example in README.md and docs/ loads and
//! plans (`runner validate`), the README stays a front door, and its links lead somewhere.

use crate::util::*;
use std::path::PathBuf;

fn workspace() -> PathBuf {
    repo()
}

fn documentation() -> Vec<(PathBuf, String)> {
    let mut files = vec![workspace().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(workspace().join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f, text)
        })
        .collect()
}

/// The fenced blocks of `text` whose info string starts with `yaml`: (info, body).
fn yaml_blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        let Some(info) = line.strip_prefix("```yaml") else {
            continue;
        };
        let body: Vec<&str> = lines.by_ref().take_while(|l| *l != "```").collect();
        out.push((info.trim().to_string(), body.join("\n") + "\n"));
    }
    out
}

#[test]
fn every_track_example_in_the_documentation_loads() {
    let env = Env::new();
    let mut loaded = 0;
    for (file, text) in documentation() {
        for (info, body) in yaml_blocks(&text) {
            let whole = body.lines().any(|l| l.starts_with("challenges:"));
            if info != "track" {
                // A fragment shows part of a track; a whole track must be marked to be loaded.
                assert!(
                    !whole,
                    "{}: a whole track in a ```yaml block not marked `track`:\n{body}",
                    file.display()
                );
                continue;
            }
            let dir = track_dir(&[("track.yaml", &body)]);
            let out = env.run(&["validate", dir.path().to_str().unwrap()]);
            assert!(
                out.status.success(),
                "{}: the track example does not load: {}\n{body}",
                file.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            loaded += 1;
        }
    }
    assert!(
        loaded >= 2,
        "the README's and docs/tracks.md's examples at least: {loaded}"
    );
}

#[test]
fn the_readme_is_a_front_door_whose_links_lead_somewhere() {
    let readme = std::fs::read_to_string(workspace().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines; the reference lives in docs/"
    );
    assert!(
        readme.contains("cargo run --release -- race --track geonames")
            && readme.contains("cargo test"),
        "its first lines give the main job and the tests"
    );
    for (file, text) in documentation() {
        let dir = file.parent().unwrap();
        for target in text.split("](").skip(1).filter_map(|t| t.split(')').next()) {
            let path = target.split('#').next().unwrap();
            if path.is_empty() || path.starts_with("http") {
                continue;
            }
            assert!(
                dir.join(path).exists(),
                "{}: the link `{target}` leads nowhere",
                file.display()
            );
        }
    }
}
