//! Vector search with the real binary: recall measured on every answer against an exact
//! ground truth and against a file, on the embedded engine and through `runner serve`;
//! reports, thresholds, compare and the recall–throughput chart; and bad input refused
//! before the race, naming the file and line.

use crate::elasticsearch::{serve, url};
use crate::util::*;

const DIMS: usize = 8;

/// `n` vectors in `DIMS` dimensions around a few centres, seeded.
fn vectors(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let centres: Vec<Vec<f64>> = (0..5)
        .map(|_| (0..DIMS).map(|_| next() * 4.0).collect())
        .collect();
    (0..n)
        .map(|i| centres[i % 5].iter().map(|c| c + next() * 0.6).collect())
        .collect()
}

fn l2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// A track over 1,500 vectors and 60 queries, with `search` as its vector-search params.
fn track(search: &str) -> String {
    format!(
        "name: vec
corpora:
  - name: v
    target-index: v
    documents: [{{source-file: docs.json, document-count: 1500, includes-action-and-meta-data: true}}]
indices:
  - name: v
    body:
      mappings:
        properties:
          v: {{type: dense_vector, dims: {DIMS}, similarity: l2_norm, index_options: {{type: hnsw, m: 16, ef_construction: 100}}}}
operations:
  - {{name: delete, type: delete-index}}
  - {{name: create, type: create-index}}
  - {{name: index, type: bulk, params: {{bulk-size: 500}}}}
  - {{name: refresh, type: refresh}}
  - {{name: merge, type: force-merge, params: {{max-num-segments: 1}}}}
  - name: knn
    type: vector-search
    params: {search}
challenges:
  - name: default
    default: true
    schedule:
      - operation: delete
      - operation: create
      - operation: index
      - operation: refresh
      # One segment, one graph: recall does not depend on how the bulk's segments merged.
      - operation: merge
      - {{operation: knn, clients: 2, iterations: 240, params: {{num-candidates: [10, 80]}}}}
"
    )
}

/// The track's directory: its corpus, queries and the exact neighbours of each query.
fn track_files(search: &str) -> tempfile::TempDir {
    let docs = vectors(1500, 7);
    let queries = vectors(60, 99);
    let mut corpus = String::new();
    for (i, v) in docs.iter().enumerate() {
        corpus += &format!(
            "{{\"index\":{{\"_id\":\"d{i}\"}}}}\n{}\n",
            serde_json::json!({"v": v})
        );
    }
    let mut truth = String::new();
    let mut lines = String::new();
    for q in &queries {
        let mut by: Vec<(f64, usize)> = docs
            .iter()
            .enumerate()
            .map(|(i, d)| (l2(q, d), i))
            .collect();
        by.sort_by(|a, b| a.0.total_cmp(&b.0));
        let ids: Vec<String> = by.iter().take(10).map(|(_, i)| format!("d{i}")).collect();
        truth += &format!("{}\n", serde_json::json!(ids));
        lines += &format!("{}\n", serde_json::json!(q));
    }
    track_dir(&[
        ("track.yaml", &track(search)),
        ("docs.json", &corpus),
        ("queries.json", &lines),
        ("truth.json", &truth),
    ])
}

