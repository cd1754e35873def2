//! Rally tracks (#7, so far: templating). The fixture tests/fixtures/rally-geonames is a
//! Rally-format copy of a small geonames track whose operations/ and challenges/ parts are
//! joined by `rally.collect`; `runner render-track` renders it as Rally would.

use crate::util::*;

fn fixture() -> String {
    repo().join("tests/fixtures/rally-geonames").to_str().unwrap().to_string()
}

#[test]
fn render_track_joins_the_parts_and_applies_parameters() {
    let env = Env::new();
    let text = env.ok(&["render-track", "--track-path", &fixture()]);
    let track: serde_json::Value = serde_json::from_str(&text).expect("the rendered track is JSON");
    let ops: Vec<&str> = track["operations"].as_array().unwrap().iter().map(|o| o["name"].as_str().unwrap()).collect();
    assert_eq!(ops, ["index-append", "phrase"]);
    assert_eq!(track["operations"][0], serde_json::json!({"name": "index-append", "operation-type": "bulk", "bulk-size": 500}), "defaults, and no ingest-percentage unless set");
    let schedule = &track["challenges"][0]["schedule"];
    assert_eq!((schedule[2]["clients"].as_u64(), schedule[3]["target-throughput"].as_u64()), (Some(2), Some(200)));

    let text = env.ok(&["render-track", "--track-path", &fixture(), "--track-params", "bulk_size:5000,ingest_percentage:40,bulk_indexing_clients:8"]);
    let track: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(track["operations"][0]["bulk-size"], 5000);
    assert_eq!(track["operations"][0]["ingest-percentage"], 40, "exists_set_param writes a parameter that is set");
    assert_eq!(track["challenges"][0]["schedule"][2]["clients"], 8, "parts see the parameters");
}

#[test]
fn unused_parameters_and_template_errors_are_clear() {
    let env = Env::new();
    let out = env.run(&["render-track", "--track-path", &fixture(), "--track-params", "bulk_sise:5000"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("track.json") && stderr.contains("`bulk_sise` is not used by the track (did you mean `bulk_size`?)"), "{stderr}");
    env.ok(&["render-track", "--track-path", &fixture(), "--track-params", "bulk_sise:5000", "--ignore-unused-track-params"]);

    // A Jinja error in a part names the part and its line; a part that renders bad JSON is
    // caught; running a Rally track says what is and is not supported.
    let broken = track_dir(&[
        ("track.json", "{% import \"rally.helpers\" as rally with context %}\n{\"operations\": [{{ rally.collect(parts=\"operations/*.json\") }}]}\n"),
        ("operations/a.json", "{\"name\": \"a\",\n \"x\": {% if %}}\n"),
    ]);
    let out = env.run(&["render-track", "--track-path", broken.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("operations/a.json:2:") && stderr.contains("included from track.json") && !stderr.contains("panicked"), "{stderr}");
    std::fs::write(broken.path().join("operations/a.json"), "{\"name\": \"a\",}").unwrap();
    let out = env.run(&["render-track", "--track-path", broken.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the rendered track is not JSON"), "{stderr}");
    let out = env.run(&["race", "--track-path", &fixture()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("Rally track") && stderr.contains("not supported yet"), "{stderr}");
    assert!(env.race_dirs().is_empty());
}

#[test]
fn render_track_shows_our_tracks_after_templating_too() {
    let env = Env::new();
    let text = env.ok(&["render-track", "--track", "geonames", "--track-params", "documents:500000"]);
    assert!(text.contains("scale-to: 500000") && !text.contains("{{"), "{text}");
}
