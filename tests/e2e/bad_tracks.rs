//! The bad-track corpus: malformed and hostile tracks, each with the exact error kind it must
//! give and where the message must point. Every case is checked twice: in-process through the
//! library (load, then plan, as `runner race` does before it starts), which asserts the kind; and
//! with the real binary under a 2 GiB address-space limit and a deadline, which asserts exit
//! code 2, the same located message, no panic, no stored race, no hang and bounded memory.

use crate::util::*;
use runner::track::{TrackError, TrackErrorKind as K};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// Where the message must point.
#[derive(Clone, Copy, Debug)]
enum At {
    /// `track.yaml:LINE:COL`.
    LineCol(usize, usize),
    /// `track.yaml:LINE:` (the column is the template engine's or irrelevant).
    Line(usize),
    /// `at /json/pointer` (and a line:col found for it).
    Path(&'static str),
    /// The file alone: only for problems with the file as a whole (too big, not there).
    File,
    /// A command-line argument rather than the track file.
    Arg(&'static str),
}

struct Case {
    name: &'static str,
    files: Vec<(&'static str, Vec<u8>)>,
    args: Vec<&'static str>,
    kind: K,
    at: At,
    says: &'static str,
}

/// A valid head (corpus, index, bulk and search operations) that cases append to.
use crate::bad_input::GOOD_HEAD as HEAD;

/// HEAD plus a challenge whose only task is `task` (a flow mapping's inner text).
fn with_task(task: &str) -> String {
    format!("{HEAD}challenges:\n  - name: c\n    schedule:\n      - {{{task}}}\n")
}

fn case(
    name: &'static str,
    track: impl Into<Vec<u8>>,
    kind: K,
    at: At,
    says: &'static str,
) -> Case {
    Case {
        name,
        files: vec![("track.yaml", track.into())],
        args: vec![],
        kind,
        at,
        says,
    }
}

impl Case {
    fn file(mut self, name: &'static str, content: impl Into<Vec<u8>>) -> Case {
        self.files.push((name, content.into()));
        self
    }
    fn args(mut self, args: &[&'static str]) -> Case {
        self.args = args.to_vec();
        self
    }
}

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn corpus_track(source: &str) -> String {
    HEAD.replace("docs.json", source)
        + "challenges:\n  - name: c\n    schedule: [{operation: bulk}]\n"
}

fn cases() -> Vec<Case> {
    let laughs = "name: t\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n";
    let docs = "{\"a\":1}\n{\"a\":2}\n".repeat(50);
    let zst = zstd::encode_all(docs.as_bytes(), 3).unwrap();
    let big_name = format!("name: {}\nchallenges: [{{name: c, schedule: [{{operation: {{name: s, type: sleep}}}}]}}]\n", "a".repeat(10 << 20));
    let big_task_name = with_task(&format!("name: {}, operation: s", "t".repeat(10 << 20)));
    vec![
        // YAML that does not parse.
        case("unclosed flow sequence", "name: t\nchallenges:\n  - name: [unclosed\n", K::Yaml, At::LineCol(4, 1), "invalid YAML"),
        case("tab indentation", "name: t\nchallenges:\n\t- name: c\n", K::Yaml, At::Line(3), "invalid YAML"),
        case("duplicate key", "name: t\nname: u\nchallenges: []\n", K::Yaml, At::Line(2), "duplicate"),
        case("mapping value in a scalar", "name: t\nchallenges: a: b\n", K::Yaml, At::Line(2), "invalid YAML"),
        case("unterminated quote", "name: \"t\nchallenges: []\n", K::Yaml, At::Line(2), "while scanning a quoted scalar"),
        case("undefined alias", "name: t\nchallenges: *nowhere\n", K::Yaml, At::Line(2), "unknown anchor"),
        case("two documents", "name: t\n---\nname: u\n", K::Yaml, At::LineCol(2, 1), "more than one document"),
        case("not UTF-8", b"name: t\nchallenges: [\xff\xfe]\n".to_vec(), K::Yaml, At::LineCol(2, 14), "not UTF-8"),
        case("billion laughs", laughs, K::Yaml, At::File, "repetition limit"),
        case("deeply nested", format!("name: t\nx: {}{}\n", "[".repeat(100_000), "]".repeat(100_000)), K::Yaml, At::Line(2), "recursion limit"),
        case("non-string keys", "name: t\nchallenges: [{? [a, b] : c}]\n", K::Yaml, At::Path("/challenges/0"), "mapping keys must be strings"),
        // Documents of the wrong shape.
        case("empty file", "", K::Schema, At::Path("/"), "this file holds nothing"),
        case("a list at the top", "- name: t\n", K::Schema, At::Path("/"), "this file holds a list"),
        case("no challenges", "name: t\n", K::Schema, At::Path("/"), "missing required field \"challenges\""),
        case("no challenges at all", "name: t\nchallenges: []\n", K::Schema, At::Path("/challenges"), "empty list"),
        case("challenges as a mapping", "name: t\nchallenges: {name: c}\n", K::Schema, At::Path("/challenges"), "not of type \"array\""),
        case("track name with spaces", "name: my track\nchallenges: [{name: c, schedule: [{operation: {name: s, type: sleep}}]}]\n", K::Schema, At::Path("/name"), "does not match"),
        case("a 10 MB track name", big_name, K::Schema, At::Path("/name"), "is longer than 200 characters"),
        case("a 10 MB task name", big_task_name, K::Schema, At::Path("/challenges/0/schedule/0/name"), "is longer than 200 characters"),
        case("clients as a word", with_task("operation: s, clients: two"), K::Schema, At::Path("/challenges/0/schedule/0/clients"), "positive integer"),
        case("fractional iterations", with_task("operation: s, iterations: 1.5"), K::Schema, At::Path("/challenges/0/schedule/0/iterations"), "positive integer"),
        case("throughput as a word", with_task("operation: s, target-throughput: fast"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "expected"),
        case("a period with a bad unit", with_task("operation: s, time-period: 10 parsecs"), K::Schema, At::Path("/challenges/0/schedule/0/time-period"), "expected"),
        case("warmup as a word", with_task("operation: s, iterations: 10, warmup: lots"), K::Schema, At::Path("/challenges/0/schedule/0/warmup"), "expected"),
        // Zero and negative numbers.
        case("zero clients", with_task("operation: s, clients: 0"), K::Schema, At::Path("/challenges/0/schedule/0/clients"), "positive integer"),
        case("a capacity search without a goal", with_task("operation: s, target-throughput: max"), K::Invalid, At::Path("/challenges/0/schedule/0/target-throughput"), "give it an `slo`"),
        case("a goal without a search", with_task("operation: s, target-throughput: 10, slo: {latency.p99: '< 5ms'}"), K::Invalid, At::Path("/challenges/0/schedule/0/slo"), "belongs to a capacity search"),
        case("a goal on an unknown metric", with_task("operation: s, target-throughput: max, slo: {speed: '> 5'}"), K::Schema, At::Path("/challenges/0/schedule/0/slo"), "speed"),
        case("a search with iterations", with_task("operation: s, target-throughput: max, slo: {latency.p99: '< 5ms'}, iterations: 10"), K::Invalid, At::Path("/challenges/0/schedule/0/iterations"), "does not go with `target-throughput: max`"),
        case("a stage of negative duration", with_task("operation: s, target-throughput: {stages: [{duration: -5, target: 10}]}"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "target-throughput"),
        case("a stage of negative rate", with_task("operation: s, target-throughput: {stages: [{duration: 5s, target: -1}]}"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "target-throughput"),
        case("a ramp with a time period", with_task("operation: s, target-throughput: {stages: [{duration: 5s, target: 10}]}, time-period: 10s"), K::Invalid, At::Path("/challenges/0/schedule/0/time-period"), "does not go with a ramp"),
        case("a capacity search inside parallel", format!("{HEAD}challenges:\n  - name: c\n    schedule:\n      - parallel:\n          tasks:\n            - {{operation: s, target-throughput: max, slo: {{latency.p99: '< 5ms'}}}}\n            - {{operation: s, iterations: 5}}\n"), K::Invalid, At::Path("/challenges/0/schedule/0/parallel/tasks/0/target-throughput"), "cannot run inside `parallel`"),
        case("an unthrottled ramp", with_task("operation: s, schedule: unthrottled, target-throughput: {stages: [{duration: 5s, target: 10}]}"), K::Invalid, At::Path("/challenges/0/schedule/0/schedule"), "a ramp is a schedule of rates"),
        case("negative clients", with_task("operation: s, clients: -4"), K::Schema, At::Path("/challenges/0/schedule/0/clients"), "positive integer"),
        case("zero target throughput", with_task("operation: s, target-throughput: 0"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "expected"),
        case("negative target throughput", with_task("operation: s, target-throughput: -100"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "expected"),
        case("zero iterations", with_task("operation: s, iterations: 0"), K::Schema, At::Path("/challenges/0/schedule/0/iterations"), "positive integer"),
        case("negative bulk size", with_task("operation: bulk, params: {bulk-size: -5}"), K::Invalid, At::Path("/challenges/0/schedule/0/params/bulk-size"), "bulk-size"),
        case("zero trials", with_task("operation: s, trials: 0"), K::Schema, At::Path("/challenges/0/schedule/0/trials"), "expected"),
        // Warmup larger than the work.
        case("a warmup of all the work", with_task("operation: bulk, warmup: 100%"), K::Invalid, At::Path("/challenges/0/schedule/0/warmup"), "leaves nothing to measure"),
        case("warmup of more than all of it", with_task("operation: bulk, warmup: 150%"), K::Invalid, At::Path("/challenges/0/schedule/0/warmup"), "warmup"),
        case("warmup period beyond the period", with_task("operation: s, time-period: 5s, warmup: 10s"), K::Invalid, At::Path("/challenges/0/schedule/0/warmup"), "warmup"),
        // Sweeps.
        case("empty client sweep", with_task("operation: s, clients: []"), K::Schema, At::Path("/challenges/0/schedule/0/clients"), "empty list"),
        case("empty throughput sweep", with_task("operation: s, target-throughput: []"), K::Schema, At::Path("/challenges/0/schedule/0/target-throughput"), "empty list"),
        case("empty bulk-size sweep", with_task("operation: bulk, params: {bulk-size: []}"), K::Schema, At::Path("/challenges/0/schedule/0/params/bulk-size"), "empty list"),
        case("a sweep matrix of a billion runs", with_task("operation: s, clients: {{ range(1, 1001) | list }}, target-throughput: {{ range(1, 1001) | list }}, iterations: {{ range(1, 1001) | list }}"), K::Invalid, At::Path("/challenges/0/schedule/0"), "more than 100000 task runs"),
        case("a thousand trials of a thousand trials", format!("{HEAD}challenges:\n  - name: c\n    trials: 1000\n    schedule:\n      - {{operation: s, trials: 1000}}\n"), K::Invalid, At::Path("/challenges/0/schedule/0"), "more than 100000 task runs"),
        case("a sweep of what cannot be swept", with_task("operation: bulk, params: {index: [a, b]}"), K::NotSweepable, At::Path("/challenges/0/schedule/0/params/index"), "cannot be swept"),
        // Unknown keys and names.
        case("misspelt top-level key", format!("{HEAD}challenge: []\n"), K::UnknownField, At::LineCol(10, 1), "did you mean `challenges`"),
        case("misspelt task key", with_task("operation: s, clinets: 2"), K::UnknownField, At::Path("/challenges/0/schedule/0/clinets"), "did you mean `clients`"),
        case("unknown corpus key", HEAD.replace("source-file: docs.json", "source-file: docs.json, compresion: gz") + "challenges: [{name: c, schedule: [{operation: bulk}]}]\n", K::UnknownField, At::Path("/corpora/0/documents/0/compresion"), "unknown field"),
        case("unknown operation param", with_task("operation: {name: b2, type: bulk, params: {bulk-sise: 5}}"), K::Invalid, At::Path("/challenges/0/schedule/0/operation/params/bulk-sise"), "did you mean `bulk-size`"),
        case("unknown operation", with_task("operation: bulck"), K::UnknownOperation, At::Path("/challenges/0/schedule/0/operation"), "did you mean `bulk`"),
        case("unknown operation type", with_task("operation: {name: x, type: teleport}"), K::UnknownOperationType, At::Path("/challenges/0/schedule/0/operation/type"), "teleport"),
        case("unknown challenge", with_task("operation: s"), K::UnknownChallenge, At::File, "has no challenge `d`").args(&["--challenge", "d"]),
        case("unknown track parameter", format!("parameters: {{clients: 1}}\n{}", with_task("operation: s, clients: {{ clients }}")), K::Params, At::File, "did you mean `clients`").args(&["--track-params", "client=2"]),
        case("malformed track parameters", with_task("operation: s"), K::Params, At::Arg("--track-params"), "opening and 0 closing brackets").args(&["--track-params", "a=[1,"]),
        // Templates.
        case("undefined variable", with_task("operation: s, clients: {{ nope }}"), K::Template, At::Line(13), "undefined"),
        case("template syntax error", format!("{HEAD}{{% if %}}\n"), K::Template, At::Line(10), "template error"),
        case("unknown filter", with_task("operation: s, clients: {{ 1 | nope }}"), K::Template, At::Line(13), "template error"),
        case("a template that includes itself", "name: t\n{% include 'track.yaml' %}\n", K::Template, At::Line(2), "recursion"),
        case("an endless loop", "name: t\n{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\n", K::Template, At::Line(2), "ran out of fuel"),
        case("a loop that writes gigabytes", "name: t\n{% set s = 'x' * 1000000 %}{% for i in range(100000) %}{{ s }}{% endfor %}\n", K::Template, At::File, "16 MB"),
        case("a string multiplied without bound", "name: t\nx: {{ 'x' * 10000000000 }}\n", K::Template, At::Line(2), "template error"),
        case("include leaving the directory", "name: t\n{% include '../../etc/passwd' %}\n", K::Template, At::Line(2), "outside the track directory"),
        case("include by absolute path", "name: t\n{% include '/etc/passwd' %}\n", K::Template, At::Line(2), "outside the track directory"),
        case("include of a missing part", "name: t\n{% include 'parts/none.yaml' %}\n", K::Template, At::Line(2), "non-existing template"),
        // Corpora.
        case("missing corpus file", corpus_track("nowhere.json"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "does not exist"),
        case("corpus outside the track directory", corpus_track("../../etc/hostname"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "outside the track directory"),
        case("corpus that is not NDJSON", corpus_track("d.csv"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "not a JSON object").file("d.csv", "a,b,c\n1,2,3\n"),
        case("empty corpus", corpus_track("e.json"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "holds no documents").file("e.json", "\n"),
        case("gzip name, plain content", corpus_track("d.json.gz"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "compressed with another format").file("d.json.gz", docs.clone()),
        case("zstd name, gzip content", corpus_track("d.json.zst"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "compressed with another format").file("d.json.zst", gzip(docs.as_bytes())),
        case("bzip2 name, zstd content", corpus_track("d.json.bz2"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "compressed with another format").file("d.json.bz2", zst.clone()),
        case("truncated zstd corpus", corpus_track("d.json.zst"), K::Corpus, At::Path("/corpora/0/documents/0/source-file"), "truncated").file("d.json.zst", zst[..zst.len() / 2].to_vec()),
        case("unknown generated dataset", HEAD.replace("source-file: docs.json", "generate: smal, document-count: 5") + "challenges: [{name: c, schedule: [{operation: bulk}]}]\n", K::Schema, At::Path("/corpora/0/documents/0/generate"), "did you mean `small`"),
        case("scale-to on a generated dataset", HEAD.replace("source-file: docs.json", "generate: small, document-count: 5, scale-to: 10") + "challenges: [{name: c, schedule: [{operation: bulk}]}]\n", K::Invalid, At::Path("/corpora/0/documents/0/scale-to"), "scales a `source-file` up"),
        // The file itself.
        case("a track file of 17 MB", format!("name: t\n#{}\n", "x".repeat(17 << 20)), K::Io, At::File, "larger than 16 MB"),
    ]
}

/// What `runner race` does before it starts: parse the parameters, load, plan.
fn check_in_process(dir: &Path, args: &[&str]) -> Result<(), TrackError> {
    let mut request = runner::request::TrackRequest {
        location: dir.to_path_buf(),
        ..Default::default()
    };
    for pair in args.chunks(2) {
        match pair[0] {
            "--challenge" => request.challenge = Some(pair[1].to_string()),
            "--track-params" => request.load.params = runner::track::parse_track_params(pair[1])?,
            other => panic!("the harness does not know {other}"),
        }
    }
    let track = request.load()?;
    request.plan(&track).map(|_| ())
}

/// Runs the binary with a 2 GiB address-space limit and a 60 s deadline.
fn run_bounded(env: &Env, args: &[&str]) -> (Option<i32>, String) {
    let mut cmd = env.command(args);
    cmd.stdout(Stdio::null()).stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and touches no memory of the parent.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 2 << 30,
                rlim_max: 2 << 30,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().expect("runner starts");
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).ok();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("runner {args:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    (status.code(), reader.join().unwrap())
}

fn location_text(at: At) -> String {
    match at {
        At::LineCol(l, c) => format!("track.yaml:{l}:{c}: "),
        At::Line(l) => format!("track.yaml:{l}:"),
        At::Path(p) => format!(": at {p}: "),
        At::File => "track.yaml".to_string(),
        At::Arg(a) => format!("{a}: "),
    }
}

#[test]
fn every_bad_track_fails_with_its_kind_and_location_and_nothing_else() {
    let cases = cases();
    assert!(cases.len() >= 40, "the corpus has {} cases", cases.len());
    let mut failures = Vec::new();
    for c in &cases {
        let mut files: Vec<(&str, Vec<u8>)> = vec![("docs.json", b"{\"a\":1}\n".to_vec())];
        files.extend(c.files.iter().cloned());
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in &files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let e = match check_in_process(dir.path(), &c.args) {
            Ok(()) => {
                failures.push(format!("{}: loaded without error", c.name));
                continue;
            }
            Err(e) => e,
        };
        let shown = e.to_string();
        let mut wrong = Vec::new();
        if e.kind != c.kind {
            wrong.push(format!("kind {:?}, expected {:?}", e.kind, c.kind));
        }
        if !matches!(c.at, At::Arg(_)) && !e.file.ends_with("track.yaml") {
            wrong.push(format!("names {}, not the track file", e.file.display()));
        }
        match c.at {
            At::Path(p) if e.path.as_deref() != Some(p) => {
                wrong.push(format!("path {:?}, expected {p}", e.path))
            }
            At::Path(_) if e.location.is_none() => wrong.push("no line:col for the path".into()),
            _ => {}
        }
        if !shown.contains(&location_text(c.at)) {
            wrong.push(format!("does not point at {:?}", location_text(c.at)));
        }
        if !shown.contains(c.says) {
            wrong.push(format!("does not say {:?}", c.says));
        }
        if shown.len() > 2000 {
            wrong.push(format!("a message of {} bytes", shown.len()));
        }
        let env = Env::new();
        let mut args = vec![
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ];
        args.extend_from_slice(&c.args);
        let (code, stderr) = run_bounded(&env, &args);
        if code != Some(2) {
            wrong.push(format!("binary exit {code:?}"));
        }
        if stderr.contains("panicked") || !stderr.contains(&shown) {
            wrong.push(format!(
                "binary stderr differs: {}",
                stderr.chars().take(400).collect::<String>()
            ));
        }
        if !env.race_dirs().is_empty() {
            wrong.push("a race was stored".into());
        }
        eprintln!(
            "BAD {:<45} exit {code:?}  {:?}  {}",
            c.name,
            e.kind,
            location_text(c.at).trim_matches([':', ' '])
        );
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {} -- message: {}",
                c.name,
                wrong.join("; "),
                shown.chars().take(300).collect::<String>()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} bad tracks misbehaved:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A corpus broken past its first document is found when the race reaches it: the trial
/// fails with the document number, the race is stored with that failure, and the exit code is
/// 1 (not 0: a failed trial is not a finished measurement).
#[test]
fn a_corpus_broken_half_way_fails_its_trial_and_the_race() {
    let docs: String = (0..20_000)
        .map(|i| format!("{{\"n\":{i},\"text\":\"{}\"}}\n", "x".repeat(i % 97)))
        .collect();
    let zst = zstd::encode_all(docs.as_bytes(), 3).unwrap();
    let truncated = zst[..zst.len() * 2 / 3].to_vec();
    let short = "{\"a\":1}\n".repeat(5);
    for (file, content, count, says) in [
        ("d.json.zst", truncated, "", "truncated"),
        (
            "d.json",
            short.into_bytes(),
            ", document-count: 10",
            "declares 10 documents but the file has 5",
        ),
    ] {
        let track = HEAD.replace("{source-file: docs.json}", &format!("{{source-file: {file}{count}}}")) + "challenges:\n  - name: c\n    schedule: [{operation: {name: ci, type: create-index}}, {operation: bulk, params: {bulk-size: 100}}]\n";
        let dir = track_dir(&[("track.yaml", &track)]);
        std::fs::write(dir.path().join(file), content).unwrap();
        let env = Env::new();
        let out = env.run(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{file}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let race = env.only_race();
        let trial = &tasks(&race, "bulk")[0]["trials"][0];
        let failure = trial["failure"].as_str().unwrap_or_default();
        assert!(
            failure.contains(file) && failure.contains(says),
            "{file}: {trial}"
        );
        assert!(stdout.contains(says), "the summary says why: {stdout}");
        assert!(
            trial["units"].as_u64().unwrap() >= 5,
            "the documents read before the break are indexed and counted: {trial}"
        );
    }
}