fn recalls(race: &serde_json::Value) -> Vec<(String, f64, f64)> {
    tasks(race, "knn")
        .iter()
        .map(|t| {
            let tr = &t["trials"][0];
            let r = &tr["recall"];
            assert_eq!(r["count"], 240, "every measured answer is checked: {r}");
            (
                t["sweep"]["num-candidates"].to_string(),
                r["mean"].as_f64().unwrap(),
                r["min"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn recall_is_measured_on_every_answer_and_reported_everywhere() {
    let dir = track_files("{field: v, queries: queries.json, k: 10, ground-truth: exact}");
    let env = Env::new();
    let path = dir.path().to_str().unwrap();
    let reports = tempfile::tempdir().unwrap();
    let csv_file = reports.path().join("race.csv");
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--threshold",
        "recall.mean >= 0.5",
        "--report-format",
        "csv",
        "--report-file",
        csv_file.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let race = env.only_race();
    let r = recalls(&race);
    assert_eq!(r.len(), 2);
    for (sweep, mean, min) in &r {
        assert!(
            (0.0..=1.0).contains(mean) && min <= mean,
            "{sweep}: {mean} {min}"
        );
    }
    // More candidates explore more of the graph: recall does not fall, and with 80 of 1,500
    // vectors in 8 dimensions nearly every true neighbour is found.
    assert!(r[1].1 >= r[0].1 - 0.02, "{r:?}");
    assert!(r[1].1 > 0.9, "{r:?}");
    eprintln!("recall by candidates: {r:?}");
    let id = race["race_id"].as_str().unwrap();
    let csv = std::fs::read_to_string(&csv_file).unwrap();
    assert!(
        csv.contains("recall_mean") && csv.contains("recall_p5"),
        "{csv}"
    );
    let md = env.ok(&["show", id]);
    assert!(md.contains("## Recall") && md.contains("best"), "{md}");
    let plots = tempfile::tempdir().unwrap();
    env.ok(&["plot", id, "--out", plots.path().to_str().unwrap()]);
    let chart = std::fs::read_to_string(plots.path().join("recall-knn.svg")).unwrap();
    assert!(
        chart.contains("Pareto front") && chart.matches("<circle").count() >= 2,
        "{chart}"
    );
    // A threshold recall cannot reach fails the race (exit 3); compare judges recall.
    let json_file = reports.path().join("race.json");
    let out = env.run(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--threshold",
        "knn:recall.min > 1",
        "--report-format",
        "json",
        "--report-file",
        json_file.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json = read_json(&json_file);
    let summaries = json["tasks"].as_array().unwrap();
    assert!(
        summaries.iter().any(|t| t["recall"]["mean"].is_number()),
        "{json}"
    );
    let dirs = env.race_dirs();
    let second = dirs[1].file_name().unwrap().to_str().unwrap().to_string();
    let cmp = env.ok(&["compare", id, &second]);
    assert!(cmp.contains("recall_mean"), "{cmp}");
}

#[test]
fn a_ground_truth_file_is_checked_and_read_through_serve_too() {
    let dir = track_files("{field: v, queries: queries.json, k: 10, ground-truth: truth.json}");
    let env = Env::new();
    let server = serve(&env, &[]);
    let target = url(server.port);
    let path = dir.path().to_str().unwrap();
    env.ok(&[
        "race",
        "--track-path",
        path,
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &target,
    ]);
    let through_serve = recalls(&env.only_race());
    assert!(through_serve[1].1 > 0.9, "{through_serve:?}");
    // The same file on the embedded engine.
    let embedded = Env::new();
    embedded.ok(&["race", "--track-path", path, "--quiet"]);
    assert!(recalls(&embedded.only_race())[1].1 > 0.9);
    // OpenSearch's knn query syntax, through serve.
    let os = track_files("{field: v, queries: queries.json, k: 10, ground-truth: truth.json, backend-flavor: opensearch}");
    let env = Env::new();
    env.ok(&[
        "race",
        "--track-path",
        os.path().to_str().unwrap(),
        "--quiet",
        "--backend",
        "elasticsearch",
        "--target-hosts",
        &target,
    ]);
    assert!(recalls(&env.only_race())[1].1 > 0.9);
}

#[test]
fn bad_vector_input_is_refused_before_the_race() {
    let base = "{field: v, queries: queries.json, k: 10, ground-truth: truth.json}";
    let cases: Vec<(&str, Box<dyn Fn(&std::path::Path)>, &str)> = vec![
        (
            "a query of the wrong dimension",
            Box::new(|d| std::fs::write(d.join("queries.json"), "[1, 2, 3]\n").unwrap()),
            "queries.json:1: the vector has 3 dimensions; the field has 8",
        ),
        (
            "NaN in a query",
            Box::new(|d| {
                std::fs::write(d.join("queries.json"), "[1, 2, 3, 4, 5, 6, 7, NaN]\n").unwrap()
            }),
            "NaN and infinities are not numbers",
        ),
        (
            "a short ground truth",
            Box::new(|d| std::fs::write(d.join("truth.json"), "[\"d1\"]\n").unwrap()),
            "truth.json:1: 1 true neighbours; k is 10",
        ),
        (
            "ids the index lacks",
            Box::new(|d| {
                let text = std::fs::read_to_string(d.join("truth.json")).unwrap();
                let (_, rest) = text.split_once('\n').unwrap();
                let first: Vec<String> = std::iter::once("nowhere".to_string())
                    .chain((1..10).map(|i| format!("d{i}")))
                    .collect();
                std::fs::write(
                    d.join("truth.json"),
                    format!("{}\n{rest}", serde_json::json!(first)),
                )
                .unwrap()
            }),
            "are no document of the index",
        ),
    ];
    for (what, spoil, said) in cases {
        let dir = track_files(base);
        spoil(dir.path());
        let env = Env::new();
        let out = env.run(&[
            "race",
            "--track-path",
            dir.path().to_str().unwrap(),
            "--quiet",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(said), "{what}: {err}");
        // Nothing measured: the search task never ran a measured operation.
        if let Some(d) = env.race_dirs().first() {
            let race = read_json(&d.join("race.json"));
            let measured = tasks(&race, "knn")
                .iter()
                .flat_map(|t| t["trials"].as_array().cloned().unwrap_or_default())
                .map(|tr| tr["operations"].as_u64().unwrap_or(0))
                .sum::<u64>();
            assert_eq!(measured, 0, "{what}");
        }
    }
    // A recall criterion on a task that measures none is refused before the race.
    let dir = track_files(base);
    let env = Env::new();
    let out = env.run(&[
        "race",
        "--track-path",
        dir.path().to_str().unwrap(),
        "--quiet",
        "--threshold",
        "index:recall.mean > 0.9",
    ]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("only a vector-search measures recall"));
}
