//! Each kind of bad track gives one clear error naming the file and line/column or schema
//! path, exit code 2, and no panic.

use crate::util::*;

pub const GOOD_HEAD: &str = "name: t
corpora:
  - name: c
    target-index: i
    documents: [{source-file: docs.json}]
indices: [{name: i}]
operations:
  - {name: bulk, type: bulk}
  - {name: s, type: search}
";

/// Races a track made of `files`; asserts exit code 2 and no stored race; returns stderr.
fn fails(files: &[(&str, &str)], extra: &[&str]) -> String {
    let mut all = vec![("docs.json", "{\"a\":1}\n")];
    all.extend_from_slice(files);
    let dir = track_dir(&all);
    let env = Env::new();
    let path = dir.path().to_str().unwrap().to_string();
    let mut args = vec!["race", "--track-path", &path, "--quiet"];
    args.extend_from_slice(extra);
    let out = env.run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(
        out.status.code(),
        Some(2),
        "expected exit 2, got {:?}: {stderr}",
        out.status.code()
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(stderr.contains("track.yaml"), "names the file: {stderr}");
    assert!(
        env.race_dirs().is_empty(),
        "no race is stored for bad input"
    );
    stderr
}

#[test]
fn malformed_yaml_names_line_and_column() {
    let e = fails(
        &[("track.yaml", "name: t\nchallenges:\n  - name: [unclosed\n")],
        &[],
    );
    assert!(
        e.contains("invalid YAML") && e.contains("track.yaml:4:1"),
        "{e}"
    );
}

#[test]
fn template_error_names_the_line() {
    let e = fails(&[("track.yaml", "name: t\nchallenges: {{ nope }}\n")], &[]);
    assert!(
        e.contains("template error") && e.contains("track.yaml:2:"),
        "{e}"
    );
}

#[test]
fn unknown_field_suggests_the_closest_known_one() {
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - operation: s\n        clinets: 2\n"))], &[]);
    assert!(
        e.contains("track.yaml:14:9")
            && e.contains("unknown field `clinets` (did you mean `clients`?)"),
        "{e}"
    );
}

#[test]
fn missing_corpus_file_names_the_path() {
    let track = GOOD_HEAD.replace("docs.json", "nowhere.json.zst")
        + "challenges:\n  - name: c\n    schedule: [{operation: bulk}]\n";
    let e = fails(&[("track.yaml", &track)], &[]);
    assert!(
        e.contains("nowhere.json.zst does not exist")
            && e.contains("/corpora/0/documents/0/source-file")
            && e.contains("track.yaml:5:"),
        "{e}"
    );
}

#[test]
fn sweeping_a_param_that_cannot_be_swept() {
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - operation: bulk\n        params: {{index: [a, b]}}\n"))], &[]);
    assert!(
        e.contains("`index` cannot be swept for a `bulk` operation")
            && e.contains("sweepable params: bulk-size, flush-bytes"),
        "{e}"
    );
    assert!(e.contains("/challenges/0/schedule/0/params/index"), "{e}");
}

#[test]
fn sweeping_inside_parallel_is_refused() {
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - parallel:\n          tasks:\n            - {{operation: s, clients: [1, 2]}}\n"))], &[]);
    assert!(
        e.contains("cannot be swept inside a `parallel` block"),
        "{e}"
    );
}

#[test]
fn unknown_challenge_lists_the_known_ones() {
    let e = fails(
        &[(
            "track.yaml",
            &format!(
                "{GOOD_HEAD}challenges:\n  - name: append\n    schedule: [{{operation: s}}]\n"
            ),
        )],
        &["--challenge", "apend"],
    );
    assert!(
        e.contains("has no challenge `apend` (did you mean `append`?)"),
        "{e}"
    );
}

#[test]
fn unknown_operation_type_and_name() {
    let e = fails(&[("track.yaml", "name: t\noperations: [{name: x, type: bluk}]\nchallenges: [{name: c, schedule: [{operation: x}]}]\n")], &[]);
    assert!(e.contains("/operations/0/type"), "{e}");
    let e = fails(
        &[(
            "track.yaml",
            &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule: [{{operation: bulkk}}]\n"),
        )],
        &[],
    );
    assert!(
        e.contains("no operation named `bulkk` under `operations` (did you mean `bulk`?)"),
        "{e}"
    );
}

#[test]
fn unknown_operation_param_is_named() {
    let e = fails(&[("track.yaml", "name: t\noperations: [{name: x, type: sleep, params: {duraton: 1}}]\nchallenges: [{name: c, schedule: [{operation: x}]}]\n")], &[]);
    assert!(
        e.contains("`sleep` does not take a param `duraton` (did you mean `duration`?)")
            && e.contains("track.yaml:2:"),
        "{e}"
    );
}

#[test]
fn bad_values_name_the_schema_path() {
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - {{operation: s, clients: -1}}\n"))], &[]);
    assert!(
        e.contains("/challenges/0/schedule/0/clients")
            && e.contains("positive integer")
            && e.contains("schema:"),
        "{e}"
    );
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - {{operation: s, target-throughput: []}}\n"))], &[]);
    assert!(e.contains("empty list"), "{e}");
    let e = fails(&[("track.yaml", &format!("{GOOD_HEAD}challenges:\n  - name: c\n    schedule:\n      - {{operation: s, iterations: 10, warmup: 100%}}\n"))], &[]);
    assert!(e.contains("leaves nothing to measure"), "{e}");
}

#[test]
fn unknown_track_parameter_suggests() {
    let track = "name: t\nparameters: {bulk_size: 5}\nchallenges: [{name: c, schedule: [{operation: {name: n, type: sleep}}]}]\n";
    let e = fails(
        &[("track.yaml", track)],
        &["--track-params", "bulk_sise=10"],
    );
    assert!(
        e.contains("unknown track parameter `bulk_sise` (did you mean `bulk_size`?)"),
        "{e}"
    );
}

#[test]
fn includes_cannot_leave_the_track_directory() {
    let e = fails(
        &[("track.yaml", "{% include '../../../etc/passwd' %}\n")],
        &[],
    );
    assert!(e.contains("outside the track directory"), "{e}");
}

#[test]
fn unknown_built_in_track_and_race_ids() {
    let env = Env::new();
    let out = env.run(&["race", "--track", "geonamez"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("no built-in track `geonamez` (did you mean `geonames`?)"));
    let out = env.run(&["show", "nope"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no race `nope`"));
}

/// A track whose only corpus is `corpus` (YAML of one corpus entry) and one bulk task.
fn corpus_track(corpus: &str) -> String {
    format!("name: t\ncorpora:\n{corpus}indices: [{{name: i}}]\noperations:\n  - {{name: create, type: create-index}}\n  - {{name: bulk, type: bulk}}\nchallenges:\n  - name: c\n    schedule: [{{operation: create}}, {{operation: bulk}}]\n")
}

#[test]
fn generated_corpora_need_a_known_dataset_and_a_count() {
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track("  - name: c\n    documents: [{generate: smal, document-count: 10}]\n"),
        )],
        &[],
    );
    assert!(
        e.contains("/corpora/0/documents/0/generate")
            && e.contains("track.yaml:4:18")
            && e.contains("did you mean `small`")
            && e.contains("it takes: small, httplog"),
        "{e}"
    );
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track("  - name: c\n    documents: [{generate: small}]\n"),
        )],
        &[],
    );
    assert!(
        e.contains("need a `document-count`") && e.contains("/corpora/0/documents/0"),
        "{e}"
    );
    let e = fails(&[("track.yaml", &corpus_track("  - name: c\n    documents: [{generate: small, source-file: docs.json, document-count: 5}]\n"))], &[]);
    assert!(e.contains("either `source-file` or `generate`"), "{e}");
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track("  - name: c\n    documents: [{document-count: 5}]\n"),
        )],
        &[],
    );
    assert!(e.contains("need a `source-file` or a `generate`"), "{e}");
}

