//! Any text as a track: loading (template, YAML, schema, resolution) and planning every
//! challenge must return a value or a `TrackError`, never panic, hang or exhaust memory.
#![no_main]

use libfuzzer_sys::fuzz_target;
use runner::plan::{self, PlanOptions};
use runner::track::{load_source, LoadOptions};
use std::sync::OnceLock;

/// A track directory with a corpus and an include, so that inputs can reach them.
fn track_dir() -> &'static tempfile::TempDir {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("docs.json"), "{\"a\":1}\n{\"a\":2}\n").unwrap();
        std::fs::write(dir.path().join("part.yaml"), "- {name: s, type: search}\n").unwrap();
        dir
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = track_dir().path().join("track.yaml");
    for test_mode in [false, true] {
        let Ok(track) = load_source(text, &file, &LoadOptions { test_mode, ..Default::default() }) else { continue };
        for challenge in &track.challenges {
            let _ = plan::build(&track, challenge, &PlanOptions { test_mode, include_tasks: None });
        }
    }
});