#[test]
fn from_track_names_a_sibling_track_that_has_the_corpus() {
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track("  - name: c\n    from-track: ../../etc\n"),
        )],
        &[],
    );
    assert!(
        e.contains("is not a track name") && e.contains("/corpora/0/from-track"),
        "{e}"
    );
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track("  - name: c\n    from-track: no-such-track-here\n"),
        )],
        &[],
    );
    assert!(
        e.contains("no track `no-such-track-here` beside this track"),
        "{e}"
    );
    let e = fails(
        &[(
            "track.yaml",
            &corpus_track(
                "  - name: c\n    from-track: x\n    documents: [{source-file: docs.json}]\n",
            ),
        )],
        &[],
    );
    assert!(e.contains("either `from-track` or `documents`"), "{e}");
}

#[test]
fn a_borrowed_corpus_must_exist_in_the_lending_track() {
    let root = tempfile::tempdir().unwrap();
    let lender = root.path().join("lender");
    let borrower = root.path().join("borrower");
    std::fs::create_dir_all(&lender).unwrap();
    std::fs::create_dir_all(&borrower).unwrap();
    std::fs::write(
        lender.join("track.yaml"),
        corpus_track("  - name: places\n    documents: [{generate: small, document-count: 5}]\n"),
    )
    .unwrap();
    std::fs::write(
        borrower.join("track.yaml"),
        corpus_track("  - name: place\n    from-track: lender\n"),
    )
    .unwrap();
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        borrower.to_str().unwrap(),
        "--quiet",
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("track `lender` has no corpus `place` (did you mean `places`?)"),
        "{e}"
    );
    // Named rightly, the borrowed generated corpus indexes.
    std::fs::write(
        borrower.join("track.yaml"),
        corpus_track("  - name: places\n    from-track: lender\n"),
    )
    .unwrap();
    env.ok(&[
        "race",
        "--track-path",
        borrower.to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    assert_eq!(tasks(&race, "bulk")[0]["trials"][0]["units"], 5, "{race}");
}

#[test]
fn a_byte_order_mark_before_a_track_or_a_corpus_is_not_content() {
    let dir = track_dir(&[
        ("track.yaml", "\u{feff}name: bom\ncorpora: [{name: c, target-index: i, documents: [{source-file: docs.json}]}]\nindices: [{name: i}]\noperations: [{name: ci, type: create-index}, {name: bulk, type: bulk}]\nchallenges: [{name: c, schedule: [{operation: ci}, {operation: bulk}]}]\n"),
        ("docs.json", "\u{feff}{\"a\":1}\n{\"a\":2}\n"),
    ]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    assert_eq!(tasks(&race, "bulk")[0]["trials"][0]["units"], 2, "{race}");
}

#[test]
fn an_empty_race_id_names_no_race() {
    let dir = track_dir(&[("track.yaml", "name: t\noperations: [{name: nap, type: sleep}]\nchallenges: [{name: c, schedule: [{operation: nap}]}]\n")]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    for empty in ["", " "] {
        let out = env.run(&["delete", empty]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(e.contains("a race id cannot be empty"), "{e}");
    }
    assert_eq!(env.race_dirs().len(), 1, "the only race is still there");
}

/// A sleep task with `keys` set, as a track.
fn nap_track(keys: &str) -> String {
    format!("name: t\noperations: [{{name: nap, type: sleep}}]\nchallenges: [{{name: c, schedule: [{{name: nap, operation: nap, {keys}}}]}}]\n")
}

#[test]
fn numbers_that_become_counts_or_times_are_honoured_exactly_or_refused() {
    // Refused before the race, naming the key: never a panic, never something else run instead.
    for (keys, says) in [
        ("clients: 1e30", "clients: `1e+30` is not a whole number"),
        ("clients: 200000", "200000 is more than the 100000 allowed"),
        ("time-period: 0s", "a time period of 0 measures nothing"),
        (
            "time-period: 1e19",
            "1e19 s is longer than the longest duration allowed",
        ),
        (
            "target-throughput: 1e-300",
            "1e-300 ops/s is outside what can be scheduled",
        ),
        (
            "iterations: 10, target-interval: 5e18, clients: 4",
            "5e18 s is longer than the longest duration allowed",
        ),
    ] {
        let e = fails(&[("track.yaml", &nap_track(keys))], &[]);
        assert!(e.contains(says), "{keys}: {e}");
    }
    // Whole numbers written as floats are what they say.
    let dir = track_dir(&[("track.yaml", &nap_track("clients: 2.0, iterations: 1e3"))]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    let nap = &tasks(&race, "nap")[0];
    assert_eq!(
        (
            nap["clients"].as_u64(),
            nap["trials"][0]["operations"].as_u64()
        ),
        (Some(2), Some(1000)),
        "{nap}"
    );
    // Times from options and the environment are bounded the same way.
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "redis",
        "--target-hosts",
        "127.0.0.1:1",
        "--client-options",
        "timeout:1e19",
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("client option `timeout`: 1e19 s is longer"),
        "{e}"
    );
    let out = env
        .command(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
            "--backend",
            "redis",
            "--target-hosts",
            "127.0.0.1:1",
        ])
        .env("RUNNER_REDIS_TIMEOUT_SECS", "18446744073709551615")
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(
        e.contains("RUNNER_REDIS_TIMEOUT_SECS: 1.8446744073709552e19 s is longer"),
        "{e}"
    );
}

#[test]
fn two_tasks_of_one_name_are_refused_as_in_rally_and_reused_operations_numbered() {
    let track = "name: t\noperations: [{name: nap, type: sleep}]\nchallenges: [{name: c, schedule: [{name: x, operation: nap}, {parallel: {tasks: [{name: x, operation: nap, iterations: 2}]}}]}]\n";
    let e = fails(&[("track.yaml", track)], &[]);
    assert!(
        e.contains("challenge `c` has two tasks named `x` (the first at /challenges/0/schedule/0)")
            && e.contains("own `name`"),
        "{e}"
    );
    // An operation used twice without names: the second task is `nap-2`, so reports and
    // compare can tell them apart.
    let reused = "name: t\noperations: [{name: nap, type: sleep}]\nchallenges: [{name: c, schedule: [{operation: nap}, {operation: nap, iterations: 2}]}]\n";
    let dir = track_dir(&[("track.yaml", reused)]);
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let race = env.only_race();
    let names: Vec<&str> = race["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nap", "nap-2"]);
}

#[test]
fn a_nested_parallel_says_why_instead_of_suggesting_itself() {
    let track = "name: t\noperations: [{name: nap, type: sleep}]\nchallenges: [{name: c, schedule: [{parallel: {tasks: [{parallel: {tasks: [{operation: nap}]}}]}}]}]\n";
    let e = fails(&[("track.yaml", track)], &[]);
    assert!(
        e.contains("a `parallel` block cannot hold another one")
            && !e.contains("did you mean `parallel`"),
        "{e}"
    );
}

#[test]
fn a_fifo_or_a_directory_where_a_file_belongs_is_named_not_waited_on() {
    let mkfifo = |p: &std::path::Path| {
        assert!(std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success())
    };
    // An include that is a FIFO: before, the load blocked forever.
    let dir = track_dir(&[(
        "track.yaml",
        "name: t\noperations: [{name: nap, type: sleep}]\n{% include \"more.yaml\" %}\n",
    )]);
    mkfifo(&dir.path().join("more.yaml"));
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
    ]);
    let e = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{e}");
    assert!(e.contains("a FIFO (named pipe), not a regular file"), "{e}");
    // A corpus that is a FIFO or a directory is said to be one, not to be missing.
    for (make, what) in [(true, "a FIFO"), (false, "a directory")] {
        let dir = track_dir(&[("track.yaml", "name: t\ncorpora: [{name: c, target-index: i, documents: [{source-file: docs.json}]}]\nindices: [{name: i}]\noperations: [{name: b, type: bulk}]\nchallenges: [{name: c, schedule: [{operation: b}]}]\n")]);
        let docs = dir.path().join("docs.json");
        if make {
            mkfifo(&docs);
        } else {
            std::fs::create_dir(&docs).unwrap();
        }
        let out = env.run(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
        let e = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{e}");
        assert!(
            e.contains(&format!("is {what}")) && !e.contains("does not exist"),
            "{e}"
        );
    }
}
